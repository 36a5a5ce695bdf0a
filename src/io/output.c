/* output.c — atomic output files and a small JSON writer (see output.h). */
#include "io/output.h"
#include "core/text.h"
#include "core/schema.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <strings.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary files in flight, for the SIGINT handler. */
#define MAX_OPEN 16
static const char *volatile open_tmp[MAX_OPEN];
/* 1 while a thread is between creating a temporary file and recording it in open_tmp: the
 * signals are blocked in that thread, but a signal can still land on another (an idle
 * OpenMP worker), whose handler must then wait the microseconds until the file is
 * recorded, or it would die leaving the file behind. */
static atomic_int creating;

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

/* unlink a temporary file and forget it */
static void remove_tmp(const hdp_outfile *o)
{
    unlink(o->tmp);
    track(o->tmp, 0);
}

/* The figure's private folder (hdp_out_tmpdir_track) and gnuplot's process. */
static char tmpdir_path[256];
static const char *const *volatile tmpdir_names;
static volatile int tmpdir_ndata;
static volatile sig_atomic_t tmpdir_on;
static volatile pid_t tmpdir_pid;

void hdp_out_tmpdir_track(const char *dir, const char *const *names, int ndata)
{
    tmpdir_on = 0;
    tmpdir_pid = 0;
    if (!dir || strlen(dir) >= sizeof tmpdir_path - 32)
        return;
    memcpy(tmpdir_path, dir, strlen(dir) + 1);
    tmpdir_names = names;
    tmpdir_ndata = ndata;
    tmpdir_on = 1;
}

void hdp_out_tmpdir_child(pid_t pid) { tmpdir_pid = pid; }

void hdp_out_block_signals(int on)
{
    static __thread sigset_t saved;
    if (on) {
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGHUP);
        sigaddset(&block, SIGPIPE);
        sigaddset(&block, SIGXFSZ);
        pthread_sigmask(SIG_BLOCK, &block, &saved);
        atomic_store(&creating, 1);
    } else {
        atomic_store(&creating, 0);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
    }
}

/* dir/name into buf (async-signal-safe) */
static void join_name(char *buf, size_t size, const char *dir, const char *name)
{
    size_t n = strlen(dir), m = strlen(name);
    if (n + 1 + m + 1 > size)
        m = 0;
    memcpy(buf, dir, n);
    buf[n] = '/';
    memcpy(buf + n + 1, name, m);
    buf[n + 1 + m] = '\0';
}

static void tmpdir_remove_signal(void)
{
    if (!tmpdir_on)
        return;
    if (tmpdir_pid > 0)
        kill(tmpdir_pid, SIGTERM);
    char path[sizeof tmpdir_path + 64];
    for (const char *const *n = tmpdir_names; n && *n; n++) {
        join_name(path, sizeof path, tmpdir_path, *n);
        unlink(path);
    }
    for (int i = 1; i <= tmpdir_ndata; i++) {
        char name[32] = "data", digits[16];
        int nd = 0;
        for (int v = i; v > 0; v /= 10)
            digits[nd++] = (char)('0' + v % 10);
        int k = 4;
        while (nd > 0)
            name[k++] = digits[--nd];
        memcpy(name + k, ".csv", 5);
        join_name(path, sizeof path, tmpdir_path, name);
        unlink(path);
    }
    rmdir(tmpdir_path);
}

void hdp_out_abort_all_signal(void)
{
    while (atomic_load(&creating))
        ; /* another thread is recording a new temporary file (see above) */
    for (int i = 0; i < MAX_OPEN; i++)
        if (open_tmp[i])
            unlink(open_tmp[i]);
    tmpdir_remove_signal();
}

void hdp_out_default_mode(int fd)
{
    /* mkstemp creates 0600; an output file gets the usual 0666 & ~umask */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
}

/* the descriptor N named by /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N or
 * /proc/self/fd/N, /proc/<our pid>/fd/N; else -1 */
static int fd_path(const char *p)
{
    if (!strcmp(p, "/dev/stdout")) return 1;
    if (!strcmp(p, "/dev/stderr")) return 2;
    const char *n = NULL;
    char self[64];
    snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    if (!strncmp(p, "/dev/fd/", 8)) n = p + 8;
    else if (!strncmp(p, "/proc/self/fd/", 14)) n = p + 14;
    else if (!strncmp(p, self, strlen(self))) n = p + strlen(self);
    if (!n || !*n) return -1;
    char *end;
    long v = strtol(n, &end, 10);
    return (*end || v < 0 || v > 1 << 20) ? -1 : (int)v;
}

