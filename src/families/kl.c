/*
 * kl.c — KL privacy of noisy GD on overparameterised ReLU networks (Ye et al.; docs/theory.md
 * section 8): the run (hdp_kl_run) — its spec from the model and its checks, the data, the
 * driver over the initialisations and the statistics over them. See hdpsgd/kl.h for the
 * model, the conventions and the constant c = 4. The other files of the family:
 *  - kl_bounds.c: the closed forms (Table 1, eq. 7, Lemma C.3, Corollaries 4.2 and 6.4);
 *  - kl_net.c: the networks, their draws and the Jacobian Gram;
 *  - kl_init.c: the Monte Carlo of Lemma C.3 at initialisation;
 *  - kl_linear.c: the linearised network, its run and its exact OU KL;
 *  - kl_relu.c: the real ReLU network's forward/backward pass and its run;
 *  - kl_internal.h: what they share.
 * Determinism: OpenBLAS's results depend on its thread count (see rf_internal.h), so the BLAS runs
 * single-threaded here and the threads of the generic Monte Carlo loop (src/sim/mc.h) take
 * whole initialisations / networks, each with its own stream and output slot, reduced in
 * order afterwards.
 */
#include "sim/rng_internal.h"
#include "families/kl_internal.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/schema.h"
#include "sim/mc.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "families/blas_internal.h"

/* ---- noisy GD on the linearised network ---- */

void hdp_kl_spec_from_model(const hdp_model *m, hdp_kl_spec *s)
{
    if (!m || !s)
        return;
    memset(s, 0, sizeof *s);
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    s->arch.init = kp->init;
    s->arch.L = (int)kp->depth;
    s->arch.d = kp->d;
    s->arch.m = kp->width;
    s->arch.o = kp->o;
    s->n = kp->n;
    s->loss = kp->loss;
    s->sigma = kp->sigma;
    s->eta = kp->eta;
    s->epochs = kp->epochs;
    s->runs = kp->network == HDP_KL_RELU ? kp->relu_runs : kp->runs;
    s->inits = kp->inits;
    s->seed = m->seed;
    s->network = kp->network;
}

/* The sizes of s that the keys' ranges cannot express (the weights of a network, n o, the
 * per-epoch records): NULL, or the key to name with why. */
static const char *spec_too_big(const hdp_kl_spec *s, char *why, size_t size)
{
    const double no = (double)s->n * (double)s->arch.o;
    const double records = (double)(s->epochs + 1) * (double)s->n * (double)s->inits;
    if (hdp_kl_arch_too_big(&s->arch, why, size))
        return "width";
    if (no > 4000) {
        snprintf(why, size, "n o = %ld x %ld: the NTK Gram would be %.0f x %.0f; at most n o = 4000",
                 s->n, s->arch.o, no, no);
        return "n";
    }
    if (records > 2.0e7) {
        snprintf(why, size, "(epochs + 1) n inits = %.3g: too large for the per-epoch records (at "
                 "most 2e7)", records);
        return "epochs";
    }
    return NULL;
}

hdp_status hdp_kl_model_check(const hdp_model *m, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    hdp_kl_spec s;
    hdp_kl_spec_from_model(m, &s);
    char why[256];
    const char *key = spec_too_big(&s, why, sizeof why);
    return key ? hdp_model_fail_key(m, "kl", key, err, "%s", why) : HDP_OK;
}

hdp_status hdp_kl_spec_check(const hdp_kl_spec *s, hdp_error *err)
{
    HDP_REQUIRE(err, s);
    hdp_status st = hdp_kl_arch_check(&s->arch, err);
    if (st != HDP_OK)
        return st;
    /* the schema's ranges ([kl], the same as a model file's); ReLU runs share runs' range.
     * Not sigma: a spec built in code may go below the key's floor 1e-50, where the run
     * reports the overflow of its KL as a numerical failure naming the key (test_kl) */
    if (!(s->sigma > 0) || !isfinite(s->sigma))
        return hdp_fail(err, HDP_EINPUT, "[kl] sigma = %g: expected a number > 0", s->sigma);
    const struct {
        const char *key;
        double v;
    } nums[] = {{"n", (double)s->n},       {"eta", s->eta},
                {"epochs", (double)s->epochs}, {"runs", (double)s->runs},
                {"inits", (double)s->inits}};
    char why[256];
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (hdp_schema_out_of_range("kl", nums[i].key, nums[i].v, why, sizeof why))
            return hdp_fail(err, HDP_EINPUT, "[kl] %s", why);
    const char *key = spec_too_big(s, why, sizeof why);
    return key ? hdp_fail(err, HDP_EINPUT, "[kl] %s: %s", key, why) : HDP_OK;
}

