/*
 * output_checks.c — the checks cli_parse and cli_load_model make on the files a command will
 * write before anything runs: each output's folder exists and is writable, no two outputs
 * of one command are the same file, and no output is an input (the model file, a spectrum
 * or schedule table the model reads).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io/output.h"
#include "plot.h"
#include "cli.h"
#include "hdpsgd/schedule.h"

/* An output path given to OPT_OUTPUT or OPT_OUTPUT_PREFIX: its folder must exist and take new
 * files (the temporary file of output.c, then the rename), and the path must not be a
 * folder; an existing device or pipe (/dev/null, /dev/stdout) is written directly and must
 * be writable. Checked before anything runs: a mistyped folder is bad input (status 2),
 * not an output error after an hour of computation, and no partial file is ever made. */
int cli_check_output(const cli_command *cmd, const cli_opt *o, const char *given)
{
    char dir[HDP_OUT_PATH_MAX + 1], path[HDP_OUT_PATH_MAX + 1];
    struct stat sb;
    if (o->kind == OPT_FIGURE && given && !hdp_plot_extension_ok(given))
        return cli_bad(cmd->name, "--%s %s: a figure is drawn by its extension: .png, .pdf, "
                       ".svg, .eps or .tex (nothing was run)", o->name, given);
    if (o->kind == OPT_FIGURE && given) { /* FIG.tex names FIG-graphic in LaTeX, unescaped */
        const char *dot = strrchr(given, '.'), *name = strrchr(given, '/');
        name = name ? name + 1 : given;
        size_t bad = strcspn(name, "\\{}%#$^&~");
        if (dot && !strcasecmp(dot, ".tex") && name[bad])
            return cli_bad(cmd->name, "--%s %s: a .tex figure names its graphics file in LaTeX "
                           "(\\includegraphics{...-graphic}), where '%c' is special: choose a "
                           "name without \\ { } %% # $ ^ & ~ (nothing was run)", o->name, given,
                           name[bad]);
    }
    if (given && o->kind == OPT_OUTPUT_PREFIX && !strcmp(given, "-"))
        return cli_bad(cmd->name, "--%s -: a prefix names several files, it cannot be standard "
                       "output (nothing was run)", o->name);
    if (!given || !strcmp(given, "-"))
        return 0;
    if (!given[0])
        return cli_bad(cmd->name, "--%s: empty file name", o->name);
    if (o->kind == OPT_OUTPUT_PREFIX) { /* PREFIX.ode.csv, ...: PREFIX must end in a name */
        const char *name = strrchr(given, '/');
        name = name ? name + 1 : given;
        if (!name[0] || !strcmp(name, ".") || !strcmp(name, ".."))
            return cli_bad(cmd->name, "--%s %.300s%s: a prefix is the start of the files' names "
                           "(PREFIX.ode.csv, ...): it must end in a name, not in a folder ('/', "
                           "'.' or '..'), which would make hidden files; for example --%s DIR/run "
                           "(nothing was run)", o->name, given, strlen(given) > 300 ? "..." : "",
                           o->name);
    }
    /* where it leads (symbolic links are written through), and names that fit */
    hdp_error e;
    hdp_error_clear(&e);
    int fd;
    if (hdp_out_resolve(given, path, sizeof path, &fd, &e) != HDP_OK)
        return cli_bad(cmd->name, "--%s %s: %s (nothing was run)", o->name, given, e.msg);
    if (fd >= 0)
        return 0; /* an open descriptor: written like a redirection */
    const char *last = strrchr(path, '/');
    last = last ? last + 1 : path;
    size_t room = NAME_MAX - (o->kind == OPT_OUTPUT_PREFIX ? 16 : 0) - HDP_OUT_TMP_EXTRA;
    if (strlen(last) > room)
        return cli_bad(cmd->name, "--%s %.60s...: the file name '%.40s...' has %zu characters: at "
                       "most %zu are accepted (the system's limit is %d, less the temporary "
                       "file's suffix) (nothing was run)", o->name, given, last, strlen(last),
                       room, NAME_MAX);
    if (o->kind != OPT_OUTPUT_PREFIX && stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return cli_bad(cmd->name, "--%s %s: is a directory, expected a file name", o->name,
                           path);
        if (!S_ISREG(sb.st_mode)) {
            if (access(path, W_OK) == 0)
                return 0;
            return cli_bad(cmd->name, "--%s %s: cannot write to it: %s", o->name, path,
                           strerror(errno));
        }
    }
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    const char *why = NULL;
    if (stat(dir, &sb) != 0)
        why = errno == ENOENT ? "the directory '%s' does not exist" : "cannot use '%s': %s";
    else if (!S_ISDIR(sb.st_mode))
        why = "'%s' is not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = "cannot create files in the directory '%s': %s";
    if (!why)
        return 0;
    char what[4200];
    snprintf(what, sizeof what, why, dir, strerror(errno));
    return cli_bad(cmd->name, "--%s %s: %s (nothing was run)", o->name, given, what);
}

