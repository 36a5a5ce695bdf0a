/*
 * rf.c — DP-GD on random features and its Ornstein-Uhlenbeck limit (docs/theory.md
 * sections 6 and 7; Bombari-Mondelli, "Privacy for free in the overparameterized regime").
 * See hdpsgd/rf.h for the model and the conventions.
 *
 * Method.
 *  - Data (docs/theory.md §7): from the block Gaussian stream (rng.h) of the seed's xoshiro256++
 *    stream, in the order u, X, X_test, label noise, V; Phi = act(X V^T) by blocked dgemm.
 *  - Noise: run or configuration j draws its Gaussians from the block stream of its own
 *    xoshiro256++ stream (the seed's stream jumped j + 1 times, or cfg->stream times), the
 *    generator of every other Monte Carlo of the library (exact N(0, 1), SIMD).
 *  - Modes (docs/theory.md §7): the eigendecomposition (LAPACKE_dsyevd) of the smaller Gram
 *    matrix, K = Phi Phi^T (n x n) when p >= n, Phi^T Phi (p x p) otherwise; eigenvalues
 *    at or below N * DBL_EPSILON * s_max^2 (N the Gram size) count as zero. Then
 *    s_k^2, u_k, w_k = Phi^T u_k / s_k, lambda_k = 2 s_k^2 / n, beta_k = u_k^T y / s_k.
 *  - The min-norm interpolator Phi^+ y = sum_k beta_k w_k = Phi^T U S^{-1} beta (the
 *    least-squares solution when p < n), the limit t -> inf of gradient flow.
 *  - Closed forms of the OU process and of its Euler-Maruyama recursion (docs/theory.md §7).
 *  - DP-GD (Algorithm 1 of Bombari-Mondelli, docs/theory.md §7) literally in R^p: per step one
 *  dgemv for
 *    r = Phi theta - y, the weights min(1, C_clip / (2 |r_i| ||phi_i||)), one dgemv for
 *    Phi^T (w .* r): never an n x p gradient matrix.
 *  - The same algorithm in mode coordinates for the experiments (hdp_rf_dpgd_final).
 * Determinism: OpenBLAS's results depend on its thread count (measured: dgemm, dgemv
 * and dsyevd differ in the last bits between 1 and 2 threads), so the library runs the
 * BLAS single-threaded, cuts the large products into fixed blocks of rows shared by
 * OpenMP threads, and gives every run its own stream and output slot.
 * Linking: the products go through OpenBLAS's CBLAS (families/blas_internal.h); the library
 * links GSL without its reference libgslcblas, which served cblas_* when it came first on
 * the link line (a 2000 x 4000 Gram matrix took 10x longer that way).
 */
#include "hdpsgd/rf.h"
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

#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"



/* rows per block of the large products (independent of the thread count) */
#define BLOCK 128

/* ---- small helpers ---- */


static double dot(const double *a, const double *b, long len)
{
    double s = 0;
    for (long i = 0; i < len; i++)
        s += a[i] * b[i];
    return s;
}

/* mean of (pred - y)^2 */
static double mse(const double *pred, const double *y, long len)
{
    double s = 0;
    for (long i = 0; i < len; i++) {
        double e = pred[i] - y[i];
        s += e * e;
    }
    return s / (double)len;
}

/* ---- the data set (docs/theory.md §7) ---- */

void hdp_rf_spec_from_model(const hdp_model *m, hdp_rf_spec *spec)
{
    if (!m || !spec)
        return;
    memset(spec, 0, sizeof *spec);
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    spec->d = rk->d;
    spec->n = rk->n;
    spec->p = rk->p;
    spec->m = rk->test_size;
    spec->activation = rk->activation;
    spec->target = rk->target;
    spec->label_noise = rk->label_noise;
    spec->seed = m->seed;
    spec->v = rk->val_size > 0 ? rk->val_size : (long)fmax(1.0, nearbyint((double)rk->test_size / 5.0));
}

void hdp_rf_problem_free(hdp_rf_problem *pb)
{
    if (!pb)
        return;
    double **arrays[] = {&pb->Phi,  &pb->Phi_test, &pb->y,      &pb->y_test,
                         &pb->phi_norm, &pb->test_norm2, &pb->s2, &pb->s,
                         &pb->lambda, &pb->beta, &pb->U, &pb->G, &pb->test_perp2,
                         &pb->Phi_val, &pb->y_val};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    pb->r = 0;
}

static double activation(hdp_rf_activation_kind a, double z)
{
    switch (a) {
    case HDP_RF_TANH: return tanh(z);
    case HDP_RF_RELU: return z > 0 ? z : 0.0;
    case HDP_RF_LINEAR_ACT: return z;
    }
    return z;
}

/* F[rows x p] = act(X V^T) in fixed row blocks (docs/theory.md §7: phi(x) = act(V x)). */
static void features(const double *X, long rows, const double *V, long p, long d,
                     hdp_rf_activation_kind act, double *F, int nthreads)
{
    long nb = (rows + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (long b = 0; b < nb; b++) {
        long i0 = b * BLOCK, i1 = i0 + BLOCK < rows ? i0 + BLOCK : rows;
        blas_gemm(0, 1, i1 - i0, p, d, 1.0, X + i0 * d, d, V, d, 0.0, F + i0 * p, p);
        for (long i = i0 * p; i < i1 * p; i++)
            F[i] = activation(act, F[i]);
    }
}

/* Upper triangle of the kernel K = Phi Phi^T of docs/theory.md §7 (n x n, row-major), in row
 * blocks. */
static void gram_rows(const double *Phi, long n, long p, double *K, int nthreads)
{
    long nb = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (long b = 0; b < nb; b++) {
        long i0 = b * BLOCK, i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
        blas_gemm(0, 1, i1 - i0, n - i0, p, 1.0, Phi + i0 * p, p, Phi + i0 * p, p, 0.0,
             K + i0 * n + i0, n);
    }
}

/* Upper triangle of Phi^T Phi (p x p, row-major), in row blocks: the Gram matrix with the
 * same nonzero eigenvalues s_k^2 as K (docs/theory.md §7), smaller when p < n. */
static void gram_cols(const double *Phi, long n, long p, double *Gm, int nthreads)
{
    long nb = (p + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (long b = 0; b < nb; b++) {
        long j0 = b * BLOCK, j1 = j0 + BLOCK < p ? j0 + BLOCK : p;
        blas_gemm(1, 0, j1 - j0, p - j0, n, 1.0, Phi + j0, p, Phi + j0, p, 0.0, Gm + j0 * p + j0, p);
    }
}

/* C[M x N] = A[M x K] B[K x N] (transB = 0) or A B^T (transB = 1, B is N x K), row blocks:
 * the products Phi V_r, Phi_test Phi^T, H U of the modes (docs/theory.md §7). */
static void gemm_rows(long M, long N, long K, const double *A, int transB, const double *B,
                      double *C, int nthreads)
{
    long nb = (M + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (long b = 0; b < nb; b++) {
        long i0 = b * BLOCK, i1 = i0 + BLOCK < M ? i0 + BLOCK : M;
        blas_gemm(0, transB, i1 - i0, N, K, 1.0, A + i0 * K, K, B, transB ? K : N, 0.0, C + i0 * N, N);
    }
}

/*
 * The modes of docs/theory.md §7: eigendecomposition of a symmetric N x N Gram matrix whose upper
 * triangle (row-major) is
 * in A: the same array read column-major holds the lower triangle, so LAPACK gets it
 * without a transposed copy, and eigenvector k comes back contiguous at A + k N.
 * Keeps the eigenvalues above N DBL_EPSILON max: writes r, s2[r] (decreasing) and
 * vec[N x r] (row-major, column k the k-th eigenvector).
 */
static hdp_status eig_keep(double *A, long N, long *r_out, double *s2, double *vec,
                           hdp_error *err)
{
    double *w = hdp_dalloc((size_t)N);
    if (!w)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld eigenvalues", N);
    lapack_int info =
        LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int)N, A, (lapack_int)N, w);
    if (info != 0) {
        free(w);
        return hdp_fail(err, info < 0 ? HDP_ENOMEM : HDP_ENUMERIC,
                        "LAPACKE_dsyevd failed on the %ld x %ld Gram matrix (info = %d)", N, N,
                        (int)info);
    }
    double tol = (double)N * DBL_EPSILON * (w[N - 1] > 0 ? w[N - 1] : 0.0);
    long r = 0;
    for (long k = N - 1; k >= 0 && w[k] > tol; k--)
        s2[r++] = w[k];
    for (long i = 0; i < N; i++)
        for (long k = 0; k < r; k++)
            vec[i * r + k] = A[(N - 1 - k) * N + i];
    *r_out = r;
    free(w);
    return HDP_OK;
}

/* HDP_EINPUT for sizes below 1 or too large to hold */
static hdp_status rf_check_sizes(const hdp_rf_spec *spec, hdp_error *err)
{
    const long d = spec->d, n = spec->n, p = spec->p, m = spec->m;
    if (d < 1 || n < 1 || p < 1 || m < 1)
        return hdp_fail(err, HDP_EINPUT, "random features: d = %ld, n = %ld, p = %ld, test size "
                        "%ld must all be >= 1", d, n, p, m);
    if ((double)(n + m) * (double)p > 4.0e9 || (double)n * n > 4.0e8 || p > 2147483647L / 2)
        return hdp_fail(err, HDP_EINPUT, "random features: (n + test size) x p = %.3g doubles "
                        "(%.3g GB) is too large", (double)(n + m) * (double)p,
                        8e-9 * (double)(n + m) * (double)p);
    return HDP_OK;
}

/* the problem's arrays, with room for N = min(n, p) modes */
static hdp_status rf_problem_alloc(hdp_rf_problem *pb, long N, hdp_error *err)
{
    const long n = pb->spec.n, p = pb->spec.p, m = pb->spec.m;
    pb->Phi = hdp_dalloc((size_t)(n * p));
    pb->Phi_test = hdp_dalloc((size_t)(m * p));
    pb->y = hdp_dalloc((size_t)n);
    pb->y_test = hdp_dalloc((size_t)m);
    pb->phi_norm = hdp_dalloc((size_t)n);
    pb->test_norm2 = hdp_dalloc((size_t)m);
    pb->s2 = hdp_dalloc((size_t)N);
    pb->s = hdp_dalloc((size_t)N);
    pb->lambda = hdp_dalloc((size_t)N);
    pb->beta = hdp_dalloc((size_t)N);
    if (!pb->Phi || !pb->Phi_test || !pb->y || !pb->y_test || !pb->phi_norm || !pb->test_norm2 ||
        !pb->s2 || !pb->s || !pb->lambda || !pb->beta)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for random features with n = %ld, p = %ld, "
                        "test size %ld (%.3g GB)", n, p, m, 8e-9 * (double)(n + m) * (double)p);
    return HDP_OK;
}

