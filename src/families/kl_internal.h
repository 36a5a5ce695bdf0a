/*
 * kl_internal.h — what the files of the KL family (src/families/kl*.c) share; internal.
 *
 * The per-output loss and its derivative, the per-initialisation record of hdp_kl_run and
 * what its initialisations read, and the functions one file of the family calls in another:
 * the architecture check (kl_net.c), the linearised run of one initialisation (kl_linear.c)
 * and the real network's workspace and run of one initialisation (kl_relu.c), which the
 * driver (kl.c) hands to the generic Monte Carlo loop (src/sim/mc.h).
 */
#ifndef HDPSGD_KL_INTERNAL_H
#define HDPSGD_KL_INTERNAL_H

#include "hdpsgd/kl.h"

#include <math.h>

/* l(f; y) and l'(f; y) per output: squared |f - y|^2/2, logistic log(1 + exp(-y f)) */
static inline double loss_value(hdp_kl_loss_kind k, double f, double y)
{
    if (k == HDP_KL_SQUARED)
        return 0.5 * (f - y) * (f - y);
    const double t = -y * f;
    return t > 0 ? t + log1p(exp(-t)) : log1p(exp(t));
}

static inline double loss_deriv(hdp_kl_loss_kind k, double f, double y)
{
    if (k == HDP_KL_SQUARED)
        return f - y;
    const double t = y * f; /* l' = -y sigmoid(-y f) = -y / (1 + exp(y f)) */
    return t > 0 ? -y * exp(-t) / (1.0 + exp(-t)) : -y / (1.0 + exp(t));
}

/* Per-initialisation output of the driver. */
typedef struct {
    double *sum, *sum2; /* [(epochs+1) x n]: over paths, of S_j = sum_{k<e} eta ||Delta_j||^2 */
    double *exact;      /* [(epochs+1) x n]: exact cumulative (squared loss) */
    double *loss;       /* [epochs+1]: mean training loss over paths */
    void *block;        /* sum, sum2, exact and loss (free) */
    hdp_kl_problem pb;
    int unstable;
    double eta_lmax;
} init_out;

/* what the initialisations read */
typedef struct {
    const hdp_kl_spec *s;
    const double *X, *Y;
} init_ctx;

/* [kl] depth, width, d and o in range, and the network not too big (kl_net.c) */
hdp_status hdp_kl_arch_check(const hdp_kl_arch *a, hdp_error *err);
/* 1 with why when a network of architecture a has more than 4e8 weights, else 0 (kl_net.c) */
int hdp_kl_arch_too_big(const hdp_kl_arch *a, char *why, size_t size);

/* Initialisation idx of the linearised network on its stream g, into its slot (an init_out;
 * kl_linear.c). */
hdp_status hdp_kl_linear_run_one(const void *vc, long idx, void *ws, hdp_xoshiro *g,
                                 void *slot, hdp_error *err);

/* The real network's thread workspace and initialisation idx on its stream g, into its slot (an
 * init_out; kl_relu.c). */
void hdp_kl_relu_ws_free(void *vw);
void *hdp_kl_relu_ws_alloc(const void *vc);
hdp_status hdp_kl_relu_run_one(const void *vc, long idx, void *vw, hdp_xoshiro *g,
                                void *slot, hdp_error *err);

#endif
