/*
 * nc.c — NoisyGD / NoisySGD on neural-collapse features (the NC paper; docs/theory.md §6 and §8).
 * See hdpsgd/nc.h for the model, the perturbations, the remedies and the conventions.
 *
 * ---- The exact one-step error (docs/theory.md §8), derived here because the NC paper's Theorem 2
 * ---- has algebra slips.
 * One NoisyGD step from W_0 = 0 with learning rate eta on the sum loss, training features
 * z_k (class k, n_k samples), clipping factors c_k = min(1, G/||g_k||):
 *     W_1 = -eta (S + Xi),   S = sum_k n_k c_k r_k z_k^T,   Xi_ij ~ N(0, sigma^2) i.i.d.,
 * where r_k is the residual of the loss at zero scores: 1/K 1 - e_k (ce, softmax(0) = 1/K),
 * -e_k (squared), -y_k/2 (logistic). On a test point z the scores are
 *     W_1 z = -eta (S z + Xi z),   Xi z ~ N(0, sigma^2 ||z||^2 I_K)  (rows of Xi independent),
 * and eta > 0 only rescales them: the error does not depend on eta. With mu = -S z_c and
 * tau = sigma ||z_c||, class c is classified correctly iff mu_c + tau Z_c > mu_j + tau Z_j
 * for every j != c; conditioning on Z_c, the other Z_j are independent:
 *     P(error | c) = 1 - E_Z prod_{j != c} Phi(Z + (mu_c - mu_j)/tau).            (*)
 * Perfect collapse, z_k = M_k, M_k^T M_c = K/(K-1) (delta_kc - 1/K):
 *     mu_j = -sum_k n_k c (r_k)_j K/(K-1) (delta_kc - 1/K)
 *          = c K/(K-1) (n_c delta_jc - n_j/K) + (a constant in j)     (ce and squared alike),
 * so mu_c - mu_j = c (n_c + n_j/(K-1)), and with balanced classes (n_k = n/K)
 *     mu_c - mu_j = c n/(K-1),   error = 1 - E_Z[Phi(Z + c n/((K-1) sigma))^(K-1)],   ||M_c|| = 1.
 * The per-sample gradient norm at W = 0 is ||r_k|| ||M_k|| = sqrt(1 - 1/K) (ce), 1 (squared):
 * no clipping (c = 1) when G is at least that. K = 2: 1 - E[Phi(Z + a)] = P(Z' - Z > a) =
 * Phi(-a/sqrt2) = Phi(-n/(sqrt2 sigma)), for any class balance (n_c + n_j = n). The binary
 * logistic model (one theta, x = y e_1, the NC paper, Theorem 3): S = -sum_i y_i x_i/2 = -n e_1/2,
 * margin y theta^T x = eta (n/2 + sigma Z): error Phi(-n/(2 sigma)).
 * Where the NC paper (Theorem 2 and Appendix A.1) slips:
 *   - (mu)_j for j != k is -n/(K(K-1)), not -n(K-2)/(K^2(K-1)) (mu_k = n/K is right), so the
 *     gap is n/(K-1), not (n/K)(1 + (K-2)/(K(K-1)));
 *   - the difference of two independent N(., sigma^2) scores has variance 2 sigma^2: the
 *     pairwise error is Phi(-gap/(sqrt2 sigma)), not Phi(-gap/sigma);
 *   - (K-1) Phi(.) is the union bound, an upper bound, not the error (the K-1 comparisons share
 *     Z_c); the exact error is (*);
 *   - the exponent of the tail bound: Phi(-x) <= exp(-x^2/2) gives
 *     (K-1) exp(-n^2/(4 (K-1)^2 sigma^2)), not (K-1) exp(-C_K n^2/(K sigma^2));
 *   - the clipping in eq. (1) is written max{1, G/||g||} (never clips); it must be min;
 *   - Appendix C.1 writes G = sqrt(1 + ||v||_2) for sqrt(1 + ||v||_2^2), and the error there
 *     as Phi(+...) for Phi(-...).
 * These closed forms are checked against the Monte Carlo of this file in tests/test_nc.c.
 */
#include "hdpsgd/nc.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"
#include "sim/stats.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"

#include "families/blas_internal.h"


/* Memory guards: stored doubles per thread (per-sample features) and for the public samples. */
#define NC_MAX_STORED 2.0e8

/* ---- the spec ---- */

typedef struct {
    const hdp_model *m; /* NULL: a spec built in code */
    hdp_error *err;
} reporter;

static hdp_status bad(const reporter *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static hdp_status bad(const reporter *r, const char *key, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->m)
        return hdp_model_fail_key(r->m, "nc", key, r->err, "%s", msg);
    return hdp_fail(r->err, HDP_EINPUT, "[nc] %s: %s", key, msg);
}

void hdp_nc_class_sizes(long K, long n, double imbalance, long *nk)
{
    if (!nk)
        return;
    if (imbalance > 0) {
        long n1 = (long)nearbyint(imbalance * (double)n);
        long rest = n - n1;
        nk[0] = n1;
        for (long k = 1; k < K; k++)
            nk[k] = rest / (K - 1) + (k - 1 < rest % (K - 1) ? 1 : 0);
        return;
    }
    for (long k = 0; k < K; k++)
        nk[k] = n / K + (k < n % K ? 1 : 0);
}

