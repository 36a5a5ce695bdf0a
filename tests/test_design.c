/* test_design.c — schedule design on the risk ODE (docs/theory.md §3, §5, §6):
 * the optimised optimal / piecewise-linear schedules beat output perturbation and
 * linear noise at small gamma; the written tables are valid schedules that spend
 * exactly rho and reproduce the winner's risk; the rates of docs/theory.md §5 and the order of
 * the families as gamma -> 0. Models are isotropic (Sigma = I, the setting of the
 * theorem in Mondelli's notes) so that an ODE solve costs well under a millisecond. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_multimin.h>

#include "core/ode_grad.h"
#include "hdpsgd/design.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/schedule.h"
#include "testutil.h"

static void optimize(const hdp_model *m, hdp_design_family f, const hdp_design_options *o,
                     const hdp_design_result *hints, int nh, hdp_design_result *r)
{
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_design_optimize(m, f, o, hints, nh, r, &err) != HDP_OK) {
        print_error("hdp_design_optimize(%s): %s\n", hdp_design_family_name(f), err.msg);
        fail();
    }
}

static double ode_risk(const hdp_model *m)
{
    hdp_ode_result r;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_ode_solve(m, &r, &err) != HDP_OK) {
        print_error("hdp_ode_solve: %s\n", err.msg);
        fail();
    }
    double v = r.final_risk;
    hdp_ode_result_free(&r);
    return v;
}

/* gamma = 0.01, d = 200, rho = 1: every family optimised; both optimal and pl beat the
 * optimised output and linear-noise schedules (docs/theory.md §5: the optimal schedule attains
 * the minimax rate gamma + gamma^2/rho^2, the others lose log factors). Also checks the
 * admissibility built into the parametrisation and the written tables. */
static hdp_design_result small_gamma[HDP_FAMILY_COUNT];

static void optimal_beats_output_and_linear_noise(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", "data.d=200", "data.gamma=0.01", "privacy.rho=1",
               NULL);
    hdp_design_options o;
    hdp_design_options_init(&o);
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        optimize(&m, f, &o, small_gamma, f, &small_gamma[f]);
    const hdp_design_result *r = small_gamma;
    double worst_good = fmax(r[HDP_FAMILY_OPTIMAL].final_risk, r[HDP_FAMILY_PL].final_risk);
    double best_bad = fmin(r[HDP_FAMILY_OUTPUT].final_risk, r[HDP_FAMILY_LINEAR_NOISE].final_risk);
    assert_true(worst_good < best_bad);
    /* by a clear margin, far above the ODE's tolerance: 0.0025 vs 0.0034 when written */
    assert_true(worst_good < 0.9 * best_bad);
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        /* docs/theory.md §3: sup eta~ = eta~(0) < 2/gamma; the winner re-solved at the model's
         * settings agrees with the search's value (rtol 1e-7 vs 1e-8) */
        assert_true(r[f].eta0 > 0 && r[f].eta0 < 2.0 / m.gamma);
        assert_true(hdp_design_eta(&r[f], 1.0) <= r[f].eta0);
        assert_rel(r[f].final_risk, r[f].search_risk, 1e-4, 0);
        assert_true(r[f].ode_solves > 0);
    }
    for (int i = 1; i < r[HDP_FAMILY_PL].knots; i++)
        assert_true(r[HDP_FAMILY_PL].knot_eta[i] <= r[HDP_FAMILY_PL].knot_eta[i - 1]);
    /* optimal: c2 = a/gamma and c3 = a rho/gamma reproduce a = gamma max(c2, c3/rho) */
    const hdp_design_result *op = &r[HDP_FAMILY_OPTIMAL];
    assert_rel(m.gamma * fmax(op->c2, op->c3 / m.rho), op->a, 1e-14, 0);
    hdp_model_free(&m);
}

/* The tables written for `hdpsgd sim/validate` (docs/theory.md §5, kind = table): read back by the
 * model loader unchanged, the accountant of docs/theory.md §6 gives rho (relative 1e-12), and
 * their ODE risk is within 1 % of the winner's. */
