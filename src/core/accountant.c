/*
 * accountant.c — privacy accounting of the Poisson-subsampled Gaussian mechanism (DP-SGD as
 * practitioners run it): PLD, RDP with the improved and the classic conversion, calibration of
 * the noise multiplier. See hdpsgd/accountant.h and docs/theory.md §6.5.
 */
#include "hdpsgd/accountant.h"

#include "core/check.h"

#include <complex.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fft_halfcomplex.h>
#include <gsl/gsl_fft_real.h>
#include <gsl/gsl_sf_erf.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>

const char *hdp_accountant_name(hdp_accountant_kind k) { return k == HDP_ACCOUNTANT_RDP ? "rdp" : "pld"; }

long long hdp_accountant_steps_for_epochs(double epochs, double q)
{
    if (!(epochs > 0) || !(q > 0 && q <= 1))
        return 0;
    double t = epochs / q, r = nearbyint(t);
    if (fabs(t - r) <= 1e-9 * r)
        t = r;
    double c = ceil(t);
    return c > (double)HDP_ACCOUNTANT_MAX_STEPS ? HDP_ACCOUNTANT_MAX_STEPS + 1 : (long long)c;
}

/* ---- RDP of the subsampled Gaussian (Mironov, Talwar, Zhang 2019, Sections 3.2-3.3) ---- */

static double log_add(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    double m = fmax(a, b);
    return m + log1p(exp(-fabs(a - b)));
}

/* log(exp(a) - exp(b)) for a >= b; -inf when they are equal */
static double log_sub(double a, double b)
{
    if (b == -INFINITY)
        return a;
    if (!(a > b))
        return -INFINITY;
    return a + log1p(-exp(b - a));
}

/* log A_alpha for an integer alpha: sum_i C(alpha, i) q^i (1-q)^(alpha-i) e^((i^2 - i)/(2 s^2)) */
static double log_a_int(double q, double sigma, long alpha)
{
    double la = -INFINITY, lq = log(q), l1q = log1p(-q);
    for (long i = 0; i <= alpha; i++) {
        double c = gsl_sf_lnchoose((unsigned)alpha, (unsigned)i) + (double)i * lq + (double)(alpha - i) * l1q;
        la = log_add(la, c + ((double)i * (double)i - (double)i) / (2.0 * sigma * sigma));
    }
    return la;
}

/* log A_alpha for a fractional alpha: the two series of Section 3.3, summed until both
 * terms fall below e^-30 (the binomial coefficient's sign alternates past alpha) */
static double log_a_frac(double q, double sigma, double alpha)
{
    double la0 = -INFINITY, la1 = -INFINITY, s2 = sigma * sigma;
    double z0 = s2 * log(1.0 / q - 1.0) + 0.5, lq = log(q), l1q = log1p(-q);
    double lcoef = 0.0; /* log |C(alpha, i)| */
    int sign = 1;
    for (long i = 0; i < 100000; i++) {
        double di = (double)i, j = alpha - di;
        double lt0 = lcoef + di * lq + j * l1q, lt1 = lcoef + j * lq + di * l1q;
        double le0 = log(0.5) + gsl_sf_log_erfc((di - z0) / (M_SQRT2 * sigma));
        double le1 = log(0.5) + gsl_sf_log_erfc((z0 - j) / (M_SQRT2 * sigma));
        double ls0 = lt0 + (di * di - di) / (2.0 * s2) + le0;
        double ls1 = lt1 + (j * j - j) / (2.0 * s2) + le1;
        if (sign > 0) {
            la0 = log_add(la0, ls0);
            la1 = log_add(la1, ls1);
        } else {
            la0 = log_sub(la0, ls0);
            la1 = log_sub(la1, ls1);
        }
        if (fmax(ls0, ls1) < -30.0)
            break;
        /* C(alpha, i+1) = C(alpha, i) (alpha - i)/(i + 1) */
        double f = (alpha - di) / (di + 1.0);
        if (f == 0.0)
            break;
        if (f < 0)
            sign = -sign;
        lcoef += log(fabs(f));
    }
    return log_add(la0, la1);
}

