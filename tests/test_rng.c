/* test_rng.c — xoshiro256++, splitmix64 and the GSL wrapper (hdpsgd/rng.h):
 * published reference outputs, jumps, and moment checks of the Gaussian
 * sampler with tolerances from the standard errors; the double and float32 block
 * streams: their definitions rebuilt from scalar pieces, every SIMD kernel against
 * the generic one, moments, tails, chi-square and Kolmogorov-Smirnov tests. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"
#include "testutil.h"

/* splitmix64 from state 0: the first outputs of the authors' splitmix64.c
 * (prng.di.unimi.it), which is also the seeding of hdp_xoshiro_seed(0). */
static const uint64_t SPLITMIX0[4] = {UINT64_C(0xe220a8397b1dcdaf), UINT64_C(0x6e789e6aa1b965f4),
                                      UINT64_C(0x06c45d188009454f), UINT64_C(0xf88bb8a8724c81ec)};

static void splitmix_reference(void **state)
{
    (void)state;
    uint64_t x = 0;
    for (int i = 0; i < 4; i++)
        assert_true(hdp_splitmix64_next(&x) == SPLITMIX0[i]);
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 0);
    for (int i = 0; i < 4; i++)
        assert_true(g.s[i] == SPLITMIX0[i]);
}

/* xoshiro256++ from the state {1, 2, 3, 4}: values produced with the reference
 * implementation prng.di.unimi.it/xoshiro256plusplus.c (the test vector of
 * rand_xoshiro and other ports). */
static void xoshiro_reference(void **state)
{
    (void)state;
    static const uint64_t expected[10] = {
        UINT64_C(41943041),             UINT64_C(58720359),
        UINT64_C(3588806011781223),     UINT64_C(3591011842654386),
        UINT64_C(9228616714210784205),  UINT64_C(9973669472204895162),
        UINT64_C(14011001112246962877), UINT64_C(12406186145184390807),
        UINT64_C(15849039046786891736), UINT64_C(10450023813501588000)};
    hdp_xoshiro g = {{1, 2, 3, 4}};
    for (int i = 0; i < 10; i++)
        assert_true(hdp_xoshiro_next(&g) == expected[i]);
}

/* The jump from the state {0, 0, 0, 1}: state and first output as published
 * in the test data of an independent implementation (xoshiro-fortran). */
static void jump_reference(void **state)
{
    (void)state;
    hdp_xoshiro g = {{0, 0, 0, 1}};
    hdp_xoshiro_jump(&g);
    assert_true(g.s[0] == UINT64_C(0x934D05E8B2076310));
    assert_true(g.s[1] == UINT64_C(0xEABDD0BF76A1BE51));
    assert_true(g.s[2] == UINT64_C(0x75DD6A992ACCB1E8));
    assert_true(g.s[3] == UINT64_C(0xC660C602A7330187));
    assert_true(hdp_xoshiro_next(&g) == UINT64_C(0x88F9A31AFDB439F5));
}

/* The long jump (2^192 steps) from {0, 0, 0, 1} and {1, 2, 3, 4}: the states
 * computed independently as T^(2^192) s over GF(2), T the 256 x 256 transition
 * matrix of xoshiro256's linear engine raised by 192 squarings (a Python
 * script; the same method reproduces the published 2^128 jump above). */
static void long_jump_reference(void **state)
{
    (void)state;
    hdp_xoshiro g = {{0, 0, 0, 1}};
    hdp_xoshiro_long_jump(&g);
    assert_true(g.s[0] == UINT64_C(0x4aa11f0b3241cdbf));
    assert_true(g.s[1] == UINT64_C(0xb6a17239b35b197f));
    assert_true(g.s[2] == UINT64_C(0x504952572e3f844b));
    assert_true(g.s[3] == UINT64_C(0x2628df68616fd3a0));
    hdp_xoshiro h = {{1, 2, 3, 4}};
    hdp_xoshiro_long_jump(&h);
    assert_true(h.s[0] == UINT64_C(0x096a8eb71295a400));
    assert_true(h.s[1] == UINT64_C(0xdbf84991e50f4516));
    assert_true(h.s[2] == UINT64_C(0x534ee745810d2a0e));
    assert_true(h.s[3] == UINT64_C(0x31655ca1a2215bf1));
}

