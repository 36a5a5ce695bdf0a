/*
 * nc_spec.c — NoisyGD / NoisySGD on neural-collapse features (the NC paper; docs/theory.md §6
 * and §8): the spec, read from the model and checked (its ranges, the combinations the keys
 * allow, the memory guards), and the class sizes. See hdpsgd/nc.h for the model and its
 * conventions; the other files of the family: nc_problem.c, nc_train.c, nc_exact.c.
 */
#include "hdpsgd/nc.h"
#include "core/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* Memory guards: stored doubles per thread (per-sample features) and for the public samples. */
#define NC_MAX_STORED 2.0e8

/* ---- the spec ---- */

typedef struct {
    const hdp_model *m; /* NULL: a spec built in code */
    hdp_error *err;
} reporter;

static hdp_status bad(const reporter *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static hdp_status bad(const reporter *r, const char *key, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->m)
        return hdp_model_fail_key(r->m, "nc", key, r->err, "%s", msg);
    return hdp_fail(r->err, HDP_EINPUT, "[nc] %s: %s", key, msg);
}

void hdp_nc_class_sizes(long K, long n, double imbalance, long *nk)
{
    if (!nk)
        return;
    if (imbalance > 0) {
        long n1 = (long)nearbyint(imbalance * (double)n);
        long rest = n - n1;
        nk[0] = n1;
        for (long k = 1; k < K; k++)
            nk[k] = rest / (K - 1) + (k - 1 < rest % (K - 1) ? 1 : 0);
        return;
    }
    for (long k = 0; k < K; k++)
        nk[k] = n / K + (k < n % K ? 1 : 0);
}

