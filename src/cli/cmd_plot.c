/*
 * cmd_plot.c — `hdpsgd plot FILE.csv... -o FIG`: draw any CSV the toolkit writes, recognised
 * by its header (plot_csv.c), with the script its own command uses (plots/NAME.gp): risk curves
 * of ode/sim/sde (several in one figure), rates, schedules, a sweep's results (curves or a
 * heat map over two axes), and the CSVs of rf, rf-experiment, kl, nc and sim-index.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hdpsgd/design.h"
#include "io/plot.h"
#include "cli.h"
#include "plot_csv.h"

static const char *out_path, *title_opt, *x_opt, *y_opt, *by_opt;
static int bounds_opt, heat_opt;

const char plot_usage[] =
    "plot FILE.csv... -o FIG [--title T] [--bounds] [--x KEY --y COLUMN [--by KEY] [--heat]] "
    "[--size W,H] [--font-size PT] [--label TEXT]... [--no-title] [--key POS] [--logx] [--logy]";
const char plot_help[] =
    "Draws any CSV the toolkit writes, recognised by its header (the kind is named on stderr),\n"
    "with the script its own command uses: risk CSVs of ode (t,risk,...) and sim/sde\n"
    "(t,mean,...), any number in one figure (ODE curves; Monte Carlo means with a light 10-90 %\n"
    "band; the row t = 1, the output theta_n, as markers right of t = 1); rates (rates -o, or\n"
    "its figure data); schedules (schedule --figure data) and table schedules (schedule -o);\n"
    "a sweep's results.csv (--x KEY --y COLUMN [--by KEY]: one curve per value of the other\n"
    "axes; --heat: a map over two axes);\n"
    "rf, rf-experiment P1-P4, kl bound, kl run (--vs), nc --sweep, sim-index --experiment.\n"
    "The format follows FIG's extension: .png, .pdf, .svg, .eps, .tex (cairolatex, with its\n"
    "graphics file FIG-without-extension.pdf). The figure options are those of every --figure.";

const cli_opt plot_opts[] = {
    {"output", 'o', OPT_FIGURE, &out_path, "FIG",
     "the figure (.png, .pdf, .svg, .eps or .tex); required"},
    {"title", 0, OPT_STRING, &title_opt, "TEXT", "title (default: what the CSV holds)"},
    {"bounds", 0, OPT_FLAG, &bounds_opt, NULL, "risk curves: draw the ODE bounds risk_upper, risk_lower"},
    {"x", 0, OPT_STRING, &x_opt, "KEY", "sweep results: the axis (column) along x (default: the first axis)"},
    {"y", 0, OPT_STRING, &y_opt, "COLUMN",
     "sweep results: the column drawn (default: ode_final_risk, else the first result)"},
    {"by", 0, OPT_STRING, &by_opt, "KEY",
     "sweep results: one curve per value of this axis (default: every other axis)"},
    {"heat", 0, OPT_FLAG, &heat_opt, NULL,
     "sweep results: a heat map of --y over --x and --by (two axes)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

#define ASSIGN_MAX 65536

static void assign_num(char *buf, const char *var, double v)
{
    size_t len = strlen(buf);
    snprintf(buf + len, ASSIGN_MAX - len, "%s=%.17g\n", var, v);
}

static int bad_input(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "hdpsgd plot: error: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return EXIT_BAD_INPUT;
}

/* a temporary data file for the script (removed after drawing) */
static FILE *tmp_data(char *path, size_t size)
{
    snprintf(path, size, "/tmp/hdpsgd-plotdata-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
    }
    return f;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* columns named PREFIX<name>SUFFIX: the names, space-separated */
static void names_between(const plot_csv *t, const char *prefix, const char *suffix, char *out,
                          size_t size)
{
    out[0] = '\0';
    size_t pl = strlen(prefix), sl = strlen(suffix);
    for (int i = 0; i < t->ncols; i++) {
        const char *c = t->cols[i];
        size_t cl = strlen(c);
        if (cl <= pl + sl || strncmp(c, prefix, pl) || strcmp(c + cl - sl, suffix))
            continue;
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%.*s", len ? " " : "", (int)(cl - pl - sl), c + pl);
    }
}

static int column_has_numbers(const plot_csv *t, const char *name)
{
    int c = plot_csv_col(t, name);
    for (long r = 0; c >= 0 && r < t->nrows; r++)
        if (isfinite(plot_csv_num(t, r, c)))
            return 1;
    return 0;
}

/* ---- risk curves: ode, sim, sde ---- */

static const char *default_label(const plot_csv *t)
{
    if (t->kind != PK_MC)
        return "ODE R(t)";
    return !strcmp(t->command, "sde") ? "SDE mean, 10–90 %" : "Monte Carlo mean, 10–90 %";
}

static int draw_curves(plot_csv *tabs, int n, char *assign, hdp_error *err)
{
    char ode_files[8192] = "", mc_files[8192] = "";
    int no = 0, nm = 0;
    const hdp_plot_style *st = hdp_plot_get_style();
    for (int i = 0; i < n; i++) {
        const char *p = tabs[i].path;
        if (strchr(p, ' ') || strchr(p, '\'') || strchr(p, '"'))
            return bad_input("%s: file names with spaces or quotes are not supported by the "
                             "plot script%s", p, "");
        int mc = tabs[i].kind == PK_MC;
        char *list = mc ? mc_files : ode_files;
        size_t len = strlen(list);
        snprintf(list + len, 8192 - len, "%s%s", len ? " " : "", p);
        char label[512], var[32];
        if (i < st->nlabels)
            snprintf(label, sizeof label, "%s", st->labels[i]);
        else {
            const char *what = default_label(&tabs[i]);
            int same = 0; /* another input with this label: the file names tell them apart */
            for (int j = 0; j < n; j++) same += !strcmp(default_label(&tabs[j]), what);
            if (same > 1)
                snprintf(label, sizeof label, "%s (%s)", what, base_name(p));
            else
                snprintf(label, sizeof label, "%s", what);
        }
        snprintf(var, sizeof var, "%s_label_%d", mc ? "mc" : "ode", mc ? ++nm : ++no);
        hdp_plot_assign(assign, ASSIGN_MAX, var, label);
    }
    hdp_plot_assign(assign, ASSIGN_MAX, "ode_files", ode_files);
    hdp_plot_assign(assign, ASSIGN_MAX, "mc_files", mc_files);
    size_t len = strlen(assign);
    snprintf(assign + len, ASSIGN_MAX - len, "bounds=%d\n", bounds_opt);
    return hdp_plot_draw("curves", out_path, assign, err) == HDP_OK ? 0 : -1;
}

/* ---- rates -o: one row per (gamma, family) -> the figure data of `rates --figure` ---- */

static int pivot_rates(const plot_csv *t, char *path, size_t size, char *families, size_t fsize)
{
    int cg = plot_csv_col(t, "gamma"), cf = plot_csv_col(t, "family"), cr = plot_csv_col(t, "final_risk");
    char rho_s[64];
    double rho = INFINITY;
    if (plot_csv_meta(t, "privacy.rho", rho_s, sizeof rho_s) && strcmp(rho_s, "inf"))
        rho = strtod(rho_s, NULL);
    int want[HDP_FAMILY_COUNT] = {0};
    for (long r = 0; r < t->nrows; r++)
        for (int k = 0; k < HDP_FAMILY_COUNT; k++)
            if (!strcmp(plot_csv_cell(t, r, cf), hdp_design_family_column(k))) want[k] = 1;
    families[0] = '\0';
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (want[k]) {
            size_t len = strlen(families);
            snprintf(families + len, fsize - len, "%s%s", len ? " " : "", hdp_design_family_column(k));
        }
    if (!families[0])
        return bad_input("%s: no family of the toolkit in its column 'family'%s", t->path, "");
    FILE *f = tmp_data(path, size);
    if (!f)
        return bad_input("cannot create a temporary file: %s%s", strerror(errno), "");
    fprintf(f, "gamma");
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (want[k]) fprintf(f, ",risk_%s,theory_%s", hdp_design_family_column(k), hdp_design_family_column(k));
    fputc('\n', f);
    /* gammas in the order of the file; the rates scaled to match at the first (smallest) */
    double first[HDP_FAMILY_COUNT], g0 = NAN;
    for (int k = 0; k < HDP_FAMILY_COUNT; k++) first[k] = NAN;
    for (long r = 0; r < t->nrows; r++) {
        double g = plot_csv_num(t, r, cg);
        if (r > 0 && g == plot_csv_num(t, r - 1, cg))
            continue;
        if (isnan(g0)) g0 = g;
        fprintf(f, "%.17g", g);
        for (int k = 0; k < HDP_FAMILY_COUNT; k++) {
            if (!want[k]) continue;
            double risk = NAN;
            for (long q = r; q < t->nrows && plot_csv_num(t, q, cg) == g; q++)
                if (!strcmp(plot_csv_cell(t, q, cf), hdp_design_family_column(k)))
                    risk = plot_csv_num(t, q, cr);
            if (isnan(first[k]) && g == g0) first[k] = risk;
            double theory = first[k] / hdp_design_rate_theory(k, g0, rho) *
                            hdp_design_rate_theory(k, g, rho);
            fprintf(f, isfinite(risk) ? ",%.17g" : ",", risk);
            fprintf(f, isfinite(theory) ? ",%.17g" : ",", theory);
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        unlink(path);
        return bad_input("cannot write a temporary file: %s%s", strerror(errno), "");
    }
    return 0;
}

/* ---- sweep results ---- */

static int is_axis(const plot_csv *t, int c)
{
    /* the axes: between 'point' and 'd' */
    int d = plot_csv_col(t, "d");
    return c > 0 && (d < 0 || c < d);
}

static int need_column(const plot_csv *t, const char *opt, const char *name, int numeric)
{
    int c = plot_csv_col(t, name);
    if (c < 0) {
        char cols[4096] = "";
        for (int i = 0; i < t->ncols; i++) {
            size_t len = strlen(cols);
            snprintf(cols + len, sizeof cols - len, "%s%s", i ? ", " : "", t->cols[i]);
        }
        fprintf(stderr, "hdpsgd plot: error: %s %s: %s has no such column; its columns: %s\n", opt,
                name, t->path, cols);
        return -1;
    }
    if (numeric && !column_has_numbers(t, name)) {
        fprintf(stderr, "hdpsgd plot: error: %s %s: the column holds no numbers in %s\n", opt,
                name, t->path);
        return -1;
    }
    return c;
}

/* an axis value as a tic label: numbers to 3 significant digits, words as they are */
static void tic_text(const char *cell, char *out, size_t size)
{
    char *end;
    double v = strtod(cell, &end);
    if (cell[0] && !*end && isfinite(v))
        snprintf(out, size, "%.3g", v);
    else
        snprintf(out, size, "%.60s", cell);
    for (char *c = out; *c; c++)
        if (*c == '"' || *c == '\\') *c = '\'';
}

static int sweep_data(const plot_csv *t, char *assign, char *path, size_t size, const char **script)
{
    int first_axis = 1, naxes = 0;
    for (int c = 1; c < t->ncols; c++) naxes += is_axis(t, c);
    const char *xname = x_opt ? x_opt : (naxes ? t->cols[first_axis] : "gamma");
    const char *yname = y_opt;
    if (!yname) {
        yname = plot_csv_col(t, "ode_final_risk") >= 0 ? "ode_final_risk" : NULL;
        for (int c = plot_csv_col(t, "epsilon_cks") + 1; !yname && c > 0 && c < t->ncols; c++)
            if (column_has_numbers(t, t->cols[c])) yname = t->cols[c];
        if (!yname)
            return bad_input("%s: no result column to draw: give --y COLUMN%s", t->path, "");
    }
    int cx = need_column(t, "--x", xname, 1), cy = cx < 0 ? -1 : need_column(t, "--y", yname, 1);
    if (cx < 0 || cy < 0)
        return EXIT_BAD_INPUT;
    int cby = -1;
    if (by_opt && (cby = need_column(t, "--by", by_opt, 0)) < 0)
        return EXIT_BAD_INPUT;
    if (cby == cx)
        return bad_input("--by %s: the same column as --x %s", by_opt, xname);
    /* the curves: one per combination of the other axes (--by first in the label) */
    int group_cols[64], ng = 0;
    if (cby >= 0) group_cols[ng++] = cby;
    for (int c = 1; c < t->ncols && ng < 64; c++)
        if (is_axis(t, c) && c != cx && c != cby) {
            int varies = 0;
            for (long r = 1; r < t->nrows; r++)
                varies |= strcmp(plot_csv_cell(t, r, c), plot_csv_cell(t, 0, c)) != 0;
            if (varies) group_cols[ng++] = c;
        }
    if (heat_opt && (cby < 0 || ng != 1))
        return bad_input("--heat: give --by KEY, the second axis of the map (the sweep must "
                         "have exactly two axes that vary%s%s)", "", "");
    long *group = calloc((size_t)t->nrows, sizeof *group);
    long ngroups = 0;
    long *rep = calloc((size_t)t->nrows, sizeof *rep); /* a row of each group */
    if (!group || !rep) {
        free(group);
        free(rep);
        return bad_input("out of memory%s%s", "", "");
    }
    for (long r = 0; r < t->nrows; r++) {
        long g = -1;
        for (long k = 0; k < ngroups && g < 0; k++) {
            int same = 1;
            for (int j = 0; j < ng; j++)
                same &= !strcmp(plot_csv_cell(t, r, group_cols[j]), plot_csv_cell(t, rep[k], group_cols[j]));
            if (same) g = k;
        }
        if (g < 0) {
            g = ngroups;
            rep[ngroups++] = r;
        }
        group[r] = g;
    }
    FILE *f = tmp_data(path, size);
    if (!f) {
        free(group);
        free(rep);
        return bad_input("cannot create a temporary file: %s%s", strerror(errno), "");
    }
    const hdp_plot_style *st = hdp_plot_get_style();
    if (!heat_opt) {
        fprintf(f, "group,x,y\n");
        for (long k = 0; k < ngroups; k++) {
            long cnt = 0;
            for (long r = 0; r < t->nrows; r++) cnt += group[r] == k;
            /* simple and stable: write the group's rows sorted by x with an insertion sort */
            long *idx = malloc((size_t)cnt * sizeof *idx), m = 0;
            for (long r = 0; idx && r < t->nrows; r++)
                if (group[r] == k) {
                    long q = m++;
                    while (q > 0 && plot_csv_num(t, idx[q - 1], cx) > plot_csv_num(t, r, cx)) {
                        idx[q] = idx[q - 1];
                        q--;
                    }
                    idx[q] = r;
                }
            for (long q = 0; idx && q < m; q++) {
                double y = plot_csv_num(t, idx[q], cy);
                fprintf(f, "%ld,%.17g,", k, plot_csv_num(t, idx[q], cx));
                fprintf(f, isfinite(y) ? "%.17g\n" : "\n", y);
            }
            free(idx);
            char var[32], label[512] = "";
            if (k < st->nlabels)
                snprintf(label, sizeof label, "%s", st->labels[k]);
            for (int j = 0; !label[0] && j < ng; j++) {
                size_t len = strlen(label);
                snprintf(label + len, sizeof label - len, "%s%s = %s", j ? ", " : "",
                         t->cols[group_cols[j]], plot_csv_cell(t, rep[k], group_cols[j]));
            }
            if (!label[0]) snprintf(label, sizeof label, "%s", yname);
            snprintf(var, sizeof var, "label_%ld", k);
            hdp_plot_assign(assign, ASSIGN_MAX, var, label);
        }
        assign_num(assign, "ncurves", (double)ngroups);
        *script = "sweep";
    } else {
        /* the map on the index grid of the two axes, tics labelled with their values */
        fprintf(f, "ix,iy,z\n");
        double zlo = INFINITY, zhi = -INFINITY;
        for (long r = 0; r < t->nrows; r++) {
            double z = plot_csv_num(t, r, cy);
            if (isfinite(z)) {
                zlo = fmin(zlo, z);
                zhi = fmax(zhi, z);
            }
        }
        assign_num(assign, "zmid", isfinite(zlo) ? (zlo + zhi) / 2 : 0);
        long *xi = calloc((size_t)t->nrows, sizeof *xi), nx = 0;
        long *xrep = calloc((size_t)t->nrows, sizeof *xrep);
        for (long r = 0; xi && xrep && r < t->nrows; r++) {
            long found = -1;
            for (long k = 0; k < nx && found < 0; k++)
                if (!strcmp(plot_csv_cell(t, r, cx), plot_csv_cell(t, xrep[k], cx))) found = k;
            if (found < 0) {
                found = nx;
                xrep[nx++] = r;
            }
            xi[r] = found;
            double z = plot_csv_num(t, r, cy);
            fprintf(f, "%ld,%ld,", found, group[r]);
            fprintf(f, isfinite(z) ? "%.17g\n" : "\n", z);
        }
        char tics[8192] = "";
        for (long k = 0; xrep && k < nx; k++) {
            size_t len = strlen(tics);
            char v[64];
            tic_text(plot_csv_cell(t, xrep[k], cx), v, sizeof v);
            snprintf(tics + len, sizeof tics - len, "%s\"%s\" %ld", k ? ", " : "", v, k);
        }
        hdp_plot_assign(assign, ASSIGN_MAX, "xtics_list", tics);
        tics[0] = '\0';
        for (long k = 0; k < ngroups; k++) {
            size_t len = strlen(tics);
            char v[64];
            tic_text(plot_csv_cell(t, rep[k], cby), v, sizeof v);
            snprintf(tics + len, sizeof tics - len, "%s\"%s\" %ld", k ? ", " : "", v, k);
        }
        hdp_plot_assign(assign, ASSIGN_MAX, "ytics_list", tics);
        assign_num(assign, "nx", (double)nx);
        assign_num(assign, "ny", (double)ngroups);
        hdp_plot_assign(assign, ASSIGN_MAX, "yname", t->cols[cby]);
        free(xi);
        free(xrep);
        *script = "sweep-heat";
    }
    free(group);
    free(rep);
    hdp_plot_assign(assign, ASSIGN_MAX, "xname", xname);
    hdp_plot_assign(assign, ASSIGN_MAX, "zname", yname);
    if (fclose(f) != 0) {
        unlink(path);
        return bad_input("cannot write a temporary file: %s%s", strerror(errno), "");
    }
    return 0;
}

/* ---- the families' CSVs: the variables their own --figure gives the script ---- */

static int family_vars(const plot_csv *t, char *assign, const char **script)
{
    char buf[4096], meta[256];
    switch (t->kind) {
    case PK_RATES_FIG:
        names_between(t, "risk_", "", buf, sizeof buf);
        hdp_plot_assign(assign, ASSIGN_MAX, "families", buf);
        *script = "rates";
        return 0;
    case PK_SCHEDULES: {
        names_between(t, "eta_", "", buf, sizeof buf);
        hdp_plot_assign(assign, ASSIGN_MAX, "families", buf);
        char finals[1024] = "", copy[4096];
        snprintf(copy, sizeof copy, "%s", buf);
        for (char *sv = NULL, *w = strtok_r(copy, " ", &sv); w; w = strtok_r(NULL, " ", &sv)) {
            char col[160];
            snprintf(col, sizeof col, "risk_%s", w);
            size_t len = strlen(finals);
            snprintf(finals + len, sizeof finals - len, "%s%.4g", len ? " " : "",
                     plot_csv_num(t, t->nrows - 1, plot_csv_col(t, col)));
        }
        hdp_plot_assign(assign, ASSIGN_MAX, "final_risks", finals);
        *script = "schedule";
        return 0;
    }
    case PK_SCHED_TABLE: *script = "schedule-table"; return 0;
    case PK_RF_RUN: *script = "rf-run"; return 0;
    case PK_RF_P1:
        assign_num(assign, "n_train",
                   plot_csv_meta(t, "rf.n", meta, sizeof meta) ? strtod(meta, NULL) : NAN);
        *script = "rf-p1";
        return 0;
    case PK_RF_P2:
    case PK_RF_P3: {
        char list[2048] = "";
        for (long r = 0; r < t->nrows; r++) {
            const char *p = plot_csv_cell(t, r, 0);
            char pad[80];
            snprintf(pad, sizeof pad, " %s ", p);
            char hay[2100];
            snprintf(hay, sizeof hay, " %s ", list);
            if (strstr(hay, pad)) continue;
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", len ? " " : "", p);
        }
        hdp_plot_assign(assign, ASSIGN_MAX, "p_list", list);
        *script = t->kind == PK_RF_P2 ? "rf-p2" : "rf-p3";
        return 0;
    }
    case PK_RF_P4: *script = "rf-p4"; return 0;
    case PK_KL_BOUND: {
        names_between(t, "B_", "", buf, sizeof buf);
        hdp_plot_assign(assign, ASSIGN_MAX, "schemes", buf);
        double per = NAN, fw = NAN, fd = NAN;
        char first[64];
        sscanf(buf, "%63s", first);
        char bcol[80], kcol[80];
        snprintf(bcol, sizeof bcol, "B_%s", first);
        snprintf(kcol, sizeof kcol, "kl_%s", first);
        for (long r = 0; r < t->nrows; r++) {
            double B = plot_csv_num(t, r, plot_csv_col(t, bcol));
            if (isnan(per) && B > 0) per = plot_csv_num(t, r, plot_csv_col(t, kcol)) / B;
            if (!strcmp(plot_csv_cell(t, r, 0), "depth")) fw = plot_csv_num(t, r, 2);
            if (!strcmp(plot_csv_cell(t, r, 0), "width")) fd = plot_csv_num(t, r, 1);
        }
        assign_num(assign, "kl_per_B", per);
        assign_num(assign, "fixed_width", fw);
        assign_num(assign, "fixed_depth", fd);
        *script = "kl-bound";
        return 0;
    }
    case PK_KL_EPOCHS:
    case PK_KL_SWEEP: {
        int sweep = t->kind == PK_KL_SWEEP;
        names_between(t, "", sweep ? "_kl_early_se" : "_kl_se", buf, sizeof buf);
        hdp_plot_assign(assign, ASSIGN_MAX, "schemes", buf);
        char first[64], col[96];
        sscanf(buf, "%63s", first);
        snprintf(col, sizeof col, "%s_%s", first, sweep ? "exact" : "kl_exact");
        assign_num(assign, "squared", column_has_numbers(t, col));
        if (sweep) {
            hdp_plot_assign(assign, ASSIGN_MAX, "xname", t->cols[0]);
            double E = plot_csv_meta(t, "kl.epochs", meta, sizeof meta) ? strtod(meta, NULL) : NAN;
            assign_num(assign, "epochs_final", E);
            assign_num(assign, "epochs_early", round(0.4 * E));
        }
        *script = sweep ? "kl-sweep" : "kl-epochs";
        return 0;
    }
    case PK_NC_SWEEP: {
        int cc = plot_csv_col(t, "curve"), cn = plot_csv_col(t, "name"), crem = plot_csv_col(t, "remedy");
        int ce = plot_csv_col(t, "error"), cs = plot_csv_col(t, "stderr"), cx = plot_csv_col(t, "exact");
        long ncurves = 0;
        int remedies = 0;
        double top = 0;
        for (long r = 0; r < t->nrows; r++) {
            long c = lround(plot_csv_num(t, r, cc));
            if (c + 1 > ncurves) ncurves = c + 1;
            remedies |= crem >= 0 && strcmp(plot_csv_cell(t, r, crem), "none");
            double e = plot_csv_num(t, r, ce) + plot_csv_num(t, r, cs), x = plot_csv_num(t, r, cx);
            top = fmax(top, fmax(isfinite(e) ? e : 0, isfinite(x) ? x : 0));
        }
        if (ncurves < 1 || ncurves > 64)
            return bad_input("%s: column 'curve' must number the curves 0, 1, ...%s", t->path, "");
        const hdp_plot_style *st = hdp_plot_get_style();
        for (long c = 0; c < ncurves; c++) {
            char var[32];
            const char *name = "?";
            int ref = 0;
            for (long r = 0; r < t->nrows; r++)
                if (lround(plot_csv_num(t, r, cc)) == c) {
                    name = plot_csv_cell(t, r, cn);
                    ref = remedies && crem >= 0 && !strcmp(plot_csv_cell(t, r, crem), "none");
                    break;
                }
            snprintf(var, sizeof var, "label_%ld", c);
            hdp_plot_assign(assign, ASSIGN_MAX, var, c < st->nlabels ? st->labels[c] : name);
            size_t len = strlen(assign);
            snprintf(assign + len, ASSIGN_MAX - len, "ref_%ld=%d\n", c, ref);
        }
        double K = plot_csv_num(t, 0, plot_csv_col(t, "K"));
        assign_num(assign, "ncurves", (double)ncurves);
        assign_num(assign, "chance", 1.0 - 1.0 / K);
        assign_num(assign, "ymax", fmin(1.04, fmax(0.1, 1.3 * top + 0.02)));
        *script = "nc-sweep";
        return 0;
    }
    case PK_SI_EPS: {
        double nonpriv = -1;
        int ce = plot_csv_col(t, "epsilon_stage2"), cr = plot_csv_col(t, "risk");
        for (long r = 0; r < t->nrows; r++)
            if (isinf(plot_csv_num(t, r, ce)) || !strcmp(plot_csv_cell(t, r, ce), "inf"))
                nonpriv = plot_csv_num(t, r, cr);
        assign_num(assign, "nonpriv", nonpriv);
        *script = "si-eps";
        return 0;
    }
    case PK_SI_N: *script = "si-n"; return 0;
    case PK_SI_ALIGN: *script = "si-align"; return 0;
    default: return bad_input("%s: no figure for this kind of CSV%s", t->path, "");
    }
}

int cmd_plot(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("plot");
    cli_common common;
    out_path = title_opt = x_opt = y_opt = by_opt = NULL;
    bounds_opt = heat_opt = 0;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (common.npos == 0 || !out_path) {
        fprintf(stderr, "hdpsgd plot: error: give one or more CSV files and -o FIG\nUsage: hdpsgd %s\n",
                cmd->usage);
        return EXIT_BAD_INPUT;
    }
    if (common.nsets) {
        fprintf(stderr, "hdpsgd plot: error: --set does not apply to plot\n");
        return EXIT_BAD_INPUT;
    }
    plot_csv tabs[MAX_POSITIONAL];
    int n = 0;
    for (int i = 0; i < common.npos; i++, n++)
        if ((rc = plot_csv_read(common.pos[i], &tabs[i])) != 0)
            break;
    int curves = 1;
    for (int i = 0; !rc && i < n; i++)
        curves &= tabs[i].kind == PK_ODE || tabs[i].kind == PK_MC;
    if (!rc && !curves && n > 1)
        rc = bad_input("%s is a CSV of %s: it is drawn alone (only ode, sim and sde CSVs share a "
                       "figure)", tabs[0].kind == PK_ODE || tabs[0].kind == PK_MC ? tabs[1].path
                                                                                  : tabs[0].path,
                       plot_kind_name(tabs[0].kind == PK_ODE || tabs[0].kind == PK_MC ? tabs[1].kind
                                                                                     : tabs[0].kind));
    if (!rc && n == 1 && tabs[0].kind != PK_SWEEP && (x_opt || y_opt || by_opt || heat_opt))
        rc = bad_input("--x, --y, --by and --heat apply to a sweep's results.csv, not to %s (%s)",
                       tabs[0].path, plot_kind_name(tabs[0].kind));
    if (!rc && bounds_opt && !curves)
        rc = bad_input("--bounds applies to ode CSVs, not to %s (%s)", tabs[0].path,
                       plot_kind_name(tabs[0].kind));
    if (!rc && curves && hdp_plot_get_style()->nlabels > n) {
        fprintf(stderr, "hdpsgd plot: error: %d --label options for %d input files: one label "
                        "per file, in order\n", hdp_plot_get_style()->nlabels, n);
        rc = EXIT_BAD_INPUT;
    }
    char *assign = rc ? NULL : calloc(ASSIGN_MAX, 1);
    char tmp[64] = "";
    if (!rc && !assign)
        rc = bad_input("out of memory%s%s", "", "");
    hdp_error err;
    hdp_error_clear(&err);
    int drawn = -2;
    if (!rc) {
        /* the title: --title, else what the file holds (its first comment line) */
        char title[1024];
        if (title_opt)
            snprintf(title, sizeof title, "%s", title_opt);
        else if (curves) {
            title[0] = '\0';
            for (int i = 0; i < n; i++) {
                size_t len = strlen(title);
                snprintf(title + len, sizeof title - len, "%s%s", len ? ", " : "",
                         base_name(tabs[i].path));
            }
        } else {
            /* the command and what it wrote, without the parenthesised references */
            char desc[512];
            size_t k = 0;
            int depth = 0;
            for (const char *c = tabs[0].description; *c && k + 1 < sizeof desc; c++) {
                if (!depth && *c == ' ' && c[1] == '(') /* " (...)" left out */
                    continue;
                if (depth || (*c == '(' && k && desc[k - 1] != ' ' && c[-1] == ' ')) {
                    depth += (*c == '(') - (*c == ')');
                    continue;
                }
                desc[k++] = *c;
            }
            desc[k] = '\0';
            snprintf(title, sizeof title, "%s%s%s", tabs[0].command, desc[0] ? ": " : "", desc);
        }
        hdp_plot_assign(assign, ASSIGN_MAX, "title_text", title);
        if (curves) {
            drawn = draw_curves(tabs, n, assign, &err);
        } else {
            const char *script = NULL;
            const char *data = tabs[0].path;
            char fams[1024];
            if (tabs[0].kind == PK_RATES) {
                rc = pivot_rates(&tabs[0], tmp, sizeof tmp, fams, sizeof fams);
                if (!rc) {
                    hdp_plot_assign(assign, ASSIGN_MAX, "families", fams);
                    script = "rates";
                    data = tmp;
                }
            } else if (tabs[0].kind == PK_SWEEP) {
                rc = sweep_data(&tabs[0], assign, tmp, sizeof tmp, &script);
                if (!title_opt) /* results.csv has no comment lines */
                    hdp_plot_assign(assign, ASSIGN_MAX, "title_text", "");
                data = tmp;
            } else {
                rc = family_vars(&tabs[0], assign, &script);
            }
            if (!rc) {
                hdp_plot_assign(assign, ASSIGN_MAX, "data_file", data);
                drawn = hdp_plot_draw(script, out_path, assign, &err) == HDP_OK ? 0 : -1;
            }
        }
    }
    if (tmp[0])
        unlink(tmp);
    free(assign);
    plot_kind kind0 = n > 0 ? tabs[0].kind : PK_NONE;
    for (int i = 0; i < n && i < common.npos; i++)
        if (tabs[i].ncols) plot_csv_free(&tabs[i]);
    if (rc)
        return rc;
    if (drawn == -1)
        return cli_fail("plot", &err);
    if (drawn == EXIT_BAD_INPUT)
        return EXIT_BAD_INPUT;
    fprintf(stderr, "hdpsgd plot: wrote %s (%s)\n", out_path,
            curves ? "risk curves" : plot_kind_name(kind0));
    return 0;
}
