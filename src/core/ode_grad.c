/*
 * ode_grad.c — final risk of the risk ODE and its exact gradient with respect to the
 * schedule and the clipping constant (docs/theory.md §3, §5, §6); see ode_grad.h.
 *
 * Grid. Steps never straddle a table knot (sigma~^2 jumps there; each step uses the
 * formulas of its own segment). A step is at most
 *   h_stab = 1 / (eta_cap (2 lambda_max + gamma eta_cap sum_j w_j lambda_j^2)),
 *   eta_cap = min(2/gamma, sup eta~ rounded up to a power of 2),
 * the largest rate of the Jacobian (diagonal plus rank one, docs/theory.md §3) for the schedule
 * (mu <= 1, V' <= 1), so that h times the rate stays below 1, well inside the real
 * stability interval of RK4 (2.78); the batch's diagonal rate kappa eta~^2 mu^2 lambda^2
 * (docs/theory.md §3.11) is not in it: it is x = (B/n) eta~ mu lambda times the descent's
 * 2 eta~ mu lambda / 2, at most that rate while the batched algorithm's own step is stable
 * (x < 2), so h times the rate stays below 2; at most 1/base_steps; and at most
 * rel_step eta~/|eta~'| where the schedule bends (optimal: t + a; linear-noise:
 * 2 (1 - t), graded towards t = 1 where sqrt(1 - t) is singular). The grid therefore
 * depends on the schedule's kind, its knots, the power of two above eta~(0) and
 * (optimal) a only: between powers of two the objective is a smooth function of the knot
 * values; at one it jumps by the discretisation's error (~1e-9 relative).
 *
 * Reverse mode through RK4: with k_1 = f(t, y), k_2 = f(t + h/2, y + h/2 k_1),
 * k_3 = f(t + h/2, y + h/2 k_2), k_4 = f(t + h, y + h k_3), y' = y + h/6 (k_1 + 2 k_2 +
 * 2 k_3 + k_4), the adjoint ybar of y' gives kbar_4 = h/6 ybar, then for s = 4, 3, 2, 1:
 * Ybar_s = J_s^T kbar_s (J^T = diag(a) + v u^T, O(m)), ybar += Ybar_s, kbar_{s-1} +=
 * (h or h/2) Ybar_s, and the parameters collect kbar_s^T df/dparam at stage s.
 */
#include "core/ode_grad.h"
#include "core/clip_internal.h"
#include "core/problem_internal.h"
#include "core/check.h"
#include "hdpsgd/dataset.h"
#include "core/schedule_kinds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/risk_ode.h"
#include "hdpsgd/clip.h"

/* frees the scratch, the grid and the stored states (reallocated for the next number of
 * bins); the spectrum stays */
static void drop_scratch(hdp_ode_grad *g)
{
    free(g->w);
    g->w = NULL;
    free(g->ys);
    free(g->grid);
    free(g->seg);
    g->ys = g->grid = NULL;
    g->seg = NULL;
    g->cap = 0;
    g->ys_len = 0;
}

void hdp_ode_grad_free(hdp_ode_grad *g)
{
    if (!g)
        return;
    hdp_spectrum_free(&g->spec);
    if (!g->clip_borrowed)
        hdp_clip_free(g->clip);
    hdp_grad_data_free(&g->data);
    free(g->dir_wa);
    free(g->dir_wb);
    free(g->law_sample);
    drop_scratch(g);
    memset(g, 0, sizeof *g);
}

/* the schedule and its parameter derivatives at one stage: hdp_sched_point (schedule.c) */
typedef hdp_sched_point sched_pt;

/* ---- the clipping factors and their c-derivatives ---- */

typedef struct {
    hdp_risk_ode ode;         /* the ODE of this evaluation's schedule and c (risk_ode.h) */
    hdp_clip *clip;           /* borrowed from the hdp_ode_grad */
    double c;
    int scale;                /* Gaussian label noise: mu, V functions of c / sqrt(R + tau^2/2) */
    double tau2;
    const hdp_grad_data *data; /* the data set's corrections (NULL: none) */
} clip_set;

static void clip_dc_law(int scale, double tau2, double c, double R, const hdp_rode_coef *cf,
                        double *mu_c, double *V_c);

/* one group's (or the plain law's) dmu/dc, dV/dc at c, from its factors at R */
static void clip_dc_of(hdp_clip *k, double c, double R, double *mu_c, double *V_c)
{
    hdp_clip_values v;
    hdp_rode_coef cf;
    memset(&cf, 0, sizeof cf);
    hdp_clip_eval(k, R, &v);
    cf.mu = v.mu, cf.V = v.V, cf.dmu = v.dmu, cf.dV = v.dV;
    int sc = k->noise == HDP_NOISE_GAUSSIAN || k->noise == HDP_NOISE_NONE || k->tau2 == 0;
    clip_dc_law(sc, k->noise == HDP_NOISE_NONE ? 0.0 : k->tau2, c, R, &cf, mu_c, V_c);
}

