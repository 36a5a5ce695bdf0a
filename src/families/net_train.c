/*
 * net_train.c — full-batch DP-GD on a two-layer ReLU network (the privacy-for-free paper's
 * Algorithm 1; docs/theory.md §6.3, §7.4; hdpsgd/net.h has the model and its conventions).
 *
 * One step, in fixed blocks (results independent of the thread count):
 *   1. sample blocks of NB rows: Z = X W^T, H = relu(Z) (train = second: H cached once),
 *      F = H A^T, residuals G (softmax - onehot, or F - onehot), Delta = (G A) .* 1{H > 0},
 *      norms ||g_i||^2 ||h_i||^2 + ||Delta_i||^2 ||x_i||^2 (the factorisation), clip factors
 *      c_i, rows of G and Delta scaled by c_i;
 *   2. unit blocks of UB hidden units: gW[u, :] = Delta[:, u]^T X and gA[:, u] = G^T H[:, u]
 *      (one sgemm each, the whole sum over samples inside it);
 *   3. theta -= eta/n g + noise_std xi, xi from one stream in a fixed order.
 * Sums over samples (losses, counts) are reduced over blocks in block order.
 */
#include "hdpsgd/net.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "families/blas_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define NB 256 /* samples per block */
#define UB 64  /* hidden units per block */

static void sgemm(int ta, int tb, long M, long N, long K, float alpha, const float *A, long lda,
                  const float *B, long ldb, float beta, float *C, long ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (blasint)M, (blasint)N, (blasint)K, alpha, A, (blasint)lda, B, (blasint)ldb, beta,
                C, (blasint)ldc);
}

/* The residual g (K) of one sample from its outputs f (K); returns its loss and sets *hit
 * when argmax f is the label (ties: the first maximum). */
static double residual(const float *f, long K, int y, hdp_net_loss_kind loss, double *g, int *hit)
{
    long best = 0;
    double mx = f[0];
    for (long k = 1; k < K; k++)
        if (f[k] > mx) {
            mx = f[k];
            best = k;
        }
    *hit = best == y;
    if (loss == HDP_NET_SQUARED) {
        double l = 0;
        for (long k = 0; k < K; k++) {
            g[k] = (double)f[k] - (k == y ? 1.0 : 0.0);
            l += g[k] * g[k];
        }
        return 0.5 * l;
    }
    double s = 0;
    for (long k = 0; k < K; k++)
        s += (g[k] = exp((double)f[k] - mx));
    for (long k = 0; k < K; k++)
        g[k] = g[k] / s - (k == y ? 1.0 : 0.0);
    /* cppcheck-suppress invalidFunctionArg ; s >= 1: the largest output's term is exp(0) */
    return log(s) + mx - (double)f[y];
}

/* What one sample block computes and returns. */
typedef struct {
    double loss;
    long hits, clipped;
    double max_norm;
} block_sum;

/* The work buffers of a run. */
typedef struct {
    long n, d, K, width;
    const float *x;
    const int *y;
    int train_first;
    hdp_net_loss_kind loss;
    double clip; /* inf: no clipping */
    float *H;    /* n x width (train = second: the cached features) */
    float *F;    /* n x K outputs, then the scaled residuals c_i g_i */
    float *D;    /* n x width: the scaled c_i Delta_i (train_first) */
    double *xn2, *hn2; /* ||x_i||^2 (train_first), ||h_i||^2 (cached with train = second) */
    double *norm;      /* n per-sample gradient norms (may be NULL) */
    block_sum *bs;
} work;

/* Forward pass of rows [i0, i0 + m) of x into H (unless cached) and F. */
static void forward_block(const float *W, const float *A, const float *x, long d, long width,
                          long K, long m, float *H, float *F, int cached)
{
    if (!cached) {
        sgemm(0, 1, m, width, d, 1.0f, x, d, W, d, 0.0f, H, width);
        for (long j = 0; j < m * width; j++)
            H[j] = H[j] > 0 ? H[j] : 0.0f;
    }
    sgemm(0, 1, m, K, width, 1.0f, H, width, A, width, 0.0f, F, K);
}

