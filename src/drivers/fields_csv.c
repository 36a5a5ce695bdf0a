/*
 * fields_csv.c — the result tables (hdpsgd/fields.h) of the commands' CSV files written a row
 * per result (hdp_csv_header, hdp_csv_row of io/output.h): their columns' names and formats.
 * These tables are the CSV's only (HDP_FIELD_NO_JSON | HDP_FIELD_NO_RECORD): where a CSV
 * column names a quantity otherwise than the JSON, both names stay.
 */
#include <math.h>
#include <stddef.h>

#include "drivers/fields_internal.h"
#include "hdpsgd/design.h"
#include "hdpsgd/kl.h"
#include "hdpsgd/klsweep.h"
#include "hdpsgd/model.h"
#include "hdpsgd/netexp.h"
#include "hdpsgd/si.h"
#include "hdpsgd/siexp.h"

/* ---- hdpsgd rates: a row per gamma and family (hdp_design_result, context its model) ---- */

#define DESIGN(obj) ((const hdp_design_result *)(obj))
#define MODEL(ctx) ((const hdp_model *)(ctx))

static double rates_gamma(const void *obj, const void *ctx) { (void)obj; return MODEL(ctx)->gamma; }
static double rates_n(const void *obj, const void *ctx) { (void)obj; return (double)MODEL(ctx)->n; }
TEXT_GETTER(rates_family, hdp_design_family_column(DESIGN(obj)->family))
/* the inverse-time family's parameters (empty for the others) */
GETTER(rates_c1, DESIGN(obj)->family == HDP_FAMILY_OPTIMAL ? DESIGN(obj)->c1 : NAN)
GETTER(rates_a, DESIGN(obj)->family == HDP_FAMILY_OPTIMAL ? DESIGN(obj)->a : NAN)

TABLE(hdp_rates_csv_fields, "rates_csv", NULL,
      "hdpsgd rates' CSV: a row per gamma and family (its JSON: rates, rates_risk, ...)",
    CSV_GET("gamma", HDP_FIELD_REAL, rates_gamma, "%.17g", 0, "gamma = d/n"),
    CSV_GET("n", HDP_FIELD_INT, rates_n, NULL, 0, "samples n = round(d/gamma)"),
    {.name = "family", .kind = HDP_FIELD_TEXT, .text = rates_family, .flags = CSV_ONLY,
     .help = "the schedule family (its column name)"},
    CSV_REAL(hdp_design_result, "final_risk", final_risk, "%.12g", 0,
             "the final excess risk of the family optimised at this gamma"),
    CSV_REAL(hdp_design_result, "eta0", eta0, "%.12g", 0, "eta~(0)"),
    CSV_REAL(hdp_design_result, "eta1", eta1, "%.12g", 0, "eta~(1)"),
    CSV_GET("c1", HDP_FIELD_REAL, rates_c1, "%.12g", HDP_FIELD_OPTIONAL,
            "inverse-time's c1 (empty for the other families)"),
    CSV_GET("a", HDP_FIELD_REAL, rates_a, "%.12g", HDP_FIELD_OPTIONAL,
            "inverse-time's a (empty for the other families)"),
    CSV_REAL(hdp_design_result, "c", c, "%.12g", 0, "the clipping threshold c"),
    {.name = "ode_solves", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_design_result, ode_solves),
     .flags = CSV_ONLY, .help = "ODE solves of the search"});

/* ---- sim-index --experiment eps | n: a row per point (hdp_siexp_row) ---- */

#define SX(nm, m, fmt, h) CSV_REAL(hdp_siexp_row, nm, m, fmt, 0, h)
/* the risk of discrete GD: empty where it diverges (stage2 = ou) */
#define SX_GD CSV_REAL(hdp_siexp_row, "gd_risk", gd_risk, "%.8g", HDP_FIELD_OPTIONAL, \
                       "the unclipped discrete GD's predicted test risk (empty: it diverges)")

