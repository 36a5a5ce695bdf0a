/*
 * mc_kernels.c — the O(d) loops of one Monte Carlo step (sim.c: docs/theory.md §1;
 * sde.c: docs/theory.md §4), written once over vectors of four doubles.
 *
 * Each reduction keeps eight partial sums (element i goes to sum i mod 8) added
 * in a fixed tree at the end, and every element-wise formula is evaluated in
 * the order written, without fused multiply-adds (this file is compiled with
 * -ffp-contract=off). The compiler builds the functions for AVX-512, AVX2 and
 * the baseline (target_clones, chosen at load time): the same IEEE operations
 * in the same order, so the numbers are bit for bit the same on every machine;
 * only the width of the registers changes.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/mc_internal.h"

double *hdp_mc_vec_alloc(long d)
{
    size_t bytes = sizeof(double) * (size_t)(d > 0 ? d : 1);
    bytes = (bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

/* four doubles, unaligned, allowed to alias double: the eight partial sums are two of
 * these (elements i = 8m + j go to sum j), which every target handles in registers
 * (a 64-byte vector type made GCC spill through the stack without AVX-512) */
typedef double v4 __attribute__((vector_size(32), aligned(8), may_alias));

/* HDP_MC_KERNELS_BASELINE: one baseline build (tests/test_kernels.c compares it with the
 * library's clones) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(HDP_MC_KERNELS_BASELINE)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

#define V(p) (*(const v4 *)(p))
#define W(p) (*(v4 *)(p))

static inline double tree(const double a[8])
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* the two halves of the partial sums into a[8] */
#define UNPACK(a, lo, hi) (memcpy((a), &(lo), sizeof(v4)), memcpy((a) + 4, &(hi), sizeof(v4)))

CLONES void hdp_mc_sample_dot(const double *sl, const double *z, const double *e, double *x,
                              long d, double *dot, double *xx)
{
    v4 a0 = {0}, a1 = {0}, q0 = {0}, q1 = {0};
    long i = 0;
    for (; i + 8 <= d; i += 8) {
        v4 x0 = V(sl + i) * V(z + i), x1 = V(sl + i + 4) * V(z + i + 4);
        W(x + i) = x0;
        W(x + i + 4) = x1;
        a0 += x0 * V(e + i);
        a1 += x1 * V(e + i + 4);
        q0 += x0 * x0;
        q1 += x1 * x1;
    }
    double as[8], qs[8];
    UNPACK(as, a0, a1);
    UNPACK(qs, q0, q1);
    for (int j = 0; i < d; i++, j++) {
        double xi = sl[i] * z[i];
        x[i] = xi;
        as[j] += xi * e[i];
        qs[j] += xi * xi;
    }
    *dot = tree(as);
    *xx = tree(qs);
}

CLONES void hdp_mc_axpby(double *e, double a, const double *x, double s, const double *z, long d)
{
    long i = 0;
    for (; i + 4 <= d; i += 4)
        W(e + i) = V(e + i) + (a * V(x + i) + s * V(z + i));
    for (; i < d; i++)
        e[i] += a * x[i] + s * z[i];
}

CLONES double hdp_mc_sde_step(double *e, const double *lambda, const double *sl, double a,
                              double b, const double *z1, double q, const double *z2, long d)
{
    v4 acc[2] = {{0}, {0}};
    long i = 0;
    for (; i + 8 <= d; i += 8)
        for (int h = 0; h < 2; h++) {
            long k = i + 4 * h;
            v4 l = V(lambda + k), ei = V(e + k);
            v4 inc = -a * l * ei + b * V(sl + k) * V(z1 + k);
            if (z2)
                inc += q * V(z2 + k);
            ei += inc;
            W(e + k) = ei;
            acc[h] += l * ei * ei;
        }
    double as[8];
    UNPACK(as, acc[0], acc[1]);
    for (int j = 0; i < d; i++, j++) {
        double inc = -a * lambda[i] * e[i] + b * sl[i] * z1[i];
        if (z2)
            inc += q * z2[i];
        e[i] += inc;
        as[j] += lambda[i] * e[i] * e[i];
    }
    return tree(as);
}

CLONES double hdp_mc_dot(const double *a, const double *b, long d)
{
    v4 a0 = {0}, a1 = {0};
    long i = 0;
    for (; i + 8 <= d; i += 8) {
        a0 += V(a + i) * V(b + i);
        a1 += V(a + i + 4) * V(b + i + 4);
    }
    double as[8];
    UNPACK(as, a0, a1);
    for (int j = 0; i < d; i++, j++)
        as[j] += a[i] * b[i];
    return tree(as);
}

CLONES void hdp_mc_axpy(double *y, double a, const double *x, long d)
{
    long i = 0;
    for (; i + 4 <= d; i += 4)
        W(y + i) = V(y + i) + a * V(x + i);
    for (; i < d; i++)
        y[i] += a * x[i];
}

/* four floats, unaligned, converted to a v4 (exact) */
typedef float f4 __attribute__((vector_size(16), aligned(4), may_alias));
#define VF(p) __builtin_convertvector(*(const f4 *)(p), v4)

CLONES double hdp_mc_dot_f32(const float *a, const double *b, long d)
{
    v4 a0 = {0}, a1 = {0};
    long i = 0;
    for (; i + 8 <= d; i += 8) {
        a0 += VF(a + i) * V(b + i);
        a1 += VF(a + i + 4) * V(b + i + 4);
    }
    double as[8];
    UNPACK(as, a0, a1);
    for (int j = 0; i < d; i++, j++)
        as[j] += (double)a[i] * b[i];
    return tree(as);
}

CLONES void hdp_mc_axpy_f32(double *y, double a, const float *x, long d)
{
    long i = 0;
    for (; i + 4 <= d; i += 4)
        W(y + i) = V(y + i) + a * VF(x + i);
    for (; i < d; i++)
        y[i] += a * (double)x[i];
}
