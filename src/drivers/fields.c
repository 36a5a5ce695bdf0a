/*
 * fields.c — the result tables of hdpsgd/fields.h: every name the JSON summaries, the CSV
 * columns, the handle's records and the Python result classes give a result's fields; a data
 * set's tables are in fields_data.c, the schedule design's in fields_design.c, the row
 * initialisers they share in fields_internal.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hdpsgd/accountant.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/kl.h"
#include "hdpsgd/ncsweep.h"
#include "hdpsgd/netexp.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/rf.h"
#include "hdpsgd/si.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/validate.h"

#include "drivers/fields_internal.h"

/* ---- the risk ODE ---- */

TABLE(hdp_ode_fields, "ode", NULL,
      "the risk ODE of homogenized DP-SGD (hdpsgd ode)",
    COL(hdp_ode_result, "t", t, "%.10g", "time t = k/n in [0, 1], the output grid ([ode] points)"),
    COL(hdp_ode_result, "risk", risk, "%.12g",
        "predicted excess risk R(t); the row t = 1 includes the final-step noise"),
    COL(hdp_ode_result, "risk_upper", upper, "%.12g", "upper bound of R(t) (docs/theory.md §3); empty where it is not finite"),
    COL(hdp_ode_result, "risk_lower", lower, "%.12g", "lower bound of R(t) (docs/theory.md §3); empty where it is not finite"),
    COL(hdp_ode_result, "mu_c", mu, "%.12g", "clipping factor mu_c(R(t))"),
    COL(hdp_ode_result, "nu_c", nu, "%.12g", "clipping factor nu_c(R(t))"),
    COL(hdp_ode_result, "eta", eta, "%.12g", "the schedule's learning rate eta~(t)"),
    COL(hdp_ode_result, "sigma2", sigma2, "%.12g", "the schedule's noise variance sigma~(t)^2"),
    {.name = "final_risk", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_ode_result, final_risk),
     .help = "predicted excess risk of the output theta_n: R(1) plus final_noise",
     .sweep = "final_risk"},
    REAL(hdp_ode_result, risk_before_final_noise, "R(1), the risk ODE at t = 1"),
    REAL(hdp_ode_result, final_noise, "the last step's private noise, 2 c^2 gamma^2 eta~(1)^2 / rho^2"),
    BOOL_AS(hdp_ode_result, "stable", stable, 0,
            "sup eta~ < 2/gamma: the schedule is stable (docs/theory.md §3)"),
    REAL_AS(hdp_ode_result, "upper_finite_until", upper_until,
            "the upper bound is finite at the output points t <= this (1: throughout; its "
            "equation may overflow on wide spectra, the risk does not depend on it)"),
    REAL_AS(hdp_ode_result, "lower_finite_until", lower_until,
            "the lower bound is finite at the output points t <= this (1: throughout)"),
    REAL(hdp_ode_result, eta_sup, "sup of eta~ over [0, 1]"),
    INT(hdp_ode_result, bins, "eigenvalue bins m of the spectrum"),
    INT(hdp_ode_result, rhs_evals, "right-hand side evaluations of the solver"),
    INT(hdp_ode_result, steps, "steps of the solver"),
    TEXT(hdp_ode_result, solver, "the solver that gave the result: dop853 or cvode ([ode] solver), or rows (ode.model = rows: the rows' recursion)"),
    REAL(hdp_ode_result, solve_seconds, "wall time of the integration, seconds"),
    REAL(hdp_ode_result, binning_seconds, "bins = auto: wall time of the trial solves, seconds"),
    REAL(hdp_ode_result, clip_fit_seconds,
         "wall time of fitting the clipping factors once (non-Gaussian label noise; 0 otherwise), "
         "seconds"));

/* ---- the Monte Carlo ---- */

TABLE(hdp_mc_fields, "mc", NULL,
      "the Monte Carlo of DP-SGD (hdpsgd sim) or of the homogenized SDE (hdpsgd sde)",
    COL(hdp_mc_result, "t", t, "%.10g", "time t = k/n in [0, 1], the ODE's grid"),
    COL(hdp_mc_result, "mean", mean, "%.12g", "mean excess risk over the runs that did not diverge"),
    COL(hdp_mc_result, "stderr", stderr_, "%.12g", "standard error of the mean"),
    COL(hdp_mc_result, "q10", q10, "%.12g", "10% quantile of the excess risk over the runs"),
    COL(hdp_mc_result, "q50", q50, "%.12g", "median of the excess risk over the runs"),
    COL(hdp_mc_result, "q90", q90, "%.12g", "90% quantile of the excess risk over the runs"),
    COL(hdp_mc_result, "clipped_fraction", clipped, "%.12g",
        "fraction of clipped steps in (t_{i-1}, t_i]; 0 at t = 0"),
    {.name = "final_risk_mean", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_mc_result, final_mean),
     .help = "mean excess risk at t = 1 (theta_n)", .sweep = "final_risk"},
    {.name = "final_risk_stderr", .kind = HDP_FIELD_REAL,
     .offset = offsetof(hdp_mc_result, final_stderr), .help = "its standard error",
     .sweep = "final_stderr"},
    REAL(hdp_mc_result, final_jump_mean,
         "mean jump of the excess risk at the last step's private noise (docs/theory.md §3)"),
    REAL(hdp_mc_result, final_jump_stderr, "its standard error"),
    INT(hdp_mc_result, runs, "runs requested"),
    {.name = "diverged_runs", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_mc_result, diverged_runs),
     .help = "runs stopped as diverged (excluded from the statistics)", .sweep = "diverged"},
    REAL_AS(hdp_mc_result, "divergence_threshold", threshold,
            "a run diverged when its excess risk exceeded this"),
    REAL(hdp_mc_result, rho_accounted,
         "the accountant of docs/theory.md §6 on the realised schedule (inf: no noise; null: "
         "sgd.sampling = shuffle | poisson, see epsilon)"));

