/*
 * kl_linear.c — noisy GD on the linearised network and its exact OU KL (hdpsgd/kl.h).
 *  - The problem of one initialisation: the Jacobian Gram K at W_0 (kl_net.c), its
 *    eigendecomposition (LAPACKE_dsyevd) and the coordinates z of the row space of J (exact,
 *    kl.h).
 *  - Squared loss: exact moments of the OU recursion (diagonal in z), the exact trajectory KL
 *    from them, and the exact KL of the law of the k-th iterate (Gaussian) on D and D\j from
 *    one eigendecomposition of the Hessian of D\j; the KL of two Gaussians.
 *  - The run of one initialisation (hdp_kl_linear_run_one, for the driver in kl.c): per step
 *    three dgemm over all its noise paths at once: u = M Z, grad = M^T Q / n,
 *    K q = M (M^T q); the gradient difference of every remove-one neighbour from q^T K q and
 *    the o x o diagonal blocks of K.
 * Linking: products go through OpenBLAS's CBLAS (families/blas_internal.h; see rf_internal.h).
 */
#include "sim/rng_internal.h"
#include "families/kl_internal.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "families/blas_internal.h"

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
    double *mu, *c, *m, *Km, *lc;
    void *block = HDP_MC_VECS({&mu, (size_t)r}, {&c, (size_t)r}, {&m, (size_t)N},
                              {&Km, (size_t)N}, {&lc, (size_t)r});
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
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
    free(block);
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
    const size_t R = (size_t)r;
    double *H, *b, *h, *Qb, *wbar, *v, *mu, *c, *Qmu;
    void *block = HDP_MC_VECS({&H, R * R}, {&b, R}, {&h, R}, {&Qb, R}, {&wbar, R}, {&v, R},
                              {&mu, R}, {&c, R}, {&Qmu, R});
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
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
    free(block);
    return st;
}

hdp_status hdp_kl_problem_joint(const hdp_kl_problem *pb, double eta, double sigma, long K,
                                long j, int which, double *mean, double *cov, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, mean);
    HDP_REQUIRE(err, cov);
    const long n = pb->n, r = pb->r, dim = K * r;
    const size_t R = (size_t)r;
    double *A, *b, *C, *T, *z, *zn;
    void *block = HDP_MC_VECS({&A, R * R}, {&b, R}, {&C, R * R}, {&T, R * R}, {&z, R}, {&zn, R});
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
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
                    free(block);
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
    free(block);
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
    double *L1, *L2, *dm;
    const size_t D = (size_t)dim;
    void *block = HDP_MC_VECS({&L1, D * D}, {&L2, D * D}, {&dm, D});
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a %ld-dimensional Gaussian", dim);
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
    free(block);
    return st;
}

/* ---- the linearised run of one initialisation ---- */

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
    void *block;             /* all of them (free) */
} paths_ws;

static hdp_status paths_alloc(const hdp_kl_spec *s, const hdp_kl_problem *pb, paths_ws *w,
                              hdp_error *err)
{
    const long n = s->n, o = s->arch.o, N = n * o, P = s->runs, r = pb->r;
    const size_t rP = (size_t)r * (size_t)P, NP = (size_t)N * (size_t)P;
    w->block = HDP_MC_VECS({&w->Z, rP}, {&w->U, NP}, {&w->Gz, rP}, {&w->KQ, NP},
                           {&w->S, (size_t)P * (size_t)n}, {&w->Kd, (size_t)(n * o * o)});
    if (!w->block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld noise paths", P);
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
    free(w.block);
    return st;
}

/* Initialisation idx on its stream g (the seed's stream jumped idx + 1 times): build, exact
 * moments (squared), then all noise paths at once, into its slot io. */
hdp_status hdp_kl_linear_run_one(const void *vc, long idx, void *ws, hdp_xoshiro *g,
                                 void *slot, hdp_error *err)
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
