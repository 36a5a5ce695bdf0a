/*
 * hdpsgd/handle.h — the library behind opaque pointers, for foreign-function interfaces
 * (the Python package python/hdpsgd calls it through ctypes; issue 24).
 *
 * A caller that cannot include the headers (ctypes, cffi in ABI mode, other languages)
 * must not copy the layout of hdp_model or of the result structs: they change with the
 * library. Here every struct stays behind a pointer that the library allocates and frees,
 * and results come back as an hdp_record, a self-describing set of named columns (arrays
 * of doubles), named numbers and named texts, with the names of the command line's CSV
 * columns and JSON keys: both are written from the result tables of hdpsgd/fields.h, whose
 * help texts hdp_result_field describes. Built on the public functions only.
 *
 * Ownership: every *_new and every record returned is released by the matching *_delete;
 * text returned through char ** is released with hdp_text_free. Every function that
 * returns an hdp_status refuses NULL pointer arguments with HDP_EINPUT.
 * Long calls (Monte Carlo, validation, design) take an optional cancel flag (set it to
 * nonzero from any thread: the call stops early with HDP_ECANCELLED) and an optional
 * progress callback (its nonzero return value sets the flag).
 */
#ifndef HDPSGD_HANDLE_H
#define HDPSGD_HANDLE_H

#include "hdpsgd/error.h"
#include "hdpsgd/model.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---- */

hdp_error *hdp_error_new(void); /* cleared; NULL when out of memory */
void hdp_error_delete(hdp_error *err);
hdp_status hdp_error_get_status(const hdp_error *err); /* HDP_EINPUT for NULL */
const char *hdp_error_message(const hdp_error *err);   /* "" for NULL */

/* ---- models ---- */

/* A new model with the built-in defaults (hdp_model_init); NULL when out of memory. Fill it
 * with hdp_model_load_file, hdp_model_set, then hdp_model_finalize (model.h). */
hdp_model *hdp_model_new(void);
void hdp_model_delete(hdp_model *m); /* hdp_model_free, then the handle; NULL is accepted */

/* The value of "section.key" as the model's metadata lines write it (after finalize: the
 * resolved value, e.g. data.n from data.gamma; doubles in the shortest form that reads
 * back exactly; inf; enum names; file names). HDP_EINPUT naming an unknown key. */
hdp_status hdp_model_get_text(const hdp_model *m, const char *key, char **value, hdp_error *err);

/* The model as an INI file (hdp_model_write_ini) or as a CSV header (hdp_model_write_meta:
 * '# [section]', '# key = value' lines, the INI file behind '# '), in memory. */
hdp_status hdp_model_ini_text(const hdp_model *m, char **text, hdp_error *err);
hdp_status hdp_model_meta_text(const hdp_model *m, char **text, hdp_error *err);

/* The model as `hdpsgd config` writes it, without its first comment line: the core sections,
 * or with all every section (`hdpsgd config --all`, as hdp_model_ini_text). */
hdp_status hdp_model_config_text(const hdp_model *m, int all, char **text, hdp_error *err);

void hdp_text_free(char *text);

/* ---- records: the results ---- */

typedef struct hdp_record hdp_record;

typedef enum { HDP_VALUE_REAL = 0, HDP_VALUE_INT = 1, HDP_VALUE_BOOL = 2 } hdp_value_kind;

void hdp_record_delete(hdp_record *r);
int hdp_record_columns(const hdp_record *r); /* how many (0 for NULL) */
/* Column i: its name (NULL when i is out of range), length and data (owned by r). */
const char *hdp_record_column(const hdp_record *r, int i, long *length, const double **data);
int hdp_record_numbers(const hdp_record *r);
/* Number i: its name (NULL out of range), value (non-finite values kept: rho = inf) and
 * kind (hdp_value_kind: how to show it). */
const char *hdp_record_number(const hdp_record *r, int i, double *value, int *kind);
int hdp_record_texts(const hdp_record *r);
const char *hdp_record_text(const hdp_record *r, int i, const char **value);

/* ---- the result tables (hdpsgd/fields.h) ---- */

/* Result table i: its name ("ode", "mc", "mc_run", "mc_rows", "validate_side", "validate",
 * "validate_sde", "model", ...; NULL past the end) and its help (through help, may be NULL). */
