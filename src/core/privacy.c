/*
 * privacy.c — privacy accounting (docs/theory.md §6).
 *
 * Amplification by iteration: rho_acc = max_k eta_k / sqrt(sum_{j>=k} sigma_j^2).
 * zCDP -> (epsilon, delta):
 *   Bun-Steinke                epsilon = rho_z + 2 sqrt(rho_z ln(1/delta))
 *   Canonne-Kamath-Steinke     epsilon = min_{alpha>1} alpha rho_z + ln(1 - 1/alpha)
 *                                                     - (ln delta + ln alpha)/(alpha - 1)
 * The CKS minimum is found over u = ln(alpha - 1): a coarse scan brackets it,
 * GSL's Brent minimiser refines it. Reference (docs/theory.md §6): rho_z = 0.03125,
 * delta = 1e-3 gives 0.96048... (BS) and 0.6880024554878086 (CKS).
 * Full-batch DP-GD (docs/theory.md §6, Mondelli's notes and Bombari-Mondelli): rho_z = eta T / (2
 * sigma^2), and Bombari-Mondelli's sigma = sqrt(eta T) sqrt(8 ln(1/delta)) / epsilon for epsilon in
 * (0, 8 ln(1/delta)).
 */
#include "hdpsgd/privacy.h"
#include "core/check.h"
#include "hdpsgd/error.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stdlib.h>

/* one step k of the backward pass (k = n-1 down to 0): 0 when eta_k > 0 has no noise
 * at or after it (the accountant is then +inf) */
static int accountant_step(double eta, double sigma, long double *tail, double *worst)
{
    *tail += (long double)sigma * sigma;
    if (eta <= 0)
        return 1;
    if (*tail <= 0)
        return 0;
    double r = (double)((long double)eta / sqrtl(*tail));
    if (r > *worst)
        *worst = r;
    return 1;
}

double hdp_privacy_accountant(const double *eta, const double *sigma, long n)
{
    if (!eta || !sigma)
        return NAN;
    long double tail = 0;
    double worst = 0;
    for (long k = n - 1; k >= 0; k--)
        if (!accountant_step(eta[k], sigma[k], &tail, &worst))
            return INFINITY;
    return worst;
}

/* the same pass with eta_k, sigma_k generated on the way: no O(n) arrays */
double hdp_privacy_accountant_schedule(const hdp_schedule *s, long n)
{
    if (!s)
        return NAN;
    long double tail = 0;
    double worst = 0;
    for (long k = n - 1; k >= 0; k--) {
        double eta, sigma;
        hdp_sched_step(s, n, k, &eta, &sigma);
        if (!accountant_step(eta, sigma, &tail, &worst))
            return INFINITY;
    }
    return worst;
}

double hdp_privacy_accountant_batches(const hdp_schedule *s, long n, long B)
{
    if (!s || n < 1 || B < 1)
        return NAN;
    long double tail = 0;
    double worst = 0;
    for (long k = hdp_sched_batch_count(n, B) - 1; k >= 0; k--) {
        double eta, sigma;
        long rows;
        hdp_sched_batch_step(s, n, B, k, &eta, &sigma, &rows);
        /* one row moves the averaged gradient by at most 2 C / B_k: the sensitivity of the
         * step is 2 C eta_k / B_k against the noise 2 C sigma_k (B = 1: eta_k exactly) */
        if (!accountant_step(rows > 1 ? eta / (double)rows : eta, sigma, &tail, &worst))
            return INFINITY;
    }
    return worst;
}

double hdp_zcdp_epsilon_bs(double rho_z, double delta)
{
    if (isinf(rho_z))
        return INFINITY;
    return rho_z + 2.0 * sqrt(rho_z * log(1.0 / delta));
}

typedef struct {
    double rho_z, log_delta;
} cks_args;

/* the CKS objective at alpha = 1 + e^u */
static double cks_objective(double u, void *p)
{
    const cks_args *a = p;
    double am1 = exp(u), alpha = 1.0 + am1;
    return alpha * a->rho_z + log1p(-1.0 / alpha) - (a->log_delta + log(alpha)) / am1;
}