/* an int member (INT fields are long) */
GETTER(get_threads, ((const hdp_mc_result *)obj)->threads)

/* the run's time fields, after the model's in the JSON */
TABLE(hdp_mc_run_fields, "mc_run", NULL,
      "the Monte Carlo's steps, time and threads",
    INT(hdp_mc_result, steps,
        "steps per run: ceil(n/B) (sim; n for batch 1), round(1/h) (sde), ceil(E/q) (poisson) "
        "or E ceil(N/B) (shuffle)"),
    REAL(hdp_mc_result, seconds, "wall time, seconds"),
    GET("threads", HDP_FIELD_INT, get_threads, "OpenMP threads used (the numbers do not depend on it)"));

#define MC(obj) ((const hdp_mc_result *)(obj))
static double ok_runs(const void *obj) { return (double)(MC(obj)->runs - MC(obj)->diverged_runs); }

GETTER(get_per_run, ok_runs(obj) > 0 ? MC(obj)->nonexpansive_violations / ok_runs(obj) : NAN)
GETTER(get_fraction, ok_runs(obj) > 0 ? MC(obj)->nonexpansive_violations /
                                            (ok_runs(obj) * (double)MC(obj)->steps)
                                      : NAN)

GETTER(get_feature_norm, hdp_feature_norm_bound(ctx))

TABLE(hdp_mc_rows_fields, "mc_rows", NULL,
      "the privacy accountant's precondition in DP-SGD's runs (hdpsgd sim only: the SDE draws no "
      "rows; context: the model)",
    REAL(hdp_mc_result, nonexpansive_violations,
         "steps with eta_k ||x_k||^2 > 2, not non-expansive (docs/theory.md §6.1), over the runs"),
    GET("nonexpansive_violations_per_run", HDP_FIELD_REAL, get_per_run,
        "nonexpansive_violations per run that did not diverge"),
    GET("nonexpansive_violation_fraction", HDP_FIELD_REAL, get_fraction,
        "nonexpansive_violations per step of the runs that did not diverge"),
    GET("feature_norm", HDP_FIELD_REAL, get_feature_norm,
        "the rows' norm bound B of clip.feature_norm (0: off)"),
    REAL(hdp_mc_result, feature_clipped, "rows clip.feature_norm clipped, over the runs"));

/* standard DP-SGD on a finite training set (hdp_mc_result.sgd, hdpsgd/finite.h) */
GETTER(get_sgd_steps, (double)((const hdp_mc_result *)obj)->sgd.compositions)

TABLE(hdp_mc_sgd_fields, "mc_sgd", NULL,
      "standard DP-SGD on a finite training set in hdpsgd sim (sgd.sampling = shuffle | poisson): "
      "its noise multiplier, sample rate and epsilon; its steps are steps",
    REAL_AS(hdp_mc_result, "noise_multiplier", sgd.noise_multiplier,
            "sigma: N(0, sigma^2 C^2 I) on the sum of the batch's clipped gradients, C = c sqrt(d) "
            "(sgd.noise_multiplier, or calibrated from the [privacy] budget when it is 0)"),
    BOOL_AS(hdp_mc_result, "noise_calibrated", sgd.calibrated, 0,
            "noise_multiplier was calibrated from the [privacy] budget by sgd.accountant"),
    REAL_AS(hdp_mc_result, "sample_rate", sgd.sample_rate,
            "q = B/N, sgd.batch over the training rows (data.train_size or the data file's)"),
    GET("accounted_steps", HDP_FIELD_INT, get_sgd_steps,
        "the Gaussian mechanisms composed: the steps (poisson) or the epochs (shuffle: each row in "
        "one batch per epoch, no amplification)"),
    REAL_AS(hdp_mc_result, "epsilon", sgd.epsilon,
            "epsilon at delta by sgd.accountant: Poisson-subsampled under add/remove neighbours, "
            "shuffle under replace-one (docs/theory.md §6.6; null: no noise)"),
    REAL_AS(hdp_mc_result, "delta", sgd.delta, "delta of the model (privacy.delta)"));

/* ---- the validator ---- */

