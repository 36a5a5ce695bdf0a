/*
 * sim.c — Monte Carlo of one-pass DP-SGD on linear regression (THEORY.md
 * section 1), and the driver and statistics shared with the homogenized SDE
 * (sde.c, through mc_internal.h).
 *
 * One run, in the eigenbasis of Sigma (THEORY 1: the algorithm is rotation-
 * equivariant), with e = theta - theta*, theta_0 = 0, theta* uniform on the
 * sphere of radius r*:
 *   x = sqrt(lambda) .* g,  g ~ N(0, I_d)                    fresh sample
 *   r = x^T e - z                                             residual x^T theta - y
 *   e <- e - eta_k r x / max(1, |r| ||x|| / C_clip)           per-sample clipping, C_clip = c sqrt(d)
 *   e <- e + 2 C_clip sigma_k xi,  xi ~ N(0, I_d)             private noise (skipped when sigma_k = 0)
 * with eta_k, sigma_k from hdp_sched_step (the code the ODE side shares), k = 0..n-1.
 * Label noise z (THEORY 1): gaussian tau N(0,1); student sqrt(tau^2 (nu-2)/nu) T_nu;
 * rademacher +-tau; none 0. One step costs O(d); no d x d matrix.
 * Recorded: R_exc(theta_k) = 1/2 sum_i lambda_i e_i^2 exactly (THEORY 1) at
 * k_i = min(round(t_i n), n - 1), t_i = i/(points-1) (the ODE's grid; the row t = 1 is
 * theta_n), and the fraction of steps k_{i-1} <= k < k_i whose gradient was clipped.
 * Privacy: THEORY 6's accountant on the eta_k, sigma_k the runs used.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include "hdpsgd/sim.h"
#include "core/check.h"
#include "sim/stats.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"
#include "sim/mc_internal.h"

/* ---- options and results ---- */

void hdp_mc_options_from_model(const hdp_model *m, hdp_mc_options *opt)
{
    if (!m || !opt)
        return;
    memset(opt, 0, sizeof *opt);
    opt->runs = m->runs;
    opt->threads = 0;
    opt->seed = m->seed;
    opt->progress = NULL;
    opt->progress_user = NULL;
    opt->sde_step = m->sde_step;
}

void hdp_mc_result_free(hdp_mc_result *res)
{
    if (!res)
        return;
    double **arrays[] = {&res->t,   &res->mean, &res->stderr_, &res->q10,
                         &res->q50, &res->q90,  &res->clipped};
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
    if (opt->runs < 1)
        return hdp_fail(err, HDP_EINPUT,
                        "runs = %ld: the number of Monte Carlo runs must be an integer >= 1",
                        opt->runs);
    if (opt->threads < 0)
        return hdp_fail(err, HDP_EINPUT,
                        "threads = %d: the number of threads must be >= 0 (0 = one per core)",
                        opt->threads);
    return HDP_OK;
}

/* ---- helpers shared with sde.c ---- */

double hdp_mc_threshold(const hdp_model *m)
{
    /* factor x max(R(0), P): R(0) = r*^2/2 (THEORY 3), P the private noise (below) */
    double r0 = 0.5 * m->target_radius * m->target_radius;
    if (!(r0 > 0))
        r0 = 0.5 * m->tau2;
    if (!(r0 > 0))
        r0 = 1.0;
    /* P = 2 c^2 gamma^2 eta~(0)^2 / rho^2: the excess risk the private noise 2 C_clip sigma_k xi
     * adds over a run without contraction, (1/2) sum_k (2 c sqrt(d) sigma_k)^2 Tr Sigma, since
     * sum_k sigma_k^2 = (eta~(0)/n)^2 / rho^2 for every schedule (THEORY 1: the sigma_k^2
     * telescope). With c = 1e6 a stable run's risk is ~1e11 R(0) from this noise alone and
     * must not be called divergent. */
    double priv = 0;
    if (isfinite(m->rho) && isfinite(m->c)) {
        hdp_schedule s;
        hdp_sched_from_model(m, &s);
        double e0 = hdp_sched_eta_sup(&s);
        priv = 2.0 * m->c * m->c * m->gamma * m->gamma * e0 * e0 / (m->rho * m->rho);
    }
    return m->divergence_factor * fmax(r0, priv);
}