/* Data from the seed's stream: teacher u_a (unit sphere), then x_i (sphere of radius sqrt d);
 * y_{i,a} = sign(u_a^T x_i) (+1 at 0). */
hdp_status hdp_kl_data(const hdp_kl_spec *s, double *X, double *Y, hdp_error *err)
{
    HDP_REQUIRE(err, s);
    HDP_REQUIRE(err, X);
    HDP_REQUIRE(err, Y);
    const long d = s->arch.d, o = s->arch.o, n = s->n;
    double *u = hdp_dalloc((size_t)(o * d));
    if (!u)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the teacher");
    hdp_xoshiro g;
    hdp_xoshiro_stream(&g, (uint64_t)s->seed, 0);
    for (long a = 0; a < o; a++) {
        hdp_kl_sphere(&g, d, u + a * d);
        for (long k = 0; k < d; k++)
            u[a * d + k] /= sqrt((double)d);
    }
    for (long i = 0; i < n; i++)
        hdp_kl_sphere(&g, d, X + i * d);
    for (long i = 0; i < n; i++)
        for (long a = 0; a < o; a++) {
            double t = 0;
            for (long k = 0; k < d; k++)
                t += u[a * d + k] * X[i * d + k];
            Y[i * o + a] = t >= 0 ? 1.0 : -1.0;
        }
    free(u);
    return HDP_OK;
}

/* ---- the driver ---- */

void hdp_kl_run_result_free(hdp_kl_run_result *res)
{
    if (!res)
        return;
    free(res->kl_mc), free(res->kl_mc_se), free(res->kl_mc_se_path), free(res->kl_init_sd);
    free(res->kl_mc_max), free(res->kl_exact), free(res->kl_final), free(res->train_loss);
    free(res->lemma32_bound), free(res->lemma32_exp), free(res->lemma32_log10);
    res->kl_mc = res->kl_mc_se = res->kl_mc_se_path = res->kl_init_sd = NULL;
    res->kl_mc_max = res->kl_exact = res->kl_final = res->train_loss = NULL;
    res->lemma32_bound = res->lemma32_exp = res->lemma32_log10 = NULL;
}

/* the result's arrays and the initialisations' records; 0 when out of memory */
static int run_alloc(const hdp_kl_spec *s, hdp_kl_run_result *res, init_out *io)
{
    const long n = s->n, E = s->epochs, NI = s->inits;
    const size_t rec = (size_t)(E + 1) * (size_t)n;
    double **arrays[] = {&res->kl_mc,     &res->kl_mc_se,  &res->kl_mc_se_path,
                         &res->kl_init_sd, &res->kl_mc_max, &res->kl_exact,
                         &res->kl_final,  &res->train_loss, &res->lemma32_bound,
                         &res->lemma32_exp, &res->lemma32_log10};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (!(*arrays[i] = hdp_dalloc((size_t)E + 1)))
            return 0;
    for (long i = 0; i < NI; i++)
        if (!(io[i].block = HDP_MC_VECS({&io[i].sum, rec}, {&io[i].sum2, rec}, {&io[i].exact, rec},
                                        {&io[i].loss, (size_t)E + 1})))
            return 0;
    return 1;
}

/* the means over initialisations of grad2, R_lazy, the minimum rank, the largest
 * eta lambda_max and whether any initialisation was unstable */
static void run_problem_summary(const init_out *io, long NI, hdp_kl_run_result *res)
{
    res->rank = io[0].pb.r;
    double g2 = 0, R = 0;
    for (long i = 0; i < NI; i++) {
        g2 += io[i].pb.grad2;
        R += io[i].pb.R_lazy;
        res->rank = io[i].pb.r < res->rank ? io[i].pb.r : res->rank;
        res->eta_lambda_max = io[i].eta_lmax > res->eta_lambda_max ? io[i].eta_lmax
                                                                     : res->eta_lambda_max;
        res->unstable |= io[i].unstable;
    }
    res->grad2 = g2 / (double)NI;
    res->R_lazy = R / (double)NI;
}

