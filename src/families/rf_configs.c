/*
 * rf_configs.c — the experiments' DP-GD in mode coordinates (docs/theory.md §7): the final
 * losses of a list of configurations, each on its own stream (hdp_rf_dpgd_final), run through
 * the generic Monte Carlo loop of sim/mc.h, the most expensive first.
 *  - Noise: configuration j draws its Gaussians from the block stream of its own xoshiro256++
 *    stream (the seed's stream jumped cfg->stream times).
 */
#include "hdpsgd/rf.h"
#include "core/alloc.h"
#include "core/check.h"
#include "families/rf_internal.h"
#include "sim/mc.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rng.h"

/* ---- experiments: DP-GD in mode coordinates (docs/theory.md §7) ---- */

typedef struct {
    double *a, *sa, *g, *xim; /* [r] */
    double *resid, *v;        /* [n] */
    double *Z, *xi, *theta;   /* [p] */
    double *pred;             /* [m] */
    hdp_normals ns;           /* the configuration's block Gaussian stream */
} cfg_ws;

/* what the configurations read, and where configuration j writes: cfg[j] */
typedef struct {
    const hdp_rf_problem *pb;
    hdp_rf_config *cfg;
} cfg_loop_ctx;

static void *rf_cfg_ws_alloc(const void *c)
{
    const hdp_rf_problem *pb = ((const cfg_loop_ctx *)c)->pb;
    const long n = pb->spec.k.n, p = pb->spec.k.p, m = pb->spec.k.test_size, r = pb->r;
    long big = m > n ? m : n;
    if (pb->Phi_val && pb->spec.v > big)
        big = pb->spec.v;
#define A(f, len) HDP_MC_ARRAY(cfg_ws, f, len)
    const hdp_mc_array a[] = {A(a, r), A(sa, r), A(g, r),  A(xim, r),   A(resid, n),
                              A(v, n), A(Z, p),  A(xi, p), A(theta, p), A(pred, big)};
#undef A
    return HDP_MC_WS_ALLOC(cfg_ws, a);
}

/* resid = U S a - y = Phi theta - y for theta = sum_k a_k w_k (plus any part orthogonal to
 * the rows of Phi): Phi w_k = s_k u_k (docs/theory.md §7) */
static void modes_residual(const hdp_rf_problem *pb, const double *a, double *sa, double *resid)
{
    const long n = pb->spec.k.n, r = pb->r;
    for (long k = 0; k < r; k++)
        sa[k] = pb->s[k] * a[k];
    blas_gemv(0, n, r, 1.0, pb->U, r, sa, 0.0, resid);
    for (long i = 0; i < n; i++)
        resid[i] -= pb->y[i];
}

/*
 * One configuration of DP-GD in mode coordinates a_k = w_k^T theta (docs/theory.md §7): the
 * clipped gradient (2/n) Phi^T (w .* r) has coefficients (2/n) s_k u_k^T (w .* r), and
 * Phi theta = U S a, so a step costs two n x r products. The noise splits into
 * xi_k ~ N(0, 1) on the modes and a Brownian motion orthogonal to the rows of Phi, whose
 * value after T steps, s sqrt(eta) P_perp Z with Z ~ N(0, T I_p), is drawn at the end.
 */
