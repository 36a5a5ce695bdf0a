/*
 * mc.h — the Monte Carlo driver of the toolkit (internal; src/sim/mc_loop.c, src/sim/mc.c).
 *
 * Two levels:
 *
 * 1. The generic run loop (hdp_mc_loop_run), used by every Monte Carlo of the library: the
 *    DP-SGD simulation and the SDE (through the risk-curve driver below) and the families'
 *    runs over seeds, initialisations, draws or configurations (rf_sim.c, rf_configs.c, kl*.c,
 *    nc_train.c, si.c).
 *    Runs 0..runs-1 go to OpenMP threads (dynamic schedule, one run at a time, or a group
 *    of consecutive runs stepped together when the loop has run_group); each
 *    thread of the team OpenMP actually gives (any size from 1 to the request: OMP_DYNAMIC,
 *    OMP_THREAD_LIMIT, a call from inside the caller's parallel region) allocates its own
 *    workspace inside the parallel region (glibc then serves it from the thread's own
 *    arena: no cache line written by two threads) and frees it afterwards. Run r gets its own random stream — the caller's first stream jumped r
 *    times (rng.h: 2^128 outputs apart), or none when the run positions its own — and its
 *    own output slot; the caller reduces the slots serially in run order after the loop,
 *    so that the results do not depend on the thread count. A run that fails (out of
 *    memory, a numerical failure) stops the loop: runs with a larger index that have not
 *    started are skipped, every run with a smaller index still runs, so the error reported
 *    is always that of the lowest failing run, whatever the threads. Progress goes through
 *    a callback (never from two threads at once); the library prints nothing.
 *
 * 2. The risk-curve driver (hdp_mc_drive) of the DP-SGD simulation (dpsgd.c, docs/theory.md
 *    section 1) and the Euler-Maruyama SDE (sde.c, section 4), on top of the loop: a
 *    method fills a constant table (name, per-thread workspace, one run); the driver
 *    validates the options, builds the output grid of the ODE, gives run r the r-th jump
 *    of the seed's stream, stores every run's curve in its own slot, then excludes the
 *    diverged runs and computes the statistics (mean, standard error, quantiles, clipped
 *    fraction, final-iterate jump) serially in run order.
 */
#ifndef HDPSGD_SIM_MC_H
#define HDPSGD_SIM_MC_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "hdpsgd/error.h"
#include "hdpsgd/model.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/sim.h"

/* ---- 1. the generic run loop ---- */

/* One run: run r (0 <= r < runs) with the calling thread's workspace ws (NULL when the
 * loop has no ws_alloc), its stream (NULL when the loop has no first stream; the run then
 * positions its own) and its slot (NULL when the loop has no slots). Returns HDP_OK, or a
 * failure described in err (which the loop reports when r is the lowest failing run). */
typedef hdp_status (*hdp_mc_run_fn)(const void *ctx, long r, void *ws, hdp_xoshiro *stream,
                                    void *slot, hdp_error *err);

/* count (2 <= count <= the loop's group) runs r[0..count-1] at once in the calling thread,
 * their steps interleaved (a latency-bound run leaves the core idle between the dependent
 * operations of a step; another run's independent step fills it): run r[q] with its stream
 * streams[q] (NULL entries when the loop has no first stream) and slot slots[q]. Every run
 * must compute exactly what it would alone (its own stream, slot and state), so that the
 * results do not depend on which runs share a thread. A failure is reported as that of
 * r[0], the group's lowest run. */
typedef hdp_status (*hdp_mc_group_fn)(const void *ctx, const long *r, int count, void *ws,
                                      hdp_xoshiro *const *streams, void *const *slots,
                                      hdp_error *err);

