/*
 * rows.c — Monte Carlo of one-pass DP-SGD on a user's rows (data.source = file,
 * docs/theory.md §9): the method the risk-curve driver of mc.c runs when the model has a
 * data set, in place of dpsgd.c's Gaussian rows.
 *
 * The rows were prepared once (hdpsgd/dataset.h): centred, scaled to mean eigenvalue 1 and
 * rotated into the eigenbasis of their covariance Sigma = diag(lambda), so one step is one
 * gather of a stored row and the O(d) update of dpsgd.c:
 *   i = a uniform row (sim.rows = with-replacement) or the k-th of a random permutation
 *       (without-replacement: one pass, n <= N)
 *   r = x_i^T theta - y_i = x_i^T e - z_i        e = theta - theta*, z_i = y_i - x_i^T theta*
 *   e <- e - eta_k r x_i / max(1, |r| ||x_i|| / C_clip) + 2 C_clip sigma_k xi
 * with target = least-squares: theta* the ridge least squares, z_i the row's residual (fixed);
 * target = planted: theta* uniform on the sphere of target_radius (each run its own), z_i
 * drawn afresh from data.noise at every step. ||x_i||^2 is computed once per row (in double).
 * Recorded exactly through Sigma: R_exc = 1/2 sum_j lambda_j e_j^2 (docs/theory.md §9: for
 * ridge = 0 this is R(theta) - R(theta*) on the rows); with a held-out set also its mean
 * squared error, e^T Sigma_t e - 2 e^T b_t + c_t (least-squares; planted: e^T Sigma_t e +
 * tau^2, the expectation over the synthesised test labels' noise), from the held-out rows'
 * moments computed once (hdp_data). Rows stored as float32 are read as float32.
 * Row indices: Lemire's multiply-shift of a 64-bit output (bias below N / 2^64).
 * Batched one pass (sgd.batch = B > 1, docs/theory.md §1.6): rows_run_batched, K = ceil(n/B)
 * steps of hdp_sched_batch_step, each the mean of its B_k rows' clipped gradients at the same
 * iterate (the rows drawn as above: uniform, or the next B_k of the permutation), recorded by
 * time as dpsgd.c's batched runs (hdp_mc_batch_record); plain loops, no step kernel.
 */
#include "hdpsgd/sim.h"
#include "core/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/schedule.h"
#include "sim/mc.h"
#include "sim/mc_internal.h"
#include "sim/rng_internal.h"

typedef struct {
    long d, n, N;
    const float *f32;      /* the rows (one of the two) */
    const double *f64;
    const double *xx;      /* [N] ||x_i||^2 */
    const double *lambda;  /* [d] eigenvalues of Sigma (the rows' own) */
    hdp_schedule sched;
    const double *sched_tab; /* [2n] eta_k, sigma_k (hdp_sched_step's), or NULL: per step */
    double C;              /* c sqrt(d) */
    int without;           /* without replacement */
    long batch;            /* [sgd] batch = B (1: rows_run; > 1: rows_run_batched) */
    /* least-squares */
    const double *theta;   /* [d] theta* in the eigenbasis, or NULL (planted) */
    const double *z;       /* [N] residuals */
    /* planted */
    double radius;
    hdp_mc_noise noise;    /* the label noise's law (hdp_mc_label_noise) */
    /* held-out set (NULL: none) */
    const double *tsig, *tb;
    double tc;
} rows_ctx;

typedef struct {
    double *e, *tmp;
    double *grad; /* [d] batch > 1: the sum of the batch's clipped gradients */
    float *g, *zero; /* the private noise of gsteps steps (float32 stream); d zeros */
    long gsteps, gnext; /* steps in g; the next one's (gsteps: g used up) */
    long *perm;
    hdp_normals32 normals;
} rows_ws;

/* the private noise is drawn for several steps at once when d is small (the stream's set-up
 * per call was a visible part of a step at d = 64); the same normals in the same order */
#define NOISE_FLOATS 1024L

