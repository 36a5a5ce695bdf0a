/*
 * hdpsgd/error.h — status codes and the one error-reporting path.
 *
 * Every library function that can fail returns an hdp_status and, when it
 * fails, fills an hdp_error with a message that names the problem (file,
 * line and key for bad input; the solver flag and the time reached for a
 * numerical failure). The library never prints and never calls exit().
 */
#ifndef HDPSGD_ERROR_H
#define HDPSGD_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. The command-line program maps them to exit statuses:
 * HDP_EINPUT -> 2, HDP_EIO -> 3, HDP_ENUMERIC -> 4, HDP_ENOMEM -> 4 (HDP_ECANCELLED -> 4: the
 * program never cancels). */
typedef enum {
    HDP_OK = 0,
    HDP_EINPUT = 1,   /* bad model file, bad key, out-of-range value, missing file */
    HDP_EIO = 2,      /* an output file could not be written */
    HDP_ENUMERIC = 3, /* solver failure or divergence */
    HDP_ENOMEM = 4,   /* out of memory */
    HDP_ECANCELLED = 5 /* stopped early through a cancel flag (hdp_mc_options, hdp_design_options) */
} hdp_status;

/* Room for a message that names a path of the longest accepted length (4000 characters for
 * outputs, HDP_PATH_MAX for model inputs) and still says why. */
#define HDP_ERRMSG_MAX 8192

/* Holds the first error reported; a later report does not overwrite it. */
typedef struct {
    hdp_status status;
    char msg[HDP_ERRMSG_MAX];
} hdp_error;

/* Clear an error record before use. */
void hdp_error_clear(hdp_error *err);

/* Record a failure (printf-style message) unless one is already recorded;
 * returns status so that callers can write `return hdp_fail(err, ...)`.
 * err may be NULL (the message is then dropped). */
hdp_status hdp_fail(hdp_error *err, hdp_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* GSL's default error handler aborts the program; hdpsgd checks GSL's status
 * codes instead. The first call (thread-safe, once per process) turns the
 * handler off with gsl_set_error_handler_off(), and it stays off: a process
 * that embeds hdpsgd and wants GSL's handler back must set it after its last
 * hdpsgd call. Every library function that calls GSL calls this first. */
void hdp_gsl_quiet(void);

/* The calling thread's cancel flag (issue 29), for the long computations that take no flag
 * of their own: the ODE solves (hdp_ode_solve, hdp_ode_solve_problem, the designer's) stop at
 * their next step with HDP_ECANCELLED while *flag is nonzero (set it from any thread).
 * Returns the thread's previous flag, to be put back after the call; NULL: none. The
 * validator, the designer and the handle API (hdpsgd/handle.h) set it from their own cancel
 * flags for the duration of a call. */
const volatile int *hdp_cancel_flag_set(const volatile int *flag);

/* Nonzero when the calling thread's cancel flag is set. */
int hdp_cancel_requested(void);

/* Name of a status code ("ok", "bad input", ...). */
const char *hdp_status_name(hdp_status status);

#ifdef __cplusplus
}
#endif
#endif
