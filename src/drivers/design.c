/*
 * design.c — schedule design on the risk ODE (docs/theory.md §3, §5, §6); see
 * hdpsgd/design.h for the families, the parametrisation and the ownership rules.
 *
 * Objective: hdp_ode_solve(...).final_risk = R(1) + 2 c^2 gamma^2 eta~(1)^2 / rho^2
 * (docs/theory.md §3, final-iterate jump included), at the model's fixed rho (docs/theory.md §6:
 * every schedule discretised as in docs/theory.md §1 is exactly (rho^2/2)-zCDP).
 * Admissibility through the parametrisation: eta~(0) = (2/gamma) sigmoid(p_0) keeps
 * sup eta~ < 2/gamma (docs/theory.md §3, stability); the pl knots are products of ratios in (0, 1]
 * (knot_ratio), so eta~ is non-increasing and sigma~^2 = -(eta~^2)'/rho^2 >= 0
 * (docs/theory.md §1, §5).
 * Search, method bfgs (default): the objective and its exact gradient from the
 * differentiated Runge-Kutta discretisation of core/ode_grad.h (privacy noise and
 * final-step noise included, docs/theory.md §5.3); a coarse scan of it, then GSL's vector_bfgs2
 * from the three best distinct scan points, each restarted while a round gains more than
 * 1e-10 relative; refine (pl): K -> 2K - 1 knots from the coarser optimum. Method simplex:
 * a coarse scan, then Nelder-Mead (gsl_multimin_fminimizer_nmsimplex2) on hdp_ode_solve restarted
 * from the best point with a shrinking initial simplex until a round gains less than
 * 1e-6 relative (the search ODE is accurate to ~1e-6 at rtol 1e-7). Both: at most
 * max_restarts rounds and max_solves ODE solves (per refine level). A candidate whose ODE
 * fails scores PENALTY.
 */
#include "hdpsgd/design.h"
#include "core/check.h"
#include "core/ode_grad.h"
#include "hdpsgd/error.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hdpsgd/schedule.h"

#define PENALTY 1e30
#define MAX_PARAMS (HDP_DESIGN_MAX_KNOTS + 1)

/* The family c1/(t + a) was called `optimal` until issue 21 found it is not the optimum at
 * finite gamma: it is `inverse-time` now, `optimal` stays accepted and is the spelling of
 * machine-read outputs (hdp_design_family_column). */
static const char *const family_names[] = {"output", "linear-noise", "inverse-time", "pl"};
static const char *const family_columns[] = {"output", "linear-noise", "optimal", "pl"};

const char *hdp_design_family_name(hdp_design_family f)
{
    return (f >= 0 && f < HDP_FAMILY_COUNT) ? family_names[f] : "?";
}

const char *hdp_design_family_column(hdp_design_family f)
{
    return (f >= 0 && f < HDP_FAMILY_COUNT) ? family_columns[f] : "?";
}

int hdp_design_family_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < HDP_FAMILY_COUNT; i++)
        if (!strcmp(name, family_names[i]) || !strcmp(name, family_columns[i]))
            return i;
    return -1;
}

const char *hdp_design_family_key(hdp_design_family f)
{
    static const char *const keys[] = {"output", "linear_noise", "optimal", "pl"};
    return (int)f >= 0 && f < HDP_FAMILY_COUNT ? keys[f] : "unknown";
}

hdp_status hdp_design_families_parse(const char *list, int want[HDP_FAMILY_COUNT], hdp_error *err)
{
    HDP_REQUIRE(err, list);
    HDP_REQUIRE(err, want);
    memset(want, 0, sizeof(int) * HDP_FAMILY_COUNT);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
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
        if (f < 0)
            return hdp_fail(err, HDP_EINPUT,
                            "unknown family '%s' (expected all, output, linear-noise, inverse-time (or optimal) or pl)",
                            tok);
        want[f] = any = 1;
    }
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
    memset(o, 0, sizeof *o);
    o->knots = 8;
    o->method = HDP_DESIGN_BFGS;
    o->refine = 0;
    o->refine_tol = 1e-5;
    o->tune_clip = 0;
    o->max_restarts = 6;
    o->max_solves = 6000;
    o->search_rtol = 1e-7;
    o->table_points = 201;
}

hdp_status hdp_design_set_run(const hdp_model *m, const int want[HDP_FAMILY_COUNT],
                              const hdp_design_options *opt, hdp_design_set *d, hdp_error *err)
{
    HDP_ZERO(d);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, d);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    memset(d, 0, sizeof *d);
    d->best = -1;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        if (!want[f])
            continue;
        /* earlier families seed the pl search (res[0..f-1] that were run) */
        hdp_design_result hints[HDP_FAMILY_COUNT];
        int nh = 0;
        for (int g = 0; g < f; g++)
            if (d->done[g]) hints[nh++] = d->res[g];
        hdp_status st = hdp_design_optimize(m, f, opt, nh ? hints : NULL, nh, &d->res[f], err);
        if (st != HDP_OK)
            return st;
        d->done[f] = 1;
        d->solves += d->res[f].ode_solves;
        d->seconds += d->res[f].seconds;
        if (d->best < 0 || d->res[f].final_risk < d->res[d->best].final_risk)
            d->best = f;
    }
    return HDP_OK;
}