hdp_status hdp_out_resolve(const char *path, char *target, size_t size, int *fd, hdp_error *err)
{
    *fd = -1;
    if (strlen(path) > HDP_OUT_PATH_MAX)
        return hdp_fail(err, HDP_EINPUT, "the output path is longer than %d characters",
                        HDP_OUT_PATH_MAX);
    char cur[HDP_OUT_PATH_MAX + 1], link[HDP_OUT_PATH_MAX + 1];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hops = 0;; hops++) {
        if ((*fd = fd_path(cur)) >= 0)
            break;
        struct stat sb;
        if (lstat(cur, &sb) != 0 || !S_ISLNK(sb.st_mode))
            break; /* the end of the chain: a file, a new name, or a missing folder */
        if (hops == 40)
            return hdp_fail(err, HDP_EINPUT, "%s: too many levels of symbolic links", path);
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            break;
        if ((size_t)n >= sizeof link - 1) /* the target may have been cut: refused */
            return hdp_fail(err, HDP_EINPUT, "%s: a symbolic link leads to a path longer than %d "
                            "characters", path, HDP_OUT_PATH_MAX - 1);
        link[n] = '\0';
        if (link[0] == '/') {
            snprintf(cur, sizeof cur, "%s", link);
        } else { /* relative to the folder of the link */
            char *slash = strrchr(cur, '/');
            size_t dlen = slash ? (size_t)(slash - cur + 1) : 0;
            if (dlen + (size_t)n > HDP_OUT_PATH_MAX)
                return hdp_fail(err, HDP_EINPUT, "%s: a symbolic link leads to a path longer "
                                "than %d characters", path, HDP_OUT_PATH_MAX);
            memmove(cur + dlen, link, (size_t)n + 1);
        }
    }
    snprintf(target, size, "%s", cur);
    return HDP_OK;
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
    int fd0;
    hdp_status rs = hdp_out_resolve(path, o->target, sizeof o->target, &fd0, err);
    if (rs != HDP_OK)
        return rs;
    if (fd0 >= 0) {
        /* an open descriptor (/dev/stdout, /proc/self/fd/1): written where it points, at its
         * offset, as a shell redirection writes; never truncated or replaced */
        int d = dup(fd0);
        o->f = d >= 0 ? fdopen(d, "w") : NULL;
        if (!o->f) {
            int e = errno;
            if (d >= 0) close(d);
            return hdp_fail(err, HDP_EIO, "%s: cannot write to descriptor %d: %s", path, fd0,
                            strerror(e));
        }
        o->direct = 1;
        o->open = 1;
        return HDP_OK;
    }
    struct stat sb;
    int exists = stat(o->target, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode)) {
        /* a device or pipe (/dev/null, /dev/full, a FIFO): write to it directly */
        o->f = fopen(o->target, "w");
        if (!o->f)
            return hdp_fail(err, HDP_EIO, "%s: cannot open for writing: %s", path,
                            strerror(errno));
        o->direct = 1;
        o->open = 1;
        return HDP_OK;
    }
    if (exists && access(o->target, W_OK) != 0)
        return hdp_fail(err, HDP_EIO, "%s: cannot replace the file: %s", path, strerror(errno));
    const char *t = o->target;
    const char *slash = strrchr(t, '/');
    const char *base = slash ? slash + 1 : t;
    snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp.XXXXXX", slash ? (int)(slash - t + 1) : 0, t,
             base);
    /* create and record the temporary file with the usual termination signals blocked, so
     * that a handler calling hdp_out_abort_all_signal sees every file that exists */
    hdp_out_block_signals(1);
    int fd = mkstemp(o->tmp);
    int saved = errno;
    if (fd >= 0)
        track(o->tmp, 1);
    hdp_out_block_signals(0);
    if (fd < 0)
        return hdp_fail(err, HDP_EIO, "%s: cannot create the output file: %s", path,
                        strerror(saved));
    if (exists)
        fchmod(fd, sb.st_mode & 07777); /* the replaced file's permissions, not 0644 */
    else
        hdp_out_default_mode(fd);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        remove_tmp(o);
        return hdp_fail(err, HDP_EIO, "%s: cannot open the output file: %s", path, strerror(e));
    }
    o->open = 1;
    return HDP_OK;
}

/* Flush, check, fsync and close: every write error shows here. A temporary file is left
 * closed and in place (o->written) for publish; on error it is removed. */
