/*
 * hdpsgd/net.h — full-batch DP-GD on a two-layer fully connected network (the privacy-for-free
 * paper, Bombari-Mondelli, Fig. 1 and the last panel of Fig. 2; docs/theory.md §7.4).
 *
 * Model. f(x) = A relu(W x) in R^K (K = 10 classes), W (width x d), A (K x width), no biases.
 * Loss ce: softmax cross-entropy; squared: (1/2) ||f(x) - e_y||^2 (one-hot targets). The
 * output residual of sample i is g_i = softmax(f_i) - e_{y_i} (ce) or f_i - e_{y_i} (squared).
 * Initialisation (the paper's code): W_ij ~ N(0, 2/d), A_kj ~ N(0, 2/width) (He); with
 * train = second (random features, W frozen) A starts at 0 as the paper's theta_0 = 0.
 *
 * Per-sample gradients factor (h_i = relu(W x_i), D_i = 1{W x_i > 0}):
 *     grad_A l_i = g_i h_i^T,            ||grad_A||^2 = ||g_i||^2 ||h_i||^2
 *     grad_W l_i = (D_i (A^T g_i)) x_i^T, ||grad_W||^2 = ||D_i (A^T g_i)||^2 ||x_i||^2
 * so their norms need no per-sample gradient, and the clipped sums are two products:
 *     sum_i c_i grad_A l_i = (c G)^T H,   sum_i c_i grad_W l_i = (c Delta)^T X,
 * c_i = min(1, C_clip / ||grad l_i||) (the norm over the trained layers).
 *
 * DP-GD (Algorithm 1 of the paper, docs/theory.md §6.3): T steps of
 *     theta <- theta - eta (1/n) sum_i clip(grad l_i) + sqrt(eta) (2 C_clip / n) sigma N(0, I),
 * sigma from (epsilon, delta): the paper's bound sigma = sqrt(eta T) sqrt(8 ln(1/delta))/epsilon
 * (calibration = simple, where epsilon < 8 ln(1/delta); else the zCDP route with a note) or the
 * zCDP route (calibration = zcdp); epsilon = inf: plain GD (no noise, no clipping).
 * C_clip = C (clip_scale = absolute) or C sqrt(width) (sqrt-width: the paper's C sqrt(p)
 * scaling of its random-features experiments, p the features; with both layers trained the
 * per-sample gradient is dominated by the first layer's, of order ||x|| ~ sqrt(d), whatever
 * the width).
 *
 * Determinism: OpenBLAS runs single-threaded inside the calls (sgemm on float32 rows) and
 * OpenMP shares fixed blocks of samples or hidden units, each computed whole by one thread;
 * sums over samples are reduced in block order. The noise comes from one stream in a fixed
 * order. Results are the same bits for every thread count.
 * The library prints nothing; long calls report through an optional callback.
 */
#ifndef HDPSGD_NET_H
#define HDPSGD_NET_H

#include "hdpsgd/error.h"
#include "hdpsgd/model.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the [net] section of the model files (src/families/net_keys.c) ---- */

typedef enum { HDP_NET_RELU = 0 } hdp_net_activation_kind;
typedef enum { HDP_NET_CE = 0, HDP_NET_SQUARED } hdp_net_loss_kind;
typedef enum { HDP_NET_TRAIN_BOTH = 0, HDP_NET_TRAIN_SECOND } hdp_net_train_kind;
typedef enum { HDP_NET_CLIP_ABSOLUTE = 0, HDP_NET_CLIP_SQRT_WIDTH } hdp_net_clip_scale_kind;
typedef enum { HDP_NET_CAL_SIMPLE = 0, HDP_NET_CAL_ZCDP } hdp_net_calibration_kind;
const char *hdp_net_activation_name(hdp_net_activation_kind k);
const char *hdp_net_loss_name(hdp_net_loss_kind k);
const char *hdp_net_train_name(hdp_net_train_kind k);
const char *hdp_net_clip_scale_name(hdp_net_clip_scale_kind k);
const char *hdp_net_calibration_name(hdp_net_calibration_kind k);

/* The [net] keys, each declared once: X(field, C type, schema type, default, range flags,
 * lo, hi, enum names, help), in the order of the model files (see HDP_NC_KEYS). */
