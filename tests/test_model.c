/* test_model.c — model files (schema v1): defaults, parsing, error messages; the registry
 * of sections (core/schema.h) and the families' values in the model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model_internal.h"
#include "core/schema.h"
#include "hdpsgd/kl.h"
#include "hdpsgd/model.h"
#include "hdpsgd/nc.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rf.h"
#include "hdpsgd/si.h"
#include "hdpsgd/spectrum.h"
#include "testutil.h"

/* models/default.ini is the built-in default model, key for key. */
static void default_file_equals_builtin(void **state)
{
    (void)state;
    hdp_model a, b;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&a);
    assert_int_equal(hdp_model_finalize(&a, &err), HDP_OK);
    hdp_model_init(&b);
    assert_int_equal(hdp_model_load_file(&b, HDP_SOURCE_DIR "/models/default.ini", &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&b, &err), HDP_OK);
    char *ta = NULL, *tb = NULL;
    size_t la, lb;
    FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
    hdp_model_write_ini(&a, fa);
    hdp_model_write_ini(&b, fb);
    fclose(fa);
    fclose(fb);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    hdp_model_free(&a);
    hdp_model_free(&b);
}

static void expect_error(const char *text, const char *fragment)
{
    FILE *f = fopen("test_model_tmp.ini", "w");
    fputs(text, f);
    fclose(f);
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    hdp_status st = hdp_model_load_file(&m, "test_model_tmp.ini", &err);
    if (st == HDP_OK)
        st = hdp_model_finalize(&m, &err);
    hdp_model_free(&m);
    remove("test_model_tmp.ini");
    if (st != HDP_EINPUT || !strstr(err.msg, fragment)) {
        print_error("expected an input error containing '%s', got status %d: %s\n", fragment, st,
                    err.msg);
        fail();
    }
}

static void errors_name_file_line_key(void **state)
{
    (void)state;
    expect_error("[data]\nd = 10\nfoo = 1\n", "test_model_tmp.ini:3: unknown key 'foo'");
    expect_error("[clip]\nC = 1\n", "did you mean [clip] c?");
    expect_error("[dat]\nd = 1\n", "unknown section [dat]");
    expect_error("[data]\nd = -5\n", "test_model_tmp.ini:2: [data] d = -5 is out of range");
    expect_error("[data]\nd = 2.5\n", "not an integer");
    expect_error("[data]\ngamma = abc\n", "[data] gamma = 'abc' is not a number");
    expect_error("[data]\ngamma = nan\n", "is not a number");
    expect_error("[clip]\nc = inf\n", "[clip] c: c = inf (no clipping) needs privacy.rho = inf");
    expect_error("[privacy]\nrho = 0\n", "[privacy] rho = 0 is out of range");
    expect_error("[data]\nnoise = cauchy\n", "expected one of gaussian | student");
    expect_error("[data]\nd = 3\nd = 4\n", "test_model_tmp.ini:3: duplicate key [data] d");
    expect_error("[data]\ntau2 = -1\n", "[data] tau2 = -1 is out of range");
    expect_error("[schedule]\nkind = constant\n", "needs privacy.rho = inf");
    expect_error("[schedule]\nkind = table\n", "needs schedule.file");
    expect_error("[schedule]\nkind = table\nfile = /nonexistent/x.txt\n", "cannot open");
    expect_error("[data]\nspectrum = file\nspectrum_file = /nonexistent/s.txt\n", "cannot open");
    expect_error("d = 3\n", "outside a section");
}

static void table_schedule_checks(void **state)
{
    (void)state;
    FILE *f = fopen("test_model_up.txt", "w");
    fputs("0 1\n0.5 2\n1 1\n", f);
    fclose(f);
    expect_error("[schedule]\nkind = table\nfile = test_model_up.txt\n", "non-increasing");
    f = fopen("test_model_up.txt", "w");
    fputs("0 1\n1.5 0.5\n", f);
    fclose(f);
    expect_error("[schedule]\nkind = table\nfile = test_model_up.txt\n", "t must lie in [0, 1]");
    remove("test_model_up.txt");
}

