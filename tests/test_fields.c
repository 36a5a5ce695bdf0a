/*
 * test_fields.c — the result tables of hdpsgd/fields.h: every table's names unique, the
 * tables a command writes together without a common name (so that no JSON summary or record
 * holds a key twice), every field with its help, and the writers reading the struct's values.
 */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/design.h"
#include "hdpsgd/kl.h"
#include "hdpsgd/ncsweep.h"
#include "hdpsgd/netexp.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rfexp.h"
#include "hdpsgd/sweep.h"
#include "hdpsgd/hdpsgd.h"
#include "io/output.h"

/* the names of the tables under their prefixes, all distinct in one output */
static void distinct_in(hdp_field_output out, const hdp_field_table *const *t,
                        const char *const *prefix, int n)
{
    char names[256][96];
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int f = 0; f < hdp_field_count(t[i]); f++) {
            assert_true(k < 256);
            if (!hdp_field_name_in(t[i], hdp_field_at(t[i], f), out, prefix[i], -1, names[k],
                                   sizeof names[k]))
                continue;
            for (int j = 0; j < k; j++)
                if (!strcmp(names[j], names[k]))
                    fail_msg("'%s' twice (table %s, %s)", names[k], t[i]->name,
                             out == HDP_FIELD_IN_JSON ? "JSON" : "record");
            k++;
        }
}

/* ... in the JSON and in the record */
static void distinct(const hdp_field_table *const *t, const char *const *prefix, int n)
{
    distinct_in(HDP_FIELD_IN_JSON, t, prefix, n);
    distinct_in(HDP_FIELD_IN_RECORD, t, prefix, n);
}

static void every_table_has_unique_named_fields_with_help(void **state)
{
    (void)state;
    int n = 0;
    for (const hdp_field_table *t; (t = hdp_field_table_at(n)); n++) {
        assert_non_null(t->help);
        assert_ptr_equal(hdp_field_table_find(t->name), t);
        assert_true(hdp_field_count(t) > 0);
        const hdp_field_table *one[] = {t};
        const char *none[] = {""};
        distinct(one, none, 1);
        for (int f = 0; f < hdp_field_count(t); f++) {
            const hdp_field *x = hdp_field_at(t, f);
            assert_true(x->help && strlen(x->help) > 3);
            if (x->kind == HDP_FIELD_COLUMN)
                assert_non_null(x->format);
        }
    }
    assert_true(n >= 20);
    assert_null(hdp_field_table_find("nope"));
    assert_null(hdp_field_at(&hdp_ode_fields, hdp_field_count(&hdp_ode_fields)));
}

