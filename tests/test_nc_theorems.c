/* test_nc_theorems.c — the NC paper's Theorems 4 and 5 (docs/theory.md §8.3): K classes at K of
 * the vertices of a larger K0-simplex ETF (nc.frame_classes), and the projection on a
 * perturbed direction e_1 + Delta (nc.remedy = projection) against per-sample noise. Each
 * closed form against an independent evaluation and against the Monte Carlo (within 4
 * standard errors, fixed seeds), the dimension-free regime beta_0 <= 1/p, bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "hdpsgd/nc.h"
#include "nc_spec.h"
#include "testutil.h"

static hdp_nc_spec base_spec(void)
{
    return nc_base_spec(60, 3000, 777);
}

/* run the Monte Carlo (with its exact error); the problem's a = P^T M_2 in *a when asked */
static void run(const hdp_nc_spec *s, hdp_nc_result *r, double *a)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_nc_problem pb;
    if (hdp_nc_problem_alloc(s, &pb, &err) != HDP_OK || hdp_nc_run(&pb, 0, r, &err) != HDP_OK) {
        print_error("nc run failed: %s\n", err.msg);
        fail();
    }
    if (a)
        *a = pb.PM[1];
    hdp_nc_problem_free(&pb);
}

static void assert_within_4se(double mc, double se, double exact, const char *what)
{
    if (!(fabs(mc - exact) <= 4 * se)) {
        print_error("%s: Monte Carlo %.6f +- %.6f vs exact %.6f (%.2f standard errors)\n", what, mc,
                    se, exact, fabs(mc - exact) / se);
        fail();
    }
}

/* The K0 frame: ||M_k|| = 1, M_k^T M_j = -1/(K0-1), support in the first K0-1 coordinates;
 * K0 = K gives the K-simplex ETF bit for bit. */
static void frame_properties(void **state)
{
    (void)state;
    const long K = 4, K0 = 9, p = 12;
    double M[4 * 12], E[4 * 12];
    hdp_nc_etf_frame(K, K0, p, M);
    for (long k = 0; k < K; k++) {
        for (long j = 0; j < K; j++) {
            double d = 0;
            for (long l = 0; l < p; l++) d += M[k * p + l] * M[j * p + l];
            assert_rel(d, k == j ? 1.0 : -1.0 / (double)(K0 - 1), 1e-13, 1e-13);
        }
        for (long l = K0 - 1; l < p; l++)
            assert_true(M[k * p + l] == 0.0);
    }
    hdp_nc_etf_frame(K, K, p, M);
    hdp_nc_etf(K, p, E);
    assert_memory_equal(M, E, sizeof M);
}

/* Theorem 4: the closed form 1 - E[Phi(Z + n K0/(K (K0-1) sigma))^(K-1)] equals the general
 * exact one-step error of the problem and the Monte Carlo; it grows with K0 towards
 * 1 - E[Phi(Z + n/(K sigma))^(K-1)], and K0 = K is Theorem 2's value. */
