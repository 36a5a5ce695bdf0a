/*
 * hdpsgd/clip.h — the clipping factors mu_c, nu_c and V_c of docs/theory.md §2.
 *
 * The residual r = x^T(theta - theta*) - z is a Gaussian of variance 2R plus the
 * label noise -z. Per-sample clipping at c*sqrt(d) is, to leading order in d,
 * clipping of r at c:
 *   mu_c(R) = P(|r| < c)           (descent-reduction factor)
 *   nu_c(R) = E[r_c^2] / E[r^2]    (variance-reduction factor)
 *   V_c(R)  = E[r_c^2] / 2 = nu_c(R) (R + tau^2/2)
 * Gaussian label noise: closed forms in a = c / (2 sqrt(R + tau^2/2)).
 * Student-t: one-dimensional GSL quadrature (qagi) over z of the closed-form
 * Gaussian inner expectations, fitted once per model by hdp_clip_tabulate (piecewise
 * Chebyshev series, docs/theory.md §2.3) and read from the fit afterwards, and from HDP_CLIP_STUDENT_ASYMPTOTIC_DF degrees of freedom on
 * the Gaussian closed forms plus their first-order correction in 1/df. Rademacher: the exact
 * two-point average.
 * R is the excess risk (>= 0); c may be +inf (no clipping).
 */
#ifndef HDPSGD_CLIP_H
#define HDPSGD_CLIP_H

#include "hdpsgd/error.h"
#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Student-t label noise with at least this many degrees of freedom: the factors are the
 * Gaussian closed forms plus their first-order correction in 1/df (docs/theory.md §2),
 * within 1e-12 relative of the quadrature; below it, quadrature over the t density. */
#define HDP_CLIP_STUDENT_ASYMPTOTIC_DF 1e7

typedef struct {
    double mu;  /* mu_c(R) */
    double nu;  /* nu_c(R) */
    double V;   /* V_c(R) = nu_c(R) (R + tau^2/2) */
    double dmu; /* d mu_c / dR */
    double dV;  /* d V_c / dR */
} hdp_clip_values;

/* Opaque evaluator: holds the label-noise law and a quadrature workspace.
 * One per thread. */
typedef struct hdp_clip hdp_clip;

/* noise, tau2, df: the label-noise law (docs/theory.md §1); c: clipping constant or inf.
 * Returns NULL when out of memory. Free with hdp_clip_free. */
hdp_clip *hdp_clip_alloc(hdp_noise_kind noise, double tau2, double df, double c);
void hdp_clip_free(hdp_clip *clip);

/* Fits the factors of a law evaluated by quadrature (Student-t below
 * HDP_CLIP_STUDENT_ASYMPTOTIC_DF) once on R in [0, R_max]: log mu_c and log V_c as piecewise
 * Chebyshev series in log(R + tau^2/2), each piece bisected until its last coefficients are
 * below 2e-12 (relative error of the factors ~1e-11, docs/theory.md §2.3). Afterwards
 * hdp_clip_eval and hdp_clip_eval_values read the series on [0, R_max] (derivatives: those of
 * the series) and evaluate directly beyond. A no-op for the closed-form laws. A fit that does
 * not converge leaves direct evaluation (info.failed). R_max is rounded up to a power of 10,
 * and the last 8 fits are shared between evaluators of the same law, tau^2, df, c and range
 * (thread-safe; the fit is the same computation whichever evaluator made it). HDP_ENOMEM when
 * out of memory. */
hdp_status hdp_clip_tabulate(hdp_clip *clip, double R_max, hdp_error *err);

typedef struct {
    size_t pieces;      /* 0: no table */
    int order;          /* of each piece's series */
    double tail;        /* largest last coefficient kept (error in log mu, log V) */
    double R_max;       /* the table covers [0, R_max] */
    long evaluations;   /* direct evaluations of the fit */
    double seconds;     /* wall time of the fit */
    int failed;         /* the fit did not converge: direct evaluation */
    int cached;         /* the same fit made earlier in this process, read again (seconds:
                           the look-up's) */
} hdp_clip_table_info;

void hdp_clip_table_get(const hdp_clip *clip, hdp_clip_table_info *info);

/* The fitted factors (with derivatives) at R: 1, or 0 when R is outside the table or there is
 * none. Reads only: one fitted evaluator may serve many threads (hdp_clip_eval does not). */
int hdp_clip_eval_fitted(const hdp_clip *clip, double R, hdp_clip_values *out);

/* The range of R a table is fitted on for a finalized model: the divergence threshold
 * divergence_factor x max(R(0), the private noise's excess risk) (docs/theory.md §4). */
double hdp_clip_range(const hdp_model *m);

/* A clipping evaluator for the finalized model m at clipping constant c, fitted on
 * [0, hdp_clip_range(m)] when its law needs it. NULL (and err set) when out of memory. */
hdp_clip *hdp_clip_alloc_fitted(const hdp_model *m, double c, hdp_error *err);

/* mu, nu, V and their R-derivatives at excess risk R >= 0 (docs/theory.md §2).
 * Derivatives are analytic for Gaussian noise, those of the fitted series for a tabulated
 * law, central differences otherwise. */
void hdp_clip_eval(hdp_clip *clip, double R, hdp_clip_values *out);

/* The same factors (without derivatives) always computed by quadrature over
 * the density of z, including the Gaussian law: for testing the closed forms.
 * Rademacher and none use their exact finite sums. */
void hdp_clip_eval_quadrature(hdp_clip *clip, double R, hdp_clip_values *out);

/* mu, nu and V at R >= 0 like hdp_clip_eval, without the derivatives (dmu, dV
 * are 0 except for the Gaussian closed forms): for the non-Gaussian laws one
 * evaluation instead of three (the SDE of docs/theory.md §4 needs no Jacobian). */
void hdp_clip_eval_values(hdp_clip *clip, double R, hdp_clip_values *out);

#ifdef __cplusplus
}
#endif
#endif