static void *rows_ws_alloc(const void *vctx)
{
    const rows_ctx *c = vctx;
    const long gsteps = NOISE_FLOATS / c->d > 1 ? NOISE_FLOATS / c->d : 1;
    const hdp_mc_array a[] = {HDP_MC_ARRAY(rows_ws, e, c->d),
                              HDP_MC_ARRAY(rows_ws, g, gsteps * c->d),
                              HDP_MC_ARRAY(rows_ws, zero, c->d),
                              HDP_MC_ARRAY(rows_ws, tmp, c->tsig ? c->d : 0),
                              HDP_MC_ARRAY(rows_ws, perm, c->without ? c->N : 0),
                              HDP_MC_ARRAY(rows_ws, grad, c->batch > 1 ? c->d : 0)};
    rows_ws *w = HDP_MC_WS_ALLOC(rows_ws, a);
    if (w)
        w->gsteps = gsteps;
    return w;
}

/* the high 64 bits of the 128-bit product of a 64-bit output and N < 2^63 (Lemire): one
 * multiply where the compiler has a 128-bit integer, else in 32-bit halves (ISO C has none);
 * the same integer either way */
static inline long uniform_index(hdp_xoshiro *st, long N)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;
    return (long)(((u128)hdp_xoshiro_next_inline(st) * (u128)(uint64_t)N) >> 64);
#else
    uint64_t a = hdp_xoshiro_next_inline(st), b = (uint64_t)N;
    uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return (long)(hh + (lh >> 32) + (hl >> 32) + (mid >> 32));
#endif
}

/* the held-out MSE of theta = theta* + e */
static double test_mse(const rows_ctx *c, const double *e, double *tmp)
{
    long d = c->d;
    double q = 0, lin = 0;
    for (long i = 0; i < d; i++) {
        const double *row = c->tsig + (size_t)i * (size_t)d;
        double s = 0;
        for (long j = 0; j < d; j++)
            s += row[j] * e[j];
        tmp[i] = s;
        q += e[i] * s;
        if (c->tb)
            lin += e[i] * c->tb[i];
    }
    return q - 2.0 * lin + c->tc;
}

/* ---- the step kernel: one pass over the coordinates per step ----
 * e <- e + (a x + s g), then xn^T e of the new e (the next step's row: its dot product is
 * formed while e is written, so a step reads e once); meanwhile the lines of pf (the row two
 * steps ahead) are asked for, a few per block (no effect on the numbers). Vectors of four doubles, eight fixed
 * partial sums (coordinate j to sum j mod 8) added in a fixed tree, no fused multiply-adds
 * (this file is compiled with -ffp-contract=off): the same IEEE operations in the same order
 * for the three builds below (generic, AVX2, AVX-512), chosen with the Gaussian kernels
 * (hdp_normals_use, HDPSGD_SIMD), so the bits are the same on every CPU. */
typedef double v4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef float v4f __attribute__((vector_size(16), aligned(4), may_alias));
typedef double (*step_fn)(long d, double *e, const void *x, double a, const float *g, double s,
                          const void *xn, const char *pf);

static inline double tree8(const double p[8])
{
    return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

#define LOAD_F32(p) __builtin_convertvector(*(const v4f *)(p), v4)
#define LOAD_F64(p) (*(const v4 *)(p))
#define STEP_BODY(T, LOAD)                                                                     \
    const T *x = vx, *xn = vxn;                                                                \
    const v4 a4 = {a, a, a, a}, s4 = {s, s, s, s};                                             \
    v4 p0 = {0, 0, 0, 0}, p1 = {0, 0, 0, 0};                                                   \
    long j = 0;                                                                                \
    for (; j + 8 <= d; j += 8) {                                                               \
        __builtin_prefetch(pf + (size_t)j * sizeof(T));                                        \
        v4 e0 = *(v4 *)(e + j) + (a4 * LOAD(x + j) + s4 * LOAD_F32(g + j));                    \
        v4 e1 = *(v4 *)(e + j + 4) + (a4 * LOAD(x + j + 4) + s4 * LOAD_F32(g + j + 4));        \
        *(v4 *)(e + j) = e0;                                                                   \
        *(v4 *)(e + j + 4) = e1;                                                               \
        p0 += LOAD(xn + j) * e0;                                                               \
        p1 += LOAD(xn + j + 4) * e1;                                                           \
    }                                                                                          \
    double p[8];                                                                               \
    memcpy(p, &p0, sizeof p0);                                                                 \
    memcpy(p + 4, &p1, sizeof p1);                                                             \
    TAIL_AND_SUM
/* the coordinates past the last block of 8, then the partial sums (every build) */
#define TAIL_AND_SUM                                                                           \
    for (; j < d; j++) {                                                                       \
        double v = e[j] + (a * (double)x[j] + s * (double)g[j]);                               \
        e[j] = v;                                                                              \
        p[j % 8] += (double)xn[j] * v;                                                         \
    }                                                                                          \
    return tree8(p);
/* a build's two kernels (float32 and double rows) from its body and loads */
#define STEP_FNS(SUFFIX, ATTR, BODY, LF32, LF64)                                               \
    ATTR static double step_f32_##SUFFIX(long d, double *e, const void *vx, double a,          \
                                         const float *g, double s, const void *vxn,            \
                                         const char *pf)                                       \
    {                                                                                          \
        BODY(float, LF32)                                                                      \
    }                                                                                          \
    ATTR static double step_f64_##SUFFIX(long d, double *e, const void *vx, double a,          \
                                         const float *g, double s, const void *vxn,            \
                                         const char *pf)                                       \
    {                                                                                          \
        BODY(double, LF64)                                                                     \
    }