/* ---- no two outputs of one command, and no output and input, are the same file ---- */

typedef struct {
    char label[128];                  /* "--json x.json" or "data of --figure f.png" */
    char abs[PATH_MAX + HDP_OUT_PATH_MAX + 2]; /* the resolved absolute name ("" if unknown) */
    int exists, special;             /* special: a descriptor, device or pipe */
    dev_t dev;
    ino_t ino;
} file_id;

#define MAX_OUTS 32
static file_id outs[MAX_OUTS];
static int nouts;

/* "WHAT NAME" for messages, a long name shortened visibly (its start, "...", its end) */
static void make_label(char *label, size_t size, const char *what, const char *name)
{
    size_t n = strlen(name);
    if (n <= 60)
        snprintf(label, size, "%s %s", what, name);
    else
        snprintf(label, size, "%s %.28s...%s", what, name, name + n - 28);
}

/* what the file path is, labelled "WHAT PATH" for messages */
static void identify(const char *path, const char *what, file_id *id)
{
    memset(id, 0, sizeof *id);
    make_label(id->label, sizeof id->label, what, path);
    char target[HDP_OUT_PATH_MAX + 1];
    int fd;
    hdp_error e;
    hdp_error_clear(&e);
    if (!strcmp(path, "-") || hdp_out_resolve(path, target, sizeof target, &fd, &e) != HDP_OK ||
        fd >= 0) {
        id->special = 1;
        return;
    }
    struct stat sb;
    if (stat(target, &sb) == 0) {
        id->exists = 1;
        id->special = !S_ISREG(sb.st_mode);
        id->dev = sb.st_dev;
        id->ino = sb.st_ino;
        if (!realpath(target, id->abs))
            id->abs[0] = '\0';
        return;
    }
    /* a new file: the real folder and the name */
    char dir[HDP_OUT_PATH_MAX + 1], real[PATH_MAX];
    const char *slash = strrchr(target, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - target) : 1, slash ? target : ".");
    if (slash == target)
        snprintf(dir, sizeof dir, "/");
    if (realpath(dir, real))
        snprintf(id->abs, sizeof id->abs, "%s/%s", strcmp(real, "/") ? real : "",
                 slash ? slash + 1 : target);
}

static int same_file(const file_id *a, const file_id *b)
{
    if (a->special || b->special)
        return 0; /* /dev/null twice, standard output twice: allowed */
    if (a->exists && b->exists)
        return a->dev == b->dev && a->ino == b->ino;
    return a->abs[0] && !strcmp(a->abs, b->abs);
}