TABLE(hdp_si_eps_csv_fields, "si_eps_csv", NULL,
      "sim-index --experiment eps's CSV: a row per stage-2 (or total) epsilon",
    SX("epsilon_target", epsilon, "%.6g", "the target epsilon (the total one with epsilon_total)"),
    SX("epsilon_stage2", hp.eps2, "%.8g", "stage 2's epsilon"),
    SX("epsilon_total", hp.eps_total, "%.8g", "both stages' epsilon"),
    SX("rho_z1", hp.rho_z1, "%.8g", "stage 1's zCDP rho"), SX("rho_z2", hp.rho_z2, "%.8g",
    "stage 2's zCDP rho"), SX("sigma_a", hp.sigma_a, "%.8g", "stage 2's noise sigma_a"),
    SX("risk", risk, "%.8g", "the test risk, mean over the runs"),
    SX("risk_se", risk_se, "%.4g", "its standard error"),
    SX("ou_risk", ou_risk, "%.8g", "the OU law's predicted test risk"), SX_GD,
    SX("zero_risk", zero_risk, "%.8g", "the zero predictor's test risk"),
    SX("clipped_fraction", clipped, "%.6g", "stage 2's clipped fraction"),
    SX("alignment_mean", align_mean, "%.6g", "the neurons' mean alignment after stage 1"),
    SX("epsilon_stage1", hp.eps1, "%.8g", "stage 1's epsilon"),
    SX("sigma_W", hp.sigma_W, "%.8g", "stage 1's noise sigma_W"));

/* sim-index: a row per mode (hdp_si_mode_row); z and gd_* empty where they do not apply */
#define SM(m, fmt, fl, h) CSV_REAL(hdp_si_mode_row, #m, m, fmt, fl, h)
TABLE(hdp_si_mode_csv_fields, "si_mode_csv", NULL,
      "sim-index's CSV: stage 2's weights in the eigenbasis of K, a row per mode",
    INT_AS(hdp_si_mode_row, "mode", mode, CSV_ONLY, "the mode k"),
    SM(lambda_k, "%.10g", 0, "its eigenvalue"), SM(pred_mean, "%.10g", 0, "the predicted mean"),
    SM(mc_mean, "%.10g", 0, "the Monte Carlo's mean"), SM(mc_mean_se, "%.6g", 0, "its stderr"),
    SM(z_mean, "%.4g", HDP_FIELD_OPTIONAL, "|mc_mean - pred_mean| / stderr"),
    SM(pred_var, "%.10g", 0, "the predicted variance"),
    SM(mc_var, "%.10g", 0, "the Monte Carlo's variance"),
    SM(mc_var_se, "%.6g", 0, "its standard error"),
    SM(z_var, "%.4g", HDP_FIELD_OPTIONAL, "|mc_var - pred_var| / stderr"),
    SM(ou_mean, "%.10g", 0, "the OU's mean"), SM(ou_var, "%.10g", 0, "the OU's variance"),
    SM(gd_mean, "%.10g", HDP_FIELD_OPTIONAL, "discrete GD's mean (empty: it diverges)"),
    SM(gd_var, "%.10g", HDP_FIELD_OPTIONAL, "discrete GD's variance (empty: it diverges)"));

/* --experiment align: a row per bin (hdp_siexp_bin) */
TABLE(hdp_si_align_csv_fields, "si_align_csv", NULL,
      "sim-index --experiment align's CSV: the histogram of the neurons' alignments",
    CSV_REAL(hdp_siexp_bin, "bin_lo", bin_lo, "%.4g", 0, "the bin's lower end"),
    CSV_REAL(hdp_siexp_bin, "bin_hi", bin_hi, "%.4g", 0, "its upper end"),
    CSV_REAL(hdp_siexp_bin, "bin_mid", bin_mid, "%.4g", 0, "its middle"),
    INT_AS(hdp_siexp_bin, "init", init, CSV_ONLY, "neurons at initialisation"),
    INT_AS(hdp_siexp_bin, "stage1_noiseless", stage1_noiseless, CSV_ONLY,
           "after stage 1 with sigma_W = 0"),
    INT_AS(hdp_siexp_bin, "stage1_private", stage1_private, CSV_ONLY, "after the private stage 1"));

