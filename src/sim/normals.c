/*
 * normals.c — the block Gaussian stream of the Monte Carlo (hdpsgd/rng.h,
 * hdp_normals): eight xoshiro256++ lanes drawing ziggurat normals (512 layers
 * built as in Marsaglia and Tsang 2000, with ZIGNOR's disjoint index and uniform
 * bits, Doornik 2005; tables and rejection code in rng.c), eight at a time.
 *
 * Why: one run of `hdpsgd sim` at d = 1000, n = 10^5 needs 2 n d = 2*10^8
 * Gaussians (docs/theory.md §1: a fresh sample and the private noise per step), and
 * they are most of its cost. One scalar stream is a serial chain (about 6 ns per
 * draw on the 2 GHz machine of bench/RESULTS.md); eight independent lanes let the
 * SIMD unit do the xoshiro step, the 52-bit uniform, the two table lookups
 * (gathers), the acceptance test and the multiply for eight draws at once.
 *
 * Exactness and reproducibility: every kernel computes, for each lane, the same
 * IEEE operations as the generic C code (integer xoshiro step; the uniform
 * u = 2 [1.m] - 3, exact; the test |u| < x_{i+1}/x_i; x = u x_i, one rounding;
 * this file is compiled without fused multiply-adds), and the rejected positions
 * (about 0.8 %) are queued and finished in order by the same scalar
 * hdp_rng_normal_block_slow on the rejection stream, so the stream is bit for bit
 * the same on every machine (tests/test_rng.c compares the kernels the CPU has).
 */
#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HDP_X86 1
#else
#define HDP_X86 0
#endif

#define L HDP_NLANES

/* A kernel writes rounds * L values: the accepted fast draws in place and, for
 * each rejected one, its position and 64-bit output into the queue (in position
 * order), to be finished by finish() with the rejection stream. */
typedef long (*fill_fn)(uint64_t st[4][L], double *out, long rounds, uint64_t *qpos,
                        uint64_t *qr);

#define CHUNK 128 /* rounds per kernel call: the queue holds at most CHUNK * L entries (and
                   * L more: the AVX-512 kernel stores L at a time) */

/* the rejections of a chunk, in position order, from the rejection stream */
static void finish(hdp_xoshiro *slow, double *out, long q, const uint64_t *qpos,
                   const uint64_t *qr)
{
    for (long k = 0; k < q; k++) {
        uint64_t r = qr[k];
        int layer = (int)(r & (HDP_ZIGB_LAYERS - 1));
        out[qpos[k]] = hdp_rng_normal_block_slow(slow, layer, hdp_rng_u52(r));
    }
}

/* ---- generic C: the definition ---- */
static long fill_generic(uint64_t st[4][L], double *out, long rounds, uint64_t *qpos,
                         uint64_t *qr)
{
    long q = 0;
    for (long b = 0; b < rounds; b++) {
        uint64_t res[L];
        for (int j = 0; j < L; j++) { /* xoshiro256++ on every lane (rng.c) */
            uint64_t sum = st[0][j] + st[3][j];
            res[j] = ((sum << 23) | (sum >> 41)) + st[0][j];
            uint64_t t = st[1][j] << 17;
            st[2][j] ^= st[0][j];
            st[3][j] ^= st[1][j];
            st[1][j] ^= st[2][j];
            st[0][j] ^= st[3][j];
            st[2][j] ^= t;
            st[3][j] = (st[3][j] << 45) | (st[3][j] >> 19);
        }
        for (int j = 0; j < L; j++) {
            int i = (int)(res[j] & (HDP_ZIGB_LAYERS - 1));
            double u = hdp_rng_u52(res[j]);
            out[b * L + j] = u * hdp_zigb_x[i];
            if (!(fabs(u) < hdp_zigb_r[i])) {
                qpos[q] = (uint64_t)(b * L + j);
                qr[q++] = res[j];
            }
        }
    }
    return q;
}

#if HDP_X86
/* ---- AVX2: the eight lanes as two vectors of four ---- */
#define AVX2 __attribute__((target("avx2")))

AVX2 static inline __m256i rotl4(__m256i x, int k)
{
    return _mm256_or_si256(_mm256_slli_epi64(x, k), _mm256_srli_epi64(x, 64 - k));
}