static void tables_are_valid_schedules(void **state)
{
    (void)state;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        const hdp_design_result *r = &small_gamma[f];
        assert_true(r->table_len >= 2 && r->table_t[0] == 0.0 && r->table_t[r->table_len - 1] == 1.0);
        const char *path = "test_design_table.txt";
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        fprintf(fp, "# written by test_design (family %s)\n", hdp_design_family_name(f));
        for (long i = 0; i < r->table_len; i++)
            fprintf(fp, "%.17g %.17g\n", r->table_t[i], r->table_eta[i]);
        fclose(fp);
        hdp_model m;
        make_model(&m, "data.spectrum=isotropic", "data.d=200", "data.gamma=0.01", "privacy.rho=1",
                   "schedule.kind=table", "schedule.file=test_design_table.txt", NULL);
        remove(path);
        assert_int_equal(m.table_len, (int)r->table_len);
        double risk = ode_risk(&m);
        assert_rel(risk, r->final_risk, 0.01, 0);
        assert_rel(risk, r->table_final_risk, 1e-12, 0);
        hdp_schedule s;
        hdp_sched_from_model(&m, &s);
        assert_rel(hdp_privacy_accountant_schedule(&s, m.n), m.rho, 1e-12, 0);
        hdp_model_free(&m);
    }
    /* the family's own kind (hdp_design_model without the table) gives the same risk */
    hdp_model base;
    make_model(&base, "data.spectrum=isotropic", "data.d=200", "data.gamma=0.01", "privacy.rho=1",
               NULL);
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        hdp_model mm;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_design_model(&base, &small_gamma[f], 0, &mm, &err), HDP_OK);
        assert_rel(ode_risk(&mm), small_gamma[f].final_risk, 1e-12, 0);
        hdp_model_free(&mm);
        hdp_design_result_free(&small_gamma[f]);
    }
    hdp_model_free(&base);
}

/* Joint optimisation over c (docs/theory.md §5: the privacy term grows with max(1, c^2)): never
 * worse than at the model's c, and c stays finite and positive. */
static void tune_clip(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", "data.d=200", "data.gamma=0.01", "privacy.rho=1",
               "clip.c=3", NULL);
    hdp_design_options o;
    hdp_design_options_init(&o);
    hdp_design_result fixed, tuned;
    optimize(&m, HDP_FAMILY_OUTPUT, &o, NULL, 0, &fixed);
    o.tune_clip = 1;
    optimize(&m, HDP_FAMILY_OUTPUT, &o, NULL, 0, &tuned);
    assert_true(tuned.c > 0 && isfinite(tuned.c));
    assert_true(fixed.c == 3.0);
    assert_true(tuned.final_risk <= fixed.final_risk * (1 + 1e-6));
    hdp_design_result_free(&fixed);
    hdp_design_result_free(&tuned);
    hdp_model_free(&m);
}

/* Cancellation (issue 31): the flag set from the progress callback at the end of the scan.
 * Without keep_best no result; with it the best point so far, finished (finite risks, a
 * table that is a valid schedule) and marked unconverged, no worse than the scan's best. */
typedef struct {
    volatile int *flag;
    double scan_best;
    int by_return; /* stop by the callback's return value, not by the flag */
    int scans;
} stop_at_scan;

static int stop_after_scan(const char *what, long done, long total, double value, void *user)
{
    stop_at_scan *s = user;
    hdp_design_family f = HDP_FAMILY_PL;
    assert_true(done >= 0 && total == -1);
    if (hdp_design_progress_event(what, &f) != HDP_DESIGN_SCAN || *s->flag || s->scans++)
        return 0;
    assert_int_equal(f, HDP_FAMILY_OPTIMAL);
    s->scan_best = value;
    if (s->by_return)
        return 1;
    *s->flag = 1;
    return 0;
}