STEP_FNS(generic, , STEP_BODY, LOAD_F32, LOAD_F64)
#if defined(__x86_64__) && defined(__GNUC__)
#define ROWS_X86 1
/* The AVX2 and AVX-512 builds in intrinsics: GCC compiled the vector extension's float to
 * double conversion of an unaligned v4f as two 2-wide conversions and an insert (three
 * instructions per four entries, for x, xn and g: the pass's bottleneck at d = 64). The same
 * operations in the same order: with AVX-512 one 8-wide accumulator whose lane l is the
 * partial sum of coordinates j = l mod 8, as p0 (lanes 0-3) and p1 (4-7) above. */
#include <immintrin.h>
#define L512_F32(q) _mm512_cvtps_pd(_mm256_loadu_ps(q))
#define L512_F64(q) _mm512_loadu_pd(q)
#define STEP512_BODY(T, LOAD)                                                                  \
    const T *x = vx, *xn = vxn;                                                                \
    const __m512d a8 = _mm512_set1_pd(a), s8 = _mm512_set1_pd(s);                             \
    __m512d p8 = _mm512_setzero_pd();                                                          \
    long j = 0;                                                                                \
    for (; j + 8 <= d; j += 8) {                                                               \
        __builtin_prefetch(pf + (size_t)j * sizeof(T));                                        \
        __m512d u = _mm512_add_pd(_mm512_mul_pd(a8, LOAD(x + j)),                              \
                                  _mm512_mul_pd(s8, L512_F32(g + j)));                         \
        __m512d v = _mm512_add_pd(_mm512_loadu_pd(e + j), u);                                  \
        _mm512_storeu_pd(e + j, v);                                                            \
        p8 = _mm512_add_pd(p8, _mm512_mul_pd(LOAD(xn + j), v));                                \
    }                                                                                          \
    double p[8];                                                                               \
    _mm512_storeu_pd(p, p8);                                                                   \
    TAIL_AND_SUM
#define L256_F32(q) _mm256_cvtps_pd(_mm_loadu_ps(q))
#define L256_F64(q) _mm256_loadu_pd(q)
#define STEP256_BODY(T, LOAD)                                                                  \
    const T *x = vx, *xn = vxn;                                                                \
    const __m256d a4 = _mm256_set1_pd(a), s4 = _mm256_set1_pd(s);                             \
    __m256d p0 = _mm256_setzero_pd(), p1 = _mm256_setzero_pd();                                \
    long j = 0;                                                                                \
    for (; j + 8 <= d; j += 8) {                                                               \
        __builtin_prefetch(pf + (size_t)j * sizeof(T));                                        \
        __m256d u0 = _mm256_add_pd(_mm256_mul_pd(a4, LOAD(x + j)),                             \
                                   _mm256_mul_pd(s4, L256_F32(g + j)));                        \
        __m256d u1 = _mm256_add_pd(_mm256_mul_pd(a4, LOAD(x + j + 4)),                         \
                                   _mm256_mul_pd(s4, L256_F32(g + j + 4)));                    \
        __m256d v0 = _mm256_add_pd(_mm256_loadu_pd(e + j), u0);                                \
        __m256d v1 = _mm256_add_pd(_mm256_loadu_pd(e + j + 4), u1);                            \
        _mm256_storeu_pd(e + j, v0);                                                           \
        _mm256_storeu_pd(e + j + 4, v1);                                                       \
        p0 = _mm256_add_pd(p0, _mm256_mul_pd(LOAD(xn + j), v0));                               \
        p1 = _mm256_add_pd(p1, _mm256_mul_pd(LOAD(xn + j + 4), v1));                           \
    }                                                                                          \
    double p[8];                                                                               \
    _mm256_storeu_pd(p, p0);                                                                   \
    _mm256_storeu_pd(p + 4, p1);                                                               \
    TAIL_AND_SUM
