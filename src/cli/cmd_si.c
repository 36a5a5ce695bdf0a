/*
 * cmd_si.c — `hdpsgd sim-index`: private feature learning for single-index models (the single-index
 * notes, Algorithm 1 with its slips fixed; docs/theory.md §6, §7, §8; the library is hdpsgd/si.h).
 *
 *   hdpsgd sim-index [MODEL.ini] ...               one problem (data + stage 1) and si.runs
 *                                                  stage-2 runs: per-mode Monte Carlo vs the
 *                                                  OU / discrete-GD law (CSV), summary (JSON);
 *   hdpsgd sim-index --experiment eps|n|align ...  risk against epsilon, against n, or the
 *                                                  alignment histogram: CSV and gnuplot figure.
 * Outputs are written after the computation succeeded (atomically).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "plot.h"
#include "cli.h"
#include "hdpsgd/siexp.h"

static const char *json_path, *csv_path, *figure_path, *experiment;
static long runs_opt;
static cli_mc_args mc;

const cli_opt si_opts[] = {
    {"runs", 0, OPT_LONG, &runs_opt, "N", "stage-2 runs (overrides si.runs; >= 2)"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &mc.seed, "S", "seed, unsigned 64-bit (overrides sim.seed)"},
    {"experiment", 0, OPT_STRING, &experiment, "NAME", "eps | n | align (CSV and figure)"},
    {"output", 'o', OPT_OUTPUT, &csv_path, "FILE.csv",
     "CSV (default: standard output; --experiment: si-NAME.csv)"},
    {"figure", 'f', OPT_FIGURE, &figure_path, "FIG",
     "--experiment: the figure, .png, .pdf, .svg, .eps or .tex (default si-NAME.png)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "JSON summary"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help sim-index` (the command table in main.c points here) */
const char si_usage[] = "[MODEL.ini]";
const char si_help[] =
    "The single-index notes' Algorithm 1 (docs/theory.md §6, §7, §8; hdpsgd/si.h) on a two-layer\n"
    "tanh network f(x) = a^T tanh(W^T x + b) and the single-index target y = sigma_*(<x, mu>),\n"
    "sigma_* = he1 He1 + he2 He2 + he3 He3, x ~ N(0, I_d), two disjoint training sets of n\n"
    "samples.\n"
    "Stage 1: one gradient step on W from W_0 (per-sample, per-neuron clipping at C_W), the\n"
    "neurons normalised by max(||w||, R) and noised by sigma_W N(0, I_d): a Gaussian mechanism\n"
    "with sensitivity Delta1 = 2 eta_W C_W sqrt(p)/R, rho_z1 = Delta1^2/(2 sigma_W^2). Stage 2:\n"
    "DP-GD on a over the fixed features with ridge lambda, clipping at C_a and noise\n"
    "sqrt(eta_a) (2 C_a/n) sigma_a N(0, I_p) (stage2 = gd; eta_a lambda_max(K) < 2 is enforced,\n"
    "eta_a = 0 means 1/lambda_max), or the exact OU law at tau = eta_a T (stage2 = ou).\n"
    "Fixed slips of the single-index notes: the clip is g min(1, C_a/||g||) (written inverted),\n"
    "the noise is a vector N(0, I_p) (written N(0, 1)), the gradient uses a_{t-1} (written\n"
    "a_{i-1}), the noise scale is 2 C_a/n (replace-one sensitivity; written C_a/n), eps_B ->\n"
    "eps_n, and the undefined first-layer clip g^C_W is defined. Privacy: stage 2 by\n"
    "docs/theory.md §6 (sigma_a by the single-index notes' formula for the target si.epsilon,\n"
    "else the zCDP route), stage 1 as above, total by zCDP composition, (epsilon, delta) by\n"
    "Canonne-Kamath-Steinke. Scalings: the single-index notes' Assumption 4 with prefactors\n"
    "(hdpsgd keys, section [si]).\n"
    "CSV (one row per eigenmode k of K = (2/n) Phi^T Phi + 2 lambda I): mode,lambda_k,\n"
    "pred_mean,mc_mean,mc_mean_se,z_mean,pred_var,mc_var,mc_var_se,z_var,ou_mean,ou_var,\n"
    "gd_mean,gd_var: the Monte Carlo of the second-layer weights over si.runs runs against\n"
    "the law of the simulated process (gd: unclipped discrete GD; ou: OU at tau).\n"
    "Budget: si.epsilon sets stage 2 alone (stage 1 spends what si.sigma_W gives on top);\n"
    "si.epsilon_total (with si.delta) is one zCDP budget rho_z for both stages, stage 1 taking\n"
    "si.stage1_share of it (sigma_W = Delta1/sqrt(2 share rho_z)) and stage 2 the rest: the\n"
    "reported total epsilon is the target. Give one of the two.\n"
    "--experiment eps: risk against the stage-2 epsilon (0.25 ... 32, inf) on one problem, or\n"
    "against the total epsilon with si.epsilon_total (one problem per target, same data);\n"
    "n: risk and alignment against n = 500 ... 8000; align: histograms of the alignment\n"
    "|<w_j, mu>|/||w_j|| at W_0, after stage 1 with sigma_W = 0 and with the model's sigma_W\n"
    "(p = 512 unless si.p is given). Each writes si-NAME.csv and si-NAME.png (gnuplot) and\n"
    "takes well under a minute at the defaults. Results do not depend on --threads.";

