/*
 * data_meanfield.c — ode.model = rows (docs/theory.md §9.5): the row-resolved mean-field
 * recursion of one-pass DP-SGD on a data set's rows, stepped with the algorithm's own
 * constants (those of src/sim/rows.c): per step k, with e the error theta - theta* (mean m,
 * covariance C of the fluctuation about it; m_0 = -theta*, C_0 = 0), the rows x_i in the
 * eigenbasis, z_i their residuals at theta*, r_i = x_i^T m - z_i, s_i^2 = x_i^T C x_i,
 * kappa_i = c sqrt(d) / ||x_i|| and psi_i = clamp(r_i + s_i xi, +-kappa_i), xi ~ N(0, 1):
 *   g = (1/N) sum_i E[psi_i] x_i,   H = (1/N) sum_i P(|r_i + s_i xi| < kappa_i) x_i x_i^T,
 *   Q = (1/N) sum_i E[psi_i^2] x_i x_i^T - g g^T,
 *   m <- m - eta_k g,   C <- C - eta_k (C H + H C) + eta_k^2 Q + (2 c sqrt(d) sigma_k)^2 I,
 * eta_k, sigma_k from the problem's schedule (hdp_sched_step, any kind); the risk
 * 1/2 sum_j lambda_j (m_j^2 + C_jj), recorded at the Monte Carlo's steps (mc.c's grid; the
 * row t = 1 after the last step, its private noise included). The expectations over xi are
 * in closed form (erfc and the normal density). The rows are drawn independently at every
 * step from their empirical law (sim.rows = with-replacement exactly; without-replacement
 * is read as the same law, its correlations of order n/N left out). Cost: about 4 N d^2
 * flops per step through CBLAS (dsymm for s_i, dsyrk for H and Q, dsymm for C H).
 * The update of C is the exact one-step covariance when e is Gaussian: Cov(e, psi_i x_i) =
 * C x_i P(|.| < kappa_i) x_i^T by Stein's lemma, Cov(psi_i x_i) = Q, which already holds the
 * rows' fourth moments E[(x^T C x) x x^T]; the form (I - eta H) C (I - eta H) + eta^2 Q of
 * docs/theory.md §9.5's first version counts eta^2 H C H once more (0.05 % of R(1) on digits).
 */
#include "core/data_meanfield.h"
#include "core/check.h"
#include "core/clock.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/schedule.h"

hdp_status hdp_meanfield_check(const hdp_model *m, hdp_error *err)
{
    if (m->ode_model != HDP_ODE_MODEL_ROWS)
        return HDP_OK;
    const hdp_data *data = hdp_model_data(m);
    if (!data)
        return hdp_model_fail_key(m, "ode", "model", err,
                                  "rows steps a data set's rows and needs data.source = file; "
                                  "on synthetic data use model = bins");
    if (data->planted || !data->train.residual)
        return hdp_model_fail_key(m, "ode", "model", err,
                                  "rows needs data.target = least-squares (the rows' residuals "
                                  "at theta*); with a planted target use model = bins");
    if (!data->train.prepared || !data->train.rotated)
        return hdp_fail(err, HDP_EINPUT, "ode.model = rows: the data set's rows are not in the "
                        "eigenbasis of their covariance (hdp_dataset_prepare)");
    if (m->batch > 1)
        return hdp_model_fail_key(m, "ode", "model", err,
                                  "rows is the recursion of batch 1 (its batched form is not "
                                  "built); sgd.batch = %ld needs model = bins", m->batch);
    if (m->ode_discrete)
        return hdp_model_fail_key(m, "ode", "discrete", err,
                                  "ode.discrete adds the one-step term to the bins' ODE; "
                                  "model = rows steps the algorithm itself: leave discrete = false");
    if (hdp_feature_norm_bound(m) > 0)
        return hdp_model_fail_key(m, "ode", "model", err,
                                  "rows does not clip the features: leave clip.feature_norm at 0");
    double N = (double)data->train.n, d = (double)data->train.d, n = (double)m->n;
    double work = N * d * d * n;
    if (!(work <= HDP_MEANFIELD_MAX_WORK))
        return hdp_model_fail_key(m, "ode", "model", err,
                                  "rows costs N d^2 n = %ld x %ld^2 x %ld = %.3g multiply-adds "
                                  "(about %.2g s of one core: scikit-learn's digits, 2.4e10, "
                                  "take 3.1 s), above the budget %.3g: use model = bins, or "
                                  "fewer steps (a larger data.gamma)",
                                  data->train.n, data->train.d, m->n, work, work / 7.6e9,
                                  HDP_MEANFIELD_MAX_WORK);
    return HDP_OK;
}