/* Step 1 on block b: residuals, norms, clip factors, scaled rows. */
static void grad_block(work *w, const float *W, const float *A, long b, int cached)
{
    const long i0 = b * NB, m = w->n - i0 < NB ? w->n - i0 : NB, K = w->K, P = w->width;
    float *H = w->H + i0 * P, *F = w->F + i0 * K;
    forward_block(W, A, w->x + i0 * w->d, w->d, P, K, m, H, F, cached);
    block_sum s = {0, 0, 0, 0};
    double g[1000];
    if (w->train_first) /* Delta = G A before the mask: the residuals first */
        for (long i = 0; i < m; i++) {
            int hit;
            s.loss += residual(F + i * K, K, w->y[i0 + i], w->loss, g, &hit);
            s.hits += hit;
            for (long k = 0; k < K; k++)
                F[i * K + k] = (float)g[k];
        }
    if (w->train_first)
        sgemm(0, 0, m, P, K, 1.0f, F, K, A, P, 0.0f, w->D + i0 * P, P);
    for (long i = 0; i < m; i++) {
        const float *h = H + i * P;
        float *fi = F + i * K;
        if (!w->train_first) {
            int hit;
            s.loss += residual(fi, K, w->y[i0 + i], w->loss, g, &hit);
            s.hits += hit;
            for (long k = 0; k < K; k++)
                fi[k] = (float)g[k];
        }
        double g2 = 0, h2 = 0, d2 = 0;
        for (long k = 0; k < K; k++)
            g2 += (double)fi[k] * fi[k];
        if (cached)
            h2 = w->hn2[i0 + i];
        else
            for (long j = 0; j < P; j++)
                h2 += (double)h[j] * h[j];
        float *di = w->train_first ? w->D + (i0 + i) * P : NULL;
        if (di)
            for (long j = 0; j < P; j++) {
                if (!(h[j] > 0))
                    di[j] = 0.0f;
                d2 += (double)di[j] * di[j];
            }
        double nrm = sqrt(g2 * h2 + (di ? d2 * w->xn2[i0 + i] : 0.0));
        if (w->norm)
            w->norm[i0 + i] = nrm;
        double c = nrm > w->clip ? w->clip / nrm : 1.0;
        if (c < 1) {
            s.clipped++;
            for (long k = 0; k < K; k++)
                fi[k] = (float)(c * fi[k]);
            if (di)
                for (long j = 0; j < P; j++)
                    di[j] = (float)(c * di[j]);
        }
        if (c * nrm > s.max_norm)
            s.max_norm = c * nrm;
    }
    w->bs[b] = s;
}

/* Steps 1 and 2: the clipped sums gW (train_first) and gA, block sums in w->bs. */
static void clipped_sums(work *w, const float *W, const float *A, int cached, int threads,
                         float *gW, float *gA)
{
    const long nb = (w->n + NB - 1) / NB, ub = (w->width + UB - 1) / UB;
    const long n = w->n, d = w->d, K = w->K, P = w->width;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (nb > 1)
    for (long b = 0; b < nb; b++)
        grad_block(w, W, A, b, cached);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (ub > 1)
    for (long u = 0; u < ub; u++) {
        long u0 = u * UB, mu = P - u0 < UB ? P - u0 : UB;
        if (w->train_first)
            sgemm(1, 0, mu, d, n, 1.0f, w->D + u0, P, w->x, d, 0.0f, gW + u0 * d, d);
        sgemm(1, 0, K, mu, n, 1.0f, w->F, K, w->H + u0, P, 0.0f, gA + u0, P);
    }
}

