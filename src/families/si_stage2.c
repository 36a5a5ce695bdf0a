/*
 * si_stage2.c — stage 2 of the single-index family's two-stage learning: the Monte Carlo of
 * DP-GD on the second layer over independent runs (the generic loop of sim/mc.h), against the
 * OU and GD laws that si.c predicts. See hdpsgd/si.h and docs/theory.md §8.2.
 */
#include "hdpsgd/si.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"
#include "sim/stats.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"
#include "families/si_internal.h"

void hdp_si_result_free(hdp_si_result *res)
{
    if (!res)
        return;
    free(res->mc_mean);
    free(res->mc_var);
    free(res->mc_cov);
    res->mc_mean = res->mc_var = res->mc_cov = NULL;
}

/* One stage-2 run from stream g: a_T into a, its test risk and clipped fraction. */
static void one_run(const hdp_si_problem *pb, hdp_xoshiro *g, double *a, double *work,
                    double *risk, double *clipped)
{
    const long p = pb->spec.k.p, n = pb->spec.k.n, mt = pb->spec.k.test_size;
    const hdp_si_params *hp = &pb->hp;
    long nclip = 0;
    if (pb->spec.k.stage2 == HDP_SI_OU) {
        /* exact OU law at tau: independent Gaussian mode coefficients */
        double *al = work;
        for (long k = 0; k < p; k++)
            al[k] = pb->ou_mean[k] + sqrt(pb->ou_var[k]) * hdp_rng_normal_fast(g);
        for (long j = 0; j < p; j++) {
            double acc = 0;
            for (long k = 0; k < p; k++)
                acc += pb->V[j * p + k] * al[k];
            a[j] = acc;
        }
    } else {
        double *grad = work, *w = work + p; /* w: [n] residual times clip weight */
        const double noise = sqrt(hp->eta_a) * hp->s;
        for (long j = 0; j < p; j++)
            a[j] = 1.0 / sqrt((double)p);
        for (long t = 0; t < hp->T; t++) {
            double a2 = 0, wsum = 0;
            for (long j = 0; j < p; j++)
                a2 += a[j] * a[j];
            for (long i = 0; i < n; i++) {
                const double *ph = pb->Phi + i * p;
                double pred = 0, ph2 = 0;
                for (long j = 0; j < p; j++) {
                    pred += ph[j] * a[j];
                    ph2 += ph[j] * ph[j];
                }
                double r = pred - pb->y[i];
                /* ||g_i||^2 = ||2 r phi_i + 2 lambda a||^2 */
                double gn2 = 4 * r * r * ph2 + 8 * hp->lambda * r * pred + 4 * hp->lambda * hp->lambda * a2;
                double wi = 1.0;
                if (gn2 > hp->C_a * hp->C_a) {
                    wi = hp->C_a / sqrt(gn2);
                    nclip++;
                }
                w[i] = wi * r;
                wsum += wi;
            }
            for (long j = 0; j < p; j++)
                grad[j] = 2.0 * hp->lambda * a[j] * wsum / (double)n;
            for (long i = 0; i < n; i++) {
                const double *ph = pb->Phi + i * p;
                double c = 2.0 / (double)n * w[i];
                for (long j = 0; j < p; j++)
                    grad[j] += c * ph[j];
            }
            for (long j = 0; j < p; j++)
                a[j] += -hp->eta_a * grad[j] + (noise > 0 ? noise * hdp_rng_normal_fast(g) : 0.0);
        }
    }
    double s = 0;
    for (long t = 0; t < mt; t++) {
        const double *ph = pb->Phi_test + t * p;
        double f = 0;
        for (long j = 0; j < p; j++)
            f += ph[j] * a[j];
        s += (f - pb->y_test[t]) * (f - pb->y_test[t]);
    }
    *risk = s / (double)mt;
    *clipped = pb->spec.k.stage2 == HDP_SI_OU ? 0.0 : (double)nclip / ((double)n * (double)hp->T);
}

/* what the runs read, and where run r writes: row r of A, risk[r], clip[r] */
typedef struct {
    const hdp_si_problem *pb;
    double *A, *risk, *clip;
} stage2_ctx;

/* a thread's workspace: [p + n] for one_run, then [p] for a_T */
static void *stage2_ws_alloc(const void *vc)
{
    const hdp_si_problem *pb = ((const stage2_ctx *)vc)->pb;
    return hdp_dalloc((size_t)(2 * pb->spec.k.p + pb->spec.k.n));
}

/* Stage-2 run r: a_T, its risk and clipped fraction, and its mode coefficients v_k^T a_T. */
static hdp_status stage2_run(const void *vc, long r, void *ws, hdp_xoshiro *g, void *slot,
                             hdp_error *err)
{
    (void)slot;
    (void)err;
    const stage2_ctx *out = vc;
    const hdp_si_problem *pb = out->pb;
    const long p = pb->spec.k.p, n = pb->spec.k.n;
    double *work = ws, *a = work + p + n;
    one_run(pb, g, a, work, &out->risk[r], &out->clip[r]);
    for (long k = 0; k < p; k++) {
        double acc = 0;
        for (long j = 0; j < p; j++)
            acc += pb->V[j * p + k] * a[j];
        out->A[r * p + k] = acc;
    }
    return HDP_OK;
}

