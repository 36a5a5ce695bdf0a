/*
 * cli.h — shared pieces of the command-line front end: option tables, model
 * loading from MODEL and --set, exit statuses, warnings.
 *
 * Exit statuses: 0 success, 1 validation failed, 2 bad input or usage,
 * 3 output could not be written, 4 numerical failure.
 */
#ifndef HDPSGD_CLI_H
#define HDPSGD_CLI_H

#include "io/output.h"
#include "plot.h"
#include "progress.h"
#include "hdpsgd/design.h"
#include "hdpsgd/model.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/sweep.h"

enum { EXIT_FAIL_VALIDATION = 1, EXIT_BAD_INPUT = 2, EXIT_IO = 3, EXIT_NUMERIC = 4 };

/* OPT_OUTPUT is a string naming a file the command will write, OPT_OUTPUT_PREFIX the start
 * of such names (PREFIX.ode.csv, ...): cli_parse checks them before the command runs (the
 * folder exists and is writable, the file is not a folder), so that a typo in a path is
 * exit status 2 at once, not status 3 after the computation. "-" is standard output. */
typedef enum {
    OPT_FLAG, OPT_STRING, OPT_LONG, OPT_DOUBLE, OPT_OUTPUT, OPT_OUTPUT_PREFIX,
    OPT_FIGURE, /* an OPT_OUTPUT that is a figure: .png, .pdf, .svg, .eps or .tex, not stdout */
    OPT_STRINGS /* repeatable: every value appended to a cli_strings */
} cli_opt_kind;

#define CLI_MAX_STRINGS 64
typedef struct {
    const char *v[CLI_MAX_STRINGS];
    int n;
} cli_strings;

/* an option that names a file the command writes */
#define CLI_IS_OUTPUT(k) ((k) == OPT_OUTPUT || (k) == OPT_OUTPUT_PREFIX || (k) == OPT_FIGURE)

typedef struct {
    const char *name;  /* long name without dashes */
    char short_name;   /* 0 if none */
    cli_opt_kind kind;
    void *dst;         /* int* (flag), const char** (string, output), long*, double* */
    const char *metavar;
    const char *help;
} cli_opt;

#define MAX_SETS 256

/* What every command takes: [MODEL.ini] [--set section.key=value]... */
#define MAX_POSITIONAL 64

/* A key an option changes (--runs N: sim.runs), applied by cli_load_model with
 * hdp_model_with after the file and the --set overrides: the schema checks its range. */
#define MAX_WITHS 8
typedef struct {
    const char *opt;  /* the option's name, for messages: "--runs" */
    const char *key;  /* section.key */
    const char *text; /* the value as given (command-line text), or NULL: */
    char num[40];     /* the value of a number option (%ld, %.17g: reads back exactly) */
    char shown[40];   /* ... and as messages show it (%g) */
} cli_with;

typedef struct {
    const char *model_path; /* the first positional argument */
    const char *pos[MAX_POSITIONAL];
    int npos;
    const char *sets[MAX_SETS];
    int nsets;
    cli_with withs[MAX_WITHS]; /* copied with the struct (validate --scaling, rates) */
    int nwiths;
    int help;
} cli_common;

/* A positional argument of a command, as its help lists it. */
typedef struct {
    const char *name; /* e.g. "MODEL.ini", "FILE.csv...", "P1|P2|P3|P4" */
    const char *help;
} cli_arg;

/* One part of a command's JSON summary (issue 30): the keys of a result table of
 * hdpsgd/fields.h under a prefix. A command's list (cli_command.json) ends with a part of
 * neither table nor key; `hdpsgd help CMD` and the man page print its keys from it (help_results.c)
 * and tests/cli/json_keys.sh checks that every key the command writes is one of them. */