static hdp_status check(const hdp_nc_spec *s, const reporter *r)
{
    /* the schema's ranges, for specs built in code (a model has passed them already) */
    if (s->K < 2 || s->K > 1000)
        return bad(r, "K", "K = %ld: expected an integer in [2, 1000]", s->K);
    if (s->p < 2) return bad(r, "p", "p = %ld: expected an integer >= 2", s->p);
    if (s->n < 2) return bad(r, "n", "n = %ld: expected an integer >= 2", s->n);
    if (!(s->imbalance >= 0 && s->imbalance < 1))
        return bad(r, "imbalance", "imbalance = %g: expected 0 (balanced) or a number in (0, 1)",
                   s->imbalance);
    if (!(s->G > 0) || !isfinite(s->G)) return bad(r, "G", "G = %g: expected a number > 0", s->G);
    if (!(s->rho > 0)) return bad(r, "rho", "rho = %g: expected a number > 0 or inf", s->rho);
    if (s->steps < 1) return bad(r, "steps", "steps = %ld: expected an integer >= 1", s->steps);
    if (!(s->eta > 0) || !isfinite(s->eta))
        return bad(r, "eta", "eta = %g: expected a number > 0", s->eta);
    if (!(s->init_std >= 0) || !isfinite(s->init_std))
        return bad(r, "init_std", "init_std = %g: expected a number >= 0", s->init_std);
    if (!(s->beta >= 0) || !isfinite(s->beta))
        return bad(r, "beta", "beta = %g: expected a number >= 0", s->beta);
    if (s->public_samples < 2)
        return bad(r, "public_samples", "public_samples = %ld: expected an integer >= 2",
                   s->public_samples);
    if (s->batch < 0) return bad(r, "batch", "batch = %ld: expected an integer >= 0", s->batch);
    if (s->draws < 1) return bad(r, "draws", "draws = %ld: expected an integer >= 1", s->draws);
    if (s->test_samples < 1)
        return bad(r, "test_samples", "test_samples = %ld: expected an integer >= 1",
                   s->test_samples);
    if (!(s->delta > 0 && s->delta < 1))
        return bad(r, "delta", "delta = %g: expected a number in (0, 1)", s->delta);
    if ((unsigned)s->loss > HDP_NC_SQUARED || (unsigned)s->init > HDP_NC_INIT_GAUSSIAN ||
        (unsigned)s->perturbation > HDP_NC_PERT_PER_SAMPLE ||
        (unsigned)s->remedy > HDP_NC_REMEDY_PCA)
        return bad(r, "loss", "an enumerated key is out of range");
    /* combinations */
    if (s->p < s->K)
        return bad(r, "p", "p = %ld is smaller than K = %ld: the K-simplex ETF needs p >= K "
                           "(P is a p x K partial orthogonal matrix)", s->p, s->K);
    if (s->n < s->K)
        return bad(r, "n", "n = %ld training samples for K = %ld classes: every class needs a "
                           "sample (n is the total over the classes)", s->n, s->K);
    long nk[1000];
    hdp_nc_class_sizes(s->K, s->n, s->imbalance, nk);
    for (long k = 0; k < s->K; k++)
        if (nk[k] < 1)
            return bad(r, "imbalance",
                       "imbalance = %g with n = %ld and K = %ld leaves class %ld empty: class 1 "
                       "gets round(alpha n), the others share the rest",
                       s->imbalance, s->n, s->K, k + 1);
    if (s->loss == HDP_NC_LOGISTIC && s->K != 2)
        return bad(r, "loss", "logistic is the binary model of the NC paper, Theorem 3 (one vector "
                              "theta) and needs K = 2 (K = %ld); use ce for K classes", s->K);
    if (s->batch > s->n)
        return bad(r, "batch", "batch = %ld is larger than n = %ld (0 = full batch, NoisyGD)",
                   s->batch, s->n);
    if (s->remedy == HDP_NC_REMEDY_PCA && s->public_samples < s->K)
        return bad(r, "public_samples", "public_samples = %ld < K = %ld: the K-1 principal "
                                        "directions need at least K public samples",
                   s->public_samples, s->K);
    if (s->perturbation == HDP_NC_PERT_STOCHASTIC &&
        (double)s->test_samples * (double)s->p > NC_MAX_STORED)
        return bad(r, "test_samples", "test_samples x p = %g stored test points per thread: too "
                                      "large (at most %g)",
                   (double)s->test_samples * (double)s->p, NC_MAX_STORED);
    if ((double)s->K * (double)s->p > NC_MAX_STORED)
        return bad(r, "p", "K p = %g weights: too large (at most %g)", (double)s->K * (double)s->p,
                   NC_MAX_STORED);
    if (s->perturbation == HDP_NC_PERT_PER_SAMPLE && (double)s->n * (double)s->p > NC_MAX_STORED)
        return bad(r, "p", "per-sample perturbations store n x p = %g features per thread: too "
                           "large (at most %g)", (double)s->n * (double)s->p, NC_MAX_STORED);
    if (s->remedy == HDP_NC_REMEDY_PCA && (double)s->public_samples * (double)s->p > NC_MAX_STORED)
        return bad(r, "public_samples", "public_samples x p = %g: too large (at most %g)",
                   (double)s->public_samples * (double)s->p, NC_MAX_STORED);
    return HDP_OK;
}

hdp_status hdp_nc_spec_from_model(const hdp_model *m, hdp_nc_spec *s, hdp_error *err)
{
    HDP_ZERO(s);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, s);
    const hdp_nc_keys *q = hdp_nc_keys_of(m);
    s->K = q->K;
    s->p = q->p;
    s->n = q->n;
    s->imbalance = q->imbalance;
    s->G = q->G;
    s->rho = q->rho;
    s->steps = q->steps;
    s->eta = q->eta;
    s->loss = q->loss;
    s->init = q->init;
    s->init_std = q->init_std;
    s->perturbation = q->perturbation;
    s->beta = q->beta;
    s->remedy = q->remedy;
    s->public_samples = q->public_samples;
    s->batch = q->batch;
    s->draws = q->draws;
    s->test_samples = q->test_samples;
    s->delta = q->delta;
    s->seed = m->seed;
    reporter r = {m, err};
    return check(s, &r);
}

hdp_status hdp_nc_spec_check(const hdp_nc_spec *s, hdp_error *err)
{
    HDP_REQUIRE(err, s);
    reporter r = {NULL, err};
    return check(s, &r);
}

/* ---- features, noise level, clipping ---- */

/* The ETF (the NC paper, Definition 1) with P = [Q; 0], Q = I - 2 w w^T/(w^T w), w = 1/sqrt(K) -
 * e_K (a Householder reflection with Q 1/sqrt(K) = e_K). For u = e_k - 1/K (sum 0) w^T u = -u_K,
 * so Q u = u + 2 u_K w/(w^T w) and (Q u)_K = 0: M_k lies in the first K-1 coordinates. */
void hdp_nc_etf(long K, long p, double *M)
{
    if (!M)
        return;
    const double rk = 1.0 / sqrt((double)K), scale = sqrt((double)K / (double)(K - 1));
    const double ww = 2.0 - 2.0 * rk; /* w^T w */
    memset(M, 0, sizeof(double) * (size_t)(K * p));
    for (long k = 0; k < K; k++) {
        double uK = (k == K - 1 ? 1.0 : 0.0) - 1.0 / (double)K;
        for (long i = 0; i < K - 1; i++) {
            double u = (i == k ? 1.0 : 0.0) - 1.0 / (double)K;
            M[k * p + i] = scale * (u + 2.0 * uK * rk / ww);
        }
        /* coordinate K-1 is exactly zero (see above) */
    }
}

