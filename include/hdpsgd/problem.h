/*
 * hdpsgd/problem.h — the pieces of one linear-regression model that both sides of the
 * validator need, built once: the spectrum of Sigma with the model's bins
 * (hdpsgd/spectrum.h) and the learning-rate schedule (hdpsgd/schedule.h).
 *
 * hdp_ode_solve_problem (ode.h), hdp_sim_run_problem and hdp_sde_run_problem (sim.h)
 * take a problem built from the same finalized model instead of building the spectrum
 * and the schedule again; hdp_validate_run builds one and hands it to the three sides.
 * The problem borrows nothing from the model but the schedule's table knots (kind =
 * table): the model must outlive it and stay unchanged.
 */
#ifndef HDPSGD_PROBLEM_H
#define HDPSGD_PROBLEM_H

#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    long d, n;             /* the model's dimension and sample count, checked by the users */
    hdp_spectrum spec;     /* eigenvalues and the model's bins (bins = auto: one per distinct
                              eigenvalue; the ODE refines a copy) */
    hdp_schedule sched;    /* eta~(t), sigma~(t) */
} hdp_problem;

/* Build the problem of a finalized model. Release it with hdp_problem_free (also after a
 * failure). */
hdp_status hdp_problem_build(const hdp_model *m, hdp_problem *pb, hdp_error *err);

/* HDP_EINPUT naming `who` when pb was not built from a model of m's d and n. */
hdp_status hdp_problem_check(const hdp_problem *pb, const hdp_model *m, const char *who,
                             hdp_error *err);

void hdp_problem_free(hdp_problem *pb);

#ifdef __cplusplus
}
#endif
#endif