void hdp_design_set_free(hdp_design_set *d)
{
    if (!d)
        return;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        hdp_design_result_free(&d->res[f]);
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

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* sigmoid(p) in (0, 1) for p in [-60, 30] (the clamp keeps it strictly below 1) */
static double sigmoid(double p)
{
    p = clampd(p, -60.0, 30.0);
    return p >= 0 ? 1.0 / (1.0 + exp(-p)) : exp(p) / (1.0 + exp(p));
}

static double logit(double u)
{
    u = clampd(u, 1e-15, 1.0 - 1e-12);
    return log(u / (1.0 - u));
}

/* ---- the parametrisation (design.h) ---- */

typedef struct {
    const hdp_model *base;
    hdp_model work;              /* shallow copy at the search settings; never freed */
    hdp_design_family family;
    int K, tune_clip, np;
    double kt[HDP_DESIGN_MAX_KNOTS], ke[HDP_DESIGN_MAX_KNOTS]; /* pl knots of the candidate */
    long solves, max_solves;
    double best, best_p[MAX_PARAMS];
    int restart;
    const hdp_design_options *opt;
    hdp_ode_grad *g;             /* bfgs: the differentiated discretisation (ode_grad.h) */
    int nstart;                  /* bfgs: the best distinct points of the scan */
    double start_f[3], start_p[3][MAX_PARAMS];
} search;

/* The ratio eta~(t_i) / eta~(t_{i-1}) of the pl knots: sigmoid(p) for simplex;
 * 1 / (1 + p^2) for bfgs, which reaches equal knots (an active monotonicity constraint:
 * the optimum of the default model is flat on its first half) at p = 0 with a non-zero
 * curvature, where the sigmoid needs p -> inf and its gradient vanishes. Both give every
 * non-increasing schedule (the square form includes its closure, equal knots). */
static double knot_ratio(const search *s, double p)
{
    return s->g ? 1.0 / (1.0 + p * p) : sigmoid(p);
}

static double ratio_param(const search *s, double ratio)
{
    if (!s->g)
        return logit(ratio);
    ratio = clampd(ratio, 1e-300, 1.0);
    return sqrt(1.0 / ratio - 1.0);
}

static int nparams(hdp_design_family f, int K, int tune_clip)
{
    int n = f == HDP_FAMILY_OPTIMAL ? 2 : (f == HDP_FAMILY_PL ? K : 1);
    return n + (tune_clip ? 1 : 0);
}

/* Map p to the schedule fields of r (eta0, eta1, c1, a, c2, c3, knots, c). */
static void decode(const search *s, const double *p, hdp_design_result *r)
{
    const hdp_model *m = s->base;
    double top = 2.0 / m->gamma; /* docs/theory.md §3: sup eta~ < 2/gamma */
    r->family = s->family;
    r->c = s->tune_clip ? exp(clampd(p[s->np - 1], -25.0, 12.0)) : m->c;
    double e0 = top * sigmoid(p[0]);
    r->eta0 = e0;
    r->c1 = r->a = r->c2 = r->c3 = NAN;
    r->knots = 0;
    switch (s->family) {
    case HDP_FAMILY_OUTPUT: r->eta1 = e0; break;
    case HDP_FAMILY_LINEAR_NOISE: r->eta1 = 0.0; break;
    case HDP_FAMILY_OPTIMAL:
        r->a = exp(clampd(p[1], -40.0, 25.0));
        r->c1 = r->a * e0;
        r->c2 = r->a / m->gamma;
        r->c3 = isinf(m->rho) ? 0.0 : r->a * m->rho / m->gamma;
        r->eta1 = r->c1 / (1.0 + r->a);
        break;
    case HDP_FAMILY_PL:
        r->knots = s->K;
        for (int i = 0; i < s->K; i++) {
            r->knot_t[i] = i == s->K - 1 ? 1.0 : (double)i / (double)(s->K - 1);
            r->knot_eta[i] = i == 0 ? e0 : r->knot_eta[i - 1] * knot_ratio(s, p[i]);
        }
        r->eta1 = r->knot_eta[s->K - 1];
        break;
    default: break;
    }
}

/* Point a shallow model copy at the schedule of r (docs/theory.md §5). t, eta: table storage
 * for pl (K knots). */
static void apply(hdp_model *w, const hdp_design_result *r, double *t, double *eta)
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

static void report(search *s, int periodic)
{
    if (!s->opt->progress)
        return;
    hdp_design_progress pr = {s->family, s->solves, s->best, s->restart, periodic};
    s->opt->progress(&pr, s->opt->progress_user);
}

/* sigmoid'(p) / sigmoid(p) = 1 - sigmoid(p) inside the clamp of sigmoid, 0 outside */
static double dlog_sigmoid(double p)
{
    return (p > -60.0 && p < 30.0) ? 1.0 - sigmoid(p) : 0.0;
}

/* The objective of the bfgs method on the differentiated discretisation (ode_grad.h): the
 * final risk at p and, with grad, its gradient in p (chain rule through decode). */
static double fast_objective(search *s, const double *p, double *grad)
{
    const hdp_model *m = s->base;
    hdp_design_result *r = calloc(1, sizeof *r);
    double *ds = calloc(MAX_PARAMS, sizeof(double));
    double f = PENALTY, dc = 0;
    if (!r || !ds)
        goto out;
    decode(s, p, r);
    hdp_schedule sc;
    memset(&sc, 0, sizeof sc);
    sc.rho = m->rho;
    switch (s->family) {
    case HDP_FAMILY_OUTPUT: sc.kind = HDP_SCHED_OUTPUT; sc.eta0 = r->eta0; break;
    case HDP_FAMILY_LINEAR_NOISE: sc.kind = HDP_SCHED_LINEAR_NOISE; sc.eta0 = r->eta0; break;
    case HDP_FAMILY_OPTIMAL: sc.kind = HDP_SCHED_OPTIMAL; sc.c1 = r->c1; sc.a = r->a; break;
    default:
        sc.kind = HDP_SCHED_TABLE;
        sc.len = r->knots;
        sc.t = r->knot_t;
        sc.eta = r->knot_eta;
        break;
    }
    double F = hdp_ode_grad_eval(s->g, &sc, r->c, grad ? ds : NULL,
                                 grad && s->tune_clip ? &dc : NULL);
    if (isfinite(F))
        f = F;
    if (grad) {
        memset(grad, 0, sizeof(double) * (size_t)s->np);
        if (isfinite(F)) {
            switch (s->family) {
            case HDP_FAMILY_OUTPUT:
            case HDP_FAMILY_LINEAR_NOISE: grad[0] = ds[0] * r->eta0 * dlog_sigmoid(p[0]); break;
            case HDP_FAMILY_OPTIMAL:
                /* c1 = a eta~(0), a = e^{p_1} */
                grad[0] = ds[0] * r->c1 * dlog_sigmoid(p[0]);
                if (p[1] > -40.0 && p[1] < 25.0)
                    grad[1] = ds[0] * r->c1 + ds[1] * r->a;
                break;
            default: {
                /* eta_i = (2/gamma) sigmoid(p_0) prod_{0 < k <= i} ratio(p_k):
                 * d eta_i / d p_j = eta_i d log ratio(p_j) / d p_j for j <= i */
                double suffix = 0;
                for (int j = s->K - 1; j >= 0; j--) {
                    suffix += ds[j] * r->knot_eta[j];
                    /* d log ratio / dp: 1 - sigmoid(p_0) for eta~(0), -2p/(1 + p^2) for the ratios */
                    grad[j] = suffix * (j == 0 ? dlog_sigmoid(p[0]) : -2.0 * p[j] / (1.0 + p[j] * p[j]));
                }
                break;
            }
            }
            if (s->tune_clip) {
                double pc = p[s->np - 1];
                grad[s->np - 1] = (pc > -25.0 && pc < 12.0) ? dc * r->c : 0.0;
            }
        }
    }
out:
    free(r);
    free(ds);
    return f;
}

/* The objective: final-iterate excess risk of the ODE (docs/theory.md §3) at the search settings
 * (simplex: hdp_ode_solve; bfgs: the discretisation of ode_grad.h). */
static double objective_grad(search *s, const double *p, double *grad)
{
    if (s->opt->cancel && *s->opt->cancel) { /* end the scan and every round at once */
        s->solves = s->max_solves;
        return PENALTY;
    }
    double f = PENALTY;
    if (s->g) {
        f = fast_objective(s, p, grad);
    } else {
        hdp_design_result r;
        memset(&r, 0, sizeof r);
        decode(s, p, &r);
        apply(&s->work, &r, s->kt, s->ke);
        hdp_ode_result o;
        hdp_error err;
        hdp_error_clear(&err);
        if (hdp_ode_solve(&s->work, &o, &err) == HDP_OK && isfinite(o.final_risk))
            f = o.final_risk;
        hdp_ode_result_free(&o);
    }
    s->solves++;
    if (f < s->best) {
        s->best = f;
        memcpy(s->best_p, p, sizeof(double) * (size_t)s->np);
    }
    if (s->solves % 100 == 0)
        report(s, 1);
    return f;
}

static double objective(const gsl_vector *x, void *user)
{
    search *s = user;
    double p[MAX_PARAMS];
    for (int i = 0; i < s->np; i++)
        p[i] = gsl_vector_get(x, (size_t)i);
    return objective_grad(s, p, NULL);
}

/* Evaluate a starting candidate; bfgs keeps the three best distinct ones as starts. */
static double eval_p(search *s, const double *p)
{
    double f = objective_grad(s, p, NULL);
    if (!s->g || !(f < PENALTY))
        return f;
    for (int i = 0; i < s->nstart; i++)
        if (s->start_f[i] == f)
            return f; /* the same point again */
    int at;
    if (s->nstart < 3) {
        at = s->nstart++;
    } else {
        if (!(f < s->start_f[2]))
            return f;
        at = 2;
    }
    s->start_f[at] = f;
    memcpy(s->start_p[at], p, sizeof(double) * (size_t)s->np);
    for (int i = at; i > 0 && s->start_f[i] < s->start_f[i - 1]; i--) {
        double tf = s->start_f[i];
        s->start_f[i] = s->start_f[i - 1];
        s->start_f[i - 1] = tf;
        double tp[MAX_PARAMS];
        memcpy(tp, s->start_p[i], sizeof(double) * (size_t)s->np);
        memcpy(s->start_p[i], s->start_p[i - 1], sizeof(double) * (size_t)s->np);
        memcpy(s->start_p[i - 1], tp, sizeof(double) * (size_t)s->np);
    }
    return f;
}

/* ---- starting points ---- */

/* The coarse scan (restart 0). */
static void scan(search *s, const hdp_design_result *hints, int nhints)
{
    const hdp_model *m = s->base;
    double p[MAX_PARAMS];
    int cl = s->np - 1; /* index of log c with tune_clip */
    const double cfac[] = {0.25, 0.5, 1.0, 2.0, 4.0};
    int nc = s->tune_clip ? 5 : 1;
    for (int ic = 0; ic < nc; ic++) {
        double c = s->tune_clip ? m->c * cfac[ic] : m->c;
        if (s->tune_clip) {
            if (!isfinite(c)) c = 1.0 * cfac[ic];
            p[cl] = log(c);
        }
        switch (s->family) {
        case HDP_FAMILY_OUTPUT:
        case HDP_FAMILY_LINEAR_NOISE:
            /* eta~0 gamma/2 on a log grid from 1e-5 to 0.98 */
            for (int i = 0; i < 24; i++) {
                p[0] = logit(1e-5 * pow(0.98 / 1e-5, i / 23.0));
                eval_p(s, p);
            }
            break;
        case HDP_FAMILY_OPTIMAL:
            /* a from gamma/30 to 100, eta~(0) gamma/2 from 1e-4 to 0.9 */
            for (int i = 0; i < 10; i++)
                for (int j = 0; j < 8; j++) {
                    double a = (m->gamma / 30.0) * pow(100.0 * 30.0 / m->gamma, i / 9.0);
                    p[1] = log(a);
                    p[0] = logit(1e-4 * pow(0.9 / 1e-4, j / 7.0));
                    eval_p(s, p);
                }
            break;
        case HDP_FAMILY_PL: {
            /* shapes c1/(t_i + a), a in {0.03, 0.3, inf}, scaled over eta~(0) */
            const double shapes[] = {0.03, 0.3, INFINITY};
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 8; j++) {
                    double u = 1e-4 * pow(0.9 / 1e-4, j / 7.0);
                    p[0] = logit(u);
                    for (int i = 1; i < s->K; i++) {
                        double ti = (double)i / (s->K - 1), tp = (double)(i - 1) / (s->K - 1);
                        double ratio = isinf(shapes[k]) ? 1.0 : (tp + shapes[k]) / (ti + shapes[k]);
                        p[i] = ratio_param(s, ratio);
                    }
                    eval_p(s, p);
                }
            break;
        }
        default: break;
        }
    }
    /* earlier results sampled at the knots (pl only) */
    for (int h = 0; s->family == HDP_FAMILY_PL && h < nhints; h++) {
        double prev = 0;
        for (int i = 0; i < s->K; i++) {
            double t = (double)i / (s->K - 1);
            double e = hdp_design_eta(&hints[h], t);
            if (i == 0) {
                p[0] = logit(e * m->gamma / 2.0);
            } else {
                p[i] = ratio_param(s, prev > 0 ? e / prev : 1e-12);
            }
            prev = e > 0 ? e : 1e-300;
        }
        if (s->tune_clip)
            p[cl] = log(hints[h].c);
        eval_p(s, p);
    }
    report(s, 0);
}