double hdp_nc_sigma(double G, double rho)
{
    if (isinf(rho))
        return 0.0;
    return G / sqrt(2.0 * rho); /* Gaussian mechanism, sensitivity G: G^2/(2 sigma^2) = rho */
}

double hdp_nc_grad_norm_at_zero(long K, hdp_nc_loss_kind loss)
{
    /* ||r|| ||M_k||, ||M_k|| = 1: ||1/K - e_k|| = sqrt((K-1)^2/K^2 + (K-1)/K^2) = sqrt(1 - 1/K) */
    switch (loss) {
    case HDP_NC_CE: return sqrt(1.0 - 1.0 / (double)K);
    case HDP_NC_SQUARED: return 1.0;
    case HDP_NC_LOGISTIC: return 0.5; /* |y| sigmoid(0) ||x|| */
    }
    return NAN;
}

double hdp_nc_clip_factor(double gnorm, double G)
{
    /* min(1, G/||g||): the NC paper, eq. (1) with its max corrected (nc.h) */
    return gnorm > G ? G / gnorm : 1.0;
}

double hdp_nc_clip_gradient(const double *r, long rows, const double *z, long cols, double G,
                            double *g)
{
    if (!r || !z || !g)
        return NAN;
    double rn = 0, zn = 0;
    for (long i = 0; i < rows; i++) rn += r[i] * r[i];
    for (long j = 0; j < cols; j++) zn += z[j] * z[j];
    double c = hdp_nc_clip_factor(sqrt(rn) * sqrt(zn), G);
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < cols; j++)
            g[i * cols + j] = c * r[i] * z[j];
    return c;
}

/* ---- the Gaussian quadrature (docs/theory.md §8) ---- */

/* the standard normal density (not gsl_ran_ugaussian_pdf: <gsl/gsl_randist.h> pulls in
 * gsl_cblas.h, whose declarations clash with OpenBLAS's <cblas.h>) */
static double phi(double z) { return 0.39894228040143267794 * exp(-0.5 * z * z); }

/* log Phi(x), accurate in both tails: log P(x) below 0, log1p(-Q(x)) above. */
static double log_Phi(double x)
{
    return x < 0 ? log(gsl_cdf_ugaussian_P(x)) : log1p(-gsl_cdf_ugaussian_Q(x));
}

typedef struct {
    const double *a;
    long m;
} gm_ctx;

/* phi(z) (1 - prod_j Phi(z + a_j)) = phi(z) (-expm1(sum_j log Phi(z + a_j))) */
static double gm_integrand(double z, void *params)
{
    const gm_ctx *c = params;
    double s = 0;
    for (long j = 0; j < c->m; j++)
        s += log_Phi(z + c->a[j]);
    return phi(z) * -expm1(s);
}

hdp_status hdp_nc_gauss_max_error(const double *a, long m, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, a);
    HDP_REQUIRE(err, out);
    if (m <= 0) {
        *out = 0.0;
        return HDP_OK;
    }
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
    if (!w)
        return hdp_fail(err, HDP_ENOMEM, "out of memory (quadrature workspace)");
    gm_ctx c = {a, m};
    gsl_function F = {gm_integrand, &c};
    double res = 0, abserr = 0;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = gsl_integration_qagi(&F, 0.0, 1e-10, 2000, w, &res, &abserr);
    gsl_set_error_handler(old);
    gsl_integration_workspace_free(w);
    /* GSL_EROUND: the tolerance was not met because of rounding; accept a tight result */
    if (rc != 0 && !(rc == GSL_EROUND && abserr <= 1e-8 * fabs(res)) && !(res == 0 && abserr == 0))
        return hdp_fail(err, HDP_ENUMERIC,
                        "quadrature of the exact error failed (GSL: %s; result %g, error %g)",
                        gsl_strerror(rc), res, abserr);
    *out = res < 0 ? 0.0 : (res > 1 ? 1.0 : res);
    return HDP_OK;
}

hdp_status hdp_nc_exact_error_balanced(long K, double n, double sigma, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    if (K < 2)
        return hdp_fail(err, HDP_EINPUT, "exact error: K = %ld, expected K >= 2", K);
    if (!(sigma > 0)) {
        *out = 0.0; /* no noise: the gap n/(K-1) > 0 always wins */
        return HDP_OK;
    }
    double a = n / ((double)(K - 1) * sigma);
    double *av = malloc(sizeof(double) * (size_t)(K - 1));
    if (!av)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    for (long j = 0; j < K - 1; j++)
        av[j] = a;
    hdp_status st = hdp_nc_gauss_max_error(av, K - 1, out, err);
    free(av);
    return st;
}

double hdp_nc_exact_error_logistic(double n, double sigma)
{
    if (!(sigma > 0))
        return 0.0;
    return gsl_cdf_ugaussian_P(-n / (2.0 * sigma));
}

/* ---- the problem ---- */


/* len signs +-beta from the stream, 64 per output (bit j of an output gives entry j) */
static void fill_signs(hdp_xoshiro *g, double beta, double *out, long len)
{
    const double tbl[2] = {-beta, beta};
    long i = 0;
    for (; i + 64 <= len; i += 64) {
        uint64_t bits = hdp_xoshiro_next_inline(g);
        for (int j = 0; j < 64; j++)
            out[i + j] = tbl[(bits >> j) & 1];
    }
    if (i < len) {
        uint64_t bits = hdp_xoshiro_next_inline(g);
        for (long j = 0; i + j < len; j++)
            out[i + j] = tbl[(bits >> j) & 1];
    }
}

static int train_offset(hdp_nc_perturbation_kind k)
{
    return k == HDP_NC_PERT_TRAIN_OFFSET || k == HDP_NC_PERT_BOTH;
}

static int test_offset(hdp_nc_perturbation_kind k)
{
    return k == HDP_NC_PERT_TEST_OFFSET || k == HDP_NC_PERT_BOTH;
}

/* z = P^T x (pca) or z = x */
static void transform(const hdp_nc_problem *pb, const double *x, double *z)
{
    const long p = pb->spec.p, q = pb->q;
    if (!pb->P) {
        memcpy(z, x, sizeof(double) * (size_t)p);
        return;
    }
    for (long j = 0; j < q; j++)
        z[j] = 0;
    for (long l = 0; l < p; l++) {
        double xl = x[l];
        if (xl == 0)
            continue;
        const double *Pl = pb->P + l * q;
        for (long j = 0; j < q; j++)
            z[j] += xl * Pl[j];
    }
}

