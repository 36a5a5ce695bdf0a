/*
 * clip_fit.c — the clipping factors of a law evaluated by quadrature, fitted once
 * (hdp_clip_tabulate, docs/theory.md §2.3) and read by every consumer: the ODE of every method,
 * its gradient, the designer and the SDE; the fits shared between evaluators; the range they
 * are fitted on.
 */
#include "core/check.h"
#include "core/clock.h"
#include "core/clip_internal.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/error.h"
#include "hdpsgd/schedule.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the fitted factors (hdp_clip_tabulate) ----
 * log mu and log V as functions of u = log(R + s0), s0 = tau^2/2, on [log s0, log(R_max +
 * s0)]: piecewise Chebyshev series (GSL) of FIT_ORDER, a piece bisected until the last three
 * coefficients of both series are below FIT_TAIL (an absolute error in the logarithm is a
 * relative one in the factor). The derivatives are those of the series (gsl_cheb_calc_deriv):
 * dmu/dR = mu (d log mu/du) / (R + s0), the exact derivative of the fitted function, so the
 * Jacobian and the reverse-mode gradient are those of the tabulated ODE. */
enum { FIT_MAX_PIECES = 256 };
#define FIT_TAIL 2e-12
#define FIT_TAIL_LAST 1e-9 /* a piece as narrow as FIT_MIN_WIDTH: kept up to this tail */
#define FIT_MIN_WIDTH 1e-3

typedef struct {
    hdp_clip *clip;
    size_t n;
    double u[FIT_ORDER + 1], lmu[FIT_ORDER + 1], lV[FIT_ORDER + 1];
} fit_memo;

static void memo_logs(fit_memo *mm, double u, double *lmu, double *lV)
{
    for (size_t i = 0; i < mm->n; i++)
        if (mm->u[i] == u) {
            *lmu = mm->lmu[i];
            *lV = mm->lV[i];
            return;
        }
    hdp_clip_values cv;
    double R = exp(u) - mm->clip->s0;
    hdp_clip_law_factors(mm->clip, R > 0 ? R : 0.0, 0, &cv);
    mm->clip->info.evaluations++;
    *lmu = log(cv.mu);
    *lV = log(cv.V);
    if (mm->n < FIT_ORDER + 1) {
        mm->u[mm->n] = u;
        mm->lmu[mm->n] = *lmu;
        mm->lV[mm->n] = *lV;
        mm->n++;
    }
}

static double node_lmu(double u, void *p)
{
    double a, b;
    memo_logs(p, u, &a, &b);
    return a;
}

static double node_lV(double u, void *p)
{
    double a, b;
    memo_logs(p, u, &a, &b);
    return b;
}

static void piece_free(fit_piece *pc)
{
    gsl_cheb_series *all[4] = {pc->lmu, pc->lV, pc->dlmu, pc->dlV};
    for (int i = 0; i < 4; i++)
        if (all[i])
            gsl_cheb_free(all[i]);
    memset(pc, 0, sizeof *pc);
}

/* ---- the fits shared between evaluators ----
 * A fit is a function of (law, tau^2, df, c, R_max) alone, so the last FIT_CACHE fits are
 * kept (under a mutex) and an evaluator of the same key reads the same pieces: a design or a
 * sweep solving many ODEs of one model fits once. R_max is first rounded up to a power of 10
 * (the designer's candidate schedules move the divergence threshold a little). Every fit of a
 * key is the same computation, so which evaluator fitted first does not change a bit. */
enum { FIT_CACHE = 8 };

typedef struct fit_table {
    int refs;
    hdp_clip *key; /* the law and c (hdp_clip_same_law), a copy without fit */
    double R_max, s0;
    fit_piece *pieces;
    size_t npieces;
    hdp_clip_table_info info;
} fit_table;

static pthread_mutex_t fit_lock = PTHREAD_MUTEX_INITIALIZER;
static fit_table *fit_cache[FIT_CACHE];
static int fit_next;

static void pieces_free(fit_piece *pieces, size_t n)
{
    for (size_t i = 0; i < n; i++)
        piece_free(&pieces[i]);
    free(pieces);
}

/* drop one reference (the lock held) */
static void table_release(fit_table *t)
{
    if (t && --t->refs == 0) {
        pieces_free(t->pieces, t->npieces);
        hdp_clip_free(t->key);
        free(t);
    }
}

