/*
 * test_dataset.c — the data readers and the preparation of hdpsgd/dataset.h on small files
 * written here in a temporary folder: every format (.npy float32/float64/integers in C and
 * Fortran order, versions 1 and 2, big-endian; IDX of every type code; CSV with and without
 * a header, CRLF, comments), gzipped and plain; every class of bad input, each refused with
 * HDP_EINPUT and a message naming the file (and the row and column); and the preparation's
 * formulas against direct computations (Σ = U diag(λ) Uᵀ, the rotated rows' covariance, the
 * scale factor, θ* of noiseless labels, the ridge normal equations, D_j(0), R(0)).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "hdpsgd/dataset.h"

static char dir[256];

static const char *path_of(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* write bytes to dir/name, gzipped when the name ends in .gz */
static const char *write_file(const char *name, const void *data, size_t len)
{
    const char *p = path_of(name);
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, ".gz") == 0) {
        gzFile g = gzopen(p, "wb");
        assert_non_null(g);
        if (len)
            assert_int_equal(gzwrite(g, data, (unsigned)len), (int)len);
        assert_int_equal(gzclose(g), Z_OK);
    } else {
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        if (len)
            assert_int_equal(fwrite(data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
    }
    return p;
}

/* an .npy image: version ver, header dict {descr, fortran_order, shape}, then payload */
static size_t npy_bytes(unsigned char *out, int ver, const char *descr, int fortran,
                        const char *shape, const void *payload, size_t plen)
{
    char dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                      descr, fortran ? "True" : "False", shape);
    size_t pre = ver == 1 ? 10 : 12, total = pre + (size_t)dl + 1;
    size_t pad = (64 - total % 64) % 64, hl = (size_t)dl + pad + 1;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)ver;
    out[7] = 0;
    out[8] = (unsigned char)(hl & 255);
    out[9] = (unsigned char)(hl >> 8);
    if (ver != 1)
        out[10] = out[11] = 0;
    memcpy(out + pre, dict, (size_t)dl);
    memset(out + pre + dl, ' ', pad);
    out[pre + dl + pad] = '\n';
    if (plen) /* payload may be NULL for an empty file (memcpy must not see NULL) */
        memcpy(out + pre + hl, payload, plen);
    return pre + hl + plen;
}

static const char *write_npy(const char *name, int ver, const char *descr, int fortran,
                             const char *shape, const void *payload, size_t plen)
{
    unsigned char *buf = malloc(plen + 512);
    size_t n = npy_bytes(buf, ver, descr, fortran, shape, payload, plen);
    const char *p = write_file(name, buf, n);
    free(buf);
    return p;
}

/* the reference matrix: 3 x 4, entry (i, j) = 10 i + j + 0.5 (exact in float32) */
static double ref(long i, long j) { return 10.0 * (double)i + (double)j + 0.5; }

static void expect_ref(const char *path, int want_f32)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_matrix m;
    hdp_status st = hdp_matrix_read(path, &m, &err);
    if (st != HDP_OK)
        print_error("%s\n", err.msg);
    assert_int_equal(st, HDP_OK);
    assert_int_equal(m.n, 3);
    assert_int_equal(m.d, 4);
    assert_int_equal(m.f32 != NULL, want_f32);
    for (long i = 0; i < 3; i++)
        for (long j = 0; j < 4; j++)
            assert_true(hdp_matrix_get(&m, i, j) == ref(i, j));
    hdp_matrix_free(&m);
}

/* the reference matrix as float64 or float32, C or Fortran order, little- or big-endian */
static size_t ref_payload(unsigned char *out, int f32, int fortran, int big)
{
    size_t k = 0, es = f32 ? 4 : 8;
    for (long a = 0; a < (fortran ? 4 : 3); a++)
        for (long b = 0; b < (fortran ? 3 : 4); b++) {
            double v = fortran ? ref(b, a) : ref(a, b);
            unsigned char e[8];
            if (f32) {
                float f = (float)v;
                memcpy(e, &f, 4);
            } else {
                memcpy(e, &v, 8);
            }
            for (size_t q = 0; q < es; q++)
                out[k * es + q] = big ? e[es - 1 - q] : e[q];
            k++;
        }
    return k * es;
}