/* theta* uniform on the sphere of radius r* (THEORY 1, 3), as e = -theta* */
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

/* R_exc = 1/2 sum_i lambda_i e_i^2 in the eigenbasis (THEORY 1) */
double hdp_mc_excess_risk(const double *lambda, const double *e, long d)
{
    double s = 0;
    for (long i = 0; i < d; i++)
        s += lambda[i] * e[i] * e[i];
    return 0.5 * s;
}

/* ---- statistics over the runs that did not diverge ---- */

/* mean and standard error of v[0..nv-1] (two passes; stderr 0 when nv < 2) */
static void summarise(const mc_grid *grid, long runs, const double *risk, const double *clip,
                      const double *jump, const int *diverged, double *work, hdp_mc_result *res)
{
    long P = grid->points, nv = 0;
    for (long r = 0; r < runs; r++)
        nv += !diverged[r];
    for (long i = 0; i < P; i++) {
        long k = 0;
        for (long r = 0; r < runs; r++)
            if (!diverged[r])
                work[k++] = risk[r * P + i];
        hdp_mean_stderr(work, nv, 1, &res->mean[i], &res->stderr_[i]);
        gsl_sort(work, 1, (size_t)nv);
        res->q10[i] = gsl_stats_quantile_from_sorted_data(work, 1, (size_t)nv, 0.1);
        res->q50[i] = gsl_stats_quantile_from_sorted_data(work, 1, (size_t)nv, 0.5);
        res->q90[i] = gsl_stats_quantile_from_sorted_data(work, 1, (size_t)nv, 0.9);
        double c = 0;
        for (long r = 0; r < runs; r++)
            if (!diverged[r])
                c += clip[r * P + i];
        res->clipped[i] = c / (double)nv;
    }
    res->final_mean = res->mean[P - 1];
    res->final_stderr = res->stderr_[P - 1];
    long k = 0;
    for (long r = 0; r < runs; r++)
        if (!diverged[r])
            work[k++] = jump[r];
    hdp_mean_stderr(work, nv, 1, &res->final_jump_mean, &res->final_jump_stderr);
}

/* ---- thread placement ----
 * Left to itself, the kernel of the VM of bench/RESULTS.md kept the two threads of a
 * Monte Carlo apart badly: two runs on two threads took 25 % longer than two one-thread
 * processes, and pinning (OMP_PROC_BIND=true) removed the difference. So during the runs
 * each thread is pinned to its own CPU of the process's affinity mask (thread t to the
 * t-th CPU in it) and put back as it was afterwards, unless the user chose a placement
 * (OMP_PROC_BIND or OMP_PLACES set), the process runs under MPI (ranks sharing a machine
 * would pin onto the same CPUs), there is one thread, or the mask has fewer CPUs than
 * threads. */
static int pin_threads(int nthreads)
{
    if (nthreads < 2 || getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") ||
        getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE"))
        return 0;
    cpu_set_t allowed;
    if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) != 0)
        return 0;
    return CPU_COUNT(&allowed) >= nthreads;
}

/* Pin the calling thread to the tid-th CPU of *allowed; the old mask in *saved.
 * Returns 1 when pinned (the caller then restores *saved). */
static int pin_self(int tid, const cpu_set_t *allowed, cpu_set_t *saved)
{
    if (pthread_getaffinity_np(pthread_self(), sizeof *saved, saved) != 0)
        return 0;
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, allowed))
            continue;
        if (seen++ == tid) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
        }
    }
    return 0;
}

/* ---- the driver ---- */

