/* test_nc.c — NoisyGD on neural-collapse features (the NC paper; docs/theory.md §8): the ETF, the
 * exact one-step error against its closed forms and against the Monte Carlo, flatness in p
 * and eta under perfect collapse, the clipping bound, thread independence, bad specs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "hdpsgd/nc.h"
#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"
#include "nc_spec.h"
#include "testutil.h"

static hdp_nc_spec base_spec(void)
{
    return nc_base_spec(20, 2000, 12345);
}

static void run(const hdp_nc_spec *s, int threads, hdp_nc_result *r)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_nc_problem pb;
    if (hdp_nc_problem_alloc(s, &pb, &err) != HDP_OK ||
        hdp_nc_run(&pb, threads, r, &err) != HDP_OK) {
        print_error("nc run failed: %s\n", err.msg);
        fail();
    }
    hdp_nc_problem_free(&pb);
}

/* |a - b| <= 4 combined standard errors (a statistical test with fixed seeds) */
static void assert_within_4se(double a, double se_a, double b, double se_b, const char *what)
{
    double se = sqrt(se_a * se_a + se_b * se_b);
    if (!(fabs(a - b) <= 4 * se)) {
        print_error("%s: %.6f vs %.6f differ by %.2f combined standard errors (> 4)\n", what, a, b,
                    fabs(a - b) / se);
        fail();
    }
}

/* The ETF: ||M_k|| = 1, M_k^T M_j = -1/(K-1), sum_k M_k = 0, support in the first K-1
 * coordinates, and M = [-e_1, e_1] for K = 2 (the NC paper's binary re-parameterisation). */
static void etf_properties(void **state)
{
    (void)state;
    const long Ks[] = {2, 3, 10, 37};
    for (int t = 0; t < 4; t++) {
        long K = Ks[t], p = K + 5;
        double *M = malloc(sizeof(double) * (size_t)(K * p));
        hdp_nc_etf(K, p, M);
        for (long k = 0; k < K; k++)
            for (long j = 0; j < K; j++) {
                double d = 0;
                for (long l = 0; l < p; l++) d += M[k * p + l] * M[j * p + l];
                assert_rel(d, k == j ? 1.0 : -1.0 / (double)(K - 1), 1e-13, 1e-13);
            }
        for (long l = 0; l < p; l++) {
            double s = 0;
            for (long k = 0; k < K; k++) s += M[k * p + l];
            assert_true(fabs(s) < 1e-13);
            for (long k = 0; l >= K - 1 && k < K; k++) assert_true(M[k * p + l] == 0.0);
        }
        if (K == 2) {
            assert_rel(M[0], -1.0, 1e-15, 0);
            assert_rel(M[p], 1.0, 1e-15, 0);
        }
        free(M);
    }
    long nk[10];
    hdp_nc_class_sizes(10, 253, 0, nk);
    long sum = 0;
    for (int k = 0; k < 10; k++) sum += nk[k];
    assert_int_equal(sum, 253);
    assert_int_equal(nk[0], 26);
    assert_int_equal(nk[9], 25);
    hdp_nc_class_sizes(2, 100, 0.3, nk);
    assert_int_equal(nk[0], 30);
    assert_int_equal(nk[1], 70);
}

/* The quadrature against the closed forms of docs/theory.md §8: K = 2 gives Phi(-n/(sqrt2 sigma))
 * (down to errors of 1e-40, relative accuracy), the logistic model Phi(-n/(2 sigma)), and the
 * problem-level exact error (clipping, class sizes, test centres) the balanced formula. */
