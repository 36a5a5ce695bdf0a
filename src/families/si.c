/*
 * si.c — private feature learning for single-index models (the single-index notes, Algorithm 1 with
 * its slips fixed; docs/theory.md §6, §7, §8). See hdpsgd/si.h for the equations.
 *
 * Method: stage 1 forms the per-sample, per-neuron gradient coefficients
 * Q_ij = 2 r_i a0_j tanh'(h_ij) (the gradient is Q_ij x_i), clips them, and sums
 * X^T Q; stage 2 runs the literal DP-GD in R^p (two matrix-vector products per step),
 * or samples the exact Gaussian law of the OU process at tau in the eigenbasis of A.
 * Products are plain loops (the sizes are laboratory sizes), so the results are the same
 * bits for any thread count; only the symmetric eigenproblem goes to LAPACK (dsyev).
 */
#include "hdpsgd/si.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/schema.h"
#include "families/sections.h"
#include "sim/mc.h"
#include "sim/stats.h"

#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"
#include "families/si_internal.h"



double hdp_si_link(const hdp_si_keys *k, double z)
{
    /* probabilists' Hermite: He1 = z, He2 = z^2 - 1, He3 = z^3 - 3z */
    return k->he1 * z + k->he2 * (z * z - 1.0) + k->he3 * (z * z * z - 3.0 * z);
}

void hdp_si_spec_from_model(const hdp_model *m, hdp_si_spec *s)
{
    if (!m || !s)
        return;
    memset(s, 0, sizeof *s);
    s->k = *hdp_si_keys_of(m);
    s->seed = m->seed;
}

/* Report a bad key through the model when there is one. */
static hdp_status bad_key(const hdp_model *m, const char *key, hdp_error *err, const char *msg,
                          double v)
{
    if (m)
        return hdp_model_fail_key(m, "si", key, err, "%s (value %g)", msg, v);
    return hdp_fail(err, HDP_EINPUT, "[si] %s: %s (value %g)", key, msg, v);
}

void hdp_si_problem_free(hdp_si_problem *pb)
{
    if (pb)
        free(pb->block);
    HDP_ZERO(pb); /* no pointer left into the freed block */
}

/* Mode predictions of the continuous OU process and of unclipped discrete GD, and the
 * expected test risks of those Gaussian laws (docs/theory.md §7 with the ridge term; si.h). */
static hdp_status predictions(hdp_si_problem *pb, hdp_error *err)
{
    const long p = pb->spec.k.p, n = pb->spec.k.n, m = pb->spec.k.test_size;
    const hdp_si_params *hp = &pb->hp;
    double *c, *ck, *a0k, *g;
    const size_t P = (size_t)p;
    void *block = HDP_MC_VECS({&c, P}, {&ck, P}, {&a0k, P}, {&g, P});
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "[si] out of memory for the predicted laws (p = %ld)", p);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < p; j++)
            c[j] += 2.0 / (double)n * pb->Phi[i * p + j] * pb->y[i];
    for (long k = 0; k < p; k++) {
        for (long j = 0; j < p; j++) {
            ck[k] += pb->V[j * p + k] * c[j];
            a0k[k] += pb->V[j * p + k] / sqrt((double)p);
        }
    }
    const double tau = hp->tau, eta = hp->eta_a, s2 = hp->s * hp->s;
    for (long k = 0; k < p; k++) {
        double l = pb->l[k];
        double decay = exp(-l * tau);
        double g1 = l * tau > 1e-12 ? -expm1(-l * tau) / l : tau;           /* int_0^tau e^{-l u} */
        double g2 = 2 * l * tau > 1e-12 ? -expm1(-2 * l * tau) / (2 * l) : tau;
        pb->astar[k] = l > 0 ? ck[k] / l : NAN;
        pb->ou_mean[k] = decay * a0k[k] + g1 * ck[k];
        pb->ou_var[k] = s2 * g2;
        double r = 1.0 - eta * l, rT = pow(r, (double)hp->T);
        double geo1 = fabs(1 - r) > 1e-12 ? (1 - rT) / (1 - r) : (double)hp->T;
        double geo2 = fabs(1 - r * r) > 1e-12 ? (1 - rT * rT) / (1 - r * r) : (double)hp->T;
        pb->gd_mean[k] = rT * a0k[k] + eta * geo1 * ck[k];
        pb->gd_var[k] = s2 * eta * geo2;
    }
    /* expected risk: (g^T mean - y)^2 + sum_k g_k^2 var_k with g = V^T phi_test */
    double ou = 0, gd = 0, zero = 0;
    for (long t = 0; t < m; t++) {
        const double *ph = pb->Phi_test + t * p;
        for (long k = 0; k < p; k++) {
            double acc = 0;
            for (long j = 0; j < p; j++)
                acc += pb->V[j * p + k] * ph[j];
            g[k] = acc;
        }
        double mo = 0, mg = 0, vo = 0, vg = 0;
        for (long k = 0; k < p; k++) {
            mo += g[k] * pb->ou_mean[k];
            mg += g[k] * pb->gd_mean[k];
            vo += g[k] * g[k] * pb->ou_var[k];
            vg += g[k] * g[k] * pb->gd_var[k];
        }
        double y = pb->y_test[t];
        ou += (mo - y) * (mo - y) + vo;
        gd += (mg - y) * (mg - y) + vg;
        zero += y * y;
    }
    pb->ou_risk = ou / (double)m;
    pb->gd_risk = gd / (double)m;
    pb->zero_risk = zero / (double)m;
    free(block);
    return HDP_OK;
}