/* The data, in a fixed order from the base stream (docs/theory.md §7): u uniform on the unit
 * sphere, X [n x d], X_test [m x d], the labels (u^T x or its sign) into pb->y, pb->y_test, their
 * Gaussian noise, then V [p x d], V_ij ~ N(0, 1/d) row by row (the first rows are the same for
 * every p). */
static void rf_draw_data(const hdp_rf_spec *spec, hdp_normals *ns, double *u, double *X,
                         double *Xt, double *V, hdp_rf_problem *pb)
{
    const long d = spec->d, n = spec->n, p = spec->p, m = spec->m;
    double un = 0;
    hdp_normals_fill(ns, u, d);
    for (long i = 0; i < d; i++)
        un += u[i] * u[i];
    for (long i = 0; i < d; i++)
        u[i] /= sqrt(un); /* uniform on the unit sphere */
    hdp_normals_fill(ns, X, n * d);
    hdp_normals_fill(ns, Xt, m * d);
    for (long i = 0; i < n + m; i++) {
        const double *x = i < n ? X + i * d : Xt + (i - n) * d;
        double z = dot(u, x, d), yv = spec->target == HDP_RF_SIGN ? (z >= 0 ? 1.0 : -1.0) : z;
        if (i < n) pb->y[i] = yv;
        else pb->y_test[i - n] = yv;
    }
    if (spec->label_noise > 0) {
        /* the noise of y then of y_test, through V's array (drawn next) */
        double sd = sqrt(spec->label_noise);
        hdp_normals_fill(ns, V, n + m);
        for (long i = 0; i < n; i++)
            pb->y[i] += sd * V[i];
        for (long i = 0; i < m; i++)
            pb->y_test[i] += sd * V[n + i];
    }
    double vs = 1.0 / sqrt((double)d);
    hdp_normals_fill(ns, V, p * d);
    for (long i = 0; i < p * d; i++)
        V[i] *= vs;
}

/* The validation set (HDP_RF_VALIDATION, rf.h): X_val [v x d] then its label noise from the
 * block stream of the seed's stream long-jumped 10 times; labels by the same u, features by
 * the same V. */
static hdp_status rf_validation(hdp_rf_problem *pb, const double *u, const double *V, int nth,
                                hdp_error *err)
{
    const hdp_rf_spec *spec = &pb->spec;
    const long d = spec->d, p = spec->p, v = spec->v;
    double *Xv = hdp_dalloc((size_t)(v * d)), *noise = hdp_dalloc((size_t)v);
    pb->Phi_val = hdp_dalloc((size_t)(v * p));
    pb->y_val = hdp_dalloc((size_t)v);
    if (!Xv || !noise || !pb->Phi_val || !pb->y_val) {
        free(Xv);
        free(noise);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld validation samples with p = %ld", v,
                        p);
    }
    hdp_xoshiro g;
    hdp_normals ns;
    hdp_xoshiro_seed(&g, (uint64_t)spec->seed);
    for (int k = 0; k < 10; k++)
        hdp_xoshiro_long_jump(&g);
    hdp_normals_init(&ns, &g);
    hdp_normals_fill(&ns, Xv, v * d);
    for (long i = 0; i < v; i++) {
        double z = dot(u, Xv + i * d, d);
        pb->y_val[i] = spec->target == HDP_RF_SIGN ? (z >= 0 ? 1.0 : -1.0) : z;
    }
    if (spec->label_noise > 0) {
        double sd = sqrt(spec->label_noise);
        hdp_normals_fill(&ns, noise, v);
        for (long i = 0; i < v; i++)
            pb->y_val[i] += sd * noise[i];
    }
    features(Xv, v, V, p, d, spec->activation, pb->Phi_val, nth);
    free(Xv);
    free(noise);
    return HDP_OK;
}

/* Draw the data and compute Phi = act(X V^T), Phi_test, the feature norms and the losses of
 * theta = 0; with validation, the validation set (rf_validation). */
static hdp_status rf_data_and_features(hdp_rf_problem *pb, int validation, int nth,
                                       hdp_error *err)
{
    const hdp_rf_spec *spec = &pb->spec;
    const long d = spec->d, n = spec->n, p = spec->p, m = spec->m;
    hdp_status st = HDP_OK;
    double *u = hdp_dalloc((size_t)d), *X = hdp_dalloc((size_t)(n * d));
    /* V holds the label noise first: at least n + m entries */
    double *Xt = hdp_dalloc((size_t)(m * d)), *V = hdp_dalloc((size_t)(p * d > n + m ? p * d : n + m));
    if (!u || !X || !Xt || !V) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for random features with n = %ld, p = %ld, "
                      "test size %ld (%.3g GB)", n, p, m, 8e-9 * (double)(n + m) * (double)p);
        goto done;
    }
    hdp_xoshiro g;
    hdp_normals ns;
    hdp_xoshiro_seed(&g, (uint64_t)spec->seed);
    hdp_normals_init(&ns, &g);
    rf_draw_data(spec, &ns, u, X, Xt, V, pb);
    features(X, n, V, p, d, spec->activation, pb->Phi, nth);
    features(Xt, m, V, p, d, spec->activation, pb->Phi_test, nth);
    for (long i = 0; i < n; i++)
        pb->phi_norm[i] = sqrt(dot(pb->Phi + i * p, pb->Phi + i * p, p));
    for (long j = 0; j < m; j++)
        pb->test_norm2[j] = dot(pb->Phi_test + j * p, pb->Phi_test + j * p, p);
    double s0 = 0, s1 = 0;
    for (long i = 0; i < n; i++) s0 += pb->y[i] * pb->y[i];
    for (long j = 0; j < m; j++) s1 += pb->y_test[j] * pb->y_test[j];
    pb->zero_train = s0 / (double)n;
    pb->zero_test = s1 / (double)m;
    if (validation)
        st = rf_validation(pb, u, V, nth, err);
