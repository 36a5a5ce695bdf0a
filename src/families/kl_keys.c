/*
 * kl_keys.c — the [kl] section of the model files: KL privacy of noisy GD on ReLU networks
 * (Ye et al.; docs/theory.md §8; hdpsgd/kl.h). Its keys, the names of its enums and the accessor
 * hdp_kl_keys_of. The combinations and sizes that the ranges cannot express are checked by
 * hdp_kl_model_check (kl.c) where a command runs the network, not at finalize. Registered
 * in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/kl.h"

static const char *const kl_init_names[] = {"lecun", "he", "ntk", "xavier", NULL};
static const char *const kl_loss_names[] = {"squared", "logistic", NULL};
static const char *const kl_network_names[] = {"linearised", "relu", NULL};

const char *hdp_kl_init_name(hdp_kl_init_kind k) { return kl_init_names[k]; }
const char *hdp_kl_loss_name(hdp_kl_loss_kind k) { return kl_loss_names[k]; }
const char *hdp_kl_network_name(hdp_kl_network_kind k) { return kl_network_names[k]; }

/* the rows of the list in hdpsgd/kl.h */
#define HDP_SECTION_KEYS hdp_kl_keys
static const hdp_schema_key keys[] = {HDP_KL_KEYS(HDP_SECTION_ROW)};

const hdp_schema_section hdp_kl_section = {"kl", keys, HDP_SCHEMA_NKEYS(keys),
                                           sizeof(hdp_kl_keys), NULL};

const hdp_kl_keys *hdp_kl_keys_of(const hdp_model *m)
{
    return hdp_model_section_const(m, &hdp_kl_section);
}
