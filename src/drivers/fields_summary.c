/*
 * fields_summary.c — the result tables (hdpsgd/fields.h) of what the commands' summaries add
 * to their results' tables: the rates over a gamma grid, the Poisson accountant's choice, the
 * model's source and the version, privacy's target and DP-GD, the keys nc, sim-index, kl and
 * net ran with, the seeds. Their JSON summaries and the handle's records are written from them.
 */
#include <math.h>
#include <stddef.h>

#include "drivers/fields_internal.h"
#include "hdpsgd/accountant.h"
#include "hdpsgd/kl.h"
#include "hdpsgd/klsweep.h"
#include "hdpsgd/model.h"
#include "hdpsgd/ncsweep.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/netexp.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/si.h"
#include "hdpsgd/sim.h"
#include "core/build_version.h"

/* ---- the rates (hdpsgd rates, hdp_rates_result; a family's: hdp_rates_family) ---- */

#define RATES(obj) ((const hdp_rates_result *)(obj))
#define AT_I(i) (*(const long *)(i))

static long rates_count(const void *obj) { return RATES(obj)->count; }
static double rates_gammas(const void *obj, const void *ctx) { (void)ctx; return (double)RATES(obj)->count; }
static double rates_gamma(const void *obj, const void *i) { return RATES(obj)->models[AT_I(i)].gamma; }
static double rates_n(const void *obj, const void *i) { return (double)RATES(obj)->models[AT_I(i)].n; }

TABLE(hdp_rates_fields, "rates", NULL,
      "the gamma grid of hdpsgd rates: gamma = d/n at every point, d fixed",
    {.name = "count", .kind = HDP_FIELD_INT, .get = rates_gammas, .flags = HDP_FIELD_NO_RECORD,
     .help = "points of the gamma grid"},
    {.name = "gamma", .kind = HDP_FIELD_REAL, .get = rates_gamma, .count = rates_count,
     .flags = HDP_FIELD_LIST, .help = "gamma = d/n at each point (increasing)"},
    {.name = "n", .kind = HDP_FIELD_INT, .get = rates_n, .count = rates_count,
     .flags = HDP_FIELD_LIST | HDP_FIELD_NO_JSON, .help = "n = round(d/gamma) at each point"});

#define FAMILY(obj) ((const hdp_rates_family *)(obj))

static long family_count(const void *obj) { return FAMILY(obj)->res->count; }

GETTER(family_risk, FAMILY(obj)->res->des[AT_I(ctx)].res[FAMILY(obj)->family].final_risk)
GETTER(family_slope, FAMILY(obj)->res->slope[FAMILY(obj)->family])
GETTER(family_theory_slope, FAMILY(obj)->res->theory_slope[FAMILY(obj)->family])

TABLE(hdp_rates_risk_fields, "rates_risk", NULL,
      "one family's optimised final risk at every gamma (hdpsgd rates; under the prefix of the "
      "family: output_, linear_noise_, inverse_time_, pl_)",
    {.name = "final_risk", .kind = HDP_FIELD_REAL, .get = family_risk, .count = family_count,
     .flags = HDP_FIELD_LIST,
     .help = "the final excess risk of the family's schedule optimised at each gamma (ODE)"});

TABLE(hdp_rates_slope_fields, "rates_slope", NULL,
      "one family's log-log slope against gamma (hdpsgd rates; under the family's prefix)",
    {.name = "slope", .kind = HDP_FIELD_REAL, .get = family_slope, .sweep = "slope",
     .help = "the fitted log-log slope of the final risk on the smallest-gamma decade"},
    {.name = "theory_slope", .kind = HDP_FIELD_REAL, .get = family_theory_slope,
     .sweep = "theory_slope", .help = "the same fit of the theorem's rate (docs/theory.md §5)"});

static double decade_lo(const void *obj, const void *ctx) { (void)ctx; return RATES(obj)->models[0].gamma; }
static double decade_hi(const void *obj, const void *ctx) { (void)ctx; return RATES(obj)->models[RATES(obj)->dec - 1].gamma; }
static double decade_points(const void *obj, const void *ctx) { (void)ctx; return (double)RATES(obj)->dec; }
static double rates_rho(const void *obj, const void *ctx) { (void)ctx; return RATES(obj)->models[0].rho; }
static double rates_d(const void *obj, const void *ctx) { (void)ctx; return (double)RATES(obj)->models[0].d; }

GETTER(solves_per_second, RATES(obj)->seconds > 0 ? (double)RATES(obj)->solves / RATES(obj)->seconds
                                                : NAN)

TABLE(hdp_rates_summary_fields, "rates_summary", NULL,
      "the slopes' decade, the model's privacy and dimension and the work of hdpsgd rates",
    GET("decade_lo", HDP_FIELD_REAL, decade_lo, "the smallest gamma of the slopes' decade"),
    GET("decade_hi", HDP_FIELD_REAL, decade_hi, "the largest gamma of the slopes' decade"),
    GET("decade_points", HDP_FIELD_INT, decade_points, "the points of the slopes' decade"),
    GET("rho", HDP_FIELD_REAL, rates_rho, "the privacy level rho (null/inf: no noise)"),
    GET("d", HDP_FIELD_INT, rates_d, "the dimension d, fixed over the grid"),
    {.name = "ode_solves", .kind = HDP_FIELD_INT, .offset = offsetof(hdp_rates_result, solves),
     .flags = HDP_FIELD_SWEEP_ALWAYS, .sweep = "ode_solves", .help = "ODE solves of all the searches"},
    {.name = "ode_solves_per_second", .kind = HDP_FIELD_REAL, .get = solves_per_second,
     .flags = HDP_FIELD_NO_RECORD, .help = "ode_solves over their wall time (null: no time)"});

/* ---- the accountants' choice (hdpsgd accountant, hdp_accountant_choice) ---- */

#define CHOICE(obj) ((const hdp_accountant_choice *)(obj))
GETTER(chosen_epsilon, CHOICE(obj)->kind == HDP_ACCOUNTANT_RDP ? CHOICE(obj)->result->epsilon_rdp
                                                               : CHOICE(obj)->result->epsilon_pld)

