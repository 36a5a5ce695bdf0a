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
 * two-point average. Laplace and uniform: quadrature as Student-t, fitted; a two-Gaussian
 * mixture: the exact two-component sum; empirical (a sample of label-noise values): the exact
 * average over the sample, fitted (docs/theory.md §2.3).
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

/* A label-noise law (docs/theory.md §1, §2.3): its kind and variance tau2 = E z^2, and the
 * parameters of its kind. */
typedef struct {
    hdp_noise_kind kind;
    double tau2;         /* E z^2 (mixture, empirical: as hdp_noise_law_tau2 derives it) */
    double df;           /* student: degrees of freedom > 2 */
    double mix_w, mix_m1, mix_v1, mix_v2; /* mixture: z ~ w N(m1, v1) + (1-w) N(m2, v2),
                                             m2 = -w m1/(1-w) (mean 0), w in (0,1), v > 0 */
    const double *sample; /* empirical: n >= 2 values of mean 0 (hdp_noise_sample_check) */
    size_t n;
} hdp_noise_law;

/* The law of a finalized model's label noise (sample: the model's, valid while m is). */
void hdp_noise_law_of_model(const hdp_model *m, hdp_noise_law *law);

/* The variance E z^2 of a mixture (w, m1, v1, v2) as hdp_noise_law describes it. */
double hdp_noise_mixture_tau2(double w, double m1, double v1, double v2);

/* Checks n values of label noise for the empirical law and centres them in place: at least
 * 2, all finite, not all equal, and a mean within 5 standard errors (5 sd/sqrt(n)) of 0 (a
 * larger mean is refused: not a sample of a mean-0 law); the mean is then subtracted.
 * *tau2: the mean square of the centred values (their variance, 1/n). HDP_EINPUT with the
 * reason (what: how the message names the values, e.g. a file name), HDP_OK else. */
hdp_status hdp_noise_sample_check(double *z, size_t n, const char *what, double *tau2,
                                  hdp_error *err);

/* noise, tau2, df: the label-noise law (docs/theory.md §1) of a kind other than mixture and
 * empirical (those take their defaults: use hdp_clip_alloc_law); c: clipping constant or inf.
 * Returns NULL when out of memory. Free with hdp_clip_free. */
hdp_clip *hdp_clip_alloc(hdp_noise_kind noise, double tau2, double df, double c);

/* The same for any law (its sample, if any, is copied: the caller keeps its array). */
hdp_clip *hdp_clip_alloc_law(const hdp_noise_law *law, double c);
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
    size_t direct;      /* of the pieces, those evaluated directly (the empirical law: where
                           its values near c make the factors too steep to fit) */
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

/* A clipping evaluator for a law (with its sample copied) at c, fitted on [0, R_max] when its
 * law needs it (e.g. the empirical law of a fit's residuals). NULL (and err set) when out of
 * memory. */
hdp_clip *hdp_clip_alloc_law_fitted(const hdp_noise_law *law, double c, double R_max,
                                    hdp_error *err);

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
