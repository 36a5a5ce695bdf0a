/*
 * model_data.c — the [data] keys of a user's data set (data.source = file, docs/theory.md §9)
 * read and prepared by finalize into one shared hdp_data (hdpsgd/dataset.h): the features,
 * the labels mapped to ±1 by data.labels_positive, the held-out set, the preparation
 * (data.center, data.scale, data.ridge) and the target's checks. Every failure names the
 * key's place (file:line) and the data file (and row) in question.
 */
#include "core/check.h"
#include "core/model_internal.h"
#include "core/schema.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/model.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct hdp_data_arrays {
    long refs;
    hdp_matrix X, Xt;
    double *y, *yt;
};

void hdp_data_arrays_release(struct hdp_data_arrays *a)
{
    if (a && __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        hdp_matrix_free(&a->X);
        hdp_matrix_free(&a->Xt);
        free(a->y);
        free(a->yt);
        free(a);
    }
}

struct hdp_data_arrays *hdp_data_arrays_retain(struct hdp_data_arrays *a)
{
    if (a)
        __atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
    return a;
}

/* a copy of n values, each finite (else HDP_EINPUT naming what, row and column of d) */
static hdp_status copy_finite(const double *src, long n, long d, const char *what, double **out,
                              hdp_error *err)
{
    *out = malloc(sizeof(double) * (size_t)(n * d > 0 ? n * d : 1));
    if (!*out)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %s (%ld values)", what, n * d);
    for (long k = 0; k < n * d; k++) {
        if (!isfinite(src[k])) {
            free(*out);
            *out = NULL;
            return hdp_fail(err, HDP_EINPUT, "%s: row %ld, column %ld is not finite (%g)", what,
                            k / d + 1, k % d + 1, src[k]);
        }
        (*out)[k] = src[k];
    }
    return HDP_OK;
}

hdp_status hdp_model_set_data_arrays(hdp_model *m, const double *X, long n, long d,
                                     const double *y, const double *Xt, long nt,
                                     const double *yt, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, X);
    if (n < 2 || d < 1 || (Xt && nt < 1))
        return hdp_fail(err, HDP_EINPUT,
                        "the arrays: X has %ld rows and %ld columns%s: need at least 2 rows and "
                        "1 column (and a held-out set of at least 1 row)", n, d,
                        Xt ? " with a held-out set" : "");
    struct hdp_data_arrays *a = calloc(1, sizeof *a);
    if (!a)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the arrays");
    a->refs = 1;
    hdp_status st = copy_finite(X, n, d, "the array X", &a->X.f64, err);
    a->X.n = n, a->X.d = d;
    if (st == HDP_OK && y)
        st = copy_finite(y, n, 1, "the array y", &a->y, err);
    if (st == HDP_OK && Xt) {
        st = copy_finite(Xt, nt, d, "the array X_test", &a->Xt.f64, err);
        a->Xt.n = nt, a->Xt.d = d;
    }
    if (st == HDP_OK && Xt && yt)
        st = copy_finite(yt, nt, 1, "the array y_test", &a->yt, err);
    if (st == HDP_OK)
        st = hdp_model_set(m, "data.source=file", err);
    if (st != HDP_OK) {
        hdp_data_arrays_release(a);
        return st;
    }
    hdp_data_arrays_release(m->arrays);
    m->arrays = a;
    m->finalized = 0;
    return HDP_OK;
}

/* a copy of an array matrix as the rows a reader would give */
static hdp_status copy_matrix(const hdp_matrix *src, hdp_matrix *dst, hdp_error *err)
{
    memset(dst, 0, sizeof *dst);
    size_t k = (size_t)src->n * (size_t)src->d;
    dst->f64 = malloc(sizeof(double) * (k ? k : 1));
    if (!dst->f64)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a copy of the arrays");
    memcpy(dst->f64, src->f64, sizeof(double) * k);
    dst->n = src->n;
    dst->d = src->d;
    return HDP_OK;
}