/* The top K-1 principal directions of the public samples (the NC paper, section 4.3, centred;
 * nc.h): X (m x p) the centred samples, the eigenpairs (lambda, u) of the m x m Gram matrix
 * X X^T give the directions X^T u / sqrt(lambda) of X^T X (the same non-zero spectrum). */
static hdp_status build_pca(hdp_nc_problem *pb, hdp_xoshiro *g, hdp_error *err)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, p = s->p, m = s->public_samples, q = K - 1;
    double *X = hdp_dalloc((size_t)(m * p)), *mean = hdp_dalloc((size_t)p), *Gm = hdp_dalloc((size_t)(m * m));
    double *w = hdp_dalloc((size_t)m), *U = hdp_dalloc((size_t)(m * q)), *D = hdp_dalloc((size_t)(q * p));
    lapack_int *isuppz = malloc(sizeof(lapack_int) * (size_t)(2 * q));
    hdp_status st = HDP_OK;
    if (!X || !mean || !Gm || !w || !U || !D || !isuppz) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory (public samples %ld x %ld)", m, p);
        goto done;
    }
    for (long i = 0; i < m; i++) {
        double *x = X + i * p;
        long k = i % K;
        if (s->perturbation == HDP_NC_PERT_PER_SAMPLE)
            fill_signs(g, s->beta, x, p);
        for (long l = 0; l < p; l++)
            x[l] += pb->M[k * p + l] + (pb->v && train_offset(s->perturbation) ? pb->v[l] : 0.0);
        for (long l = 0; l < p; l++)
            mean[l] += x[l];
    }
    for (long l = 0; l < p; l++)
        mean[l] /= (double)m;
    for (long i = 0; i < m; i++)
        for (long l = 0; l < p; l++)
            X[i * p + l] -= mean[l];
    int old = blas_single();
    /* X row-major m x p is the column-major p x m matrix X^T: Gm = (X^T)^T X^T = X X^T,
     * column-major, upper triangle */
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, (blasint)m, (blasint)p, 1.0, X,
                (blasint)p, 0.0, Gm, (blasint)m);
    lapack_int found = 0;
    lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'U', (lapack_int)m, Gm,
                                     (lapack_int)m, 0.0, 0.0, (lapack_int)(m - q + 1),
                                     (lapack_int)m, 0.0, &found, w, U, (lapack_int)m, isuppz);
    blas_restore(old);
    if (info != 0 || found != q) {
        st = hdp_fail(err, HDP_ENUMERIC, "pca: LAPACKE_dsyevr failed (info %d, %d of %ld "
                                         "eigenvectors)", (int)info, (int)found, q);
        goto done;
    }
    /* ascending: w[q-1] is the largest, w[0] the (K-1)-th */
    pb->pca_lambda_min = w[0] / (double)m;
    if (!(w[0] > 1e-12 * w[q - 1])) {
        st = hdp_fail(err, HDP_ENUMERIC, "pca: the public samples span fewer than K-1 = %ld "
                                         "directions (eigenvalue %g)", q, w[0]);
        goto done;
    }
    for (long j = 0; j < q; j++) {
        long col = q - 1 - j; /* direction j: the (j+1)-th largest */
        double *d = D + j * p;
        double sc = 1.0 / sqrt(w[col]);
        for (long i = 0; i < m; i++) {
            double ui = U[col * m + i] * sc; /* column-major m x q */
            const double *x = X + i * p;
            for (long l = 0; l < p; l++)
                d[l] += ui * x[l];
        }
        /* re-orthonormalise (modified Gram-Schmidt) against rounding */
        for (long i = 0; i < j; i++) {
            const double *e = D + i * p;
            double c = 0;
            for (long l = 0; l < p; l++) c += e[l] * d[l];
            for (long l = 0; l < p; l++) d[l] -= c * e[l];
        }
        double nn = 0;
        for (long l = 0; l < p; l++) nn += d[l] * d[l];
        nn = sqrt(nn);
        for (long l = 0; l < p; l++) d[l] /= nn;
    }
    for (long l = 0; l < p; l++)
        for (long j = 0; j < q; j++)
            pb->P[l * q + j] = D[j * p + l];
    /* span(M) = span(e_1 .. e_{K-1}) (hdp_nc_etf) */
    double a = 0;
    for (long l = 0; l < K - 1; l++)
        for (long j = 0; j < q; j++)
            a += pb->P[l * q + j] * pb->P[l * q + j];
    pb->pca_alignment = a / (double)q;
done:
    free(X);
    free(mean);
    free(Gm);
    free(w);
    free(U);
    free(D);
    free(isuppz);
    return st;
}

void hdp_nc_problem_free(hdp_nc_problem *pb)
{
    if (!pb)
        return;
    free(pb->nk);
    free(pb->sample_class);
    free(pb->M);
    free(pb->v);
    free(pb->P);
    free(pb->PM);
    free(pb->Z);
    free(pb->ztest);
    pb->nk = pb->sample_class = NULL;
    pb->M = pb->v = pb->P = pb->PM = pb->Z = pb->ztest = NULL;
}

