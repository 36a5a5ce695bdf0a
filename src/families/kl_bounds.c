/*
 * kl_bounds.c — the closed forms of the KL family (Ye et al.; docs/theory.md section 8; the
 * conventions and the constant c = 4 in hdpsgd/kl.h): the layer widths, beta_l per scheme
 * and B (eq. 7) from the product formula; Table 1's closed forms separately (a test checks
 * that they agree); Lemma C.3 per layer; Corollaries 4.2 and 6.4 with the constant c as a
 * parameter; Pinsker's delta (A.2).
 */
#include "hdpsgd/kl.h"

#include <math.h>

/* ---- closed forms (Ye et al., Table 1, eq. 7, Lemma C.3, Corollaries 4.2 and 6.4) ---- */

void hdp_kl_widths(const hdp_kl_arch *a, long *w)
{
    if (!a || !w)
        return;
    w[0] = a->d;
    for (int l = 1; l < a->L; l++)
        w[l] = a->m;
    w[a->L] = a->o;
}

/* Table 1, column "variance beta_l"; NTK's last layer 1/o as in Table 1 (kl.h). */
void hdp_kl_betas(const hdp_kl_arch *a, double *beta)
{
    if (!a || !beta)
        return;
    long w[HDP_KL_MAX_DEPTH + 1];
    hdp_kl_widths(a, w);
    beta[0] = 0;
    for (int l = 1; l <= a->L; l++) {
        double in = (double)w[l - 1], out = (double)w[l];
        switch (a->init) {
        case HDP_KL_LECUN: beta[l] = 1.0 / in; break;
        case HDP_KL_HE: beta[l] = 2.0 / in; break;
        case HDP_KL_NTK: beta[l] = l < a->L ? 2.0 / out : 1.0 / out; break;
        case HDP_KL_XAVIER: beta[l] = 2.0 / (in + out); break;
        }
    }
}

/* a's widths and betas, and prod_{i<L} beta_i m_i / div */
typedef struct {
    long w[HDP_KL_MAX_DEPTH + 1];
    double beta[HDP_KL_MAX_DEPTH + 1];
    double prod;
} layers;

static void layers_of(const hdp_kl_arch *a, double div, layers *ly)
{
    hdp_kl_widths(a, ly->w);
    hdp_kl_betas(a, ly->beta);
    ly->prod = 1;
    for (int i = 1; i < a->L; i++)
        ly->prod *= ly->beta[i] * (double)ly->w[i] / div;
}

/* Lemma C.3 (eq. 33), layer by layer (proof of C.3: (m_l/2) prod_{i<l} (beta_i m_i/2)
 * prod_{l<i<L} (beta_i m_i/2) beta_L o ||x||^2 = ||x||^2 o prod_{i<L} (beta_i m_i/2) beta_L/beta_l). */
double hdp_kl_grad_norm2(const hdp_kl_arch *a, double x2, double *per_layer)
{
    if (!a)
        return NAN;
    layers ly;
    layers_of(a, 2.0, &ly);
    double total = 0;
    for (int l = 1; l <= a->L; l++) {
        double v = x2 * (double)a->o * ly.prod * ly.beta[a->L] / ly.beta[l];
        if (per_layer)
            per_layer[l] = v;
        total += v;
    }
    if (per_layer)
        per_layer[0] = total;
    return total;
}

/* eq. 7: B = d o (prod_{i<L} beta_i m_i / 2) sum_l beta_L / beta_l */
double hdp_kl_B(const hdp_kl_arch *a) { return a ? hdp_kl_grad_norm2(a, (double)a->d, NULL) : NAN; }

/* Table 1, column "gradient norm constant B (7)" */
double hdp_kl_B_table(const hdp_kl_arch *a)
{
    if (!a)
        return NAN;
    const double d = (double)a->d, m = (double)a->m, o = (double)a->o, L = (double)a->L;
    switch (a->init) {
    case HDP_KL_LECUN: return o * m * (L - 1 + d / m) / pow(2.0, L - 1);
    case HDP_KL_HE: return o * m * (L - 1 + d / m);
    case HDP_KL_NTK: return d * m * ((L - 1) / 2 + o / m);
    case HDP_KL_XAVIER:
        return o * d * (L - 1 + (d + o) / (2 * m)) / (pow(2.0, L - 3) * (1 + d / m) * (1 + o / m));
    }
    return NAN;
}