STEP_FNS(avx2, __attribute__((target("avx2"))), STEP256_BODY, L256_F32, L256_F64)
STEP_FNS(avx512, __attribute__((target("avx512f"))), STEP512_BODY, L512_F32, L512_F64)
#else
#define ROWS_X86 0
#endif

/* the kernel of the Gaussian stream's choice (hdp_normals_kernel) for the rows' type */
static step_fn step_kernel(int f32)
{
    const char *k = hdp_normals_kernel();
#if ROWS_X86
    if (strcmp(k, "avx512") == 0)
        return f32 ? step_f32_avx512 : step_f64_avx512;
    if (strcmp(k, "avx2") == 0)
        return f32 ? step_f32_avx2 : step_f64_avx2;
#endif
    (void)k;
    return f32 ? step_f32_generic : step_f64_generic;
}

static inline const void *row_of(const rows_ctx *c, long i)
{
    return c->f32 ? (const void *)(c->f32 + (size_t)i * (size_t)c->d)
                  : (const void *)(c->f64 + (size_t)i * (size_t)c->d);
}

/* ask for row i's cache lines at once (the first rows of a run; later rows are asked for line
 * by line during the pass of the step before, so that the requests do not queue up behind each
 * other: a burst of 49 prefetches stalled the step). Inlined early on purpose: GCC 12
 * deems a function made of __builtin_prefetch "pure" and drops calls to it (no prefetch was
 * left in the binary) */
__attribute__((always_inline)) static inline void row_prefetch(const rows_ctx *c, long i)
{
    const char *p = row_of(c, i);
    size_t bytes = (size_t)c->d * (c->f32 ? sizeof(float) : sizeof(double));
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch(p + o);
}

static void record_test(const rows_ctx *c, rows_ws *w, long p, mc_run_out *out)
{
    if (out->aux && c->tsig)
        out->aux[p] = test_mse(c, w->e, w->tmp);
}

/* the next d normals of the run's float32 stream */
static inline const float *next_noise(rows_ws *w, long d)
{
    if (w->gnext == w->gsteps) {
        hdp_normals32_fill(&w->normals, w->g, w->gsteps * d);
        w->gnext = 0;
    }
    return w->g + (size_t)(w->gnext++) * (size_t)d;
}

/* step k's row: the k-th of the permutation, or a uniform one */
static inline long row_index(const rows_ctx *c, const rows_ws *w, hdp_xoshiro *st, long k)
{
    return c->without ? w->perm[k] : uniform_index(st, c->N);
}

/* A run's start, batched or not: its float32 noise stream from the run's stream, the initial
 * error e = -theta* (the data set's target, or a planted one drawn from rng), and without
 * replacement the first n of a uniform random permutation of the rows (Fisher-Yates, from st). */
static void run_start(const rows_ctx *c, rows_ws *w, gsl_rng *rng, hdp_xoshiro *st)
{
    hdp_normals32_init(&w->normals, st);
    w->gnext = w->gsteps;
    if (c->theta)
        for (long j = 0; j < c->d; j++)
            w->e[j] = -c->theta[j];
    else
        hdp_mc_draw_target(rng, c->d, c->radius, w->e);
    if (!c->without)
        return;
    for (long i = 0; i < c->N; i++)
        w->perm[i] = i;
    for (long k = 0; k < c->n; k++) {
        long j = k + uniform_index(st, c->N - k), t = w->perm[k];
        w->perm[k] = w->perm[j];
        w->perm[j] = t;
    }
}

/* a run in progress: its workspace, stream and output, the rows of its next two steps */
typedef struct {
    rows_ws *w;
    gsl_rng *rng;
    hdp_xoshiro *st;
    mc_run_out *out;
    long i, i1; /* step k's row, step k + 1's */
    long p;     /* the next grid point */
    double dot; /* x_i^T e */
    double nclip;
    long tick;  /* steps to the next hdp_mc_tick */
} rows_run_state;