/* labels given as an array: copied, mapped to ±1 */
static hdp_status array_labels(const hdp_model *m, const double *src, long n, const char *what,
                               double **y, hdp_error *err)
{
    *y = malloc(sizeof(double) * (size_t)n);
    if (!*y)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the labels");
    memcpy(*y, src, sizeof(double) * (size_t)n);
    double pos[HDP_LIST_ITEMS];
    int np = hdp_schema_list_values(m->labels_positive, pos, HDP_LIST_ITEMS);
    hdp_error e;
    hdp_error_clear(&e);
    if (np > 0 && hdp_labels_map_pm1(*y, n, pos, np, what, &e) != HDP_OK)
        return hdp_model_fail_key(m, "data", "labels_positive", err, "%s", e.msg);
    return HDP_OK;
}

const hdp_data *hdp_model_data(const hdp_model *m)
{
    return m && m->data_source == HDP_SOURCE_FILE ? m->data : NULL;
}

hdp_data *hdp_data_retain(hdp_data *d)
{
    if (d)
        __atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
    return d;
}

static void data_free(hdp_data *d)
{
    hdp_dataset_free(&d->train);
    hdp_matrix_free(&d->test_rows);
    free(d->test_y);
    free(d->test_sigma);
    free(d->test_b);
    hdp_data_cache_free(d->cache);
    free(d);
}

void hdp_data_release(hdp_data *d)
{
    if (d && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0)
        data_free(d);
}

/* a data reader's message, placed at the key that named the file */
static hdp_status key_fail(const hdp_model *m, const char *key, const hdp_error *e,
                           hdp_error *err)
{
    if (e->status == HDP_ENOMEM)
        return hdp_fail(err, HDP_ENOMEM, "%s", e->msg);
    return hdp_model_fail_key(m, "data", key, err, "%s", e->msg);
}

/* labels of key (file path) read, their count checked against n, mapped to ±1 */
static hdp_status read_labels(const hdp_model *m, const char *key, const char *path, long n,
                              const char *rows_key, double **y, hdp_error *err)
{
    hdp_error e;
    hdp_error_clear(&e);
    long ny = 0;
    if (hdp_labels_read(path, y, &ny, &e) != HDP_OK)
        return key_fail(m, key, &e, err);
    if (ny != n)
        return hdp_model_fail_key(m, "data", key, err,
                                  "%s has %ld labels but the rows of data.%s number %ld: one "
                                  "label per row is needed", path, ny, rows_key, n);
    double pos[HDP_LIST_ITEMS];
    int np = hdp_schema_list_values(m->labels_positive, pos, HDP_LIST_ITEMS);
    if (np > 0 && hdp_labels_map_pm1(*y, ny, pos, np, path, &e) != HDP_OK)
        return hdp_model_fail_key(m, "data", "labels_positive", err, "%s", e.msg);
    return HDP_OK;
}

static hdp_status check_keys(const hdp_model *m, int labels, hdp_error *err)
{
    const struct hdp_data_arrays *a = m->features[0] ? NULL : m->arrays;
    int test = m->test_features[0] || (a && a->Xt.f64), test_labels = m->test_labels[0] || (a && a->yt);
    if (!m->features[0] && !a)
        return hdp_model_fail_key(m, "data", "source", err,
                                  "source = file needs data.features (an N x d matrix: .npy, "
                                  ".csv or IDX)");
    if (m->target == HDP_TARGET_UNIFORM || m->target == HDP_TARGET_POWERLAW ||
        m->target == HDP_TARGET_FILE)
        return hdp_model_fail_key(m, "data", "target", err,
                                  "target = %s is a synthetic target: with source = file the "
                                  "target is least-squares or planted",
                                  m->target == HDP_TARGET_UNIFORM   ? "uniform"
                                  : m->target == HDP_TARGET_POWERLAW ? "powerlaw"
                                                                       : "file");
    if (m->target == HDP_TARGET_LEAST_SQUARES && !labels)
        return hdp_model_fail_key(m, "data", "target", err,
                                  "target = least-squares needs data.labels (or target = "
                                  "planted, which synthesises them)");
    if (m->labels_positive[0] && !labels)
        return hdp_model_fail_key(m, "data", "labels_positive", err,
                                  "labels_positive maps the classes of data.labels, which is "
                                  "not given");
    if (test_labels && !test)
        return hdp_model_fail_key(m, "data", "test_labels", err,
                                  "test_labels without data.test_features");
    if (test && labels && !test_labels)
        return hdp_model_fail_key(m, "data", "test_features", err,
                                  "test_features with the least-squares target needs "
                                  "data.test_labels");
    return HDP_OK;
}

