/*
 * kl.c — KL privacy of noisy GD on overparameterised ReLU networks (Ye et al.; docs/theory.md
 * section 8). See hdpsgd/kl.h for the model, the conventions and the constant c = 4.
 *
 * Method.
 *  - Closed forms: beta_l per scheme and B (eq. 7) from the product formula; Table 1's closed
 *    forms separately (a test checks that they agree); Lemma C.3 per layer; Corollaries 4.2
 *    and 6.4 with the constant c as a parameter; Pinsker's delta (A.2).
 *  - Networks: weights row-major, drawn layer by layer from one xoshiro256++ stream (fast
 *    ziggurat of rng.h). Forward pass and back-propagated signals by dgemm; the Jacobian
 *    Gram K = J J^T as the sum over layers of (Delta_l Delta_l^T) .* (H_{l-1} H_{l-1}^T)
 *    (never the (n o) x p Jacobian itself).
 *  - Noisy GD in the coordinates z of the row space of J (exact, kl.h): eigendecomposition of
 *    K (LAPACKE_dsyevd), then per step three dgemm over all noise paths of an initialisation
 *    at once: u = M Z, grad = M^T Q / n, K q = M (M^T q). The gradient difference of every
 *    remove-one neighbour from q^T K q and the o x o diagonal blocks of K.
 *  - Squared loss: exact moments of the OU recursion (diagonal in z), the exact trajectory KL
 *    from them, and the exact KL of the law of the k-th iterate (Gaussian) on D and D\j from
 *    one eigendecomposition of the Hessian of D\j.
 * Determinism: OpenBLAS's results depend on its thread count (see rf_internal.h), so the BLAS
 * runs single-threaded here and the threads of the generic Monte Carlo loop (src/sim/mc.h) take
 * whole initialisations / networks, each with its own stream and output slot, reduced in
 * order afterwards.
 * Linking: products go through OpenBLAS's CBLAS (families/blas_internal.h; see rf_internal.h).
 */
#include "sim/rng_internal.h"
#include "hdpsgd/kl.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"
#include "sim/stats.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "families/blas_internal.h"



/* The stream of index j: the seed's stream jumped j times (rng.h). */

/* ---- closed forms (Ye et al., Table 1, eq. 7, Lemma C.3, Corollaries 4.2 and 6.4) ---- */

void hdp_kl_widths(const hdp_kl_arch *a, long *w)
{
    if (!a || !w)
        return;
    w[0] = a->d;
    for (int l = 1; l < a->L; l++)
        w[l] = a->m;
    w[a->L] = a->o;
}

/* Table 1, column "variance beta_l"; NTK's last layer 1/o as in Table 1 (kl.h). */
void hdp_kl_betas(const hdp_kl_arch *a, double *beta)
{
    if (!a || !beta)
        return;
    long w[HDP_KL_MAX_DEPTH + 1];
    hdp_kl_widths(a, w);
    beta[0] = 0;
    for (int l = 1; l <= a->L; l++) {
        double in = (double)w[l - 1], out = (double)w[l];
        switch (a->init) {
        case HDP_KL_LECUN: beta[l] = 1.0 / in; break;
        case HDP_KL_HE: beta[l] = 2.0 / in; break;
        case HDP_KL_NTK: beta[l] = l < a->L ? 2.0 / out : 1.0 / out; break;
        case HDP_KL_XAVIER: beta[l] = 2.0 / (in + out); break;
        }
    }
}

/* Lemma C.3 (eq. 33), layer by layer (proof of C.3: (m_l/2) prod_{i<l} (beta_i m_i/2)
 * prod_{l<i<L} (beta_i m_i/2) beta_L o ||x||^2 = ||x||^2 o prod_{i<L} (beta_i m_i/2) beta_L/beta_l). */
double hdp_kl_grad_norm2(const hdp_kl_arch *a, double x2, double *per_layer)
{
    if (!a)
        return NAN;
    long w[HDP_KL_MAX_DEPTH + 1];
    double beta[HDP_KL_MAX_DEPTH + 1];
    hdp_kl_widths(a, w);
    hdp_kl_betas(a, beta);
    double prod = 1;
    for (int i = 1; i < a->L; i++)
        prod *= beta[i] * (double)w[i] / 2.0;
    double total = 0;
    for (int l = 1; l <= a->L; l++) {
        double v = x2 * (double)a->o * prod * beta[a->L] / beta[l];
        if (per_layer)
            per_layer[l] = v;
        total += v;
    }
    if (per_layer)
        per_layer[0] = total;
    return total;
}

/* eq. 7: B = d o (prod_{i<L} beta_i m_i / 2) sum_l beta_L / beta_l */
double hdp_kl_B(const hdp_kl_arch *a) { return a ? hdp_kl_grad_norm2(a, (double)a->d, NULL) : NAN; }

/* Table 1, column "gradient norm constant B (7)" */
double hdp_kl_B_table(const hdp_kl_arch *a)
{
    if (!a)
        return NAN;
    const double d = (double)a->d, m = (double)a->m, o = (double)a->o, L = (double)a->L;
    switch (a->init) {
    case HDP_KL_LECUN: return o * m * (L - 1 + d / m) / pow(2.0, L - 1);
    case HDP_KL_HE: return o * m * (L - 1 + d / m);
    case HDP_KL_NTK: return d * m * ((L - 1) / 2 + o / m);
    case HDP_KL_XAVIER:
        return o * d * (L - 1 + (d + o) / (2 * m)) / (pow(2.0, L - 3) * (1 + d / m) * (1 + o / m));
    }
    return NAN;
}

/* Lemma 6.3 (eq. 9) without its logarithmic factors */
double hdp_kl_R_lemma63(const hdp_kl_arch *a, long n)
{
    if (!a)
        return NAN;
    long w[HDP_KL_MAX_DEPTH + 1];
    double beta[HDP_KL_MAX_DEPTH + 1];
    hdp_kl_widths(a, w);
    hdp_kl_betas(a, beta);
    double prod = 1, inv = 0;
    for (int i = 1; i < a->L; i++)
        prod *= beta[i] * (double)w[i];
    for (int l = 1; l <= a->L; l++)
        inv += 1.0 / beta[l];
    double first = 1.0 / ((double)a->d * beta[a->L] * prod);
    return (first > 1 ? first : 1.0) * (double)n / inv;
}

/* Corollary 4.2 with constant c: integral of 4B/n^2 (Theorem 4.1) over [0, T], / (c sigma^2) */
double hdp_kl_bound(double B, double T, long n, double sigma, double c)
{
    return 4.0 * B * T / (c * (double)n * (double)n * sigma * sigma);
}

/* Corollary 6.4 (and its proof, eqs. 72-73) with constant c */
void hdp_kl_budget_solve(double B, double R, long n, double eps, double T, double c,
                         hdp_kl_budget *out)
{
    if (!out)
        return;
    const double nn = (double)n;
    out->sigma2_at_T = 4.0 * B * T / (c * eps * nn * nn);
    out->T_opt = sqrt(c * eps * nn * R / (4.0 * B));
    out->sigma2_opt = 4.0 * B * out->T_opt / (c * eps * nn * nn);
    out->risk_opt = R / (2.0 * out->T_opt) + out->sigma2_opt * nn / 2.0;
}

/* Pinsker's inequality: TV <= sqrt(KL/2) (Ye et al., A.2, item 3); TV <= 1 always */
double hdp_kl_pinsker_delta(double kl)
{
    const double d = sqrt(kl / 2.0);
    return d < 1.0 ? d : 1.0;
}

/* ---- networks ---- */

static hdp_status arch_check(const hdp_kl_arch *a, hdp_error *err)
{
    if (a->L < 2 || a->L > HDP_KL_MAX_DEPTH)
        return hdp_fail(err, HDP_EINPUT, "[kl] depth = %d: expected an integer from 2 to %d", a->L,
                        HDP_KL_MAX_DEPTH);
    if (a->m < 1 || a->d < 1 || a->o < 1)
        return hdp_fail(err, HDP_EINPUT, "[kl] width, d and o must be >= 1 (got %ld, %ld, %ld)",
                        a->m, a->d, a->o);
    double params = (double)a->m * (double)a->d + (double)(a->L - 2) * (double)a->m * (double)a->m +
                    (double)a->o * (double)a->m;
    if (params > 4.0e8)
        return hdp_fail(err, HDP_EINPUT,
                        "[kl] width = %ld, depth = %d: %.3g weights (3.2 GB per network) is too "
                        "many: at most 4e8",
                        a->m, a->L, params);
    return HDP_OK;
}

