/*
 * hdpsgd/fields.h — one description per result: the fields (name, kind, help) of each result
 * struct, from which the command line's JSON summaries and CSV columns, the handle's records
 * (hdpsgd/handle.h) and the Python package's result classes are all written.
 *
 * A table is an array of hdp_field ending with a NULL name. A field is read from the result
 * struct at `offset` (or computed by `get` from the struct and a context, e.g. the model). A
 * name occurs once in a table, and the tables written together under one prefix have no name
 * in common (checked by the unit test test_fields), so that no output can hold a key twice.
 */
#ifndef HDPSGD_FIELDS_H
#define HDPSGD_FIELDS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HDP_FIELD_REAL = 0,   /* double; a non-finite value is null in JSON (rho = inf) */
    HDP_FIELD_INT = 1,    /* long (an int member: through get) */
    HDP_FIELD_BOOL = 2,   /* int, 0 or 1 */
    HDP_FIELD_TEXT = 3,   /* char array in the struct (e.g. hdp_ode_result.solver) */
    HDP_FIELD_COLUMN = 4, /* double *, of the length held by the long at `length` */
} hdp_field_kind;

/* where a field is written (flags) */
enum {
    HDP_FIELD_NO_JSON = 1,   /* not in the JSON summary (the handle's record only) */
    HDP_FIELD_NO_RECORD = 2, /* not in the handle's record (the JSON only) */
    HDP_FIELD_OWN_PREFIX = 4, /* written with the table's default prefix when given none */
    HDP_FIELD_AT = 8,         /* REAL: the member is a double * and the value its element at
                                 the index the context points to (a const long *), e.g. the
                                 last epoch of a curve; NULL array: NaN */
    HDP_FIELD_JSON_ARRAY = 16, /* COLUMN: also in the JSON summary, as an array (a column is
                                  otherwise the CSV's only), e.g. a data set's eigenvalues */
    HDP_FIELD_SWEEP_ALWAYS = 32, /* in a sweep's row even when the point failed (a count of
                                   work, e.g. the design's ode_solves) */
    HDP_FIELD_LIST = 64, /* REAL/INT: a list of count(obj) values, value i get(obj, &i) (i a
                            long): a JSON array, a column of the record (e.g. pl's knots) */
    HDP_FIELD_OPTIONAL = 128, /* REAL: not written when NaN, TEXT: when NULL (an option not
                                 given, e.g. accountant's target_epsilon) */
    HDP_FIELD_SEED = 256 /* INT: the member is an unsigned long long (a seed): a JSON integer,
                            a text of the record (64 bits do not fit a double) */
};

typedef struct hdp_field {
    const char *name;    /* the JSON key / CSV column / record name (NULL: the table's end) */
    hdp_field_kind kind;
    size_t offset;       /* in the result struct (unused with get) */
    size_t length;       /* HDP_FIELD_COLUMN: offset of the long holding the length */
    const char *format;  /* HDP_FIELD_COLUMN: printf format of its CSV field */
    double (*get)(const void *obj, const void *ctx); /* a computed REAL/INT field, or NULL */
    unsigned flags;
    const char *help;    /* one line: what it is, its unit or convention */
    const char *sweep;   /* its column in a sweep's results.csv, after the command's prefix
                            (ode_, sim_, ...); NULL: not there */
    const char *(*text)(const void *obj, const void *ctx); /* a computed TEXT field, or NULL */
    long (*count)(const void *obj); /* HDP_FIELD_LIST: its length */
    const char *record;  /* its name in the handle's record when not `name` (NULL: name) */
    /* HDP_FIELD_LIST of objects: element i (element(obj, i)) written by the table objects, a
     * JSON array of objects (the JSON only: HDP_FIELD_NO_RECORD), e.g. privacy's at_delta */
    const struct hdp_field_table *objects;
    const void *(*element)(const void *obj, long i);
} hdp_field;

typedef struct hdp_field_table {
    const char *name;           /* "ode", "mc", "mc_rows", "validate_side", ... */
    const char *help;           /* what the result is */
    const hdp_field *fields;
    const char *default_prefix; /* HDP_FIELD_OWN_PREFIX: the prefix when given "" */
} hdp_field_table;

