/*
 * dataset_read.c — N x d matrices and N labels from .npy, IDX and .csv files, gzipped or not
 * (hdpsgd/dataset.h). Binary payloads are streamed through zlib's gzread (which reads a plain
 * file as it is) straight into the matrix, with the count of values fixed by the header
 * beforehand: a short payload, bytes after it, a truncated or corrupt gzip stream are refused
 * with the file's name and the byte offset. CSV text is read whole (dataset_csv.c).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <zlib.h>

#include "core/check.h"
#include "core/dataset_internal.h"
#include "hdpsgd/dataset.h"

/* the element types of both binary formats */
typedef enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_U64, T_I64, T_F32, T_F64 } elem_type;
static const int elem_size[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
static const char *const elem_name[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32",
                                        "uint64", "int64", "float32", "float64"};

typedef struct {
    const char *path;
    gzFile g;
    long long offset; /* bytes of (decompressed) content consumed */
    int gz;           /* 1 when the file is gzip-compressed */
    long long size;   /* the file's size on disk */
} stream;

/* zlib's message without the file name it starts with */
const char *hdp_zlib_msg(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (!msg)
        return "unknown error";
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}

/* read exactly len bytes, or fail naming what was being read */
static hdp_status s_read(stream *s, void *buf, size_t len, const char *what, hdp_error *err)
{
    size_t got = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? (1u << 30) : (unsigned)(len - got);
        int r = gzread(s->g, (char *)buf + got, chunk);
        if (r <= 0) {
            int zerr = 0;
            const char *m = gzerror(s->g, &zerr);
            long long at = s->offset + (long long)got;
            if (zerr == Z_BUF_ERROR)
                return hdp_fail(err, HDP_EINPUT,
                                "%s: truncated gzip stream: it ends after %lld bytes of content, "
                                "inside %s", s->path, at, what);
            if (r < 0 || zerr != Z_OK)
                return hdp_fail(err, HDP_EINPUT, "%s: %s at byte %lld of the %scontent: %s",
                                s->path, s->gz ? "corrupt gzip stream" : "read error", at,
                                s->gz ? "decompressed " : "", hdp_zlib_msg(m, s->path));
            return hdp_fail(err, HDP_EINPUT,
                            "%s: the file ends after %lld bytes of %scontent, inside %s "
                            "(%zu more bytes expected)",
                            s->path, at, s->gz ? "decompressed " : "", what, len - got);
        }
        got += (size_t)r;
    }
    s->offset += (long long)len;
    return HDP_OK;
}

/* the stream must end here: no byte after the payload, and a complete gzip stream */
static hdp_status s_expect_end(stream *s, const char *format, hdp_error *err)
{
    char c;
    int r = gzread(s->g, &c, 1);
    int zerr = 0;
    const char *m = gzerror(s->g, &zerr);
    if (r > 0)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: more bytes than the %s header announces: the payload ends at byte "
                        "%lld and the file goes on",
                        s->path, format, s->offset);
    if (r < 0 || zerr == Z_BUF_ERROR)
        return hdp_fail(err, HDP_EINPUT, "%s: %s after the payload (byte %lld): %s", s->path,
                        zerr == Z_BUF_ERROR ? "truncated gzip stream" : "corrupt gzip stream",
                        s->offset, hdp_zlib_msg(m, s->path));
    return HDP_OK;
}

static hdp_status s_open(stream *s, const char *path, hdp_error *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    struct stat st;
    if (stat(path, &st) != 0)
        return hdp_fail(err, HDP_EINPUT, "cannot read '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return hdp_fail(err, HDP_EINPUT,
                        "cannot read '%s': not a regular file (data files are .npy, .csv or IDX "
                        "files, gzipped or not)",
                        path);
    s->size = (long long)st.st_size;
    if (st.st_size == 0)
        return hdp_fail(err, HDP_EINPUT, "%s: the file is empty", path);
    s->g = gzopen(path, "rb");
    if (!s->g)
        return hdp_fail(err, errno == ENOMEM ? HDP_ENOMEM : HDP_EINPUT, "cannot read '%s': %s",
                        path, errno ? strerror(errno) : "out of memory");
    gzbuffer(s->g, 1u << 17);
    unsigned char magic[2] = {0, 0};
    FILE *f = fopen(path, "rb");
    if (f) {
        s->gz = fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
        fclose(f);
    }
    return HDP_OK;
}