/* the tables each command and record writes together */
static void tables_written_together_share_no_name(void **state)
{
    (void)state;
    const hdp_field_table *ode[] = {&hdp_ode_fields, &hdp_model_fields, &hdp_source_fields,
                                    &hdp_version_fields};
    const char *p2[] = {"", "", "", "", "", "", "", "", "", "", "", ""};
    distinct(ode, p2, 4);
    const hdp_field_table *mc[] = {&hdp_mc_fields, &hdp_mc_rows_fields, &hdp_model_fields,
                                   &hdp_mc_run_fields, &hdp_mc_sgd_fields};
    distinct(mc, p2, 5);
    const hdp_field_table *mc2[] = {&hdp_mc_command_fields, &hdp_mc_fields, &hdp_mc_rows_fields,
                                    &hdp_mc_data_fields,    &hdp_model_fields, &hdp_mc_run_fields,
                                    &hdp_mc_seed_fields,    &hdp_source_fields, &hdp_version_fields,
                                    &hdp_mc_finals_fields};
    distinct(mc2, p2, 10);
    /* validate: the JSON's numbers, and the record's curves */
    const hdp_field_table *v[] = {&hdp_validate_side_fields, &hdp_validate_side_fields,
                                  &hdp_validate_fields,      &hdp_validate_sde_fields,
                                  &hdp_mc_rows_fields,       &hdp_model_fields,
                                  &hdp_ode_fields,           &hdp_mc_fields,
                                  &hdp_mc_fields,            &hdp_validate_grid_fields,
                                  &hdp_source_fields};
    const char *vp[] = {"", "sde_", "", "", "", "", "ode.", "sim.", "sde.", "", ""};
    distinct(v, vp, 11);
    /* rf and rf-experiment (a point's names suffixed: checked unsuffixed, a stronger test) */
    const hdp_field_table *rf[] = {&hdp_rf_final_fields, &hdp_rf_terms_fields, &hdp_rf_run_fields,
                                   &hdp_source_fields, &hdp_version_fields};
    distinct(rf, p2, 5);
    const hdp_field_table *rfx[] = {&hdp_rfexp_fields, &hdp_rfexp_point_fields,
                                    &hdp_rfexp_source_fields};
    distinct(rfx, p2, 3);
    /* validate --scaling: its levels beside the validator's JSON */
    const hdp_field_table *vs[] = {&hdp_validate_side_fields, &hdp_validate_fields,
                                   &hdp_model_fields,         &hdp_source_fields,
                                   &hdp_validate_scaling_fields, &hdp_validate_level_fields,
                                   &hdp_validate_level_fields};
    const char *vsp[] = {"", "", "", "", "", "scaling_0_", "scaling_1_"};
    distinct(vs, vsp, 7);
    const hdp_field_table *pr[] = {&hdp_privacy_fields, &hdp_nonexpansive_fields};
    distinct(pr, p2, 2);
    const hdp_field_table *acc[] = {&hdp_accountant_choice_fields, &hdp_accountant_fields,
                                    &hdp_accountant_query_fields, &hdp_accountant_epochs_fields,
                                    &hdp_accountant_target_fields};
    distinct(acc, p2, 5);
    const hdp_field_table *prt[] = {&hdp_privacy_fields, &hdp_nonexpansive_fields,
                                    &hdp_privacy_target_fields, &hdp_privacy_deltas_fields,
                                    &hdp_source_fields};
    distinct(prt, p2, 5);
    /* rates: the grid, each family's risks, slopes and fit, the summary, the source */
    const hdp_field_table *ra[] = {&hdp_rates_fields, &hdp_rates_risk_fields,
                                   &hdp_rates_risk_fields, &hdp_rates_slope_fields,
                                   &hdp_rates_slope_fields, &hdp_rates_fit_fields,
                                   &hdp_rates_fit_fields, &hdp_rates_summary_fields,
                                   &hdp_source_fields, &hdp_version_fields};
    const char *rap[] = {"", "output_", "pl_", "output_", "pl_", "output_", "pl_", "", "", ""};
    distinct(ra, rap, 10);
    const hdp_field_table *nc[] = {&hdp_nc_spec_fields, &hdp_nc_fields, &hdp_nc_draws_fields,
                                   &hdp_nc_problem_fields, &hdp_source_fields};
    distinct(nc, p2, 5);
    const hdp_field_table *si[] = {&hdp_si_stage2_fields, &hdp_si_result_fields,
                                   &hdp_si_problem_fields, &hdp_si_eta_fields,
                                   &hdp_si_params_fields, &hdp_si_budget_fields,
                                   &hdp_source_fields};
    distinct(si, p2, 7);
    const hdp_field_table *klb[] = {&hdp_kl_arch_fields, &hdp_kl_beta_fields,
                                    &hdp_kl_bound_fields, &hdp_source_fields};
    distinct(klb, p2, 4);
    const hdp_field_table *klr[] = {&hdp_kl_epoch_fields, &hdp_kl_run_scheme_fields,
                                    &hdp_kl_epoch_fields, &hdp_kl_run_relu_fields,
                                    &hdp_kl_epoch_fields, &hdp_kl_run_scheme_fields,
                                    &hdp_kl_network_fields, &hdp_kl_run_fields,
                                    &hdp_source_fields};
    const char *klrp[] = {"he_", "he_", "he_relu_", "he_relu_", "ntk_", "ntk_", "", "", ""};
    distinct(klr, klrp, 9);
    const hdp_field_table *klv[] = {&hdp_kl_sweep_depth_fields, &hdp_kl_sweep_scheme_fields,
                                    &hdp_kl_sweep_relu_fields, &hdp_kl_sweep_scheme_fields,
                                    &hdp_kl_sweep_relu_fields, &hdp_kl_sweep_fields};
    const char *klvp[] = {"", "he_", "he_relu_", "ntk_", "ntk_relu_", ""};
    distinct(klv, klvp, 6);
    const hdp_field_table *net[] = {&hdp_net_fields, &hdp_net_config_fields, &hdp_source_fields};
    distinct(net, p2, 3);
    /* net --vs width | samples: the grid, each variant's arrays under its prefix, the panel's */
    const hdp_field_table *nvw[] = {&hdp_netexp_width_fields, &hdp_netexp_variant_fields,
                                    &hdp_netexp_variant_fields, &hdp_netexp_variant_fields,
                                    &hdp_netexp_fields, &hdp_source_fields};
    const hdp_field_table *nvs[] = {&hdp_netexp_samples_fields, &hdp_netexp_variant_fields,
                                    &hdp_netexp_variant_fields, &hdp_netexp_variant_fields,
                                    &hdp_netexp_fields, &hdp_source_fields};
    const char *nvp[] = {"", "", "rf_", "gd_", "", ""};
    distinct(nvw, nvp, 6);
    distinct(nvs, nvp, 6);
    /* nc --sweep: the sweep, each curve under its name, the time, the source */
    const hdp_field_table *ncs[] = {&hdp_nc_sweep_fields, &hdp_nc_sweep_curve_fields,
                                    &hdp_nc_sweep_curve_fields, &hdp_nc_sweep_time_fields,
                                    &hdp_source_fields};
    const char *ncsp[] = {"", "both_", "both+center_", "", ""};
    distinct(ncs, ncsp, 5);
    const hdp_field_table *kli[] = {&hdp_kl_init_point_fields, &hdp_kl_init_point_fields,
                                    &hdp_kl_init_fields};
    const char *klip[] = {"he_L2_", "he_L3_", ""};
    distinct(kli, klip, 3);
    const hdp_field_table *ds[] = {&hdp_dataset_features_fields,   &hdp_dataset_fields,
                                   &hdp_dataset_labels_file_fields, &hdp_dataset_classes_fields,
                                   &hdp_dataset_labels_fields,      &hdp_dataset_test_file_fields,
                                   &hdp_dataset_test_fields,        &hdp_dataset_test_labels_file_fields,
                                   &hdp_dataset_test_labels_fields};
    distinct(ds, p2, 9);
    /* schedule --optimize: every family's tables under its prefix, then the set's */
    const hdp_field_table *dz[] = {
        &hdp_design_fields, &hdp_design_eta0_fields, &hdp_design_cost_fields,
        &hdp_design_fields, &hdp_design_eta0_fields, &hdp_design_cost_fields,
        &hdp_design_fields, &hdp_design_inverse_time_fields, &hdp_design_cost_fields,
        &hdp_design_fields, &hdp_design_pl_fields, &hdp_design_cost_fields,
        &hdp_design_refine_fields, &hdp_design_level_fields,
        &hdp_design_equivalent_fields, &hdp_design_equivalent_fields, &hdp_design_equivalent_fields,
        &hdp_design_set_fields, &hdp_design_batch_fields, &hdp_design_batch_terms_fields,
        &hdp_design_summary_fields, &hdp_design_file_fields};
    const char *dzp[] = {"output_", "output_", "output_", "linear_noise_", "linear_noise_",
                         "linear_noise_", "inverse_time_", "inverse_time_", "inverse_time_",
                         "pl_", "pl_", "pl_", "", "", "output_", "linear_noise_",
                         "inverse_time_", "", "", "", "", ""};
    distinct(dz, dzp, 22);
    /* the record: the best family's tables also without prefix (pl's here) */
    const hdp_field_table *dr[] = {
        &hdp_design_fields, &hdp_design_eta0_fields, &hdp_design_pl_fields,
        &hdp_design_cost_fields, &hdp_design_fields, &hdp_design_eta0_fields,
        &hdp_design_pl_fields, &hdp_design_cost_fields, &hdp_design_set_fields,
        &hdp_design_summary_fields, &hdp_design_refine_fields, &hdp_design_level_fields};
    const char *drp[] = {"pl_", "pl_", "pl_", "pl_", "", "", "", "", "", "", "", ""};
    distinct_in(HDP_FIELD_IN_RECORD, dr, drp, 12);
    /* the sim side without prefix keeps its verdict apart from the overall "pass" */
    char buf[64];
    const hdp_field_table *s = &hdp_validate_side_fields;
    int pass = -1;
    for (int f = 0; f < hdp_field_count(s); f++)
        if (!strcmp(hdp_field_at(s, f)->name, "pass"))
            pass = f;
    assert_true(pass >= 0);
    assert_string_equal(hdp_field_name(s, hdp_field_at(s, pass), "", buf, sizeof buf), "sim_pass");
    assert_string_equal(hdp_field_name(s, hdp_field_at(s, pass), "sde_", buf, sizeof buf), "sde_pass");
}

