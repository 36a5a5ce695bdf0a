/*
 * ode.c — the risk ODE of homogenized DP-SGD (docs/theory.md §3): the choice of its method
 * and the fallback. The ODE itself (right-hand side, Jacobian, bounds, final-iterate noise,
 * knot stops) is the object of risk_ode.h, built once per binning; its methods are
 * ode_erk.c (DOP853) and ode_cvode.c (CVODE, BDF with a Sherman-Morrison linear solver).
 * bins = auto refines the bins by trial solves (hdp_rode_auto_bins).
 */
#include "hdpsgd/ode.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/data_meanfield.h"
#include "core/ode_cvode.h"
#include "core/ode_erk.h"
#include "core/problem_internal.h"
#include "core/risk_ode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/clip.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"

void hdp_ode_result_free(hdp_ode_result *res)
{
    if (!res)
        return;
    double **arrays[] = {&res->t, &res->risk, &res->upper, &res->lower,
                         &res->mu, &res->nu, &res->eta, &res->sigma2};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    free(res->test_mse);
    res->test_mse = NULL;
    res->points = 0;
}

hdp_status hdp_ode_result_alloc(hdp_ode_result *res, long points, int test, hdp_error *err)
{
    memset(res, 0, sizeof *res);
    res->points = points;
    double **arrays[] = {&res->t,  &res->risk, &res->upper, &res->lower,   &res->mu,
                         &res->nu, &res->eta,  &res->sigma2, &res->test_mse};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0] - (test ? 0 : 1); i++) {
        *arrays[i] = calloc((size_t)points, sizeof(double));
        if (!*arrays[i]) {
            hdp_ode_result_free(res);
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld output points", points);
        }
    }
    return HDP_OK;
}

/* the columns that follow from the risk: t, mu, nu, eta, sigma2 */
static void record(hdp_ode_result *res, const hdp_risk_ode *o, long points)
{
    for (long i = 0; i < points; i++) {
        double t = (double)i / (double)(points - 1);
        hdp_clip_values cv;
        hdp_clip_eval_values(o->clip, res->risk[i], &cv); /* no derivatives needed */
        res->t[i] = t;
        res->mu[i] = cv.mu;
        res->nu[i] = cv.nu;
        res->eta[i] = hdp_sched_eta(&o->sched, t);
        res->sigma2[i] = hdp_sched_sigma2(&o->sched, t);
    }
}

/* auto: DOP853 when the stiffness estimate S = 2 lambda_max int eta~ dt is at most this.
 * DOP853 needs about S/10 steps for stability alone; a step costs it ~2 us of scalar work
 * (twelve stages' clipping factors) plus ~10 ns per bin, a CVODE step ~1 us plus ~80 ns per
 * bin, and CVODE takes 250-600 steps whatever S. Measured break-even (Release build, 101
 * points): S ~ 2500 for one bin, ~16000 for 64 bins; DOP853 still 2x faster at S = 76000
 * and 10^5 bins. Student-t noise kept the one-bin threshold when its clipping factors were a
 * quadrature per evaluation (DOP853 evaluates them three times as often per step); they are
 * now a fit read at Gaussian cost (docs/theory.md §2.3) except where the fit fails, and
 * lifting the threshold would change the solver, so the results, of stiff Student-t models:
 * left for a change of its own. */
static double erk_max_stiffness(const hdp_model *m, long bins)
{
    if (m->noise == HDP_NOISE_STUDENT)
        return 2000.0;
    return fmin(30000.0, 2000.0 + 200.0 * (double)bins);
}

/* DOP853 (ode_erk.c) on the bins, then on the two bounds apart (with lambda_min = lambda_max
 * they are R itself); 0 and risk, upper, lower filled (risk before the final noise; steps: the
 * bins', the steps of R; rhs_evals: both integrations'), or -1 with why set (the caller falls
 * back to CVODE or fails). */
static int solve_erk(const hdp_model *m, const hdp_risk_ode *o, long points, hdp_ode_result *res,
                     int *bins_done, const char **why, double *t_reached)
{
    hdp_erk_problem p = {o, m->rtol, m->atol, m->max_steps, 0};
    /* the outputs go to risk, upper, lower; mu, nu, eta, sigma2 follow from them */
    hdp_erk_out out = {res->risk, res->upper, res->lower, 0, 0, 0, 0, NULL};
    int rc = hdp_erk_solve(&p, points, &out);
    res->steps = out.steps;
    res->rhs_evals = out.rhs_evals;
    *bins_done = rc == 0;
    if (rc == 0 && o->lmin == o->lmax) {
        memcpy(res->upper, res->risk, sizeof(double) * (size_t)points);
        memcpy(res->lower, res->risk, sizeof(double) * (size_t)points);
    } else if (rc == 0) {
        p.bounds = 1;
        rc = hdp_erk_solve(&p, points, &out);
        res->rhs_evals += out.rhs_evals;
    }
    if (rc != 0) {
        *why = out.why;
        *t_reached = out.t_reached;
        return -1;
    }
    snprintf(res->solver, sizeof res->solver, "dop853");
    return 0;
}

