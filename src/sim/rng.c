/*
 * rng.c — xoshiro256++ with splitmix64 seeding and the jump function, and a
 * gsl_rng_type around it (see hdpsgd/rng.h).
 *
 * Method: the reference algorithms of Blackman and Vigna, unchanged:
 *   output  rotl(s0 + s3, 23) + s0
 *   update  t = s1 << 17; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45)
 *   jump    the state after 2^128 steps as the GF(2) combination of the states
 *           met during 256 steps, selected by the bits of the jump polynomial
 *           {0x180ec6d33cfd0aba, 0xd5a61266f0c9392c, 0xa9582618e03fc9aa, 0x39abdc4529b1661c};
 *           long jump (2^192 steps) the same with
 *           {0x76e15d3efefdcbbf, 0xc5004e441c522fb3, 0x77710069854ee241, 0x39109bb02acbe635}
 *           (constants from prng.di.unimi.it/xoshiro256plusplus.c).
 *   splitmix64: x += 0x9e3779b97f4a7c15; z = x; z = (z ^ z>>30) * 0xbf58476d1ce4e5b9;
 *           z = (z ^ z>>27) * 0x94d049bb133111eb; return z ^ z>>31
 *           (constants from prng.di.unimi.it/splitmix64.c).
 * Tests: tests/test_rng.c checks the published outputs of both generators.
 * The random streams serve the Monte Carlo of docs/theory.md §1 and §4.
 */
#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"
#include "hdpsgd/error.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

uint64_t hdp_splitmix64_next(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* ---- ziggurat tables: C layers of area V each (Marsaglia and Tsang 2000) ----
 * x_0 = V / f(R) (the base layer, tail included, as a rectangle), x_1 = R, x_i from
 * V = x_{i-1} (f(x_i) - f(x_{i-1})), x_C = 0, f(x) = exp(-x^2/2); R solves the closure of
 * the top layer, V = x_{C-1} (1 - f(x_{C-1})), with V = R f(R) + sqrt(pi/2) erfc(R/sqrt 2).
 * 128 layers: Doornik's ZIGNOR constants (hdp_rng_normal). 512 layers (the block stream
 * hdp_normals): R and V found by bisection on the closure in double precision (the same
 * bisection gives Marsaglia and Tsang's 256-layer R = 3.6541528853610088 to the last
 * digit); the top layer closes to 1.4e-12 relative (tests/test_rng.c checks it). */
#define ZIG_R 3.442619855899          /* start of the tail, 128 layers */
#define ZIG_V 9.91256303526217e-3     /* area of each layer */
#define ZIGB_R 3.852046150368391      /* the same, HDP_ZIGB_LAYERS = 512 layers */
#define ZIGB_V 2.456766351541357e-3

double hdp_zig_x[129];
double hdp_zig_r[128];
double hdp_zigb_x[HDP_ZIGB_LAYERS + 1];
double hdp_zigb_r[HDP_ZIGB_LAYERS];
static double zigb_f[HDP_ZIGB_LAYERS + 1]; /* f(x_i): the block stream's one-exp wedge test */
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_layers(int C, double R, double V, double *x, double *r, double *fx)
{
    double f = exp(-0.5 * R * R);
    x[0] = V / f;
    x[1] = R;
    x[C] = 0.0;
    for (int i = 2; i < C; i++) {
        x[i] = sqrt(-2.0 * log(V / x[i - 1] + f));
        f = exp(-0.5 * x[i] * x[i]);
    }
    for (int i = 0; i < C; i++)
        r[i] = x[i + 1] / x[i];
    for (int i = 0; fx && i <= C; i++)
        fx[i] = exp(-0.5 * x[i] * x[i]);
}

static void zig_build(void)
{
    zig_layers(128, ZIG_R, ZIG_V, hdp_zig_x, hdp_zig_r, NULL);
    zig_layers(HDP_ZIGB_LAYERS, ZIGB_R, ZIGB_V, hdp_zigb_x, hdp_zigb_r, zigb_f);
}

double hdp_zig_block_area(void) { return ZIGB_V; }

void hdp_rng_normal_tables(void) { pthread_once(&zig_once, zig_build); }

/* uniform on (0, 1): never 0, for the logarithms of the tail */
static double open01(hdp_xoshiro *g)
{
    return ((double)(hdp_xoshiro_next_inline(g) >> 11) + 0.5) * 0x1.0p-53;
}

