/*
 * cmd_kl.c — `hdpsgd kl bound|init|run`: KL privacy of Langevin diffusion / noisy GD on
 * overparameterised ReLU networks (Ye et al.; docs/theory.md §8; hdpsgd/kl.h).
 *
 *   bound  closed forms: beta_l, B (eq. 7 and Table 1), the KL bound of Corollary 4.2 with the
 *          paper's constant c = 2 and the settled c = 4, Pinsker's delta, Corollary 6.4's sigma^2
 *          and T for a KL budget; a table and figure of B and the bound against depth and width.
 *   init   Monte Carlo of E||df/dW||^2 at initialisation against Lemma C.3 (exact for every
 *          width), for the four schemes; exit status 1 when some |z| > validate.z_tol.
 *   run    noisy GD on the linearised network: the KL of all iterates (worst remove-one
 *          neighbour) by Monte Carlo, and for the squared loss exactly (OU moments) together
 *          with the exact KL of the last iterate's law; against epochs (Ye et al., Fig. 1),
 *          depth (Fig. 2a, 2b) or width (Fig. 2c): cmd_kl_run.c.
 * The Monte Carlo runs are the driver's (hdpsgd/klsweep.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "plot.h"
#include "kl_cli.h"

static kl_args args;
static const char *seed_opt;
static long runs_opt, threads_opt;

const cli_opt kl_opts[] = {
    {"output", 'o', OPT_OUTPUT, &args.out, "FILE.csv", "write the table / curves as CSV"},
    {"json", 0, OPT_OUTPUT, &args.json, "FILE.json", "write the JSON summary here"},
    {"figure", 'f', OPT_FIGURE, &args.figure, "FIG",
     "bound, run: draw the figure (.png, .pdf, .svg, .eps or .tex); its data go to FIG-without-extension.csv"},
    {"vs", 0, OPT_STRING, &args.vs, "AXIS", "run: epochs (default, Fig. 1) | depth (Fig. 2a/b) | width (Fig. 2c)"},
    {"schemes", 0, OPT_STRING, &args.schemes, "LIST",
     "initialisations, e.g. he,lecun or all (default: bound/init all, run kl.init; "
     "run --vs depth/width: all)"},
    {"depths", 0, OPT_STRING, &args.depths, "LIST",
     "depths L, e.g. 2,4,8 or 2:12 or 2:12:2 (bound: 2:16; init: kl.depth; run --vs depth: 2:12)"},
    {"widths", 0, OPT_STRING, &args.widths, "LIST",
     "widths m (bound, run --vs width: 16,32,64,128,256,512,1024)"},
    {"full", 0, OPT_FLAG, &args.full, NULL,
     "run --vs depth|width with kl.network = relu: the long default lists 2:12 and 16..1024 "
     "(minutes) instead of 2:8:2 and 16..256"},
    {"runs", 0, OPT_LONG, &runs_opt, "N", "init: networks (kl.init_runs); run: noise paths per "
                                         "initialisation (kl.runs)"},
    {"threads", 0, OPT_LONG, &threads_opt, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &seed_opt, "S", "base seed, unsigned 64-bit (overrides sim.seed)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help kl` (the command table in main.c points here) */
