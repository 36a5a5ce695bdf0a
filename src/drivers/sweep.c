/*
 * sweep.c — the sweep driver (hdpsgd/sweep.h): the point runners of the commands a sweep
 * can run, their results.csv columns and row fields, and the run of one point. The
 * command line (src/cli/cmd_sweep.c) keeps the sweep file, the points' folders and files,
 * --resume and Open MPI.
 */
#include "hdpsgd/fields.h"
#include "hdpsgd/sweep.h"
#include "core/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hdpsgd/privacy.h"

const char *hdp_sweep_num(char *buf, size_t size, double v)
{
    if (!buf || size == 0)
        return "";
    if (isfinite(v)) snprintf(buf, size, "%.10g", v);
    else snprintf(buf, size, "%s", isnan(v) ? "" : (v > 0 ? "inf" : "-inf"));
    return buf;
}

/* append to buf (always terminated; silently cut at size) */
static void add(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strnlen(buf, size);
    if (len + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* the columns of a result table (hdpsgd/fields.h) that a sweep's results.csv holds: names
 * prefix + sweep; values (ok = 0: empty, but for HDP_FIELD_SWEEP_ALWAYS) with hdp_sweep_num,
 * %ld, true/false, the text */
static void table_columns(const hdp_field_table *t, const char *prefix, char *buf, size_t size)
{
    for (const hdp_field *f = t->fields; f->name; f++)
        if (f->sweep)
            add(buf, size, ",%s%s", prefix, f->sweep);
}

static void table_row(const hdp_field_table *t, const void *obj, int ok_point, char *buf,
                      size_t size)
{
    char num[64];
    for (const hdp_field *f = t->fields; f->name; f++) {
        if (!f->sweep)
            continue;
        int ok = ok_point || (f->flags & HDP_FIELD_SWEEP_ALWAYS);
        if (f->kind == HDP_FIELD_TEXT)
            add(buf, size, ",%s", ok ? hdp_field_text(f, obj) : "");
        else if (f->kind == HDP_FIELD_INT)
            ok ? add(buf, size, ",%ld", hdp_field_long(f, obj, NULL)) : add(buf, size, ",");
        else if (f->kind == HDP_FIELD_BOOL)
            add(buf, size, ",%s", !ok ? "" : hdp_field_number(f, obj, NULL) != 0 ? "true" : "false");
        else
            add(buf, size, ",%s",
                hdp_sweep_num(num, sizeof num, ok ? hdp_field_number(f, obj, NULL) : NAN));
    }
}

static void design_options(const hdp_sweep_settings *set, hdp_design_options *o)
{
    hdp_design_options_init(o);
    o->knots = (int)set->knots;
    o->tune_clip = set->tune_clip;
    o->cancel = set->cancel;
    o->progress = set->design_progress;
    o->progress_user = set->design_progress_user;
}

/* ---- ode ---- */

static void ode_columns(const hdp_sweep_settings *set, char *buf, size_t size)
{
    (void)set;
    table_columns(&hdp_ode_fields, "ode_", buf, size);
}
static hdp_status ode_run(hdp_sweep_point *p, hdp_error *err)
{
    return hdp_ode_solve(p->m, &p->ode, err);
}
static void ode_fields(const hdp_sweep_point *p, hdp_status st, char *buf, size_t size)
{
    table_row(&hdp_ode_fields, &p->ode, st == HDP_OK, buf, size);
}
static void ode_release(hdp_sweep_point *p) { hdp_ode_result_free(&p->ode); }

const hdp_sweep_runner hdp_sweep_ode = {"ode", ode_columns, ode_run, ode_fields, ode_release, NULL};

/* ---- sim and sde ---- */

static void sim_columns(const hdp_sweep_settings *set, char *buf, size_t size)
{
    (void)set;
    table_columns(&hdp_mc_fields, "sim_", buf, size);
}
static void sde_columns(const hdp_sweep_settings *set, char *buf, size_t size)
{
    (void)set;
    table_columns(&hdp_mc_fields, "sde_", buf, size);
}
static hdp_status sim_run(hdp_sweep_point *p, hdp_error *err)
{
    p->mc_name = "sim";
    return hdp_sim_run(p->m, p->opt, &p->mc, err);
}
static hdp_status sde_run(hdp_sweep_point *p, hdp_error *err)
{
    p->mc_name = "sde";
    return hdp_sde_run(p->m, p->opt, &p->mc, err);
}
static void mc_fields(const hdp_sweep_point *p, hdp_status st, char *buf, size_t size)
{
    hdp_mc_result failed; /* a failed point: no statistics, every run counted as diverged */
    memset(&failed, 0, sizeof failed);
    failed.final_mean = failed.final_stderr = NAN;
    failed.diverged_runs = (long)p->opt->runs;
    table_row(&hdp_mc_fields, st == HDP_OK ? &p->mc : &failed, 1, buf, size);
}
static void mc_release(hdp_sweep_point *p) { hdp_mc_result_free(&p->mc); }

const hdp_sweep_runner hdp_sweep_sim = {"sim", sim_columns, sim_run, mc_fields, mc_release, NULL};
const hdp_sweep_runner hdp_sweep_sde = {"sde", sde_columns, sde_run, mc_fields, mc_release, NULL};

/* ---- validate ---- */

static void validate_columns(const hdp_sweep_settings *set, char *buf, size_t size)
{
    (void)set;
    table_columns(&hdp_validate_fields, "validate_", buf, size);
    table_columns(&hdp_validate_side_fields, "validate_", buf, size);
}
static hdp_status validate_run(hdp_sweep_point *p, hdp_error *err)
{
    return hdp_validate_run(p->m, p->opt, 1, &p->v, err);
}
static void validate_fields(const hdp_sweep_point *p, hdp_status st, char *buf, size_t size)
{
    table_row(&hdp_validate_fields, &p->v, st == HDP_OK, buf, size);
    table_row(&hdp_validate_side_fields, &p->v.sim_side, st == HDP_OK, buf, size); /* the sim side */
}
static void validate_release(hdp_sweep_point *p) { hdp_validate_free(&p->v); }

const hdp_sweep_runner hdp_sweep_validate = {"validate", validate_columns, validate_run,
                                             validate_fields, validate_release, NULL};

/* ---- schedule --optimize ---- */

/* the columns of t for each wanted family, under <command>_<family key>_ */
static void family_columns(const int *want, const char *command, const hdp_field_table *t,
                           char *buf, size_t size)
{
    char prefix[64];
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (want[k]) {
            snprintf(prefix, sizeof prefix, "%s_%s_", command, hdp_design_family_key(k));
            table_columns(t, prefix, buf, size);
        }
}

static void schedule_columns(const hdp_sweep_settings *set, char *buf, size_t size)
{
    family_columns(set->schedule_want, "schedule", &hdp_design_fields, buf, size);
    table_columns(&hdp_design_set_fields, "schedule_", buf, size);
    table_columns(&hdp_design_summary_fields, "schedule_", buf, size);
}
static hdp_status schedule_run(hdp_sweep_point *p, hdp_error *err)
{
    hdp_design_options o;
    design_options(p->set, &o);
    o.refine = p->set->refine;
    if (p->set->refine_tol > 0)
        o.refine_tol = p->set->refine_tol;
    return hdp_design_set_run(p->m, p->set->schedule_want, &o, &p->designs, err);
}
static void schedule_fields(const hdp_sweep_point *p, hdp_status st, char *buf, size_t size)
{
    const hdp_design_set *d = &p->designs;
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (p->set->schedule_want[k])
            table_row(&hdp_design_fields, &d->res[k], st == HDP_OK, buf, size);
    table_row(&hdp_design_set_fields, d, st == HDP_OK, buf, size);
    table_row(&hdp_design_summary_fields, d, st == HDP_OK, buf, size);
}
static void schedule_release(hdp_sweep_point *p) { hdp_design_set_free(&p->designs); }

/* the point's model with the best design's table (schedule.tab's) and clipping constant */
static hdp_status schedule_hand_on(const hdp_sweep_point *p, hdp_model *out, hdp_error *err)
{
    const hdp_design_set *d = &p->designs;
    if (d->best < 0)
        return hdp_fail(err, HDP_ENUMERIC, "sweep schedule: no design to hand on");
    if (p->design_file && strlen(p->design_file) >= HDP_PATH_MAX)
        return hdp_fail(err, HDP_EINPUT, "sweep schedule: the table's name has %zu characters, "
                        "more than the %zu a model's schedule.file holds", strlen(p->design_file),
                        (size_t)HDP_PATH_MAX - 1);
    hdp_status st = hdp_design_model(p->m, &d->res[d->best], 1, out, err);
    if (st == HDP_OK && (st = hdp_model_set_text(&out->sched_file, p->design_file, err)) != HDP_OK)
        hdp_model_free(out);
    return st;
}

const hdp_sweep_runner hdp_sweep_schedule = {"schedule", schedule_columns, schedule_run,
                                             schedule_fields, schedule_release, schedule_hand_on};

/* ---- rates ---- */

static void rates_columns(const hdp_sweep_settings *set, char *buf, size_t size)
{
    family_columns(set->rates_want, "rates", &hdp_rates_slope_fields, buf, size);
    table_columns(&hdp_rates_summary_fields, "rates_", buf, size);
}
static hdp_status rates_run(hdp_sweep_point *p, hdp_error *err)
{
    if (!p->gamma_models || p->gamma_count < 2)
        return hdp_fail(err, HDP_EINPUT, "sweep rates: the models at the gammas are missing");
    hdp_design_options o;
    design_options(p->set, &o);
    return hdp_rates_run(p->gamma_models, p->gamma_count, p->set->rates_want, &o, NULL, NULL,
                         &p->rates, err);
}
static void rates_fields(const hdp_sweep_point *p, hdp_status st, char *buf, size_t size)
{
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (p->set->rates_want[k]) {
            const hdp_rates_family fam = {&p->rates, k};
            table_row(&hdp_rates_slope_fields, &fam, st == HDP_OK, buf, size);
        }
    table_row(&hdp_rates_summary_fields, &p->rates, st == HDP_OK, buf, size);
}
static void rates_release(hdp_sweep_point *p) { hdp_rates_result_free(&p->rates); }

const hdp_sweep_runner hdp_sweep_rates = {"rates", rates_columns, rates_run, rates_fields,
                                          rates_release, NULL};

const hdp_sweep_runner *hdp_sweep_runner_find(const char *name)
{
    static const hdp_sweep_runner *const all[] = {&hdp_sweep_ode, &hdp_sweep_sim, &hdp_sweep_sde,
                                                  &hdp_sweep_validate, &hdp_sweep_schedule,
                                                  &hdp_sweep_rates};
    for (size_t k = 0; name && k < sizeof all / sizeof all[0]; k++)
        if (!strcmp(all[k]->name, name))
            return all[k];
    return NULL;
}

/* ---- a point ---- */

void hdp_sweep_header(const hdp_sweep_runner *const *runners, int count,
                      const hdp_sweep_settings *set, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    buf[0] = '\0';
    add(buf, size, ",d,n,gamma,rho,epsilon_cks,delta");
    for (int k = 0; runners && set && k < count; k++)
        runners[k]->columns(set, buf, size);
    add(buf, size, ",status\n");
}

/* zero the results of p (its inputs kept) */
static void clear_results(hdp_sweep_point *p)
{
    memset(&p->ode, 0, sizeof p->ode);
    memset(&p->mc, 0, sizeof p->mc);
    memset(&p->v, 0, sizeof p->v);
    memset(&p->designs, 0, sizeof p->designs);
    memset(&p->rates, 0, sizeof p->rates);
}

hdp_status hdp_sweep_point_run(const hdp_sweep_runner *const *runners, int count,
                               hdp_sweep_point *p, const char *prefix, hdp_sweep_write_fn write,
                               void *user, hdp_sweep_outcome *out, hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, runners);
    HDP_REQUIRE(err, p);
    HDP_REQUIRE(err, p->m);
    HDP_REQUIRE(err, p->opt);
    HDP_REQUIRE(err, p->set);
    HDP_REQUIRE(err, out);
    const hdp_model *m = p->m;
    char rho[64], eps[64], delta[64];
    hdp_sweep_num(rho, sizeof rho, m->rho);
    hdp_sweep_num(delta, sizeof delta, m->delta);
    hdp_sweep_num(eps, sizeof eps, hdp_zcdp_epsilon_cks(0.5 * m->rho * m->rho, m->delta));
    add(out->row, sizeof out->row, "%s,%ld,%ld,%.10g,%s,%s,%s", prefix ? prefix : "", m->d, m->n,
        m->gamma, rho, eps, delta);
    hdp_model handed; /* the model a runner handed on (schedule's design), owned here */
    int have_handed = 0;
    for (int k = 0; k < count; k++) {
        const hdp_sweep_runner *r = runners[k];
        hdp_error e;
        hdp_error_clear(&e);
        clear_results(p);
        hdp_status st = out->st == HDP_OK ? r->run(p, &e) : out->st;
        if (st == HDP_OK && out->io == HDP_OK && write)
            out->io = write(r, p, user, &out->io_err);
        r->fields(p, st, out->row, sizeof out->row);
        hdp_status hs = HDP_OK; /* its model for the runners after it */
        hdp_model next;
        if (st == HDP_OK && r->hand_on && k + 1 < count &&
            (hs = r->hand_on(p, &next, &e)) == HDP_OK) {
            if (have_handed)
                hdp_model_free(&handed);
            handed = next;
            have_handed = 1;
            p->m = &handed;
        }
        r->release(p);
        clear_results(p);
        if (out->st == HDP_OK && (st != HDP_OK || hs != HDP_OK)) {
            out->st = st != HDP_OK ? st : hs;
            out->err = e;
        }
    }
    p->m = m;
    if (have_handed)
        hdp_model_free(&handed);
    char status[HDP_ERRMSG_MAX + 16] = "ok";
    if (out->st != HDP_OK) {
        /* keep the row one CSV field: no commas or quotes in the message */
        snprintf(status, sizeof status, "failed: %s", out->err.msg);
        for (char *c = status; *c; c++)
            if (*c == ',' || *c == '"' || *c == '\n') *c = ';';
    }
    add(out->row, sizeof out->row, ",%s\n", status);
    return HDP_OK;
}
