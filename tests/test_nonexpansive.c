/* test_nonexpansive.c — the privacy accountant's precondition (docs/theory.md §6.1): the tail of
 * ||x||^2 against the chi-square law, a Monte Carlo count and importance sampling; the
 * precondition of a model; the Monte Carlo's count of violating steps and clip.feature_norm. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "hdpsgd/privacy.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/spectrum.h"
#include "testutil.h"

static void load(hdp_model *m, const char *file, const char *set)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(m);
    if (file) {
        char path[1024];
        snprintf(path, sizeof path, "%s/models/%s", HDP_SOURCE_DIR, file);
        assert_int_equal(hdp_model_load_file(m, path, &err), HDP_OK);
    }
    if (set)
        assert_int_equal(hdp_model_set(m, set, &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(m, &err), HDP_OK);
}

/* power-law eigenvalues j^(-alpha), mean 1, decreasing */
static double *powerlaw(long d, double alpha)
{
    double *l = malloc(sizeof(double) * (size_t)d), s = 0;
    assert_non_null(l);
    for (long j = 0; j < d; j++)
        s += l[j] = pow((double)(j + 1), -alpha);
    for (long j = 0; j < d; j++)
        l[j] *= (double)d / s;
    return l;
}

/* Isotropic: the exact chi-square; nearly isotropic (weights 1 and 1 + 1e-9, so that the
 * saddlepoint approximation is used): the chi-square to 1e-5 relative from d = 20 on, in tails
 * from 0.03 down to 1e-159. */
static void tail_chi_square(void **state)
{
    (void)state;
    const long ds[] = {20, 200, 800};
    const double ratio[] = {1.2, 1.5, 2.0, 3.0};
    for (int a = 0; a < 3; a++) {
        long d = ds[a];
        double *iso = malloc(sizeof(double) * (size_t)d), *near = malloc(sizeof(double) * (size_t)d);
        assert_true(iso && near);
        for (long i = 0; i < d; i++) {
            iso[i] = 1.0;
            near[i] = 1.0 + 1e-9 * (double)(i % 2);
        }
        for (int j = 0; j < 4; j++) {
            double t = ratio[j] * (double)d, q = gsl_cdf_chisq_Q(t, (double)d);
            assert_rel(exp(hdp_norm2_log_tail(iso, d, t)), q, 1e-12, 0);
            assert_rel(exp(hdp_norm2_log_tail(near, d, t)), q, d >= 200 ? 1e-6 : 1e-4, 0);
        }
        free(iso);
        free(near);
    }
    /* below the mean and at it; t <= 0; zero eigenvalues add nothing; bad input */
    double l[4] = {2, 1, 1, 0};
    assert_true(exp(hdp_norm2_log_tail(l, 4, 1.0)) > 0.8);
    assert_true(hdp_norm2_log_tail(l, 4, 0.0) == 0.0);
    double z[2] = {0, 0};
    assert_true(isinf(hdp_norm2_log_tail(z, 2, 1.0)));
    double neg[2] = {1, -1};
    assert_true(isnan(hdp_norm2_log_tail(neg, 2, 1.0)));
    assert_true(isnan(hdp_norm2_log_tail(NULL, 2, 1.0)));
}

/* A power-law spectrum (d = 50, alpha = 1): the tail against the fraction of 2e5 Gaussian
 * rows above t, within 4 binomial standard errors (about 6 % at P ~ 2 %). */
static void tail_monte_carlo(void **state)
{
    (void)state;
    const long d = 50, N = 200000;
    double *l = powerlaw(d, 1.0);
    double t = 2.0 * (double)d;
    double p = exp(hdp_norm2_log_tail(l, d, t));
    assert_true(p > 0.005 && p < 0.1);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    long above = 0;
    for (long k = 0; k < N; k++) {
        double q = 0;
        for (long i = 0; i < d; i++) {
            double g = gsl_ran_gaussian_ziggurat(r, 1.0);
            q += l[i] * g * g;
        }
        above += q > t;
    }
    double f = (double)above / (double)N, se = sqrt(p * (1 - p) / (double)N);
    assert_true(fabs(f - p) < 4 * se);
    gsl_rng_free(r);
    free(l);
}

/* The default model's tail at its threshold, 800 (~1e-18): against an unbiased importance-
 * sampling estimate (rows drawn from the law tilted at s, weighted by exp(K(s) - s Q)). The
 * saddlepoint approximation is 3 % low there (a few large eigenvalues dominate the tail):
 * within 8 %, the estimate's standard error about 2 %. */
