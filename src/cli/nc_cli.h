/*
 * nc_cli.h — pieces shared by the two files of `hdpsgd nc` (internal to the command line):
 * cmd_nc.c (options, the single run, the command) and cmd_nc_sweep.c (--sweep).
 */
#ifndef HDPSGD_NC_CLI_H
#define HDPSGD_NC_CLI_H

#include <stdio.h>

#include "io/output.h"
#include "cli.h"
#include "hdpsgd/ncsweep.h"

/* the options that name files and the sweep */
typedef struct {
    const char *json, *csv, *figure, *sweep, *ps;
} nc_args;

/* the CSV: '#' lines, header, one row per point (the columns of `hdpsgd help nc`) */
void nc_meta(FILE *f, const char *what, const hdp_model *m);
void nc_csv_header(FILE *f);
void nc_csv_row(FILE *f, const char *name, const hdp_nc_point *pt);

/* --sweep (cmd_nc_sweep.c): the CSV and figure default to nc-NAME.csv and nc-NAME.png
 * (set in a). Returns the exit status. */
int nc_sweep(hdp_model *m, const hdp_nc_spec *base, nc_args *a, int threads);

#endif
