/*
 * rates_fit.c — the theorem's rate model with its constants (hdpsgd/rates.h; docs/theory.md
 * section 5.2): risk(gamma) ~ A r1(gamma) + B r2(gamma), the two terms of each family's
 * rate, fitted by non-negative relative least squares, and the signs that a gamma grid is
 * still pre-asymptotic. Prints nothing.
 */
#include "hdpsgd/rates.h"
#include "core/check.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>

int hdp_rates_terms(hdp_design_family f, double gamma, double rho, double *r1, double *r2)
{
    *r1 = *r2 = NAN;
    if (!(gamma > 0 && gamma < 1))
        return -1;
    const double L = log(1.0 / gamma), priv = isinf(rho) ? 0.0 : 1.0 / (rho * rho);
    switch (f) {
    case HDP_FAMILY_OUTPUT:
        *r1 = gamma * L;
        *r2 = gamma * gamma * L * L * priv;
        return 0;
    case HDP_FAMILY_LINEAR_NOISE:
        *r1 = gamma * pow(L, 2.0 / 3.0);
        *r2 = gamma * gamma * pow(L, 4.0 / 3.0) * priv;
        return 0;
    case HDP_FAMILY_OPTIMAL:
    case HDP_FAMILY_PL:
        *r1 = gamma;
        *r2 = gamma * gamma * priv;
        return 0;
    default:
        return -1;
    }
}

/* d log r / d log gamma of a term c gamma^a L^b, L = log(1/gamma): a - b / L */
static double term_slope(double a, double b, double gamma) { return a - b / log(1.0 / gamma); }

/* the exponents (a, b) of the two terms of family f */
static void term_exponents(hdp_design_family f, double *a1, double *b1, double *a2, double *b2)
{
    *a1 = 1, *a2 = 2;
    if (f == HDP_FAMILY_OUTPUT) *b1 = 1, *b2 = 2;
    else if (f == HDP_FAMILY_LINEAR_NOISE) *b1 = 2.0 / 3.0, *b2 = 4.0 / 3.0;
    else *b1 = 0, *b2 = 0;
}

/* weighted least squares of y on the columns `use` of X (weights 1/y^2): coefficients, chi2 */
static int wls(const double *x1, const double *x2, const double *y, long n, int use, double *c,
               double *chi2)
{
    const int k = use == 3 ? 2 : 1;
    hdp_gsl_quiet(); /* a failed allocation returns NULL, never aborts (issue 29) */
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)k);
    gsl_vector *Y = gsl_vector_alloc((size_t)n), *W = gsl_vector_alloc((size_t)n);
    gsl_vector *C = gsl_vector_alloc((size_t)k);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)k, (size_t)k);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)k);
    int rc = -1;
    if (X && Y && W && C && cov && ws) {
        for (long i = 0; i < n; i++) {
            int j = 0;
            if (use & 1) gsl_matrix_set(X, (size_t)i, (size_t)j++, x1[i]);
            if (use & 2) gsl_matrix_set(X, (size_t)i, (size_t)j, x2[i]);
            gsl_vector_set(Y, (size_t)i, y[i]);
            gsl_vector_set(W, (size_t)i, 1.0 / (y[i] * y[i]));
        }
        if (gsl_multifit_wlinear(X, W, Y, C, cov, chi2, ws) == GSL_SUCCESS) {
            c[0] = (use & 1) ? gsl_vector_get(C, 0) : 0.0;
            c[1] = (use & 2) ? gsl_vector_get(C, (size_t)(k - 1)) : 0.0;
            rc = 0;
        }
    }
    gsl_multifit_linear_free(ws);
    gsl_matrix_free(cov);
    gsl_vector_free(C);
    gsl_vector_free(W);
    gsl_vector_free(Y);
    gsl_matrix_free(X);
    return rc;
}