static void s_close(stream *s)
{
    if (s->g)
        gzclose(s->g);
    s->g = NULL;
}

/* ---- values ---- */

static double load_elem(const unsigned char *p, elem_type t, int big)
{
    unsigned char b[8];
    int sz = elem_size[t];
    for (int i = 0; i < sz; i++)
        b[i] = big ? p[sz - 1 - i] : p[i]; /* b little-endian */
    uint64_t u = 0;
    for (int i = sz - 1; i >= 0; i--)
        u = (u << 8) | b[i];
    switch (t) {
    case T_U8: case T_U16: case T_U32: case T_U64: return (double)u;
    case T_I8: return (double)(int8_t)u;
    case T_I16: return (double)(int16_t)u;
    case T_I32: return (double)(int32_t)(uint32_t)u;
    case T_I64: return (double)(int64_t)u;
    case T_F32: { uint32_t w = (uint32_t)u; float f; memcpy(&f, &w, 4); return f; }
    case T_F64: { double v; memcpy(&v, &u, 8); return v; }
    }
    return NAN;
}

/* the payload a header announces must fit in the file before anything is allocated: a plain
 * file holds it after the header, a gzip stream at most 1032 times its size (deflate's
 * largest ratio) */
static hdp_status check_room(const stream *s, long long n, long long d, elem_type t,
                             hdp_error *err)
{
    double need = (double)n * (double)d * (double)elem_size[t];
    double room = s->gz ? 1032.0 * (double)s->size + 4096.0 : (double)(s->size - s->offset);
    if (need <= room)
        return HDP_OK;
    return hdp_fail(err, HDP_EINPUT,
                    "%s: the file ends after %lld bytes%s: its header announces %lld x %lld %s "
                    "values (%.0f bytes) after byte %lld",
                    s->path, s->size,
                    s->gz ? " of gzip (at most 1032 times as many decompressed)" : "",
                    n, d, elem_name[t], need, s->offset);
}

/* Back a large matrix with 2 MiB pages where the kernel allows it (transparent huge pages in
 * "madvise" mode; advised before the pages are touched, as NumPy does for its large arrays): the
 * real-row Monte Carlo gathers a random row per step from all of them, and with 4 KiB pages
 * nearly every row was a TLB miss (src/sim/rows.c; Fashion-MNIST's 188 MB of rows: 0.43 -> 0.32
 * us per row gathered). A hint: its failure changes nothing. */
static void hugepages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (bytes >= ((size_t)8 << 20) && b > a)
        (void)madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* n x d with the element count and size checked; float32 storage for types exact in it */
static hdp_status matrix_alloc(const stream *s, long long n, long long d, elem_type t,
                               hdp_matrix *m, hdp_error *err)
{
    const char *path = s->path;
    if (n < 2)
        return hdp_fail(err, HDP_EINPUT, "%s: %lld row%s: a data set needs N >= 2 rows", path, n,
                        n == 1 ? "" : "s");
    if (d < 1)
        return hdp_fail(err, HDP_EINPUT, "%s: rows of 0 values: the file holds no data", path);
    int f32 = t == T_U8 || t == T_I8 || t == T_U16 || t == T_I16 || t == T_F32;
    long long es = f32 ? 4 : 8;
    if (n > HDP_DATASET_MAX_BYTES / es / d)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: %lld x %lld values need %.3g GB in memory, over the limit of %.3g GB "
                        "(HDP_DATASET_MAX_BYTES)",
                        path, n, d, (double)n * (double)d * (double)es / 1e9,
                        (double)HDP_DATASET_MAX_BYTES / 1e9);
    hdp_status st = check_room(s, n, d, t, err);
    if (st != HDP_OK)
        return st;
    m->n = (long)n;
    m->d = (long)d;
    size_t count = (size_t)n * (size_t)d;
    if (f32)
        m->f32 = malloc(count * sizeof(float));
    else
        m->f64 = malloc(count * sizeof(double));
    if (!m->f32 && !m->f64)
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory for %lld x %lld values", path, n, d);
    hugepages(m->f32 ? (void *)m->f32 : (void *)m->f64, count * (size_t)es);
    return HDP_OK;
}

