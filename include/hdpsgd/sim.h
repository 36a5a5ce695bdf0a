/*
 * hdpsgd/sim.h — the simulation side: Monte Carlo of one-pass DP-SGD
 * (docs/theory.md §1) and Euler-Maruyama of the homogenized SDE (section 4).
 *
 * Both record, at the ODE's output grid t_i = i/(points-1), the excess risk
 * R_exc(theta_k) at k = round(t_i n), at most n - 1 for t_i < 1 (the row t = 1 is
 * theta_n, the output, final-step noise included; like the ODE, no row before it
 * includes that noise), summarised over the runs that did not diverge:
 * mean, standard error, 10/50/90 % quantiles, and the fraction of clipped
 * steps in the interval ending at t_i (for the SDE: the mean of 1 - mu_c(R),
 * the probability that a step would be clipped).
 * Run r uses its own random stream (the r-th jump of the base stream), so the
 * results are identical for any number of threads.
 * Divergence: a run stops and is excluded when a residual (sim) or the risk
 * (sde) becomes non-finite at any step, or when the excess risk at a grid
 * point exceeds sim.divergence_factor * max(R(0), P), with R(0) = r*^2/2 the expected
 * initial excess risk (docs/theory.md §3; when r* = 0: tau^2/2, and 1 if that is 0 too) and
 * P = 2 c^2 gamma^2 eta~(0)^2 / rho^2 the excess risk the private noise adds over a run
 * without contraction (0 when rho = inf): a huge c makes the risk huge, not divergent.
 * Standard errors are 0 when fewer than two runs are left.
 * The library prints nothing: progress goes through a callback (opt->progress).
 */
#ifndef HDPSGD_SIM_H
#define HDPSGD_SIM_H

#include <stddef.h>

#include "hdpsgd/finite.h"
#include "hdpsgd/model.h"
#include "hdpsgd/problem.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    long runs;               /* number of independent runs (>= 1) */
    int threads;             /* OpenMP threads (0 = OpenMP's default) */
    unsigned long long seed; /* base seed */
    /* progress (hdpsgd/progress.h; NULL: none): after every finished run, what "sim" or
     * "sde", done runs of total, value NaN; and, for runs that take long (issue 29), from
     * within the runs: what "sim steps" or "sde steps", the steps done so far of total = runs
     * x steps per run (both at most LONG_MAX / 2), value the fraction done, counted about
     * every 4 million coordinate updates and reported about once a second from the first
     * second on. Never two reports at once (they come from the threads that ran the runs). A
     * nonzero return stops the runs as the cancel flag does (HDP_ECANCELLED). */
    hdp_progress_fn progress;
    void *progress_user;
    double sde_step;         /* SDE only: Euler-Maruyama step h (0 = 1/n) */
    /* issue 24 (the Python interface); NULL: none, as hdp_mc_options_from_model leaves them */
    const volatile int *cancel; /* nonzero: the runs not yet started are skipped, and the call
                                   returns HDP_ECANCELLED (set it from any thread) */
    double *final_risks;     /* [runs]: run r's excess risk at t = 1 (theta_n), NaN when it
                                diverged */
} hdp_mc_options;

