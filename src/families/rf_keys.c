/*
 * rf_keys.c — the [rf] and [dpgd] sections of the model files: DP-GD on random features and
 * its OU limit (docs/theory.md §6, §7; Bombari-Mondelli, Fig. 2; hdpsgd/rf.h). Their keys, the
 * names of the [rf] enums, the sizes that finalize checks (the [dpgd] combinations are checked by
 * hdp_rf_dpgd_from_model, rf_privacy.c, once p, n and d are known) and the accessors
 * hdp_rf_keys_of, hdp_dpgd_keys_of. Registered in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/rf.h"

#include <math.h>
#include <stddef.h>

static const char *const rf_activation_names[] = {"tanh", "relu", "linear", NULL};
static const char *const rf_target_names[] = {"sign", "linear", NULL};

const char *hdp_rf_activation_name(hdp_rf_activation_kind k) { return rf_activation_names[k]; }
const char *hdp_rf_target_name(hdp_rf_target_kind k) { return rf_target_names[k]; }

static const char *const dpgd_regime_names[] = {"experiments", "theorem", NULL};
const char *hdp_dpgd_regime_name(hdp_dpgd_regime_kind k) { return dpgd_regime_names[k]; }

#define P(f) offsetof(hdp_rf_keys, f)

static const hdp_schema_key rf_keys[] = {
    {"d", HDP_KEY_LONG, P(d), "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL,
     "input dimension d (integer in [1, 1e5]); x ~ N(0, I_d)"},
    {"n", HDP_KEY_LONG, P(n), "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL,
     "training samples n (integer in [1, 1e6])"},
    {"p", HDP_KEY_LONG, P(p), "4000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL,
     "random features p (integer in [1, 1e6]): phi(x) = act(V x), V_ij ~ N(0, 1/d) frozen"},
    {"activation", HDP_KEY_ENUM, P(activation), "tanh", 0, 0, 0, rf_activation_names,
     "activation: tanh | relu | linear"},
    {"target", HDP_KEY_ENUM, P(target), "sign", 0, 0, 0, rf_target_names,
     "labels: sign (y = sign(u^T x)) | linear (y = u^T x), u uniform on the unit sphere"},
    {"label_noise", HDP_KEY_DOUBLE, P(label_noise), "0", HDP_R_LO_CLOSED, 0, 0, NULL,
     "variance >= 0 of Gaussian noise added to every label (train and test)"},
    {"test_size", HDP_KEY_LONG, P(test_size), "1000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     1, 1e6, NULL,
     "test samples (integer in [1, 1e6])"},
    {"runs", HDP_KEY_LONG, P(runs), "10", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL,
     "runs of `hdpsgd rf` (integer in [1, 1e5]; --runs overrides it)"},
    {"records", HDP_KEY_LONG, P(records), "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL,
     "`hdpsgd rf` records the losses at step 0 and at round(i T / records), i = 1..records; at most 1e6"},
    {"val_size", HDP_KEY_LONG, P(val_size), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e6, NULL,
     "validation samples of rf-experiment, which chooses (C, T) on them (integer in [0, 1e6]); "
     "0 = 20 % of test_size"},
};
#undef P

#define P(f) offsetof(hdp_dpgd_keys, f)

static const hdp_schema_key dpgd_keys[] = {
    {"eta", HDP_KEY_DOUBLE, P(eta), "0", HDP_R_LO_CLOSED, 0, 0, NULL,
     "DP-GD step size eta >= 0; 0 = 1/p"},
    {"T", HDP_KEY_LONG, P(T), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED | HDP_K_IF_GIVEN, 0, 1e9, NULL,
     "steps T (integer in [0, 1e9]); 0 = round(CT d / (eta p)); give T or CT, not both"},
    {"CT", HDP_KEY_DOUBLE, P(CT), "1", HDP_R_LO_OPEN | HDP_K_IF_GIVEN, 0, 0, NULL,
     "CT = eta T p / d > 0 (the x-axis of Bombari-Mondelli's collapse); used when T = 0"},
    {"C", HDP_KEY_DOUBLE, P(C), "0.5", HDP_R_LO_OPEN | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL,
     "clipping constant C > 0 or inf: C_clip = C sqrt(p); give C or clip, not both"},
    {"clip", HDP_KEY_DOUBLE, P(clip), "0", HDP_R_LO_CLOSED | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL,
     "absolute clipping threshold C_clip >= 0 or inf; 0 = C sqrt(p)"},
    {"epsilon", HDP_KEY_DOUBLE, P(epsilon), "4", HDP_R_LO_OPEN | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL,
     "target epsilon > 0 of (epsilon, delta)-DP, or inf (no private noise)"},
    {"delta", HDP_KEY_DOUBLE, P(delta), "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL,
     "delta in [0, 1); 0 = 1/n"},
    {"sigma", HDP_KEY_DOUBLE, P(sigma), "0", HDP_R_LO_CLOSED | HDP_K_IF_GIVEN, 0, 0, NULL,
     "noise multiplier sigma >= 0; 0 = calibrate from (epsilon, delta) (docs/theory.md §6)"},
    {"regime", HDP_KEY_ENUM, P(regime), "experiments", 0, 0, 0, dpgd_regime_names,
     "experiments (C_clip = C sqrt(p), T from CT) | theorem (Bombari-Mondelli, Eq. 8: C_clip = "
     "sqrt(p) log^2 n, T = d log^2 n / (eta p); leave C, clip, T and CT out)"},
};
#undef P

/* Products of sizes that size one allocation (core/schema.h). */
static hdp_status rf_finalize(hdp_model *m, hdp_error *err)
{
    const hdp_rf_keys *q = hdp_rf_keys_of(m);
    double cells;
    double rn = (double)q->n, rp = (double)q->p, rt = (double)q->test_size;
    if ((cells = rn * rp) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "rf", "n", rn, "rf.p", rp, cells, "the feature matrix", err);
    if ((cells = rt * rp) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "rf", "test_size", rt, "rf.p", rp, cells,
                                 "the test features", err);
    double rv = q->val_size > 0 ? (double)q->val_size : fmax(1.0, nearbyint(rt / 5.0));
    if ((cells = rv * rp) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "rf", "val_size", rv, "rf.p", rp, cells,
                                 "the validation features", err);
    if ((cells = fmin(rn, rp) * fmin(rn, rp)) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "rf", "n", rn, "rf.p", rp, cells,
                                 "the Gram matrix of the smaller one", err);
    return HDP_OK;
}

const hdp_schema_section hdp_rf_section = {"rf", rf_keys, HDP_SCHEMA_NKEYS(rf_keys),
                                           sizeof(hdp_rf_keys), rf_finalize};
const hdp_schema_section hdp_dpgd_section = {"dpgd", dpgd_keys,
                                             HDP_SCHEMA_NKEYS(dpgd_keys),
                                             sizeof(hdp_dpgd_keys), NULL};

const hdp_rf_keys *hdp_rf_keys_of(const hdp_model *m)
{
    return hdp_model_section_const(m, &hdp_rf_section);
}

const hdp_dpgd_keys *hdp_dpgd_keys_of(const hdp_model *m)
{
    return hdp_model_section_const(m, &hdp_dpgd_section);
}
