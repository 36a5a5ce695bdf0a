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
#include "core/schedule_kinds.h"

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

/* ---- the kinds: eta~(t) (t in [0, 1]), sigma~^2(t) at rho^2 = r2 (finite), int eta~, the
 * number of parameters, eta~ and q with their parameter derivatives, the derivative of
 * eta~(1), the bend scale ---- */

/* constant and output: eta~ = eta0 */
static double flat_eta(const hdp_schedule *s, double t) { (void)t; return s->eta0; }
static double flat_sigma2(const hdp_schedule *s, double t, double r2)
{
    (void)s, (void)t, (void)r2;
    return 0;
}
static double flat_integral(const hdp_schedule *s) { return s->eta0; }
static int one_param(const hdp_schedule *s) { (void)s; return 1; }
static void flat_point(const hdp_schedule *s, int seg, double t, double qf, int privacy,
                       hdp_sched_point *p)
{
    (void)seg, (void)t, (void)qf, (void)privacy;
    p->eta = s->eta0;
    p->n = 1;
    p->de[0] = 1.0;
}
static void flat_final(const hdp_schedule *s, double de1, double *ds) { (void)s; ds[0] += de1; }
static double no_bend(const hdp_schedule *s, double t) { (void)s, (void)t; return INFINITY; }

/* linear-noise: eta~ = eta0 sqrt(1 - t) */
static double linear_eta(const hdp_schedule *s, double t) { return s->eta0 * sqrt(1.0 - t); }
static double linear_sigma2(const hdp_schedule *s, double t, double r2)
{
    (void)t;
    return s->eta0 * s->eta0 / r2;
}
static double linear_integral(const hdp_schedule *s) { return 2.0 * s->eta0 / 3.0; }
static void linear_point(const hdp_schedule *s, int seg, double t, double qf, int privacy,
                         hdp_sched_point *p)
{
    (void)seg;
    double r2 = s->rho * s->rho;
    double r = sqrt(fmax(1.0 - t, 0.0));
    p->eta = s->eta0 * r;
    p->n = 1;
    p->de[0] = r;
    if (privacy) {
        p->q = qf * s->eta0 * s->eta0 / r2;
        p->dq[0] = qf * 2.0 * s->eta0 / r2;
    }
}
static void linear_final(const hdp_schedule *s, double de1, double *ds)
{
    (void)s, (void)de1, (void)ds; /* eta~(1) = 0 */
}
static double linear_bend(const hdp_schedule *s, double t) { (void)s; return 2.0 * (1.0 - t); }

/* optimal (inverse-time): eta~ = c1 / (t + a) */
static double inverse_eta(const hdp_schedule *s, double t) { return s->c1 / (t + s->a); }
static double inverse_sigma2(const hdp_schedule *s, double t, double r2)
{
    double u = t + s->a;
    return 2.0 * s->c1 * s->c1 / (r2 * u * u * u);
}
static double inverse_integral(const hdp_schedule *s) { return s->c1 * log1p(1.0 / s->a); }
static int two_params(const hdp_schedule *s) { (void)s; return 2; }
static void inverse_point(const hdp_schedule *s, int seg, double t, double qf, int privacy,
                          hdp_sched_point *p)
{
    (void)seg;
    double r2 = s->rho * s->rho;
    double u = t + s->a;
    p->eta = s->c1 / u;
    p->n = 2;
    p->de[0] = 1.0 / u;
    p->de[1] = -s->c1 / (u * u);
    if (privacy) {
        double u3 = u * u * u;
        p->q = qf * 2.0 * s->c1 * s->c1 / (r2 * u3);
        p->dq[0] = qf * 4.0 * s->c1 / (r2 * u3);
        p->dq[1] = -qf * 6.0 * s->c1 * s->c1 / (r2 * u3 * u);
    }
}
static void inverse_final(const hdp_schedule *s, double de1, double *ds)
{
    ds[0] += de1 / (1.0 + s->a);
    ds[1] += -de1 * s->c1 / ((1.0 + s->a) * (1.0 + s->a));
}
static double inverse_bend(const hdp_schedule *s, double t) { return t + s->a; }

