/*
 * mc_kernels.c — the O(d) loops of one Monte Carlo step (sim.c: THEORY.md 1;
 * sde.c: THEORY.md 4), written once over vectors of eight doubles.
 *
 * Each reduction keeps eight partial sums (element i goes to sum i mod 8) added
 * in a fixed tree at the end, and every element-wise formula is evaluated in
 * the order written, without fused multiply-adds (this file is compiled with
 * -ffp-contract=off). The compiler builds the functions for AVX-512, AVX2 and
 * the baseline (target_clones, chosen at load time): the same IEEE operations
 * in the same order, so the numbers are bit for bit the same on every machine;
 * only the width of the registers changes.
 */
#include <string.h>

#include "mc_internal.h"

typedef double v8 __attribute__((vector_size(64)));

#if defined(__GNUC__) && !defined(__clang__)
/* load() and store() pass a v8 by value; they are always inlined, so the note that the
 * calling convention of 64-byte vectors differs with and without AVX-512 does not apply */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/* HDP_MC_KERNELS_BASELINE: one baseline build (tests/test_kernels.c compares it with the
 * library's clones) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(HDP_MC_KERNELS_BASELINE)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

static inline v8 load(const double *p)
{
    v8 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store(double *p, v8 v) { memcpy(p, &v, sizeof v); }

static inline double tree(const double a[8])
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

CLONES void hdp_mc_sample_dot(const double *sl, const double *z, const double *e, double *x,
                              long d, double *dot, double *xx)
{
    v8 a = {0}, q = {0};
    long i = 0;
    for (; i + 8 <= d; i += 8) {
        v8 xi = load(sl + i) * load(z + i);
        store(x + i, xi);
        a += xi * load(e + i);
        q += xi * xi;
    }
    double as[8], qs[8];
    memcpy(as, &a, sizeof as);
    memcpy(qs, &q, sizeof qs);
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
    for (; i + 8 <= d; i += 8)
        store(e + i, load(e + i) + (a * load(x + i) + s * load(z + i)));
    for (; i < d; i++)
        e[i] += a * x[i] + s * z[i];
}

CLONES double hdp_mc_sde_step(double *e, const double *lambda, const double *sl, double a,
                              double b, const double *z1, double q, const double *z2, long d)
{
    v8 acc = {0};
    long i = 0;
    for (; i + 8 <= d; i += 8) {
        v8 l = load(lambda + i), ei = load(e + i);
        v8 inc = -a * l * ei + b * load(sl + i) * load(z1 + i);
        if (z2)
            inc += q * load(z2 + i);
        ei += inc;
        store(e + i, ei);
        acc += l * ei * ei;
    }
    double as[8];
    memcpy(as, &acc, sizeof as);
    for (int j = 0; i < d; i++, j++) {
        double inc = -a * lambda[i] * e[i] + b * sl[i] * z1[i];
        if (z2)
            inc += q * z2[i];
        e[i] += inc;
        as[j] += lambda[i] * e[i] * e[i];
    }
    return tree(as);
}
