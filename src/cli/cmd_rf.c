/*
 * cmd_rf.c — `hdpsgd rf`: DP-GD on random features (Algorithm 1 of Bombari-Mondelli) coupled to
 * its Ornstein-Uhlenbeck limit, with the closed forms and the non-private baselines
 * (docs/theory.md §6 and §7).
 *
 * The CSV has the model and the effective hyperparameters as '#' lines, then one row per
 * recorded step. It holds nothing that depends on the number of threads or the wall time
 * (those are in the JSON summary): the same seed gives the same bytes for any --threads.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "cli.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/rf.h"
#include "rf_cli.h"

static const char *out_path, *json_path;
static cli_mc_args mc;

const cli_opt rf_opts[] = {
    {"runs", 0, OPT_LONG, &mc.runs, "N", "number of DP-GD runs (overrides rf.runs; >= 1)"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &mc.seed, "S",
     "seed, unsigned 64-bit (overrides sim.seed): data from its stream, run r = 1.. its r-th jump"},
    {"output", 'o', OPT_OUTPUT, &out_path, "FILE.csv", "write the CSV here (default: stdout)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help rf` (the command table in main.c points here) */
const char rf_usage[] = "[MODEL.ini]";
const char rf_help[] =
    "Algorithm 1 of Bombari-Mondelli (docs/theory.md §6, §7) on the random-features model of\n"
    "[rf]: features act(V x), V_ij ~ N(0, 1/d) frozen, x ~ N(0, I_d), labels sign(u^T x) or u^T\n"
    "x, square loss; per-sample gradients clipped at C_clip, noise sqrt(eta) (2 C_clip/n) sigma\n"
    "N(0, I_p), sigma from (epsilon, delta) by Bombari-Mondelli's bound (by the zCDP route, with\n"
    "a note, outside its range). rf.runs runs of DP-GD in R^p (two matrix-vector products per\n"
    "step), each coupled to the OU process dTheta = -(2/n) Phi^T (Phi Theta - y) dt + s dB, s = 2\n"
    "C_clip sigma/n, through the same Gaussian increments: its Euler-Maruyama path (identical to\n"
    "DP-GD while nothing is clipped) and its exact step in the eigenbasis of Phi Phi^T. One CSV\n"
    "row per recorded step (0 and rf.records steps up to T):\n"
    "  step,tau,dpgd_test,dpgd_test_se,dpgd_train,dpgd_train_se,ou_test,ou_train,em_test,\n"
    "  em_test_se,em_expected_test,ex_test,ex_test_se,clipped_fraction,minnorm_test,gf_test\n"
    "tau = eta step; *_test, *_train: mean square losses on the test and training sets, *_se\n"
    "their standard errors over the runs; ou_*: the exact OU expected losses (closed form);\n"
    "em_*: Euler-Maruyama OU path; em_expected_test: the closed form of that recursion; ex_*:\n"
    "exact OU step; clipped_fraction: mean over runs of the fraction of samples whose gradient\n"
    "at theta_step exceeds C_clip; minnorm_test: the min-norm interpolator Phi^+ y (least\n"
    "squares for p < n); gf_test: gradient flow (the OU mean) at tau. The data come from the\n"
    "stream of sim.seed, run r from its (r+1)-th jump: the CSV is the same for any --threads.\n"
    "The JSON has the final losses, the strong error sup over steps of ||theta_DPGD - theta_OU||\n"
    "and the test loss's terms at T (Bombari-Mondelli, Eqs. 20-21) by Monte Carlo and in closed\n"
    "form. dpgd.regime = theorem sets C_clip =\n"
    "sqrt(p) log^2 n and T = d log^2 n/(eta p) (the theorem's Eq. 8: clipping should not occur).\n"
    "With data.source = file the inputs are the data set's prepared rows (docs/theory.md §7.5):\n"
    "d its columns; the test set data.test_features's rows, or else rf.test_size rows of the\n"
    "file (default 20 %) held out by the seed, n the rest (rf.d, rf.n, rf.test_size given with\n"
    "other values are refused); the labels the data set's (rf.target, rf.label_noise refused),\n"
    "or rf.target's on the rows without labels or with data.target = planted.";

