/*
 * dpsgd.c — Monte Carlo of one-pass DP-SGD on linear regression (docs/theory.md
 * section 1): the method the risk-curve driver of mc.c runs (the grid, the run loop,
 * divergence and the statistics are the driver's, shared with the SDE of sde.c).
 *
 * One run, in the eigenbasis of Sigma (docs/theory.md §1: the algorithm is rotation-
 * equivariant), with e = theta - theta*, theta_0 = 0, theta* uniform on the
 * sphere of radius r*:
 *   x = sqrt(lambda) .* g,  g ~ N(0, I_d)                    fresh sample
 *   x' = x min(1, B/||x||)                                    clip.feature_norm = B (off: x' = x)
 *   r = x'^T theta - y = x^T e - z, or s x^T e + (s - 1) x^T theta* - z when x' = s x, s < 1
 *   e <- e - eta_k r x' / max(1, |r| ||x'|| / C_clip)         per-sample clipping, C_clip = c sqrt(d)
 *   e <- e + 2 C_clip sigma_k xi,  xi ~ N(0, I_d)             private noise (skipped when sigma_k = 0)
 * with eta_k, sigma_k from hdp_sched_step (the code the ODE side shares), k = 0..n-1.
 * Label noise z (docs/theory.md §1): gaussian tau N(0,1); student sqrt(tau^2 (nu-2)/nu) T_nu;
 * rademacher +-tau; none 0; laplace of scale tau/sqrt(2); uniform on [-sqrt(3) tau,
 * sqrt(3) tau]; mixture: the first component with probability w, else the second; empirical:
 * one of the model's (centred) values, each with probability 1/n (docs/theory.md §2.3). One
 * step costs O(d); no d x d matrix.
 * Recorded: R_exc(theta_k) = 1/2 sum_i lambda_i e_i^2 exactly (docs/theory.md §1) at
 * k_i = min(round(t_i n), n - 1), t_i = i/(points-1) (the ODE's grid; the row t = 1 is
 * theta_n), and the fraction of steps k_{i-1} <= k < k_i whose gradient was clipped.
 * Privacy: docs/theory.md §6's accountant on the eta_k, sigma_k the runs used, and the count of
 * steps that break its precondition eta_k ||x'||^2 <= 2 (docs/theory.md §6.1). Feature clipping
 * changes nothing (not a bit) in a run where no row is longer than B.
 * Batched one pass (sgd.batch > 1, docs/theory.md §1.6): sim_run_batched, K = ceil(n/B) steps
 * of hdp_sched_batch_step, the grid read by time (hdp_mc_batch_record); its violations are the steps
 * holding a row with a_k ||x'||^2 > 2 (a lower bound on the expansive steps).
 */
#include "hdpsgd/sim.h"
#include "core/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"
#include "sim/finite_internal.h"
#include "sim/mc.h"
#include "sim/mc_internal.h"
#include "sim/rng_internal.h"

/* ---- the discrete algorithm (docs/theory.md §1) ---- */

typedef struct {
    long d, n;
    long batch, steps;     /* [sgd] batch = B and the K = ceil(n/B) steps (B = 1: K = n) */
    const double *lambda;  /* [d] eigenvalues of Sigma, mean 1 */
    double *sqrt_lambda;   /* [d] */
    hdp_schedule sched;    /* eta_k = eta~(k/n)/n and sigma_k (docs/theory.md §1) by hdp_sched_step, per step */
    double C;              /* C_clip = c sqrt(d), may be inf */
    double B, B2;          /* clip.feature_norm B and B^2 (off: 0 and inf) */
    double radius;         /* r* = ||theta*|| */
    const double *energy;  /* [d] a target that is not uniform (spectrum.h), or NULL */
    hdp_mc_noise noise;    /* the label noise's law */
} sim_ctx;

typedef struct {
    double *e, *x, *z; /* [d] each: e = theta - theta*, the sample, its Gaussians or the noise */
    double *target;    /* [d] theta* (for the residual of a row clip.feature_norm shortened) */
    double *grad;      /* [d] batch > 1: the sum of the batch's clipped gradients */
    hdp_normals normals; /* the run's block stream of Gaussians (rng.h) */
} sim_ws;