void hdp_clip_fit_free(hdp_clip *clip)
{
    if (clip->shared) {
        pthread_mutex_lock(&fit_lock);
        table_release(clip->shared);
        pthread_mutex_unlock(&fit_lock);
        clip->shared = NULL;
    } else {
        pieces_free(clip->pieces, clip->npieces);
    }
    clip->pieces = NULL;
    clip->npieces = clip->cap = 0;
}

/* the cached fit of clip's key on [0, R_max] read by clip: 1, or 0 when there is none */
static int table_lookup(hdp_clip *clip, double R_max)
{
    int found = 0;
    pthread_mutex_lock(&fit_lock);
    for (int i = 0; i < FIT_CACHE && !found; i++) {
        fit_table *t = fit_cache[i];
        if (t && t->R_max == R_max && hdp_clip_same_law(t->key, clip)) {
            t->refs++;
            clip->shared = t;
            clip->pieces = t->pieces;
            clip->npieces = t->npieces;
            clip->s0 = t->s0;
            clip->R_max = t->R_max;
            clip->info = t->info;
            found = 1;
        }
    }
    pthread_mutex_unlock(&fit_lock);
    return found;
}

/* clip's new fit into the cache (clip keeps reading it); out of memory: clip keeps its own */
static void table_publish(hdp_clip *clip)
{
    fit_table *t = malloc(sizeof *t);
    hdp_clip *key = t ? hdp_clip_clone_law(clip) : NULL;
    if (!key) {
        free(t);
        return;
    }
    *t = (fit_table){2, key, clip->R_max, clip->s0, clip->pieces, clip->npieces, clip->info};
    clip->shared = t;
    pthread_mutex_lock(&fit_lock);
    table_release(fit_cache[fit_next]);
    fit_cache[fit_next] = t;
    fit_next = (fit_next + 1) % FIT_CACHE;
    pthread_mutex_unlock(&fit_lock);
}

static double tail(const gsl_cheb_series *cs)
{
    const double *c = gsl_cheb_coeffs(cs);
    size_t n = gsl_cheb_order(cs);
    return fmax(fabs(c[n]), fmax(fabs(c[n - 1]), fabs(c[n - 2])));
}

/* Fits [ua, ub] into pc; returns -1 out of memory, else the larger tail of the two series
 * (NAN when a factor is not positive and finite). */
static double fit_one(hdp_clip *clip, double ua, double ub, fit_piece *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->ua = ua;
    pc->ub = ub;
    pc->lmu = gsl_cheb_alloc(FIT_ORDER);
    pc->lV = gsl_cheb_alloc(FIT_ORDER);
    pc->dlmu = gsl_cheb_alloc(FIT_ORDER);
    pc->dlV = gsl_cheb_alloc(FIT_ORDER);
    if (!pc->lmu || !pc->lV || !pc->dlmu || !pc->dlV) {
        piece_free(pc);
        return -1;
    }
    fit_memo mm = {.clip = clip};
    gsl_function Fm = {node_lmu, &mm}, FV = {node_lV, &mm};
    gsl_cheb_init(pc->lmu, &Fm, ua, ub);
    gsl_cheb_init(pc->lV, &FV, ua, ub);
    for (size_t i = 0; i < mm.n; i++)
        if (!isfinite(mm.lmu[i]) || !isfinite(mm.lV[i]))
            return NAN;
    gsl_cheb_calc_deriv(pc->dlmu, pc->lmu);
    gsl_cheb_calc_deriv(pc->dlV, pc->lV);
    const gsl_cheb_series *all[4] = {pc->lmu, pc->lV, pc->dlmu, pc->dlV};
    for (int i = 0; i < 4; i++)
        memcpy(pc->coef[i], gsl_cheb_coeffs(all[i]), sizeof pc->coef[i]);
    return fmax(tail(pc->lmu), tail(pc->lV));
}

/* Fits [0, R_max] in u = log(R + s0) into clip's pieces: 1 (and *worst, the largest tail
 * kept), 0 when a piece cannot be refined (clip left without fit), -1 out of memory. */