typedef struct {
    long points;
    double *t;        /* [points] grid, same as the ODE's */
    double *mean;     /* mean excess risk over the runs that did not diverge */
    double *stderr_;  /* standard error of the mean */
    double *q10, *q50, *q90;
    double *clipped;  /* fraction of clipped steps in (t_{i-1}, t_i]; 0 at t = 0 */
    long runs;            /* runs requested */
    long diverged_runs;   /* runs stopped as diverged (excluded from the statistics) */
    double final_mean, final_stderr; /* at t = 1 */
    double rho_accounted; /* docs/theory.md §6 accountant on the realised eta_k, sigma_k (inf: no noise) */
    double seconds;       /* wall time */
    /* added with the implementation (issue 3) */
    int threads;          /* OpenMP threads actually used */
    long steps;           /* steps per run: n (sim) or N = round(1/h) (sde) */
    double threshold;     /* a run diverged when its excess risk exceeded this */
    /* the final-iterate jump of docs/theory.md §3, measured per run as R_exc(theta_n) minus
     * the excess risk of the same iterate without the last step's private noise
     * (sde: without the final-iterate noise); expectation 2 c^2 gamma^2 eta~(1)^2 / rho^2 */
    double final_jump_mean, final_jump_stderr;
    /* the privacy accountant's precondition (docs/theory.md §6.1), over the runs that did not
     * diverge: the steps whose update was not non-expansive, eta_k ||x_k||^2 > 2 (x_k after
     * clip.feature_norm), and the rows clip.feature_norm clipped; counts (as doubles: runs x n
     * may pass 2^63), 0 for the SDE, which draws no rows */
    double nonexpansive_violations, feature_clipped;
    /* data.source = file with a held-out set (docs/theory.md §9): the mean squared error on
     * the held-out rows of each run's iterate at the grid points, mean and standard error
     * over the runs that did not diverge; NULL otherwise */
    double *test_mse, *test_mse_stderr;

    /* standard DP-SGD on a finite training set (sgd.sampling = shuffle | poisson,
     * hdpsgd/finite.h): its steps, noise multiplier, sample rate and epsilon; sgd.finite = 0
     * for one-pass DP-SGD and the SDE. steps above is then sgd.steps, and rho_accounted NaN
     * (one-pass's accountant does not apply). */
    hdp_finite_privacy sgd;
} hdp_mc_result;

/* Fill options from the model's [sim] and [sde] sections (runs, seed, step),
 * one thread per core (threads = 0), no progress callback. */
void hdp_mc_options_from_model(const hdp_model *m, hdp_mc_options *opt);

/* Monte Carlo of the discrete algorithm (docs/theory.md §1). HDP_ENUMERIC when every
 * run diverged. res must be freed with hdp_mc_result_free (also on failure). */
hdp_status hdp_sim_run(const hdp_model *m, const hdp_mc_options *opt, hdp_mc_result *res,
                       hdp_error *err);

/* Euler-Maruyama of the homogenized SDE (docs/theory.md §4) with step opt->sde_step. */
hdp_status hdp_sde_run(const hdp_model *m, const hdp_mc_options *opt, hdp_mc_result *res,
                       hdp_error *err);

/* hdp_sim_run and hdp_sde_run on a problem (hdpsgd/problem.h) built from the model: its
 * spectrum, schedule, divergence threshold and accountant's rho are used instead of being
 * built again, and the model (pb->model) is not checked again (the validator builds one
 * problem for its three sides). HDP_EINPUT when pb was not built. */
hdp_status hdp_sim_run_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                               hdp_mc_result *res, hdp_error *err);
hdp_status hdp_sde_run_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                               hdp_mc_result *res, hdp_error *err);

void hdp_mc_result_free(hdp_mc_result *res);

/* ---- process-wide settings: the library reads no environment variable; the program sets
 * these from its environment before its long calls (hdpsgd: src/cli/main.c; the Python
 * package: hdpsgd/_lib.py) and not while one runs. No effect on any result. ---- */

/* Whether a Monte Carlo on several threads may pin each thread to its own CPU during its runs
 * (src/sim/mc.c; default 1). hdpsgd passes 0 when the user chose a placement (OMP_PROC_BIND
 * or OMP_PLACES set) or the process runs under MPI (OMPI_COMM_WORLD_SIZE, PMIX_RANK or
 * PMI_SIZE set), where ranks sharing a machine would pin onto the same CPUs. */
void hdp_set_thread_pinning(int allow);

/* OpenMP's stack size per thread in bytes, as the OpenMP runtime read it from OMP_STACKSIZE
 * (or GOMP_STACKSIZE); 0, the default: the default stack. The library creates its extra
 * threads once with this stack before a parallel region, so as to ask OpenMP only for as many
 * as can be created (src/sim/threads.h). */
void hdp_set_thread_stack_size(size_t bytes);

/* OMP_STACKSIZE's syntax: a size with an optional B, K, M or G suffix (K when none); 0 when
 * text is NULL or unreadable. */
size_t hdp_stack_size_parse(const char *text);

#ifdef __cplusplus
}
#endif
#endif
