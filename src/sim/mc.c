/*
 * mc.c — the Monte Carlo driver (see mc.h): on top of the generic run loop of every Monte
 * Carlo in the library (mc_loop.c), the risk-curve driver of the DP-SGD simulation (dpsgd.c,
 * docs/theory.md §1) and the homogenized SDE (sde.c, section 4).
 *
 * The loop is exact bookkeeping, no numerics: run r's stream and slot are functions of r
 * only and the caller reduces the slots serially in run order, so every result is the same
 * bits for any thread count and any start order. The risk-curve driver records the excess
 * risk at the ODE's grid, excludes the runs that diverged (a non-finite value or an excess
 * risk above the problem's threshold, hdpsgd/problem.h) and reduces the others in run order: mean and standard error
 * (two passes, sim/stats.h), the 10/50/90 % quantiles (GSL's linear interpolation between
 * order statistics, found by quickselect), the mean clipped fraction and the mean final-iterate jump.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include "sim/mc.h"
#include "core/check.h"
#include "core/schema.h"
#include "sim/mc_internal.h"
#include "sim/stats.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/clip.h"
#include "hdpsgd/schedule.h"
#include "sim/rng_internal.h"
#include "sim/threads.h"

/* ---- 2. the risk-curve driver: options and results ---- */

void hdp_mc_options_from_model(const hdp_model *m, hdp_mc_options *opt)
{
    if (!m || !opt)
        return;
    memset(opt, 0, sizeof *opt);
    opt->runs = m->runs; /* threads 0 (all), no progress */
    opt->seed = m->seed;
    opt->sde_step = m->sde_step;
}

void hdp_mc_result_free(hdp_mc_result *res)
{
    if (!res)
        return;
    double **arrays[] = {&res->t,   &res->mean, &res->stderr_, &res->q10,
                         &res->q50, &res->q90,  &res->clipped, &res->test_mse,
                         &res->test_mse_stderr};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    res->points = 0;
}

static hdp_status alloc_result(hdp_mc_result *res, long points, hdp_error *err)
{
    res->points = points;
    double **arrays[] = {&res->t,   &res->mean, &res->stderr_, &res->q10,
                         &res->q50, &res->q90,  &res->clipped};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        *arrays[i] = calloc((size_t)points, sizeof(double));
        if (!*arrays[i]) {
            hdp_mc_result_free(res);
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld output points", points);
        }
    }
    return HDP_OK;
}

hdp_status hdp_mc_check_options(const hdp_mc_options *opt, hdp_error *err)
{
    char why[256]; /* runs is sim.runs: that key's one range (core/schema.h) */
    if (hdp_schema_out_of_range("sim", "runs", (double)opt->runs, why, sizeof why))
        return hdp_fail(err, HDP_EINPUT, "Monte Carlo options: [sim] %s", why);
    return hdp_threads_check(opt->threads, "Monte Carlo", err);
}

hdp_status hdp_mc_problem_entry(const hdp_problem *pb, const hdp_mc_options *opt,
                                hdp_mc_result *res, const char *who, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE_FOR(who, err, pb);
    HDP_REQUIRE_FOR(who, err, opt);
    HDP_REQUIRE_FOR(who, err, res);
    /* the model was checked when the problem was built (hdp_problem_build) */
    if (hdp_problem_check(pb, NULL, who, err) != HDP_OK)
        return HDP_EINPUT;
    return hdp_mc_check_options(opt, err);
}

hdp_status hdp_mc_with_problem(const hdp_model *m, const hdp_mc_options *opt, hdp_mc_result *res,
                               hdp_mc_problem_fn run, const char *who, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE_FOR(who, err, m);
    HDP_REQUIRE_FOR(who, err, opt);
    HDP_REQUIRE_FOR(who, err, res);
    hdp_problem pb;
    hdp_status st = hdp_problem_build(m, &pb, err);
    if (st == HDP_OK)
        st = run(&pb, opt, res, err);
    hdp_problem_free(&pb);
    return st;
}

double *hdp_mc_sqrt_lambda(const hdp_problem *pb, long d, hdp_error *err)
{
    double *sl = hdp_mc_vec_alloc(d);
    if (!sl) {
        hdp_fail(err, HDP_ENOMEM, "out of memory for d = %ld", d);
        return NULL;
    }
    for (long i = 0; i < d; i++)
        sl[i] = sqrt(pb->spec.lambda[i]);
    return sl;
}

/* ---- helpers of the methods ---- */

