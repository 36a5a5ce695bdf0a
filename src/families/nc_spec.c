/*
 * nc_spec.c — NoisyGD / NoisySGD on neural-collapse features (the NC paper; docs/theory.md §6
 * and §8): the spec, read from the model and checked (its ranges, the combinations the keys
 * allow, the memory guards), and the class sizes. See hdpsgd/nc.h for the model and its
 * conventions; the other files of the family: nc_problem.c, nc_train.c, nc_exact.c.
 */
#include "hdpsgd/nc.h"
#include "core/check.h"
#include "core/schema.h"
#include "families/sections.h"

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
    /* the schema's ranges, for specs built in code (a model has passed them already); the
     * spec begins with the section's keys in their order (hdpsgd/nc.h) */
    char why[256];
    const char *key = hdp_schema_keys_out_of_range(&hdp_nc_section, s, why, sizeof why);
    if (key)
        return bad(r, key, "%s", why);
    if ((unsigned)s->loss > HDP_NC_SQUARED || (unsigned)s->init > HDP_NC_INIT_GAUSSIAN ||
        (unsigned)s->perturbation > HDP_NC_PERT_PER_SAMPLE ||
        (unsigned)s->remedy > HDP_NC_REMEDY_PROJECTION)
        return bad(r, "loss", "an enumerated key is out of range");
    /* combinations */
    if (s->p < s->K)
        return bad(r, "p", "p = %ld is smaller than K = %ld: the K-simplex ETF needs p >= K "
                           "(P is a p x K partial orthogonal matrix)", s->p, s->K);
    if (s->frame_classes != 0 && s->frame_classes < s->K)
        return bad(r, "frame_classes", "frame_classes = %ld is smaller than K = %ld: the K classes "
                                       "are K of the K0 vertices of the frame (K0 >= K; 0 = K)",
                   s->frame_classes, s->K);
    if (s->p < s->frame_classes)
        return bad(r, "frame_classes", "frame_classes = %ld is larger than p = %ld: the K0-simplex "
                                       "ETF needs p >= K0", s->frame_classes, s->p);
    if (s->remedy == HDP_NC_REMEDY_PROJECTION && s->frame_classes > s->K)
        return bad(r, "remedy", "projection projects on the perturbed e_1 .. e_{K-1}, which span the "
                                "K-simplex ETF only: it needs frame_classes = K or 0 (here %ld > K "
                                "= %ld)", s->frame_classes, s->K);
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
#define COPY(f, ...) s->f = q->f;
    HDP_NC_KEYS(COPY)
#undef COPY
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
