/*
 * net_data.c — the data of the two-layer network (hdpsgd/net.h; docs/theory.md §7.4):
 * Gaussian inputs with a linear-argmax teacher, or a labelled data set read from files
 * (hdpsgd/dataset.h) split into training, validation and test rows and standardised.
 */
#include "hdpsgd/net.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static hdp_status split_alloc(hdp_net_split *s, long n, long d, hdp_error *err)
{
    s->n = n, s->d = d;
    s->x = malloc(sizeof(float) * (size_t)(n * d + 1));
    s->y = malloc(sizeof(int) * (size_t)(n + 1));
    if (!s->x || !s->y)
        return hdp_fail(err, HDP_ENOMEM, "net: out of memory for %ld x %ld inputs", n, d);
    return HDP_OK;
}

void hdp_net_data_free(hdp_net_data *dt)
{
    if (!dt)
        return;
    hdp_net_split *s[] = {&dt->train, &dt->val, &dt->test};
    for (int i = 0; i < 3; i++)
        free(s[i]->x), free(s[i]->y);
    memset(dt, 0, sizeof *dt);
}

void hdp_net_data_head(const hdp_net_data *src, long n, hdp_net_data *view)
{
    *view = *src;
    view->train.n = n < src->train.n ? n : src->train.n;
}

/* ---- Gaussian inputs ---- */

static void draw_split(hdp_normals *g, const double *U, long K, long d, hdp_net_split *s,
                       double *buf)
{
    for (long i = 0; i < s->n; i++) {
        hdp_normals_fill(g, buf, d);
        long best = 0;
        double mx = -INFINITY;
        for (long k = 0; k < K; k++) {
            double v = 0;
            for (long j = 0; j < d; j++)
                v += U[k * d + j] * buf[j];
            if (v > mx)
                mx = v, best = k;
        }
        for (long j = 0; j < d; j++)
            s->x[i * d + j] = (float)buf[j];
        s->y[i] = (int)best;
    }
}

hdp_status hdp_net_data_synthetic(long d, long K, long n, long nval, long ntest,
                                  unsigned long long seed, hdp_net_data *out, hdp_error *err)
{
    memset(out, 0, sizeof *out);
    if (d < 1 || K < 2 || K > 1000 || n < 1 || nval < 0 || ntest < 1)
        return hdp_fail(err, HDP_EINPUT, "net: bad sizes of the synthetic data");
    out->d = d, out->K = K, out->synthetic = 1;
    double *U = malloc(sizeof(double) * (size_t)(K * d)), *buf = malloc(sizeof(double) * (size_t)d);
    hdp_status st = !U || !buf ? hdp_fail(err, HDP_ENOMEM, "net: out of memory") : HDP_OK;
    if (st == HDP_OK)
        st = split_alloc(&out->train, n, d, err);
    if (st == HDP_OK)
        st = split_alloc(&out->val, nval, d, err);
    if (st == HDP_OK)
        st = split_alloc(&out->test, ntest, d, err);
    if (st == HDP_OK) {
        hdp_xoshiro x;
        hdp_normals g;
        hdp_xoshiro_stream(&x, seed, 0); /* the data's stream; runs use stream 1 */
        hdp_normals_init(&g, &x);
        hdp_normals_fill(&g, U, K * d);
        draw_split(&g, U, K, d, &out->train, buf);
        draw_split(&g, U, K, d, &out->val, buf);
        draw_split(&g, U, K, d, &out->test, buf);
    }
    free(U), free(buf);
    if (st != HDP_OK)
        hdp_net_data_free(out);
    return st;
}

/* ---- files ---- */

/* Labels as classes 0..K-1 (integers); *K = largest + 1. */
static hdp_status classes_of(const double *y, long n, const char *path, long *K, hdp_error *err)
{
    long mx = 0;
    for (long i = 0; i < n; i++) {
        if (!(y[i] >= 0) || y[i] != floor(y[i]) || y[i] >= 1000)
            return hdp_fail(err, HDP_EINPUT,
                            "%s: label %ld is %g: the network needs classes 0, 1, ..., K-1 "
                            "(integers below 1000)", path, i + 1, y[i]);
        if ((long)y[i] > mx)
            mx = (long)y[i];
    }
    if (mx < 1)
        return hdp_fail(err, HDP_EINPUT, "%s: every label is 0: at least two classes are needed",
                        path);
    *K = mx + 1;
    return HDP_OK;
}

/* Rows idx[0..n) of m into s, standardised by mean and sd. */
static void fill_split(const hdp_matrix *m, const long *idx, const double *y, const double *mean,
                       const double *sd, hdp_net_split *s)
{
    for (long i = 0; i < s->n; i++) {
        long r = idx ? idx[i] : i;
        for (long j = 0; j < m->d; j++)
            s->x[i * m->d + j] = (float)((hdp_matrix_get(m, r, j) - mean[j]) / sd[j]);
        s->y[i] = (int)y[r];
    }
}

