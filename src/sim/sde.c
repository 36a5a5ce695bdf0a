/*
 * sde.c — Euler-Maruyama of the homogenized SDE of DP-SGD (docs/theory.md §4)
 * in the eigenbasis of Sigma, run through the risk-curve driver of mc.c.
 *
 *   dTheta = -eta~ mu_c(R) Sigma (Theta - theta*) dt + eta~ sqrt(2 V_c(R) Sigma / n) dB^s
 *            + 2 (sqrt(d)/n) c sigma~ dB^p,          R = R_exc(Theta)
 * With e = Theta - theta*, step h, N = round(1/h) steps, t_j = j h, j = 0..N-1:
 *   e <- e - eta~(t_j) mu_c(R) lambda .* e h
 *          + eta~(t_j) sqrt(2 V_c(R) lambda / n) sqrt(h) xi1 + 2 (sqrt(d)/n) c sigma~(t_j) sqrt(h) xi2
 * R = 1/2 sum_i lambda_i e_i^2 recomputed every step (docs/theory.md §1), mu_c and V_c
 * from hdp_clip_eval (docs/theory.md §2; V_c under the square root, not mu_c: see the
 * note in docs/theory.md §4). h = 1/n reproduces the discrete noise level. At t = 1 the
 * final-iterate noise of docs/theory.md §3 is added: 2 C_clip sigma_f xi with
 * sigma_f = (eta~(1)/n)/rho (none when rho = inf), C_clip = c sqrt(d).
 * Recorded at k_i = round(t_i N) (the nearest step; N - 1 at most for t_i < 1, before the
 * final-iterate noise, as in the ODE); the "clipped fraction"
 * of an interval is the mean of 1 - mu_c(R) over its steps, the probability
 * that a DP-SGD step would be clipped.
 * Student-t label noise: mu_c and V_c are quadratures; they come from the series fitted
 * once per run (hdp_clip_tabulate, docs/theory.md §2.3), the ODE's, direct evaluation
 * outside the table's range.
 */
#include "core/check.h"
#include "core/schema.h"
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/clip.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/error.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/spectrum.h"
#include "sim/mc.h"
#include "sim/mc_internal.h"

typedef struct {
    long d, n, N;
    double h;
    const double *lambda;  /* [d] */
    double *sqrt_lambda;   /* [d] */
    hdp_schedule sched;    /* eta~(t_j), sigma~^2(t_j) at t_j = j h, evaluated per step (no O(N) arrays) */
    double q_scale;        /* 2 (sqrt(d)/n) c sqrt(h): the private noise is q_scale sigma~(t_j) */
    double final_noise;    /* 2 C_clip sigma_f, sigma_f = (eta~(1)/n)/rho (0 if rho = inf) */
    double radius;
    const double *energy; /* [d] a target that is not uniform (spectrum.h), or NULL */
    /* a data set's least-squares target (docs/theory.md §9): the shifted problem's start
     * -theta_c (eigenbasis) and the bias b = theta_c - theta* (NULL: none), the risk recorded
     * about theta*, 1/2 sum lambda (e + b)^2 */
    const double *start, *bias;
    double c;
    hdp_noise_law law;     /* the label-noise law, for the clipping factors (its sample the
                              model's) */
    hdp_clip *fit;         /* the problem's factors (fitted once), read by every thread */
} sde_ctx;

/* ---- the SDE ---- */

typedef struct {
    double *e, *z1, *z2; /* [d] each: the state and a step's two Gaussian vectors */
    hdp_normals normals; /* the run's block stream of Gaussians (rng.h) */
    hdp_clip *clip;      /* not thread-safe: one per thread */
} sde_ws;

static void sde_ws_free(void *vw)
{
    if (vw)
        hdp_clip_free(((sde_ws *)vw)->clip);
    free(vw);
}