typedef struct {
    const char *name; /* for the progress callback and the messages ("sim", "rf", ...) */
    long runs;        /* >= 1 */
    int threads;      /* OpenMP threads; 0 = OpenMP's default; at most runs are used */
    const void *ctx;  /* read by every run (shared, read-only) */
    /* per-thread workspace (both NULL: none); ws_alloc returns NULL when out of memory (that
     * thread then takes no run) */
    void *(*ws_alloc)(const void *ctx);
    void (*ws_free)(void *ws);
    hdp_mc_run_fn run;
    /* run r's stream: *first jumped r times (NULL: no stream) */
    const hdp_xoshiro *first;
    /* run r's slot: (char *)slots + r slot_size (NULL: no slots; the runs may instead
     * write into arrays the ctx points to, each run at its own index only) */
    void *slots;
    size_t slot_size;
    /* the order the runs start in: order[0..runs-1] a permutation of 0..runs-1 (the
     * longest first, for the load balance); NULL: 0, 1, ... Results do not depend on it. */
    const long *order;
    /* after every finished run: (name, done runs, runs, NaN, progress_user); a nonzero return
     * skips the runs not yet started, and the loop returns HDP_ECANCELLED. NULL: none */
    hdp_progress_fn progress;
    void *progress_user;
    /* pin each thread to its own CPU during the runs (see mc.c); no effect on results */
    int pin;
    /* nonzero (set from any thread): the runs not yet started are skipped and the loop
     * returns HDP_ECANCELLED; NULL: never */
    const volatile int *cancel;
    /* about how many bytes a workspace takes, for the message when none can be allocated
     * (0: unknown) */
    double ws_bytes;
    /* NULL, or receives the threads OpenMP gave the loop (at most hdp_mc_loop_threads: fewer
     * under OMP_DYNAMIC, inside the caller's parallel region, or when the process cannot
     * create more threads, see sim/threads.h) */
    int *team;
    /* up to `group` (<= HDP_MC_GROUP_MAX) consecutive runs taken at once by a thread and run
     * together by run_group (fewer when the runs per thread are fewer: no thread left idle);
     * group <= 1 or run_group NULL: one at a time through run. The workspace is then that of
     * a group. */
    int group;
    hdp_mc_group_fn run_group;
} hdp_mc_loop;

#define HDP_MC_GROUP_MAX 8

/* The number of threads the loop asks for with runs runs and a request threads (0 =
 * OpenMP's default): at least 1, at most runs, 4096 and OMP_THREAD_LIMIT (sim/threads.h). */
int hdp_mc_loop_threads(long runs, int threads);

/* Run the loop. HDP_EINPUT when runs < 1 or threads < 0 or > 4096 (sim/threads.h),
 * HDP_ENOMEM when the streams or not one thread's workspace can be allocated (a thread
 * without one takes no run; the others run them all), the lowest failing run's status and message, else
 * HDP_ECANCELLED when *cancel was set before every run had started. */
hdp_status hdp_mc_loop_run(const hdp_mc_loop *loop, hdp_error *err);

/* A thread's workspace in one block: a zeroed struct of `size` bytes whose pointer fields
 * arrays[0..count) each point to `count` zeroed elements of their type in the same block,
 * every one on its own 64-byte boundary with its size rounded up to whole cache lines, as
 * hdp_mc_vec_alloc's (a count of 0 leaves the field NULL). Free it with free() (a ws_free
 * of free). NULL when out of memory or when the total size overflows. */
typedef struct {
    size_t offset; /* of the field in the struct */
    size_t count;  /* elements */
    size_t size;   /* of an element */
} hdp_mc_array;

/* the entry of field f (a pointer) of struct T with n elements */
#define HDP_MC_ARRAY(T, f, n) {offsetof(T, f), (size_t)(n), sizeof *((T *)0)->f}

void *hdp_mc_ws_alloc(size_t size, const hdp_mc_array *arrays, size_t count);
/* the workspace of struct T with the arrays of the array a */
#define HDP_MC_WS_ALLOC(T, a) hdp_mc_ws_alloc(sizeof(T), (a), sizeof(a) / sizeof((a)[0]))

/* The same for a function's scratch vectors: *v[i].p receives v[i].count zeroed doubles (at
 * least one, as hdp_dalloc's), all in one block that free() releases. NULL when out of memory
 * (the *p then unset). */
typedef struct {
    double **p;
    size_t count;
} hdp_mc_vec;
void *hdp_mc_vecs(const hdp_mc_vec *v, size_t n);
/* hdp_mc_vecs of the pairs {&p, count} given */
#define HDP_MC_VECS(...) \
    hdp_mc_vecs((const hdp_mc_vec[]){__VA_ARGS__}, \
                sizeof((const hdp_mc_vec[]){__VA_ARGS__}) / sizeof(hdp_mc_vec))
/* the most arrays one block holds (more: NULL): a kl network's layers and five more */
#define HDP_MC_BLOCK_MAX 72