static hdp_status work_alloc(work *w, const hdp_net_split *s, long K, long width, int first,
                             hdp_net_loss_kind loss, double clip, hdp_error *err)
{
    memset(w, 0, sizeof *w);
    w->n = s->n, w->d = s->n ? s->d : 0, w->K = K, w->width = width;
    w->x = s->x, w->y = s->y, w->train_first = first, w->loss = loss, w->clip = clip;
    const long nb = (s->n + NB - 1) / NB;
    w->H = malloc(sizeof(float) * (size_t)(s->n * width + 1));
    w->F = malloc(sizeof(float) * (size_t)(s->n * K + 1));
    w->D = first ? malloc(sizeof(float) * (size_t)(s->n * width + 1)) : NULL;
    w->xn2 = calloc((size_t)s->n + 1, sizeof(double));
    w->hn2 = calloc((size_t)s->n + 1, sizeof(double));
    w->bs = calloc((size_t)nb + 1, sizeof(block_sum));
    if (!w->H || !w->F || (first && !w->D) || !w->xn2 || !w->hn2 || !w->bs)
        return hdp_fail(err, HDP_ENOMEM, "net: out of memory for %ld samples of width %ld",
                        s->n, width);
    for (long i = 0; i < s->n; i++) {
        double t = 0;
        for (long j = 0; j < s->d; j++)
            t += (double)s->x[i * s->d + j] * s->x[i * s->d + j];
        w->xn2[i] = t;
    }
    return HDP_OK;
}

static void work_free(work *w)
{
    free(w->H), free(w->F), free(w->D), free(w->xn2), free(w->hn2), free(w->bs);
    memset(w, 0, sizeof *w);
}

/* Features of a split for train = second: H = relu(X W^T) and ||h_i||^2, once. */
static void cache_features(work *w, const float *W, int threads)
{
    const long nb = (w->n + NB - 1) / NB, P = w->width;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (nb > 1)
    for (long b = 0; b < nb; b++) {
        long i0 = b * NB, m = w->n - i0 < NB ? w->n - i0 : NB;
        float *H = w->H + i0 * P;
        sgemm(0, 1, m, P, w->d, 1.0f, w->x + i0 * w->d, w->d, W, w->d, 0.0f, H, P);
        for (long j = 0; j < m * P; j++)
            H[j] = H[j] > 0 ? H[j] : 0.0f;
        for (long i = 0; i < m; i++) {
            double t = 0;
            for (long j = 0; j < P; j++)
                t += (double)H[i * P + j] * H[i * P + j];
            w->hn2[i0 + i] = t;
        }
    }
}

/* Mean loss and accuracy of a split (forward pass only). */
static void evaluate(work *w, const float *W, const float *A, int cached, int threads,
                     double *loss, double *acc)
{
    if (w->n == 0) {
        *loss = *acc = NAN;
        return;
    }
    const long nb = (w->n + NB - 1) / NB, K = w->K, P = w->width;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (nb > 1)
    for (long b = 0; b < nb; b++) {
        long i0 = b * NB, m = w->n - i0 < NB ? w->n - i0 : NB;
        forward_block(W, A, w->x + i0 * w->d, w->d, P, K, m, w->H + i0 * P, w->F + i0 * K,
                      cached);
        block_sum s = {0, 0, 0, 0};
        double g[1000];
        for (long i = 0; i < m; i++) {
            int hit;
            s.loss += residual(w->F + (i0 + i) * K, K, w->y[i0 + i], w->loss, g, &hit);
            s.hits += hit;
        }
        w->bs[b] = s;
    }
    double l = 0;
    long h = 0;
    for (long b = 0; b < nb; b++)
        l += w->bs[b].loss, h += w->bs[b].hits;
    *loss = l / (double)w->n;
    *acc = (double)h / (double)w->n;
}

/* ---- the exposed kernel ---- */