static void cancel_keeps_best(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", "data.d=200", "data.gamma=0.01", "privacy.rho=1", NULL);
    for (int mode = 0; mode <= 2; mode++) { /* no keep_best; keep_best; keep_best by return */
        const int keep = mode >= 1;
        volatile int flag = 0;
        stop_at_scan st = {&flag, NAN, mode == 2, 0};
        hdp_design_options o;
        hdp_design_options_init(&o);
        o.cancel = &flag;
        o.keep_best = keep;
        o.progress = stop_after_scan;
        o.progress_user = &st;
        hdp_design_result r;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_design_optimize(&m, HDP_FAMILY_OPTIMAL, &o, NULL, 0, &r, &err),
                         HDP_ECANCELLED);
        assert_true(flag == (mode != 2) && st.scans == 1 && isfinite(st.scan_best));
        if (!keep) {
            assert_int_equal(r.unconverged, 0);
            assert_null(r.table_t);
        } else {
            assert_int_equal(r.unconverged, 1);
            assert_true(r.search_risk <= st.scan_best);
            assert_true(isfinite(r.final_risk) && isfinite(r.table_final_risk));
            assert_true(fabs(r.final_risk / r.search_risk - 1) < 1e-3);
            assert_true(r.table_len >= 2 && r.ode_solves > 0 && r.ode_solves < 6000);
        }
        hdp_design_result_free(&r);
    }
    hdp_model_free(&m);
}

static void bad_options(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", NULL);
    hdp_design_options o;
    hdp_design_options_init(&o);
    hdp_design_result r;
    hdp_error err;
    hdp_error_clear(&err);
    o.knots = 1;
    assert_int_equal(hdp_design_optimize(&m, HDP_FAMILY_PL, &o, NULL, 0, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "knots"));
    hdp_design_result_free(&r);
    assert_int_equal(hdp_design_family_parse("optimal"), HDP_FAMILY_OPTIMAL);
    assert_int_equal(hdp_design_family_parse("inverse-time"), HDP_FAMILY_INVERSE_TIME);
    assert_string_equal(hdp_design_family_name(HDP_FAMILY_INVERSE_TIME), "inverse-time");
    assert_string_equal(hdp_design_family_column(HDP_FAMILY_INVERSE_TIME), "inverse-time");
    assert_string_equal(hdp_design_family_key(HDP_FAMILY_INVERSE_TIME), "inverse_time");
    o.knots = HDP_DESIGN_MAX_KNOTS + 1;
    hdp_error_clear(&err);
    assert_int_equal(hdp_design_optimize(&m, HDP_FAMILY_PL, &o, NULL, 0, &r, &err), HDP_EINPUT);
    hdp_design_result_free(&r);
    o.knots = 8;
    o.refine = 1;
    o.refine_tol = 0;
    hdp_error_clear(&err);
    assert_int_equal(hdp_design_optimize(&m, HDP_FAMILY_PL, &o, NULL, 0, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "tolerance"));
    hdp_design_result_free(&r);
    o.refine = 0;
    assert_int_equal(hdp_design_method_parse("simplex"), HDP_DESIGN_SIMPLEX);
    assert_int_equal(hdp_design_method_parse("bfgs"), HDP_DESIGN_BFGS);
    assert_int_equal(hdp_design_method_parse("newton"), -1);
    assert_int_equal(hdp_design_family_parse("linear-noise"), HDP_FAMILY_LINEAR_NOISE);
    assert_int_equal(hdp_design_family_parse("bogus"), -1);
    int want[HDP_FAMILY_COUNT];
    hdp_error_clear(&err);
    assert_int_equal(hdp_design_families_parse("pl,output", want, &err), HDP_OK);
    assert_true(want[HDP_FAMILY_PL] && want[HDP_FAMILY_OUTPUT] && !want[HDP_FAMILY_OPTIMAL] &&
                !want[HDP_FAMILY_LINEAR_NOISE]);
    assert_int_equal(hdp_design_families_parse("all", want, &err), HDP_OK);
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) assert_true(want[f]);
    /* as written in a sweep file: blanks around the names */
    assert_int_equal(hdp_design_families_parse(" optimal ,\tlinear-noise", want, &err), HDP_OK);
    assert_true(want[HDP_FAMILY_OPTIMAL] && want[HDP_FAMILY_LINEAR_NOISE] && !want[HDP_FAMILY_PL] &&
                !want[HDP_FAMILY_OUTPUT]);
    assert_int_equal(hdp_design_families_parse("output,bogus", want, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "'bogus'"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_design_families_parse(",", want, &err), HDP_EINPUT);
    assert_string_equal(hdp_design_family_key(HDP_FAMILY_LINEAR_NOISE), "linear_noise");
    hdp_model_free(&m);
}

/* docs/theory.md §5's rates and the slope fit: exact values, and the local log-log slopes of the
 * rates order output < linear-noise < optimal at small gamma (1 - 1/L, 1 - (2/3)/L, 1 with
 * L = log(1/gamma), when the privacy term is negligible). */
