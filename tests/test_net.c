/* test_net.c — DP-GD on a two-layer ReLU network (the privacy-for-free paper's Fig. 1;
 * docs/theory.md §7.4): the factorised per-sample gradient norms against materialised
 * per-sample gradients, the clipped sums against the sum of materialised clipped gradients,
 * clipping never letting a per-sample gradient past C_clip, the noise calibration,
 * determinism across thread counts, plain GD learning the synthetic teacher. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/net.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "testutil.h"

enum { N = 37, D = 9, P = 13, K = 4 };

/* A small random problem: W, A, x (N x D), labels. */
static void problem(float *W, float *A, float *x, int *y)
{
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 7);
    for (long j = 0; j < P * D; j++)
        W[j] = (float)(hdp_rng_normal(&g) / sqrt(D));
    for (long j = 0; j < K * P; j++)
        A[j] = (float)(hdp_rng_normal(&g) / sqrt(P));
    for (long j = 0; j < N * D; j++)
        x[j] = (float)hdp_rng_normal(&g);
    for (long i = 0; i < N; i++)
        y[i] = (int)(hdp_xoshiro_next(&g) % K);
}

/* The materialised per-sample gradient of sample i (dW: P x D, dA: K x P), in double. */
static void materialise(const float *W, const float *A, const float *x, int y,
                        hdp_net_loss_kind loss, double *dW, double *dA)
{
    double z[P], h[P], f[K], g[K];
    for (int u = 0; u < P; u++) {
        z[u] = 0;
        for (int j = 0; j < D; j++)
            z[u] += (double)W[u * D + j] * x[j];
        h[u] = z[u] > 0 ? z[u] : 0;
    }
    double mx = -INFINITY, s = 0;
    for (int k = 0; k < K; k++) {
        f[k] = 0;
        for (int u = 0; u < P; u++)
            f[k] += (double)A[k * P + u] * h[u];
        if (f[k] > mx)
            mx = f[k];
    }
    for (int k = 0; k < K; k++)
        s += exp(f[k] - mx);
    for (int k = 0; k < K; k++)
        g[k] = (loss == HDP_NET_CE ? exp(f[k] - mx) / s : f[k]) - (k == y);
    for (int k = 0; k < K; k++)
        for (int u = 0; u < P; u++)
            dA[k * P + u] = g[k] * h[u];
    for (int u = 0; u < P; u++) {
        double b = 0;
        for (int k = 0; k < K; k++)
            b += (double)A[k * P + u] * g[k];
        for (int j = 0; j < D; j++)
            dW[u * D + j] = z[u] > 0 ? b * x[j] : 0;
    }
}

static double norm2(const double *v, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += v[i] * v[i];
    return s;
}

static void norms_and_clipped_sum(hdp_net_loss_kind loss, int first)
{
    float W[P * D], A[K * P], x[N * D], gW[P * D], gA[K * P];
    int y[N];
    double norm[N], dW[P * D], dA[K * P], sW[P * D] = {0}, sA[K * P] = {0};
    problem(W, A, x, y);
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_net_grad_norms(W, A, P, D, K, x, y, N, loss, first, norm, &err), HDP_OK);
    /* a clip at the median norm, so that about half the samples are clipped */
    double sorted[N];
    memcpy(sorted, norm, sizeof sorted);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (sorted[j] < sorted[i]) {
                double t = sorted[i];
                sorted[i] = sorted[j], sorted[j] = t;
            }
    const double C = sorted[N / 2];
    int clipped = 0;
    for (int i = 0; i < N; i++) {
        materialise(W, A, x + i * D, y[i], loss, dW, dA);
        double m = sqrt(norm2(dA, K * P) + (first ? norm2(dW, P * D) : 0));
        assert_rel(norm[i], m, 1e-5, 1e-6); /* float32 rows and products */
        double c = m > C ? C / m : 1;
        clipped += c < 1;
        /* the clipped gradient's norm never exceeds C */
        assert_true(c * m <= C * (1 + 1e-12));
        for (int j = 0; j < K * P; j++)
            sA[j] += c * dA[j];
        for (int j = 0; j < P * D; j++)
            sW[j] += c * dW[j];
    }
    assert_true(clipped >= N / 2 - 1 && clipped <= N / 2 + 1);
    double norms2[N];
    assert_int_equal(hdp_net_clipped_grad(W, A, P, D, K, x, y, N, loss, first, C, 3,
                                          first ? gW : NULL, gA, norms2, &err),
                     HDP_OK);
    double scale = sqrt(norm2(sA, K * P));
    for (int j = 0; j < K * P; j++)
        assert_true(fabs(gA[j] - sA[j]) <= 1e-5 * scale);
    if (first) {
        double sw = sqrt(norm2(sW, P * D));
        for (int j = 0; j < P * D; j++)
            assert_true(fabs(gW[j] - sW[j]) <= 1e-5 * sw);
    }
}