#define HDP_NET_KEYS(X) \
    X(width, long, LONG, "256", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL, \
      "hidden units (the width; integer in [1, 1e6])") \
    X(activation, hdp_net_activation_kind, ENUM, "relu", 0, 0, 0, net_activation_names, \
      "activation of the hidden layer: relu") \
    X(loss, hdp_net_loss_kind, ENUM, "ce", 0, 0, 0, net_loss_names, \
      "loss: ce (softmax cross-entropy over the classes) | squared ((1/2)||f - e_y||^2)") \
    X(train, hdp_net_train_kind, ENUM, "both", 0, 0, 0, net_train_names, \
      "both (both layers) | second (first layer frozen: random features, A from 0)") \
    X(steps, long, LONG, "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL, \
      "DP-GD steps T (integer in [1, 1e7])") \
    X(lr, double, DOUBLE, "0.1", HDP_R_LO_OPEN, 0, 0, NULL, "learning rate eta > 0") \
    X(C, double, DOUBLE, "2", HDP_R_LO_OPEN, 0, 0, NULL, \
      "clipping constant > 0: C_clip = C (clip_scale = absolute) or C sqrt(width)") \
    X(clip_scale, hdp_net_clip_scale_kind, ENUM, "absolute", 0, 0, 0, net_clip_scale_names, \
      "absolute (C_clip = C) | sqrt-width (C_clip = C sqrt(width), the scaling of the " \
      "paper's random-features experiments)") \
    X(epsilon, double, DOUBLE, "1", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL, \
      "privacy budget epsilon > 0 (the paper's Fig. 1: 1); inf = plain GD (no noise, no clip)") \
    X(delta, double, DOUBLE, "auto", HDP_R_LO_OPEN | HDP_R_HI_OPEN | HDP_R_AUTO, 0, 1, NULL, \
      "delta in (0, 1); auto = 1/n (the paper's)") \
    X(calibration, hdp_net_calibration_kind, ENUM, "simple", 0, 0, 0, net_calibration_names, \
      "noise: simple (the paper's sigma = sqrt(eta T) sqrt(8 ln(1/delta))/epsilon) | zcdp") \
    X(n, long, LONG, "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 10, 1e7, NULL, \
      "training samples n (integer in [10, 1e7]; at most the training file's rows left " \
      "after the validation split)") \
    X(val_fraction, double, DOUBLE, "0.1666666666666667", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, \
      NULL, "fraction of the training file held out for validation (the paper: 10 000 of " \
      "60 000); synthetic data: validation samples = val_fraction n") \
    X(d, long, LONG, "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL, \
      "synthetic data: input dimension d (x ~ N(0, I_d))") \
    X(classes, long, LONG, "10", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1000, NULL, \
      "synthetic data: classes K (label argmax_k u_k^T x, u_k ~ N(0, I_d) fixed)") \
    X(test_size, long, LONG, "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL, \
      "synthetic data: test samples") \
    X(records, long, LONG, "20", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 10000, NULL, \
      "evaluations along training (plus step 0), at evenly spaced steps; more than net.steps " \
      "means every step")

#define HDP_NET_FIELD_(f, ctype, ...) ctype f;

/* The values of the [net] keys (`hdpsgd keys` gives their meaning and ranges). */
typedef struct {
    HDP_NET_KEYS(HDP_NET_FIELD_)
} hdp_net_keys;

const hdp_net_keys *hdp_net_keys_of(const hdp_model *m);
hdp_net_keys *hdp_net_keys_edit(hdp_model *m);

/* ---- data ---- */

/* Inputs as float32 rows (row-major, n x d) and integer labels in [0, K). */
typedef struct {
    long n, d;
    float *x;
    int *y;
} hdp_net_split;

typedef struct {
    long d, K;
    hdp_net_split train, val, test;
    int synthetic; /* 1: Gaussian inputs */
} hdp_net_data;

/* Gaussian inputs x ~ N(0, I_d), labels argmax_k u_k^T x with u_k ~ N(0, I_d) fixed (K
 * classes): n training, nval validation, ntest test samples, from the stream of seed. */
hdp_status hdp_net_data_synthetic(long d, long K, long n, long nval, long ntest,
                                  unsigned long long seed, hdp_net_data *out, hdp_error *err);

