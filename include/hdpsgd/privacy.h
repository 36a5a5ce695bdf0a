/*
 * hdpsgd/privacy.h — privacy accounting (docs/theory.md §6).
 *
 * Conventions: rho is the parameter of docs/theory.md §1 (the output is
 * (rho^2/2)-zCDP); rho_z = rho^2/2 is the zCDP parameter proper.
 */
#ifndef HDPSGD_PRIVACY_H
#define HDPSGD_PRIVACY_H

#include "hdpsgd/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Privacy amplification by iteration (Feldman-Koren-Talwar), docs/theory.md §6:
 * rho_acc = max_k eta_k / sqrt(sum_{j >= k} sigma_j^2) over k = 0..n-1, for
 * arrays eta[n], sigma[n] (sigma_j not squared). Suffix sums in long double.
 * Returns +inf when some eta_k > 0 has no noise after it. */
double hdp_privacy_accountant(const double *eta, const double *sigma, long n);

/* The accountant applied to the discrete schedule of docs/theory.md §1 with n steps.
 * For every schedule kind this equals the schedule's rho (a unit test). */
double hdp_privacy_accountant_schedule(const hdp_schedule *s, long n);

/* The same for batched one pass (docs/theory.md §6.1, batches): the K = ceil(n/B) steps of
 * hdp_sched_batch_step, step k's sensitivity eta_k/B_k (a row moves the batch's average by
 * at most 2 C/B_k): rho_acc = max_k (eta_k/B_k) / sqrt(sum_{j >= k} sigma_j^2). Equals the
 * schedule's rho for every B (a unit test); B = 1 is hdp_privacy_accountant_schedule. */
double hdp_privacy_accountant_batches(const hdp_schedule *s, long n, long B);

/* ---- The accountant's precondition (docs/theory.md §6.1) ----
 * Amplification by iteration needs every update map to be non-expansive. The clipped
 * square-loss step theta -> theta - eta_k clip(x (x^T theta - y)) is 1-Lipschitz exactly when
 * eta_k ||x||^2 <= 2 (clipped or not, whatever y and C_clip). Gaussian rows are unbounded, so
 * the guarantee of hdp_privacy_accountant holds for data whose rows satisfy it; the model key
 * clip.feature_norm = B clips every row to ||x|| <= B (x <- x min(1, B/||x||)) before the
 * gradient, which enforces it when eta_max B^2 <= 2 (B = auto: the largest such B). */

/* ln P(sum_i lambda_i g_i^2 > t) for g ~ N(0, I_d), lambda_i >= 0 (d of them, any order;
 * equal neighbours are grouped): the law of ||x||^2 for x ~ N(0, diag(lambda)). Exact
 * (GSL's chi-square) when the positive lambda_i are all equal, else the second-order
 * Lugannani-Rice saddlepoint approximation (relative error O(1/d^2) for d comparable
 * weights), computed in logarithms so that tails far below 1e-308 keep their exponent.
 * 0 for t <= 0 (certain), -inf when the sum cannot exceed t; NaN for a negative or NaN
 * lambda_i, d < 1 or a NULL pointer. */
double hdp_norm2_log_tail(const double *lambda, long d, double t);

/* The B of clip.feature_norm that a finalized model uses: 0 when off, the value given, or for
 * auto the largest double B with eta_max B^2 <= 2 (eta_max = eta~(0)/n, the largest step:
 * schedules are non-increasing). NaN for a NULL model. */
double hdp_feature_norm_bound(const hdp_model *m);

/* The precondition on one model and its spectrum (docs/theory.md §6.1). */
typedef struct {
    double eta_max;        /* the largest step eta_k = eta~(0)/n */
    double threshold;      /* 2/eta_max: every step is non-expansive when ||x||^2 <= this */
    double feature_norm;   /* B (0: off), hdp_feature_norm_bound */
    double p_step;         /* P(eta_max ||x||^2 > 2) for a row after clip.feature_norm: the
                              largest per-step probability of a violation */
    double log10_p_step;   /* its log10 (-inf: impossible), also below double's range */
    double expected;       /* expected violating steps in one run of n steps, sum_k P_k
                              (exact, or an upper bound when !exact) */
    double expected_lower; /* = expected when exact, else a lower bound */
    int exact;             /* 1: summed over every step; 0: bounded over blocks of steps
                              (P_k is non-increasing in k) because n x distinct eigenvalues is
                              above 5e7: the block where the bounds differ most is split until
                              they agree to 1e-9 or 2e7 / distinct eigenvalues evaluations (at
                              least 128, at most 8192) are spent */
    long blocks;           /* !exact: the number of blocks */
    double clip_fraction;  /* P(||x|| > B): the fraction of rows feature clipping changes
                              (0 when off), what the risk ODE leaves out */
    double clip_moment;    /* E[(||x||^2 - B^2)_+] / Tr Sigma: the fraction of the second moment
                              Tr E[x x^T] that it removes (0 when off) */
} hdp_nonexpansive;

/* Evaluate the precondition for a finalized model m and its spectrum (hdp_spectrum_build).
 * HDP_EINPUT for NULL arguments or a model that fails hdp_model_check; out zeroed first. */
hdp_status hdp_nonexpansive_eval(const hdp_model *m, const double *lambda, long d,
                                 hdp_nonexpansive *out, hdp_error *err);

/* The privacy of a model at delta (hdpsgd privacy; its fields: hdpsgd/fields.h, table
 * "privacy"). */
