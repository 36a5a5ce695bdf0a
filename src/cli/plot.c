/* plot.c — figures through gnuplot; see plot.h. */
#include "plot.h"

#include "io/output.h"
#include "plot_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *hdp_plot_gnuplot(void)
{
    static __thread char found[4096];
    const char *env = getenv("HDPSGD_GNUPLOT");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(found, sizeof found, "%.*s/gnuplot", (int)len, len ? p : ".");
        if (access(found, X_OK) == 0)
            return found;
        p += len + (colon ? 1 : 0);
    }
    return NULL;
}

/* ---- the user's style and the house style ---- */

static hdp_plot_style style_now;

void hdp_plot_set_style(const hdp_plot_style *s)
{
    if (s)
        style_now = *s;
    else
        memset(&style_now, 0, sizeof style_now);
}

const hdp_plot_style *hdp_plot_get_style(void) { return &style_now; }

const char *const hdp_plot_extensions[] = {".png", ".pdf", ".svg", ".eps", ".tex", NULL};

static const char *extension_of(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        return NULL;
    for (int i = 0; hdp_plot_extensions[i]; i++)
        if (!strcasecmp(dot, hdp_plot_extensions[i]))
            return hdp_plot_extensions[i];
    return NULL;
}

int hdp_plot_extension_ok(const char *path) { return path && extension_of(path) != NULL; }

void hdp_plot_stem(const char *path, const char *suffix, char *out, size_t size)
{
    snprintf(out, size, "%s", path);
    char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (dot && (!slash || dot > slash))
        *dot = '\0';
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s", suffix);
}

int hdp_plot_companions(const char *fig, char names[][4200], int max)
{
    int n = 0;
    char stem[4200];
    if (!fig)
        return 0;
    hdp_plot_stem(fig, "", stem, sizeof stem);
    const char *ext = extension_of(fig);
    if (ext && !strcmp(ext, ".tex") && n < max)
        snprintf(names[n++], 4200, "%.4100s-graphic.pdf", stem);
    if (style_now.no_title && n < max)
        snprintf(names[n++], 4200, "%.4100s.caption.txt", stem);
    return n;
}

/* The size of a figure: the user's, else one column for a single panel, taller for stacked
 * panels and legends below the plot, both columns for panels side by side. */
static void figure_size(const char *script, double *w, double *h)
{
    static const struct { const char *name; double w, h; } sizes[] = {
        {"validate", HDP_PLOT_COLUMN_W, 3.6},   {"curves", HDP_PLOT_COLUMN_W, 3.2},   {"schedule", HDP_PLOT_COLUMN_W, 4.6},
        {"rates", HDP_PLOT_COLUMN_W, 3.0},      {"kl-bound", HDP_PLOT_WIDE_W, 3.4},
        {"kl-sweep", HDP_PLOT_WIDE_W, 3.4},     {"kl-epochs", HDP_PLOT_COLUMN_W, 3.8},
        {"nc-sweep", HDP_PLOT_COLUMN_W, 4.8},   {"rf-p2", HDP_PLOT_COLUMN_W, 3.2},     {"rf-p1", HDP_PLOT_COLUMN_W, 3.0},
        {"rf-p3", HDP_PLOT_COLUMN_W, 3.2},      {"rf-p4", HDP_PLOT_COLUMN_W, 3.2},
        {"rf-run", HDP_PLOT_COLUMN_W, 3.4},     {"si-n", HDP_PLOT_COLUMN_W, 3.4},   {"si-eps", HDP_PLOT_COLUMN_W, 3.4},   {"si-align", HDP_PLOT_COLUMN_W, 3.0},
        {"sweep-heat", HDP_PLOT_COLUMN_W, 2.9},
        {"net-vs", HDP_PLOT_COLUMN_W, 3.4},     {"net-curve", HDP_PLOT_COLUMN_W, 3.4},
    };
    *w = style_now.width;
    *h = style_now.height;
    if (*w > 0 && *h > 0)
        return;
    *w = HDP_PLOT_COLUMN_W;
    *h = HDP_PLOT_COLUMN_H;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(sizes[i].name, script)) {
            *w = sizes[i].w;
            *h = sizes[i].h;
        }
}

