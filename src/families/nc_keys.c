/*
 * nc_keys.c — the [nc] section of the model files: NoisyGD on neural-collapse features
 * (the NC paper; docs/theory.md §8; hdpsgd/nc.h). Its keys, the names of its enums, the sizes that
 * finalize checks (the other combinations are checked by hdp_nc_spec_from_model, nc_spec.c) and
 * the accessors hdp_nc_keys_of, hdp_nc_keys_edit. Registered in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/nc.h"

static const char *const nc_loss_names[] = {"ce", "logistic", "squared", NULL};
static const char *const nc_init_names[] = {"zero", "gaussian", NULL};
static const char *const nc_perturbation_names[] = {"none", "test-offset", "adversarial",
                                                    "stochastic", "train-offset", "both",
                                                    "per-sample", NULL};
static const char *const nc_remedy_names[] = {"none", "center", "pca", "projection", NULL};

const char *hdp_nc_loss_name(hdp_nc_loss_kind k) { return nc_loss_names[k]; }
const char *hdp_nc_init_name(hdp_nc_init_kind k) { return nc_init_names[k]; }
const char *hdp_nc_perturbation_name(hdp_nc_perturbation_kind k)
{
    return nc_perturbation_names[k];
}
const char *hdp_nc_remedy_name(hdp_nc_remedy_kind k) { return nc_remedy_names[k]; }

/* Products of sizes that size one allocation (core/schema.h). */
static hdp_status nc_finalize(hdp_model *m, hdp_error *err)
{
    const hdp_nc_keys *q = hdp_nc_keys_of(m);
    double cells;
    double np = (double)q->p;
    if ((cells = (double)q->K * np) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "nc", "p", np, "nc.K", (double)q->K, cells, "the class means",
                                 err);
    if (q->remedy == HDP_NC_REMEDY_PCA &&
        (cells = (double)q->public_samples * np) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "nc", "public_samples", (double)q->public_samples, "nc.p",
                                 np, cells, "the public samples", err);
    return HDP_OK;
}

/* the rows of the list in hdpsgd/nc.h, hdp_nc_section and hdp_nc_keys_of */
#define HDP_SECTION_KEYS hdp_nc_keys
HDP_SECTION_DEFINE(nc, HDP_NC_KEYS, nc_finalize)

hdp_nc_keys *hdp_nc_keys_edit(hdp_model *m)
{
    return hdp_model_section(m, &hdp_nc_section);
}
