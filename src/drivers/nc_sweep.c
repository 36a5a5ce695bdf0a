/*
 * nc_sweep.c — the nc experiments driver (hdpsgd/ncsweep.h): one NoisyGD point, and the
 * sweeps over p of `hdpsgd nc --sweep`: their curves (the [nc] keys each changes, the
 * legends), the planned and checked specs, the points run on the grid runner, the
 * flatness and exactness statistics. Prints nothing.
 */
#include "hdpsgd/ncsweep.h"
#include "core/check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/grid.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"

hdp_status hdp_nc_point_run(hdp_nc_point *pt, int threads, int exact_alone, hdp_error *err)
{
    HDP_REQUIRE(err, pt);
    hdp_nc_problem pb;
    hdp_status st = hdp_nc_problem_alloc(&pt->spec, &pb, err);
    if (st != HDP_OK)
        return st;
    pt->offset_norm = pb.offset_norm;
    pt->pca_alignment = pt->spec.remedy == HDP_NC_REMEDY_PCA ? pb.pca_alignment : NAN;
    if (exact_alone) {
        memset(&pt->res, 0, sizeof pt->res);
        pt->res.sigma = pb.sigma;
        pt->res.rho_total = (double)pt->spec.steps * pt->spec.rho;
        pt->res.epsilon = hdp_zcdp_epsilon_cks(pt->res.rho_total, pt->spec.delta);
        pt->res.error_mean = pt->res.error_stderr = NAN;
        st = hdp_nc_exact_error(&pb, &pt->exact, err);
        pt->res.exact_error = pt->exact;
    } else {
        st = hdp_nc_run(&pb, threads, &pt->res, err);
        pt->exact = pt->res.exact_error;
    }
    hdp_nc_problem_free(&pb);
    return st;
}

double hdp_nc_point_z(const hdp_nc_point *pt)
{
    if (!pt || isnan(pt->exact) || !(pt->res.error_stderr > 1e-12))
        return NAN;
    return fabs(pt->res.error_mean - pt->exact) / pt->res.error_stderr;
}

/* ---- the curves of each sweep ---- */

static void curve(hdp_ncsweep_curve *c, const char *name, int reference, const char *label,
                  const char *const *sets)
{
    *c = (hdp_ncsweep_curve){.name = name, .reference = reference};
    snprintf(c->label, sizeof c->label, "%s", label);
    for (int i = 0; sets[i] && c->nsets < 5; i++)
        snprintf(c->sets[c->nsets++], sizeof c->sets[0], "nc.%s", sets[i]);
}

/* a NULL-terminated list of key=value strings of [nc] */
#define SETS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The fixed curves of the perturb and remedy sweeps: name, reference, legend, [nc] keys. */
typedef struct {
    const char *name;
    int reference;
    const char *label;
    const char *sets[4];
} curve_row;

static const curve_row perturb_rows[] = {
    {"none", 0, "none: perfect collapse", {"perturbation=none", "remedy=none"}},
    {"test-offset", 0, "fixed test offset", {"perturbation=test-offset", "remedy=none"}},
    {"adversarial", 0, "adversarial test perturbation",
     {"perturbation=adversarial", "remedy=none"}},
    {"stochastic", 0, "stochastic test noise ±β", {"perturbation=stochastic", "remedy=none"}},
    {"train-offset", 0, "fixed training offset", {"perturbation=train-offset", "remedy=none"}},
    {"both", 0, "same offset on training and test", {"perturbation=both", "remedy=none"}},
    {"both-imbalanced", 0, "offset on both, imbalanced α = 0.3",
     {"perturbation=both", "remedy=none", "imbalance=0.3"}},
    {"per-sample", 0, "per-sample training noise ±β", {"perturbation=per-sample", "remedy=none"}},
};