/* The jumps by their tables (rng.c) give the states of the engine stepped 256 times
 * (hdp_xoshiro_jump_stepped) from 2000 random states and the four unit vectors' neighbours */
static void jump_tables_match_stepping(void **state)
{
    (void)state;
    hdp_xoshiro src;
    hdp_xoshiro_seed(&src, 11);
    for (int k = 0; k < 2000; k++) {
        hdp_xoshiro g;
        for (int w = 0; w < 4; w++)
            g.s[w] = hdp_xoshiro_next(&src);
        if (k < 4) /* sparse states: one bit set, in each word */
            for (int w = 0; w < 4; w++)
                g.s[w] = w == k ? UINT64_C(1) << (17 * k) : 0;
        for (int lj = 0; lj < 2; lj++) {
            hdp_xoshiro a = g, b = g;
            if (lj)
                hdp_xoshiro_long_jump(&a);
            else
                hdp_xoshiro_jump(&a);
            hdp_xoshiro_jump_stepped(&b, lj);
            assert_memory_equal(a.s, b.s, sizeof a.s);
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Streams 0..3 (the base and its jumps) share no output among their first
 * 4096 each: the streams the Monte Carlo runs use differ. */
static void jumped_streams_differ(void **state)
{
    (void)state;
    enum { S = 4, L = 4096 };
    uint64_t *all = malloc(sizeof(uint64_t) * S * L);
    assert_non_null(all);
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 1);
    for (int s = 0; s < S; s++) {
        hdp_xoshiro h = g;
        for (int i = 0; i < L; i++)
            all[s * L + i] = hdp_xoshiro_next(&h);
        hdp_xoshiro_jump(&g);
    }
    qsort(all, S * L, sizeof(uint64_t), cmp_u64);
    for (int i = 1; i < S * L; i++)
        assert_true(all[i] != all[i - 1]);
    free(all);
}

/* The gsl_rng_type: get() is the upper 32 bits, get_double the upper 53 bits,
 * set() the splitmix64 seeding; the state is reachable through gsl_rng_state. */
static void gsl_wrapper(void **state)
{
    (void)state;
    gsl_rng *r = hdp_rng_alloc(0);
    assert_non_null(r);
    assert_string_equal(gsl_rng_name(r), "xoshiro256++");
    assert_true(gsl_rng_max(r) == 0xffffffffUL && gsl_rng_min(r) == 0);
    hdp_xoshiro ref;
    hdp_xoshiro_seed(&ref, 0);
    assert_memory_equal(hdp_rng_state(r), &ref, sizeof ref);
    for (int i = 0; i < 100; i++) {
        uint64_t v = hdp_xoshiro_next(&ref);
        assert_true(gsl_rng_get(r) == (unsigned long)(v >> 32));
        double u = gsl_rng_uniform(r);
        assert_true(u == (double)(hdp_xoshiro_next(&ref) >> 11) * 0x1.0p-53);
        assert_true(u >= 0 && u < 1);
    }
    gsl_rng_set(r, 12345);
    hdp_xoshiro_seed(&ref, 12345);
    assert_memory_equal(hdp_rng_state(r), &ref, sizeof ref);
    /* copying a stream in replays it */
    hdp_xoshiro saved = *hdp_rng_state(r);
    double a = gsl_ran_gaussian_ziggurat(r, 1.0);
    *hdp_rng_state(r) = saved;
    assert_true(gsl_ran_gaussian_ziggurat(r, 1.0) == a);
    gsl_rng_free(r);
}

/* The samplers: GSL's ziggurat driven by xoshiro256++ (which == 0), the
 * toolkit's inline ZIGNOR ziggurat hdp_rng_normal (which == 1) and the block
 * stream hdp_normals (which == 2, the one the Monte Carlo's steps use): mean 0, variance 1, kurtosis 3 on 10^7 draws, each within 4
 * standard errors (N(0,1): Var x = 1, Var x^2 = 2, Var x^4 = 105 - 9 = 96). */
static void moments_of(int which)
{
    const long N = 10000000;
    gsl_rng *r = hdp_rng_alloc(2026);
    assert_non_null(r);
    hdp_xoshiro *st = hdp_rng_state(r);
    hdp_normals blk;
    hdp_normals_init(&blk, st);
    long double s1 = 0, s2 = 0, s4 = 0;
    for (long i = 0; i < N; i++) {
        double x;
        if (which == 2)
            hdp_normals_fill(&blk, &x, 1);
        else
            x = which ? hdp_rng_normal(st) : gsl_ran_gaussian_ziggurat(r, 1.0);
        double x2 = x * x;
        s1 += x;
        s2 += x2;
        s4 += x2 * x2;
    }
    gsl_rng_free(r);
    double mean = (double)(s1 / N), m2 = (double)(s2 / N), m4 = (double)(s4 / N);
    double var = m2 - mean * mean;
    double kurt = m4 / (m2 * m2);
    double n = (double)N;
    print_message("mean %.3g (tol %.3g), var %.6f (tol %.3g), kurtosis %.5f (tol %.3g)\n", mean,
                  4 / sqrt(n), var, 4 * sqrt(2 / n), kurt, 4 * sqrt(96 / n));
    assert_true(fabs(mean) < 4.0 / sqrt(n));
    assert_true(fabs(var - 1.0) < 4.0 * sqrt(2.0 / n));
    assert_true(fabs(kurt - 3.0) < 4.0 * sqrt(96.0 / n));
}

static void gaussian_moments(void **state)
{
    (void)state;
    moments_of(0);
    moments_of(1);
    moments_of(2);
}

/* A sampler against the exact normal probabilities of 60 cells over [-6, 6]
 * plus the two tails, 2*10^7 draws: the chi-square statistic (cells with >= 20
 * expected) stays below df + 5 sqrt(2 df), five standard deviations of the
 * chi-square law. Also the tail |x| > R = 3.4426 (the ziggurat's special case)
 * against its probability within 4 standard errors. The draws come in blocks of
 * 1000 from next(ctx, out, 1000). */
static void chi_square_of(void (*next)(void *, double *, long), void *ctx)
{
    const long N = 20000000;
    const int cells = 60;
    const double lo = -6, w = 12.0 / cells;
    long count[62] = {0}, tail = 0;
    double buf[1000];
    for (long k = 0; k < N; k += 1000) {
        next(ctx, buf, 1000);
        for (int j = 0; j < 1000; j++) {
            double x = buf[j];
            int b = x < lo ? 0 : x >= -lo ? cells + 1 : 1 + (int)((x - lo) / w);
            if (b > cells) b = cells + 1;
            count[b]++;
            tail += fabs(x) > 3.442619855899;
        }
    }
    double chi = 0;
    int df = -1;
    for (int b = 0; b < cells + 2; b++) {
        double p = b == 0 ? gsl_cdf_ugaussian_P(lo)
                   : b == cells + 1 ? gsl_cdf_ugaussian_Q(-lo)
                   : gsl_cdf_ugaussian_P(lo + b * w) - gsl_cdf_ugaussian_P(lo + (b - 1) * w);
        double e = p * N;
        if (e < 20) continue;
        chi += (count[b] - e) * (count[b] - e) / e;
        df++;
    }
    print_message("chi-square %.1f with %d degrees of freedom\n", chi, df);
    assert_true(chi < df + 5 * sqrt(2.0 * df));
    double pt = 2 * gsl_cdf_ugaussian_Q(3.442619855899);
    assert_true(fabs(tail - pt * N) < 4 * sqrt(pt * (1 - pt) * N));
}

static void next_scalar(void *ctx, double *out, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = hdp_rng_normal(ctx);
}

static void next_block(void *ctx, double *out, long n) { hdp_normals_fill(ctx, out, n); }

static void fast_normal_distribution(void **state)
{
    (void)state;
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 99);
    chi_square_of(next_scalar, &g);
}

/* The block stream: its rejection code (a one-exponential wedge test) differs
 * from hdp_rng_normal's, so it gets the same test. */
static void block_normal_distribution(void **state)
{
    (void)state;
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 99);
    hdp_normals blk;
    hdp_normals_init(&blk, &g);
    chi_square_of(next_block, &blk);
}

