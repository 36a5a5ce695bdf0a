/*
 * schema.c — the generic part of the model schema (see core/schema.h): the walk over the
 * registered sections (the core's, then the families'), the storage of a section's values
 * in hdp_model, parsing a key's value with its range, formatting it back, describing its
 * range in messages and the "did you mean" suggestions. It knows no section by name: the
 * core's are in model.c, the families' in the families layer's table.
 */
#include "core/schema.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the registry ---- */

const hdp_schema_section *hdp_schema_section_at(int i)
{
    if (i < 0)
        return NULL;
    const hdp_schema_section *const *lists[] = {hdp_core_sections, hdp_family_sections};
    for (int l = 0; l < 2; l++)
        for (const hdp_schema_section *const *s = lists[l]; *s; s++)
            if (i-- == 0)
                return *s;
    return NULL;
}

int hdp_schema_key_at(int i, hdp_schema_ref *ref)
{
    if (i < 0 || i >= HDP_MODEL_MAX_KEYS)
        return 0; /* past hdp_model.origin (test_model checks that every key has a slot) */
    int first = 0;
    const hdp_schema_section *s;
    for (int j = 0; (s = hdp_schema_section_at(j)); j++) {
        if (i < first + s->nkeys) {
            ref->section = s;
            ref->key = &s->keys[i - first];
            ref->index = i;
            return 1;
        }
        first += s->nkeys;
    }
    return 0;
}

int hdp_schema_find(const char *section, const char *key, hdp_schema_ref *ref)
{
    int first = 0;
    const hdp_schema_section *s;
    for (int j = 0; (s = hdp_schema_section_at(j)); first += s->nkeys, j++) {
        if (strcmp(s->name, section))
            continue;
        for (int k = 0; k < s->nkeys; k++)
            if (!strcmp(s->keys[k].key, key))
                return hdp_schema_key_at(first + k, ref);
        return 0;
    }
    return 0;
}

/* The offset of a family section's slice in m->family; -1 when s is not registered or
 * its slice would not fit (families.c checks the sizes at compile time). */
static long slice_offset(const hdp_schema_section *s)
{
    size_t off = 0;
    for (const hdp_schema_section *const *f = hdp_family_sections; *f; f++) {
        if (*f == s)
            return s->size > 0 && off + s->size <= HDP_MODEL_FAMILY_BYTES ? (long)off : -1;
        off += HDP_SCHEMA_SLICE((*f)->size);
    }
    return -1;
}

void *hdp_model_section(hdp_model *m, const hdp_schema_section *s)
{
    long off = m && s ? slice_offset(s) : -1;
    return off < 0 ? NULL : m->family.bytes + off;
}

const void *hdp_model_section_const(const hdp_model *m, const hdp_schema_section *s)
{
    return hdp_model_section((hdp_model *)m, s); /* read only */
}

void *hdp_schema_value(hdp_model *m, const hdp_schema_ref *ref)
{
    char *base = ref->section->size ? hdp_model_section(m, ref->section) : (char *)m;
    return base + ref->key->offset;
}

const void *hdp_schema_value_const(const hdp_model *m, const hdp_schema_ref *ref)
{
    return hdp_schema_value((hdp_model *)m, ref); /* read only */
}

const char *hdp_schema_text(const void *val)
{
    const char *text = val ? *(const char *const *)val : NULL;
    return text ? text : "";
}

/* ---- suggestions ---- */

/* Levenshtein distance, ignoring case, for "did you mean" (schema.h). */
int hdp_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j];
            int sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            prev = cur;
        }
    }
    return row[lb];
}


int hdp_schema_suggest(const char *section, const char *key, hdp_schema_ref *ref)
{
    int best_d = 99, found = 0;
    hdp_schema_ref r;
    for (int i = 0; hdp_schema_key_at(i, &r); i++) {
        int dk = hdp_edit_distance(key, r.key->key);
        int ds = hdp_edit_distance(section, r.section->name);
        int dd = dk + ds;
        if (dd < best_d) {
            best_d = dd;
            *ref = r;
            found = 1;
        }
    }
    int len = (int)(strlen(key) + strlen(section));
    return found && best_d <= 2 + len / 6;
}

