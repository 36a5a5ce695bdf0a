/*
 * kl_keys.c — the [kl] section of the model files: KL privacy of noisy GD on ReLU networks
 * (Ye et al.; docs/theory.md §8; hdpsgd/kl.h). Its keys, the names of its enums and the accessor
 * hdp_kl_keys_of. The combinations and sizes that the ranges cannot express are checked by
 * hdp_kl_model_check (kl.c) where a command runs the network, not at finalize. Registered
 * in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/kl.h"

#include <stddef.h>

static const char *const kl_init_names[] = {"lecun", "he", "ntk", "xavier", NULL};
static const char *const kl_loss_names[] = {"squared", "logistic", NULL};
static const char *const kl_network_names[] = {"linearised", "relu", NULL};

const char *hdp_kl_init_name(hdp_kl_init_kind k) { return kl_init_names[k]; }
const char *hdp_kl_loss_name(hdp_kl_loss_kind k) { return kl_loss_names[k]; }
const char *hdp_kl_network_name(hdp_kl_network_kind k) { return kl_network_names[k]; }

#define P(f) offsetof(hdp_kl_keys, f)

static const hdp_schema_key keys[] = {
    {"init", HDP_KEY_ENUM, P(init), "he", 0, 0, 0, kl_init_names,
     "initialisation (Ye et al., Table 1): lecun | he | ntk | xavier"},
    {"depth", HDP_KEY_LONG, P(depth), "6", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 64, NULL,
     "depth L (integer in [2, 64]): L - 1 hidden ReLU layers and a linear output layer"},
    {"width", HDP_KEY_LONG, P(width), "256", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL,
     "hidden width m (integer in [1, 1e5])"},
    {"d", HDP_KEY_LONG, P(d), "32", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL,
     "input dimension d (integer in [1, 1e5]); x uniform on the sphere of radius sqrt(d)"},
    {"o", HDP_KEY_LONG, P(o), "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 4000, NULL,
     "outputs o (integer in [1, 4000]); labels sign(u_a^T x) of a random linear teacher"},
    {"n", HDP_KEY_LONG, P(n), "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 4000, NULL,
     "training samples n (integer in [2, 4000]; n o <= 4000)"},
    {"sigma", HDP_KEY_DOUBLE, P(sigma), "0.03", HDP_R_LO_CLOSED, 1e-50, 0, NULL,
     "noise scale sigma >= 1e-50: noisy GD adds sqrt(2 eta sigma^2) N(0, I) per step (eq. 4); "
     "the KL grows as eta/sigma^2 (smaller sigma overflows its bound)"},
    {"eta", HDP_KEY_DOUBLE, P(eta), "0.001", HDP_R_LO_OPEN | HDP_R_HI_CLOSED, 0, 1e50, NULL,
     "step size eta in (0, 1e50]"},
    {"epochs", HDP_KEY_LONG, P(epochs), "50", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1000000, NULL,
     "full-batch noisy GD steps (integer >= 1); Langevin time T = eta epochs"},
    {"loss", HDP_KEY_ENUM, P(loss), "logistic", 0, 0, 0, kl_loss_names,
     "squared (|f - y|^2/2: an OU process, exact KL) | logistic (the seed's, per output)"},
    {"budget", HDP_KEY_DOUBLE, P(budget), "1", HDP_R_LO_OPEN, 0, 0, NULL,
     "target KL privacy budget eps > 0 for Corollary 6.4 (kl bound)"},
    {"delta", HDP_KEY_DOUBLE, P(delta), "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL,
     "target delta in [0, 1) of (0, delta)-DP by Pinsker, KL budget 2 delta^2; 0 = none"},
    {"runs", HDP_KEY_LONG, P(runs), "32", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL,
     "noise paths per initialisation of `kl run` (integer in [2, 1e6]; --runs overrides it)"},
    {"inits", HDP_KEY_LONG, P(inits), "8", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL,
     "random initialisations of `kl run` (integer in [1, 1e5])"},
    {"init_runs", HDP_KEY_LONG, P(init_runs), "1000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     2, 1e8, NULL,
     "networks drawn by `kl init` per scheme and depth (integer in [2, 1e8]; --runs overrides it)"},
    {"network", HDP_KEY_ENUM, P(network), "linearised", 0, 0, 0, kl_network_names,
     "what `kl run` trains: linearised (f(W_0) + J (W - W_0), eq. 3) | relu (also the real "
     "ReLU network by back-propagation, on the same data and initialisations)"},
    {"relu_runs", HDP_KEY_LONG, P(relu_runs), "4", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL,
     "noise paths per initialisation of the real network (kl.network = relu; integer in [2, 1e6]):"
     " each costs a forward and backward pass per epoch"},
};

const hdp_schema_section hdp_kl_section = {"kl", keys, HDP_SCHEMA_NKEYS(keys),
                                           sizeof(hdp_kl_keys), NULL};

const hdp_kl_keys *hdp_kl_keys_of(const hdp_model *m)
{
    return hdp_model_section_const(m, &hdp_kl_section);
}
