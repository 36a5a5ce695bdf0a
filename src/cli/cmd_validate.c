/*
 * cmd_validate.c — `hdpsgd validate`: the toolkit's main job. Runs the ODE,
 * the Monte Carlo of DP-SGD and the homogenized SDE on one model and one grid,
 * prints how far the simulations are from the theory, a verdict, and a figure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/output.h"
#include "plot.h"
#include "cli.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/validate.h"

static const char *figure_path, *json_path, *data_prefix;
static long scaling_opt;
static cli_mc_args mc;
static cli_ode_args ode_args;
static int no_sde, bounds_opt, no_bounds_opt;

const cli_opt validate_opts[] = {
    CLI_MC_OPTS(mc),
    {"figure", 'f', OPT_FIGURE, &figure_path, "FILE",
     "draw the figure (.png, .pdf, .svg, .eps or .tex) and write its data beside it"},
    {"data", 'd', OPT_OUTPUT_PREFIX, &data_prefix, "PREFIX",
     "write PREFIX.ode.csv, PREFIX.sim.csv, PREFIX.sde.csv (default: the figure's name)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    CLI_ODE_OPTS(ode_args),
    {"no-sde", 0, OPT_FLAG, &no_sde, NULL, "skip the homogenized SDE"},
    {"bounds", 0, OPT_FLAG, &bounds_opt, NULL,
     "figure: draw the ODE bounds R_upper, R_lower however far they reach (default: drawn "
     "but for the isotropic spectrum, a bound that leaves the data's range by more than its "
     "span hidden and named in the key)"},
    {"no-bounds", 0, OPT_FLAG, &no_bounds_opt, NULL, "figure: no ODE bounds"},
    {"scaling", 0, OPT_LONG, &scaling_opt, "K",
     "also compare at n, 4n, ..., 4^(K-1) n with gamma fixed and fit the deviation's slope"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help validate` (the command table in main.c points here) */
const char validate_usage[] = "[MODEL.ini]";
const char validate_help[] =
    "The toolkit's main job: runs `ode`, `sim` and `sde` on the same model and grid and prints,\n"
    "for each simulated side, the maximum absolute and relative deviation from the ODE, the\n"
    "maximum z-score |mean - ODE|/stderr, the final-iterate risk, the clipped fraction, and the\n"
    "privacy level (rho, and epsilon at delta = privacy.delta by Canonne-Kamath-Steinke). A grid point\n"
    "agrees when its relative deviation is <= validate.rel_tol (0.05) or its deviation is within\n"
    "validate.z_tol (4) standard errors; the model passes when every point of both sides\n"
    "agrees. Beside each side's verdict the table says whether its gap is within rel_tol and\n"
    "whether it is statistically significant (more than z_tol standard errors somewhere): with\n"
    "many runs a 1 % gap can be both, and \"agrees\" then means close, not equal. Exit status\n"
    "0 on pass, 1 on fail, 2 on bad input. --figure draws the curves with\n"
    "gnuplot (PNG, PDF, SVG, EPS or LaTeX by extension) and writes the data beside it; --scaling K repeats\n"
    "the Monte Carlo comparison at n, 4n, ..., 4^(K-1) n with gamma fixed and fits the\n"
    "log-log slope of the deviation (theory: O(log^2 n / sqrt n)). In the JSON, pass is the\n"
    "overall verdict, sim_pass and sde_pass each side's.";

static const char *spectrum_text(const hdp_model *m, char *buf, size_t size)
{
    const hdp_data *data = hdp_model_data(m); /* the file's name stays out of the figure */
    if (data) {
        snprintf(buf, size, "%ld rows of a data set (%s target)", data->train.n,
                 data->planted ? "planted" : "least-squares");
        return buf;
    }
    switch (m->spectrum) {
    case HDP_SPECTRUM_POWERLAW: snprintf(buf, size, "power-law α=%g", m->spectrum_alpha); break;
    case HDP_SPECTRUM_TWOLEVEL:
        snprintf(buf, size, "two-level f=%g r=%g", m->twolevel_fraction, m->twolevel_ratio);
        break;
    case HDP_SPECTRUM_FILE: snprintf(buf, size, "spectrum from file"); break;
    default: snprintf(buf, size, "isotropic"); break;
    }
    return buf;
}

