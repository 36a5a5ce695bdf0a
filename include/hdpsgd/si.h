/*
 * hdpsgd/si.h — private feature learning for single-index models: two-stage private
 * training of a two-layer tanh network (the single-index notes, Algorithm 1; docs/theory.md §6, §7
 * and §8).
 *
 * Model: f(x) = a^T tanh(W^T x + b), W in R^{d x p} (columns w_j), b ~ N(0, I_p), a in R^p.
 * Data: x ~ N(0, I_d), y = sigma_*(<x, mu>), mu uniform on the unit sphere,
 * sigma_* = he1 He1 + he2 He2 + he3 He3 (information exponent 1: he1 != 0); two disjoint
 * training sets of n samples (stage 1 and stage 2) and a fresh test set.
 *
 * Stage 1 (one private step on the first layer), W_0 ~ N(0, 1/d), a_0 = 1/sqrt(p) 1:
 *   g_ij = 2 (f_0(x_i) - y_i) a_0j tanh'(w_j^T x_i + b_j) x_i       per sample i, neuron j
 *   u_j  = w0_j - eta_W sum_i g_ij min(1, C_W / ||g_ij||)
 *   w1_j = u_j / max(||u_j||, R) + sigma_W N(0, I_d),    R = norm_floor eta_W n 2/sqrt(p).
 * The single-index notes update with a "clipped" g^C_W it never defines, and normalises by ||u_j||;
 * normalisation alone has no data-independent sensitivity. u -> u/max(||u||, R) is
 * (1/R)-Lipschitz (it is 1/R times the projection onto the ball of radius R), and
 * replacing one sample moves u_j by at most 2 eta_W C_W, so the release of W_1 is a
 * Gaussian mechanism with l2 sensitivity Delta_1 = 2 eta_W C_W sqrt(p) / R and
 *   rho_z1 = Delta_1^2 / (2 sigma_W^2)                      (zCDP, docs/theory.md §6).
 * When ||u_j|| >= R (the "floored" count says how often not) this is the paper's step.
 *
 * Stage 2 (DP-GD on the second layer over the fixed features phi(x) = tanh(W_1^T x + b)),
 * a_0 = 1/sqrt(p) 1, for t = 1..T:
 *   g_i = 2 (phi_i^T a_{t-1} - y_i) phi_i + 2 lambda a_{t-1}
 *   a_t = a_{t-1} - eta_a (1/n) sum_i g_i min(1, C_a/||g_i||) + sqrt(eta_a) (2 C_a/n) sigma_a xi,
 *   xi ~ N(0, I_p).
 * Slips of the single-index notes fixed here: its clipping is written inverted (g max(1,
 * ||g^C||/C_a), self-referential; the clip is g min(1, C_a/||g||)); its noise N(0, 1) must be a
 * vector N(0, I_p); its gradient uses a_{i-1} (sample index) for a_{t-1}; its noise scale C_a/n
 * is 2 C_a/n for replace-one neighbours (docs/theory.md §6: sensitivity 2 eta C/n); its sigma_W
 * uses an undefined eps_B (eps_n here); Assumption 1's N(0, 1) inputs are N(0, I_d).
 * sigma_a: the single-index notes' sqrt(eta_a T) sqrt(8 ln(1/delta))/epsilon for epsilon in
 * (0, 8 ln(1/delta)), else the zCDP route (docs/theory.md §6); rho_z2 = eta_a T/(2 sigma_a^2),
 * total rho_z = rho_z1 + rho_z2 (zCDP composition), epsilon by Canonne-Kamath-Steinke.
 *
 * The OU limit (docs/theory.md §7, with the ridge term): unclipped, the mean gradient is
 * A a - c with A = (2/n) Phi^T Phi + 2 lambda I (the stage-2 kernel K = A), c = (2/n) Phi^T y;
 * in continuous time tau = eta_a T, da = -(A a - c) dt + s dB, s = 2 C_a sigma_a / n.
 * With A = V diag(l_k) V^T and a* = A^{-1} c, mode k of a - a* decays as e^{-l_k t} with
 * variance s^2 (1 - e^{-2 l_k t})/(2 l_k); the discrete (unclipped GD) recursion has
 * factor (1 - eta l_k)^T and variance s^2 eta sum_{j<T} (1 - eta l_k)^{2j}. Explicit GD
 * is stable only for eta_a l_max < 2, checked (si.eta_a named) before stage 2.
 *
 * Scalings (the single-index notes, Assumption 4, prefactors c_* from the model, L = ln d, q =
 * degree):
 *   lambda = c p/d^{2 eps_n}, eta_W = c d^{3 eps_n/2} sqrt(p), eta_a = c d^{eps_n} L^2/p
 *   (c = 0: 1/l_max), C_a = c d^{eps_n} sqrt(p) L^{q+1}, T = max(1, round(c d^{eps_n})),
 *   sigma_W = c sqrt(d^{1+eps_n}/n) L^{q+3}; and C_W = c sqrt(d/p) (ours).
 *
 * Randomness: the data and stage 1 come from the xoshiro256++ stream of the seed; stage-2
 * run r uses that stream jumped r + 1 times, so results do not depend on threads.
 * The library prints nothing. The exact OU solver of hdpsgd/rf.h is not reused: it is
 * tied to its own random-features problem (no ridge term, its own data).
 */
