/*
 * spectrum.c — eigenvalues of Sigma and their bins (THEORY.md sections 1 and 3).
 * Spectra: isotropic lambda_j = 1; power law lambda_j ~ j^(-alpha); two-level:
 * round(f d) eigenvalues equal r times the others; from a file. Always
 * normalised to mean 1 afterwards.
 */
#include "hdpsgd/spectrum.h"

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

hdp_status hdp_spectrum_build(const hdp_model *m, hdp_spectrum *spec, hdp_error *err)
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
    double scale = (double)d / sum;
    for (long j = 0; j < d; j++) l[j] *= scale;
    /* exact ones stay exact: the isotropic spectrum is 1.0, not 1 +- ulp */
    if (m->spectrum == HDP_SPECTRUM_ISOTROPIC)
        for (long j = 0; j < d; j++) l[j] = 1.0;
    spec->lambda_max = l[0];
    spec->lambda_min = l[d - 1];

    /* bins */
    long m_bins;
    if (m->bins == 0) {
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
    if (m->bins == 0) {
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
