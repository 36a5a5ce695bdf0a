/*
 * kl_init.c — the Monte Carlo of Lemma C.3 at initialisation (hdp_kl_init_mc, hdpsgd/kl.h):
 * the squared Jacobian norm per layer of networks drawn at random, each on its own stream of
 * the generic Monte Carlo loop (src/sim/mc.h), against the closed form of kl_bounds.c.
 * Determinism: the BLAS runs single-threaded and the loop's threads take whole networks,
 * reduced in run order afterwards.
 */
#include "families/kl_internal.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"
#include "sim/stats.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "families/blas_internal.h"

/* ---- Monte Carlo of Lemma C.3 ---- */

/* what the networks of hdp_kl_init_mc read, and where network r writes: norms[r L ..] */
typedef struct {
    const hdp_kl_arch *a;
    double *norms; /* [runs x L] squared Jacobian norms per layer */
} init_mc_ctx;

/* a thread's workspace: a network and an input */
typedef struct {
    hdp_kl_net net;
    double *x; /* [d] */
} init_mc_ws;

static void init_mc_ws_free(void *vw)
{
    if (vw)
        hdp_kl_net_free(&((init_mc_ws *)vw)->net);
    free(vw);
}

static void *init_mc_ws_alloc(const void *vc)
{
    const hdp_kl_arch *a = ((const init_mc_ctx *)vc)->a;
    const hdp_mc_array arrays[] = {HDP_MC_ARRAY(init_mc_ws, x, a->d)};
    init_mc_ws *w = HDP_MC_WS_ALLOC(init_mc_ws, arrays);
    if (w && hdp_kl_net_alloc(a, &w->net, NULL) != HDP_OK) {
        free(w);
        return NULL;
    }
    return w;
}

/* Network r: x uniform on the sphere, then the weights, from the run's stream. */
static hdp_status init_mc_one(const void *vc, long r, void *vw, hdp_xoshiro *g, void *slot,
                              hdp_error *err)
{
    (void)slot;
    const init_mc_ctx *c = vc;
    init_mc_ws *w = vw;
    hdp_kl_sphere(g, c->a->d, w->x);
    hdp_kl_net_draw(&w->net, g);
    if (hdp_kl_net_jacobian(&w->net, w->x, 1, NULL, NULL, c->norms + r * c->a->L, NULL) != HDP_OK)
        return hdp_fail(err, HDP_ENOMEM, "out of memory in the Jacobian");
    return HDP_OK;
}

/* value v of run r: [l = 0] the total over the layers, [l] layer l */
static double init_mc_value(const double *norms, int L, long r, int l)
{
    if (l > 0)
        return norms[r * L + (l - 1)];
    double v = 0;
    for (int k = 0; k < L; k++)
        v += norms[r * L + k];
    return v;
}

hdp_status hdp_kl_init_mc(const hdp_kl_arch *a, long runs, unsigned long long seed, int threads,
                          hdp_kl_init_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, a);
    HDP_REQUIRE(err, res);
    hdp_status st = hdp_kl_arch_check(a, err);
    if (st != HDP_OK)
        return st;
    if (runs < 2)
        return hdp_fail(err, HDP_EINPUT, "[kl] init_runs = %ld: need at least 2 networks", runs);
    const int L = a->L;
    const double t0 = omp_get_wtime();
    double *norms = hdp_dalloc((size_t)runs * (size_t)L);
    if (!norms)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld networks", runs);
    /* network r: the seed's stream jumped r + 1 times */
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, (uint64_t)seed, 1);
    init_mc_ctx c = {a, norms};
    hdp_mc_loop loop = {.name = "kl init", .runs = runs,
                        .threads = hdp_mc_loop_threads(runs, threads), .ctx = &c,
                        .ws_alloc = init_mc_ws_alloc, .ws_free = init_mc_ws_free,
                        .run = init_mc_one, .first = &first};
    const int old = blas_single();
    st = hdp_mc_loop_run(&loop, err);
    blas_restore(old);
    if (st == HDP_OK) {
        res->runs = runs;
        hdp_kl_grad_norm2(a, (double)a->d, res->formula);
        for (int l = 0; l <= L; l++) {
            /* [0] the total, [l] layer l; sums in run order */
            double s = 0, ss = 0;
            for (long r = 0; r < runs; r++)
                s += init_mc_value(norms, L, r, l);
            const double mean = s / (double)runs;
            for (long r = 0; r < runs; r++) {
                const double v = init_mc_value(norms, L, r, l);
                ss += (v - mean) * (v - mean);
            }
            res->mean[l] = mean;
            res->stderr_[l] = hdp_stderr_from_ss(ss, runs);
        }
        res->z = (res->mean[0] - res->formula[0]) / res->stderr_[0];
        res->seconds = omp_get_wtime() - t0;
    }
    free(norms);
    return st;
}