AVX2 static long fill_avx2(uint64_t st[4][L], double *out, long rounds, uint64_t *qpos,
                           uint64_t *qr)
{
    __m256i s0[2], s1[2], s2[2], s3[2];
    for (int h = 0; h < 2; h++) {
        s0[h] = _mm256_loadu_si256((const __m256i *)&st[0][4 * h]);
        s1[h] = _mm256_loadu_si256((const __m256i *)&st[1][4 * h]);
        s2[h] = _mm256_loadu_si256((const __m256i *)&st[2][4 * h]);
        s3[h] = _mm256_loadu_si256((const __m256i *)&st[3][4 * h]);
    }
    const __m256i imask = _mm256_set1_epi64x(HDP_ZIGB_LAYERS - 1);
    const __m256i one = _mm256_set1_epi64x(0x3FF0000000000000LL);
    const __m256d two = _mm256_set1_pd(2.0), three = _mm256_set1_pd(3.0);
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    long q = 0;
    for (long b = 0; b < rounds; b++) {
        for (int h = 0; h < 2; h++) {
            __m256i res = _mm256_add_epi64(rotl4(_mm256_add_epi64(s0[h], s3[h]), 23), s0[h]);
            __m256i t = _mm256_slli_epi64(s1[h], 17);
            s2[h] = _mm256_xor_si256(s2[h], s0[h]);
            s3[h] = _mm256_xor_si256(s3[h], s1[h]);
            s1[h] = _mm256_xor_si256(s1[h], s2[h]);
            s0[h] = _mm256_xor_si256(s0[h], s3[h]);
            s2[h] = _mm256_xor_si256(s2[h], t);
            s3[h] = rotl4(s3[h], 45);
            __m256i idx = _mm256_and_si256(res, imask);
            __m256d u = _mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(res, 12), one));
            u = _mm256_sub_pd(_mm256_mul_pd(u, two), three);
            __m256d lim = _mm256_i64gather_pd(hdp_zigb_r, idx, 8);
            __m256d ok = _mm256_cmp_pd(_mm256_and_pd(u, absmask), lim, _CMP_LT_OQ);
            _mm256_storeu_pd(out + b * L + 4 * h,
                             _mm256_mul_pd(u, _mm256_i64gather_pd(hdp_zigb_x, idx, 8)));
            int bad = ~_mm256_movemask_pd(ok) & 0xF;
            if (__builtin_expect(bad != 0, 0)) {
                uint64_t r[4];
                _mm256_storeu_si256((__m256i *)r, res);
                for (int j = 0; j < 4; j++)
                    if (bad & (1 << j)) {
                        qpos[q] = (uint64_t)(b * L + 4 * h + j);
                        qr[q++] = r[j];
                    }
            }
        }
    }
    for (int h = 0; h < 2; h++) {
        _mm256_storeu_si256((__m256i *)&st[0][4 * h], s0[h]);
        _mm256_storeu_si256((__m256i *)&st[1][4 * h], s1[h]);
        _mm256_storeu_si256((__m256i *)&st[2][4 * h], s2[h]);
        _mm256_storeu_si256((__m256i *)&st[3][4 * h], s3[h]);
    }
    return q;
}

/* ---- AVX-512: the eight lanes in one vector; rejections queued without branches (qpos and
 * qr need L entries of slack past the last rejection) ---- */
#define AVX512 __attribute__((target("avx512f")))