static void exact_closed_forms(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    const double ns[] = {1, 5, 20, 60, 200};
    for (int i = 0; i < 5; i++) {
        double e;
        assert_int_equal(hdp_nc_exact_error_balanced(2, ns[i], 10.0, &e, &err), HDP_OK);
        assert_rel(e, gsl_cdf_ugaussian_P(-ns[i] / (sqrt(2.0) * 10.0)), 1e-8, 0);
    }
    /* K classes: 1 - E[Phi(Z + a)^(K-1)] at a = 0 is 1 - 1/K (symmetry) */
    double e;
    assert_int_equal(hdp_nc_exact_error_balanced(10, 0.0, 1.0, &e, &err), HDP_OK);
    assert_rel(e, 0.9, 1e-9, 0);
    /* the problem's exact error = the balanced closed form (no clipping at G = 1) */
    hdp_nc_spec s = base_spec();
    hdp_nc_problem pb;
    for (int l = 0; l < 2; l++) {
        s.loss = l ? HDP_NC_SQUARED : HDP_NC_CE;
        assert_int_equal(hdp_nc_problem_alloc(&s, &pb, &err), HDP_OK);
        double ex, cf;
        assert_int_equal(hdp_nc_exact_error(&pb, &ex, &err), HDP_OK);
        assert_int_equal(hdp_nc_exact_error_balanced(10, 250, 10, &cf, &err), HDP_OK);
        assert_rel(ex, cf, 1e-9, 0);
        hdp_nc_problem_free(&pb);
    }
    /* clipping below the gradient norm sqrt(1 - 1/K): the signal shrinks by G/norm and sigma
     * grows with G: the error is that of G = norm */
    s = base_spec();
    s.G = 0.5;
    assert_int_equal(hdp_nc_problem_alloc(&s, &pb, &err), HDP_OK);
    double ex, cf;
    assert_int_equal(hdp_nc_exact_error(&pb, &ex, &err), HDP_OK);
    double g0 = hdp_nc_grad_norm_at_zero(10, HDP_NC_CE);
    assert_int_equal(hdp_nc_exact_error_balanced(10, 250, hdp_nc_sigma(g0, 0.005), &cf, &err),
                     HDP_OK);
    assert_rel(ex, cf, 1e-9, 0);
    hdp_nc_problem_free(&pb);
    /* logistic (K = 2) and the K = 2 softmax model: independent of the class balance */
    s = base_spec();
    s.K = 2;
    s.n = 40;
    for (int imb = 0; imb < 2; imb++) {
        s.imbalance = imb ? 0.2 : 0;
        s.loss = HDP_NC_LOGISTIC;
        assert_int_equal(hdp_nc_problem_alloc(&s, &pb, &err), HDP_OK);
        assert_int_equal(hdp_nc_exact_error(&pb, &ex, &err), HDP_OK);
        assert_rel(ex, hdp_nc_exact_error_logistic(40, 10), 1e-12, 0);
        assert_rel(ex, gsl_cdf_ugaussian_P(-40.0 / 20.0), 1e-12, 0);
        hdp_nc_problem_free(&pb);
        s.loss = HDP_NC_CE;
        assert_int_equal(hdp_nc_problem_alloc(&s, &pb, &err), HDP_OK);
        assert_int_equal(hdp_nc_exact_error(&pb, &ex, &err), HDP_OK);
        assert_rel(ex, gsl_cdf_ugaussian_P(-40.0 / (sqrt(2.0) * 10.0)), 1e-8, 0);
        hdp_nc_problem_free(&pb);
    }
}

/* The exact one-step error against the Monte Carlo (4 standard errors, fixed seeds): K = 2
 * and K = 10 at several n, the logistic model, and the general formula (*) of nc_exact.c on the
 * deterministic perturbations (offsets, with clipping) and the remedies. */
