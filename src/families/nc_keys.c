/*
 * nc_keys.c — the [nc] section of the model files: NoisyGD on neural-collapse features
 * (the NC paper; docs/theory.md §8; hdpsgd/nc.h). Its keys, the names of its enums, the sizes that
 * finalize checks (the other combinations are checked by hdp_nc_spec_from_model, nc_spec.c) and
 * the accessors hdp_nc_keys_of, hdp_nc_keys_edit. Registered in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/nc.h"

#include <stddef.h>

static const char *const nc_loss_names[] = {"ce", "logistic", "squared", NULL};
static const char *const nc_init_names[] = {"zero", "gaussian", NULL};
static const char *const nc_perturbation_names[] = {"none", "test-offset", "adversarial",
                                                    "stochastic", "train-offset", "both",
                                                    "per-sample", NULL};
static const char *const nc_remedy_names[] = {"none", "center", "pca", NULL};

const char *hdp_nc_loss_name(hdp_nc_loss_kind k) { return nc_loss_names[k]; }
const char *hdp_nc_init_name(hdp_nc_init_kind k) { return nc_init_names[k]; }
const char *hdp_nc_perturbation_name(hdp_nc_perturbation_kind k)
{
    return nc_perturbation_names[k];
}
const char *hdp_nc_remedy_name(hdp_nc_remedy_kind k) { return nc_remedy_names[k]; }

#define P(f) offsetof(hdp_nc_keys, f)

static const hdp_schema_key keys[] = {
    {"K", HDP_KEY_LONG, P(K), "10", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1000, NULL,
     "classes K (integer in [2, 1000]); features are the K-simplex ETF in R^p"},
    {"p", HDP_KEY_LONG, P(p), "1000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e7, NULL,
     "feature dimension p (integer in [K, 1e7])"},
    {"n", HDP_KEY_LONG, P(n), "250", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e7, NULL,
     "training samples in total, over all classes (integer in [K, 1e7])"},
    {"imbalance", HDP_KEY_DOUBLE, P(imbalance), "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL,
     "0 = balanced classes; alpha in (0, 1): class 1 has round(alpha n) samples, the other "
     "classes share the rest evenly (K = 2: the NC paper's alpha)"},
    {"G", HDP_KEY_DOUBLE, P(G), "1", HDP_R_LO_OPEN, 0, 0, NULL,
     "clipping threshold G > 0: per-sample gradients g are scaled by min(1, G/||g||)"},
    {"rho", HDP_KEY_DOUBLE, P(rho), "0.005", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL,
     "zCDP parameter PER STEP (the NC paper's rho; rho_z in privacy.h terms), > 0 or inf (no "
     "noise): noise N(0, G^2/(2 rho) I); T steps are (T rho)-zCDP"},
    {"steps", HDP_KEY_LONG, P(steps), "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL,
     "steps T of NoisyGD / NoisySGD (integer in [1, 1e7])"},
    {"eta", HDP_KEY_DOUBLE, P(eta), "1", HDP_R_LO_OPEN, 0, 0, NULL, "learning rate eta > 0"},
    {"loss", HDP_KEY_ENUM, P(loss), "ce", 0, 0, 0, nc_loss_names,
     "loss: ce (softmax cross-entropy) | logistic (K = 2, one vector theta) | squared "
     "(one-hot targets)"},
    {"init", HDP_KEY_ENUM, P(init), "zero", 0, 0, 0, nc_init_names,
     "initial weights: zero | gaussian (N(0, init_std^2) entries)"},
    {"init_std", HDP_KEY_DOUBLE, P(init_std), "1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "init = gaussian: standard deviation >= 0 of every initial weight (the NC paper, E: 1)"},
    {"perturbation", HDP_KEY_ENUM, P(perturbation), "none", 0, 0, 0, nc_perturbation_names,
     "none | test-offset | adversarial | stochastic (test) | train-offset | both (train and "
     "test offset) | per-sample (training); all of l_inf size beta (hdpsgd help nc)"},
    {"beta", HDP_KEY_DOUBLE, P(beta), "0.1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "l_inf size beta >= 0 of the perturbation"},
    {"remedy", HDP_KEY_ENUM, P(remedy), "none", 0, 0, 0, nc_remedy_names,
     "none | center (subtract the feature mean) | pca (project on the top K-1 principal "
     "directions of public samples)"},
    {"public_samples", HDP_KEY_LONG, P(public_samples), "500", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     2, 1e7, NULL,
     "remedy = pca: public samples (integer in [2, 1e7]), drawn like the training features"},
    {"batch", HDP_KEY_LONG, P(batch), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e7, NULL,
     "0 = full batch (NoisyGD); b in [1, n] = NoisySGD with uniform batches of b samples; at most 1e7"},
    {"draws", HDP_KEY_LONG, P(draws), "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e8, NULL,
     "Monte Carlo draws (integer in [1, 1e8]; --draws overrides it)"},
    {"test_samples", HDP_KEY_LONG, P(test_samples), "10", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     1, 1e6, NULL,
     "perturbation = stochastic: random test points per class and draw (integer in [1, 1e6])"},
    {"delta", HDP_KEY_DOUBLE, P(delta), "1e-5", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "delta in (0, 1) of the reported (epsilon, delta)-DP (Canonne-Kamath-Steinke)"},
};

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

const hdp_schema_section hdp_nc_section = {"nc", keys, HDP_SCHEMA_NKEYS(keys),
                                           sizeof(hdp_nc_keys), nc_finalize};

const hdp_nc_keys *hdp_nc_keys_of(const hdp_model *m)
{
    return hdp_model_section_const(m, &hdp_nc_section);
}

hdp_nc_keys *hdp_nc_keys_edit(hdp_model *m)
{
    return hdp_model_section(m, &hdp_nc_section);
}
