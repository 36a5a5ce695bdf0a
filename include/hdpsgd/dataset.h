/*
 * hdpsgd/dataset.h — a user's data: N x d feature matrices and N labels read from .npy, .csv
 * and IDX files (gzipped or not), and their preparation for the risk ODE and the real-row
 * Monte Carlo (docs/theory.md §9): centring, `scale = trace`, the empirical covariance
 * Σ = XᵀX/N with its eigendecomposition, the rows rotated into the eigenbasis, labels mapped
 * to ±1, and the ridge least-squares target θ* with its energy per eigendirection.
 *
 * Formats (detected by content — the npy magic "\x93NUMPY", the IDX magic 00 00 08..0e nd,
 * the gzip magic 1f 8b — with the file's extension as a hint for text):
 *   .npy   versions 1-3, dtypes <f4 <f8 |u1 |i1 <i4 <i8 (also <u2 <i2 <u4 <u8), C or Fortran
 *          order, 1-D (N values: labels, or N x 1) or 2-D shapes;
 *   IDX    the MNIST family's format: big-endian, type codes 08 (u8) 09 (i8) 0b (i16) 0c (i32)
 *          0d (f32) 0e (f64); 1-D is N values, k-D is N rows of the product of the other
 *          dimensions (images flattened row by row);
 *   .csv   numbers separated by commas, one row per line, an optional header line (a first
 *          line with a cell that is not a number), blank lines at the end ignored.
 * Bad input is HDP_EINPUT with a message naming the file (and the row and column, or the
 * byte offset, where that applies): a payload of another size than the header announces, a
 * truncated gzip stream, an unknown dtype or IDX type code, NaN or inf entries, N < 2, ragged
 * or non-numeric CSV rows, empty files, more than HDP_DATASET_MAX_BYTES of values (the message
 * gives the memory needed). Nothing is cut: a file is read to its end or refused.
 *
 * Storage: rows stay float32 when every value of the file is exactly a float32 (float32,
 * 8- and 16-bit integer files: one copy of the rows at 4 bytes per entry), else double.
 * Preparation (hdp_dataset_prepare) keeps the storage: it overwrites the matrix with the
 * centred, scaled and rotated rows, rounded to float32 when the storage is float32 (a
 * relative rounding of 2^-24 per entry); every reduction (mean, Σ, Xᵀy, residuals) is
 * computed in double.
 */
#ifndef HDPSGD_DATASET_H
#define HDPSGD_DATASET_H

#include "hdpsgd/error.h"
#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most bytes of values one file may hold once loaded (N d times 4 or 8): 8 GiB. */
#define HDP_DATASET_MAX_BYTES (8LL << 30)
/* The largest dimension the preparation takes (Σ and the eigenvectors are d x d in double:
 * 1.6 GB at 10^4). */
#define HDP_DATASET_MAX_D 10000L

/* An N x d matrix, row-major; exactly one of f32 and f64 is set. */
typedef struct {
    long n, d;
    float *f32;
    double *f64;
} hdp_matrix;

/* Read an N x d matrix (features) from path. A 1-D file gives N x 1. Fills *out (zeroed
 * first; hdp_matrix_free is always safe). */
hdp_status hdp_matrix_read(const char *path, hdp_matrix *out, hdp_error *err);

/* Read N labels from path: a 1-D file, or N x 1. *y is malloc'ed (free it), *n its length. */
hdp_status hdp_labels_read(const char *path, double **y, long *n, hdp_error *err);

/* Entry (i, j) as a double (NaN for a NULL matrix or an index out of range). */
double hdp_matrix_get(const hdp_matrix *m, long i, long j);

void hdp_matrix_free(hdp_matrix *m);

/* Map labels to ±1: +1 when y[i] equals one of positive[0..npositive), else -1. The
 * classes must be integers (a label that is not an integer, or a positive class not found
 * among the labels, is HDP_EINPUT naming `what`, e.g. the labels' file). */
