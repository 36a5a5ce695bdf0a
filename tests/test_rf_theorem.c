/* test_rf_theorem.c — the privacy-for-free theorem's regime (dpgd.regime = theorem: C_clip =
 * sqrt(p) log^2 n, T = d log^2 n/(eta p); Bombari-Mondelli, Eq. 8) and the test loss's two terms
 * (its Eqs. 20-21, docs/theory.md §7.4): their closed forms against the Monte Carlo of DP-GD,
 * exactly when there is no noise, within 4 standard errors when nothing is clipped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rf.h"
#include "testutil.h"

static void build(const hdp_rf_spec *s, hdp_rf_problem *pb)
{
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_rf_problem_build(s, HDP_RF_TEST_MODES, 0, pb, &err) != HDP_OK) {
        print_error("build: %s\n", err.msg);
        fail();
    }
}

static void simulate(const hdp_rf_problem *pb, const hdp_rf_dpgd *q, long runs,
                     hdp_rf_sim_result *res)
{
    hdp_rf_sim_options o = {runs, 0, 5, NULL, NULL};
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_rf_simulate(pb, q, &o, res, &err) != HDP_OK) {
        print_error("simulate: %s\n", err.msg);
        fail();
    }
}

/* the [dpgd] section of a model with p, n, d and the given extra key */
static void dpgd_of(const char *extra, hdp_rf_dpgd *q, hdp_rf_spec *spec)
{
    hdp_model m;
    make_model(&m, "rf.p=300", "rf.n=120", "rf.d=8", "rf.test_size=150", "dpgd.regime=theorem",
               extra, NULL);
    hdp_rf_spec_from_model(&m, spec);
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_rf_dpgd_from_model(&m, spec->k.p, spec->k.n, spec->k.d, q, &err), HDP_OK);
    hdp_model_free(&m);
}

/* regime = theorem: C_clip and T as Eq. 8 sets them (eta = 1/p by default) */
static void theorem_sets_clip_and_steps(void **state)
{
    (void)state;
    hdp_rf_dpgd q;
    hdp_rf_spec spec;
    dpgd_of("dpgd.epsilon=4", &q, &spec);
    const double L2 = log(120.0) * log(120.0);
    assert_rel(q.C_clip, sqrt(300.0) * L2, 1e-15, 0);
    assert_int_equal(q.T, (long)nearbyint(8 * L2 / (q.eta * 300)));
    assert_int_equal(q.T, (long)nearbyint(8 * L2)); /* eta = 1/p */
    /* the keys the regime sets may not be given */
    const char *bad[] = {"dpgd.C=1", "dpgd.clip=3", "dpgd.T=10", "dpgd.CT=2"};
    for (int i = 0; i < 4; i++) {
        hdp_model m;
        make_model(&m, "dpgd.regime=theorem", bad[i], NULL);
        hdp_error err;
        hdp_error_clear(&err);
        hdp_rf_dpgd q2;
        assert_int_equal(hdp_rf_dpgd_from_model(&m, 300, 120, 8, &q2, &err), HDP_EINPUT);
        char want[32];
        snprintf(want, sizeof want, "[dpgd] %.*s:", (int)(strchr(bad[i], '=') - bad[i] - 5),
                 bad[i] + 5);
        if (!strstr(err.msg, want) || !strstr(err.msg, "regime = theorem")) {
            print_error("expected '%s' in '%s'\n", want, err.msg);
            fail();
        }
        hdp_model_free(&m);
    }
}

/* No noise (epsilon = inf): every run is gradient descent, the noise term is 0 and the
 * early-stopping term equals its closed form for the recursion to rounding; the OU (gradient
 * flow) value differs by O(eta lambda). */
static void terms_without_noise(void **state)
{
    (void)state;
    hdp_rf_dpgd q;
    hdp_rf_spec spec;
    dpgd_of("dpgd.epsilon=inf", &q, &spec);
    hdp_rf_problem pb;
    build(&spec, &pb);
    hdp_rf_sim_result r;
    memset(&r, 0, sizeof r);
    simulate(&pb, &q, 3, &r);
    assert_true(r.max_clipped_fraction == 0);
    /* identical runs: the variance is rounding (the mean of R equal numbers is not always one) */
    if (!(r.noise_term < 1e-25 && r.noise_term_exact == 0 && r.noise_term_ou == 0)) {
        print_error("noise %g %g %g\n", r.noise_term, r.noise_term_exact, r.noise_term_ou);
        fail();
    }
    assert_rel(r.early_stopping_term, r.early_stopping_term_exact, 1e-9, 1e-14);
    assert_rel(r.early_stopping_term_ou, r.early_stopping_term_exact, 0.05, 0);
    assert_true(r.early_stopping_term_exact > 0);
    hdp_rf_sim_result_free(&r);
    hdp_rf_problem_free(&pb);
}

/* With noise small enough that nothing is clipped, both terms' Monte Carlo values agree with
 * the closed forms of the unclipped recursion within 4 jackknife standard errors; and the
 * closed forms split the expected test loss: E loss = minnorm-loss + early + noise + cross,
 * with the cross term 2 mean_j (phi_j^T theta* - y_j)(phi_j^T (theta_hat - theta*)). */
static void terms_against_monte_carlo(void **state)
{
    (void)state;
    hdp_rf_dpgd q;
    hdp_rf_spec spec;
    dpgd_of("dpgd.epsilon=300", &q, &spec);
    hdp_rf_problem pb;
    build(&spec, &pb);
    hdp_rf_sim_result r;
    memset(&r, 0, sizeof r);
    simulate(&pb, &q, 40, &r);
    assert_true(r.max_clipped_fraction == 0);
    assert_true(r.noise_term_exact > 0.05); /* the noise is not negligible */
    if (!(fabs(r.noise_term - r.noise_term_exact) <= 4 * r.noise_term_stderr) ||
        !(fabs(r.early_stopping_term - r.early_stopping_term_exact) <=
          4 * r.early_stopping_term_stderr)) {
        print_error("noise %g +- %g vs %g; early stopping %g +- %g vs %g\n", r.noise_term,
                    r.noise_term_stderr, r.noise_term_exact, r.early_stopping_term,
                    r.early_stopping_term_stderr, r.early_stopping_term_exact);
        fail();
    }
    double test_ou;
    hdp_rf_expected_loss(&pb, q.eta, q.s, q.tau, 0, &test_ou, NULL);
    const long m = pb.spec.k.test_size, k = pb.r;
    double cross = 0;
    for (long j = 0; j < m; j++) {
        double fs = 0, e = 0;
        for (long i = 0; i < k; i++) {
            fs += pb.G[j * k + i] * pb.beta[i];
            e += pb.G[j * k + i] * pb.beta[i] * -exp(-pb.lambda[i] * q.tau);
        }
        cross += 2 * (fs - pb.y_test[j]) * e / (double)m;
    }
    assert_rel(pb.minnorm_test + r.early_stopping_term_ou + r.noise_term_ou + cross, test_ou,
               1e-10, 0);
    hdp_rf_sim_result_free(&r);
    hdp_rf_problem_free(&pb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(theorem_sets_clip_and_steps),
        cmocka_unit_test(terms_without_noise),
        cmocka_unit_test(terms_against_monte_carlo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