static void set_overrides_and_gamma(void **state)
{
    (void)state;
    hdp_model m;
    make_model(&m, "data.d=300", "data.gamma=0.3", NULL);
    assert_int_equal(m.n, 1000);
    hdp_model_free(&m);
    make_model(&m, "data.d=300", "data.gamma=0.3", "data.n=600", NULL);
    assert_int_equal(m.n, 600);
    assert_rel(m.gamma, 0.5, 1e-15, 0);
    hdp_model_free(&m);
    make_model(&m, "clip.c=inf", "privacy.rho=inf", NULL);
    assert_true(isinf(m.c) && isinf(m.rho));
    hdp_model_free(&m);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    assert_int_equal(hdp_model_set(&m, "clip.c", &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "section.key=value"));
}

/* Spectra: mean 1, sorted, bins with weights summing to 1 and sum w lambda = 1. */
static void spectra_and_bins(void **state)
{
    (void)state;
    const char *kinds[] = {"data.spectrum=isotropic", "data.spectrum=powerlaw",
                           "data.spectrum=twolevel"};
    const char *bins[] = {"ode.bins=0", "ode.bins=7"};
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 2; b++) {
            hdp_model m;
            make_model(&m, kinds[k], bins[b], "data.d=101", NULL);
            hdp_spectrum s;
            hdp_error err;
            hdp_error_clear(&err);
            assert_int_equal(hdp_spectrum_build(&m, &s, &err), HDP_OK);
            double sum = 0, sw = 0, swl = 0;
            for (long j = 0; j < s.d; j++) {
                sum += s.lambda[j];
                if (j) assert_true(s.lambda[j] <= s.lambda[j - 1]);
            }
            for (long j = 0; j < s.m; j++) {
                sw += s.bin_weight[j];
                swl += s.bin_weight[j] * s.bin_lambda[j];
            }
            assert_rel(sum / s.d, 1.0, 1e-13, 0);
            assert_rel(sw, 1.0, 1e-13, 0);
            assert_rel(swl, 1.0, 1e-13, 0);
            if (k == 0 && b == 0) assert_int_equal(s.m, 1);
            if (k == 2 && b == 0) {
                assert_int_equal(s.m, 2);
                assert_rel(s.bin_weight[0], 10.0 / 101, 1e-15, 0); /* round(0.1 * 101) = 10 */
                assert_rel(s.bin_lambda[0] / s.bin_lambda[1], 10.0, 1e-13, 0);
            }
            if (k == 1 && b == 0) assert_int_equal(s.m, 101);
            if (b == 1 && k > 0) assert_int_equal(s.m, 7);
            hdp_spectrum_free(&s);
            hdp_model_free(&m);
        }
}

/* A model written as INI reads back as the same model; a relative file name given with
 * --set (relative to the working directory) is written absolute, so that it still names
 * the same file when the INI is read from elsewhere (found by fuzz/fuzz_model.c). */
/* Log binning (issue 18): copies of eigenvalues that sit exactly on bin edges each land
 * in one bin (at most 2m + 1 nodes, the weights sum to 1); m < 1 is refused. */
static void log_bins_edges_and_duplicates(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    /* 10^-k for k = 0..8, each value 40 times, with m = 8: every distinct value is a bin
     * edge of log-spaced bins between 1e-8 and 1 */
    enum { VALUES = 9, COPIES = 40 };
    double lambda[VALUES * COPIES];
    for (int k = 0; k < VALUES; k++)
        for (int c = 0; c < COPIES; c++)
            lambda[k * COPIES + c] = pow(10.0, -k);
    for (long m = 1; m <= 16; m++) {
        hdp_spectrum s = {0};
        s.d = VALUES * COPIES;
        s.lambda = lambda;
        assert_int_equal(hdp_spectrum_bin_log(&s, m, &err), HDP_OK);
        assert_true(s.m >= 1 && s.m <= 2 * m + 1);
        double wsum = 0;
        for (long i = 0; i < s.m; i++)
            wsum += s.bin_weight[i];
        assert_true(fabs(wsum - 1.0) < 1e-12);
        s.lambda = NULL;
        hdp_spectrum_free(&s);
    }
    hdp_spectrum s = {0};
    s.d = VALUES * COPIES;
    s.lambda = lambda;
    assert_int_equal(hdp_spectrum_bin_log(&s, 0, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "m >= 1"));
    assert_null(s.bin_lambda);
}