static void theorem4_frame(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    const long K0s[] = {10, 11, 40, 1000};
    double prev = 0;
    for (int t = 0; t < 4; t++) {
        hdp_nc_spec s = base_spec();
        s.frame_classes = K0s[t];
        s.p = K0s[t] + 2;
        s.draws = 4000;
        s.seed = 900 + (unsigned)t;
        hdp_nc_result r;
        run(&s, &r, NULL);
        double closed;
        assert_int_equal(hdp_nc_exact_error_frame(s.K, K0s[t], (double)s.n, r.sigma, &closed, &err),
                         HDP_OK);
        assert_rel(r.exact_error, closed, 1e-8, 1e-12);
        char what[64];
        snprintf(what, sizeof what, "Theorem 4, K0 = %ld", K0s[t]);
        assert_within_4se(r.error_mean, r.error_stderr, closed, what);
        assert_true(closed > prev);
        prev = closed;
        if (K0s[t] == s.K) {
            double th2;
            assert_int_equal(hdp_nc_exact_error_balanced(s.K, (double)s.n, r.sigma, &th2, &err),
                             HDP_OK);
            assert_rel(closed, th2, 1e-12, 0);
        }
    }
    /* the squared loss has the same gap; K = 2 is Phi(-n K0/(2 sqrt2 (K0-1) sigma)) */
    hdp_nc_spec s = base_spec();
    s.loss = HDP_NC_SQUARED;
    s.frame_classes = 30;
    s.seed = 950;
    hdp_nc_result r;
    run(&s, &r, NULL);
    double closed;
    assert_int_equal(hdp_nc_exact_error_frame(10, 30, 250, r.sigma, &closed, &err), HDP_OK);
    assert_rel(r.exact_error, closed, 1e-8, 1e-12);
    assert_within_4se(r.error_mean, r.error_stderr, closed, "Theorem 4, squared loss");
    assert_int_equal(hdp_nc_exact_error_frame(2, 5, 20, 10, &closed, &err), HDP_OK);
    assert_rel(closed, gsl_cdf_ugaussian_P(-20.0 * 5 / (2 * 4 * 10) / sqrt(2.0)), 1e-9, 0);
}

/* Centring on a K0 frame: the training and test features become M_k - mean, whose Gram matrix
 * is a (I - 1 1^T/K) with a = K0/(K0-1) (a scaled K-simplex ETF), so with the same offset v on
 * both (which centring cancels) the gap is (n/K) a and the noise sigma sqrt(a (1 - 1/K)):
 * 1 - E[Phi(Z + n sqrt(a)/(sigma sqrt(K (K-1))))^(K-1)]; the exact error and the Monte Carlo
 * agree with it. */
static void frame_with_centring(void **state)
{
    (void)state;
    hdp_nc_spec s = base_spec();
    s.frame_classes = 20;
    s.perturbation = HDP_NC_PERT_BOTH;
    s.remedy = HDP_NC_REMEDY_CENTER;
    s.beta = 0.3;
    s.seed = 4242;
    hdp_nc_result r;
    run(&s, &r, NULL);
    const double a = 20.0 / 19.0, arg = 250 * sqrt(a) / (r.sigma * sqrt(10.0 * 9.0));
    double av[9], closed;
    for (int j = 0; j < 9; j++) av[j] = arg;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_nc_gauss_max_error(av, 9, &closed, &err), HDP_OK);
    assert_rel(r.exact_error, closed, 1e-8, 1e-12);
    assert_within_4se(r.error_mean, r.error_stderr, closed, "K0 frame with centring");
}

/* An independent evaluation of Theorem 5's error: the two binomial laws in full (no window). */
static double projection_brute(long n, long p, double a, double beta, double beta0, double s)
{
    const long N = (p - 1) * n;
    double total = 0;
    for (long k = 0; k <= n; k++) {
        double wk = exp(lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) - n * log(2.0));
        for (long l = 0; l <= N; l++) {
            double wl = exp(lgamma(N + 1.0) - lgamma(l + 1.0) - lgamma(N - l + 1.0) - N * log(2.0));
            double x = n * a + beta * a * (2 * k - n) + beta * beta0 * (2 * l - N);
            total += wk * wl * (s > 0 ? gsl_cdf_ugaussian_Q(x / s) : (x > 0 ? 0 : 1));
        }
    }
    return total;
}

/* Theorem 5 (K = 2, per-sample noise, projection on e_1 + Delta): the windowed sum against
 * the full one, and against the Monte Carlo for the three losses, with and without noise. */