const char *hdp_result_table(int i, const char **help);
/* Field i of those of the table named table that the records hold (its JSON-only fields are
 * skipped): its name in the records (NULL past the end or for an
 * unknown table), kind (hdp_field_kind: 0 real, 1 int, 2 bool, 3 text, 4 column, also for a
 * list; -1 past the end) and help. The records name every field as its table does, under the
 * prefix the job's comment gives. */
const char *hdp_result_field(const char *table, int i, int *kind, const char **help);

/* ---- the jobs ---- */

/* Progress of a long call (hdp_progress_fn, hdpsgd/progress.h): what ("sim", "sde" or a
 * design family), done of total (Monte Carlo runs; design: ODE solves so far of at most
 * total), value (design: the best final risk so far; NaN otherwise). Runs that take longer
 * than a second also report from within (issue 29), about once a second: what "sim steps" or
 * "sde steps", done of total steps of all runs (at most LONG_MAX), value the fraction done.
 * A nonzero return value asks the call to stop. Called from the library's threads, never two
 * at once. */

/* hdpsgd ode: columns t, risk, risk_upper, risk_lower, mu_c, nu_c, eta, sigma2; the JSON
 * summary's numbers (final_risk, risk_before_final_noise, final_noise, gamma, n, d, rho,
 * stable, eta_sup, bins, rhs_evals, steps, solve_seconds, binning_seconds,
 * clip_fit_seconds); texts solver
 * (dop853 or cvode), model, version. m must be finalized. */
hdp_status hdp_handle_ode(const hdp_model *m, hdp_record **out, hdp_error *err);

/* hdp_handle_ode with a cancel flag (issue 29): the solve stops at its next step with
 * HDP_ECANCELLED once *cancel is nonzero (set it from any thread; NULL: none). progress
 * (NULL: none) is called as the solve starts ("ode", 0 of 1, NaN; a nonzero return cancels
 * it) and after it succeeded ("ode", 1 of 1, the final risk). */
hdp_status hdp_handle_ode_run(const hdp_model *m, volatile int *cancel, hdp_progress_fn progress,
                              void *user, hdp_record **out, hdp_error *err);

/* hdpsgd sim (method "sim") or sde ("sde") with the model's [sim] runs and seed and [sde]
 * step, on threads threads (0: one per core): columns t, mean, stderr, q10, q50, q90,
 * clipped_fraction and, with keep_runs, final_risks (one per run, NaN when it diverged); the
 * JSON summary's numbers (tables mc, mc_run, model of hdpsgd/fields.h: final_risk_mean,
 * final_risk_stderr, final_jump_mean, final_jump_stderr, runs, diverged_runs,
 * divergence_threshold, rho_accounted, steps, seconds, threads, gamma, n, d, rho; for sim also
 * mc_rows: nonexpansive_violations, nonexpansive_violations_per_run,
 * nonexpansive_violation_fraction, feature_norm, feature_clipped); texts command, seed
 * (decimal), model, version. */
hdp_status hdp_handle_mc(const hdp_model *m, const char *method, int threads, int keep_runs,
                         volatile int *cancel, hdp_progress_fn progress, void *user,
                         hdp_record **out, hdp_error *err);

/* hdpsgd validate (with_sde = 0: --no-sde): the JSON's numbers under the JSON's names (the
 * tables of hdpsgd/fields.h: the Monte Carlo side without prefix, max_abs_dev, ..., but its
 * verdict sim_pass; the SDE side with sde_; pass the overall verdict; ode_final_risk, rho_z,
 * delta, epsilon_cks, epsilon_bs, rel_tol, z_tol, runs, diverged_runs, nonexpansive_*,
 * feature_*, gamma, n, d, rho) plus worst_point, sde_worst_point (-1: all agree) and
 * sde_diverged_runs; columns t, ode.<ode column>, sim.<mc column>, sde.<mc column> (the
 * columns of the files PREFIX.ode.csv, ...; a dot, since sde_clipped_fraction is a number). */
hdp_status hdp_handle_validate(const hdp_model *m, int threads, int with_sde, volatile int *cancel,
                               hdp_progress_fn progress, void *user, hdp_record **out,
                               hdp_error *err);