static void tail_importance_sampling(void **state)
{
    (void)state;
    const long d = 200, N = 100000;
    double *l = powerlaw(d, 0.5), t = 800, s = 0.0655, K = 0;
    for (long i = 0; i < d; i++)
        K += -0.5 * log1p(-2 * s * l[i]);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    double acc = 0, acc2 = 0;
    for (long k = 0; k < N; k++) {
        double q = 0;
        for (long i = 0; i < d; i++) {
            double g = gsl_ran_gaussian_ziggurat(r, 1.0 / sqrt(1 - 2 * s * l[i]));
            q += l[i] * g * g;
        }
        double w = q > t ? exp(K - s * q) : 0;
        acc += w;
        acc2 += w * w;
    }
    double mean = acc / N, se = sqrt((acc2 / N - mean * mean) / N);
    double p = exp(hdp_norm2_log_tail(l, d, t));
    assert_true(se < 0.03 * mean);
    assert_true(p > 1e-19 && p < 1e-17);
    assert_rel(p, mean, 0.08, 0);
    gsl_rng_free(r);
    free(l);
}

static void eval_model(const hdp_model *m, hdp_nonexpansive *ne)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_spectrum spec;
    assert_int_equal(hdp_spectrum_build(m, &spec, &err), HDP_OK);
    assert_int_equal(hdp_nonexpansive_eval(m, spec.lambda, spec.d, ne, &err), HDP_OK);
    hdp_spectrum_free(&spec);
}

/* models/near-stability.ini: isotropic, d = 800, n = 1600, eta~ = 3.5 constant: a step violates
 * the precondition when chi2_800 > 3200/3.5, probability 0.2999 %, 4.80 steps per run; with
 * feature_norm = auto none does, and the clipped rows are that same fraction, with the second
 * moment removed E[(Q - b)_+]/d = (d Q_{d+2}(b) - b Q_d(b))/d. */
static void near_stability(void **state)
{
    (void)state;
    hdp_model m;
    hdp_nonexpansive ne;
    load(&m, "near-stability.ini", NULL);
    eval_model(&m, &ne);
    double b = 2.0 * 1600 / 3.5, q = gsl_cdf_chisq_Q(b, 800);
    assert_rel(ne.eta_max, 3.5 / 1600, 1e-15, 0);
    assert_rel(ne.threshold, b, 1e-14, 0);
    assert_rel(ne.p_step, q, 1e-12, 0);
    assert_true(fabs(ne.p_step - 0.003) < 1e-5);
    assert_true(ne.exact);
    assert_rel(ne.expected, 1600 * q, 1e-12, 0);
    assert_true(ne.feature_norm == 0 && ne.clip_fraction == 0 && ne.clip_moment == 0);
    hdp_model_free(&m);

    load(&m, "near-stability.ini", "clip.feature_norm=auto");
    eval_model(&m, &ne);
    double B = hdp_feature_norm_bound(&m);
    assert_true(B == ne.feature_norm);
    assert_true(ne.eta_max * B * B <= 2.0);
    double up = nextafter(B, INFINITY);
    assert_true(ne.eta_max * up * up > 2.0 || fabs(B * B - b) < 1e-12 * b);
    assert_true(ne.p_step == 0 && ne.expected == 0 && isinf(ne.log10_p_step));
    assert_rel(ne.clip_fraction, gsl_cdf_chisq_Q(B * B, 800), 1e-12, 0);
    double moment = (800 * gsl_cdf_chisq_Q(B * B, 802) - B * B * gsl_cdf_chisq_Q(B * B, 800)) / 800;
    assert_rel(ne.clip_moment, moment, 1e-5, 0);
    hdp_model_free(&m);

    /* a B with eta_max B^2 > 2 leaves the violations as they were */
    load(&m, "near-stability.ini", "clip.feature_norm=40");
    eval_model(&m, &ne);
    assert_rel(ne.p_step, q, 1e-12, 0);
    assert_rel(ne.clip_fraction, gsl_cdf_chisq_Q(1600, 800), 1e-12, 0);
    hdp_model_free(&m);
}

/* The default model: P ~ 1e-18 per step, the sum over the 2000 steps of the optimal schedule
 * between n P_{n-1} and n P_0; bounded over blocks (n = 1e7), refined until the bounds agree,
 * it lies between the Riemann sums and equals the sum at n = 2000. */
static void default_model(void **state)
{
    (void)state;
    hdp_model m;
    hdp_nonexpansive ne;
    load(&m, NULL, NULL);
    eval_model(&m, &ne);
    assert_true(ne.p_step > 1e-19 && ne.p_step < 1e-17);
    assert_rel(ne.log10_p_step, log10(ne.p_step), 1e-12, 0);
    assert_true(ne.exact && ne.expected < 2000 * ne.p_step && ne.expected > ne.p_step);
    hdp_model_free(&m);

    load(&m, NULL, "data.n=10000000");
    eval_model(&m, &ne);
    assert_false(ne.exact);
    assert_true(ne.expected_lower <= ne.expected && ne.expected > 0);
    assert_true(ne.expected - ne.expected_lower <= 1e-6 * ne.expected); /* refined to agree */
    /* the sum between the Riemann sums of every 1000th step (P_k is non-increasing): left
     * >= sum >= right, so both intervals must meet */
    hdp_error err;
    hdp_error_clear(&err);
    hdp_spectrum spec;
    assert_int_equal(hdp_spectrum_build(&m, &spec, &err), HDP_OK);
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    double left = 0, right = 0;
    for (long k = 0; k < m.n; k += 1000) {
        double eta, sigma;
        hdp_sched_step(&s, m.n, k, &eta, &sigma);
        left += 1000 * exp(hdp_norm2_log_tail(spec.lambda, spec.d, 2 / eta));
        hdp_sched_step(&s, m.n, k + 999, &eta, &sigma);
        right += 1000 * exp(hdp_norm2_log_tail(spec.lambda, spec.d, 2 / eta));
    }
    hdp_spectrum_free(&spec);
    assert_true(right <= left);
    assert_true(right <= ne.expected * (1 + 1e-9) && ne.expected_lower <= left * (1 + 1e-9));
    /* n does not change it here: eta_max = c1/(2 d) and the same law in t for any n */
    assert_rel(ne.expected, 6.821103639770623e-18, 1e-6, 0);
    hdp_model_free(&m);
}