TABLE(hdp_validate_side_fields, "validate_side", "sim_",
      "one side of the validator, Monte Carlo or SDE against the ODE",
    REAL(hdp_validate_side, max_abs_dev, "max over the grid of |mean - ODE|"),
    {.name = "max_rel_dev", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_validate_side, max_rel_dev),
     .help = "max over the grid of |mean - ODE| / ODE", .sweep = "max_rel_dev"},
    {.name = "max_z", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_validate_side, max_z),
     .help = "max over the grid of |mean - ODE| / stderr", .sweep = "max_z"},
    REAL(hdp_validate_side, final_risk, "mean excess risk at t = 1"),
    REAL_AS(hdp_validate_side, "final_risk_stderr", final_stderr, "its standard error"),
    REAL_AS(hdp_validate_side, "clipped_fraction", clipped, "mean clipped fraction over the run"),
    BOOL_AS(hdp_validate_side, "pass", pass, HDP_FIELD_OWN_PREFIX,
            "this side agrees with the ODE (rel_tol or z_tol at every point)"),
    BOOL_AS(hdp_validate_side, "within_rel_tol", within_rel_tol, HDP_FIELD_OWN_PREFIX,
            "max_rel_dev <= rel_tol: the deviation is within the relative tolerance everywhere"),
    BOOL_AS(hdp_validate_side, "significant", significant, HDP_FIELD_OWN_PREFIX,
            "max_z > z_tol: the deviation is statistically significant somewhere (the runs "
            "resolve it), whatever the verdict"),
    INT_AS(hdp_validate_side, "max_z_point", max_z_point, HDP_FIELD_NO_JSON,
           "index of the grid point of max_z (-1: no deviation anywhere)"),
    INT_AS(hdp_validate_side, "worst_point", worst_point, HDP_FIELD_NO_JSON,
           "index of the grid point that agrees least (-1: all agree)"));

static double get_rel_tol(const void *obj, const void *ctx) { (void)obj; return ((const hdp_model *)ctx)->rel_tol; }
static double get_z_tol(const void *obj, const void *ctx) { (void)obj; return ((const hdp_model *)ctx)->z_tol; }

TABLE(hdp_validate_fields, "validate", NULL,
      "the validator's verdict and privacy level (context: the model)",
    {.name = "pass", .kind = HDP_FIELD_BOOL, .offset = offsetof(hdp_validate_result, pass),
     .help = "the overall verdict: every side passed", .sweep = "pass"},
    REAL_AS(hdp_validate_result, "ode_final_risk", ode.final_risk, "the ODE's final risk"),
    REAL(hdp_validate_result, rho_z, "zCDP parameter rho^2/2"),
    REAL_AS(hdp_validate_result, "epsilon", epsilon_cks,
            "epsilon at delta, Canonne-Kamath-Steinke (the one to quote)"),
    REAL(hdp_validate_result, delta, "delta of the model (privacy.delta, default 1e-5)"),
    REAL(hdp_validate_result, epsilon_cks, "epsilon at delta, Canonne-Kamath-Steinke"),
    REAL(hdp_validate_result, epsilon_bs, "epsilon at delta, Bun-Steinke"),
    GET("rel_tol", HDP_FIELD_REAL, get_rel_tol, "relative tolerance of a point ([validate] rel_tol)"),
    GET("z_tol", HDP_FIELD_REAL, get_z_tol, "z-score tolerance of a point ([validate] z_tol)"),
    INT_AS(hdp_validate_result, "runs", sim.runs, 0, "Monte Carlo runs of each side"),
    INT_AS(hdp_validate_result, "diverged_runs", sim.diverged_runs, 0, "DP-SGD runs that diverged"));

TABLE(hdp_validate_sde_fields, "validate_sde", NULL,
      "the validator's SDE side",
    INT_AS(hdp_validate_result, "sde_diverged_runs", sde.diverged_runs, HDP_FIELD_NO_JSON,
           "SDE runs that diverged"));

/* validate --scaling: the slope, then each level under the prefix scaling_<l>_ */
TABLE(hdp_validate_scaling_fields, "validate_scaling", NULL,
      "the validator's scaling in n with gamma fixed (validate --scaling)",
    REAL_AS(hdp_validate_scaling_result, "scaling_slope", slope,
            "least-squares log-log slope of max_abs_dev against n (null: one level)"));
TABLE(hdp_validate_level_fields, "validate_level", NULL,
      "one level of validate --scaling (under the prefix scaling_<l>_)",
    INT(hdp_validate_level, n, "samples n of the level (d grown with it, gamma fixed)"),
    REAL(hdp_validate_level, max_abs_dev, "the Monte Carlo's largest |deviation| from the ODE"));

/* ---- the model's effective numbers ---- */

static double get_gamma(const void *obj, const void *ctx) { (void)ctx; return ((const hdp_model *)obj)->gamma; }
static double get_n(const void *obj, const void *ctx) { (void)ctx; return (double)((const hdp_model *)obj)->n; }
static double get_d(const void *obj, const void *ctx) { (void)ctx; return (double)((const hdp_model *)obj)->d; }
static double get_rho(const void *obj, const void *ctx) { (void)ctx; return ((const hdp_model *)obj)->rho; }

TABLE(hdp_model_fields, "model", NULL,
      "the model's effective sizes and privacy level",
    GET("gamma", HDP_FIELD_REAL, get_gamma, "gamma = d/n"),
    GET("n", HDP_FIELD_INT, get_n, "samples n = steps of one pass"),
    GET("d", HDP_FIELD_INT, get_d, "dimension d"),
    GET("rho", HDP_FIELD_REAL, get_rho, "the privacy level rho (null/inf: no noise)"));

/* ---- privacy ---- */