hdp_status hdp_mc_drive(const hdp_model *m, const hdp_mc_options *opt, long steps,
                        const mc_method *method, const void *ctx, hdp_mc_result *res,
                        hdp_error *err)
{
    double t_start = omp_get_wtime();
    hdp_status st = hdp_mc_check_options(opt, err);
    if (st != HDP_OK)
        return st;
    long runs = opt->runs, P = m->points;
    int nthreads = opt->threads > 0 ? opt->threads : omp_get_max_threads();
    if (nthreads > runs)
        nthreads = (int)runs;
    if (nthreads < 1)
        nthreads = 1;

    if ((st = alloc_result(res, P, err)) != HDP_OK)
        return st;
    res->runs = runs;
    res->steps = steps;
    res->threads = nthreads;

    long *kgrid = malloc(sizeof(long) * (size_t)P);
    double *risk = malloc(sizeof(double) * (size_t)runs * (size_t)P);
    double *clip = malloc(sizeof(double) * (size_t)runs * (size_t)P);
    double *jump = calloc((size_t)runs, sizeof(double));
    int *diverged = calloc((size_t)runs, sizeof(int));
    double *work = malloc(sizeof(double) * (size_t)runs);
    hdp_xoshiro *streams = malloc(sizeof(hdp_xoshiro) * (size_t)runs);
    void **ws = calloc((size_t)nthreads, sizeof(void *));
    gsl_rng **rngs = calloc((size_t)nthreads, sizeof(gsl_rng *));
    if (!kgrid || !risk || !clip || !jump || !diverged || !work || !streams || !ws || !rngs) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for %ld runs of %ld grid points", runs, P);
        goto done;
    }
    /* every thread allocates its own workspace and generator inside the parallel region
     * below: glibc then serves each thread from its own arena, so no cache line holds data
     * that two threads write (a shared line at the boundary of two threads' arrays, or
     * between their generator states, which the label noise writes at every step, cost
     * about 20 % of the two-thread speed). GSL's error handler is off for all of it. */
    hdp_gsl_quiet();

    /* the ODE's grid t_i = i/(points-1), recorded at k_i = round(t_i steps), but at most
     * steps - 1 for t_i < 1: the ODE's R(t) includes the final-iterate noise only at t = 1
     * (THEORY 3), and with fewer steps than grid points (n <= (points-1)/2) rounding sent
     * t = 0.98, 0.99 to theta_n, noise included: at gamma = 10 (n = 20) the validator saw a
     * 33 % "disagreement" that was only this jump */
    for (long i = 0; i < P; i++) {
        res->t[i] = (double)i / (double)(P - 1);
        kgrid[i] = (long)round(res->t[i] * (double)steps);
        if (i < P - 1 && kgrid[i] > steps - 1)
            kgrid[i] = steps - 1;
    }
    kgrid[0] = 0;
    kgrid[P - 1] = steps;

    mc_grid grid = {steps, P, kgrid, hdp_mc_threshold(m)};
    res->threshold = grid.threshold;

    /* run r's stream: the base stream jumped r times (2^128 outputs apart) */
    hdp_xoshiro_seed(&streams[0], (uint64_t)opt->seed);
    for (long r = 1; r < runs; r++) {
        streams[r] = streams[r - 1];
        hdp_xoshiro_jump(&streams[r]);
    }

    long done_runs = 0;
    int allocated = 1, pin = pin_threads(nthreads);
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (pin)
        pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed);
#pragma omp parallel num_threads(nthreads)
    {
        int tid = omp_get_thread_num();
        cpu_set_t saved;
        int pinned = pin && pin_self(tid, &allowed, &saved);
        ws[tid] = method->ws_alloc(ctx);
        rngs[tid] = hdp_rng_alloc(0);
#pragma omp barrier
        int ok = 1; /* the same answer in every thread: all run the loop or none */
        for (int t = 0; t < nthreads; t++)
            ok = ok && ws[t] && rngs[t];
#pragma omp single
        allocated = ok;
        if (ok) {
#pragma omp for schedule(dynamic, 1)
            for (long r = 0; r < runs; r++) {
                if (opt->cancel && *opt->cancel) /* issue 24: skip the runs not started */
                    continue;
                *hdp_rng_state(rngs[tid]) = streams[r];
                mc_run_out out = {risk + r * P, clip + r * P, 0.0, 0};
                method->run(ctx, &grid, ws[tid], rngs[tid], &out);
                jump[r] = out.jump;
                diverged[r] = out.diverged;
                if (opt->final_risks) /* issue 24 */
                    opt->final_risks[r] = out.diverged ? NAN : risk[r * P + P - 1];
                if (opt->progress) {
#pragma omp critical(hdp_mc_progress)
                    {
                        opt->progress(method->name, ++done_runs, runs, opt->progress_user);
                    }
                }
            }
        }
        if (pinned)
            pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    }
    if (!allocated) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the workspaces of %d threads", nthreads);
        goto done;
    }

    if (opt->cancel && *opt->cancel) { /* issue 24 */
        st = hdp_fail(err, HDP_ECANCELLED, "%s: cancelled before the end of its %ld runs",
                      method->name, runs);
        goto done;
    }
    for (long r = 0; r < runs; r++)
        res->diverged_runs += diverged[r];
    if (res->diverged_runs == runs) {
        hdp_schedule s;
        hdp_sched_from_model(m, &s);
        st = hdp_fail(err, HDP_ENUMERIC,
                      "%s: all %ld runs diverged (a non-finite residual or risk, or an excess "
                      "risk above sim.divergence_factor x max(R(0), private noise) = %g); sup "
                      "eta~ = %g against the stability limit 2/gamma = %g (THEORY 3)",
                      method->name, runs, grid.threshold, hdp_sched_eta_sup(&s), 2.0 / m->gamma);
        goto done;
    }
    summarise(&grid, runs, risk, clip, jump, diverged, work, res);
    res->seconds = omp_get_wtime() - t_start;

