/*
 * test_meanfield.c — ode.model = rows (src/core/data_meanfield.c, docs/theory.md §9.5):
 * its first steps against the recursion written out here with plain loops (no BLAS), with and
 * without clipping; the progress callback and its cancel; the cancel flag; the refusals.
 * (The whole curve against scripts/data_meanfield.py: tests/cli/data_meanfield.sh.)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/ode.h"

#define N 120
#define D 5

/* a small data set with labels that depend on x non-linearly (residuals that clipping reads) */
static void data_model(hdp_model *m, const char *const *sets)
{
    static double X[N * D], y[N];
    for (long i = 0; i < N; i++) {
        for (long j = 0; j < D; j++)
            X[i * D + j] = sin(1.3 * (double)(i * D + j) + 0.7 * (double)j) * (1.0 + 0.5 * (double)j);
        y[i] = X[i * D] + 0.5 * X[i * D + 1] * X[i * D + 2] + (i % 3 == 0 ? 1.0 : -0.5);
    }
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(m);
    assert_int_equal(hdp_model_set_data_arrays(m, X, N, D, y, NULL, 0, NULL, &err), HDP_OK);
    assert_int_equal(hdp_model_set(m, "ode.model=rows", &err), HDP_OK);
    for (; sets && *sets; sets++)
        assert_int_equal(hdp_model_set(m, *sets, &err), HDP_OK);
    if (hdp_model_finalize(m, &err) != HDP_OK) {
        print_error("finalize: %s\n", err.msg);
        fail();
    }
}

static double clampd(double v, double k) { return v < -k ? -k : v > k ? k : v; }

/* The recursion's steps by plain loops, for s_i = 0 at the first step and c = inf (where the
 * moments are r, r^2 + s^2, 1) at later ones: risk[k] after k steps, k = 0..steps. */
static void reference(const hdp_model *m, double eta, long steps, double *risk)
{
    const hdp_dataset *ds = &hdp_model_data(m)->train;
    double x[N][D], mean[D], C[D][D] = {{0}}, Cn[D][D], g[D], Q[D][D], H[D][D], kap[N];
    for (long i = 0; i < N; i++) {
        double q = 0;
        for (long j = 0; j < D; j++) {
            x[i][j] = hdp_matrix_get(&ds->rows, i, j);
            q += x[i][j] * x[i][j];
        }
        kap[i] = m->c * sqrt((double)D) / sqrt(q);
    }
    for (long j = 0; j < D; j++)
        mean[j] = -ds->theta_eig[j];
    for (long k = 0; k <= steps; k++) {
        double R = 0;
        for (long j = 0; j < D; j++)
            R += 0.5 * ds->lambda[j] * (mean[j] * mean[j] + C[j][j]);
        risk[k] = R;
        if (k == steps)
            break;
        memset(g, 0, sizeof g);
        memset(Q, 0, sizeof Q);
        memset(H, 0, sizeof H);
        for (long i = 0; i < N; i++) {
            double r = -ds->residual[i], s2 = 0;
            for (long a = 0; a < D; a++) {
                r += x[i][a] * mean[a];
                for (long b = 0; b < D; b++)
                    s2 += x[i][a] * C[a][b] * x[i][b];
            }
            double e1 = k == 0 ? clampd(r, kap[i]) : r;
            double e2 = k == 0 ? e1 * e1 : r * r + s2, p = k == 0 ? fabs(r) < kap[i] : 1.0;
            for (long a = 0; a < D; a++) {
                g[a] += e1 * x[i][a] / N;
                for (long b = 0; b < D; b++) {
                    Q[a][b] += e2 * x[i][a] * x[i][b] / N;
                    H[a][b] += p * x[i][a] * x[i][b] / N;
                }
            }
        }
        for (long a = 0; a < D; a++) /* C <- C - eta (H C + C H) + eta^2 (Q - g g^T) */
            for (long b = 0; b < D; b++) {
                double v = 0;
                for (long u = 0; u < D; u++)
                    v += H[a][u] * C[u][b] + C[a][u] * H[u][b];
                Cn[a][b] = C[a][b] - eta * v + eta * eta * (Q[a][b] - g[a] * g[b]);
            }
        memcpy(C, Cn, sizeof C);
        for (long a = 0; a < D; a++)
            mean[a] -= eta * g[a];
    }
}