TABLE(hdp_privacy_fields, "privacy", NULL,
      "the privacy of a model (hdpsgd privacy)",
    REAL(hdp_privacy_summary, rho, "the privacy level rho (null/inf: no noise, no privacy)"),
    REAL(hdp_privacy_summary, rho_z, "the output is rho_z-zCDP, rho_z = rho^2/2"),
    REAL_AS(hdp_privacy_summary, "epsilon", epsilon_cks,
            "epsilon at delta, Canonne-Kamath-Steinke (the one to quote)"),
    REAL(hdp_privacy_summary, delta, "delta of the model (privacy.delta, default 1e-5)"),
    REAL(hdp_privacy_summary, epsilon_bs, "epsilon at delta, Bun-Steinke"),
    REAL(hdp_privacy_summary, epsilon_cks, "epsilon at delta, Canonne-Kamath-Steinke (the tighter)"),
    REAL(hdp_privacy_summary, rho_accounted,
         "the accountant of docs/theory.md §6 on the model's n discrete steps"),
    BOOL_AS(hdp_privacy_summary, "accountant_equals_rho", accountant_equals_rho, 0,
            "rho_accounted equals rho (to 1e-9)"),
    INT(hdp_privacy_summary, n, "steps n"),
    TEXT(hdp_privacy_summary, schedule, "the schedule's kind"));

GETTER(get_negligible, !(((const hdp_nonexpansive *)obj)->expected > *(const double *)ctx))

TABLE(hdp_nonexpansive_fields, "nonexpansive", NULL,
      "the accountant's precondition, every step non-expansive (docs/theory.md §6.1; context: "
      "delta)",
    REAL_AS(hdp_nonexpansive, "nonexpansive_eta_max", eta_max, "the largest step eta~(0)/n"),
    REAL_AS(hdp_nonexpansive, "nonexpansive_threshold", threshold,
            "2/eta_max: every step is non-expansive when ||x||^2 <= this"),
    REAL_AS(hdp_nonexpansive, "nonexpansive_p_step", p_step,
            "largest per-step probability of a violation, P(eta_max ||x||^2 > 2)"),
    REAL_AS(hdp_nonexpansive, "nonexpansive_log10_p_step", log10_p_step, "its log10"),
    REAL_AS(hdp_nonexpansive, "nonexpansive_expected_violations", expected,
            "expected violating steps per run of n steps (an upper bound when not exact)"),
    REAL_AS(hdp_nonexpansive, "nonexpansive_expected_violations_lower", expected_lower,
            "a lower bound of it (equal when exact)"),
    BOOL_AS(hdp_nonexpansive, "nonexpansive_expected_exact", exact, 0,
            "the expectation was summed over every step"),
    GET("nonexpansive_negligible", HDP_FIELD_BOOL, get_negligible,
        "expected violations <= delta: the precondition holds but for a negligible event"),
    REAL(hdp_nonexpansive, feature_norm, "the rows' norm bound B of clip.feature_norm (0: off)"),
    REAL_AS(hdp_nonexpansive, "feature_clip_fraction", clip_fraction,
            "fraction of the rows feature clipping changes"),
    REAL_AS(hdp_nonexpansive, "feature_clip_moment", clip_moment,
            "fraction of the second moment feature clipping removes"));

/* ---- DP-SGD with Poisson sampling ---- */

TABLE(hdp_accountant_fields, "accountant", NULL,
      "DP-SGD with Poisson sampling: epsilon by three accountants (hdpsgd accountant)",
    REAL(hdp_accountant_result, epsilon_pld, "epsilon by the PLD accountant (an upper bound)"),
    REAL(hdp_accountant_result, epsilon_pld_error, "its estimated excess over the exact value"),
    REAL(hdp_accountant_result, epsilon_rdp, "epsilon by RDP, Balle et al. 2020 conversion"),
    REAL(hdp_accountant_result, epsilon_rdp_classic, "epsilon by RDP, classic conversion"),
    REAL(hdp_accountant_result, rdp_order, "the optimal order of the improved conversion"),
    REAL(hdp_accountant_result, rdp_order_classic, "the optimal order of the classic conversion"));

GETTER(get_steps, (double)((const hdp_accountant_query *)obj)->steps)

static double get_interval(const void *obj, const void *ctx)
{
    (void)ctx;
    double h = ((const hdp_accountant_query *)obj)->pld_interval;
    return h > 0 ? h : 1e-4;
}

TABLE(hdp_accountant_query_fields, "accountant_query", NULL,
      "the query of the accountant: sampling rate, noise, steps, delta",
    REAL(hdp_accountant_query, noise_multiplier, "noise standard deviation over the clipping norm"),
    REAL(hdp_accountant_query, sample_rate, "Poisson sampling rate q = B/N"),
    GET("steps", HDP_FIELD_INT, get_steps, "steps T"),
    REAL(hdp_accountant_query, delta, "delta"),
    GET("pld_interval", HDP_FIELD_REAL, get_interval, "the PLD's grid width"));

/* ---- NoisyGD on neural-collapse features (hdpsgd nc) ---- */

TABLE(hdp_nc_fields, "nc", NULL,
      "NoisyGD on neural-collapse features: its privacy and exact error (hdpsgd nc)",
    REAL_AS(hdp_nc_point, "rho_total", res.rho_total, "steps x rho: the output is rho_total-zCDP"),
    REAL_AS(hdp_nc_point, "epsilon", res.epsilon, "CKS epsilon of rho_total at delta (inf: no DP)"),
    REAL_AS(hdp_nc_point, "sigma", res.sigma, "the noise's standard deviation G / sqrt(2 rho)"),
    REAL_AS(hdp_nc_point, "exact_error", exact,
            "the exact one-step test error (null where it does not apply)"));

