/*
 * data_meanfield.h — ode.model = rows: the row-resolved mean-field recursion of one-pass
 * DP-SGD on a data set's rows (docs/theory.md §9.5), a second theory model beside the bins'
 * risk ODE for data sets of small d. Private to the core (ode.c dispatches to it).
 */
#ifndef HDPSGD_CORE_DATA_MEANFIELD_H
#define HDPSGD_CORE_DATA_MEANFIELD_H

#include "hdpsgd/error.h"
#include "hdpsgd/model.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/problem.h"
#include "hdpsgd/progress.h"

/* The largest N d^2 n the recursion takes (its cost per step is about 4 N d^2 flops:
 * scikit-learn's digits at gamma = 0.02, N d^2 n = 2.4e10, take 3.1 s of one core; 1e12,
 * about two minutes). */
#define HDP_MEANFIELD_MAX_WORK 1e12

/* HDP_OK when ode.model = rows applies to m (a data set, a least-squares target, batch 1,
 * no feature clipping, N d^2 n within HDP_MEANFIELD_MAX_WORK), else HDP_EINPUT naming
 * [ode] model (or the key at fault) and what is accepted. HDP_OK for ode.model = bins. */
hdp_status hdp_meanfield_check(const hdp_model *m, hdp_error *err);

/* The recursion on pb's model (checked by hdp_meanfield_check) into res: the risk at the
 * output grid (the Monte Carlo's steps, mc.c's grid), the held-out MSE with a test set,
 * the columns mu_c, nu_c as the rows' factors (docs/theory.md §9.5), bounds NaN.
 * progress (NULL: none) is told ("ode rows", k, n, the risk) every 1 % of the n steps and at
 * the end; its nonzero return stops the recursion with HDP_ECANCELLED, as the thread's cancel
 * flag does (hdp_cancel_requested).
 * HDP_ENUMERIC for a non-finite state, HDP_ENOMEM, HDP_ECANCELLED. */
hdp_status hdp_meanfield_solve(const hdp_problem *pb, hdp_progress_fn progress, void *user,
                               hdp_ode_result *res, hdp_error *err);

/* res zeroed with its columns of `points` zeros (test: the held-out MSE's too), for the bins'
 * solve and the recursion (ode.c); HDP_ENOMEM with res freed. */
hdp_status hdp_ode_result_alloc(hdp_ode_result *res, long points, int test, hdp_error *err);

#endif
