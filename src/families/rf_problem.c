/*
 * rf_problem.c — the random-features problem (docs/theory.md §7): the data set, the features
 * Phi = act(X V^T), the mode decomposition, the min-norm interpolator and the test modes
 * (hdp_rf_problem_build, hdp_rf_spec_from_model, hdp_rf_spec_from_data, hdp_rf_problem_free).
 *
 * Method.
 *  - Data (docs/theory.md §7): from the block Gaussian stream (rng.h) of the seed's xoshiro256++
 *    stream, in the order u, X, X_test, label noise, V; Phi = act(X V^T) by blocked dgemm.
 *    On a data set (data.source = file, §7.5; hdp_rf_spec_from_data): X and X_test are its
 *    prepared rows (the held-out file's, or rows of the file held out by the seed), the labels
 *    its own or rf.target's on the rows; u, the label noise and V from the same stream.
 *  - Modes (docs/theory.md §7): the eigendecomposition (LAPACKE_dsyevd) of the smaller Gram
 *    matrix, K = Phi Phi^T (n x n) when p >= n, Phi^T Phi (p x p) otherwise; eigenvalues
 *    at or below N * DBL_EPSILON * s_max^2 (N the Gram size) count as zero. Then
 *    s_k^2, u_k, w_k = Phi^T u_k / s_k, lambda_k = 2 s_k^2 / n, beta_k = u_k^T y / s_k.
 *  - The min-norm interpolator Phi^+ y = sum_k beta_k w_k = Phi^T U S^{-1} beta (the
 *    least-squares solution when p < n), the limit t -> inf of gradient flow.
 * The large products are cut into fixed blocks of rows (BLOCK) shared by OpenMP threads, the
 * BLAS single-threaded (families/rf_internal.h: determinism).
 */
#include "hdpsgd/rf.h"
#include "hdpsgd/dataset.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/schema.h"
#include "sim/mc.h"
#include "families/rf_internal.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rng.h"

/* rows per block of the large products (independent of the thread count) */
#define BLOCK 128

/* ---- the data set (docs/theory.md §7) ---- */

void hdp_rf_spec_from_model(const hdp_model *m, hdp_rf_spec *spec)
{
    if (!m || !spec)
        return;
    memset(spec, 0, sizeof *spec);
    spec->k = *hdp_rf_keys_of(m);
    spec->seed = m->seed;
    const double v = spec->k.val_size > 0 ? (double)spec->k.val_size
                                          : fmax(1.0, nearbyint((double)spec->k.test_size / 5.0));
    spec->v = (long)v;
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
    const long d = spec->k.d, n = spec->k.n, p = spec->k.p, m = spec->k.test_size;
    if (d < 1 || n < 1 || p < 1 || m < 1)
        return hdp_fail(err, HDP_EINPUT, "random features: d = %ld, n = %ld, p = %ld, test size "
                        "%ld must all be >= 1", d, n, p, m);
    if ((double)(n + m) * (double)p > 4.0e9 || (double)n * n > 4.0e8 || p > 2147483647L / 2)
        return hdp_fail(err, HDP_EINPUT, "random features: (n + test size) x p = %.3g doubles "
                        "(%.3g GB) is too large", (double)(n + m) * (double)p,
                        8e-9 * (double)(n + m) * (double)p);
    const hdp_data *D = spec->data;
    if (D && (D->train.d != d || n + spec->holdout != D->train.n || spec->holdout < 0 ||
              (spec->holdout ? m != spec->holdout : (!D->has_test || m != D->test_n)) ||
              (spec->file_labels && (!D->train.has_labels || (!spec->holdout && !D->test_y)))))
        return hdp_fail(err, HDP_EINPUT, "random features: d = %ld, n = %ld, test size %ld and "
                        "holdout %ld do not match the data set's %ld x %ld rows (%ld held out): "
                        "use hdp_rf_spec_from_data", d, n, m, spec->holdout, D->train.n,
                        D->train.d, D->has_test ? D->test_n : 0L);
    return HDP_OK;
}

/* the problem's arrays, with room for N = min(n, p) modes */
static hdp_status rf_problem_alloc(hdp_rf_problem *pb, long N, hdp_error *err)
{
    const long n = pb->spec.k.n, p = pb->spec.k.p, m = pb->spec.k.test_size;
    double **a[] = {&pb->Phi, &pb->Phi_test, &pb->y, &pb->y_test, &pb->phi_norm,
                    &pb->test_norm2, &pb->s2, &pb->s, &pb->lambda, &pb->beta};
    const long len[] = {n * p, m * p, n, m, n, m, N, N, N, N};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        if (!(*a[i] = hdp_dalloc((size_t)len[i])))
            return hdp_fail(err, HDP_ENOMEM, "out of memory for random features with n = %ld, "
                            "p = %ld, test size %ld (%.3g GB)", n, p, m,
                            8e-9 * (double)(n + m) * (double)p);
    return HDP_OK;
}

