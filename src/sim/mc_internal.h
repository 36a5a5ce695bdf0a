/*
 * mc_internal.h — what the methods of the risk-curve driver (mc.h) use inside a run
 * (internal): the Chebyshev tables of the clipping factors (sde.c) and the O(d) loops of
 * a step (mc_kernels.c), shared by the DP-SGD simulation (dpsgd.c, docs/theory.md §1)
 * and the Euler-Maruyama SDE (sde.c, section 4).
 */
#ifndef HDPSGD_MC_INTERNAL_H
#define HDPSGD_MC_INTERNAL_H

#include <gsl/gsl_chebyshev.h>
#include <gsl/gsl_rng.h>

#include "hdpsgd/rng.h"

#include "hdpsgd/clip.h"
#include "hdpsgd/sim.h"

/* The clipping factors of docs/theory.md §2 for Student-t label noise are quadratures
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

/* One Euler-Maruyama step of docs/theory.md §4 in the eigenbasis:
 * e += -a lambda .* e + b sl .* z1 (+ q z2 unless z2 is NULL); returns sum lambda e^2. */
double hdp_mc_sde_step(double *e, const double *lambda, const double *sl, double a, double b,
                       const double *z1, double q, const double *z2, long d);

#endif