/* Mean and standard deviation per column over rows idx[0..n), the deviation floored at 0.05
 * times the largest. */
static void standardiser(const hdp_matrix *m, const long *idx, long n, double *mean, double *sd)
{
    const long d = m->d;
    double top = 0;
    for (long j = 0; j < d; j++) {
        double s = 0, s2 = 0;
        for (long i = 0; i < n; i++)
            s += hdp_matrix_get(m, idx[i], j);
        mean[j] = s / (double)n;
        for (long i = 0; i < n; i++) {
            double v = hdp_matrix_get(m, idx[i], j) - mean[j];
            s2 += v * v;
        }
        sd[j] = sqrt(s2 / (double)n);
        if (sd[j] > top)
            top = sd[j];
    }
    for (long j = 0; j < d; j++)
        if (sd[j] < 0.05 * top)
            sd[j] = 0.05 * top;
}

hdp_status hdp_net_data_files(const char *features, const char *labels, const char *test_features,
                              const char *test_labels, long n, double val_fraction,
                              unsigned long long seed, const char *nkey, hdp_net_data *out,
                              hdp_error *err)
{
    memset(out, 0, sizeof *out);
    hdp_matrix X = {0}, Xt = {0};
    double *y = NULL, *yt = NULL, *mean = NULL, *sd = NULL;
    long *idx = NULL, ny = 0, nyt = 0, K = 0, Kt = 0;
    hdp_status st = hdp_matrix_read(features, &X, err);
    if (st == HDP_OK)
        st = hdp_labels_read(labels, &y, &ny, err);
    if (st == HDP_OK)
        st = hdp_matrix_read(test_features, &Xt, err);
    if (st == HDP_OK)
        st = hdp_labels_read(test_labels, &yt, &nyt, err);
    if (st == HDP_OK && ny != X.n)
        st = hdp_fail(err, HDP_EINPUT, "%s has %ld labels for the %ld rows of %s", labels, ny,
                      X.n, features);
    if (st == HDP_OK && nyt != Xt.n)
        st = hdp_fail(err, HDP_EINPUT, "%s has %ld labels for the %ld rows of %s", test_labels,
                      nyt, Xt.n, test_features);
    if (st == HDP_OK && Xt.d != X.d)
        st = hdp_fail(err, HDP_EINPUT, "%s has rows of %ld values, %s of %ld", test_features,
                      Xt.d, features, X.d);
    if (st == HDP_OK)
        st = classes_of(y, ny, labels, &K, err);
    if (st == HDP_OK)
        st = classes_of(yt, nyt, test_labels, &Kt, err);
    long nval = (long)nearbyint(val_fraction * (double)X.n);
    if (st == HDP_OK && (n > X.n - nval || nval < 1))
        st = hdp_fail(err, HDP_EINPUT,
                      "%s: n = %ld training samples asked, but %s has %ld rows and %ld of them "
                      "are held out for validation (net.val_fraction = %g): at most %ld",
                      nkey, n, features, X.n, nval, val_fraction, X.n - nval);
    if (st == HDP_OK) {
        out->d = X.d, out->K = K > Kt ? K : Kt;
        idx = malloc(sizeof(long) * (size_t)X.n);
        mean = malloc(sizeof(double) * (size_t)X.d), sd = malloc(sizeof(double) * (size_t)X.d);
        if (!idx || !mean || !sd)
            st = hdp_fail(err, HDP_ENOMEM, "net: out of memory");
    }
    if (st == HDP_OK) {
        hdp_xoshiro g;
        hdp_xoshiro_stream(&g, seed, 0);
        for (long i = 0; i < X.n; i++)
            idx[i] = i;
        for (long i = X.n - 1; i > 0; i--) { /* Fisher-Yates */
            long j = (long)(hdp_xoshiro_double(&g) * (double)(i + 1));
            long t = idx[i];
            idx[i] = idx[j], idx[j] = t;
        }
        standardiser(&X, idx, n, mean, sd);
        st = split_alloc(&out->train, n, X.d, err);
        if (st == HDP_OK)
            st = split_alloc(&out->val, nval, X.d, err);
        if (st == HDP_OK)
            st = split_alloc(&out->test, Xt.n, X.d, err);
    }
    if (st == HDP_OK) {
        fill_split(&X, idx, y, mean, sd, &out->train);
        fill_split(&X, idx + (X.n - nval), y, mean, sd, &out->val);
        fill_split(&Xt, NULL, yt, mean, sd, &out->test);
    }
    hdp_matrix_free(&X), hdp_matrix_free(&Xt);
    free(y), free(yt), free(idx), free(mean), free(sd);
    if (st != HDP_OK)
        hdp_net_data_free(out);
    return st;
}