hdp_status hdp_labels_map_pm1(double *y, long n, const double *positive, long npositive,
                              const char *what, hdp_error *err);

typedef struct {
    int no_center;     /* 1: keep the rows as they are (default 0: subtract the mean row) */
    int no_scale;      /* 1: scale = none (default 0: scale = trace, mean eigenvalue 1) */
    double ridge;      /* ridge >= 0 of the least-squares target (default 0) */
    int no_rotate;     /* 1: leave the rows in the original basis (default 0: rotate them) */
    int statistics_only; /* 1: only Σ, its eigenbasis, θ* and the residuals are wanted: the
                          * rows are not written back (ds->rows stays as read, ds->prepared
                          * 0), which spares the N x d x d rotation; held-out rows are still
                          * prepared by hdp_dataset_apply in the basis of ds->rotated */
} hdp_dataset_options;

typedef struct {
    long n, d;
    hdp_matrix rows;   /* the prepared rows: centred, scaled, in the eigenbasis (x ↦ Uᵀx) */
    int rotated;       /* 1 when rows are in the eigenbasis (and hdp_dataset_apply rotates) */
    int prepared;      /* 1 when rows are prepared (0 with statistics_only: as read) */
    double scale;      /* the factor s the rows were multiplied by (1 for scale = none) */
    double *mean;      /* the mean row of the file, in its own units (d; zeros: no centring) */
    double *lambda;    /* eigenvalues of Σ = XᵀX/N of the prepared rows, decreasing (d) */
    double *u;         /* eigenvectors, d x d, one per row: u_j = u[j d .. j d + d) (Uᵀ) */
    double trace;      /* tr Σ (d for scale = trace, up to rounding) */
    double trace_raw;  /* tr Σ before scaling */
    /* with labels (has_labels): the labels as used (centred when the rows are), the target */
    int has_labels;
    double *y;         /* n labels, centred when the rows are (y_mean subtracted) */
    double y_mean;     /* the label mean subtracted (0 without centring) */
    double ridge;
    double *theta;     /* θ* = (Σ + ridge I)⁻¹ Xᵀy/N, in the original basis of the prepared rows */
    double *theta_eig; /* its coordinates u_jᵀθ* (d) */
    double *energy;    /* D_j(0) = (d/2)(u_jᵀθ*)² (d), §3.1's convention */
    double *residual;  /* z_i = y_i - x_iᵀθ* (n) */
    double theta_norm; /* ‖θ*‖ */
    double risk0;      /* R^exc(0) = ½ θ*ᵀΣθ* = (1/d) Σ_j λ_j D_j(0) */
    double tau2;       /* the residuals' variance (1/N) Σ z_i² (their mean is 0 when centred) */
    double label_var;  /* (1/N) Σ y_i² of the labels as used */
} hdp_dataset;

/* Prepare rows (taken over: *rows is left empty, its storage becomes out->rows) with labels
 * y (ny values, copied; NULL: none) into *out (zeroed first; hdp_dataset_free is always
 * safe). opts NULL: the defaults. With ridge = 0 the target is the minimum-norm least
 * squares (eigenvalues at most 1e-12 λ_1 count as 0). HDP_EINPUT for n < 2,
 * d > HDP_DATASET_MAX_D, ny != n, a non-finite label, a negative ridge, all rows equal
 * (tr Σ = 0 with scale = trace); HDP_ENUMERIC when LAPACK fails or the target overflows;
 * HDP_ENOMEM. */
hdp_status hdp_dataset_prepare(hdp_matrix *rows, const double *y, long ny,
                               const hdp_dataset_options *opts, hdp_dataset *out,
                               hdp_error *err);

/* Held-out rows prepared as the training rows of ds were: minus ds->mean, times ds->scale,
 * rotated into ds's eigenbasis when ds->rotated (in place, in their own storage).
 * HDP_EINPUT naming `what` (e.g. the test file) when their d differs from ds->d. */
hdp_status hdp_dataset_apply(const hdp_dataset *ds, hdp_matrix *rows, const char *what,
                             hdp_error *err);

