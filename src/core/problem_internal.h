/*
 * problem_internal.h — the problem of hdpsgd/problem.h as the ODE's entry builds it for
 * itself (hdp_ode_solve): everything but the accountant, which no ODE method reads and
 * which would cost the designer's simplex a pass over the n steps at every candidate.
 */
#ifndef HDPSGD_CORE_PROBLEM_INTERNAL_H
#define HDPSGD_CORE_PROBLEM_INTERNAL_H

#include "hdpsgd/problem.h"

/* hdp_problem_build with rho_accounted = NaN (not computed). */
hdp_status hdp_problem_build_solver(const hdp_model *m, hdp_problem *pb, hdp_error *err);

#endif