done:
    free(u);
    free(X);
    free(Xt);
    free(V);
    return st;
}

/* The modes (docs/theory.md §7): the eigendecomposition of the smaller Gram matrix (N x N), its
 * eigenvectors into vec [N x N]; r, s_k^2, s_k, lambda_k, U and beta_k = u_k^T y / s_k. */
static hdp_status rf_modes(hdp_rf_problem *pb, long N, double *vec, int nth, hdp_error *err)
{
    const long n = pb->spec.n, p = pb->spec.p;
    double *Gram = hdp_dalloc((size_t)(N * N));
    if (!Gram)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the %ld x %ld Gram matrix", N, N);
    if (p >= n)
        gram_rows(pb->Phi, n, p, Gram, nth);
    else
        gram_cols(pb->Phi, n, p, Gram, nth);
    long r = 0;
    hdp_status st = eig_keep(Gram, N, &r, pb->s2, vec, err);
    free(Gram);
    if (st != HDP_OK)
        return st;
    if (r < 1)
        return hdp_fail(err, HDP_ENUMERIC, "random features: the feature matrix is zero");
    pb->r = r;
    for (long k = 0; k < r; k++) {
        pb->s[k] = sqrt(pb->s2[k]);
        pb->lambda[k] = 2.0 * pb->s2[k] / (double)n;
    }
    pb->U = hdp_dalloc((size_t)(n * r));
    if (!pb->U)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the %ld x %ld modes", n, r);
    if (p >= n) {
        memcpy(pb->U, vec, sizeof(double) * (size_t)(n * r)); /* u_k */
    } else {
        /* w_k = v_k (eigenvectors of Phi^T Phi), u_k = Phi v_k / s_k */
        gemm_rows(n, r, p, pb->Phi, 0, vec, pb->U, nth);
        for (long i = 0; i < n; i++)
            for (long k = 0; k < r; k++)
                pb->U[i * r + k] /= pb->s[k];
    }
    /* beta_k = u_k^T y / s_k: the min-norm interpolator is sum_k beta_k w_k */
    blas_gemv(1, n, r, 1.0, pb->U, r, pb->y, 0.0, pb->beta);
    for (long k = 0; k < r; k++)
        pb->beta[k] /= pb->s[k];
    return HDP_OK;
}

/* The min-norm interpolator theta* = Phi^T U S^{-1} beta: its norm, train and test losses. */
static hdp_status rf_minnorm(hdp_rf_problem *pb, hdp_error *err)
{
    const long n = pb->spec.n, p = pb->spec.p, m = pb->spec.m, r = pb->r;
    double *c = hdp_dalloc((size_t)r), *alpha = hdp_dalloc((size_t)n);
    double *theta = hdp_dalloc((size_t)p), *pred = hdp_dalloc((size_t)(n > m ? n : m));
    hdp_status st = HDP_OK;
    if (!c || !alpha || !theta || !pred) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory");
    } else {
        for (long k = 0; k < r; k++)
            c[k] = pb->beta[k] / pb->s[k];
        blas_gemv(0, n, r, 1.0, pb->U, r, c, 0.0, alpha);
        blas_gemv(1, n, p, 1.0, pb->Phi, p, alpha, 0.0, theta);
        pb->minnorm_norm = sqrt(dot(theta, theta, p));
        blas_gemv(0, n, p, 1.0, pb->Phi, p, theta, 0.0, pred);
        pb->minnorm_train = mse(pred, pb->y, n);
        blas_gemv(0, m, p, 1.0, pb->Phi_test, p, theta, 0.0, pred);
        pb->minnorm_test = mse(pred, pb->y_test, m);
    }
    free(c);
    free(alpha);
    free(theta);
    free(pred);
    return st;
}

/* HDP_RF_TEST_MODES: G = Phi_test W, W = Phi^T U S^{-1} (p >= n) or the eigenvectors vec
 * (p < n), and the null-space norms ||P_perp phi_test_j||^2. */
static hdp_status rf_test_modes(hdp_rf_problem *pb, const double *vec, int nth, hdp_error *err)
{
    const long n = pb->spec.n, p = pb->spec.p, m = pb->spec.m, r = pb->r;
    pb->G = hdp_dalloc((size_t)(m * r));
    pb->test_perp2 = hdp_dalloc((size_t)m);
    if (!pb->G || !pb->test_perp2)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the %ld x %ld test projections", m, r);
    if (p >= n) {
        double *H = hdp_dalloc((size_t)(m * n));
        if (!H)
            return hdp_fail(err, HDP_ENOMEM, "out of memory for Phi_test Phi^T (%ld x %ld)", m, n);
        gemm_rows(m, n, p, pb->Phi_test, 1, pb->Phi, H, nth);
        gemm_rows(m, r, n, H, 0, pb->U, pb->G, nth);
        free(H);
        for (long j = 0; j < m; j++)
            for (long k = 0; k < r; k++)
                pb->G[j * r + k] /= pb->s[k];
    } else {
        gemm_rows(m, r, p, pb->Phi_test, 0, vec, pb->G, nth);
    }
    for (long j = 0; j < m; j++) {
        double g2 = dot(pb->G + j * r, pb->G + j * r, r);
        double perp = pb->test_norm2[j] - g2;
        pb->test_perp2[j] = (r == p || perp < 0) ? 0.0 : perp;
    }
    return HDP_OK;
}

/*
 * The data set and its modes, step by step (see the opening comment): the data and the
 * features, the modes, the min-norm interpolator, and with HDP_RF_TEST_MODES the test
 * projections. OpenBLAS single-threaded throughout; OpenMP threads split the products.
 */
hdp_status hdp_rf_problem_build(const hdp_rf_spec *spec, int flags, int threads,
                                hdp_rf_problem *pb, hdp_error *err)
{
    HDP_ZERO(pb);
    HDP_REQUIRE(err, spec);
    HDP_REQUIRE(err, pb);
    memset(pb, 0, sizeof *pb);
    pb->spec = *spec;
    hdp_status st = rf_check_sizes(spec, err);
    if (st != HDP_OK)
        return st;
    if ((flags & HDP_RF_VALIDATION) && (spec->v < 1 || (double)spec->v * (double)spec->p > 4.0e9))
        return hdp_fail(err, HDP_EINPUT, "random features: validation size %ld with p = %ld: "
                        "expected >= 1 and v x p <= 4e9", spec->v, spec->p);
    double t0 = omp_get_wtime();
    int old = blas_single();
    int nth = threads_to_use(threads);
    const long N = spec->p >= spec->n ? spec->n : spec->p; /* size of the Gram matrix */
    double *vec = NULL;
    if ((st = rf_problem_alloc(pb, N, err)) != HDP_OK ||
        (st = rf_data_and_features(pb, (flags & HDP_RF_VALIDATION) != 0, nth, err)) != HDP_OK)
        goto done;
    if (!(vec = hdp_dalloc((size_t)(N * N)))) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the %ld x %ld eigenvectors", N, N);
        goto done;
    }
    if ((st = rf_modes(pb, N, vec, nth, err)) != HDP_OK || (st = rf_minnorm(pb, err)) != HDP_OK)
        goto done;
    if (flags & HDP_RF_TEST_MODES)
        st = rf_test_modes(pb, vec, nth, err);
done:
    free(vec);
    blas_restore(old);
    pb->seconds = omp_get_wtime() - t0;
    return st;
}

/* ---- hyperparameters and privacy (docs/theory.md §6) ---- */

