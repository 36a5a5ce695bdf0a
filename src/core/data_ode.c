/*
 * data_ode.c — the risk ODE on a data set (docs/theory.md §9): after the ODE of the shifted
 * problem (target theta_c, label noise the residuals at theta_c: the spectrum's energies and
 * the clipping law, hdpsgd/dataset.h) has given R_c(t) and mu_c(t), the mean of the error
 * E[theta_t - theta_c] = -psi(t) theta_c per eigendirection, psi_j(t) = exp(-lambda_j I(t)),
 * I(t) = int_0^t eta~ mu_c(R_c) ds (the first-moment equation of the clipped gradient flow),
 * gives the risk about theta*:
 *   R(t) = R_c(t) + cross(t) + R_bias,  cross(t) = -sum_j lambda_j psi_j(t) theta_c,j b_j,
 *   b = theta_c - theta*,  R_bias = 1/2 b^T Sigma b,
 * and the held-out MSE of theta_t: with m = E[theta_t - theta*] = b - psi theta_c,
 *   m^T Sigma_t m - 2 m^T b_t + c_t + 2 (R_c(t) - 1/2 sum_j lambda_j psi_j^2 theta_c,j^2),
 * the last term the fluctuations (the covariance of the iterate taken as spread like Sigma's:
 * Sigma_t ~ Sigma there). The grid of res is the solve's internal one (ode.c: at least 1024
 * intervals, holding the output points): I(t) by Simpson's rule on each interval, R_c linear
 * between the grid's points.
 */
#include "core/check.h"
#include "core/ode_grad.h"
#include "core/risk_ode.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* mu_c, nu_c at the nodes of res's grid (2 P - 1): node 2i at point i (R_c(1) before the
 * final noise at the last), node 2i - 1 at the middle of [t_{i-1}, t_i], R_c linear there */
static void node_values(hdp_clip *clip, const hdp_ode_result *res, double *mu, double *nu)
{
    long P = res->points;
    for (long n = 0; n < 2 * P - 1; n++) {
        long i = n / 2;
        double r0 = i == P - 1 ? res->risk_before_final_noise : res->risk[i], R = r0;
        if (n % 2)
            R = 0.5 * (r0 + (i + 1 == P - 1 ? res->risk_before_final_noise : res->risk[i + 1]));
        hdp_clip_values cv;
        hdp_clip_eval_values(clip, R > 0 ? R : 0, &cv);
        mu[n] = cv.mu;
        nu[n] = cv.nu;
    }
}

/* The heteroscedastic correction (docs/theory.md §9.3): the label noise's part of the SGD
 * noise in eigendirection j is E[z^2 (u_j^T x)^2] = h_j tau^2 lambda_j, not tau^2 lambda_j;
 * the ODE's bins receive lambda_j kappa(t) (h_j - 1) more, kappa = gamma eta~^2 nu_c tau^2/2
 * (V_c = nu_c (R + tau^2/2): nu_c tau^2/2 is the noise's share). To first order (its feedback
 * on mu_c and V_c left out) the bins' response is delta_j' = -2 lambda_j eta~ mu_c delta_j +
 * lambda_j kappa (h_j - 1), integrated exactly over pieces where the coefficients are held at
 * their midpoint values; dR = (1/d) sum_j lambda_j delta_j at the output points. */
static void hetero(const hdp_model *m, const hdp_ode_result *res, const double *mu,
                   const double *nu, const double *lambda, const double *hfac, double tau2,
                   long d, double *delta, double *dR)
{
    hdp_schedule sc;
    hdp_sched_from_model(m, &sc);
    long P = res->points;
    memset(delta, 0, sizeof(double) * (size_t)d);
    dR[0] = 0;
    for (long i = 1; i < P; i++) {
        double t0 = res->t[i - 1], t1 = res->t[i], h = t1 - t0;
        double eta = hdp_sched_eta(&sc, 0.5 * (t0 + t1)), a = -2.0 * eta * mu[2 * i - 1];
        double kappa = m->gamma * eta * eta * nu[2 * i - 1] * 0.5 * tau2;
        for (long j = 0; j < d; j++) {
            double la = lambda[j] * a * h, src = lambda[j] * kappa * (hfac[j] - 1.0) * h;
            double ex = exp(la);
            delta[j] = delta[j] * ex + (fabs(la) > 1e-12 ? src * (ex - 1.0) / la : src);
        }
        double r = 0;
        for (long j = 0; j < d; j++)
            r += lambda[j] * delta[j];
        dR[i] = r / (double)d;
    }
}

