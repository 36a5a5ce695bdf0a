/*
 * nc_exact.c — NoisyGD on neural-collapse features (the NC paper; docs/theory.md §8): the exact
 * error of one NoisyGD step from W = 0, the Gaussian quadrature it reduces to, its closed forms
 * (balanced classes, the binary logistic model), and the residual of the loss that the
 * training (nc_train.c) shares. See hdpsgd/nc.h for the model and its conventions.
 *
 * ---- The exact one-step error (docs/theory.md §8), derived here because the NC paper's Theorem 2
 * ---- has algebra slips.
 * One NoisyGD step from W_0 = 0 with learning rate eta on the sum loss, training features
 * z_k (class k, n_k samples), clipping factors c_k = min(1, G/||g_k||):
 *     W_1 = -eta (S + Xi),   S = sum_k n_k c_k r_k z_k^T,   Xi_ij ~ N(0, sigma^2) i.i.d.,
 * where r_k is the residual of the loss at zero scores: 1/K 1 - e_k (ce, softmax(0) = 1/K),
 * -e_k (squared), -y_k/2 (logistic). On a test point z the scores are
 *     W_1 z = -eta (S z + Xi z),   Xi z ~ N(0, sigma^2 ||z||^2 I_K)  (rows of Xi independent),
 * and eta > 0 only rescales them: the error does not depend on eta. With mu = -S z_c and
 * tau = sigma ||z_c||, class c is classified correctly iff mu_c + tau Z_c > mu_j + tau Z_j
 * for every j != c; conditioning on Z_c, the other Z_j are independent:
 *     P(error | c) = 1 - E_Z prod_{j != c} Phi(Z + (mu_c - mu_j)/tau).            (*)
 * Perfect collapse, z_k = M_k, M_k^T M_c = K/(K-1) (delta_kc - 1/K):
 *     mu_j = -sum_k n_k c (r_k)_j K/(K-1) (delta_kc - 1/K)
 *          = c K/(K-1) (n_c delta_jc - n_j/K) + (a constant in j)     (ce and squared alike),
 * so mu_c - mu_j = c (n_c + n_j/(K-1)), and with balanced classes (n_k = n/K)
 *     mu_c - mu_j = c n/(K-1),   error = 1 - E_Z[Phi(Z + c n/((K-1) sigma))^(K-1)],   ||M_c|| = 1.
 * The per-sample gradient norm at W = 0 is ||r_k|| ||M_k|| = sqrt(1 - 1/K) (ce), 1 (squared):
 * no clipping (c = 1) when G is at least that. K = 2: 1 - E[Phi(Z + a)] = P(Z' - Z > a) =
 * Phi(-a/sqrt2) = Phi(-n/(sqrt2 sigma)), for any class balance (n_c + n_j = n). The binary
 * logistic model (one theta, x = y e_1, the NC paper, Theorem 3): S = -sum_i y_i x_i/2 = -n e_1/2,
 * margin y theta^T x = eta (n/2 + sigma Z): error Phi(-n/(2 sigma)).
 * Where the NC paper (Theorem 2 and Appendix A.1) slips:
 *   - (mu)_j for j != k is -n/(K(K-1)), not -n(K-2)/(K^2(K-1)) (mu_k = n/K is right), so the
 *     gap is n/(K-1), not (n/K)(1 + (K-2)/(K(K-1)));
 *   - the difference of two independent N(., sigma^2) scores has variance 2 sigma^2: the
 *     pairwise error is Phi(-gap/(sqrt2 sigma)), not Phi(-gap/sigma);
 *   - (K-1) Phi(.) is the union bound, an upper bound, not the error (the K-1 comparisons share
 *     Z_c); the exact error is (*);
 *   - the exponent of the tail bound: Phi(-x) <= exp(-x^2/2) gives
 *     (K-1) exp(-n^2/(4 (K-1)^2 sigma^2)), not (K-1) exp(-C_K n^2/(K sigma^2));
 *   - the clipping in eq. (1) is written max{1, G/||g||} (never clips); it must be min;
 *   - Appendix C.1 writes G = sqrt(1 + ||v||_2) for sqrt(1 + ||v||_2^2), and the error there
 *     as Phi(+...) for Phi(-...).
 * These closed forms are checked against the Monte Carlo of nc_train.c in tests/test_nc.c.
 */
#include "hdpsgd/nc.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdlib.h>

#include "families/nc_internal.h"

/* ---- the Gaussian quadrature (docs/theory.md §8) ---- */