/* sigma_a, s and the privacy accounting of both stages (docs/theory.md §6, §8.2). Stage-2-only
 * form: sigma_a for the stage-2 target epsilon, stage 1 whatever sigma_W gives. Total-budget form
 * (spec.k.epsilon_total > 0; sigma_W was set by si_scalings): sigma_a spends the rest of the
 * budget, rho_z2 = rho_z_target - rho_z1. */
static hdp_status privacy(hdp_si_problem *pb, double epsilon, hdp_error *err)
{
    hdp_si_params *hp = &pb->hp;
    const long n = pb->spec.k.n;
    hp->delta = pb->spec.k.delta > 0 ? pb->spec.k.delta : 1.0 / (double)n;
    hp->sigma_route_zcdp = 0;
    hp->rho_z1 = hp->sigma_W > 0 ? hp->Delta1 * hp->Delta1 / (2 * hp->sigma_W * hp->sigma_W)
                                 : INFINITY;
    if (hp->budget_total) {
        double rz2 = isinf(hp->rho_z_target) ? INFINITY : hp->rho_z_target - hp->rho_z1;
        if (!(rz2 > 0))
            return hdp_fail(err, HDP_ENUMERIC, "[si] epsilon_total: no budget left for stage 2 "
                            "(rho_z %g, stage 1 %g)", hp->rho_z_target, hp->rho_z1);
        hp->sigma_a = isinf(rz2) ? 0.0 : sqrt(hp->eta_a * (double)hp->T / (2.0 * rz2));
        hp->sigma_route_zcdp = 1;
    } else if (isinf(epsilon)) {
        hp->sigma_a = 0;
    } else if (hdp_dpgd_simple_applies(epsilon, hp->delta)) {
        hp->sigma_a = hdp_dpgd_sigma_simple(hp->eta_a, hp->T, epsilon, hp->delta);
    } else {
        hdp_status st = hdp_dpgd_sigma_zcdp(hp->eta_a, hp->T, epsilon, hp->delta, &hp->sigma_a,
                                            NULL, err);
        if (st != HDP_OK)
            return st;
        hp->sigma_route_zcdp = 1;
    }
    if (!hp->budget_total) {
        pb->spec.k.epsilon = epsilon;
        hp->epsilon_target = epsilon;
    }
    hp->s = hp->sigma_a > 0 ? 2.0 * hp->C_a * hp->sigma_a / (double)n : 0.0;
    hp->rho_z2 = hdp_dpgd_rho_z(hp->eta_a, hp->T, hp->sigma_a);
    hp->rho_z = hp->rho_z1 + hp->rho_z2;
    hp->eps1 = hdp_zcdp_epsilon_cks(hp->rho_z1, hp->delta);
    hp->eps2 = hdp_zcdp_epsilon_cks(hp->rho_z2, hp->delta);
    hp->eps_total = hdp_zcdp_epsilon_cks(hp->rho_z, hp->delta);
    return HDP_OK;
}