static void test_npy_formats(void **state)
{
    (void)state;
    unsigned char pl[256];
    for (int gz = 0; gz < 2; gz++)
        for (int f32 = 0; f32 < 2; f32++)
            for (int fortran = 0; fortran < 2; fortran++) {
                char name[64];
                snprintf(name, sizeof name, "m%d%d.npy%s", f32, fortran, gz ? ".gz" : "");
                size_t n = ref_payload(pl, f32, fortran, 0);
                expect_ref(write_npy(name, 1 + fortran, f32 ? "<f4" : "<f8", fortran, "(3, 4)",
                                     pl, n), 1);
            }
    size_t n = ref_payload(pl, 0, 0, 1);
    expect_ref(write_npy("big.npy", 1, ">f8", 0, "(3, 4)", pl, n), 1);
    /* a float64 value that is not a float32 keeps the double storage */
    double v[6] = {0.1, 1, 2, 3, 4, 5};
    hdp_error err;
    hdp_error_clear(&err);
    hdp_matrix m;
    assert_int_equal(hdp_matrix_read(write_npy("d.npy", 1, "<f8", 0, "(3, 2)", v, sizeof v), &m,
                                     &err), HDP_OK);
    assert_non_null(m.f64);
    assert_true(hdp_matrix_get(&m, 0, 0) == 0.1);
    hdp_matrix_free(&m);
    /* 3-D in C order: rows flattened */
    assert_int_equal(hdp_matrix_read(write_npy("c3.npy", 1, "<f8", 0, "(2, 1, 3)", v, sizeof v),
                                     &m, &err), HDP_OK);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.d, 3);
    assert_true(hdp_matrix_get(&m, 1, 2) == 5);
    hdp_matrix_free(&m);
}

static void test_npy_labels(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    uint8_t u1[5] = {0, 3, 9, 3, 255};
    int32_t i4[5] = {-7, 3, 9, 3, 2147483647};
    int64_t i8[5] = {-7, 3, 9, 3, 9007199254740992LL};
    const struct { const char *name, *descr; const void *p; size_t len; double last; } cases[] = {
        {"u1.npy", "|u1", u1, sizeof u1, 255},
        {"i4.npy.gz", "<i4", i4, sizeof i4, 2147483647.0},
        {"i8.npy", "<i8", i8, sizeof i8, 9007199254740992.0}};
    for (int c = 0; c < 3; c++) {
        double *y;
        long n;
        const char *p = write_npy(cases[c].name, 1, cases[c].descr, 0, "(5,)", cases[c].p,
                                  cases[c].len);
        hdp_status st = hdp_labels_read(p, &y, &n, &err);
        if (st != HDP_OK)
            print_error("%s\n", err.msg);
        assert_int_equal(st, HDP_OK);
        assert_int_equal(n, 5);
        assert_true(y[1] == 3 && y[4] == cases[c].last);
        free(y);
    }
    /* an N x 2 file is not a label file */
    double v[6] = {0};
    double *y;
    long n;
    assert_int_equal(hdp_labels_read(write_npy("l2.npy", 1, "<f8", 0, "(3, 2)", v, sizeof v), &y,
                                     &n, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "l2.npy"));
    assert_non_null(strstr(err.msg, "labels must be N values"));
}

/* IDX: big-endian, dims after the magic */
static size_t idx_bytes(unsigned char *out, int type, int nd, const unsigned *dims,
                        const void *payload, size_t plen)
{
    out[0] = out[1] = 0;
    out[2] = (unsigned char)type;
    out[3] = (unsigned char)nd;
    for (int k = 0; k < nd; k++) {
        out[4 + 4 * k] = (unsigned char)(dims[k] >> 24);
        out[5 + 4 * k] = (unsigned char)(dims[k] >> 16);
        out[6 + 4 * k] = (unsigned char)(dims[k] >> 8);
        out[7 + 4 * k] = (unsigned char)dims[k];
    }
    memcpy(out + 4 + 4 * nd, payload, plen);
    return 4 + 4 * (size_t)nd + plen;
}

