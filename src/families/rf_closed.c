/*
 * rf_closed.c — closed forms in mode coordinates (docs/theory.md §7): the losses of a point
 * given by its mode coefficients (hdp_rf_modes_loss), and the expected loss of the OU process
 * (gradient flow plus noise) and of its Euler-Maruyama recursion, i.e. DP-GD without clipping,
 * at time t (hdp_rf_expected_loss).
 */
#include "hdpsgd/rf.h"
#include "core/alloc.h"
#include "core/check.h"
#include "families/rf_internal.h"
#include "sim/mc.h"

#include <math.h>
#include <stdlib.h>

/* ---- closed forms (docs/theory.md §7) ---- */

/* Losses of theta = sum_k c_k w_k (docs/theory.md §7): Phi_test theta = G c, Phi theta = U S c. */
void hdp_rf_modes_loss(const hdp_rf_problem *pb, const double *c, double *test, double *train)
{
    if (!pb || !c)
        return;
    const long n = pb->spec.k.n, m = pb->spec.k.test_size, r = pb->r;
    double *sc = hdp_dalloc((size_t)r), *pred = hdp_dalloc((size_t)(n > m ? n : m));
    if (!sc || !pred) {
        if (test) *test = NAN;
        if (train) *train = NAN;
        free(sc);
        free(pred);
        return;
    }
    int old = blas_single();
    if (train) {
        for (long k = 0; k < r; k++)
            sc[k] = pb->s[k] * c[k];
        blas_gemv(0, n, r, 1.0, pb->U, r, sc, 0.0, pred);
        *train = mse(pred, pb->y, n);
    }
    if (test) {
        if (pb->G) {
            blas_gemv(0, m, r, 1.0, pb->G, r, c, 0.0, pred);
            *test = mse(pred, pb->y_test, m);
        } else {
            *test = NAN;
        }
    }
    blas_restore(old);
    free(sc);
    free(pred);
}

/* Mean factor and variance per unit s^2 of mode k at time t (docs/theory.md §7); discrete: the
 * Euler-Maruyama recursion with step eta after k = round(t/eta) steps. */
static void mode_moments(double lambda, double eta, double t, int discrete, double *mean_factor,
                         double *var)
{
    if (!discrete) {
        *mean_factor = -expm1(-lambda * t);
        *var = lambda > 0 ? -expm1(-2.0 * lambda * t) / (2.0 * lambda) : t;
        return;
    }
    /* a = 1 - eta lambda: mean factor 1 - a^k, variance eta (1 - a^{2k}) / (1 - a^2), with
     * log1p/expm1 so that eta lambda -> 0 keeps full precision */
    double k = nearbyint(t / eta), x = eta * lambda;
    if (x == 0) {
        *mean_factor = 0;
        *var = eta * k;
        return;
    }
    double one_minus_a2 = x * (2.0 - x);
    if (x < 1) {
        double L = log1p(-x);
        *mean_factor = -expm1(k * L);
        *var = eta * -expm1(2.0 * k * L) / one_minus_a2;
        return;
    }
    double ak = pow(1.0 - x, k);
    *mean_factor = 1.0 - ak;
    *var = one_minus_a2 != 0 ? eta * (1.0 - ak * ak) / one_minus_a2 : eta * k;
}

/* The modes' laws at time t with noise scale s, in one block (free it; NULL when out of
 * memory): mean[k] = (f_k - shift) beta_k (shift 0: the mean of mode k; 1: its gap to the
 * min-norm interpolator's), var[k] = s^2 v_k; *var_perp the variance of the null directions. */
static void *mode_laws(const hdp_rf_problem *pb, double eta, double s, double t, int discrete,
                       double shift, double **mean, double **var, double *var_perp)
{
    void *block = HDP_MC_VECS({mean, (size_t)pb->r}, {var, (size_t)pb->r});
    for (long k = 0; block && k < pb->r; k++) {
        double f, v;
        mode_moments(pb->lambda[k], eta, t, discrete, &f, &v);
        (*mean)[k] = (f - shift) * pb->beta[k];
        (*var)[k] = s * s * v;
    }
    /* the null directions: a Brownian motion, variance s^2 t (s^2 eta k when discrete) */
    *var_perp = s * s * (discrete ? eta * nearbyint(t / eta) : t);
    return block;
}

/* E loss at a point whose coordinates phi^T w_k are w_k c_k (w NULL: c_k), without its null-space
 * part: (sum_k w_k c_k mean_k - y)^2 + sum_k (w_k c_k)^2 var_k */
static double point_loss(const double *c, const double *w, const double *mean, const double *var,
                         long r, double y)
{
    double f = 0, q = 0;
    for (long k = 0; k < r; k++) {
        double a = w ? w[k] * c[k] : c[k];
        f += a * mean[k];
        q += a * a * var[k];
    }
    return (f - y) * (f - y) + q;
}

/* The closed form of docs/theory.md §7 at time t: E loss at a point = (phi^T mean - y)^2 + phi^T
 * Cov phi, phi^T Cov phi = sum_k (phi^T w_k)^2 var_k + s^2 t ||P_perp phi||^2. */
void hdp_rf_expected_loss(const hdp_rf_problem *pb, double eta, double s, double t, int discrete,
                          double *test, double *train)
{
    if (!pb)
        return;
    const long n = pb->spec.k.n, m = pb->spec.k.test_size, r = pb->r;
    double *mean, *var, var_perp;
    void *block = mode_laws(pb, eta, s, t, discrete, 0.0, &mean, &var, &var_perp);
    if (!block || (test && !pb->G)) {
        if (test) *test = NAN;
        if (train) *train = NAN;
        free(block);
        return;
    }
    if (train) {
        /* phi_i^T w_k = s_k U_ik; phi_i has no null-space part */
        double acc = 0;
        for (long i = 0; i < n; i++)
            acc += point_loss(pb->U + i * r, pb->s, mean, var, r, pb->y[i]);
        *train = acc / (double)n;
    }
    if (test) {
        double acc = 0;
        for (long j = 0; j < m; j++)
            acc += point_loss(pb->G + j * r, NULL, mean, var, r, pb->y_test[j]) +
                   var_perp * pb->test_perp2[j];
        *test = acc / (double)m;
    }
    free(block);
}

/* The two terms of the test loss (Bombari-Mondelli, Eqs. 20-21; rf.h): with mean factor f_k
 * and variance v_k of mode k, noise = mean_j [sum_k G_jk^2 s^2 v_k + s^2 t ||P_perp phi_j||^2]
 * and early = mean_j (sum_k G_jk (f_k - 1) beta_k)^2. */
void hdp_rf_loss_terms(const hdp_rf_problem *pb, double eta, double s, double t, int discrete,
                       double *noise, double *early)
{
    if (!pb || !noise || !early)
        return;
    *noise = *early = NAN;
    const long m = pb->spec.k.test_size, r = pb->r;
    double *gap, *var, var_perp;
    void *block = mode_laws(pb, eta, s, t, discrete, 1.0, &gap, &var, &var_perp);
    if (!block || !pb->G) {
        free(block);
        return;
    }
    double an = 0, ae = 0;
    for (long j = 0; j < m; j++) {
        const double *gj = pb->G + j * r;
        double e = 0, q = 0;
        for (long k = 0; k < r; k++) {
            e += gj[k] * gap[k];
            q += gj[k] * gj[k] * var[k];
        }
        an += q + var_perp * pb->test_perp2[j];
        ae += e * e;
    }
    *noise = an / (double)m;
    *early = ae / (double)m;
    free(block);
}
