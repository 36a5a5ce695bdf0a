/*
 * fields_rf.c — the result tables (hdpsgd/fields.h) of DP-GD on random features: hdpsgd rf's
 * summary (hdp_rf_summary of hdpsgd/rf.h) and rf-experiment's (hdp_rfexp_summary,
 * hdp_rfexp_selected of hdpsgd/rfexp.h). Their JSON summaries are written from them.
 */
#include <stddef.h>

#include "drivers/fields_internal.h"
#include "hdpsgd/rf.h"
#include "hdpsgd/rfexp.h"

/* a text member (a const char *) of a summary struct, by its getter */
#define TEXT_OF(s, m) TEXT_GETTER(s##_##m, ((const s *)obj)->m)
#define TEXT_FIELD(s, m, h) {.name = #m, .kind = HDP_FIELD_TEXT, .text = s##_##m, .help = h}
#define LONG(s, m, h) INT_AS(s, #m, m, 0, h)

TEXT_OF(hdp_rf_summary, command)
TEXT_OF(hdp_rf_summary, sigma_route)
TEXT_OF(hdp_rf_summary, inputs)
TEXT_OF(hdp_rf_summary, labels)
TEXT_OF(hdp_rf_summary, test_set)

#define F(m, h) REAL(hdp_rf_summary, m, h)
#define L(m, h) LONG(hdp_rf_summary, m, h)
#define T(m, h) TEXT_FIELD(hdp_rf_summary, m, h)
TABLE(hdp_rf_final_fields, "rf_final", NULL,
      "DP-GD on random features and its OU limit: the losses at the last recorded step",
    T(command, "the command: rf"), F(dpgd_test, "DP-GD's test loss, mean over the runs"),
    F(dpgd_test_stderr, "its standard error over the runs"),
    F(dpgd_train, "DP-GD's training loss, mean over the runs"),
    F(ou_exact_test, "the OU process's expected test loss (closed form)"),
    F(ou_exact_train, "the OU process's expected training loss"),
    F(ou_em_test, "the Euler-Maruyama OU path's test loss (DP-GD's increments), mean over runs"),
    F(ou_em_test_stderr, "its standard error"),
    F(ou_em_expected_test, "the EM recursion's expected test loss (closed form)"),
    F(ou_exact_step_test, "the exact OU step's test loss (the same increments), mean over runs"),
    F(ou_exact_step_test_stderr, "its standard error"), F(minnorm_test,
    "the min-norm interpolator's test loss"), F(minnorm_train, "its training loss"),
    F(gradient_flow_test, "gradient flow's test loss at tau (sigma = 0)"),
    F(zero_test, "the zero predictor's test loss"), F(zero_train, "its training loss"),
    F(max_clipped_fraction, "the largest fraction of clipped per-sample gradients (runs, steps)"));

TABLE(hdp_rf_run_fields, "rf_run", NULL,
      "DP-GD on random features: the coupling's error, the privacy, the sizes and the work",
    F(strong_error_mean, "sup over the steps of ||theta_DPGD - theta_OU||, mean over the runs"),
    F(strong_error_max, "the same, largest over the runs"),
    F(strong_error_em_max, "sup ||theta_DPGD - theta_EM||, largest over the runs"),
    F(sigma, "the noise multiplier sigma"), T(sigma_route, "how sigma was found"),
    F(epsilon, "epsilon (null: inf, no noise)"), F(epsilon_cks, "epsilon of the zCDP conversion"),
    F(rho_z, "the zCDP rho"), F(delta, "delta"), L(T, "DP-GD's steps"), F(eta, "the learning rate"),
    F(tau, "the OU time eta T"), F(C_clip, "the clipping threshold"),
    F(s, "the OU noise scale 2 C_clip sigma / n"), F(lambda_max, "the largest OU rate"),
    L(p, "random features"), L(n, "training samples"), L(d, "input dimension"),
    L(test_size, "test samples"), L(modes, "the feature matrix's rank kept"),
    T(inputs, "gaussian or data"), T(labels, "the target (sign, linear) or data"),
    T(test_set, "drawn, rows held out or held-out file"), L(runs, "DP-GD runs"),
    L(threads, "threads"),
    {.name = "seed", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_rf_summary, seed),
     .flags = HDP_FIELD_SEED, .help = "the base seed (sim.seed)"},
    F(build_seconds, "time to build the problem, s"), F(seconds, "time of the runs, s"));
#undef F
#undef L
#undef T

TEXT_OF(hdp_rfexp_summary, experiment)
TEXT_OF(hdp_rfexp_summary, selected_on)
TEXT_OF(hdp_rfexp_summary, grid)
TEXT_OF(hdp_rfexp_summary, model)

TABLE(hdp_rfexp_fields, "rfexp", NULL, "rf-experiment: the experiment and its sizes",
    TEXT_FIELD(hdp_rfexp_summary, experiment, "P1, P2, P3 or P4"),
    TEXT_FIELD(hdp_rfexp_summary, selected_on, "validation or test: the set the selection used"),
    LONG(hdp_rfexp_summary, val_size, "validation samples"),
    LONG(hdp_rfexp_summary, test_size, "test samples"), LONG(hdp_rfexp_summary, n, "samples"),
    LONG(hdp_rfexp_summary, runs, "DP-GD runs per configuration"),
    TEXT_FIELD(hdp_rfexp_summary, grid, "full or reduced"),
    LONG(hdp_rfexp_summary, count, "the number of p values"));

