/*
 * dataset_csv.c — numbers separated by commas (hdpsgd/dataset.h), gzipped or not: one row per
 * line (LF or CRLF), cells trimmed of spaces and tabs, read with strtod and refused unless the
 * whole cell is a finite number. The first line is a header when one of its cells is not a
 * number (a header of numbers only, as pandas writes 0,1,2,... for unnamed columns, is read as
 * data: the message of the refused row or the count of rows shows it); lines beginning with '#'
 * are comments; a UTF-8 byte-order mark is skipped; blank lines at the end are ignored, a
 * blank line before a row is refused. Every row must have the first row's number of cells.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/dataset_internal.h"

/* the whole text, decompressed, NUL-terminated; NUL bytes refused */
static hdp_status read_text(const char *path, char **text, size_t *len, hdp_error *err)
{
    gzFile g = gzopen(path, "rb");
    if (!g)
        return hdp_fail(err, HDP_EINPUT, "cannot read '%s': %s", path,
                        errno ? strerror(errno) : "out of memory");
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    hdp_status st = buf ? HDP_OK : hdp_fail(err, HDP_ENOMEM, "%s: out of memory", path);
    while (st == HDP_OK) {
        if (cap - n < (1 << 16) + 1) {
            if ((long long)cap * 2 > HDP_DATASET_MAX_TEXT + (1 << 17)) {
                st = hdp_fail(err, HDP_EINPUT, "%s: CSV text over %lld bytes (%.3g GB): store "
                              "large data sets as .npy", path, (long long)HDP_DATASET_MAX_TEXT,
                              (double)HDP_DATASET_MAX_TEXT / 1e9);
                break;
            }
            char *b = realloc(buf, cap * 2);
            if (!b) {
                st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory", path);
                break;
            }
            buf = b;
            cap *= 2;
        }
        int r = gzread(g, buf + n, 1 << 16);
        int zerr = 0;
        const char *m = gzerror(g, &zerr);
        if (r < 0 || zerr != Z_OK)
            st = hdp_fail(err, HDP_EINPUT, "%s: %s after %zu bytes of text: %s", path,
                          zerr == Z_BUF_ERROR ? "truncated gzip stream" : "unreadable gzip stream",
                          n + (r > 0 ? (size_t)r : 0), hdp_zlib_msg(m, path));
        else if (r == 0)
            break;
        else
            n += (size_t)r;
    }
    gzclose(g);
    if (st == HDP_OK && memchr(buf, 0, n))
        st = hdp_fail(err, HDP_EINPUT, "%s: a NUL byte at byte %zu: not a CSV text file", path,
                      (size_t)((char *)memchr(buf, 0, n) - buf));
    if (st != HDP_OK) {
        free(buf);
        return st;
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return HDP_OK;
}

/* parse one trimmed cell [a, b) as a finite number: 0 ok, 1 not a number, 2 NaN/inf */
static int cell_value(const char *a, const char *b, double *v)
{
    while (a < b && (*a == ' ' || *a == '\t'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    if (a == b || b - a > 400)
        return 1;
    char tmp[402];
    memcpy(tmp, a, (size_t)(b - a));
    tmp[b - a] = 0;
    char *end;
    errno = 0;
    *v = strtod(tmp, &end);
    if (end != tmp + (b - a))
        return 1;
    if (!isfinite(*v) || errno == ERANGE)
        return isfinite(*v) && fabs(*v) < 1 ? 0 : 2; /* underflow to a subnormal/0 is a number */
    return 0;
}

typedef struct {
    double *v;
    size_t n, cap;
} values;

static int push(values *vs, double x)
{
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? vs->cap * 2 : 1024;
        double *p = realloc(vs->v, cap * sizeof *p);
        if (!p)
            return -1;
        vs->v = p;
        vs->cap = cap;
    }
    vs->v[vs->n++] = x;
    return 0;
}

/* the cells of one line [a, b) appended to vs; *cols their count; a message on failure */
static hdp_status parse_line(const char *path, long line, const char *a, const char *b,
                             int may_be_header, values *vs, long *cols, int *header,
                             hdp_error *err)
{
    size_t start = vs->n;
    long c = 0;
    *header = 0;
    for (const char *p = a;; c++) {
        const char *q = memchr(p, ',', (size_t)(b - p));
        const char *e = q ? q : b;
        double v;
        int r = cell_value(p, e, &v);
        if (r == 2)
            return hdp_fail(err, HDP_EINPUT, "%s: line %ld, column %ld is %.*s: entries must be "
                            "finite numbers", path, line, c + 1, (int)(e - p > 40 ? 40 : e - p), p);
        if (r == 1) {
            if (may_be_header) {
                *header = 1;
                vs->n = start;
            } else {
                return hdp_fail(err, HDP_EINPUT, "%s: line %ld, column %ld is not a number "
                                "('%.*s'): a CSV data file holds numbers separated by commas "
                                "(a header is accepted on the first line only)", path, line,
                                c + 1, (int)(e - p > 40 ? 40 : e - p), p);
            }
        } else if (!*header && push(vs, v) != 0) {
            return hdp_fail(err, HDP_ENOMEM, "%s: out of memory at line %ld", path, line);
        }
        if (!q)
            break;
        p = q + 1;
    }
    *cols = c + 1;
    return HDP_OK;
}

hdp_status hdp_csv_read(const char *path, hdp_matrix *m, hdp_error *err)
{
    char *text = NULL;
    size_t len = 0;
    hdp_status st = read_text(path, &text, &len, err);
    if (st != HDP_OK)
        return st;
    /* the end of the last non-blank line: trailing blank lines are ignored */
    size_t end = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ' ||
                       text[end - 1] == '\t'))
        end--;
    values vs = {NULL, 0, 0};
    long d = -1, rows = 0, line = 0;
    size_t first = end >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* a UTF-8 BOM */
    for (size_t pos = first; pos < end && st == HDP_OK;) {
        const char *a = text + pos, *nl = memchr(a, '\n', end - pos);
        const char *b = nl ? nl : text + end;
        pos = (size_t)(b - text) + 1;
        line++;
        if (b > a && b[-1] == '\r')
            b--;
        if (b > a && *a == '#')
            continue;
        const char *c = a;
        while (c < b && (*c == ' ' || *c == '\t'))
            c++;
        if (c == b) {
            st = hdp_fail(err, HDP_EINPUT, "%s: line %ld is blank: blank lines are accepted only "
                          "at the end", path, line);
            break;
        }
        long cols = 0;
        int header;
        st = parse_line(path, line, a, b, rows == 0 && d < 0, &vs, &cols, &header, err);
        if (st != HDP_OK)
            break;
        if (d >= 0 && cols != d)
            st = hdp_fail(err, HDP_EINPUT, "%s: line %ld has %ld column%s, the %s %ld: every row "
                          "must have the same number of values", path, line, cols,
                          cols == 1 ? "" : "s", rows ? "first row has" : "header has", d);
        d = cols;
        rows += !header;
        if (st == HDP_OK && (long long)vs.n * 8 > HDP_DATASET_MAX_BYTES)
            st = hdp_fail(err, HDP_EINPUT, "%s: over %.3g GB of values at line %ld "
                          "(HDP_DATASET_MAX_BYTES)", path, (double)HDP_DATASET_MAX_BYTES / 1e9,
                          line);
    }
    free(text);
    if (st == HDP_OK && rows == 0)
        st = hdp_fail(err, HDP_EINPUT, "%s: no data rows%s", path, d >= 0 ? " after the header" :
                      " (an empty or blank file)");
    else if (st == HDP_OK && rows < 2)
        st = hdp_fail(err, HDP_EINPUT, "%s: 1 row: a data set needs N >= 2 rows", path);
    if (st != HDP_OK) {
        free(vs.v);
        return st;
    }
    memset(m, 0, sizeof *m);
    m->n = rows;
    m->d = d;
    m->f64 = vs.v;
    return HDP_OK;
}