GETTER(get_nc_z, hdp_nc_point_z(obj))
GETTER(get_nc_threads, ((const hdp_nc_point *)obj)->res.threads)

TABLE(hdp_nc_draws_fields, "nc_draws", NULL,
      "the Monte Carlo of NoisyGD's test error (hdpsgd nc without --exact)",
    INT_AS(hdp_nc_point, "draws", res.draws, 0, "Monte Carlo draws"),
    REAL_AS(hdp_nc_point, "error_mean", res.error_mean, "mean test error over the draws"),
    REAL_AS(hdp_nc_point, "error_stderr", res.error_stderr, "its standard error"),
    REAL_AS(hdp_nc_point, "error_min", res.error_min, "smallest test error of a draw"),
    REAL_AS(hdp_nc_point, "error_max", res.error_max, "largest test error of a draw"),
    GET("z_exact", HDP_FIELD_REAL, get_nc_z,
        "(error_mean - exact_error) / error_stderr (null without the exact error)"),
    REAL_AS(hdp_nc_point, "clipped_fraction", res.clipped_fraction,
            "fraction of per-sample gradients clipped"),
    REAL_AS(hdp_nc_point, "max_clipped_norm", res.max_clipped_norm,
            "largest norm of a clipped per-sample gradient"),
    GET("threads", HDP_FIELD_INT, get_nc_threads, "threads used (the numbers do not depend on it)"),
    REAL_AS(hdp_nc_point, "seconds", res.seconds, "wall time, seconds"));

TABLE(hdp_nc_problem_fields, "nc_problem", NULL,
      "the neural-collapse problem's offset and PCA alignment",
    REAL(hdp_nc_point, offset_norm, "norm of the problem's offset"),
    REAL(hdp_nc_point, pca_alignment, "alignment of the PCA subspace (null without PCA)"));

/* ---- two-stage single-index learning (hdpsgd sim-index) ---- */

TABLE(hdp_si_result_fields, "si_result", NULL,
      "the Monte Carlo of stage 2 (hdpsgd sim-index)",
    REAL_AS(hdp_si_result, "test_risk", risk_mean, "test risk of (W_1, a_T), mean over the runs"),
    REAL_AS(hdp_si_result, "test_risk_stderr", risk_se, "its standard error"),
    REAL_AS(hdp_si_result, "clipped_fraction", clipped,
            "mean over runs and steps of the clipped fraction of stage 2"),
    REAL(hdp_si_result, max_z_mean, "largest z of the mode coefficients' means vs the prediction"),
    REAL(hdp_si_result, max_z_var, "largest z of their variances vs the prediction"),
    INT(hdp_si_result, runs, "Monte Carlo runs"),
    REAL(hdp_si_result, seconds, "wall time, seconds"));

GETTER(get_random_alignment, sqrt(2.0 / (M_PI * (double)((const hdp_si_problem *)obj)->spec.k.d)))

#define SIP(obj) ((const hdp_si_problem *)(obj))
GETTER(get_lambda_max, SIP(obj)->l[SIP(obj)->spec.k.p - 1])

TABLE(hdp_si_problem_fields, "si_problem", NULL,
      "the single-index problem after stage 1 and the laws of stage 2",
    REAL_AS(hdp_si_problem, "ou_expected_risk", ou_risk, "expected test risk of the OU law at tau"),
    REAL_AS(hdp_si_problem, "gd_expected_risk", gd_risk,
            "expected test risk of unclipped discrete GD after T steps"),
    REAL(hdp_si_problem, zero_risk, "mean y_test^2: the risk of a = 0"),
    REAL_AS(hdp_si_problem, "alignment_mean", align_mean, "mean |<w1_j, mu>| / ||w1_j|| after stage 1"),
    REAL_AS(hdp_si_problem, "alignment_init_mean", align0_mean, "the same for W_0"),
    GET("random_alignment", HDP_FIELD_REAL, get_random_alignment,
        "sqrt(2 / (pi d)): the alignment of a random direction"),
    REAL_AS(hdp_si_problem, "stage1_clipped_fraction", clipped1, "fraction of (i, j) clipped in stage 1"),
    INT_AS(hdp_si_problem, "stage1_floored_neurons", floored, 0, "neurons with ||u_j|| < R"),
    GET("lambda_max", HDP_FIELD_REAL, get_lambda_max, "largest eigenvalue of stage 2's Gram"));

TABLE(hdp_si_params_fields, "si_params", NULL,
      "the hyperparameters and privacy of the two stages",
    REAL(hdp_si_params, lambda, "ridge lambda"),
    REAL(hdp_si_params, eta_W, "stage-1 learning rate"),
    REAL(hdp_si_params, eta_a, "stage-2 learning rate"),
    REAL(hdp_si_params, C_a, "stage-2 clipping norm"),
    INT(hdp_si_params, T, "stage-2 steps"),
    REAL(hdp_si_params, tau, "eta_a T"),
    REAL(hdp_si_params, sigma_W, "stage-1 noise"),
    REAL(hdp_si_params, C_W, "stage-1 clipping norm"),
    REAL(hdp_si_params, sigma_a, "stage-2 noise multiplier (0 without noise)"),
    REAL(hdp_si_params, s, "OU diffusion 2 C_a sigma_a / n"),
    REAL(hdp_si_params, Delta1, "stage 1's sensitivity"),
    REAL(hdp_si_params, rho_z1, "stage 1's zCDP"),
    REAL(hdp_si_params, rho_z2, "stage 2's zCDP"),
    REAL(hdp_si_params, rho_z, "the total zCDP"),
    REAL_AS(hdp_si_params, "epsilon_stage1", eps1, "stage 1's epsilon at delta (CKS)"),
    REAL_AS(hdp_si_params, "epsilon_stage2", eps2, "stage 2's epsilon at delta (CKS)"),
    REAL_AS(hdp_si_params, "epsilon_total", eps_total, "the total epsilon at delta (CKS)"),
    REAL(hdp_si_params, epsilon_target, "the target: epsilon_total or stage 2's epsilon"),
    REAL(hdp_si_params, delta, "delta"));