/* table: piecewise linear through the knots (t_i, eta_i) */
static double table_eta(const hdp_schedule *s, double t)
{
    int i = segment(s, t);
    double u = (t - s->t[i]) / (s->t[i + 1] - s->t[i]);
    return s->eta[i] + u * (s->eta[i + 1] - s->eta[i]);
}
static double table_sigma2(const hdp_schedule *s, double t, double r2)
{
    int i = segment(s, t);
    double slope = (s->eta[i + 1] - s->eta[i]) / (s->t[i + 1] - s->t[i]);
    return -2.0 * table_eta(s, t) * slope / r2;
}
static double table_integral(const hdp_schedule *s)
{
    double integral = 0;
    for (int i = 0; i + 1 < s->len; i++)
        integral += 0.5 * (s->eta[i] + s->eta[i + 1]) * (s->t[i + 1] - s->t[i]);
    return integral;
}
static int table_params(const hdp_schedule *s) { return s->len; }
static void table_point(const hdp_schedule *s, int seg, double t, double qf, int privacy,
                        hdp_sched_point *p)
{
    double r2 = s->rho * s->rho;
    double h = s->t[seg + 1] - s->t[seg];
    double u = (t - s->t[seg]) / h;
    double e0 = s->eta[seg], e1 = s->eta[seg + 1];
    double slope = (e1 - e0) / h;
    p->eta = e0 + u * (e1 - e0);
    p->n = 2;
    p->idx[0] = seg;
    p->idx[1] = seg + 1;
    p->de[0] = 1.0 - u;
    p->de[1] = u;
    if (privacy) {
        /* sigma~^2 = -2 eta~ eta~' / rho^2 */
        p->q = -qf * 2.0 * p->eta * slope / r2;
        p->dq[0] = -qf * 2.0 * ((1.0 - u) * slope - p->eta / h) / r2;
        p->dq[1] = -qf * 2.0 * (u * slope + p->eta / h) / r2;
    }
}
static void table_final(const hdp_schedule *s, double de1, double *ds) { ds[s->len - 1] += de1; }

/* ---- the table of kinds ---- */

typedef struct {
    const char *name;
    double (*eta)(const hdp_schedule *, double t);
    double (*sigma2)(const hdp_schedule *, double t, double r2);
    double (*integral)(const hdp_schedule *);
    int (*params)(const hdp_schedule *);
    void (*point)(const hdp_schedule *, int seg, double t, double qf, int privacy,
                  hdp_sched_point *);
    void (*final_grad)(const hdp_schedule *, double de1, double *ds);
    double (*bend)(const hdp_schedule *, double t);
    int knots; /* piecewise: the knots s->t[0..len-1] are stops of the ODE methods */
} sched_kind;

/* One line per kind: its enum value, its name (schedule.kind), the prefix of its eta, sigma2,
 * integral, point and final functions, its parameter count, its bend and whether its knots
 * are stops. Adding a kind: its enum value in hdpsgd/model.h, one line here, its functions
 * above (and its parameters in hdp_schedule). */
#define KINDS(X)                                                                           \
    X(HDP_SCHED_CONSTANT, "constant", flat, one_param, no_bend, 0)                         \
    X(HDP_SCHED_OUTPUT, "output", flat, one_param, no_bend, 0)                             \
    X(HDP_SCHED_LINEAR_NOISE, "linear-noise", linear, one_param, linear_bend, 0)           \
    X(HDP_SCHED_OPTIMAL, "inverse-time", inverse, two_params, inverse_bend, 0)             \
    X(HDP_SCHED_TABLE, "table", table, table_params, no_bend, 1)

