/*
 * hdpsgd/kl.h — Langevin diffusion / noisy GD and the KL privacy of overparameterised
 * ReLU networks (Ye et al., "Initialization matters: privacy-utility analysis of
 * overparameterized networks"; docs/theory.md §8, with section 6 for the DP notions).
 *
 * Network (Ye et al., eq. 2): widths m_0 = d, m_1 = ... = m_{L-1} = m, m_L = o;
 *   h_0 = x,  h_l = relu(W_l h_{l-1}) (l < L),  f(x) = W_L h_{L-1},  W_l in R^{m_l x m_{l-1}},
 * initialised with [W_l]_ij ~ N(0, beta_l) (eq. 5). The schemes (Table 1):
 *   LeCun  beta_l = 1/m_{l-1}      He      beta_l = 2/m_{l-1}
 *   NTK    beta_l = 2/m_l (l < L), beta_L = 1/o   (as in Table 1, whose closed form
 *          of B needs beta_L = 1/o; docs/theory.md §8.1)
 *   Xavier beta_l = 2/(m_{l-1} + m_l)
 * Linearised network (eq. 3): f_lin(x; W) = f(x; W_0) + J(x) (W - W_0), J = df/dW at W_0.
 *
 * Lemma C.3 (exact for every width: each factor is an exact conditional expectation):
 *   E ||df(x)/dW_l||_F^2 = ||x||^2 o (prod_{i<L} beta_i m_i / 2) beta_L / beta_l,
 *   summed over l = 1..L: ||x||^2 o (prod_{i<L} beta_i m_i / 2) sum_l beta_L / beta_l;
 * with ||x||^2 = d this is the constant B of eq. 7 / Theorem 4.1.
 *
 * Noisy GD (Ye et al., Appendix E; Langevin diffusion eq. 4 as eta -> 0):
 *   W_{k+1} = W_k - eta grad L(W_k; D) + sqrt(2 eta sigma^2) xi_k,  xi_k ~ N(0, I),
 *   L(W; D) = (1/n) sum_i l(f_lin(x_i; W); y_i),  T = eta * epochs (full batch: a step = an epoch).
 * KL of all iterates between neighbouring data sets D and D' (Theorem E.1 / 3.1 by the chain
 * rule: each step is a Gaussian with covariance 2 eta sigma^2 I):
 *   KL(W_{1:K} | W'_{1:K}) = sum_{k<K} eta E||grad L(W_k; D) - grad L(W_k; D')||^2 / (c sigma^2)
 * with c = 4 (HDP_KL_C). Ye et al. write c = 2 (eq. 6, 74): its step (77) takes the
 * per-coordinate variance of a step to be sigma^2 instead of 2 eta sigma^2 — equivalently its
 * Girsanov step uses sigma dB instead of the sqrt(2 sigma^2) dB of eq. 4. Settled by
 * simulation (tests/test_kl.c, `hdpsgd kl run`): for squared loss the joint law of all
 * iterates is Gaussian and its exact KL equals the c = 4 sum to rounding; the final iterate's
 * exact Gaussian KL equals it after one step and stays below it (data processing). With
 * c = 4 the bound of Corollary 4.2 becomes KL <= B T / (n^2 sigma^2) (paper: 2 B T / (n^2
 * sigma^2)).
 *
 * Neighbours: D' = D without sample j (the remove-one notion of Ye et al.'s experiments); then
 *   grad L(D) - grad L(D\j) = (G_j - grad L(D)) / (n - 1),  G_j = J_j^T l'_j,
 * so all n neighbours cost O(n o^2) per step given K q (K the NTK Gram, q the stacked l').
 * The KL privacy is the worst case over j of the expectation (over noise and initialisation).
 *
 * Reduction (exact, not an approximation): gradients lie in the row space of J, of dimension
 * r = rank(K) <= n o, K = J J^T = U diag(lambda) U^T. With M = U diag(sqrt(lambda)) and
 * W - W_0 = V z + w_perp (V = J^T U diag(lambda)^{-1/2} orthonormal), J (W - W_0) = M z,
 * grad_z L = M^T q / n and ||grad_W L||^2 = q^T K q / n^2; w_perp is a Brownian motion that no
 * gradient sees. So noisy GD runs in z in R^r with isotropic noise: all KLs are unchanged.
 * K is formed once per initialisation from per-layer Gram matrices,
 *   K_{(i,a),(j,b)} = sum_l <delta_l^a(x_i), delta_l^b(x_j)> <h_{l-1}(x_i), h_{l-1}(x_j)>,
 * delta_l^a the back-propagated signal of output a (dgemm; never the n o x p Jacobian).
 *
 * Squared loss l = |f - y|^2 / 2 makes noisy GD an Ornstein-Uhlenbeck recursion:
 *   z_{k+1} = (I - eta Lambda / n) z_k - eta M^T (f_0 - y) / n + sqrt(2 eta sigma^2) xi,
 * diagonal because M^T M = Lambda: mean mu_k = mu* (1 - a^k), mu* = -M^T (f_0 - y) / lambda,
 * variance 2 eta sigma^2 (1 - a^{2k}) / (1 - a^2), a = 1 - eta lambda / n. Then the residual
 * r = f_0 - y + M z is Gaussian and E||grad L(D) - grad L(D\j)||^2 is exact (hdp_kl_problem_exact).
 * Logistic loss (o = 1: l = log(1 + exp(-y f)); o > 1: the same for every output, y in {-1,1}^o)
 * has |l'| <= 1 per output, the hypothesis of Theorem 4.1; only Monte Carlo there.
 *
 * Randomness: the data (x_i uniform on the sphere of radius sqrt(d), teacher u_a uniform on the
 * unit sphere, y_{i,a} = sign(u_a^T x_i)) come from the xoshiro256++ stream of the seed;
 * initialisation i (weights, then its noise paths) uses that stream jumped i + 1 times, and
 * network r of the Monte Carlo at initialisation the stream jumped r + 1 times. The BLAS runs
 * single-threaded inside the library and threads share whole initialisations: results do not
 * depend on the number of threads. The library never prints and never calls exit().
 */