/* The rows' composite (clip_rows.c, docs/theory.md §9.3): mu = sum_g ga_g mu_g at c_g = c/w_g,
 * so dmu/dc = sum_g ga_g (c_g/c) dmu_g/dc_g; V is the plain law's at c. gmc, gVc (NULL: not
 * asked): each group's (c_g/c) dmu_g/dc_g and (c_g/c) dV_g/dc_g, whose sums with a bin's
 * weights are the bin's (ode.clip_weights = direction) */
static void clip_dc_rows(const hdp_clip *k, double c, double R, double *mu_c, double *V_c,
                         double *gmc, double *gVc)
{
    double m1, v1;
    *mu_c = 0.0;
    for (int i = 0; i < k->ngroups; i++) {
        hdp_clip *gk = k->group[i];
        clip_dc_of(gk, gk->c, R, &m1, &v1);
        *mu_c += k->ga[i] * gk->c / c * m1;
        if (gmc) {
            gmc[i] = gk->c / c * m1;
            gVc[i] = gk->c / c * v1;
        }
    }
    clip_dc_of(k->vplain, c, R, &m1, V_c);
}

/* dmu/dc, dV/dc at R, whose factors and R-derivatives cf holds (and with
 * ode.clip_weights = direction the groups' into gmc, gVc, see clip_dc_rows) */
static void clip_dc(const clip_set *cs, double R, const hdp_rode_coef *cf, double *mu_c,
                    double *V_c, double *gmc, double *gVc)
{
    *mu_c = *V_c = 0.0;
    if (gmc)
        for (int i = 0; i < cf->ng; i++)
            gmc[i] = gVc[i] = 0.0;
    if (isinf(cs->c))
        return;
    if (cs->clip->ngroups)
        clip_dc_rows(cs->clip, cs->c, R, mu_c, V_c, gmc, gVc);
    else
        clip_dc_law(cs->scale, cs->tau2, cs->c, R, cf, mu_c, V_c);
}

/* one law's dmu/dc, dV/dc at its c (scale: mu, V functions of c / sqrt(R + tau^2/2)) */
static void clip_dc_law(int scale, double tau2, double c, double R, const hdp_rode_coef *cf,
                        double *mu_c, double *V_c)
{
    *mu_c = *V_c = 0.0;
    if (isinf(c))
        return;
    if (scale) {
        /* mu = M(a), V = s N(a), a = c / (2 sqrt(s)), s = R + tau^2/2 (clip.c): with
         * da/dR = -a/(2s), da/dc = a/c, dmu/dc = -(2s/c) dmu/dR and
         * dV/dc = s N'(a) a / c = (2s/c) (nu - dV/dR), nu = V/s */
        double s = fmax(R, 0.0) + 0.5 * tau2;
        *mu_c = -2.0 * s / c * cf->dmu;
        *V_c = s > 0 ? 2.0 * s / c * (cf->V / s - cf->dV) : 0.0;
    } else if (c > 0) {
        /* every law: r's density p solves the heat equation in R (variance 2R), so
         * dmu/dR = 2 p'(c) and dV/dR = mu - 2 c p(c) (V = E[min(r^2, c^2)]/2: its second
         * r-derivative is 1{|r| < c} minus c at +-c); with dmu/dc = 2 p(c) and
         * dV/dc = c (1 - mu): dmu/dc = (mu - dV/dR) / c from the factors and their
         * R-derivative (for a fitted law, those of its series; docs/theory.md §2.3) */
        *mu_c = (cf->mu - cf->dV) / c;
        *V_c = c * (1.0 - cf->mu);
    }
}

/* ---- the right-hand side (risk_ode.h) and its adjoint ---- */

/* The data set's extra states after the m bins (ode_grad.h): I' = eta~ mu_c, delta_k' =
 * -2 lambda_k eta~ mu_c delta_k + lambda_k hb_k gamma eta~^2 nu_c tau^2/2 with nu_c = V_c /
 * (R + tau^2/2) (clip.h). Non-zero when one is not finite. */
static int extra_rhs(const clip_set *cs, const hdp_rode_coef *cf, double R, const double *y,
                     double *f)
{
    const hdp_grad_data *t = cs->data;
    const hdp_risk_ode *o = &cs->ode;
    long m = o->m;
    double eta = cf->eta, s = R + 0.5 * t->tau2, nu = s > 0 ? cf->V / s : 0.0;
    double src = o->gamma * eta * eta * nu * 0.5 * t->tau2, a = -2.0 * eta * cf->mu;
    f[m] = eta * cf->mu;
    int bad = !isfinite(f[m]);
    for (long k = 0; k < m; k++) {
        double l = o->lambda[k];
        f[m + 1 + k] = l * (a * y[m + 1 + k] + t->bin_h[k] * src);
        bad |= !isfinite(f[m + 1 + k]);
    }
    return bad ? -1 : 0;
}

static int rhs(clip_set *cs, const sched_pt *p, const double *y, double *f)
{
    const hdp_risk_ode *o = &cs->ode;
    hdp_rode_coef cf;
    double R = hdp_rode_risk(o, y);
    hdp_rode_coefs(o, p->eta, p->q, R, 0, &cf);
    if (hdp_rode_rhs(o, &cf, y, f))
        return -1;
    return cs->data ? extra_rhs(cs, &cf, R, y, f) : 0;
}

