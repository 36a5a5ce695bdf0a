/*
 * cmd_privacy.c — `hdpsgd privacy`: the privacy level of a model (docs/theory.md §6):
 * rho, rho_z = rho^2/2, epsilon at delta by Bun-Steinke and Canonne-Kamath-Steinke, the
 * amplification-by-iteration accountant on the model's discrete schedule, calibration of
 * rho for a target (epsilon, delta), and full-batch DP-GD (--dpgd, Mondelli's notes and
 * Bombari-Mondelli).
 * All formulas live in the library (hdpsgd/privacy.h); this file parses and prints.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/output.h"
#include "cli.h"
#include "hdpsgd/finite.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"

static const char *json_path;
static cli_strings delta_opt; /* --delta D[,D...], repeatable */
static double deltas[CLI_MAX_STRINGS];
static int ndeltas;
static double epsilon_opt, eta_opt, sigma_opt;
static long steps_opt;
static int dpgd;

/* accountant arrays above this many steps are not built (2 doubles per step) */
#define ACCOUNTANT_MAX_N 100000000L

const cli_opt privacy_opts[] = {
    {"delta", 0, OPT_STRINGS, &delta_opt, "D[,D...]",
     "also report epsilon at these deltas in (0, 1), after the model's privacy.delta "
     "(repeatable; --dpgd: the one delta to use)"},
    {"epsilon", 0, OPT_DOUBLE, &epsilon_opt, "E",
     "target epsilon > 0: calibrate rho (or, with --dpgd, sigma) to meet (E, D)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    {"dpgd", 0, OPT_FLAG, &dpgd, NULL, "full-batch DP-GD instead of the model (needs --eta, --steps)"},
    {"eta", 0, OPT_DOUBLE, &eta_opt, "ETA", "--dpgd: step size eta > 0"},
    {"steps", 0, OPT_LONG, &steps_opt, "T", "--dpgd: number of steps T >= 1"},
    {"sigma", 0, OPT_DOUBLE, &sigma_opt, "S", "--dpgd: noise multiplier sigma > 0 (or give --epsilon)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help privacy` (the command table in main.c points here) */
const char privacy_usage[] = "[MODEL.ini]";
const char privacy_help[] =
    "Privacy accounting of docs/theory.md §6. For the model: rho (the output is\n"
    "(rho^2/2)-zCDP), rho_z = rho^2/2, and epsilon at the model's delta (privacy.delta,\n"
    "default 1e-5; a warning when delta >= 1/n), then at each --delta D, by\n"
    "Canonne-Kamath-Steinke (the one to use) and Bun-Steinke (looser); the\n"
    "amplification-by-iteration accountant on the model's discrete schedule (any kind,\n"
    "table included), which must give rho back (exit status 1 if not). With --epsilon E:\n"
    "the rho that meets (E, delta) exactly, printed as --set privacy.rho=... (17 digits).\n"
    "--dpgd: full-batch DP-GD of Mondelli's notes and Bombari-Mondelli with step size --eta and\n"
    "--steps T; with --sigma S: rho_z = eta T/(2 S^2), epsilon by both conversions and by\n"
    "Bombari-Mondelli's formula sqrt(eta T) sqrt(8 ln(1/delta))/S (valid for epsilon in (0, 8\n"
    "ln(1/delta))); with --epsilon E: Bombari-Mondelli's sigma and the smaller sigma of the zCDP\n"
    "route, sqrt(eta T/(2 rho_z)) with rho_z from the CKS calibration. In the JSON the model's\n"
    "numbers are at its delta, at_delta holds one object per --delta, --dpgd's delta is the one\n"
    "--delta, else privacy.delta, and non-finite numbers are null.\n"
    "The accountant's precondition (docs/theory.md §6.1): every step must be non-expansive,\n"
    "eta_k ||x_k||^2 <= 2, which Gaussian rows break with a small probability; printed with a\n"
    "warning when the expected number of violating steps per run is above delta, and in the\n"
    "JSON (the table nonexpansive: the probability of a violation is exact chi-square for\n"
    "equal eigenvalues, else a saddlepoint approximation).";

static int bad(const char *fmt, double v)
{
    fprintf(stderr, "hdpsgd privacy: error: ");
    fprintf(stderr, fmt, v);
    fprintf(stderr, "\n");
    return EXIT_BAD_INPUT;
}

/* Check the options that do not need the model. */
static int check_options(void)
{
    ndeltas = 0;
    for (int i = 0; i < delta_opt.n; i++) {
        const char *s = delta_opt.v[i];
        for (;;) {
            char *end;
            errno = 0;
            double v = strtod(s, &end);
            if (end == s || (*end && *end != ',') || errno || !(v > 0 && v < 1)) {
                fprintf(stderr, "hdpsgd privacy: error: --delta %s: expected numbers in (0, 1), "
                                "separated by commas\n", delta_opt.v[i]);
                return EXIT_BAD_INPUT;
            }
            if (ndeltas == CLI_MAX_STRINGS)
                return bad("--delta: at most %g values", (double)CLI_MAX_STRINGS);
            deltas[ndeltas++] = v;
            if (!*end)
                break;
            s = end + 1;
        }
    }
    if (dpgd && ndeltas > 1)
        return bad("--dpgd takes one --delta, not %g", (double)ndeltas);
    if (!isnan(epsilon_opt) && !(epsilon_opt > 0))
        return bad("--epsilon %g: epsilon must be > 0", epsilon_opt);
    if (!dpgd) {
        if (!isnan(eta_opt) || steps_opt != CLI_NOT_GIVEN || !isnan(sigma_opt)) {
            fprintf(stderr, "hdpsgd privacy: error: --eta, --steps and --sigma describe full-batch "
                            "DP-GD: add --dpgd\n");
            return EXIT_BAD_INPUT;
        }
        return 0;
    }
    if (isnan(eta_opt) || steps_opt == CLI_NOT_GIVEN) {
        fprintf(stderr, "hdpsgd privacy: error: --dpgd needs the step size --eta and the number of "
                        "steps --steps\n");
        return EXIT_BAD_INPUT;
    }
    if (!(eta_opt > 0))
        return bad("--eta %g: the step size must be > 0", eta_opt);
    if (steps_opt < 1)
        return bad("--steps %g: the number of steps must be an integer >= 1", (double)steps_opt);
    if (isnan(sigma_opt) == isnan(epsilon_opt)) {
        fprintf(stderr, "hdpsgd privacy: error: --dpgd needs exactly one of --sigma S (report the "
                        "privacy of noise S) or --epsilon E (find the noise for E)\n");
        return EXIT_BAD_INPUT;
    }
    if (!isnan(sigma_opt) && !(sigma_opt > 0))
        return bad("--sigma %g: the noise multiplier must be > 0", sigma_opt);
    return 0;
}

/* ---- full-batch DP-GD (docs/theory.md §6) ---- */

static int run_dpgd(const hdp_model *m, double delta, hdp_outfile *js, hdp_error *err)
{
    double eta = eta_opt, bound = 8.0 * log(1.0 / delta);
    long T = steps_opt;
    double sigma, rho_z, eps_bs, eps_cks, eps003 = NAN, sigma003 = NAN, sigma_z = NAN;
    int applies;
    printf("full-batch DP-GD (docs/theory.md §6; Mondelli's notes and Bombari-Mondelli): eta = %g, T = %ld steps, eta T = %g\n",
           eta, T, eta * (double)T);
    printf("  each step theta <- theta - eta (1/n) sum clip(g_i) + sqrt(eta) (2 C_clip/n) sigma N(0, I)"
           " is (eta/(2 sigma^2))-zCDP\n");
    printf("  delta = %.6g%s\n", delta, ndeltas ? " (--delta)" : " (privacy.delta)");
    if (!isnan(sigma_opt)) {
        sigma = sigma_opt;
        rho_z = hdp_dpgd_rho_z(eta, T, sigma);
        eps_bs = hdp_zcdp_epsilon_bs(rho_z, delta);
        eps_cks = hdp_zcdp_epsilon_cks(rho_z, delta);
        eps003 = hdp_dpgd_epsilon_simple(eta, T, sigma, delta);
        applies = hdp_dpgd_simple_applies(eps003, delta);
        printf("  sigma = %g: rho_z = eta T / (2 sigma^2) = %.6g\n", sigma, rho_z);
        printf("  epsilon = %.6g (Canonne-Kamath-Steinke: use this one)\n", eps_cks);
        printf("  epsilon = %.6g (Bun-Steinke, looser)\n", eps_bs);
        printf("  epsilon = %.6g (Bombari-Mondelli: sqrt(eta T) sqrt(8 ln(1/delta)) / sigma)", eps003);
        if (applies)
            printf("\n");
        else
            printf(" -- outside (0, 8 ln(1/delta)) = (0, %.4g): Bombari-Mondelli's bound does not apply\n",
                   bound);
    } else {
        double eps = epsilon_opt;
        hdp_status st = hdp_dpgd_sigma_zcdp(eta, T, eps, delta, &sigma_z, &rho_z, err);
        if (st != HDP_OK)
            return cli_fail("privacy", err);
        sigma = sigma_z;
        eps_cks = hdp_zcdp_epsilon_cks(rho_z, delta);
        eps_bs = hdp_zcdp_epsilon_bs(rho_z, delta);
        sigma003 = hdp_dpgd_sigma_simple(eta, T, eps, delta);
        applies = hdp_dpgd_simple_applies(eps, delta);
        printf("  target epsilon = %g\n", eps);
        printf("  Bombari-Mondelli: sigma = sqrt(eta T) sqrt(8 ln(1/delta)) / epsilon = %.6g", sigma003);
        if (applies)
            printf("\n");
        else
            printf(" -- epsilon outside (0, 8 ln(1/delta)) = (0, %.4g): Bombari-Mondelli's bound does not "
                   "apply\n",
                   bound);
        printf("  zCDP route: rho_z = %.6g meets (epsilon, delta) by Canonne-Kamath-Steinke, so\n"
               "    sigma = sqrt(eta T / (2 rho_z)) = %.6g (%.3g x Bombari-Mondelli's; Bun-Steinke at this "
               "rho_z: epsilon = %.4g)\n",
               rho_z, sigma_z, sigma_z / sigma003, eps_bs);
    }
    if (js->open) {
        int given = !isnan(sigma_opt);
        hdp_dpgd_privacy dp = {eta, T, sigma, rho_z, delta, eps_bs, eps_cks,
                               given ? eps003 : NAN, given ? NAN : epsilon_opt,
                               given ? NAN : sigma003, given ? NAN : sigma_z, applies, bound};
        const cli_json_source src[] = {{&hdp_dpgd_privacy_fields, &dp, NULL}}; /* alone */
        cli_json_file(js->f, "privacy", src, 1, m);
    }
    (void)m;
    return 0;
}

/* ---- the model (docs/theory.md §6) ---- */

/* The accountant's precondition (docs/theory.md §6.1): every step non-expansive,
 * eta_k ||x_k||^2 <= 2, for the model's Gaussian rows (after clip.feature_norm). */
static int precondition(const hdp_model *m, double delta, hdp_nonexpansive *ne, hdp_error *err)
{
    hdp_spectrum spec;
    hdp_status st = hdp_spectrum_build(m, &spec, err);
    if (st == HDP_OK)
        st = hdp_nonexpansive_eval(m, spec.lambda, spec.d, ne, err);
    hdp_spectrum_free(&spec);
    if (st != HDP_OK)
        return cli_fail("privacy", err);
    printf("  precondition (docs/theory.md §6.1): amplification by iteration needs every step to be\n"
           "    non-expansive, eta_k ||x_k||^2 <= 2; at the largest step eta_max = %.6g that is\n"
           "    ||x||^2 <= %.6g (E ||x||^2 = Tr Sigma = d = %ld)\n",
           ne->eta_max, ne->threshold, m->d);
    if (ne->feature_norm > 0)
        printf("    clip.feature_norm = %.6g%s: rows are clipped to ||x|| <= B, B^2 = %.6g\n",
               ne->feature_norm, m->feature_norm == HDP_AUTO_DOUBLE ? " (auto)" : "",
               ne->feature_norm * ne->feature_norm);
    if (ne->p_step > 0)
        printf("    P(a step violates it) = %.3g at eta_max (10^%.1f; Gaussian rows of the model's "
               "spectrum)\n",
               ne->p_step, ne->log10_p_step);
    else if (isfinite(ne->log10_p_step))
        printf("    P(a step violates it) = 10^%.1f at eta_max (below the smallest double; Gaussian "
               "rows of the model's spectrum)\n",
               ne->log10_p_step);
    else
        printf("    P(a step violates it) = 0: clip.feature_norm enforces it\n");
    if (ne->exact || ne->expected == 0)
        printf("    expected violating steps per run of n = %ld: %.3g\n", m->n, ne->expected);
    else
        printf("    expected violating steps per run of n = %ld: between %.3g and %.3g (bounded over "
               "%ld blocks of steps)\n",
               m->n, ne->expected_lower, ne->expected, ne->blocks);
    if (ne->feature_norm > 0)
        printf("    feature clipping changes a fraction %.3g of the rows and removes %.3g of the\n"
               "    second moment Tr E[x x^T]; the risk ODE does not model it (its deviation is of "
               "that order)\n",
               ne->clip_fraction, ne->clip_moment);
    if (ne->expected > delta && isinf(m->rho))
        printf("  note: %.3g violating steps are expected per run (above delta = %.3g), but rho = inf "
               "claims no privacy anyway\n",
               ne->expected, delta);
    else if (ne->expected > delta)
        printf("  WARNING: the expected number of violating steps, %.3g per run, is not negligible "
               "(above delta = %.3g):\n"
               "    the zCDP guarantee above is proven only for data whose rows satisfy the "
               "precondition;\n"
               "    set clip.feature_norm = auto to enforce it (docs/theory.md §6.1)\n",
               ne->expected, delta);
    return 0;
}

static int run_model(const hdp_model *m, double delta, hdp_outfile *js, hdp_error *err)
{
    double rho = m->rho, rho_z = 0.5 * rho * rho;
    double eps_bs = hdp_zcdp_epsilon_bs(rho_z, delta), eps_cks = hdp_zcdp_epsilon_cks(rho_z, delta);
    printf("model: %s (%s schedule, n = %ld steps)\n", m->source, hdp_sched_name(m->sched), m->n);
    if (isinf(rho)) {
        printf("  rho = inf: no private noise, no privacy guarantee (epsilon = inf)\n");
    } else {
        printf("  rho = %.17g: the output theta_n is (rho_z = rho^2/2 = %.6g)-zCDP\n", rho, rho_z);
        printf("  at delta = %.6g (privacy.delta):\n", delta);
        printf("    epsilon = %.6g   Canonne-Kamath-Steinke (tighter: the one to use)\n", eps_cks);
        printf("    epsilon = %.6g   Bun-Steinke, rho_z + 2 sqrt(rho_z ln(1/delta))\n", eps_bs);
        for (int i = 0; i < ndeltas; i++)
            printf("  at delta = %.6g (--delta): epsilon = %.6g (Canonne-Kamath-Steinke), %.6g "
                   "(Bun-Steinke)\n",
                   deltas[i], hdp_zcdp_epsilon_cks(rho_z, deltas[i]),
                   hdp_zcdp_epsilon_bs(rho_z, deltas[i]));
    }
    cli_warn_delta("privacy", m);
    if (m->sampling != HDP_SAMPLING_ONE_PASS) { /* standard DP-SGD (docs/theory.md §6.6) */
        hdp_finite_privacy fp;
        if (hdp_finite_privacy_of(m, &fp, err) != HDP_OK)
            return cli_fail("privacy", err);
        fprintf(stderr,
                "hdpsgd privacy: note: sgd.sampling = %s: the lines below are one-pass DP-SGD's "
                "(amplification by iteration); this model runs standard DP-SGD: q = %.6g, %lld "
                "steps, noise multiplier %.6g%s, epsilon = %.6g at delta = %g by %s (%s; "
                "docs/theory.md §6.6)\n",
                hdp_sampling_name(m->sampling), fp.sample_rate, fp.steps, fp.noise_multiplier,
                fp.calibrated ? " (calibrated to the budget)" : "", fp.epsilon, fp.delta,
                hdp_accountant_name(fp.accountant),
                fp.poisson ? "add/remove" : "replace-one, E compositions, no amplification");
    }
    double acc = NAN;
    int acc_ok = 0;
    if (m->n <= ACCOUNTANT_MAX_N) {
        hdp_schedule s;
        hdp_sched_from_model(m, &s);
        acc = hdp_privacy_accountant_batches(&s, m->n, m->batch);
        if (m->batch > 1) { /* batched one pass: at most rho (docs/theory.md §6.1, batches) */
            acc_ok = (isinf(rho) && isinf(acc)) || acc <= rho * (1 + 1e-9);
            printf("  accountant (amplification by iteration on the %ld batched steps of %ld "
                   "rows): rho_acc = %.17g -- %s\n",
                   hdp_sched_batch_count(m->n, m->batch), m->batch, acc,
                   acc_ok ? "at most rho" : "ABOVE rho (docs/theory.md §6.1: it cannot be)");
        } else {
            acc_ok = (isinf(rho) && isinf(acc)) || fabs(acc - rho) <= 1e-9 * rho;
            printf("  accountant (amplification by iteration on the %ld discrete steps): rho_acc = "
                   "%.17g -- %s\n",
                   m->n, acc,
                   acc_ok ? "equals rho"
                          : "DIFFERS from rho (the discrete schedule of docs/theory.md §1 should give rho exactly)");
        }
    } else {
        printf("  accountant skipped: n = %ld steps is above %ld\n", m->n, ACCOUNTANT_MAX_N);
        acc_ok = 1;
    }
    hdp_nonexpansive ne;
    int rc = precondition(m, delta, &ne, err);
    if (rc)
        return rc;
    double rz_t = NAN, rho_t = NAN, rho_at[CLI_MAX_STRINGS];
    if (!isnan(epsilon_opt)) {
        for (int i = -1; i < ndeltas; i++) { /* the model's delta, then each --delta */
            double di = i < 0 ? delta : deltas[i], rz;
            hdp_status st = hdp_zcdp_from_epsilon(epsilon_opt, di, &rz, err);
            if (st != HDP_OK)
                return cli_fail("privacy", err);
            double r = sqrt(2.0 * rz);
            printf("calibration: (epsilon, delta) = (%g, %.6g) is met exactly (Canonne-Kamath-Steinke) by\n"
                   "  rho_z = %.17g, rho = sqrt(2 rho_z) = %.17g\n"
                   "  use it with:  --set privacy.rho=%.17g\n",
                   epsilon_opt, di, rz, r, r);
            if (i < 0)
                rz_t = rz, rho_t = r;
            else
                rho_at[i] = r;
        }
    }
    if (js->open) {
        hdp_privacy_summary ps = {rho, rho_z, delta, eps_bs, eps_cks, acc, acc_ok, m->n, ""};
        snprintf(ps.schedule, sizeof ps.schedule, "%s", hdp_sched_name(m->sched));
        hdp_privacy_target tg = {epsilon_opt, rho_t, rz_t};
        hdp_privacy_at_delta at[CLI_MAX_STRINGS];
        for (int i = 0; i < ndeltas; i++)
            at[i] = (hdp_privacy_at_delta){deltas[i], hdp_zcdp_epsilon_cks(rho_z, deltas[i]),
                                           hdp_zcdp_epsilon_bs(rho_z, deltas[i]),
                                           isnan(epsilon_opt) ? NAN : rho_at[i]};
        const hdp_privacy_deltas dl = {ndeltas, at};
        const cli_json_source src[] = { /* the tables of its JSON (main.c; not dpgd_privacy) */
            {&hdp_privacy_fields, &ps, NULL}, {&hdp_nonexpansive_fields, &ne, &delta},
            {&hdp_privacy_target_fields, &tg, NULL}, {&hdp_privacy_deltas_fields, &dl, NULL},
            {&hdp_source_fields, m, NULL}};
        cli_json_file(js->f, "privacy", src, (int)(sizeof src / sizeof *src), m);
    }
    return acc_ok ? 0 : EXIT_FAIL_VALIDATION;
}

int cmd_privacy(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("privacy");
    cli_common common;
    json_path = NULL;
    delta_opt.n = ndeltas = 0;
    epsilon_opt = eta_opt = sigma_opt = NAN;
    steps_opt = CLI_NOT_GIVEN;
    dpgd = 0;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if ((rc = check_options()))
        return rc;
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    double delta = dpgd && ndeltas ? deltas[0] : m.delta;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_outfile js = {0};
    if (json_path && hdp_out_open(&js, json_path, &err) != HDP_OK) {
        hdp_model_free(&m);
        return cli_fail("privacy", &err);
    }
    rc = dpgd ? run_dpgd(&m, delta, &js, &err) : run_model(&m, delta, &js, &err);
    if ((rc == 0 || rc == EXIT_FAIL_VALIDATION) && js.open && hdp_out_commit(&js, &err) != HDP_OK)
        rc = cli_fail("privacy", &err);
    hdp_out_abort(&js);
    hdp_model_free(&m);
    return rc;
}
