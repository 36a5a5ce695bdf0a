/*
 * fields_design.c — the result tables of the schedule design (hdpsgd/design.h) in
 * hdpsgd/fields.h: one family's design (hdp_design_result, under the prefix
 * hdp_design_family_key(f) + "_") and the design over the families (hdp_design_set, context
 * the model). `schedule --optimize --json` and the sweep's schedule_* columns are written from
 * them.
 */
#include <math.h>
#include <stddef.h>

#include "drivers/fields_internal.h"
#include "hdpsgd/design.h"
#include "hdpsgd/privacy.h"

/* ---- one family (hdp_design_result): the fields every family has, then its parameters ---- */

static const hdp_field design_fields[] = {
    {.name = "final_risk", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_design_result, final_risk),
     .help = "predicted final-iterate excess risk of the optimised schedule at the model's [ode] "
             "settings",
     .sweep = "final_risk"},
    REAL(hdp_design_result, table_final_risk,
         "the same of the schedule written as a table (schedule.kind = table)"),
    {.name = "search_risk", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_design_result, search_risk),
     .flags = HDP_FIELD_NO_JSON, .help = "the best final risk at the search's settings"},
    END,
};
const hdp_field_table hdp_design_fields = {
    "design", "one family's optimised schedule (schedule --optimize; prefix: the family, "
              "output_, linear_noise_, inverse_time_, pl_)",
    design_fields, NULL};

static const hdp_field design_eta0_fields[] = {
    REAL(hdp_design_result, eta0, "output, linear-noise: the schedule's eta0 = eta~(0)"),
    END,
};
const hdp_field_table hdp_design_eta0_fields = {
    "design_eta0", "the parameter of the families output and linear-noise", design_eta0_fields,
    NULL};

static const hdp_field design_inverse_time_fields[] = {
    REAL(hdp_design_result, c1, "inverse-time eta~ = c1/(t + a): c1"),
    REAL(hdp_design_result, a, "inverse-time: a"),
    REAL(hdp_design_result, c2, "inverse-time as a model key: c2 = a/gamma"),
    REAL(hdp_design_result, c3, "inverse-time as a model key: c3 = a rho/gamma (0: rho = inf)"),
    END,
};
const hdp_field_table hdp_design_inverse_time_fields = {
    "design_inverse_time", "the parameters of the family inverse-time", design_inverse_time_fields,
    NULL};

/* an int member (INT fields are long) */
static double get_knots(const void *obj, const void *ctx)
{
    (void)ctx;
    return ((const hdp_design_result *)obj)->knots;
}

static const hdp_field design_pl_fields[] = {
    GET("knots", HDP_FIELD_INT, get_knots, "pl: the knots K of the piecewise-linear eta~"),
    END,
};
const hdp_field_table hdp_design_pl_fields = {
    "design_pl", "the size of the family pl (its knot values: the array <pl_>eta)",
    design_pl_fields, NULL};

static const hdp_field design_cost_fields[] = {
    REAL(hdp_design_result, c, "the clipping constant c (the model's unless tuned)"),
    {.name = "ode_solves", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_design_result, ode_solves),
     .help = "ODE solves of this family's search (a solve with its gradient counts one)"},
    {.name = "seconds", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_design_result, seconds),
     .flags = HDP_FIELD_NO_JSON, .help = "wall time of this family's search, seconds"},
    END,
};
const hdp_field_table hdp_design_cost_fields = {
    "design_cost", "one family's clipping constant and search cost", design_cost_fields, NULL};

/* ---- over the families (hdp_design_set; context the model) ---- */

static const hdp_design_result *best(const void *obj)
{
    const hdp_design_set *d = obj;
    return d->best >= 0 && d->best < HDP_FAMILY_COUNT ? &d->res[d->best] : NULL;
}

static double get_converged(const void *obj, const void *ctx)
{
    (void)ctx;
    return !((const hdp_design_set *)obj)->unconverged;
}

static const char *get_best_family(const void *obj, const void *ctx)
{
    (void)ctx;
    return hdp_design_family_column(((const hdp_design_set *)obj)->best);
}