static void title_of(const hdp_model *m, const hdp_validate_result *v, long runs, char *buf, size_t size)
{
    char spec[96], rho[96], noise[64];
    if (isinf(m->rho))
        snprintf(rho, sizeof rho, "ρ=∞ (no private noise)");
    else
        snprintf(rho, sizeof rho, "ρ=%g (ε=%.3g at δ=%.3g)", m->rho, v->epsilon_cks, v->delta);
    hdp_noise_law law; /* a least-squares data set's: the residuals' empirical law */
    hdp_noise_law_of_model(m, &law);
    if (law.kind == HDP_NOISE_NONE)
        snprintf(noise, sizeof noise, "no label noise");
    else
        snprintf(noise, sizeof noise, "%s label noise τ²=%g", hdp_noise_name(law.kind), law.tau2);
    snprintf(buf, size, "d=%ld, n=%ld (γ=%.3g), %s, %s\nclip c=%g, %s, %s schedule, %ld runs",
             m->d, m->n, m->gamma, spectrum_text(m, spec, sizeof spec), noise, m->c, rho,
             hdp_sched_name(m->sched),
             runs);
}

static void print_side(const char *name, const hdp_validate_side *s, int pass_known)
{
    printf("  %-22s %11.4g %11.2f%% %9.2f %12.6g ± %-9.2g %8.1f%%   %s\n", name, s->max_abs_dev,
           100 * s->max_rel_dev, s->max_z, s->final_risk, s->final_stderr, 100 * s->clipped,
           pass_known ? (s->pass ? "agrees" : "DISAGREES") : "");
}

/* |mean - ODE| / ODE at grid point i, as a percentage */
static double gap_percent(const hdp_validate_result *v, const hdp_mc_result *mc, long i)
{
    double dev = fabs(mc->mean[i] - v->ode.risk[i]);
    return v->ode.risk[i] > 0 ? 100 * dev / v->ode.risk[i] : (dev > 0 ? INFINITY : 0);
}

/* One side's verdict in words: within the relative tolerance or not, and statistically
 * significant or not (docs/theory.md §3.7, "What the verdict means"); the pass is the rule's. */
static void print_side_verdict(const char *name, const hdp_model *m, const hdp_validate_result *v,
                               const hdp_validate_side *s, const hdp_mc_result *mc)
{
    double tol = 100 * m->rel_tol, z_tol = m->z_tol;
    printf("  %s: ", name);
    if (!s->pass) {
        long i = s->worst_point;
        printf("DISAGREES: the %.3g %% gap at t = %g is beyond %g %% and significant, z = %.2f "
               "(> %g)\n",
               gap_percent(v, mc, i), v->ode.t[i], tol, fabs(mc->mean[i] - v->ode.risk[i]) /
               mc->stderr_[i], z_tol);
        return;
    }
    long i = s->max_z_point;
    if (s->within_rel_tol && !s->significant)
        printf("agrees within %g %% (largest gap %.3g %%); not significant (max z = %.2f <= %g)\n",
               tol, 100 * s->max_rel_dev, s->max_z, z_tol);
    else if (s->within_rel_tol)
        printf("agrees within %g %%; the %.3g %% gap at t = %g is significant, z = %.2f (> %g): "
               "close, not equal\n",
               tol, gap_percent(v, mc, i), v->ode.t[i], s->max_z, z_tol);
    else if (!s->significant)
        printf("agrees within the noise: the %.3g %% gap (beyond %g %%) is not significant "
               "(max z = %.2f <= %g)\n",
               100 * s->max_rel_dev, tol, s->max_z, z_tol);
    else
        printf("agrees point by point (each gap within %g %% or not significant); largest gap "
               "%.3g %%, and the %.3g %% gap at t = %g is significant, z = %.2f (> %g)\n",
               tol, 100 * s->max_rel_dev, gap_percent(v, mc, i), v->ode.t[i], s->max_z, z_tol);
}

