/*
 * handle.c — the library behind opaque pointers (hdpsgd/handle.h), for the Python package
 * and other foreign-function interfaces (issue 24). Only public functions are called, and
 * results are copied into records with the command line's names, so that a change of
 * hdp_model or of a result struct changes this file, never its callers.
 */
#define _GNU_SOURCE /* open_memstream */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "drivers/handle_internal.h"
#include "hdpsgd/accountant.h"
#include "hdpsgd/design.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/handle.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/spectrum.h"
#include "hdpsgd/validate.h"
#include "hdpsgd/version.h"

/* ---- errors ---- */

hdp_error *hdp_error_new(void)
{
    hdp_error *e = malloc(sizeof *e);
    if (e)
        hdp_error_clear(e);
    return e;
}

void hdp_error_delete(hdp_error *err) { free(err); }

hdp_status hdp_error_get_status(const hdp_error *err) { return err ? err->status : HDP_EINPUT; }

const char *hdp_error_message(const hdp_error *err) { return err ? err->msg : ""; }

/* ---- models ---- */

hdp_model *hdp_model_new(void)
{
    hdp_model *m = malloc(sizeof *m);
    if (m)
        hdp_model_init(m);
    return m;
}

void hdp_model_delete(hdp_model *m)
{
    if (!m)
        return;
    hdp_model_free(m);
    free(m);
}

void hdp_text_free(char *text) { free(text); }

typedef void (*writer_fn)(const hdp_model *, FILE *);

static hdp_status to_text(const hdp_model *m, writer_fn write, char **text, hdp_error *err)
{
    size_t size = 0;
    char *buf = NULL;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the model's text");
    write(m, f);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the model's text");
    }
    *text = buf;
    return HDP_OK;
}

hdp_status hdp_model_ini_text(const hdp_model *m, char **text, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, text, m);
    return to_text(m, hdp_model_write_ini, text, err);
}

/* the core sections alone, as `hdpsgd config` writes them (no model family's own section) */
static void write_core_ini(const hdp_model *m, FILE *out)
{
    static const char *const none[] = {NULL};
    hdp_model_write_ini_sections(m, out, none);
}

hdp_status hdp_model_config_text(const hdp_model *m, int all, char **text, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, text, m);
    return to_text(m, all ? hdp_model_write_ini : write_core_ini, text, err);
}

hdp_status hdp_model_meta_text(const hdp_model *m, char **text, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, text, m);
    return to_text(m, hdp_model_write_meta, text, err);
}

hdp_status hdp_model_get_text(const hdp_model *m, const char *key, char **value, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, value, m);
    HDP_REQUIRE(err, key);
    /* the schema names the keys; the metadata lines '# section.key = value' hold the values */
    const char *sec, *k, *def;
    int known = 0;
    size_t klen = strlen(key);
    for (int i = 0; !known && hdp_model_schema_entry(i, &sec, &k, &def, NULL); i++) {
        size_t sl = strlen(sec);
        known = klen == sl + 1 + strlen(k) && !strncmp(key, sec, sl) && key[sl] == '.' &&
                !strcmp(key + sl + 1, k);
    }
    if (!known)
        return hdp_fail(err, HDP_EINPUT,
                        "unknown model key '%s': expected section.key, one of the keys "
                        "`hdpsgd keys` lists",
                        key);
    char buf[HDP_PATH_MAX], sec_name[64];
    size_t sl = strcspn(key, ".");
    snprintf(sec_name, sizeof sec_name, "%.*s", (int)(sl < 63 ? sl : 63), key);
    if (!hdp_model_value_text(m, sec_name, key + sl + 1, buf, sizeof buf))
        return hdp_fail(err, HDP_EINPUT, "model key '%s' is not in the model", key);
    *value = strdup(buf);
    return *value ? HDP_OK : hdp_fail(err, HDP_ENOMEM, "out of memory");
}

/* ---- records ---- */

typedef struct {
    char name[64];
    long length;
    double *data;
} rec_column;

typedef struct {
    char name[64];
    double value;
    int kind;
} rec_number;

typedef struct {
    char name[64];
    char *value;
} rec_text;

