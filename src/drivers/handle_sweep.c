/*
 * handle_sweep.c — the handle API's sweep point (hdpsgd/handle.h, hdp_handle_sweep_point): the
 * point runners of hdpsgd/sweep.h on one model, with the sweep file's settings, the point's
 * columns and row as `hdpsgd sweep` writes them in results.csv. The loop over the points is
 * the caller's (the Python package's hdpsgd.sweep).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "drivers/handle_internal.h"
#include "hdpsgd/design.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/handle.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/sweep.h"

#define MAX_COMMANDS 16

static int has(const hdp_sweep_runner *const *runners, int count, const hdp_sweep_runner *r)
{
    for (int k = 0; k < count; k++)
        if (runners[k] == r)
            return 1;
    return 0;
}

/* "schedule, sim": the runners in order, each once (HDP_EINPUT naming a bad one) */
static hdp_status parse_commands(const char *list, const hdp_sweep_runner **runners, int *count,
                                 hdp_error *err)
{
    *count = 0;
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        size_t len = strcspn(p, ",");
        size_t end = len;
        while (end > 0 && (p[end - 1] == ' ' || p[end - 1] == '\t')) end--;
        char name[32];
        const hdp_sweep_runner *r = NULL;
        if (end > 0 && end < sizeof name) {
            snprintf(name, sizeof name, "%.*s", (int)end, p);
            r = hdp_sweep_runner_find(name);
        }
        if (!r)
            return hdp_fail(err, HDP_EINPUT, "commands: unknown command '%.*s'; accepted: ode, "
                            "sim, sde, validate, schedule, rates", (int)(end < 64 ? end : 64), p);
        if (has(runners, *count, r))
            return hdp_fail(err, HDP_EINPUT, "commands: '%s' is named twice; name each command "
                            "once", r->name);
        if (*count == MAX_COMMANDS)
            return hdp_fail(err, HDP_EINPUT, "commands: more than %d", MAX_COMMANDS);
        runners[(*count)++] = r;
        p += len;
        if (*p == ',') p++;
    }
    if (*count == 0)
        return hdp_fail(err, HDP_EINPUT, "commands: none given (ode, sim, sde, validate, "
                        "schedule, rates)");
    return HDP_OK;
}

/* the settings of [sweep] (checked as the sweep file's are) */
static hdp_status settings(const char *schedule_families, int knots, int refine, double refine_tol,
                           int tune_clip, const char *rates_families, hdp_sweep_settings *set,
                           hdp_error *err)
{
    *set = (hdp_sweep_settings){.knots = knots, .refine = refine != 0, .refine_tol = refine_tol,
                                .tune_clip = tune_clip != 0};
    hdp_status st = hdp_design_families_parse(schedule_families ? schedule_families : "all",
                                              set->schedule_want, err);
    if (st == HDP_OK)
        st = hdp_rates_families(rates_families, set->rates_want, err);
    if (st != HDP_OK)
        return st;
    if (knots < 2 || knots > HDP_DESIGN_MAX_KNOTS)
        return hdp_fail(err, HDP_EINPUT, "schedule_knots = %d: expected an integer from 2 to %d",
                        knots, HDP_DESIGN_MAX_KNOTS);
    if (!(refine_tol > 0) || !isfinite(refine_tol))
        return hdp_fail(err, HDP_EINPUT, "schedule_refine_tol = %g: expected a positive number",
                        refine_tol);
    if (refine && !set->schedule_want[HDP_FAMILY_PL])
        return hdp_fail(err, HDP_EINPUT, "schedule_refine = true refines the pl family, which "
                        "schedule_families leaves out: add pl to it");
    return HDP_OK;
}

/* the record: columns (the names after point and the axes) and row (the fields), without the
 * leading comma and the newline */