static void *sim_ws_alloc(const void *vctx)
{
    const sim_ctx *c = vctx;
    const hdp_mc_array a[] = {HDP_MC_ARRAY(sim_ws, e, c->d), HDP_MC_ARRAY(sim_ws, x, c->d),
                              HDP_MC_ARRAY(sim_ws, z, c->d),
                              HDP_MC_ARRAY(sim_ws, target, c->B > 0 ? c->d : 0),
                              HDP_MC_ARRAY(sim_ws, grad, c->batch > 1 ? c->d : 0)};
    return HDP_MC_WS_ALLOC(sim_ws, a);
}

/* The residual x'^T theta - y of the fresh row w->x (dot = x^T e; its label noise z drawn
 * here): x' = x, or x' = xs x shortened by clip.feature_norm when ||x||^2 = *xx > B^2 (then
 * *xx = B^2, counted in out), the label y = x^T theta* + z kept: xs x^T e + (xs - 1) x^T
 * theta* - z. *xs: the factor (1: not shortened). */
static inline double row_residual(const sim_ctx *c, const sim_ws *w, gsl_rng *rng, double dot,
                                  double *xx, double *xs, mc_run_out *out)
{
    double z = hdp_mc_label_noise(&c->noise, rng);
    *xs = 1.0;
    if (!(*xx > c->B2))
        return dot - z;
    double xt = 0;
    for (long i = 0; i < c->d; i++)
        xt += w->x[i] * w->target[i];
    *xs = c->B / sqrt(*xx);
    *xx = c->B2;
    out->feature_clipped += 1.0;
    return *xs * dot + (*xs - 1.0) * xt - z;
}

/* A run's start: its block stream of Gaussians seeded from the run's stream, e = -theta*
 * (and theta* itself for clip.feature_norm); returns the excess risk R(theta_0). */
static double run_start(const sim_ctx *c, sim_ws *w, gsl_rng *rng)
{
    hdp_normals_init(&w->normals, hdp_rng_state(rng));
    hdp_mc_draw_target_energy(rng, c->d, c->radius, c->energy, w->e);
    if (w->target)
        for (long i = 0; i < c->d; i++)
            w->target[i] = -w->e[i];
    return hdp_mc_excess_risk(c->lambda, w->e, c->d);
}

/* One run of the discrete algorithm of docs/theory.md §1 (see the comment at the top);
 * the jump of the last step's private noise is the final-iterate term of docs/theory.md §3.
 * The 2 d Gaussians of a step come from the run's block stream (w->normals, seeded
 * from the run's stream); theta*, the label noise and the Student t draws from the
 * run's stream itself. */
static void sim_run(const void *vctx, const mc_grid *g, void *vws, gsl_rng *rng, mc_run_out *out)
{
    const sim_ctx *c = vctx;
    sim_ws *w = vws;
    const long d = c->d, n = c->n;
    const double *sl = c->sqrt_lambda;
    double *e = w->e, *x = w->x, *z = w->z;
    hdp_normals *ns = &w->normals;

    double R = run_start(c, w, rng);
    long p = hdp_mc_record_start(g, R, out);
    double nclip = 0; /* clipped steps since the last grid point */
    for (long k = 0; k < n; k++) {
        /* fresh sample x = sqrt(lambda) .* z, z ~ N(0, I_d), and the residual r = x^T e
         * minus the label noise */
        double dot, xx, eta_k, sigma_k;
        hdp_sched_step(&c->sched, n, k, &eta_k, &sigma_k);
        hdp_normals_fill(ns, z, d);
        hdp_mc_sample_dot(sl, z, e, x, d, &dot, &xx);
        double xs, r = row_residual(c, w, rng, dot, &xx, &xs, out); /* the row x' = xs x */
        if (eta_k * xx > 2.0) /* not non-expansive (docs/theory.md §6.1) */
            out->violations += 1.0;
        if (!isfinite(r)) {
            out->diverged = 1;
            return;
        }
        /* clipping of the true gradient norm |r| ||x'|| at C_clip (docs/theory.md §1) */
        double coef = eta_k * r, gnorm = fabs(r) * sqrt(xx);
        if (xs < 1.0)
            coef *= xs; /* the step along x' = xs x, applied to x */
        if (gnorm > c->C) {
            coef *= c->C / gnorm;
            nclip += 1.0;
        }
        double s = sigma_k > 0 ? 2.0 * c->C * sigma_k : 0.0;
        if (s > 0 && k < n - 1) {
            hdp_normals_fill(ns, z, d);
            hdp_mc_axpby(e, -coef, x, s, z, d);
        } else {
            for (long i = 0; i < d; i++)
                e[i] -= coef * x[i];
            if (s > 0) { /* the last step: measure the final-iterate jump (docs/theory.md §3) */
                double before = hdp_mc_excess_risk(c->lambda, e, d);
                hdp_normals_fill(ns, z, d);
                for (long i = 0; i < d; i++)
                    e[i] += s * z[i];
                out->jump = hdp_mc_excess_risk(c->lambda, e, d) - before;
            }
        }
        if ((k + 1) % g->every == 0 && !hdp_mc_tick(g, g->every)) {
            out->diverged = 1; /* cancelled (issue 29): the loop reports it */
            return;
        }
        if (p < g->points && g->kgrid[p] == k + 1) {
            R = hdp_mc_excess_risk(c->lambda, e, d);
            if (!hdp_mc_record(g, k + 1, R, &nclip, &p, out)) {
                out->diverged = 1;
                return;
            }
        }
    }
}