typedef struct {
    const hdp_field_table *table; /* the result table (NULL: a key of its own, or the end) */
    const char *prefix; /* NULL or "": none (HDP_FIELD_OWN_PREFIX fields: the table's default); a
                           prefix ("sde_"), or a pattern of one ("<family>_", "scaling_<l>_") */
    const char *suffix; /* NULL, or a pattern after every name ("_<l>": the table per level) */
    const char *when;   /* NULL: always written; else when ("--scaling", "data.source = file") */
    const char *key;    /* table NULL: a key of no table (its `when` says what it holds) */
    int with_previous;  /* 1: a pattern part written element by element with the part before
                           it (per element, each part of the group; else part by part) */
} cli_json_part;

/* The parts cli_json_model writes: model_file (the table source) and the model object;
 * _IF: only when (a subcommand, ...). */
#define CLI_JSON_MODEL_IF(when)                                                                 \
    {&hdp_source_fields, NULL, NULL, when, NULL, 0},                                            \
    {NULL, NULL, NULL, "the resolved model, its sections as objects: see hdpsgd config", "model", \
     0}
#define CLI_JSON_MODEL CLI_JSON_MODEL_IF(NULL)
#define CLI_JSON_END {NULL, NULL, NULL, NULL, NULL, 0}

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    /* the part of the usage line that the option table cannot give: the positional arguments
     * and required options in their order (e.g. "FILE.csv... -o FIG"); cli_usage adds
     * [--set ...]... and every other option of the table */
    const char *usage;
    const char *description; /* paragraphs */
    const cli_opt *opts;     /* NULL-terminated table */
    int many_files;          /* 1: any number of positional arguments (else at most one model) */
    /* the data files a figure brings: space-separated suffixes added to the --data prefix,
     * or to the --figure path without its extension (e.g. ".rates.csv"); NULL: none */
    const char *data_suffixes;
    /* a command that `hdpsgd sweep` can run: its point runner (hdpsgd/sweep.h) and the
     * writer of its files in the point's folder (all or nothing); NULL: not in sweeps */
    const hdp_sweep_runner *sweep;
    hdp_status (*sweep_write)(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
    const cli_arg *args; /* the positional arguments ({NULL} terminated; NULL: none accepted) */
    int sets;            /* 1: takes --set SECTION.KEY=VALUE (model overrides) */
    const cli_json_part *json; /* what its --json writes (NULL: no --json) */
} cli_command;

/* The positional argument of the commands that take a model file. */
extern const cli_arg cli_model_args[];

/* Handlers of SIGINT, SIGTERM, SIGHUP and SIGPIPE that remove the temporary files of the
 * outputs being written (output.c) and then die of the signal: an interrupted command
 * leaves no partial file and the previous file untouched. main() installs them first. */
void cli_install_signal_handlers(void);
/* From here on, standard error shows control characters and bytes that are not UTF-8 as
 * \xNN (stderr_visible.c): user text echoed in any message cannot drive the terminal;
 * standard output too when it is a terminal. */
void cli_stderr_visible(void);

/* For a long search that can stop early with its best so far (schedule --optimize, issue
 * 31): from now on the first SIGINT or SIGTERM sets *flag = 1 (the command then finishes
 * with what it has), a second one terminates as cli_install_signal_handlers does.
 * cli_cancel_signal: the signal that set the flag (0: none). */
void cli_cancel_on_signal(volatile int *flag);
int cli_cancel_signal(void);

/* For the tests only (tests/cli/robust.sh): when the environment variable HDPSGD_TEST_STOP
 * equals `point` ("compute": sim/sde before the Monte Carlo starts; "commit": ode with its
 * temporary output files written, before they are renamed into place), the process stops
 * itself (SIGSTOP), so that a test can send a signal at that exact point without a race. */
void cli_test_stop(const char *point);

/* a duration for a progress line (progress.c): "42 s", "12 min", "3.5 h", "9 days",
 * "2.1 years" */
void cli_human_time(double s, char *buf, size_t size);

/* The command table (main.c). */
extern const cli_command hdp_commands[];
const cli_command *cli_find_command(const char *name);
/* "did you mean": the command closest to an unknown name, the option of cmd closest to an
 * unknown "--option" (NULL when none is close; help.c) */