/* the standard normal density (not gsl_ran_ugaussian_pdf: <gsl/gsl_randist.h> pulls in
 * gsl_cblas.h, whose declarations clash with OpenBLAS's <cblas.h>) */
static double phi(double z) { return 0.39894228040143267794 * exp(-0.5 * z * z); }

/* log Phi(x), accurate in both tails: log P(x) below 0, log1p(-Q(x)) above. */
static double log_Phi(double x)
{
    return x < 0 ? log(gsl_cdf_ugaussian_P(x)) : log1p(-gsl_cdf_ugaussian_Q(x));
}

typedef struct {
    const double *a;
    long m;
} gm_ctx;

/* phi(z) (1 - prod_j Phi(z + a_j)) = phi(z) (-expm1(sum_j log Phi(z + a_j))) */
static double gm_integrand(double z, void *params)
{
    const gm_ctx *c = params;
    double s = 0;
    for (long j = 0; j < c->m; j++)
        s += log_Phi(z + c->a[j]);
    return phi(z) * -expm1(s);
}

hdp_status hdp_nc_gauss_max_error(const double *a, long m, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, a);
    HDP_REQUIRE(err, out);
    if (m <= 0) {
        *out = 0.0;
        return HDP_OK;
    }
    hdp_gsl_quiet(); /* a failed allocation returns NULL, never aborts (issue 29) */
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
    if (!w)
        return hdp_fail(err, HDP_ENOMEM, "out of memory (quadrature workspace)");
    gm_ctx c = {a, m};
    gsl_function F = {gm_integrand, &c};
    double res = 0, abserr = 0;
    int rc = gsl_integration_qagi(&F, 0.0, 1e-10, 2000, w, &res, &abserr);
    gsl_integration_workspace_free(w);
    /* GSL_EROUND: the tolerance was not met because of rounding; accept a tight result */
    if (rc != 0 && !(rc == GSL_EROUND && abserr <= 1e-8 * fabs(res)) && !(res == 0 && abserr == 0))
        return hdp_fail(err, HDP_ENUMERIC,
                        "quadrature of the exact error failed (GSL: %s; result %g, error %g)",
                        gsl_strerror(rc), res, abserr);
    *out = res < 0 ? 0.0 : (res > 1 ? 1.0 : res);
    return HDP_OK;
}

/* hdp_nc_gauss_max_error with the same gap a to each of the m competitors */
static hdp_status equal_gaps(double a, long m, double *out, hdp_error *err)
{
    double *av = malloc(sizeof(double) * (size_t)m);
    if (!av)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    for (long j = 0; j < m; j++)
        av[j] = a;
    hdp_status st = hdp_nc_gauss_max_error(av, m, out, err);
    free(av);
    return st;
}

hdp_status hdp_nc_exact_error_balanced(long K, double n, double sigma, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    if (K < 2)
        return hdp_fail(err, HDP_EINPUT, "exact error: K = %ld, expected K >= 2", K);
    if (!(sigma > 0)) {
        *out = 0.0; /* no noise: the gap n/(K-1) > 0 always wins */
        return HDP_OK;
    }
    return equal_gaps(n / ((double)(K - 1) * sigma), K - 1, out, err);
}

double hdp_nc_exact_error_logistic(double n, double sigma)
{
    if (!(sigma > 0))
        return 0.0;
    return gsl_cdf_ugaussian_P(-n / (2.0 * sigma));
}

hdp_status hdp_nc_exact_error_frame(long K, long K0, double n, double sigma, double *out,
                                    hdp_error *err)
{
    HDP_REQUIRE(err, out);
    if (K < 2 || K0 < K)
        return hdp_fail(err, HDP_EINPUT, "exact error: K = %ld, K0 = %ld, expected 2 <= K <= K0",
                        K, K0);
    if (!(sigma > 0)) {
        *out = 0.0;
        return HDP_OK;
    }
    /* mu_c - mu_j = (n/K)(M_c - M_j)^T M_c = (n/K)(1 + 1/(K0-1)) (docs/theory.md §8.3) */
    return equal_gaps(n * (double)K0 / ((double)K * (double)(K0 - 1) * sigma), K - 1, out, err);
}

/* The window [lo, lo + length) of k ~ binomial(m, 1/2) (a sum of m signs is 2k - m) outside
 * which Hoeffding's bound 2 exp(-2 t^2/m) leaves less than 1e-17; returns its length. */
