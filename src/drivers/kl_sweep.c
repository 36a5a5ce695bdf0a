/*
 * kl_sweep.c — the kl experiments driver (hdpsgd/klsweep.h): the runs against epochs,
 * depth and width and the checks at initialisation, each a grid of (x, scheme) points on
 * the grid runner. Prints nothing.
 */
#include "hdpsgd/klsweep.h"
#include "core/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/grid.h"

void hdp_kl_spec_at(const hdp_model *m, hdp_kl_init_kind k, long L, long width, hdp_kl_spec *s)
{
    if (!m || !s)
        return;
    hdp_kl_spec_from_model(m, s);
    s->arch.init = k;
    s->arch.L = (int)L;
    s->arch.m = width;
}

/* The linearised spec of a point (kl.runs paths) and its real-network twin (kl.relu_runs). */
static void split_networks(const hdp_model *m, hdp_kl_spec *lin, hdp_kl_spec *relu)
{
    lin->network = HDP_KL_LINEARISED;
    lin->runs = hdp_kl_keys_of(m)->runs;
    *relu = *lin;
    relu->network = HDP_KL_RELU;
    relu->runs = hdp_kl_keys_of(m)->relu_runs;
}

/* ---- against epochs ---- */

typedef struct {
    const hdp_model *m;
    hdp_kl_epochs *ep;
    int threads;
} epochs_ctx;

static hdp_status epochs_job(void *user, long k, void *row, hdp_error *err)
{
    (void)row;
    epochs_ctx *c = user;
    hdp_kl_epochs *ep = c->ep;
    if (!ep->want[k])
        return HDP_OK;
    hdp_kl_spec_at(c->m, (hdp_kl_init_kind)k, hdp_kl_keys_of(c->m)->depth,
                   hdp_kl_keys_of(c->m)->width, &ep->spec[k]);
    ep->B[k] = hdp_kl_B(&ep->spec[k].arch);
    split_networks(c->m, &ep->spec[k], &ep->spec_relu[k]);
    hdp_status st = hdp_kl_run(&ep->spec[k], c->threads, &ep->res[k], err);
    if (st != HDP_OK || !ep->relu)
        return st;
    return hdp_kl_run(&ep->spec_relu[k], c->threads, &ep->res_relu[k], err);
}

hdp_status hdp_kl_epochs_run(const hdp_model *m, const int want[4], int threads,
                             hdp_kl_epochs *ep, hdp_error *err)
{
    HDP_ZERO(ep);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, ep);
    memcpy(ep->want, want, sizeof ep->want);
    ep->relu = hdp_kl_keys_of(m)->network == HDP_KL_RELU;
    epochs_ctx c = {m, ep, threads};
    hdp_grid_spec g = {.count = 4, .job = epochs_job, .user = &c};
    return hdp_grid_each(&g, err);
}

void hdp_kl_epochs_free(hdp_kl_epochs *ep)
{
    if (!ep)
        return;
    for (int k = 0; k < 4; k++) {
        hdp_kl_run_result_free(&ep->res[k]);
        hdp_kl_run_result_free(&ep->res_relu[k]);
    }
}

/* ---- against depth or width ---- */

void hdp_klsweep_free(hdp_klsweep *sw)
{
    if (!sw)
        return;
    free(sw->points);
    sw->points = NULL;
}

typedef struct {
    hdp_klsweep *sw;
    const hdp_model *m;
    int threads;
    long done, total;
    hdp_progress_fn progress;
    void *user;
    hdp_kl_spec spec; /* of the point that ran last */
} sweep_ctx;

/* the linearised spec of point (i, k); relu (when not NULL) its real-network twin */
static void spec_of(const hdp_klsweep *sw, const hdp_model *m, long i, int k, hdp_kl_spec *s,
                    hdp_kl_spec *relu)
{
    hdp_kl_spec_at(m, (hdp_kl_init_kind)k, sw->by_depth ? sw->xs[i] : hdp_kl_keys_of(m)->depth,
                   sw->by_depth ? hdp_kl_keys_of(m)->width : sw->xs[i], s);
    hdp_kl_spec r;
    split_networks(m, s, relu ? relu : &r);
}