/* hdpsgd schedule --optimize --family FAMILIES --knots K [--tune-clip]: the JSON's numbers
 * (<family>_final_risk, ..., best_final_risk, best_c, table_final_risk, table_knots, rho,
 * epsilon_cks, delta, gamma, n, d; the JSON's ode_solves of all families is total_ode_solves)
 * and, for the best family without prefix,
 * final_risk, table_final_risk, eta0, eta1, c1, a, c2, c3, c, knots, search_risk,
 * ode_solves, seconds; columns t, eta (the best schedule as a table), knot_t, knot_eta (pl),
 * and <family>_t, <family>_eta for every family; texts table (the best schedule as the table
 * file `schedule --optimize -o` writes: hdp_design_write_table), best_family, family (the
 * same), model. */
hdp_status hdp_handle_design(const hdp_model *m, const char *families, int knots, int tune_clip,
                             volatile int *cancel, hdp_progress_fn progress, void *user,
                             hdp_record **out, hdp_error *err);

/* hdp_handle_design with refine (hdpsgd schedule --optimize --refine --refine-tol TOL; pl only):
 * optimise at knots, then at 2 knots - 1, ... until the final risk moves by less than
 * refine_tol (relative, > 0; the command line's default 1e-5); families must be "pl", and the
 * closed-form families are optimised too, for the comparison, as the command line does; the record adds
 * refine_levels, refine_knots_<l> and refine_risk_<l> (coarse to fine) as the JSON does. */
hdp_status hdp_handle_design_refine(const hdp_model *m, const char *families, int knots,
                                    int tune_clip, int refine, double refine_tol,
                                    volatile int *cancel, hdp_progress_fn progress, void *user,
                                    hdp_record **out, hdp_error *err);

/* hdpsgd schedule --optimize --family FAMILIES --knots K [--tune-clip] --tune-batch (the batch
 * size in the design, hdp_design_batch_run; a one-pass model): the record of hdp_handle_design
 * for the best batch's design (its model's table and n), and the JSON's batch numbers:
 * best_batch, sample_rate, steps, noise_multiplier_min, noise_multiplier_median,
 * noise_multiplier_max, rho_accounted, poisson_noise_multiplier, epsilon_pld, epsilon_rdp,
 * epsilon_rdp_classic (NaN where the JSON writes null) and columns batch_candidates,
 * batch_final_risks. Cancelled: HDP_ECANCELLED, no record. */
hdp_status hdp_handle_design_batch(const hdp_model *m, const char *families, int knots,
                                   int tune_clip, volatile int *cancel, hdp_progress_fn progress,
                                   void *user, hdp_record **out, hdp_error *err);

/* hdpsgd schedule --optimize --method METHOD with any of the options above: tune_batch (the
 * record of hdp_handle_design_batch) or refine/refine_tol (hdp_handle_design_refine's), not
 * both; method "bfgs" (quasi-Newton on the exact gradient) or "simplex" (Nelder-Mead), NULL:
 * the command line's default, bfgs; refine needs bfgs. The three functions above are this one
 * with method NULL. */
hdp_status hdp_handle_design_method(const hdp_model *m, const char *families, int knots,
                                    int tune_clip, int tune_batch, int refine, double refine_tol,
                                    const char *method, volatile int *cancel,
                                    hdp_progress_fn progress, void *user, hdp_record **out,
                                    hdp_error *err);

/* hdpsgd rates --gammas LO:HI:COUNT --families LIST [--tune-clip] (hdpsgd/rates.h; families
 * NULL: output, linear-noise, inverse-time): columns gamma, n and <family>_final_risk (each
 * family optimised at each gamma); numbers <family>_slope, <family>_theory_slope, decade_lo,
 * decade_hi, decade_points, rho, d, ode_solves (the JSON's names); text model. progress
 * reports each family's search as hdp_handle_design does. */
hdp_status hdp_handle_rates(const hdp_model *m, double lo, double hi, long count,
                            const char *families, int tune_clip, volatile int *cancel,
                            hdp_progress_fn progress, void *user, hdp_record **out, hdp_error *err);