static long sign_window(long m, long *lo)
{
    double t = ceil(sqrt((double)m * log(2e17) / 2.0));
    double a = floor((double)m / 2.0 - t), b = ceil((double)m / 2.0 + t);
    *lo = a < 0 ? 0 : (long)a;
    long hi = b > (double)m ? m : (long)b;
    return hi - *lo + 1;
}

/* w[i] = P(k = lo + i), k ~ binomial(m, 1/2) */
static void sign_probs(long m, long lo, long len, double *w)
{
    const double lm = lgamma((double)m + 1.0) - (double)m * log(2.0);
    for (long i = 0; i < len; i++) {
        double k = (double)(lo + i);
        w[i] = exp(lm - lgamma(k + 1.0) - lgamma((double)m - k + 1.0));
    }
}

hdp_status hdp_nc_exact_error_projection(long n, long p, double a, double beta, double beta0,
                                         double s, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NAN;
    if (n < 1 || p < 1 || !(a > 0) || !(beta >= 0) || !(beta0 >= 0) || !(s >= 0))
        return hdp_fail(err, HDP_EINPUT, "exact error (projection): n = %ld, p = %ld, a = %g, "
                                         "beta = %g, beta0 = %g, s = %g out of range",
                        n, p, a, beta, beta0, s);
    /* margin n a + beta a (2k - n) + beta beta0 (2l - N) + s Z, k ~ Bin(n, 1/2), l ~ Bin(N, 1/2) */
    const long N = beta > 0 && beta0 > 0 ? (p - 1) * n : 0;
    const long nn = beta > 0 ? n : 0;
    long klo, llo;
    double *wk, *wl;
    long kl = sign_window(nn, &klo), ll = sign_window(N, &llo);
    if ((double)kl * (double)ll > 1e8)
        return HDP_OK; /* NaN: too long (nc.h) */
    void *block = HDP_MC_VECS({&wk, (size_t)kl}, {&wl, (size_t)ll});
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory (%ld + %ld binomial weights)", kl, ll);
    sign_probs(nn, klo, kl, wk);
    sign_probs(N, llo, ll, wl);
    double total = 0;
    for (long i = 0; i < kl; i++) {
        double x0 = (double)n * a + beta * a * (double)(2 * (klo + i) - nn), inner = 0;
        for (long j = 0; j < ll; j++) {
            double x = x0 + beta * beta0 * (double)(2 * (llo + j) - N);
            inner += wl[j] * (s > 0 ? gsl_cdf_ugaussian_Q(x / s) : (x > 0 ? 0.0 : 1.0));
        }
        total += wk[i] * inner;
    }
    free(block);
    *out = total < 0 ? 0.0 : (total > 1 ? 1.0 : total);
    return HDP_OK;
}

/* ---- the exact one-step error ---- */

/* Theorem 5's case (nc.h): K = 2, per-sample noise, projection, one step from 0 */
static int projection_case(const hdp_nc_spec *s)
{
    return s->steps == 1 && s->init == HDP_NC_INIT_ZERO && s->batch == 0 && s->K == 2 &&
           s->perturbation == HDP_NC_PERT_PER_SAMPLE && s->remedy == HDP_NC_REMEDY_PROJECTION;
}

int hdp_nc_exact_applies(const hdp_nc_spec *s)
{
    if (!s)
        return 0;
    return (s->steps == 1 && s->init == HDP_NC_INIT_ZERO && s->batch == 0 &&
            (s->perturbation == HDP_NC_PERT_NONE || s->perturbation == HDP_NC_PERT_TEST_OFFSET ||
             s->perturbation == HDP_NC_PERT_TRAIN_OFFSET || s->perturbation == HDP_NC_PERT_BOTH)) ||
           projection_case(s);
}

/* Theorem 5 on the problem: a = P^T M_2 = 1 + Delta_1, ||r|| and kappa of the loss; NaN when
 * a per-sample gradient could be clipped (||r|| (a + beta (a + (p-1) beta_0)) > G). */
static hdp_status projection_error(const hdp_nc_problem *pb, double *out, hdp_error *err)
{
    const hdp_nc_spec *s = &pb->spec;
    const double a = pb->PM[1]; /* q = 1; M_2 = e_1 */
    const double rn = s->loss == HDP_NC_CE ? sqrt(0.5) : (s->loss == HDP_NC_SQUARED ? 1.0 : 0.5);
    const double kappa = s->loss == HDP_NC_LOGISTIC ? 2.0 : sqrt(2.0);
    const double zmax = a + s->beta * (a + (double)(s->p - 1) * s->projection_beta);
    *out = NAN;
    if (rn * zmax > s->G)
        return HDP_OK;
    return hdp_nc_exact_error_projection(s->n, s->p, a, s->beta, s->projection_beta,
                                         kappa * pb->sigma, out, err);
}

