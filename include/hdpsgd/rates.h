/*
 * hdpsgd/rates.h — the rates driver: the final excess risk of each optimised schedule
 * family against gamma = d/n, and its log-log slope next to the theorem's rates
 * (THEORY.md section 5). The driver of `hdpsgd rates` and of the `rates` points of
 * `hdpsgd sweep`; it prints nothing (progress through a callback).
 *
 * The caller builds one finalized model per gamma (d fixed, n = round(d/gamma); the
 * command line does it from the model file and its --set options, see
 * hdp_rates_gamma); hdp_rates_run optimises every wanted family at every gamma with
 * hdp_design_set_run and fits the slopes on the smallest-gamma decade.
 */
#ifndef HDPSGD_RATES_H
#define HDPSGD_RATES_H

#include "hdpsgd/design.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HDP_RATES_MAX_GAMMAS 200

/* LO:HI:COUNT with 0 < LO < HI < 1 and 2 <= COUNT <= HDP_RATES_MAX_GAMMAS; HDP_EINPUT
 * with the reason (the text quoted) otherwise. */
hdp_status hdp_rates_grid_parse(const char *text, double *lo, double *hi, long *count,
                                hdp_error *err);

/* The i-th of count log-spaced gammas from lo to hi. */
double hdp_rates_gamma(double lo, double hi, long count, long i);

/* The families of THEORY 5's three rates (output, linear-noise, optimal) when list is
 * NULL, else hdp_design_families_parse(list). */
hdp_status hdp_rates_families(const char *list, int want[HDP_FAMILY_COUNT], hdp_error *err);

/* Reported after every gamma. */
typedef struct {
    long index, count;           /* this gamma's index, of count */
    const hdp_model *model;      /* the model at this gamma */
    const hdp_design_set *set;   /* its optimised families */
} hdp_rates_progress;

typedef void (*hdp_rates_progress_fn)(const hdp_rates_progress *p, void *user);

typedef struct {
    long count;                  /* gammas */
    long dec;                    /* points of the smallest-gamma decade used by the fit (>= 2) */
    int want[HDP_FAMILY_COUNT];
    const hdp_model *models;     /* [count], borrowed from the caller */
    hdp_design_set *des;         /* [count]: the wanted families optimised at each gamma */
    double slope[HDP_FAMILY_COUNT];        /* fitted log-log slope (NAN: family not wanted) */
    double theory_slope[HDP_FAMILY_COUNT]; /* the same fit of the theorem's rate */
    long solves;                 /* ODE solves in all */
    double seconds;              /* their wall time */
} hdp_rates_result;

/* Optimise the wanted families at each of the count finalized models (increasing
 * gamma) and fit the slopes. progress may be NULL. Release r with hdp_rates_result_free
 * in every case. */
hdp_status hdp_rates_run(const hdp_model *models, long count, const int want[HDP_FAMILY_COUNT],
                         const hdp_design_options *opt, hdp_rates_progress_fn progress,
                         void *progress_user, hdp_rates_result *r, hdp_error *err);
void hdp_rates_result_free(hdp_rates_result *r);

#ifdef __cplusplus
}
#endif
#endif