static void meta_of(FILE *f, const char *what, const hdp_model *m, const hdp_si_params *hp,
                    hdp_si_stage2_kind stage2)
{
    fprintf(f, "# ; hdpsgd %s sim-index: %s (the single-index notes, Algorithm 1; docs/theory.md §6, §7, §8)\n",
            hdp_version_string(), what);
    fprintf(f, "# ; stage2 = %s: %s\n", hdp_si_stage2_name(stage2),
            stage2 == HDP_SI_GD
                ? "DP-GD with clipping (prediction: the unclipped discrete-GD Gaussian law)"
                : "the continuous OU process, sampled exactly at tau = eta_a T (no clipping)");
    fprintf(f, "# ; resolved: lambda = %.6g, eta_W = %.6g, eta_a = %.6g, C_a = %.6g, T = %ld, "
               "tau = %.6g, sigma_W = %.6g, C_W = %.6g, R = %.6g, q = %d\n",
            hp->lambda, hp->eta_W, hp->eta_a, hp->C_a, hp->T, hp->tau, hp->sigma_W, hp->C_W,
            hp->R, hp->q);
    fprintf(f, "# ; privacy: stage 1 Gaussian mechanism Delta1 = %.6g, rho_z1 = %.6g, eps1 = %.6g; "
               "stage 2 sigma_a = %.6g (%s), rho_z2 = %.6g, eps2 = %.6g; total rho_z = %.6g, "
               "epsilon = %.6g at delta = %.6g (CKS)\n",
            hp->Delta1, hp->rho_z1, hp->eps1, hp->sigma_a,
            hp->sigma_route_zcdp ? "zCDP route" : "the single-index notes' formula", hp->rho_z2, hp->eps2,
            hp->rho_z, hp->eps_total, hp->delta);
    if (hp->budget_total)
        fprintf(f, "# ; budget: si.epsilon_total = %.10g at delta = %.6g, rho_z = %.10g shared "
                   "stage 1 : stage 2 = %.6g : %.6g (sigma_W and sigma_a from it)\n",
                hp->epsilon_target, hp->delta, hp->rho_z_target,
                hp->rho_z1 / hp->rho_z, hp->rho_z2 / hp->rho_z);
    hdp_model_write_meta_sections(m, f, cli_model_sections("sim-index"));
}

static void write_json(FILE *f, const hdp_model *m, const hdp_si_problem *pb, const hdp_si_result *r,
                       int threads)
{
    const hdp_si_params *hp = &pb->hp;
    const cli_json_source src[] = { /* the tables of its JSON (main.c) and what they read */
        {&hdp_si_stage2_fields, pb, NULL}, {&hdp_si_result_fields, r, NULL},
        {&hdp_si_problem_fields, pb, NULL}, {&hdp_si_eta_fields, pb, NULL},
        {&hdp_si_params_fields, hp, NULL}, {&hdp_si_budget_fields, pb, &threads},
        {&hdp_si_seed_fields, pb, NULL}};
    cli_json_file(f, "sim-index", src, (int)(sizeof src / sizeof *src), m);
}

