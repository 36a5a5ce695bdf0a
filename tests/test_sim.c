/* test_sim.c — the Monte Carlo of DP-SGD (docs/theory.md §1) and the
 * Euler-Maruyama SDE (docs/theory.md §4): exact solutions within 4 standard
 * errors, the final-iterate jump of docs/theory.md §3, the accountant of docs/theory.md §6 on the
 * realised schedule, agreement of the SDE with the ODE, independence of the
 * thread count, divergence and option checks; the generic run loop of mc.h (streams,
 * slots, start order, workspaces, progress, the lowest failing run).
 * Statistical tolerances are 4 measured standard errors, never hand-tuned;
 * the seeds are fixed, so every run of this program sees the same numbers. */
#define _GNU_SOURCE /* pthread_getaffinity_np */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/clip.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/sim.h"
#include "sim/mc.h"
#include "sim/mc_internal.h"
#include "testutil.h"

typedef hdp_status (*mc_fn)(const hdp_model *, const hdp_mc_options *, hdp_mc_result *,
                            hdp_error *);

static void run_mc(mc_fn fn, const hdp_model *m, long runs, int threads, hdp_mc_result *r)
{
    hdp_mc_options opt;
    hdp_mc_options_from_model(m, &opt);
    opt.runs = runs;
    opt.threads = threads;
    hdp_error err;
    hdp_error_clear(&err);
    if (fn(m, &opt, r, &err) != HDP_OK) {
        print_error("Monte Carlo: %s\n", err.msg);
        fail();
    }
}

/* |mean - exact| < 4 stderr; where stderr = 0 (t = 0 on the isotropic
 * spectrum: R(0) = r*^2/2 exactly) the comparison is to rounding, 1e-12. */
static void assert_within_4se(double mean, double se, double exact, const char *what, double t)
{
    double tol = fmax(4.0 * se, 1e-12 * fabs(exact));
    if (!(fabs(mean - exact) < tol)) {
        print_error("%s at t = %g: mean %.8g, exact %.8g, |diff| = %.3g > 4 stderr = %.3g\n",
                    what, t, mean, exact, fabs(mean - exact), 4.0 * se);
        fail();
    }
}

/* Sigma = I, c = inf, rho = inf, constant eta~ (docs/theory.md §3, exact special case):
 * R(t) = R_inf + (R(0) - R_inf) e^{-(2 eta - gamma eta^2) t},
 * R_inf = gamma eta tau^2 / (2 (2 - gamma eta)).
 * The discrete algorithm also has an exact mean: with eta_k = eta/n and
 * E[(x^T e)^2 ||x||^2] = (d + 2) ||e||^2 for x ~ N(0, I_d),
 *   E R_{k+1} = q E R_k + gamma eta^2 tau^2 / (2n),  q = 1 - (2 eta - gamma eta^2)/n + 2 eta^2/n^2,
 * which differs from the ODE by O(1/n) (here about 0.5 % at t = 1, about half
 * a standard error of 400 runs; measured with 4000 runs it shows as a
 * z-score near 3 against docs/theory.md §3 and near 1 against the discrete mean);
 * both are checked. */
static void exact_special_case(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", "clip.c=inf", "privacy.rho=inf",
               "schedule.kind=constant", "schedule.eta0=1", "data.d=100", "data.gamma=0.5",
               "data.tau2=0.5", "ode.points=11", NULL);
    hdp_mc_result r;
    run_mc(hdp_sim_run, &m, 400, 0, &r);
    double g = m.gamma, e = m.eta0, tau2 = m.tau2, n = (double)m.n, R0 = 0.5;
    double Rinf = g * e * tau2 / (2 * (2 - g * e));
    double q = 1 - (2 * e - g * e * e) / n + 2 * e * e / (n * n);
    double Rinf_d = g * e * e * tau2 / (2 * n) / (1 - q);
    assert_int_equal(r.points, 11);
    assert_int_equal(r.diverged_runs, 0);
    for (long i = 0; i < r.points; i++) {
        double t = r.t[i];
        double exact = Rinf + (R0 - Rinf) * exp(-(2 * e - g * e * e) * t);
        double k = round(t * n);
        double exact_d = Rinf_d + (R0 - Rinf_d) * pow(q, k);
        assert_within_4se(r.mean[i], r.stderr_[i], exact, "docs/theory.md §3 exact formula", t);
        assert_within_4se(r.mean[i], r.stderr_[i], exact_d, "exact discrete mean", t);
        assert_true(r.q10[i] <= r.q50[i] && r.q50[i] <= r.q90[i]);
        assert_true(r.clipped[i] == 0.0); /* c = inf: never clipped */
    }
    assert_true(isinf(r.rho_accounted));
    assert_true(r.final_jump_mean == 0.0);
    hdp_mc_result_free(&r);

    /* the SDE with h = 1/n has the same mean law up to O(1/n): the exact formula */
    run_mc(hdp_sde_run, &m, 400, 0, &r);
    for (long i = 0; i < r.points; i++) {
        double exact = Rinf + (R0 - Rinf) * exp(-(2 * e - g * e * e) * r.t[i]);
        assert_within_4se(r.mean[i], r.stderr_[i], exact, "SDE vs docs/theory.md §3 exact formula", r.t[i]);
        assert_true(r.clipped[i] == 0.0);
    }
    hdp_mc_result_free(&r);
    hdp_model_free(&m);
}