/* the prefix of the figure's data files: --data PREFIX, else the figure without extension */
static void data_prefix(const cli_command *cmd, char *out, size_t size)
{
    out[0] = '\0';
    const char *figure = NULL, *data = NULL;
    for (const cli_opt *o = cmd->opts; o && o->name; o++) {
        const char *v = CLI_IS_OUTPUT(o->kind) ? *(const char **)o->dst : NULL;
        if (v && o->kind == OPT_OUTPUT_PREFIX) data = v;
        if (v && o->kind == OPT_FIGURE) figure = v;
    }
    if (data)
        snprintf(out, size, "%s", data);
    else if (figure)
        hdp_plot_stem(figure, "", out, size);
}

static int refuse_same(const cli_command *cmd, const file_id *a, const file_id *b, int input)
{
    return cli_bad(cmd->name, "%s and %s are the same file%s: choose another name (nothing was "
                   "run)", a->label, b->label, input ? " (an input would be overwritten)" : "");
}

int cli_check_distinct(const cli_command *cmd, const cli_common *common)
{
    nouts = 0;
    for (const cli_opt *o = cmd->opts; o && o->name; o++) {
        if ((o->kind != OPT_OUTPUT && o->kind != OPT_FIGURE) || nouts == MAX_OUTS)
            continue;
        const char *v = *(const char **)o->dst; /* only output options hold a string */
        if (!v)
            continue;
        char opt[40];
        snprintf(opt, sizeof opt, "--%s", o->name);
        identify(v, opt, &outs[nouts++]);
        if (o->kind != OPT_FIGURE)
            continue;
        /* the graphics file of a .tex figure, the caption of --no-title */
        char comp[2][4200];
        int nc = hdp_plot_companions(v, comp, 2);
        for (int c = 0; c < nc && nouts < MAX_OUTS; c++)
            identify(comp[c], "the figure's file", &outs[nouts++]);
    }
    char prefix[HDP_OUT_PATH_MAX + 1];
    data_prefix(cmd, prefix, sizeof prefix);
    if (cmd->data_suffixes && prefix[0]) {
        char list[256];
        snprintf(list, sizeof list, "%s", cmd->data_suffixes);
        for (char *sv = NULL, *suf = strtok_r(list, " ", &sv); suf && nouts < MAX_OUTS;
             suf = strtok_r(NULL, " ", &sv)) {
            char path[HDP_OUT_PATH_MAX + 64];
            snprintf(path, sizeof path, "%s%s", prefix, suf);
            identify(path, "the figure's data file", &outs[nouts++]);
        }
    }
    for (int i = 0; i < nouts; i++)
        for (int j = i + 1; j < nouts; j++)
            if (same_file(&outs[i], &outs[j]))
                return refuse_same(cmd, &outs[i], &outs[j], 0);
    for (int k = 0; k < common->npos; k++) {
        file_id in;
        identify(common->pos[k], "the input", &in);
        if (!in.exists)
            continue;
        for (int i = 0; i < nouts; i++)
            if (same_file(&outs[i], &in))
                return refuse_same(cmd, &outs[i], &in, 1);
    }
    return 0;
}

/* The files a model reads (spectrum, schedule table) against the command's outputs. */
int cli_check_model_inputs(const hdp_model *m)
{
    const char *files[2] = {m->spectrum == HDP_SPECTRUM_FILE ? m->spectrum_file : NULL,
                            m->sched == HDP_SCHED_TABLE ? m->sched_file : NULL};
    const char *keys[2] = {"data.spectrum_file", "schedule.file"};
    for (int k = 0; k < 2; k++) {
        if (!files[k] || !files[k][0])
            continue;
        file_id in;
        identify(files[k], keys[k], &in);
        for (int i = 0; i < nouts; i++)
            if (same_file(&outs[i], &in)) {
                fprintf(stderr,
                        "hdpsgd: error: %s and %s are the same file (an input would be "
                        "overwritten): choose another name (nothing was run)\n",
                        outs[i].label, in.label);
                return EXIT_BAD_INPUT;
            }
    }
    return 0;
}