static void write_modes_csv(FILE *f, const hdp_model *m, const hdp_si_problem *pb,
                            const hdp_si_result *r)
{
    meta_of(f, "stage-2 weights in the eigenbasis of K: Monte Carlo vs prediction", m, &pb->hp,
            pb->spec.k.stage2);
    fprintf(f, "# ; pred_* = law of the simulated process (gd: unclipped discrete GD, ou: OU at tau); "
               "z = |mc - pred| / stderr\n");
    fprintf(f, "# ; test risk %.8g +- %.3g (OU %.8g, GD %.8g, zero predictor %.8g); mean alignment "
               "%.6g (init %.6g)\n",
            r->risk_mean, r->risk_se, pb->ou_risk, pb->gd_risk, pb->zero_risk, pb->align_mean,
            pb->align0_mean);
    hdp_csv_header_line(f, &hdp_si_mode_csv_fields);
    const int gd = pb->spec.k.stage2 == HDP_SI_GD;
    for (long k = 0; k < pb->spec.k.p; k++) {
        double pm = gd ? pb->gd_mean[k] : pb->ou_mean[k], pv = gd ? pb->gd_var[k] : pb->ou_var[k];
        double sem = sqrt(pv / (double)r->runs), sev = pv * sqrt(2.0 / (double)(r->runs - 1));
        const hdp_si_mode_row row = { /* z without noise (standard error 0): empty */
            .mode = k, .lambda_k = pb->l[k], .pred_mean = pm, .mc_mean = r->mc_mean[k],
            .mc_mean_se = sem, .z_mean = sem > 0 ? fabs(r->mc_mean[k] - pm) / sem : NAN,
            .pred_var = pv, .mc_var = r->mc_var[k], .mc_var_se = sev,
            .z_var = sev > 0 ? fabs(r->mc_var[k] - pv) / sev : NAN, .ou_mean = pb->ou_mean[k],
            .ou_var = pb->ou_var[k], .gd_mean = pb->gd_mean[k], .gd_var = pb->gd_var[k]};
        hdp_csv_line(f, &hdp_si_mode_csv_fields, &row, NULL);
    }
}

/* ---- experiments (the driver: hdpsgd/siexp.h) ---- */

static void eps_csv(FILE *f, const hdp_model *m, const hdp_siexp *xp, char *title, size_t size)
{
    const hdp_si_spec *spec = &xp->spec;
    const int total = spec->k.epsilon_total > 0;
    meta_of(f, total ? "test risk against the total epsilon of both stages (si.epsilon_total)"
                     : "test risk against the stage-2 epsilon", m, &xp->meta_hp, spec->k.stage2);
    hdp_csv_header_line(f, &hdp_si_eps_csv_fields);
    for (int i = 0; i < xp->nrows; i++)
        hdp_csv_line(f, &hdp_si_eps_csv_fields, &xp->rows[i], NULL);
    if (total) {
        snprintf(title, size,
                 "sim-index: test risk against the total ε of both stages (d = %ld, p = %ld, "
                 "n = %ld, stage2 = %s, %ld runs)\nstage 1 gets %.2g of the zCDP budget; δ = "
                 "%.2g", spec->k.d, spec->k.p, spec->k.n, hdp_si_stage2_name(spec->k.stage2),
                 spec->k.runs, spec->k.stage1_share, xp->last_hp.delta);
        return;
    }
    snprintf(title, size,
             "sim-index: test risk against stage-2 ε (d = %ld, p = %ld, n = %ld, stage2 = %s, "
             "%ld runs)\nstage 1: ε₁ = %.3g at δ = %.2g (σ_W = %.3g); mean alignment %.3f",
             spec->k.d, spec->k.p, spec->k.n, hdp_si_stage2_name(spec->k.stage2), spec->k.runs,
             xp->last_hp.eps1, xp->last_hp.delta, xp->last_hp.sigma_W, xp->last_align_mean);
}

