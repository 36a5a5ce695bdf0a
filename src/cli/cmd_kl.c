/*
 * cmd_kl.c — `hdpsgd kl bound|init|run`: KL privacy of Langevin diffusion / noisy GD on
 * overparameterised ReLU networks (seed 001; THEORY.md section 8; hdpsgd/kl.h).
 *
 *   bound  closed forms: beta_l, B (eq. 7 and Table 1), the KL bound of Corollary 4.2 with the
 *          seed's constant c = 2 and the settled c = 4, Pinsker's delta, Corollary 6.4's sigma^2
 *          and T for a KL budget; a table and figure of B and the bound against depth and width.
 *   init   Monte Carlo of E||df/dW||^2 at initialisation against Lemma C.3 (exact for every
 *          width), for the four schemes; exit status 1 when some |z| > validate.z_tol.
 *   run    noisy GD on the linearised network: the KL of all iterates (worst remove-one
 *          neighbour) by Monte Carlo, and for the squared loss exactly (OU moments) together
 *          with the exact KL of the last iterate's law; against epochs (seed 001 Fig. 1),
 *          depth (Fig. 2a, 2b) or width (Fig. 2c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/output.h"
#include "io/plot.h"
#include "cli.h"
#include "hdpsgd/klsweep.h"

#define MAX_LIST 64

static const char *out_path, *json_path, *figure_path, *vs_opt, *schemes_opt, *depths_opt,
    *widths_opt, *seed_opt;
static long runs_opt, threads_opt;

const cli_opt kl_opts[] = {
    {"output", 'o', OPT_OUTPUT, &out_path, "FILE.csv", "write the table / curves as CSV"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    {"figure", 'f', OPT_FIGURE, &figure_path, "FIG",
     "bound, run: draw the figure (.png/.pdf/.svg); its data go to FIG-without-extension.csv"},
    {"vs", 0, OPT_STRING, &vs_opt, "AXIS", "run: epochs (default, Fig. 1) | depth (Fig. 2a/b) | width (Fig. 2c)"},
    {"schemes", 0, OPT_STRING, &schemes_opt, "LIST",
     "initialisations, e.g. he,lecun or all (default: bound/init all, run kl.init; "
     "run --vs depth/width: all)"},
    {"depths", 0, OPT_STRING, &depths_opt, "LIST",
     "depths L, e.g. 2,4,8 or 2:12 or 2:12:2 (bound: 2:16; init: kl.depth; run --vs depth: 2:12)"},
    {"widths", 0, OPT_STRING, &widths_opt, "LIST",
     "widths m (bound, run --vs width: 16,32,64,128,256,512,1024)"},
    {"runs", 0, OPT_LONG, &runs_opt, "N", "init: networks (kl.init_runs); run: noise paths per "
                                         "initialisation (kl.runs)"},
    {"threads", 0, OPT_LONG, &threads_opt, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &seed_opt, "S", "base seed, unsigned 64-bit (overrides sim.seed)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help kl` (the command table in main.c points here) */
const char kl_usage[] =
    "kl bound|init|run [MODEL.ini] [--set k=v]... [--vs epochs|depth|width] [--schemes LIST]\n"
    "       [--depths LIST] [--widths LIST] [--runs N] [--threads T] [--seed S] [-o FILE.csv]\n"
    "       [--figure FIG] [--json FILE.json]";
const char kl_help[] =
    "Langevin diffusion / noisy GD W <- W - eta grad L + sqrt(2 eta sigma^2) N(0, I) on fully\n"
    "connected ReLU networks of depth L and width m initialised by LeCun, He, NTK or Xavier\n"
    "(seed 001 Table 1; THEORY.md 8; model keys [kl], see hdpsgd keys). The KL privacy of all\n"
    "iterates is sum_k eta E||grad L(W_k; D) - grad L(W_k; D')||^2 / (c sigma^2) with c = 4: the\n"
    "seed writes c = 2, but for the squared loss the joint law of the iterates is Gaussian and\n"
    "its exact KL equals the c = 4 sum to rounding (tests/test_kl.c), the exact KL of the last\n"
    "iterate equals it after one step. Seed 001's formula (eq. 6, 74) and bounds are thus twice\n"
    "the true KL: still upper bounds, a factor 2 loose (its step 77 takes the variance of a\n"
    "step to be sigma^2 instead of 2 eta sigma^2).\n"
    "  bound  beta_l per layer, B (eq. 7, product formula and Table 1), the KL bound of\n"
    "         Corollary 4.2 (c = 4: B T/(n^2 sigma^2); seed: 2 B T/(n^2 sigma^2)), T = eta epochs,\n"
    "         Pinsker's (0, delta), delta = min(1, sqrt(KL/2)), Corollary 6.4's sigma^2 for the KL\n"
    "         budget kl.budget and its T*, sigma*^2 (R of Lemma 6.3 without log factors), a\n"
    "         target kl.delta; table of B against --depths and --widths. CSV: axis,depth,width,\n"
    "         B_<s>,Btable_<s>,kl_<s>,klseed_<s> for s = lecun, he, ntk, xavier; --figure draws B\n"
    "         (left axis) and the bound (right axis) against depth and width.\n"
    "  init   Monte Carlo of E||df(x)/dW||_F^2 at initialisation (kl.init_runs networks, x on the\n"
    "         sphere of radius sqrt(d)) against Lemma C.3 (exact at every width); exit status 1\n"
    "         when some |z| > validate.z_tol. CSV: init,depth,width,layer,mc_mean,mc_stderr,\n"
    "         lemma_c3,z (layer 0 = the sum).\n"
    "  run    noisy GD on the linearised network f(W_0) + J (W - W_0) (eq. 3) for synthetic data\n"
    "         (x uniform on the sphere of radius sqrt(d), labels sign(u^T x) of a random teacher),\n"
    "         kl.inits initialisations x kl.runs noise paths, squared or logistic loss. The\n"
    "         Jacobian Gram K = J J^T is formed once per initialisation; gradients live in its row\n"
    "         space, so the simulation runs there exactly. Neighbours D' = D without one sample; the\n"
    "         KL is the worst sample's. For the squared loss (an OU process) also the exact KL from\n"
    "         the OU mean and covariance and the exact KL of the last iterate's Gaussian law.\n"
    "         --vs epochs (Fig. 1; default scheme kl.init): CSV epoch,T,<s>_kl,<s>_kl_se,<s>_kl_sd\n"
    "         (spread over initialisations),<s>_kl_max (max over samples of the MC means),\n"
    "         <s>_kl_exact,<s>_kl_final (last iterate),<s>_loss,<s>_bound,<s>_bound_seed.\n"
    "         --vs depth (Fig. 2a, 2b; --depths, default 2:12) or --vs width (Fig. 2c; --widths):\n"
    "         all schemes, KL after round(0.4 epochs) and after epochs; CSV depth|width,\n"
    "         <s>_kl_early(_se),<s>_kl(_se),<s>_exact_early,<s>_exact,<s>_bound_early,<s>_bound,\n"
    "         <s>_B,<s>_grad2. With the squared loss, eta lambda_max(K)/n >= 2 diverges: exit 4\n"
    "         (--vs epochs) or the point is left out with a warning (sweeps).\n"
    "JSON keys: bound: B, B_table, kl_bound, kl_bound_seed, pinsker_delta, sigma2_for_budget,\n"
    "T_opt, sigma2_opt, risk_opt (and *_seed), R_lemma63, beta_<l>; init: <s>_L<L>_mc, _stderr,\n"
    "_lemma_c3, _z, pass; run --vs epochs: <s>_kl, _kl_stderr, _kl_exact, _kl_last_iterate,\n"
    "_kl_seed_constant, _z_exact, _bound, _bound_seed, _pinsker_delta, _B, _grad2, _worst_sample,\n"
    "_eta_lambda_max, _R_lazy, c, epochs, T. Results do not depend on --threads. On 2 cores the\n"
    "defaults take about 20 s for each of run --vs depth and --vs width, 15 s for init, 1 s for\n"
    "run --schemes all (the seed's three figures and the check of Lemma C.3 in about a minute).";