#ifndef HDPSGD_SI_H
#define HDPSGD_SI_H

#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The [si] section of the model files (src/families/si_keys.c): stage 2 of the training. */
typedef enum { HDP_SI_GD = 0, HDP_SI_OU } hdp_si_stage2_kind;

/* Its name in model files ("gd", "ou"). */
const char *hdp_si_stage2_name(hdp_si_stage2_kind k);

/* The [si] keys, each declared once: X(field, C type, schema type, default, range flags,
 * lo, hi, enum names, help), in the order of the model files. This list makes the values'
 * struct hdp_si_keys below and the section's schema rows (si_keys.c: parsing, the key's one
 * range, defaults, `hdpsgd keys`, the man page), as for [nc] (hdpsgd/nc.h). */
#define HDP_SI_KEYS(X) \
    X(d, long, LONG, "64", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e5, NULL, \
      "input dimension d (integer in [2, 1e5])") \
    X(p, long, LONG, "64", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e5, NULL, \
      "neurons p (integer in [1, 1e5])") \
    X(n, long, LONG, "4000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e7, NULL, \
      "samples n of each of the two training sets (integer in [2, 1e7])") \
    X(test_size, long, LONG, "2000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL, \
      "fresh test samples (integer in [1, 1e7])") \
    X(runs, long, LONG, "30", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL, \
      "stage-2 noise runs on the same data and first layer (integer in [2, 1e6])") \
    X(he1, double, DOUBLE, "1", 0, 0, 0, NULL, \
      "coefficient of He1 in the link sigma_*; must be nonzero (information exponent 1)") \
    X(he2, double, DOUBLE, "1", 0, 0, 0, NULL, \
      "coefficient of He2 in the link") \
    X(he3, double, DOUBLE, "0", 0, 0, 0, NULL, \
      "coefficient of He3 in the link") \
    X(eps_n, double, DOUBLE, "0.25", HDP_R_LO_OPEN | HDP_R_HI_CLOSED, 0, 1, NULL, \
      "exponent epsilon_n in (0, 1] of the single-index notes' scalings; at most 1") \
    X(lambda, double, DOUBLE, "0.01", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e100, NULL, \
      "prefactor in [0, 1e100]: lambda = c p / d^(2 eps_n) (squared in the gradient norms)") \
    X(eta_a, double, DOUBLE, "0", HDP_R_LO_CLOSED, 0, 0, NULL, \
      "prefactor >= 0: eta_a = c d^eps_n ln^2 d / p; 0 = 1/lambda_max(K) (stage2 = gd needs " \
      "eta_a lambda_max(K) < 2)") \
    X(C_a, double, DOUBLE, "0.05", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL, \
      "prefactor > 0 or inf: C_a = c d^eps_n sqrt(p) ln^(q+1) d (q the link's degree)") \
    X(T, double, DOUBLE, "30", HDP_R_LO_OPEN, 0, 0, NULL, \
      "prefactor > 0: T = max(1, round(c d^eps_n)) stage-2 steps, at most 1e8") \
    X(sigma_W, double, DOUBLE, "5e-4", HDP_R_LO_CLOSED | HDP_K_IF_GIVEN, 0, 0, NULL, \
      "prefactor >= 0: sigma_W = c sqrt(d^(1+eps_n)/n) ln^(q+3) d (0 = no stage-1 noise)") \
    X(eta_W, double, DOUBLE, "1", HDP_R_LO_OPEN, 0, 0, NULL, \
      "prefactor > 0: eta_W = c d^(3 eps_n/2) sqrt(p)") \
    X(C_W, double, DOUBLE, "4", HDP_R_LO_OPEN, 0, 0, NULL, \
      "stage-1 per-sample, per-neuron clipping C_W = c sqrt(d/p) (not in the single-index notes)") \
    X(norm_floor, double, DOUBLE, "0.25", HDP_R_LO_OPEN, 0, 0, NULL, \
      "stage-1 normalisation w/max(||w||, R), R = c eta_W n 2/sqrt(p) (bounds the sensitivity)") \
    X(epsilon, double, DOUBLE, "4", HDP_R_LO_OPEN | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, NULL, \
      "stage-2 target epsilon > 0 or inf (no stage-2 noise); stage 1 spends what sigma_W gives " \
      "on top (give epsilon or epsilon_total, not both)") \
    X(epsilon_total, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_INF | HDP_K_IF_GIVEN, 0, 0, \
      NULL, \
      "total target epsilon > 0 or inf of both stages at si.delta: one zCDP budget split by " \
      "stage1_share, which sets sigma_W and sigma_a; 0 = not used (si.epsilon: stage 2 only)") \
    X(stage1_share, double, DOUBLE, "0.5", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL, \
      "share in (0, 1) of the total zCDP budget rho_z spent on stage 1 (with epsilon_total)") \
    X(delta, double, DOUBLE, "0", HDP_R_LO_CLOSED | HDP_R_HI_OPEN, 0, 1, NULL, \
      "delta in [0, 1); 0 = 1/n") \
    X(stage2, hdp_si_stage2_kind, ENUM, "gd", 0, 0, 0, si_stage2_names, \
      "stage 2: gd (DP-GD, clipped) | ou (the exact OU process, unclipped)")