/* The block stream is what rng.h says: position p takes lane p % 8's next output
 * (lane j = the run stream long-jumped j + 1 times) through the 512-layer fast test
 * with the 52-bit uniform, and a rejected position is finished on the rejection
 * stream (long-jumped 9 times), positions in order. Rebuilt here from the scalar
 * pieces, compared bit for bit over 2*10^5 positions (about 1600 rejections). */
static void block_stream_definition(void **state)
{
    (void)state;
    const long N = 200000;
    hdp_xoshiro run, lane[HDP_NLANES], slow;
    hdp_xoshiro_seed(&run, 7);
    hdp_xoshiro h = run;
    for (int j = 0; j < HDP_NLANES; j++) {
        hdp_xoshiro_long_jump(&h);
        lane[j] = h;
    }
    hdp_xoshiro_long_jump(&h);
    slow = h;
    hdp_normals blk;
    hdp_normals_init(&blk, &run);
    double *got = malloc(sizeof(double) * (size_t)N);
    assert_non_null(got);
    hdp_normals_fill(&blk, got, N);
    long rejected = 0;
    for (long p = 0; p < N; p++) {
        uint64_t r = hdp_xoshiro_next(&lane[p % HDP_NLANES]);
        int i = (int)(r & (HDP_ZIGB_LAYERS - 1));
        /* the uniform written out here, not through hdp_rng_u52: the definition */
        union { uint64_t u; double d; } v = {(r >> 12) | UINT64_C(0x3FF0000000000000)};
        double u = 2.0 * v.d - 3.0, want;
        if (fabs(u) < hdp_zigb_r[i]) {
            want = u * hdp_zigb_x[i];
        } else {
            want = hdp_rng_normal_block_slow(&slow, i, u);
            rejected++;
        }
        if (memcmp(&want, &got[p], sizeof want) != 0)
            fail_msg("position %ld: %.17g, expected %.17g", p, got[p], want);
    }
    print_message("%ld rejections in %ld positions\n", rejected, N);
    /* 1 - mean x_{i+1}/x_i = 0.80 % (+- 0.02 %) */
    assert_true(rejected > 0.0070 * N && rejected < 0.0090 * N);
    free(got);
}

