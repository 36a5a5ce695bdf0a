/*
 * hdpsgd/rng.h — random streams for the Monte Carlo (docs/theory.md §1 and §4).
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

/* Stream j of a seed: hdp_xoshiro_seed(g, seed), then j jumps (the toolkit's way of giving
 * run, initialisation or configuration j a stream of its own). */
void hdp_xoshiro_stream(hdp_xoshiro *g, uint64_t seed, uint64_t j);

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

/* One standard normal number from the stream g: the ziggurat of the Monte Carlo
 * (128 layers, ZIGNOR form; src/sim/rng_internal.h has its tables and the inline form
 * the library's hot loops use, with the same numbers). */
double hdp_rng_normal(hdp_xoshiro *g);

/* ---- the block Gaussian stream of the Monte Carlo hot loops (src/sim/normals.c) ----
 * Eight xoshiro256++ lanes stepped together, so that SIMD units (AVX2: two
 * vectors of four; AVX-512: one of eight) generate eight Gaussians at a time,
 * and a ninth stream for the ziggurat's rare rejections. Position p of the
 * stream takes the (p / 8)-th output r of lane p % 8 and tries the ziggurat fast
 * path with it, on 512 layers (the construction of Marsaglia and Tsang 2000): layer
 * i = the low 9 bits of r, uniform u = 2 [1.m] - 3 from the top 52 bits (exact;
 * disjoint bits as in ZIGNOR); x = u x_i when |u| < x_{i+1}/x_i (99.2 % of
 * positions). Otherwise the position is finished by the rejection code (wedge test, tail,
 * fresh draws; hdp_rng_normal_block_slow) on the rejection stream, positions in
 * increasing order. Every uniform serves one position only, so the numbers are
 * exactly N(0, 1) and independent; the sequence is a function of the nine
 * states, bit for bit the same for every kernel (generic C, AVX2, AVX-512) and
 * however the caller splits it into fills. */
#define HDP_NLANES 8
typedef struct {
    uint64_t s[4][HDP_NLANES]; /* s[w][j]: word w of lane j's xoshiro256++ state */
    hdp_xoshiro slow;          /* the rejection stream */
    double buf[HDP_NLANES];    /* the rest of a round a caller did not take */
    int pos;                   /* next unread entry of buf (HDP_NLANES: empty) */
} hdp_normals;

/* Advance the stream by 2^192 outputs (the reference long-jump polynomial). */
void hdp_xoshiro_long_jump(hdp_xoshiro *g);

/* Lane j = the stream run long-jumped j + 1 times, the rejection stream = run
 * long-jumped 9 times: 2^192 outputs apart from each other and, for run streams
 * that are jumps (2^128 apart) of one base stream, from every run's own stream
 * and from every other run's lanes. */
void hdp_normals_init(hdp_normals *g, const hdp_xoshiro *run);

/* The next n standard normal numbers of the stream into out[0..n-1]. */
void hdp_normals_fill(hdp_normals *g, double *out, long n);

/* ---- the float32 block stream (the real-row Monte Carlo's private noise, src/sim/rows.c) ----
 * The same eight lanes as hdp_normals (lane j = the run's stream long-jumped j + 1 times), each
 * 64-bit output giving two 32-bit words (low half first; word m of a round = half m % 2 of lane
 * m / 2's output). Block b takes rounds 2b and 2b + 1; the words m of the two, a and c, give
 * positions 32 b + m and 32 b + 16 + m by Box-Muller in float: r cos(theta) and r sin(theta),
 * r = sqrt(-2 log u), u = (fl(a) + 1) 2^-32 in (0, 1], theta uniform on a grid of 2^26 angles
 * (the top 2 bits of c the quadrant, its next 24 the angle in it). log, sin and cos by
 * single-precision polynomials (a few float ulps; |x| at most 6.66, beyond which the normal law
 * has mass 2.7e-11): docs/performance.md. No rejection; bit for bit the same on every kernel
 * (tests/test_rng.c). */
typedef struct {
    uint64_t s[4][HDP_NLANES];
    float buf[4 * HDP_NLANES]; /* the rest of a block a caller did not take */
    int pos;                   /* next unread entry of buf (4 HDP_NLANES: empty) */
} hdp_normals32;

void hdp_normals32_init(hdp_normals32 *g, const hdp_xoshiro *run);
void hdp_normals32_fill(hdp_normals32 *g, float *out, long n);

/* The kernels; HDP_SIMD_AUTO picks the widest the CPU has, the default. The library reads
 * no environment variable: the program chooses (hdpsgd: HDPSGD_SIMD=generic|avx2|avx512,
 * src/cli/main.c; the Python package does the same). hdp_normals_use() switches every later
 * fill for the whole process (not while other threads fill) and returns 0 when the CPU lacks
 * the kernel (nothing changed), 1 otherwise. The numbers are the same for all. */
typedef enum { HDP_SIMD_AUTO, HDP_SIMD_GENERIC, HDP_SIMD_AVX2, HDP_SIMD_AVX512 } hdp_simd;
int hdp_normals_use(hdp_simd kernel);
const char *hdp_normals_kernel(void); /* "generic", "avx2" or "avx512" */
/* 1 and *kernel (may be NULL) when name is one of "auto", "generic", "avx2", "avx512";
 * 0 otherwise (NULL included). */
int hdp_simd_parse(const char *name, hdp_simd *kernel);

#ifdef __cplusplus
}
#endif
#endif
