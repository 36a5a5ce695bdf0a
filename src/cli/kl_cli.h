/*
 * kl_cli.h — pieces shared by the two files of `hdpsgd kl` (internal to the command line):
 * cmd_kl.c (options, kl bound, kl init, the command) and cmd_kl_run.c (kl run).
 */
#ifndef HDPSGD_KL_CLI_H
#define HDPSGD_KL_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "io/output.h"
#include "cli.h"
#include "hdpsgd/klsweep.h"

#define KL_MAX_LIST 64

/* the options of kl run, and the files every subcommand writes */
typedef struct {
    const char *out, *json, *figure;
    const char *vs, *schemes, *depths, *widths;
    int full; /* --full: the long lists of run --vs depth|width with kl.network = relu */
} kl_args;

/* "hdpsgd kl: error: " fmt (with arg), exit status 2 */
int kl_bad(const char *fmt, const char *arg);
/* "a,b,c" or "lo:hi" or "lo:hi:step" of integers in [lo_ok, hi_ok] (--opt): 0 or exit 2 */
int kl_parse_int_list(const char *opt, const char *text, long lo_ok, long hi_ok, long *out,
                      int *count);
/* a list of schemes or "all" (--schemes): 0 or exit 2 */
int kl_parse_schemes(const char *text, int *want, int *count);
/* the '#' lines at the top of a CSV */
void kl_meta(FILE *f, const char *what, const hdp_model *m);
/* "he ntk ...": the wanted schemes for a figure */
void kl_schemes_text(const int *want, char *buf, size_t size);

/* The item of a part under <scheme>_ (cli_json_each): e->obj is a const void *[4], element k
 * the object of scheme k (NULL: not written), its name hdp_kl_init_name(k). */
int kl_json_scheme(const cli_json_each *e, int k, cli_json_item *it);

/* The table to -o and, with --figure, to its data file FIG-without-extension.csv (once when
 * both are the same file), then the JSON (json may be NULL: none), and the figure drawn from
 * the data file with plots/SCRIPT.gp and the variables fig_vars sets (besides data_file;
 * script NULL: no figure), all or nothing. table writes the whole table, json the keys between
 * { and }. Returns 0 or the exit status after a message. */
int kl_write(const kl_args *a, void (*table)(FILE *, const void *),
             void (*json)(hdp_json *, const void *), const void *ctx, const char *script,
             void (*fig_vars)(hdp_plot_vars *, const void *ctx));

/* kl run (cmd_kl_run.c) */
int kl_run(const hdp_model *m, int threads, const kl_args *a);

#endif
