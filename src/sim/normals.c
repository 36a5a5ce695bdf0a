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
 *
 * The float32 stream of the real-row Monte Carlo (hdp_normals32, below) is Box-Muller on the
 * same lanes: no table and no rejection; its fused multiply-adds are written out (fmaf in the
 * generic code, the FMA intrinsics in the AVX2 and AVX-512 kernels), so it too gives the same
 * bits on every kernel.
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
/* one xoshiro256++ step of every lane (rng.c), its outputs into res */
static inline void xoshiro_round(uint64_t st[4][L], uint64_t res[L])
{
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
}

static long fill_generic(uint64_t st[4][L], double *out, long rounds, uint64_t *qpos,
                         uint64_t *qr)
{
    long q = 0;
    for (long b = 0; b < rounds; b++) {
        uint64_t res[L];
        xoshiro_round(st, res);
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

/* ---- the float32 stream (hdp_normals32): Box-Muller on pairs of 32-bit words ----
 * Each 64-bit output of a lane gives two 32-bit words, low half first: word m of a round is
 * half m % 2 of lane m / 2's output (the 32-bit elements of the eight lanes in register
 * order). Block b takes rounds 2b and 2b + 1: their words m, a_m and c_m, give positions
 * 32 b + m and 32 b + 16 + m, r cos(theta) and r sin(theta) of bm_pair below. No rejection:
 * every word is used, and the kernels compute the same IEEE operations (fused multiply-adds
 * written out as such) in the same order as bm_pair. */
#define B32 (4 * L) /* positions per block */
typedef void (*fill32_fn)(uint64_t st[4][L], float *out, long blocks);

/* Cephes' single-precision coefficients: log1p on [sqrt(1/2) - 1, sqrt(2) - 1] (logf.c) and
 * sin, cos on [-pi/4, pi/4] (sinf.c, cosf.c); ln 2 split in two */
static const float LOGP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                              -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                              2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
#define LN2_HI 0.693359375f
#define LN2_LO (-2.12194440e-4f)
#define SIN1 (-1.9515295891E-4f)
#define SIN2 8.3321608736E-3f
#define SIN3 (-1.6666654611E-1f)
#define COS1 2.443315711809948E-5f
#define COS2 (-1.388731625493765E-3f)
#define COS3 4.166664568298827E-2f
#define SQRTH 0.70710677f
#define HALF_PI 1.57079632679489661923f

static inline float f32_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static inline uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* log u for a normal float u in (0, 1]: u = 2^e m, m in [sqrt(1/2), sqrt 2), f = m - 1 exact,
 * log u = f - f^2/2 + f^3 P(f) + e ln 2 (Cephes' logf with fused multiply-adds) */
static inline float bm_log(float u)
{
    uint32_t b = bits_of(u);
    float e = (float)((int32_t)(b >> 23) - 126);
    float m = f32_of((b & 0x7FFFFFu) | 0x3F000000u); /* [1/2, 1) */
    float f = m - 1.0f;
    if (m < SQRTH) {
        e = e - 1.0f;
        f = (m + m) - 1.0f;
    }
    float z = f * f, p = LOGP[0];
    for (int k = 1; k < 9; k++)
        p = fmaf(p, f, LOGP[k]);
    float y = (f * z) * p;
    y = fmaf(e, LN2_LO, y);
    y = fmaf(-0.5f, z, y);
    return fmaf(e, LN2_HI, f + y);
}

/* The pair of normals of the words (a, c): u = (fl(a) + 1) 2^-32 in [2^-32, 1] (one rounding
 * to float each: fl(a), then + 1), r = sqrt(-2 log u) (at most 6.66); theta = q pi/2 + phi
 * with q = the top 2 bits of c and phi = (pi/2)(t - 1/2), t = bits 6-29 of c times 2^-24 (exact),
 * so theta is uniform up to a 2^-26 turn grid; cos phi and sin phi by the polynomials, turned
 * by q quarter turns (swaps and signs, exact). */
static inline void bm_pair(uint32_t a, uint32_t c, float *xc, float *xs)
{
    float u = ((float)a + 1.0f) * 0x1p-32f;
    float r = sqrtf(-2.0f * bm_log(u));
    float t = (float)((c >> 6) & 0xFFFFFFu) * 0x1p-24f - 0.5f;
    float phi = t * HALF_PI, z = phi * phi;
    float s = fmaf(fmaf(fmaf(SIN1, z, SIN2), z, SIN3) * z, phi, phi);
    float co = fmaf(fmaf(fmaf(COS1, z, COS2), z, COS3) * z, z, fmaf(-0.5f, z, 1.0f));
    uint32_t q = c >> 30;
    float cm = q & 1 ? s : co, sm = q & 1 ? co : s; /* the magnitudes after q quarter turns */
    float cq = (q + 1) & 2 ? -cm : cm, sq = q & 2 ? -sm : sm;
    *xc = r * cq;
    *xs = r * sq;
}

static void fill32_generic(uint64_t st[4][L], float *out, long blocks)
{
    for (long b = 0; b < blocks; b++, out += B32) {
        uint64_t ra[L], rc[L];
        xoshiro_round(st, ra);
        xoshiro_round(st, rc);
        for (int m = 0; m < 2 * L; m++)
            bm_pair((uint32_t)(ra[m / 2] >> (32 * (m % 2))), (uint32_t)(rc[m / 2] >> (32 * (m % 2))),
                    &out[m], &out[2 * L + m]);
    }
}

#if HDP_X86
/* The parts of bm_pair the two vector kernels share, for vectors of W = 256 or 512 bits (V their
 * float type): from f and e of bm_log the radius r = sqrt(-2 log u), and from the words c the
 * quarter-turn polynomials co = cos(phi), s = sin(phi). The same operations in the same order as
 * bm_pair. */
#define MMW(W, op) _mm##W##_##op
#define BM_RADIUS(W, V, f, e, r)                                                               \
    V z_ = MMW(W, mul_ps)(f, f), p_ = MMW(W, set1_ps)(LOGP[0]);                                \
    for (int k_ = 1; k_ < 9; k_++)                                                             \
        p_ = MMW(W, fmadd_ps)(p_, f, MMW(W, set1_ps)(LOGP[k_]));                               \
    V y_ = MMW(W, mul_ps)(MMW(W, mul_ps)(f, z_), p_);                                          \
    y_ = MMW(W, fmadd_ps)(e, MMW(W, set1_ps)(LN2_LO), y_);                                     \
    y_ = MMW(W, fmadd_ps)(MMW(W, set1_ps)(-0.5f), z_, y_);                                     \
    V lg_ = MMW(W, fmadd_ps)(e, MMW(W, set1_ps)(LN2_HI), MMW(W, add_ps)(f, y_));               \
    V r = MMW(W, sqrt_ps)(MMW(W, mul_ps)(MMW(W, set1_ps)(-2.0f), lg_))
#define BM_ANGLE(W, V, c, co, s)                                                               \
    V t_ = MMW(W, sub_ps)(                                                                     \
        MMW(W, mul_ps)(MMW(W, cvtepi32_ps)(MMW(W, and_si##W)(MMW(W, srli_epi32)(c, 6),         \
                                                             MMW(W, set1_epi32)(0xFFFFFF))),   \
                       MMW(W, set1_ps)(0x1p-24f)),                                             \
        MMW(W, set1_ps)(0.5f));                                                                \
    V phi_ = MMW(W, mul_ps)(t_, MMW(W, set1_ps)(HALF_PI)), zz_ = MMW(W, mul_ps)(phi_, phi_);   \
    V s = MMW(W, fmadd_ps)(MMW(W, fmadd_ps)(MMW(W, set1_ps)(SIN1), zz_, MMW(W, set1_ps)(SIN2)), \
                           zz_, MMW(W, set1_ps)(SIN3));                                        \
    s = MMW(W, fmadd_ps)(MMW(W, mul_ps)(s, zz_), phi_, phi_);                                  \
    V co = MMW(W, fmadd_ps)(MMW(W, fmadd_ps)(MMW(W, set1_ps)(COS1), zz_, MMW(W, set1_ps)(COS2)), \
                            zz_, MMW(W, set1_ps)(COS3));                                       \
    co = MMW(W, fmadd_ps)(MMW(W, mul_ps)(co, zz_), zz_,                                        \
                          MMW(W, fmadd_ps)(MMW(W, set1_ps)(-0.5f), zz_, MMW(W, set1_ps)(1.0f)))

/* bm_pair on eight pairs; fl(a) as fl(hi 2^16) + lo, one rounding (AVX2 converts signed
 * integers only) */
#define AVX2FMA __attribute__((target("avx2,fma")))
AVX2FMA static inline void bm8(__m256i a, __m256i c, float *xc, float *xs)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 fa = _mm256_add_ps(
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(a, 16)), _mm256_set1_ps(65536.0f)),
        _mm256_cvtepi32_ps(_mm256_and_si256(a, _mm256_set1_epi32(0xFFFF))));
    __m256 u = _mm256_mul_ps(_mm256_add_ps(fa, one), _mm256_set1_ps(0x1p-32f));
    /* bm_log */
    __m256i b = _mm256_castps_si256(u);
    __m256 e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(126)));
    __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x7FFFFF)),
                                                   _mm256_set1_epi32(0x3F000000)));
    __m256 lo = _mm256_cmp_ps(m, _mm256_set1_ps(SQRTH), _CMP_LT_OQ);
    e = _mm256_blendv_ps(e, _mm256_sub_ps(e, one), lo);
    __m256 f = _mm256_blendv_ps(_mm256_sub_ps(m, one), _mm256_sub_ps(_mm256_add_ps(m, m), one), lo);
    BM_RADIUS(256, __m256, f, e, r);
    BM_ANGLE(256, __m256, c, co, s);
    __m256i q = _mm256_srli_epi32(c, 30);
    __m256 odd = _mm256_castsi256_ps(_mm256_slli_epi32(q, 31)); /* sign bit set: q odd */
    __m256 cm = _mm256_blendv_ps(co, s, odd), sm = _mm256_blendv_ps(s, co, odd);
    __m256 cneg = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_srli_epi32(_mm256_add_epi32(q, _mm256_set1_epi32(1)), 1), 31));
    __m256 sneg = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(q, 1), 31));
    _mm256_storeu_ps(xc, _mm256_mul_ps(r, _mm256_xor_ps(cm, cneg)));
    _mm256_storeu_ps(xs, _mm256_mul_ps(r, _mm256_xor_ps(sm, sneg)));
}

