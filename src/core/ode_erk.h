/*
 * ode_erk.h — the risk ODE of docs/theory.md §3 with an explicit Runge-Kutta
 * method, DOP853 (Hairer, Norsett, Wanner: order 8, embedded 5 and 3 error
 * estimators), for ode.c: the problem is non-stiff or mildly stiff for most
 * models (stiffness sup_t 2 lambda_max eta~(t) mu, integrated over [0, 1], of a few
 * hundred), and a step then costs one O(m) pass over the bins (the stages are
 * polynomials in the eigenvalue: see ode_erk.c) instead of CVODE's 50-70 vector
 * operations. ode.c chooses it from that
 * estimate and falls back to CVODE when it fails.
 */
#ifndef HDPSGD_ODE_ERK_H
#define HDPSGD_ODE_ERK_H

#include "core/risk_ode.h"

typedef struct {
    const hdp_risk_ode *ode;     /* the problem (risk_ode.h) */
    double rtol, atol;
    long max_steps;              /* in all: more fails (the caller falls back) */
    int bounds;                  /* 0: the bins (risk); 1: the two bounds alone (they do not
                                    feed back into R, and the lower bound, the stiffest
                                    component, would set the bins' steps) */
} hdp_erk_problem;

typedef struct {
    double *risk, *upper, *lower; /* [points]: R (bins), or R_upper, R_lower (bounds), at
                                     t_i = i/(points-1) */
    long steps, rhs_evals, rejected;
    double t_reached;             /* on failure */
    const char *why;              /* on failure: what stopped it */
} hdp_erk_out;

/* Integrate the bins or the bounds from D_j(0) = R_upper(0) = R_lower(0) = R0 (the ODE's) on the grid of `points` output
 * points, stopping on every interior knot of a table schedule (the right-hand side jumps
 * there). Returns 0, or -1 on failure (too many steps, a non-finite value, a step below
 * rounding, out of memory): the caller then solves with CVODE. */
/* out->why when the calling thread's cancel flag stopped it (hdp_cancel_requested), and
 * when its workspace could not be allocated */
#define HDP_ERK_CANCELLED "cancelled"
#define HDP_ERK_NOMEM "out of memory"

int hdp_erk_solve(const hdp_erk_problem *p, long points, hdp_erk_out *out);

#endif