hdp_status hdp_nc_problem_alloc(const hdp_nc_spec *s, hdp_nc_problem *pb, hdp_error *err)
{
    HDP_ZERO(pb);
    HDP_REQUIRE(err, s);
    HDP_REQUIRE(err, pb);
    memset(pb, 0, sizeof *pb);
    hdp_status st = hdp_nc_spec_check(s, err);
    if (st != HDP_OK)
        return st;
    double t0 = omp_get_wtime();
    pb->spec = *s;
    const long K = s->K, p = s->p, n = s->n;
    pb->Kout = s->loss == HDP_NC_LOGISTIC ? 1 : K;
    pb->q = s->remedy == HDP_NC_REMEDY_PCA ? K - 1 : p;
    const long q = pb->q;
    pb->grouped = s->perturbation != HDP_NC_PERT_PER_SAMPLE;
    pb->sigma = hdp_nc_sigma(s->G, s->rho);
    pb->nk = malloc(sizeof(long) * (size_t)K);
    pb->sample_class = malloc(sizeof(long) * (size_t)n);
    pb->M = hdp_dalloc((size_t)(K * p));
    pb->ztest = hdp_dalloc((size_t)(K * q));
    double *x = hdp_dalloc((size_t)p), *c = hdp_dalloc((size_t)p);
    if (!pb->nk || !pb->sample_class || !pb->M || !pb->ztest || !x || !c) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory (K = %ld, p = %ld)", K, p);
        goto fail;
    }
    hdp_nc_class_sizes(K, n, s->imbalance, pb->nk);
    for (long k = 0, i = 0; k < K; k++)
        for (long j = 0; j < pb->nk[k]; j++)
            pb->sample_class[i++] = k;
    hdp_nc_etf(K, p, pb->M);

    /* the fixed offset, then the public samples: the unjumped stream */
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, (uint64_t)s->seed);
    if (train_offset(s->perturbation) || test_offset(s->perturbation)) {
        pb->v = hdp_dalloc((size_t)p);
        if (!pb->v) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory");
            goto fail;
        }
        fill_signs(&g, s->beta, pb->v, p);
        pb->offset_norm = s->beta * sqrt((double)p);
    }
    if (s->remedy == HDP_NC_REMEDY_PCA) {
        pb->P = hdp_dalloc((size_t)(p * q));
        pb->PM = hdp_dalloc((size_t)(K * q));
        if (!pb->P || !pb->PM) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory (projection %ld x %ld)", p, q);
            goto fail;
        }
        if ((st = build_pca(pb, &g, err)) != HDP_OK)
            goto fail;
        for (long k = 0; k < K; k++)
            transform(pb, pb->M + k * p, pb->PM + k * q);
    }

    /* the deterministic training set (grouped): M_k (+ v), centred, projected */
    if (pb->grouped) {
        pb->Z = hdp_dalloc((size_t)(K * q));
        if (!pb->Z) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory");
            goto fail;
        }
        memset(c, 0, sizeof(double) * (size_t)p);
        if (s->remedy == HDP_NC_REMEDY_CENTER) /* the training mean sum_k n_k x_k / n */
            for (long k = 0; k < K; k++)
                for (long l = 0; l < p; l++)
                    c[l] += (double)pb->nk[k] / (double)n *
                            (pb->M[k * p + l] + (train_offset(s->perturbation) ? pb->v[l] : 0.0));
        for (long k = 0; k < K; k++) {
            for (long l = 0; l < p; l++)
                x[l] = pb->M[k * p + l] + (train_offset(s->perturbation) ? pb->v[l] : 0.0) - c[l];
            transform(pb, x, pb->Z + k * q);
        }
    }
    /* the test class centres: M_c (+ v), minus the mean of the centres (center), projected */
    memset(c, 0, sizeof(double) * (size_t)p);
    if (s->remedy == HDP_NC_REMEDY_CENTER && test_offset(s->perturbation))
        memcpy(c, pb->v, sizeof(double) * (size_t)p); /* (1/K) sum_c (M_c + v) = v */
    for (long k = 0; k < K; k++) {
        for (long l = 0; l < p; l++)
            x[l] = pb->M[k * p + l] + (test_offset(s->perturbation) ? pb->v[l] : 0.0) - c[l];
        transform(pb, x, pb->ztest + k * q);
    }
    free(x);
    free(c);
    pb->build_seconds = omp_get_wtime() - t0;
    return HDP_OK;
fail:
    free(x);
    free(c);
    hdp_nc_problem_free(pb);
    return st;
}

/* ---- the exact one-step error ---- */

int hdp_nc_exact_applies(const hdp_nc_spec *s)
{
    if (!s)
        return 0;
    return s->steps == 1 && s->init == HDP_NC_INIT_ZERO && s->batch == 0 &&
           (s->perturbation == HDP_NC_PERT_NONE || s->perturbation == HDP_NC_PERT_TEST_OFFSET ||
            s->perturbation == HDP_NC_PERT_TRAIN_OFFSET || s->perturbation == HDP_NC_PERT_BOTH);
}

/* the residual of the loss at scores sc for a sample of class k (Kout entries) */
static void residual(hdp_nc_loss_kind loss, long K, long k, const double *sc, double *r)
{
    switch (loss) {
    case HDP_NC_CE: {
        double mx = sc[0], sum = 0;
        for (long j = 1; j < K; j++) mx = sc[j] > mx ? sc[j] : mx;
        for (long j = 0; j < K; j++) sum += (r[j] = exp(sc[j] - mx));
        for (long j = 0; j < K; j++) r[j] = r[j] / sum - (j == k ? 1.0 : 0.0);
        break;
    }
    case HDP_NC_SQUARED:
        for (long j = 0; j < K; j++) r[j] = sc[j] - (j == k ? 1.0 : 0.0);
        break;
    case HDP_NC_LOGISTIC: {
        /* d/ds log(1 + exp(-y s)) = -y / (1 + exp(y s)) */
        double y = k == 1 ? 1.0 : -1.0, ys = y * sc[0];
        r[0] = ys > 0 ? -y * exp(-ys) / (1.0 + exp(-ys)) : -y / (1.0 + exp(ys));
        break;
    }
    }
}

hdp_status hdp_nc_exact_error(const hdp_nc_problem *pb, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, out);
    const hdp_nc_spec *s = &pb->spec;
    *out = NAN;
    if (!hdp_nc_exact_applies(s) || !pb->grouped)
        return HDP_OK;
    const long K = s->K, Kout = pb->Kout, q = pb->q;
    double *S = hdp_dalloc((size_t)(Kout * q)), *r = hdp_dalloc((size_t)K), *zero = hdp_dalloc((size_t)K);
    double *mu = hdp_dalloc((size_t)K), *a = hdp_dalloc((size_t)K);
    hdp_status st = HDP_OK;
    if (!S || !r || !zero || !mu || !a) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory");
        goto done;
    }
    /* S = sum_k n_k c_k r_k z_k^T at W = 0 */
    for (long k = 0; k < K; k++) {
        const double *z = pb->Z + k * q;
        residual(s->loss, K, k, zero, r);
        double rn = 0, zn = 0;
        for (long j = 0; j < Kout; j++) rn += r[j] * r[j];
        for (long l = 0; l < q; l++) zn += z[l] * z[l];
        double cf = hdp_nc_clip_factor(sqrt(rn) * sqrt(zn), s->G) * (double)pb->nk[k];
        for (long j = 0; j < Kout; j++)
            for (long l = 0; l < q; l++)
                S[j * q + l] += cf * r[j] * z[l];
    }
    double total = 0;
    for (long c = 0; c < K && st == HDP_OK; c++) {
        const double *z = pb->ztest + c * q;
        double zn = 0;
        for (long l = 0; l < q; l++) zn += z[l] * z[l];
        double tau = pb->sigma * sqrt(zn); /* Xi z ~ N(0, sigma^2 ||z||^2 I) */
        for (long j = 0; j < Kout; j++) {
            double d = 0;
            for (long l = 0; l < q; l++) d += S[j * q + l] * z[l];
            mu[j] = -d; /* W_1 z / eta = -(S z + Xi z) */
        }
        double e;
        if (s->loss == HDP_NC_LOGISTIC) {
            double margin = (c == 1 ? 1.0 : -1.0) * mu[0];
            e = tau > 0 ? gsl_cdf_ugaussian_P(-margin / tau) : (margin > 0 ? 0.0 : 1.0);
        } else if (!(tau > 0)) {
            e = 0.0;
            for (long j = 0; j < K; j++)
                if (j != c && !(mu[c] > mu[j])) e = 1.0;
        } else {
            long m = 0;
            for (long j = 0; j < K; j++)
                if (j != c) a[m++] = (mu[c] - mu[j]) / tau; /* (*) of the top comment */
            st = hdp_nc_gauss_max_error(a, m, &e, err);
        }
        total += e;
    }
    if (st == HDP_OK)
        *out = total / (double)K;