/* One row of a batch (batch > 1): a fresh sample, its residual and clipped gradient added to
 * w->grad; the counts of feature-clipped rows and of rows with a ||x'||^2 > 2 (a = eta_k/B_k,
 * the per-row rate: such a row makes the step expansive, docs/theory.md §6.1; the caller
 * counts the step once). Returns 1 when the row's gradient was clipped, -1 when the residual
 * is not finite. */
static int batch_row(const sim_ctx *c, sim_ws *w, gsl_rng *rng, double a, mc_run_out *out)
{
    const long d = c->d;
    double dot, xx;
    hdp_normals_fill(&w->normals, w->z, d);
    hdp_mc_sample_dot(c->sqrt_lambda, w->z, w->e, w->x, d, &dot, &xx);
    double xs, r = row_residual(c, w, rng, dot, &xx, &xs, out);
    if (a * xx > 2.0)
        out->violations += 1.0;
    if (!isfinite(r))
        return -1;
    double coef = r * xs, gnorm = fabs(r) * sqrt(xx);
    int clipped = gnorm > c->C;
    if (clipped)
        coef *= c->C / gnorm;
    for (long i = 0; i < d; i++)
        w->grad[i] += coef * w->x[i];
    return clipped;
}

/* Batched recording: the grid points t_p = p/(points - 1) in (t0, t1] of step k, which
 * moved the risk from R0 (at t0 = kB/n) to R1 (at t1, before the last step's noise; Rf after
 * it, at t = 1 only). The algorithm has no iterate between steps: a grid time inside a step
 * gets the risk interpolated linearly in time between the iterates around it (so that a
 * batch of 64 is not read as a staircase against the ODE), t = 1 the output theta_n; the
 * clipped fraction is that of the step's rows. 0 when an iterate diverged. Also the rows'
 * batched runs (rows.c). */
int hdp_mc_batch_record(const mc_grid *g, long *p, double t0, double R0, double t1, double R1,
                        double Rf, double clipped, mc_run_out *out)
{
    if (!isfinite(R1) || R1 > g->threshold || !isfinite(Rf) || Rf > g->threshold)
        return 0;
    const long P = g->points;
    for (; *p < P; (*p)++) {
        double t = *p == P - 1 ? 1.0 : (double)*p / (double)(P - 1);
        if (t > t1)
            break;
        out->risk[*p] = *p == P - 1 ? Rf : R0 + (t - t0) / (t1 - t0) * (R1 - R0);
        out->clipped[*p] = clipped;
    }
    return 1;
}

/* One run of batched one pass (docs/theory.md §1.6): step k averages the clipped gradients of
 * its B_k rows, all at the same iterate, e <- e - (eta_k/B_k) sum_b g_b + 2 C_clip sigma_k xi,
 * with eta_k, sigma_k from hdp_sched_batch_step; recorded by hdp_mc_batch_record. */
