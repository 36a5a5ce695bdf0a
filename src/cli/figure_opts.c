/*
 * figure_opts.c — the figure options shared by `plot` and every command that draws a figure
 * (--figure, rf-experiment): one option group, defined here once; cli_parse, the help, the
 * man page and the bash completion add it to those commands' own tables (cli_figure_opts_for).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "cli.h"

static const char *size_opt, *key_opt, *xlabel_opt, *ylabel_opt;
static double font_opt;
static int no_title_opt, logx_opt, logy_opt;
static cli_strings labels_opt;
static char key_words[256];

const cli_opt cli_figure_opts[] = {
    {"size", 0, OPT_STRING, &size_opt, "W,H",
     "figure size in inches (default one column, 3.4,2.6, taller for stacked panels), or "
     "'column' or 'wide' (two columns, 7,3)"},
    {"font-size", 0, OPT_DOUBLE, &font_opt, "PT",
     "font size in points in the final document (default 8; 4 to 30)"},
    {"label", 0, OPT_STRINGS, &labels_opt, "TEXT",
     "legend text of the next curve, in order (repeatable): plot's input files, a sweep's "
     "curves, validate's ODE, Monte Carlo, SDE, a family's curves"},
    {"no-title", 0, OPT_FLAG, &no_title_opt, NULL,
     "no title; its text (the parameters) goes to FIG-without-extension.caption.txt"},
    {"key", 0, OPT_STRING, &key_opt, "POS",
     "legend position: top|bottom|center left|right|center, outside, below, or off"},
    {"xlabel", 0, OPT_STRING, &xlabel_opt, "TEXT", "the x axis's label (default: the script's, "
     "or the key's description)"},
    {"ylabel", 0, OPT_STRING, &ylabel_opt, "TEXT", "the y axis's label"},
    {"logx", 0, OPT_FLAG, &logx_opt, NULL, "logarithmic x axis"},
    {"logy", 0, OPT_FLAG, &logy_opt, NULL, "logarithmic y axis"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

int cli_draws_figures(const cli_command *cmd)
{
    if (!strcmp(cmd->name, "rf-experiment"))
        return 1; /* draws its figure beside its CSV, without a --figure option */
    for (const cli_opt *o = cmd->opts; o && o->name; o++)
        if (o->kind == OPT_FIGURE)
            return 1;
    return 0;
}

const cli_opt *cli_figure_opts_for(const cli_command *cmd)
{
    return cli_draws_figures(cmd) ? cli_figure_opts : NULL;
}

void cli_figure_opts_reset(void)
{
    size_opt = key_opt = xlabel_opt = ylabel_opt = NULL;
    font_opt = NAN;
    no_title_opt = logx_opt = logy_opt = 0;
    labels_opt.n = 0;
    hdp_plot_set_style(NULL);
}

static int bad(const char *cmd, const char *what, const char *value, const char *expected)
{
    return cli_bad(cmd, "%s %s: %s (nothing was run)", what, value, expected);
}

/* the words gnuplot's 'set key' takes for a position, separated by spaces or single commas;
 * out gets them separated by single spaces (what gnuplot reads) */
static int key_ok(const char *k, char *out, size_t size)
{
    static const char *words[] = {"top", "bottom", "center", "left", "right", "outside",
                                  "inside", "below", "above", "horizontal", "vertical",
                                  "box", "nobox", "opaque", NULL};
    if (!strcmp(k, "off")) {
        snprintf(out, size, "off");
        return 1;
    }
    size_t used = 0;
    int n = 0;
    for (const char *c = k; *c;) {
        size_t len = strcspn(c, " ,");
        if (len == 0) /* an empty word: two separators, or one at an end */
            return 0;
        int found = 0;
        for (int i = 0; words[i]; i++)
            found |= strlen(words[i]) == len && !strncmp(c, words[i], len);
        if (!found || used + len + 2 > size)
            return 0;
        used += (size_t)snprintf(out + used, size - used, "%s%.*s", n ? " " : "", (int)len, c);
        n++;
        c += len;
        int commas = 0; /* the separator: spaces and at most one comma */
        while (*c == ' ' || *c == ',')
            commas += *c++ == ',';
        if (commas > 1 || (!*c && (c[-1] == ' ' || c[-1] == ',')))
            return 0; /* ",," (an empty word) or a trailing separator */
    }
    return n > 0;
}

const char *cli_figure_opts_given(void)
{
    const char *given[] = {size_opt ? "size" : NULL, !isnan(font_opt) ? "font-size" : NULL,
                           labels_opt.n ? "label" : NULL, no_title_opt ? "no-title" : NULL,
                           key_opt ? "key" : NULL, xlabel_opt ? "xlabel" : NULL,
                           ylabel_opt ? "ylabel" : NULL, logx_opt ? "logx" : NULL,
                           logy_opt ? "logy" : NULL};
    for (size_t i = 0; i < sizeof given / sizeof *given; i++)
        if (given[i])
            return given[i];
    return NULL;
}

int cli_figure_opts_apply(const char *cmd)
{
    hdp_plot_style s = {0};
    if (size_opt) {
        double w = 0, h = 0;
        char tail;
        if (!strcmp(size_opt, "column")) {
            w = HDP_PLOT_COLUMN_W;
            h = HDP_PLOT_COLUMN_H;
        } else if (!strcmp(size_opt, "wide")) {
            w = HDP_PLOT_WIDE_W;
            h = HDP_PLOT_WIDE_H;
        } else if (sscanf(size_opt, "%lf,%lf%c", &w, &h, &tail) != 2 || !isfinite(w) ||
                   !isfinite(h) || !(w > 0) || !(h > 0)) {
            return bad(cmd, "--size", size_opt,
                       "expected two positive numbers W,H (inches), 'column' or 'wide'");
        }
        if (w < 1 || h < 1 || w > 40 || h > 40)
            return bad(cmd, "--size", size_opt, "each side must be from 1 to 40 inches");
        s.width = w;
        s.height = h;
    }
    if (!isnan(font_opt)) {
        if (!(font_opt >= 4 && font_opt <= 30))
            return cli_bad(cmd, "--font-size %g: expected a size in points from 4 to 30 (nothing "
                           "was run)", font_opt);
        s.font_size = font_opt;
    }
    if (key_opt) {
        if (!key_ok(key_opt, key_words, sizeof key_words))
            return bad(cmd, "--key", key_opt,
                       "expected words of top, bottom, center, left, right, outside, below, "
                       "above, horizontal, vertical, box, opaque, separated by a space or a "
                       "comma, or 'off'");
        s.key = key_words;
    }
    for (int i = 0; i < labels_opt.n; i++) {
        if (strchr(labels_opt.v[i], '\n'))
            return bad(cmd, "--label", labels_opt.v[i], "a label is one line");
        s.labels[i] = labels_opt.v[i];
    }
    s.nlabels = labels_opt.n;
    if (xlabel_opt && strchr(xlabel_opt, '\n'))
        return bad(cmd, "--xlabel", xlabel_opt, "a label is one line");
    if (ylabel_opt && strchr(ylabel_opt, '\n'))
        return bad(cmd, "--ylabel", ylabel_opt, "a label is one line");
    s.xlabel = xlabel_opt;
    s.ylabel = ylabel_opt;
    s.no_title = no_title_opt;
    s.logx = logx_opt;
    s.logy = logy_opt;
    hdp_plot_set_style(&s);
    return 0;
}
