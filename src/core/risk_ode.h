/*
 * risk_ode.h — the risk ODE of docs/theory.md §3 as one object that its methods share
 * (internal; the shape of GSL's gsl_odeiv2_system with its step types, or of the one
 * right-hand side that SUNDIALS' CVODE, ERKStep and adjoint share):
 *
 *   dD_j/dt = lambda_j (alpha D_j + beta) + lambda_j^2 (alpha2 D_j + beta2) + q,
 *   R = sum_j w_j lambda_j D_j,   D_j(0) = R0,
 *   alpha = -2 eta~ mu_c(R),  beta = gamma eta~^2 V_c(R),  q = 2 c^2 gamma^2 sigma~^2,
 *   and for batched one pass (docs/theory.md §3.11; kappa = (B - 1)/n, 0 for B = 1, where
 *   these terms are skipped) beta += kappa eta~ mu_c q, alpha2 = -kappa eta~^2 mu_c^2,
 *   beta2 = kappa gamma eta~^3 mu_c V_c,
 *   dR_upper/dt = -2 lambda_min eta~ mu_c(Ru) Ru + lambda_max gamma eta~^2 V_c(Ru) + q,
 *   dR_lower/dt = -2 lambda_max eta~ mu_c(Rl) Rl +            gamma eta~^2 V_c(Rl) + q,
 * with ode.discrete (docs/theory.md §3.6, §9.5; disc = 1/n, else 0 and skipped) the bins gain the
 * one-step term disc eta~^2 V_c'(R) k_j lambda_j^2 D_j (k_j = 2 for Gaussian rows, a data set's
 * kurtosis minus 1 per eigendirection) and the bounds its extremes,
 * with ode.clip_weights = direction (docs/theory.md §9.3; a data set's rows in ng groups by norm)
 * every bin has its own factors mu_b(R) = sum_g wa_bg mu_g(R), V_b(R) = sum_g wb_bg V_g(R) in
 * alpha, beta (and the batch's terms), still functions of R alone, so that the Jacobian keeps
 * its form with u_j from the bin's mu', V'; the bounds take the bins' extremes at their R,
 * its Jacobian on the bins diag(a) + u v^T with a_j = lambda_j alpha + lambda_j^2 alpha2, u_j =
 * lambda_j (-2 eta~ mu' D_j + gamma eta~^2 V') + lambda_j^2 (ua2 D_j + ub2) and v_j = w_j lambda_j, the final-iterate
 * noise 2 c^2 gamma^2 eta~(1)^2 / rho^2 and the knots of the schedule where q jumps.
 *
 * Built once per problem (bins, schedule, clipping factors, gamma, c, rho, R0); the
 * methods are files of their own: CVODE (ode_cvode.c), DOP853 (ode_erk.c), the exact
 * gradient through RK4 (ode_grad.c); ode.c chooses the method and falls back. Every formula
 * is written here once; the methods only add their own discretisations and sums.
 */
#ifndef HDPSGD_CORE_RISK_ODE_H
#define HDPSGD_CORE_RISK_ODE_H

#include <math.h>

#include "core/clip_internal.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/error.h"
#include "hdpsgd/model.h"
#include "hdpsgd/ode.h"

#include "hdpsgd/problem.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"

typedef struct {
    long m;                   /* bins */
    const double *lambda, *w; /* [m] (borrowed from the spectrum) */
    double lmin, lmax;        /* extreme eigenvalues: the bounds' coefficients */
    double gamma, c, rho, R0; /* R0 = R(0) (sum_j w_j lambda_j D_j(0)) */
    const double *D0;         /* [m] D_j(0) of a target that is not uniform (borrowed from the
                                 spectrum's bin_energy); NULL: D_j(0) = R0 */
    double qf;                /* 2 c^2 gamma^2 (q = qf sigma~^2; 0 when rho = inf) */
    double kappa;             /* (B - 1)/n: the batch's terms (docs/theory.md §3.11); 0: B = 1 */
    double disc;              /* ode.discrete: 1/n, the one-step term's weight; 0: off */
    double *kdisc;            /* [m] k_b of the one-step term (owned; NULL: off) */
    double kmin, kmax;        /* their extremes: the bounds' coefficients */
    /* ode.clip_weights = direction (docs/theory.md §9.3): ng groups of rows (clip's, a
     * composite of clip_rows.c) and per bin b the drift's weights wa[b ng + g] = p_g wbar_bg
     * and the noise's wb[b ng + g] = p_g wbar_bg w_g (wbar_bg: the mean of E[x_j^2 | g] /
     * lambda_j over the bin's directions); ng = 0: the scalar factors of clip */
    int ng;
    double *wa, *wb;
    int owns_w;               /* wa, wb are o's (else borrowed: hdp_rode_set_weights) */
    hdp_schedule sched;
    hdp_clip *clip;           /* mu_c, V_c at c */
    int owns_clip;
} hdp_risk_ode;