/* The adjoint of the extra states' stage (extra_rhs): their Ybar, *e_bar += kbar^T df/deta~;
 * returns kbar^T df/dR (R's coefficient, carried to the bins through w_j lambda_j). */
static double extra_adjoint(const clip_set *cs, const hdp_rode_coef *cf, double R,
                            const double *Y, const double *kbar, double *Ybar, double *e_bar)
{
    const hdp_grad_data *t = cs->data;
    const hdp_risk_ode *o = &cs->ode;
    long m = o->m;
    double eta = cf->eta, s = R + 0.5 * t->tau2, T = 0.5 * t->tau2 * o->gamma;
    double nu = s > 0 ? cf->V / s : 0.0, dnu = s > 0 ? (cf->dV - nu) / s : 0.0;
    double kI = kbar[m], sR = kI * eta * cf->dmu, eb = kI * cf->mu;
    Ybar[m] = 0.0; /* I enters no right-hand side */
    for (long k = 0; k < m; k++) {
        double l = o->lambda[k], kd = kbar[m + 1 + k], dk = Y[m + 1 + k], hb = t->bin_h[k];
        sR += kd * l * (-2.0 * eta * cf->dmu * dk + hb * T * eta * eta * dnu);
        eb += kd * l * (-2.0 * cf->mu * dk + 2.0 * hb * T * eta * nu);
        Ybar[m + 1 + k] = kd * l * (-2.0 * eta * cf->mu);
    }
    *e_bar += eb;
    return sR;
}

/* The batch's terms' part of the parameters' adjoints (docs/theory.md §3.11): with
 * k2 = kappa eta~^2, d/deta~ of l^2 (alpha2 D + beta2) = l^2 (-2 kappa eta~ mu^2 D +
 * 3 kappa gamma eta~^2 mu V) and of l kappa eta~ mu q = l kappa mu q; d/dc = l^2 k2 (-2 mu mu_c D +
 * gamma eta~ (mu_c V + mu V_c)) + l kappa eta~ q (mu_c + 2 mu / c) (mu_c, V_c: the
 * c-derivatives; q = qf sigma~^2 with qf ~ c^2); *q_bar: the multiplier of dq/dparam,
 * kappa eta~ mu sum_j kbar_j l_j. */
static void batch_adjoint(const hdp_risk_ode *o, const hdp_rode_coef *cf, const double *Y,
                          const double *kbar, double mu_c, double V_c, double c, int dc,
                          double *e_bar, double *c_bar, double *q_bar)
{
    double eta = cf->eta, k = o->kappa, g = o->gamma, k2 = k * eta * eta, q = cf->q;
    double eD = -2.0 * k * eta * cf->mu * cf->mu, e0 = 3.0 * k * g * eta * eta * cf->mu * cf->V;
    double cD = -2.0 * k2 * cf->mu * mu_c, c0 = k2 * g * eta * (mu_c * cf->V + cf->mu * V_c);
    double dqdc = c > 0 && isfinite(c) ? 2.0 * q / c : 0.0;
    double se = 0, sc = 0, sl = 0;
    for (long j = 0; j < o->m; j++) {
        double l = o->lambda[j], l2 = l * l, kb = kbar[j];
        se += kb * l2 * (eD * Y[j] + e0);
        sl += kb * l;
        if (dc)
            sc += kb * l2 * (cD * Y[j] + c0);
    }
    *e_bar += se + sl * k * cf->mu * q;
    *c_bar += sc + (dc ? sl * k * eta * (mu_c * q + cf->mu * dqdc) : 0.0);
    *q_bar = k * eta * cf->mu * sl;
}

/* Adjoint of one stage k = f(t, Y): ybar_out = J^T kbar (J^T = diag(a) + v u^T);
 * parameters += kbar^T df/dparam. */