/* One Nelder-Mead round from best_p with initial steps `step`. */
static void nelder_mead(search *s, double step)
{
    size_t n = (size_t)s->np;
    gsl_vector *x = gsl_vector_alloc(n), *ss = gsl_vector_alloc(n);
    gsl_multimin_fminimizer *mm = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, n);
    if (!x || !ss || !mm)
        goto out;
    for (size_t i = 0; i < n; i++) {
        gsl_vector_set(x, i, s->best_p[i]);
        gsl_vector_set(ss, i, step);
    }
    gsl_multimin_function F = {objective, n, s};
    if (gsl_multimin_fminimizer_set(mm, &F, x, ss) != GSL_SUCCESS)
        goto out;
    long max_iter = 400L * (long)n;
    for (long it = 0; it < max_iter && s->solves < s->max_solves; it++) {
        if (gsl_multimin_fminimizer_iterate(mm) != GSL_SUCCESS)
            break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(mm), 1e-4) == GSL_SUCCESS)
            break;
    }
out:
    if (mm) gsl_multimin_fminimizer_free(mm);
    if (x) gsl_vector_free(x);
    if (ss) gsl_vector_free(ss);
}

/* ---- the gradient method ---- */

static void fdf_df(const gsl_vector *x, void *user, gsl_vector *gv);

