/*
 * rows.c — Monte Carlo of one-pass DP-SGD on a user's rows (data.source = file,
 * docs/theory.md §9): the method the risk-curve driver of mc.c runs when the model has a
 * data set, in place of dpsgd.c's Gaussian rows.
 *
 * The rows were prepared once (hdpsgd/dataset.h): centred, scaled to mean eigenvalue 1 and
 * rotated into the eigenbasis of their covariance Sigma = diag(lambda), so one step is one
 * gather of a stored row and the O(d) update of dpsgd.c:
 *   i = a uniform row (sim.rows = with-replacement) or the k-th of a random permutation
 *       (without-replacement: one pass, n <= N)
 *   r = x_i^T theta - y_i = x_i^T e - z_i        e = theta - theta*, z_i = y_i - x_i^T theta*
 *   e <- e - eta_k r x_i / max(1, |r| ||x_i|| / C_clip) + 2 C_clip sigma_k xi
 * with target = least-squares: theta* the ridge least squares, z_i the row's residual (fixed);
 * target = planted: theta* uniform on the sphere of target_radius (each run its own), z_i
 * drawn afresh from data.noise at every step. ||x_i||^2 is computed once per row (in double).
 * Recorded exactly through Sigma: R_exc = 1/2 sum_j lambda_j e_j^2 (docs/theory.md §9: for
 * ridge = 0 this is R(theta) - R(theta*) on the rows); with a held-out set also its mean
 * squared error, e^T Sigma_t e - 2 e^T b_t + c_t (least-squares; planted: e^T Sigma_t e +
 * tau^2, the expectation over the synthesised test labels' noise), from the held-out rows'
 * moments computed once (hdp_data). Rows stored as float32 are read as float32.
 * Row indices: Lemire's multiply-shift of a 64-bit output (bias below N / 2^64).
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
#include "sim/mc.h"
#include "sim/mc_internal.h"
#include "sim/rng_internal.h"

typedef struct {
    long d, n, N;
    const float *f32;      /* the rows (one of the two) */
    const double *f64;
    const double *xx;      /* [N] ||x_i||^2 */
    const double *lambda;  /* [d] eigenvalues of Sigma (the rows' own) */
    hdp_schedule sched;
    double C;              /* c sqrt(d) */
    int without;           /* without replacement */
    /* least-squares */
    const double *theta;   /* [d] theta* in the eigenbasis, or NULL (planted) */
    const double *z;       /* [N] residuals */
    /* planted */
    double radius, tau, t_scale, df;
    hdp_noise_kind noise;
    double mix_w, mix_m1, mix_m2, mix_s1, mix_s2;
    const double *sample;
    size_t sample_n;
    /* held-out set (NULL: none) */
    const double *tsig, *tb;
    double tc;
} rows_ctx;

typedef struct {
    double *e, *g, *tmp;
    long *perm;
    hdp_normals normals;
} rows_ws;

static void rows_ws_free(void *vw)
{
    rows_ws *w = vw;
    if (!w)
        return;
    free(w->e);
    free(w->g);
    free(w->tmp);
    free(w->perm);
    free(w);
}

static void *rows_ws_alloc(const void *vctx)
{
    const rows_ctx *c = vctx;
    rows_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->e = hdp_mc_vec_alloc(c->d);
    w->g = hdp_mc_vec_alloc(c->d);
    w->tmp = c->tsig ? hdp_mc_vec_alloc(c->d) : NULL;
    w->perm = c->without ? malloc(sizeof(long) * (size_t)c->N) : NULL;
    if (!w->e || !w->g || (c->tsig && !w->tmp) || (c->without && !w->perm)) {
        rows_ws_free(w);
        return NULL;
    }
    return w;
}

/* the high 64 bits of the 128-bit product of a 64-bit output and N < 2^63 (Lemire), in
 * 32-bit halves (ISO C has no 128-bit integer) */
static inline long uniform_index(hdp_xoshiro *st, long N)
{
    uint64_t a = hdp_xoshiro_next_inline(st), b = (uint64_t)N;
    uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return (long)(hh + (lh >> 32) + (hl >> 32) + (mid >> 32));
}

