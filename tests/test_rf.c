/*
 * test_rf.c — DP-GD on random features and its OU limit (docs/theory.md §6, §7; rf.c).
 *
 * Exact checks first: without noise and clipping DP-GD is gradient descent, whose
 * mode coefficients are (1 - (1 - eta lambda_k)^k) beta_k; without clipping DP-GD and
 * the Euler-Maruyama OU path driven by the same increments are the same recursion; the
 * mode-space DP-GD of the experiments retraces the R^p one when fed the same noise; the
 * min-norm interpolator interpolates (p > n) or solves least squares (p < n). Then
 * statistical checks with tolerances from the standard error: the exact-OU-step process
 * against the closed form, and DP-GD against the closed form of its own recursion.
 * The validation set of rf-experiment: disjoint from the training and test data (its own
 * streams: adding it changes no training or test number, and no row of it is a row of
 * either), the same samples at every p; rf-experiment selects on it.
 * A data set's rows as the inputs (docs/theory.md §7.5): its labels, the held-out split.
 */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rf.h"
#include "hdpsgd/rfexp.h"
#include "testutil.h"

/* a small over-parameterised problem: p = 2.5 n */
static hdp_rf_spec small_spec(long p)
{
    hdp_rf_spec s = {.k = {.d = 10, .n = 60, .p = p, .test_size = 50, .activation = HDP_RF_TANH,
                           .target = HDP_RF_SIGN},
                     .seed = 7};
    return s;
}

static void build(const hdp_rf_spec *s, int threads, hdp_rf_problem *pb)
{
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_rf_problem_build(s, HDP_RF_TEST_MODES, threads, pb, &err) != HDP_OK) {
        print_error("build: %s\n", err.msg);
        fail();
    }
}

/* hyperparameters by hand: noise scale s given directly through sigma */
static hdp_rf_dpgd params(const hdp_rf_problem *pb, double eta, long T, double C_clip, double s)
{
    hdp_rf_dpgd q;
    memset(&q, 0, sizeof q);
    q.eta = eta;
    q.T = T;
    q.C_clip = C_clip;
    q.delta = 1.0 / (double)pb->spec.k.n;
    q.epsilon = INFINITY;
    q.sigma = s > 0 ? s * (double)pb->spec.k.n / (2.0 * C_clip) : 0.0;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_rf_dpgd_calibrate(&q, pb->spec.k.n, &err), HDP_OK);
    assert_rel(q.s, s, 1e-14, 1e-300);
    return q;
}

static void simulate(const hdp_rf_problem *pb, const hdp_rf_dpgd *q, long runs, int threads,
                     long records, hdp_rf_sim_result *res)
{
    hdp_rf_sim_options o = {runs, threads, records, NULL, NULL};
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_rf_simulate(pb, q, &o, res, &err) != HDP_OK) {
        print_error("simulate: %s\n", err.msg);
        fail();
    }
}

/* sigma = 0, no clipping: DP-GD is gradient descent, equal to the discretised closed
 * form at every recorded step; the OU mean (gradient flow) at tau = eta T is its
 * eta -> 0 limit, with a first-order error. */
