/* test_kl_lemma32.c — Ye et al.'s Lemma 3.2 (docs/theory.md §8.1): the general KL bound with its
 * term exponential in T, against a value computed by hand (30 digits) at a small case, its
 * small-T series and its log10 past the overflow; along a noisy-GD run on the linearised
 * network, its inputs against the problem's own quantities and the bound above the exact KL. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/kl.h"
#include "testutil.h"

static void check_ok(hdp_status st, const hdp_error *err)
{
    if (st != HDP_OK) {
        print_error("unexpected error: %s\n", err->msg);
        fail();
    }
}

/* T = 0.5, n = 11, sigma = 0.2, diff0 = 0.02, grad0 = 0.3, beta = 1.5, rank 10, c_ns = 0.1,
 * c = 4: x = 4.25, I = (0.3 + 0.8 + 0.01) ((e^2.125 - 1)/4.25 - 0.5)/4.25; by mpmath at 30
 * digits: bound 0.490313120459455875..., exponential part 0.362813120459455875... */
static void hand_value(void **state)
{
    (void)state;
    double e;
    double b = hdp_kl_lemma32(0.5, 11, 0.2, 0.02, 0.3, 1.5, 10, 0.1, 4, &e);
    assert_rel(b, 0.490313120459455875, 1e-14, 0);
    assert_rel(e, 0.362813120459455875, 1e-14, 0);
    /* the linear part alone: 2 T diff0 + 8 c_ns^2 T/(n-1)^2 over c sigma^2 */
    assert_rel(b - e, (2 * 0.5 * 0.02 + 8 * 0.01 * 0.5 / 100) / (4 * 0.04), 1e-13, 0);
    /* T = 0: nothing */
    assert_true(hdp_kl_lemma32(0, 11, 0.2, 0.02, 0.3, 1.5, 10, 0.1, 4, &e) == 0 && e == 0);
}

/* Small x T: the series branch (x T < 1e-4) meets the direct formula, and the exponential part
 * is o(T): (exp part)/T -> 0 as T -> 0 while the linear part stays proportional to T. */
static void small_time(void **state)
{
    (void)state;
    const double beta = 3, x = 2 + beta * beta;
    double e1, e2;
    double T1 = 0.99999e-4 / x, T2 = 1.00001e-4 / x; /* either side of the switch */
    hdp_kl_lemma32(T1, 20, 0.1, 0.01, 1, beta, 5, 0, 4, &e1);
    hdp_kl_lemma32(T2, 20, 0.1, 0.01, 1, beta, 5, 0, 4, &e2);
    assert_rel(e2 / e1, (T2 * T2) / (T1 * T1), 1e-4, 0); /* x T^2/2 to first order */
    double ea, eb;
    double la = hdp_kl_lemma32(1e-3, 20, 0.1, 0.01, 1, beta, 5, 0, 4, &ea) - ea;
    double lb = hdp_kl_lemma32(1e-4, 20, 0.1, 0.01, 1, beta, 5, 0, 4, &eb) - eb;
    assert_rel(la / lb, 10, 1e-12, 0);
    assert_true(eb / 1e-4 < ea / 1e-3 / 5);
}

/* log10 of the bound: log10(bound) where it is finite; past the overflow it keeps growing at
 * the rate x T log10(e). */
static void log10_past_overflow(void **state)
{
    (void)state;
    const double beta = 10, x = 2 + beta * beta;
    const double T0 = 690.0 / x, T1 = 720.0 / x; /* e^690 finite, e^720 overflows */
    double e, b0 = hdp_kl_lemma32(T0, 50, 0.1, 0.01, 2, beta, 30, 0, 4, &e);
    assert_true(isfinite(b0));
    assert_rel(hdp_kl_lemma32_log10(T0, 50, 0.1, 0.01, 2, beta, 30, 0, 4), log10(b0), 1e-13, 0);
    assert_true(isinf(hdp_kl_lemma32(T1, 50, 0.1, 0.01, 2, beta, 30, 0, 4, &e)));
    double l1 = hdp_kl_lemma32_log10(T1, 50, 0.1, 0.01, 2, beta, 30, 0, 4);
    assert_rel(l1 - log10(b0), 30.0 / log(10.0), 1e-10, 0);
}

/* Along a run (squared loss, linearised network, He, 2 initialisations): grad0, beta, the
 * rank and diff0 are the problems' own; the bound lies above the exact KL at every epoch and
 * its linear part at epoch 1 is twice the KL there (2 T diff0 against T diff0). */
static void along_a_run(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_kl_spec s;
    memset(&s, 0, sizeof s);
    hdp_kl_arch a = {HDP_KL_LECUN, 3, 8, 16, 1};
    s.arch = a;
    s.n = 9;
    s.loss = HDP_KL_SQUARED;
    s.sigma = 0.3;
    s.eta = 0.002;
    s.epochs = 30;
    s.runs = 8;
    s.inits = 2;
    s.seed = 5;
    hdp_kl_run_result r;
    check_ok(hdp_kl_run(&s, 1, &r, &err), &err);
    double *X = malloc(sizeof(double) * 9 * 8), *Y = malloc(sizeof(double) * 9);
    check_ok(hdp_kl_data(&s, X, Y, &err), &err);
    double g0 = 0, jmax = 0, rank = 0, d0 = 0;
    for (long i = 0; i < s.inits; i++) {
        hdp_kl_problem pb;
        check_ok(hdp_kl_problem_build(&s, X, Y, i, &pb, &err), &err);
        double q[9], g = 0;
        for (long t = 0; t < 9; t++) q[t] = pb.f0[t] - pb.y[t];
        for (long t = 0; t < 9; t++)
            for (long u = 0; u < 9; u++) g += q[t] * pb.K[t * 9 + u] * q[u];
        g0 += g / 81 / (double)s.inits;
        for (long t = 0; t < 9; t++) jmax = fmax(jmax, pb.K[t * 9 + t]);
        rank = fmax(rank, (double)pb.r);
        double ex[9]; /* E||Delta_0||^2 of every j, exactly */
        check_ok(hdp_kl_problem_exact(&pb, s.eta, s.sigma, 1, ex, &err), &err);
        d0 += ex[r.worst] / (double)s.inits;
        hdp_kl_problem_free(&pb);
    }
    free(X);
    free(Y);
    assert_rel(r.lemma32_grad0, g0, 1e-12, 0);
    assert_rel(r.lemma32_beta, jmax, 1e-15, 0);
    assert_true(r.lemma32_rank == rank);
    assert_rel(r.lemma32_diff0, d0, 1e-10, 0);
    for (long k = 1; k <= s.epochs; k++) {
        assert_true(r.lemma32_bound[k] >= r.kl_exact[k]);
        assert_true(r.lemma32_exp[k] >= 0 && r.lemma32_exp[k] <= r.lemma32_bound[k]);
        assert_rel(r.lemma32_log10[k], log10(r.lemma32_bound[k]), 1e-12, 0);
    }
    assert_rel(r.lemma32_bound[1] - r.lemma32_exp[1], 2 * r.kl_exact[1], 1e-10, 0);
    hdp_kl_run_result_free(&r);
    /* the real network has no smoothness constant: no bound */
    s.network = HDP_KL_RELU;
    s.runs = 2;
    s.epochs = 3;
    check_ok(hdp_kl_run(&s, 1, &r, &err), &err);
    assert_true(isnan(r.lemma32_bound[3]) && isnan(r.lemma32_beta));
    hdp_kl_run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_value),
        cmocka_unit_test(small_time),
        cmocka_unit_test(log10_past_overflow),
        cmocka_unit_test(along_a_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
