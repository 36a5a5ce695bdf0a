/*
 * rf_step.c — cost of one DP-GD step on random features (docs/theory.md §7; bench/rf_memory.sh
 * runs it). Usage: bench_rf [n p steps]   (default 2000 4000 50; one thread)
 * Prints milliseconds per step of:
 *   two dgemv      r = Phi theta (n x p) and Phi^T v: the floor of Algorithm 1;
 *   DP-GD step     the step of rf_sim.c written out (both products, the clipping weights,
 *                  p Gaussians, the update) on the same features;
 *   rf step        one step of hdp_rf_simulate (DP-GD coupled to the OU paths: a third
 *                  product Phi xi and two n x r ones to project the noise on the modes);
 *   mode step      one step of hdp_rf_dpgd_final (the experiments: two n x r products).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "hdpsgd/rf.h"
#include "hdpsgd/rng.h"

/* row-major y = Phi x (trans 0) or Phi^T x (trans 1), Phi rows x cols (OpenBLAS's CBLAS) */
static void mv(int trans, long rows, long cols, const double *A, const double *x, double *y)
{
    cblas_dgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, (blasint)rows, (blasint)cols,
                1.0, A, (blasint)cols, x, 1, 0.0, y, 1);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000, p = argc > 2 ? atol(argv[2]) : 4000;
    long steps = argc > 3 ? atol(argv[3]) : 50;
    openblas_set_num_threads(1);
    hdp_rf_spec spec = {.k = {.d = 100, .n = n, .p = p, .test_size = 1000,
                              .activation = HDP_RF_TANH, .target = HDP_RF_SIGN},
                        .seed = 1};
    hdp_rf_problem pb;
    hdp_error err;
    hdp_error_clear(&err);
    double t0 = omp_get_wtime();
    if (hdp_rf_problem_build(&spec, HDP_RF_TEST_MODES, 1, &pb, &err) != HDP_OK) {
        fprintf(stderr, "bench_rf: %s\n", err.msg);
        return 1;
    }
    printf("n = %ld, p = %ld, d = 100, test 1000: build %.2f s (1 thread)\n", n, p,
           omp_get_wtime() - t0);
    double *theta = calloc((size_t)p, sizeof(double)), *g = malloc(sizeof(double) * (size_t)p);
    double *xi = malloc(sizeof(double) * (size_t)p), *r = malloc(sizeof(double) * (size_t)n);
    double *v = malloc(sizeof(double) * (size_t)n);
    hdp_xoshiro g3;
    hdp_normals ns; /* the block Gaussian stream, as in rf_sim.c */
    hdp_xoshiro_seed(&g3, 3);
    hdp_normals_init(&ns, &g3);
    double eta = 1.0 / (double)p, C = 0.5 * sqrt((double)p), cs = 1e-3;

    t0 = omp_get_wtime();
    for (long k = 0; k < steps; k++) {
        mv(0, n, p, pb.Phi, theta, r);
        mv(1, n, p, pb.Phi, r, g);
    }
    double two = (omp_get_wtime() - t0) / (double)steps;

    memset(theta, 0, sizeof(double) * (size_t)p);
    t0 = omp_get_wtime();
    for (long k = 0; k < steps; k++) {
        mv(0, n, p, pb.Phi, theta, r);
        for (long i = 0; i < n; i++) {
            r[i] -= pb.y[i];
            double gn = 2.0 * fabs(r[i]) * pb.phi_norm[i];
            v[i] = gn > C ? r[i] * (C / gn) : r[i];
        }
        mv(1, n, p, pb.Phi, v, g);
        hdp_normals_fill(&ns, xi, p);
        for (long j = 0; j < p; j++)
            theta[j] += -2.0 * eta / (double)n * g[j] + cs * xi[j];
    }
    double step = (omp_get_wtime() - t0) / (double)steps;

    hdp_rf_dpgd q;
    memset(&q, 0, sizeof q);
    q.eta = eta;
    q.T = steps;
    q.C_clip = C;
    q.delta = 1.0 / (double)n;
    q.epsilon = 4;
    hdp_rf_dpgd_calibrate(&q, n, &err);
    hdp_rf_sim_options o = {1, 1, 1, NULL, NULL};
    hdp_rf_sim_result res;
    t0 = omp_get_wtime();
    hdp_rf_simulate(&pb, &q, &o, &res, &err);
    double coupled = (omp_get_wtime() - t0) / (double)steps;
    hdp_rf_sim_result_free(&res);

    hdp_rf_config cf = {q.eta, 10 * steps, q.C_clip, q.s, 1, 0, 0, 0, 0, 0, 0};
    t0 = omp_get_wtime();
    hdp_rf_dpgd_final(&pb, &cf, 1, 1, NULL, NULL, &err);
    double mode = (omp_get_wtime() - t0) / (double)(10 * steps);

    printf("two dgemv     %8.3f ms per step\n", 1e3 * two);
    printf("DP-GD step    %8.3f ms per step (%.2f x the two dgemv)\n", 1e3 * step, step / two);
    printf("rf step       %8.3f ms per step (DP-GD coupled to the OU paths)\n", 1e3 * coupled);
    printf("mode step     %8.3f ms per step (experiments, r = %ld modes)\n", 1e3 * mode, pb.r);
    free(theta); free(g); free(xi); free(r); free(v);
    hdp_rf_problem_free(&pb);
    return 0;
}