struct hdp_record {
    rec_column *cols;
    int ncols, capcols;
    rec_number *nums;
    int nnums, capnums;
    rec_text *texts;
    int ntexts, captexts;
    int oom; /* an allocation failed: the record is incomplete */
};

void hdp_record_delete(hdp_record *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->ncols; i++)
        free(r->cols[i].data);
    for (int i = 0; i < r->ntexts; i++)
        free(r->texts[i].value);
    free(r->cols);
    free(r->nums);
    free(r->texts);
    free(r);
}

/* room for one more entry of n in *p (capacity *cap), or 0 with the record marked
 * incomplete (and 0 when it already is) */
static int grow(hdp_record *r, void **p, int *cap, int n, size_t size)
{
    if (r->oom)
        return 0;
    if (n < *cap)
        return 1;
    int c = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) {
        r->oom = 1;
        return 0;
    }
    *p = q;
    *cap = c;
    return 1;
}

void hdp_rec_col(hdp_record *r, const char *prefix, const char *name, const double *data,
                    long length)
{
    if (!grow(r, (void **)&r->cols, &r->capcols, r->ncols, sizeof *r->cols))
        return;
    rec_column *c = &r->cols[r->ncols];
    snprintf(c->name, sizeof c->name, "%s%s", prefix, name);
    c->length = data ? length : 0;
    c->data = malloc(sizeof(double) * (size_t)(c->length > 0 ? c->length : 1));
    if (!c->data) {
        r->oom = 1;
        return;
    }
    if (c->length > 0)
        memcpy(c->data, data, sizeof(double) * (size_t)c->length);
    r->ncols++;
}

void hdp_rec_num(hdp_record *r, const char *prefix, const char *name, double v, int kind)
{
    if (!grow(r, (void **)&r->nums, &r->capnums, r->nnums, sizeof *r->nums))
        return;
    rec_number *n = &r->nums[r->nnums++];
    snprintf(n->name, sizeof n->name, "%s%s", prefix, name);
    n->value = v;
    n->kind = kind;
}

void hdp_rec_text_add(hdp_record *r, const char *name, const char *value)
{
    if (!grow(r, (void **)&r->texts, &r->captexts, r->ntexts, sizeof *r->texts))
        return;
    rec_text *t = &r->texts[r->ntexts];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->value = strdup(value ? value : "");
    if (!t->value) {
        r->oom = 1;
        return;
    }
    r->ntexts++;
}

int hdp_record_columns(const hdp_record *r) { return r ? r->ncols : 0; }
int hdp_record_numbers(const hdp_record *r) { return r ? r->nnums : 0; }
int hdp_record_texts(const hdp_record *r) { return r ? r->ntexts : 0; }

const char *hdp_record_column(const hdp_record *r, int i, long *length, const double **data)
{
    if (!r || i < 0 || i >= r->ncols)
        return NULL;
    if (length)
        *length = r->cols[i].length;
    if (data)
        *data = r->cols[i].data;
    return r->cols[i].name;
}

const char *hdp_record_number(const hdp_record *r, int i, double *value, int *kind)
{
    if (!r || i < 0 || i >= r->nnums)
        return NULL;
    if (value)
        *value = r->nums[i].value;
    if (kind)
        *kind = r->nums[i].kind;
    return r->nums[i].name;
}

const char *hdp_record_text(const hdp_record *r, int i, const char **value)
{
    if (!r || i < 0 || i >= r->ntexts)
        return NULL;
    if (value)
        *value = r->texts[i].value;
    return r->texts[i].name;
}

hdp_record *hdp_rec_new(void) { return calloc(1, sizeof(hdp_record)); }

void hdp_rec_oom(hdp_record *r)
{
    if (r)
        r->oom = 1;
}

/* hand a finished record out, or fail with HDP_ENOMEM */
hdp_status hdp_rec_finish(hdp_record *r, hdp_record **out, hdp_error *err)
{
    if (!r || r->oom) {
        hdp_record_delete(r);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the results");
    }
    *out = r;
    return HDP_OK;
}

/* ---- the fields of the command line's CSV and JSON ---- */

