/*
 * net_experiment.c — the privacy-for-free paper's Fig. 1 on a two-layer ReLU network
 * (hdpsgd/netexp.h; docs/theory.md §7.4): at every point of the panel, every variant
 * (DP-GD on both layers, DP-GD on the second layer only, plain GD) is trained over its
 * selection grid and the configuration of best validation accuracy is kept.
 */
#include "hdpsgd/netexp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const variant_names[] = {"dp", "rf", "gd"};
const char *hdp_netexp_variant_name(int v) { return variant_names[v]; }

void hdp_netexp_grid_of(int variant, int full, hdp_netexp_grid *g)
{
    static const hdp_netexp_grid grids[2][HDP_NETEXP_VARIANTS] = {
        {/* reduced */
         {1, 2, 2, {0.1}, {1, 3}, {30, 100}},
         {2, 2, 2, {2, 6}, {0.3, 1}, {100, 300}},
         {1, 1, 1, {0.1}, {INFINITY}, {100}}},
        {/* full */
         {3, 5, 3, {0.05, 0.1, 0.2}, {0.5, 1, 2, 4, 8}, {30, 100, 300}},
         {4, 4, 3, {1, 2, 4, 8}, {0.1, 0.3, 1, 3}, {100, 300, 1000}},
         {3, 1, 1, {0.05, 0.1, 0.2}, {INFINITY}, {300}}},
    };
    *g = grids[full ? 1 : 0][variant];
}

long hdp_netexp_default_grid(hdp_netexp_kind kind, int full, long *grid)
{
    static const long widths[2][8] = {{32, 64, 128, 256, 512, 1024}, {16, 32, 64, 128, 256, 500, 1000, 2000}};
    static const long samples[2][8] = {{500, 1000, 2000, 5000, 10000},
                                       {1000, 2000, 5000, 10000, 20000, 50000}};
    static const long len[2][2] = {{6, 5}, {8, 6}};
    const long *src = kind == HDP_NETEXP_WIDTH ? widths[full ? 1 : 0] : samples[full ? 1 : 0];
    long k = len[full ? 1 : 0][kind == HDP_NETEXP_WIDTH ? 0 : 1];
    memcpy(grid, src, sizeof(long) * (size_t)k);
    return k;
}

long hdp_netexp_default_fixed(hdp_netexp_kind kind, int full)
{
    if (kind == HDP_NETEXP_WIDTH)
        return full ? 50000 : 5000;
    return full ? 1000 : 256;
}

void hdp_netexp_free(hdp_netexp *x)
{
    if (!x)
        return;
    free(x->grid), free(x->width), free(x->n);
    for (int v = 0; v < HDP_NETEXP_VARIANTS; v++)
        free(x->cell[v]);
    memset(x, 0, sizeof *x);
}

/* The configurations of one variant at one point. */
static void configs(const hdp_model *m, int variant, int full, long width, long n,
                    hdp_net_config *cf, long *count)
{
    hdp_netexp_grid g;
    hdp_netexp_grid_of(variant, full, &g);
    hdp_net_config base;
    hdp_net_config_from_model(m, n, &base);
    base.width = width;
    base.train = variant == HDP_NETEXP_RF ? HDP_NET_TRAIN_SECOND : HDP_NET_TRAIN_BOTH;
    long k = 0;
    for (int a = 0; a < g.nlr; a++)
        for (int b = 0; b < g.nclip; b++)
            for (int c = 0; c < g.nsteps; c++) {
                hdp_net_config q = base;
                q.lr = variant == HDP_NETEXP_RF ? g.lr[a] / (double)width : g.lr[a];
                q.clip = variant == HDP_NETEXP_RF ? g.clip[b] * sqrt((double)width) : g.clip[b];
                q.steps = g.steps[c];
                if (variant == HDP_NETEXP_GD) {
                    q.epsilon = INFINITY;
                    q.records = full ? 30 : 10; /* early stopping on the recorded steps */
                } else
                    q.records = 1;
                cf[k++] = q;
            }
    *count = k;
}

/* Keep the recorded point j of r in cell when its validation accuracy is the best so far
 * (ties: the earlier configuration). */
static void consider(hdp_netexp_cell *cell, const hdp_net_config *q, const hdp_net_result *r, long j)
{
    if (!(r->val_accuracy[j] > cell->val_accuracy) && !isnan(cell->val_accuracy))
        return;
    cell->val_accuracy = r->val_accuracy[j];
    cell->val_loss = r->val_loss[j];
    cell->test_accuracy = r->test_accuracy[j];
    cell->test_loss = r->test_loss[j];
    cell->train_accuracy = r->train_accuracy[j];
    cell->train_loss = r->train_loss[j];
    cell->lr = q->lr;
    cell->clip = isinf(q->epsilon) ? INFINITY : q->clip;
    cell->steps = (long)r->step[j];
    cell->sigma = r->sigma;
    cell->clipped_fraction = r->clipped_fraction[j];
}

/* The cost of a run in units of 1e6 multiply-adds per input coordinate: n width T for both
 * layers, n width T K/d for the second layer alone (plus its features, computed once). */
