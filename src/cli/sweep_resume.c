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

/* add a data file to the digest (once); -1 when out of memory */
static int digest_add_file(sweep_digest *d, const char *name)
{
    for (long j = 0; j < d->nfiles; j++)
        if (!strcmp(d->file[j], name))
            return 0;
    if (d->nfiles == d->cap) {
        long cap = d->cap ? 2 * d->cap : 64;
        char **f = realloc(d->file, sizeof *f * (size_t)cap);
        if (f)
            d->file = f;
        unsigned long long *g = f ? realloc(d->file_digest, sizeof *g * (size_t)cap) : NULL;
        if (!g)
            return -1;
        d->file_digest = g;
        d->cap = cap;
    }
    if (!(d->file[d->nfiles] = strdup(name)))
        return -1;
    d->file_digest[d->nfiles++] = sweep_digest_file(name);
    return 0;
}

/* add point i's resolved model (as a model file, every key) and the files it names;
 * returns 0, or -1 when out of memory */
int sweep_digest_point(sweep_digest *d, const hdp_model *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return -1;
    hdp_model_write_ini(m, mem);
    if (fclose(mem) != 0) {
        free(text);
        return -1;
    }
    d->points = fnv1a(d->points, text, len);
    free(text);
    const char *named[2] = {m->spectrum == HDP_SPECTRUM_FILE ? m->spectrum_file : NULL,
                            m->sched == HDP_SCHED_TABLE ? m->sched_file : NULL};
    for (int k = 0; k < 2; k++)
        if (named[k] && named[k][0] && digest_add_file(d, named[k]))
            return -1;
    return 0;
}

void sweep_digest_free(sweep_digest *d)
{
    for (long j = 0; j < d->nfiles; j++)
        free(d->file[j]);
    free(d->file);
    free(d->file_digest);
    memset(d, 0, sizeof *d);
}

/* the digest's lines as DIR/sweep.digest holds them (after its comment); NULL when out of
 * memory */
static char *digest_text(const sweep_spec *s, const sweep_digest *d)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fprintf(f, "sweep_file %016llx %s\n", d->sweep, s->path);
    fprintf(f, "base_model %016llx %s\n", d->base, s->model[0] ? s->model : "(built-in)");
    fprintf(f, "points %016llx\n", d->points);
    for (long j = 0; j < d->nfiles; j++)
        fprintf(f, "file %016llx %s\n", d->file_digest[j], d->file[j]);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static int out_of_memory(void)
{
    return cli_error(EXIT_NUMERIC, "sweep", "out of memory writing the sweep's digest");
}

int sweep_write_digest(const char *dir, const sweep_spec *s, const sweep_digest *d)
{
    char *text = digest_text(s, d);
    if (!text)
        return out_of_memory();
    char path[1300];
    snprintf(path, sizeof path, "%s/sweep.digest", dir);
    hdp_outfile o;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_out_open(&o, path, &err) != HDP_OK) {
        free(text);
        return cli_fail("sweep", &err);
    }
    fprintf(o.f, "# hdpsgd sweep: FNV-1a 64 digests of what defines the points; --resume "
                 "refuses to continue when one differs\n");
    fputs(text, o.f);
    free(text);
    return hdp_out_commit(&o, &err) == HDP_OK ? 0 : cli_fail("sweep", &err);
}

/* 1 when line (without its newline) is one of the lines of text */
static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !memcmp(p, line, n))
            return 1;
        p += len + (end != NULL);
    }
    return 0;
}

/* 0 when DIR/sweep.digest matches d (or is missing: a warning), else exit 2 saying what
 * changed: every line then must be one of now's, and as many */
int sweep_check_digest(const char *dir, const sweep_spec *s, const sweep_digest *d)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/sweep.digest", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hdpsgd sweep: warning: %s has no sweep.digest (an older hdpsgd made "
                        "it): cannot check that the sweep is unchanged\n", dir);
        return 0;
    }
    char *now = digest_text(s, d);
    if (!now) {
        fclose(f);
        return out_of_memory();
    }
    /* the most specific change first: a named file, the sweep file, the base model, the
     * models (which every other change also changes) */
    static const char *const order[] = {"file", "sweep_file", "base_model", "points"};
    char changed[4][1300] = {"", "", "", ""};
    int any[4] = {0, 0, 0, 0};
    long lines = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        if (line[got - 1] == '\n')
            line[--got] = '\0';
        if (line[0] == '#')
            continue;
        lines++;
        if (has_line(now, line))
            continue;
        char what[32] = "", name[1300] = "";
        sscanf(line, "%31s %*s %1299[^\n]", what, name);
        for (int k = 0; k < 4; k++)
            if (!strcmp(what, order[k]) && !any[k]) {
                any[k] = 1;
                snprintf(changed[k], sizeof changed[k], "%s", name);
            }
    }
    free(line);
    fclose(f);
    free(now);
    int rc = 0;
    static const char *const which[] = {"a file the models name", "the sweep file",
                                        "the base model",
                                        "the points' models (an axis, a [set] key or a default)"};
    for (int k = 0; k < 4 && !rc; k++)
        if (any[k])
            rc = cli_bad("sweep", "--resume: %s changed since %s was started%s%s: its results "
                         "would mix old and new settings; rerun into a new -o DIR", which[k], dir,
                         changed[k][0] ? " — " : "", changed[k]);
    if (!rc && lines != 3 + d->nfiles) /* a file named now but not then */
        rc = cli_bad("sweep", "--resume: the files the models name changed since %s was started; "
                     "rerun into a new -o DIR", dir);
    return rc;
}
