/*
 * model.c — schema v1 of the model files: one table of keys drives parsing
 * (inih), defaults, range checks, metadata output, documentation and
 * "did you mean" suggestions. See hdpsgd/model.h.
 */
#include "hdpsgd/model.h"
#include "core/check.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum { T_LONG, T_DOUBLE, T_ENUM, T_PATH, T_SEED } key_type;

/* range flags */
enum {
    R_LO_OPEN = 1,   /* value > lo */
    R_LO_CLOSED = 2, /* value >= lo */
    R_HI_OPEN = 4,   /* value < hi */
    R_HI_CLOSED = 8, /* value <= hi */
    R_INF = 16,      /* "inf" accepted */
    R_AUTO = 32      /* T_LONG: "auto" accepted, stored as -1 */
};

typedef struct {
    const char *section, *key;
    key_type type;
    size_t offset;
    const char *def;          /* default, as text */
    int flags;
    double lo, hi;
    const char *const *names; /* T_ENUM: NULL-terminated accepted names */
    const char *help;
} key_spec;

static const char *const spectrum_names[] = {"isotropic", "powerlaw", "twolevel", "file", NULL};
static const char *const noise_names[] = {"gaussian", "student", "rademacher", "none", NULL};
static const char *const ode_solver_names[] = {"auto", "cvode", "dop853", NULL};
static const char *const sched_names[] = {"constant", "output", "linear-noise", "optimal", "table", NULL};
static const char *const rf_activation_names[] = {"tanh", "relu", "linear", NULL};
static const char *const rf_target_names[] = {"sign", "linear", NULL};
static const char *const nc_loss_names[] = {"ce", "logistic", "squared", NULL};
static const char *const nc_init_names[] = {"zero", "gaussian", NULL};
static const char *const nc_perturbation_names[] = {"none", "test-offset", "adversarial",
                                                    "stochastic", "train-offset", "both",
                                                    "per-sample", NULL};
static const char *const nc_remedy_names[] = {"none", "center", "pca", NULL};
static const char *const kl_init_names[] = {"lecun", "he", "ntk", "xavier", NULL};
static const char *const kl_loss_names[] = {"squared", "logistic", NULL};
static const char *const si_stage2_names[] = {"gd", "ou", NULL};

#define OFF(f) offsetof(hdp_model, f)

/* The schema. Defaults here are the built-in default model: keep
 * models/default.ini identical (a test checks it). */