hdp_status hdp_rf_dpgd_calibrate(hdp_rf_dpgd *q, long n, hdp_error *err)
{
    HDP_REQUIRE(err, q);
    if (!(q->eta > 0) || !isfinite(q->eta))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: eta = %g must be a finite number > 0", q->eta);
    if (q->T < 1)
        return hdp_fail(err, HDP_EINPUT, "DP-GD: T = %ld steps: need at least 1", q->T);
    if (!(q->C_clip > 0))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: C_clip = %g must be > 0", q->C_clip);
    if (!(q->delta > 0 && q->delta < 1))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: delta = %g must lie in (0, 1)", q->delta);
    q->tau = q->eta * (double)q->T;
    if (q->sigma > 0) {
        /* given: report the CKS epsilon of rho_z = eta T / (2 sigma^2) (docs/theory.md §6) */
        if (isinf(q->C_clip))
            return hdp_fail(err, HDP_EINPUT, "DP-GD: sigma > 0 with C_clip = inf gives infinite "
                            "noise 2 C_clip sigma / n");
        q->route = HDP_RF_SIGMA_GIVEN;
        q->rho_z = hdp_dpgd_rho_z(q->eta, q->T, q->sigma);
        q->epsilon_cks = hdp_zcdp_epsilon_cks(q->rho_z, q->delta);
        q->epsilon = q->epsilon_cks;
    } else if (isinf(q->epsilon)) {
        q->route = HDP_RF_SIGMA_NONE;
        q->sigma = 0;
        q->rho_z = INFINITY;
        q->epsilon_cks = INFINITY;
    } else {
        if (!(q->epsilon > 0))
            return hdp_fail(err, HDP_EINPUT, "DP-GD: epsilon = %g must be > 0", q->epsilon);
        if (isinf(q->C_clip))
            return hdp_fail(err, HDP_EINPUT, "DP-GD: C_clip = inf (no clipping) needs epsilon = "
                            "inf: the private noise 2 C_clip sigma / n would be infinite");
        if (hdp_dpgd_simple_applies(q->epsilon, q->delta)) {
            /* Bombari-Mondelli, Proposition 2.2: sigma = sqrt(eta T) sqrt(8 ln(1/delta)) /
             * epsilon */
            q->route = HDP_RF_SIGMA_SIMPLE;
            q->sigma = hdp_dpgd_sigma_simple(q->eta, q->T, q->epsilon, q->delta);
            q->rho_z = hdp_dpgd_rho_z(q->eta, q->T, q->sigma);
        } else {
            /* outside (0, 8 ln(1/delta)): rho_z = eta T / (2 sigma^2) with rho_z from CKS */
            q->route = HDP_RF_SIGMA_ZCDP;
            hdp_status st =
                hdp_dpgd_sigma_zcdp(q->eta, q->T, q->epsilon, q->delta, &q->sigma, &q->rho_z, err);
            if (st != HDP_OK)
                return st;
        }
        q->epsilon_cks = hdp_zcdp_epsilon_cks(q->rho_z, q->delta);
    }
    q->s = q->sigma > 0 ? 2.0 * q->C_clip * q->sigma / (double)n : 0.0; /* docs/theory.md §7 */
    return HDP_OK;
}

/* The [dpgd] keys with Bombari-Mondelli's experimental scalings (docs/theory.md §7): eta = 1/p, T =
 * CT d/(eta p), C_clip = C sqrt(p), delta = 1/n; sigma by docs/theory.md §6. */
hdp_status hdp_rf_dpgd_from_model(const hdp_model *m, long p, long n, long d, hdp_rf_dpgd *q,
                                  hdp_error *err)
{
    HDP_ZERO(q);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, q);
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    memset(q, 0, sizeof *q);
    q->eta = dk->eta > 0 ? dk->eta : 1.0 / (double)p;
    if (hdp_model_key_given(m, "dpgd", "T") && hdp_model_key_given(m, "dpgd", "CT"))
        return hdp_model_fail_key(m, "dpgd", "T", err,
                                  "give T or CT, not both (T = %ld, CT = %g; T = CT d/(eta p))",
                                  dk->T, dk->CT);
    if (dk->T > 0) {
        q->T = dk->T;
    } else {
        double T = nearbyint(dk->CT * (double)d / (q->eta * (double)p));
        if (!(T >= 1))
            return hdp_model_fail_key(m, "dpgd", "CT", err,
                                      "CT = %g gives T = round(CT d / (eta p)) = round(%g) = 0 "
                                      "steps (d = %ld, p = %ld, eta = %g): raise CT or give T",
                                      dk->CT, dk->CT * (double)d / (q->eta * (double)p), d,
                                      p, q->eta);
        if (T > 1e9)
            return hdp_model_fail_key(m, "dpgd", "CT", err,
                                      "CT = %g gives T = %.3g steps (d = %ld, p = %ld, eta = %g): "
                                      "too many", dk->CT, T, d, p, q->eta);
        q->T = (long)T;
    }
    if (hdp_model_key_given(m, "dpgd", "C") && hdp_model_key_given(m, "dpgd", "clip"))
        return hdp_model_fail_key(m, "dpgd", "clip", err,
                                  "give C (C_clip = C sqrt(p)) or clip (absolute), not both");
    q->C_clip = dk->clip > 0 ? dk->clip : dk->C * sqrt((double)p);
    q->delta = dk->delta > 0 ? dk->delta : 1.0 / (double)n;
    if (dk->sigma > 0 && hdp_model_key_given(m, "dpgd", "epsilon"))
        return hdp_model_fail_key(m, "dpgd", "sigma", err,
                                  "sigma = %g > 0 is used as is: leave epsilon out, or set sigma "
                                  "= 0 to calibrate sigma from epsilon", dk->sigma);
    if (isinf(q->C_clip) && (dk->sigma > 0 || !isinf(dk->epsilon))) {
        const char *key = dk->clip > 0 ? "clip" : "C";
        return hdp_model_fail_key(m, "dpgd", key, err,
                                  "C_clip = inf (no clipping) needs epsilon = inf and sigma = 0: "
                                  "the private noise 2 C_clip sigma / n would be infinite");
    }
    q->epsilon = dk->epsilon;
    q->sigma = dk->sigma;
    return hdp_rf_dpgd_calibrate(q, n, err);
}

/* ---- closed forms (docs/theory.md §7) ---- */

/* Losses of theta = sum_k c_k w_k (docs/theory.md §7): Phi_test theta = G c, Phi theta = U S c. */
void hdp_rf_modes_loss(const hdp_rf_problem *pb, const double *c, double *test, double *train)
{
    if (!pb || !c)
        return;
    const long n = pb->spec.n, m = pb->spec.m, r = pb->r;
    double *sc = hdp_dalloc((size_t)r), *pred = hdp_dalloc((size_t)(n > m ? n : m));
    if (!sc || !pred) {
        if (test) *test = NAN;
        if (train) *train = NAN;
        free(sc);
        free(pred);
        return;
    }
    int old = blas_single();
    if (train) {
        for (long k = 0; k < r; k++)
            sc[k] = pb->s[k] * c[k];
        blas_gemv(0, n, r, 1.0, pb->U, r, sc, 0.0, pred);
        *train = mse(pred, pb->y, n);
    }
    if (test) {
        if (pb->G) {
            blas_gemv(0, m, r, 1.0, pb->G, r, c, 0.0, pred);
            *test = mse(pred, pb->y_test, m);
        } else {
            *test = NAN;
        }
    }
    blas_restore(old);
    free(sc);
    free(pred);
}

/* Mean factor and variance per unit s^2 of mode k at time t (docs/theory.md §7); discrete: the
 * Euler-Maruyama recursion with step eta after k = round(t/eta) steps. */
static void mode_moments(double lambda, double eta, double t, int discrete, double *mean_factor,
                         double *var)
{
    if (!discrete) {
        *mean_factor = -expm1(-lambda * t);
        *var = lambda > 0 ? -expm1(-2.0 * lambda * t) / (2.0 * lambda) : t;
        return;
    }
    /* a = 1 - eta lambda: mean factor 1 - a^k, variance eta (1 - a^{2k}) / (1 - a^2), with
     * log1p/expm1 so that eta lambda -> 0 keeps full precision */
    double k = nearbyint(t / eta), x = eta * lambda;
    if (x == 0) {
        *mean_factor = 0;
        *var = eta * k;
        return;
    }
    double one_minus_a2 = x * (2.0 - x);
    if (x < 1) {
        double L = log1p(-x);
        *mean_factor = -expm1(k * L);
        *var = eta * -expm1(2.0 * k * L) / one_minus_a2;
        return;
    }
    double ak = pow(1.0 - x, k);
    *mean_factor = 1.0 - ak;
    *var = one_minus_a2 != 0 ? eta * (1.0 - ak * ak) / one_minus_a2 : eta * k;
}