static void rhs_adjoint(const hdp_ode_grad *g, clip_set *cs, const sched_pt *p, const double *Y,
                        const double *kbar, double *Ybar, double *dsched, double *dc)
{
    const hdp_risk_ode *o = &cs->ode;
    long m = g->spec.m;
    double R = hdp_rode_risk(o, Y), mu_c = 0, V_c = 0;
    double gmc[HDP_CLIP_ROW_GROUPS], gVc[HDP_CLIP_ROW_GROUPS];
    hdp_rode_coef c1;
    hdp_rode_coefs(o, p->eta, p->q, R, 1, &c1);
    if (dc)
        clip_dc(cs, R, &c1, &mu_c, &V_c, c1.ng ? gmc : NULL, gVc);
    const hdp_rode_coef cf = c1; /* a copy the stores cannot alias: kept in registers */
    double eta = p->eta, gm = g->gamma;
    double ukb = 0, sum_kb = 0, e_bar = 0, c_bar = 0;
    hdp_rode_coef cb;
    for (long j = 0; j < m; j++) {
        double l = o->lambda[j], kb = kbar[j];
        const hdp_rode_coef *cj = hdp_rode_bin(o, &cf, j, &cb); /* clip_weights = direction */
        ukb += hdp_rode_u(l, Y[j], cj) * kb;
        sum_kb += kb;
        e_bar += kb * l * (-2.0 * cj->mu * Y[j] + 2.0 * gm * eta * cj->V);
        if (dc && cf.ng) { /* the bin's c-derivatives: its weights on the groups' */
            const double *wa = o->wa + j * cf.ng, *wb = o->wb + j * cf.ng;
            double mj = 0, vj = 0;
            for (int i = 0; i < cf.ng; i++) {
                mj += wa[i] * gmc[i];
                vj += wb[i] * gVc[i];
            }
            c_bar += kb * l * (-2.0 * eta * mj * Y[j] + gm * eta * eta * vj);
        } else if (dc) {
            c_bar += kb * l * (-2.0 * eta * mu_c * Y[j] + gm * eta * eta * V_c);
        }
        Ybar[j] = hdp_rode_a(l, cj) * kbar[j]; /* J^T's diagonal; its rank one below */
    }
    double q_bar = 0; /* the batch's terms, docs/theory.md §3.11 */
    if (o->kappa > 0)
        batch_adjoint(o, &cf, Y, kbar, mu_c, V_c, cs->c, dc != NULL, &e_bar, &c_bar, &q_bar);
    if (cs->data) /* the data set's extra states: their R-coefficient joins u's */
        ukb += extra_adjoint(cs, &cf, R, Y, kbar, Ybar, &e_bar);
    for (long j = 0; j < m; j++)
        Ybar[j] += o->w[j] * o->lambda[j] * ukb;
    if (dsched)
        for (int i = 0; i < p->n; i++)
            dsched[p->idx[i]] += e_bar * p->de[i] + (sum_kb + q_bar) * p->dq[i];
    if (dc) {
        /* q = 2 c^2 gamma^2 sigma~^2: dq/dc = 2 q / c */
        c_bar += sum_kb * (cs->c > 0 && isfinite(cs->c) ? 2.0 * p->q / cs->c : 0.0);
        *dc += c_bar;
    }
}

/* ---- the grid ---- */

static int push_node(hdp_ode_grad *g, long *n, double t, int seg)
{
    if (*n + 1 > g->cap) {
        long cap = g->cap ? 2 * g->cap : 1024;
        double *grid = realloc(g->grid, sizeof(double) * (size_t)(cap + 1));
        if (!grid) return -1;
        g->grid = grid;
        int *sg = realloc(g->seg, sizeof(int) * (size_t)cap);
        if (!sg) return -1;
        g->seg = sg;
        g->cap = cap;
    }
    g->seg[*n] = seg;
    g->grid[++*n] = t;
    return 0;
}

/* The stability bound for schedules with sup eta~ <= eta_sup: eta_sup rounded up to a power of
 * two (at most 2/gamma), so that the grid changes only when eta~(0) crosses one. */
static double h_stab(const hdp_ode_grad *g, double eta_sup)
{
    double cap = 2.0 / g->gamma, s2 = 0;
    if (eta_sup > 0 && isfinite(eta_sup))
        cap = fmin(cap, exp2(ceil(log2(eta_sup))));
    for (long j = 0; j < g->spec.m; j++)
        s2 += g->spec.bin_weight[j] * g->spec.bin_lambda[j] * g->spec.bin_lambda[j];
    return 1.0 / (cap * (2.0 * g->spec.lambda_max + g->gamma * cap * s2));
}

/* Build the grid of schedule s; returns the number of steps (-1: out of memory). */
static long build_grid(hdp_ode_grad *g, const hdp_schedule *s)
{
    double hmax = fmin(h_stab(g, hdp_sched_eta_sup(s)), 1.0 / (double)g->base_steps);
    long n = 0;
    if (!g->grid && push_node(g, &n, 0.0, -1) < 0) /* allocate */
        return -1;
    n = 0;
    g->grid[0] = 0.0;
    const double *kt;
    int len = hdp_sched_knots(s, &kt);
    if (len > 0) {
        for (int i = 0; i + 1 < len; i++) {
            double a = kt[i], b = kt[i + 1];
            if (!(b > a))
                continue;
            long k = (long)ceil((b - a) / hmax - 1e-9);
            if (k < 1) k = 1;
            for (long j = 1; j <= k; j++)
                if (push_node(g, &n, j == k ? b : a + (b - a) * (double)j / (double)k, i) < 0)
                    return -1;
        }
        g->grid[n] = 1.0;
        return n;
    }
    double t = 0.0;
    while (t < 1.0) {
        double h = fmin(hmax, g->rel_step * hdp_sched_bend(s, t));
        double tn = t + h;
        if (tn > 1.0 || 1.0 - tn < 1e-12 || !(h > 0))
            tn = 1.0;
        if (push_node(g, &n, tn, -1) < 0)
            return -1;
        t = tn;
    }
    return n;
}

/* ---- one Runge-Kutta step ---- */