/* The terminal. Cairo sets a font of size F at F * 4/3 points in a PDF (it assumes 96 dpi),
 * pdfcairo and epscairo then scale fonts by 0.5 by default: fontscale 0.75 makes a font
 * given as F points F points in the document. PNG: the same figure at HDP_PLOT_PNG_DPI (fonts,
 * lines and points scaled alike). */
static void terminal_for(const char *path, const char *script, char *buf, size_t size)
{
    double w, h;
    figure_size(script, &w, &h);
    double fs = style_now.font_size > 0 ? style_now.font_size : HDP_PLOT_FONT_SIZE;
    const char *ext = extension_of(path);
    if (!ext)
        ext = ".png";
    if (!strcmp(ext, ".pdf") || !strcmp(ext, ".eps")) /* pdfcairo, epscairo */
        snprintf(buf, size,
                 "set terminal %scairo enhanced color size %gin,%gin font 'Sans,%g' fontscale 0.75 "
                 "linewidth 1 dashlength 1.6",
                 ext + 1, w, h, fs);
    else if (!strcmp(ext, ".tex"))
        snprintf(buf, size,
                 "set terminal cairolatex pdf color size %gin,%gin font ',%g' fontscale 0.75 "
                 "linewidth 1 dashlength 1.6",
                 w, h, fs);
    else if (!strcmp(ext, ".svg"))
        snprintf(buf, size,
                 "set terminal svg enhanced size %d,%d font 'Sans,%g' linewidth 0.75 dashlength 1.6 "
                 "background '#ffffff'",
                 (int)lround(w * 72), (int)lround(h * 72), fs);
    else {
        double dpi = HDP_PLOT_PNG_DPI;
        snprintf(buf, size,
                 "set terminal pngcairo enhanced color size %d,%d font 'Sans,%g' fontscale %g "
                 "linewidth %g pointscale %g dashlength 1.6",
                 (int)lround(w * dpi), (int)lround(h * dpi), fs, dpi / 96.0, dpi / 96.0 * 0.75,
                 dpi / 96.0);
    }
}

/* The house style (plots/house.gp), before the caller's variables. */
static void write_house_style(FILE *f, double fs)
{
    fprintf(f, "fig_font = %g\n", fs);
    const char *house = hdp_plot_script("house");
    fputs(house ? house : "", f);
    fputs("\n", f);
}

/* Strings of the user's style: the key, log axes and axis labels, re-applied before every plot command of
 * the script (the script sets its own first), and the labels. The key is words of a fixed
 * vocabulary (checked by the command line), the labels single-quoted strings. */
static void write_user_style(FILE *f, const char *caption_path)
{
    const hdp_plot_style *s = &style_now;
    fputs("fig_user = 'fig_noop = 0", f);
    if (s->key) {
        fputs("; set key ", f);
        for (const char *c = s->key; *c; c++) /* the vocabulary: letters and spaces */
            if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == ' ')
                fputc(*c, f);
    }
    if (s->logx)
        fputs("; set logscale x; set mxtics", f);
    if (s->logy)
        fputs("; set logscale y; set mytics", f);
    if (s->ylabel) /* the macro names the variable, never its text */
        fputs("; set ylabel user_ylabel noenhanced", f);
    if (s->xlabel) /* not on a panel whose x axis the panel below shows (fig_shared_x) */
        fputs("; if (!exists(\"fig_shared_x\") || !fig_shared_x) "
              "{ set xlabel user_xlabel noenhanced }", f);
    fputs("'\n", f);
    if (s->xlabel) {
        fputs("user_xlabel = ", f);
        hdp_plot_fquote(f, s->xlabel);
        fputs("\n", f);
    }
    if (s->ylabel) {
        fputs("user_ylabel = ", f);
        hdp_plot_fquote(f, s->ylabel);
        fputs("\n", f);
    }
    fprintf(f, "user_nlabels = %d\n", s->nlabels);
    for (int i = 0; i < s->nlabels; i++) {
        fprintf(f, "user_label_%d = ", i + 1);
        hdp_plot_fquote(f, s->labels[i]);
        fputs("\n", f);
    }
    fputs("ulabel(i, def) = i <= user_nlabels ? value(sprintf('user_label_%d', i)) : def\n", f);
    if (s->no_title) /* caption_path: in the private folder, no quote */
        fprintf(f, "if (!exists('title_text')) { title_text = '' }\nset print '%s'\n"
                   "print title_text\nunset print\ntitle_text = ''\n", caption_path);
}