AVX512 static long fill_avx512(uint64_t st[4][L], double *out, long rounds, uint64_t *qpos,
                               uint64_t *qr)
{
    __m512i s0 = _mm512_loadu_si512(st[0]), s1 = _mm512_loadu_si512(st[1]);
    __m512i s2 = _mm512_loadu_si512(st[2]), s3 = _mm512_loadu_si512(st[3]);
    const __m512i imask = _mm512_set1_epi64(HDP_ZIGB_LAYERS - 1);
    const __m512i one = _mm512_set1_epi64(0x3FF0000000000000LL);
    const __m512d two = _mm512_set1_pd(2.0), three = _mm512_set1_pd(3.0);
    __m512i pos = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i step = _mm512_set1_epi64(L);
    long q = 0;
    for (long b = 0; b < rounds; b++) {
        __m512i res = _mm512_add_epi64(_mm512_rol_epi64(_mm512_add_epi64(s0, s3), 23), s0);
        __m512i t = _mm512_slli_epi64(s1, 17);
        s2 = _mm512_xor_si512(s2, s0);
        s3 = _mm512_xor_si512(s3, s1);
        s1 = _mm512_xor_si512(s1, s2);
        s0 = _mm512_xor_si512(s0, s3);
        s2 = _mm512_xor_si512(s2, t);
        s3 = _mm512_rol_epi64(s3, 45);
        __m512i idx = _mm512_and_si512(res, imask);
        __m512d u = _mm512_castsi512_pd(_mm512_or_si512(_mm512_srli_epi64(res, 12), one));
        u = _mm512_sub_pd(_mm512_mul_pd(u, two), three);
        __m512d lim = _mm512_i64gather_pd(idx, hdp_zigb_r, 8);
        __mmask8 bad = _mm512_cmp_pd_mask(_mm512_abs_pd(u), lim, _CMP_NLT_UQ);
        _mm512_storeu_pd(out + b * L, _mm512_mul_pd(u, _mm512_i64gather_pd(idx, hdp_zigb_x, 8)));
        /* compress in a register, then a full store (the queue has L entries of slack):
         * the memory form of vpcompressq is microcoded on AMD Zen 4, about 3x slower for
         * the whole run (bench/RESULTS.md, 2026-11-23; not re-measured on Intel) */
        _mm512_storeu_si512(qpos + q, _mm512_maskz_compress_epi64(bad, pos));
        _mm512_storeu_si512(qr + q, _mm512_maskz_compress_epi64(bad, res));
        q += __builtin_popcount(bad);
        pos = _mm512_add_epi64(pos, step);
    }
    _mm512_storeu_si512(st[0], s0);
    _mm512_storeu_si512(st[1], s1);
    _mm512_storeu_si512(st[2], s2);
    _mm512_storeu_si512(st[3], s3);
    return q;
}
#endif

/* ---- the float32 stream (hdp_normals32): each 64-bit output of a lane gives two 32-bit
 * words, low half first; position 16 b + m of round b takes word m % 2 of lane m / 2's
 * output (the 32-bit elements of the eight lanes in register order). A word w: layer
 * w & 1023 of a 1024-layer ziggurat, u = hdp_rng_u22(w) (the top 22 bits), fast test
 * |u| < hdp_zigf_r[layer], x = u hdp_zigf_x[layer] (one float rounding); the rejected ones
 * (0.4 %) are queued as (position, word). */
#define L32 (2 * L)
typedef long (*fill32_fn)(uint64_t st[4][L], float *out, long rounds, uint32_t *qpos,
                          uint32_t *qw);

static long fill32_generic(uint64_t st[4][L], float *out, long rounds, uint32_t *qpos,
                           uint32_t *qw)
{
    long q = 0;
    for (long b = 0; b < rounds; b++) {
        uint64_t res[L];
        for (int j = 0; j < L; j++) {
            uint64_t sum = st[0][j] + st[3][j];
            res[j] = ((sum << 23) | (sum >> 41)) + st[0][j];
            uint64_t t = st[1][j] << 17;
            st[2][j] ^= st[0][j];
            st[3][j] ^= st[1][j];
            st[1][j] ^= st[2][j];
            st[0][j] ^= st[3][j];
            st[2][j] ^= t;
            st[3][j] = (st[3][j] << 45) | (st[3][j] >> 19);
        }
        for (int m = 0; m < L32; m++) {
            uint32_t w = (uint32_t)(res[m / 2] >> (32 * (m % 2)));
            int i = (int)(w & (HDP_ZIGF_LAYERS - 1));
            float u = hdp_rng_u22(w);
            out[b * L32 + m] = u * hdp_zigf_x[i];
            if (!(fabsf(u) < hdp_zigf_r[i])) {
                qpos[q] = (uint32_t)(b * L32 + m);
                qw[q++] = w;
            }
        }
    }
    return q;
}