static const key_spec schema[] = {
    {"data", "d", T_LONG, OFF(d), "200", R_LO_CLOSED | R_HI_CLOSED, 1, 1e8, NULL,
     "dimension of data and parameter (integer in [1, 1e8])"},
    {"data", "gamma", T_DOUBLE, OFF(gamma), "0.1", R_LO_OPEN, 0, 0, NULL,
     "aspect ratio d/n (> 0); n = round(d/gamma); the later of gamma and n wins"},
    {"data", "n", T_LONG, OFF(n), "0", R_LO_CLOSED | R_HI_CLOSED, 0, 1e12, NULL,
     "number of samples = steps (integer in [1, 1e12]; 0 = from gamma)"},
    {"data", "spectrum", T_ENUM, OFF(spectrum), "powerlaw", 0, 0, 0, spectrum_names,
     "covariance spectrum: isotropic | powerlaw | twolevel | file"},
    {"data", "spectrum_alpha", T_DOUBLE, OFF(spectrum_alpha), "0.5", R_LO_CLOSED, 0, 0, NULL,
     "power-law exponent alpha >= 0: lambda_j ~ j^(-alpha)"},
    {"data", "twolevel_fraction", T_DOUBLE, OFF(twolevel_fraction), "0.1",
     R_LO_OPEN | R_HI_OPEN, 0, 1, NULL,
     "two-level: fraction f in (0,1) of eigenvalues that are ratio times the others"},
    {"data", "twolevel_ratio", T_DOUBLE, OFF(twolevel_ratio), "10", R_LO_OPEN, 0, 0, NULL,
     "two-level: ratio r > 0 of the large to the small eigenvalue"},
    {"data", "spectrum_file", T_PATH, OFF(spectrum_file), "", 0, 0, 0, NULL,
     "file spectrum: one eigenvalue >= 0 per line (# comments); relative to the model file"},
    {"data", "target_radius", T_DOUBLE, OFF(target_radius), "1", R_LO_CLOSED, 0, 0, NULL,
     "norm of theta* (>= 0); theta* is uniform on the sphere of this radius"},
    {"data", "noise", T_ENUM, OFF(noise), "gaussian", 0, 0, 0, noise_names,
     "label-noise law: gaussian | student | rademacher | none"},
    {"data", "tau2", T_DOUBLE, OFF(tau2), "0.25", R_LO_CLOSED, 0, 0, NULL,
     "label-noise variance tau^2 >= 0 (ignored for noise = none)"},
    {"data", "noise_df", T_DOUBLE, OFF(noise_df), "5", R_LO_OPEN, 2, 0, NULL,
     "Student-t degrees of freedom nu > 2"},
    {"clip", "c", T_DOUBLE, OFF(c), "0.3", R_LO_OPEN | R_INF | R_HI_CLOSED, 0, 1e50, NULL,
     "clipping constant c in (0, 1e50] or inf: per-sample gradients are clipped at c*sqrt(d)"},
    {"privacy", "rho", T_DOUBLE, OFF(rho), "0.5", R_LO_CLOSED | R_INF, 1e-50, 0, NULL,
     "privacy parameter rho in [1e-50, inf) or inf: the output is (rho^2/2)-zCDP (smaller rho "
     "makes noise variances 1/rho^2 overflow)"},
    {"schedule", "kind", T_ENUM, OFF(sched), "optimal", 0, 0, 0, sched_names,
     "learning-rate schedule: constant | output | linear-noise | optimal | table"},
    {"schedule", "eta0", T_DOUBLE, OFF(eta0), "1", R_LO_OPEN, 0, 0, NULL,
     "constant/output/linear-noise: initial learning rate eta0 > 0"},
    {"schedule", "c1", T_DOUBLE, OFF(c1), "1", R_LO_OPEN, 0, 0, NULL,
     "optimal: eta(t) = c1/(t + a), a = gamma*max(c2, c3/rho); c1 > 0"},
    {"schedule", "c2", T_DOUBLE, OFF(c2), "1", R_LO_CLOSED, 0, 0, NULL,
     "optimal: c2 >= 0"},
    {"schedule", "c3", T_DOUBLE, OFF(c3), "1", R_LO_CLOSED, 0, 0, NULL,
     "optimal: c3 >= 0"},
    {"schedule", "file", T_PATH, OFF(sched_file), "", 0, 0, 0, NULL,
     "table: two columns t, eta; t from 0 to 1 increasing, eta non-increasing"},
    {"ode", "bins", T_LONG, OFF(bins), "0", R_LO_CLOSED | R_AUTO | R_HI_CLOSED, 0, 1e7, NULL,
     "eigenvalue bins: 0 = one per distinct eigenvalue; m = m quantile bins; auto = log bins "
     "with Gauss nodes, refined until the final risk moves by < spectrum_tol; at most 1e7"},
    {"ode", "spectrum_tol", T_DOUBLE, OFF(spectrum_tol), "1e-5", R_LO_OPEN | R_HI_OPEN, 0, 0.1,
     NULL, "bins = auto: relative tolerance on the final risk"},
    {"ode", "rtol", T_DOUBLE, OFF(rtol), "1e-8", R_LO_OPEN | R_HI_OPEN, 0, 1, NULL,
     "CVODE relative tolerance in (0, 1)"},
    {"ode", "atol", T_DOUBLE, OFF(atol), "1e-12", R_LO_OPEN, 0, 0, NULL,
     "CVODE absolute tolerance > 0"},
    {"ode", "points", T_LONG, OFF(points), "101", R_LO_CLOSED | R_HI_CLOSED, 2, 1e6, NULL,
     "output grid size on [0, 1] (integer in [2, 1e6])"},
    {"ode", "max_steps", T_LONG, OFF(max_steps), "100000", R_LO_CLOSED | R_HI_CLOSED, 1, 1e9, NULL,
     "CVODE's maximum number of internal steps between output points (DOP853: steps in all); "
     "at most 1e9"},
    {"ode", "solver", T_ENUM, OFF(ode_solver), "auto", 0, 0, 0, ode_solver_names,
     "auto = dop853 (explicit Runge-Kutta) unless the stiffness estimate 2 lambda_max "
     "int eta~ dt is above min(30000, 2000 + 200 bins) (2000 for Student-t noise), cvode "
     "(BDF) then or when dop853 fails; cvode; dop853"},
    {"sim", "runs", T_LONG, OFF(runs), "100", R_LO_CLOSED | R_HI_CLOSED, 1, 1e7, NULL,
     "Monte Carlo runs (integer in [1, 1e7])"},
    {"sim", "seed", T_SEED, OFF(seed), "1", 0, 0, 0, NULL,
     "base seed (unsigned 64-bit integer); run r uses the r-th jump of this stream"},
    {"sim", "divergence_factor", T_DOUBLE, OFF(divergence_factor), "1e6", R_LO_OPEN, 1, 0, NULL,
     "a run diverged when its excess risk exceeds this multiple of max(R(0), private noise) (> 1)"},
    {"sde", "step", T_DOUBLE, OFF(sde_step), "0", R_LO_CLOSED | R_HI_CLOSED, 0, 1, NULL,
     "Euler-Maruyama step h in [0, 1]; 0 = 1/n"},
    {"validate", "rel_tol", T_DOUBLE, OFF(rel_tol), "0.05", R_LO_OPEN, 0, 0, NULL,
     "pass when the relative deviation from the ODE is <= rel_tol at every grid point ..."},
    {"validate", "z_tol", T_DOUBLE, OFF(z_tol), "4", R_LO_OPEN, 0, 0, NULL,
     "... or the deviation is within z_tol standard errors"},
    /* [rf], [dpgd]: DP-GD on random features and its OU limit (THEORY 6, 7; seed 003 Fig. 2) */
    {"rf", "d", T_LONG, OFF(rf_d), "100", R_LO_CLOSED | R_HI_CLOSED, 1, 1e5, NULL,
     "input dimension d (integer in [1, 1e5]); x ~ N(0, I_d)"},
    {"rf", "n", T_LONG, OFF(rf_n), "2000", R_LO_CLOSED | R_HI_CLOSED, 1, 1e6, NULL,
     "training samples n (integer in [1, 1e6])"},
    {"rf", "p", T_LONG, OFF(rf_p), "4000", R_LO_CLOSED | R_HI_CLOSED, 1, 1e6, NULL,
     "random features p (integer in [1, 1e6]): phi(x) = act(V x), V_ij ~ N(0, 1/d) frozen"},
    {"rf", "activation", T_ENUM, OFF(rf_activation), "tanh", 0, 0, 0, rf_activation_names,
     "activation: tanh | relu | linear"},
    {"rf", "target", T_ENUM, OFF(rf_target), "sign", 0, 0, 0, rf_target_names,
     "labels: sign (y = sign(u^T x)) | linear (y = u^T x), u uniform on the unit sphere"},
    {"rf", "label_noise", T_DOUBLE, OFF(rf_label_noise), "0", R_LO_CLOSED, 0, 0, NULL,
     "variance >= 0 of Gaussian noise added to every label (train and test)"},
    {"rf", "test_size", T_LONG, OFF(rf_test_size), "1000", R_LO_CLOSED | R_HI_CLOSED, 1, 1e6, NULL,
     "test samples (integer in [1, 1e6])"},
    {"rf", "runs", T_LONG, OFF(rf_runs), "10", R_LO_CLOSED | R_HI_CLOSED, 1, 1e5, NULL,
     "runs of `hdpsgd rf` (integer in [1, 1e5]; --runs overrides it)"},
    {"rf", "records", T_LONG, OFF(rf_records), "100", R_LO_CLOSED | R_HI_CLOSED, 1, 1e6, NULL,
     "`hdpsgd rf` records the losses at step 0 and at round(i T / records), i = 1..records; at most 1e6"},
    {"dpgd", "eta", T_DOUBLE, OFF(dpgd_eta), "0", R_LO_CLOSED, 0, 0, NULL,
     "DP-GD step size eta >= 0; 0 = 1/p"},
    {"dpgd", "T", T_LONG, OFF(dpgd_T), "0", R_LO_CLOSED | R_HI_CLOSED, 0, 1e9, NULL,
     "steps T (integer in [0, 1e9]); 0 = round(CT d / (eta p)); give T or CT, not both"},
    {"dpgd", "CT", T_DOUBLE, OFF(dpgd_CT), "1", R_LO_OPEN, 0, 0, NULL,
     "CT = eta T p / d > 0 (the x-axis of seed 003's collapse); used when T = 0"},
    {"dpgd", "C", T_DOUBLE, OFF(dpgd_C), "0.5", R_LO_OPEN | R_INF, 0, 0, NULL,
     "clipping constant C > 0 or inf: C_clip = C sqrt(p); give C or clip, not both"},
    {"dpgd", "clip", T_DOUBLE, OFF(dpgd_clip), "0", R_LO_CLOSED | R_INF, 0, 0, NULL,
     "absolute clipping threshold C_clip >= 0 or inf; 0 = C sqrt(p)"},
    {"dpgd", "epsilon", T_DOUBLE, OFF(dpgd_epsilon), "4", R_LO_OPEN | R_INF, 0, 0, NULL,
     "target epsilon > 0 of (epsilon, delta)-DP, or inf (no private noise)"},
    {"dpgd", "delta", T_DOUBLE, OFF(dpgd_delta), "0", R_LO_CLOSED | R_HI_OPEN, 0, 1, NULL,
     "delta in [0, 1); 0 = 1/n"},
    {"dpgd", "sigma", T_DOUBLE, OFF(dpgd_sigma), "0", R_LO_CLOSED, 0, 0, NULL,
     "noise multiplier sigma >= 0; 0 = calibrate from (epsilon, delta) (THEORY 6)"},
    /* [nc]: NoisyGD on neural-collapse features (seed 004; THEORY 8; hdpsgd/nc.h) */
    {"nc", "K", T_LONG, OFF(nc_K), "10", R_LO_CLOSED | R_HI_CLOSED, 2, 1000, NULL,
     "classes K (integer in [2, 1000]); features are the K-simplex ETF in R^p"},
    {"nc", "p", T_LONG, OFF(nc_p), "1000", R_LO_CLOSED | R_HI_CLOSED, 2, 1e7, NULL,
     "feature dimension p (integer in [K, 1e7])"},
    {"nc", "n", T_LONG, OFF(nc_n), "250", R_LO_CLOSED | R_HI_CLOSED, 2, 1e7, NULL,
     "training samples in total, over all classes (integer in [K, 1e7])"},
    {"nc", "imbalance", T_DOUBLE, OFF(nc_imbalance), "0", R_LO_CLOSED | R_HI_OPEN, 0, 1, NULL,
     "0 = balanced classes; alpha in (0, 1): class 1 has round(alpha n) samples, the other "
     "classes share the rest evenly (K = 2: seed 004's alpha)"},
    {"nc", "G", T_DOUBLE, OFF(nc_G), "1", R_LO_OPEN, 0, 0, NULL,
     "clipping threshold G > 0: per-sample gradients g are scaled by min(1, G/||g||)"},
    {"nc", "rho", T_DOUBLE, OFF(nc_rho), "0.005", R_LO_OPEN | R_INF, 0, 0, NULL,
     "zCDP parameter PER STEP (seed 004's rho; rho_z in privacy.h terms), > 0 or inf (no "
     "noise): noise N(0, G^2/(2 rho) I); T steps are (T rho)-zCDP"},
    {"nc", "steps", T_LONG, OFF(nc_steps), "1", R_LO_CLOSED | R_HI_CLOSED, 1, 1e7, NULL,
     "steps T of NoisyGD / NoisySGD (integer in [1, 1e7])"},
    {"nc", "eta", T_DOUBLE, OFF(nc_eta), "1", R_LO_OPEN, 0, 0, NULL, "learning rate eta > 0"},
    {"nc", "loss", T_ENUM, OFF(nc_loss), "ce", 0, 0, 0, nc_loss_names,
     "loss: ce (softmax cross-entropy) | logistic (K = 2, one vector theta) | squared "
     "(one-hot targets)"},
    {"nc", "init", T_ENUM, OFF(nc_init), "zero", 0, 0, 0, nc_init_names,
     "initial weights: zero | gaussian (N(0, init_std^2) entries)"},
    {"nc", "init_std", T_DOUBLE, OFF(nc_init_std), "1", R_LO_CLOSED, 0, 0, NULL,
     "init = gaussian: standard deviation >= 0 of every initial weight (seed 004 E: 1)"},
    {"nc", "perturbation", T_ENUM, OFF(nc_perturbation), "none", 0, 0, 0, nc_perturbation_names,
     "none | test-offset | adversarial | stochastic (test) | train-offset | both (train and "
     "test offset) | per-sample (training); all of l_inf size beta (hdpsgd help nc)"},
    {"nc", "beta", T_DOUBLE, OFF(nc_beta), "0.1", R_LO_CLOSED, 0, 0, NULL,
     "l_inf size beta >= 0 of the perturbation"},
    {"nc", "remedy", T_ENUM, OFF(nc_remedy), "none", 0, 0, 0, nc_remedy_names,
     "none | center (subtract the feature mean) | pca (project on the top K-1 principal "
     "directions of public samples)"},
    {"nc", "public_samples", T_LONG, OFF(nc_public_samples), "500", R_LO_CLOSED | R_HI_CLOSED, 2, 1e7, NULL,
     "remedy = pca: public samples (integer in [2, 1e7]), drawn like the training features"},
    {"nc", "batch", T_LONG, OFF(nc_batch), "0", R_LO_CLOSED | R_HI_CLOSED, 0, 1e7, NULL,
     "0 = full batch (NoisyGD); b in [1, n] = NoisySGD with uniform batches of b samples; at most 1e7"},
    {"nc", "draws", T_LONG, OFF(nc_draws), "2000", R_LO_CLOSED | R_HI_CLOSED, 1, 1e8, NULL,
     "Monte Carlo draws (integer in [1, 1e8]; --draws overrides it)"},
    {"nc", "test_samples", T_LONG, OFF(nc_test_samples), "10", R_LO_CLOSED | R_HI_CLOSED, 1, 1e6, NULL,
     "perturbation = stochastic: random test points per class and draw (integer in [1, 1e6])"},
    {"nc", "delta", T_DOUBLE, OFF(nc_delta), "1e-5", R_LO_OPEN | R_HI_OPEN, 0, 1, NULL,
     "delta in (0, 1) of the reported (epsilon, delta)-DP (Canonne-Kamath-Steinke)"},
    /* [kl]: KL privacy of noisy GD on ReLU networks (seed 001; THEORY 8; hdpsgd/kl.h) */
    {"kl", "init", T_ENUM, OFF(kl_init), "he", 0, 0, 0, kl_init_names,
     "initialisation (seed 001 Table 1): lecun | he | ntk | xavier"},
    {"kl", "depth", T_LONG, OFF(kl_depth), "6", R_LO_CLOSED | R_HI_CLOSED, 2, 64, NULL,
     "depth L (integer in [2, 64]): L - 1 hidden ReLU layers and a linear output layer"},
    {"kl", "width", T_LONG, OFF(kl_width), "256", R_LO_CLOSED | R_HI_CLOSED, 1, 1e5, NULL,
     "hidden width m (integer in [1, 1e5])"},
    {"kl", "d", T_LONG, OFF(kl_d), "32", R_LO_CLOSED | R_HI_CLOSED, 1, 1e5, NULL,
     "input dimension d (integer in [1, 1e5]); x uniform on the sphere of radius sqrt(d)"},
    {"kl", "o", T_LONG, OFF(kl_o), "1", R_LO_CLOSED | R_HI_CLOSED, 1, 4000, NULL,
     "outputs o (integer in [1, 4000]); labels sign(u_a^T x) of a random linear teacher"},
    {"kl", "n", T_LONG, OFF(kl_n), "100", R_LO_CLOSED | R_HI_CLOSED, 2, 4000, NULL,
     "training samples n (integer in [2, 4000]; n o <= 4000)"},
    {"kl", "sigma", T_DOUBLE, OFF(kl_sigma), "0.03", R_LO_OPEN, 0, 0, NULL,
     "noise scale sigma > 0: noisy GD adds sqrt(2 eta sigma^2) N(0, I) per step (eq. 4)"},
    {"kl", "eta", T_DOUBLE, OFF(kl_eta), "0.001", R_LO_OPEN, 0, 0, NULL, "step size eta > 0"},
    {"kl", "epochs", T_LONG, OFF(kl_epochs), "50", R_LO_CLOSED | R_HI_CLOSED, 1, 1000000, NULL,
     "full-batch noisy GD steps (integer >= 1); Langevin time T = eta epochs"},
    {"kl", "loss", T_ENUM, OFF(kl_loss), "logistic", 0, 0, 0, kl_loss_names,
     "squared (|f - y|^2/2: an OU process, exact KL) | logistic (the seed's, per output)"},
    {"kl", "budget", T_DOUBLE, OFF(kl_budget), "1", R_LO_OPEN, 0, 0, NULL,
     "target KL privacy budget eps > 0 for Corollary 6.4 (kl bound)"},
    {"kl", "delta", T_DOUBLE, OFF(kl_delta), "0", R_LO_CLOSED | R_HI_OPEN, 0, 1, NULL,
     "target delta in [0, 1) of (0, delta)-DP by Pinsker, KL budget 2 delta^2; 0 = none"},
    {"kl", "runs", T_LONG, OFF(kl_runs), "32", R_LO_CLOSED | R_HI_CLOSED, 2, 1e6, NULL,
     "noise paths per initialisation of `kl run` (integer in [2, 1e6]; --runs overrides it)"},
    {"kl", "inits", T_LONG, OFF(kl_inits), "8", R_LO_CLOSED | R_HI_CLOSED, 1, 1e5, NULL,
     "random initialisations of `kl run` (integer in [1, 1e5])"},
    {"kl", "init_runs", T_LONG, OFF(kl_init_runs), "1000", R_LO_CLOSED | R_HI_CLOSED, 2, 1e8, NULL,
     "networks drawn by `kl init` per scheme and depth (integer in [2, 1e8]; --runs overrides it)"},
    /* [si]: private feature learning for single-index models (seed 002; THEORY 8; hdpsgd/si.h).
     * Prefactors multiply seed 002's scalings (Assumption 4), exponent eps_n. */
    {"si", "d", T_LONG, OFF(si_d), "64", R_LO_CLOSED | R_HI_CLOSED, 2, 1e5, NULL, "input dimension d (integer in [2, 1e5])"},
    {"si", "p", T_LONG, OFF(si_p), "64", R_LO_CLOSED | R_HI_CLOSED, 1, 1e5, NULL, "neurons p (integer in [1, 1e5])"},
    {"si", "n", T_LONG, OFF(si_n), "4000", R_LO_CLOSED | R_HI_CLOSED, 2, 1e7, NULL,
     "samples n of each of the two training sets (integer in [2, 1e7])"},
    {"si", "test_size", T_LONG, OFF(si_test_size), "2000", R_LO_CLOSED | R_HI_CLOSED, 1, 1e7, NULL,
     "fresh test samples (integer in [1, 1e7])"},
    {"si", "runs", T_LONG, OFF(si_runs), "30", R_LO_CLOSED | R_HI_CLOSED, 2, 1e6, NULL,
     "stage-2 noise runs on the same data and first layer (integer in [2, 1e6])"},
    {"si", "he1", T_DOUBLE, OFF(si_he1), "1", 0, 0, 0, NULL,
     "coefficient of He1 in the link sigma_*; must be nonzero (information exponent 1)"},
    {"si", "he2", T_DOUBLE, OFF(si_he2), "1", 0, 0, 0, NULL, "coefficient of He2 in the link"},
    {"si", "he3", T_DOUBLE, OFF(si_he3), "0", 0, 0, 0, NULL, "coefficient of He3 in the link"},
    {"si", "eps_n", T_DOUBLE, OFF(si_eps_n), "0.25", R_LO_OPEN | R_HI_CLOSED, 0, 1, NULL,
     "exponent epsilon_n in (0, 1] of seed 002's scalings; at most 1"},
    {"si", "lambda", T_DOUBLE, OFF(si_lambda), "0.01", R_LO_CLOSED, 0, 0, NULL,
     "prefactor >= 0: lambda = c p / d^(2 eps_n)"},
    {"si", "eta_a", T_DOUBLE, OFF(si_eta_a), "0", R_LO_CLOSED, 0, 0, NULL,
     "prefactor >= 0: eta_a = c d^eps_n ln^2 d / p; 0 = 1/lambda_max(K) (stage2 = gd needs "
     "eta_a lambda_max(K) < 2)"},
    {"si", "C_a", T_DOUBLE, OFF(si_C_a), "0.05", R_LO_OPEN | R_INF, 0, 0, NULL,
     "prefactor > 0 or inf: C_a = c d^eps_n sqrt(p) ln^(q+1) d (q the link's degree)"},
    {"si", "T", T_DOUBLE, OFF(si_T), "30", R_LO_OPEN, 0, 0, NULL,
     "prefactor > 0: T = max(1, round(c d^eps_n)) stage-2 steps"},
    {"si", "sigma_W", T_DOUBLE, OFF(si_sigma_W), "5e-4", R_LO_CLOSED, 0, 0, NULL,
     "prefactor >= 0: sigma_W = c sqrt(d^(1+eps_n)/n) ln^(q+3) d (0 = no stage-1 noise)"},
    {"si", "eta_W", T_DOUBLE, OFF(si_eta_W), "1", R_LO_OPEN, 0, 0, NULL,
     "prefactor > 0: eta_W = c d^(3 eps_n/2) sqrt(p)"},
    {"si", "C_W", T_DOUBLE, OFF(si_C_W), "4", R_LO_OPEN, 0, 0, NULL,
     "stage-1 per-sample, per-neuron clipping C_W = c sqrt(d/p) (not in seed 002)"},
    {"si", "norm_floor", T_DOUBLE, OFF(si_norm_floor), "0.25", R_LO_OPEN, 0, 0, NULL,
     "stage-1 normalisation w/max(||w||, R), R = c eta_W n 2/sqrt(p) (bounds the sensitivity)"},
    {"si", "epsilon", T_DOUBLE, OFF(si_epsilon), "4", R_LO_OPEN | R_INF, 0, 0, NULL,
     "stage-2 target epsilon > 0 or inf (no stage-2 noise)"},
    {"si", "delta", T_DOUBLE, OFF(si_delta), "0", R_LO_CLOSED | R_HI_OPEN, 0, 1, NULL,
     "delta in [0, 1); 0 = 1/n"},
    {"si", "stage2", T_ENUM, OFF(si_stage2), "gd", 0, 0, 0, si_stage2_names,
     "stage 2: gd (DP-GD, clipped) | ou (the exact OU process, unclipped)"},
};

