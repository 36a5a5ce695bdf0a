/* test_schedule.c — schedules of docs/theory.md §5 and their discretisation (section 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/schedule_kinds.h"
#include "hdpsgd/schedule.h"
#include "testutil.h"

static void write_table(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# t eta\n0 4\n0.25 3\n0.5 2.5\n1 0.5\n");
    fclose(f);
}

/* sigma~^2 equals -(eta~^2)'/rho^2 by central finite differences, for every kind. */
static void sigma2_is_derivative_of_eta2(void **state)
{
    (void)state;
    write_table("test_schedule_table.txt");
    const char *kinds[] = {"schedule.kind=output", "schedule.kind=linear-noise",
                           "schedule.kind=optimal", "schedule.kind=table"};
    for (int k = 0; k < 4; k++) {
        hdp_model m;
        make_model(&m, kinds[k], "privacy.rho=0.7", "schedule.file=test_schedule_table.txt",
                   "schedule.eta0=3", NULL);
        hdp_schedule s;
        hdp_sched_from_model(&m, &s);
        for (double t = 0.013; t < 0.99; t += 0.0517) {
            double h = 1e-6;
            double e1 = hdp_sched_eta(&s, t + h), e0 = hdp_sched_eta(&s, t - h);
            double fd = -(e1 * e1 - e0 * e0) / (2 * h) / (0.7 * 0.7);
            double an = hdp_sched_sigma2(&s, t);
            if (fabs(fd - an) > 1e-6 * fmax(1, fabs(an))) {
                print_error("%s t=%g: finite difference %.12g, analytic %.12g\n", kinds[k], t, fd, an);
                fail();
            }
        }
        hdp_model_free(&m);
    }
    remove("test_schedule_table.txt");
}

/* The discrete sigma_k telescope: sum_{j>=k} sigma_j^2 = eta_k^2/rho^2 (docs/theory.md §1, §6). */
static void discrete_noise_telescopes(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "schedule.kind=optimal", "privacy.rho=0.5", "data.d=50", "data.gamma=0.25", NULL);
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    long n = m.n;
    long double tail = 0;
    for (long k = n - 1; k >= 0; k--) {
        double eta, sigma;
        hdp_sched_step(&s, n, k, &eta, &sigma);
        tail += (long double)sigma * sigma;
        assert_rel((double)tail, eta * eta / (0.25), 1e-12, 0);
        assert_rel(eta, hdp_sched_eta(&s, (double)k / n) / n, 1e-15, 0);
    }
    /* continuum and discrete noise agree: sigma_k^2 ~ sigma~(k/n)^2 / n^3 */
    double eta, sigma;
    hdp_sched_step(&s, n, n / 2, &eta, &sigma);
    assert_rel(sigma * sigma, hdp_sched_sigma2(&s, 0.5) / ((double)n * n * n), 5.0 / n, 0);
    hdp_model_free(&m);
}

/* Values at known points. */
static void values(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "schedule.kind=linear-noise", "schedule.eta0=2", NULL);
    hdp_schedule s;
    hdp_sched_from_model(&m, &s);
    assert_rel(hdp_sched_eta(&s, 0.75), 1.0, 1e-15, 0);
    assert_rel(hdp_sched_eta(&s, 1.0), 0.0, 0, 1e-300);
    hdp_model_free(&m);

    make_model(&m, "schedule.kind=optimal", "schedule.c1=2", "schedule.c2=3", "schedule.c3=1",
               "privacy.rho=0.1", "data.d=100", "data.gamma=0.5", NULL);
    hdp_sched_from_model(&m, &s);
    assert_rel(s.a, 0.5 * 10, 1e-15, 0); /* a = gamma max(c2, c3/rho) = 0.5 * 10 */
    assert_rel(hdp_sched_eta(&s, 0.0), 2.0 / 5.0, 1e-15, 0);
    hdp_model_free(&m);
}

/* The table of kinds (src/core/schedule.c) for every kind: the integral of eta~ against
 * Simpson's rule on eta~, the gradient's point (eta~, q = qf sigma~^2) against eta~ and
 * sigma~^2 and its parameter derivatives against central differences in the parameters, the
 * derivative of eta~(1), the knots. */
static double *param(hdp_schedule *s, int i)
{
    switch (i) {
    default: return s->kind == HDP_SCHED_OPTIMAL ? &s->c1 : &s->eta0;
    case 1: return &s->a;
    }
}