/* the design's JSON and sweep values: computed fields (a text among them) on the set */
static void design_tables(void **state)
{
    (void)state;
    static hdp_design_set d; /* large (the knot arrays): not on the stack */
    memset(&d, 0, sizeof d);
    d.best = HDP_FAMILY_PL;
    d.res[HDP_FAMILY_PL].final_risk = 0.125;
    d.res[HDP_FAMILY_PL].c = 2;
    d.res[HDP_FAMILY_PL].knots = 5;
    d.res[HDP_FAMILY_PL].table_len = 9;
    for (int i = 0; i < 5; i++)
        d.res[HDP_FAMILY_PL].knot_eta[i] = 2.5 - 0.5 * i;
    d.res[HDP_FAMILY_PL].levels = 2;
    d.res[HDP_FAMILY_PL].level_knots[0] = 3;
    d.res[HDP_FAMILY_PL].level_knots[1] = 5;
    d.res[HDP_FAMILY_PL].level_risk[0] = 0.25;
    d.res[HDP_FAMILY_PL].level_risk[1] = 0.125;
    static hdp_design_batch db; /* large: not on the stack */
    memset(&db, 0, sizeof db);
    db.count = 3;
    db.best = 1;
    for (int i = 0; i < 3; i++) {
        db.batch[i] = 1L << i;
        db.risk[i] = 0.5 + i;
    }
    hdp_design_equivalent eq = {0.75, INFINITY};
    d.solves = 40;
    d.seconds = 2;
    hdp_model m;
    memset(&m, 0, sizeof m);
    m.rho = 1;
    m.delta = 1e-5;
    m.n = 100;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    hdp_json j;
    hdp_json_begin(&j, f);
    hdp_json_fields(&j, &hdp_design_pl_fields, "pl_", &d.res[HDP_FAMILY_PL], NULL);
    hdp_json_fields(&j, &hdp_design_set_fields, "", &d, &m);
    hdp_json_fields(&j, &hdp_design_summary_fields, "", &d, &m);
    hdp_json_fields(&j, &hdp_design_refine_fields, "", &d.res[HDP_FAMILY_PL], NULL);
    for (long l = 0; l < 2; l++)
        hdp_json_fields_at(&j, &hdp_design_level_fields, "", &d.res[HDP_FAMILY_PL], l);
    hdp_json_fields(&j, &hdp_design_equivalent_fields, "output_", &eq, NULL);
    hdp_json_fields(&j, &hdp_design_batch_fields, "", &db, NULL);
    hdp_json_fields(&j, &hdp_design_file_fields, "", "a \"b\".tab", NULL);
    hdp_json_fields(&j, &hdp_design_file_fields, "", NULL, NULL);
    hdp_json_end(&j);
    fclose(f);
    assert_non_null(strstr(buf, "\"pl_knots\": 5"));
    /* lists as arrays (pl's knot_t is the record's only), levels suffixed _<l> */
    assert_non_null(strstr(buf, "\"pl_eta\": [2.5, 2, 1.5, 1, 0.5]"));
    assert_null(strstr(buf, "knot_t"));
    assert_non_null(strstr(buf, "\"refine_levels\": 2,\n  \"refine_knots_0\": 3,\n  "
                                "\"refine_risk_0\": 0.25,\n  \"refine_knots_1\": 5,\n  "
                                "\"refine_risk_1\": 0.125"));
    assert_non_null(strstr(buf, "\"output_rho_equivalent\": 0.75"));
    assert_non_null(strstr(buf, "\"output_epsilon_equivalent\": null"));
    assert_non_null(strstr(buf, "\"best_batch\": 2,\n  \"batch_candidates\": [1, 2, 4],\n  "
                                "\"batch_final_risks\": [0.5, 1.5, 2.5]"));
    assert_non_null(strstr(buf, "\"table_file\": \"a \\\"b\\\".tab\""));
    assert_non_null(strstr(buf, "\"table_file\": \"\""));
    assert_non_null(strstr(buf, "\"converged\": true"));
    assert_non_null(strstr(buf, "\"best_family\": \"pl\""));
    assert_non_null(strstr(buf, "\"best_final_risk\": 0.125"));
    assert_non_null(strstr(buf, "\"best_c\": 2"));
    assert_non_null(strstr(buf, "\"table_knots\": 9"));
    assert_non_null(strstr(buf, "\"ode_solves\": 40"));
    assert_non_null(strstr(buf, "\"ode_solves_per_second\": 20"));
    assert_non_null(strstr(buf, "\"n\": 100"));
    free(buf);
    /* the best family is a computed text */
    const hdp_field *bf = hdp_field_at(&hdp_design_set_fields, 1);
    assert_string_equal(bf->name, "best_family");
    assert_string_equal(hdp_field_text(bf, &d), "pl");
}

