/*
 * risk_ode.c — the risk ODE's right-hand side, Jacobian, bounds, final-iterate noise and
 * knot stops, written once for its methods (see risk_ode.h; docs/theory.md §3).
 *
 * Compiled without floating-point contraction (as ode_erk.c): the bits of every method
 * are the same on every CPU.
 */
#include "core/risk_ode.h"
#include "core/schedule_kinds.h"
#include "hdpsgd/dataset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hdp_rode_init_parts(hdp_risk_ode *o, const hdp_spectrum *sp, double gamma, double rho,
                         double R0, const hdp_schedule *s, double c, hdp_clip *clip)
{
    *o = (hdp_risk_ode){.m = sp->m, .lambda = sp->bin_lambda, .w = sp->bin_weight,
                        .lmin = sp->lambda_min, .lmax = sp->lambda_max, .gamma = gamma, .c = c,
                        .rho = rho, .R0 = hdp_spectrum_risk0(sp, R0), .D0 = sp->bin_energy,
                        .qf = isinf(rho) ? 0.0 : 2.0 * c * c * gamma * gamma, .sched = *s,
                        .clip = clip};
}

typedef struct {
    double l;
    long b;
} bin_key;

static int cmp_bin(const void *a, const void *b)
{
    double x = ((const bin_key *)a)->l, y = ((const bin_key *)b)->l;
    return (x > y) - (x < y);
}

/* The bin nearest to eigenvalue l, by bisection on the bins sorted by eigenvalue (key). */
static long nearest_bin(const bin_key *key, long m, double l)
{
    long lo = 0, hi = m - 1;
    while (hi - lo > 1) {
        long mid = (lo + hi) / 2;
        if (key[mid].l <= l)
            lo = mid;
        else
            hi = mid;
    }
    return fabs(key[lo].l - l) <= fabs(key[hi].l - l) ? key[lo].b : key[hi].b;
}

/* sp's bins sorted by eigenvalue into key (for nearest_bin) */
static void sort_bins(const hdp_spectrum *sp, bin_key *key)
{
    for (long b = 0; b < sp->m; b++)
        key[b] = (bin_key){sp->bin_lambda[b], b};
    qsort(key, (size_t)sp->m, sizeof(bin_key), cmp_bin);
}

/* the eigendirection nearest to bin b's eigenvalue (the first of equals), for a bin that
 * holds none */
static long nearest_direction(const hdp_spectrum *sp, long b)
{
    long jn = 0;
    for (long j = 1; j < sp->d; j++)
        if (fabs(sp->lambda[j] - sp->bin_lambda[b]) < fabs(sp->lambda[jn] - sp->bin_lambda[b]))
            jn = j;
    return jn;
}

/* ode.discrete (docs/theory.md §3.6, §9.5): the one-step term's weight 1/n and its k_b per bin:
 * 2 (Gaussian rows), or on a data set the mean over the eigendirections nearest to the bin's
 * eigenvalue of k_j = E[x_j^4]/lambda_j^2 - 1, weighted by lambda_j^2 (the term's weight; one
 * bin per distinct eigenvalue, a data set's default, holds exactly its own directions), a bin
 * without one taking its nearest direction's. */