long hdp_mc_record_start(const mc_grid *g, double R, mc_run_out *out)
{
    long p = 0;
    for (; p < g->points && g->kgrid[p] == 0; p++) {
        out->risk[p] = R;
        out->clipped[p] = 0.0;
    }
    return p;
}

int hdp_mc_record(const mc_grid *g, long k, double R, double *clip_sum, long *p,
                  mc_run_out *out)
{
    if (*p >= g->points || g->kgrid[*p] != k)
        return 1;
    if (!isfinite(R) || R > g->threshold)
        return 0;
    long span = k - g->kgrid[*p - 1];
    out->risk[*p] = R;
    out->clipped[*p] = span > 0 ? *clip_sum / (double)span : 0.0;
    *clip_sum = 0;
    for ((*p)++; *p < g->points && g->kgrid[*p] == k; (*p)++) {
        out->risk[*p] = R;
        out->clipped[*p] = 0.0; /* empty interval */
    }
    return 1;
}

/* theta* uniform on the sphere of radius r* (docs/theory.md §1, §3), as e = -theta* */
void hdp_mc_draw_target(gsl_rng *rng, long d, double radius, double *e)
{
    hdp_xoshiro *st = hdp_rng_state(rng); /* the fast Gaussian reads the stream directly */
    double norm2 = 0;
    for (long i = 0; i < d; i++) {
        e[i] = hdp_rng_normal_fast(st);
        norm2 += e[i] * e[i];
    }
    /* e = -theta*, theta* = radius g / ||g|| (the uniform law on the sphere) */
    double scale = norm2 > 0 ? -radius / sqrt(norm2) : 0.0;
    for (long i = 0; i < d; i++)
        e[i] *= scale;
}

void hdp_mc_draw_target_energy(gsl_rng *rng, long d, double radius, const double *energy,
                               double *e)
{
    if (!energy) {
        hdp_mc_draw_target(rng, d, radius, e);
        return;
    }
    for (long i = 0; i < d; i++) {
        double a = sqrt(2.0 * energy[i] / (double)d);
        e[i] = (gsl_rng_get(rng) >> 31) ? a : -a;
    }
}

void hdp_mc_noise_of(const hdp_model *m, hdp_mc_noise *z)
{
    *z = (hdp_mc_noise){
        .kind = m->noise, .tau = sqrt(m->tau2), .df = m->noise_df,
        .t_scale = m->noise == HDP_NOISE_STUDENT ? sqrt(m->tau2 * (m->noise_df - 2.0) / m->noise_df)
                                                 : 0.0,
        .mix_w = m->mixture_weight, .mix_m1 = m->mixture_mean,
        .mix_m2 = -m->mixture_weight * m->mixture_mean / (1.0 - m->mixture_weight),
        .mix_s1 = sqrt(m->mixture_var1), .mix_s2 = sqrt(m->mixture_var2),
        .sample = m->noise_values, .sample_n = m->noise_values ? (size_t)m->noise_len : 0};
}

double hdp_mc_label_noise(const hdp_mc_noise *z, gsl_rng *rng)
{
    hdp_xoshiro *st = hdp_rng_state(rng); /* the fast Gaussian reads the stream directly */
    switch (z->kind) {
    case HDP_NOISE_GAUSSIAN: return z->tau * hdp_rng_normal_fast(st);
    case HDP_NOISE_STUDENT: return z->t_scale * gsl_ran_tdist(rng, z->df);
    case HDP_NOISE_RADEMACHER: return (gsl_rng_get(rng) >> 31) ? z->tau : -z->tau;
    case HDP_NOISE_NONE: return 0.0;
    case HDP_NOISE_LAPLACE: return gsl_ran_laplace(rng, z->tau * M_SQRT1_2);
    case HDP_NOISE_UNIFORM: return gsl_ran_flat(rng, -sqrt(3.0) * z->tau, sqrt(3.0) * z->tau);
    case HDP_NOISE_MIXTURE:
        return gsl_rng_uniform(rng) < z->mix_w ? z->mix_m1 + z->mix_s1 * hdp_rng_normal_fast(st)
                                               : z->mix_m2 + z->mix_s2 * hdp_rng_normal_fast(st);
    case HDP_NOISE_EMPIRICAL: return z->sample[gsl_rng_uniform_int(rng, z->sample_n)];
    }
    return 0.0;
}

/* R_exc = 1/2 sum_i lambda_i e_i^2 in the eigenbasis (docs/theory.md §1) */
double hdp_mc_excess_risk(const double *lambda, const double *e, long d)
{
    double s = 0;
    for (long i = 0; i < d; i++)
        s += lambda[i] * e[i] * e[i];
    return 0.5 * s;
}

