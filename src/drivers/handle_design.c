/*
 * handle_design.c — the handle API's schedule design and rates (hdpsgd/handle.h): the
 * designer's results and the rates' grid copied into records with the command line's names.
 * The records and the progress relay are handle.c's (drivers/handle_internal.h).
 */
#define _GNU_SOURCE /* open_memstream */
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
#include "hdpsgd/privacy.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/schedule.h"

static void rec_table_text(hdp_record *r, const hdp_model *m, const hdp_design_result *b)
{
    char *table = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&table, &size);
    if (f) {
        hdp_design_write_table(f, m, b, NULL);
        if (fclose(f) == 0 && table)
            hdp_rec_fields(r, &hdp_design_text_fields, "", table, NULL);
        else
            hdp_rec_oom(r);
    } else {
        hdp_rec_oom(r);
    }
    free(table);
}

/* one family's numbers and its table: its result tables (hdpsgd/fields.h) as the JSON writes
 * them, but eta0 and eta1 for every family, and with the record's only (search_risk, seconds,
 * the table's columns t and eta, pl's knot_t and knot_eta) */
static void design_numbers(hdp_record *r, const char *prefix, const hdp_design_result *d)
{
    hdp_rec_fields(r, &hdp_design_fields, prefix, d, NULL);
    hdp_rec_fields(r, &hdp_design_eta0_fields, prefix, d, NULL);
    if (d->family == HDP_FAMILY_OPTIMAL)
        hdp_rec_fields(r, &hdp_design_inverse_time_fields, prefix, d, NULL);
    if (d->family == HDP_FAMILY_PL)
        hdp_rec_fields(r, &hdp_design_pl_fields, prefix, d, NULL);
    hdp_rec_fields(r, &hdp_design_cost_fields, prefix, d, NULL);
}

/* the record of a design (hdp_handle_design_refine, hdp_handle_design_batch): every family's
 * numbers and tables, the best one's without prefix, the table text (of m, the model designed) */
static void design_record(hdp_record *r, const hdp_model *m, const hdp_design_set *d)
{
    const hdp_design_result *b = &d->res[d->best], *pl = &d->res[HDP_FAMILY_PL];
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s_", hdp_design_family_key(f));
        if (d->done[f])
            design_numbers(r, prefix, &d->res[f]);
    }
    design_numbers(r, "", b); /* the best family's without prefix */
    hdp_rec_fields(r, &hdp_design_set_fields, "", d, m);
    hdp_rec_fields(r, &hdp_design_summary_fields, "", d, m);
    rec_table_text(r, m, b);
    if (d->done[HDP_FAMILY_PL] && pl->levels > 0) { /* refine: the levels, coarse to fine */
        hdp_rec_fields(r, &hdp_design_refine_fields, "", pl, NULL);
        for (long l = 0; l < pl->levels; l++)
            hdp_rec_fields_at(r, &hdp_design_level_fields, "", pl, l);
    }
    hdp_rec_fields(r, &hdp_source_fields, "", m, NULL);
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
    return hdp_handle_design_method(m, families, knots, tune_clip, 0, refine, refine_tol, NULL,
                                    cancel, progress, user, out, err);
}

/* the search method's name (NULL: the command line's default, bfgs) */
static hdp_status parse_method(const char *method, int refine, hdp_design_method *out,
                               hdp_error *err)
{
    int mt = hdp_design_method_parse(method ? method : "bfgs");
    if (mt < 0)
        return hdp_fail(err, HDP_EINPUT, "method = '%s': expected bfgs or simplex", method);
    if (refine && mt != HDP_DESIGN_BFGS)
        return hdp_fail(err, HDP_EINPUT, "refine needs method bfgs");
    *out = (hdp_design_method)mt;
    return HDP_OK;
}

/* what every design entry checks and sets up: the record pointer, the families asked for
 * (want), the knots, and the search's options with the caller's relay p (which must outlive
 * the search: opt points to it) */
static hdp_status design_setup(const hdp_model *m, const char *families, int knots,
                               int tune_clip, hdp_design_method method, volatile int *cancel,
                               hdp_progress_fn progress, void *user, hdp_record **out,
                               int want[HDP_FAMILY_COUNT], hdp_handle_relay *p,
                               hdp_design_options *opt, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, m);
    HDP_REQUIRE(err, families);
    hdp_status st = hdp_design_families_parse(families, want, err);
    if (st != HDP_OK)
        return st;
    if (knots < 2 || knots > HDP_DESIGN_MAX_KNOTS)
        return hdp_fail(err, HDP_EINPUT, "knots = %d: the pl family needs 2 to %d knots", knots,
                        HDP_DESIGN_MAX_KNOTS);
    hdp_handle_relay_init(p, cancel, progress, user);
    hdp_design_options_init(opt);
    opt->knots = knots;
    opt->tune_clip = tune_clip != 0;
    opt->method = method;
    opt->cancel = p->cancel;
    if (progress) {
        opt->progress = hdp_handle_design_progress;
        opt->progress_user = p;
    }
    return HDP_OK;
}