static hdp_status finish(hdp_outfile *o, hdp_error *err)
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
    if (!o->direct && !bad && fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS) {
        bad = 1;
        saved = errno;
    }
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (o->direct)
        return bad ? hdp_fail(err, HDP_EIO, "%s: write failed: %s", o->path,
                              strerror(saved ? saved : EIO))
                   : HDP_OK;
    if (bad) {
        remove_tmp(o);
        return hdp_fail(err, HDP_EIO, "%s: write failed: %s (the previous file is untouched)",
                        o->path, strerror(saved ? saved : EIO));
    }
    o->written = 1;
    return HDP_OK;
}

/* Rename a written temporary file into place. */
static hdp_status publish(hdp_outfile *o, hdp_error *err)
{
    if (!o->written)
        return HDP_OK;
    o->written = 0;
    int bad = rename(o->tmp, o->target) != 0;
    int saved = errno;
    if (bad)
        unlink(o->tmp);
    track(o->tmp, 0);
    if (bad)
        return hdp_fail(err, HDP_EIO, "%s: write failed: %s (the previous file is untouched)",
                        o->path, strerror(saved));
    return HDP_OK;
}

static hdp_status check_no_nan(const hdp_outfile *o, hdp_error *err);

hdp_status hdp_out_commit(hdp_outfile *o, hdp_error *err)
{
    hdp_status st = finish(o, err);
    if (st == HDP_OK && (st = check_no_nan(o, err)) != HDP_OK)
        hdp_out_abort(o);
    return st == HDP_OK ? publish(o, err) : st;
}

hdp_status hdp_out_commit_all(hdp_outfile *files, int count, hdp_error *err)
{
    hdp_status st = HDP_OK;
    for (int i = 0; i < count && st == HDP_OK; i++)
        st = finish(&files[i], err);
    for (int i = 0; i < count && st == HDP_OK; i++)
        st = check_no_nan(&files[i], err);
    if (st != HDP_OK) {
        for (int i = 0; i < count; i++)
            hdp_out_abort(&files[i]);
        return st;
    }
    for (int i = 0; i < count; i++) {
        hdp_status s = publish(&files[i], err);
        if (st == HDP_OK)
            st = s;
    }
    return st;
}

void hdp_out_abort(hdp_outfile *o)
{
    if (o->written) { /* closed, not yet renamed */
        o->written = 0;
        remove_tmp(o);
        return;
    }
    if (!o->open)
        return;
    o->open = 0;
    if (o->is_stdout)
        return;
    fclose(o->f);
    if (o->direct)
        return;
    remove_tmp(o);
}

void hdp_json_begin(hdp_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    fputs("{", f);
}

static void indent(hdp_json *j, int depth)
{
    fputc('\n', j->f);
    for (int i = 0; i <= depth; i++)
        fputs("  ", j->f);
}

static void key(hdp_json *j, const char *k)
{
    if (j->array[j->depth]) {
        fputs(j->count++ ? ", " : "", j->f);
        return;
    }
    if (j->count++)
        fputc(',', j->f);
    indent(j, j->depth);
    fputc('"', j->f);
    for (const char *p = k; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', j->f);
        fputc(*p, j->f);
    }
    fputs("\": ", j->f);
}

static void open_level(hdp_json *j, const char *k, int array)
{
    key(j, k);
    fputc(array ? '[' : '{', j->f);
    if (j->depth + 1 >= HDP_JSON_DEPTH)
        return; /* not reached: the summaries nest two levels */
    j->saved[j->depth++] = j->count;
    j->array[j->depth] = array;
    j->count = 0;
}

void hdp_json_object(hdp_json *j, const char *k) { open_level(j, k, 0); }
void hdp_json_array(hdp_json *j, const char *k) { open_level(j, k, 1); }

void hdp_json_close(hdp_json *j)
{
    if (j->depth == 0)
        return;
    int array = j->array[j->depth];
    if (!array && j->count)
        indent(j, j->depth - 1);
    fputc(array ? ']' : '}', j->f);
    j->array[j->depth] = 0;
    j->count = j->saved[--j->depth];
}

const char *hdp_json_format_num(char *buf, size_t size, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "null");
        return buf;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

void hdp_json_num(hdp_json *j, const char *k, double v)
{
    char buf[64];
    key(j, k);
    fputs(hdp_json_format_num(buf, sizeof buf, v), j->f);
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
    /* always valid UTF-8 JSON: a byte that is not part of a valid UTF-8 sequence (a file
     * name in Latin-1, say) is written as \u00XX, the character of its Latin-1 reading
     * (docs/reliability.md): nothing is dropped, and the byte is that code point */
    const unsigned char *p = (const unsigned char *)v;
    size_t left = strlen(v);
    while (left > 0) {
        size_t n = hdp_utf8_seq(p, left);
        if (n == 0 || *p < 0x20) {
            fprintf(j->f, "\\u%04x", (unsigned)*p);
            n = 1;
        } else {
            if (*p == '"' || *p == '\\')
                fputc('\\', j->f);
            fwrite(p, 1, n, j->f);
        }
        p += n;
        left -= n;
    }
    fputc('"', j->f);
}