static int fit_range(hdp_clip *clip, double s0, double R_max, double *worst)
{
    clip->s0 = s0;
    clip->R_max = R_max;
    double stack[2 * 64][2]; /* intervals still to fit, the leftmost on top */
    int top = 0;
    stack[top][0] = log(s0);
    stack[top++][1] = log(R_max + s0);
    *worst = 0;
    while (top > 0) {
        double ua = stack[top - 1][0], ub = stack[top - 1][1];
        top--;
        if (clip->npieces == clip->cap) {
            size_t cap = clip->cap ? 2 * clip->cap : 16;
            fit_piece *pn = realloc(clip->pieces, cap * sizeof *pn);
            if (!pn)
                return -1;
            clip->pieces = pn;
            clip->cap = cap;
        }
        fit_piece *pc = &clip->pieces[clip->npieces];
        double t = fit_one(clip, ua, ub, pc);
        if (t < 0)
            return -1;
        int last = ub - ua < FIT_MIN_WIDTH || top + 2 > 2 * 64 ||
                   clip->npieces + (size_t)top + 2 > FIT_MAX_PIECES;
        if (!(t <= FIT_TAIL) && !last) {
            piece_free(pc);
            double mid = 0.5 * (ua + ub);
            stack[top][0] = mid; /* right half below the left one */
            stack[top++][1] = ub;
            stack[top][0] = ua;
            stack[top++][1] = mid;
            continue;
        }
        if (!(t <= FIT_TAIL_LAST) && hdp_clip_law_partial(clip)) {
            piece_free(pc); /* this piece only: direct evaluation */
            pc->ua = ua;
            pc->ub = ub;
            pc->direct = 1;
            clip->info.direct++;
            clip->npieces++;
            continue;
        }
        if (!(t <= FIT_TAIL_LAST)) { /* cannot be refined further */
            piece_free(pc);
            return 0;
        }
        *worst = fmax(*worst, t);
        clip->npieces++;
    }
    return clip->info.direct < clip->npieces; /* all direct: nothing fitted */
}

hdp_status hdp_clip_tabulate(hdp_clip *clip, double R_max, hdp_error *err)
{
    HDP_REQUIRE(err, clip);
    if (clip->ngroups)
        return hdp_clip_rows_tabulate(clip, R_max, err);
    hdp_clip_fit_free(clip);
    memset(&clip->info, 0, sizeof clip->info);
    if (!hdp_clip_law_fitted(clip) || clip->asymptotic || !(clip->tau2 > 0) ||
        !(clip->c > 0) || isinf(clip->c) || !(R_max > 0) || !isfinite(R_max))
        return HDP_OK; /* closed forms, or nothing to fit */
    double t0 = hdp_seconds_now();
    R_max = pow(10.0, ceil(log10(R_max))); /* the cache's key (above) */
    if (!isfinite(R_max))
        return HDP_OK;
    if (table_lookup(clip, R_max)) {
        clip->info.seconds = hdp_seconds_now() - t0;
        clip->info.cached = 1;
        return HDP_OK;
    }
    hdp_gsl_quiet();
    /* u = log(R + tau^2/2); when that fails and c is far below tau (the factors then change
     * on the scale c^2 near R = 0, a sliver of u), again with log(R + c^2/4) */
    double worst = 0, s0[2] = {0.5 * clip->tau2, 0.25 * clip->c * clip->c};
    int ok = 0;
    for (int k = 0; k < 2 && ok == 0 && (k == 0 || s0[1] < s0[0]); k++) {
        ok = fit_range(clip, s0[k], R_max, &worst);
        if (ok != 1) {
            long evaluations = clip->info.evaluations;
            hdp_clip_fit_free(clip);
            memset(&clip->info, 0, sizeof clip->info);
            clip->info.evaluations = evaluations;
        }
    }
    if (ok < 0)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping-factor table");
    clip->info.seconds = hdp_seconds_now() - t0;
    if (ok == 0) { /* direct evaluation throughout */
        clip->info.failed = 1;
        return HDP_OK;
    }
    clip->info.pieces = clip->npieces;
    clip->info.order = FIT_ORDER;
    clip->info.tail = worst;
    clip->info.R_max = R_max;
    table_publish(clip);
    return HDP_OK;
}

void hdp_clip_table_get(const hdp_clip *clip, hdp_clip_table_info *info)
{
    if (clip && info)
        *info = clip->info;
}

/* the first k of a piece's series at y in [-1, 1], in one Clenshaw loop (gsl_cheb_eval's
 * recurrence: c_0/2 + sum_j c_j T_j(y)) */
