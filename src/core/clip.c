/*
 * clip.c — clipping factors mu_c, nu_c, V_c (docs/theory.md §2).
 *
 * Gaussian label noise (and none): r ~ N(0, 2s), s = R + tau^2/2,
 *   a  = c / (2 sqrt(s))
 *   mu = erf(a)
 *   nu = erf(a) - (2a/sqrt(pi)) e^{-a^2} + 2 a^2 erfc(a)
 * and, differentiating (d nu/da = 4 a erfc(a), da/dR = -a/(2s)):
 *   dmu/dR = -a e^{-a^2} / (sqrt(pi) s)
 *   dV/dR  = nu - 2 a^2 erfc(a)
 * For small a the difference erf(a) - (2a/sqrt(pi)) e^{-a^2} cancels; its
 * series (2/sqrt(pi)) (2a^3/3 - 2a^5/5 + a^7/7) is used below a = 1e-2
 * (truncation error a^9/27 relative 1e-13).
 *
 * Other laws: r = G - z with G ~ N(0, 2R). For fixed z, r ~ N(m, s^2) with
 * m = -z, s = sqrt(2R), alpha = (-c - m)/s, beta = (c - m)/s:
 *   P(|r| < c)         = Phi(beta) - Phi(alpha)
 *   E[r^2 1{|r| < c}]  = (m^2 + s^2) dPhi + 2 m s (phi(alpha) - phi(beta))
 *                        + s^2 (alpha phi(alpha) - beta phi(beta))
 *   E[min(r^2, c^2)]   = the above + c^2 (1 - P(|r| < c)).
 * These are integrated against the density of z (GSL qagi) or summed over
 * the two Rademacher atoms.
 * Student-t with df = nu >= HDP_CLIP_STUDENT_ASYMPTOTIC_DF (clip.h): the standardised t density
 * is phi(u) (1 + He4(u)/(4 nu)) + O(nu^-2), and E[g(tau u) He4(u)] = tau^4 E[g''''(tau u)]; a
 * fourth derivative in z is a second one in s = R + tau^2/2 (the variance of r is 2 s), so
 * H_t = H + tau^4/(4 nu) H''(s) for H = mu, V (docs/theory.md §2.3; measured against the
 * quadrature: relative error 1.3/nu^2 at worst).
 * Narrow windows: when 2c/s is small (c << s: heavy clipping, or a large R),
 * P(|r| < c) ~ 2c phi/s is the difference of two nearly equal values of Phi and
 * the moment formula cancels s^2 P against terms of the same size: at c = 1e-6,
 * R = 100 the moment lost 5 digits, at R = 1e11 all of them. There both are
 * integrals over |r| < c of a density that varies little across the window, and
 * an 8-point Gauss-Legendre rule (Abramowitz-Stegun 25.4.30, table 25.4) over
 * r in [-c, c] is exact to rounding (the log-density varies by at most 1 across
 * the window; the error of the rule on e^{x/2} over [-1, 1] is below 1e-18).
 * Windows wholly in the upper tail use the complement Q = 1 - Phi.
 */
#include "hdpsgd/clip.h"
#include "hdpsgd/error.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QUAD_LIMIT 1000

#include "core/check.h"
#include "core/clip_internal.h"
#include "hdpsgd/dataset.h"

/* log Gamma((nu+1)/2) - log Gamma(nu/2), the log of the Student-t normaliser without the
 * cancellation of the two log-gammas (each ~ (nu/2) log(nu/2): at nu = 1e8 their difference
 * kept 8 digits, at nu = 1e16 none): for x = nu/2 >= 25 Stirling's series of
 * log Gamma(x + 1/2) - log Gamma(x) = (1/2) log x + sum_n (-1)^(n+1) (B_{n+1}(1/2) -
 * B_{n+1}) / (n (n+1) x^n) (Bernoulli polynomials; the even terms vanish), truncated after
 * x^-9: the next term is below 2e-18 at x = 25. Below, the difference itself (lgamma(25) = 54:
 * absolute error ~ 1e-14). */
static double log_t_normaliser(double nu)
{
    double x = 0.5 * nu;
    if (x < 25.0)
        return lgamma(x + 0.5) - lgamma(x);
    double y = 1.0 / (x * x);
    double series = (-1.0 / 8.0 +
                     y * (1.0 / 192.0 +
                          y * (-1.0 / 640.0 + y * (17.0 / 14336.0 + y * (-31.0 / 18432.0))))) /
                    x;
    return 0.5 * log(x) + series;
}