hdp_status hdp_net_clipped_grad(const float *W, const float *A, long width, long d, long K,
                                const float *x, const int *y, long n, hdp_net_loss_kind loss,
                                int train_first, double clip, int threads, float *gW, float *gA,
                                double *norm, hdp_error *err)
{
    if (!A || !x || !y || !gA || (train_first && (!W || !gW)) || (!train_first && !W) ||
        n < 1 || d < 1 || width < 1 || K < 2 || K > 1000 || !(clip > 0))
        return hdp_fail(err, HDP_EINPUT, "net: bad arguments to the clipped gradient");
    hdp_net_split s = {n, d, (float *)x, (int *)y};
    work w;
    hdp_status st = work_alloc(&w, &s, K, width, train_first, loss, clip, err);
    if (st == HDP_OK) {
        int old = blas_single();
        int th = threads_to_use(threads);
        w.norm = norm;
        if (!train_first)
            cache_features(&w, W, th);
        clipped_sums(&w, W, A, !train_first, th, gW, gA);
        blas_restore(old);
    }
    work_free(&w);
    return st;
}

hdp_status hdp_net_grad_norms(const float *W, const float *A, long width, long d, long K,
                              const float *x, const int *y, long n, hdp_net_loss_kind loss,
                              int train_first, double *norm, hdp_error *err)
{
    float *gW = train_first ? malloc(sizeof(float) * (size_t)(width * d)) : NULL;
    float *gA = malloc(sizeof(float) * (size_t)(K * width));
    hdp_status st = (train_first && !gW) || !gA
                        ? hdp_fail(err, HDP_ENOMEM, "net: out of memory")
                        : hdp_net_clipped_grad(W, A, width, d, K, x, y, n, loss, train_first,
                                               INFINITY, 1, gW, gA, norm, err);
    free(gW), free(gA);
    return st;
}

/* ---- privacy ---- */

hdp_status hdp_net_sigma(const hdp_net_config *c, double *sigma, int *zcdp_route, hdp_error *err)
{
    *sigma = 0, *zcdp_route = 0;
    if (isinf(c->epsilon))
        return HDP_OK;
    if (c->calibration == HDP_NET_CAL_SIMPLE && hdp_dpgd_simple_applies(c->epsilon, c->delta)) {
        *sigma = hdp_dpgd_sigma_simple(c->lr, c->steps, c->epsilon, c->delta);
        return HDP_OK;
    }
    *zcdp_route = 1;
    return hdp_dpgd_sigma_zcdp(c->lr, c->steps, c->epsilon, c->delta, sigma, NULL, err);
}

/* ---- a run ---- */

void hdp_net_result_free(hdp_net_result *r)
{
    if (!r)
        return;
    free(r->step), free(r->time), free(r->train_loss), free(r->train_accuracy);
    free(r->val_loss), free(r->val_accuracy), free(r->test_loss), free(r->test_accuracy);
    free(r->clipped_fraction);
    memset(r, 0, sizeof *r);
}

static hdp_status result_alloc(hdp_net_result *r, long points, hdp_error *err)
{
    memset(r, 0, sizeof *r);
    r->points = points;
    double **cols[] = {&r->step, &r->time, &r->train_loss, &r->train_accuracy, &r->val_loss,
                       &r->val_accuracy, &r->test_loss, &r->test_accuracy, &r->clipped_fraction};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        if (!(*cols[i] = calloc((size_t)points, sizeof(double))))
            return hdp_fail(err, HDP_ENOMEM, "net: out of memory for the curve");
    return HDP_OK;
}

/* The run's state: parameters, gradients, the three splits' buffers, the noise stream. */
typedef struct {
    float *W, *A, *gW, *gA;
    double *xi;
    work tr, va, te;
    hdp_normals rng;
} run_state;

static void state_free(run_state *s)
{
    free(s->W), free(s->A), free(s->gW), free(s->gA), free(s->xi);
    work_free(&s->tr), work_free(&s->va), work_free(&s->te);
}

