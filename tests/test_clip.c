/* test_clip.c — clipping factors of docs/theory.md §2: closed forms against
 * quadrature, limits, monotonicity, derivatives. */
#include <math.h>
#include <stdlib.h>

#include "hdpsgd/clip.h"
#include "testutil.h"

static const double Rs[] = {0.0, 1e-8, 1e-3, 0.05, 0.3, 1.0, 4.0, 100.0};
static const double cs[] = {1e-6, 1e-3, 0.05, 0.3, 1.0, 3.0, 10.0, 1e3};

/* Gaussian closed forms agree with the quadrature over the Gaussian density to 1e-10. */
static void gaussian_closed_form_matches_quadrature(void **state)
{
    (void)state;
    double tau2s[] = {0.01, 0.25, 1.0, 4.0};
    for (size_t i = 0; i < sizeof tau2s / sizeof *tau2s; i++)
        for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
            hdp_clip *clip = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, tau2s[i], 5, cs[k]);
            for (size_t r = 0; r < sizeof Rs / sizeof *Rs; r++) {
                hdp_clip_values a, q;
                hdp_clip_eval(clip, Rs[r], &a);
                hdp_clip_eval_quadrature(clip, Rs[r], &q);
                if (fabs(a.mu - q.mu) > 1e-10 || fabs(a.nu - q.nu) > 1e-10 ||
                    fabs(a.V - q.V) > 1e-10 * fmax(1, a.V)) {
                    print_error("tau2=%g c=%g R=%g: mu %.15g/%.15g nu %.15g/%.15g V %.15g/%.15g\n",
                                tau2s[i], cs[k], Rs[r], a.mu, q.mu, a.nu, q.nu, a.V, q.V);
                    fail();
                }
            }
            hdp_clip_free(clip);
        }
}

/* c -> inf: no clipping; c -> 0: mu ~ 2a/sqrt(pi), nu ~ 2a^2 (docs/theory.md §2). */
static void limits(void **state)
{
    (void)state;
    hdp_clip_values v;
    hdp_clip *inf = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.25, 5, INFINITY);
    hdp_clip_eval(inf, 0.7, &v);
    assert_true(v.mu == 1.0 && v.nu == 1.0);
    assert_rel(v.V, 0.7 + 0.125, 1e-15, 0);
    hdp_clip_free(inf);

    hdp_clip *big = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.25, 5, 1e6);
    hdp_clip_eval(big, 0.7, &v);
    assert_rel(v.mu, 1.0, 1e-15, 0);
    assert_rel(v.nu, 1.0, 1e-15, 0);
    hdp_clip_free(big);

    double R = 0.7, s = R + 0.125;
    for (double c = 1e-2; c >= 1e-7; c /= 10) {
        hdp_clip *small = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.25, 5, c);
        hdp_clip_eval(small, R, &v);
        double a = c / (2 * sqrt(s));
        assert_rel(v.mu, 2 * a / sqrt(M_PI), 2 * a * a, 0);
        assert_rel(v.nu, 2 * a * a, 4 * a, 0);
        assert_true(v.nu > 0);
        hdp_clip_free(small);
    }
    /* tau2 = 0 and R = 0: nothing to clip, no NaN */
    hdp_clip *zero = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.0, 5, 0.3);
    hdp_clip_eval(zero, 0.0, &v);
    assert_true(v.mu == 1.0 && v.nu == 1.0 && v.V == 0.0 && isfinite(v.dV));
    hdp_clip_free(zero);
}

/* mu and nu increase with c and lie in [0, 1], for every label-noise law. */
static void monotone_in_c(void **state)
{
    (void)state;
    hdp_noise_kind laws[] = {HDP_NOISE_GAUSSIAN, HDP_NOISE_STUDENT, HDP_NOISE_RADEMACHER,
                             HDP_NOISE_NONE};
    for (size_t l = 0; l < 4; l++)
        for (size_t r = 1; r < sizeof Rs / sizeof *Rs; r++) {
            double pmu = -1, pnu = -1;
            for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
                hdp_clip *clip = hdp_clip_alloc(laws[l], 0.25, 5, cs[k]);
                hdp_clip_values v;
                hdp_clip_eval(clip, Rs[r], &v);
                hdp_clip_free(clip);
                assert_true(v.mu >= 0 && v.mu <= 1 + 1e-12);
                assert_true(v.nu >= 0 && v.nu <= 1 + 1e-12);
                assert_true(v.mu >= pmu - 1e-13);
                assert_true(v.nu >= pnu - 1e-13);
                pmu = v.mu;
                pnu = v.nu;
            }
        }
}