#define NKEYS ((int)(sizeof schema / sizeof schema[0]))
_Static_assert(sizeof schema / sizeof schema[0] <= HDP_MODEL_MAX_KEYS, "schema too large");

const char *hdp_spectrum_name(hdp_spectrum_kind k) { return spectrum_names[k]; }
const char *hdp_noise_name(hdp_noise_kind k) { return noise_names[k]; }
const char *hdp_sched_name(hdp_sched_kind k) { return sched_names[k]; }
const char *hdp_rf_activation_name(hdp_rf_activation_kind k) { return rf_activation_names[k]; }
const char *hdp_rf_target_name(hdp_rf_target_kind k) { return rf_target_names[k]; }
const char *hdp_nc_loss_name(hdp_nc_loss_kind k) { return nc_loss_names[k]; }
const char *hdp_nc_init_name(hdp_nc_init_kind k) { return nc_init_names[k]; }
const char *hdp_nc_perturbation_name(hdp_nc_perturbation_kind k) { return nc_perturbation_names[k]; }
const char *hdp_nc_remedy_name(hdp_nc_remedy_kind k) { return nc_remedy_names[k]; }
const char *hdp_kl_init_name(hdp_kl_init_kind k) { return kl_init_names[k]; }
const char *hdp_kl_loss_name(hdp_kl_loss_kind k) { return kl_loss_names[k]; }
const char *hdp_si_stage2_name(hdp_si_stage2_kind k) { return si_stage2_names[k]; }