hdp_status hdp_si_set_epsilon(hdp_si_problem *pb, double epsilon, hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    if (!(epsilon > 0))
        return hdp_fail(err, HDP_EINPUT, "[si] epsilon: expected > 0 or inf (value %g)", epsilon);
    if (pb->hp.budget_total)
        return hdp_fail(err, HDP_EINPUT, "[si] epsilon: the problem was built for "
                        "si.epsilon_total = %g (both stages): change spec.k.epsilon_total and "
                        "build again", pb->spec.k.epsilon_total);
    if (!isinf(epsilon) && isinf(pb->hp.C_a))
        return hdp_fail(err, HDP_EINPUT,
                        "[si] C_a: inf with private noise (epsilon %g) gives infinite noise",
                        epsilon);
    hdp_status st = privacy(pb, epsilon, err);
    return st == HDP_OK ? predictions(pb, err) : st;
}

static void fill_normal(hdp_xoshiro *g, double *x, size_t count, double scale)
{
    for (size_t i = 0; i < count; i++)
        x[i] = scale * hdp_rng_normal_fast(g);
}

/* Phi = tanh(X W + b): X [rows x d], W [d x p] row-major. */
static void features(const double *X, long rows, long d, const double *W, const double *b, long p,
                     double *Phi)
{
    for (long i = 0; i < rows; i++) {
        double *out = Phi + i * p;
        for (long j = 0; j < p; j++)
            out[j] = b[j];
        for (long k = 0; k < d; k++) {
            double xk = X[i * d + k];
            const double *wr = W + k * p;
            for (long j = 0; j < p; j++)
                out[j] += xk * wr[j];
        }
        for (long j = 0; j < p; j++)
            out[j] = tanh(out[j]);
    }
}

static void alignment(const double *W, long d, long p, const double *mu, double *al, double *mean)
{
    double s = 0;
    for (long j = 0; j < p; j++) {
        double dotm = 0, nn = 0;
        for (long k = 0; k < d; k++) {
            dotm += W[k * p + j] * mu[k];
            nn += W[k * p + j] * W[k * p + j];
        }
        al[j] = nn > 0 ? fabs(dotm) / sqrt(nn) : 0.0;
        s += al[j];
    }
    *mean = s / (double)p;
}

/* HDP_EINPUT naming the [si] key that is out of range, or for sizes too large */
static hdp_status si_check(const hdp_si_spec *spec, const hdp_model *m, hdp_error *err)
{
    const hdp_si_keys *k = &spec->k;
    const long d = k->d, p = k->p, n = k->n, mt = k->test_size;
    if (!(k->he1 != 0) || !isfinite(k->he1))
        return bad_key(m, "he1", err,
                       "the link needs information exponent 1: a finite nonzero He1 coefficient",
                       k->he1);
    /* the schema's ranges of every number key, for specs built in code (a model has passed
     * them already) */
    char why[256];
    const char *key = hdp_schema_keys_out_of_range(&hdp_si_section, k, why, sizeof why);
    if (key)
        return m ? hdp_model_fail_key(m, "si", key, err, "%s", why)
                 : hdp_fail(err, HDP_EINPUT, "[si] %s: %s", key, why);
    /* the two forms of the budget (docs/theory.md §8.2): here, not at finalize,
     * because a written model file holds every key */
    if (m && k->epsilon_total > 0 && hdp_model_key_given(m, "si", "epsilon") &&
        hdp_model_key_given(m, "si", "epsilon_total"))
        return hdp_model_fail_key(m, "si", "epsilon_total", err,
                                  "give si.epsilon (stage 2 alone) or si.epsilon_total (both "
                                  "stages), not both");
    if (m && k->epsilon_total > 0 && hdp_model_key_given(m, "si", "sigma_W"))
        return hdp_model_fail_key(m, "si", "sigma_W", err,
                                  "si.sigma_W is set by si.epsilon_total and si.stage1_share: "
                                  "leave it out, or use si.epsilon");
    if (isinf(k->C_a) && !isinf(k->epsilon_total > 0 ? k->epsilon_total : k->epsilon))
        return bad_key(m, "C_a", err,
                       "inf with private noise (finite si.epsilon): the noise 2 C_a sigma_a/n is "
                       "infinite",
                       k->C_a);
    if ((double)n * (double)(d + p) > 2e8 || (double)mt * (double)(d + p) > 2e8 ||
        (double)p * (double)p > 1e8)
        return hdp_fail(err, HDP_EINPUT, "[si] sizes d = %ld, p = %ld, n = %ld, test_size = %ld "
                        "are too large for this laboratory command", d, p, n, mt);

    return HDP_OK;
}