/* The script, with @fig_user before every plot command. */
static void write_script(FILE *f, const char *script)
{
    const char *p = script;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t')) q++;
        if (!strncmp(q, "plot ", 5) || !strncmp(q, "splot ", 6))
            fputs("@fig_user\n", f);
        fwrite(p, 1, len, f);
        p += len;
    }
}

/* Unicode characters of the scripts' texts, as LaTeX that compiles with plain pdflatex. */
static const struct { const char *utf8, *tex; } tex_chars[] = {
    {"\xce\xb1", "\\ensuremath{\\alpha}"},   {"\xce\xb2", "\\ensuremath{\\beta}"},
    {"\xce\xb3", "\\ensuremath{\\gamma}"},   {"\xce\xb4", "\\ensuremath{\\delta}"},
    {"\xce\xb5", "\\ensuremath{\\varepsilon}"}, {"\xce\xb7", "\\ensuremath{\\eta}"},
    {"\xce\xb8", "\\ensuremath{\\theta}"},   {"\xce\xbb", "\\ensuremath{\\lambda}"},
    {"\xce\xbc", "\\ensuremath{\\mu}"},      {"\xcf\x81", "\\ensuremath{\\rho}"},
    {"\xcf\x83", "\\ensuremath{\\sigma}"},   {"\xcf\x84", "\\ensuremath{\\tau}"},
    {"\xcf\x86", "\\ensuremath{\\phi}"},     {"\xce\xa6", "\\ensuremath{\\Phi}"},
    {"\xce\xa3", "\\ensuremath{\\Sigma}"},   {"\xce\xa0", "\\ensuremath{\\Pi}"},
    {"\xe2\x80\x94", "---"},                 {"\xe2\x80\x93", "--"},
    {"\xe2\x88\x92", "\\ensuremath{-}"},     {"\xc2\xb1", "\\ensuremath{\\pm}"},
    {"\xc2\xb2", "\\textsuperscript{2}"},    {"\xc2\xb3", "\\textsuperscript{3}"},
    {"\xc2\xbd", "\\ensuremath{\\frac{1}{2}}"}, {"\xc2\xb7", "\\ensuremath{\\cdot}"},
    {"\xc3\x97", "\\ensuremath{\\times}"},   {"\xe2\x80\x96", "\\ensuremath{\\|}"},
    {"\xe2\x88\x9a", "\\ensuremath{\\surd}"}, {"\xe2\x88\x9e", "\\ensuremath{\\infty}"},
    {"\xe2\x88\x82", "\\ensuremath{\\partial}"}, {"\xe2\x88\x96", "\\ensuremath{\\setminus}"},
    {"\xe2\x89\xa4", "\\ensuremath{\\le}"},  {"\xe2\x89\xa5", "\\ensuremath{\\ge}"},
    {"\xe2\x89\x88", "\\ensuremath{\\approx}"}, {"\xe2\x86\x92", "\\ensuremath{\\to}"},
    {"\xe2\x9f\xa8", "\\ensuremath{\\langle}"}, {"\xe2\x9f\xa9", "\\ensuremath{\\rangle}"},
    {"\xe2\x80\xb2", "\\ensuremath{'}"},     {"\xe2\x82\x80", "\\textsubscript{0}"},
    {"\xe2\x82\x81", "\\textsubscript{1}"},  {"\xe2\x82\x82", "\\textsubscript{2}"},
    {"\xe2\x81\xba", "\\textsuperscript{+}"}, {"\xe2\x88\x97", "*"},
    {"<", "\\textless{}"},                   {">", "\\textgreater{}"},
    {"|", "\\textbar{}"},                    {"~", "\\textasciitilde{}"},
};

