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
    HDP_REQUIRE(err, text);
    *text = NULL;
    HDP_REQUIRE(err, m);
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
    HDP_REQUIRE(err, text);
    *text = NULL;
    HDP_REQUIRE(err, m);
    return to_text(m, all ? hdp_model_write_ini : write_core_ini, text, err);
}

hdp_status hdp_model_meta_text(const hdp_model *m, char **text, hdp_error *err)
{
    HDP_REQUIRE(err, text);
    *text = NULL;
    HDP_REQUIRE(err, m);
    return to_text(m, hdp_model_write_meta, text, err);
}

hdp_status hdp_model_get_text(const hdp_model *m, const char *key, char **value, hdp_error *err)
{
    HDP_REQUIRE(err, value);
    *value = NULL;
    HDP_REQUIRE(err, m);
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

static int grow(void **p, int *cap, int n, size_t size)
{
    if (n < *cap)
        return 1;
    int c = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return 0;
    *p = q;
    *cap = c;
    return 1;
}

static void rec_col(hdp_record *r, const char *prefix, const char *name, const double *data,
                    long length)
{
    if (r->oom || !grow((void **)&r->cols, &r->capcols, r->ncols, sizeof *r->cols)) {
        r->oom = 1;
        return;
    }
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

static void rec_num(hdp_record *r, const char *prefix, const char *name, double v, int kind)
{
    if (r->oom || !grow((void **)&r->nums, &r->capnums, r->nnums, sizeof *r->nums)) {
        r->oom = 1;
        return;
    }
    rec_number *n = &r->nums[r->nnums++];
    snprintf(n->name, sizeof n->name, "%s%s", prefix, name);
    n->value = v;
    n->kind = kind;
}

static void rec_real(hdp_record *r, const char *name, double v) { rec_num(r, "", name, v, HDP_VALUE_REAL); }
static void rec_int(hdp_record *r, const char *name, double v) { rec_num(r, "", name, v, HDP_VALUE_INT); }

static void rec_text_add(hdp_record *r, const char *name, const char *value)
{
    if (r->oom || !grow((void **)&r->texts, &r->captexts, r->ntexts, sizeof *r->texts)) {
        r->oom = 1;
        return;
    }
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

static hdp_record *rec_new(void) { return calloc(1, sizeof(hdp_record)); }

/* hand a finished record out, or fail with HDP_ENOMEM */
static hdp_status rec_finish(hdp_record *r, hdp_record **out, hdp_error *err)
{
    if (!r || r->oom) {
        hdp_record_delete(r);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the results");
    }
    *out = r;
    return HDP_OK;
}

/* ---- the fields of the command line's CSV and JSON ---- */

/* every field of a result table (hdpsgd/fields.h) of obj under prefix, but the JSON-only */
static void rec_fields(hdp_record *r, const hdp_field_table *t, const char *prefix,
                       const void *obj, const void *ctx)
{
    char name[64];
    for (const hdp_field *f = t->fields; f->name; f++) {
        if (f->flags & HDP_FIELD_NO_RECORD)
            continue;
        hdp_field_name(t, f, prefix, name, sizeof name);
        long len;
        const double *data;
        switch (f->kind) {
        case HDP_FIELD_COLUMN:
            data = hdp_field_column(f, obj, &len);
            rec_col(r, "", name, data, len);
            break;
        case HDP_FIELD_TEXT: rec_text_add(r, name, hdp_field_text(f, obj)); break;
        case HDP_FIELD_INT: rec_num(r, "", name, hdp_field_number(f, obj, ctx), HDP_VALUE_INT); break;
        case HDP_FIELD_BOOL: rec_num(r, "", name, hdp_field_number(f, obj, ctx), HDP_VALUE_BOOL); break;
        default: rec_num(r, "", name, hdp_field_number(f, obj, ctx), HDP_VALUE_REAL); break;
        }
    }
}

/* the columns of a table alone (the validator's curves) */
static void rec_columns(hdp_record *r, const hdp_field_table *t, const char *prefix, const void *obj)
{
    char name[64];
    for (const hdp_field *f = t->fields; f->name; f++) {
        if (f->kind != HDP_FIELD_COLUMN)
            continue;
        long len;
        const double *data = hdp_field_column(f, obj, &len);
        rec_col(r, "", hdp_field_name(t, f, prefix, name, sizeof name), data, len);
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
    const hdp_field *f = hdp_field_at(hdp_field_table_find(table), i);
    if (kind)
        *kind = f ? (int)f->kind : -1;
    if (help)
        *help = f ? f->help : NULL;
    return f ? f->name : NULL;
}

/* ---- progress and cancellation ---- */

typedef struct {
    volatile int *cancel;
    hdp_progress_fn progress;
    void *user;
} relay;

/* the Monte Carlo's reports (runs, and "sim steps"/"sde steps" from within them) as they
 * come; a nonzero return also raises the caller's cancel flag */
static int mc_progress(const char *what, long done, long total, double value, void *user)
{
    relay *p = user;
    if (p->progress(what, done, total, value, p->user))
        *p->cancel = 1;
    return 0;
}

/* the model's Monte Carlo options, with the caller's threads, and its cancel flag and
 * progress callback through p */
static void mc_options(const hdp_model *m, int threads, relay *p, hdp_mc_options *opt)
{
    hdp_mc_options_from_model(m, opt);
    opt->threads = threads;
    opt->cancel = p->cancel;
    if (p->progress) {
        opt->progress = mc_progress;
        opt->progress_user = p;
    }
}

static void design_progress(const hdp_design_progress *pr, void *user)
{
    relay *p = user;
    if (p->progress(hdp_design_family_name(pr->family), pr->ode_solves, -1, pr->best_risk, p->user))
        *p->cancel = 1;
}

/* ---- the jobs ---- */

hdp_status hdp_handle_ode(const hdp_model *m, hdp_record **out, hdp_error *err)
{
    return hdp_handle_ode_run(m, NULL, NULL, NULL, out, err);
}

hdp_status hdp_handle_ode_run(const hdp_model *m, volatile int *cancel, hdp_progress_fn progress,
                              void *user, hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    HDP_REQUIRE(err, m);
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
    hdp_record *r = rec_new();
    if (r) {
        rec_fields(r, &hdp_ode_fields, "", &o, m);
        rec_fields(r, &hdp_model_fields, "", m, NULL);
        rec_text_add(r, "model", m->source);
        rec_text_add(r, "version", HDPSGD_VERSION_FULL);
    }
    hdp_ode_result_free(&o);
    return rec_finish(r, out, err);
}

hdp_status hdp_handle_mc(const hdp_model *m, const char *method, int threads, int keep_runs,
                         volatile int *cancel, hdp_progress_fn progress, void *user,
                         hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, method);
    int sde = !strcmp(method, "sde");
    if (!sde && strcmp(method, "sim"))
        return hdp_fail(err, HDP_EINPUT, "unknown method '%s': expected sim or sde", method);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    volatile int own = 0;
    relay p = {cancel ? cancel : &own, progress, user};
    hdp_mc_options opt;
    mc_options(m, threads, &p, &opt);
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
    hdp_record *r = rec_new();
    if (r) {
        rec_fields(r, &hdp_mc_fields, "", &s, m);
        if (finals)
            rec_col(r, "", "final_risks", finals, s.runs);
        if (!sde) /* docs/theory.md §6.1: the SDE draws no rows */
            rec_fields(r, &hdp_mc_rows_fields, "", &s, m);
        rec_fields(r, &hdp_model_fields, "", m, NULL);
        rec_fields(r, &hdp_mc_run_fields, "", &s, m);
        char seed[32];
        snprintf(seed, sizeof seed, "%llu", opt.seed);
        rec_text_add(r, "command", sde ? "sde" : "sim");
        rec_text_add(r, "seed", seed);
        rec_text_add(r, "model", m->source);
        rec_text_add(r, "version", HDPSGD_VERSION_FULL);
    }
    hdp_mc_result_free(&s);
    free(finals);
    return rec_finish(r, out, err);
}

hdp_status hdp_handle_validate(const hdp_model *m, int threads, int with_sde, volatile int *cancel,
                               hdp_progress_fn progress, void *user, hdp_record **out,
                               hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    HDP_REQUIRE(err, m);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    volatile int own = 0;
    relay p = {cancel ? cancel : &own, progress, user};
    hdp_mc_options opt;
    mc_options(m, threads, &p, &opt);
    hdp_validate_result v;
    hdp_status st = hdp_validate_run(m, &opt, with_sde, &v, err);
    if (st != HDP_OK) {
        hdp_validate_free(&v);
        return st;
    }
    hdp_record *r = rec_new();
    if (r) {
        rec_fields(r, &hdp_validate_side_fields, "", &v.sim_side, m); /* pass: sim_pass */
        if (v.with_sde)
            rec_fields(r, &hdp_validate_side_fields, "sde_", &v.sde_side, m);
        rec_fields(r, &hdp_validate_fields, "", &v, m);
        if (v.with_sde)
            rec_fields(r, &hdp_validate_sde_fields, "", &v, m);
        rec_fields(r, &hdp_mc_rows_fields, "", &v.sim, m);
        rec_fields(r, &hdp_model_fields, "", m, NULL);
        rec_col(r, "", "t", v.ode.t, v.ode.points);
        /* the curves: ode.risk, sim.mean, ... (as the files PREFIX.ode.csv, PREFIX.sim.csv;
         * sde_clipped_fraction is the SDE side's number) */
        rec_columns(r, &hdp_ode_fields, "ode.", &v.ode);
        rec_columns(r, &hdp_mc_fields, "sim.", &v.sim);
        if (v.with_sde)
            rec_columns(r, &hdp_mc_fields, "sde.", &v.sde);
        rec_text_add(r, "model", m->source);
    }
    hdp_validate_free(&v);
    return rec_finish(r, out, err);
}

/* the text "table": the best schedule as the file `schedule --optimize -o` writes */
static void rec_table_text(hdp_record *r, const hdp_model *m, const hdp_design_result *b)
{
    char *table = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&table, &size);
    if (f) {
        hdp_design_write_table(f, m, b, NULL);
        if (fclose(f) == 0 && table)
            rec_text_add(r, "table", table);
        else
            r->oom = 1;
    } else {
        r->oom = 1;
    }
    free(table);
}

static void design_numbers(hdp_record *r, const char *prefix, const hdp_design_result *d)
{
    rec_num(r, prefix, "final_risk", d->final_risk, HDP_VALUE_REAL);
    rec_num(r, prefix, "table_final_risk", d->table_final_risk, HDP_VALUE_REAL);
    rec_num(r, prefix, "search_risk", d->search_risk, HDP_VALUE_REAL);
    rec_num(r, prefix, "eta0", d->eta0, HDP_VALUE_REAL);
    rec_num(r, prefix, "eta1", d->eta1, HDP_VALUE_REAL);
    if (d->family == HDP_FAMILY_OPTIMAL) {
        rec_num(r, prefix, "c1", d->c1, HDP_VALUE_REAL);
        rec_num(r, prefix, "a", d->a, HDP_VALUE_REAL);
        rec_num(r, prefix, "c2", d->c2, HDP_VALUE_REAL);
        rec_num(r, prefix, "c3", d->c3, HDP_VALUE_REAL);
    }
    if (d->family == HDP_FAMILY_PL)
        rec_num(r, prefix, "knots", d->knots, HDP_VALUE_INT);
    rec_num(r, prefix, "c", d->c, HDP_VALUE_REAL);
    rec_num(r, prefix, "ode_solves", (double)d->ode_solves, HDP_VALUE_INT);
    rec_num(r, prefix, "seconds", d->seconds, HDP_VALUE_REAL);
}

hdp_status hdp_handle_design(const hdp_model *m, const char *families, int knots, int tune_clip,
                             volatile int *cancel, hdp_progress_fn progress, void *user,
                             hdp_record **out, hdp_error *err)
{
    return hdp_handle_design_refine(m, families, knots, tune_clip, 0, 1e-5, cancel, progress, user,
                                    out, err);
}

hdp_status hdp_handle_design_refine(const hdp_model *m, const char *families, int knots,
                                    int tune_clip, int refine, double refine_tol,
                                    volatile int *cancel, hdp_progress_fn progress, void *user,
                                    hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, families);
    int want[HDP_FAMILY_COUNT];
    hdp_status st = hdp_design_families_parse(families, want, err);
    if (st != HDP_OK)
        return st;
    if (knots < 2 || knots > HDP_DESIGN_MAX_KNOTS)
        return hdp_fail(err, HDP_EINPUT, "knots = %d: the pl family needs 2 to %d knots", knots,
                        HDP_DESIGN_MAX_KNOTS);
    volatile int own = 0;
    relay p = {cancel ? cancel : &own, progress, user};
    hdp_design_options opt;
    hdp_design_options_init(&opt);
    opt.knots = knots;
    opt.tune_clip = tune_clip != 0;
    opt.refine = refine != 0;
    if (refine) { /* as the command line: pl alone asked for, the others compared with it */
        if (!(refine_tol > 0) || !isfinite(refine_tol))
            return hdp_fail(err, HDP_EINPUT, "refine_tol = %g: expected a positive number",
                            refine_tol);
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (want[f] != (f == HDP_FAMILY_PL))
                return hdp_fail(err, HDP_EINPUT, "refine: refines the pl family only (family "
                                "pl; the closed-form families are then compared with it)");
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            want[f] = 1;
    }
    opt.refine_tol = refine_tol;
    opt.cancel = p.cancel;
    if (progress) {
        opt.progress = design_progress;
        opt.progress_user = &p;
    }
    hdp_design_set d;
    st = hdp_design_set_run(m, want, &opt, &d, err);
    if (st != HDP_OK) {
        hdp_design_set_free(&d);
        return st;
    }
    hdp_record *r = rec_new();
    if (r) {
        const hdp_design_result *b = &d.res[d.best];
        for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
            if (!d.done[f])
                continue;
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%s_", hdp_design_family_key(f));
            design_numbers(r, prefix, &d.res[f]);
            rec_col(r, prefix, "t", d.res[f].table_t, d.res[f].table_len);
            rec_col(r, prefix, "eta", d.res[f].table_eta, d.res[f].table_len);
        }
        design_numbers(r, "", b);
        rec_col(r, "", "t", b->table_t, b->table_len);
        rec_col(r, "", "eta", b->table_eta, b->table_len);
        if (b->family == HDP_FAMILY_PL) {
            rec_col(r, "", "knot_t", b->knot_t, b->knots);
            rec_col(r, "", "knot_eta", b->knot_eta, b->knots);
        }
        double delta = m->delta;
        rec_real(r, "best_final_risk", b->final_risk);
        rec_real(r, "best_c", b->c);
        rec_int(r, "table_knots", (double)b->table_len);
        rec_real(r, "rho", m->rho);
        rec_real(r, "epsilon", hdp_zcdp_epsilon_cks(0.5 * m->rho * m->rho, delta));
        rec_real(r, "epsilon_cks", hdp_zcdp_epsilon_cks(0.5 * m->rho * m->rho, delta));
        rec_real(r, "delta", delta);
        rec_int(r, "total_ode_solves", (double)d.solves);
        rec_real(r, "gamma", m->gamma);
        rec_int(r, "n", (double)m->n);
        rec_int(r, "d", (double)m->d);
        rec_table_text(r, m, b);
        if (b->levels > 0) { /* refine: the levels, coarse to fine, as the JSON names them */
            rec_int(r, "refine_levels", b->levels);
            for (int l = 0; l < b->levels; l++) {
                char k[32];
                snprintf(k, sizeof k, "refine_knots_%d", l);
                rec_int(r, k, b->level_knots[l]);
                snprintf(k, sizeof k, "refine_risk_%d", l);
                rec_real(r, k, b->level_risk[l]);
            }
        }
        rec_text_add(r, "best_family", hdp_design_family_column(d.best));
        rec_text_add(r, "family", hdp_design_family_column(d.best));
        rec_text_add(r, "model", m->source);
    }
    hdp_design_set_free(&d);
    return rec_finish(r, out, err);
}