static hdp_status check(const hdp_nc_spec *s, const reporter *r)
{
    /* the schema's ranges, for specs built in code (a model has passed them already) */
    if (s->K < 2 || s->K > 1000)
        return bad(r, "K", "K = %ld: expected an integer in [2, 1000]", s->K);
    if (s->p < 2) return bad(r, "p", "p = %ld: expected an integer >= 2", s->p);
    if (s->n < 2) return bad(r, "n", "n = %ld: expected an integer >= 2", s->n);
    if (!(s->imbalance >= 0 && s->imbalance < 1))
        return bad(r, "imbalance", "imbalance = %g: expected 0 (balanced) or a number in (0, 1)",
                   s->imbalance);
    if (!(s->G > 0) || !isfinite(s->G)) return bad(r, "G", "G = %g: expected a number > 0", s->G);
    if (!(s->rho > 0)) return bad(r, "rho", "rho = %g: expected a number > 0 or inf", s->rho);
    if (s->steps < 1) return bad(r, "steps", "steps = %ld: expected an integer >= 1", s->steps);
    if (!(s->eta > 0) || !isfinite(s->eta))
        return bad(r, "eta", "eta = %g: expected a number > 0", s->eta);
    if (!(s->init_std >= 0) || !isfinite(s->init_std))
        return bad(r, "init_std", "init_std = %g: expected a number >= 0", s->init_std);
    if (!(s->beta >= 0) || !isfinite(s->beta))
        return bad(r, "beta", "beta = %g: expected a number >= 0", s->beta);
    if (s->public_samples < 2)
        return bad(r, "public_samples", "public_samples = %ld: expected an integer >= 2",
                   s->public_samples);
    if (s->batch < 0) return bad(r, "batch", "batch = %ld: expected an integer >= 0", s->batch);
    if (s->draws < 1) return bad(r, "draws", "draws = %ld: expected an integer >= 1", s->draws);
    if (s->test_samples < 1)
        return bad(r, "test_samples", "test_samples = %ld: expected an integer >= 1",
                   s->test_samples);
    if (!(s->delta > 0 && s->delta < 1))
        return bad(r, "delta", "delta = %g: expected a number in (0, 1)", s->delta);
    if ((unsigned)s->loss > HDP_NC_SQUARED || (unsigned)s->init > HDP_NC_INIT_GAUSSIAN ||
        (unsigned)s->perturbation > HDP_NC_PERT_PER_SAMPLE ||
        (unsigned)s->remedy > HDP_NC_REMEDY_PCA)
        return bad(r, "loss", "an enumerated key is out of range");
    /* combinations */
    if (s->p < s->K)
        return bad(r, "p", "p = %ld is smaller than K = %ld: the K-simplex ETF needs p >= K "
                           "(P is a p x K partial orthogonal matrix)", s->p, s->K);
    if (s->n < s->K)
        return bad(r, "n", "n = %ld training samples for K = %ld classes: every class needs a "
                           "sample (n is the total over the classes)", s->n, s->K);
    long nk[1000];
    hdp_nc_class_sizes(s->K, s->n, s->imbalance, nk);
    for (long k = 0; k < s->K; k++)
        if (nk[k] < 1)
            return bad(r, "imbalance",
                       "imbalance = %g with n = %ld and K = %ld leaves class %ld empty: class 1 "
                       "gets round(alpha n), the others share the rest",
                       s->imbalance, s->n, s->K, k + 1);
    if (s->loss == HDP_NC_LOGISTIC && s->K != 2)
        return bad(r, "loss", "logistic is the binary model of the NC paper, Theorem 3 (one vector "
                              "theta) and needs K = 2 (K = %ld); use ce for K classes", s->K);
    if (s->batch > s->n)
        return bad(r, "batch", "batch = %ld is larger than n = %ld (0 = full batch, NoisyGD)",
                   s->batch, s->n);
    if (s->remedy == HDP_NC_REMEDY_PCA && s->public_samples < s->K)
        return bad(r, "public_samples", "public_samples = %ld < K = %ld: the K-1 principal "
                                        "directions need at least K public samples",
                   s->public_samples, s->K);
    if (s->perturbation == HDP_NC_PERT_STOCHASTIC &&
        (double)s->test_samples * (double)s->p > NC_MAX_STORED)
        return bad(r, "test_samples", "test_samples x p = %g stored test points per thread: too "
                                      "large (at most %g)",
                   (double)s->test_samples * (double)s->p, NC_MAX_STORED);
    if ((double)s->K * (double)s->p > NC_MAX_STORED)
        return bad(r, "p", "K p = %g weights: too large (at most %g)", (double)s->K * (double)s->p,
                   NC_MAX_STORED);
    if (s->perturbation == HDP_NC_PERT_PER_SAMPLE && (double)s->n * (double)s->p > NC_MAX_STORED)
        return bad(r, "p", "per-sample perturbations store n x p = %g features per thread: too "
                           "large (at most %g)", (double)s->n * (double)s->p, NC_MAX_STORED);
    if (s->remedy == HDP_NC_REMEDY_PCA && (double)s->public_samples * (double)s->p > NC_MAX_STORED)
        return bad(r, "public_samples", "public_samples x p = %g: too large (at most %g)",
                   (double)s->public_samples * (double)s->p, NC_MAX_STORED);
    return HDP_OK;
}

hdp_status hdp_nc_spec_from_model(const hdp_model *m, hdp_nc_spec *s, hdp_error *err)
{
    HDP_ZERO(s);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, s);
    const hdp_nc_keys *q = hdp_nc_keys_of(m);
    s->K = q->K;
    s->p = q->p;
    s->n = q->n;
    s->imbalance = q->imbalance;
    s->G = q->G;
    s->rho = q->rho;
    s->steps = q->steps;
    s->eta = q->eta;
    s->loss = q->loss;
    s->init = q->init;
    s->init_std = q->init_std;
    s->perturbation = q->perturbation;
    s->beta = q->beta;
    s->remedy = q->remedy;
    s->public_samples = q->public_samples;
    s->batch = q->batch;
    s->draws = q->draws;
    s->test_samples = q->test_samples;
    s->delta = q->delta;
    s->seed = m->seed;
    reporter r = {m, err};
    return check(s, &r);
}

hdp_status hdp_nc_spec_check(const hdp_nc_spec *s, hdp_error *err)
{
    HDP_REQUIRE(err, s);
    reporter r = {NULL, err};
    return check(s, &r);
}
