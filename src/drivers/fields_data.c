/*
 * fields_data.c — the result tables of a user's data set (hdpsgd/fields.h): the summary of
 * `hdpsgd dataset` (hdp_dataset_summary) and what the ODE and the Monte Carlo add on a model
 * with data.source = file (docs/theory.md §9). The other tables are in fields.c and
 * fields_design.c.
 */
#include <math.h>

#include "drivers/fields_internal.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/sim.h"

/* ---- a data set (data.source = file, docs/theory.md §9) ---- */

GETTER(get_data_rows, hdp_model_data(ctx) ? (double)hdp_model_data(ctx)->train.n : NAN)
GETTER(get_data_seconds, hdp_model_data(ctx) ? hdp_model_data(ctx)->seconds : NAN)

TABLE(hdp_ode_data_fields, "ode_data", NULL,
      "the risk ODE on a data set: its corrections (context: the model)",
    GET("data_rows", HDP_FIELD_INT, get_data_rows, "rows N of the data set"),
    GET("data_load_seconds", HDP_FIELD_REAL, get_data_seconds,
        "wall time of reading and preparing the data set (once per model)"),
    REAL_AS(hdp_ode_result, "risk_bias", data_risk_bias,
            "R_bias = 1/2 ||theta_c - theta*||^2_Sigma, the clipping bias's excess risk (0: c = "
            "inf or planted)"),
    REAL_AS(hdp_ode_result, "bias_cross_start", data_cross_start,
            "the first-moment cross term at t = 0 (-theta_c^T Sigma (theta_c - theta*))"),
    REAL_AS(hdp_ode_result, "bias_cross_final", data_cross_final,
            "the first-moment cross term at t = 1"),
    REAL_AS(hdp_ode_result, "residual_tau2", data_tau2,
            "mean square of the residuals whose empirical law is the label noise (at theta_c for "
            "finite c, else at theta*; planted: data.tau2)"),
    REAL_AS(hdp_ode_result, "heteroscedastic_ratio", data_hetero_ratio,
            "E[z^2 x^T Sigma x] / (tau^2 E[x^T Sigma x]) of the residuals (1: homoscedastic; "
            "planted: 0, not computed)"),
    REAL_AS(hdp_ode_result, "heteroscedastic_final", data_hetero_final,
            "the heteroscedastic correction's part of the final risk"),
    REAL_AS(hdp_ode_result, "bias_clipped_fraction", data_clipped,
            "fraction of the rows whose gradient is clipped at theta_c"),
    INT_AS(hdp_ode_result, "bias_newton_steps", data_bias_iterations, 0,
           "Newton steps that found theta_c"),
    REAL_AS(hdp_ode_result, "bias_seconds", data_bias_seconds, "wall time of theta_c"),
    REAL_AS(hdp_ode_result, "ode_test_mse", test_mse_final,
            "the predicted held-out MSE at t = 1 (null: no held-out set)"),
    REAL_AS(hdp_ode_result, "test_mse_star", test_mse_star,
            "the held-out MSE of theta* (least-squares; null otherwise)"));

TABLE(hdp_ode_data_columns, "ode_data_columns", NULL,
      "the risk ODE on a data set with a held-out set: its CSV column",
    COL(hdp_ode_result, "ode_test_mse", test_mse, "%.12g",
        "the predicted held-out MSE of the iterate at t (docs/theory.md §9)"));

static double mc_last(const hdp_mc_result *r, const double *v)
{
    return v && r->points > 0 ? v[r->points - 1] : NAN;
}
GETTER(get_test_mse, mc_last(obj, ((const hdp_mc_result *)obj)->test_mse))
GETTER(get_test_mse_se, mc_last(obj, ((const hdp_mc_result *)obj)->test_mse_stderr))

TABLE(hdp_mc_data_fields, "mc_data", NULL,
      "DP-SGD on a data set's rows: the held-out MSE at t = 1",
    GET("test_mse", HDP_FIELD_REAL, get_test_mse,
        "mean held-out MSE of the runs' iterates at t = 1 (null: no held-out set)"),
    GET("test_mse_stderr", HDP_FIELD_REAL, get_test_mse_se, "its standard error"));

TABLE(hdp_mc_data_columns, "mc_data_columns", NULL,
      "DP-SGD on a data set's rows with a held-out set: its CSV columns",
    COL(hdp_mc_result, "test_mse", test_mse, "%.12g",
        "mean held-out MSE of the runs' iterates at t"),
    COL(hdp_mc_result, "test_mse_stderr", test_mse_stderr, "%.12g", "its standard error"));

/* ---- a user's data set (hdpsgd dataset) ---- */