double hdp_zcdp_epsilon_cks(double rho_z, double delta)
{
    if (isinf(rho_z))
        return INFINITY;
    if (rho_z <= 0)
        return 0.0;
    cks_args a = {rho_z, log(delta)};
    /* coarse scan over u in [-30, 30] */
    const int N = 1201;
    double best_u = 0, best = INFINITY;
    int best_i = 0;
    for (int i = 0; i < N; i++) {
        double u = -30.0 + 60.0 * i / (N - 1);
        double f = cks_objective(u, &a);
        if (f < best) {
            best = f;
            best_u = u;
            best_i = i;
        }
    }
    if (best_i == 0 || best_i == N - 1)
        return best > 0 ? best : 0.0;
    double lo = best_u - 60.0 / (N - 1), hi = best_u + 60.0 / (N - 1);
    gsl_function F = {cks_objective, &a};
    hdp_gsl_quiet();
    gsl_min_fminimizer *s = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
    double result = best;
    if (s && gsl_min_fminimizer_set(s, &F, best_u, lo, hi) == GSL_SUCCESS) {
        for (int it = 0; it < 200; it++) {
            if (gsl_min_fminimizer_iterate(s) != GSL_SUCCESS)
                break;
            double a_ = gsl_min_fminimizer_x_lower(s), b_ = gsl_min_fminimizer_x_upper(s);
            if (gsl_min_test_interval(a_, b_, 1e-13, 0.0) == GSL_SUCCESS)
                break;
        }
        result = gsl_min_fminimizer_f_minimum(s);
    }
    if (s)
        gsl_min_fminimizer_free(s);
    if (best < result)
        result = best;
    return result > 0 ? result : 0.0;
}

typedef struct {
    double epsilon, delta;
} inv_args;

static double cks_minus_target(double log_rho, void *p)
{
    const inv_args *a = p;
    return hdp_zcdp_epsilon_cks(exp(log_rho), a->delta) - a->epsilon;
}

hdp_status hdp_zcdp_from_epsilon(double epsilon, double delta, double *rho_z, hdp_error *err)
{
    HDP_REQUIRE(err, rho_z);
    if (!(epsilon > 0) || !isfinite(epsilon))
        return hdp_fail(err, HDP_EINPUT, "epsilon = %g: expected a finite number > 0", epsilon);
    if (!(delta > 0 && delta < 1))
        return hdp_fail(err, HDP_EINPUT, "delta = %g: expected a number in (0, 1)", delta);
    inv_args a = {epsilon, delta};
    gsl_function F = {cks_minus_target, &a};
    double lo = log(1e-16), hi = log(epsilon) + 1.0;
    while (cks_minus_target(hi, &a) < 0)
        hi += 2.0;
    if (cks_minus_target(lo, &a) > 0)
        return hdp_fail(err, HDP_EINPUT, "epsilon = %g at delta = %g is below what any rho_z >= 1e-16 gives",
                        epsilon, delta);
    hdp_gsl_quiet();
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    hdp_status st = HDP_OK;
    if (!s) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the root finder");
    } else if (gsl_root_fsolver_set(s, &F, lo, hi) != GSL_SUCCESS) {
        st = hdp_fail(err, HDP_ENUMERIC, "root finder could not start for epsilon = %g", epsilon);
    } else {
        for (int it = 0; it < 300; it++) {
            gsl_root_fsolver_iterate(s);
            double x_lo = gsl_root_fsolver_x_lower(s), x_hi = gsl_root_fsolver_x_upper(s);
            if (gsl_root_test_interval(x_lo, x_hi, 1e-15, 1e-15) == GSL_SUCCESS)
                break;
        }
        *rho_z = exp(gsl_root_fsolver_root(s));
    }
    if (s)
        gsl_root_fsolver_free(s);
    return st;
}

/* ---- full-batch DP-GD (docs/theory.md §6) ---- */

double hdp_dpgd_rho_z(double eta, long steps, double sigma)
{
    if (!(sigma > 0))
        return INFINITY;
    return eta * (double)steps / (2.0 * sigma * sigma);
}

double hdp_dpgd_epsilon_simple(double eta, long steps, double sigma, double delta)
{
    if (!(sigma > 0))
        return INFINITY;
    return sqrt(eta * (double)steps) * sqrt(8.0 * log(1.0 / delta)) / sigma;
}

double hdp_dpgd_sigma_simple(double eta, long steps, double epsilon, double delta)
{
    return sqrt(eta * (double)steps) * sqrt(8.0 * log(1.0 / delta)) / epsilon;
}

int hdp_dpgd_simple_applies(double epsilon, double delta)
{
    return epsilon > 0 && delta > 0 && delta < 1 && epsilon < 8.0 * log(1.0 / delta);
}

hdp_status hdp_dpgd_sigma_zcdp(double eta, long steps, double epsilon, double delta,
                               double *sigma, double *rho_z_out, hdp_error *err)
{
    HDP_REQUIRE(err, sigma);
    if (!(eta > 0) || !isfinite(eta))
        return hdp_fail(err, HDP_EINPUT, "eta = %g: the DP-GD step size must be a finite number > 0",
                        eta);
    if (steps < 1)
        return hdp_fail(err, HDP_EINPUT, "T = %ld: the number of DP-GD steps must be >= 1", steps);
    double rz;
    hdp_status st = hdp_zcdp_from_epsilon(epsilon, delta, &rz, err);
    if (st != HDP_OK)
        return st;
    *sigma = sqrt(eta * (double)steps / (2.0 * rz));
    if (rho_z_out)
        *rho_z_out = rz;
    return HDP_OK;
}