/* ode.clip_weights's values (include/hdpsgd/model.h; the names in this order) */
enum { HDP_CLIPW_AUTO = 0, HDP_CLIPW_NORM, HDP_CLIPW_DIRECTION, HDP_CLIPW_DIRECTION_NOISE };

/* The scalars of one time t: eta~(t) and q(t). */
typedef struct {
    double eta, q;
} hdp_rode_step;

/* The scalars of one state: the clipping factors at R and the bins' coefficients alpha,
 * beta (and with the derivatives mu', V', the u_j's coefficients ua = -2 eta~ mu',
 * ub = gamma eta~^2 V'). */
typedef struct {
    double eta, q, mu, V, dmu, dV, alpha, beta, ua, ub;
    /* the batch's terms (kappa > 0; else 0): alpha2, beta2 and their R-derivatives
     * ua2 = -2 kappa eta~^2 mu mu', ub2 = kappa gamma eta~^3 (mu' V + mu V') */
    double alpha2, beta2, ua2, ub2;
    /* ode.discrete: disc eta~^2 V_c'(R), the one-step term's coefficient (else 0) */
    double disc;
    /* ode.clip_weights = direction: the groups' factors at R (ng of them; 0: none), with
     * their derivatives when derivs; hdp_rode_bin makes a bin's coefficients of them */
    int ng, derivs;
    double gmu[HDP_CLIP_ROW_GROUPS], gV[HDP_CLIP_ROW_GROUPS];
    double gdmu[HDP_CLIP_ROW_GROUPS], gdV[HDP_CLIP_ROW_GROUPS];
} hdp_rode_coef;

/* The ODE of a finalized model on the bins of sp (borrowed: it must outlive o) with the
 * clipping factors clip at m->c (borrowed; NULL: o fits its own, hdp_clip_alloc_fitted).
 * HDP_ENOMEM when the clipping factors cannot be allocated; free with hdp_rode_free in every
 * case. */
hdp_status hdp_rode_init(hdp_risk_ode *o, const hdp_model *m, const hdp_spectrum *sp,
                         hdp_clip *clip, hdp_error *err);

/* The ODE of a problem (hdpsgd/problem.h: its model, schedule and clipping factors,
 * borrowed) on the bins of sp (the problem's, or a refinement of them for bins = auto).
 * HDP_ENOMEM when ode.discrete's coefficients cannot be allocated; free with hdp_rode_free in
 * every case. */
hdp_status hdp_rode_init_problem(hdp_risk_ode *o, const hdp_problem *pb, const hdp_spectrum *sp,
                                 hdp_error *err);

/* The same from its parts, with a clipping evaluator at c that the caller owns (the
 * gradient varies the schedule and c). */
void hdp_rode_init_parts(hdp_risk_ode *o, const hdp_spectrum *sp, double gamma, double rho,
                         double R0, const hdp_schedule *s, double c, hdp_clip *clip);

void hdp_rode_free(hdp_risk_ode *o);

/* kappa = (B - 1)/n of a model's [sgd] batch (0 for B = 1): the weight of the batch's terms. */
double hdp_rode_kappa(const hdp_model *m);

/* eta~(t) and q(t) (inline, as the next two: called at every stage of every step). */
static inline void hdp_rode_step_at(const hdp_risk_ode *o, double t, hdp_rode_step *st)
{
    st->eta = hdp_sched_eta(&o->sched, t);
    st->q = isinf(o->rho) ? 0.0 : o->qf * hdp_sched_sigma2(&o->sched, t);
}

/* The coefficients of the factors cv for the scalars eta, q (derivs: also from mu', V') */
static inline void hdp_rode_fill(const hdp_risk_ode *o, double eta, double q,
                                 const hdp_clip_values *pcv, int derivs, hdp_rode_coef *cf)
{
    const hdp_clip_values cv = *pcv;
    cf->ng = 0;
    cf->derivs = derivs;
    cf->eta = eta;
    cf->q = q;
    cf->mu = cv.mu;
    cf->V = cv.V;
    cf->alpha = -2.0 * eta * cv.mu;
    cf->beta = o->gamma * eta * eta * cv.V;
    double k2 = o->kappa * eta * eta; /* the batch's terms: 0 for B = 1 */
    if (o->kappa > 0)
        cf->beta += o->kappa * eta * cv.mu * q;
    cf->alpha2 = -k2 * cv.mu * cv.mu;
    cf->beta2 = k2 * o->gamma * eta * cv.mu * cv.V;
    cf->disc = o->disc > 0 ? o->disc * eta * eta * cv.dV : 0.0;
    if (!derivs) {
        cf->dmu = cf->dV = cf->ua = cf->ub = cf->ua2 = cf->ub2 = 0.0;
        return;
    }
    cf->dmu = cv.dmu;
    cf->dV = cv.dV;
    cf->ua = -2.0 * eta * cv.dmu;
    cf->ub = o->gamma * eta * eta * cv.dV;
    if (o->kappa > 0)
        cf->ub += o->kappa * eta * cv.dmu * q;
    cf->ua2 = -2.0 * k2 * cv.mu * cv.dmu;
    cf->ub2 = k2 * o->gamma * eta * (cv.dmu * cv.V + cv.mu * cv.dV);
}