typedef struct {
    double rho, rho_z, delta, epsilon_bs, epsilon_cks;
    double rho_accounted;      /* the accountant on the n discrete steps (NaN: not run) */
    int accountant_equals_rho; /* rho_accounted equals rho to 1e-9 (1 when not run) */
    long n;
    char schedule[32];         /* schedule.kind */
} hdp_privacy_summary;

/* What hdpsgd privacy adds with --epsilon (hdpsgd/fields.h, table privacy_target; NaN: not
 * given): the target and the rho, rho_z meeting it at the model's delta; and at each --delta
 * (table privacy_at_delta; rho_for_target NaN without a target). */
typedef struct {
    double target_epsilon, rho_for_target, rho_z_for_target;
} hdp_privacy_target;

typedef struct {
    double delta, epsilon, epsilon_bs, rho_for_target;
} hdp_privacy_at_delta;

/* The deltas of hdpsgd privacy --delta (hdpsgd/fields.h: privacy_deltas, the JSON's array
 * at_delta of privacy_at_delta objects). */
typedef struct {
    long count;
    const hdp_privacy_at_delta *at;
} hdp_privacy_deltas;

/* The privacy of DP-GD (hdpsgd privacy --dpgd; hdpsgd/fields.h, table dpgd_privacy): given
 * sigma, epsilon_simple (the others NaN); given a target epsilon, target_epsilon,
 * sigma_simple and sigma_zcdp (epsilon_simple NaN). */
typedef struct {
    double eta;
    long steps;
    double sigma, rho_z, delta, epsilon_bs, epsilon_cks;
    double epsilon_simple, target_epsilon, sigma_simple, sigma_zcdp;
    int simple_applies;
    double simple_epsilon_max;
} hdp_dpgd_privacy;

/* zCDP (rho_z) to (epsilon, delta)-DP, Bun-Steinke: rho_z + 2 sqrt(rho_z ln(1/delta)). */
double hdp_zcdp_epsilon_bs(double rho_z, double delta);

/* zCDP to (epsilon, delta)-DP, Canonne-Kamath-Steinke (tighter):
 * min over alpha > 1 of alpha rho_z + ln(1 - 1/alpha) - (ln delta + ln alpha)/(alpha - 1).
 * rho_z = inf gives inf; rho_z = 0 gives 0. */
double hdp_zcdp_epsilon_cks(double rho_z, double delta);

/* The rho_z whose CKS epsilon at delta equals epsilon (bracketing root finder).
 * Returns HDP_EINPUT for epsilon <= 0 or delta outside (0, 1). */
hdp_status hdp_zcdp_from_epsilon(double epsilon, double delta, double *rho_z, hdp_error *err);

/* ---- Full-batch DP-GD (docs/theory.md §6; Mondelli's notes and Bombari-Mondelli) ----
 * T steps of  theta <- theta - eta (1/n) sum_i clip(g_i) + sqrt(eta) (2 C_clip / n) sigma N(0, I_p).
 * Replacing one sample moves the clipped gradient sum by at most 2 C_clip, so a step
 * has sensitivity 2 eta C_clip / n against Gaussian noise of standard deviation
 * sqrt(eta) 2 C_clip sigma / n: it is (eta / (2 sigma^2))-zCDP, and T steps compose to
 *     rho_z = eta T / (2 sigma^2)                         (zCDP parameter proper).
 * Bombari and Mondelli ("Privacy for free in the overparameterized regime", PNAS 2025;
 * Bombari-Mondelli) state the (epsilon, delta) guarantee directly, the "simple bound" below:
 *     sigma >= sqrt(eta T) sqrt(8 ln(1/delta)) / epsilon,  valid for epsilon in (0, 8 ln(1/delta)).
 * That bound is looser than the zCDP route (it is Bun-Steinke's leading term with a
 * factor 2 to spare), so the zCDP route gives the smaller sigma for the same (epsilon, delta).
 * eta > 0 is the step size, steps = T >= 1, sigma > 0 the noise multiplier of the paper.
 */

/* rho_z = eta T / (2 sigma^2) (docs/theory.md §6); sigma = 0 gives inf. */
double hdp_dpgd_rho_z(double eta, long steps, double sigma);

/* The simple bound's epsilon for a given sigma: sqrt(eta T) sqrt(8 ln(1/delta)) / sigma
 * (docs/theory.md §6).
 * The formula is only a guarantee when the result lies in (0, 8 ln(1/delta)); check with
 * hdp_dpgd_simple_applies. */
double hdp_dpgd_epsilon_simple(double eta, long steps, double sigma, double delta);

/* The simple bound's sigma for a target epsilon: sqrt(eta T) sqrt(8 ln(1/delta)) / epsilon
 * (docs/theory.md §6); a guarantee only when hdp_dpgd_simple_applies(epsilon, delta). */
double hdp_dpgd_sigma_simple(double eta, long steps, double epsilon, double delta);

/* 1 when epsilon lies in (0, 8 ln(1/delta)), the range of the simple bound (docs/theory.md §6). */
int hdp_dpgd_simple_applies(double epsilon, double delta);

/* The zCDP route (docs/theory.md §6): rho_z from the CKS calibration of (epsilon, delta)
 * (hdp_zcdp_from_epsilon), then sigma = sqrt(eta T / (2 rho_z)). Writes sigma and,
 * when rho_z_out is not NULL, rho_z. HDP_EINPUT for eta <= 0, steps < 1, epsilon <= 0
 * or delta outside (0, 1). */
hdp_status hdp_dpgd_sigma_zcdp(double eta, long steps, double epsilon, double delta,
                               double *sigma, double *rho_z_out, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