hdp_status hdp_rates_fit_model(hdp_design_family f, const double *gamma, const double *risk,
                               long count, double rho, hdp_rates_fit *fit, hdp_error *err)
{
    HDP_ZERO(fit);
    HDP_REQUIRE(err, gamma);
    HDP_REQUIRE(err, risk);
    HDP_REQUIRE(err, fit);
    fit->A = fit->B = fit->rel_err = fit->rms_rel_err = fit->term2_share = NAN;
    fit->local_slope = fit->lead_slope = fit->fit_slope = NAN;
    if (count < 2 || count > HDP_RATES_MAX_GAMMAS)
        return hdp_fail(err, HDP_EINPUT, "rates fit: %ld points: between 2 and %d are needed",
                        count, HDP_RATES_MAX_GAMMAS);
    double x1[HDP_RATES_MAX_GAMMAS], x2[HDP_RATES_MAX_GAMMAS];
    for (long i = 0; i < count; i++) {
        if (hdp_rates_terms(f, gamma[i], rho, &x1[i], &x2[i]) != 0 || !(risk[i] > 0) ||
            !isfinite(risk[i]))
            return hdp_fail(err, HDP_EINPUT, "rates fit: point %ld: gamma = %g, risk = %g: "
                            "expected 0 < gamma < 1, a finite risk > 0 and a family with a rate",
                            i, gamma[i], risk[i]);
        if (i > 0 && !(gamma[i] > gamma[i - 1]))
            return hdp_fail(err, HDP_EINPUT, "rates fit: the gammas must increase (point %ld)", i);
    }
    /* non-negative least squares in two unknowns: the unconstrained solution when both
     * coefficients are >= 0, else the better of the one-term fits; without privacy
     * (rho = inf) the second term vanishes and A is fitted alone */
    const int two = !isinf(rho) && count >= 2;
    double c[2] = {NAN, NAN}, chi2 = INFINITY;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int ok = two && wls(x1, x2, risk, count, 3, c, &chi2) == 0 && c[0] >= 0 && c[1] >= 0;
    fit->nonneg_active = 0;
    if (!ok) {
        double c1[2], c2[2], k1 = INFINITY, k2 = INFINITY;
        int ok1 = wls(x1, x2, risk, count, 1, c1, &k1) == 0 && c1[0] >= 0;
        int ok2 = two && wls(x1, x2, risk, count, 2, c2, &k2) == 0 && c2[1] >= 0;
        if (!ok1) k1 = INFINITY;
        if (!ok2) k2 = INFINITY;
        if (ok1 || ok2) {
            ok = 1;
            memcpy(c, k1 <= k2 ? c1 : c2, sizeof c);
        }
        fit->nonneg_active = two;
    }
    gsl_set_error_handler(old);
    if (!ok)
        return hdp_fail(err, HDP_ENUMERIC, "rates fit: the least-squares fit of %s failed",
                        hdp_design_family_name(f));
    fit->A = c[0];
    fit->B = c[1];
    double mx = 0, ss = 0;
    for (long i = 0; i < count; i++) {
        double e = fabs(c[0] * x1[i] + c[1] * x2[i] - risk[i]) / risk[i];
        mx = fmax(mx, e);
        ss += e * e;
    }
    fit->rel_err = mx;
    fit->rms_rel_err = sqrt(ss / (double)count);
    /* pre-asymptotic signs at the smallest gamma: the second term's share of the fit, and
     * the local slope of the data (first two points) against the leading term's */
    double a1, b1, a2, b2;
    term_exponents(f, &a1, &b1, &a2, &b2);
    const double g0 = gamma[0], t1 = c[0] * x1[0], t2 = c[1] * x2[0];
    fit->term2_share = t1 + t2 > 0 ? t2 / (t1 + t2) : NAN;
    fit->local_slope = log(risk[1] / risk[0]) / log(gamma[1] / gamma[0]);
    fit->lead_slope = term_slope(a1, b1, g0);
    fit->fit_slope = t1 + t2 > 0 ? (t1 * term_slope(a1, b1, g0) + t2 * term_slope(a2, b2, g0)) /
                                       (t1 + t2)
                                 : NAN;
    fit->pre_asymptotic = (fit->term2_share > HDP_RATES_TERM2_NEGLIGIBLE) ||
                          fabs(fit->local_slope - fit->lead_slope) > HDP_RATES_SLOPE_DRIFT;
    return HDP_OK;
}