static void sink_real(void *r, const char *name, double v) { hdp_rec_num(r, "", name, v, HDP_VALUE_REAL); }
static void sink_integer(void *r, const char *name, long v) { hdp_rec_num(r, "", name, (double)v, HDP_VALUE_INT); }
static void sink_boolean(void *r, const char *name, int v) { hdp_rec_num(r, "", name, v, HDP_VALUE_BOOL); }
static void sink_text(void *r, const char *name, const char *v) { hdp_rec_text_add(r, name, v); }
static void sink_column(void *r, const char *name, const double *v, long length) { hdp_rec_col(r, "", name, v, length); }

/* a list as a column */
static void sink_list(void *r, const char *name, const hdp_field *f, const void *obj)
{
    long n = f->count(obj);
    double *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    if (!v) {
        hdp_rec_oom(r);
        return;
    }
    for (long i = 0; i < n; i++)
        v[i] = f->get(obj, &i);
    hdp_rec_col(r, "", name, v, n);
    free(v);
}

/* a seed as a text (64 bits) */
static void sink_seed(void *r, const char *name, unsigned long long v)
{
    char text[32];
    snprintf(text, sizeof text, "%llu", v);
    hdp_rec_text_add(r, name, text);
}

static const hdp_field_sink rec_sink = {sink_real,   sink_integer, sink_boolean, sink_text,
                                        sink_column, sink_list,    sink_seed};

/* every field of a result table (hdpsgd/fields.h) of obj under prefix, but the JSON-only */
void hdp_rec_fields(hdp_record *r, const hdp_field_table *t, const char *prefix,
                       const void *obj, const void *ctx)
{
    hdp_field_write(t, HDP_FIELD_IN_RECORD, prefix, -1, obj, ctx, &rec_sink, r);
}

/* the same of a table written once per index (hdp_json_fields_at) */
void hdp_rec_fields_at(hdp_record *r, const hdp_field_table *t, const char *prefix,
                       const void *obj, long index)
{
    hdp_field_write(t, HDP_FIELD_IN_RECORD, prefix, index, obj, NULL, &rec_sink, r);
}

/* the columns of a table alone (the validator's curves) */
void hdp_rec_columns(hdp_record *r, const hdp_field_table *t, const char *prefix, const void *obj)
{
    char name[64];
    for (const hdp_field *f = t->fields; f->name; f++) {
        if (f->kind != HDP_FIELD_COLUMN)
            continue;
        long len;
        const double *data = hdp_field_column(f, obj, &len);
        hdp_rec_col(r, "", hdp_field_name(t, f, prefix, name, sizeof name), data, len);
    }
}

const char *hdp_result_table(int i, const char **help)
{
    const hdp_field_table *t = hdp_field_table_at(i);
    if (help)
        *help = t ? t->help : NULL;
    return t ? t->name : NULL;
}

const char *hdp_result_field(const char *table, int i, int *kind, const char **help)
{
    /* the i-th field the record holds (the JSON-only fields are not there) */
    const hdp_field_table *t = hdp_field_table_find(table);
    const hdp_field *f = NULL;
    for (int k = 0, seen = 0; i >= 0 && (f = hdp_field_at(t, k)); k++)
        if (!(f->flags & HDP_FIELD_NO_RECORD) && seen++ == i)
            break;
    if (kind) /* a list is a column of the record */
        *kind = !f ? -1 : (f->flags & HDP_FIELD_LIST) ? HDP_FIELD_COLUMN : (int)f->kind;
    if (help)
        *help = f ? f->help : NULL;
    return !f ? NULL : f->record ? f->record : f->name;
}

/* ---- progress and cancellation ---- */


/* the Monte Carlo's reports (runs, and "sim steps"/"sde steps" from within them) as they
 * come; a nonzero return also raises the caller's cancel flag */
static int mc_progress(const char *what, long done, long total, double value, void *user)
{
    hdp_handle_relay *p = user;
    if (p->progress(what, done, total, value, p->user))
        *p->cancel = 1;
    return 0;
}

void hdp_handle_relay_init(hdp_handle_relay *p, volatile int *cancel, hdp_progress_fn progress,
                           void *user)
{
    p->own = 0;
    p->cancel = cancel ? cancel : &p->own;
    p->progress = progress;
    p->user = user;
}