typedef struct {
    long N, d, n;
    const double *lambda, *z;
    double Cclip;            /* c sqrt(d) */
    double *X;               /* N x d, the rows in double */
    double *xx, *kap;        /* ||x_i||^2, c sqrt(d) / ||x_i|| */
    double *r, *s, *e1, *e2, *pin; /* per row: r_i, s_i, E psi, E psi^2, P(unclipped) */
    double *Y;               /* N x d: X C, then the weighted rows */
    double *m, *g;           /* d */
    double *C, *H, *Q, *T;   /* d x d, row-major */
    int czero;               /* C = 0 (before the first step) */
} mf_state;

static void mf_free(mf_state *s)
{
    double *p[] = {s->X, s->xx, s->kap, s->r, s->s, s->e1, s->e2, s->pin, s->Y,
                   s->m, s->g, s->C, s->H, s->Q, s->T};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(p[i]);
    memset(s, 0, sizeof *s);
}

static hdp_status mf_init(const hdp_model *m, mf_state *s, hdp_error *err)
{
    const hdp_dataset *ds = &hdp_model_data(m)->train;
    long N = ds->n, d = ds->d;
    *s = (mf_state){.N = N, .d = d, .n = m->n, .lambda = ds->lambda, .z = ds->residual,
                    .Cclip = m->c * sqrt((double)d)};
    size_t Nd = (size_t)N * (size_t)d, dd = (size_t)d * (size_t)d;
    double **nv[] = {&s->xx, &s->kap, &s->r, &s->s, &s->e1, &s->e2, &s->pin};
    double **dv[] = {&s->m, &s->g};
    double **mv[] = {&s->C, &s->H, &s->Q, &s->T};
    int ok = (s->X = malloc(sizeof(double) * Nd)) && (s->Y = malloc(sizeof(double) * Nd));
    for (size_t i = 0; ok && i < sizeof nv / sizeof nv[0]; i++)
        ok = (*nv[i] = malloc(sizeof(double) * (size_t)N)) != NULL;
    for (size_t i = 0; ok && i < sizeof dv / sizeof dv[0]; i++)
        ok = (*dv[i] = malloc(sizeof(double) * (size_t)d)) != NULL;
    for (size_t i = 0; ok && i < sizeof mv / sizeof mv[0]; i++)
        ok = (*mv[i] = calloc(dd, sizeof(double))) != NULL;
    if (!ok) {
        mf_free(s);
        return hdp_fail(err, HDP_ENOMEM, "ode.model = rows: out of memory for %ld rows of d = %ld "
                        "(about %.3g GB)", N, d, (16.0 * (double)Nd + 32.0 * (double)dd) / 1e9);
    }
    for (long i = 0; i < N; i++) {
        double q = 0;
        for (long j = 0; j < d; j++) {
            size_t at = (size_t)i * (size_t)d + (size_t)j;
            double v = ds->rows.f32 ? (double)ds->rows.f32[at] : ds->rows.f64[at];
            s->X[at] = v;
            q += v * v;
        }
        s->xx[i] = q;
        s->kap[i] = q > 0 ? s->Cclip / sqrt(q) : INFINITY;
    }
    for (long j = 0; j < d; j++)
        s->m[j] = -ds->theta_eig[j];
    s->czero = 1;
    return HDP_OK;
}

/* Phi(x) and its upper tail 1 - Phi(x), each without cancellation */
static double ncdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }

/* For u = r + s xi, xi ~ N(0, 1), and k > 0: E clamp(u, +-k), E clamp(u, +-k)^2 and
 * P(|u| < k) in closed form (s = 0: u = r). With a = (-k - r)/s, b = (k - r)/s, phi the
 * normal density: E clamp = -k Phi(a) + k Phi(-b) + r P + s (phi(a) - phi(b)),
 * E clamp^2 = k^2 (Phi(a) + Phi(-b)) + r^2 P + 2 r s (phi(a) - phi(b))
 *             + s^2 (P + a phi(a) - b phi(b)),   P = Phi(b) - Phi(a). */
static void clamp_moments(double r, double s, double k, double *e1, double *e2, double *p)
{
    if (!(s > 0)) {
        double v = r < -k ? -k : r > k ? k : r;
        *e1 = v;
        *e2 = v * v;
        *p = fabs(r) < k ? 1.0 : 0.0;
        return;
    }
    if (isinf(k)) {
        *e1 = r;
        *e2 = r * r + s * s;
        *p = 1.0;
        return;
    }
    double a = (-k - r) / s, b = (k - r) / s;
    double lo = ncdf(a), hi = ncdf(-b); /* P(u < -k), P(u > k) */
    double P = a > 0 ? ncdf(-a) - hi : b < 0 ? ncdf(b) - lo : 1.0 - lo - hi;
    double pa = exp(-0.5 * a * a) / sqrt(2.0 * M_PI), pb = exp(-0.5 * b * b) / sqrt(2.0 * M_PI);
    *e1 = -k * lo + k * hi + r * P + s * (pa - pb);
    *e2 = k * k * (lo + hi) + r * r * P + 2.0 * r * s * (pa - pb) + s * s * (P + a * pa - b * pb);
    *p = P;
}

/* the rows' residuals at the mean, their spreads s_i = sqrt(x_i^T C x_i) and the moments of
 * their clipped values */
static void mf_factors(mf_state *s)
{
    long N = s->N, d = s->d;
    for (long i = 0; i < N; i++)
        s->r[i] = -s->z[i];
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)N, (int)d, 1.0, s->X, (int)d, s->m, 1, 1.0,
                s->r, 1);
    if (!s->czero)
        cblas_dsymm(CblasRowMajor, CblasRight, CblasUpper, (int)N, (int)d, 1.0, s->C, (int)d,
                    s->X, (int)d, 0.0, s->Y, (int)d);
#pragma omp parallel for schedule(static) if (N >= 8192)
    for (long i = 0; i < N; i++) {
        double q = 0;
        if (!s->czero) {
            const double *x = s->X + (size_t)i * (size_t)d, *y = s->Y + (size_t)i * (size_t)d;
            for (long j = 0; j < d; j++)
                q += x[j] * y[j];
        }
        s->s[i] = q > 0 ? sqrt(q) : 0.0;
        clamp_moments(s->r[i], s->s[i], s->kap[i], &s->e1[i], &s->e2[i], &s->pin[i]);
    }
}

/* A = (1/N) sum_i w_i x_i x_i^T into A (full), through Y = sqrt(w_i) x_i */
static void weighted_gram(mf_state *s, const double *w, double *A)
{
    long N = s->N, d = s->d;
    for (long i = 0; i < N; i++) {
        double f = sqrt(w[i] > 0 ? w[i] : 0.0);
        const double *x = s->X + (size_t)i * (size_t)d;
        double *y = s->Y + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            y[j] = f * x[j];
    }
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)d, (int)N, 1.0 / (double)N, s->Y,
                (int)d, 0.0, A, (int)d);
}

static void fill_lower(double *A, long d)
{
    for (long i = 0; i < d; i++)
        for (long j = 0; j < i; j++)
            A[(size_t)i * (size_t)d + (size_t)j] = A[(size_t)j * (size_t)d + (size_t)i];
}