/* The section closest to an unknown one ([clipping] -> [clip]): a few edits away, or one
 * name the start of the other (at least 3 letters). NULL when nothing is close. */
const char *hdp_schema_suggest_section(const char *section)
{
    const char *best = NULL;
    int best_d = 99;
    size_t len = strlen(section);
    const hdp_schema_section *sec;
    for (int i = 0; (sec = hdp_schema_section_at(i)); i++) {
        const char *s = sec->name;
        size_t ls = strlen(s);
        int d = hdp_edit_distance(section, s);
        size_t common = len < ls ? len : ls;
        if (common >= 3 && !strncasecmp(section, s, common))
            d = 1; /* a prefix: clipping / clip, priv / privacy */
        if (d < best_d) {
            best_d = d;
            best = s;
        }
    }
    return best && best_d <= 2 + (int)len / 6 ? best : NULL;
}

/* ---- values ---- */

void hdp_schema_describe_range(const hdp_schema_key *k, char *buf, size_t size)
{
    if (k->type == HDP_KEY_ENUM) {
        size_t used = 0;
        for (int i = 0; k->names[i] && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " | " : "one of ", k->names[i]);
        return;
    }
    if (k->type == HDP_KEY_PATH) {
        snprintf(buf, size, "a file name");
        return;
    }
    if (k->type == HDP_KEY_SEED) {
        snprintf(buf, size, "an unsigned 64-bit integer");
        return;
    }
    if (k->type == HDP_KEY_LIST) {
        snprintf(buf, size, "a list of at most %d numbers separated by commas (or nothing)",
                 HDP_LIST_ITEMS);
        return;
    }
    const char *kind = k->type == HDP_KEY_LONG ? "an integer" : "a number";
    char lo[64] = "", hi[64] = "";
    if (k->flags & HDP_R_LO_OPEN) snprintf(lo, sizeof lo, " > %g", k->lo);
    if (k->flags & HDP_R_LO_CLOSED) snprintf(lo, sizeof lo, " >= %g", k->lo);
    if (k->flags & HDP_R_HI_OPEN) snprintf(hi, sizeof hi, "%s < %g", lo[0] ? " and" : "", k->hi);
    if (k->flags & HDP_R_HI_CLOSED) snprintf(hi, sizeof hi, "%s <= %g", lo[0] ? " and" : "", k->hi);
    snprintf(buf, size, "%s%s%s%s%s", kind, lo, hi, (k->flags & HDP_R_INF) ? ", or inf" : "",
             (k->flags & HDP_R_AUTO) ? ", or auto" : "");
}

static int in_range(const hdp_schema_key *k, double v)
{
    if (isinf(v) && v > 0)
        return (k->flags & HDP_R_INF) != 0;
    if (!isfinite(v))
        return 0;
    if ((k->flags & HDP_R_LO_OPEN) && !(v > k->lo)) return 0;
    if ((k->flags & HDP_R_LO_CLOSED) && !(v >= k->lo)) return 0;
    if ((k->flags & HDP_R_HI_OPEN) && !(v < k->hi)) return 0;
    if ((k->flags & HDP_R_HI_CLOSED) && !(v <= k->hi)) return 0;
    return 1;
}

static int out_of_range(const hdp_schema_key *k, double v, char *why, size_t size)
{
    if (in_range(k, v) && (k->type == HDP_KEY_DOUBLE || v == floor(v)))
        return 0;
    char range[160];
    hdp_schema_describe_range(k, range, sizeof range);
    snprintf(why, size, "%s = %.17g is out of range: expected %s", k->key, v, range);
    return 1;
}