/* The schedule at the stages of step n (t, t + h/2, t + h); returns the step h. */
static inline double stage_scheds(const hdp_ode_grad *g, const hdp_schedule *s, long n,
                                   double qf, int privacy, sched_pt *p1, sched_pt *p2, sched_pt *p4)
{
    double t = g->grid[n], h = g->grid[n + 1] - t;
    hdp_sched_point_at(s, g->seg[n], t, qf, privacy, p1);
    hdp_sched_point_at(s, g->seg[n], t + 0.5 * h, qf, privacy, p2);
    hdp_sched_point_at(s, g->seg[n], t + h, qf, privacy, p4);
    return h;
}

/* The first three stages of an RK4 step of size h from y: k1 = f(y) (schedule p1), Y2 = y +
 * h/2 k1, k2 = f(Y2) (p2), Y3 = y + h/2 k2, k3 = f(Y3) (p2), Y4 = y + h k3. The k's may be one
 * array, and so may the Y's. Non-zero when not finite. */
static inline int stage_states(const hdp_ode_grad *g, clip_set *cs, const sched_pt *p1,
                               const sched_pt *p2, double h, const double *y, double *k1,
                               double *k2, double *k3, double *Y2, double *Y3, double *Y4)
{
    long m = g->ns;
    if (rhs(cs, p1, y, k1)) return -1;
    for (long j = 0; j < m; j++) Y2[j] = y[j] + 0.5 * h * k1[j];
    if (rhs(cs, p2, Y2, k2)) return -1;
    for (long j = 0; j < m; j++) Y3[j] = y[j] + 0.5 * h * k2[j];
    if (rhs(cs, p2, Y3, k3)) return -1;
    for (long j = 0; j < m; j++) Y4[j] = y[j] + h * k3[j];
    return 0;
}

/* y -> yn over step n; work: 5 ns (k1..k4 and the stage state). Non-zero when not finite. */
static int rk4_step(const hdp_ode_grad *g, clip_set *cs, const hdp_schedule *s, long n, double qf,
                    int privacy, const double *y, double *yn, double *work)
{
    long m = g->ns;
    double *k1 = work, *k2 = k1 + m, *k3 = k2 + m, *k4 = k3 + m, *Y = k4 + m;
    sched_pt p1, p2, p4;
    double h = stage_scheds(g, s, n, qf, privacy, &p1, &p2, &p4);
    if (stage_states(g, cs, &p1, &p2, h, y, k1, k2, k3, Y, Y, Y)) return -1;
    if (rhs(cs, &p4, Y, k4)) return -1;
    for (long j = 0; j < m; j++) {
        yn[j] = y[j] + h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        if (!isfinite(yn[j])) return -1;
    }
    return 0;
}

/* ---- evaluation ---- */

/* The clipping factors at c: g's, fitted again (hdp_clip_tabulate) only when c changes.
 * Non-zero when out of memory. */
static int clip_set_open(hdp_ode_grad *g, const hdp_schedule *s, int privacy, double c,
                         clip_set *cs)
{
    memset(cs, 0, sizeof *cs);
    cs->c = c;
    cs->tau2 = g->noise == HDP_NOISE_NONE ? 0.0 : g->tau2;
    cs->scale = g->noise == HDP_NOISE_GAUSSIAN || g->noise == HDP_NOISE_NONE || g->tau2 == 0;
    cs->data = g->data.on && g->ns > g->spec.m ? &g->data : NULL;
    if (g->data_model && !(g->clip_c == c)) {
        /* a least-squares target: the bias and the residuals are the model's c's; planted:
         * the rows' factors at c (the problem's again at the model's c) */
        if (g->data_model == 1 || !g->model)
            return -1;
        if (!g->clip_borrowed)
            hdp_clip_free(g->clip);
        g->clip_borrowed = g->pb_clip && c == g->model->c;
        g->clip = g->clip_borrowed ? g->pb_clip : hdp_clip_alloc_fitted(g->model, c, NULL);
        g->clip_c = c;
    } else if (!g->data_model && (!g->clip || !(g->clip_c == c))) {
        hdp_clip_free(g->clip);
        g->clip = hdp_clip_alloc_law(&g->law, c);
        g->clip_c = c;
        if (g->clip && hdp_clip_tabulate(g->clip, g->clip_range, NULL) != HDP_OK) {
            hdp_clip_free(g->clip);
            g->clip = NULL;
        }
    }
    cs->clip = g->clip;
    hdp_rode_init_parts(&cs->ode, &g->spec, g->gamma, privacy ? s->rho : INFINITY, g->R0, s, c,
                        cs->clip);
    cs->ode.kappa = g->kappa;
    if (cs->clip && g->dir_ng && cs->clip->ngroups == g->dir_ng) { /* borrowed (risk_ode.h) */
        cs->ode.ng = g->dir_ng;
        cs->ode.wa = g->dir_wa;
        cs->ode.wb = g->dir_wb;
    } else if (g->dir_ng) {
        return -1; /* not the rows' groups */
    }
    return !cs->clip;
}

/* The states of the passes in g->ys: nck checkpoints, one block of C states, the current and
 * next state. Non-zero when out of memory. */
static int reserve_states(hdp_ode_grad *g, long nck, long C)
{
    size_t need = (size_t)(nck + C + 2) * (size_t)g->ns;
    if (need <= g->ys_len)
        return 0;
    double *ys = realloc(g->ys, sizeof(double) * need);
    if (!ys)
        return -1;
    g->ys = ys;
    g->ys_len = need;
    return 0;
}

