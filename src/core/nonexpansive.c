/*
 * nonexpansive.c — the precondition of the privacy accountant (docs/theory.md §6.1).
 *
 * Amplification by iteration needs every update map theta -> theta - eta_k clip(g(theta)) to
 * be non-expansive, which for the clipped square loss is eta_k ||x_k||^2 <= 2. With rows
 * x ~ N(0, Sigma), ||x||^2 = sum_i lambda_i g_i^2 is a weighted sum of chi-square(1)
 * variables; this file gives its upper tail, the probability that a step violates the
 * condition, the expected number of violating steps over a run, and what the model key
 * clip.feature_norm (x <- x min(1, B/||x||)) changes.
 *
 * The tail: exact (GSL's chi-square) when all positive weights are equal; otherwise the
 * Lugannani-Rice formula with its second-order term (Daniels, "Tail probability
 * approximations", 1987) at the saddlepoint s of the cumulant generating function
 * K(s) = -1/2 sum_i log(1 - 2 s lambda_i), K'(s) = t, found by Newton's method from the right
 * of the root (K' is increasing and convex on s < 1/(2 lambda_max), so the iterates decrease
 * monotonically to it).
 */
#include "hdpsgd/privacy.h"
#include "core/check.h"

#include <float.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_erf.h>
#include <math.h>
#include <stdlib.h>

/* The derivatives K^(j)(s), j = 0..4, of the cumulant generating function of
 * sum lambda_i g_i^2, neighbours with equal lambda grouped (a sorted spectrum has few groups
 * when it has few distinct values). */
static void cgf(const double *lambda, long d, double s, double k[5])
{
    k[0] = k[1] = k[2] = k[3] = k[4] = 0;
    for (long i = 0; i < d;) {
        double l = lambda[i];
        long m = 1;
        while (i + m < d && lambda[i + m] == l)
            m++;
        i += m;
        if (!(l > 0))
            continue;
        double a = l / (1.0 - 2.0 * s * l), a2 = a * a, w = (double)m;
        k[0] += -0.5 * w * log1p(-2.0 * s * l);
        k[1] += w * a;
        k[2] += w * 2.0 * a2;
        k[3] += w * 8.0 * a2 * a;
        k[4] += w * 48.0 * a2 * a2;
    }
}

/* the root of K'(s) = t: Newton from s0 (K'(s0) >= t), monotone */
static double saddlepoint(const double *lambda, long d, double t, double s0)
{
    double s = s0, k[5];
    for (int it = 0; it < 500; it++) {
        cgf(lambda, d, s, k);
        double step = (k[1] - t) / k[2];
        if (!(step > 0) || !isfinite(step))
            break; /* at the root to rounding */
        s -= step;
        if (step <= 4 * DBL_EPSILON * fmax(fabs(s), DBL_MIN))
            break;
    }
    return s;
}

double hdp_norm2_log_tail(const double *lambda, long d, double t)
{
    if (!lambda || d < 1 || isnan(t))
        return NAN;
    hdp_gsl_quiet();
    double S = 0, lmax = 0, first = 0;
    long groups = 0;
    for (long i = 0; i < d; i++) {
        double l = lambda[i];
        if (!(l >= 0) || isinf(l))
            return NAN;
        if (l > 0) {
            if (groups == 0 || (groups == 1 && l != first))
                groups++;
            if (groups == 1)
                first = l;
        }
        S += l;
        lmax = fmax(lmax, l);
    }
    if (t <= 0)
        return 0.0;
    if (!(lmax > 0))
        return -INFINITY;
    if (groups == 1) { /* lambda chi-square(m): exact */
        long m = 0;
        for (long i = 0; i < d; i++)
            m += lambda[i] > 0;
        double q = gsl_cdf_chisq_Q(t / first, (double)m);
        if (q > 1e-300)
            return log(q);
    }
    /* saddlepoint: s in [(1 - S/t)/(2 lmax), hi], hi = (1 - lmax/t)/(2 lmax) when t > S
     * (one term of K' alone reaches t there), 0 otherwise */
    double s0 = t > S ? (1.0 - lmax / t) / (2.0 * lmax) : 0.0;
    double s = saddlepoint(lambda, d, t, s0), k[5];
    cgf(lambda, d, s, k);
    double w2 = 2.0 * (s * t - k[0]);
    double w = copysign(sqrt(fmax(w2, 0.0)), s), u = s * sqrt(k[2]);
    double k3 = k[3] / pow(k[2], 1.5), k4 = k[4] / (k[2] * k[2]);
    if (fabs(w) < 1e-4 || fabs(u) < 1e-4) {
        /* at the mean: P = 1/2 - k3/(6 sqrt(2 pi)) + O(w) (the formula's limit) */
        cgf(lambda, d, 0.0, k);
        return log(0.5 - k[3] / pow(k[2], 1.5) / (6.0 * sqrt(2.0 * M_PI)));
    }
    double corr = 1.0 / u - 1.0 / w + (k4 / 8.0 - 5.0 * k3 * k3 / 24.0) / u -
                  k3 / (2.0 * u * u) - 1.0 / (u * u * u) + 1.0 / (w * w * w);
    double logphi = -0.5 * w * w - 0.5 * log(2.0 * M_PI);
    if (w < 0) { /* below the mean: no underflow to fear */
        double p = gsl_cdf_ugaussian_Q(w) + exp(logphi) * corr;
        return log(fmin(fmax(p, DBL_MIN), 1.0));
    }
    /* P = phi(w) (Q(w)/phi(w) + corr), Q/phi = 1/hazard(w) (GSL: stable in the tail) */
    double inner = 1.0 / gsl_sf_hazard(w) + corr;
    if (!(inner > 0))
        inner = 1.0 / gsl_sf_hazard(w); /* first order only (never seen: corr is O(1/w^3)) */
    return logphi + log(inner);
}

