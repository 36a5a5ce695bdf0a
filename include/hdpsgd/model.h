/*
 * hdpsgd/model.h — the model description shared by the theory side (ODE)
 * and the simulation side (Monte Carlo): schema v1 of the INI model files.
 *
 * A model is built in three steps:
 *   hdp_model_init(&m);                       built-in defaults (models/default.ini)
 *   hdp_model_load_file(&m, "x.ini", &err);   keys from a file (inih)
 *   hdp_model_set(&m, "clip.c=0.3", &err);    command-line overrides
 *   hdp_model_finalize(&m, &err);             range checks, n from gamma, files read
 * Every key remembers where it was set (file and line, or --set), so that
 * range errors name the place.
 *
 * Sections. The core's sections ([data], [clip], [privacy], [schedule], [sgd], [ode],
 * [sim], [sde], [validate]) are the named fields of hdp_model below, each key declared once
 * by its line in its section's list (HDP_DATA_KEYS ...). The model families' sections
 * ([rf] and [dpgd], [nc], [kl], [si]) belong to their families: each family declares its
 * keys, enums and checks (src/families/<name>_keys.c, registered in families.c) and its
 * values are read through its accessor, hdp_rf_keys_of, hdp_dpgd_keys_of (hdpsgd/rf.h),
 * hdp_nc_keys_of (nc.h), hdp_kl_keys_of (kl.h), hdp_si_keys_of (si.h). Parsing, defaults,
 * messages, hdp_model_write_ini/_meta and the documentation treat every section alike.
 *
 * Conventions (docs/theory.md §0):
 *   - gamma = d/n; n = round(d/gamma) when gamma is given;
 *   - rho is the privacy parameter of docs/theory.md §1, §6 (the ratio of sensitivity to noise
 *     of the accountant): the output is (rho^2/2)-zCDP; rho = inf means no private noise. The budget is given as exactly one
 *     of privacy.rho, privacy.rho_zcdp (= rho^2/2) or privacy.epsilon with privacy.delta
 *     (calibrated as hdp_zcdp_from_epsilon does: Canonne-Kamath-Steinke); finalize fills
 *     all of them;
 *   - clip.c is the clipping constant: gradients are clipped at c*sqrt(d);
 *   - clip.feature_norm = B clips every row x to norm B before its gradient (0: off; auto:
 *     the largest B with eta_max B^2 <= 2, the privacy accountant's precondition, §6.1);
 *   - [sgd] sampling = one-pass (the default) uses each of the n rows once, in batches of
 *     sgd.batch = B <= n, one epoch, its private noise tied to the schedule and rho
 *     (noise_multiplier 0); shuffle and poisson take epochs and noise_multiplier;
 *   - the spectrum is normalised to mean 1 (Tr Sigma = d).
 */
#ifndef HDPSGD_MODEL_H
#define HDPSGD_MODEL_H

#include <stdio.h>

#include "hdpsgd/accountant.h"
#include "hdpsgd/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HDP_SPECTRUM_ISOTROPIC = 0,
    HDP_SPECTRUM_POWERLAW,
    HDP_SPECTRUM_TWOLEVEL,
    HDP_SPECTRUM_FILE
} hdp_spectrum_kind;

typedef enum {
    HDP_NOISE_GAUSSIAN = 0,
    HDP_NOISE_STUDENT,
    HDP_NOISE_RADEMACHER,
    HDP_NOISE_NONE,
    HDP_NOISE_LAPLACE,   /* variance data.tau2 */
    HDP_NOISE_UNIFORM,   /* on [-sqrt(3 tau2), sqrt(3 tau2)] */
    HDP_NOISE_MIXTURE,   /* two Gaussians, mean 0; tau2 derived by finalize */
    HDP_NOISE_EMPIRICAL  /* the values of data.noise_file (centred); tau2 derived by finalize */
} hdp_noise_kind;

typedef enum {
    HDP_SCHED_CONSTANT = 0,
    HDP_SCHED_OUTPUT,
    HDP_SCHED_LINEAR_NOISE,
    HDP_SCHED_OPTIMAL,
    HDP_SCHED_TABLE
} hdp_sched_kind;