/* The block stream's 512-layer tables: every layer has the area V of the constant
 * (base layer: the rectangle x_0 f(R) = V stands for the rectangle plus the tail), and
 * the top layer, which the recursion does not impose, closes: x_511 (1 - f(x_511)) = V
 * to 1e-11 relative (measured 1.4e-12: the limit of R in double precision through 511
 * steps of the recursion; a probability mass of 3e-15 misplaced). A wrong digit in R
 * or V leaves the top layer's area off by orders of magnitude more. */
static void block_tables_close(void **state)
{
    (void)state;
    hdp_rng_normal_tables();
    const int C = HDP_ZIGB_LAYERS;
    const double V = hdp_zig_block_area(), R = hdp_zigb_x[1];
    double f = exp(-0.5 * R * R);
    assert_true(fabs(hdp_zigb_x[0] * f - V) <= 1e-15 * V);
    assert_true(fabs(R * f + sqrt(M_PI / 2) * erfc(R / sqrt(2.0)) - V) <= 1e-13 * V);
    for (int i = 2; i < C; i++) {
        double layer = hdp_zigb_x[i - 1] *
                       (exp(-0.5 * hdp_zigb_x[i] * hdp_zigb_x[i]) -
                        exp(-0.5 * hdp_zigb_x[i - 1] * hdp_zigb_x[i - 1]));
        assert_true(fabs(layer - V) <= 1e-9 * V);
    }
    double top = hdp_zigb_x[C - 1] * (1.0 - exp(-0.5 * hdp_zigb_x[C - 1] * hdp_zigb_x[C - 1]));
    print_message("top layer %.17g against V = %.17g (relative %.2g)\n", top, V, fabs(top / V - 1));
    assert_true(fabs(top - V) <= 1e-11 * V);
    assert_true(hdp_zigb_x[C] == 0.0);
}