static void written_ini_reads_back(void **state)
{
    (void)state;
    hdp_model a, b;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&a);
    assert_int_equal(hdp_model_set(&a, "data.spectrum_file=spec.txt", &err), HDP_OK);
    assert_int_equal(hdp_model_set(&a, "clip.c=1e-6", &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&a, &err), HDP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hdp_model_write_ini(&a, f);
    fclose(f);
    const char *line = strstr(text, "spectrum_file = ");
    assert_non_null(line);
    char name[HDP_PATH_MAX];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(line + 16, "\n"), line + 16);
    size_t n = strlen(name);
    assert_true(name[0] == '/' && n > 9 && !strcmp(name + n - 9, "/spec.txt"));
    f = fopen("test_model_written.ini", "w");
    fputs(text, f);
    fclose(f);
    hdp_model_init(&b);
    hdp_status st = hdp_model_load_file(&b, "test_model_written.ini", &err);
    if (st == HDP_OK)
        st = hdp_model_finalize(&b, &err);
    remove("test_model_written.ini");
    if (st != HDP_OK)
        print_error("%s\n", err.msg);
    assert_int_equal(st, HDP_OK);
    assert_true(b.c == a.c && b.d == a.d && b.n == a.n && b.gamma == a.gamma);
    assert_string_equal(b.spectrum_file, name); /* the absolute name, unchanged */
    free(text);
    hdp_model_free(&a);
    hdp_model_free(&b);
}

/* The registry: every key of every section has a slot in hdp_model.origin, section names
 * are unique, every family section has storage that fits in hdp_model.family, and each
 * key's value lies inside its storage. */
static void registry_fits_the_model(void **state)
{
    (void)state;
    int keys = 0, families = 0;
    size_t used = 0;
    const hdp_schema_section *s;
    hdp_model m;
    hdp_model_init(&m);
    for (int i = 0; (s = hdp_schema_section_at(i)); i++) {
        for (int j = 0; j < i; j++)
            assert_string_not_equal(hdp_schema_section_at(j)->name, s->name);
        assert_true(s->nkeys >= 1);
        keys += s->nkeys;
        if (s->size) {
            families++;
            const unsigned char *base = hdp_model_section(&m, s);
            assert_non_null(base);
            assert_true(base >= m.family.bytes &&
                        base + s->size <= m.family.bytes + HDP_MODEL_FAMILY_BYTES);
            assert_int_equal((size_t)(base - m.family.bytes), used); /* in the table's order */
            used += HDP_SCHEMA_SLICE(s->size);
            for (int k = 0; k < s->nkeys; k++)
                assert_true(s->keys[k].offset + sizeof(double) <= s->size ||
                            (s->keys[k].type == HDP_KEY_ENUM &&
                             s->keys[k].offset + sizeof(int) <= s->size));
        } else {
            assert_null(hdp_model_section(&m, s)); /* a core section: fields of hdp_model */
        }
    }
    assert_true(keys <= HDP_MODEL_MAX_KEYS);
    assert_int_equal(families, 6); /* [rf], [dpgd], [nc], [kl], [si], [net] */
    int entries = 0;
    while (hdp_model_schema_entry(entries, NULL, NULL, NULL, NULL))
        entries++;
    assert_int_equal(entries, keys); /* none dropped */
    hdp_model_free(&m);
}

/* The families' values: set by name, read through each family's accessor, carried by a
 * copy of the model; origins name the place for family keys as for the core's. */