static void *sde_ws_alloc(const void *vctx)
{
    const sde_ctx *c = vctx;
    const hdp_mc_array a[] = {HDP_MC_ARRAY(sde_ws, e, c->d), HDP_MC_ARRAY(sde_ws, z1, c->d),
                              HDP_MC_ARRAY(sde_ws, z2, c->d)};
    sde_ws *w = HDP_MC_WS_ALLOC(sde_ws, a);
    if (w && !(w->clip = hdp_clip_alloc_law(&c->law, c->c))) {
        free(w);
        return NULL;
    }
    return w;
}

/* the excess risk about theta*: R itself, or with a data set's clipping bias 1/2 sum lambda
 * (e + b)^2 */
static double about_target(const sde_ctx *c, const double *e, double R)
{
    if (!c->bias)
        return R;
    double s = 0;
    for (long i = 0; i < c->d; i++) {
        double v = e[i] + c->bias[i];
        s += c->lambda[i] * v * v;
    }
    return 0.5 * s;
}

/* One Euler-Maruyama path of the SDE of docs/theory.md §4 (see the comment at the top),
 * final-iterate noise of docs/theory.md §3 at t = 1. */
static void sde_run(const void *vctx, const mc_grid *g, void *vws, gsl_rng *rng, mc_run_out *out)
{
    const sde_ctx *c = vctx;
    sde_ws *w = vws;
    const long d = c->d, N = c->N;
    const double *lambda = c->lambda, *sl = c->sqrt_lambda;
    const double sqrt_h = sqrt(c->h);
    double *e = w->e, *z1 = w->z1, *z2 = w->z2;
    hdp_normals *ns = &w->normals;

    /* the Gaussians of the steps come from the run's block stream (rng.h), theta*
     * from the run's stream itself */
    hdp_normals_init(ns, hdp_rng_state(rng));
    if (c->start)
        for (long i = 0; i < d; i++)
            e[i] = -c->start[i];
    else
        hdp_mc_draw_target_energy(rng, d, c->radius, c->energy, e);
    double R = hdp_mc_excess_risk(lambda, e, d);
    long p = hdp_mc_record_start(g, about_target(c, e, R), out);
    double clip_sum = 0; /* sum of 1 - mu_c over the steps since the last grid point */
    for (long j = 0; j < N; j++) {
        if (!isfinite(R)) {
            out->diverged = 1;
            return;
        }
        hdp_clip_values cv;
        if (!hdp_clip_eval_fitted(c->fit, R, &cv))
            hdp_clip_eval_values(w->clip, R > 0 ? R : 0.0, &cv);
        double mu = cv.mu, V = cv.V;
        clip_sum += 1.0 - mu;
        double t = (double)j * c->h, eta = hdp_sched_eta(&c->sched, t);
        double s2 = hdp_sched_sigma2(&c->sched, t); /* 0 when rho = inf (then c may be inf) */
        double a = eta * mu * c->h;                                  /* drift */
        double b = eta * sqrt(2.0 * V / (double)c->n) * sqrt_h;      /* SGD noise */
        double q = s2 > 0 ? c->q_scale * sqrt(s2) : 0.0;             /* private noise */
        hdp_normals_fill(ns, z1, d);
        if (q > 0)
            hdp_normals_fill(ns, z2, d);
        double s = hdp_mc_sde_step(e, lambda, sl, a, b, z1, q, q > 0 ? z2 : NULL, d);
        R = 0.5 * s;
        if (j == N - 1 && c->final_noise > 0) { /* final-iterate noise (docs/theory.md §3) */
            hdp_normals_fill(ns, z1, d);
            for (long i = 0; i < d; i++)
                e[i] += c->final_noise * z1[i];
            double after = hdp_mc_excess_risk(lambda, e, d);
            out->jump = after - R;
            R = after;
        }
        if ((j + 1) % g->every == 0 && !hdp_mc_tick(g, g->every)) {
            out->diverged = 1; /* cancelled (issue 29): the loop reports it */
            return;
        }
        if (p < g->points && g->kgrid[p] == j + 1 && /* a grid point: no call on other steps */
            !hdp_mc_record(g, j + 1, about_target(c, e, R), &clip_sum, &p, out)) {
            out->diverged = 1;
            return;
        }
    }
}