/* ---- the rates' fit (hdpsgd rates: one per family, under <family>_) ---- */

TABLE(hdp_rates_fit_fields, "rates_fit", NULL,
      "the fit of the theorem's rate to one family's optimal risks (hdpsgd rates)",
    REAL_AS(hdp_rates_fit, "fit_A", A, "the fitted constant A of A r1(gamma) + B r2(gamma)"),
    REAL_AS(hdp_rates_fit, "fit_B", B, "the fitted constant B"),
    REAL_AS(hdp_rates_fit, "fit_rel_err", rel_err, "max over the grid of the fit's relative error"),
    REAL_AS(hdp_rates_fit, "fit_rms_rel_err", rms_rel_err, "root mean square of the same"),
    REAL_AS(hdp_rates_fit, "fit_term2_share", term2_share,
            "B r2 / (A r1 + B r2) at the smallest gamma"),
    REAL(hdp_rates_fit, local_slope, "d log risk / d log gamma between the two smallest gammas"),
    REAL(hdp_rates_fit, lead_slope, "the leading term's local slope at the smallest gamma"),
    BOOL_AS(hdp_rates_fit, "pre_asymptotic", pre_asymptotic, 0,
            "the second term or the slope's drift is not negligible yet"));

/* ---- KL privacy of noisy training (hdpsgd kl run): the estimate at one epoch ---- */

#define AT(s, nm, m, h) \
    {.name = nm, .kind = HDP_FIELD_REAL, .offset = offsetof(s, m), .flags = HDP_FIELD_AT, .help = h}

TABLE(hdp_kl_epoch_fields, "kl_epoch", NULL,
      "the KL estimate of a run at one epoch (context: a const long * epoch)",
    AT(hdp_kl_run_result, "kl", kl_mc, "the KL's Monte Carlo, mean over initialisations and paths"),
    AT(hdp_kl_run_result, "kl_stderr", kl_mc_se, "its standard error"),
    AT(hdp_kl_run_result, "kl_stderr_path", kl_mc_se_path, "the part of it that is path noise"),
    AT(hdp_kl_run_result, "kl_init_sd", kl_init_sd,
       "standard deviation over initialisations of the per-initialisation estimate"),
    AT(hdp_kl_run_result, "kl_max", kl_mc_max, "max over the removed samples of the means"),
    AT(hdp_kl_run_result, "lemma32_bound", lemma32_bound,
       "Ye et al.'s Lemma 3.2 KL bound at this epoch (linearised network; null for the real "
       "network or beyond a double)"),
    AT(hdp_kl_run_result, "lemma32_exp_term", lemma32_exp,
       "its part exponential in T (gradient-difference fluctuation during training)"),
    AT(hdp_kl_run_result, "lemma32_log10_bound", lemma32_log10,
       "log10 of the Lemma 3.2 bound, finite where the bound overflows a double"),
    REAL(hdp_kl_run_result, lemma32_diff0, "Lemma 3.2's E||Delta_0||^2 (j*, at initialisation)"),
    REAL(hdp_kl_run_result, lemma32_grad0, "Lemma 3.2's E||grad L(W_0; D)||^2"),
    REAL(hdp_kl_run_result, lemma32_beta,
         "Lemma 3.2's smoothness constant beta: l''_max max_i ||J(x_i)||_F^2"),
    REAL(hdp_kl_run_result, lemma32_rank, "Lemma 3.2's rank(M_T): the largest rank of K"));

/* ---- DP-GD on a two-layer network (hdpsgd net): one run, and one cell of a panel ---- */

#define NET(obj) ((const hdp_net_result *)(obj))
#define NET_LAST(fn, col) \
    GETTER(fn, NET(obj)->points > 0 ? NET(obj)->col[NET(obj)->points - 1] : NAN)
NET_LAST(net_final_test_accuracy, test_accuracy)
NET_LAST(net_final_test_loss, test_loss)
NET_LAST(net_final_train_accuracy, train_accuracy)
NET_LAST(net_final_train_loss, train_loss)
NET_LAST(net_final_val_accuracy, val_accuracy)
#undef NET_LAST

GETTER(net_threads, ((const hdp_net_result *)obj)->threads)
GETTER(net_zcdp_route, ((const hdp_net_result *)obj)->zcdp_route)

