/* plot_vars.c — the variables of a figure's script, written so that no text reaches
 * gnuplot's parser as code (see plot.h). */
#include "plot.h"
#include "plot_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hdp_plot_vars_init(hdp_plot_vars *v) { memset(v, 0, sizeof *v); }

void hdp_plot_vars_free(hdp_plot_vars *v)
{
    free(v->text);
    free(v->title);
    for (int i = 0; i < v->nfiles; i++) {
        free(v->files[i]);
        free(v->data[i]);
    }
    free(v->files);
    free(v->data);
    free(v->data_len);
    memset(v, 0, sizeof *v);
}

static void append(hdp_plot_vars *v, const char *s, size_t n)
{
    if (v->failed)
        return;
    if (v->len + n + 1 > v->cap) {
        size_t cap = v->cap ? v->cap : 1024;
        while (cap < v->len + n + 1)
            cap *= 2;
        char *t = realloc(v->text, cap);
        if (!t) {
            v->failed = 1;
            return;
        }
        v->text = t;
        v->cap = cap;
    }
    memcpy(v->text + v->len, s, n);
    v->len += n;
    v->text[v->len] = '\0';
}

static void append_str(hdp_plot_vars *v, const char *s) { append(v, s, strlen(s)); }

/* The length of the UTF-8 character at p that may appear in a figure's text: 1 for a
 * printable ASCII character, 2-4 for a well-formed multibyte character other than a C1
 * control; 0 for a control character or a byte that does not start one. */
static size_t text_char(const unsigned char *p)
{
    if (*p >= 0x20 && *p < 0x7f)
        return 1;
    size_t n = *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3
             : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
        return 0; /* C1 controls */
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
        return 0; /* overlong, surrogates */
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
        return 0; /* overlong, beyond U+10FFFF */
    return n;
}

/* The string as gnuplot pieces joined by '.': runs of text in single quotes, and a single
 * quote, newline or tab as "'", "\n", "\t" (gnuplot misreads its '' escape at the start of a
 * single-quoted string: '''x' reads as two strings). */
void hdp_plot_quote(hdp_plot_vars *v, const char *value)
{
    int open = 0, pieces = 0;
    for (const unsigned char *p = (const unsigned char *)value; *p;) {
        const char *special = *p == '\'' ? "\"'\"" : *p == '\n' ? "\"\\n\"" : *p == '\t' ? "\"\\t\"" : NULL;
        if (special) {
            append_str(v, open ? "'." : pieces ? "." : "");
            append_str(v, special);
            open = 0;
            pieces++;
            p++;
            continue;
        }
        if (!open) {
            append_str(v, pieces ? ".'" : "'");
            open = 1;
            pieces++;
        }
        size_t n = text_char(p);
        if (n) {
            append(v, (const char *)p, n);
            p += n;
        } else {
            append_str(v, "\xef\xbf\xbd"); /* U+FFFD, the replacement character */
            p++;
        }
    }
    if (open)
        append_str(v, "'");
    if (!pieces)
        append_str(v, "''");
}

int hdp_plot_fquote(FILE *f, const char *value)
{
    hdp_plot_vars q;
    hdp_plot_vars_init(&q);
    hdp_plot_quote(&q, value);
    int ok = !q.failed && q.text && fputs(q.text, f) >= 0;
    hdp_plot_vars_free(&q);
    return ok ? 0 : -1;
}

/* "var = ": a gnuplot identifier, else the variables fail */
static int begin(hdp_plot_vars *v, const char *var)
{
    int ok = var && ((*var >= 'a' && *var <= 'z') || (*var >= 'A' && *var <= 'Z') || *var == '_');
    for (const char *c = var; ok && *c; c++)
        ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
             *c == '_';
    if (!ok) {
        v->failed = 2;
        return 0;
    }
    append_str(v, var);
    append_str(v, " = ");
    return 1;
}

void hdp_plot_var_str(hdp_plot_vars *v, const char *var, const char *value)
{
    if (var && !strcmp(var, "title_text")) {
        char *t = strdup(value ? value : "");
        if (!t) {
            v->failed = 1;
            return;
        }
        free(v->title);
        v->title = t;
        v->has_title = 1;
        return;
    }
    if (!begin(v, var))
        return;
    hdp_plot_quote(v, value ? value : "");
    append_str(v, "\n");
}

