/*
 * cmd_sim.c — `hdpsgd sim` (Monte Carlo of one-pass DP-SGD, docs/theory.md §1)
 * and `hdpsgd sde` (Euler-Maruyama of the homogenized SDE, docs/theory.md §4):
 * one front end and one CSV/JSON writer for both.
 *
 * The CSV has the model as '#' lines, then t,mean,stderr,q10,q50,q90,clipped_fraction
 * on the ODE's grid. It holds nothing that depends on the number of threads or
 * on the wall time (those are in the JSON summary), so that the same seed gives
 * the same bytes for any --threads.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/output.h"
#include "cli.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/spectrum.h"

static const char *out_path, *json_path;
static cli_mc_args mc;

#define COMMON_OPTS                                                                            \
    CLI_MC_OPTS(mc),                                                                           \
    {"output", 'o', OPT_OUTPUT, &out_path, "FILE.csv", "write the CSV here (default: stdout)"}, \
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"}

const cli_opt sim_opts[] = {
    COMMON_OPTS,
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help sim` (the command table in main.c points here) */
const char sim_usage[] = "[MODEL.ini]";
const char sim_help[] =
    "Runs the discrete algorithm of docs/theory.md §1 exactly (fresh Gaussian samples in\n"
    "the eigenbasis of Sigma, shortened to norm clip.feature_norm when it is set, label noise\n"
    "of the model's law, per-sample clipping of the true\n"
    "gradient norm at c*sqrt(d), private noise 2*c*sqrt(d)*sigma_k*xi) for sim.runs\n"
    "independent runs and records the exact excess risk on the grid of `hdpsgd ode`. One CSV\n"
    "row per grid point:\n"
    "  t,mean,stderr,q10,q50,q90,clipped_fraction\n"
    "over the runs that did not diverge (the row t = 1 is the output theta_n);\n"
    "clipped_fraction is the fraction of clipped steps since the previous row. Run r uses\n"
    "the r-th jump of a xoshiro256++ stream seeded by sim.seed (its steps' Gaussians come\n"
    "eight at a time from the run's block stream, see hdpsgd/rng.h; HDPSGD_SIMD=generic|avx2|\n"
    "avx512 picks the kernel; another value, or a kernel the CPU lacks, is ignored with a\n"
    "warning): the CSV is the same for any --threads and any kernel. With\n"
    "several threads each is pinned to its own CPU during the runs unless OMP_PROC_BIND or\n"
    "OMP_PLACES is set. A run diverges when its excess risk becomes non-finite or exceeds\n"
    "sim.divergence_factor x max(R(0), P), P = 2 c^2 gamma^2 eta~(0)^2/rho^2 the risk the\n"
    "private noise adds; when every run diverges the exit status is 4. The JSON counts\n"
    "the steps with eta_k ||x_k||^2 > 2 (nonexpansive_violations), which break the privacy\n"
    "accountant's precondition (docs/theory.md §6.1).\n"
    "The [sgd] section picks the algorithm: sgd.batch = B > 1 is batched one pass\n"
    "(docs/theory.md §1.6); sgd.sampling = shuffle | poisson with sgd.epochs runs standard\n"
    "DP-SGD on a finite training set (data.train_size Gaussian rows, or a data set's rows),\n"
    "its noise multiplier given or calibrated, and the JSON adds its privacy (docs/theory.md\n"
    "§6.6).\n"
    "With data.source = file the rows are the data set's (docs/theory.md §9; sim.rows), and\n"
    "a held-out set adds its test MSE.";