static void rate_formulas(void **state)
{
    (void)state;
    double g = 1e-3, L = log(1e3), rho = 2;
    assert_rel(hdp_design_rate_theory(HDP_FAMILY_OUTPUT, g, rho), g * L + g * g * L * L / 4, 1e-14, 0);
    assert_rel(hdp_design_rate_theory(HDP_FAMILY_LINEAR_NOISE, g, rho),
               g * pow(L, 2.0 / 3) + g * g * pow(L, 4.0 / 3) / 4, 1e-14, 0);
    assert_rel(hdp_design_rate_theory(HDP_FAMILY_OPTIMAL, g, rho), g + g * g / 4, 1e-14, 0);
    assert_rel(hdp_design_rate_theory(HDP_FAMILY_OPTIMAL, g, INFINITY), g, 1e-15, 0);
    assert_true(isnan(hdp_design_rate_theory(HDP_FAMILY_OPTIMAL, 1.5, rho)));
    double x[5], y[5];
    for (int i = 0; i < 5; i++) {
        x[i] = pow(10, -3 + 0.25 * i);
        y[i] = 7 * pow(x[i], 1.7);
    }
    assert_rel(hdp_loglog_slope(x, y, 5), 1.7, 1e-12, 0);
    assert_true(isnan(hdp_loglog_slope(x, y, 1)));
    double s[3];
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < 5; i++) y[i] = hdp_design_rate_theory(f, x[i], INFINITY);
        s[f] = hdp_loglog_slope(x, y, 5);
    }
    assert_true(s[HDP_FAMILY_OUTPUT] < s[HDP_FAMILY_LINEAR_NOISE]);
    assert_true(s[HDP_FAMILY_LINEAR_NOISE] < s[HDP_FAMILY_OPTIMAL]);
    assert_rel(s[HDP_FAMILY_OPTIMAL], 1.0, 1e-12, 0);
}

/* The theorem of docs/theory.md §5 on the ODE, gamma = 1e-3 .. 1e-2 (one decade), rho = 1, c = 0.3:
 *  (a) at the smallest gamma the optimised risks are ordered optimal < linear-noise < output;
 *  (b) the gaps grow as gamma -> 0: risk_output/risk_optimal and
 *      risk_linear-noise/risk_optimal increase as gamma decreases, i.e. the fitted log-log
 *      slopes are ordered output < linear-noise < optimal, as for the rates
 *      gamma log(1/gamma), gamma log^(2/3)(1/gamma), gamma (local slopes 1 - 1/L,
 *      1 - (2/3)/L, 1): output and linear noise lose the factors log(1/gamma) and
 *      log^(2/3)(1/gamma) against the minimax rate, and the loss grows as gamma -> 0.
 * Constants are not part of the theorem, so the slopes themselves are not compared with
 * the rates' values (they differ by a few hundredths to a tenth at these gamma). */
static void rates_order_as_theorem(void **state)
{
    (void)state;
    const double gammas[] = {1e-3, 3.1622776601683794e-3, 1e-2};
    double risk[3][3], gx[3];
    hdp_design_options o;
    hdp_design_options_init(&o);
    for (int i = 0; i < 3; i++) {
        char gset[64];
        snprintf(gset, sizeof gset, "data.gamma=%.17g", gammas[i]);
        hdp_model m;
        make_model(&m, "data.spectrum=isotropic", "data.d=200", "privacy.rho=1", gset, NULL);
        gx[i] = m.gamma;
        hdp_design_result r[3];
        for (int f = 0; f < 3; f++) {
            optimize(&m, f, &o, r, f, &r[f]);
            risk[f][i] = r[f].final_risk;
        }
        for (int f = 0; f < 3; f++) hdp_design_result_free(&r[f]);
        hdp_model_free(&m);
    }
    assert_true(risk[HDP_FAMILY_OPTIMAL][0] < risk[HDP_FAMILY_LINEAR_NOISE][0]);
    assert_true(risk[HDP_FAMILY_LINEAR_NOISE][0] < risk[HDP_FAMILY_OUTPUT][0]);
    for (int i = 0; i + 1 < 3; i++) {
        assert_true(risk[HDP_FAMILY_OUTPUT][i] / risk[HDP_FAMILY_OPTIMAL][i] >
                    risk[HDP_FAMILY_OUTPUT][i + 1] / risk[HDP_FAMILY_OPTIMAL][i + 1]);
        assert_true(risk[HDP_FAMILY_LINEAR_NOISE][i] / risk[HDP_FAMILY_OPTIMAL][i] >
                    risk[HDP_FAMILY_LINEAR_NOISE][i + 1] / risk[HDP_FAMILY_OPTIMAL][i + 1]);
    }
    double s[3];
    for (int f = 0; f < 3; f++) s[f] = hdp_loglog_slope(gx, risk[f], 3);
    print_message("fitted slopes on [1e-3, 1e-2]: output %.3f, linear-noise %.3f, optimal %.3f\n",
                  s[0], s[1], s[2]);
    assert_true(s[HDP_FAMILY_OUTPUT] < s[HDP_FAMILY_LINEAR_NOISE]);
    assert_true(s[HDP_FAMILY_LINEAR_NOISE] < s[HDP_FAMILY_OPTIMAL]);
}