void hdp_plot_var_num(hdp_plot_vars *v, const char *var, double value)
{
    if (!begin(v, var))
        return;
    char buf[64];
    if (isfinite(value))
        snprintf(buf, sizeof buf, "%.17g\n", value);
    else
        snprintf(buf, sizeof buf, "NaN\n");
    append_str(v, buf);
}

/* a new private file: its number (from 1), or 0 */
static int add_file(hdp_plot_vars *v, const char *path, const char *text, size_t len)
{
    if (v->failed)
        return 0;
    if (v->nfiles == v->files_cap) {
        int cap = v->files_cap ? 2 * v->files_cap : 8;
        char **f = realloc(v->files, (size_t)cap * sizeof *f);
        if (f) v->files = f;
        char **d = f ? realloc(v->data, (size_t)cap * sizeof *d) : NULL;
        if (d) v->data = d;
        size_t *l = d ? realloc(v->data_len, (size_t)cap * sizeof *l) : NULL;
        if (!l) {
            v->failed = 1;
            return 0;
        }
        v->data_len = l;
        v->files_cap = cap;
    }
    char *p = path ? strdup(path) : NULL;
    char *d = text ? malloc(len ? len : 1) : NULL;
    if ((path && !p) || (text && !d)) {
        free(p);
        free(d);
        v->failed = 1;
        return 0;
    }
    if (d)
        memcpy(d, text, len);
    v->files[v->nfiles] = p;
    v->data[v->nfiles] = d;
    v->data_len[v->nfiles] = len;
    return ++v->nfiles;
}

/* fig_dir.'/dataN.csv' (fig_dir: the private folder, set by hdp_plot_draw) */
static void private_name(hdp_plot_vars *v, int k)
{
    char buf[64];
    snprintf(buf, sizeof buf, "fig_dir.'/data%d.csv'", k);
    append_str(v, buf);
}

void hdp_plot_var_files(hdp_plot_vars *v, const char *var, const char *const *paths, int n)
{
    if (!begin(v, var))
        return;
    if (n == 0)
        append_str(v, "''");
    for (int i = 0; i < n; i++) {
        int k = add_file(v, paths[i], NULL, 0);
        if (!k)
            return;
        if (i)
            append_str(v, ".' '.");
        private_name(v, k);
    }
    append_str(v, "\n");
}

void hdp_plot_var_file(hdp_plot_vars *v, const char *var, const char *path)
{
    if (!path || !*path) { /* no file: an empty name (validate's sde_file without SDE) */
        hdp_plot_var_str(v, var, "");
        return;
    }
    hdp_plot_var_files(v, var, &path, 1);
}

void hdp_plot_var_data(hdp_plot_vars *v, const char *var, const char *text, size_t len)
{
    if (!begin(v, var))
        return;
    int k = add_file(v, NULL, text ? text : "", text ? len : 0);
    if (k) {
        private_name(v, k);
        append_str(v, "\n");
    }
}

/* The title, broken into lines that fit the figure's width (at spaces; a line holds about
 * width / (0.62 font size) characters), as title_text = '...'. */
int hdp_plot_write_title(FILE *f, const char *title, double width_in, double fs)
{
    int maxc = (int)(width_in * 72.0 / ((fs + 1) * 0.62));
    if (maxc < 20)
        maxc = 20;
    char *t = strdup(title);
    if (!t)
        return -1;
    int col = 0;
    for (char *c = t; *c; c++) {
        if (*c == '\n') {
            col = 0;
            continue;
        }
        if (*c == ' ') {
            /* break here when the next word does not fit */
            int next = 0;
            for (const char *w = c + 1; *w && *w != ' ' && *w != '\n'; w++)
                next += ((unsigned char)*w & 0xC0) != 0x80;
            if (col + 1 + next > maxc) {
                *c = '\n';
                col = 0;
                continue;
            }
        }
        col += ((unsigned char)*c & 0xC0) != 0x80;
    }
    fputs("title_text = ", f);
    int rc = hdp_plot_fquote(f, t);
    fputs("\n", f);
    free(t);
    return rc;
}
