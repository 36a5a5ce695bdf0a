/* test_clip.c — clipping factors of docs/theory.md §2: closed forms against
 * quadrature, limits, monotonicity, derivatives. */
#include <math.h>
#include <stdlib.h>

#include "hdpsgd/clip.h"
#include "hdpsgd/ode.h"
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

/* The Gaussian factor H (mu or V) at s = R + tau2/2 depends on s alone: evaluated with
 * the label-noise variance 2 (s - R) so that s may go below R + tau2/2. */
static double gauss_at_s(double c, double R, double s, int which_V)
{
    hdp_clip *g = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 2.0 * (s - R), 5, c);
    hdp_clip_values v;
    hdp_clip_eval_values(g, R, &v);
    hdp_clip_free(g);
    return which_V ? v.V : v.mu;
}

/* Student-t noise of nu = 1e3 .. 1e300 degrees of freedom: the factors are the Gaussian ones
 * plus tau^4/(4 nu) H''(s) (docs/theory.md §2), H'' taken here by central differences of the
 * Gaussian closed forms, not the formulas of clip.c. The remainder is O(nu^-2): allowed
 * 2/nu^2 relative (1.3/nu^2 measured at worst), plus the difference quotient's error. Before
 * the normaliser and the density were computed stably, nu = 1e16 gave mu and V off by 40 %. */
static void student_large_df(void **state)
{
    (void)state;
    const double nus[] = {1e3, 1e8, 1e16, 1e300};
    const double c3[] = {0.05, 0.5, 3.0};
    const double R3[] = {0.0, 0.3, 20.0};
    const double t3[] = {0.01, 0.25, 4.0};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 27; j++) {
            double nu = nus[i], c = c3[j % 3], R = R3[j / 3 % 3], tau2 = t3[j / 9];
            hdp_clip *st = hdp_clip_alloc(HDP_NOISE_STUDENT, tau2, nu, c);
            hdp_clip_values t;
            hdp_clip_eval(st, R, &t);
            hdp_clip_free(st);
            double s = R + 0.5 * tau2, h = 1e-3 * s, k = tau2 * tau2 / (4.0 * nu);
            for (int w = 0; w < 2; w++) {
                double H = gauss_at_s(c, R, s, w);
                double H2 = (gauss_at_s(c, R, s + h, w) - 2.0 * H + gauss_at_s(c, R, s - h, w)) /
                            (h * h);
                double got = w ? t.V : t.mu, want = H + k * H2;
                double tol = 2.0 / (nu * nu) * H + 1e-5 * k * fabs(H2) + 1e-13 * H;
                if (!(fabs(got - want) <= tol)) {
                    print_error("nu=%g c=%g R=%g tau2=%g %s: %.17g, Gaussian %.17g + %.3g\n", nu,
                                c, R, tau2, w ? "V" : "mu", got, H, k * H2);
                    fail();
                }
            }
            assert_rel(t.nu, t.V / s, 1e-14, 0);
        }
}

/* The switch from quadrature to the expansion (HDP_CLIP_STUDENT_ASYMPTOTIC_DF) is continuous
 * to 1e-12, derivatives (central differences below, analytic above) to their precision. */
static void student_switch_continuous(void **state)
{
    (void)state;
    double nu = HDP_CLIP_STUDENT_ASYMPTOTIC_DF;
    for (size_t j = 0; j < sizeof cs / sizeof *cs; j++)
        for (size_t r = 0; r < sizeof Rs / sizeof *Rs; r++) {
            hdp_clip *lo = hdp_clip_alloc(HDP_NOISE_STUDENT, 0.25, nu * (1 - 1e-9), cs[j]);
            hdp_clip *hi = hdp_clip_alloc(HDP_NOISE_STUDENT, 0.25, nu, cs[j]);
            hdp_clip_values a, b;
            hdp_clip_eval(lo, Rs[r], &a);
            hdp_clip_eval(hi, Rs[r], &b);
            assert_rel(a.mu, b.mu, 1e-12, 0);
            assert_rel(a.V, b.V, 1e-12, 0);
            assert_rel(a.nu, b.nu, 1e-12, 0);
            /* central differences of step 1e-6 s on a quadrature of relative tolerance
             * 1e-12: an error ~ 1e-6 mu / s, 1e-6 V / s */
            double s = Rs[r] + 0.125;
            assert_rel(a.dmu, b.dmu, 1e-5, b.mu / s);
            assert_rel(a.dV, b.dV, 1e-5, b.V / s);
            hdp_clip_free(lo);
            hdp_clip_free(hi);
        }
}