static void print_table(const hdp_model *m, const hdp_validate_result *v, long runs)
{
    char spec[96];
    hdp_noise_law law; /* a least-squares data set's: the residuals' empirical law */
    hdp_noise_law_of_model(m, &law);
    printf("model: %s\n", m->source);
    printf("  d = %ld, n = %ld (gamma = %.4g), %s, %s label noise (tau2 = %g), c = %g, %s schedule\n",
           m->d, m->n, m->gamma, spectrum_text(m, spec, sizeof spec), hdp_noise_name(law.kind),
           law.tau2, m->c, hdp_sched_name(m->sched));
    if (m->batch > 1) /* batched one pass (docs/theory.md §1.6, §3.11) */
        printf("  batched one pass: sgd.batch = %ld, %ld steps\n", m->batch,
               hdp_sched_batch_count(m->n, m->batch));
    if (isinf(m->rho))
        printf("privacy: rho = inf (no private noise)\n");
    else
        printf("privacy: rho = %g, i.e. (rho^2/2 = %g)-zCDP: epsilon = %.4g at delta = %.3g "
               "(Canonne-Kamath-Steinke; Bun-Steinke %.4g)\n",
               m->rho, v->rho_z, v->epsilon_cks, v->delta, v->epsilon_bs);
    double ode_clip = 0;
    for (long i = 1; i < v->ode.points; i++) ode_clip += 1 - v->ode.mu[i];
    ode_clip /= (double)(v->ode.points - 1);
    printf("\n  %-22s %11s %12s %9s %25s %9s   %s\n", "side (vs the ODE)", "max |dev|",
           "max rel dev", "max z", "final risk theta_n", "clipped", "verdict");
    printf("  %-22s %11s %12s %9s %12.6g %12s %8.1f%%\n", "ODE (theory)", "-", "-", "-",
           v->ode.final_risk, "", 100 * ode_clip);
    char label[64];
    snprintf(label, sizeof label, "Monte Carlo (%ld runs)", runs - v->sim.diverged_runs);
    print_side(label, &v->sim_side, 1);
    if (v->with_sde) {
        snprintf(label, sizeof label, "SDE (%ld runs)", runs - v->sde.diverged_runs);
        print_side(label, &v->sde_side, 1);
    }
    if (v->sim.diverged_runs || (v->with_sde && v->sde.diverged_runs))
        printf("  diverged runs: %ld (Monte Carlo), %ld (SDE)\n", v->sim.diverged_runs,
               v->sde.diverged_runs);
    print_side_verdict("Monte Carlo", m, v, &v->sim_side, &v->sim);
    if (v->with_sde)
        print_side_verdict("SDE", m, v, &v->sde_side, &v->sde);
    printf("\n  tolerances: a grid point agrees when its relative deviation <= %g or its "
           "deviation <= %g standard errors;\n  a gap is significant when it exceeds %g "
           "standard errors somewhere (the runs resolve it, however small)\n",
           m->rel_tol, m->z_tol, m->z_tol);
    printf("  ODE: %ld bins, %ld steps, %.3g s; ODE clipped column: mean of 1 - mu_c(R(t)) over t\n",
           v->ode.bins, v->ode.steps, v->ode.solve_seconds);
    const hdp_validate_side *bad = !v->sim_side.pass ? &v->sim_side
                                   : (v->with_sde && !v->sde_side.pass) ? &v->sde_side : NULL;
    if (bad && bad->worst_point >= 0) {
        const hdp_mc_result *mc = bad == &v->sim_side ? &v->sim : &v->sde;
        long i = bad->worst_point;
        printf("  worst point: t = %g, ODE %.6g vs %s %.6g ± %.2g\n", v->ode.t[i], v->ode.risk[i],
               bad == &v->sim_side ? "Monte Carlo" : "SDE", mc->mean[i], mc->stderr_[i]);
    }
    printf("\nverdict: %s\n", v->pass ? "PASS — the homogenized ODE predicts the simulation"
                                      : "FAIL — the simulation departs from the ODE (small d? "
                                        "homogenization is a high-dimensional limit)");
}