/* The run's set-up up to its first step. Step k's row i_k is drawn at step k - 2 (its lines
 * prefetched), and its dot product x_{i_k}^T e is formed by step k - 1's pass; the run's
 * stream gives i_0, i_1, then per step k: i_{k+2} (while k + 2 < n), then the planted
 * target's label noise z_k. */
static void rows_begin(const rows_ctx *c, const mc_grid *g, rows_ws *w, gsl_rng *rng,
                       mc_run_out *out, rows_run_state *s)
{
    const long d = c->d, n = c->n;
    double *e = w->e;
    hdp_xoshiro *st = hdp_rng_state(rng);
    s->w = w;
    s->rng = rng;
    s->st = st;
    s->out = out;
    run_start(c, w, rng, st);
    double R = hdp_mc_excess_risk(c->lambda, e, d);
    long p0 = 0;
    while (p0 < g->points && g->kgrid[p0] == 0)
        record_test(c, w, p0++, out);
    s->p = hdp_mc_record_start(g, R, out);
    s->nclip = 0;
    s->tick = g->every;
    s->i = row_index(c, w, st, 0);
    s->i1 = n > 1 ? row_index(c, w, st, 1) : s->i;
    row_prefetch(c, s->i1);
    /* x_{i_0}^T e: the generic kernel with nothing added (e + (0 x + 0 0) = e) */
    const void *x0 = row_of(c, s->i);
    s->dot = (c->f32 ? step_f32_generic : step_f64_generic)(d, e, x0, 0.0, w->zero, 0.0, x0, x0);
}

/* the last step: the update, then the final-iterate jump (docs/theory.md §3) */
static void rows_last(const rows_ctx *c, step_fn step, rows_run_state *s, double coef, double sc)
{
    const long d = c->d;
    double *e = s->w->e;
    const void *x = row_of(c, s->i);
    step(d, e, x, -coef, s->w->zero, 0.0, x, x);
    if (sc > 0) {
        double before = hdp_mc_excess_risk(c->lambda, e, d);
        const float *noise = next_noise(s->w, d);
        for (long j = 0; j < d; j++)
            e[j] += sc * (double)noise[j];
        s->out->jump = hdp_mc_excess_risk(c->lambda, e, d) - before;
    }
}

/* a if c else b, by a mask on the bits: GCC turned the conditional back into a branch */
static inline double select_bits(int c, double a, double b)
{
    uint64_t ua, ub, m = (uint64_t)0 - (uint64_t)(c != 0);
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    ua = (ua & m) | (ub & ~m);
    memcpy(&a, &ua, sizeof a);
    return a;
}

/* step k of the run; 0 when the run stopped there (diverged, or the runs were cancelled) */
__attribute__((always_inline)) static inline int rows_step(const rows_ctx *c, const mc_grid *g,
                                                           step_fn step, rows_run_state *s,
                                                           long k)
{
    const long d = c->d, n = c->n;
    mc_run_out *out = s->out;
    double eta_k, sigma_k;
    if (c->sched_tab) {
        eta_k = c->sched_tab[2 * k];
        sigma_k = c->sched_tab[2 * k + 1];
    } else {
        hdp_sched_step(&c->sched, n, k, &eta_k, &sigma_k);
    }
    const long i = s->i, i1 = s->i1;
    long i2 = i1;
    if (k + 2 < n) {
        i2 = row_index(c, s->w, s->st, k + 2);
        __builtin_prefetch(c->xx + i2); /* its lines: during the step's pass */
        if (c->theta) /* its residual (480 KB of them on Fashion-MNIST: not in L2) */
            __builtin_prefetch(c->z + i2);
    }
    /* the Gaussian label noise inline (the common case; hdp_mc_label_noise's first case) */
    double zi = c->theta                              ? c->z[i]
                : c->noise.kind == HDP_NOISE_GAUSSIAN ? c->noise.tau * hdp_rng_normal_fast(s->st)
                                                      : hdp_mc_label_noise(&c->noise, s->rng);
    double r = s->dot - zi;
    if (eta_k * c->xx[i] > 2.0)
        out->violations += 1.0;
    if (!isfinite(r)) {
        out->diverged = 1;
        return 0;
    }
    /* the clipping without a branch (about 70 % of the steps clip on digits: a branch on it
     * was mispredicted often); the same numbers as coef *= C / gnorm when clipped */
    double coef = eta_k * r, gnorm = fabs(r) * sqrt(c->xx[i]);
    const int clip = gnorm > c->C;
    coef = select_bits(clip, coef * (c->C / gnorm), coef); /* the quotient unused at gnorm = 0 */
    s->nclip += (double)clip;
    double sc = sigma_k > 0 ? 2.0 * c->C * sigma_k : 0.0;
    if (k < n - 1) {
        const float *noise = sc > 0 ? next_noise(s->w, d) : s->w->zero;
        s->dot = step(d, s->w->e, row_of(c, i), -coef, noise, sc, row_of(c, i1), row_of(c, i2));
    } else {
        rows_last(c, step, s, coef, sc);
    }
    s->i = i1;
    s->i1 = i2;
    if (--s->tick == 0) { /* after every g->every steps: (k + 1) % every == 0, no division */
        s->tick = g->every;
        if (!hdp_mc_tick(g, g->every)) {
            out->diverged = 1;
            return 0;
        }
    }
    if (s->p < g->points && g->kgrid[s->p] == k + 1) {
        long from = s->p;
        double R = hdp_mc_excess_risk(c->lambda, s->w->e, d);
        if (!hdp_mc_record(g, k + 1, R, &s->nclip, &s->p, out)) {
            out->diverged = 1;
            return 0;
        }
        for (long q = from; q < s->p; q++)
            record_test(c, s->w, q, out);
    }
    return 1;
}