static void n_csv(FILE *f, const hdp_model *m, const hdp_siexp *xp, char *title, size_t size)
{
    const hdp_si_spec *spec = &xp->spec;
    meta_of(f, "test risk and alignment against n (si.n ignored)", m, &xp->meta_hp, spec->k.stage2);
    hdp_csv_header_line(f, &hdp_si_n_csv_fields);
    for (int i = 0; i < xp->nrows; i++)
        hdp_csv_line(f, &hdp_si_n_csv_fields, &xp->rows[i], NULL);
    snprintf(title, size,
             "sim-index: test risk and alignment against n (d = %ld, p = %ld, stage-2 ε target "
             "%g, stage2 = %s, %ld runs)",
             spec->k.d, spec->k.p, spec->k.epsilon, hdp_si_stage2_name(spec->k.stage2),
             spec->k.runs);
}

static void align_csv(FILE *f, const hdp_model *m, const hdp_siexp *xp, char *title, size_t size)
{
    const hdp_si_spec *spec = &xp->spec;
    const double *means = xp->means;
    enum { NB = HDP_SIEXP_BINS };
    meta_of(f, "histogram of the neuron alignments |<w_j, mu>|/||w_j||", m, &xp->meta_hp,
            spec->k.stage2);
    fprintf(f, "# ; means: init %.6g, stage 1 with sigma_W = 0 %.6g, stage 1 with "
               "sigma_W = %.6g %.6g; random directions sqrt(2/(pi d)) = %.6g\n",
            means[0], means[1], xp->meta_hp.sigma_W, means[2],
            sqrt(2.0 / (M_PI * (double)spec->k.d)));
    hdp_csv_header_line(f, &hdp_si_align_csv_fields);
    for (int k = 0; k < NB; k++) {
        const hdp_siexp_bin bin = {(double)k / NB, (double)(k + 1) / NB, (k + 0.5) / NB,
                                   xp->hist[0][k], xp->hist[1][k], xp->hist[2][k]};
        hdp_csv_line(f, &hdp_si_align_csv_fields, &bin, NULL);
    }
    snprintf(title, size,
             "sim-index: alignment |⟨w_j, μ⟩|/‖w_j‖ of the p = %ld neurons (d = %ld, n = %ld)\n"
             "means: init %.3f, stage 1 σ_W = 0 %.3f, stage 1 σ_W = %.3g (ε₁ = %.3g) %.3f",
             spec->k.p, spec->k.d, spec->k.n, means[0], means[1], xp->meta_hp.sigma_W,
             xp->meta_hp.eps1, means[2]);
}

static int run_experiment(const char *name, const hdp_model *m, int threads)
{
    hdp_error err;
    hdp_error_clear(&err);
    char csv_default[64], fig_default[64];
    snprintf(csv_default, sizeof csv_default, "si-%s.csv", name);
    snprintf(fig_default, sizeof fig_default, "si-%s.png", name);
    const char *csvp = csv_path ? csv_path : csv_default;
    const char *figp = figure_path ? figure_path : fig_default;
    hdp_siexp_kind kind = !strcmp(name, "eps") ? HDP_SIEXP_EPS
                          : !strcmp(name, "n") ? HDP_SIEXP_N
                                               : HDP_SIEXP_ALIGN;
    int rc0 = cli_need_gnuplot("sim-index", figp);
    if (rc0)
        return rc0;
    static hdp_siexp xp;
    hdp_status st = hdp_siexp_run(m, kind, threads, &xp, &err);
    if (st != HDP_OK)
        return cli_fail("sim-index", &err);
    char title[512] = "";
    hdp_outset out;
    hdp_outset_init(&out, &err);
    FILE *f = hdp_outset_add(&out, csvp);
    if (f) {
        if (kind == HDP_SIEXP_EPS)
            eps_csv(f, m, &xp, title, sizeof title);
        else if (kind == HDP_SIEXP_N)
            n_csv(f, m, &xp, title, sizeof title);
        else
            align_csv(f, m, &xp, title, sizeof title);
        char script[32];
        snprintf(script, sizeof script, "si-%s", name);
        hdp_plot_vars v;
        hdp_plot_vars_init(&v);
        cli_plot_source(&out, &v, "data_file", csvp);
        hdp_plot_var_str(&v, "title_text", title);
        hdp_plot_var_num(&v, "nonpriv", isfinite(xp.nonpriv) ? xp.nonpriv : -1.0);
        cli_draw(&out, script, figp, &v);
    }
    st = hdp_outset_commit(&out);
    if (st != HDP_OK)
        return cli_fail("sim-index", &err);
    fprintf(stderr, "hdpsgd sim-index: wrote %s and %s\n", csvp, figp);
    return 0;
}

