/*
 * plot.h — figures through gnuplot (a run-time dependency; the program's, not the library's).
 *
 * The scripts plots/NAME.gp are embedded in the program at build time. A
 * figure is drawn by writing the terminal (chosen from the output's
 * extension: .png -> pngcairo, .pdf -> pdfcairo, .svg -> svg, .eps -> epscairo,
 * .tex -> cairolatex with its graphics file NAME-graphic.pdf, never NAME.pdf, which may be
 * another figure), the house style
 * (plots/house.gp: an Okabe-Ito palette with distinct dash types, minor tics), the caller's
 * variable assignments, the user's style (hdp_plot_style: size, font size,
 * title, key, log axes, labels) and the script to a temporary folder, running
 * gnuplot on it without a shell, and publishing the files through the output
 * layer (all or nothing). Sizes are in inches and fonts in points of the
 * final document: a 8 pt font is 8 pt in the PDF. When gnuplot is missing,
 * HDP_EIO with a message that says how to install it.
 */
#ifndef HDPSGD_PLOT_H
#define HDPSGD_PLOT_H

#include <stddef.h>

#include "hdpsgd/error.h"
#include "io/output.h"

/* The embedded text of plots/NAME.gp, or NULL. */
const char *hdp_plot_script(const char *name);

/* Path of the gnuplot executable ($HDPSGD_GNUPLOT or gnuplot on PATH), or NULL. */
const char *hdp_plot_gnuplot(void);

/* The variables a figure's script is given. No text reaches gnuplot's parser as code: a
 * string becomes a gnuplot single-quoted string (no backquote substitution, no macro
 * expansion, no escapes but '' for a quote), a newline or tab a "\n" or "\t" joined to it,
 * any other control character or byte that is not UTF-8 the replacement character U+FFFD; a
 * data file is copied into the figure's private folder and named there (data1.csv, ...), so
 * that its name never reaches the script; numbers are written by printf. The text grows as
 * needed (nothing is cut); an allocation failure or a variable name that is not an
 * identifier is reported by hdp_plot_draw. */
typedef struct {
    char *text;          /* the assignments, one per line */
    size_t len, cap;
    char *title;         /* title_text: broken into lines at drawing time */
    int has_title;
    char **files;        /* a data file to copy: a path, or (data != NULL) generated text */
    char **data;
    size_t *data_len;
    int nfiles, files_cap;
    int failed;          /* 1: out of memory, 2: a bad variable name */
} hdp_plot_vars;

void hdp_plot_vars_init(hdp_plot_vars *v);
void hdp_plot_vars_free(hdp_plot_vars *v);
/* var = 'value' (title_text: kept apart, broken into lines to fit the figure) */
void hdp_plot_var_str(hdp_plot_vars *v, const char *var, const char *value);
/* var = value (%.17g; NaN when not finite) */
void hdp_plot_var_num(hdp_plot_vars *v, const char *var, double value);
/* var = the private copy of the file at path */
void hdp_plot_var_file(hdp_plot_vars *v, const char *var, const char *path);
/* var = the private copies of n files, space-separated (for the scripts' word(var, i)) */
void hdp_plot_var_files(hdp_plot_vars *v, const char *var, const char *const *paths, int n);
/* var = a private file holding len bytes of text (data the caller made) */
void hdp_plot_var_data(hdp_plot_vars *v, const char *var, const char *text, size_t len);
/* gnuplot's text of a string: 'value' as above, appended to the variables' text (tests) */
void hdp_plot_quote(hdp_plot_vars *v, const char *value);

/* Draw script NAME into out_path with the variables vars. set: the command's output set, to
 * which the figure and its companions are added (committed by the caller with the other
 * outputs, all or none); NULL: the figure is published on its own. gnuplot must exit 0 and
 * every file it writes must be whole (a PNG's IEND chunk, a PDF's or EPS's %%EOF, an SVG's
 * </svg>, a .tex's \endgroup), else HDP_EIO with gnuplot's message. */
hdp_status hdp_plot_draw(hdp_outset *set, const char *name, const char *out_path,
                         const hdp_plot_vars *vars, hdp_error *err);

/* The user's style of every figure drawn afterwards (the command line's figure options). */
#define HDP_PLOT_MAX_LABELS 64
typedef struct {
    double width, height; /* inches; 0: the script's default size */
    double font_size;     /* points; 0: HDP_PLOT_FONT_SIZE */
    int no_title;         /* no title: it goes to FIG-without-extension.caption.txt */
    const char *key;      /* gnuplot's key position ("top left", "outside below"...), NULL: the script's */
    int logx, logy;       /* 1: logarithmic axis */
    const char *labels[HDP_PLOT_MAX_LABELS]; /* legend texts, in the order of the inputs */
    int nlabels;
    const char *xlabel, *ylabel; /* the axes' labels, NULL: the script's */
} hdp_plot_style;

#define HDP_PLOT_FONT_SIZE 8.0
#define HDP_PLOT_COLUMN_W 3.4 /* one column of a two-column paper, inches */
#define HDP_PLOT_COLUMN_H 2.6
#define HDP_PLOT_WIDE_W 7.0   /* both columns */
#define HDP_PLOT_WIDE_H 3.0
#define HDP_PLOT_PNG_DPI 200

void hdp_plot_set_style(const hdp_plot_style *s);
const hdp_plot_style *hdp_plot_get_style(void);

/* The extensions a figure may have (".png", ... NULL-terminated) and whether path has one. */
extern const char *const hdp_plot_extensions[];
int hdp_plot_extension_ok(const char *path);

/* path without its extension (a dot after the last slash), then suffix, into out */
void hdp_plot_stem(const char *path, const char *suffix, char *out, size_t size);

/* The files a figure brings besides itself, under the current style: the graphics file of a
 * .tex figure (FIG-without-extension-graphic.pdf) and, with no_title, the caption file
 * (FIG-without-extension.caption.txt). Fills up to 2 names of size bytes; returns the count. */
int hdp_plot_companions(const char *fig, char names[][4200], int max);

#endif