/* Every kernel the CPU has gives the same bits, however the stream is split
 * into fills (1, 3, 8, 13 and 1000 at a time against one fill of the whole). */
static void block_kernels_agree(void **state)
{
    (void)state;
    const long N = 300000;
    double *ref = malloc(sizeof(double) * (size_t)N), *got = malloc(sizeof(double) * (size_t)N);
    assert_non_null(ref);
    assert_non_null(got);
    hdp_xoshiro run;
    hdp_xoshiro_seed(&run, 11);
    hdp_normals blk;
    assert_true(hdp_normals_use(HDP_SIMD_GENERIC));
    hdp_normals_init(&blk, &run);
    hdp_normals_fill(&blk, ref, N);
    const hdp_simd kernels[] = {HDP_SIMD_GENERIC, HDP_SIMD_AVX2, HDP_SIMD_AVX512};
    const long pieces[] = {1, 3, 8, 13, 1000};
    int tested = 0;
    for (int k = 0; k < 3; k++) {
        if (!hdp_normals_use(kernels[k])) {
            print_message("kernel %d: not on this CPU\n", (int)kernels[k]);
            continue;
        }
        tested++;
        for (int q = 0; q < 5; q++) {
            hdp_normals_init(&blk, &run);
            for (long p = 0; p < N; p += pieces[q])
                hdp_normals_fill(&blk, got + p, p + pieces[q] <= N ? pieces[q] : N - p);
            assert_memory_equal(ref, got, sizeof(double) * (size_t)N);
        }
        print_message("kernel %s agrees\n", hdp_normals_kernel());
    }
    assert_true(tested >= 1);
    assert_true(hdp_normals_use(HDP_SIMD_AUTO));
    free(ref);
    free(got);
}

/* ---- the float32 stream (hdp_normals32) ---- */

/* The float32 stream is what rng.h says: block b takes rounds 2b and 2b + 1 of the eight lanes
 * (lane j = the run long-jumped j + 1 times), word m of a round = half m % 2 (low first) of lane
 * m / 2's output, and the words m of the two rounds, a and c, give positions 32 b + m and
 * 32 b + 16 + m: r cos(theta) and r sin(theta) with u = (fl(a) + 1) 2^-32, r = sqrt(-2 log u),
 * theta = (c >> 30) pi/2 + (pi/2)(((c >> 6) & 0xFFFFFF) 2^-24 - 1/2). Rebuilt in double from the
 * words over 4*10^5 positions: each float within 4 float ulps (2^-21 relative, measured
 * ~2^-22) of the exact value, or 2^-21 absolute where the exact value is below 1 (a value
 * near 0 has a tiny ulp). */