/* The Monte Carlo on near-stability.ini: the fraction of violating steps within 4 standard
 * errors of the predicted 0.2999 %; with feature_norm = auto none, and the clipped rows are
 * the very rows that violated (the rows do not depend on the iterate). */
static void sim_counts(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    load(&m, "near-stability.ini", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.runs = 40;
    opt.seed = 5;
    hdp_mc_result res;
    assert_int_equal(hdp_sim_run(&m, &opt, &res, &err), HDP_OK);
    assert_int_equal(res.diverged_runs, 0);
    double steps = 40.0 * 1600, q = gsl_cdf_chisq_Q(2.0 * 1600 / 3.5, 800);
    double v = res.nonexpansive_violations;
    assert_true(fabs(v / steps - q) < 4 * sqrt(q * (1 - q) / steps));
    assert_true(res.feature_clipped == 0);
    double final_off = res.final_mean;
    hdp_mc_result_free(&res);
    hdp_model_free(&m);

    load(&m, "near-stability.ini", "clip.feature_norm=auto");
    assert_int_equal(hdp_sim_run(&m, &opt, &res, &err), HDP_OK);
    assert_true(res.nonexpansive_violations == 0);
    assert_true(res.feature_clipped == v);
    assert_true(res.final_mean != final_off); /* the clipped rows changed the runs ... */
    assert_rel(res.final_mean, final_off, 0.01, 0); /* ... by little */
    hdp_mc_result_free(&res);
    hdp_model_free(&m);

    /* the SDE draws no rows */
    load(&m, "near-stability.ini", NULL);
    opt.runs = 4;
    assert_int_equal(hdp_sde_run(&m, &opt, &res, &err), HDP_OK);
    assert_true(res.nonexpansive_violations == 0 && res.feature_clipped == 0);
    hdp_mc_result_free(&res);
    hdp_model_free(&m);
}

/* The default model with feature_norm = auto: no row is ever clipped, and the runs are the
 * same bits as without it. */
static void default_unchanged(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    load(&m, NULL, NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.runs = 8;
    hdp_mc_result a, b;
    assert_int_equal(hdp_sim_run(&m, &opt, &a, &err), HDP_OK);
    hdp_model_free(&m);
    load(&m, NULL, "clip.feature_norm=auto");
    assert_int_equal(hdp_sim_run(&m, &opt, &b, &err), HDP_OK);
    assert_true(b.feature_clipped == 0 && a.nonexpansive_violations == 0);
    for (long i = 0; i < a.points; i++)
        assert_true(a.mean[i] == b.mean[i] && a.stderr_[i] == b.stderr_[i]);
    hdp_mc_result_free(&a);
    hdp_mc_result_free(&b);
    hdp_model_free(&m);
}

/* The key: auto and numbers read back through the model's text; bad values refused. */
static void key_values(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    char buf[64];
    load(&m, NULL, "clip.feature_norm=auto");
    assert_true(m.feature_norm == HDP_AUTO_DOUBLE);
    assert_true(hdp_model_value_text(&m, "clip", "feature_norm", buf, sizeof buf));
    assert_string_equal(buf, "auto");
    hdp_model_free(&m);
    load(&m, NULL, "clip.feature_norm=12.5");
    assert_true(hdp_feature_norm_bound(&m) == 12.5);
    hdp_model_free(&m);
    load(&m, NULL, NULL);
    assert_true(hdp_feature_norm_bound(&m) == 0);
    assert_int_equal(hdp_model_set(&m, "clip.feature_norm=-1", &err), HDP_EINPUT);
    assert_int_equal(hdp_model_set(&m, "clip.feature_norm=inf", &err), HDP_EINPUT);
    assert_int_equal(hdp_model_set(&m, "clip.feature_norm=nan", &err), HDP_EINPUT);
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tail_chi_square),
        cmocka_unit_test(tail_monte_carlo),
        cmocka_unit_test(tail_importance_sampling),
        cmocka_unit_test(near_stability),
        cmocka_unit_test(default_model),
        cmocka_unit_test(sim_counts),
        cmocka_unit_test(default_unchanged),
        cmocka_unit_test(key_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