/* Read count = n d elements of type t into m: element k is (k / d, k % d) in C order and
 * (k % n, k / n) in Fortran order. NaN and inf are refused with their row and column. */
static hdp_status read_payload(stream *s, elem_type t, int big, int fortran, hdp_matrix *m,
                               const char *format, hdp_error *err)
{
    enum { CHUNK = 1 << 16 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf)
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory", s->path);
    size_t es = (size_t)elem_size[t], count = (size_t)m->n * (size_t)m->d, per = CHUNK / es;
    hdp_status st = HDP_OK;
    char what[160];
    snprintf(what, sizeof what, "the %s payload of %zu %s values", format, count, elem_name[t]);
    for (size_t k0 = 0; k0 < count && st == HDP_OK; k0 += per) {
        size_t c = count - k0 < per ? count - k0 : per;
        st = s_read(s, buf, c * es, what, err);
        if (st == HDP_OK && t == T_U8 && m->f32) { /* images: every byte is a finite float */
            for (size_t q = 0; q < c; q++) {
                size_t k = k0 + q;
                size_t i = fortran ? k % (size_t)m->n : k / (size_t)m->d;
                size_t j = fortran ? k / (size_t)m->n : k % (size_t)m->d;
                m->f32[i * (size_t)m->d + j] = (float)buf[q];
            }
            continue;
        }
        for (size_t q = 0; q < c && st == HDP_OK; q++) {
            size_t k = k0 + q;
            size_t i = fortran ? k % (size_t)m->n : k / (size_t)m->d;
            size_t j = fortran ? k / (size_t)m->n : k % (size_t)m->d;
            double v = load_elem(buf + q * es, t, big);
            if (!isfinite(v))
                st = hdp_fail(err, HDP_EINPUT, "%s: row %zu, column %zu is %s: entries must be "
                              "finite numbers", s->path, i + 1, j + 1, isnan(v) ? "NaN" : "inf");
            else if ((t == T_I64 || t == T_U64) && fabs(v) > 9007199254740992.0)
                st = hdp_fail(err, HDP_EINPUT, "%s: row %zu, column %zu (%.17g) is beyond 2^53: "
                              "not exact as a double", s->path, i + 1, j + 1, v);
            else if (m->f32)
                m->f32[i * (size_t)m->d + j] = (float)v;
            else
                m->f64[i * (size_t)m->d + j] = v;
        }
    }
    free(buf);
    return st;
}

/* ---- IDX ---- */