static void family_keys_through_accessors(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    /* defaults (models/default.ini) */
    assert_int_equal(hdp_rf_keys_of(&m)->p, 4000);
    assert_int_equal(hdp_rf_keys_of(&m)->activation, HDP_RF_TANH);
    assert_true(hdp_dpgd_keys_of(&m)->epsilon == 4);
    assert_int_equal(hdp_nc_keys_of(&m)->K, 10);
    assert_int_equal(hdp_kl_keys_of(&m)->init, HDP_KL_HE);
    assert_int_equal(hdp_kl_keys_of(&m)->loss, HDP_KL_LOGISTIC);
    assert_true(hdp_si_keys_of(&m)->sigma_W == 5e-4);
    const char *sets[] = {"rf.activation=relu", "dpgd.C=inf", "nc.remedy=pca", "nc.p=321",
                          "kl.width=100", "kl.init=ntk", "si.stage2=ou", "si.he3=0.5",
                          "data.d=50", NULL};
    for (int i = 0; sets[i]; i++)
        assert_int_equal(hdp_model_set(&m, sets[i], &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_OK);
    hdp_model c = m; /* by assignment, as the sweep copies models */
    hdp_nc_keys_edit(&m)->p = 500;
    assert_int_equal(hdp_nc_keys_of(&m)->p, 500);
    assert_int_equal(hdp_nc_keys_of(&c)->p, 321);
    assert_int_equal(hdp_rf_keys_of(&c)->activation, HDP_RF_RELU);
    assert_true(isinf(hdp_dpgd_keys_of(&c)->C));
    assert_int_equal(hdp_nc_keys_of(&c)->remedy, HDP_NC_REMEDY_PCA);
    assert_int_equal(hdp_kl_keys_of(&c)->width, 100);
    assert_int_equal(hdp_kl_keys_of(&c)->init, HDP_KL_NTK);
    assert_int_equal(hdp_si_keys_of(&c)->stage2, HDP_SI_OU);
    assert_true(hdp_si_keys_of(&c)->he3 == 0.5);
    assert_int_equal(c.d, 50);
    /* neighbours untouched: the slices do not overlap */
    assert_int_equal(hdp_rf_keys_of(&c)->records, 100);
    assert_int_equal(hdp_kl_keys_of(&c)->init_runs, 1000);
    assert_true(hdp_si_keys_of(&c)->C_W == 4);
    assert_string_equal(hdp_kl_init_name(hdp_kl_keys_of(&c)->init), "ntk");
    assert_string_equal(hdp_nc_remedy_name(HDP_NC_REMEDY_PCA), "pca");
    assert_string_equal(hdp_rf_activation_name(HDP_RF_RELU), "relu");
    assert_string_equal(hdp_si_stage2_name(HDP_SI_OU), "ou");
    assert_true(hdp_model_key_given(&c, "kl", "width"));
    assert_false(hdp_model_key_given(&c, "kl", "depth"));
    assert_int_equal(hdp_model_fail_key(&c, "nc", "p", &err, "bad"), HDP_EINPUT);
    assert_string_equal(err.msg, "--set: [nc] p: bad");
    assert_null(hdp_kl_keys_of(NULL));
    hdp_model_free(&m);
}

/* A family's finalize-time check names its key like the core's checks. */
static void family_checks_at_finalize(void **state)
{
    (void)state;
    expect_error("[rf]\nn = 1000000\np = 1000000\n",
                 "test_model_tmp.ini:2: [rf] n: n = 1000000 with rf.p = 1000000 needs the feature "
                 "matrix");
    expect_error("[nc]\nK = 100\np = 10000000\n", "test_model_tmp.ini:3: [nc] p: p = 10000000");
    expect_error("[si]\nn = 10000000\nd = 100\n", "test_model_tmp.ini:2: [si] n: n = 10000000");
    expect_error("[kl]\nwidht = 3\n", "unknown key 'widht' in [kl] (did you mean [kl] width?)");
    expect_error("[si]\nstage2 = sde\n", "[si] stage2 = 'sde' is not accepted: expected one of "
                                           "gd | ou");
}

/* The privacy budget as rho, rho_zcdp or (epsilon, delta): the same rho, every form filled
 * in; two forms refused naming both; epsilon needs delta. */
static hdp_status model_with(hdp_model *m, const char *a, const char *b, hdp_error *err)
{
    hdp_error_clear(err);
    hdp_model_init(m);
    hdp_status st = hdp_model_set(m, a, err);
    if (st == HDP_OK && b)
        st = hdp_model_set(m, b, err);
    return st == HDP_OK ? hdp_model_finalize(m, err) : st;
}

static void privacy_budget_forms(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    assert_int_equal(model_with(&m, "privacy.rho_zcdp=0.125", NULL, &err), HDP_OK);
    assert_true(m.rho == 0.5);
    assert_true(m.rho_zcdp == 0.125);
    assert_true(m.epsilon == hdp_zcdp_epsilon_cks(0.125, 1e-5));
    double rz;
    assert_int_equal(hdp_zcdp_from_epsilon(1.0, 1e-6, &rz, &err), HDP_OK);
    assert_int_equal(model_with(&m, "privacy.epsilon=1", "privacy.delta=1e-6", &err), HDP_OK);
    assert_true(m.rho == sqrt(2.0 * rz));
    assert_true(m.epsilon == 1.0 && m.delta == 1e-6);
    assert_true(fabs(hdp_zcdp_epsilon_cks(m.rho_zcdp, 1e-6) - 1.0) < 1e-9);
    assert_int_equal(model_with(&m, "privacy.epsilon=inf", "privacy.delta=0.01", &err), HDP_OK);
    assert_true(isinf(m.rho) && isinf(m.rho_zcdp));
    /* none given: the default rho; epsilon reported at delta */
    assert_int_equal(model_with(&m, "privacy.delta=0.001", NULL, &err), HDP_OK);
    assert_true(m.rho == 0.5);
    assert_true(m.epsilon == hdp_zcdp_epsilon_cks(0.125, 0.001));
    assert_int_equal(model_with(&m, "privacy.rho=0.5", "privacy.rho_zcdp=0.125", &err),
                     HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[privacy] rho_zcdp"));
    assert_non_null(strstr(err.msg, "as [privacy] rho (--set)"));
    /* epsilon alone: at the default delta 1e-5 */
    assert_int_equal(model_with(&m, "privacy.epsilon=1", NULL, &err), HDP_OK);
    assert_true(m.epsilon == 1.0 && m.delta == 1e-5);
    assert_true(fabs(hdp_zcdp_epsilon_cks(m.rho_zcdp, 1e-5) - 1.0) < 1e-9);
    /* a file: both places named with file:line */
    expect_error("[privacy]\nepsilon = 1\ndelta = 1e-3\nrho = 2\n",
                 "test_model_tmp.ini:2: [privacy] epsilon: the privacy budget is given twice, as "
                 "[privacy] rho (test_model_tmp.ini:4)");
}

/* The CSV metadata, its '# ' removed, is a model file that reads back to the same model;
 * a model written with one form of the budget reads back with that form. */
static void meta_reads_back(void **state)
{
    (void)state;
    const char *forms[][2] = {{"clip.c=0.7", "data.n=1234"},
                              {"privacy.epsilon=2", "privacy.delta=1e-7"},
                              {"privacy.rho_zcdp=0.02", "dpgd.T=17"}};
    for (int f = 0; f < 3; f++) {
        hdp_model a, b;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(model_with(&a, forms[f][0], forms[f][1], &err), HDP_OK);
        char *meta = NULL, *ini = NULL, *again = NULL;
        size_t lm, li, lg;
        FILE *fm = open_memstream(&meta, &lm);
        hdp_model_write_meta(&a, fm);
        fclose(fm);
        char path[] = "/tmp/hdp_meta_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *out = fdopen(fd, "w");
        for (char *line = strtok(meta, "\n"); line; line = strtok(NULL, "\n")) {
            assert_true(!strncmp(line, "# ", 2)); /* every line of the header */
            fprintf(out, "%s\n", line + 2);
        }
        fclose(out);
        hdp_model_init(&b);
        assert_int_equal(hdp_model_load_file(&b, path, &err), HDP_OK);
        assert_int_equal(hdp_model_finalize(&b, &err), HDP_OK);
        unlink(path);
        FILE *fi = open_memstream(&ini, &li), *fg = open_memstream(&again, &lg);
        hdp_model_write_ini(&a, fi);
        hdp_model_write_ini(&b, fg);
        fclose(fi);
        fclose(fg);
        assert_string_equal(ini, again);
        assert_true(a.rho == b.rho && a.n == b.n && a.gamma == b.gamma && a.c == b.c);
        assert_true(hdp_dpgd_keys_of(&a)->T == hdp_dpgd_keys_of(&b)->T);
        char v[64];
        assert_true(hdp_model_value_text(&b, "privacy", "rho", v, sizeof v));
        assert_true(strtod(v, NULL) == a.rho);
        assert_false(hdp_model_value_text(&b, "privacy", "nosuch", v, sizeof v));
        free(meta);
        free(ini);
        free(again);
        hdp_model_free(&a);
        hdp_model_free(&b);
    }
}

/* hdp_model_with: a changed copy, finalized again, the original untouched; the derived values
 * follow (the forms of the budget, n from gamma); a bad value is the schema's one message;
 * hdp_model_copy copies the tables (two frees are safe). */
static void model_with_and_copy(void **state)
{
    (void)state;
    hdp_model m, w, c;
    hdp_error err;
    hdp_error_clear(&err);
    FILE *f = fopen("test_model_with.txt", "w");
    fputs("3\n2\n1\n0.5\n", f);
    fclose(f);
    hdp_model_init(&m);
    assert_int_equal(hdp_model_set(&m, "privacy.epsilon=1", &err), HDP_OK);
    assert_int_equal(hdp_model_set(&m, "privacy.delta=1e-6", &err), HDP_OK);
    assert_int_equal(hdp_model_set(&m, "data.spectrum=file", &err), HDP_OK);
    assert_int_equal(hdp_model_set(&m, "data.spectrum_file=test_model_with.txt", &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_OK);
    remove("test_model_with.txt"); /* the copies keep the table: nothing reads it again */
    assert_true(m.d == 4 && m.file_len == 4);
    double rho0 = m.rho;
    /* a new form of the budget replaces the given one; the others are derived from it */
    assert_int_equal(hdp_model_with(&m, "privacy.rho", "2", &w, &err), HDP_OK);
    assert_true(w.finalized && w.rho == 2.0 && w.rho_zcdp == 2.0);
    assert_true(w.epsilon == hdp_zcdp_epsilon_cks(2.0, 1e-6));
    assert_true(m.rho == rho0 && m.epsilon == 1.0); /* the original is unchanged */
    assert_true(w.file_lambda != m.file_lambda && w.file_len == m.file_len);
    assert_true(!memcmp(w.file_lambda, m.file_lambda, sizeof(double) * (size_t)m.file_len));
    hdp_model_free(&w);
    assert_int_equal(hdp_model_with(&m, "sim.runs", "7", &w, &err), HDP_OK);
    assert_true(w.runs == 7 && m.runs == 100 && w.rho == rho0);
    hdp_model_free(&w);
    assert_int_equal(hdp_model_with(&m, "data.gamma", "0.5", &w, &err), HDP_OK);
    assert_true(w.n == 8 && w.gamma == 0.5 && m.n == 40);
    hdp_model_free(&w);
    /* a key the spectrum depends on reads the file again: it is gone now */
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_with(&m, "data.d", "4", &w, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "test_model_with.txt"));
    /* the schema's range check, the same message as --set */
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_with(&m, "sim.runs", "0", &w, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "--set: [sim] runs = 0 is out of range"));
    assert_null(w.file_lambda);
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_with(&m, "sim.run", "3", &w, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "did you mean [sim] runs?"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_with(&m, "runs", "3", &w, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "expected section.key"));
    /* a model changed after finalize is refused until it is finalized again */
    assert_int_equal(hdp_model_copy(&c, &m, &err), HDP_OK);
    assert_int_equal(hdp_model_set(&c, "clip.c=1", &err), HDP_OK);
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_with(&c, "sim.runs", "3", &w, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "not finalized"));
    hdp_model_free(&c);
    /* a field written after finalize, a family's too, is caught by the key's schema range */
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_copy(&c, &m, &err), HDP_OK);
    assert_int_equal(hdp_model_check(&c, &err), HDP_OK);
    hdp_nc_keys_edit(&c)->K = 1;
    assert_int_equal(hdp_model_check(&c, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "nc.K = 1 is out of range: expected an integer >= 2"));
    hdp_error_clear(&err);
    hdp_nc_keys_edit(&c)->K = 10;
    c.rtol = 2;
    assert_int_equal(hdp_model_check(&c, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "ode.rtol = 2 is out of range"));
    hdp_model_free(&c);
    hdp_model_free(&m);
    hdp_model_free(&m);
}

