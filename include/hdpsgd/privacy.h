/*
 * hdpsgd/privacy.h — privacy accounting (THEORY.md section 6).
 *
 * Conventions: rho is the parameter of THEORY 1 (the output is
 * (rho^2/2)-zCDP); rho_z = rho^2/2 is the zCDP parameter proper.
 */
#ifndef HDPSGD_PRIVACY_H
#define HDPSGD_PRIVACY_H

#include "hdpsgd/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Privacy amplification by iteration (Feldman-Koren-Talwar), THEORY 6:
 * rho_acc = max_k eta_k / sqrt(sum_{j >= k} sigma_j^2) over k = 0..n-1, for
 * arrays eta[n], sigma[n] (sigma_j not squared). Suffix sums in long double.
 * Returns +inf when some eta_k > 0 has no noise after it. */
double hdp_privacy_accountant(const double *eta, const double *sigma, long n);

/* The accountant applied to the discrete schedule of THEORY 1 with n steps.
 * For every schedule kind this equals the schedule's rho (a unit test). */
double hdp_privacy_accountant_schedule(const hdp_schedule *s, long n);

/* zCDP (rho_z) to (epsilon, delta)-DP, Bun-Steinke: rho_z + 2 sqrt(rho_z ln(1/delta)). */
double hdp_zcdp_epsilon_bs(double rho_z, double delta);

/* zCDP to (epsilon, delta)-DP, Canonne-Kamath-Steinke (tighter):
 * min over alpha > 1 of alpha rho_z + ln(1 - 1/alpha) - (ln delta + ln alpha)/(alpha - 1).
 * rho_z = inf gives inf; rho_z = 0 gives 0. */
double hdp_zcdp_epsilon_cks(double rho_z, double delta);

/* The rho_z whose CKS epsilon at delta equals epsilon (bracketing root finder).
 * Returns HDP_EINPUT for epsilon <= 0 or delta outside (0, 1). */
hdp_status hdp_zcdp_from_epsilon(double epsilon, double delta, double *rho_z, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
