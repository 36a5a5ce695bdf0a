/*
 * test_si.c — private feature learning for single-index models (hdpsgd/si.h; the single-index
 * notes, docs/theory.md §6, §7, §8).
 *   - Stage 2 with clipping inactive (C_a = inf): the Monte Carlo mean and variance of every
 *     eigenmode of the second-layer weights, and the off-diagonal covariances, match the
 *     Gaussian law of unclipped discrete GD within 4 standard errors; the exact-OU sampler
 *     matches the OU law; for small eta the two laws agree (discretisation error O(eta)).
 *   - Stage 1 with sigma_W = 0 on the noiseless linear target y = <x, mu> aligns the neurons
 *     with mu: mean |<w_j, mu>|/||w_j|| > 0.5, against sqrt(2/(pi d)) ~ 0.1 for the random
 *     directions of W_0 (checked too).
 *   - Privacy: rho_z1 = Delta1^2/(2 sigma_W^2), rho_z2 = eta T/(2 sigma_a^2), composition.
 *   - The total budget (si.epsilon_total, docs/theory.md §8.2): the reported total epsilon equals
 *     the target to 1e-6 for several targets, shares, delta and both stage-2 kinds; the zCDP
 *     budget is split by stage1_share; inf means no noise in either stage; the stage-2-only
 *     setter refuses such a problem.
 *   - Bad input names the key; an unstable eta_a is refused naming si.eta_a.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hdpsgd/privacy.h"
#include "hdpsgd/si.h"

static void small_spec(hdp_model *m, hdp_si_spec *s)
{
    hdp_model_init(m);
    hdp_error err;
    assert_int_equal(hdp_model_finalize(m, &err), HDP_OK);
    hdp_si_spec_from_model(m, s);
    s->k.d = 16;
    s->k.p = 10;
    s->k.n = 600;
    s->k.test_size = 300;
    s->seed = 7;
}

/* max |z| over modes for the mean, the variance and the covariances */
static void check_law(const hdp_si_problem *pb, const hdp_si_result *r, const double *pm,
                      const double *pv, double tol)
{
    const long p = pb->spec.k.p, R = r->runs;
    double zmax = 0, zvmax = 0, zcmax = 0;
    for (long k = 0; k < p; k++) {
        assert_true(pv[k] > 0);
        double zm = fabs(r->mc_mean[k] - pm[k]) / sqrt(pv[k] / (double)R);
        double zv = fabs(r->mc_var[k] - pv[k]) / (pv[k] * sqrt(2.0 / (double)(R - 1)));
        if (zm > zmax) zmax = zm;
        if (zv > zvmax) zvmax = zv;
        for (long l = k + 1; l < p; l++) { /* independent modes: covariance 0 */
            double zc = fabs(r->mc_cov[k * p + l]) / sqrt(pv[k] * pv[l] / (double)R);
            if (zc > zcmax) zcmax = zc;
        }
    }
    printf("    max z: mean %.2f, variance %.2f, covariance %.2f (tolerance %.1f)\n", zmax, zvmax,
           zcmax, tol);
    assert_true(zmax < tol);
    assert_true(zvmax < tol);
    assert_true(zcmax < tol);
}

static void test_stage2_unclipped_matches_law(void **state)
{
    (void)state;
    hdp_model m;
    hdp_si_spec s;
    small_spec(&m, &s);
    /* C_a = inf would need epsilon = inf (no noise); instead a finite C_a that no gradient
     * reaches (checked: clipped fraction 0) and private noise for epsilon = 8 */
    s.k.epsilon = 8;
    s.k.C_a = 1; /* C_a = 135 at these sizes; per-sample gradients stay below it */
    s.k.stage2 = HDP_SI_GD;
    hdp_si_problem pb;
    hdp_error err;
    assert_int_equal(hdp_si_problem_build(&s, NULL, &pb, &err), HDP_OK);
    assert_true(pb.hp.s > 0);
    assert_true(pb.hp.eta_a * pb.l[s.k.p - 1] < 2);
    hdp_si_result r;
    assert_int_equal(hdp_si_stage2(&pb, 2000, 2, &r, &err), HDP_OK);
    assert_true(r.clipped == 0);
    check_law(&pb, &r, pb.gd_mean, pb.gd_var, 4.0);
    hdp_si_result_free(&r);

    /* the exact OU sampler against the OU law */
    pb.spec.k.stage2 = HDP_SI_OU;
    assert_int_equal(hdp_si_stage2(&pb, 2000, 2, &r, &err), HDP_OK);
    check_law(&pb, &r, pb.ou_mean, pb.ou_var, 4.0);
    hdp_si_result_free(&r);
    hdp_si_problem_free(&pb);
}