int hdp_schema_out_of_range(const char *section, const char *key, double v, char *why,
                            size_t size)
{
    hdp_schema_ref ref;
    if (!hdp_schema_find(section, key, &ref) ||
        (ref.key->type != HDP_KEY_LONG && ref.key->type != HDP_KEY_DOUBLE)) {
        snprintf(why, size, "[%s] %s is not a number key of the schema", section, key);
        return 1;
    }
    return out_of_range(ref.key, v, why, size);
}

/* the range check of the value at val of number key k (others: in range), auto accepted
 * where the key takes it */
static int value_out_of_range(const hdp_schema_key *k, const void *val, char *why, size_t size)
{
    double v;
    if (k->type == HDP_KEY_LONG)
        v = (double)*(const long *)val;
    else if (k->type == HDP_KEY_DOUBLE)
        v = *(const double *)val; /* cppcheck-suppress invalidPointerCast */
    else
        return 0;
    if ((k->flags & HDP_R_AUTO) && v == (k->type == HDP_KEY_LONG ? (double)HDP_BINS_AUTO
                                                                 : HDP_AUTO_DOUBLE))
        return 0;
    return out_of_range(k, v, why, size);
}

int hdp_schema_value_out_of_range(const hdp_model *m, const hdp_schema_ref *ref, char *why,
                                  size_t size)
{
    return value_out_of_range(ref->key, hdp_schema_value_const(m, ref), why, size);
}

const char *hdp_schema_keys_out_of_range(const hdp_schema_section *sec, const void *keys,
                                         char *why, size_t size)
{
    for (int i = 0; i < sec->nkeys; i++)
        if (value_out_of_range(&sec->keys[i], (const char *)keys + sec->keys[i].offset, why, size))
            return sec->keys[i].key;
    return NULL;
}

/* A decimal number at the start of s (after blanks): [+-] digits [. digits] [e [+-] digits],
 * at least one digit before the exponent. Hexadecimal floats ("0x14"), "nan" and "inf"
 * are not decimal numbers (the caller handles the words inf/infinity where they are
 * allowed). Returns 1 with the value in *x, 0 when s does not start with a decimal
 * number, -1 when it does but the value is out of range: above DBL_MAX in size (strtod
 * would give inf) or nonzero and below DBL_MIN in size (a subnormal number, where digits
 * are lost, or one that strtod rounds to 0: 1e-400). *end is set past the number (1, -1) or to s (0). */
int hdp_schema_parse_decimal_prefix(const char *s, char **end, double *x)
{
    const char *p = s;
    *end = (char *)s;
    while (isspace((unsigned char)*p))
        p++;
    const char *start = p;
    if (*p == '+' || *p == '-')
        p++;
    int digits = 0, nonzero = 0;
    for (; isdigit((unsigned char)*p); p++, digits++)
        nonzero |= *p != '0';
    if (*p == '.') {
        p++;
        for (; isdigit((unsigned char)*p); p++, digits++)
            nonzero |= *p != '0';
    }
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (isdigit((unsigned char)*q)) {
            while (isdigit((unsigned char)*q)) q++;
            p = q;
        }
    }
    if (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
        return 0; /* "0x14", "1.5.2", "2abc": not a number followed by a separator */
    char buf[512];
    size_t n = (size_t)(p - start);
    if (n >= sizeof buf)
        return 0;
    memcpy(buf, start, n);
    buf[n] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    *end = (char *)p;
    /* a nonzero number below DBL_MIN in size is refused whether strtod makes it a subnormal
     * (1e-310) or 0 (1e-400: underflow); a zero written as 0e-999 is 0 */
    if (isinf(v) || (nonzero && fabs(v) < DBL_MIN))
        return -1;
    *x = v;
    return 1;
}

/* Parse a model value: the whole string one decimal number (parse_decimal_prefix), or the
 * words inf/infinity (+inf). 1 ok, 0 not a number, -1 out of range. */
