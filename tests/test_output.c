/*
 * test_output.c — the output layer (src/io/output.c): a set of files committed all or
 * nothing, the replaced file's mode kept, symbolic links written through and resolved,
 * descriptors named by /dev/fd/N, and the JSON writer (numbers that read back exactly, null
 * for what is not finite, escaped strings); a CSV holding NaN is never published.
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/output.h"
#include "core/text.h"
#include "testutil.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hdpsgd-test-output.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int file_equals(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return !strcmp(buf, text);
}

/* no file of the set appears until the commit; a failing member leaves none published */
static void set_all_or_nothing(void **state)
{
    (void)state;
    char a[128], b[128];
    path_in(a, sizeof a, "a.csv");
    path_in(b, sizeof b, "b.json");
    write_text(a, "old a\n");
    hdp_error err;
    hdp_error_clear(&err);
    hdp_outset set;
    hdp_outset_init(&set, &err);
    FILE *f = hdp_outset_add(&set, a);
    assert_non_null(f);
    fputs("new a\n", f);
    assert_null(hdp_outset_add(&set, NULL)); /* no path: skipped */
    f = hdp_outset_add(&set, b);
    assert_non_null(f);
    fputs("new b\n", f);
    assert_true(file_equals(a, "old a\n")); /* nothing published yet */
    assert_int_equal(access(b, F_OK), -1);
    assert_int_equal(hdp_outset_commit(&set), HDP_OK);
    assert_true(file_equals(a, "new a\n"));
    assert_true(file_equals(b, "new b\n"));

    /* the second member cannot be written (a full device): the first is not published */
    hdp_error_clear(&err);
    hdp_outset_init(&set, &err);
    f = hdp_outset_add(&set, a);
    assert_non_null(f);
    fputs("newer a\n", f);
    f = hdp_outset_add(&set, "/dev/full");
    assert_non_null(f);
    fputs("x\n", f);
    assert_int_equal(hdp_outset_commit(&set), HDP_EIO);
    assert_true(file_equals(a, "new a\n"));
    /* and no temporary file is left in the folder */
    char cmd[160];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' | grep tmp)\"", dir);
    assert_int_equal(system(cmd), 0);
}

/* a replaced file keeps its permission bits */
static void mode_kept(void **state)
{
    (void)state;
    char p[128];
    path_in(p, sizeof p, "private.csv");
    write_text(p, "old\n");
    chmod(p, 0600);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_outfile o;
    assert_int_equal(hdp_out_open(&o, p, &err), HDP_OK);
    fputs("new\n", o.f);
    assert_int_equal(hdp_out_commit(&o, &err), HDP_OK);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_true(file_equals(p, "new\n"));
}

/* links: followed to the final target (relative ones from their own folder), never
 * replaced; a link loop is refused; /dev/fd/N is that descriptor */