/* one run */
static void rows_run(const void *vctx, const mc_grid *g, void *vws, gsl_rng *rng,
                     mc_run_out *out)
{
    const rows_ctx *c = vctx;
    const step_fn step = step_kernel(c->f32 != NULL);
    rows_run_state s;
    rows_begin(c, g, vws, rng, out, &s);
    for (long k = 0; k < c->n; k++)
        if (!rows_step(c, g, step, &s, k))
            return;
}

/* count runs stepped together: step k of each in turn, so that the core overlaps one run's
 * step with the other's (a step at small d is a chain of dependent operations: the dot
 * product, the residual, the clipping divide, the update); each run computes exactly what it
 * would alone. A run that stops leaves the others to go on. */
static void rows_run_group(const void *vctx, const mc_grid *g, void *const *ws,
                           gsl_rng *const *rng, mc_run_out *const *out, int count)
{
    const rows_ctx *c = vctx;
    const step_fn step = step_kernel(c->f32 != NULL);
    rows_run_state s[HDP_MC_GROUP_MAX];
    int live = 0;
    for (int q = 0; q < count && q < HDP_MC_GROUP_MAX; q++)
        rows_begin(c, g, ws[q], rng[q], out[q], &s[live++]);
    if (live == 2) { /* the common case, unrolled */
        long k = 0;
        for (; k < c->n; k++) {
            int a = rows_step(c, g, step, &s[0], k), b = rows_step(c, g, step, &s[1], k);
            if (!a || !b) {
                if (a || b)
                    s[0] = a ? s[0] : s[1];
                live = a || b;
                k++;
                break;
            }
        }
        for (; live && k < c->n; k++)
            if (!rows_step(c, g, step, &s[0], k))
                return;
        return;
    }
    for (long k = 0; k < c->n && live > 0; k++) {
        int m = 0;
        for (int q = 0; q < live; q++)
            if (rows_step(c, g, step, &s[q], k))
                s[m++] = s[q];
        live = m;
    }
}

/* x_i^T e in double (the batched runs: plain loops) */
static double row_dot(const rows_ctx *c, long i, const double *e)
{
    double s = 0;
    if (c->f32)
        for (long j = 0; j < c->d; j++)
            s += (double)c->f32[(size_t)i * (size_t)c->d + (size_t)j] * e[j];
    else
        for (long j = 0; j < c->d; j++)
            s += c->f64[(size_t)i * (size_t)c->d + (size_t)j] * e[j];
    return s;
}

/* the time of grid point p (t = 1 at the last) */
static double grid_time(const mc_grid *g, long p)
{
    return p == g->points - 1 ? 1.0 : (double)p / (double)(g->points - 1);
}

/* One run of batched one pass on the rows (docs/theory.md §1.6): step k takes B_k rows
 * (uniform, or the next B_k of the permutation) and their clipped gradients at the same
 * iterate, e <- e - (eta_k/B_k) sum_b g_b + 2 C sigma_k xi (xi from the run's float32
 * stream, as rows_run), eta_k, sigma_k from hdp_sched_batch_step; the risk recorded by time
 * (hdp_mc_batch_record), the held-out MSE likewise (its value at the iterates around a grid
 * time, computed only for the steps that hold one). */