#if HDP_X86
AVX2 static long fill32_avx2(uint64_t st[4][L], float *out, long rounds, uint32_t *qpos,
                             uint32_t *qw)
{
    __m256i s0[2], s1[2], s2[2], s3[2];
    for (int h = 0; h < 2; h++) {
        s0[h] = _mm256_loadu_si256((const __m256i *)&st[0][4 * h]);
        s1[h] = _mm256_loadu_si256((const __m256i *)&st[1][4 * h]);
        s2[h] = _mm256_loadu_si256((const __m256i *)&st[2][4 * h]);
        s3[h] = _mm256_loadu_si256((const __m256i *)&st[3][4 * h]);
    }
    const __m256i imask = _mm256_set1_epi32(HDP_ZIGF_LAYERS - 1);
    const __m256i one = _mm256_set1_epi32(0x3F800000);
    const __m256 two = _mm256_set1_ps(2.0f), three = _mm256_set1_ps(3.0f);
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    long q = 0;
    for (long b = 0; b < rounds; b++) {
        for (int h = 0; h < 2; h++) {
            __m256i res = _mm256_add_epi64(rotl4(_mm256_add_epi64(s0[h], s3[h]), 23), s0[h]);
            __m256i t = _mm256_slli_epi64(s1[h], 17);
            s2[h] = _mm256_xor_si256(s2[h], s0[h]);
            s3[h] = _mm256_xor_si256(s3[h], s1[h]);
            s1[h] = _mm256_xor_si256(s1[h], s2[h]);
            s0[h] = _mm256_xor_si256(s0[h], s3[h]);
            s2[h] = _mm256_xor_si256(s2[h], t);
            s3[h] = rotl4(s3[h], 45);
            __m256i idx = _mm256_and_si256(res, imask);
            __m256 u = _mm256_castsi256_ps(
                _mm256_or_si256(_mm256_slli_epi32(_mm256_srli_epi32(res, 10), 1), one));
            u = _mm256_sub_ps(_mm256_mul_ps(u, two), three);
            __m256 lim = _mm256_i32gather_ps(hdp_zigf_r, idx, 4);
            __m256 ok = _mm256_cmp_ps(_mm256_and_ps(u, absmask), lim, _CMP_LT_OQ);
            _mm256_storeu_ps(out + b * L32 + 8 * h,
                             _mm256_mul_ps(u, _mm256_i32gather_ps(hdp_zigf_x, idx, 4)));
            int bad = ~_mm256_movemask_ps(ok) & 0xFF;
            if (__builtin_expect(bad != 0, 0)) {
                uint32_t r[8];
                _mm256_storeu_si256((__m256i *)r, res);
                for (int j = 0; j < 8; j++)
                    if (bad & (1 << j)) {
                        qpos[q] = (uint32_t)(b * L32 + 8 * h + j);
                        qw[q++] = r[j];
                    }
            }
        }
    }
    for (int h = 0; h < 2; h++) {
        _mm256_storeu_si256((__m256i *)&st[0][4 * h], s0[h]);
        _mm256_storeu_si256((__m256i *)&st[1][4 * h], s1[h]);
        _mm256_storeu_si256((__m256i *)&st[2][4 * h], s2[h]);
        _mm256_storeu_si256((__m256i *)&st[3][4 * h], s3[h]);
    }
    return q;
}

/* sixteen floats per round in one vector; rejections compressed in a register and stored
 * whole (L32 entries of slack), as in fill_avx512 */