const cli_opt sde_opts[] = {
    {"step", 0, OPT_DOUBLE, &mc.step, "h",
     "Euler-Maruyama step in [0, 1] (overrides sde.step; 0 = 1/n)"},
    COMMON_OPTS,
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help sde` (the command table in main.c points here) */
const char sde_usage[] = "[MODEL.ini]";
const char sde_help[] =
    "Integrates the homogenized SDE of docs/theory.md §4 in the eigenbasis of Sigma with\n"
    "Euler-Maruyama, step h (sde.step or --step; 0 = 1/n), N = round(1/h) steps, the risk\n"
    "recomputed every step for the clipping factors mu_c, V_c (docs/theory.md §2), then adds the\n"
    "final-iterate noise of docs/theory.md §3 at t = 1. Same runs, seeds, CSV columns and JSON\n"
    "keys as `hdpsgd sim` (but nonexpansive_* and feature_*: the SDE draws no rows);\n"
    "clipped_fraction is the mean of 1 - mu_c(R) over the steps of the\n"
    "interval (the probability that a DP-SGD step would be clipped), and rho_accounted is\n"
    "the accountant on the discrete schedule of the model.";

void cli_write_mc_csv(FILE *f, const char *name, const hdp_model *m, const hdp_mc_options *opt,
                      const hdp_mc_result *r)
{
    if (!strcmp(name, "sim")) { /* which DP-SGD ([sgd], data.source) */
        const char *what = r->sgd.finite ? (m->sampling == HDP_SAMPLING_POISSON
                                                ? "DP-SGD with Poisson sampling on a finite training set"
                                                : "DP-SGD with shuffled batches on a finite training set")
                           : m->batch > 1 ? "batched one-pass DP-SGD"
                                          : "one-pass DP-SGD";
        fprintf(f, "# ; hdpsgd %s sim: Monte Carlo of %s%s, excess risk R_exc(theta_k) "
                   "(docs/theory.md %s)\n",
                hdp_version_string(), what, hdp_model_data(m) ? " on the data set's rows" : "",
                r->sgd.finite ? "§6.6" : m->batch > 1 ? "§1.6" : "§1");
    } else
        fprintf(f, "# ; hdpsgd %s sde: Euler-Maruyama of the homogenized SDE, excess risk "
                   "(docs/theory.md §4)\n",
                hdp_version_string());
    hdp_model_write_meta_sections(m, f, cli_model_sections("sim"));
    fprintf(f, "# ; effective: d = %ld, n = %ld, gamma = %.17g, steps = %ld", m->d, m->n, m->gamma,
            r->steps);
    if (strcmp(name, "sim"))
        fprintf(f, ", h = %.17g", opt->sde_step > 0 ? opt->sde_step : 1.0 / (double)m->n);
    fprintf(f, "\n# ; runs = %ld\n# ; seed = %llu\n# ; diverged = %ld (excess risk non-finite or above "
               "%.6g; excluded)\n",
            r->runs, opt->seed, r->diverged_runs, r->threshold);
    if (isfinite(r->rho_accounted))
        fprintf(f, "# ; rho_accounted = %.17g\n", r->rho_accounted);
    else
        fprintf(f, "# ; rho_accounted = inf\n");
    fprintf(f, "# ; final_risk_mean = %.17g\n# ; final_risk_stderr = %.17g\n", r->final_mean,
            r->final_stderr);
    fprintf(f, "# ; final_jump_mean = %.17g\n# ; final_jump_stderr = %.17g\n", r->final_jump_mean,
            r->final_jump_stderr);
    hdp_csv_columns2(f, &hdp_mc_fields, r, &hdp_mc_data_columns, r->test_mse ? r : NULL);
}

void cli_warn_nonexpansive(const char *name, const hdp_model *m, const hdp_mc_result *r)
{
    if (!(r->nonexpansive_violations > 0))
        return;
    fprintf(stderr,
            "hdpsgd %s: warning: %.0f of the runs' steps (%.3g per run of %ld) had eta_k "
            "||x_k||^2 > 2: those updates are not non-expansive, which the privacy accountant "
            "needs (docs/theory.md §6.1)%s\n",
            name, r->nonexpansive_violations,
            r->nonexpansive_violations / (double)(r->runs - r->diverged_runs), r->steps,
            isinf(m->rho) ? " (rho = inf: no privacy claimed)"
                          : "; clip.feature_norm = auto enforces it");
}

void cli_note_feature_norm(const char *name, const hdp_model *m)
{
    if (m->feature_norm == 0)
        return;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_spectrum spec;
    hdp_nonexpansive ne;
    hdp_status st = hdp_spectrum_build(m, &spec, &err);
    if (st == HDP_OK)
        st = hdp_nonexpansive_eval(m, spec.lambda, spec.d, &ne, &err);
    hdp_spectrum_free(&spec);
    if (st != HDP_OK) {
        fprintf(stderr, "hdpsgd %s: warning: the rows clip.feature_norm clips could not be "
                        "estimated: %s\n", name, err.msg);
        return;
    }
    if (ne.clip_fraction >= 1e-6)
        fprintf(stderr,
                "hdpsgd %s: note: clip.feature_norm = %.6g clips a fraction %.3g of the rows "
                "(%.3g of the second moment), which the risk ODE and the SDE do not model "
                "(docs/theory.md §6.1)\n",
                name, ne.feature_norm, ne.clip_fraction, ne.clip_moment);
}

void cli_write_mc_json(FILE *f, const char *name, const hdp_model *m, const hdp_mc_options *opt,
                       const hdp_mc_result *r)
{
    const cli_json_source src[] = { /* the tables of its JSON (main.c) and what they read */
        {&hdp_mc_command_fields, name, NULL}, {&hdp_mc_fields, r, m},
        /* standard DP-SGD on a finite training set (docs/theory.md §6.6), else the rows one
         * pass draws (§6.1: only sim's list has them, the SDE draws no rows) */
        {&hdp_mc_sgd_fields, r->sgd.finite ? r : NULL, m},
        {&hdp_mc_rows_fields, r->sgd.finite ? NULL : r, m},
        {&hdp_mc_data_fields, r->test_mse ? r : NULL, m}, /* a held-out set (§9) */
        {&hdp_model_fields, m, NULL}, {&hdp_mc_run_fields, r, m}, {&hdp_mc_seed_fields, opt, NULL},
        {&hdp_version_fields, NULL, NULL}};
    cli_json_file(f, name, src, (int)(sizeof src / sizeof *src), m);
}

static int run_command(const char *name, int argc, char **argv)
{
    const cli_command *cmd = cli_find_command(name);
    int is_sde = !strcmp(name, "sde");
    cli_common common;
    out_path = json_path = NULL;
    int rc = cli_start_mc(cmd, argc, argv, &common, &mc);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if (!is_sde && !isnan(mc.step))
        return cli_bad("sim", "--step applies to sde only");
    if ((rc = cli_mc_args_apply(name, &mc, &common)))
        return rc;

    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    if (m.sampling == HDP_SAMPLING_ONE_PASS) /* the limit 2/gamma is one-pass DP-SGD's */
        cli_warn_stability(name, &m);
    cli_note_feature_norm(name, &m);

    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.threads = cli_mc_threads(&mc);
    cli_mc_estimate(name, &m, &opt, 1);

    hdp_error err;
    hdp_error_clear(&err);
    hdp_mc_result res;
    cli_test_stop("compute");
    hdp_status st = is_sde ? hdp_sde_run(&m, &opt, &res, &err) : hdp_sim_run(&m, &opt, &res, &err);
    cli_mc_progress_end();
    if (st != HDP_OK) {
        hdp_mc_result_free(&res);
        hdp_model_free(&m);
        return cli_fail(name, &err);
    }
    if (res.diverged_runs > 0)
        fprintf(stderr,
                "hdpsgd %s: warning: %ld of %ld runs diverged (excess risk non-finite or above "
                "%g) and are excluded from the statistics\n",
                name, res.diverged_runs, res.runs, res.threshold);

    if (res.sgd.finite)
        fprintf(stderr,
                "hdpsgd %s: %s DP-SGD on %ld rows: batch %ld (q = %.6g), %lld steps, noise "
                "multiplier %.6g%s: epsilon = %.6g at delta = %g (%s%s)\n",
                name, res.sgd.poisson ? "Poisson" : "shuffled", res.sgd.train_size, res.sgd.batch,
                res.sgd.sample_rate, res.sgd.steps, res.sgd.noise_multiplier,
                res.sgd.calibrated ? " (calibrated)" : "", res.sgd.epsilon, res.sgd.delta,
                hdp_accountant_name(res.sgd.accountant),
                res.sgd.poisson ? ", add/remove"
                                : ", replace-one, no amplification: each row in one batch per "
                                  "epoch");
    else if (!is_sde)
        cli_warn_nonexpansive(name, &m, &res);

    hdp_outset out; /* CSV (standard output by default) and JSON, all or nothing */
    hdp_outset_init(&out, &err);
    FILE *f;
    if ((f = hdp_outset_add(&out, out_path ? out_path : "-")))
        cli_write_mc_csv(f, name, &m, &opt, &res);
    if ((f = hdp_outset_add(&out, json_path)))
        cli_write_mc_json(f, name, &m, &opt, &res);
    st = hdp_outset_commit(&out);
    if (st == HDP_OK && out_path)
        fprintf(stderr,
                "hdpsgd %s: final excess risk %.6g +- %.2g (%ld runs, %ld diverged, %d threads, "
                "%.3g s) -> %s\n",
                name, res.final_mean, res.final_stderr, res.runs, res.diverged_runs, res.threads,
                res.seconds, out_path);
    hdp_mc_result_free(&res);
    hdp_model_free(&m);
    return st == HDP_OK ? 0 : cli_fail(name, &err);
}

int cmd_sim(int argc, char **argv) { return run_command("sim", argc, argv); }

int cmd_sde(int argc, char **argv) { return run_command("sde", argc, argv); }

/* ---- in a sweep (hdpsgd/sweep.h): sim.csv and sim.json (sde.*) in the point's folder ---- */

static void sweep_csv(FILE *f, const hdp_sweep_point *p)
{
    cli_write_mc_csv(f, p->mc_name, p->m, p->opt, &p->mc);
}
static void sweep_json(FILE *f, const hdp_sweep_point *p)
{
    cli_write_mc_json(f, p->mc_name, p->m, p->opt, &p->mc);
}

hdp_status sim_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err)
{
    int sde = !strcmp(p->mc_name, "sde");
    return cli_sweep_files(pdir, p, sde ? "sde.csv" : "sim.csv", sweep_csv,
                           sde ? "sde.json" : "sim.json", sweep_json, err);
}