/* [data] source, target, scale; [sim] rows (docs/theory.md §9) */
typedef enum { HDP_SOURCE_SYNTHETIC = 0, HDP_SOURCE_FILE } hdp_data_source;
typedef enum {
    HDP_TARGET_AUTO = 0,      /* uniform (synthetic), least-squares (file with labels), planted */
    HDP_TARGET_UNIFORM,       /* theta* uniform on the sphere of target_radius */
    HDP_TARGET_POWERLAW,      /* energy in the j-th eigendirection ~ j^(-target_exponent) */
    HDP_TARGET_FILE,          /* one energy per eigenvalue (data.target_file) */
    HDP_TARGET_LEAST_SQUARES, /* file: ridge least squares on the rows, noise = residuals */
    HDP_TARGET_PLANTED        /* file: theta* uniform, labels x^T theta* + z synthesised */
} hdp_target_kind;
typedef enum { HDP_SCALE_TRACE = 0, HDP_SCALE_NONE } hdp_scale_kind;
typedef enum { HDP_ROWS_WITH_REPLACEMENT = 0, HDP_ROWS_WITHOUT_REPLACEMENT } hdp_rows_kind;

/* The longest value of a list key (data.labels_positive), with the NUL. */
#define HDP_LIST_MAX 256

/* A user's data set read and prepared by finalize (hdpsgd/dataset.h), shared by the copies
 * of a model (hdp_model_copy) and released with the last of them. */
struct hdp_data;

/* [ode] solver: auto = DOP853 when the stiffness estimate allows it, CVODE otherwise
 * (and when DOP853 fails); the names in this order */
typedef enum { HDP_ODE_AUTO = 0, HDP_ODE_CVODE, HDP_ODE_DOP853 } hdp_ode_solver_kind;
/* [ode] model: the bins' risk ODE (docs/theory.md §3) or the rows' mean-field recursion (§9.5) */
typedef enum { HDP_ODE_MODEL_BINS = 0, HDP_ODE_MODEL_ROWS } hdp_ode_model_kind;

/* [sgd] sampling: how the rows form batches (the names in this order) */
typedef enum {
    HDP_SAMPLING_ONE_PASS = 0, /* each row once, in consecutive batches of B (the default) */
    HDP_SAMPLING_SHUFFLE,      /* each epoch a random permutation cut into batches of B */
    HDP_SAMPLING_POISSON       /* each step every row with probability q = B/N */
} hdp_sampling_kind;

/* The longest file name a model takes (with the NUL): a longer one is refused, never cut. */
#define HDP_PATH_MAX 1024
/* The longest line of a model file (inih's 200-byte line buffer): a longer line is refused
 * (a file name near HDP_PATH_MAX reads from --set, but cannot be written into a model file). */
#define HDP_MODEL_MAX_LINE 198

/* [ode] bins = auto (see hdpsgd/ode.h) */
#define HDP_BINS_AUTO (-1L)

/* a number key's value auto (clip.feature_norm = auto) */
#define HDP_AUTO_DOUBLE (-1.0)

/* Where a key's value came from: file 0 = the default, 1 = "--set" (line 0), k >= 2 the
 * file named hdp_model.origin_files[k - 2], at line. */
typedef struct {
    int file;
    int line;
} hdp_origin;

/* The number of files a model's keys can come from (a model file; --set is not one). */
#define HDP_MODEL_MAX_FILES 2

/* Upper bound on the number of keys of the schema, all sections (see model.c). */
#define HDP_MODEL_MAX_KEYS 160

/* Bytes of the model families' sections in hdp_model.family (see core/schema.h). */
#define HDP_MODEL_FAMILY_BYTES 1024

/* A list key's value (data.labels_positive): "a,b,c", "" = none. */
typedef char hdp_list_text[HDP_LIST_MAX];

/* The core's keys, each declared once, one list per section in the order of the model files:
 * X(key, field, C type, schema type, default, flags, lo, hi, enum names, help). The lists
 * make the named fields of hdp_model below and the sections' schema rows (src/core/model.c:
 * parsing, defaults, the key's one range check, `hdpsgd keys`, the man page, write_ini);
 * the flags (range bounds, HDP_K_RELOAD: a change makes finalize read the files again), the
 * bounds and the enum names are used only where the rows are made (core/schema.h). The help
 * is the field's documentation. Finalize derives some fields from others: n and gamma (the
 * later given wins), d (from a spectrum file or a data set), tau2 (none, mixture,
 * empirical), every form of the privacy budget from the one given, bins (0 when above d). */
