/*
 * plot.h — figures through gnuplot (a run-time dependency; internal).
 *
 * The scripts plots/NAME.gp are embedded in the library at build time. A
 * figure is drawn by writing the terminal (chosen from the output's
 * extension: .png -> pngcairo, .pdf -> pdfcairo, .svg -> svg, .eps -> epscairo,
 * .tex -> cairolatex with its graphics file NAME.pdf), the house style
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

/* The embedded text of plots/NAME.gp, or NULL. */
const char *hdp_plot_script(const char *name);

/* Path of the gnuplot executable ($HDPSGD_GNUPLOT or gnuplot on PATH), or NULL. */
const char *hdp_plot_gnuplot(void);

/* Draw script NAME into out_path. assignments: gnuplot statements setting the
 * script's variables (for example "ode_file='a.csv'; title_text='x'"). */
hdp_status hdp_plot_draw(const char *name, const char *out_path, const char *assignments,
                         hdp_error *err);

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

/* The files a figure brings besides itself, under the current style: the graphics file of a
 * .tex figure (FIG-without-extension.pdf) and, with no_title, the caption file
 * (FIG-without-extension.caption.txt). Fills up to 2 names of size bytes; returns the count. */
int hdp_plot_companions(const char *fig, char names[][4200], int max);

/* Append  var="value"  (a gnuplot double-quoted string; newlines allowed) to buf. */
void hdp_plot_assign(char *buf, size_t size, const char *var, const char *value);

#endif
