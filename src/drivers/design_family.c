/*
 * design_family.c — the schedule families of the designer (hdpsgd/design.h): their names and
 * parsing, the design options' defaults, the parametrisation of each family and its mapping to
 * a schedule (decode, apply), the written tables and the design's schedule as a model
 * (hdp_design_eta, hdp_design_model).
 *
 * Admissibility through the parametrisation: eta~(0) = (2/gamma) sigmoid(p_0) keeps
 * sup eta~ < 2/gamma (docs/theory.md §3, stability); the pl knots are products of ratios in (0, 1]
 * (knot_ratio), so eta~ is non-increasing and sigma~^2 = -(eta~^2)'/rho^2 >= 0
 * (docs/theory.md §1, §5).
 */
#include "drivers/design_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The family c1/(t + a) was called `optimal` until issue 21 found it is not the optimum at
 * finite gamma: it is `inverse-time` now, in every output too; `optimal` stays read as an
 * alias (hdp_design_family_parse). */
static const char *const family_names[] = {"output", "linear-noise", "inverse-time", "pl"};

const char *hdp_design_family_name(hdp_design_family f)
{
    return (f >= 0 && f < HDP_FAMILY_COUNT) ? family_names[f] : "?";
}

/* the same names since issue 21 */
const char *hdp_design_family_column(hdp_design_family f) { return hdp_design_family_name(f); }

/* the what of the designer's progress reports (hdpsgd/design.h), per family and event */
static const char *const progress_what[HDP_FAMILY_COUNT][HDP_DESIGN_EVENT_COUNT] = {
    {"output", "output scan", "output round", "output level"},
    {"linear-noise", "linear-noise scan", "linear-noise round", "linear-noise level"},
    {"inverse-time", "inverse-time scan", "inverse-time round", "inverse-time level"},
    {"pl", "pl scan", "pl round", "pl level"},
};

const char *hdp_design_progress_what(hdp_design_family f, hdp_design_event e)
{
    if ((int)f < 0 || f >= HDP_FAMILY_COUNT || (int)e < 0 || e >= HDP_DESIGN_EVENT_COUNT)
        return "?";
    return progress_what[f][e];
}

int hdp_design_progress_event(const char *what, hdp_design_family *family)
{
    for (int f = 0; what && f < HDP_FAMILY_COUNT; f++)
        for (int e = 0; e < HDP_DESIGN_EVENT_COUNT; e++)
            if (!strcmp(what, progress_what[f][e])) {
                if (family)
                    *family = (hdp_design_family)f;
                return e;
            }
    return -1;
}

int hdp_design_family_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < HDP_FAMILY_COUNT; i++)
        if (!strcmp(name, family_names[i]))
            return i;
    if (!strcmp(name, "optimal")) /* the alias of inverse-time, its name before issue 21 */
        return HDP_FAMILY_INVERSE_TIME;
    return -1;
}

const char *hdp_design_family_key(hdp_design_family f)
{
    static const char *const keys[] = {"output", "linear_noise", "inverse_time", "pl"};
    return (int)f >= 0 && f < HDP_FAMILY_COUNT ? keys[f] : "unknown";
}

hdp_status hdp_design_families_parse(const char *list, int want[HDP_FAMILY_COUNT], hdp_error *err)
{
    HDP_REQUIRE(err, list);
    HDP_REQUIRE(err, want);
    memset(want, 0, sizeof(int) * HDP_FAMILY_COUNT);
    char *buf = strdup(list); /* a list of any length: never cut */
    if (!buf)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the family list");
    int any = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        /* "output, optimal" as written in a sweep file: blanks around a name are not part of it */
        while (*tok == ' ' || *tok == '\t') tok++;
        size_t n = strlen(tok);
        while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t')) tok[--n] = '\0';
        if (!strcmp(tok, "all")) {
            for (int f = 0; f < HDP_FAMILY_COUNT; f++) want[f] = 1;
            any = 1;
            continue;
        }
        int f = hdp_design_family_parse(tok);
        if (f < 0) {
            hdp_status st = hdp_fail(err, HDP_EINPUT,
                                     "unknown family '%s' (expected all, output, linear-noise, "
                                     "inverse-time (or optimal) or pl)", tok);
            free(buf);
            return st;
        }
        want[f] = any = 1;
    }
    free(buf);
    if (!any)
        return hdp_fail(err, HDP_EINPUT, "'%s': no family given", list);
    return HDP_OK;
}

const char *hdp_design_method_name(hdp_design_method m)
{
    return m == HDP_DESIGN_BFGS ? "bfgs" : m == HDP_DESIGN_SIMPLEX ? "simplex" : "?";
}

int hdp_design_method_parse(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "bfgs"))
        return HDP_DESIGN_BFGS;
    if (!strcmp(name, "simplex"))
        return HDP_DESIGN_SIMPLEX;
    return -1;
}

