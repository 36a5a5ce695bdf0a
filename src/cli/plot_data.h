/*
 * plot_data.h — what `hdpsgd plot` hands a figure's script besides the CSV (internal to the
 * command line): the gnuplot variables a kind of CSV needs (the same its own command's
 * --figure gives), and the temporary data files that rates -o and a sweep's results.csv are
 * turned into. Errors are printed ("hdpsgd plot: error: ...") and returned as EXIT_BAD_INPUT.
 */
#ifndef HDPSGD_PLOT_DATA_H
#define HDPSGD_PLOT_DATA_H

#include <stddef.h>
#include <stdio.h>

#include "plot.h"
#include "plot_csv.h"

/* fmt with two %s: prints the error and returns EXIT_BAD_INPUT */
int plot_bad_input(const char *fmt, const char *a, const char *b);
/* figure data made here: text written to f (open_memstream) becomes the variable var, a
 * file in the figure's private folder; plot_data_end closes f and hands the text over.
 * Returns 0 or EXIT_BAD_INPUT (out of memory: a message) */
typedef struct {
    FILE *f;
    char *text;
    size_t len;
} plot_data_buf;
int plot_data_begin(plot_data_buf *b);
int plot_data_end(plot_data_buf *b, hdp_plot_vars *v, const char *var);
/* whether the column exists and holds a number */
int plot_column_has_numbers(const plot_csv *t, const char *name);

/* rates -o (a row per gamma and family) pivoted into the figure data of rates --figure, as
 * data_file; families: the families it holds, space-separated */
int plot_rates_data(const plot_csv *t, hdp_plot_vars *v, char *families, size_t fsize);

/* a sweep's results.csv: --x, --y (one or more columns), --by, --heat */
#define PLOT_SWEEP_MAX_Y 16
typedef struct {
    const char *x, *by;
    const char *ys[PLOT_SWEEP_MAX_Y];
    int ny, heat;
} plot_sweep_opts;
/* the data of the curves (or of the map) as data_file, their variables, the script's name */
int plot_sweep_data(const plot_csv *t, const plot_sweep_opts *o, hdp_plot_vars *v,
                    const char **script);

/* The words of a sweep figure (plot_labels.c): what column col measures (a model key
 * section.key: the leading phrase of its help and the key; a result column: a short
 * description, "final excess risk R(1)") and where it comes from ("ODE", "Monte Carlo");
 * an unknown column is its own name in both. */
void plot_column_words(const char *col, char *what, size_t wsize, char *source, size_t ssize);
void plot_axis_label(const char *col, char *out, size_t size);

/* any other kind drawn from the CSV itself: its variables and the script's name */
int plot_family_vars(const plot_csv *t, hdp_plot_vars *v, const char **script);

#endif
