/*
 * hdpsgd/rf.h — DP-GD on random features and its Ornstein-Uhlenbeck limit
 * ("privacy for free", Bombari-Mondelli; docs/theory.md §6 and §7).
 *
 * Model (docs/theory.md §7): x ~ N(0, I_d) (or a data set's rows, §7.5); V in R^{p x d}, V_ij ~ N(0, 1/d), frozen;
 * features phi(x) = act(V x); f(x; theta) = phi(x)^T theta; loss (f - y)^2;
 * labels y = sign(u^T x) or u^T x (u uniform on the unit sphere), plus optional
 * Gaussian label noise. Phi (n x p) holds the training features by rows.
 *
 * DP-GD (Algorithm 1 of Bombari-Mondelli, docs/theory.md §7): theta_0 = 0 and for t = 1..T
 *   r = Phi theta - y,  w_i = min(1, C_clip / (2 |r_i| ||phi_i||))   clipping weights
 *   theta <- theta - eta (2/n) Phi^T (w .* r) + sqrt(eta) (2 C_clip / n) sigma xi,  xi ~ N(0, I_p)
 * with sigma from docs/theory.md §6 (Bombari-Mondelli's bound, or the zCDP route outside its
 * range).
 *
 * The OU limit (docs/theory.md §7), tau = eta T: dTheta = -(2/n) Phi^T (Phi Theta - y) dt + s dB,
 * s = 2 C_clip sigma / n, solved in the eigenbasis of K = Phi Phi^T = U diag(s_k^2) U^T:
 * rates lambda_k = 2 s_k^2 / n, orthonormal directions w_k = Phi^T u_k / s_k, and a
 * Brownian motion in the directions orthogonal to the rows of Phi. A parameter is
 * written theta = sum_k a_k w_k + theta_perp; its "mode coefficients" are a_k = w_k^T theta.
 *
 * Randomness: the data (u, X, X_test, label noise, then V row by row) come from the
 * block Gaussian stream (rng.h) of the xoshiro256++ stream seeded by the seed; run or
 * configuration j draws from the block stream of that stream jumped j times (j >= 1). Results do not depend on the number of threads: the BLAS
 * runs single-threaded inside the library, big products are cut into fixed blocks
 * that threads share, and every run is reduced in run order.
 * The library prints nothing; long loops report through an optional callback.
 */
#ifndef HDPSGD_RF_H
#define HDPSGD_RF_H

#include "hdpsgd/progress.h"
#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the [rf] and [dpgd] sections of the model files (src/families/rf_keys.c) ---- */

/* The activation phi and the target y(x) (docs/theory.md §7), with their names in model files. */
typedef enum { HDP_RF_TANH = 0, HDP_RF_RELU, HDP_RF_LINEAR_ACT } hdp_rf_activation_kind;
typedef enum { HDP_RF_SIGN = 0, HDP_RF_LINEAR_TARGET } hdp_rf_target_kind;
const char *hdp_rf_activation_name(hdp_rf_activation_kind k);
const char *hdp_rf_target_name(hdp_rf_target_kind k);

/* The [rf] keys, each declared once: X(field, C type, schema type, default, range flags, lo, hi,
 * enum names, help), in the order of the model files (as HDP_NC_KEYS of hdpsgd/nc.h). This
 * list makes the values' struct hdp_rf_keys below and the section's schema rows (rf_keys.c:
 * parsing, the key's one range, defaults, `hdpsgd keys`, the man page). */
