/*
 * test_ode_grad_data.c — the exact gradient of the risk ODE (core/ode_grad.h) on a data set
 * (data.source = file, docs/theory.md §9): the rows' clipping factors, the clipping bias's
 * cross term and R_bias, the heteroscedastic correction carried as extra states, forward and
 * reverse. On a small data set written here (400 rows, d = 12, heteroscedastic skewed
 * residuals, so that every correction is large): the value against hdp_ode_solve's corrected
 * final risk, the corrections' part against the sizes `ode` reports, and the gradient in
 * every schedule kind's parameters against central differences.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model_internal.h"
#include "core/ode_grad.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/schedule.h"
#include "testutil.h"

#define N_ROWS 400
#define D 12

static char dir[64], xpath[96], ypath[96], xkey[128], ykey[128];

static double unif(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(unsigned long long *s)
{
    return sqrt(-2.0 * log(unif(s))) * cos(6.283185307179586 * unif(s));
}

/* X: columns of scales 3 .. 0.3 and mean 1.5; y = x^T w + (0.2 + 0.4 |x_1 - 1.5|) (E - 1),
 * E exponential: residuals skewed and larger on the rows of large first coordinate */
static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hdp_grad_data_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(xpath, sizeof xpath, "%s/X.csv", dir);
    snprintf(ypath, sizeof ypath, "%s/y.csv", dir);
    FILE *fx = fopen(xpath, "w"), *fy = fopen(ypath, "w");
    if (!fx || !fy)
        return -1;
    unsigned long long s = 12345;
    double w[D];
    for (int j = 0; j < D; j++) w[j] = 0.3 * gauss(&s);
    for (int i = 0; i < N_ROWS; i++) {
        double x[D], y = 0;
        for (int j = 0; j < D; j++) {
            x[j] = (3.0 - 2.7 * j / (D - 1.0)) * gauss(&s) + 1.5;
            y += (x[j] - 1.5) * w[j];
            fprintf(fx, "%s%.17g", j ? "," : "", x[j]);
        }
        y += (0.2 + 0.4 * fabs(x[0] - 1.5)) * (-log(unif(&s)) - 1.0);
        fprintf(fx, "\n");
        fprintf(fy, "%.17g\n", y);
    }
    int bad = fclose(fx) | fclose(fy);
    snprintf(xkey, sizeof xkey, "data.features=%s", xpath);
    snprintf(ykey, sizeof ykey, "data.labels=%s", ypath);
    return bad ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    remove(xpath);
    remove(ypath);
    rmdir(dir);
    return 0;
}

/* hdp_ode_solve's final risk of m with schedule s at tight tolerances (and the result) */
static double ode_at(const hdp_model *m, const hdp_schedule *s, hdp_ode_result *out)
{
    hdp_model mm = model_of_schedule(m, s); /* not freed: the data set stays m's */
    hdp_error err;
    hdp_error_clear(&err);
    hdp_ode_result r;
    assert_int_equal(hdp_ode_solve(&mm, &r, &err), HDP_OK);
    if (mm.data_bias_pin != m->data_bias_pin) /* the pin of theta_c this shallow copy took */
        hdp_data_bias_unpin(&mm);
    double F = r.final_risk;
    if (out)
        *out = r;
    else
        hdp_ode_result_free(&r);
    return F;
}

/* the gradient in the schedule's parameters against central differences (relative steps
 * 1e-5: truncation ~1e-10 relative, rounding ~1e-16 / 1e-5 of F); the value against the
 * corrected ODE (the discretisations differ: RK4 on the gradient's grid and CVODE, Simpson's
 * rule and the exact pieces of data_ode.c on the output points) */
static void check_gradient(hdp_ode_grad *g, const hdp_model *m, hdp_schedule *s, double vtol)
{
    double ds[16];
    double F = hdp_ode_grad_eval(g, s, m->c, ds, NULL);
    assert_true(isfinite(F));
    assert_rel(F, ode_at(m, s, NULL), vtol, 0);
    int np = s->kind == HDP_SCHED_TABLE ? s->len : s->kind == HDP_SCHED_OPTIMAL ? 2 : 1;
    double scale = 0;
    for (int i = 0; i < np; i++) scale = fmax(scale, fabs(ds[i]));
    assert_true(scale > 0);
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
        if (!(fabs(ds[i] - fd) <= 1e-7 * fmax(fabs(fd), scale)))
            print_error("kind %d parameter %d: gradient %.12g, differences %.12g\n", (int)s->kind,
                        i, ds[i], fd);
        assert_true(fabs(ds[i] - fd) <= 1e-7 * fmax(fabs(fd), scale));
    }
}

