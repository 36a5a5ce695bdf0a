/*
 * hdpsgd/problem.h — one linear-regression model built once for the solvers and simulators
 * that run on it: the spectrum of Sigma with the model's bins (hdpsgd/spectrum.h), the
 * learning-rate schedule (hdpsgd/schedule.h), the clipping factors mu_c, V_c of its
 * label-noise law (hdpsgd/clip.h, fitted once when the law needs it), and the numbers derived
 * from them that every side needs: sup eta~, the Monte Carlo's divergence threshold
 * (hdpsgd/sim.h) and the privacy accountant's rho on the schedule's steps (docs/theory.md §6,
 * hdpsgd/privacy.h).
 *
 * hdp_sim_run_problem and hdp_sde_run_problem (sim.h) take the problem alone, and
 * hdp_ode_solve_problem (ode.h) takes it with its model, instead of building the spectrum,
 * the schedule and the clipping factors again and checking the model again;
 * hdp_validate_run builds one and hands it to its three sides. The problem borrows the model (pb->model) and, for kind = table, its
 * schedule's knots: the model must outlive the problem and stay unchanged.
 */
#ifndef HDPSGD_PROBLEM_H
#define HDPSGD_PROBLEM_H

#include "hdpsgd/finite.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const hdp_model *model; /* the finalized model it was built from (borrowed) */
    long d, n;             /* the model's dimension and sample count, checked by the users */
    hdp_spectrum spec;     /* eigenvalues and the model's bins (bins = auto: one per distinct
                              eigenvalue; the ODE refines a copy) */
    hdp_schedule sched;    /* eta~(t), sigma~(t) */
    double eta_sup;        /* sup over [0, 1] of eta~ (hdp_sched_eta_sup) */
    double threshold;      /* a Monte Carlo run diverged when its excess risk exceeded this
                              (hdpsgd/sim.h): sim.divergence_factor x max(R(0), P), R(0) =
                              r*^2/2 (tau^2/2 when r* = 0, 1 if both are 0), P = 2 c^2 gamma^2
                              eta_sup^2 / rho^2 the excess risk the private noise adds over a run
                              without contraction (0 when rho or c is inf) */
    double rho_accounted;  /* docs/theory.md §6's accountant on the steps eta_k, sigma_k of the
                              schedule (hdp_privacy_accountant_schedule; inf: no noise) */
    /* sgd.sampling = shuffle | poisson (hdpsgd/finite.h): the steps, sigma (calibrated here
     * when sgd.noise_multiplier = 0) and epsilon; sgd.finite = 0 for one-pass models */
    hdp_finite_privacy sgd;
    /* the training rows of a finite model (borrowed; NULL: synthetic rows drawn per run).
     * hdp_problem_build points it at train_rows for a model with data.source = file (its data
     * set's rows; least-squares: the residuals and theta*, planted: z and target NULL) */
    const hdp_trainset *train;
    hdp_trainset train_rows;
    hdp_clip *clip;        /* mu_c, V_c of the model's label-noise law at clip.c, fitted on
                              [0, threshold] when the law is a quadrature (hdp_clip_tabulate):
                              the ODE's and the SDE's, read by every thread; NULL for
                              sgd.sampling = shuffle | poisson (no theory reads them) */
} hdp_problem;

/* Build the problem of a finalized model. Release it with hdp_problem_free (also after a
 * failure). */
hdp_status hdp_problem_build(const hdp_model *m, hdp_problem *pb, hdp_error *err);

/* HDP_EINPUT naming `who` when pb is NULL or was not built (hdp_problem_build), or, m not
 * NULL, was not built from a model of m's d and n. */
hdp_status hdp_problem_check(const hdp_problem *pb, const hdp_model *m, const char *who,
                             hdp_error *err);

void hdp_problem_free(hdp_problem *pb);

#ifdef __cplusplus
}
#endif
#endif