static hdp_status read_idx(stream *s, const unsigned char magic[4], hdp_matrix *m, hdp_error *err)
{
    static const struct { unsigned code; elem_type t; } types[] = {
        {0x08, T_U8}, {0x09, T_I8}, {0x0b, T_I16}, {0x0c, T_I32}, {0x0d, T_F32}, {0x0e, T_F64}};
    int ti = -1;
    for (int i = 0; i < 6; i++)
        if (types[i].code == magic[2])
            ti = i;
    if (ti < 0)
        return hdp_fail(err, HDP_EINPUT, "%s: unknown IDX type code 0x%02x (accepted: 0x08 uint8, "
                        "0x09 int8, 0x0b int16, 0x0c int32, 0x0d float32, 0x0e float64)",
                        s->path, magic[2]);
    int nd = magic[3];
    if (nd < 1)
        return hdp_fail(err, HDP_EINPUT, "%s: an IDX file with 0 dimensions holds no data",
                        s->path);
    unsigned char dims[255 * 4];
    hdp_status st = s_read(s, dims, (size_t)nd * 4, "the IDX header's dimensions", err);
    if (st != HDP_OK)
        return st;
    long long n = 0, d = 1;
    for (int k = 0; k < nd; k++) {
        long long v = ((long long)dims[4 * k] << 24) | (dims[4 * k + 1] << 16) |
                      (dims[4 * k + 2] << 8) | dims[4 * k + 3];
        if (k == 0)
            n = v;
        else if (v == 0 || d > (1LL << 40) / v)
            return hdp_fail(err, HDP_EINPUT, "%s: IDX dimension %d is %lld: %s", s->path, k + 1, v,
                            v == 0 ? "the file holds no data" : "rows of over 2^40 values");
        else
            d *= v;
    }
    st = matrix_alloc(s, n, d, types[ti].t, m, err);
    if (st == HDP_OK)
        st = read_payload(s, types[ti].t, 1, 0, m, "IDX", err);
    if (st == HDP_OK)
        st = s_expect_end(s, "IDX", err);
    return st;
}

/* ---- npy ---- */

/* the value text after 'key': in the header dict, or NULL */
static const char *npy_field(const char *h, const char *key)
{
    char q[32];
    for (int quote = 0; quote < 2; quote++) {
        snprintf(q, sizeof q, quote ? "\"%s\"" : "'%s'", key);
        const char *p = strstr(h, q);
        if (p) {
            p += strlen(q);
            while (*p == ' ')
                p++;
            if (*p != ':')
                return NULL;
            p++;
            while (*p == ' ')
                p++;
            return p;
        }
    }
    return NULL;
}

static hdp_status npy_descr(const char *path, const char *h, elem_type *t, int *big,
                            hdp_error *err)
{
    static const struct { const char *code; elem_type t; } codes[] = {
        {"u1", T_U8}, {"i1", T_I8}, {"u2", T_U16}, {"i2", T_I16}, {"u4", T_U32}, {"i4", T_I32},
        {"u8", T_U64}, {"i8", T_I64}, {"f4", T_F32}, {"f8", T_F64}, {"b1", T_U8}};
    const char *p = npy_field(h, "descr");
    char dq = p ? *p : 0;
    if (!p || (dq != '\'' && dq != '"'))
        return hdp_fail(err, HDP_EINPUT, "%s: the npy header has no 'descr' string", path);
    const char *e = strchr(p + 1, dq);
    size_t len = e ? (size_t)(e - p - 1) : 0;
    char code[8] = "";
    if (e && len == 3) {
        memcpy(code, p + 1, 3);
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
            if (strcmp(code + 1, codes[i].code) == 0 &&
                (code[0] == '<' || code[0] == '|' || code[0] == '>' || code[0] == '=')) {
                *t = codes[i].t;
                *big = code[0] == '>' && elem_size[*t] > 1;
                return HDP_OK;
            }
    }
    return hdp_fail(err, HDP_EINPUT, "%s: npy dtype '%.*s' is not accepted (accepted: float32 "
                    "<f4, float64 <f8, integers |u1 |i1 <u2 <i2 <u4 <i4 <u8 <i8)",
                    path, (int)(len < 40 ? len : 40), e ? p + 1 : "");
}

