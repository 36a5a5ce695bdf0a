/* help.c — a command's help from its table entry: the usage line, the arguments and the
 * options generated from the option table (so help, parser, man page and completion agree),
 * and the lookup of a command by name. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "core/schema.h"

const cli_command *cli_find_command(const char *name)
{
    for (const cli_command *c = hdp_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

/* The command closest to an unknown name: within 2 edits (1 for names of up to 3 letters),
 * or one that starts with it; else NULL. */
const char *cli_nearest_command(const char *name)
{
    const char *best = NULL;
    int best_d = strlen(name) <= 3 ? 2 : 3;
    for (const cli_command *c = hdp_commands; c->name; c++) {
        int d = hdp_edit_distance(name, c->name);
        if (d >= best_d && *name && !strncmp(c->name, name, strlen(name)))
            d = best_d - 1; /* a prefix: "valid" for validate */
        if (d < best_d) {
            best_d = d;
            best = c->name;
        }
    }
    return best;
}

/* The option of the command (or of its figure options) closest to an unknown "--name" or
 * "--name=value": within 2 edits (1 for names of up to 4 letters), else NULL. */
const char *cli_nearest_option(const cli_command *cmd, const char *arg)
{
    char name[64];
    const char *a = arg;
    while (*a == '-')
        a++;
    size_t len = strcspn(a, "=");
    if (len == 0 || len >= sizeof name)
        return NULL;
    snprintf(name, sizeof name, "%.*s", (int)len, a);
    const char *best = NULL;
    int best_d = len <= 4 ? 2 : 3;
    const cli_opt *tables[2] = {cmd->opts, cli_figure_opts_for(cmd)};
    for (int t = 0; t < 2; t++)
        for (const cli_opt *o = tables[t]; o && o->name; o++) {
            int d = hdp_edit_distance(name, o->name);
            if (d < best_d) {
                best_d = d;
                best = o->name;
            }
        }
    return best;
}

const cli_arg cli_model_args[] = {
    {"MODEL.ini", "model file (default: the built-in default model, models/default.ini)"},
    {NULL, NULL},
};

/* the help's lines of an option table: "--name META" or "-s, --name META", then the help */
static void print_opts(FILE *f, const cli_opt *table)
{
    char left[96], help[1024];
    for (const cli_opt *o = table; o && o->name; o++) {
        char s[8] = "";
        if (o->short_name)
            snprintf(s, sizeof s, "-%c, ", o->short_name);
        snprintf(left, sizeof left, "%s--%s%s%s", s, o->name, o->metavar ? " " : "",
                 o->metavar ? o->metavar : "");
        cli_opt_help(o, help, sizeof help);
        fprintf(f, "  %-28s %s\n", left, help);
    }
}

void cli_opt_help(const cli_opt *o, char *buf, size_t size)
{
    const char *h = o->help ? o->help : "";
    if (o->kind == OPT_OUTPUT && !strstr(h, "'-'"))
        snprintf(buf, size, "%s ('-': standard output)", h);
    else if (o->kind == OPT_OUTPUT_PREFIX)
        snprintf(buf, size, "%s (several files: not '-')", h);
    else if (o->kind == OPT_FIGURE)
        snprintf(buf, size, "%s (not '-': a figure is a file)", h);
    else
        snprintf(buf, size, "%s", h);
}

/* does the hand-written part of the usage already show option o? */
static int usage_shows(const char *usage, const cli_opt *o)
{
    char want[64];
    snprintf(want, sizeof want, "--%s", o->name);
    size_t n = strlen(want);
    for (const char *p = strstr(usage, want); p; p = strstr(p + 1, want))
        if (!((p[n] >= 'a' && p[n] <= 'z') || p[n] == '-'))
            return 1;
    if (o->short_name) {
        snprintf(want, sizeof want, "-%c ", o->short_name);
        for (const char *p = strstr(usage, want); p; p = strstr(p + 1, want))
            if (p == usage || p[-1] == ' ' || p[-1] == '[' || p[-1] == '(')
                return 1;
    }
    return 0;
}

