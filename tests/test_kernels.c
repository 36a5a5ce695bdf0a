/* test_kernels.c — the Monte Carlo's O(d) loops (src/sim/mc_kernels.c) give the same bits
 * in every build: the library's functions (on x86-64 the AVX-512 or AVX2 clone the CPU
 * selects at load time) against a baseline build of the same source compiled into this
 * test (no clones, -ffp-contract=off, as the library), on lengths that exercise the
 * 8-wide body and every tail length, over inputs of mixed signs and scales. Likewise the
 * risk ODE's DOP853 (src/core/ode_erk.c, issue 20). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"
#include "sim/mc_internal.h"
#include "core/ode_erk.h"
#include "testutil.h"

/* the same source under other names, built for the baseline only */
#define HDP_MC_KERNELS_BASELINE
#define hdp_mc_sample_dot base_sample_dot
#define hdp_mc_axpby base_axpby
#define hdp_mc_sde_step base_sde_step
#define hdp_mc_dot base_dot
#define hdp_mc_axpy base_axpy
#define hdp_mc_dot_f32 base_dot_f32
#define hdp_mc_axpy_f32 base_axpy_f32
#define hdp_mc_vec_alloc base_vec_alloc
#include "sim/mc_kernels.c"
#undef hdp_mc_sample_dot
#undef hdp_mc_axpby
#undef hdp_mc_sde_step
#undef hdp_mc_dot
#undef hdp_mc_axpy
#undef hdp_mc_dot_f32
#undef hdp_mc_axpy_f32
#undef hdp_mc_vec_alloc

/* the ODE's DOP853 pass (issue 20), likewise */
#define HDP_ODE_ERK_BASELINE
#define hdp_erk_solve base_erk_solve
#include "core/ode_erk.c"
#undef hdp_erk_solve
#include "hdpsgd/spectrum.h"

static void fill(hdp_xoshiro *g, double *v, long d, double scale)
{
    for (long i = 0; i < d; i++)
        v[i] = scale * hdp_rng_normal(g) * exp(3.0 * hdp_rng_normal(g));
}

