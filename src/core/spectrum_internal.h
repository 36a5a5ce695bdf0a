/*
 * spectrum_internal.h — hdp_spectrum_build without its check of the model (internal;
 * src/core/spectrum.c), for a caller that has just checked it (hdp_problem_build).
 */
#ifndef HDPSGD_CORE_SPECTRUM_INTERNAL_H
#define HDPSGD_CORE_SPECTRUM_INTERNAL_H

#include "hdpsgd/spectrum.h"

/* m must have passed hdp_model_check; spec not NULL. */
hdp_status hdp_spectrum_of_checked(const hdp_model *m, hdp_spectrum *spec, hdp_error *err);

#endif