hdp_status hdp_si_stage2(const hdp_si_problem *pb, long runs, int threads, hdp_si_result *res,
                         hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, res);
    if (runs < 2)
        return hdp_fail(err, HDP_EINPUT, "[si] runs: expected an integer >= 2 (value %ld)", runs);
    const long p = pb->spec.k.p;
    double t0 = omp_get_wtime();
    double *A = hdp_dalloc((size_t)(runs * p)), *risk = hdp_dalloc((size_t)runs);
    double *clip = hdp_dalloc((size_t)runs);
    res->mc_mean = hdp_dalloc((size_t)p);
    res->mc_var = hdp_dalloc((size_t)p);
    res->mc_cov = hdp_dalloc((size_t)(p * p));
    if (!A || !risk || !clip || !res->mc_mean || !res->mc_var || !res->mc_cov) {
        free(A); free(risk); free(clip);
        return hdp_fail(err, HDP_ENOMEM, "[si] out of memory (runs = %ld)", runs);
    }
    /* run r: the seed's stream jumped r + 1 times (the unjumped one made the problem) */
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, pb->spec.seed, 1);
    stage2_ctx c = {pb, A, risk, clip};
    hdp_mc_loop loop = {.name = "si", .runs = runs, .threads = hdp_mc_loop_threads(runs, threads),
                        .ctx = &c, .ws_alloc = stage2_ws_alloc, .ws_free = free,
                        .run = stage2_run, .first = &first};
    hdp_status st = hdp_mc_loop_run(&loop, err);
    if (st != HDP_OK) {
        free(A); free(risk); free(clip);
        return st;
    }
    /* reduce in run order */
    double rs = 0, rs2 = 0, cs = 0;
    for (long r = 0; r < runs; r++) {
        rs += risk[r];
        cs += clip[r];
        for (long k = 0; k < p; k++)
            res->mc_mean[k] += A[r * p + k];
    }
    for (long k = 0; k < p; k++)
        res->mc_mean[k] /= (double)runs;
    double rm = rs / (double)runs;
    for (long r = 0; r < runs; r++) {
        rs2 += (risk[r] - rm) * (risk[r] - rm);
        for (long k = 0; k < p; k++) {
            double dk = A[r * p + k] - res->mc_mean[k];
            for (long l = k; l < p; l++)
                res->mc_cov[k * p + l] += dk * (A[r * p + l] - res->mc_mean[l]);
        }
    }
    for (long k = 0; k < p; k++)
        for (long l = k; l < p; l++) {
            double v = res->mc_cov[k * p + l] / (double)(runs - 1);
            res->mc_cov[k * p + l] = res->mc_cov[l * p + k] = v;
        }
    const double *pm = pb->spec.k.stage2 == HDP_SI_OU ? pb->ou_mean : pb->gd_mean;
    const double *pv = pb->spec.k.stage2 == HDP_SI_OU ? pb->ou_var : pb->gd_var;
    res->max_z_mean = res->max_z_var = 0;
    for (long k = 0; k < p; k++) {
        res->mc_var[k] = res->mc_cov[k * p + k];
        double se = sqrt(pv[k] / (double)runs);
        /* without noise the runs agree to rounding: floor the standard errors there */
        double floor_m = 1e-9 * (fabs(pm[k]) + 1e-9);
        double zm = fabs(res->mc_mean[k] - pm[k]) / (se > floor_m ? se : floor_m);
        double sev = pv[k] * sqrt(2.0 / (double)(runs - 1));
        double zv = sev > 0 ? fabs(res->mc_var[k] - pv[k]) / sev : 0.0; /* no noise: no test */
        if (zm > res->max_z_mean) res->max_z_mean = zm;
        if (zv > res->max_z_var) res->max_z_var = zv;
    }
    res->runs = runs;
    res->risk_mean = rm;
    res->risk_se = hdp_stderr_from_ss(rs2, runs);
    res->clipped = cs / (double)runs;
    res->seconds = omp_get_wtime() - t0;
    free(A); free(risk); free(clip);
    double stats[] = {res->risk_mean, res->risk_se, res->max_z_mean, res->max_z_var};
    if (!hdp_si_all_finite(stats, 4) || !hdp_si_all_finite(res->mc_mean, p) || !hdp_si_all_finite(res->mc_var, p)) {
        hdp_si_result_free(res);
        return hdp_fail(err, HDP_ENUMERIC,
                        "[si] the stage-2 runs overflowed (test risk %g +- %g): make si.C_a, "
                        "si.lambda or the link's si.he1..he3 smaller", rm, hdp_stderr_from_ss(rs2, runs));
    }
    return HDP_OK;
}
