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
 * rademacher +-tau; none 0; laplace of scale tau/sqrt(2); uniform on [-sqrt(3) tau, sqrt(3) tau];
 * mixture: the first component with probability w, else the second; empirical: one of the
 * model's (centred) values, each with probability 1/n (docs/theory.md §2.3). One step costs O(d); no d x d matrix.
 * Recorded: R_exc(theta_k) = 1/2 sum_i lambda_i e_i^2 exactly (docs/theory.md §1) at
 * k_i = min(round(t_i n), n - 1), t_i = i/(points-1) (the ODE's grid; the row t = 1 is
 * theta_n), and the fraction of steps k_{i-1} <= k < k_i whose gradient was clipped.
 * Privacy: docs/theory.md §6's accountant on the eta_k, sigma_k the runs used, and the count of
 * steps that break its precondition eta_k ||x'||^2 <= 2 (docs/theory.md §6.1). Feature clipping
 * changes nothing (not a bit) in a run where no row is longer than B.
 */
#include "hdpsgd/sim.h"
#include "core/check.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"
#include "sim/mc.h"
#include "sim/mc_internal.h"
#include "sim/rng_internal.h"

/* ---- the discrete algorithm (docs/theory.md §1) ---- */

typedef struct {
    long d, n;
    const double *lambda;  /* [d] eigenvalues of Sigma, mean 1 */
    double *sqrt_lambda;   /* [d] */
    hdp_schedule sched;    /* eta_k = eta~(k/n)/n and sigma_k (docs/theory.md §1) by hdp_sched_step, per step */
    double C;              /* C_clip = c sqrt(d), may be inf */
    double B, B2;          /* clip.feature_norm B and B^2 (off: 0 and inf) */
    double radius;         /* r* = ||theta*|| */
    const double *energy;  /* [d] a target that is not uniform (spectrum.h), or NULL */
    hdp_noise_kind noise;
    double tau;            /* sqrt(tau^2) */
    double t_scale, df;    /* Student: z = t_scale T_df, t_scale = sqrt(tau^2 (df-2)/df) */
    double mix_w, mix_m1, mix_m2, mix_s1, mix_s2; /* mixture: weight, means, sds */
    const double *sample;  /* empirical: the model's centred values */
    size_t sample_n;
} sim_ctx;

typedef struct {
    double *e, *x, *z; /* [d] each: e = theta - theta*, the sample, its Gaussians or the noise */
    double *target;    /* [d] theta* (for the residual of a row clip.feature_norm shortened) */
    hdp_normals normals; /* the run's block stream of Gaussians (rng.h) */
} sim_ws;

static void *sim_ws_alloc(const void *vctx)
{
    const sim_ctx *ctx = vctx;
    sim_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->e = hdp_mc_vec_alloc(ctx->d);
    w->x = hdp_mc_vec_alloc(ctx->d);
    w->z = hdp_mc_vec_alloc(ctx->d);
    w->target = ctx->B > 0 ? hdp_mc_vec_alloc(ctx->d) : NULL;
    if (!w->e || !w->x || !w->z || (ctx->B > 0 && !w->target)) {
        free(w->e);
        free(w->x);
        free(w->z);
        free(w->target);
        free(w);
        return NULL;
    }
    return w;
}

static void sim_ws_free(void *vw)
{
    sim_ws *w = vw;
    if (!w)
        return;
    free(w->e);
    free(w->x);
    free(w->z);
    free(w->target);
    free(w);
}

/* The label noise z of docs/theory.md §1. */
static double label_noise(const sim_ctx *c, gsl_rng *rng)
{
    hdp_xoshiro *st = hdp_rng_state(rng); /* the fast Gaussian reads the stream directly */
    switch (c->noise) {
    case HDP_NOISE_GAUSSIAN: return c->tau * hdp_rng_normal_fast(st);
    case HDP_NOISE_STUDENT: return c->t_scale * gsl_ran_tdist(rng, c->df);
    case HDP_NOISE_RADEMACHER: return (gsl_rng_get(rng) >> 31) ? c->tau : -c->tau;
    case HDP_NOISE_NONE: return 0.0;
    case HDP_NOISE_LAPLACE: return gsl_ran_laplace(rng, c->tau * M_SQRT1_2);
    case HDP_NOISE_UNIFORM: return gsl_ran_flat(rng, -sqrt(3.0) * c->tau, sqrt(3.0) * c->tau);
    case HDP_NOISE_MIXTURE:
        return gsl_rng_uniform(rng) < c->mix_w ? c->mix_m1 + c->mix_s1 * hdp_rng_normal_fast(st)
                                               : c->mix_m2 + c->mix_s2 * hdp_rng_normal_fast(st);
    case HDP_NOISE_EMPIRICAL: return c->sample[gsl_rng_uniform_int(rng, c->sample_n)];
    }
    return 0.0;
}