hdp_status hdp_handle_rates(const hdp_model *m, double lo, double hi, long count,
                            const char *families, int tune_clip, volatile int *cancel,
                            hdp_progress_fn progress, void *user, hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    HDP_REQUIRE(err, m);
    int want[HDP_FAMILY_COUNT];
    hdp_status st = hdp_rates_families(families, want, err);
    if (st != HDP_OK)
        return st;
    if (!(lo > 0 && lo < hi && hi < 1) || count < 2 || count > HDP_RATES_MAX_GAMMAS)
        return hdp_fail(err, HDP_EINPUT, "gammas = (%g, %g, %ld): expected 0 < lo < hi < 1 and "
                        "2 <= count <= %d", lo, hi, count, HDP_RATES_MAX_GAMMAS);
    hdp_model *models = calloc((size_t)count, sizeof *models);
    if (!models)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld models", count);
    if ((st = hdp_rates_models(m, lo, hi, count, models, err)) != HDP_OK) {
        free(models);
        return st;
    }
    volatile int own = 0;
    relay p = {cancel ? cancel : &own, progress, user};
    hdp_design_options opt;
    hdp_design_options_init(&opt);
    opt.tune_clip = tune_clip != 0;
    opt.cancel = p.cancel;
    if (progress) {
        opt.progress = design_progress;
        opt.progress_user = &p;
    }
    hdp_rates_result res;
    st = hdp_rates_run(models, count, want, &opt, NULL, NULL, &res, err);
    hdp_record *r = st == HDP_OK ? rec_new() : NULL;
    if (r) {
        double *col = malloc(sizeof(double) * (size_t)count);
        r->oom |= !col;
        for (long i = 0; col && i < count; i++)
            col[i] = models[i].gamma;
        rec_col(r, "", "gamma", col, count);
        for (long i = 0; col && i < count; i++)
            col[i] = (double)models[i].n;
        rec_col(r, "", "n", col, count);
        for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
            if (!want[f])
                continue;
            char k[48]; /* family keys are short: "linear_noise_theory_slope" */
            for (long i = 0; col && i < count; i++)
                col[i] = res.des[i].res[f].final_risk;
            snprintf(k, sizeof k, "%s_final_risk", hdp_design_family_key(f));
            rec_col(r, "", k, col, count);
            snprintf(k, sizeof k, "%s_slope", hdp_design_family_key(f));
            rec_real(r, k, res.slope[f]);
            snprintf(k, sizeof k, "%s_theory_slope", hdp_design_family_key(f));
            rec_real(r, k, res.theory_slope[f]);
        }
        free(col);
        rec_real(r, "decade_lo", models[0].gamma);
        rec_real(r, "decade_hi", models[res.dec - 1].gamma);
        rec_int(r, "decade_points", (double)res.dec);
        rec_real(r, "rho", models[0].rho);
        rec_int(r, "d", (double)models[0].d);
        rec_int(r, "ode_solves", (double)res.solves);
        rec_text_add(r, "model", m->source);
    }
    hdp_rates_result_free(&res);
    for (long i = 0; i < count; i++)
        hdp_model_free(&models[i]);
    free(models);
    return st == HDP_OK ? rec_finish(r, out, err) : st;
}