/* shape (N,), (N, d) or (N, a, b, ...) (C order: rows flattened) */
static hdp_status npy_shape(const char *path, const char *h, int fortran, long long *n,
                            long long *d, hdp_error *err)
{
    const char *p = npy_field(h, "shape");
    if (!p || *p != '(')
        return hdp_fail(err, HDP_EINPUT, "%s: the npy header has no 'shape' tuple", path);
    p++;
    int k = 0;
    *n = 0;
    *d = 1;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        if (*p < '0' || *p > '9')
            return hdp_fail(err, HDP_EINPUT, "%s: the npy shape is not a tuple of sizes", path);
        errno = 0;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (errno || v > (1LL << 40))
            return hdp_fail(err, HDP_EINPUT, "%s: npy dimension %d is too large", path, k + 1);
        p = end;
        if (*p == 'L')
            p++;
        if (k == 0)
            *n = v;
        else if (v == 0 || *d > (1LL << 40) / v)
            return hdp_fail(err, HDP_EINPUT, "%s: npy dimension %d is %lld: %s", path, k + 1, v,
                            v == 0 ? "the file holds no data" : "rows of over 2^40 values");
        else
            *d *= v;
        k++;
    }
    if (k == 0)
        return hdp_fail(err, HDP_EINPUT, "%s: the npy array is a scalar (shape ()): a data set "
                        "needs N rows", path);
    if (k > 2 && fortran)
        return hdp_fail(err, HDP_EINPUT, "%s: a Fortran-order npy array of %d dimensions: "
                        "accepted are 1 or 2 (or more in C order)", path, k);
    return HDP_OK;
}

static hdp_status read_npy(stream *s, hdp_matrix *m, hdp_error *err)
{
    unsigned char ver[2], lenb[4];
    hdp_status st = s_read(s, ver, 2, "the npy version", err);
    if (st != HDP_OK)
        return st;
    if (ver[0] < 1 || ver[0] > 3)
        return hdp_fail(err, HDP_EINPUT, "%s: npy format version %d.%d (accepted: 1, 2, 3)",
                        s->path, ver[0], ver[1]);
    int wide = ver[0] >= 2;
    st = s_read(s, lenb, wide ? 4 : 2, "the npy header length", err);
    if (st != HDP_OK)
        return st;
    unsigned long hl = lenb[0] | ((unsigned long)lenb[1] << 8);
    if (wide)
        hl |= ((unsigned long)lenb[2] << 16) | ((unsigned long)lenb[3] << 24);
    if (hl > (1ul << 20))
        return hdp_fail(err, HDP_EINPUT, "%s: npy header of %lu bytes (at most 1 MiB accepted)",
                        s->path, hl);
    char *h = malloc(hl + 1);
    if (!h)
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory", s->path);
    st = s_read(s, h, hl, "the npy header", err);
    h[st == HDP_OK ? hl : 0] = 0;
    if (st == HDP_OK && strlen(h) != hl)
        st = hdp_fail(err, HDP_EINPUT, "%s: a NUL byte in the npy header", s->path);
    elem_type t = T_F64;
    int big = 0;
    long long n = 0, d = 1;
    const char *fo = st == HDP_OK ? npy_field(h, "fortran_order") : NULL;
    int fortran = fo && strncmp(fo, "True", 4) == 0;
    if (st == HDP_OK && (!fo || (!fortran && strncmp(fo, "False", 5) != 0)))
        st = hdp_fail(err, HDP_EINPUT, "%s: the npy header has no 'fortran_order' True or False",
                      s->path);
    if (st == HDP_OK)
        st = npy_descr(s->path, h, &t, &big, err);
    if (st == HDP_OK)
        st = npy_shape(s->path, h, fortran, &n, &d, err);
    free(h);
    if (st == HDP_OK)
        st = matrix_alloc(s, n, d, t, m, err);
    if (st == HDP_OK)
        st = read_payload(s, t, big, fortran, m, "npy", err);
    if (st == HDP_OK)
        st = s_expect_end(s, "npy", err);
    return st;
}