const char *cli_nearest_command(const char *name);
const char *cli_nearest_option(const cli_command *cmd, const char *arg);

/* Parse argv (argv[0] is the command name) against the command's table.
 * Returns 0, or EXIT_BAD_INPUT after printing a message. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_common *common);

/* The checks of the files a command writes, before anything runs (output_checks.c), each 0
 * or EXIT_BAD_INPUT after a message: an output's folder exists and is writable and the path
 * is not a folder (cli_parse, for every output option); no two outputs, and no output and
 * a positional input, are the same file (cli_parse); no output is a file the model reads
 * (cli_load_model). */
int cli_check_output(const cli_command *cmd, const cli_opt *o, const char *given);
int cli_check_distinct(const cli_command *cmd, const cli_common *common);
int cli_check_model_inputs(const hdp_model *m);

/* cli_parse, then the command's help on stdout when --help was given: returns cli_parse's
 * status, or -1 when the help was printed (the command then returns 0). */
int cli_start(const cli_command *cmd, int argc, char **argv, cli_common *common);

/* The figure options (figure_opts.c): one group, --size, --font-size, --label, --no-title,
 * --key, --logx, --logy, that every command drawing a figure takes besides its own table
 * (cli_parse, the help, the man page and the completion add it). cli_parse resets them
 * before parsing and applies them (checked: exit 2 on a bad value) to the figures' style. */
extern const cli_opt cli_figure_opts[];
int cli_draws_figures(const cli_command *cmd);
const cli_opt *cli_figure_opts_for(const cli_command *cmd); /* NULL when it draws none */
void cli_figure_opts_reset(void);
int cli_figure_opts_apply(const char *cmd);
/* The first figure option given (its name without "--"), or NULL: with no figure to draw, a
 * figure option would be ignored silently, so cli_parse refuses it (exit 2). */
const char *cli_figure_opts_given(void);

/* Print the help of one command to f: generated from its option table, its positional
 * arguments and whether it takes --set, so that it lists exactly what cli_parse accepts. */
void cli_print_help(const cli_command *cmd, FILE *f);
/* The results reference (help_results.c): `hdpsgd help results [TABLE]`, every result table
 * of hdpsgd/fields.h (or TABLE) with its fields' names, kinds, where they are written and help;
 * 0, or EXIT_BAD_INPUT after a message naming the tables when TABLE is none. */
int cli_print_results(FILE *f, const char *table);
/* The "JSON keys" paragraph of a command with --json, generated from cmd->json: line(user,
 * text) once per line (no newline; nothing for a command without it). */
void cli_json_keys(const cli_command *cmd, void (*line)(void *user, const char *text), void *user);

/* One table's data for cli_json_write: the object and the context hdp_json_fields reads; a
 * table in several parts takes its entries of the list in the same order (validate_side: the
 * Monte Carlo's, then the SDE's). For a part with a pattern, obj is a cli_json_each. */
typedef struct {
    const hdp_field_table *table;
    const void *obj, *ctx;
} cli_json_source;
/* One element of a part with a pattern: the object and context hdp_json_fields reads, the
 * texts that replace the prefix's first and second <...> ("output"; a number printed into num)
 * and, for a suffix pattern ("_<l>"), the index written after every name (_<at>); index: the
 * element's (a context may point to it: it lives while the element is written). */
typedef struct {
    const void *obj, *ctx;
    const char *name[2];
    char num[2][24];
    long at;
    int index;
} cli_json_item;
/* The elements of a part with a pattern: count of them; item(e, i, it) fills element i (it
 * starts as obj + i stride, ctx, its index and number i) and returns 0 when that element is not
 * written; item NULL: every element as it starts. */
typedef struct cli_json_each {
    int count;
    int (*item)(const struct cli_json_each *e, int i, cli_json_item *it);
    const void *obj, *ctx;
    size_t stride;
} cli_json_each;
/* The item of a part under <family>_: e->obj is a const void *[HDP_FAMILY_COUNT], element i the
 * object of family i (NULL: not written), its name hdp_design_family_key(i). */