void hdp_kl_net_free(hdp_kl_net *net)
{
    if (!net)
        return;
    for (int l = 0; l <= HDP_KL_MAX_DEPTH; l++) {
        free(net->W[l]);
        net->W[l] = NULL;
    }
}

hdp_status hdp_kl_net_alloc(const hdp_kl_arch *a, hdp_kl_net *net, hdp_error *err)
{
    HDP_ZERO(net);
    HDP_REQUIRE(err, a);
    HDP_REQUIRE(err, net);
    memset(net, 0, sizeof *net);
    hdp_status st = arch_check(a, err);
    if (st != HDP_OK)
        return st;
    net->arch = *a;
    hdp_kl_widths(a, net->w);
    hdp_kl_betas(a, net->beta);
    for (int l = 1; l <= a->L; l++) {
        net->W[l] = hdp_dalloc((size_t)net->w[l] * (size_t)net->w[l - 1]);
        if (!net->W[l]) {
            hdp_kl_net_free(net);
            return hdp_fail(err, HDP_ENOMEM, "out of memory for the weights of layer %d", l);
        }
    }
    return HDP_OK;
}

void hdp_kl_net_draw(hdp_kl_net *net, hdp_xoshiro *g)
{
    if (!net || !g)
        return;
    for (int l = 1; l <= net->arch.L; l++) {
        const double s = sqrt(net->beta[l]);
        const long len = net->w[l] * net->w[l - 1];
        double *W = net->W[l];
        for (long i = 0; i < len; i++)
            W[i] = s * hdp_rng_normal_fast(g);
    }
}

void hdp_kl_sphere(hdp_xoshiro *g, long d, double *x)
{
    if (!g || !x)
        return;
    double s2;
    do {
        s2 = 0;
        for (long i = 0; i < d; i++) {
            x[i] = hdp_rng_normal_fast(g);
            s2 += x[i] * x[i];
        }
    } while (!(s2 > 0));
    const double scale = sqrt((double)d / s2);
    for (long i = 0; i < d; i++)
        x[i] *= scale;
}

/* Forward pass, back-propagated signals and the Gram of the Jacobian (kl.h). For layer l the
 * Jacobian of output a at x_i is delta_l^a(x_i) h_{l-1}(x_i)^T (Ye et al., eqs. 35-36), so
 * <J_l(x_i, a), J_l(x_j, b)> = <delta_l^a(x_i), delta_l^b(x_j)> <h_{l-1}(x_i), h_{l-1}(x_j)>,
 * with delta_L^a = e_a, delta_{L-1}^a = 1[g_{L-1} > 0] .* W_L[a, :]^T and
 * delta_l^a = 1[g_l > 0] .* W_{l+1}^T delta_{l+1}^a. */
hdp_status hdp_kl_net_jacobian(const hdp_kl_net *net, const double *X, long n, double *f0,
                               double *K, double *layer_norm2, hdp_error *err)
{
    HDP_REQUIRE(err, net);
    HDP_REQUIRE(err, X);
    const int L = net->arch.L;
    const long o = net->arch.o, N = n * o;
    const long *w = net->w;
    long wmax = 0;
    for (int l = 0; l <= L; l++)
        wmax = w[l] > wmax ? w[l] : wmax;
    double *H[HDP_KL_MAX_DEPTH + 1] = {0};
    double *D = hdp_dalloc((size_t)N * (size_t)wmax), *Dn = hdp_dalloc((size_t)N * (size_t)wmax);
    double *GD = K ? hdp_dalloc((size_t)N * (size_t)N) : NULL;
    double *GH = K ? hdp_dalloc((size_t)n * (size_t)n) : NULL;
    double *hn2 = hdp_dalloc((size_t)n);
    int ok = D && Dn && hn2 && (!K || (GD && GH));
    for (int l = 1; l < L && ok; l++)
        ok = (H[l] = hdp_dalloc((size_t)n * (size_t)w[l])) != NULL;
    if (!ok) {
        for (int l = 1; l < L; l++)
            free(H[l]);
        free(D), free(Dn), free(GD), free(GH), free(hn2);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the Jacobian (n = %ld, width %ld)", n,
                        wmax);
    }
    H[0] = (double *)X;
    /* forward: H_l = relu(H_{l-1} W_l^T); the mask of layer l is H_l > 0 */
    for (int l = 1; l < L; l++) {
        blas_gemm(0, 1, n, w[l], w[l - 1], 1.0, H[l - 1], w[l - 1], net->W[l], w[l - 1], 0.0, H[l],
             w[l]);
        const long len = n * w[l];
        for (long i = 0; i < len; i++)
            H[l][i] = H[l][i] > 0 ? H[l][i] : 0.0;
    }
    if (f0)
        blas_gemm(0, 1, n, o, w[L - 1], 1.0, H[L - 1], w[L - 1], net->W[L], w[L - 1], 0.0, f0, o);
    if (K)
        memset(K, 0, sizeof(double) * (size_t)N * (size_t)N);
    /* layer L: delta_L^a = e_a */
    const long mL1 = w[L - 1];
    for (long i = 0; i < n; i++) {
        double s = 0;
        for (long k = 0; k < mL1; k++)
            s += H[L - 1][i * mL1 + k] * H[L - 1][i * mL1 + k];
        hn2[i] = s;
        if (layer_norm2)
            layer_norm2[i * L + (L - 1)] = (double)o * s;
    }
    if (K) {
        blas_gemm(0, 1, n, n, mL1, 1.0, H[L - 1], mL1, H[L - 1], mL1, 0.0, GH, n);
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++)
                for (long a = 0; a < o; a++)
                    K[(i * o + a) * N + (j * o + a)] += GH[i * n + j];
    }
    /* delta_{L-1}: rows (i, a) = mask_{L-1}(i) .* W_L[a, :] */
    for (long i = 0; i < n; i++)
        for (long a = 0; a < o; a++)
            for (long k = 0; k < mL1; k++)
                D[(i * o + a) * mL1 + k] = H[L - 1][i * mL1 + k] > 0 ? net->W[L][a * mL1 + k] : 0.0;
    for (int l = L - 1; l >= 1; l--) {
        const long ml = w[l], mp = w[l - 1];
        /* D holds delta_l (N x m_l) */
        for (long i = 0; i < n; i++) {
            double s = 0;
            for (long k = 0; k < mp; k++)
                s += H[l - 1][i * mp + k] * H[l - 1][i * mp + k];
            hn2[i] = s;
        }
        if (layer_norm2)
            for (long i = 0; i < n; i++) {
                double s = 0;
                for (long a = 0; a < o; a++)
                    for (long k = 0; k < ml; k++)
                        s += D[(i * o + a) * ml + k] * D[(i * o + a) * ml + k];
                layer_norm2[i * L + (l - 1)] = s * hn2[i];
            }
        if (K) {
            blas_gemm(0, 1, N, N, ml, 1.0, D, ml, D, ml, 0.0, GD, N);
            blas_gemm(0, 1, n, n, mp, 1.0, H[l - 1], mp, H[l - 1], mp, 0.0, GH, n);
            for (long p = 0; p < N; p++)
                for (long q = 0; q < N; q++)
                    K[p * N + q] += GD[p * N + q] * GH[(p / o) * n + (q / o)];
        }
        if (l > 1) {
            /* delta_{l-1} = mask_{l-1} .* (delta_l W_l) */
            blas_gemm(0, 0, N, mp, ml, 1.0, D, ml, net->W[l], mp, 0.0, Dn, mp);
            for (long p = 0; p < N; p++) {
                const double *h = H[l - 1] + (p / o) * mp;
                for (long k = 0; k < mp; k++)
                    if (!(h[k] > 0))
                        Dn[p * mp + k] = 0.0;
            }
            double *t = D;
            D = Dn;
            Dn = t;
        }
    }
    for (int l = 1; l < L; l++)
        free(H[l]);
    free(D), free(Dn), free(GD), free(GH), free(hn2);
    return HDP_OK;
}

/* ---- Monte Carlo of Lemma C.3 ---- */

/* what the networks of hdp_kl_init_mc read, and where network r writes: norms[r L ..] */
typedef struct {
    const hdp_kl_arch *a;
    double *norms; /* [runs x L] squared Jacobian norms per layer */
} init_mc_ctx;

/* a thread's workspace: a network and an input */
typedef struct {
    hdp_kl_net net;
    double *x; /* [d] */
} init_mc_ws;

static void init_mc_ws_free(void *vw)
{
    init_mc_ws *w = vw;
    if (!w)
        return;
    hdp_kl_net_free(&w->net);
    free(w->x);
    free(w);
}