/* CVODE (ode_cvode.c) on the bins and the two bounds together; *t0: the start of the timing,
 * moved past the setup unless DOP853 was tried first (erk_failed: the time of both counts). */
static hdp_status solve_cvode(const hdp_model *m, const hdp_risk_ode *o, long points,
                              int erk_failed, double *t0, hdp_ode_result *res, hdp_error *err)
{
    hdp_cvode_spec spec = {m->rtol, m->atol, m->max_steps, HDP_CV_ALL, 0};
    hdp_cvode_out out = {res->risk, res->upper, res->lower, 0, 0, 0, 0};
    hdp_status st = hdp_cvode_solve(o, &spec, points, &out, err);
    res->steps = out.steps;
    res->rhs_evals = out.rhs_evals;
    if (st == HDP_OK && !erk_failed)
        *t0 = out.setup_end; /* the setup of CVODE is not timed */
    return st;
}

/* final-iterate noise (docs/theory.md §3): the last step adds 2 C_clip sigma_{n-1} xi */
static void add_final_noise(const hdp_risk_ode *o, long points, hdp_ode_result *res)
{
    long last = points - 1;
    res->final_noise = hdp_rode_final_noise(o, hdp_sched_eta(&o->sched, 1.0));
    res->risk_before_final_noise = res->risk[last];
    res->risk[last] += res->final_noise;
    res->upper[last] += res->final_noise;
    res->lower[last] += res->final_noise;
    res->final_risk = res->risk[last];
}

/* Each bound apart from the risk (issue 29), with CVODE, kept at the output points up to
 * where it stays finite (NAN past them): the upper bound grows at the rate
 * lambda_max gamma eta~^2, which overflows on wide spectra where the risk is stable. */
static hdp_status bounds_apart(const hdp_model *m, const hdp_risk_ode *o, long points,
                               hdp_ode_result *res, hdp_error *err)
{
    double *col[2] = {res->upper, res->lower}, *until[2] = {&res->upper_until, &res->lower_until};
    for (int b = 0; b < 2; b++) {
        hdp_cvode_spec spec = {m->rtol, m->atol, m->max_steps, b ? HDP_CV_LOWER : HDP_CV_UPPER, 1};
        hdp_cvode_out out = {NULL, res->upper, res->lower, 0, 0, 0, 0};
        hdp_status st = hdp_cvode_solve(o, &spec, points, &out, err);
        if (st != HDP_OK)
            return st; /* its setup: out of memory */
        for (long i = out.points_done; i < points; i++)
            col[b][i] = NAN;
        *until[b] = out.points_done > 0 ? (double)(out.points_done - 1) / (double)(points - 1) : NAN;
        res->rhs_evals += out.rhs_evals;
    }
    return HDP_OK;
}

/* The risk alone after the joint solve failed (its error in err): DOP853's risk when it had
 * succeeded (held, with its counters), else CVODE on the bins alone; then the bounds apart.
 * HDP_OK, or the joint solve's error when the risk itself fails. */
static hdp_status solve_apart(const hdp_model *m, const hdp_risk_ode *o, long points,
                              const double *held, const long held_counts[2],
                              hdp_ode_result *res, hdp_error *err)
{
    hdp_error mine;
    hdp_error_clear(&mine);
    if (held) {
        memcpy(res->risk, held, sizeof(double) * (size_t)points);
        res->steps = held_counts[0];
        res->rhs_evals = held_counts[1];
        snprintf(res->solver, sizeof res->solver, "dop853");
    } else {
        hdp_cvode_spec spec = {m->rtol, m->atol, m->max_steps, HDP_CV_BINS, 0};
        hdp_cvode_out out = {res->risk, NULL, NULL, 0, 0, 0, 0};
        if (hdp_cvode_solve(o, &spec, points, &out, &mine) != HDP_OK)
            return HDP_ENUMERIC; /* the risk itself: the joint solve's message stands */
        res->steps = out.steps;
        res->rhs_evals = out.rhs_evals;
        snprintf(res->solver, sizeof res->solver, "cvode");
    }
    hdp_status st = bounds_apart(m, o, points, res, &mine);
    if (st != HDP_OK)
        *err = mine;
    return st;
}