done:
    free(S);
    free(r);
    free(zero);
    free(mu);
    free(a);
    return st;
}

/* ---- the Monte Carlo ---- */

typedef struct {
    double *W, *Gs;    /* [Kout x q] */
    double *S, *A;     /* [rows x Kout] scores; mult c r (the gradient's coefficients) */
    double *res;       /* [K x Kout] residual of a row */
    double *cf, *zn;   /* [rows] clipping factors, feature norms */
    long *mult;        /* [rows] multiplicities in the batch */
    long *perm;        /* [n] row of each sample (shuffled for the batches) */
    double *Zs;        /* per-sample: [n x q] training features of the draw */
    double *X;         /* per-sample with pca: [n x p] the perturbations beta s_i */
    double *C;         /* [K x q] per-class sums of mult c z (per-sample rows, W = 0) */
    double *U;         /* [p x Kout] P W^T (pca, adversarial) */
    double *V, *VP;    /* stochastic: [t x p] test perturbations, [t x q] projected */
    double *VS;        /* stochastic: [t x Kout] their scores */
    double *sc, *base; /* [Kout] */
} nc_ws;

static void ws_free(nc_ws *w)
{
    if (!w)
        return;
    free(w->W); free(w->Gs); free(w->S); free(w->A); free(w->res); free(w->cf); free(w->zn);
    free(w->mult); free(w->perm); free(w->Zs); free(w->X); free(w->C); free(w->U); free(w->V);
    free(w->VP); free(w->VS); free(w->sc); free(w->base);
    free(w);
}

static nc_ws *ws_alloc(const hdp_nc_problem *pb)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q, p = s->p, n = s->n;
    const long rows = pb->grouped ? K : n;
    const int per_sample = !pb->grouped, stoch = s->perturbation == HDP_NC_PERT_STOCHASTIC;
    const long t = s->test_samples;
    nc_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->W = hdp_dalloc((size_t)(Kout * q));
    w->Gs = hdp_dalloc((size_t)(Kout * q));
    w->S = hdp_dalloc((size_t)(rows * Kout));
    w->A = hdp_dalloc((size_t)(rows * Kout));
    w->res = hdp_dalloc((size_t)(K * Kout));
    w->cf = hdp_dalloc((size_t)rows);
    w->zn = hdp_dalloc((size_t)rows);
    w->mult = calloc((size_t)rows, sizeof(long));
    w->perm = calloc((size_t)n, sizeof(long));
    w->Zs = hdp_dalloc(per_sample ? (size_t)(n * q) : 1);
    w->X = hdp_dalloc(per_sample && pb->P ? (size_t)(n * p) : 1);
    w->C = hdp_dalloc((size_t)(K * q));
    w->U = hdp_dalloc(s->perturbation == HDP_NC_PERT_ADVERSARIAL && pb->P ? (size_t)(p * Kout) : 1);
    w->V = hdp_dalloc(stoch ? (size_t)(t * p) : 1);
    w->VP = hdp_dalloc(stoch && pb->P ? (size_t)(t * q) : 1);
    w->VS = hdp_dalloc(stoch ? (size_t)(t * Kout) : 1);
    w->sc = hdp_dalloc((size_t)Kout);
    w->base = hdp_dalloc((size_t)Kout);
    if (!w->W || !w->Gs || !w->S || !w->A || !w->res || !w->cf || !w->zn || !w->mult || !w->perm ||
        !w->Zs || !w->X || !w->C || !w->U || !w->V || !w->VP || !w->VS || !w->sc || !w->base) {
        ws_free(w);
        return NULL;
    }
    return w;
}

static double dotv(const double *a, const double *b, long len)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    long i = 0;
    for (; i + 4 <= len; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < len; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}


/* 1 when class c wins strictly (ties are errors) */
static int correct(const double *sc, long Kout, long c)
{
    if (Kout == 1) /* logistic: sign(theta^T z) = y */
        return (c == 1 ? sc[0] : -sc[0]) > 0;
    for (long j = 0; j < Kout; j++)
        if (j != c && !(sc[c] > sc[j]))
            return 0;
    return 1;
}

/* The per-sample training features of one draw: x_i = M_k + beta s_i, then the remedy
 * (pca: z_i = P^T M_k + P^T (beta s_i), the second term one product [n x p] [p x q]). */
static void build_per_sample(const hdp_nc_problem *pb, nc_ws *w, hdp_xoshiro *g)
{
    const hdp_nc_spec *s = &pb->spec;
    const long n = s->n, p = s->p, q = pb->q, K = s->K;
    if (pb->P) {
        fill_signs(g, s->beta, w->X, n * p);
        blas_gemm(0, 0, n, q, p, 1.0, w->X, p, pb->P, q, 0.0, w->Zs, q);
        for (long i = 0; i < n; i++)
            for (long j = 0; j < q; j++)
                w->Zs[i * q + j] += pb->PM[pb->sample_class[i] * q + j];
    } else {
        for (long i = 0; i < n; i++) { /* row by row: the norm while the row is in cache */
            double *z = w->Zs + i * q;
            const double *Mk = pb->M + pb->sample_class[i] * p;
            fill_signs(g, s->beta, z, p);
            for (long l = 0; l < K - 1; l++) /* M_k lives in the first K-1 coordinates */
                z[l] += Mk[l];
            w->zn[i] = sqrt(dotv(z, z, q));
        }
    }
    if (s->remedy == HDP_NC_REMEDY_CENTER) {
        double *mean = w->C; /* K x q >= q */
        memset(mean, 0, sizeof(double) * (size_t)q);
        for (long i = 0; i < n; i++)
            for (long l = 0; l < q; l++)
                mean[l] += w->Zs[i * q + l];
        for (long l = 0; l < q; l++)
            mean[l] /= (double)n;
        for (long i = 0; i < n; i++)
            for (long l = 0; l < q; l++)
                w->Zs[i * q + l] -= mean[l];
    }
    if (pb->P || s->remedy == HDP_NC_REMEDY_CENTER)
        for (long i = 0; i < n; i++)
            w->zn[i] = sqrt(dotv(w->Zs + i * q, w->Zs + i * q, q));
}