/* The residual x'^T theta - y of a row shortened to x' = xs x by clip.feature_norm, the label
 * y = x^T theta* + z kept: xs x^T e + (xs - 1) x^T theta* - z, from dot = x^T e and the
 * label noise z. */
static double feature_clipped_residual(const sim_ctx *c, const sim_ws *w, double xs, double dot,
                                       double z)
{
    double xt = 0;
    for (long i = 0; i < c->d; i++)
        xt += w->x[i] * w->target[i];
    return xs * dot + (xs - 1.0) * xt - z;
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

    hdp_normals_init(ns, hdp_rng_state(rng));
    hdp_mc_draw_target_energy(rng, d, c->radius, c->energy, e);
    if (w->target)
        for (long i = 0; i < d; i++)
            w->target[i] = -e[i];
    double R = hdp_mc_excess_risk(c->lambda, e, d);
    long p = hdp_mc_record_start(g, R, out);
    double nclip = 0; /* clipped steps since the last grid point */
    for (long k = 0; k < n; k++) {
        /* fresh sample x = sqrt(lambda) .* z, z ~ N(0, I_d), and the residual r = x^T e
         * minus the label noise */
        double dot, xx, eta_k, sigma_k;
        hdp_sched_step(&c->sched, n, k, &eta_k, &sigma_k);
        hdp_normals_fill(ns, z, d);
        hdp_mc_sample_dot(sl, z, e, x, d, &dot, &xx);
        double zl = label_noise(c, rng), r = dot - zl;
        double xs = 1.0; /* clip.feature_norm: the row is x' = xs x */
        if (xx > c->B2) {
            xs = c->B / sqrt(xx);
            r = feature_clipped_residual(c, w, xs, dot, zl);
            xx = c->B2;
            out->feature_clipped += 1.0;
        }
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

static const mc_method sim_method = {"sim", sim_ws_alloc, sim_ws_free, sim_run, 0};

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
    if (hdp_model_data(pb->model)) /* data.source = file: the rows themselves */
        return hdp_sim_rows_problem(pb, opt, res, err);
    const hdp_model *m = pb->model;
    const hdp_spectrum spec = pb->spec; /* borrowed */
    long d = m->d, n = m->n;
    sim_ctx c;
    memset(&c, 0, sizeof c);
    c.sqrt_lambda = hdp_mc_sqrt_lambda(pb, d, err);
    if (!c.sqrt_lambda) {
        st = HDP_ENOMEM;
        goto done;
    }
    c.sched = pb->sched;
    c.d = d;
    c.n = n;
    c.lambda = spec.lambda;
    c.C = m->c * sqrt((double)d);
    c.B = hdp_feature_norm_bound(m); /* docs/theory.md §6.1 */
    c.B2 = c.B > 0 ? c.B * c.B : INFINITY;
    c.radius = m->target_radius;
    c.energy = spec.energy;
    c.noise = m->noise;
    c.tau = sqrt(m->tau2);
    c.df = m->noise_df;
    c.mix_w = m->mixture_weight;
    c.mix_m1 = m->mixture_mean;
    c.mix_m2 = -m->mixture_weight * m->mixture_mean / (1.0 - m->mixture_weight);
    c.mix_s1 = sqrt(m->mixture_var1);
    c.mix_s2 = sqrt(m->mixture_var2);
    c.sample = m->noise_values;
    c.sample_n = m->noise_values ? (size_t)m->noise_len : 0;
    c.t_scale = m->noise == HDP_NOISE_STUDENT ? sqrt(m->tau2 * (m->noise_df - 2.0) / m->noise_df)
                                              : 0.0;

    st = hdp_mc_drive(pb, opt, n, &sim_method, &c, res, err);
    /* docs/theory.md §6 on the eta_k, sigma_k the runs used (the same hdp_sched_step, of the
     * problem's schedule): equals rho; computed once with the problem */
    res->rho_accounted = pb->rho_accounted;
done:
    free(c.sqrt_lambda);
    return st;
}