/* ---- small helpers ---- */

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "hdpsgd kl: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return EXIT_BAD_INPUT;
}

/* "a,b,c" or "lo:hi" or "lo:hi:step" of integers in [lo_ok, hi_ok] */
static int parse_int_list(const char *opt, const char *text, long lo_ok, long hi_ok, long *out,
                          int *count)
{
    *count = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    long a, b, step = 1;
    char tail;
    if (strchr(buf, ':')) {
        int k = sscanf(buf, "%ld:%ld:%ld%c", &a, &b, &step, &tail);
        if (k == 2 || k == 3) {
            if (k == 2)
                step = 1;
            if (step < 1 || b < a || (b - a) / step + 1 > MAX_LIST)
                goto fail;
            for (long v = a; v <= b; v += step)
                out[(*count)++] = v;
        } else {
            goto fail;
        }
    } else {
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            char *end;
            errno = 0;
            long v = strtol(tok, &end, 10);
            if (end == tok || *end || errno || *count == MAX_LIST)
                goto fail;
            out[(*count)++] = v;
        }
    }
    if (*count == 0)
        goto fail;
    for (int i = 0; i < *count; i++)
        if (out[i] < lo_ok || out[i] > hi_ok) {
            fprintf(stderr, "hdpsgd kl: error: --%s %s: %ld is out of range: expected integers "
                            "from %ld to %ld\n", opt, text, out[i], lo_ok, hi_ok);
            return EXIT_BAD_INPUT;
        }
    return 0;
fail:
    fprintf(stderr, "hdpsgd kl: error: --%s '%s': expected a list like 2,4,8 or a range 2:12 or "
                    "2:12:2 (at most %d values)\n", opt, text, MAX_LIST);
    return EXIT_BAD_INPUT;
}

static int parse_schemes(const char *text, int *want, int *count)
{
    *count = 0;
    for (int k = 0; k < 4; k++)
        want[k] = 0;
    if (!strcasecmp(text, "all")) {
        for (int k = 0; k < 4; k++)
            want[k] = 1;
        *count = 4;
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int k = 0; k < 4; k++)
            if (!strcasecmp(tok, hdp_kl_init_name(k)))
                found = k;
        if (found < 0) {
            fprintf(stderr, "hdpsgd kl: error: --schemes: '%s' is not a scheme: expected lecun, he, "
                            "ntk, xavier or all\n", tok);
            return EXIT_BAD_INPUT;
        }
        if (!want[found])
            (*count)++;
        want[found] = 1;
    }
    return *count ? 0 : bad("--schemes '%s': no scheme named", text);
}

/* FIG without its extension, then ".csv" */
static void data_path_of(const char *fig, char *out, size_t size)
{
    char prefix[HDP_OUT_PATH_MAX + 1];
    snprintf(prefix, sizeof prefix, "%s", fig);
    char *dot = strrchr(prefix, '.'), *slash = strrchr(prefix, '/');
    if (dot && (!slash || dot > slash))
        *dot = '\0';
    snprintf(out, size, "%s.csv", prefix);
}

static void arch_of(const hdp_model *m, hdp_kl_init_kind k, long L, long width, hdp_kl_arch *a)
{
    a->init = k;
    a->L = (int)L;
    a->d = m->kl_d;
    a->m = width;
    a->o = m->kl_o;
}

static const char *const scheme_label[] = {"LeCun", "He", "NTK", "Xavier"};

static void meta(FILE *f, const char *what, const hdp_model *m)
{
    fprintf(f, "# hdpsgd %s kl %s (seed 001; THEORY.md 8; KL constant c = 4, the seed's c = 2 "
               "gives twice these KLs)\n", hdp_version_string(), what);
    hdp_model_write_meta(m, f);
}

/* commit the files, all or nothing; rc on failure */
static int commit(hdp_outfile *files, int nfiles, hdp_status st, hdp_error *err)
{
    if (st == HDP_OK) /* all or nothing */
        st = hdp_out_commit_all(files, nfiles, err);
    for (int i = 0; i < nfiles; i++)
        hdp_out_abort(&files[i]);
    return st == HDP_OK ? 0 : cli_fail("kl", err);
}

static void draw(const char *script, const char *fig, const char *data, const char *extra)
{
    char assign[4096] = "";
    hdp_plot_assign(assign, sizeof assign, "data_file", data);
    size_t len = strlen(assign);
    snprintf(assign + len, sizeof assign - len, "%s", extra);
    hdp_error perr;
    hdp_error_clear(&perr);
    if (hdp_plot_draw(script, fig, assign, &perr) != HDP_OK)
        fprintf(stderr, "hdpsgd kl: warning: %s (data written to %s)\n", perr.msg, data);
    else
        printf("figure: %s (data: %s)\n", fig, data);
}

/* ---- kl bound ---- */

