/*
 * dataset.c — a data set prepared for the empirical model (hdpsgd/dataset.h, docs/theory.md
 * §9): three passes over the rows in blocks converted to double — the mean; Σ = XᵀX/N (dsyrk)
 * and Xᵀy/N of the centred rows; the rows centred, scaled, rotated into the eigenbasis (dgemm)
 * and written back in their own storage, with the residuals of θ* — and between the second
 * and the third the eigendecomposition of Σ (LAPACKE_dsyevr) and θ*. The rows are never
 * copied whole: the blocks hold at most about 32 MB.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "hdpsgd/dataset.h"

/* rows per block: about 4M doubles */
static long block_rows(long d)
{
    long r = (4L << 20) / d;
    return r < 16 ? 16 : r;
}

/* rows [i0, i0 + k) into buf as doubles, minus mean when given, times s */
static void get_block(const hdp_matrix *m, long i0, long k, const double *mean, double s,
                      double *buf)
{
    size_t d = (size_t)m->d;
    for (long r = 0; r < k; r++) {
        size_t off = (size_t)(i0 + r) * d;
        double *b = buf + (size_t)r * d;
        if (m->f32)
            for (size_t j = 0; j < d; j++)
                b[j] = (double)m->f32[off + j];
        else
            memcpy(b, m->f64 + off, d * sizeof(double));
        if (mean)
            for (size_t j = 0; j < d; j++)
                b[j] -= mean[j];
        if (s != 1.0)
            for (size_t j = 0; j < d; j++)
                b[j] *= s;
    }
}

static void put_block(hdp_matrix *m, long i0, long k, const double *buf)
{
    size_t count = (size_t)k * (size_t)m->d, off = (size_t)i0 * (size_t)m->d;
    if (m->f32)
        for (size_t q = 0; q < count; q++)
            m->f32[off + q] = (float)buf[q];
    else
        memcpy(m->f64 + off, buf, count * sizeof(double));
}

/* rows i0..i0+k-1 of buf (centred and scaled) into m, rotated into the eigenbasis first
 * (buf U^T, through tmp) when the dataset is */
static void put_rotated(const hdp_dataset *ds, hdp_matrix *m, long i0, long k, const double *buf,
                        double *tmp)
{
    const long d = m->d;
    if (ds->rotated)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)k, (blasint)d, (blasint)d,
                    1.0, buf, (blasint)d, ds->u, (blasint)d, 0.0, tmp, (blasint)d);
    put_block(m, i0, k, ds->rotated ? tmp : buf);
}

static void mean_row(const hdp_matrix *m, double *mean)
{
    size_t d = (size_t)m->d;
    for (long i = 0; i < m->n; i++) {
        size_t off = (size_t)i * d;
        if (m->f32)
            for (size_t j = 0; j < d; j++)
                mean[j] += (double)m->f32[off + j];
        else
            for (size_t j = 0; j < d; j++)
                mean[j] += m->f64[off + j];
    }
    for (size_t j = 0; j < d; j++)
        mean[j] /= (double)m->n;
}

/* sigma = XᵀX/N (upper triangle and mirrored) and b = Xᵀy/N of the centred rows (y: NULL) */
static void covariance(const hdp_matrix *m, const double *mean, const double *y, double *buf,
                       double *sigma, double *b)
{
    long d = m->d, br = block_rows(d);
    for (long i0 = 0; i0 < m->n; i0 += br) {
        long k = m->n - i0 < br ? m->n - i0 : br;
        get_block(m, i0, k, mean, 1.0, buf);
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (blasint)d, (blasint)k, 1.0, buf,
                    (blasint)d, 1.0, sigma, (blasint)d);
        if (y)
            cblas_dgemv(CblasRowMajor, CblasTrans, (blasint)k, (blasint)d, 1.0, buf, (blasint)d,
                        y + i0, 1, 1.0, b, 1);
    }
    double inv = 1.0 / (double)m->n;
    for (long i = 0; i < d; i++) {
        for (long j = i; j < d; j++) {
            sigma[i * d + j] *= inv;
            sigma[j * d + i] = sigma[i * d + j];
        }
        if (y)
            b[i] *= inv;
    }
}

/* eigenvalues decreasing into ds->lambda (clamped at 0), eigenvectors as the rows of ds->u.
 * LAPACK's dsyevr in column-major order on the symmetric Σ (no transposed copies, an O(d)
 * workspace): its eigenvector j is the contiguous column Z[j d ..], i.e. row j of ds->u, and
 * the rows are then reversed for a decreasing order. Σ is destroyed. */
