/*
 * finite.c — Monte Carlo of standard DP-SGD on a finite training set (docs/theory.md §6.6,
 * hdpsgd/finite.h): the method the risk-curve driver of mc.c runs for a model with
 * sgd.sampling = shuffle | poisson (the grid, the run loop, divergence and the statistics are
 * the driver's).
 *
 * One run, in the eigenbasis of Sigma, e = theta - theta*, theta_0 = 0:
 *   the training set: N rows x_i = sqrt(lambda) .* g_i, z_i the label noise (y_i = x_i^T theta*
 *     + z_i), theta* uniform on the sphere of radius r*, all drawn once from the run's stream;
 *     or the rows of hdp_problem.train (a data file's, the same for every run) with their
 *     residuals and least-squares theta*, or, planted (train's z and target NULL), theta*
 *     and the z_i drawn once per run as for synthetic rows;
 *   T steps k = 0..T-1, each on a batch S_k:
 *     shuffle: each epoch a uniform permutation cut into ceil(N/B) batches of B (the last one
 *       N - (ceil(N/B) - 1) B rows), T = E ceil(N/B);
 *     poisson: every row independently with probability q = B/N, T = ceil(E/q);
 *   e <- e - (eta_k / B) (sum_{i in S_k} clip(g_i) + sigma C xi),  xi ~ N(0, I_d),
 *     g_i = (x_i^T e - z_i) x_i clipped to norm C = c sqrt(d) (the toolkit's threshold),
 *     eta_k = eta~(k/T) B/N: eta~ from the schedule at the fraction of the run's steps done,
 *     so that each row's clipped gradient moves theta by eta~(t)/N (one epoch at constant
 *     eta~ advances gradient flow by eta~, whatever B; at N = n, B = 1, E = 1 the steps of
 *     one-pass DP-SGD, docs/theory.md §1.3).
 * Every gradient of a batch is taken at the same e (the batch's sum, then one update).
 * Recorded: R_exc(theta_k) = 1/2 sum_i lambda_i e_i^2 exactly (the population excess risk)
 * at the driver's grid k_i = min(round(t_i T), T - 1), and the mean over the steps of the
 * fraction of the batch's gradients that were clipped. The final-iterate jump: the excess risk
 * the last step's noise adds, as for one-pass DP-SGD.
 * With a data set's held-out set also its mean squared error at the grid points, from the
 * held-out rows' moments as rows.c computes it (e^T Sigma_t e - 2 e^T b_t + c_t; planted:
 * e^T Sigma_t e + tau^2). Rows stored as float32 are read as float32.
 */
#include "sim/finite_internal.h"
#include "core/check.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/finite.h"
#include "hdpsgd/schedule.h"
#include "sim/mc.h"
#include "sim/mc_internal.h"
#include "sim/rng_internal.h"

/* ---- the batch samplers ---- */

long hdp_finite_poisson_batch(hdp_xoshiro *g, long N, double q, long *rows)
{
    long n = 0;
    if (q >= 1.0) {
        for (long i = 0; i < N; i++)
            rows[n++] = i;
        return n;
    }
    const double lq = log1p(-q); /* < 0 */
    for (long i = 0;;) {
        /* the rows skipped before the next chosen one: Geometric(q) by inversion,
         * floor(log U / log(1 - q)), U uniform on (0, 1] */
        double u = 1.0 - hdp_xoshiro_double(g);
        double gap = floor(log(u) / lq);
        if (!(gap < (double)(N - i)))
            return n;
        i += (long)gap;
        rows[n++] = i++;
        if (i >= N)
            return n;
    }
}

