/*
 * fields_panels.c — the result tables (hdpsgd/fields.h) of the family experiments' panels whose
 * JSON summaries were written key by key: `nc --sweep` (hdp_ncsweep: the sweep, each curve
 * under its name, the time) and `net --vs width | samples` (hdp_netexp: the grid's arrays and
 * each variant's cells over the grid, as lists). JSON only: no record holds them.
 */
#include <stddef.h>

#include "drivers/fields_internal.h"
#include "hdpsgd/ncsweep.h"
#include "hdpsgd/netexp.h"
#include "hdpsgd/privacy.h"

#define JSON_ONLY HDP_FIELD_NO_RECORD
/* a computed field of the JSON only */
#define JGET(nm, k, fn, h) {.name = nm, .kind = k, .get = fn, .flags = JSON_ONLY, .help = h}

/* ---- nc --sweep (hdp_ncsweep; context: the base [nc] spec, a const hdp_nc_spec *) ---- */

#define SW(obj) ((const hdp_ncsweep *)(obj))
#define BASE(ctx) ((const hdp_nc_spec *)(ctx))

static double sw_curves(const void *obj, const void *ctx) { (void)ctx; return SW(obj)->ncurves; }
static double sw_points(const void *obj, const void *ctx) { (void)ctx; return SW(obj)->nps; }
static double sw_p_first(const void *obj, const void *ctx)
{
    (void)ctx;
    return (double)SW(obj)->ps[0];
}
static double sw_p_last(const void *obj, const void *ctx)
{
    (void)ctx;
    return (double)SW(obj)->ps[SW(obj)->nps - 1];
}
static double sw_rho(const void *obj, const void *ctx) { (void)obj; return BASE(ctx)->rho; }
static double sw_delta(const void *obj, const void *ctx) { (void)obj; return BASE(ctx)->delta; }
static double sw_epsilon(const void *obj, const void *ctx)
{
    (void)obj;
    return hdp_zcdp_epsilon_cks(BASE(ctx)->rho, BASE(ctx)->delta);
}

TABLE(hdp_nc_sweep_fields, "nc_sweep", NULL,
      "hdpsgd nc --sweep: the sweep, its grid in p and the budget of one step (context: the "
      "base [nc] spec)",
    {.name = "sweep", .kind = HDP_FIELD_TEXT, .offset = offsetof(hdp_ncsweep, name),
     .flags = JSON_ONLY, .help = "the sweep: flat, perturb, remedy, frame or projection"},
    JGET("curves", HDP_FIELD_INT, sw_curves,
         "curves of the sweep (each a change of [nc] keys, see hdpsgd help nc)"),
    JGET("points", HDP_FIELD_INT, sw_points, "values of p per curve (--ps)"),
    JGET("p_first", HDP_FIELD_INT, sw_p_first, "the smallest feature dimension p"),
    JGET("p_last", HDP_FIELD_INT, sw_p_last, "the largest feature dimension p"),
    {.name = "draws", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_ncsweep, draws),
     .flags = JSON_ONLY, .help = "Monte Carlo draws per point"},
    JGET("rho", HDP_FIELD_REAL, sw_rho, "zCDP parameter of one step (nc.rho)"),
    JGET("delta", HDP_FIELD_REAL, sw_delta, "delta (nc.delta)"),
    JGET("epsilon_per_step", HDP_FIELD_REAL, sw_epsilon,
         "epsilon of one step at delta, Canonne-Kamath-Steinke"));

/* one curve (context: its index, a const int *) */
#define CURVE(ctx) (*(const int *)(ctx))
#define ROW(obj, ctx) (SW(obj)->points + (long)CURVE(ctx) * SW(obj)->nps)

static double curve_error_first(const void *obj, const void *ctx)
{
    return ROW(obj, ctx)[0].res.error_mean;
}
static double curve_error_last(const void *obj, const void *ctx)
{
    return ROW(obj, ctx)[SW(obj)->nps - 1].res.error_mean;
}
static double curve_flat_z(const void *obj, const void *ctx)
{
    return hdp_ncsweep_flat_z(SW(obj), CURVE(ctx));
}
static double curve_max_z_exact(const void *obj, const void *ctx)
{
    return hdp_ncsweep_max_z_exact(SW(obj), CURVE(ctx));
}