static int sub_bound(const hdp_model *m)
{
    hdp_kl_arch a;
    arch_of(m, m->kl_init, m->kl_depth, m->kl_width, &a);
    const int L = a.L;
    long w[HDP_KL_MAX_DEPTH + 1];
    double beta[HDP_KL_MAX_DEPTH + 1], layer[HDP_KL_MAX_DEPTH + 1];
    hdp_kl_widths(&a, w);
    hdp_kl_betas(&a, beta);
    hdp_kl_grad_norm2(&a, (double)a.d, layer);
    const double B = hdp_kl_B(&a), Bt = hdp_kl_B_table(&a);
    const double T = m->kl_eta * (double)m->kl_epochs;
    const long n = m->kl_n;
    const double kl4 = hdp_kl_bound(B, T, n, m->kl_sigma, HDP_KL_C);
    const double kl2 = hdp_kl_bound(B, T, n, m->kl_sigma, HDP_KL_C_SEED);
    const double R = hdp_kl_R_lemma63(&a, n);
    hdp_kl_budget b4, b2;
    hdp_kl_budget_solve(B, R, n, m->kl_budget, T, HDP_KL_C, &b4);
    hdp_kl_budget_solve(B, R, n, m->kl_budget, T, HDP_KL_C_SEED, &b2);

    int want[4], nw;
    long depths[MAX_LIST], widths[MAX_LIST];
    int nd, nwid, rc;
    if ((rc = parse_schemes(schemes_opt ? schemes_opt : "all", want, &nw)))
        return rc;
    if ((rc = parse_int_list("depths", depths_opt ? depths_opt : "2:16", 2, HDP_KL_MAX_DEPTH, depths,
                             &nd)))
        return rc;
    if ((rc = parse_int_list("widths", widths_opt ? widths_opt : "16,32,64,128,256,512,1024", 1,
                             100000000, widths, &nwid)))
        return rc;

    printf("%s initialisation: d = %ld, width m = %ld, depth L = %d, o = %ld (seed 001 eq. 2, 5; "
           "Table 1)\n", scheme_label[a.init], a.d, a.m, L, a.o);
    printf("  layer  m_{l-1} x m_l     beta_l        E||df/dW_l||^2 (Lemma C.3, ||x||^2 = d)\n");
    for (int l = 1; l <= L; l++)
        printf("  %5d  %6ld x %-6ld  %-12.6g  %.6g\n", l, w[l - 1], w[l], beta[l], layer[l]);
    printf("  B (eq. 7, product formula)            = %.10g\n", B);
    printf("  B (Table 1, closed form)              = %.10g\n", Bt);
    printf("Noisy GD: n = %ld, sigma = %g, eta = %g, epochs = %ld, T = eta epochs = %g\n", n,
           m->kl_sigma, m->kl_eta, m->kl_epochs, T);
    printf("  KL bound, settled constant c = 4:  B T/(n^2 sigma^2)  = %.6g   (0, delta)-DP by "
           "Pinsker: delta = %.4g\n", kl4, hdp_kl_pinsker_delta(kl4));
    printf("  KL bound as in seed 001 (c = 2):  2B T/(n^2 sigma^2) = %.6g   delta = %.4g\n", kl2,
           hdp_kl_pinsker_delta(kl2));
    printf("  (Corollary 4.2 bounds E||grad L(D) - grad L(D')||^2 by 4B/n^2, Theorem 4.1: a loss "
           "with |l'| <= 1, e.g. logistic)\n");
    printf("Corollary 6.4, KL budget eps = %g (kl.budget):\n", m->kl_budget);
    printf("  sigma^2 meeting eps at T = %g:       c = 4: %.6g (sigma = %.4g)   seed c = 2: %.6g "
           "(sigma = %.4g)\n", T, b4.sigma2_at_T, sqrt(b4.sigma2_at_T), b2.sigma2_at_T,
           sqrt(b2.sigma2_at_T));
    printf("  with R = %.4g (Lemma 6.3 without its log factors: an order of magnitude):\n", R);
    printf("    c = 4: T* = sqrt(eps n R/B) = %.6g, sigma*^2 = %.6g, R/(2T*) + sigma*^2 n/2 = %.6g\n",
           b4.T_opt, b4.sigma2_opt, b4.risk_opt);
    printf("    c = 2: T* = sqrt(eps n R/(2B)) = %.6g, sigma*^2 = %.6g, excess-risk bound = %.6g\n",
           b2.T_opt, b2.sigma2_opt, b2.risk_opt);
    double budget_delta = NAN, sigma_delta = NAN;
    if (m->kl_delta > 0) {
        budget_delta = 2.0 * m->kl_delta * m->kl_delta;
        hdp_kl_budget bd;
        hdp_kl_budget_solve(B, R, n, budget_delta, T, HDP_KL_C, &bd);
        sigma_delta = sqrt(bd.sigma2_at_T);
        printf("Target (0, %g)-DP (kl.delta) by Pinsker: KL budget 2 delta^2 = %.6g, met at T = %g "
               "by sigma = %.6g (c = 4)\n", m->kl_delta, budget_delta, T, sigma_delta);
    }
    printf("\nB (eq. 7) against depth at width %ld:\n  %5s", a.m, "L");
    for (int k = 0; k < 4; k++)
        if (want[k])
            printf("  %12s", scheme_label[k]);
    printf("\n");
    for (int i = 0; i < nd; i++) {
        printf("  %5ld", depths[i]);
        for (int k = 0; k < 4; k++)
            if (want[k]) {
                hdp_kl_arch x;
                arch_of(m, k, depths[i], a.m, &x);
                printf("  %12.5g", hdp_kl_B(&x));
            }
        printf("\n");
    }

    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st = HDP_OK;
    char data[HDP_OUT_PATH_MAX + 32] = "";
    if (figure_path)
        data_path_of(figure_path, data, sizeof data);
    hdp_outfile files[3] = {{0}};
    int nfiles = 0;
    const char *tables[2] = {out_path, figure_path ? data : NULL};
    for (int t = 0; t < 2 && st == HDP_OK; t++) {
        if (!tables[t] || (t == 1 && out_path && !strcmp(out_path, data)))
            continue;
        if ((st = hdp_out_open(&files[nfiles], tables[t], &err)) != HDP_OK)
            break;
        FILE *f = files[nfiles++].f;
        meta(f, "bound: B (eq. 7) and the KL bound of Corollary 4.2 against depth (width = "
                "kl.width) and width (depth = kl.depth)", m);
        fprintf(f, "axis,depth,width");
        for (int k = 0; k < 4; k++)
            fprintf(f, ",B_%s", hdp_kl_init_name(k));
        for (int k = 0; k < 4; k++)
            fprintf(f, ",Btable_%s", hdp_kl_init_name(k));
        for (int k = 0; k < 4; k++)
            fprintf(f, ",kl_%s", hdp_kl_init_name(k));
        for (int k = 0; k < 4; k++)
            fprintf(f, ",klseed_%s", hdp_kl_init_name(k));
        fprintf(f, "\n");
        for (int axis = 0; axis < 2; axis++) {
            int cnt = axis == 0 ? nd : nwid;
            for (int i = 0; i < cnt; i++) {
                long Lx = axis == 0 ? depths[i] : a.L, mx = axis == 0 ? a.m : widths[i];
                fprintf(f, "%s,%ld,%ld", axis == 0 ? "depth" : "width", Lx, mx);
                double Bs[4];
                for (int k = 0; k < 4; k++) {
                    hdp_kl_arch x;
                    arch_of(m, k, Lx, mx, &x);
                    Bs[k] = hdp_kl_B(&x);
                    fprintf(f, ",%.12g", Bs[k]);
                }
                for (int k = 0; k < 4; k++) {
                    hdp_kl_arch x;
                    arch_of(m, k, Lx, mx, &x);
                    fprintf(f, ",%.12g", hdp_kl_B_table(&x));
                }
                for (int k = 0; k < 4; k++)
                    fprintf(f, ",%.12g", hdp_kl_bound(Bs[k], T, n, m->kl_sigma, HDP_KL_C));
                for (int k = 0; k < 4; k++)
                    fprintf(f, ",%.12g", hdp_kl_bound(Bs[k], T, n, m->kl_sigma, HDP_KL_C_SEED));
                fprintf(f, "\n");
            }
        }
    }
    if (st == HDP_OK && json_path && (st = hdp_out_open(&files[nfiles], json_path, &err)) == HDP_OK) {
        hdp_json j;
        hdp_json_begin(&j, files[nfiles++].f);
        hdp_json_str(&j, "init", hdp_kl_init_name(a.init));
        hdp_json_int(&j, "depth", L);
        hdp_json_int(&j, "width", a.m);
        hdp_json_int(&j, "d", a.d);
        hdp_json_int(&j, "o", a.o);
        for (int l = 1; l <= L; l++) {
            char k[32];
            snprintf(k, sizeof k, "beta_%d", l);
            hdp_json_num(&j, k, beta[l]);
        }
        hdp_json_num(&j, "B", B);
        hdp_json_num(&j, "B_table", Bt);
        hdp_json_num(&j, "T", T);
        hdp_json_int(&j, "n", n);
        hdp_json_num(&j, "sigma", m->kl_sigma);
        hdp_json_num(&j, "c", HDP_KL_C);
        hdp_json_num(&j, "kl_bound", kl4);
        hdp_json_num(&j, "kl_bound_seed", kl2);
        hdp_json_num(&j, "pinsker_delta", hdp_kl_pinsker_delta(kl4));
        hdp_json_num(&j, "pinsker_delta_seed", hdp_kl_pinsker_delta(kl2));
        hdp_json_num(&j, "budget", m->kl_budget);
        hdp_json_num(&j, "sigma2_for_budget", b4.sigma2_at_T);
        hdp_json_num(&j, "sigma2_for_budget_seed", b2.sigma2_at_T);
        hdp_json_num(&j, "R_lemma63", R);
        hdp_json_num(&j, "T_opt", b4.T_opt);
        hdp_json_num(&j, "sigma2_opt", b4.sigma2_opt);
        hdp_json_num(&j, "risk_opt", b4.risk_opt);
        hdp_json_num(&j, "T_opt_seed", b2.T_opt);
        hdp_json_num(&j, "sigma2_opt_seed", b2.sigma2_opt);
        hdp_json_num(&j, "risk_opt_seed", b2.risk_opt);
        hdp_json_num(&j, "delta_target", m->kl_delta > 0 ? m->kl_delta : NAN);
        hdp_json_num(&j, "budget_for_delta", budget_delta);
        hdp_json_num(&j, "sigma_for_delta", sigma_delta);
        hdp_json_str(&j, "model", m->source);
        hdp_json_end(&j);
    }
    if ((rc = commit(files, nfiles, st, &err)))
        return rc;
    if (figure_path) {
        char extra[1024], title[512], schemes[64] = "";
        for (int k = 0; k < 4; k++)
            if (want[k]) {
                strcat(schemes, schemes[0] ? " " : "");
                strcat(schemes, hdp_kl_init_name(k));
            }
        snprintf(title, sizeof title,
                 "seed 001 eq. 7: B = E‖∂f/∂W‖² at ‖x‖² = d (d = %ld, o = %ld)\nright axes: the KL "
                 "bound B T/(n²σ²) of Corollary 4.2 (c = 4) at T = %g, n = %ld, σ = %g",
                 a.d, a.o, T, n, m->kl_sigma);
        extra[0] = '\0';
        hdp_plot_assign(extra, sizeof extra, "schemes", schemes);
        hdp_plot_assign(extra, sizeof extra, "title_text", title);
        size_t len = strlen(extra);
        snprintf(extra + len, sizeof extra - len, "kl_per_B=%.17g\nfixed_width=%ld\nfixed_depth=%d\n",
                 hdp_kl_bound(1.0, T, n, m->kl_sigma, HDP_KL_C), a.m, L);
        draw("kl-bound", figure_path, data, extra);
    }
    return 0;
}

