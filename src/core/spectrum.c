/*
 * spectrum.c — eigenvalues of Sigma and their bins (docs/theory.md §1 and §3).
 * Spectra: isotropic lambda_j = 1; power law lambda_j ~ j^(-alpha); two-level:
 * round(f d) eigenvalues equal r times the others; from a file. Always
 * normalised to mean 1 afterwards.
 */
#include "hdpsgd/spectrum.h"
#include "core/check.h"
#include "core/spectrum_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

void hdp_spectrum_free(hdp_spectrum *spec)
{
    if (!spec)
        return;
    free(spec->lambda);
    free(spec->bin_lambda);
    free(spec->bin_weight);
    memset(spec, 0, sizeof *spec);
}

hdp_status hdp_spectrum_copy(const hdp_spectrum *src, hdp_spectrum *dst, hdp_error *err)
{
    HDP_ZERO(dst);
    HDP_REQUIRE(err, src);
    HDP_REQUIRE(err, dst);
    *dst = *src;
    dst->lambda = malloc(sizeof(double) * (size_t)(src->d > 0 ? src->d : 1));
    dst->bin_lambda = malloc(sizeof(double) * (size_t)(src->m > 0 ? src->m : 1));
    dst->bin_weight = malloc(sizeof(double) * (size_t)(src->m > 0 ? src->m : 1));
    if (!dst->lambda || !dst->bin_lambda || !dst->bin_weight) {
        hdp_spectrum_free(dst);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a spectrum of d = %ld", src->d);
    }
    if (src->d > 0 && src->lambda)
        memcpy(dst->lambda, src->lambda, sizeof(double) * (size_t)src->d);
    if (src->m > 0 && src->bin_lambda && src->bin_weight) {
        memcpy(dst->bin_lambda, src->bin_lambda, sizeof(double) * (size_t)src->m);
        memcpy(dst->bin_weight, src->bin_weight, sizeof(double) * (size_t)src->m);
    }
    return HDP_OK;
}

hdp_status hdp_spectrum_build(const hdp_model *m, hdp_spectrum *spec, hdp_error *err)
{
    HDP_ZERO(spec);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, spec);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    return hdp_spectrum_of_checked(m, spec, err);
}

hdp_status hdp_spectrum_of_checked(const hdp_model *m, hdp_spectrum *spec, hdp_error *err)
{
    memset(spec, 0, sizeof *spec);
    long d = m->d;
    spec->d = d;
    spec->lambda = malloc(sizeof(double) * (size_t)d);
    if (!spec->lambda)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld eigenvalues", d);
    double *l = spec->lambda;
    switch (m->spectrum) {
    case HDP_SPECTRUM_ISOTROPIC:
        for (long j = 0; j < d; j++) l[j] = 1.0;
        break;
    case HDP_SPECTRUM_POWERLAW:
        for (long j = 0; j < d; j++) l[j] = pow((double)(j + 1), -m->spectrum_alpha);
        break;
    case HDP_SPECTRUM_TWOLEVEL: {
        long k = (long)nearbyint(m->twolevel_fraction * (double)d);
        if (d == 1) k = 0;
        for (long j = 0; j < d; j++) l[j] = j < k ? m->twolevel_ratio : 1.0;
        break;
    }
    case HDP_SPECTRUM_FILE:
        memcpy(l, m->file_lambda, sizeof(double) * (size_t)d);
        break;
    }
    qsort(l, (size_t)d, sizeof(double), cmp_desc);
    double sum = 0;
    for (long j = 0; j < d; j++) sum += l[j];
    if (!isfinite(sum)) {
        /* the sum overflowed (eigenvalues near 1.8e308): scale by the largest first, so
         * that the sum is at most d (only then, so that other spectra keep their bits) */
        double top = 0;
        for (long j = 0; j < d; j++) top = fmax(top, l[j]);
        for (long j = 0; j < d; j++) l[j] /= top;
        sum = 0;
        for (long j = 0; j < d; j++) sum += l[j];
    }
    double scale = (double)d / sum;
    for (long j = 0; j < d; j++) l[j] *= scale;
    /* exact ones stay exact: the isotropic spectrum is 1.0, not 1 +- ulp */
    if (m->spectrum == HDP_SPECTRUM_ISOTROPIC)
        for (long j = 0; j < d; j++) l[j] = 1.0;
    spec->lambda_max = l[0];
    spec->lambda_min = l[d - 1];

    /* bins */
    long m_bins;
    if (m->bins <= 0) {
        m_bins = 1;
        for (long j = 1; j < d; j++) m_bins += l[j] != l[j - 1];
    } else {
        m_bins = m->bins;
    }
    spec->m = m_bins;
    spec->bin_lambda = malloc(sizeof(double) * (size_t)m_bins);
    spec->bin_weight = malloc(sizeof(double) * (size_t)m_bins);
    if (!spec->bin_lambda || !spec->bin_weight) {
        hdp_spectrum_free(spec);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld bins", m_bins);
    }
    if (m->bins <= 0) {
        long b = 0, start = 0;
        for (long j = 1; j <= d; j++) {
            if (j == d || l[j] != l[j - 1]) {
                spec->bin_lambda[b] = l[start];
                spec->bin_weight[b] = (double)(j - start) / (double)d;
                b++;
                start = j;
            }
        }
    } else {
        for (long b = 0; b < m_bins; b++) {
            long lo = (long)((double)b * (double)d / (double)m_bins);
            long hi = (long)((double)(b + 1) * (double)d / (double)m_bins);
            if (b == m_bins - 1) hi = d;
            double s = 0;
            for (long j = lo; j < hi; j++) s += l[j];
            spec->bin_lambda[b] = s / (double)(hi - lo);
            spec->bin_weight[b] = (double)(hi - lo) / (double)d;
        }
    }
    return HDP_OK;
}