static hdp_status sweep_check(void *user, long i, hdp_error *err)
{
    sweep_ctx *c = user;
    hdp_kl_spec s;
    spec_of(c->sw, c->m, i, HDP_KL_HE, &s, NULL);
    return hdp_kl_spec_check(&s, err);
}

static hdp_status sweep_job(void *user, long idx, void *row, hdp_error *err)
{
    (void)row;
    sweep_ctx *c = user;
    hdp_klsweep *sw = c->sw;
    const long i = idx / 4;
    const int k = (int)(idx % 4);
    if (!sw->want[k])
        return HDP_OK;
    hdp_kl_spec relu;
    spec_of(sw, c->m, i, k, &c->spec, &relu);
    hdp_kl_run_result r;
    hdp_status st = hdp_kl_run(&c->spec, c->threads, &r, err);
    if (st != HDP_OK) {
        hdp_kl_run_result_free(&r);
        return st;
    }
    hdp_klsweep_point *p = &sw->points[idx];
    p->B = hdp_kl_B(&c->spec.arch);
    p->grad2 = r.grad2;
    const hdp_kl_keys *kp = hdp_kl_keys_of(c->m);
    p->bound = hdp_kl_bound(p->B, sw->T, kp->n, kp->sigma, HDP_KL_C);
    p->bounde = hdp_kl_bound(p->B, sw->Te, kp->n, kp->sigma, HDP_KL_C);
    p->seconds = r.seconds;
    p->unstable = r.unstable;
    p->eta_lambda_max = r.eta_lambda_max;
    p->kl = r.kl_mc[sw->E], p->se = r.kl_mc_se[sw->E];
    p->kle = r.kl_mc[sw->Ee], p->see = r.kl_mc_se[sw->Ee];
    p->exact = r.kl_exact[sw->E], p->exacte = r.kl_exact[sw->Ee];
    hdp_kl_run_result_free(&r);
    p->rkl = p->rse = p->rkle = p->rsee = p->rseconds = NAN;
    if (!sw->relu || p->unstable)
        return HDP_OK;
    st = hdp_kl_run(&relu, c->threads, &r, err);
    if (st == HDP_OK) {
        p->rkl = r.kl_mc[sw->E], p->rse = r.kl_mc_se[sw->E];
        p->rkle = r.kl_mc[sw->Ee], p->rsee = r.kl_mc_se[sw->Ee];
        p->rseconds = r.seconds;
    }
    hdp_kl_run_result_free(&r);
    return st;
}

/* the grid's report after point idx = done - 1: a wanted point's to the caller */
static int sweep_progress(const char *what, long done, long count, double value, void *user)
{
    (void)what, (void)count, (void)value;
    sweep_ctx *c = user;
    const long idx = done - 1;
    if (!c->sw->want[idx % 4])
        return 0;
    c->done++;
    return c->progress && c->progress("kl point", c->done, c->total, c->sw->points[idx].kl, c->user);
}

long hdp_klsweep_index(const int want[4], long nx, long done)
{
    int nw = 0, order[4];
    for (int k = 0; want && k < 4; k++)
        if (want[k])
            order[nw++] = k;
    if (nw == 0 || done < 1 || done > nx * nw)
        return -1;
    return (done - 1) / nw * 4 + order[(done - 1) % nw];
}

hdp_status hdp_klsweep_plan(const hdp_model *m, int by_depth, const long *xs, int nx,
                            const int want[4], hdp_klsweep *sw, hdp_error *err)
{
    HDP_ZERO(sw);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, xs);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, sw);
    if (nx < 1 || nx > HDP_KLSWEEP_MAX)
        return hdp_fail(err, HDP_EINPUT, "hdp_klsweep_plan: %d values: expected 1 to %d", nx,
                        HDP_KLSWEEP_MAX);
    sw->by_depth = by_depth;
    sw->nx = nx;
    memcpy(sw->xs, xs, sizeof(long) * (size_t)nx);
    memcpy(sw->want, want, sizeof sw->want);
    sw->E = hdp_kl_keys_of(m)->epochs;
    sw->Ee = (long)nearbyint(0.4 * (double)sw->E) > 0 ? (long)nearbyint(0.4 * (double)sw->E) : 1;
    sw->T = hdp_kl_keys_of(m)->eta * (double)sw->E;
    sw->Te = hdp_kl_keys_of(m)->eta * (double)sw->Ee;
    sw->relu = hdp_kl_keys_of(m)->network == HDP_KL_RELU;
    sw->points = calloc((size_t)nx * 4, sizeof *sw->points);
    if (!sw->points)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    sweep_ctx c = {.sw = sw, .m = m};
    for (long i = 0; i < nx; i++) {
        hdp_status st = sweep_check(&c, i, err);
        if (st != HDP_OK)
            return st;
    }
    return HDP_OK;
}

