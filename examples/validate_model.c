/* validate_model.c — does the ODE predict the Monte Carlo of DP-SGD for a model
 * file? Usage: validate_model MODEL.ini [RUNS] */
#include <hdpsgd/hdpsgd.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.ini [RUNS]\n", argv[0]);
        return 2;
    }
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    if (hdp_model_load_file(&m, argv[1], &err) != HDP_OK || hdp_model_finalize(&m, &err) != HDP_OK) {
        fprintf(stderr, "error: %s\n", err.msg);
        hdp_model_free(&m);
        return 2;
    }
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    if (argc > 2)
        opt.runs = atol(argv[2]);
    hdp_validate_result v;
    hdp_status st = hdp_validate_run(&m, &opt, 0, &v, &err); /* 0: Monte Carlo only, no SDE */
    if (st == HDP_OK)
        printf("ODE final risk %.5f, Monte Carlo %.5f +- %.5f, max relative deviation %.2f%%: %s\n",
               v.ode.final_risk, v.sim_side.final_risk, v.sim_side.final_stderr,
               100 * v.sim_side.max_rel_dev, v.pass ? "agree" : "disagree");
    else
        fprintf(stderr, "error: %s\n", err.msg);
    int pass = st == HDP_OK && v.pass;
    hdp_validate_free(&v);
    hdp_model_free(&m);
    return st != HDP_OK ? 4 : (pass ? 0 : 1);
}