static void test_norms_ce_both(void **state)
{
    (void)state;
    norms_and_clipped_sum(HDP_NET_CE, 1);
}
static void test_norms_squared_both(void **state)
{
    (void)state;
    norms_and_clipped_sum(HDP_NET_SQUARED, 1);
}
static void test_norms_ce_second(void **state)
{
    (void)state;
    norms_and_clipped_sum(HDP_NET_CE, 0);
}

static hdp_net_config config(void)
{
    hdp_net_config c;
    memset(&c, 0, sizeof c);
    c.width = 70, c.loss = HDP_NET_CE, c.train = HDP_NET_TRAIN_BOTH, c.steps = 30, c.lr = 0.5;
    c.clip = 0.5 * sqrt(70.0), c.epsilon = 2, c.delta = 1e-3, c.records = 5, c.seed = 99;
    return c;
}

static void train(const hdp_net_data *dt, const hdp_net_config *c, int threads, hdp_net_result *r)
{
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_net_train(dt, c, threads, NULL, NULL, r, &err) != HDP_OK) {
        print_error("net train: %s\n", err.msg);
        fail();
    }
}

/* Same bits for 1, 2 and 3 threads (samples span several blocks, width several unit blocks);
 * clipping bounded by C_clip; sigma by the paper's bound. */
static void test_threads_and_clip(void **state)
{
    (void)state;
    hdp_net_data dt;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_net_data_synthetic(20, 5, 700, 100, 300, 5, &dt, &err), HDP_OK);
    for (int tr = 0; tr < 2; tr++) {
        hdp_net_config c = config();
        c.train = tr ? HDP_NET_TRAIN_SECOND : HDP_NET_TRAIN_BOTH;
        hdp_net_result r[3];
        for (int t = 0; t < 3; t++)
            train(&dt, &c, t + 1, &r[t]);
        for (int t = 1; t < 3; t++)
            for (long j = 0; j < r[0].points; j++) {
                assert_true(r[t].test_loss[j] == r[0].test_loss[j]);
                assert_true(r[t].train_loss[j] == r[0].train_loss[j]);
                assert_true(r[t].val_accuracy[j] == r[0].val_accuracy[j]);
            }
        assert_true(r[0].max_clipped_norm <= c.clip * (1 + 1e-12));
        assert_true(r[0].clipped_fraction[1] > 0);
        assert_rel(r[0].sigma, sqrt(c.lr * c.steps) * sqrt(8 * log(1 / c.delta)) / c.epsilon,
                   1e-14, 0);
        assert_rel(r[0].noise_std, sqrt(c.lr) * 2 * c.clip * r[0].sigma / 700, 1e-14, 0);
        assert_rel(r[0].rho_z, c.lr * c.steps / (2 * r[0].sigma * r[0].sigma), 1e-14, 0);
        assert_int_equal(r[0].points, 6);
        assert_true(r[0].step[5] == 30);
        for (int t = 0; t < 3; t++)
            hdp_net_result_free(&r[t]);
    }
    hdp_net_data_free(&dt);
}

/* Plain GD (epsilon = inf) learns the linear-argmax teacher well above chance (1/K), and the
 * private run at a small epsilon is worse; the zCDP route gives a smaller sigma. */
static void test_learns(void **state)
{
    (void)state;
    hdp_net_data dt;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_net_data_synthetic(10, 3, 1000, 0, 1000, 11, &dt, &err), HDP_OK);
    hdp_net_config c = config();
    c.epsilon = INFINITY, c.steps = 100, c.records = 4, c.lr = 1;
    hdp_net_result g, p;
    train(&dt, &c, 2, &g);
    assert_true(g.test_accuracy[4] > 0.8);
    assert_true(g.test_loss[4] < g.test_loss[0]);
    assert_true(g.sigma == 0 && g.clipped_fraction[4] == 0);
    assert_true(isnan(g.val_loss[4]));
    c.epsilon = 0.05;
    train(&dt, &c, 2, &p);
    assert_true(p.test_accuracy[4] < g.test_accuracy[4]);
    double sz;
    int route;
    c.calibration = HDP_NET_CAL_ZCDP;
    assert_int_equal(hdp_net_sigma(&c, &sz, &route, &err), HDP_OK);
    assert_true(route == 1 && sz < p.sigma);
    hdp_net_result_free(&g), hdp_net_result_free(&p);
    hdp_net_data_free(&dt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_norms_ce_both),
        cmocka_unit_test(test_norms_squared_both),
        cmocka_unit_test(test_norms_ce_second),
        cmocka_unit_test(test_threads_and_clip),
        cmocka_unit_test(test_learns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