/* The result tables: the risk ODE (hdp_ode_result); the Monte Carlo (hdp_mc_result): its
 * curve and final numbers, its steps, time and threads (mc_run), and the row statistics only
 * DP-SGD draws (mc_rows, context the model), standard DP-SGD's privacy on a finite training set
 * (mc_sgd, sgd.sampling = shuffle | poisson only); one side of the validator (hdp_validate_side),
 * the validator's overall numbers (hdp_validate_result, context the model) and its SDE's
 * (validate_sde); the model's effective sizes (hdp_model); the privacy of a model
 * (hdp_privacy_summary) and its precondition (hdp_nonexpansive, context: a const double *
 * delta); DP-SGD with Poisson sampling (hdp_accountant_result and hdp_accountant_query);
 * NoisyGD on neural-collapse features (hdp_nc_point of hdpsgd/ncsweep.h: nc, nc_draws,
 * nc_problem); two-stage single-index learning (hdp_si_result, hdp_si_problem, hdp_si_params); the rates' fit
 * of one family (hdp_rates_fit, under the prefix <family>_); the KL estimate of a kl run at one
 * epoch (hdp_kl_run_result, context: the epoch, a const long *); a user's data set
 * (hdp_dataset_summary of hdpsgd/dataset.h: dataset, and as they apply dataset_classes,
 * dataset_labels, dataset_test, dataset_test_labels). */
extern const hdp_field_table hdp_ode_fields;
extern const hdp_field_table hdp_mc_fields;
extern const hdp_field_table hdp_mc_run_fields;
extern const hdp_field_table hdp_mc_rows_fields;
extern const hdp_field_table hdp_mc_sgd_fields;
extern const hdp_field_table hdp_validate_side_fields;
extern const hdp_field_table hdp_validate_fields;
extern const hdp_field_table hdp_validate_sde_fields;
/* validate --scaling (hdp_validate_scaling_result of hdpsgd/validate.h): validate_scaling, then
 * validate_level of each level l (hdp_validate_level) under the prefix scaling_<l>_. */
extern const hdp_field_table hdp_validate_scaling_fields;
extern const hdp_field_table hdp_validate_level_fields;
extern const hdp_field_table hdp_model_fields;
extern const hdp_field_table hdp_privacy_fields;
extern const hdp_field_table hdp_nonexpansive_fields;
extern const hdp_field_table hdp_accountant_fields;
extern const hdp_field_table hdp_accountant_query_fields;
extern const hdp_field_table hdp_nc_fields;
extern const hdp_field_table hdp_nc_draws_fields;
extern const hdp_field_table hdp_nc_problem_fields;
extern const hdp_field_table hdp_si_result_fields;
extern const hdp_field_table hdp_si_problem_fields;
extern const hdp_field_table hdp_si_params_fields;
extern const hdp_field_table hdp_rates_fit_fields;
extern const hdp_field_table hdp_kl_epoch_fields;
/* DP-GD on a two-layer network (hdpsgd/net.h, hdpsgd/netexp.h): one run (hdp_net_result: its
 * curve and final numbers) and one variant at one point of a panel (hdp_netexp_cell). */
extern const hdp_field_table hdp_net_fields;
extern const hdp_field_table hdp_netexp_cell_fields;
/* A data set's (data.source = file, docs/theory.md §9): the ODE's corrections (hdp_ode_result,
 * context the model) and its predicted held-out MSE column; the Monte Carlo's held-out MSE
 * (hdp_mc_result) at t = 1 and as columns. Written only for such models. */
extern const hdp_field_table hdp_ode_data_fields;
extern const hdp_field_table hdp_ode_data_columns;
extern const hdp_field_table hdp_mc_data_fields;
extern const hdp_field_table hdp_mc_data_columns;

/* DP-GD on random features: the noise and early-stopping terms of the test loss
 * (hdp_rf_sim_result of hdpsgd/rf.h). */
extern const hdp_field_table hdp_rf_terms_fields;
/* hdpsgd rf's summary (hdp_rf_summary of hdpsgd/rf.h): rf_final, then rf_terms (of the
 * result), then rf_run; rf-experiment's (hdpsgd/rfexp.h): rfexp (hdp_rfexp_summary), then
 * rfexp_point once per p (hdp_rfexp_selected, names suffixed _<i>), then rfexp_source. */
