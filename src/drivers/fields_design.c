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

/* the schedule as the table written (a column of the record, not in the JSON) */
#define TABLE_COL(nm, m, h)                                                                    \
    {.name = nm, .kind = HDP_FIELD_COLUMN, .offset = offsetof(hdp_design_result, m),           \
     .length = offsetof(hdp_design_result, table_len), .format = "%.17g", .help = h}

TABLE(hdp_design_fields, "design", NULL,
      "one family's optimised schedule (schedule --optimize; prefix: the family, output_, "
      "linear_noise_, inverse_time_, pl_)",
    {.name = "final_risk", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_design_result, final_risk),
     .help = "predicted final-iterate excess risk of the optimised schedule at the model's [ode] "
             "settings",
     .sweep = "final_risk"},
    REAL(hdp_design_result, table_final_risk,
         "the same of the schedule written as a table (schedule.kind = table)"),
    {.name = "search_risk", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_design_result, search_risk),
     .flags = HDP_FIELD_NO_JSON, .help = "the best final risk at the search's settings"},
    TABLE_COL("t", table_t, "the written table's knots t (the record's only)"),
    TABLE_COL("eta", table_eta, "the written table's eta~ at t (the record's only)"));

TABLE(hdp_design_eta0_fields, "design_eta0", NULL,
      "the parameter of the families output and linear-noise (the record: eta~(0) and eta~(1) of "
      "every family)",
    REAL(hdp_design_result, eta0, "output, linear-noise: the schedule's eta0 = eta~(0)"),
    {.name = "eta1", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_design_result, eta1),
     .flags = HDP_FIELD_NO_JSON, .help = "eta~(1) (0 for linear-noise)"});

TABLE(hdp_design_inverse_time_fields, "design_inverse_time", NULL,
      "the parameters of the family inverse-time",
    REAL(hdp_design_result, c1, "inverse-time eta~ = c1/(t + a): c1"),
    REAL(hdp_design_result, a, "inverse-time: a"),
    REAL(hdp_design_result, c2, "inverse-time as a model key: c2 = a/gamma"),
    REAL(hdp_design_result, c3, "inverse-time as a model key: c3 = a rho/gamma (0: rho = inf)"));

/* an int member (INT fields are long) */
GETTER(get_knots, ((const hdp_design_result *)obj)->knots)

static long count_knots(const void *obj) { return ((const hdp_design_result *)obj)->knots; }

GETTER(get_knot_eta, ((const hdp_design_result *)obj)->knot_eta[*(const long *)ctx])
GETTER(get_knot_t, ((const hdp_design_result *)obj)->knot_t[*(const long *)ctx])

TABLE(hdp_design_pl_fields, "design_pl", NULL,
      "the family pl: its knots and eta~ there (the record names the list eta knot_eta: its eta "
      "is the written table's)",
    GET("knots", HDP_FIELD_INT, get_knots, "pl: the knots K of the piecewise-linear eta~"),
    {.name = "eta", .kind = HDP_FIELD_REAL, .get = get_knot_eta, .count = count_knots,
     .flags = HDP_FIELD_LIST, .record = "knot_eta", .help = "pl: eta~ at the knots (K)"},
    {.name = "knot_t", .kind = HDP_FIELD_REAL, .get = get_knot_t, .count = count_knots,
     .flags = HDP_FIELD_LIST | HDP_FIELD_NO_JSON, .help = "pl: the knots t_i = i/(K-1) (K)"});

/* ---- pl's refine levels (hdp_design_result of pl; a level's table: context the level) ---- */

GETTER(get_levels, ((const hdp_design_result *)obj)->levels)

TABLE(hdp_design_refine_fields, "design_refine", NULL,
      "the refine levels of the family pl (schedule --optimize --refine)",
    GET("refine_levels", HDP_FIELD_INT, get_levels,
        "--refine: the levels of pl (K, 2K-1, ...; when stopped, those finished)"));

GETTER(get_level_knots, ((const hdp_design_result *)obj)->level_knots[*(const long *)ctx])
GETTER(get_level_risk, ((const hdp_design_result *)obj)->level_risk[*(const long *)ctx])

TABLE(hdp_design_level_fields, "design_level", NULL,
      "one refine level l of the family pl, its names suffixed _<l> (context: l, a const long *)",
    GET("refine_knots", HDP_FIELD_INT, get_level_knots, "the knots K of level l (refine_knots_<l>)"),
    GET("refine_risk", HDP_FIELD_REAL, get_level_risk,
        "the search's final risk at level l (refine_risk_<l>)"));

