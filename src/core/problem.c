/*
 * problem.c — a model built once for the solvers and simulators that run on it: its
 * spectrum, schedule, the Monte Carlo's divergence threshold and the accountant's rho
 * (hdpsgd/problem.h).
 */
#include "hdpsgd/problem.h"
#include "core/check.h"
#include "core/problem_internal.h"
#include "core/spectrum_internal.h"

#include <math.h>
#include <string.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "core/clip_internal.h"

/* sim.divergence_factor x max(R(0), P) (hdpsgd/problem.h); also the top of the range the
 * clipping factors are fitted on (hdp_clip_range, core/clip_internal.h) */
double hdp_divergence_threshold(const hdp_model *m, double eta_sup)
{
    /* R(0) = r*^2/2 (docs/theory.md §3) */
    double r0 = 0.5 * m->target_radius * m->target_radius;
    if (!(r0 > 0))
        r0 = 0.5 * m->tau2;
    if (!(r0 > 0))
        r0 = 1.0;
    /* P = 2 c^2 gamma^2 eta~(0)^2 / rho^2: the excess risk the private noise 2 C_clip sigma_k xi
     * adds over a run without contraction, (1/2) sum_k (2 c sqrt(d) sigma_k)^2 Tr Sigma, since
     * sum_k sigma_k^2 = (eta~(0)/n)^2 / rho^2 for every schedule (docs/theory.md §1: the sigma_k^2
     * telescope). With c = 1e6 a stable run's risk is ~1e11 R(0) from this noise alone and
     * must not be called divergent. */
    double priv = 0;
    if (isfinite(m->rho) && isfinite(m->c))
        priv = 2.0 * m->c * m->c * m->gamma * m->gamma * eta_sup * eta_sup / (m->rho * m->rho);
    return m->divergence_factor * fmax(r0, priv);
}

/* hdp_problem_build; without the accountant (rho_accounted NaN) for the ODE's own problem
 * (hdp_problem_build_solver, core/problem_internal.h) */
static hdp_status build(const hdp_model *m, hdp_problem *pb, int accountant, hdp_error *err)
{
    HDP_ZERO(pb);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, pb);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    hdp_status st = hdp_spectrum_of_checked(m, &pb->spec, err); /* m checked above */
    if (st != HDP_OK)
        return st;
    hdp_sched_from_model(m, &pb->sched);
    pb->model = m;
    pb->d = m->d;
    pb->n = m->n;
    pb->eta_sup = hdp_sched_eta_sup(&pb->sched);
    pb->threshold = hdp_divergence_threshold(m, pb->eta_sup);
    pb->rho_accounted = accountant ? hdp_privacy_accountant_batches(&pb->sched, m->n, m->batch) : NAN;
    /* the factors of the model's label-noise law on [0, the divergence threshold]: through
     * clip_fit.c's entry, which knows every law's parameters and its range
     * (hdp_clip_range = pb->threshold). Only one pass has a theory that reads them (the ODE,
     * its gradient, the SDE all refuse shuffle and poisson): a finite-set model skips the fit,
     * and on a data set the clipping bias theta_c it starts from (seconds on Fashion-MNIST). */
    if (m->sampling == HDP_SAMPLING_ONE_PASS) {
        pb->clip = hdp_clip_alloc_fitted(m, m->c, err);
        if (!pb->clip)
            return err ? err->status : HDP_ENOMEM;
    }
    /* standard DP-SGD on a finite training set: the data set's rows as its training set */
    const hdp_data *data = hdp_model_data(m);
    if (data && m->sampling != HDP_SAMPLING_ONE_PASS) {
        const hdp_dataset *ds = &data->train;
        hdp_trainset *t = &pb->train_rows;
        t->N = ds->n;
        t->d = ds->d;
        t->x = ds->rows.f64;
        t->x32 = ds->rows.f32;
        if (!data->planted) {
            t->z = ds->residual;
            t->target = ds->theta_eig;
        }
        pb->train = t;
    }
    /* its sigma and epsilon, once (not for the solvers, which refuse such models) */
    return accountant ? hdp_finite_privacy_of(m, &pb->sgd, err) : HDP_OK;
}

hdp_status hdp_problem_build(const hdp_model *m, hdp_problem *pb, hdp_error *err)
{
    return build(m, pb, 1, err);
}

hdp_status hdp_problem_build_solver(const hdp_model *m, hdp_problem *pb, hdp_error *err)
{
    return build(m, pb, 0, err);
}

hdp_status hdp_problem_check(const hdp_problem *pb, const hdp_model *m, const char *who,
                             hdp_error *err)
{
    HDP_REQUIRE_FOR(who ? who : "hdp_problem_check", err, pb);
    if (!pb->model || !pb->spec.lambda)
        return hdp_fail(err, HDP_EINPUT, "%s: the problem was not built: build it with "
                        "hdp_problem_build", who ? who : "hdp_problem_check");
    if (m && (pb->d != m->d || pb->n != m->n || pb->spec.d != m->d))
        return hdp_fail(err, HDP_EINPUT,
                        "%s: the problem (d = %ld, n = %ld) was not built from this model (d = "
                        "%ld, n = %ld): build it with hdp_problem_build",
                        who ? who : "hdp_problem_check", pb->d, pb->n, m->d, m->n);
    return HDP_OK;
}

void hdp_problem_free(hdp_problem *pb)
{
    if (!pb)
        return;
    hdp_spectrum_free(&pb->spec);
    hdp_clip_free(pb->clip);
    memset(pb, 0, sizeof *pb);
}