static void gd_equals_discretised_closed_form(void **state)
{
    (void)state;
    hdp_rf_spec s = small_spec(150);
    hdp_rf_problem pb;
    build(&s, 1, &pb);
    double eta = 0.2 / pb.lambda[0]; /* eta lambda_max = 0.2 */
    hdp_rf_dpgd q = params(&pb, eta, 400, INFINITY, 0.0);
    hdp_rf_sim_result res;
    simulate(&pb, &q, 1, 1, 400, &res);
    assert_int_equal(res.points, 401);
    double worst = 0;
    for (long i = 0; i < res.points; i++) {
        double test, train;
        hdp_rf_expected_loss(&pb, eta, 0.0, res.tau[i], 1, &test, &train);
        worst = fmax(worst, fabs(res.dpgd_test[i] - test) / test);
        worst = fmax(worst, fabs(res.dpgd_train[i] - train) / train);
        assert_rel(res.dpgd_test[i], test, 1e-10, 0);
        assert_rel(res.dpgd_train[i], train, 1e-10, 0);
        assert_true(res.clipped[i] == 0);
    }
    print_message("GD vs (1 - eta lambda)^k closed form: max relative difference %.2e\n", worst);
    /* the same through the mode coefficients (1 - (1 - eta lambda_k)^T) beta_k */
    double *c = malloc(sizeof(double) * (size_t)pb.r);
    for (long k = 0; k < pb.r; k++)
        c[k] = (1.0 - pow(1.0 - eta * pb.lambda[k], (double)q.T)) * pb.beta[k];
    double test, train;
    hdp_rf_modes_loss(&pb, c, &test, &train);
    assert_rel(res.dpgd_test[res.points - 1], test, 1e-10, 0);
    assert_rel(res.dpgd_train[res.points - 1], train, 1e-10, 0);
    free(c);
    /* OU mean vs discretised: first order in eta at fixed tau */
    double tau = q.tau, cont, d1, d2;
    hdp_rf_expected_loss(&pb, eta, 0.0, tau, 0, &cont, NULL);
    hdp_rf_expected_loss(&pb, eta, 0.0, tau, 1, &d1, NULL);
    hdp_rf_expected_loss(&pb, eta / 2, 0.0, tau, 1, &d2, NULL);
    double ratio = fabs(d1 - cont) / fabs(d2 - cont);
    print_message("gradient flow vs GD at tau = %g: %.3e (eta), %.3e (eta/2), ratio %.3f\n", tau,
                  fabs(d1 - cont), fabs(d2 - cont), ratio);
    assert_true(ratio > 1.8 && ratio < 2.2);
    assert_true(fabs(d1 - cont) < 0.2 * cont); /* eta lambda_max = 0.2 */
    hdp_rf_sim_result_free(&res);
    hdp_rf_problem_free(&pb);
}

/* No clipping: DP-GD and Euler-Maruyama of the OU process with the same increments are
 * one recursion (docs/theory.md §7), identical to rounding. */
static void unclipped_dpgd_is_euler_maruyama(void **state)
{
    (void)state;
    hdp_rf_spec s = small_spec(150);
    hdp_rf_problem pb;
    build(&s, 1, &pb);
    double eta = 0.1 / pb.lambda[0];
    hdp_rf_dpgd q = params(&pb, eta, 300, 1e9, 0.05);
    hdp_rf_sim_result res;
    simulate(&pb, &q, 4, 2, 30, &res);
    assert_true(res.max_clipped_fraction == 0);
    double rel = res.strong_error_em_max / res.theta_norm_max;
    print_message("sup ||theta_DPGD - theta_EM|| / sup ||theta|| = %.2e; sup ||theta_DPGD - "
                  "theta_OU(exact step)|| = %.3g (mean over runs)\n", rel, res.strong_error_mean);
    assert_true(rel < 1e-12);
    for (long i = 0; i < res.points; i++)
        assert_rel(res.em_test[i], res.dpgd_test[i], 1e-11, 0);
    /* the coupling with the exact OU step: a discretisation error of order eta lambda */
    assert_true(res.strong_error_max > 0 && res.strong_error_max < 0.2 * res.theta_norm_max);
    hdp_rf_sim_result_free(&res);
    hdp_rf_problem_free(&pb);
}

/* The exact OU step is exact in law at the grid times: its Monte Carlo mean test loss
 * matches the closed form within 4 standard errors; DP-GD (unclipped) matches the
 * closed form of its own recursion (the EM expectation) within 4 standard errors. */