static void cfg_one(const hdp_rf_problem *pb, hdp_rf_config *cf, cfg_ws *w)
{
    const long n = pb->spec.k.n, p = pb->spec.k.p, m = pb->spec.k.test_size, r = pb->r;
    const double step_coef = 2.0 * cf->eta / (double)n, cs = cf->s * sqrt(cf->eta);
    memset(w->a, 0, sizeof(double) * (size_t)r);
    if (cf->p_space_noise)
        memset(w->Z, 0, sizeof(double) * (size_t)p);
    double clip_sum = 0, clip_max = 0;
    for (long k = 1; k <= cf->T; k++) {
        modes_residual(pb, w->a, w->sa, w->resid);
        long nc = 0;
        for (long i = 0; i < n; i++) {
            double gn = 2.0 * fabs(w->resid[i]) * pb->phi_norm[i];
            if (gn > cf->C_clip) {
                w->v[i] = w->resid[i] * (cf->C_clip / gn);
                nc++;
            } else {
                w->v[i] = w->resid[i];
            }
        }
        double cfrac = (double)nc / (double)n;
        clip_sum += cfrac;
        if (cfrac > clip_max) clip_max = cfrac;
        blas_gemv(1, n, r, 1.0, pb->U, r, w->v, 0.0, w->g);
        if (cs > 0) {
            if (cf->p_space_noise) {
                hdp_normals_fill(&w->ns, w->xi, p);
                for (long j = 0; j < p; j++)
                    w->Z[j] += w->xi[j];
                blas_gemv(0, n, p, 1.0, pb->Phi, p, w->xi, 0.0, w->v);
                to_modes(pb, w->v, w->xim);
            } else {
                hdp_normals_fill(&w->ns, w->xim, r);
            }
        }
        for (long kk = 0; kk < r; kk++)
            w->a[kk] += -step_coef * pb->s[kk] * w->g[kk] + (cs > 0 ? cs * w->xim[kk] : 0.0);
    }
    modes_residual(pb, w->a, w->sa, w->resid);
    cf->train_loss = dot(w->resid, w->resid, n) / (double)n;
    cf->clipped_mean = clip_sum / (double)cf->T;
    cf->clipped_max = clip_max;
    /* theta = W (a - cs W^T Z) + cs Z, W b = Phi^T U S^{-1} b; test predictions Phi_test theta */
    if (cs > 0) {
        if (!cf->p_space_noise) {
            hdp_normals_fill(&w->ns, w->Z, p);
            double sq = sqrt((double)cf->T);
            for (long j = 0; j < p; j++)
                w->Z[j] *= sq;
        }
        blas_gemv(0, n, p, 1.0, pb->Phi, p, w->Z, 0.0, w->v);
        to_modes(pb, w->v, w->g);
        for (long k = 0; k < r; k++)
            w->sa[k] = (w->a[k] - cs * w->g[k]) / pb->s[k];
    } else {
        for (long k = 0; k < r; k++)
            w->sa[k] = w->a[k] / pb->s[k];
    }
    blas_gemv(0, n, r, 1.0, pb->U, r, w->sa, 0.0, w->v);
    blas_gemv(1, n, p, 1.0, pb->Phi, p, w->v, 0.0, w->theta);
    if (cs > 0)
        for (long j = 0; j < p; j++)
            w->theta[j] += cs * w->Z[j];
    blas_gemv(0, m, p, 1.0, pb->Phi_test, p, w->theta, 0.0, w->pred);
    cf->test_loss = mse(w->pred, pb->y_test, m);
    cf->val_loss = NAN;
    if (pb->Phi_val) {
        blas_gemv(0, pb->spec.v, p, 1.0, pb->Phi_val, p, w->theta, 0.0, w->pred);
        cf->val_loss = mse(w->pred, pb->y_val, pb->spec.v);
    }
}

/* order[] = 0..ncfg-1 sorted by decreasing T (stable insertion sort) */
static void order_by_cost(const hdp_rf_config *cfg, long ncfg, long *order)
{
    for (long j = 0; j < ncfg; j++) {
        long i = j;
        while (i > 0 && cfg[order[i - 1]].T < cfg[j].T) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = j;
    }
}

/* configuration j on its own stream: the seed's stream jumped cfg[j].stream times */
static hdp_status rf_cfg_run(const void *vc, long j, void *vw, hdp_xoshiro *stream, void *slot,
                             hdp_error *err)
{
    (void)stream, (void)slot, (void)err;
    const cfg_loop_ctx *c = vc;
    cfg_ws *w = vw;
    hdp_rf_config *cf = &c->cfg[j];
    hdp_xoshiro xs;
    hdp_xoshiro_stream(&xs, (uint64_t)c->pb->spec.seed, (uint64_t)cf->stream);
    hdp_normals_init(&w->ns, &xs);
    cfg_one(c->pb, cf, w);
    return HDP_OK;
}

hdp_status hdp_rf_dpgd_final(const hdp_rf_problem *pb, hdp_rf_config *cfg, long ncfg,
                             int threads, hdp_progress_fn progress, void *progress_user,
                             hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, cfg);
    if (ncfg < 1)
        return HDP_OK;
    for (long j = 0; j < ncfg; j++) {
        if (cfg[j].T < 1 || !(cfg[j].eta > 0) || !(cfg[j].C_clip > 0) || !(cfg[j].s >= 0) ||
            cfg[j].stream < 1)
            return hdp_fail(err, HDP_EINPUT, "DP-GD configuration %ld: T = %ld, eta = %g, C_clip = "
                            "%g, s = %g, stream %llu", j, cfg[j].T, cfg[j].eta, cfg[j].C_clip,
                            cfg[j].s, cfg[j].stream);
    }
    hdp_status st = HDP_OK;
    long *order = malloc(sizeof(long) * (size_t)ncfg);
    if (!order)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    /* the longest first, for the load balance (results do not depend on the order) */
    order_by_cost(cfg, ncfg, order);
    cfg_loop_ctx c = {pb, cfg};
    hdp_mc_loop loop = {.name = "rf", .runs = ncfg, .threads = hdp_mc_loop_threads(ncfg, threads),
                        .ctx = &c, .ws_alloc = rf_cfg_ws_alloc, .ws_free = free,
                        .run = rf_cfg_run, .order = order,
                        .progress = progress, .progress_user = progress_user};
    int old = blas_single();
    st = hdp_mc_loop_run(&loop, err);
    blas_restore(old);
    free(order);
    if (st != HDP_OK)
        return st;
    for (long j = 0; j < ncfg; j++)
        if (!isfinite(cfg[j].test_loss) || !isfinite(cfg[j].train_loss)) {
            st = hdp_fail(err, HDP_ENUMERIC, "DP-GD diverged in configuration %ld (eta = %g, T = "
                          "%ld): eta lambda_max = %g (stable below 2)", j, cfg[j].eta, cfg[j].T,
                          cfg[j].eta * pb->lambda[0]);
            break;
        }
    return st;
}