static double label_noise(const rows_ctx *c, gsl_rng *rng)
{
    hdp_xoshiro *st = hdp_rng_state(rng);
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

/* the held-out MSE of theta = theta* + e */
static double test_mse(const rows_ctx *c, const double *e, double *tmp)
{
    long d = c->d;
    double q = 0, lin = 0;
    for (long i = 0; i < d; i++) {
        const double *row = c->tsig + (size_t)i * (size_t)d;
        double s = 0;
        for (long j = 0; j < d; j++)
            s += row[j] * e[j];
        tmp[i] = s;
        q += e[i] * s;
        if (c->tb)
            lin += e[i] * c->tb[i];
    }
    return q - 2.0 * lin + c->tc;
}

/* x_i^T e */
static inline double row_dot(const rows_ctx *c, long i, const double *e)
{
    long d = c->d;
    double s = 0;
    if (c->f32) {
        const float *x = c->f32 + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            s += (double)x[j] * e[j];
    } else {
        const double *x = c->f64 + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            s += x[j] * e[j];
    }
    return s;
}

/* e += a x_i (+ s g when g is given) */
static inline void row_update(const rows_ctx *c, long i, double a, double s, const double *g,
                              double *e)
{
    long d = c->d;
    if (c->f32) {
        const float *x = c->f32 + (size_t)i * (size_t)d;
        if (g)
            for (long j = 0; j < d; j++)
                e[j] += a * (double)x[j] + s * g[j];
        else
            for (long j = 0; j < d; j++)
                e[j] += a * (double)x[j];
    } else {
        const double *x = c->f64 + (size_t)i * (size_t)d;
        if (g)
            for (long j = 0; j < d; j++)
                e[j] += a * x[j] + s * g[j];
        else
            for (long j = 0; j < d; j++)
                e[j] += a * x[j];
    }
}

static void record_test(const rows_ctx *c, rows_ws *w, long p, mc_run_out *out)
{
    if (out->aux && c->tsig)
        out->aux[p] = test_mse(c, w->e, w->tmp);
}

static void rows_run(const void *vctx, const mc_grid *g, void *vws, gsl_rng *rng,
                     mc_run_out *out)
{
    const rows_ctx *c = vctx;
    rows_ws *w = vws;
    const long d = c->d, n = c->n;
    double *e = w->e;
    hdp_xoshiro *st = hdp_rng_state(rng);
    hdp_normals_init(&w->normals, st);
    if (c->theta)
        for (long j = 0; j < d; j++)
            e[j] = -c->theta[j];
    else
        hdp_mc_draw_target(rng, d, c->radius, e);
    if (c->without) { /* the first n of a uniform random permutation (Fisher-Yates) */
        for (long i = 0; i < c->N; i++)
            w->perm[i] = i;
        for (long k = 0; k < n; k++) {
            long j = k + uniform_index(st, c->N - k), t = w->perm[k];
            w->perm[k] = w->perm[j];
            w->perm[j] = t;
        }
    }
    double R = hdp_mc_excess_risk(c->lambda, e, d);
    long p0 = 0;
    while (p0 < g->points && g->kgrid[p0] == 0)
        record_test(c, w, p0++, out);
    long p = hdp_mc_record_start(g, R, out);
    double nclip = 0;
    for (long k = 0; k < n; k++) {
        double eta_k, sigma_k;
        hdp_sched_step(&c->sched, n, k, &eta_k, &sigma_k);
        long i = c->without ? w->perm[k] : uniform_index(st, c->N);
        double zi = c->theta ? c->z[i] : label_noise(c, rng);
        double r = row_dot(c, i, e) - zi;
        if (eta_k * c->xx[i] > 2.0)
            out->violations += 1.0;
        if (!isfinite(r)) {
            out->diverged = 1;
            return;
        }
        double coef = eta_k * r, gnorm = fabs(r) * sqrt(c->xx[i]);
        if (gnorm > c->C) {
            coef *= c->C / gnorm;
            nclip += 1.0;
        }
        double s = sigma_k > 0 ? 2.0 * c->C * sigma_k : 0.0;
        if (s > 0 && k < n - 1) {
            hdp_normals_fill(&w->normals, w->g, d);
            row_update(c, i, -coef, s, w->g, e);
        } else {
            row_update(c, i, -coef, 0, NULL, e);
            if (s > 0) { /* the last step: the final-iterate jump (docs/theory.md §3) */
                double before = hdp_mc_excess_risk(c->lambda, e, d);
                hdp_normals_fill(&w->normals, w->g, d);
                for (long j = 0; j < d; j++)
                    e[j] += s * w->g[j];
                out->jump = hdp_mc_excess_risk(c->lambda, e, d) - before;
            }
        }
        if ((k + 1) % g->every == 0 && !hdp_mc_tick(g, g->every)) {
            out->diverged = 1;
            return;
        }
        if (p < g->points && g->kgrid[p] == k + 1) {
            long from = p;
            R = hdp_mc_excess_risk(c->lambda, e, d);
            if (!hdp_mc_record(g, k + 1, R, &nclip, &p, out)) {
                out->diverged = 1;
                return;
            }
            for (long q = from; q < p; q++)
                record_test(c, w, q, out);
        }
    }
}

static const mc_method rows_method = {"sim", rows_ws_alloc, rows_ws_free, rows_run, 0};
static const mc_method rows_method_test = {"sim", rows_ws_alloc, rows_ws_free, rows_run, 1};

/* The real-row Monte Carlo of a problem whose model has a data set (hdp_sim_run_problem
 * calls it). */
hdp_status hdp_sim_rows_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                                hdp_mc_result *res, hdp_error *err)
{
    const hdp_model *m = pb->model;
    const hdp_data *data = hdp_model_data(m);
    const hdp_dataset *ds = &data->train;
    if (hdp_feature_norm_bound(m) > 0)
        return hdp_model_fail_key(m, "clip", "feature_norm", err,
                                  "feature clipping is not simulated on a data set's rows "
                                  "(data.source = file): leave clip.feature_norm at 0");
    rows_ctx c;
    memset(&c, 0, sizeof c);
    c.d = ds->d;
    c.n = m->n;
    c.N = ds->n;
    c.f32 = ds->rows.f32;
    c.f64 = ds->rows.f64;
    c.lambda = ds->lambda;
    c.sched = pb->sched;
    c.C = m->c * sqrt((double)c.d);
    c.without = m->rows == HDP_ROWS_WITHOUT_REPLACEMENT;
    c.radius = m->target_radius;
    c.noise = m->noise;
    c.tau = sqrt(m->tau2);
    c.df = m->noise_df;
    c.t_scale = m->noise == HDP_NOISE_STUDENT ? sqrt(m->tau2 * (m->noise_df - 2.0) / m->noise_df)
                                              : 0.0;
    c.mix_w = m->mixture_weight;
    c.mix_m1 = m->mixture_mean;
    c.mix_m2 = -m->mixture_weight * m->mixture_mean / (1.0 - m->mixture_weight);
    c.mix_s1 = sqrt(m->mixture_var1);
    c.mix_s2 = sqrt(m->mixture_var2);
    c.sample = m->noise_values;
    c.sample_n = m->noise_values ? (size_t)m->noise_len : 0;
    if (!data->planted) {
        c.theta = ds->theta_eig;
        c.z = ds->residual;
    }
    if (data->has_test && data->test_sigma) {
        c.tsig = data->test_sigma;
        c.tb = data->planted ? NULL : data->test_b;
        c.tc = data->planted ? m->tau2 : data->test_c;
    }
    double *xx = malloc(sizeof(double) * (size_t)c.N);
    if (!xx)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the norms of %ld rows", c.N);
    for (long i = 0; i < c.N; i++) {
        double s = 0;
        if (c.f32)
            for (long j = 0; j < c.d; j++) {
                double v = c.f32[(size_t)i * (size_t)c.d + (size_t)j];
                s += v * v;
            }
        else
            for (long j = 0; j < c.d; j++) {
                double v = c.f64[(size_t)i * (size_t)c.d + (size_t)j];
                s += v * v;
            }
        xx[i] = s;
    }
    c.xx = xx;
    hdp_status st = hdp_mc_drive(pb, opt, c.n, c.tsig ? &rows_method_test : &rows_method, &c,
                                 res, err);
    res->rho_accounted = pb->rho_accounted;
    free(xx);
    return st;
}
