/* test_batch.c — batched one-pass DP-SGD ([sgd] batch = B, issue 33): the risk ODE's batch
 * terms (docs/theory.md §3.11; B = 1 is the one-sample right-hand side bit for bit), their
 * Jacobian, the batched schedule and its accountant (§1.6, §6.1), and the Monte Carlo against
 * the exact mean of the batched recursion. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/risk_ode.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/spectrum.h"
#include "testutil.h"

typedef struct {
    hdp_model m;
    hdp_spectrum sp;
    hdp_risk_ode o;
} ode_case;

static void open_case(ode_case *c, const char *batch)
{
    hdp_error err;
    hdp_error_clear(&err);
    make_model(&c->m, "data.d=60", "data.gamma=0.1", batch, NULL);
    assert_int_equal(hdp_spectrum_build(&c->m, &c->sp, &err), HDP_OK);
    assert_int_equal(hdp_rode_init(&c->o, &c->m, &c->sp, NULL, &err), HDP_OK);
}

static void close_case(ode_case *c)
{
    hdp_rode_free(&c->o);
    hdp_spectrum_free(&c->sp);
    hdp_model_free(&c->m);
}

/* a state D_j > 0 that varies over the bins */
static void state(const ode_case *c, double *D, double s)
{
    for (long j = 0; j < c->sp.m; j++)
        D[j] = s * (0.2 + 0.6 * (double)(j % 7) / 7.0);
}

/* B = 1: kappa = 0 and every f_j is lambda_j (-2 eta mu D_j + gamma eta^2 V) + q, the
 * one-sample right-hand side of docs/theory.md §3.1, bit for bit. B = 16: the same plus the
 * batch's terms kappa eta~ mu lambda_j (gamma eta~^2 lambda_j V - eta~ mu lambda_j D_j + q),
 * kappa = (B - 1)/n (written out here from §3.11). */
static void rhs_batch_terms(void **state_)
{
    (void)state_;
    ode_case one, b16;
    open_case(&one, "sgd.batch=1");
    open_case(&b16, "sgd.batch=16");
    assert_true(one.o.kappa == 0.0);
    assert_rel(b16.o.kappa, 15.0 / (double)b16.m.n, 1e-15, 0);
    long m = one.sp.m;
    double *D = malloc(sizeof(double) * (size_t)m), *f = malloc(sizeof(double) * (size_t)m);
    const double ts[] = {0.0, 0.013, 0.37, 0.99};
    for (int it = 0; it < 4; it++) {
        state(&one, D, 0.3 + it);
        hdp_rode_step st;
        hdp_rode_step_at(&one.o, ts[it], &st);
        double R = hdp_rode_risk(&one.o, D);
        hdp_clip_values cv;
        hdp_clip_eval(one.o.clip, R, &cv);
        double g = one.m.gamma, eta = st.eta, q = st.q;
        hdp_rode_coef cf;
        hdp_rode_coefs(&one.o, eta, q, R, 1, &cf);
        assert_int_equal(hdp_rode_rhs(&one.o, &cf, D, f), 0);
        for (long j = 0; j < m; j++) {
            double l = one.sp.bin_lambda[j];
            double alpha = -2.0 * eta * cv.mu, beta = g * eta * eta * cv.V;
            assert_true(f[j] == l * (alpha * D[j] + beta) + q); /* bit for bit */
        }
        hdp_rode_coefs(&b16.o, eta, q, R, 1, &cf);
        assert_int_equal(hdp_rode_rhs(&b16.o, &cf, D, f), 0);
        double k = b16.o.kappa;
        for (long j = 0; j < m; j++) {
            double l = b16.sp.bin_lambda[j];
            double base = -2.0 * l * eta * cv.mu * D[j] + g * l * eta * eta * cv.V + q;
            double batch = k * eta * cv.mu * l * (g * eta * eta * l * cv.V - eta * cv.mu * l * D[j] + q);
            assert_rel(f[j], base + batch, 1e-13, fabs(base) + fabs(batch));
            assert_true(fabs(batch) > 1e-9 * fabs(base)); /* the terms are there */
        }
    }
    free(D);
    free(f);
    close_case(&one);
    close_case(&b16);
}