const char kl_usage[] = "bound|init|run [MODEL.ini]";
const char kl_help[] =
    "Langevin diffusion / noisy GD W <- W - eta grad L + sqrt(2 eta sigma^2) N(0, I) on fully\n"
    "connected ReLU networks of depth L and width m initialised by LeCun, He, NTK or Xavier\n"
    "(Ye et al., Table 1; docs/theory.md §8; model keys [kl], see hdpsgd keys). The KL privacy of\n"
    "all iterates is sum_k eta E||grad L(W_k; D) - grad L(W_k; D')||^2 / (c sigma^2) with c = 4:\n"
    "the seed writes c = 2, but for the squared loss the joint law of the iterates is Gaussian\n"
    "and its exact KL equals the c = 4 sum to rounding (tests/test_kl.c), the exact KL of the\n"
    "last iterate equals it after one step. Ye et al.'s formula (eq. 6, 74) and bounds are thus\n"
    "twice the true KL: still upper bounds, a factor 2 loose (its step 77 takes the variance of a\n"
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
    "         <s>_kl_exact,<s>_kl_final (last iterate),<s>_loss,<s>_bound,<s>_bound_seed,\n"
    "         <s>_lemma32_bound,<s>_lemma32_exp_term,<s>_lemma32_log10_bound (Lemma 3.2).\n"
    "         --vs depth (Fig. 2a, 2b; --depths, default 2:12) or --vs width (Fig. 2c; --widths):\n"
    "         all schemes, KL after round(0.4 epochs) and after epochs; CSV depth|width,\n"
    "         <s>_kl_early(_se),<s>_kl(_se),<s>_exact_early,<s>_exact,<s>_bound_early,<s>_bound,\n"
    "         <s>_B,<s>_grad2. With the squared loss, eta lambda_max(K)/n >= 2 diverges: exit 4\n"
    "         (--vs epochs) or the point is left out with a warning (sweeps).\n"
    "         kl.network = relu: the real ReLU network too (dgemm passes, all weights noised,\n"
    "         same data and W_0, kl.relu_runs paths); CSV and JSON <s>_relu_*; sweeps' default\n"
    "         lists 2:8:2 and 16..256 (--full: the long ones).\n"
    "Results do not depend on --threads. On 2 cores the\n"
    "defaults take about 20 s for each of run --vs depth and --vs width, 15 s for init, 1 s for\n"
    "run --schemes all (the paper's three figures and the check of Lemma C.3 in about a minute).";

static void arch_of(const hdp_model *m, hdp_kl_init_kind k, long L, long width, hdp_kl_arch *a)
{
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    a->init = k;
    a->L = (int)L;
    a->d = kp->d;
    a->m = width;
    a->o = kp->o;
}

static const char *const scheme_label[] = {"LeCun", "He", "NTK", "Xavier"};

/* ---- kl bound ---- */

/* the closed forms at the model's architecture, and the lists of the table */
typedef struct {
    const hdp_model *m;
    hdp_kl_arch a;
    long w[HDP_KL_MAX_DEPTH + 1];
    double beta[HDP_KL_MAX_DEPTH + 1], layer[HDP_KL_MAX_DEPTH + 1];
    double B, Bt, T, kl4, kl2, R, budget_delta, sigma_delta;
    hdp_kl_budget b4, b2;
    int want[4], nd, nwid;
    long depths[KL_MAX_LIST], widths[KL_MAX_LIST];
} bound_ctx;

static void bound_compute(const hdp_model *m, bound_ctx *b)
{
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    hdp_kl_arch *a = &b->a;
    b->m = m;
    arch_of(m, kp->init, kp->depth, kp->width, a);
    hdp_kl_widths(a, b->w);
    hdp_kl_betas(a, b->beta);
    hdp_kl_grad_norm2(a, (double)a->d, b->layer);
    b->B = hdp_kl_B(a);
    b->Bt = hdp_kl_B_table(a);
    b->T = kp->eta * (double)kp->epochs;
    const long n = kp->n;
    b->kl4 = hdp_kl_bound(b->B, b->T, n, kp->sigma, HDP_KL_C);
    b->kl2 = hdp_kl_bound(b->B, b->T, n, kp->sigma, HDP_KL_C_SEED);
    b->R = hdp_kl_R_lemma63(a, n);
    hdp_kl_budget_solve(b->B, b->R, n, kp->budget, b->T, HDP_KL_C, &b->b4);
    hdp_kl_budget_solve(b->B, b->R, n, kp->budget, b->T, HDP_KL_C_SEED, &b->b2);
    b->budget_delta = b->sigma_delta = NAN;
    if (kp->delta > 0) {
        b->budget_delta = 2.0 * kp->delta * kp->delta;
        hdp_kl_budget bd;
        hdp_kl_budget_solve(b->B, b->R, n, b->budget_delta, b->T, HDP_KL_C, &bd);
        b->sigma_delta = sqrt(bd.sigma2_at_T);
    }
}