int hdp_model_schema_entry(int i, const char **section, const char **key,
                           const char **default_text, const char **help)
{
    if (i < 0 || i >= NKEYS)
        return 0;
    if (section) *section = schema[i].section;
    if (key) *key = schema[i].key;
    if (default_text) *default_text = schema[i].def;
    if (help) *help = schema[i].help;
    return 1;
}

static int find_key(const char *section, const char *key)
{
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(schema[i].section, section) && !strcmp(schema[i].key, key))
            return i;
    return -1;
}

/* Levenshtein distance, for "did you mean". */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j];
            int sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            prev = cur;
        }
    }
    return row[lb];
}

/* The closest "section.key" to the one given, or NULL when nothing is close. */
static const key_spec *suggest(const char *section, const char *key)
{
    const key_spec *best = NULL;
    int best_d = 99;
    for (int i = 0; i < NKEYS; i++) {
        int dk = edit_distance(key, schema[i].key);
        int ds = edit_distance(section, schema[i].section);
        int dd = dk + ds;
        if (dd < best_d) {
            best_d = dd;
            best = &schema[i];
        }
    }
    int len = (int)(strlen(key) + strlen(section));
    return (best && best_d <= 2 + len / 6) ? best : NULL;
}

static void list_keys_of(const char *section, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < NKEYS && used < size; i++) {
        if (strcmp(schema[i].section, section))
            continue;
        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", schema[i].key);
    }
}

static int section_known(const char *section)
{
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(schema[i].section, section))
            return 1;
    return 0;
}

/* The section closest to an unknown one ([clipping] -> [clip]): a few edits away, or one
 * name the start of the other (at least 3 letters). NULL when nothing is close. */
static const char *suggest_section(const char *section)
{
    const char *best = NULL;
    int best_d = 99;
    size_t len = strlen(section);
    for (int i = 0; i < NKEYS; i++) {
        const char *s = schema[i].section;
        size_t ls = strlen(s);
        int d = edit_distance(section, s);
        size_t common = len < ls ? len : ls;
        if (common >= 3 && !strncasecmp(section, s, common))
            d = 1; /* a prefix: clipping / clip, priv / privacy */
        if (d < best_d) {
            best_d = d;
            best = s;
        }
    }
    return best && best_d <= 2 + (int)len / 6 ? best : NULL;
}

static void format_where(char *buf, size_t size, const char *where, int line)
{
    if (line > 0)
        snprintf(buf, size, "%s:%d", where, line);
    else
        snprintf(buf, size, "%s", where);
}

static void describe_range(const key_spec *k, char *buf, size_t size)
{
    if (k->type == T_ENUM) {
        size_t used = 0;
        for (int i = 0; k->names[i] && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " | " : "one of ", k->names[i]);
        return;
    }
    if (k->type == T_PATH) {
        snprintf(buf, size, "a file name");
        return;
    }
    if (k->type == T_SEED) {
        snprintf(buf, size, "an unsigned 64-bit integer");
        return;
    }
    const char *kind = k->type == T_LONG ? "an integer" : "a number";
    char lo[64] = "", hi[64] = "";
    if (k->flags & R_LO_OPEN) snprintf(lo, sizeof lo, " > %g", k->lo);
    if (k->flags & R_LO_CLOSED) snprintf(lo, sizeof lo, " >= %g", k->lo);
    if (k->flags & R_HI_OPEN) snprintf(hi, sizeof hi, "%s < %g", lo[0] ? " and" : "", k->hi);
    if (k->flags & R_HI_CLOSED) snprintf(hi, sizeof hi, "%s <= %g", lo[0] ? " and" : "", k->hi);
    snprintf(buf, size, "%s%s%s%s%s", kind, lo, hi, (k->flags & R_INF) ? ", or inf" : "",
             (k->flags & R_AUTO) ? ", or auto" : "");
}

static int in_range(const key_spec *k, double v)
{
    if (isinf(v) && v > 0)
        return (k->flags & R_INF) != 0;
    if (!isfinite(v))
        return 0;
    if ((k->flags & R_LO_OPEN) && !(v > k->lo)) return 0;
    if ((k->flags & R_LO_CLOSED) && !(v >= k->lo)) return 0;
    if ((k->flags & R_HI_OPEN) && !(v < k->hi)) return 0;
    if ((k->flags & R_HI_CLOSED) && !(v <= k->hi)) return 0;
    return 1;
}

/* A decimal number at the start of s (after blanks): [+-] digits [. digits] [e [+-] digits],
 * at least one digit before the exponent. Hexadecimal floats ("0x14"), "nan" and "inf"
 * are not decimal numbers (the caller handles the words inf/infinity where they are
 * allowed). Returns 1 with the value in *x, 0 when s does not start with a decimal
 * number, -1 when it does but the value is out of range: above DBL_MAX in size (strtod
 * would give inf) or a subnormal number (nonzero and below DBL_MIN in size, where digits
 * are lost). *end is set past the number (1, -1) or to s (0). */
static int parse_decimal_prefix(const char *s, char **end, double *x)
{
    const char *p = s;
    *end = (char *)s;
    while (isspace((unsigned char)*p))
        p++;
    const char *start = p;
    if (*p == '+' || *p == '-')
        p++;
    int digits = 0;
    while (isdigit((unsigned char)*p)) { p++; digits++; }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) { p++; digits++; }
    }
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (isdigit((unsigned char)*q)) {
            while (isdigit((unsigned char)*q)) q++;
            p = q;
        }
    }
    if (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
        return 0; /* "0x14", "1.5.2", "2abc": not a number followed by a separator */
    char buf[512];
    size_t n = (size_t)(p - start);
    if (n >= sizeof buf)
        return 0;
    memcpy(buf, start, n);
    buf[n] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    *end = (char *)p;
    if (isinf(v) || (v != 0 && fabs(v) < DBL_MIN))
        return -1;
    *x = v;
    return 1;
}