double hdp_noise_mixture_tau2(double w, double m1, double v1, double v2)
{
    double m2 = -w * m1 / (1.0 - w);
    return w * (v1 + m1 * m1) + (1.0 - w) * (v2 + m2 * m2);
}

static int cmp_double(const void *a, const void *b);

/* clip's empirical sample: |z_i| ascending and the prefix sums of their squares; 0, or -1 out
 * of memory */
static int set_sample(hdp_clip *clip, const double *z, size_t n, int already_abs_sorted)
{
    clip->emp_a = malloc(sizeof(double) * (n ? n : 1));
    clip->emp_s2 = malloc(sizeof(double) * (n + 1));
    if (!clip->emp_a || !clip->emp_s2)
        return -1;
    for (size_t i = 0; i < n; i++)
        clip->emp_a[i] = already_abs_sorted ? z[i] : fabs(z[i]);
    if (!already_abs_sorted)
        qsort(clip->emp_a, n, sizeof(double), cmp_double);
    clip->emp_s2[0] = 0;
    for (size_t i = 0; i < n; i++)
        clip->emp_s2[i + 1] = clip->emp_s2[i] + clip->emp_a[i] * clip->emp_a[i];
    clip->emp_n = n;
    return 0;
}

/* clip's law (no workspace): NULL out of memory */
static hdp_clip *law_alloc(const hdp_noise_law *law, double c)
{
    hdp_clip *clip = calloc(1, sizeof *clip);
    if (!clip)
        return NULL;
    hdp_noise_kind noise = law->kind;
    double tau2 = law->tau2, df = law->df;
    clip->noise = noise;
    clip->tau2 = noise == HDP_NOISE_NONE ? 0.0 : tau2;
    clip->df = df;
    clip->c = c;
    clip->zscale = sqrt(clip->tau2);
    clip->t_scale = noise == HDP_NOISE_STUDENT ? sqrt(tau2 * (1.0 - 2.0 / df)) : 0.0;
    if (noise == HDP_NOISE_STUDENT && clip->t_scale > 0) {
        clip->t_lognorm = log_t_normaliser(df) - 0.5 * log(df * M_PI) - log(clip->t_scale);
        clip->asymptotic = df >= HDP_CLIP_STUDENT_ASYMPTOTIC_DF;
        clip->zscale = clip->t_scale;
    }
    if (noise == HDP_NOISE_UNIFORM)
        clip->edge = sqrt(3.0 * clip->tau2);
    if (noise == HDP_NOISE_MIXTURE) {
        clip->mix_w = law->mix_w;
        clip->mix_m1 = law->mix_m1;
        clip->mix_v1 = law->mix_v1;
        clip->mix_v2 = law->mix_v2;
        clip->mix_m2 = -law->mix_w * law->mix_m1 / (1.0 - law->mix_w);
    }
    if (noise == HDP_NOISE_EMPIRICAL && set_sample(clip, law->sample, law->n, 0) != 0) {
        hdp_clip_free(clip);
        return NULL;
    }
    return clip;
}

hdp_clip *hdp_clip_alloc_law(const hdp_noise_law *law, double c)
{
    if (!law || (law->kind == HDP_NOISE_EMPIRICAL && (!law->sample || law->n < 1)))
        return NULL;
    hdp_clip *clip = law_alloc(law, c);
    if (!clip)
        return NULL;
    hdp_gsl_quiet(); /* a failed allocation returns NULL, never aborts (issue 29) */
    clip->ws = gsl_integration_workspace_alloc(QUAD_LIMIT);
    if (!clip->ws) {
        hdp_clip_free(clip);
        return NULL;
    }
    return clip;
}

hdp_clip *hdp_clip_alloc(hdp_noise_kind noise, double tau2, double df, double c)
{
    /* mixture: the default models' symmetric shape (w = 1/2, m1 = 0.8 tau, v = 0.36 tau^2) */
    hdp_noise_law law = {noise, tau2, df, 0.5, 0.8 * sqrt(tau2), 0.36 * tau2, 0.36 * tau2,
                         NULL, 0};
    return hdp_clip_alloc_law(&law, c);
}