/* Sigma_t, b_t, c_t of the held-out rows (hdpsgd/dataset.h), in blocks of rows converted to
 * double: dsyrk and dgemv */
static hdp_status test_moments(hdp_data *d, hdp_error *err)
{
    const hdp_matrix *x = &d->test_rows;
    long n = x->n, dim = x->d, br = (1L << 20) / (dim > 0 ? dim : 1) + 1;
    d->test_sigma = calloc((size_t)dim * (size_t)dim, sizeof(double));
    d->test_b = d->planted ? NULL : calloc((size_t)dim, sizeof(double));
    double *buf = malloc(sizeof(double) * (size_t)br * (size_t)dim);
    double *z = d->planted ? NULL : malloc(sizeof(double) * (size_t)br);
    if (!d->test_sigma || !buf || (!d->planted && (!d->test_b || !z))) {
        free(buf);
        free(z);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the held-out set's covariance "
                        "(d = %ld)", dim);
    }
    double c = 0;
    for (long i0 = 0; i0 < n; i0 += br) {
        long k = n - i0 < br ? n - i0 : br;
        for (long r = 0; r < k; r++)
            for (long j = 0; j < dim; j++)
                buf[r * dim + j] = hdp_matrix_get(x, i0 + r, j);
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)dim, (int)k, 1.0 / (double)n, buf,
                    (int)dim, 1.0, d->test_sigma, (int)dim);
        if (z) {
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)k, (int)dim, 1.0, buf, (int)dim,
                        d->train.theta_eig, 1, 0.0, z, 1);
            for (long r = 0; r < k; r++) {
                z[r] = d->test_y[i0 + r] - z[r];
                c += z[r] * z[r];
            }
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)k, (int)dim, 1.0 / (double)n, buf,
                        (int)dim, z, 1, 1.0, d->test_b, 1);
        }
    }
    for (long i = 0; i < dim; i++) /* the lower triangle mirrored */
        for (long j = 0; j < i; j++)
            d->test_sigma[i * dim + j] = d->test_sigma[j * dim + i];
    d->test_c = z ? c / (double)n : 0.0;
    free(buf);
    free(z);
    return HDP_OK;
}

static hdp_status load_test(const hdp_model *m, hdp_data *d, hdp_error *err)
{
    hdp_error e;
    hdp_error_clear(&e);
    const struct hdp_data_arrays *a = m->test_features[0] ? NULL : m->arrays;
    const char *what = a ? "the array X_test" : m->test_features;
    if (a) {
        if (copy_matrix(&a->Xt, &d->test_rows, err) != HDP_OK)
            return HDP_ENOMEM;
    } else if (hdp_matrix_read(m->test_features, &d->test_rows, &e) != HDP_OK) {
        return key_fail(m, "test_features", &e, err);
    }
    if (hdp_dataset_apply(&d->train, &d->test_rows, what, &e) != HDP_OK)
        return key_fail(m, "test_features", &e, err);
    d->test_n = d->test_rows.n;
    d->has_test = 1;
    d->test_mse_star = NAN;
    if (d->planted)
        return test_moments(d, err);
    hdp_status st = a ? array_labels(m, a->yt, d->test_n, "the array y_test", &d->test_y, err)
                      : read_labels(m, "test_labels", m->test_labels, d->test_n, "test_features",
                                    &d->test_y, err);
    if (st != HDP_OK)
        return st;
    d->test_mse_star = hdp_dataset_mse(&d->train, &d->test_rows, d->test_y, d->test_n);
    for (long i = 0; i < d->test_n; i++)
        d->test_y[i] -= d->train.y_mean; /* as the training labels: centred */
    return test_moments(d, err);
}