TABLE(hdp_net_fields, "net", NULL,
      "one DP-GD run of the two-layer network (hdpsgd net)",
    COL(hdp_net_result, "step", step, "%.10g", "DP-GD step t (0: the initialisation)"),
    COL(hdp_net_result, "time", time, "%.10g", "training time eta t"),
    COL(hdp_net_result, "train_loss", train_loss, "%.10g", "mean training loss at step t"),
    COL(hdp_net_result, "train_accuracy", train_accuracy, "%.10g", "training accuracy at step t"),
    COL(hdp_net_result, "val_loss", val_loss, "%.10g",
        "mean validation loss (empty without a validation split)"),
    COL(hdp_net_result, "val_accuracy", val_accuracy, "%.10g", "validation accuracy"),
    COL(hdp_net_result, "test_loss", test_loss, "%.10g", "mean test loss at step t"),
    COL(hdp_net_result, "test_accuracy", test_accuracy, "%.10g", "test accuracy at step t"),
    COL(hdp_net_result, "clipped_fraction", clipped_fraction, "%.6g",
        "fraction of per-sample gradients clipped over the steps since the previous row"),
    GET("final_test_accuracy", HDP_FIELD_REAL, net_final_test_accuracy, "test accuracy after T steps"),
    GET("final_test_loss", HDP_FIELD_REAL, net_final_test_loss, "mean test loss after T steps"),
    GET("final_train_accuracy", HDP_FIELD_REAL, net_final_train_accuracy, "training accuracy after T steps"),
    GET("final_train_loss", HDP_FIELD_REAL, net_final_train_loss, "mean training loss after T steps"),
    GET("final_val_accuracy", HDP_FIELD_REAL, net_final_val_accuracy, "validation accuracy after T steps"),
    REAL(hdp_net_result, sigma, "noise multiplier sigma of Algorithm 1 (0: plain GD)"),
    REAL(hdp_net_result, noise_std, "noise per coordinate and step, sqrt(eta) 2 C_clip sigma / n"),
    REAL(hdp_net_result, epsilon, "epsilon of the guarantee (null: plain GD)"),
    REAL(hdp_net_result, delta, "delta of the guarantee"),
    REAL(hdp_net_result, rho_z, "zCDP of the run, eta T / (2 sigma^2) (null: plain GD)"),
    GET("zcdp_route", HDP_FIELD_INT, net_zcdp_route,
        "1: sigma by the zCDP route (calibration = zcdp, or epsilon >= 8 ln(1/delta))"),
    REAL(hdp_net_result, max_clipped_norm,
         "largest norm of a clipped per-sample gradient over the run (<= C_clip)"),
    REAL(hdp_net_result, params, "trained parameters"),
    REAL(hdp_net_result, seconds, "wall time of the training, seconds"),
    GET("threads", HDP_FIELD_INT, net_threads, "OpenMP threads used (the numbers do not depend on it)"));

/* its CSV's format too (net --vs: a row per point, every variant's cell under its prefix) */
#define NX(m, fl, h)                                                                          \
    {.name = #m, .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_netexp_cell, m),               \
     .format = "%.10g", .flags = fl, .help = h}
TABLE(hdp_netexp_cell_fields, "netexp_cell", NULL,
      "one variant at one point of hdpsgd net --vs (under dp: none, rf_, gd_)",
    NX(test_accuracy, 0, "test accuracy of the configuration chosen on validation"),
    NX(test_loss, 0, "its mean test loss"),
    NX(val_accuracy, 0, "its validation accuracy (the selection criterion)"),
    NX(val_loss, 0, "its mean validation loss"), NX(train_accuracy, 0, "its training accuracy"),
    NX(train_loss, 0, "its mean training loss"), NX(lr, 0, "its learning rate eta"),
    NX(clip, HDP_FIELD_OPTIONAL, "its C_clip (null: plain GD)"),
    INT(hdp_netexp_cell, steps, "its steps T (gd: the early-stopping step)"),
    NX(sigma, 0, "its noise multiplier (0: plain GD)"),
    NX(clipped_fraction, 0, "its fraction of clipped per-sample gradients"),
    INT(hdp_netexp_cell, configs, "configurations tried"));

/* ---- DP-GD on random features: the test loss's two terms (hdpsgd rf) ---- */

TABLE(hdp_rf_terms_fields, "rf_terms", NULL,
      "the noise and early-stopping terms of DP-GD's test loss (hdpsgd rf)",
    REAL(hdp_rf_sim_result, noise_term,
         "the test loss's noise term at T (Bombari-Mondelli, Eq. 20): mean over the test set of "
         "the variance of phi^T theta_T over the runs (null for one run)"),
    REAL(hdp_rf_sim_result, noise_term_stderr, "its jackknife standard error over the runs"),
    REAL(hdp_rf_sim_result, noise_term_exact,
         "its closed form for the recursion DP-GD follows without clipping"),
    REAL(hdp_rf_sim_result, noise_term_ou, "its closed form for the OU process (the paper's)"),
    REAL(hdp_rf_sim_result, early_stopping_term,
         "the early-stopping term (Eq. 21): mean over the test set of (E phi^T theta_T - "
         "phi^T theta*)^2, theta* the min-norm interpolator (null for one run)"),
    REAL(hdp_rf_sim_result, early_stopping_term_stderr, "its jackknife standard error"),
    REAL(hdp_rf_sim_result, early_stopping_term_exact,
         "its closed form for the recursion DP-GD follows without clipping"),
    REAL(hdp_rf_sim_result, early_stopping_term_ou,
         "its closed form for the OU process (gradient flow; the paper's)"));

/* ---- lookup ---- */