static void fdf_fdf(const gsl_vector *x, void *user, double *f, gsl_vector *gv)
{
    search *s = user;
    double p[MAX_PARAMS], gr[MAX_PARAMS];
    for (int i = 0; i < s->np; i++)
        p[i] = gsl_vector_get(x, (size_t)i);
    *f = objective_grad(s, p, gr);
    for (int i = 0; i < s->np; i++)
        gsl_vector_set(gv, (size_t)i, gr[i]);
}

static void fdf_df(const gsl_vector *x, void *user, gsl_vector *gv)
{
    double f;
    fdf_fdf(x, user, &f, gv);
}

/* One BFGS run (gsl vector_bfgs2) from p; p and *f become its end point and value. It ends
 * when the line search makes no progress, the gradient is below 1e-10 |f|, or the solve
 * budget is spent. */
static void bfgs_round(search *s, double *p, double *f)
{
    size_t n = (size_t)s->np;
    gsl_vector *x = gsl_vector_alloc(n);
    gsl_multimin_fdfminimizer *mm = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, n);
    if (!x || !mm)
        goto out;
    for (size_t i = 0; i < n; i++)
        gsl_vector_set(x, i, p[i]);
    gsl_multimin_function_fdf F = {objective, fdf_df, fdf_fdf, n, s};
    if (gsl_multimin_fdfminimizer_set(mm, &F, x, 0.5, 0.1) != GSL_SUCCESS)
        goto out;
    long max_iter = 200L * (long)n + 1000;
    for (long it = 0; it < max_iter && s->solves < s->max_solves; it++) {
        if (gsl_multimin_fdfminimizer_iterate(mm) != GSL_SUCCESS)
            break;
        double fv = gsl_multimin_fdfminimizer_minimum(mm);
        if (gsl_multimin_test_gradient(gsl_multimin_fdfminimizer_gradient(mm), 1e-10 * fabs(fv)) ==
            GSL_SUCCESS)
            break;
    }
    double fv = gsl_multimin_fdfminimizer_minimum(mm);
    if (fv <= *f) {
        const gsl_vector *xm = gsl_multimin_fdfminimizer_x(mm);
        for (size_t i = 0; i < n; i++)
            p[i] = gsl_vector_get(xm, i);
        *f = fv;
    }