/* ---- the gradient (src/core/ode_grad.c, issue 21) ---- */

/* F and its gradient at the schedule s: the discretisation's value against hdp_ode_solve at
 * rtol 1e-11 (relative 2e-7: the Runge-Kutta grid's own error), every component of the
 * gradient against central differences of the same discretisation (relative step 1e-5,
 * truncation error ~1e-10 relative). The derivative in a (inverse-time) is compared at 1e-5:
 * the grid follows a (steps proportional to t + a), so the differences also move the grid,
 * which the exact derivative of the discretisation at a fixed grid does not see. */
static void check_gradient(hdp_ode_grad *g, const hdp_model *m, hdp_schedule *s, int with_c)
{
    double ds[16], dc = 0;
    double F = hdp_ode_grad_eval(g, s, m->c, ds, with_c ? &dc : NULL);
    assert_true(isfinite(F));
    /* value: against hdp_ode_solve on the same schedule */
    hdp_model mm = model_of_schedule(m, s);
    assert_rel(F, ode_risk(&mm), 2e-7, 0);
    int np = s->kind == HDP_SCHED_TABLE ? s->len : s->kind == HDP_SCHED_OPTIMAL ? 2 : 1;
    double scale = 0;
    for (int i = 0; i < np; i++) scale = fmax(scale, fabs(ds[i]));
    for (int i = 0; i < np; i++) {
        double *x = s->kind == HDP_SCHED_TABLE ? (double *)&s->eta[i]
                    : s->kind == HDP_SCHED_OPTIMAL ? (i == 0 ? &s->c1 : &s->a)
                                                   : &s->eta0;
        double x0 = *x, h = 1e-5 * x0;
        *x = x0 + h;
        double Fp = hdp_ode_grad_eval(g, s, m->c, NULL, NULL);
        *x = x0 - h;
        double Fm = hdp_ode_grad_eval(g, s, m->c, NULL, NULL);
        *x = x0;
        double fd = (Fp - Fm) / (2 * h);
        double tol = (s->kind == HDP_SCHED_OPTIMAL && i == 1) ? 1e-5 : 1e-7;
        if (!(fabs(ds[i] - fd) <= tol * fmax(fabs(fd), scale)))
            print_error("kind %d parameter %d: gradient %.12g, differences %.12g\n", (int)s->kind,
                        i, ds[i], fd);
        assert_true(fabs(ds[i] - fd) <= tol * fmax(fabs(fd), scale));
    }
    if (with_c) {
        double h = 1e-5 * m->c;
        double fd = (hdp_ode_grad_eval(g, s, m->c + h, NULL, NULL) -
                     hdp_ode_grad_eval(g, s, m->c - h, NULL, NULL)) / (2 * h);
        /* Gaussian labels: the c-derivative is exact (1e-7); other laws: exact from the
         * fitted factors, but the differences compare two fits at c -+ h, each within
         * ~1e-11 relative, divided by 2h = 2e-5 c (1e-5) */
        double tol = m->noise == HDP_NOISE_GAUSSIAN ? 1e-7 : 1e-5;
        if (!(fabs(dc - fd) <= tol * fabs(fd)))
            print_error("kind %d: dF/dc %.12g, differences %.12g\n", (int)s->kind, dc, fd);
        assert_true(fabs(dc - fd) <= tol * fabs(fd));
    }
}