/* Parse a model value: the whole string one decimal number (parse_decimal_prefix), or the
 * words inf/infinity (+inf). 1 ok, 0 not a number, -1 out of range. */
static int parse_double(const char *s, double *out)
{
    while (isspace((unsigned char)*s))
        s++;
    const char *w = s + (*s == '+');
    if (!strncasecmp(w, "infinity", 8) || !strncasecmp(w, "inf", 3)) {
        const char *e = w + (strncasecmp(w, "infinity", 8) ? 3 : 8);
        while (isspace((unsigned char)*e))
            e++;
        if (*e)
            return 0;
        *out = INFINITY;
        return 1;
    }
    char *end;
    double v;
    int ok = parse_decimal_prefix(s, &end, &v);
    if (ok <= 0)
        return ok;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return 0;
    *out = v;
    return 1;
}

static hdp_status set_path(char *dst, const char *value, const char *where, int line)
{
    /* relative to the model file's directory when set from a file */
    if (value[0] == '\0' || value[0] == '/' || line <= 0) {
        snprintf(dst, HDP_PATH_MAX, "%s", value);
        return HDP_OK;
    }
    const char *slash = strrchr(where, '/');
    if (!slash) {
        snprintf(dst, HDP_PATH_MAX, "%s", value);
        return HDP_OK;
    }
    snprintf(dst, HDP_PATH_MAX, "%.*s/%s", (int)(slash - where), where, value);
    return HDP_OK;
}

static hdp_status apply_value(hdp_model *m, int idx, const char *value, const char *where,
                              int line, hdp_error *err)
{
    const key_spec *k = &schema[idx];
    char *base = (char *)m;
    char loc[HDP_PATH_MAX + 32], range[256];
    format_where(loc, sizeof loc, where, line);
    describe_range(k, range, sizeof range);
    switch (k->type) {
    case T_ENUM: {
        char trimmed[128];
        snprintf(trimmed, sizeof trimmed, "%s", value);
        for (int i = 0; k->names[i]; i++) {
            if (!strcasecmp(trimmed, k->names[i])) {
                *(int *)(base + k->offset) = i;
                return HDP_OK;
            }
        }
        return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = '%s' is not accepted: expected %s", loc,
                        k->section, k->key, value, range);
    }
    case T_PATH:
        return set_path(base + k->offset, value, where, line);
    case T_SEED: {
        char *end;
        errno = 0;
        while (isspace((unsigned char)*value))
            value++;
        unsigned long long v = strtoull(value, &end, 10); /* decimal: "010" is ten, not eight */
        while (isspace((unsigned char)*end))
            end++;
        if (*value == '-' || *value == '\0' || *end || errno == ERANGE)
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = '%s' is not accepted: expected %s",
                            loc, k->section, k->key, value, range);
        *(unsigned long long *)(base + k->offset) = v;
        return HDP_OK;
    }
    case T_LONG:
    case T_DOUBLE: {
        double v;
        if (k->flags & R_AUTO) {
            char word[16];
            if (sscanf(value, " %15s", word) == 1 && !strcasecmp(word, "auto")) {
                *(long *)(base + k->offset) = HDP_BINS_AUTO;
                return HDP_OK;
            }
        }
        int ok = parse_double(value, &v);
        if (ok < 0)
            return hdp_fail(err, HDP_EINPUT,
                            "%s: [%s] %s = %s is out of range (numbers must be finite and not "
                            "subnormal): expected %s",
                            loc, k->section, k->key, value, range);
        if (ok == 0)
            return hdp_fail(err, HDP_EINPUT,
                            "%s: [%s] %s = '%s' is not a number: expected %s (in decimal notation)", loc,
                            k->section, k->key, value, range);
        if (k->type == T_LONG && (isinf(v) || v != floor(v) || fabs(v) > 9.0e15))
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = '%s' is not an integer: expected %s",
                            loc, k->section, k->key, value, range);
        if (!in_range(k, v))
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = %s is out of range: expected %s", loc,
                            k->section, k->key, value, range);
        if (k->type == T_LONG)
            *(long *)(base + k->offset) = (long)v;
        else /* base + offset is the double member named by the schema (offsetof) */
            *(double *)(base + k->offset) = v; /* cppcheck-suppress invalidPointerCast */
        return HDP_OK;
    }
    }
    return HDP_OK;
}

hdp_status hdp_model_set_key(hdp_model *m, const char *section, const char *key,
                             const char *value, const char *where, int line, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, section);
    HDP_REQUIRE(err, key);
    HDP_REQUIRE(err, value);
    char loc[HDP_PATH_MAX + 32];
    format_where(loc, sizeof loc, where, line);
    int idx = find_key(section, key);
    if (idx < 0) {
        const key_spec *s = suggest(section, key);
        char hint[160] = "";
        if (s)
            snprintf(hint, sizeof hint, " (did you mean [%s] %s?)", s->section, s->key);
        const char *sec = section_known(section) ? NULL : suggest_section(section);
        if (sec && find_key(sec, key) >= 0)
            snprintf(hint, sizeof hint, " (did you mean [%s] %s?)", sec, key);
        else if (sec && !s)
            snprintf(hint, sizeof hint, " (did you mean [%s]?)", sec);
        if (!section_known(section))
            return hdp_fail(err, HDP_EINPUT,
                            "%s: unknown section [%s]%s; sections: data, clip, privacy, "
                            "schedule, ode, sim, sde, validate, rf, dpgd, nc, kl",
                            loc, section, hint);
        char keys[512];
        list_keys_of(section, keys, sizeof keys);
        return hdp_fail(err, HDP_EINPUT, "%s: unknown key '%s' in [%s]%s; accepted keys: %s", loc,
                        key, section, hint, keys);
    }
    hdp_origin *o = &m->origin[idx];
    if (line > 0 && o->line > 0 && !strcmp(o->where, where))
        return hdp_fail(err, HDP_EINPUT, "%s: duplicate key [%s] %s (first set on line %d)", loc,
                        section, key, o->line);
    m->finalized = 0; /* changed: finalize again before solving */
    hdp_status st = apply_value(m, idx, value, where, line, err);
    if (st != HDP_OK)
        return st;
    snprintf(o->where, sizeof o->where, "%s", where);
    o->line = line;
    if (!strcmp(section, "data") && !strcmp(key, "n"))
        m->n_given_last = 1;
    if (!strcmp(section, "data") && !strcmp(key, "gamma"))
        m->n_given_last = 0;
    return HDP_OK;
}

void hdp_model_init(hdp_model *m)
{
    if (!m)
        return;
    memset(m, 0, sizeof *m);
    for (int i = 0; i < NKEYS; i++) {
        hdp_error err;
        hdp_error_clear(&err);
        apply_value(m, i, schema[i].def, "(default)", 0, &err);
    }
    for (int i = 0; i < NKEYS; i++)
        m->origin[i].where[0] = '\0';
    m->n_given_last = 0;
    snprintf(m->source, sizeof m->source, "(built-in default)");
}

void hdp_model_free(hdp_model *m)
{
    if (!m)
        return;
    free(m->table_t);
    free(m->table_eta);
    free(m->file_lambda);
    m->table_t = m->table_eta = m->file_lambda = NULL;
    m->table_len = 0;
    m->file_len = 0;
}

/* ---- reading input files: whole, checked, then parsed line by line ---- */

/* Model files: inih reads a line into a 200-byte buffer (INI_MAX_LINE of Debian's
 * libinih), so a longer line would be split in two and its tail read as a line of its
 * own. Lines are checked against this length before inih sees them. */
#define MODEL_MAX_LINE 198
/* Spectrum and schedule tables. */
#define TABLE_MAX_LINE 4000
/* Any input file (a 10^7-eigenvalue spectrum is about 250 MB). */
#define INPUT_MAX_BYTES (1L << 30)

/* Open a file to read that is a regular file, or also a pipe when allow_pipe (a model on
 * standard input: `... | hdpsgd ode /dev/stdin`). A directory reads as empty and a device
 * such as /dev/zero or /dev/urandom as endless: both are refused, with *why saying which,
 * as is a pipe where none is allowed. The file is opened with O_NONBLOCK (so that a FIFO
 * cannot block the open) and checked with fstat on the open descriptor (no race with a
 * rename). *is_pipe says whether it is a pipe: read_text then waits for its data with
 * poll, as cat would, because a named FIFO that no writer has opened yet reads as empty
 * at once (poll only reports a hang-up once a writer has come and gone). */