/* B = 16: the Jacobian diag(a) + u v^T (v_j = w_j lambda_j) of the batched right-hand side
 * against central differences in every D_k. */
static void jacobian_batch(void **state_)
{
    (void)state_;
    ode_case c;
    open_case(&c, "sgd.batch=16");
    long m = c.sp.m;
    double *D = malloc(sizeof(double) * (size_t)m), *fp = malloc(sizeof(double) * (size_t)m),
           *fm = malloc(sizeof(double) * (size_t)m);
    state(&c, D, 0.4);
    hdp_rode_step st;
    hdp_rode_step_at(&c.o, 0.05, &st);
    hdp_rode_coef cf;
    hdp_rode_coefs(&c.o, st.eta, st.q, hdp_rode_risk(&c.o, D), 1, &cf);
    double scale = 0;
    for (long j = 0; j < m; j++)
        scale = fmax(scale, fabs(hdp_rode_a(c.sp.bin_lambda[j], &cf)));
    for (long k = 0; k < m; k += 5) {
        double h = 1e-6 * D[k], d0 = D[k];
        hdp_rode_coef cp, cm;
        D[k] = d0 + h;
        hdp_rode_coefs(&c.o, st.eta, st.q, hdp_rode_risk(&c.o, D), 0, &cp);
        hdp_rode_rhs(&c.o, &cp, D, fp);
        D[k] = d0 - h;
        hdp_rode_coefs(&c.o, st.eta, st.q, hdp_rode_risk(&c.o, D), 0, &cm);
        hdp_rode_rhs(&c.o, &cm, D, fm);
        D[k] = d0;
        double vk = c.sp.bin_weight[k] * c.sp.bin_lambda[k];
        for (long j = 0; j < m; j++) {
            double l = c.sp.bin_lambda[j];
            double J = (j == k ? hdp_rode_a(l, &cf) : 0.0) + hdp_rode_u(l, D[j], &cf) * vk;
            double fd = (fp[j] - fm[j]) / (2 * h);
            assert_true(fabs(J - fd) <= 1e-6 * scale);
        }
    }
    free(D);
    free(fp);
    free(fm);
    close_case(&c);
}

/* The batched schedule (docs/theory.md §1.6) and its accountant (§6.1): B = 1 is
 * hdp_sched_step bit for bit and the accountant rho; B > 1: the noise telescopes (sum of the
 * sigma_k^2 = (eta~(0)/(n rho))^2), the rates sum to the midpoint rule of int eta~, and the
 * accountant on the realised steps is rho max_k eta~(m_k)/eta~(t_k) <= rho (computed here
 * from its definition); rho exactly for the output schedule (eta~ constant). */