/* ---- 2. the risk-curve driver of the DP-SGD simulation and the SDE ---- */

/* What one run sees of the grid. Iterate k (theta_k, or the SDE state after k
 * steps) is recorded at grid point i when k = kgrid[i]; kgrid[0] = 0,
 * kgrid[points-1] = steps. */
typedef struct mc_watch mc_watch; /* the progress and cancel flag the runs share (mc.c) */

typedef struct {
    long steps;         /* steps per run */
    long points;        /* grid size */
    const long *kgrid;  /* [points] k_i = round(t_i steps), <= steps - 1 for t_i < 1 */
    double threshold;   /* divergence: excess risk above this at a grid point */
    long every;         /* a run calls hdp_mc_tick after every `every` steps (about 4 million
                           coordinate updates) */
    mc_watch *watch;
} mc_grid;

/* Within a run (issue 29): after every g->every steps, steps steps done. Adds them to the
 * progress within the runs (hdp_mc_options.progress, "sim steps" or "sde steps", about once
 * a second from the first second on) and returns 0 when the loop's cancel flag is set or that
 * report asked to stop: the run then stops at once (its curve is not used, the loop returns
 * HDP_ECANCELLED). */
int hdp_mc_tick(const mc_grid *g, long steps);

/* One run's output (slots owned by the driver). */
typedef struct {
    double *risk;     /* [points] excess risk at the grid points */
    double *clipped;  /* [points] clipped fraction in (k_{i-1}, k_i]; 0 at i = 0 */
    double *aux;      /* [points] the method's second curve (mc_method.aux: the real rows'
                         test MSE), else NULL */
    double jump;      /* final-iterate jump (see hdp_mc_result) */
    int diverged;     /* 1: stopped, excluded from the statistics */
    /* steps whose update was not non-expansive, eta_k ||x_k||^2 > 2, and rows that
     * clip.feature_norm clipped (docs/theory.md §6.1; sim only, 0 for the SDE) */
    double violations, feature_clipped;
} mc_run_out;

/* A run's recording on the grid, the same for every method: the start (iterate 0 at the
 * grid points with k_i = 0, clipped 0; returns the next grid index), then iterate k with
 * excess risk R at every grid point with k_i = k (*p: the next grid index, advanced), the
 * clipped fraction *clip_sum (the clipped steps, or the SDE's 1 - mu_c, summed since the
 * previous grid point) over the steps since then, *clip_sum reset. 0 when the run diverged
 * (R not finite or above the threshold); 1 also when k is no grid point. */
long hdp_mc_record_start(const mc_grid *g, double R, mc_run_out *out);
int hdp_mc_record(const mc_grid *g, long k, double R, double *clip_sum, long *p,
                  mc_run_out *out);
/* Batched one pass's recording (sgd.batch > 1, dpsgd.c and rows.c): the grid points in
 * (t0, t1] of a step that moved the risk from R0 to R1 (Rf after the last step's noise, at
 * t = 1), the risk interpolated linearly in time, the step's clipped fraction; 0 when the run
 * diverged. */
int hdp_mc_batch_record(const mc_grid *g, long *p, double t0, double R0, double t1, double R1,
                        double Rf, double clipped, mc_run_out *out);

typedef struct {
    const char *name; /* "sim" or "sde" (progress bar, messages) */
    /* per-thread workspace (about three vectors of d doubles: the driver's message says so);
     * NULL when out of memory. Called in the thread that uses it. */
    void *(*ws_alloc)(const void *ctx);
    void (*ws_free)(void *ws);
    /* One run on the stream in rng; fills out (all of risk/clipped unless diverged). */
    void (*run)(const void *ctx, const mc_grid *grid, void *ws, gsl_rng *rng, mc_run_out *out);
    /* 1: every run also fills out->aux, summarised into hdp_mc_result.test_mse and
     * test_mse_stderr (the real rows' held-out MSE, rows.c) */
    int aux;
} mc_method;

/* A method that can also step several runs together in one thread (hdp_mc_group_fn): `size`
 * runs (2..HDP_MC_GROUP_MAX) with the method's workspaces ws[q], streams rng[q] and outputs
 * out[q], each computed exactly as method->run would alone. */
typedef struct {
    int size;
    void (*run)(const void *ctx, const mc_grid *grid, void *const *ws, gsl_rng *const *rng,
                mc_run_out *const *out, int count);
} mc_group;