hdp_clip *hdp_clip_clone_law(const hdp_clip *clip)
{
    hdp_clip *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    *k = *clip;
    k->ws = NULL;
    k->pieces = NULL;
    k->npieces = k->cap = 0;
    k->shared = NULL;
    k->emp_a = k->emp_s2 = NULL;
    k->memo_key = NULL;
    k->memo_val = NULL;
    k->memo_gen = NULL;
    k->memo_state = 0;
    if (clip->noise == HDP_NOISE_EMPIRICAL && set_sample(k, clip->emp_a, clip->emp_n, 1) != 0) {
        hdp_clip_free(k);
        return NULL;
    }
    return k;
}

int hdp_clip_same_law(const hdp_clip *a, const hdp_clip *b)
{
    if (a->noise != b->noise || a->tau2 != b->tau2 || a->df != b->df || a->c != b->c)
        return 0;
    if (a->noise == HDP_NOISE_MIXTURE)
        return a->mix_w == b->mix_w && a->mix_m1 == b->mix_m1 && a->mix_v1 == b->mix_v1 &&
               a->mix_v2 == b->mix_v2;
    if (a->noise == HDP_NOISE_EMPIRICAL)
        return a->emp_n == b->emp_n && !memcmp(a->emp_a, b->emp_a, sizeof(double) * a->emp_n);
    return 1;
}

void hdp_noise_law_of_model(const hdp_model *m, hdp_noise_law *law)
{
    *law = (hdp_noise_law){m->noise, m->tau2, m->noise_df, m->mixture_weight, m->mixture_mean,
                           m->mixture_var1, m->mixture_var2, m->noise_values,
                           m->noise_values ? (size_t)m->noise_len : 0};
    const hdp_data *data = hdp_model_data(m);
    if (!data || data->planted || !data->train.has_labels)
        return;
    /* a least-squares target (docs/theory.md §9): the label noise is the empirical law of the
     * residuals, at theta_c for a finite c (the shifted problem), else at theta* */
    const hdp_data_bias *b = NULL;
    hdp_error ignore;
    hdp_error_clear(&ignore);
    law->kind = HDP_NOISE_EMPIRICAL;
    if (hdp_data_bias_of(m, &b, &ignore) == HDP_OK && b) {
        law->sample = b->z;
        law->tau2 = b->tau2;
    } else {
        law->sample = data->train.residual;
        law->tau2 = data->train.tau2;
    }
    law->n = (size_t)data->train.n;
}

hdp_status hdp_noise_sample_check(double *z, size_t n, const char *what, double *tau2,
                                  hdp_error *err)
{
    HDP_REQUIRE(err, z || n == 0);
    const char *name = what ? what : "the label-noise sample";
    if (n < 2)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: %zu label-noise value%s: the empirical law needs at least 2", name,
                        n, n == 1 ? "" : "s");
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(z[i]))
            return hdp_fail(err, HDP_EINPUT, "%s: value %zu is not finite", name, i + 1);
        sum += z[i];
    }
    double mean = sum / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (z[i] - mean) * (z[i] - mean);
    double var = ss / (double)n;
    if (!(var > 0) || !isfinite(var))
        return hdp_fail(err, HDP_EINPUT,
                        "%s: the %zu values %s: the empirical law needs a variance > 0 (and "
                        "finite)",
                        name, n, var > 0 ? "overflow" : "are all equal");
    double se = sqrt(var / (double)n);
    if (fabs(mean) > 5.0 * se)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: the mean of the %zu values is %g, %.3g standard errors from 0 (at "
                        "most 5 are accepted): label noise has mean 0 (centre the values, or "
                        "fit an intercept)",
                        name, n, mean, fabs(mean) / se);
    for (size_t i = 0; i < n; i++)
        z[i] -= mean;
    if (tau2)
        *tau2 = var;
    return HDP_OK;
}

void hdp_clip_free(hdp_clip *clip)
{
    if (!clip)
        return;
    hdp_clip_rows_free(clip);
    hdp_clip_fit_free(clip);
    if (clip->ws)
        gsl_integration_workspace_free(clip->ws);
    free(clip->emp_a);
    free(clip->emp_s2);
    free(clip->memo_key);
    free(clip->memo_val);
    free(clip->memo_gen);
    free(clip);
}

