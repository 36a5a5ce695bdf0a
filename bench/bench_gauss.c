/* bench_gauss.c — the cost of the toolkit's Gaussian samplers, for the sim target of
 * issue 7: one run at d, n needs 2 n d Gaussian numbers.  Usage: bench_gauss COUNT
 * Prints JSON: "seconds" and "ns_per_draw" for COUNT draws (best of three) of the block stream the
 * Monte Carlo's steps use (hdp_normals_fill, 1000 at a time as sim does at d = 1000;
 * "kernel" names the SIMD kernel), and per draw for the scalar inline ziggurat
 * (hdp_rng_normal: theta*, label noise, the other model families) and for GSL's
 * ziggurat through the gsl_rng interface (the Monte Carlo's sampler before issue 7). */
#include <gsl/gsl_randist.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 200000000L;
    if (count < 1000)
        count = 1000;
    gsl_rng *r = hdp_rng_alloc(1);
    double buf[1000], acc = 0;

    hdp_normals blk;
    hdp_normals_init(&blk, hdp_rng_state(r));
    double block = 1e300, t0;
    for (int rep = 0; rep < 3; rep++) { /* best of three: benchmark machines are noisy */
        t0 = now();
        for (long i = 0; i < count; i += 1000) {
            hdp_normals_fill(&blk, buf, 1000);
            acc += buf[i % 1000];
        }
        double t = now() - t0;
        block = t < block ? t : block;
    }

    long small = count / 10; /* the slower samplers on a tenth of the draws */
    t0 = now();
    for (long i = 0; i < small; i++)
        acc += hdp_rng_normal_fast(hdp_rng_state(r));
    double scalar = now() - t0;
    t0 = now();
    for (long i = 0; i < small; i++)
        acc += gsl_ran_gaussian_ziggurat(r, 1.0);
    double gsl = now() - t0;

    printf("{\"count\": %ld, \"seconds\": %.6f, \"ns_per_draw\": %.3f, \"kernel\": \"%s\", "
           "\"scalar_ns_per_draw\": %.3f, \"gsl_ns_per_draw\": %.3f, \"checksum\": %.6g}\n",
           count, block, 1e9 * block / (double)count, hdp_normals_kernel(),
           1e9 * scalar / (double)small, 1e9 * gsl / (double)small, acc);
    gsl_rng_free(r);
    return 0;
}