static void writers_read_the_struct(void **state)
{
    (void)state;
    double t[3] = {0, 0.5, 1}, risk[3] = {1, 0.5, 0.25};
    double zero[3] = {0};
    hdp_ode_result o;
    memset(&o, 0, sizeof o);
    o.points = 3;
    o.t = t;
    o.risk = risk;
    o.upper = o.lower = o.mu = o.nu = o.eta = o.sigma2 = zero;
    o.final_risk = 0.25;
    o.bins = 7;
    o.stable = 1;
    snprintf(o.solver, sizeof o.solver, "dop853");
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    hdp_json j;
    hdp_json_begin(&j, f);
    hdp_json_fields(&j, &hdp_ode_fields, "", &o, NULL);
    hdp_json_end(&j);
    hdp_csv_columns(f, &hdp_ode_fields, &o);
    fclose(f);
    assert_non_null(strstr(buf, "\"final_risk\": 0.25"));
    assert_non_null(strstr(buf, "\"bins\": 7"));
    assert_non_null(strstr(buf, "\"stable\": true"));
    assert_non_null(strstr(buf, "\"solver\": \"dop853\""));
    assert_null(strstr(buf, "\"risk\""));                 /* columns: the CSV's */
    assert_non_null(strstr(buf, "t,risk,risk_upper,risk_lower,mu_c,nu_c,eta,sigma2\n0,1,0,"));
    assert_non_null(strstr(buf, "\n1,0.25,0,0,0,0,0,0\n"));
    free(buf);
    /* the int member threads beside the long steps */
    hdp_mc_result mc;
    memset(&mc, 0xff, sizeof mc);
    mc.threads = 3;
    mc.steps = 2000;
    for (int i = 0; i < hdp_field_count(&hdp_mc_run_fields); i++) {
        const hdp_field *y = hdp_field_at(&hdp_mc_run_fields, i);
        if (!strcmp(y->name, "threads"))
            assert_int_equal(hdp_field_long(y, &mc, NULL), 3);
        if (!strcmp(y->name, "steps"))
            assert_int_equal(hdp_field_long(y, &mc, NULL), 2000);
    }
    /* an element of a curve: the index through the context */
    double kl[3] = {0.1, 0.2, 0.3};
    hdp_kl_run_result kr;
    memset(&kr, 0, sizeof kr);
    kr.kl_mc = kl;
    long E = 2;
    const hdp_field *k0 = hdp_field_at(&hdp_kl_epoch_fields, 0);
    assert_string_equal(k0->name, "kl");
    assert_true(hdp_field_number(k0, &kr, &E) == 0.3);
    assert_true(isnan(hdp_field_number(hdp_field_at(&hdp_kl_epoch_fields, 1), &kr, &E)));
    const hdp_field *x = hdp_field_at(&hdp_ode_fields, 1);
    long len = 0;
    assert_ptr_equal(hdp_field_column(x, &o, &len), risk);
    assert_int_equal(len, 3);
}