static void no_clipping(double R, double tau2, hdp_clip_values *out)
{
    out->mu = 1.0;
    out->nu = 1.0;
    out->V = R + 0.5 * tau2;
    out->dmu = 0.0;
    out->dV = 1.0;
}

/* Gaussian closed forms (docs/theory.md §2). */
static void gaussian_factors(double c, double R, double tau2, hdp_clip_values *out)
{
    double s = R + 0.5 * tau2;
    if (isinf(c) || !(s > 0)) {
        no_clipping(R, tau2, out);
        return;
    }
    double a = c / (2.0 * sqrt(s));
    double erfc_a = erfc(a);
    double head; /* erf(a) - (2a/sqrt(pi)) e^{-a^2} */
    if (a < 1e-2) {
        double a2 = a * a;
        head = M_2_SQRTPI * a * a2 * (2.0 / 3.0 - a2 * (2.0 / 5.0 - a2 / 7.0));
    } else {
        head = erf(a) - M_2_SQRTPI * a * exp(-a * a);
    }
    out->mu = erf(a);
    out->nu = head + 2.0 * a * a * erfc_a;
    out->V = out->nu * s;
    out->dmu = -a * exp(-a * a) / (sqrt(M_PI) * s);
    out->dV = out->nu - 2.0 * a * a * erfc_a;
}

/* Student-t noise of large df = nu, to first order in 1/nu (see the top): the Gaussian
 * factors H(s) plus tau^4/(4 nu) H''(s), and their derivatives plus tau^4/(4 nu) H'''(s). */
static void student_expansion(double c, double R, double tau2, double nu, hdp_clip_values *out)
{
    gaussian_factors(c, R, tau2, out);
    double s = R + 0.5 * tau2;
    if (isinf(c) || !(s > 0))
        return; /* no clipping: V = R + tau^2/2 and mu = 1 for every law */
    double a = c / (2.0 * sqrt(s)), a2 = a * a;
    double k = 0.25 * tau2 * (tau2 / nu);
    double g = a * exp(-a2) / sqrt(M_PI); /* a e^{-a^2} / sqrt(pi) */
    double mu2 = g * (1.5 - a2) / (s * s);
    double mu3 = g * (-3.75 + a2 * (5.0 - a2)) / (s * s * s);
    double V2 = -2.0 * a2 * g / s;
    double V3 = a2 * g * (5.0 - 2.0 * a2) / (s * s);
    out->mu += k * mu2;
    out->V += k * V2;
    out->nu = out->V / s;
    out->dmu += k * mu3;
    out->dV += k * V3;
}

/* Inner expectations for r ~ N(m, sd^2): probability of |r| < c and E[min(r^2, c^2)]. */
static void inner(double m, double sd, double c, double *p_in, double *e_min)
{
    if (!(sd > 0)) {
        *p_in = fabs(m) < c ? 1.0 : 0.0;
        *e_min = fmin(m * m, c * c);
        return;
    }
    double al = (-c - m) / sd, be = (c - m) / sd;
    if ((be - al) * (1.0 + fmax(fabs(al), fabs(be))) <= 1.0) {
        /* narrow window: Gauss-Legendre over r in [-c, c] (see the top) */
        static const double x[4] = {0.1834346424956498, 0.5255324099163290,
                                    0.7966664774136267, 0.9602898564975363};
        static const double w[4] = {0.3626837833783620, 0.3137066458778873,
                                    0.2223810344533745, 0.1012285362903763};
        double p = 0, e = 0;
        for (int i = 0; i < 4; i++)
            for (int sign = -1; sign <= 1; sign += 2) {
                double r = sign * c * x[i];
                double f = w[i] * gsl_ran_ugaussian_pdf((r - m) / sd);
                p += f;
                e += f * r * r;
            }
        p *= c / sd;
        e *= c / sd;
        *p_in = p;
        *e_min = e + c * c * (1.0 - p);
        return;
    }
    double Pin = al > 0 ? gsl_cdf_ugaussian_Q(al) - gsl_cdf_ugaussian_Q(be)
                        : gsl_cdf_ugaussian_P(be) - gsl_cdf_ugaussian_P(al);
    if (Pin < 0)
        Pin = 0;
    double pa = gsl_ran_ugaussian_pdf(al), pb = gsl_ran_ugaussian_pdf(be);
    double e_in = (m * m + sd * sd) * Pin + 2.0 * m * sd * (pa - pb) + sd * sd * (al * pa - be * pb);
    *p_in = Pin;
    *e_min = e_in + c * c * (1.0 - Pin);
}