#define HDP_DATA_KEYS(X) \
    X(d, d, long, LONG, "200", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED | HDP_K_RELOAD, 1, 1e8, NULL, \
      "dimension of data and parameter (integer in [1, 1e8])") \
    X(gamma, gamma, double, DOUBLE, "0.1", HDP_R_LO_OPEN, 0, 0, NULL, \
      "aspect ratio d/n (> 0); n = round(d/gamma); the later of gamma and n wins") \
    X(n, n, long, LONG, "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e12, NULL, \
      "number of samples = steps (integer in [1, 1e12]; 0 = from gamma)") \
    X(train_size, train_size, long, LONG, "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e7, NULL, \
      "sgd.sampling = shuffle | poisson: N synthetic training rows (Gaussian, the model's " \
      "spectrum, target and label noise) drawn once per Monte Carlo run (integer in [0, 1e7], " \
      "train_size x d <= 1e8; 0 = none)") \
    X(spectrum, spectrum, hdp_spectrum_kind, ENUM, "powerlaw", HDP_K_RELOAD, 0, 0, spectrum_names, \
      "covariance spectrum: isotropic | powerlaw | twolevel | file") \
    X(spectrum_alpha, spectrum_alpha, double, DOUBLE, "0.5", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "power-law exponent alpha >= 0: lambda_j ~ j^(-alpha)") \
    X(twolevel_fraction, twolevel_fraction, double, DOUBLE, "0.1", \
      HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL, \
      "two-level: fraction f in (0,1) of eigenvalues that are ratio times the others") \
    X(twolevel_ratio, twolevel_ratio, double, DOUBLE, "10", HDP_R_LO_OPEN, 0, 0, NULL, \
      "two-level: ratio r > 0 of the large to the small eigenvalue") \
    X(spectrum_file, spectrum_file, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "file spectrum: one eigenvalue >= 0 per line (# comments); relative to the model file") \
    X(target_radius, target_radius, double, DOUBLE, "1", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "norm of theta* (>= 0); theta* is uniform on the sphere of this radius") \
    X(noise, noise, hdp_noise_kind, ENUM, "gaussian", 0, 0, 0, noise_names, \
      "label-noise law: gaussian | student | rademacher | none | laplace | uniform | mixture | " \
      "empirical (docs/theory.md §2.3)") \
    X(tau2, tau2, double, DOUBLE, "0.25", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "label-noise variance tau^2 >= 0 of gaussian, student, rademacher, laplace, uniform; " \
      "ignored for none (0), and for mixture and empirical, whose variance is derived from " \
      "their parameters (finalize replaces the value, which outputs then report)") \
    X(noise_df, noise_df, double, DOUBLE, "5", HDP_R_LO_OPEN, 2, 0, NULL, \
      "Student-t degrees of freedom nu > 2") \
    X(source, data_source, hdp_data_source, ENUM, "synthetic", HDP_K_RELOAD, 0, 0, source_names, \
      "synthetic (Gaussian rows of the spectrum) | file (the rows of data.features: the " \
      "spectrum, d and the target come from them, docs/theory.md §9)") \
    X(features, features, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "source = file: N x d rows as .npy (float32/64, integers), .csv (optional header) or IDX " \
      "(images flattened), gzipped or not; relative to the model file") \
    X(labels, labels, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "source = file: N labels in the same formats (none: target = planted)") \
    X(labels_positive, labels_positive, hdp_list_text, LIST, "", HDP_K_RELOAD, 0, 0, NULL, \
      "classes mapped to +1 (the rest to -1), e.g. 0 or 0,2,4; empty: labels used as numbers") \
    X(test_features, test_features, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "source = file: held-out rows (prepared as the training rows) for the test MSE") \
    X(test_labels, test_labels, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "source = file: the held-out labels (with target = least-squares)") \
    X(center, center, int, ENUM, "true", HDP_K_RELOAD, 0, 0, bool_names, \
      "source = file: subtract the mean row (and the labels' mean): true | false") \
    X(scale, scale, hdp_scale_kind, ENUM, "trace", HDP_K_RELOAD, 0, 0, scale_names, \
      "source = file: trace (rows rescaled to mean eigenvalue 1, the toolkit's convention) | " \
      "none (only for `hdpsgd dataset`: the ODE and the Monte Carlo need trace)") \
    X(target, target, hdp_target_kind, ENUM, "auto", HDP_K_RELOAD, 0, 0, target_names, \
      "theta*: synthetic: uniform | powerlaw | file; source = file: least-squares (ridge fit, " \
      "label noise = the residuals) | planted (uniform theta*, labels x^T theta* + z of " \
      "data.noise); auto = uniform, or least-squares with labels, planted without") \
    X(ridge, ridge, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_K_RELOAD, 0, 0, NULL, \
      "least-squares target: ridge >= 0 (0: minimum-norm least squares)") \
    X(target_exponent, target_exponent, double, DOUBLE, "1", \
      HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, -100, 100, NULL, \
      "powerlaw target: the energy (u_j^T theta*)^2 of the j-th eigendirection (eigenvalues " \
      "decreasing) ~ j^(-target_exponent), in [-100, 100]; norm target_radius") \
    X(target_file, target_file, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "target = file: one energy (u_j^T theta*)^2 >= 0 per line, paired with the eigenvalues " \
      "in their given order (the spectrum file's lines); rescaled to norm target_radius") \
    X(mixture_weight, mixture_weight, double, DOUBLE, "0.5", \
      HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL, \
      "mixture: z ~ w N(m1, v1) + (1-w) N(m2, v2); weight w in (0,1) of the first component") \
    X(mixture_mean, mixture_mean, double, DOUBLE, "0.4", 0, 0, 0, NULL, \
      "mixture: mean m1 of the first component (finite); the second's is m2 = -w m1/(1-w), so " \
      "that z has mean 0; tau^2 = w (v1 + m1^2) + (1-w) (v2 + m2^2)") \
    X(mixture_var1, mixture_var1, double, DOUBLE, "0.09", HDP_R_LO_OPEN, 0, 0, NULL, \
      "mixture: variance v1 > 0 of the first component") \
    X(mixture_var2, mixture_var2, double, DOUBLE, "0.09", HDP_R_LO_OPEN, 0, 0, NULL, \
      "mixture: variance v2 > 0 of the second component") \
    X(noise_file, noise_file, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "empirical: one label-noise value per line (# comments; at least 2, finite, mean within " \
      "5 standard errors of 0; the values are centred); relative to the model file; tau^2 is " \
      "their variance")

