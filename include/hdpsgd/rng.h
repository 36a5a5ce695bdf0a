/*
 * hdpsgd/rng.h — random streams for the Monte Carlo (THEORY.md sections 1 and 4).
 *
 * xoshiro256++ 1.0 (Blackman and Vigna, "Scrambled linear pseudorandom number
 * generators", ACM TOMS 2021; reference code prng.di.unimi.it/xoshiro256plusplus.c):
 * 256 bits of state in an explicit struct, seeded through splitmix64 (Steele,
 * Lea and Flood 2014; prng.di.unimi.it/splitmix64.c), with the jump function
 * that advances a stream by 2^128 steps. Jumping the base stream r times gives
 * the stream of Monte Carlo run r: 2^128 non-overlapping streams, results
 * independent of the number of threads.
 *
 * The same generator drives GSL's samplers (ziggurat Gaussian, Student t)
 * through a gsl_rng_type: hdp_rng_xoshiro256pp. Its get() returns the upper 32
 * bits of one output (max = 2^32 - 1, so GSL's ziggurat uses one output per
 * trial) and get_double() the upper 53 bits scaled to [0, 1).
 */
#ifndef HDPSGD_RNG_H
#define HDPSGD_RNG_H

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t s[4];
} hdp_xoshiro;

/* One step of splitmix64: advances *x by the golden-ratio increment and
 * returns the mixed value. */
uint64_t hdp_splitmix64_next(uint64_t *x);

/* Seed the state with four consecutive splitmix64 outputs from seed (the
 * seeding the xoshiro authors recommend; never all zero). */
void hdp_xoshiro_seed(hdp_xoshiro *g, uint64_t seed);

/* The next 64-bit output of xoshiro256++. */
uint64_t hdp_xoshiro_next(hdp_xoshiro *g);

/* Advance the stream by 2^128 outputs (the reference jump polynomial). */
void hdp_xoshiro_jump(hdp_xoshiro *g);

/* Uniform double in [0, 1) from the upper 53 bits of one output. */
double hdp_xoshiro_double(hdp_xoshiro *g);

/* The gsl_rng_type wrapping xoshiro256++ (name "xoshiro256++"); its set()
 * seeds through splitmix64 like hdp_xoshiro_seed. */
extern const gsl_rng_type *hdp_rng_xoshiro256pp;

/* A gsl_rng of type hdp_rng_xoshiro256pp seeded from seed (NULL: out of
 * memory). Switches GSL's error handler off for the call: allocate from one
 * thread (the Monte Carlo allocates every thread's generator before its
 * parallel region). Free with gsl_rng_free. */
gsl_rng *hdp_rng_alloc(uint64_t seed);

/* The xoshiro state inside a gsl_rng of type hdp_rng_xoshiro256pp (through
 * gsl_rng_state), to copy a run's stream in or to jump it. */
hdp_xoshiro *hdp_rng_state(gsl_rng *r);

/* ---- the fast Gaussian of the Monte Carlo hot loops ----
 * Ziggurat with 128 layers in the ZIGNOR form of Doornik (2005, "An improved
 * ziggurat method to generate normal random samples"): the layer index and the
 * uniform come from disjoint bits of ONE xoshiro256++ output (low 7 bits; top 53
 * bits), which avoids the correlation flaw of the original Marsaglia-Tsang code;
 * the tail beyond R = 3.442619855899 uses Marsaglia's exponential method. The
 * density is exact (no approximation): about 98.8 % of draws return after one
 * 64-bit draw, one multiply and one compare. The tables are built once (thread
 * safe) by hdp_rng_normal_tables(), which hdp_xoshiro_seed calls. */
extern double hdp_zig_x[129]; /* layer edges x_0 = V/f(R) > x_1 = R > ... > x_128 = 0 */
extern double hdp_zig_r[128]; /* x_{i+1} / x_i */
void hdp_rng_normal_tables(void);
double hdp_rng_normal_slow(hdp_xoshiro *g, int i, double u); /* rejection part (rng.c) */

static inline uint64_t hdp_xoshiro_next_inline(hdp_xoshiro *g)
{
    uint64_t *s = g->s;
    const uint64_t sum = s[0] + s[3];
    const uint64_t result = ((sum << 23) | (sum >> 41)) + s[0];
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* One standard normal number from the stream g. */
static inline double hdp_rng_normal(hdp_xoshiro *g)
{
    uint64_t r = hdp_xoshiro_next_inline(g);
    int i = (int)(r & 0x7F);
    double u = 2.0 * ((double)(r >> 11) * 0x1.0p-53) - 1.0; /* uniform on [-1, 1) */
    if (__builtin_expect(fabs(u) < hdp_zig_r[i], 1))
        return u * hdp_zig_x[i];
    return hdp_rng_normal_slow(g, i, u);
}

#ifdef __cplusplus
}
#endif
#endif