/* a column marked HDP_FIELD_JSON_ARRAY is a JSON array of its d values (a data set's
 * eigenvalues), texts and the int d read from the summary */
static void json_arrays(void **state)
{
    (void)state;
    double lam[3] = {2, 0.5, 0.5};
    hdp_dataset_summary s;
    memset(&s, 0, sizeof s);
    s.n = 10;
    s.d = 3;
    s.center = 1;
    snprintf(s.storage, sizeof s.storage, "float32");
    snprintf(s.scale, sizeof s.scale, "trace");
    s.scale_factor = 0.25;
    s.eigenvalues = lam;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    hdp_json j;
    hdp_json_begin(&j, f);
    hdp_json_fields(&j, &hdp_dataset_fields, "", &s, NULL);
    hdp_json_end(&j);
    fclose(f);
    assert_non_null(strstr(buf, "\"eigenvalues\": [2, 0.5, 0.5]"));
    assert_non_null(strstr(buf, "\"d\": 3"));
    assert_non_null(strstr(buf, "\"storage\": \"float32\""));
    assert_non_null(strstr(buf, "\"center\": true"));
    assert_non_null(strstr(buf, "\"scale_factor\": 0.25"));
    free(buf);
    /* a list of objects: privacy's at_delta, an object of privacy_at_delta per delta (its
     * rho_for_target left out: no target) */
    const hdp_privacy_at_delta at[2] = {{1e-6, 2.5, 3, NAN}, {1e-3, 1.5, 2, NAN}};
    const hdp_privacy_deltas dl = {2, at};
    f = open_memstream(&buf, &size);
    assert_non_null(f);
    hdp_json_begin(&j, f);
    hdp_json_fields(&j, &hdp_privacy_deltas_fields, "", &dl, NULL);
    hdp_json_end(&j);
    fclose(f);
    assert_non_null(strstr(buf, "\"at_delta\": [{"));
    assert_non_null(strstr(buf, "\"delta\": 1e-06,"));
    assert_non_null(strstr(buf, "\"epsilon_bs\": 2\n"));
    assert_null(strstr(buf, "rho_for_target"));
    free(buf);
}