/* Small eta: the discrete-GD law tends to the OU law (relative differences O(eta l)). */
static void test_gd_law_tends_to_ou(void **state)
{
    (void)state;
    hdp_model m;
    hdp_si_spec s;
    small_spec(&m, &s);
    hdp_error err;
    hdp_si_problem pb;
    s.k.eta_a = 0; /* eta = 1/l_max */
    assert_int_equal(hdp_si_problem_build(&s, NULL, &pb, &err), HDP_OK);
    const double lmax = pb.l[s.k.p - 1];
    hdp_si_problem_free(&pb);
    /* eta_a = c d^eps_n ln^2 d / p: choose c so that eta l_max = 1e-3, T so that tau is fixed */
    const double d = (double)s.k.d;
    double unit = pow(d, s.k.eps_n) * log(d) * log(d) / (double)s.k.p;
    s.k.eta_a = 1e-3 / lmax / unit;
    s.k.T = 2000.0 / pow((double)s.k.d, s.k.eps_n);
    assert_int_equal(hdp_si_problem_build(&s, NULL, &pb, &err), HDP_OK);
    for (long k = 0; k < s.k.p; k++) {
        double scale = fabs(pb.ou_mean[k]) + sqrt(pb.ou_var[k]) + 1e-12;
        assert_true(fabs(pb.gd_mean[k] - pb.ou_mean[k]) < 5e-3 * scale);
        assert_true(fabs(pb.gd_var[k] - pb.ou_var[k]) <= 5e-3 * pb.ou_var[k] + 1e-300);
    }
    hdp_si_problem_free(&pb);
}

static void test_stage1_aligns(void **state)
{
    (void)state;
    hdp_model m;
    hdp_si_spec s;
    small_spec(&m, &s);
    s.k.d = 50;
    s.k.p = 40;
    s.k.n = 4000;
    s.k.he1 = 1;
    s.k.he2 = 0;
    s.k.he3 = 0; /* noiseless linear target y = <x, mu> */
    s.k.sigma_W = 0;
    hdp_si_problem pb;
    hdp_error err;
    assert_int_equal(hdp_si_problem_build(&s, NULL, &pb, &err), HDP_OK);
    double random = sqrt(2.0 / (M_PI * (double)s.k.d));
    printf("    alignment: stage 1 %.4f, init %.4f, random directions %.4f; floored %ld\n",
           pb.align_mean, pb.align0_mean, random, pb.floored);
    assert_true(pb.align0_mean < 3 * random);
    assert_true(pb.align_mean > 0.5);
    assert_true(pb.align_mean > 5 * random);
    assert_true(isinf(pb.hp.rho_z1)); /* sigma_W = 0: no stage-1 privacy */
    hdp_si_problem_free(&pb);
}

static void test_privacy_accounting(void **state)
{
    (void)state;
    hdp_model m;
    hdp_si_spec s;
    small_spec(&m, &s);
    s.k.epsilon = 3;
    hdp_si_problem pb;
    hdp_error err;
    assert_int_equal(hdp_si_problem_build(&s, NULL, &pb, &err), HDP_OK);
    const hdp_si_params *hp = &pb.hp;
    assert_true(hp->sigma_W > 0);
    double d1 = 2 * hp->eta_W * hp->C_W * sqrt((double)s.k.p) / hp->R;
    assert_true(fabs(hp->Delta1 - d1) < 1e-12 * d1);
    assert_true(fabs(hp->rho_z1 - d1 * d1 / (2 * hp->sigma_W * hp->sigma_W)) < 1e-12 * hp->rho_z1);
    assert_true(fabs(hp->rho_z2 - hp->eta_a * hp->T / (2 * hp->sigma_a * hp->sigma_a)) <
                1e-12 * hp->rho_z2);
    /* the single-index notes' sigma_a for epsilon in (0, 8 ln(1/delta)) */
    double sig = sqrt(hp->eta_a * hp->T) * sqrt(8 * log(1 / hp->delta)) / 3.0;
    assert_true(fabs(hp->sigma_a - sig) < 1e-12 * sig);
    assert_true(hp->eps2 < 3.0); /* the CKS conversion is tighter than the seed's bound */
    assert_true(fabs(hp->eps_total - hdp_zcdp_epsilon_cks(hp->rho_z1 + hp->rho_z2, hp->delta)) <
                1e-12);
    assert_true(hp->eps_total >= hp->eps1 && hp->eps_total >= hp->eps2);
    assert_true(fabs(hp->s - 2 * hp->C_a * hp->sigma_a / (double)s.k.n) < 1e-12 * hp->s);
    hdp_si_problem_free(&pb);
}