/* the design at the model's batch (the options of design_setup), refined when asked for */
static hdp_status design_refine(const hdp_model *m, int want[HDP_FAMILY_COUNT], int refine,
                                double refine_tol, hdp_design_options opt, hdp_record **out,
                                hdp_error *err)
{
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
    hdp_design_set d;
    hdp_status st = hdp_design_set_run(m, want, &opt, &d, err);
    if (st != HDP_OK) {
        hdp_design_set_free(&d);
        return st;
    }
    hdp_record *r = hdp_rec_new();
    if (r)
        design_record(r, m, &d);
    hdp_design_set_free(&d);
    return hdp_rec_finish(r, out, err);
}

/* the batch design's numbers (`schedule --optimize --tune-batch --json`): the batches, their
 * risks and the best configuration in the accountants' terms (hdp_design_batch_terms) */
static hdp_status batch_record(hdp_record *r, const hdp_design_batch *db, hdp_error *err)
{
    hdp_model dm; /* the best design's model, its schedule as the written table (as the CLI) */
    hdp_status st = hdp_design_model(&db->model, &db->set.res[db->set.best], 1, &dm, err);
    hdp_design_batch_terms_t t;
    if (st == HDP_OK)
        st = hdp_design_batch_terms(&dm, &t, err);
    hdp_model_free(&dm);
    if (st != HDP_OK)
        return st;
    hdp_rec_fields(r, &hdp_design_batch_fields, "", db, NULL);
    hdp_rec_fields(r, &hdp_design_batch_terms_fields, "", &t, NULL);
    return HDP_OK;
}

hdp_status hdp_handle_design_batch(const hdp_model *m, const char *families, int knots,
                                   int tune_clip, volatile int *cancel, hdp_progress_fn progress,
                                   void *user, hdp_record **out, hdp_error *err)
{
    return hdp_handle_design_method(m, families, knots, tune_clip, 1, 0, 1e-5, NULL, cancel,
                                    progress, user, out, err);
}

/* the design at each batch size (the options of design_setup) */
static hdp_status design_batch(const hdp_model *m, const int want[HDP_FAMILY_COUNT],
                               const hdp_design_options *opt, hdp_record **out, hdp_error *err)
{
    hdp_design_batch db;
    hdp_status st = hdp_design_batch_run(m, want, opt, &db, err);
    if (st == HDP_OK && db.best < 0)
        st = hdp_fail(err, HDP_ENUMERIC, "the batch design found no schedule at any batch size");
    hdp_record *r = NULL;
    if (st == HDP_OK && (r = hdp_rec_new()) != NULL) {
        design_record(r, &db.model, &db.set);
        if ((st = batch_record(r, &db, err)) != HDP_OK) {
            hdp_record_delete(r);
            r = NULL;
        }
    }
    hdp_design_batch_free(&db);
    return st == HDP_OK ? hdp_rec_finish(r, out, err) : st;
}

hdp_status hdp_handle_design_method(const hdp_model *m, const char *families, int knots,
                                    int tune_clip, int tune_batch, int refine, double refine_tol,
                                    const char *method, volatile int *cancel,
                                    hdp_progress_fn progress, void *user, hdp_record **out,
                                    hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    hdp_design_method mt = HDP_DESIGN_BFGS;
    hdp_status st = parse_method(method, refine, &mt, err);
    if (st != HDP_OK)
        return st;
    if (tune_batch && refine)
        return hdp_fail(err, HDP_EINPUT, "tune_batch with refine: give one of them");
    int want[HDP_FAMILY_COUNT];
    hdp_handle_relay p; /* the options point to it: it outlives the search */
    hdp_design_options opt;
    if ((st = design_setup(m, families, knots, tune_clip, mt, cancel, progress, user, out, want,
                           &p, &opt, err)) != HDP_OK)
        return st;
    if (tune_batch)
        return design_batch(m, want, &opt, out, err);
    return design_refine(m, want, refine, refine_tol, opt, out, err);
}

hdp_status hdp_handle_rates(const hdp_model *m, double lo, double hi, long count,
                            const char *families, int tune_clip, volatile int *cancel,
                            hdp_progress_fn progress, void *user, hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, m);
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
    hdp_handle_relay p;
    hdp_handle_relay_init(&p, cancel, progress, user);
    hdp_design_options opt;
    hdp_design_options_init(&opt);
    opt.tune_clip = tune_clip != 0;
    opt.cancel = p.cancel;
    if (progress) {
        opt.progress = hdp_handle_design_progress;
        opt.progress_user = &p;
    }
    hdp_rates_result res;
    st = hdp_rates_run(models, count, want, &opt, NULL, NULL, &res, err);
    hdp_record *r = st == HDP_OK ? hdp_rec_new() : NULL;
    if (r) {
        hdp_rec_fields(r, &hdp_rates_fields, "", &res, NULL);
        for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
            if (!want[f])
                continue;
            char pre[48]; /* family keys are short: "linear_noise_" */
            snprintf(pre, sizeof pre, "%s_", hdp_design_family_key(f));
            hdp_rates_family rf = {&res, f};
            hdp_rec_fields(r, &hdp_rates_risk_fields, pre, &rf, NULL);
            hdp_rec_fields(r, &hdp_rates_slope_fields, pre, &rf, NULL);
        }
        hdp_rec_fields(r, &hdp_rates_summary_fields, "", &res, NULL);
        hdp_rec_fields(r, &hdp_source_fields, "", m, NULL);
    }
    hdp_rates_result_free(&res);
    for (long i = 0; i < count; i++)
        hdp_model_free(&models[i]);
    free(models);
    return st == HDP_OK ? hdp_rec_finish(r, out, err) : st;
}