/* h_j = E[z^2 (u_j^T x)^2] / (tau^2 lambda_j) over the rows (1 where lambda_j = 0) */
static void hetero_factors(const hdp_dataset *ds, const double *z, double tau2, double *hfac)
{
    long d = ds->d;
    memset(hfac, 0, sizeof(double) * (size_t)d);
    for (long i = 0; i < ds->n; i++) {
        double z2 = z[i] * z[i];
        for (long j = 0; j < d; j++) {
            double v = hdp_matrix_get(&ds->rows, i, j);
            hfac[j] += z2 * v * v;
        }
    }
    for (long j = 0; j < d; j++)
        hfac[j] = ds->lambda[j] > 1e-12 * ds->lambda[0] && tau2 > 0
                      ? hfac[j] / ((double)ds->n * tau2 * ds->lambda[j])
                      : 1.0;
}

/* ode.clip_weights = direction (docs/theory.md §9.3): the bins' noise already holds the part
 * of h_j that the rows' norm groups carry, hg_j = sum_g p_g (E[x_j^2 | g] / lambda_j)
 * E[z^2 | g] / tau^2 (the groups' own residuals, E[z^2 | g] = w_g tau_g^2 of the group's law
 * of z / sqrt(w_g)): the correction keeps h_j - hg_j, so that nothing is counted twice. A
 * no-op with the norm weights. */
static void hetero_direction(const hdp_model *m, const hdp_clip *clip, long d, double tau2,
                             double *hfac)
{
    if (!hdp_rode_wants_direction(m) || !clip || !clip->ngroups || clip->dir_d != d ||
        !(tau2 > 0))
        return;
    int G = clip->ngroups;
    for (long j = 0; j < d; j++) {
        double hg = 0;
        for (int g = 0; g < G; g++)
            hg += clip->gp[g] * clip->dirw[j * G + g] * clip->gw[g] * clip->group[g]->tau2;
        hfac[j] -= hg / tau2 - 1.0;
    }
}

void hdp_data_kurtosis(const hdp_model *m, double *k)
{
    const hdp_data *data = hdp_model_data(m);
    const hdp_dataset *ds = &data->train;
    long d = ds->d;
    memset(k, 0, sizeof(double) * (size_t)d);
    for (long i = 0; i < ds->n; i++)
        for (long j = 0; j < d; j++) {
            double v = hdp_matrix_get(&ds->rows, i, j);
            k[j] += v * v * v * v;
        }
    for (long j = 0; j < d; j++) {
        double l = ds->lambda[j];
        k[j] = l > 1e-12 * ds->lambda[0] ? k[j] / ((double)ds->n * l * l) - 1.0 : 2.0;
    }
}

/* I(t_i) at the grid's points: Simpson's rule on each interval (eta~ just inside its ends, a
 * knot's jump) */
static void integral(const hdp_model *m, const hdp_ode_result *res, const double *mu, double *I)
{
    hdp_schedule sc;
    hdp_sched_from_model(m, &sc);
    long P = res->points;
    I[0] = 0;
    for (long i = 1; i < P; i++) {
        double t0 = res->t[i - 1], t1 = res->t[i];
        double s = hdp_sched_eta(&sc, t0 + 1e-12) * mu[2 * i - 2] +
                   4.0 * hdp_sched_eta(&sc, 0.5 * (t0 + t1)) * mu[2 * i - 1] +
                   hdp_sched_eta(&sc, t1 - 1e-12) * mu[2 * i];
        I[i] = I[i - 1] + s * (t1 - t0) / 6.0;
    }
}

/* the mean's part of the predicted held-out MSE: m^T Sigma_t m - 2 m^T b_t + c_t (planted: its
 * expectation over theta*, m_j = -psi_j theta*_j, with I the integral at the point) */
static double test_mse_at(const hdp_model *m, const hdp_data *data, int fixed, const double *mvec,
                          double I)
{
    const hdp_dataset *ds = &data->train;
    const double *S = data->test_sigma;
    long d = ds->d;
    double q = 0, lin = 0, r2 = m->target_radius * m->target_radius;
    if (fixed) {
        for (long j = 0; j < d; j++) {
            double s = 0;
            for (long k = 0; k < d; k++)
                s += S[j * d + k] * mvec[k];
            q += mvec[j] * s;
            if (data->test_b)
                lin += mvec[j] * data->test_b[j];
        }
    } else {
        for (long j = 0; j < d; j++) {
            double psi = exp(-ds->lambda[j] * I);
            q += S[j * d + j] * psi * psi * r2 / (double)d;
        }
    }
    return q - 2.0 * lin + (data->planted ? m->tau2 : data->test_c);
}

