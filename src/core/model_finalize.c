/*
 * model_finalize.c — hdp_model_finalize and hdp_model_check: the core's ranges and
 * combinations, the forms of the privacy budget (rho, rho_zcdp, (epsilon, delta)), n from
 * gamma, the spectrum file and the schedule table loaded (read through
 * hdp_model_read_text), each section's own checks; failures named by file:line and key
 * (hdp_model_fail_key), and whether a key was given.
 */
#include "hdpsgd/model.h"
#include "core/check.h"
#include "core/model_internal.h"
#include "core/schema.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/privacy.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- finalize: derived values, combinations, files ---- */

int hdp_model_key_given(const hdp_model *m, const char *section, const char *key)
{
    hdp_schema_ref ref;
    return m && section && key && hdp_schema_find(section, key, &ref) &&
           m->origin[ref.index].file != 0;
}

hdp_status hdp_model_fail_key(const hdp_model *m, const char *section, const char *key,
                              hdp_error *err, const char *fmt, ...)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, section);
    HDP_REQUIRE(err, key);
    HDP_REQUIRE(err, fmt);
    hdp_schema_ref ref;
    char loc[HDP_PATH_MAX + 32];
    const hdp_origin *o = hdp_schema_find(section, key, &ref) ? &m->origin[ref.index] : NULL;
    if (o && o->file)
        hdp_model_format_where(loc, sizeof loc, hdp_model_origin_where(m, ref.index), o->line);
    else
        snprintf(loc, sizeof loc, "%s (default value)", m->source);
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: %s", loc, section, key, what);
}

/* Read a whitespace-separated numeric table with 'cols' columns (decimal numbers, see
 * parse_decimal; '#' and ';' start comments). */
static hdp_status read_table(const char *path, int cols, const char *section, const char *key,
                             const hdp_model *m, double **out, long *rows, int **lines,
                             hdp_error *err)
{
    char *text;
    hdp_error e;
    hdp_error_clear(&e);
    hdp_status st = hdp_model_read_text(path, cols > 1 ? "schedule table" : "spectrum file",
                                        TABLE_MAX_LINE, &text, &e);
    if (st != HDP_OK)
        return hdp_model_fail_key(m, section, key, err, "%s", e.msg);
    long cap = 256, len = 0;
    double *v = malloc(sizeof(double) * (size_t)(cap * cols));
    int *ln = malloc(sizeof(int) * (size_t)cap); /* the file line of each row */
    int lineno = 0;
    for (char *line = text, *next; v && ln && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '#' || *p == ';' || *p == '\0')
            continue;
        if (len == cap) {
            cap *= 2;
            double *nv = realloc(v, sizeof(double) * (size_t)(cap * cols));
            int *nl = nv ? realloc(ln, sizeof(int) * (size_t)cap) : NULL;
            v = nv ? nv : v;
            ln = nl ? nl : ln;
            if (!nl) {
                free(v);
                v = NULL; /* out of memory: reported below */
                break;
            }
        }
        ln[len] = lineno;
        for (int c = 0; c < cols; c++) {
            char *end;
            double x;
            int ok = hdp_schema_parse_decimal_prefix(p, &end, &x);
            if (ok == 0) {
                st = hdp_fail(err, HDP_EINPUT,
                              "%s:%d: expected %d number%s per line (%s of [%s] %s; decimal "
                              "notation), got '%s'",
                              path, lineno, cols, cols > 1 ? "s" : "",
                              cols > 1                      ? "t and eta"
                              : !strcmp(key, "noise_file") ? "one label-noise value"
                                                           : "one eigenvalue",
                              section, key, line);
                goto done;
            }
            if (ok < 0) {
                st = hdp_fail(err, HDP_EINPUT,
                              "%s:%d: '%.*s' is out of range ([%s] %s): numbers must be finite "
                              "(below 1.8e308 in size) and either 0 or at least 2.2e-308 in size "
                              "(no subnormal numbers, nor ones that round to 0)",
                              path, lineno, (int)(end - p), p, section, key); /* <= 4000 */
                goto done;
            }
            v[len * cols + c] = x;
            p = end;
            while (isspace((unsigned char)*p) || *p == ',') p++;
        }
        if (*p && *p != '#' && *p != ';') {
            st = hdp_fail(err, HDP_EINPUT, "%s:%d: expected %d number%s per line, got '%s'",
                          path, lineno, cols, cols > 1 ? "s" : "", line);
            goto done;
        }
        len++;
    }
    if (!v || !ln) {
        st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (len == 0)
        st = hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: the file has no numbers", path, section, key);
done:
    free(text);
    if (st != HDP_OK) {
        free(v);
        free(ln);
        return st;
    }
    *out = v;
    *rows = len;
    if (lines)
        *lines = ln;
    else
        free(ln);
    return HDP_OK;
}