double hdp_feature_norm_bound(const hdp_model *m)
{
    if (!m)
        return NAN;
    if (m->feature_norm != HDP_AUTO_DOUBLE)
        return m->feature_norm;
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    double eta_max = hdp_sched_eta_sup(&s) / (double)m->n; /* = hdp_sched_step's eta_0 */
    double B = sqrt(2.0 / eta_max);
    while (eta_max * (B * B) > 2.0) /* rounding: the largest B with eta_max B^2 <= 2 */
        B = nextafter(B, 0.0);
    return B;
}

/* the precondition's tail for a step of size eta: P(eta ||x'||^2 > 2), x' the clipped row;
 * lmax and S the largest eigenvalue and the trace. 0 without the saddlepoint when the
 * Chernoff bound P <= exp(K(s) - s t), at the s where Newton's method would start, is below
 * the smallest double (one pass over the eigenvalues instead of a dozen). */
static double step_prob(const double *lambda, long d, double eta, double B2, double lmax, double S)
{
    if (!(eta * B2 > 2.0))
        return 0.0;
    double t = 2.0 / eta;
    if (t > S && lmax > 0) {
        double s0 = (1.0 - lmax / t) / (2.0 * lmax), k[5];
        cgf(lambda, d, s0, k);
        if (k[0] - s0 * t < -760.0)
            return 0.0;
    }
    return exp(hdp_norm2_log_tail(lambda, d, t));
}

/* what the sum over the steps needs */
typedef struct {
    const double *lambda;
    long d, n;
    double B2, lmax, S;
    hdp_schedule sched;
} steps_ctx;

static double prob_at(const steps_ctx *c, long k)
{
    double eta, sigma;
    hdp_sched_step(&c->sched, c->n, k, &eta, &sigma);
    return step_prob(c->lambda, c->d, eta, c->B2, c->lmax, c->S);
}

/* sum_k P_k bounded over blocks [a, b) of steps: P_k is non-increasing in k (so is eta_k), so
 * the block holds between (b - a) P_{b-1} and (b - a) P_a; the block where the two differ most
 * is split in two until `budget` evaluations are spent or the bounds agree to 1e-9 */
static hdp_status block_bounds(const steps_ctx *c, long budget, hdp_nonexpansive *out,
                               hdp_error *err)
{
    long cap = budget / 2 + 2, m = 1, evals = 2;
    long *a = malloc(sizeof(long) * (size_t)cap), *b = malloc(sizeof(long) * (size_t)cap);
    double *pf = malloc(sizeof(double) * (size_t)cap), *pl = malloc(sizeof(double) * (size_t)cap);
    if (!a || !b || !pf || !pl) {
        free(a), free(b), free(pf), free(pl);
        return hdp_fail(err, HDP_ENOMEM, "hdp_nonexpansive_eval: out of memory");
    }
    a[0] = 0;
    b[0] = c->n;
    pf[0] = prob_at(c, 0);
    pl[0] = pf[0] > 0 ? prob_at(c, c->n - 1) : 0.0;
    while (m < cap && evals + 2 <= budget && pf[0] > 0) {
        long w = -1;
        double gap = 0, hi = 0;
        for (long j = 0; j < m; j++) {
            double g = (double)(b[j] - a[j]) * (pf[j] - pl[j]);
            hi += (double)(b[j] - a[j]) * pf[j];
            if (b[j] - a[j] > 1 && g > gap) {
                gap = g;
                w = j;
            }
        }
        if (w < 0 || gap <= 1e-9 * hi)
            break;
        long mid = a[w] + (b[w] - a[w]) / 2; /* [a, mid) and [mid, b) */
        a[m] = mid;
        b[m] = b[w];
        pl[m] = pl[w];
        pf[m] = prob_at(c, mid);
        b[w] = mid;
        pl[w] = prob_at(c, mid - 1);
        m++;
        evals += 2;
    }
    double hi = 0, lo = 0;
    for (long j = 0; j < m; j++) {
        hi += (double)(b[j] - a[j]) * pf[j];
        lo += (double)(b[j] - a[j]) * pl[j];
    }
    out->expected = hi;
    out->expected_lower = lo;
    out->exact = 0;
    out->blocks = m;
    free(a), free(b), free(pf), free(pl);
    return HDP_OK;
}