AVX2FMA static inline __m256i xo_avx2(__m256i *s0, __m256i *s1, __m256i *s2, __m256i *s3)
{
    __m256i res = _mm256_add_epi64(rotl4(_mm256_add_epi64(*s0, *s3), 23), *s0);
    __m256i t = _mm256_slli_epi64(*s1, 17);
    *s2 = _mm256_xor_si256(*s2, *s0);
    *s3 = _mm256_xor_si256(*s3, *s1);
    *s1 = _mm256_xor_si256(*s1, *s2);
    *s0 = _mm256_xor_si256(*s0, *s3);
    *s2 = _mm256_xor_si256(*s2, t);
    *s3 = rotl4(*s3, 45);
    return res;
}

AVX2FMA static void fill32_avx2(uint64_t st[4][L], float *out, long blocks)
{
    __m256i s0[2], s1[2], s2[2], s3[2];
    for (int h = 0; h < 2; h++) {
        s0[h] = _mm256_loadu_si256((const __m256i *)&st[0][4 * h]);
        s1[h] = _mm256_loadu_si256((const __m256i *)&st[1][4 * h]);
        s2[h] = _mm256_loadu_si256((const __m256i *)&st[2][4 * h]);
        s3[h] = _mm256_loadu_si256((const __m256i *)&st[3][4 * h]);
    }
    for (long b = 0; b < blocks; b++, out += B32) {
        __m256i a[2], c[2];
        for (int h = 0; h < 2; h++)
            a[h] = xo_avx2(&s0[h], &s1[h], &s2[h], &s3[h]);
        for (int h = 0; h < 2; h++)
            c[h] = xo_avx2(&s0[h], &s1[h], &s2[h], &s3[h]);
        for (int h = 0; h < 2; h++)
            bm8(a[h], c[h], out + 8 * h, out + 2 * L + 8 * h);
    }
    for (int h = 0; h < 2; h++) {
        _mm256_storeu_si256((__m256i *)&st[0][4 * h], s0[h]);
        _mm256_storeu_si256((__m256i *)&st[1][4 * h], s1[h]);
        _mm256_storeu_si256((__m256i *)&st[2][4 * h], s2[h]);
        _mm256_storeu_si256((__m256i *)&st[3][4 * h], s3[h]);
    }
}