out:
    if (mm) gsl_multimin_fdfminimizer_free(mm);
    if (x) gsl_vector_free(x);
}

/* BFGS from each start, restarted (a fresh Hessian estimate) while a round gains more than
 * 1e-10 relative, at most max_restarts rounds per start. */
static void bfgs_search(search *s, double (*starts)[MAX_PARAMS], const double *start_f, int nstarts)
{
    for (int k = 0; k < nstarts && s->solves < s->max_solves; k++) {
        double p[MAX_PARAMS], f = start_f[k];
        memcpy(p, starts[k], sizeof(double) * (size_t)s->np);
        for (int r = 1; r <= (s->opt->max_restarts > 0 ? s->opt->max_restarts : 1) &&
                        s->solves < s->max_solves; r++) {
            double before = f;
            s->restart++;
            bfgs_round(s, p, &f);
            report(s, 0);
            if (!(before - f > 1e-10 * fabs(f)))
                break;
        }
    }
}

/* The pl start at K knots from an earlier pl result (its schedule at the new knots). */
static void pl_start_from(const search *s, const hdp_design_result *prev, double *p)
{
    double e_prev = 0;
    for (int i = 0; i < s->K; i++) {
        double t = i == s->K - 1 ? 1.0 : (double)i / (double)(s->K - 1);
        double e = hdp_design_eta(prev, t);
        if (i == 0)
            p[0] = logit(e * s->base->gamma / 2.0);
        else
            p[i] = ratio_param(s, e_prev > 0 ? e / e_prev : 1e-12);
        e_prev = e > 0 ? e : 1e-300;
    }
    if (s->tune_clip)
        p[s->np - 1] = log(prev->c);
}