/* The forward pass from R0 over the N steps, the state after step n stored at checkpoint
 * n / C when n is a multiple of C (keep). Returns the final state (NULL: not finite). */
static const double *forward(hdp_ode_grad *g, clip_set *cs, const hdp_schedule *s, long N,
                             long C, long nck, int keep, double qf, int privacy)
{
    long m = g->ns;
    double *ck = g->ys, *cur = ck + (nck + C) * m, *nxt = cur + m;
    for (long j = 0; j < m; j++) /* the extra states (I, delta) start at 0 */
        cur[j] = ck[j] = j < g->spec.m ? hdp_spectrum_D0(&g->spec, j, g->R0) : 0.0;
    for (long n = 0; n < N; n++) {
        if (hdp_cancel_requested()) /* issue 29: the thread's cancel flag, at every step */
            return NULL;
        if (rk4_step(g, cs, s, n, qf, privacy, cur, nxt, g->w)) return NULL;
        double *tmp = cur;
        cur = nxt;
        nxt = tmp;
        if (keep && (n + 1) % C == 0)
            memcpy(ck + (n + 1) / C * m, cur, sizeof(double) * (size_t)m);
    }
    return cur;
}

/* The derivatives of the final-iterate jump qf eta~(1)^2 / rho^2 (privacy only): into ds
 * (may be NULL) and, when dcv is not NULL, *dcv. */
static void final_jump_grad(const hdp_schedule *s, double qf, double c, double eta1, double r2,
                            double *ds, double *dcv)
{
    double de1 = 2.0 * qf * eta1 / r2;
    if (ds)
        hdp_sched_final_grad(s, de1, ds);
    if (dcv && c > 0)
        *dcv += 2.0 * qf * eta1 * eta1 / r2 / c;
}

/* The data set's terms of the objective at the final state y (ode_grad.h): the heteroscedastic
 * sum_k w_k lambda_k delta_k(1), the cross term -sum_j cw_j exp(-lambda_j I(1)), R_bias. */
static double extra_value(const hdp_ode_grad *g, const double *y)
{
    const hdp_grad_data *t = &g->data;
    long m = g->spec.m;
    double F = t->risk_bias, I = y[m];
    for (long k = 0; k < m; k++)
        F += g->spec.bin_weight[k] * g->spec.bin_lambda[k] * y[m + 1 + k];
    for (long j = 0; j < t->d; j++)
        F -= t->cw[j] * exp(-t->lambda[j] * I);
    return F;
}

/* Their derivatives in the extra states: the adjoint's start beside the bins' */
static void extra_final(const hdp_ode_grad *g, const double *y, double *ybar)
{
    const hdp_grad_data *t = &g->data;
    long m = g->spec.m;
    double I = y[m], dI = 0;
    for (long j = 0; j < t->d; j++)
        dI += t->cw[j] * t->lambda[j] * exp(-t->lambda[j] * I);
    ybar[m] = dI;
    for (long k = 0; k < m; k++)
        ybar[m + 1 + k] = g->spec.bin_weight[k] * g->spec.bin_lambda[k];
}

/* The reverse pass's arrays in g->w, laid out once: the stage cotangents kb1..kb3 (over
 * k1..k3 of rk4_step), the state's adjoint ybar, kbar_4, a stage's Ybar, the stage states
 * S2..S4. */
typedef struct {
    long m;
    double *kb1, *kb2, *kb3, *ybar, *kb, *Yb, *S2, *S3, *S4;
} adjoint_work;

/* The adjoint of step n from state y: a->ybar (the adjoint of the state after the step)
 * becomes that of y; ds, dcp collect the parameters' (may be NULL). Non-zero when not
 * finite. */
static int reverse_step(const hdp_ode_grad *g, clip_set *cs, const hdp_schedule *s, long n,
                        double qf, int privacy, const double *y, const adjoint_work *a,
                        double *ds, double *dcp)
{
    long m = a->m;
    double *kb1 = a->kb1, *kb2 = a->kb2, *kb3 = a->kb3, *ybar = a->ybar, *kb = a->kb;
    double *Yb = a->Yb, *S2 = a->S2, *S3 = a->S3, *S4 = a->S4;
    sched_pt p1, p2, p4;
    double h = stage_scheds(g, s, n, qf, privacy, &p1, &p2, &p4);
    /* the stage states Y2, Y3, Y4 of this step (needed in reverse order; Yb: the stages'
     * derivatives, not kept) */
    if (stage_states(g, cs, &p1, &p2, h, y, Yb, Yb, Yb, S2, S3, S4)) return -1;
    for (long j = 0; j < m; j++) {
        kb[j] = h / 6.0 * ybar[j]; /* kbar_4 */
        kb3[j] = h / 3.0 * ybar[j];
        kb2[j] = h / 3.0 * ybar[j];
        kb1[j] = h / 6.0 * ybar[j];
    }
    rhs_adjoint(g, cs, &p4, S4, kb, Yb, ds, dcp);
    for (long j = 0; j < m; j++) { ybar[j] += Yb[j]; kb3[j] += h * Yb[j]; }
    rhs_adjoint(g, cs, &p2, S3, kb3, Yb, ds, dcp);
    for (long j = 0; j < m; j++) { ybar[j] += Yb[j]; kb2[j] += 0.5 * h * Yb[j]; }
    rhs_adjoint(g, cs, &p2, S2, kb2, Yb, ds, dcp);
    for (long j = 0; j < m; j++) { ybar[j] += Yb[j]; kb1[j] += 0.5 * h * Yb[j]; }
    rhs_adjoint(g, cs, &p1, y, kb1, Yb, ds, dcp);
    for (long j = 0; j < m; j++) ybar[j] += Yb[j];
    return 0;
}