/* The scalings of the single-index notes (Assumption 4) into pb->hp, but eta_a and tau
 * (si_kernel). */
static hdp_status si_scalings(const hdp_si_spec *spec, const hdp_model *m, hdp_si_params *hp,
                              hdp_error *err)
{
    const hdp_si_keys *k = &spec->k;
    const long d = k->d, p = k->p, n = k->n;
    const double L = log((double)d), de = pow((double)d, k->eps_n);
    hp->q = k->he3 != 0 ? 3 : k->he2 != 0 ? 2 : 1;
    hp->lambda = k->lambda * (double)p / (de * de);
    hp->eta_W = k->eta_W * pow((double)d, 1.5 * k->eps_n) * sqrt((double)p);
    hp->C_a = k->C_a * de * sqrt((double)p) * pow(L, hp->q + 1);
    double Tr = round(k->T * de);
    if (Tr > 1e8)
        return bad_key(m, "T", err, "gives more than 1e8 stage-2 steps", k->T);
    hp->T = Tr < 1 ? 1 : (long)Tr;
    hp->sigma_W = k->sigma_W * sqrt(pow((double)d, 1 + k->eps_n) / (double)n) *
                  pow(L, hp->q + 3);
    hp->C_W = k->C_W * sqrt((double)d / (double)p);
    hp->R = k->norm_floor * hp->eta_W * (double)n * 2.0 / sqrt((double)p);
    hp->Delta1 = 2.0 * hp->eta_W * hp->C_W * sqrt((double)p) / hp->R;
    hp->budget_total = k->epsilon_total > 0;
    hp->rho_z_target = NAN;
    hp->epsilon_target = hp->budget_total ? k->epsilon_total : k->epsilon;
    if (hp->budget_total) {
        /* docs/theory.md §8.2: one zCDP budget for both stages; stage 1 gets stage1_share of it */
        const double delta = k->delta > 0 ? k->delta : 1.0 / (double)n;
        if (isinf(k->epsilon_total)) {
            hp->rho_z_target = INFINITY;
            hp->sigma_W = 0;
        } else {
            hdp_status st = hdp_zcdp_from_epsilon(k->epsilon_total, delta, &hp->rho_z_target,
                                                  err);
            if (st != HDP_OK)
                return st;
            hp->sigma_W = hp->Delta1 / sqrt(2.0 * k->stage1_share * hp->rho_z_target);
        }
    }
    return HDP_OK;
}

/* the problem's arrays */
static hdp_status si_problem_alloc(hdp_si_problem *pb, hdp_error *err)
{
    const size_t d = (size_t)pb->spec.k.d, p = (size_t)pb->spec.k.p, n = (size_t)pb->spec.k.n,
                 mt = (size_t)pb->spec.k.test_size;
    pb->block = HDP_MC_VECS({&pb->mu, d}, {&pb->W1, d * p}, {&pb->b, p}, {&pb->Phi, n * p},
                            {&pb->y, n}, {&pb->Phi_test, mt * p}, {&pb->y_test, mt},
                            {&pb->align, p}, {&pb->align0, p}, {&pb->l, p}, {&pb->V, p * p},
                            {&pb->astar, p}, {&pb->ou_mean, p}, {&pb->ou_var, p},
                            {&pb->gd_mean, p}, {&pb->gd_var, p});
    if (!pb->block)
        return hdp_fail(err, HDP_ENOMEM, "[si] out of memory (d = %ld, p = %ld, n = %ld)",
                        pb->spec.k.d, pb->spec.k.p, pb->spec.k.n);
    return HDP_OK;
}