static const curve_row remedy_rows[] = {
    {"train-offset+center", 0, "training offset + centring",
     {"perturbation=train-offset", "remedy=center"}},
    {"both+center", 0, "offset on both + centring", {"perturbation=both", "remedy=center"}},
    {"both-imbalanced+center", 0, "offset on both, α = 0.3, + centring",
     {"perturbation=both", "remedy=center", "imbalance=0.3"}},
    {"test-offset+pca", 0, "test offset + PCA", {"perturbation=test-offset", "remedy=pca"}},
    {"stochastic+pca", 0, "stochastic test noise + PCA", {"perturbation=stochastic", "remedy=pca"}},
    {"adversarial+pca", 0, "adversarial + PCA", {"perturbation=adversarial", "remedy=pca"}},
    {"per-sample+pca", 0, "per-sample training noise + PCA",
     {"perturbation=per-sample", "remedy=pca"}},
    {"both", 1, "offset on both, no remedy", {"perturbation=both", "remedy=none"}},
    {"per-sample", 1, "per-sample noise, no remedy", {"perturbation=per-sample", "remedy=none"}},
};

static int from_rows(const curve_row *rows, int count, const hdp_model *m, hdp_ncsweep_curve *cv)
{
    for (int i = 0; i < count; i++) {
        const char *sets[5] = {rows[i].sets[0], rows[i].sets[1], rows[i].sets[2], rows[i].sets[3],
                               NULL};
        curve(&cv[i], rows[i].name, rows[i].reference, rows[i].label, sets);
        if (!strcmp(rows[i].name, "per-sample+pca")) { /* its limit is the public sample size */
            size_t len = strlen(cv[i].label);
            snprintf(cv[i].label + len, sizeof cv[i].label - len, " (%ld public samples)",
                     hdp_nc_keys_of(m)->public_samples);
        }
    }
    return count;
}

/* flat: perfect collapse under the changes that the NC paper says do not matter */
static int flat_curves(const hdp_model *m, hdp_ncsweep_curve *cv)
{
    const double eta = hdp_nc_keys_of(m)->eta;
    char eta100[80], eta5[80], batch[80], label[160];
    snprintf(eta100, sizeof eta100, "eta=%.17g", eta / 100);
    snprintf(eta5, sizeof eta5, "eta=%.17g", eta / 5);
    const long n_train = hdp_nc_keys_of(m)->n;
    snprintf(batch, sizeof batch, "batch=%ld", n_train / 2 > 0 ? n_train / 2 : 1);
    int n = 0;
    snprintf(label, sizeof label, "NoisyGD, cross-entropy, η = %g", eta);
    curve(&cv[n++], "ce", 0, label, SETS("loss=ce", "perturbation=none", "remedy=none"));
    snprintf(label, sizeof label, "η = %g", eta / 100);
    curve(&cv[n++], "eta", 0, label,
          SETS("loss=ce", "perturbation=none", "remedy=none", eta100));
    curve(&cv[n++], "squared", 0, "squared loss",
          SETS("loss=squared", "perturbation=none", "remedy=none"));
    curve(&cv[n++], "imbalance", 0, "imbalanced classes: α = 0.3",
          SETS("loss=ce", "perturbation=none", "remedy=none", "imbalance=0.3"));
    snprintf(label, sizeof label, "NoisyGD, T = 5 steps, η = %g (5ρ-zCDP)", eta / 5);
    curve(&cv[n++], "steps", 0, label,
          SETS("loss=ce", "perturbation=none", "remedy=none", "steps=5", eta5));
    snprintf(label, sizeof label, "NoisySGD, batch n/2, T = 5, η = %g (5ρ-zCDP)", eta);
    curve(&cv[n++], "sgd", 0, label,
          SETS("loss=ce", "perturbation=none", "remedy=none", "steps=5", batch));
    curve(&cv[n++], "gaussian", 0, "Gaussian initialisation N(0, 1)",
          SETS("loss=ce", "perturbation=none", "remedy=none", "init=gaussian"));
    return n;
}

/* frame (the NC paper, Theorem 4): K classes at K vertices of a K0-simplex ETF, K0 = K, 2K,
 * 5K and p (the largest frame that fits) */