AVX512 static long fill32_avx512(uint64_t st[4][L], float *out, long rounds, uint32_t *qpos,
                                 uint32_t *qw)
{
    __m512i s0 = _mm512_loadu_si512(st[0]), s1 = _mm512_loadu_si512(st[1]);
    __m512i s2 = _mm512_loadu_si512(st[2]), s3 = _mm512_loadu_si512(st[3]);
    const __m512i imask = _mm512_set1_epi32(HDP_ZIGF_LAYERS - 1);
    const __m512i one = _mm512_set1_epi32(0x3F800000);
    const __m512 two = _mm512_set1_ps(2.0f), three = _mm512_set1_ps(3.0f);
    __m512i pos = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i step = _mm512_set1_epi32(L32);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    long q = 0;
    for (long b = 0; b < rounds; b++) {
        __m512i res = _mm512_add_epi64(_mm512_rol_epi64(_mm512_add_epi64(s0, s3), 23), s0);
        __m512i t = _mm512_slli_epi64(s1, 17);
        s2 = _mm512_xor_si512(s2, s0);
        s3 = _mm512_xor_si512(s3, s1);
        s1 = _mm512_xor_si512(s1, s2);
        s0 = _mm512_xor_si512(s0, s3);
        s2 = _mm512_xor_si512(s2, t);
        s3 = _mm512_rol_epi64(s3, 45);
        __m512i idx = _mm512_and_si512(res, imask);
        __m512 u = _mm512_castsi512_ps(
            _mm512_or_si512(_mm512_slli_epi32(_mm512_srli_epi32(res, 10), 1), one));
        u = _mm512_sub_ps(_mm512_mul_ps(u, two), three);
        /* one 64-bit gather of (x_i, r_i) per position, 2 x 8: half the elements of two
         * 32-bit gathers (a gather costs per element on AMD Zen 4) */
        __m512 p0 = _mm512_castsi512_ps(
            _mm512_i32gather_epi64(_mm512_castsi512_si256(idx), hdp_zigf_xr, 8));
        __m512 p1 = _mm512_castsi512_ps(
            _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(idx, 1), hdp_zigf_xr, 8));
        __m512 xi = _mm512_permutex2var_ps(p0, even, p1);
        __m512 lim = _mm512_permutex2var_ps(p0, odd, p1);
        __mmask16 bad = _mm512_cmp_ps_mask(_mm512_abs_ps(u), lim, _CMP_NLT_UQ);
        _mm512_storeu_ps(out + b * L32, _mm512_mul_ps(u, xi));
        _mm512_storeu_si512(qpos + q, _mm512_maskz_compress_epi32(bad, pos));
        _mm512_storeu_si512(qw + q, _mm512_maskz_compress_epi32(bad, res));
        q += __builtin_popcount(bad);
        pos = _mm512_add_epi32(pos, step);
    }
    _mm512_storeu_si512(st[0], s0);
    _mm512_storeu_si512(st[1], s1);
    _mm512_storeu_si512(st[2], s2);
    _mm512_storeu_si512(st[3], s3);
    return q;
}
#endif

/* ---- kernel choice ---- */

static const char *const NAMES[] = {"auto", "generic", "avx2", "avx512"};
static fill_fn kernel_fn = fill_generic;
static fill32_fn kernel32_fn = fill32_generic;
static hdp_simd kernel_id = HDP_SIMD_GENERIC;
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

static int cpu_has(hdp_simd k)
{
#if HDP_X86
    __builtin_cpu_init();
    if (k == HDP_SIMD_AVX2)
        return __builtin_cpu_supports("avx2");
    if (k == HDP_SIMD_AVX512)
        return __builtin_cpu_supports("avx512f");
#endif
    return k == HDP_SIMD_GENERIC;
}

static void set_kernel(hdp_simd k)
{
#if HDP_X86
    kernel_fn = k == HDP_SIMD_AVX512 ? fill_avx512 : k == HDP_SIMD_AVX2 ? fill_avx2 : fill_generic;
    kernel32_fn = k == HDP_SIMD_AVX512 ? fill32_avx512
                  : k == HDP_SIMD_AVX2 ? fill32_avx2
                                       : fill32_generic;
#else
    kernel_fn = fill_generic;
    kernel32_fn = fill32_generic;
#endif
    kernel_id = k;
}

static hdp_simd best_kernel(void)
{
    return cpu_has(HDP_SIMD_AVX512) ? HDP_SIMD_AVX512
           : cpu_has(HDP_SIMD_AVX2) ? HDP_SIMD_AVX2
                                    : HDP_SIMD_GENERIC;
}

static void choose_kernel(void)
{
    set_kernel(best_kernel()); /* the program may choose another (hdp_normals_use) */
}

int hdp_simd_parse(const char *name, hdp_simd *kernel)
{
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, NAMES[i]) == 0) {
            if (kernel)
                *kernel = (hdp_simd)i;
            return 1;
        }
    return 0;
}