/* scratch arrays of the data and stage 1 */
typedef struct {
    double *X, *W0, *H, *yW, *xn, *Xt; /* [n x d], [d x p], [n x p], [n], [n], [m x d] */
} si_scratch;

/* Stage 1 on the stage-1 data X (drawn here from g): one clipped gradient step from W_0,
 * Q_ij = 2 r_i a0_j tanh'(h_ij) clipped so that ||Q_ij x_i|| <= C_W, u = W_0 - eta_W X^T Q,
 * then w1_j = u_j / max(||u_j||, R) into pb->W1 (the noise comes later, si_stage2_data). */
static void si_stage1(hdp_si_problem *pb, hdp_xoshiro *g, si_scratch *w)
{
    const hdp_si_spec *spec = &pb->spec;
    const hdp_si_params *hp = &pb->hp;
    const long d = spec->k.d, p = spec->k.p, n = spec->k.n;
    double *X = w->X, *H = w->H;
    fill_normal(g, X, (size_t)(n * d), 1.0);
    const double a0 = 1.0 / sqrt((double)p);
    for (long i = 0; i < n; i++) {
        double z = 0, x2 = 0;
        for (long k = 0; k < d; k++) {
            z += X[i * d + k] * pb->mu[k];
            x2 += X[i * d + k] * X[i * d + k];
        }
        w->yW[i] = hdp_si_link(&spec->k, z);
        w->xn[i] = sqrt(x2);
    }
    features(X, n, d, w->W0, pb->b, p, H); /* H = tanh(h) */
    long clipped = 0;
    for (long i = 0; i < n; i++) {
        double f0 = 0;
        for (long j = 0; j < p; j++)
            f0 += a0 * H[i * p + j];
        double r = f0 - w->yW[i];
        for (long j = 0; j < p; j++) {
            double t = H[i * p + j];
            double q = 2.0 * r * a0 * (1.0 - t * t);
            double gn = fabs(q) * w->xn[i];
            if (gn > hp->C_W) {
                q *= hp->C_W / gn;
                clipped++;
            }
            H[i * p + j] = q;
        }
    }
    pb->clipped1 = (double)clipped / ((double)n * (double)p);
    memcpy(pb->W1, w->W0, sizeof(double) * (size_t)(d * p));
    for (long i = 0; i < n; i++)
        for (long k = 0; k < d; k++) {
            double xk = hp->eta_W * X[i * d + k];
            double *wr = pb->W1 + k * p;
            const double *qr = H + i * p;
            for (long j = 0; j < p; j++)
                wr[j] -= xk * qr[j];
        }
    pb->floored = 0;
    for (long j = 0; j < p; j++) {
        double nn = 0;
        for (long k = 0; k < d; k++)
            nn += pb->W1[k * p + j] * pb->W1[k * p + j];
        nn = sqrt(nn);
        if (nn < hp->R)
            pb->floored++;
        double den = nn > hp->R ? nn : hp->R;
        for (long k = 0; k < d; k++)
            pb->W1[k * p + j] /= den;
    }
}

/* labels y_i = link(mu^T x_i) of rows x [rows x d] */
static void si_labels(const hdp_si_problem *pb, const double *X, long rows, double *y)
{
    const long d = pb->spec.k.d;
    for (long i = 0; i < rows; i++) {
        double z = 0;
        for (long k = 0; k < d; k++)
            z += X[i * d + k] * pb->mu[k];
        y[i] = hdp_si_link(&pb->spec.k, z);
    }
}

/* The stage-2 and test data (drawn before the stage-1 noise, so that sigma_W = 0 and
 * sigma_W > 0 see the same data), the stage-1 noise sigma_W xi, the alignment of W_1, the
 * stage-2 and test features and labels. */