static void test_idx_formats(void **state)
{
    (void)state;
    unsigned char buf[512], pl[256];
    /* images 3 x 2 x 2 of bytes: rows flattened row by row */
    for (int gz = 0; gz < 2; gz++) {
        unsigned dims[3] = {3, 2, 2};
        for (int k = 0; k < 12; k++)
            pl[k] = (unsigned char)(k * 20);
        size_t n = idx_bytes(buf, 0x08, 3, dims, pl, 12);
        hdp_error err;
        hdp_error_clear(&err);
        hdp_matrix m;
        assert_int_equal(hdp_matrix_read(write_file(gz ? "img-idx3-ubyte.gz" : "img-idx3-ubyte",
                                                    buf, n), &m, &err), HDP_OK);
        assert_int_equal(m.n, 3);
        assert_int_equal(m.d, 4);
        assert_non_null(m.f32);
        assert_true(hdp_matrix_get(&m, 2, 1) == 180);
        hdp_matrix_free(&m);
    }
    /* float64 (big-endian) and float32 3 x 4 */
    unsigned dims[2] = {3, 4};
    for (int f32 = 0; f32 < 2; f32++) {
        size_t pn = ref_payload(pl, f32, 0, 1);
        size_t n = idx_bytes(buf, f32 ? 0x0d : 0x0e, 2, dims, pl, pn);
        expect_ref(write_file(f32 ? "f.idx" : "d.idx", buf, n), 1);
    }
    /* signed types: int8, int16, int32 labels */
    const struct { int type, size; } types[] = {{0x09, 1}, {0x0b, 2}, {0x0c, 4}};
    for (int t = 0; t < 3; t++) {
        unsigned d1[1] = {2};
        unsigned char p2[8] = {0};
        for (int q = 0; q < types[t].size; q++) /* -1 then 1 */
            p2[q] = 0xff;
        p2[2 * types[t].size - 1] = 1;
        size_t n = idx_bytes(buf, types[t].type, 1, d1, p2, 2 * (size_t)types[t].size);
        double *y;
        long ny;
        hdp_error err;
        hdp_error_clear(&err);
        assert_int_equal(hdp_labels_read(write_file("lab.idx", buf, n), &y, &ny, &err), HDP_OK);
        assert_int_equal(ny, 2);
        assert_true(y[0] == -1 && y[1] == 1);
        free(y);
    }
}

static void test_csv_formats(void **state)
{
    (void)state;
    const char *texts[] = {
        "0.5,1.5,2.5,3.5\n10.5,11.5,12.5,13.5\n20.5,21.5,22.5,23.5\n",
        "a,b,c,d\r\n0.5, 1.5 ,2.5,3.5\r\n10.5,11.5,12.5,13.5\r\n20.5,21.5,22.5,23.5\r\n\r\n\n",
        "# comment\n0.5,1.5,2.5,3.5\n10.5,11.5,12.5,13.5\n# more\n20.5,21.5,22.5,2.35e1",
        "\xef\xbb\xbf\x30.5,1.5,2.5,3.5\n10.5,11.5,12.5,13.5\n20.5,21.5,22.5,23.5\n", /* BOM, 0.5 */
    };
    for (int t = 0; t < 4; t++)
        for (int gz = 0; gz < 2; gz++) {
            char name[32];
            snprintf(name, sizeof name, "t%d.csv%s", t, gz ? ".gz" : "");
            expect_ref(write_file(name, texts[t], strlen(texts[t])), 1);
        }
    /* a value that is not a float32: double storage */
    hdp_error err;
    hdp_error_clear(&err);
    hdp_matrix m;
    const char *s = "0.1,2\n3,4\n";
    assert_int_equal(hdp_matrix_read(write_file("p.csv", s, strlen(s)), &m, &err), HDP_OK);
    assert_non_null(m.f64);
    assert_true(hdp_matrix_get(&m, 0, 0) == 0.1);
    hdp_matrix_free(&m);
}

