/* common.c — option parsing, model loading and error reporting shared by the commands. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hdpsgd/schedule.h"

const cli_command *cli_find_command(const char *name)
{
    for (const cli_command *c = hdp_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

void cli_print_help(const cli_command *cmd, FILE *f)
{
    fprintf(f, "Usage: hdpsgd %s\n\n%s\n\n", cmd->usage, cmd->description);
    fprintf(f, "Options:\n");
    fprintf(f, "  %-28s %s\n", "MODEL.ini", "model file (default: the built-in default model)");
    fprintf(f, "  %-28s %s\n", "--set SECTION.KEY=VALUE",
            "override one model key (repeatable); see 'hdpsgd keys'");
    for (const cli_opt *o = cmd->opts; o && o->name; o++) {
        char left[64];
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name,
                     o->metavar ? " " : "", o->metavar ? o->metavar : "");
        else
            snprintf(left, sizeof left, "--%s%s%s", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        fprintf(f, "  %-28s %s\n", left, o->help);
    }
    fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
    fprintf(f, "\nExit status: 0 success, 1 validation failed, 2 bad input, 3 output not "
               "written, 4 numerical failure.\n");
}

static int usage_error(const cli_command *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "hdpsgd %s: ", cmd->name);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nUsage: hdpsgd %s   (hdpsgd help %s for more)\n", cmd->usage, cmd->name);
    return EXIT_BAD_INPUT;
}

static int set_option(const cli_command *cmd, const cli_opt *o, const char *value)
{
    char *end;
    switch (o->kind) {
    case OPT_FLAG: *(int *)o->dst = 1; return 0;
    case OPT_STRING: *(const char **)o->dst = value; return 0;
    case OPT_LONG: {
        errno = 0;
        long v = strtol(value, &end, 10);
        if (*value == '\0' || *end || errno)
            return usage_error(cmd, "--%s expects an integer", o->name);
        *(long *)o->dst = v;
        return 0;
    }
    case OPT_DOUBLE: {
        errno = 0;
        double v = strtod(value, &end);
        if (*value == '\0' || *end || errno || !isfinite(v))
            return usage_error(cmd, "--%s expects a finite number", o->name);
        *(double *)o->dst = v;
        return 0;
    }
    }
    return 0;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_common *common)
{
    memset(common, 0, sizeof *common);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            common->help = 1;
            continue;
        }
        if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
            const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                return usage_error(cmd, "%s needs SECTION.KEY=VALUE", "--set");
            if (common->nsets == MAX_SETS)
                return usage_error(cmd, "too many --set options (at most %s)", "256");
            common->sets[common->nsets++] = v;
            continue;
        }
        if (a[0] == '-' && a[1] != '\0') {
            const cli_opt *found = NULL;
            const char *inline_val = NULL;
            for (const cli_opt *o = cmd->opts; o && o->name; o++) {
                size_t len = strlen(o->name);
                if (a[1] == '-' && !strncmp(a + 2, o->name, len) &&
                    (a[2 + len] == '\0' || a[2 + len] == '=')) {
                    found = o;
                    if (a[2 + len] == '=') inline_val = a + 3 + len;
                    break;
                }
                if (a[1] != '-' && o->short_name && a[1] == o->short_name && a[2] == '\0') {
                    found = o;
                    break;
                }
            }
            if (!found)
                return usage_error(cmd, "unknown option '%s'", a);
            const char *v = inline_val;
            if (found->kind != OPT_FLAG && !v) {
                if (i + 1 >= argc)
                    return usage_error(cmd, "option '%s' needs a value", a);
                v = argv[++i];
            }
            int rc = set_option(cmd, found, v);
            if (rc)
                return rc;
            continue;
        }
        if (common->npos > 0 && !cmd->many_files)
            return usage_error(cmd, "more than one model file given ('%s')", a);
        if (common->npos == MAX_POSITIONAL)
            return usage_error(cmd, "too many files (at most 64): '%s'", a);
        common->pos[common->npos++] = a;
        common->model_path = common->pos[0];
    }
    return 0;
}

int cli_fail(const char *cmd, const hdp_error *err)
{
    fprintf(stderr, "hdpsgd %s: error: %s\n", cmd, err->msg);
    switch (err->status) {
    case HDP_OK: return 0;
    case HDP_EINPUT: return EXIT_BAD_INPUT;
    case HDP_EIO: return EXIT_IO;
    case HDP_ENUMERIC:
    case HDP_ENOMEM: return EXIT_NUMERIC;
    }
    return EXIT_NUMERIC;
}

int cli_load_model(const cli_common *common, hdp_model *m)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(m);
    hdp_status st = HDP_OK;
    if (common->model_path)
        st = hdp_model_load_file(m, common->model_path, &err);
    for (int i = 0; st == HDP_OK && i < common->nsets; i++)
        st = hdp_model_set(m, common->sets[i], &err);
    if (st == HDP_OK)
        st = hdp_model_finalize(m, &err);
    if (st != HDP_OK) {
        fprintf(stderr, "hdpsgd: error: %s\n", err.msg);
        hdp_model_free(m);
        return st == HDP_EINPUT ? EXIT_BAD_INPUT : EXIT_NUMERIC;
    }
    return 0;
}

int cli_warn_stability(const char *cmd, const hdp_model *m)
{
    hdp_schedule s;
    hdp_schedule_from_model(m, &s);
    double sup = hdp_sched_eta_sup(&s);
    if (sup < 2.0 / m->gamma)
        return 0;
    fprintf(stderr,
            "hdpsgd %s: warning: sup eta~ = %g >= 2/gamma = %g: past the stability limit of "
            "THEORY 3; the risk may blow up\n",
            cmd, sup, 2.0 / m->gamma);
    return 1;
}

void cli_mc_args_reset(cli_mc_args *a)
{
    a->runs = a->threads = CLI_NOT_GIVEN;
    a->seed = NULL;
    a->step = NAN;
}

static int add_set(const char *cmd, cli_common *common, char *buf, size_t size, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));

static int add_set(const char *cmd, cli_common *common, char *buf, size_t size, const char *fmt,
                   ...)
{
    if (common->nsets == MAX_SETS) {
        fprintf(stderr, "hdpsgd %s: too many --set options (at most %d)\n", cmd, MAX_SETS - 3);
        return EXIT_BAD_INPUT;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    common->sets[common->nsets++] = buf;
    return 0;
}

int cli_mc_args_apply(const char *cmd, cli_mc_args *a, cli_common *common)
{
    if (a->runs != CLI_NOT_GIVEN && a->runs < 1) {
        fprintf(stderr, "hdpsgd %s: error: --runs %ld: the number of runs must be an integer >= 1\n",
                cmd, a->runs);
        return EXIT_BAD_INPUT;
    }
    if (a->threads != CLI_NOT_GIVEN && (a->threads < 0 || a->threads > 4096)) {
        fprintf(stderr,
                "hdpsgd %s: error: --threads %ld: expected an integer from 0 (one per core) to "
                "4096\n",
                cmd, a->threads);
        return EXIT_BAD_INPUT;
    }
    if (a->seed) {
        char *end;
        errno = 0;
        (void)strtoull(a->seed, &end, 0);
        if (!a->seed[0] || a->seed[0] == '-' || *end || errno) {
            fprintf(stderr, "hdpsgd %s: error: --seed '%s': expected an unsigned 64-bit integer\n",
                    cmd, a->seed);
            return EXIT_BAD_INPUT;
        }
    }
    if (!isnan(a->step) && !(a->step >= 0 && a->step <= 1)) {
        fprintf(stderr, "hdpsgd %s: error: --step %g: expected a number in [0, 1] (0 = 1/n)\n", cmd,
                a->step);
        return EXIT_BAD_INPUT;
    }
    int rc = 0;
    if (a->runs != CLI_NOT_GIVEN)
        rc = add_set(cmd, common, a->buf[0], sizeof a->buf[0], "sim.runs=%ld", a->runs);
    if (!rc && a->seed)
        rc = add_set(cmd, common, a->buf[1], sizeof a->buf[1], "sim.seed=%.100s", a->seed);
    if (!rc && !isnan(a->step))
        rc = add_set(cmd, common, a->buf[2], sizeof a->buf[2], "sde.step=%.17g", a->step);
    return rc;
}

int cli_mc_threads(const cli_mc_args *a)
{
    return a->threads != CLI_NOT_GIVEN ? (int)a->threads : 0;
}
