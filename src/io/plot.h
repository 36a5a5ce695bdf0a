/*
 * plot.h — figures through gnuplot (a run-time dependency; internal).
 *
 * The scripts plots/NAME.gp are embedded in the library at build time. A
 * figure is drawn by writing the terminal (chosen from the output's
 * extension: .png -> pngcairo, .pdf -> pdfcairo, .svg -> svg), the caller's
 * variable assignments and the script to a temporary file, running gnuplot
 * on it without a shell, and renaming the result into place. When gnuplot is
 * missing, HDP_EIO with a message that says how to install it.
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

/* Append  var="value"  (a gnuplot double-quoted string; newlines allowed) to buf. */
void hdp_plot_assign(char *buf, size_t size, const char *var, const char *value);

#endif