/* A Monte Carlo job's start: the model checked, the relay p of the caller's cancel flag (p's
 * own when NULL) and progress callback, and the model's Monte Carlo options with the caller's
 * threads, its cancel flag and progress through p */
hdp_status hdp_handle_mc_begin(const hdp_model *m, int threads, volatile int *cancel,
                               hdp_progress_fn progress, void *user, hdp_handle_relay *p,
                               hdp_mc_options *opt, hdp_error *err)
{
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    hdp_handle_relay_init(p, cancel, progress, user);
    hdp_mc_options_from_model(m, opt);
    opt->threads = threads;
    opt->cancel = p->cancel;
    if (p->progress) {
        opt->progress = mc_progress;
        opt->progress_user = p;
    }
    return HDP_OK;
}

/* the designer's reports to the caller's callback with the family's name as what (as before
 * the designer took hdp_progress_fn: Python sees "pl", not "pl scan") */
int hdp_handle_design_progress(const char *what, long done, long total, double value, void *user)
{
    hdp_handle_relay *p = user;
    hdp_design_family f = HDP_FAMILY_PL;
    if (hdp_design_progress_event(what, &f) < 0)
        return 0;
    if (p->progress(hdp_design_family_name(f), done, total, value, p->user))
        *p->cancel = 1;
    return 0;
}

/* ---- the jobs ---- */

hdp_status hdp_handle_ode(const hdp_model *m, hdp_record **out, hdp_error *err)
{
    return hdp_handle_ode_run(m, NULL, NULL, NULL, out, err);
}

hdp_status hdp_handle_ode_run(const hdp_model *m, volatile int *cancel, hdp_progress_fn progress,
                              void *user, hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, m);
    volatile int own = 0;
    if (!cancel)
        cancel = &own;
    if (progress && progress("ode", 0, 1, NAN, user))
        *cancel = 1;
    hdp_ode_result o;
    const volatile int *old = hdp_cancel_flag_set(cancel); /* the solve's steps check it */
    hdp_status st = hdp_ode_solve(m, &o, err);
    hdp_cancel_flag_set(old);
    if (st == HDP_OK && progress)
        progress("ode", 1, 1, o.final_risk, user);
    if (st != HDP_OK) {
        hdp_ode_result_free(&o);
        return st;
    }
    hdp_record *r = hdp_rec_new();
    if (r) {
        hdp_rec_fields(r, &hdp_ode_fields, "", &o, m);
        if (o.data) /* data.source = file (docs/theory.md §9), as the JSON and CSV */
            hdp_rec_fields(r, &hdp_ode_data_fields, "", &o, m);
        if (o.test_mse)
            hdp_rec_fields(r, &hdp_ode_data_columns, "", &o, m);
        hdp_rec_fields(r, &hdp_model_fields, "", m, NULL);
        hdp_rec_fields(r, &hdp_source_fields, "", m, NULL);
        hdp_rec_fields(r, &hdp_version_fields, "", NULL, NULL);
    }
    hdp_ode_result_free(&o);
    return hdp_rec_finish(r, out, err);
}