typedef struct {
    hdp_clip *clip;
    double sd;  /* sqrt(2R) */
    int which;  /* 0: P(|r|<c), 1: E[min(r^2,c^2)] */
    int gauss;  /* use the Gaussian density for z (tests) */
    int memo;   /* which = 0: keep the other integrand's values; 1: read them */
} quad_args;

/* The memo of the quadratures: the two integrals over z (P and E) share their integrand's
 * costly part (the density of z, the inner expectations), and qag visits mostly the same
 * points for both (the first Kronrod rule on every piece, and the tails' first rules), so the
 * first integral keeps the second's integrand at its points and the second reads them: the
 * same values bit for bit, computed once. A table of MEMO_SIZE entries, open addressing on
 * the bits of z; a generation counter empties it for the next R. */
enum { MEMO_BITS = 13, MEMO_SIZE = 1 << MEMO_BITS, MEMO_PROBES = 8 };

static int memo_ready(hdp_clip *clip)
{
    if (clip->memo_state == 0) {
        clip->memo_key = malloc(MEMO_SIZE * sizeof *clip->memo_key);
        clip->memo_val = malloc(MEMO_SIZE * sizeof *clip->memo_val);
        clip->memo_gen = calloc(MEMO_SIZE, sizeof *clip->memo_gen);
        clip->memo_state = clip->memo_key && clip->memo_val && clip->memo_gen ? 1 : -1;
    }
    if (clip->memo_state < 0)
        return 0;
    if (++clip->memo_cur == 0) { /* wrapped: every entry stale */
        memset(clip->memo_gen, 0, MEMO_SIZE * sizeof *clip->memo_gen);
        clip->memo_cur = 1;
    }
    return 1;
}

static size_t memo_slot(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - MEMO_BITS));
}

static void memo_put(hdp_clip *clip, double z, double v)
{
    uint64_t key;
    memcpy(&key, &z, sizeof key);
    size_t i = memo_slot(key);
    for (int k = 0; k < MEMO_PROBES; k++, i = (i + 1) & (MEMO_SIZE - 1))
        if (clip->memo_gen[i] != clip->memo_cur) {
            clip->memo_key[i] = key;
            clip->memo_val[i] = v;
            clip->memo_gen[i] = clip->memo_cur;
            return;
        }
}

static int memo_get(const hdp_clip *clip, double z, double *v)
{
    uint64_t key;
    memcpy(&key, &z, sizeof key);
    size_t i = memo_slot(key);
    for (int k = 0; k < MEMO_PROBES; k++, i = (i + 1) & (MEMO_SIZE - 1)) {
        if (clip->memo_gen[i] != clip->memo_cur)
            return 0;
        if (clip->memo_key[i] == key) {
            *v = clip->memo_val[i];
            return 1;
        }
    }
    return 0;
}

static double z_density(const quad_args *q, double z)
{
    const hdp_clip *cl = q->clip;
    if (q->gauss)
        return gsl_ran_gaussian_pdf(z, sqrt(cl->tau2));
    if (cl->noise == HDP_NOISE_LAPLACE) /* scale b = tau / sqrt(2) */
        return exp(-fabs(z) * M_SQRT2 / cl->zscale) / (M_SQRT2 * cl->zscale);
    if (cl->noise == HDP_NOISE_UNIFORM)
        return fabs(z) <= cl->edge ? 0.5 / cl->edge : 0.0;
    /* gsl_ran_tdist_pdf with the normalisation computed once (two lgamma per call were a
     * fifth of the time of a Student-t evaluation), and (1 + x^2/nu)^-((nu+1)/2) through
     * log1p: pow(1 + x^2/nu, .) rounds 1 + x^2/nu first, a relative error ~ nu * 1e-16 in
     * the density (at nu = 1e8 a noise that kept qag subdividing to its limit, ten times
     * slower; at nu = 1e16 the density was flat: final risk 0.68 for 0.29) */
    double x = z / cl->t_scale, nu = cl->df;
    return exp(cl->t_lognorm - 0.5 * (nu + 1.0) * log1p(x * x / nu));
}