/* The reverse pass: the blocks of C steps from the last, each recomputed from its checkpoint,
 * then its steps' adjoints from the last (ybar starts at dR(1)/dy). Non-zero when not finite. */
static int reverse(hdp_ode_grad *g, clip_set *cs, const hdp_schedule *s, long N, long C,
                   long nck, double qf, int privacy, const double *y1, double *ds, double *dcp)
{
    long m = g->ns;
    double *w = g->w, *ck = g->ys, *blk = ck + nck * m, *ybar = w + 5 * m;
    const adjoint_work a = {.m = m, .kb1 = w, .kb2 = w + m, .kb3 = w + 2 * m, .ybar = ybar,
                            .kb = ybar + m, .Yb = ybar + 2 * m, .S2 = w + 8 * m,
                            .S3 = w + 9 * m, .S4 = w + 10 * m};
    for (long j = 0; j < g->spec.m; j++)
        ybar[j] = g->spec.bin_weight[j] * g->spec.bin_lambda[j];
    if (m > g->spec.m) /* dF/dI(1) and dF/ddelta_k(1) */
        extra_final(g, y1, ybar);
    for (long b = (N - 1) / C; b >= 0; b--) {
        if (hdp_cancel_requested()) /* issue 29: the thread's cancel flag, at every block */
            return -1;
        long n0 = b * C, n1 = n0 + C < N ? n0 + C : N;
        memcpy(blk, ck + b * m, sizeof(double) * (size_t)m);
        for (long n = n0; n + 1 < n1; n++)
            if (rk4_step(g, cs, s, n, qf, privacy, blk + (n - n0) * m, blk + (n - n0 + 1) * m, w))
                return -1;
        for (long n = n1 - 1; n >= n0; n--)
            if (reverse_step(g, cs, s, n, qf, privacy, blk + (n - n0) * m, &a, ds, dcp))
                return -1;
    }
    return 0;
}

/* the grid, the forward pass, the objective, the reverse pass (when a derivative is asked) */
double hdp_ode_grad_eval(hdp_ode_grad *g, const hdp_schedule *s, double c, double *dsched,
                         double *dc)
{
    if (!g || !s)
        return NAN;
    long m = g->ns, np = hdp_sched_params(s);
    int privacy = !isinf(g->rho) && !isinf(s->rho);
    long N = build_grid(g, s);
    if (N < 0)
        return NAN;
    g->steps = N;
    if (!g->w && !(g->w = malloc(sizeof(double) * 11 * (size_t)m)))
        return NAN;
    clip_set cs;
    double F = NAN;
    if (clip_set_open(g, s, privacy, c, &cs))
        goto out;
    double qf = cs.ode.qf; /* 2 c^2 gamma^2, 0 without privacy */

    /* states: checkpoints every C steps, one block of C states recomputed from its
     * checkpoint in the reverse pass, the current and next state (C = 1: every state kept,
     * nothing recomputed, while that fits in g->store doubles) */
    int grad = dsched || dc;
    long C = grad && (double)(N + 1) * (double)m > g->store ? (long)ceil(sqrt((double)N)) : 1;
    long nck = grad ? N / C + 1 : 1;
    if (reserve_states(g, nck, C))
        goto out;
    const double *y1 = forward(g, &cs, s, N, C, nck, grad, qf, privacy);
    if (!y1)
        goto out;
    /* objective: R(1) + the final-iterate jump */
    double eta1 = hdp_sched_eta(s, 1.0);
    double r2 = s->rho * s->rho;
    double Fv = hdp_rode_risk(&cs.ode, y1) + hdp_rode_final_noise(&cs.ode, eta1);
    if (cs.data) /* the data set's corrections (ode_grad.h) */
        Fv += extra_value(g, y1);
    if (!isfinite(Fv))
        goto out;
    if (!grad) {
        F = Fv;
        goto out;
    }

    /* reverse */
    if (dsched) memset(dsched, 0, sizeof(double) * (size_t)np);
    double dcv = 0;
    double *dcp = dc && g->data_model != 1 ? &dcv : NULL;
    if (privacy)
        final_jump_grad(s, qf, c, eta1, r2, dsched, dcp);
    if (reverse(g, &cs, s, N, C, nck, qf, privacy, y1, dsched, dcp))
        goto out;
    if (dc) *dc = g->data_model == 1 ? NAN : dcv; /* ode_grad.h: c fixed by the bias */
    F = Fv;
out: /* the factors stay with the hdp_ode_grad */
    return F;
}