/* A labelled data set from files (hdpsgd/dataset.h formats: IDX, .npy, .csv): the training
 * rows are shuffled by seed, the last round(val_fraction N) of them are the validation set,
 * the first n the training set (n <= N - N_val, else HDP_EINPUT naming `nkey`); labels must be
 * integers 0..K-1 (K = largest + 1, at least 2). Every split is standardised per coordinate
 * with the training rows' mean and standard deviation (the paper's code), the deviation
 * floored at 0.05 times the largest one so that coordinates constant over the training rows
 * (image borders) are not blown up. */
hdp_status hdp_net_data_files(const char *features, const char *labels, const char *test_features,
                              const char *test_labels, long n, double val_fraction,
                              unsigned long long seed, const char *nkey, hdp_net_data *out,
                              hdp_error *err);

/* The first n training samples of src as a view (no copy; n <= src->train.n). */
void hdp_net_data_head(const hdp_net_data *src, long n, hdp_net_data *view);

void hdp_net_data_free(hdp_net_data *dt);

/* ---- training ---- */

typedef struct {
    long width;
    hdp_net_loss_kind loss;
    hdp_net_train_kind train;
    long steps;
    double lr;
    double clip;        /* C_clip (absolute, resolved) */
    double epsilon;     /* inf: plain GD */
    double delta;       /* resolved (> 0) */
    hdp_net_calibration_kind calibration;
    long records;
    unsigned long long seed; /* initialisation and noise */
} hdp_net_config;

/* The config of a model's [net] keys for n training samples (delta auto = 1/n). */
void hdp_net_config_from_model(const hdp_model *m, long n, hdp_net_config *c);

/* sigma of the config for n samples (0 for epsilon = inf); *zcdp_route 1 when the zCDP
 * route was used (calibration = zcdp, or the simple bound does not apply). */
hdp_status hdp_net_sigma(const hdp_net_config *c, double *sigma, int *zcdp_route, hdp_error *err);

/* One training run: the curve at points = records + 1 evenly spaced steps (step 0 first). */
typedef struct {
    long points;
    double *step, *time;                       /* step t and eta t */
    double *train_loss, *train_accuracy;
    double *val_loss, *val_accuracy;           /* NaN without a validation set */
    double *test_loss, *test_accuracy;
    double *clipped_fraction;                  /* over the steps since the previous point */
    double sigma, noise_std;                   /* sigma; sqrt(eta) 2 C_clip sigma / n */
    double epsilon, delta, rho_z;              /* the guarantee (rho_z = eta T/(2 sigma^2)) */
    int zcdp_route;
    double max_clipped_norm;                   /* max over steps and samples of ||c_i grad l_i|| */
    double params;                             /* trained parameters */
    double seconds;
    int threads;
} hdp_net_result;

/* Train on dt (dt->val may be empty) with threads OpenMP threads (0: one per core).
 * progress (may be NULL) gets ("net steps", done, total, test accuracy so far); a nonzero
 * return stops the run (HDP_ECANCELLED). HDP_ENUMERIC when the loss becomes non-finite. */
hdp_status hdp_net_train(const hdp_net_data *dt, const hdp_net_config *c, int threads,
                         hdp_progress_fn progress, void *user, hdp_net_result *res,
                         hdp_error *err);
void hdp_net_result_free(hdp_net_result *r);

/* The kernel, exposed for the tests: for parameters W (width x d, NULL with train = second
 * and then only the A part), A (K x width), rows x (n x d), labels y: the per-sample gradient
 * norms norm[n] by the factorisation above. Single-threaded, double accumulation. */
hdp_status hdp_net_grad_norms(const float *W, const float *A, long width, long d, long K,
                              const float *x, const int *y, long n, hdp_net_loss_kind loss,
                              int train_first, double *norm, hdp_error *err);

/* The clipped gradient sums (c Delta)^T X (width x d; train_first) and (c G)^T H (K x width)
 * with c_i = min(1, C_clip/norm_i), and the norms, as hdp_net_train computes them, with
 * threads threads. gW may be NULL without train_first. */
hdp_status hdp_net_clipped_grad(const float *W, const float *A, long width, long d, long K,
                                const float *x, const int *y, long n, hdp_net_loss_kind loss,
                                int train_first, double clip, int threads, float *gW, float *gA,
                                double *norm, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