const char *cli_rf_route_name(hdp_rf_sigma_route r)
{
    switch (r) {
    case HDP_RF_SIGMA_GIVEN: return "given";
    case HDP_RF_SIGMA_SIMPLE: return "simple";
    case HDP_RF_SIGMA_ZCDP: return "zcdp";
    case HDP_RF_SIGMA_NONE: return "none";
    }
    return "?";
}

/* The note of docs/theory.md §6 when Bombari-Mondelli's bound does not apply. */
void cli_rf_sigma_note(const char *cmd, const hdp_rf_dpgd *q)
{
    if (q->route != HDP_RF_SIGMA_ZCDP)
        return;
    fprintf(stderr,
            "hdpsgd %s: note: epsilon = %g lies outside (0, 8 ln(1/delta)) = (0, %.4g), where "
            "Bombari-Mondelli's sigma = sqrt(eta T) sqrt(8 ln(1/delta))/epsilon holds; sigma = %.6g "
            "comes from the zCDP route instead (rho_z = eta T/(2 sigma^2) = %.6g by "
            "Canonne-Kamath-Steinke, docs/theory.md §6)\n",
            cmd, q->epsilon, 8.0 * log(1.0 / q->delta), q->sigma, q->rho_z);
}

/* Where the inputs, labels and test set came from (docs/theory.md §7.5). */
static const char *inputs_name(const hdp_rf_spec *s) { return s->data ? "data" : "gaussian"; }
static const char *labels_name(const hdp_rf_spec *s)
{
    return s->file_labels ? "data" : hdp_rf_target_name(s->k.target);
}
static const char *test_set_name(const hdp_rf_spec *s)
{
    return !s->data ? "drawn" : s->holdout ? "rows held out" : "held-out file";
}

static void write_csv(FILE *f, const hdp_model *m, const hdp_rf_problem *pb,
                      const hdp_rf_dpgd *q, const hdp_rf_sim_result *r)
{
    fprintf(f, "# ; hdpsgd %s rf: DP-GD on random features and its OU limit (docs/theory.md §6, §7; "
               "Bombari-Mondelli)\n", hdp_version_string());
    hdp_model_write_meta_sections(m, f, cli_model_sections("rf"));
    fprintf(f, "# ; effective: d = %ld, n = %ld, p = %ld, test_size = %ld, modes = %ld\n",
            pb->spec.k.d, pb->spec.k.n, pb->spec.k.p, pb->spec.k.test_size, pb->r);
    fprintf(f, "# ; inputs = %s, labels = %s, test set = %s\n", inputs_name(&pb->spec),
            labels_name(&pb->spec), test_set_name(&pb->spec));
    fprintf(f, "# ; dpgd: eta = %.17g, T = %ld, tau = eta T = %.17g, C_clip = %.17g\n", q->eta,
            q->T, q->tau, q->C_clip);
    fprintf(f, "# ; privacy: epsilon = %.17g, delta = %.17g, sigma = %.17g (%s), rho_z = %.17g, "
               "epsilon_cks = %.17g\n", q->epsilon, q->delta, q->sigma, cli_rf_route_name(q->route),
            q->rho_z, q->epsilon_cks);
    fprintf(f, "# ; OU: s = 2 C_clip sigma / n = %.17g, lambda_max = %.17g, eta lambda_max = %.6g\n",
            q->s, pb->lambda[0], q->eta * pb->lambda[0]);
    fprintf(f, "# ; min-norm interpolator: test = %.17g, train = %.17g, norm = %.17g\n",
            pb->minnorm_test, pb->minnorm_train, pb->minnorm_norm);
    fprintf(f, "# ; runs = %ld\n# ; seed = %llu\n", r->runs, (unsigned long long)m->seed);
    fprintf(f, "# ; strong_error_mean = %.17g\n# ; strong_error_max = %.17g\n# ; max_clipped_fraction "
               "= %.17g\n", r->strong_error_mean, r->strong_error_max, r->max_clipped_fraction);
    hdp_csv_header(f, &hdp_rf_csv_fields, 1);
    fputc('\n', f);
    for (long i = 0; i < r->points; i++) {
        hdp_csv_row(f, &hdp_rf_csv_fields, r, &i, 1);
        fputc('\n', f);
    }
}