static void block32_stream_definition(void **state)
{
    (void)state;
    const long N = 400000;
    hdp_xoshiro run, lane[HDP_NLANES];
    hdp_xoshiro_seed(&run, 7);
    hdp_xoshiro h = run;
    for (int j = 0; j < HDP_NLANES; j++) {
        hdp_xoshiro_long_jump(&h);
        lane[j] = h;
    }
    hdp_normals32 blk;
    hdp_normals32_init(&blk, &run);
    float *got = malloc(sizeof(float) * (size_t)N);
    assert_non_null(got);
    hdp_normals32_fill(&blk, got, N);
    double worst = 0, biggest = 0;
    for (long b = 0; b < N / 32; b++) {
        uint64_t ra[HDP_NLANES], rc[HDP_NLANES];
        for (int j = 0; j < HDP_NLANES; j++)
            ra[j] = hdp_xoshiro_next(&lane[j]);
        for (int j = 0; j < HDP_NLANES; j++)
            rc[j] = hdp_xoshiro_next(&lane[j]);
        for (int m = 0; m < 16; m++) {
            uint32_t a = (uint32_t)(ra[m / 2] >> (32 * (m % 2)));
            uint32_t c = (uint32_t)(rc[m / 2] >> (32 * (m % 2)));
            double u = (double)((float)a + 1.0f) * 0x1p-32;
            double r = sqrt(-2.0 * log(u));
            double th = (double)(c >> 30) * M_PI / 2 +
                        M_PI / 2 * ((double)((c >> 6) & 0xFFFFFF) * 0x1p-24 - 0.5);
            double want[2] = {r * cos(th), r * sin(th)};
            float have[2] = {got[32 * b + m], got[32 * b + 16 + m]};
            for (int k = 0; k < 2; k++) {
                double err = fabs((double)have[k] - want[k]) / fmax(1.0, fabs(want[k]));
                if (!(err <= 0x1p-21))
                    fail_msg("position %ld: %.9g, exact %.12g", 32 * b + 16 * k + m,
                             (double)have[k], want[k]);
                worst = fmax(worst, err);
                biggest = fmax(biggest, fabs(want[k]));
            }
        }
    }
    print_message("float32 stream: largest error %.3g (2^%.1f) relative, largest |x| %.3f\n", worst,
                  log2(worst), biggest);
    free(got);
}

/* Every kernel gives the same bits, however the stream is split into fills. */
static void block32_kernels_agree(void **state)
{
    (void)state;
    const long N = 300000;
    float *ref = malloc(sizeof(float) * (size_t)N), *got = malloc(sizeof(float) * (size_t)N);
    assert_non_null(ref);
    assert_non_null(got);
    hdp_xoshiro run;
    hdp_xoshiro_seed(&run, 11);
    hdp_normals32 blk;
    assert_true(hdp_normals_use(HDP_SIMD_GENERIC));
    hdp_normals32_init(&blk, &run);
    hdp_normals32_fill(&blk, ref, N);
    const hdp_simd kernels[] = {HDP_SIMD_GENERIC, HDP_SIMD_AVX2, HDP_SIMD_AVX512};
    const long pieces[] = {1, 3, 16, 17, 784, 1000};
    int tested = 0;
    for (int k = 0; k < 3; k++) {
        if (!hdp_normals_use(kernels[k])) {
            print_message("kernel %d: not on this CPU\n", (int)kernels[k]);
            continue;
        }
        tested++;
        for (int q = 0; q < 6; q++) {
            hdp_normals32_init(&blk, &run);
            for (long p = 0; p < N; p += pieces[q])
                hdp_normals32_fill(&blk, got + p, p + pieces[q] <= N ? pieces[q] : N - p);
            assert_memory_equal(ref, got, sizeof(float) * (size_t)N);
        }
        print_message("kernel %s agrees\n", hdp_normals_kernel());
    }
    assert_true(tested >= 1);
    assert_true(hdp_normals_use(HDP_SIMD_AUTO));
    free(ref);
    free(got);
}