void hdp_json_end(hdp_json *j)
{
    while (j->depth > 0)
        hdp_json_close(j);
    fputs("\n}\n", j->f);
}

void hdp_json_model(hdp_json *j, const char *k, const hdp_model *m,
                    const char *const *families)
{
    hdp_json_object(j, k);
    const hdp_schema_section *s;
    int first = 0;
    for (int i = 0; (s = hdp_schema_section_at(i)); first += s->nkeys, i++) {
        int wanted = !families || !s->size;
        for (const char *const *f = families; !wanted && f && *f; f++)
            wanted = !strcmp(*f, s->name);
        if (!wanted)
            continue;
        hdp_json_object(j, s->name);
        for (int n = 0; n < s->nkeys; n++) {
            hdp_schema_ref r;
            if (!hdp_schema_key_at(first + n, &r))
                break;
            const hdp_schema_key *key_ = r.key;
            const void *v = hdp_schema_value_const(m, &r);
            switch (key_->type) {
            case HDP_KEY_LONG:
                if ((key_->flags & HDP_R_AUTO) && *(const long *)v == HDP_BINS_AUTO)
                    hdp_json_str(j, key_->key, "auto");
                else
                    hdp_json_int(j, key_->key, *(const long *)v);
                break;
            case HDP_KEY_DOUBLE:
                /* cppcheck-suppress invalidPointerCast */
                if ((key_->flags & HDP_R_AUTO) && *(const double *)v == HDP_AUTO_DOUBLE)
                    hdp_json_str(j, key_->key, "auto");
                else
                    hdp_json_num(j, key_->key, *(const double *)v); /* cppcheck-suppress invalidPointerCast */
                break;
            case HDP_KEY_SEED: hdp_json_uint(j, key_->key, *(const unsigned long long *)v); break;
            case HDP_KEY_ENUM: hdp_json_str(j, key_->key, key_->names[*(const int *)v]); break;
            case HDP_KEY_PATH: hdp_json_str(j, key_->key, hdp_schema_text(v)); break;
            case HDP_KEY_LIST: hdp_json_str(j, key_->key, (const char *)v); break;
            }
        }
        hdp_json_close(j);
    }
    hdp_json_close(j);
}

void hdp_outset_init(hdp_outset *set, hdp_error *err)
{
    memset(set, 0, sizeof *set);
    set->err = err;
}

FILE *hdp_outset_add(hdp_outset *set, const char *path)
{
    if (!path || set->status != HDP_OK)
        return NULL;
    if (set->count == HDP_OUTSET_MAX) {
        set->status = hdp_fail(set->err, HDP_EIO, "%s: more than %d output files", path,
                               HDP_OUTSET_MAX);
        return NULL;
    }
    hdp_outfile *o = &set->files[set->count];
    set->status = hdp_out_open(o, path, set->err);
    if (set->status != HDP_OK)
        return NULL;
    set->count++;
    return o->f;
}

hdp_status hdp_outset_commit(hdp_outset *set)
{
    if (set->status == HDP_OK)
        set->status = hdp_out_commit_all(set->files, set->count, set->err);
    hdp_outset_abort(set);
    return set->status;
}

hdp_status hdp_outset_source(hdp_outset *set, const char *path, const char **src)
{
    *src = NULL;
    if (set->status != HDP_OK)
        return set->status;
    for (int i = 0; i < set->count; i++) {
        hdp_outfile *o = &set->files[i];
        if (strcmp(o->path, path) != 0)
            continue;
        if (o->is_stdout || o->direct)
            return set->status = hdp_fail(set->err, HDP_EIO,
                                          "%s is not a regular file (standard output, a device "
                                          "or a pipe): the figure cannot be drawn from it", path);
        if (fflush(o->f) != 0 || ferror(o->f))
            return set->status = hdp_fail(set->err, HDP_EIO, "%s: write failed: %s (the "
                                          "previous file is untouched)", path,
                                          strerror(errno ? errno : EIO));
        *src = o->tmp;
        return HDP_OK;
    }
    return set->status = hdp_fail(set->err, HDP_EIO, "%s: not an output of this command", path);
}

void hdp_outset_abort(hdp_outset *set)
{
    for (int i = 0; i < set->count; i++)
        hdp_out_abort(&set->files[i]);
    set->count = 0;
}