static void write_json(FILE *f, const hdp_model *m, const hdp_rf_problem *pb,
                       const hdp_rf_dpgd *q, const hdp_rf_sim_result *r)
{
    long L = r->points - 1;
    const hdp_rf_summary sm = {
        .command = "rf", .dpgd_test = r->dpgd_test[L], .dpgd_test_stderr = r->dpgd_test_se[L],
        .dpgd_train = r->dpgd_train[L], .ou_exact_test = r->ou_test[L],
        .ou_exact_train = r->ou_train[L], .ou_em_test = r->em_test[L],
        .ou_em_test_stderr = r->em_test_se[L], .ou_em_expected_test = r->em_expected_test[L],
        .ou_exact_step_test = r->ex_test[L], .ou_exact_step_test_stderr = r->ex_test_se[L],
        .minnorm_test = pb->minnorm_test, .minnorm_train = pb->minnorm_train,
        .gradient_flow_test = r->gf_test[L], .zero_test = pb->zero_test,
        .zero_train = pb->zero_train, .max_clipped_fraction = r->max_clipped_fraction,
        .strong_error_mean = r->strong_error_mean, .strong_error_max = r->strong_error_max,
        .strong_error_em_max = r->strong_error_em_max, .sigma = q->sigma,
        .sigma_route = cli_rf_route_name(q->route), .epsilon = q->epsilon,
        .epsilon_cks = q->epsilon_cks, .rho_z = q->rho_z, .delta = q->delta, .T = q->T,
        .eta = q->eta, .tau = q->tau, .C_clip = q->C_clip, .s = q->s,
        .lambda_max = pb->lambda[0], .p = pb->spec.k.p, .n = pb->spec.k.n, .d = pb->spec.k.d,
        .test_size = pb->spec.k.test_size, .modes = pb->r, .inputs = inputs_name(&pb->spec),
        .labels = labels_name(&pb->spec), .test_set = test_set_name(&pb->spec),
        .runs = r->runs, .threads = r->threads, .seed = m->seed,
        .build_seconds = pb->seconds, .seconds = r->seconds};
    hdp_json j;
    hdp_json_begin(&j, f);
    const cli_json_source src[] = { /* the tables of its JSON (main.c) and what they read */
        {&hdp_rf_final_fields, &sm, NULL}, {&hdp_rf_terms_fields, r, NULL},
        {&hdp_rf_run_fields, &sm, NULL}, {&hdp_version_fields, NULL, NULL}};
    cli_json_write(&j, cli_find_command("rf"), src, (int)(sizeof src / sizeof *src), m);
    hdp_json_end(&j);
}

/* --runs/--threads/--seed: --runs sets rf.runs (not sim.runs), the rest as for sim. */
int cli_rf_apply_args(const char *cmd, cli_mc_args *a, cli_common *common)
{
    long runs = a->runs;
    a->runs = CLI_NOT_GIVEN;
    int rc = cli_mc_args_apply(cmd, a, common);
    if (!rc && runs != CLI_NOT_GIVEN)
        rc = cli_add_with_long(cmd, common, "--runs", "rf.runs", runs);
    a->runs = runs;
    return rc;
}