/* a JSON object begun on a stream into memory (*buf once the stream is closed) */
static FILE *json_to_memory(char **buf, size_t *size, hdp_json *j)
{
    FILE *f = open_memstream(buf, size);
    assert_non_null(f);
    hdp_json_begin(j, f);
    return f;
}

/* net --vs's JSON arrays: a variant's are netexp_cell's fields in its order, each a list over
 * the grid read from that variant's cells; nc --sweep's curve from its row of points */
static void panel_lists(void **state)
{
    (void)state;
    const hdp_field_table *c = &hdp_netexp_cell_fields, *v = &hdp_netexp_variant_fields;
    assert_int_equal(hdp_field_count(v), hdp_field_count(c));
    for (int k = 0; k < hdp_field_count(c); k++)
        assert_string_equal(hdp_field_at(v, k)->name, hdp_field_at(c, k)->name);
    hdp_netexp_cell dp[2], rf[2], gd[2];
    memset(dp, 0, sizeof dp), memset(rf, 0, sizeof rf), memset(gd, 0, sizeof gd);
    rf[0].test_accuracy = 0.5, rf[1].test_accuracy = 0.75, rf[1].steps = 30;
    gd[1].clip = INFINITY;
    double grid[2] = {4, 8}, n[2] = {40, 40}, width[2] = {4, 8};
    hdp_netexp x;
    memset(&x, 0, sizeof x);
    x.points = 2, x.grid = grid, x.n = n, x.width = width;
    x.cell[HDP_NETEXP_DP] = dp, x.cell[HDP_NETEXP_RF] = rf, x.cell[HDP_NETEXP_GD] = gd;
    char *buf = NULL;
    size_t size = 0;
    hdp_json j;
    FILE *f = json_to_memory(&buf, &size, &j);
    hdp_json_fields(&j, &hdp_netexp_width_fields, "", &x, NULL);
    const hdp_netexp_variant r = {&x, HDP_NETEXP_RF}, g = {&x, HDP_NETEXP_GD};
    hdp_json_fields(&j, v, "rf_", &r, NULL);
    hdp_json_fields(&j, v, "gd_", &g, NULL);
    hdp_json_end(&j);
    fclose(f);
    assert_non_null(strstr(buf, "\"width\": [4, 8],\n  \"n\": [40, 40],"));
    assert_non_null(strstr(buf, "\"rf_test_accuracy\": [0.5, 0.75],"));
    assert_non_null(strstr(buf, "\"rf_steps\": [0, 30],"));
    assert_non_null(strstr(buf, "\"gd_clip\": [0, null],"));
    free(buf);
    /* nc --sweep: two curves at three p, the second's row read for its prefix */
    hdp_nc_point pts[6];
    memset(pts, 0, sizeof pts);
    for (int k = 0; k < 6; k++)
        pts[k].res.error_mean = 0.125 * k, pts[k].exact = NAN;
    hdp_ncsweep sw;
    memset(&sw, 0, sizeof sw);
    snprintf(sw.name, sizeof sw.name, "flat");
    sw.ncurves = 2, sw.nps = 3, sw.ps[0] = 10, sw.ps[1] = 20, sw.ps[2] = 40, sw.draws = 5;
    sw.points = pts;
    hdp_nc_spec base;
    memset(&base, 0, sizeof base);
    base.rho = 0.005, base.delta = 1e-5;
    f = json_to_memory(&buf, &size, &j);
    hdp_json_fields(&j, &hdp_nc_sweep_fields, "", &sw, &base);
    int one = 1;
    hdp_json_fields(&j, &hdp_nc_sweep_curve_fields, "b_", &sw, &one);
    hdp_json_end(&j);
    fclose(f);
    assert_non_null(strstr(buf, "\"sweep\": \"flat\",\n  \"curves\": 2,\n  \"points\": 3,\n"
                                "  \"p_first\": 10,\n  \"p_last\": 40,\n  \"draws\": 5,\n"
                                "  \"rho\": 0.005,\n  \"delta\": 1e-05,"));
    char eps[96];
    snprintf(eps, sizeof eps, "\"epsilon_per_step\": %s",
             hdp_json_format_num((char[64]){0}, 64, hdp_zcdp_epsilon_cks(0.005, 1e-5)));
    assert_non_null(strstr(buf, eps));
    assert_non_null(strstr(buf, "\"b_error_first\": 0.375,\n  \"b_error_last\": 0.625,"));
    assert_non_null(strstr(buf, "\"b_max_z_exact\": null"));
    free(buf);
}