/* ---- the privacy a closed-form family needs to match pl (--refine) ---- */

TABLE(hdp_design_equivalent_fields, "design_equivalent", NULL,
      "the privacy a closed-form family needs to match pl (schedule --optimize --refine; prefix: "
      "the family)",
    REAL_AS(hdp_design_equivalent, "rho_equivalent", rho,
            "the rho at which this family, optimised, reaches pl's final risk (null: not reached "
            "up to 10^4 times the model's rho)"),
    REAL_AS(hdp_design_equivalent, "epsilon_equivalent", epsilon,
            "its epsilon: (rho^2/2)-zCDP by CKS at the model's delta (null: not reached)"));

TABLE(hdp_design_cost_fields, "design_cost", NULL,
      "one family's clipping constant and search cost",
    REAL(hdp_design_result, c, "the clipping constant c (the model's unless tuned)"),
    {.name = "ode_solves", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_design_result, ode_solves),
     .help = "ODE solves of this family's search (a solve with its gradient counts one)"},
    {.name = "seconds", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_design_result, seconds),
     .flags = HDP_FIELD_NO_JSON, .help = "wall time of this family's search, seconds"});

/* ---- over the families (hdp_design_set; context the model) ---- */

static const hdp_design_result *best(const void *obj)
{
    const hdp_design_set *d = obj;
    return d->best >= 0 && d->best < HDP_FAMILY_COUNT ? &d->res[d->best] : NULL;
}

GETTER(get_converged, !((const hdp_design_set *)obj)->unconverged)
TEXT_GETTER(get_best_family, hdp_design_family_column(((const hdp_design_set *)obj)->best))
GETTER(get_best_final_risk, best(obj) ? best(obj)->final_risk : NAN)
GETTER(get_best_c, best(obj) ? best(obj)->c : NAN)

TABLE(hdp_design_set_fields, "design_set", NULL,
      "the best of the families designed (schedule --optimize)",
    GET("converged", HDP_FIELD_BOOL, get_converged,
        "false: the search was stopped and the results are the best found before"),
    {.name = "best_family", .kind = HDP_FIELD_TEXT, .text = get_best_family,
     .help = "the family of lowest final risk: output, linear-noise, inverse-time or pl",
     .sweep = "best_family"},
    {.name = "family", .kind = HDP_FIELD_TEXT, .text = get_best_family,
     .flags = HDP_FIELD_NO_JSON, .help = "the same (the record's numbers without prefix are its)"},
    {.name = "best_final_risk", .kind = HDP_FIELD_REAL, .get = get_best_final_risk,
     .help = "its final risk", .sweep = "best_final_risk"},
    {.name = "best_c", .kind = HDP_FIELD_REAL, .get = get_best_c,
     .help = "its clipping constant c", .sweep = "best_c"});

GETTER(get_table_final_risk, best(obj) ? best(obj)->table_final_risk : NAN)
GETTER(get_table_knots, best(obj) ? (double)best(obj)->table_len : 0)
GETTER(get_rho, ((const hdp_model *)ctx)->rho)

#define MODEL(ctx) ((const hdp_model *)(ctx))
GETTER(get_epsilon,
       hdp_zcdp_epsilon_cks(0.5 * MODEL(ctx)->rho * MODEL(ctx)->rho, MODEL(ctx)->delta))

GETTER(get_delta, ((const hdp_model *)ctx)->delta)

#define SET(obj) ((const hdp_design_set *)(obj))
GETTER(get_solves_per_second,
       SET(obj)->seconds > 0 ? (double)SET(obj)->solves / SET(obj)->seconds : NAN)

GETTER(get_gamma, ((const hdp_model *)ctx)->gamma)
GETTER(get_n, (double)((const hdp_model *)ctx)->n)
GETTER(get_d, (double)((const hdp_model *)ctx)->d)

