/* fuzz_plot_quote.c — libFuzzer harness of the strings handed to gnuplot (src/io/plot_vars.c,
 * hdp_plot_quote): any bytes become gnuplot code that is only data. The text must be pieces
 * joined by '.', each a single-quoted run without a quote inside, or one of "'", "\n", "\t";
 * what they spell is valid UTF-8 without control characters but newline and tab, and equals
 * the input when the input was such a text. Seeds: fuzz/plot-corpus/ (the payloads of
 * tests/cli/plot_hostile.sh). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plot.h"

/* the length of the well-formed UTF-8 character at p (no control characters), or 0; written
 * apart from plot_vars.c's on purpose */
static size_t utf8_char(const unsigned char *p, const unsigned char *end)
{
    if (*p >= 0x20 && *p < 0x7f)
        return 1;
    unsigned cp;
    size_t n;
    if (*p >= 0xc0 && *p < 0xe0) { n = 2; cp = *p & 0x1f; }
    else if (*p >= 0xe0 && *p < 0xf0) { n = 3; cp = *p & 0x0f; }
    else if (*p >= 0xf0 && *p < 0xf8) { n = 4; cp = *p & 0x07; }
    else return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp < 0xa0))
        return 0;
    return n;
}

static int is_text(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        if (s[i] == '\n' || s[i] == '\t') {
            i++;
            continue;
        }
        size_t n = utf8_char(s + i, s + len);
        if (!n)
            return 0;
        i += n;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    size_t len = strlen(in); /* a C string ends at its first NUL */
    hdp_plot_vars v;
    hdp_plot_vars_init(&v);
    hdp_plot_quote(&v, in);
    if (v.failed) {
        hdp_plot_vars_free(&v);
        free(in);
        return 0;
    }
    /* parse the pieces back */
    const char *q = v.text;
    char *out = malloc(v.len + 1);
    size_t k = 0;
    int first = 1;
    while (*q) {
        if (!first && *q++ != '.')
            abort(); /* pieces are joined by '.' */
        first = 0;
        if (!strncmp(q, "\"'\"", 3) || !strncmp(q, "\"\\n\"", 4) || !strncmp(q, "\"\\t\"", 4)) {
            out[k++] = q[1] == '\'' ? '\'' : q[2] == 'n' ? '\n' : '\t';
            q += q[1] == '\'' ? 3 : 4;
            continue;
        }
        if (*q++ != '\'')
            abort(); /* anything else is a single-quoted run */
        const char *close = strchr(q, '\'');
        if (!close)
            abort();
        memcpy(out + k, q, (size_t)(close - q));
        k += (size_t)(close - q);
        q = close + 1;
    }
    if (!is_text((const unsigned char *)out, k))
        abort(); /* a control character or a byte that is not UTF-8 reached gnuplot */
    if (is_text((const unsigned char *)in, len) && (k != len || memcmp(out, in, len)))
        abort(); /* a text was changed */
    free(out);
    hdp_plot_vars_free(&v);
    free(in);
    return 0;
}