/* the accountant walks every step: the command line's limit */
#define ACCOUNTANT_MAX_N 100000000L

hdp_status hdp_handle_accountant(const hdp_model *m, hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    HDP_REQUIRE(err, m);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (m->n > ACCOUNTANT_MAX_N)
        return hdp_fail(err, HDP_EINPUT,
                        "the accountant walks every step: n = %ld is above %ld (data.n)", m->n,
                        ACCOUNTANT_MAX_N);
    double rho = m->rho, rho_z = 0.5 * rho * rho, delta = m->delta;
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    double acc = hdp_privacy_accountant_schedule(&s, m->n);
    int acc_ok = (isinf(rho) && isinf(acc)) || fabs(acc - rho) <= 1e-9 * rho;
    hdp_spectrum spec; /* the accountant's precondition, docs/theory.md §6.1 */
    hdp_nonexpansive ne;
    hdp_status st = hdp_spectrum_build(m, &spec, err);
    if (st == HDP_OK)
        st = hdp_nonexpansive_eval(m, spec.lambda, spec.d, &ne, err);
    hdp_spectrum_free(&spec);
    if (st != HDP_OK)
        return st;
    hdp_record *r = rec_new();
    if (r) {
        hdp_privacy_summary ps = {rho,
                                  rho_z,
                                  delta,
                                  hdp_zcdp_epsilon_bs(rho_z, delta),
                                  hdp_zcdp_epsilon_cks(rho_z, delta),
                                  acc,
                                  acc_ok,
                                  m->n,
                                  ""};
        snprintf(ps.schedule, sizeof ps.schedule, "%s", hdp_sched_name(m->sched));
        rec_fields(r, &hdp_privacy_fields, "", &ps, NULL);
        rec_fields(r, &hdp_nonexpansive_fields, "", &ne, &delta);
        rec_text_add(r, "model", m->source);
    }
    return rec_finish(r, out, err);
}