TEXT_GETTER(chosen_name, hdp_accountant_name(((const hdp_accountant_choice *)obj)->kind))

/* written before the accountants' tables (accountant, accountant_query), the others after */
TABLE(hdp_accountant_choice_fields, "accountant_choice", NULL,
      "the accountant that gives epsilon (hdpsgd accountant --accountant)",
    GET("epsilon", HDP_FIELD_REAL, chosen_epsilon, "epsilon by the chosen accountant"),
    GET_TEXT("accountant", chosen_name, "the accountant that chose or calibrated: pld or rdp"));

TABLE(hdp_accountant_epochs_fields, "accountant_epochs", NULL,
      "the epochs the steps were given as (hdpsgd accountant --epochs; the JSON's only)",
    {.name = "epochs", .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_accountant_choice, epochs),
     .flags = HDP_FIELD_OPTIONAL | HDP_FIELD_NO_RECORD,
     .help = "the epochs E given: steps = ceil(E/q) (absent: steps given)"});

TABLE(hdp_accountant_target_fields, "accountant_target", NULL,
      "the target epsilon the noise was calibrated to (hdpsgd accountant --epsilon)",
    {.name = "target_epsilon", .kind = HDP_FIELD_REAL,
     .offset = offsetof(hdp_accountant_choice, target_epsilon), .flags = HDP_FIELD_OPTIONAL,
     .help = "the target epsilon, when calibrated"});

/* ---- what every command's summary ends with: the model's source, the version ---- */

TEXT_GETTER(model_source, ((const hdp_model *)obj)->source)

TABLE(hdp_source_fields, "source", NULL,
      "the model a result was computed from (its keys: the JSON's object model)",
    {.name = "model_file", .kind = HDP_FIELD_TEXT, .text = model_source, .record = "model",
     .help = "the model's source: its file, or the built-in default"});

TEXT_GETTER(version_text, hdp_build_version)

TABLE(hdp_version_fields, "version", NULL, "the version that computed a result",
    GET_TEXT("version", version_text, "the library's version"));

/* ---- hdpsgd privacy: a target epsilon, more deltas; DP-GD (--dpgd) ---- */

