/*
 * hdpsgd/progress.h — the one progress callback of the library's long calls.
 *
 * The library prints nothing: a long call reports how far it got through a function of this
 * type, and the program (or the Python package, through the handle API) draws its bar.
 *
 *   what   what is counted: "sim" or "sde" (Monte Carlo runs), "sim steps" or "sde steps"
 *          (steps of all runs, from within runs longer than a second, about once a second),
 *          a design family's name (ODE solves), "ode", "validate level" (the levels of
 *          validate --scaling), ...: each call that takes one documents its words
 *   done   units done so far, of total (total < 0: not known in advance, as the ODE solves of
 *          a design)
 *   value  a number that goes with the report (the best final risk so far, the fraction
 *          done, ...), NaN when there is none
 *   user   the pointer given with the callback
 *
 * A nonzero return value asks the call to stop as soon as it can (it then returns
 * HDP_ECANCELLED); return 0 to go on. A call never makes two reports at once (they may come
 * from different threads of the library).
 */
#ifndef HDPSGD_PROGRESS_H
#define HDPSGD_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*hdp_progress_fn)(const char *what, long done, long total, double value, void *user);

#ifdef __cplusplus
}
#endif
#endif
