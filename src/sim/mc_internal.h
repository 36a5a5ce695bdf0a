/*
 * mc_internal.h — what the methods of the risk-curve driver (mc.h) use inside a run
 * (internal): the Chebyshev tables of the clipping factors (sde.c) and the O(d) loops of
 * a step (mc_kernels.c), shared by the DP-SGD simulation (dpsgd.c, docs/theory.md §1)
 * and the Euler-Maruyama SDE (sde.c, section 4).
 */
#ifndef HDPSGD_MC_INTERNAL_H
#define HDPSGD_MC_INTERNAL_H

#include <gsl/gsl_rng.h>

#include "hdpsgd/rng.h"

#include "hdpsgd/clip.h"
#include "hdpsgd/sim.h"

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

/* a^T b (eight partial sums in a fixed tree, as the others) */
double hdp_mc_dot(const double *a, const double *b, long d);

/* y += a x */
void hdp_mc_axpy(double *y, double a, const double *x, long d);

/* the same two on a row stored as float32 (each entry converted to double exactly) */
double hdp_mc_dot_f32(const float *a, const double *b, long d);
void hdp_mc_axpy_f32(double *y, double a, const float *x, long d);

/* One Euler-Maruyama step of docs/theory.md §4 in the eigenbasis:
 * e += -a lambda .* e + b sl .* z1 (+ q z2 unless z2 is NULL); returns sum lambda e^2. */
double hdp_mc_sde_step(double *e, const double *lambda, const double *sl, double a, double b,
                       const double *z1, double q, const double *z2, long d);

#endif