/* He initialisation from the stream (W first, then A; A = 0 with train = second). */
static hdp_status state_init(run_state *s, const hdp_net_data *dt, const hdp_net_config *c,
                             hdp_error *err)
{
    memset(s, 0, sizeof *s);
    const long P = c->width, d = dt->d, K = dt->K, first = c->train == HDP_NET_TRAIN_BOTH;
    const double clip = isinf(c->epsilon) ? INFINITY : c->clip;
    long nxi = (first ? P * d : 0) + K * P;
    s->W = malloc(sizeof(float) * (size_t)(P * d));
    s->A = calloc((size_t)(K * P), sizeof(float));
    s->gW = first ? malloc(sizeof(float) * (size_t)(P * d)) : NULL;
    s->gA = malloc(sizeof(float) * (size_t)(K * P));
    s->xi = malloc(sizeof(double) * (size_t)(nxi > P * d ? nxi : P * d));
    if (!s->W || !s->A || (first && !s->gW) || !s->gA || !s->xi)
        return hdp_fail(err, HDP_ENOMEM, "net: out of memory for width %ld", P);
    hdp_status st = work_alloc(&s->tr, &dt->train, K, P, (int)first, c->loss, clip, err);
    if (st == HDP_OK)
        st = work_alloc(&s->va, &dt->val, K, P, 0, c->loss, clip, err);
    if (st == HDP_OK)
        st = work_alloc(&s->te, &dt->test, K, P, 0, c->loss, clip, err);
    if (st != HDP_OK)
        return st;
    hdp_xoshiro g;
    hdp_xoshiro_stream(&g, c->seed, 1);
    hdp_normals_init(&s->rng, &g);
    hdp_normals_fill(&s->rng, s->xi, P * d);
    const double sw = sqrt(2.0 / (double)d), sa = sqrt(2.0 / (double)P);
    for (long j = 0; j < P * d; j++)
        s->W[j] = (float)(sw * s->xi[j]);
    hdp_normals_fill(&s->rng, s->xi, K * P);
    if (first)
        for (long j = 0; j < K * P; j++)
            s->A[j] = (float)(sa * s->xi[j]);
    return HDP_OK;
}

/* theta <- theta - lr/n g + noise_std xi (W then A, one stream). */
static void update(run_state *s, long n, long len, float *theta, const float *g, double lr,
                   double noise_std)
{
    const double a = lr / (double)n;
    if (noise_std > 0)
        hdp_normals_fill(&s->rng, s->xi, len);
    for (long j = 0; j < len; j++)
        theta[j] = (float)((double)theta[j] - a * g[j] + (noise_std > 0 ? noise_std * s->xi[j] : 0));
}

static void record(run_state *s, const hdp_net_config *c, int cached, int th, hdp_net_result *r,
                   long j, long step, double loss, double acc, long clipped, long since)
{
    r->step[j] = (double)step;
    r->time[j] = c->lr * (double)step;
    r->train_loss[j] = loss;
    r->train_accuracy[j] = acc;
    evaluate(&s->va, s->W, s->A, cached, th, &r->val_loss[j], &r->val_accuracy[j]);
    evaluate(&s->te, s->W, s->A, cached, th, &r->test_loss[j], &r->test_accuracy[j]);
    r->clipped_fraction[j] = since > 0 ? (double)clipped / ((double)since * (double)s->tr.n) : 0;
}