/* The closed form of docs/theory.md §7 at time t: E loss at a point = (phi^T mean - y)^2 + phi^T
 * Cov phi, phi^T Cov phi = sum_k (phi^T w_k)^2 var_k + s^2 t ||P_perp phi||^2. */
void hdp_rf_expected_loss(const hdp_rf_problem *pb, double eta, double s, double t, int discrete,
                          double *test, double *train)
{
    if (!pb)
        return;
    const long n = pb->spec.n, m = pb->spec.m, r = pb->r;
    double *mean = hdp_dalloc((size_t)r), *var = hdp_dalloc((size_t)r);
    if (!mean || !var || (test && !pb->G)) {
        if (test) *test = NAN;
        if (train) *train = NAN;
        free(mean);
        free(var);
        return;
    }
    for (long k = 0; k < r; k++) {
        double f, v;
        mode_moments(pb->lambda[k], eta, t, discrete, &f, &v);
        mean[k] = f * pb->beta[k];
        var[k] = s * s * v;
    }
    /* the null directions: a Brownian motion, variance s^2 t (s^2 eta k when discrete) */
    double var_perp = s * s * (discrete ? eta * nearbyint(t / eta) : t);
    if (train) {
        /* phi_i^T w_k = s_k U_ik; phi_i has no null-space part */
        double acc = 0;
        for (long i = 0; i < n; i++) {
            const double *ui = pb->U + i * r;
            double f = 0, q = 0;
            for (long k = 0; k < r; k++) {
                double a = pb->s[k] * ui[k];
                f += a * mean[k];
                q += a * a * var[k];
            }
            double e = f - pb->y[i];
            acc += e * e + q;
        }
        *train = acc / (double)n;
    }
    if (test) {
        double acc = 0;
        for (long j = 0; j < m; j++) {
            const double *gj = pb->G + j * r;
            double f = 0, q = 0;
            for (long k = 0; k < r; k++) {
                f += gj[k] * mean[k];
                q += gj[k] * gj[k] * var[k];
            }
            double e = f - pb->y_test[j];
            acc += e * e + q + var_perp * pb->test_perp2[j];
        }
        *test = acc / (double)m;
    }
    free(mean);
    free(var);
}

/* ---- `hdpsgd rf`: DP-GD in R^p coupled to the OU process (docs/theory.md §7) ---- */

void hdp_rf_sim_result_free(hdp_rf_sim_result *res)
{
    if (!res)
        return;
    free(res->step);
    res->step = NULL;
    double **arrays[] = {&res->tau,     &res->dpgd_test, &res->dpgd_test_se, &res->dpgd_train,
                         &res->dpgd_train_se, &res->ou_test, &res->ou_train,
                         &res->em_expected_test, &res->em_test, &res->em_test_se, &res->ex_test,
                         &res->ex_test_se, &res->clipped, &res->gf_test};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    res->points = 0;
}

/* the recorded steps: 0 and round(i T / records), i = 1..records, without repeats */
static long record_steps(long T, long records, long *out)
{
    long P = 0;
    out[P++] = 0;
    for (long i = 1; i <= records; i++) {
        long k = (long)nearbyint((double)i * (double)T / (double)records);
        if (k > out[P - 1])
            out[P++] = k;
    }
    if (out[P - 1] != T)
        out[P++] = T;
    return P;
}

/* constants shared by the runs */
typedef struct {
    const hdp_rf_problem *pb;
    const hdp_rf_dpgd *q;
    const long *steps; /* recorded steps */
    long P;
    double cs;                        /* s sqrt(eta): the DP-GD noise scale (Algorithm 1) */
    double *ex_decay, *ex_shift, *ex_sd; /* exact OU step of length eta per mode (docs/theory.md §7) */
} sim_ctx;

typedef struct {
    double *theta, *xi, *Z, *g;       /* [p] */
    double *resid, *v, *q;            /* [n] */
    double *aD, *c_em, *c_ex, *xim, *wz; /* [r] */
    double *pred, *zt;                /* [m] */
    hdp_normals ns;                   /* the run's block Gaussian stream */
} sim_ws;

static void sim_ws_free(sim_ws *w)
{
    if (!w)
        return;
    double *arrays[] = {w->theta, w->xi, w->Z, w->g, w->resid, w->v, w->q, w->aD,
                        w->c_em,  w->c_ex, w->xim, w->wz, w->pred, w->zt};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(w);
}

static sim_ws *sim_ws_alloc(const hdp_rf_problem *pb)
{
    const long n = pb->spec.n, p = pb->spec.p, m = pb->spec.m, r = pb->r;
    sim_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->theta = hdp_dalloc((size_t)p);
    w->xi = hdp_dalloc((size_t)p);
    w->Z = hdp_dalloc((size_t)p);
    w->g = hdp_dalloc((size_t)p);
    w->resid = hdp_dalloc((size_t)n);
    w->v = hdp_dalloc((size_t)n);
    w->q = hdp_dalloc((size_t)n);
    w->aD = hdp_dalloc((size_t)r);
    w->c_em = hdp_dalloc((size_t)r);
    w->c_ex = hdp_dalloc((size_t)r);
    w->xim = hdp_dalloc((size_t)r);
    w->wz = hdp_dalloc((size_t)r);
    w->pred = hdp_dalloc((size_t)m);
    w->zt = hdp_dalloc((size_t)m);
    if (!w->theta || !w->xi || !w->Z || !w->g || !w->resid || !w->v || !w->q || !w->aD ||
        !w->c_em || !w->c_ex || !w->xim || !w->wz || !w->pred || !w->zt) {
        sim_ws_free(w);
        return NULL;
    }
    return w;
}

/* Fraction of samples whose gradient 2 |r_i| ||phi_i|| exceeds C_clip (docs/theory.md §7). */
static double clipped_fraction(const double *resid, const double *phi_norm, long n, double C)
{
    long c = 0;
    for (long i = 0; i < n; i++)
        c += 2.0 * fabs(resid[i]) * phi_norm[i] > C;
    return (double)c / (double)n;
}

/* a = S^{-1} U^T x: the mode coefficients w_k^T v of a vector v given x = Phi v (docs/theory.md §7:
 * w_k = Phi^T u_k / s_k) */
static void to_modes(const hdp_rf_problem *pb, const double *x, double *a)
{
    const long n = pb->spec.n, r = pb->r;
    blas_gemv(1, n, r, 1.0, pb->U, r, x, 0.0, a);
    for (long k = 0; k < r; k++)
        a[k] /= pb->s[k];
}