#ifndef HDPSGD_KL_H
#define HDPSGD_KL_H

#include "hdpsgd/model.h"
#include "hdpsgd/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The settled constant c of KL = sum eta E||Delta grad||^2 / (c sigma^2) (see above), and the
 * paper's. */
#define HDP_KL_C 4.0
#define HDP_KL_C_SEED 2.0

/* Largest depth L accepted. */
#define HDP_KL_MAX_DEPTH 64

/* ---- the [kl] section of the model files (src/families/kl_keys.c) ---- */

/* Initialisation schemes (Table 1) and losses, with their names in model files. */
typedef enum { HDP_KL_LECUN = 0, HDP_KL_HE, HDP_KL_NTK, HDP_KL_XAVIER } hdp_kl_init_kind;
typedef enum { HDP_KL_SQUARED = 0, HDP_KL_LOGISTIC } hdp_kl_loss_kind;
/* The network noisy GD trains: the linearised one of eq. 3, or the real ReLU network of eq. 2
 * (kl.network = relu; `kl run` then runs both, on the same data and initialisations). */
typedef enum { HDP_KL_LINEARISED = 0, HDP_KL_RELU } hdp_kl_network_kind;
const char *hdp_kl_init_name(hdp_kl_init_kind k);
const char *hdp_kl_loss_name(hdp_kl_loss_kind k);
const char *hdp_kl_network_name(hdp_kl_network_kind k);

/* The [kl] keys, each declared once: X(field, C type, schema type, default, range flags,
 * lo, hi, enum names, help), in the order of the model files. This list makes the values'
 * struct hdp_kl_keys below and the section's schema rows (kl_keys.c: parsing, the key's one
 * range, defaults, `hdpsgd keys`, the man page). The flags, bounds and names are used only
 * where the rows are made (core/schema.h), as for [nc] (hdpsgd/nc.h). */
