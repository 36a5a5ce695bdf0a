/*
 * rf_privacy.c — the DP-GD hyperparameters of the random-features family and their privacy
 * calibration (docs/theory.md §6): hdp_rf_dpgd_calibrate, and hdp_rf_dpgd_from_model with
 * Bombari-Mondelli's experimental scalings (docs/theory.md §7).
 */
#include "hdpsgd/rf.h"
#include "core/alloc.h"
#include "core/check.h"
#include "families/rf_internal.h"

#include <math.h>

#include "hdpsgd/privacy.h"

/* ---- hyperparameters and privacy (docs/theory.md §6) ---- */

hdp_status hdp_rf_dpgd_calibrate(hdp_rf_dpgd *q, long n, hdp_error *err)
{
    HDP_REQUIRE(err, q);
    if (!(q->eta > 0) || !isfinite(q->eta))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: eta = %g must be a finite number > 0", q->eta);
    if (q->T < 1)
        return hdp_fail(err, HDP_EINPUT, "DP-GD: T = %ld steps: need at least 1", q->T);
    if (!(q->C_clip > 0))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: C_clip = %g must be > 0", q->C_clip);
    if (!(q->delta > 0 && q->delta < 1))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: delta = %g must lie in (0, 1)", q->delta);
    q->tau = q->eta * (double)q->T;
    if (q->sigma > 0) {
        /* given: report the CKS epsilon of rho_z = eta T / (2 sigma^2) (docs/theory.md §6) */
        if (isinf(q->C_clip))
            return hdp_fail(err, HDP_EINPUT, "DP-GD: sigma > 0 with C_clip = inf gives infinite "
                            "noise 2 C_clip sigma / n");
        q->route = HDP_RF_SIGMA_GIVEN;
        q->rho_z = hdp_dpgd_rho_z(q->eta, q->T, q->sigma);
        q->epsilon_cks = hdp_zcdp_epsilon_cks(q->rho_z, q->delta);
        q->epsilon = q->epsilon_cks;
    } else if (isinf(q->epsilon)) {
        q->route = HDP_RF_SIGMA_NONE;
        q->sigma = 0;
        q->rho_z = INFINITY;
        q->epsilon_cks = INFINITY;
    } else {
        if (!(q->epsilon > 0))
            return hdp_fail(err, HDP_EINPUT, "DP-GD: epsilon = %g must be > 0", q->epsilon);
        if (isinf(q->C_clip))
            return hdp_fail(err, HDP_EINPUT, "DP-GD: C_clip = inf (no clipping) needs epsilon = "
                            "inf: the private noise 2 C_clip sigma / n would be infinite");
        if (hdp_dpgd_simple_applies(q->epsilon, q->delta)) {
            /* Bombari-Mondelli, Proposition 2.2: sigma = sqrt(eta T) sqrt(8 ln(1/delta)) /
             * epsilon */
            q->route = HDP_RF_SIGMA_SIMPLE;
            q->sigma = hdp_dpgd_sigma_simple(q->eta, q->T, q->epsilon, q->delta);
            q->rho_z = hdp_dpgd_rho_z(q->eta, q->T, q->sigma);
        } else {
            /* outside (0, 8 ln(1/delta)): rho_z = eta T / (2 sigma^2) with rho_z from CKS */
            q->route = HDP_RF_SIGMA_ZCDP;
            hdp_status st =
                hdp_dpgd_sigma_zcdp(q->eta, q->T, q->epsilon, q->delta, &q->sigma, &q->rho_z, err);
            if (st != HDP_OK)
                return st;
        }
        q->epsilon_cks = hdp_zcdp_epsilon_cks(q->rho_z, q->delta);
    }
    q->s = q->sigma > 0 ? 2.0 * q->C_clip * q->sigma / (double)n : 0.0; /* docs/theory.md §7 */
    return HDP_OK;
}

/* The end of both regimes: delta, and the noise of the [dpgd] keys (sigma as given, or
 * calibrated from epsilon), which an infinite C_clip allows only when there is none. */
