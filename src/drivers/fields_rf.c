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
#define TEXT_OF(s, m)                                              \
    static const char *s##_##m(const void *obj, const void *ctx)   \
    {                                                              \
        (void)ctx;                                                 \
        return ((const s *)obj)->m;                                \
    }
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
