/* test_finite.c — standard DP-SGD on a finite training set (docs/theory.md §6.6,
 * hdpsgd/finite.h, src/sim/finite.c): the batch samplers, the steps and the calibrated noise
 * multiplier against the accountant, and two statistical checks of the simulation: full-batch
 * GD without noise or clipping against the closed form of the GD recursion on the finite
 * sample (averaged over many samples), and one shuffled epoch of batch 1 on N = n rows against
 * one-pass DP-SGD (the same law). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_matrix.h>

#include "hdpsgd/accountant.h"
#include "hdpsgd/finite.h"
#include "hdpsgd/problem.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/sim.h"
#include "sim/finite_internal.h"
#include "testutil.h"

/* Poisson batches: the count has mean qN and variance Nq(1-q), each row is in with probability
 * q, rows increase; q = 1 takes every row */
static void poisson_batch_count(void **state)
{
    (void)state;
    const long N = 500, draws = 20000;
    const double qs[] = {0.03, 0.5, 1.0 / 500, 0.97};
    long *rows = malloc(sizeof(long) * N);
    long *hits = calloc((size_t)N, sizeof(long));
    assert_true(rows && hits);
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 11);
    for (int t = 0; t < 4; t++) {
        double q = qs[t], sum = 0, sum2 = 0;
        memset(hits, 0, sizeof(long) * N);
        for (long k = 0; k < draws; k++) {
            long n = hdp_finite_poisson_batch(&g, N, q, rows);
            assert_true(n >= 0 && n <= N);
            for (long i = 0; i < n; i++) {
                assert_true(rows[i] >= 0 && rows[i] < N);
                if (i > 0)
                    assert_true(rows[i] > rows[i - 1]);
                hits[rows[i]]++;
            }
            sum += (double)n;
            sum2 += (double)n * (double)n;
        }
        double mean = sum / draws, var = sum2 / draws - mean * mean;
        double se = sqrt(N * q * (1 - q) / draws);
        assert_true(fabs(mean - q * N) <= 4 * se);
        assert_true(fabs(var - N * q * (1 - q)) <= 0.05 * N * q * (1 - q));
        /* the first, middle and last rows, each in with probability q */
        const long probe[] = {0, N / 2, N - 1};
        for (int i = 0; i < 3; i++) {
            double f = (double)hits[probe[i]] / draws;
            assert_true(fabs(f - q) <= 4.5 * sqrt(q * (1 - q) / draws));
        }
    }
    assert_int_equal(hdp_finite_poisson_batch(&g, N, 1.0, rows), N);
    for (long i = 0; i < N; i++)
        assert_int_equal(rows[i], i);
    free(rows);
    free(hits);
}

/* a shuffle is a permutation, and element 0 lands on each of 5 places with probability 1/5 */
static void shuffle_is_uniform(void **state)
{
    (void)state;
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 3);
    long perm[5], where[5] = {0};
    const long draws = 50000;
    for (long k = 0; k < draws; k++) {
        for (long i = 0; i < 5; i++)
            perm[i] = i;
        hdp_finite_shuffle(&g, perm, 5);
        long seen = 0;
        for (long i = 0; i < 5; i++) {
            seen |= 1L << perm[i];
            if (perm[i] == 0)
                where[i]++;
        }
        assert_int_equal(seen, 31);
    }
    for (int i = 0; i < 5; i++)
        assert_true(fabs((double)where[i] / draws - 0.2) <= 4 * sqrt(0.16 / draws));
}

static hdp_finite_privacy privacy_of(const hdp_model *m)
{
    hdp_finite_privacy p;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_finite_privacy_of(m, &p, &err), HDP_OK);
    return p;
}

/* exact epsilon of mu-GDP at delta (E Gaussian mechanisms compose to mu = sqrt(E)/sigma') */
static double gdp_epsilon(double mu, double delta)
{
    double lo = 0, hi = 1e4;
    for (int i = 0; i < 200; i++) {
        double e = 0.5 * (lo + hi);
        double d = gsl_cdf_ugaussian_P(-e / mu + mu / 2) - exp(e) * gsl_cdf_ugaussian_P(-e / mu - mu / 2);
        if (d > delta)
            lo = e;
        else
            hi = e;
    }
    return hi;
}