static void *init_mc_ws_alloc(const void *vc)
{
    const hdp_kl_arch *a = ((const init_mc_ctx *)vc)->a;
    init_mc_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->x = hdp_dalloc((size_t)a->d);
    if (!w->x || hdp_kl_net_alloc(a, &w->net, NULL) != HDP_OK) {
        init_mc_ws_free(w);
        return NULL;
    }
    return w;
}

/* Network r: x uniform on the sphere, then the weights, from the run's stream. */
static hdp_status init_mc_one(const void *vc, long r, void *vw, hdp_xoshiro *g, void *slot,
                              hdp_error *err)
{
    (void)slot;
    const init_mc_ctx *c = vc;
    init_mc_ws *w = vw;
    hdp_kl_sphere(g, c->a->d, w->x);
    hdp_kl_net_draw(&w->net, g);
    if (hdp_kl_net_jacobian(&w->net, w->x, 1, NULL, NULL, c->norms + r * c->a->L, NULL) != HDP_OK)
        return hdp_fail(err, HDP_ENOMEM, "out of memory in the Jacobian");
    return HDP_OK;
}

/* value v of run r: [l = 0] the total over the layers, [l] layer l */
static double init_mc_value(const double *norms, int L, long r, int l)
{
    if (l > 0)
        return norms[r * L + (l - 1)];
    double v = 0;
    for (int k = 0; k < L; k++)
        v += norms[r * L + k];
    return v;
}

hdp_status hdp_kl_init_mc(const hdp_kl_arch *a, long runs, unsigned long long seed, int threads,
                          hdp_kl_init_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, a);
    HDP_REQUIRE(err, res);
    memset(res, 0, sizeof *res);
    hdp_status st = arch_check(a, err);
    if (st != HDP_OK)
        return st;
    if (runs < 2)
        return hdp_fail(err, HDP_EINPUT, "[kl] init_runs = %ld: need at least 2 networks", runs);
    const int L = a->L;
    const double t0 = omp_get_wtime();
    double *norms = hdp_dalloc((size_t)runs * (size_t)L);
    if (!norms)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld networks", runs);
    /* network r: the seed's stream jumped r + 1 times */
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, (uint64_t)seed, 1);
    init_mc_ctx c = {a, norms};
    hdp_mc_loop loop = {.name = "kl init", .runs = runs,
                        .threads = hdp_mc_loop_threads(runs, threads), .ctx = &c,
                        .ws_alloc = init_mc_ws_alloc, .ws_free = init_mc_ws_free,
                        .run = init_mc_one, .first = &first};
    const int old = blas_single();
    st = hdp_mc_loop_run(&loop, err);
    blas_restore(old);
    if (st == HDP_OK) {
        res->runs = runs;
        hdp_kl_grad_norm2(a, (double)a->d, res->formula);
        for (int l = 0; l <= L; l++) {
            /* [0] the total, [l] layer l; sums in run order */
            double s = 0, ss = 0;
            for (long r = 0; r < runs; r++)
                s += init_mc_value(norms, L, r, l);
            const double mean = s / (double)runs;
            for (long r = 0; r < runs; r++) {
                const double v = init_mc_value(norms, L, r, l);
                ss += (v - mean) * (v - mean);
            }
            res->mean[l] = mean;
            res->stderr_[l] = hdp_stderr_from_ss(ss, runs);
        }
        res->z = (res->mean[0] - res->formula[0]) / res->stderr_[0];
        res->seconds = omp_get_wtime() - t0;
    }
    free(norms);
    return st;
}

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

hdp_status hdp_kl_model_check(const hdp_model *m, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    const hdp_kl_keys *kp = hdp_kl_keys_of(m);
    const double params = (double)kp->width * (double)kp->d +
                          (double)(kp->depth - 2) * (double)kp->width * (double)kp->width +
                          (double)kp->o * (double)kp->width;
    if (params > 4.0e8)
        return hdp_model_fail_key(m, "kl", "width", err,
                                  "width %ld at depth %ld, d = %ld, o = %ld gives %.3g weights "
                                  "(3.2 GB per network): at most 4e8",
                                  kp->width, kp->depth, kp->d, kp->o, params);
    if ((double)kp->n * (double)kp->o > 4000)
        return hdp_model_fail_key(m, "kl", "n", err,
                                  "n o = %ld x %ld: the NTK Gram would be %.0f x %.0f; at most "
                                  "n o = 4000",
                                  kp->n, kp->o, (double)kp->n * (double)kp->o,
                                  (double)kp->n * (double)kp->o);
    if ((double)(kp->epochs + 1) * (double)kp->n * (double)kp->inits > 2.0e7)
        return hdp_model_fail_key(m, "kl", "epochs", err,
                                  "(epochs + 1) n inits = %.3g: too large for the per-epoch "
                                  "records (at most 2e7)",
                                  (double)(kp->epochs + 1) * (double)kp->n *
                                      (double)kp->inits);
    return HDP_OK;
}

hdp_status hdp_kl_spec_check(const hdp_kl_spec *s, hdp_error *err)
{
    HDP_REQUIRE(err, s);
    hdp_status st = arch_check(&s->arch, err);
    if (st != HDP_OK)
        return st;
    if (s->n < 2)
        return hdp_fail(err, HDP_EINPUT, "[kl] n = %ld: need at least 2 samples (neighbours remove one)",
                        s->n);
    if ((double)s->n * (double)s->arch.o > 4000)
        return hdp_fail(err, HDP_EINPUT,
                        "[kl] n = %ld, o = %ld: the NTK Gram would be %ld x %ld; at most n o = 4000",
                        s->n, s->arch.o, s->n * s->arch.o, s->n * s->arch.o);
    if (!(s->sigma > 0) || !isfinite(s->sigma))
        return hdp_fail(err, HDP_EINPUT, "[kl] sigma = %g: expected a number > 0", s->sigma);
    if (!(s->eta > 0) || !isfinite(s->eta))
        return hdp_fail(err, HDP_EINPUT, "[kl] eta = %g: expected a number > 0", s->eta);
    if (s->epochs < 1 || s->epochs > 1000000)
        return hdp_fail(err, HDP_EINPUT, "[kl] epochs = %ld: expected an integer from 1 to 1e6",
                        s->epochs);
    if (s->runs < 2)
        return hdp_fail(err, HDP_EINPUT, "[kl] runs = %ld: need at least 2 noise paths", s->runs);
    if (s->inits < 1)
        return hdp_fail(err, HDP_EINPUT, "[kl] inits = %ld: need at least 1 initialisation",
                        s->inits);
    if ((double)(s->epochs + 1) * (double)s->n * (double)s->inits > 2.0e7)
        return hdp_fail(err, HDP_EINPUT,
                        "[kl] epochs x n x inits = %.3g: too large for the per-epoch records "
                        "(at most 2e7)",
                        (double)(s->epochs + 1) * (double)s->n * (double)s->inits);
    return HDP_OK;
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

void hdp_kl_problem_free(hdp_kl_problem *pb)
{
    if (!pb)
        return;
    free(pb->K), free(pb->f0), free(pb->y), free(pb->lambda), free(pb->M), free(pb->Mt_res0);
    pb->K = pb->f0 = pb->y = pb->lambda = pb->M = pb->Mt_res0 = NULL;
}

/* Build from the stream g (advanced past the weights: the caller draws the noise from it). */
static hdp_status problem_build_stream(const hdp_kl_spec *s, const double *X, const double *Y,
                                       hdp_xoshiro *g, hdp_kl_problem *pb, hdp_error *err)
{
    memset(pb, 0, sizeof *pb);
    const long n = s->n, o = s->arch.o, N = n * o;
    const int L = s->arch.L;
    hdp_kl_net net;
    hdp_status st = hdp_kl_net_alloc(&s->arch, &net, err);
    if (st != HDP_OK)
        return st;
    hdp_kl_net_draw(&net, g);
    pb->n = n, pb->o = o, pb->N = N;
    pb->K = hdp_dalloc((size_t)N * (size_t)N);
    pb->f0 = hdp_dalloc((size_t)N);
    pb->y = hdp_dalloc((size_t)N);
    pb->lambda = hdp_dalloc((size_t)N);
    pb->M = hdp_dalloc((size_t)N * (size_t)N);
    pb->Mt_res0 = hdp_dalloc((size_t)N);
    double *ln2 = hdp_dalloc((size_t)n * (size_t)L), *A = hdp_dalloc((size_t)N * (size_t)N),
           *w = hdp_dalloc((size_t)N);
    if (!pb->K || !pb->f0 || !pb->y || !pb->lambda || !pb->M || !pb->Mt_res0 || !ln2 || !A || !w) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the %ld x %ld NTK Gram", N, N);
        goto done;
    }
    memcpy(pb->y, Y, sizeof(double) * (size_t)N);
    st = hdp_kl_net_jacobian(&net, X, n, pb->f0, pb->K, ln2, err);
    if (st != HDP_OK)
        goto done;
    double g2 = 0;
    for (long i = 0; i < n * L; i++)
        g2 += ln2[i];
    pb->grad2 = g2 / (double)n;
    /* K = U diag(w) U^T; keep eigenvalues above N eps lambda_max (as rf_problem.c) */
    memcpy(A, pb->K, sizeof(double) * (size_t)N * (size_t)N);
    lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)N, A, (lapack_int)N, w);
    if (info != 0) {
        st = hdp_fail(err, info < 0 ? HDP_ENOMEM : HDP_ENUMERIC,
                      "LAPACKE_dsyevd failed on the %ld x %ld NTK Gram (info = %d)", N, N,
                      (int)info);
        goto done;
    }
    const double tol = (double)N * DBL_EPSILON * (w[N - 1] > 0 ? w[N - 1] : 0.0);
    long r = 0;
    for (long k = N - 1; k >= 0 && w[k] > tol; k--)
        pb->lambda[r++] = w[k];
    pb->r = r;
    for (long p = 0; p < N; p++)
        for (long k = 0; k < r; k++)
            pb->M[p * r + k] = A[p * N + (N - 1 - k)] * sqrt(pb->lambda[k]);
    /* M^T (f0 - y) and, for o = 1, the lazy distance of Ye et al., eq. 62 */
    double *v = w; /* reuse: N entries */
    for (long p = 0; p < N; p++)
        v[p] = pb->f0[p] - pb->y[p];
    blas_gemv(1, N, r, 1.0, pb->M, r, v, 0.0, pb->Mt_res0);
    pb->R_lazy = NAN;
    if (o == 1) {
        const double c = 2.0 * log((double)n);
        for (long p = 0; p < N; p++)
            v[p] = c * pb->y[p] - pb->f0[p];
        double *t = A; /* reuse: r entries */
        blas_gemv(1, N, r, 1.0, pb->M, r, v, 0.0, t);
        double R = 0;
        for (long k = 0; k < r; k++)
            R += t[k] * t[k] / (pb->lambda[k] * pb->lambda[k]);
        pb->R_lazy = R;
    }
