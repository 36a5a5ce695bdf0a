/*
 * hdpsgd/spectrum.h — the covariance spectrum and its bins (docs/theory.md §1 and §3).
 *
 * The d eigenvalues lambda_1..lambda_d of Sigma, normalised to mean 1
 * (Tr Sigma = d), sorted in decreasing order; and the m bins the ODE uses:
 * bin j has eigenvalue bin_lambda[j] and weight bin_weight[j] (fraction of the
 * d eigenvalues), sum_j w_j = 1 and sum_j w_j lambda_j = 1.
 * Binning: bins = 0 gives one bin per distinct eigenvalue (exact for the
 * isotropic and two-level spectra); bins = m groups the sorted eigenvalues into
 * m quantile bins of (nearly) equal count, with the bin-mean eigenvalue.
 */
#ifndef HDPSGD_SPECTRUM_H
#define HDPSGD_SPECTRUM_H

#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    long d;
    double *lambda;     /* d eigenvalues, mean 1, decreasing */
    long m;             /* number of bins */
    double *bin_lambda; /* m bin eigenvalues */
    double *bin_weight; /* m weights (fractions of d) */
    double lambda_min, lambda_max;
    /* The target's energy per eigendirection, D_j(0) = (d/2)(u_j^T theta*)^2 (docs/theory.md
     * §3.1, §9), for a target that is not uniform on the sphere (data.target = powerlaw, file,
     * least-squares); NULL for the uniform target, whose D_j(0) = r*^2/2 in every direction.
     * energy[j] belongs to lambda[j]; bin_energy[b] is the mean of the energies of bin b's
     * members (both Gauss nodes of a log bin get their bin's mean). */
    double *energy;     /* d, or NULL */
    double *bin_energy; /* m, or NULL */
} hdp_spectrum;

/* D_b(0) of bin b: bin_energy[b], or R0 (= r*^2/2) for the uniform target. */
static inline double hdp_spectrum_D0(const hdp_spectrum *spec, long b, double R0)
{
    return spec->bin_energy ? spec->bin_energy[b] : R0;
}

/* R(0) = sum_b w_b lambda_b D_b(0) on the bins (R0 itself for the uniform target). */
double hdp_spectrum_risk0(const hdp_spectrum *spec, double R0);

/* Build the spectrum of a finalized model. Free with hdp_spectrum_free. */
hdp_status hdp_spectrum_build(const hdp_model *m, hdp_spectrum *spec, hdp_error *err);

/* Replace the bins by m log-spaced bins in lambda (docs/theory.md §3, "a large spectrum
 * is a question of binning"), each represented by the two-node Gauss
 * quadrature of the eigenvalues it holds: nodes and weights match the bin's
 * weight and its first three moments, so sum_j w_j lambda_j^k is exact for
 * k <= 3 within every bin (one node when the bin holds one distinct value).
 * Zero eigenvalues form one bin of their own. At most 2m (+1) bins result. */
hdp_status hdp_spectrum_bin_log(hdp_spectrum *spec, long m, hdp_error *err);

/* A deep copy of src into dst (dst zeroed first; free it with hdp_spectrum_free). */
hdp_status hdp_spectrum_copy(const hdp_spectrum *src, hdp_spectrum *dst, hdp_error *err);

/* Number of distinct eigenvalues. */
long hdp_spectrum_distinct(const hdp_spectrum *spec);

/* Release the arrays; spec may be zeroed or half-built. */
void hdp_spectrum_free(hdp_spectrum *spec);

#ifdef __cplusplus
}
#endif
#endif
