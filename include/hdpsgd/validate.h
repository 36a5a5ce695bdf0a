/*
 * hdpsgd/validate.h — does the homogenized theory predict the simulation?
 *
 * Runs the ODE (docs/theory.md §3), the Monte Carlo of DP-SGD (docs/theory.md §1) and the
 * homogenized SDE (docs/theory.md §4) on one model and one time grid, and compares
 * each simulated side with the ODE at every grid point t_i:
 *   abs_i = |mean_i - R(t_i)|,  rel_i = abs_i / R(t_i),  z_i = abs_i / stderr_i.
 * A grid point agrees when rel_i <= rel_tol or z_i <= z_tol ([validate]
 * rel_tol, z_tol); a side passes when every grid point agrees; the model
 * passes when both sides pass. The ODE is a d -> infinity limit with error
 * O(log^2 n / sqrt(n)) (docs/theory.md §3), so at small d a fail is information, not a bug.
 * Beside the verdict each side says whether its deviation is within rel_tol everywhere and
 * whether it is statistically significant (max_i z_i > z_tol): with enough runs a gap well
 * inside rel_tol is resolved, and the verdict "agrees" then means "close", not "equal"
 * (docs/theory.md §3.7).
 */
#ifndef HDPSGD_VALIDATE_H
#define HDPSGD_VALIDATE_H

#include "hdpsgd/ode.h"
#include "hdpsgd/progress.h"
#include "hdpsgd/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double max_abs_dev; /* max_i abs_i */
    double max_rel_dev; /* max_i rel_i */
    double max_z;       /* max_i z_i (0/0 counts as 0, x/0 as inf) */
    long worst_point;   /* index of the grid point that agrees least (-1: all agree) */
    double final_risk;  /* mean at t = 1 (theta_n) */
    double final_stderr;
    double clipped;     /* mean clipped fraction over the run */
    int pass;
    int within_rel_tol; /* max_rel_dev <= rel_tol: the gap is small everywhere */
    int significant;    /* max_z > z_tol: the gap is resolved by the runs somewhere */
    long max_z_point;   /* index of the grid point of max_z (-1: no deviation anywhere) */
} hdp_validate_side;

typedef struct {
    hdp_ode_result ode;
    hdp_mc_result sim, sde;
    hdp_validate_side sim_side, sde_side;
    int with_sde;
    int pass;
    double rho, rho_z, delta, epsilon_cks, epsilon_bs; /* privacy level at the model's delta */
} hdp_validate_result;

/* Run the three sides and compare. with_sde = 0 skips the SDE. The result
 * owns its arrays: free with hdp_validate_free (also after a failure). */
hdp_status hdp_validate_run(const hdp_model *m, const hdp_mc_options *opt, int with_sde,
                            hdp_validate_result *v, hdp_error *err);

/* Compare one simulated side with an ODE solution on the same grid: z = |mean - R| over
 * the standard error, floored at 1e-12 |R| (so that rounding between runs that all start at
 * one iterate is not significant). HDP_EINPUT (side zeroed) for a NULL argument, grids of
 * different lengths, or tolerances <= 0. */
hdp_status hdp_validate_compare(const hdp_ode_result *ode, const hdp_mc_result *mc,
                                double rel_tol, double z_tol, hdp_validate_side *side,
                                hdp_error *err);

void hdp_validate_free(hdp_validate_result *v);

/* ---- scaling in n with gamma fixed (validate --scaling) ---- */

/* The most levels (n, 4n, ..., 4^5 n): the one limit of the library and of --scaling. */
#define HDP_VALIDATE_MAX_LEVELS 6

typedef struct {
    long n, d;
    double max_abs_dev, max_rel_dev, max_z; /* the Monte Carlo side against the ODE */
} hdp_validate_level;

typedef struct {
    long levels;
    hdp_validate_level level[HDP_VALIDATE_MAX_LEVELS];
    double slope;        /* least-squares log-log slope of max_abs_dev against n (NaN: 1 level) */
    double theory_slope; /* the slope of log^2 n / sqrt n between the first and last n */
    double max_z;        /* the largest max_z of the levels */
} hdp_validate_scaling_result;

/* The Monte Carlo against the ODE (hdp_validate_run without the SDE) at levels l = 0 .. K-1:
 * the finalized model base with data.d = 4^l base->d, then data.n = 4^l base->n (gamma
 * fixed), re-finalized (its files read again), run on the grid runner; then the slopes.
 * HDP_EINPUT for K outside 1 .. HDP_VALIDATE_MAX_LEVELS or a spectrum read from a file (it
 * cannot grow with d), or the message of a level's model that does not finalize. progress
 * (NULL: none) is called as level l starts ("validate level", l of K, value its n) and once
 * all are done (K of K, NaN); a nonzero return stops before the next level (HDP_ECANCELLED). */
hdp_status hdp_validate_scaling(const hdp_model *base, const hdp_mc_options *opt, long K,
                                hdp_progress_fn progress, void *user,
                                hdp_validate_scaling_result *res, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