/* DOP853 when the problem is not too stiff for it (or asked for), else or when it fails
 * CVODE, on the risk and its bounds; when DOP853 integrated the risk but not the bounds,
 * *held keeps its risk and counters (for solve_apart). */
static hdp_status solve_joint(const hdp_model *m, const hdp_risk_ode *o, long points,
                              hdp_ode_result *res, double **held, long held_counts[2],
                              double *t0, hdp_error *err)
{
    int erk_failed = 0;
    snprintf(res->solver, sizeof res->solver, "cvode");
    /* DOP853's stages are polynomials in lambda of the one-sample form (ode_erk.c): the
     * batch's lambda^2 terms (kappa > 0) are CVODE's */
    if (o->kappa == 0 && o->disc == 0 && o->ng == 0 &&
        (m->ode_solver == HDP_ODE_DOP853 ||
         (m->ode_solver == HDP_ODE_AUTO && hdp_rode_stiffness(o) <= erk_max_stiffness(m, o->m)))) {
        const char *why = "";
        double t_reached = 0;
        int bins_done = 0;
        if (solve_erk(m, o, points, res, &bins_done, &why, &t_reached) == 0)
            return HDP_OK;
        if (!strcmp(why, HDP_ERK_CANCELLED))
            return hdp_fail(err, HDP_ECANCELLED, "ODE: cancelled at t = %.6g", t_reached);
        if (!strcmp(why, HDP_ERK_NOMEM))
            return hdp_fail(err, HDP_ENOMEM, "out of memory for DOP853 on %ld bins (about %.3g GB)",
                            o->m, 5 * 8.0 * (double)o->m / 1e9);
        if (bins_done && (*held = malloc(sizeof(double) * (size_t)points))) {
            memcpy(*held, res->risk, sizeof(double) * (size_t)points);
            held_counts[0] = res->steps;
            held_counts[1] = res->rhs_evals;
        }
        if (m->ode_solver == HDP_ODE_DOP853)
            return hdp_fail(err, HDP_ENUMERIC,
                            "DOP853 failed at t = %.6g: %s; try [ode] solver = cvode", t_reached,
                            why);
        erk_failed = 1; /* CVODE solves it: its counters, the time of both */
        res->steps = res->rhs_evals = 0;
    }
    return solve_cvode(m, o, points, erk_failed, t0, res, err);
}

/* Integrate on the bins of sp with `points` output points (docs/theory.md §3): the risk and
 * its bounds together (solve_joint), or apart when that fails (solve_apart). */
static hdp_status solve_binned(const hdp_problem *pb, const hdp_spectrum *sp, long points,
                               hdp_ode_result *res, hdp_error *err)
{
    const hdp_model *m = pb->model;
    hdp_status st = hdp_ode_result_alloc(res, points, 0, err);
    if (st != HDP_OK)
        return st;
    hdp_risk_ode o;
    double *held = NULL;
    long held_counts[2] = {0, 0};
    st = hdp_rode_init_problem(&o, pb, sp, err);
    if (st != HDP_OK)
        goto done;
    res->bins = sp->m;
    res->eta_sup = pb->eta_sup;
    res->stable = res->eta_sup < 2.0 / m->gamma;
    res->upper_until = res->lower_until = 1.0;
    double t0 = hdp_seconds_now();
    st = solve_joint(m, &o, points, res, &held, held_counts, &t0, err);
    if (st == HDP_ENUMERIC && (held || m->ode_solver != HDP_ODE_DOP853))
        st = solve_apart(m, &o, points, held, held_counts, res, err);
    if (st != HDP_OK)
        goto done;
    res->solve_seconds = hdp_seconds_now() - t0;
    record(res, &o, points);
    add_final_noise(&o, points, res);
done:
    free(held);
    hdp_rode_free(&o);
    return st;
}

/* a trial of bins = auto (ctx: the problem): two output points */
static hdp_status trial_solve(void *ctx, const hdp_spectrum *spec, long k, double *risk,
                              hdp_error *err)
{
    (void)k;
    hdp_ode_result trial;
    hdp_status st = solve_binned(ctx, spec, 2, &trial, err);
    *risk = trial.final_risk;
    hdp_ode_result_free(&trial);
    return st;
}

/* The solve on the problem's bins at `points` output points; bins = auto refines a copy of
 * them first (hdp_rode_auto_bins) */