/* the steps (Poisson: ceil(E/q) as the accountant counts them; shuffle: E ceil(N/B)) and sigma:
 * calibrated as hdp_accountant_calibrate does over all steps (Poisson) or E compositions at
 * sensitivity 2C (shuffle, replace-one: sigma/2 at q = 1), given sigma's epsilon */
static void steps_and_calibration(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model m;
    make_model(&m, "data.d=10", "data.train_size=60000", "sgd.sampling=poisson", "sgd.batch=256",
               "sgd.epochs=60", "sgd.noise_multiplier=1.12", NULL);
    hdp_finite_privacy p = privacy_of(&m);
    assert_true(p.finite && p.poisson && !p.calibrated);
    assert_int_equal(p.steps, 14063);
    assert_int_equal(p.steps, hdp_accountant_steps_for_epochs(60, 256.0 / 60000));
    assert_int_equal(p.compositions, p.steps);
    hdp_accountant_query q = {256.0 / 60000, 1.12, 14063, 1e-5, 0};
    double eps;
    assert_int_equal(hdp_accountant_epsilon_of(&q, HDP_ACCOUNTANT_PLD, &eps, &err), HDP_OK);
    assert_true(p.epsilon == eps && p.noise_multiplier == 1.12);
    hdp_model_free(&m);

    /* calibrated from privacy.epsilon = 2 by RDP, over ceil(3/0.05) = 60 steps */
    make_model(&m, "data.d=10", "data.train_size=1000", "sgd.sampling=poisson", "sgd.batch=50",
               "sgd.epochs=3", "privacy.epsilon=2", "sgd.accountant=rdp", NULL);
    p = privacy_of(&m);
    assert_true(p.calibrated);
    assert_int_equal(p.steps, 60);
    hdp_accountant_query c = {0.05, 0, 60, 1e-5, 0};
    double sigma;
    assert_int_equal(hdp_accountant_calibrate(&c, HDP_ACCOUNTANT_RDP, m.epsilon, &sigma, &err),
                     HDP_OK);
    assert_true(p.noise_multiplier == sigma);
    assert_true(p.epsilon <= 2 + 1e-9 && p.epsilon >= 2 - 1e-3);
    hdp_model_free(&m);

    /* shuffle: 3 epochs of ceil(1000/64) = 16 batches; 3 compositions at sensitivity 2C */
    make_model(&m, "data.d=10", "data.train_size=1000", "sgd.sampling=shuffle", "sgd.batch=64",
               "sgd.epochs=3", "privacy.epsilon=2", NULL);
    p = privacy_of(&m);
    assert_true(p.finite && !p.poisson && p.calibrated);
    assert_int_equal(p.steps, 48);
    assert_int_equal(p.compositions, 3);
    hdp_accountant_query s1 = {1.0, 0, 3, 1e-5, 0};
    assert_int_equal(hdp_accountant_calibrate(&s1, HDP_ACCOUNTANT_PLD, m.epsilon, &sigma, &err),
                     HDP_OK);
    assert_true(p.noise_multiplier == 2 * sigma);
    /* the PLD of 3 Gaussian mechanisms is the exact mu-GDP, mu = 2 sqrt(3)/sigma, to 1e-3 */
    double exact = gdp_epsilon(2 * sqrt(3.0) / p.noise_multiplier, 1e-5);
    assert_true(p.epsilon >= exact - 1e-9 && p.epsilon <= exact + 1e-3);
    assert_true(fabs(p.epsilon - 2) <= 1e-3);
    hdp_model_free(&m);

    /* no budget (rho = inf): no noise, epsilon inf; one-pass: not finite */
    make_model(&m, "data.d=10", "data.train_size=100", "sgd.sampling=shuffle", "privacy.rho=inf",
               NULL);
    p = privacy_of(&m);
    assert_true(p.finite && p.noise_multiplier == 0 && isinf(p.epsilon) && !p.calibrated);
    hdp_model_free(&m);
    make_model(&m, "data.d=10", NULL);
    p = privacy_of(&m);
    assert_false(p.finite);
    hdp_model_free(&m);
}