TABLE(hdp_si_n_csv_fields, "si_n_csv", NULL,
      "sim-index --experiment n's CSV: a row per sample count n",
    {.name = "n", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_siexp_row, n), .flags = CSV_ONLY,
     .help = "the sample count n"},
    SX("risk", risk, "%.8g", "the test risk, mean over the runs"), SX("risk_se", risk_se, "%.4g",
    "its standard error"), SX("ou_risk", ou_risk, "%.8g", "the OU law's predicted test risk"),
    SX_GD, SX("zero_risk", zero_risk, "%.8g", "the zero predictor's test risk"),
    SX("alignment_mean", align_mean, "%.6g", "the neurons' mean alignment after stage 1"),
    SX("alignment_init_mean", align0_mean, "%.6g", "their mean alignment at initialisation"),
    SX("epsilon_stage1", hp.eps1, "%.6g", "stage 1's epsilon"),
    SX("epsilon_stage2", hp.eps2, "%.6g", "stage 2's epsilon"),
    SX("epsilon_total", hp.eps_total, "%.6g", "both stages' epsilon"),
    SX("clipped_fraction", clipped, "%.6g", "stage 2's clipped fraction"),
    SX("stage1_clipped_fraction", clipped1, "%.6g", "stage 1's clipped fraction"));

/* ---- kl init: a row per scheme, depth and layer (hdp_kl_init_row) ---- */

TEXT_GETTER(kl_init_name, ((const hdp_kl_init_row *)obj)->init)
#define KI_LONG(m, h) INT_AS(hdp_kl_init_row, #m, m, CSV_ONLY, h)
#define KI_REAL(m, fmt, h) CSV_REAL(hdp_kl_init_row, #m, m, fmt, 0, h)

TABLE(hdp_kl_init_csv_fields, "kl_init_csv", NULL,
      "kl init's CSV: E||df/dW_l||^2 by Monte Carlo against Lemma C.3, a row per layer",
    {.name = "init", .kind = HDP_FIELD_TEXT, .text = kl_init_name, .flags = CSV_ONLY,
     .help = "the initialisation scheme"},
    KI_LONG(depth, "the network's depth"), KI_LONG(width, "its width"),
    KI_LONG(layer, "the layer l (0: all layers)"),
    KI_REAL(mc_mean, "%.12g", "the Monte Carlo mean"),
    KI_REAL(mc_stderr, "%.6g", "its standard error"), KI_REAL(lemma_c3, "%.12g", "Lemma C.3's"),
    KI_REAL(z, "%.4f", "(mc_mean - lemma_c3) / mc_stderr"));

/* ---- kl bound: a row per depth, then per width (hdp_kl_bound_row) ---- */

TEXT_GETTER(kl_bound_axis, ((const hdp_kl_bound_row *)obj)->axis)
/* a quantity's four columns <col>_<scheme>, member m[0..3] */
#define KB1(col, m, i, s, h) CSV_REAL(hdp_kl_bound_row, col "_" s, m[i], "%.12g", 0, h)
#define KB4(col, m, h)                                                  \
    KB1(col, m, 0, "lecun", h), KB1(col, m, 1, "he", h), KB1(col, m, 2, "ntk", h), \
        KB1(col, m, 3, "xavier", h)

TABLE(hdp_kl_bound_csv_fields, "kl_bound_csv", NULL,
      "kl bound's CSV: B and the KL bound of every scheme against depth, then width",
    {.name = "axis", .kind = HDP_FIELD_TEXT, .text = kl_bound_axis, .flags = CSV_ONLY,
     .help = "depth or width: the one that varies"},
    INT_AS(hdp_kl_bound_row, "depth", depth, CSV_ONLY, "the network's depth"),
    INT_AS(hdp_kl_bound_row, "width", width, CSV_ONLY, "its width"),
    KB4("B", B, "B (eq. 7) of the scheme"), KB4("Btable", B_table, "B of Table 1"),
    KB4("kl", kl, "the KL bound of Corollary 4.2"),
    KB4("klseed", kl_seed, "the same with the seed's constant"));