static const mc_method sde_method = {"sde", sde_ws_alloc, sde_ws_free, sde_run, 0};

hdp_status hdp_sde_run(const hdp_model *m, const hdp_mc_options *opt, hdp_mc_result *res,
                       hdp_error *err)
{
    return hdp_mc_with_problem(m, opt, res, hdp_sde_run_problem, "hdp_sde_run", err);
}

hdp_status hdp_sde_run_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                               hdp_mc_result *res, hdp_error *err)
{
    hdp_status st = hdp_mc_problem_entry(pb, opt, res, "hdp_sde_run_problem", err);
    if (st != HDP_OK)
        return st;
    const hdp_model *m = pb->model;
    if ((st = hdp_model_require_one_pass(m, "the homogenized SDE", err)) != HDP_OK)
        return st;
    if (m->batch > 1) /* docs/theory.md §4: its noise is derived for batch 1 */
        return hdp_model_fail_key(m, "sgd", "batch", err,
                                  "batch = %ld: the homogenized SDE (sde) is derived for "
                                  "batch = 1 only; use ode (the batched ODE) and sim",
                                  m->batch);
    char why[256]; /* the step is sde.step: that key's one range (core/schema.h) */
    if (hdp_schema_out_of_range("sde", "step", opt->sde_step, why, sizeof why))
        return hdp_fail(err, HDP_EINPUT, "SDE options: [sde] %s (0 = 1/n)", why);
    long d = m->d, n = m->n;
    double h = opt->sde_step > 0 ? opt->sde_step : 1.0 / (double)n;
    double Nd = round(1.0 / h);
    if (!(Nd >= 1) || Nd > 4.0e12)
        return hdp_fail(err, HDP_EINPUT, "SDE step h = %g gives N = round(1/h) = %g steps",
                        h, Nd);
    double eta1 = hdp_sched_eta(&pb->sched, 1.0);
    sde_ctx c = {.d = d, .n = n, .N = (long)Nd, .h = h, .lambda = pb->spec.lambda,
                 .sqrt_lambda = hdp_mc_sqrt_lambda(pb, d, err), .sched = pb->sched,
                 .q_scale = 2.0 * (sqrt((double)d) / (double)n) * m->c * sqrt(h),
                 .final_noise = isinf(m->rho) || !(eta1 > 0)
                                    ? 0.0
                                    : 2.0 * m->c * sqrt((double)d) * (eta1 / (double)n) / m->rho,
                 .radius = m->target_radius, .energy = pb->spec.energy, .c = m->c,
                 .fit = pb->clip}; /* the problem's factors, fitted on [0, the divergence
                                      threshold]; the spectrum's arrays borrowed */
    if (!c.sqrt_lambda)
        return HDP_ENOMEM;
    double *bias = NULL; /* a data set's clipping bias (docs/theory.md §9.2) */
    const hdp_data *data = hdp_model_data(m);
    if (data && !data->planted) { /* the shifted problem (docs/theory.md §9.2) */
        const hdp_data_bias *b = NULL;
        if ((st = hdp_data_bias_of(m, &b, err)) != HDP_OK)
            goto done;
        c.start = b ? b->theta_c : data->train.theta_eig;
        c.lambda = data->train.lambda;
        if (b && !(bias = malloc(sizeof(double) * (size_t)d))) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping bias");
            goto done;
        }
        for (long i = 0; b && i < d; i++)
            bias[i] = b->theta_c[i] - data->train.theta_eig[i];
        c.bias = bias;
    }
    hdp_noise_law_of_model(m, &c.law);
    st = hdp_mc_drive(pb, opt, c.N, 0, &sde_method, NULL, &c, res, err);
    /* docs/theory.md §6 on the discrete schedule of the model (the SDE's continuum
     * noise is its limit; the accountant is defined on the steps): the problem's */
    res->rho_accounted = pb->rho_accounted;
done:
    free(c.sqrt_lambda);
    free(bias);
    return st;
}