/* End to end: ode's final risk with Student-t noise tends to the Gaussian model's as 1/nu
 * (|difference| = 0.22 R / nu measured on this model; allowed R / nu plus 1e-12 relative). */
static void student_large_df_ode(void **state)
{
    (void)state;
    hdp_model m;
    hdp_ode_result r;
    hdp_error err;
    make_model(&m, "data.noise=gaussian", "data.tau2=0.5", "clip.c=0.5", NULL);
    assert_int_equal(hdp_ode_solve(&m, &r, &err), HDP_OK);
    double gauss = r.final_risk;
    hdp_ode_result_free(&r);
    const char *dfs[] = {"data.noise_df=1e3", "data.noise_df=1e8", "data.noise_df=1e16",
                         "data.noise_df=1e300"};
    const double nus[] = {1e3, 1e8, 1e16, 1e300};
    for (int i = 0; i < 4; i++) {
        make_model(&m, "data.noise=student", "data.tau2=0.5", "clip.c=0.5", dfs[i], NULL);
        assert_int_equal(hdp_ode_solve(&m, &r, &err), HDP_OK);
        assert_rel(r.final_risk, gauss, 1.0 / nus[i] + 1e-12, 0);
        if (i == 0) /* and at nu = 1e3 the difference is there: not the Gaussian path */
            assert_true(fabs(r.final_risk - gauss) > 0.01 * gauss / nus[i]);
        hdp_ode_result_free(&r);
    }
}

/* The fitted Student-t factors (hdp_clip_tabulate, docs/theory.md §2.3) agree with direct
 * quadrature within 1e-10 relative at random R in [0, R_max] (log-uniform, and R = 0), for
 * c from 1e-6 to 1e6 and tau^2 from 1e-6 to 1e6; their derivatives are those of the series
 * (checked against central differences of the direct values); beyond R_max the evaluator
 * falls back to the quadrature. */
