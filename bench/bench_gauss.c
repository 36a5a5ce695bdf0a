/* bench_gauss.c — the cost of the toolkit's Gaussian sampler (GSL ziggurat on a
 * xoshiro256++ gsl_rng, as in the Monte Carlo), for the sim target of issue 7:
 * one run at d, n needs 2 n d Gaussian numbers.  Usage: bench_gauss COUNT */
#include <gsl/gsl_randist.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hdpsgd/rng.h"

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 200000000L;
    gsl_rng *r = hdp_rng_alloc(1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double acc = 0;
    for (long i = 0; i < count; i++)
        acc += gsl_ran_gaussian_ziggurat(r, 1.0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("{\"count\": %ld, \"seconds\": %.6f, \"ns_per_draw\": %.3f, \"checksum\": %.6g}\n", count,
           s, 1e9 * s / (double)count, acc);
    gsl_rng_free(r);
    return 0;
}