/* ---- bins ---- */

/* a trial of bins = auto (risk_ode.h): the model's own schedule */
typedef struct {
    hdp_ode_grad *g;
    hdp_schedule s;
    double c;
} auto_trial;

static hdp_status trial_eval(void *ctx, const hdp_spectrum *spec, long k, double *risk,
                             hdp_error *err)
{
    auto_trial *a = ctx;
    drop_scratch(a->g); /* m changes: scratch and states reallocated */
    a->g->ns = spec->m;
    *risk = hdp_ode_grad_eval(a->g, &a->s, a->c, NULL, NULL);
    if (!isfinite(*risk))
        return hdp_fail(err, HDP_ENUMERIC,
                        "the risk ODE of the model's own schedule is not finite (%ld bins)", k);
    return HDP_OK;
}

hdp_status hdp_ode_grad_init_problem(hdp_ode_grad *g, const hdp_problem *pb, hdp_error *err)
{
    HDP_ZERO(g);
    HDP_REQUIRE(err, g);
    HDP_REQUIRE(err, pb);
    if (hdp_problem_check(pb, NULL, "hdp_ode_grad_init_problem", err) != HDP_OK ||
        hdp_model_require_one_pass(pb->model, "the risk ODE's gradient (schedule design)", err) !=
            HDP_OK)
        return HDP_EINPUT;
    const hdp_model *m = pb->model;
    if (m->ode_discrete) /* docs/theory.md §3.6: not carried by the adjoint */
        return hdp_fail(err, HDP_EINPUT,
                        "the exact gradient of the risk ODE does not carry ode.discrete's "
                        "one-step term (docs/theory.md §3.6): design with --method simplex, or "
                        "ode.discrete = false");
    if (hdp_rode_weights_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    *g = (hdp_ode_grad){.gamma = m->gamma, .rho = m->rho, .kappa = hdp_rode_kappa(m),
                        .R0 = 0.5 * m->target_radius * m->target_radius, .noise = m->noise,
                        .tau2 = m->tau2, .df = m->noise_df, .base_steps = 256,
                        .store = (double)HDP_GRAD_STORE, .rel_step = 1.0 / 32.0};
    hdp_noise_law_of_model(m, &g->law);
    if (g->law.sample) { /* the model may go before g */
        g->law_sample = malloc(sizeof(double) * g->law.n);
        if (!g->law_sample)
            return hdp_fail(err, HDP_ENOMEM, "out of memory for the label-noise sample");
        memcpy(g->law_sample, g->law.sample, sizeof(double) * g->law.n);
        g->law.sample = g->law_sample;
    }
    g->clip_range = pb->threshold; /* the range of the problem's factors */
    if (hdp_model_data(m)) { /* the rows' factors at the model's c (clip_rows.c): the
                                  problem's, borrowed (fitted once, seconds on 60 000 rows) */
        g->data_model = hdp_model_data(m)->planted ? 2 : 1;
        g->model = m;
        g->clip_c = m->c;
        g->clip = g->pb_clip = pb->clip;
        g->clip_borrowed = 1;
    }
    hdp_status st = hdp_spectrum_copy(&pb->spec, &g->spec, err);
    g->ns = g->spec.m;
    if (st == HDP_OK && m->bins == HDP_BINS_AUTO) {
        /* bins = auto, as hdp_ode_solve chooses them: on the ODE before a data set's
         * corrections, as its trials */
        auto_trial a = {g, pb->sched, m->c};
        st = hdp_rode_auto_bins(m, &g->spec, trial_eval, &a, err);
        drop_scratch(g); /* sized for the last trial's bins */
    }
    if (st == HDP_OK) /* the data set's corrections on the final bins (ode_grad.h) */
        st = hdp_data_grad_terms(m, &g->spec, pb->clip, &g->data, err);
    if (st == HDP_OK && hdp_rode_wants_direction(m)) /* the bins' weights, once (risk_ode.h) */
        st = hdp_rode_direction_weights(&g->spec, pb->clip, hdp_rode_wants_direction(m) == 2,
                                        &g->dir_wa, &g->dir_wb, &g->dir_ng, err);
    if (st == HDP_OK)
        g->ns = g->data.on ? 2 * g->spec.m + 1 : g->spec.m;
    return st;
}

hdp_status hdp_ode_grad_init(hdp_ode_grad *g, const hdp_model *m, hdp_error *err)
{
    HDP_ZERO(g);
    HDP_REQUIRE(err, g);
    HDP_REQUIRE(err, m);
    hdp_problem pb; /* checks m */
    hdp_status st = hdp_problem_build_solver(m, &pb, err);
    if (st == HDP_OK)
        st = hdp_ode_grad_init_problem(g, &pb, err);
    if (st == HDP_OK && g->pb_clip) { /* the problem goes: its factors become g's */
        pb.clip = NULL;
        g->pb_clip = NULL;
        g->clip_borrowed = 0;
    }
    hdp_problem_free(&pb);
    return st;
}