int cli_rf_load(const char *cmd, const cli_common *common, hdp_model *m, hdp_rf_spec *spec,
                hdp_rf_dpgd *q)
{
    int rc = cli_load_model(common, m);
    if (rc)
        return rc;
    int experiment = !strcmp(cmd, "rf-experiment");
    hdp_error err;
    hdp_error_clear(&err);
    hdp_rf_spec_from_model(m, spec);
    hdp_status st = HDP_OK;
    if (experiment && hdp_model_data(m))
        st = hdp_model_fail_key(m, "data", "source", &err,
                                "rf-experiment draws its inputs (and a validation set of the "
                                "same law); random features of a data set's rows are `hdpsgd "
                                "rf`'s (docs/theory.md §7.5)");
    else if (experiment && hdp_dpgd_keys_of(m)->regime == HDP_DPGD_THEOREM)
        st = hdp_model_fail_key(m, "dpgd", "regime", &err,
                                "rf-experiment sweeps C_clip and T on the experiments' scalings; "
                                "regime = theorem is for `hdpsgd rf`");
    else
        st = hdp_rf_spec_from_data(m, spec, &err);
    if (st == HDP_OK) /* the model's own [dpgd] keys must be consistent (also when a grid
                         overrides T and C) */
        st = hdp_rf_dpgd_from_model(m, spec->k.p, spec->k.n, spec->k.d, q, &err);
    if (st != HDP_OK) {
        hdp_model_free(m);
        return cli_fail(cmd, &err);
    }
    return 0;
}

int cmd_rf(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("rf");
    cli_common common;
    out_path = json_path = NULL;
    int rc = cli_start_mc(cmd, argc, argv, &common, &mc);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if ((rc = cli_rf_apply_args("rf", &mc, &common)))
        return rc;
    hdp_model m;
    hdp_rf_dpgd q;
    hdp_rf_spec spec;
    if ((rc = cli_rf_load("rf", &common, &m, &spec, &q)))
        return rc;
    const hdp_rf_keys *rk = hdp_rf_keys_of(&m);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st;
    cli_rf_sigma_note("rf", &q);

    int threads = cli_mc_threads(&mc);
    hdp_rf_problem pb;
    hdp_rf_sim_result res;
    memset(&res, 0, sizeof res);
    st = hdp_rf_problem_build(&spec, HDP_RF_TEST_MODES, threads, &pb, &err);
    if (st == HDP_OK && q.eta * pb.lambda[0] >= 2.0)
        fprintf(stderr, "hdpsgd rf: warning: eta lambda_max = %g >= 2: gradient descent on these "
                        "features is unstable (docs/theory.md §7: lambda_max = 2 s_max^2 / n)\n",
                q.eta * pb.lambda[0]);
    cli_progress line;
    cli_progress_start(&line, "rf", "runs", 0);
    hdp_rf_sim_options opt = {rk->runs, threads, rk->records, line.tty ? cli_progress_fn : NULL,
                              &line};
    if (st == HDP_OK)
        st = hdp_rf_simulate(&pb, &q, &opt, &res, &err);
    cli_progress_clear(&line);
    if (st != HDP_OK) {
        hdp_rf_sim_result_free(&res);
        hdp_rf_problem_free(&pb);
        hdp_model_free(&m);
        return cli_fail("rf", &err);
    }

    hdp_outset out; /* CSV (standard output by default) and JSON, all or nothing */
    hdp_outset_init(&out, &err);
    FILE *f;
    if ((f = hdp_outset_add(&out, out_path ? out_path : "-")))
        write_csv(f, &m, &pb, &q, &res);
    if ((f = hdp_outset_add(&out, json_path)))
        write_json(f, &m, &pb, &q, &res);
    st = hdp_outset_commit(&out);
    if (st == HDP_OK && out_path) {
        long L = res.points - 1;
        fprintf(stderr, "hdpsgd rf: final test loss DP-GD %.6g +- %.2g, OU %.6g, min-norm %.6g "
                        "(p = %ld, T = %ld, sigma = %.4g, max clipped %.3g; %ld runs, %d threads, "
                        "%.3g s + %.3g s) -> %s\n",
                res.dpgd_test[L], res.dpgd_test_se[L], res.ou_test[L], pb.minnorm_test, spec.k.p,
                q.T, q.sigma, res.max_clipped_fraction, res.runs, res.threads, pb.seconds,
                res.seconds, out_path);
    }
    hdp_rf_sim_result_free(&res);
    hdp_rf_problem_free(&pb);
    hdp_model_free(&m);
    return st == HDP_OK ? 0 : cli_fail("rf", &err);
}