extern const hdp_field_table hdp_rf_final_fields;
extern const hdp_field_table hdp_rf_run_fields;
extern const hdp_field_table hdp_rfexp_fields;
extern const hdp_field_table hdp_rfexp_point_fields;
extern const hdp_field_table hdp_rfexp_source_fields;

/* The schedule design (hdpsgd/design.h, `schedule --optimize`): one family's result
 * (hdp_design_result, under the prefix hdp_design_family_key + "_"): design (every family),
 * then its parameters, design_eta0 (output, linear-noise), design_inverse_time or design_pl,
 * then design_cost (every family); pl's refine levels (hdp_design_result of pl): design_refine,
 * then design_level once per level l (context: the level, a const long *; names suffixed _<l>);
 * the privacy a closed-form family needs to match pl (hdp_design_equivalent, under the
 * family's prefix); the set of families (hdp_design_set, context the model): design_set, then
 * the batch sizes (hdp_design_batch: design_batch; hdp_design_batch_terms_t:
 * design_batch_terms), then design_summary, then the table's file (design_file, the object
 * its name: a const char *, NULL: none). */
extern const hdp_field_table hdp_design_fields;
extern const hdp_field_table hdp_design_eta0_fields;
extern const hdp_field_table hdp_design_inverse_time_fields;
extern const hdp_field_table hdp_design_pl_fields;
extern const hdp_field_table hdp_design_cost_fields;
extern const hdp_field_table hdp_design_set_fields;
extern const hdp_field_table hdp_design_summary_fields;
extern const hdp_field_table hdp_design_refine_fields;
extern const hdp_field_table hdp_design_level_fields;
extern const hdp_field_table hdp_design_equivalent_fields;
extern const hdp_field_table hdp_design_batch_fields;
extern const hdp_field_table hdp_design_batch_terms_fields;
extern const hdp_field_table hdp_design_file_fields;

extern const hdp_field_table hdp_dataset_fields;
extern const hdp_field_table hdp_dataset_classes_fields;
extern const hdp_field_table hdp_dataset_labels_fields;
extern const hdp_field_table hdp_dataset_test_fields;
extern const hdp_field_table hdp_dataset_test_labels_fields;
/* hdpsgd dataset's echo of its inputs (hdp_dataset_names of hdpsgd/dataset.h; JSON only),
 * each before the tables of what it gave. */
extern const hdp_field_table hdp_dataset_features_fields;
extern const hdp_field_table hdp_dataset_labels_file_fields;
extern const hdp_field_table hdp_dataset_test_file_fields;
extern const hdp_field_table hdp_dataset_test_labels_file_fields;

/* The rates over a gamma grid (hdpsgd/rates.h, `hdpsgd rates`): the grid (hdp_rates_result:
 * rates), every wanted family's final risks (hdp_rates_family: rates_risk, under the prefix
 * hdp_design_family_key + "_"), then every family's slopes (rates_slope, the same prefix), then
 * rates_summary (hdp_rates_result). */
extern const hdp_field_table hdp_rates_fields;
extern const hdp_field_table hdp_rates_risk_fields;
extern const hdp_field_table hdp_rates_slope_fields;
extern const hdp_field_table hdp_rates_summary_fields;

/* DP-SGD with Poisson sampling's summary (hdp_accountant_choice of hdpsgd/accountant.h):
 * accountant_choice, then the accountants' tables, then accountant_epochs and
 * accountant_target (each written only when given). */
extern const hdp_field_table hdp_accountant_choice_fields;
extern const hdp_field_table hdp_accountant_epochs_fields;
extern const hdp_field_table hdp_accountant_target_fields;

/* The model's source (hdp_model: model_file, in the records model) and the library's version
 * (no object: version), written by every command that reads a model. */
extern const hdp_field_table hdp_source_fields;
extern const hdp_field_table hdp_version_fields;

/* hdpsgd privacy's target epsilon (hdp_privacy_target), its object per --delta
 * (hdp_privacy_at_delta) and DP-GD's privacy (hdp_dpgd_privacy) of hdpsgd/privacy.h. */