/* Analytic derivatives (Gaussian) against central differences. */
static void derivatives(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        hdp_clip *clip = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.25, 5, cs[k]);
        for (size_t r = 2; r < sizeof Rs / sizeof *Rs; r++) {
            double R = Rs[r], h = 1e-6 * (R + 0.125);
            hdp_clip_values v, lo, hi;
            hdp_clip_eval(clip, R, &v);
            hdp_clip_eval(clip, R - h, &lo);
            hdp_clip_eval(clip, R + h, &hi);
            double fd_mu = (hi.mu - lo.mu) / (2 * h), fd_V = (hi.V - lo.V) / (2 * h);
            assert_true(fabs(v.dmu - fd_mu) <= 1e-6 * fmax(1, fabs(fd_mu)));
            assert_true(fabs(v.dV - fd_V) <= 1e-6 * fmax(1, fabs(fd_V)));
        }
        hdp_clip_free(clip);
    }
}

/* Rademacher by hand: z = +-tau, R = 0 gives mu = 1{tau < c}, E r_c^2 = min(tau, c)^2. */
static void rademacher_and_student(void **state)
{
    (void)state;
    hdp_clip *clip = hdp_clip_alloc(HDP_NOISE_RADEMACHER, 0.25, 5, 0.3);
    hdp_clip_values v;
    hdp_clip_eval(clip, 0.0, &v);
    assert_rel(v.mu, 0.0, 1e-15, 1); /* tau = 0.5 > c = 0.3: always clipped */
    assert_rel(v.V, 0.5 * 0.09, 1e-15, 0);
    hdp_clip_free(clip);
    /* Student-t with many degrees of freedom approaches the Gaussian */
    hdp_clip *st = hdp_clip_alloc(HDP_NOISE_STUDENT, 0.25, 4000, 0.5);
    hdp_clip *ga = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.25, 5, 0.5);
    hdp_clip_values a, b;
    hdp_clip_eval(st, 0.3, &a);
    hdp_clip_eval(ga, 0.3, &b);
    assert_rel(a.mu, b.mu, 1e-3, 0);
    assert_rel(a.nu, b.nu, 1e-3, 0);
    /* unclipped second moment: V -> R + tau2/2 for large c */
    hdp_clip *stc = hdp_clip_alloc(HDP_NOISE_STUDENT, 0.25, 5, 1e4);
    hdp_clip_eval(stc, 0.3, &a);
    assert_rel(a.V, 0.3 + 0.125, 1e-6, 0);
    hdp_clip_free(st);
    hdp_clip_free(ga);
    hdp_clip_free(stc);
}

/* Extreme clipping constants and risks (c = 1e-6 .. 1e6, R up to 1e11): the quadrature
 * agrees with the Gaussian closed forms to 1e-10 RELATIVE to mu and V (which are as small
 * as 1e-12), and the Student-t factors respect 0 <= V <= min(c^2, E r^2)/2. Before the
 * narrow-window rule the moment lost every digit at c = 1e-6, R = 1e11, and the
 * quadrature lost P(|z| > 3 tau) at c = 1e6. */
static void extreme_c_and_R(void **state)
{
    (void)state;
    const double ec[] = {1e-6, 1e-3, 0.3, 1e3, 1e6};
    const double eR[] = {0.0, 1e-3, 0.5, 100.0, 1e11};
    for (size_t k = 0; k < sizeof ec / sizeof *ec; k++) {
        hdp_clip *ga = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.25, 5, ec[k]);
        hdp_clip *st = hdp_clip_alloc(HDP_NOISE_STUDENT, 0.25, 5, ec[k]);
        for (size_t r = 0; r < sizeof eR / sizeof *eR; r++) {
            hdp_clip_values a, q, t;
            hdp_clip_eval(ga, eR[r], &a);
            hdp_clip_eval_quadrature(ga, eR[r], &q);
            if (fabs(a.mu - q.mu) > 1e-10 * a.mu || fabs(a.V - q.V) > 1e-10 * a.V) {
                print_error("c=%g R=%g: mu %.15g/%.15g V %.15g/%.15g\n", ec[k], eR[r], a.mu,
                            q.mu, a.V, q.V);
                fail();
            }
            hdp_clip_eval_values(st, eR[r], &t);
            double bound = 0.5 * fmin(ec[k] * ec[k], 2 * eR[r] + 0.25);
            if (!(t.mu >= 0 && t.mu <= 1 + 1e-12 && t.V >= 0 && t.V <= bound * (1 + 1e-9))) {
                print_error("Student c=%g R=%g: mu %.15g V %.15g (bound %.15g)\n", ec[k], eR[r],
                            t.mu, t.V, bound);
                fail();
            }
        }
        hdp_clip_free(ga);
        hdp_clip_free(st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gaussian_closed_form_matches_quadrature),
        cmocka_unit_test(limits),
        cmocka_unit_test(monotone_in_c),
        cmocka_unit_test(derivatives),
        cmocka_unit_test(rademacher_and_student),
        cmocka_unit_test(extreme_c_and_R),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