static hdp_status solve_problem(const hdp_problem *pb, long points, hdp_ode_result *res,
                                hdp_error *err)
{
    const hdp_model *m = pb->model;
    hdp_status st;
    if (m->bins != HDP_BINS_AUTO) {
        st = solve_binned(pb, &pb->spec, points, res, err);
    } else {
        hdp_spectrum spec; /* bins = auto refines the bins: on a copy */
        st = hdp_spectrum_copy(&pb->spec, &spec, err);
        double t0 = hdp_seconds_now(); /* the trials' wall time, apart from the final solve */
        if (st == HDP_OK)
            st = hdp_rode_auto_bins(m, &spec, trial_solve, (void *)pb, err);
        double binning = hdp_seconds_now() - t0;
        if (st == HDP_OK)
            st = solve_binned(pb, &spec, points, res, err);
        res->binning_seconds = binning;
        hdp_spectrum_free(&spec);
    }
    hdp_clip_table_info info; /* the wall time of the fit of the problem's factors */
    hdp_clip_table_get(pb->clip, &info);
    res->clip_fit_seconds = info.seconds;
    return st;
}

/* The solve and, on a data set, its corrections (docs/theory.md §9.2-§9.3): their integrals
 * over time are taken on an internal grid of at least DATA_GRID intervals that holds the
 * output grid (k internal intervals per output interval), so that their values at the
 * output points do not depend on how many there are;
 * hdp_data_ode_correct then keeps the output points alone. */
#define DATA_GRID 1024

static hdp_status solve_corrected(const hdp_model *m, const hdp_problem *pb, hdp_clip *clip,
                                  hdp_progress_fn progress, void *user, hdp_ode_result *res,
                                  hdp_error *err)
{
    if (m->ode_model == HDP_ODE_MODEL_ROWS) /* the rows' recursion (docs/theory.md §9.5) */
        return hdp_meanfield_solve(pb, progress, user, res, err);
    if (!hdp_model_data(m))
        return solve_problem(pb, m->points, res, err);
    long P = m->points, k = (DATA_GRID + P - 2) / (P - 1);
    hdp_status st = solve_problem(pb, (P - 1) * k + 1, res, err);
    return st == HDP_OK ? hdp_data_ode_correct(m, clip, res, k, err) : st;
}

/* [sgd]: the ODE is that of one pass (batched or not, docs/theory.md §3.11); its batch terms
 * are CVODE's (solve_joint) */
static hdp_status batch_check(const hdp_model *m, hdp_error *err)
{
    hdp_status st = hdp_model_require_one_pass(m, "the risk ODE", err);
    if (st == HDP_OK && m->batch > 1 && m->ode_solver == HDP_ODE_DOP853)
        st = hdp_model_fail_key(m, "ode", "solver", err,
                                "solver = dop853 integrates the ODE of batch 1 only (its stages "
                                "are polynomials of that form); sgd.batch = %ld needs "
                                "solver = cvode or auto",
                                m->batch);
    if (st == HDP_OK && m->ode_discrete && m->ode_solver == HDP_ODE_DOP853)
        st = hdp_model_fail_key(m, "ode", "solver", err,
                                "solver = dop853 integrates the ODE without ode.discrete's term "
                                "(its stages are polynomials in lambda); ode.discrete = true "
                                "needs solver = cvode or auto");
    if (st == HDP_OK)
        st = hdp_rode_weights_check(m, err);
    if (st == HDP_OK)
        st = hdp_meanfield_check(m, err); /* ode.model = rows: where it applies */
    return st;
}

hdp_status hdp_ode_solve(const hdp_model *m, hdp_ode_result *res, hdp_error *err)
{
    return hdp_ode_solve_progress(m, NULL, NULL, res, err);
}

hdp_status hdp_ode_solve_progress(const hdp_model *m, hdp_progress_fn progress, void *user,
                                  hdp_ode_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, res);
    hdp_problem pb; /* checks m */
    hdp_status st = hdp_problem_build_solver(m, &pb, err);
    if (st == HDP_OK && batch_check(m, err) != HDP_OK)
        st = HDP_EINPUT;
    if (st == HDP_OK)
        st = solve_corrected(m, &pb, pb.clip, progress, user, res, err);
    hdp_problem_free(&pb);
    return st;
}

hdp_status hdp_ode_solve_problem(const hdp_model *m, const hdp_problem *pb, hdp_ode_result *res,
                                 hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, res);
    if (hdp_problem_check(pb, m, "hdp_ode_solve_problem", err) != HDP_OK ||
        batch_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (pb->model != m) /* m was checked when pb was built from it */
        return hdp_fail(err, HDP_EINPUT, "hdp_ode_solve_problem: the problem was not built from "
                        "this model: build it with hdp_problem_build");
    memset(res, 0, sizeof *res);
    return solve_corrected(m, pb, pb->clip, NULL, NULL, res, err);
}
