/*
 * test_api.c — the public API's contract for bad arguments (issue 18): every function
 * that returns an hdp_status refuses each NULL pointer argument with HDP_EINPUT and a
 * message naming the argument; functions that need a finalized model refuse a zeroed one,
 * one changed after finalize, and fields written directly with invalid values; functions
 * without a status do nothing (void), give NaN (numbers) or 0/-1 (counts, names) for NULL;
 * *_free accepts NULL. hdp_validate_compare on a hand-made grid, and grids of different
 * lengths.
 *
 * How the list was made: every prototype of include/hdpsgd/ headers (155 at this commit, by
 *   grep -hE '^[a-z_ ]+[ *]hdp_[a-z0-9_]+\(' on the headers, plus the multi-line ones),
 * less hdp_fail (the error reporter itself), the functions without pointer arguments, and
 * the hot-path generators of rng.h that take a state by pointer and cannot fail
 * (hdp_splitmix64_next, hdp_xoshiro_next, hdp_xoshiro_double, hdp_rng_normal_slow,
 * hdp_rng_normal_block_slow, hdp_normals_fill and the static inline ones): a NULL there is
 * a programming error like a NULL FILE* to fputs, and a check would cost every draw.
 * Every other function appears below, once per pointer argument.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/hdpsgd.h"
#include "testutil.h"

static hdp_error err;

/* the call fails with HDP_EINPUT naming the argument */
#define REFUSES(call, arg)                                                                    \
    do {                                                                                      \
        hdp_error_clear(&err);                                                                \
        hdp_status st_ = (call);                                                              \
        if (st_ != HDP_EINPUT || !strstr(err.msg, "'" arg "'")) {                             \
            print_error("%s: status %d, message '%s' (expected HDP_EINPUT naming '%s')\n",    \
                        #call, (int)st_, err.msg, arg);                                       \
            fail();                                                                           \
        }                                                                                     \
    } while (0)

/* the call fails with HDP_EINPUT and a message containing fragment */
#define REFUSES_MSG(call, fragment)                                                           \
    do {                                                                                      \
        hdp_error_clear(&err);                                                                \
        hdp_status st_ = (call);                                                              \
        if (st_ != HDP_EINPUT || !strstr(err.msg, fragment)) {                                \
            print_error("%s: status %d, message '%s' (expected '%s')\n", #call, (int)st_,     \
                        err.msg, fragment);                                                   \
            fail();                                                                           \
        }                                                                                     \
    } while (0)

static void model_functions(void **state)
{
    (void)state;
    hdp_model m;
    hdp_model_init(NULL); /* nothing happens */
    hdp_model_free(NULL);
    hdp_model_init(&m);
    REFUSES(hdp_model_load_file(NULL, "x.ini", &err), "m");
    REFUSES(hdp_model_load_file(&m, NULL, &err), "path");
    REFUSES(hdp_model_set(NULL, "data.d=3", &err), "m");
    REFUSES(hdp_model_set(&m, NULL, &err), "assignment");
    REFUSES(hdp_model_set_key(NULL, "data", "d", "3", "here", 1, &err), "m");
    REFUSES(hdp_model_set_key(&m, NULL, "d", "3", "here", 1, &err), "section");
    REFUSES(hdp_model_set_key(&m, "data", NULL, "3", "here", 1, &err), "key");
    REFUSES(hdp_model_set_key(&m, "data", "d", NULL, "here", 1, &err), "value");
    REFUSES(hdp_model_finalize(NULL, &err), "m");
    REFUSES(hdp_model_fail_key(NULL, "data", "d", &err, "x"), "m");
    REFUSES(hdp_model_fail_key(&m, NULL, "d", &err, "x"), "section");
    REFUSES(hdp_model_fail_key(&m, "data", NULL, &err, "x"), "key");
    REFUSES(hdp_model_check(NULL, &err), "m");
    hdp_model_write_meta(NULL, stdout);
    hdp_model_write_meta(&m, NULL);
    hdp_model_write_ini(NULL, stdout);
    hdp_model_write_ini(&m, NULL);
    assert_int_equal(hdp_model_key_given(NULL, "data", "d"), 0);
    assert_int_equal(hdp_model_key_given(&m, NULL, "d"), 0);
    /* a NULL error record is allowed everywhere: the status still says what happened */
    assert_int_equal(hdp_model_set(&m, "data.d=-1", NULL), HDP_EINPUT);
    hdp_error_clear(NULL);
    hdp_model_free(&m);
}

/* A model that is zeroed, not finalized, changed after finalize, or whose fields were
 * written with invalid values after finalize: refused by every solver. */
static void unfinalized_models(void **state)
{
    (void)state;
    hdp_model zero;
    memset(&zero, 0, sizeof zero);
    hdp_model m, changed, bad_points;
    make_model(&m, "data.d=20", "ode.points=5", NULL);
    make_model(&changed, "data.d=20", NULL);
    assert_int_equal(hdp_model_set(&changed, "data.d=30", &err), HDP_OK);
    make_model(&bad_points, "data.d=20", NULL);
    bad_points.points = 0;
    const hdp_model *bad[] = {&zero, &changed, &bad_points};
    const char *why[] = {"not finalized", "not finalized", "ode.points"};
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.runs = 2;
    for (int i = 0; i < 3; i++) {
        hdp_ode_result o;
        hdp_mc_result r;
        hdp_validate_result v;
        hdp_spectrum sp;
        hdp_design_options dopt;
        hdp_design_result dr;
        hdp_design_set ds;
        hdp_model dm;
        int want[HDP_FAMILY_COUNT] = {1, 0, 0, 0};
        hdp_design_options_init(&dopt);
        REFUSES_MSG(hdp_model_check(bad[i], &err), why[i]);
        REFUSES_MSG(hdp_ode_solve(bad[i], &o, &err), why[i]);
        hdp_ode_result_free(&o); /* zeroed by the refusal: safe */
        REFUSES_MSG(hdp_sim_run(bad[i], &opt, &r, &err), why[i]);
        hdp_mc_result_free(&r);
        REFUSES_MSG(hdp_sde_run(bad[i], &opt, &r, &err), why[i]);
        hdp_mc_result_free(&r);
        REFUSES_MSG(hdp_validate_run(bad[i], &opt, 1, &v, &err), why[i]);
        hdp_validate_free(&v);
        REFUSES_MSG(hdp_spectrum_build(bad[i], &sp, &err), why[i]);
        hdp_spectrum_free(&sp);
        REFUSES_MSG(hdp_design_optimize(bad[i], HDP_FAMILY_OUTPUT, &dopt, NULL, 0, &dr, &err),
                    why[i]);
        hdp_design_result_free(&dr);
        REFUSES_MSG(hdp_design_set_run(bad[i], want, &dopt, &ds, &err), why[i]);
        hdp_design_set_free(&ds);
        REFUSES_MSG(hdp_design_model(bad[i], &dr, 0, &dm, &err), why[i]);
        hdp_rates_result rr;
        REFUSES_MSG(hdp_rates_run(bad[i], 2, want, &dopt, NULL, NULL, &rr, &err), why[i]);
        hdp_rates_result_free(&rr); /* the contract: in every case */
    }
    /* finalize again: accepted */
    assert_int_equal(hdp_model_finalize(&changed, &err), HDP_OK);
    assert_int_equal(hdp_model_check(&changed, &err), HDP_OK);
    hdp_model_free(&m);
    hdp_model_free(&changed);
    hdp_model_free(&bad_points);
}

static void solver_functions(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=20", "ode.points=5", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    hdp_mc_options_from_model(NULL, &opt);
    hdp_mc_options_from_model(&m, NULL);
    hdp_ode_result o;
    hdp_mc_result r;
    hdp_validate_result v;
    hdp_spectrum sp;
    REFUSES(hdp_ode_solve(NULL, &o, &err), "m");
    REFUSES(hdp_ode_solve(&m, NULL, &err), "res");
    REFUSES(hdp_sim_run(NULL, &opt, &r, &err), "m");
    REFUSES(hdp_sim_run(&m, NULL, &r, &err), "opt");
    REFUSES(hdp_sim_run(&m, &opt, NULL, &err), "res");
    REFUSES(hdp_sde_run(NULL, &opt, &r, &err), "m");
    REFUSES(hdp_sde_run(&m, NULL, &r, &err), "opt");
    REFUSES(hdp_sde_run(&m, &opt, NULL, &err), "res");
    REFUSES(hdp_validate_run(NULL, &opt, 1, &v, &err), "m");
    REFUSES(hdp_validate_run(&m, NULL, 1, &v, &err), "opt");
    REFUSES(hdp_validate_run(&m, &opt, 1, NULL, &err), "v");
    REFUSES(hdp_spectrum_build(NULL, &sp, &err), "m");
    REFUSES(hdp_spectrum_build(&m, NULL, &err), "spec");
    REFUSES(hdp_spectrum_bin_log(NULL, 4, &err), "spec");
    assert_int_equal(hdp_spectrum_distinct(NULL), 0);
    hdp_ode_result_free(NULL);
    hdp_mc_result_free(NULL);
    hdp_validate_free(NULL);
    hdp_spectrum_free(NULL);
    /* schedules and clipping factors */
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    hdp_sched_from_model(NULL, &s);
    hdp_sched_from_model(&m, NULL);
    assert_true(isnan(hdp_sched_eta(NULL, 0.5)));
    assert_true(isnan(hdp_sched_sigma2(NULL, 0.5)));
    assert_true(isnan(hdp_sched_eta_sup(NULL)));
    double ek = 0, sk = 0;
    hdp_sched_step(NULL, 10, 1, &ek, &sk);
    hdp_sched_step(&s, 10, 1, NULL, &sk);
    hdp_clip_free(NULL);
    hdp_clip_values cv;
    hdp_clip_eval(NULL, 1.0, &cv);
    hdp_clip_eval_quadrature(NULL, 1.0, &cv);
    hdp_clip_eval_values(NULL, 1.0, &cv);
    hdp_model_free(&m);
}

static void privacy_design_rates(void **state)
{
    (void)state;
    double x = 0;
    REFUSES(hdp_zcdp_from_epsilon(1.0, 1e-5, NULL, &err), "rho_z");
    REFUSES(hdp_dpgd_sigma_zcdp(0.1, 10, 1.0, 1e-5, NULL, &x, &err), "sigma");
    assert_int_equal(hdp_dpgd_sigma_zcdp(0.1, 10, 1.0, 1e-5, &x, NULL, &err), HDP_OK);
    assert_true(isnan(hdp_privacy_accountant(NULL, &x, 1)));
    assert_true(isnan(hdp_privacy_accountant(&x, NULL, 1)));
    assert_true(isnan(hdp_privacy_accountant_schedule(NULL, 10)));
    int want[HDP_FAMILY_COUNT];
    REFUSES(hdp_design_families_parse(NULL, want, &err), "list");
    REFUSES(hdp_design_families_parse("all", NULL, &err), "want");
    assert_int_equal(hdp_design_family_parse(NULL), -1);
    hdp_design_options_init(NULL);
    hdp_design_result_free(NULL);
    hdp_design_set_free(NULL);
    assert_true(isnan(hdp_design_eta(NULL, 0.5)));
    assert_true(isnan(hdp_loglog_slope(NULL, &x, 2)));
    hdp_model m;
    make_model(&m, "data.d=20", NULL);
    hdp_design_options opt;
    hdp_design_options_init(&opt);
    hdp_design_result dr;
    hdp_design_set ds;
    hdp_model out;
    want[0] = 1;
    want[1] = want[2] = want[3] = 0;
    REFUSES(hdp_design_optimize(NULL, 0, &opt, NULL, 0, &dr, &err), "m");
    REFUSES(hdp_design_optimize(&m, 0, NULL, NULL, 0, &dr, &err), "opt");
    REFUSES(hdp_design_optimize(&m, 0, &opt, NULL, 0, NULL, &err), "res");
    REFUSES(hdp_design_set_run(NULL, want, &opt, &ds, &err), "m");
    REFUSES(hdp_design_set_run(&m, NULL, &opt, &ds, &err), "want");
    REFUSES(hdp_design_set_run(&m, want, NULL, &ds, &err), "opt");
    REFUSES(hdp_design_set_run(&m, want, &opt, NULL, &err), "d");
    REFUSES(hdp_design_model(NULL, &dr, 0, &out, &err), "base");
    REFUSES(hdp_design_model(&m, NULL, 0, &out, &err), "r");
    REFUSES(hdp_design_model(&m, &dr, 0, NULL, &err), "out");
    double lo, hi;
    long count;
    hdp_rates_result rr;
    REFUSES(hdp_rates_grid_parse(NULL, &lo, &hi, &count, &err), "text");
    REFUSES(hdp_rates_grid_parse("0.01:0.1:3", NULL, &hi, &count, &err), "lo");
    REFUSES(hdp_rates_grid_parse("0.01:0.1:3", &lo, NULL, &count, &err), "hi");
    REFUSES(hdp_rates_grid_parse("0.01:0.1:3", &lo, &hi, NULL, &err), "count");
    REFUSES(hdp_rates_families(NULL, NULL, &err), "want");
    REFUSES(hdp_rates_run(NULL, 2, want, &opt, NULL, NULL, &rr, &err), "models");
    REFUSES(hdp_rates_run(&m, 2, NULL, &opt, NULL, NULL, &rr, &err), "want");
    REFUSES(hdp_rates_run(&m, 2, want, NULL, NULL, NULL, &rr, &err), "opt");
    REFUSES(hdp_rates_run(&m, 2, want, &opt, NULL, NULL, NULL, &err), "r");
    hdp_rates_result_free(NULL);
    hdp_model_free(&m);
}

static void family_functions(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, NULL);
    double x = 1;
    long w[8];
    /* random features */
    hdp_rf_spec rs;
    hdp_rf_problem rp;
    hdp_rf_dpgd q;
    hdp_rf_sim_options ro;
    hdp_rf_sim_result rres;
    hdp_rf_config cfg;
    memset(&rp, 0, sizeof rp);
    memset(&q, 0, sizeof q);
    memset(&ro, 0, sizeof ro);
    memset(&cfg, 0, sizeof cfg);
    hdp_rf_spec_from_model(NULL, &rs);
    hdp_rf_spec_from_model(&m, NULL);
    hdp_rf_spec_from_model(&m, &rs);
    REFUSES(hdp_rf_spec_from_data(NULL, &rs, &err), "m");
    REFUSES(hdp_rf_spec_from_data(&m, NULL, &err), "spec");
    REFUSES(hdp_rf_problem_build(NULL, 0, 1, &rp, &err), "spec");
    REFUSES(hdp_rf_problem_build(&rs, 0, 1, NULL, &err), "pb");
    REFUSES(hdp_rf_dpgd_from_model(NULL, 10, 10, 10, &q, &err), "m");
    REFUSES(hdp_rf_dpgd_from_model(&m, 10, 10, 10, NULL, &err), "q");
    REFUSES(hdp_rf_dpgd_calibrate(NULL, 10, &err), "q");
    REFUSES(hdp_rf_simulate(NULL, &q, &ro, &rres, &err), "pb");
    REFUSES(hdp_rf_simulate(&rp, NULL, &ro, &rres, &err), "q");
    REFUSES(hdp_rf_simulate(&rp, &q, NULL, &rres, &err), "opt");
    REFUSES(hdp_rf_simulate(&rp, &q, &ro, NULL, &err), "res");
    REFUSES(hdp_rf_dpgd_final(NULL, &cfg, 1, 1, NULL, NULL, &err), "pb");
    REFUSES(hdp_rf_dpgd_final(&rp, NULL, 1, 1, NULL, NULL, &err), "cfg");
    hdp_rf_modes_loss(NULL, &x, &x, &x);
    hdp_rf_expected_loss(NULL, 1, 1, 1, 0, &x, &x);
    hdp_rf_problem_free(NULL);
    hdp_rf_sim_result_free(NULL);
    /* KL privacy */
    hdp_kl_spec ks;
    hdp_kl_arch a;
    hdp_kl_net net;
    hdp_kl_init_result kir;
    hdp_kl_problem kp;
    hdp_kl_run_result krr;
    memset(&kp, 0, sizeof kp);
    memset(&net, 0, sizeof net);
    hdp_kl_spec_from_model(NULL, &ks);
    hdp_kl_spec_from_model(&m, NULL);
    hdp_kl_spec_from_model(&m, &ks);
    a = ks.arch;
    hdp_kl_widths(NULL, w);
    hdp_kl_betas(NULL, &x);
    assert_true(isnan(hdp_kl_grad_norm2(NULL, 1, NULL)));
    assert_true(isnan(hdp_kl_B(NULL)));
    assert_true(isnan(hdp_kl_B_table(NULL)));
    assert_true(isnan(hdp_kl_R_lemma63(NULL, 10)));
    hdp_kl_budget_solve(1, 1, 10, 1, 1, 4, NULL);
    REFUSES(hdp_kl_net_alloc(NULL, &net, &err), "a");
    REFUSES(hdp_kl_net_alloc(&a, NULL, &err), "net");
    REFUSES(hdp_kl_net_jacobian(NULL, &x, 1, &x, NULL, NULL, &err), "net");
    REFUSES(hdp_kl_net_jacobian(&net, NULL, 1, &x, NULL, NULL, &err), "X");
    REFUSES(hdp_kl_init_mc(NULL, 2, 1, 1, &kir, &err), "a");
    REFUSES(hdp_kl_init_mc(&a, 2, 1, 1, NULL, &err), "res");
    REFUSES(hdp_kl_model_check(NULL, &err), "m");
    REFUSES(hdp_kl_spec_check(NULL, &err), "s");
    REFUSES(hdp_kl_data(NULL, &x, &x, &err), "s");
    REFUSES(hdp_kl_data(&ks, NULL, &x, &err), "X");
    REFUSES(hdp_kl_data(&ks, &x, NULL, &err), "Y");
    REFUSES(hdp_kl_problem_build(NULL, &x, &x, 0, &kp, &err), "s");
    REFUSES(hdp_kl_problem_build(&ks, NULL, &x, 0, &kp, &err), "X");
    REFUSES(hdp_kl_problem_build(&ks, &x, NULL, 0, &kp, &err), "Y");
    REFUSES(hdp_kl_problem_build(&ks, &x, &x, 0, NULL, &err), "pb");
    REFUSES(hdp_kl_problem_exact(NULL, 1, 1, 1, &x, &err), "pb");
    REFUSES(hdp_kl_problem_exact(&kp, 1, 1, 1, NULL, &err), "out");
    REFUSES(hdp_kl_problem_final_kl(NULL, 1, 1, 1, 0, &x, &err), "pb");
    REFUSES(hdp_kl_problem_final_kl(&kp, 1, 1, 1, 0, NULL, &err), "out");
    REFUSES(hdp_kl_problem_joint(NULL, 1, 1, 1, 0, 0, &x, &x, &err), "pb");
    REFUSES(hdp_kl_problem_joint(&kp, 1, 1, 1, 0, 0, NULL, &x, &err), "mean");
    REFUSES(hdp_kl_problem_joint(&kp, 1, 1, 1, 0, 0, &x, NULL, &err), "cov");
    REFUSES(hdp_kl_gauss(1, NULL, &x, &x, &x, &x, &err), "mu1");
    REFUSES(hdp_kl_gauss(1, &x, NULL, &x, &x, &x, &err), "S1");
    REFUSES(hdp_kl_gauss(1, &x, &x, NULL, &x, &x, &err), "mu2");
    REFUSES(hdp_kl_gauss(1, &x, &x, &x, NULL, &x, &err), "S2");
    REFUSES(hdp_kl_gauss(1, &x, &x, &x, &x, NULL, &err), "kl");
    REFUSES(hdp_kl_run(NULL, 1, &krr, &err), "s");
    REFUSES(hdp_kl_run(&ks, 1, NULL, &err), "res");
    hdp_kl_net_free(NULL);
    hdp_kl_net_draw(NULL, NULL);
    hdp_kl_sphere(NULL, 3, &x);
    hdp_kl_problem_free(NULL);
    hdp_kl_run_result_free(NULL);
    /* neural collapse */
    hdp_nc_spec ns;
    hdp_nc_problem np;
    hdp_nc_result nr;
    memset(&np, 0, sizeof np);
    REFUSES(hdp_nc_spec_from_model(NULL, &ns, &err), "m");
    REFUSES(hdp_nc_spec_from_model(&m, NULL, &err), "s");
    REFUSES(hdp_nc_spec_check(NULL, &err), "s");
    REFUSES(hdp_nc_gauss_max_error(NULL, 2, &x, &err), "a");
    REFUSES(hdp_nc_gauss_max_error(&x, 1, NULL, &err), "out");
    REFUSES(hdp_nc_exact_error_balanced(2, 10, 1, NULL, &err), "out");
    REFUSES(hdp_nc_problem_alloc(NULL, &np, &err), "s");
    assert_int_equal(hdp_nc_spec_from_model(&m, &ns, &err), HDP_OK);
    REFUSES(hdp_nc_problem_alloc(&ns, NULL, &err), "pb");
    REFUSES(hdp_nc_exact_error(NULL, &x, &err), "pb");
    REFUSES(hdp_nc_exact_error(&np, NULL, &err), "out");
    REFUSES(hdp_nc_run(NULL, 1, &nr, &err), "pb");
    REFUSES(hdp_nc_run(&np, 1, NULL, &err), "res");
    hdp_nc_class_sizes(2, 10, 0, NULL);
    hdp_nc_etf(2, 3, NULL);
    assert_true(isnan(hdp_nc_clip_gradient(NULL, 1, &x, 1, 1, &x)));
    assert_int_equal(hdp_nc_exact_applies(NULL), 0);
    hdp_nc_problem_free(NULL);
    /* single-index */
    hdp_si_spec ss;
    hdp_si_problem sp;
    hdp_si_result sr;
    memset(&sp, 0, sizeof sp);
    hdp_si_spec_from_model(NULL, &ss);
    hdp_si_spec_from_model(&m, NULL);
    hdp_si_spec_from_model(&m, &ss);
    REFUSES(hdp_si_problem_build(NULL, &m, &sp, &err), "spec");
    REFUSES(hdp_si_problem_build(&ss, &m, NULL, &err), "pb");
    REFUSES(hdp_si_set_epsilon(NULL, 1, &err), "pb");
    REFUSES(hdp_si_stage2(NULL, 2, 1, &sr, &err), "pb");
    REFUSES(hdp_si_stage2(&sp, 2, 1, NULL, &err), "res");
    hdp_si_problem_free(NULL);
    hdp_si_result_free(NULL);
    /* random numbers */
    hdp_xoshiro_seed(NULL, 1);
    hdp_xoshiro_jump(NULL);
    hdp_xoshiro_long_jump(NULL);
    assert_null(hdp_rng_state(NULL));
    hdp_normals_init(NULL, NULL);
    hdp_model_free(&m);
}