static void bound_print(const bound_ctx *b)
{
    const hdp_model *m = b->m;
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    const hdp_kl_arch *a = &b->a;
    const hdp_kl_budget *b4 = &b->b4, *b2 = &b->b2;
    printf("%s initialisation: d = %ld, width m = %ld, depth L = %d, o = %ld (Ye et al., eq. 2, 5; "
           "Table 1)\n", scheme_label[a->init], a->d, a->m, a->L, a->o);
    printf("  layer  m_{l-1} x m_l     beta_l        E||df/dW_l||^2 (Lemma C.3, ||x||^2 = d)\n");
    for (int l = 1; l <= a->L; l++)
        printf("  %5d  %6ld x %-6ld  %-12.6g  %.6g\n", l, b->w[l - 1], b->w[l], b->beta[l],
               b->layer[l]);
    printf("  B (eq. 7, product formula)            = %.10g\n", b->B);
    printf("  B (Table 1, closed form)              = %.10g\n", b->Bt);
    printf("Noisy GD: n = %ld, sigma = %g, eta = %g, epochs = %ld, T = eta epochs = %g\n", kp->n,
           kp->sigma, kp->eta, kp->epochs, b->T);
    printf("  KL bound, settled constant c = 4:  B T/(n^2 sigma^2)  = %.6g   (0, delta)-DP by "
           "Pinsker: delta = %.4g\n", b->kl4, hdp_kl_pinsker_delta(b->kl4));
    printf("  KL bound as in Ye et al. (c = 2):  2B T/(n^2 sigma^2) = %.6g   delta = %.4g\n", b->kl2,
           hdp_kl_pinsker_delta(b->kl2));
    printf("  (Corollary 4.2 bounds E||grad L(D) - grad L(D')||^2 by 4B/n^2, Theorem 4.1: a loss "
           "with |l'| <= 1, e.g. logistic)\n");
    printf("Corollary 6.4, KL budget eps = %g (kl.budget):\n", kp->budget);
    printf("  sigma^2 meeting eps at T = %g:       c = 4: %.6g (sigma = %.4g)   seed c = 2: %.6g "
           "(sigma = %.4g)\n", b->T, b4->sigma2_at_T, sqrt(b4->sigma2_at_T), b2->sigma2_at_T,
           sqrt(b2->sigma2_at_T));
    printf("  with R = %.4g (Lemma 6.3 without its log factors: an order of magnitude):\n", b->R);
    printf("    c = 4: T* = sqrt(eps n R/B) = %.6g, sigma*^2 = %.6g, R/(2T*) + sigma*^2 n/2 = %.6g\n",
           b4->T_opt, b4->sigma2_opt, b4->risk_opt);
    printf("    c = 2: T* = sqrt(eps n R/(2B)) = %.6g, sigma*^2 = %.6g, excess-risk bound = %.6g\n",
           b2->T_opt, b2->sigma2_opt, b2->risk_opt);
    if (kp->delta > 0)
        printf("Target (0, %g)-DP (kl.delta) by Pinsker: KL budget 2 delta^2 = %.6g, met at T = %g "
               "by sigma = %.6g (c = 4)\n", kp->delta, b->budget_delta, b->T, b->sigma_delta);
    printf("\nB (eq. 7) against depth at width %ld:\n  %5s", a->m, "L");
    for (int k = 0; k < 4; k++)
        if (b->want[k])
            printf("  %12s", scheme_label[k]);
    printf("\n");
    for (int i = 0; i < b->nd; i++) {
        printf("  %5ld", b->depths[i]);
        for (int k = 0; k < 4; k++)
            if (b->want[k]) {
                hdp_kl_arch x;
                arch_of(m, k, b->depths[i], a->m, &x);
                printf("  %12.5g", hdp_kl_B(&x));
            }
        printf("\n");
    }
}