/* ---- kl run --vs depth | width: a row per depth or width (its long), then the points of the
 * schemes run at it (hdp_klsweep_point), kl_vs_scheme_csv under <scheme>_, with kl.network =
 * relu kl_vs_relu_csv under <scheme>_relu_ ---- */

#define KV(nm, m, fmt, fl, h) CSV_REAL(hdp_klsweep_point, nm, m, fmt, fl, h)
TABLE(hdp_kl_depth_csv_fields, "kl_depth_csv", NULL, "kl run --vs depth's CSV: its first column",
    {.name = "depth", .kind = HDP_FIELD_INT, .flags = CSV_ONLY, .help = "the network's depth L"});
TABLE(hdp_kl_width_csv_fields, "kl_width_csv", NULL, "kl run --vs width's CSV: its first column",
    {.name = "width", .kind = HDP_FIELD_INT, .flags = CSV_ONLY, .help = "the network's width m"});
TABLE(hdp_kl_vs_scheme_csv_fields, "kl_vs_scheme_csv", NULL,
      "kl run --vs depth|width's CSV: one scheme at the row's depth or width, under <scheme>_ "
      "(early: after round(0.4 epochs) epochs; the exact KLs empty but for the squared loss)",
    KV("kl_early", kle, "%.10g", 0, "the KL's Monte Carlo after the early epochs"),
    KV("kl_early_se", see, "%.6g", 0, "its standard error"),
    KV("kl", kl, "%.10g", 0, "the KL's Monte Carlo after kl.epochs epochs"),
    KV("kl_se", se, "%.6g", 0, "its standard error"),
    KV("exact_early", exacte, "%.10g", HDP_FIELD_OPTIONAL, "the exact KL after the early epochs"),
    KV("exact", exact, "%.10g", HDP_FIELD_OPTIONAL, "the exact KL after kl.epochs epochs"),
    KV("bound_early", bounde, "%.10g", 0, "Corollary 4.2's bound (c = 4) after the early epochs"),
    KV("bound", bound, "%.10g", 0, "the same after kl.epochs epochs"),
    KV("B", B, "%.10g", 0, "the gradient-difference constant B of eq. 7"),
    KV("grad2", grad2, "%.10g", 0, "mean ||J(x_i)||^2 over samples and inits (~ B)"));
TABLE(hdp_kl_vs_relu_csv_fields, "kl_vs_relu_csv", NULL,
      "kl run --vs depth|width's CSV: the real network of one scheme, under <scheme>_relu_ "
      "(kl.network = relu; empty: the point left out, unstable)",
    KV("kl_early", rkle, "%.10g", HDP_FIELD_OPTIONAL, "the KL's Monte Carlo after the early epochs"),
    KV("kl_early_se", rsee, "%.6g", HDP_FIELD_OPTIONAL, "its standard error"),
    KV("kl", rkl, "%.10g", HDP_FIELD_OPTIONAL, "the KL's Monte Carlo after kl.epochs epochs"),
    KV("kl_se", rse, "%.6g", HDP_FIELD_OPTIONAL, "its standard error"));

/* ---- net --vs width | samples: a row per point (hdp_netexp, context the point's index), its
 * first columns, then netexp_cell of each variant under its prefix ---- */

#define NETEXP_X(var, nm, xname, h)                                                            \
    TABLE(var, nm, NULL, "net --vs " xname "'s CSV: a row per point, its first columns",      \
        CSV_REAL(hdp_netexp, xname, grid, "%.10g", HDP_FIELD_AT, h),                          \
        CSV_REAL(hdp_netexp, "n", n, "%.10g", HDP_FIELD_AT, "the point's training samples n"), \
        CSV_REAL(hdp_netexp, "net_width", width, "%.10g", HDP_FIELD_AT, "the point's width"))
NETEXP_X(hdp_netexp_width_csv_fields, "netexp_width_csv", "width", "the panel's width");
NETEXP_X(hdp_netexp_samples_csv_fields, "netexp_samples_csv", "samples", "the panel's samples n");
