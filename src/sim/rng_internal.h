/*
 * rng_internal.h — the ziggurat tables and the inline generators of the Monte Carlo hot
 * loops (internal: the tables are written once, by hdp_rng_normal_tables, and are not part
 * of the public API; hdp_rng_normal in hdpsgd/rng.h is the exported form).
 */
#ifndef HDPSGD_SIM_RNG_INTERNAL_H
#define HDPSGD_SIM_RNG_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "hdpsgd/rng.h"

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
/* the jump (long_jump 0) or the long jump (1) by stepping the engine 256 times, the
 * reference hdp_xoshiro_jump and hdp_xoshiro_long_jump's tables are built from (tests) */
void hdp_xoshiro_jump_stepped(hdp_xoshiro *g, int long_jump);
/* the 512-layer tables, layer area and rejection part of the block stream (hdp_normals
 * below) */
#define HDP_ZIGB_LAYERS 512
extern double hdp_zigb_x[HDP_ZIGB_LAYERS + 1];
extern double hdp_zigb_r[HDP_ZIGB_LAYERS];
double hdp_zig_block_area(void);
/* The block stream's uniform on [-1, 1) from one output r: the top 52 bits as the
 * mantissa of a double in [1, 2), then 2 [1.m] - 3 (exact; SIMD units do the same). */
static inline double hdp_rng_u52(uint64_t r)
{
    union {
        uint64_t bits;
        double d;
    } v = {(r >> 12) | UINT64_C(0x3FF0000000000000)};
    return 2.0 * v.d - 3.0;
}
double hdp_rng_normal_block_slow(hdp_xoshiro *g, int i, double u);

/* One xoshiro256++ step (see rng.c's head comment); the only definition: the exported
 * hdp_xoshiro_next calls it too. */
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
static inline double hdp_rng_normal_fast(hdp_xoshiro *g)
{
    uint64_t r = hdp_xoshiro_next_inline(g);
    int i = (int)(r & 0x7F);
    double u = 2.0 * ((double)(r >> 11) * 0x1.0p-53) - 1.0; /* uniform on [-1, 1) */
    if (__builtin_expect(fabs(u) < hdp_zig_r[i], 1))
        return u * hdp_zig_x[i];
    return hdp_rng_normal_slow(g, i, u);
}

#endif
