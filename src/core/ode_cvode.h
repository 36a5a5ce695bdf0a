/*
 * ode_cvode.h — the risk ODE (risk_ode.h) with SUNDIALS CVODE: BDF with a matrix-embedded
 * linear solver that solves the Newton systems of the Jacobian diag(a) + u v^T plus the
 * bounds' scalars by Sherman-Morrison in O(m) (internal; ode.c chooses it).
 */
#ifndef HDPSGD_CORE_ODE_CVODE_H
#define HDPSGD_CORE_ODE_CVODE_H

#include "core/risk_ode.h"

/* What to integrate: the bins (the risk), the upper bound, the lower bound, any of them
 * together in one system (the bins and both bounds: hdp_ode_solve's usual solve). */
enum { HDP_CV_BINS = 1, HDP_CV_UPPER = 2, HDP_CV_LOWER = 4, HDP_CV_ALL = 7 };

typedef struct {
    double rtol, atol;
    long max_steps;
    int parts;                    /* HDP_CV_* */
    int tolerant;                 /* a failure stops the integration without an error: the
                                     points reached are kept (points_done) */
} hdp_cvode_spec;

typedef struct {
    double *risk, *upper, *lower; /* [points] at t_i = i/(points-1), those of the parts asked */
    long points_done;             /* output points filled (points unless tolerant and failed) */
    long steps, rhs_evals;
    double setup_end;             /* CLOCK_MONOTONIC seconds when the setup was done */
} hdp_cvode_out;

/* Integrate from D_j(0) = R_upper(0) = R_lower(0) = R0 over the grid of `points` output points,
 * stopping on every knot stop. HDP_ENUMERIC (CVODE's flag, the time reached and a hint) or
 * HDP_ENOMEM on failure, unless tolerant. */
hdp_status hdp_cvode_solve(const hdp_risk_ode *o, const hdp_cvode_spec *spec, long points,
                           hdp_cvode_out *out, hdp_error *err);

#endif
