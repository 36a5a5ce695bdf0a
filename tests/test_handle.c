/*
 * test_handle.c — the handle API of hdpsgd/handle.h (issue 24) from C, so that the sanitizer
 * and valgrind runs cover it: records hold the results' numbers, a key's value reads back,
 * the cancel flag stops the Monte Carlo and the design, per-run final risks, NULL refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hdpsgd/dataset.h"
#include "hdpsgd/hdpsgd.h"

static hdp_model *new_model(const char *set)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model *m = hdp_model_new();
    assert_non_null(m);
    if (set)
        assert_int_equal(hdp_model_set(m, set, &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(m, &err), HDP_OK);
    return m;
}

static const double *column(const hdp_record *r, const char *name, long *len)
{
    const double *data = NULL;
    const char *n;
    for (int i = 0; (n = hdp_record_column(r, i, len, &data)); i++)
        if (!strcmp(n, name))
            return data;
    return NULL;
}

static double number(const hdp_record *r, const char *name)
{
    double v;
    const char *n;
    for (int i = 0; (n = hdp_record_number(r, i, &v, NULL)); i++)
        if (!strcmp(n, name))
            return v;
    fail_msg("no number %s", name);
    return NAN;
}

/* every name of a record (columns, numbers, texts) occurs once: the result tables
 * (hdpsgd/fields.h) make a duplicate impossible */
static void names_unique(const hdp_record *r)
{
    const char *names[512];
    int n = 0;
    const char *name;
    for (int i = 0; (name = hdp_record_column(r, i, NULL, NULL)); i++)
        names[n++] = name;
    for (int i = 0; (name = hdp_record_number(r, i, NULL, NULL)); i++)
        names[n++] = name;
    for (int i = 0; (name = hdp_record_text(r, i, NULL)); i++)
        names[n++] = name;
    assert_true(n > 0 && n < 512);
    for (int i = 0; i < n; i++)
        for (int k = i + 1; k < n; k++)
            if (!strcmp(names[i], names[k]))
                fail_msg("record name '%s' twice", names[i]);
}

static void ode_record_matches_the_solver(void **state)
{
    (void)state;
    hdp_model *m = new_model("clip.c=0.5");
    hdp_error *err = hdp_error_new();
    hdp_record *r = NULL;
    assert_int_equal(hdp_handle_ode(m, &r, err), HDP_OK);
    hdp_ode_result o;
    assert_int_equal(hdp_ode_solve(m, &o, err), HDP_OK);
    long len = 0;
    const double *risk = column(r, "risk", &len);
    assert_non_null(risk);
    assert_int_equal(len, o.points);
    assert_memory_equal(risk, o.risk, sizeof(double) * (size_t)len);
    assert_true(number(r, "final_risk") == o.final_risk);
    assert_true(number(r, "n") == 2000);
    assert_int_equal(hdp_record_columns(r), 8);
    names_unique(r);
    hdp_ode_result_free(&o);
    hdp_record_delete(r);

    char *v = NULL;
    assert_int_equal(hdp_model_get_text(m, "data.n", &v, err), HDP_OK);
    assert_string_equal(v, "2000");
    hdp_text_free(v);
    assert_int_equal(hdp_model_get_text(m, "clip.c", &v, err), HDP_OK);
    assert_string_equal(v, "0.5");
    hdp_text_free(v);
    assert_int_equal(hdp_model_get_text(m, "clip.cc", &v, err), HDP_EINPUT);
    assert_null(v);
    assert_non_null(strstr(hdp_error_message(err), "clip.cc"));
    char *ini = NULL;
    hdp_error_clear(err);
    assert_int_equal(hdp_model_ini_text(m, &ini, err), HDP_OK);
    assert_non_null(strstr(ini, "[clip]\nc = 0.5\n"));
    hdp_text_free(ini);
    hdp_error_delete(err);
    hdp_model_delete(m);
}

