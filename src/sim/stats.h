/*
 * stats.h — the one convention for a Monte Carlo mean and its standard error (internal;
 * used by the simulation layer and the model families).
 *
 * Standard error of the mean of n values with sample sum of squared deviations ss:
 * sqrt(ss / (n - 1) / n), the unbiased sample variance over n. One value (n = 1): 0 — there
 * is nothing to estimate it from; a caller that reports it for one run says so (the
 * toolkit writes no NaN). The sums run in index order, so results do not depend on threads.
 */
#ifndef HDPSGD_SIM_STATS_H
#define HDPSGD_SIM_STATS_H

#include <math.h>

static inline double hdp_stderr_from_ss(double ss, long n)
{
    return n > 1 ? sqrt(ss / (double)(n - 1) / (double)n) : 0.0;
}

/* mean and standard error of v[0], v[stride], ..., v[(n - 1) stride] (se may be NULL) */
static inline void hdp_mean_stderr(const double *v, long n, long stride, double *mean,
                                   double *se)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += v[i * stride];
    double mu = s / (double)n, ss = 0;
    for (long i = 0; i < n; i++)
        ss += (v[i * stride] - mu) * (v[i * stride] - mu);
    *mean = mu;
    if (se)
        *se = hdp_stderr_from_ss(ss, n);
}

#endif