static double dist(const double *a, const double *b, long len)
{
    double s = 0;
    for (long i = 0; i < len; i++)
        s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

/* per-run outputs (slots owned by the driver) */
typedef struct {
    double *test, *train, *em, *ex, *clip; /* [P] each */
    double strong, strong_em, theta_norm, clip_max;
} sim_out;

/*
 * One run (see hdp_rf_simulate): DP-GD theta in R^p (Algorithm 1 of Bombari-Mondelli), the
 * Euler-Maruyama OU path c_em and the exact OU step c_ex in mode coordinates, driven by
 * the same xi: xi_k = w_k^T xi on the modes, and the common null-space part
 * s sqrt(eta) P_perp Z, Z = sum of the xi (docs/theory.md §7).
 */
static void sim_one(const sim_ctx *c, sim_ws *w, sim_out *o)
{
    const hdp_rf_problem *pb = c->pb;
    const hdp_rf_dpgd *q = c->q;
    const long n = pb->spec.n, p = pb->spec.p, m = pb->spec.m, r = pb->r;
    const double *Phi = pb->Phi, *y = pb->y;
    const double step_coef = 2.0 * q->eta / (double)n, cs = c->cs;
    memset(w->theta, 0, sizeof(double) * (size_t)p);
    memset(w->Z, 0, sizeof(double) * (size_t)p);
    memset(w->c_em, 0, sizeof(double) * (size_t)r);
    memset(w->c_ex, 0, sizeof(double) * (size_t)r);
    for (long i = 0; i < n; i++)
        w->resid[i] = -y[i]; /* Phi theta_0 - y */
    o->strong = o->strong_em = o->theta_norm = 0;
    o->clip_max = clipped_fraction(w->resid, pb->phi_norm, n, q->C_clip);
    long row;
    /* row 0: theta = 0 */
    o->test[0] = o->em[0] = o->ex[0] = pb->zero_test;
    o->train[0] = pb->zero_train;
    o->clip[0] = o->clip_max;
    row = 1;
    for (long k = 1; k <= q->T; k++) {
        /* clipped gradient at theta_{k-1}: weights min(1, C_clip / (2 |r_i| ||phi_i||)) */
        for (long i = 0; i < n; i++) {
            double gn = 2.0 * fabs(w->resid[i]) * pb->phi_norm[i];
            w->v[i] = gn > q->C_clip ? w->resid[i] * (q->C_clip / gn) : w->resid[i];
        }
        blas_gemv(1, n, p, 1.0, Phi, p, w->v, 0.0, w->g);
        /* theta <- theta - eta (1/n) sum_i clip(g_i) + sqrt(eta) (2 C_clip / n) sigma xi */
        if (cs > 0) {
            hdp_normals_fill(&w->ns, w->xi, p);
            for (long j = 0; j < p; j++) {
                w->theta[j] += -step_coef * w->g[j] + cs * w->xi[j];
                w->Z[j] += w->xi[j];
            }
            /* the same increments on the modes: xi_k = w_k^T xi = u_k^T Phi xi / s_k */
            blas_gemv(0, n, p, 1.0, Phi, p, w->xi, 0.0, w->q);
            to_modes(pb, w->q, w->xim);
        } else {
            for (long j = 0; j < p; j++)
                w->theta[j] -= step_coef * w->g[j];
            memset(w->xim, 0, sizeof(double) * (size_t)r);
        }
        /* Euler-Maruyama and the exact step of the OU process, mode by mode (docs/theory.md §7) */
        for (long kk = 0; kk < r; kk++) {
            double lam = pb->lambda[kk], b = pb->beta[kk];
            w->c_em[kk] += -q->eta * lam * (w->c_em[kk] - b) + cs * w->xim[kk];
            w->c_ex[kk] = c->ex_decay[kk] * w->c_ex[kk] + c->ex_shift[kk] +
                          q->s * c->ex_sd[kk] * w->xim[kk];
        }
        /* residual at theta_k (the next step's, and the train loss) */
        blas_gemv(0, n, p, 1.0, Phi, p, w->theta, 0.0, w->resid);
        to_modes(pb, w->resid, w->aD); /* S^{-1} U^T Phi theta, before subtracting y */
        for (long i = 0; i < n; i++)
            w->resid[i] -= y[i];
        /* ||theta_DPGD - theta_OU||: the null-space parts coincide (both s sqrt(eta) P_perp Z) */
        double e1 = dist(w->aD, w->c_ex, r), e2 = dist(w->aD, w->c_em, r);
        double nrm = sqrt(dot(w->aD, w->aD, r));
        if (e1 > o->strong) o->strong = e1;
        if (e2 > o->strong_em) o->strong_em = e2;
        if (nrm > o->theta_norm) o->theta_norm = nrm;
        double cf = clipped_fraction(w->resid, pb->phi_norm, n, q->C_clip);
        if (cf > o->clip_max) o->clip_max = cf;
        if (row < c->P && c->steps[row] == k) {
            o->train[row] = dot(w->resid, w->resid, n) / (double)n;
            o->clip[row] = cf;
            blas_gemv(0, m, p, 1.0, pb->Phi_test, p, w->theta, 0.0, w->pred);
            o->test[row] = mse(w->pred, pb->y_test, m);
            /* null-space part of the OU paths on the test set: Phi_test P_perp Z */
            if (cs > 0) {
                blas_gemv(0, m, p, 1.0, pb->Phi_test, p, w->Z, 0.0, w->zt);
                blas_gemv(0, n, p, 1.0, Phi, p, w->Z, 0.0, w->q);
                to_modes(pb, w->q, w->wz);
                blas_gemv(0, m, r, -1.0, pb->G, r, w->wz, 1.0, w->zt);
            } else {
                memset(w->zt, 0, sizeof(double) * (size_t)m);
            }
            for (int which = 0; which < 2; which++) {
                const double *cc = which ? w->c_ex : w->c_em;
                for (long j = 0; j < m; j++)
                    w->pred[j] = cs * w->zt[j];
                blas_gemv(0, m, r, 1.0, pb->G, r, cc, 1.0, w->pred);
                (which ? o->ex : o->em)[row] = mse(w->pred, pb->y_test, m);
            }
            row++;
        }
    }
}

/* mean and standard error of column i over the runs (stderr 0 for one run) */
static void mean_se(const double *v, long runs, long P, long i, double *mean, double *se)
{
    hdp_mean_stderr(v + i, runs, P, mean, se);
}

/* the family's progress callback behind the Monte Carlo loop's */
typedef struct {
    hdp_rf_progress_fn fn;
    void *user;
} rf_progress;

static void rf_progress_call(const char *method, long done, long total, void *user)
{
    (void)method;
    const rf_progress *p = user;
    p->fn(p->user, done, total);
}

static void *rf_sim_ws_alloc(const void *c) { return sim_ws_alloc(((const sim_ctx *)c)->pb); }
static void rf_sim_ws_free(void *w) { sim_ws_free(w); }

/* run i on its stream (the seed's stream jumped i + 1 times), into its slot */
static hdp_status rf_sim_run(const void *c, long i, void *vw, hdp_xoshiro *stream, void *slot,
                             hdp_error *err)
{
    (void)i;
    (void)err;
    sim_ws *w = vw;
    hdp_normals_init(&w->ns, stream);
    sim_one(c, w, slot);
    return HDP_OK;
}

/* HDP_EINPUT unless the options and the DP-GD parameters can be simulated on pb */
static hdp_status sim_check(const hdp_rf_problem *pb, const hdp_rf_dpgd *q,
                            const hdp_rf_sim_options *opt, hdp_error *err)
{
    if (opt->runs < 1)
        return hdp_fail(err, HDP_EINPUT, "runs = %ld: need at least one run", opt->runs);
    if (opt->records < 1)
        return hdp_fail(err, HDP_EINPUT, "records = %ld: need at least one", opt->records);
    if (opt->threads < 0)
        return hdp_fail(err, HDP_EINPUT, "threads = %d must be >= 0", opt->threads);
    if (!pb->G)
        return hdp_fail(err, HDP_EINPUT, "hdp_rf_simulate needs a problem built with "
                        "HDP_RF_TEST_MODES");
    if (q->T < 1 || !(q->eta > 0))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: T = %ld, eta = %g", q->T, q->eta);
    return HDP_OK;
}

/* the recorded steps and the result's arrays of P records */
static hdp_status sim_result_alloc(const hdp_rf_dpgd *q, long records, hdp_rf_sim_result *res,
                                   hdp_error *err)
{
    long *steps = malloc(sizeof(long) * (size_t)(records + 2));
    if (!steps)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    long P = record_steps(q->T, records, steps);
    res->points = P;
    res->step = steps;
    double **arrays[] = {&res->tau,     &res->dpgd_test, &res->dpgd_test_se, &res->dpgd_train,
                         &res->dpgd_train_se, &res->ou_test, &res->ou_train,
                         &res->em_expected_test, &res->em_test, &res->em_test_se, &res->ex_test,
                         &res->ex_test_se, &res->clipped, &res->gf_test};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (!(*arrays[i] = calloc((size_t)P, sizeof(double))))
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld records", P);
    return HDP_OK;
}

/* exact OU step of length h = eta in mode k (docs/theory.md §7):
 *   a <- e^{-lambda h} a + (1 - e^{-lambda h}) beta
 *        + s sqrt((1 - e^{-2 lambda h})/(2 lambda)) xi */
static void ou_exact_step(const hdp_rf_problem *pb, double h, sim_ctx *c)
{
    for (long k = 0; k < pb->r; k++) {
        double lam = pb->lambda[k];
        c->ex_decay[k] = exp(-lam * h);
        c->ex_shift[k] = -expm1(-lam * h) * pb->beta[k];
        c->ex_sd[k] = lam > 0 ? sqrt(-expm1(-2.0 * lam * h) / (2.0 * lam)) : sqrt(h);
    }
}

/* The statistics over the runs, in run order: per record the means and standard errors of
 * the DP-GD losses, the OU paths' test losses and the clipped fraction, with the OU
 * process's expected losses beside them; the maxima of the strong errors, norms and clipped
 * fractions. HDP_ENUMERIC when a mean loss is not finite (DP-GD diverged). */
static hdp_status sim_reduce(const hdp_rf_problem *pb, const hdp_rf_dpgd *q, const sim_out *outs,
                             long runs, hdp_rf_sim_result *res, hdp_error *err)
{
    const long P = res->points;
    const long *steps = res->step;
    double *test = hdp_dalloc((size_t)(runs * P)), *train = hdp_dalloc((size_t)(runs * P));
    double *em = hdp_dalloc((size_t)(runs * P)), *ex = hdp_dalloc((size_t)(runs * P));
    double *clip = hdp_dalloc((size_t)(runs * P));
    if (!test || !train || !em || !ex || !clip) {
        free(test); free(train); free(em); free(ex); free(clip);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    for (long i = 0; i < runs; i++) {
        memcpy(test + i * P, outs[i].test, sizeof(double) * (size_t)P);
        memcpy(train + i * P, outs[i].train, sizeof(double) * (size_t)P);
        memcpy(em + i * P, outs[i].em, sizeof(double) * (size_t)P);
        memcpy(ex + i * P, outs[i].ex, sizeof(double) * (size_t)P);
        memcpy(clip + i * P, outs[i].clip, sizeof(double) * (size_t)P);
    }
    for (long i = 0; i < P; i++) {
        res->tau[i] = q->eta * (double)steps[i];
        mean_se(test, runs, P, i, &res->dpgd_test[i], &res->dpgd_test_se[i]);
        mean_se(train, runs, P, i, &res->dpgd_train[i], &res->dpgd_train_se[i]);
        mean_se(em, runs, P, i, &res->em_test[i], &res->em_test_se[i]);
        mean_se(ex, runs, P, i, &res->ex_test[i], &res->ex_test_se[i]);
        mean_se(clip, runs, P, i, &res->clipped[i], NULL);
        hdp_rf_expected_loss(pb, q->eta, q->s, res->tau[i], 0, &res->ou_test[i], &res->ou_train[i]);
        hdp_rf_expected_loss(pb, q->eta, q->s, res->tau[i], 1, &res->em_expected_test[i], NULL);
        hdp_rf_expected_loss(pb, q->eta, 0.0, res->tau[i], 0, &res->gf_test[i], NULL);
    }
    free(test); free(train); free(em); free(ex); free(clip);
    res->minnorm_test = pb->minnorm_test;
    double sum = 0;
    for (long i = 0; i < runs; i++) {
        sum += outs[i].strong;
        if (outs[i].strong > res->strong_error_max) res->strong_error_max = outs[i].strong;
        if (outs[i].strong_em > res->strong_error_em_max)
            res->strong_error_em_max = outs[i].strong_em;
        if (outs[i].theta_norm > res->theta_norm_max) res->theta_norm_max = outs[i].theta_norm;
        if (outs[i].clip_max > res->max_clipped_fraction)
            res->max_clipped_fraction = outs[i].clip_max;
    }
    res->strong_error_mean = sum / (double)runs;
    for (long i = 0; i < P; i++)
        if (!isfinite(res->dpgd_test[i]) || !isfinite(res->dpgd_train[i]))
            return hdp_fail(err, HDP_ENUMERIC, "DP-GD diverged (non-finite loss at step %ld): eta "
                            "lambda_max = %g (stable below 2)", steps[i], q->eta * pb->lambda[0]);
    return HDP_OK;
}

/*
 * DP-GD coupled to the OU process (see rf.h): the runs on the generic Monte Carlo loop, run i
 * on the seed's stream jumped i + 1 times (the unjumped one drew the data) with its own
 * output slot, then the statistics in run order.
 */
hdp_status hdp_rf_simulate(const hdp_rf_problem *pb, const hdp_rf_dpgd *q,
                           const hdp_rf_sim_options *opt, hdp_rf_sim_result *res,
                           hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, q);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, res);
    memset(res, 0, sizeof *res);
    double t0 = omp_get_wtime();
    hdp_status st = sim_check(pb, q, opt, err);
    if (st != HDP_OK)
        return st;
    const long runs = opt->runs, r = pb->r;
    long records = opt->records < q->T ? opt->records : q->T;
    res->runs = runs;
    res->threads = hdp_mc_loop_threads(runs, opt->threads);
    if ((st = sim_result_alloc(q, records, res, err)) != HDP_OK)
        return st;
    const long P = res->points;

    int old = blas_single();
    sim_ctx c = {pb, q, res->step, P, q->s * sqrt(q->eta), NULL, NULL, NULL};
    c.ex_decay = hdp_dalloc((size_t)r);
    c.ex_shift = hdp_dalloc((size_t)r);
    c.ex_sd = hdp_dalloc((size_t)r);
    double *slots = hdp_dalloc((size_t)(5 * runs * P));
    sim_out *outs = calloc((size_t)runs, sizeof *outs);
    if (!c.ex_decay || !c.ex_shift || !c.ex_sd || !slots || !outs) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for %ld runs", runs);
        goto done;
    }
    ou_exact_step(pb, q->eta, &c);
    for (long i = 0; i < runs; i++) {
        double *base = slots + 5 * i * P;
        outs[i] = (sim_out){base, base + P, base + 2 * P, base + 3 * P, base + 4 * P, 0, 0, 0, 0};
    }
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, (uint64_t)pb->spec.seed, 1);
    rf_progress prog = {opt->progress, opt->progress_user};
    hdp_mc_loop loop = {.name = "rf", .runs = runs, .threads = res->threads, .ctx = &c,
                        .ws_alloc = rf_sim_ws_alloc, .ws_free = rf_sim_ws_free,
                        .run = rf_sim_run, .first = &first, .slots = outs,
                        .slot_size = sizeof *outs,
                        .progress = opt->progress ? rf_progress_call : NULL,
                        .progress_user = &prog};
    if ((st = hdp_mc_loop_run(&loop, err)) == HDP_OK)
        st = sim_reduce(pb, q, outs, runs, res, err);
