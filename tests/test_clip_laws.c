/* test_clip_laws.c — the label-noise laws laplace, uniform, mixture and empirical
 * (docs/theory.md §2.3): their factors against closed forms and independent sums, their fits
 * against direct evaluation (1e-10 relative, derivatives against central differences), and
 * the checks of an empirical sample. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sf_erf.h>

#include "hdpsgd/clip.h"
#include "testutil.h"

static double Phi(double x) { return 0.5 * erfc(-x / M_SQRT2); }
static double phi(double x) { return exp(-0.5 * x * x) / sqrt(2 * M_PI); }

/* n values of a skewed law (a centred exponential, from a fixed linear congruential
 * stream), scaled to mean 0 and variance tau2 */
static double *skewed_sample(size_t n, double tau2)
{
    double *z = malloc(n * sizeof *z), mean = 0, var = 0;
    unsigned s = 2718281u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        z[i] = -log(((double)(s >> 8) + 0.5) / 16777216.0);
        mean += z[i] / (double)n;
    }
    for (size_t i = 0; i < n; i++)
        var += (z[i] - mean) * (z[i] - mean) / (double)n;
    for (size_t i = 0; i < n; i++)
        z[i] = (z[i] - mean) * sqrt(tau2 / var);
    return z;
}

static hdp_clip *law_clip(hdp_noise_kind kind, double tau2, double c, const double *z, size_t n)
{
    hdp_noise_law law = {kind, tau2, 5, 0.3, 0.7 * sqrt(tau2), 0.2 * tau2, 0.4 * tau2, z, n};
    if (kind == HDP_NOISE_MIXTURE)
        law.tau2 = hdp_noise_mixture_tau2(law.mix_w, law.mix_m1, law.mix_v1, law.mix_v2);
    hdp_clip *clip = hdp_clip_alloc_law(&law, c);
    assert_non_null(clip);
    return clip;
}

/* Uniform z on [-a, a]: mu = P(|G - z| < c) = (1/2a) int_{-a}^{a} [Phi((c+z)/s) - Phi((z-c)/s)]
 * dz in closed form with the antiderivative F(x) = x Phi(x/s) + s phi(x/s) of Phi(x/s); Laplace
 * z of scale b: the normal-Laplace distribution function (Reed and Jorgensen)
 * F(y) = Phi(y/s) - phi(y/s) [M(s/b - y/s) - M(s/b + y/s)] / 2, M the Mills ratio. */
static double uniform_mu(double R, double tau2, double c)
{
    double a = sqrt(3 * tau2), s = sqrt(2 * R);
#define F(x) ((x) * Phi((x) / s) + s * phi((x) / s))
    return (F(c + a) - F(c - a) - F(a - c) + F(-c - a)) / (2 * a);
#undef F
}

static double laplace_cdf(double y, double s, double b)
{
    /* phi(y/s) M(w) = phi(y/s) Q(w) / phi(w), written as one exponential */
    double w1 = s / b - y / s, w2 = s / b + y / s, u = y / s;
    double t1 = 0.5 * exp(gsl_sf_log_erfc(w1 / M_SQRT2) + 0.5 * (w1 * w1 - u * u));
    double t2 = 0.5 * exp(gsl_sf_log_erfc(w2 / M_SQRT2) + 0.5 * (w2 * w2 - u * u));
    return Phi(u) - 0.5 * (t1 - t2);
}

static void closed_forms(void **state)
{
    (void)state;
    const double tau2s[] = {0.01, 0.25, 2.0}, cs[] = {0.05, 0.3, 1.0, 3.0};
    const double Rs[] = {0.02, 0.1, 0.5, 2.0, 10.0};
    double worst_u = 0, worst_l = 0;
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 4; k++) {
            hdp_clip *u = law_clip(HDP_NOISE_UNIFORM, tau2s[i], cs[k], NULL, 0);
            hdp_clip *l = law_clip(HDP_NOISE_LAPLACE, tau2s[i], cs[k], NULL, 0);
            for (size_t r = 0; r < 5; r++) {
                hdp_clip_values vu, vl;
                hdp_clip_eval_values(u, Rs[r], &vu);
                hdp_clip_eval_values(l, Rs[r], &vl);
                double mu_u = uniform_mu(Rs[r], tau2s[i], cs[k]);
                double s = sqrt(2 * Rs[r]), b = sqrt(0.5 * tau2s[i]);
                double mu_l = laplace_cdf(cs[k], s, b) - laplace_cdf(-cs[k], s, b);
                worst_u = fmax(worst_u, fabs(vu.mu / mu_u - 1));
                worst_l = fmax(worst_l, fabs(vl.mu / mu_l - 1));
                assert_rel(vu.mu, mu_u, 1e-10, 0);
                assert_rel(vl.mu, mu_l, 1e-10, 0);
            }
            hdp_clip_free(u);
            hdp_clip_free(l);
        }
    print_message("mu against closed forms: uniform %.2g, laplace %.2g\n", worst_u, worst_l);
}