static hdp_status disc_init(hdp_risk_ode *o, const hdp_model *m, const hdp_spectrum *sp,
                            hdp_error *err)
{
    if (!m->ode_discrete)
        return HDP_OK;
    long mb = o->m, d = sp->d;
    o->kdisc = malloc(sizeof(double) * (size_t)(mb > 0 ? mb : 1));
    double *kd = NULL, *wsum = NULL;
    bin_key *idx = NULL;
    int data = hdp_model_data(m) != NULL;
    if (data) {
        kd = malloc(sizeof(double) * (size_t)d);
        wsum = calloc((size_t)mb, sizeof(double));
        idx = malloc(sizeof(bin_key) * (size_t)mb);
    }
    hdp_status st = HDP_OK;
    if (!o->kdisc || (data && (!kd || !wsum || !idx))) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for ode.discrete's %ld coefficients", mb);
        goto done;
    }
    o->disc = 1.0 / (double)m->n;
    for (long b = 0; b < mb; b++)
        o->kdisc[b] = 2.0;
    if (data) {
        hdp_data_kurtosis(m, kd);
        sort_bins(sp, idx);
        memset(o->kdisc, 0, sizeof(double) * (size_t)mb);
        for (long j = 0; j < d; j++) {
            long b = nearest_bin(idx, mb, sp->lambda[j]);
            double w2 = sp->lambda[j] * sp->lambda[j];
            o->kdisc[b] += w2 * kd[j];
            wsum[b] += w2;
        }
        for (long b = 0; b < mb; b++) /* no direction: the nearest one's */
            o->kdisc[b] = wsum[b] > 0 ? o->kdisc[b] / wsum[b] : kd[nearest_direction(sp, b)];
    }
    o->kmin = o->kmax = o->kdisc[0];
    for (long b = 1; b < mb; b++) {
        o->kmin = fmin(o->kmin, o->kdisc[b]);
        o->kmax = fmax(o->kmax, o->kdisc[b]);
    }
done:
    free(kd);
    free(wsum);
    free(idx);
    return st;
}

int hdp_rode_wants_direction(const hdp_model *m)
{
    const hdp_data *data = hdp_model_data(m);
    if (!data)
        return 0;
    if (m->ode_clip_weights == HDP_CLIPW_AUTO) /* docs/theory.md §9.5: direction-noise for a
                                                  planted target where it applies, else norm */
        return data->planted && m->batch == 1 && !m->ode_discrete &&
                       m->ode_solver != HDP_ODE_DOP853
                   ? 2
                   : 0;
    return m->ode_clip_weights == HDP_CLIPW_DIRECTION         ? 1
           : m->ode_clip_weights == HDP_CLIPW_DIRECTION_NOISE ? 2
                                                              : 0;
}

hdp_status hdp_rode_weights_check(const hdp_model *m, hdp_error *err)
{
    if (m->ode_clip_weights != HDP_CLIPW_DIRECTION &&
        m->ode_clip_weights != HDP_CLIPW_DIRECTION_NOISE)
        return HDP_OK;
    const char *why = !hdp_model_data(m) ? "data.source = file (the rows' norm groups)"
                      : m->ode_discrete ? "ode.discrete = false (its one-step term is the "
                                          "diagonal of the rows' fourth moments, which the "
                                          "direction weights of the noise already carry)"
                      : m->batch > 1 ? "sgd.batch = 1"
                      : m->ode_solver == HDP_ODE_DOP853 ? "solver = cvode or auto (DOP853's "
                                                          "stages are polynomials in lambda of "
                                                          "scalar factors)"
                                                        : NULL;
    if (!why)
        return HDP_OK;
    return hdp_model_fail_key(m, "ode", "clip_weights", err,
                              "clip_weights = %s needs %s; accepted otherwise: norm or auto",
                              m->ode_clip_weights == HDP_CLIPW_DIRECTION ? "direction"
                                                                         : "direction-noise",
                              why);
}