/* One character at c (UTF-8) as LaTeX; a following combining tilde (U+0303) puts \tilde on a
 * mapped letter. Returns the bytes consumed. */
static size_t tex_char(FILE *out, const char *c, const char *end)
{
    for (size_t i = 0; i < sizeof tex_chars / sizeof tex_chars[0]; i++) {
        size_t len = strlen(tex_chars[i].utf8);
        if ((size_t)(end - c) >= len && !strncmp(c, tex_chars[i].utf8, len)) {
            const char *t = tex_chars[i].tex;
            if (end - (c + len) >= 2 && (unsigned char)c[len] == 0xCC &&
                (unsigned char)c[len + 1] == 0x83 && !strncmp(t, "\\ensuremath{", 12)) {
                fprintf(out, "\\ensuremath{\\tilde{%.*s}}", (int)(strlen(t) - 13), t + 12);
                return len + 2;
            }
            fputs(t, out);
            return len;
        }
    }
    if ((unsigned char)c[0] == 0xCC && end - c >= 2 && (unsigned char)c[1] == 0x83) {
        fputs("\\~{}", out); /* a combining tilde on an unmapped character */
        return 2;
    }
    fputc(*c, out);
    return 1;
}

/* A LaTeX text of a cairolatex figure from gnuplot's enhanced-text markup: _{x} and ^{x} as
 * \textsubscript{x}, \textsuperscript{x}; %, &, # escaped; Greek letters and symbols as
 * math (tex_chars), so that the figure compiles with plain pdflatex; $...$ left alone. */
static void tex_text(FILE *out, const char *s, const char *end)
{
    int math = 0;
    for (const char *c = s; c < end;) {
        if (*c == '$') {
            math = !math;
            fputc(*c++, out);
            continue;
        }
        if (math) {
            fputc(*c++, out);
            continue;
        }
        if ((*c == '_' || *c == '^') && c + 1 < end) {
            fputs(*c == '_' ? "\\textsubscript{" : "\\textsuperscript{", out);
            c++;
            if (*c == '{') {
                int depth = 1;
                for (c++; c < end;) {
                    if (*c == '{') depth++;
                    if (*c == '}' && --depth == 0) {
                        c++;
                        break;
                    }
                    c += tex_char(out, c, end);
                }
            } else {
                c += tex_char(out, c, end);
            }
            fputc('}', out);
            continue;
        }
        if (*c == '%' || *c == '&' || *c == '#') {
            fputc('\\', out);
            fputc(*c++, out);
            continue;
        }
        if (*c == '-' && c + 1 < end && c[1] == '-') { /* "--option", not an en dash */
            fputs("-{}", out);
            c++;
            continue;
        }
        if (*c == '{' || *c == '}') { /* enhanced-text grouping */
            c++;
            continue;
        }
        c += tex_char(out, c, end);
    }
}

/* Copy the .tex of cairolatex to out: texts converted, the graphics file named by its
 * final name, FIG-graphic (gnuplot wrote the temporary folder's path). */