/* Read and prepare the data set of m (source = file) into a new hdp_data (refs = 1). */
static hdp_status load(const hdp_model *m, hdp_data **out, hdp_error *err)
{
    const struct hdp_data_arrays *a = m->features[0] ? NULL : m->arrays;
    int labels = m->labels[0] != '\0' || (a && a->y);
    hdp_status st = check_keys(m, labels, err);
    if (st != HDP_OK)
        return st;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hdp_data *d = calloc(1, sizeof *d);
    if (!d)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a data set");
    d->refs = 1;
    d->planted = m->target == HDP_TARGET_PLANTED || (m->target == HDP_TARGET_AUTO && !labels);
    d->test_mse_star = NAN;
    hdp_matrix rows = {0};
    double *y = NULL;
    hdp_error e;
    hdp_error_clear(&e);
    if (a) {
        if ((st = copy_matrix(&a->X, &rows, err)) != HDP_OK)
            goto fail;
    } else if (hdp_matrix_read(m->features, &rows, &e) != HDP_OK) {
        st = key_fail(m, "features", &e, err);
        goto fail;
    }
    if (labels && !d->planted &&
        (st = a ? array_labels(m, a->y, rows.n, "the array y", &y, err)
                : read_labels(m, "labels", m->labels, rows.n, "features", &y, err)) != HDP_OK)
        goto fail;
    if (hdp_model_key_given(m, "data", "d") && m->d != rows.d) {
        st = hdp_model_fail_key(m, "data", "d", err,
                                "d = %ld but the rows of %s have %ld columns (leave d out to "
                                "take it from the file)", m->d, a ? "the array X" : m->features,
                                rows.d);
        goto fail;
    }
    hdp_dataset_options o = {!m->center, m->scale == HDP_SCALE_NONE, m->ridge, 0, 0};
    st = hdp_dataset_prepare(&rows, y, y ? rows.n : 0, &o, &d->train, &e);
    if (st != HDP_OK) { /* arrays have no file nor key to name: "the array X" */
        st = st == HDP_ENOMEM ? hdp_fail(err, st, "%s: %s", a ? "the array X" : m->features, e.msg)
             : a              ? hdp_fail(err, HDP_EINPUT, "the array X: %s", e.msg)
                              : hdp_model_fail_key(m, "data", "features", err, "%s: %s",
                                                   m->features, e.msg);
        goto fail;
    }
    if ((m->test_features[0] || (a && a->Xt.f64)) && (st = load_test(m, d, err)) != HDP_OK)
        goto fail;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    d->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    free(y);
    *out = d;
    return HDP_OK;
fail:
    hdp_matrix_free(&rows);
    free(y);
    data_free(d);
    return st;
}

hdp_status hdp_model_load_data(hdp_model *m, int keep, hdp_error *err)
{
    if (m->data_source != HDP_SOURCE_FILE) {
        hdp_data_release(m->data);
        m->data = NULL;
        if (m->target == HDP_TARGET_LEAST_SQUARES || m->target == HDP_TARGET_PLANTED)
            return hdp_model_fail_key(m, "data", "target", err,
                                      "target = %s needs data.source = file (the rows of a "
                                      "data set)",
                                      m->target == HDP_TARGET_PLANTED ? "planted"
                                                                        : "least-squares");
        return HDP_OK;
    }
    if (keep && m->data) {
        m->d = m->data->train.d;
        return HDP_OK;
    }
    hdp_data *d = NULL;
    hdp_status st = load(m, &d, err);
    if (st != HDP_OK)
        return st;
    hdp_data_release(m->data);
    m->data = d;
    m->d = d->train.d;
    return HDP_OK;
}