/* one row of the table: B, B of Table 1 and the bounds of every scheme at (L, width) */
static void bound_row(FILE *f, const bound_ctx *b, const char *axis, long Lx, long mx)
{
    const hdp_model *m = b->m;
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    hdp_kl_bound_row row = {.axis = axis, .depth = Lx, .width = mx};
    for (int k = 0; k < 4; k++) {
        hdp_kl_arch x;
        arch_of(m, k, Lx, mx, &x);
        row.B[k] = hdp_kl_B(&x);
        row.B_table[k] = hdp_kl_B_table(&x);
        row.kl[k] = hdp_kl_bound(row.B[k], b->T, kp->n, kp->sigma, HDP_KL_C);
        row.kl_seed[k] = hdp_kl_bound(row.B[k], b->T, kp->n, kp->sigma, HDP_KL_C_SEED);
    }
    hdp_csv_line(f, &hdp_kl_bound_csv_fields, &row, NULL);
}

static void bound_table(FILE *f, const void *ctx)
{
    const bound_ctx *b = ctx;
    kl_meta(f, "bound: B (eq. 7) and the KL bound of Corollary 4.2 against depth (width = "
               "kl.width) and width (depth = kl.depth)", b->m);
    hdp_csv_header_line(f, &hdp_kl_bound_csv_fields);
    for (int i = 0; i < b->nd; i++)
        bound_row(f, b, "depth", b->depths[i], b->a.m);
    for (int i = 0; i < b->nwid; i++)
        bound_row(f, b, "width", b->a.L, b->widths[i]);
}

/* layer l = i + 1's beta, suffixed _<l> */
static int layer_item(const cli_json_each *e, int i, cli_json_item *it)
{
    (void)e;
    it->at = i + 1;
    return 1;
}

static void bound_json(hdp_json *j, const void *ctx)
{
    const bound_ctx *b = ctx;
    const hdp_model *m = b->m;
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    hdp_kl_bound_summary s = {.a = b->a, .B = b->B, .B_table = b->Bt, .T = b->T, .n = kp->n,
                              .sigma = kp->sigma, .kl_bound = b->kl4, .kl_bound_seed = b->kl2,
                              .budget = kp->budget, .b4 = b->b4, .b2 = b->b2, .R = b->R,
                              .delta_target = kp->delta > 0 ? kp->delta : NAN,
                              .budget_for_delta = b->budget_delta,
                              .sigma_for_delta = b->sigma_delta};
    memcpy(s.beta, b->beta, sizeof s.beta);
    const cli_json_each layers = {(int)b->a.L, layer_item, &s, NULL, 0};
    const cli_json_source src[] = {{&hdp_kl_arch_fields, &s, NULL},
                                   {&hdp_kl_beta_fields, &layers, NULL},
                                   {&hdp_kl_bound_fields, &s, NULL}, {&hdp_source_fields, m, NULL}};
    cli_json_write(j, cli_find_command("kl"), src, (int)(sizeof src / sizeof *src), m);
}