#define HDP_CLIP_KEYS(X) \
    X(c, c, double, DOUBLE, "0.3", HDP_R_LO_OPEN | HDP_R_INF | HDP_R_HI_CLOSED, 0, 1e50, NULL, \
      "clipping constant c in (0, 1e50] or inf: per-sample gradients are clipped at c*sqrt(d)") \
    X(feature_norm, feature_norm, double, DOUBLE, "0", \
      HDP_R_LO_CLOSED | HDP_R_HI_CLOSED | HDP_R_AUTO, 0, 1e50, NULL, \
      "B in [0, 1e50] or auto: each row x is clipped to norm B, x <- x min(1, B/||x||), before " \
      "its gradient; 0 = off; auto = the largest B with eta_max B^2 <= 2, which makes every " \
      "step non-expansive as the privacy accountant needs (docs/theory.md §6.1); the risk ODE " \
      "does not model it (hdpsgd privacy reports the fraction of rows it changes)")

#define HDP_PRIVACY_KEYS(X) \
    X(rho, rho, double, DOUBLE, "0.5", HDP_R_LO_CLOSED | HDP_R_INF, 1e-50, 0, NULL, \
      "privacy parameter rho in [1e-50, inf) or inf: the output is (rho^2/2)-zCDP (smaller rho " \
      "makes noise variances 1/rho^2 overflow)") \
    X(rho_zcdp, rho_zcdp, double, DOUBLE, "0.125", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL, \
      "the budget as zCDP, rho_zcdp = rho^2/2 > 0 or inf (instead of rho)") \
    X(epsilon, epsilon, double, DOUBLE, "inf", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL, \
      "the budget as (epsilon, delta)-DP at delta (default 1e-5) instead of rho: rho_zcdp is " \
      "the largest whose Canonne-Kamath-Steinke epsilon at delta is epsilon (> 0 or inf)") \
    X(delta, delta, double, DOUBLE, "1e-5", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL, \
      "delta in (0, 1) of (epsilon, delta)-DP: with epsilon, part of the budget; else the " \
      "delta at which summaries report epsilon")

