/*
 * hdpsgd/ode.h — the deterministic risk ODE of homogenized DP-SGD
 * (docs/theory.md §3), integrated with SUNDIALS CVODE.
 *
 *   dD_j/dt = -2 lambda_j eta~(t) mu_c(R) D_j + gamma lambda_j eta~(t)^2 V_c(R) + 2 c^2 gamma^2 sigma~(t)^2
 *   R(t)    = sum_j w_j lambda_j D_j(t),   D_j(0) = r*^2 / 2
 * and the scalar bound ODEs R_upper, R_lower of Mondelli's notes (docs/theory.md §3). The row
 * t = 1 is the output theta_n: the final-step noise 2 c^2 gamma^2 eta~(1)^2 / rho^2
 * is added to the risk and to both bounds.
 * Methods ([ode] solver): CVODE's BDF (the optimal schedule is stiff near t = 0 for
 * small gamma) with a matrix-embedded linear solver that uses the
 * diagonal-plus-rank-one structure of the Jacobian (Sherman-Morrison): O(m) per
 * Newton solve for m bins; or DOP853, an explicit Runge-Kutta method of order 8
 * (src/core/ode_erk.c), a dozen fused O(m) passes per step, for the models whose
 * stiffness estimate 2 lambda_max int_0^1 eta~ dt is moderate (auto chooses from it
 * and the number of bins, and falls back to CVODE when DOP853 fails).
 */
#ifndef HDPSGD_ODE_H
#define HDPSGD_ODE_H

#include "hdpsgd/model.h"
#include "hdpsgd/problem.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    long points;     /* grid size: t_i = i / (points - 1) */
    double *t;       /* [points] */
    double *risk;    /* predicted excess risk R(t); last entry includes the final noise */
    double *upper;   /* upper bound R_upper(t) (docs/theory.md §3), same convention */
    double *lower;   /* lower bound R_lower(t) */
    double *mu;      /* mu_c(R(t)) (before the final noise at t = 1) */
    double *nu;      /* nu_c(R(t)) */
    double *eta;     /* eta~(t) */
    double *sigma2;  /* sigma~(t)^2 */
    double risk_before_final_noise; /* R(1) */
    double final_noise;             /* 2 c^2 gamma^2 eta~(1)^2 / rho^2 */
    double final_risk;              /* R(1) + final_noise */
    double eta_sup;                 /* sup eta~ */
    int stable;                     /* eta_sup < 2/gamma (docs/theory.md §3) */
    long bins;                      /* m */
    long rhs_evals, steps;          /* counters of the solver that gave the result */
    char solver[16];                /* "dop853" or "cvode" ([ode] solver; auto falls back
                                       to cvode when dop853 fails) */
    double solve_seconds;           /* wall time of the integration alone */
    double binning_seconds;         /* bins = auto: wall time of the trial solves */
    double clip_fit_seconds;        /* wall time of the clipping-factor fit (0: closed forms) */
    /* data.source = file (docs/theory.md §9; 0 and NULL otherwise): the clipping bias's parts
     * of the risk (the ODE of the shifted problem around theta_c gives R_c(t); the risk is
     * R_c(t) + cross(t) + risk_bias, cross(t) = -sum_j lambda_j psi_j(t) theta_c,j
     * (theta_c - theta*)_j, psi_j(t) = exp(-lambda_j int_0^t eta~ mu_c)), the residuals'
     * variance of the label-noise law used, and the held-out MSE predicted at the grid */
    int data;                       /* 1: the model has a data set */
    double data_risk_bias;          /* R_bias = 1/2 ||theta_c - theta*||^2_Sigma (0: c = inf,
                                       planted) */
    double data_cross_start, data_cross_final; /* cross(0), cross(1) */
    double data_tau2;               /* the residuals' mean square (the law's tau^2) */
    double data_clipped;            /* the fraction of rows clipped at theta_c */
    double data_hetero_ratio;       /* E[z^2 x^T Sigma x] / (tau^2 E[x^T Sigma x]) of the
                                       residuals (1: homoscedastic) */
    double data_hetero_final;       /* the heteroscedastic correction's part of R(1) */
    double data_bias_seconds;       /* wall time of theta_c (0 when cached or none) */
    long data_bias_iterations;      /* Newton steps for theta_c */
    double *test_mse;               /* [points] predicted held-out MSE (NULL: no held-out set) */
    double test_mse_final;          /* at t = 1 */
    double test_mse_star;           /* the held-out MSE of theta* itself */
    double upper_until, lower_until; /* the bounds are finite at the output points t <= these
                                        (1: everywhere); past them upper, lower hold NAN: a
                                        bound whose equation overflows costs the bound alone,
                                        never the risk */
} hdp_ode_result;

/* Integrate the ODE of a finalized model on its output grid ([ode] points).
 * When the risk and its bounds cannot be integrated together, the risk is integrated alone
 * and each bound apart (CVODE), kept up to where it stays finite (upper_until, lower_until).
 * On failure of the risk (CVODE error, non-finite risk; DOP853's failure on the risk when
 * it is asked for by name) returns HDP_ENUMERIC with the CVODE flag name and the time reached. res is owned by the caller: release
 * it with hdp_ode_result_free (also after a failure). */
hdp_status hdp_ode_solve(const hdp_model *m, hdp_ode_result *res, hdp_error *err);

/* The same with a progress callback (NULL: none, as hdp_ode_solve): ode.model = rows reports
 * ("ode rows", k, n, its risk at step k) every 1 % of its n steps and at the end, and a nonzero
 * return stops it with HDP_ECANCELLED; the bins' ODE reports nothing (it takes milliseconds to
 * seconds; the thread's cancel flag stops it, hdpsgd/error.h). */
hdp_status hdp_ode_solve_progress(const hdp_model *m, hdp_progress_fn progress, void *user,
                                  hdp_ode_result *res, hdp_error *err);

/* The same on a problem built from m (hdpsgd/problem.h): its spectrum and bins are used
 * as they are (bins = auto: refined on a copy) instead of being built again. HDP_EINPUT
 * when pb was not built from a model of m's d and n. */
hdp_status hdp_ode_solve_problem(const hdp_model *m, const hdp_problem *pb, hdp_ode_result *res,
                                 hdp_error *err);

void hdp_ode_result_free(hdp_ode_result *res);

#ifdef __cplusplus
}
#endif
#endif