static void gradient_on_model(const hdp_model *m, int all_kinds)
{
    hdp_ode_grad g;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_ode_grad_init(&g, m, &err), HDP_OK);
    hdp_schedule s;
    hdp_sched_from_model(m, &s); /* the model's inverse-time schedule */
    int with_c = isfinite(m->c);
    if (all_kinds)
        check_gradient(&g, m, &s, with_c);
    hdp_schedule o = s;
    o.kind = HDP_SCHED_OUTPUT;
    o.eta0 = 0.4 / m->gamma;
    if (all_kinds)
        check_gradient(&g, m, &o, with_c);
    o.kind = HDP_SCHED_LINEAR_NOISE;
    o.eta0 = 0.9 / m->gamma;
    if (all_kinds)
        check_gradient(&g, m, &o, with_c);
    /* a table of 7 knots with a flat stretch and a kink */
    double t[7], e[7];
    for (int i = 0; i < 7; i++) {
        t[i] = i / 6.0;
        e[i] = i < 2 ? 0.8 / m->gamma : hdp_sched_eta(&s, t[i]);
        if (i > 0 && e[i] > e[i - 1]) e[i] = e[i - 1];
    }
    hdp_schedule tb = s;
    tb.kind = HDP_SCHED_TABLE;
    tb.len = 7;
    tb.t = t;
    tb.eta = e;
    check_gradient(&g, m, &tb, with_c);
    /* the checkpointed reverse pass (states recomputed from every sqrt(N)-th) gives the same
     * numbers as the one that keeps every state: the same operations in the same order */
    double d_all[7], d_ck[7], c_all = 0, c_ck = 0;
    double F_all = hdp_ode_grad_eval(&g, &tb, m->c, d_all, with_c ? &c_all : NULL);
    g.store = 100;
    double F_ck = hdp_ode_grad_eval(&g, &tb, m->c, d_ck, with_c ? &c_ck : NULL);
    assert_true(F_all == F_ck && c_all == c_ck);
    for (int i = 0; i < 7; i++) assert_true(d_all[i] == d_ck[i]);
    hdp_ode_grad_free(&g);
}

static void gradient_matches_differences(void **state)
{
    (void)state;
    hdp_model m;
    /* the default model's kind: power-law spectrum, heavy clipping, rho = 0.5 (fewer dims) */
    make_model(&m, "data.d=40", NULL);
    gradient_on_model(&m, 1);
    hdp_model_free(&m);
    make_model(&m, "data.spectrum=isotropic", "data.d=200", "data.gamma=0.01", "privacy.rho=1", NULL);
    gradient_on_model(&m, 1);
    hdp_model_free(&m);
    /* batched one pass (issue 33, docs/theory.md §3.11): the batch's terms kappa = (B - 1)/n
     * in the right-hand side, its Jacobian and the parameters' adjoints */
    make_model(&m, "data.d=40", "sgd.batch=16", NULL);
    gradient_on_model(&m, 1);
    hdp_model_free(&m);
    make_model(&m, "data.spectrum=isotropic", "data.d=200", "data.gamma=0.1", "sgd.batch=64", NULL);
    gradient_on_model(&m, 1);
    hdp_model_free(&m);
    /* Student-t labels (the clipping factors fitted once per c, docs/theory.md §2.3: the
     * gradient is that of the fitted ODE, every schedule kind) */
    make_model(&m, "data.d=8", "data.noise=student", "clip.c=0.8", NULL);
    gradient_on_model(&m, 1);
    hdp_model_free(&m);
}

/* ---- the optimum (issue 21) ---- */

/* The reference: an independent minimiser of the same parametrisation, written here —
 * eta~(0) = (2/gamma) sigmoid(p_0), eta~(t_i) = eta~(t_{i-1}) sigmoid(p_i) — on hdp_ode_solve at
 * rtol 1e-10 (not the discretisation of ode_grad.c), by Nelder-Mead from a grid of starts,
 * each restarted until it no longer improves. */
typedef struct {
    hdp_model m;
    int K;
    double t[8], e[8];
} ref_problem;