#define HDP_RF_KEYS(X) \
    X(d, long, LONG, "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL, \
      "input dimension d (integer in [1, 1e5]); x ~ N(0, I_d); with data.source = file the " \
      "rows' column count (leave it out or give that)") \
    X(n, long, LONG, "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL, \
      "training samples n (integer in [1, 1e6]); with data.source = file the file's rows less " \
      "a test set held out from them") \
    X(p, long, LONG, "4000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL, \
      "random features p (integer in [1, 1e6]): phi(x) = act(V x), V_ij ~ N(0, 1/d) frozen") \
    X(activation, hdp_rf_activation_kind, ENUM, "tanh", 0, 0, 0, rf_activation_names, \
      "activation: tanh | relu | linear") \
    X(target, hdp_rf_target_kind, ENUM, "sign", 0, 0, 0, rf_target_names, \
      "labels: sign (y = sign(u^T x)) | linear (y = u^T x), u uniform on the unit sphere; with " \
      "data.source = file, for rows without labels (or data.target = planted)") \
    X(label_noise, double, DOUBLE, "0", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "variance >= 0 of Gaussian noise added to every label (train and test)") \
    X(test_size, long, LONG, "1000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL, \
      "test samples (integer in [1, 1e6]); with data.source = file data.test_features's rows, " \
      "or else rows of the file held out by the seed (default 20 %)") \
    X(runs, long, LONG, "10", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL, \
      "runs of `hdpsgd rf` (integer in [1, 1e5]; --runs overrides it)") \
    X(records, long, LONG, "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL, \
      "`hdpsgd rf` records the losses at step 0 and at round(i T / records), i = 1..records; " \
      "at most 1e6") \
    X(val_size, long, LONG, "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e6, NULL, \
      "validation samples of rf-experiment, which chooses (C, T) on them (integer in [0, 1e6]); " \
      "0 = 20 % of test_size")

#define HDP_RF_FIELD_(f, ctype, ...) ctype f;

/* The values of the [rf] keys: DP-GD on random features (`hdpsgd keys` gives their
 * meaning and ranges). */
typedef struct {
    HDP_RF_KEYS(HDP_RF_FIELD_)
} hdp_rf_keys;

/* dpgd.regime: the experiments' scalings (C_clip = C sqrt(p), T = CT d/(eta p)) or the
 * theorem's (Bombari-Mondelli, Eq. 8: C_clip = sqrt(p) log^2 n, T = d log^2 n/(eta p)). */
typedef enum { HDP_DPGD_EXPERIMENTS = 0, HDP_DPGD_THEOREM } hdp_dpgd_regime_kind;
const char *hdp_dpgd_regime_name(hdp_dpgd_regime_kind k);

/* The [dpgd] keys, declared once as HDP_RF_KEYS: Algorithm 1 of Bombari-Mondelli
 * (docs/theory.md §6, §7); 0 means "derived" as in the help. */
#define HDP_DPGD_KEYS(X) \
    X(eta, double, DOUBLE, "0", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "DP-GD step size eta >= 0; 0 = 1/p") \
    X(T, long, LONG, "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED | HDP_K_IF_GIVEN, 0, 1e9, NULL, \
      "steps T (integer in [0, 1e9]); 0 = round(CT d / (eta p)); give T or CT, not both") \
    X(CT, double, DOUBLE, "1", HDP_R_LO_OPEN | HDP_K_IF_GIVEN, 0, 0, NULL, \
      "CT = eta T p / d > 0 (the x-axis of Bombari-Mondelli's collapse); used when T = 0") \
    X(C, double, DOUBLE, "0.5", HDP_R_LO_OPEN | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL, \
      "clipping constant C > 0 or inf: C_clip = C sqrt(p); give C or clip, not both") \
    X(clip, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL, \
      "absolute clipping threshold C_clip >= 0 or inf; 0 = C sqrt(p)") \
    X(epsilon, double, DOUBLE, "4", HDP_R_LO_OPEN | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL, \
      "target epsilon > 0 of (epsilon, delta)-DP, or inf (no private noise)") \
    X(delta, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL, \
      "delta in [0, 1); 0 = 1/n") \
    X(sigma, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_K_IF_GIVEN, 0, 0, NULL, \
      "noise multiplier sigma >= 0; 0 = calibrate from (epsilon, delta) (docs/theory.md §6)") \
    X(regime, hdp_dpgd_regime_kind, ENUM, "experiments", 0, 0, 0, dpgd_regime_names, \
      "experiments (C_clip = C sqrt(p), T from CT) | theorem (Bombari-Mondelli, Eq. 8: C_clip " \
      "= sqrt(p) log^2 n, T = d log^2 n / (eta p); leave C, clip, T and CT out)")

/* The values of the [dpgd] keys (`hdpsgd keys` gives their meaning and ranges). */
typedef struct {
    HDP_DPGD_KEYS(HDP_RF_FIELD_)
} hdp_dpgd_keys;

/* The [rf] and [dpgd] values of a model (stored in the model: valid while m is; NULL only
 * for a NULL m). */
const hdp_rf_keys *hdp_rf_keys_of(const hdp_model *m);
const hdp_dpgd_keys *hdp_dpgd_keys_of(const hdp_model *m);

/* ---- the data set ---- */

/* What hdp_rf_problem_build needs: the [rf] keys themselves (k.d, k.n, k.p, k.test_size,
 * k.activation, k.target, k.label_noise; experiments change them in a copy, e.g. k.p) and
 * what is not a key: */
typedef struct {
    hdp_rf_keys k;                     /* the [rf] keys; with data.source = file,
                                          hdp_rf_spec_from_data sets k.d, k.n and k.test_size
                                          to the data set's sizes */
    unsigned long long seed;           /* sim.seed */
    long v;                            /* derived: validation samples (HDP_RF_VALIDATION; >= 1
                                          then): k.val_size, or round(k.test_size / 5) */
    /* data.source = file (hdp_rf_spec_from_data; NULL and 0 otherwise): the inputs are the
     * data set's prepared rows (centred, scaled, in its eigenbasis: V's law is rotation
     * invariant, so Phi has the law of the features of the rows themselves), not drawn */
    const struct hdp_data *data;       /* the model's data set, borrowed */
    long holdout;                      /* > 0: no held-out file; the test set is this many
                                          rows of the file drawn by the seed (its stream
                                          long-jumped 20 times), the training set the rest
                                          in file order; 0: the held-out file's rows */
    int file_labels;                   /* 1: y is the data set's labels (centred); 0: y from
                                          rf.target with u on the rows (plus rf.label_noise) */
} hdp_rf_spec;

/* The [rf] keys and sim.seed; v = rf.val_size, or round(test_size / 5) (at least 1) when
 * it is 0. Synthetic inputs (data NULL): for a model on a data set call hdp_rf_spec_from_data
 * next. */
void hdp_rf_spec_from_model(const hdp_model *m, hdp_rf_spec *spec);

/* After hdp_rf_spec_from_model, for a model with data.source = file (HDP_OK and nothing
 * changed otherwise): the inputs become the data set's rows (docs/theory.md §7.5). k.d is
 * the rows' column count; the test set is the held-out file (k.test_size = its rows) or,
 * without one, rf.test_size rows of the file (default round(N/5), at least 1) and k.n = N -
 * k.test_size; the labels are the data set's (least-squares target: rf.target and
 * rf.label_noise must then be left out) or, without labels or with data.target = planted,
 * rf.target's on the rows. rf.d, rf.n and rf.test_size given with other values than these:
 * HDP_EINPUT naming the key and where it was set. */
hdp_status hdp_rf_spec_from_data(const hdp_model *m, hdp_rf_spec *spec, hdp_error *err);

/* Flags of hdp_rf_problem_build: what it computes besides the data, the modes and the
 * min-norm interpolator. */
enum {
    HDP_RF_TEST_MODES = 1, /* G = Phi_test W and the null-space norms of the test features
                             (2 m n p flops): needed by the closed forms and hdp_rf_simulate */
    HDP_RF_VALIDATION = 2  /* a validation set of spec.v samples (Phi_val, y_val) for choosing
                              hyperparameters, drawn from its own streams (see below) */
};

typedef struct {
    hdp_rf_spec spec;
    double *Phi;          /* [n x p] training features, row-major */
    double *Phi_test;     /* [m x p] test features */
    double *y, *y_test;   /* [n], [m] labels */
    double *phi_norm;     /* [n] ||phi_i|| */
    double *test_norm2;   /* [m] ||phi_test_j||^2 */
    /* the modes (docs/theory.md §7), s_k^2 > 0 in decreasing order; r = rank kept */
    long r;
    double *s2, *s;       /* [r] eigenvalues s_k^2 of K and singular values s_k */
    double *lambda;       /* [r] OU rates 2 s_k^2 / n */
    double *beta;         /* [r] u_k^T y / s_k: the min-norm interpolator is sum_k beta_k w_k */
    double *U;            /* [n x r] row-major: column k is u_k */
    double *G;            /* [m x r] phi_test_j^T w_k (HDP_RF_TEST_MODES), else NULL */
    /* HDP_RF_VALIDATION, else NULL: v fresh samples of the same law (the same u, V and label
     * noise), x from the block stream of the seed's stream long-jumped 10 times (its lanes
     * are long-jumps 11..19; the training and test data use the lanes 1..9, configuration j
     * jump j then 1..9): disjoint from the training and test data and the same for every p */
    double *Phi_val;      /* [v x p] validation features */
    double *y_val;        /* [v] validation labels */
    double *test_perp2;   /* [m] ||P_perp phi_test_j||^2 (HDP_RF_TEST_MODES), else NULL */
    /* baselines */
    double minnorm_test, minnorm_train; /* losses of Phi^+ y (least squares when p < n) */
    double minnorm_norm;                /* ||Phi^+ y|| */
    double zero_test, zero_train;       /* losses of theta = 0 (mean y^2) */
    double seconds;                     /* wall time of the build */
} hdp_rf_problem;

/* Draw the data and features, the eigendecomposition of the smaller Gram matrix
 * (K = Phi Phi^T, n x n, when p >= n; Phi^T Phi otherwise; LAPACKE_dsyevd), the
 * min-norm interpolator and, with HDP_RF_TEST_MODES, G. threads: OpenMP threads for
 * the blocked products (0 = one per core); the result does not depend on it.
 * HDP_EINPUT for bad sizes, HDP_ENOMEM, HDP_ENUMERIC when LAPACK fails.
 * pb must be freed with hdp_rf_problem_free (also on failure). */
hdp_status hdp_rf_problem_build(const hdp_rf_spec *spec, int flags, int threads,
                                hdp_rf_problem *pb, hdp_error *err);
void hdp_rf_problem_free(hdp_rf_problem *pb);

/* ---- DP-GD hyperparameters and the privacy calibration (docs/theory.md §6) ---- */

typedef enum {
    HDP_RF_SIGMA_GIVEN = 0, /* dpgd.sigma > 0 used as is */
    HDP_RF_SIGMA_SIMPLE,   /* sigma = sqrt(eta T) sqrt(8 ln(1/delta)) / epsilon */
    HDP_RF_SIGMA_ZCDP,      /* epsilon outside (0, 8 ln(1/delta)): rho_z by CKS,
                               sigma = sqrt(eta T / (2 rho_z)) */
    HDP_RF_SIGMA_NONE       /* epsilon = inf: sigma = 0, no private noise */
} hdp_rf_sigma_route;

typedef struct {
    double eta;        /* step size */
    long T;            /* steps */
    double C_clip;     /* clipping threshold on ||g_i|| (may be inf) */
    double epsilon;    /* target epsilon (inf: none); with a given sigma, CKS's epsilon */
    double delta;
    double sigma;      /* noise multiplier of Algorithm 1 */
    hdp_rf_sigma_route route;
    double rho_z;      /* eta T / (2 sigma^2) (inf without noise) */
    double epsilon_cks;/* CKS epsilon of rho_z at delta (the tightest guarantee) */
    double s;          /* OU diffusion 2 C_clip sigma / n (0 without noise) */
    double tau;        /* eta T */
} hdp_rf_dpgd;

/* Resolve the [dpgd] section for p features and n samples: eta (0 -> 1/p), T (0 ->
 * round(CT d/(eta p))), C_clip (clip, or C sqrt(p)), delta (0 -> 1/n), then sigma by
 * hdp_rf_dpgd_calibrate. regime = theorem: C_clip = sqrt(p) log^2 n and T = round(d log^2 n
 * / (eta p)) (Bombari-Mondelli, Eq. 8; T, CT, C and clip must then not be given).
 * Inconsistent keys (T and CT, C and clip, sigma and epsilon both given; T = 0 steps;
 * C_clip = inf with private noise): HDP_EINPUT naming the key and where it was set. */
hdp_status hdp_rf_dpgd_from_model(const hdp_model *m, long p, long n, long d, hdp_rf_dpgd *q,
                                  hdp_error *err);

/* Given q->eta, T, C_clip, delta and either q->sigma > 0 (route GIVEN) or q->epsilon
 * (sigma = 0 on entry): set sigma, route, rho_z, epsilon_cks, s and tau (docs/theory.md §6).
 * The Bombari-Mondelli formula is used for epsilon in (0, 8 ln(1/delta)), the zCDP route
 * otherwise (route ZCDP; callers may print a note). */
hdp_status hdp_rf_dpgd_calibrate(hdp_rf_dpgd *q, long n, hdp_error *err);

/* ---- closed forms (docs/theory.md §7) ---- */

/* Test and train loss of theta = sum_k c_k w_k (no null-space part): (1/m) ||G c - y_test||^2
 * and (1/n) ||U S c - y||^2. test needs HDP_RF_TEST_MODES (else it is set to NaN). */
void hdp_rf_modes_loss(const hdp_rf_problem *pb, const double *c, double *test, double *train);

/* Expected test and train loss of the OU process at time t (docs/theory.md §7):
 * mean sum_k (1 - e^{-lambda_k t}) beta_k w_k, covariance
 * s^2 [sum_k (1 - e^{-2 lambda_k t})/(2 lambda_k) w_k w_k^T + t (I - P_row)];
 * E loss at a point = (phi^T mean - y)^2 + phi^T Cov phi, averaged over the set.
 * discrete = 1: the same for the Euler-Maruyama recursion (= unclipped DP-GD) after
 * k = round(t/eta) steps of size eta: mean factor 1 - (1 - eta lambda_k)^k, variance
 * s^2 eta sum_{j<k} (1 - eta lambda_k)^{2j}. s = 0 gives gradient flow (descent).
 * Needs HDP_RF_TEST_MODES; test or train may be NULL. */
void hdp_rf_expected_loss(const hdp_rf_problem *pb, double eta, double s, double t, int discrete,
                          double *test, double *train);

/* The test loss's two terms of Bombari-Mondelli (its Eqs. 20 and 21, docs/theory.md §7.4) at time
 * t: the noise term E_x E_B[(phi^T (Theta(t) - E Theta(t)))^2] = mean over the test set of
 * phi^T Cov phi, and the early-stopping term E_x[(phi^T (theta_hat(t) - theta*))^2] with
 * theta_hat(t) the mean (gradient flow) and theta* = sum_k beta_k w_k the min-norm
 * interpolator (least squares when p < n): mean of (sum_k G_jk (f_k - 1) beta_k)^2, f_k the
 * mean factor. discrete as in hdp_rf_expected_loss (1: the recursion DP-GD follows while
 * nothing is clipped). Needs HDP_RF_TEST_MODES (else NaN). */
void hdp_rf_loss_terms(const hdp_rf_problem *pb, double eta, double s, double t, int discrete,
                       double *noise, double *early);

/* ---- `hdpsgd rf`: DP-GD in R^p, coupled to the OU process ---- */

typedef struct {
    long runs;               /* >= 1 */
    int threads;             /* OpenMP threads over runs (0 = one per core) */
    long records;            /* recorded steps (>= 1), plus step 0 */
    hdp_progress_fn progress; /* after every run ("rf", done runs of runs, NaN; one thread at
                                 a time; a nonzero return stops the runs: HDP_ECANCELLED) */
    void *progress_user;
} hdp_rf_sim_options;

typedef struct {
    long points;             /* recorded steps */
    long *step;              /* [points] k, from 0 to T */
    double *tau;             /* [points] eta k */
    double *dpgd_test, *dpgd_test_se, *dpgd_train, *dpgd_train_se;
    double *ou_test, *ou_train;       /* exact OU expected losses (closed form) */
    double *em_expected_test;         /* expected test loss of the EM recursion (closed form) */
    double *em_test, *em_test_se;     /* Euler-Maruyama OU, same increments as DP-GD */
    double *ex_test, *ex_test_se;     /* exact OU step, same increments projected on the modes */
    double *clipped;                  /* mean over runs of the fraction of samples whose
                                         gradient at theta_k exceeds C_clip */
    double *gf_test;                  /* gradient flow (the OU mean, sigma = 0) at tau */
    double minnorm_test;
    double strong_error_mean, strong_error_max; /* sup_k ||theta_DPGD - theta_OU|| (exact step) */
    double strong_error_em_max;       /* sup_k ||theta_DPGD - theta_EM|| (rounding if unclipped) */
    double theta_norm_max;            /* sup_k ||row-space part of theta_DPGD|| over the runs */
    double max_clipped_fraction;      /* max over runs and steps 0..T */
    /* the test loss's terms at the last step (docs/theory.md §7.4): the Monte Carlo over the
     * runs (noise: mean over the test set of the variance of phi^T theta_T over the runs;
     * early stopping: of (mean phi^T theta_T - phi^T theta*)^2 less its bias var/runs), with
     * jackknife standard errors (NaN for one run); the closed forms of the recursion DP-GD
     * follows without clipping (_exact) and of the OU process (_ou, the paper's) */
    double noise_term, noise_term_stderr, noise_term_exact, noise_term_ou;
    double early_stopping_term, early_stopping_term_stderr, early_stopping_term_exact,
        early_stopping_term_ou;
    long runs;
    int threads;
    double seconds;
} hdp_rf_sim_result;

/* Run opt->runs runs of DP-GD (the literal algorithm in R^p: two dgemv per step), each
 * coupled to the Euler-Maruyama OU path and to the exact OU step driven by the same
 * Gaussian increments (xi projected on the modes; the same Brownian motion in the null
 * directions), and the closed forms at the recorded steps. pb needs HDP_RF_TEST_MODES.
 * res must be freed with hdp_rf_sim_result_free (also on failure). */
hdp_status hdp_rf_simulate(const hdp_rf_problem *pb, const hdp_rf_dpgd *q,
                           const hdp_rf_sim_options *opt, hdp_rf_sim_result *res,
                           hdp_error *err);
void hdp_rf_sim_result_free(hdp_rf_sim_result *res);

/* hdpsgd rf's summary (its --json, hdpsgd/fields.h: rf_final, then rf_terms of the result,
 * then rf_run): the losses at the last recorded step, the privacy, sizes and work of the run.
 * Filled by the command from hdp_rf_problem, hdp_rf_dpgd and hdp_rf_sim_result. */
typedef struct {
    const char *command; /* "rf" */
    double dpgd_test, dpgd_test_stderr, dpgd_train, ou_exact_test, ou_exact_train, ou_em_test,
        ou_em_test_stderr, ou_em_expected_test, ou_exact_step_test, ou_exact_step_test_stderr,
        minnorm_test, minnorm_train, gradient_flow_test, zero_test, zero_train,
        max_clipped_fraction;
    double strong_error_mean, strong_error_max, strong_error_em_max, sigma;
    const char *sigma_route;
    double epsilon, epsilon_cks, rho_z, delta;
    long T;
    double eta, tau, C_clip, s, lambda_max;
    long p, n, d, test_size, modes;
    const char *inputs, *labels, *test_set;
    long runs, threads;
    unsigned long long seed;
    double build_seconds, seconds;
} hdp_rf_summary;

/* ---- experiments: many DP-GD configurations, final iterate only ---- */

typedef struct {
    /* inputs */
    double eta;
    long T;
    double C_clip;
    double s;                  /* OU diffusion 2 C_clip sigma / n of the configuration */
    unsigned long long stream; /* >= 1: the data stream jumped this many times */
    int p_space_noise;         /* 1: draw xi in R^p and project it (as hdp_rf_simulate does;
                                  for tests: the same stream gives the same path) */
    /* outputs */
    double test_loss, train_loss;
    double val_loss;           /* on the validation set (NaN without HDP_RF_VALIDATION) */
    double clipped_mean;       /* fraction of clipped gradients over the T steps */
    double clipped_max;        /* max over the steps */
} hdp_rf_config;

/* DP-GD of every configuration, in the coordinates of the modes: exactly Algorithm 1
 * (the clipped gradient always lies in the row space of Phi, and the noise splits into
 * independent N(0, I_r) mode components and a Brownian motion orthogonal to the rows),
 * at O(n r) per step instead of O(n p). The final iterate's null-space part is drawn
 * at the end from the same stream. Configurations run in parallel; results do not
 * depend on threads. progress (NULL: none) after every configuration: "rf", done of ncfg,
 * NaN; a nonzero return stops the runs (HDP_ECANCELLED). */
hdp_status hdp_rf_dpgd_final(const hdp_rf_problem *pb, hdp_rf_config *cfg, long ncfg,
                             int threads, hdp_progress_fn progress, void *progress_user,
                             hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