done:
    for (int t = 0; ws && rngs && t < nthreads; t++) {
        if (ws[t])
            method->ws_free(ws[t]);
        if (rngs[t])
            gsl_rng_free(rngs[t]);
    }
    free(ws);
    free(rngs);
    free(kgrid);
    free(risk);
    free(clip);
    free(jump);
    free(diverged);
    free(work);
    free(streams);
    return st;
}

/* ---- the discrete algorithm (THEORY 1) ---- */

typedef struct {
    long d, n;
    const double *lambda;  /* [d] eigenvalues of Sigma, mean 1 */
    double *sqrt_lambda;   /* [d] */
    hdp_schedule sched;    /* eta_k = eta~(k/n)/n and sigma_k (THEORY 1) by hdp_sched_step, per step */
    double C;              /* C_clip = c sqrt(d), may be inf */
    double radius;         /* r* = ||theta*|| */
    hdp_noise_kind noise;
    double tau;            /* sqrt(tau^2) */
    double t_scale, df;    /* Student: z = t_scale T_df, t_scale = sqrt(tau^2 (df-2)/df) */
} sim_ctx;

typedef struct {
    double *e, *x, *z; /* [d] each: e = theta - theta*, the sample, its Gaussians or the noise */
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
    if (!w->e || !w->x || !w->z) {
        free(w->e);
        free(w->x);
        free(w->z);
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
    free(w);
}

/* The label noise z of THEORY 1. */
static double label_noise(const sim_ctx *c, gsl_rng *rng)
{
    hdp_xoshiro *st = hdp_rng_state(rng); /* the fast Gaussian reads the stream directly */
    switch (c->noise) {
    case HDP_NOISE_GAUSSIAN: return c->tau * hdp_rng_normal_fast(st);
    case HDP_NOISE_STUDENT: return c->t_scale * gsl_ran_tdist(rng, c->df);
    case HDP_NOISE_RADEMACHER: return (gsl_rng_get(rng) >> 31) ? c->tau : -c->tau;
    case HDP_NOISE_NONE: return 0.0;
    }
    return 0.0;
}

/* Record iterate k at every grid point with k_i = k (*p is the next grid
 * index); nclip clipped steps since the previous grid point. Returns 0 when
 * the run diverged. */
static int record(const mc_grid *g, long k, double R, long *nclip, long *p, mc_run_out *out)
{
    if (*p >= g->points || g->kgrid[*p] != k)
        return 1;
    if (!isfinite(R) || R > g->threshold)
        return 0;
    long span = k - g->kgrid[*p - 1];
    out->risk[*p] = R;
    out->clipped[*p] = span > 0 ? (double)*nclip / (double)span : 0.0;
    *nclip = 0;
    for ((*p)++; *p < g->points && g->kgrid[*p] == k; (*p)++) {
        out->risk[*p] = R;
        out->clipped[*p] = 0.0; /* empty interval */
    }
    return 1;
}

/* One run of the discrete algorithm of THEORY 1 (see the comment at the top);
 * the jump of the last step's private noise is the final-iterate term of THEORY 3.
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
    hdp_mc_draw_target(rng, d, c->radius, e);
    double R = hdp_mc_excess_risk(c->lambda, e, d);
    long p = 0, nclip = 0;
    for (; p < g->points && g->kgrid[p] == 0; p++) {
        out->risk[p] = R;
        out->clipped[p] = 0.0;
    }
    for (long k = 0; k < n; k++) {
        /* fresh sample x = sqrt(lambda) .* z, z ~ N(0, I_d), and the residual r = x^T e
         * minus the label noise */
        double dot, xx, eta_k, sigma_k;
        hdp_sched_step(&c->sched, n, k, &eta_k, &sigma_k);
        hdp_normals_fill(ns, z, d);
        hdp_mc_sample_dot(sl, z, e, x, d, &dot, &xx);
        double r = dot - label_noise(c, rng);
        if (!isfinite(r)) {
            out->diverged = 1;
            return;
        }
        /* clipping of the true gradient norm |r| ||x|| at C_clip (THEORY 1) */
        double coef = eta_k * r, gnorm = fabs(r) * sqrt(xx);
        if (gnorm > c->C) {
            coef *= c->C / gnorm;
            nclip++;
        }
        double s = sigma_k > 0 ? 2.0 * c->C * sigma_k : 0.0;
        if (s > 0 && k < n - 1) {
            hdp_normals_fill(ns, z, d);
            hdp_mc_axpby(e, -coef, x, s, z, d);
        } else {
            for (long i = 0; i < d; i++)
                e[i] -= coef * x[i];
            if (s > 0) { /* the last step: measure the final-iterate jump (THEORY 3) */
                double before = hdp_mc_excess_risk(c->lambda, e, d);
                hdp_normals_fill(ns, z, d);
                for (long i = 0; i < d; i++)
                    e[i] += s * z[i];
                out->jump = hdp_mc_excess_risk(c->lambda, e, d) - before;
            }
        }
        if (p < g->points && g->kgrid[p] == k + 1) {
            R = hdp_mc_excess_risk(c->lambda, e, d);
            if (!record(g, k + 1, R, &nclip, &p, out)) {
                out->diverged = 1;
                return;
            }
        }
    }
}

