/* test_schedule.c — schedules of docs/theory.md §5 and their discretisation (section 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sigma2_is_derivative_of_eta2),
        cmocka_unit_test(discrete_noise_telescopes),
        cmocka_unit_test(values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
