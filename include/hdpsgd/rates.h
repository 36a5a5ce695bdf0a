/*
 * hdpsgd/rates.h — the rates driver: the final excess risk of each optimised schedule
 * family against gamma = d/n, and its log-log slope next to the theorem's rates
 * (docs/theory.md §5). The driver of `hdpsgd rates` and of the `rates` points of
 * `hdpsgd sweep`; it prints nothing (progress through a callback).
 *
 * hdp_rates_models builds one finalized model per gamma from the caller's model (d fixed,
 * n = round(d/gamma), see hdp_rates_gamma); hdp_rates_run optimises every wanted family at
 * every gamma with hdp_design_set_run and fits the slopes on the smallest-gamma decade.
 */
#ifndef HDPSGD_RATES_H
#define HDPSGD_RATES_H

#include "hdpsgd/design.h"
#include "hdpsgd/progress.h"

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

/* models[0 .. count-1]: the finalized model base with data.gamma = hdp_rates_gamma(lo, hi,
 * count, i) (so n = round(d/gamma)), re-finalized (its files read again). HDP_EINPUT for a
 * grid hdp_rates_grid_parse refuses, or the message of the first model that does not finalize
 * (then none is left to free). Release each model with hdp_model_free. */
hdp_status hdp_rates_models(const hdp_model *base, double lo, double hi, long count,
                            hdp_model *models, hdp_error *err);

/* The families of docs/theory.md §5's three rates (output, linear-noise, inverse-time) when list is
 * NULL, else hdp_design_families_parse(list). */
hdp_status hdp_rates_families(const char *list, int want[HDP_FAMILY_COUNT], hdp_error *err);

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

/* One family of a result, as the per-family result tables read it (hdp_rates_risk_fields,
 * hdp_rates_slope_fields of hdpsgd/fields.h, under the prefix hdp_design_family_key + "_"). */
typedef struct {
    const hdp_rates_result *res;
    int family; /* hdp_design_family */
} hdp_rates_family;

/* Optimise the wanted families at each of the count finalized models (increasing
 * gamma) and fit the slopes. progress (NULL: none) is called after every gamma: "rates
 * gamma", done of count gammas, value that gamma; r->des[done - 1] then holds its optimised
 * families (r->models[done - 1] its model), and a nonzero return stops the run
 * (HDP_ECANCELLED). Release r with hdp_rates_result_free in every case. */
hdp_status hdp_rates_run(const hdp_model *models, long count, const int want[HDP_FAMILY_COUNT],
                         const hdp_design_options *opt, hdp_progress_fn progress,
                         void *progress_user, hdp_rates_result *r, hdp_error *err);
void hdp_rates_result_free(hdp_rates_result *r);

/* ---- the theorem's rate model with its constants (docs/theory.md §5.2; src/drivers/rates_fit.c)
 * ---- Each family's rate is a sum of two terms, r1 (statistical) + r2 (privacy):
 *   output        r1 = gamma L,           r2 = gamma^2 L^2 / rho^2
 *   linear-noise  r1 = gamma L^(2/3),     r2 = gamma^2 L^(4/3) / rho^2
 *   inverse-time, pl r1 = gamma,          r2 = gamma^2 / rho^2          (L = log(1/gamma))
 * The theorem fixes them up to constants; hdp_rates_fit_model fits risk ~ A r1 + B r2. */

/* The two terms at gamma (0 < gamma < 1; rho = inf gives r2 = 0): 0, or -1 (NaN) for a
 * gamma outside (0, 1) or a family without a rate. */
int hdp_rates_terms(hdp_design_family f, double gamma, double rho, double *r1, double *r2);

/* A grid is called pre-asymptotic when, at its smallest gamma, the second term is more
 * than this share of the fitted risk ... */
#define HDP_RATES_TERM2_NEGLIGIBLE 0.05
/* ... or the local log-log slope of the risk (its two smallest gammas) differs from the
 * leading term's local slope (1 - b1/L) by more than this. */
#define HDP_RATES_SLOPE_DRIFT 0.05

typedef struct {
    double A, B;               /* the fitted constants, both >= 0 */
    double rel_err;            /* max over the grid of |A r1 + B r2 - risk| / risk */
    double rms_rel_err;        /* the root mean square of the same */
    int nonneg_active;         /* 1: the unconstrained fit had a negative constant, so one
                                  term alone was fitted (the non-negative solution) */
    double term2_share;        /* B r2 / (A r1 + B r2) at the smallest gamma */
    double local_slope;        /* d log risk / d log gamma between the two smallest gammas */
    double lead_slope;         /* the leading term's local slope at the smallest gamma */
    double fit_slope;          /* the fitted model's local slope there */
    int pre_asymptotic;        /* term2_share > HDP_RATES_TERM2_NEGLIGIBLE or |local_slope -
                                  lead_slope| > HDP_RATES_SLOPE_DRIFT */
} hdp_rates_fit;

/* Fit risk ~ A r1(gamma) + B r2(gamma) over the count points (increasing gamma in (0, 1),
 * risk > 0) by relative least squares, min sum ((A r1 + B r2 - risk)/risk)^2 with A, B >= 0
 * (GSL's gsl_multifit_wlinear, weights 1/risk^2; rho = inf: A alone). HDP_EINPUT for bad
 * points, HDP_ENUMERIC when the fit fails. */
hdp_status hdp_rates_fit_model(hdp_design_family f, const double *gamma, const double *risk,
                               long count, double rho, hdp_rates_fit *fit, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