extern const hdp_field_table hdp_privacy_target_fields;
extern const hdp_field_table hdp_privacy_at_delta_fields;
/* hdpsgd privacy --delta's deltas (hdp_privacy_deltas): at_delta, privacy_at_delta's objects. */
extern const hdp_field_table hdp_privacy_deltas_fields;
extern const hdp_field_table hdp_dpgd_privacy_fields;

/* NoisyGD's [nc] keys (hdp_nc_point: nc_spec, before nc); two-stage single-index learning's
 * stage-2 law, step and budget (hdp_si_problem: si_stage2 first, si_eta before si_params,
 * si_budget after them, context a const int * of the threads). */
extern const hdp_field_table hdp_nc_spec_fields;
extern const hdp_field_table hdp_si_stage2_fields;
extern const hdp_field_table hdp_si_eta_fields;
extern const hdp_field_table hdp_si_budget_fields;

/* hdpsgd kl bound (hdp_kl_bound_summary of hdpsgd/kl.h): kl_arch, kl_beta once per layer
 * (context the layer), kl_bound. */
extern const hdp_field_table hdp_kl_arch_fields;
extern const hdp_field_table hdp_kl_beta_fields;
extern const hdp_field_table hdp_kl_bound_fields;

/* hdpsgd kl run: per scheme kl_epoch then kl_run_scheme (hdp_kl_run_scheme, under
 * <scheme>_), with kl.network = relu kl_epoch then kl_run_relu (under <scheme>_relu_); then
 * kl_network (relu only) and kl_run (hdp_kl_keys). */
extern const hdp_field_table hdp_kl_run_scheme_fields;
extern const hdp_field_table hdp_kl_run_relu_fields;
extern const hdp_field_table hdp_kl_network_fields;
extern const hdp_field_table hdp_kl_run_fields;
/* hdpsgd kl run --vs depth | width (hdp_klsweep of hdpsgd/klsweep.h): kl_sweep_depth or
 * kl_sweep_width, per scheme kl_sweep_scheme under <scheme>_ (hdp_klsweep_scheme; kl.network =
 * relu: kl_sweep_relu under <scheme>_relu_), then kl_sweep. */
extern const hdp_field_table hdp_kl_sweep_depth_fields;
extern const hdp_field_table hdp_kl_sweep_width_fields;
extern const hdp_field_table hdp_kl_sweep_scheme_fields;
extern const hdp_field_table hdp_kl_sweep_relu_fields;
extern const hdp_field_table hdp_kl_sweep_fields;

/* The seeds (HDP_FIELD_SEED): of the Monte Carlo (hdp_mc_options), the model (hdp_model: kl
 * run), NoisyGD (hdp_nc_point), single-index learning (hdp_si_problem); the Monte Carlo's
 * command (the object its name: "sim" or "sde"). */
extern const hdp_field_table hdp_mc_seed_fields;
extern const hdp_field_table hdp_model_seed_fields;
extern const hdp_field_table hdp_nc_seed_fields;
extern const hdp_field_table hdp_si_seed_fields;
extern const hdp_field_table hdp_mc_command_fields;

/* hdpsgd net: one run's configuration (hdp_net_config, context its hdp_net_data: net_config,
 * after net) and a panel's budget and work (hdp_netexp: netexp, after its cells). */
extern const hdp_field_table hdp_net_config_fields;
extern const hdp_field_table hdp_netexp_fields;

/* hdpsgd nc --sweep (hdp_ncsweep of hdpsgd/ncsweep.h, context the base hdp_nc_spec): nc_sweep,
 * then nc_sweep_curve of each curve c under <curve>_ (context: c, a const int *), then
 * nc_sweep_time. hdpsgd net --vs (hdp_netexp of hdpsgd/netexp.h): netexp_width or
 * netexp_samples (the grid, lists), netexp_variant of each variant under its prefix (dp: none,
 * rf_, gd_; the object an hdp_netexp_variant), then netexp. JSON only (src/drivers/fields_panels.c). */