#define OPT_REAL(s, m, h) \
    {.name = #m, .kind = HDP_FIELD_REAL, .offset = offsetof(s, m), .flags = HDP_FIELD_OPTIONAL, .help = h}

TABLE(hdp_privacy_target_fields, "privacy_target", NULL,
      "the privacy level that meets a target epsilon at the model's delta (hdpsgd privacy "
      "--epsilon; written only with it)",
    OPT_REAL(hdp_privacy_target, target_epsilon, "the target epsilon (--epsilon)"),
    OPT_REAL(hdp_privacy_target, rho_for_target,
             "the rho whose zCDP meets it exactly (Canonne-Kamath-Steinke)"),
    OPT_REAL(hdp_privacy_target, rho_z_for_target, "its zCDP parameter rho^2/2"));

TABLE(hdp_privacy_at_delta_fields, "privacy_at_delta", NULL,
      "the model's privacy at one more delta (hdpsgd privacy --delta: an object of the JSON's "
      "array at_delta)",
    REAL(hdp_privacy_at_delta, delta, "this delta"),
    REAL_AS(hdp_privacy_at_delta, "epsilon", epsilon,
            "epsilon at it, Canonne-Kamath-Steinke"),
    REAL(hdp_privacy_at_delta, epsilon_bs, "epsilon at it, Bun-Steinke"),
    OPT_REAL(hdp_privacy_at_delta, rho_for_target,
             "the rho that meets the target epsilon at it (with --epsilon only)"));

static long deltas_count(const void *obj) { return ((const hdp_privacy_deltas *)obj)->count; }
static const void *deltas_at(const void *obj, long i)
{
    return &((const hdp_privacy_deltas *)obj)->at[i];
}

TABLE(hdp_privacy_deltas_fields, "privacy_deltas", NULL,
      "the model's privacy at more deltas (hdpsgd privacy --delta)",
    {.name = "at_delta", .kind = HDP_FIELD_REAL, .count = deltas_count,
     .flags = HDP_FIELD_LIST | HDP_FIELD_NO_RECORD, .objects = &hdp_privacy_at_delta_fields,
     .element = deltas_at, .help = "an object of privacy_at_delta per --delta, in order"});

TABLE(hdp_dpgd_privacy_fields, "dpgd_privacy", NULL,
      "the privacy of DP-GD, eta T/(2 sigma^2)-zCDP (hdpsgd privacy --dpgd; epsilon_simple "
      "given sigma, target_epsilon, sigma_simple, sigma_zcdp given a target; BM: "
      "Bombari-Mondelli's bound, CKS: Canonne-Kamath-Steinke)",
    REAL(hdp_dpgd_privacy, eta, "the learning rate eta (--eta)"),
    INT(hdp_dpgd_privacy, steps, "the steps T (--steps)"),
    REAL(hdp_dpgd_privacy, sigma, "the noise multiplier: given, or the zCDP route's"),
    REAL(hdp_dpgd_privacy, rho_z, "zCDP of the run, eta T / (2 sigma^2)"),
    REAL_AS(hdp_dpgd_privacy, "epsilon", epsilon_cks, "epsilon at delta, CKS (the one to quote)"),
    REAL(hdp_dpgd_privacy, delta, "delta (--delta, or privacy.delta)"),
    REAL(hdp_dpgd_privacy, epsilon_bs, "epsilon at delta, Bun-Steinke"),
    REAL(hdp_dpgd_privacy, epsilon_cks, "epsilon at delta, CKS"),
    OPT_REAL(hdp_dpgd_privacy, epsilon_simple, "BM's sqrt(eta T) sqrt(8 ln(1/delta)) / sigma"),
    OPT_REAL(hdp_dpgd_privacy, target_epsilon, "the target epsilon (--epsilon)"),
    OPT_REAL(hdp_dpgd_privacy, sigma_simple, "BM's sigma, sqrt(eta T) sqrt(8 ln(1/delta)) / eps"),
    OPT_REAL(hdp_dpgd_privacy, sigma_zcdp, "the zCDP route's sigma for the target"),
    BOOL_AS(hdp_dpgd_privacy, "simple_applies", simple_applies, 0, "BM applies: eps < 8 ln(1/delta)"),
    REAL(hdp_dpgd_privacy, simple_epsilon_max, "8 ln(1/delta), BM's largest epsilon"));

/* ---- NoisyGD on neural-collapse features: the [nc] keys it ran with (hdp_nc_point) ---- */

#define NC_TEXT(fn, m, namer) TEXT_GETTER(fn, namer(((const hdp_nc_point *)obj)->spec.m))
NC_TEXT(nc_loss, loss, hdp_nc_loss_name)
NC_TEXT(nc_init, init, hdp_nc_init_name)
NC_TEXT(nc_perturbation, perturbation, hdp_nc_perturbation_name)
NC_TEXT(nc_remedy, remedy, hdp_nc_remedy_name)
#undef NC_TEXT

#define NC_LONG(m, h) INT_AS(hdp_nc_point, #m, spec.m, 0, h)
#define NC_REAL(m, h) REAL_AS(hdp_nc_point, #m, spec.m, h)
#define NC_NAME(m, fn, h) {.name = #m, .kind = HDP_FIELD_TEXT, .text = fn, .help = h}

TABLE(hdp_nc_spec_fields, "nc_spec", NULL,
      "the [nc] keys NoisyGD ran with (hdpsgd nc; `hdpsgd keys` gives their meaning)",
    NC_LONG(K, "classes K"), NC_LONG(p, "feature dimension p"),
    NC_LONG(n, "training samples n"), NC_REAL(imbalance, "class imbalance"),
    NC_NAME(loss, nc_loss, "the loss: ce, mse or logistic"),
    NC_NAME(init, nc_init, "the initialisation"), NC_LONG(steps, "NoisyGD steps"),
    NC_REAL(eta, "learning rate eta"), NC_LONG(batch, "batch size (0: full batch)"),
    NC_NAME(perturbation, nc_perturbation, "the features' perturbation"),
    NC_REAL(beta, "perturbation size beta"),
    NC_NAME(remedy, nc_remedy, "the remedy: none, normalize or pca"),
    NC_REAL(G, "clipping norm G"), NC_REAL(rho, "zCDP per step rho (inf: no noise)"),
    NC_REAL(delta, "delta of the reported epsilon"));

/* hdpsgd nc's and nc --sweep's CSV: a row per point (hdp_nc_point, context the curve's name, a
 * const char *); the CSV's only (its JSON: nc_spec, nc, ...) */
#define NP(obj) ((const hdp_nc_point *)(obj))
static double nc_curve(const void *obj, const void *ctx) { (void)ctx; return NP(obj)->curve; }
static const char *nc_name(const void *obj, const void *ctx) { (void)obj; return ctx; }
static double nc_z(const void *obj, const void *ctx) { (void)ctx; return hdp_nc_point_z(NP(obj)); }
#define NC_CSV (HDP_FIELD_NO_JSON | HDP_FIELD_NO_RECORD)
#define NC_COL(nm, m, fmt, fl, h)                                                               \
    {.name = nm, .kind = HDP_FIELD_REAL, .offset = offsetof(hdp_nc_point, m), .format = fmt,  \
     .flags = NC_CSV | (fl), .help = h}
#define NC_CLONG(m, h) INT_AS(hdp_nc_point, #m, spec.m, NC_CSV, h)
#define NC_CREAL(m, h) NC_COL(#m, spec.m, "%.10g", 0, h)
#define NC_CNAME(m, fn, h) {.name = #m, .kind = HDP_FIELD_TEXT, .text = fn, .flags = NC_CSV, .help = h}

TABLE(hdp_nc_csv_fields, "nc_csv", NULL,
      "hdpsgd nc's CSV (and nc --sweep's): a row per point of a curve",
    {.name = "curve", .kind = HDP_FIELD_INT, .get = nc_curve, .flags = NC_CSV, .help = "its index"},
    NC_CNAME(name, nc_name, "the curve's name"), NC_CLONG(p, "feature dimension p"),
    NC_CLONG(K, "classes K"), NC_CLONG(n, "training samples n"),
    NC_CNAME(loss, nc_loss, "the loss"), NC_CNAME(init, nc_init, "the initialisation"),
    NC_CLONG(steps, "NoisyGD steps"), NC_CREAL(eta, "learning rate eta"),
    NC_CLONG(batch, "batch size (0: full batch)"),
    NC_CNAME(perturbation, nc_perturbation, "the features' perturbation"),
    NC_CREAL(beta, "perturbation size beta"), NC_CNAME(remedy, nc_remedy, "the remedy"),
    NC_CREAL(imbalance, "class imbalance"), NC_CREAL(G, "clipping norm G"),
    NC_CREAL(rho, "zCDP per step rho"),
    NC_COL("rho_total", res.rho_total, "%.10g", 0, "steps rho"),
    NC_COL("epsilon", res.epsilon, "%.10g", 0, "epsilon (Canonne-Kamath-Steinke) at delta"),
    NC_CREAL(delta, "delta of epsilon"), NC_COL("sigma", res.sigma, "%.10g", 0, "G / sqrt(2 rho)"),
    INT_AS(hdp_nc_point, "draws", res.draws, NC_CSV, "Monte Carlo draws"),
    NC_COL("error", res.error_mean, "%.10g", HDP_FIELD_OPTIONAL, "mean test error over the draws"),
    NC_COL("stderr", res.error_stderr, "%.6g", HDP_FIELD_OPTIONAL, "its standard error"),
    NC_COL("exact", exact, "%.10g", HDP_FIELD_OPTIONAL, "the exact one-step error (empty: n/a)"),
    {.name = "z_exact", .kind = HDP_FIELD_REAL, .get = nc_z, .format = "%.4g",
     .flags = NC_CSV | HDP_FIELD_OPTIONAL, .help = "|error - exact| / stderr"},
    NC_COL("clipped_fraction", res.clipped_fraction, "%.6g", 0, "fraction of gradients clipped"),
    NC_COL("max_clipped_norm", res.max_clipped_norm, "%.10g", 0, "largest clipped gradient norm"),
    NC_COL("offset_norm", offset_norm, "%.10g", 0, "the offset's norm (0: none)"),
    NC_COL("pca_alignment", pca_alignment, "%.6g", HDP_FIELD_OPTIONAL, "PCA's alignment (empty: no PCA)"),
    NC_COL("seconds", res.seconds, "%.4g", 0, "wall time, s"));
#undef NP

/* ---- two-stage single-index learning: how stage 2 ran (hdp_si_problem; context: threads) ---- */

#define SI(obj) ((const hdp_si_problem *)(obj))

TEXT_GETTER(si_stage2, hdp_si_stage2_name(SI(obj)->spec.k.stage2))
GETTER(si_eta_lambda_max, SI(obj)->hp.eta_a * SI(obj)->l[SI(obj)->spec.k.p - 1])
TEXT_GETTER(si_route, SI(obj)->hp.sigma_route_zcdp ? "zcdp" : "notes_formula")
TEXT_GETTER(si_form, SI(obj)->hp.budget_total ? "total" : "stage2")
GETTER(si_share, SI(obj)->hp.budget_total ? SI(obj)->spec.k.stage1_share : NAN)
GETTER(si_rho_z_target, SI(obj)->hp.budget_total ? SI(obj)->hp.rho_z_target : NAN)

static double si_threads(const void *obj, const void *ctx) { (void)obj; return *(const int *)ctx; }

TABLE(hdp_si_stage2_fields, "si_stage2", NULL,
      "the law of stage 2 (hdpsgd sim-index; written first)",
    GET_TEXT("stage2", si_stage2, "stage 2's training: the [si] key stage2"));

TABLE(hdp_si_eta_fields, "si_eta", NULL,
      "stage 2's step against its Gram (hdpsgd sim-index; written before si_params)",
    GET("eta_lambda_max", HDP_FIELD_REAL, si_eta_lambda_max,
        "eta_a lambda_max: stage 2's step times the largest eigenvalue of its Gram"));

TABLE(hdp_si_budget_fields, "si_budget", NULL,
      "how the privacy budget was split and the sizes (hdpsgd sim-index; context: a const int * "
      "of the threads)",
    GET_TEXT("sigma_a_route", si_route, "how sigma_a was set: zcdp or notes_formula"),
    GET_TEXT("epsilon_form", si_form, "the budget's form: total (both stages) or stage2"),
    GET("stage1_share", HDP_FIELD_REAL, si_share,
        "stage 1's share of the total zCDP (null: the stage-2 form)"),
    GET("rho_z_target", HDP_FIELD_REAL, si_rho_z_target,
        "the total zCDP the budget allows (null: the stage-2 form)"),
    INT_AS(hdp_si_problem, "d", spec.k.d, 0, "dimension d"),
    INT_AS(hdp_si_problem, "p", spec.k.p, 0, "neurons p"),
    INT_AS(hdp_si_problem, "n", spec.k.n, 0, "samples per stage n"),
    GET("threads", HDP_FIELD_INT, si_threads, "threads used (the numbers do not depend on it)"));

/* ---- hdpsgd kl bound: the closed forms at the model's architecture (hdp_kl_bound_summary) ---- */

#define KLB(obj) ((const hdp_kl_bound_summary *)(obj))

TEXT_GETTER(klb_init, hdp_kl_init_name(KLB(obj)->a.init))

static double klb_depth(const void *obj, const void *ctx) { (void)ctx; return KLB(obj)->a.L; }
static double klb_beta(const void *obj, const void *l) { return KLB(obj)->beta[*(const long *)l]; }
static double klb_c(const void *obj, const void *ctx) { (void)obj; (void)ctx; return HDP_KL_C; }
static double klb_pinsker(const void *obj, const void *ctx) { (void)ctx; return hdp_kl_pinsker_delta(KLB(obj)->kl_bound); }
static double klb_pinsker_seed(const void *obj, const void *ctx) { (void)ctx; return hdp_kl_pinsker_delta(KLB(obj)->kl_bound_seed); }

TABLE(hdp_kl_arch_fields, "kl_arch", NULL,
      "the network of hdpsgd kl bound: its initialisation and sizes",
    GET_TEXT("init", klb_init, "the initialisation scheme (kl.init)"),
    GET("depth", HDP_FIELD_INT, klb_depth, "depth L"),
    INT_AS(hdp_kl_bound_summary, "width", a.m, 0, "hidden width m"),
    INT_AS(hdp_kl_bound_summary, "d", a.d, 0, "input dimension d"),
    INT_AS(hdp_kl_bound_summary, "o", a.o, 0, "outputs o"));

TABLE(hdp_kl_beta_fields, "kl_beta", NULL,
      "one layer's constant of Table 1 (hdpsgd kl bound; written once per layer l = 1..L: "
      "beta_<l>)",
    GET("beta", HDP_FIELD_REAL, klb_beta, "the layer's beta_l of Ye et al.'s Table 1"));

#define KLB_REAL(nm, m, h) REAL_AS(hdp_kl_bound_summary, nm, m, h)

TABLE(hdp_kl_bound_fields, "kl_bound", NULL,
      "the KL bound of noisy training at the model's architecture and its privacy budget "
      "(hdpsgd kl bound; _seed: with the paper's constant)",
    KLB_REAL("B", B, "the gradient-difference constant B of eq. 7"),
    KLB_REAL("B_table", B_table, "B from the paper's Table 1"),
    KLB_REAL("T", T, "training time T = eta epochs"),
    INT_AS(hdp_kl_bound_summary, "n", n, 0, "training samples n"),
    KLB_REAL("sigma", sigma, "the noise sigma"),
    GET("c", HDP_FIELD_REAL, klb_c, "the constant c of the KL bound (4; the paper writes 2)"),
    KLB_REAL("kl_bound", kl_bound, "the KL bound at T, B T / (n^2 sigma^2) with c = 4"),
    KLB_REAL("kl_bound_seed", kl_bound_seed, "the same with the paper's constant"),
    GET("pinsker_delta", HDP_FIELD_REAL, klb_pinsker, "the delta Pinsker's inequality gives it"),
    GET("pinsker_delta_seed", HDP_FIELD_REAL, klb_pinsker_seed, "the same of kl_bound_seed"),
    KLB_REAL("budget", budget, "the KL budget eps (kl.budget)"),
    KLB_REAL("sigma2_for_budget", b4.sigma2_at_T, "sigma^2 that meets the budget at T"),
    KLB_REAL("sigma2_for_budget_seed", b2.sigma2_at_T, "the same with the paper's constant"),
    KLB_REAL("R_lemma63", R, "R of Lemma 6.3"),
    KLB_REAL("T_opt", b4.T_opt, "the T minimising the risk bound at the budget"),
    KLB_REAL("sigma2_opt", b4.sigma2_opt, "sigma^2 at T_opt"),
    KLB_REAL("risk_opt", b4.risk_opt, "the risk bound at T_opt"),
    KLB_REAL("T_opt_seed", b2.T_opt, "T_opt with the paper's constant"),
    KLB_REAL("sigma2_opt_seed", b2.sigma2_opt, "sigma2_opt with the paper's constant"),
    KLB_REAL("risk_opt_seed", b2.risk_opt, "risk_opt with the paper's constant"),
    KLB_REAL("delta_target", delta_target, "the target delta (kl.delta; null: none)"),
    KLB_REAL("budget_for_delta", budget_for_delta, "the KL budget Pinsker gives that delta"),
    KLB_REAL("sigma_for_delta", sigma_for_delta, "the sigma that meets it at T"));

/* ---- hdpsgd kl run: one scheme at the last epoch (hdp_kl_run_scheme), the run's keys ---- */

#define KS(obj) ((const hdp_kl_run_scheme *)(obj))
#define KS_AT(obj, col) (KS(obj)->r->col[KS(obj)->epoch])
#define KS_REAL(nm, fn, h) GET(nm, HDP_FIELD_REAL, fn, h)
#define KS_INT(nm, fn, h) GET(nm, HDP_FIELD_INT, fn, h)
GETTER(ks_exact, KS_AT(obj, kl_exact))
GETTER(ks_last, KS_AT(obj, kl_final))
GETTER(ks_seed_constant, HDP_KL_C / HDP_KL_C_SEED * KS_AT(obj, kl_mc))
GETTER(ks_z_exact, KS(obj)->squared ? (KS_AT(obj, kl_mc) - KS_AT(obj, kl_exact)) /
                                          KS_AT(obj, kl_mc_se_path)
                                    : NAN)
GETTER(ks_bound, hdp_kl_bound(KS(obj)->B, KS(obj)->T, KS(obj)->n, KS(obj)->sigma, HDP_KL_C))
GETTER(ks_bound_seed,
       hdp_kl_bound(KS(obj)->B, KS(obj)->T, KS(obj)->n, KS(obj)->sigma, HDP_KL_C_SEED))
GETTER(ks_pinsker, hdp_kl_pinsker_delta(KS_AT(obj, kl_mc)))
GETTER(ks_B, KS(obj)->B)
GETTER(ks_grad2, KS(obj)->r->grad2)
GETTER(ks_worst, (double)KS(obj)->r->worst)
GETTER(ks_eta_lambda_max, KS(obj)->r->eta_lambda_max)
GETTER(ks_R_lazy, KS(obj)->r->R_lazy)
GETTER(ks_rank, (double)KS(obj)->r->rank)
GETTER(ks_train_loss, KS_AT(obj, train_loss))
GETTER(ks_seconds, KS(obj)->r->seconds)
GETTER(ks_ratio, KS_AT(obj, kl_mc) / KS(obj)->linearised->kl_mc[KS(obj)->epoch])

/* after kl_epoch under the same prefix */
TABLE(hdp_kl_run_scheme_fields, "kl_run_scheme", NULL,
      "one initialisation scheme of hdpsgd kl run at the last epoch, besides kl_epoch (under "
      "<scheme>_; kl_exact, kl_last_iterate and z_exact for the squared loss only, else "
      "null)",
    KS_REAL("kl_exact", ks_exact, "the exact trajectory KL (OU moments)"),
    KS_REAL("kl_last_iterate", ks_last, "the exact KL of the last iterate's law"),
    KS_REAL("kl_seed_constant", ks_seed_constant, "kl with the paper's constant c = 2"),
    KS_REAL("z_exact", ks_z_exact, "(kl - kl_exact) / kl_stderr_path"),
    KS_REAL("bound", ks_bound, "the KL bound B T / (n^2 sigma^2) with c = 4"),
    KS_REAL("bound_seed", ks_bound_seed, "the same with the paper's constant"),
    KS_REAL("pinsker_delta", ks_pinsker, "the delta Pinsker's inequality gives kl"),
    KS_REAL("B", ks_B, "the gradient-difference constant B of eq. 7"),
    KS_REAL("grad2", ks_grad2, "mean ||J(x_i)||^2 over samples and inits (~ B)"),
    KS_INT("worst_sample", ks_worst, "the removed sample with the largest KL"),
    KS_REAL("eta_lambda_max", ks_eta_lambda_max, "max over inits of eta lambda_max(K) / n"),
    KS_REAL("R_lazy", ks_R_lazy, "||W* - W_0||^2 of the min-norm solution, mean"),
    KS_INT("rank", ks_rank, "min over initialisations of rank K"),
    KS_REAL("train_loss", ks_train_loss, "mean training loss at the last epoch"),
    KS_REAL("seconds", ks_seconds, "wall time of the scheme's runs, seconds"));

/* kl.network = relu: after kl_epoch under <scheme>_relu_ */
TABLE(hdp_kl_run_relu_fields, "kl_run_relu", NULL,
      "the real (ReLU) network of one scheme of hdpsgd kl run, besides kl_epoch (under "
      "<scheme>_relu_; kl.network = relu)",
    GET("kl_ratio_linearised", HDP_FIELD_REAL, ks_ratio,
        "its kl over the linearised network's"),
    GET("worst_sample", HDP_FIELD_INT, ks_worst, "the removed sample with the largest KL"),
    GET("train_loss", HDP_FIELD_REAL, ks_train_loss, "mean training loss at the last epoch"),
    GET("seconds", HDP_FIELD_REAL, ks_seconds, "wall time of its runs, seconds"));

/* kl run --vs epochs' CSV: a row per epoch e, of each scheme's hdp_kl_run_scheme at e (epoch
 * e, T = eta e): kl_epochs_csv once, then kl_epochs_scheme_csv under <scheme>_ and with
 * kl.network = relu kl_epochs_relu_csv under <scheme>_relu_ for every scheme run */
GETTER(ks_kl, KS_AT(obj, kl_mc))
GETTER(ks_kl_se, KS_AT(obj, kl_mc_se))
GETTER(ks_kl_sd, KS_AT(obj, kl_init_sd))
GETTER(ks_kl_max, KS_AT(obj, kl_mc_max))
GETTER(ks_l32_bound, KS_AT(obj, lemma32_bound))
GETTER(ks_l32_exp, KS_AT(obj, lemma32_exp))
GETTER(ks_l32_log10, KS_AT(obj, lemma32_log10))
#define KE(nm, fn, fmt, fl, h) CSV_GET(nm, HDP_FIELD_REAL, fn, fmt, fl, h)
#define KE_OPT HDP_FIELD_OPTIONAL
/* the KL's Monte Carlo: the linearised and the real network's first columns */
#define KE_MC                                                                                   \
    KE("kl", ks_kl, "%.10g", 0, "the KL's Monte Carlo, mean over initialisations and paths"),   \
        KE("kl_se", ks_kl_se, "%.6g", 0, "its standard error"),                                 \
        KE("kl_sd", ks_kl_sd, "%.6g", 0, "standard deviation over initialisations"),            \
        KE("kl_max", ks_kl_max, "%.10g", 0, "max over the removed samples of the means")

TABLE(hdp_kl_epochs_csv_fields, "kl_epochs_csv", NULL,
      "kl run --vs epochs' CSV: a row per epoch, its first columns",
    INT_AS(hdp_kl_run_scheme, "epoch", epoch, CSV_ONLY, "the epoch e (steps of noisy GD)"),
    CSV_REAL(hdp_kl_run_scheme, "T", T, "%.10g", 0, "the training time T = eta e"));
TABLE(hdp_kl_epochs_scheme_csv_fields, "kl_epochs_scheme_csv", NULL,
      "kl run --vs epochs' CSV: one scheme at the row's epoch, under <scheme>_ (the exact KLs "
      "empty but for the squared loss, Lemma 3.2's beyond a double)",
    KE_MC,
    KE("kl_exact", ks_exact, "%.10g", KE_OPT, "the exact trajectory KL (OU moments)"),
    KE("kl_final", ks_last, "%.10g", KE_OPT, "the exact KL of the iterate's law at e"),
    KE("loss", ks_train_loss, "%.10g", 0, "mean training loss"),
    KE("bound", ks_bound, "%.10g", 0, "the KL bound B T / (n^2 sigma^2) with c = 4"),
    KE("bound_seed", ks_bound_seed, "%.10g", 0, "the same with the paper's constant"),
    KE("lemma32_bound", ks_l32_bound, "%.10g", KE_OPT, "Ye et al.'s Lemma 3.2 KL bound"),
    KE("lemma32_exp_term", ks_l32_exp, "%.10g", KE_OPT, "its part exponential in T"),
    KE("lemma32_log10_bound", ks_l32_log10, "%.10g", KE_OPT, "log10 of the Lemma 3.2 bound"));
TABLE(hdp_kl_epochs_relu_csv_fields, "kl_epochs_relu_csv", NULL,
      "kl run --vs epochs' CSV: the real network of one scheme at the row's epoch, under "
      "<scheme>_relu_ (kl.network = relu)",
    KE_MC,
    KE("loss", ks_train_loss, "%.10g", 0, "mean training loss"));

TEXT_GETTER(relu_name, "relu")

TABLE(hdp_kl_network_fields, "kl_network", NULL,
      "the real network's runs (hdpsgd kl run with kl.network = relu; hdp_kl_keys)",
    GET_TEXT("network", relu_name, "relu: the real network was run besides the linearised one"),
    INT_AS(hdp_kl_keys, "relu_runs", relu_runs, 0, "runs of the real network (kl.relu_runs)"));

TEXT_GETTER(kl_loss, hdp_kl_loss_name(((const hdp_kl_keys *)obj)->loss))
GETTER(kl_T, ((const hdp_kl_keys *)obj)->eta * (double)((const hdp_kl_keys *)obj)->epochs)

TABLE(hdp_kl_run_fields, "kl_run", NULL,
      "the [kl] keys hdpsgd kl run ran with (hdp_kl_keys)",
    GET("c", HDP_FIELD_REAL, klb_c, "the constant c of the KL (4; the paper writes 2)"),
    INT_AS(hdp_kl_keys, "epochs", epochs, 0, "epochs (steps of full-batch noisy GD)"),
    GET("T", HDP_FIELD_REAL, kl_T, "training time T = eta epochs"),
    INT_AS(hdp_kl_keys, "n", n, 0, "training samples n"),
    REAL(hdp_kl_keys, sigma, "the noise sigma"), REAL(hdp_kl_keys, eta, "learning rate eta"),
    {.name = "loss", .kind = HDP_FIELD_TEXT, .text = kl_loss, .help = "the loss (kl.loss)"},
    INT_AS(hdp_kl_keys, "inits", inits, 0, "initialisations"),
    INT_AS(hdp_kl_keys, "runs", runs, 0, "noise paths per initialisation"));

/* ---- kl run --vs depth | width's JSON (hdp_klsweep): the points, per scheme (under <scheme>_,
 * the real network's under <scheme>_relu_) arrays over them (hdp_klsweep_scheme), then the
 * epochs; the JSON only ---- */

#define SWP(obj) ((const hdp_klsweep *)(obj))
#define SWS(obj) ((const hdp_klsweep_scheme *)(obj))
static long sw_count(const void *obj) { return SWP(obj)->nx; }
static long sws_count(const void *obj) { return SWS(obj)->sw->nx; }
static double sw_nx(const void *obj, const void *ctx) { (void)ctx; return (double)SWP(obj)->nx; }
static double sw_x(const void *obj, const void *i) { return (double)SWP(obj)->xs[AT_I(i)]; }
#define SWS_GET(fn, m) GETTER(fn, SWS(obj)->sw->points[AT_I(ctx) * 4 + SWS(obj)->scheme].m)
SWS_GET(sws_kl, kl)
SWS_GET(sws_se, se)
SWS_GET(sws_kle, kle)
SWS_GET(sws_B, B)
SWS_GET(sws_rkl, rkl)
SWS_GET(sws_rse, rse)
SWS_GET(sws_rkle, rkle)
#define SW_ONLY HDP_FIELD_NO_RECORD
#define SW_LIST(nm, k, fn, cnt, h) \
    {.name = nm, .kind = k, .get = fn, .count = cnt, .flags = HDP_FIELD_LIST | SW_ONLY, .help = h}
#define SW_X(var, nm, axis)                                                                    \
    TABLE(var, nm, NULL, "hdpsgd kl run --vs " axis ": its points",                           \
        {.name = "count", .kind = HDP_FIELD_INT, .get = sw_nx, .flags = SW_ONLY,               \
         .help = "the number of points"},                                                      \
        SW_LIST(axis, HDP_FIELD_INT, sw_x, sw_count, "the network's " axis " at each point"))
SW_X(hdp_kl_sweep_depth_fields, "kl_sweep_depth", "depth");
SW_X(hdp_kl_sweep_width_fields, "kl_sweep_width", "width");
TABLE(hdp_kl_sweep_scheme_fields, "kl_sweep_scheme", NULL,
      "one scheme of hdpsgd kl run --vs depth|width, at each point (under <scheme>_)",
    SW_LIST("kl", HDP_FIELD_REAL, sws_kl, sws_count, "the KL's Monte Carlo after kl.epochs epochs"),
    SW_LIST("kl_stderr", HDP_FIELD_REAL, sws_se, sws_count, "its standard error"),
    SW_LIST("kl_early", HDP_FIELD_REAL, sws_kle, sws_count, "the same after the early epochs"),
    SW_LIST("B", HDP_FIELD_REAL, sws_B, sws_count, "the gradient-difference constant B of eq. 7"));
TABLE(hdp_kl_sweep_relu_fields, "kl_sweep_relu", NULL,
      "the real network of one scheme of hdpsgd kl run --vs depth|width (under <scheme>_relu_; "
      "kl.network = relu; null: the point left out, unstable)",
    SW_LIST("kl", HDP_FIELD_REAL, sws_rkl, sws_count, "the KL's Monte Carlo after kl.epochs epochs"),
    SW_LIST("kl_stderr", HDP_FIELD_REAL, sws_rse, sws_count, "its standard error"),
    SW_LIST("kl_early", HDP_FIELD_REAL, sws_rkle, sws_count, "the same after the early epochs"));
TABLE(hdp_kl_sweep_fields, "kl_sweep", NULL, "hdpsgd kl run --vs depth|width's epochs",
    INT_AS(hdp_klsweep, "epochs", E, SW_ONLY, "epochs of the final KL (kl.epochs)"),
    INT_AS(hdp_klsweep, "epochs_early", Ee, SW_ONLY, "epochs of the early KL, round(0.4 epochs)"),
    {.name = "c", .kind = HDP_FIELD_REAL, .get = klb_c, .flags = SW_ONLY,
     .help = "the constant c of the KL (4; the paper writes 2)"});

/* ---- the seeds (HDP_FIELD_SEED) and the Monte Carlo's command ---- */

#define SEED(s, m, h) \
    {.name = "seed", .kind = HDP_FIELD_INT, .offset = offsetof(s, m), .flags = HDP_FIELD_SEED, .help = h}

TABLE(hdp_mc_seed_fields, "mc_seed", NULL, "the Monte Carlo's seed (hdp_mc_options)",
    SEED(hdp_mc_options, seed, "the base seed"));
TABLE(hdp_model_seed_fields, "model_seed", NULL, "the model's seed (hdp_model: sim.seed)",
    SEED(hdp_model, seed, "the base seed (sim.seed)"));
TABLE(hdp_nc_seed_fields, "nc_seed", NULL, "NoisyGD's seed (hdp_nc_point)",
    SEED(hdp_nc_point, spec.seed, "the base seed (sim.seed)"));
TABLE(hdp_si_seed_fields, "si_seed", NULL, "single-index learning's seed (hdp_si_problem)",
    SEED(hdp_si_problem, spec.seed, "the base seed (sim.seed)"));

/* a text that is the object itself */
TEXT_GETTER(itself, obj)

TABLE(hdp_mc_command_fields, "mc_command", NULL,
      "the Monte Carlo's command (the object: its name, a const char *)",
    {.name = "command", .kind = HDP_FIELD_TEXT, .text = itself, .help = "sim or sde"});

/* ---- DP-GD on a two-layer network: one run's configuration, a panel's totals ---- */

#define NET_DATA(ctx) ((const hdp_net_data *)(ctx))

static double net_n(const void *obj, const void *ctx) { (void)obj; return (double)NET_DATA(ctx)->train.n; }
static double net_d(const void *obj, const void *ctx) { (void)obj; return (double)NET_DATA(ctx)->d; }
static double net_classes(const void *obj, const void *ctx) { (void)obj; return (double)NET_DATA(ctx)->K; }

TABLE(hdp_net_config_fields, "net_config", NULL,
      "the network and training of one hdpsgd net run (hdp_net_config; context: its "
      "hdp_net_data)",
    INT_AS(hdp_net_config, "width", width, 0, "hidden width"),
    GET("n", HDP_FIELD_INT, net_n, "training samples n"),
    GET("d", HDP_FIELD_INT, net_d, "input dimension d"),
    GET("classes", HDP_FIELD_INT, net_classes, "classes K"),
    REAL(hdp_net_config, clip, "C_clip (absolute, resolved)"),
    REAL(hdp_net_config, lr, "learning rate eta"),
    INT_AS(hdp_net_config, "steps", steps, 0, "DP-GD steps T"));

GETTER(netexp_threads, ((const hdp_netexp *)obj)->threads)

TABLE(hdp_netexp_fields, "netexp", NULL,
      "the budget and the work of hdpsgd net --vs (hdp_netexp; after the variants' cells)",
    REAL(hdp_netexp, epsilon, "epsilon of the budget"),
    REAL(hdp_netexp, delta, "delta of the budget (at the largest n)"),
    BOOL_AS(hdp_netexp, "full", full, 0, "the paper's grid sizes (--full)"),
    INT_AS(hdp_netexp, "runs", runs, 0, "training runs made"),
    INT_AS(hdp_netexp, "diverged", diverged, 0, "of them, stopped by a non-finite loss"),
    REAL(hdp_netexp, seconds, "wall time, seconds"),
    GET("threads", HDP_FIELD_INT, netexp_threads, "threads used (the numbers do not depend on it)"));

/* ---- hdpsgd kl init: each scheme and depth (hdp_kl_init_result), the run (hdp_klinit) ---- */

TABLE(hdp_kl_init_point_fields, "kl_init_point", NULL,
      "the Monte Carlo of E||df(x)/dW||_F^2 at initialisation against Lemma C.3, one scheme at "
      "one depth (hdpsgd kl init; under <scheme>_L<depth>_)",
    REAL_AS(hdp_kl_init_result, "mc", mean[0], "the Monte Carlo mean of the total"),
    REAL_AS(hdp_kl_init_result, "stderr", stderr_[0], "its standard error"),
    REAL_AS(hdp_kl_init_result, "lemma_c3", formula[0], "Lemma C.3 at ||x||^2 = d (= B of eq. 7)"),
    REAL(hdp_kl_init_result, z, "(mc - lemma_c3) / stderr"));

#define KL_KEYS(ctx) hdp_kl_keys_of((const hdp_model *)(ctx))

static double kli_width(const void *obj, const void *ctx) { (void)obj; return (double)KL_KEYS(ctx)->width; }
static double kli_d(const void *obj, const void *ctx) { (void)obj; return (double)KL_KEYS(ctx)->d; }
static double kli_o(const void *obj, const void *ctx) { (void)obj; return (double)KL_KEYS(ctx)->o; }
static double kli_runs(const void *obj, const void *ctx) { (void)obj; return (double)KL_KEYS(ctx)->init_runs; }
static double kli_z_tol(const void *obj, const void *ctx) { (void)obj; return ((const hdp_model *)ctx)->z_tol; }
static double kli_pass(const void *obj, const void *ctx) { (void)ctx; return ((const hdp_klinit *)obj)->fails == 0; }

TABLE(hdp_kl_init_fields, "kl_init", NULL,
      "the sizes and verdict of hdpsgd kl init (hdp_klinit; context: the model)",
    KS_INT("width", kli_width, "hidden width (kl.width)"), KS_INT("d", kli_d, "input dimension"),
    KS_INT("o", kli_o, "outputs o"), KS_INT("runs", kli_runs, "networks per point (kl.init_runs)"),
    KS_REAL("z_tol", kli_z_tol, "a point passes when |z| <= this (validate.z_tol)"),
    GET("pass", HDP_FIELD_BOOL, kli_pass, "every point passed"),
    REAL(hdp_klinit, seconds, "wall time, seconds"));

/* ---- one point of a sweep as the handle returns it (hdp_sweep_point_text) ---- */

static const char *point_columns(const void *obj, const void *ctx) { (void)ctx; return ((const hdp_sweep_point_text *)obj)->columns; }
static const char *point_row(const void *obj, const void *ctx) { (void)ctx; return ((const hdp_sweep_point_text *)obj)->row; }
static const char *point_status(const void *obj, const void *ctx) { (void)ctx; return ((const hdp_sweep_point_text *)obj)->status; }

TABLE(hdp_sweep_point_fields, "sweep_point", NULL,
      "one point of a sweep, as results.csv holds it (hdp_handle_sweep_point's record)",
    {.name = "columns", .kind = HDP_FIELD_TEXT, .text = point_columns,
     .help = "the names of results.csv's columns after point and the axes, comma-separated"},
    GET_TEXT("row", point_row, "the point's fields in those columns, comma-separated"),
    GET_TEXT("status", point_status, "ok, or the message of the command that failed"));

/* ---- the rest of the records: each run's final risk, the validator's grid, the table ---- */

static long mc_finals_count(const void *obj) { return ((const hdp_mc_options *)obj)->runs; }

GETTER(mc_final, ((const hdp_mc_options *)obj)->final_risks[*(const long *)ctx])

TABLE(hdp_mc_finals_fields, "mc_finals", NULL,
      "each run's final risk (hdp_mc_options.final_risks; the record's only, keep_runs)",
    {.name = "final_risks", .kind = HDP_FIELD_REAL, .get = mc_final, .count = mc_finals_count,
     .flags = HDP_FIELD_LIST | HDP_FIELD_NO_JSON,
     .help = "each run's excess risk at t = 1 (NaN when it diverged), with keep_runs"});

TABLE(hdp_validate_grid_fields, "validate_grid", NULL,
      "the validator's grid (the record's only: hdp_ode_result of its ODE)",
    COL(hdp_ode_result, "t", t, "%.10g", "time t = k/n in [0, 1], the grid of every curve"));

TABLE(hdp_design_text_fields, "design_text", NULL,
      "the best schedule as the file schedule --optimize -o writes (the object: the text)",
    GET_TEXT("table", itself, "the best schedule as a schedule.kind = table file"));