/* The output schedule: the final-iterate noise adds 2 c^2 gamma^2 eta~(1)^2 / rho^2
 * to the excess risk (docs/theory.md §3). Measured per run as the risk of theta_n minus
 * the risk of the same iterate without the last step's noise; for the output
 * schedule sigma_{n-1} = eta~(1)/(n rho) exactly, and Tr Sigma = d makes the
 * expectation exact on any spectrum (here the default power law). */
static void final_jump(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "schedule.kind=output", "schedule.eta0=1", "clip.c=0.5", "privacy.rho=1",
               "data.d=200", "data.gamma=0.5", "ode.points=11", NULL);
    double c = m.c, g = m.gamma, rho = m.rho, eta1 = m.eta0;
    double expected = 2 * c * c * g * g * eta1 * eta1 / (rho * rho);
    mc_fn fns[2] = {hdp_sim_run, hdp_sde_run};
    const char *names[2] = {"sim", "sde"};
    for (int f = 0; f < 2; f++) {
        hdp_mc_result r;
        run_mc(fns[f], &m, 200, 0, &r);
        print_message("%s: jump %.5g +- %.2g, expected %.5g\n", names[f], r.final_jump_mean,
                      r.final_jump_stderr, expected);
        assert_true(r.final_jump_stderr > 0);
        assert_within_4se(r.final_jump_mean, r.final_jump_stderr, expected, names[f], 1.0);
        /* the jump is also visible in the means: mean(1) - mean(0.9) is the jump
         * plus the drift over the last interval, so it must exceed most of it */
        assert_true(r.mean[r.points - 1] - r.mean[r.points - 2] > 0.5 * expected);
        hdp_mc_result_free(&r);
    }
    hdp_model_free(&m);
}

/* docs/theory.md §6: the accountant on the eta_k, sigma_k the runs used equals rho. */
static void rho_accounted(void **state)
{
    (void)state;
    FILE *f = fopen("test_sim_table.txt", "w");
    assert_non_null(f);
    fprintf(f, "0 2\n0.3 1.5\n0.7 0.8\n1 0.4\n");
    fclose(f);
    const char *kinds[] = {"schedule.kind=output", "schedule.kind=linear-noise",
                           "schedule.kind=optimal", "schedule.kind=table"};
    for (int k = 0; k < 4; k++) {
        hdp_model m;
        make_model(&m, kinds[k], "privacy.rho=0.7", "schedule.file=test_sim_table.txt",
                   "data.d=20", "data.gamma=0.05", NULL);
        hdp_mc_result r;
        run_mc(hdp_sim_run, &m, 2, 0, &r);
        assert_rel(r.rho_accounted, 0.7, 1e-12, 0);
        hdp_mc_result_free(&r);
        run_mc(hdp_sde_run, &m, 2, 0, &r);
        assert_rel(r.rho_accounted, 0.7, 1e-12, 0);
        hdp_mc_result_free(&r);
        hdp_model_free(&m);
    }
    remove("test_sim_table.txt");
}

/* The SDE at h = 1/n against the ODE (docs/theory.md §3, §4) with clipping and private
 * noise. Tolerance: 4 standard errors, or 3 % of the ODE where that is larger,
 * because the ODE is the d -> infinity limit of the SDE's mean (error
 * O(log^2 n / sqrt(n)), docs/theory.md §3): at d = 200 a deterministic bias of that
 * order is expected on top of the Monte Carlo error. */