/* ---- statistics over the runs that did not diverge ---- */

/* mean, standard error, quantiles and clipped fraction at every grid point, and the
 * final-iterate jump, over the runs with !out[r].diverged, in run order */
/* gsl_stats_quantile_from_sorted_data(sorted work, 1, n, f) without sorting work (a heap sort
 * per grid point was 12 % of a Monte Carlo of 16 000 short runs): the order statistics it
 * reads, the lhs-th by quickselect (gsl_stats_select, which rearranges work) and the next one
 * by a scan, then the same interpolation with the same operations. n >= 1, no NaN. */
static double quantile_select(double *work, size_t n, double f)
{
    const double index = f * (n - 1);
    const size_t lhs = (int)index;
    const double delta = index - lhs;
    const double lo = gsl_stats_select(work, 1, n, lhs);
    if (lhs == n - 1)
        return lo;
    /* the (lhs + 1)-th smallest: lo again if more than lhs + 1 values are <= lo, else the
     * smallest value above lo */
    size_t at_most = 0;
    double above = INFINITY;
    for (size_t j = 0; j < n; j++) {
        at_most += work[j] <= lo;
        if (work[j] > lo && work[j] < above)
            above = work[j];
    }
    const double hi = at_most >= lhs + 2 ? lo : above;
    return (1 - delta) * lo + delta * hi;
}

static void summarise(const mc_grid *grid, long runs, const mc_run_out *out, double *work,
                      hdp_mc_result *res)
{
    long P = grid->points, nv = 0;
    for (long r = 0; r < runs; r++)
        nv += !out[r].diverged;
    for (long i = 0; i < P; i++) {
        long k = 0;
        double c = 0;
        for (long r = 0; r < runs; r++)
            if (!out[r].diverged) {
                work[k++] = out[r].risk[i];
                c += out[r].clipped[i];
            }
        hdp_mean_stderr(work, nv, 1, &res->mean[i], &res->stderr_[i]);
        res->q10[i] = quantile_select(work, (size_t)nv, 0.1);
        res->q50[i] = quantile_select(work, (size_t)nv, 0.5);
        res->q90[i] = quantile_select(work, (size_t)nv, 0.9);
        res->clipped[i] = c / (double)nv;
        if (res->test_mse) {
            k = 0;
            for (long r = 0; r < runs; r++)
                if (!out[r].diverged)
                    work[k++] = out[r].aux[i];
            hdp_mean_stderr(work, nv, 1, &res->test_mse[i], &res->test_mse_stderr[i]);
        }
    }
    res->final_mean = res->mean[P - 1];
    res->final_stderr = res->stderr_[P - 1];
    long k = 0;
    for (long r = 0; r < runs; r++)
        if (!out[r].diverged) {
            work[k++] = out[r].jump;
            res->nonexpansive_violations += out[r].violations;
            res->feature_clipped += out[r].feature_clipped;
        }
    hdp_mean_stderr(work, nv, 1, &res->final_jump_mean, &res->final_jump_stderr);
}

/* ---- the risk-curve driver ---- */

/* The ODE's grid t_i = i/(points-1) into t, recorded at k_i = round(t_i unit) (unit: the steps
 * per unit of time, steps itself but for batched one pass, n/B: step k ends at t = (k+1)B/n,
 * its iterate is the one nearest t_i), but at most
 * steps - 1 for t_i < 1: the ODE's R(t) includes the final-iterate noise only at t = 1
 * (docs/theory.md §3), and with fewer steps than grid points (n <= (points-1)/2) rounding sent
 * t = 0.98, 0.99 to theta_n, noise included: at gamma = 10 (n = 20) the validator saw a
 * 33 % "disagreement" that was only this jump. */
static void build_grid(long steps, double unit, long P, double *t, long *kgrid)
{
    for (long i = 0; i < P; i++) {
        t[i] = (double)i / (double)(P - 1);
        kgrid[i] = (long)round(t[i] * unit);
        if (i < P - 1 && kgrid[i] > steps - 1)
            kgrid[i] = steps - 1;
    }
    kgrid[0] = 0;
    kgrid[P - 1] = steps;
}

/* the progress within the runs and the cancel flag (hdp_mc_tick) */
struct mc_watch {
    const char *what;   /* "sim steps", "sde steps" */
    const volatile int *cancel;
    hdp_progress_fn report;
    void *user;
    double done, total; /* steps */
    double next;        /* omp_get_wtime() of the next report (the first: a second in) */
    int stopped;        /* the report asked to stop */
};