static int parse_double(const char *s, double *out)
{
    while (isspace((unsigned char)*s))
        s++;
    const char *w = s + (*s == '+');
    if (!strncasecmp(w, "infinity", 8) || !strncasecmp(w, "inf", 3)) {
        const char *e = w + (strncasecmp(w, "infinity", 8) ? 3 : 8);
        while (isspace((unsigned char)*e))
            e++;
        if (*e)
            return 0;
        *out = INFINITY;
        return 1;
    }
    char *end;
    double v;
    int ok = hdp_schema_parse_decimal_prefix(s, &end, &v);
    if (ok <= 0)
        return ok;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return 0;
    *out = v;
    return 1;
}

/* Whether a file name written back as the value of "key = NAME" (a model file, `config`, a
 * CSV header's "# key = NAME") reads back as NAME through inih: no blank at either end
 * (stripped), no ';' first or after a blank (an inline comment), no control character (it
 * would end or split the line). Returns 0, or the offending byte's position + 1 with *why. */
static size_t path_unreadable(const char *name, const char **why)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f) {
            *why = "a control character";
            return i + 1;
        }
        if (c == ';' && (i == 0 || isspace((unsigned char)name[i - 1]))) {
            *why = i ? "';' after a blank (read back as the start of a comment)"
                     : "';' first (read back as the start of a comment)";
            return i + 1;
        }
    }
    if (n && isspace((unsigned char)name[0])) {
        *why = "a blank first (removed when read back)";
        return 1;
    }
    if (n && isspace((unsigned char)name[n - 1])) {
        *why = "a blank last (removed when read back)";
        return n;
    }
    return 0;
}

/* The file name value as given (line <= 0: --set) or relative to the model file's folder
 * (where); refused, never cut, when it is too long for the model or would not read back. */
static hdp_status set_path(const char **dst, const char *value, const char *where, int line,
                           const char *loc, const char *section, const char *key,
                           hdp_error *err)
{
    const char *slash = value[0] && value[0] != '/' && line > 0 ? strrchr(where, '/') : NULL;
    int dirlen = slash ? (int)(slash - where) : 0;
    size_t need = slash ? (size_t)dirlen + 1 + strlen(value) : strlen(value);
    if (need >= HDP_PATH_MAX)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: [%s] %s: the file name is %zu bytes long%s: at most %d are accepted",
                        loc, section, key, need,
                        slash ? " (with the model file's folder before it)" : "",
                        HDP_PATH_MAX - 1);
    char *name = malloc(need + 1);
    if (!name)
        return hdp_fail(err, HDP_ENOMEM, "%s: [%s] %s: out of memory", loc, section, key);
    if (slash)
        snprintf(name, need + 1, "%.*s/%s", dirlen, where, value);
    else
        memcpy(name, value, need + 1);
    const char *why = "";
    size_t at = path_unreadable(name, &why);
    char *cwd = NULL; /* of any length: getcwd allocates */
    if (!at && name[0] && name[0] != '/' && (cwd = getcwd(NULL, 0))) {
        /* written back absolute (model_write.c): the working directory must read back too */
        const char *cwhy = "";
        if (path_unreadable(cwd, &cwhy)) {
            hdp_status st = hdp_fail(
                err, HDP_EINPUT,
                "%s: [%s] %s: the relative file name '%s' would be written back after the "
                "working directory '%s', which has %s: run it from another folder",
                loc, section, key, name, cwd, cwhy);
            free(cwd);
            free(name);
            return st;
        }
    }
    free(cwd);
    if (at) {
        hdp_status st = hdp_fail(
            err, HDP_EINPUT,
            "%s: [%s] %s: the file name '%s' has %s (byte 0x%02x at position %zu%s), so it would "
            "not read back from a model file or a CSV header: rename the file", loc, section, key,
            name, why, (unsigned char)name[at - 1], at - 1,
            slash && at <= (size_t)dirlen + 1 ? ", in the model file's folder" : "");
        free(name);
        return st;
    }
    if (!name[0]) { /* the shared empty text: nothing allocated */
        free(name);
        return hdp_model_set_text(dst, "", err);
    }
    hdp_model_set_text(dst, "", err); /* frees the old name */
    *dst = name;                      /* the model owns it (hdp_model_free) */
    return HDP_OK;
}