/* dF/dc of the exact gradient at c against central differences (h = 1e-5 c) to relative tol,
 * F finite; *F (when not NULL) gets F, the return value dF/dc */
static double dfdc_matches(hdp_ode_grad *g, const hdp_schedule *s, double c, double tol,
                           const char *what, double *F)
{
    double ds[2], dc = 0, h = 1e-5 * c;
    double f = hdp_ode_grad_eval(g, s, c, ds, &dc);
    assert_true(isfinite(f));
    double fd = (hdp_ode_grad_eval(g, s, c + h, NULL, NULL) -
                 hdp_ode_grad_eval(g, s, c - h, NULL, NULL)) / (2 * h);
    print_message("%s: dF/dc %.12g, differences %.12g\n", what, dc, fd);
    assert_rel(dc, fd, tol, 0);
    if (F)
        *F = f;
    return dc;
}

/* every kind of schedule: the model's inverse-time (c1, a), output, linear-noise, a table of
 * 7 knots with a flat stretch and a kink; and the checkpointed reverse pass */
static void gradient_on_model(const hdp_model *m, hdp_ode_grad *g, double vtol)
{
    hdp_schedule s, o;
    hdp_sched_from_model(m, &s);
    check_gradient(g, m, &s, vtol);
    o = s;
    o.kind = HDP_SCHED_OUTPUT;
    o.eta0 = 0.4 / m->gamma;
    check_gradient(g, m, &o, vtol);
    o.kind = HDP_SCHED_LINEAR_NOISE;
    o.eta0 = 0.9 / m->gamma;
    check_gradient(g, m, &o, vtol);
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
    check_gradient(g, m, &tb, vtol);
    double d_all[7], d_ck[7];
    double F_all = hdp_ode_grad_eval(g, &tb, m->c, d_all, NULL);
    double store = g->store;
    g->store = 100;
    double F_ck = hdp_ode_grad_eval(g, &tb, m->c, d_ck, NULL);
    g->store = store;
    assert_true(F_all == F_ck);
    for (int i = 0; i < 7; i++) assert_true(d_all[i] == d_ck[i]);
}

/* least squares at c = 0.5, rho = 0.5: bias, cross term, heteroscedastic term (the value
 * within 1e-5 of the ODE's: measured 1.6e-7 to 2.6e-6 over the four schedules) */
static void clipped_labels(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.source=file", xkey, ykey, "data.gamma=0.1", "clip.c=0.5",
               "privacy.rho=0.5", NULL);
    hdp_ode_grad g;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_ode_grad_init(&g, &m, &err), HDP_OK);
    assert_true(g.data.on && g.data_model && g.ns == 2 * g.spec.m + 1);
    assert_true(g.data.risk_bias > 0);
    /* the corrections' part of F: with the extra states dropped F is the shifted problem's
     * R_c(1) + final noise; the difference is cross(1) + R_bias + the heteroscedastic term as
     * `ode` reports them (1e-4: the two discretisations of I(t) and delta(t)) */
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    double F = hdp_ode_grad_eval(&g, &s, m.c, NULL, NULL);
    long ns = g.ns;
    g.ns = g.spec.m;
    double Fc = hdp_ode_grad_eval(&g, &s, m.c, NULL, NULL);
    g.ns = ns;
    hdp_ode_result r;
    double Fo = ode_at(&m, &s, &r);
    double parts = r.data_cross_final + r.data_risk_bias + r.data_hetero_final;
    print_message("F %.10g (ode %.10g), corrections %.6g (ode: cross %.6g, bias %.6g, "
                  "hetero %.6g)\n", F, Fo, F - Fc, r.data_cross_final, r.data_risk_bias,
                  r.data_hetero_final);
    assert_true(fabs(r.data_cross_final) > 1e-3 * Fo && fabs(r.data_hetero_final) > 1e-4 * Fo);
    assert_rel(F - Fc, parts, 1e-4, 0);
    assert_rel(g.data.risk_bias, r.data_risk_bias, 1e-14, 0);
    hdp_ode_result_free(&r);
    gradient_on_model(&m, &g, 1e-5);
    /* c is the model's: another c gives NAN, dF/dc is NAN */
    assert_true(isnan(hdp_ode_grad_eval(&g, &s, 0.6, NULL, NULL)));
    double dsv[2], dc = 0;
    assert_true(isfinite(hdp_ode_grad_eval(&g, &s, m.c, dsv, &dc)) && isnan(dc));
    hdp_ode_grad_free(&g);
    hdp_model_free(&m);
}