/* Lemma 3.2 along training (kl.h, hdp_kl_lemma32) on the linearised network: per
 * initialisation ||grad L(W_0; D)||^2 = q^T K q / n^2 (q = l'(f_0; y)) and the largest
 * ||J(x_i)||_F^2 (the trace of K's o x o block i); diff0 from the first epoch's KL of j*. */
static void run_lemma32(const hdp_kl_spec *s, const init_out *io, hdp_kl_run_result *res)
{
    const long n = s->n, o = s->arch.o, N = n * o, E = s->epochs, NI = s->inits;
    const int sq = s->loss == HDP_KL_SQUARED;
    double g0 = 0, jmax = 0, rmax = 0;
    for (long i = 0; i < NI; i++) {
        const hdp_kl_problem *pb = &io[i].pb;
        double qKq = 0;
        for (long a = 0; a < N; a++) {
            double qa = sq ? pb->f0[a] - pb->y[a] : -pb->y[a] / (1.0 + exp(pb->y[a] * pb->f0[a]));
            double Kq = 0;
            for (long b = 0; b < N; b++) {
                double qb = sq ? pb->f0[b] - pb->y[b]
                               : -pb->y[b] / (1.0 + exp(pb->y[b] * pb->f0[b]));
                Kq += pb->K[a * N + b] * qb;
            }
            qKq += qa * Kq;
        }
        g0 += qKq / ((double)n * (double)n) / (double)NI;
        for (long j = 0; j < n; j++) {
            double tr = 0;
            for (long a = 0; a < o; a++)
                tr += pb->K[(j * o + a) * N + j * o + a];
            jmax = tr > jmax ? tr : jmax;
        }
        rmax = (double)pb->r > rmax ? (double)pb->r : rmax;
    }
    res->lemma32_grad0 = g0;
    res->lemma32_beta = (sq ? 1.0 : 0.25) * jmax;
    res->lemma32_rank = rmax;
    res->lemma32_diff0 = E >= 1 ? res->kl_mc[1] * HDP_KL_C * s->sigma * s->sigma / s->eta : NAN;
    for (long k = 0; k <= E; k++) {
        const double T = s->eta * (double)k, b = res->lemma32_beta, d0 = res->lemma32_diff0;
        res->lemma32_bound[k] =
            hdp_kl_lemma32(T, n, s->sigma, d0, g0, b, rmax, 0.0, HDP_KL_C, &res->lemma32_exp[k]);
        res->lemma32_log10[k] =
            k > 0 ? hdp_kl_lemma32_log10(T, n, s->sigma, d0, g0, b, rmax, 0.0, HDP_KL_C) : NAN;
    }
}

/* Grand means over initialisations (in order) of the Monte Carlo and the exact cumulative KL
 * per epoch and sample, the worst sample j* at the last epoch, then every epoch's statistics
 * for j*. Returns j*. */