static void links_and_descriptors(void **state)
{
    (void)state;
    char target[128], link1[128], link2[128], loop[128], resolved[HDP_OUT_PATH_MAX + 1];
    path_in(target, sizeof target, "target.csv");
    path_in(link1, sizeof link1, "link1.csv");
    path_in(link2, sizeof link2, "link2.csv");
    path_in(loop, sizeof loop, "loop");
    write_text(target, "old\n");
    assert_int_equal(symlink("target.csv", link1), 0);
    assert_int_equal(symlink("link1.csv", link2), 0);
    assert_int_equal(symlink("loop", loop), 0);
    hdp_error err;
    hdp_error_clear(&err);
    int fd;
    assert_int_equal(hdp_out_resolve(link2, resolved, sizeof resolved, &fd, &err), HDP_OK);
    assert_string_equal(resolved, target);
    assert_int_equal(fd, -1);
    hdp_outfile o;
    assert_int_equal(hdp_out_open(&o, link2, &err), HDP_OK);
    fputs("through\n", o.f);
    assert_int_equal(hdp_out_commit(&o, &err), HDP_OK);
    struct stat sb;
    assert_int_equal(lstat(link2, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_true(file_equals(target, "through\n"));
    hdp_error_clear(&err);
    assert_int_equal(hdp_out_resolve(loop, resolved, sizeof resolved, &fd, &err), HDP_EINPUT);
    assert_non_null(strstr(err.msg, "symbolic links"));
    /* a descriptor: written at its offset, like a shell redirection */
    char p[128];
    path_in(p, sizeof p, "fd.txt");
    int d = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(d >= 0);
    assert_int_equal(write(d, "head\n", 5), 5);
    char name[32];
    snprintf(name, sizeof name, "/dev/fd/%d", d);
    hdp_error_clear(&err);
    assert_int_equal(hdp_out_resolve(name, resolved, sizeof resolved, &fd, &err), HDP_OK);
    assert_int_equal(fd, d);
    assert_int_equal(hdp_out_open(&o, name, &err), HDP_OK);
    fputs("tail\n", o.f);
    assert_int_equal(hdp_out_commit(&o, &err), HDP_OK);
    close(d);
    assert_true(file_equals(p, "head\ntail\n"));
}

/* JSON: numbers in the shortest form that reads back exactly; non-finite numbers are
 * null; strings are escaped; nested objects and arrays */
static void json_writer(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    hdp_json j;
    hdp_json_begin(&j, f);
    hdp_json_num(&j, "x", 0.1);
    hdp_json_num(&j, "nan", NAN);
    hdp_json_num(&j, "inf", INFINITY);
    hdp_json_int(&j, "n", -3);
    hdp_json_uint(&j, "seed", 18446744073709551615ULL);
    hdp_json_bool(&j, "ok", 1);
    hdp_json_str(&j, "s", "a\"b\\c\nd");
    hdp_json_object(&j, "o");
    hdp_json_num(&j, "third", 1.0 / 3.0);
    hdp_json_array(&j, "a");
    hdp_json_num(&j, NULL, 0.3);
    hdp_json_int(&j, NULL, 2);
    hdp_json_num(&j, NULL, NAN);
    hdp_json_close(&j);
    hdp_json_object(&j, "empty");
    hdp_json_close(&j);
    hdp_json_close(&j);
    hdp_json_array(&j, "none");
    hdp_json_close(&j);
    hdp_json_end(&j);
    fclose(f);
    const char *want = "{\n  \"x\": 0.1,\n  \"nan\": null,\n  \"inf\": null,\n"
                       "  \"n\": -3,\n  \"seed\": 18446744073709551615,\n  \"ok\": true,\n"
                       "  \"s\": \"a\\\"b\\\\c\\u000ad\",\n"
                       "  \"o\": {\n    \"third\": 0.3333333333333333,\n"
                       "    \"a\": [0.3, 2, null],\n    \"empty\": {}\n  },\n"
                       "  \"none\": []\n}\n";
    assert_string_equal(text, want);
    free(text);
    /* the shortest of %.15g, %.16g, %.17g that reads back */
    char num[64];
    double xs[] = {0.1, 0.3, 1.0 / 3.0, 0.1 + 0.2, 1e-300, 5e-324, 1.7976931348623157e308,
                   123456789012345678.0, -2.5};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        hdp_json_format_num(num, sizeof num, xs[i]);
        assert_true(strtod(num, NULL) == xs[i]);
        char p15[400], p16[400];
        snprintf(p15, sizeof p15, "%.15g", xs[i]);
        snprintf(p16, sizeof p16, "%.16g", xs[i]);
        if (strtod(p15, NULL) == xs[i]) /* the shortest form that reads back is taken */
            assert_string_equal(num, p15);
        else if (strtod(p16, NULL) == xs[i])
            assert_string_equal(num, p16);
    }
    assert_string_equal(hdp_json_format_num(num, sizeof num, 0.1 + 0.2), "0.30000000000000004");
    assert_string_equal(hdp_json_format_num(num, sizeof num, 0.3), "0.3");
}

/* user text made visible (core/text.h): C0, DEL, C1 controls and bytes that are not UTF-8 as
 * \xNN, valid UTF-8 kept; the length returned is the whole result (as snprintf) */
static void visible_text(void **state)
{
    (void)state;
    char out[256];
    struct { const char *in, *want; unsigned flags; } cases[] = {
        {"plain/é ρ.txt", "plain/é ρ.txt", 0},
        {"a\033[31mb", "a\\x1b[31mb", 0},
        {"tab\there\nnl\r", "tab\\x09here\\x0anl\\x0d", 0},
        {"tab\there\nnl\r", "tab\there\nnl\r", HDP_VISIBLE_KEEP_LINES},
        {"del\177", "del\\x7f", 0},
        {"c1\xc2\x9b[2J", "c1\\xc2\\x9b[2J", 0},          /* U+009B CSI */
        {"nbsp\xc2\xa0", "nbsp\xc2\xa0", 0},                /* U+00A0: printable */
        {"latin\xe9.ini", "latin\\xe9.ini", 0},
        {"\xed\xa0\x80", "\\xed\\xa0\\x80", 0},           /* a UTF-16 surrogate */
        {"\xc0\xaf", "\\xc0\\xaf", 0},                       /* overlong '/' */
        {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", 0},   /* above U+10FFFF */
        {"\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!", 0},     /* U+1F600 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = hdp_visible(out, sizeof out, cases[i].in, strlen(cases[i].in), cases[i].flags);
        assert_string_equal(out, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
        assert_int_equal(hdp_visible(NULL, 0, cases[i].in, strlen(cases[i].in), cases[i].flags), n);
    }
    /* too small a buffer: NUL-terminated, the full length returned */
    char small[4];
    assert_int_equal(hdp_visible(small, sizeof small, "\033abc", 4, 0), 7);
    assert_string_equal(small, "\\x1");
    /* a stream split anywhere holds back an incomplete sequence, never a complete one */
    assert_int_equal(hdp_utf8_incomplete_tail("ab\xe2\x82", 4), 2);  /* of U+20AC */
    assert_int_equal(hdp_utf8_incomplete_tail("ab\xe2\x82\xac", 5), 0);
    assert_int_equal(hdp_utf8_incomplete_tail("ab\xf0", 3), 1);
    assert_int_equal(hdp_utf8_incomplete_tail("ab\xe0\x80", 4), 0);  /* overlong: invalid */
    assert_int_equal(hdp_utf8_incomplete_tail("ab\xff", 3), 0);
    assert_int_equal(hdp_utf8_incomplete_tail("", 0), 0);
}

/* JSON strings are valid UTF-8: invalid bytes as \u00XX (their Latin-1 reading), valid UTF-8
 * kept, control characters escaped */
static void json_utf8(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    hdp_json j;
    hdp_json_begin(&j, f);
    hdp_json_str(&j, "s", "mod\xe9l \xc3\xa9 \xff\xfe \xe2\x82 \x1b");
    hdp_json_end(&j);
    fclose(f);
    assert_string_equal(text, "{\n  \"s\": \"mod\\u00e9l \xc3\xa9 \\u00ff\\u00fe "
                              "\\u00e2\\u0082 \\u001b\"\n}\n");
    free(text);
}

/* commit a set of one file holding text; returns the status, err filled */
static hdp_status commit_one(const char *path, const char *text, hdp_error *err)
{
    hdp_error_clear(err);
    hdp_outset set;
    hdp_outset_init(&set, err);
    FILE *f = hdp_outset_add(&set, path);
    assert_non_null(f);
    fputs(text, f);
    return hdp_outset_commit(&set);
}

/* The central guard: a CSV data field that is NaN as printf writes it fails the commit with
 * HDP_ENUMERIC naming the file, line and column, and nothing is published; inf (a quantity
 * that is infinite, epsilon = inf), words containing "nan", comments and other files pass. */
static void csv_nan_refused(void **state)
{
    (void)state;
    char a[128], j[128];
    path_in(a, sizeof a, "nan.csv");
    path_in(j, sizeof j, "nan.json");
    hdp_error err;
    const char *bad[] = {"x,y\n1,nan\n", "x,y\n1,2\n-nan,3\n", "x,y\n1, NaN \n",
                         "x,y\n1,-nan(0x8000)\n"};
    const char *col[] = {"line 2, column 'y'", "line 3, column 'x'", "line 2, column 'y'",
                         "line 2, column 'y'"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(commit_one(a, bad[i], &err), HDP_ENUMERIC);
        assert_non_null(strstr(err.msg, col[i]));
        assert_int_equal(access(a, F_OK), -1);
    }
    /* the whole set is withheld: a JSON beside the CSV is not published either */
    hdp_error_clear(&err);
    hdp_outset set;
    hdp_outset_init(&set, &err);
    fputs("{}\n", hdp_outset_add(&set, j));
    fputs("# nan in a comment\nx,y\n1,nan\n", hdp_outset_add(&set, a));
    assert_int_equal(hdp_outset_commit(&set), HDP_ENUMERIC);
    assert_int_equal(access(j, F_OK), -1);
    const char *ok = "# a comment: nan\nname,v,w\nbanana,inf,\nnanny,-inf,1e-3\n";
    assert_int_equal(commit_one(a, ok, &err), HDP_OK);
    assert_true(file_equals(a, ok));
    assert_int_equal(commit_one(j, "nan\n", &err), HDP_OK); /* not a CSV */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_all_or_nothing),
        cmocka_unit_test(mode_kept),
        cmocka_unit_test(links_and_descriptors),
        cmocka_unit_test(json_writer),
        cmocka_unit_test(visible_text),
        cmocka_unit_test(json_utf8),

        cmocka_unit_test(csv_nan_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