/* A file of one number >= 0 per line, not all zero (data.spectrum_file, data.target_file):
 * one is the name of a number in the messages, all the plural, why the reason a number must
 * be >= 0, tail what follows "are zero". */
static hdp_status read_nonnegative(const hdp_model *m, const char *path, const char *key,
                                   const char *one, const char *all, const char *why,
                                   const char *tail, double **out, long *len, hdp_error *err)
{
    hdp_status st = read_table(path, 1, "data", key, m, out, len, NULL, err);
    double sum = 0;
    for (long i = 0; i < *len && st == HDP_OK; i++) {
        if ((*out)[i] < 0)
            st = hdp_fail(err, HDP_EINPUT, "%s: %s %ld is negative (%g): %s", path, one, i + 1,
                          (*out)[i], why);
        sum += (*out)[i];
    }
    if (st == HDP_OK && !(sum > 0))
        st = hdp_fail(err, HDP_EINPUT, "%s: all %s are zero%s", path, all, tail);
    if (st != HDP_OK && *out) {
        free(*out);
        *out = NULL;
    }
    return st;
}

static hdp_status load_spectrum_file(hdp_model *m, hdp_error *err)
{
    if (!m->spectrum_file[0])
        return hdp_model_fail_key(m, "data", "spectrum_file", err,
                                  "spectrum = file needs data.spectrum_file (one eigenvalue per line)");
    double *v = NULL;
    long len = 0;
    hdp_status st = read_nonnegative(m, m->spectrum_file, "spectrum_file", "eigenvalue",
                                     "eigenvalues", "a covariance spectrum needs eigenvalues >= 0",
                                     "", &v, &len, err);
    if (st != HDP_OK)
        return st;
    if (hdp_model_key_given(m, "data", "d") && m->d != len) {
        free(v);
        return hdp_model_fail_key(m, "data", "d", err,
                                  "d = %ld but %s has %ld eigenvalues (leave d out to take it from the "
                                  "file)",
                                  m->d, m->spectrum_file, len);
    }
    m->d = len;
    free(m->file_lambda);
    m->file_lambda = v;
    m->file_len = len;
    return HDP_OK;
}

/* target = file (synthetic): one energy >= 0 per eigenvalue, d of them, not all zero */
static hdp_status load_target_file(hdp_model *m, hdp_error *err)
{
    if (!m->target_file[0])
        return hdp_model_fail_key(m, "data", "target_file", err,
                                  "target = file needs data.target_file (one energy per "
                                  "eigenvalue, one per line)");
    double *v = NULL;
    long len = 0;
    hdp_status st = read_nonnegative(m, m->target_file, "target_file", "energy", "energies",
                                     "energies (u_j^T theta*)^2 are >= 0 ([data] target_file)",
                                     " ([data] target_file)", &v, &len, err);
    if (st == HDP_OK && len != m->d)
        st = hdp_model_fail_key(m, "data", "target_file", err,
                                "%s has %ld energies but d = %ld: one energy per eigenvalue",
                                m->target_file, len, m->d);
    if (st != HDP_OK) {
        free(v);
        return st;
    }
    free(m->file_energy);
    m->file_energy = v;
    m->energy_len = len;
    return HDP_OK;
}

/* Empirical label noise: the values of data.noise_file, checked and centred
 * (hdp_noise_sample_check), unless a sample was set in memory (hdp_model_set_noise_sample)
 * and no file is named. */