static double get_best_final_risk(const void *obj, const void *ctx)
{
    (void)ctx;
    return best(obj) ? best(obj)->final_risk : NAN;
}

static double get_best_c(const void *obj, const void *ctx)
{
    (void)ctx;
    return best(obj) ? best(obj)->c : NAN;
}

static const hdp_field design_set_fields[] = {
    GET("converged", HDP_FIELD_BOOL, get_converged,
        "false: the search was stopped and the results are the best found before"),
    {.name = "best_family", .kind = HDP_FIELD_TEXT, .text = get_best_family,
     .help = "the family of lowest final risk: output, linear-noise, inverse-time or pl",
     .sweep = "best_family"},
    {.name = "best_final_risk", .kind = HDP_FIELD_REAL, .get = get_best_final_risk,
     .help = "its final risk", .sweep = "best_final_risk"},
    {.name = "best_c", .kind = HDP_FIELD_REAL, .get = get_best_c,
     .help = "its clipping constant c", .sweep = "best_c"},
    END,
};
const hdp_field_table hdp_design_set_fields = {
    "design_set", "the best of the families designed (schedule --optimize)", design_set_fields,
    NULL};

static double get_table_final_risk(const void *obj, const void *ctx)
{
    (void)ctx;
    return best(obj) ? best(obj)->table_final_risk : NAN;
}

static double get_table_knots(const void *obj, const void *ctx)
{
    (void)ctx;
    return best(obj) ? (double)best(obj)->table_len : 0;
}

static double get_rho(const void *obj, const void *ctx)
{
    (void)obj;
    return ((const hdp_model *)ctx)->rho;
}

static double get_epsilon(const void *obj, const void *ctx)
{
    (void)obj;
    const hdp_model *m = ctx;
    return hdp_zcdp_epsilon_cks(0.5 * m->rho * m->rho, m->delta);
}

static double get_delta(const void *obj, const void *ctx)
{
    (void)obj;
    return ((const hdp_model *)ctx)->delta;
}

static double get_solves_per_second(const void *obj, const void *ctx)
{
    (void)ctx;
    const hdp_design_set *d = obj;
    return d->seconds > 0 ? (double)d->solves / d->seconds : NAN;
}

static double get_gamma(const void *obj, const void *ctx)
{
    (void)obj;
    return ((const hdp_model *)ctx)->gamma;
}

static double get_n(const void *obj, const void *ctx)
{
    (void)obj;
    return (double)((const hdp_model *)ctx)->n;
}

static double get_d(const void *obj, const void *ctx)
{
    (void)obj;
    return (double)((const hdp_model *)ctx)->d;
}

static const hdp_field design_summary_fields[] = {
    {.name = "table_final_risk", .kind = HDP_FIELD_REAL, .get = get_table_final_risk,
     .help = "the best family's final risk as the written table", .sweep = "table_final_risk"},
    GET("table_knots", HDP_FIELD_INT, get_table_knots, "knots of the written table"),
    GET("rho", HDP_FIELD_REAL, get_rho, "the model's rho, kept by every family ((rho^2/2)-zCDP)"),
    GET("epsilon", HDP_FIELD_REAL, get_epsilon, "epsilon of (rho^2/2)-zCDP at delta (CKS)"),
    GET("epsilon_cks", HDP_FIELD_REAL, get_epsilon, "the same (its conversion named)"),
    GET("delta", HDP_FIELD_REAL, get_delta, "the model's delta"),
    {.name = "ode_solves", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_design_set, solves),
     .flags = HDP_FIELD_SWEEP_ALWAYS, .help = "ODE solves of all the searches", .sweep = "ode_solves"},
    GET("ode_solves_per_second", HDP_FIELD_REAL, get_solves_per_second,
        "ODE solves per second of wall time of the searches"),
    GET("gamma", HDP_FIELD_REAL, get_gamma, "the model's gamma"),
    GET("n", HDP_FIELD_INT, get_n, "the model's n (samples, one pass)"),
    GET("d", HDP_FIELD_INT, get_d, "the model's dimension d"),
    END,
};
const hdp_field_table hdp_design_summary_fields = {
    "design_summary", "the written table, the privacy level and the cost of the design (context: "
                      "the model)",
    design_summary_fields, NULL};