static long run_statistics(const hdp_kl_spec *s, const init_out *io, hdp_kl_run_result *res,
                           double *grand, double *exact, double *mean_i)
{
    const long n = s->n, E = s->epochs, NI = s->inits, P = s->runs;
    const size_t rec = (size_t)(E + 1) * (size_t)n;
    const double c4s2 = HDP_KL_C * s->sigma * s->sigma;
    for (size_t t = 0; t < rec; t++) {
        double a = 0, b = 0;
        for (long i = 0; i < NI; i++) {
            a += io[i].sum[t] / (double)P;
            b += io[i].exact[t];
        }
        grand[t] = a / (double)NI / c4s2;
        exact[t] = b / (double)NI / c4s2;
    }
    /* the exact OU values exist for the squared loss on the linearised network only */
    const int ou = s->loss == HDP_KL_SQUARED && s->network == HDP_KL_LINEARISED;
    const double *crit = ou ? exact : grand;
    long worst = 0;
    for (long j = 1; j < n; j++)
        if (crit[E * n + j] > crit[E * n + worst])
            worst = j;
    for (long k = 0; k <= E; k++) {
        const size_t t = (size_t)k * (size_t)n + (size_t)worst;
        double mx = grand[(size_t)k * (size_t)n];
        for (long j = 1; j < n; j++)
            mx = grand[(size_t)k * (size_t)n + j] > mx ? grand[(size_t)k * (size_t)n + j] : mx;
        double vpath = 0, lsum = 0;
        for (long i = 0; i < NI; i++) {
            const double m = io[i].sum[t] / (double)P;
            mean_i[i] = m / c4s2;
            const double var = (io[i].sum2[t] - (double)P * m * m) / (double)(P - 1);
            vpath += (var > 0 ? var : 0) / (double)P;
            lsum += io[i].loss[k];
        }
        double sd = 0;
        for (long i = 0; i < NI; i++)
            sd += (mean_i[i] - grand[t]) * (mean_i[i] - grand[t]);
        sd = NI > 1 ? sqrt(sd / (double)(NI - 1)) : 0.0;
        res->kl_mc[k] = grand[t];
        res->kl_mc_max[k] = mx;
        res->kl_init_sd[k] = sd;
        res->kl_mc_se_path[k] = sqrt(vpath) / (double)NI / c4s2;
        res->kl_mc_se[k] = NI > 1 ? sd / sqrt((double)NI) : res->kl_mc_se_path[k];
        res->kl_exact[k] = ou ? exact[t] : NAN;
        res->train_loss[k] = lsum / (double)NI;
        res->kl_final[k] = ou && k == 0 ? 0.0 : NAN;
    }
    return worst;
}

/* what the exact final-iterate KL of each initialisation reads, and where it writes */
typedef struct {
    const hdp_kl_spec *s;
    const init_out *io;
    long worst;
    double *fk; /* [inits x epochs] */
} final_ctx;

static hdp_status final_one(const void *vc, long i, void *ws, hdp_xoshiro *g, void *slot,
                            hdp_error *err)
{
    (void)ws, (void)g, (void)slot;
    const final_ctx *c = vc;
    const long E = c->s->epochs;
    return hdp_kl_problem_final_kl(&c->io[i].pb, c->s->eta, c->s->sigma, E, c->worst,
                                   c->fk + (size_t)i * (size_t)E, err);
}

/* Squared loss: the exact KL of the law of the k-th iterate for j*, per initialisation, then
 * the mean over initialisations in order into res->kl_final[1..E]. */
static hdp_status run_final_kl(const hdp_kl_spec *s, int threads, const init_out *io, long worst,
                               hdp_kl_run_result *res, hdp_error *err)
{
    const long E = s->epochs, NI = s->inits;
    double *fk = hdp_dalloc((size_t)NI * (size_t)E);
    if (!fk)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    final_ctx c = {s, io, worst, fk};
    hdp_mc_loop loop = {.name = "kl final", .runs = NI, .threads = hdp_mc_loop_threads(NI, threads),
                        .ctx = &c, .run = final_one};
    const int old = blas_single();
    hdp_status st = hdp_mc_loop_run(&loop, err);
    blas_restore(old);
    for (long k = 1; k <= E && st == HDP_OK; k++) {
        double a = 0;
        for (long i = 0; i < NI; i++)
            a += fk[(size_t)i * (size_t)E + (size_t)(k - 1)];
        res->kl_final[k] = a / (double)NI;
    }
    free(fk);
    return st;
}

/*
 * The driver: the data, then every initialisation on its own stream (the generic Monte Carlo
 * loop; each initialisation runs all its noise paths at once), then the statistics over the
 * initialisations in order, then (squared loss) the exact final-iterate KL for j*.
 */
/* The KL grows as eta / sigma^2 and its standard error squares it: a sigma small enough
 * overflows them (kl.sigma = 1e-300: inf, and NaN at epoch 0). HDP_ENUMERIC naming the first
 * epoch where an estimate is not finite (kl_exact and kl_final are NaN where they do not
 * apply, only infinities count there). */
static hdp_status run_finite(const hdp_kl_spec *s, const hdp_kl_run_result *res, hdp_error *err)
{
    for (long k = 0; k <= s->epochs; k++) {
        double v[] = {res->kl_mc[k], res->kl_mc_se[k], res->kl_mc_se_path[k], res->kl_init_sd[k],
                      res->kl_mc_max[k], res->train_loss[k]};
        int bad = isinf(res->kl_exact[k]) || isinf(res->kl_final[k]);
        for (size_t i = 0; i < sizeof v / sizeof *v; i++)
            bad |= !isfinite(v[i]);
        if (bad)
            return hdp_fail(err, HDP_ENUMERIC,
                            "[kl] the KL estimates overflowed at epoch %ld (KL %g +- %g; it grows "
                            "as eta / sigma^2 with sigma = %g, eta = %g): raise [kl] sigma or "
                            "lower [kl] eta",
                            k, res->kl_mc[k], res->kl_mc_se[k], s->sigma, s->eta);
    }
    return HDP_OK;
}