/* One point of hdpsgd sweep (hdpsgd/sweep.h) on the finalized model m: commands is the sweep
 * file's `commands` (a comma-separated list of ode, sim, sde, validate, schedule, rates, run in
 * its order, each once; ode, sim, sde and validate after schedule run on its design), with
 * the sweep file's [sweep] settings: schedule_families (NULL: all), knots (schedule_knots; the
 * command line's default 8), refine and refine_tol (schedule_refine, schedule_refine_tol:
 * default 1e-5), tune_clip, the rates' gamma grid lo, hi, count (required with rates, ignored
 * without) and rates_families (NULL: output, linear-noise, inverse-time); threads for the Monte
 * Carlo (0: one per core). The record's texts: columns, the names of results.csv's columns after
 * point and the axes (d, n, gamma, rho, epsilon_cks, delta, the commands' columns, status),
 * comma-separated; row, the point's fields as results.csv holds them (%.10g, "" for NaN,
 * true/false, the status "ok" or "failed: <message>"); status, "ok" or the failing command's
 * message. A command that fails fails the point as in a sweep: HDP_OK, the row saying so;
 * HDP_ECANCELLED when cancelled; HDP_EINPUT for bad commands or settings. progress reports the
 * Monte Carlo's runs as hdp_handle_mc does and the designs' searches as hdp_handle_design. */
hdp_status hdp_handle_sweep_point(const hdp_model *m, const char *commands,
                                  const char *schedule_families, int knots, int refine,
                                  double refine_tol, int tune_clip, double gamma_lo,
                                  double gamma_hi, long gamma_count, const char *rates_families,
                                  int threads, volatile int *cancel, hdp_progress_fn progress,
                                  void *user, hdp_record **out, hdp_error *err);

/* hdpsgd dataset FEATURES [--labels LABELS] [--positive LIST] [--test-features TEST]
 * [--test-labels TEST_LABELS] [--no-center] [--no-scale] [--ridge R] --json (hdpsgd/dataset.h:
 * hdp_dataset_load): the files read and prepared (center 0: --no-center; scale "trace" or
 * "none"; ridge >= 0), the JSON's numbers and columns under its names (the tables dataset,
 * and as they apply dataset_classes, dataset_labels, dataset_test and dataset_test_labels of
 * hdpsgd/fields.h: n, d, scale_factor, trace_raw, trace, columns eigenvalues and energy,
 * risk0, residual_variance, ..., test_mse) and texts storage and scale (the JSON's echo of
 * the inputs, features, labels, positive, test_features, test_labels, is not). positive: the
 * npositive (at most 256) integer classes mapped to +1, the others to -1 (npositive = 0: the
 * labels used as numbers); labels, test_features, test_labels NULL: none. */
hdp_status hdp_handle_dataset(const char *features, const char *labels, const double *positive,
                              long npositive, const char *test_features, const char *test_labels,
                              int center, const char *scale, double ridge, hdp_record **out,
                              hdp_error *err);

/* hdpsgd privacy (tables privacy and nonexpansive): numbers rho, rho_z, epsilon (=
 * epsilon_cks), delta (privacy.delta), epsilon_bs, epsilon_cks, rho_accounted (the accountant of docs/theory.md §6 on the model's n
 * discrete steps; HDP_EINPUT above 1e8 steps), accountant_equals_rho, n, the precondition's
 * nonexpansive_* and feature_*; texts schedule, model. */
hdp_status hdp_handle_accountant(const hdp_model *m, hdp_record **out, hdp_error *err);

/* (epsilon, delta) of (rho^2/2)-zCDP by Canonne-Kamath-Steinke (rho of docs/theory.md §1, > 0 or
 * inf; delta in (0, 1)), and the inverse: the rho whose CKS epsilon at delta is epsilon. */
hdp_status hdp_handle_epsilon(double rho, double delta, double *epsilon, hdp_error *err);
hdp_status hdp_handle_rho_for(double epsilon, double delta, double *rho, hdp_error *err);

/* DP-SGD with Poisson sampling (hdpsgd/accountant.h): epsilon at delta by PLD, RDP and classic RDP
 * of noise_multiplier > 0 over `steps` steps at sample_rate; or, with noise_multiplier = 0 and
 * target_epsilon > 0, the smallest noise multiplier whose epsilon by `accountant` ("pld" or "rdp")
 * meets the target, and its epsilons. The record's numbers: epsilon (the accountant's),
 * epsilon_pld, epsilon_pld_error, epsilon_rdp, epsilon_rdp_classic, rdp_order, rdp_order_classic,
 * noise_multiplier, sample_rate, steps, delta, pld_interval[, target_epsilon]; text: accountant. */
hdp_status hdp_handle_poisson_accountant(double sample_rate, double noise_multiplier, double target_epsilon,
                                         long long steps, double delta, const char *accountant,
                                         hdp_record **out, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
