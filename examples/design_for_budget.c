/* design_for_budget.c — the best learning-rate schedule for a target (epsilon,
 * delta): calibrate rho with the Canonne-Kamath-Steinke conversion (docs/theory.md §6),
 * then optimise the schedule families on the risk ODE (docs/theory.md §3, §5).
 * Usage: design_for_budget [EPSILON] [DELTA] */
#include <hdpsgd/hdpsgd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    double eps = argc > 1 ? atof(argv[1]) : 2.0;
    double delta = argc > 2 ? atof(argv[2]) : 1e-5;
    hdp_error err;
    hdp_error_clear(&err);
    double rho_z;
    if (hdp_zcdp_from_epsilon(eps, delta, &rho_z, &err) != HDP_OK) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 2;
    }
    double rho = sqrt(2 * rho_z); /* the output is (rho^2/2)-zCDP */
    char kv[64];
    snprintf(kv, sizeof kv, "privacy.rho=%.17g", rho);
    hdp_model m;
    hdp_model_init(&m);
    if (hdp_model_set(&m, "data.spectrum=isotropic", &err) != HDP_OK ||
        hdp_model_set(&m, kv, &err) != HDP_OK || hdp_model_finalize(&m, &err) != HDP_OK) {
        fprintf(stderr, "error: %s\n", err.msg);
        hdp_model_free(&m);
        return 2;
    }
    printf("(epsilon, delta) = (%g, %g): rho = %.6f\n", eps, delta, rho);
    hdp_design_options opt;
    hdp_design_options_init(&opt);
    double best = INFINITY;
    const char *best_name = "";
    for (int f = HDP_FAMILY_OUTPUT; f <= HDP_FAMILY_OPTIMAL; f++) {
        hdp_design_result r;
        if (hdp_design_optimize(&m, (hdp_design_family)f, &opt, NULL, 0, &r, &err) != HDP_OK) {
            fprintf(stderr, "error: %s\n", err.msg);
            hdp_design_result_free(&r);
            hdp_model_free(&m);
            return 4;
        }
        printf("%-13s final risk %.6f  eta(0) = %.4f  eta(1) = %.4f\n",
               hdp_design_family_name((hdp_design_family)f), r.final_risk, r.eta0, r.eta1);
        if (r.final_risk < best) {
            best = r.final_risk;
            best_name = hdp_design_family_name((hdp_design_family)f);
        }
        hdp_design_result_free(&r);
    }
    printf("best: %s (%.6f)\n", best_name, best);
    hdp_model_free(&m);
    return 0;
}
