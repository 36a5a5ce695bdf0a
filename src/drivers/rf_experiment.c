/*
 * rf_experiment.c — the rf experiments driver (hdpsgd/rfexp.h): the grids of Bombari-Mondelli's
 * Fig. 2, one point per p on the grid runner, the configurations (C, CT) of each run by
 * hdp_rf_dpgd_final and summarised over their runs. Prints nothing.
 */
#include "hdpsgd/rfexp.h"
#include "core/check.h"

#include <gsl/gsl_sort.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/grid.h"

static void logspace(double lo, double hi, int count, double *out)
{
    for (int i = 0; i < count; i++)
        out[i] = pow(10.0, count > 1 ? lo + (hi - lo) * i / (count - 1) : lo);
}

/* T = round(CT d / (eta p)), at least 1 */
static long steps_of(double CT, long d, double eta, long p)
{
    double T = nearbyint(CT * (double)d / (eta * (double)p));
    return T < 1 ? 1 : (long)T;
}

/* P1's p values: sorted, unique */
static void p1_grid(hdp_rfexp *xp, long n)
{
    double ps[HDP_RFEXP_MAX_PS];
    int np = 0;
    if (xp->full) {
        double v[24];
        logspace(1.5, log10(40000.0), 24, v);
        for (int i = 0; i < 24; i++) ps[np++] = nearbyint(v[i]);
        ps[np++] = (double)n;
        gsl_sort(ps, 1, (size_t)np);
        int u = 0;
        for (int i = 0; i < np; i++)
            if (u == 0 || ps[i] != ps[u - 1]) ps[u++] = ps[i];
        np = u;
        xp->nC = 3; xp->Cs[0] = 0.2; xp->Cs[1] = 0.5; xp->Cs[2] = 1.0;
        xp->nCT = 3; xp->CTs[0] = 2; xp->CTs[1] = 5; xp->CTs[2] = 10;
    } else {
        const double red[] = {31, 100, 316, 1000, 1500, 2000, 3000, 10000, 20000};
        for (int i = 0; i < 9; i++) ps[np++] = red[i];
        xp->nC = 2; xp->Cs[0] = 0.5; xp->Cs[1] = 1.0;
        xp->nCT = 2; xp->CTs[0] = 2; xp->CTs[1] = 5;
    }
    xp->np = np;
    for (int i = 0; i < np; i++)
        xp->ps[i] = (long)ps[i];
}

static void grids(hdp_rfexp *xp, const hdp_model *m)
{
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    if (xp->kind == HDP_RFEXP_P1) {
        p1_grid(xp, rk->n);
    } else if (xp->kind == HDP_RFEXP_P4) {
        xp->np = 1;
        xp->ps[0] = rk->p;
        xp->nC = xp->nCT = xp->full ? 20 : 8;
        logspace(-2, 1.5, xp->nC, xp->Cs);
        logspace(-1.5, xp->full ? 2.5 : 2.0, xp->nCT, xp->CTs);
    } else {
        const long ps[] = {4000, 8000, 16000, 32000};
        xp->np = xp->full ? 4 : 3;
        memcpy(xp->ps, ps, sizeof(long) * (size_t)xp->np);
        xp->nC = 1;
        xp->Cs[0] = dk->C;
        xp->nCT = xp->full ? 21 : 9;
        logspace(-0.5, 1.5, xp->nCT, xp->CTs);
    }
}

typedef struct {
    const hdp_model *m;
    hdp_rfexp *xp;
    int threads;
    unsigned long long next_stream;
    int zcdp_noted;
    hdp_rf_config *cfg;      /* [nC nCT runs] */
    hdp_progress_fn bar;
    void *bar_user;
    hdp_progress_fn progress;
    void *user;
    int stopped; /* the progress callback asked to stop */
} run_ctx;

/* Calibrate sigma for (eta, T, C_clip) at the model's epsilon, delta (docs/theory.md §6). */
static hdp_status calibrate(run_ctx *c, hdp_rfexp_point *pt, double eta, long T, double C_clip,
                            hdp_rf_dpgd *q, hdp_error *err)
{
    const hdp_model *m = c->m;
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    const long n = rk->n;
    *q = (hdp_rf_dpgd){.eta = eta, .T = T, .C_clip = C_clip, .epsilon = dk->epsilon,
                       .delta = dk->delta > 0 ? dk->delta : 1.0 / (double)n, .sigma = dk->sigma};
    hdp_status st = hdp_rf_dpgd_calibrate(q, n, err);
    if (st == HDP_OK && q->route == HDP_RF_SIGMA_ZCDP && !c->zcdp_noted) {
        pt->zcdp = 1;
        pt->zcdp_q = *q;
        c->zcdp_noted = 1;
    }
    return st;
}