double hdp_rdp_subsampled_gaussian(double q, double sigma, double alpha)
{
    if (!(q >= 0 && q <= 1) || !(sigma > 0) || !(alpha > 1))
        return NAN;
    if (q == 0)
        return 0.0;
    if (q == 1)
        return alpha / (2.0 * sigma * sigma);
    if (isinf(alpha))
        return INFINITY;
    hdp_gsl_quiet();
    double la = (alpha == floor(alpha) && alpha < 1e6) ? log_a_int(q, sigma, (long)alpha)
                                                        : log_a_frac(q, sigma, alpha);
    return la / (alpha - 1.0);
}

/* The orders of TensorFlow Privacy's compute_dp_sgd_privacy (1.1 ... 10.9, 12 ... 63), and a
 * few larger ones for small epsilons. */
static int rdp_orders(double *a)
{
    int n = 0;
    for (int x = 1; x < 100; x++)
        a[n++] = 1.0 + x / 10.0;
    for (int x = 12; x < 64; x++)
        a[n++] = x;
    static const double big[] = {80, 96, 128, 256, 512, 1024};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        a[n++] = big[i];
    return n;
}
#define RDP_MAX_ORDERS 160

/* epsilon at delta from T steps' RDP, by the improved (Balle et al. 2020) and the classic
 * conversion; each with its optimal order */
static void rdp_epsilons(double q, double sigma, long long steps, double delta, double *eps,
                         double *order, double *eps_classic, double *order_classic)
{
    double a[RDP_MAX_ORDERS];
    int n = rdp_orders(a);
    *eps = *eps_classic = INFINITY;
    *order = *order_classic = NAN;
    for (int i = 0; i < n; i++) {
        double r = (double)steps * hdp_rdp_subsampled_gaussian(q, sigma, a[i]);
        if (!(r >= 0) || isinf(r))
            continue;
        double ec = r - log(delta) / (a[i] - 1.0), e;
        if (delta * delta + expm1(-r) >= 0)
            e = 0.0;
        else
            e = a[i] > 1.01 ? r + log1p(-1.0 / a[i]) - log(delta * a[i]) / (a[i] - 1.0) : INFINITY;
        if (e < *eps) {
            *eps = fmax(e, 0.0);
            *order = a[i];
        }
        if (ec < *eps_classic) {
            *eps_classic = fmax(ec, 0.0);
            *order_classic = a[i];
        }
    }
}

/* ---- PLD: connect-the-dots discretisation, FFT composition ----
 * One step's pair (P, Q) in each direction (remove: P the mixture (1-q) N(0, s^2) + q N(1, s^2),
 * Q = N(0, s^2); add: the reverse). Its hockey-stick curve delta(eps) = E_P[(1 - e^(eps - L))_+]
 * is convex in e^eps; the PMF on the grid eps_k = k h whose curve interpolates it linearly in
 * e^eps at the grid points dominates the pair (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi,
 * "Connect the dots", 2022), so composing it gives an upper bound. */

typedef struct {
    double q, sigma;
    int add; /* 0: remove, 1: add */
} pld_pair;

/* the remove direction's loss at x: log(1 - q + q e^u), u = (2x - 1)/(2 s^2) */
static double loss_remove(const pld_pair *p, double x)
{
    double u = (2.0 * x - 1.0) / (2.0 * p->sigma * p->sigma);
    if (u > 0)
        return u + log(p->q + (1.0 - p->q) * exp(-u));
    return log1p(p->q * expm1(u));
}

/* delta(eps) of one step */
static double step_delta(const pld_pair *p, double eps)
{
    double q = p->q, s = p->sigma, s2 = s * s;
    if (!p->add) {
        double w = expm1(eps) + q; /* e^eps - (1 - q) */
        if (w <= 0)
            return -expm1(eps);
        double x = s2 * log(w / q) + 0.5;
        double d = q * gsl_cdf_ugaussian_Q((x - 1.0) / s) - w * gsl_cdf_ugaussian_Q(x / s);
        return fmax(d, 0.0);
    }
    double w = expm1(-eps) + q; /* e^-eps - (1 - q) */
    if (w <= 0)
        return 0.0;
    double x = s2 * log(w / q) + 0.5, e = exp(eps);
    double d = gsl_cdf_ugaussian_P(x / s) * (1.0 - e * (1.0 - q)) - e * q * gsl_cdf_ugaussian_P((x - 1.0) / s);
    return fmax(d, 0.0);
}