#define HDP_SCHEDULE_KEYS(X) \
    X(kind, sched, hdp_sched_kind, ENUM, "inverse-time", HDP_K_RELOAD, 0, 0, hdp_sched_kind_names, \
      "learning-rate schedule: constant | output | linear-noise | inverse-time | table " \
      "(optimal: read as inverse-time, its name before)") \
    X(eta0, eta0, double, DOUBLE, "1", HDP_R_LO_OPEN | HDP_K_RELOAD, 0, 0, NULL, \
      "constant/output/linear-noise: initial learning rate eta0 > 0") \
    X(c1, c1, double, DOUBLE, "1", HDP_R_LO_OPEN | HDP_K_RELOAD, 0, 0, NULL, \
      "inverse-time: eta(t) = c1/(t + a), a = gamma*max(c2, c3/rho); c1 > 0") \
    X(c2, c2, double, DOUBLE, "1", HDP_R_LO_CLOSED | HDP_K_RELOAD, 0, 0, NULL, \
      "inverse-time: c2 >= 0") \
    X(c3, c3, double, DOUBLE, "1", HDP_R_LO_CLOSED | HDP_K_RELOAD, 0, 0, NULL, \
      "inverse-time: c3 >= 0") \
    X(file, sched_file, const char *, PATH, "", HDP_K_RELOAD, 0, 0, NULL, \
      "table: two columns t, eta; t from 0 to 1 increasing, knots at least 1e-9 apart, eta " \
      "non-increasing")

#define HDP_SGD_KEYS(X) \
    X(batch, batch, long, LONG, "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e12, NULL, \
      "batch size B (integer in [1, 1e12]): the clipped gradients of B rows averaged per step; " \
      "poisson: the expected size, q = B/N; one-pass: B <= n") \
    X(epochs, epochs, long, LONG, "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL, \
      "passes over the training set (integer in [1, 1e6]); one-pass: 1") \
    X(sampling, sampling, hdp_sampling_kind, ENUM, "one-pass", 0, 0, 0, sampling_names, \
      "one-pass (each row once, in consecutive batches of B; the private noise tied to the " \
      "schedule and [privacy]) | shuffle (each epoch a random permutation cut into batches) | " \
      "poisson (each step every row with probability q = B/N)") \
    X(noise_multiplier, noise_multiplier, double, DOUBLE, "0", \
      HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e6, NULL, \
      "shuffle | poisson: sigma in [0, 1e6], noise N(0, sigma^2 C^2 I) added to the sum of the " \
      "batch's clipped gradients; 0 = the smallest sigma that meets the [privacy] budget by " \
      "accountant; one-pass: must be 0") \
    X(accountant, accountant, hdp_accountant_kind, ENUM, "pld", 0, 0, 0, accountant_names, \
      "pld | rdp: the accountant that calibrates noise_multiplier and reports epsilon " \
      "(hdpsgd accountant)")