static int stop_at_3(const char *what, long done, long total, double value, void *user)
{
    (void)what;
    (void)total;
    (void)value;
    *(long *)user = done;
    return done >= 3;
}

static void mc_cancel_and_final_risks(void **state)
{
    (void)state;
    hdp_model *m = new_model("data.d=50");
    hdp_error *err = hdp_error_new();
    hdp_record *r = NULL;
    assert_int_equal(hdp_handle_mc(m, "sim", 1, 1, NULL, NULL, NULL, &r, err), HDP_OK);
    long len = 0, runs = (long)number(r, "runs");
    const double *f = column(r, "final_risks", &len);
    assert_non_null(f);
    assert_int_equal(len, runs);
    double sum = 0;
    for (long i = 0; i < len; i++)
        sum += f[i];
    assert_true(fabs(sum / (double)len - number(r, "final_risk_mean")) < 1e-12);
    names_unique(r);
    hdp_record_delete(r);

    long seen = 0;
    r = NULL;
    assert_int_equal(hdp_handle_mc(m, "sde", 1, 0, NULL, stop_at_3, &seen, &r, err), HDP_ECANCELLED);
    assert_null(r);
    assert_int_equal(seen, 3);
    assert_non_null(strstr(hdp_error_message(err), "cancelled"));

    volatile int cancel = 1; /* set before the call: no run starts */
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_mc(m, "sim", 0, 0, &cancel, NULL, NULL, &r, err), HDP_ECANCELLED);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_validate(m, 0, 1, &cancel, NULL, NULL, &r, err), HDP_ECANCELLED);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_design(m, "pl", 4, 0, &cancel, NULL, NULL, &r, err), HDP_ECANCELLED);
    assert_null(r);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_design_refine(m, "pl", 4, 0, 1, 1e-5, &cancel, NULL, NULL, &r, err),
                     HDP_ECANCELLED);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_rates(m, 0.01, 0.1, 3, NULL, 0, &cancel, NULL, NULL, &r, err),
                     HDP_ECANCELLED);
    assert_null(r);
    /* refine: pl alone and a positive tolerance; rates: a grid inside (0, 1) */
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_design_refine(m, "output", 4, 0, 1, 1e-5, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_design_refine(m, "pl", 4, 0, 1, 0, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_rates(m, 0.1, 0.01, 3, NULL, 0, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_rates(m, 0.01, 0.1, 3, "nope", 0, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_rates(NULL, 0.01, 0.1, 3, NULL, 0, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    assert_null(r);
    char *text = NULL;
    hdp_error_clear(err);
    assert_int_equal(hdp_model_config_text(NULL, 0, &text, err), HDP_EINPUT);
    assert_null(text);

    /* one cap on the threads, 4096, as the command line's (issue 29) */
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_mc(m, "sim", 4097, 0, NULL, NULL, NULL, &r, err), HDP_EINPUT);
    assert_non_null(strstr(hdp_error_message(err), "4096"));
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_validate(m, 100000, 0, NULL, NULL, NULL, &r, err), HDP_EINPUT);
    assert_null(r);
    hdp_error_delete(err);
    hdp_model_delete(m);
}

/* stops at the first report from within the runs; counts the reports by kind */
typedef struct {
    int steps, runs, other;
} seen_kinds;

static int stop_within(const char *what, long done, long total, double value, void *user)
{
    seen_kinds *k = user;
    if (!strcmp(what, "sim steps") && done > 0 && done < total && value > 0 && value < 1) {
        k->steps++;
        return 1;
    }
    if (!strcmp(what, "sim"))
        k->runs++;
    else
        k->other++;
    return 0;
}

/* Issue 29: one run of 10^10 coordinate updates (about a minute) stops at the first report
 * from within it (a second in): the cancel flag is checked inside the run, not only
 * between runs. An ODE stops at its first step under a set flag, for both solvers, and the
 * progress of hdp_handle_ode_run may cancel it. */
static void cancel_within(void **state)
{
    (void)state;
    hdp_model *m = new_model("data.d=1000");
    hdp_error *err = hdp_error_new();
    hdp_record *r = NULL;
    assert_int_equal(hdp_model_set(m, "data.n=10000000", err), HDP_OK);
    assert_int_equal(hdp_model_set(m, "sim.runs=1", err), HDP_OK);
    assert_int_equal(hdp_model_finalize(m, err), HDP_OK);
    seen_kinds k = {0, 0, 0};
    assert_int_equal(hdp_handle_mc(m, "sim", 1, 0, NULL, stop_within, &k, &r, err),
                     HDP_ECANCELLED);
    assert_null(r);
    assert_int_equal(k.steps, 1);
    assert_int_equal(k.runs + k.other, 0);
    hdp_model_delete(m);

    const char *solvers[] = {"ode.solver=cvode", "ode.solver=dop853"};
    for (int i = 0; i < 2; i++) {
        m = new_model(solvers[i]);
        volatile int cancel = 1;
        hdp_error_clear(err);
        assert_int_equal(hdp_handle_ode_run(m, &cancel, NULL, NULL, &r, err), HDP_ECANCELLED);
        assert_non_null(strstr(hdp_error_message(err), "cancelled"));
        assert_null(r);
        cancel = 0; /* and runs to the end when not */
        hdp_error_clear(err);
        assert_int_equal(hdp_handle_ode_run(m, &cancel, NULL, NULL, &r, err), HDP_OK);
        hdp_record_delete(r);
        r = NULL;
        hdp_model_delete(m);
    }
    m = new_model(NULL);
    long seen = 0;
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_ode_run(m, NULL, stop_at_3, &seen, &r, err), HDP_OK);
    assert_int_equal(seen, 1); /* 0 of 1, then 1 of 1 */
    hdp_record_delete(r);
    hdp_error_delete(err);
    hdp_model_delete(m);
}

static int stop_at_start(const char *what, long done, long total, double value, void *user)
{
    (void)what;
    (void)total;
    (void)value;
    (void)user;
    return done == 0;
}

static void ode_progress_cancels(void **state)
{
    (void)state;
    hdp_model *m = new_model(NULL);
    hdp_error *err = hdp_error_new();
    hdp_record *r = NULL;
    assert_int_equal(hdp_handle_ode_run(m, NULL, stop_at_start, NULL, &r, err), HDP_ECANCELLED);
    assert_null(r);
    hdp_error_delete(err);
    hdp_model_delete(m);
}

/* the batch design (schedule --optimize --tune-batch): the best batch is the candidate of
 * lowest risk, its design's risk that one; the accountants' terms of its configuration; a
 * model that is not one pass, bad knots or family, and cancellation refused without a record */
static void design_batch_record(void **state)
{
    (void)state;
    hdp_model *m = new_model("data.spectrum=isotropic");
    hdp_error *err = hdp_error_new();
    hdp_record *r = NULL;
    assert_int_equal(hdp_handle_design_batch(m, "output", 8, 0, NULL, NULL, NULL, &r, err), HDP_OK);
    long len = 0, n = (long)number(r, "n");
    const double *cand = column(r, "batch_candidates", &len);
    const double *risk = column(r, "batch_final_risks", &len);
    assert_non_null(cand);
    assert_non_null(risk);
    assert_int_equal(len, 6); /* B = 1, 2, ..., 32 = n / 32 rounded down to a power of 2 */
    int best = 0;
    for (int i = 0; i < len; i++) {
        assert_true(cand[i] == (double)(1L << i));
        if (risk[i] < risk[best])
            best = i;
    }
    assert_true(number(r, "best_batch") == cand[best]);
    assert_true(number(r, "final_risk") == risk[best]);
    assert_true(number(r, "sample_rate") == cand[best] / (double)n);
    assert_true(number(r, "steps") == ceil((double)n / cand[best]));
    assert_true(number(r, "noise_multiplier_min") <= number(r, "noise_multiplier_median"));
    assert_true(number(r, "noise_multiplier_median") <= number(r, "noise_multiplier_max"));
    assert_true(number(r, "epsilon_pld") <= number(r, "epsilon_rdp") + 1e-12);
    assert_true(number(r, "epsilon_rdp") <= number(r, "epsilon_rdp_classic") + 1e-12);
    assert_true(number(r, "poisson_noise_multiplier") > 0);
    names_unique(r);
    hdp_record_delete(r);
    r = NULL;

    volatile int cancel = 1;
    assert_int_equal(hdp_handle_design_batch(m, "output", 8, 0, &cancel, NULL, NULL, &r, err),
                     HDP_ECANCELLED);
    assert_null(r);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_design_batch(m, "output", 1, 0, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_design_batch(m, "nope", 8, 0, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    assert_null(r);
    hdp_model_delete(m);

    hdp_error e;
    hdp_error_clear(&e);
    m = hdp_model_new();
    assert_non_null(m);
    assert_int_equal(hdp_model_set(m, "sgd.sampling=poisson", &e), HDP_OK);
    assert_int_equal(hdp_model_set(m, "data.train_size=2000", &e), HDP_OK);
    assert_int_equal(hdp_model_finalize(m, &e), HDP_OK);
    hdp_error_clear(err);
    assert_int_equal(hdp_handle_design_batch(m, "output", 8, 0, NULL, NULL, NULL, &r, err),
                     HDP_EINPUT);
    assert_null(r);
    assert_non_null(strstr(hdp_error_message(err), "tune-batch"));
    hdp_model_delete(m);
    hdp_error_delete(err);
}

static void design_validate_privacy(void **state)
{
    (void)state;
    hdp_model *m = new_model("data.spectrum=isotropic");
    hdp_error *err = hdp_error_new();
    hdp_record *r = NULL;
    assert_int_equal(hdp_handle_design(m, "output", 8, 0, NULL, NULL, NULL, &r, err), HDP_OK);
    const char *name, *value = NULL;
    int found = 0;
    for (int i = 0; (name = hdp_record_text(r, i, &value)); i++)
        found |= !strcmp(name, "best_family") && !strcmp(value, "output");
    assert_true(found);
    long len = 0;
    assert_non_null(column(r, "eta", &len));
    assert_int_equal(len, 201);
    assert_true(number(r, "final_risk") > 0);
    names_unique(r);
    hdp_record_delete(r);

    assert_int_equal(hdp_handle_validate(m, 0, 0, NULL, NULL, NULL, &r, err), HDP_OK);
    assert_true(number(r, "max_rel_dev") >= 0); /* the JSON's names: the sim side bare */
    assert_true(number(r, "sim_pass") == 0 || number(r, "sim_pass") == 1);
    assert_true(number(r, "worst_point") >= -1);
    names_unique(r);
    assert_null(column(r, "sde.mean", &len));
    assert_non_null(column(r, "sim.mean", &len));
    hdp_record_delete(r);
    assert_int_equal(hdp_handle_validate(m, 0, 1, NULL, NULL, NULL, &r, err), HDP_OK);
    assert_non_null(column(r, "sde.clipped_fraction", &len));
    assert_true(number(r, "sde_clipped_fraction") >= 0);
    names_unique(r);
    hdp_record_delete(r);

    assert_int_equal(hdp_handle_accountant(m, &r, err), HDP_OK);
    assert_true(fabs(number(r, "rho_accounted") - 0.5) < 1e-9);
    names_unique(r);
    hdp_record_delete(r);

    double eps = 0, rho = 0;
    assert_int_equal(hdp_handle_epsilon(0.5, 1e-5, &eps, err), HDP_OK);
    assert_int_equal(hdp_handle_rho_for(eps, 1e-5, &rho, err), HDP_OK);
    assert_true(fabs(rho - 0.5) < 1e-8);
    assert_int_equal(hdp_handle_epsilon(0.5, 1.5, &eps, err), HDP_EINPUT);
    assert_true(isnan(eps));
    hdp_error_delete(err);
    hdp_model_delete(m);
}

static void null_arguments(void **state)
{
    (void)state;
    hdp_error *err = hdp_error_new();
    hdp_record *r = NULL;
    char *t = NULL;
    assert_int_equal(hdp_handle_ode(NULL, &r, err), HDP_EINPUT);
    assert_non_null(strstr(hdp_error_message(err), "NULL"));
    assert_int_equal(hdp_handle_ode(NULL, NULL, err), HDP_EINPUT);
    assert_int_equal(hdp_handle_mc(NULL, "sim", 0, 0, NULL, NULL, NULL, &r, err), HDP_EINPUT);
    assert_int_equal(hdp_handle_mc(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL), HDP_EINPUT);
    assert_int_equal(hdp_handle_validate(NULL, 0, 1, NULL, NULL, NULL, &r, err), HDP_EINPUT);
    assert_int_equal(hdp_handle_design(NULL, "pl", 8, 0, NULL, NULL, NULL, &r, err), HDP_EINPUT);
    assert_int_equal(hdp_handle_accountant(NULL, &r, err), HDP_EINPUT);
    assert_int_equal(hdp_handle_dataset(NULL, NULL, NULL, 0, NULL, NULL, 1, "trace", 0, &r, err),
                     HDP_EINPUT);
    assert_int_equal(hdp_handle_dataset("x.npy", NULL, NULL, 0, NULL, NULL, 1, NULL, 0, &r, err),
                     HDP_EINPUT);
    assert_int_equal(hdp_handle_dataset("x.npy", NULL, NULL, 0, NULL, NULL, 1, "trace", 0, NULL,
                                        err), HDP_EINPUT);
    assert_int_equal(hdp_handle_dataset("x.npy", "y.npy", NULL, 2, NULL, NULL, 1, "trace", 0, &r,
                                        err), HDP_EINPUT); /* classes: NULL with a count */
    assert_int_equal(hdp_dataset_load(NULL, NULL, NULL, NULL, err), HDP_EINPUT);
    hdp_error *e2 = hdp_error_new(); /* an error keeps its first message */
    assert_int_equal(hdp_handle_dataset("x.npy", NULL, NULL, 0, NULL, NULL, 1, "max", 0, &r, e2),
                     HDP_EINPUT);
    assert_non_null(strstr(hdp_error_message(e2), "scale 'max'"));
    hdp_error_delete(e2);
    assert_int_equal(hdp_model_get_text(NULL, "clip.c", &t, err), HDP_EINPUT);
    assert_int_equal(hdp_model_ini_text(NULL, &t, err), HDP_EINPUT);
    assert_int_equal(hdp_handle_epsilon(1, 0.1, NULL, err), HDP_EINPUT);
    assert_null(r);
    assert_int_equal(hdp_record_columns(NULL), 0);
    assert_null(hdp_record_number(NULL, 0, NULL, NULL));
    assert_string_equal(hdp_error_message(NULL), "");
    hdp_record_delete(NULL);
    hdp_model_delete(NULL);
    hdp_error_delete(err);
    /* a model changed after finalize is refused, not used */
    hdp_model *m = hdp_model_new();
    err = hdp_error_new();
    assert_int_equal(hdp_handle_ode(m, &r, err), HDP_EINPUT);
    assert_non_null(strstr(hdp_error_message(err), "finalized"));
    hdp_error_delete(err);
    hdp_model_delete(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ode_record_matches_the_solver),
        cmocka_unit_test(mc_cancel_and_final_risks),
        cmocka_unit_test(design_validate_privacy),
        cmocka_unit_test(design_batch_record),
        cmocka_unit_test(cancel_within),
        cmocka_unit_test(ode_progress_cancels),
        cmocka_unit_test(null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
