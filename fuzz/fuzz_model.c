/*
 * fuzz_model.c — libFuzzer harness for the model parser (src/core/model*.c and schema.c,
 * with the families' sections, src/families/<name>_keys.c): INI model files (inih and the
 * schema), --set assignments, finalize (ranges, combinations, spectrum and
 * schedule files), and the INI writer.
 *
 * Each input is used three ways:
 *   1. as a model file: hdp_model_init, hdp_model_load_file, hdp_model_finalize;
 *   2. line by line as --set assignments: hdp_model_set for each line, then finalize;
 *   3. when 1 or 2 gives a valid model without data files: hdp_model_write_ini, read back,
 *      and the two models must print the same metadata (a model the toolkit writes must be
 *      a model it reads, with the same values; file names come back absolute).
 * Invariants checked (abort, which libFuzzer reports as a crash): every failure has a
 * non-empty message and a status of the enum; a successful finalize leaves d, n >= 1 and
 * gamma = d/n. The sanitizers (address, undefined, leak) check the rest.
 *
 * The input file lives in its own directory (see setup), so that relative file names in
 * it (spectrum_file, schedule file) resolve there; absolute ones may name any file, which
 * is why the model's readers refuse devices, directories and pipes.
 * Build and run: fuzz/run.sh (CI: the ctest test `fuzz`).
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hdpsgd/model.h"

static char dir[4096], model_path[4200], ini_path[4200];

/* The directory of the input file: $HDPSGD_FUZZ_DIR (fuzz/run.sh puts spectrum and
 * schedule files there, and runs the fuzzer in it so that --set paths resolve there too),
 * else a new private one. */
static void setup(void)
{
    if (dir[0])
        return;
    const char *env = getenv("HDPSGD_FUZZ_DIR");
    if (env && env[0]) {
        snprintf(dir, sizeof dir, "%s", env);
    } else {
        snprintf(dir, sizeof dir, "/tmp/hdpsgd-fuzz.XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    snprintf(model_path, sizeof model_path, "%s/model.ini", dir);
    snprintf(ini_path, sizeof ini_path, "%s/written.ini", dir);
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
}

static void check_error(hdp_status st, const hdp_error *err)
{
    if (st == HDP_OK)
        return;
    if (st != HDP_EINPUT && st != HDP_ENOMEM && st != HDP_ENUMERIC && st != HDP_EIO)
        abort();
    if (err->status != st || !err->msg[0] || !memchr(err->msg, '\0', sizeof err->msg))
        abort(); /* a failure must say what went wrong */
}

static void check_model(const hdp_model *m)
{
    if (m->d < 1 || m->n < 1 || !(m->gamma > 0) || fabs(m->gamma - (double)m->d / (double)m->n) >
                                                       1e-12 * m->gamma)
        abort();
}

static char *meta_of(const hdp_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    hdp_model_write_meta(m, f);
    fclose(f);
    char *nl = strchr(buf, '\n'); /* drop "# model: <source>" */
    memmove(buf, nl + 1, strlen(nl + 1) + 1);
    return buf;
}

/* A file name as hdp_model_write_ini writes it (absolute), or 0 when an INI line cannot
 * carry it (see model.h: 199 characters, " ;", spaces at the ends). */
static int ini_path_of(const char *name, char *out, size_t size)
{
    char cwd[2048];
    if (!name[0] || name[0] == '/')
        snprintf(out, size, "%s", name);
    else if (getcwd(cwd, sizeof cwd))
        snprintf(out, size, "%s/%s", cwd, name);
    else
        return 0;
    size_t len = strlen(out);
    return len < 150 && !strstr(out, " ;") && !strstr(out, "\t;") &&
           !(len && (isspace((unsigned char)out[0]) || isspace((unsigned char)out[len - 1])));
}

/* Write the model as INI, read it back: the same model. */
static void round_trip(const hdp_model *m)
{
    if (m->spectrum == HDP_SPECTRUM_FILE || m->sched == HDP_SCHED_TABLE)
        return; /* the files were read: the tables are part of the model */
    hdp_model expect = *m; /* shallow: only printed (its texts are m's or these) */
    /* every file-name key of the model (the PATH rows of hdpsgd/model.h's key lists): as
     * written (absolute), or no round trip when an INI line cannot carry it */
    const char **path[] = {&expect.spectrum_file, &expect.sched_file,  &expect.features,
                           &expect.labels,        &expect.test_features, &expect.test_labels,
                           &expect.target_file,   &expect.noise_file};
    static char written[sizeof path / sizeof path[0]][HDP_PATH_MAX + 2048];
    for (size_t i = 0; i < sizeof path / sizeof path[0]; i++) {
        if (!ini_path_of(*path[i], written[i], sizeof written[i]))
            return;
        *path[i] = written[i];
    }
    FILE *f = fopen(ini_path, "w");
    if (!f)
        abort();
    hdp_model_write_ini(m, f);
    if (fclose(f) != 0)
        abort();
    hdp_model back;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(&back);
    hdp_status st = hdp_model_load_file(&back, ini_path, &err);
    if (st == HDP_OK)
        st = hdp_model_finalize(&back, &err);
    if (st != HDP_OK) {
        fprintf(stderr, "fuzz_model: the written model does not load: %s\n", err.msg);
        abort();
    }
    char *a = meta_of(&expect), *b = meta_of(&back);
    if (strcmp(a, b) != 0) {
        fprintf(stderr, "fuzz_model: the written model reads back differently:\n%s\n---\n%s\n", a, b);
        abort();
    }
    free(a);
    free(b);
    hdp_model_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    hdp_model m;
    hdp_error err;

    /* 1. a model file */
    write_file(model_path, data, size);
    hdp_error_clear(&err);
    hdp_model_init(&m);
    hdp_status st = hdp_model_load_file(&m, model_path, &err);
    if (st == HDP_OK)
        st = hdp_model_finalize(&m, &err);
    check_error(st, &err);
    if (st == HDP_OK) {
        check_model(&m);
        round_trip(&m);
    }
    hdp_model_free(&m);

    /* 2. --set assignments, one per line */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    hdp_error_clear(&err);
    hdp_model_init(&m);
    st = HDP_OK;
    for (char *line = text, *next; line && st == HDP_OK; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0])
            st = hdp_model_set(&m, line, &err);
    }
    if (st == HDP_OK)
        st = hdp_model_finalize(&m, &err);
    check_error(st, &err);
    if (st == HDP_OK) {
        check_model(&m);
        round_trip(&m);
    }
    hdp_model_free(&m);
    free(text);
    return 0;
}