hdp_status hdp_rode_direction_weights(const hdp_spectrum *sp, const hdp_clip *clip,
                                      int noise_only, double **wa, double **wb, int *ng,
                                      hdp_error *err)
{
    long mb = sp->m, d = clip->dir_d;
    int G = clip->ngroups; /* (a[] sums w, then is overwritten by the weights) */
    *wa = *wb = NULL;
    *ng = 0;
    if (G < 1 || d != sp->d || G > HDP_CLIP_ROW_GROUPS)
        return hdp_fail(err, HDP_EINPUT, "ode.clip_weights = direction: the clipping factors "
                        "are not those of the data set's %ld rows' groups", sp->d);
    double *a = calloc((size_t)(mb * G), sizeof(double)), *b = malloc(sizeof(double) * (size_t)(mb * G));
    long *cnt = calloc((size_t)mb, sizeof(long));
    bin_key *idx = malloc(sizeof(bin_key) * (size_t)mb);
    if (!a || !b || !cnt || !idx) {
        free(a);
        free(b);
        free(cnt);
        free(idx);
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the direction weights of %ld bins",
                        mb);
    }
    sort_bins(sp, idx);
    /* each direction to the bin nearest its eigenvalue (one bin per distinct eigenvalue, a
     * data set's default: exactly its own); a bin holds the mean of its directions' weights */
    for (long j = 0; j < d; j++) {
        long k = nearest_bin(idx, mb, sp->lambda[j]);
        cnt[k]++;
        for (int g = 0; g < G; g++)
            a[k * G + g] += clip->dirw[j * G + g];
    }
    for (long k = 0; k < mb; k++) {
        long jn = cnt[k] ? 0 : nearest_direction(sp, k); /* a bin without a direction */
        for (int g = 0; g < G; g++) {
            double w = cnt[k] ? a[k * G + g] / (double)cnt[k] : clip->dirw[jn * G + g];
            a[k * G + g] = clip->gp[g] * (noise_only ? clip->gw[g] : w);
            b[k * G + g] = clip->gp[g] * w * clip->gw[g];
        }
    }
    free(cnt);
    free(idx);
    *wa = a;
    *wb = b;
    *ng = G;
    return HDP_OK;
}

/* the batch's kappa, ode.discrete's coefficients and ode.clip_weights = direction on o's own
 * weights */
static hdp_status finish_init(hdp_risk_ode *o, const hdp_model *m, const hdp_spectrum *sp,
                              hdp_error *err)
{
    o->kappa = hdp_rode_kappa(m);
    hdp_status st = disc_init(o, m, sp, err);
    if (st != HDP_OK || !hdp_rode_wants_direction(m))
        return st;
    st = hdp_rode_weights_check(m, err);
    if (st == HDP_OK)
        st = hdp_rode_direction_weights(sp, o->clip, hdp_rode_wants_direction(m) == 2, &o->wa,
                                        &o->wb, &o->ng, err);
    o->owns_w = 1;
    return st;
}

hdp_status hdp_rode_init(hdp_risk_ode *o, const hdp_model *m, const hdp_spectrum *sp,
                         hdp_clip *clip, hdp_error *err)
{
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    int own = !clip;
    if (own && !(clip = hdp_clip_alloc_fitted(m, m->c, err)))
        return err ? err->status : HDP_ENOMEM;
    hdp_rode_init_parts(o, sp, m->gamma, m->rho, 0.5 * m->target_radius * m->target_radius, &s,
                        m->c, clip);
    o->owns_clip = own;
    return finish_init(o, m, sp, err);
}

hdp_status hdp_rode_init_problem(hdp_risk_ode *o, const hdp_problem *pb, const hdp_spectrum *sp,
                                 hdp_error *err)
{
    const hdp_model *m = pb->model;
    hdp_rode_init_parts(o, sp, m->gamma, m->rho, 0.5 * m->target_radius * m->target_radius,
                        &pb->sched, m->c, pb->clip);
    return finish_init(o, m, sp, err);
}

void hdp_rode_free(hdp_risk_ode *o)
{
    if (!o)
        return;
    if (o->owns_clip)
        hdp_clip_free(o->clip);
    free(o->kdisc);
    if (o->owns_w) {
        free(o->wa);
        free(o->wb);
    }
    memset(o, 0, sizeof *o);
}