static int open_input(const char *path, int allow_pipe, const char **why, off_t *size,
                      int *is_pipe)
{
    *why = NULL;
    *is_pipe = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode) && !(allow_pipe && S_ISFIFO(sb.st_mode))) {
        *why = S_ISDIR(sb.st_mode)    ? "is a directory, not a file"
               : S_ISFIFO(sb.st_mode) ? "is a pipe, not a regular file"
                                      : "is a device or socket, not a regular file";
        close(fd);
        return -1;
    }
    *size = S_ISREG(sb.st_mode) ? sb.st_size : 0;
    if (S_ISFIFO(sb.st_mode))
        *is_pipe = 1; /* read with poll (read_text): O_NONBLOCK stays */
    return fd;
}

/* Read the regular file path whole into *text (NUL-terminated; free it), with line ends
 * made uniform: CRLF and a lone CR (old Mac files) both end a line, as LF does. Refused
 * with HDP_EINPUT, naming the file and the line: a file that is not regular (the model file
 * may be a pipe, read to its end; an empty pipe is refused), a NUL byte
 * (C strings would end there and the rest of the line be ignored), a line longer than
 * max_line characters (a reader with a fixed buffer would split it), a file over
 * INPUT_MAX_BYTES. what names the file's role in messages ("model file", ...). */
static hdp_status read_text(const char *path, const char *what, long max_line, char **text,
                            hdp_error *err)
{
    *text = NULL;
    const char *why;
    off_t size = 0;
    int model = !strcmp(what, "model file"), is_pipe;
    int fd = open_input(path, model, &why, &size, &is_pipe);
    /* messages without the path for the model file (the caller puts it first) and with
     * it for tables (the caller puts the key that names them first) */
    if (fd < 0 && why)
        return model ? hdp_fail(err, HDP_EINPUT, "cannot read the model file: it %s", why)
                     : hdp_fail(err, HDP_EINPUT, "cannot read '%s': it %s", path, why);
    if (fd < 0)
        return model ? hdp_fail(err, HDP_EINPUT, "cannot open model file: %s", strerror(errno))
                     : hdp_fail(err, HDP_EINPUT, "cannot open '%s': %s", path, strerror(errno));
    if (size > INPUT_MAX_BYTES) {
        close(fd);
        return hdp_fail(err, HDP_EINPUT, "%s: the %s is larger than %ld MiB", path, what,
                        INPUT_MAX_BYTES >> 20);
    }
    size_t cap = (size_t)size + 1, len = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (len == cap) { /* the file grew while we read it */
            if (cap > (size_t)INPUT_MAX_BYTES) {
                free(buf);
                close(fd);
                return hdp_fail(err, HDP_EINPUT, "%s: the %s is larger than %ld MiB", path, what,
                                INPUT_MAX_BYTES >> 20);
            }
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
        if (is_pipe) {
            struct pollfd pfd = {fd, POLLIN, 0};
            if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                break;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return hdp_fail(err, HDP_EINPUT, "%s: cannot read the %s: %s", path, what,
                            strerror(e));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    if (!buf)
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory reading the %s", path, what);
    if (is_pipe && len == 0) {
        free(buf);
        return hdp_fail(err, HDP_EINPUT,
                        "cannot read the %s: it is a pipe that gave nothing (an empty model "
                        "would silently be the built-in default)",
                        what);
    }
    buf[len] = '\0';
    /* NUL bytes, line ends, line lengths: one pass, writing the normalised text in place */
    size_t o = 0;
    long line = 1, col = 0;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\0') {
            free(buf);
            return hdp_fail(err, HDP_EINPUT,
                            "%s:%ld: the %s contains a NUL byte (a binary file, or a text file "
                            "in UTF-16?): expected plain text",
                            path, line, what);
        }
        if (c == '\r') {
            if (i + 1 < len && buf[i + 1] == '\n')
                i++;
            c = '\n';
        }
        if (c == '\n') {
            line++;
            col = 0;
        } else if (++col > max_line) {
            free(buf);
            return hdp_fail(err, HDP_EINPUT,
                            "%s:%ld: line longer than %ld characters: the %s accepts lines of at "
                            "most %ld characters",
                            path, line, max_line, what, max_line);
        }
        buf[o++] = c;
    }
    buf[o] = '\0';
    *text = buf;
    return HDP_OK;
}

/* ---- INI parsing with line numbers: inih's reader hook hands it one line at a time ---- */

typedef struct {
    const char *next; /* the rest of the text */
    int line;
} line_reader;

static char *read_line(char *str, int num, void *stream)
{
    line_reader *r = stream;
    if (!*r->next)
        return NULL;
    const char *end = strchr(r->next, '\n');
    size_t n = end ? (size_t)(end - r->next) + 1 : strlen(r->next);
    if (n > (size_t)num - 1) /* not reached: read_text checked the lengths */
        n = (size_t)num - 1;
    memcpy(str, r->next, n);
    str[n] = '\0';
    r->next += n;
    r->line++;
    return str;
}

typedef struct {
    hdp_model *m;
    const char *path;
    line_reader *reader;
    hdp_error *err;
    int failed;
} parse_ctx;

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *ctx = user;
    if (ctx->failed)
        return 1;
    if (section[0] == '\0') {
        hdp_fail(ctx->err, HDP_EINPUT,
                 "%s:%d: key '%s' outside a section: put it under [data], [clip], [privacy], "
                 "[schedule], [ode], [sim], [sde], [validate], [rf], [dpgd], [nc] or [kl]",
                 ctx->path, ctx->reader->line, name);
        ctx->failed = 1;
        return 0;
    }
    if (hdp_model_set_key(ctx->m, section, name, value, ctx->path, ctx->reader->line, ctx->err) !=
        HDP_OK) {
        ctx->failed = 1;
        return 0;
    }
    return 1;
}

hdp_status hdp_model_load_file(hdp_model *m, const char *path, hdp_error *err)
{
    if (m)
        m->finalized = 0;
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, path);
    char *text;
    hdp_error e;
    hdp_error_clear(&e);
    hdp_status st = read_text(path, "model file", MODEL_MAX_LINE, &text, &e);
    if (st != HDP_OK)
        return strncmp(e.msg, "cannot ", 7) ? hdp_fail(err, st, "%s", e.msg)
                                            : hdp_fail(err, st, "%s: %s", path, e.msg);
    line_reader reader = {text, 0};
    parse_ctx ctx = {m, path, &reader, err, 0};
    int rc = ini_parse_stream(read_line, &reader, on_key, &ctx);
    free(text);
    if (ctx.failed)
        return HDP_EINPUT;
    if (rc != 0)
        return hdp_fail(err, HDP_EINPUT,
                        "%s:%d: syntax error: expected '[section]', 'key = value' or a comment",
                        path, rc);
    snprintf(m->source, sizeof m->source, "%s", path);
    return HDP_OK;
}

hdp_status hdp_model_set(hdp_model *m, const char *assignment, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, assignment);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", assignment);
    char *eq = strchr(buf, '=');
    char *dot = strchr(buf, '.');
    if (!eq || !dot || dot > eq)
        return hdp_fail(err, HDP_EINPUT,
                        "--set %s: expected section.key=value (for example --set clip.c=0.3)",
                        assignment);
    *eq = '\0';
    *dot = '\0';
    char *section = buf, *key = dot + 1, *value = eq + 1;
    /* trim spaces around names */
    while (*key == ' ') key++;
    for (char *e = key + strlen(key); e > key && e[-1] == ' ';) *--e = '\0';
    while (*section == ' ') section++;
    return hdp_model_set_key(m, section, key, value, "--set", 0, err);
}

/* ---- finalize: derived values, combinations, files ---- */

static hdp_status range_fail(const hdp_model *m, const char *section, const char *key,
                             hdp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static hdp_status range_fail(const hdp_model *m, const char *section, const char *key,
                             hdp_error *err, const char *fmt, ...)
{
    int idx = find_key(section, key);
    char loc[HDP_PATH_MAX + 32];
    const hdp_origin *o = idx >= 0 ? &m->origin[idx] : NULL;
    if (o && o->where[0])
        format_where(loc, sizeof loc, o->where, o->line);
    else
        snprintf(loc, sizeof loc, "%s (default value)", m->source);
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: %s", loc, section, key, what);
}

static int key_given(const hdp_model *m, const char *section, const char *key)
{
    int idx = find_key(section, key);
    return idx >= 0 && m->origin[idx].where[0] != '\0';
}

int hdp_model_key_given(const hdp_model *m, const char *section, const char *key)
{
    if (!m || !section || !key)
        return 0;
    return key_given(m, section, key);
}

hdp_status hdp_model_fail_key(const hdp_model *m, const char *section, const char *key,
                              hdp_error *err, const char *fmt, ...)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, section);
    HDP_REQUIRE(err, key);
    HDP_REQUIRE(err, fmt);
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return range_fail(m, section, key, err, "%s", what);
}

