/*
 * cmd_rates.c — `hdpsgd rates`: the final excess risk of each optimised schedule family
 * against gamma = d/n on a log grid (d fixed, n = round(d/gamma)), its log-log slope on
 * the smallest-gamma decade, and the theorem's rates of docs/theory.md §5 next to it.
 * Optimisation, rates and the slope fit are in the library (hdpsgd/design.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "plot.h"
#include "cli.h"
#include "hdpsgd/design.h"

/* the result of family f at the i-th gamma */
#define RES(r, i, f) ((r)->res.des[i].res[f])

static const char *gammas_opt, *families_opt, *figure_path, *json_path, *out_path;
static int tune_clip;

const cli_opt rates_opts[] = {
    {"gammas", 0, OPT_STRING, &gammas_opt, "LO:HI:COUNT",
     "gamma grid: COUNT >= 2 log-spaced values from LO to HI, 0 < LO < HI < 1 (required)"},
    {"families", 0, OPT_STRING, &families_opt, "LIST",
     "comma-separated families (default output,linear-noise,inverse-time; also pl; optimal: "
     "read as inverse-time)"},
    {"tune-clip", 0, OPT_FLAG, &tune_clip, NULL, "also optimise the clipping constant c"},
    {"output", 'o', OPT_OUTPUT, &out_path, "FILE.csv",
     "write gamma,n,family,final_risk,eta0,eta1,c1,a,c,ode_solves here"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    {"figure", 'f', OPT_FIGURE, &figure_path, "FIG",
     "draw risk against gamma (log-log) with the theorem's rates; data in FIG-base.rates.csv"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help rates` (the command table in main.c points here) */
const char rates_usage[] = "[MODEL.ini] --gammas LO:HI:COUNT";
const char rates_help[] =
    "For COUNT log-spaced gamma = d/n from LO to HI (d fixed, n = round(d/gamma)) optimises\n"
    "each family's parameters on the ODE as `hdpsgd schedule --optimize` does and records the\n"
    "final excess risk; fits the log-log slope of risk against gamma on the smallest-gamma\n"
    "decade and prints it next to the local slope of the theorem's rate over the same points\n"
    "(docs/theory.md §5): output gamma log(1/gamma) + gamma^2 log^2(1/gamma)/rho^2, linear-noise\n"
    "gamma log^(2/3)(1/gamma) + gamma^2 log^(4/3)(1/gamma)/rho^2, inverse-time gamma + gamma^2/rho^2.\n"
    "CSV (-o): gamma,n,family,final_risk,eta0,eta1,c1,a,c,ode_solves. --figure: risk against\n"
    "gamma (log-log) with the rates scaled to match at the smallest gamma; data in\n"
    "FIG-without-extension.rates.csv.\n"
    "The fit: the theorem's rate with its constants, risk ~ A r1 + B r2 over the whole grid\n"
    "(r1, r2 the rate's two terms; relative least squares, A, B >= 0): A, B, the largest\n"
    "relative error, the share of B r2 at the smallest gamma and the local slopes there; the\n"
    "grid is called pre-asymptotic when that share exceeds 5 % or the risk's local slope is\n"
    "more than 0.05 from r1's. The figure draws the\n"
    "fitted curves (column fit_<family> of the data).";

static int parse_gammas(const char *text, double *lo, double *hi, long *count)
{
    if (!text)
        return cli_bad("rates", "--gammas LO:HI:COUNT is required (for example --gammas 0.001:0.1:7)");
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_rates_grid_parse(text, lo, hi, count, &err) != HDP_OK)
        return cli_bad("rates", "--gammas %s", err.msg);
    return 0;
}

/* --families: default output, linear-noise, inverse-time (docs/theory.md §5's three rates). */
static int parse_families(const char *text, int want[HDP_FAMILY_COUNT])
{
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_rates_families(text, want, &err) != HDP_OK)
        return cli_bad("rates", "--families: %s", err.msg);
    return 0;
}


static const char *rate_text(int f)
{
    switch (f) {
    case HDP_FAMILY_OUTPUT: return "gamma log(1/gamma) + gamma^2 log^2(1/gamma)/rho^2";
    case HDP_FAMILY_LINEAR_NOISE: return "gamma log^(2/3)(1/gamma) + gamma^2 log^(4/3)(1/gamma)/rho^2";
    default: return "gamma + gamma^2/rho^2 (minimax)";
    }
}

static const char *term_text(int f)
{
    switch (f) {
    case HDP_FAMILY_OUTPUT: return "gamma L | gamma^2 L^2/rho^2";
    case HDP_FAMILY_LINEAR_NOISE: return "gamma L^(2/3) | gamma^2 L^(4/3)/rho^2";
    default: return "gamma | gamma^2/rho^2";
    }
}

/* one line per family after each gamma (done gammas of total: the done-th is in the result),
 * and on a terminal the gammas done with the designer's solves and best final risk */
typedef struct {
    const cli_rates *r;
    cli_progress line; /* unit "gammas" */
    long gammas;       /* done so far */
} report_ctx;

/* the designer's reports (hdpsgd/design.h: what names the family and the event) */
static int progress(const char *what, long solves, long total, double best, void *user)
{
    (void)total;
    report_ctx *x = user;
    hdp_design_family family = HDP_FAMILY_PL;
    if (hdp_design_progress_event(what, &family) >= 0)
        cli_progress_show(&x->line, (double)x->gammas, (double)x->r->count,
                          "%s %ld ODE solves, best final risk %.8g",
                          hdp_design_family_name(family), solves, best);
    return 0;
}

static int report(const char *what, long done, long total, double value, void *user)
{
    (void)what, (void)total, (void)value;
    report_ctx *x = user;
    const hdp_model *m = &x->r->models[done - 1];
    const hdp_design_set *set = &x->r->res.des[done - 1];
    cli_progress_clear(&x->line);
    x->gammas = done;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        if (set->done[f])
            fprintf(stderr,
                    "hdpsgd rates: gamma = %-10.4g n = %-9ld %-12s final risk %.8g (%ld ODE "
                    "solves)\n",
                    m->gamma, m->n, hdp_design_family_name(f), set->res[f].final_risk,
                    set->res[f].ode_solves);
    return 0;
}

/* the theorem's rate model A r1 + B r2 fitted over the whole grid, per wanted family
 * (hdp_rates_fit_model, docs/theory.md §5.2); a family whose fit fails gets NaNs */
static void rates_fits(const cli_rates *r, hdp_rates_fit fits[HDP_FAMILY_COUNT])
{
    double g[HDP_RATES_MAX_GAMMAS], y[HDP_RATES_MAX_GAMMAS];
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        memset(&fits[f], 0, sizeof fits[f]);
        fits[f].A = fits[f].B = fits[f].rel_err = fits[f].term2_share = NAN;
        fits[f].local_slope = fits[f].lead_slope = fits[f].fit_slope = fits[f].rms_rel_err = NAN;
        if (!r->res.want[f]) continue;
        for (long i = 0; i < r->count; i++) {
            g[i] = r->models[i].gamma;
            y[i] = RES(r, i, f).final_risk;
        }
        hdp_error err;
        hdp_error_clear(&err);
        hdp_rates_fit_model((hdp_design_family)f, g, y, r->count, r->models[0].rho, &fits[f], &err);
    }
}

/* the fitted model A r1 + B r2 of family f at gamma */
static double fitted(const hdp_rates_fit *fit, int f, double gamma, double rho)
{
    double r1, r2;
    if (hdp_rates_terms((hdp_design_family)f, gamma, rho, &r1, &r2) != 0)
        return NAN;
    return fit->A * r1 + fit->B * r2;
}

hdp_status cli_rates_run(cli_rates *r, const int want[HDP_FAMILY_COUNT],
                         const hdp_design_options *opt, int verbose, hdp_error *err)
{
    report_ctx x = {r, {0}, 0};
    cli_progress_start(&x.line, "rates", "gammas", 0);
    hdp_design_options o = *opt; /* verbose: its progress on a terminal */
    if (verbose && x.line.tty) {
        o.progress = progress;
        o.progress_user = &x;
    }
    hdp_status st = hdp_rates_run(r->models, r->count, want, &o, verbose ? report : NULL, &x,
                                  &r->res, err);
    cli_progress_clear(&x.line);
    return st;
}

void cli_write_rates_csv(FILE *f, const cli_rates *r)
{
    fprintf(f, "# ; hdpsgd %s rates: final excess risk (ODE, docs/theory.md §3) of each schedule family "
               "optimised at each gamma (docs/theory.md §5); d fixed, n = round(d/gamma)\n",
            hdp_version_string());
    hdp_model_write_meta_sections(&r->models[0], f, cli_model_sections("rates"));
    hdp_csv_header_line(f, &hdp_rates_csv_fields);
    for (long i = 0; i < r->count; i++)
        for (int k = 0; k < HDP_FAMILY_COUNT; k++) {
            if (!r->res.want[k]) continue;
            hdp_csv_line(f, &hdp_rates_csv_fields, &RES(r, i, k), &r->models[i]);
        }
}

void cli_write_rates_json(FILE *f, const cli_rates *r)
{
    hdp_rates_fit fits[HDP_FAMILY_COUNT];
    rates_fits(r, fits);
    hdp_rates_family fam[HDP_FAMILY_COUNT]; /* every wanted family's risks, slopes and fit */
    const void *risks[HDP_FAMILY_COUNT], *fit[HDP_FAMILY_COUNT];
    for (int k = 0; k < HDP_FAMILY_COUNT; k++) {
        fam[k] = (hdp_rates_family){&r->res, k};
        risks[k] = r->res.want[k] ? &fam[k] : NULL;
        fit[k] = r->res.want[k] ? &fits[k] : NULL;
    }
    const cli_json_each by_risk = {HDP_FAMILY_COUNT, cli_json_family, risks, NULL, 0},
                        by_fit = {HDP_FAMILY_COUNT, cli_json_family, fit, NULL, 0};
    const cli_json_source src[] = {
        {&hdp_rates_fields, &r->res, NULL}, {&hdp_rates_risk_fields, &by_risk, NULL},
        {&hdp_rates_slope_fields, &by_risk, NULL}, {&hdp_rates_fit_fields, &by_fit, NULL},
        {&hdp_rates_summary_fields, &r->res, NULL}};
    cli_json_file(f, "rates", src, (int)(sizeof src / sizeof *src), &r->models[0]);
}

static void print_table(const cli_rates *r)
{
    const hdp_model *m = &r->models[0];
    long count = r->count;
    printf("model: %s; d = %ld fixed, n = round(d/gamma); c = %g, rho = %g; %ld gammas from %.4g to "
           "%.4g\n",
           m->source, m->d, m->c, m->rho, count, r->models[0].gamma, r->models[count - 1].gamma);
    printf("final-iterate excess risk (ODE, docs/theory.md §3) of each family optimised at each gamma:\n\n");
    printf("  %10s %9s", "gamma", "n");
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        if (r->res.want[f]) printf(" %14s", hdp_design_family_name(f));
    printf("\n");
    for (long i = 0; i < count; i++) {
        printf("  %10.4g %9ld", r->models[i].gamma, r->models[i].n);
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (r->res.want[f]) printf(" %14.6g", RES(r, i, f).final_risk);
        printf("\n");
    }
    printf("\nlog-log slope of the final risk against gamma on the smallest-gamma decade "
           "[%.4g, %.4g] (%ld points):\n",
           r->models[0].gamma, r->models[r->res.dec - 1].gamma, r->res.dec);
    printf("  %-13s %8s %14s   %s\n", "family", "fitted", "theorem's rate", "rate (docs/theory.md §5, constants 1)");
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        if (r->res.want[f])
            printf("  %-13s %8.3f %14.3f   %s\n", hdp_design_family_name(f), r->res.slope[f],
                   r->res.theory_slope[f], rate_text(f));
    hdp_rates_fit fits[HDP_FAMILY_COUNT];
    rates_fits(r, fits);
    printf("\nthe theorem's rate with its constants fitted over all %ld gammas, risk ~ A r1 + B r2 "
           "(relative least squares, A, B >= 0):\n", count);
    printf("  %-13s %11s %11s %9s %10s   %-8s %-8s %-8s  %s\n", "family", "A", "B", "max rel",
           "B r2 share", "slope", "lead", "fit", "r1 | r2");
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        if (r->res.want[f]) {
            const hdp_rates_fit *q = &fits[f];
            printf("  %-13s %11.4g %11.4g %8.2f%% %9.1f%%   %-8.3f %-8.3f %-8.3f  %s\n",
                   hdp_design_family_name(f), q->A, q->B, 100 * q->rel_err, 100 * q->term2_share,
                   q->local_slope, q->lead_slope, q->fit_slope, term_text(f));
        }
    printf("  (B r2 share, slope: at the smallest gamma; slope = the risk's local log-log slope "
           "between the two smallest gammas, lead = r1's, fit = the fitted model's)\n");
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        if (!r->res.want[f] || !isfinite(fits[f].A)) continue;
        const hdp_rates_fit *q = &fits[f];
        if (q->pre_asymptotic) {
            printf("  %s: the grid is pre-asymptotic:", hdp_design_family_name(f));
            if (q->term2_share > HDP_RATES_TERM2_NEGLIGIBLE)
                printf(" the privacy term B r2 is still %.0f%% of the risk at gamma = %.3g (the "
                       "rate's gamma^2 term is not negligible, so fitted slopes exceed r1's);",
                       100 * q->term2_share, m->gamma);
            if (fabs(q->local_slope - q->lead_slope) > HDP_RATES_SLOPE_DRIFT)
                printf(" the local slope %.3f is %.3f from the leading term's %.3f (still drifting);",
                       q->local_slope, q->local_slope - q->lead_slope, q->lead_slope);
            printf(" the log-log slopes above are not the asymptotic ones.\n");
        } else {
            printf("  %s: asymptotic at the smallest gamma (B r2 %.1f%% of the risk, local slope "
                   "within %.2f of r1's)\n", hdp_design_family_name(f), 100 * q->term2_share,
                   HDP_RATES_SLOPE_DRIFT);
        }
        if (q->nonneg_active)
            printf("  %s: the unconstrained fit had a negative constant: one term fitted alone\n",
                   hdp_design_family_name(f));
    }
    printf("\nfinal risk / gamma at the smallest gamma:");
    const char *sep = " ";
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        if (r->res.want[f]) {
            printf("%s%s %.4g", sep, hdp_design_family_name(f), RES(r, 0, f).final_risk / r->models[0].gamma);
            sep = ", ";
        }
    printf("\n  (the theorem: bounded for inverse-time, growing like log(1/gamma) for output and "
           "log^(2/3)(1/gamma) for linear-noise as gamma -> 0)\n");
    printf("ODE solves: %ld in %.3g s, %.0f per second\n", r->res.solves, r->res.seconds,
           r->res.seconds > 0 ? (double)r->res.solves / r->res.seconds : 0.0);
}

static void write_figure_data(FILE *f, const cli_rates *r)
{
    fprintf(f, "# ; hdpsgd %s rates --figure: final risk per family and the rate of docs/theory.md §5 "
               "scaled to match at the smallest gamma\n",
            hdp_version_string());
    fprintf(f, "# ; fit_<family>: the rate with its constants fitted, A r1 + B r2 (docs/theory.md §5.2)\n");
    hdp_rates_fit fits[HDP_FAMILY_COUNT];
    rates_fits(r, fits);
    fprintf(f, "gamma");
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (r->res.want[k]) fprintf(f, ",risk_%s,theory_%s", hdp_design_family_column(k), hdp_design_family_column(k));
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (r->res.want[k]) fprintf(f, ",fit_%s", hdp_design_family_column(k));
    fprintf(f, "\n");
    const hdp_model *m0 = &r->models[0];
    for (long i = 0; i < r->count; i++) {
        fprintf(f, "%.12g", r->models[i].gamma);
        for (int k = 0; k < HDP_FAMILY_COUNT; k++) {
            if (!r->res.want[k]) continue;
            double scale = RES(r, 0, k).final_risk / hdp_design_rate_theory(k, m0->gamma, m0->rho);
            fprintf(f, ",%.12g,%.12g", RES(r, i, k).final_risk,
                    scale * hdp_design_rate_theory(k, r->models[i].gamma, r->models[i].rho));
        }
        for (int k = 0; k < HDP_FAMILY_COUNT; k++) {
            if (!r->res.want[k]) continue;
            double v = fitted(&fits[k], k, r->models[i].gamma, r->models[i].rho);
            fprintf(f, isfinite(v) ? ",%.12g" : ",", v);
        }
        fprintf(f, "\n");
    }
}

int cmd_rates(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("rates");
    cli_common common;
    gammas_opt = families_opt = figure_path = json_path = out_path = NULL;
    tune_clip = 0;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    double lo, hi;
    long count;
    int want[HDP_FAMILY_COUNT];
    if ((rc = parse_gammas(gammas_opt, &lo, &hi, &count)) || (rc = parse_families(families_opt, want)))
        return rc;

    /* every model first: bad input stops before any computation */
    cli_rates r;
    if ((rc = cli_rates_load("rates", &common, lo, hi, count, &r)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_design_options opt;
    hdp_design_options_init(&opt);
    opt.tune_clip = tune_clip;
    hdp_status st = cli_rates_run(&r, want, &opt, 1, &err);
    if (st != HDP_OK) {
        cli_rates_free(&r);
        return cli_fail("rates", &err);
    }
    print_table(&r);

    /* outputs */
    char data_csv[HDP_OUT_PATH_MAX + 32] = "";
    if (figure_path)
        hdp_plot_stem(figure_path, ".rates.csv", data_csv, sizeof data_csv);
    hdp_outset out; /* all or nothing */
    hdp_outset_init(&out, &err);
    FILE *f;
    if ((f = hdp_outset_add(&out, out_path)))
        cli_write_rates_csv(f, &r);
    if ((f = hdp_outset_add(&out, figure_path ? data_csv : NULL)))
        write_figure_data(f, &r);
    if ((f = hdp_outset_add(&out, json_path)))
        cli_write_rates_json(f, &r);
    if (figure_path) {
        char title[512], fams[256] = "";
        for (int k = 0; k < HDP_FAMILY_COUNT; k++)
            if (want[k]) {
                strncat(fams, fams[0] ? " " : "", sizeof fams - strlen(fams) - 1);
                strncat(fams, hdp_design_family_column(k), sizeof fams - strlen(fams) - 1);
            }
        snprintf(title, sizeof title,
                 "final excess risk of the optimised schedules vs γ = d/n (d=%ld fixed), ρ=%g, c=%g",
                 r.models[0].d, r.models[0].rho, r.models[0].c);
        hdp_plot_vars v;
        hdp_plot_vars_init(&v);
        cli_plot_source(&out, &v, "data_file", data_csv);
        hdp_plot_var_str(&v, "families", fams);
        hdp_plot_var_str(&v, "title_text", title);
        hdp_plot_var_num(&v, "has_fit", 1);
        cli_draw(&out, "rates", figure_path, &v);
    }
    st = hdp_outset_commit(&out);
    if (st != HDP_OK)
        rc = cli_fail("rates", &err);
    if (!rc && figure_path)
        cli_drawn(figure_path, data_csv);
    cli_rates_free(&r);
    return rc;
}

/* ---- in a sweep (hdpsgd/sweep.h): rates.csv and rates.json in the point's folder ---- */

/* the point's models and result seen as the command's (borrowed: not freed) */
static cli_rates sweep_view(const hdp_sweep_point *p)
{
    return (cli_rates){.count = p->gamma_count, .loaded = p->gamma_count,
                       .models = (hdp_model *)p->gamma_models, .res = p->rates};
}
static void sweep_csv(FILE *f, const hdp_sweep_point *p)
{
    cli_rates r = sweep_view(p);
    cli_write_rates_csv(f, &r);
}
static void sweep_json(FILE *f, const hdp_sweep_point *p)
{
    cli_rates r = sweep_view(p);
    cli_write_rates_json(f, &r);
}

hdp_status rates_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err)
{
    return cli_sweep_files(pdir, p, "rates.csv", sweep_csv, "rates.json", sweep_json, err);
}