hdp_status hdp_handle_mc(const hdp_model *m, const char *method, int threads, int keep_runs,
                         volatile int *cancel, hdp_progress_fn progress, void *user,
                         hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, m);
    HDP_REQUIRE(err, method);
    int sde = !strcmp(method, "sde");
    if (!sde && strcmp(method, "sim"))
        return hdp_fail(err, HDP_EINPUT, "unknown method '%s': expected sim or sde", method);
    hdp_handle_relay p;
    hdp_mc_options opt;
    if (hdp_handle_mc_begin(m, threads, cancel, progress, user, &p, &opt, err) != HDP_OK)
        return HDP_EINPUT;
    double *finals = NULL;
    if (keep_runs) {
        finals = malloc(sizeof(double) * (size_t)(opt.runs > 0 ? opt.runs : 1));
        if (!finals)
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld final risks", opt.runs);
        opt.final_risks = finals;
    }
    hdp_mc_result s;
    hdp_status st = sde ? hdp_sde_run(m, &opt, &s, err) : hdp_sim_run(m, &opt, &s, err);
    if (st != HDP_OK) {
        hdp_mc_result_free(&s);
        free(finals);
        return st;
    }
    hdp_record *r = hdp_rec_new();
    if (r) {
        hdp_rec_fields(r, &hdp_mc_fields, "", &s, m);
        if (finals)
            hdp_rec_fields(r, &hdp_mc_finals_fields, "", &opt, NULL);
        if (s.sgd.finite) /* standard DP-SGD on a finite training set */
            hdp_rec_fields(r, &hdp_mc_sgd_fields, "", &s, m);
        else if (!sde) /* docs/theory.md §6.1: the SDE draws no rows */
            hdp_rec_fields(r, &hdp_mc_rows_fields, "", &s, m);
        if (s.test_mse) { /* a data set's held-out set (docs/theory.md §9), as the JSON and CSV */
            hdp_rec_fields(r, &hdp_mc_data_fields, "", &s, m);
            hdp_rec_fields(r, &hdp_mc_data_columns, "", &s, m);
        }
        hdp_rec_fields(r, &hdp_model_fields, "", m, NULL);
        hdp_rec_fields(r, &hdp_mc_run_fields, "", &s, m);
        hdp_rec_fields(r, &hdp_mc_command_fields, "", sde ? "sde" : "sim", NULL);
        hdp_rec_fields(r, &hdp_mc_seed_fields, "", &opt, NULL);
        hdp_rec_fields(r, &hdp_source_fields, "", m, NULL);
        hdp_rec_fields(r, &hdp_version_fields, "", NULL, NULL);
    }
    hdp_mc_result_free(&s);
    free(finals);
    return hdp_rec_finish(r, out, err);
}

hdp_status hdp_handle_validate(const hdp_model *m, int threads, int with_sde, volatile int *cancel,
                               hdp_progress_fn progress, void *user, hdp_record **out,
                               hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, m);
    hdp_handle_relay p;
    hdp_mc_options opt;
    if (hdp_handle_mc_begin(m, threads, cancel, progress, user, &p, &opt, err) != HDP_OK)
        return HDP_EINPUT;
    hdp_validate_result v;
    hdp_status st = hdp_validate_run(m, &opt, with_sde, &v, err);
    if (st != HDP_OK) {
        hdp_validate_free(&v);
        return st;
    }
    hdp_record *r = hdp_rec_new();
    if (r) {
        hdp_rec_fields(r, &hdp_validate_side_fields, "", &v.sim_side, m); /* pass: sim_pass */
        if (v.with_sde)
            hdp_rec_fields(r, &hdp_validate_side_fields, "sde_", &v.sde_side, m);
        hdp_rec_fields(r, &hdp_validate_fields, "", &v, m);
        if (v.with_sde)
            hdp_rec_fields(r, &hdp_validate_sde_fields, "", &v, m);
        if (v.ode.data) /* a data set (docs/theory.md §9): the ODE's corrections, the test MSE */
            hdp_rec_fields(r, &hdp_ode_data_fields, "", &v.ode, m);
        if (v.sim.test_mse)
            hdp_rec_fields(r, &hdp_mc_data_fields, "", &v.sim, m);
        hdp_rec_fields(r, &hdp_mc_rows_fields, "", &v.sim, m);
        hdp_rec_fields(r, &hdp_model_fields, "", m, NULL);
        hdp_rec_fields(r, &hdp_validate_grid_fields, "", &v.ode, NULL);
        /* the curves: ode.risk, sim.mean, ... (as the files PREFIX.ode.csv, PREFIX.sim.csv;
         * sde_clipped_fraction is the SDE side's number) */
        hdp_rec_columns(r, &hdp_ode_fields, "ode.", &v.ode);
        hdp_rec_columns(r, &hdp_mc_fields, "sim.", &v.sim);
        if (v.with_sde)
            hdp_rec_columns(r, &hdp_mc_fields, "sde.", &v.sde);
        hdp_rec_fields(r, &hdp_source_fields, "", m, NULL);
    }
    hdp_validate_free(&v);
    return hdp_rec_finish(r, out, err);
}

/* the text "table": the best schedule as the file `schedule --optimize -o` writes */