/* ---- a data set's rows as the inputs (data.source = file, docs/theory.md §7.5) ---- */

hdp_status hdp_rf_spec_from_data(const hdp_model *m, hdp_rf_spec *spec, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, spec);
    const hdp_data *D = hdp_model_data(m);
    if (!D)
        return HDP_OK;
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    const char *file = m->features[0] ? m->features : "the array X";
    const long N = D->train.n, d = D->train.d;
    if (hdp_model_key_given(m, "rf", "d") && rk->d != d)
        return hdp_model_fail_key(m, "rf", "d", err,
                                  "d = %ld with data.source = file: the inputs are the rows of %s, "
                                  "which have %ld columns; leave rf.d out or set it to %ld",
                                  rk->d, file, d, d);
    const int labels = D->train.has_labels && !D->planted;
    static const char *const label_keys[] = {"target", "label_noise"};
    for (int i = 0; labels && i < 2; i++)
        if (hdp_model_key_given(m, "rf", label_keys[i]))
            return hdp_model_fail_key(m, "rf", label_keys[i], err,
                                      "the labels are the data set's (data.labels with data.target "
                                      "= least-squares): leave rf.%s out (it applies to rows "
                                      "without labels, or with data.target = planted)",
                                      label_keys[i]);
    long holdout = 0, mt;
    if (D->has_test) {
        mt = D->test_n;
        if (labels && !D->test_y)
            return hdp_model_fail_key(m, "data", "test_labels", err, "the held-out rows need "
                                      "their labels for the random features' test loss");
        if (hdp_model_key_given(m, "rf", "test_size") && rk->test_size != mt)
            return hdp_model_fail_key(m, "rf", "test_size", err,
                                      "test_size = %ld with a held-out set: the test set is the "
                                      "%ld rows of data.test_features; leave rf.test_size out or "
                                      "set it to %ld", rk->test_size, mt, mt);
    } else {
        holdout = hdp_model_key_given(m, "rf", "test_size")
                      ? rk->test_size : (long)fmax(1.0, nearbyint((double)N / 5.0));
        if (holdout > N - 1)
            return hdp_model_fail_key(m, "rf", "test_size", err,
                                      "test_size = %ld: without data.test_features the test set "
                                      "is held out from the %ld rows of %s and the rest trains: "
                                      "need test_size <= %ld", holdout, N, file, N - 1);
        mt = holdout;
    }
    if (hdp_model_key_given(m, "rf", "n") && rk->n != N - holdout)
        return hdp_model_fail_key(m, "rf", "n", err,
                                  "n = %ld with data.source = file: the training set is the %ld "
                                  "rows of %s%s; leave rf.n out or set it to %ld", rk->n, N, file,
                                  holdout ? " less the test set held out (rf.test_size)" : "",
                                  N - holdout);
    /* rf_finalize's bounds, checked there on rf.n and rf.test_size, here on the file's sizes
     * (the Gram matrix of the smaller one, min(n, p)^2 <= n p, is then within them too) */
    const double rp = (double)rk->p, rows[2] = {(double)(N - holdout), (double)mt};
    for (int i = 0; i < 2; i++)
        if (rows[i] * rp > HDP_MODEL_MAX_CELLS)
            return hdp_model_fail_key(m, "rf", "p", err,
                                      "p = %ld with the %.0f %s rows of %s needs %.3g numbers of "
                                      "features, more than the %.0e accepted: make p smaller or "
                                      "use fewer rows", rk->p, rows[i], i ? "test" : "training",
                                      i && !holdout ? "data.test_features" : file, rows[i] * rp,
                                      HDP_MODEL_MAX_CELLS);
    spec->data = D;
    spec->k.d = d;
    spec->k.n = N - holdout;
    spec->k.test_size = mt;
    spec->holdout = holdout;
    spec->file_labels = labels;
    return HDP_OK;
}

/* Row i of a data set's matrix as doubles. */
static void matrix_row(const hdp_matrix *M, long i, double *out)
{
    const long d = M->d;
    if (M->f32)
        for (long j = 0; j < d; j++)
            out[j] = (double)M->f32[i * d + j];
    else
        memcpy(out, M->f64 + i * d, sizeof(double) * (size_t)d);
}