/* a refused file: HDP_EINPUT, the file's name and each fragment in the message */
static void expect_bad(const char *path, ...)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_matrix m;
    hdp_status st = hdp_matrix_read(path, &m, &err);
    if (st != HDP_EINPUT)
        print_error("accepted or wrong status %d: %s\n", (int)st, path);
    assert_int_equal(st, HDP_EINPUT);
    assert_null(m.f32);
    assert_null(m.f64);
    const char *base = strrchr(path, '/') + 1;
    if (!strstr(err.msg, base))
        print_error("message without the file name: %s\n", err.msg);
    assert_non_null(strstr(err.msg, base));
    va_list ap;
    va_start(ap, path);
    const char *frag;
    while ((frag = va_arg(ap, const char *)) != NULL) {
        if (!strstr(err.msg, frag))
            print_error("message without '%s': %s\n", frag, err.msg);
        assert_non_null(strstr(err.msg, frag));
    }
    va_end(ap);
}

static void test_bad_binary(void **state)
{
    (void)state;
    unsigned char pl[256], buf[512];
    size_t n = ref_payload(pl, 0, 0, 0);
    /* shape larger than the payload (truncated data), smaller (bytes after it) */
    expect_bad(write_npy("short.npy", 1, "<f8", 0, "(4, 4)", pl, n), "ends after", NULL);
    expect_bad(write_npy("short.npy.gz", 1, "<f8", 0, "(4, 4)", pl, n), "ends after", NULL);
    expect_bad(write_npy("long.npy", 1, "<f8", 0, "(2, 4)", pl, n), "more bytes than", NULL);
    /* truncated gzip: the first half of a compressed file */
    double big[4000];
    for (int k = 0; k < 4000; k++)
        big[k] = sin(k);
    size_t bn = npy_bytes(buf, 1, "<f8", 0, "(1000, 4)", NULL, 0);
    unsigned char *whole = malloc(bn + sizeof big);
    memcpy(whole, buf, bn);
    memcpy(whole + bn, big, sizeof big);
    const char *p = write_file("cut.npy.gz", whole, bn + sizeof big);
    free(whole);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(truncate(p, size / 2), 0);
    expect_bad(p, "truncated gzip", NULL);
    /* NaN and inf, with row and column */
    double v[6] = {1, 2, 3, 4, NAN, 6};
    expect_bad(write_npy("nan.npy", 1, "<f8", 0, "(3, 2)", v, sizeof v), "row 3, column 1",
               "NaN", NULL);
    v[4] = 5;
    v[1] = INFINITY;
    expect_bad(write_npy("inf.npy", 1, "<f8", 0, "(2, 3)", v, sizeof v), "row 1, column 2", "inf",
               NULL);
    /* Fortran order: element 1 is row 2, column 1 */
    expect_bad(write_npy("infF.npy", 1, "<f8", 1, "(3, 2)", v, sizeof v), "row 2, column 1", NULL);
    /* N < 2, unknown dtype, scalar, too large, .npy name without magic, broken header */
    expect_bad(write_npy("one.npy", 1, "<f8", 0, "(1, 6)", v, sizeof v), "N >= 2", NULL);
    expect_bad(write_npy("c16.npy", 1, "<c16", 0, "(3,)", v, 48), "dtype", NULL);
    expect_bad(write_npy("obj.npy", 1, "|O", 0, "(3,)", v, 24), "dtype", NULL);
    expect_bad(write_npy("scalar.npy", 1, "<f8", 0, "()", v, 8), "scalar", NULL);
    expect_bad(write_npy("huge.npy", 1, "<f8", 0, "(1000000000, 10000)", v, 8), "GB",
               "over the limit", NULL);
    expect_bad(write_npy("zero.npy", 1, "<f8", 0, "(3, 0)", v, 0), "no data", NULL);
    expect_bad(write_file("fake.npy", "1,2\n3,4\n", 8), "npy magic", NULL);
    /* IDX: unknown type code, payload shorter / longer than the dims, 0 dimensions */
    unsigned dims[2] = {3, 4};
    n = idx_bytes(buf, 0x0a, 2, dims, pl, 12);
    expect_bad(write_file("bad-idx1-ubyte", buf, n), "unknown IDX type code 0x0a", NULL);
    n = idx_bytes(buf, 0x08, 2, dims, pl, 11);
    expect_bad(write_file("short-idx2-ubyte.gz", buf, n), "ends after", NULL);
    n = idx_bytes(buf, 0x08, 2, dims, pl, 13);
    expect_bad(write_file("long-idx2-ubyte", buf, n), "more bytes than", NULL);
    n = idx_bytes(buf, 0x08, 0, dims, pl, 0);
    expect_bad(write_file("nd0-idx", buf, n), "0 dimensions", NULL);
    /* an empty file, a directory, a missing file, a gzip of nothing */
    expect_bad(write_file("empty.npy", "", 0), "empty", NULL);
    expect_bad(write_file("empty.csv.gz", "", 0), "no data rows", NULL);
    expect_bad(path_of("missing.npy"), "missing.npy", NULL);
}