static hdp_status load_noise_file(hdp_model *m, int keep, hdp_error *err)
{
    if (!m->noise_file[0]) {
        if (m->noise_values && m->noise_len >= 2)
            return HDP_OK;
        return hdp_model_fail_key(m, "data", "noise_file", err,
                                  "noise = empirical needs data.noise_file (one label-noise "
                                  "value per line)");
    }
    if (keep && m->noise_values)
        return HDP_OK;
    double *v = NULL;
    long len = 0;
    hdp_status st = read_table(m->noise_file, 1, "data", "noise_file", m, &v, &len, NULL, err);
    if (st != HDP_OK)
        return st;
    double tau2 = 0;
    hdp_error e;
    hdp_error_clear(&e);
    if (hdp_noise_sample_check(v, (size_t)len, m->noise_file, &tau2, &e) != HDP_OK) {
        free(v);
        return hdp_model_fail_key(m, "data", "noise_file", err, "%s", e.msg);
    }
    free(m->noise_values);
    m->noise_values = v;
    m->noise_len = len;
    return HDP_OK;
}

static hdp_status load_schedule_table(hdp_model *m, hdp_error *err)
{
    if (!m->sched_file[0])
        return hdp_model_fail_key(m, "schedule", "file", err,
                                  "kind = table needs schedule.file (two columns: t, eta)");
    double *v = NULL;
    long len = 0;
    int *lines = NULL;
    hdp_status st = read_table(m->sched_file, 2, "schedule", "file", m, &v, &len, &lines, err);
    if (st != HDP_OK)
        return st;
    const char *why = NULL;
    long bad = -1;
    for (long i = 0; i < len && !why; i++) {
        double t = v[2 * i], e = v[2 * i + 1];
        if (t < 0 || t > 1) why = "t must lie in [0, 1]";
        else if (e < 0) why = "eta must be >= 0";
        else if (i > 0 && !(t > v[2 * (i - 1)])) why = "t must be strictly increasing";
        else if (i > 0 && t - v[2 * (i - 1)] < HDP_TABLE_MIN_SPACING * (1 - 1e-6)) /* (1e-9
                 * written in decimal is a little less in binary) */
            /* the solvers take knots within 1e-12 for one (a segment that short, where
             * sigma~^2 = -2 eta~ eta~'/rho^2 is a spike, was stepped across and failed) and
             * DOP853 cannot step below 1e-14: the two knots 1 ulp apart failed both, and
             * raising ode.max_steps ran for minutes */
            why = "t is less than 1e-9 after the previous knot: knots closer than that are "
                  "refused (the solvers cannot resolve the segment between them); merge the "
                  "two knots or move one";
        else if (i > 0 && e > v[2 * (i - 1) + 1])
            why = "eta must be non-increasing (an increasing learning rate would need negative "
                  "noise variance, docs/theory.md §1)";
        if (why) bad = i;
    }
    if (!why && len < 2) { why = "at least two knots are needed (t = 0 and t = 1)"; bad = 0; }
    if (!why && v[0] != 0) { why = "the first knot must be at t = 0"; bad = 0; }
    if (!why && v[2 * (len - 1)] != 1) { why = "the last knot must be at t = 1"; bad = len - 1; }
    if (!why && !(v[1] > 0)) { why = "eta(0) must be > 0"; bad = 0; }
    if (why) {
        int line = lines[bad];
        free(v);
        free(lines);
        return hdp_fail(err, HDP_EINPUT, "%s:%d: knot %ld: %s ([schedule] file)", m->sched_file,
                        line, bad + 1, why);
    }
    free(lines);
    free(m->table_t);
    free(m->table_eta);
    m->table_t = malloc(sizeof(double) * (size_t)len);
    m->table_eta = malloc(sizeof(double) * (size_t)len);
    if (!m->table_t || !m->table_eta) {
        free(v);
        return hdp_fail(err, HDP_ENOMEM, "out of memory reading %s", m->sched_file);
    }
    for (long i = 0; i < len; i++) {
        m->table_t[i] = v[2 * i];
        m->table_eta[i] = v[2 * i + 1];
    }
    m->table_len = (int)len;
    free(v);
    return HDP_OK;
}