/* The rows of the data set into X [n x d], Xt [m x d] and, with its labels, y, y_test: the
 * held-out file's rows, or spec->holdout rows of the file drawn by the seed's stream
 * long-jumped 20 times (a partial Fisher-Yates shuffle; both sets then in file order). */
static hdp_status rf_file_rows(const hdp_rf_spec *spec, double *X, double *Xt, hdp_rf_problem *pb,
                               hdp_error *err)
{
    const hdp_data *D = spec->data;
    const long N = D->train.n, d = spec->k.d;
    unsigned char *test = calloc((size_t)N, 1);
    long *idx = spec->holdout ? malloc(sizeof(long) * (size_t)N) : NULL;
    if (!test || (spec->holdout && !idx)) {
        free(test);
        free(idx);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the %ld rows' split", N);
    }
    if (spec->holdout) {
        hdp_xoshiro g;
        hdp_xoshiro_seed(&g, (uint64_t)spec->seed);
        for (int k = 0; k < 20; k++)
            hdp_xoshiro_long_jump(&g);
        for (long i = 0; i < N; i++)
            idx[i] = i;
        for (long k = 0; k < spec->holdout; k++) {
            long j = k + (long)(hdp_xoshiro_double(&g) * (double)(N - k));
            j = j < N ? j : N - 1;
            long t = idx[k];
            idx[k] = idx[j];
            idx[j] = t;
            test[idx[k]] = 1;
        }
    }
    long a = 0, b = 0;
    for (long i = 0; i < N; i++) {
        if (test[i]) {
            matrix_row(&D->train.rows, i, Xt + b * d);
            if (spec->file_labels)
                pb->y_test[b] = D->train.y[i];
            b++;
        } else {
            matrix_row(&D->train.rows, i, X + a * d);
            if (spec->file_labels)
                pb->y[a] = D->train.y[i];
            a++;
        }
    }
    for (long j = 0; !spec->holdout && j < spec->k.test_size; j++) {
        matrix_row(&D->test_rows, j, Xt + j * d);
        if (spec->file_labels)
            pb->y_test[j] = D->test_y[j];
    }
    free(test);
    free(idx);
    return HDP_OK;
}

/* The data, in a fixed order from the base stream (docs/theory.md §7): u uniform on the unit
 * sphere, X [n x d], X_test [m x d] (or the data set's rows, rf_file_rows), the labels (u^T x
 * or its sign; or the data set's) into pb->y, pb->y_test, their Gaussian noise, then V [p x d],
 * V_ij ~ N(0, 1/d) row by row (the first rows are the same for every p). */
