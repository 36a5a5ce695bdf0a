/* output.c — atomic output files and a small JSON writer (see output.h). */
#include "output.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary files in flight, for the SIGINT handler. */
#define MAX_OPEN 16
static const char *volatile open_tmp[MAX_OPEN];

static void track(const char *tmp, int on)
{
    for (int i = 0; i < MAX_OPEN; i++) {
        if (on && !open_tmp[i]) {
            open_tmp[i] = tmp;
            return;
        }
        if (!on && open_tmp[i] == tmp) {
            open_tmp[i] = NULL;
            return;
        }
    }
}

void hdp_out_abort_all_signal(void)
{
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_tmp[i])
            unlink(open_tmp[i]);
}

void hdp_out_default_mode(int fd)
{
    /* mkstemp creates 0600; an output file gets the usual 0666 & ~umask */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
}

hdp_status hdp_out_open(hdp_outfile *o, const char *path, hdp_error *err)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        o->is_stdout = 1;
        o->open = 1;
        snprintf(o->path, sizeof o->path, "(standard output)");
        return HDP_OK;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* a device or pipe (/dev/stdout, /dev/full, a FIFO): write to it directly */
        o->f = fopen(path, "w");
        if (!o->f)
            return hdp_fail(err, HDP_EIO, "%s: cannot open for writing: %s", path,
                            strerror(errno));
        o->direct = 1;
        o->open = 1;
        return HDP_OK;
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp.XXXXXX", slash ? (int)(slash - path + 1) : 0,
             path, base);
    int fd = mkstemp(o->tmp);
    if (fd < 0)
        return hdp_fail(err, HDP_EIO, "%s: cannot create the output file: %s", path,
                        strerror(errno));
    hdp_out_default_mode(fd);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        unlink(o->tmp);
        return hdp_fail(err, HDP_EIO, "%s: cannot open the output file: %s", path,
                        strerror(errno));
    }
    o->open = 1;
    track(o->tmp, 1);
    return HDP_OK;
}

hdp_status hdp_out_commit(hdp_outfile *o, hdp_error *err)
{
    if (!o->open)
        return HDP_OK;
    o->open = 0;
    if (o->is_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return hdp_fail(err, HDP_EIO, "error writing to standard output: %s",
                            strerror(errno ? errno : EIO));
        return HDP_OK;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int saved = errno;
    if (o->direct) {
        if (fclose(o->f) != 0 && !bad) {
            bad = 1;
            saved = errno;
        }
        if (bad)
            return hdp_fail(err, HDP_EIO, "%s: write failed: %s", o->path,
                            strerror(saved ? saved : EIO));
        return HDP_OK;
    }
    if (!bad && fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS) {
        bad = 1;
        saved = errno;
    }
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        unlink(o->tmp);
        track(o->tmp, 0);
        return hdp_fail(err, HDP_EIO, "%s: write failed: %s (the previous file is untouched)",
                        o->path, strerror(saved ? saved : EIO));
    }
    track(o->tmp, 0);
    return HDP_OK;
}

void hdp_out_abort(hdp_outfile *o)
{
    if (!o->open)
        return;
    o->open = 0;
    if (o->is_stdout)
        return;
    fclose(o->f);
    if (o->direct)
        return;
    unlink(o->tmp);
    track(o->tmp, 0);
}

void hdp_json_begin(hdp_json *j, FILE *f)
{
    j->f = f;
    j->count = 0;
    fputs("{", f);
}

static void key(hdp_json *j, const char *k)
{
    fprintf(j->f, "%s\n  \"%s\": ", j->count++ ? "," : "", k);
}

void hdp_json_num(hdp_json *j, const char *k, double v)
{
    key(j, k);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        fputs("null", j->f);
}

void hdp_json_int(hdp_json *j, const char *k, long long v)
{
    key(j, k);
    fprintf(j->f, "%lld", v);
}

void hdp_json_uint(hdp_json *j, const char *k, unsigned long long v)
{
    key(j, k);
    fprintf(j->f, "%llu", v);
}

void hdp_json_bool(hdp_json *j, const char *k, int v)
{
    key(j, k);
    fputs(v ? "true" : "false", j->f);
}

void hdp_json_str(hdp_json *j, const char *k, const char *v)
{
    key(j, k);
    fputc('"', j->f);
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', j->f);
        if ((unsigned char)*p < 0x20) fprintf(j->f, "\\u%04x", *p);
        else fputc(*p, j->f);
    }
    fputc('"', j->f);
}

void hdp_json_end(hdp_json *j) { fputs("\n}\n", j->f); }