int hdp_rode_rhs(const hdp_risk_ode *o, const hdp_rode_coef *cf, const double *y, double *f)
{
    const double *lambda = o->lambda;
    if (cf->ng) { /* ode.clip_weights = direction: each bin its own factors */
        hdp_rode_coef cb;
        for (long j = 0; j < o->m; j++) {
            f[j] = hdp_rode_f(lambda[j], y[j], hdp_rode_bin(o, cf, j, &cb));
            if (!isfinite(f[j]))
                return -1;
        }
        return 0;
    }
    const hdp_rode_coef c = *cf; /* a copy f cannot alias: kept in registers */
    for (long j = 0; j < o->m; j++) {
        f[j] = hdp_rode_f(lambda[j], y[j], &c);
        if (c.disc != 0.0) /* ode.discrete (0: skipped, the bits of the paper's ODE) */
            f[j] += hdp_rode_disc_a(o, j, &c) * y[j];
        if (!isfinite(f[j]))
            return -1;
    }
    return 0;
}

double hdp_rode_kappa(const hdp_model *m)
{
    return m->batch > 1 ? (double)(m->batch - 1) / (double)m->n : 0.0;
}

/* The batch's terms of a bound (docs/theory.md §3.11): summed over the bins they are
 * -kappa eta~^2 mu^2 sum_j w_j lambda_j^3 D_j + kappa gamma eta~^3 mu V sum_j w_j lambda_j^3
 * + kappa eta~ mu q sum_j w_j lambda_j^2, and lambda_min^2 R <= sum_j w_j lambda_j^3 D_j <=
 * lambda_max^2 R, 1 <= sum_j w_j lambda_j^3 <= lambda_max^2, 1 <= sum_j w_j lambda_j^2 <=
 * lambda_max. Their value (jac = 0) or R-derivative (jac = 1) at Rb. */
static double bound_batch(const hdp_risk_ode *o, const hdp_rode_step *st, int lower, double Rb,
                          const hdp_clip_values *cv, int jac)
{
    double eta = st->eta, k2 = o->kappa * eta * eta, g = o->gamma;
    double ld = lower ? o->lmax * o->lmax : o->lmin * o->lmin;
    double ln = lower ? 1.0 : o->lmax * o->lmax, l2 = lower ? 1.0 : o->lmax;
    double kq = o->kappa * eta * st->q * l2;
    if (!jac)
        return -k2 * cv->mu * cv->mu * ld * Rb + k2 * g * eta * cv->mu * cv->V * ln + kq * cv->mu;
    return -k2 * ld * (2.0 * cv->mu * cv->dmu * Rb + cv->mu * cv->mu) +
           k2 * g * eta * (cv->dmu * cv->V + cv->mu * cv->dV) * ln + kq * cv->dmu;
}

/* ode.discrete's coefficient of a bound: disc eta~^2 V_c' times kmax lambda_max^2 (upper) or
 * kmin lambda_min^2 (lower) */
static double disc_bound(const hdp_risk_ode *o, double eta, int lower, double dV)
{
    double l = lower ? o->lmin : o->lmax;
    return o->disc * eta * eta * dV * (lower ? o->kmin : o->kmax) * l * l;
}

/* The factors of a bound at Rb (derivs: with their R-derivatives): the scalar ones, or with
 * ode.clip_weights = direction the bins' extremes at Rb (upper: the smallest mu_j and the
 * largest V_j, lower: the reverse; each with its own bin's derivative), so that the bounds
 * stay bounds: sum_j w_j lambda_j^2 mu_j D_j >= lambda_min min_j mu_j R and
 * sum_j w_j lambda_j^2 V_j <= lambda_max max_j V_j (sum_j w_j lambda_j = 1), and the reverse. */
static void bound_factors(const hdp_risk_ode *o, double Rb, int lower, int derivs,
                          hdp_clip_values *cv)
{
    if (derivs)
        hdp_clip_eval(o->clip, Rb, cv);
    else
        hdp_clip_eval_values(o->clip, Rb, cv);
    if (!o->ng)
        return;
    hdp_rode_coef cf;
    cf.ng = hdp_clip_rows_groups(o->clip, Rb, derivs, cf.gmu, cf.gV, cf.gdmu, cf.gdV);
    cf.derivs = derivs;
    for (long j = 0; j < o->m; j++) {
        hdp_clip_values b;
        hdp_rode_bin_values(o, &cf, j, &b);
        if (j == 0 || (lower ? b.mu > cv->mu : b.mu < cv->mu)) {
            cv->mu = b.mu;
            cv->dmu = b.dmu;
        }
        if (j == 0 || (lower ? b.V < cv->V : b.V > cv->V)) {
            cv->V = b.V;
            cv->dV = b.dV;
        }
    }
}