void hdp_design_options_init(hdp_design_options *o)
{
    if (!o)
        return;
    *o = (hdp_design_options){.knots = 8, .method = HDP_DESIGN_BFGS, .refine_tol = 1e-5,
                              .max_restarts = 6, .max_solves = 6000, .search_rtol = 1e-7,
                              .table_points = 201};
}

void hdp_design_result_free(hdp_design_result *res)
{
    if (!res)
        return;
    free(res->table_t);
    free(res->table_eta);
    res->table_t = res->table_eta = NULL;
    res->table_len = 0;
}

double design_clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* sigmoid(p) in (0, 1) for p in [-60, 30] (the clamp keeps it strictly below 1) */
double design_sigmoid(double p)
{
    p = design_clampd(p, -60.0, 30.0);
    return p >= 0 ? 1.0 / (1.0 + exp(-p)) : exp(p) / (1.0 + exp(p));
}

double design_logit(double u)
{
    u = design_clampd(u, 1e-15, 1.0 - 1e-12);
    return log(u / (1.0 - u));
}

/* ---- the parametrisation (design.h) ---- */

/* The ratio eta~(t_i) / eta~(t_{i-1}) of the pl knots: sigmoid(p) for simplex;
 * 1 / (1 + p^2) for bfgs, which reaches equal knots (an active monotonicity constraint:
 * the optimum of the default model is flat on its first half) at p = 0 with a non-zero
 * curvature, where the sigmoid needs p -> inf and its gradient vanishes. Both give every
 * non-increasing schedule (the square form includes its closure, equal knots). */
double design_knot_ratio(const search *s, double p)
{
    return s->g ? 1.0 / (1.0 + p * p) : design_sigmoid(p);
}

double design_ratio_param(const search *s, double ratio)
{
    if (!s->g)
        return design_logit(ratio);
    ratio = design_clampd(ratio, 1e-300, 1.0);
    return sqrt(1.0 / ratio - 1.0);
}

int design_nparams(hdp_design_family f, int K, int tune_clip)
{
    int n = f == HDP_FAMILY_OPTIMAL ? 2 : (f == HDP_FAMILY_PL ? K : 1);
    return n + (tune_clip ? 1 : 0);
}

/* Map p to the schedule fields of r (eta0, eta1, c1, a, c2, c3, knots, c). */
void design_decode(const search *s, const double *p, hdp_design_result *r)
{
    const hdp_model *m = s->base;
    double top = 2.0 / m->gamma; /* docs/theory.md §3: sup eta~ < 2/gamma */
    r->family = s->family;
    r->c = s->tune_clip ? exp(design_clampd(p[s->np - 1], -25.0, 12.0)) : m->c;
    double e0 = top * design_sigmoid(p[0]);
    r->eta0 = e0;
    r->c1 = r->a = r->c2 = r->c3 = NAN;
    r->knots = 0;
    switch (s->family) {
    case HDP_FAMILY_OUTPUT: r->eta1 = e0; break;
    case HDP_FAMILY_LINEAR_NOISE: r->eta1 = 0.0; break;
    case HDP_FAMILY_OPTIMAL:
        r->a = exp(design_clampd(p[1], -40.0, 25.0));
        r->c1 = r->a * e0;
        r->c2 = r->a / m->gamma;
        r->c3 = isinf(m->rho) ? 0.0 : r->a * m->rho / m->gamma;
        r->eta1 = r->c1 / (1.0 + r->a);
        break;
    case HDP_FAMILY_PL:
        r->knots = s->K;
        for (int i = 0; i < s->K; i++) {
            r->knot_t[i] = i == s->K - 1 ? 1.0 : (double)i / (double)(s->K - 1);
            r->knot_eta[i] = i == 0 ? e0 : r->knot_eta[i - 1] * design_knot_ratio(s, p[i]);
        }
        r->eta1 = r->knot_eta[s->K - 1];
        break;
    default: break;
    }
}

void design_drop_table(hdp_model *w)
{
    free(w->table_t);
    free(w->table_eta);
    w->table_t = w->table_eta = NULL;
    w->table_len = 0;
}

/* Point a shallow model copy at the schedule of r (docs/theory.md §5). t, eta: table storage
 * for pl (K knots). */
void design_apply(hdp_model *w, const hdp_design_result *r, double *t, double *eta)
{
    w->c = r->c;
    switch (r->family) {
    case HDP_FAMILY_OUTPUT: w->sched = HDP_SCHED_OUTPUT; w->eta0 = r->eta0; break;
    case HDP_FAMILY_LINEAR_NOISE: w->sched = HDP_SCHED_LINEAR_NOISE; w->eta0 = r->eta0; break;
    case HDP_FAMILY_OPTIMAL:
        w->sched = HDP_SCHED_OPTIMAL;
        w->c1 = r->c1;
        w->c2 = r->c2;
        w->c3 = r->c3;
        break;
    case HDP_FAMILY_PL:
        w->sched = HDP_SCHED_TABLE;
        memcpy(t, r->knot_t, sizeof(double) * (size_t)r->knots);
        memcpy(eta, r->knot_eta, sizeof(double) * (size_t)r->knots);
        w->table_len = r->knots;
        w->table_t = t;
        w->table_eta = eta;
        break;
    default: break;
    }
}