int hdp_mc_tick(const mc_grid *g, long steps)
{
    mc_watch *w = g->watch;
    if (!w)
        return 1;
    int stopped;
#pragma omp atomic read
    stopped = w->stopped;
    if ((w->cancel && *w->cancel) || stopped)
        return 0;
    if (!w->report)
        return 1;
    double next, now = omp_get_wtime();
#pragma omp atomic update
    w->done += (double)steps;
#pragma omp atomic read
    next = w->next;
    if (now >= next) {
#pragma omp critical(hdp_mc_progress)
        {
            if (now >= w->next) {
#pragma omp atomic write
                w->next = now + 1.0;
                double done;
#pragma omp atomic read
                done = w->done;
                double cap = (double)LONG_MAX / 2; /* exactly representable, below LONG_MAX */
                if (w->report(w->what, (long)fmin(done, cap), (long)fmin(w->total, cap),
                              w->total > 0 ? done / w->total : NAN, w->user)) {
#pragma omp atomic write
                    w->stopped = 1;
                }
            }
        }
    }
    return 1;
}

/* what the runs of the risk-curve driver share, and a thread's workspace */
typedef struct {
    const mc_method *method;
    const mc_group *grp; /* or NULL */
    const void *ctx;
    const mc_grid *grid;
} drive_ctx;

typedef struct {
    const mc_method *method;
    int k;                           /* runs at once (1 without a group) */
    void *ws[HDP_MC_GROUP_MAX];      /* the method's, one per run of a group */
    gsl_rng *rng[HDP_MC_GROUP_MAX];  /* the runs' streams, for GSL's samplers */
} drive_ws;

static void drive_ws_free(void *vw)
{
    drive_ws *w = vw;
    if (!w)
        return;
    for (int q = 0; q < w->k; q++) {
        if (w->ws[q])
            w->method->ws_free(w->ws[q]);
        if (w->rng[q])
            gsl_rng_free(w->rng[q]);
    }
    free(w);
}

static void *drive_ws_alloc(const void *vc)
{
    const drive_ctx *c = vc;
    drive_ws *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->method = c->method;
    w->k = c->grp ? c->grp->size : 1;
    for (int q = 0; q < w->k; q++) {
        w->ws[q] = c->method->ws_alloc(c->ctx);
        w->rng[q] = hdp_rng_alloc(0);
        if (!w->ws[q] || !w->rng[q]) {
            drive_ws_free(w);
            return NULL;
        }
    }
    return w;
}

/* HDP_ECANCELLED when the runs were asked to stop (a run may then have stopped early) */
static hdp_status drive_cancelled(const drive_ctx *c, long r, hdp_error *err)
{
    const mc_watch *watch = c->grid->watch;
    int stopped;
#pragma omp atomic read
    stopped = watch->stopped;
    if ((watch->cancel && *watch->cancel) || stopped) /* the run may have stopped early: not done */
        return hdp_fail(err, HDP_ECANCELLED, "%s: cancelled during run %ld", c->method->name, r);
    return HDP_OK;
}

/* run r: the method on the run's stream, its curve into its slot (an mc_run_out) */
static hdp_status drive_run(const void *vc, long r, void *vws, hdp_xoshiro *stream, void *slot,
                            hdp_error *err)
{
    const drive_ctx *c = vc;
    drive_ws *w = vws;
    *hdp_rng_state(w->rng[0]) = *stream;
    c->method->run(c->ctx, c->grid, w->ws[0], w->rng[0], slot);
    return drive_cancelled(c, r, err);
}

/* runs r[0..count-1] together (the method's group) */
static hdp_status drive_run_group(const void *vc, const long *r, int count, void *vws,
                                  hdp_xoshiro *const *streams, void *const *slots,
                                  hdp_error *err)
{
    const drive_ctx *c = vc;
    drive_ws *w = vws;
    mc_run_out *out[HDP_MC_GROUP_MAX];
    for (int q = 0; q < count; q++) {
        *hdp_rng_state(w->rng[q]) = *streams[q];
        out[q] = slots[q];
    }
    c->grp->run(c->ctx, c->grid, w->ws, w->rng, out, count);
    return drive_cancelled(c, r[0], err);
}

