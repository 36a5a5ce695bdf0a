/*
 * design_search.c — the searches of the designer on one family at fixed K: the objective
 * (hdp_ode_solve for simplex; the exact gradient of the differentiated Runge-Kutta
 * discretisation of core/ode_grad.h for bfgs, privacy noise and final-step noise included,
 * docs/theory.md §5.3), the coarse scan of starting points, Nelder-Mead
 * (gsl_multimin_fminimizer_nmsimplex2) restarted from the best point with a shrinking initial
 * simplex until a round gains less than 1e-6 relative (method simplex), and GSL's vector_bfgs2
 * from the three best distinct scan points, each restarted while a round gains more than 1e-10
 * relative (method bfgs). A candidate whose ODE fails numerically (HDP_ENUMERIC: the solver, or
 * on a data set the Newton solve for theta_c not converging) scores PENALTY; any other failure
 * of a solve (out of memory, ...) ends the search with that error.
 */
#include "drivers/design_internal.h"

#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void design_report(search *s, hdp_design_event e)
{
    if (s->opt->progress &&
        s->opt->progress(hdp_design_progress_what(s->family, e), s->solves, -1, s->best,
                         s->opt->progress_user))
        s->stop = 1; /* as opt->cancel from here on */
}

/* sigmoid'(p) / sigmoid(p) = 1 - sigmoid(p) inside the clamp of sigmoid, 0 outside */
static double dlog_sigmoid(double p)
{
    return (p > -60.0 && p < 30.0) ? 1.0 - design_sigmoid(p) : 0.0;
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
    design_decode(s, p, r);
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
    if (design_cancel_asked(s)) { /* end the scan and every round at once */
        if (!s->cancel_seen) { /* the solves really done, for the result */
            s->cancel_seen = 1;
            s->solves_done = s->solves;
        }
        s->solves = s->max_solves;
        return PENALTY;
    }
    if (s->fatal.status != HDP_OK) /* end the scan and every round */
        return PENALTY;
    double f = PENALTY;
    if (s->g) {
        f = fast_objective(s, p, grad);
    } else {
        hdp_design_result r;
        memset(&r, 0, sizeof r);
        design_decode(s, p, &r);
        design_apply(&s->work, &r, s->kt, s->ke);
        hdp_ode_result o;
        hdp_error err;
        hdp_error_clear(&err);
        hdp_status st = hdp_ode_solve(&s->work, &o, &err);
        if (st == HDP_OK && isfinite(o.final_risk))
            f = o.final_risk;
        else if (st != HDP_OK && st != HDP_ENUMERIC) {
            s->fatal = err;
            s->solves = s->max_solves;
        }
        hdp_ode_result_free(&o);
    }
    s->solves++;
    if (f < s->best) {
        s->best = f;
        memcpy(s->best_p, p, sizeof(double) * (size_t)s->np);
    }
    if (s->solves % 100 == 0)
        design_report(s, HDP_DESIGN_SOLVES);
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
double design_eval_p(search *s, const double *p)
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
void design_scan(search *s, const hdp_design_result *hints, int nhints)
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
                p[0] = design_logit(1e-5 * pow(0.98 / 1e-5, i / 23.0));
                design_eval_p(s, p);
            }
            break;
        case HDP_FAMILY_OPTIMAL:
            /* a from gamma/30 to 100, eta~(0) gamma/2 from 1e-4 to 0.9 */
            for (int i = 0; i < 10; i++)
                for (int j = 0; j < 8; j++) {
                    double a = (m->gamma / 30.0) * pow(100.0 * 30.0 / m->gamma, i / 9.0);
                    p[1] = log(a);
                    p[0] = design_logit(1e-4 * pow(0.9 / 1e-4, j / 7.0));
                    design_eval_p(s, p);
                }
            break;
        case HDP_FAMILY_PL: {
            /* shapes c1/(t_i + a), a in {0.03, 0.3, inf}, scaled over eta~(0) */
            const double shapes[] = {0.03, 0.3, INFINITY};
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 8; j++) {
                    double u = 1e-4 * pow(0.9 / 1e-4, j / 7.0);
                    p[0] = design_logit(u);
                    for (int i = 1; i < s->K; i++) {
                        double ti = (double)i / (s->K - 1), tp = (double)(i - 1) / (s->K - 1);
                        double ratio = isinf(shapes[k]) ? 1.0 : (tp + shapes[k]) / (ti + shapes[k]);
                        p[i] = design_ratio_param(s, ratio);
                    }
                    design_eval_p(s, p);
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
                p[0] = design_logit(e * m->gamma / 2.0);
            } else {
                p[i] = design_ratio_param(s, prev > 0 ? e / prev : 1e-12);
            }
            prev = e > 0 ? e : 1e-300;
        }
        if (s->tune_clip)
            p[cl] = log(hints[h].c);
        design_eval_p(s, p);
    }
    design_report(s, HDP_DESIGN_SCAN);
}

/* One Nelder-Mead round from best_p with initial steps `step`. */
void design_nelder_mead(search *s, double step)
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
void design_bfgs_search(search *s, double (*starts)[MAX_PARAMS], const double *start_f, int nstarts)
{
    for (int k = 0; k < nstarts && s->solves < s->max_solves; k++) {
        double p[MAX_PARAMS], f = start_f[k];
        memcpy(p, starts[k], sizeof(double) * (size_t)s->np);
        for (int r = 1; r <= (s->opt->max_restarts > 0 ? s->opt->max_restarts : 1) &&
                        s->solves < s->max_solves; r++) {
            double before = f;
            s->restart++;
            bfgs_round(s, p, &f);
            design_report(s, HDP_DESIGN_ROUND);
            if (!(before - f > 1e-10 * fabs(f)))
                break;
        }
    }
}

int design_cancel_asked(const search *s)
{
    return s->stop || (s->opt->cancel && *s->opt->cancel);
}

/* after the scan: an error when the ODE failed at every candidate */
hdp_status design_check_scan(const search *s, hdp_error *err)
{
    if (s->best < PENALTY)
        return HDP_OK;
    return hdp_fail(err, HDP_ENUMERIC,
                    "%s family: the ODE failed for every starting candidate (see `hdpsgd ode`)",
                    hdp_design_family_name(s->family));
}

/* a solve's failure that ended the search (s->fatal), as the search's error */
static hdp_status search_fatal(const search *s, hdp_error *err)
{
    if (s->fatal.status == HDP_OK)
        return HDP_OK;
    return hdp_fail(err, s->fatal.status, "%s family: %s", hdp_design_family_name(s->family),
                    s->fatal.msg);
}

/* method simplex: the scan, then Nelder-Mead rounds restarted from the best point with a
 * shrinking simplex. A cancellation ends it early (HDP_OK; the caller reports it). */
hdp_status design_search_simplex(search *s, const hdp_design_result *hints, int nhints,
                                 hdp_error *err)
{
    const hdp_design_options *opt = s->opt;
    design_scan(s, hints, nhints);
    if (design_cancel_asked(s))
        return HDP_OK;
    hdp_status st = search_fatal(s, err);
    if (st == HDP_OK)
        st = design_check_scan(s, err);
    if (st != HDP_OK)
        return st;
    double prev = s->best, step = 1.0;
    for (int r = 1; r <= opt->max_restarts && s->solves < s->max_solves; r++) {
        s->restart = r;
        design_nelder_mead(s, step);
        design_report(s, HDP_DESIGN_ROUND);
        if (r >= 2 && prev - s->best <= 1e-6 * fabs(s->best))
            break;
        prev = s->best;
        step = fmax(0.05, step * 0.5);
    }
    return search_fatal(s, err);
}
