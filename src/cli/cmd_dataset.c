/*
 * cmd_dataset.c — `hdpsgd dataset FEATURES [--labels FILE] [--positive LIST] [--no-center]
 * [--no-scale] [--ridge R] [--top K] [--json FILE]`: read a user's data (hdpsgd/dataset.h),
 * prepare it as the empirical model of docs/theory.md §9 and print what the theory sees: N,
 * d, the scale factor, the top eigenvalues, the trace and, with labels, the least-squares
 * target's norm, R at θ = 0 and the residual variance.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/text.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/fields.h"
#include "io/output.h"

static const char *labels_path, *positive_opt, *json_path, *test_path, *test_labels_path;
static int no_center, no_scale;
static double ridge_opt;
static long top_opt;

const cli_opt dataset_opts[] = {
    {"labels", 0, OPT_STRING, &labels_path, "FILE",
     "N labels in the same formats (a 1-D or N x 1 .npy, IDX or one-column .csv)"},
    {"positive", 0, OPT_STRING, &positive_opt, "LIST",
     "classes mapped to +1, comma-separated (e.g. 0,2,6); the others to -1 (default: labels "
     "used as numbers)"},
    {"test-features", 0, OPT_STRING, &test_path, "FILE",
     "held-out rows (same formats and d), prepared with the training rows' mean, scale and basis"},
    {"test-labels", 0, OPT_STRING, &test_labels_path, "FILE",
     "their labels (mapped by --positive too): prints the test MSE of theta*"},
    {"no-center", 0, OPT_FLAG, &no_center, NULL,
     "keep the rows as they are (default: subtract the mean row, and the labels' mean)"},
    {"no-scale", 0, OPT_FLAG, &no_scale, NULL,
     "scale = none (default: scale = trace, rows rescaled so that the covariance has mean "
     "eigenvalue 1)"},
    {"ridge", 0, OPT_DOUBLE, &ridge_opt, "R",
     "ridge >= 0 of the least-squares target (default 0: minimum-norm least squares)"},
    {"top", 0, OPT_LONG, &top_opt, "K", "eigenvalues printed, 1..1000 (default 10)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json",
     "write the summary here, with every eigenvalue and D_j(0)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};
const char dataset_usage[] = "FEATURES";
const char dataset_help[] =
    "Read an N x d feature matrix (.npy float32/float64/integers in C or Fortran order, .csv "
    "with an optional header line, or IDX as the MNIST family's files; gzipped or not) and "
    "prepare it as the toolkit's empirical model: centring, scale = trace, the covariance "
    "Sigma = X'X/N and its eigendecomposition, and with --labels the ridge least-squares target "
    "theta* = (Sigma + ridge I)^-1 X'y/N with its energy per eigendirection "
    "D_j(0) = (d/2)(u_j'theta*)^2 (docs/theory.md section 9). Prints N, d, the scale factor, "
    "the top eigenvalues, the trace and, with labels, |theta*|, R at theta = 0 and the "
    "residual variance. Bad files are refused with exit status 2 naming the file (and the row "
    "and column).";

/* "0,2,6" into classes (at most 256) */
static int parse_positive(const char *s, double *v, long *n)
{
    *n = 0;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || errno || !isfinite(x) || x != floor(x) || *n == 256 ||
            (*end != ',' && *end != 0)) {
            fprintf(stderr, "hdpsgd dataset: --positive '%s': expected integer classes separated "
                    "by commas (at most 256), e.g. 0,2,6\n", s);
            return EXIT_BAD_INPUT;
        }
        v[(*n)++] = x;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

/* a file name shown on the terminal: control characters and bytes that are not UTF-8 as \xNN
 * (a name that opened is shorter than PATH_MAX, 4 characters per byte at most) */
static const char *vis(const char *s)
{
    static char buf[3][4 * 4096 + 1];
    static int k;
    k = (k + 1) % 3;
    hdp_visible(buf[k], sizeof buf[k], s, strlen(s), 0);
    return buf[k];
}

static void print_summary(const char *path, const hdp_dataset *ds,
                          const hdp_dataset_summary *sum)
{
    printf("features: %s: N = %ld rows, d = %ld (%s storage)\n", vis(path), ds->n, ds->d,
           sum->storage);
    printf("centred: %s; scale = %s: factor %.9g (tr Sigma %.9g before, %.9g after)\n",
           sum->center ? "yes" : "no", sum->scale, ds->scale, ds->trace_raw, ds->trace);
    long k = top_opt < ds->d ? top_opt : ds->d;
    printf("eigenvalues (top %ld of %ld):", k, ds->d);
    for (long j = 0; j < k; j++)
        printf(" %.6g", ds->lambda[j]);
    printf("\n");
    if (!ds->has_labels)
        return;
    if (positive_opt)
        printf("labels: %s: +1 for classes %s: %ld of %ld\n", vis(labels_path), positive_opt,
               sum->positive_count, ds->n);
    else
        printf("labels: %s (used as numbers)\n", vis(labels_path));
    printf("least squares (ridge %.6g): |theta*| = %.9g, R(0) = %.9g, residual variance "
           "tau^2 = %.9g (label mean %.9g, label variance %.9g)\n",
           ds->ridge, ds->theta_norm, ds->risk0, ds->tau2, ds->y_mean, ds->label_var);
    if (sum->test_n > 0 && sum->has_test_labels)
        printf("test: %s: %ld rows, mean squared error of theta* %.9g (training: %.9g)\n",
               vis(test_path), sum->test_n, sum->test_mse, ds->tau2);
    else if (sum->test_n > 0)
        printf("test: %s: %ld rows (no --test-labels: no error)\n", vis(test_path), sum->test_n);
}