/* hdp_validate_compare on a three-point grid, and grids of different lengths */
static void validate_compare(void **state)
{
    (void)state;
    double risk[3] = {1.0, 0.5, 0.25};
    double mean[3] = {1.0, 0.52, 0.25}, se[3] = {0.01, 0.01, 0.0}, clip[3] = {0, 0.5, 0.3};
    hdp_ode_result ode;
    hdp_mc_result mc;
    memset(&ode, 0, sizeof ode);
    memset(&mc, 0, sizeof mc);
    ode.points = mc.points = 3;
    ode.risk = risk;
    mc.mean = mean;
    mc.stderr_ = se;
    mc.clipped = clip;
    mc.final_mean = 0.25;
    hdp_validate_side side;
    hdp_error_clear(&err);
    /* point 1: |0.52 - 0.5| = 0.02, 4 % relative, z = 2: passes at rel_tol 0.05 */
    assert_int_equal(hdp_validate_compare(&ode, &mc, 0.05, 4, &side, &err), HDP_OK);
    assert_true(fabs(side.max_abs_dev - 0.02) < 1e-12);
    assert_true(fabs(side.max_rel_dev - 0.04) < 1e-12);
    assert_true(fabs(side.max_z - 2.0) < 1e-9);
    assert_int_equal(side.pass, 1);
    assert_int_equal(side.worst_point, -1);
    assert_true(fabs(side.clipped - 0.4) < 1e-12); /* mean of the intervals 1 and 2 */
    assert_int_equal(side.within_rel_tol, 1);
    assert_int_equal(side.significant, 0); /* z = 2 <= 4 */
    assert_int_equal(side.max_z_point, 1);
    /* at z_tol 1 the same point still agrees (4 % <= 5 %) but its gap is significant */
    assert_int_equal(hdp_validate_compare(&ode, &mc, 0.05, 1, &side, &err), HDP_OK);
    assert_int_equal(side.pass, 1);
    assert_int_equal(side.within_rel_tol, 1);
    assert_int_equal(side.significant, 1);
    /* at rel_tol 0.01 it agrees by its z alone: beyond the tolerance, not significant */
    assert_int_equal(hdp_validate_compare(&ode, &mc, 0.01, 4, &side, &err), HDP_OK);
    assert_int_equal(side.pass, 1);
    assert_int_equal(side.within_rel_tol, 0);
    assert_int_equal(side.significant, 0);
    /* at rel_tol 0.01 and z_tol 1 the point fails */
    assert_int_equal(hdp_validate_compare(&ode, &mc, 0.01, 1, &side, &err), HDP_OK);
    assert_int_equal(side.pass, 0);
    assert_int_equal(side.worst_point, 1);
    assert_int_equal(side.within_rel_tol, 0);
    assert_int_equal(side.significant, 1);
    /* a deviation with zero standard error is measured against the floor 1e-12 |R| (runs
     * that all start at one iterate): a real gap is ~1e10 standard errors, a rounding-size
     * one (1e-15 relative) is not significant */
    mean[2] = 0.26;
    assert_int_equal(hdp_validate_compare(&ode, &mc, 0.01, 4, &side, &err), HDP_OK);
    assert_true(side.max_z > 1e9 && isfinite(side.max_z));
    assert_int_equal(side.pass, 0);
    assert_int_equal(side.significant, 1);
    double r2 = ode.risk[2];
    mean[2] = r2 * (1 + 1e-15);
    assert_int_equal(hdp_validate_compare(&ode, &mc, 0.01, 4, &side, &err), HDP_OK);
    assert_int_equal(side.max_z_point, 1); /* point 1's z = 2; point 2's 1e-3 */
    assert_true(fabs(side.max_z - 2.0) < 1e-9);
    assert_int_equal(side.pass, 1);
    /* grids of different lengths, NULLs, tolerances <= 0 */
    mc.points = 2;
    REFUSES_MSG(hdp_validate_compare(&ode, &mc, 0.05, 4, &side, &err), "same grid");
    mc.points = 3;
    REFUSES(hdp_validate_compare(NULL, &mc, 0.05, 4, &side, &err), "ode");
    REFUSES(hdp_validate_compare(&ode, NULL, 0.05, 4, &side, &err), "mc");
    REFUSES(hdp_validate_compare(&ode, &mc, 0.05, 4, NULL, &err), "side");
    REFUSES_MSG(hdp_validate_compare(&ode, &mc, 0, 4, &side, &err), "rel_tol");
}