/* sixteen pairs per block in one vector each */
AVX512 static inline __m512i xo_avx512(__m512i *s0, __m512i *s1, __m512i *s2, __m512i *s3)
{
    __m512i res = _mm512_add_epi64(_mm512_rol_epi64(_mm512_add_epi64(*s0, *s3), 23), *s0);
    __m512i t = _mm512_slli_epi64(*s1, 17);
    *s2 = _mm512_xor_si512(*s2, *s0);
    *s3 = _mm512_xor_si512(*s3, *s1);
    *s1 = _mm512_xor_si512(*s1, *s2);
    *s0 = _mm512_xor_si512(*s0, *s3);
    *s2 = _mm512_xor_si512(*s2, t);
    *s3 = _mm512_rol_epi64(*s3, 45);
    return res;
}

AVX512 static void fill32_avx512(uint64_t st[4][L], float *out, long blocks)
{
    __m512i s0 = _mm512_loadu_si512(st[0]), s1 = _mm512_loadu_si512(st[1]);
    __m512i s2 = _mm512_loadu_si512(st[2]), s3 = _mm512_loadu_si512(st[3]);
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512i bit0 = _mm512_set1_epi32(1), bit1 = _mm512_set1_epi32(2);
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    for (long b = 0; b < blocks; b++, out += B32) {
        __m512i a = xo_avx512(&s0, &s1, &s2, &s3), c = xo_avx512(&s0, &s1, &s2, &s3);
        __m512 u = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepu32_ps(a), one),
                                 _mm512_set1_ps(0x1p-32f));
        /* bm_log */
        __m512i bu = _mm512_castps_si512(u);
        __m512 e = _mm512_cvtepi32_ps(
            _mm512_sub_epi32(_mm512_srli_epi32(bu, 23), _mm512_set1_epi32(126)));
        __m512 m = _mm512_castsi512_ps(_mm512_or_si512(
            _mm512_and_si512(bu, _mm512_set1_epi32(0x7FFFFF)), _mm512_set1_epi32(0x3F000000)));
        __mmask16 lo = _mm512_cmp_ps_mask(m, _mm512_set1_ps(SQRTH), _CMP_LT_OQ);
        e = _mm512_mask_sub_ps(e, lo, e, one);
        __m512 f = _mm512_mask_sub_ps(_mm512_sub_ps(m, one), lo, _mm512_add_ps(m, m), one);
        BM_RADIUS(512, __m512, f, e, r);
        BM_ANGLE(512, __m512, c, co, s);
        __m512i q = _mm512_srli_epi32(c, 30);
        __mmask16 odd = _mm512_test_epi32_mask(q, bit0);
        __m512 cm = _mm512_mask_blend_ps(odd, co, s), sm = _mm512_mask_blend_ps(odd, s, co);
        __mmask16 cneg = _mm512_test_epi32_mask(_mm512_add_epi32(q, bit0), bit1);
        __mmask16 sneg = _mm512_test_epi32_mask(q, bit1);
        cm = _mm512_castsi512_ps(_mm512_mask_xor_epi32(_mm512_castps_si512(cm), cneg,
                                                       _mm512_castps_si512(cm), sign));
        sm = _mm512_castsi512_ps(_mm512_mask_xor_epi32(_mm512_castps_si512(sm), sneg,
                                                       _mm512_castps_si512(sm), sign));
        _mm512_storeu_ps(out, _mm512_mul_ps(r, cm));
        _mm512_storeu_ps(out + 2 * L, _mm512_mul_ps(r, sm));
    }
    _mm512_storeu_si512(st[0], s0);
    _mm512_storeu_si512(st[1], s1);
    _mm512_storeu_si512(st[2], s2);
    _mm512_storeu_si512(st[3], s3);
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
    if (k == HDP_SIMD_AVX2) /* the float32 stream's AVX2 kernel fuses multiply-adds */
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
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
    hdp_xoshiro lane = *run;
    for (int j = 0; j < L; j++) {
        hdp_xoshiro_long_jump(&lane);
        for (int w = 0; w < 4; w++)
            g->s[w][j] = lane.s[w];
    }
    g->pos = B32;
}

void hdp_normals32_fill(hdp_normals32 *g, float *out, long n)
{
    while (n > 0 && g->pos < B32) {
        *out++ = g->buf[g->pos++];
        n--;
    }
    long blocks = n / B32;
    kernel32_fn(g->s, out, blocks);
    out += blocks * B32;
    n -= blocks * B32;
    if (n > 0) {
        kernel32_fn(g->s, g->buf, 1);
        memcpy(out, g->buf, sizeof(float) * (size_t)n);
        g->pos = (int)n;
    }
}