static void fitted_matches_quadrature(void **state)
{
    (void)state;
    const double cs[] = {1e-6, 1e-2, 0.5, 30, 1e6}, tau2s[] = {1e-6, 0.5, 1e6};
    const double dfs[] = {5, 3, 30};
    unsigned seed = 12345;
    double worst = 0;
    int fitted = 0;
    for (int k = 0; k < 17; k++) {
        double c = k < 15 ? cs[k % 5] : 0.5, tau2 = k < 15 ? tau2s[k / 5] : 0.5;
        double df = k < 15 ? dfs[0] : dfs[k - 14];
        double Rmax = 1e6 * fmax(tau2, c * c);
        hdp_clip *fit = hdp_clip_alloc(HDP_NOISE_STUDENT, tau2, df, c);
        hdp_clip *direct = hdp_clip_alloc(HDP_NOISE_STUDENT, tau2, df, c);
        assert_non_null(fit);
        assert_non_null(direct);
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_clip_tabulate(fit, Rmax, &err), HDP_OK);
        hdp_clip_table_info info;
        hdp_clip_table_get(fit, &info);
        if (k == 16) { /* a second evaluator of the same key reads the same fit */
            hdp_clip *again = hdp_clip_alloc(HDP_NOISE_STUDENT, tau2, df, c);
            assert_non_null(again);
            assert_int_equal(hdp_clip_tabulate(again, Rmax, &err), HDP_OK);
            hdp_clip_table_info i2;
            hdp_clip_table_get(again, &i2);
            assert_true(i2.cached && i2.pieces == info.pieces);
            hdp_clip_values x, y;
            hdp_clip_eval(fit, 0.3, &x);
            hdp_clip_eval(again, 0.3, &y);
            assert_true(x.mu == y.mu && x.V == y.V && x.dmu == y.dmu && x.dV == y.dV);
            hdp_clip_free(again);
        }
        print_message("df %g c %g tau2 %g: %zu pieces, %ld evaluations, %.0f ms%s\n", df, c,
                      tau2, info.pieces, info.evaluations, 1e3 * info.seconds,
                      info.failed ? " (failed)" : "");
        /* a fit that does not converge (only where c is far below the noise's scale, see
         * docs/theory.md §2.3) leaves the quadrature, checked below all the same */
        assert_true(info.failed ? info.pieces == 0 : info.pieces > 0);
        if (!info.failed)
            fitted++;
        else
            assert_true(c < 1e-2 * sqrt(tau2));
        for (int j = 0; j < 25; j++) {
            seed = seed * 1103515245u + 12345u;
            double x = (double)(seed >> 8) / 16777216.0;
            double lo = 1e-8 * fmax(tau2, c * c);
            double R = j == 0 ? 0.0 : lo * pow(Rmax / lo, x);
            hdp_clip_values a, b;
            hdp_clip_eval(fit, R, &a);
            hdp_clip_eval_values(direct, R, &b);
            double emu = fabs(a.mu - b.mu) / b.mu, eV = fabs(a.V - b.V) / b.V;
            worst = fmax(worst, fmax(emu, eV));
            if (!(emu <= 1e-10 && eV <= 1e-10))
                print_error("R %g: mu %.17g / %.17g, V %.17g / %.17g\n", R, a.mu, b.mu, a.V, b.V);
            assert_true(emu <= 1e-10 && eV <= 1e-10);
            if (!info.failed && j % 5 == 1) {
                /* the series' derivatives against central differences of the direct values
                 * (step 1e-4 s, at R >= 2 steps; the quadrature's ~1e-12 relative noise is
                 * ~1e-8 of F/s there) */
                /* (s0: the offset of the fit's variable, tau^2/2 or, when c << tau, c^2/4) */
                double s0 = info.failed ? 0.5 * tau2 : fmin(0.5 * tau2, 0.25 * c * c);
                double h = 1e-4 * (R + s0), Rc = fmax(R, 2 * h);
                hdp_clip_values f, p, m;
                hdp_clip_eval(fit, Rc, &f);
                hdp_clip_eval_values(direct, Rc + h, &p);
                hdp_clip_eval_values(direct, Rc - h, &m);
                double dmu = (p.mu - m.mu) / (2 * h), dV = (p.V - m.V) / (2 * h);
                double sc = Rc + s0;
                if (!(fabs(f.dmu - dmu) <= 1e-5 * fabs(dmu) + 1e-7 * f.mu / sc))
                    print_error("R %g: dmu %.10g, differences %.10g\n", Rc, f.dmu, dmu);
                assert_true(fabs(f.dmu - dmu) <= 1e-5 * fabs(dmu) + 1e-7 * f.mu / sc);
                assert_true(fabs(f.dV - dV) <= 1e-5 * fabs(dV) + 1e-7 * f.V / sc);
            }
        }
        hdp_clip_values a, out;
        /* the range: R_max rounded up to a power of 10 (the cache's key) */
        double top = info.failed ? Rmax : info.R_max;
        assert_true(top >= Rmax && top < 10.000001 * Rmax);
        assert_true(hdp_clip_eval_fitted(fit, Rmax, &out) == !info.failed);
        assert_false(hdp_clip_eval_fitted(fit, 2 * top, &out)); /* beyond: the quadrature */
        hdp_clip_eval_values(fit, 2 * top, &a);
        hdp_clip_eval_values(direct, 2 * top, &out);
        assert_true(a.mu == out.mu && a.V == out.V);
        hdp_clip_free(fit);
        hdp_clip_free(direct);
    }
    print_message("largest relative error of the fitted factors: %.2g (%d of 17 fitted)\n", worst,
                  fitted);
    assert_true(fitted >= 14);
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
        cmocka_unit_test(student_large_df),
        cmocka_unit_test(student_switch_continuous),
        cmocka_unit_test(student_large_df_ode),
        cmocka_unit_test(fitted_matches_quadrature),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