/* A ziggurat's tables for its rejection part: blk = 0, hdp_rng_normal (128 layers, index in the
 * low 7 bits, uniform from the top 53 bits, Doornik's wedge test: F = NULL); the block stream
 * hdp_normals (512 layers, index in the low 9 bits, top 52 bits as u = 2 [1.m] - 3, the wedge
 * test with the tabulated f(x_i)). */
typedef struct {
    const double *X, *Rt, *F;
    double R;
    int mask;
} zig_tables;

static double normal_slow(hdp_xoshiro *g, int i, double u, const zig_tables *z)
{
    const double *X = z->X, *Rt = z->Rt;
    const double R = z->R;
    for (;;) {
        if (i == 0) { /* the tail |x| > R (Marsaglia 1964) */
            double x, y;
            do {
                x = log(open01(g)) / R;
                y = log(open01(g));
            } while (-2.0 * y < x * x);
            return u < 0 ? x - R : R - x;
        }
        /* the wedge between layer i and the density: accept x when a height y uniform
         * on [f(x_i), f(x_{i+1})] falls under f(x). Doornik's form (hdp_rng_normal's
         * stream, kept as it was) divides through by f(x) and takes two exponentials;
         * the block streams use the tabulated f(x_i) and one. */
        double x = u * X[i];
        if (z->F) {
            if (z->F[i] + open01(g) * (z->F[i + 1] - z->F[i]) < exp(-0.5 * x * x))
                return x;
        } else {
            double f0 = exp(-0.5 * (X[i] * X[i] - x * x));
            double f1 = exp(-0.5 * (X[i + 1] * X[i + 1] - x * x));
            if (f1 + open01(g) * (f0 - f1) < 1.0)
                return x;
        }
        /* rejected: a fresh draw */
        uint64_t r = hdp_xoshiro_next_inline(g);
        i = (int)(r & (uint64_t)z->mask);
        if (z->F)
            u = hdp_rng_u52(r);
        else
            u = 2.0 * ((double)(r >> 11) * 0x1.0p-53) - 1.0;
        if (fabs(u) < Rt[i])
            return u * X[i];
    }
}

double hdp_rng_normal_slow(hdp_xoshiro *g, int i, double u)
{
    static const zig_tables z = {hdp_zig_x, hdp_zig_r, NULL, ZIG_R, 0x7F};
    return normal_slow(g, i, u, &z);
}

double hdp_rng_normal_block_slow(hdp_xoshiro *g, int i, double u)
{
    static const zig_tables z = {hdp_zigb_x, hdp_zigb_r, zigb_f, ZIGB_R, HDP_ZIGB_LAYERS - 1};
    return normal_slow(g, i, u, &z);
}

void hdp_xoshiro_seed(hdp_xoshiro *g, uint64_t seed)
{
    if (!g)
        return;
    hdp_rng_normal_tables();
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        g->s[i] = hdp_splitmix64_next(&x);
}

/* the step itself is hdp_xoshiro_next_inline (rng_internal.h), the one definition the
 * hot loops inline */
uint64_t hdp_xoshiro_next(hdp_xoshiro *g) { return hdp_xoshiro_next_inline(g); }

/* the state after as many steps as the polynomial JUMP encodes */
static void jump_by(hdp_xoshiro *g, const uint64_t JUMP[4])
{
    uint64_t s[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        for (int b = 0; b < 64; b++) {
            if (JUMP[i] & (UINT64_C(1) << b))
                for (int w = 0; w < 4; w++)
                    s[w] ^= g->s[w];
            hdp_xoshiro_next(g);
        }
    }
    memcpy(g->s, s, sizeof s);
}

void hdp_xoshiro_stream(hdp_xoshiro *g, uint64_t seed, uint64_t j)
{
    if (!g)
        return;
    hdp_xoshiro_seed(g, seed);
    for (uint64_t i = 0; i < j; i++)
        hdp_xoshiro_jump(g);
}

static const uint64_t JUMP[4] = {UINT64_C(0x180ec6d33cfd0aba), UINT64_C(0xd5a61266f0c9392c),
                                 UINT64_C(0xa9582618e03fc9aa), UINT64_C(0x39abdc4529b1661c)};
static const uint64_t LONG_JUMP[4] = {UINT64_C(0x76e15d3efefdcbbf), UINT64_C(0xc5004e441c522fb3),
                                      UINT64_C(0x77710069854ee241), UINT64_C(0x39109bb02acbe635)};