#define SEL(m, h) REAL(hdp_rfexp_selected, m, h)
TABLE(hdp_rfexp_point_fields, "rfexp_point", NULL,
      "rf-experiment: the configuration selected at one p (names suffixed _<i>)",
    LONG(hdp_rfexp_selected, p, "random features"), SEL(selected_C, "the selected C of the grid"),
    SEL(selected_CT, "the selected C T"), LONG(hdp_rfexp_selected, selected_T, "its steps T"),
    SEL(selected_val, "its mean validation loss"), SEL(selected_test, "its mean test loss"),
    SEL(selected_test_se, "its test loss's standard error"),
    SEL(oracle_test, "the lowest mean test loss of any configuration"),
    SEL(minnorm_test, "the min-norm interpolator's test loss"));
#undef SEL

TABLE(hdp_rfexp_source_fields, "rfexp_source", NULL, "rf-experiment: the model it ran",
    TEXT_FIELD(hdp_rfexp_summary, model, "the model's source: its file, or the built-in default"));

/* ---- the CSVs: hdpsgd rf's, a row per recorded step (hdp_rf_sim_result, context the step's
 * index, a const long *); rf-experiment's, a row per p (P1: the selected configuration) or per
 * configuration (P2, P3, P4): hdp_rfexp_config, context its hdp_rfexp_row ---- */

GETTER(rf_step, (double)((const hdp_rf_sim_result *)obj)->step[*(const long *)ctx])
#define RS(nm, m, fmt, h) CSV_REAL(hdp_rf_sim_result, nm, m, fmt, HDP_FIELD_AT, h)
TABLE(hdp_rf_csv_fields, "rf_csv", NULL,
      "hdpsgd rf's CSV: a row per recorded step (means over the runs; se: standard errors)",
    CSV_GET("step", HDP_FIELD_INT, rf_step, NULL, 0, "the step k"),
    RS("tau", tau, "%.10g", "the OU time eta k"),
    RS("dpgd_test", dpgd_test, "%.12g", "DP-GD's test loss"),
    RS("dpgd_test_se", dpgd_test_se, "%.6g", "its standard error"),
    RS("dpgd_train", dpgd_train, "%.12g", "DP-GD's training loss"),
    RS("dpgd_train_se", dpgd_train_se, "%.6g", "its standard error"),
    RS("ou_test", ou_test, "%.12g", "the OU process's expected test loss (closed form)"),
    RS("ou_train", ou_train, "%.12g", "its expected training loss"),
    RS("em_test", em_test, "%.12g", "the Euler-Maruyama OU path's test loss (DP-GD's increments)"),
    RS("em_test_se", em_test_se, "%.6g", "its standard error"),
    RS("em_expected_test", em_expected_test, "%.12g", "the EM recursion's expected test loss"),
    RS("ex_test", ex_test, "%.12g", "the exact OU step's test loss (the same increments)"),
    RS("ex_test_se", ex_test_se, "%.6g", "its standard error"),
    RS("clipped_fraction", clipped, "%.8g", "the fraction of clipped per-sample gradients"),
    CSV_REAL(hdp_rf_sim_result, "minnorm_test", minnorm_test, "%.12g", 0,
             "the min-norm interpolator's test loss"),
    RS("gf_test", gf_test, "%.12g", "gradient flow's test loss at tau (sigma = 0)"));

#define ROW(ctx) ((const hdp_rfexp_row *)(ctx))
#define CFG(obj) ((const hdp_rfexp_config *)(obj))
GETTER(rx_p, (double)ROW(ctx)->pt->p)
GETTER(rx_C, ROW(ctx)->C)
GETTER(rx_CT, ROW(ctx)->CT)
GETTER(rx_minnorm_test, ROW(ctx)->pt->minnorm_test)
GETTER(rx_minnorm_train, ROW(ctx)->pt->minnorm_train)
GETTER(rx_zero_test, ROW(ctx)->pt->zero_test)
GETTER(rx_modes, (double)ROW(ctx)->pt->modes)
GETTER(rx_eta_lambda_max, ROW(ctx)->pt->eta * ROW(ctx)->pt->lambda_max)
GETTER(rx_oracle, ROW(ctx)->pt->cfg[ROW(ctx)->pt->best_test].test)
GETTER(rx_etaTp, CFG(obj)->q.tau * (double)ROW(ctx)->pt->p / (double)ROW(ctx)->d)
GETTER(rx_selected, (double)ROW(ctx)->selected)
#define RX(nm, fn, fmt, h) CSV_GET(nm, HDP_FIELD_REAL, fn, fmt, 0, h)
#define RX_INT(nm, fn, h) CSV_GET(nm, HDP_FIELD_INT, fn, NULL, 0, h)
#define RC(nm, m, fmt, h) CSV_REAL(hdp_rfexp_config, nm, m, fmt, 0, h)
#define RC_T(nm) INT_AS(hdp_rfexp_config, nm, q.T, CSV_ONLY, "DP-GD's steps T")
#define RC_SE(nm) RC(nm, test_se, "%.4g", "its standard error")
/* a configuration's run: its clipping, noise, losses and clipped fraction */
#define RC_RUN                                                                                 \
    RC("C_clip", q.C_clip, "%.10g", "the clipping threshold C sqrt(p)"),                       \
        RC("sigma", q.sigma, "%.8g", "the noise multiplier"),                                  \
        RC("dpgd_test", test, "%.10g", "DP-GD's test loss, mean over the runs"),               \
        RC_SE("dpgd_test_se"), RC("dpgd_train", train, "%.10g", "its training loss"),          \
        RC("clipped", clipped, "%.6g", "the fraction of clipped per-sample gradients")