/* ---- tables (docs/theory.md §5, kind = table) ---- */

/* Knots of the written table: uniform (output), dense near t = 1 (linear-noise, where
 * sqrt(1 - t) bends), geometric in t + a (optimal, where c1/(t + a) bends on the scale a),
 * the K knots themselves (pl, exact). */
static hdp_status make_table(hdp_design_result *r, long N, hdp_error *err)
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
    t = clampd(t, 0.0, 1.0);
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
    *out = *base;
    out->table_t = out->table_eta = out->file_lambda = NULL;
    out->table_len = 0;
    out->file_len = 0;
    if (base->file_lambda && base->file_len > 0) {
        out->file_lambda = malloc(sizeof(double) * (size_t)base->file_len);
        if (!out->file_lambda)
            return hdp_fail(err, HDP_ENOMEM, "out of memory copying the spectrum");
        memcpy(out->file_lambda, base->file_lambda, sizeof(double) * (size_t)base->file_len);
        out->file_len = base->file_len;
    }
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
        apply(out, r, out->table_t, out->table_eta);
    }
    return HDP_OK;
}

/* final_risk of the ODE of a design result at the model's own [ode] settings (docs/theory.md §3) */
static hdp_status solve_at_model(const hdp_model *m, const hdp_design_result *r, int use_table,
                                 double *risk, hdp_error *err)
{
    hdp_model mm;
    hdp_status st = hdp_design_model(m, r, use_table, &mm, err);
    if (st != HDP_OK)
        return st;
    hdp_ode_result o;
    st = hdp_ode_solve(&mm, &o, err);
    if (st == HDP_OK)
        *risk = o.final_risk;
    hdp_ode_result_free(&o);
    hdp_model_free(&mm);
    return st;
}

/* the steps of hdp_design_optimize, after it */
static hdp_status check_request(hdp_design_family family, const hdp_design_options *opt,
                                hdp_error *err);
static search *search_new(const hdp_model *m, hdp_design_family family,
                          const hdp_design_options *opt);
static int cancel_asked(const hdp_design_options *opt);
static hdp_status search_simplex(search *s, const hdp_design_result *hints, int nhints,
                                 hdp_error *err);
static hdp_status search_bfgs(search *s, const hdp_model *m, const hdp_design_result *hints,
                              int nhints, hdp_design_result *res, hdp_error *err);
static hdp_status finish(const search *s, const hdp_model *m, double t0, hdp_design_result *res,
                         hdp_error *err);

/* check, search (simplex or bfgs, hdp_design_options), finish */
hdp_status hdp_design_optimize(const hdp_model *m, hdp_design_family family,
                               const hdp_design_options *opt, const hdp_design_result *hints,
                               int nhints, hdp_design_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, res);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    memset(res, 0, sizeof *res);
    res->family = family;
    hdp_status st = check_request(family, opt, err);
    if (st != HDP_OK)
        return st;
    search *s = search_new(m, family, opt);
    if (!s)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    double t0 = now_seconds();
    hdp_gsl_quiet();
    if (opt->method == HDP_DESIGN_SIMPLEX)
        st = search_simplex(s, hints, nhints, err);
    else
        st = search_bfgs(s, m, hints, nhints, res, err);
    if (st == HDP_OK && cancel_asked(opt))
        st = hdp_fail(err, HDP_ECANCELLED, "%s family: cancelled during the search",
                      hdp_design_family_name(family));
    if (st == HDP_OK)
        st = finish(s, m, t0, res, err);
    if (s->g) {
        hdp_ode_grad_free(s->g);
        free(s->g);
    }
    free(s);
    return st;
}

/* hdp_design_optimize's argument checks (after its NULL checks and the model's) */
static hdp_status check_request(hdp_design_family family, const hdp_design_options *opt,
                                hdp_error *err)
{
    if (family < 0 || family >= HDP_FAMILY_COUNT)
        return hdp_fail(err, HDP_EINPUT, "unknown schedule family %d", (int)family);
    if (opt->method != HDP_DESIGN_BFGS && opt->method != HDP_DESIGN_SIMPLEX)
        return hdp_fail(err, HDP_EINPUT, "unknown design method %d", (int)opt->method);
    if (opt->refine && !(opt->refine_tol > 0))
        return hdp_fail(err, HDP_EINPUT, "refine: tolerance %g; expected a positive number",
                        opt->refine_tol);
    if (family == HDP_FAMILY_PL && (opt->knots < 2 || opt->knots > HDP_DESIGN_MAX_KNOTS))
        return hdp_fail(err, HDP_EINPUT, "pl family: K = %d knots; expected 2 to %d", opt->knots,
                        HDP_DESIGN_MAX_KNOTS);
    return HDP_OK;
}