static void test_total_budget(void **state)
{
    (void)state;
    const double targets[] = {0.5, 2, 4, 9.16, 40};
    const double shares[] = {0.1, 0.5, 0.9};
    for (int t = 0; t < 5; t++)
        for (int k = 0; k < 3; k++) {
            hdp_model m;
            hdp_si_spec s;
            small_spec(&m, &s);
            s.k.epsilon_total = targets[t];
            s.k.stage1_share = shares[k];
            s.k.stage2 = (t + k) % 2 ? HDP_SI_OU : HDP_SI_GD;
            if (t == 2)
                s.k.delta = 1e-6;
            hdp_si_problem pb;
            hdp_error err;
            assert_int_equal(hdp_si_problem_build(&s, NULL, &pb, &err), HDP_OK);
            const hdp_si_params *hp = &pb.hp;
            assert_true(hp->budget_total);
            /* what is reported is recomputed from sigma_W and sigma_a (privacy() in si.c) */
            assert_true(fabs(hp->eps_total - targets[t]) <= 1e-6);
            assert_true(fabs(hdp_zcdp_epsilon_cks(hp->rho_z1 + hp->rho_z2, hp->delta) -
                             targets[t]) <= 1e-6);
            assert_true(fabs(hp->rho_z1 / hp->rho_z - shares[k]) < 1e-9);
            assert_true(fabs(hp->rho_z1 - hp->Delta1 * hp->Delta1 /
                                              (2 * hp->sigma_W * hp->sigma_W)) < 1e-12 * hp->rho_z1);
            assert_true(fabs(hp->rho_z2 - hp->eta_a * hp->T / (2 * hp->sigma_a * hp->sigma_a)) <
                        1e-12 * hp->rho_z2);
            assert_true(hp->eps1 < targets[t] && hp->eps2 < targets[t]);
            assert_int_equal(hdp_si_set_epsilon(&pb, 3.0, &err), HDP_EINPUT);
            hdp_si_problem_free(&pb);
        }
    hdp_model m;
    hdp_si_spec s;
    small_spec(&m, &s);
    s.k.epsilon_total = INFINITY;
    hdp_si_problem pb;
    hdp_error err;
    assert_int_equal(hdp_si_problem_build(&s, NULL, &pb, &err), HDP_OK);
    assert_true(pb.hp.sigma_W == 0 && pb.hp.sigma_a == 0 && isinf(pb.hp.eps_total));
    hdp_si_problem_free(&pb);
    /* the model level: both forms given is refused naming both keys */
    hdp_model_init(&m);
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_set(&m, "si.epsilon=4", &err), HDP_OK);
    assert_int_equal(hdp_model_set(&m, "si.epsilon_total=4", &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_OK);
    hdp_si_spec_from_model(&m, &s);
    s.k.d = 16, s.k.p = 10, s.k.n = 600, s.k.test_size = 300;
    assert_int_equal(hdp_si_problem_build(&s, &m, &pb, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "si.epsilon "));
    assert_non_null(strstr(err.msg, "si.epsilon_total"));
    hdp_si_problem_free(&pb);
    hdp_model_free(&m);
}

/* The spec is refused (no model) with a message naming key. */
static void refused(const hdp_si_spec *s, const char *key)
{
    hdp_si_problem pb;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_si_problem_build(s, NULL, &pb, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, key));
    hdp_si_problem_free(&pb);
}

static void test_bad_input(void **state)
{
    (void)state;
    hdp_model m;
    hdp_si_spec s;
    small_spec(&m, &s);
    hdp_si_problem pb;
    hdp_error err;
    s.k.he1 = 0;
    hdp_error_clear(&err);
    assert_int_equal(hdp_si_problem_build(&s, &m, &pb, &err), HDP_EINPUT);
    fprintf(stderr, "    %s\n", err.msg);
    assert_non_null(strstr(err.msg, "he1"));
    hdp_si_problem_free(&pb);
    small_spec(&m, &s);
    s.k.eta_a = 1e3; /* eta_a lambda_max far above 2 */
    hdp_error_clear(&err);
    assert_int_equal(hdp_si_problem_build(&s, &m, &pb, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "eta_a"));
    hdp_si_problem_free(&pb);
    s.k.stage2 = HDP_SI_OU; /* the OU process has no step-size limit */
    assert_int_equal(hdp_si_problem_build(&s, &m, &pb, &err), HDP_OK);
    hdp_si_problem_free(&pb);
    small_spec(&m, &s);
    s.k.C_a = INFINITY;
    hdp_error_clear(&err);
    assert_int_equal(hdp_si_problem_build(&s, &m, &pb, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "C_a"));
    hdp_si_problem_free(&pb);
    /* a spec built in code meets every number key's range of the schema (the list of
     * hdpsgd/si.h), named without a model */
    small_spec(&m, &s);
    s.k.d = 1;
    refused(&s, "[si] d");
    small_spec(&m, &s);
    s.k.runs = 1;
    refused(&s, "[si] runs");
    small_spec(&m, &s);
    s.k.stage1_share = 1.5;
    refused(&s, "[si] stage1_share");
    small_spec(&m, &s);
    s.k.delta = 1;
    refused(&s, "[si] delta");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage2_unclipped_matches_law),
        cmocka_unit_test(test_gd_law_tends_to_ou),
        cmocka_unit_test(test_stage1_aligns),
        cmocka_unit_test(test_privacy_accounting),
        cmocka_unit_test(test_total_budget),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