static hdp_status point_record(const hdp_sweep_runner *const *runners, int count,
                               const hdp_sweep_settings *set, const hdp_sweep_outcome *o,
                               hdp_record **out, hdp_error *err)
{
    size_t hsize = sizeof o->row; /* a header is no longer than a row can be */
    char *head = malloc(hsize);
    char *row = malloc(sizeof o->row);
    hdp_record *r = head && row ? hdp_rec_new() : NULL;
    if (r) {
        hdp_sweep_header(runners, count, set, head, hsize);
        snprintf(row, sizeof o->row, "%s", o->row[0] == ',' ? o->row + 1 : o->row);
        head[strcspn(head, "\n")] = '\0';
        row[strcspn(row, "\n")] = '\0';
        hdp_sweep_point_text pt = {head[0] == ',' ? head + 1 : head, row,
                                   o->st == HDP_OK ? "ok" : o->err.msg};
        hdp_rec_fields(r, &hdp_sweep_point_fields, "", &pt, NULL);
    }
    free(head);
    free(row);
    if (!r)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a sweep point's row");
    return hdp_rec_finish(r, out, err);
}

hdp_status hdp_handle_sweep_point(const hdp_model *m, const char *commands,
                                  const char *schedule_families, int knots, int refine,
                                  double refine_tol, int tune_clip, double gamma_lo,
                                  double gamma_hi, long gamma_count, const char *rates_families,
                                  int threads, volatile int *cancel, hdp_progress_fn progress,
                                  void *user, hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, m);
    HDP_REQUIRE(err, commands);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    const hdp_sweep_runner *runners[MAX_COMMANDS];
    int count;
    hdp_sweep_settings set;
    hdp_status st = parse_commands(commands, runners, &count, err);
    if (st == HDP_OK)
        st = settings(schedule_families, knots, refine, refine_tol, tune_clip, rates_families,
                      &set, err);
    if (st != HDP_OK)
        return st;
    hdp_handle_relay p;
    hdp_handle_relay_init(&p, cancel, progress, user);
    set.cancel = p.cancel;
    if (progress) {
        set.design_progress = hdp_handle_design_progress;
        set.design_progress_user = &p;
    }
    hdp_model *models = NULL; /* rates: the model at every gamma of its grid */
    if (has(runners, count, &hdp_sweep_rates)) {
        if (gamma_count < 2 || gamma_count > HDP_RATES_MAX_GAMMAS || !(gamma_lo > 0) ||
            !(gamma_hi > gamma_lo) || !(gamma_hi < 1))
            return hdp_fail(err, HDP_EINPUT, "rates_gammas = (%g, %g, %ld): expected 0 < lo < hi "
                            "< 1 and 2 <= count <= %d (required with rates)", gamma_lo, gamma_hi,
                            gamma_count, HDP_RATES_MAX_GAMMAS);
        if (!(models = calloc((size_t)gamma_count, sizeof *models)))
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld models", gamma_count);
        if ((st = hdp_rates_models(m, gamma_lo, gamma_hi, gamma_count, models, err)) != HDP_OK) {
            free(models);
            return st;
        }
        set.gamma_lo = gamma_lo;
        set.gamma_hi = gamma_hi;
        set.gamma_count = gamma_count;
    }
    hdp_mc_options opt;
    if ((st = hdp_handle_mc_begin(m, threads, cancel, progress, user, &p, &opt, err)) != HDP_OK) {
        free(models);
        return st;
    }
    hdp_sweep_point pt = {.m = m, .opt = &opt, .set = &set, .gamma_models = models,
                          .gamma_count = models ? gamma_count : 0};
    hdp_sweep_outcome *o = malloc(sizeof *o); /* 12 KB: not on the caller's thread's stack */
    if (!o)
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for a sweep point");
    else
        st = hdp_sweep_point_run(runners, count, &pt, "", NULL, NULL, o, err);
    if (st == HDP_OK && o->st == HDP_ECANCELLED)
        st = hdp_fail(err, HDP_ECANCELLED, "%s", o->err.msg);
    if (st == HDP_OK)
        st = point_record(runners, count, &set, o, out, err);
    free(o);
    for (long i = 0; models && i < gamma_count; i++)
        hdp_model_free(&models[i]);
    free(models);
    return st;
}