static const hdp_field_table *const tables[] = {
    &hdp_ode_fields,           &hdp_mc_fields,       &hdp_mc_run_fields, &hdp_mc_rows_fields,
    &hdp_mc_sgd_fields,
    &hdp_validate_side_fields, &hdp_validate_fields, &hdp_validate_sde_fields, &hdp_model_fields,
    &hdp_privacy_fields, &hdp_nonexpansive_fields, &hdp_accountant_fields, &hdp_accountant_query_fields,
    &hdp_nc_fields, &hdp_nc_draws_fields, &hdp_nc_problem_fields, &hdp_si_result_fields,
    &hdp_si_problem_fields, &hdp_si_params_fields, &hdp_rates_fit_fields,
    &hdp_kl_epoch_fields, &hdp_rf_terms_fields, &hdp_dataset_fields, &hdp_dataset_classes_fields,
    &hdp_dataset_labels_fields, &hdp_dataset_test_fields, &hdp_dataset_test_labels_fields,
    &hdp_ode_data_fields, &hdp_ode_data_columns, &hdp_mc_data_fields, &hdp_mc_data_columns,
    &hdp_net_fields, &hdp_netexp_cell_fields, &hdp_design_fields, &hdp_design_eta0_fields,
    &hdp_design_inverse_time_fields, &hdp_design_pl_fields, &hdp_design_cost_fields,
    &hdp_design_set_fields, &hdp_design_summary_fields, &hdp_design_refine_fields,
    &hdp_design_level_fields, &hdp_design_equivalent_fields, &hdp_design_batch_fields,
    &hdp_design_batch_terms_fields, &hdp_design_file_fields, &hdp_rates_fields,
    &hdp_rates_risk_fields, &hdp_rates_slope_fields, &hdp_rates_summary_fields,
    &hdp_accountant_choice_fields, &hdp_accountant_epochs_fields, &hdp_accountant_target_fields,
    &hdp_source_fields, &hdp_version_fields, &hdp_privacy_target_fields,
    &hdp_privacy_at_delta_fields, &hdp_dpgd_privacy_fields, &hdp_nc_spec_fields,
    &hdp_si_stage2_fields, &hdp_si_eta_fields, &hdp_si_budget_fields, &hdp_kl_arch_fields,
    &hdp_kl_beta_fields, &hdp_kl_bound_fields, &hdp_kl_run_scheme_fields,
    &hdp_kl_run_relu_fields, &hdp_kl_network_fields, &hdp_kl_run_fields, &hdp_mc_seed_fields,
    &hdp_model_seed_fields, &hdp_nc_seed_fields, &hdp_si_seed_fields, &hdp_mc_command_fields,
    &hdp_net_config_fields, &hdp_netexp_fields, &hdp_kl_init_point_fields, &hdp_kl_init_fields,
    &hdp_sweep_point_fields, &hdp_mc_finals_fields, &hdp_validate_grid_fields,
    &hdp_design_text_fields, &hdp_rf_final_fields, &hdp_rf_run_fields, &hdp_rfexp_fields,
    &hdp_rfexp_point_fields, &hdp_rfexp_source_fields, &hdp_validate_scaling_fields,
    &hdp_validate_level_fields, &hdp_rates_csv_fields, &hdp_si_eps_csv_fields,
    &hdp_si_n_csv_fields, &hdp_nc_csv_fields, &hdp_kl_init_csv_fields,
    &hdp_si_mode_csv_fields, &hdp_si_align_csv_fields, &hdp_kl_bound_csv_fields,
    &hdp_kl_epochs_csv_fields, &hdp_kl_epochs_scheme_csv_fields, &hdp_kl_epochs_relu_csv_fields,
    &hdp_kl_depth_csv_fields, &hdp_kl_width_csv_fields, &hdp_kl_vs_scheme_csv_fields,
    &hdp_kl_vs_relu_csv_fields, &hdp_rf_csv_fields, &hdp_rfexp_p1_csv_fields,
    &hdp_rfexp_p1_val_csv_fields, &hdp_rfexp_p23_csv_fields, &hdp_rfexp_p4_csv_fields,
    &hdp_netexp_width_csv_fields, &hdp_netexp_samples_csv_fields, &hdp_privacy_deltas_fields,
    &hdp_dataset_features_fields, &hdp_dataset_labels_file_fields, &hdp_dataset_test_file_fields,
    &hdp_dataset_test_labels_file_fields, &hdp_kl_sweep_depth_fields, &hdp_kl_sweep_width_fields,
    &hdp_kl_sweep_scheme_fields, &hdp_kl_sweep_relu_fields, &hdp_kl_sweep_fields,
    &hdp_rfexp_grid_test_csv_fields, &hdp_rfexp_grid_val_csv_fields,
    &hdp_nc_sweep_fields, &hdp_nc_sweep_curve_fields, &hdp_nc_sweep_time_fields,
    &hdp_netexp_width_fields, &hdp_netexp_samples_fields, &hdp_netexp_variant_fields,
};

const hdp_field_table *hdp_field_table_at(int i)
{
    return i >= 0 && i < (int)(sizeof tables / sizeof *tables) ? tables[i] : NULL;
}

const hdp_field_table *hdp_field_table_find(const char *name)
{
    for (int i = 0; name && hdp_field_table_at(i); i++)
        if (!strcmp(tables[i]->name, name))
            return tables[i];
    return NULL;
}