int cmd_si(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("sim-index");
    cli_common common;
    json_path = csv_path = figure_path = experiment = NULL;
    runs_opt = CLI_NOT_GIVEN;
    cli_mc_args_reset(&mc);
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if (experiment && strcmp(experiment, "eps") && strcmp(experiment, "n") &&
        strcmp(experiment, "align"))
        return cli_bad("sim-index", "--experiment %s: expected eps, n or align", experiment);
    if (!experiment && figure_path)
        return cli_bad("sim-index", "--figure needs --experiment");
    if (experiment && json_path)
        return cli_bad("sim-index", "--json is for the single run, not --experiment");
    if (runs_opt != CLI_NOT_GIVEN &&
        (rc = cli_add_with_long("sim-index", &common, "--runs", "si.runs", runs_opt)))
        return rc;
    if ((rc = cli_mc_args_apply("sim-index", &mc, &common)))
        return rc;
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    int threads = cli_mc_threads(&mc);
    if (experiment) {
        rc = run_experiment(experiment, &m, threads);
        hdp_model_free(&m);
        return rc;
    }
    hdp_error err;
    hdp_error_clear(&err);
    hdp_si_spec spec;
    hdp_si_spec_from_model(&m, &spec);
    hdp_si_problem pb;
    hdp_si_result r;
    memset(&r, 0, sizeof r);
    hdp_status st = hdp_si_problem_build(&spec, &m, &pb, &err);
    if (st == HDP_OK)
        st = hdp_si_stage2(&pb, hdp_si_keys_of(&m)->runs, threads, &r, &err);
    if (st == HDP_OK) { /* the CSV (default: standard output) and the JSON, all or nothing */
        hdp_outset out;
        hdp_outset_init(&out, &err);
        FILE *f = hdp_outset_add(&out, csv_path ? csv_path : "-");
        if (f)
            write_modes_csv(f, &m, &pb, &r);
        if ((f = hdp_outset_add(&out, json_path)))
            write_json(f, &m, &pb, &r, threads);
        st = hdp_outset_commit(&out);
    }
    if (st == HDP_OK) {
        const hdp_si_params *hp = &pb.hp;
        fprintf(stderr,
                "hdpsgd sim-index: stage2 = %s; test risk %.6g +- %.2g (OU %.6g, GD %.6g, zero "
                "%.6g); alignment %.4f (init %.4f); clipped %.3g; epsilon total %.4g (stage 1 "
                "%.4g, stage 2 %.4g) at delta %.3g; max z mean %.2f var %.2f\n",
                hdp_si_stage2_name(spec.k.stage2), r.risk_mean, r.risk_se, pb.ou_risk, pb.gd_risk,
                pb.zero_risk, pb.align_mean, pb.align0_mean, r.clipped, hp->eps_total, hp->eps1,
                hp->eps2, hp->delta, r.max_z_mean, r.max_z_var);
        if (hp->budget_total)
            fprintf(stderr,
                    "hdpsgd sim-index: budget si.epsilon_total = %.10g: rho_z = %.6g split stage 1 "
                    "%.6g (%.3g of it, sigma_W = %.4g), stage 2 %.6g (sigma_a = %.4g); reported "
                    "total epsilon %.10g\n",
                    hp->epsilon_target, hp->rho_z_target, hp->rho_z1, hp->rho_z1 / hp->rho_z,
                    hp->sigma_W, hp->rho_z2, hp->sigma_a, hp->eps_total);
    }
    hdp_si_result_free(&r);
    hdp_si_problem_free(&pb);
    hdp_model_free(&m);
    return st == HDP_OK ? 0 : cli_fail("sim-index", &err);
}
