/*
 * hdpsgd/sweep.h — the sweep driver: what `hdpsgd sweep` runs at one point of its grid,
 * one point runner per command that a sweep can run (ode, sim, sde, validate, schedule,
 * rates). A runner computes its command's results at the point (run), names the columns
 * it adds to results.csv (columns) and formats its fields of the point's row (fields); the
 * command line writes the command's files between run and fields. hdp_sweep_point_run
 * runs a list of runners in order at one point and builds the row; it prints nothing and
 * writes nothing itself (the write callback does).
 *
 * Chaining: a runner that designs a schedule (schedule: hand_on) hands it to the commands
 * after it at the point: ode, sim, sde and validate after schedule run on the point's model
 * with the best family's table (schedule.kind = table, in memory; with tune_clip its clip.c),
 * the schedule that schedule.tab holds; commands before it run on the point's own model
 * (rates designs its own schedules at its gammas and takes no model from before).
 *
 * A failed command leaves empty fields (NaN as "") for itself and for every command after
 * it, and the row's status field says "failed: <message>" (commas, quotes and newlines
 * replaced by ';' to keep one CSV field).
 */
#ifndef HDPSGD_SWEEP_H
#define HDPSGD_SWEEP_H

#include <stddef.h>

#include "hdpsgd/rates.h"
#include "hdpsgd/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The [sweep] settings of the schedule and rates commands (docs/theory.md §5). */
typedef struct {
    int schedule_want[HDP_FAMILY_COUNT], rates_want[HDP_FAMILY_COUNT];
    long knots;                    /* pl family knots */
    int tune_clip;
    int refine;                    /* schedule, pl: refine K -> 2K - 1 ... (hdp_design_options) */
    double refine_tol;             /* its tolerance (0: the default, 1e-5) */
    double gamma_lo, gamma_hi;     /* rates: the gamma grid */
    long gamma_count;
    const volatile int *cancel;    /* NULL: none; nonzero: the designs stop (HDP_ECANCELLED) */
    hdp_progress_fn design_progress;        /* the designs' reports (NULL: none) */
    void *design_progress_user;
} hdp_sweep_settings;

/* One point: the inputs, and the results of the command that ran last. */
typedef struct {
    const hdp_model *m;            /* the point's finalized model */
    const hdp_mc_options *opt;     /* Monte Carlo options (sim, sde, validate) */
    const hdp_sweep_settings *set;
    const hdp_model *gamma_models; /* rates: the model at each gamma of the grid */
    long gamma_count;
    const char *mc_name;           /* sim, sde: "sim" or "sde" */
    const char *design_file;       /* the name the designed table is written under (the
                                      schedule.file of the model handed on; NULL: none) */
    hdp_ode_result ode;
    hdp_mc_result mc;
    hdp_validate_result v;
    hdp_design_set designs;
    hdp_rates_result rates;
} hdp_sweep_point;

typedef struct {
    const char *name;                                          /* the command */
    /* the results.csv columns it adds, each after a comma */
    void (*columns)(const hdp_sweep_settings *set, char *buf, size_t size);
    hdp_status (*run)(hdp_sweep_point *p, hdp_error *err);
    /* its fields of the row, each after a comma; st != HDP_OK: empty (did not run) */
    void (*fields)(const hdp_sweep_point *p, hdp_status st, char *buf, size_t size);
    void (*release)(hdp_sweep_point *p);                      /* free what run made */
    /* after a successful run: the model the later commands of the point run on, a new model
     * (schedule: the point's model with the best design as its table); NULL: they keep theirs */
    hdp_status (*hand_on)(const hdp_sweep_point *p, hdp_model *out, hdp_error *err);
} hdp_sweep_runner;

extern const hdp_sweep_runner hdp_sweep_ode, hdp_sweep_sim, hdp_sweep_sde, hdp_sweep_validate,
    hdp_sweep_schedule, hdp_sweep_rates;

/* The runner of the command `name` ("ode", "sim", "sde", "validate", "schedule", "rates");
 * NULL when no runner has that name. */
const hdp_sweep_runner *hdp_sweep_runner_find(const char *name);

/* Write the files of runner r at point p (after a successful run); NULL: none. */
typedef hdp_status (*hdp_sweep_write_fn)(const hdp_sweep_runner *r, const hdp_sweep_point *p,
                                         void *user, hdp_error *err);

typedef struct {
    hdp_status st;                 /* the first failing command's status (HDP_OK: none) */
    hdp_error err;                 /* its message */
    hdp_status io;                 /* the first failing write's status */
    hdp_error io_err;
    char row[8192];                /* prefix, d,n,gamma,rho,epsilon_cks, the fields, status\n */
} hdp_sweep_outcome;

/* Run the count runners in order at point p (its inputs set, its results zeroed), calling
 * write after each successful run while no write has failed, and handing each runner's model
 * (hand_on) to the runners after it (p->m is the point's own model again on return); the row
 * is prefix, the point's d, n, gamma, rho, epsilon_cks at privacy.delta and delta, every
 * runner's fields, and the status. Returns HDP_OK (the outcome says what failed) or
 * HDP_EINPUT for bad arguments. */
hdp_status hdp_sweep_point_run(const hdp_sweep_runner *const *runners, int count,
                               hdp_sweep_point *p, const char *prefix, hdp_sweep_write_fn write,
                               void *user, hdp_sweep_outcome *out, hdp_error *err);

/* The header of results.csv after the axis columns: d,n,gamma,rho,epsilon_cks, every
 * runner's columns, status (with the newline). */
void hdp_sweep_header(const hdp_sweep_runner *const *runners, int count,
                      const hdp_sweep_settings *set, char *buf, size_t size);

/* A CSV field of a number: %.10g, "" for NaN, inf or -inf. */
const char *hdp_sweep_num(char *buf, size_t size, double v);

#ifdef __cplusplus
}
#endif
#endif