#define ENTRY(k, nm, pre, par, bend, kn)                                                   \
    [k] = {nm, pre##_eta, pre##_sigma2, pre##_integral, par, pre##_point, pre##_final, bend, kn},
#define NAME(k, nm, ...) [k] = nm,

static const sched_kind kinds[] = {KINDS(ENTRY)};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

const char *const hdp_sched_kind_names[] = {KINDS(NAME) NULL};

static const sched_kind *kind_of(const hdp_schedule *s)
{
    return (int)s->kind >= 0 && (int)s->kind < NKINDS ? &kinds[s->kind] : NULL;
}

const char *hdp_sched_name(hdp_sched_kind k)
{
    return (int)k >= 0 && (int)k < NKINDS ? kinds[k].name : "unknown";
}

double hdp_sched_eta(const hdp_schedule *s, double t)
{
    if (!s)
        return NAN;
    const sched_kind *k = kind_of(s);
    return k ? k->eta(s, clamp01(t)) : 0;
}

double hdp_sched_sigma2(const hdp_schedule *s, double t)
{
    if (!s)
        return NAN;
    if (isinf(s->rho))
        return 0;
    const sched_kind *k = kind_of(s);
    return k ? k->sigma2(s, clamp01(t), s->rho * s->rho) : 0;
}

/* the internal entries below: a kind outside the table (a struct filled by hand) has no
 * parameters, a zero point, no bend and no integral */
int hdp_sched_params(const hdp_schedule *s)
{
    const sched_kind *k = kind_of(s);
    return k ? k->params(s) : 0;
}

void hdp_sched_point_at(const hdp_schedule *s, int seg, double t, double qf, int privacy,
                        hdp_sched_point *p)
{
    const sched_kind *k = kind_of(s);
    memset(p, 0, sizeof *p);
    p->idx[1] = 1;
    if (k)
        k->point(s, seg, t, qf, privacy, p);
}

void hdp_sched_final_grad(const hdp_schedule *s, double de1, double *ds)
{
    const sched_kind *k = kind_of(s);
    if (k)
        k->final_grad(s, de1, ds);
}

double hdp_sched_bend(const hdp_schedule *s, double t)
{
    const sched_kind *k = kind_of(s);
    return k ? k->bend(s, t) : INFINITY;
}

double hdp_sched_integral(const hdp_schedule *s)
{
    const sched_kind *k = kind_of(s);
    return k ? k->integral(s) : 0.0;
}

int hdp_sched_knots(const hdp_schedule *s, const double **t)
{
    const sched_kind *k = kind_of(s);
    int n = k && k->knots ? s->len : 0;
    *t = n ? s->t : NULL;
    return n;
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

long hdp_sched_batch_count(long n, long B)
{
    if (n < 1 || B < 1)
        return 0;
    return n / B + (n % B != 0);
}

/* the per-row rate of batch k: eta~ at the mean time of its rows, (kB + (B_k - 1)/2)/n,
 * over n (B = 1: eta~(k/n)/n, hdp_sched_step's eta_k, bit for bit) */
static double batch_rate(const hdp_schedule *s, long n, long B, long K, long k)
{
    long first = k * B, Bk = k < K - 1 ? B : n - first;
    double mid = (double)first + 0.5 * (double)(Bk - 1);
    return hdp_sched_eta(s, mid / (double)n) / (double)n;
}

void hdp_sched_batch_step(const hdp_schedule *s, long n, long B, long k, double *eta_k,
                          double *sigma_k, long *rows)
{
    if (!s || !eta_k || !sigma_k || n < 1 || B < 1)
        return;
    long K = hdp_sched_batch_count(n, B), Bk = k < K - 1 ? B : n - k * B;
    if (rows)
        *rows = Bk;
    double a = batch_rate(s, n, B, K, k);
    *eta_k = (double)Bk * a;
    if (isinf(s->rho)) {
        *sigma_k = 0;
        return;
    }
    /* the noise of the schedule on [t_k, t_{k+1}] (B = 1: hdp_sched_step's) */
    double top = hdp_sched_eta(s, (double)(k * B) / (double)n) / (double)n, var;
    if (k < K - 1) {
        double a1 = hdp_sched_eta(s, (double)((k + 1) * B) / (double)n) / (double)n;
        var = (top * top - a1 * a1) / (s->rho * s->rho);
        if (var < 0) var = 0; /* non-increasing schedules: only rounding can do this */
    } else {
        var = top * top / (s->rho * s->rho);
    }
    *sigma_k = sqrt(var);
}