static inline void clenshaw(const double (*coef)[FIT_ORDER + 1], int k, double y, double *f)
{
    double d[4] = {0, 0, 0, 0}, dd[4] = {0, 0, 0, 0}, y2 = 2.0 * y;
    for (int j = FIT_ORDER; j >= 1; j--)
        for (int i = 0; i < k; i++) {
            double t = d[i];
            d[i] = y2 * d[i] - dd[i] + coef[i][j];
            dd[i] = t;
        }
    for (int i = 0; i < k; i++)
        f[i] = y * d[i] - dd[i] + 0.5 * coef[i][0];
}

/* The fitted factors at R in [0, R_max] with their derivatives: 1, or 0 outside the table. */
int hdp_clip_table_at(const hdp_clip *clip, double R, int derivs, hdp_clip_values *out)
{
    if (!clip->npieces || !(R <= clip->R_max))
        return 0;
    double x = R + clip->s0, u = log(x);
    size_t lo = 0, hi = clip->npieces - 1; /* the piece holding u */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u <= clip->pieces[mid].ub)
            hi = mid;
        else
            lo = mid + 1;
    }
    const fit_piece *pc = &clip->pieces[lo];
    if (pc->direct)
        return 0;
    if (u < pc->ua)
        u = pc->ua; /* rounding of log(s0) */
    if (u > pc->ub)
        u = pc->ub;
    double y = (2.0 * u - pc->ua - pc->ub) / (pc->ub - pc->ua), f[4];
    clenshaw(pc->coef, derivs ? 4 : 2, y, f);
    out->mu = exp(f[0]);
    out->V = exp(f[1]);
    out->nu = out->V / x;
    out->dmu = derivs ? out->mu * f[2] / x : 0.0;
    out->dV = derivs ? out->V * f[3] / x : 0.0;
    return 1;
}

int hdp_clip_eval_fitted(const hdp_clip *clip, double R, hdp_clip_values *out)
{
    if (!clip || !out || !(R >= 0))
        return 0;
    if (clip->ngroups) { /* the composite of clip_rows.c, from its groups' fits */
        hdp_clip_values s, v;
        if (!hdp_clip_eval_fitted(clip->vplain, R, &s))
            return 0;
        s.mu = s.dmu = 0;
        for (int g = 0; g < clip->ngroups; g++) {
            if (!hdp_clip_eval_fitted(clip->group[g], R, &v))
                return 0;
            s.mu += clip->ga[g] * v.mu;
            s.dmu += clip->ga[g] * v.dmu;
        }
        *out = s;
        return 1;
    }
    return hdp_clip_table_at(clip, R, 1, out);
}

double hdp_clip_range(const hdp_model *m)
{
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    return hdp_divergence_threshold(m, hdp_sched_eta_sup(&s));
}

hdp_clip *hdp_clip_alloc_law_fitted(const hdp_noise_law *law, double c, double R_max,
                                    hdp_error *err)
{
    if (!law) {
        hdp_fail(err, HDP_EINPUT, "hdp_clip_alloc_law_fitted: the argument 'law' is NULL");
        return NULL;
    }
    hdp_clip *clip = hdp_clip_alloc_law(law, c);
    if (!clip) {
        if (law->kind == HDP_NOISE_EMPIRICAL && (!law->sample || law->n < 1))
            hdp_fail(err, HDP_EINPUT, "the empirical label-noise law has no sample");
        else
            hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping factors");
        return NULL;
    }
    if (hdp_clip_tabulate(clip, R_max, err) != HDP_OK) {
        hdp_clip_free(clip);
        return NULL;
    }
    return clip;
}

hdp_clip *hdp_clip_alloc_fitted(const hdp_model *m, double c, hdp_error *err)
{
    if (!m) {
        hdp_fail(err, HDP_EINPUT, "hdp_clip_alloc_fitted: the argument 'm' is NULL");
        return NULL;
    }
    if (hdp_model_data(m)) /* a data set's rows, grouped by their norms (clip_rows.c) */
        return hdp_clip_alloc_rows(m, c, hdp_clip_range(m), err);
    hdp_noise_law law;
    hdp_noise_law_of_model(m, &law);
    return hdp_clip_alloc_law_fitted(&law, c, hdp_clip_range(m), err);
}