/* The search's state for family at the search settings (NULL: out of memory). */
static search *search_new(const hdp_model *m, hdp_design_family family,
                          const hdp_design_options *opt)
{
    search *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->base = m;
    s->work = *m;
    s->work.points = 2;
    s->work.rtol = fmax(opt->search_rtol, m->rtol);
    s->family = family;
    s->K = opt->knots;
    s->tune_clip = opt->tune_clip;
    s->np = nparams(family, opt->knots, opt->tune_clip);
    s->max_solves = opt->max_solves > 0 ? opt->max_solves : 6000;
    s->best = INFINITY;
    s->opt = opt;
    return s;
}

static int cancel_asked(const hdp_design_options *opt) { return opt->cancel && *opt->cancel; }

/* after the scan: an error when the ODE failed at every candidate */
static hdp_status check_scan(const search *s, hdp_error *err)
{
    if (s->best < PENALTY)
        return HDP_OK;
    return hdp_fail(err, HDP_ENUMERIC,
                    "%s family: the ODE failed for every starting candidate (see `hdpsgd ode`)",
                    hdp_design_family_name(s->family));
}

/* method simplex: the scan, then Nelder-Mead rounds restarted from the best point with a
 * shrinking simplex. A cancellation ends it early (HDP_OK; the caller reports it). */
static hdp_status search_simplex(search *s, const hdp_design_result *hints, int nhints,
                                 hdp_error *err)
{
    const hdp_design_options *opt = s->opt;
    scan(s, hints, nhints);
    if (cancel_asked(opt))
        return HDP_OK;
    hdp_status st = check_scan(s, err);
    if (st != HDP_OK)
        return st;
    double prev = s->best, step = 1.0;
    for (int r = 1; r <= opt->max_restarts && s->solves < s->max_solves; r++) {
        s->restart = r;
        nelder_mead(s, step);
        report(s, 0);
        if (r >= 2 && prev - s->best <= 1e-6 * fabs(s->best))
            break;
        prev = s->best;
        step = fmax(0.05, step * 0.5);
    }
    return HDP_OK;
}

/* method bfgs: at each level (one without --refine) a scan (level 0) or the start from the
 * coarser level's optimum, then BFGS from the best starts; --refine (pl) doubles the knots'
 * segments until the search risk moves by less than refine_tol, recording each level in res.
 * A cancellation ends it early (HDP_OK; the caller reports it). */
static hdp_status search_bfgs(search *s, const hdp_model *m, const hdp_design_result *hints,
                              int nhints, hdp_design_result *res, hdp_error *err)
{
    const hdp_design_options *opt = s->opt;
    s->g = calloc(1, sizeof *s->g);
    hdp_design_result *level = calloc(1, sizeof *level);
    hdp_status st = HDP_OK;
    if (!s->g || !level) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory");
        goto done;
    }
    if ((st = hdp_ode_grad_init(s->g, m, err)) != HDP_OK)
        goto done;
    long budget = s->max_solves;
    int refine = opt->refine && s->family == HDP_FAMILY_PL;
    for (int lv = 0;; lv++) {
        s->best = INFINITY;
        s->nstart = 0;
        s->max_solves = s->solves + budget;
        if (lv == 0) {
            scan(s, hints, nhints);
        } else {
            double p[MAX_PARAMS];
            pl_start_from(s, level, p);
            eval_p(s, p);
        }
        if (cancel_asked(opt) || (st = check_scan(s, err)) != HDP_OK)
            goto done;
        bfgs_search(s, s->start_p, s->start_f, s->nstart);
        decode(s, s->best_p, level);
        if (!refine)
            break;
        res->level_knots[lv] = s->K;
        res->level_risk[lv] = s->best;
        res->levels = lv + 1;
        if (lv > 0 && fabs(res->level_risk[lv - 1] - s->best) <= opt->refine_tol * fabs(s->best))
            break;
        if (2 * s->K - 1 > HDP_DESIGN_MAX_KNOTS || lv + 1 >= HDP_DESIGN_MAX_LEVELS)
            break;
        s->K = 2 * s->K - 1;
        s->np = nparams(s->family, s->K, opt->tune_clip);
    }
done:
    free(level);
    return st;
}

/* The winner of the search into res, then its final risk and its table's at the model's own
 * settings. */
static hdp_status finish(const search *s, const hdp_model *m, double t0, hdp_design_result *res,
                         hdp_error *err)
{
    decode(s, s->best_p, res);
    res->search_risk = s->best;
    res->ode_solves = s->solves;
    res->seconds = now_seconds() - t0;
    hdp_status st = solve_at_model(m, res, 0, &res->final_risk, err);
    if (st == HDP_OK)
        st = make_table(res, s->opt->table_points, err);
    if (st == HDP_OK)
        st = solve_at_model(m, res, 1, &res->table_final_risk, err);
    return st;
}