/* one step of the recursion from the factors of the current state (mf_factors) */
static void mf_step(mf_state *s, double eta, double noise2)
{
    long N = s->N, d = s->d;
    size_t dd = (size_t)d * (size_t)d;
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)N, (int)d, 1.0 / (double)N, s->X, (int)d, s->e1,
                1, 0.0, s->g, 1);
    weighted_gram(s, s->e2, s->Q);
    cblas_dsyr(CblasRowMajor, CblasUpper, (int)d, -1.0, s->g, 1, s->Q, (int)d);
    fill_lower(s->Q, d);
    cblas_daxpy((int)d, -eta, s->g, 1, s->m, 1);
    if (s->czero) {
        for (size_t q = 0; q < dd; q++)
            s->C[q] = eta * eta * s->Q[q];
    } else {
        /* C <- C - eta (C H + H C) + eta^2 Q: T = C H (H symmetric: H C = T^T) */
        weighted_gram(s, s->pin, s->H);
        cblas_dsymm(CblasRowMajor, CblasRight, CblasUpper, (int)d, (int)d, 1.0, s->H, (int)d,
                    s->C, (int)d, 0.0, s->T, (int)d);
        for (long i = 0; i < d; i++)
            for (long j = 0; j <= i; j++) {
                size_t ij = (size_t)i * (size_t)d + (size_t)j, ji = (size_t)j * (size_t)d + (size_t)i;
                double v = 0.5 * (s->C[ij] + s->C[ji]) - eta * (s->T[ij] + s->T[ji]) +
                           eta * eta * s->Q[ij];
                s->C[ij] = s->C[ji] = v;
            }
    }
    for (long j = 0; j < d; j++)
        s->C[(size_t)j * (size_t)(d + 1)] += noise2;
    s->czero = 0;
}

static double mf_risk(const mf_state *s)
{
    double R = 0;
    for (long j = 0; j < s->d; j++)
        R += s->lambda[j] * (s->m[j] * s->m[j] + s->C[(size_t)j * (size_t)(s->d + 1)]);
    return 0.5 * R;
}

/* the held-out MSE of theta* + e averaged over e ~ (m, C): its moments Sigma_t, b_t, c_t */
static double mf_test_mse(const mf_state *s, const hdp_data *data)
{
    long d = s->d;
    double q = 0, lin = 0;
    for (long i = 0; i < d; i++) {
        const double *row = data->test_sigma + (size_t)i * (size_t)d;
        const double *c = s->C + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            q += row[j] * (s->m[i] * s->m[j] + c[j]);
        if (data->test_b)
            lin += s->m[i] * data->test_b[i];
    }
    return q - 2.0 * lin + data->test_c;
}

/* the rows' factors at a recorded point: mu = sum P_i ||x_i||^2 / sum ||x_i||^2 (tr H / tr
 * Sigma), nu = sum E psi_i^2 ||x_i||^2 / sum E (r_i + s_i xi)^2 ||x_i||^2 */
static void mf_record(const mf_state *s, const hdp_problem *pb, const hdp_data *data, long p,
                      hdp_ode_result *res)
{
    double num = 0, den = 0, vn = 0, vd = 0;
    for (long i = 0; i < s->N; i++) {
        num += s->pin[i] * s->xx[i];
        den += s->xx[i];
        vn += s->e2[i] * s->xx[i];
        vd += (s->r[i] * s->r[i] + s->s[i] * s->s[i]) * s->xx[i];
    }
    double t = (double)p / (double)(res->points - 1);
    res->t[p] = t;
    res->risk[p] = mf_risk(s);
    res->upper[p] = res->lower[p] = NAN; /* the bounds of §3 are the bins' ODE's */
    res->mu[p] = den > 0 ? num / den : 1.0;
    res->nu[p] = vd > 0 ? vn / vd : 1.0;
    res->eta[p] = hdp_sched_eta(&pb->sched, t);
    res->sigma2[p] = hdp_sched_sigma2(&pb->sched, t);
    if (res->test_mse)
        res->test_mse[p] = mf_test_mse(s, data);
}