done:
    hdp_kl_net_free(&net);
    free(ln2), free(A), free(w);
    if (st != HDP_OK)
        hdp_kl_problem_free(pb);
    return st;
}

hdp_status hdp_kl_problem_build(const hdp_kl_spec *s, const double *X, const double *Y,
                                long init_index, hdp_kl_problem *pb, hdp_error *err)
{
    HDP_ZERO(pb);
    HDP_REQUIRE(err, s);
    HDP_REQUIRE(err, X);
    HDP_REQUIRE(err, Y);
    HDP_REQUIRE(err, pb);
    hdp_xoshiro g;
    hdp_xoshiro_stream(&g, (uint64_t)s->seed, (uint64_t)init_index + 1);
    const int old = blas_single();
    hdp_status st = problem_build_stream(s, X, Y, &g, pb, err);
    blas_restore(old);
    return st;
}

/* E||grad L(D) - grad L(D\j)||^2 (n-1)^2 = E[v^T K v], v = E_j r - r/n, for a Gaussian
 * residual r with mean m and covariance C (kl.h, "Neighbours"):
 *   E[r_j^T K_jj r_j] - (2/n) E[r_j^T (K r)_j] + E[r^T K r] / n^2, with
 *   E[r_j^T K_jj r_j] = m_j^T K_jj m_j + tr(K_jj C_jj), E[r_j^T (K r)_j] = m_j^T (K m)_j +
 *   sum_{p in j} (K C)_pp, E[r^T K r] = m^T K m + tr(K C). Here C = M diag(c) M^T, so
 *   K C = M diag(lambda c) M^T and tr(K C) = sum_k lambda_k^2 c_k. */
hdp_status hdp_kl_problem_exact(const hdp_kl_problem *pb, double eta, double sigma,
                                long epochs, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, out);
    const long n = pb->n, o = pb->o, N = pb->N, r = pb->r;
    double *mu = hdp_dalloc((size_t)r), *c = hdp_dalloc((size_t)r), *m = hdp_dalloc((size_t)N),
           *Km = hdp_dalloc((size_t)N), *lc = hdp_dalloc((size_t)r);
    if (!mu || !c || !m || !Km || !lc) {
        free(mu), free(c), free(m), free(Km), free(lc);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    const int old = blas_single();
    const double nn1 = (double)(n - 1) * (double)(n - 1), s2 = 2.0 * eta * sigma * sigma;
    for (long k = 0; k < epochs; k++) {
        /* m = f0 - y + M mu */
        for (long p = 0; p < N; p++)
            m[p] = pb->f0[p] - pb->y[p];
        blas_gemv(0, N, r, 1.0, pb->M, r, mu, 1.0, m);
        blas_gemv(0, N, N, 1.0, pb->K, N, m, 0.0, Km);
        double mKm = 0, trKC = 0;
        for (long p = 0; p < N; p++)
            mKm += m[p] * Km[p];
        for (long q = 0; q < r; q++) {
            lc[q] = pb->lambda[q] * c[q];
            trKC += pb->lambda[q] * lc[q];
        }
        for (long j = 0; j < n; j++) {
            double a1 = 0, a2 = 0;
            for (long a = 0; a < o; a++) {
                const long p = j * o + a;
                const double *Mp = pb->M + p * r;
                for (long b = 0; b < o; b++) {
                    const long q = j * o + b;
                    const double *Mq = pb->M + q * r;
                    double Cqp = 0;
                    for (long t = 0; t < r; t++)
                        Cqp += Mq[t] * Mp[t] * c[t];
                    a1 += m[p] * pb->K[p * N + q] * m[q] + pb->K[p * N + q] * Cqp;
                }
                double KCpp = 0;
                for (long t = 0; t < r; t++)
                    KCpp += Mp[t] * Mp[t] * lc[t];
                a2 += m[p] * Km[p] + KCpp;
            }
            out[k * n + j] = (a1 - 2.0 / (double)n * a2 + (mKm + trKC) / ((double)n * (double)n)) / nn1;
        }
        /* the OU recursion in z (diagonal): mu <- a mu - eta b / n, c <- a^2 c + 2 eta sigma^2 */
        for (long q = 0; q < r; q++) {
            const double a = 1.0 - eta * pb->lambda[q] / (double)n;
            mu[q] = a * mu[q] - eta * pb->Mt_res0[q] / (double)n;
            c[q] = a * a * c[q] + s2;
        }
    }
    blas_restore(old);
    free(mu), free(c), free(m), free(Km), free(lc);
    return HDP_OK;
}

/* The Hessian H' = (Lambda - M_j^T M_j)/(n-1) and gradient at z = 0, b' = (M^T (f0-y) -
 * M_j^T (f0-y)_j)/(n-1), of the squared loss on D\j in the z coordinates. */
static void neighbour_quadratic(const hdp_kl_problem *pb, long j, double *H, double *b)
{
    const long n = pb->n, o = pb->o, r = pb->r;
    const double inv = 1.0 / (double)(n - 1);
    for (long p = 0; p < r; p++)
        for (long q = 0; q < r; q++) {
            double s = p == q ? pb->lambda[p] : 0.0;
            for (long a = 0; a < o; a++) {
                const double *Mj = pb->M + (j * o + a) * r;
                s -= Mj[p] * Mj[q];
            }
            H[p * r + q] = s * inv;
        }
    for (long p = 0; p < r; p++) {
        double s = pb->Mt_res0[p];
        for (long a = 0; a < o; a++) {
            const long q = j * o + a;
            s -= pb->M[q * r + p] * (pb->f0[q] - pb->y[q]);
        }
        b[p] = s * inv;
    }
}

/* The law of z_k is N(mu_k, diag(c_k)) on D and N(Q wbar_k, Q diag(v_k) Q^T) on D\j, with
 * H' = Q diag(h) Q^T, wbar_{k+1} = (1 - eta h) wbar_k - eta Q^T b', v_{k+1} = (1 - eta h)^2 v_k +
 * 2 eta sigma^2. KL(N_D | N_D\j) = (1/2) [sum_t (s_t/v_t - 1 - ln(s_t/v_t)) + (sum_t ln s_t -
 * sum_i ln c_i) + sum_t (wbar_t - (Q^T mu)_t)^2 / v_t], s_t = sum_i Q_it^2 c_i: the Gaussian KL
 * with the trace and log-determinant terms grouped so that no large terms cancel. */