/* The mixture's exact sums: one component (m1 = 0, v1 = v2) is the Gaussian closed form; two
 * narrow ones at +-tau the Rademacher law; an empirical sample {-t, t} is Rademacher too; an
 * empirical sample's factors are the means of the conditional formulas (computed here with
 * erfc, away from narrow windows). */
static void exact_sums(void **state)
{
    (void)state;
    const double cs[] = {1e-3, 0.1, 0.5, 2.0, 50.0}, Rs[] = {0, 1e-4, 0.05, 0.7, 30.0};
    for (size_t k = 0; k < 5; k++) {
        hdp_noise_law one = {HDP_NOISE_MIXTURE, 0.25, 5, 0.3, 0.0, 0.25, 0.25, NULL, 0};
        hdp_noise_law two = {HDP_NOISE_MIXTURE, 0.25, 5, 0.5, 0.5, 1e-14, 1e-14, NULL, 0};
        double pm[2] = {-0.5, 0.5};
        hdp_noise_law emp = {HDP_NOISE_EMPIRICAL, 0.25, 5, 0, 0, 0, 0, pm, 2};
        hdp_clip *m1 = hdp_clip_alloc_law(&one, cs[k]), *m2 = hdp_clip_alloc_law(&two, cs[k]);
        hdp_clip *e = hdp_clip_alloc_law(&emp, cs[k]);
        hdp_clip *g = hdp_clip_alloc(HDP_NOISE_GAUSSIAN, 0.25, 5, cs[k]);
        hdp_clip *rd = hdp_clip_alloc(HDP_NOISE_RADEMACHER, 0.25, 5, cs[k]);
        for (size_t r = 0; r < 5; r++) {
            hdp_clip_values a, b;
            hdp_clip_eval_values(m1, Rs[r], &a);
            hdp_clip_eval_values(g, Rs[r], &b);
            assert_rel(a.mu, b.mu, 1e-12, 0);
            assert_rel(a.V, b.V, 1e-12, 0);
            hdp_clip_eval_values(rd, Rs[r], &b);
            hdp_clip_eval_values(e, Rs[r], &a);
            assert_rel(a.mu, b.mu, 1e-14, 1e-300);
            assert_rel(a.V, b.V, 1e-14, 0);
            if (Rs[r] > 0) { /* v = 1e-14 moves the residual's variance by 1e-14 / (2R) */
                hdp_clip_eval_values(m2, Rs[r], &a);
                assert_rel(a.mu, b.mu, 1e-8, 1e-12);
                assert_rel(a.V, b.V, 1e-8, 0);
            }
        }
        hdp_clip_free(m1);
        hdp_clip_free(m2);
        hdp_clip_free(e);
        hdp_clip_free(g);
        hdp_clip_free(rd);
    }
    size_t n = 300;
    double *z = skewed_sample(n, 0.25);
    for (size_t k = 1; k < 4; k++) {
        hdp_clip *e = law_clip(HDP_NOISE_EMPIRICAL, 0.25, cs[k], z, n);
        for (size_t r = 2; r < 5; r++) {
            double sd = sqrt(2 * Rs[r]), c = cs[k], P = 0, E = 0;
            for (size_t i = 0; i < n; i++) {
                double m = -z[i], al = (-c - m) / sd, be = (c - m) / sd, p = Phi(be) - Phi(al);
                P += p / (double)n;
                E += ((m * m + sd * sd) * p + 2 * m * sd * (phi(al) - phi(be)) +
                      sd * sd * (al * phi(al) - be * phi(be)) + c * c * (1 - p)) /
                     (double)n;
            }
            hdp_clip_values a;
            hdp_clip_eval_values(e, Rs[r], &a);
            assert_rel(a.mu, P, 1e-12, 0);
            assert_rel(a.V, 0.5 * E, 1e-12, 0);
        }
        hdp_clip_free(e);
    }
    free(z);
}