static void sim_run_batched(const void *vctx, const mc_grid *g, void *vws, gsl_rng *rng,
                            mc_run_out *out)
{
    const sim_ctx *c = vctx;
    sim_ws *w = vws;
    const long d = c->d, K = c->steps, n = c->n;
    double *e = w->e, *z = w->z;

    double R = run_start(c, w, rng);
    long p = 1; /* t = 0 here, every later grid time by hdp_mc_batch_record (not g->kgrid) */
    out->risk[0] = R;
    out->clipped[0] = 0.0;
    for (long k = 0; k < K; k++) {
        double eta_k, sigma_k;
        long rows;
        hdp_sched_batch_step(&c->sched, n, c->batch, k, &eta_k, &sigma_k, &rows);
        double a = eta_k / (double)rows, clipped = 0, v0 = out->violations;
        memset(w->grad, 0, sizeof(double) * (size_t)d);
        for (long b = 0; b < rows; b++) {
            int cl = batch_row(c, w, rng, a, out);
            if (cl < 0) {
                out->diverged = 1;
                return;
            }
            clipped += cl;
        }
        if (out->violations > v0) /* a step with a row a ||x'||^2 > 2 is expansive: counted once */
            out->violations = v0 + 1.0;
        double s = sigma_k > 0 ? 2.0 * c->C * sigma_k : 0.0;
        for (long i = 0; i < d; i++)
            e[i] -= a * w->grad[i];
        double R1 = NAN;
        if (k == K - 1) /* the last step: the final-iterate jump (docs/theory.md §3.4) */
            R1 = hdp_mc_excess_risk(c->lambda, e, d);
        if (s > 0) {
            hdp_normals_fill(&w->normals, z, d);
            for (long i = 0; i < d; i++)
                e[i] += s * z[i];
        }
        double Rn = hdp_mc_excess_risk(c->lambda, e, d);
        if (k == K - 1)
            out->jump = Rn - R1;
        else
            R1 = Rn;
        if ((k + 1) % g->every == 0 && !hdp_mc_tick(g, g->every)) {
            out->diverged = 1; /* cancelled (issue 29): the loop reports it */
            return;
        }
        double t0 = (double)(k * c->batch) / (double)n;
        double t1 = k == K - 1 ? 1.0 : (double)((k + 1) * c->batch) / (double)n;
        if (!hdp_mc_batch_record(g, &p, t0, R, t1, R1, Rn, clipped / (double)rows, out)) {
            out->diverged = 1;
            return;
        }
        R = Rn;
    }
}

static const mc_method sim_method = {"sim", sim_ws_alloc, free, sim_run, 0};
static const mc_method sim_batched_method = {"sim", sim_ws_alloc, free, sim_run_batched, 0};

hdp_status hdp_sim_run(const hdp_model *m, const hdp_mc_options *opt, hdp_mc_result *res,
                       hdp_error *err)
{
    return hdp_mc_with_problem(m, opt, res, hdp_sim_run_problem, "hdp_sim_run", err);
}

hdp_status hdp_sim_run_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                               hdp_mc_result *res, hdp_error *err)
{
    hdp_status st = hdp_mc_problem_entry(pb, opt, res, "hdp_sim_run_problem", err);
    if (st != HDP_OK)
        return st;
    if (pb->sgd.finite) /* standard DP-SGD on a finite training set (finite.c): synthetic
                           rows, or a data file's (pb->train) */
        return hdp_finite_run_problem(pb, opt, res, err);
    if (hdp_model_data(pb->model)) /* data.source = file, one pass: the rows themselves */
        return hdp_sim_rows_problem(pb, opt, res, err);
    const hdp_model *m = pb->model;
    long d = m->d, n = m->n;
    double B = hdp_feature_norm_bound(m); /* docs/theory.md §6.1 */
    sim_ctx c = {.d = d, .n = n, .batch = m->batch, .steps = hdp_sched_batch_count(n, m->batch),
                 .lambda = pb->spec.lambda, .sqrt_lambda = hdp_mc_sqrt_lambda(pb, d, err),
                 .sched = pb->sched, .C = m->c * sqrt((double)d), .B = B,
                 .B2 = B > 0 ? B * B : INFINITY, .radius = m->target_radius,
                 .energy = pb->spec.energy}; /* the spectrum's arrays borrowed */
    if (!c.sqrt_lambda)
        return HDP_ENOMEM;
    hdp_mc_noise_of(m, &c.noise);

    /* batched one pass: K steps, n/B of them per unit of time (batch 1: n steps) */
    st = hdp_mc_drive(pb, opt, c.steps, (double)n / (double)c.batch,
                      c.batch > 1 ? &sim_batched_method : &sim_method, NULL, &c, res, err);
    /* docs/theory.md §6 on the eta_k, sigma_k the runs used (the same hdp_sched_step, of the
     * problem's schedule): equals rho; computed once with the problem */
    res->rho_accounted = pb->rho_accounted;
    free(c.sqrt_lambda);
    return st;
}
