/*
 * hdpsgd/nc.h — NoisyGD / NoisySGD on neural-collapse features: when is the private
 * error independent of the feature dimension p, and when do perturbations of the
 * features bring p back (the NC paper, "Neural collapse meets differential privacy";
 * docs/theory.md §6 and §8).
 *
 * Features (the NC paper, Definition 1). The K-simplex equiangular tight frame
 *     M = sqrt(K/(K-1)) P (I_K - 1 1^T / K),   P^T P = I_K,   ||M_k|| = 1,
 *     M_k^T M_j = -1/(K-1) (j != k),   sum_k M_k = 0.
 * The toolkit takes P = [Q; 0] with Q the K x K Householder reflection that maps
 * 1/sqrt(K) to e_K: then every M_k lives in the first K-1 coordinates of R^p, and for
 * K = 2 M = [-e_1, e_1], the NC paper's re-parameterised binary problem. A sample of class k
 * has the feature M_k (perfect collapse) plus the perturbation below; labels are one-hot
 * (ce, squared) or y = -1 for class 1 and y = +1 for class 2 (logistic, K = 2).
 * Pre-training on more classes (the NC paper, Theorem 4): with nc.frame_classes = K0 > K the K
 * classes are the first K vertices M_1 .. M_K of the K0-simplex ETF (the same construction
 * with K0; they live in the first K0-1 coordinates, need p >= K0, and M_k^T M_j = -1/(K0-1),
 * sum_k M_k != 0).
 * Class sizes (n = nc.n in total): balanced (differing by at most one), or with
 * imbalance alpha class 1 gets round(alpha n) and classes 2..K share the rest.
 *
 * Perturbations of l_inf size beta (the NC paper, sections 3.2, 3.3; v = beta s, s a fixed
 * vector of random signs drawn once from the base stream, so ||v||_2 = beta sqrt(p)):
 *   test-offset   test features M_c + v (fixed);
 *   adversarial   test features M_c + v(W) with v chosen against the trained W,
 *                 ||v||_inf <= beta: class c is misclassified iff for some j != c
 *                 (W_j - W_c)^T A M_c + beta ||A^T (W_j - W_c)||_1 >= 0 (exact);
 *   stochastic    test features M_c + beta s', s' fresh random signs for every test point;
 *   train-offset  training features M_k + v;
 *   both          training and test features offset by the same v;
 *   per-sample    training features M_k + beta s_i, fresh signs for every sample and draw.
 * Remedies (the NC paper, section 4):
 *   center  training features minus their mean, test features minus the mean of the test
 *           class centres (a fixed test offset cancels; zero-mean noise is untouched);
 *   pca     z = P^T x with P (p x (K-1)) the top K-1 principal directions of nc.public_samples
 *           public samples drawn like the training features (class i mod K), from their
 *           CENTRED second moment (the NC paper, section 4.3 uses the uncentred one, whose top
 *           eigenvector is the offset v as soon as ||v||^2 > 1/(K-1)); training and
 *           testing then happen in R^(K-1) (A = P^T above; A = I otherwise). With per-sample
 *           noise the public second moment is a spiked covariance (spike 1/(K-1) on span(M),
 *           noise beta^2): the mean squared cosine between span(P) and span(M), reported as
 *           pca_alignment, is about (1 - g/l^2)/(1 + g/l) with g = p/m, l = 1/((K-1) beta^2)
 *           (Baik-Ben Arous-Peche; Paul 2007), so pca restores flatness only while
 *           p << m/((K-1) beta^2), and not at all beyond p = m/((K-1)^2 beta^4).
 *   projection  z = P^T x with the perturbed projection P = [e_1 .. e_{K-1}] + Delta (p x (K-1);
 *           for K = 2 the NC paper's P = e_1 + Delta, Theorem 5), Delta = beta_0 S0 with S0
 *           fixed random signs (||Delta||_inf = beta_0 = nc.projection_beta), not normalised;
 *           [e_1 .. e_{K-1}] spans the ETF (so it needs frame_classes = K).
 *
 * The algorithm (the NC paper, eq. (1) and NoisySGD, with the clipping fixed: the paper writes
 * max{1, G/||g||}, which never clips and scales small gradients UP; the sensitivity
 * argument needs min{1, G/||g||}):
 *   NoisyGD  (batch = 0): W <- W - eta   ( sum_i       clip_G(g_i) + N(0, sigma^2 I) )
 *   NoisySGD (batch = b): W <- W - eta/b ( sum_{i in B} clip_G(g_i) + N(0, sigma^2 I) )
 * clip_G(g) = min(1, G/||g||) g (Frobenius norm), sigma^2 = G^2/(2 rho), B a uniform
 * subset of b samples drawn afresh every step, T = nc.steps steps from W = 0 or from
 * N(0, init_std^2) entries. Losses (sum over samples): ce (softmax cross-entropy,
 * gradient (softmax(Wx) - e_k) x^T), squared (1/2 ||Wx - e_k||^2, gradient
 * (Wx - e_k) x^T) and logistic (K = 2, one vector theta: log(1 + exp(-y theta^T x)),
 * gradient -y x / (1 + exp(y theta^T x))).
 *
 * Privacy convention. nc.rho is the zCDP parameter PER STEP of the NC paper, i.e. rho_z in
 * the terms of hdpsgd/privacy.h (NOT the rho of docs/theory.md §1, whose output is
 * (rho^2/2)-zCDP): adding or removing one sample moves the clipped sum by at most G, so
 * the Gaussian mechanism with variance G^2/(2 rho) is rho-zCDP; T steps compose to
 * (T rho)-zCDP, reported as (epsilon, delta) by hdp_zcdp_epsilon_cks (docs/theory.md §6). NoisySGD
 * is accounted the same way (no amplification by subsampling claimed, as in the paper).
 * remedy = center treats the feature mean as public (the NC paper, section 4.1 bounds the
 * extra sensitivity by n/(n-1) for K = 2 balanced classes); pca uses public data only.
 *
 * Error. The misclassification error of a trained W is the mean over the K classes
 * (a balanced test distribution) of the probability that argmax_j (W z)_j != c (ties
 * count as errors); it is exact for every W except under perturbation = stochastic,
 * where it is the average over nc.test_samples random test points per class.
 * hdp_nc_run averages it over nc.draws independent draws of the private noise (and of
 * the random perturbations). Draw d uses the stream of nc.seed jumped d + 1 times
 * (hdpsgd/rng.h); the fixed offset and the public samples come from the unjumped
 * stream: results do not depend on the number of threads.
 *
 * Exact one-step error (docs/theory.md §8, derived in nc_exact.c): after one NoisyGD step from
 * W = 0 on a deterministic training set, the scores of a test point z are Gaussian,
 *     W_1 z = -eta (S z + Xi z),  S = sum_k n_k c_k r_k z_k^T,  Xi z ~ N(0, sigma^2 ||z||^2 I),
 * so with mu = -S z_c the error of class c is
 *     1 - E_Z prod_{j != c} Phi(Z + (mu_c - mu_j) / (sigma ||z_c||)),   Z ~ N(0, 1),
 * and for perfect collapse with balanced classes and no clipping (G >= sqrt(1 - 1/K)
 * for ce, G >= 1 for squared) it is 1 - E_Z[Phi(Z + n/((K-1) sigma))^(K-1)]: Phi(-n/(sqrt2
 * sigma)) for K = 2, and Phi(-n/(2 sigma)) for the logistic model (the NC paper, Theorem 3).
 * It does not depend on p, on eta, or (for K = 2) on the class balance. For K of K0 frame
 * vertices (Theorem 4) the gap n/(K-1) becomes n K0/(K (K0-1)) (balanced, ce or squared).
 * Theorem 5 (K = 2, per-sample noise, remedy = projection, one step from 0, no clipping):
 * with a = 1 + Delta_1, z_i = y_i a + u_i, u_i = beta sum_j P_j s_ij, the margin is
 * n a + U + kappa sigma Z, U = beta a R_1 + beta beta_0 R', R_1 and R' sums of n and
 * (p-1) n independent signs, kappa = sqrt2 (ce, squared) or 2 (logistic): the error is
 * P(margin <= 0), summed exactly over the two binomial laws (hdp_nc_exact_error_projection).
 *
 * The library prints nothing and never exits; errors come back as hdp_status.
 */
