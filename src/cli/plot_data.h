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

#include "plot_csv.h"

/* the size of the buffer of assignments (hdp_plot_assign) */
#define PLOT_ASSIGN_MAX 65536

/* fmt with two %s: prints the error and returns EXIT_BAD_INPUT */
int plot_bad_input(const char *fmt, const char *a, const char *b);
/* appends var=v (all digits) to the assignments */
void plot_assign_num(char *assign, const char *var, double v);
/* a temporary data file /tmp/hdpsgd-plotdata-XXXXXX opened for writing (the caller removes
 * it after drawing), or NULL */
FILE *plot_tmp_data(char *path, size_t size);
/* whether the column exists and holds a number */
int plot_column_has_numbers(const plot_csv *t, const char *name);

/* rates -o (a row per gamma and family) pivoted into the figure data of rates --figure, at
 * path; families: the families it holds, space-separated */
int plot_rates_data(const plot_csv *t, char *path, size_t size, char *families, size_t fsize);

/* a sweep's results.csv: --x, --y, --by, --heat */
typedef struct {
    const char *x, *y, *by;
    int heat;
} plot_sweep_opts;
/* the data of the curves (or of the map) at path, their variables, the script's name */
int plot_sweep_data(const plot_csv *t, const plot_sweep_opts *o, char *assign, char *path,
                    size_t size, const char **script);

/* any other kind drawn from the CSV itself: its variables and the script's name */
int plot_family_vars(const plot_csv *t, char *assign, const char **script);

#endif