static int frame_curves(const hdp_model *m, hdp_ncsweep_curve *cv)
{
    const long K = hdp_nc_keys_of(m)->K;
    char k2[80], k5[80], label[160];
    snprintf(k2, sizeof k2, "frame_classes=%ld", 2 * K);
    snprintf(k5, sizeof k5, "frame_classes=%ld", 5 * K);
    int n = 0;
    snprintf(label, sizeof label, "K0 = K = %ld: the K-simplex ETF (Theorem 2)", K);
    curve(&cv[n++], "frame-K", 0, label, SETS("perturbation=none", "remedy=none", "frame_classes=0"));
    snprintf(label, sizeof label, "K of the K0 = 2K = %ld vertices of a larger frame", 2 * K);
    curve(&cv[n++], "frame-2K", 0, label, SETS("perturbation=none", "remedy=none", k2));
    snprintf(label, sizeof label, "K of the K0 = 5K = %ld vertices", 5 * K);
    curve(&cv[n++], "frame-5K", 0, label, SETS("perturbation=none", "remedy=none", k5));
    curve(&cv[n], "frame-p", 0, "K of the K0 = p vertices (the largest frame in R^p)",
          SETS("perturbation=none", "remedy=none"));
    cv[n++].per_p = 2;
    return n;
}

/* projection (the NC paper, Theorem 5; K = 2): per-sample noise, projected on e_1 + Delta */
static int projection_curves(hdp_ncsweep_curve *cv)
{
    int n = 0;
    curve(&cv[n], "projection-inv-p", 0, "projection on e_1 + Δ, ||Δ||_∞ = β_0 = 1/p",
          SETS("perturbation=per-sample", "remedy=projection"));
    cv[n++].per_p = 1;
    curve(&cv[n++], "projection-fixed", 0, "projection on e_1 + Δ, β_0 = 0.1 for every p",
          SETS("perturbation=per-sample", "remedy=projection", "projection_beta=0.1"));
    curve(&cv[n++], "projection-e1", 0, "projection on e_1 exactly (β_0 = 0)",
          SETS("perturbation=per-sample", "remedy=projection", "projection_beta=0"));
    curve(&cv[n++], "per-sample", 1, "per-sample training noise ±β, no remedy",
          SETS("perturbation=per-sample", "remedy=none"));
    return n;
}

/* The curves of each sweep (see `hdpsgd help nc`). Returns the count, 0 for an unknown name. */
static int sweep_curves(const char *name, const hdp_model *m, hdp_ncsweep_curve *cv)
{
    if (!strcmp(name, "frame"))
        return frame_curves(m, cv);
    if (!strcmp(name, "projection"))
        return projection_curves(cv);
    if (!strcmp(name, "perturb"))
        return from_rows(perturb_rows, (int)(sizeof perturb_rows / sizeof perturb_rows[0]), m, cv);
    if (!strcmp(name, "remedy"))
        return from_rows(remedy_rows, (int)(sizeof remedy_rows / sizeof remedy_rows[0]), m, cv);
    if (!strcmp(name, "flat"))
        return flat_curves(m, cv);
    return 0;
}

int hdp_ncsweep_known(const char *name)
{
    return name && (!strcmp(name, "flat") || !strcmp(name, "perturb") || !strcmp(name, "remedy") ||
                    !strcmp(name, "frame") || !strcmp(name, "projection"));
}

void hdp_ncsweep_free(hdp_ncsweep *sw)
{
    if (!sw)
        return;
    free(sw->points);
    memset(sw, 0, sizeof *sw);
    sw->failed_curve = -1;
}

/* the spec of curve c at p = ps[i] on mc_model (the curve's keys set) */
/* The model of curve c: m with the curve's [nc] keys, each through hdp_model_with (checked
 * and finalized as a --set would be). */