/* the residual of the loss at scores sc for a sample of class k (Kout entries) */
void hdp_nc_residual(hdp_nc_loss_kind loss, long K, long k, const double *sc, double *r)
{
    switch (loss) {
    case HDP_NC_CE: {
        double mx = sc[0], sum = 0;
        for (long j = 1; j < K; j++) mx = sc[j] > mx ? sc[j] : mx;
        for (long j = 0; j < K; j++) sum += (r[j] = exp(sc[j] - mx));
        for (long j = 0; j < K; j++) r[j] = r[j] / sum - (j == k ? 1.0 : 0.0);
        break;
    }
    case HDP_NC_SQUARED:
        for (long j = 0; j < K; j++) r[j] = sc[j] - (j == k ? 1.0 : 0.0);
        break;
    case HDP_NC_LOGISTIC: {
        /* d/ds log(1 + exp(-y s)) = -y / (1 + exp(y s)) */
        double y = k == 1 ? 1.0 : -1.0, ys = y * sc[0];
        r[0] = ys > 0 ? -y * exp(-ys) / (1.0 + exp(-ys)) : -y / (1.0 + exp(ys));
        break;
    }
    }
}

hdp_status hdp_nc_exact_error(const hdp_nc_problem *pb, double *out, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, out);
    const hdp_nc_spec *s = &pb->spec;
    *out = NAN;
    if (projection_case(s))
        return projection_error(pb, out, err);
    if (!hdp_nc_exact_applies(s) || !pb->grouped)
        return HDP_OK;
    const long K = s->K, Kout = pb->Kout, q = pb->q;
    double *S, *r, *zero, *mu, *a;
    void *block = HDP_MC_VECS({&S, (size_t)(Kout * q)}, {&r, (size_t)K}, {&zero, (size_t)K},
                              {&mu, (size_t)K}, {&a, (size_t)K});
    hdp_status st = HDP_OK;
    if (!block) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory");
        goto done;
    }
    /* S = sum_k n_k c_k r_k z_k^T at W = 0 */
    for (long k = 0; k < K; k++) {
        const double *z = pb->Z + k * q;
        hdp_nc_residual(s->loss, K, k, zero, r);
        double rn = 0, zn = 0;
        for (long j = 0; j < Kout; j++) rn += r[j] * r[j];
        for (long l = 0; l < q; l++) zn += z[l] * z[l];
        double cf = hdp_nc_clip_factor(sqrt(rn) * sqrt(zn), s->G) * (double)pb->nk[k];
        for (long j = 0; j < Kout; j++)
            for (long l = 0; l < q; l++)
                S[j * q + l] += cf * r[j] * z[l];
    }
    double total = 0;
    for (long c = 0; c < K && st == HDP_OK; c++) {
        const double *z = pb->ztest + c * q;
        double zn = 0;
        for (long l = 0; l < q; l++) zn += z[l] * z[l];
        double tau = pb->sigma * sqrt(zn); /* Xi z ~ N(0, sigma^2 ||z||^2 I) */
        for (long j = 0; j < Kout; j++) {
            double d = 0;
            for (long l = 0; l < q; l++) d += S[j * q + l] * z[l];
            mu[j] = -d; /* W_1 z / eta = -(S z + Xi z) */
        }
        double e;
        if (s->loss == HDP_NC_LOGISTIC) {
            double margin = (c == 1 ? 1.0 : -1.0) * mu[0];
            e = tau > 0 ? gsl_cdf_ugaussian_P(-margin / tau) : (margin > 0 ? 0.0 : 1.0);
        } else if (!(tau > 0)) {
            e = 0.0;
            for (long j = 0; j < K; j++)
                if (j != c && !(mu[c] > mu[j])) e = 1.0;
        } else {
            long m = 0;
            for (long j = 0; j < K; j++)
                if (j != c) a[m++] = (mu[c] - mu[j]) / tau; /* (*) of the top comment */
            st = hdp_nc_gauss_max_error(a, m, &e, err);
        }
        total += e;
    }
    if (st == HDP_OK)
        *out = total / (double)K;
done:
    free(block);
    return st;
}