/* c = inf, rho = inf: no bias, the heteroscedastic term alone; and 4 quantile bins, where the
 * directions' h_j are given to the nearest bin */
static void unclipped_and_binned(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.source=file", xkey, ykey, "data.gamma=0.1", "clip.c=inf",
               "privacy.rho=inf", NULL);
    hdp_ode_grad g;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_ode_grad_init(&g, &m, &err), HDP_OK);
    assert_true(g.data.on && g.data.risk_bias == 0);
    gradient_on_model(&m, &g, 1e-5);
    hdp_ode_grad_free(&g);
    hdp_model_free(&m);
    make_model(&m, "data.source=file", xkey, ykey, "data.gamma=0.1", "clip.c=0.5",
               "privacy.rho=0.5", "ode.bins=4", NULL);
    assert_int_equal(hdp_ode_grad_init(&g, &m, &err), HDP_OK);
    assert_true(g.data.on && g.spec.m == 4);
    /* the value: the heteroscedastic term on 4 bins of 3 directions each differs from the
     * ODE's over the d directions (measured: 0.3 to 0.8 % of F here, exact bins 2.6e-6); the
     * gradient of the discretisation stays exact */
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    double ds[2];
    double F = hdp_ode_grad_eval(&g, &s, m.c, ds, NULL);
    assert_rel(F, ode_at(&m, &s, NULL), 2e-2, 0);
    gradient_on_model(&m, &g, 2e-2);
    hdp_ode_grad_free(&g);
    hdp_model_free(&m);
}

/* planted target on the rows: the rows' clipping factors, no extra states, c free */
static void planted(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.source=file", xkey, "data.target=planted", "data.gamma=0.1",
               "clip.c=0.5", "privacy.rho=0.5", NULL);
    hdp_ode_grad g;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(hdp_ode_grad_init(&g, &m, &err), HDP_OK);
    assert_true(!g.data.on && g.data_model == 2 && g.ns == g.spec.m);
    gradient_on_model(&m, &g, 1e-5);
    /* c is free (the rows' factors fitted again at each c): dF/dc from the groups' dmu/dc
     * and the plain law's dV/dc against central differences, for every kind of schedule;
     * back at the model's c the same F */
    hdp_schedule s, o;
    hdp_sched_from_model(&m, &s);
    o = s;
    o.kind = HDP_SCHED_OUTPUT;
    o.eta0 = 0.4 / m.gamma;
    const hdp_schedule *kinds[] = {&s, &o};
    for (int i = 0; i < 2; i++) {
        char what[32];
        snprintf(what, sizeof what, "planted, kind %d", (int)kinds[i]->kind);
        double F, dc = dfdc_matches(&g, kinds[i], m.c, 1e-7, what, &F);
        assert_true(isfinite(dc) && fabs(dc) > 0);
        assert_true(hdp_ode_grad_eval(&g, kinds[i], m.c, NULL, NULL) == F);
    }
    hdp_ode_grad_free(&g);
    hdp_model_free(&m);
    /* Laplace label noise: each group's dmu/dc from its fitted factors (the heat equation's
     * identity); the differences compare fits at c -+ h (1e-5, as unit_design) */
    make_model(&m, "data.source=file", xkey, "data.target=planted", "data.gamma=0.1",
               "data.noise=laplace", "clip.c=0.5", "privacy.rho=0.5", NULL);
    assert_int_equal(hdp_ode_grad_init(&g, &m, &err), HDP_OK);
    hdp_sched_from_model(&m, &s);
    dfdc_matches(&g, &s, m.c, 1e-5, "planted, Laplace", NULL);
    hdp_ode_grad_free(&g);
    hdp_model_free(&m);
}