static void bound_figure(hdp_plot_vars *v, const void *ctx)
{
    const bound_ctx *b = ctx;
    const hdp_model *m = b->m;
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    char title[512], schemes[64];
    kl_schemes_text(b->want, schemes, sizeof schemes);
    snprintf(title, sizeof title,
             "Ye et al., eq. 7: B = E‖∂f/∂W‖² at ‖x‖² = d (d = %ld, o = %ld)\nright axes: the KL "
             "bound B T/(n²σ²) of Corollary 4.2 (c = 4) at T = %g, n = %ld, σ = %g",
             b->a.d, b->a.o, b->T, kp->n, kp->sigma);
    hdp_plot_var_str(v, "schemes", schemes);
    hdp_plot_var_str(v, "title_text", title);
    hdp_plot_var_num(v, "kl_per_B", hdp_kl_bound(1.0, b->T, kp->n, kp->sigma, HDP_KL_C));
    hdp_plot_var_num(v, "fixed_width", (double)b->a.m);
    hdp_plot_var_num(v, "fixed_depth", (double)b->a.L);
}

static int sub_bound(const hdp_model *m)
{
    static bound_ctx b;
    memset(&b, 0, sizeof b);
    bound_compute(m, &b);
    int nw, rc;
    if ((rc = kl_parse_schemes(args.schemes ? args.schemes : "all", b.want, &nw)))
        return rc;
    if ((rc = kl_parse_int_list("depths", args.depths ? args.depths : "2:16", 2, HDP_KL_MAX_DEPTH,
                                b.depths, &b.nd)))
        return rc;
    if ((rc = kl_parse_int_list("widths", args.widths ? args.widths : "16,32,64,128,256,512,1024",
                                1, 100000000, b.widths, &b.nwid)))
        return rc;
    bound_print(&b);
    return kl_write(&args, bound_table, bound_json, &b, "kl-bound", bound_figure);
}

/* ---- kl init ---- */

/* one line of the table after each check */
typedef struct {
    const hdp_model *m;
    const hdp_klinit *ki;
} init_ctx;

static int init_line(const char *what, long done, long total, double z, void *user)
{
    (void)what, (void)total;
    const init_ctx *c = user;
    const long idx = hdp_klsweep_index(c->ki->want, c->ki->nd, done);
    const int i = (int)(idx / 4), k = (int)(idx % 4);
    const hdp_kl_init_result *r = &c->ki->res[idx];
    printf("  %-7s %5ld  %14.8g  %12.4g  %14.8g  %7.2f  %s\n", hdp_kl_init_name(k),
           c->ki->depths[i], r->mean[0], r->stderr_[0], r->formula[0], z,
           fabs(z) <= c->m->z_tol ? "ok" : "FAIL");
    return 0;
}

static void init_table(FILE *f, const void *ctx)
{
    const init_ctx *c = ctx;
    const hdp_klinit *ki = c->ki;
    kl_meta(f, "init: Monte Carlo of E||df/dW_l||^2 against Lemma C.3 (layer 0 = all layers)", c->m);
    hdp_csv_header_line(f, &hdp_kl_init_csv_fields);
    for (int i = 0; i < ki->nd; i++)
        for (int k = 0; k < 4; k++) {
            if (!ki->want[k])
                continue;
            const hdp_kl_init_result *r = &ki->res[i * 4 + k];
            for (long l = 0; l <= ki->depths[i]; l++) {
                const hdp_kl_init_row row = {
                    .init = hdp_kl_init_name(k), .depth = ki->depths[i],
                    .width = hdp_kl_keys_of(c->m)->width, .layer = l, .mc_mean = r->mean[l],
                    .mc_stderr = r->stderr_[l], .lemma_c3 = r->formula[l],
                    .z = (r->mean[l] - r->formula[l]) / r->stderr_[l]};
                hdp_csv_line(f, &hdp_kl_init_csv_fields, &row, NULL);
            }
        }
}

/* point i = depth index * 4 + scheme, under <scheme>_L<depth>_ (the schemes wanted) */
static int init_item(const cli_json_each *e, int i, cli_json_item *it)
{
    const hdp_klinit *ki = e->obj;
    it->obj = &ki->res[i];
    it->name[0] = hdp_kl_init_name(i % 4);
    snprintf(it->num[1], sizeof it->num[1], "%ld", ki->depths[i / 4]);
    it->name[1] = it->num[1];
    return ki->want[i % 4];
}

