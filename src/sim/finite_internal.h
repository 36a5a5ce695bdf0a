/*
 * finite_internal.h — standard DP-SGD on a finite training set (internal; src/sim/finite.c,
 * hdpsgd/finite.h): the batch samplers, for the tests, and the simulation's entry, which
 * hdp_sim_run_problem (dpsgd.c) calls for a model with sgd.sampling = shuffle | poisson.
 */
#ifndef HDPSGD_SIM_FINITE_INTERNAL_H
#define HDPSGD_SIM_FINITE_INTERNAL_H

#include <gsl/gsl_rng.h>

#include "hdpsgd/problem.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/sim.h"

/* A Poisson batch: each of the rows 0..N-1 independently with probability q in (0, 1], in
 * increasing order into rows[] (room for N); returns their count. The gaps between chosen rows
 * are geometric, drawn by inversion (one uniform of g per chosen row, and one more), so the cost
 * is the batch's size, not N. */
long hdp_finite_poisson_batch(hdp_xoshiro *g, long N, double q, long *rows);

/* A uniform random permutation of perm[0..N-1] in place (Fisher-Yates; the indices by
 * Lemire's unbiased multiply-and-reject on 64-bit outputs of g). */
void hdp_finite_shuffle(hdp_xoshiro *g, long *perm, long N);

/* hdp_sim_run_problem for a problem whose model is finite (pb->sgd.finite): the checks of the
 * entry are the caller's. */
hdp_status hdp_finite_run_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                                  hdp_mc_result *res, hdp_error *err);

#endif