static double integrand(double z, void *params)
{
    const quad_args *q = params;
    double p, e, v;
    if (q->memo && q->which && memo_get(q->clip, z, &v))
        return v;
    inner(-z, q->sd, q->clip->c, &p, &e);
    double dens = z_density(q, z);
    if (q->memo && !q->which)
        memo_put(q->clip, z, dens * e);
    return dens * (q->which ? e : p);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Integral over z in R: tails by qagil/qagiu beyond +-B, the middle by
 * Gauss-Kronrod (qag, 21 points) between breakpoints at the scales where the
 * integrand changes fastest. (qagp's extrapolation gave up with roundoff on
 * the long smooth pieces of the Student-t case; plain qag does not.) Between these
 * breakpoints the integrand is smooth enough that nearly every piece meets the tolerance
 * with its first rule: the 21-point rule costs a third of the 61-point one it replaced
 * (issue 31) and agrees with it to 1.5e-15 relative over c in [1e-6, 1e6], tau^2 in
 * [1e-6, 1e6], nu in [2.5, 1e4] and R from 1e-9 tau^2 to 1e8 max(tau^2, c^2). */
static double integrate(hdp_clip *clip, double sd, int which, int gauss, int memo)
{
    quad_args q = {clip, sd, which, gauss, memo};
    gsl_function f = {integrand, &q};
    double zscale = gauss ? sqrt(clip->tau2) : clip->zscale;
    double c = clip->c, edge = gauss ? 0.0 : clip->edge;
    double B = c + 10.0 * (sd + zscale);
    /* breakpoints at the scales of the integrand: |z| = c, c + j sd, and the
     * spread of z (for small R the inner probability is a bump of width
     * max(c, sd) at z = 0 and the inner moment bends within a few sd of |z| = c) */
    double cand[] = {c,          c + sd, c + 3 * sd, c + 8 * sd, c - sd,     c - 3 * sd,
                    c - 8 * sd, sd,     3 * sd,     8 * sd,     zscale,     3 * zscale,
                    8 * zscale, 20 * zscale, edge};
    /* (8 and 20 zscale: when c and sd are far larger than z's spread, a 61-point rule over
     * [3 zscale, c - 8 sd] samples only where a Gaussian density underflows to 0 and
     * returns 0 with a zero error estimate, losing P(|z| > 3 zscale) = 0.27 %.) */
    /* (edge: the uniform law's end of support, where its density jumps) */
    /* and geometric ones, 80 zscale x 4^k up to B: the Student-t density decays like a
     * power, which a piece [g, 4g] resolves at once while qag would bisect a long piece
     * many times (at c = 1e6, 40 % fewer evaluations) */
    enum { NGEO = 40 };
    double pts[2 * (sizeof cand / sizeof cand[0] + NGEO) + 3]; /* -B, +-cand, +-geo, 0, B */
    size_t np = 0;
    pts[np++] = -B;
    for (int sign = -1; sign <= 1; sign += 2) {
        for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
            if (cand[i] > 0 && cand[i] < B)
                pts[np++] = sign * cand[i];
        double g = 20 * zscale;
        for (int k = 0; k < NGEO && (g *= 4) < B; k++)
            pts[np++] = sign * g;
    }
    pts[np++] = 0.0;
    pts[np++] = B;
    qsort(pts, np, sizeof(double), cmp_double);
    size_t u = 1;
    for (size_t i = 1; i < np; i++)
        if (pts[i] > pts[u - 1])
            pts[u++] = pts[i];
    np = u;
    double mid = 0, left = 0, right = 0, abserr = 0;
    hdp_gsl_quiet();
    for (size_t i = 0; i + 1 < np; i++) {
        double part = 0;
        gsl_integration_qag(&f, pts[i], pts[i + 1], 1e-16, 1e-12, QUAD_LIMIT, GSL_INTEG_GAUSS21,
                            clip->ws, &part, &abserr);
        mid += part;
    }
    gsl_integration_qagil(&f, -B, 1e-15, 1e-13, QUAD_LIMIT, clip->ws, &left, &abserr);
    gsl_integration_qagiu(&f, B, 1e-15, 1e-13, QUAD_LIMIT, clip->ws, &right, &abserr);
    return left + mid + right;
}

/* ---- the laws other than Gaussian ----
 * A law is one function, the average over its z of the conditional formulas of the top
 * (inner: P(|r| < c) and E[min(r^2, c^2)] for r | z ~ N(-z, sd^2)), and one row of `laws`;
 * tabulate: its averages cost more than the closed forms (a quadrature), so
 * hdp_clip_tabulate fits them once. */
typedef void (*law_average)(hdp_clip *clip, double sd, double *p, double *e);

static void rademacher_average(hdp_clip *clip, double sd, double *p, double *e)
{
    double tau = sqrt(clip->tau2), p1, e1, p2, e2;
    inner(tau, sd, clip->c, &p1, &e1);
    inner(-tau, sd, clip->c, &p2, &e2);
    *p = 0.5 * (p1 + p2);
    *e = 0.5 * (e1 + e2);
}

static void density_average(hdp_clip *clip, double sd, double *p, double *e)
{
    int memo = memo_ready(clip);
    *p = integrate(clip, sd, 0, clip->noise == HDP_NOISE_GAUSSIAN, memo);
    *e = integrate(clip, sd, 1, clip->noise == HDP_NOISE_GAUSSIAN, memo);
}

/* two Gaussians: given the component, r ~ N(-m_k, 2R + v_k) exactly */
static void mixture_average(hdp_clip *clip, double sd, double *p, double *e)
{
    double p1, e1, p2, e2, s2 = sd * sd;
    inner(-clip->mix_m1, sqrt(s2 + clip->mix_v1), clip->c, &p1, &e1);
    inner(-clip->mix_m2, sqrt(s2 + clip->mix_v2), clip->c, &p2, &e2);
    *p = clip->mix_w * p1 + (1.0 - clip->mix_w) * p2;
    *e = clip->mix_w * e1 + (1.0 - clip->mix_w) * e2;
}

/* the first i in [l, h) of the ascending a with a_i > x (strict) or a_i >= x, else h */
static size_t first_past(const double *a, size_t l, size_t h, double x, int strict)
{
    while (l < h) {
        size_t mid = (l + h) / 2;
        if (strict ? a[mid] <= x : a[mid] < x) l = mid + 1; else h = mid;
    }
    return l;
}

/* The mean over the sample of the conditional formulas (symmetric in z: over |z_i|, sorted).
 * Values with |z_i| < c - K sd are inside the window but for a Gaussian tail below
 * erfc(K/sqrt 2) / 2 = 8e-24 (K = 10): P = 1 and E min(r^2, c^2) = z_i^2 + sd^2 to rounding;
 * those with |z_i| > c + K sd outside: E = c^2, and P = 0 unless their at most 8e-24 each
 * could reach 1e-17 of P (then they are summed: mu is kept to full relative accuracy, e.g.
 * 1e-273 when every value is far outside). Both sums come from the prefix sums,
 * so a small sd costs a binary search and the values near c. */
static void empirical_average(hdp_clip *clip, double sd, double *p, double *e)
{
    enum { K = 10 };
    const double *a = clip->emp_a, c = clip->c;
    size_t n = clip->emp_n;
    size_t lo = first_past(a, 0, n, c - K * sd, 0);  /* the first a_i >= c - K sd */
    size_t hi = first_past(a, lo, n, c + K * sd, 1); /* the first a_i > c + K sd */
    double P = (double)lo, E = clip->emp_s2[lo] + (double)lo * sd * sd;
    for (size_t i = lo; i < hi; i++) {
        double pi, ei;
        inner(-a[i], sd, c, &pi, &ei);
        P += pi;
        E += ei;
    }
    E += (double)(n - hi) * c * c;
    if ((double)(n - hi) * 1e-23 > 1e-17 * P) /* the values outside are all there is: exactly */
        for (size_t i = hi; i < n; i++) {
            double pi, ei;
            inner(-a[i], sd, c, &pi, &ei);
            P += pi;
        }
    *p = P / (double)n;
    *e = E / (double)n;
}

/* tabulate: fitted once by hdp_clip_tabulate (a quadrature, or a sum over a sample, is far
 * costlier than reading the fit); the two-atom and two-Gaussian sums are as cheap as the fit */
static const struct {
    hdp_noise_kind kind;
    law_average average;
    int tabulate;
    int partial; /* pieces of the fit that do not converge are evaluated directly: the
                    sample's atoms make mu and V vary on the scale (c - |z_i|)^2 in R, below
                    any piece's width for the values near c, where direct evaluation costs
                    only those values (empirical_average) */
} laws[] = {
    {HDP_NOISE_RADEMACHER, rademacher_average, 0, 0},
    {HDP_NOISE_STUDENT, density_average, 1, 0},
    {HDP_NOISE_LAPLACE, density_average, 1, 0},
    {HDP_NOISE_UNIFORM, density_average, 1, 0},
    {HDP_NOISE_MIXTURE, mixture_average, 0, 0},
    {HDP_NOISE_EMPIRICAL, empirical_average, 1, 1},
};

static int law_index(hdp_noise_kind kind);

int hdp_clip_law_fitted(const hdp_clip *clip)
{
    int law = law_index(clip->noise);
    return law >= 0 && laws[law].tabulate;
}

int hdp_clip_law_partial(const hdp_clip *clip)
{
    int law = law_index(clip->noise);
    return law >= 0 && laws[law].partial;
}

static int law_index(hdp_noise_kind kind)
{
    for (size_t i = 0; i < sizeof laws / sizeof laws[0]; i++)
        if (laws[i].kind == kind)
            return (int)i;
    return -1;
}

/* mu and V by summing or integrating over the law of z. */
void hdp_clip_law_factors(hdp_clip *clip, double R, int force_gauss_quad, hdp_clip_values *out)
{
    double c = clip->c, tau2 = clip->tau2;
    if (isinf(c)) {
        no_clipping(R, tau2, out);
        return;
    }
    double sd = sqrt(2.0 * (R > 0 ? R : 0.0));
    double p = 0, e = 0;
    int law = law_index(clip->noise);
    if (clip->noise == HDP_NOISE_NONE || tau2 == 0) {
        inner(0.0, sd, c, &p, &e);
    } else if (force_gauss_quad || law < 0) {
        p = integrate(clip, sd, 0, 1, 0);
        e = integrate(clip, sd, 1, 1, 0);
    } else {
        laws[law].average(clip, sd, &p, &e);
    }
    double second = 2.0 * R + tau2; /* E r^2 */
    out->mu = p;
    out->V = 0.5 * e;
    out->nu = second > 0 ? e / second : 1.0;
    out->dmu = 0;
    out->dV = 0;
}

void hdp_clip_eval_quadrature(hdp_clip *clip, double R, hdp_clip_values *out)
{
    if (!clip || !out)
        return;
    hdp_clip_law_factors(clip, R, 1, out);
}

/* the factors at R (clamped to 0): in closed form for Gaussian or no label noise, or from the
 * fitted table (with their derivatives; returns 0), else by the law's average (derivatives 0;
 * returns 1) */
static int values_at(hdp_clip *clip, double *R, hdp_clip_values *out)
{
    if (*R < 0)
        *R = 0;
    if (clip->noise == HDP_NOISE_GAUSSIAN || clip->noise == HDP_NOISE_NONE || clip->tau2 == 0) {
        gaussian_factors(clip->c, *R, clip->tau2, out);
        return 0;
    }
    if (clip->asymptotic) {
        student_expansion(clip->c, *R, clip->tau2, clip->df, out);
        return 0;
    }
    if (hdp_clip_table_at(clip, *R, 1, out))
        return 0;
    hdp_clip_law_factors(clip, *R, 0, out);
    return 1;
}

void hdp_clip_eval(hdp_clip *clip, double R, hdp_clip_values *out)
{
    if (!clip || !out)
        return;
    if (clip->ngroups) {
        hdp_clip_rows_eval(clip, R, 1, out);
        return;
    }
    if (!values_at(clip, &R, out) || isinf(clip->c))
        return;
    /* central differences for the Jacobian (only the Newton matrix uses them) */
    double h = 1e-6 * (R + 0.5 * clip->tau2) + 1e-300;
    hdp_clip_values lo, hi;
    double Rlo = R - h > 0 ? R - h : 0.0;
    hdp_clip_law_factors(clip, Rlo, 0, &lo);
    hdp_clip_law_factors(clip, R + h, 0, &hi);
    out->dmu = (hi.mu - lo.mu) / (R + h - Rlo);
    out->dV = (hi.V - lo.V) / (R + h - Rlo);
}

void hdp_clip_eval_values(hdp_clip *clip, double R, hdp_clip_values *out)
{
    if (!clip || !out)
        return;
    if (clip->ngroups) {
        hdp_clip_rows_eval(clip, R, 0, out);
        return;
    }
    values_at(clip, &R, out);
}