/* A list of decimal numbers separated by commas or blanks, stored normalised as "a,b,c"
 * (each number as %.17g reads it back exactly); nothing at all is the empty list. */
static hdp_status set_list(char *dst, const char *value, const char *loc, const char *section,
                           const char *key, const char *range, hdp_error *err)
{
    char out[HDP_LIST_MAX] = "";
    size_t used = 0;
    int count = 0;
    const char *p = value;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (!*p)
            break;
        char *end;
        double x;
        int ok = hdp_schema_parse_decimal_prefix(p, &end, &x);
        if (ok <= 0 || (*end && !isspace((unsigned char)*end) && *end != ','))
            return hdp_fail(err, HDP_EINPUT,
                            "%s: [%s] %s = '%s' is not accepted: item %d is not a finite number "
                            "(expected %s)", loc, section, key, value, count + 1, range);
        if (++count > HDP_LIST_ITEMS)
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: more than %d numbers", loc, section,
                            key, HDP_LIST_ITEMS);
        char num[40];
        hdp_format_exact(x, num, sizeof num);
        int w = snprintf(out + used, sizeof out - used, "%s%s", count > 1 ? "," : "", num);
        if (w < 0 || (size_t)w >= sizeof out - used)
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: the list is longer than %d bytes",
                            loc, section, key, HDP_LIST_MAX - 1);
        used += (size_t)w;
        p = end;
    }
    memcpy(dst, out, used + 1);
    return HDP_OK;
}

int hdp_schema_list_values(const char *text, double *v, int max)
{
    int n = 0;
    if (!text)
        return 0;
    for (const char *p = text; *p && n < max;) {
        char *end;
        double x;
        if (hdp_schema_parse_decimal_prefix(p, &end, &x) <= 0)
            break;
        v[n++] = x;
        p = end;
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
    }
    return n;
}

hdp_status hdp_schema_parse_value(hdp_model *m, const hdp_schema_ref *ref, const char *value,
                                  const char *loc, const char *where, int line,
                                  hdp_error *err)
{
    const hdp_schema_key *k = ref->key;
    const char *section = ref->section->name;
    char *val = hdp_schema_value(m, ref);
    char range[256];
    hdp_schema_describe_range(k, range, sizeof range);
    switch (k->type) {
    case HDP_KEY_ENUM: {
        const char *trimmed = value; /* compared whole: never cut */
        for (int i = 0; k->names[i]; i++) {
            if (!strcasecmp(trimmed, k->names[i])) {
                *(int *)val = i;
                return HDP_OK;
            }
        }
        /* schedule.kind = optimal: the name of eta~ = c1/(t + a) until issue 21 showed it is
         * not the optimal schedule at finite gamma; it is inverse-time now (the written name),
         * `optimal` stays read as an alias so that older files keep working */
        if (!strcmp(section, "schedule") && !strcmp(k->key, "kind") &&
            !strcasecmp(trimmed, "optimal")) {
            *(int *)val = HDP_SCHED_OPTIMAL;
            return HDP_OK;
        }
        return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = '%s' is not accepted: expected %s", loc,
                        section, k->key, value, range);
    }
    case HDP_KEY_PATH:
        return set_path((const char **)(void *)val, value, where, line, loc, section, k->key,
                        err);
    case HDP_KEY_LIST:
        return set_list(val, value, loc, section, k->key, range, err);
    case HDP_KEY_SEED: {
        char *end;
        errno = 0;
        while (isspace((unsigned char)*value))
            value++;
        unsigned long long v = strtoull(value, &end, 10); /* decimal: "010" is ten, not eight */
        while (isspace((unsigned char)*end))
            end++;
        if (*value == '-' || *value == '\0' || *end || errno == ERANGE)
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = '%s' is not accepted: expected %s",
                            loc, section, k->key, value, range);
        *(unsigned long long *)val = v;
        return HDP_OK;
    }
    case HDP_KEY_LONG:
    case HDP_KEY_DOUBLE: {
        double v;
        if (k->flags & HDP_R_AUTO) {
            const char *w = value; /* the word auto, blanks around it allowed, nothing else */
            while (isspace((unsigned char)*w)) w++;
            const char *e = w + (strncasecmp(w, "auto", 4) ? 0 : 4);
            while (e > w && isspace((unsigned char)*e)) e++;
            if (e > w && *e == '\0') {
                if (k->type == HDP_KEY_LONG)
                    *(long *)val = HDP_BINS_AUTO;
                else /* the double member named by the schema (offsetof) */
                    *(double *)val = HDP_AUTO_DOUBLE; /* cppcheck-suppress invalidPointerCast */
                return HDP_OK;
            }
        }
        int ok = parse_double(value, &v);
        if (ok < 0)
            return hdp_fail(err, HDP_EINPUT,
                            "%s: [%s] %s = %s is out of range (numbers must be finite, below "
                            "1.8e308 in size, and either 0 or at least 2.2e-308 in size): "
                            "expected %s",
                            loc, section, k->key, value, range);
        if (ok == 0)
            return hdp_fail(err, HDP_EINPUT,
                            "%s: [%s] %s = '%s' is not a number: expected %s (in decimal notation)", loc,
                            section, k->key, value, range);
        if (k->type == HDP_KEY_LONG && (isinf(v) || v != floor(v) || fabs(v) > 9.0e15))
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = '%s' is not an integer: expected %s",
                            loc, section, k->key, value, range);
        if (!in_range(k, v))
            return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s = %s is out of range: expected %s", loc,
                            section, k->key, value, range);
        if (k->type == HDP_KEY_LONG)
            *(long *)val = (long)v;
        else /* val is the double member named by the schema (offsetof) */
            *(double *)val = v; /* cppcheck-suppress invalidPointerCast */
        return HDP_OK;
    }
    }
    return HDP_OK;
}