done:
    free(outs);
    free(slots);
    free(c.ex_decay);
    free(c.ex_shift);
    free(c.ex_sd);
    blas_restore(old);
    res->seconds = omp_get_wtime() - t0;
    return st;
}

/* ---- experiments: DP-GD in mode coordinates (docs/theory.md §7) ---- */

typedef struct {
    double *a, *sa, *g, *xim; /* [r] */
    double *resid, *v;        /* [n] */
    double *Z, *xi, *theta;   /* [p] */
    double *pred;             /* [m] */
    hdp_normals ns;           /* the configuration's block Gaussian stream */
} cfg_ws;

static void cfg_ws_free(cfg_ws *w)
{
    if (!w)
        return;
    double *arrays[] = {w->a, w->sa, w->g, w->xim, w->resid, w->v, w->Z, w->xi, w->theta, w->pred};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(w);
}

static cfg_ws *cfg_ws_alloc(const hdp_rf_problem *pb)
{
    const long n = pb->spec.n, p = pb->spec.p, m = pb->spec.m, r = pb->r;
    cfg_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->a = hdp_dalloc((size_t)r);
    w->sa = hdp_dalloc((size_t)r);
    w->g = hdp_dalloc((size_t)r);
    w->xim = hdp_dalloc((size_t)r);
    w->resid = hdp_dalloc((size_t)n);
    w->v = hdp_dalloc((size_t)n);
    w->Z = hdp_dalloc((size_t)p);
    w->xi = hdp_dalloc((size_t)p);
    w->theta = hdp_dalloc((size_t)p);
    long big = m > n ? m : n;
    if (pb->Phi_val && pb->spec.v > big)
        big = pb->spec.v;
    w->pred = hdp_dalloc((size_t)big);
    if (!w->a || !w->sa || !w->g || !w->xim || !w->resid || !w->v || !w->Z || !w->xi ||
        !w->theta || !w->pred) {
        cfg_ws_free(w);
        return NULL;
    }
    return w;
}

/* resid = U S a - y = Phi theta - y for theta = sum_k a_k w_k (plus any part orthogonal to
 * the rows of Phi): Phi w_k = s_k u_k (docs/theory.md §7) */
