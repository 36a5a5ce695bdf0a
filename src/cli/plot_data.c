/*
 * plot_data.c — the variables and data files `hdpsgd plot` hands the scripts: rates -o
 * pivoted into rates' figure data, and the variables of the families' CSVs (those their own
 * --figure gives the script); a sweep's results are in plot_sweep.c. See plot_data.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hdpsgd/design.h"
#include "plot.h"
#include "cli.h"
#include "plot_data.h"

int plot_bad_input(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "hdpsgd plot: error: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return EXIT_BAD_INPUT;
}

int plot_data_begin(plot_data_buf *b)
{
    b->text = NULL;
    b->len = 0;
    b->f = open_memstream(&b->text, &b->len);
    return b->f ? 0 : plot_bad_input("out of memory for the figure's data%s%s", "", "");
}

int plot_data_end(plot_data_buf *b, hdp_plot_vars *v, const char *var)
{
    int bad = fclose(b->f) != 0;
    if (!bad)
        hdp_plot_var_data(v, var, b->text, b->len);
    free(b->text);
    b->text = NULL;
    return bad ? plot_bad_input("out of memory for the figure's data%s%s", "", "") : 0;
}

int plot_column_has_numbers(const plot_csv *t, const char *name)
{
    int c = plot_csv_col(t, name);
    for (long r = 0; c >= 0 && r < t->nrows; r++)
        if (isfinite(plot_csv_num(t, r, c)))
            return 1;
    return 0;
}

/* columns named PREFIX<name>SUFFIX: the names, space-separated (out: NAMES_SIZE bytes). A
 * name is a word of the toolkit (letters, digits, _ . + -, at most NAME_MAX_LEN bytes), at
 * most MAX_NAMES of them: else the CSV is refused (EXIT_BAD_INPUT after the message), as the
 * scripts take the names as a list of words. */
#define NAME_MAX_LEN 40
#define MAX_NAMES 32
#define NAMES_SIZE (MAX_NAMES * (NAME_MAX_LEN + 1) + 1)
static int names_between(const plot_csv *t, const char *prefix, const char *suffix, char *out)
{
    out[0] = '\0';
    size_t pl = strlen(prefix), sl = strlen(suffix), len = 0;
    int count = 0;
    for (int i = 0; i < t->ncols; i++) {
        const char *c = t->cols[i];
        size_t cl = strlen(c);
        if (cl <= pl + sl || strncmp(c, prefix, pl) || strcmp(c + cl - sl, suffix))
            continue;
        size_t nl = cl - pl - sl;
        int word = nl <= NAME_MAX_LEN;
        for (size_t k = pl; word && k < pl + nl; k++)
            word = (c[k] >= 'a' && c[k] <= 'z') || (c[k] >= 'A' && c[k] <= 'Z') ||
                   (c[k] >= '0' && c[k] <= '9') || strchr("_.+-", c[k]);
        if (!word)
            return plot_bad_input("%s: column '%s' is not one the toolkit writes (a name of "
                                  "letters, digits, _ . + - of at most 40 bytes)", t->path, c);
        if (++count > MAX_NAMES)
            return plot_bad_input("%s: more than 32 columns of the kind of '%s'", t->path, c);
        len += (size_t)snprintf(out + len, NAMES_SIZE - len, "%s%.*s", len ? " " : "", (int)nl,
                                c + pl);
    }
    return 0;
}

/* ---- rates -o: one row per (gamma, family) -> the figure data of `rates --figure` ---- */

int plot_rates_data(const plot_csv *t, hdp_plot_vars *v, char *families, size_t fsize)
{
    int cg = plot_csv_col(t, "gamma"), cf = plot_csv_col(t, "family"), cr = plot_csv_col(t, "final_risk");
    char rho_s[64];
    double rho = INFINITY;
    if (plot_csv_meta(t, "privacy.rho", rho_s, sizeof rho_s) && strcmp(rho_s, "inf"))
        rho = strtod(rho_s, NULL);
    int want[HDP_FAMILY_COUNT] = {0};
    for (long r = 0; r < t->nrows; r++)
        for (int k = 0; k < HDP_FAMILY_COUNT; k++)
            if (hdp_design_family_parse(plot_csv_cell(t, r, cf)) == k) want[k] = 1; /* optimal too */
    families[0] = '\0';
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (want[k]) {
            size_t len = strlen(families);
            snprintf(families + len, fsize - len, "%s%s", len ? " " : "", hdp_design_family_column(k));
        }
    if (!families[0])
        return plot_bad_input("%s: no family of the toolkit in its column 'family'%s", t->path, "");
    plot_data_buf db;
    if (plot_data_begin(&db))
        return EXIT_BAD_INPUT;
    FILE *f = db.f;
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
                if (hdp_design_family_parse(plot_csv_cell(t, q, cf)) == k)
                    risk = plot_csv_num(t, q, cr);
            if (isnan(first[k]) && g == g0) first[k] = risk;
            double theory = first[k] / hdp_design_rate_theory(k, g0, rho) *
                            hdp_design_rate_theory(k, g, rho);
            fprintf(f, isfinite(risk) ? ",%.17g" : ",", risk);
            fprintf(f, isfinite(theory) ? ",%.17g" : ",", theory);
        }
        fputc('\n', f);
    }
    return plot_data_end(&db, v, "data_file");
}

