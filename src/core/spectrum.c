/*
 * spectrum.c — eigenvalues of Sigma and their bins (docs/theory.md §1 and §3).
 * Spectra: isotropic lambda_j = 1; power law lambda_j ~ j^(-alpha); two-level:
 * round(f d) eigenvalues equal r times the others; from a file. Always
 * normalised to mean 1 afterwards.
 */
#include "hdpsgd/spectrum.h"
#include "core/check.h"
#include "core/spectrum_internal.h"
#include "hdpsgd/dataset.h"

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
    free(spec->energy);
    free(spec->bin_energy);
    memset(spec, 0, sizeof *spec);
}

double hdp_spectrum_risk0(const hdp_spectrum *spec, double R0)
{
    if (!spec->bin_energy)
        return R0;
    double r = 0;
    for (long b = 0; b < spec->m; b++)
        r += spec->bin_weight[b] * spec->bin_lambda[b] * spec->bin_energy[b];
    return r;
}

/* a copy of n values (uninitialised when src is NULL, as the arrays of a spectrum being
 * built); at least one allocated */
static double *dup_doubles(const double *src, long n)
{
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (v && src && n > 0)
        memcpy(v, src, sizeof(double) * (size_t)n);
    return v;
}

hdp_status hdp_spectrum_copy(const hdp_spectrum *src, hdp_spectrum *dst, hdp_error *err)
{
    HDP_ZERO(dst);
    HDP_REQUIRE(err, src);
    HDP_REQUIRE(err, dst);
    *dst = *src;
    dst->lambda = dup_doubles(src->lambda, src->d);
    dst->bin_lambda = dup_doubles(src->bin_lambda, src->m);
    dst->bin_weight = dup_doubles(src->bin_weight, src->m);
    dst->energy = src->energy ? dup_doubles(src->energy, src->d) : NULL;
    dst->bin_energy = src->bin_energy ? dup_doubles(src->bin_energy, src->m) : NULL;
    if (!dst->lambda || !dst->bin_lambda || !dst->bin_weight || (src->energy && !dst->energy) ||
        (src->bin_energy && !dst->bin_energy)) {
        hdp_spectrum_free(dst);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a spectrum of d = %ld", src->d);
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

typedef struct {
    double l, e;
    long i;
} pair;

static int cmp_pair_desc(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->l != y->l)
        return (x->l < y->l) - (x->l > y->l);
    return (x->i > y->i) - (x->i < y->i);
}

/* The target's energies e_j (any scale) for the eigenvalues l as given (before sorting), or
 * 0 for the uniform target; into e (d). */
static int target_energies(const hdp_model *m, double *e)
{
    long d = m->d;
    const hdp_data *data = hdp_model_data(m);
    if (data) {
        if (data->planted)
            return 0;
        const hdp_data_bias *b = NULL;
        hdp_error ignore;
        hdp_error_clear(&ignore);
        /* finite c: the shifted problem around theta_c (docs/theory.md §9); its failure is
         * reported by hdp_spectrum_of_checked, which asked first */
        const int shifted = hdp_data_bias_of(m, &b, &ignore) == HDP_OK && b;
        memcpy(e, shifted ? b->energy : data->train.energy, sizeof(double) * (size_t)d);
        return 1;
    }
    if (m->target == HDP_TARGET_FILE) {
        memcpy(e, m->file_energy, sizeof(double) * (size_t)d);
        return 1;
    }
    if (m->target == HDP_TARGET_POWERLAW) {
        /* the j-th eigendirection in decreasing order of the eigenvalues: the spectrum as
         * built below is sorted, so the powerlaw energies are assigned after the sort */
        for (long j = 0; j < d; j++) e[j] = pow((double)(j + 1), -m->target_exponent);
        return 2;
    }
    return 0;
}

/* The eigenvalues of the model as given (unsorted, unnormalised) into l. */
static void raw_eigenvalues(const hdp_model *m, double *l)
{
    long d = m->d;
    const hdp_data *data = hdp_model_data(m);
    if (data) {
        memcpy(l, data->train.lambda, sizeof(double) * (size_t)d);
        return;
    }
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
}

/* Sort l decreasing, carrying the energies e along (kind 1: paired with the eigenvalues as
 * given; kind 2: assigned in the sorted order, nothing to carry); then D_j(0) =
 * (d/2) r*^2 e_j / sum e for the synthetic targets, D_j(0) = the data's energies as they are
 * (already (d/2)(u_j^T theta*)^2). */
static hdp_status sort_with_energies(const hdp_model *m, double *l, double *e, int kind,
                                     hdp_error *err)
{
    long d = m->d;
    if (kind == 1) {
        pair *p = malloc(sizeof(pair) * (size_t)d);
        if (!p)
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld eigenvalues", d);
        for (long j = 0; j < d; j++) p[j] = (pair){l[j], e[j], j};
        qsort(p, (size_t)d, sizeof(pair), cmp_pair_desc);
        for (long j = 0; j < d; j++) {
            l[j] = p[j].l;
            e[j] = p[j].e;
        }
        free(p);
    } else {
        qsort(l, (size_t)d, sizeof(double), cmp_desc);
    }
    if (!kind || hdp_model_data(m))
        return HDP_OK;
    double sum = 0;
    for (long j = 0; j < d; j++) sum += e[j];
    double f = 0.5 * (double)d * m->target_radius * m->target_radius / sum;
    for (long j = 0; j < d; j++) e[j] *= f;
    return HDP_OK;
}

/* The bins' energies: the mean of each bin's members, the bins being runs of consecutive
 * eigenvalues [start[b], start[b + 1]) */
static void bin_means(const double *e, const long *start, long nb, long d, double *out)
{
    for (long b = 0; b < nb; b++) {
        long hi = b + 1 < nb ? start[b + 1] : d;
        double s = 0;
        for (long j = start[b]; j < hi; j++) s += e[j];
        out[b] = s / (double)(hi - start[b]);
    }
}

hdp_status hdp_spectrum_of_checked(const hdp_model *m, hdp_spectrum *spec, hdp_error *err)
{
    memset(spec, 0, sizeof *spec);
    long d = m->d;
    const hdp_data *data = hdp_model_data(m);
    if (data && fabs(data->train.trace - (double)d) > 1e-6 * (double)d)
        return hdp_model_fail_key(m, "data", "scale", err,
                                  "the rows' covariance has mean eigenvalue %g, the ODE and the "
                                  "Monte Carlo take mean 1: use scale = trace (scale = none is "
                                  "for `hdpsgd dataset` only)", data->train.trace / (double)d);
    const hdp_data_bias *bias = NULL;
    hdp_status bst = hdp_data_bias_of(m, &bias, err); /* computed once per c, cached */
    if (bst != HDP_OK)
        return bst;
    spec->d = d;
    spec->lambda = malloc(sizeof(double) * (size_t)d);
    double *e = malloc(sizeof(double) * (size_t)d);
    if (!spec->lambda || !e) {
        free(e);
        hdp_spectrum_free(spec);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld eigenvalues", d);
    }
    double *l = spec->lambda;
    raw_eigenvalues(m, l);
    int kind = target_energies(m, e);
    hdp_status st = sort_with_energies(m, l, e, kind, err);
    if (st != HDP_OK || !kind) {
        free(e);
        e = NULL;
    }
    spec->energy = e;
    if (st != HDP_OK) {
        hdp_spectrum_free(spec);
        return st;
    }
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
    if (m->spectrum == HDP_SPECTRUM_ISOTROPIC && !data)
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
    long *start = e ? malloc(sizeof(long) * (size_t)m_bins) : NULL;
    spec->bin_energy = e ? malloc(sizeof(double) * (size_t)m_bins) : NULL;
    if (!spec->bin_lambda || !spec->bin_weight || (e && (!start || !spec->bin_energy))) {
        free(start);
        hdp_spectrum_free(spec);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld bins", m_bins);
    }
    if (m->bins <= 0) {
        long b = 0, first = 0;
        for (long j = 1; j <= d; j++) {
            if (j == d || l[j] != l[j - 1]) {
                spec->bin_lambda[b] = l[first];
                spec->bin_weight[b] = (double)(j - first) / (double)d;
                if (start)
                    start[b] = first;
                b++;
                first = j;
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
            if (start)
                start[b] = lo;
        }
    }
    if (e)
        bin_means(e, start, m_bins, d, spec->bin_energy);
    free(start);
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
    double *be = spec->energy ? malloc(sizeof(double) * (size_t)(2 * m + 1)) : NULL;
    if (!bl || !bw || (spec->energy && !be)) {
        free(bl);
        free(bw);
        free(be);
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
            double x[2], w[2], emean = 0;
            int k = gauss2(l + start, end - start, x, w);
            if (be) {
                for (long j = start; j < end; j++) emean += spec->energy[j];
                emean /= (double)(end - start);
            }
            for (int q = 0; q < k; q++) {
                bl[nb] = x[q];
                bw[nb] = w[q] * (double)(end - start) / (double)d;
                if (be)
                    be[nb] = emean;
                nb++;
            }
            start = end;
        }
    }
    if (npos < d) {
        bl[nb] = 0.0;
        bw[nb] = (double)(d - npos) / (double)d;
        if (be) {
            double s = 0;
            for (long j = npos; j < d; j++) s += spec->energy[j];
            be[nb] = s / (double)(d - npos);
        }
        nb++;
    }
    free(spec->bin_lambda);
    free(spec->bin_weight);
    free(spec->bin_energy);
    spec->bin_lambda = bl;
    spec->bin_weight = bw;
    spec->bin_energy = be;
    spec->m = nb;
    return HDP_OK;
}