static void test_bad_csv(void **state)
{
    (void)state;
    const struct { const char *name, *text, *frag; } cases[] = {
        {"ragged.csv", "1,2,3\n4,5,6\n7,8\n", "line 3 has 2 columns"},
        {"ragged2.csv", "h1,h2\n1,2\n3,4,5\n", "line 3 has 3 columns"},
        {"word.csv", "1,2\n3,x\n", "line 2, column 2 is not a number"},
        {"emptycell.csv", "1,2\n3,\n", "line 2, column 2 is not a number"},
        {"nan.csv", "1,2\n3,nan\n", "line 2, column 2 is nan"},
        {"inf.csv", "1,2\n-inf,3\n", "line 2, column 1 is -inf"},
        {"overflow.csv", "1,2\n1e999,3\n", "line 2, column 1"},
        {"blank.csv", "\n\n \n", "no data rows"},
        {"header.csv", "a,b\n", "no data rows"},
        {"onerow.csv", "a,b\n1,2\n", "N >= 2"},
        {"midblank.csv", "1,2\n\n3,4\n", "line 2 is blank"},
        {"nul.csv", "1,2\n3,4\0\n", "NUL"},
        {"word.csv.gz", "1,2\n3,4\n5,six\n", "line 3, column 2"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t len = strlen(cases[c].text);
        if (strcmp(cases[c].name, "nul.csv") == 0)
            len = 9;
        expect_bad(write_file(cases[c].name, cases[c].text, len), cases[c].frag, NULL);
    }
}

/* rows x_i ∈ R^d from a fixed recipe, with correlated columns */
static void make_rows(hdp_matrix *m, long n, long d, int f32)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->d = d;
    if (f32)
        m->f32 = malloc((size_t)(n * d) * sizeof(float));
    else
        m->f64 = malloc((size_t)(n * d) * sizeof(double));
    for (long i = 0; i < n; i++)
        for (long j = 0; j < d; j++) {
            double v = sin(1.3 * (double)i * (double)(j + 1) + 0.7 * (double)j) * (double)(j + 1) +
                       0.5 * cos(0.37 * (double)i) + 3.0;
            if (f32)
                m->f32[i * d + j] = (float)v;
            else
                m->f64[i * d + j] = v;
        }
}