static hdp_status check_delta(double delta, hdp_error *err)
{
    if (!(delta > 0 && delta < 1))
        return hdp_fail(err, HDP_EINPUT, "delta = %g: expected a number in (0, 1)", delta);
    return HDP_OK;
}

hdp_status hdp_handle_epsilon(double rho, double delta, double *epsilon, hdp_error *err)
{
    HDP_REQUIRE(err, epsilon);
    *epsilon = NAN;
    if (!(rho > 0))
        return hdp_fail(err, HDP_EINPUT, "rho = %g: expected a number > 0 or inf", rho);
    if (check_delta(delta, err) != HDP_OK)
        return HDP_EINPUT;
    *epsilon = hdp_zcdp_epsilon_cks(0.5 * rho * rho, delta);
    return HDP_OK;
}

hdp_status hdp_handle_rho_for(double epsilon, double delta, double *rho, hdp_error *err)
{
    HDP_REQUIRE(err, rho);
    *rho = NAN;
    if (!(epsilon > 0))
        return hdp_fail(err, HDP_EINPUT, "epsilon = %g: expected a number > 0 or inf", epsilon);
    if (check_delta(delta, err) != HDP_OK)
        return HDP_EINPUT;
    if (isinf(epsilon)) {
        *rho = INFINITY;
        return HDP_OK;
    }
    double rho_z;
    hdp_status st = hdp_zcdp_from_epsilon(epsilon, delta, &rho_z, err);
    if (st != HDP_OK)
        return st;
    *rho = sqrt(2.0 * rho_z);
    return HDP_OK;
}

