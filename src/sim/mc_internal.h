/*
 * mc_internal.h — the Monte Carlo driver shared by the DP-SGD simulation
 * (sim.c, THEORY.md section 1) and the Euler-Maruyama SDE (sde.c, THEORY.md
 * section 4) (internal).
 *
 * A method fills a constant table (name, per-thread workspace alloc/free, one
 * run); the driver (sim.c) validates the options, builds the output grid,
 * gives run r the r-th jump of the base stream, runs the runs on OpenMP
 * threads, stores every run's curve in its own slot and reduces them serially
 * in run order afterwards: the results do not depend on the thread count.
 */
#ifndef HDPSGD_MC_INTERNAL_H
#define HDPSGD_MC_INTERNAL_H

#include <gsl/gsl_chebyshev.h>
#include <gsl/gsl_rng.h>

#include "hdpsgd/rng.h"

#include "hdpsgd/clip.h"
#include "hdpsgd/sim.h"

/* What one run sees of the grid. Iterate k (theta_k, or the SDE state after k
 * steps) is recorded at grid point i when k = kgrid[i]; kgrid[0] = 0,
 * kgrid[points-1] = steps. */
typedef struct {
    long steps;         /* steps per run */
    long points;        /* grid size */
    const long *kgrid;  /* [points] k_i = round(t_i steps), <= steps - 1 for t_i < 1 */
    double threshold;   /* divergence: excess risk above this at a grid point */
} mc_grid;

/* One run's output (slots owned by the driver). */
typedef struct {
    double *risk;     /* [points] excess risk at the grid points */
    double *clipped;  /* [points] clipped fraction in (k_{i-1}, k_i]; 0 at i = 0 */
    double jump;      /* final-iterate jump (see hdp_mc_result) */
    int diverged;     /* 1: stopped, excluded from the statistics */
} mc_run_out;

typedef struct {
    const char *name; /* "sim" or "sde" (progress bar, messages) */
    /* per-thread workspace; NULL when out of memory. Called serially. */
    void *(*ws_alloc)(const void *ctx);
    void (*ws_free)(void *ws);
    /* One run on the stream in rng; fills out (all of risk/clipped unless diverged). */
    void (*run)(const void *ctx, const mc_grid *grid, void *ws, gsl_rng *rng, mc_run_out *out);
} mc_method;

/* Run opt->runs runs of the method with steps steps each and summarise them
 * into res (allocated here; res->rho_accounted is left to the caller).
 * HDP_EINPUT for bad options, HDP_ENOMEM, HDP_ENUMERIC when every run diverged. */
hdp_status hdp_mc_drive(const hdp_model *m, const hdp_mc_options *opt, long steps,
                        const mc_method *method, const void *ctx, hdp_mc_result *res,
                        hdp_error *err);

/* The divergence threshold sim.divergence_factor x max(R(0), P): R(0) = r*^2/2 the
 * expected initial excess risk (THEORY 3; tau^2/2 when r* = 0, 1 if both are 0) and
 * P = 2 c^2 gamma^2 eta~(0)^2 / rho^2 the excess risk the private noise adds over a run
 * without contraction (0 when rho = inf). */
double hdp_mc_threshold(const hdp_model *m);

/* Check runs >= 1, threads >= 0 (HDP_EINPUT naming the option). The SDE
 * checks its step itself. */
hdp_status hdp_mc_check_options(const hdp_mc_options *opt, hdp_error *err);

/* theta* uniform on the sphere of the given radius (a normalised Gaussian
 * vector, THEORY 1), stored as e = theta_0 - theta* = -theta*. */
void hdp_mc_draw_target(gsl_rng *rng, long d, double radius, double *e);

/* Excess risk R_exc = 1/2 sum_i lambda_i e_i^2 in the eigenbasis (THEORY 1). */
double hdp_mc_excess_risk(const double *lambda, const double *e, long d);

/* The clipping factors of THEORY 2 for Student-t label noise are quadratures
 * (about 0.6 ms each): the SDE, which needs them at every step, uses
 * Chebyshev series (GSL) of mu_c and V_c in u = log(R + tau^2/2) on
 * [0, R_max], built once per model from hdp_clip_eval_values. The order is
 * doubled from 32 until the error measured against direct evaluation at 64
 * points between the nodes is below 1e-9 (absolute for mu_c, relative to
 * max V_c for V_c); when order 256 is not enough the table stays empty and
 * the SDE evaluates directly. Outside [0, R_max] the caller evaluates directly. */
typedef struct {
    gsl_cheb_series *mu, *V; /* NULL: no table */
    double s0;                             /* tau^2/2 */
    double R_max;
    size_t order;
    double err_mu, err_V; /* measured maximum errors (V: relative to max V) */
} hdp_mc_clip_table;

/* Build the table for clip (any law; a caller only needs it for Student-t).
 * HDP_ENOMEM when out of memory; an inaccurate series leaves t->mu NULL. */
hdp_status hdp_mc_clip_table_init(hdp_mc_clip_table *t, hdp_clip *clip, double tau2, double R_max,
                                  hdp_error *err);

/* mu_c and V_c at R from the table: 1, or 0 when R is outside it (or no table). */
int hdp_mc_clip_table_eval(const hdp_mc_clip_table *t, double R, double *mu, double *V);

void hdp_mc_clip_table_free(hdp_mc_clip_table *t);

/* ---- the O(d) loops of a step (mc_kernels.c; the same bits on every machine) ---- */

/* An array of d doubles on a 64-byte boundary, its size rounded up to whole cache lines
 * (free with free()): the kernels' 32- and 64-byte loads and stores then never straddle
 * two cache lines. NULL when out of memory. */
double *hdp_mc_vec_alloc(long d);

/* x = sl .* z; *dot = x^T e, *xx = ||x||^2 */
void hdp_mc_sample_dot(const double *sl, const double *z, const double *e, double *x, long d,
                       double *dot, double *xx);

/* e += a x + s z */
void hdp_mc_axpby(double *e, double a, const double *x, double s, const double *z, long d);

/* One Euler-Maruyama step of THEORY 4 in the eigenbasis:
 * e += -a lambda .* e + b sl .* z1 (+ q z2 unless z2 is NULL); returns sum lambda e^2. */
double hdp_mc_sde_step(double *e, const double *lambda, const double *sl, double a, double b,
                       const double *z1, double q, const double *z2, long d);

#endif