/* ---- --scaling (the driver: hdp_validate_scaling) ---- */

/* the level about to run (the library builds its model: the base with data.d, data.n scaled) */
static int scaling_progress(const char *what, long done, long total, double value, void *user)
{
    (void)what;
    const hdp_model *base = user;
    cli_mc_progress_end(); /* the last level's runs line, if any */
    if (done < total)
        fprintf(stderr, "hdpsgd validate: scaling level %ld/%ld: d = %ld, n = %.0f\n", done + 1,
                total, base->d << (2 * done), value);
    return 0;
}

static int run_scaling(const hdp_model *base, const hdp_mc_options *opt, long K,
                       hdp_validate_scaling_result *sc)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st = hdp_validate_scaling(base, opt, K, scaling_progress, (void *)base, sc, &err);
    cli_mc_progress_end();
    if (st != HDP_OK)
        return cli_fail("validate", &err);
    const hdp_validate_level *rows = sc->level;
    printf("\nscaling with gamma fixed (Monte Carlo vs ODE; theory: O(log^2 n / sqrt n)):\n");
    printf("  %10s %8s %12s %12s %8s %18s\n", "n", "d", "max |dev|", "max rel dev", "max z",
           "log^2(n)/sqrt(n)");
    for (long l = 0; l < K; l++) {
        double ln = log((double)rows[l].n);
        printf("  %10ld %8ld %12.4g %11.2f%% %8.2f %18.4g\n", rows[l].n, rows[l].d,
               rows[l].max_abs_dev, 100 * rows[l].max_rel_dev, rows[l].max_z,
               ln * ln / sqrt((double)rows[l].n));
    }
    if (K >= 2) {
        printf("  fitted log-log slope of max |dev| against n: %.3f (log^2 n/sqrt n over this "
               "range: %.3f)\n",
               sc->slope, sc->theory_slope);
        if (sc->max_z < 4)
            printf("  every level has max z < 4: the deviations are at the Monte Carlo noise level "
                   "(which itself shrinks\n  like 1/sqrt(d runs)), so the slope bounds the ODE's "
                   "error from above rather than measuring it; add runs to resolve the bias\n");
    }
    return 0;
}

/* the JSON summary (validate's parts in main.c; sc NULL: without --scaling's keys) */
static void write_json(FILE *f, const hdp_model *m, const hdp_validate_result *v, const hdp_validate_scaling_result *sc)
{
    hdp_json j;
    const hdp_validate_scaling_result *scaled = sc && scaling_opt > 0 ? sc : NULL;
    const cli_json_each levels = {scaled ? (int)scaling_opt : 0, NULL,
                                  scaled ? scaled->level : NULL, NULL, sizeof sc->level[0]};
    const cli_json_source src[] = {
        {&hdp_validate_side_fields, &v->sim_side, m}, /* pass: sim_pass */
        {&hdp_validate_side_fields, v->with_sde ? &v->sde_side : NULL, m}, /* under sde_ */
        {&hdp_validate_fields, v, m},
        {&hdp_ode_data_fields, v->ode.data ? &v->ode : NULL, m}, /* docs/theory.md §9 */
        {&hdp_mc_data_fields, v->sim.test_mse ? &v->sim : NULL, m},
        {&hdp_mc_rows_fields, &v->sim, m}, /* docs/theory.md §6.1 */
        {&hdp_model_fields, m, NULL},
        {&hdp_validate_scaling_fields, scaled, NULL},
        {&hdp_validate_level_fields, &levels, NULL}};
    hdp_json_begin(&j, f);
    cli_json_write(&j, cli_find_command("validate"), src, (int)(sizeof src / sizeof *src), m);
    hdp_json_end(&j);
}

