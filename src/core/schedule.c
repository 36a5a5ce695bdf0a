/*
 * schedule.c — learning-rate schedules (docs/theory.md §5) and their
 * discretisation (docs/theory.md §1).
 *
 *   constant      eta0                      sigma~^2 = 0 (rho = inf)
 *   output        eta0                      sigma~^2 = 0 on [0,1); final-step noise
 *   linear-noise  eta0 sqrt(1 - t)          sigma~^2 = eta0^2 / rho^2
 *   optimal       c1 / (t + a)              sigma~^2 = 2 c1^2 / (rho^2 (t + a)^3)
 *   table         piecewise linear knots    sigma~^2 = -2 eta~ eta~' / rho^2
 */
#include "hdpsgd/schedule.h"

#include <math.h>
#include <string.h>

void hdp_sched_from_model(const hdp_model *m, hdp_schedule *s)
{
    if (!s)
        return;
    if (!m) {
        memset(s, 0, sizeof *s);
        return;
    }
    s->kind = m->sched;
    s->eta0 = m->eta0;
    s->c1 = m->c1;
    s->rho = m->rho;
    s->a = m->gamma * fmax(m->c2, isinf(m->rho) ? 0.0 : m->c3 / m->rho);
    s->len = m->table_len;
    s->t = m->table_t;
    s->eta = m->table_eta;
}

/* Index i of the table segment [t_i, t_{i+1}] holding t (right-continuous). */
static int segment(const hdp_schedule *s, double t)
{
    int lo = 0, hi = s->len - 1; /* invariant: t_lo <= t < t_hi, or t = 1 */
    if (t >= s->t[hi])
        return hi - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (s->t[mid] <= t) lo = mid;
        else hi = mid;
    }
    return lo;
}

static double clamp01(double t) { return t < 0 ? 0 : (t > 1 ? 1 : t); }

double hdp_sched_eta(const hdp_schedule *s, double t)
{
    if (!s)
        return NAN;
    t = clamp01(t);
    switch (s->kind) {
    case HDP_SCHED_CONSTANT:
    case HDP_SCHED_OUTPUT: return s->eta0;
    case HDP_SCHED_LINEAR_NOISE: return s->eta0 * sqrt(1.0 - t);
    case HDP_SCHED_OPTIMAL: return s->c1 / (t + s->a);
    case HDP_SCHED_TABLE: {
        int i = segment(s, t);
        double u = (t - s->t[i]) / (s->t[i + 1] - s->t[i]);
        return s->eta[i] + u * (s->eta[i + 1] - s->eta[i]);
    }
    }
    return 0;
}

double hdp_sched_sigma2(const hdp_schedule *s, double t)
{
    if (!s)
        return NAN;
    if (isinf(s->rho))
        return 0;
    t = clamp01(t);
    double r2 = s->rho * s->rho;
    switch (s->kind) {
    case HDP_SCHED_CONSTANT:
    case HDP_SCHED_OUTPUT: return 0;
    case HDP_SCHED_LINEAR_NOISE: return s->eta0 * s->eta0 / r2;
    case HDP_SCHED_OPTIMAL: {
        double u = t + s->a;
        return 2.0 * s->c1 * s->c1 / (r2 * u * u * u);
    }
    case HDP_SCHED_TABLE: {
        int i = segment(s, t);
        double slope = (s->eta[i + 1] - s->eta[i]) / (s->t[i + 1] - s->t[i]);
        return -2.0 * hdp_sched_eta(s, t) * slope / r2;
    }
    }
    return 0;
}

double hdp_sched_eta_sup(const hdp_schedule *s) { return hdp_sched_eta(s, 0.0); }

void hdp_sched_step(const hdp_schedule *s, long n, long k, double *eta_k, double *sigma_k)
{
    if (!s || !eta_k || !sigma_k)
        return;
    double e = hdp_sched_eta(s, (double)k / (double)n) / (double)n;
    *eta_k = e;
    if (isinf(s->rho)) {
        *sigma_k = 0;
        return;
    }
    double var;
    if (k < n - 1) {
        double e1 = hdp_sched_eta(s, (double)(k + 1) / (double)n) / (double)n;
        var = (e * e - e1 * e1) / (s->rho * s->rho);
        if (var < 0) var = 0; /* non-increasing schedules: only rounding can do this */
    } else {
        var = e * e / (s->rho * s->rho);
    }
    *sigma_k = sqrt(var);
}
