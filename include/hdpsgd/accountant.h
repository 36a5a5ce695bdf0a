/*
 * hdpsgd/accountant.h — privacy accounting of the Poisson-subsampled Gaussian mechanism, the
 * DP-SGD that practitioners run (docs/theory.md §6.5): T steps, each sampling every row with
 * probability q, adding N(0, sigma^2 C^2 I) to the sum of the clipped gradients of the batch.
 * Neighbouring data sets differ by adding or removing one row (the convention of Opacus,
 * TensorFlow Privacy and dp_accounting).
 *
 * Three accountants, each giving epsilon at a delta:
 *   - PLD: the privacy-loss distribution of one step, discretised on a grid of width h with
 *     the "connect the dots" construction (a dominating pair, so the answer is an upper bound),
 *     composed T times by FFT, tails bounded by Chernoff and counted as failure probability;
 *     epsilon is taken over both directions (add and remove). Tight.
 *   - RDP: Renyi DP of the subsampled Gaussian (Mironov, Talwar, Zhang), composed over T
 *     steps, converted to (epsilon, delta) by the improved conversion (Balle et al. 2020).
 *   - RDP classic: the same RDP curve with eps = min_a RDP(a) + log(1/delta)/(a - 1), the
 *     conversion TensorFlow Privacy's published tables use.
 * PLD <= RDP <= RDP classic.
 */
#ifndef HDPSGD_ACCOUNTANT_H
#define HDPSGD_ACCOUNTANT_H

#include "hdpsgd/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which accountant calibrates sigma, and the one a summary's `epsilon` names. */
typedef enum { HDP_ACCOUNTANT_PLD = 0, HDP_ACCOUNTANT_RDP = 1 } hdp_accountant_kind;

/* "pld" or "rdp" */
const char *hdp_accountant_name(hdp_accountant_kind k);

typedef struct {
    double sample_rate;       /* q in (0, 1] */
    double noise_multiplier;  /* sigma > 0 (the noise's standard deviation over the clipping norm) */
    long long steps;          /* T >= 1 */
    double delta;             /* in (0, 1) */
    double pld_interval;      /* the PLD's grid width h (0: the default, 1e-4) */
} hdp_accountant_query;

typedef struct {
    double epsilon_pld;         /* an upper bound on the exact epsilon (grid and tails pessimistic) */
    double epsilon_pld_error;   /* its excess over the exact value, estimated: eps(2h) - eps(h) */
    double pld_tail_mass;       /* the probability counted into delta for truncated tails */
    double epsilon_rdp;         /* RDP, Balle et al. 2020 conversion */
    double epsilon_rdp_classic; /* RDP, eps = RDP(a) + log(1/delta)/(a-1) */
    double rdp_order;           /* the optimal order of the improved conversion */
    double rdp_order_classic;   /* the optimal order of the classic conversion */
} hdp_accountant_result;

/* What a summary of the accountants writes besides their result (hdpsgd/fields.h:
 * accountant_choice, accountant_target, accountant_epochs): the chosen accountant, the target
 * epsilon it calibrated to (NaN: none) and the epochs the steps were given as (NaN: none). */
typedef struct {
    const hdp_accountant_result *result;
    hdp_accountant_kind kind;
    double target_epsilon;
    double epochs;
} hdp_accountant_choice;

/* The largest number of steps the accountants take (the PLD's composition needs O(T) memory at
 * the worst) */
#define HDP_ACCOUNTANT_MAX_STEPS 100000000LL

/* Epsilon of the query by all three accountants. HDP_EINPUT naming the value for q outside
 * (0, 1], sigma <= 0 or not finite, steps < 1 or above HDP_ACCOUNTANT_MAX_STEPS, delta outside
 * (0, 1); HDP_ENOMEM when the PLD's arrays cannot be had. Infinite epsilons are +inf. */
hdp_status hdp_accountant_epsilon(const hdp_accountant_query *q, hdp_accountant_result *out,
                                  hdp_error *err);

/* One accountant only: epsilon of the query by kind (PLD or RDP with the improved conversion). */
hdp_status hdp_accountant_epsilon_of(const hdp_accountant_query *q, hdp_accountant_kind kind,
                                     double *epsilon, hdp_error *err);

/* RDP of one step of the Poisson-subsampled Gaussian at order alpha > 1 (not composed). */
double hdp_rdp_subsampled_gaussian(double q, double sigma, double alpha);

/* The smallest sigma (to relative 1e-6) whose epsilon by `kind` is <= target, for q, steps,
 * delta as in the query (its noise_multiplier is ignored). HDP_EINPUT when no sigma up to
 * 1e6 meets the target. */
hdp_status hdp_accountant_calibrate(const hdp_accountant_query *q, hdp_accountant_kind kind,
                                    double target_epsilon, double *sigma, hdp_error *err);

/* Steps of E epochs at sample rate q: ceil(E / q) (E / q rounded first to 1e-9, so that
 * 60 epochs at q = 256/60000 are 14063 steps). */
long long hdp_accountant_steps_for_epochs(double epochs, double q);

#ifdef __cplusplus
}
#endif
#endif