static hdp_mc_result simulate(const hdp_model *m, long runs)
{
    hdp_mc_options opt;
    hdp_mc_options_from_model(m, &opt);
    opt.runs = runs;
    hdp_mc_result r;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_sim_run(m, &opt, &r, &err) != HDP_OK) {
        print_error("%s\n", err.msg);
        fail();
    }
    return r;
}

/* E[R_exc(theta_T) | X] of T steps of GD e <- (I - eta S) e + eta X^T z / N, S = X^T X / N, from
 * e_0 = -theta*, theta* uniform on the sphere of radius r, z ~ N(0, tau^2 I) (N > d: S > 0):
 * with S = V diag(s) V^T (from gsl_eigen_symmv) and w_j = v_j^T Lambda v_j,
 *   (1/2) sum_j w_j [ r^2/d (1 - eta s_j)^(2T) + tau^2/N (1 - (1 - eta s_j)^T)^2 / s_j ] */
static double gd_risk_given_eigen(const gsl_vector *s, const gsl_matrix *V,
                                  const double *lambda, long d, long N, double eta, long T,
                                  double r, double tau2)
{
    double R = 0;
    for (long j = 0; j < d; j++) {
        double w = 0, sj = gsl_vector_get(s, (size_t)j);
        for (long i = 0; i < d; i++)
            w += lambda[i] * gsl_matrix_get(V, (size_t)i, (size_t)j) * gsl_matrix_get(V, (size_t)i, (size_t)j);
        double a = pow(1 - eta * sj, (double)T);
        R += 0.5 * w * (r * r / (double)d * a * a + tau2 / (double)N * (1 - a) * (1 - a) / sj);
    }
    return R;
}

/* sigma = 0, c = inf, B = N: full-batch GD on the run's sample. The simulation's mean excess
 * risk at t = 1/2 and t = 1 against the closed form above averaged over 40000 samples of X
 * (its own Monte Carlo error counted), within 4 combined standard errors. */
static void full_batch_gd_matches_closed_form(void **state)
{
    (void)state;
    const long d = 10, N = 40, T = 20;
    const double eta = 0.15, tau2 = 0.25, r = 1;
    hdp_model m;
    make_model(&m, "data.d=10", "data.spectrum=powerlaw", "data.spectrum_alpha=1",
               "data.train_size=40", "sgd.sampling=shuffle", "sgd.batch=40", "sgd.epochs=20",
               "clip.c=inf", "privacy.rho=inf", "schedule.kind=constant", "schedule.eta0=0.15",
               "ode.points=11", NULL);
    hdp_problem pb;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_problem_build(&m, &pb, &err), HDP_OK);
    assert_int_equal(pb.sgd.steps, T);
    const double *lambda = pb.spec.lambda;
    hdp_mc_result res = simulate(&m, 4000);
    assert_int_equal(res.diverged_runs, 0);
    assert_int_equal(res.points, 11);

    gsl_matrix *S = gsl_matrix_alloc((size_t)d, (size_t)d), *V = gsl_matrix_alloc((size_t)d, (size_t)d);
    gsl_vector *s = gsl_vector_alloc((size_t)d);
    gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc((size_t)d);
    double *X = malloc(sizeof(double) * (size_t)(N * d));
    assert_true(S && V && s && ws && X);
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 1234);
    const long M = 40000;
    const long Ts[2] = {T / 2, T};
    const long pts[2] = {5, 10};
    double sum[2] = {0}, sum2[2] = {0};
    for (long k = 0; k < M; k++) {
        for (long i = 0; i < N * d; i++)
            X[i] = sqrt(lambda[i % d]) * hdp_rng_normal(&g);
        for (long a = 0; a < d; a++)
            for (long b = 0; b <= a; b++) {
                double v = 0;
                for (long i = 0; i < N; i++)
                    v += X[i * d + a] * X[i * d + b];
                gsl_matrix_set(S, (size_t)a, (size_t)b, v / (double)N);
                gsl_matrix_set(S, (size_t)b, (size_t)a, v / (double)N);
            }
        gsl_eigen_symmv(S, s, V, ws);
        for (int h = 0; h < 2; h++) {
            double R = gd_risk_given_eigen(s, V, lambda, d, N, eta, Ts[h], r, tau2);
            sum[h] += R;
            sum2[h] += R * R;
        }
    }
    for (int h = 0; h < 2; h++) {
        double ref = sum[h] / M, ref_se = sqrt((sum2[h] / M - ref * ref) / (M - 1));
        double mc = res.mean[pts[h]], mc_se = res.stderr_[pts[h]];
        print_message("GD after %ld steps: simulated %.6g +- %.2g, closed form %.6g +- %.2g\n",
                      Ts[h], mc, mc_se, ref, ref_se);
        assert_true(fabs(mc - ref) <= 4 * sqrt(mc_se * mc_se + ref_se * ref_se));
        /* the comparison has power: the noise term alone is a sizeable part */
        assert_true(mc_se < 0.03 * ref);
    }
    free(X);
    gsl_eigen_symmv_free(ws);
    gsl_vector_free(s);
    gsl_matrix_free(S);
    gsl_matrix_free(V);
    hdp_mc_result_free(&res);
    hdp_problem_free(&pb);
    hdp_model_free(&m);
}