#define HDP_SI_FIELD_(f, ctype, ...) ctype f;

/* The values of the [si] keys (two-stage private training on a single-index target; the
 * help of `hdpsgd keys` gives their meaning and ranges): sizes d, p, n, test_size, runs; the
 * Hermite coefficients he1..he3 of the link sigma_*; the exponent eps_n of the single-index
 * notes' Assumption 4; the prefactors lambda, eta_a, C_a, T, sigma_W, eta_W, C_W and the
 * stage-1 normalisation floor; the stage-2 target epsilon, or epsilon_total of both stages
 * split by stage1_share; delta (0 = 1/n); stage2. */
typedef struct {
    HDP_SI_KEYS(HDP_SI_FIELD_)
} hdp_si_keys;

/* The [si] values of a model (stored in the model: valid while m is; NULL only for a NULL
 * m). */
const hdp_si_keys *hdp_si_keys_of(const hdp_model *m);

/* What hdp_si_problem_build needs: the [si] keys themselves (one name per parameter; the
 * prefactors lambda, eta_a, C_a, T, sigma_W, eta_W, C_W are resolved into hdp_si_params) and
 * the model's sim.seed. Experiments copy the spec and change keys in k (e.g. k.n, k.p,
 * k.epsilon_total). The total-budget form (docs/theory.md §8.2): k.epsilon_total > 0 (or inf)
 * replaces k.epsilon and k.sigma_W: rho_z = CKS^-1(epsilon_total, delta) is split into rho_z1 =
 * stage1_share rho_z (sigma_W = Delta1 / sqrt(2 rho_z1)) and rho_z2 = the rest (sigma_a =
 * sqrt(eta_a T / (2 rho_z2))), so that the reported total epsilon is epsilon_total;
 * k.epsilon_total = 0: the stage-2-only form (k.epsilon, k.sigma_W). */
typedef struct {
    hdp_si_keys k;
    unsigned long long seed;
} hdp_si_spec;

/* The [si] keys and sim.seed of m. */
void hdp_si_spec_from_model(const hdp_model *m, hdp_si_spec *spec);

/* Resolved hyperparameters and privacy (all from the spec; eta_a may be set by the build). */
typedef struct {
    int q;                    /* degree of sigma_* */
    double lambda, eta_W, eta_a, C_a, C_W, sigma_W, R;
    long T;
    double delta;
    double sigma_a;           /* stage-2 noise multiplier (0 without noise) */
    int sigma_route_zcdp;     /* 1: sigma_a from the zCDP route, 0: the single-index notes' formula */
    double s;                 /* OU diffusion 2 C_a sigma_a / n */
    double tau;               /* eta_a T */
    double Delta1, rho_z1, rho_z2, rho_z, eps1, eps2, eps_total; /* CKS at delta */
    int budget_total;         /* 1: the total-budget form (spec.k.epsilon_total > 0) */
    double epsilon_target;    /* the target: epsilon_total (budget form) or stage 2's epsilon */
    double rho_z_target;      /* budget form: CKS^-1(epsilon_total, delta) (inf for inf) */
} hdp_si_params;