/* the figure from the data files of the set (the bounds but for the isotropic spectrum, or
 * as --bounds / --no-bounds say) */
static void draw_figure(hdp_outset *out, const hdp_model *m, const hdp_validate_result *v,
                        long runs, const char *ode_csv, const char *sim_csv, const char *sde_csv)
{
    char title[512];
    title_of(m, v, runs, title, sizeof title);
    hdp_plot_vars pv;
    hdp_plot_vars_init(&pv);
    cli_plot_source(out, &pv, "ode_file", ode_csv);
    cli_plot_source(out, &pv, "sim_file", sim_csv);
    if (v->with_sde)
        cli_plot_source(out, &pv, "sde_file", sde_csv);
    else
        hdp_plot_var_str(&pv, "sde_file", "");
    hdp_plot_var_str(&pv, "title_text", title);
    /* 1 drawn, 0 not, -1 drawn unless it leaves the data's range (the script decides) */
    hdp_plot_var_num(&pv, "show_bounds",
                     no_bounds_opt || m->ode_model == HDP_ODE_MODEL_ROWS /* none */ ? 0
                     : bounds_opt                                                  ? 1
                     : m->spectrum != HDP_SPECTRUM_ISOTROPIC                       ? -1
                                                                                   : 0);
    cli_draw(out, "validate", figure_path, &pv);
}

/* The data files (--data or the figure's prefix), the JSON and the figure, all or nothing
 * (hdp_outset), once everything has run; the figure's line on success. */
static hdp_status write_outputs(const hdp_model *m, const hdp_mc_options *opt,
                                const hdp_validate_result *v,
                                const hdp_validate_scaling_result *sc, hdp_error *err)
{
    char prefix[HDP_OUT_PATH_MAX + 1] = "";
    if (data_prefix) {
        snprintf(prefix, sizeof prefix, "%s", data_prefix);
    } else if (figure_path) {
        snprintf(prefix, sizeof prefix, "%s", figure_path);
        char *dot = strrchr(prefix, '.'), *slash = strrchr(prefix, '/');
        if (dot && dot > (slash ? slash + 1 : prefix)) *dot = '\0'; /* not a name's first dot */
    }
    char ode_csv[HDP_OUT_PATH_MAX + 32] = "", sim_csv[HDP_OUT_PATH_MAX + 32] = "", sde_csv[HDP_OUT_PATH_MAX + 32] = "";
    hdp_outset out; /* the data files and the JSON, all or nothing */
    hdp_outset_init(&out, err);
    FILE *f;
    if (prefix[0]) {
        snprintf(ode_csv, sizeof ode_csv, "%s.ode.csv", prefix);
        snprintf(sim_csv, sizeof sim_csv, "%s.sim.csv", prefix);
        if (v->with_sde) snprintf(sde_csv, sizeof sde_csv, "%s.sde.csv", prefix);
        if ((f = hdp_outset_add(&out, ode_csv)))
            cli_write_ode_csv(f, m, &v->ode);
        if ((f = hdp_outset_add(&out, sim_csv)))
            cli_write_mc_csv(f, "sim", m, opt, &v->sim);
        if (v->with_sde && (f = hdp_outset_add(&out, sde_csv)))
            cli_write_mc_csv(f, "sde", m, opt, &v->sde);
    }
    if ((f = hdp_outset_add(&out, json_path)))
        write_json(f, m, v, sc);
    if (figure_path)
        draw_figure(&out, m, v, opt->runs, ode_csv, sim_csv, sde_csv);
    hdp_status st = hdp_outset_commit(&out);
    if (st == HDP_OK && figure_path) {
        char ok[HDP_OUT_PATH_MAX + 32];
        snprintf(ok, sizeof ok, "%s.{ode,sim%s}.csv", prefix, v->with_sde ? ",sde" : "");
        cli_drawn(figure_path, ok);
    }
    return st;
}