/* ---- kl init ---- */

/* one line of the table after each check */
static void init_line(const hdp_klinit *ki, int i, int k, int pass, void *user)
{
    (void)user;
    const hdp_kl_init_result *r = &ki->res[i * 4 + k];
    printf("  %-7s %5ld  %14.8g  %12.4g  %14.8g  %7.2f  %s\n", hdp_kl_init_name(k),
           ki->depths[i], r->mean[0], r->stderr_[0], r->formula[0], r->z, pass ? "ok" : "FAIL");
}

static int sub_init(const hdp_model *m, int threads)
{
    int want[4], nw, rc, nd;
    long depths[MAX_LIST];
    if ((rc = parse_schemes(schemes_opt ? schemes_opt : "all", want, &nw)))
        return rc;
    char defdepth[32];
    snprintf(defdepth, sizeof defdepth, "%ld", m->kl_depth);
    if ((rc = parse_int_list("depths", depths_opt ? depths_opt : defdepth, 2, HDP_KL_MAX_DEPTH,
                             depths, &nd)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    printf("Monte Carlo of E||df(x)/dW||_F^2 at initialisation, ||x||^2 = d = %ld, width %ld, "
           "o = %ld, %ld networks each\n", m->kl_d, m->kl_width, m->kl_o, m->kl_init_runs);
    printf("against Lemma C.3 of seed 001 (= B of eq. 7; exact at every width): pass when "
           "|z| <= %g (validate.z_tol)\n", m->z_tol);
    printf("  %-7s %5s  %14s  %12s  %14s  %7s  %s\n", "scheme", "L", "Monte Carlo", "stderr",
           "Lemma C.3", "z", "");
    hdp_klinit ki;
    hdp_status st = hdp_klinit_run(m, depths, nd, want, threads, init_line, NULL, &ki, &err);
    if (st != HDP_OK) {
        hdp_klinit_free(&ki);
        return cli_fail("kl", &err);
    }
    const hdp_kl_init_result *res = ki.res;
    const int fails = ki.fails;
    const double seconds = ki.seconds;
    printf("%s: %d of %d agree within %g standard errors (%.2f s)\n", fails ? "FAIL" : "PASS",
           nd * nw - fails, nd * nw, m->z_tol, seconds);
    hdp_outfile files[2] = {{0}};
    int nfiles = 0;
    if (out_path && (st = hdp_out_open(&files[nfiles], out_path, &err)) == HDP_OK) {
        FILE *f = files[nfiles++].f;
        meta(f, "init: Monte Carlo of E||df/dW_l||^2 against Lemma C.3 (layer 0 = all layers)", m);
        fprintf(f, "init,depth,width,layer,mc_mean,mc_stderr,lemma_c3,z\n");
        for (int i = 0; i < nd; i++)
            for (int k = 0; k < 4; k++) {
                if (!want[k])
                    continue;
                const hdp_kl_init_result *r = &res[i * 4 + k];
                for (long l = 0; l <= depths[i]; l++)
                    fprintf(f, "%s,%ld,%ld,%ld,%.12g,%.6g,%.12g,%.4f\n", hdp_kl_init_name(k),
                            depths[i], m->kl_width, l, r->mean[l], r->stderr_[l], r->formula[l],
                            (r->mean[l] - r->formula[l]) / r->stderr_[l]);
            }
    }
    if (st == HDP_OK && json_path && (st = hdp_out_open(&files[nfiles], json_path, &err)) == HDP_OK) {
        hdp_json j;
        hdp_json_begin(&j, files[nfiles++].f);
        for (int i = 0; i < nd; i++)
            for (int k = 0; k < 4; k++) {
                if (!want[k])
                    continue;
                const hdp_kl_init_result *r = &res[i * 4 + k];
                char key[64];
                snprintf(key, sizeof key, "%s_L%ld_mc", hdp_kl_init_name(k), depths[i]);
                hdp_json_num(&j, key, r->mean[0]);
                snprintf(key, sizeof key, "%s_L%ld_stderr", hdp_kl_init_name(k), depths[i]);
                hdp_json_num(&j, key, r->stderr_[0]);
                snprintf(key, sizeof key, "%s_L%ld_lemma_c3", hdp_kl_init_name(k), depths[i]);
                hdp_json_num(&j, key, r->formula[0]);
                snprintf(key, sizeof key, "%s_L%ld_z", hdp_kl_init_name(k), depths[i]);
                hdp_json_num(&j, key, r->z);
            }
        hdp_json_int(&j, "width", m->kl_width);
        hdp_json_int(&j, "d", m->kl_d);
        hdp_json_int(&j, "o", m->kl_o);
        hdp_json_int(&j, "runs", m->kl_init_runs);
        hdp_json_num(&j, "z_tol", m->z_tol);
        hdp_json_bool(&j, "pass", fails == 0);
        hdp_json_num(&j, "seconds", seconds);
        hdp_json_end(&j);
    }
    hdp_klinit_free(&ki);
    if ((rc = commit(files, nfiles, st, &err)))
        return rc;
    return fails ? EXIT_FAIL_VALIDATION : 0;
}

/* ---- kl run ---- */

static void unstable_message(const hdp_model *m, const hdp_kl_spec *s, const hdp_kl_run_result *r,
                             const char *how)
{
    fprintf(stderr,
            "hdpsgd kl: %s: [kl] eta = %g: %s, depth %d, width %ld: eta lambda_max(K)/n = %.4g >= 2, "
            "noisy GD on the squared loss diverges; use eta < %.3g (or loss = logistic)\n",
            how, m->kl_eta, hdp_kl_init_name(s->arch.init), s->arch.L, s->arch.m,
            r->eta_lambda_max, 2.0 * m->kl_eta / r->eta_lambda_max);
}

static int run_epochs(const hdp_model *m, int threads, const int *want)
{
    hdp_error err;
    hdp_error_clear(&err);
    int rc = 0;
    const long E = m->kl_epochs, n = m->kl_n;
    const double T = m->kl_eta * (double)E;
    hdp_kl_epochs ep;
    hdp_status st = hdp_kl_epochs_run(m, want, threads, &ep, &err);
    for (int k = 0; k < 4; k++)
        if (ep.want[k] && ep.res[k].unstable) {
            unstable_message(m, &ep.spec[k], &ep.res[k], "error");
            rc = EXIT_NUMERIC;
        }
    if (st != HDP_OK || rc) {
        hdp_kl_epochs_free(&ep);
        return st != HDP_OK ? cli_fail("kl", &err) : rc;
    }
    const hdp_kl_run_result *res = ep.res;
    const double *B = ep.B;
    const int sq = m->kl_loss == HDP_KL_SQUARED;
    printf("Noisy GD on the linearised ReLU network (seed 001 eq. 3, Appendix E): d = %ld, width %ld, "
           "depth %ld, o = %ld, n = %ld, %s loss,\nsigma = %g, eta = %g, %ld epochs (T = %g), %ld "
           "initialisations x %ld noise paths. KL of all iterates for the worst remove-one\n"
           "neighbour, constant c = 4 (seed 001's c = 2 doubles every KL).\n",
           m->kl_d, m->kl_width, m->kl_depth, m->kl_o, n, hdp_kl_loss_name(m->kl_loss), m->kl_sigma,
           m->kl_eta, E, T, m->kl_inits, m->kl_runs);
    printf("  %-7s %11s %10s %10s", "scheme", "KL (MC)", "stderr", "sd(init)");
    if (sq)
        printf(" %11s %7s %11s", "KL exact", "z", "last iter.");
    printf(" %11s %11s %11s %9s %10s %10s %7s\n", "seed c=2", "bound c=4", "bound c=2",
           "delta", "B", "E||J||^2", "secs");
    for (int k = 0; k < 4; k++) {
        if (!want[k])
            continue;
        const hdp_kl_run_result *r = &res[k];
        printf("  %-7s %11.5g %10.3g %10.3g", hdp_kl_init_name(k), r->kl_mc[E], r->kl_mc_se[E],
               r->kl_init_sd[E]);
        if (sq)
            printf(" %11.5g %7.2f %11.5g", r->kl_exact[E],
                   (r->kl_mc[E] - r->kl_exact[E]) / r->kl_mc_se_path[E], r->kl_final[E]);
        printf(" %11.5g %11.5g %11.5g %9.4g %10.5g %10.5g %7.2f\n", HDP_KL_C / HDP_KL_C_SEED * r->kl_mc[E],
               hdp_kl_bound(B[k], T, n, m->kl_sigma, HDP_KL_C),
               hdp_kl_bound(B[k], T, n, m->kl_sigma, HDP_KL_C_SEED),
               hdp_kl_pinsker_delta(r->kl_mc[E]), B[k], r->grad2, r->seconds);
    }
    if (sq)
        printf("  z = (MC - exact)/(path stderr); 'last iter.' = exact KL of the law of the last "
               "iterate (<= the KL of all iterates)\n");
    printf("  bound = Corollary 4.2 (|l'| <= 1, e.g. logistic); delta = Pinsker sqrt(KL/2) of the "
           "MC value (c = 4)\n");

    char data[HDP_OUT_PATH_MAX + 32] = "";
    if (figure_path)
        data_path_of(figure_path, data, sizeof data);
    hdp_outfile files[3] = {{0}};
    int nfiles = 0;
    const char *tables[2] = {out_path, figure_path ? data : NULL};
    for (int t = 0; t < 2 && st == HDP_OK; t++) {
        if (!tables[t] || (t == 1 && out_path && !strcmp(out_path, data)))
            continue;
        if ((st = hdp_out_open(&files[nfiles], tables[t], &err)) != HDP_OK)
            break;
        FILE *f = files[nfiles++].f;
        meta(f, "run --vs epochs: KL of noisy GD against epochs (seed 001 Fig. 1)", m);
        fprintf(f, "epoch,T");
        for (int k = 0; k < 4; k++)
            if (want[k]) {
                const char *s = hdp_kl_init_name(k);
                fprintf(f, ",%s_kl,%s_kl_se,%s_kl_sd,%s_kl_max,%s_kl_exact,%s_kl_final,%s_loss,"
                           "%s_bound,%s_bound_seed", s, s, s, s, s, s, s, s, s);
            }
        fprintf(f, "\n");
        for (long e = 0; e <= E; e++) {
            fprintf(f, "%ld,%.10g", e, m->kl_eta * (double)e);
            for (int k = 0; k < 4; k++)
                if (want[k]) {
                    const hdp_kl_run_result *r = &res[k];
                    char ex[40], fi[40]; /* exact values: squared loss only */
                    fprintf(f, ",%.10g,%.6g,%.6g,%.10g,%s,%s,%.10g,%.10g,%.10g", r->kl_mc[e],
                            r->kl_mc_se[e], r->kl_init_sd[e], r->kl_mc_max[e],
                            hdp_csv_field(ex, sizeof ex, "%.10g", r->kl_exact[e]),
                            hdp_csv_field(fi, sizeof fi, "%.10g", r->kl_final[e]), r->train_loss[e],
                            hdp_kl_bound(B[k], m->kl_eta * (double)e, n, m->kl_sigma, HDP_KL_C),
                            hdp_kl_bound(B[k], m->kl_eta * (double)e, n, m->kl_sigma, HDP_KL_C_SEED));
                }
            fprintf(f, "\n");
        }
    }
    if (st == HDP_OK && json_path && (st = hdp_out_open(&files[nfiles], json_path, &err)) == HDP_OK) {
        hdp_json j;
        hdp_json_begin(&j, files[nfiles++].f);
        for (int k = 0; k < 4; k++) {
            if (!want[k])
                continue;
            const hdp_kl_run_result *r = &res[k];
            const char *s = hdp_kl_init_name(k);
            char key[64];
#define KEY(name) (snprintf(key, sizeof key, "%s_%s", s, name), key)
            hdp_json_num(&j, KEY("kl"), r->kl_mc[E]);
            hdp_json_num(&j, KEY("kl_stderr"), r->kl_mc_se[E]);
            hdp_json_num(&j, KEY("kl_stderr_path"), r->kl_mc_se_path[E]);
            hdp_json_num(&j, KEY("kl_init_sd"), r->kl_init_sd[E]);
            hdp_json_num(&j, KEY("kl_max"), r->kl_mc_max[E]);
            hdp_json_num(&j, KEY("kl_exact"), r->kl_exact[E]);
            hdp_json_num(&j, KEY("kl_last_iterate"), r->kl_final[E]);
            hdp_json_num(&j, KEY("kl_seed_constant"), HDP_KL_C / HDP_KL_C_SEED * r->kl_mc[E]);
            hdp_json_num(&j, KEY("z_exact"), sq ? (r->kl_mc[E] - r->kl_exact[E]) / r->kl_mc_se_path[E]
                                                : NAN);
            hdp_json_num(&j, KEY("bound"), hdp_kl_bound(B[k], T, n, m->kl_sigma, HDP_KL_C));
            hdp_json_num(&j, KEY("bound_seed"), hdp_kl_bound(B[k], T, n, m->kl_sigma, HDP_KL_C_SEED));
            hdp_json_num(&j, KEY("pinsker_delta"), hdp_kl_pinsker_delta(r->kl_mc[E]));
            hdp_json_num(&j, KEY("B"), B[k]);
            hdp_json_num(&j, KEY("grad2"), r->grad2);
            hdp_json_int(&j, KEY("worst_sample"), r->worst);
            hdp_json_num(&j, KEY("eta_lambda_max"), r->eta_lambda_max);
            hdp_json_num(&j, KEY("R_lazy"), r->R_lazy);
            hdp_json_int(&j, KEY("rank"), r->rank);
            hdp_json_num(&j, KEY("train_loss"), r->train_loss[E]);
            hdp_json_num(&j, KEY("seconds"), r->seconds);
#undef KEY
        }
        hdp_json_num(&j, "c", HDP_KL_C);
        hdp_json_int(&j, "epochs", E);
        hdp_json_num(&j, "T", T);
        hdp_json_int(&j, "n", n);
        hdp_json_num(&j, "sigma", m->kl_sigma);
        hdp_json_num(&j, "eta", m->kl_eta);
        hdp_json_str(&j, "loss", hdp_kl_loss_name(m->kl_loss));
        hdp_json_int(&j, "inits", m->kl_inits);
        hdp_json_int(&j, "runs", m->kl_runs);
        hdp_json_uint(&j, "seed", m->seed);
        hdp_json_end(&j);
    }
    hdp_kl_epochs_free(&ep);
    if ((rc = commit(files, nfiles, st, &err)))
        return rc;
    if (figure_path) {
        char extra[2048], title[512], schemes[64] = "";
        for (int k = 0; k < 4; k++)
            if (want[k]) {
                strcat(schemes, schemes[0] ? " " : "");
                strcat(schemes, hdp_kl_init_name(k));
            }
        snprintf(title, sizeof title,
                 "KL privacy of noisy GD on the linearised ReLU network (seed 001 Fig. 1)\nwidth %ld, "
                 "depth %ld, d = %ld, n = %ld, %s loss, σ = %g, η = %g",
                 m->kl_width, m->kl_depth, m->kl_d, n, hdp_kl_loss_name(m->kl_loss), m->kl_sigma,
                 m->kl_eta);
        extra[0] = '\0';
        hdp_plot_assign(extra, sizeof extra, "schemes", schemes);
        hdp_plot_assign(extra, sizeof extra, "title_text", title);
        size_t len = strlen(extra);
        snprintf(extra + len, sizeof extra - len, "squared=%d\n", sq);
        draw("kl-epochs", figure_path, data, extra);
    }
    return 0;
}

/* --vs depth or --vs width: a warning for an unstable point, the progress on a terminal and a
 * line of the table after each point */
typedef struct {
    const hdp_model *m;
    int tty;
} sweep_out;

static void sweep_line(const hdp_klsweep *sw, int i, int k, const hdp_kl_spec *s, long done,
                       long total, void *user)
{
    const sweep_out *o = user;
    const hdp_klsweep_point *p = &sw->points[i * 4 + k];
    if (p->unstable) {
        hdp_kl_run_result r;
        memset(&r, 0, sizeof r);
        r.eta_lambda_max = p->eta_lambda_max;
        unstable_message(o->m, s, &r, "warning (point left out)");
    }
    if (o->tty)
        fprintf(stderr, "\r[%ld/%ld]", done, total);
    printf("  %-7s %6ld %12.5g %10.3g %12.5g %10.3g %12.5g %12.5g %7.2f\n", hdp_kl_init_name(k),
           sw->xs[i], p->kle, p->see, p->kl, p->se,
           hdp_kl_bound(p->B, sw->T, o->m->kl_n, o->m->kl_sigma, HDP_KL_C), p->B, p->seconds);
}

/* --vs depth or --vs width: the KL after round(0.4 epochs) and after `epochs` epochs */
static int run_sweep(const hdp_model *m, int threads, const int *want, int by_depth)
{
    long xs[MAX_LIST];
    int nx, rc;
    if (by_depth)
        rc = parse_int_list("depths", depths_opt ? depths_opt : "2:12", 2, HDP_KL_MAX_DEPTH, xs, &nx);
    else
        rc = parse_int_list("widths", widths_opt ? widths_opt : "16,32,64,128,256,512,1024", 1,
                            100000000, xs, &nx);
    if (rc)
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    /* check every point's spec before anything runs */
    hdp_klsweep sw;
    hdp_status st = hdp_klsweep_plan(m, by_depth, xs, nx, want, &sw, &err);
    if (st != HDP_OK) {
        hdp_klsweep_free(&sw);
        return cli_fail("kl", &err);
    }
    const long E = sw.E, Ee = sw.Ee;
    const long n = m->kl_n;
    const double T = sw.T, Te = sw.Te;
    const int sq = m->kl_loss == HDP_KL_SQUARED;
    sweep_out o = {m, isatty(fileno(stderr))};
    printf("Noisy GD on the linearised ReLU network against %s (seed 001 Fig. 2%s): d = %ld, %s %ld, "
           "o = %ld, n = %ld,\n%s loss, sigma = %g, eta = %g, KL after %ld and %ld epochs (T = %g, "
           "%g), %ld initialisations x %ld noise paths; c = 4.\n",
           by_depth ? "depth" : "width", by_depth ? "a, 2b" : "c", m->kl_d,
           by_depth ? "width" : "depth", by_depth ? m->kl_width : m->kl_depth, m->kl_o, n,
           hdp_kl_loss_name(m->kl_loss), m->kl_sigma, m->kl_eta, Ee, E, Te, T, m->kl_inits,
           m->kl_runs);
    printf("  %-7s %6s %12s %10s %12s %10s %12s %12s %7s\n", "scheme", by_depth ? "L" : "m",
           "KL early", "stderr", "KL final", "stderr", "bound c=4", "B", "secs");
    st = hdp_klsweep_run(&sw, m, threads, sweep_line, &o, &err);
    if (o.tty)
        fprintf(stderr, "\r%*s\r", 12, "");
    if (st != HDP_OK) {
        hdp_klsweep_free(&sw);
        return cli_fail("kl", &err);
    }
    typedef hdp_klsweep_point point;
    const point *pts = sw.points;
    char data[HDP_OUT_PATH_MAX + 32] = "";
    if (figure_path)
        data_path_of(figure_path, data, sizeof data);
    hdp_outfile files[3] = {{0}};
    int nfiles = 0;
    const char *tables[2] = {out_path, figure_path ? data : NULL};
    for (int t = 0; t < 2 && st == HDP_OK; t++) {
        if (!tables[t] || (t == 1 && out_path && !strcmp(out_path, data)))
            continue;
        if ((st = hdp_out_open(&files[nfiles], tables[t], &err)) != HDP_OK)
            break;
        FILE *f = files[nfiles++].f;
        meta(f, by_depth ? "run --vs depth: KL of noisy GD against depth (seed 001 Fig. 2a, 2b)"
                         : "run --vs width: KL of noisy GD against width (seed 001 Fig. 2c)", m);
        fprintf(f, "# early = after %ld epochs (T = %g), final = after %ld epochs (T = %g)\n", Ee, Te,
                E, T);
        fprintf(f, "%s", by_depth ? "depth" : "width");
        for (int k = 0; k < 4; k++)
            if (want[k]) {
                const char *s = hdp_kl_init_name(k);
                fprintf(f, ",%s_kl_early,%s_kl_early_se,%s_kl,%s_kl_se,%s_exact_early,%s_exact,"
                           "%s_bound_early,%s_bound,%s_B,%s_grad2", s, s, s, s, s, s, s, s, s, s);
            }
        fprintf(f, "\n");
        for (int i = 0; i < nx; i++) {
            fprintf(f, "%ld", xs[i]);
            for (int k = 0; k < 4; k++)
                if (want[k]) {
                    const point *p = &pts[i * 4 + k];
                    char ee[40], ex[40]; /* exact values: squared loss only */
                    fprintf(f, ",%.10g,%.6g,%.10g,%.6g,%s,%s,%.10g,%.10g,%.10g,%.10g", p->kle,
                            p->see, p->kl, p->se, hdp_csv_field(ee, sizeof ee, "%.10g", p->exacte),
                            hdp_csv_field(ex, sizeof ex, "%.10g", p->exact),
                            hdp_kl_bound(p->B, Te, n, m->kl_sigma, HDP_KL_C),
                            hdp_kl_bound(p->B, T, n, m->kl_sigma, HDP_KL_C), p->B, p->grad2);
                }
            fprintf(f, "\n");
        }
    }
    if (st == HDP_OK && json_path && (st = hdp_out_open(&files[nfiles], json_path, &err)) == HDP_OK) {
        hdp_json j;
        hdp_json_begin(&j, files[nfiles++].f);
        hdp_json_int(&j, "count", nx);
        for (int i = 0; i < nx; i++) {
            char key[64];
            snprintf(key, sizeof key, "%s_%d", by_depth ? "depth" : "width", i);
            hdp_json_int(&j, key, xs[i]);
            for (int k = 0; k < 4; k++)
                if (want[k]) {
                    const point *p = &pts[i * 4 + k];
                    snprintf(key, sizeof key, "%s_kl_%d", hdp_kl_init_name(k), i);
                    hdp_json_num(&j, key, p->kl);
                    snprintf(key, sizeof key, "%s_kl_stderr_%d", hdp_kl_init_name(k), i);
                    hdp_json_num(&j, key, p->se);
                    snprintf(key, sizeof key, "%s_kl_early_%d", hdp_kl_init_name(k), i);
                    hdp_json_num(&j, key, p->kle);
                    snprintf(key, sizeof key, "%s_B_%d", hdp_kl_init_name(k), i);
                    hdp_json_num(&j, key, p->B);
                }
        }
        hdp_json_int(&j, "epochs", E);
        hdp_json_int(&j, "epochs_early", Ee);
        hdp_json_num(&j, "c", HDP_KL_C);
        hdp_json_end(&j);
    }
    hdp_klsweep_free(&sw);
    if ((rc = commit(files, nfiles, st, &err)))
        return rc;
    if (figure_path) {
        char extra[2048], title[512], schemes[64] = "";
        for (int k = 0; k < 4; k++)
            if (want[k]) {
                strcat(schemes, schemes[0] ? " " : "");
                strcat(schemes, hdp_kl_init_name(k));
            }
        snprintf(title, sizeof title,
                 "KL privacy of noisy GD on the linearised ReLU network against %s (seed 001 Fig. 2)\n"
                 "%s %ld, d = %ld, n = %ld, %s loss, σ = %g, η = %g",
                 by_depth ? "depth" : "width", by_depth ? "width" : "depth",
                 by_depth ? m->kl_width : m->kl_depth, m->kl_d, n, hdp_kl_loss_name(m->kl_loss),
                 m->kl_sigma, m->kl_eta);
        extra[0] = '\0';
        hdp_plot_assign(extra, sizeof extra, "schemes", schemes);
        hdp_plot_assign(extra, sizeof extra, "title_text", title);
        hdp_plot_assign(extra, sizeof extra, "xname", by_depth ? "depth" : "width");
        size_t len = strlen(extra);
        snprintf(extra + len, sizeof extra - len, "epochs_early=%ld\nepochs_final=%ld\nsquared=%d\n",
                 Ee, E, sq);
        draw("kl-sweep", figure_path, data, extra);
    }
    return 0;
}

static int sub_run(const hdp_model *m, int threads)
{
    int by = 0; /* 0 epochs, 1 depth, 2 width */
    if (vs_opt) {
        if (!strcasecmp(vs_opt, "epochs")) by = 0;
        else if (!strcasecmp(vs_opt, "depth")) by = 1;
        else if (!strcasecmp(vs_opt, "width")) by = 2;
        else
            return bad("--vs '%s': expected epochs, depth or width", vs_opt);
    }
    int want[4], nw, rc;
    if (schemes_opt) {
        if ((rc = parse_schemes(schemes_opt, want, &nw)))
            return rc;
    } else if (by == 0) {
        for (int k = 0; k < 4; k++)
            want[k] = k == (int)m->kl_init;
    } else {
        for (int k = 0; k < 4; k++)
            want[k] = 1;
    }
    return by == 0 ? run_epochs(m, threads, want) : run_sweep(m, threads, want, by == 1);
}

/* ---- the command ---- */

int cmd_kl(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("kl");
    out_path = json_path = figure_path = vs_opt = schemes_opt = depths_opt = widths_opt = seed_opt =
        NULL;
    runs_opt = threads_opt = CLI_NOT_GIVEN;
    cli_common common;
    int rc = cli_parse(cmd, argc, argv, &common);
    if (rc)
        return rc;
    if (common.help) {
        cli_print_help(cmd, stdout);
        return 0;
    }
    static const char *const subs[] = {"bound", "init", "run"};
    int which = -1;
    for (int i = 0; common.npos > 0 && i < 3; i++)
        if (!strcmp(common.pos[0], subs[i]))
            which = i;
    if (which < 0 || common.npos > 2) {
        fprintf(stderr, "hdpsgd kl: error: %s\nUsage: hdpsgd %s\n",
                common.npos == 0 ? "name the subcommand: bound, init or run"
                : which < 0      ? "the first argument must be bound, init or run"
                                 : "at most one model file after the subcommand",
                cmd->usage);
        return EXIT_BAD_INPUT;
    }
    common.model_path = common.npos > 1 ? common.pos[1] : NULL;
    if (which == 1 && figure_path)
        return bad("%s", "--figure: kl init draws no figure (kl bound and kl run do)");
    if (which != 2 && vs_opt)
        return bad("%s", "--vs belongs to kl run");
    /* --runs, --seed as overrides after the user's --set (they win; the metadata shows them) */
    static char sets[2][128];
    if (runs_opt != CLI_NOT_GIVEN) {
        if (runs_opt < 2) {
            fprintf(stderr, "hdpsgd kl: error: --runs %ld: expected an integer >= 2\n", runs_opt);
            return EXIT_BAD_INPUT;
        }
        if (common.nsets == MAX_SETS)
            return bad("%s", "too many --set options");
        snprintf(sets[0], sizeof sets[0], "kl.%s=%ld", which == 1 ? "init_runs" : "runs", runs_opt);
        common.sets[common.nsets++] = sets[0];
    }
    if (seed_opt) {
        char *end;
        errno = 0;
        (void)strtoull(seed_opt, &end, 0);
        if (!seed_opt[0] || seed_opt[0] == '-' || *end || errno)
            return bad("--seed '%s': expected an unsigned 64-bit integer", seed_opt);
        if (common.nsets == MAX_SETS)
            return bad("%s", "too many --set options");
        snprintf(sets[1], sizeof sets[1], "sim.seed=%.100s", seed_opt);
        common.sets[common.nsets++] = sets[1];
    }
    if (threads_opt != CLI_NOT_GIVEN && (threads_opt < 0 || threads_opt > 4096)) {
        fprintf(stderr, "hdpsgd kl: error: --threads %ld: expected an integer from 0 (one per core) "
                        "to 4096\n", threads_opt);
        return EXIT_BAD_INPUT;
    }
    const int threads = threads_opt == CLI_NOT_GIVEN ? 0 : (int)threads_opt;
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_kl_model_check(&m, &err) != HDP_OK) {
        hdp_model_free(&m);
        return cli_fail("kl", &err);
    }
    switch (which) {
    case 0: rc = sub_bound(&m); break;
    case 1: rc = sub_init(&m, threads); break;
    default: rc = sub_run(&m, threads); break;
    }
    hdp_model_free(&m);
    return rc;
}