#ifndef HDPSGD_NC_H
#define HDPSGD_NC_H

#include "hdpsgd/error.h"
#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the [nc] section of the model files (src/families/nc_keys.c) ---- */

/* Losses, initialisations, perturbations and remedies, with their names in model files. */
typedef enum { HDP_NC_CE = 0, HDP_NC_LOGISTIC, HDP_NC_SQUARED } hdp_nc_loss_kind;
typedef enum { HDP_NC_INIT_ZERO = 0, HDP_NC_INIT_GAUSSIAN } hdp_nc_init_kind;
typedef enum {
    HDP_NC_PERT_NONE = 0,
    HDP_NC_PERT_TEST_OFFSET,
    HDP_NC_PERT_ADVERSARIAL,
    HDP_NC_PERT_STOCHASTIC,
    HDP_NC_PERT_TRAIN_OFFSET,
    HDP_NC_PERT_BOTH,
    HDP_NC_PERT_PER_SAMPLE
} hdp_nc_perturbation_kind;
typedef enum {
    HDP_NC_REMEDY_NONE = 0,
    HDP_NC_REMEDY_CENTER,
    HDP_NC_REMEDY_PCA,
    HDP_NC_REMEDY_PROJECTION
} hdp_nc_remedy_kind;
const char *hdp_nc_loss_name(hdp_nc_loss_kind k);
const char *hdp_nc_init_name(hdp_nc_init_kind k);
const char *hdp_nc_perturbation_name(hdp_nc_perturbation_kind k);
const char *hdp_nc_remedy_name(hdp_nc_remedy_kind k);