hdp_status hdp_kl_run(const hdp_kl_spec *s, int threads, hdp_kl_run_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, s);
    HDP_REQUIRE(err, res);
    hdp_status st = hdp_kl_spec_check(s, err);
    if (st != HDP_OK)
        return st;
    const double t0 = omp_get_wtime();
    const long n = s->n, o = s->arch.o, E = s->epochs, NI = s->inits, P = s->runs;
    const size_t rec = (size_t)(E + 1) * (size_t)n;
    double *X, *Y, *mean_i, *grand, *exact;
    void *block = HDP_MC_VECS({&X, (size_t)n * (size_t)s->arch.d}, {&Y, (size_t)n * (size_t)o},
                              {&mean_i, (size_t)NI}, {&grand, rec}, {&exact, rec});
    init_out *io = calloc((size_t)NI, sizeof *io);
    res->epochs = E, res->n = n, res->inits = NI, res->runs = P;
    if (!block || !io || !run_alloc(s, res, io)) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the records of %ld epochs x %ld samples",
                      E, n);
        goto done;
    }
    if ((st = hdp_kl_data(s, X, Y, err)) != HDP_OK)
        goto done;
    /* initialisation i: the seed's stream jumped i + 1 times (the unjumped one drew the data) */
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, (uint64_t)s->seed, 1);
    init_ctx c = {s, X, Y};
    const int relu = s->network == HDP_KL_RELU;
    hdp_mc_loop loop = {.name = relu ? "kl relu" : "kl", .runs = NI,
                        .threads = hdp_mc_loop_threads(NI, threads), .ctx = &c,
                        .ws_alloc = relu ? hdp_kl_relu_ws_alloc : NULL,
                        .ws_free = relu ? hdp_kl_relu_ws_free : NULL,
                        .run = relu ? hdp_kl_relu_run_one : hdp_kl_linear_run_one,
                        .first = &first, .slots = io, .slot_size = sizeof *io};
    const int old = blas_single();
    st = hdp_mc_loop_run(&loop, err);
    blas_restore(old);
    if (st != HDP_OK)
        goto done;
    run_problem_summary(io, NI, res);
    if (relu)
        res->eta_lambda_max = NAN; /* no Gram, no rank (0) */
    if (res->unstable) {
        for (long k = 0; k <= E; k++)
            res->kl_mc[k] = res->kl_mc_se[k] = res->kl_mc_se_path[k] = res->kl_init_sd[k] =
                res->kl_mc_max[k] = res->kl_exact[k] = res->kl_final[k] = res->train_loss[k] =
                    res->lemma32_bound[k] = res->lemma32_exp[k] = res->lemma32_log10[k] = NAN;
        res->lemma32_diff0 = res->lemma32_grad0 = res->lemma32_beta = res->lemma32_rank = NAN;
        res->worst = -1;
        goto done;
    }
    res->worst = run_statistics(s, io, res, grand, exact, mean_i);
    if (relu) {
        for (long k = 0; k <= E; k++)
            res->lemma32_bound[k] = res->lemma32_exp[k] = res->lemma32_log10[k] = NAN;
        res->lemma32_diff0 = res->lemma32_grad0 = res->lemma32_beta = res->lemma32_rank = NAN;
    } else {
        run_lemma32(s, io, res);
    }
    if (s->loss == HDP_KL_SQUARED && !relu)
        st = run_final_kl(s, threads, io, res->worst, res, err);
    if (st == HDP_OK)
        st = run_finite(s, res, err);
done:
    res->seconds = omp_get_wtime() - t0;
    for (long i = 0; io && i < NI; i++) {
        free(io[i].block);
        hdp_kl_problem_free(&io[i].pb);
    }
    free(io), free(block);
    if (st != HDP_OK)
        hdp_kl_run_result_free(res);
    return st;
}