const char *hdp_rfexp_select_name(hdp_rfexp_select s)
{
    return s == HDP_RFEXP_SELECT_TEST ? "test" : "validation";
}

/* mean and standard error of the test and validation losses over the runs of configuration j */
static void config_stats(long runs, const hdp_rf_config *cfg, long j, hdp_rfexp_config *out)
{
    const hdp_rf_config *c = cfg + j * runs;
    double s = 0, ss = 0, tr = 0, cl = 0, v = 0, vv = 0;
    for (long r = 0; r < runs; r++) {
        s += c[r].test_loss;
        v += c[r].val_loss;
        tr += c[r].train_loss;
        cl += c[r].clipped_mean;
    }
    double mu = s / (double)runs, mv = v / (double)runs;
    for (long r = 0; r < runs; r++) {
        ss += (c[r].test_loss - mu) * (c[r].test_loss - mu);
        vv += (c[r].val_loss - mv) * (c[r].val_loss - mv);
    }
    out->test = mu;
    out->test_se = runs > 1 ? sqrt(ss / (double)(runs - 1) / (double)runs) : 0.0;
    out->val = mv;
    out->val_se = runs > 1 ? sqrt(vv / (double)(runs - 1) / (double)runs) : 0.0;
    out->train = tr / (double)runs;
    out->clipped = cl / (double)runs;
}

/* calibrate every configuration of p and lay out its runs on consecutive streams */
static hdp_status configs(run_ctx *c, hdp_rfexp_point *pt, long *k, hdp_error *err)
{
    hdp_rfexp *xp = c->xp;
    const long d = hdp_rf_keys_of(c->m)->d, p = pt->p;
    hdp_status st = HDP_OK;
    for (int a = 0; a < xp->nC && st == HDP_OK; a++)
        for (int b = 0; b < xp->nCT && st == HDP_OK; b++) {
            hdp_rf_dpgd *q = &pt->cfg[a * xp->nCT + b].q;
            st = calibrate(c, pt, pt->eta, steps_of(xp->CTs[b], d, pt->eta, p),
                           xp->Cs[a] * sqrt((double)p), q, err);
            for (long r = 0; st == HDP_OK && r < xp->runs; r++) {
                hdp_rf_config one = {q->eta, q->T, q->C_clip, q->s, c->next_stream++, 0, 0, 0, 0, 0, 0};
                c->cfg[(*k)++] = one;
            }
        }
    return st;
}