static void test_prepare(void **state)
{
    (void)state;
    const long n = 300, d = 7;
    for (int f32 = 0; f32 < 2; f32++) {
        hdp_matrix x, copy;
        make_rows(&x, n, d, f32);
        make_rows(&copy, n, d, f32); /* the same values, kept */
        /* labels: a linear function of the centred rows plus a constant, no noise */
        double w[7] = {1, -2, 0.5, 0, 3, -1, 0.25}, *y = malloc((size_t)n * sizeof(double));
        double mean[7] = {0};
        for (long i = 0; i < n; i++)
            for (long j = 0; j < d; j++)
                mean[j] += hdp_matrix_get(&x, i, j) / (double)n;
        for (long i = 0; i < n; i++) {
            y[i] = 4.0;
            for (long j = 0; j < d; j++)
                y[i] += w[j] * (hdp_matrix_get(&x, i, j) - mean[j]);
        }
        hdp_error err;
        hdp_error_clear(&err);
        hdp_dataset ds;
        assert_int_equal(hdp_dataset_prepare(&x, y, n, NULL, &ds, &err), HDP_OK);
        assert_null(x.f32);
        assert_null(x.f64);
        assert_int_equal(ds.rows.f32 != NULL, f32);
        double tol = f32 ? 1e-5 : 1e-10;
        /* Σ of the centred rows, scaled: trace d, scale = sqrt(d / tr Σ_raw) */
        double sig[49] = {0}, tr = 0;
        for (long i = 0; i < n; i++)
            for (long a = 0; a < d; a++)
                for (long b = 0; b < d; b++)
                    sig[a * d + b] += (hdp_matrix_get(&copy, i, a) - mean[a]) *
                                      (hdp_matrix_get(&copy, i, b) - mean[b]) / (double)n;
        for (long a = 0; a < d; a++)
            tr += sig[a * d + a];
        assert_true(fabs(ds.trace_raw - tr) <= tol * tr);
        assert_true(fabs(ds.scale - sqrt((double)d / tr)) <= tol * ds.scale);
        assert_true(fabs(ds.trace - (double)d) <= 1e-10 * (double)d);
        for (long j = 0; j < d; j++) {
            assert_true(fabs(ds.mean[j] - mean[j]) <= 1e-12 * fabs(mean[j]) + 1e-12);
            if (j)
                assert_true(ds.lambda[j] <= ds.lambda[j - 1]);
        }
        /* s² Σ = U diag(λ) Uᵀ */
        double s2 = ds.scale * ds.scale;
        for (long a = 0; a < d; a++)
            for (long b = 0; b < d; b++) {
                double r = 0;
                for (long j = 0; j < d; j++)
                    r += ds.u[j * d + a] * ds.lambda[j] * ds.u[j * d + b];
                assert_true(fabs(r - s2 * sig[a * d + b]) <= 1e-9);
            }
        /* the rotated rows have mean 0 and covariance diag(λ) */
        for (long a = 0; a < d; a++) {
            double mu = 0;
            for (long i = 0; i < n; i++)
                mu += hdp_matrix_get(&ds.rows, i, a) / (double)n;
            assert_true(fabs(mu) <= tol * 10);
            for (long b = 0; b < d; b++) {
                double c = 0;
                for (long i = 0; i < n; i++)
                    c += hdp_matrix_get(&ds.rows, i, a) * hdp_matrix_get(&ds.rows, i, b) / (double)n;
                assert_true(fabs(c - (a == b ? ds.lambda[a] : 0.0)) <= tol * 10 * ds.lambda[0]);
            }
        }
        /* noiseless labels: θ* = w / s in the scaled coordinates, residuals 0, label mean 4 */
        assert_true(fabs(ds.y_mean - 4.0) <= 1e-12 * 4);
        double nw = 0, r0 = 0, e = 0;
        for (long j = 0; j < d; j++) {
            assert_true(fabs(ds.theta[j] - w[j] / ds.scale) <= (f32 ? 1e-4 : 1e-8) * 3 / ds.scale);
            nw += ds.theta[j] * ds.theta[j];
            r0 += ds.lambda[j] * ds.theta_eig[j] * ds.theta_eig[j];
            e += ds.lambda[j] * ds.energy[j];
            assert_true(fabs(ds.energy[j] - 0.5 * (double)d * ds.theta_eig[j] * ds.theta_eig[j]) <=
                        1e-12 * (ds.energy[j] + 1e-300));
        }
        assert_true(fabs(ds.theta_norm - sqrt(nw)) <= 1e-12 * ds.theta_norm);
        assert_true(fabs(ds.risk0 - 0.5 * r0) <= 1e-12 * ds.risk0);
        assert_true(fabs(ds.risk0 - e / (double)d) <= 1e-12 * ds.risk0);
        assert_true(ds.tau2 <= (f32 ? 1e-8 : 1e-20) * ds.label_var);
        hdp_dataset_free(&ds);
        hdp_dataset_free(&ds); /* twice is safe */
        /* ridge: (s²Σ + ridge I) θ = s Xᵀy/N of the centred rows and centred labels */
        make_rows(&x, n, d, f32);
        hdp_dataset_options o = {0, 0, 0.7, 1, 0};
        assert_int_equal(hdp_dataset_prepare(&x, y, n, &o, &ds, &err), HDP_OK);
        assert_int_equal(ds.rotated, 0);
        for (long a = 0; a < d; a++) {
            double lhs = 0.7 * ds.theta[a], rhs = 0;
            for (long b = 0; b < d; b++)
                lhs += s2 * sig[a * d + b] * ds.theta[b];
            for (long i = 0; i < n; i++)
                rhs += ds.scale * (hdp_matrix_get(&copy, i, a) - mean[a]) * (y[i] - 4.0) / (double)n;
            assert_true(fabs(lhs - rhs) <= 1e-8 * (fabs(rhs) + 1));
        }
        assert_true(ds.tau2 > 0);
        hdp_dataset_free(&ds);
        hdp_matrix_free(&copy);
        free(y);
    }
}