/* The mean squared error (1/n) Σ (y_i - ȳ - x_iᵀθ*)² of the target on rows prepared by
 * hdp_dataset_apply (or ds->rows), y the labels as given (mapped to ±1 when classes), ȳ the
 * training labels' mean ds->y_mean. NaN without labels or for sizes that do not match. */
double hdp_dataset_mse(const hdp_dataset *ds, const hdp_matrix *rows, const double *y, long n);

void hdp_dataset_free(hdp_dataset *ds);

/* ---- a model's data set (data.source = file): read and prepared once by finalize ---- */

/* What hdp_model_finalize builds from the [data] keys of a model with source = file and
 * shares between the model's copies (hdp_model_copy, hdp_model_with): the prepared training
 * rows, the held-out set, the target. Immutable once built; reference counted. */
typedef struct hdp_data {
    hdp_dataset train;     /* the prepared rows (in the eigenbasis); with target =
                              least-squares also the labels, theta*, the residuals */
    int planted;           /* target = planted: labels synthesised, theta* uniform */
    int has_test;          /* a held-out set was given */
    hdp_matrix test_rows;  /* prepared as the training rows (eigenbasis) */
    double *test_y;        /* its labels as used (±1 for classes; centred by train.y_mean
                              when centring); NULL for planted */
    long test_n;
    double test_mse_star;  /* mean squared error of theta* on the held-out set (least-squares;
                              NaN otherwise) */
    /* the held-out rows' moments in the eigenbasis, from which the MSE of any theta =
     * theta* + e is e^T Sigma_t e - 2 e^T b_t + c_t: Sigma_t = X_t^T X_t / N_t (d x d),
     * b_t = X_t^T z_t / N_t and c_t = mean z_t^2 with z_t = y_t - X_t theta* (least-squares;
     * b_t NULL and c_t 0 for planted) */
    double *test_sigma, *test_b;
    double test_c;
    double seconds;        /* wall time of reading and preparing */
    long refs;             /* copies of models that share it (hdp_data_retain/_release) */
    struct hdp_data_cache *cache; /* the clipping biases computed so far (hdp_data_bias) */
} hdp_data;

/* The clipping bias of a least-squares target at clipping constant c (docs/theory.md §9):
 * theta_c, the zero of the mean clipped gradient on the rows,
 *   (1/N) sum_i x_i clamp(x_i^T theta_c - y_i, +-C/||x_i||) = 0,  C = c sqrt(d),
 * the minimiser of the rows' mean Huber loss (Newton's method with a line search, the
 * Hessian Sigma minus the clipped rows' part, kept up to date as rows change side);
 * R_bias = 1/2 ||theta_c - theta*||^2_Sigma; the residuals z_i = y_i - x_i^T theta_c, the
 * label noise of the ODE's shifted problem, with tau2 = mean z_i^2. */
typedef struct {
    double c;
    double *theta_c;   /* [d] eigenbasis */
    double *z;         /* [N] residuals at theta_c */
    double tau2;       /* mean z^2 */
    double *energy;    /* [d] (d/2) (u_j^T theta_c)^2 */
    double risk_bias;  /* 1/2 ||theta_c - theta*||^2_Sigma */
    double grad_norm;  /* the mean clipped gradient's norm at theta_c, relative to its norm at
                          theta = 0 */
    double clipped;    /* fraction of rows clipped at theta_c */
    long iterations;
    double seconds;
} hdp_data_bias;

/* The bias of m's data set at m's clip.c (computed once per c and cached with the data set,
 * the values of c used last, thread-safe; *out stays valid while m lives with this clip.c);
 * *out NULL (HDP_OK) when there is none to correct: no data set, target = planted, c = inf.
 * HDP_ENUMERIC when Newton's method does not converge, HDP_ENOMEM. */
hdp_status hdp_data_bias_of(const hdp_model *m, const hdp_data_bias **out, hdp_error *err);