/* one shuffled epoch of batch 1 over N = n fresh Gaussian rows is one-pass DP-SGD without
 * private noise (each row once, in a random order: the same law), clipping included: the
 * final risks agree within 4 combined standard errors */
static void one_shuffled_epoch_is_one_pass(void **state)
{
    (void)state;
    hdp_model a, b;
    make_model(&a, "data.d=20", "data.n=200", "privacy.rho=inf", "clip.c=0.3", NULL);
    make_model(&b, "data.d=20", "data.n=200", "privacy.rho=inf", "clip.c=0.3",
               "data.train_size=200", "sgd.sampling=shuffle", "sgd.batch=1", "sgd.epochs=1", NULL);
    hdp_mc_result ra = simulate(&a, 3000), rb = simulate(&b, 3000);
    assert_int_equal(rb.steps, 200);
    double se = sqrt(ra.final_stderr * ra.final_stderr + rb.final_stderr * rb.final_stderr);
    print_message("one-pass %.6g +- %.2g, one shuffled epoch %.6g +- %.2g\n", ra.final_mean,
                  ra.final_stderr, rb.final_mean, rb.final_stderr);
    assert_true(fabs(ra.final_mean - rb.final_mean) <= 4 * se);
    /* and a second epoch changes it, measurably */
    hdp_model c;
    make_model(&c, "data.d=20", "data.n=200", "privacy.rho=inf", "clip.c=0.3",
               "data.train_size=200", "sgd.sampling=shuffle", "sgd.batch=1", "sgd.epochs=2", NULL);
    hdp_mc_result rc = simulate(&c, 3000);
    assert_true(rc.final_mean < rb.final_mean - 4 * se);
    hdp_mc_result_free(&ra);
    hdp_mc_result_free(&rb);
    hdp_mc_result_free(&rc);
    hdp_model_free(&a);
    hdp_model_free(&b);
    hdp_model_free(&c);
}

/* the run's JSON numbers: steps, sample rate, sigma; the one-pass accountant does not apply */
static void result_carries_privacy(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=8", "data.train_size=50", "sgd.sampling=poisson", "sgd.batch=5",
               "sgd.epochs=2", "sgd.noise_multiplier=1.5", NULL);
    hdp_mc_result r = simulate(&m, 5);
    assert_true(r.sgd.finite && r.sgd.poisson);
    assert_int_equal(r.steps, 20);
    assert_true(r.sgd.sample_rate == 0.1 && r.sgd.noise_multiplier == 1.5);
    assert_true(isnan(r.rho_accounted));
    assert_true(r.sgd.epsilon > 0 && isfinite(r.sgd.epsilon));
    hdp_mc_result_free(&r);
    hdp_model_free(&m);
}