/* The shared problem (issue 19): the problem entries refuse NULLs and a problem of another
 * model, and give the same bits as the entries that build their own spectrum and schedule. */
static void problem_entries(void **state)
{
    (void)state;
    hdp_model m, other;
    make_model(&m, "data.d=20", "ode.points=5", "sim.runs=3", NULL);
    make_model(&other, "data.d=30", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.threads = 1;
    hdp_problem pb, pbo;
    hdp_ode_result o1, o2;
    hdp_mc_result r1, r2;
    hdp_spectrum sp;
    REFUSES(hdp_problem_build(NULL, &pb, &err), "m");
    REFUSES(hdp_problem_build(&m, NULL, &err), "pb");
    assert_int_equal(hdp_problem_build(&m, &pb, &err), HDP_OK);
    assert_int_equal(hdp_problem_build(&other, &pbo, &err), HDP_OK);
    REFUSES(hdp_problem_check(NULL, &m, "x", &err), "pb");
    assert_int_equal(hdp_problem_check(&pb, NULL, "x", &err), HDP_OK); /* m: optional */
    hdp_problem unbuilt;
    memset(&unbuilt, 0, sizeof unbuilt);
    REFUSES_MSG(hdp_problem_check(&unbuilt, NULL, "x", &err), "was not built");
    /* what the problem derives once for every side */
    assert_true(pb.model == &m);
    assert_true(pb.eta_sup == hdp_sched_eta_sup(&pb.sched));
    assert_true(pb.rho_accounted == hdp_privacy_accountant_schedule(&pb.sched, m.n));
    assert_true(pb.threshold > 0 && isfinite(pb.threshold));
    REFUSES(hdp_spectrum_copy(NULL, &sp, &err), "src");
    REFUSES(hdp_spectrum_copy(&pb.spec, NULL, &err), "dst");
    REFUSES(hdp_ode_solve_problem(NULL, &pb, &o1, &err), "m");
    REFUSES(hdp_ode_solve_problem(&m, NULL, &o1, &err), "pb");
    REFUSES(hdp_ode_solve_problem(&m, &pb, NULL, &err), "res");
    REFUSES_MSG(hdp_ode_solve_problem(&m, &pbo, &o1, &err), "not built from this model");
    REFUSES(hdp_sim_run_problem(NULL, &opt, &r1, &err), "pb");
    REFUSES(hdp_sim_run_problem(&pb, NULL, &r1, &err), "opt");
    REFUSES(hdp_sim_run_problem(&pb, &opt, NULL, &err), "res");
    REFUSES_MSG(hdp_sim_run_problem(&unbuilt, &opt, &r1, &err), "was not built");
    REFUSES(hdp_sde_run_problem(NULL, &opt, &r1, &err), "pb");
    REFUSES_MSG(hdp_sde_run_problem(&unbuilt, &opt, &r1, &err), "was not built");
    /* the same bits either way */
    assert_int_equal(hdp_ode_solve(&m, &o1, &err), HDP_OK);
    assert_int_equal(hdp_ode_solve_problem(&m, &pb, &o2, &err), HDP_OK);
    assert_true(o1.final_risk == o2.final_risk);
    assert_memory_equal(o1.risk, o2.risk, sizeof(double) * (size_t)o1.points);
    hdp_ode_result_free(&o1);
    hdp_ode_result_free(&o2);
    /* the designer on the problem: the same result as on the model */
    hdp_design_options dopt;
    hdp_design_options_init(&dopt);
    hdp_design_result d1, d2;
    hdp_design_set ds;
    int want[HDP_FAMILY_COUNT] = {1, 0, 0, 0};
    REFUSES(hdp_design_optimize_problem(NULL, 0, &dopt, NULL, 0, &d1, &err), "pb");
    REFUSES(hdp_design_optimize_problem(&pb, 0, NULL, NULL, 0, &d1, &err), "opt");
    REFUSES(hdp_design_optimize_problem(&pb, 0, &dopt, NULL, 0, NULL, &err), "res");
    REFUSES_MSG(hdp_design_optimize_problem(&unbuilt, 0, &dopt, NULL, 0, &d1, &err),
                "was not built");
    REFUSES(hdp_design_set_run_problem(NULL, want, &dopt, &ds, &err), "pb");
    REFUSES_MSG(hdp_design_set_run_problem(&unbuilt, want, &dopt, &ds, &err), "was not built");
    assert_int_equal(hdp_design_optimize(&m, HDP_FAMILY_OUTPUT, &dopt, NULL, 0, &d1, &err), HDP_OK);
    assert_int_equal(hdp_design_optimize_problem(&pb, HDP_FAMILY_OUTPUT, &dopt, NULL, 0, &d2, &err),
                     HDP_OK);
    assert_true(d1.final_risk == d2.final_risk && d1.eta0 == d2.eta0 &&
                d1.ode_solves == d2.ode_solves);
    const double risk = d2.final_risk;
    hdp_design_result_free(&d1);
    hdp_design_result_free(&d2);
    assert_int_equal(hdp_design_set_run_problem(&pb, want, &dopt, &ds, &err), HDP_OK);
    assert_true(ds.best == HDP_FAMILY_OUTPUT && ds.res[0].final_risk == risk);
    hdp_design_set_free(&ds);
    for (int sde = 0; sde < 2; sde++) {
        assert_int_equal(sde ? hdp_sde_run(&m, &opt, &r1, &err) : hdp_sim_run(&m, &opt, &r1, &err),
                         HDP_OK);
        assert_int_equal(sde ? hdp_sde_run_problem(&pb, &opt, &r2, &err)
                             : hdp_sim_run_problem(&pb, &opt, &r2, &err),
                         HDP_OK);
        assert_memory_equal(r1.mean, r2.mean, sizeof(double) * (size_t)r1.points);
        assert_true(r1.final_mean == r2.final_mean);
        assert_true(r2.rho_accounted == pb.rho_accounted && r2.threshold == pb.threshold);
        hdp_mc_result_free(&r1);
        hdp_mc_result_free(&r2);
    }
    hdp_problem_free(&pb);
    hdp_problem_free(&pbo);
    hdp_problem_free(NULL);
    hdp_model_free(&m);
    hdp_model_free(&other);
}

/* the grid runner: rows in order, progress after each point, a failing point stops the grid
 * (or is recorded with keep_going), a failing check runs nothing */
static hdp_status square_job(void *user, long i, void *row, hdp_error *e)
{
    (void)user;
    if (i == 3)
        return hdp_fail(e, HDP_ENUMERIC, "point 3 fails");
    *(long *)row = i * i;
    return HDP_OK;
}
static int count_progress(const char *what, long done, long count, double value, void *user)
{
    assert_string_equal(what, "grid point");
    assert_true(isnan(value) && done >= 1 && done <= count);
    long *seen = user;
    seen[0] = done;
    return done == seen[1]; /* seen[1]: the point after which to stop (0: none) */
}
static hdp_status check_two(void *user, long i, hdp_error *e)
{
    (void)user;
    return i == 2 ? hdp_fail(e, HDP_EINPUT, "point 2 is bad") : HDP_OK;
}

static void grid_runner(void **state)
{
    (void)state;
    long seen[2] = {0, 0};
    hdp_grid_spec g = {.count = 3, .row_size = sizeof(long), .job = square_job,
                       .progress = count_progress, .user = seen};
    hdp_grid_result res;
    REFUSES(hdp_grid_run(NULL, &res, &err), "spec");
    REFUSES(hdp_grid_run(&g, NULL, &err), "res");
    REFUSES(hdp_grid_each(NULL, &err), "spec");
    assert_int_equal(hdp_grid_run(&g, &res, &err), HDP_OK);
    assert_int_equal(seen[0], 3);
    hdp_grid_free(&res);
    seen[1] = 2; /* a nonzero return stops the grid after that point */
    hdp_error_clear(&err);
    assert_int_equal(hdp_grid_run(&g, &res, &err), HDP_ECANCELLED);
    assert_non_null(strstr(err.msg, "stopped after point 2 of 3"));
    assert_int_equal(res.done, 2);
    hdp_grid_free(&res);
    seen[1] = 0;
    assert_int_equal(hdp_grid_run(&g, &res, &err), HDP_OK);
    assert_int_equal(*(long *)hdp_grid_row(&res, 2), 4);
    assert_null(hdp_grid_row(&res, 3));
    hdp_grid_free(&res);
    g.count = 5;
    hdp_error_clear(&err);
    assert_int_equal(hdp_grid_run(&g, &res, &err), HDP_ENUMERIC);
    assert_non_null(strstr(err.msg, "point 3"));
    assert_int_equal(res.done, 4);
    hdp_grid_free(&res);
    g.keep_going = 1;
    assert_int_equal(hdp_grid_run(&g, &res, &err), HDP_OK);
    assert_int_equal(res.failed, 1);
    assert_int_equal(res.status[3], HDP_ENUMERIC);
    assert_int_equal(*(long *)hdp_grid_row(&res, 4), 16);
    hdp_grid_free(&res);
    assert_int_equal(seen[0], 5); /* point 3 failed: not reported */
    g.check = check_two;
    seen[0] = 0;
    REFUSES_MSG(hdp_grid_run(&g, &res, &err), "point 2 is bad");
    assert_int_equal(res.checked_failure, 2);
    assert_int_equal(seen[0], 0);
    hdp_grid_free(&res);
    hdp_grid_free(NULL);
}

/* the drivers of issue 19 refuse NULL arguments (and the nc, kl, rf, si experiments, the
 * sweep's point and validate's scaling free what they were given, zeroed or not) */
static void driver_functions(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=20", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    long ps[1] = {10}, xs[1] = {2};
    int want[4] = {1, 0, 0, 0};
    hdp_ncsweep ns;
    hdp_klsweep ks;
    hdp_kl_epochs ke;
    hdp_klinit ki;
    hdp_rfexp rx;
    hdp_siexp sx;
    hdp_sweep_point sp;
    hdp_sweep_outcome so;
    hdp_validate_scaling_result vs;
    const hdp_sweep_runner *runners[1] = {&hdp_sweep_ode};
    REFUSES(hdp_nc_point_run(NULL, 1, 0, &err), "pt");
    assert_true(isnan(hdp_nc_point_z(NULL)));
    REFUSES(hdp_ncsweep_plan(NULL, "flat", ps, 1, &ns, &err), "m");
    REFUSES(hdp_ncsweep_plan(&m, NULL, ps, 1, &ns, &err), "name");
    REFUSES(hdp_ncsweep_plan(&m, "flat", NULL, 1, &ns, &err), "ps");
    REFUSES(hdp_ncsweep_plan(&m, "flat", ps, 1, NULL, &err), "sw");
    REFUSES(hdp_ncsweep_run(NULL, 1, NULL, NULL, &err), "sw");
    assert_true(isnan(hdp_ncsweep_flat_z(NULL, 0)));
    assert_true(isnan(hdp_ncsweep_max_z_exact(NULL, 0)));
    assert_int_equal(hdp_ncsweep_known(NULL), 0);
    hdp_ncsweep_free(NULL);
    REFUSES(hdp_klsweep_plan(NULL, 1, xs, 1, want, &ks, &err), "m");
    REFUSES(hdp_klsweep_plan(&m, 1, NULL, 1, want, &ks, &err), "xs");
    REFUSES(hdp_klsweep_plan(&m, 1, xs, 1, NULL, &ks, &err), "want");
    REFUSES(hdp_klsweep_plan(&m, 1, xs, 1, want, NULL, &err), "sw");
    REFUSES(hdp_klsweep_run(NULL, &m, 1, NULL, NULL, &err), "sw");
    REFUSES(hdp_kl_epochs_run(NULL, want, 1, &ke, &err), "m");
    REFUSES(hdp_kl_epochs_run(&m, NULL, 1, &ke, &err), "want");
    REFUSES(hdp_kl_epochs_run(&m, want, 1, NULL, &err), "ep");
    REFUSES(hdp_klinit_run(NULL, xs, 1, want, 1, NULL, NULL, &ki, &err), "m");
    REFUSES(hdp_klinit_run(&m, NULL, 1, want, 1, NULL, NULL, &ki, &err), "depths");
    REFUSES(hdp_klinit_run(&m, xs, 1, NULL, 1, NULL, NULL, &ki, &err), "want");
    REFUSES(hdp_klinit_run(&m, xs, 1, want, 1, NULL, NULL, NULL, &err), "ki");
    hdp_klsweep_free(NULL);
    hdp_kl_epochs_free(NULL);
    hdp_klinit_free(NULL);
    REFUSES(hdp_rfexp_run(NULL, HDP_RFEXP_P1, 0, 1, 1, NULL, NULL, NULL, NULL, &rx, &err), "m");
    REFUSES(hdp_rfexp_run(&m, HDP_RFEXP_P1, 0, 1, 1, NULL, NULL, NULL, NULL, NULL, &err), "xp");
    hdp_rfexp_free(NULL);
    REFUSES(hdp_siexp_run(NULL, HDP_SIEXP_EPS, 1, &sx, &err), "m");
    REFUSES(hdp_siexp_run(&m, HDP_SIEXP_EPS, 1, NULL, &err), "xp");
    memset(&sp, 0, sizeof sp);
    REFUSES(hdp_sweep_point_run(NULL, 1, &sp, "", NULL, NULL, &so, &err), "runners");
    REFUSES(hdp_sweep_point_run(runners, 1, NULL, "", NULL, NULL, &so, &err), "p");
    REFUSES(hdp_sweep_point_run(runners, 1, &sp, "", NULL, NULL, &so, &err), "p->m");
    REFUSES(hdp_validate_scaling(NULL, &opt, 1, NULL, NULL, &vs, &err), "base");
    REFUSES(hdp_validate_scaling(&m, NULL, 1, NULL, NULL, &vs, &err), "opt");
    REFUSES(hdp_validate_scaling(&m, &opt, 1, NULL, NULL, NULL, &err), "res");
    hdp_model_free(&m);
}

/* hdp_sweep_point_run: the runners in order, the row's fields, a failing runner's message in
 * the status (commas and quotes made ';') and the runners after it left empty, the writer
 * called only after a successful run */
static int t_runs, t_writes;
static void t_columns(const hdp_sweep_settings *set, char *buf, size_t size)
{
    (void)set;
    strncat(buf, ",x", size - strlen(buf) - 1);
}
static hdp_status t_ok(hdp_sweep_point *p, hdp_error *e)
{
    (void)p, (void)e;
    t_runs++;
    return HDP_OK;
}
static hdp_status t_fail(hdp_sweep_point *p, hdp_error *e)
{
    (void)p;
    t_runs++;
    return hdp_fail(e, HDP_ENUMERIC, "broke, \"badly\"");
}
static void t_fields(const hdp_sweep_point *p, hdp_status st, char *buf, size_t size)
{
    (void)p;
    strncat(buf, st == HDP_OK ? ",1" : ",", size - strlen(buf) - 1);
}
static void t_release(hdp_sweep_point *p) { (void)p; }
static hdp_status t_write(const hdp_sweep_runner *r, const hdp_sweep_point *p, void *user,
                          hdp_error *e)
{
    (void)r, (void)p, (void)user, (void)e;
    t_writes++;
    return HDP_OK;
}

static void sweep_point(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=20", "data.n=200", NULL);
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    hdp_sweep_settings set;
    memset(&set, 0, sizeof set);
    const hdp_sweep_runner ok = {"ok", t_columns, t_ok, t_fields, t_release, NULL};
    const hdp_sweep_runner bad = {"bad", t_columns, t_fail, t_fields, t_release, NULL};
    const hdp_sweep_runner *runners[3] = {&ok, &bad, &ok};
    hdp_sweep_point p;
    memset(&p, 0, sizeof p);
    p.m = &m;
    p.opt = &opt;
    p.set = &set;
    static hdp_sweep_outcome out;
    t_runs = t_writes = 0;
    assert_int_equal(hdp_sweep_point_run(runners, 3, &p, "7,a", t_write, NULL, &out, &err),
                     HDP_OK);
    assert_int_equal(out.st, HDP_ENUMERIC);
    assert_int_equal(out.io, HDP_OK);
    assert_int_equal(t_runs, 2);   /* the third runner does not run */
    assert_int_equal(t_writes, 1); /* only after the first, successful run */
    /* epsilon (CKS) of rho = 0.5 at the model's delta, 1e-5 */
    assert_string_equal(out.row, "7,a,20,200,0.1,0.5,2.165715545,1e-05,1,,,failed: broke; ;badly;\n");
    char head[256];
    hdp_sweep_header(runners, 3, &set, head, sizeof head);
    assert_string_equal(head, ",d,n,gamma,rho,epsilon_cks,delta,x,x,x,status\n");
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_functions),     cmocka_unit_test(unfinalized_models),
        cmocka_unit_test(solver_functions),    cmocka_unit_test(privacy_design_rates),
        cmocka_unit_test(family_functions),    cmocka_unit_test(validate_compare),
        cmocka_unit_test(problem_entries),     cmocka_unit_test(grid_runner),
        cmocka_unit_test(driver_functions),    cmocka_unit_test(sweep_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
