/*
 * si_internal.h — what the two files of the single-index family share (internal): si.c builds
 * the problem (checks, scalings, data, stage 1, the stage-2 kernel and its predicted laws),
 * si_stage2.c runs stage 2's Monte Carlo.
 */
#ifndef HDPSGD_SI_INTERNAL_H
#define HDPSGD_SI_INTERNAL_H

#include <math.h>

/* 1 when the n numbers of v are all finite */
static inline int hdp_si_all_finite(const double *v, long n)
{
    for (long i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

#endif