/* ---- dispatch ---- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* float64 storage shrunk to float32 when every value is exactly a float32 */
static void maybe_shrink(hdp_matrix *m)
{
    if (!m->f64)
        return;
    size_t count = (size_t)m->n * (size_t)m->d;
    for (size_t k = 0; k < count; k++) {
        double v = m->f64[k];
        if (fabs(v) > FLT_MAX || (double)(float)v != v)
            return;
    }
    float *f = malloc(count * sizeof(float));
    if (!f)
        return; /* keep double: no harm */
    for (size_t k = 0; k < count; k++)
        f[k] = (float)m->f64[k];
    free(m->f64);
    m->f64 = NULL;
    m->f32 = f;
}

hdp_status hdp_matrix_read(const char *path, hdp_matrix *out, hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, path);
    HDP_REQUIRE(err, out);
    stream s;
    hdp_status st = s_open(&s, path, err);
    unsigned char magic[6] = {0};
    int got = st == HDP_OK ? gzread(s.g, magic, 4) : 0;
    int npy_ext = ends_with(path, ".npy") || ends_with(path, ".npy.gz");
    if (st != HDP_OK) {
    } else if (got == 4 && memcmp(magic, "\x93NUM", 4) == 0) {
        s.offset = 4;
        st = s_read(&s, magic + 4, 2, "the npy magic", err);
        if (st == HDP_OK && memcmp(magic + 4, "PY", 2) != 0)
            st = hdp_fail(err, HDP_EINPUT, "%s: the npy magic is broken", path);
        if (st == HDP_OK)
            st = read_npy(&s, out, err);
    } else if (got == 4 && magic[0] == 0 && magic[1] == 0 && magic[2] >= 0x08 && magic[2] <= 0x0e) {
        s.offset = 4;
        st = read_idx(&s, magic, out, err);
    } else if (npy_ext) {
        st = hdp_fail(err, HDP_EINPUT, "%s: named .npy but it does not begin with the npy magic "
                      "\\x93NUMPY", path);
    } else if (got == 4 && magic[0] == 0 && magic[1] == 0) {
        st = hdp_fail(err, HDP_EINPUT, "%s: an IDX magic 00 00 %02x %02x with an unknown type code "
                      "0x%02x (accepted: 0x08 uint8, 0x09 int8, 0x0b int16, 0x0c int32, 0x0d "
                      "float32, 0x0e float64)", path, magic[2], magic[3], magic[2]);
    } else {
        s_close(&s);
        st = hdp_csv_read(path, out, err);
    }
    s_close(&s);
    if (st == HDP_OK)
        maybe_shrink(out);
    else
        hdp_matrix_free(out);
    return st;
}

hdp_status hdp_labels_read(const char *path, double **y, long *n, hdp_error *err)
{
    HDP_REQUIRE(err, y);
    HDP_REQUIRE(err, n);
    *y = NULL;
    *n = 0;
    hdp_matrix m;
    hdp_status st = hdp_matrix_read(path, &m, err);
    if (st != HDP_OK)
        return st;
    if (m.d != 1) {
        long rows = m.n, cols = m.d;
        hdp_matrix_free(&m);
        return hdp_fail(err, HDP_EINPUT, "%s: labels must be N values (one column), not %ld x %ld",
                        path, rows, cols);
    }
    double *v = malloc((size_t)m.n * sizeof(double));
    if (!v) {
        hdp_matrix_free(&m);
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory", path);
    }
    for (long i = 0; i < m.n; i++)
        v[i] = m.f32 ? (double)m.f32[i] : m.f64[i];
    *y = v;
    *n = m.n;
    hdp_matrix_free(&m);
    return HDP_OK;
}

double hdp_matrix_get(const hdp_matrix *m, long i, long j)
{
    if (!m || i < 0 || j < 0 || i >= m->n || j >= m->d || (!m->f32 && !m->f64))
        return NAN;
    size_t k = (size_t)i * (size_t)m->d + (size_t)j;
    return m->f32 ? (double)m->f32[k] : m->f64[k];
}

void hdp_matrix_free(hdp_matrix *m)
{
    if (!m)
        return;
    free(m->f32);
    free(m->f64);
    memset(m, 0, sizeof *m);
}