static void test_prepare_refuses(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_matrix x;
    hdp_dataset ds;
    double y[10] = {0};
    make_rows(&x, 10, 3, 0);
    assert_int_equal(hdp_dataset_prepare(&x, y, 9, NULL, &ds, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "9 labels for 10 rows"));
    hdp_error_clear(&err);
    hdp_dataset_options o = {0, 0, -1, 0, 0};
    assert_int_equal(hdp_dataset_prepare(&x, y, 10, &o, &ds, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "ridge"));
    hdp_matrix_free(&x);
    /* all rows equal: scale = trace is impossible */
    make_rows(&x, 10, 3, 0);
    for (int k = 0; k < 30; k++)
        x.f64[k] = 2.0;
    hdp_error_clear(&err);
    assert_int_equal(hdp_dataset_prepare(&x, NULL, 0, NULL, &ds, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "equal"));
    hdp_matrix_free(&x);
    hdp_error_clear(&err);
    assert_int_equal(hdp_dataset_prepare(NULL, NULL, 0, NULL, &ds, &err), HDP_EINPUT);
}

static void test_labels_map(void **state)
{
    (void)state;
    hdp_error err;
    hdp_error_clear(&err);
    double y[6] = {0, 3, 6, 3, 9, 0}, pos[2] = {0, 6};
    assert_int_equal(hdp_labels_map_pm1(y, 6, pos, 2, "lab.npy", &err), HDP_OK);
    double want[6] = {1, -1, 1, -1, -1, 1};
    for (int i = 0; i < 6; i++)
        assert_true(y[i] == want[i]);
    double z[3] = {0, 1.5, 2}, p7 = 7, p0 = 0;
    assert_int_equal(hdp_labels_map_pm1(z, 3, &p7, 1, "lab.npy", &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "lab.npy: the positive class 7"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_labels_map_pm1(z, 3, &p0, 1, "lab.npy", &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "label 2 is 1.5"));
}

static void test_apply(void **state)
{
    (void)state;
    for (int rot = 0; rot < 2; rot++) {
        hdp_matrix x, t;
        make_rows(&x, 200, 5, 0);
        make_rows(&t, 200, 5, 0);
        double *y = malloc(200 * sizeof(double));
        for (long i = 0; i < 200; i++)
            y[i] = hdp_matrix_get(&x, i, 0) - 2 * hdp_matrix_get(&x, i, 3) + sin((double)i);
        hdp_error err;
        hdp_error_clear(&err);
        hdp_dataset ds;
        hdp_dataset_options o = {0, 0, 0, !rot, 0};
        assert_int_equal(hdp_dataset_prepare(&x, y, 200, &o, &ds, &err), HDP_OK);
        /* the training rows again, as a test set: the same prepared rows, the same error */
        assert_int_equal(hdp_dataset_apply(&ds, &t, "t.npy", &err), HDP_OK);
        for (long i = 0; i < 200; i++)
            for (long j = 0; j < 5; j++)
                assert_true(fabs(hdp_matrix_get(&t, i, j) - hdp_matrix_get(&ds.rows, i, j)) <= 1e-12);
        double mse = hdp_dataset_mse(&ds, &t, y, 200);
        assert_true(ds.tau2 > 0.1 && fabs(mse - ds.tau2) <= 1e-12 * ds.tau2);
        assert_true(isnan(hdp_dataset_mse(&ds, &t, y, 199)));
        hdp_matrix_free(&t);
        make_rows(&t, 10, 4, 1);
        assert_int_equal(hdp_dataset_apply(&ds, &t, "t.npy", &err), HDP_EINPUT);
        assert_non_null(strstr(err.msg, "t.npy: rows of 4 values, the training rows have d = 5"));
        hdp_matrix_free(&t);
        hdp_dataset_free(&ds);
        free(y);
    }
}

#define SAME(a, b, n) assert_memory_equal((a), (b), (size_t)(n) * sizeof(double))

/* statistics_only (hdp_dataset_load): every statistic, and the held-out rows and MSE, bit for
 * bit those of a full preparation; the training rows left as read */
static void test_statistics_only(void **state)
{
    (void)state;
    for (int f32 = 0; f32 < 2; f32++)
        for (int labels = 0; labels < 2; labels++) {
            const long n = 300, d = 6;
            hdp_matrix x1, x2, raw, t1, t2;
            make_rows(&x1, n, d, f32);
            make_rows(&x2, n, d, f32);
            make_rows(&raw, n, d, f32);
            make_rows(&t1, 40, d, f32);
            make_rows(&t2, 40, d, f32);
            double y[300];
            for (long i = 0; i < n; i++)
                y[i] = hdp_matrix_get(&raw, i, 1) - 0.5 * hdp_matrix_get(&raw, i, 4) + cos(i);
            hdp_error err;
            hdp_error_clear(&err);
            hdp_dataset a, b;
            hdp_dataset_options full = {0, 0, 0.1, 0, 0}, stats = {0, 0, 0.1, 0, 1};
            assert_int_equal(hdp_dataset_prepare(&x1, labels ? y : NULL, labels ? n : 0, &full,
                                                 &a, &err), HDP_OK);
            assert_int_equal(hdp_dataset_prepare(&x2, labels ? y : NULL, labels ? n : 0, &stats,
                                                 &b, &err), HDP_OK);
            assert_int_equal(a.prepared, 1);
            assert_int_equal(b.prepared, 0);
            assert_int_equal(b.rotated, 1);
            SAME(a.lambda, b.lambda, d);
            SAME(a.u, b.u, d * d);
            SAME(a.mean, b.mean, d);
            assert_true(a.scale == b.scale && a.trace == b.trace && a.trace_raw == b.trace_raw);
            if (labels) {
                SAME(a.theta, b.theta, d);
                SAME(a.theta_eig, b.theta_eig, d);
                SAME(a.energy, b.energy, d);
                SAME(a.residual, b.residual, n);
                assert_true(a.tau2 == b.tau2 && a.risk0 == b.risk0 && a.tau2 > 0);
            }
            for (long i = 0; i < n; i++) /* as read */
                for (long j = 0; j < d; j++)
                    assert_true(hdp_matrix_get(&b.rows, i, j) == hdp_matrix_get(&raw, i, j));
            assert_int_equal(hdp_dataset_apply(&a, &t1, "t", &err), HDP_OK);
            assert_int_equal(hdp_dataset_apply(&b, &t2, "t", &err), HDP_OK);
            for (long i = 0; i < 40; i++)
                for (long j = 0; j < d; j++)
                    assert_true(hdp_matrix_get(&t1, i, j) == hdp_matrix_get(&t2, i, j));
            if (labels) {
                double m1 = hdp_dataset_mse(&a, &t1, y, 40), m2 = hdp_dataset_mse(&b, &t2, y, 40);
                assert_true(m1 > 0 && m1 == m2);
            }
            hdp_matrix_free(&raw);
            hdp_matrix_free(&t1);
            hdp_matrix_free(&t2);
            hdp_dataset_free(&a);
            hdp_dataset_free(&b);
        }
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hdpsgd-test-dataset.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_formats),   cmocka_unit_test(test_npy_labels),
        cmocka_unit_test(test_idx_formats),   cmocka_unit_test(test_csv_formats),
        cmocka_unit_test(test_bad_binary),    cmocka_unit_test(test_bad_csv),
        cmocka_unit_test(test_prepare),       cmocka_unit_test(test_prepare_refuses),
        cmocka_unit_test(test_labels_map),    cmocka_unit_test(test_apply),
        cmocka_unit_test(test_statistics_only),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
