/*
 * dataset_load.c — a data set from its files, as `hdpsgd dataset` and the handle's
 * hdp_handle_dataset take them (hdpsgd/dataset.h: hdp_dataset_load): the features, the labels
 * mapped to ±1 or used as numbers, the preparation, the held-out set prepared as the training
 * rows, and the summary the result tables of hdpsgd/fields.h describe.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "hdpsgd/dataset.h"

/* labels of rows read from what, one per row, mapped when classes are given */
static hdp_status read_labels(const char *path, long rows, const char *what,
                              const hdp_dataset_files *f, double **y, hdp_error *err)
{
    long ny = 0;
    hdp_status st = hdp_labels_read(path, y, &ny, err);
    if (st == HDP_OK && ny != rows)
        st = hdp_fail(err, HDP_EINPUT, "%s: %ld labels for the %ld rows of %s: one label per row "
                      "is needed", path, ny, rows, what);
    if (st == HDP_OK && f->npositive > 0)
        st = hdp_labels_map_pm1(*y, ny, f->positive, f->npositive, path, err);
    return st;
}

/* the held-out set: its rows and, with labels, the target's mean squared error on them */
static hdp_status load_test(const hdp_dataset_files *f, const hdp_dataset *ds,
                            hdp_dataset_summary *sum, hdp_error *err)
{
    hdp_matrix t;
    double *y = NULL;
    hdp_status st = hdp_matrix_read(f->test_features, &t, err);
    if (st != HDP_OK)
        return st;
    st = hdp_dataset_apply(ds, &t, f->test_features, err);
    if (st == HDP_OK && f->test_labels) {
        st = read_labels(f->test_labels, t.n, f->test_features, f, &y, err);
        if (st == HDP_OK) {
            sum->test_mse = hdp_dataset_mse(ds, &t, y, t.n);
            sum->has_test_labels = 1;
        }
    }
    if (st == HDP_OK)
        sum->test_n = t.n;
    hdp_matrix_free(&t);
    free(y);
    return st;
}

static void summarize(const hdp_dataset *ds, const hdp_dataset_options *o, const double *y,
                      long npositive, hdp_dataset_summary *sum)
{
    sum->n = ds->n;
    sum->d = ds->d;
    snprintf(sum->storage, sizeof sum->storage, "%s", ds->rows.f32 ? "float32" : "float64");
    sum->center = !o->no_center;
    snprintf(sum->scale, sizeof sum->scale, "%s", o->no_scale ? "none" : "trace");
    sum->scale_factor = ds->scale;
    sum->trace_raw = ds->trace_raw;
    sum->trace = ds->trace;
    sum->eigenvalues = ds->lambda;
    sum->has_labels = ds->has_labels;
    for (long i = 0; y && npositive > 0 && i < ds->n; i++)
        sum->positive_count += y[i] > 0;
    sum->ridge = ds->has_labels ? ds->ridge : NAN;
    sum->label_mean = ds->has_labels ? ds->y_mean : NAN;
    sum->label_variance = ds->has_labels ? ds->label_var : NAN;
    sum->theta_norm = ds->has_labels ? ds->theta_norm : NAN;
    sum->risk0 = ds->has_labels ? ds->risk0 : NAN;
    sum->residual_variance = ds->has_labels ? ds->tau2 : NAN;
    sum->energy = ds->has_labels ? ds->energy : NULL;
}

hdp_status hdp_dataset_load(const hdp_dataset_files *files, const hdp_dataset_options *opts,
                            hdp_dataset *ds, hdp_dataset_summary *sum, hdp_error *err)
{
    HDP_REQUIRE(err, ds);
    memset(ds, 0, sizeof *ds);
    HDP_REQUIRE(err, sum);
    memset(sum, 0, sizeof *sum);
    sum->test_mse = NAN;
    HDP_REQUIRE(err, files);
    HDP_REQUIRE(err, files->features);
    const hdp_dataset_files *f = files;
    if (f->npositive > 0 && !f->labels)
        return hdp_fail(err, HDP_EINPUT, "classes mapped to +1 need labels");
    if (f->npositive < 0 || (f->npositive > 0 && !f->positive))
        return hdp_fail(err, HDP_EINPUT, "the classes mapped to +1: expected npositive >= 0 "
                        "values");
    if (f->test_labels && (!f->test_features || !f->labels))
        return hdp_fail(err, HDP_EINPUT, "test labels need test features and labels");
    hdp_dataset_options o = {0, 0, 0, 0, 0};
    if (opts)
        o = *opts;
    o.statistics_only = 1; /* the summary needs no prepared rows (spares the rotation) */
    hdp_matrix x;
    double *y = NULL;
    long ny = 0;
    hdp_status st = hdp_matrix_read(f->features, &x, err);
    if (st != HDP_OK)
        return st;
    if (f->labels) {
        st = read_labels(f->labels, x.n, f->features, f, &y, err);
        ny = x.n;
    }
    if (st == HDP_OK)
        st = hdp_dataset_prepare(&x, y, ny, &o, ds, err);
    hdp_matrix_free(&x);
    if (st == HDP_OK)
        summarize(ds, &o, y, f->npositive, sum);
    free(y);
    if (st == HDP_OK && f->test_features)
        st = load_test(f, ds, sum, err);
    if (st != HDP_OK) {
        hdp_dataset_free(ds);
        memset(sum, 0, sizeof *sum);
        sum->test_mse = NAN;
    }
    return st;
}