hdp_status hdp_kl_problem_final_kl(const hdp_kl_problem *pb, double eta, double sigma,
                                   long epochs, long j, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, out);
    const long n = pb->n, r = pb->r;
    if (j < 0 || j >= n)
        return hdp_fail(err, HDP_EINPUT, "sample %ld out of range", j);
    double *H = hdp_dalloc((size_t)r * (size_t)r), *b = hdp_dalloc((size_t)r), *h = hdp_dalloc((size_t)r),
           *Qb = hdp_dalloc((size_t)r), *wbar = hdp_dalloc((size_t)r), *v = hdp_dalloc((size_t)r),
           *mu = hdp_dalloc((size_t)r), *c = hdp_dalloc((size_t)r), *Qmu = hdp_dalloc((size_t)r);
    if (!H || !b || !h || !Qb || !wbar || !v || !mu || !c || !Qmu) {
        free(H), free(b), free(h), free(Qb), free(wbar), free(v), free(mu), free(c), free(Qmu);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    const int old = blas_single();
    hdp_status st = HDP_OK;
    neighbour_quadratic(pb, j, H, b);
    lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)r, H, (lapack_int)r, h);
    if (info != 0) {
        st = hdp_fail(err, HDP_ENUMERIC, "LAPACKE_dsyevd failed on the Hessian of D\\j (info = %d)",
                      (int)info);
        goto done;
    }
    /* H now holds Q (columns = eigenvectors) */
    blas_gemv(1, r, r, 1.0, H, r, b, 0.0, Qb);
    const double s2 = 2.0 * eta * sigma * sigma;
    for (long k = 1; k <= epochs; k++) {
        for (long q = 0; q < r; q++) {
            const double a = 1.0 - eta * pb->lambda[q] / (double)n;
            mu[q] = a * mu[q] - eta * pb->Mt_res0[q] / (double)n;
            c[q] = a * a * c[q] + s2;
            const double a2 = 1.0 - eta * h[q];
            wbar[q] = a2 * wbar[q] - eta * Qb[q];
            v[q] = a2 * a2 * v[q] + s2;
        }
        blas_gemv(1, r, r, 1.0, H, r, mu, 0.0, Qmu);
        double t1 = 0, lsum = 0, lc = 0, quad = 0;
        for (long t = 0; t < r; t++) {
            double s = 0;
            for (long i = 0; i < r; i++)
                s += H[i * r + t] * H[i * r + t] * c[i];
            const double x = s / v[t];
            t1 += (x - 1.0) - log1p(x - 1.0);
            /* cppcheck-suppress invalidFunctionArg ; s >= min_i c_i >= 2 eta sigma^2 > 0 (sum_i Q_it^2 = 1) */
            lsum += log(s);
            lc += log(c[t]);
            quad += (wbar[t] - Qmu[t]) * (wbar[t] - Qmu[t]) / v[t];
        }
        out[k - 1] = 0.5 * (t1 + (lsum - lc) + quad);
    }
done:
    blas_restore(old);
    free(H), free(b), free(h), free(Qb), free(wbar), free(v), free(mu), free(c), free(Qmu);
    return st;
}

hdp_status hdp_kl_problem_joint(const hdp_kl_problem *pb, double eta, double sigma, long K,
                                long j, int which, double *mean, double *cov, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, mean);
    HDP_REQUIRE(err, cov);
    const long n = pb->n, r = pb->r, dim = K * r;
    double *A = hdp_dalloc((size_t)r * (size_t)r), *b = hdp_dalloc((size_t)r), *C = hdp_dalloc((size_t)r * r),
           *T = hdp_dalloc((size_t)r * (size_t)r), *z = hdp_dalloc((size_t)r), *zn = hdp_dalloc((size_t)r);
    if (!A || !b || !C || !T || !z || !zn) {
        free(A), free(b), free(C), free(T), free(z), free(zn);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    /* the recursion z_{k+1} = A z_k - eta b + sqrt(2 eta sigma^2) xi with A = I - eta H */
    if (which == 0) {
        for (long p = 0; p < r; p++) {
            for (long q = 0; q < r; q++)
                A[p * r + q] = p == q ? 1.0 - eta * pb->lambda[p] / (double)n : 0.0;
            b[p] = pb->Mt_res0[p] / (double)n;
        }
    } else {
        neighbour_quadratic(pb, j, A, b);
        for (long p = 0; p < r * r; p++)
            A[p] = (p % (r + 1) == 0 ? 1.0 : 0.0) - eta * A[p];
    }
    const int old = blas_single();
    const double s2 = 2.0 * eta * sigma * sigma;
    memset(cov, 0, sizeof(double) * (size_t)dim * (size_t)dim);
    for (long k = 0; k < K; k++) {
        /* mean and covariance of z_{k+1} */
        blas_gemv(0, r, r, 1.0, A, r, z, 0.0, zn);
        for (long p = 0; p < r; p++)
            z[p] = zn[p] - eta * b[p];
        memcpy(mean + k * r, z, sizeof(double) * (size_t)r);
        blas_gemm(0, 0, r, r, r, 1.0, A, r, C, r, 0.0, T, r);
        blas_gemm(0, 1, r, r, r, 1.0, T, r, A, r, 0.0, C, r);
        for (long p = 0; p < r; p++)
            C[p * r + p] += s2;
        /* block (k, k) = C; blocks (l, k) for l > k: A^(l-k) C */
        memcpy(T, C, sizeof(double) * (size_t)r * (size_t)r);
        for (long l = k; l < K; l++) {
            if (l > k) {
                double *U = hdp_dalloc((size_t)r * (size_t)r);
                if (!U) {
                    blas_restore(old);
                    free(A), free(b), free(C), free(T), free(z), free(zn);
                    return hdp_fail(err, HDP_ENOMEM, "out of memory");
                }
                blas_gemm(0, 0, r, r, r, 1.0, A, r, T, r, 0.0, U, r);
                memcpy(T, U, sizeof(double) * (size_t)r * (size_t)r);
                free(U);
            }
            for (long p = 0; p < r; p++)
                for (long q = 0; q < r; q++) {
                    cov[(l * r + p) * dim + (k * r + q)] = T[p * r + q];
                    cov[(k * r + q) * dim + (l * r + p)] = T[p * r + q];
                }
        }
    }
    blas_restore(old);
    free(A), free(b), free(C), free(T), free(z), free(zn);
    return HDP_OK;
}

hdp_status hdp_kl_gauss(long dim, const double *mu1, const double *S1, const double *mu2,
                        const double *S2, double *kl, hdp_error *err)
{
    HDP_REQUIRE(err, mu1);
    HDP_REQUIRE(err, S1);
    HDP_REQUIRE(err, mu2);
    HDP_REQUIRE(err, S2);
    HDP_REQUIRE(err, kl);
    double *L1 = hdp_dalloc((size_t)dim * (size_t)dim), *L2 = hdp_dalloc((size_t)dim * (size_t)dim),
           *dm = hdp_dalloc((size_t)dim);
    if (!L1 || !L2 || !dm) {
        free(L1), free(L2), free(dm);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a %ld-dimensional Gaussian", dim);
    }
    memcpy(L1, S1, sizeof(double) * (size_t)dim * (size_t)dim);
    memcpy(L2, S2, sizeof(double) * (size_t)dim * (size_t)dim);
    hdp_status st = HDP_OK;
    const int old = blas_single();
    lapack_int i1 = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)dim, L1, (lapack_int)dim);
    lapack_int i2 = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)dim, L2, (lapack_int)dim);
    if (i1 != 0 || i2 != 0) {
        st = hdp_fail(err, HDP_ENUMERIC, "a covariance is not positive definite (dpotrf %d, %d)",
                      (int)i1, (int)i2);
        goto done;
    }
    double ld1 = 0, ld2 = 0;
    for (long p = 0; p < dim; p++) {
        ld1 += 2.0 * log(L1[p * dim + p]);
        ld2 += 2.0 * log(L2[p * dim + p]);
        for (long q = p + 1; q < dim; q++)
            L1[p * dim + q] = 0.0; /* dpotrf leaves the other triangle */
    }
    /* tr(S2^-1 S1) = ||L2^-1 L1||_F^2, quadratic = ||L2^-1 (mu2 - mu1)||^2 */
    for (long p = 0; p < dim; p++)
        dm[p] = mu2[p] - mu1[p];
    lapack_int i3 = LAPACKE_dtrtrs(LAPACK_ROW_MAJOR, 'L', 'N', 'N', (lapack_int)dim,
                                   (lapack_int)dim, L2, (lapack_int)dim, L1, (lapack_int)dim);
    lapack_int i4 = LAPACKE_dtrtrs(LAPACK_ROW_MAJOR, 'L', 'N', 'N', (lapack_int)dim, 1, L2,
                                   (lapack_int)dim, dm, 1);
    if (i3 != 0 || i4 != 0) {
        st = hdp_fail(err, HDP_ENUMERIC, "triangular solve failed (dtrtrs %d, %d)", (int)i3, (int)i4);
        goto done;
    }
    double tr = 0, quad = 0;
    for (long p = 0; p < dim * dim; p++)
        tr += L1[p] * L1[p];
    for (long p = 0; p < dim; p++)
        quad += dm[p] * dm[p];
    *kl = 0.5 * (tr + quad - (double)dim + ld2 - ld1);