static hdp_status eigen(double *sigma, hdp_dataset *ds, hdp_error *err)
{
    long d = ds->d;
    double *w = hdp_dalloc((size_t)d);
    lapack_int *isuppz = malloc(2 * (size_t)d * sizeof *isuppz), found = 0;
    if (!w || !isuppz) {
        free(w);
        free(isuppz);
        return hdp_fail(err, HDP_ENOMEM, "dataset: out of memory for %ld eigenvalues", d);
    }
    lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'A', 'U', (lapack_int)d, sigma,
                                     (lapack_int)d, 0.0, 0.0, 0, 0, 0.0, &found, w, ds->u,
                                     (lapack_int)d, isuppz);
    free(isuppz);
    if (info != 0 || found != d) {
        free(w);
        return hdp_fail(err, info < 0 ? HDP_ENOMEM : HDP_ENUMERIC,
                        "dataset: LAPACKE_dsyevr failed on the %ld x %ld covariance (info = %d, "
                        "%d eigenvalues found)", d, d, (int)info, (int)found);
    }
    for (long j = 0; j < d; j++) {
        double l = w[d - 1 - j];
        ds->lambda[j] = l > 0 ? l : 0.0;
    }
    for (long j = 0; j < d / 2; j++) { /* rows j and d-1-j swapped */
        double *a = ds->u + (size_t)j * (size_t)d, *b = ds->u + (size_t)(d - 1 - j) * (size_t)d;
        for (long i = 0; i < d; i++) {
            double t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    }
    free(w);
    return HDP_OK;
}

/* θ* from b = Xᵀy/N: in the eigenbasis θ̃_j = (u_jᵀb)/(λ_j + ridge), the pseudo-inverse for
 * eigenvalues at most 1e-12 λ_1 when ridge = 0; then θ* = U θ̃ and its summaries */
static void target(hdp_dataset *ds, const double *b)
{
    long d = ds->d;
    double tiny = 1e-12 * ds->lambda[0];
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (blasint)d, (blasint)d, 1.0, ds->u, (blasint)d, b,
                1, 0.0, ds->theta_eig, 1);
    double norm2 = 0, r0 = 0;
    for (long j = 0; j < d; j++) {
        double den = ds->lambda[j] + ds->ridge;
        int kept = (ds->ridge > 0 || ds->lambda[j] > tiny) && den > 0;
        double t = kept ? ds->theta_eig[j] / den : 0.0;
        ds->theta_eig[j] = t;
        ds->energy[j] = 0.5 * (double)d * t * t;
        norm2 += t * t;
        r0 += ds->lambda[j] * t * t;
    }
    cblas_dgemv(CblasRowMajor, CblasTrans, (blasint)d, (blasint)d, 1.0, ds->u, (blasint)d,
                ds->theta_eig, 1, 0.0, ds->theta, 1);
    ds->theta_norm = sqrt(norm2);
    ds->risk0 = 0.5 * r0;
}

/* the third pass: rows centred, scaled, rotated, written back (not with statistics_only: rows
 * kept as read); residuals of θ* */
static void transform(hdp_dataset *ds, int write_back, double *buf, double *tmp)
{
    hdp_matrix *m = &ds->rows;
    long d = m->d, br = block_rows(d);
    double tau2 = 0;
    for (long i0 = 0; i0 < m->n; i0 += br) {
        long k = m->n - i0 < br ? m->n - i0 : br;
        get_block(m, i0, k, ds->mean, ds->scale, buf);
        if (ds->has_labels)
            for (long r = 0; r < k; r++) {
                double z = ds->y[i0 + r] - cblas_ddot((blasint)d, buf + (size_t)r * (size_t)d, 1,
                                                      ds->theta, 1);
                ds->residual[i0 + r] = z;
                tau2 += z * z;
            }
        if (write_back)
            put_rotated(ds, m, i0, k, buf, tmp);
    }
    ds->prepared = write_back;
    ds->tau2 = tau2 / (double)m->n;
}