static hdp_status train_loop(run_state *s, const hdp_net_config *c, int th, hdp_progress_fn progress,
                             void *user, hdp_net_result *r, hdp_error *err)
{
    const int first = c->train == HDP_NET_TRAIN_BOTH, cached = !first;
    const long n = s->tr.n, nb = (n + NB - 1) / NB, T = c->steps, R = c->records;
    long j = 0, clipped = 0, since = 0;
    double loss = 0, acc = 0;
    for (long t = 0; t <= T; t++) {
        long rec_step = (long)((double)j * (double)T / (double)R + 0.5);
        if (t < T) {
            clipped_sums(&s->tr, s->W, s->A, cached, th, s->gW, s->gA);
            loss = 0;
            long hits = 0;
            for (long b = 0; b < nb; b++) {
                loss += s->tr.bs[b].loss, hits += s->tr.bs[b].hits;
                if (s->tr.bs[b].max_norm > r->max_clipped_norm)
                    r->max_clipped_norm = s->tr.bs[b].max_norm;
            }
            loss /= (double)n, acc = (double)hits / (double)n;
        } else
            evaluate(&s->tr, s->W, s->A, cached, th, &loss, &acc);
        if (!isfinite(loss))
            return hdp_fail(err, HDP_ENUMERIC,
                            "net: the training loss is not finite at step %ld (width %ld, lr %g): "
                            "lower net.lr", t, c->width, c->lr);
        if (t == rec_step) {
            record(s, c, cached, th, r, j, t, loss, acc, clipped, since);
            if (!isfinite(r->test_loss[j]) || (s->va.n > 0 && !isfinite(r->val_loss[j])))
                return hdp_fail(err, HDP_ENUMERIC,
                                "net: the test or validation loss is not finite at step %ld "
                                "(width %ld, lr %g): lower net.lr", t, c->width, c->lr);
            clipped = since = 0, j++;
        }
        if (t == T)
            break;
        for (long b = 0; b < nb; b++)
            clipped += s->tr.bs[b].clipped;
        since++;
        if (first)
            update(s, n, c->width * s->tr.d, s->W, s->gW, c->lr, r->noise_std);
        update(s, n, s->tr.K * c->width, s->A, s->gA, c->lr, r->noise_std);
        if (progress && progress("net steps", t + 1, T, r->test_accuracy[j - 1], user))
            return hdp_fail(err, HDP_ECANCELLED, "net: stopped at step %ld of %ld", t + 1, T);
    }
    return HDP_OK;
}

hdp_status hdp_net_train(const hdp_net_data *dt, const hdp_net_config *c, int threads,
                         hdp_progress_fn progress, void *user, hdp_net_result *res,
                         hdp_error *err)
{
    memset(res, 0, sizeof *res);
    if (!dt || !c || dt->train.n < 1 || c->width < 1 || c->steps < 1 || c->records < 1 ||
        c->records > c->steps || !(c->lr > 0) || !(c->clip > 0) || !(c->delta > 0) ||
        !(c->delta < 1) || !(c->epsilon > 0))
        return hdp_fail(err, HDP_EINPUT,
                        "net: bad configuration (records must be in [1, steps], lr, C, epsilon > 0, "
                        "delta in (0, 1))");
    double t0 = omp_get_wtime();
    hdp_status st = result_alloc(res, c->records + 1, err);
    if (st != HDP_OK)
        return st;
    st = hdp_net_sigma(c, &res->sigma, &res->zcdp_route, err);
    if (st != HDP_OK)
        return st;
    res->epsilon = c->epsilon, res->delta = c->delta;
    res->rho_z = hdp_dpgd_rho_z(c->lr, c->steps, res->sigma);
    res->noise_std = sqrt(c->lr) * 2.0 * c->clip * res->sigma / (double)dt->train.n;
    res->params = (double)c->width * (double)dt->K +
                  (c->train == HDP_NET_TRAIN_BOTH ? (double)c->width * (double)dt->d : 0.0);
    run_state s;
    st = state_init(&s, dt, c, err);
    int old = blas_single(), th = threads_to_use(threads);
    res->threads = th;
    if (st == HDP_OK && c->train == HDP_NET_TRAIN_SECOND) {
        cache_features(&s.tr, s.W, th);
        cache_features(&s.va, s.W, th);
        cache_features(&s.te, s.W, th);
    }
    if (st == HDP_OK)
        st = train_loop(&s, c, th, progress, user, res, err);
    blas_restore(old);
    state_free(&s);
    res->seconds = omp_get_wtime() - t0;
    if (st != HDP_OK)
        hdp_net_result_free(res);
    return st;
}