int cli_json_family(const cli_json_each *e, int i, cli_json_item *it);
/* The JSON summary of a command from its parts (cmd->json) in their order: each table from its
 * entry of src (count of them, in any order), a part with a `when` only when its source is
 * there with an object, a part with a pattern once per element of its cli_json_each (a group
 * of them, with_previous, element by element), the model's parts by cli_json_model(j, m,
 * cmd->name) (with a `when`: when src has hdp_source_fields with an object). A part that must be
 * written without a source is a bug: a message and abort() (cli_json_keys runs every --json). */
void cli_json_write(hdp_json *j, const cli_command *cmd, const cli_json_source *src, int count,
                    const hdp_model *m);
/* The whole JSON object of that command (by name) to f: cli_json_write between { and }. */
void cli_json_file(FILE *f, const char *command, const cli_json_source *src, int count,
                   const hdp_model *m);

/* The usage line after "hdpsgd ": cmd->usage, then [--set ...]... when the command takes it,
 * then every option of the table not already in cmd->usage, then [figure options]. */
void cli_usage(const cli_command *cmd, char *buf, size_t size);
const char *cli_usage_str(const cli_command *cmd); /* the same in a static buffer */
/* The first positional argument as one of names[0..count) (compared ignoring case when
 * fold), the optional second as the model file (common->model_path). Returns its index, or
 * prints the error with the usage line and returns -1: missing when there is no positional
 * argument, wrong when the first is none of the names, extra when there are more than two. */
int cli_subcommand(const cli_command *cmd, cli_common *common, const char *const *names,
                   int count, int fold, const char *missing, const char *wrong,
                   const char *extra);
/* The help text of an option as listed (its table help, plus "'-': standard output" for an
 * output file option that does not say it). */
void cli_opt_help(const cli_opt *o, char *buf, size_t size);

/* Build and finalize the model from MODEL and the --set overrides. Prints the
 * error and returns the exit status on failure, 0 on success. */
int cli_load_model(const cli_common *common, hdp_model *m);

/* Print "hdpsgd CMD: error: ..." and map a status to an exit status. */
int cli_fail(const char *cmd, const hdp_error *err);

/* Print "hdpsgd CMD: error: " and the message (printf's FMT), a newline; returns STATUS
 * (cli_bad: EXIT_BAD_INPUT). */
