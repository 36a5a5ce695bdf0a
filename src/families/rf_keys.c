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

static const char *const rf_activation_names[] = {"tanh", "relu", "linear", NULL};
static const char *const rf_target_names[] = {"sign", "linear", NULL};

const char *hdp_rf_activation_name(hdp_rf_activation_kind k) { return rf_activation_names[k]; }
const char *hdp_rf_target_name(hdp_rf_target_kind k) { return rf_target_names[k]; }

static const char *const dpgd_regime_names[] = {"experiments", "theorem", NULL};
const char *hdp_dpgd_regime_name(hdp_dpgd_regime_kind k) { return dpgd_regime_names[k]; }

/* Products of sizes that size one allocation (core/schema.h). On a data set (data.source =
 * file) n and the test size are the file's: hdp_rf_spec_from_data checks them with p. */
static hdp_status rf_finalize(hdp_model *m, hdp_error *err)
{
    const hdp_rf_keys *q = hdp_rf_keys_of(m);
    double cells;
    double rn = (double)q->n, rp = (double)q->p, rt = (double)q->test_size;
    if (m->data_source == HDP_SOURCE_FILE)
        return HDP_OK; /* rf-experiment (the validation set) refuses a data set */
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

/* the rows of the lists in hdpsgd/rf.h, hdp_rf_section and hdp_rf_keys_of, hdp_dpgd_section
 * and hdp_dpgd_keys_of */
#define HDP_SECTION_KEYS hdp_rf_keys
HDP_SECTION_DEFINE(rf, HDP_RF_KEYS, rf_finalize)
#undef HDP_SECTION_KEYS
#define HDP_SECTION_KEYS hdp_dpgd_keys
HDP_SECTION_DEFINE(dpgd, HDP_DPGD_KEYS, NULL)
