/*
 * model.c — schema v1 of the model files, the core's part: its sections ([data] ...
 * [validate], [sgd] with its combinations) as tables of keys (core/schema.h) whose defaults are the built-in default
 * model, the names of its enums, the schema's entries for documentation, hdp_model_init
 * (every registered section's defaults) and hdp_model_free, and the file:line location of
 * messages shared by reading and finalize. Reading the files and --set is in
 * model_read.c, finalize in model_finalize.c, writing models back in model_write.c; the
 * generic machinery of the sections in schema.c. See hdpsgd/model.h.
 */
#include "hdpsgd/model.h"
#include "core/check.h"
#include "core/model_internal.h"
#include "core/schedule_kinds.h"
#include "core/schema.h"
#include "hdpsgd/dataset.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const spectrum_names[] = {"isotropic", "powerlaw", "twolevel", "file", NULL};
static const char *const source_names[] = {"synthetic", "file", NULL};
static const char *const bool_names[] = {"false", "true", NULL};
static const char *const scale_names[] = {"trace", "none", NULL};
static const char *const target_names[] = {"auto", "uniform", "powerlaw", "file",
                                           "least-squares", "planted", NULL};
static const char *const rows_names[] = {"with-replacement", "without-replacement", NULL};
static const char *const noise_names[] = {"gaussian", "student", "rademacher", "none",
                                          "laplace",  "uniform", "mixture",    "empirical",
                                          NULL};
static const char *const ode_solver_names[] = {"auto", "cvode", "dop853", NULL};
static const char *const sampling_names[] = {"one-pass", "shuffle", "poisson", NULL};
static const char *const accountant_names[] = {"pld", "rdp", NULL}; /* hdp_accountant_kind */

#define OFF(f) offsetof(hdp_model, f)
/* a core section: its keys are fields of hdp_model; no checks of its own at finalize (the
 * core's combinations are in hdp_model_finalize) */