static double ref_f(const gsl_vector *x, void *user)
{
    ref_problem *q = user;
    for (int i = 0; i < q->K; i++) {
        double p = gsl_vector_get(x, (size_t)i);
        double sg = p > 35 ? 1.0 : 1.0 / (1.0 + exp(-p));
        q->e[i] = i == 0 ? 2.0 / q->m.gamma * sg : q->e[i - 1] * sg;
    }
    hdp_ode_result r;
    hdp_error err;
    hdp_error_clear(&err);
    double v = hdp_ode_solve(&q->m, &r, &err) == HDP_OK ? r.final_risk : 1e30;
    hdp_ode_result_free(&r);
    return v;
}

static double reference_pl_optimum(const hdp_model *base, int K)
{
    ref_problem q;
    q.m = *base;
    q.K = K;
    q.m.rtol = 1e-10;
    q.m.atol = 1e-14;
    q.m.points = 2;
    q.m.sched = HDP_SCHED_TABLE;
    q.m.table_len = K;
    q.m.table_t = q.t;
    q.m.table_eta = q.e;
    for (int i = 0; i < K; i++) q.t[i] = i == K - 1 ? 1.0 : (double)i / (K - 1);
    gsl_multimin_function F = {ref_f, (size_t)K, &q};
    gsl_vector *x = gsl_vector_alloc((size_t)K), *ss = gsl_vector_alloc((size_t)K);
    gsl_multimin_fminimizer *mm = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, (size_t)K);
    double best = INFINITY;
    for (int a = 0; a < 2; a++)          /* eta~(0) gamma/2 = 0.1, 0.5 */
        for (int b = 0; b < 2; b++) {    /* ratios 0.6, 0.95 */
            const double u0[] = {0.1, 0.5}, rr[] = {0.6, 0.95};
            gsl_vector_set(x, 0, log(u0[a] / (1 - u0[a])));
            for (int i = 1; i < K; i++) gsl_vector_set(x, (size_t)i, log(rr[b] / (1 - rr[b])));
            double prev = INFINITY, step = 1.0;
            for (int round = 0; round < 12; round++) {
                gsl_vector_set_all(ss, step);
                gsl_multimin_fminimizer_set(mm, &F, x, ss);
                for (int it = 0; it < 5000; it++) {
                    if (gsl_multimin_fminimizer_iterate(mm)) break;
                    if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(mm), 1e-8) == GSL_SUCCESS) break;
                }
                gsl_vector_memcpy(x, gsl_multimin_fminimizer_x(mm));
                double f = gsl_multimin_fminimizer_minimum(mm);
                if (!(prev - f > 1e-13 * f)) { prev = fmin(prev, f); break; }
                prev = f;
                step = fmax(0.05, step * 0.5);
            }
            best = fmin(best, prev);
        }
    gsl_multimin_fminimizer_free(mm);
    gsl_vector_free(x);
    gsl_vector_free(ss);
    return best;
}

/* On a one-bin isotropic model the designer's pl optimum agrees with the reference to
 * 1e-5 relative, at K = 3 and 5. */
static void pl_optimum_matches_reference(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", "data.d=100", "data.gamma=0.02", "privacy.rho=1",
               "clip.c=0.5", "ode.rtol=1e-10", "ode.atol=1e-14", NULL);
    for (int K = 3; K <= 5; K += 2) {
        hdp_design_options o;
        hdp_design_options_init(&o);
        o.knots = K;
        hdp_design_result r;
        optimize(&m, HDP_FAMILY_PL, &o, NULL, 0, &r);
        double ref = reference_pl_optimum(&m, K);
        print_message("K = %d: bfgs %.12g, reference Nelder-Mead %.12g\n", K, r.final_risk, ref);
        assert_rel(r.final_risk, ref, 1e-5, 0);
        hdp_design_result_free(&r);
    }
    hdp_model_free(&m);
}

/* refine: the levels double the segments (K -> 2K - 1, nested knots), each started from
 * the coarser optimum, so their risks never increase; the last two agree to refine_tol
 * (or the knot limit ended it); the result has the last level's knots. */