/* ---- the privacy budget a family needs (docs/theory.md §5, §6) ---- */

typedef struct {
    const hdp_model *m;
    hdp_design_family family;
    hdp_design_options opt;
    double target;
    long solves;
    hdp_status st;
    hdp_error *err;
} rho_eq;

/* optimised final risk of the family at privacy rho = e^x, minus the target */
static double rho_eq_gap(double x, void *user)
{
    rho_eq *q = user;
    hdp_model mm = *q->m;
    mm.rho = exp(x);
    hdp_design_result r;
    hdp_status st = hdp_design_optimize(&mm, q->family, &q->opt, NULL, 0, &r, q->err);
    double v = st == HDP_OK ? r.final_risk - q->target : NAN;
    q->solves += r.ode_solves;
    if (st != HDP_OK && q->st == HDP_OK)
        q->st = st;
    hdp_design_result_free(&r);
    return v;
}

hdp_status hdp_design_rho_equivalent(const hdp_model *m, hdp_design_family family,
                                     const hdp_design_options *opt, double target, double *rho,
                                     long *solves, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, rho);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (!(target > 0) || isinf(m->rho))
        return hdp_fail(err, HDP_EINPUT, "rho equivalent: needs a positive target risk and a finite rho");
    rho_eq q = {m, family, *opt, target, 0, HDP_OK, err};
    q.opt.progress = NULL;
    q.opt.refine = 0;
    double lo = log(m->rho), flo = rho_eq_gap(lo, &q);
    double hi = lo, fhi = flo;
    *rho = NAN;
    if (q.st != HDP_OK)
        goto out;
    if (!(flo > 0)) {
        /* already as good at the model's rho: walk down */
        while (!(flo > 0) && lo > log(m->rho) - 30.0) {
            hi = lo, fhi = flo;
            lo -= log(4.0);
            flo = rho_eq_gap(lo, &q);
            if (q.st != HDP_OK) goto out;
        }
    } else {
        while (fhi > 0 && hi < log(m->rho) + log(1e4)) {
            lo = hi, flo = fhi;
            hi += log(4.0);
            fhi = rho_eq_gap(hi, &q);
            if (q.st != HDP_OK) goto out;
        }
        if (fhi > 0) {
            *rho = INFINITY; /* not even 10^4 rho reaches the target */
            goto out;
        }
    }
    if (!(flo > 0) || fhi > 0) {
        *rho = flo > 0 ? INFINITY : 0.0;
        goto out;
    }
    /* Brent on log rho, to 1e-4 relative in rho */
    gsl_function F = {rho_eq_gap, &q};
    gsl_root_fsolver *b = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!b) {
        q.st = hdp_fail(err, HDP_ENOMEM, "out of memory");
        goto out;
    }
    gsl_root_fsolver_set(b, &F, lo, hi);
    double x = 0.5 * (lo + hi);
    for (int it = 0; it < 60 && q.st == HDP_OK; it++) {
        if (gsl_root_fsolver_iterate(b) != GSL_SUCCESS)
            break;
        x = gsl_root_fsolver_root(b);
        double a = gsl_root_fsolver_x_lower(b), c = gsl_root_fsolver_x_upper(b);
        if (gsl_root_test_interval(a, c, 1e-4, 0) == GSL_SUCCESS)
            break;
    }
    gsl_root_fsolver_free(b);
    *rho = exp(x);
out:
    if (solves)
        *solves = q.solves;
    return q.st;
}

/* ---- rates (docs/theory.md §5) ---- */

double hdp_design_rate_theory(hdp_design_family f, double gamma, double rho)
{
    if (!(gamma > 0 && gamma < 1))
        return NAN;
    double L = log(1.0 / gamma);
    double priv = isinf(rho) ? 0.0 : 1.0 / (rho * rho);
    switch (f) {
    case HDP_FAMILY_OUTPUT: return gamma * L + gamma * gamma * L * L * priv;
    case HDP_FAMILY_LINEAR_NOISE:
        return gamma * pow(L, 2.0 / 3.0) + gamma * gamma * pow(L, 4.0 / 3.0) * priv;
    case HDP_FAMILY_OPTIMAL:
    case HDP_FAMILY_PL: return gamma + gamma * gamma * priv;
    default: return NAN;
    }
}

double hdp_loglog_slope(const double *x, const double *y, long n)
{
    if (!x || !y)
        return NAN;
    if (n < 2)
        return NAN;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (long i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0))
            return NAN;
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    double den = (double)n * sxx - sx * sx;
    return den > 0 ? ((double)n * sxy - sx * sy) / den : NAN;
}