#define RC_VAL RC("dpgd_val", val, "%.10g", "its validation loss"), \
    RC("dpgd_val_se", val_se, "%.4g", "its standard error")

/* P1: the selected configuration's, the grid's test losses (rfexp_grid_test_csv), then
 * rfexp_p1_val_csv, the grid's validation losses (rfexp_grid_val_csv) */
TABLE(hdp_rfexp_p1_csv_fields, "rfexp_p1_csv", NULL,
      "rf-experiment P1's CSV: a row per p, the selected configuration's losses",
    RX_INT("p", rx_p, "random features p"),
    RX("minnorm_test", rx_minnorm_test, "%.10g", "the min-norm interpolator's test loss"),
    RX("minnorm_train", rx_minnorm_train, "%.6g", "its training loss"),
    RX("zero_test", rx_zero_test, "%.10g", "the zero predictor's test loss"),
    RC("dpgd_test", test, "%.10g", "DP-GD's test loss, mean over the runs"), RC_SE("dpgd_test_se"),
    RC("dpgd_train", train, "%.10g", "its training loss"),
    RX("dpgd_C", rx_C, "%g", "its C (C_clip = C sqrt(p))"),
    RX("dpgd_CT", rx_CT, "%g", "its CT (T = CT d/(eta p))"), RC_T("dpgd_T"),
    RC("dpgd_sigma", q.sigma, "%.8g", "its noise multiplier"),
    RC("dpgd_clipped", clipped, "%.6g", "its fraction of clipped per-sample gradients"),
    RX_INT("modes", rx_modes, "the feature matrix's rank kept"),
    RX("eta_lambda_max", rx_eta_lambda_max, "%.6g", "eta times the largest OU rate"));
TABLE(hdp_rfexp_p1_val_csv_fields, "rfexp_p1_val_csv", NULL,
      "rf-experiment P1's CSV: the selected configuration's validation loss, the oracle's",
    RC_VAL, RX("oracle_test", rx_oracle, "%.10g", "the lowest test loss of the grid"));

/* P1's grid: one configuration's test and validation loss, under its suffix _C<C>_CT<CT> */
TABLE(hdp_rfexp_grid_test_csv_fields, "rfexp_grid_test_csv", NULL,
      "rf-experiment P1's CSV: each configuration's test loss, test_C<C>_CT<CT>",
    RC("test", test, "%.10g", "its test loss, mean over the runs"));
TABLE(hdp_rfexp_grid_val_csv_fields, "rfexp_grid_val_csv", NULL,
      "rf-experiment P1's CSV: each configuration's validation loss, val_C<C>_CT<CT>",
    RC("val", val, "%.10g", "its validation loss, mean over the runs"));

TABLE(hdp_rfexp_p23_csv_fields, "rfexp_p23_csv", NULL,
      "rf-experiment P2's and P3's CSV: a row per p and CT (C fixed)",
    RX_INT("p", rx_p, "random features p"), RX("CT", rx_CT, "%.8g", "CT: T = round(CT d/(eta p))"),
    RC_T("T"), RC("tau", q.tau, "%.10g", "the OU time eta T"),
    RX("etaTp_over_d", rx_etaTp, "%.10g", "eta T p / d"),
    RC_RUN,
    RC("ou_test", ou_test, "%.10g", "the unclipped OU process's expected test loss at tau"),
    RC("gf_test", gf_test, "%.10g", "gradient flow's test loss at tau"),
    RX("minnorm_test", rx_minnorm_test, "%.10g", "the min-norm interpolator's test loss"),
    RC_VAL, RX_INT("selected", rx_selected, "1: the configuration selected at this p"));

TABLE(hdp_rfexp_p4_csv_fields, "rfexp_p4_csv", NULL,
      "rf-experiment P4's CSV: a row per configuration (C, CT) at one p",
    RX("C", rx_C, "%.8g", "C: C_clip = C sqrt(p)"), RX("CT", rx_CT, "%.8g", "CT: T = round(CT d/(eta p))"), RC_T("T"),
    RC("tau", q.tau, "%.10g", "the OU time eta T"),
    RC_RUN,
    RC_VAL, RX_INT("selected", rx_selected, "1: the configuration selected"));