/* HDP_ENUMERIC when every run diverged, with what to look at */
static hdp_status all_diverged(const hdp_problem *pb, const mc_method *method, long runs,
                               double threshold, hdp_error *err)
{
    return hdp_fail(err, HDP_ENUMERIC,
                    "%s: all %ld runs diverged (a non-finite residual or risk, or an excess "
                    "risk above sim.divergence_factor x max(R(0), private noise) = %g); sup "
                    "eta~ = %g against the stability limit 2/gamma = %g (docs/theory.md §3)",
                    method->name, runs, threshold, pb->eta_sup, 2.0 / pb->model->gamma);
}

hdp_status hdp_mc_drive(const hdp_problem *pb, const hdp_mc_options *opt, long steps,
                        double unit, const mc_method *method, const mc_group *grp,
                        const void *ctx, hdp_mc_result *res, hdp_error *err)
{
    double t_start = omp_get_wtime();
    if (!(unit > 0))
        unit = (double)steps;
    if (grp && (grp->size < 2 || grp->size > HDP_MC_GROUP_MAX || !grp->run))
        grp = NULL;
    hdp_status st = hdp_mc_check_options(opt, err);
    if (st != HDP_OK)
        return st;
    const long runs = opt->runs, P = pb->model->points;
    if ((st = alloc_result(res, P, err)) != HDP_OK)
        return st;
    res->runs = runs;
    res->steps = steps;
    res->threads = hdp_mc_loop_threads(runs, opt->threads);

    /* every run's curve in its own slot: risk and clipped fraction at the grid points */
    long *kgrid = malloc(sizeof(long) * (size_t)P);
    size_t ncurves = method->aux ? 3 : 2;
    double *curves = malloc(sizeof(double) * ncurves * (size_t)runs * (size_t)P);
    if (method->aux) {
        res->test_mse = calloc((size_t)P, sizeof(double));
        res->test_mse_stderr = calloc((size_t)P, sizeof(double));
    }
    mc_run_out *out = calloc((size_t)runs, sizeof *out);
    double *work = malloc(sizeof(double) * (size_t)runs);
    if (!kgrid || !curves || !out || !work ||
        (method->aux && (!res->test_mse || !res->test_mse_stderr))) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for %ld runs of %ld grid points", runs, P);
        goto done;
    }
    build_grid(steps, unit, P, res->t, kgrid);
    char what[64];
    snprintf(what, sizeof what, "%s steps", method->name);
    mc_watch watch = {what, opt->cancel, opt->progress, opt->progress_user, 0,
                      (double)runs * (double)steps, omp_get_wtime() + 1.0, 0};
    long every = (4L << 20) / (pb->d > 0 ? pb->d : 1);
    mc_grid grid = {steps, P, kgrid, pb->threshold, every > 0 ? every : 1, &watch};
    res->threshold = grid.threshold;
    for (long r = 0; r < runs; r++) {
        out[r].risk = curves + (size_t)r * (size_t)P;
        out[r].clipped = curves + ((size_t)runs + (size_t)r) * (size_t)P;
        out[r].aux = method->aux ? curves + (2 * (size_t)runs + (size_t)r) * (size_t)P : NULL;
    }

    /* run r's stream: the seed's stream jumped r times */
    hdp_xoshiro first;
    hdp_xoshiro_seed(&first, (uint64_t)opt->seed);
    drive_ctx dc = {method, grp, ctx, &grid};
    int k = grp ? grp->size : 1;
    hdp_mc_loop loop = {.name = method->name, .runs = runs, .threads = opt->threads,
                        .ctx = &dc, .ws_alloc = drive_ws_alloc, .ws_free = drive_ws_free,
                        .run = drive_run, .first = &first, .slots = out,
                        .slot_size = sizeof *out, .progress = opt->progress,
                        .progress_user = opt->progress_user, .pin = 1,
                        .cancel = opt->cancel, .team = &res->threads,
                        .ws_bytes = 3.0 * k * sizeof(double) * (double)pb->d,
                        .group = k, .run_group = grp ? drive_run_group : NULL};
    if ((st = hdp_mc_loop_run(&loop, err)) != HDP_OK)
        goto done;
    if (opt->final_risks) /* run r's excess risk at t = 1, NaN when it diverged */
        for (long r = 0; r < runs; r++)
            opt->final_risks[r] = out[r].diverged ? NAN : out[r].risk[P - 1];

    for (long r = 0; r < runs; r++)
        res->diverged_runs += out[r].diverged;
    if (res->diverged_runs == runs) {
        st = all_diverged(pb, method, runs, grid.threshold, err);
        goto done;
    }
    summarise(&grid, runs, out, work, res);
    res->seconds = omp_get_wtime() - t_start;
done:
    free(kgrid);
    free(curves);
    free(out);
    free(work);
    return st;
}
