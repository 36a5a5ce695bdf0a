/*
 * cli.h — shared pieces of the command-line front end: option tables, model
 * loading from MODEL and --set, exit statuses, warnings.
 *
 * Exit statuses: 0 success, 1 validation failed, 2 bad input or usage,
 * 3 output could not be written, 4 numerical failure.
 */
#ifndef HDPSGD_CLI_H
#define HDPSGD_CLI_H

#include "hdpsgd/model.h"

enum { EXIT_FAIL_VALIDATION = 1, EXIT_BAD_INPUT = 2, EXIT_IO = 3, EXIT_NUMERIC = 4 };

typedef enum { OPT_FLAG, OPT_STRING, OPT_LONG, OPT_DOUBLE } cli_opt_kind;

typedef struct {
    const char *name;  /* long name without dashes */
    char short_name;   /* 0 if none */
    cli_opt_kind kind;
    void *dst;         /* int* (flag), const char** (string), long*, double* */
    const char *metavar;
    const char *help;
} cli_opt;

#define MAX_SETS 256

/* What every command takes: [MODEL.ini] [--set section.key=value]... */
#define MAX_POSITIONAL 64

typedef struct {
    const char *model_path; /* the first positional argument */
    const char *pos[MAX_POSITIONAL];
    int npos;
    const char *sets[MAX_SETS];
    int nsets;
    int help;
} cli_common;

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage;       /* one line after "hdpsgd " */
    const char *description; /* paragraphs */
    const cli_opt *opts;     /* NULL-terminated table */
    int many_files;          /* 1: any number of positional arguments (else at most one model) */
} cli_command;

/* The command table (main.c). */
extern const cli_command hdp_commands[];
const cli_command *cli_find_command(const char *name);

/* Parse argv (argv[0] is the command name) against the command's table.
 * Returns 0, or EXIT_BAD_INPUT after printing a message. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_common *common);

/* Print the help of one command to f. */
void cli_print_help(const cli_command *cmd, FILE *f);

/* Build and finalize the model from MODEL and the --set overrides. Prints the
 * error and returns the exit status on failure, 0 on success. */
int cli_load_model(const cli_common *common, hdp_model *m);

/* Print "hdpsgd CMD: error: ..." and map a status to an exit status. */
int cli_fail(const char *cmd, const hdp_error *err);

/* Warn on stderr when sup eta~ >= 2/gamma (THEORY 3). Returns 1 if it warned. */
int cli_warn_stability(const char *cmd, const hdp_model *m);

/* The version string, with the git revision when built from a checkout. */
const char *hdp_version_string(void);

#endif