static void rows_run_batched(const void *vctx, const mc_grid *g, void *vws, gsl_rng *rng,
                             mc_run_out *out)
{
    const rows_ctx *c = vctx;
    rows_ws *w = vws;
    const long d = c->d, n = c->n, K = hdp_sched_batch_count(n, c->batch);
    double *e = w->e, *grad = w->grad;
    hdp_xoshiro *st = hdp_rng_state(rng);
    run_start(c, w, rng, st);
    double R = hdp_mc_excess_risk(c->lambda, e, d);
    long p = 1; /* t = 0 here, every later grid time by hdp_mc_batch_record */
    out->risk[0] = R;
    out->clipped[0] = 0.0;
    record_test(c, w, 0, out);
    for (long k = 0; k < K; k++) {
        double eta_k, sigma_k;
        long rows;
        hdp_sched_batch_step(&c->sched, n, c->batch, k, &eta_k, &sigma_k, &rows);
        double t0 = (double)(k * c->batch) / (double)n;
        double t1 = k == K - 1 ? 1.0 : (double)((k + 1) * c->batch) / (double)n;
        int grid = c->tsig && out->aux && p < g->points && grid_time(g, p) <= t1;
        double T0 = grid ? test_mse(c, e, w->tmp) : 0.0;
        double a = eta_k / (double)rows, clipped = 0;
        int expansive = 0;
        memset(grad, 0, sizeof(double) * (size_t)d);
        for (long b = 0; b < rows; b++) {
            long i = c->without ? w->perm[k * c->batch + b] : uniform_index(st, c->N);
            double r = row_dot(c, i, e) - (c->theta ? c->z[i] : hdp_mc_label_noise(&c->noise, rng));
            if (!isfinite(r)) {
                out->diverged = 1;
                return;
            }
            expansive |= a * c->xx[i] > 2.0;
            double coef = r, gnorm = fabs(r) * sqrt(c->xx[i]);
            if (gnorm > c->C) {
                coef *= c->C / gnorm;
                clipped += 1.0;
            }
            if (c->f32) /* the row's type chosen once per row, not per coordinate */
                for (long j = 0; j < d; j++)
                    grad[j] += coef * (double)c->f32[(size_t)i * (size_t)d + (size_t)j];
            else
                for (long j = 0; j < d; j++)
                    grad[j] += coef * c->f64[(size_t)i * (size_t)d + (size_t)j];
        }
        out->violations += expansive; /* a step with a row a ||x||^2 > 2: counted once */
        for (long j = 0; j < d; j++)
            e[j] -= a * grad[j];
        double R1 = NAN, T1 = grid ? test_mse(c, e, w->tmp) : 0.0;
        if (k == K - 1) /* the last step: the final-iterate jump (docs/theory.md §3.4) */
            R1 = hdp_mc_excess_risk(c->lambda, e, d);
        double s = sigma_k > 0 ? 2.0 * c->C * sigma_k : 0.0;
        if (s > 0) {
            const float *noise = next_noise(w, d);
            for (long j = 0; j < d; j++)
                e[j] += s * (double)noise[j];
        }
        double Rn = hdp_mc_excess_risk(c->lambda, e, d);
        if (k == K - 1)
            out->jump = Rn - R1;
        else
            R1 = Rn;
        if (grid && k < K - 1 && s > 0)
            T1 = test_mse(c, e, w->tmp);
        if ((k + 1) % g->every == 0 && !hdp_mc_tick(g, g->every)) {
            out->diverged = 1; /* cancelled: the loop reports it */
            return;
        }
        long from = p;
        if (!hdp_mc_batch_record(g, &p, t0, R, t1, R1, Rn, clipped / (double)rows, out)) {
            out->diverged = 1;
            return;
        }
        for (long q = from; c->tsig && out->aux && q < p; q++) /* the held-out MSE as the risk */
            out->aux[q] = q == g->points - 1 ? (s > 0 ? test_mse(c, e, w->tmp) : T1)
                                             : T0 + (grid_time(g, q) - t0) / (t1 - t0) * (T1 - T0);
        R = Rn;
    }
}