static hdp_status check_args(const hdp_matrix *rows, const double *y, long ny,
                             const hdp_dataset_options *o, hdp_error *err)
{
    if ((!rows->f32) == (!rows->f64))
        return hdp_fail(err, HDP_EINPUT, "hdp_dataset_prepare: the matrix holds no rows");
    if (rows->n < 2 || rows->d < 1)
        return hdp_fail(err, HDP_EINPUT, "dataset: %ld rows of %ld values: N >= 2 and d >= 1 "
                        "are needed", rows->n, rows->d);
    if (rows->d > HDP_DATASET_MAX_D)
        return hdp_fail(err, HDP_EINPUT, "dataset: d = %ld features, over the limit of %ld (the "
                        "covariance and its eigenvectors need %.3g GB)", rows->d,
                        HDP_DATASET_MAX_D, 16.0 * (double)rows->d * (double)rows->d / 1e9);
    if (y && ny != rows->n)
        return hdp_fail(err, HDP_EINPUT, "dataset: %ld labels for %ld rows: one label per row "
                        "is needed", ny, rows->n);
    for (long i = 0; y && i < ny; i++)
        if (!isfinite(y[i]))
            return hdp_fail(err, HDP_EINPUT, "dataset: label %ld is not a finite number", i + 1);
    if (!(o->ridge >= 0) || !isfinite(o->ridge))
        return hdp_fail(err, HDP_EINPUT, "dataset: ridge = %g: accepted are finite values >= 0",
                        o->ridge);
    return HDP_OK;
}

static hdp_status alloc_all(hdp_dataset *ds, int labels, hdp_error *err)
{
    size_t d = (size_t)ds->d, n = (size_t)ds->n;
    ds->mean = hdp_dalloc(d);
    ds->lambda = hdp_dalloc(d);
    ds->u = hdp_dalloc(d * d);
    int ok = ds->mean && ds->lambda && ds->u;
    if (labels) {
        ds->y = hdp_dalloc(n);
        ds->theta = hdp_dalloc(d);
        ds->theta_eig = hdp_dalloc(d);
        ds->energy = hdp_dalloc(d);
        ds->residual = hdp_dalloc(n);
        ok = ok && ds->y && ds->theta && ds->theta_eig && ds->energy && ds->residual;
    }
    return ok ? HDP_OK : hdp_fail(err, HDP_ENOMEM, "dataset: out of memory (d = %zu, N = %zu)",
                                  d, n);
}

static hdp_status prepare(hdp_dataset *ds, const double *y, const hdp_dataset_options *o,
                          hdp_error *err)
{
    long d = ds->d, n = ds->n;
    if (!o->no_center)
        mean_row(&ds->rows, ds->mean);
    if (y) {
        for (long i = 0; i < n; i++)
            ds->y_mean += y[i];
        ds->y_mean = o->no_center ? 0.0 : ds->y_mean / (double)n;
        for (long i = 0; i < n; i++) {
            ds->y[i] = y[i] - ds->y_mean;
            ds->label_var += ds->y[i] * ds->y[i] / (double)n;
        }
    }
    size_t blk = (size_t)block_rows(d) * (size_t)d;
    double *buf = malloc(blk * sizeof(double)), *tmp = malloc(blk * sizeof(double));
    double *sigma = hdp_dalloc((size_t)d * (size_t)d), *b = hdp_dalloc((size_t)d);
    hdp_status st = HDP_OK;
    if (!buf || !tmp || !sigma || !b)
        st = hdp_fail(err, HDP_ENOMEM, "dataset: out of memory for the %ld x %ld covariance", d, d);
    if (st == HDP_OK) {
        covariance(&ds->rows, ds->mean, y ? ds->y : NULL, buf, sigma, b);
        for (long j = 0; j < d; j++)
            ds->trace_raw += sigma[j * d + j];
        if (!(ds->trace_raw > 0) && !o->no_scale)
            st = hdp_fail(err, HDP_EINPUT, "dataset: all %ld rows are equal%s (tr Σ = 0): "
                          "scale = trace needs variation", n,
                          o->no_center ? "" : " after centring");
        else if (!isfinite(ds->trace_raw))
            st = hdp_fail(err, HDP_ENUMERIC, "dataset: tr Σ overflows (entries too large)");
    }
    if (st == HDP_OK) {
        ds->scale = o->no_scale ? 1.0 : sqrt((double)d / ds->trace_raw);
        double s2 = ds->scale * ds->scale;
        for (size_t q = 0; q < (size_t)d * (size_t)d; q++)
            sigma[q] *= s2;
        for (long j = 0; j < d; j++)
            b[j] *= ds->scale;
        st = eigen(sigma, ds, err);
    }
    if (st == HDP_OK) {
        for (long j = 0; j < d; j++)
            ds->trace += ds->lambda[j];
        if (y)
            target(ds, b);
        if (y && !(isfinite(ds->theta_norm) && isfinite(ds->risk0)))
            st = hdp_fail(err, HDP_ENUMERIC, "dataset: the least-squares target is not finite "
                          "(ridge = %g)", ds->ridge);
    }
    if (st == HDP_OK && (y || !o->statistics_only)) /* the residuals, the rows */
        transform(ds, !o->statistics_only, buf, tmp);
    free(buf);
    free(tmp);
    free(sigma);
    free(b);
    return st;
}

