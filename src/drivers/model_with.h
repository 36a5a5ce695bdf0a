/*
 * model_with.h — a finalized model with some keys changed, re-finalized (internal;
 * src/drivers/model_with.c). The drivers that run one model at several sizes (validate
 * --scaling) build their level models with it in the library, instead of calling back into
 * the program to read the model file again.
 *
 * A minimal stand-in, through the existing hdp_model_set/hdp_model_finalize path, for the
 * public hdp_model_with of issue 30 item 4 (one key, "section.key" and value): replace it by
 * that when it lands (two calls, or one with several keys).
 */
#ifndef HDPSGD_DRIVERS_MODEL_WITH_H
#define HDPSGD_DRIVERS_MODEL_WITH_H

#include "hdpsgd/model.h"

/* *out = a deep copy of the finalized model m with the count assignments "section.key=value"
 * applied in order (origin "--set", as the program's --set) and finalized once (its files read
 * again). m is unchanged. Release *out with hdp_model_free, also after a failure. */
hdp_status hdp_drv_model_with(const hdp_model *m, const char *const *sets, int count,
                              hdp_model *out, hdp_error *err);

#endif