static void exact_vs_monte_carlo(void **state)
{
    (void)state;
    struct {
        long K, n;
        hdp_nc_loss_kind loss;
        hdp_nc_perturbation_kind pert;
        hdp_nc_remedy_kind remedy;
        double imbalance;
    } cases[] = {
        {2, 8, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {2, 20, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {2, 40, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {2, 20, HDP_NC_LOGISTIC, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {2, 30, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0.25},
        {10, 100, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {10, 250, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {10, 400, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {10, 250, HDP_NC_CE, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0.3},
        {10, 250, HDP_NC_SQUARED, HDP_NC_PERT_NONE, HDP_NC_REMEDY_NONE, 0},
        {10, 250, HDP_NC_CE, HDP_NC_PERT_TEST_OFFSET, HDP_NC_REMEDY_NONE, 0},
        {10, 250, HDP_NC_CE, HDP_NC_PERT_TRAIN_OFFSET, HDP_NC_REMEDY_NONE, 0},
        {10, 250, HDP_NC_CE, HDP_NC_PERT_BOTH, HDP_NC_REMEDY_NONE, 0.3},
        {10, 250, HDP_NC_CE, HDP_NC_PERT_BOTH, HDP_NC_REMEDY_CENTER, 0.3},
        {10, 250, HDP_NC_CE, HDP_NC_PERT_TEST_OFFSET, HDP_NC_REMEDY_PCA, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hdp_nc_spec s = base_spec();
        s.K = cases[i].K;
        s.n = cases[i].n;
        s.p = 60;
        s.loss = cases[i].loss;
        s.perturbation = cases[i].pert;
        s.remedy = cases[i].remedy;
        s.imbalance = cases[i].imbalance;
        s.draws = 3000;
        s.seed = 1000 + i;
        hdp_nc_result r;
        run(&s, 0, &r);
        char what[128];
        snprintf(what, sizeof what, "case %zu (K = %ld, n = %ld, %s, %s, %s)", i, s.K, s.n,
                 hdp_nc_loss_name(s.loss), hdp_nc_perturbation_name(s.perturbation),
                 hdp_nc_remedy_name(s.remedy));
        assert_false(isnan(r.exact_error));
        assert_within_4se(r.error_mean, r.error_stderr, r.exact_error, 0, what);
    }
}

/* Perfect collapse: the error does not depend on p (one step and several, any eta) nor, for
 * one step from W = 0, on eta: independent seeds, differences within 4 combined stderr. */
static void flat_in_p_and_eta(void **state)
{
    (void)state;
    hdp_nc_spec s = base_spec();
    hdp_nc_result r[2][2];
    const long ps[2] = {10, 2000};
    const double etas[2] = {1, 0.01};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            s.p = ps[i];
            s.eta = etas[j];
            s.seed = 777 + 2 * i + j;
            run(&s, 0, &r[i][j]);
        }
    assert_within_4se(r[0][0].error_mean, r[0][0].error_stderr, r[1][0].error_mean,
                      r[1][0].error_stderr, "p = 10 vs p = 2000 (eta = 1)");
    assert_within_4se(r[0][1].error_mean, r[0][1].error_stderr, r[1][1].error_mean,
                      r[1][1].error_stderr, "p = 10 vs p = 2000 (eta = 0.01)");
    assert_within_4se(r[0][0].error_mean, r[0][0].error_stderr, r[0][1].error_mean,
                      r[0][1].error_stderr, "eta = 1 vs eta = 0.01 (p = 10)");
    assert_within_4se(r[1][0].error_mean, r[1][0].error_stderr, r[1][1].error_mean,
                      r[1][1].error_stderr, "eta = 1 vs eta = 0.01 (p = 2000)");
    /* several steps, NoisySGD and a Gaussian start: still flat in p */
    hdp_nc_spec v = base_spec();
    v.steps = 3;
    v.eta = 0.3;
    v.batch = 100;
    v.init = HDP_NC_INIT_GAUSSIAN;
    v.draws = 1500;
    hdp_nc_result a, b;
    v.p = 10;
    v.seed = 31;
    run(&v, 0, &a);
    v.p = 1500;
    v.seed = 32;
    run(&v, 0, &b);
    assert_within_4se(a.error_mean, a.error_stderr, b.error_mean, b.error_stderr,
                      "NoisySGD, 3 steps, Gaussian init: p = 10 vs p = 1500");
    /* ... and a perturbation brings p back (the sign of the effect, far beyond 4 se) */
    hdp_nc_spec t = base_spec();
    t.perturbation = HDP_NC_PERT_TEST_OFFSET;
    t.draws = 500;
    hdp_nc_result lo, hi;
    t.p = 10;
    run(&t, 0, &lo);
    t.p = 2000;
    run(&t, 0, &hi);
    assert_true(hi.error_mean - lo.error_mean > 10 * sqrt(lo.error_stderr * lo.error_stderr +
                                                          hi.error_stderr * hi.error_stderr));
}

/* With clipping active, no clipped per-sample gradient exceeds G: the explicit rank-one
 * matrix (exact Frobenius norm) and the Monte Carlo's record over draws, steps and samples. */
static void clipping_bounded(void **state)
{
    (void)state;
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 99);
    double r[10], z[300], gm[3000];
    for (int t = 0; t < 200; t++) {
        long rows = 1 + (long)(hdp_xoshiro_double(&g) * 10);
        long cols = 1 + (long)(hdp_xoshiro_double(&g) * 300);
        double G = 0.01 + 3 * hdp_xoshiro_double(&g);
        double scale = pow(10.0, 4 * hdp_xoshiro_double(&g) - 2);
        for (long i = 0; i < rows; i++) r[i] = scale * hdp_rng_normal(&g);
        for (long j = 0; j < cols; j++) z[j] = hdp_rng_normal(&g);
        double c = hdp_nc_clip_gradient(r, rows, z, cols, G, gm);
        double f = 0;
        for (long i = 0; i < rows * cols; i++) f += gm[i] * gm[i];
        f = sqrt(f);
        assert_true(c > 0 && c <= 1);
        assert_true(f <= G * (1 + 1e-12));
        if (c < 1)
            assert_rel(f, G, 1e-12, 0);
    }
    /* the Monte Carlo: train-offset and per-sample perturbations with several steps and a
     * Gaussian start, G below every gradient norm */
    const hdp_nc_perturbation_kind perts[] = {HDP_NC_PERT_TRAIN_OFFSET, HDP_NC_PERT_PER_SAMPLE};
    for (int i = 0; i < 2; i++) {
        hdp_nc_spec s = base_spec();
        s.perturbation = perts[i];
        s.p = 200;
        s.G = 0.3;
        s.steps = 4;
        s.eta = 0.1;
        s.init = HDP_NC_INIT_GAUSSIAN;
        s.init_std = 0.1;
        s.draws = 100;
        hdp_nc_result res;
        run(&s, 0, &res);
        assert_true(res.clipped_fraction > 0.5);
        assert_true(res.max_clipped_norm <= s.G * (1 + 1e-12));
        assert_rel(res.max_clipped_norm, s.G, 1e-12, 0);
    }
}

/* The same numbers for any thread count (one stream per draw, serial reduction). */
static void threads_do_not_matter(void **state)
{
    (void)state;
    const hdp_nc_perturbation_kind perts[] = {HDP_NC_PERT_PER_SAMPLE, HDP_NC_PERT_STOCHASTIC};
    for (int i = 0; i < 2; i++) {
        hdp_nc_spec s = base_spec();
        s.perturbation = perts[i];
        s.remedy = i ? HDP_NC_REMEDY_PCA : HDP_NC_REMEDY_NONE;
        s.p = 300;
        s.steps = 2;
        s.draws = 60;
        hdp_nc_result a, b;
        run(&s, 1, &a);
        run(&s, 3, &b);
        assert_true(a.error_mean == b.error_mean);
        assert_true(a.error_stderr == b.error_stderr);
        assert_true(a.max_clipped_norm == b.max_clipped_norm);
    }
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

/* Bad specs and models: HDP_EINPUT naming the key (and where it was set). */
static void bad_input_names_the_key(void **state)
{
    (void)state;
    hdp_nc_spec s = base_spec();
    s.p = 5;
    expect_spec_error(s, "[nc] p: p = 5 is smaller than K = 10");
    s = base_spec();
    s.loss = HDP_NC_LOGISTIC;
    expect_spec_error(s, "[nc] loss:");
    s = base_spec();
    s.batch = 251;
    expect_spec_error(s, "[nc] batch:");
    s = base_spec();
    s.n = 12;
    s.imbalance = 0.95;
    expect_spec_error(s, "[nc] imbalance:");
    s = base_spec();
    s.remedy = HDP_NC_REMEDY_PCA;
    s.public_samples = 5;
    expect_spec_error(s, "[nc] public_samples:");
    s = base_spec();
    s.rho = 0;
    expect_spec_error(s, "[nc] rho:");
    /* a spec built in code meets the schema's ranges, the same as a model file's (issue 30) */
    s = base_spec();
    s.K = 1;
    expect_spec_error(s, "[nc] K: K = 1 is out of range: expected an integer >= 2 and <= 1000");
    s = base_spec();
    s.p = 20000000;
    expect_spec_error(s, "[nc] p: p = 20000000 is out of range: expected an integer >= 2 and "
                         "<= 1e+07");
    s = base_spec();
    s.delta = 1;
    expect_spec_error(s, "[nc] delta: delta = 1 is out of range: expected a number > 0 and < 1");

    hdp_model m;
    make_model(&m, "nc.K=4", "nc.p=3", NULL);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_nc_spec t;
    assert_int_equal(hdp_nc_spec_from_model(&m, &t, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "--set: [nc] p:"));
    hdp_model_free(&m);
    make_model(&m, "nc.K=2", "nc.loss=logistic", "nc.perturbation=per-sample", "nc.remedy=pca",
               NULL);
    hdp_error_clear(&err);
    assert_int_equal(hdp_nc_spec_from_model(&m, &t, &err), HDP_OK);
    assert_int_equal(t.loss, HDP_NC_LOGISTIC);
    assert_int_equal(t.perturbation, HDP_NC_PERT_PER_SAMPLE);
    assert_int_equal(t.remedy, HDP_NC_REMEDY_PCA);
    hdp_model_free(&m);
    hdp_model_init(&m);
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_set(&m, "nc.perturbation=sideways", &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[nc] perturbation = 'sideways' is not accepted"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_set(&m, "nc.G=0", &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[nc] G = 0 is out of range"));
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(etf_properties),
        cmocka_unit_test(exact_closed_forms),
        cmocka_unit_test(exact_vs_monte_carlo),
        cmocka_unit_test(flat_in_p_and_eta),
        cmocka_unit_test(clipping_bounded),
        cmocka_unit_test(threads_do_not_matter),
        cmocka_unit_test(bad_input_names_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