static void modes_residual(const hdp_rf_problem *pb, const double *a, double *sa, double *resid)
{
    const long n = pb->spec.n, r = pb->r;
    for (long k = 0; k < r; k++)
        sa[k] = pb->s[k] * a[k];
    blas_gemv(0, n, r, 1.0, pb->U, r, sa, 0.0, resid);
    for (long i = 0; i < n; i++)
        resid[i] -= pb->y[i];
}

/*
 * One configuration of DP-GD in mode coordinates a_k = w_k^T theta (docs/theory.md §7): the
 * clipped gradient (2/n) Phi^T (w .* r) has coefficients (2/n) s_k u_k^T (w .* r), and
 * Phi theta = U S a, so a step costs two n x r products. The noise splits into
 * xi_k ~ N(0, 1) on the modes and a Brownian motion orthogonal to the rows of Phi, whose
 * value after T steps, s sqrt(eta) P_perp Z with Z ~ N(0, T I_p), is drawn at the end.
 */
static void cfg_one(const hdp_rf_problem *pb, hdp_rf_config *cf, cfg_ws *w)
{
    const long n = pb->spec.n, p = pb->spec.p, m = pb->spec.m, r = pb->r;
    const double step_coef = 2.0 * cf->eta / (double)n, cs = cf->s * sqrt(cf->eta);
    memset(w->a, 0, sizeof(double) * (size_t)r);
    if (cf->p_space_noise)
        memset(w->Z, 0, sizeof(double) * (size_t)p);
    double clip_sum = 0, clip_max = 0;
    for (long k = 1; k <= cf->T; k++) {
        modes_residual(pb, w->a, w->sa, w->resid);
        long nc = 0;
        for (long i = 0; i < n; i++) {
            double gn = 2.0 * fabs(w->resid[i]) * pb->phi_norm[i];
            if (gn > cf->C_clip) {
                w->v[i] = w->resid[i] * (cf->C_clip / gn);
                nc++;
            } else {
                w->v[i] = w->resid[i];
            }
        }
        double cfrac = (double)nc / (double)n;
        clip_sum += cfrac;
        if (cfrac > clip_max) clip_max = cfrac;
        blas_gemv(1, n, r, 1.0, pb->U, r, w->v, 0.0, w->g);
        if (cs > 0) {
            if (cf->p_space_noise) {
                hdp_normals_fill(&w->ns, w->xi, p);
                for (long j = 0; j < p; j++)
                    w->Z[j] += w->xi[j];
                blas_gemv(0, n, p, 1.0, pb->Phi, p, w->xi, 0.0, w->v);
                to_modes(pb, w->v, w->xim);
            } else {
                hdp_normals_fill(&w->ns, w->xim, r);
            }
        }
        for (long kk = 0; kk < r; kk++)
            w->a[kk] += -step_coef * pb->s[kk] * w->g[kk] + (cs > 0 ? cs * w->xim[kk] : 0.0);
    }
    modes_residual(pb, w->a, w->sa, w->resid);
    cf->train_loss = dot(w->resid, w->resid, n) / (double)n;
    cf->clipped_mean = clip_sum / (double)cf->T;
    cf->clipped_max = clip_max;
    /* theta = W (a - cs W^T Z) + cs Z, W b = Phi^T U S^{-1} b; test predictions Phi_test theta */
    if (cs > 0) {
        if (!cf->p_space_noise) {
            hdp_normals_fill(&w->ns, w->Z, p);
            double sq = sqrt((double)cf->T);
            for (long j = 0; j < p; j++)
                w->Z[j] *= sq;
        }
        blas_gemv(0, n, p, 1.0, pb->Phi, p, w->Z, 0.0, w->v);
        to_modes(pb, w->v, w->g);
        for (long k = 0; k < r; k++)
            w->sa[k] = (w->a[k] - cs * w->g[k]) / pb->s[k];
    } else {
        for (long k = 0; k < r; k++)
            w->sa[k] = w->a[k] / pb->s[k];
    }
    blas_gemv(0, n, r, 1.0, pb->U, r, w->sa, 0.0, w->v);
    blas_gemv(1, n, p, 1.0, pb->Phi, p, w->v, 0.0, w->theta);
    if (cs > 0)
        for (long j = 0; j < p; j++)
            w->theta[j] += cs * w->Z[j];
    blas_gemv(0, m, p, 1.0, pb->Phi_test, p, w->theta, 0.0, w->pred);
    cf->test_loss = mse(w->pred, pb->y_test, m);
    cf->val_loss = NAN;
    if (pb->Phi_val) {
        blas_gemv(0, pb->spec.v, p, 1.0, pb->Phi_val, p, w->theta, 0.0, w->pred);
        cf->val_loss = mse(w->pred, pb->y_val, pb->spec.v);
    }
}

/* order[] = 0..ncfg-1 sorted by decreasing T (stable insertion sort) */
static void order_by_cost(const hdp_rf_config *cfg, long ncfg, long *order)
{
    for (long j = 0; j < ncfg; j++) {
        long i = j;
        while (i > 0 && cfg[order[i - 1]].T < cfg[j].T) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = j;
    }
}

/* what the configurations read, and where configuration j writes: cfg[j] */
typedef struct {
    const hdp_rf_problem *pb;
    hdp_rf_config *cfg;
} cfg_loop_ctx;

static void *rf_cfg_ws_alloc(const void *c) { return cfg_ws_alloc(((const cfg_loop_ctx *)c)->pb); }
static void rf_cfg_ws_free(void *w) { cfg_ws_free(w); }

/* configuration j on its own stream: the seed's stream jumped cfg[j].stream times */
static hdp_status rf_cfg_run(const void *vc, long j, void *vw, hdp_xoshiro *stream, void *slot,
                             hdp_error *err)
{
    (void)stream, (void)slot, (void)err;
    const cfg_loop_ctx *c = vc;
    cfg_ws *w = vw;
    hdp_rf_config *cf = &c->cfg[j];
    hdp_xoshiro xs;
    hdp_xoshiro_stream(&xs, (uint64_t)c->pb->spec.seed, (uint64_t)cf->stream);
    hdp_normals_init(&w->ns, &xs);
    cfg_one(c->pb, cf, w);
    return HDP_OK;
}

hdp_status hdp_rf_dpgd_final(const hdp_rf_problem *pb, hdp_rf_config *cfg, long ncfg,
                             int threads, hdp_rf_progress_fn progress, void *progress_user,
                             hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, cfg);
    if (ncfg < 1)
        return HDP_OK;
    for (long j = 0; j < ncfg; j++) {
        if (cfg[j].T < 1 || !(cfg[j].eta > 0) || !(cfg[j].C_clip > 0) || !(cfg[j].s >= 0) ||
            cfg[j].stream < 1)
            return hdp_fail(err, HDP_EINPUT, "DP-GD configuration %ld: T = %ld, eta = %g, C_clip = "
                            "%g, s = %g, stream %llu", j, cfg[j].T, cfg[j].eta, cfg[j].C_clip,
                            cfg[j].s, cfg[j].stream);
    }
    hdp_status st = HDP_OK;
    long *order = malloc(sizeof(long) * (size_t)ncfg);
    if (!order)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    /* the longest first, for the load balance (results do not depend on the order) */
    order_by_cost(cfg, ncfg, order);
    cfg_loop_ctx c = {pb, cfg};
    rf_progress prog = {progress, progress_user};
    hdp_mc_loop loop = {.name = "rf", .runs = ncfg, .threads = hdp_mc_loop_threads(ncfg, threads),
                        .ctx = &c, .ws_alloc = rf_cfg_ws_alloc, .ws_free = rf_cfg_ws_free,
                        .run = rf_cfg_run, .order = order,
                        .progress = progress ? rf_progress_call : NULL, .progress_user = &prog};
    int old = blas_single();
    st = hdp_mc_loop_run(&loop, err);
    blas_restore(old);
    free(order);
    if (st != HDP_OK)
        return st;
    for (long j = 0; j < ncfg; j++)
        if (!isfinite(cfg[j].test_loss) || !isfinite(cfg[j].train_loss)) {
            st = hdp_fail(err, HDP_ENUMERIC, "DP-GD diverged in configuration %ld (eta = %g, T = "
                          "%ld): eta lambda_max = %g (stable below 2)", j, cfg[j].eta, cfg[j].T,
                          cfg[j].eta * pb->lambda[0]);
            break;
        }
    return st;
}