static hdp_status point_job(void *user, long i, void *row, hdp_error *err)
{
    (void)row;
    run_ctx *c = user;
    if (c->stopped)
        return hdp_fail(err, HDP_ECANCELLED, "rf-experiment: stopped before point %ld", i + 1);
    hdp_rfexp *xp = c->xp;
    const hdp_model *m = c->m;
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    hdp_rfexp_point *pt = &xp->points[i];
    const long ncfg = (long)xp->nC * xp->nCT;
    pt->p = xp->ps[i];
    pt->eta = dk->eta > 0 ? dk->eta
              : (xp->kind == HDP_RFEXP_P2 || xp->kind == HDP_RFEXP_P3)
                  ? 1.0 / (double)xp->ps[xp->np - 1]
                  : 1.0 / (double)pt->p;
    pt->cfg = calloc((size_t)ncfg, sizeof *pt->cfg);
    if (!pt->cfg)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    double t0 = omp_get_wtime();
    hdp_rf_spec spec;
    hdp_rf_spec_from_model(m, &spec);
    spec.k.p = pt->p;
    const int ou = xp->kind == HDP_RFEXP_P2 || xp->kind == HDP_RFEXP_P3;
    hdp_rf_problem pb;
    hdp_status st = hdp_rf_problem_build(&spec, (ou ? HDP_RF_TEST_MODES : 0) | HDP_RF_VALIDATION,
                                         c->threads, &pb, err);
    pt->build_seconds = omp_get_wtime() - t0;
    if (st == HDP_OK) {
        pt->minnorm_test = pb.minnorm_test;
        pt->minnorm_train = pb.minnorm_train;
        pt->zero_test = pb.zero_test;
        pt->modes = pb.r;
        pt->lambda_max = pb.lambda[0];
    }
    long k = 0;
    if (st == HDP_OK)
        st = configs(c, pt, &k, err);
    if (st == HDP_OK)
        st = hdp_rf_dpgd_final(&pb, c->cfg, k, c->threads, c->bar, c->bar_user, err);
    for (long j = 0; j < ncfg && st == HDP_OK; j++) {
        hdp_rfexp_config *x = &pt->cfg[j];
        config_stats(xp->runs, c->cfg, j, x);
    }
    /* the selection (hdpsgd/rfexp.h): validation loss, or the test loss when asked */
    for (long j = 1; j < ncfg && st == HDP_OK; j++) {
        const hdp_rfexp_config *x = &pt->cfg[j];
        double sel = xp->select == HDP_RFEXP_SELECT_TEST ? x->test : x->val;
        double cur = xp->select == HDP_RFEXP_SELECT_TEST ? pt->cfg[pt->best].test
                                                          : pt->cfg[pt->best].val;
        if (sel < cur)
            pt->best = j;
        if (x->test < pt->cfg[pt->best_test].test)
            pt->best_test = j;
    }
    for (long j = 0; j < ncfg && st == HDP_OK; j++) {
        hdp_rfexp_config *x = &pt->cfg[j];
        if (ou) {
            hdp_rf_expected_loss(&pb, pt->eta, x->q.s, x->q.tau, 0, &x->ou_test, NULL);
            hdp_rf_expected_loss(&pb, pt->eta, 0.0, x->q.tau, 0, &x->gf_test, NULL);
        }
    }
    pt->dpgd_seconds = omp_get_wtime() - t0 - pt->build_seconds;
    hdp_rf_problem_free(&pb);
    if (st == HDP_OK && c->progress &&
        c->progress("rf-experiment point", i + 1, xp->np, (double)pt->p, c->user))
        c->stopped = 1;
    return st;
}

hdp_status hdp_rfexp_run(const hdp_model *m, hdp_rfexp_kind kind, int full, long runs,
                         int threads, hdp_progress_fn bar, void *bar_user,
                         hdp_progress_fn progress, void *user, hdp_rfexp *xp,
                         hdp_error *err)
{
    return hdp_rfexp_run_select(m, kind, full, runs, HDP_RFEXP_SELECT_VALIDATION, threads, bar,
                                bar_user, progress, user, xp, err);
}

hdp_status hdp_rfexp_run_select(const hdp_model *m, hdp_rfexp_kind kind, int full, long runs,
                                hdp_rfexp_select select, int threads, hdp_progress_fn bar,
                                void *bar_user, hdp_progress_fn progress, void *user,
                                hdp_rfexp *xp, hdp_error *err)
{
    HDP_ZERO(xp);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, xp);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (runs < 1 || kind < HDP_RFEXP_P1 || kind > HDP_RFEXP_P4 ||
        (select != HDP_RFEXP_SELECT_VALIDATION && select != HDP_RFEXP_SELECT_TEST))
        return hdp_fail(err, HDP_EINPUT, "hdp_rfexp_run: experiment %d with %ld runs, selection "
                        "%d: expected P1 to P4, runs >= 1 and a selection", (int)kind, runs,
                        (int)select);
    xp->kind = kind;
    xp->select = select;
    {
        hdp_rf_spec spec;
        hdp_rf_spec_from_model(m, &spec);
        xp->val_size = spec.v;
    }
    xp->full = full;
    xp->runs = runs;
    grids(xp, m);
    xp->points = calloc((size_t)xp->np, sizeof *xp->points);
    run_ctx c = {m, xp, threads, 1, 0, NULL, bar, bar_user, progress, user, 0};
    c.cfg = malloc(sizeof *c.cfg * (size_t)((long)xp->nC * xp->nCT * runs));
    if (!xp->points || !c.cfg) {
        free(c.cfg);
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    }
    hdp_grid_spec g = {.count = xp->np, .job = point_job, .user = &c};
    hdp_status st = hdp_grid_each(&g, err);
    free(c.cfg);
    return st;
}

void hdp_rfexp_free(hdp_rfexp *xp)
{
    if (!xp)
        return;
    for (int i = 0; xp->points && i < xp->np; i++)
        free(xp->points[i].cfg);
    free(xp->points);
    xp->points = NULL;
}