static double run_cost(const hdp_net_config *c, long n, long d, long K)
{
    double nw = (double)n * (double)c->width;
    if (c->train == HDP_NET_TRAIN_SECOND)
        return nw * (1.0 + (double)c->steps * (double)K / (double)d) / 1e6;
    return nw * (double)c->steps / 1e6;
}

static double cost_of(const hdp_model *m, int full, long width, long n, long d, long K)
{
    double c = 0;
    for (int v = 0; v < HDP_NETEXP_VARIANTS; v++) {
        hdp_net_config cf[8 * 8 * 8];
        long k;
        configs(m, v, full, width, n, cf, &k);
        for (long i = 0; i < k; i++)
            c += run_cost(&cf[i], n, d, K);
    }
    return c;
}

typedef struct {
    hdp_progress_fn fn;
    void *user;
    double done, total;
} meter;

static hdp_status run_cell(const hdp_model *m, const hdp_net_data *dt, int variant, int full,
                           long width, long n, int threads, meter *mt, hdp_netexp *x,
                           hdp_netexp_cell *cell, hdp_error *err)
{
    hdp_net_config cf[8 * 8 * 8];
    long k;
    configs(m, variant, full, width, n, cf, &k);
    hdp_net_data view;
    hdp_net_data_head(dt, n, &view);
    memset(cell, 0, sizeof *cell);
    cell->val_accuracy = NAN;
    for (long i = 0; i < k; i++) {
        hdp_net_result r;
        hdp_error e2;
        hdp_error_clear(&e2);
        hdp_status st = hdp_net_train(&view, &cf[i], threads, NULL, NULL, &r, &e2);
        x->runs++;
        mt->done += run_cost(&cf[i], n, dt->d, dt->K);
        if (st == HDP_ENUMERIC) {
            x->diverged++;
            continue;
        }
        if (st != HDP_OK) {
            *err = e2;
            return st;
        }
        x->threads = r.threads;
        for (long j = variant == HDP_NETEXP_GD ? 1 : r.points - 1; j < r.points; j++)
            consider(cell, &cf[i], &r, j);
        hdp_net_result_free(&r);
        if (mt->fn && mt->fn("net", (long)mt->done, (long)mt->total, NAN, mt->user))
            return hdp_fail(err, HDP_ECANCELLED, "net: stopped after %ld runs", x->runs);
    }
    cell->configs = k;
    if (isnan(cell->val_accuracy))
        return hdp_fail(err, HDP_ENUMERIC,
                        "net: every configuration of the %s variant diverged at width %ld, n = %ld",
                        variant_names[variant], width, n);
    return HDP_OK;
}



hdp_status hdp_netexp_run(const hdp_model *m, const hdp_net_data *dt, hdp_netexp_kind kind,
                          int full, const long *grid, long npoints, long fixed, int threads,
                          hdp_progress_fn progress, void *user, hdp_netexp *out, hdp_error *err)
{
    memset(out, 0, sizeof *out);
    if (npoints < 1 || npoints > 64 || fixed < 1)
        return hdp_fail(err, HDP_EINPUT, "net: the panel needs 1 to 64 points");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    out->kind = kind, out->full = full, out->points = npoints;
    out->grid = calloc((size_t)npoints, sizeof(double));
    out->width = calloc((size_t)npoints, sizeof(double));
    out->n = calloc((size_t)npoints, sizeof(double));
    for (int v = 0; v < HDP_NETEXP_VARIANTS; v++)
        out->cell[v] = calloc((size_t)npoints, sizeof(hdp_netexp_cell));
    if (!out->grid || !out->width || !out->n || !out->cell[0] || !out->cell[1] || !out->cell[2]) {
        hdp_netexp_free(out);
        return hdp_fail(err, HDP_ENOMEM, "net: out of memory");
    }
    meter mt = {progress, user, 0, 0};
    for (long i = 0; i < npoints; i++) {
        long w = kind == HDP_NETEXP_WIDTH ? grid[i] : fixed;
        long n = kind == HDP_NETEXP_WIDTH ? fixed : grid[i];
        if (n > dt->train.n || n < 10 || w < 1) {
            hdp_netexp_free(out);
            return hdp_fail(err, HDP_EINPUT,
                            "net: n = %ld samples at width %ld: n must be in [10, %ld] (the "
                            "training rows) and the width at least 1", n, w, dt->train.n);
        }
        out->grid[i] = (double)grid[i], out->width[i] = (double)w, out->n[i] = (double)n;
        mt.total += cost_of(m, full, w, n, dt->d, dt->K);
    }
    hdp_net_config base;
    hdp_net_config_from_model(m, (long)out->n[npoints - 1], &base);
    out->epsilon = base.epsilon, out->delta = base.delta;
    hdp_status st = HDP_OK;
    for (long i = 0; i < npoints && st == HDP_OK; i++)
        for (int v = 0; v < HDP_NETEXP_VARIANTS && st == HDP_OK; v++)
            st = run_cell(m, dt, v, full, (long)out->width[i], (long)out->n[i], threads, &mt, out,
                          &out->cell[v][i], err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st != HDP_OK)
        hdp_netexp_free(out);
    return st;
}