static void theorem5_projection(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    double e, b;
    assert_int_equal(hdp_nc_exact_error_projection(6, 30, 1.2, 0.8, 0.25, 1.5, &e, &err), HDP_OK);
    b = projection_brute(6, 30, 1.2, 0.8, 0.25, 1.5);
    assert_rel(e, b, 1e-12, 1e-16);
    assert_int_equal(hdp_nc_exact_error_projection(4, 20, 0.7, 0.9, 0.3, 0, &e, &err), HDP_OK);
    assert_rel(e, projection_brute(4, 20, 0.7, 0.9, 0.3, 0), 1e-12, 1e-16);
    /* no per-sample noise: Phi(-n a/s) */
    assert_int_equal(hdp_nc_exact_error_projection(10, 50, 1.0, 0, 0.1, 8, &e, &err), HDP_OK);
    assert_rel(e, gsl_cdf_ugaussian_Q(10.0 / 8), 1e-13, 0);
    struct {
        hdp_nc_loss_kind loss;
        long n, p;
        double beta, beta0, G, rho;
    } cases[] = {
        {HDP_NC_CE, 10, 50, 0.5, 0.05, 2, 0.5},
        {HDP_NC_LOGISTIC, 10, 50, 0.5, 0.05, 2, 0.5},
        {HDP_NC_SQUARED, 4, 20, 0.9, 0.3, 8, INFINITY},
        {HDP_NC_SQUARED, 4, 20, 0.9, 0.3, 8, 2},
        {HDP_NC_CE, 6, 400, 1.0, 1.0 / 400, 2.2, 0.2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hdp_nc_spec s = base_spec();
        s.K = 2;
        s.loss = cases[i].loss;
        s.n = cases[i].n;
        s.p = cases[i].p;
        s.beta = cases[i].beta;
        s.projection_beta = cases[i].beta0;
        s.G = cases[i].G;
        s.rho = cases[i].rho;
        s.perturbation = HDP_NC_PERT_PER_SAMPLE;
        s.remedy = HDP_NC_REMEDY_PROJECTION;
        s.draws = 20000;
        s.seed = 1300 + i;
        hdp_nc_result r;
        double a;
        run(&s, &r, &a);
        assert_rel(fabs(a - 1), s.projection_beta, 1e-12, 0); /* a = 1 + Delta_1 */
        assert_true(r.clipped_fraction == 0);
        char what[96];
        snprintf(what, sizeof what, "Theorem 5, case %zu (%s, p = %ld)", i,
                 hdp_nc_loss_name(s.loss), s.p);
        assert_false(isnan(r.exact_error));
        double kappa = s.loss == HDP_NC_LOGISTIC ? 2 : sqrt(2.0);
        b = projection_brute(s.n, s.p, a, s.beta, s.projection_beta, kappa * r.sigma);
        assert_rel(r.exact_error, b, 1e-12, 1e-16);
        assert_within_4se(r.error_mean, r.error_stderr, r.exact_error, what);
    }
    /* G below the largest possible gradient norm: no closed form (NaN), clipping happens */
    hdp_nc_spec s = base_spec();
    s.K = 2;
    s.n = 10;
    s.p = 400;
    s.beta = 0.5;
    s.projection_beta = 0.05;
    s.perturbation = HDP_NC_PERT_PER_SAMPLE;
    s.remedy = HDP_NC_REMEDY_PROJECTION;
    s.draws = 200;
    hdp_nc_result r;
    run(&s, &r, NULL);
    assert_true(isnan(r.exact_error));
    assert_true(r.clipped_fraction > 0);
}

/* beta_0 = 1/p: the exact error at a fixed G (no clipping) tends to its p = infinity limit
 * E Phi(-(n + beta R_1)/s) (the term beta beta_0 R' has variance beta^2 n (p-1)/p^2), closer
 * at every tenfold p; beta_0 fixed instead: the largest gradient norm grows like
 * beta beta_0 p, past any fixed G (so the closed form stops applying and clipping starts). */
static void theorem5_dimension_free(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    const double s = sqrt(2.0) * 2 / sqrt(0.4); /* ce: sqrt2 sigma, sigma = 2/sqrt(2 * 0.2) */
    double lim, prev = INFINITY;
    assert_int_equal(hdp_nc_exact_error_projection(10, 1, 1.0, 0.5, 0, s, &lim, &err), HDP_OK);
    const long ps[] = {10, 100, 1000, 10000};
    for (int i = 0; i < 4; i++) {
        double b0 = 1.0 / (double)ps[i], e;
        assert_int_equal(hdp_nc_exact_error_projection(10, ps[i], 1 + b0, 0.5, b0, s, &e, &err),
                         HDP_OK);
        assert_true(fabs(e - lim) < prev);
        prev = fabs(e - lim);
    }
    assert_rel(prev + lim, lim, 0.01, 0);
    /* the Monte Carlo at p = 1e4, G = 1.5: beta_0 = 1/p is never clipped and matches; beta_0 =
     * 0.05 is clipped (typical norms grow like beta beta_0 sqrt(p), the worst case like
     * beta beta_0 p), has no closed form, and loses accuracy */
    hdp_nc_spec sp = base_spec();
    sp.K = 2;
    sp.n = 10;
    sp.p = 10000;
    sp.beta = 0.5;
    sp.G = 1.5;
    sp.rho = 0.2 * 1.5 * 1.5 / 4; /* sigma = 2, as s above */
    sp.perturbation = HDP_NC_PERT_PER_SAMPLE;
    sp.remedy = HDP_NC_REMEDY_PROJECTION;
    sp.projection_beta = 1e-4;
    sp.draws = 4000;
    hdp_nc_result r, rf;
    run(&sp, &r, NULL);
    assert_true(r.clipped_fraction == 0);
    assert_false(isnan(r.exact_error));
    assert_within_4se(r.error_mean, r.error_stderr, r.exact_error, "Theorem 5, beta_0 = 1/p");
    assert_rel(r.exact_error, lim, 0.01, 0);
    sp.projection_beta = 0.05;
    run(&sp, &rf, NULL);
    assert_true(rf.clipped_fraction > 0.3);
    assert_true(isnan(rf.exact_error));
    assert_true(rf.error_mean > r.error_mean + 4 * (rf.error_stderr + r.error_stderr));
}

static void expect_spec_error(hdp_nc_spec s, const char *fragment)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_nc_problem pb;
    hdp_status st = hdp_nc_problem_alloc(&s, &pb, &err);
    if (st != HDP_EINPUT || !strstr(err.msg, fragment)) {
        print_error("expected an input error containing '%s', got %d: %s\n", fragment, st, err.msg);
        fail();
    }
}