/* the JSON summary: the result tables of its parts (main.c), each from what it reads here */
static void write_json(FILE *f, const char *path, const hdp_dataset_summary *sum)
{
    const hdp_dataset_names nm = {path, labels_path, positive_opt, test_path, test_labels_path};
    hdp_json j;
    hdp_json_begin(&j, f);
    const int labels = sum->has_labels, test = sum->test_n > 0,
              test_labels = test && sum->has_test_labels;
    const cli_json_source src[] = { /* the tables of its JSON (main.c) and what they read */
        {&hdp_dataset_features_fields, &nm, NULL}, {&hdp_dataset_fields, sum, NULL},
        {&hdp_dataset_labels_file_fields, labels ? &nm : NULL, NULL},
        {&hdp_dataset_classes_fields, labels && positive_opt ? sum : NULL, NULL},
        {&hdp_dataset_labels_fields, labels ? sum : NULL, NULL},
        {&hdp_dataset_test_file_fields, test ? &nm : NULL, NULL},
        {&hdp_dataset_test_fields, test ? sum : NULL, NULL},
        {&hdp_dataset_test_labels_file_fields, test_labels ? &nm : NULL, NULL},
        {&hdp_dataset_test_labels_fields, test_labels ? sum : NULL, NULL}};
    cli_json_write(&j, cli_find_command("dataset"), src, (int)(sizeof src / sizeof *src), NULL);
    hdp_json_end(&j);
}

/* read the files and prepare (hdp_dataset_load); 0 or an exit status */
static int load(const char *path, hdp_dataset *ds, hdp_dataset_summary *sum)
{
    hdp_error err;
    hdp_error_clear(&err);
    double classes[256];
    long nclasses = 0;
    if (positive_opt && !labels_path) {
        fprintf(stderr, "hdpsgd dataset: --positive needs --labels FILE\n");
        return EXIT_BAD_INPUT;
    }
    if (positive_opt && parse_positive(positive_opt, classes, &nclasses))
        return EXIT_BAD_INPUT;
    hdp_dataset_files files = {path, labels_path, classes, nclasses, test_path, test_labels_path};
    hdp_dataset_options o = {no_center, no_scale, ridge_opt, 0, 1};
    if (hdp_dataset_load(&files, &o, ds, sum, &err) != HDP_OK)
        return cli_fail("dataset", &err);
    return 0;
}

/* --json must not be one of the input files (cli_parse compares it with FEATURES already) */
static int json_is_input(void)
{
    struct stat out, in;
    const char *inputs[3] = {labels_path, test_path, test_labels_path};
    if (!json_path || strcmp(json_path, "-") == 0 || stat(json_path, &out) != 0)
        return 0;
    for (int k = 0; k < 3; k++)
        if (inputs[k] && stat(inputs[k], &in) == 0 && in.st_dev == out.st_dev &&
            in.st_ino == out.st_ino) {
            fprintf(stderr, "hdpsgd dataset: error: --json '%s' is the input '%s' (it would be "
                    "overwritten): choose another name (nothing was run)\n", json_path, inputs[k]);
            return 1;
        }
    return 0;
}

int cmd_dataset(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("dataset");
    cli_common common;
    labels_path = positive_opt = json_path = test_path = test_labels_path = NULL;
    no_center = no_scale = 0;
    ridge_opt = 0;
    top_opt = 10;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!common.model_path) {
        fprintf(stderr, "hdpsgd dataset: give the features' file (usage: hdpsgd dataset %s)\n",
                dataset_usage);
        return EXIT_BAD_INPUT;
    }
    if (top_opt < 1 || top_opt > 1000 || !(ridge_opt >= 0) || !isfinite(ridge_opt)) {
        fprintf(stderr, "hdpsgd dataset: %s\n", top_opt < 1 || top_opt > 1000
                ? "--top K: expected 1 to 1000" : "--ridge R: expected a finite number >= 0");
        return EXIT_BAD_INPUT;
    }
    if (json_is_input())
        return EXIT_BAD_INPUT;
    if ((test_labels_path && (!test_path || !labels_path))) {
        fprintf(stderr, "hdpsgd dataset: --test-labels needs --test-features and --labels\n");
        return EXIT_BAD_INPUT;
    }
    hdp_dataset ds;
    hdp_dataset_summary sum;
    if ((rc = load(common.model_path, &ds, &sum)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_outfile js = {0};
    if (json_path) {
        if (hdp_out_open(&js, json_path, &err) != HDP_OK) {
            hdp_dataset_free(&ds);
            return cli_fail("dataset", &err);
        }
        write_json(js.f, common.model_path, &sum);
        if (hdp_out_commit(&js, &err) != HDP_OK)
            rc = cli_fail("dataset", &err);
        hdp_out_abort(&js);
    }
    if (!rc && !(json_path && strcmp(json_path, "-") == 0))
        print_summary(common.model_path, &ds, &sum);
    hdp_dataset_free(&ds);
    return rc;
}