int cli_error(int status, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define cli_bad(...) cli_error(EXIT_BAD_INPUT, __VA_ARGS__)

/* Warn on stderr when the model's privacy.delta, at which summaries report epsilon, is not below
 * 1/n (docs/theory.md §6.2; no warning for rho = inf). Returns 1 if it warned. */
int cli_warn_delta(const char *cmd, const hdp_model *m);

/* Warn on stderr when sup eta~ >= 2/gamma (docs/theory.md §3). Returns 1 if it warned. */
int cli_warn_stability(const char *cmd, const hdp_model *m);

/* Options shared by the Monte Carlo commands (sim, sde, validate). */
#define CLI_NOT_GIVEN (-2147483647L - 1)
typedef struct {
    long runs, threads;
    const char *seed;
    double step; /* NAN when not given */
} cli_mc_args;

#define CLI_MC_OPTS(a)                                                                          \
    {"runs", 0, OPT_LONG, &(a).runs, "N", "number of runs (overrides sim.runs; >= 1)"},        \
    {"threads", 0, OPT_LONG, &(a).threads, "T",                                                 \
     "OpenMP threads (default 0 = one per core); results do not depend on it"},                \
    {"seed", 0, OPT_STRING, &(a).seed, "S",                                                     \
     "base seed, unsigned 64-bit (overrides sim.seed); run r uses the r-th jump"}

void cli_mc_args_reset(cli_mc_args *a);

/* Record that option opt ("--runs") sets key (a string constant) to a value: cli_load_model
 * applies it with hdp_model_with after the user's --set (so it wins and the metadata shows
 * it), where the schema checks it. _text: the option's text as given (it must outlive common:
 * argv); _long, _double: a number. Returns 0, or EXIT_BAD_INPUT after a message. */
int cli_add_with_text(const char *cmd, cli_common *common, const char *opt, const char *key,
                      const char *text);
int cli_add_with_long(const char *cmd, cli_common *common, const char *opt, const char *key,
                      long v);
int cli_add_with_double(const char *cmd, cli_common *common, const char *opt, const char *key,
                        double v);

/* Check --threads and --seed's form, and record --runs/--seed/--step as keys the model
 * takes (cli_add_with: sim.runs, sim.seed, sde.step, their ranges the schema's). Returns 0
 * or EXIT_BAD_INPUT after printing a message. */
int cli_mc_args_apply(const char *cmd, cli_mc_args *a, cli_common *common);

/* cli_start for a command with the Monte Carlo options: mc reset to "not given" first (the
 * option table points into it). */
int cli_start_mc(const cli_command *cmd, int argc, char **argv, cli_common *common,
                 cli_mc_args *mc);

/* Threads to use: --threads, or 0 (one per core). */
int cli_mc_threads(const cli_mc_args *a);
/* --threads (CLI_NOT_GIVEN: not given) from 0 to 4096, and OMP_NUM_THREADS at most 4096 when
 * it decides (sim/threads.h): 0, or EXIT_BAD_INPUT after the message */
int cli_threads_check(const char *cmd, long threads);
/* The progress of a Monte Carlo of cmd (sim, sde, validate: sides 2 with the SDE) on stderr
 * (progress.h): on a terminal the runs; issue 29: the job estimated at about 5 ns per
 * coordinate update per thread is announced when it takes over 10 s on a terminal, or over
 * an hour anywhere, and then counted by the steps within its runs too (on a terminal in
 * place, elsewhere a line every 10 minutes). cli_mc_progress_end clears the line. */
void cli_mc_estimate(const char *cmd, const hdp_model *m, hdp_mc_options *opt, int sides);
void cli_mc_progress_end(void);

/* Options of the ODE solver (ode, validate): --max-steps, --rtol, --atol, the [ode] keys. */
typedef struct {
    long max_steps;    /* CLI_NOT_GIVEN when not given */
    double rtol, atol; /* NAN when not given */
} cli_ode_args;

#define CLI_ODE_OPTS(a)                                                                         \
    {"max-steps", 0, OPT_LONG, &(a).max_steps, "N",                                            \
     "CVODE's step limit between output points (overrides ode.max_steps; >= 1)"},              \
    {"rtol", 0, OPT_DOUBLE, &(a).rtol, "R", "CVODE's relative tolerance in (0, 1) (ode.rtol)"}, \
    {"atol", 0, OPT_DOUBLE, &(a).atol, "A", "CVODE's absolute tolerance > 0 (ode.atol)"}

void cli_ode_args_reset(cli_ode_args *a);

/* Record --max-steps/--rtol/--atol as the keys ode.max_steps, ode.rtol, ode.atol
 * (cli_add_with: the schema checks them). Returns 0 or EXIT_BAD_INPUT after a message. */
int cli_ode_args_apply(const char *cmd, cli_ode_args *a, cli_common *common);

/* The CSV writers of `ode` and of `sim`/`sde` (name "sim" or "sde"), shared with validate. */
void cli_write_ode_csv(FILE *f, const hdp_model *m, const hdp_ode_result *r);
void cli_write_mc_csv(FILE *f, const char *name, const hdp_model *m, const hdp_mc_options *opt,
                      const hdp_mc_result *r);
/* ... and their JSON summaries. */
void cli_write_ode_json(FILE *f, const hdp_model *m, const hdp_ode_result *r);
void cli_write_mc_json(FILE *f, const char *name, const hdp_model *m, const hdp_mc_options *opt,
                       const hdp_mc_result *r);
/* The privacy accountant's precondition as a Monte Carlo saw it (docs/theory.md §6.1; its
 * JSON keys: the table mc_rows): a warning on standard error when a step violated it. */
void cli_warn_nonexpansive(const char *name, const hdp_model *m, const hdp_mc_result *r);
/* A note on standard error when clip.feature_norm clips a fraction >= 1e-6 of the model's rows,
 * which the risk ODE and the SDE do not model (docs/theory.md §6.1); nothing when it is off. */
void cli_note_feature_norm(const char *name, const hdp_model *m);

/* A sweep point's files pdir/name1 and pdir/name2 (NULL: none) written by w1 and w2, all or
 * nothing (the sweep_write of the command table's entries). */
hdp_status cli_sweep_files(const char *pdir, const hdp_sweep_point *p, const char *name1,
                           void (*w1)(FILE *, const hdp_sweep_point *), const char *name2,
                           void (*w2)(FILE *, const hdp_sweep_point *), hdp_error *err);

/* A command's figure is one of its outputs: drawn before the set is committed, from the
 * data files of the set (read from their temporary files), and published with them or not
 * at all (a failure fails the set: exit 3, nothing changed). cli_plot_source names the data
 * file path of set as the script's variable var; cli_draw draws fig with plots/SCRIPT.gp
 * into set and frees v; after the commit, cli_drawn prints "figure: FIG (data: DATA)". */
void cli_plot_source(hdp_outset *set, hdp_plot_vars *v, const char *var, const char *path);
void cli_draw(hdp_outset *set, const char *script, const char *fig, hdp_plot_vars *v);
void cli_drawn(const char *fig, const char *data);
/* For a command that draws a figure without being given one (rf-experiment, nc --sweep,
 * sim-index --experiment): 0 when gnuplot is there, else EXIT_IO after a message, before
 * anything runs. */
int cli_need_gnuplot(const char *cmd, const char *fig);

/* The JSON summary of `schedule --optimize`. */
void cli_write_schedule_json(FILE *f, const hdp_model *m, const hdp_design_set *d,
                             const char *table_file);

/* The gamma sweep of `rates`, shared with `sweep` (loading in common.c, the rest in
 * cmd_rates.c): the models at every gamma (the model of the file and --set options, then
 * data.gamma: hdp_rates_models) and the driver's result (hdpsgd/rates.h). */
typedef struct {
    long count, loaded;        /* gammas, models loaded */
    hdp_model *models;         /* one per gamma, log-spaced, d fixed */
    hdp_rates_result res;
} cli_rates;

/* Load the model (common's model and sets), then make it at every gamma (hdp_rates_models):
 * 0 or the exit status after a message. */
int cli_rates_load(const char *cmd, const cli_common *common, double lo, double hi, long count,
                   cli_rates *r);
/* Optimise every wanted family at every gamma and fit the slopes; verbose: one line per
 * result on stderr, and on a terminal the progress line (the gammas done, the solves). */
hdp_status cli_rates_run(cli_rates *r, const int want[HDP_FAMILY_COUNT],
                         const hdp_design_options *opt, int verbose, hdp_error *err);
void cli_write_rates_csv(FILE *f, const cli_rates *r);
void cli_write_rates_json(FILE *f, const cli_rates *r);
void cli_rates_free(cli_rates *r);

/* The man page (roff) and the bash completion script, from the command table
 * and the model schema (docs.c). */
void cli_print_man(FILE *f);
void cli_print_completion_bash(FILE *f);

/* The version string, with the git revision when built from a checkout. */
const char *hdp_version_string(void);

/* The model families' sections a command uses besides the core's (NULL-terminated; for
 * hdp_model_write_meta_sections and `hdpsgd config --command`): [rf] and [dpgd] for rf and
 * rf-experiment, [kl] for kl, [nc] for nc, [si] for sim-index, none for the others. */
const char *const *cli_model_sections(const char *command);

/* The model in a JSON summary: "model_file" (the file name, or "(built-in default)") and
 * "model", the resolved model as a nested object of the sections command uses. */
void cli_json_model(hdp_json *j, const hdp_model *m, const char *command);

#endif