/* sum over k of P_k: every step when n x distinct eigenvalues is at most 5e7 (once P_k is 0,
 * below the smallest double, the rest is 0 too), else bounded over blocks (block_bounds) with
 * at most about 2e7 / distinct eigenvalues evaluations, between 128 and 8192 */
static hdp_status expected_violations(const hdp_model *m, const double *lambda, long d,
                                      double B2, long groups, hdp_nonexpansive *out,
                                      hdp_error *err)
{
    steps_ctx c = {lambda, d, m->n, B2, 0, 0, {0}};
    hdp_sched_from_model(m, &c.sched);
    for (long i = 0; i < d; i++) {
        c.lmax = fmax(c.lmax, lambda[i]);
        c.S += lambda[i];
    }
    if ((double)c.n * (double)groups > 5e7)
        return block_bounds(&c, (long)fmax(128.0, fmin(8192.0, 2e7 / (double)groups)), out, err);
    double sum = 0, last_eta = NAN, last_p = 0, eta, sigma;
    for (long k = 0; k < c.n; k++) {
        hdp_sched_step(&c.sched, c.n, k, &eta, &sigma);
        if (eta != last_eta) { /* constant stretches: one evaluation */
            last_p = step_prob(lambda, d, eta, B2, c.lmax, c.S);
            last_eta = eta;
            if (last_p == 0)
                break;
        }
        sum += last_p;
    }
    out->expected = out->expected_lower = sum;
    out->exact = 1;
    return HDP_OK;
}

typedef struct {
    const double *lambda;
    long d;
    double b;
} tail_args;

static double tail_above(double x, void *p)
{
    const tail_args *a = p;
    return exp(hdp_norm2_log_tail(a->lambda, a->d, a->b + x));
}

/* E[(||x||^2 - b)_+] = int_0^inf P(||x||^2 > b + x) dx (GSL's QAGIU) */
static double excess_moment(const double *lambda, long d, double b, hdp_error *err, int *ok)
{
    tail_args a = {lambda, d, b};
    gsl_function F = {tail_above, &a};
    double r = 0, abserr = 0;
    hdp_gsl_quiet();
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
    if (!w) {
        *ok = 0;
        hdp_fail(err, HDP_ENOMEM, "hdp_nonexpansive_eval: out of memory");
        return NAN;
    }
    int st = gsl_integration_qagiu(&F, 0.0, 0.0, 1e-7, 200, w, &r, &abserr);
    gsl_integration_workspace_free(w);
    if (st != GSL_SUCCESS && !(abserr <= 1e-4 * fabs(r))) {
        *ok = 0;
        hdp_fail(err, HDP_ENUMERIC,
                 "hdp_nonexpansive_eval: the moment above clip.feature_norm did not converge "
                 "(GSL: %s)", gsl_strerror(st));
        return NAN;
    }
    *ok = 1;
    return r;
}

hdp_status hdp_nonexpansive_eval(const hdp_model *m, const double *lambda, long d,
                                 hdp_nonexpansive *out, hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, lambda);
    HDP_REQUIRE(err, out);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (d != m->d)
        return hdp_fail(err, HDP_EINPUT,
                        "hdp_nonexpansive_eval: %ld eigenvalues for a model of d = %ld", d, m->d);
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    double trace = 0;
    long groups = 0;
    for (long i = 0; i < d; i++) {
        if (!(lambda[i] >= 0) || isinf(lambda[i]))
            return hdp_fail(err, HDP_EINPUT, "hdp_nonexpansive_eval: eigenvalue %ld is %g", i,
                            lambda[i]);
        trace += lambda[i];
        groups += i == 0 || lambda[i] != lambda[i - 1];
    }
    double eta, sigma;
    hdp_sched_step(&s, m->n, 0, &eta, &sigma);
    out->eta_max = eta;
    out->threshold = 2.0 / eta;
    out->feature_norm = hdp_feature_norm_bound(m);
    double B = out->feature_norm, B2 = B > 0 ? B * B : INFINITY;
    if (eta * B2 > 2.0) {
        double lp = hdp_norm2_log_tail(lambda, d, out->threshold);
        out->p_step = exp(lp);
        out->log10_p_step = lp / M_LN10;
    } else {
        out->p_step = 0;
        out->log10_p_step = -INFINITY;
    }
    hdp_status st = expected_violations(m, lambda, d, B2, groups, out, err);
    if (st != HDP_OK)
        return st;
    if (B > 0) {
        out->clip_fraction = exp(hdp_norm2_log_tail(lambda, d, B2));
        int ok = 1;
        double em = out->clip_fraction > 0 ? excess_moment(lambda, d, B2, err, &ok) : 0.0;
        if (!ok)
            return err ? err->status : HDP_ENUMERIC;
        out->clip_moment = trace > 0 ? em / trace : 0.0;
    }
    return HDP_OK;
}