/* The central guard of "no NaN is written": a CSV written to a temporary file (its name
 * ends in .csv) is read back before it is renamed into place, and a data field that is NaN
 * as printf writes it ("nan", "-nan", any case) is a numerical failure naming the file, the
 * line and the column: HDP_ENUMERIC, and no file of the command is published. (A quantity
 * that does not apply is an empty field, hdp_csv_field.) Standard output and devices are
 * written as they go and are not read back. */
static int is_nan_text(const char *f, size_t n)
{
    while (n && (*f == ' ' || *f == '\t')) { f++; n--; }
    while (n && (f[n - 1] == ' ' || f[n - 1] == '\t' || f[n - 1] == '\r')) n--;
    if (n && (*f == '-' || *f == '+')) { f++; n--; }
    return n >= 3 && !strncasecmp(f, "nan", 3) && (n == 3 || f[3] == '(');
}

/* the name of column col (0-based) in the header line, into buf */
static void column_name(const char *header, long col, char *buf, size_t size)
{
    const char *p = header;
    for (long c = 0; c < col && p; c++)
        if ((p = strchr(p, ',')))
            p++;
    size_t n = p ? strcspn(p, ",\r\n") : 0;
    if (!p || n == 0)
        snprintf(buf, size, "%ld", col + 1);
    else
        snprintf(buf, size, "'%.*s'", (int)(n > 64 ? 64 : n), p);
}

static hdp_status check_no_nan(const hdp_outfile *o, hdp_error *err)
{
    size_t len = strlen(o->target);
    if (!o->written || len < 4 || strcasecmp(o->target + len - 4, ".csv"))
        return HDP_OK;
    FILE *f = fopen(o->tmp, "r");
    if (!f)
        return hdp_fail(err, HDP_EIO, "%s: cannot read the written file back: %s", o->path,
                        strerror(errno));
    char *line = NULL, *header = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    hdp_status st = HDP_OK;
    while (st == HDP_OK && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (line[0] == '#')
            continue;
        if (!header) {
            if (!(header = strdup(line)))
                st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory checking the file", o->path);
            continue;
        }
        long col = 0;
        for (const char *p = line;; col++) {
            size_t w = strcspn(p, ",\n");
            if (is_nan_text(p, w)) {
                char name[80];
                column_name(header, col, name, sizeof name);
                st = hdp_fail(err, HDP_ENUMERIC,
                              "%s: line %ld, column %s: not a number (NaN): a numerical "
                              "failure; no output file was written",
                              o->path, lineno, name);
                break;
            }
            if (p[w] != ',')
                break;
            p += w + 1;
        }
    }
    free(line);
    free(header);
    fclose(f);
    return st;
}

/* ---- result tables (hdpsgd/fields.h) ---- */

static void json_real(void *j, const char *name, double v) { hdp_json_num(j, name, v); }
static void json_integer(void *j, const char *name, long v) { hdp_json_int(j, name, v); }
static void json_boolean(void *j, const char *name, int v) { hdp_json_bool(j, name, v); }
static void json_text(void *j, const char *name, const char *v) { hdp_json_str(j, name, v); }

static void json_column(void *j, const char *name, const double *v, long length)
{
    hdp_json_array(j, name);
    for (long i = 0; i < length; i++)
        hdp_json_num(j, NULL, v[i]);
    hdp_json_close(j);
}

static void json_list(void *j, const char *name, const hdp_field *f, const void *obj)
{
    hdp_json_array(j, name);
    for (long i = 0, n = f->count(obj); i < n; i++) {
        if (f->objects) {
            hdp_json_object(j, NULL);
            hdp_json_fields(j, f->objects, "", f->element(obj, i), NULL);
            hdp_json_close(j);
        } else if (f->kind == HDP_FIELD_INT)
            hdp_json_int(j, NULL, (long)f->get(obj, &i));
        else
            hdp_json_num(j, NULL, f->get(obj, &i));
    }
    hdp_json_close(j);
}

static void json_seed(void *j, const char *name, unsigned long long v) { hdp_json_uint(j, name, v); }

static const hdp_field_sink json_sink = {json_real, json_integer, json_boolean, json_text,
                                         json_column, json_list, json_seed};

void hdp_json_fields(hdp_json *j, const hdp_field_table *t, const char *prefix, const void *obj,
                     const void *ctx)
{
    hdp_field_write(t, HDP_FIELD_IN_JSON, prefix, -1, obj, ctx, &json_sink, j);
}

void hdp_json_fields_at(hdp_json *j, const hdp_field_table *t, const char *prefix,
                        const void *obj, long index)
{
    hdp_field_write(t, HDP_FIELD_IN_JSON, prefix, index, obj, NULL, &json_sink, j);
}
