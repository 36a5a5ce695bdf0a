/*
 * model_write.c — writing models back: the resolved model as an INI file
 * (hdp_model_write_ini) or as metadata lines (hdp_model_write_meta), whole or only the
 * core's and some families' sections, the budget written in the form it was given, and one
 * key's value as text (hdp_model_value_text).
 */
#include "hdpsgd/model.h"
#include "core/check.h"
#include "core/model_internal.h"
#include "core/schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether a section is written: every section (families NULL), or the core's and the
 * families named. */
static int section_wanted(const hdp_schema_section *s, const char *const *families)
{
    if (!families || !s->size)
        return 1;
    for (const char *const *f = families; *f; f++)
        if (!strcmp(*f, s->name))
            return 1;
    return 0;
}

/* Whether the key is written: data.n is carried by gamma, an empty file name is the
 * default, a key flagged HDP_K_IF_GIVEN only when given, and of the forms of the privacy budget only the one given (rho when none is). */
static int key_written(const hdp_model *m, const hdp_schema_ref *r, const char *value)
{
    const char *sec = r->section->name, *k = r->key->key;
    if (!strcmp(sec, "data") && !strcmp(k, "n"))
        return 0;
    if ((r->key->type == HDP_KEY_PATH || r->key->type == HDP_KEY_LIST) && !value[0])
        return 0;
    if ((r->key->flags & HDP_K_IF_GIVEN) && !hdp_model_key_given(m, sec, k))
        return 0;
    if (!strcmp(sec, "privacy")) {
        int z = hdp_model_key_given(m, sec, "rho_zcdp"), e = hdp_model_key_given(m, sec, "epsilon");
        if (!strcmp(k, "rho"))
            return !z && !e;
        if (!strcmp(k, "rho_zcdp"))
            return z;
        if (!strcmp(k, "epsilon"))
            return e;
        if (!strcmp(k, "delta"))
            return e || hdp_model_key_given(m, sec, "delta");
    }
    return 1;
}

/* After the [privacy] keys of a CSV header: every form of the finalized model's budget. */
static void write_budget(const hdp_model *m, FILE *out, const char *prefix)
{
    const double v[4] = {m->rho, m->rho_zcdp, m->epsilon, m->delta};
    char t[4][64];
    for (int i = 0; i < 4; i++)
        if (isinf(v[i]))
            snprintf(t[i], sizeof t[i], "inf");
        else
            hdp_format_exact(v[i], t[i], sizeof t[i]);
    fprintf(out, "%s; the same budget: rho = %s, rho_zcdp = %s, epsilon = %s at delta = %s (CKS)\n",
            prefix, t[0], t[1], t[2], t[3]);
}

/* After data.tau2 in a CSV header: where the variance of a law that derives it came from
 * (mixture, empirical: finalize replaced the value given, docs/theory.md §2.3). */
static void write_tau2_origin(const hdp_model *m, FILE *out, const char *prefix)
{
    if (m->noise == HDP_NOISE_MIXTURE)
        fprintf(out, "%s; tau2 is derived: the variance of the mixture (mixture_* below)\n", prefix);
    else if (m->noise == HDP_NOISE_EMPIRICAL)
        fprintf(out, "%s; tau2 is derived: the variance of the %ld centred values of the empirical "
                "law (noise_file below, or a sample given in memory)\n",
                prefix, m->noise_len);
}

/* The model as INI lines, each after prefix ("" for a model file, "# " for a CSV header). */
static void write_model(const hdp_model *m, FILE *out, const char *prefix,
                        const char *const *families, int derived)
{
    const hdp_schema_section *section = NULL;
    char buf[HDP_PATH_MAX]; /* a value's text: a file name fits (set_path, schema.c) */
    char *cwd = NULL;       /* the working directory, of any length (getcwd allocates) */
    hdp_schema_ref r;
    int budget = derived && m->finalized;
    for (int i = 0; hdp_schema_key_at(i, &r); i++) {
        const hdp_schema_key *k = r.key;
        if (!section_wanted(r.section, families))
            continue;
        if (section != r.section) {
            if (budget && section && !strcmp(section->name, "privacy"))
                write_budget(m, out, prefix);
            if (section && !prefix[0])
                fputc('\n', out); /* a blank line between sections (model files only) */
            section = r.section;
            fprintf(out, "%s[%s]\n", prefix, section->name);
        }
        hdp_schema_format_value(m, &r, buf, sizeof buf);
        if (!key_written(m, &r, buf))
            continue;
        if (k->type == HDP_KEY_PATH && buf[0] != '/' && (cwd || (cwd = getcwd(NULL, 0)))) {
            /* a relative name is relative to the working directory (set_path resolved it
             * against the model file's folder): written absolute, the file names the same
             * data wherever it is read from (a --set name once moved with the INI file) */
            fprintf(out, "%s%s = %s/%s\n", prefix, k->key, cwd, buf);
            continue;
        }
        fprintf(out, "%s%s = %s\n", prefix, k->key, buf);
        if (budget && !strcmp(r.section->name, "data") && !strcmp(k->key, "tau2"))
            write_tau2_origin(m, out, prefix);
    }
    if (budget && section && !strcmp(section->name, "privacy"))
        write_budget(m, out, prefix); /* [privacy] was the last section */
    free(cwd);
}

void hdp_model_write_meta_sections(const hdp_model *m, FILE *out, const char *const *families)
{
    if (!m || !out)
        return;
    fprintf(out, "# ; model: %s\n", m->source);
    write_model(m, out, "# ", families, 1);
}

void hdp_model_write_meta(const hdp_model *m, FILE *out)
{
    hdp_model_write_meta_sections(m, out, NULL);
}

void hdp_model_write_ini_sections(const hdp_model *m, FILE *out, const char *const *families)
{
    if (m && out)
        write_model(m, out, "", families, 0);
}

void hdp_model_write_ini(const hdp_model *m, FILE *out)
{
    hdp_model_write_ini_sections(m, out, NULL);
}

int hdp_model_value_text(const hdp_model *m, const char *section, const char *key, char *buf,
                         size_t size)
{
    hdp_schema_ref r;
    if (!m || !section || !key || !buf || !size || !hdp_schema_find(section, key, &r))
        return 0;
    hdp_schema_format_value(m, &r, buf, size);
    return 1;
}