void hdp_schema_format_value(const hdp_model *m, const hdp_schema_ref *ref, char *buf,
                             size_t size)
{
    const hdp_schema_key *k = ref->key;
    const char *val = hdp_schema_value_const(m, ref);
    switch (k->type) {
    case HDP_KEY_LONG:
        if ((k->flags & HDP_R_AUTO) && *(const long *)val == HDP_BINS_AUTO)
            snprintf(buf, size, "auto");
        else
            snprintf(buf, size, "%ld", *(const long *)val);
        break;
    case HDP_KEY_DOUBLE: {
        /* cppcheck-suppress invalidPointerCast ; the double member at offsetof (schema) */
        double v = *(const double *)val;
        if ((k->flags & HDP_R_AUTO) && v == HDP_AUTO_DOUBLE) {
            snprintf(buf, size, "auto");
        } else if (isinf(v)) {
            snprintf(buf, size, "inf");
        } else {
            hdp_format_exact(v, buf, size);
        }
        break;
    }
    case HDP_KEY_ENUM: snprintf(buf, size, "%s", k->names[*(const int *)val]); break;
    case HDP_KEY_PATH: snprintf(buf, size, "%s", hdp_schema_text(val)); break;
    case HDP_KEY_LIST: snprintf(buf, size, "%s", val); break;
    case HDP_KEY_SEED: snprintf(buf, size, "%llu", *(const unsigned long long *)val); break;
    }
}

const char *hdp_format_exact(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, size, "%.17g", v);
    return buf;
}

hdp_status hdp_model_too_big(const hdp_model *m, const char *section, const char *k1,
                             double v1, const char *k2, double v2, double cells,
                             const char *what, hdp_error *err)
{
    return hdp_model_fail_key(m, section, k1, err,
                              "%s = %.0f with %s = %.0f needs %s of %.3g numbers, more than the "
                              "%.0e accepted (%.1f GB): make one of them smaller",
                              k1, v1, k2, v2, what, cells, HDP_MODEL_MAX_CELLS,
                              HDP_MODEL_MAX_CELLS * 8 / 1e9);
}