#define CORE_SECTION(name)                                                                  \
    static const hdp_schema_section name##_section = {#name, name##_keys,                    \
                                                      HDP_SCHEMA_NKEYS(name##_keys), 0, NULL}

/* The core's sections. Defaults here (and in the families' sections) are the built-in
 * default model: keep models/default.ini identical (a test checks it). */
static const hdp_schema_key data_keys[] = {
    {"d", HDP_KEY_LONG, OFF(d), "200", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e8, NULL,
     "dimension of data and parameter (integer in [1, 1e8])"},
    {"gamma", HDP_KEY_DOUBLE, OFF(gamma), "0.1", HDP_R_LO_OPEN, 0, 0, NULL,
     "aspect ratio d/n (> 0); n = round(d/gamma); the later of gamma and n wins"},
    {"n", HDP_KEY_LONG, OFF(n), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e12, NULL,
     "number of samples = steps (integer in [1, 1e12]; 0 = from gamma)"},
    {"train_size", HDP_KEY_LONG, OFF(train_size), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e7,
     NULL,
     "sgd.sampling = shuffle | poisson: N synthetic training rows (Gaussian, the model's "
     "spectrum, target and label noise) drawn once per Monte Carlo run (integer in [0, 1e7], "
     "train_size x d <= 1e8; 0 = none)"},
    {"spectrum", HDP_KEY_ENUM, OFF(spectrum), "powerlaw", 0, 0, 0, spectrum_names,
     "covariance spectrum: isotropic | powerlaw | twolevel | file"},
    {"spectrum_alpha", HDP_KEY_DOUBLE, OFF(spectrum_alpha), "0.5", HDP_R_LO_CLOSED, 0, 0, NULL,
     "power-law exponent alpha >= 0: lambda_j ~ j^(-alpha)"},
    {"twolevel_fraction", HDP_KEY_DOUBLE, OFF(twolevel_fraction), "0.1",
     HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "two-level: fraction f in (0,1) of eigenvalues that are ratio times the others"},
    {"twolevel_ratio", HDP_KEY_DOUBLE, OFF(twolevel_ratio), "10", HDP_R_LO_OPEN, 0, 0, NULL,
     "two-level: ratio r > 0 of the large to the small eigenvalue"},
    {"spectrum_file", HDP_KEY_PATH, OFF(spectrum_file), "", 0, 0, 0, NULL,
     "file spectrum: one eigenvalue >= 0 per line (# comments); relative to the model file"},
    {"target_radius", HDP_KEY_DOUBLE, OFF(target_radius), "1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "norm of theta* (>= 0); theta* is uniform on the sphere of this radius"},
    {"noise", HDP_KEY_ENUM, OFF(noise), "gaussian", 0, 0, 0, noise_names,
     "label-noise law: gaussian | student | rademacher | none | laplace | uniform | mixture | "
     "empirical (docs/theory.md §2.3)"},
    {"tau2", HDP_KEY_DOUBLE, OFF(tau2), "0.25", HDP_R_LO_CLOSED, 0, 0, NULL,
     "label-noise variance tau^2 >= 0 of gaussian, student, rademacher, laplace, uniform; "
     "ignored for none (0), and for mixture and empirical, whose variance is derived from "
     "their parameters (finalize replaces the value, which outputs then report)"},
    {"noise_df", HDP_KEY_DOUBLE, OFF(noise_df), "5", HDP_R_LO_OPEN, 2, 0, NULL,
     "Student-t degrees of freedom nu > 2"},
    {"source", HDP_KEY_ENUM, OFF(data_source), "synthetic", 0, 0, 0, source_names,
     "synthetic (Gaussian rows of the spectrum) | file (the rows of data.features: the "
     "spectrum, d and the target come from them, docs/theory.md §9)"},
    {"features", HDP_KEY_PATH, OFF(features), "", 0, 0, 0, NULL,
     "source = file: N x d rows as .npy (float32/64, integers), .csv (optional header) or IDX "
     "(images flattened), gzipped or not; relative to the model file"},
    {"labels", HDP_KEY_PATH, OFF(labels), "", 0, 0, 0, NULL,
     "source = file: N labels in the same formats (none: target = planted)"},
    {"labels_positive", HDP_KEY_LIST, OFF(labels_positive), "", 0, 0, 0, NULL,
     "classes mapped to +1 (the rest to -1), e.g. 0 or 0,2,4; empty: labels used as numbers"},
    {"test_features", HDP_KEY_PATH, OFF(test_features), "", 0, 0, 0, NULL,
     "source = file: held-out rows (prepared as the training rows) for the test MSE"},
    {"test_labels", HDP_KEY_PATH, OFF(test_labels), "", 0, 0, 0, NULL,
     "source = file: the held-out labels (with target = least-squares)"},
    {"center", HDP_KEY_ENUM, OFF(center), "true", 0, 0, 0, bool_names,
     "source = file: subtract the mean row (and the labels' mean): true | false"},
    {"scale", HDP_KEY_ENUM, OFF(scale), "trace", 0, 0, 0, scale_names,
     "source = file: trace (rows rescaled to mean eigenvalue 1, the toolkit's convention) | "
     "none (only for `hdpsgd dataset`: the ODE and the Monte Carlo need trace)"},
    {"target", HDP_KEY_ENUM, OFF(target), "auto", 0, 0, 0, target_names,
     "theta*: synthetic: uniform | powerlaw | file; source = file: least-squares (ridge fit, "
     "label noise = the residuals) | planted (uniform theta*, labels x^T theta* + z of "
     "data.noise); auto = uniform, or least-squares with labels, planted without"},
    {"ridge", HDP_KEY_DOUBLE, OFF(ridge), "0", HDP_R_LO_CLOSED, 0, 0, NULL,
     "least-squares target: ridge >= 0 (0: minimum-norm least squares)"},
    {"target_exponent", HDP_KEY_DOUBLE, OFF(target_exponent), "1",
     HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, -100, 100, NULL,
     "powerlaw target: the energy (u_j^T theta*)^2 of the j-th eigendirection (eigenvalues "
     "decreasing) ~ j^(-target_exponent), in [-100, 100]; norm target_radius"},
    {"target_file", HDP_KEY_PATH, OFF(target_file), "", 0, 0, 0, NULL,
     "target = file: one energy (u_j^T theta*)^2 >= 0 per line, paired with the eigenvalues "
     "in their given order (the spectrum file's lines); rescaled to norm target_radius"},
    {"mixture_weight", HDP_KEY_DOUBLE, OFF(mixture_weight), "0.5",
     HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "mixture: z ~ w N(m1, v1) + (1-w) N(m2, v2); weight w in (0,1) of the first component"},
    {"mixture_mean", HDP_KEY_DOUBLE, OFF(mixture_mean), "0.4", 0, 0, 0, NULL,
     "mixture: mean m1 of the first component (finite); the second's is m2 = -w m1/(1-w), so "
     "that z has mean 0; tau^2 = w (v1 + m1^2) + (1-w) (v2 + m2^2)"},
    {"mixture_var1", HDP_KEY_DOUBLE, OFF(mixture_var1), "0.09", HDP_R_LO_OPEN, 0, 0, NULL,
     "mixture: variance v1 > 0 of the first component"},
    {"mixture_var2", HDP_KEY_DOUBLE, OFF(mixture_var2), "0.09", HDP_R_LO_OPEN, 0, 0, NULL,
     "mixture: variance v2 > 0 of the second component"},
    {"noise_file", HDP_KEY_PATH, OFF(noise_file), "", 0, 0, 0, NULL,
     "empirical: one label-noise value per line (# comments; at least 2, finite, mean within "
     "5 standard errors of 0; the values are centred); relative to the model file; tau^2 is "
     "their variance"},
};
/* [data] train_size and the finite training set's combinations with [sgd] and [clip]
 * (model_finalize.c) */
static const hdp_schema_section data_section = {"data", data_keys, HDP_SCHEMA_NKEYS(data_keys),
                                                0, hdp_finite_finalize};

static const hdp_schema_key clip_keys[] = {
    {"c", HDP_KEY_DOUBLE, OFF(c), "0.3", HDP_R_LO_OPEN | HDP_R_INF | HDP_R_HI_CLOSED, 0, 1e50, NULL,
     "clipping constant c in (0, 1e50] or inf: per-sample gradients are clipped at c*sqrt(d)"},
    {"feature_norm", HDP_KEY_DOUBLE, OFF(feature_norm), "0",
     HDP_R_LO_CLOSED | HDP_R_HI_CLOSED | HDP_R_AUTO, 0, 1e50, NULL,
     "B in [0, 1e50] or auto: each row x is clipped to norm B, x <- x min(1, B/||x||), before "
     "its gradient; 0 = off; auto = the largest B with eta_max B^2 <= 2, which makes every "
     "step non-expansive as the privacy accountant needs (docs/theory.md §6.1); the risk ODE "
     "does not model it (hdpsgd privacy reports the fraction of rows it changes)"},
};
CORE_SECTION(clip);

static const hdp_schema_key privacy_keys[] = {
    {"rho", HDP_KEY_DOUBLE, OFF(rho), "0.5", HDP_R_LO_CLOSED | HDP_R_INF, 1e-50, 0, NULL,
     "privacy parameter rho in [1e-50, inf) or inf: the output is (rho^2/2)-zCDP (smaller rho "
     "makes noise variances 1/rho^2 overflow)"},
    {"rho_zcdp", HDP_KEY_DOUBLE, OFF(rho_zcdp), "0.125", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL,
     "the budget as zCDP, rho_zcdp = rho^2/2 > 0 or inf (instead of rho)"},
    {"epsilon", HDP_KEY_DOUBLE, OFF(epsilon), "inf", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL,
     "the budget as (epsilon, delta)-DP at delta (default 1e-5) instead of rho: rho_zcdp is "
     "the largest whose Canonne-Kamath-Steinke epsilon at delta is epsilon (> 0 or inf)"},
    {"delta", HDP_KEY_DOUBLE, OFF(delta), "1e-5", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "delta in (0, 1) of (epsilon, delta)-DP: with epsilon, part of the budget; else the "
     "delta at which summaries report epsilon"},
};
CORE_SECTION(privacy);

static const hdp_schema_key schedule_keys[] = {
    {"kind", HDP_KEY_ENUM, OFF(sched), "inverse-time", 0, 0, 0, hdp_sched_kind_names, /* schedule.c */
     "learning-rate schedule: constant | output | linear-noise | inverse-time | table "
     "(optimal: read as inverse-time, its name before)"},
    {"eta0", HDP_KEY_DOUBLE, OFF(eta0), "1", HDP_R_LO_OPEN, 0, 0, NULL,
     "constant/output/linear-noise: initial learning rate eta0 > 0"},
    {"c1", HDP_KEY_DOUBLE, OFF(c1), "1", HDP_R_LO_OPEN, 0, 0, NULL,
     "inverse-time: eta(t) = c1/(t + a), a = gamma*max(c2, c3/rho); c1 > 0"},
    {"c2", HDP_KEY_DOUBLE, OFF(c2), "1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "inverse-time: c2 >= 0"},
    {"c3", HDP_KEY_DOUBLE, OFF(c3), "1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "inverse-time: c3 >= 0"},
    {"file", HDP_KEY_PATH, OFF(sched_file), "", 0, 0, 0, NULL,
     "table: two columns t, eta; t from 0 to 1 increasing, knots at least 1e-9 apart, eta "
     "non-increasing"},
};
CORE_SECTION(schedule);

/* [sgd]: how the rows form batches. The keys' own ranges are their rows; the combinations
 * (with data.n and each other) are sgd_finalize's. */
static const hdp_schema_key sgd_keys[] = {
    {"batch", HDP_KEY_LONG, OFF(batch), "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e12, NULL,
     "batch size B (integer in [1, 1e12]): the clipped gradients of B rows averaged per step; "
     "poisson: the expected size, q = B/N; one-pass: B <= n"},
    {"epochs", HDP_KEY_LONG, OFF(epochs), "1", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e6, NULL,
     "passes over the training set (integer in [1, 1e6]); one-pass: 1"},
    {"sampling", HDP_KEY_ENUM, OFF(sampling), "one-pass", 0, 0, 0, sampling_names,
     "one-pass (each row once, in consecutive batches of B; the private noise tied to the "
     "schedule and [privacy]) | shuffle (each epoch a random permutation cut into batches) | "
     "poisson (each step every row with probability q = B/N)"},
    {"noise_multiplier", HDP_KEY_DOUBLE, OFF(noise_multiplier), "0",
     HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e6, NULL,
     "shuffle | poisson: sigma in [0, 1e6], noise N(0, sigma^2 C^2 I) added to the sum of the "
     "batch's clipped gradients; 0 = the smallest sigma that meets the [privacy] budget by "
     "accountant; one-pass: must be 0"},
    {"accountant", HDP_KEY_ENUM, OFF(accountant), "pld", 0, 0, 0, accountant_names,
     "pld | rdp: the accountant that calibrates noise_multiplier and reports epsilon "
     "(hdpsgd accountant)"},
};

/* [sgd]'s combinations: one-pass uses each of the n rows once (B <= n, one epoch) and ties
 * its noise to the schedule (no noise_multiplier). */
static hdp_status sgd_finalize(hdp_model *m, hdp_error *err)
{
    if (m->sampling != HDP_SAMPLING_ONE_PASS)
        return HDP_OK;
    if (m->batch > m->n)
        return hdp_model_fail_key(m, "sgd", "batch", err,
                                  "batch = %ld exceeds the n = %ld rows of sampling = one-pass "
                                  "(each row once): need batch <= n",
                                  m->batch, m->n);
    if (m->epochs > 1)
        return hdp_model_fail_key(m, "sgd", "epochs", err,
                                  "epochs = %ld with sampling = one-pass (each row used once): "
                                  "several epochs need sgd.sampling = shuffle or poisson",
                                  m->epochs);
    if (m->noise_multiplier != 0)
        return hdp_model_fail_key(m, "sgd", "noise_multiplier", err,
                                  "noise_multiplier = %g with sampling = one-pass, whose private "
                                  "noise is tied to the schedule and the [privacy] budget: "
                                  "leave it 0, or use sgd.sampling = shuffle or poisson",
                                  m->noise_multiplier);
    return HDP_OK;
}
static const hdp_schema_section sgd_section = {"sgd", sgd_keys, HDP_SCHEMA_NKEYS(sgd_keys), 0,
                                               sgd_finalize};

static const hdp_schema_key ode_keys[] = {
    {"bins", HDP_KEY_LONG, OFF(bins), "0", HDP_R_LO_CLOSED | HDP_R_AUTO | HDP_R_HI_CLOSED,
     0, 1e7, NULL,
     "eigenvalue bins: 0 = one per distinct eigenvalue; m = m quantile bins; auto = log bins "
     "with Gauss nodes, refined until the final risk moves by < spectrum_tol; at most 1e7"},
    {"spectrum_tol", HDP_KEY_DOUBLE, OFF(spectrum_tol), "1e-5", HDP_R_LO_OPEN | HDP_R_HI_OPEN,
     0, 0.1,
     NULL, "bins = auto: relative tolerance on the final risk"},
    {"rtol", HDP_KEY_DOUBLE, OFF(rtol), "1e-8", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "relative tolerance of the ODE solver, DOP853 or CVODE ([ode] solver), in (0, 1)"},
    {"atol", HDP_KEY_DOUBLE, OFF(atol), "1e-12", HDP_R_LO_OPEN, 0, 0, NULL,
     "absolute tolerance of the ODE solver, DOP853 or CVODE, > 0"},
    {"points", HDP_KEY_LONG, OFF(points), "101", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL,
     "output grid size on [0, 1] (integer in [2, 1e6])"},
    {"max_steps", HDP_KEY_LONG, OFF(max_steps), "100000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     1, 1e9, NULL,
     "CVODE's maximum number of internal steps between output points (DOP853: steps in all); "
     "at most 1e9"},
    {"solver", HDP_KEY_ENUM, OFF(ode_solver), "auto", 0, 0, 0, ode_solver_names,
     "auto = dop853 (explicit Runge-Kutta) unless the stiffness estimate 2 lambda_max "
     "int eta~ dt is above min(30000, 2000 + 200 bins) (2000 for Student-t noise), cvode "
     "(BDF) then or when dop853 fails; cvode; dop853"},
    {"discrete", HDP_KEY_ENUM, OFF(ode_discrete), "false", 0, 0, 0, bool_names,
     "true: add the one-step term (eta~^2/n) k_j lambda_j^2 V_c' D_j that the continuum ODE "
     "drops (k_j = 2 for Gaussian rows, the rows' kurtosis minus 1 on a data set; "
     "docs/theory.md §3.6); solved by CVODE, no exact gradient; false: the paper's ODE"},
};
CORE_SECTION(ode);

static const hdp_schema_key sim_keys[] = {
    {"runs", HDP_KEY_LONG, OFF(runs), "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL,
     "Monte Carlo runs (integer in [1, 1e7])"},
    {"seed", HDP_KEY_SEED, OFF(seed), "1", 0, 0, 0, NULL,
     "base seed (unsigned 64-bit integer); run r uses the r-th jump of this stream"},
    {"divergence_factor", HDP_KEY_DOUBLE, OFF(divergence_factor), "1e6", HDP_R_LO_OPEN, 1, 0, NULL,
     "a run diverged when its excess risk exceeds this multiple of max(R(0), private noise) (> 1)"},
    {"rows", HDP_KEY_ENUM, OFF(rows), "with-replacement", 0, 0, 0, rows_names,
     "data.source = file: with-replacement (each step a row drawn uniformly: the population is "
     "the rows) | without-replacement (one pass over a random permutation, n <= N)"},
};
CORE_SECTION(sim);

static const hdp_schema_key sde_keys[] = {
    {"step", HDP_KEY_DOUBLE, OFF(sde_step), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1, NULL,
     "Euler-Maruyama step h in [0, 1]; 0 = 1/n"},
};
CORE_SECTION(sde);

static const hdp_schema_key validate_keys[] = {
    {"rel_tol", HDP_KEY_DOUBLE, OFF(rel_tol), "0.05", HDP_R_LO_OPEN, 0, 0, NULL,
     "pass when the relative deviation from the ODE is <= rel_tol at every grid point ..."},
    {"z_tol", HDP_KEY_DOUBLE, OFF(z_tol), "4", HDP_R_LO_OPEN, 0, 0, NULL,
     "... or the deviation is within z_tol standard errors"},
};
CORE_SECTION(validate);

/* The core's sections, in the order of the model files (the families' follow them:
 * hdp_family_sections). */
const hdp_schema_section *const hdp_core_sections[] = {
    &data_section, &clip_section, &privacy_section, &schedule_section, &sgd_section,
    &ode_section,  &sim_section,  &sde_section,     &validate_section, NULL};

const char *hdp_spectrum_name(hdp_spectrum_kind k) { return spectrum_names[k]; }
const char *hdp_noise_name(hdp_noise_kind k) { return noise_names[k]; }
const char *hdp_sampling_name(hdp_sampling_kind k) { return sampling_names[k]; }

int hdp_model_schema_entry(int i, const char **section, const char **key,
                           const char **default_text, const char **help)
{
    hdp_schema_ref r;
    if (!hdp_schema_key_at(i, &r))
        return 0;
    if (section) *section = r.section->name;
    if (key) *key = r.key->key;
    if (default_text) *default_text = r.key->def;
    if (help) *help = r.key->help;
    return 1;
}

void hdp_model_format_where(char *buf, size_t size, const char *where, int line)
{
    if (line > 0)
        snprintf(buf, size, "%s:%d", where, line);
    else
        snprintf(buf, size, "%s", where);
}

const char *hdp_model_origin_where(const hdp_model *m, int i)
{
    int f = m->origin[i].file;
    const char *name = f >= 2 ? m->origin_files[f - 2] : NULL;
    return f <= 0 ? "" : f == 1 ? "--set" : name ? name : "";
}

hdp_status hdp_model_origin_set(hdp_model *m, int i, const char *where, int line,
                                hdp_error *err)
{
    int f = 0;
    if (!where[0])
        f = 0;
    else if (!strcmp(where, "--set"))
        f = 1;
    else {
        for (int k = 0; k < HDP_MODEL_MAX_FILES && !f; k++)
            if (!m->origin_files[k] || !m->origin_files[k][0] ||
                !strcmp(m->origin_files[k], where))
                f = k + 2;
        if (!f)
            return hdp_fail(err, HDP_EINPUT,
                            "%s: a model takes its keys from at most %d files (and --set): "
                            "this is one more", where, HDP_MODEL_MAX_FILES);
        const char **name = &m->origin_files[f - 2];
        if ((!*name || strcmp(*name, where)) && hdp_model_set_text(name, where, err) != HDP_OK)
            return HDP_ENOMEM;
    }
    m->origin[i].file = f;
    m->origin[i].line = line;
    return HDP_OK;
}

/* The shared empty text of every unset text of a model (never freed, never written). */
static const char no_text[] = "";
/* The source of a model not read from a file (hdp_model_init; not freed either). */
static const char builtin_source[] = "(built-in default)";

hdp_status hdp_model_set_text(const char **field, const char *value, hdp_error *err)
{
    HDP_REQUIRE(err, field);
    const char *copy = no_text;
    if (value == builtin_source) {
        copy = builtin_source; /* shared, as the empty text */
    } else if (value && value[0]) {
        size_t len = strlen(value);
        char *text = malloc(len + 1);
        if (!text)
            return hdp_fail(err, HDP_ENOMEM, "out of memory for a text of %zu bytes", len + 1);
        memcpy(text, value, len + 1);
        copy = text;
    }
    if (*field && *field != no_text && *field != builtin_source)
        free((char *)*field); /* the model's own copy (hdp_model) */
    *field = copy;
    return HDP_OK;
}

int hdp_model_texts(hdp_model *m, const char **slots[], int max)
{
    int n = 0;
    hdp_schema_ref r;
    for (int i = 0; hdp_schema_key_at(i, &r); i++) {
        if (r.key->type != HDP_KEY_PATH)
            continue;
        const char **slot = hdp_schema_value(m, &r);
        if (slot && n < max)
            slots[n++] = slot;
    }
    if (n < max)
        slots[n++] = &m->source;
    for (int k = 0; k < HDP_MODEL_MAX_FILES && n < max; k++)
        slots[n++] = &m->origin_files[k];
    return n;
}

void hdp_model_init(hdp_model *m)
{
    if (!m)
        return;
    memset(m, 0, sizeof *m);
    const char **slots[HDP_MODEL_MAX_TEXTS];
    int ntexts = hdp_model_texts(m, slots, HDP_MODEL_MAX_TEXTS);
    for (int i = 0; i < ntexts; i++)
        *slots[i] = no_text;
    hdp_schema_ref r;
    for (int i = 0; hdp_schema_key_at(i, &r); i++) {
        hdp_error err;
        hdp_error_clear(&err);
        hdp_schema_parse_value(m, &r, r.key->def, "(default)", "(default)", 0, &err);
    }
    m->n_given_last = 0;
    m->source = builtin_source;
}

void hdp_model_free(hdp_model *m)
{
    if (!m)
        return;
    free(m->table_t);
    free(m->table_eta);
    free(m->file_lambda);
    free(m->file_energy);
    hdp_data_release(m->data);
    hdp_data_arrays_release(m->arrays);
    m->arrays = NULL;
    m->table_t = m->table_eta = m->file_lambda = m->file_energy = NULL;
    m->data = NULL;
    m->table_len = 0;
    m->file_len = 0;
    m->energy_len = 0;
    free(m->noise_values);
    m->noise_values = NULL;
    m->noise_len = 0;
    const char **slots[HDP_MODEL_MAX_TEXTS];
    int ntexts = hdp_model_texts(m, slots, HDP_MODEL_MAX_TEXTS);
    for (int i = 0; i < ntexts; i++)
        hdp_model_set_text(slots[i], "", NULL); /* frees; "" allocates nothing */
}
