/*
 * rng.c — xoshiro256++ with splitmix64 seeding and the jump function, and a
 * gsl_rng_type around it (see hdpsgd/rng.h).
 *
 * Method: the reference algorithms of Blackman and Vigna, unchanged:
 *   output  rotl(s0 + s3, 23) + s0
 *   update  t = s1 << 17; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45)
 *   jump    the state after 2^128 steps as the GF(2) combination of the states
 *           met during 256 steps, selected by the bits of the jump polynomial
 *           {0x180ec6d33cfd0aba, 0xd5a61266f0c9392c, 0xa9582618e03fc9aa, 0x39abdc4529b1661c}
 *           (constants from prng.di.unimi.it/xoshiro256plusplus.c).
 *   splitmix64: x += 0x9e3779b97f4a7c15; z = x; z = (z ^ z>>30) * 0xbf58476d1ce4e5b9;
 *           z = (z ^ z>>27) * 0x94d049bb133111eb; return z ^ z>>31
 *           (constants from prng.di.unimi.it/splitmix64.c).
 * Tests: tests/test_rng.c checks the published outputs of both generators.
 * The random streams serve the Monte Carlo of THEORY.md sections 1 and 4.
 */
#include "hdpsgd/rng.h"
#include "hdpsgd/error.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t hdp_splitmix64_next(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* ---- ziggurat tables (ZIGNOR, Doornik 2005): 128 layers of area V each ---- */
#define ZIG_R 3.442619855899          /* start of the tail */
#define ZIG_V 9.91256303526217e-3     /* area of each layer */

double hdp_zig_x[129];
double hdp_zig_r[128];
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_build(void)
{
    double f = exp(-0.5 * ZIG_R * ZIG_R);
    hdp_zig_x[0] = ZIG_V / f; /* the base layer, tail included, as a rectangle */
    hdp_zig_x[1] = ZIG_R;
    hdp_zig_x[128] = 0.0;
    for (int i = 2; i < 128; i++) {
        hdp_zig_x[i] = sqrt(-2.0 * log(ZIG_V / hdp_zig_x[i - 1] + f));
        f = exp(-0.5 * hdp_zig_x[i] * hdp_zig_x[i]);
    }
    for (int i = 0; i < 128; i++)
        hdp_zig_r[i] = hdp_zig_x[i + 1] / hdp_zig_x[i];
}

void hdp_rng_normal_tables(void) { pthread_once(&zig_once, zig_build); }

/* uniform on (0, 1): never 0, for the logarithms of the tail */
static double open01(hdp_xoshiro *g)
{
    return ((double)(hdp_xoshiro_next_inline(g) >> 11) + 0.5) * 0x1.0p-53;
}

double hdp_rng_normal_slow(hdp_xoshiro *g, int i, double u)
{
    for (;;) {
        if (i == 0) { /* the tail |x| > R (Marsaglia 1964) */
            double x, y;
            do {
                x = log(open01(g)) / ZIG_R;
                y = log(open01(g));
            } while (-2.0 * y < x * x);
            return u < 0 ? x - ZIG_R : ZIG_R - x;
        }
        /* the wedge between layer i and the density */
        double x = u * hdp_zig_x[i];
        double f0 = exp(-0.5 * (hdp_zig_x[i] * hdp_zig_x[i] - x * x));
        double f1 = exp(-0.5 * (hdp_zig_x[i + 1] * hdp_zig_x[i + 1] - x * x));
        if (f1 + open01(g) * (f0 - f1) < 1.0)
            return x;
        /* rejected: a fresh draw */
        uint64_t r = hdp_xoshiro_next_inline(g);
        i = (int)(r & 0x7F);
        u = 2.0 * ((double)(r >> 11) * 0x1.0p-53) - 1.0;
        if (fabs(u) < hdp_zig_r[i])
            return u * hdp_zig_x[i];
    }
}

void hdp_xoshiro_seed(hdp_xoshiro *g, uint64_t seed)
{
    hdp_rng_normal_tables();
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        g->s[i] = hdp_splitmix64_next(&x);
}

uint64_t hdp_xoshiro_next(hdp_xoshiro *g)
{
    uint64_t *s = g->s;
    const uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void hdp_xoshiro_jump(hdp_xoshiro *g)
{
    static const uint64_t JUMP[4] = {UINT64_C(0x180ec6d33cfd0aba), UINT64_C(0xd5a61266f0c9392c),
                                     UINT64_C(0xa9582618e03fc9aa), UINT64_C(0x39abdc4529b1661c)};
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int i = 0; i < 4; i++) {
        for (int b = 0; b < 64; b++) {
            if (JUMP[i] & (UINT64_C(1) << b)) {
                s0 ^= g->s[0];
                s1 ^= g->s[1];
                s2 ^= g->s[2];
                s3 ^= g->s[3];
            }
            hdp_xoshiro_next(g);
        }
    }
    g->s[0] = s0;
    g->s[1] = s1;
    g->s[2] = s2;
    g->s[3] = s3;
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

hdp_xoshiro *hdp_rng_state(gsl_rng *r) { return (hdp_xoshiro *)gsl_rng_state(r); }