extern const hdp_field_table hdp_nc_sweep_fields;
extern const hdp_field_table hdp_nc_sweep_curve_fields;
extern const hdp_field_table hdp_nc_sweep_time_fields;
extern const hdp_field_table hdp_netexp_width_fields;
extern const hdp_field_table hdp_netexp_samples_fields;
extern const hdp_field_table hdp_netexp_variant_fields;
/* One variant of a net --vs panel: panel a const hdp_netexp *, variant HDP_NETEXP_DP, _RF, _GD. */
typedef struct {
    const void *panel;
    int variant;
} hdp_netexp_variant;

/* hdpsgd kl init: each scheme at each depth (hdp_kl_init_result: kl_init_point, under
 * <scheme>_L<depth>_), then the run (hdp_klinit of hdpsgd/klsweep.h, context the model). */
extern const hdp_field_table hdp_kl_init_point_fields;
extern const hdp_field_table hdp_kl_init_fields;

/* One point of a sweep as hdp_handle_sweep_point returns it (record only): its results.csv
 * header and row (without the leading comma and the newline) and status. */
typedef struct {
    const char *columns, *row, *status;
} hdp_sweep_point_text;
extern const hdp_field_table hdp_sweep_point_fields;

/* The records' rest: each run's final risk (hdp_mc_options: mc_finals, keep_runs), the
 * validator's grid (hdp_ode_result: validate_grid), the design's table (the text itself:
 * design_text). */
extern const hdp_field_table hdp_mc_finals_fields;
extern const hdp_field_table hdp_validate_grid_fields;
extern const hdp_field_table hdp_design_text_fields;

/* The CSV files written a row per result (io/output.h: hdp_csv_header, hdp_csv_row; the CSV's
 * only): hdpsgd rates' (hdp_design_result of each family at each gamma, context its model). */
extern const hdp_field_table hdp_rates_csv_fields;
/* sim-index --experiment eps and n (hdp_siexp_row of hdpsgd/siexp.h, a row per point). */
extern const hdp_field_table hdp_si_eps_csv_fields;
extern const hdp_field_table hdp_si_n_csv_fields;
/* sim-index's modes (hdp_si_mode_row of hdpsgd/si.h) and --experiment align's bins
 * (hdp_siexp_bin of hdpsgd/siexp.h). */
extern const hdp_field_table hdp_si_mode_csv_fields;
extern const hdp_field_table hdp_si_align_csv_fields;
/* hdpsgd nc and nc --sweep (hdp_nc_point, context the curve's name: a const char *). */
extern const hdp_field_table hdp_nc_csv_fields;
/* kl init (hdp_kl_init_row of hdpsgd/klsweep.h). */
extern const hdp_field_table hdp_kl_init_csv_fields;
/* kl bound (hdp_kl_bound_row of hdpsgd/kl.h). */
extern const hdp_field_table hdp_kl_bound_csv_fields;
/* kl run --vs epochs (a row per epoch: hdp_kl_run_scheme of each scheme at it): kl_epochs_csv,
 * then per scheme kl_epochs_scheme_csv under <scheme>_ (kl.network = relu: kl_epochs_relu_csv
 * under <scheme>_relu_); --vs depth | width (a row per depth or width: its long, then the
 * hdp_klsweep_point of each scheme): kl_depth_csv or kl_width_csv, then per scheme
 * kl_vs_scheme_csv under <scheme>_ (relu: kl_vs_relu_csv under <scheme>_relu_). */
extern const hdp_field_table hdp_kl_epochs_csv_fields;
extern const hdp_field_table hdp_kl_epochs_scheme_csv_fields;
extern const hdp_field_table hdp_kl_epochs_relu_csv_fields;
extern const hdp_field_table hdp_kl_depth_csv_fields;
extern const hdp_field_table hdp_kl_width_csv_fields;
extern const hdp_field_table hdp_kl_vs_scheme_csv_fields;
extern const hdp_field_table hdp_kl_vs_relu_csv_fields;
/* hdpsgd rf (hdp_rf_sim_result, context the step's index: a const long *); rf-experiment
 * (hdp_rfexp_config of hdpsgd/rfexp.h, context its hdp_rfexp_row): P1 a row per p of its
 * selected configuration (rfexp_p1_csv, the grid's test losses, rfexp_p1_val_csv, the grid's
 * validation losses), P2 and P3 a row per configuration (rfexp_p23_csv), P4 (rfexp_p4_csv). */