/* The coefficients at risk R for the scalars eta, q (derivs: also mu', V' and ua, ub;
 * without, those are 0). With ode.clip_weights = direction the scalars are still the
 * composite's (mu of the norm weights, the plain law's V: the data corrections' and the
 * bounds' R), and the groups' factors are kept for hdp_rode_bin. */
static inline void hdp_rode_coefs(const hdp_risk_ode *o, double eta, double q, double R,
                                  int derivs, hdp_rode_coef *cf)
{
    hdp_clip_values cv;
    if (derivs || o->disc > 0) /* the one-step term needs V_c' */
        hdp_clip_eval(o->clip, R, &cv);
    else
        hdp_clip_eval_values(o->clip, R, &cv);
    hdp_rode_fill(o, eta, q, &cv, derivs, cf);
    if (o->ng) {
        cf->ng = hdp_clip_rows_groups(o->clip, R, derivs, cf->gmu, cf->gV, cf->gdmu, cf->gdV);
    }
}

/* Bin j's factors of the groups' (ode.clip_weights = direction): mu_j, V_j (and with
 * cf->derivs their R-derivatives) into *cv. */
static inline void hdp_rode_bin_values(const hdp_risk_ode *o, const hdp_rode_coef *cf, long j,
                                       hdp_clip_values *cv)
{
    int ng = cf->ng;
    const double *a = o->wa + j * ng, *b = o->wb + j * ng;
    double mu = 0, V = 0, dmu = 0, dV = 0;
    for (int g = 0; g < ng; g++) {
        mu += a[g] * cf->gmu[g];
        V += b[g] * cf->gV[g];
    }
    if (cf->derivs)
        for (int g = 0; g < ng; g++) {
            dmu += a[g] * cf->gdmu[g];
            dV += b[g] * cf->gdV[g];
        }
    cv->mu = mu;
    cv->V = V;
    cv->nu = 0;
    cv->dmu = dmu;
    cv->dV = dV;
}

/* The coefficients of bin j: cf itself (the scalar factors), or with the groups' factors
 * (ode.clip_weights = direction) the bin's own, made in *cb. */
static inline const hdp_rode_coef *hdp_rode_bin(const hdp_risk_ode *o, const hdp_rode_coef *cf,
                                                long j, hdp_rode_coef *cb)
{
    if (!cf->ng)
        return cf;
    hdp_clip_values cv;
    hdp_rode_bin_values(o, cf, j, &cv);
    hdp_rode_fill(o, cf->eta, cf->q, &cv, cf->derivs, cb);
    return cb;
}

/* R = sum_j w_j lambda_j D_j, in bin order. */
static inline double hdp_rode_risk(const hdp_risk_ode *o, const double *D)
{
    const double *w = o->w, *lambda = o->lambda;
    double R = 0;
    for (long j = 0; j < o->m; j++)
        R += w[j] * lambda[j] * D[j];
    return R;
}

/* The bins' right-hand side f_j and the Jacobian's diagonal a_j and u_j (v_j = w_j lambda_j):
 * one bin of eigenvalue l at D_j = y. */
/* (B = 1: the batch's terms are exactly 0 and skipped, so that the bits are those of the
 * one-sample ODE) */
static inline double hdp_rode_f(double l, double y, const hdp_rode_coef *cf)
{
    double f = l * (cf->alpha * y + cf->beta) + cf->q;
    if (cf->alpha2 != 0.0 || cf->beta2 != 0.0)
        f += l * l * (cf->alpha2 * y + cf->beta2);
    return f;
}
static inline double hdp_rode_a(double l, const hdp_rode_coef *cf)
{
    double a = -2.0 * l * cf->eta * cf->mu;
    if (cf->alpha2 != 0.0)
        a += l * l * cf->alpha2;
    return a;
}
static inline double hdp_rode_u(double l, double y, const hdp_rode_coef *cf)
{
    double u = l * (cf->ua * y + cf->ub);
    if (cf->ua2 != 0.0 || cf->ub2 != 0.0)
        u += l * l * (cf->ua2 * y + cf->ub2);
    return u;
}

