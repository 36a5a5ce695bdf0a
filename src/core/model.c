/*
 * model.c — schema v1 of the model files, the core's part: its sections ([data] ...
 * [validate], [sgd] with its combinations) made from the lists of keys of hdpsgd/model.h
 * (HDP_DATA_KEYS ...: one line per key gives its field of hdp_model and its schema row,
 * core/schema.h), whose defaults are the built-in default model, the names of its enums, the
 * schema's entries for documentation, hdp_model_init (every registered section's defaults)
 * and hdp_model_free, and the file:line location of
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
static const char *const clip_weights_names[] = {"auto", "norm", "direction",
                                                   "direction-noise", NULL};
static const char *const ode_model_names[] = {"bins", "rows", NULL}; /* hdp_ode_model_kind */
static const char *const sampling_names[] = {"one-pass", "shuffle", "poisson", NULL};
static const char *const accountant_names[] = {"pld", "rdp", NULL}; /* hdp_accountant_kind */

/* One-pass's combinations (sgd.sampling = one-pass, the default): each of the n rows once
 * (batch <= n, one epoch, no finite training set) and the private noise tied to the schedule
 * (no noise_multiplier). Those of shuffle and poisson are the [data] section's finalize,
 * hdp_finite_finalize (core/finite.c). */
static hdp_status sgd_finalize(hdp_model *m, hdp_error *err)
{
    if (m->sampling != HDP_SAMPLING_ONE_PASS)
        return HDP_OK;
    char why[512];
    const char *section = "sgd", *key = NULL;
    if (m->train_size > 0) {
        section = "data", key = "train_size";
        snprintf(why, sizeof why,
                 "train_size = %ld with sgd.sampling = one-pass, which draws a fresh row at every "
                 "step: a finite training set is for sgd.sampling = shuffle or poisson (or leave "
                 "it 0)", m->train_size);
    } else if (m->batch > m->n) {
        key = "batch";
        snprintf(why, sizeof why,
                 "batch = %ld exceeds the n = %ld rows of sampling = one-pass (each row once): "
                 "need batch <= n", m->batch, m->n);
    } else if (m->epochs > 1) {
        key = "epochs";
        snprintf(why, sizeof why,
                 "epochs = %ld with sampling = one-pass (each row used once): several epochs "
                 "need sgd.sampling = shuffle or poisson", m->epochs);
    } else if (m->noise_multiplier != 0) {
        key = "noise_multiplier";
        snprintf(why, sizeof why,
                 "noise_multiplier = %g with sampling = one-pass, whose private noise is tied to "
                 "the schedule and the [privacy] budget: leave it 0, or use sgd.sampling = "
                 "shuffle or poisson", m->noise_multiplier);
    }
    return key ? hdp_model_fail_key(m, section, key, err, "%s", why) : HDP_OK;
}

/* The core's sections, in the order of the model files (the families' follow them:
 * hdp_family_sections): S(name, its list of keys in hdpsgd/model.h, its checks at finalize of
 * combinations of its keys with others: the keys' own ranges are their rows). Defaults in
 * the lists (and in the families' sections) are the built-in default model: keep
 * models/default.ini identical (a test checks it). */
#define CORE_SECTIONS(S)                                                                       \
    S(data, HDP_DATA_KEYS, hdp_finite_finalize) /* train_size: core/finite.c */               \
    S(clip, HDP_CLIP_KEYS, NULL)                                                               \
    S(privacy, HDP_PRIVACY_KEYS, NULL)                                                         \
    S(schedule, HDP_SCHEDULE_KEYS, NULL)                                                       \
    S(sgd, HDP_SGD_KEYS, sgd_finalize)                                                         \
    S(ode, HDP_ODE_KEYS, NULL)                                                                 \
    S(sim, HDP_SIM_KEYS, NULL)                                                                 \
    S(sde, HDP_SDE_KEYS, NULL)                                                                 \
    S(validate, HDP_VALIDATE_KEYS, NULL)

/* a key's schema row: its value is the field of hdp_model */
#define ROW(key, field, ctype, type, def, flags, lo, hi, names, help) \
    {#key, HDP_KEY_##type, offsetof(hdp_model, field), def, flags, lo, hi, names, help},
#define SECTION(name, list, finalize)                                                          \
    static const hdp_schema_key name##_keys[] = {list(ROW)};                                   \
    static const hdp_schema_section name##_section = {                                         \
        #name, name##_keys, HDP_SCHEMA_NKEYS(name##_keys), 0, finalize};
CORE_SECTIONS(SECTION)
#undef SECTION
#undef ROW

#define SECTION_REF(name, list, finalize) &name##_section,
const hdp_schema_section *const hdp_core_sections[] = {CORE_SECTIONS(SECTION_REF) NULL};
#undef SECTION_REF

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
    double **tables[] = {&m->table_t, &m->table_eta, &m->file_lambda, &m->file_energy,
                         &m->noise_values};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        free(*tables[i]);
        *tables[i] = NULL;
    }
    m->table_len = 0;
    m->file_len = m->energy_len = m->noise_len = 0;
    hdp_data_bias_unpin(m);
    hdp_data_release(m->data);
    hdp_data_arrays_release(m->arrays);
    m->arrays = NULL;
    m->data = NULL;
    const char **slots[HDP_MODEL_MAX_TEXTS];
    int ntexts = hdp_model_texts(m, slots, HDP_MODEL_MAX_TEXTS);
    for (int i = 0; i < ntexts; i++)
        hdp_model_set_text(slots[i], "", NULL); /* frees; "" allocates nothing */
}