/* ---- the families' CSVs: the variables their own --figure gives the script ---- */

/* schedule --figure data: the families and their final risks */
static int schedules_vars(const plot_csv *t, hdp_plot_vars *v)
{
    char buf[NAMES_SIZE];
    if (names_between(t, "eta_", "", buf))
        return EXIT_BAD_INPUT;
    hdp_plot_var_str(v, "families", buf);
    char finals[MAX_NAMES * 32] = "", copy[NAMES_SIZE];
    snprintf(copy, sizeof copy, "%s", buf);
    for (char *sv = NULL, *w = strtok_r(copy, " ", &sv); w; w = strtok_r(NULL, " ", &sv)) {
        char col[NAME_MAX_LEN + 8];
        snprintf(col, sizeof col, "risk_%s", w);
        size_t len = strlen(finals);
        snprintf(finals + len, sizeof finals - len, "%s%.4g", len ? " " : "",
                 plot_csv_num(t, t->nrows - 1, plot_csv_col(t, col)));
    }
    hdp_plot_var_str(v, "final_risks", finals);
    return 0;
}

/* rf-experiment P2, P3: the values of p in the first column, each once (numbers: the script
 * reads them as a list of words) */
static int rf_p_list(const plot_csv *t, hdp_plot_vars *v)
{
    char *list = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&list, &size);
    if (!f)
        return plot_bad_input("out of memory%s%s", "", "");
    int rc = 0;
    for (long r = 0; r < t->nrows && !rc; r++) {
        const char *p = plot_csv_cell(t, r, 0);
        char *end;
        double x = strtod(p, &end);
        if (!p[0] || *end || !isfinite(x) || strlen(p) > 30) {
            rc = plot_bad_input("%s: the first column (p) holds '%s', not a number", t->path, p);
            break;
        }
        int seen = 0;
        for (long q = 0; q < r && !seen; q++)
            seen = !strcmp(plot_csv_cell(t, q, 0), p);
        if (!seen)
            fprintf(f, "%s%s", ftell(f) ? " " : "", p);
    }
    if (fclose(f) != 0 && !rc)
        rc = plot_bad_input("out of memory%s%s", "", "");
    if (!rc)
        hdp_plot_var_str(v, "p_list", list);
    free(list);
    return rc;
}

/* kl bound: the schemes, the KL per unit of B, the fixed width and depth of the two panels */
static int kl_bound_vars(const plot_csv *t, hdp_plot_vars *v)
{
    char buf[NAMES_SIZE];
    if (names_between(t, "B_", "", buf))
        return EXIT_BAD_INPUT;
    hdp_plot_var_str(v, "schemes", buf);
    double per = NAN, fw = NAN, fd = NAN;
    char first[NAME_MAX_LEN + 1] = "";
    sscanf(buf, "%40s", first);
    char bcol[NAME_MAX_LEN + 8], kcol[NAME_MAX_LEN + 8];
    snprintf(bcol, sizeof bcol, "B_%s", first);
    snprintf(kcol, sizeof kcol, "kl_%s", first);
    for (long r = 0; r < t->nrows; r++) {
        double B = plot_csv_num(t, r, plot_csv_col(t, bcol));
        if (isnan(per) && B > 0) per = plot_csv_num(t, r, plot_csv_col(t, kcol)) / B;
        if (!strcmp(plot_csv_cell(t, r, 0), "depth")) fw = plot_csv_num(t, r, 2);
        if (!strcmp(plot_csv_cell(t, r, 0), "width")) fd = plot_csv_num(t, r, 1);
    }
    hdp_plot_var_num(v, "kl_per_B", per);
    hdp_plot_var_num(v, "fixed_width", fw);
    hdp_plot_var_num(v, "fixed_depth", fd);
    return 0;
}

/* kl run (--vs epochs, depth or width): the schemes, squared loss or not, the epochs drawn */
static int kl_run_vars(const plot_csv *t, hdp_plot_vars *v, const char **script)
{
    char buf[NAMES_SIZE], meta[256];
    int sweep = t->kind == PK_KL_SWEEP;
    if (names_between(t, "", sweep ? "_kl_early_se" : "_kl_se", buf))
        return EXIT_BAD_INPUT;
    /* the real network's columns <s>_relu_kl... (kl.network = relu) are not schemes */
    char schemes[NAMES_SIZE] = "", *save = NULL;
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        size_t wl = strlen(w), len = strlen(schemes);
        if (wl > 5 && !strcmp(w + wl - 5, "_relu"))
            continue;
        snprintf(schemes + len, sizeof schemes - len, "%s%s", len ? " " : "", w);
    }
    hdp_plot_var_str(v, "schemes", schemes);
    char first[NAME_MAX_LEN + 1] = "", col[NAME_MAX_LEN + 16];
    sscanf(schemes, "%40s", first);
    snprintf(col, sizeof col, "%s_%s", first, sweep ? "exact" : "kl_exact");
    hdp_plot_var_num(v, "squared", plot_column_has_numbers(t, col));
    snprintf(col, sizeof col, "%s_relu_kl", first);
    hdp_plot_var_num(v, "relu", plot_csv_col(t, col) >= 0);
    if (sweep) {
        hdp_plot_var_str(v, "xname", t->cols[0]);
        double E = plot_csv_meta(t, "kl.epochs", meta, sizeof meta) ? strtod(meta, NULL) : NAN;
        hdp_plot_var_num(v, "epochs_final", E);
        hdp_plot_var_num(v, "epochs_early", round(0.4 * E));
    }
    *script = sweep ? "kl-sweep" : "kl-epochs";
    return 0;
}