/* The fits of laplace, uniform and empirical against direct evaluation at random R (and 0),
 * c from 1e-6 to 1e6, tau^2 from 1e-6 to 1e6: 1e-10 relative, the derivatives against central
 * differences; tau^2 = 0 is no label noise for every law. */
static void fits_match_direct(void **state)
{
    (void)state;
    const double cs[] = {1e-6, 1e-2, 0.5, 30, 1e6}, tau2s[] = {1e-6, 0.5, 1e6};
    const hdp_noise_kind kinds[] = {HDP_NOISE_LAPLACE, HDP_NOISE_UNIFORM, HDP_NOISE_EMPIRICAL};
    unsigned seed = 4242;
    for (int l = 0; l < 3; l++) {
        double worst = 0;
        int fitted = 0;
        for (int k = 0; k < 15; k++) {
            double c = cs[k % 5], tau2 = tau2s[k / 5];
            double Rmax = 1e6 * fmax(tau2, c * c);
            size_t n = 400;
            double *z = skewed_sample(n, tau2);
            hdp_clip *fit = law_clip(kinds[l], tau2, c, z, n);
            hdp_clip *direct = law_clip(kinds[l], tau2, c, z, n);
            free(z);
            hdp_error err;
            hdp_error_clear(&err);
            assert_int_equal(hdp_clip_tabulate(fit, Rmax, &err), HDP_OK);
            hdp_clip_table_info info;
            hdp_clip_table_get(fit, &info);
            print_message("law %d c %g tau2 %g: %zu pieces (%zu direct), %ld evaluations, %.1f "
                          "ms%s\n",
                          l, c, tau2, info.pieces, info.direct, info.evaluations,
                          1e3 * info.seconds, info.failed ? " (failed)" : "");
            fitted += !info.failed;
            /* a fit that does not converge leaves direct evaluation (checked below all the
             * same): only where c is far below the noise's scale (docs/theory.md §2.3) */
            if (info.failed)
                assert_true(c < 0.1 * sqrt(tau2));
            for (int j = 0; j < 25; j++) {
                seed = seed * 1103515245u + 12345u;
                double x = (double)(seed >> 8) / 16777216.0;
                double lo = 1e-8 * fmax(tau2, c * c);
                double R = j == 0 ? 0.0 : lo * pow(Rmax / lo, x);
                hdp_clip_values a, b;
                hdp_clip_eval(fit, R, &a);
                hdp_clip_eval_values(direct, R, &b);
                double emu = fabs(a.mu - b.mu) / b.mu, eV = fabs(a.V - b.V) / b.V;
                if (b.mu == 0)
                    emu = a.mu == 0 ? 0 : 1;
                worst = fmax(worst, fmax(emu, eV));
                if (!(emu <= 1e-10 && eV <= 1e-10))
                    print_error("R %g: mu %.17g / %.17g, V %.17g / %.17g\n", R, a.mu, b.mu, a.V,
                                b.V);
                assert_true(emu <= 1e-10 && eV <= 1e-10);
                hdp_clip_values f;
                if (j % 5 != 1 || !hdp_clip_eval_fitted(fit, R, &f))
                    continue;
                /* steps of 1e-4 s for the quadratures (their ~1e-12 noise), 1e-6 s for the
                 * sample's exact sums (its fit has narrow pieces where values lie near c) */
                double rel = kinds[l] == HDP_NOISE_EMPIRICAL ? 1e-6 : 1e-4;
                double s0 = fmin(0.5 * tau2, 0.25 * c * c); /* (the fit's offset, or below) */
                double h = rel * (R + s0), Rc = fmax(R, 2 * h);
                hdp_clip_values p, m;
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
            hdp_clip_free(fit);
            hdp_clip_free(direct);
        }
        print_message("law %d: largest relative error of the fit %.2g, %d of 15 fitted\n", l,
                      worst, fitted);
        assert_true(fitted == 15); /* (with the retry in log(R + c^2/4), issue 31) */
    }
    /* tau^2 = 0: no label noise (the Gaussian closed form at tau^2 = 0) */
    double zero[2] = {0, 0};
    for (int l = 0; l < 2; l++) {
        hdp_clip *a = law_clip(kinds[l], 0.0, 0.3, zero, 2);
        hdp_clip *g = hdp_clip_alloc(HDP_NOISE_NONE, 0, 5, 0.3);
        hdp_clip_values x, y;
        hdp_clip_eval(a, 0.2, &x);
        hdp_clip_eval(g, 0.2, &y);
        assert_true(x.mu == y.mu && x.V == y.V && x.dmu == y.dmu && x.dV == y.dV);
        hdp_clip_free(a);
        hdp_clip_free(g);
    }
}

/* An empirical sample: refused when too short, not finite, constant or of a mean beyond 5
 * standard errors; else centred; the same sample is one fit (the cache compares values). */
static void empirical_sample_checks(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    double one[1] = {0.3}, two[2] = {1, 1}, bad[3] = {0.1, NAN, -0.1}, far[4] = {5, 6, 5, 6};
    double tau2 = -1;
    assert_int_equal(hdp_noise_sample_check(one, 1, "f.txt", &tau2, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "f.txt: 1 label-noise value"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_noise_sample_check(two, 2, "f.txt", &tau2, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "all equal"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_noise_sample_check(bad, 3, "f.txt", &tau2, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "value 2 is not finite"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_noise_sample_check(far, 4, "f.txt", &tau2, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "standard errors"));
    hdp_error_clear(&err);
    double ok[4] = {1.1, -0.9, 0.6, -0.6}; /* mean 0.05: 0.12 standard errors */
    assert_int_equal(hdp_noise_sample_check(ok, 4, "f.txt", &tau2, &err), HDP_OK);
    assert_rel(ok[0], 1.05, 1e-15, 0);
    assert_rel(tau2, (1.05 * 1.05 + 0.95 * 0.95 + 0.55 * 0.55 + 0.65 * 0.65) / 4, 1e-15, 0);

    /* a model from memory, then from a file (the same values), the same final risk */
    hdp_model a, b;
    hdp_model_init(&a);
    double *z = skewed_sample(50, 0.3);
    assert_int_equal(hdp_model_set_noise_sample(&a, z, 50, "residuals", &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&a, &err), HDP_OK);
    assert_rel(a.tau2, 0.3, 1e-12, 0);
    hdp_model_init(&b);
    assert_int_equal(hdp_model_set(&b, "data.noise=empirical", &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&b, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "noise_file"));
    hdp_model_free(&b);
    hdp_error_clear(&err);
    hdp_model copy;
    assert_int_equal(hdp_model_with(&a, "clip.c", "0.5", &copy, &err), HDP_OK);
    assert_true(copy.noise_values != a.noise_values && copy.noise_len == 50 &&
                !memcmp(copy.noise_values, a.noise_values, 50 * sizeof(double)));
    hdp_clip *f1 = hdp_clip_alloc_fitted(&copy, 0.5, &err);
    double R_max = hdp_clip_range(&copy);
    hdp_noise_law law;
    hdp_noise_law_of_model(&copy, &law);
    hdp_clip *f2 = hdp_clip_alloc_law_fitted(&law, 0.5, R_max, &err);
    assert_non_null(f1);
    assert_non_null(f2);
    hdp_clip_table_info i1, i2;
    hdp_clip_table_get(f1, &i1);
    hdp_clip_table_get(f2, &i2);
    assert_true(i1.pieces > 0 && i2.cached && i2.pieces == i1.pieces);
    law.n = 49; /* another sample: another fit */
    hdp_clip *f3 = hdp_clip_alloc_law_fitted(&law, 0.5, R_max, &err);
    hdp_clip_table_get(f3, &i2);
    assert_false(i2.cached);
    hdp_clip_free(f1);
    hdp_clip_free(f2);
    hdp_clip_free(f3);
    hdp_model_free(&copy);
    hdp_model_free(&a);
    free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_forms),
        cmocka_unit_test(exact_sums),
        cmocka_unit_test(fits_match_direct),
        cmocka_unit_test(empirical_sample_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