/* The two jumps as 256 x 256 matrices over GF(2), applied four bits of the state at a time.
 * The engine is linear over GF(2), so jump(s) is the XOR of jump(e_b) over the set bits b of
 * s: entry [c][v] of a table is the XOR of the images of the basis vectors of the four bits
 * 4c..4c+3 set in v (built once from jump_by). A jump is then 64 lookups of 32 bytes (32 KB
 * per table) instead of 256 steps of the engine: the same states (unit_rng checks them
 * against jump_by's stepping on random states); each run of the real-row Monte Carlo takes
 * nine jumps (its stream, then its float32 stream's eight lanes). */
typedef struct {
    uint64_t t[64][16][4];
} jump_table;
static jump_table jump_tabs[2];
static pthread_once_t jump_once = PTHREAD_ONCE_INIT;

static void jump_build(jump_table *T, const uint64_t P[4])
{
    uint64_t col[256][4];
    for (int b = 0; b < 256; b++) {
        hdp_xoshiro e = {{0, 0, 0, 0}};
        e.s[b / 64] = UINT64_C(1) << (b % 64);
        jump_by(&e, P);
        memcpy(col[b], e.s, sizeof col[b]);
    }
    for (int c = 0; c < 64; c++)
        for (int v = 0; v < 16; v++)
            for (int w = 0; w < 4; w++) {
                uint64_t r = 0;
                for (int i = 0; i < 4; i++)
                    if (v >> i & 1)
                        r ^= col[4 * c + i][w];
                T->t[c][v][w] = r;
            }
}

static void jump_tables_build(void)
{
    jump_build(&jump_tabs[0], JUMP);
    jump_build(&jump_tabs[1], LONG_JUMP);
}

/* the jump of table k (0: jump, 1: long jump) */
static void jump_apply(hdp_xoshiro *g, int k)
{
    if (!g)
        return;
    pthread_once(&jump_once, jump_tables_build);
    uint64_t r[4] = {0, 0, 0, 0};
    for (int c = 0; c < 64; c++) {
        const uint64_t *t = jump_tabs[k].t[c][(g->s[c >> 4] >> (4 * (c & 15))) & 15];
        for (int w = 0; w < 4; w++)
            r[w] ^= t[w];
    }
    memcpy(g->s, r, sizeof r);
}

void hdp_xoshiro_jump(hdp_xoshiro *g) { jump_apply(g, 0); }

void hdp_xoshiro_long_jump(hdp_xoshiro *g) { jump_apply(g, 1); }

void hdp_xoshiro_jump_stepped(hdp_xoshiro *g, int long_jump)
{
    if (g)
        jump_by(g, long_jump ? LONG_JUMP : JUMP);
}

double hdp_xoshiro_double(hdp_xoshiro *g)
{
    return (double)(hdp_xoshiro_next(g) >> 11) * 0x1.0p-53;
}

/* ---- the gsl_rng_type ---- */

static void gsl_set(void *state, unsigned long seed) { hdp_xoshiro_seed(state, (uint64_t)seed); }

static unsigned long gsl_get(void *state) { return (unsigned long)(hdp_xoshiro_next(state) >> 32); }

static double gsl_get_double(void *state) { return hdp_xoshiro_double(state); }

static const gsl_rng_type xoshiro_type = {
    "xoshiro256++",      /* name */
    UINT32_C(0xffffffff), /* max: get() returns 32 bits */
    0,                   /* min */
    sizeof(hdp_xoshiro), /* size of the state */
    gsl_set,
    gsl_get,
    gsl_get_double,
};

const gsl_rng_type *hdp_rng_xoshiro256pp = &xoshiro_type;

gsl_rng *hdp_rng_alloc(uint64_t seed)
{
    /* GSL's default handler aborts when gsl_rng_alloc runs out of memory:
     * switch it off so that the caller sees NULL (library code never exits) */
    hdp_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(hdp_rng_xoshiro256pp);
    if (r)
        hdp_xoshiro_seed(hdp_rng_state(r), seed);
    return r;
}

hdp_xoshiro *hdp_rng_state(gsl_rng *r) { return r ? (hdp_xoshiro *)gsl_rng_state(r) : NULL; }

double hdp_rng_normal(hdp_xoshiro *g)
{
    return hdp_rng_normal_fast(g);
}
