/*
 * blas_internal.h — OpenBLAS for the dense-linear-algebra families (rf_*.c, kl*.c, nc_*.c);
 * internal.
 *
 * The products go through the CBLAS interface of OpenBLAS (<cblas.h>): the library links
 * GSL without its reference libgslcblas (cmake/hdpsgdGSL.cmake), so cblas_* are
 * OpenBLAS's kernels, for the families and for GSL alike. blas_gemm and blas_gemv are the
 * row-major products the families write (OpenBLAS computes a row-major product as the
 * column-major product of the transposes: the same kernels). OpenBLAS runs single-threaded
 * inside the families' calls (blas_single/blas_restore: results then do not depend on its
 * thread count) and OpenMP splits the work in fixed blocks or whole runs instead. Note:
 * openblas_set_num_threads is process-wide.
 */
#ifndef HDPSGD_BLAS_INTERNAL_H
#define HDPSGD_BLAS_INTERNAL_H

#include <cblas.h>
#include <omp.h>
#include <stdlib.h>

#include "sim/threads.h"

/* Row-major C[M x N] = alpha op(A) op(B) + beta C (op = transpose when ta/tb). */
static inline void blas_gemm(int ta, int tb, long M, long N, long K, double alpha,
                             const double *A, long lda, const double *B, long ldb, double beta,
                             double *C, long ldc)
{
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (blasint)M, (blasint)N, (blasint)K, alpha, A, (blasint)lda, B, (blasint)ldb, beta,
                C, (blasint)ldc);
}

/* Row-major y = alpha op(A) x + beta y, A rows x cols with leading dimension lda. */
static inline void blas_gemv(int trans, long rows, long cols, double alpha, const double *A,
                             long lda, const double *x, double beta, double *y)
{
    cblas_dgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, (blasint)rows, (blasint)cols,
                alpha, A, (blasint)lda, x, 1, beta, y, 1);
}

/* Run OpenBLAS single-threaded; returns the previous setting for blas_restore. */
static inline int blas_single(void)
{
    int old = openblas_get_num_threads();
    openblas_set_num_threads(1);
    return old;
}

static inline void blas_restore(int old) { openblas_set_num_threads(old > 0 ? old : 1); }

/* OpenMP threads for a requested count (0 = OpenMP's default), at least 1, capped as every
 * parallel region of the library is (sim/threads.h: 4096, OMP_THREAD_LIMIT, nesting, the
 * threads that can be created). */
static inline int threads_to_use(int threads) { return hdp_threads_team(0, threads); }

#endif