hdp_status hdp_klsweep_run(hdp_klsweep *sw, const hdp_model *m, int threads,
                           hdp_progress_fn progress, void *user, hdp_error *err)
{
    HDP_REQUIRE(err, sw);
    HDP_REQUIRE(err, sw->points);
    HDP_REQUIRE(err, m);
    sweep_ctx c = {.sw = sw, .m = m, .threads = threads, .progress = progress, .user = user};
    for (int k = 0; k < 4; k++)
        c.total += sw->want[k] ? sw->nx : 0;
    hdp_grid_spec g = {.count = (long)sw->nx * 4, .job = sweep_job,
                       .progress = sweep_progress, .user = &c};
    return hdp_grid_each(&g, err);
}

/* ---- at initialisation ---- */

typedef struct {
    const hdp_model *m;
    hdp_klinit *ki;
    int threads;
    hdp_progress_fn progress;
    void *user;
    long done, total;
} init_ctx;

static hdp_status init_job(void *user, long idx, void *row, hdp_error *err)
{
    (void)row;
    init_ctx *c = user;
    const hdp_model *m = c->m;
    hdp_klinit *ki = c->ki;
    const int i = (int)(idx / 4), k = (int)(idx % 4);
    if (!ki->want[k])
        return HDP_OK;
    hdp_kl_spec s;
    hdp_kl_spec_at(m, (hdp_kl_init_kind)k, ki->depths[i], hdp_kl_keys_of(m)->width, &s);
    hdp_kl_init_result *r = &ki->res[idx];
    /* a different stream per (depth, scheme): independent checks */
    hdp_status st = hdp_kl_init_mc(&s.arch, hdp_kl_keys_of(m)->init_runs,
                                   m->seed + 1000003ULL * (unsigned)(i * 4 + k), c->threads, r,
                                   err);
    if (st != HDP_OK)
        return st;
    int pass = fabs(r->z) <= m->z_tol;
    ki->fails += !pass;
    ki->seconds += r->seconds;
    c->done++;
    if (c->progress && c->progress("kl init point", c->done, c->total, r->z, c->user))
        return hdp_fail(err, HDP_ECANCELLED, "kl init: stopped after point %ld of %ld", c->done,
                        c->total);
    return HDP_OK;
}

hdp_status hdp_klinit_run(const hdp_model *m, const long *depths, int nd, const int want[4],
                          int threads, hdp_progress_fn progress, void *user, hdp_klinit *ki,
                          hdp_error *err)
{
    HDP_ZERO(ki);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, depths);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, ki);
    if (nd < 1 || nd > HDP_KLSWEEP_MAX)
        return hdp_fail(err, HDP_EINPUT, "hdp_klinit_run: %d depths: expected 1 to %d", nd,
                        HDP_KLSWEEP_MAX);
    ki->nd = nd;
    memcpy(ki->depths, depths, sizeof(long) * (size_t)nd);
    memcpy(ki->want, want, sizeof ki->want);
    ki->res = calloc((size_t)(4 * nd), sizeof *ki->res);
    if (!ki->res)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    init_ctx c = {m, ki, threads, progress, user, 0, 0};
    for (int k = 0; k < 4; k++)
        c.total += want[k] ? nd : 0;
    hdp_grid_spec g = {.count = 4L * nd, .job = init_job, .user = &c};
    return hdp_grid_each(&g, err);
}

void hdp_klinit_free(hdp_klinit *ki)
{
    if (!ki)
        return;
    free(ki->res);
    ki->res = NULL;
}
