/*
 * rf_internal.h — what the files of the random-features family (rf_problem.c, rf_privacy.c,
 * rf_closed.c, rf_sim.c, rf_configs.c) share; internal, included by those files only.
 * See hdpsgd/rf.h for the model and the conventions, docs/theory.md sections 6 and 7 for the
 * mathematics (Bombari-Mondelli, "Privacy for free in the overparameterized regime").
 *
 * Determinism: OpenBLAS's results depend on its thread count (measured: dgemm, dgemv
 * and dsyevd differ in the last bits between 1 and 2 threads), so the library runs the
 * BLAS single-threaded, cuts the large products into fixed blocks of rows shared by
 * OpenMP threads, and gives every run its own stream and output slot.
 * Linking: the products go through OpenBLAS's CBLAS (families/blas_internal.h); the library
 * links GSL without its reference libgslcblas, which served cblas_* when it came first on
 * the link line (a 2000 x 4000 Gram matrix took 10x longer that way).
 */
#ifndef HDPSGD_RF_INTERNAL_H
#define HDPSGD_RF_INTERNAL_H

#include "hdpsgd/rf.h"

#include "core/alloc.h"
#include "families/blas_internal.h"

#include <stddef.h>
#include <stdlib.h>

/* ---- small helpers ---- */

static inline double dot(const double *a, const double *b, long len)
{
    double s = 0;
    for (long i = 0; i < len; i++)
        s += a[i] * b[i];
    return s;
}

/* mean of (pred - y)^2 */
static inline double mse(const double *pred, const double *y, long len)
{
    double s = 0;
    for (long i = 0; i < len; i++) {
        double e = pred[i] - y[i];
        s += e * e;
    }
    return s / (double)len;
}

/* a = S^{-1} U^T x: the mode coefficients w_k^T v of a vector v given x = Phi v (docs/theory.md §7:
 * w_k = Phi^T u_k / s_k) */
static inline void to_modes(const hdp_rf_problem *pb, const double *x, double *a)
{
    const long n = pb->spec.k.n, r = pb->r;
    blas_gemv(1, n, r, 1.0, pb->U, r, x, 0.0, a);
    for (long k = 0; k < r; k++)
        a[k] /= pb->s[k];
}

#endif