/* the loss range [lo, hi] outside which X lies with probability ~Q(10) */
static void step_range(const pld_pair *p, double *lo, double *hi)
{
    const double K = 10.0;
    double s = p->sigma;
    if (!p->add) {
        *lo = loss_remove(p, -K * s);
        *hi = loss_remove(p, 1.0 + K * s);
    } else {
        *lo = -loss_remove(p, K * s);
        *hi = -loss_remove(p, -K * s);
    }
}

typedef struct {
    long long k_lo; /* grid index of mass[0] */
    long m;         /* atoms */
    double *mass;   /* mass[i] at loss (k_lo + i) h */
    double inf;     /* mass at +inf */
} pld_pmf;

#define PLD_MAX_ATOMS (1L << 24)
#define PLD_MAX_FFT (1L << 25)
#define PLD_TAIL 1e-15

/* One step's connect-the-dots PMF on the grid of width h */
static hdp_status step_pmf(const pld_pair *p, double h, pld_pmf *out, hdp_error *err)
{
    double lo, hi;
    step_range(p, &lo, &hi);
    /* counted in double: past 2^63 the conversion to long long is undefined (sigma = 1e-10
     * once gave a negative count, a grid of no points and epsilon = 0.1 for infinity) */
    double span = ceil(hi / h) - floor(lo / h) + 1.0;
    if (!(span <= (double)PLD_MAX_ATOMS))
        return hdp_fail(err, HDP_EINPUT,
                        "PLD: one step's privacy loss spans [%g, %g], %.4g grid points of width %g (at most %ld): "
                        "give a larger interval or a larger noise multiplier",
                        lo, hi, span, h, PLD_MAX_ATOMS);
    long long klo = (long long)floor(lo / h), khi = (long long)ceil(hi / h);
    long m = (long)(khi - klo + 1);
    double *d = malloc((size_t)m * sizeof *d), *mass = malloc((size_t)m * sizeof *mass);
    if (!d || !mass) {
        free(d);
        free(mass);
        return hdp_fail(err, HDP_ENOMEM, "PLD: out of memory for %ld grid points", m);
    }
    for (long i = 0; i < m; i++)
        d[i] = step_delta(p, (double)(klo + i) * h);
    /* slopes of the interpolant in s = e^eps; g_prev on [0, s_0] from (0, 1) to (s_0, d_0) */
    double em1 = expm1(h), s0 = exp((double)klo * h);
    double g_prev = (d[0] - 1.0) / s0, total = 0.0;
    for (long i = 0; i < m; i++) {
        double si = exp((double)(klo + i) * h);
        double g = i + 1 < m ? (d[i + 1] - d[i]) / (si * em1) : 0.0;
        mass[i] = fmax(si * (g - g_prev), 0.0);
        if (i > 0)
            total += mass[i];
        g_prev = g;
    }
    out->inf = d[m - 1];
    mass[0] = fmax(1.0 - out->inf - total, 0.0); /* the mass below the grid, moved up to it */
    free(d);
    out->k_lo = klo;
    out->m = m;
    out->mass = mass;
    return HDP_OK;
}

/* log sum_k mass_k e^(lambda l_k), l_k = (k_lo + k) h: the terms as powers of e^(lambda h) from
 * the largest one down (a relative error of a few m eps, covered by the factor 1 + 1e-9) */
static double log_mgf(const pld_pmf *f, double h, double lambda)
{
    long first = 0, last = f->m - 1;
    while (first < last && !(f->mass[first] > 0))
        first++;
    while (last > first && !(f->mass[last] > 0))
        last--;
    long top = lambda > 0 ? last : first, step = lambda > 0 ? -1 : 1;
    double r = exp(-fabs(lambda) * h), w = 1.0, s = 0.0;
    for (long i = top; i >= first && i <= last; i += step, w *= r)
        s += f->mass[i] * w;
    if (!(s > 0))
        return -INFINITY; /* no finite mass */
    return lambda * (double)(f->k_lo + top) * h + log(s * (1.0 + 1e-9));
}

