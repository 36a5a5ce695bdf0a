/*
 * alloc.h — zeroed arrays of doubles (internal): calloc of at least one element, so that a
 * size of zero still gives a pointer that can be freed and never NULL by itself. NULL means
 * out of memory. The Monte Carlo's cache-aligned vectors are hdp_mc_vec_alloc (sim layer).
 */
#ifndef HDPSGD_CORE_ALLOC_H
#define HDPSGD_CORE_ALLOC_H

#include <stdlib.h>

static inline double *hdp_dalloc(size_t count)
{
    return calloc(count ? count : 1, sizeof(double));
}

#endif