/* ode.clip_weights = direction and direction-noise (docs/theory.md §9.3): the bins' weights
 * (each bin's drift weights sum to 1 over the groups: sum_g p_g E[x_j^2 | g] = lambda_j; with
 * direction-noise they are the norm weights p_g w_g), the value against the
 * ODE's (CVODE) and the gradient against central differences, least squares and planted (with
 * dF/dc), the bounds around the risk, and the combinations refused */
static void direction_weights(void **state)
{
    (void)state;
    const char *lab[] = {ykey, "data.target=planted"};
    const char *mode[] = {"ode.clip_weights=direction", "ode.clip_weights=direction-noise"};
    for (int k = 0; k < 4; k++) {
        hdp_model m, mn;
        make_model(&m, "data.source=file", xkey, lab[k % 2], "data.gamma=0.1", "clip.c=0.5",
                   "privacy.rho=0.5", mode[k / 2], NULL);
        make_model(&mn, "data.source=file", xkey, lab[k % 2], "data.gamma=0.1", "clip.c=0.5",
                   "privacy.rho=0.5", "ode.clip_weights=norm", NULL);
        hdp_ode_grad g;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_ode_grad_init(&g, &m, &err), HDP_OK);
        assert_true(g.dir_ng == 400 / 64 && g.spec.m == D);
        for (long b = 0; b < g.spec.m; b++) {
            double sa = 0;
            for (int i = 0; i < g.dir_ng; i++) {
                assert_true(g.dir_wa[b * g.dir_ng + i] >= 0);
                sa += g.dir_wa[b * g.dir_ng + i];
                if (k >= 2) /* direction-noise: the drift's weights are the norm's, p_g w_g,
                               the same for every bin */
                    assert_true(g.dir_wa[b * g.dir_ng + i] == g.dir_wa[i]);
            }
            assert_rel(sa, 1.0, 1e-12, 0);
        }
        hdp_schedule s;
        hdp_sched_from_model(&m, &s);
        hdp_ode_result r, rn;
        double F = ode_at(&m, &s, &r), Fn = ode_at(&mn, &s, &rn);
        print_message("direction %d: F %.10g, norm weights %.10g\n", k, F, Fn);
        assert_true(fabs(F - Fn) > 1e-3 * Fn); /* the weights matter on these rows */
        for (long i = 0; i < r.points; i++)
            assert_true(r.lower[i] <= r.risk[i] * (1 + 1e-9) &&
                        r.risk[i] <= r.upper[i] * (1 + 1e-9));
        assert_string_equal(r.solver, "cvode");
        hdp_ode_result_free(&r);
        hdp_ode_result_free(&rn);
        gradient_on_model(&m, &g, 1e-5);
        if (k % 2) /* planted: dF/dc through the bins' weights on the groups' dmu/dc, dV/dc */
            dfdc_matches(&g, &s, m.c, 1e-7, "direction, planted", NULL);
        hdp_ode_grad_free(&g);
        hdp_model_free(&m);
        hdp_model_free(&mn);
    }
    /* refused: with ode.discrete, with solver = dop853, on a synthetic model */
    const char *bad[][2] = {{"ode.discrete=true", "ode.solver=cvode"},
                            {"ode.solver=dop853", "ode.discrete=false"}};
    for (int k = 0; k < 2; k++) {
        hdp_model m;
        make_model(&m, "data.source=file", xkey, ykey, "clip.c=0.5",
                   "ode.clip_weights=direction", bad[k][0], bad[k][1], NULL);
        hdp_error err;
        hdp_error_clear(&err);
        hdp_ode_result r;
        assert_int_equal(hdp_ode_solve(&m, &r, &err), HDP_EINPUT);
        assert_non_null(strstr(err.msg, "clip_weights"));
        hdp_ode_grad g;
        hdp_error_clear(&err);
        assert_int_equal(hdp_ode_grad_init(&g, &m, &err), HDP_EINPUT);
        hdp_ode_grad_free(&g);
        hdp_model_free(&m);
    }
    hdp_model m;
    make_model(&m, "data.d=10", "ode.clip_weights=direction", NULL);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_ode_result r;
    assert_int_equal(hdp_ode_solve(&m, &r, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "data.source = file"));
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clipped_labels),
        cmocka_unit_test(unclipped_and_binned),
        cmocka_unit_test(planted),
        cmocka_unit_test(direction_weights),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