/* nc --sweep: a label per curve, which curves are references, chance level, the y range */
static int nc_sweep_vars(const plot_csv *t, hdp_plot_vars *v)
{
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
        return plot_bad_input("%s: column 'curve' must number the curves 0, 1, ...%s", t->path, "");
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
        hdp_plot_var_str(v, var, c < st->nlabels ? st->labels[c] : name);
        snprintf(var, sizeof var, "ref_%ld", c);
        hdp_plot_var_num(v, var, ref);
    }
    double K = plot_csv_num(t, 0, plot_csv_col(t, "K"));
    hdp_plot_var_num(v, "ncurves", (double)ncurves);
    hdp_plot_var_num(v, "chance", 1.0 - 1.0 / K);
    hdp_plot_var_num(v, "ymax", fmin(1.04, fmax(0.1, 1.3 * top + 0.02)));
    return 0;
}

/* net --vs: the x column and its label */
static int net_vs_vars(const plot_csv *t, hdp_plot_vars *v)
{
    int w = !strcmp(t->cols[0], "width");
    hdp_plot_var_str(v, "xcol", w ? "width" : "samples");
    hdp_plot_var_str(v, "xlabel_text", w ? "hidden-layer width" : "training samples  n");
    return 0;
}

/* sim-index --experiment eps: the risk without privacy (epsilon inf), or -1 */
static void si_eps_vars(const plot_csv *t, hdp_plot_vars *v)
{
    double nonpriv = -1;
    int ce = plot_csv_col(t, "epsilon_stage2"), cr = plot_csv_col(t, "risk");
    for (long r = 0; r < t->nrows; r++)
        if (isinf(plot_csv_num(t, r, ce)) || !strcmp(plot_csv_cell(t, r, ce), "inf"))
            nonpriv = plot_csv_num(t, r, cr);
    hdp_plot_var_num(v, "nonpriv", nonpriv);
}

int plot_family_vars(const plot_csv *t, hdp_plot_vars *v, const char **script)
{
    char buf[NAMES_SIZE], meta[256];
    switch (t->kind) {
    case PK_RATES_FIG:
        if (names_between(t, "risk_", "", buf))
            return EXIT_BAD_INPUT;
        hdp_plot_var_str(v, "families", buf);
        {   /* rates --figure's data since issue 25: the fitted rates, fit_<family> */
            char col[NAME_MAX_LEN + 8];
            size_t w = strcspn(buf, " ");
            snprintf(col, sizeof col, "fit_%.*s", (int)w, buf);
            hdp_plot_var_num(v, "has_fit", plot_csv_col(t, col) >= 0);
        }
        *script = "rates";
        return 0;
    case PK_SCHEDULES: *script = "schedule"; return schedules_vars(t, v);
    case PK_SCHED_TABLE: *script = "schedule-table"; return 0;
    case PK_RF_RUN: *script = "rf-run"; return 0;
    case PK_RF_P1:
        hdp_plot_var_num(v, "n_train",
                        plot_csv_meta(t, "rf.n", meta, sizeof meta) ? strtod(meta, NULL) : NAN);
        *script = "rf-p1";
        return 0;
    case PK_RF_P2:
    case PK_RF_P3:
        *script = t->kind == PK_RF_P2 ? "rf-p2" : "rf-p3";
        return rf_p_list(t, v);
    case PK_RF_P4: *script = "rf-p4"; return 0;
    case PK_KL_BOUND: *script = "kl-bound"; return kl_bound_vars(t, v);
    case PK_KL_EPOCHS:
    case PK_KL_SWEEP: return kl_run_vars(t, v, script);
    case PK_NC_SWEEP: *script = "nc-sweep"; return nc_sweep_vars(t, v);
    case PK_SI_EPS: si_eps_vars(t, v); *script = "si-eps"; return 0;
    case PK_SI_N: *script = "si-n"; return 0;
    case PK_SI_ALIGN: *script = "si-align"; return 0;
    case PK_NET_VS: *script = "net-vs"; return net_vs_vars(t, v);
    case PK_NET_CURVE: *script = "net-curve"; return 0;
    default: return plot_bad_input("%s: no figure for this kind of CSV%s", t->path, "");
    }
}