hdp_status hdp_dataset_prepare(hdp_matrix *rows, const double *y, long ny,
                               const hdp_dataset_options *opts, hdp_dataset *out,
                               hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, rows);
    HDP_REQUIRE(err, out);
    hdp_dataset_options o;
    memset(&o, 0, sizeof o);
    if (opts)
        o = *opts;
    hdp_status st = check_args(rows, y, ny, &o, err);
    if (st != HDP_OK)
        return st;
    out->rows = *rows;
    memset(rows, 0, sizeof *rows);
    out->n = out->rows.n;
    out->d = out->rows.d;
    out->rotated = !o.no_rotate;
    out->has_labels = y != NULL;
    out->ridge = o.ridge;
    out->scale = 1.0;
    st = alloc_all(out, y != NULL, err);
    if (st == HDP_OK)
        st = prepare(out, y, &o, err);
    if (st != HDP_OK)
        hdp_dataset_free(out);
    return st;
}

hdp_status hdp_labels_map_pm1(double *y, long n, const double *positive, long npositive,
                              const char *what, hdp_error *err)
{
    HDP_REQUIRE(err, y);
    HDP_REQUIRE(err, positive);
    const char *w = what ? what : "labels";
    if (npositive < 1)
        return hdp_fail(err, HDP_EINPUT, "%s: no positive class given", w);
    for (long k = 0; k < npositive; k++) {
        long found = 0;
        for (long i = 0; i < n && !found; i++)
            found = y[i] == positive[k];
        if (!found)
            return hdp_fail(err, HDP_EINPUT, "%s: the positive class %.17g is not among the labels",
                            w, positive[k]);
    }
    for (long i = 0; i < n; i++)
        if (y[i] != floor(y[i]))
            return hdp_fail(err, HDP_EINPUT, "%s: label %ld is %.17g, not a class (an integer)", w,
                            i + 1, y[i]);
    for (long i = 0; i < n; i++) {
        int pos = 0;
        for (long k = 0; k < npositive && !pos; k++)
            pos = y[i] == positive[k];
        y[i] = pos ? 1.0 : -1.0;
    }
    return HDP_OK;
}

hdp_status hdp_dataset_apply(const hdp_dataset *ds, hdp_matrix *rows, const char *what,
                             hdp_error *err)
{
    HDP_REQUIRE(err, ds);
    HDP_REQUIRE(err, rows);
    const char *w = what ? what : "test rows";
    if (!ds->u || (!rows->f32) == (!rows->f64))
        return hdp_fail(err, HDP_EINPUT, "hdp_dataset_apply: an empty data set or matrix");
    if (rows->d != ds->d)
        return hdp_fail(err, HDP_EINPUT, "%s: rows of %ld values, the training rows have d = %ld",
                        w, rows->d, ds->d);
    long d = ds->d, br = block_rows(d);
    size_t blk = (size_t)br * (size_t)d;
    double *buf = malloc(blk * sizeof(double)), *tmp = malloc(blk * sizeof(double));
    if (!buf || !tmp) {
        free(buf);
        free(tmp);
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory", w);
    }
    for (long i0 = 0; i0 < rows->n; i0 += br) {
        long k = rows->n - i0 < br ? rows->n - i0 : br;
        get_block(rows, i0, k, ds->mean, ds->scale, buf);
        put_rotated(ds, rows, i0, k, buf, tmp);
    }
    free(buf);
    free(tmp);
    return HDP_OK;
}

double hdp_dataset_mse(const hdp_dataset *ds, const hdp_matrix *rows, const double *y, long n)
{
    if (!ds || !rows || !y || !ds->has_labels || rows->d != ds->d || n != rows->n || n < 1)
        return NAN;
    const double *t = ds->rotated ? ds->theta_eig : ds->theta;
    double sum = 0;
    for (long i = 0; i < n; i++) {
        double p = 0;
        for (long j = 0; j < ds->d; j++)
            p += hdp_matrix_get(rows, i, j) * t[j];
        double z = y[i] - ds->y_mean - p;
        sum += z * z;
    }
    return sum / (double)n;
}

void hdp_dataset_free(hdp_dataset *ds)
{
    if (!ds)
        return;
    hdp_matrix_free(&ds->rows);
    free(ds->mean);
    free(ds->lambda);
    free(ds->u);
    free(ds->y);
    free(ds->theta);
    free(ds->theta_eig);
    free(ds->energy);
    free(ds->residual);
    memset(ds, 0, sizeof *ds);
}