static void batched_accountant(void **state_)
{
    (void)state_;
    hdp_model m;
    make_model(&m, NULL); /* default: inverse-time, rho = 0.5, n = 2000 */
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    long n = m.n;
    for (long k = 0; k < n; k++) {
        double e1, s1, e2, s2;
        long rows;
        hdp_sched_step(&s, n, k, &e1, &s1);
        hdp_sched_batch_step(&s, n, 1, k, &e2, &s2, &rows);
        assert_true(e1 == e2 && s1 == s2 && rows == 1);
    }
    assert_true(hdp_privacy_accountant_batches(&s, n, 1) == hdp_privacy_accountant_schedule(&s, n));
    assert_rel(hdp_privacy_accountant_batches(&s, n, 1), m.rho, 1e-12, 0);
    const long Bs[] = {4, 16, 64, 300, 2000};
    for (int i = 0; i < 5; i++) {
        long B = Bs[i], K = hdp_sched_batch_count(n, B), rows_all = 0;
        assert_int_equal(K, (n + B - 1) / B);
        long double var = 0;
        double worst = 0;
        for (long k = 0; k < K; k++) {
            double eta, sig;
            long rows;
            hdp_sched_batch_step(&s, n, B, k, &eta, &sig, &rows);
            rows_all += rows;
            var += (long double)sig * sig;
            double mid = ((double)(k * B) + 0.5 * (double)(rows - 1)) / (double)n;
            assert_rel(eta, (double)rows * hdp_sched_eta(&s, mid) / (double)n, 1e-15, 0);
            worst = fmax(worst, hdp_sched_eta(&s, mid) / hdp_sched_eta(&s, (double)(k * B) / n));
        }
        assert_int_equal(rows_all, n);
        double top = hdp_sched_eta(&s, 0.0) / ((double)n * m.rho);
        assert_rel((double)var, top * top, 1e-12, 0);
        double acc = hdp_privacy_accountant_batches(&s, n, B);
        assert_rel(acc, m.rho * worst, 1e-12, 0);
        assert_true(acc <= m.rho * (1 + 1e-15));
        if (B <= 64) /* within the batch's half-step shift: eta~(m_k)/eta~(t_k) >= 1 - O(B/n) */
            assert_true(acc >= 0.95 * m.rho);
    }
    hdp_schedule o = s;
    o.kind = HDP_SCHED_OUTPUT;
    o.eta0 = 2.0;
    for (int i = 0; i < 5; i++)
        assert_rel(hdp_privacy_accountant_batches(&o, n, Bs[i]), m.rho, 1e-12, 0);
    hdp_model_free(&m);
}

/* The exact special case of docs/theory.md §3.5 for batches: Sigma = I, no clipping, no
 * private noise, constant eta~, Gaussian labels: one step on the average of B fresh rows
 * with eta = B eta~/n gives exactly E R' = R (1 - 2 eta + eta^2 (1 + (d + 1)/B)) +
 * eta^2 tau^2 d/(2B) (E||g||^2 = (d + 2) ||e||^2 + tau^2 d for one row). The Monte Carlo
 * mean at the step boundaries is within 4 standard errors of it. */
static void mc_exact_recursion(void **state_)
{
    (void)state_;
    hdp_model m;
    make_model(&m, "data.d=20", "data.n=200", "data.spectrum=isotropic", "clip.c=inf",
               "privacy.rho=inf", "schedule.kind=constant", "schedule.eta0=1.5",
               "sgd.batch=8", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.runs = 4000;
    opt.threads = 2;
    hdp_mc_result r;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_sim_run(&m, &opt, &r, &err), HDP_OK);
    assert_int_equal(r.steps, 25);
    double d = 20, B = 8, eta = B * 1.5 / 200.0, tau2 = m.tau2, R = 0.5;
    double q = 1 - 2 * eta + eta * eta * (1 + (d + 1) / B), add = eta * eta * tau2 * d / (2 * B);
    int checked = 0;
    for (long k = 1; k <= 25; k++) {
        R = q * R + add;
        long p = k * 4; /* t = k B/n = 0.04 k: grid point 4k of 101 */
        if (k % 5 == 0) {
            assert_rel(r.t[p], 0.04 * (double)k, 1e-12, 0);
            if (!(fabs(r.mean[p] - R) <= 4 * r.stderr_[p]))
                print_error("step %ld: Monte Carlo %.6g +- %.2g, exact %.6g\n", k, r.mean[p],
                            r.stderr_[p], R);
            assert_true(fabs(r.mean[p] - R) <= 4 * r.stderr_[p]);
            checked++;
        }
    }
    assert_int_equal(checked, 5);
    hdp_mc_result_free(&r);
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rhs_batch_terms),
        cmocka_unit_test(jacobian_batch),
        cmocka_unit_test(batched_accountant),
        cmocka_unit_test(mc_exact_recursion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