#define DS_COL(nm, m, h)                                                                       \
    {.name = nm, .kind = HDP_FIELD_COLUMN, .offset = offsetof(hdp_dataset_summary, m),         \
     .length = offsetof(hdp_dataset_summary, d), .format = "%.17g",                            \
     .flags = HDP_FIELD_JSON_ARRAY, .help = h}

TABLE(hdp_dataset_fields, "dataset", NULL,
      "a user's data set prepared as the empirical model of docs/theory.md §9 (hdpsgd dataset)",
    INT(hdp_dataset_summary, n, "rows N"),
    INT(hdp_dataset_summary, d, "features d per row"),
    TEXT(hdp_dataset_summary, storage,
         "float32 (every value of the file is exactly a float32) or float64"),
    BOOL_AS(hdp_dataset_summary, "center", center, 0, "the mean row (and label) was subtracted"),
    TEXT(hdp_dataset_summary, scale, "trace (mean eigenvalue 1) or none"),
    REAL(hdp_dataset_summary, scale_factor, "the factor the rows were multiplied by"),
    REAL(hdp_dataset_summary, trace_raw, "tr Sigma before scaling, Sigma = X'X/N"),
    REAL(hdp_dataset_summary, trace, "tr Sigma of the prepared rows (d for scale = trace)"),
    DS_COL("eigenvalues", eigenvalues, "the eigenvalues of Sigma, decreasing (d)"));

TABLE(hdp_dataset_classes_fields, "dataset_classes", NULL,
      "the labels mapped to +1 and -1 by their classes",
    INT(hdp_dataset_summary, positive_count, "labels mapped to +1 (the classes given)"));

TABLE(hdp_dataset_labels_fields, "dataset_labels", NULL,
      "the least-squares target of a data set with labels",
    REAL(hdp_dataset_summary, ridge, "ridge of the least-squares target"),
    REAL(hdp_dataset_summary, label_mean, "the labels' mean subtracted (0 without centring)"),
    REAL(hdp_dataset_summary, label_variance, "(1/N) sum y_i^2 of the labels as used"),
    REAL(hdp_dataset_summary, theta_norm, "|theta*|, theta* = (Sigma + ridge I)^-1 X'y/N"),
    REAL(hdp_dataset_summary, risk0, "R(0) = theta*' Sigma theta* / 2, the excess risk at theta = 0"),
    REAL(hdp_dataset_summary, residual_variance,
         "tau^2 = (1/N) sum (y_i - x_i'theta*)^2, the residuals' variance"),
    DS_COL("energy", energy, "D_j(0) = (d/2)(u_j'theta*)^2 per eigendirection (d)"));

TABLE(hdp_dataset_test_fields, "dataset_test", NULL,
      "the held-out rows, prepared as the training rows",
    INT(hdp_dataset_summary, test_n, "held-out rows"));

TABLE(hdp_dataset_test_labels_fields, "dataset_test_labels", NULL,
      "the target's error on the held-out rows",
    REAL(hdp_dataset_summary, test_mse,
         "(1/n) sum (y - label_mean - x'theta*)^2 on the held-out rows"));

/* ---- hdpsgd dataset's echo of its inputs (hdp_dataset_names), each before the tables of
 * what it gave: dataset_features before dataset, dataset_labels_file before dataset_classes
 * and dataset_labels, dataset_test_file before dataset_test, dataset_test_labels_file before
 * dataset_test_labels; the JSON only ---- */

#define NAME_OF(m) TEXT_GETTER(name_##m, ((const hdp_dataset_names *)obj)->m)
NAME_OF(features)
NAME_OF(labels)
NAME_OF(positive)
NAME_OF(test_features)
NAME_OF(test_labels)
#define NAME(m, fl, h) \
    {.name = #m, .kind = HDP_FIELD_TEXT, .text = name_##m, .flags = HDP_FIELD_NO_RECORD | (fl), .help = h}

TABLE(hdp_dataset_features_fields, "dataset_features", NULL, "hdpsgd dataset's features file",
    NAME(features, 0, "the features' file, as given"));
TABLE(hdp_dataset_labels_file_fields, "dataset_labels_file", NULL,
      "hdpsgd dataset's labels file and classes",
    NAME(labels, 0, "the labels' file (--labels), as given"),
    NAME(positive, HDP_FIELD_OPTIONAL, "the classes mapped to +1 (--positive), as given"));
TABLE(hdp_dataset_test_file_fields, "dataset_test_file", NULL, "hdpsgd dataset's held-out file",
    NAME(test_features, 0, "the held-out features' file (--test-features), as given"));
TABLE(hdp_dataset_test_labels_file_fields, "dataset_test_labels_file", NULL,
      "hdpsgd dataset's held-out labels file",
    NAME(test_labels, 0, "the held-out labels' file (--test-labels), as given"));