typedef struct {
    double error, maxclip;
    long clipped, gradients;
} draw_out;

/* Record the clipping of row r (gradient norm gnorm) and return its factor. */
static double clip_row(const hdp_nc_spec *s, nc_ws *w, long r, double gnorm, draw_out *out)
{
    double cf = hdp_nc_clip_factor(gnorm, s->G);
    if (cf < 1)
        out->clipped += w->mult[r];
    out->gradients += w->mult[r];
    if (cf * gnorm > out->maxclip)
        out->maxclip = cf * gnorm; /* ||clip_G(g)|| = c ||r|| ||z|| */
    return cf;
}

/* One step's clipped gradient sum Gs = sum_r mult_r c_r r_r z_r^T (rows r with mult_r > 0). */
static void gradient_sum(const hdp_nc_problem *pb, nc_ws *w, const double *Z, long rows,
                         const long *row_class, int wzero, draw_out *out)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q;
    memset(w->Gs, 0, sizeof(double) * (size_t)(Kout * q));
    if (wzero && rows > K) {
        /* W = 0, one row per sample: the residual r_k depends on the class only, so
         * Gs = sum_k r_k (sum_{i in k} mult_i c_i z_i)^T: O(n q) instead of O(n K q) */
        memset(w->S, 0, sizeof(double) * (size_t)Kout);
        double rn[1000];
        for (long k = 0; k < K; k++) {
            residual(s->loss, K, k, w->S, w->res + k * Kout);
            rn[k] = sqrt(dotv(w->res + k * Kout, w->res + k * Kout, Kout));
        }
        memset(w->C, 0, sizeof(double) * (size_t)(K * q));
        for (long r = 0; r < rows; r++) {
            if (w->mult[r] == 0)
                continue;
            long k = row_class[r];
            double a = (double)w->mult[r] * clip_row(s, w, r, rn[k] * w->zn[r], out);
            const double *z = Z + r * q;
            double *Ck = w->C + k * q;
            for (long l = 0; l < q; l++)
                Ck[l] += a * z[l];
        }
        for (long k = 0; k < K; k++)
            for (long j = 0; j < Kout; j++) {
                double a = w->res[k * Kout + j];
                for (long l = 0; l < q; l++)
                    w->Gs[j * q + l] += a * w->C[k * q + l];
            }
        return;
    }
    /* scores S = Z W^T, residuals, coefficients A = mult c r, then Gs = A^T Z */
    if (wzero)
        memset(w->S, 0, sizeof(double) * (size_t)(rows * Kout));
    else if (rows > K)
        blas_gemm(0, 1, rows, Kout, q, 1.0, Z, q, w->W, q, 0.0, w->S, Kout);
    else
        for (long r = 0; r < rows; r++)
            for (long j = 0; j < Kout; j++)
                w->S[r * Kout + j] = dotv(w->W + j * q, Z + r * q, q);
    for (long r = 0; r < rows; r++) {
        double *a = w->A + r * Kout;
        if (w->mult[r] == 0) {
            memset(a, 0, sizeof(double) * (size_t)Kout);
            continue;
        }
        long k = row_class ? row_class[r] : r;
        residual(s->loss, K, k, w->S + r * Kout, a);
        double gnorm = sqrt(dotv(a, a, Kout)) * w->zn[r]; /* ||r z^T||_F = ||r|| ||z|| */
        double m = (double)w->mult[r] * clip_row(s, w, r, gnorm, out);
        for (long j = 0; j < Kout; j++)
            a[j] *= m;
    }
    if (rows > K) {
        blas_gemm(1, 0, Kout, q, rows, 1.0, w->A, Kout, Z, q, 0.0, w->Gs, q);
    } else {
        for (long r = 0; r < rows; r++)
            for (long j = 0; j < Kout; j++) {
                double a = w->A[r * Kout + j];
                if (a == 0)
                    continue;
                const double *z = Z + r * q;
                double *Gj = w->Gs + j * q;
                for (long l = 0; l < q; l++)
                    Gj[l] += a * z[l];
            }
    }
}

/* The test error of W (nc.h): the mean over the classes c of P(class c misclassified). */
static double test_error(const hdp_nc_problem *pb, nc_ws *w, hdp_xoshiro *g)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q, p = s->p;
    double total = 0;
    if (s->perturbation == HDP_NC_PERT_ADVERSARIAL && pb->P) /* U = P W^T: A^T W_j = U[:, j] */
        blas_gemm(0, 1, p, Kout, q, 1.0, pb->P, q, w->W, q, 0.0, w->U, Kout);
    for (long c = 0; c < K; c++) {
        const double *z = pb->ztest + c * q;
        for (long j = 0; j < Kout; j++)
            w->sc[j] = dotv(w->W + j * q, z, q);
        if (s->perturbation == HDP_NC_PERT_ADVERSARIAL) {
            /* the worst v, ||v||_inf <= beta, against rival j adds beta ||A^T (W_j - W_c)||_1
             * (Hoelder, attained at v = beta sign(A^T (W_j - W_c))) */
            int wrong = 0;
            if (Kout == 1) {
                double l1 = 0;
                for (long l = 0; l < p; l++)
                    l1 += fabs(pb->P ? w->U[l] : w->W[l]);
                wrong = !((c == 1 ? w->sc[0] : -w->sc[0]) - s->beta * l1 > 0);
            } else {
                for (long j = 0; j < Kout && !wrong; j++) {
                    if (j == c)
                        continue;
                    double l1 = 0;
                    if (pb->P)
                        for (long l = 0; l < p; l++)
                            l1 += fabs(w->U[l * Kout + j] - w->U[l * Kout + c]);
                    else
                        for (long l = 0; l < p; l++)
                            l1 += fabs(w->W[j * q + l] - w->W[c * q + l]);
                    if (w->sc[j] - w->sc[c] + s->beta * l1 >= 0)
                        wrong = 1;
                }
            }
            total += wrong;
        } else if (s->perturbation == HDP_NC_PERT_STOCHASTIC) {
            /* t test points M_c + beta s': scores W z_c + W A (beta s') */
            const long t = s->test_samples;
            fill_signs(g, s->beta, w->V, t * p);
            if (pb->P) {
                blas_gemm(0, 0, t, q, p, 1.0, w->V, p, pb->P, q, 0.0, w->VP, q);
                blas_gemm(0, 1, t, Kout, q, 1.0, w->VP, q, w->W, q, 0.0, w->VS, Kout);
            } else {
                blas_gemm(0, 1, t, Kout, p, 1.0, w->V, p, w->W, q, 0.0, w->VS, Kout);
            }
            memcpy(w->base, w->sc, sizeof(double) * (size_t)Kout);
            long wrong = 0;
            for (long i = 0; i < t; i++) {
                for (long j = 0; j < Kout; j++)
                    w->sc[j] = w->base[j] + w->VS[i * Kout + j];
                wrong += !correct(w->sc, Kout, c);
            }
            total += (double)wrong / (double)t;
        } else {
            total += !correct(w->sc, Kout, c);
        }
    }
    return total / (double)K;
}