/* The Chernoff bound on the loss beyond which (above for dir = 1, below for dir = -1) the
 * T-fold sum lies with probability <= tail: the best over lambda of
 * dir (T log M(dir lambda) - log tail) / lambda, a function with one minimum in log lambda
 * (golden-section search over lambda from 2^-16 to 2^10; any lambda gives a valid bound). */
static double chernoff_bound(const pld_pmf *f, double h, long long T, double tail, int dir)
{
    double lt = log(tail), a = -16 * M_LN2, b = 10 * M_LN2, g = 0.5 * (sqrt(5.0) - 1.0);
#define CHERNOFF_AT(ll) (((double)T * log_mgf(f, h, dir * exp(ll)) - lt) / exp(ll))
    double x1 = b - g * (b - a), x2 = a + g * (b - a), f1 = CHERNOFF_AT(x1), f2 = CHERNOFF_AT(x2);
    for (int it = 0; it < 30; it++) {
        if (f1 < f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - g * (b - a);
            f1 = CHERNOFF_AT(x1);
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + g * (b - a);
            f2 = CHERNOFF_AT(x2);
        }
    }
#undef CHERNOFF_AT
    return dir * fmin(f1, f2);
}

static size_t next_pow2(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static double complex cpow_int(double complex z, long long T)
{
    double complex r = 1.0;
    while (T > 0) {
        if (T & 1)
            r *= z;
        z *= z;
        T >>= 1;
    }
    return r;
}

/* epsilon at delta of the T-fold composition of one direction's PMF */
static hdp_status composed_epsilon(const pld_pmf *f, double h, long long T, double delta, double *eps,
                                   double *tail_out, hdp_error *err)
{
    /* delta(eps) = extra + sum_{l_J > eps} c_J (1 - e^(eps - l_J)), extra: the tails and the
     * infinite losses */
    double extra = -expm1((double)T * log1p(-f->inf)) + PLD_TAIL;
    *tail_out = extra;
    *eps = INFINITY;
    if (extra >= delta)
        return HDP_OK;
    double wlo = chernoff_bound(f, h, T, PLD_TAIL, -1), whi = chernoff_bound(f, h, T, PLD_TAIL, 1);
    long long Jmin = (long long)T * f->k_lo, Jmax = (long long)T * (f->k_lo + f->m - 1);
    long long Jlo = (long long)floor(wlo / h), Jhi = (long long)ceil(whi / h);
    if (Jlo < Jmin)
        Jlo = Jmin;
    if (Jhi > Jmax)
        Jhi = Jmax;
    if (Jhi < Jlo) { /* no finite loss worth counting */
        *eps = 0.0;
        return HDP_OK;
    }
    long long span = Jhi - Jlo + 1;
    size_t N = next_pow2((size_t)(span > f->m ? span : f->m));
    if (N > (size_t)PLD_MAX_FFT)
        return hdp_fail(err, HDP_EINPUT,
                        "PLD: the composed privacy loss spans %lld grid points of width %g (at most %ld): give a "
                        "larger interval",
                        span, h, PLD_MAX_FFT);
    double *a = calloc(N, sizeof *a);
    if (!a)
        return hdp_fail(err, HDP_ENOMEM, "PLD: out of memory for an FFT of %zu points", N);
    for (long i = 0; i < f->m; i++)
        a[i] = f->mass[i];
    hdp_gsl_quiet();
    gsl_fft_real_radix2_transform(a, 1, N);
    a[0] = creal(cpow_int(a[0], T));
    a[N / 2] = creal(cpow_int(a[N / 2], T));
    for (size_t k = 1; k < N / 2; k++) {
        double complex z = cpow_int(a[k] + I * a[N - k], T);
        a[k] = creal(z);
        a[N - k] = cimag(z);
    }
    gsl_fft_halfcomplex_radix2_inverse(a, 1, N);
    /* scanned from the top */
    double A = 0.0, B = 0.0;
    long long Tklo = (long long)T * f->k_lo, Nn = (long long)N;
    for (long long J = Jhi; J >= Jlo; J--) {
        double lJ = (double)J * h, c = a[(((J - Tklo) % Nn) + Nn) % Nn];
        if (c > 0) {
            A += c;
            B += c * exp(-lJ);
        }
        double lprev = (double)(J - 1) * h;
        double e_at = lprev > 0 ? lprev : 0.0;
        if (extra + A - exp(e_at) * B >= delta || lprev <= 0) {
            double v = (extra + A - delta) / B;
            *eps = v > 1.0 ? log(v) : 0.0;
            if (*eps < e_at)
                *eps = e_at;
            break;
        }
    }
    if (isinf(*eps))
        *eps = 0.0; /* the whole window was scanned: delta(0) <= delta */
    free(a);
    return HDP_OK;
}

static hdp_status pld_epsilon_at(double q, double sigma, long long T, double delta, double h, double *eps,
                                 double *tail, hdp_error *err)
{
    *eps = 0.0;
    *tail = 0.0;
    for (int add = 0; add <= 1; add++) {
        pld_pair p = {q, sigma, add};
        pld_pmf f = {0};
        hdp_status st = step_pmf(&p, h, &f, err);
        double e = 0.0, t = 0.0;
        if (st == HDP_OK)
            st = composed_epsilon(&f, h, T, delta, &e, &t, err);
        free(f.mass);
        if (st != HDP_OK)
            return st;
        *eps = fmax(*eps, e);
        *tail = fmax(*tail, t);
    }
    return HDP_OK;
}

/* ---- public entry points ---- */

static hdp_status check_query(const hdp_accountant_query *q, int need_sigma, hdp_error *err)
{
    if (!(q->sample_rate > 0 && q->sample_rate <= 1))
        return hdp_fail(err, HDP_EINPUT, "sample rate q = %g: expected a number in (0, 1]", q->sample_rate);
    if (need_sigma && !(q->noise_multiplier > 0 && isfinite(q->noise_multiplier)))
        return hdp_fail(err, HDP_EINPUT, "noise multiplier sigma = %g: expected a finite number > 0",
                        q->noise_multiplier);
    if (q->steps < 1 || q->steps > HDP_ACCOUNTANT_MAX_STEPS)
        return hdp_fail(err, HDP_EINPUT, "steps = %lld: expected a whole number from 1 to %lld", q->steps,
                        HDP_ACCOUNTANT_MAX_STEPS);
    if (!(q->delta > 0 && q->delta < 1))
        return hdp_fail(err, HDP_EINPUT, "delta = %g: expected a number in (0, 1)", q->delta);
    if (!(q->pld_interval >= 0 && q->pld_interval <= 0.1))
        return hdp_fail(err, HDP_EINPUT, "PLD interval = %g: expected a number in (0, 0.1] (0: the default 1e-4)",
                        q->pld_interval);
    return HDP_OK;
}

static double interval_of(const hdp_accountant_query *q) { return q->pld_interval > 0 ? q->pld_interval : 1e-4; }

hdp_status hdp_accountant_epsilon(const hdp_accountant_query *q, hdp_accountant_result *out, hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, q);
    HDP_REQUIRE(err, out);
    hdp_status st = check_query(q, 1, err);
    if (st != HDP_OK)
        return st;
    hdp_gsl_quiet();
    double h = interval_of(q), e2 = 0.0, t2 = 0.0;
    st = pld_epsilon_at(q->sample_rate, q->noise_multiplier, q->steps, q->delta, h, &out->epsilon_pld,
                        &out->pld_tail_mass, err);
    if (st == HDP_OK)
        st = pld_epsilon_at(q->sample_rate, q->noise_multiplier, q->steps, q->delta, 2.0 * h, &e2, &t2, err);
    if (st != HDP_OK)
        return st;
    out->epsilon_pld_error = isfinite(e2) && isfinite(out->epsilon_pld) ? fabs(e2 - out->epsilon_pld) : NAN;
    rdp_epsilons(q->sample_rate, q->noise_multiplier, q->steps, q->delta, &out->epsilon_rdp, &out->rdp_order,
                 &out->epsilon_rdp_classic, &out->rdp_order_classic);
    return HDP_OK;
}