/* res's arrays reduced to every stride-th point, P of them */
static void keep_points(hdp_ode_result *res, long stride, long P)
{
    double **arrays[] = {&res->t,  &res->risk, &res->upper, &res->lower,
                         &res->mu, &res->nu,   &res->eta,   &res->sigma2};
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        double *v = *arrays[a];
        for (long i = 0; i < P; i++)
            v[i] = v[i * stride];
        double *r = realloc(v, sizeof(double) * (size_t)P);
        *arrays[a] = r ? r : v; /* shrinking: v is kept when it fails */
    }
    res->points = P;
}

hdp_status hdp_data_ode_correct(const hdp_model *m, hdp_clip *clip, hdp_ode_result *res,
                                long stride, hdp_error *err)
{
    const hdp_data *data = hdp_model_data(m);
    if (!data)
        return HDP_OK;
    const hdp_dataset *ds = &data->train;
    const hdp_data_bias *b = NULL;
    hdp_status st = hdp_data_bias_of(m, &b, err);
    if (st != HDP_OK)
        return st;
    res->data = 1;
    hdp_noise_law law;
    hdp_noise_law_of_model(m, &law);
    res->data_tau2 = law.tau2;
    res->test_mse_star = data->test_mse_star;
    long P = res->points, d = ds->d;
    if (b) {
        res->data_risk_bias = b->risk_bias;
        res->data_clipped = b->clipped;
        res->data_bias_seconds = b->seconds;
        res->data_bias_iterations = b->iterations;
    }
    double *I = malloc(sizeof(double) * (size_t)P), *dR = calloc((size_t)P, sizeof(double));
    double *mvec = malloc(sizeof(double) * (size_t)d);
    double *hfac = malloc(sizeof(double) * (size_t)d), *delta = malloc(sizeof(double) * (size_t)d);
    double *mu = malloc(sizeof(double) * (size_t)(2 * P)), *nu = malloc(sizeof(double) * (size_t)(2 * P));
    if (stride < 1 || (P - 1) % stride) {
        st = hdp_fail(err, HDP_EINPUT, "hdp_data_ode_correct: %ld points, stride %ld", P, stride);
        goto done;
    }
    if (!I || !dR || !mvec || !hfac || !delta || !mu || !nu) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the data set's corrections");
        goto done;
    }
    node_values(clip, res, mu, nu);
    integral(m, res, mu, I);
    if (!data->planted) { /* residuals that depend on x: the heteroscedastic correction */
        hetero_factors(ds, b ? b->z : ds->residual, law.tau2, hfac);
        hetero_direction(m, clip, d, law.tau2, hfac);
        hetero(m, res, mu, nu, ds->lambda, hfac, law.tau2, d, delta, dR);
        double num = 0, den = 0; /* E[z^2 x^T Sigma x] / (tau^2 E[x^T Sigma x]) */
        for (long j = 0; j < d; j++) {
            num += ds->lambda[j] * ds->lambda[j] * hfac[j];
            den += ds->lambda[j] * ds->lambda[j];
        }
        res->data_hetero_ratio = den > 0 ? num / den : 1.0;
        res->data_hetero_final = dR[P - 1];
    }
    if (stride > 1) { /* the output points: every stride-th of the grid */
        P = (P - 1) / stride + 1;
        for (long i = 0; i < P; i++) {
            I[i] = I[i * stride];
            dR[i] = dR[i * stride];
        }
        keep_points(res, stride, P);
    }
    if (data->has_test && !(res->test_mse = calloc((size_t)P, sizeof(double)))) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the held-out MSE at %ld points", P);
        goto done;
    }
    /* theta_c and b in the eigenbasis (planted: theta* random, b = 0) */
    const double *tc = b ? b->theta_c : data->planted ? NULL : ds->theta_eig;
    double r2 = m->target_radius * m->target_radius;
    for (long i = 0; i < P; i++) {
        double cross = 0, meanpart = 0; /* 1/2 sum lambda psi^2 theta_c^2 */
        for (long j = 0; j < d; j++) {
            double psi = exp(-ds->lambda[j] * I[i]);
            double th = tc ? tc[j] : 0, bj = b ? th - ds->theta_eig[j] : 0;
            cross -= ds->lambda[j] * psi * th * bj;
            meanpart += 0.5 * ds->lambda[j] * psi * psi * (tc ? th * th : r2 / (double)d);
            mvec[j] = bj - psi * th;
        }
        double Rc = res->risk[i] + dR[i]; /* the shifted problem's, final noise included at
                                             t = 1, with the heteroscedastic correction */
        res->risk[i] += dR[i];
        res->upper[i] += dR[i];
        res->lower[i] += dR[i];
        if (b) {
            /* the bounds of R_c carried over by Cauchy-Schwarz: |cross| <= 2 sqrt(R_c R_bias),
             * so R lies in [(sqrt(R_c) - sqrt(R_bias))^2, (sqrt(R_c) + sqrt(R_bias))^2] */
            double sb = sqrt(b->risk_bias);
            double su = sqrt(fmax(res->upper[i], 0.0)), sl = sqrt(fmax(res->lower[i], 0.0));
            res->risk[i] += cross + b->risk_bias;
            if (isfinite(res->upper[i])) /* NAN past upper_until stays NAN */
                res->upper[i] = (su + sb) * (su + sb);
            if (isfinite(res->lower[i]))
                res->lower[i] = sl > sb ? (sl - sb) * (sl - sb) : 0.0;
            if (i == 0)
                res->data_cross_start = cross;
            if (i == P - 1)
                res->data_cross_final = cross;
        }
        if (res->test_mse)
            res->test_mse[i] = test_mse_at(m, data, tc != NULL, mvec, I[i]) +
                               2.0 * fmax(Rc - meanpart, 0.0);
    }
    res->risk_before_final_noise += dR[P - 1];
    if (b)
        res->risk_before_final_noise += res->data_cross_final + b->risk_bias;
    res->final_risk = res->risk[P - 1];
    if (res->test_mse)
        res->test_mse_final = res->test_mse[P - 1];
