/*
 * model_with.c — the immutable use of a finalized model: hdp_model_copy (a deep copy, its
 * tables too) and hdp_model_with (a copy with one key changed, finalized again). Code that
 * needs a model that differs from one it has (a level of validate --scaling, a point of
 * rates, the rho a design family needs, --runs) builds it here instead of writing into the
 * fields of a finalized model, which would leave the derived values (n, gamma, the forms of
 * the privacy budget) stale.
 */
#include "hdpsgd/model.h"
#include "hdpsgd/clip.h"
#include "core/check.h"
#include "core/model_internal.h"
#include "core/schema.h"
#include "hdpsgd/dataset.h"

#include <stdlib.h>
#include <string.h>

static double *copy_doubles(const double *src, long len)
{
    if (!src || len <= 0)
        return NULL;
    double *v = malloc(sizeof(double) * (size_t)len);
    if (v)
        memcpy(v, src, sizeof(double) * (size_t)len);
    return v;
}

hdp_status hdp_model_copy(hdp_model *dst, const hdp_model *src, hdp_error *err)
{
    HDP_REQUIRE(err, dst);
    HDP_REQUIRE(err, src);
    if (dst == src)
        return HDP_OK;
    memcpy(dst, src, sizeof *dst);
    /* the texts: dst's own copies (the empty and built-in texts are shared, not allocated) */
    const char **from[HDP_MODEL_MAX_TEXTS], **to[HDP_MODEL_MAX_TEXTS];
    int ntexts = hdp_model_texts((hdp_model *)src, from, HDP_MODEL_MAX_TEXTS); /* only read */
    hdp_model_texts(dst, to, HDP_MODEL_MAX_TEXTS);
    for (int i = 0; i < ntexts; i++)
        *to[i] = NULL;
    int texts_ok = 1;
    for (int i = 0; i < ntexts; i++)
        if (hdp_model_set_text(to[i], *from[i], NULL) != HDP_OK)
            texts_ok = 0;
    dst->table_t = copy_doubles(src->table_t, src->table_len);
    dst->table_eta = copy_doubles(src->table_eta, src->table_len);
    dst->file_lambda = copy_doubles(src->file_lambda, src->file_len);
    dst->file_energy = copy_doubles(src->file_energy, src->energy_len);
    dst->data = hdp_data_retain(src->data);
    dst->data_bias_pin = NULL; /* src's (data_bias.c) */
    dst->arrays = hdp_data_arrays_retain(src->arrays);
    dst->noise_values = copy_doubles(src->noise_values, src->noise_len);
    if (!texts_ok || (src->table_t && !dst->table_t) || (src->table_eta && !dst->table_eta) ||
        (src->file_lambda && !dst->file_lambda) || (src->file_energy && !dst->file_energy) ||
        (src->noise_values && !dst->noise_values)) {
        hdp_model_free(dst);
        return hdp_fail(err, HDP_ENOMEM, "model %s: out of memory for a copy of its tables",
                        hdp_schema_text(&src->source));
    }
    return HDP_OK;
}

/* Whether changing section.key can change what finalize reads from files (its row's
 * HDP_K_RELOAD): then the copy reads them again, else it keeps the copies. */
static int key_reloads(const char *section, const char *key)
{
    hdp_schema_ref ref;
    return hdp_schema_find(section, key, &ref) && (ref.key->flags & HDP_K_RELOAD);
}

hdp_status hdp_model_set_noise_sample(hdp_model *m, const double *z, long n, const char *what,
                                      hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, z);
    if (n < 0)
        n = 0;
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!v)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the label-noise sample");
    if (n)
        memcpy(v, z, sizeof(double) * (size_t)n);
    hdp_status st = hdp_noise_sample_check(v, (size_t)n, what, NULL, err);
    if (st != HDP_OK) {
        free(v);
        return st;
    }
    free(m->noise_values);
    m->noise_values = v;
    m->noise_len = n;
    m->noise = HDP_NOISE_EMPIRICAL;
    hdp_model_set_text(&m->noise_file, "", NULL); /* frees: "" allocates nothing */
    m->finalized = 0;
    return HDP_OK;
}

hdp_status hdp_model_with(const hdp_model *m, const char *key, const char *value, hdp_model *out,
                          hdp_error *err)
{
    HDP_REQUIRE(err, out);
    memset(out, 0, sizeof *out); /* empty on every failure below */
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, key);
    HDP_REQUIRE(err, value);
    hdp_status st = hdp_model_check(m, err);
    if (st != HDP_OK)
        return st;
    const char *dot = strchr(key, '.');
    size_t slen = dot ? (size_t)(dot - key) : 0;
    char section[64];
    if (!dot || slen == 0 || slen >= sizeof section || !dot[1])
        return hdp_fail(err, HDP_EINPUT, "'%s': expected section.key (for example sim.runs)", key);
    memcpy(section, key, slen);
    section[slen] = '\0';
    const char *name = dot + 1;
    if ((st = hdp_model_copy(out, m, err)) != HDP_OK)
        return st;
    st = hdp_model_set_key(out, section, name, value, "--set", 0, err);
    if (st == HDP_OK && !strcmp(section, "privacy"))
        hdp_model_budget_replaced(out, name); /* the new form is the budget in force */
    if (st == HDP_OK)
        st = hdp_model_finalize_keep(out, !key_reloads(section, name), err);
    if (st != HDP_OK)
        hdp_model_free(out);
    return st;
}