/* ---- tables (docs/theory.md §5, kind = table) ---- */

/* Knots of the written table: uniform (output), dense near t = 1 (linear-noise, where
 * sqrt(1 - t) bends), geometric in t + a (optimal, where c1/(t + a) bends on the scale a),
 * the K knots themselves (pl, exact). */
hdp_status design_make_table(hdp_design_result *r, long N, hdp_error *err)
{
    if (r->family == HDP_FAMILY_PL)
        N = r->knots;
    if (N < 2)
        N = 2;
    r->table_t = malloc(sizeof(double) * (size_t)N);
    r->table_eta = malloc(sizeof(double) * (size_t)N);
    if (!r->table_t || !r->table_eta)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a table of %ld knots", N);
    r->table_len = N;
    for (long i = 0; i < N; i++) {
        double u = (double)i / (double)(N - 1), t;
        switch (r->family) {
        case HDP_FAMILY_LINEAR_NOISE: t = 1.0 - (1.0 - u) * (1.0 - u); break;
        case HDP_FAMILY_OPTIMAL: t = r->a * expm1(u * log1p(1.0 / r->a)); break;
        case HDP_FAMILY_PL: t = r->knot_t[i]; break;
        default: t = u; break;
        }
        if (i == 0) t = 0.0;
        if (i == N - 1) t = 1.0;
        if (i > 0 && !(t > r->table_t[i - 1]))
            t = nextafter(r->table_t[i - 1], 2.0);
        r->table_t[i] = t;
    }
    if (r->table_t[N - 1] != 1.0)
        return hdp_fail(err, HDP_ENUMERIC, "could not place %ld table knots on [0, 1]", N);
    for (long i = 0; i < N; i++) {
        double e = hdp_design_eta(r, r->table_t[i]);
        /* exact monotonicity (IEEE operations are monotone; this guards the pl interpolation) */
        if (i > 0 && e > r->table_eta[i - 1]) e = r->table_eta[i - 1];
        r->table_eta[i] = e;
    }
    return HDP_OK;
}

double hdp_design_eta(const hdp_design_result *r, double t)
{
    if (!r)
        return NAN;
    t = design_clampd(t, 0.0, 1.0);
    switch (r->family) {
    case HDP_FAMILY_OUTPUT: return r->eta0;
    case HDP_FAMILY_LINEAR_NOISE: return r->eta0 * sqrt(1.0 - t);
    case HDP_FAMILY_OPTIMAL: return r->c1 / (t + r->a);
    case HDP_FAMILY_PL: {
        int K = r->knots, i = 0;
        if (K < 2) return r->knot_eta[0];
        while (i < K - 2 && t >= r->knot_t[i + 1]) i++;
        double u = (t - r->knot_t[i]) / (r->knot_t[i + 1] - r->knot_t[i]);
        return r->knot_eta[i] + u * (r->knot_eta[i + 1] - r->knot_eta[i]);
    }
    default: return NAN;
    }
}

hdp_status hdp_design_model(const hdp_model *base, const hdp_design_result *r, int use_table,
                            hdp_model *out, hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, base);
    HDP_REQUIRE(err, r);
    HDP_REQUIRE(err, out);
    if (hdp_model_check(base, err) != HDP_OK)
        return HDP_EINPUT;
    return design_model(base, r, use_table, out, err);
}

hdp_status design_model(const hdp_model *base, const hdp_design_result *r, int use_table,
                        hdp_model *out, hdp_error *err)
{
    hdp_status st = hdp_model_copy(out, base, err); /* the spectrum file's values too */
    if (st != HDP_OK)
        return st;
    design_drop_table(out); /* the schedule is the design's, not the base's */
    long len = use_table ? r->table_len : (r->family == HDP_FAMILY_PL ? r->knots : 0);
    if (use_table && len < 2) {
        hdp_model_free(out);
        return hdp_fail(err, HDP_EINPUT, "the design result has no table");
    }
    if (len > 0) {
        out->table_t = malloc(sizeof(double) * (size_t)len);
        out->table_eta = malloc(sizeof(double) * (size_t)len);
        if (!out->table_t || !out->table_eta) {
            hdp_model_free(out);
            return hdp_fail(err, HDP_ENOMEM, "out of memory for a table of %ld knots", len);
        }
    }
    if (use_table) {
        out->c = r->c;
        out->sched = HDP_SCHED_TABLE;
        memcpy(out->table_t, r->table_t, sizeof(double) * (size_t)len);
        memcpy(out->table_eta, r->table_eta, sizeof(double) * (size_t)len);
        out->table_len = (int)len;
    } else {
        design_apply(out, r, out->table_t, out->table_eta);
    }
    return HDP_OK;
}