done:
    blas_restore(old);
    free(L1), free(L2), free(dm);
    return st;
}

/* ---- the driver ---- */

/* l(f; y) and l'(f; y) per output: squared |f - y|^2/2, logistic log(1 + exp(-y f)) */
static inline double loss_value(hdp_kl_loss_kind k, double f, double y)
{
    if (k == HDP_KL_SQUARED)
        return 0.5 * (f - y) * (f - y);
    const double t = -y * f;
    return t > 0 ? t + log1p(exp(-t)) : log1p(exp(t));
}

static inline double loss_deriv(hdp_kl_loss_kind k, double f, double y)
{
    if (k == HDP_KL_SQUARED)
        return f - y;
    const double t = y * f; /* l' = -y sigmoid(-y f) = -y / (1 + exp(y f)) */
    return t > 0 ? -y * exp(-t) / (1.0 + exp(-t)) : -y / (1.0 + exp(t));
}

/* Per-initialisation output of the driver. */
typedef struct {
    double *sum, *sum2; /* [(epochs+1) x n]: over paths, of S_j = sum_{k<e} eta ||Delta_j||^2 */
    double *exact;      /* [(epochs+1) x n]: exact cumulative (squared loss) */
    double *loss;       /* [epochs+1]: mean training loss over paths */
    hdp_kl_problem pb;
    int unstable;
    double eta_lmax;
} init_out;

/* what the initialisations read */
typedef struct {
    const hdp_kl_spec *s;
    const double *X, *Y;
} init_ctx;

/* Squared loss: the exact cumulative trajectory KL (times c sigma^2) of every sample from the
 * OU moments, into io->exact. */
static hdp_status exact_cumulative(const hdp_kl_spec *s, init_out *io, hdp_error *err)
{
    const long n = s->n, E = s->epochs;
    double *e = hdp_dalloc((size_t)E * (size_t)n);
    if (!e)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    hdp_status st = hdp_kl_problem_exact(&io->pb, s->eta, s->sigma, E, e, err);
    if (st == HDP_OK) {
        for (long j = 0; j < n; j++)
            io->exact[j] = 0.0;
        for (long k = 0; k < E; k++)
            for (long j = 0; j < n; j++)
                io->exact[(k + 1) * n + j] = io->exact[k * n + j] + s->eta * e[k * n + j];
    }
    free(e);
    return st;
}

/* the arrays of the noise paths of one initialisation */
typedef struct {
    double *Z, *U, *Gz, *KQ; /* [r x P], [N x P], [r x P], [N x P] */
    double *S;               /* [P x n] cumulative S_j per path */
    double *Kd;              /* [n x o x o] the diagonal blocks of K */
} paths_ws;

static void paths_free(paths_ws *w)
{
    free(w->Z), free(w->U), free(w->Gz), free(w->KQ), free(w->S), free(w->Kd);
}

static hdp_status paths_alloc(const hdp_kl_spec *s, const hdp_kl_problem *pb, paths_ws *w,
                              hdp_error *err)
{
    const long n = s->n, o = s->arch.o, N = n * o, P = s->runs, r = pb->r;
    w->Z = hdp_dalloc((size_t)r * (size_t)P), w->U = hdp_dalloc((size_t)N * (size_t)P);
    w->Gz = hdp_dalloc((size_t)r * (size_t)P), w->KQ = hdp_dalloc((size_t)N * (size_t)P);
    w->S = hdp_dalloc((size_t)P * (size_t)n), w->Kd = hdp_dalloc((size_t)n * (size_t)o * (size_t)o);
    if (!w->Z || !w->U || !w->Gz || !w->KQ || !w->S || !w->Kd) {
        paths_free(w);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld noise paths", P);
    }
    for (long j = 0; j < n; j++)
        for (long a = 0; a < o; a++)
            for (long b = 0; b < o; b++)
                w->Kd[(j * o + a) * o + b] = pb->K[(j * o + a) * N + (j * o + b)];
    return HDP_OK;
}

/* S_j += eta ||Delta_j||^2 for every path q and sample j, from Q = l'(U; y) (in w->U), the
 * gradient Gz and KQ = K Q: ||Delta_j||^2 = (q_j^T K_jj q_j - 2/n q_j^T (K q)_j
 * + q^T K q / n^2) / (n - 1)^2 */
static void add_gradient_differences(const hdp_kl_spec *s, long r, paths_ws *w)
{
    const long n = s->n, o = s->arch.o, P = s->runs;
    const double nn = (double)n, nn1 = (double)(n - 1) * (double)(n - 1);
    const double *U = w->U, *Kd = w->Kd, *KQ = w->KQ, *Gz = w->Gz;
    for (long q = 0; q < P; q++) {
        double g2 = 0;
        for (long t = 0; t < r; t++)
            g2 += Gz[t * P + q] * Gz[t * P + q];
        const double qKq = nn * nn * g2;
        double *Sq = w->S + q * n;
        for (long j = 0; j < n; j++) {
            double a1 = 0, a2 = 0;
            for (long a = 0; a < o; a++) {
                const double qa = U[(j * o + a) * P + q];
                for (long b = 0; b < o; b++)
                    a1 += qa * Kd[(j * o + a) * o + b] * U[(j * o + b) * P + q];
                a2 += qa * KQ[(j * o + a) * P + q];
            }
            const double d2 = (a1 - 2.0 / nn * a2 + qKq / (nn * nn)) / nn1;
            Sq[j] += s->eta * d2;
        }
    }
}

/* All noise paths of one initialisation at once, epoch by epoch from the stream g: the loss,
 * the sums over paths of S_j and S_j^2 (io->sum, io->sum2) and the noisy GD step in z. */
static hdp_status noise_paths(const hdp_kl_spec *s, long idx, hdp_xoshiro *g, init_out *io,
                              hdp_error *err)
{
    const hdp_kl_problem *pb = &io->pb;
    const long n = s->n, N = n * s->arch.o, E = s->epochs, P = s->runs, r = pb->r;
    paths_ws w;
    hdp_status st = paths_alloc(s, pb, &w, err);
    if (st != HDP_OK)
        return st;
    const double nn = (double)n;
    const double noise = sqrt(2.0 * s->eta * s->sigma * s->sigma);
    for (long k = 0; k <= E && st == HDP_OK; k++) {
        /* U = f0 + M Z, then Q = l'(U; y) in place; the loss at iterate k */
        blas_gemm(0, 0, N, P, r, 1.0, pb->M, r, w.Z, P, 0.0, w.U, P);
        double lsum = 0;
        for (long p = 0; p < N; p++)
            for (long q = 0; q < P; q++) {
                const double f = pb->f0[p] + w.U[p * P + q];
                lsum += loss_value(s->loss, f, pb->y[p]);
                w.U[p * P + q] = loss_deriv(s->loss, f, pb->y[p]);
            }
        io->loss[k] = lsum / (nn * (double)P);
        if (k == E)
            break;
        /* Gz = M^T Q / n (the gradient in z), KQ = K Q = n M Gz */
        blas_gemm(1, 0, r, P, N, 1.0 / nn, pb->M, r, w.U, P, 0.0, w.Gz, P);
        blas_gemm(0, 0, N, P, r, nn, pb->M, r, w.Gz, P, 0.0, w.KQ, P);
        add_gradient_differences(s, r, &w);
        double *sum = io->sum + (k + 1) * n, *sum2 = io->sum2 + (k + 1) * n;
        for (long q = 0; q < P; q++)
            for (long j = 0; j < n; j++) {
                const double v = w.S[q * n + j];
                sum[j] += v;
                sum2[j] += v * v;
            }
        for (long j = 0; j < n; j++)
            if (!isfinite(sum[j])) {
                st = hdp_fail(err, HDP_ENUMERIC,
                              "non-finite gradient difference at epoch %ld (initialisation "
                              "%ld): lower [kl] eta",
                              k, idx);
                break;
            }
        /* Z <- Z - eta Gz + sqrt(2 eta sigma^2) xi */
        for (long t = 0; t < r * P; t++)
            w.Z[t] += -s->eta * w.Gz[t] + noise * hdp_rng_normal_fast(g);
    }
    paths_free(&w);
    return st;
}