/* kl run --vs epochs' CSV: a scheme's columns under its prefix, its values at the row's epoch
 * (the arrays' element 1), the exact and Lemma 3.2 columns empty where NaN (logistic loss) */
static void kl_epochs_csv(void)
{
    double kl[] = {0, 0.5}, se[] = {0, 0.125}, sd[] = {0, 0.25}, mx[] = {0, 1}, loss[] = {1, 0.75},
           none[] = {NAN, NAN}, l32[] = {1, 3}, l10[] = {0, 0.5};
    hdp_kl_run_result r;
    memset(&r, 0, sizeof r);
    r.kl_mc = kl, r.kl_mc_se = se, r.kl_init_sd = sd, r.kl_mc_max = mx, r.train_loss = loss;
    r.kl_exact = r.kl_final = r.lemma32_exp = none, r.lemma32_bound = l32, r.lemma32_log10 = l10;
    hdp_kl_run_scheme ks = {&r, NULL, 1, 10, 2.0, 0.5, 1.0, 0};
    char *buf = NULL, want[512];
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    hdp_csv_header(f, &hdp_kl_epochs_csv_fields, 1);
    hdp_csv_header_in(f, &hdp_kl_epochs_scheme_csv_fields, "he_", "", 0);
    fputc('\n', f);
    hdp_csv_row(f, &hdp_kl_epochs_csv_fields, &ks, NULL, 1);
    hdp_csv_row(f, &hdp_kl_epochs_scheme_csv_fields, &ks, NULL, 0);
    fclose(f);
    snprintf(want, sizeof want,
             "epoch,T,he_kl,he_kl_se,he_kl_sd,he_kl_max,he_kl_exact,he_kl_final,he_loss,he_bound,"
             "he_bound_seed,he_lemma32_bound,he_lemma32_exp_term,he_lemma32_log10_bound\n"
             "1,0.5,0.5,0.125,0.25,1,,,0.75,%.10g,%.10g,3,,0.5",
             hdp_kl_bound(2.0, 0.5, 10, 1.0, HDP_KL_C), hdp_kl_bound(2.0, 0.5, 10, 1.0, HDP_KL_C_SEED));
    assert_string_equal(buf, want);
    free(buf);
}

/* rf-experiment P4's CSV: a configuration's values and its context's (C, CT, selected) */
static void rfexp_csv(void)
{
    hdp_rfexp_config x;
    memset(&x, 0, sizeof x);
    x.q.T = 40, x.q.tau = 2.5, x.q.C_clip = 3, x.q.sigma = 0.5;
    x.test = 0.25, x.test_se = 0.125, x.train = 0.75, x.clipped = 0.5, x.val = 1.5, x.val_se = 0;
    hdp_rfexp_point pt;
    memset(&pt, 0, sizeof pt);
    pt.p = 9;
    const hdp_rfexp_row row = {&pt, 1, 2, 0, 1};
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    hdp_csv_header(f, &hdp_rfexp_p4_csv_fields, 1);
    fputc('\n', f);
    hdp_csv_row(f, &hdp_rfexp_p4_csv_fields, &x, &row, 1);
    fclose(f);
    assert_string_equal(buf, "C,CT,T,tau,C_clip,sigma,dpgd_test,dpgd_test_se,dpgd_train,clipped,"
                             "dpgd_val,dpgd_val_se,selected\n"
                             "1,2,40,2.5,3,0.5,0.25,0.125,0.75,0.5,1.5,0,1");
    free(buf);
}

/* a CSV written a row per result: the header from the table, each field in its format,
 * inverse-time's c1 and a empty for another family (HDP_FIELD_OPTIONAL), NaN printed (refused
 * when the file is published) where the field is not optional */
