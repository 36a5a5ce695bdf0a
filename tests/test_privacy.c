/* test_privacy.c — accounting of docs/theory.md §6. */
#include <math.h>
#include <stdlib.h>

#include "hdpsgd/privacy.h"
#include "testutil.h"

static void reference_values(void **state)
{
    (void)state;
    double rz = 0.03125, delta = 1e-3;
    assert_rel(hdp_zcdp_epsilon_bs(rz, delta), rz + 2 * sqrt(rz * log(1 / delta)), 1e-15, 0);
    assert_rel(hdp_zcdp_epsilon_bs(rz, delta), 0.96048, 1e-5, 0);
    double e = hdp_zcdp_epsilon_cks(rz, delta);
    assert_true(fabs(e - 0.6880024554878086) < 1e-9);
    assert_true(e < hdp_zcdp_epsilon_bs(rz, delta));
}

static void calibration_inverts(void **state)
{
    (void)state;
    double eps[] = {0.1, 0.688, 1.0, 4.0, 20.0};
    double deltas[] = {1e-3, 1e-5, 1.0 / 2000};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) {
            double rz;
            hdp_error err;
            hdp_error_clear(&err);
            assert_int_equal(hdp_zcdp_from_epsilon(eps[i], deltas[j], &rz, &err), HDP_OK);
            assert_true(fabs(hdp_zcdp_epsilon_cks(rz, deltas[j]) - eps[i]) < 1e-9 * eps[i] + 1e-12);
        }
    double rz;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_zcdp_from_epsilon(-1, 0.1, &rz, &err), HDP_EINPUT);
}

/* The accountant returns rho for every schedule kind (docs/theory.md §6). */
static void accountant_returns_rho(void **state)
{
    (void)state;
    FILE *f = fopen("test_privacy_table.txt", "w");
    fprintf(f, "0 3\n0.3 3\n0.6 1\n1 0.2\n");
    fclose(f);
    const char *kinds[] = {"schedule.kind=output", "schedule.kind=linear-noise",
                           "schedule.kind=optimal", "schedule.kind=table"};
    const char *rhos[] = {"privacy.rho=0.05", "privacy.rho=0.5", "privacy.rho=7"};
    for (int k = 0; k < 4; k++)
        for (int r = 0; r < 3; r++) {
            hdp_model m;
            make_model(&m, kinds[k], rhos[r], "schedule.file=test_privacy_table.txt", NULL);
            hdp_schedule s;
            hdp_sched_from_model(&m, &s);
            double acc = hdp_privacy_accountant_schedule(&s, m.n);
            assert_rel(acc, m.rho, 1e-12, 0);
            hdp_model_free(&m);
        }
    remove("test_privacy_table.txt");
    hdp_model m;
    make_model(&m, "schedule.kind=constant", "privacy.rho=inf", "clip.c=inf", NULL);
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    assert_true(isinf(hdp_privacy_accountant_schedule(&s, m.n)));
    hdp_model_free(&m);
}

/* Full-batch DP-GD (docs/theory.md §6, Mondelli's notes and Bombari-Mondelli): rho_z = eta T/(2
 * sigma^2); Bombari-Mondelli's sigma = sqrt(eta T) sqrt(8 ln(1/delta))/epsilon and its inverse; the
 * zCDP route (CKS calibration, sigma = sqrt(eta T/(2 rho_z))) gives back epsilon and a smaller
 * sigma. */
static void dpgd(void **state)
{
    (void)state;
    double eta = 0.01, delta = 1.0 / 2000;
    long T = 1000;
    assert_rel(hdp_dpgd_rho_z(eta, T, 5.0), eta * T / (2 * 25.0), 1e-15, 0);
    assert_true(isinf(hdp_dpgd_rho_z(eta, T, 0.0)));
    double eps[] = {0.1, 1.0, 4.0, 20.0};
    for (int i = 0; i < 4; i++) {
        double s3 = hdp_dpgd_sigma_simple(eta, T, eps[i], delta);
        assert_rel(s3, sqrt(eta * T) * sqrt(8 * log(1 / delta)) / eps[i], 1e-15, 0);
        assert_rel(hdp_dpgd_epsilon_simple(eta, T, s3, delta), eps[i], 1e-14, 0);
        assert_true(hdp_dpgd_simple_applies(eps[i], delta));
        double sz, rz;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_dpgd_sigma_zcdp(eta, T, eps[i], delta, &sz, &rz, &err), HDP_OK);
        /* round trip: sigma from epsilon gives back epsilon */
        assert_rel(hdp_dpgd_rho_z(eta, T, sz), rz, 1e-14, 0);
        assert_true(fabs(hdp_zcdp_epsilon_cks(hdp_dpgd_rho_z(eta, T, sz), delta) - eps[i]) <
                    1e-9 * eps[i]);
        assert_true(sz < s3); /* the zCDP route is tighter than Bombari-Mondelli's bound */
    }
    /* Bombari-Mondelli's range: epsilon in (0, 8 ln(1/delta)) */
    assert_false(hdp_dpgd_simple_applies(8 * log(1 / delta) * 1.0001, delta));
    assert_false(hdp_dpgd_simple_applies(0.0, delta));
    double sz;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_dpgd_sigma_zcdp(-1, T, 1, delta, &sz, NULL, &err), HDP_EINPUT);
    hdp_error_clear(&err);
    assert_int_equal(hdp_dpgd_sigma_zcdp(eta, 0, 1, delta, &sz, NULL, &err), HDP_EINPUT);
    hdp_error_clear(&err);
    assert_int_equal(hdp_dpgd_sigma_zcdp(eta, T, 0, delta, &sz, NULL, &err), HDP_EINPUT);
    hdp_error_clear(&err);
    assert_int_equal(hdp_dpgd_sigma_zcdp(eta, T, 1, 1.0, &sz, NULL, &err), HDP_EINPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_values),
        cmocka_unit_test(calibration_inverts),
        cmocka_unit_test(accountant_returns_rho),
        cmocka_unit_test(dpgd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