static void bad_input(void **state)
{
    (void)state;
    hdp_nc_spec s = base_spec();
    s.frame_classes = 5; /* < K = 10 */
    expect_spec_error(s, "[nc] frame_classes: frame_classes = 5 is smaller than K = 10");
    s = base_spec();
    s.frame_classes = 100; /* > p = 60 */
    expect_spec_error(s, "[nc] frame_classes: frame_classes = 100 is larger than p = 60");
    s = base_spec();
    s.remedy = HDP_NC_REMEDY_PROJECTION;
    s.frame_classes = 20;
    expect_spec_error(s, "[nc] remedy:");
    s = base_spec();
    s.projection_beta = 1.0;
    expect_spec_error(s, "[nc] projection_beta:");
    s = base_spec();
    s.projection_beta = -0.1;
    expect_spec_error(s, "[nc] projection_beta:");
    hdp_error err;
    hdp_error_clear(&err);
    double e;
    assert_int_equal(hdp_nc_exact_error_frame(10, 5, 100, 1, &e, &err), HDP_EINPUT);
    assert_int_equal(hdp_nc_exact_error_projection(10, 10, -1, 0.1, 0.1, 1, &e, &err),
                     HDP_EINPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frame_properties),
        cmocka_unit_test(theorem4_frame),
        cmocka_unit_test(frame_with_centring),
        cmocka_unit_test(theorem5_projection),
        cmocka_unit_test(theorem5_dimension_free),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