static void csv_rows(void **state)
{
    (void)state;
    static hdp_model m;
    m.gamma = 0.1;
    m.n = 200;
    hdp_design_result d;
    memset(&d, 0, sizeof d);
    d.family = HDP_FAMILY_OUTPUT;
    d.final_risk = 0.5;
    d.eta0 = d.eta1 = 1.25;
    d.c1 = d.a = 3;
    d.c = 0.3;
    d.ode_solves = 7;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    hdp_csv_header(f, &hdp_rates_csv_fields, 1);
    fputc('\n', f);
    hdp_csv_row(f, &hdp_rates_csv_fields, &d, &m, 1);
    fputc('\n', f);
    d.family = HDP_FAMILY_OPTIMAL;
    d.final_risk = NAN;
    hdp_csv_row(f, &hdp_rates_csv_fields, &d, &m, 0);
    fclose(f);
    assert_string_equal(buf, "gamma,n,family,final_risk,eta0,eta1,c1,a,c,ode_solves\n"
                             "0.10000000000000001,200,output,0.5,1.25,1.25,,,0.3,7\n"
                             ",0.10000000000000001,200,inverse-time,nan,1.25,1.25,3,3,0.3,7");
    free(buf);
    /* kl bound's columns name the schemes in hdp_kl_init_name's order */
    for (int k = 0; k < 4; k++) {
        char want[64];
        snprintf(want, sizeof want, "klseed_%s", hdp_kl_init_name(k));
        assert_string_equal(hdp_field_at(&hdp_kl_bound_csv_fields, 15 + k)->name, want);
    }
    kl_epochs_csv();
    rfexp_csv();
}

/* a sweep's rates columns from rates_slope (under rates_<family>_) and rates_summary: a point's
 * slopes, and a failed point's empty cells but for its ODE solves */
static void sweep_rates_columns(void **state)
{
    (void)state;
    hdp_sweep_settings set;
    memset(&set, 0, sizeof set);
    set.rates_want[HDP_FAMILY_OUTPUT] = set.rates_want[HDP_FAMILY_PL] = 1;
    hdp_sweep_point p;
    memset(&p, 0, sizeof p);
    p.set = &set;
    p.rates.slope[HDP_FAMILY_OUTPUT] = 0.5, p.rates.theory_slope[HDP_FAMILY_OUTPUT] = 0.25;
    p.rates.slope[HDP_FAMILY_PL] = 1, p.rates.theory_slope[HDP_FAMILY_PL] = INFINITY;
    p.rates.solves = 7;
    char cols[256] = "", ok[256] = "", failed[256] = "";
    hdp_sweep_rates.columns(&set, cols, sizeof cols);
    assert_string_equal(cols, ",rates_output_slope,rates_output_theory_slope,rates_pl_slope,"
                              "rates_pl_theory_slope,rates_ode_solves");
    hdp_sweep_rates.fields(&p, HDP_OK, ok, sizeof ok);
    assert_string_equal(ok, ",0.5,0.25,1,inf,7");
    hdp_sweep_rates.fields(&p, HDP_ENUMERIC, failed, sizeof failed);
    assert_string_equal(failed, ",,,,,7");
}

/* --names: every name a result table gives a JSON key or a record entry, one per line
 * (tests/cli/json_keys.sh checks every --json's keys against them) */
static int print_names(void)
{
    for (int i = 0; hdp_field_table_at(i); i++) {
        const hdp_field_table *t = hdp_field_table_at(i);
        for (int k = 0; k < hdp_field_count(t); k++) {
            const hdp_field *f = hdp_field_at(t, k);
            char name[128];
            if (hdp_field_name_in(t, f, HDP_FIELD_IN_JSON, "", -1, name, sizeof name))
                printf("%s\n", name);
            if ((f->flags & HDP_FIELD_OWN_PREFIX) && !(f->flags & HDP_FIELD_NO_JSON))
                printf("%s\n", f->name); /* also under another prefix (sde_pass) */
        }
    }
    return ferror(stdout) || fflush(stdout) ? 1 : 0;
}

/* --tables: every result table's name, one per line (tests/cli/help.sh checks that
 * `hdpsgd help results` lists each) */
static int print_tables(void)
{
    for (int i = 0; hdp_field_table_at(i); i++)
        printf("%s\n", hdp_field_table_at(i)->name);
    return ferror(stdout) || fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--names"))
        return print_names();
    if (argc == 2 && !strcmp(argv[1], "--tables"))
        return print_tables();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_table_has_unique_named_fields_with_help),
        cmocka_unit_test(tables_written_together_share_no_name),
        cmocka_unit_test(writers_read_the_struct),
        cmocka_unit_test(design_tables),
        cmocka_unit_test(json_arrays),
        cmocka_unit_test(panel_lists),
        cmocka_unit_test(csv_rows),
        cmocka_unit_test(sweep_rates_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