static const mc_method sim_method = {"sim", sim_ws_alloc, sim_ws_free, sim_run};

hdp_status hdp_sim_run(const hdp_model *m, const hdp_mc_options *opt, hdp_mc_result *res,
                       hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, res);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    memset(res, 0, sizeof *res);
    hdp_status st = hdp_mc_check_options(opt, err);
    if (st != HDP_OK)
        return st;
    hdp_spectrum spec;
    if ((st = hdp_spectrum_build(m, &spec, err)) != HDP_OK)
        return st;
    long d = m->d, n = m->n;
    sim_ctx c;
    memset(&c, 0, sizeof c);
    c.sqrt_lambda = hdp_mc_vec_alloc(d);
    if (!c.sqrt_lambda) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for d = %ld", d);
        goto done;
    }
    hdp_sched_from_model(m, &c.sched);
    for (long i = 0; i < d; i++)
        c.sqrt_lambda[i] = sqrt(spec.lambda[i]);
    c.d = d;
    c.n = n;
    c.lambda = spec.lambda;
    c.C = m->c * sqrt((double)d);
    c.radius = m->target_radius;
    c.noise = m->noise;
    c.tau = sqrt(m->tau2);
    c.df = m->noise_df;
    c.t_scale = m->noise == HDP_NOISE_STUDENT ? sqrt(m->tau2 * (m->noise_df - 2.0) / m->noise_df)
                                              : 0.0;

    st = hdp_mc_drive(m, opt, n, &sim_method, &c, res, err);
    /* THEORY 6 on the eta_k, sigma_k the runs used (the same hdp_sched_step): equals rho */
    res->rho_accounted = hdp_privacy_accountant_schedule(&c.sched, n);
done:
    free(c.sqrt_lambda);
    hdp_spectrum_free(&spec);
    return st;
}