static int copy_tex(const char *from, FILE *out, const char *tmpdir, const char *final_stem)
{
    FILE *in = fopen(from, "r");
    if (!in)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    char gfx[4200];
    snprintf(gfx, sizeof gfx, "%s/figure}", tmpdir);
    const char *base = strrchr(final_stem, '/');
    base = base ? base + 1 : final_stem;
    while (getline(&line, &cap, in) > 0) {
        char *strut = strstr(line, "\\strut{}");
        char *g = strstr(line, gfx);
        if (g) {
            fwrite(line, 1, (size_t)(g - line), out);
            fprintf(out, "%s-graphic}%s", base, g + strlen(gfx));
        } else if (strut) {
            char *text = strut + 8;
            char *close = text; /* the text ends at the brace that closes its box */
            for (int depth = 0; *close && !(*close == '}' && depth == 0); close++)
                depth += (*close == '{') - (*close == '}');
            fwrite(line, 1, (size_t)(text - line), out);
            tex_text(out, text, close);
            fputs(close, out);
        } else {
            fputs(line, out);
        }
    }
    int bad = ferror(in);
    free(line);
    fclose(in);
    return bad ? -1 : 0;
}

static int copy_file(const char *from, FILE *out)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return -1;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, got, out);
    int bad = ferror(in);
    fclose(in);
    return bad ? -1 : 0;
}

/* the files of the private folder, besides data1.csv ... (hdp_out_tmpdir_track) */
static const char *const tmp_names[] = {"script.gp",  "err.txt",    "figure.png",  "figure.pdf",
                                        "figure.svg", "figure.eps", "figure.tex", "caption.txt",
                                        NULL};

/* The private folder's template: $TMPDIR/hdpsgd-plot-XXXXXX when TMPDIR is an absolute path
 * of at most 150 bytes of letters, digits and / . _ - (the folder's name is written into the
 * script between single quotes), else /tmp/hdpsgd-plot-XXXXXX. */
static void private_folder_template(char *dir, size_t size)
{
    const char *t = getenv("TMPDIR");
    int ok = t && t[0] == '/' && strlen(t) <= 150;
    for (const char *c = t; ok && *c; c++)
        ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
             strchr("/._-", *c);
    snprintf(dir, size, "%s/hdpsgd-plot-XXXXXX", ok ? t : "/tmp");
}

static void remove_tree(const char *dir, int ndata)
{
    char path[256];
    for (int i = 0; tmp_names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, tmp_names[i]);
        unlink(path);
    }
    for (int i = 1; i <= ndata; i++) {
        snprintf(path, sizeof path, "%s/data%d.csv", dir, i);
        unlink(path);
    }
    rmdir(dir);
}

/* The data files into the private folder, as data1.csv, ...: the script never sees a name
 * that came from outside. */
static hdp_status private_data(const hdp_plot_vars *v, const char *dir, hdp_error *err)
{
    for (int i = 0; i < v->nfiles; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/data%d.csv", dir, i + 1);
        FILE *out = fopen(path, "wb");
        if (!out)
            return hdp_fail(err, HDP_EIO, "cannot create a temporary file for gnuplot: %s",
                            strerror(errno));
        int bad_in = 0;
        if (v->data[i])
            fwrite(v->data[i], 1, v->data_len[i], out);
        else
            bad_in = copy_file(v->files[i], out) != 0;
        int saved = errno;
        int bad_out = ferror(out) != 0;
        bad_out |= fclose(out) != 0;
        if (bad_in)
            return hdp_fail(err, HDP_EIO, "%s: cannot read the figure's data: %s", v->files[i],
                            strerror(saved));
        if (bad_out)
            return hdp_fail(err, HDP_EIO, "cannot write a temporary file for gnuplot: %s",
                            strerror(errno ? errno : EIO));
    }
    return HDP_OK;
}

/* Whether a file gnuplot wrote is whole: a PNG ends with its IEND chunk, a PDF or EPS with
 * %%EOF, an SVG with </svg>, a cairolatex .tex with \endgroup (trailing white space
 * allowed). gnuplot can exit 0 after its terminal failed to write. */