static void same_bits(void **state)
{
    (void)state;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    print_message("CPU: avx512f %d, avx2 %d\n", __builtin_cpu_supports("avx512f") != 0,
                  __builtin_cpu_supports("avx2") != 0);
#endif
    const long lengths[] = {1, 7, 8, 9, 15, 16, 17, 63, 64, 1000, 1001, 4099};
    hdp_xoshiro g;
    hdp_xoshiro_seed(&g, 5);
    for (size_t t = 0; t < sizeof lengths / sizeof lengths[0]; t++) {
        long d = lengths[t];
        size_t bytes = sizeof(double) * (size_t)d;
        double *sl = malloc(bytes), *z = malloc(bytes), *z2 = malloc(bytes), *e = malloc(bytes);
        double *x1 = malloc(bytes), *x2 = malloc(bytes), *e1 = malloc(bytes), *e2 = malloc(bytes);
        double *lam = malloc(bytes);
        assert_true(sl && z && z2 && e && x1 && x2 && e1 && e2 && lam);
        fill(&g, sl, d, 1.0);
        fill(&g, z, d, 1.0);
        fill(&g, z2, d, 1.0);
        fill(&g, e, d, 0.1);
        for (long i = 0; i < d; i++) {
            sl[i] = fabs(sl[i]);
            lam[i] = sl[i] * sl[i];
        }
        double dot1, xx1, dot2, xx2;
        hdp_mc_sample_dot(sl, z, e, x1, d, &dot1, &xx1);
        base_sample_dot(sl, z, e, x2, d, &dot2, &xx2);
        assert_memory_equal(x1, x2, bytes);
        assert_memory_equal(&dot1, &dot2, sizeof dot1);
        assert_memory_equal(&xx1, &xx2, sizeof xx1);
        memcpy(e1, e, bytes);
        memcpy(e2, e, bytes);
        hdp_mc_axpby(e1, -0.37, x1, 1.3e-2, z, d);
        base_axpby(e2, -0.37, x2, 1.3e-2, z, d);
        assert_memory_equal(e1, e2, bytes);
        /* the finite training set's kernels (src/sim/finite.c) */
        double p1 = hdp_mc_dot(x1, e, d), p2 = base_dot(x2, e, d);
        assert_memory_equal(&p1, &p2, sizeof p1);
        hdp_mc_axpy(e1, 0.71, z2, d);
        base_axpy(e2, 0.71, z2, d);
        assert_memory_equal(e1, e2, bytes);
        /* their float32-row forms (a data set's rows stored as float32): the same bits in
         * both builds, and equal to the double kernels on the rows converted */
        float *xf = malloc(sizeof(float) * (size_t)d);
        double *xd = malloc(bytes);
        assert_true(xf && xd);
        for (long i = 0; i < d; i++) {
            xf[i] = (float)z2[i];
            xd[i] = (double)xf[i];
        }
        double f1 = hdp_mc_dot_f32(xf, e, d), f2 = base_dot_f32(xf, e, d);
        double f3 = hdp_mc_dot(xd, e, d);
        assert_memory_equal(&f1, &f2, sizeof f1);
        assert_memory_equal(&f1, &f3, sizeof f1);
        double *e3 = malloc(bytes);
        assert_true(e3 != NULL);
        memcpy(e3, e1, bytes);
        hdp_mc_axpy_f32(e1, -0.43, xf, d);
        base_axpy_f32(e2, -0.43, xf, d);
        hdp_mc_axpy(e3, -0.43, xd, d);
        assert_memory_equal(e1, e2, bytes);
        assert_memory_equal(e1, e3, bytes);
        free(xf), free(xd), free(e3);
        for (int with_q = 0; with_q < 2; with_q++) {
            double s1 = hdp_mc_sde_step(e1, lam, sl, 0.01, 0.2, z, 0.05, with_q ? z2 : NULL, d);
            double s2 = base_sde_step(e2, lam, sl, 0.01, 0.2, z, 0.05, with_q ? z2 : NULL, d);
            assert_memory_equal(e1, e2, bytes);
            assert_memory_equal(&s1, &s2, sizeof s1);
        }
        /* and the sums are right: against a long double sum, to rounding */
        long double ref = 0, refxx = 0;
        for (long i = 0; i < d; i++) {
            ref += (long double)x1[i] * e[i];
            refxx += (long double)x1[i] * x1[i];
        }
        long double mag = 0;
        for (long i = 0; i < d; i++)
            mag += fabsl((long double)x1[i] * e[i]);
        assert_true(fabsl(dot1 - ref) <= 1e-13L * mag);
        assert_true(fabsl(xx1 - refxx) <= 1e-13L * refxx);
        assert_true(fabsl(p1 - ref) <= 1e-13L * mag);
        free(sl), free(z), free(z2), free(e), free(x1), free(x2), free(e1), free(e2), free(lam);
    }
}

/* DOP853 on the bins and on the bounds (src/core/ode_erk.c): the library's clone for this CPU
 * and the baseline build give the same bits (1003 bins: a tail of three after the blocks of
 * eight). */
static void ode_erk_same_bits(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=1003", "data.gamma=0.01", "clip.c=0.5", "privacy.rho=1", NULL);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_spectrum sp;
    assert_int_equal(hdp_spectrum_build(&m, &sp, &err), HDP_OK);
    hdp_risk_ode o;
    assert_int_equal(hdp_rode_init(&o, &m, &sp, NULL, &err), HDP_OK);
    o.R0 = 0.5;
    enum { PTS = 11 };
    for (int bounds = 0; bounds < 2; bounds++) {
        hdp_erk_problem p = {&o, m.rtol, m.atol, m.max_steps, bounds};
        double r[2][3][PTS];
        memset(r, 0, sizeof r);
        hdp_erk_out a = {r[0][0], r[0][1], r[0][2], 0, 0, 0, 0, NULL};
        hdp_erk_out b = {r[1][0], r[1][1], r[1][2], 0, 0, 0, 0, NULL};
        assert_int_equal(hdp_erk_solve(&p, PTS, &a), 0);
        assert_int_equal(base_erk_solve(&p, PTS, &b), 0);
        assert_true(a.steps > 10 && a.steps == b.steps && a.rhs_evals == b.rhs_evals);
        assert_memory_equal(r[0], r[1], sizeof r[0]);
    }
    hdp_rode_free(&o);
    hdp_spectrum_free(&sp);
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(same_bits),
                                       cmocka_unit_test(ode_erk_same_bits)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