void cli_usage(const cli_command *cmd, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s%s%s", cmd->name, cmd->usage[0] ? " " : "",
                                   cmd->usage);
#define APPEND(...)                                                                              \
    do {                                                                                         \
        if (used < size) used += (size_t)snprintf(buf + used, size - used, __VA_ARGS__);        \
    } while (0)
    if (cmd->sets)
        APPEND(" [--set SECTION.KEY=VALUE]...");
    for (const cli_opt *o = cmd->opts; o && o->name; o++) {
        if (usage_shows(cmd->usage, o))
            continue;
        if (o->short_name)
            APPEND(" [-%c%s%s]", o->short_name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        else
            APPEND(" [--%s%s%s]", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        if (o->kind == OPT_STRINGS)
            APPEND("...");
    }
    if (cli_figure_opts_for(cmd))
        APPEND(" [figure options]");
#undef APPEND
}

const char *cli_usage_str(const cli_command *cmd)
{
    static char buf[2048];
    cli_usage(cmd, buf, sizeof buf);
    return buf;
}

static void put_line(void *f, const char *text) { fprintf(f, "%s\n", text); }

void cli_print_help(const cli_command *cmd, FILE *f)
{
    char usage[2048];
    cli_usage(cmd, usage, sizeof usage);
    fprintf(f, "Usage: hdpsgd %s\n\n%s\n\n", usage, cmd->description);
    if (cmd->args && cmd->args[0].name) {
        fprintf(f, "Arguments:\n");
        for (const cli_arg *a = cmd->args; a->name; a++)
            fprintf(f, "  %-28s %s\n", a->name, a->help);
    }
    fprintf(f, "Options:\n");
    if (cmd->sets)
        fprintf(f, "  %-28s %s\n", "--set SECTION.KEY=VALUE",
                "override one model key (repeatable); see 'hdpsgd keys'");
    print_opts(f, cmd->opts);
    fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
    const cli_opt *fig = cli_figure_opts_for(cmd);
    if (fig)
        fprintf(f, "Figure options:\n");
    print_opts(f, fig);
    if (cmd->json) {
        fputc('\n', f);
        cli_json_keys(cmd, put_line, f);
    }
    int outputs = 0, figures = 0;
    for (const cli_opt *o = cmd->opts; o && o->name; o++) {
        outputs += o->kind == OPT_OUTPUT || o->kind == OPT_OUTPUT_PREFIX;
        figures += o->kind == OPT_FIGURE;
    }
    if (outputs || figures)
        fprintf(f,
                "\nOutput files: %s; a symbolic link is written through to its target, a "
                "replaced file keeps its permissions, and every file is written whole or not at "
                "all. Two outputs that are one file, or an output that is an input, are refused "
                "before anything runs.%s\n",
                !outputs ? "a figure is a file, not '-'"
                : figures ? "'-' is standard output (not for a figure or a PREFIX)"
                          : "'-' is standard output (not for a PREFIX)",
                figures ? " Figures: .png, .pdf, .svg, .eps or .tex (LaTeX, with its graphics "
                          "file FIG-without-extension-graphic.pdf)." : "");
    fprintf(f, "\nExit status: 0 success, 1 validation failed, 2 bad input, 3 output not "
               "written, 4 numerical failure.\n");
}

int cli_subcommand(const cli_command *cmd, cli_common *common, const char *const *names,
                   int count, int fold, const char *missing, const char *wrong,
                   const char *extra)
{
    int which = -1;
    for (int i = 0; common->npos > 0 && i < count; i++)
        if (!(fold ? strcasecmp : strcmp)(common->pos[0], names[i]))
            which = i;
    if (which < 0 || common->npos > 2)
        return cli_error(-1, cmd->name, "%s\nUsage: hdpsgd %s",
                         common->npos == 0 ? missing : which < 0 ? wrong : extra, cli_usage_str(cmd));
    common->model_path = common->npos > 1 ? common->pos[1] : NULL;
    return which;
}