int hdp_normals_use(hdp_simd kernel)
{
    pthread_once(&kernel_once, choose_kernel);
    if (kernel == HDP_SIMD_AUTO)
        kernel = best_kernel();
    if (!cpu_has(kernel))
        return 0;
    set_kernel(kernel);
    return 1;
}

const char *hdp_normals_kernel(void)
{
    pthread_once(&kernel_once, choose_kernel);
    return NAMES[kernel_id];
}

/* ---- the stream ---- */

void hdp_normals_init(hdp_normals *g, const hdp_xoshiro *run)
{
    if (!g || !run)
        return;
    pthread_once(&kernel_once, choose_kernel);
    hdp_rng_normal_tables();
    hdp_xoshiro lane = *run;
    for (int j = 0; j < L; j++) {
        hdp_xoshiro_long_jump(&lane);
        for (int w = 0; w < 4; w++)
            g->s[w][j] = lane.s[w];
    }
    hdp_xoshiro_long_jump(&lane);
    g->slow = lane;
    g->pos = L;
}

/* whole rounds into out, CHUNK rounds per kernel call */
static void rounds_into(hdp_normals *g, double *out, long rounds)
{
    uint64_t qpos[CHUNK * L + L], qr[CHUNK * L + L]; /* + L: the AVX-512 kernel's full stores */
    while (rounds > 0) {
        long r = rounds < CHUNK ? rounds : CHUNK;
        long q = kernel_fn(g->s, out, r, qpos, qr);
        finish(&g->slow, out, q, qpos, qr);
        out += r * L;
        rounds -= r;
    }
}

void hdp_normals_fill(hdp_normals *g, double *out, long n)
{
    while (n > 0 && g->pos < L) { /* the rest of the last round */
        *out++ = g->buf[g->pos++];
        n--;
    }
    long rounds = n / L;
    rounds_into(g, out, rounds);
    out += rounds * L;
    n -= rounds * L;
    if (n > 0) {
        rounds_into(g, g->buf, 1);
        memcpy(out, g->buf, sizeof(double) * (size_t)n);
        g->pos = (int)n;
    }
}

/* ---- the float32 stream ---- */

void hdp_normals32_init(hdp_normals32 *g, const hdp_xoshiro *run)
{
    if (!g || !run)
        return;
    pthread_once(&kernel_once, choose_kernel);
    hdp_rng_normal_tables();
    hdp_xoshiro lane = *run;
    for (int j = 0; j < L; j++) {
        hdp_xoshiro_long_jump(&lane);
        for (int w = 0; w < 4; w++)
            g->s[w][j] = lane.s[w];
    }
    hdp_xoshiro_long_jump(&lane);
    g->slow = lane;
    g->pos = L32;
}

float hdp_rng_normal32_slow(hdp_xoshiro *g, uint32_t w)
{
    int i = (int)(w & (HDP_ZIGF_LAYERS - 1));
    double u = hdp_rng_u22(w);
    if (fabs(u) < hdp_zigf_rd[i]) /* in the rectangle: hdp_zigf_r is rounded down */
        return (float)(u * hdp_zigf_xd[i]);
    return (float)hdp_rng_normal_f32_slow(g, i, u);
}

#define CHUNK32 64

static void rounds32_into(hdp_normals32 *g, float *out, long rounds)
{
    uint32_t qpos[CHUNK32 * L32 + L32], qw[CHUNK32 * L32 + L32];
    while (rounds > 0) {
        long r = rounds < CHUNK32 ? rounds : CHUNK32;
        long q = kernel32_fn(g->s, out, r, qpos, qw);
        for (long k = 0; k < q; k++)
            out[qpos[k]] = hdp_rng_normal32_slow(&g->slow, qw[k]);
        out += r * L32;
        rounds -= r;
    }
}

void hdp_normals32_fill(hdp_normals32 *g, float *out, long n)
{
    while (n > 0 && g->pos < L32) {
        *out++ = g->buf[g->pos++];
        n--;
    }
    long rounds = n / L32;
    rounds32_into(g, out, rounds);
    out += rounds * L32;
    n -= rounds * L32;
    if (n > 0) {
        rounds32_into(g, g->buf, 1);
        memcpy(out, g->buf, sizeof(float) * (size_t)n);
        g->pos = (int)n;
    }
}