static int whole(const char *path, const char *ext)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char tail[64];
    size_t n = 0;
    if (fseek(f, -(long)sizeof tail, SEEK_END) != 0)
        rewind(f);
    n = fread(tail, 1, sizeof tail, f);
    fclose(f);
    if (!strcmp(ext, ".png")) {
        static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
                                               0xae, 0x42, 0x60, 0x82};
        return n >= 12 && !memcmp(tail + n - 12, iend, 12);
    }
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r' || tail[n - 1] == ' '))
        n--;
    const char *end = !strcmp(ext, ".svg") ? "</svg>" : !strcmp(ext, ".tex") ? "\\endgroup" : "%%EOF";
    size_t m = strlen(end);
    return n >= m && !memcmp(tail + n - m, end, m);
}

/* The script gnuplot runs: the terminal, the house style, the private folder, the figure's
 * variables and title, the user's style, the figure's script (plots/NAME.gp); a script
 * without multiplot runs twice, a dry run on the terminal unknown first to learn its axes'
 * ranges. Every name in it is the private folder's. */
static void write_gnuplot_script(FILE *f, const char *name, const char *script,
                                 const char *out_path, const hdp_plot_vars *vars,
                                 const char *dir, const char *fig_tmp, const char *cap_tmp)
{
    char term[512];
    terminal_for(out_path, name, term, sizeof term);
    int dry = !strstr(script, "multiplot");
    if (dry) /* the real terminal after the dry run (below) */
        fputs("set terminal unknown\n", f);
    else
        fprintf(f, "%s\nset output '%s'\n", term, fig_tmp);
    double fs = style_now.font_size > 0 ? style_now.font_size : HDP_PLOT_FONT_SIZE;
    write_house_style(f, fs);
    fprintf(f, "fig_dir = '%s'\n", dir);
    if (vars->text)
        fputs(vars->text, f);
    if (vars->has_title) {
        double w, h;
        figure_size(name, &w, &h);
        hdp_plot_write_title(f, vars->title, w, fs);
    }
    fputs("\n", f);
    write_user_style(f, cap_tmp);
    if (dry) {
        /* a dry run to learn the axes' ranges: a logarithmic axis over less than three
         * decades gets labels at 1, 2 and 5 times the powers of ten, not only at the decades */
        fprintf(f, "fig_islogx = %d\nfig_islogy = %d\n",
                style_now.logx || strstr(script, "set logscale x") || strstr(script, "logscale xy"),
                style_now.logy || strstr(script, "set logscale y") || strstr(script, "logscale xy"));
        write_script(f, script);
        fputs("\nfig_logtics_x = (fig_islogx && GPVAL_X_MIN > 0 && GPVAL_X_MAX / GPVAL_X_MIN < 1000) ? "
              "fig_logtics(GPVAL_X_MIN, GPVAL_X_MAX) : ''\n"
              "fig_logtics_y = (fig_islogy && GPVAL_Y_MIN > 0 && GPVAL_Y_MAX / GPVAL_Y_MIN < 1000) ? "
              "fig_logtics(GPVAL_Y_MIN, GPVAL_Y_MAX) : ''\n"
              "if (strlen(fig_logtics_x) > 0) { fig_user = fig_user.\"; set format x '%g'; set xtics add (\".fig_logtics_x.\")\" }\n"
              "if (strlen(fig_logtics_y) > 0) { fig_user = fig_user.\"; set format y '%g'; set ytics add (\".fig_logtics_y.\")\" }\n"
              , f);
        /* the terminal again (push and pop would round its fontscale to one decimal) */
        fprintf(f, "%s\nset output '%s'\n", term, fig_tmp);
    }
    write_script(f, script);
    fputs("\nset output\n", f);
}

/* gnuplot's figure, and its companions (the .tex's graphics, the caption), added to the
 * command's output set (or to a set of their own, committed here) */
