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

/* the rows of the list in hdpsgd/kl.h, hdp_kl_section and hdp_kl_keys_of */
#define HDP_SECTION_KEYS hdp_kl_keys
HDP_SECTION_DEFINE(kl, HDP_KL_KEYS, NULL)