/* The forms of the privacy budget, keys of [privacy]: exactly one is given. */
static const char *const budget_forms[3] = {"rho", "rho_zcdp", "epsilon"};

/* 1 when section.key was last set by an override (hdp_model_set: --set, a sweep's point) */
static int key_overridden(const hdp_model *m, const char *section, const char *key)
{
    hdp_schema_ref ref;
    return hdp_schema_find(section, key, &ref) && m->origin[ref.index].file == 1;
}

/* The privacy budget: exactly one of rho, rho_zcdp, epsilon (with delta) given (none: the
 * default rho); the others are derived from it. A form given by an override replaces the
 * forms a model file gave (--set privacy.epsilon=1 on a file that sets rho): those are
 * returned to their defaults, so that the model written back holds only the form in force.
 * Two forms from the same level (one file, or the overrides) are refused. */
static hdp_status finalize_privacy(hdp_model *m, hdp_error *err)
{
    const char *const *forms = budget_forms;
    int given[3], over[3], count = 0, first = -1, overrides = 0;
    for (int i = 0; i < 3; i++) {
        given[i] = hdp_model_key_given(m, "privacy", forms[i]);
        over[i] = given[i] && key_overridden(m, "privacy", forms[i]);
        overrides += over[i];
    }
    for (int i = 0; i < 3; i++) {
        hdp_schema_ref ref;
        if (overrides && given[i] && !over[i] && hdp_schema_find("privacy", forms[i], &ref)) {
            m->origin[ref.index] = (hdp_origin){0, 0}; /* replaced by the override */
            given[i] = 0;
        }
        count += given[i];
        if (given[i] && first < 0)
            first = i;
    }
    if (count > 1) {
        int second = first + 1;
        while (!given[second])
            second++;
        hdp_schema_ref ref;
        char loc[HDP_PATH_MAX + 32] = "";
        if (hdp_schema_find("privacy", forms[first], &ref))
            hdp_model_format_where(loc, sizeof loc, hdp_model_origin_where(m, ref.index),
                                   m->origin[ref.index].line);
        return hdp_model_fail_key(m, "privacy", forms[second], err,
                                  "the privacy budget is given twice, as [privacy] %s (%s) and as "
                                  "[privacy] %s: give exactly one of rho, rho_zcdp, or epsilon with "
                                  "delta",
                                  forms[first], loc, forms[second]);
    }
    /* epsilon alone: at privacy.delta's default (1e-5), like every summary's epsilon */
    if (given[1]) {
        m->rho = sqrt(2.0 * m->rho_zcdp);
        if (!(m->rho >= 1e-50))
            return hdp_model_fail_key(m, "privacy", "rho_zcdp", err,
                                      "rho_zcdp = %g gives rho = sqrt(2 rho_zcdp) below 1e-50",
                                      m->rho_zcdp);
    } else if (given[2]) {
        if (isinf(m->epsilon)) {
            m->rho = INFINITY;
        } else {
            double rz;
            hdp_error e;
            hdp_error_clear(&e);
            if (hdp_zcdp_from_epsilon(m->epsilon, m->delta, &rz, &e) != HDP_OK)
                return hdp_model_fail_key(m, "privacy", "epsilon", err, "%s", e.msg);
            m->rho = sqrt(2.0 * rz);
        }
    }
    m->rho_zcdp = isinf(m->rho) ? INFINITY : 0.5 * m->rho * m->rho;
    if (!given[2])
        m->epsilon = hdp_zcdp_epsilon_cks(m->rho_zcdp, m->delta);
    return HDP_OK;
}

static hdp_status check_sizes(const hdp_model *m, hdp_error *err)
{
    double cells;
    if ((cells = 2.0 * (double)m->runs * (double)m->points) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "sim", "runs", (double)m->runs, "ode.points",
                                 (double)m->points, cells,
                                 "the runs' curves (kept for the quantiles)", err);
    return HDP_OK;
}

hdp_status hdp_model_finalize(hdp_model *m, hdp_error *err)
{
    return hdp_model_finalize_keep(m, 0, err);
}