static void ou_closed_form_matches_monte_carlo(void **state)
{
    (void)state;
    hdp_rf_spec s = small_spec(150);
    hdp_rf_problem pb;
    build(&s, 2, &pb);
    double eta = 0.05 / pb.lambda[0];
    /* s large enough that the noise term is a visible part of the test loss */
    hdp_rf_dpgd q = params(&pb, eta, 400, 1e9, 0.12);
    hdp_rf_sim_result res;
    simulate(&pb, &q, 200, 2, 4, &res);
    double gf_final = res.gf_test[res.points - 1], ou_final = res.ou_test[res.points - 1];
    print_message("final: closed form %.6f (gradient flow %.6f), exact step %.6f +- %.6f, "
                  "EM expected %.6f, DP-GD %.6f +- %.6f\n", ou_final, gf_final,
                  res.ex_test[res.points - 1], res.ex_test_se[res.points - 1],
                  res.em_expected_test[res.points - 1], res.dpgd_test[res.points - 1],
                  res.dpgd_test_se[res.points - 1]);
    assert_true(ou_final - gf_final > 0.1 * ou_final); /* the noise matters */
    for (long i = 1; i < res.points; i++) {
        double z1 = (res.ex_test[i] - res.ou_test[i]) / res.ex_test_se[i];
        double z2 = (res.dpgd_test[i] - res.em_expected_test[i]) / res.dpgd_test_se[i];
        print_message("  step %ld: z(exact step vs OU) = %+.2f, z(DP-GD vs EM closed form) = "
                      "%+.2f\n", res.step[i], z1, z2);
        assert_true(fabs(z1) < 4);
        assert_true(fabs(z2) < 4);
    }
    hdp_rf_sim_result_free(&res);
    hdp_rf_problem_free(&pb);
}

/* The experiments' DP-GD in mode coordinates, fed the same p-dimensional noise, retraces
 * DP-GD in R^p, clipping included; with its own noise it gives the same law. */
static void mode_space_dpgd_retraces_dpgd(void **state)
{
    (void)state;
    for (int pcase = 0; pcase < 2; pcase++) {
        hdp_rf_spec s = small_spec(pcase ? 150 : 40);
        hdp_rf_problem pb;
        build(&s, 1, &pb);
        double eta = 0.2 / pb.lambda[0];
        hdp_rf_dpgd q = params(&pb, eta, 120, 0.5 * sqrt((double)s.k.p), 0.02);
        hdp_rf_sim_result res;
        simulate(&pb, &q, 1, 1, 1, &res);
        hdp_rf_config cf = {q.eta, q.T, q.C_clip, q.s, 1, 1, 0, 0, 0, 0, 0};
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_rf_dpgd_final(&pb, &cf, 1, 1, NULL, NULL, &err), HDP_OK);
        print_message("p = %ld: R^p DP-GD test %.15g train %.15g; mode space %.15g %.15g; "
                      "clipped %.3f\n", s.k.p, res.dpgd_test[1], res.dpgd_train[1], cf.test_loss,
                      cf.train_loss, cf.clipped_mean);
        assert_true(cf.clipped_mean > 0.05); /* clipping is active */
        assert_rel(cf.test_loss, res.dpgd_test[1], 1e-9, 0);
        assert_rel(cf.train_loss, res.dpgd_train[1], 1e-9, 0);
        hdp_rf_sim_result_free(&res);
        hdp_rf_problem_free(&pb);
    }
}

/* Clipped fraction: 0 for a huge C_clip, and it rises as C_clip falls. */
static void clipped_fraction_monotone(void **state)
{
    (void)state;
    hdp_rf_spec s = small_spec(150);
    hdp_rf_problem pb;
    build(&s, 1, &pb);
    double Cs[] = {1e6, 1.0, 0.5, 0.2, 0.05}, eta = 0.2 / pb.lambda[0], sp = sqrt((double)s.k.p);
    hdp_rf_config cf[5];
    for (int i = 0; i < 5; i++)
        cf[i] = (hdp_rf_config){eta, 100, Cs[i] * sp, 0.01, 3, 0, 0, 0, 0, 0, 0};
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_rf_dpgd_final(&pb, cf, 5, 2, NULL, NULL, &err), HDP_OK);
    for (int i = 0; i < 5; i++)
        print_message("C = %g: clipped fraction %.4f (max %.4f), test loss %.4f\n", Cs[i],
                      cf[i].clipped_mean, cf[i].clipped_max, cf[i].test_loss);
    assert_true(cf[0].clipped_mean == 0 && cf[0].clipped_max == 0);
    for (int i = 1; i < 5; i++)
        assert_true(i == 1 ? cf[i].clipped_mean >= cf[i - 1].clipped_mean
                           : cf[i].clipped_mean > cf[i - 1].clipped_mean);
    assert_true(cf[4].clipped_mean > 0.9);
    hdp_rf_problem_free(&pb);
}

