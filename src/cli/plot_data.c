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
#include "io/plot.h"
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
            if (!strcmp(plot_csv_cell(t, r, cf), hdp_design_family_column(k))) want[k] = 1;
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
    return plot_data_end(&db, v, "data_file");
}

/* ---- the families' CSVs: the variables their own --figure gives the script ---- */

/* schedule --figure data: the families and their final risks */
static void schedules_vars(const plot_csv *t, hdp_plot_vars *v)
{
    char buf[4096];
    names_between(t, "eta_", "", buf, sizeof buf);
    hdp_plot_var_str(v, "families", buf);
    char finals[1024] = "", copy[4096];
    snprintf(copy, sizeof copy, "%s", buf);
    for (char *sv = NULL, *w = strtok_r(copy, " ", &sv); w; w = strtok_r(NULL, " ", &sv)) {
        char col[160];
        snprintf(col, sizeof col, "risk_%s", w);
        size_t len = strlen(finals);
        snprintf(finals + len, sizeof finals - len, "%s%.4g", len ? " " : "",
                 plot_csv_num(t, t->nrows - 1, plot_csv_col(t, col)));
    }
    hdp_plot_var_str(v, "final_risks", finals);
}

/* rf-experiment P2, P3: the values of p in the first column, each once */
static void rf_p_list(const plot_csv *t, hdp_plot_vars *v)
{
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
    hdp_plot_var_str(v, "p_list", list);
}

/* kl bound: the schemes, the KL per unit of B, the fixed width and depth of the two panels */
static void kl_bound_vars(const plot_csv *t, hdp_plot_vars *v)
{
    char buf[4096];
    names_between(t, "B_", "", buf, sizeof buf);
    hdp_plot_var_str(v, "schemes", buf);
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
    hdp_plot_var_num(v, "kl_per_B", per);
    hdp_plot_var_num(v, "fixed_width", fw);
    hdp_plot_var_num(v, "fixed_depth", fd);
}

/* kl run (--vs epochs, depth or width): the schemes, squared loss or not, the epochs drawn */
static const char *kl_run_vars(const plot_csv *t, hdp_plot_vars *v)
{
    char buf[4096], meta[256];
    int sweep = t->kind == PK_KL_SWEEP;
    names_between(t, "", sweep ? "_kl_early_se" : "_kl_se", buf, sizeof buf);
    /* the real network's columns <s>_relu_kl... (kl.network = relu) are not schemes */
    char schemes[256] = "", *save = NULL;
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        size_t wl = strlen(w), len = strlen(schemes);
        if (wl > 5 && !strcmp(w + wl - 5, "_relu"))
            continue;
        snprintf(schemes + len, sizeof schemes - len, "%s%s", len ? " " : "", w);
    }
    hdp_plot_var_str(v, "schemes", schemes);
    char first[64], col[96];
    sscanf(schemes, "%63s", first);
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
    return sweep ? "kl-sweep" : "kl-epochs";
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
    char buf[4096], meta[256];
    switch (t->kind) {
    case PK_RATES_FIG:
        names_between(t, "risk_", "", buf, sizeof buf);
        hdp_plot_var_str(v, "families", buf);
        {   /* rates --figure's data since issue 25: the fitted rates, fit_<family> */
            char col[160];
            size_t w = strcspn(buf, " ");
            snprintf(col, sizeof col, "fit_%.*s", (int)(w < 120 ? w : 120), buf);
            hdp_plot_var_num(v, "has_fit", plot_csv_col(t, col) >= 0);
        }
        *script = "rates";
        return 0;
    case PK_SCHEDULES: schedules_vars(t, v); *script = "schedule"; return 0;
    case PK_SCHED_TABLE: *script = "schedule-table"; return 0;
    case PK_RF_RUN: *script = "rf-run"; return 0;
    case PK_RF_P1:
        hdp_plot_var_num(v, "n_train",
                        plot_csv_meta(t, "rf.n", meta, sizeof meta) ? strtod(meta, NULL) : NAN);
        *script = "rf-p1";
        return 0;
    case PK_RF_P2:
    case PK_RF_P3:
        rf_p_list(t, v);
        *script = t->kind == PK_RF_P2 ? "rf-p2" : "rf-p3";
        return 0;
    case PK_RF_P4: *script = "rf-p4"; return 0;
    case PK_KL_BOUND: kl_bound_vars(t, v); *script = "kl-bound"; return 0;
    case PK_KL_EPOCHS:
    case PK_KL_SWEEP: *script = kl_run_vars(t, v); return 0;
    case PK_NC_SWEEP: *script = "nc-sweep"; return nc_sweep_vars(t, v);
    case PK_SI_EPS: si_eps_vars(t, v); *script = "si-eps"; return 0;
    case PK_SI_N: *script = "si-n"; return 0;
    case PK_SI_ALIGN: *script = "si-align"; return 0;
    default: return plot_bad_input("%s: no figure for this kind of CSV%s", t->path, "");
    }
}