typedef struct {
    hdp_si_spec spec;
    hdp_si_params hp;
    double *mu;               /* [d] */
    double *W1;               /* [d x p] row-major, column j = w1_j */
    double *b;                /* [p] */
    double *Phi, *y;          /* [n x p] stage-2 features, [n] labels */
    double *Phi_test, *y_test;/* [m x p], [m] */
    double *align;            /* [p] |<w1_j, mu>| / ||w1_j|| */
    double *align0;           /* [p] the same for W_0 (random directions) */
    double align_mean, align0_mean;
    double clipped1;          /* fraction of (i, j) clipped in stage 1 */
    long floored;             /* neurons with ||u_j|| < R */
    /* stage-2 kernel A = V diag(l) V^T (eigenvalues increasing) and the OU predictions */
    double *l, *V;            /* [p], [p x p] row-major, column k = v_k */
    double *astar;            /* [p] A^{-1} c */
    double *ou_mean, *ou_var; /* [p] mode coefficients v_k^T a and variances at tau (continuous) */
    double *gd_mean, *gd_var; /* [p] the same for unclipped discrete GD after T steps */
    double ou_risk, gd_risk;  /* expected test risk of those Gaussian laws */
    double zero_risk;         /* mean y_test^2 */
    void *block;              /* the arrays above, allocated together (hdp_si_problem_free) */
} hdp_si_problem;

/* Check the spec (HDP_EINPUT naming si.<key> through m when m is not NULL), resolve the
 * scalings and privacy, draw the data, run stage 1, build the features, eigendecompose A
 * (LAPACKE_dsyev), check eta_a l_max < 2 for stage2 = gd (eta_a = 1/l_max when k.eta_a = 0)
 * and compute the OU predictions. pb must be freed with hdp_si_problem_free (also on error). */
hdp_status hdp_si_problem_build(const hdp_si_spec *spec, const hdp_model *m, hdp_si_problem *pb,
                                hdp_error *err);
void hdp_si_problem_free(hdp_si_problem *pb);

/* Change the stage-2 target epsilon of a built problem (recomputes sigma_a, s, privacy and
 * the OU variances). Stage-2-only form only: in the total-budget form stage 1 changes
 * too, so change spec.k.epsilon_total and build again (HDP_EINPUT here). */
hdp_status hdp_si_set_epsilon(hdp_si_problem *pb, double epsilon, hdp_error *err);

typedef struct {
    long runs;
    double risk_mean, risk_se;    /* test risk of (W_1, a_T) over the runs */
    double clipped;               /* mean over runs and steps of the clipped fraction (gd) */
    double *mc_mean, *mc_var;     /* [p] mode coefficients of a_T: mean, variance over runs */
    double *mc_cov;               /* [p x p] covariance of the mode coefficients */
    double max_z_mean, max_z_var; /* vs the prediction of the simulated process */
    double seconds;
} hdp_si_result;

/* runs stage-2 runs (run r on stream jump r + 1), OpenMP over runs (threads 0 = one per
 * core). stage2 = gd runs DP-GD (compare with gd_mean/gd_var), ou samples the exact OU law
 * at tau. res must be freed with hdp_si_result_free. */
hdp_status hdp_si_stage2(const hdp_si_problem *pb, long runs, int threads, hdp_si_result *res,
                         hdp_error *err);
void hdp_si_result_free(hdp_si_result *res);

/* One row of sim-index's CSV (hdpsgd/fields.h: si_mode_csv): stage 2's weight on mode k of K,
 * the Monte Carlo against the law of the simulated process (pred_*: discrete GD with stage2 = gd,
 * else the OU's); z = |mc - pred| / stderr (NaN without noise), gd_* NaN where GD diverges. */
typedef struct {
    long mode;
    double lambda_k, pred_mean, mc_mean, mc_mean_se, z_mean, pred_var, mc_var, mc_var_se, z_var,
        ou_mean, ou_var, gd_mean, gd_var;
} hdp_si_mode_row;

/* The link sigma_*(z) = sum_j he<j> He_j(z) (the keys he1, he2, he3 of k). */
double hdp_si_link(const hdp_si_keys *k, double z);

#ifdef __cplusplus
}
#endif
#endif
