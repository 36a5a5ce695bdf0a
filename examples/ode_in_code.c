/* ode_in_code.c — integrate the risk ODE of homogenized DP-SGD (docs/theory.md §3) for a
 * model built in code, and print the predicted excess risk along the pass. */
#include <hdpsgd/hdpsgd.h>
#include <stdio.h>

int main(void)
{
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m); /* the built-in default model, then our changes */
    const char *keys[] = {"data.d=500", "data.gamma=0.05", "data.spectrum=isotropic",
                          "clip.c=1", "privacy.rho=1", "schedule.kind=linear-noise",
                          "schedule.eta0=3", "ode.points=6"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (hdp_model_set(&m, keys[i], &err) != HDP_OK)
            goto fail;
    if (hdp_model_finalize(&m, &err) != HDP_OK)
        goto fail;

    hdp_ode_result r;
    if (hdp_ode_solve(&m, &r, &err) != HDP_OK) {
        hdp_ode_result_free(&r);
        goto fail;
    }
    printf("n = %ld steps, gamma = %g\n", m.n, m.gamma);
    for (long i = 0; i < r.points; i++)
        printf("t = %.1f  risk = %.6f  mu_c = %.3f\n", r.t[i], r.risk[i], r.mu[i]);
    printf("final excess risk %.6f\n", r.final_risk);
    hdp_ode_result_free(&r);
    hdp_model_free(&m);
    return 0;
fail:
    fprintf(stderr, "error: %s\n", err.msg);
    hdp_model_free(&m);
    return 1;
}