#define HDP_ODE_KEYS(X) \
    X(bins, bins, long, LONG, "0", HDP_R_LO_CLOSED | HDP_R_AUTO | HDP_R_HI_CLOSED, 0, 1e7, NULL, \
      "eigenvalue bins: 0 = one per distinct eigenvalue; m = m quantile bins; auto = log bins " \
      "with Gauss nodes, refined until the final risk moves by < spectrum_tol; at most 1e7") \
    X(spectrum_tol, spectrum_tol, double, DOUBLE, "1e-5", \
      HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 0.1, NULL, \
      "bins = auto: relative tolerance on the final risk") \
    X(rtol, rtol, double, DOUBLE, "1e-8", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL, \
      "relative tolerance of the ODE solver, DOP853 or CVODE ([ode] solver), in (0, 1)") \
    X(atol, atol, double, DOUBLE, "1e-12", HDP_R_LO_OPEN, 0, 0, NULL, \
      "absolute tolerance of the ODE solver, DOP853 or CVODE, > 0") \
    X(points, points, long, LONG, "101", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL, \
      "output grid size on [0, 1] (integer in [2, 1e6])") \
    X(max_steps, max_steps, long, LONG, "100000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e9, NULL, \
      "CVODE's maximum number of internal steps between output points (DOP853: steps in all); " \
      "at most 1e9") \
    X(solver, ode_solver, hdp_ode_solver_kind, ENUM, "auto", 0, 0, 0, ode_solver_names, \
      "auto = dop853 (explicit Runge-Kutta) unless the stiffness estimate 2 lambda_max " \
      "int eta~ dt is above min(30000, 2000 + 200 bins) (2000 for Student-t noise), cvode " \
      "(BDF) then or when dop853 fails; cvode; dop853") \
    X(discrete, ode_discrete, int, ENUM, "false", 0, 0, 0, bool_names, \
      "true: add the one-step term (eta~^2/n) k_j lambda_j^2 V_c' D_j that the continuum ODE " \
      "drops (k_j = 2 for Gaussian rows, the rows' kurtosis minus 1 on a data set; " \
      "docs/theory.md §3.6); solved by CVODE, no exact gradient; false: the paper's ODE") \
    X(clip_weights, ode_clip_weights, int, ENUM, "auto", 0, 0, 0, clip_weights_names, \
      "data.source = file: the rows' clipping factors per norm group weighted by the row norm " \
      "(norm), per eigendirection by E[x_j^2 | group] / lambda_j in drift and noise " \
      "(direction), or in the noise alone (direction-noise; both solved by CVODE; " \
      "docs/theory.md §9.3); auto = direction-noise for a planted target at sgd.batch = 1 " \
      "without ode.discrete and solver = dop853, else norm (docs/theory.md §9.5)") \
    X(model, ode_model, hdp_ode_model_kind, ENUM, "bins", 0, 0, 0, ode_model_names, \
      "bins: the risk ODE on eigenvalue bins; rows (data.source = file, least-squares target, " \
      "batch 1): the mean iterate and the full d x d fluctuation covariance stepped over the " \
      "rows, O(N d^2) per step (docs/theory.md §9.5), refused above N d^2 n = 1e12")

#define HDP_SIM_KEYS(X) \
    X(runs, runs, long, LONG, "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL, \
      "Monte Carlo runs (integer in [1, 1e7])") \
    X(seed, seed, unsigned long long, SEED, "1", 0, 0, 0, NULL, \
      "base seed (unsigned 64-bit integer); run r uses the r-th jump of this stream") \
    X(divergence_factor, divergence_factor, double, DOUBLE, "1e6", HDP_R_LO_OPEN, 1, 0, NULL, \
      "a run diverged when its excess risk exceeds this multiple of max(R(0), private noise) " \
      "(> 1)") \
    X(rows, rows, hdp_rows_kind, ENUM, "with-replacement", 0, 0, 0, rows_names, \
      "data.source = file: with-replacement (each step a row drawn uniformly: the population is " \
      "the rows) | without-replacement (one pass over a random permutation, n <= N)")

#define HDP_SDE_KEYS(X) \
    X(step, sde_step, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1, NULL, \
      "Euler-Maruyama step h in [0, 1]; 0 = 1/n")

#define HDP_VALIDATE_KEYS(X) \
    X(rel_tol, rel_tol, double, DOUBLE, "0.05", HDP_R_LO_OPEN, 0, 0, NULL, \
      "pass when the relative deviation from the ODE is <= rel_tol at every grid point ...") \
    X(z_tol, z_tol, double, DOUBLE, "4", HDP_R_LO_OPEN, 0, 0, NULL, \
      "... or the deviation is within z_tol standard errors")

#define HDP_MODEL_FIELD_(key, field, ctype, ...) ctype field;

/* The texts of a model (the file-name keys spectrum_file, features, labels, test_features,
 * test_labels, target_file, noise_file, sched_file, and source, origin_files) are strings
 * the model owns, each at most HDP_PATH_MAX - 1 bytes, never NULL in a model made by
 * hdp_model_init, _copy or _with ("" when unset: a shared empty text, not allocated).
 * Read them as strings; replace one only through hdp_model_set_text (or hdp_model_set*),
 * which frees the old one; hdp_model_free frees them, hdp_model_copy copies them. */
typedef struct {
    HDP_DATA_KEYS(HDP_MODEL_FIELD_)
    HDP_CLIP_KEYS(HDP_MODEL_FIELD_)
    HDP_PRIVACY_KEYS(HDP_MODEL_FIELD_)
    HDP_SCHEDULE_KEYS(HDP_MODEL_FIELD_)
    HDP_SGD_KEYS(HDP_MODEL_FIELD_)
    HDP_ODE_KEYS(HDP_MODEL_FIELD_)
    HDP_SIM_KEYS(HDP_MODEL_FIELD_)
    HDP_SDE_KEYS(HDP_MODEL_FIELD_)
    HDP_VALIDATE_KEYS(HDP_MODEL_FIELD_)

    /* The values of the model families' sections ([rf], [dpgd], [nc], [kl], [si]): each
     * registered section owns a slice of this area, read through the family's accessor
     * (hdp_kl_keys_of in hdpsgd/kl.h, ...). Inside the struct, so that a model copied by
     * assignment carries them. */
    union {
        unsigned char bytes[HDP_MODEL_FAMILY_BYTES];
        long double align_ld;
        long long align_ll;
        void *align_p;
    } family;

    /* bookkeeping */
    int finalized;             /* 1 after hdp_model_finalize; cleared by every change through
                                  hdp_model_set*, hdp_model_load_file (see hdp_model_check) */
    const char *source;        /* model file name, or "(built-in default)" */
    int n_given_last;          /* 1 when data.n was set after data.gamma */
    hdp_origin origin[HDP_MODEL_MAX_KEYS]; /* per schema key, all sections in order;
                                              file 0: default */
    const char *origin_files[HDP_MODEL_MAX_FILES]; /* the files origin names ("": none) */
    /* table schedule knots (read by finalize) */
    int table_len;
    double *table_t, *table_eta;
    /* file spectrum (read by finalize) */
    long file_len;
    double *file_lambda;
    /* target = file, synthetic (read by finalize): one energy per eigenvalue, in the order of
     * the eigenvalues as given (the spectrum file's lines, or j = 1..d decreasing) */
    long energy_len;
    double *file_energy;
    /* source = file: the data set read and prepared by finalize (shared by copies) */
    struct hdp_data *data;
    /* arrays given in memory in place of the files (hdp_model_set_data_arrays; shared) */
    struct hdp_data_arrays *arrays;
    /* the clipping bias of data at c in use (data_bias.c; NULL none): not shared by copies */
    void *data_bias_pin;
    /* empirical label noise (read by finalize from noise_file, or set by
     * hdp_model_set_noise_sample): the centred values */
    long noise_len;
    double *noise_values;
} hdp_model;

/* Built-in defaults: the default model (identical to models/default.ini). */
void hdp_model_init(hdp_model *m);

/* Release the memory of the tables read by finalize and of the model's texts (which read ""
 * after it); m may be half-built or zeroed. */
void hdp_model_free(hdp_model *m);

/* Read keys from an INI file. Unknown sections/keys, malformed numbers,
 * duplicate keys: HDP_EINPUT naming file:line and key. */
hdp_status hdp_model_load_file(hdp_model *m, const char *path, hdp_error *err);

/* Apply one override "section.key=value" (origin "--set"). */
hdp_status hdp_model_set(hdp_model *m, const char *assignment, hdp_error *err);

/* Set one key from strings (used by both of the above). where/line name the
 * origin for later messages. */
hdp_status hdp_model_set_key(hdp_model *m, const char *section, const char *key,
                             const char *value, const char *where, int line,
                             hdp_error *err);

/* Check ranges and combinations, derive n and gamma, read the spectrum and
 * schedule files. Must be called once after the last load/set. */
hdp_status hdp_model_finalize(hdp_model *m, hdp_error *err);

/* Empirical label noise from memory instead of data.noise_file (e.g. the residuals of a
 * least-squares fit): sets data.noise = empirical and keeps a centred copy of the n values
 * (checked as the file's are: hdp_noise_sample_check in hdpsgd/clip.h); data.tau2 becomes
 * their variance at finalize. HDP_EINPUT naming `what` when the values are refused. */
hdp_status hdp_model_set_noise_sample(hdp_model *m, const double *z, long n, const char *what,
                                      hdp_error *err);

/* Replace one of a model's texts (&m->sched_file, ...: see hdp_model above) by a copy of
 * value ("" and NULL: the shared empty text), freeing the old one; no check of the value and
 * no other change (hdp_model_set_key is the checked way to set a key). HDP_ENOMEM with a
 * message leaves *field as it was. */
hdp_status hdp_model_set_text(const char **field, const char *value, hdp_error *err);

/* A deep copy of src (its spectrum file and schedule table too) into *dst, which is
 * overwritten without being freed (pass a model that holds no tables or texts: new,
 * initialised or freed). Free the copy with hdp_model_free. HDP_ENOMEM leaves *dst empty (free is safe).
 * The only way to copy a model: a struct assignment (`hdp_model b = a;`) shares a's tables and
 * texts, and a's data-set pin (data_bias_pin, taken by the first solve that needs the clipping
 * bias of a least-squares target) would then be released twice or leaked; models are not meant
 * to be copied by value. */
hdp_status hdp_model_copy(hdp_model *dst, const hdp_model *src, hdp_error *err);

/* *out = m with one key changed and finalized again: key is "section.key", value its text as
 * in a model file (e.g. hdp_model_with(m, "sim.runs", "1000", &out, &err)). m must be
 * finalized and is not changed; the key is checked by the schema's one range check and the
 * model by finalize, and the new value counts as an override (origin "--set"): a form of the
 * privacy budget replaces the form m had. *out is overwritten as by hdp_model_copy; on
 * failure it is left empty (hdp_model_free is safe). The way to change a finalized model:
 * never write its fields. */
hdp_status hdp_model_with(const hdp_model *m, const char *key, const char *value, hdp_model *out,
                          hdp_error *err);

/* What every solver and simulator checks at its entry (HDP_EINPUT with the reason): m is
 * not NULL, was finalized after its last change (hdp_model_set, _set_key, _load_file), every
 * number key of every section holds a value in its schema range (the one range of the key,
 * `hdpsgd keys`), n >= 1 and gamma = d/n, the spectrum file and schedule table loaded when
 * used: a field written directly after finalize is caught here, not by a crash (change a
 * finalized model with hdp_model_with instead). */
hdp_status hdp_model_check(const hdp_model *m, hdp_error *err);

/* HDP_EINPUT naming [sgd] sampling (and epochs) when m is not one pass (sampling = one-pass):
 * what (e.g. "the risk ODE") covers one pass only. */
hdp_status hdp_model_require_one_pass(const hdp_model *m, const char *what, hdp_error *err);

/* Write the model as CSV metadata: a line '# ; model: FILE', then the lines of
 * hdp_model_write_ini each after '# ' ('# [section]', '# key = value'), and after the
 * [privacy] keys a comment '# ; the same budget: rho = ..., rho_zcdp = ..., epsilon = ... at
 * delta = ...'. Removing the leading '# ' of the header's lines gives a model file that
 * hdp_model_load_file reads back to the same model. Every section; _sections: the
 * core's sections and the families' sections named in families (NULL-terminated; NULL:
 * every section). */
void hdp_model_write_meta(const hdp_model *m, FILE *out);
void hdp_model_write_meta_sections(const hdp_model *m, FILE *out, const char *const *families);

/* Write the model as an INI file that hdp_model_load_file accepts, with the same values
 * (file names written absolute; inih reads lines of at most 199 characters and ends a
 * value at " ;", so a file name that long or with " ;" in it does not come back). */
void hdp_model_write_ini(const hdp_model *m, FILE *out);
/* The same, with the core's sections and the families' sections named in families
 * (NULL-terminated list of section names; NULL: every section). Of the forms of the privacy
 * budget only the one given is written (rho when none was), with delta when given. */
void hdp_model_write_ini_sections(const hdp_model *m, FILE *out, const char *const *families);

/* The value of section.key in m as a model file writes it; 0 when there is no such key. */
int hdp_model_value_text(const hdp_model *m, const char *section, const char *key, char *buf,
                         size_t size);

/* Names of the core's enums as they appear in model files (the families' are in their
 * headers: hdp_kl_init_name, ...). */
const char *hdp_spectrum_name(hdp_spectrum_kind k);
const char *hdp_noise_name(hdp_noise_kind k);
const char *hdp_sampling_name(hdp_sampling_kind k);
const char *hdp_sched_name(hdp_sched_kind k);

/* 1 when section.key was set by a file or --set (not left at its default). */
int hdp_model_key_given(const hdp_model *m, const char *section, const char *key);

/* Report a bad value or combination of section.key the way finalize does:
 * "FILE:LINE: [section] key: <message>" (or "MODEL (default value)"); HDP_EINPUT. */
hdp_status hdp_model_fail_key(const hdp_model *m, const char *section, const char *key,
                              hdp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Iterate over the schema, every section (the core's, then the families'), for
 * documentation and completion: returns 0 past the end. help may be NULL. */
int hdp_model_schema_entry(int i, const char **section, const char **key,
                           const char **default_text, const char **help);

#ifdef __cplusplus
}
#endif
#endif