double hdp_rode_bound_rhs(const hdp_risk_ode *o, const hdp_rode_step *st, int lower, double Rb)
{
    double eta = st->eta, g = o->gamma, f;
    hdp_clip_values cv;
    bound_factors(o, Rb, lower, o->disc > 0, &cv); /* with V_c' for ode.discrete */
    if (!lower)
        f = -2.0 * o->lmin * eta * cv.mu * Rb + o->lmax * g * eta * eta * cv.V + st->q;
    else
        f = -2.0 * o->lmax * eta * cv.mu * Rb + g * eta * eta * cv.V + st->q;
    if (o->disc > 0) /* sum_j w_j lambda_j k_j lambda_j^2 D_j in [kmin lmin^2, kmax lmax^2] R */
        f += disc_bound(o, eta, lower, cv.dV) * Rb;
    return o->kappa > 0 ? f + bound_batch(o, st, lower, Rb, &cv, 0) : f;
}

double hdp_rode_bound_jac(const hdp_risk_ode *o, const hdp_rode_step *st, int lower, double Rb)
{
    double eta = st->eta, g = o->gamma, j;
    hdp_clip_values cv;
    bound_factors(o, Rb, lower, 1, &cv);
    if (!lower)
        j = -2.0 * o->lmin * eta * (cv.dmu * Rb + cv.mu) + o->lmax * g * eta * eta * cv.dV;
    else
        j = -2.0 * o->lmax * eta * (cv.dmu * Rb + cv.mu) + g * eta * eta * cv.dV;
    if (o->disc > 0) /* V_c'' left out, as in the bins' Jacobian */
        j += disc_bound(o, eta, lower, cv.dV);
    return o->kappa > 0 ? j + bound_batch(o, st, lower, Rb, &cv, 1) : j;
}

double hdp_rode_final_noise(const hdp_risk_ode *o, double eta1)
{
    return isinf(o->rho) ? 0.0 : o->qf * eta1 * eta1 / (o->rho * o->rho);
}

double hdp_rode_stiffness(const hdp_risk_ode *o)
{
    return 2.0 * o->lmax * hdp_sched_integral(&o->sched);
}

double hdp_rode_next_knot(const hdp_risk_ode *o, int *next, double t)
{
    const double *kt;
    int len = hdp_sched_knots(&o->sched, &kt);
    if (*next < 1)
        *next = 1;
    while (*next < len - 1 && kt[*next] <= t + 1e-12)
        (*next)++;
    return *next < len - 1 ? kt[*next] : INFINITY;
}

hdp_status hdp_rode_auto_bins(const hdp_model *m, hdp_spectrum *spec, hdp_rode_trial trial,
                              void *ctx, hdp_error *err)
{
    long distinct = hdp_spectrum_distinct(spec);
    double prev = NAN;
    for (long k = 8; 2 * k < distinct && distinct > 64; k *= 2) {
        hdp_status st = hdp_spectrum_bin_log(spec, k, err);
        double r = NAN;
        if (st == HDP_OK)
            st = trial(ctx, spec, k, &r, err);
        if (st != HDP_OK)
            return st;
        if (isfinite(prev) && fabs(r - prev) <= m->spectrum_tol * fabs(r))
            return HDP_OK;
        prev = r;
    }
    /* not converged before reaching the distinct eigenvalues: use them all */
    hdp_spectrum_free(spec);
    return hdp_spectrum_build(m, spec, err);
}