static void kinds_table(void **state)
{
    (void)state;
    static const double tt[] = {0, 0.25, 0.5, 1}, te[] = {4, 3, 2.5, 0.5};
    hdp_schedule base = {HDP_SCHED_CONSTANT, 1.5, 0.8, 0.3, 0.7, 4, tt, te};
    const double qf = 0.18;
    for (int kind = HDP_SCHED_OUTPUT; kind <= HDP_SCHED_TABLE; kind++) {
        hdp_schedule s = base;
        s.kind = (hdp_sched_kind)kind;
        const double *kt;
        int len = hdp_sched_knots(&s, &kt);
        assert_int_equal(len, kind == HDP_SCHED_TABLE ? 4 : 0);
        assert_int_equal(hdp_sched_params(&s), kind == HDP_SCHED_TABLE ? 4
                                               : kind == HDP_SCHED_OPTIMAL ? 2 : 1);
        /* the integral: Simpson on each segment (the table's kinks are knots; sqrt(1 - t) of
         * linear-noise is singular at 1, hence its looser tolerance) */
        double sum = 0, nodes[] = {0, 0.25, 0.5, 1};
        for (int seg = 0; seg < 3; seg++)
            for (int i = 0; i < 4000; i++) {
                double a = nodes[seg] + (nodes[seg + 1] - nodes[seg]) * i / 4000.0;
                double h = (nodes[seg + 1] - nodes[seg]) / 4000.0;
                sum += h / 6 * (hdp_sched_eta(&s, a) + 4 * hdp_sched_eta(&s, a + h / 2) +
                                hdp_sched_eta(&s, a + h));
            }
        assert_rel(hdp_sched_integral(&s), sum, kind == HDP_SCHED_LINEAR_NOISE ? 1e-6 : 1e-12, 0);
        /* the gradient's point on the segment of t */
        for (double t = 0.1; t < 1; t += 0.3) {
            int seg = kind == HDP_SCHED_TABLE ? (t < 0.25 ? 0 : t < 0.5 ? 1 : 2) : -1;
            hdp_sched_point p;
            hdp_sched_point_at(&s, seg, t, qf, 1, &p);
            assert_rel(p.eta, hdp_sched_eta(&s, t), 1e-14, 1e-300);
            assert_rel(p.q, qf * hdp_sched_sigma2(&s, t), 1e-13, 1e-300);
            for (int i = 0; i < p.n; i++) {
                hdp_schedule sp = s, sm = s;
                double h = 1e-6;
                if (kind == HDP_SCHED_TABLE) {
                    double ep[4], em[4];
                    for (int k = 0; k < 4; k++)
                        ep[k] = em[k] = te[k];
                    ep[p.idx[i]] += h;
                    em[p.idx[i]] -= h;
                    sp.eta = ep;
                    sm.eta = em;
                    hdp_sched_point a, b;
                    hdp_sched_point_at(&sp, seg, t, qf, 1, &a);
                    hdp_sched_point_at(&sm, seg, t, qf, 1, &b);
                    assert_rel(p.de[i], (a.eta - b.eta) / (2 * h), 1e-7, 1e-9);
                    assert_rel(p.dq[i], (a.q - b.q) / (2 * h), 1e-6, 1e-9);
                    continue;
                }
                *param(&sp, p.idx[i]) += h;
                *param(&sm, p.idx[i]) -= h;
                double de = (hdp_sched_eta(&sp, t) - hdp_sched_eta(&sm, t)) / (2 * h);
                double dq = qf * (hdp_sched_sigma2(&sp, t) - hdp_sched_sigma2(&sm, t)) / (2 * h);
                assert_rel(p.de[i], de, 1e-7, 1e-9);
                assert_rel(p.dq[i], dq, 1e-6, 1e-9);
            }
        }
        /* d eta~(1) / d param, as the final-iterate noise's gradient uses it */
        double ds[4] = {0};
        hdp_sched_final_grad(&s, 1.0, ds);
        for (int i = 0; i < hdp_sched_params(&s); i++) {
            double d;
            if (kind == HDP_SCHED_TABLE)
                d = i == 3 ? 1.0 : 0.0; /* eta~(1) is the last knot's value */
            else {
                hdp_schedule sp = s, sm = s;
                *param(&sp, i) += 1e-6;
                *param(&sm, i) -= 1e-6;
                d = (hdp_sched_eta(&sp, 1.0) - hdp_sched_eta(&sm, 1.0)) / 2e-6;
            }
            assert_rel(ds[i], d, 1e-7, 1e-9);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sigma2_is_derivative_of_eta2),
        cmocka_unit_test(discrete_noise_telescopes),
        cmocka_unit_test(values),
        cmocka_unit_test(kinds_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