/* Lemma 6.3 (eq. 9) without its logarithmic factors */
double hdp_kl_R_lemma63(const hdp_kl_arch *a, long n)
{
    if (!a)
        return NAN;
    layers ly;
    layers_of(a, 1.0, &ly);
    double inv = 0;
    for (int l = 1; l <= a->L; l++)
        inv += 1.0 / ly.beta[l];
    double first = 1.0 / ((double)a->d * ly.beta[a->L] * ly.prod);
    return (first > 1 ? first : 1.0) * (double)n / inv;
}

/* Corollary 4.2 with constant c: integral of 4B/n^2 (Theorem 4.1) over [0, T], / (c sigma^2) */
double hdp_kl_bound(double B, double T, long n, double sigma, double c)
{
    return 4.0 * B * T / (c * (double)n * (double)n * sigma * sigma);
}

/* Corollary 6.4 (and its proof, eqs. 72-73) with constant c */
void hdp_kl_budget_solve(double B, double R, long n, double eps, double T, double c,
                         hdp_kl_budget *out)
{
    if (!out)
        return;
    const double nn = (double)n;
    out->sigma2_at_T = 4.0 * B * T / (c * eps * nn * nn);
    out->T_opt = sqrt(c * eps * nn * R / (4.0 * B));
    out->sigma2_opt = 4.0 * B * out->T_opt / (c * eps * nn * nn);
    out->risk_opt = R / (2.0 * out->T_opt) + out->sigma2_opt * nn / 2.0;
}

/* Pinsker's inequality: TV <= sqrt(KL/2) (Ye et al., A.2, item 3); TV <= 1 always */
double hdp_kl_pinsker_delta(double kl)
{
    const double d = sqrt(kl / 2.0);
    return d < 1.0 ? d : 1.0;
}

/* Lemma 3.2 (kl.h): 2 T diff0 + (8/(n-1)^2)(beta^2 I(T) + cns^2 T), I(T) = (grad0 + 2 sigma^2
 * rank + cns^2) ((e^{xT} - 1)/x - T)/x, x = 2 + beta^2, over c sigma^2; expm1 keeps
 * (e^{xT} - 1)/x - T accurate for small x T (it is x T^2/2 + ...). */
double hdp_kl_lemma32(double T, long n, double sigma, double diff0, double grad0, double beta,
                      double rank, double cns, double c, double *exp_term)
{
    const double x = 2.0 + beta * beta, nn = (double)(n - 1) * (double)(n - 1);
    const double cs2 = c * sigma * sigma;
    const double xt = x * T;
    /* (e^{xT} - 1)/x - T = T (expm1(xT)/(xT) - 1); its series for small xT */
    double F = xt < 1e-4 ? T * (xt / 2.0 + xt * xt / 6.0) : expm1(xt) / x - T;
    double I = (grad0 + 2.0 * sigma * sigma * rank + cns * cns) * F / x;
    double e = 8.0 * beta * beta * I / nn / cs2;
    if (exp_term)
        *exp_term = e;
    return (2.0 * T * diff0 + 8.0 * cns * cns * T / nn) / cs2 + e;
}

double hdp_kl_lemma32_log10(double T, long n, double sigma, double diff0, double grad0,
                            double beta, double rank, double cns, double c)
{
    double e, b = hdp_kl_lemma32(T, n, sigma, diff0, grad0, beta, rank, cns, c, &e);
    if (isfinite(b))
        return log10(b);
    /* ln of the exponential part: ln(C/x^2) + x T + ln(1 - (1 + x T) e^{-x T}), then + the rest */
    const double x = 2.0 + beta * beta, nn = (double)(n - 1) * (double)(n - 1);
    const double cs2 = c * sigma * sigma, xt = x * T;
    const double C = 8.0 * beta * beta * (grad0 + 2.0 * sigma * sigma * rank + cns * cns) / nn / cs2;
    double le = log(C / (x * x)) + xt + log1p(-(1.0 + xt) * exp(-xt));
    double rest = (2.0 * T * diff0 + 8.0 * cns * cns * T / nn) / cs2;
    return (le + log1p(rest > 0 ? exp(log(rest) - le) : 0.0)) / log(10.0);
}