/* the output grid's steps, as the Monte Carlo records them (mc.c's build_grid): t_i = i/(P-1)
 * at step round(t_i n), at most n - 1 before t = 1, n at t = 1 */
static long grid_step(long i, long P, long n)
{
    if (i == P - 1)
        return n;
    long k = (long)round((double)i / (double)(P - 1) * (double)n);
    return i == 0 ? 0 : k > n - 1 ? n - 1 : k;
}

/* the steps k = 0 .. n, each point of the grid recorded at its step */
static hdp_status mf_run(mf_state *s, const hdp_problem *pb, const hdp_data *data,
                         hdp_progress_fn progress, void *user, hdp_ode_result *res,
                         hdp_error *err)
{
    long n = s->n, P = res->points, p = 0, every = n / 100 > 0 ? n / 100 : 1;
    double trace = 0, last_noise2 = 0;
    for (long j = 0; j < s->d; j++)
        trace += s->lambda[j];
    for (long k = 0; k <= n; k++) {
        mf_factors(s);
        for (; p < P && grid_step(p, P, n) == k; p++) {
            mf_record(s, pb, data, p, res);
            if (!isfinite(res->risk[p]) || (res->test_mse && !isfinite(res->test_mse[p])))
                return hdp_fail(err, HDP_ENUMERIC, "ode.model = rows: the risk is not finite "
                                "at step %ld of %ld (t = %.6g): the steps diverge", k, n,
                                res->t[p]);
        }
        if (progress && (k % every == 0 || k == n) &&
            progress("ode rows", k, n, mf_risk(s), user) != 0)
            return hdp_fail(err, HDP_ECANCELLED, "ODE (rows): cancelled at step %ld of %ld", k,
                            n);
        if (k == n)
            break;
        if (hdp_cancel_requested())
            return hdp_fail(err, HDP_ECANCELLED, "ODE (rows): cancelled at step %ld of %ld", k,
                            n);
        double eta_k, sigma_k;
        hdp_sched_step(&pb->sched, n, k, &eta_k, &sigma_k);
        double sn = sigma_k > 0 ? 2.0 * s->Cclip * sigma_k : 0.0;
        last_noise2 = sn * sn;
        mf_step(s, eta_k, last_noise2);
    }
    res->final_risk = res->risk[P - 1];
    res->final_noise = 0.5 * last_noise2 * trace; /* the last step's private noise */
    res->risk_before_final_noise = res->final_risk - res->final_noise;
    return HDP_OK;
}

hdp_status hdp_meanfield_solve(const hdp_problem *pb, hdp_progress_fn progress, void *user,
                               hdp_ode_result *res, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, res);
    const hdp_model *m = pb->model;
    memset(res, 0, sizeof *res);
    hdp_status st = hdp_meanfield_check(m, err);
    if (st != HDP_OK)
        return st;
    const hdp_data *data = hdp_model_data(m);
    int test = data->has_test && data->test_sigma;
    if ((st = hdp_ode_result_alloc(res, m->points, test, err)) != HDP_OK)
        return st;
    mf_state s;
    if ((st = mf_init(m, &s, err)) != HDP_OK)
        return st;
    double t0 = hdp_seconds_now();
    st = mf_run(&s, pb, data, progress, user, res, err);
    res->solve_seconds = hdp_seconds_now() - t0;
    mf_free(&s);
    snprintf(res->solver, sizeof res->solver, "rows");
    res->bins = data->train.d;
    res->steps = res->rhs_evals = m->n;
    res->eta_sup = pb->eta_sup;
    res->stable = res->eta_sup < 2.0 / m->gamma;
    res->upper_until = res->lower_until = NAN; /* no bounds */
    res->data = 1;
    res->data_tau2 = data->train.tau2;
    res->test_mse_star = data->test_mse_star;
    res->data_risk_bias = res->data_cross_start = res->data_cross_final = NAN;
    res->data_clipped = res->data_hetero_ratio = res->data_hetero_final = NAN;
    if (test)
        res->test_mse_final = res->test_mse[res->points - 1];
    return st;
}
