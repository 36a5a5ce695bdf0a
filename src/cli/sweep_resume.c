/*
 * sweep_resume.c — the folders of a sweep's points and what --resume checks: FNV-1a 64
 * digests of the sweep file, the base model, every point's resolved model and the files
 * the models name, kept in DIR/sweep.digest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/output.h"
#include "sweep_spec.h"

int sweep_mkdir_p(const char *path)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(buf, 0777) != 0 && errno != EEXIST) ? -1 : 0;
}

int sweep_file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- what defines the points, for --resume: FNV-1a 64 digests in DIR/sweep.digest ---- */


static unsigned long long fnv1a(unsigned long long h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* digest of a file's bytes (0 when it cannot be read) */
unsigned long long sweep_digest_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned long long h = SWEEP_FNV_START;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = fnv1a(h, buf, n);
    fclose(f);
    return h;
}

/* add point i's resolved model (as a model file, every key) and the files it names */
void sweep_digest_point(sweep_digest *d, const hdp_model *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        hdp_model_write_ini(m, mem);
        fclose(mem);
        d->points = fnv1a(d->points, text, len);
        free(text);
    }
    const char *named[2] = {m->spectrum == HDP_SPECTRUM_FILE ? m->spectrum_file : NULL,
                            m->sched == HDP_SCHED_TABLE ? m->sched_file : NULL};
    for (int k = 0; k < 2; k++) {
        if (!named[k] || !named[k][0])
            continue;
        int seen = 0;
        for (int j = 0; j < d->nfiles && !seen; j++)
            seen = !strcmp(d->file[j], named[k]);
        if (!seen && d->nfiles < DIGEST_FILES) {
            snprintf(d->file[d->nfiles], sizeof d->file[0], "%s", named[k]);
            d->file_digest[d->nfiles++] = sweep_digest_file(named[k]);
        }
    }
}

int sweep_write_digest(const char *dir, const sweep_spec *s, const sweep_digest *d)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/sweep.digest", dir);
    hdp_outfile o;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_out_open(&o, path, &err) != HDP_OK)
        return cli_fail("sweep", &err);
    fprintf(o.f, "# hdpsgd sweep: FNV-1a 64 digests of what defines the points; --resume "
                 "refuses to continue when one differs\n");
    fprintf(o.f, "sweep_file %016llx %s\n", d->sweep, s->path);
    fprintf(o.f, "base_model %016llx %s\n", d->base, s->model[0] ? s->model : "(built-in)");
    fprintf(o.f, "points %016llx\n", d->points);
    for (int j = 0; j < d->nfiles; j++)
        fprintf(o.f, "file %016llx %s\n", d->file_digest[j], d->file[j]);
    return hdp_out_commit(&o, &err) == HDP_OK ? 0 : cli_fail("sweep", &err);
}

/* 0 when DIR/sweep.digest matches d (or is missing: a warning), else exit 2 saying what
 * changed */
int sweep_check_digest(const char *dir, const sweep_spec *s, const sweep_digest *d)
{
    char path[1300], line[1400];
    snprintf(path, sizeof path, "%s/sweep.digest", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hdpsgd sweep: warning: %s sweep_has no sweep.digest (an older hdpsgd made "
                        "it): cannot check that the sweep is unchanged\n", dir);
        return 0;
    }
    char now[1400 * (DIGEST_FILES + 4)] = "";
    size_t used = 0;
    used += (size_t)snprintf(now + used, sizeof now - used, "sweep_file %016llx %s\n", d->sweep,
                             s->path);
    used += (size_t)snprintf(now + used, sizeof now - used, "base_model %016llx %s\n", d->base,
                             s->model[0] ? s->model : "(built-in)");
    used += (size_t)snprintf(now + used, sizeof now - used, "points %016llx\n", d->points);
    for (int j = 0; j < d->nfiles; j++)
        used += (size_t)snprintf(now + used, sizeof now - used, "file %016llx %s\n",
                                 d->file_digest[j], d->file[j]);
    /* the most specific change first: a named file, the sweep file, the base model, the
     * models (which every other change also changes) */
    static const char *const order[] = {"file", "sweep_file", "base_model", "points"};
    char changed[4][1300] = {"", "", "", ""};
    int any[4] = {0, 0, 0, 0};
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strstr(now, line))
            continue;
        char what[32] = "", name[1300] = "";
        sscanf(line, "%31s %*s %1299[^\n]", what, name);
        for (int k = 0; k < 4; k++)
            if (!strcmp(what, order[k]) && !any[k]) {
                any[k] = 1;
                snprintf(changed[k], sizeof changed[k], "%s", name);
            }
    }
    int rc = 0;
    static const char *const which[] = {"a file the models name", "the sweep file",
                                        "the base model",
                                        "the points' models (an axis, a [set] key or a default)"};
    for (int k = 0; k < 4 && !rc; k++)
        if (any[k]) {
            fprintf(stderr,
                    "hdpsgd sweep: error: --resume: %s changed since %s was started%s%s: its "
                    "results would mix old and new settings; rerun into a new -o DIR\n",
                    which[k], dir, changed[k][0] ? " — " : "", changed[k]);
            rc = EXIT_BAD_INPUT;
        }
    fclose(f);
    if (!rc) { /* a file named now but not then, or points that differ in number */
        int lines = 0;
        f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            lines += line[0] != '#';
        if (f) fclose(f);
        if (lines != 3 + d->nfiles) {
            fprintf(stderr, "hdpsgd sweep: error: --resume: the files the models name changed "
                            "since %s was started; rerun into a new -o DIR\n", dir);
            rc = EXIT_BAD_INPUT;
        }
    }
    return rc;
}