TABLE(hdp_design_summary_fields, "design_summary", NULL,
      "the written table, the privacy level and the cost of the design (context: the model)",
    {.name = "table_final_risk", .kind = HDP_FIELD_REAL, .get = get_table_final_risk,
     .flags = HDP_FIELD_NO_RECORD, .help = "the best family's final risk as the written table "
     "(the record: the best family's table_final_risk)", .sweep = "table_final_risk"},
    GET("table_knots", HDP_FIELD_INT, get_table_knots, "knots of the written table"),
    GET("rho", HDP_FIELD_REAL, get_rho, "the model's rho, kept by every family ((rho^2/2)-zCDP)"),
    GET("epsilon", HDP_FIELD_REAL, get_epsilon, "epsilon of (rho^2/2)-zCDP at delta (CKS)"),
    GET("epsilon_cks", HDP_FIELD_REAL, get_epsilon, "the same (its conversion named)"),
    GET("delta", HDP_FIELD_REAL, get_delta, "the model's delta"),
    {.name = "ode_solves", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_design_set, solves),
     .flags = HDP_FIELD_SWEEP_ALWAYS, .help = "ODE solves of all the searches (the record: "
     "total_ode_solves; its ode_solves are the best family's)", .sweep = "ode_solves",
     .record = "total_ode_solves"},
    GET("ode_solves_per_second", HDP_FIELD_REAL, get_solves_per_second,
        "ODE solves per second of wall time of the searches"),
    GET("gamma", HDP_FIELD_REAL, get_gamma, "the model's gamma"),
    GET("n", HDP_FIELD_INT, get_n, "the model's n (samples, one pass)"),
    GET("d", HDP_FIELD_INT, get_d, "the model's dimension d"));

/* ---- the batch size (--tune-batch: hdp_design_batch, then hdp_design_batch_terms_t) ---- */

#define BATCH(obj) ((const hdp_design_batch *)(obj))
GETTER(get_best_batch, BATCH(obj)->best >= 0 ? (double)BATCH(obj)->batch[BATCH(obj)->best] : -1)

static long count_batches(const void *obj) { return ((const hdp_design_batch *)obj)->count; }

GETTER(get_batch, (double)((const hdp_design_batch *)obj)->batch[*(const long *)ctx])
GETTER(get_batch_risk, ((const hdp_design_batch *)obj)->risk[*(const long *)ctx])

TABLE(hdp_design_batch_fields, "design_batch", NULL,
      "the batch sizes designed (schedule --optimize --tune-batch)",
    GET("best_batch", HDP_FIELD_INT, get_best_batch, "the batch size B of lowest final risk (-1: none)"),
    {.name = "batch_candidates", .kind = HDP_FIELD_INT, .get = get_batch, .count = count_batches,
     .flags = HDP_FIELD_LIST, .help = "the batch sizes designed: 1, 2, 4, ... up to n/32"},
    {.name = "batch_final_risks", .kind = HDP_FIELD_REAL, .get = get_batch_risk,
     .count = count_batches, .flags = HDP_FIELD_LIST,
     .help = "the best family's final risk at each of them"});

#define TERM(nm, m, h) REAL_AS(hdp_design_batch_terms_t, nm, m, h)

TABLE(hdp_design_batch_terms_fields, "design_batch_terms", NULL,
      "the best batch in the subsampled-Gaussian accountants' terms (schedule --optimize "
      "--tune-batch)",
    TERM("sample_rate", sample_rate, "the best batch's sample rate q = B/n"),
    {.name = "steps", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_design_batch_terms_t, steps),
     .help = "its steps ceil(n/B)"},
    TERM("noise_multiplier_min", noise_min,
         "the least noise multiplier of its steps (the noise on the batch's sum over C)"),
    TERM("noise_multiplier_median", noise_median, "their median"),
    TERM("noise_multiplier_max", noise_max, "their largest"),
    TERM("rho_accounted", rho_accounted, "the accountant of docs/theory.md §6 on the design"),
    TERM("poisson_noise_multiplier", poisson_sigma,
         "standard Poisson DP-SGD at the same q, steps and (epsilon, delta): its noise "
         "multiplier by sgd.accountant (null: none up to 1e6)"),
    TERM("epsilon_pld", epsilon_pld, "that noise multiplier's epsilon by PLD"),
    TERM("epsilon_rdp", epsilon_rdp, "by RDP"),
    TERM("epsilon_rdp_classic", epsilon_rdp_classic, "by the classic RDP conversion"));

/* ---- the written table's file (the object: its name) ---- */

TEXT_GETTER(get_file, obj ? obj : "")

TABLE(hdp_design_file_fields, "design_file", NULL,
      "the design's table file (context: none; the object its name)",
    {.name = "table_file", .kind = HDP_FIELD_TEXT, .text = get_file, .flags = HDP_FIELD_NO_RECORD,
     .help = "the file the best schedule was written to as a table (\"\": none)"});