static hdp_status publish(hdp_outset *set, const char *out_path, const char *dir,
                          const char *fig_tmp, const char *gfx_tmp, const char *cap_tmp,
                          int is_tex, hdp_error *err)
{
    char companions[2][4200], stem[4200];
    int nc = hdp_plot_companions(out_path, companions, 2);
    hdp_plot_stem(out_path, "", stem, sizeof stem);
    hdp_outset own;
    if (!set) {
        hdp_outset_init(&own, err);
        set = &own;
    }
    FILE *o = hdp_outset_add(set, out_path);
    if (o && (is_tex ? copy_tex(fig_tmp, o, dir, stem) : copy_file(fig_tmp, o)) != 0)
        set->status = hdp_fail(err, HDP_EIO, "cannot read gnuplot's output: %s", strerror(errno));
    for (int i = 0; i < nc; i++) {
        o = hdp_outset_add(set, companions[i]);
        const char *from = (is_tex && i == 0) ? gfx_tmp : cap_tmp;
        if (o && copy_file(from, o) != 0)
            set->status = hdp_fail(err, HDP_EIO, "cannot read gnuplot's output: %s",
                                   strerror(errno));
    }
    return set == &own ? hdp_outset_commit(&own) : set->status;
}

/* gnuplot on the script, without a shell: standard input and output /dev/null, errors to
 * efd; the termination signals and SIGXFSZ at their default in gnuplot (a file-size limit
 * kills it rather than leaving a cut file), its process known to the signal handler. */
static int run_gnuplot(const char *gp, const char *script_path, int efd, int *status)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, efd, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t def, none;
    sigemptyset(&def);
    sigemptyset(&none);
    int sigs[] = {SIGXFSZ, SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&def, sigs[i]);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    char *argv[] = {(char *)"gnuplot", (char *)script_path, NULL};
    pid_t pid;
    hdp_out_block_signals(1);
    int rc = posix_spawn(&pid, gp, &fa, &at, argv, environ);
    if (rc == 0)
        hdp_out_tmpdir_child(pid);
    hdp_out_block_signals(0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    *status = 0;
    if (rc == 0) {
        while (waitpid(pid, status, 0) < 0 && errno == EINTR)
            ;
        hdp_out_tmpdir_child(0);
    }
    return rc;
}