/* The file names a model holds are its own strings, not HDP_PATH_MAX arrays (issue 30: 14 KB
 * with the data keys of issue 32): the same limit, refused whole; a copy has its own; setting
 * again and freeing twice are safe (valgrind/ASan see the frees). */
static void texts_owned(void **state)
{
    (void)state;
    hdp_model m, c;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    assert_string_equal(m.features, "");
    assert_string_equal(m.source, "(built-in default)");
    /* every text has its place in hdp_model_texts' list (init, free and copy go through it) */
    const char **slots[HDP_MODEL_MAX_TEXTS + 1];
    int paths = 0;
    hdp_schema_ref r;
    for (int i = 0; hdp_schema_key_at(i, &r); i++)
        paths += r.key->type == HDP_KEY_PATH;
    assert_int_equal(paths, 8);
    assert_int_equal(hdp_model_texts(&m, slots, HDP_MODEL_MAX_TEXTS + 1),
                     paths + 1 + HDP_MODEL_MAX_FILES);
    assert_true(paths + 1 + HDP_MODEL_MAX_FILES < HDP_MODEL_MAX_TEXTS);
    size_t max = HDP_PATH_MAX - 1;
    char *set = malloc(max + 32);
    assert_non_null(set);
    int at = snprintf(set, max + 32, "data.features=");
    memset(set + at, 'x', max);
    set[at + (int)max] = '\0';
    assert_int_equal(hdp_model_set(&m, set, &err), HDP_OK); /* 1023 bytes: taken whole */
    assert_int_equal(strlen(m.features), max);
    strcpy(set + at + max, "y"); /* 1024 bytes: refused, not cut; the old value kept */
    assert_int_equal(hdp_model_set(&m, set, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "[data] features: the file name is 1024 bytes long: at "
                                    "most 1023 are accepted"));
    assert_int_equal(strlen(m.features), max);
    free(set);
    assert_int_equal(hdp_model_set(&m, "data.labels=/a/y.csv", &err), HDP_OK);
    assert_int_equal(hdp_model_set(&m, "data.labels=/b/y.csv", &err), HDP_OK); /* frees /a */
    assert_int_equal(hdp_model_copy(&c, &m, &err), HDP_OK);
    assert_ptr_not_equal(c.labels, m.labels);
    assert_string_equal(c.labels, "/b/y.csv");
    assert_int_equal(hdp_model_set(&c, "data.labels=", &err), HDP_OK);
    assert_string_equal(c.labels, "");
    assert_string_equal(m.labels, "/b/y.csv"); /* the original keeps its own */
    assert_int_equal(hdp_model_set_text(&c.sched_file, "t.tab", &err), HDP_OK);
    assert_string_equal(c.sched_file, "t.tab");
    assert_string_equal(m.sched_file, "");
    hdp_model_free(&c);
    hdp_model_free(&c);
    assert_string_equal(c.labels, ""); /* readable after free */
    hdp_model_free(&m);
    assert_string_equal(m.features, "");
}

