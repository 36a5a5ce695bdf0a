/*
 * model_internal.h — what the files of the model share and nothing else includes:
 * model.c (the core's sections, defaults), model_read.c (model files and --set),
 * model_finalize.c (finalize and its checks) and model_write.c (models written back).
 */
#ifndef HDPSGD_CORE_MODEL_INTERNAL_H
#define HDPSGD_CORE_MODEL_INTERNAL_H

#include <stddef.h>

#include "hdpsgd/model.h"

/* Spectrum and schedule tables. */
#define TABLE_MAX_LINE 4000
/* Smallest step in t between two knots of a schedule table (model_finalize.c) */
#define HDP_TABLE_MIN_SPACING 1e-9

/* "where:line", or "where" alone when line <= 0 (model.c). */
void hdp_model_format_where(char *buf, size_t size, const char *where, int line);

/* Read the file path whole into *text, checked (model_read.c: the rules are at its
 * definition). */
hdp_status hdp_model_read_text(const char *path, const char *what, long max_line, char **text,
                               hdp_error *err);

/* Where the key of schema index i was set: "" (the default), "--set" or a file name. */
const char *hdp_model_origin_where(const hdp_model *m, int i);

/* Record that the key of schema index i was set at where:line ("" = back to the default);
 * HDP_EINPUT when where would be a file beyond HDP_MODEL_MAX_FILES (model.c). */
hdp_status hdp_model_origin_set(hdp_model *m, int i, const char *where, int line,
                                hdp_error *err);

/* The places of a model's texts (hdp_model in hdpsgd/model.h: every HDP_KEY_PATH key of the
 * schema, source, origin_files), at most max of them (model.c; HDP_MODEL_MAX_TEXTS holds
 * them all, tests/test_model.c checks it): hdp_model_init, _free and _copy go through them. */
#define HDP_MODEL_MAX_TEXTS 32
int hdp_model_texts(hdp_model *m, const char **slots[], int max);

/* [data] section's finalize: data.train_size and standard DP-SGD's (shuffle, poisson)
 * combinations with [sgd] and [clip] (core/finite.c) */
hdp_status hdp_finite_finalize(hdp_model *m, hdp_error *err);

/* hdp_model_finalize; keep_tables: a spectrum file and schedule table already loaded are
 * kept, not read again (hdp_model_with, for a key they do not depend on). */
hdp_status hdp_model_finalize_keep(hdp_model *m, int keep_tables, hdp_error *err);

/* When key is a form of the privacy budget (rho, rho_zcdp, epsilon): the other forms count
 * as not given, so that finalize derives them from this one (model_finalize.c). */
void hdp_model_budget_replaced(hdp_model *m, const char *key);

/* data.source = file: read and prepare the data set into m->data (kept when keep and one is
 * there) and set m->d from it; other sources: release any (model_data.c). */
hdp_status hdp_model_load_data(hdp_model *m, int keep, hdp_error *err);

/* The clipping biases cached with a data set, released with it (data_bias.c). */
struct hdp_data_cache;
void hdp_data_cache_free(struct hdp_data_cache *c);
/* Release the clipping bias m holds (data_bias.c; hdp_model_free). */
void hdp_data_bias_unpin(hdp_model *m);
/* Arrays given in memory (hdp_model_set_data_arrays): shared by copies (model_data.c). */
struct hdp_data_arrays *hdp_data_arrays_retain(struct hdp_data_arrays *a);
void hdp_data_arrays_release(struct hdp_data_arrays *a);

#endif
