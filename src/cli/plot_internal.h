/* plot_internal.h — shared between plot.c and plot_vars.c (internal to the program). */
#ifndef HDPSGD_PLOT_INTERNAL_H
#define HDPSGD_PLOT_INTERNAL_H

#include <stdio.h>

/* value as a gnuplot single-quoted string (hdp_plot_quote) to f; -1 when out of memory */
int hdp_plot_fquote(FILE *f, const char *value);
/* title_text = '...', broken into lines that fit width_in inches at font size fs */
int hdp_plot_write_title(FILE *f, const char *title, double width_in, double fs);

#endif