static void si_stage2_data(hdp_si_problem *pb, hdp_xoshiro *g, si_scratch *w)
{
    const long d = pb->spec.k.d, p = pb->spec.k.p, n = pb->spec.k.n, mt = pb->spec.k.test_size;
    fill_normal(g, w->X, (size_t)(n * d), 1.0);
    fill_normal(g, w->Xt, (size_t)(mt * d), 1.0);
    for (long k = 0; k < d; k++)
        for (long j = 0; j < p; j++)
            pb->W1[k * p + j] += pb->hp.sigma_W * hdp_rng_normal_fast(g);
    alignment(pb->W1, d, p, pb->mu, pb->align, &pb->align_mean);
    features(w->X, n, d, pb->W1, pb->b, p, pb->Phi);
    si_labels(pb, w->X, n, pb->y);
    features(w->Xt, mt, d, pb->W1, pb->b, p, pb->Phi_test);
    si_labels(pb, w->Xt, mt, pb->y_test);
}

/* The data and stage 1, from the stream of the seed (order fixed: mu, W_0, b, X_W, X_a,
 * X_test, stage-1 noise). */
static hdp_status si_data(hdp_si_problem *pb, hdp_error *err)
{
    const long d = pb->spec.k.d, p = pb->spec.k.p, n = pb->spec.k.n, mt = pb->spec.k.test_size;
    si_scratch w;
    void *block = HDP_MC_VECS({&w.X, (size_t)(n * d)}, {&w.W0, (size_t)(d * p)},
                              {&w.H, (size_t)(n * p)}, {&w.yW, (size_t)n}, {&w.xn, (size_t)n},
                              {&w.Xt, (size_t)(mt * d)});
    hdp_status st = HDP_OK;
    if (!block) {
        st = hdp_fail(err, HDP_ENOMEM, "[si] out of memory (d = %ld, p = %ld, n = %ld)", d, p, n);
    } else {
        hdp_xoshiro g;
        hdp_xoshiro_seed(&g, pb->spec.seed);
        fill_normal(&g, pb->mu, (size_t)d, 1.0);
        double nm = 0;
        for (long k = 0; k < d; k++)
            nm += pb->mu[k] * pb->mu[k];
        for (long k = 0; k < d; k++)
            pb->mu[k] /= sqrt(nm);
        fill_normal(&g, w.W0, (size_t)(d * p), 1.0 / sqrt((double)d));
        fill_normal(&g, pb->b, (size_t)p, 1.0);
        alignment(w.W0, d, p, pb->mu, pb->align0, &pb->align0_mean);
        si_stage1(pb, &g, &w);
        si_stage2_data(pb, &g, &w);
    }
    free(block);
    return st;
}

/* The stage-2 kernel A = (2/n) Phi^T Phi + 2 lambda I and its eigenbasis (pb->V, pb->l), then
 * the stage-2 step eta_a (1 / lambda_max when si.eta_a = 0) and tau = eta_a T. */
static hdp_status si_kernel(hdp_si_problem *pb, const hdp_model *m, hdp_error *err)
{
    const hdp_si_spec *spec = &pb->spec;
    hdp_si_params *hp = &pb->hp;
    const long d = spec->k.d, p = spec->k.p, n = spec->k.n;
    for (long i = 0; i < n; i++) {
        const double *ph = pb->Phi + i * p;
        for (long j = 0; j < p; j++)
            for (long k = j; k < p; k++)
                pb->V[j * p + k] += ph[j] * ph[k];
    }
    for (long j = 0; j < p; j++)
        for (long k = j; k < p; k++) {
            double v = 2.0 / (double)n * pb->V[j * p + k] + (j == k ? 2.0 * hp->lambda : 0.0);
            pb->V[j * p + k] = pb->V[k * p + j] = v;
        }
    lapack_int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)p, pb->V,
                                    (lapack_int)p, pb->l);
    if (info != 0)
        return hdp_fail(err, HDP_ENUMERIC, "[si] LAPACKE_dsyev failed (info %d)", (int)info);
    for (long k = 0; k < p; k++)
        if (pb->l[k] < 0)
            pb->l[k] = 0; /* rounding of a positive semi-definite matrix */
    const double lmax = pb->l[p - 1];
    const double L = log((double)d), de = pow((double)d, spec->k.eps_n);
    if (spec->k.eta_a == 0) {
        hp->eta_a = lmax > 0 ? 1.0 / lmax : 1.0;
    } else {
        hp->eta_a = spec->k.eta_a * de * L * L / (double)p;
        if (spec->k.stage2 == HDP_SI_GD && hp->eta_a * lmax >= 2) {
            /* the message states the bound it promises: eta_a = c d^eps_n ln^2 d / p */
            char why[256];
            snprintf(why, sizeof why,
                     "explicit stage-2 GD is unstable: eta_a lambda_max(K) = %.4g >= 2 "
                     "(lambda_max = %.4g); use a prefactor below %.4g, 0 (auto), or stage2 = ou",
                     hp->eta_a * lmax, lmax, 2.0 * (double)p / (de * L * L * lmax));
            return bad_key(m, "eta_a", err, why, spec->k.eta_a);
        }
    }
    hp->tau = hp->eta_a * (double)hp->T;
    return HDP_OK;
}


