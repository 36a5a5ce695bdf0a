/* test_accountant.c — DP-SGD with Poisson sampling: PLD, RDP, classic RDP (docs/theory.md §6.5). */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "hdpsgd/accountant.h"
#include "testutil.h"

static hdp_accountant_result eps_all(double q, double sigma, long long T, double delta)
{
    hdp_accountant_query x = {q, sigma, T, delta, 0};
    hdp_accountant_result r;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_accountant_epsilon(&x, &r, &err), HDP_OK);
    return r;
}

/* TensorFlow Privacy's published MNIST table (N = 60000, B = 256, delta = 1e-5), classic
 * conversion; the table rounds the step count, hence 0.02 */
static void tf_privacy_table(void **state)
{
    (void)state;
    const double q = 256.0 / 60000.0;
    const struct { double sigma, epochs, eps; } rows[] = {{1.12, 60, 2.92}, {0.6, 30, 9.74}, {1.2, 10, 1.20}};
    for (int i = 0; i < 3; i++) {
        long long T = hdp_accountant_steps_for_epochs(rows[i].epochs, q);
        hdp_accountant_result r = eps_all(q, rows[i].sigma, T, 1e-5);
        assert_true(fabs(r.epsilon_rdp_classic - rows[i].eps) <= 0.02);
    }
    assert_int_equal(hdp_accountant_steps_for_epochs(60, q), 14063);
    assert_int_equal(hdp_accountant_steps_for_epochs(1, 0.5), 2);
    assert_int_equal(hdp_accountant_steps_for_epochs(1, 1.0 / 3.0), 3);
}

/* exact epsilon of mu-GDP at delta: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) */
static double gdp_epsilon(double mu, double delta)
{
    double lo = 0, hi = 1e4;
    for (int i = 0; i < 200; i++) {
        double e = 0.5 * (lo + hi);
        double d = gsl_cdf_ugaussian_P(-e / mu + mu / 2) - exp(e) * gsl_cdf_ugaussian_P(-e / mu - mu / 2);
        if (d > delta)
            lo = e;
        else
            hi = e;
    }
    return hi;
}

/* q = 1: T compositions of the Gaussian mechanism are mu-GDP with mu = sqrt(T)/sigma; the PLD
 * is an upper bound within 1e-3; RDP at q = 1 is alpha/(2 sigma^2) */
static void pld_full_batch_is_gaussian(void **state)
{
    (void)state;
    const struct { double sigma; long long T; } c[] = {{1.0, 1}, {2.0, 1}, {2.0, 10}, {4.0, 50}, {0.8, 3}};
    for (int i = 0; i < 5; i++) {
        double exact = gdp_epsilon(sqrt((double)c[i].T) / c[i].sigma, 1e-5);
        hdp_accountant_result r = eps_all(1.0, c[i].sigma, c[i].T, 1e-5);
        assert_true(r.epsilon_pld >= exact - 1e-9);
        assert_true(r.epsilon_pld - exact <= 1e-3);
    }
    assert_rel(hdp_rdp_subsampled_gaussian(1.0, 2.0, 3.0), 3.0 / 8.0, 1e-15, 0);
}

/* PLD <= RDP <= RDP classic everywhere tested; epsilon falls as sigma grows */
static void ordering(void **state)
{
    (void)state;
    const double qs[] = {1e-3, 0.02, 0.3};
    const double sigmas[] = {0.8, 1.5, 4.0};
    const long long Ts[] = {1, 1000};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 2; c++) {
                hdp_accountant_result r = eps_all(qs[a], sigmas[b], Ts[c], 1e-5);
                assert_true(r.epsilon_pld <= r.epsilon_rdp + 1e-9);
                assert_true(r.epsilon_rdp <= r.epsilon_rdp_classic + 1e-9);
                assert_true(r.epsilon_pld >= 0 && isfinite(r.epsilon_pld));
            }
    for (int b = 1; b < 3; b++) {
        hdp_accountant_result lo = eps_all(0.01, sigmas[b - 1], 1000, 1e-5), hi = eps_all(0.01, sigmas[b], 1000, 1e-5);
        assert_true(hi.epsilon_pld < lo.epsilon_pld);
        assert_true(hi.epsilon_rdp < lo.epsilon_rdp);
    }
}

/* the fractional-order series meets the integer-order sum: RDP is continuous in alpha */
static void rdp_fractional_orders(void **state)
{
    (void)state;
    for (double alpha = 2; alpha <= 8; alpha += 1) {
        double at = hdp_rdp_subsampled_gaussian(0.01, 1.1, alpha);
        double near = hdp_rdp_subsampled_gaussian(0.01, 1.1, alpha + 1e-7);
        assert_rel(near, at, 1e-5, 0);
    }
    /* small q: RDP ~ q^2 alpha / sigma^2 (second-order expansion, Mironov et al.) */
    double r = hdp_rdp_subsampled_gaussian(1e-4, 2.0, 2.0);
    assert_rel(r, log1p(1e-8 * expm1(0.25)), 1e-10, 0);
}

/* calibration: epsilon of the calibrated sigma <= target and within 1e-3 of it */
static void calibration_round_trips(void **state)
{
    (void)state;
    const double targets[] = {0.5, 2.0, 8.0};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++) {
            hdp_accountant_query x = {256.0 / 60000.0, 0, 2000, 1e-5, 0};
            hdp_error err;
            hdp_error_clear(&err);
            double sigma, e;
            assert_int_equal(hdp_accountant_calibrate(&x, (hdp_accountant_kind)k, targets[i], &sigma, &err), HDP_OK);
            x.noise_multiplier = sigma;
            assert_int_equal(hdp_accountant_epsilon_of(&x, (hdp_accountant_kind)k, &e, &err), HDP_OK);
            assert_true(e <= targets[i]);
            assert_true(targets[i] - e <= 1e-3);
        }
}

static void bad_input(void **state)
{
    (void)state;
    const hdp_accountant_query bad[] = {
        {0.0, 1, 10, 1e-5, 0}, {1.5, 1, 10, 1e-5, 0}, {0.1, -1, 10, 1e-5, 0}, {0.1, 1, 0, 1e-5, 0},
        {0.1, 1, 10, 0.0, 0},  {0.1, 1, 10, 1.0, 0},  {0.1, NAN, 10, 1e-5, 0}, {0.1, 1, 10, 1e-5, 0.5},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hdp_accountant_result r;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_accountant_epsilon(&bad[i], &r, &err), HDP_EINPUT);
    }
    hdp_accountant_query x = {0.5, 0, 100000, 1e-5, 0};
    hdp_error err;
    hdp_error_clear(&err);
    double sigma;
    /* epsilon 1e-6 at q = 0.5 over 1e5 steps needs sigma far above 1e6 */
    assert_int_equal(hdp_accountant_calibrate(&x, HDP_ACCOUNTANT_RDP, 1e-6, &sigma, &err), HDP_EINPUT);
    assert_int_equal(hdp_accountant_epsilon(NULL, NULL, &err), HDP_EINPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tf_privacy_table),        cmocka_unit_test(pld_full_batch_is_gaussian),
        cmocka_unit_test(ordering),                cmocka_unit_test(rdp_fractional_orders),
        cmocka_unit_test(calibration_round_trips), cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