/* Arrays in memory in place of data.features, data.labels, data.test_features and
 * data.test_labels (Python's Model.from_arrays): X n x d row-major, y n labels (NULL: none),
 * Xt nt x d (NULL: no held-out set), yt nt labels (NULL: none); copied, and shared by the
 * model's copies. Sets data.source = file (an override, as --set); finalize then prepares them
 * as it would the files (data.labels_positive, center, scale, ridge, target apply), and a file
 * key given as well takes precedence. HDP_EINPUT naming the array and its row and column for a
 * non-finite entry, n < 2, d < 1, nt < 1 with Xt; HDP_ENOMEM. The model is left unfinalized. */
hdp_status hdp_model_set_data_arrays(hdp_model *m, const double *X, long n, long d,
                                     const double *y, const double *Xt, long nt,
                                     const double *yt, hdp_error *err);

/* The data set of a finalized model with data.source = file (NULL otherwise). */
const hdp_data *hdp_model_data(const hdp_model *m);

/* Share one more (returns d) / release one (frees it with the last). NULL is accepted. */
hdp_data *hdp_data_retain(hdp_data *d);
void hdp_data_release(hdp_data *d);

/* The files of one data set, as `hdpsgd dataset` takes them: the features (required), their
 * labels (NULL: none), the classes mapped to +1 (npositive > 0: hdp_labels_map_pm1 on the
 * labels and the test labels; 0: labels used as numbers), held-out features and their labels
 * (NULL: none; test_labels needs test_features and labels). */
typedef struct {
    const char *features;
    const char *labels;
    const double *positive;
    long npositive;
    const char *test_features;
    const char *test_labels;
} hdp_dataset_files;

/* The inputs as `hdpsgd dataset` was given them, echoed in its JSON (hdpsgd/fields.h:
 * dataset_features, dataset_labels_file, dataset_test_file, dataset_test_labels_file): the
 * files' names and the classes mapped to +1 as written (NULL: not given). */
typedef struct {
    const char *features, *labels, *positive, *test_features, *test_labels;
} hdp_dataset_names;

/* What `hdpsgd dataset` reports of a prepared data set (the result tables dataset,
 * dataset_classes, dataset_labels and dataset_test of hdpsgd/fields.h: its JSON summary, the
 * handle's record hdp_handle_dataset, Python's hdpsgd.dataset). The columns are borrowed from
 * the data set it was made from. */
typedef struct {
    long n, d;
    char storage[8];          /* "float32" or "float64" */
    int center;               /* 1: rows (and labels) centred */
    char scale[8];            /* "trace" or "none" */
    double scale_factor;      /* ds->scale */
    double trace_raw, trace;
    double *eigenvalues;      /* ds->lambda (d) */
    int has_labels;
    long positive_count;      /* labels mapped to +1 (classes given; else 0) */
    double ridge, label_mean, label_variance, theta_norm, risk0, residual_variance;
    double *energy;           /* ds->energy (d; NULL without labels) */
    long test_n;              /* held-out rows (0: none) */
    int has_test_labels;
    double test_mse;          /* hdp_dataset_mse on the held-out set (NaN without its labels) */
} hdp_dataset_summary;

/* Read the files, map the labels, prepare (opts NULL: the defaults) into *ds and, with held-out
 * features, prepare them as the training rows (hdp_dataset_apply) for the test MSE; fill *sum
 * (borrowing ds's columns: free ds after sum's last use). The statistics are all it computes
 * (statistics_only: ds->rows are left as read; the summary's numbers are those of a full
 * preparation, bit for bit). *ds and *sum are zeroed first
 * (hdp_dataset_free is always safe). HDP_EINPUT for bad files, as the readers say, and for
 * labels that are not one per row, naming the file; the statuses of hdp_dataset_prepare. */
hdp_status hdp_dataset_load(const hdp_dataset_files *files, const hdp_dataset_options *opts,
                            hdp_dataset *ds, hdp_dataset_summary *sum, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