static void sde_matches_ode(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", "clip.c=0.5", "privacy.rho=0.5",
               "schedule.kind=linear-noise", "schedule.eta0=1", "data.d=200", "ode.points=21",
               NULL);
    hdp_ode_result o;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_ode_solve(&m, &o, &err), HDP_OK);
    hdp_mc_result r;
    run_mc(hdp_sde_run, &m, 200, 0, &r);
    assert_int_equal(r.points, o.points);
    for (long i = 0; i < r.points; i++) {
        double tol = fmax(4.0 * r.stderr_[i], 0.03 * o.risk[i]);
        if (!(fabs(r.mean[i] - o.risk[i]) <= tol)) {
            print_error("t = %g: SDE %.6g +- %.2g, ODE %.6g\n", r.t[i], r.mean[i], r.stderr_[i],
                        o.risk[i]);
            fail();
        }
        /* the probability of clipping is 1 - mu_c(R): compare with the ODE's mu at t */
        if (i > 0)
            assert_true(r.clipped[i] > 0 && r.clipped[i] < 1);
    }
    hdp_mc_result_free(&r);
    hdp_ode_result_free(&o);
    hdp_model_free(&m);
}

/* Same seed, 1 or 2 threads: identical arrays (per-run slots, serial reduction), for every
 * label-noise law with a sampler of its own. */
static void threads_do_not_matter(void **state)
{
    (void)state;
    const char *laws[] = {"data.noise=student", "data.noise=laplace", "data.noise=uniform",
                          "data.noise=mixture", "data.noise=empirical"};
    for (int l = 0; l < 5; l++) {
        hdp_model m;
        make_model(&m, "data.d=40", "data.gamma=0.2", "ode.points=6", laws[l],
                   "data.noise_file=" HDP_SOURCE_DIR "/models/empirical-noise.txt", NULL);
        mc_fn fns[2] = {hdp_sim_run, hdp_sde_run};
        for (int f = 0; f < 2; f++) {
            hdp_mc_result a, b;
            run_mc(fns[f], &m, 7, 1, &a);
            run_mc(fns[f], &m, 7, 2, &b);
            assert_int_equal(a.threads, 1);
            assert_int_equal(b.threads, 2);
            size_t bytes = sizeof(double) * (size_t)a.points;
            assert_memory_equal(a.mean, b.mean, bytes);
            assert_memory_equal(a.stderr_, b.stderr_, bytes);
            assert_memory_equal(a.q10, b.q10, bytes);
            assert_memory_equal(a.q90, b.q90, bytes);
            assert_memory_equal(a.clipped, b.clipped, bytes);
            assert_true(a.final_jump_mean == b.final_jump_mean);
            hdp_mc_result_free(&a);
            hdp_mc_result_free(&b);
        }
        hdp_model_free(&m);
    }
}

/* The driver pins its threads to CPUs during the runs (sim.c, thread placement) and
 * must leave the caller's thread as it found it: the affinity mask before and after two
 * threaded Monte Carlos is the same (with a mask of one CPU too, where it does not pin). */
static void affinity_restored(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=24", "data.gamma=0.2", "ode.points=6", NULL);
    cpu_set_t before, after;
    assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
    hdp_mc_result r;
    run_mc(hdp_sim_run, &m, 4, 2, &r);
    hdp_mc_result_free(&r);
    run_mc(hdp_sde_run, &m, 4, 2, &r);
    hdp_mc_result_free(&r);
    assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
    assert_true(CPU_EQUAL(&before, &after));
    print_message("%d CPUs in the mask before and after\n", CPU_COUNT(&after));
    hdp_model_free(&m);
}

/* Every label-noise law runs; Rademacher and Student give finite, sane curves. */
static void noise_laws(void **state)
{
    (void)state;
    const char *laws[] = {"data.noise=gaussian", "data.noise=student", "data.noise=rademacher",
                          "data.noise=none"};
    for (int i = 0; i < 4; i++) {
        hdp_model m;
        make_model(&m, laws[i], "data.d=30", "data.gamma=0.3", "ode.points=5", NULL);
        hdp_mc_result r;
        run_mc(hdp_sim_run, &m, 4, 0, &r);
        for (long k = 0; k < r.points; k++)
            assert_true(isfinite(r.mean[k]) && r.mean[k] > 0);
        hdp_mc_result_free(&r);
        hdp_model_free(&m);
    }
}

/* Student-t noise of 1e300 degrees of freedom: GSL's sampler (Marsaglia's rejection) gives
 * the Gaussian law, so the Monte Carlo's final risk agrees with the Gaussian model's within
 * 4 standard errors of their difference (independent draws: the sampler uses the stream
 * differently). */
