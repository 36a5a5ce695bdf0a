/*
 * nc_problem.c — NoisyGD / NoisySGD on neural-collapse features (the NC paper; docs/theory.md §6
 * and §8): the features and the problem. The ETF, the noise level and the clipping of a
 * gradient; the problem a run shares: the class means, the perturbations (the offset of the
 * training or the test features) and the remedies (centering, PCA on public samples). See
 * hdpsgd/nc.h for the model and its conventions.
 */
#include "hdpsgd/nc.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"

#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"

#include "families/blas_internal.h"
#include "families/nc_internal.h"

/* ---- features, noise level, clipping ---- */

/* The ETF (the NC paper, Definition 1) with P = [Q; 0], Q = I - 2 w w^T/(w^T w), w = 1/sqrt(K) -
 * e_K (a Householder reflection with Q 1/sqrt(K) = e_K). For u = e_k - 1/K (sum 0) w^T u = -u_K,
 * so Q u = u + 2 u_K w/(w^T w) and (Q u)_K = 0: M_k lies in the first K-1 coordinates. */
void hdp_nc_etf_frame(long K, long K0, long p, double *M)
{
    if (!M)
        return;
    const double rk = 1.0 / sqrt((double)K0), scale = sqrt((double)K0 / (double)(K0 - 1));
    const double ww = 2.0 - 2.0 * rk; /* w^T w */
    memset(M, 0, sizeof(double) * (size_t)(K * p));
    for (long k = 0; k < K; k++) {
        double uK = (k == K0 - 1 ? 1.0 : 0.0) - 1.0 / (double)K0;
        for (long i = 0; i < K0 - 1; i++) {
            double u = (i == k ? 1.0 : 0.0) - 1.0 / (double)K0;
            M[k * p + i] = scale * (u + 2.0 * uK * rk / ww);
        }
        /* coordinate K0-1 is exactly zero (see above) */
    }
}

void hdp_nc_etf(long K, long p, double *M) { hdp_nc_etf_frame(K, K, p, M); }

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

/* ---- the problem ---- */

/* len signs +-beta from the stream, 64 per output (bit j of an output gives entry j) */
void hdp_nc_fill_signs(hdp_xoshiro *g, double beta, double *out, long len)
{
    const double tbl[2] = {-beta, beta};
    for (long i = 0; i < len; i += 64) {
        uint64_t bits = hdp_xoshiro_next_inline(g);
        for (long j = 0; j < 64 && i + j < len; j++)
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

/* b (length L) made orthogonal to the orthonormal rows B[0 .. k) (modified Gram-Schmidt,
 * passes times), then of norm 1 */
static void orthonormalise(double *b, const double *B, long k, long L, int passes)
{
    for (int pass = 0; pass < passes; pass++)
        for (long i = 0; i < k; i++) {
            double c = 0;
            for (long l = 0; l < L; l++) c += B[i * L + l] * b[l];
            for (long l = 0; l < L; l++) b[l] -= c * B[i * L + l];
        }
    double nn = 0;
    for (long l = 0; l < L; l++) nn += b[l] * b[l];
    nn = sqrt(nn);
    for (long l = 0; l < L; l++) b[l] /= nn;
}

/* K of K0 frame vertices (K0 > K): the mean squared cosine between span(P) and the span of
 * the centred M_k, ||B P||_F^2/(K-1) with B an orthonormal basis (Gram-Schmidt of the first
 * K-1 centred M_k) and D the K-1 orthonormal directions of P (rows of length p). */
static double frame_alignment(const hdp_nc_problem *pb, const double *D)
{
    const long K = pb->spec.K, p = pb->spec.p, q = K - 1, L = pb->K0 - 1; /* M in R^L */
    double *B = hdp_dalloc((size_t)(q * L));
    if (!B)
        return NAN;
    for (long k = 0; k < q; k++) {
        double *b = B + k * L;
        for (long l = 0; l < L; l++) {
            double mean = 0;
            for (long c = 0; c < K; c++) mean += pb->M[c * p + l];
            b[l] = pb->M[k * p + l] - mean / (double)K;
        }
        orthonormalise(b, B, k, L, 2); /* twice against rounding */
    }
    double a = 0;
    for (long k = 0; k < q; k++)
        for (long j = 0; j < q; j++) {
            double c = 0;
            for (long l = 0; l < L; l++) c += B[k * L + l] * D[j * p + l];
            a += c * c;
        }
    free(B);
    return a / (double)q;
}

/* The top K-1 principal directions of the public samples (the NC paper, section 4.3, centred;
 * nc.h): X (m x p) the centred samples, the eigenpairs (lambda, u) of the m x m Gram matrix
 * X X^T give the directions X^T u / sqrt(lambda) of X^T X (the same non-zero spectrum). */
static hdp_status build_pca(hdp_nc_problem *pb, hdp_xoshiro *g, hdp_error *err)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, p = s->p, m = s->public_samples, q = K - 1;
    double *X, *mean, *Gm, *w, *U, *D;
    void *block = HDP_MC_VECS({&X, (size_t)(m * p)}, {&mean, (size_t)p}, {&Gm, (size_t)(m * m)},
                              {&w, (size_t)m}, {&U, (size_t)(m * q)}, {&D, (size_t)(q * p)});
    lapack_int *isuppz = malloc(sizeof(lapack_int) * (size_t)(2 * q));
    hdp_status st = HDP_OK;
    if (!block || !isuppz) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory (public samples %ld x %ld)", m, p);
        goto done;
    }
    for (long i = 0; i < m; i++) {
        double *x = X + i * p;
        long k = i % K;
        if (s->perturbation == HDP_NC_PERT_PER_SAMPLE)
            hdp_nc_fill_signs(g, s->beta, x, p);
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
        orthonormalise(d, D, j, p, 1); /* again, against rounding */
    }
    for (long l = 0; l < p; l++)
        for (long j = 0; j < q; j++)
            pb->P[l * q + j] = D[j * p + l];
    if (pb->K0 == K) {
        /* span(M) = span(e_1 .. e_{K-1}) (hdp_nc_etf) */
        double a = 0;
        for (long l = 0; l < K - 1; l++)
            for (long j = 0; j < q; j++)
                a += pb->P[l * q + j] * pb->P[l * q + j];
        pb->pca_alignment = a / (double)q;
    } else {
        pb->pca_alignment = frame_alignment(pb, D);
    }
done:
    free(block);
    free(isuppz);
    return st;
}