static hdp_status rf_draw_data(const hdp_rf_spec *spec, hdp_normals *ns, double *u, double *X,
                               double *Xt, double *V, hdp_rf_problem *pb, hdp_error *err)
{
    const long d = spec->k.d, n = spec->k.n, p = spec->k.p, m = spec->k.test_size;
    double un = 0;
    hdp_normals_fill(ns, u, d);
    for (long i = 0; i < d; i++)
        un += u[i] * u[i];
    for (long i = 0; i < d; i++)
        u[i] /= sqrt(un); /* uniform on the unit sphere */
    if (spec->data) {
        hdp_status st = rf_file_rows(spec, X, Xt, pb, err);
        if (st != HDP_OK)
            return st;
    } else {
        hdp_normals_fill(ns, X, n * d);
        hdp_normals_fill(ns, Xt, m * d);
    }
    for (long i = 0; !spec->file_labels && i < n + m; i++) {
        const double *x = i < n ? X + i * d : Xt + (i - n) * d;
        double z = dot(u, x, d), yv = spec->k.target == HDP_RF_SIGN ? (z >= 0 ? 1.0 : -1.0) : z;
        if (i < n) pb->y[i] = yv;
        else pb->y_test[i - n] = yv;
    }
    if (spec->k.label_noise > 0 && !spec->file_labels) {
        /* the noise of y then of y_test, through V's array (drawn next) */
        double sd = sqrt(spec->k.label_noise);
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
    return HDP_OK;
}

/* The validation set (HDP_RF_VALIDATION, rf.h): X_val [v x d] then its label noise from the
 * block stream of the seed's stream long-jumped 10 times; labels by the same u, features by
 * the same V. */
static hdp_status rf_validation(hdp_rf_problem *pb, const double *u, const double *V, int nth,
                                hdp_error *err)
{
    const hdp_rf_spec *spec = &pb->spec;
    const long d = spec->k.d, p = spec->k.p, v = spec->v;
    double *Xv, *noise;
    void *block = HDP_MC_VECS({&Xv, (size_t)(v * d)}, {&noise, (size_t)v});
    pb->Phi_val = hdp_dalloc((size_t)(v * p));
    pb->y_val = hdp_dalloc((size_t)v);
    if (!block || !pb->Phi_val || !pb->y_val) {
        free(block);
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
        pb->y_val[i] = spec->k.target == HDP_RF_SIGN ? (z >= 0 ? 1.0 : -1.0) : z;
    }
    if (spec->k.label_noise > 0) {
        double sd = sqrt(spec->k.label_noise);
        hdp_normals_fill(&ns, noise, v);
        for (long i = 0; i < v; i++)
            pb->y_val[i] += sd * noise[i];
    }
    features(Xv, v, V, p, d, spec->k.activation, pb->Phi_val, nth);
    free(block);
    return HDP_OK;
}

/* Draw the data and compute Phi = act(X V^T), Phi_test, the feature norms and the losses of
 * theta = 0; with validation, the validation set (rf_validation). */
static hdp_status rf_data_and_features(hdp_rf_problem *pb, int validation, int nth,
                                       hdp_error *err)
{
    const hdp_rf_spec *spec = &pb->spec;
    const long d = spec->k.d, n = spec->k.n, p = spec->k.p, m = spec->k.test_size;
    hdp_status st = HDP_OK;
    double *u, *X, *Xt, *V; /* V holds the label noise first: at least n + m entries */
    void *block = HDP_MC_VECS({&u, (size_t)d}, {&X, (size_t)(n * d)}, {&Xt, (size_t)(m * d)},
                              {&V, (size_t)(p * d > n + m ? p * d : n + m)});
    if (!block) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for random features with n = %ld, p = %ld, "
                      "test size %ld (%.3g GB)", n, p, m, 8e-9 * (double)(n + m) * (double)p);
        goto done;
    }
    hdp_xoshiro g;
    hdp_normals ns;
    hdp_xoshiro_seed(&g, (uint64_t)spec->seed);
    hdp_normals_init(&ns, &g);
    if ((st = rf_draw_data(spec, &ns, u, X, Xt, V, pb, err)) != HDP_OK)
        goto done;
    features(X, n, V, p, d, spec->k.activation, pb->Phi, nth);
    features(Xt, m, V, p, d, spec->k.activation, pb->Phi_test, nth);
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
    free(block);
    return st;
}

/* The modes (docs/theory.md §7): the eigendecomposition of the smaller Gram matrix (N x N), its
 * eigenvectors into vec [N x N]; r, s_k^2, s_k, lambda_k, U and beta_k = u_k^T y / s_k. */
static hdp_status rf_modes(hdp_rf_problem *pb, long N, double *vec, int nth, hdp_error *err)
{
    const long n = pb->spec.k.n, p = pb->spec.k.p;
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
    const long n = pb->spec.k.n, p = pb->spec.k.p, m = pb->spec.k.test_size, r = pb->r;
    double *c, *alpha, *theta, *pred;
    void *block = HDP_MC_VECS({&c, (size_t)r}, {&alpha, (size_t)n}, {&theta, (size_t)p},
                              {&pred, (size_t)(n > m ? n : m)});
    hdp_status st = HDP_OK;
    if (!block) {
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
    free(block);
    return st;
}

/* HDP_RF_TEST_MODES: G = Phi_test W, W = Phi^T U S^{-1} (p >= n) or the eigenvectors vec
 * (p < n), and the null-space norms ||P_perp phi_test_j||^2. */
static hdp_status rf_test_modes(hdp_rf_problem *pb, const double *vec, int nth, hdp_error *err)
{
    const long n = pb->spec.k.n, p = pb->spec.k.p, m = pb->spec.k.test_size, r = pb->r;
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
    pb->spec = *spec;
    hdp_status st = rf_check_sizes(spec, err);
    if (st != HDP_OK)
        return st;
    if (spec->data && (flags & HDP_RF_VALIDATION))
        return hdp_fail(err, HDP_EINPUT, "random features on a data set's rows: no validation set "
                        "(rf-experiment takes synthetic inputs only)");
    if ((flags & HDP_RF_VALIDATION) && (spec->v < 1 || (double)spec->v * (double)spec->k.p > 4.0e9))
        return hdp_fail(err, HDP_EINPUT, "random features: validation size %ld with p = %ld: "
                        "expected >= 1 and v x p <= 4e9", spec->v, spec->k.p);
    double t0 = omp_get_wtime();
    int old = blas_single();
    int nth = threads_to_use(threads);
    const long N = spec->k.p >= spec->k.n ? spec->k.n : spec->k.p; /* size of the Gram matrix */
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