static void init_json(hdp_json *j, const void *ctx)
{
    const init_ctx *c = ctx;
    const cli_json_each points = {c->ki->nd * 4, init_item, c->ki, NULL, 0};
    const cli_json_source src[] = {{&hdp_kl_init_point_fields, &points, NULL},
                                   {&hdp_kl_init_fields, c->ki, c->m}};
    cli_json_write(j, cli_find_command("kl"), src, (int)(sizeof src / sizeof *src), c->m);
}

static int sub_init(const hdp_model *m, int threads)
{
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    int want[4], nw, rc, nd;
    long depths[KL_MAX_LIST];
    if ((rc = kl_parse_schemes(args.schemes ? args.schemes : "all", want, &nw)))
        return rc;
    char defdepth[32];
    snprintf(defdepth, sizeof defdepth, "%ld", kp->depth);
    if ((rc = kl_parse_int_list("depths", args.depths ? args.depths : defdepth, 2,
                                HDP_KL_MAX_DEPTH, depths, &nd)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    printf("Monte Carlo of E||df(x)/dW||_F^2 at initialisation, ||x||^2 = d = %ld, width %ld, "
           "o = %ld, %ld networks each\n", kp->d, kp->width, kp->o, kp->init_runs);
    printf("against Lemma C.3 of Ye et al. (= B of eq. 7; exact at every width): pass when "
           "|z| <= %g (validate.z_tol)\n", m->z_tol);
    printf("  %-7s %5s  %14s  %12s  %14s  %7s  %s\n", "scheme", "L", "Monte Carlo", "stderr",
           "Lemma C.3", "z", "");
    hdp_klinit ki;
    init_ctx c = {m, &ki};
    hdp_status st = hdp_klinit_run(m, depths, nd, want, threads, init_line, &c, &ki, &err);
    if (st != HDP_OK) {
        hdp_klinit_free(&ki);
        return cli_fail("kl", &err);
    }
    const int fails = ki.fails;
    printf("%s: %d of %d agree within %g standard errors (%.2f s)\n", fails ? "FAIL" : "PASS",
           nd * nw - fails, nd * nw, m->z_tol, ki.seconds);
    rc = kl_write(&args, init_table, init_json, &c, NULL, NULL);
    hdp_klinit_free(&ki);
    if (rc)
        return rc;
    return fails ? EXIT_FAIL_VALIDATION : 0;
}

/* ---- the command ---- */

int cmd_kl(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("kl");
    memset(&args, 0, sizeof args);
    seed_opt = NULL;
    runs_opt = threads_opt = CLI_NOT_GIVEN;
    cli_common common;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    static const char *const subs[] = {"bound", "init", "run"};
    int which = cli_subcommand(cmd, &common, subs, 3, 0, "name the subcommand: bound, init or run",
                               "the first argument must be bound, init or run",
                               "at most one model file after the subcommand");
    if (which < 0)
        return EXIT_BAD_INPUT;
    if (which == 1 && args.figure)
        return cli_bad("kl", "--figure: kl init draws no figure (kl bound and kl run do)");
    if (which != 2 && args.vs)
        return cli_bad("kl", "--vs belongs to kl run");
    /* --runs, --seed: keys set after the user's --set (they win; the metadata shows them),
     * checked by the schema */
    if (runs_opt != CLI_NOT_GIVEN &&
        (rc = cli_add_with_long("kl", &common, "--runs", which == 1 ? "kl.init_runs" : "kl.runs",
                                runs_opt)))
        return rc;
    if (seed_opt && (rc = cli_add_with_text("kl", &common, "--seed", "sim.seed", seed_opt)))
        return rc;
    if ((rc = cli_threads_check("kl", threads_opt)))
        return rc;
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
    default: rc = kl_run(&m, threads, &args); break;
    }
    hdp_model_free(&m);
    return rc;
}
