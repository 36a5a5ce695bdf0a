/*
 * handle_internal.h — what the handle API's files share (internal): the records (built in
 * handle.c) and the relay of a caller's progress callback and cancel flag.
 */
#ifndef HDPSGD_HANDLE_INTERNAL_H
#define HDPSGD_HANDLE_INTERNAL_H

#include "hdpsgd/design.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/handle.h"
#include "hdpsgd/sim.h"

/* what every entry point checks first: its output pointer out given (then cleared) and its
 * first input given (HDP_REQUIRE's message names the argument) */
#define HDP_REQUIRE_OUT(err, out, in)                                                         \
    do {                                                                                      \
        HDP_REQUIRE(err, out);                                                                \
        *(out) = NULL;                                                                        \
        HDP_REQUIRE(err, in);                                                                 \
    } while (0)

/* a caller's cancel flag and progress callback, for the library's own callbacks */
typedef struct {
    volatile int *cancel;
    hdp_progress_fn progress;
    void *user;
    volatile int own; /* the flag cancel points to when the caller gave none */
} hdp_handle_relay;

/* the relay of a caller's cancel flag (p's own when NULL) and progress callback */
void hdp_handle_relay_init(hdp_handle_relay *p, volatile int *cancel, hdp_progress_fn progress,
                           void *user);

/* A Monte Carlo job's start: the model checked, the relay p of the caller's cancel flag (p's
 * own when NULL) and progress callback, and the model's Monte Carlo options with the caller's
 * threads, its cancel flag and progress through p (which must outlive the options) */
hdp_status hdp_handle_mc_begin(const hdp_model *m, int threads, volatile int *cancel,
                               hdp_progress_fn progress, void *user, hdp_handle_relay *p,
                               hdp_mc_options *opt, hdp_error *err);

/* the designer's reports relayed (user: an hdp_handle_relay) */
int hdp_handle_design_progress(const char *what, long done, long total, double value, void *user);

/* building a record: a new one, its columns (copied), numbers and texts, then
 * hdp_rec_finish hands it out (or reports that memory ran out) */
hdp_record *hdp_rec_new(void);
void hdp_rec_col(hdp_record *r, const char *prefix, const char *name, const double *data,
                 long length);
void hdp_rec_num(hdp_record *r, const char *prefix, const char *name, double v, int kind);
void hdp_rec_text_add(hdp_record *r, const char *name, const char *value);
void hdp_rec_fields(hdp_record *r, const hdp_field_table *t, const char *prefix, const void *obj,
                    const void *ctx);
void hdp_rec_fields_at(hdp_record *r, const hdp_field_table *t, const char *prefix,
                       const void *obj, long index);
void hdp_rec_columns(hdp_record *r, const hdp_field_table *t, const char *prefix, const void *obj);
hdp_status hdp_rec_finish(hdp_record *r, hdp_record **out, hdp_error *err);
/* mark r incomplete: an allocation for it failed (hdp_rec_finish then reports it) */
void hdp_rec_oom(hdp_record *r);

#endif
