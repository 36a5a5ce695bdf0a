/*
 * design_compare.c — comparing families against the optimum: the privacy budget a family
 * needs to match a target risk (hdp_design_rho_equivalent, docs/theory.md §5, §6), the
 * theory's rates of the families and least-squares log-log slopes (docs/theory.md §5).
 */
#include "drivers/design_internal.h"
#include "hdpsgd/rates.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    char rho[32];
    snprintf(rho, sizeof rho, "%.17g", exp(x)); /* reads back to the same double */
    hdp_model mm; /* the model at this rho, its rho_zcdp and epsilon derived from it */
    hdp_status st = hdp_model_with(q->m, "privacy.rho", rho, &mm, q->err);
    hdp_design_result r;
    memset(&r, 0, sizeof r);
    if (st == HDP_OK)
        st = hdp_design_optimize(&mm, q->family, &q->opt, NULL, 0, &r, q->err);
    double v = st == HDP_OK ? r.final_risk - q->target : NAN;
    q->solves += r.ode_solves;
    if (st != HDP_OK && q->st == HDP_OK)
        q->st = st;
    hdp_design_result_free(&r);
    hdp_model_free(&mm);
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
    hdp_gsl_quiet(); /* a failed allocation returns NULL, never aborts (issue 29) */
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
    double r1, r2; /* the rate's two terms (NaN outside 0 < gamma < 1 or for no family) */
    hdp_rates_terms(f, gamma, rho, &r1, &r2);
    return r1 + r2;
}

double hdp_loglog_slope(const double *x, const double *y, long n)
{
    if (!x || !y || n < 2)
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