static hdp_status dpgd_noise(const hdp_model *m, const hdp_dpgd_keys *dk, long n, hdp_rf_dpgd *q,
                             hdp_error *err)
{
    q->delta = dk->delta > 0 ? dk->delta : 1.0 / (double)n;
    if (dk->sigma > 0 && hdp_model_key_given(m, "dpgd", "epsilon"))
        return hdp_model_fail_key(m, "dpgd", "sigma", err,
                                  "sigma = %g > 0 is used as is: leave epsilon out, or set sigma "
                                  "= 0 to calibrate sigma from epsilon", dk->sigma);
    if (isinf(q->C_clip) && (dk->sigma > 0 || !isinf(dk->epsilon))) {
        const char *key = dk->clip > 0 ? "clip" : "C";
        return hdp_model_fail_key(m, "dpgd", key, err,
                                  "C_clip = inf (no clipping) needs epsilon = inf and sigma = 0: "
                                  "the private noise 2 C_clip sigma / n would be infinite");
    }
    q->epsilon = dk->epsilon;
    q->sigma = dk->sigma;
    return hdp_rf_dpgd_calibrate(q, n, err);
}

/* regime = theorem (Bombari-Mondelli, Eq. 8): C_clip = sqrt(p) log^2 n, T = round(d log^2 n /
 * (eta p)); the keys that would set them must be left out. */
static hdp_status theorem_regime(const hdp_model *m, long p, long n, long d, hdp_rf_dpgd *q,
                                 hdp_error *err)
{
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    const char *set[] = {"T", "CT", "C", "clip"};
    for (int i = 0; i < 4; i++)
        if (hdp_model_key_given(m, "dpgd", set[i]))
            return hdp_model_fail_key(m, "dpgd", set[i], err,
                                      "regime = theorem sets C_clip = sqrt(p) log^2 n and T = d "
                                      "log^2 n / (eta p) itself: leave %s out (or use regime = "
                                      "experiments)", set[i]);
    const double L2 = log((double)n) * log((double)n);
    double T = nearbyint((double)d * L2 / (q->eta * (double)p));
    if (!(T >= 1) || T > 1e9)
        return hdp_model_fail_key(m, "dpgd", "regime", err,
                                  "regime = theorem gives T = round(d log^2 n / (eta p)) = %.3g "
                                  "steps (d = %ld, n = %ld, p = %ld, eta = %g): outside [1, 1e9]",
                                  T, d, n, p, q->eta);
    q->T = (long)T;
    q->C_clip = sqrt((double)p) * L2; /* finite */
    return dpgd_noise(m, dk, n, q, err);
}

/* The [dpgd] keys with Bombari-Mondelli's experimental scalings (docs/theory.md §7): eta = 1/p, T =
 * CT d/(eta p), C_clip = C sqrt(p), delta = 1/n; sigma by docs/theory.md §6. */
hdp_status hdp_rf_dpgd_from_model(const hdp_model *m, long p, long n, long d, hdp_rf_dpgd *q,
                                  hdp_error *err)
{
    HDP_ZERO(q);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, q);
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    q->eta = dk->eta > 0 ? dk->eta : 1.0 / (double)p;
    if (dk->regime == HDP_DPGD_THEOREM)
        return theorem_regime(m, p, n, d, q, err);
    if (hdp_model_key_given(m, "dpgd", "T") && hdp_model_key_given(m, "dpgd", "CT"))
        return hdp_model_fail_key(m, "dpgd", "T", err,
                                  "give T or CT, not both (T = %ld, CT = %g; T = CT d/(eta p))",
                                  dk->T, dk->CT);
    if (dk->T > 0) {
        q->T = dk->T;
    } else {
        double T = nearbyint(dk->CT * (double)d / (q->eta * (double)p));
        if (!(T >= 1))
            return hdp_model_fail_key(m, "dpgd", "CT", err,
                                      "CT = %g gives T = round(CT d / (eta p)) = round(%g) = 0 "
                                      "steps (d = %ld, p = %ld, eta = %g): raise CT or give T",
                                      dk->CT, dk->CT * (double)d / (q->eta * (double)p), d,
                                      p, q->eta);
        if (T > 1e9)
            return hdp_model_fail_key(m, "dpgd", "CT", err,
                                      "CT = %g gives T = %.3g steps (d = %ld, p = %ld, eta = %g): "
                                      "too many", dk->CT, T, d, p, q->eta);
        q->T = (long)T;
    }
    if (hdp_model_key_given(m, "dpgd", "C") && hdp_model_key_given(m, "dpgd", "clip"))
        return hdp_model_fail_key(m, "dpgd", "clip", err,
                                  "give C (C_clip = C sqrt(p)) or clip (absolute), not both");
    q->C_clip = dk->clip > 0 ? dk->clip : dk->C * sqrt((double)p);
    return dpgd_noise(m, dk, n, q, err);
}