static hdp_status curve_model(const hdp_model *m, const hdp_ncsweep_curve *c, hdp_model *out,
                              hdp_error *err)
{
    hdp_status st = hdp_model_copy(out, m, err);
    for (int k = 0; k < c->nsets && st == HDP_OK; k++) {
        char key[sizeof c->sets[0]];
        snprintf(key, sizeof key, "%s", c->sets[k]);
        char *eq = strchr(key, '=');
        if (!eq) {
            hdp_model_free(out);
            return hdp_fail(err, HDP_EINPUT, "nc sweep: '%s' is not key=value", c->sets[k]);
        }
        *eq = '\0';
        hdp_model next;
        st = hdp_model_with(out, key, eq + 1, &next, err);
        hdp_model_free(out);
        *out = next; /* moved: next is not freed */
    }
    return st;
}

static hdp_status plan_point(hdp_ncsweep *sw, const hdp_model *mc_model, uint64_t seed, int c,
                             int i, hdp_error *err)
{
    hdp_nc_spec s;
    char p[32];
    snprintf(p, sizeof p, "%ld", sw->ps[i]);
    hdp_model at_p; /* the curve's model at this p, checked as a --set nc.p would be */
    hdp_status st = hdp_model_with(mc_model, "nc.p", p, &at_p, err);
    const hdp_ncsweep_curve *cv = &sw->curves[c];
    if (st == HDP_OK && cv->per_p) { /* projection_beta = 1/p or frame_classes = p */
        char v[40];
        snprintf(v, sizeof v, cv->per_p == 1 ? "%.17g" : "%.0f",
                 cv->per_p == 1 ? 1.0 / (double)sw->ps[i] : (double)sw->ps[i]);
        hdp_model next;
        st = hdp_model_with(&at_p, cv->per_p == 1 ? "nc.projection_beta" : "nc.frame_classes", v,
                            &next, err);
        hdp_model_free(&at_p);
        at_p = next;
    }
    if (st == HDP_OK)
        st = hdp_nc_spec_from_model(&at_p, &s, err);
    hdp_model_free(&at_p);
    if (st != HDP_OK && (strstr(err->msg, "[nc] p:") || strstr(err->msg, "[nc] p = "))) {
        hdp_error_clear(err);
        return hdp_fail(err, HDP_EINPUT, "--ps: p = %ld: %s", sw->ps[i],
                        "every p of the sweep must be >= nc.K and >= the curve's frame_classes "
                        "(the ETF needs p >= K0) and keep the stored features below 2e8 numbers");
    }
    if (st != HDP_OK)
        return st;
    s.draws = sw->draws;
    /* an independent stream per point: splitmix64 of the seed, curve and p index */
    uint64_t x = seed ^ ((uint64_t)(c + 1) << 40) ^ (uint64_t)(i + 1);
    s.seed = hdp_splitmix64_next(&x);
    sw->points[c * sw->nps + i].curve = c;
    sw->points[c * sw->nps + i].spec = s;
    return HDP_OK;
}

hdp_status hdp_ncsweep_plan(const hdp_model *m, const char *name, const long *ps, int nps,
                            hdp_ncsweep *sw, hdp_error *err)
{
    HDP_ZERO(sw);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, name);
    HDP_REQUIRE(err, ps);
    HDP_REQUIRE(err, sw);
    sw->failed_curve = -1;
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (!hdp_ncsweep_known(name))
        return hdp_fail(err, HDP_EINPUT, "--sweep '%s': expected flat, perturb, remedy, frame or "
                                         "projection", name);
    if (nps < 1 || nps > HDP_NCSWEEP_MAX_PS)
        return hdp_fail(err, HDP_EINPUT, "hdp_ncsweep_plan: %d values of p: expected 1 to %d",
                        nps, HDP_NCSWEEP_MAX_PS);
    hdp_nc_spec base;
    hdp_status st = hdp_nc_spec_from_model(m, &base, err);
    if (st != HDP_OK)
        return st;
    if (!strcmp(name, "projection") && base.K != 2)
        return hdp_fail(err, HDP_EINPUT, "--sweep projection is the NC paper's Theorem 5, a binary "
                                         "problem: it needs nc.K = 2 (here %ld; --set nc.K=2)",
                        base.K);
    snprintf(sw->name, sizeof sw->name, "%s", name);
    sw->ncurves = sweep_curves(name, m, sw->curves);
    sw->nps = nps;
    memcpy(sw->ps, ps, sizeof(long) * (size_t)nps);
    sw->draws = hdp_model_key_given(m, "nc", "draws") ? hdp_nc_keys_of(m)->draws : 400;
    sw->points = calloc((size_t)(sw->ncurves * nps), sizeof *sw->points);
    if (!sw->points)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    for (int c = 0; c < sw->ncurves && st == HDP_OK; c++) {
        hdp_model mc_model;
        st = curve_model(m, &sw->curves[c], &mc_model, err);
        for (int i = 0; i < nps && st == HDP_OK; i++)
            st = plan_point(sw, &mc_model, (uint64_t)base.seed, c, i, err);
        hdp_model_free(&mc_model);
        if (st != HDP_OK)
            sw->failed_curve = c;
    }
    return st;
}