/* The test class centres into pb->ztest: M_c (+ v), minus the mean of the centres (center),
 * projected; x and c are work vectors of length p. */
static void test_centres(hdp_nc_problem *pb, double *x, double *c)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, p = s->p, q = pb->q;
    memset(c, 0, sizeof(double) * (size_t)p);
    if (s->remedy == HDP_NC_REMEDY_CENTER && pb->K0 > K) { /* sum_c M_c != 0 */
        for (long k = 0; k < K; k++)
            for (long l = 0; l < p; l++)
                c[l] += pb->M[k * p + l] / (double)K;
        if (test_offset(s->perturbation))
            for (long l = 0; l < p; l++)
                c[l] += pb->v[l];
    } else if (s->remedy == HDP_NC_REMEDY_CENTER && test_offset(s->perturbation))
        memcpy(c, pb->v, sizeof(double) * (size_t)p); /* (1/K) sum_c (M_c + v) = v */
    for (long k = 0; k < K; k++) {
        for (long l = 0; l < p; l++)
            x[l] = pb->M[k * p + l] + (test_offset(s->perturbation) ? pb->v[l] : 0.0) - c[l];
        transform(pb, x, pb->ztest + k * q);
    }
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
    hdp_status st = hdp_nc_spec_check(s, err);
    if (st != HDP_OK)
        return st;
    double t0 = omp_get_wtime();
    pb->spec = *s;
    const long K = s->K, p = s->p, n = s->n;
    pb->Kout = s->loss == HDP_NC_LOGISTIC ? 1 : K;
    pb->K0 = s->frame_classes > 0 ? s->frame_classes : K;
    pb->q = s->remedy == HDP_NC_REMEDY_PCA || s->remedy == HDP_NC_REMEDY_PROJECTION ? K - 1 : p;
    const long q = pb->q;
    pb->grouped = s->perturbation != HDP_NC_PERT_PER_SAMPLE;
    pb->sigma = hdp_nc_sigma(s->G, s->rho);
    pb->nk = malloc(sizeof(long) * (size_t)K);
    pb->sample_class = malloc(sizeof(long) * (size_t)n);
    pb->M = hdp_dalloc((size_t)(K * p));
    pb->ztest = hdp_dalloc((size_t)(K * q));
    double *x, *c;
    void *xc = HDP_MC_VECS({&x, (size_t)p}, {&c, (size_t)p});
    if (!pb->nk || !pb->sample_class || !pb->M || !pb->ztest || !xc) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory (K = %ld, p = %ld)", K, p);
        goto fail;
    }
    hdp_nc_class_sizes(K, n, s->imbalance, pb->nk);
    for (long k = 0, i = 0; k < K; k++)
        for (long j = 0; j < pb->nk[k]; j++)
            pb->sample_class[i++] = k;
    hdp_nc_etf_frame(K, pb->K0, p, pb->M);

    /* the fixed offset, then the public samples: the unjumped stream */
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, (uint64_t)s->seed);
    if (train_offset(s->perturbation) || test_offset(s->perturbation)) {
        pb->v = hdp_dalloc((size_t)p);
        if (!pb->v) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory");
            goto fail;
        }
        hdp_nc_fill_signs(&g, s->beta, pb->v, p);
        pb->offset_norm = s->beta * sqrt((double)p);
    }
    if (s->remedy == HDP_NC_REMEDY_PCA || s->remedy == HDP_NC_REMEDY_PROJECTION) {
        pb->P = hdp_dalloc((size_t)(p * q));
        pb->PM = hdp_dalloc((size_t)(K * q));
        if (!pb->P || !pb->PM) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory (projection %ld x %ld)", p, q);
            goto fail;
        }
        if (s->remedy == HDP_NC_REMEDY_PROJECTION) {
            /* [e_1 .. e_{K-1}] + Delta, Delta = beta_0 S0 (nc.h; the NC paper, Theorem 5) */
            hdp_nc_fill_signs(&g, s->projection_beta, pb->P, p * q);
            for (long j = 0; j < q; j++)
                pb->P[j * q + j] += 1.0;
        } else if ((st = build_pca(pb, &g, err)) != HDP_OK)
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
    test_centres(pb, x, c);
    free(xc);
    pb->build_seconds = omp_get_wtime() - t0;
    return HDP_OK;
fail:
    free(xc);
    hdp_nc_problem_free(pb);
    return st;
}