int cmd_validate(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("validate");
    cli_common common;
    figure_path = json_path = data_prefix = NULL;
    cli_mc_args_reset(&mc);
    cli_ode_args_reset(&ode_args);
    scaling_opt = 0;
    no_sde = bounds_opt = no_bounds_opt = 0;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if (bounds_opt && no_bounds_opt) {
        fprintf(stderr, "hdpsgd validate: error: --bounds and --no-bounds: give one of them\n");
        return EXIT_BAD_INPUT;
    }
    if (hdp_plot_get_style()->nlabels > 3) { /* as plot refuses more labels than curves */
        fprintf(stderr, "hdpsgd validate: error: %d --label options: the figure labels 3 curves, "
                        "in the order ODE, Monte Carlo, SDE (nothing was run)\n",
                hdp_plot_get_style()->nlabels);
        return EXIT_BAD_INPUT;
    }
    if ((rc = cli_mc_args_apply("validate", &mc, &common)) ||
        (rc = cli_ode_args_apply("validate", &ode_args, &common)))
        return rc;
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    cli_warn_delta("validate", &m);
    if (m.batch > 1 && !no_sde) { /* the SDE is derived for batch 1 (hdp_sde_run refuses) */
        fprintf(stderr, "hdpsgd validate: note: sgd.batch = %ld: the SDE side is skipped (the "
                        "homogenized SDE is derived for batch 1, docs/theory.md §4)\n",
                m.batch);
        no_sde = 1;
    }
    if (m.ode_model == HDP_ODE_MODEL_ROWS && !no_sde) { /* the SDE is the bins ODE's */
        fprintf(stderr, "hdpsgd validate: note: ode.model = rows: the SDE side is skipped (the "
                        "homogenized SDE is the stochastic form of the bins' ODE, docs/theory.md "
                        "§4, not of the rows' recursion)\n");
        no_sde = 1;
    }
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.threads = cli_mc_threads(&mc);
    if (scaling_opt < 0 || scaling_opt > HDP_VALIDATE_MAX_LEVELS) { /* before the runs */
        fprintf(stderr, "hdpsgd validate: error: --scaling %ld: expected 1 to %d levels\n",
                scaling_opt, HDP_VALIDATE_MAX_LEVELS);
        hdp_model_free(&m);
        return EXIT_BAD_INPUT;
    }
    cli_mc_estimate("validate", &m, &opt, no_sde ? 1 : 2);
    cli_warn_stability("validate", &m);
    cli_note_feature_norm("validate", &m);

    hdp_validate_result v;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st = hdp_validate_run(&m, &opt, !no_sde, &v, &err);
    cli_mc_progress_end();
    hdp_validate_scaling_result sc;
    memset(&sc, 0, sizeof sc);
    sc.slope = NAN;
    if (st == HDP_OK) {
        print_table(&m, &v, opt.runs);
        cli_warn_nonexpansive("validate", &m, &v.sim);
        if (scaling_opt > 0)
            rc = run_scaling(&m, &opt, scaling_opt, &sc);
        /* data files, figure, JSON: written only now that everything has run */
        if (!rc)
            st = write_outputs(&m, &opt, &v, &sc, &err);
    }
    int pass = v.pass;
    hdp_validate_free(&v);
    hdp_model_free(&m);
    if (rc)
        return rc;
    if (st != HDP_OK)
        return cli_fail("validate", &err);
    return pass ? 0 : EXIT_FAIL_VALIDATION;
}

/* ---- in a sweep (hdpsgd/sweep.h): validate.json in the point's folder ---- */

/* the same keys as validate --json (its parts in main.c), without --scaling's */
static void sweep_json(FILE *f, const hdp_sweep_point *p) { write_json(f, p->m, &p->v, NULL); }

hdp_status validate_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err)
{
    return cli_sweep_files(pdir, p, "validate.json", sweep_json, NULL, NULL, err);
}