long hdp_spectrum_distinct(const hdp_spectrum *spec)
{
    if (!spec)
        return 0;
    long k = spec->d > 0;
    for (long j = 1; j < spec->d; j++) k += spec->lambda[j] != spec->lambda[j - 1];
    return k;
}

/* Two-node Gauss rule of the equally weighted values l[0..c-1] (Golub-Welsch on
 * the 2x2 Jacobi matrix [[a0, sqrt(b1)], [sqrt(b1), a1]]). Returns the number of
 * nodes (1 or 2); weights sum to 1. */
static int gauss2(const double *l, long c, double *x, double *w)
{
    long double mean = 0, var = 0, third = 0;
    for (long i = 0; i < c; i++) mean += l[i];
    mean /= c;
    for (long i = 0; i < c; i++) {
        long double dlt = l[i] - mean;
        var += dlt * dlt;
        third += l[i] * dlt * dlt;
    }
    var /= c;
    third /= c;
    if (!(var > 1e-28L * mean * mean)) {
        x[0] = (double)mean;
        w[0] = 1.0;
        return 1;
    }
    double a0 = (double)mean, a1 = (double)(third / var), b = (double)sqrtl(var);
    double half = 0.5 * (a0 + a1), rad = sqrt(0.25 * (a0 - a1) * (a0 - a1) + b * b);
    x[0] = half - rad;
    x[1] = half + rad;
    /* the nodes of a measure lie in its support [l[c-1], l[0]]: rounding in half - rad
     * could put the lower one below it (below 0 when the bin spans many decades) */
    x[0] = fmin(fmax(x[0], l[c - 1]), l[0]);
    x[1] = fmin(fmax(x[1], l[c - 1]), l[0]);
    /* the weights that keep the mass and the mean: w0 + w1 = 1, w0 x0 + w1 x1 = a0. (The
     * eigenvector form b^2 / (b^2 + (x_k - a0)^2) is the same in exact arithmetic, but lost
     * up to 2e-7 of the bin's mass to cancellation in x_k - a0 when a bin spans many
     * decades.) */
    double span = x[1] - x[0];
    w[0] = fmin(fmax((x[1] - a0) / span, 0.0), 1.0);
    w[1] = 1.0 - w[0];
    return 2;
}

/* The log bin of eigenvalue v in [0, m): one rule for every eigenvalue (computed once
 * per eigenvalue and clamped), so that copies of a value on a bin edge, and the top and
 * bottom eigenvalues, always land in one bin. Non-decreasing as v decreases (log,
 * subtraction and division are monotone under rounding), so the bins of a decreasing
 * spectrum are runs of consecutive eigenvalues: at most m runs, 2m Gauss nodes. */
static long log_bin(double v, double hi, double width, long m)
{
    if (!(width > 0))
        return 0;
    double q = (hi - log(v)) / width;
    if (!(q > 0))
        return 0;
    return q >= (double)m ? m - 1 : (long)q;
}

hdp_status hdp_spectrum_bin_log(hdp_spectrum *spec, long m, hdp_error *err)
{
    HDP_REQUIRE(err, spec);
    if (m < 1)
        return hdp_fail(err, HDP_EINPUT, "log binning needs m >= 1 bins (got %ld)", m);
    long d = spec->d;
    const double *l = spec->lambda; /* decreasing */
    long npos = d;
    while (npos > 0 && !(l[npos - 1] > 0)) npos--;
    double *bl = malloc(sizeof(double) * (size_t)(2 * m + 1));
    double *bw = malloc(sizeof(double) * (size_t)(2 * m + 1));
    if (!bl || !bw) {
        free(bl);
        free(bw);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld bins", 2 * m + 1);
    }
    long nb = 0;
    if (npos > 0) {
        double lo = log(l[npos - 1]), hi = log(l[0]);
        double width = (hi - lo) / (double)m;
        long start = 0;
        while (start < npos) {
            long b = log_bin(l[start], hi, width, m);
            long end = start + 1;
            while (end < npos && log_bin(l[end], hi, width, m) == b) end++;
            double x[2], w[2];
            int k = gauss2(l + start, end - start, x, w);
            for (int q = 0; q < k; q++) {
                bl[nb] = x[q];
                bw[nb] = w[q] * (double)(end - start) / (double)d;
                nb++;
            }
            start = end;
        }
    }
    if (npos < d) {
        bl[nb] = 0.0;
        bw[nb] = (double)(d - npos) / (double)d;
        nb++;
    }
    free(spec->bin_lambda);
    free(spec->bin_weight);
    spec->bin_lambda = bl;
    spec->bin_weight = bw;
    spec->m = nb;
    return HDP_OK;
}