/* Run opt->runs runs of the method with steps steps each and summarise them
 * into res (allocated here; res->rho_accounted is left to the caller), with unit steps per
 * unit of time on the grid (k_i = round(t_i unit); 0: steps; batched one pass, dpsgd.c, has
 * steps = ceil(n/B) and unit = n/B), and runs stepped grp->size at a time per thread (grp
 * NULL: one at a time; the same results).
 * HDP_EINPUT for bad options, HDP_ENOMEM, HDP_ENUMERIC when every run diverged. */
hdp_status hdp_mc_drive(const hdp_problem *pb, const hdp_mc_options *opt, long steps,
                        double unit, const mc_method *method, const mc_group *grp,
                        const void *ctx, hdp_mc_result *res, hdp_error *err);

/* Check runs >= 1, threads >= 0 (HDP_EINPUT naming the option). The SDE
 * checks its step itself. */
hdp_status hdp_mc_check_options(const hdp_mc_options *opt, hdp_error *err);

/* The checks of a method's entry on a shared problem (hdp_sim_run_problem,
 * hdp_sde_run_problem; `who` names it in the messages): res zeroed when given, no argument
 * NULL, the problem built (its model was checked then), the options valid. */
hdp_status hdp_mc_problem_entry(const hdp_problem *pb, const hdp_mc_options *opt,
                                hdp_mc_result *res, const char *who, hdp_error *err);

/* A method's entry on a model (hdp_sim_run, hdp_sde_run; `who`): res zeroed when given, no
 * argument NULL; then build the problem of m, run the method on it (run: its entry on a
 * shared problem), free the problem. */
typedef hdp_status (*hdp_mc_problem_fn)(const hdp_problem *pb, const hdp_mc_options *opt,
                                        hdp_mc_result *res, hdp_error *err);
hdp_status hdp_mc_with_problem(const hdp_model *m, const hdp_mc_options *opt, hdp_mc_result *res,
                               hdp_mc_problem_fn run, const char *who, hdp_error *err);

/* DP-SGD on the rows of the model's data set (data.source = file; rows.c): what
 * hdp_sim_run_problem runs for such a model */
hdp_status hdp_sim_rows_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                                hdp_mc_result *res, hdp_error *err);

/* sqrt(lambda_i), i < d, of the problem's spectrum (the caller frees it), or NULL after
 * HDP_ENOMEM in err */
double *hdp_mc_sqrt_lambda(const hdp_problem *pb, long d, hdp_error *err);

/* theta* uniform on the sphere of the given radius (a normalised Gaussian
 * vector, docs/theory.md §1), stored as e = theta_0 - theta* = -theta*. */
void hdp_mc_draw_target(gsl_rng *rng, long d, double radius, double *e);

/* The target of a spectrum with energies (data.target = powerlaw, file: hdpsgd/spectrum.h):
 * |theta*_i| = sqrt(2 energy_i / d) in the eigenbasis, each sign drawn at random (the runs'
 * law then depends on the energies only); energy NULL: hdp_mc_draw_target. */
void hdp_mc_draw_target_energy(gsl_rng *rng, long d, double radius, const double *energy,
                               double *e);

/* The label noise z of docs/theory.md §1 (data.noise, data.tau2, data.noise_df): gaussian
 * tau N(0,1); student t_scale T_df, t_scale = sqrt(tau^2 (df-2)/df); rademacher +-tau; none 0. */
typedef struct {
    hdp_noise_kind kind;
    double tau;           /* sqrt(tau^2) */
    double t_scale, df;   /* Student */
    double mix_w, mix_m1, mix_m2, mix_s1, mix_s2; /* mixture: weight, means, sds */
    const double *sample; /* empirical: the model's centred values */
    size_t sample_n;
} hdp_mc_noise;
void hdp_mc_noise_of(const hdp_model *m, hdp_mc_noise *z);
/* one draw: the Gaussian by the fast ziggurat on the stream, the others through GSL */
double hdp_mc_label_noise(const hdp_mc_noise *z, gsl_rng *rng);

/* Excess risk R_exc = 1/2 sum_i lambda_i e_i^2 in the eigenbasis (docs/theory.md §1). */
double hdp_mc_excess_risk(const double *lambda, const double *e, long d);

#endif
