/*
 * handle_dataset.c — the handle API's data sets (hdpsgd/handle.h: hdp_handle_dataset): a
 * user's files read and prepared by hdp_dataset_load (hdpsgd/dataset.h), the summary of
 * `hdpsgd dataset --json` as a record, from the same result tables (hdpsgd/fields.h; the
 * JSON's echo of the input files' names is the caller's). The
 * records are handle.c's (drivers/handle_internal.h).
 */
#include <string.h>

#include "core/check.h"
#include "drivers/handle_internal.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/handle.h"

hdp_status hdp_handle_dataset(const char *features, const char *labels, const double *positive,
                              long npositive, const char *test_features, const char *test_labels,
                              int center, const char *scale, double ridge, hdp_record **out,
                              hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, features);
    HDP_REQUIRE(err, scale);
    int no_scale = !strcmp(scale, "none");
    if (!no_scale && strcmp(scale, "trace"))
        return hdp_fail(err, HDP_EINPUT, "scale '%s': expected trace (rows rescaled so that the "
                        "covariance has mean eigenvalue 1) or none", scale);
    if (npositive > 256)
        return hdp_fail(err, HDP_EINPUT, "%ld classes mapped to +1: at most 256", npositive);
    hdp_dataset_files files = {features, labels, positive, npositive, test_features, test_labels};
    hdp_dataset_options o = {!center, no_scale, ridge, 0, 1};
    hdp_dataset ds;
    hdp_dataset_summary sum;
    hdp_status st = hdp_dataset_load(&files, &o, &ds, &sum, err);
    if (st != HDP_OK)
        return st;
    hdp_record *r = hdp_rec_new();
    if (r) {
        hdp_rec_fields(r, &hdp_dataset_fields, "", &sum, NULL);
        if (sum.has_labels) {
            if (npositive > 0)
                hdp_rec_fields(r, &hdp_dataset_classes_fields, "", &sum, NULL);
            hdp_rec_fields(r, &hdp_dataset_labels_fields, "", &sum, NULL);
        }
        if (sum.test_n > 0) {
            hdp_rec_fields(r, &hdp_dataset_test_fields, "", &sum, NULL);
            if (sum.has_test_labels)
                hdp_rec_fields(r, &hdp_dataset_test_labels_fields, "", &sum, NULL);
        }
    }
    hdp_dataset_free(&ds);
    return hdp_rec_finish(r, out, err);
}