done:
    free(I);
    free(dR);
    free(mvec);
    free(hfac);
    free(delta);
    free(mu);
    free(nu);
    return st;
}

void hdp_grad_data_free(hdp_grad_data *t)
{
    if (!t)
        return;
    free(t->lambda);
    free(t->cw);
    free(t->bin_h);
    memset(t, 0, sizeof *t);
}

/* hb_k of the gradient's bins (ode_grad.h): direction j to the node nearest in log lambda,
 * weighted by lambda_j^2 */
static void bin_hetero(const hdp_spectrum *spec, const double *hfac, double *bin_h)
{
    long m = spec->m;
    double *num = bin_h;
    memset(num, 0, sizeof(double) * (size_t)m);
    for (long j = 0; j < spec->d; j++) {
        double l = spec->lambda[j];
        if (!(l > 0))
            continue; /* no part in the risk */
        long best = -1;
        double dist = INFINITY;
        for (long k = 0; k < m; k++) {
            double lk = spec->bin_lambda[k];
            if (!(lk > 0))
                continue;
            double dd = fabs(log(l / lk));
            if (dd < dist) {
                dist = dd;
                best = k;
            }
        }
        if (best >= 0)
            num[best] += l * l * (hfac[j] - 1.0);
    }
    for (long k = 0; k < m; k++) {
        double lk = spec->bin_lambda[k], den = (double)spec->d * spec->bin_weight[k] * lk * lk;
        bin_h[k] = den > 0 ? num[k] / den : 0.0;
    }
}

hdp_status hdp_data_grad_terms(const hdp_model *m, const hdp_spectrum *spec,
                               const hdp_clip *clip, hdp_grad_data *t, hdp_error *err)
{
    HDP_ZERO(t);
    HDP_REQUIRE(err, t);
    HDP_REQUIRE(err, spec);
    const hdp_data *data = hdp_model_data(m);
    if (!data || data->planted)
        return HDP_OK; /* planted: theta_c = theta*, h_j = 1 in expectation: nothing */
    const hdp_dataset *ds = &data->train;
    const hdp_data_bias *b = NULL;
    hdp_status st = hdp_data_bias_of(m, &b, err);
    if (st != HDP_OK)
        return st;
    long d = ds->d;
    if (spec->d != d)
        return hdp_fail(err, HDP_EINPUT, "the spectrum has %ld eigenvalues, the data set %ld",
                        spec->d, d);
    hdp_noise_law law;
    hdp_noise_law_of_model(m, &law);
    t->d = d;
    t->tau2 = law.tau2;
    t->risk_bias = b ? b->risk_bias : 0.0;
    t->lambda = malloc(sizeof(double) * (size_t)d);
    t->cw = malloc(sizeof(double) * (size_t)d);
    t->bin_h = malloc(sizeof(double) * (size_t)spec->m);
    double *hfac = malloc(sizeof(double) * (size_t)d);
    if (!t->lambda || !t->cw || !t->bin_h || !hfac) {
        free(hfac);
        hdp_grad_data_free(t);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the data set's corrections");
    }
    for (long j = 0; j < d; j++) {
        t->lambda[j] = ds->lambda[j];
        t->cw[j] = b ? ds->lambda[j] * b->theta_c[j] * (b->theta_c[j] - ds->theta_eig[j]) : 0.0;
    }
    hetero_factors(ds, b ? b->z : ds->residual, law.tau2, hfac);
    hetero_direction(m, clip, d, law.tau2, hfac);
    bin_hetero(spec, hfac, t->bin_h);
    free(hfac);
    t->on = 1;
    return HDP_OK;
}