/* why gnuplot failed: its status and the end of its messages */
static hdp_status gnuplot_failed(int rc, int status, int efd, const char *out_path,
                                 hdp_error *err)
{
    char msg[1200] = "";
    off_t size = lseek(efd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof msg - 1 ? size - (off_t)(sizeof msg - 1) : 0;
    lseek(efd, from, SEEK_SET);
    ssize_t got = read(efd, msg, sizeof msg - 1);
    msg[got > 0 ? got : 0] = '\0';
    for (char *c = msg; *c; c++) /* gnuplot echoes the script's line: keep it one line */
        if (*c == '\n' || *c == '\r' || *c == '\t' || (unsigned char)*c < 0x20) *c = ' ';
    const char *more = from > 0 ? "..." : "";
    if (rc != 0)
        return hdp_fail(err, HDP_EIO, "gnuplot failed drawing %s: %s", out_path, strerror(rc));
    if (WIFSIGNALED(status))
        return hdp_fail(err, HDP_EIO, "gnuplot failed drawing %s: killed by signal %d%s %s%s",
                        out_path, WTERMSIG(status),
                        WTERMSIG(status) == SIGXFSZ ? " (a file-size limit)" : "", more, msg);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return hdp_fail(err, HDP_EIO, "gnuplot failed drawing %s (exit %d): %s%s", out_path,
                        WEXITSTATUS(status), more, msg[0] ? msg : "no message");
    return hdp_fail(err, HDP_EIO, "gnuplot failed drawing %s: its output is missing or cut "
                    "short (a full disk or a file-size limit?)%s%s%s", out_path,
                    msg[0] ? ": " : "", more, msg);
}

static hdp_status hdp_plot_draw_inner(const char *name, const char *out_path,
                                      const hdp_plot_vars *vars, hdp_outset *set,
                                      hdp_error *err)
{
    const char *script = hdp_plot_script(name);
    if (!script || !hdp_plot_script("house"))
        return hdp_fail(err, HDP_EINPUT, "no plot script named '%s'", script ? "house" : name);
    if (vars->failed)
        return hdp_fail(err, vars->failed == 1 ? HDP_ENOMEM : HDP_EINPUT,
                        vars->failed == 1 ? "out of memory for the figure's variables"
                                          : "a figure variable's name is not an identifier");
    const char *ext = extension_of(out_path);
    if (!ext)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: a figure is drawn by its extension: .png, .pdf, .svg, .eps or .tex",
                        out_path);
    const char *gp = hdp_plot_gnuplot();
    if (!gp)
        return hdp_fail(err, HDP_EIO,
                        "gnuplot not found (install it: apt-get install gnuplot-nox, or set "
                        "HDPSGD_GNUPLOT); the figure %s was not drawn",
                        out_path);
    /* gnuplot reads and writes only in a private temporary folder, under fixed names; the
     * files are then published where the output layer puts files (symbolic links written
     * through, the replaced file's mode kept, with the command's other outputs or none) */
    char dir[200];
    private_folder_template(dir, sizeof dir);
    hdp_out_block_signals(1);
    int made = mkdtemp(dir) != NULL;
    int saved = errno;
    if (made)
        hdp_out_tmpdir_track(dir, tmp_names, vars->nfiles);
    hdp_out_block_signals(0);
    if (!made)
        return hdp_fail(err, HDP_EIO, "cannot create a temporary folder for gnuplot: %s",
                        strerror(saved));
    char script_path[256], err_path[256], fig_tmp[256], gfx_tmp[256], cap_tmp[256];
    snprintf(script_path, sizeof script_path, "%s/script.gp", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    snprintf(fig_tmp, sizeof fig_tmp, "%s/figure%s", dir, ext);
    snprintf(gfx_tmp, sizeof gfx_tmp, "%s/figure.pdf", dir);
    snprintf(cap_tmp, sizeof cap_tmp, "%s/caption.txt", dir);
    int is_tex = !strcmp(ext, ".tex");
    int efd = -1;
    hdp_status st = private_data(vars, dir, err);
    if (st != HDP_OK)
        goto done;
    FILE *f = fopen(script_path, "w");
    efd = open(err_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (!f || efd < 0) {
        st = hdp_fail(err, HDP_EIO, "cannot create a temporary file for gnuplot: %s",
                      strerror(errno));
        if (f) fclose(f);
        goto done;
    }
    write_gnuplot_script(f, name, script, out_path, vars, dir, fig_tmp, cap_tmp);
    int bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        st = hdp_fail(err, HDP_EIO, "cannot write the gnuplot script: %s", strerror(errno));
        goto done;
    }
    int status = 0;
    int rc = run_gnuplot(gp, script_path, efd, &status);
    struct stat sb;
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !whole(fig_tmp, ext) ||
        (is_tex && !whole(gfx_tmp, ".pdf")) || (style_now.no_title && stat(cap_tmp, &sb) != 0)) {
        st = gnuplot_failed(rc, status, efd, out_path, err);
        goto done;
    }
    st = publish(set, out_path, dir, fig_tmp, gfx_tmp, cap_tmp, is_tex, err);
done:
    if (efd >= 0) close(efd);
    remove_tree(dir, vars->nfiles);
    hdp_out_tmpdir_track(NULL, NULL, 0);
    return st;
}

hdp_status hdp_plot_draw(hdp_outset *set, const char *name, const char *out_path,
                         const hdp_plot_vars *vars, hdp_error *err)
{
    hdp_status st = hdp_plot_draw_inner(name, out_path, vars, set, err);
    if (st != HDP_OK && set && set->status == HDP_OK)
        set->status = st; /* the command's outputs are one set: none is published */
    return st;
}