extern const hdp_field_table hdp_rf_csv_fields;
extern const hdp_field_table hdp_rfexp_p1_csv_fields;
extern const hdp_field_table hdp_rfexp_p1_val_csv_fields;
extern const hdp_field_table hdp_rfexp_p23_csv_fields;
extern const hdp_field_table hdp_rfexp_p4_csv_fields;
/* rf-experiment P1's grid (hdp_rfexp_config): each configuration's test loss after
 * rfexp_p1_csv, its validation loss after rfexp_p1_val_csv, names suffixed _C<C>_CT<CT>. */
extern const hdp_field_table hdp_rfexp_grid_test_csv_fields;
extern const hdp_field_table hdp_rfexp_grid_val_csv_fields;
/* hdpsgd net --vs width | samples (hdp_netexp of hdpsgd/netexp.h, context the point's index:
 * a const long *): netexp_width_csv or netexp_samples_csv, then netexp_cell of each variant
 * under its prefix (dp: none, rf_, gd_). */
extern const hdp_field_table hdp_netexp_width_csv_fields;
extern const hdp_field_table hdp_netexp_samples_csv_fields;

/* Every table above by name (NULL: unknown), and the i-th (NULL past the end). */
const hdp_field_table *hdp_field_table_find(const char *name);
const hdp_field_table *hdp_field_table_at(int i);

/* Field i of a table (NULL past the end), and the number of fields. */
const hdp_field *hdp_field_at(const hdp_field_table *t, int i);
int hdp_field_count(const hdp_field_table *t);

/* The value of a scalar field of obj as a double (REAL, INT, BOOL; NaN for TEXT/COLUMN). */
double hdp_field_number(const hdp_field *f, const void *obj, const void *ctx);
/* The value of an INT field as a long. */
long hdp_field_long(const hdp_field *f, const void *obj, const void *ctx);
/* A TEXT field's text (computed by text when it has one); a COLUMN's data and length (*length 0 and NULL when absent). */
const char *hdp_field_text(const hdp_field *f, const void *obj);
const double *hdp_field_column(const hdp_field *f, const void *obj, long *length);

/* The field's name under prefix ("" or NULL: none; HDP_FIELD_OWN_PREFIX fields then take the
 * table's default prefix) in buf; returns buf. */
const char *hdp_field_name(const hdp_field_table *t, const hdp_field *f, const char *prefix,
                           char *buf, size_t size);

/* Where a field is written: the JSON summary or the handle's record. */
typedef enum { HDP_FIELD_IN_JSON = 0, HDP_FIELD_IN_RECORD = 1 } hdp_field_output;

/* Whether f is written to out, and then its name there in buf (hdp_field_name, with the
 * record's own name in the record) with "_<index>" appended when index >= 0 (a table written
 * once per index, e.g. the refine levels: refine_knots_0, ...); NULL when it is not written. */
const char *hdp_field_name_in(const hdp_field_table *t, const hdp_field *f, hdp_field_output out,
                              const char *prefix, long index, char *buf, size_t size);

/* What a writer does with each kind of field (hdp_field_write): a LIST is handed over as its
 * field, to be read element by element (f->count, f->get). */
typedef struct {
    void (*real)(void *user, const char *name, double v);
    void (*integer)(void *user, const char *name, long v);
    void (*boolean)(void *user, const char *name, int v);
    void (*text)(void *user, const char *name, const char *v);
    void (*column)(void *user, const char *name, const double *v, long length);
    void (*list)(void *user, const char *name, const hdp_field *f, const void *obj);
    void (*seed)(void *user, const char *name, unsigned long long v);
} hdp_field_sink;

/* Every field of table t that out holds, of obj (context ctx) under prefix, in the table's
 * order, to the sink; index >= 0: the table written once per index (hdp_field_name_in), the
 * context then the index (a const long *). */
void hdp_field_write(const hdp_field_table *t, hdp_field_output out, const char *prefix,
                     long index, const void *obj, const void *ctx, const hdp_field_sink *sink,
                     void *user);

#ifdef __cplusplus
}
#endif
#endif
