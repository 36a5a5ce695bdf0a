/* test_rates_fit.c — the theorem's rate model with its constants (hdpsgd/rates.h,
 * docs/theory.md §5.2): on synthetic risks A r1 + B r2 of every family with known A, B the fit
 * gives A and B back (exactly without noise, within the noise with 1 % multiplicative
 * noise); a negative constant is never returned (the non-negative solution); without
 * privacy B = 0; the pre-asymptotic signs: a big privacy term at the smallest gamma is
 * flagged, the leading term alone is not; bad points are refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "hdpsgd/rates.h"

static const hdp_design_family fams[] = {HDP_FAMILY_OUTPUT, HDP_FAMILY_LINEAR_NOISE,
                                         HDP_FAMILY_OPTIMAL, HDP_FAMILY_PL};

/* count log-spaced gammas from lo to hi and the synthetic risks A r1 + B r2, times
 * (1 + noise z_i) with a fixed pattern z_i in [-1, 1] */
static void synth(hdp_design_family f, double A, double B, double rho, double lo, double hi,
                  long count, double noise, double *g, double *y)
{
    for (long i = 0; i < count; i++) {
        g[i] = hdp_rates_gamma(lo, hi, count, i);
        double r1, r2;
        assert_int_equal(hdp_rates_terms(f, g[i], rho, &r1, &r2), 0);
        double z = sin(1.7 * (double)i + 0.3);
        y[i] = (A * r1 + B * r2) * (1 + noise * z);
    }
}

static void recovers_known_constants(void **state)
{
    (void)state;
    double g[12], y[12];
    const double As[] = {0.3, 0.05, 2.0}, Bs[] = {2.5, 10.0, 0.01}, rhos[] = {0.5, 1.0, 4.0};
    for (size_t k = 0; k < sizeof fams / sizeof fams[0]; k++)
        for (int c = 0; c < 3; c++) {
            hdp_rates_fit fit;
            hdp_error err;
            synth(fams[k], As[c], Bs[c], rhos[c], 1e-3, 0.1, 7, 0.0, g, y);
            assert_int_equal(hdp_rates_fit_model(fams[k], g, y, 7, rhos[c], &fit, &err), HDP_OK);
            assert_true(fabs(fit.A - As[c]) < 1e-9 * As[c]);
            assert_true(fabs(fit.B - Bs[c]) < 1e-9 * Bs[c]);
            assert_true(fit.rel_err < 1e-12);
            assert_false(fit.nonneg_active);
            /* with 1 % noise: the constants within a few per cent, the error about the noise */
            synth(fams[k], As[c], Bs[c], rhos[c], 1e-4, 0.1, 12, 0.01, g, y);
            assert_int_equal(hdp_rates_fit_model(fams[k], g, y, 12, rhos[c], &fit, &err), HDP_OK);
            assert_true(fabs(fit.A - As[c]) < 0.05 * As[c]);
            /* B within 10 % where its term matters (>= 10 % of the risk at the largest gamma;
             * in the third case B r2 is 3e-5 of it and B is not determined by 1 % noise) */
            double r1, r2;
            hdp_rates_terms(fams[k], g[11], rhos[c], &r1, &r2);
            if (Bs[c] * r2 >= 0.1 * As[c] * r1)
                assert_true(fabs(fit.B - Bs[c]) < 0.1 * Bs[c]);
            assert_true(fit.rel_err < 0.02 && fit.rel_err > 0.005);
        }
}

static void nonnegative_and_nonprivate(void **state)
{
    (void)state;
    double g[7], y[7];
    hdp_rates_fit fit;
    hdp_error err;
    /* B = 0 with noise: an unconstrained fit may go negative; never returned */
    for (size_t k = 0; k < sizeof fams / sizeof fams[0]; k++) {
        synth(fams[k], 0.2, 0.0, 0.5, 1e-3, 0.1, 7, 0.01, g, y);
        assert_int_equal(hdp_rates_fit_model(fams[k], g, y, 7, 0.5, &fit, &err), HDP_OK);
        assert_true(fit.A >= 0 && fit.B >= 0);
        assert_true(fabs(fit.A - 0.2) < 0.02);
        /* a risk that falls faster than both terms: the fit is clamped, not negative */
        for (int i = 0; i < 7; i++) y[i] = 0.5 * pow(g[i], 2.5);
        assert_int_equal(hdp_rates_fit_model(fams[k], g, y, 7, 0.5, &fit, &err), HDP_OK);
        assert_true(fit.A >= 0 && fit.B >= 0);
        /* rho = inf: no privacy term */
        synth(fams[k], 0.7, 0.0, INFINITY, 1e-3, 0.1, 7, 0.0, g, y);
        assert_int_equal(hdp_rates_fit_model(fams[k], g, y, 7, INFINITY, &fit, &err), HDP_OK);
        assert_true(fit.B == 0 && fabs(fit.A - 0.7) < 1e-9);
    }
}

static void pre_asymptotic_signs(void **state)
{
    (void)state;
    double g[7], y[7];
    hdp_rates_fit fit;
    hdp_error err;
    for (size_t k = 0; k < sizeof fams / sizeof fams[0]; k++) {
        /* the leading term alone: asymptotic at once */
        synth(fams[k], 0.2, 0.0, 0.5, 1e-3, 0.1, 7, 0.0, g, y);
        assert_int_equal(hdp_rates_fit_model(fams[k], g, y, 7, 0.5, &fit, &err), HDP_OK);
        assert_false(fit.pre_asymptotic);
        assert_true(fit.term2_share < 1e-9);
        /* a privacy term that is half the risk at the smallest gamma: flagged */
        double r1, r2;
        hdp_rates_terms(fams[k], 1e-3, 0.5, &r1, &r2);
        synth(fams[k], 0.2, 0.2 * r1 / r2, 0.5, 1e-3, 0.1, 7, 0.0, g, y);
        assert_int_equal(hdp_rates_fit_model(fams[k], g, y, 7, 0.5, &fit, &err), HDP_OK);
        assert_true(fabs(fit.term2_share - 0.5) < 1e-9);
        assert_true(fit.pre_asymptotic);
        assert_true(fit.local_slope > fit.lead_slope + HDP_RATES_SLOPE_DRIFT);
    }
}

static void bad_points(void **state)
{
    (void)state;
    double g[3] = {0.01, 0.02, 0.04}, y[3] = {1, 2, 4};
    hdp_rates_fit fit;
    hdp_error err;
    assert_int_equal(hdp_rates_fit_model(HDP_FAMILY_OPTIMAL, g, y, 1, 0.5, &fit, &err), HDP_EINPUT);
    y[1] = 0;
    assert_int_equal(hdp_rates_fit_model(HDP_FAMILY_OPTIMAL, g, y, 3, 0.5, &fit, &err), HDP_EINPUT);
    y[1] = 2;
    g[2] = 0.015;
    assert_int_equal(hdp_rates_fit_model(HDP_FAMILY_OPTIMAL, g, y, 3, 0.5, &fit, &err), HDP_EINPUT);
    g[2] = 1.5;
    assert_int_equal(hdp_rates_fit_model(HDP_FAMILY_OPTIMAL, g, y, 3, 0.5, &fit, &err), HDP_EINPUT);
    assert_int_equal(hdp_rates_fit_model(HDP_FAMILY_OPTIMAL, NULL, y, 3, 0.5, &fit, &err), HDP_EINPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recovers_known_constants),
        cmocka_unit_test(nonnegative_and_nonprivate),
        cmocka_unit_test(pre_asymptotic_signs),
        cmocka_unit_test(bad_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