static void expect_steps(const char *const *sets, long steps)
{
    hdp_model m;
    data_model(&m, sets);
    assert_int_equal(m.n, steps);
    hdp_ode_result res;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_ode_solve(&m, &res, &err), HDP_OK);
    assert_int_equal(res.points, steps + 1);
    assert_string_equal(res.solver, "rows");
    double ref[8];
    reference(&m, 0.4 / (double)steps, steps, ref); /* constant schedule: eta_k = eta0 / n */
    for (long k = 0; k <= steps; k++) {
        assert_true(fabs(res.risk[k] - ref[k]) <= 1e-12 * fabs(ref[k]));
        assert_true(isnan(res.upper[k]) && isnan(res.lower[k]));
    }
    assert_true(res.final_risk == res.risk[steps] && res.final_noise == 0);
    hdp_ode_result_free(&res);
    hdp_model_free(&m);
}

/* clipped (c = 0.3), one step: the clamp of the residuals at s = 0 */
static void first_step_clipped(void **state)
{
    (void)state;
    const char *sets[] = {"clip.c=0.3", "privacy.rho=inf", "schedule.kind=constant",
                          "schedule.eta0=0.4", "data.gamma=5", "ode.points=2", NULL};
    expect_steps(sets, 1);
}

/* no clipping, three steps: the fluctuation's spread s_i enters from the second on */
static void steps_unclipped(void **state)
{
    (void)state;
    const char *sets[] = {"clip.c=inf", "privacy.rho=inf", "schedule.kind=constant",
                          "schedule.eta0=0.4", "data.gamma=1.6666666666666667", "ode.points=4",
                          NULL};
    expect_steps(sets, 3);
}

static long calls, stop_at;
static int count_progress(const char *what, long done, long total, double value, void *user)
{
    (void)user;
    assert_string_equal(what, "ode rows");
    assert_true(done >= 0 && done <= total && isfinite(value));
    calls++;
    return stop_at > 0 && calls >= stop_at;
}

static void progress_and_cancel(void **state)
{
    (void)state;
    const char *sets[] = {"clip.c=0.3", "privacy.rho=0.5", "data.gamma=0.02", NULL}; /* n = 250 */
    hdp_model m;
    data_model(&m, sets);
    hdp_ode_result res;
    hdp_error err;
    hdp_error_clear(&err);
    calls = 0;
    stop_at = 0;
    assert_int_equal(hdp_ode_solve_progress(&m, count_progress, NULL, &res, &err), HDP_OK);
    assert_true(calls >= 100 && calls <= m.n + 1);
    assert_true(res.final_noise > 0 && isfinite(res.final_risk));
    hdp_ode_result_free(&res);
    calls = 0;
    stop_at = 3;
    assert_int_equal(hdp_ode_solve_progress(&m, count_progress, NULL, &res, &err), HDP_ECANCELLED);
    assert_int_equal(calls, 3);
    hdp_ode_result_free(&res);
    volatile int flag = 1; /* the thread's cancel flag */
    const volatile int *old = hdp_cancel_flag_set(&flag);
    assert_int_equal(hdp_ode_solve(&m, &res, &err), HDP_ECANCELLED);
    hdp_cancel_flag_set(old);
    hdp_ode_result_free(&res);
    hdp_model_free(&m);
}

static void refusals(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model m;
    hdp_model_init(&m); /* synthetic data */
    assert_int_equal(hdp_model_set(&m, "ode.model=rows", &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_OK);
    hdp_ode_result res;
    assert_int_equal(hdp_ode_solve(&m, &res, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[ode] model"));
    hdp_ode_result_free(&res);
    hdp_model_free(&m);
    const char *budget[] = {"data.gamma=1e-8", NULL}; /* n = 5e8: N d^2 n = 1.5e12 */
    data_model(&m, budget);
    hdp_error_clear(&err);
    assert_int_equal(hdp_ode_solve(&m, &res, &err), HDP_EINPUT);
    if (!strstr(err.msg, "N d^2 n = 120 x 5^2 x 500000000")) {
        print_error("%s\n", err.msg);
        fail();
    }
    hdp_ode_result_free(&res);
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_step_clipped),
        cmocka_unit_test(steps_unclipped),
        cmocka_unit_test(progress_and_cancel),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