/* Prefactors that pass their ranges can still overflow the problem's numbers (si.C_a = 1e300:
 * the noise scale s; huge link coefficients: the labels): HDP_ENUMERIC, never NaN/inf written. */
static hdp_status si_finite(const hdp_si_problem *pb, hdp_error *err)
{
    const hdp_si_params *hp = &pb->hp;
    const long p = pb->spec.k.p;
    const int gd = !isnan(pb->gd_risk); /* NaN: the GD law does not apply (see the caller) */
    double risks[] = {hp->eta_a, hp->tau, hp->s, hp->lambda, pb->ou_risk, pb->zero_risk,
                      gd ? pb->gd_risk : 0.0};
    if (hdp_si_all_finite(risks, 7) && hdp_si_all_finite(pb->l, p) && hdp_si_all_finite(pb->ou_mean, p) &&
        hdp_si_all_finite(pb->ou_var, p) && (!gd || (hdp_si_all_finite(pb->gd_mean, p) &&
                                              hdp_si_all_finite(pb->gd_var, p))))
        return HDP_OK;
    return hdp_fail(err, HDP_ENUMERIC,
                    "[si] the stage-2 problem overflowed (noise scale s = %g, ridge lambda = %g, "
                    "lambda_max = %g, C_a = %g, risks OU %g, GD %g, zero %g): make si.C_a, "
                    "si.lambda or the link's si.he1..he3 smaller",
                    hp->s, hp->lambda, pb->l[p - 1], hp->C_a, pb->ou_risk, pb->gd_risk,
                    pb->zero_risk);
}

/*
 * The problem step by step: the checks (before anything is allocated), the scalings, the
 * data and stage 1, the stage-2 kernel and its eigenbasis, the privacy calibration and the
 * predicted laws of stage 2.
 */
hdp_status hdp_si_problem_build(const hdp_si_spec *spec, const hdp_model *m, hdp_si_problem *pb,
                                hdp_error *err)
{
    HDP_ZERO(pb);
    HDP_REQUIRE(err, spec);
    HDP_REQUIRE(err, pb);
    pb->spec = *spec;
    hdp_status st;
    if ((st = si_check(spec, m, err)) != HDP_OK || (st = si_scalings(spec, m, &pb->hp, err)) != HDP_OK ||
        (st = si_problem_alloc(pb, err)) != HDP_OK || (st = si_data(pb, err)) != HDP_OK ||
        (st = si_kernel(pb, m, err)) != HDP_OK || (st = privacy(pb, spec->k.epsilon, err)) != HDP_OK ||
        (st = predictions(pb, err)) != HDP_OK)
        return st;
    if (spec->k.stage2 == HDP_SI_OU && pb->hp.eta_a * pb->l[spec->k.p - 1] >= 2) {
        /* discrete GD at this step diverges: its law does not apply (NaN: empty, null) */
        pb->gd_risk = NAN;
        for (long k = 0; k < spec->k.p; k++)
            pb->gd_mean[k] = pb->gd_var[k] = NAN;
    }
    return si_finite(pb, err);
}