static void next_block32(void *ctx, double *out, long n)
{
    float buf[1000];
    for (long k = 0; k < n; k += 1000) {
        long m = n - k < 1000 ? n - k : 1000;
        hdp_normals32_fill(ctx, buf, m);
        for (long j = 0; j < m; j++)
            out[k + j] = buf[j];
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The float32 stream's law: mean, variance and kurtosis of 10^7 draws within 4 standard
 * errors; the chi-square test of chi_square_of on 2*10^7 draws (62 cells and the tail
 * beyond 3.44); the tails beyond 4 and 5 against their probabilities within 4 standard errors,
 * none beyond sqrt(64 ln 2) = 6.66 (u >= 2^-32); and the Kolmogorov-Smirnov distance of 10^6
 * draws to Phi below 1.95 / sqrt(n) (the 0.1 % critical value). */
static void block32_distribution(void **state)
{
    (void)state;
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 2026);
    hdp_normals32 blk;
    hdp_normals32_init(&blk, &g);
    const long N = 10000000;
    double *buf = malloc(sizeof(double) * 1000000);
    assert_non_null(buf);
    long double s1 = 0, s2 = 0, s4 = 0;
    long tail4 = 0, tail5 = 0, beyond = 0;
    for (long k = 0; k < N; k += 1000000) {
        next_block32(&blk, buf, 1000000);
        for (long j = 0; j < 1000000; j++) {
            double x = buf[j], x2 = x * x;
            s1 += x;
            s2 += x2;
            s4 += x2 * x2;
            tail4 += fabs(x) > 4.0;
            tail5 += fabs(x) > 5.0;
            beyond += fabs(x) > sqrt(64 * M_LN2);
        }
    }
    double n = (double)N, mean = (double)(s1 / N), m2 = (double)(s2 / N), m4 = (double)(s4 / N);
    double var = m2 - mean * mean, kurt = m4 / (m2 * m2);
    print_message("float32: mean %.3g, var %.6f, kurtosis %.5f, tails %ld (4), %ld (5)\n", mean,
                  var, kurt, tail4, tail5);
    assert_true(fabs(mean) < 4.0 / sqrt(n));
    assert_true(fabs(var - 1.0) < 4.0 * sqrt(2.0 / n));
    assert_true(fabs(kurt - 3.0) < 4.0 * sqrt(96.0 / n));
    double p4 = 2 * gsl_cdf_ugaussian_Q(4.0), p5 = 2 * gsl_cdf_ugaussian_Q(5.0);
    assert_true(fabs(tail4 - p4 * n) < 4 * sqrt(p4 * (1 - p4) * n));
    assert_true(beyond == 0);
    assert_true(fabs(tail5 - p5 * n) < 4 * sqrt(p5 * (1 - p5) * n) + 1);
    /* Kolmogorov-Smirnov on 10^6 fresh draws */
    const long M = 1000000;
    next_block32(&blk, buf, M);
    qsort(buf, (size_t)M, sizeof(double), cmp_double);
    double D = 0;
    for (long i = 0; i < M; i++) {
        double F = gsl_cdf_ugaussian_P(buf[i]);
        double a = fabs(F - (double)i / M), b = fabs((double)(i + 1) / M - F);
        D = fmax(D, fmax(a, b));
    }
    print_message("float32: Kolmogorov-Smirnov sqrt(n) D = %.3f (critical 1.95)\n", sqrt((double)M) * D);
    assert_true(sqrt((double)M) * D < 1.95);
    free(buf);
    hdp_xoshiro_seed(&g, 99);
    hdp_normals32_init(&blk, &g);
    chi_square_of(next_block32, &blk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(splitmix_reference),  cmocka_unit_test(xoshiro_reference),
        cmocka_unit_test(jump_reference),      cmocka_unit_test(jumped_streams_differ),
        cmocka_unit_test(gsl_wrapper),         cmocka_unit_test(gaussian_moments),
        cmocka_unit_test(fast_normal_distribution), cmocka_unit_test(long_jump_reference),
        cmocka_unit_test(jump_tables_match_stepping),
        cmocka_unit_test(block_normal_distribution), cmocka_unit_test(block_stream_definition),
        cmocka_unit_test(block_kernels_agree), cmocka_unit_test(block_tables_close),
        cmocka_unit_test(block32_stream_definition),
        cmocka_unit_test(block32_kernels_agree), cmocka_unit_test(block32_distribution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