/* uniform on 0..n-1, n >= 1: Lemire's multiply-and-reject */
static uint64_t below(hdp_xoshiro *g, uint64_t n)
{
    __uint128_t m = (__uint128_t)hdp_xoshiro_next(g) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t t = (0 - n) % n;
        while (low < t) {
            m = (__uint128_t)hdp_xoshiro_next(g) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

void hdp_finite_shuffle(hdp_xoshiro *g, long *perm, long N)
{
    for (long i = N - 1; i > 0; i--) {
        long j = (long)below(g, (uint64_t)i + 1);
        long t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* ---- the runs ---- */

typedef struct {
    long d, N, B;
    int poisson;
    long long T;              /* steps */
    long per_epoch;           /* shuffle: ceil(N/B) batches per epoch */
    double q;                 /* B/N */
    double lr;                /* eta_k = eta~(k/T) lr, lr = B/N */
    double sigma, C;          /* noise multiplier and clipping threshold c sqrt(d) */
    const double *lambda;     /* [d] */
    double *sqrt_lambda;      /* [d] */
    hdp_schedule sched;
    double radius;
    hdp_mc_noise noise;
    const hdp_trainset *train; /* NULL: synthetic rows drawn per run */
    int planted;               /* train's theta* and z drawn per run */
    double *train_xx;          /* [N] ||x_i||^2 of train's rows */
    const double *tsig, *tb;   /* the held-out set's moments (NULL: none; tb NULL: planted) */
    double tc;
    long every;                /* steps between progress ticks (about 4 million coordinate
                                  updates) */
} fin_ctx;

typedef struct {
    double *e, *acc, *xi, *g; /* [d] each */
    double *x, *z, *xx;       /* [N d], [N], [N]: the run's rows (synthetic; z also planted) */
    double *tmp;              /* [d] (a held-out set) */
    long *perm, *rows;        /* [N] */
    hdp_normals normals;
} fin_ws;

static void *fin_ws_alloc(const void *vctx)
{
    const fin_ctx *c = vctx;
    const long N = c->N, d = c->d, synthetic = !c->train;
    const hdp_mc_array a[] = {
        HDP_MC_ARRAY(fin_ws, e, d),        HDP_MC_ARRAY(fin_ws, acc, d),
        HDP_MC_ARRAY(fin_ws, xi, d),       HDP_MC_ARRAY(fin_ws, g, d),
        HDP_MC_ARRAY(fin_ws, perm, N),     HDP_MC_ARRAY(fin_ws, rows, N),
        HDP_MC_ARRAY(fin_ws, x, synthetic ? (size_t)N * (size_t)d : 0),
        HDP_MC_ARRAY(fin_ws, xx, synthetic ? N : 0),
        HDP_MC_ARRAY(fin_ws, z, synthetic || c->planted ? N : 0),
        HDP_MC_ARRAY(fin_ws, tmp, c->tsig ? d : 0)};
    return HDP_MC_WS_ALLOC(fin_ws, a);
}

/* the batch of step k into *rows (its count returned) */
static long batch_of(const fin_ctx *c, fin_ws *w, hdp_xoshiro *st, long long k,
                     const long **rows)
{
    if (c->poisson) {
        *rows = w->rows;
        return hdp_finite_poisson_batch(st, c->N, c->q, w->rows);
    }
    long j = (long)(k % c->per_epoch);
    if (j == 0)
        hdp_finite_shuffle(st, w->perm, c->N);
    long first = j * c->B, last = first + c->B < c->N ? first + c->B : c->N;
    *rows = w->perm + first;
    return last - first;
}

/* The training set of a run: drawn (synthetic) or the problem's rows (their theta* and labels
 * drawn when planted); e = -theta*. */
static void draw_rows(const fin_ctx *c, fin_ws *w, gsl_rng *rng, const double **X,
                      const double **Z, const double **XX)
{
    const long d = c->d;
    if (c->train) {
        *X = c->train->x;
        *XX = c->train_xx;
        if (c->planted) {
            hdp_mc_draw_target(rng, d, c->radius, w->e);
            for (long i = 0; i < c->N; i++)
                w->z[i] = hdp_mc_label_noise(&c->noise, rng);
            *Z = w->z;
            return;
        }
        for (long i = 0; i < d; i++)
            w->e[i] = -c->train->target[i];
        *Z = c->train->z;
        return;
    }
    hdp_mc_draw_target(rng, d, c->radius, w->e);
    for (long i = 0; i < c->N; i++) {
        double dot;
        hdp_normals_fill(&w->normals, w->g, d);
        hdp_mc_sample_dot(c->sqrt_lambda, w->g, w->e, w->x + (size_t)i * (size_t)d, d, &dot,
                          &w->xx[i]);
        w->z[i] = hdp_mc_label_noise(&c->noise, rng);
    }
    *X = w->x;
    *Z = w->z;
    *XX = w->xx;
}

/* acc = the sum of the batch's clipped gradients at e; the clipped count in *nclip; 0 when a
 * residual is not finite */
static int batch_gradient(const fin_ctx *c, fin_ws *w, const double *X, const double *Z,
                          const double *XX, const long *rows, long nb, double *nclip)
{
    const long d = c->d;
    const float *X32 = c->train ? c->train->x32 : NULL; /* the rows as float32 (else X) */
    memset(w->acc, 0, sizeof(double) * (size_t)d);
    *nclip = 0;
    for (long b = 0; b < nb; b++) {
        size_t at = (size_t)rows[b] * (size_t)d;
        double r = (X32 ? hdp_mc_dot_f32(X32 + at, w->e, d) : hdp_mc_dot(X + at, w->e, d)) -
                   Z[rows[b]];
        if (!isfinite(r))
            return 0;
        double coef = r, gnorm = fabs(r) * sqrt(XX[rows[b]]);
        if (gnorm > c->C) {
            coef *= c->C / gnorm;
            *nclip += 1.0;
        }
        if (X32)
            hdp_mc_axpy_f32(w->acc, coef, X32 + at, d);
        else
            hdp_mc_axpy(w->acc, coef, X + at, d);
    }
    return 1;
}

/* the held-out MSE of theta = theta* + e at grid points from..to-1 (a held-out set) */
static void record_test(const fin_ctx *c, fin_ws *w, long from, long to, mc_run_out *out)
{
    if (!out->aux || !c->tsig)
        return;
    const long d = c->d;
    double q = 0, lin = 0;
    for (long i = 0; i < d; i++) {
        double s = hdp_mc_dot(c->tsig + (size_t)i * (size_t)d, w->e, d);
        q += w->e[i] * s;
        if (c->tb)
            lin += w->e[i] * c->tb[i];
    }
    for (long p = from; p < to; p++)
        out->aux[p] = q - 2.0 * lin + c->tc;
}

static void fin_run(const void *vctx, const mc_grid *g, void *vws, gsl_rng *rng, mc_run_out *out)
{
    const fin_ctx *c = vctx;
    fin_ws *w = vws;
    const long d = c->d;
    hdp_xoshiro *st = hdp_rng_state(rng);
    hdp_normals_init(&w->normals, st);
    const double *X, *Z, *XX;
    draw_rows(c, w, rng, &X, &Z, &XX);
    for (long i = 0; i < c->N; i++)
        w->perm[i] = i;
    double R = hdp_mc_excess_risk(c->lambda, w->e, d);
    long p = hdp_mc_record_start(g, R, out);
    record_test(c, w, 0, p, out);
    double clip_sum = 0; /* the steps' clipped fractions since the last grid point */
    for (long long k = 0; k < c->T; k++) {
        const long *rows;
        long nb = batch_of(c, w, st, k, &rows);
        double nclip;
        if (!batch_gradient(c, w, X, Z, XX, rows, nb, &nclip)) {
            out->diverged = 1;
            return;
        }
        clip_sum += nb > 0 ? nclip / (double)nb : 0.0;
        double eta = hdp_sched_eta(&c->sched, (double)k / (double)c->T) * c->lr;
        double a = -eta / (double)c->B, s = eta * c->sigma * c->C / (double)c->B;
        if (s > 0 && k < c->T - 1) {
            hdp_normals_fill(&w->normals, w->xi, d);
            hdp_mc_axpby(w->e, a, w->acc, s, w->xi, d);
        } else {
            hdp_mc_axpy(w->e, a, w->acc, d);
            if (s > 0) { /* the last step: the final-iterate jump */
                double before = hdp_mc_excess_risk(c->lambda, w->e, d);
                hdp_normals_fill(&w->normals, w->xi, d);
                hdp_mc_axpy(w->e, s, w->xi, d);
                out->jump = hdp_mc_excess_risk(c->lambda, w->e, d) - before;
            }
        }
        if ((k + 1) % c->every == 0 && !hdp_mc_tick(g, c->every)) {
            out->diverged = 1; /* cancelled: the loop reports it */
            return;
        }
        if (p < g->points && g->kgrid[p] == k + 1) {
            long from = p;
            R = hdp_mc_excess_risk(c->lambda, w->e, d);
            if (!hdp_mc_record(g, (long)(k + 1), R, &clip_sum, &p, out)) {
                out->diverged = 1;
                return;
            }
            record_test(c, w, from, p, out);
        }
    }
}

static const mc_method fin_method = {"sim", fin_ws_alloc, free, fin_run, 0};
static const mc_method fin_method_test = {"sim", fin_ws_alloc, free, fin_run, 1};

/* sim.divergence_factor x max(R(0), P), P = (1/2) d sum_k (eta_k sigma C / B)^2 <= the
 * excess risk the private noise adds over the run without contraction (Tr Sigma = d) */
static double fin_threshold(const hdp_problem *pb, const fin_ctx *c)
{
    const hdp_model *m = pb->model;
    double r0 = 0.5 * m->target_radius * m->target_radius;
    if (!(r0 > 0))
        r0 = 0.5 * m->tau2;
    if (!(r0 > 0))
        r0 = 1.0;
    if (c->train && c->train->target) /* a data set's least-squares theta*: its own R(0) */
        r0 = fmax(r0, hdp_mc_excess_risk(c->lambda, c->train->target, c->d));
    double priv = 0;
    if (c->sigma > 0) {
        double s = pb->eta_sup * c->lr * c->sigma * c->C / (double)c->B;
        priv = 0.5 * (double)c->d * (double)c->T * s * s;
    }
    return m->divergence_factor * fmax(r0, priv);
}

hdp_status hdp_finite_run_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                                  hdp_mc_result *res, hdp_error *err)
{
    const hdp_model *m = pb->model;
    const hdp_finite_privacy *sp = &pb->sgd;
    fin_ctx c = {.d = m->d, .N = sp->train_size, .B = sp->batch, .poisson = sp->poisson,
                 .T = sp->steps, .q = sp->sample_rate,
                 .per_epoch = (sp->train_size + sp->batch - 1) / sp->batch,
                 .lr = (double)sp->batch / (double)sp->train_size,
                 .sigma = sp->noise_multiplier, .C = m->c * sqrt((double)m->d),
                 .lambda = pb->spec.lambda, .sched = pb->sched, .radius = m->target_radius,
                 .train = pb->train};
    hdp_mc_noise_of(m, &c.noise);
    if (c.train && (c.train->N != c.N || c.train->d != c.d))
        return hdp_fail(err, HDP_EINPUT,
                        "hdp_sim_run_problem: the training set has %ld rows of dimension %ld, the "
                        "model %ld of %ld", c.train->N, c.train->d, c.N, c.d);
    if (c.train && (!c.train->x == !c.train->x32 || !c.train->z != !c.train->target))
        return hdp_fail(err, HDP_EINPUT,
                        "hdp_sim_run_problem: the training set needs exactly one of x and x32, "
                        "and z and target both given or both NULL (planted)");
    c.planted = c.train && !c.train->z;
    const hdp_data *data = hdp_model_data(m);
    if (data && data->has_test && data->test_sigma) { /* the held-out set (as rows.c) */
        c.tsig = data->test_sigma;
        c.tb = data->planted ? NULL : data->test_b;
        c.tc = data->planted ? m->tau2 : data->test_c;
    }
    if (c.T > LONG_MAX / 4)
        return hdp_fail(err, HDP_EINPUT, "hdp_sim_run_problem: %lld steps: too many", c.T);
    long every = (4L << 20) / (c.d * c.B > 0 ? c.d * c.B : 1);
    c.every = every > 0 ? every : 1;
    hdp_status st = HDP_OK;
    c.sqrt_lambda = hdp_mc_sqrt_lambda(pb, c.d, err);
    if (!c.sqrt_lambda)
        return HDP_ENOMEM;
    if (c.train) {
        c.train_xx = malloc(sizeof(double) * (size_t)c.N);
        if (!c.train_xx) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory for %ld rows", c.N);
            goto done;
        }
        for (long i = 0; i < c.N; i++) {
            size_t at = (size_t)i * (size_t)c.d;
            if (c.train->x32) {
                double s = 0;
                for (long j = 0; j < c.d; j++) {
                    double v = c.train->x32[at + (size_t)j];
                    s += v * v;
                }
                c.train_xx[i] = s;
            } else {
                c.train_xx[i] = hdp_mc_dot(c.train->x + at, c.train->x + at, c.d);
            }
        }
    }
    /* the driver's problem with this method's divergence threshold */
    hdp_problem local = *pb;
    local.threshold = fin_threshold(pb, &c);
    st = hdp_mc_drive(&local, opt, (long)c.T, 0, c.tsig ? &fin_method_test : &fin_method, NULL,
                      &c, res, err);
    res->rho_accounted = NAN; /* one-pass's accountant: not this algorithm (see res->sgd) */
    res->sgd = *sp;
done:
    free(c.sqrt_lambda);
    free(c.train_xx);
    return st;
}
