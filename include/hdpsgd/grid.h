/*
 * hdpsgd/grid.h — the grid runner: the one loop of the drivers' experiments (nc sweeps over
 * p, the kl sweeps over depth and width, the rf-experiment panels, the sim-index
 * experiments, validate's scaling in n, the sweep's points). A grid is `count` points; a
 * job fills the row of one point; the runner checks every point first (when a check is
 * given), then runs the points in order, collects the rows in one array and reports
 * progress after each point that succeeded through an hdp_progress_fn (hdpsgd/progress.h):
 * what "grid point", done = i + 1 for point i (the points run in order: the row just
 * computed is row done - 1), total = count, value NaN; a nonzero return stops the grid with
 * HDP_ECANCELLED. It prints nothing.
 *
 * The rows are the caller's type: row_size bytes each, zeroed before the job runs; a row
 * that owns memory names its row_free, which hdp_grid_free calls on every row (also after
 * a failure, on rows zeroed or half filled).
 */
#ifndef HDPSGD_GRID_H
#define HDPSGD_GRID_H

#include <stddef.h>

#include "hdpsgd/error.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check point i before anything runs (NULL: no check). */
typedef hdp_status (*hdp_grid_check_fn)(void *user, long i, hdp_error *err);
/* Compute point i into row (row_size bytes, zeroed). A failure stops the grid, unless the
 * grid keeps going (keep_going), in which case the status is recorded in status[i]. */
typedef hdp_status (*hdp_grid_job_fn)(void *user, long i, void *row, hdp_error *err);
/* Release what a row owns (NULL: nothing). */
typedef void (*hdp_grid_row_free_fn)(void *row);

typedef struct {
    long count;                    /* points, >= 0 */
    size_t row_size;               /* bytes of one row, >= 1 */
    hdp_grid_check_fn check;       /* may be NULL */
    hdp_grid_job_fn job;           /* required */
    hdp_progress_fn progress;      /* may be NULL; after each point that succeeded (above) */
    hdp_grid_row_free_fn row_free; /* may be NULL */
    int keep_going;                /* 1: a failing point does not stop the grid */
    void *user;                    /* passed to every callback */
} hdp_grid_spec;

typedef struct {
    long count;                    /* points */
    long done;                     /* points whose job returned (successfully or not) */
    long failed;                   /* points whose job failed (keep_going) */
    long checked_failure;          /* the point whose check failed, -1 if none */
    size_t row_size;
    void *rows;                    /* count rows of row_size bytes, in point order */
    hdp_status *status;            /* [count]: each point's status (HDP_OK until it runs) */
    hdp_grid_row_free_fn row_free;
} hdp_grid_result;

/* Check every point (spec->check), then run every point in order. Returns the first
 * failing check's or job's status (the job's only when !keep_going) with its message in
 * err; res holds the rows computed so far. Release res with hdp_grid_free in every case. */
hdp_status hdp_grid_run(const hdp_grid_spec *spec, hdp_grid_result *res, hdp_error *err);

/* hdp_grid_run for jobs that keep their results in their own struct (user): no rows are
 * kept (row_size may be 0; the row a job gets is scratch). */
hdp_status hdp_grid_each(const hdp_grid_spec *spec, hdp_error *err);

/* Row i of a result (NULL when i is out of range or res is NULL). */
void *hdp_grid_row(const hdp_grid_result *res, long i);

void hdp_grid_free(hdp_grid_result *res);

#ifdef __cplusplus
}
#endif
#endif