typedef struct {
    hdp_ncsweep *sw;
    int threads;
    hdp_progress_fn progress;
    void *user;
    int stopped; /* the progress callback asked to stop */
} run_ctx;

static hdp_status run_job(void *user, long k, void *row, hdp_error *err)
{
    run_ctx *c = user;
    if (c->stopped)
        return hdp_fail(err, HDP_ECANCELLED, "nc --sweep: stopped before point %ld", k + 1);
    hdp_nc_point *pt = row;
    *pt = c->sw->points[k];
    hdp_status st = hdp_nc_point_run(pt, c->threads, 0, err);
    c->sw->points[k] = *pt;
    return st;
}

/* the grid's report after point done - 1 to the caller's; a stop asked for takes effect
 * before the next point (none after the last) */
static int run_progress(const char *what, long done, long count, double value, void *user)
{
    (void)what, (void)value;
    run_ctx *c = user;
    const long k = done - 1;
    c->sw->seconds += c->sw->points[k].res.seconds;
    if (c->progress &&
        c->progress("nc point", done, count, c->sw->points[k].res.error_mean, c->user))
        c->stopped = 1;
    return 0;
}

hdp_status hdp_ncsweep_run(hdp_ncsweep *sw, int threads, hdp_progress_fn progress,
                           void *user, hdp_error *err)
{
    HDP_REQUIRE(err, sw);
    HDP_REQUIRE(err, sw->points);
    run_ctx c = {sw, threads, progress, user, 0};
    hdp_grid_spec g = {.count = (long)sw->ncurves * sw->nps,
                       .row_size = sizeof(hdp_nc_point),
                       .job = run_job,
                       .progress = run_progress,
                       .user = &c};
    hdp_grid_result res;
    sw->seconds = 0;
    hdp_status st = hdp_grid_run(&g, &res, err);
    hdp_grid_free(&res);
    return st;
}

double hdp_ncsweep_flat_z(const hdp_ncsweep *sw, int curve)
{
    if (!sw || !sw->points || curve < 0 || curve >= sw->ncurves)
        return NAN;
    const hdp_nc_point *pts = sw->points + curve * sw->nps;
    double z = 0;
    for (int i = 1; i < sw->nps; i++) {
        double d = fabs(pts[i].res.error_mean - pts[0].res.error_mean);
        double se = sqrt(pts[i].res.error_stderr * pts[i].res.error_stderr +
                         pts[0].res.error_stderr * pts[0].res.error_stderr);
        if (se > 0)
            z = fmax(z, d / se);
        else if (d > 0)
            z = INFINITY;
    }
    return z;
}

double hdp_ncsweep_max_z_exact(const hdp_ncsweep *sw, int curve)
{
    if (!sw || !sw->points || curve < 0 || curve >= sw->ncurves)
        return NAN;
    const hdp_nc_point *pts = sw->points + curve * sw->nps;
    double zx = NAN;
    for (int i = 0; i < sw->nps; i++) {
        double z = hdp_nc_point_z(&pts[i]);
        if (!isnan(z))
            zx = isnan(zx) ? z : fmax(zx, z);
    }
    return zx;
}