/* ode.discrete's part of bin j's Jacobian diagonal (and of its right-hand side per unit D_j):
 * disc eta~^2 V_c' k_j lambda_j^2; 0 when off. Its R-derivative (V_c'') is left out of u_j: the
 * Newton matrix is then approximate (CVODE's modified Newton converges with it), the solution
 * is not. */
static inline double hdp_rode_disc_a(const hdp_risk_ode *o, long j, const hdp_rode_coef *cf)
{
    return cf->disc != 0.0 ? cf->disc * o->kdisc[j] * o->lambda[j] * o->lambda[j] : 0.0;
}

/* ode.clip_weights = direction or direction-noise (docs/theory.md §9.3): whether m's ODE takes
 * the rows' factors per eigendirection (auto: norm; 2: direction-noise, else 1); and the checks of the key against the rest of m
 * (HDP_EINPUT naming the keys: direction needs a data set, batch 1, ode.discrete = false and
 * solver = cvode or auto) */
int hdp_rode_wants_direction(const hdp_model *m);
hdp_status hdp_rode_weights_check(const hdp_model *m, hdp_error *err);

/* The bins' weights of ode.clip_weights = direction for the bins of sp and the groups of
 * the rows' composite clip: *wa, *wb (m ng each, the caller's to free), *ng; noise_only
 * (direction-noise): the drift's weights are the norm's, wa = p_g w_g for every bin, so that
 * mu_b is the composite's mu_c. HDP_ENOMEM. */
hdp_status hdp_rode_direction_weights(const hdp_spectrum *sp, const hdp_clip *clip,
                                      int noise_only, double **wa, double **wb, int *ng,
                                      hdp_error *err);

/* f = the bins' right-hand side at y (all m); -1 when one is not finite, else 0. */
int hdp_rode_rhs(const hdp_risk_ode *o, const hdp_rode_coef *cf, const double *y, double *f);

/* A bound's derivative at its value Rb (lower = 0: R_upper, 1: R_lower), and its Jacobian
 * (scalar: the bounds couple neither with each other nor with the bins). */
double hdp_rode_bound_rhs(const hdp_risk_ode *o, const hdp_rode_step *st, int lower, double Rb);
double hdp_rode_bound_jac(const hdp_risk_ode *o, const hdp_rode_step *st, int lower, double Rb);

/* The final-iterate noise 2 c^2 gamma^2 eta~(1)^2 / rho^2 (0 when rho = inf) at eta~(1) = eta1. */
double hdp_rode_final_noise(const hdp_risk_ode *o, double eta1);

/* The stiffness estimate 2 lambda_max int_0^1 eta~ dt (mu <= 1). */
double hdp_rode_stiffness(const hdp_risk_ode *o);

/* Knot stops: the first interior knot of a piecewise schedule after t (knots within 1e-12
 * of t, or before it, are passed), INFINITY when none is left; *next (start at 1) is the
 * index where the search resumes. The right-hand side jumps at knots: the methods stop on
 * them. */
double hdp_rode_next_knot(const hdp_risk_ode *o, int *next, double t);

/* A trial solve of bins = auto: the final risk of the method on the k bins of spec. */
typedef hdp_status (*hdp_rode_trial)(void *ctx, const hdp_spectrum *spec, long k, double *risk,
                                     hdp_error *err);

/* bins = auto (issue 7), for every method: log-spaced bins with two-node Gauss quadrature per
 * bin (hdp_spectrum_bin_log), refined by doubling from 8 bins until the final risk of two
 * successive binnings (trial) differs by at most spectrum_tol (relative); the finer of the two
 * is kept in spec. A spectrum with few distinct eigenvalues (<= 64, or fewer than the next
 * doubling) keeps one bin per distinct eigenvalue, which is exact; so does one that has not
 * converged before. A trial's error ends it. */
hdp_status hdp_rode_auto_bins(const hdp_model *m, hdp_spectrum *spec, hdp_rode_trial trial,
                              void *ctx, hdp_error *err);

/* data.source = file (docs/theory.md §9, data_ode.c): the clipping bias's cross term and
 * R_bias added to the risk of the shifted problem, and the held-out MSE predicted; a no-op
 * for other models. clip: the ODE's clipping factors. res holds the solve on a fine grid
 * whose every stride-th point is an output point: the corrections' integrals are taken on
 * the fine grid, then res keeps the output points alone. */
hdp_status hdp_data_ode_correct(const hdp_model *m, hdp_clip *clip, hdp_ode_result *res,
                                long stride,
                                hdp_error *err);

/* data.source = file (data_ode.c): k[j] = E[x_j^4] / lambda_j^2 - 1 over the prepared rows in
 * the eigenbasis, one per eigendirection (d of them; 2, the Gaussian value, where lambda_j is
 * 0): the one-step term's coefficients of ode.discrete (docs/theory.md §9.5). */
void hdp_data_kurtosis(const hdp_model *m, double *k);

#endif