void hdp_model_budget_replaced(hdp_model *m, const char *key)
{
    const char *const *forms = budget_forms;
    int is_form = 0;
    for (int i = 0; i < 3; i++)
        is_form |= !strcmp(key, forms[i]);
    hdp_schema_ref ref;
    for (int i = 0; is_form && i < 3; i++)
        if (strcmp(key, forms[i]) && hdp_schema_find("privacy", forms[i], &ref))
            m->origin[ref.index] = (hdp_origin){0, 0};
}

hdp_status hdp_model_finalize_keep(hdp_model *m, int keep_tables, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    hdp_status st;
    if (m->spectrum == HDP_SPECTRUM_FILE && !(keep_tables && m->file_lambda) &&
        (st = load_spectrum_file(m, err)) != HDP_OK)
        return st;
    if ((st = hdp_model_load_data(m, keep_tables, err)) != HDP_OK)
        return st;
    if (m->data_source == HDP_SOURCE_SYNTHETIC && m->target == HDP_TARGET_FILE &&
        !(keep_tables && m->file_energy) && (st = load_target_file(m, err)) != HDP_OK)
        return st;
    /* n and gamma: the later of the two wins; n = round(d / gamma) */
    if (m->n_given_last && m->n >= 1) {
        m->gamma = (double)m->d / (double)m->n;
    } else {
        if (m->n_given_last && m->n < 1)
            return hdp_model_fail_key(m, "data", "n", err, "n must be >= 1");
        double n = nearbyint((double)m->d / m->gamma);
        if (n < 1)
            return hdp_model_fail_key(m, "data", "gamma", err,
                                      "gamma = %g gives n = round(d/gamma) = 0 samples for d = %ld: "
                                      "need gamma <= 2d",
                                      m->gamma, m->d);
        if (n > 1.0e12)
            return hdp_model_fail_key(m, "data", "gamma", err,
                                      "gamma = %g gives n = round(d/gamma) = %g steps: at most 1e12 (the "
                                      "bound of data.n)",
                                      m->gamma, n);
        m->n = (long)n;
        m->gamma = (double)m->d / (double)m->n;
    }
    if (m->noise == HDP_NOISE_NONE)
        m->tau2 = 0;
    if (m->noise == HDP_NOISE_MIXTURE) { /* the variance of the mixture (docs/theory.md §2.3) */
        m->tau2 = hdp_noise_mixture_tau2(m->mixture_weight, m->mixture_mean, m->mixture_var1,
                                         m->mixture_var2);
        if (!isfinite(m->tau2))
            return hdp_model_fail_key(m, "data", "mixture_mean", err,
                                      "the mixture's variance overflows");
    }
    if (m->noise == HDP_NOISE_EMPIRICAL) {
        if ((st = load_noise_file(m, keep_tables, err)) != HDP_OK)
            return st;
        double ss = 0; /* the variance of the centred values */
        for (long i = 0; i < m->noise_len; i++)
            ss += m->noise_values[i] * m->noise_values[i];
        m->tau2 = ss / (double)m->noise_len;
    }
    if ((st = finalize_privacy(m, err)) != HDP_OK)
        return st;
    if (isinf(m->c) && !isinf(m->rho))
        return hdp_model_fail_key(m, "clip", "c", err,
                                  "c = inf (no clipping) needs privacy.rho = inf: the private noise "
                                  "2*c*sqrt(d)*sigma_k would be infinite");
    if (m->sched == HDP_SCHED_CONSTANT && !isinf(m->rho))
        return hdp_model_fail_key(m, "schedule", "kind", err,
                                  "constant is the non-private baseline and needs privacy.rho = inf; "
                                  "use kind = output for a private constant learning rate");
    if (m->sched == HDP_SCHED_OPTIMAL) {
        double a = m->gamma * fmax(m->c2, isinf(m->rho) ? 0 : m->c3 / m->rho);
        if (!(a > 0))
            return hdp_model_fail_key(m, "schedule", "c2", err,
                                      "the optimal schedule needs a = gamma*max(c2, c3/rho) > 0 "
                                      "(with rho = inf, c2 > 0)");
    }
    if (m->sched == HDP_SCHED_TABLE && !(keep_tables && m->table_t) &&
        (st = load_schedule_table(m, err)) != HDP_OK)
        return st;
    if (m->spectrum == HDP_SPECTRUM_TWOLEVEL) {
        long k = (long)nearbyint(m->twolevel_fraction * (double)m->d);
        if (m->d >= 2 && (k < 1 || k >= m->d))
            return hdp_model_fail_key(m, "data", "twolevel_fraction", err,
                                      "fraction %g of d = %ld gives %ld large eigenvalues: need between 1 "
                                      "and d-1",
                                      m->twolevel_fraction, m->d, k);
    }
    if (m->bins > m->d)
        m->bins = 0; /* more bins than eigenvalues: one per eigenvalue */
    if (m->data && m->rows == HDP_ROWS_WITHOUT_REPLACEMENT && m->n > m->data->train.n)
        return hdp_model_fail_key(m, "sim", "rows", err,
                                  "without-replacement makes one pass over the %ld rows of %s, "
                                  "fewer than the n = %ld steps: take n <= %ld (gamma >= %g) "
                                  "or rows = with-replacement",
                                  m->data->train.n, m->features, m->n, m->data->train.n,
                                  (double)m->d / (double)m->data->train.n);
    if ((st = check_sizes(m, err)) != HDP_OK)
        return st;
    /* each section's own combinations and sizes (the families'), in the table's order */
    const hdp_schema_section *s;
    for (int i = 0; (s = hdp_schema_section_at(i)); i++)
        if (s->finalize && (st = s->finalize(m, err)) != HDP_OK)
            return st;
    m->finalized = 1;
    return HDP_OK;
}