static void student_huge_df(void **state)
{
    (void)state;
    hdp_model mt, mg;
    make_model(&mt, "data.noise=student", "data.noise_df=1e300", "data.tau2=0.5", "data.d=60",
               "data.gamma=0.3", "ode.points=5", NULL);
    make_model(&mg, "data.noise=gaussian", "data.tau2=0.5", "data.d=60", "data.gamma=0.3",
               "ode.points=5", NULL);
    hdp_mc_result a, b;
    run_mc(hdp_sim_run, &mt, 400, 0, &a);
    run_mc(hdp_sim_run, &mg, 400, 0, &b);
    double se = sqrt(a.final_stderr * a.final_stderr + b.final_stderr * b.final_stderr);
    print_message("nu = 1e300: %.5f +- %.5f, Gaussian %.5f +- %.5f\n", a.final_mean,
                  a.final_stderr, b.final_mean, b.final_stderr);
    assert_true(se > 0 && fabs(a.final_mean - b.final_mean) <= 4 * se);
    hdp_mc_result_free(&a);
    hdp_mc_result_free(&b);
    hdp_model_free(&mt);
    hdp_model_free(&mg);
}

/* Divergence: all runs diverge -> HDP_ENUMERIC naming it; some -> excluded,
 * finite statistics over the others. */
static void divergence(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "schedule.kind=constant", "privacy.rho=inf", "clip.c=inf",
               "schedule.eta0=60", "data.gamma=0.1", "data.d=50", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.runs = 3;
    hdp_mc_result r;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_sim_run(&m, &opt, &r, &err), HDP_ENUMERIC);
    assert_non_null(strstr(err.msg, "diverged"));
    hdp_mc_result_free(&r);
    hdp_error_clear(&err);
    assert_int_equal(hdp_sde_run(&m, &opt, &r, &err), HDP_ENUMERIC);
    assert_non_null(strstr(err.msg, "diverged"));
    hdp_mc_result_free(&r);
    hdp_model_free(&m);

    /* at the stability limit eta~ = 2/gamma the mean risk stays put and a low
     * divergence factor catches some of the runs */
    make_model(&m, "data.spectrum=isotropic", "schedule.kind=constant", "privacy.rho=inf",
               "clip.c=inf", "schedule.eta0=4", "data.gamma=0.5", "data.d=50",
               "data.noise=none", "sim.divergence_factor=1.5", NULL);
    run_mc(hdp_sim_run, &m, 20, 0, &r);
    assert_true(r.diverged_runs > 0 && r.diverged_runs < 20);
    for (long k = 0; k < r.points; k++)
        assert_true(isfinite(r.mean[k]) && isfinite(r.stderr_[k]) && r.q90[k] <= r.threshold);
    hdp_mc_result_free(&r);
    hdp_model_free(&m);
}