TABLE(hdp_nc_sweep_curve_fields, "nc_sweep_curve", NULL,
      "one curve of hdpsgd nc --sweep, under the prefix <curve>_ (its name in the CSV; context: "
      "the curve's index)",
    JGET("error_first", HDP_FIELD_REAL, curve_error_first, "mean test error at the smallest p"),
    JGET("error_last", HDP_FIELD_REAL, curve_error_last, "mean test error at the largest p"),
    JGET("flat_z", HDP_FIELD_REAL, curve_flat_z,
         "its flatness: max over p of |e_p - e_first| / sqrt(se_p^2 + se_first^2)"),
    JGET("max_z_exact", HDP_FIELD_REAL, curve_max_z_exact,
         "max over p of |error - exact| / stderr (null: no exact one-step error)"));

TABLE(hdp_nc_sweep_time_fields, "nc_sweep_time", NULL,
      "the work of hdpsgd nc --sweep (after its curves)",
    {.name = "seconds", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_ncsweep, seconds),
     .flags = JSON_ONLY, .help = "Monte Carlo time of all points, seconds"});

/* ---- net --vs width | samples: the grid (hdp_netexp) ---- */

#define NX(obj) ((const hdp_netexp *)(obj))
#define AT(i) (*(const long *)(i))

static long nx_points(const void *obj) { return NX(obj)->points; }
static double nx_grid(const void *obj, const void *i) { return NX(obj)->grid[AT(i)]; }
static double nx_n(const void *obj, const void *i) { return NX(obj)->n[AT(i)]; }
static double nx_width(const void *obj, const void *i) { return NX(obj)->width[AT(i)]; }

#define NX_LIST(nm, fn, h)                                                                      \
    {.name = nm, .kind = HDP_FIELD_REAL, .get = fn, .count = nx_points,                         \
     .flags = HDP_FIELD_LIST | JSON_ONLY, .help = h}
TABLE(hdp_netexp_width_fields, "netexp_width", NULL,
      "the grid of hdpsgd net --vs width (hdp_netexp)",
    NX_LIST("width", nx_grid, "the grid's widths"),
    NX_LIST("n", nx_n, "the training samples n at each width"));
TABLE(hdp_netexp_samples_fields, "netexp_samples", NULL,
      "the grid of hdpsgd net --vs samples (hdp_netexp)",
    NX_LIST("samples", nx_grid, "the grid's training samples n"),
    NX_LIST("net_width", nx_width, "the width at each n"));

/* one variant's cells over the grid (hdp_netexp_variant: the panel and the variant), a list
 * per field of netexp_cell, under the variant's prefix (dp: none, rf_, gd_) */
#define VIEW(obj) ((const hdp_netexp_variant *)(obj))
#define CELL(obj, i) (&NX(VIEW(obj)->panel)->cell[VIEW(obj)->variant][AT(i)])

static long variant_points(const void *obj) { return NX(VIEW(obj)->panel)->points; }

#define CELL_FIELDS(X)                                                                          \
    X(test_accuracy) X(test_loss) X(val_accuracy) X(val_loss) X(train_accuracy) X(train_loss)  \
    X(lr) X(clip) X(steps) X(sigma) X(clipped_fraction) X(configs)
#define CELL_GET(m)                                                                             \
    static double cell_##m(const void *obj, const void *i) { return (double)CELL(obj, i)->m; }
CELL_FIELDS(CELL_GET)
#define CELL_LIST(m)                                                                            \
    {.name = #m, .kind = HDP_FIELD_REAL, .get = cell_##m, .count = variant_points,              \
     .flags = HDP_FIELD_LIST | JSON_ONLY,                                                      \
     .help = "netexp_cell's " #m " at each point of the grid"},
static const hdp_field netexp_variant_rows[] = {CELL_FIELDS(CELL_LIST) END};
const hdp_field_table hdp_netexp_variant_fields = {
    "netexp_variant",
    "one variant of hdpsgd net --vs over the grid (under dp: none, rf_, gd_): netexp_cell's "
    "fields as arrays, one value per point (hdp_netexp_variant: the panel and the variant)",
    netexp_variant_rows, NULL};