/* The min-norm interpolator: train loss ~ 0 for p > n; the least-squares solution for p < n. */
static void minnorm_interpolates(void **state)
{
    (void)state;
    hdp_rf_spec s = small_spec(150);
    hdp_rf_problem pb;
    build(&s, 1, &pb);
    print_message("p = %ld > n = %ld: train loss %.3e (theta = 0: %.3f), test %.4f\n", s.k.p, s.k.n,
                  pb.minnorm_train, pb.zero_train, pb.minnorm_test);
    assert_true(pb.minnorm_train < 1e-20 * pb.zero_train);
    assert_int_equal(pb.r, s.k.n);
    hdp_rf_problem_free(&pb);
    /* p < n: compare with LAPACK's least squares (dgels) */
    s = small_spec(40);
    build(&s, 1, &pb);
    long n = s.k.n, p = s.k.p;
    double *A = malloc(sizeof(double) * (size_t)(n * p)), *b = malloc(sizeof(double) * (size_t)n);
    memcpy(A, pb.Phi, sizeof(double) * (size_t)(n * p));
    memcpy(b, pb.y, sizeof(double) * (size_t)n);
    assert_int_equal(LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', (lapack_int)n, (lapack_int)p, 1, A,
                                   (lapack_int)p, b, 1), 0);
    double train = 0;
    for (long i = 0; i < n; i++) {
        double f = 0;
        for (long j = 0; j < p; j++)
            f += pb.Phi[i * p + j] * b[j];
        train += (f - pb.y[i]) * (f - pb.y[i]);
    }
    train /= (double)n;
    print_message("p = %ld < n: least-squares train loss %.10f (dgels %.10f)\n", p,
                  pb.minnorm_train, train);
    assert_rel(pb.minnorm_train, train, 1e-10, 0);
    assert_int_equal(pb.r, p);
    free(A);
    free(b);
    hdp_rf_problem_free(&pb);
}

/* Results do not depend on the number of threads (blocked products, per-run streams). */
static void threads_do_not_change_results(void **state)
{
    (void)state;
    hdp_rf_spec s = {.k = {.d = 12, .n = 300, .p = 700, .test_size = 200, .activation = HDP_RF_TANH,
                           .target = HDP_RF_SIGN, .label_noise = 0.1},
                     .seed = 3};
    hdp_rf_problem a, b;
    build(&s, 1, &a);
    build(&s, 2, &b);
    assert_int_equal(a.r, b.r);
    assert_memory_equal(a.U, b.U, sizeof(double) * (size_t)(s.k.n * a.r));
    assert_memory_equal(a.G, b.G, sizeof(double) * (size_t)(s.k.test_size * a.r));
    assert_memory_equal(a.Phi, b.Phi, sizeof(double) * (size_t)(s.k.n * s.k.p));
    assert_true(a.minnorm_test == b.minnorm_test);
    hdp_rf_dpgd q = params(&a, 1.0 / (double)s.k.p, 30, 0.5 * sqrt((double)s.k.p), 0.05);
    hdp_rf_sim_result r1, r2;
    simulate(&a, &q, 3, 1, 5, &r1);
    simulate(&a, &q, 3, 2, 5, &r2);
    assert_memory_equal(r1.dpgd_test, r2.dpgd_test, sizeof(double) * (size_t)r1.points);
    assert_memory_equal(r1.ex_test, r2.ex_test, sizeof(double) * (size_t)r1.points);
    assert_true(r1.strong_error_max == r2.strong_error_max);
    hdp_rf_sim_result_free(&r1);
    hdp_rf_sim_result_free(&r2);
    hdp_rf_config c1[3], c2[3];
    for (int i = 0; i < 3; i++)
        c1[i] = c2[i] = (hdp_rf_config){q.eta, 10 + 7 * i, q.C_clip, q.s, 5 + i, 0, 0, 0, 0, 0, 0};
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_rf_dpgd_final(&a, c1, 3, 1, NULL, NULL, &err), HDP_OK);
    assert_int_equal(hdp_rf_dpgd_final(&b, c2, 3, 2, NULL, NULL, &err), HDP_OK);
    for (int i = 0; i < 3; i++)
        assert_true(c1[i].test_loss == c2[i].test_loss && c1[i].train_loss == c2[i].train_loss);
    hdp_rf_problem_free(&a);
    hdp_rf_problem_free(&b);
}

