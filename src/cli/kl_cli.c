/*
 * kl_cli.c — the helpers of `hdpsgd kl` shared by cmd_kl.c and cmd_kl_run.c (kl_cli.h):
 * the lists of depths, widths and schemes, the CSV header, the all-or-nothing writer of a
 * table, its figure data and the JSON, and the figure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plot.h"
#include "kl_cli.h"

int kl_bad(const char *fmt, const char *arg)
{
    return cli_bad("kl", fmt, arg);
}

/* One integer of a list at *p (strtol, decimal), ending at one of the characters of stops or
 * at the end; 0 when there is none or it overflows. */
static int list_int(const char **p, const char *stops, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(*p, &end, 10);
    if (end == *p || errno || (*end && !strchr(stops, *end)))
        return 0;
    *p = end;
    return 1;
}

int kl_parse_int_list(const char *opt, const char *text, long lo_ok, long hi_ok, long *out,
                      int *count)
{
    *count = 0;
    const char *p = text; /* read in place: a list of any length, never cut */
    long a, b, step = 1;
    if (strchr(text, ':')) {
        if (!list_int(&p, ":", &a) || *p++ != ':' || !list_int(&p, ":", &b))
            goto fail;
        if (*p == ':' && (++p, !list_int(&p, "", &step)))
            goto fail;
        if (*p || step < 1 || b < a || a < lo_ok || b > hi_ok ||
            (b - a) / step + 1 > KL_MAX_LIST) /* a, b within the range: b - a cannot overflow */
            goto range;
        for (long v = a; v <= b; v += step)
            out[(*count)++] = v;
    } else {
        while (*p) {
            long v;
            if (*count == KL_MAX_LIST || !list_int(&p, ",", &v))
                goto fail;
            out[(*count)++] = v;
            if (*p == ',' && !*++p)
                goto fail; /* a trailing comma */
        }
    }
    if (*count == 0)
        goto fail;
    for (int i = 0; i < *count; i++)
        if (out[i] < lo_ok || out[i] > hi_ok)
            return cli_bad("kl", "--%s %s: %ld is out of range: expected integers from %ld to %ld",
                           opt, text, out[i], lo_ok, hi_ok);
    return 0;
range:
    if (step >= 1 && b >= a && (a < lo_ok || b > hi_ok))
        return cli_bad("kl", "--%s %s: %ld is out of range: expected integers from %ld to %ld",
                       opt, text, a < lo_ok ? a : b, lo_ok, hi_ok);
fail:
    return cli_bad("kl", "--%s '%s': expected a list like 2,4,8 or a range 2:12 or 2:12:2 (at "
                   "most %d values)", opt, text, KL_MAX_LIST);
}

int kl_parse_schemes(const char *text, int *want, int *count)
{
    *count = 0;
    for (int k = 0; k < 4; k++)
        want[k] = 0;
    if (!strcasecmp(text, "all")) {
        for (int k = 0; k < 4; k++)
            want[k] = 1;
        *count = 4;
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int k = 0; k < 4; k++)
            if (!strcasecmp(tok, hdp_kl_init_name(k)))
                found = k;
        if (found < 0)
            return cli_bad("kl", "--schemes: '%s' is not a scheme: expected lecun, he, ntk, "
                           "xavier or all", tok);
        if (!want[found])
            (*count)++;
        want[found] = 1;
    }
    return *count ? 0 : cli_bad("kl", "--schemes '%s': no scheme named", text);
}

void kl_schemes_text(const int *want, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < 4 && len < size; k++)
        if (want[k])
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "",
                                    hdp_kl_init_name(k));
}

void kl_meta(FILE *f, const char *what, const hdp_model *m)
{
    fprintf(f, "# ; hdpsgd %s kl %s (Ye et al.; docs/theory.md §8; KL constant c = 4, the paper's c = 2 "
               "gives twice these KLs)\n", hdp_version_string(), what);
    hdp_model_write_meta_sections(m, f, cli_model_sections("kl"));
}

int kl_json_scheme(const cli_json_each *e, int k, cli_json_item *it)
{
    it->obj = ((const void *const *)e->obj)[k];
    it->name[0] = hdp_kl_init_name(k);
    return it->obj != NULL;
}

int kl_write(const kl_args *a, void (*table)(FILE *, const void *),
             void (*json)(hdp_json *, const void *), const void *ctx, const char *script,
             void (*fig_vars)(hdp_plot_vars *, const void *ctx))
{
    char data[HDP_OUT_PATH_MAX + 32] = "";
    if (a->figure)
        hdp_plot_stem(a->figure, ".csv", data, sizeof data); /* FIG without extension .csv */
    hdp_error err;
    hdp_error_clear(&err);
    hdp_outset out;
    hdp_outset_init(&out, &err);
    const char *tables[2] = {a->out, a->figure ? data : NULL};
    FILE *f;
    for (int t = 0; t < 2; t++) {
        if (!tables[t] || (t == 1 && a->out && !strcmp(a->out, data)))
            continue;
        if ((f = hdp_outset_add(&out, tables[t])))
            table(f, ctx);
    }
    if (json && (f = hdp_outset_add(&out, a->json))) {
        hdp_json j;
        hdp_json_begin(&j, f);
        json(&j, ctx);
        hdp_json_end(&j);
    }
    if (a->figure && script) {
        hdp_plot_vars v;
        hdp_plot_vars_init(&v);
        cli_plot_source(&out, &v, "data_file", data);
        fig_vars(&v, ctx);
        cli_draw(&out, script, a->figure, &v);
    }
    if (hdp_outset_commit(&out) != HDP_OK)
        return cli_fail("kl", &err);
    if (a->figure && script)
        cli_drawn(a->figure, data);
    return 0;
}