/* One draw: train on the stream g, then the test error of the result (nc.h). */
static void one_draw(const hdp_nc_problem *pb, nc_ws *w, hdp_xoshiro *g, draw_out *out)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q, n = s->n;
    const long rows = pb->grouped ? K : n;
    const double *Z = pb->grouped ? pb->Z : w->Zs;
    const long *row_class = pb->grouped ? NULL : pb->sample_class; /* grouped: row r is class r */
    if (!pb->grouped)
        build_per_sample(pb, w, g); /* also the norms zn */
    else
        for (long r = 0; r < rows; r++)
            w->zn[r] = sqrt(dotv(Z + r * q, Z + r * q, q));
    for (long i = 0; i < n; i++)
        w->perm[i] = pb->grouped ? pb->sample_class[i] : i;
    /* initial weights */
    int wzero = s->init == HDP_NC_INIT_ZERO || s->init_std == 0;
    for (long i = 0; i < Kout * q; i++)
        w->W[i] = wzero ? 0.0 : s->init_std * hdp_rng_normal_fast(g);
    const double eta = s->batch > 0 ? s->eta / (double)s->batch : s->eta;
    out->maxclip = 0;
    out->clipped = out->gradients = 0;
    for (long t = 0; t < s->steps; t++) {
        /* the batch: full, or b samples drawn uniformly without replacement (partial
         * Fisher-Yates on perm; uniform whatever the order perm is left in) */
        if (s->batch > 0) {
            memset(w->mult, 0, sizeof(long) * (size_t)rows);
            for (long i = 0; i < s->batch; i++) {
                long j = i + (long)(hdp_xoshiro_double(g) * (double)(n - i));
                if (j >= n) j = n - 1;
                long tmp = w->perm[i];
                w->perm[i] = w->perm[j];
                w->perm[j] = tmp;
                w->mult[w->perm[i]]++;
            }
        } else {
            for (long r = 0; r < rows; r++)
                w->mult[r] = pb->grouped ? pb->nk[r] : 1;
        }
        gradient_sum(pb, w, Z, rows, row_class, wzero, out);
        /* W <- W - eta (Gs + N(0, sigma^2 I)) (eta/b for NoisySGD) */
        if (pb->sigma > 0)
            for (long i = 0; i < Kout * q; i++)
                w->W[i] -= eta * (w->Gs[i] + pb->sigma * hdp_rng_normal_fast(g));
        else
            for (long i = 0; i < Kout * q; i++)
                w->W[i] -= eta * w->Gs[i];
        wzero = 0;
    }
    out->error = test_error(pb, w, g);
}

static void *nc_ws_alloc(const void *pb) { return ws_alloc(pb); }
static void nc_ws_free(void *w) { ws_free(w); }

static hdp_status nc_draw(const void *pb, long d, void *w, hdp_xoshiro *g, void *out,
                          hdp_error *err)
{
    (void)d;
    (void)err;
    one_draw(pb, w, g, out);
    return HDP_OK;
}

hdp_status hdp_nc_run(const hdp_nc_problem *pb, int threads, hdp_nc_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, res);
    const hdp_nc_spec *s = &pb->spec;
    double t0 = omp_get_wtime();
    memset(res, 0, sizeof *res);
    const long draws = s->draws;
    const int nt = hdp_mc_loop_threads(draws, threads);
    draw_out *outs = calloc((size_t)draws, sizeof *outs);
    hdp_status st = HDP_OK;
    if (!outs) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory (%ld draws)", draws);
        goto done;
    }
    /* draw d: the base stream jumped d + 1 times (the unjumped one made the problem) */
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, (uint64_t)s->seed, 1);
    hdp_mc_loop loop = {.name = "nc", .runs = draws, .threads = nt, .ctx = pb,
                        .ws_alloc = nc_ws_alloc, .ws_free = nc_ws_free, .run = nc_draw,
                        .first = &first, .slots = outs, .slot_size = sizeof *outs};
    int old_blas = blas_single();
    st = hdp_mc_loop_run(&loop, err);
    blas_restore(old_blas);
    if (st != HDP_OK)
        goto done;
    /* serial reduction in draw order: the same bits for any thread count */
    double sum = 0, mn = INFINITY, mx = -INFINITY, clipped = 0, grads = 0;
    for (long d = 0; d < draws; d++) {
        sum += outs[d].error;
        mn = fmin(mn, outs[d].error);
        mx = fmax(mx, outs[d].error);
        clipped += (double)outs[d].clipped;
        grads += (double)outs[d].gradients;
        res->max_clipped_norm = fmax(res->max_clipped_norm, outs[d].maxclip);
    }
    double mean = sum / (double)draws, ss = 0;
    for (long d = 0; d < draws; d++)
        ss += (outs[d].error - mean) * (outs[d].error - mean);
    res->draws = draws;
    res->threads = nt;
    res->error_mean = mean;
    res->error_stderr = hdp_stderr_from_ss(ss, draws); /* 0 for one draw */
    res->error_min = mn;
    res->error_max = mx;
    res->clipped_fraction = grads > 0 ? clipped / grads : 0;
    res->sigma = pb->sigma;
    res->rho_total = (double)s->steps * s->rho; /* composition of T rho-zCDP steps */
    res->epsilon = hdp_zcdp_epsilon_cks(res->rho_total, s->delta);
    st = hdp_nc_exact_error(pb, &res->exact_error, err);
done:
    free(outs);
    res->seconds = omp_get_wtime() - t0;
    return st;
}