/* The hook for a data set's rows (hdp_problem.train): on fixed rows without noise every run is
 * the same deterministic recursion, full-batch (shuffle, B = N) with and without clipping; the
 * recorded risk equals a direct evaluation of e <- e - (eta/B) sum_i clip((x_i^T e - z_i) x_i),
 * eta = eta~ B/N, to rounding, at every step, and the runs agree exactly. */
static void fixed_rows_follow_the_recursion(void **state)
{
    (void)state;
    enum { D = 5, NR = 12, T = 7 };
    double x[NR * D], z[NR], target[D];
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 99);
    for (int i = 0; i < NR * D; i++)
        x[i] = hdp_rng_normal(&g);
    for (int i = 0; i < NR; i++)
        z[i] = 0.5 * hdp_rng_normal(&g);
    for (int j = 0; j < D; j++)
        target[j] = hdp_rng_normal(&g);
    hdp_trainset ts = {NR, D, x, z, target, NULL};
    const char *clips[] = {"clip.c=inf", "clip.c=0.2"};
    for (int v = 0; v < 2; v++) {
        hdp_model m;
        make_model(&m, "data.d=5", "data.train_size=12", "sgd.sampling=shuffle", "sgd.batch=12",
                   "sgd.epochs=7", clips[v], "privacy.rho=inf", "schedule.kind=constant",
                   "schedule.eta0=0.3", "ode.points=8", NULL);
        hdp_problem pb;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_problem_build(&m, &pb, &err), HDP_OK);
        pb.train = &ts;
        hdp_mc_options opt;
        hdp_mc_options_from_model(&m, &opt);
        opt.runs = 3;
        hdp_mc_result res;
        assert_int_equal(hdp_sim_run_problem(&pb, &opt, &res, &err), HDP_OK);
        assert_int_equal(res.steps, T);
        const double *lambda = pb.spec.lambda, C = m.c * sqrt((double)D), eta = 0.3;
        double e[D], acc[D];
        for (int j = 0; j < D; j++)
            e[j] = -target[j];
        for (int k = 0; k <= T; k++) {
            double R = 0;
            for (int j = 0; j < D; j++)
                R += 0.5 * lambda[j] * e[j] * e[j];
            assert_rel(res.mean[k], R, 1e-12, 1e-300);
            assert_true(res.stderr_[k] <= 1e-12 * R); /* the runs agree (to the mean's rounding) */
            memset(acc, 0, sizeof acc);
            for (int i = 0; i < NR; i++) {
                double r = -z[i], xx = 0;
                for (int j = 0; j < D; j++) {
                    r += x[i * D + j] * e[j];
                    xx += x[i * D + j] * x[i * D + j];
                }
                double coef = r, gn = fabs(r) * sqrt(xx);
                if (gn > C)
                    coef *= C / gn;
                for (int j = 0; j < D; j++)
                    acc[j] += coef * x[i * D + j];
            }
            for (int j = 0; j < D; j++)
                e[j] -= eta / NR * acc[j];
        }
        if (v == 1)
            assert_true(res.clipped[T] > 0); /* the clip was active */
        hdp_mc_result_free(&res);
        hdp_problem_free(&pb);
        hdp_model_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(poisson_batch_count),
        cmocka_unit_test(shuffle_is_uniform),
        cmocka_unit_test(steps_and_calibration),
        cmocka_unit_test(full_batch_gd_matches_closed_form),
        cmocka_unit_test(one_shuffled_epoch_is_one_pass),
        cmocka_unit_test(result_carries_privacy),
        cmocka_unit_test(fixed_rows_follow_the_recursion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