static void bad_options(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    assert_int_equal(opt.runs, m.runs);
    assert_true(opt.seed == m.seed);
    hdp_mc_result r;
    hdp_error err;
    opt.runs = 0;
    hdp_error_clear(&err);
    assert_int_equal(hdp_sim_run(&m, &opt, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "runs"));
    hdp_mc_result_free(&r);
    /* the options meet the ranges of the keys they stand for, sim.runs and sde.step */
    opt.runs = 10000001;
    hdp_error_clear(&err);
    assert_int_equal(hdp_sim_run(&m, &opt, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[sim] runs = 10000001 is out of range: expected an integer "
                                    ">= 1 and <= 1e+07"));
    hdp_mc_result_free(&r);
    opt.runs = 1;
    opt.sde_step = 1.5;
    hdp_error_clear(&err);
    assert_int_equal(hdp_sde_run(&m, &opt, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[sde] step = 1.5 is out of range"));
    hdp_mc_result_free(&r);
    opt.sde_step = 0;
    opt.threads = -1;
    hdp_error_clear(&err);
    assert_int_equal(hdp_sde_run(&m, &opt, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "threads"));
    hdp_mc_result_free(&r);
    hdp_model_free(&m);
}

/* ---- the generic run loop (src/sim/mc.h) ---- */

typedef struct {
    long fail_from; /* runs r >= fail_from with r odd fail (runs: none) */
    int ws_fail;    /* ws_alloc returns NULL */
} loop_ctx;

static void *loop_ws_alloc(const void *vc)
{
    const loop_ctx *c = vc;
    return c->ws_fail ? NULL : calloc(4, sizeof(double));
}

/* run r: three outputs of its stream and r itself into its slot */
static hdp_status loop_run(const void *vc, long r, void *ws, hdp_xoshiro *g, void *slot,
                           hdp_error *err)
{
    const loop_ctx *c = vc;
    double *out = slot;
    if (!ws) /* (no cmocka assertions in the loop's threads) */
        return hdp_fail(err, HDP_EINPUT, "run %ld without its workspace", r);
    if (r >= c->fail_from && r % 2 == 1)
        return hdp_fail(err, HDP_ENUMERIC, "run %ld failed", r);
    for (int i = 0; i < 3; i++)
        out[i] = hdp_xoshiro_double(g);
    out[3] = (double)r;
    return HDP_OK;
}

/* counts the calls; a call with a wrong name or count adds 1000 (checked by the caller: no
 * cmocka assertions in the loop's threads) */
static int count_progress(const char *method, long done, long total, double value, void *user)
{
    long *n = user;
    *n += (strcmp(method, "test") == 0 && done >= 1 && done <= total && isnan(value)) ? 1 : 1000;
    return 0;
}

static hdp_status loop_go(const loop_ctx *c, long runs, int threads, const long *order,
                          double *slots, long *progress, hdp_error *err)
{
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, 77, 1);
    hdp_mc_loop loop = {.name = "test", .runs = runs, .threads = threads, .ctx = c,
                        .ws_alloc = loop_ws_alloc, .ws_free = free, .run = loop_run,
                        .first = &first, .slots = slots, .slot_size = 4 * sizeof(double),
                        .order = order, .progress = count_progress, .progress_user = progress};
    hdp_error_clear(err);
    return hdp_mc_loop_run(&loop, err);
}

/* Run r sees the seed's stream jumped r + 1 times and writes its own slot, whatever the
 * thread count and the start order; the progress callback counts every run. */
static void loop_streams_and_slots(void **state)
{
    (void)state;
    enum { RUNS = 13 };
    loop_ctx c = {RUNS, 0};
    long order[RUNS];
    for (long j = 0; j < RUNS; j++)
        order[j] = RUNS - 1 - j;
    double want[RUNS * 4];
    for (long r = 0; r < RUNS; r++) {
        hdp_xoshiro g;
        hdp_xoshiro_stream(&g, 77, (uint64_t)r + 1);
        for (int i = 0; i < 3; i++)
            want[r * 4 + i] = hdp_xoshiro_double(&g);
        want[r * 4 + 3] = (double)r;
    }
    for (int threads = 1; threads <= 3; threads++)
        for (int ordered = 0; ordered < 2; ordered++) {
            double got[RUNS * 4];
            long progress = 0;
            hdp_error err;
            assert_int_equal(loop_go(&c, RUNS, threads, ordered ? order : NULL, got, &progress,
                                     &err), HDP_OK);
            assert_memory_equal(got, want, sizeof want);
            assert_int_equal(progress, RUNS);
        }
}

/* Failures: the lowest failing run's message for every thread count (runs above it may be
 * skipped, none below it); a workspace that cannot be allocated is HDP_ENOMEM; bad sizes are
 * HDP_EINPUT. */
static void loop_failures(void **state)
{
    (void)state;
    enum { RUNS = 40 };
    double slots[RUNS * 4];
    hdp_error err;
    long progress;
    for (int threads = 1; threads <= 3; threads++) {
        loop_ctx c = {5, 0}; /* runs 5, 7, 9, ... fail */
        progress = 0;
        memset(slots, 0, sizeof slots);
        assert_int_equal(loop_go(&c, RUNS, threads, NULL, slots, &progress, &err), HDP_ENUMERIC);
        assert_string_equal(err.msg, "run 5 failed");
        for (long r = 0; r < 5; r++) /* every run below the failure ran */
            assert_true(slots[r * 4 + 3] == (double)r);
    }
    loop_ctx nows = {RUNS, 1};
    assert_int_equal(loop_go(&nows, RUNS, 2, NULL, slots, &progress, &err), HDP_ENOMEM);
    assert_non_null(strstr(err.msg, "workspace"));
    loop_ctx ok = {RUNS, 0};
    assert_int_equal(loop_go(&ok, 0, 1, NULL, slots, &progress, &err), HDP_EINPUT);
    assert_int_equal(loop_go(&ok, RUNS, -1, NULL, slots, &progress, &err), HDP_EINPUT);
    assert_int_equal(hdp_mc_loop_threads(3, 8), 3);
    assert_int_equal(hdp_mc_loop_threads(10, 2), 2);
    assert_true(hdp_mc_loop_threads(10, 0) >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_special_case), cmocka_unit_test(final_jump),
        cmocka_unit_test(rho_accounted),      cmocka_unit_test(sde_matches_ode),
        cmocka_unit_test(threads_do_not_matter), cmocka_unit_test(noise_laws),
        cmocka_unit_test(divergence),         
        cmocka_unit_test(bad_options),        cmocka_unit_test(affinity_restored),
        cmocka_unit_test(loop_streams_and_slots), cmocka_unit_test(loop_failures),
        cmocka_unit_test(student_huge_df),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