/* Initialisation idx on its stream g (the seed's stream jumped idx + 1 times): build, exact
 * moments (squared), then all noise paths at once, into its slot io. */
static hdp_status run_one(const void *vc, long idx, void *ws, hdp_xoshiro *g, void *slot,
                          hdp_error *err)
{
    (void)ws;
    const init_ctx *c = vc;
    const hdp_kl_spec *s = c->s;
    init_out *io = slot;
    hdp_status st = problem_build_stream(s, c->X, c->Y, g, &io->pb, err);
    if (st != HDP_OK)
        return st;
    const long r = io->pb.r;
    io->eta_lmax = r > 0 ? s->eta * io->pb.lambda[0] / (double)s->n : 0.0;
    if (s->loss == HDP_KL_SQUARED && io->eta_lmax >= 2.0) {
        io->unstable = 1; /* the OU recursion diverges: nothing to simulate */
        return HDP_OK;
    }
    if (s->loss == HDP_KL_SQUARED && (st = exact_cumulative(s, io, err)) != HDP_OK)
        return st;
    return noise_paths(s, idx, g, io, err);
}

void hdp_kl_run_result_free(hdp_kl_run_result *res)
{
    if (!res)
        return;
    free(res->kl_mc), free(res->kl_mc_se), free(res->kl_mc_se_path), free(res->kl_init_sd);
    free(res->kl_mc_max), free(res->kl_exact), free(res->kl_final), free(res->train_loss);
    res->kl_mc = res->kl_mc_se = res->kl_mc_se_path = res->kl_init_sd = NULL;
    res->kl_mc_max = res->kl_exact = res->kl_final = res->train_loss = NULL;
}