/* The origins are a small table (issue 30: the model was 136 KB with a file name per key):
 * a key names its file and line; a third file is refused, not cut. */
static void origins_small_table(void **state)
{
    (void)state;
    /* (3.2 KB: the file names are the model's strings (texts_owned), the origins a table,
     * and the families' area 1 KB; 14 KB while the names were HDP_PATH_MAX arrays) */
    assert_true(sizeof(hdp_model) <= 8192);
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    assert_int_equal(hdp_model_set_key(&m, "clip", "c", "-1", "a.ini", 3, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "a.ini:3: [clip] c = -1"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_set_key(&m, "clip", "c", "1", "a.ini", 3, &err), HDP_OK);
    assert_int_equal(hdp_model_set_key(&m, "sim", "runs", "5", "b.ini", 4, &err), HDP_OK);
    assert_int_equal(hdp_model_set_key(&m, "clip", "c", "2", "a.ini", 5, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "a.ini:5: duplicate key [clip] c (first set on line 3)"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_set_key(&m, "sim", "runs", "6", "c.ini", 1, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "c.ini: a model takes its keys from at most 2 files"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_model_set_key(&m, "clip", "c", "inf", "b.ini", 9, &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "b.ini:9: [clip] c: c = inf"));
    assert_true(hdp_model_key_given(&m, "sim", "runs") && !hdp_model_key_given(&m, "ode", "rtol"));
    hdp_model_free(&m);
}

/* [sgd]: the defaults are today's algorithm; the combinations are refused naming the key and
 * the file:line (issue 33). */
static void sgd_section_defaults_and_combinations(void **state)
{
    (void)state;
    hdp_model m;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&m);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_OK);
    assert_int_equal(m.batch, 1);
    assert_int_equal(m.epochs, 1);
    assert_int_equal(m.sampling, HDP_SAMPLING_ONE_PASS);
    assert_true(m.noise_multiplier == 0);
    assert_int_equal(m.accountant, HDP_ACCOUNTANT_PLD);
    assert_string_equal(hdp_sampling_name(HDP_SAMPLING_POISSON), "poisson");
    hdp_model_free(&m);
    expect_error("[data]\nd = 10\nn = 50\n[sgd]\nbatch = 51\n",
                 "test_model_tmp.ini:5: [sgd] batch: batch = 51 exceeds the n = 50 rows");
    expect_error("[sgd]\nepochs = 3\n", "[sgd] epochs: epochs = 3 with sampling = one-pass");
    expect_error("[sgd]\nbatch = 0\n", "[sgd] batch = 0 is out of range");
    expect_error("[sgd]\nsampling = shufle\n", "one-pass | shuffle | poisson");
    expect_error("[sgd]\nnoise_multiplier = 2\n", "[sgd] noise_multiplier: noise_multiplier = 2");
    /* the other samplings take epochs, batches beyond n and a noise multiplier */
    hdp_model_init(&m);
    const char *sets[] = {"sgd.sampling=poisson", "sgd.epochs=5", "sgd.batch=256",
                          "sgd.noise_multiplier=1.1", "sgd.accountant=rdp", "data.d=10",
                          "data.n=100", "data.train_size=300", NULL};
    for (int i = 0; sets[i]; i++)
        assert_int_equal(hdp_model_set(&m, sets[i], &err), HDP_OK);
    assert_int_equal(hdp_model_finalize(&m, &err), HDP_OK);
    assert_int_equal(m.accountant, HDP_ACCOUNTANT_RDP);
    hdp_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_file_equals_builtin),
        cmocka_unit_test(sgd_section_defaults_and_combinations),
        cmocka_unit_test(errors_name_file_line_key),
        cmocka_unit_test(table_schedule_checks),
        cmocka_unit_test(set_overrides_and_gamma),
        cmocka_unit_test(spectra_and_bins),
        cmocka_unit_test(written_ini_reads_back),
        cmocka_unit_test(log_bins_edges_and_duplicates),
        cmocka_unit_test(registry_fits_the_model),
        cmocka_unit_test(family_keys_through_accessors),
        cmocka_unit_test(family_checks_at_finalize),
        cmocka_unit_test(privacy_budget_forms),
        cmocka_unit_test(meta_reads_back),
        cmocka_unit_test(model_with_and_copy),
        cmocka_unit_test(texts_owned),
        cmocka_unit_test(origins_small_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