/* The [nc] keys, each declared once: X(field, C type, schema type, default, range flags,
 * lo, hi, enum names, help), in the order of the model files. This list makes the values'
 * struct hdp_nc_keys below, the section's schema rows (nc_keys.c: parsing, the key's one
 * range, defaults, `hdpsgd keys`, the man page), the spec hdp_nc_spec, its copy from a model
 * and its range check (nc_spec.c). The flags, bounds and names are used only where the rows
 * are made (core/schema.h). */
#define HDP_NC_KEYS(X) \
    X(K, long, LONG, "10", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1000, NULL, \
      "classes K (integer in [2, 1000]); features are the K-simplex ETF in R^p") \
    X(p, long, LONG, "1000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e7, NULL, \
      "feature dimension p (integer in [K, 1e7]; at least frame_classes)") \
    X(frame_classes, long, LONG, "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e6, NULL, \
      "K0: 0 = K (the features are the K-simplex ETF); K0 in [K, p]: the K classes are K " \
      "vertices of the larger K0-simplex ETF (the NC paper, Theorem 4: pre-training on K0 " \
      "classes)") \
    X(n, long, LONG, "250", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e7, NULL, \
      "training samples in total, over all classes (integer in [K, 1e7])") \
    X(imbalance, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL, \
      "0 = balanced classes; alpha in (0, 1): class 1 has round(alpha n) samples, the other " \
      "classes share the rest evenly (K = 2: the NC paper's alpha)") \
    X(G, double, DOUBLE, "1", HDP_R_LO_OPEN, 0, 0, NULL, \
      "clipping threshold G > 0: per-sample gradients g are scaled by min(1, G/||g||)") \
    X(rho, double, DOUBLE, "0.005", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL, \
      "zCDP parameter PER STEP (the NC paper's rho; rho_z in privacy.h terms), > 0 or inf (no " \
      "noise): noise N(0, G^2/(2 rho) I); T steps are (T rho)-zCDP") \
    X(steps, long, LONG, "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL, \
      "steps T of NoisyGD / NoisySGD (integer in [1, 1e7])") \
    X(eta, double, DOUBLE, "1", HDP_R_LO_OPEN, 0, 0, NULL, \
      "learning rate eta > 0") \
    X(loss, hdp_nc_loss_kind, ENUM, "ce", 0, 0, 0, nc_loss_names, \
      "loss: ce (softmax cross-entropy) | logistic (K = 2, one vector theta) | squared " \
      "(one-hot targets)") \
    X(init, hdp_nc_init_kind, ENUM, "zero", 0, 0, 0, nc_init_names, \
      "initial weights: zero | gaussian (N(0, init_std^2) entries)") \
    X(init_std, double, DOUBLE, "1", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "init = gaussian: standard deviation >= 0 of every initial weight (the NC paper, E: 1)") \
    X(perturbation, hdp_nc_perturbation_kind, ENUM, "none", 0, 0, 0, nc_perturbation_names, \
      "none | test-offset | adversarial | stochastic (test) | train-offset | both (train and " \
      "test offset) | per-sample (training); all of l_inf size beta (hdpsgd help nc)") \
    X(beta, double, DOUBLE, "0.1", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "l_inf size beta >= 0 of the perturbation") \
    X(remedy, hdp_nc_remedy_kind, ENUM, "none", 0, 0, 0, nc_remedy_names, \
      "none | center (subtract the feature mean) | pca (project on the top K-1 principal " \
      "directions of public samples) | projection (on the perturbed direction e_1 + Delta, " \
      "||Delta||_inf = projection_beta: the NC paper, Theorem 5)") \
    X(projection_beta, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL, \
      "remedy = projection: beta_0 in [0, 1), the l_inf size of the perturbation Delta of the " \
      "projection e_1 + Delta (beta_0 <= 1/p keeps the error dimension-free)") \
    X(public_samples, long, LONG, "500", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e7, NULL, \
      "remedy = pca: public samples (integer in [2, 1e7]), drawn like the training features") \
    X(batch, long, LONG, "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e7, NULL, \
      "0 = full batch (NoisyGD); b in [1, n] = NoisySGD with uniform batches of b samples; " \
      "at most 1e7") \
    X(draws, long, LONG, "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e8, NULL, \
      "Monte Carlo draws (integer in [1, 1e8]; --draws overrides it)") \
    X(test_samples, long, LONG, "10", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL, \
      "perturbation = stochastic: random test points per class and draw (integer in [1, 1e6])") \
    X(delta, double, DOUBLE, "1e-5", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL, \
      "delta in (0, 1) of the reported (epsilon, delta)-DP (Canonne-Kamath-Steinke)")

#define HDP_NC_FIELD_(f, ctype, ...) ctype f;

/* The values of the [nc] keys (`hdpsgd keys` gives their meaning and ranges). */
typedef struct {
    HDP_NC_KEYS(HDP_NC_FIELD_)
} hdp_nc_keys;

/* The [nc] values of a model (stored in the model: valid while m is; NULL only for a NULL
 * m). hdp_nc_keys_edit gives them to change in code, past the range checks of the
 * schema: hdp_nc_spec_from_model checks the combinations again. */
const hdp_nc_keys *hdp_nc_keys_of(const hdp_model *m);
hdp_nc_keys *hdp_nc_keys_edit(hdp_model *m);

/* The [nc] keys and the seed, as the library uses them. */
typedef struct {
    HDP_NC_KEYS(HDP_NC_FIELD_)
    unsigned long long seed; /* sim.seed */
} hdp_nc_spec;

/* The [nc] section and sim.seed of a finalized model, with the combinations checked
 * (p >= K, every class non-empty, logistic needs K = 2, batch <= n, pca needs
 * public_samples >= K, memory); errors name the key and where it was set. */
hdp_status hdp_nc_spec_from_model(const hdp_model *m, hdp_nc_spec *s, hdp_error *err);

/* The same checks (and the ranges of the schema) on a spec built or changed in code;
 * errors name the key as "[nc] key". */
hdp_status hdp_nc_spec_check(const hdp_nc_spec *s, hdp_error *err);

/* Class sizes nk[K] (see the top comment); their sum is n. */
void hdp_nc_class_sizes(long K, long n, double imbalance, long *nk);

/* The ETF of the top comment: M[K x p] row-major, row k = M_k (p >= K). */
void hdp_nc_etf(long K, long p, double *M);

/* The first K vertices of the K0-simplex ETF (K <= K0 <= p): M[K x p] row-major; for K0 = K
 * the same numbers as hdp_nc_etf. (The NC paper, Theorem 4.) */
void hdp_nc_etf_frame(long K, long K0, long p, double *M);

/* sigma = G / sqrt(2 rho), the standard deviation of the private noise per coordinate
 * (the NC paper, eq. (1)); 0 for rho = inf. */
double hdp_nc_sigma(double G, double rho);

/* The norm of a per-sample gradient at W = 0 under perfect collapse (||M_k|| = 1):
 * sqrt(1 - 1/K) for ce, 1 for squared, 1/2 for logistic (docs/theory.md §8). */
double hdp_nc_grad_norm_at_zero(long K, hdp_nc_loss_kind loss);

/* Clipping (the NC paper, eq. (1), corrected): the factor min(1, G/gnorm) (1 for gnorm = 0). */
double hdp_nc_clip_factor(double gnorm, double G);

/* The clipped per-sample gradient of a linear model, the rank-one matrix
 * g = c r z^T (rows x cols, row-major) with c = hdp_nc_clip_factor(||r|| ||z||, G):
 * ||g||_F = c ||r|| ||z|| <= G. Returns c. (The Monte Carlo uses the factored form.) */
double hdp_nc_clip_gradient(const double *r, long rows, const double *z, long cols, double G,
                            double *g);

/* E_Z[1 - prod_j Phi(Z + a[j])], Z ~ N(0, 1), j = 0..m-1, by adaptive quadrature on the
 * real line (GSL qagi, relative tolerance 1e-10), the integrand written as
 * -expm1(sum_j log Phi(Z + a_j)) so that tiny errors keep their relative accuracy.
 * HDP_ENUMERIC if the quadrature fails. (docs/theory.md §8.) */
hdp_status hdp_nc_gauss_max_error(const double *a, long m, double *out, hdp_error *err);

/* The closed forms of docs/theory.md §8 for perfect collapse, balanced classes, one NoisyGD step
 * from W = 0, no clipping: 1 - E_Z[Phi(Z + n/((K-1) sigma))^(K-1)] (K-class softmax or
 * squared loss; Phi(-n/(sqrt2 sigma)) for K = 2) ... */
hdp_status hdp_nc_exact_error_balanced(long K, double n, double sigma, double *out,
                                       hdp_error *err);
/* ... and Phi(-n/(2 sigma)) for the binary logistic model (the NC paper, Theorem 3). */
double hdp_nc_exact_error_logistic(double n, double sigma);

/* Theorem 4 (the NC paper, corrected): K balanced classes (n a multiple of K) at K of the
 * K0 vertices of the K0-simplex ETF, ce or squared loss, one NoisyGD step from 0, no clipping:
 * 1 - E_Z[Phi(Z + n K0/(K (K0-1) sigma))^(K-1)]. K0 = K gives hdp_nc_exact_error_balanced. */
hdp_status hdp_nc_exact_error_frame(long K, long K0, double n, double sigma, double *out,
                                    hdp_error *err);

/* Theorem 5 (the NC paper, as an exact error): P(n a + beta a R_1 + beta beta0 R' + s Z <= 0)
 * with R_1, R' sums of n and (p-1) n independent signs, Z ~ N(0, 1) (s = kappa sigma of the
 * top comment; s = 0: no noise, a tie is an error). The binomial sums are cut where
 * Hoeffding's bound puts less than 1e-17 of either law: absolute accuracy about 1e-16.
 * HDP_EINPUT for n < 1, p < 1, a <= 0 or a negative beta, beta0, s; out NaN (HDP_OK) when
 * the double sum would take more than 1e8 terms. */
hdp_status hdp_nc_exact_error_projection(long n, long p, double a, double beta, double beta0,
                                         double s, double *out, hdp_error *err);

/* A problem: the spec with everything fixed across the draws (features, offset,
 * projection, deterministic training set, test class centres). */
typedef struct {
    hdp_nc_spec spec;
    long Kout;          /* rows of W: K (ce, squared) or 1 (logistic) */
    long K0;            /* the frame: frame_classes, or K when that is 0 */
    long q;             /* dimension of the trained features: p, or K-1 with pca, projection */
    long *nk;           /* [K] class sizes */
    long *sample_class; /* [n] class of sample i (samples ordered by class) */
    double *M;          /* [K x p] the ETF */
    double *v;          /* [p] the fixed offset beta s (offset perturbations), else NULL */
    double *P;          /* [p x q] row-major projection (pca, projection), else NULL */
    double *PM;         /* [K x q] P^T M_k (pca, projection), else NULL */
    int grouped;        /* 1: the training set has K distinct features (not per-sample) */
    double *Z;          /* grouped: [K x q] training features after the remedy */
    double *ztest;      /* [K x q] test class centres after the remedy (no random part) */
    double sigma;       /* G / sqrt(2 rho) */
    double offset_norm; /* ||v||_2 (0 when there is no offset) */
    double pca_alignment; /* pca: ||P^T B||_F^2/(K-1), B an orthonormal basis of span(M):
                             mean squared cosine of the principal angles (1 = exact) */
    double pca_lambda_min; /* pca: the (K-1)-th eigenvalue of the public second moment */
    double build_seconds;
} hdp_nc_problem;

/* Build the problem (checks the spec first). Free with hdp_nc_problem_free, which also
 * accepts a half-built or zeroed problem. */
hdp_status hdp_nc_problem_alloc(const hdp_nc_spec *s, hdp_nc_problem *pb, hdp_error *err);
void hdp_nc_problem_free(hdp_nc_problem *pb);

/* 1 when the exact one-step error applies: one NoisyGD step (batch = 0) from W = 0 on a
 * deterministic training set with deterministic test points (perturbation none,
 * test-offset, train-offset or both; any remedy), or Theorem 5's case (K = 2, per-sample,
 * remedy = projection; hdp_nc_exact_error then also needs G at least the largest possible
 * per-sample gradient norm, else NaN). */
int hdp_nc_exact_applies(const hdp_nc_spec *s);

/* The exact one-step error of the top comment on pb (NaN when it does not apply),
 * clipping at W = 0 included. */
hdp_status hdp_nc_exact_error(const hdp_nc_problem *pb, double *out, hdp_error *err);

typedef struct {
    long draws;
    int threads;
    double error_mean, error_stderr; /* over the draws */
    double error_min, error_max;     /* over the draws */
    double exact_error;              /* hdp_nc_exact_error, NaN when it does not apply */
    double max_clipped_norm;         /* max over draws, steps, samples of ||clip_G(g_i)|| */
    double clipped_fraction;         /* fraction of per-sample gradients clipped (mean) */
    double sigma;                    /* G / sqrt(2 rho) */
    double rho_total;                /* steps * rho: the output is rho_total-zCDP */
    double epsilon;                  /* CKS epsilon of rho_total at spec.delta (inf: no DP) */
    double seconds;
} hdp_nc_result;

/* Monte Carlo: spec.draws independent draws of NoisyGD/NoisySGD on pb, each with its
 * exact test error (see the top comment). threads = 0: one per core. */
hdp_status hdp_nc_run(const hdp_nc_problem *pb, int threads, hdp_nc_result *res,
                      hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