/* Privacy calibration (docs/theory.md §6) and the [dpgd] keys. */
static void calibration_and_keys(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    make_model(&m, "rf.p=400", "rf.n=200", "rf.d=20", NULL);
    const hdp_rf_keys *rk = hdp_rf_keys_of(&m);
    hdp_rf_dpgd q;
    assert_int_equal(hdp_rf_dpgd_from_model(&m, rk->p, rk->n, rk->d, &q, &err), HDP_OK);
    /* defaults: eta = 1/p, T = CT d/(eta p) = d, C_clip = 0.5 sqrt(p), delta = 1/n,
     * Bombari-Mondelli */
    assert_rel(q.eta, 1.0 / 400, 1e-15, 0);
    assert_int_equal(q.T, 20);
    assert_rel(q.C_clip, 10.0, 1e-15, 0);
    assert_rel(q.delta, 1.0 / 200, 1e-15, 0);
    assert_int_equal(q.route, HDP_RF_SIGMA_SIMPLE);
    assert_rel(q.sigma, sqrt(q.eta * 20) * sqrt(8 * log(200.0)) / 4, 1e-14, 0);
    assert_rel(q.s, 2 * q.C_clip * q.sigma / 200, 1e-14, 0);
    assert_true(q.epsilon_cks < 4); /* Bombari-Mondelli's bound is looser than CKS */
    hdp_model_free(&m);
    /* epsilon beyond 8 ln(1/delta): the zCDP route meets epsilon exactly (CKS) */
    make_model(&m, "rf.n=200", "dpgd.epsilon=60", NULL);
    assert_int_equal(hdp_rf_dpgd_from_model(&m, rk->p, rk->n, rk->d, &q, &err), HDP_OK);
    assert_int_equal(q.route, HDP_RF_SIGMA_ZCDP);
    assert_rel(hdp_zcdp_epsilon_cks(q.eta * (double)q.T / (2 * q.sigma * q.sigma), q.delta), 60,
               1e-6, 0);
    hdp_model_free(&m);
    make_model(&m, "dpgd.epsilon=inf", "dpgd.C=inf", NULL);
    assert_int_equal(hdp_rf_dpgd_from_model(&m, rk->p, rk->n, rk->d, &q, &err), HDP_OK);
    assert_int_equal(q.route, HDP_RF_SIGMA_NONE);
    assert_true(q.s == 0 && isinf(q.C_clip));
    hdp_model_free(&m);
    /* inconsistent keys name the key */
    const char *bad[][3] = {
        {"dpgd.T=10", "dpgd.CT=2", "[dpgd] T: give T or CT"},
        {"dpgd.C=1", "dpgd.clip=3", "[dpgd] clip: give C"},
        {"dpgd.sigma=2", "dpgd.epsilon=1", "[dpgd] sigma:"},
        {"dpgd.C=inf", "dpgd.epsilon=4", "[dpgd] C: C_clip = inf"},
        {"dpgd.CT=1e-5", "rf.p=400", "[dpgd] CT: CT = 1e-05 gives T"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_model(&m, bad[i][0], bad[i][1], NULL);
        hdp_error_clear(&err);
        assert_int_equal(hdp_rf_dpgd_from_model(&m, rk->p, rk->n, rk->d, &q, &err), HDP_EINPUT);
        if (!strstr(err.msg, bad[i][2])) {
            print_error("expected '%s' in '%s'\n", bad[i][2], err.msg);
            fail();
        }
        assert_non_null(strstr(err.msg, "--set"));
        hdp_model_free(&m);
    }
}

/* rows of A [ra x p] and B [rb x p] that are equal (exactly) */
static long equal_rows(const double *A, long ra, const double *B, long rb, long p)
{
    long eq = 0;
    for (long i = 0; i < ra; i++)
        for (long j = 0; j < rb; j++)
            if (!memcmp(A + i * p, B + j * p, sizeof(double) * (size_t)p))
                eq++;
    return eq;
}

static void validation_set_is_disjoint(void **state)
{
    (void)state;
    hdp_rf_spec s = small_spec(150);
    s.k.label_noise = 0.1;
    s.v = s.k.test_size; /* as large as the test set */
    hdp_rf_problem a, b, c;
    hdp_error err;
    assert_int_equal(hdp_rf_problem_build(&s, HDP_RF_TEST_MODES, 1, &a, &err), HDP_OK);
    assert_int_equal(hdp_rf_problem_build(&s, HDP_RF_TEST_MODES | HDP_RF_VALIDATION, 1, &b, &err),
                     HDP_OK);
    assert_null(a.Phi_val);
    assert_non_null(b.Phi_val);
    const long n = s.k.n, m = s.k.test_size, p = s.k.p, v = s.v;
    /* drawing it consumes nothing of the data's streams: training and test unchanged */
    assert_memory_equal(a.Phi, b.Phi, sizeof(double) * (size_t)(n * p));
    assert_memory_equal(a.Phi_test, b.Phi_test, sizeof(double) * (size_t)(m * p));
    assert_memory_equal(a.y, b.y, sizeof(double) * (size_t)n);
    assert_memory_equal(a.y_test, b.y_test, sizeof(double) * (size_t)m);
    assert_true(a.minnorm_test == b.minnorm_test);
    /* disjoint: no validation sample is a test or a training sample */
    assert_int_equal(equal_rows(b.Phi_val, v, b.Phi_test, m, p), 0);
    assert_int_equal(equal_rows(b.Phi_val, v, b.Phi, n, p), 0);
    assert_int_equal(equal_rows(b.Phi_val, v, b.Phi_val, v, p), v); /* only itself */
    long same_y = 0;
    for (long i = 0; i < v; i++)
        for (long j = 0; j < m; j++)
            same_y += b.y_val[i] == b.y_test[j];
    assert_int_equal(same_y, 0); /* labels with continuous noise: never equal */
    /* the same samples at every p: V's first rows are shared, so are the features' columns */
    hdp_rf_spec s2 = s;
    s2.k.p = 90;
    assert_int_equal(hdp_rf_problem_build(&s2, HDP_RF_VALIDATION, 1, &c, &err), HDP_OK);
    for (long i = 0; i < v; i++) {
        assert_true(c.y_val[i] == b.y_val[i]);
        assert_memory_equal(c.Phi_val + i * 90, b.Phi_val + i * p, sizeof(double) * 90);
    }
    /* a loss on it: the configurations report it */
    hdp_rf_dpgd q = params(&b, 1.0 / (double)p, 50, 1.0, 0.01);
    hdp_rf_config cf = {q.eta, q.T, q.C_clip, q.s, 1, 0, 0, 0, 0, 0, 0};
    assert_int_equal(hdp_rf_dpgd_final(&b, &cf, 1, 1, NULL, NULL, &err), HDP_OK);
    assert_true(isfinite(cf.val_loss) && cf.val_loss > 0 && cf.val_loss != cf.test_loss);
    hdp_rf_config cf2 = {q.eta, q.T, q.C_clip, q.s, 1, 0, 0, 0, 0, 0, 0};
    assert_int_equal(hdp_rf_dpgd_final(&a, &cf2, 1, 1, NULL, NULL, &err), HDP_OK);
    assert_true(isnan(cf2.val_loss) && cf2.test_loss == cf.test_loss);
    hdp_rf_problem_free(&a);
    hdp_rf_problem_free(&b);
    hdp_rf_problem_free(&c);
}

/* rf-experiment selects the configuration of lowest validation loss (hdpsgd/rfexp.h) */
static void experiment_selects_on_validation(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_model_init(&m);
    const char *keys[] = {"rf.d=10", "rf.n=50", "rf.test_size=50", "rf.val_size=30", "sim.seed=3"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_int_equal(hdp_model_set(&m, keys[i], &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_OK);
    hdp_rfexp v, t;
    assert_int_equal(hdp_rfexp_run_select(&m, HDP_RFEXP_P1, 0, 1, HDP_RFEXP_SELECT_VALIDATION, 1,
                                          NULL, NULL, NULL, NULL, &v, &err), HDP_OK);
    assert_int_equal(hdp_rfexp_run_select(&m, HDP_RFEXP_P1, 0, 1, HDP_RFEXP_SELECT_TEST, 1, NULL,
                                          NULL, NULL, NULL, &t, &err), HDP_OK);
    assert_int_equal(v.val_size, 30);
    long differ = 0;
    for (int i = 0; i < v.np; i++) {
        const hdp_rfexp_point *pv = &v.points[i], *pt = &t.points[i];
        const long ncfg = (long)v.nC * v.nCT;
        for (long j = 0; j < ncfg; j++) {
            assert_true(pv->cfg[pv->best].val <= pv->cfg[j].val);
            assert_true(pt->cfg[pt->best].test <= pt->cfg[j].test);
            /* the same runs either way: only the choice differs */
            assert_true(pv->cfg[j].test == pt->cfg[j].test && pv->cfg[j].val == pt->cfg[j].val);
        }
        assert_int_equal(pt->best, pt->best_test);
        assert_int_equal(pv->best_test, pt->best_test);
        differ += pv->best != pt->best;
    }
    fprintf(stderr, "    %ld of %d p choose differently on validation than on test\n", differ,
            v.np);
    assert_true(differ > 0); /* at these sizes the two sets disagree somewhere */
    hdp_rfexp_free(&v);
    hdp_rfexp_free(&t);
    hdp_model_free(&m);
}

/* A model on arrays in memory (data.source = file): N x 5 rows with labels y_i = i (distinct,
 * so that a label names its row), and a held-out set of 10 rows when held_out. */
static void data_model(hdp_model *m, long N, int held_out, int labels, const char *extra)
{
    hdp_error err;
    hdp_error_clear(&err);
    double X[60 * 5], y[60], Xt[10 * 5], yt[10];
    for (long i = 0; i < N * 5; i++)
        X[i] = sin(0.37 * (double)i) + 0.1 * (double)(i % 7);
    for (long i = 0; i < N; i++)
        y[i] = (double)i;
    for (long i = 0; i < 50; i++)
        Xt[i] = cos(0.11 * (double)i);
    for (long i = 0; i < 10; i++)
        yt[i] = 0.5 * (double)i;
    hdp_model_init(m);
    assert_int_equal(hdp_model_set_data_arrays(m, X, N, 5, labels ? y : NULL, held_out ? Xt : NULL,
                                               10, held_out && labels ? yt : NULL, &err), HDP_OK);
    assert_int_equal(hdp_model_set(m, "rf.p=30", &err), HDP_OK);
    if (extra)
        assert_int_equal(hdp_model_set(m, extra, &err), HDP_OK);
    if (hdp_model_finalize(m, &err) != HDP_OK) {
        print_error("data_model: %s\n", err.msg);
        fail();
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* docs/theory.md §7.5: the inputs and labels are the data set's; without a held-out set the
 * test rows are held out from the file (the two sets partition its rows); rf.target's labels
 * on rows without labels; a spec that does not match its data set is refused. */
static void data_rows_are_the_inputs(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_rf_spec spec;
    hdp_rf_problem pb;
    data_model(&m, 60, 1, 1, NULL);
    hdp_rf_spec_from_model(&m, &spec);
    assert_int_equal(hdp_rf_spec_from_data(&m, &spec, &err), HDP_OK);
    const hdp_data *D = hdp_model_data(&m);
    assert_non_null(D);
    assert_ptr_equal(spec.data, D);
    assert_true(spec.k.d == 5 && spec.k.n == 60 && spec.k.test_size == 10 && spec.holdout == 0 &&
                spec.file_labels);
    build(&spec, 1, &pb);
    for (long i = 0; i < 60; i++)
        assert_true(pb.y[i] == D->train.y[i]); /* the labels as the data set uses them */
    for (long j = 0; j < 10; j++)
        assert_true(pb.y_test[j] == D->test_y[j]);
    hdp_rf_problem_free(&pb);
    /* a spec of other sizes than its data set's, or asking for a validation set: refused */
    hdp_rf_spec bad = spec;
    bad.k.n = 59;
    assert_int_equal(hdp_rf_problem_build(&bad, 0, 1, &pb, &err), HDP_EINPUT);
    hdp_rf_problem_free(&pb);
    assert_int_equal(hdp_rf_problem_build(&spec, HDP_RF_VALIDATION, 1, &pb, &err), HDP_EINPUT);
    hdp_rf_problem_free(&pb);
    hdp_model_free(&m);

    /* no held-out set: round(60/5) = 12 rows held out by the seed, the rest train, each row
     * in exactly one set (its centred label y_i = i - mean names it) */
    data_model(&m, 60, 0, 1, NULL);
    hdp_rf_spec_from_model(&m, &spec);
    assert_int_equal(hdp_rf_spec_from_data(&m, &spec, &err), HDP_OK);
    assert_true(spec.k.n == 48 && spec.k.test_size == 12 && spec.holdout == 12);
    build(&spec, 1, &pb);
    double all[60];
    memcpy(all, pb.y, sizeof(double) * 48);
    memcpy(all + 48, pb.y_test, sizeof(double) * 12);
    qsort(all, 60, sizeof(double), cmp_double);
    for (long i = 0; i < 60; i++)
        assert_rel(all[i], (double)i - 29.5, 1e-13, 1);
    int in_order = 1; /* both sets in file order, the held-out rows not the last 12 */
    for (long i = 1; i < 48; i++)
        in_order &= pb.y[i] > pb.y[i - 1];
    assert_true(in_order && pb.y[47] > pb.y_test[0]);
    hdp_rf_problem_free(&pb);
    hdp_model_free(&m);

    /* rows without labels: rf.target = sign on the rows */
    data_model(&m, 60, 1, 0, "rf.target=sign");
    hdp_rf_spec_from_model(&m, &spec);
    assert_int_equal(hdp_rf_spec_from_data(&m, &spec, &err), HDP_OK);
    assert_false(spec.file_labels);
    build(&spec, 1, &pb);
    for (long i = 0; i < 60; i++)
        assert_true(fabs(pb.y[i]) == 1.0);
    assert_true(pb.zero_train == 1.0 && pb.zero_test == 1.0);
    hdp_rf_problem_free(&pb);
    hdp_model_free(&m);

    /* the keys that size synthetic inputs must agree with the file */
    data_model(&m, 60, 1, 1, "rf.d=6");
    hdp_error_clear(&err);
    hdp_rf_spec_from_model(&m, &spec);
    assert_int_equal(hdp_rf_spec_from_data(&m, &spec, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[rf] d"));
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gd_equals_discretised_closed_form),
        cmocka_unit_test(unclipped_dpgd_is_euler_maruyama),
        cmocka_unit_test(ou_closed_form_matches_monte_carlo),
        cmocka_unit_test(mode_space_dpgd_retraces_dpgd),
        cmocka_unit_test(clipped_fraction_monotone),
        cmocka_unit_test(minnorm_interpolates),
        cmocka_unit_test(threads_do_not_change_results),
        cmocka_unit_test(calibration_and_keys),
        cmocka_unit_test(validation_set_is_disjoint),
        cmocka_unit_test(experiment_selects_on_validation),
        cmocka_unit_test(data_rows_are_the_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