static void refine_is_monotone(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=40", NULL);
    hdp_design_options o;
    hdp_design_options_init(&o);
    o.knots = 4;
    o.refine = 1;
    o.refine_tol = 1e-6;
    hdp_design_result r;
    optimize(&m, HDP_FAMILY_PL, &o, NULL, 0, &r);
    assert_true(r.levels >= 2);
    for (int l = 1; l < r.levels; l++) {
        assert_int_equal(r.level_knots[l], 2 * r.level_knots[l - 1] - 1);
        assert_true(r.level_risk[l] <= r.level_risk[l - 1]);
    }
    int L = r.levels - 1;
    assert_true(fabs(r.level_risk[L] - r.level_risk[L - 1]) <= 1e-6 * r.level_risk[L] ||
                2 * r.level_knots[L] - 1 > HDP_DESIGN_MAX_KNOTS);
    assert_int_equal(r.knots, r.level_knots[L]);
    for (int i = 1; i < r.knots; i++) assert_true(r.knot_eta[i] <= r.knot_eta[i - 1]);
    assert_rel(r.final_risk, r.search_risk, 1e-6, 0);
    /* the direct optimum at the same K, never better than the refined one by more than the
     * search's convergence */
    hdp_design_result d;
    o.refine = 0;
    o.knots = 4;
    optimize(&m, HDP_FAMILY_PL, &o, NULL, 0, &d);
    assert_true(r.final_risk <= d.final_risk);
    hdp_design_result_free(&d);
    hdp_design_result_free(&r);
    hdp_model_free(&m);
}

/* The privacy a closed-form family needs to match a target: re-optimised at that rho it
 * reaches the target (Brent to 1e-4 in rho: the risk to ~1e-5); more than the model's rho
 * for a target below its own optimum; inf for a target under its non-private floor. */
static void rho_equivalent(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.spectrum=isotropic", "data.d=100", "data.gamma=0.02", "privacy.rho=1",
               "clip.c=0.5", NULL);
    hdp_design_options o;
    hdp_design_options_init(&o);
    hdp_design_result r;
    optimize(&m, HDP_FAMILY_OUTPUT, &o, NULL, 0, &r);
    double target = 0.97 * r.final_risk, rho = NAN;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_design_rho_equivalent(&m, HDP_FAMILY_OUTPUT, &o, target, &rho, NULL, &err), HDP_OK);
    assert_true(rho > m.rho && isfinite(rho));
    hdp_model mm = m;
    mm.rho = rho;
    hdp_design_result r2;
    optimize(&mm, HDP_FAMILY_OUTPUT, &o, NULL, 0, &r2);
    assert_rel(r2.final_risk, target, 1e-4, 0);
    assert_int_equal(hdp_design_rho_equivalent(&m, HDP_FAMILY_OUTPUT, &o, 1e-9, &rho, NULL, &err), HDP_OK);
    assert_true(isinf(rho));
    hdp_design_result_free(&r);
    hdp_design_result_free(&r2);
    hdp_model_free(&m);
}

/* the what of every design report reads back as its family and event; other words are not
 * design reports */
static void progress_words(void **state)
{
    (void)state;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        for (int e = 0; e < HDP_DESIGN_EVENT_COUNT; e++) {
            hdp_design_family g = HDP_FAMILY_COUNT;
            const char *what = hdp_design_progress_what((hdp_design_family)f, (hdp_design_event)e);
            assert_int_equal(hdp_design_progress_event(what, &g), e);
            assert_int_equal(g, f);
            assert_non_null(strstr(what, hdp_design_family_name((hdp_design_family)f)));
        }
    assert_int_equal(hdp_design_progress_event("sim", NULL), -1);
    assert_int_equal(hdp_design_progress_event(NULL, NULL), -1);
    assert_string_equal(hdp_design_progress_what(HDP_FAMILY_COUNT, HDP_DESIGN_SCAN), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(optimal_beats_output_and_linear_noise),
        cmocka_unit_test(tables_are_valid_schedules),
        cmocka_unit_test(tune_clip),
        cmocka_unit_test(progress_words),
        cmocka_unit_test(cancel_keeps_best),
        cmocka_unit_test(bad_options),
        cmocka_unit_test(rate_formulas),
        cmocka_unit_test(rates_order_as_theorem),
        cmocka_unit_test(gradient_matches_differences),
        cmocka_unit_test(pl_optimum_matches_reference),
        cmocka_unit_test(refine_is_monotone),
        cmocka_unit_test(rho_equivalent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