hdp_status hdp_accountant_epsilon_of(const hdp_accountant_query *q, hdp_accountant_kind kind, double *epsilon,
                                     hdp_error *err)
{
    HDP_REQUIRE(err, q);
    HDP_REQUIRE(err, epsilon);
    *epsilon = NAN;
    hdp_status st = check_query(q, 1, err);
    if (st != HDP_OK)
        return st;
    hdp_gsl_quiet();
    if (kind == HDP_ACCOUNTANT_PLD) {
        double tail;
        return pld_epsilon_at(q->sample_rate, q->noise_multiplier, q->steps, q->delta, interval_of(q), epsilon,
                              &tail, err);
    }
    double order, ec, oc;
    rdp_epsilons(q->sample_rate, q->noise_multiplier, q->steps, q->delta, epsilon, &order, &ec, &oc);
    return HDP_OK;
}

#define SIGMA_MAX 1e6
#define SIGMA_MIN 1e-3

hdp_status hdp_accountant_calibrate(const hdp_accountant_query *q, hdp_accountant_kind kind, double target,
                                    double *sigma, hdp_error *err)
{
    HDP_REQUIRE(err, q);
    HDP_REQUIRE(err, sigma);
    *sigma = NAN;
    hdp_status st = check_query(q, 0, err);
    if (st != HDP_OK)
        return st;
    if (!(target > 0 && isfinite(target)))
        return hdp_fail(err, HDP_EINPUT, "target epsilon = %g: expected a finite number > 0", target);
    hdp_accountant_query x = *q;
    double lo = NAN, hi = NAN, elo = NAN, ehi = NAN, e;
    /* bracket: eps(hi) <= target < eps(lo), going up or down from sigma = 1 by factors of 2 */
    x.noise_multiplier = 1.0;
    if ((st = hdp_accountant_epsilon_of(&x, kind, &e, err)) != HDP_OK)
        return st;
    double s = 1.0;
    const int down = e <= target; /* sigma = 1 meets the target: halve, else double */
    for (;;) {
        if (down ? !(e > target) : e <= target)
            hi = s, ehi = e;
        else
            lo = s, elo = e;
        if (!isnan(lo) && !isnan(hi))
            break;
        s = down ? s / 2 : s * 2;
        if (s < SIGMA_MIN) {
            *sigma = hi; /* every sigma from SIGMA_MIN up meets the target */
            return HDP_OK;
        }
        if (s > SIGMA_MAX)
            return hdp_fail(err, HDP_EINPUT,
                            "target epsilon = %g at delta = %g, sample rate %g, %lld steps: no noise multiplier "
                            "up to %g meets it",
                            target, q->delta, q->sample_rate, q->steps, SIGMA_MAX);
        x.noise_multiplier = s;
        if ((st = hdp_accountant_epsilon_of(&x, kind, &e, err)) != HDP_OK)
            return st;
    }
    /* Illinois regula falsi on log eps against log sigma, keeping eps(hi) <= target */
    double flo = log(elo) - log(target), fhi = log(ehi > 0 ? ehi : 1e-300) - log(target);
    int side = 0;
    for (int it = 0; it < 100 && hi / lo > 1.0 + 1e-9 && target - ehi > 1e-5 * fmax(1.0, target); it++) {
        double llo = log(lo), lhi = log(hi);
        double ls = isfinite(flo) && isfinite(fhi) && fhi < flo ? lhi - fhi * (lhi - llo) / (fhi - flo)
                                                                : 0.5 * (llo + lhi);
        if (!(ls > llo && ls < lhi))
            ls = 0.5 * (llo + lhi);
        x.noise_multiplier = exp(ls);
        if ((st = hdp_accountant_epsilon_of(&x, kind, &e, err)) != HDP_OK)
            return st;
        double fs = log(e > 0 ? e : 1e-300) - log(target);
        if (e <= target) {
            hi = x.noise_multiplier, ehi = e, fhi = fs;
            if (side == 1)
                flo /= 2;
            side = 1;
        } else {
            lo = x.noise_multiplier, elo = e, flo = fs;
            if (side == -1)
                fhi /= 2;
            side = -1;
        }
    }
    *sigma = hi;
    return HDP_OK;
}