#define SCHED_TAB_MAX (1L << 18)

static const mc_method rows_method = {"sim", rows_ws_alloc, free, rows_run, 0};
static const mc_method rows_method_test = {"sim", rows_ws_alloc, free, rows_run, 1};
static const mc_method rows_batched = {"sim", rows_ws_alloc, free, rows_run_batched, 0};
static const mc_method rows_batched_test = {"sim", rows_ws_alloc, free, rows_run_batched,
                                            1};
/* two runs per thread at once (rows_run_group) when d <= ROWS_GROUP_MAX_D: digits (d = 64),
 * 8000 runs, one thread, paired: 3 % less CPU per run-step (0.0766 -> 0.0743 us, within the
 * spread); Fashion-MNIST (d = 784) labels: 5 % more, hence the bound */
static const mc_group rows_group = {2, rows_run_group};
#define ROWS_GROUP_MAX_D 256

/* The real-row Monte Carlo of a problem whose model has a data set (hdp_sim_run_problem
 * calls it). */
hdp_status hdp_sim_rows_problem(const hdp_problem *pb, const hdp_mc_options *opt,
                                hdp_mc_result *res, hdp_error *err)
{
    const hdp_model *m = pb->model;
    const hdp_data *data = hdp_model_data(m);
    const hdp_dataset *ds = &data->train;
    if (hdp_feature_norm_bound(m) > 0)
        return hdp_model_fail_key(m, "clip", "feature_norm", err,
                                  "feature clipping is not simulated on a data set's rows "
                                  "(data.source = file): leave clip.feature_norm at 0");
    rows_ctx c = {.d = ds->d, .n = m->n, .N = ds->n, .f32 = ds->rows.f32, .f64 = ds->rows.f64,
                  .lambda = ds->lambda, .sched = pb->sched, .C = m->c * sqrt((double)ds->d),
                  .without = m->rows == HDP_ROWS_WITHOUT_REPLACEMENT,
                  .batch = m->batch > 1 ? m->batch : 1, .radius = m->target_radius};
    hdp_mc_noise_of(m, &c.noise);
    if (!data->planted) {
        c.theta = ds->theta_eig;
        c.z = ds->residual;
    }
    if (data->has_test && data->test_sigma) {
        c.tsig = data->test_sigma;
        c.tb = data->planted ? NULL : data->test_b;
        c.tc = data->planted ? m->tau2 : data->test_c;
    }
    double *xx = malloc(sizeof(double) * (size_t)c.N);
    if (!xx)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the norms of %ld rows", c.N);
    for (long i = 0; i < c.N; i++) {
        double s = 0;
        if (c.f32)
            for (long j = 0; j < c.d; j++) {
                double v = c.f32[(size_t)i * (size_t)c.d + (size_t)j];
                s += v * v;
            }
        else
            for (long j = 0; j < c.d; j++) {
                double v = c.f64[(size_t)i * (size_t)c.d + (size_t)j];
                s += v * v;
            }
        xx[i] = s;
    }
    c.xx = xx;
    /* the schedule's eta_k, sigma_k once for all runs (two schedule evaluations per step were
     * 15 % of a step at d = 64), up to 4 MiB; beyond, evaluated per step as before */
    double *tab = c.n <= SCHED_TAB_MAX ? malloc(sizeof(double) * 2 * (size_t)c.n) : NULL;
    for (long k = 0; tab && k < c.n; k++)
        hdp_sched_step(&c.sched, c.n, k, &tab[2 * k], &tab[2 * k + 1]);
    c.sched_tab = tab;
    hdp_status st;
    if (c.batch > 1) /* batched one pass: K steps, n/B of them per unit of time */
        st = hdp_mc_drive(pb, opt, hdp_sched_batch_count(c.n, c.batch),
                          (double)c.n / (double)c.batch,
                          c.tsig ? &rows_batched_test : &rows_batched, NULL, &c, res, err);
    else /* two runs per thread at small d only: at d = 784 the pair's vectors and rows in
          * flight (about 24 d bytes per run) no longer fit in L1 beside each other */
        st = hdp_mc_drive(pb, opt, c.n, 0, c.tsig ? &rows_method_test : &rows_method,
                          c.d <= ROWS_GROUP_MAX_D ? &rows_group : NULL, &c, res, err);
    res->rho_accounted = pb->rho_accounted;
    free(tab);
    free(xx);
    return st;
}