/* the result's arrays and the initialisations' records; 0 when out of memory */
static int run_alloc(const hdp_kl_spec *s, hdp_kl_run_result *res, init_out *io)
{
    const long n = s->n, E = s->epochs, NI = s->inits;
    const size_t rec = (size_t)(E + 1) * (size_t)n;
    double **arrays[] = {&res->kl_mc,     &res->kl_mc_se,  &res->kl_mc_se_path,
                         &res->kl_init_sd, &res->kl_mc_max, &res->kl_exact,
                         &res->kl_final,  &res->train_loss};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (!(*arrays[i] = hdp_dalloc((size_t)E + 1)))
            return 0;
    for (long i = 0; i < NI; i++) {
        io[i].sum = hdp_dalloc(rec), io[i].sum2 = hdp_dalloc(rec), io[i].exact = hdp_dalloc(rec);
        io[i].loss = hdp_dalloc((size_t)E + 1);
        if (!io[i].sum || !io[i].sum2 || !io[i].exact || !io[i].loss)
            return 0;
    }
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

/* ---- noisy GD on the real ReLU network (kl.network = relu) ---- */

/* the buffers of one gradient pass over n samples */
typedef struct {
    long n;
    double *H[HDP_KL_MAX_DEPTH + 1]; /* H[l] (n x m_l) post-activations, l = 1..L-1; H[0] = X */
    double *E, *En, *T;              /* n x max width: errors of the layer, next, E grad_l */
    double *g2, *gG;                 /* [n]: ||G_j||^2, <G_j, grad L> */
} net_pass;

static void net_pass_free(net_pass *p)
{
    for (int l = 1; l <= HDP_KL_MAX_DEPTH; l++) {
        free(p->H[l]);
        p->H[l] = NULL;
    }
    free(p->E), free(p->En), free(p->T), free(p->g2), free(p->gG);
    p->E = p->En = p->T = p->g2 = p->gG = NULL;
}

static int net_pass_alloc(const hdp_kl_net *net, long n, net_pass *p)
{
    memset(p, 0, sizeof *p);
    const int L = net->arch.L;
    long wmax = 0;
    for (int l = 0; l <= L; l++)
        wmax = net->w[l] > wmax ? net->w[l] : wmax;
    p->n = n;
    int ok = (p->E = hdp_dalloc((size_t)n * (size_t)wmax)) && (p->En = hdp_dalloc((size_t)n * (size_t)wmax)) &&
             (p->T = hdp_dalloc((size_t)n * (size_t)wmax)) && (p->g2 = hdp_dalloc((size_t)n)) &&
             (p->gG = hdp_dalloc((size_t)n));
    for (int l = 1; l < L && ok; l++)
        ok = (p->H[l] = hdp_dalloc((size_t)n * (size_t)net->w[l])) != NULL;
    if (!ok)
        net_pass_free(p);
    return ok;
}

/* hdp_kl_net_gradient with the caller's buffers (kl.h): returns the loss */
static double net_gradient(const hdp_kl_net *net, const double *X, const double *Y,
                           hdp_kl_loss_kind loss, net_pass *p, hdp_kl_net *grad, double *diff2)
{
    const int L = net->arch.L;
    const long n = p->n, o = net->arch.o, *w = net->w;
    const double nn = (double)n;
    p->H[0] = (double *)X;
    /* forward: H_l = relu(H_{l-1} W_l^T); outputs H_{L-1} W_L^T into E (n x o) */
    for (int l = 1; l < L; l++) {
        blas_gemm(0, 1, n, w[l], w[l - 1], 1.0, p->H[l - 1], w[l - 1], net->W[l], w[l - 1], 0.0,
                  p->H[l], w[l]);
        const long len = n * w[l];
        double *h = p->H[l];
        for (long i = 0; i < len; i++)
            h[i] = h[i] > 0 ? h[i] : 0.0;
    }
    blas_gemm(0, 1, n, o, w[L - 1], 1.0, p->H[L - 1], w[L - 1], net->W[L], w[L - 1], 0.0, p->E, o);
    /* the loss and e_{i,L} = l'(f(x_i); y_i) in place */
    double lsum = 0;
    for (long t = 0; t < n * o; t++) {
        lsum += loss_value(loss, p->E[t], Y[t]);
        p->E[t] = loss_deriv(loss, p->E[t], Y[t]);
    }
    memset(p->g2, 0, sizeof(double) * (size_t)n);
    memset(p->gG, 0, sizeof(double) * (size_t)n);
    double gbar2 = 0;
    for (int l = L; l >= 1; l--) {
        const long ml = w[l], mp = w[l - 1];
        const double *Hp = p->H[l - 1];
        double *G = grad->W[l];
        /* grad_l = E_l^T H_{l-1} / n */
        blas_gemm(1, 0, ml, mp, n, 1.0 / nn, p->E, ml, Hp, mp, 0.0, G, mp);
        for (long t = 0; t < ml * mp; t++)
            gbar2 += G[t] * G[t];
        if (diff2) {
            /* ||G_{j,l}||^2 = ||e_{j,l}||^2 ||h_{j,l-1}||^2; <G_{j,l}, grad_l> = (E_l grad_l)_j . h_j */
            blas_gemm(0, 0, n, mp, ml, 1.0, p->E, ml, G, mp, 0.0, p->T, mp);
            for (long i = 0; i < n; i++) {
                double e2 = 0, h2 = 0, eg = 0;
                for (long k = 0; k < ml; k++)
                    e2 += p->E[i * ml + k] * p->E[i * ml + k];
                for (long k = 0; k < mp; k++) {
                    h2 += Hp[i * mp + k] * Hp[i * mp + k];
                    eg += p->T[i * mp + k] * Hp[i * mp + k];
                }
                p->g2[i] += e2 * h2;
                p->gG[i] += eg;
            }
        }
        if (l > 1) {
            /* e_{l-1} = 1[h_{l-1} > 0] .* (E_l W_l) */
            blas_gemm(0, 0, n, mp, ml, 1.0, p->E, ml, net->W[l], mp, 0.0, p->En, mp);
            for (long t = 0; t < n * mp; t++)
                if (!(Hp[t] > 0))
                    p->En[t] = 0.0;
            double *s = p->E;
            p->E = p->En;
            p->En = s;
        }
    }
    if (diff2) {
        const double nn1 = (nn - 1.0) * (nn - 1.0);
        for (long j = 0; j < n; j++)
            diff2[j] = (p->g2[j] - 2.0 * p->gG[j] + gbar2) / nn1;
    }
    return lsum / nn;
}

hdp_status hdp_kl_net_gradient(const hdp_kl_net *net, const double *X, const double *Y, long n,
                               hdp_kl_loss_kind loss, double *loss_value_out, hdp_kl_net *grad,
                               double *diff2, hdp_error *err)
{
    HDP_REQUIRE(err, net);
    HDP_REQUIRE(err, X);
    HDP_REQUIRE(err, Y);
    HDP_REQUIRE(err, loss_value_out);
    HDP_REQUIRE(err, grad);
    if (n < 2)
        return hdp_fail(err, HDP_EINPUT, "hdp_kl_net_gradient: n = %ld: need at least 2 samples", n);
    for (int l = 1; l <= net->arch.L; l++)
        if (!grad->W[l] || grad->w[l] != net->w[l] || grad->w[l - 1] != net->w[l - 1])
            return hdp_fail(err, HDP_EINPUT,
                            "hdp_kl_net_gradient: grad is not a net of the same architecture");
    net_pass p;
    if (!net_pass_alloc(net, n, &p))
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a gradient pass over %ld samples", n);
    const int old = blas_single();
    *loss_value_out = net_gradient(net, X, Y, loss, &p, grad, diff2);
    blas_restore(old);
    net_pass_free(&p);
    return HDP_OK;
}

/* a thread's workspace for the real network: the weights, W_0, the gradient, a pass */
typedef struct {
    hdp_kl_net net, net0, grad;
    net_pass pass;
    double *diff2, *S, *xi; /* [n], [n], [max layer size] */
    double *ln2;            /* [n x L] ||J_l(x_i)||^2 at W_0 */
} relu_ws;

static void relu_ws_free(void *vw)
{
    relu_ws *w = vw;
    if (!w)
        return;
    hdp_kl_net_free(&w->net), hdp_kl_net_free(&w->net0), hdp_kl_net_free(&w->grad);
    net_pass_free(&w->pass);
    free(w->diff2), free(w->S), free(w->xi), free(w->ln2);
    free(w);
}

static void *relu_ws_alloc(const void *vc)
{
    const hdp_kl_spec *s = ((const init_ctx *)vc)->s;
    relu_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (hdp_kl_net_alloc(&s->arch, &w->net, NULL) != HDP_OK ||
        hdp_kl_net_alloc(&s->arch, &w->net0, NULL) != HDP_OK ||
        hdp_kl_net_alloc(&s->arch, &w->grad, NULL) != HDP_OK ||
        !net_pass_alloc(&w->net, s->n, &w->pass)) {
        relu_ws_free(w);
        return NULL;
    }
    long big = 0;
    for (int l = 1; l <= s->arch.L; l++)
        big = w->net.w[l] * w->net.w[l - 1] > big ? w->net.w[l] * w->net.w[l - 1] : big;
    w->diff2 = hdp_dalloc((size_t)s->n), w->S = hdp_dalloc((size_t)s->n);
    w->xi = hdp_dalloc((size_t)big), w->ln2 = hdp_dalloc((size_t)s->n * (size_t)s->arch.L);
    if (!w->diff2 || !w->S || !w->xi || !w->ln2) {
        relu_ws_free(w);
        return NULL;
    }
    return w;
}

/* Initialisation idx of the real network on its stream g: W_0 (the same draws as the
 * linearised run's), its ||J(x_i)||^2, then the noise paths one after the other from the block
 * Gaussian stream started at g; the sums over paths of S_j and S_j^2 and the mean loss into io. */
static hdp_status relu_run_one(const void *vc, long idx, void *vw, hdp_xoshiro *g, void *slot,
                               hdp_error *err)
{
    const init_ctx *c = vc;
    const hdp_kl_spec *s = c->s;
    relu_ws *w = vw;
    init_out *io = slot;
    const int L = s->arch.L;
    const long n = s->n, E = s->epochs, P = s->runs;
    hdp_kl_net_draw(&w->net0, g);
    if (hdp_kl_net_jacobian(&w->net0, c->X, n, NULL, NULL, w->ln2, err) != HDP_OK)
        return HDP_ENOMEM;
    double g2 = 0;
    for (long i = 0; i < n * L; i++)
        g2 += w->ln2[i];
    io->pb.grad2 = g2 / (double)n;
    io->pb.R_lazy = NAN;
    io->eta_lmax = NAN;
    hdp_normals nrm;
    hdp_normals_init(&nrm, g);
    const double noise = sqrt(2.0 * s->eta * s->sigma * s->sigma);
    for (long q = 0; q < P; q++) {
        for (int l = 1; l <= L; l++)
            memcpy(w->net.W[l], w->net0.W[l], sizeof(double) * (size_t)(w->net.w[l] * w->net.w[l - 1]));
        memset(w->S, 0, sizeof(double) * (size_t)n);
        for (long k = 0; k <= E; k++) {
            const double lv = net_gradient(&w->net, c->X, c->Y, s->loss, &w->pass, &w->grad,
                                           k < E ? w->diff2 : NULL);
            io->loss[k] += lv / (double)P;
            if (k == E)
                break;
            double *sum = io->sum + (k + 1) * n, *sum2 = io->sum2 + (k + 1) * n;
            for (long j = 0; j < n; j++) {
                w->S[j] += s->eta * w->diff2[j];
                sum[j] += w->S[j];
                sum2[j] += w->S[j] * w->S[j];
            }
            if (!isfinite(lv) || !isfinite(sum[0]))
                return hdp_fail(err, HDP_ENUMERIC,
                                "non-finite loss or gradient of the ReLU network at epoch %ld "
                                "(initialisation %ld, path %ld): lower [kl] eta",
                                k, idx, q);
            /* W <- W - eta grad L + sqrt(2 eta sigma^2) xi */
            for (int l = 1; l <= L; l++) {
                const long len = w->net.w[l] * w->net.w[l - 1];
                double *Wl = w->net.W[l];
                const double *G = w->grad.W[l];
                hdp_normals_fill(&nrm, w->xi, len);
                for (long t = 0; t < len; t++)
                    Wl[t] += -s->eta * G[t] + noise * w->xi[t];
            }
        }
    }
    return HDP_OK;
}

/*
 * The driver: the data, then every initialisation on its own stream (the generic Monte Carlo
 * loop; each initialisation runs all its noise paths at once), then the statistics over the
 * initialisations in order, then (squared loss) the exact final-iterate KL for j*.
 */
hdp_status hdp_kl_run(const hdp_kl_spec *s, int threads, hdp_kl_run_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, s);
    HDP_REQUIRE(err, res);
    memset(res, 0, sizeof *res);
    hdp_status st = hdp_kl_spec_check(s, err);
    if (st != HDP_OK)
        return st;
    const double t0 = omp_get_wtime();
    const long n = s->n, o = s->arch.o, E = s->epochs, NI = s->inits, P = s->runs;
    const size_t rec = (size_t)(E + 1) * (size_t)n;
    double *X = hdp_dalloc((size_t)n * (size_t)s->arch.d), *Y = hdp_dalloc((size_t)n * (size_t)o);
    init_out *io = calloc((size_t)NI, sizeof *io);
    res->epochs = E, res->n = n, res->inits = NI, res->runs = P;
    double *mean_i = hdp_dalloc((size_t)NI), *grand = hdp_dalloc(rec), *exact = hdp_dalloc(rec);
    if (!X || !Y || !io || !mean_i || !grand || !exact || !run_alloc(s, res, io)) {
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
                        .ws_alloc = relu ? relu_ws_alloc : NULL,
                        .ws_free = relu ? relu_ws_free : NULL, .run = relu ? relu_run_one : run_one,
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
                res->kl_mc_max[k] = res->kl_exact[k] = res->kl_final[k] = res->train_loss[k] = NAN;
        res->worst = -1;
        goto done;
    }
    res->worst = run_statistics(s, io, res, grand, exact, mean_i);
    if (s->loss == HDP_KL_SQUARED && !relu)
        st = run_final_kl(s, threads, io, res->worst, res, err);
done:
    res->seconds = omp_get_wtime() - t0;
    for (long i = 0; io && i < NI; i++) {
        free(io[i].sum), free(io[i].sum2), free(io[i].exact), free(io[i].loss);
        hdp_kl_problem_free(&io[i].pb);
    }
    free(io), free(X), free(Y), free(mean_i), free(grand), free(exact);
    if (st != HDP_OK)
        hdp_kl_run_result_free(res);
    return st;
}
