/*
 * blas_internal.h — the OpenBLAS interface and small helpers shared by the
 * dense-linear-algebra models (rf.c, kl.c); internal.
 *
 * The Fortran BLAS symbols (dgemm_, dgemv_) are called directly: GSL's reference
 * CBLAS comes first on the link line, so cblas_* calls would silently go to GSL.
 * OpenBLAS runs single-threaded inside these calls (blas_single/blas_restore:
 * results then do not depend on its thread count) and OpenMP splits the work in
 * fixed blocks instead. Note: openblas_set_num_threads is process-wide.
 */
#ifndef HDPSGD_BLAS_INTERNAL_H
#define HDPSGD_BLAS_INTERNAL_H

#include <omp.h>
#include <stdlib.h>

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);
void dgemv_(const char *t, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy);
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

/* Run OpenBLAS single-threaded; returns the previous setting for blas_restore. */
static inline int blas_single(void)
{
    int old = openblas_get_num_threads();
    openblas_set_num_threads(1);
    return old;
}

static inline void blas_restore(int old) { openblas_set_num_threads(old > 0 ? old : 1); }

/* OpenMP threads for a requested count (0 = OpenMP's default), at least 1. */
static inline int threads_to_use(int threads)
{
    int t = threads > 0 ? threads : omp_get_max_threads();
    return t < 1 ? 1 : t;
}


#endif