/* Read a whitespace-separated numeric table with 'cols' columns (decimal numbers, see
 * parse_decimal; '#' and ';' start comments). */
static hdp_status read_table(const char *path, int cols, const char *section, const char *key,
                             const hdp_model *m, double **out, long *rows, hdp_error *err)
{
    char *text;
    hdp_error e;
    hdp_error_clear(&e);
    hdp_status st = read_text(path, cols > 1 ? "schedule table" : "spectrum file",
                              TABLE_MAX_LINE, &text, &e);
    if (st != HDP_OK)
        return range_fail(m, section, key, err, "%s", e.msg);
    long cap = 256, len = 0;
    double *v = malloc(sizeof(double) * (size_t)(cap * cols));
    int lineno = 0;
    for (char *line = text, *next; v && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '#' || *p == ';' || *p == '\0')
            continue;
        if (len == cap) {
            cap *= 2;
            double *nv = realloc(v, sizeof(double) * (size_t)(cap * cols));
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        for (int c = 0; c < cols; c++) {
            char *end;
            double x;
            int ok = parse_decimal_prefix(p, &end, &x);
            if (ok == 0) {
                st = hdp_fail(err, HDP_EINPUT,
                              "%s:%d: expected %d number%s per line (%s of [%s] %s; decimal "
                              "notation), got '%.40s'",
                              path, lineno, cols, cols > 1 ? "s" : "",
                              cols > 1 ? "t and eta" : "one eigenvalue", section, key, line);
                goto done;
            }
            if (ok < 0) {
                st = hdp_fail(err, HDP_EINPUT,
                              "%s:%d: '%.*s' is out of range ([%s] %s): numbers must be finite "
                              "(below 1.8e308 in size) and either 0 or at least 2.2e-308 in size "
                              "(no subnormal numbers)",
                              path, lineno, (int)(end - p > 40 ? 40 : end - p), p, section, key);
                goto done;
            }
            v[len * cols + c] = x;
            p = end;
            while (isspace((unsigned char)*p) || *p == ',') p++;
        }
        if (*p && *p != '#' && *p != ';') {
            st = hdp_fail(err, HDP_EINPUT, "%s:%d: expected %d number%s per line, got '%.40s'",
                          path, lineno, cols, cols > 1 ? "s" : "", line);
            goto done;
        }
        len++;
    }
    if (!v) {
        st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (len == 0)
        st = hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: the file has no numbers", path, section, key);
done:
    free(text);
    if (st != HDP_OK) {
        free(v);
        return st;
    }
    *out = v;
    *rows = len;
    return HDP_OK;
}

static hdp_status load_spectrum_file(hdp_model *m, hdp_error *err)
{
    if (!m->spectrum_file[0])
        return range_fail(m, "data", "spectrum_file", err,
                          "spectrum = file needs data.spectrum_file (one eigenvalue per line)");
    double *v = NULL;
    long len = 0;
    hdp_status st = read_table(m->spectrum_file, 1, "data", "spectrum_file", m, &v, &len, err);
    if (st != HDP_OK)
        return st;
    double sum = 0;
    for (long i = 0; i < len; i++) {
        if (v[i] < 0) {
            double bad = v[i]; /* read before the free */
            free(v);
            return hdp_fail(err, HDP_EINPUT,
                            "%s: eigenvalue %ld is negative (%g): a covariance spectrum needs "
                            "eigenvalues >= 0",
                            m->spectrum_file, i + 1, bad);
        }
        sum += v[i];
    }
    if (!(sum > 0)) {
        free(v);
        return hdp_fail(err, HDP_EINPUT, "%s: all eigenvalues are zero", m->spectrum_file);
    }
    if (key_given(m, "data", "d") && m->d != len) {
        free(v);
        return range_fail(m, "data", "d", err,
                          "d = %ld but %s has %ld eigenvalues (leave d out to take it from the "
                          "file)",
                          m->d, m->spectrum_file, len);
    }
    m->d = len;
    free(m->file_lambda);
    m->file_lambda = v;
    m->file_len = len;
    return HDP_OK;
}

static hdp_status load_schedule_table(hdp_model *m, hdp_error *err)
{
    if (!m->sched_file[0])
        return range_fail(m, "schedule", "file", err,
                          "kind = table needs schedule.file (two columns: t, eta)");
    double *v = NULL;
    long len = 0;
    hdp_status st = read_table(m->sched_file, 2, "schedule", "file", m, &v, &len, err);
    if (st != HDP_OK)
        return st;
    const char *why = NULL;
    long bad = -1;
    for (long i = 0; i < len && !why; i++) {
        double t = v[2 * i], e = v[2 * i + 1];
        if (t < 0 || t > 1) why = "t must lie in [0, 1]";
        else if (e < 0) why = "eta must be >= 0";
        else if (i > 0 && !(t > v[2 * (i - 1)])) why = "t must be strictly increasing";
        else if (i > 0 && e > v[2 * (i - 1) + 1])
            why = "eta must be non-increasing (an increasing learning rate would need negative "
                  "noise variance, THEORY 1)";
        if (why) bad = i;
    }
    if (!why && len < 2) { why = "at least two knots are needed (t = 0 and t = 1)"; bad = 0; }
    if (!why && v[0] != 0) { why = "the first knot must be at t = 0"; bad = 0; }
    if (!why && v[2 * (len - 1)] != 1) { why = "the last knot must be at t = 1"; bad = len - 1; }
    if (!why && !(v[1] > 0)) { why = "eta(0) must be > 0"; bad = 0; }
    if (why) {
        free(v);
        return hdp_fail(err, HDP_EINPUT, "%s: knot %ld: %s ([schedule] file)", m->sched_file,
                        bad + 1, why);
    }
    free(m->table_t);
    free(m->table_eta);
    m->table_t = malloc(sizeof(double) * (size_t)len);
    m->table_eta = malloc(sizeof(double) * (size_t)len);
    if (!m->table_t || !m->table_eta) {
        free(v);
        return hdp_fail(err, HDP_ENOMEM, "out of memory reading %s", m->sched_file);
    }
    for (long i = 0; i < len; i++) {
        m->table_t[i] = v[2 * i];
        m->table_eta[i] = v[2 * i + 1];
    }
    m->table_len = (int)len;
    free(v);
    return HDP_OK;
}

/* Products of size keys that size one allocation, each bounded so that a run cannot
 * ask for more memory than a workstation has (the single keys have bounds in the schema):
 * MAX_CELLS doubles = 1.6 GB. */
#define MAX_CELLS 2.0e8

static hdp_status too_big(const hdp_model *m, const char *section, const char *k1, double v1,
                          const char *k2, double v2, double cells, const char *what,
                          hdp_error *err)
{
    return range_fail(m, section, k1, err,
                      "%s = %.0f with %s = %.0f needs %s of %.3g numbers, more than the %.0e "
                      "accepted (%.1f GB): make one of them smaller",
                      k1, v1, k2, v2, what, cells, MAX_CELLS, MAX_CELLS * 8 / 1e9);
}

static hdp_status check_sizes(const hdp_model *m, hdp_error *err)
{
    double cells;
    if ((cells = 2.0 * (double)m->runs * (double)m->points) > MAX_CELLS)
        return too_big(m, "sim", "runs", (double)m->runs, "ode.points", (double)m->points, cells,
                       "the runs' curves (kept for the quantiles)", err);
    double rn = (double)m->rf_n, rp = (double)m->rf_p, rt = (double)m->rf_test_size;
    if ((cells = rn * rp) > MAX_CELLS)
        return too_big(m, "rf", "n", rn, "rf.p", rp, cells, "the feature matrix", err);
    if ((cells = rt * rp) > MAX_CELLS)
        return too_big(m, "rf", "test_size", rt, "rf.p", rp, cells, "the test features", err);
    if ((cells = fmin(rn, rp) * fmin(rn, rp)) > MAX_CELLS)
        return too_big(m, "rf", "n", rn, "rf.p", rp, cells, "the Gram matrix of the smaller one",
                       err);
    double sn = (double)m->si_n, sd = (double)m->si_d, sp = (double)m->si_p;
    double st = (double)m->si_test_size;
    if ((cells = sn * fmax(sd, sp)) > MAX_CELLS)
        return too_big(m, "si", "n", sn, sd > sp ? "si.d" : "si.p", fmax(sd, sp), cells,
                       "the data or feature matrix", err);
    if ((cells = st * fmax(sd, sp)) > MAX_CELLS)
        return too_big(m, "si", "test_size", st, sd > sp ? "si.d" : "si.p", fmax(sd, sp), cells,
                       "the test data or features", err);
    if ((cells = sp * fmax(sp, sd)) > MAX_CELLS)
        return too_big(m, "si", "p", sp, "si.d", sd, cells, "the first layer and the feature Gram",
                       err);
    double np = (double)m->nc_p;
    if ((cells = (double)m->nc_K * np) > MAX_CELLS)
        return too_big(m, "nc", "p", np, "nc.K", (double)m->nc_K, cells, "the class means", err);
    if (m->nc_remedy == HDP_NC_REMEDY_PCA &&
        (cells = (double)m->nc_public_samples * np) > MAX_CELLS)
        return too_big(m, "nc", "public_samples", (double)m->nc_public_samples, "nc.p", np, cells,
                       "the public samples", err);
    /* [kl]: hdp_kl_model_check bounds the network and the Gram matrix */
    return HDP_OK;
}

hdp_status hdp_model_finalize(hdp_model *m, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    hdp_status st;
    if (m->spectrum == HDP_SPECTRUM_FILE && (st = load_spectrum_file(m, err)) != HDP_OK)
        return st;
    /* n and gamma: the later of the two wins; n = round(d / gamma) */
    if (m->n_given_last && m->n >= 1) {
        m->gamma = (double)m->d / (double)m->n;
    } else {
        if (m->n_given_last && m->n < 1)
            return range_fail(m, "data", "n", err, "n must be >= 1");
        double n = nearbyint((double)m->d / m->gamma);
        if (n < 1)
            return range_fail(m, "data", "gamma", err,
                              "gamma = %g gives n = round(d/gamma) = 0 samples for d = %ld: "
                              "need gamma <= 2d",
                              m->gamma, m->d);
        if (n > 1.0e12)
            return range_fail(m, "data", "gamma", err,
                              "gamma = %g gives n = round(d/gamma) = %g steps: at most 1e12 (the "
                              "bound of data.n)",
                              m->gamma, n);
        m->n = (long)n;
        m->gamma = (double)m->d / (double)m->n;
    }
    if (m->noise == HDP_NOISE_NONE)
        m->tau2 = 0;
    if (isinf(m->c) && !isinf(m->rho))
        return range_fail(m, "clip", "c", err,
                          "c = inf (no clipping) needs privacy.rho = inf: the private noise "
                          "2*c*sqrt(d)*sigma_k would be infinite");
    if (m->sched == HDP_SCHED_CONSTANT && !isinf(m->rho))
        return range_fail(m, "schedule", "kind", err,
                          "constant is the non-private baseline and needs privacy.rho = inf; "
                          "use kind = output for a private constant learning rate");
    if (m->sched == HDP_SCHED_OPTIMAL) {
        double a = m->gamma * fmax(m->c2, isinf(m->rho) ? 0 : m->c3 / m->rho);
        if (!(a > 0))
            return range_fail(m, "schedule", "c2", err,
                              "the optimal schedule needs a = gamma*max(c2, c3/rho) > 0 "
                              "(with rho = inf, c2 > 0)");
    }
    if (m->sched == HDP_SCHED_TABLE && (st = load_schedule_table(m, err)) != HDP_OK)
        return st;
    if (m->spectrum == HDP_SPECTRUM_TWOLEVEL) {
        long k = (long)nearbyint(m->twolevel_fraction * (double)m->d);
        if (m->d >= 2 && (k < 1 || k >= m->d))
            return range_fail(m, "data", "twolevel_fraction", err,
                              "fraction %g of d = %ld gives %ld large eigenvalues: need between 1 "
                              "and d-1",
                              m->twolevel_fraction, m->d, k);
    }
    if (m->bins > m->d)
        m->bins = 0; /* more bins than eigenvalues: one per eigenvalue */
    if ((st = check_sizes(m, err)) != HDP_OK)
        return st;
    m->finalized = 1;
    return HDP_OK;
}

hdp_status hdp_model_check(const hdp_model *m, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    const char *why = NULL;
    if (!m->finalized)
        why = "it was not finalized after its last change: call hdp_model_finalize";
    else if (m->d < 1 || m->d > 100000000L || m->n < 1 || m->n > 1000000000000L)
        why = "d or n is out of range (d in [1, 1e8], n in [1, 1e12])";
    else if (!(isfinite(m->gamma) && m->gamma > 0) ||
             fabs(m->gamma - (double)m->d / (double)m->n) > 1e-12 * m->gamma)
        why = "gamma is not d/n";
    else if (m->points < 2 || m->points > 1000000L)
        why = "ode.points is out of range [2, 1e6]";
    else if (!(m->rtol > 0 && m->rtol < 1) || !(m->atol > 0 && isfinite(m->atol)) ||
             m->max_steps < 1 || m->bins < HDP_BINS_AUTO)
        why = "an [ode] setting is out of range (0 < rtol < 1, atol > 0, max_steps >= 1, bins >= 0 or auto)";
    else if (m->runs < 1)
        why = "sim.runs is below 1";
    else if (!(m->c > 0) || !(m->rho > 0) || isnan(m->c) || isnan(m->rho))
        why = "clip.c and privacy.rho must be > 0";
    else if (m->spectrum == HDP_SPECTRUM_FILE && (!m->file_lambda || m->file_len != m->d))
        why = "its spectrum file is not loaded (finalize loads it)";
    else if (m->sched == HDP_SCHED_TABLE && (!m->table_t || !m->table_eta || m->table_len < 2))
        why = "its schedule table is not loaded (finalize loads it)";
    if (why)
        return hdp_fail(err, HDP_EINPUT, "model %s: %s", m->source[0] ? m->source : "(zeroed)",
                        why);
    return HDP_OK;
}

/* ---- output ---- */

static void format_value(const hdp_model *m, int i, char *buf, size_t size)
{
    const key_spec *k = &schema[i];
    const char *base = (const char *)m;
    switch (k->type) {
    case T_LONG:
        if ((k->flags & R_AUTO) && *(const long *)(base + k->offset) == HDP_BINS_AUTO)
            snprintf(buf, size, "auto");
        else
            snprintf(buf, size, "%ld", *(const long *)(base + k->offset));
        break;
    case T_DOUBLE: {
        /* cppcheck-suppress invalidPointerCast ; the double member at offsetof (schema) */
        double v = *(const double *)(base + k->offset);
        if (isinf(v)) {
            snprintf(buf, size, "inf");
        } else {
            /* shortest of %.15g/%.17g that reads back exactly */
            snprintf(buf, size, "%.15g", v);
            if (strtod(buf, NULL) != v)
                snprintf(buf, size, "%.17g", v);
        }
        break;
    }
    case T_ENUM: snprintf(buf, size, "%s", k->names[*(const int *)(base + k->offset)]); break;
    case T_PATH: snprintf(buf, size, "%s", base + k->offset); break;
    case T_SEED: snprintf(buf, size, "%llu", *(const unsigned long long *)(base + k->offset)); break;
    }
}

void hdp_model_write_meta(const hdp_model *m, FILE *out)
{
    if (!m || !out)
        return;
    fprintf(out, "# model: %s\n", m->source);
    char buf[HDP_PATH_MAX];
    for (int i = 0; i < NKEYS; i++) {
        format_value(m, i, buf, sizeof buf);
        fprintf(out, "# %s.%s = %s\n", schema[i].section, schema[i].key, buf);
    }
}

void hdp_model_write_ini(const hdp_model *m, FILE *out)
{
    if (!m || !out)
        return;
    const char *section = "";
    char buf[HDP_PATH_MAX];
    for (int i = 0; i < NKEYS; i++) {
        if (strcmp(section, schema[i].section)) {
            section = schema[i].section;
            fprintf(out, "%s[%s]\n", i ? "\n" : "", section);
        }
        format_value(m, i, buf, sizeof buf);
        if (!strcmp(schema[i].key, "n") && !strcmp(section, "data"))
            continue; /* gamma carries it */
        if (schema[i].type == T_PATH && !buf[0])
            continue;
        char cwd[HDP_PATH_MAX];
        if (schema[i].type == T_PATH && buf[0] != '/' && getcwd(cwd, sizeof cwd)) {
            /* a relative name is relative to the working directory (set_path resolved it
             * against the model file's folder): written absolute, the file names the same
             * data wherever it is read from (a --set name once moved with the INI file) */
            fprintf(out, "%s = %s/%s\n", schema[i].key, cwd, buf);
            continue;
        }
        fprintf(out, "%s = %s\n", schema[i].key, buf);
    }
}
