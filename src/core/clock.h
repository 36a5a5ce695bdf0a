/*
 * clock.h — the wall clock of the library's timings (internal): CLOCK_MONOTONIC in seconds.
 */
#ifndef HDPSGD_CORE_CLOCK_H
#define HDPSGD_CORE_CLOCK_H

#include <time.h>

static inline double hdp_seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