/* ---- DP-SGD with Poisson sampling (hdpsgd/accountant.h) ---- */

hdp_status hdp_handle_poisson_accountant(double sample_rate, double noise_multiplier, double target_epsilon,
                                         long long steps, double delta, const char *accountant,
                                         hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    HDP_REQUIRE(err, accountant);
    hdp_accountant_kind kind;
    if (!strcmp(accountant, "pld"))
        kind = HDP_ACCOUNTANT_PLD;
    else if (!strcmp(accountant, "rdp"))
        kind = HDP_ACCOUNTANT_RDP;
    else
        return hdp_fail(err, HDP_EINPUT, "accountant '%s': expected pld or rdp", accountant);
    if ((noise_multiplier > 0) == (target_epsilon > 0))
        return hdp_fail(err, HDP_EINPUT, "give exactly one of a noise multiplier > 0 and a target epsilon > 0");
    hdp_accountant_query x = {sample_rate, noise_multiplier, steps, delta, 0};
    hdp_status st;
    if (target_epsilon > 0 && (st = hdp_accountant_calibrate(&x, kind, target_epsilon, &x.noise_multiplier, err)) != HDP_OK)
        return st;
    hdp_accountant_result res;
    if ((st = hdp_accountant_epsilon(&x, &res, err)) != HDP_OK)
        return st;
    hdp_record *r = rec_new();
    if (r) {
        rec_real(r, "epsilon", kind == HDP_ACCOUNTANT_RDP ? res.epsilon_rdp : res.epsilon_pld);
        rec_fields(r, &hdp_accountant_fields, "", &res, NULL);
        rec_fields(r, &hdp_accountant_query_fields, "", &x, NULL);
        if (target_epsilon > 0)
            rec_real(r, "target_epsilon", target_epsilon);
        rec_text_add(r, "accountant", hdp_accountant_name(kind));
    }
    return rec_finish(r, out, err);
}