#define HDP_KL_KEYS(X) \
    X(init, hdp_kl_init_kind, ENUM, "he", 0, 0, 0, kl_init_names, \
      "initialisation (Ye et al., Table 1): lecun | he | ntk | xavier") \
    X(depth, long, LONG, "6", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 64, NULL, \
      "depth L (integer in [2, 64]): L - 1 hidden ReLU layers and a linear output layer") \
    X(width, long, LONG, "256", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL, \
      "hidden width m (integer in [1, 1e5])") \
    X(d, long, LONG, "32", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL, \
      "input dimension d (integer in [1, 1e5]); x uniform on the sphere of radius sqrt(d)") \
    X(o, long, LONG, "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 4000, NULL, \
      "outputs o (integer in [1, 4000]); labels sign(u_a^T x) of a random linear teacher") \
    X(n, long, LONG, "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 4000, NULL, \
      "training samples n (integer in [2, 4000]; n o <= 4000)") \
    X(sigma, double, DOUBLE, "0.03", HDP_R_LO_CLOSED, 1e-50, 0, NULL, \
      "noise scale sigma >= 1e-50: noisy GD adds sqrt(2 eta sigma^2) N(0, I) per step (eq. 4); " \
      "the KL grows as eta/sigma^2 (smaller sigma overflows its bound)") \
    X(eta, double, DOUBLE, "0.001", HDP_R_LO_OPEN | HDP_R_HI_CLOSED, 0, 1e50, NULL, \
      "step size eta in (0, 1e50]") \
    X(epochs, long, LONG, "50", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1000000, NULL, \
      "full-batch noisy GD steps (integer >= 1); Langevin time T = eta epochs") \
    X(loss, hdp_kl_loss_kind, ENUM, "logistic", 0, 0, 0, kl_loss_names, \
      "squared (|f - y|^2/2: an OU process, exact KL) | logistic (the seed's, per output)") \
    X(budget, double, DOUBLE, "1", HDP_R_LO_OPEN, 0, 0, NULL, \
      "target KL privacy budget eps > 0 for Corollary 6.4 (kl bound)") \
    X(delta, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL, \
      "target delta in [0, 1) of (0, delta)-DP by Pinsker, KL budget 2 delta^2; 0 = none") \
    X(runs, long, LONG, "32", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL, \
      "noise paths per initialisation of `kl run` (integer in [2, 1e6]; --runs overrides it)") \
    X(inits, long, LONG, "8", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL, \
      "random initialisations of `kl run` (integer in [1, 1e5])") \
    X(init_runs, long, LONG, "1000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e8, NULL, \
      "networks drawn by `kl init` per scheme and depth (integer in [2, 1e8]; --runs overrides " \
      "it)") \
    X(network, hdp_kl_network_kind, ENUM, "linearised", 0, 0, 0, kl_network_names, \
      "what `kl run` trains: linearised (f(W_0) + J (W - W_0), eq. 3) | relu (also the real " \
      "ReLU network by back-propagation, on the same data and initialisations)") \
    X(relu_runs, long, LONG, "4", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL, \
      "noise paths per initialisation of the real network (kl.network = relu; integer in " \
      "[2, 1e6]): each costs a forward and backward pass per epoch")

#define HDP_KL_FIELD_(f, ctype, ...) ctype f;

/* The values of the [kl] keys (`hdpsgd keys` gives their meaning and ranges): init, depth
 * L >= 2 and hidden width m; input dimension d, outputs o, training samples n; noise
 * sqrt(2 eta sigma^2) per step and step size eta; epochs (full-batch steps, T = eta
 * epochs); loss; budget (target KL, Corollary 6.4); delta (of (0, delta)-DP by Pinsker;
 * 0 = none); runs and inits (noise paths per initialisation, initialisations); init_runs
 * (networks of `hdpsgd kl init`); network (linearised, or relu: `kl run` also trains the
 * real network) and relu_runs (its noise paths per initialisation). */
typedef struct {
    HDP_KL_KEYS(HDP_KL_FIELD_)
} hdp_kl_keys;

/* The [kl] values of a model (stored in the model: valid while m is; NULL only for a NULL
 * m). */
const hdp_kl_keys *hdp_kl_keys_of(const hdp_model *m);

/* ---- the architecture and the closed forms (Ye et al., Table 1, eq. 7, Lemma C.3) ---- */

typedef struct {
    hdp_kl_init_kind init;
    int L;        /* depth >= 2 (Table 1 assumes L >= 2) */
    long d, m, o; /* input dimension, hidden width, outputs */
} hdp_kl_arch;

/* widths m_0..m_L (array of L + 1) */
void hdp_kl_widths(const hdp_kl_arch *a, long *widths);

/* per-layer variances beta_1..beta_L of the scheme (beta[0] is set to 0) */
void hdp_kl_betas(const hdp_kl_arch *a, double *beta);

/* Lemma C.3 (Ye et al., eq. 33): E ||df(x)/dW||_F^2 for ||x||^2 = x2, and per layer
 * (per_layer[l], l = 1..L; per_layer[0] = total) when per_layer is not NULL. */
double hdp_kl_grad_norm2(const hdp_kl_arch *a, double x2, double *per_layer);

/* B of eq. 7: d o (prod_{i<L} beta_i m_i / 2) sum_l beta_L / beta_l (the product formula;
 * = hdp_kl_grad_norm2 at ||x||^2 = d). */
double hdp_kl_B(const hdp_kl_arch *a);

/* B from the closed forms of Table 1 (L >= 2):
 *   LeCun  o m (L - 1 + d/m) / 2^(L-1)        He  o m (L - 1 + d/m)
 *   NTK    d m ((L - 1)/2 + o/m)
 *   Xavier o d (L - 1 + (d + o)/(2m)) / (2^(L-3) (1 + d/m) (1 + o/m)) */
double hdp_kl_B_table(const hdp_kl_arch *a);

/* The lazy-training distance of Lemma 6.3 (eq. 9) with its log factors dropped (an order of
 * magnitude, not a bound): max{1 / (d beta_L prod_{i<L} beta_i m_i), 1} n / sum_l 1/beta_l. */
double hdp_kl_R_lemma63(const hdp_kl_arch *a, long n);

/* Corollary 4.2 with constant c: KL <= 4 B T / (c n^2 sigma^2), i.e. the integral of
 * Theorem 4.1's 4 B / n^2 over [0, T] divided by c sigma^2 (c = 2: the paper's 2BT/(n^2 sigma^2);
 * c = HDP_KL_C = 4: B T / (n^2 sigma^2)). */
double hdp_kl_bound(double B, double T, long n, double sigma, double c);

/* Corollary 6.4 with constant c for a KL budget eps:
 *   sigma^2(T) = 4 B T / (c eps n^2)                   (the noise that meets eps at time T)
 *   T* = sqrt(c eps n R / (4 B)), sigma*^2 = sigma^2(T*)   (minimise R/(2T) + sigma^2 n / 2,
 *   the bound 1/n^2 + R/(2T) + sigma^2 n/2 of eq. 72 without its 1/n^2; c = 2 gives the
 *   paper's T* = sqrt(eps n R / (2B)))
 *   risk* = R/(2 T*) + sigma*^2 n / 2 = 2 sqrt(R B / (c eps n)). */
typedef struct {
    double sigma2_at_T, T_opt, sigma2_opt, risk_opt;
} hdp_kl_budget;
/* What `hdpsgd kl bound` reports at the model's architecture (hdpsgd/fields.h: kl_arch, then
 * kl_beta once per layer l = 1..L, then kl_bound): the closed forms with the constant of eq.
 * 7 (B) and of the paper's table (B_table), the KL bound at T with c = HDP_KL_C and with the
 * paper's c (the _seed values), the budget's sigma^2 and optimum, the delta target's budget
 * (NaN: none). */
typedef struct {
    hdp_kl_arch a;
    double beta[HDP_KL_MAX_DEPTH + 1];
    double B, B_table, T;
    long n;
    double sigma, kl_bound, kl_bound_seed, budget;
    hdp_kl_budget b4, b2; /* c = HDP_KL_C, the paper's */
    double R, delta_target, budget_for_delta, sigma_for_delta;
} hdp_kl_bound_summary;

/* One row of kl bound's CSV (hdpsgd/fields.h: kl_bound_csv): at (depth, width) on one axis,
 * each scheme's B (eq. 7), B of Table 1 and the KL bounds of Corollary 4.2 (C and the seed's
 * C), the schemes in hdp_kl_init_name's order (lecun, he, ntk, xavier). */
typedef struct {
    const char *axis; /* "depth" or "width" */
    long depth, width;
    double B[4], B_table[4], kl[4], kl_seed[4];
} hdp_kl_bound_row;

void hdp_kl_budget_solve(double B, double R, long n, double eps, double T, double c,
                         hdp_kl_budget *out);

/* Lemma 3.2 (Ye et al.; docs/theory.md §8.1), the general KL bound, for the toolkit's remove-one
 * neighbours and constant c: with diff0 = E||Delta_0||^2 (the gradient difference at
 * initialisation), grad0 = E||grad L(W_0; D)||^2, beta and cns (the lemma's c) the constants of
 * its relaxed smoothness ||grad l(W) - grad l(W')|| < max{cns, beta ||W - W'||_{M_T}}, rank =
 * rank(M_T), x = 2 + beta^2:
 *   int_0^T E||Delta_t||^2 dt <= 2 T diff0 + (8 / (n-1)^2) (beta^2 I(T) + cns^2 T),
 *   I(T) = (grad0 + 2 sigma^2 rank + cns^2) ((e^{x T} - 1)/x - T)/x
 * (the paper's replace-one form has 2/n^2 for 8/(n-1)^2: a remove-one difference
 * (G_j - grad L)/(n-1) moves twice), divided by c sigma^2. Returns the bound; *exp_term (when
 * not NULL) its part 8 beta^2 I(T)/((n-1)^2 c sigma^2), exponential in T. inf when e^{x T}
 * overflows a double (the bound is then vacuous). */
double hdp_kl_lemma32(double T, long n, double sigma, double diff0, double grad0, double beta,
                      double rank, double cns, double c, double *exp_term);

/* log10 of hdp_kl_lemma32's bound, finite where the bound overflows (for large x T the
 * exponential part is 8 beta^2 (grad0 + 2 sigma^2 rank + cns^2) e^{x T}/((n-1)^2 x^2 c sigma^2)
 * up to a factor 1 - (1 + x T) e^{-x T}, taken into account). */
double hdp_kl_lemma32_log10(double T, long n, double sigma, double diff0, double grad0,
                            double beta, double rank, double cns, double c);

/* Pinsker (Ye et al., A.2): eps-KL privacy gives (0, delta)-DP with delta = sqrt(eps / 2),
 * capped at 1 (vacuous from eps = 2 on); the KL budget of a target delta is 2 delta^2. */
double hdp_kl_pinsker_delta(double kl);

/* ---- random ReLU networks ---- */

typedef struct {
    hdp_kl_arch arch;
    long w[HDP_KL_MAX_DEPTH + 1];     /* widths m_0..m_L */
    double beta[HDP_KL_MAX_DEPTH + 1];
    double *W[HDP_KL_MAX_DEPTH + 1];  /* W[l]: m_l x m_{l-1} row-major, l = 1..L */
} hdp_kl_net;

/* Check the architecture (HDP_EINPUT naming [kl] depth/width/d/o) and allocate. */
hdp_status hdp_kl_net_alloc(const hdp_kl_arch *a, hdp_kl_net *net, hdp_error *err);
void hdp_kl_net_free(hdp_kl_net *net); /* accepts a half-built net */

/* Draw every weight from N(0, beta_l) on the stream g (layer 1 first, row-major). */
void hdp_kl_net_draw(hdp_kl_net *net, hdp_xoshiro *g);

/* x uniform on the sphere of radius sqrt(d) (a normalised Gaussian vector). */
void hdp_kl_sphere(hdp_xoshiro *g, long d, double *x);

/* Forward pass and Jacobian Gram at W_0 for n inputs X (n x d row-major):
 * f0 (n x o), K ((n o) x (n o), index i*o + a, full symmetric) when not NULL, and
 * layer_norm2 (n x L: ||df(x_i)/dW_l||_F^2 summed over outputs, column l-1) when not NULL.
 * Single-threaded BLAS (dgemm); HDP_ENOMEM. */
hdp_status hdp_kl_net_jacobian(const hdp_kl_net *net, const double *X, long n, double *f0,
                               double *K, double *layer_norm2, hdp_error *err);

/* The real network's loss L(W; D) = (1/n) sum_i l(f(x_i; W); y_i) (into *loss), its gradient
 * (grad: a net of the same architecture, grad->W[l] = dL/dW_l) and, when diff2 is not NULL,
 * the squared gradient difference of every remove-one neighbour,
 *   diff2[j] = ||grad L(W; D) - grad L(W; D\j)||^2 = ||G_j - grad L(W; D)||^2 / (n - 1)^2,
 * G_j the gradient of sample j's loss: per layer G_{j,l} = e_{j,l} h_{j,l-1}^T with
 * e_{j,L} = l'(f(x_j); y_j) and e_{j,l} = 1[W_l h_{j,l-1} > 0] .* W_{l+1}^T e_{j,l+1}, so
 * ||G_j||^2 = sum_l ||e_{j,l}||^2 ||h_{j,l-1}||^2 and <G_j, grad L> = sum_l e_{j,l}^T
 * (grad L)_l h_{j,l-1}: forward and backward passes by dgemm, four per layer, never a per-sample
 * gradient. Y is n x o (index i*o + a). HDP_ENOMEM. */
hdp_status hdp_kl_net_gradient(const hdp_kl_net *net, const double *X, const double *Y, long n,
                               hdp_kl_loss_kind loss, double *loss_value, hdp_kl_net *grad,
                               double *diff2, hdp_error *err);

/* ---- Monte Carlo of Lemma C.3 at initialisation ---- */

typedef struct {
    long runs;
    double mean[HDP_KL_MAX_DEPTH + 1];    /* [0] total, [l] layer l: MC mean of ||df/dW_l||^2 */
    double stderr_[HDP_KL_MAX_DEPTH + 1]; /* standard errors */
    double formula[HDP_KL_MAX_DEPTH + 1]; /* Lemma C.3 at ||x||^2 = d (= B for [0]) */
    double z;                             /* (mean - formula) / stderr for the total */
    double seconds;
} hdp_kl_init_result;

/* runs independent networks (network r: the stream of seed jumped r + 1 times, x then the
 * weights), one input x uniform on the sphere of radius sqrt(d) each. */
hdp_status hdp_kl_init_mc(const hdp_kl_arch *a, long runs, unsigned long long seed, int threads,
                          hdp_kl_init_result *res, hdp_error *err);

/* ---- noisy GD on the linearised network ---- */

typedef struct {
    hdp_kl_arch arch;
    long n;                  /* training samples */
    hdp_kl_loss_kind loss;
    double sigma, eta;       /* noise sqrt(2 eta sigma^2) per step, step size */
    long epochs;             /* full-batch steps K; T = eta K */
    long runs;               /* noise paths per initialisation */
    long inits;              /* random initialisations */
    unsigned long long seed;
    hdp_kl_network_kind network; /* what hdp_kl_run trains (0 = linearised) */
} hdp_kl_spec;

/* The [kl] section and sim.seed (network included: hdp_kl_run then trains that network;
 * runs = kl.relu_runs for the real network, kl.runs for the linearised one). */
void hdp_kl_spec_from_model(const hdp_model *m, hdp_kl_spec *spec);

/* Combinations and sizes of the [kl] keys that the schema's ranges cannot express (n o,
 * the number of weights, the per-epoch records): HDP_EINPUT naming the key and where it was
 * set (hdp_model_fail_key). */
hdp_status hdp_kl_model_check(const hdp_model *m, hdp_error *err);

/* Range and size checks of a spec (HDP_EINPUT naming the [kl] key). */
hdp_status hdp_kl_spec_check(const hdp_kl_spec *s, hdp_error *err);

/* The synthetic data of the seed's stream: X (n x d), Y (n x o, entries +-1). */
hdp_status hdp_kl_data(const hdp_kl_spec *s, double *X, double *Y, hdp_error *err);

/* One initialisation: the linearised problem in the coordinates z of the row space of J. */
typedef struct {
    long n, o, N, r;  /* N = n o, r = rank K */
    double *K;        /* [N x N] NTK Gram at W_0 */
    double *f0, *y;   /* [N] outputs at W_0 and labels (index i*o + a) */
    double *lambda;   /* [r] eigenvalues of K > 0, decreasing */
    double *M;        /* [N x r] U diag(sqrt(lambda)), row-major */
    double *Mt_res0;  /* [r] M^T (f0 - y) */
    double grad2;     /* mean over samples of ||J(x_i)||_F^2 (a Monte Carlo of B) */
    double R_lazy;    /* o = 1: ||W* - W_0||^2 of the min-norm solution of f_lin = 2 ln(n) y
                         (Ye et al., eq. 62), (2 ln n y - f0)^T K^+ (2 ln n y - f0); else NaN */
} hdp_kl_problem;

/* Draw initialisation init_index (stream seed jumped init_index + 1 times) and build the
 * problem for data X, Y. */
hdp_status hdp_kl_problem_build(const hdp_kl_spec *s, const double *X, const double *Y,
                                long init_index, hdp_kl_problem *pb, hdp_error *err);
void hdp_kl_problem_free(hdp_kl_problem *pb);

/* Squared loss, exact: E||grad L(z_k; D) - grad L(z_k; D\j)||^2 for every j and every
 * k = 0..epochs - 1 under the OU recursion above: out[k * n + j]. */
hdp_status hdp_kl_problem_exact(const hdp_kl_problem *pb, double eta, double sigma,
                                long epochs, double *out, hdp_error *err);

/* Squared loss, exact: the KL between the Gaussian laws of the k-th iterate on D and on D\j
 * (conditional on W_0), for k = 1..epochs: out[k - 1]. One eigendecomposition of the
 * Hessian of D\j, then O(r^2) per k. */
hdp_status hdp_kl_problem_final_kl(const hdp_kl_problem *pb, double eta, double sigma,
                                   long epochs, long j, double *out, hdp_error *err);

/* Squared loss: mean and covariance of the joint law of (z_1, ..., z_K) on D and on D\j,
 * built by the recursion with dense matrices (dimension K r; for tests of the constant c):
 * mean[K r], cov[(K r) x (K r)]; which = 0 for D, 1 for D\j. */
hdp_status hdp_kl_problem_joint(const hdp_kl_problem *pb, double eta, double sigma, long K,
                                long j, int which, double *mean, double *cov, hdp_error *err);

/* KL(N(mu1, S1) | N(mu2, S2)) in dimension dim by Cholesky factorisations (LAPACKE_dpotrf):
 * (tr(S2^-1 S1) + (mu2 - mu1)^T S2^-1 (mu2 - mu1) - dim + ln det S2 - ln det S1) / 2.
 * HDP_ENUMERIC when a covariance is not positive definite. */
hdp_status hdp_kl_gauss(long dim, const double *mu1, const double *S1, const double *mu2,
                        const double *S2, double *kl, hdp_error *err);

/* The result of hdp_kl_run. KL values use c = HDP_KL_C (multiply by 2 for the paper's). */
typedef struct {
    long epochs, n, inits, runs;
    long worst;          /* j*: the removed sample with the largest KL after `epochs` steps */
    /* [epochs + 1], entry k = after k steps (0 at k = 0), for j*: */
    double *kl_mc;       /* Monte Carlo, mean over initialisations and paths */
    double *kl_mc_se;    /* its standard error (initialisations and paths) */
    double *kl_mc_se_path; /* the part of it that is path noise (for comparing with kl_exact) */
    double *kl_init_sd;  /* standard deviation over initialisations of the per-init estimate */
    double *kl_mc_max;   /* max over j of the Monte Carlo means (biased up by the max) */
    double *kl_exact;    /* squared loss: exact trajectory KL (OU moments); else NaN */
    double *kl_final;    /* squared loss: exact KL of the law of the k-th iterate; else NaN */
    double *train_loss;  /* mean training loss L(W_k; D) */
    double grad2;        /* mean ||J(x_i)||^2 over samples and initialisations (~ B) */
    double eta_lambda_max; /* max over initialisations of eta lambda_max(K) / n */
    double R_lazy;       /* mean of hdp_kl_problem.R_lazy */
    long rank;           /* min over initialisations of rank K */
    int unstable;        /* squared loss with eta lambda_max / n >= 2: not simulated (NaN) */
    /* Lemma 3.2 (hdp_kl_lemma32) along training, linearised network only (NaN for the real
     * one, which has no smoothness constant): [epochs + 1] the bound at T = eta k, its
     * exponential part and log10 of the bound (finite where the bound overflows); its inputs: diff0 = E||Delta_0||^2 of j* (from kl_mc[1]), grad0 the
     * mean over initialisations of ||grad L(W_0; D)||^2 = q^T K q / n^2, beta = l''_max
     * max_i ||J(x_i)||_F^2 (l''_max = 1 squared, 1/4 logistic; the Frobenius norm bounds the
     * operator norm, equal for o = 1) over samples and initialisations, rank = the largest
     * rank K, cns = 0 (the linearised loss is smooth) */
    double *lemma32_bound, *lemma32_exp, *lemma32_log10;
    double lemma32_diff0, lemma32_grad0, lemma32_beta, lemma32_rank;
    double seconds;
} hdp_kl_run_result;

/* One scheme of `hdpsgd kl run` at its last epoch, as its summary reads it (hdpsgd/fields.h:
 * kl_run_scheme under <scheme>_, kl_run_relu under <scheme>_relu_ with linearised the
 * linearised network's result): r, the epoch, B of eq. 7, T = eta epochs, n, sigma, and
 * whether the loss is squared (the exact KL then). */
typedef struct {
    const hdp_kl_run_result *r, *linearised;
    long epoch, n;
    double B, T, sigma;
    int squared;
} hdp_kl_run_scheme;

/* Noisy GD on the linearised network: s->inits initialisations in parallel (threads; 0 = one
 * per core), each with s->runs noise paths simulated together (dgemm per step).
 * With s->network = HDP_KL_RELU, noisy GD on the real ReLU network instead:
 *   W_{k+1} = W_k - eta grad L(W_k; D) + sqrt(2 eta sigma^2) xi_k  in all p weights,
 * initialisation i the same W_0 as the linearised run's (its stream, jumped i + 1 times, draws
 * the weights first), then its noise paths one after the other from the block Gaussian stream
 * (hdp_normals) started at that stream's state. The KL is the same Monte Carlo of
 * sum_k eta E||grad L(W_k; D) - grad L(W_k; D\j)||^2 / (c sigma^2) along the D-trajectories
 * (hdp_kl_net_gradient), the worst j by its Monte Carlo mean after `epochs` steps. kl_exact and
 * kl_final are NaN, rank 0, eta_lambda_max and R_lazy NaN; grad2 is the mean ||J(x_i)||^2 at
 * W_0 as for the linearised network. Cost per step and path: about 8 n p flops (p weights).
 * HDP_EINPUT (spec), HDP_ENOMEM, HDP_ENUMERIC (non-finite values). */
hdp_status hdp_kl_run(const hdp_kl_spec *s, int threads, hdp_kl_run_result *res, hdp_error *err);
void hdp_kl_run_result_free(hdp_kl_run_result *res);

#ifdef __cplusplus
}
#endif
#endif