hdp_status hdp_model_check(const hdp_model *m, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    const char *why = NULL;
    char range[300];
    if (!m->finalized)
        why = "it was not finalized after its last change: call hdp_model_finalize";
    else if (m->n < 1)
        why = "data.n is below 1";
    else if (!(isfinite(m->gamma) && m->gamma > 0) ||
             fabs(m->gamma - (double)m->d / (double)m->n) > 1e-12 * m->gamma)
        why = "gamma is not d/n";
    else if (m->spectrum == HDP_SPECTRUM_FILE && (!m->file_lambda || m->file_len != m->d))
        why = "its spectrum file is not loaded (finalize loads it)";
    else if (m->data_source == HDP_SOURCE_FILE && (!m->data || m->data->train.d != m->d))
        why = "its data set is not loaded (finalize loads it)";
    else if (m->data_source == HDP_SOURCE_SYNTHETIC && m->target == HDP_TARGET_FILE &&
             (!m->file_energy || m->energy_len != m->d))
        why = "its target file is not loaded (finalize loads it)";
    else if (m->noise == HDP_NOISE_EMPIRICAL && (!m->noise_values || m->noise_len < 2))
        why = "its label-noise sample is not loaded (finalize loads data.noise_file)";
    else if (m->sched == HDP_SCHED_TABLE && (!m->table_t || !m->table_eta || m->table_len < 2))
        why = "its schedule table is not loaded (finalize loads it)";
    /* every number key in its schema range (a field written after finalize) */
    hdp_schema_ref r;
    for (int i = 0; !why && hdp_schema_key_at(i, &r); i++) {
        char what[256];
        if (hdp_schema_value_out_of_range(m, &r, what, sizeof what)) {
            snprintf(range, sizeof range, "%s.%s", r.section->name, what);
            why = range;
        }
    }
    if (why)
        return hdp_fail(err, HDP_EINPUT, "model %s: %s", m->source && m->source[0] ? m->source : "(zeroed)",
                        why);
    return HDP_OK;
}

hdp_status hdp_model_require_one_pass(const hdp_model *m, const char *what, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, what);
    if (m->sampling != HDP_SAMPLING_ONE_PASS)
        return hdp_model_fail_key(m, "sgd", "sampling", err,
                                  "sampling = %s (epochs = %ld): %s covers one pass only "
                                  "(sgd.sampling = one-pass, sgd.epochs = 1); the theory of "
                                  "several epochs on a finite training set is not built "
                                  "(docs/theory.md §3.11)",
                                  hdp_sampling_name(m->sampling), m->epochs, what);
    return HDP_OK;
}
