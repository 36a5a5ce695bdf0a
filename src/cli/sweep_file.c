/*
 * sweep_file.c — the sweep file of `hdpsgd sweep` (inih): [sweep] model, commands and the
 * settings of schedule and rates, [axes] (lists or LO:HI:COUNT[:log] ranges), [set]; and
 * the points of the Cartesian product of the axes (row-major, last axis fastest). The
 * commands are the command table's entries that have a point runner (hdpsgd/sweep.h).
 */
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_spec.h"

/* The commands a sweep can run: the command table's entries with a point runner
 * (hdpsgd/sweep.h), in the table's order; bit k of sweep_spec.commands is the k-th, and
 * sweep_spec.order lists them in the order the sweep file names them (MAX_SWEEP_COMMANDS:
 * sweep_spec.h). */

static int sweepable(const cli_command **list)
{
    int n = 0;
    for (const cli_command *c = hdp_commands; c->name && n < MAX_SWEEP_COMMANDS; c++)
        if (c->sweep)
            list[n++] = c;
    return n;
}

/* "ode, sim, sde, ...": the names of the commands a sweep can run */
static const char *sweepable_names(char *buf, size_t size)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    int n = sweepable(list);
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < n && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? ", " : "", list[k]->name);
    return buf;
}


/* 1 when the sweep runs the command `name` */
int sweep_has(const sweep_spec *s, const char *name)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    int n = sweepable(list);
    for (int k = 0; k < n; k++)
        if (!strcmp(list[k]->name, name))
            return (s->commands >> k) & 1;
    return 0;
}

/* the runners of the sweep's commands, in the order of the sweep file (a command after
 * schedule runs on its designed schedule: hdp_sweep_point_run) */
int sweep_runners_of(const sweep_spec *s, const hdp_sweep_runner **runners)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    sweepable(list);
    for (int k = 0; k < s->ncommands; k++)
        runners[k] = list[s->order[k]]->sweep;
    return s->ncommands;
}

void sweep_spec_free(sweep_spec *s)
{
    for (int a = 0; a < s->naxes; a++)
        for (int i = 0; i < s->axes[a].count; i++) free(s->axes[a].values[i]);
    for (int i = 0; i < s->nfixed; i++) free(s->fixed[i]);
    s->naxes = s->nfixed = 0;
}

/* s->err: "PATH:LINE: " (the line read) and the message, cut as one snprintf would; 0, a
 * handler's failure */
static int spec_fail(sweep_spec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int spec_fail(sweep_spec *s, const char *fmt, ...)
{
    s->err_line = s->line;
    int n = snprintf(s->err, sizeof s->err, "%s:%d: ", s->path, s->line);
    if (n >= 0 && (size_t)n < sizeof s->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err + n, sizeof s->err - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
    return s;
}

/* LO:HI:COUNT[:log] -> values; returns 0 if the text is not a range, -1 on error. */
static int expand_range(axis *ax, const char *text, char *why, size_t size)
{
    /* LO:HI: makes it a range; then COUNT and the optional :log must be the rest, whole
     * (sscanf's %d once took "1e9" as 1 and "3x" as 3) */
    char *end;
    double lo = strtod(text, &end);
    if (end == text || *end != ':')
        return 0;
    const char *p = end + 1;
    double hi = strtod(p, &end);
    if (end == p || *end != ':')
        return 0;
    p = end + 1;
    errno = 0;
    long count = strtol(p, &end, 10);
    int whole = end != p && !errno && (!*end || !strcmp(end, ":log"));
    int is_log = whole && *end;
    if (!whole || count < 1 || count > MAX_VALUES || !isfinite(lo) || !isfinite(hi) ||
        (is_log && (lo <= 0 || hi <= 0))) {
        snprintf(why, size,
                 "'%s': expected LO:HI:COUNT or LO:HI:COUNT:log with 1 <= COUNT <= %d (log: LO, "
                 "HI > 0)",
                 text, MAX_VALUES);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        double u = count == 1 ? 0.0 : (double)i / (double)(count - 1);
        double v = is_log ? exp(log(lo) + u * (log(hi) - log(lo))) : lo + u * (hi - lo);
        char buf[64];
        snprintf(buf, sizeof buf, "%.15g", v);
        ax->values[ax->count++] = strdup(buf);
    }
    return 1;
}

/* [sweep] commands = a list of the commands a sweep can run */
static int parse_commands(sweep_spec *s, const char *value)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    int n = sweepable(list);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", value);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *t = trim(tok);
        int k = 0;
        while (k < n && strcmp(t, list[k]->name))
            k++;
        if (k == n) {
            char names[256];
            return spec_fail(s, "[sweep] commands: unknown command '%s'; accepted: %s", t,
                                sweepable_names(names, sizeof names));
        }
        if ((s->commands >> k) & 1)
            return spec_fail(s, "[sweep] commands: '%s' is named twice; name each command once "
                                "(the commands after schedule run on its designed schedule, those "
                                "before it on the model's)", t);
        s->commands |= 1 << k;
        s->order[s->ncommands++] = k;
    }
    return 1;
}

/* a key of [sweep] other than model and commands: the settings of schedule and rates */
static int on_setting(sweep_spec *s, const char *name, const char *value)
{
    hdp_sweep_settings *set = &s->set;
    if (!strcmp(name, "schedule_families") || !strcmp(name, "rates_families")) {
        hdp_error e;
        hdp_error_clear(&e);
        int *want = name[0] == 's' ? set->schedule_want : set->rates_want;
        if (hdp_design_families_parse(value, want, &e) != HDP_OK)
            spec_fail(s, "[sweep] %s: %.300s", name, e.msg);
    } else if (!strcmp(name, "schedule_knots")) {
        char *end;
        set->knots = strtol(value, &end, 10);
        if (end == value || *end || set->knots < 2 || set->knots > HDP_DESIGN_MAX_KNOTS)
            spec_fail(s, "[sweep] schedule_knots = '%s': expected an integer from 2 to %d", value,
                         HDP_DESIGN_MAX_KNOTS);
    } else if (!strcmp(name, "tune_clip") || !strcmp(name, "schedule_refine")) {
        int *flag = name[0] == 't' ? &set->tune_clip : &set->refine;
        if (!strcmp(value, "true") || !strcmp(value, "false"))
            *flag = !strcmp(value, "true");
        else
            spec_fail(s, "[sweep] %s = '%s': expected true or false", name, value);
    } else if (!strcmp(name, "schedule_refine_tol")) {
        char *end;
        set->refine_tol = strtod(value, &end);
        if (end == value || *end || !(set->refine_tol > 0) || !isfinite(set->refine_tol))
            spec_fail(s, "[sweep] schedule_refine_tol = '%s': expected a positive number (default "
                         "1e-5)", value);
    } else if (!strcmp(name, "rates_gammas")) {
        hdp_error why;
        hdp_error_clear(&why);
        snprintf(s->rates_gammas, sizeof s->rates_gammas, "%s", value);
        if (hdp_rates_grid_parse(value, &set->gamma_lo, &set->gamma_hi, &set->gamma_count, &why))
            spec_fail(s, "[sweep] rates_gammas = %.300s", why.msg);
    } else {
        spec_fail(s, "unknown key '%s' in [sweep]; accepted keys: model, commands, "
                     "schedule_families, schedule_knots, schedule_refine, schedule_refine_tol, "
                     "rates_gammas, rates_families, tune_clip", name);
    }
    return !s->err[0];
}

static int on_sweep(sweep_spec *s, const char *name, const char *value)
{
    if (!strcmp(name, "model")) {
        s->model_line = s->line;
        int n = value[0] == '/' || !strchr(s->path, '/')
                    ? snprintf(s->model, sizeof s->model, "%s", value)
                    : snprintf(s->model, sizeof s->model, "%.*s/%s",
                               (int)(strrchr(s->path, '/') - s->path), s->path, value);
        if (n < 0 || (size_t)n >= sizeof s->model)
            spec_fail(s, "[sweep] model: the path relative to the sweep file's folder has %d "
                         "characters, more than the %zu accepted", n, sizeof s->model - 1);
        return !s->err[0];
    }
    if (!strcmp(name, "commands"))
        return parse_commands(s, value);
    return on_setting(s, name, value);
}

static int on_set(sweep_spec *s, const char *name, const char *value)
{
    if (s->nfixed == MAX_FIXED)
        return spec_fail(s, "too many [set] keys (at most %d)", MAX_FIXED);
    char buf[1200];
    snprintf(buf, sizeof buf, "%s=%s", name, value);
    s->fixed[s->nfixed++] = strdup(buf);
    return 1;
}

/* the values of a list v1, v2, ... appended to the axis (an axis's line, or a line that
 * continues it) */
static int add_values(sweep_spec *s, axis *ax, const char *value)
{
    char buf[HDP_INPUT_INI_MAX_LINE + 2];
    snprintf(buf, sizeof buf, "%s", value); /* lines are at most HDP_INPUT_INI_MAX_LINE long */
    /* split at every comma (strtok skipped '1,,2''s empty value silently, while '1, ,2' was
     * refused); a comma may end a line that an indented line continues, or begin that line */
    char *next = buf;
    for (char *tok = buf; next; tok = next) {
        char *comma = strchr(tok, ',');
        next = comma ? comma + 1 : NULL;
        if (comma)
            *comma = '\0';
        char *t = trim(tok);
        if (!*t && (tok == buf || !next))
            continue;
        if (!*t || ax->count == MAX_VALUES)
            return spec_fail(s, "axis %s: empty value or more than %d values", ax->key,
                                MAX_VALUES);
        if (strchr(t, '"')) /* a cell of results.csv as it is: a quote would open a quoted field */
            return spec_fail(s, "axis %s: the value '%s' holds a double quote, which its cell in "
                                "results.csv would misread (CSV readers take it as the start of "
                                "a quoted field): rename it", ax->key, t);
        if (!(ax->values[ax->count] = strdup(t)))
            return spec_fail(s, "axis %s: out of memory", ax->key);
        ax->count++;
    }
    return 1;
}

/* an axis: v1, v2, ... or LO:HI:COUNT[:log] */
static int on_axis(sweep_spec *s, const char *name, const char *value)
{
    if (s->naxes == MAX_AXES)
        return spec_fail(s, "too many axes (at most %d)", MAX_AXES);
    axis *ax = &s->axes[s->naxes];
    memset(ax, 0, sizeof *ax);
    snprintf(ax->key, sizeof ax->key, "%s", name);
    ax->line = s->line;
    if (!strchr(name, '.'))
        return spec_fail(s, "axis '%s': expected a model key as section.key (e.g. data.gamma)",
                            name);
    char why[300];
    int r = expand_range(ax, value, why, sizeof why);
    if (r < 0)
        return spec_fail(s, "axis %s: %s", name, why);
    ax->is_range = r;
    s->naxes++; /* freed with the spec from here on */
    if (r == 0 && !add_values(s, ax, value))
        return 0;
    if (ax->count == 0)
        return spec_fail(s, "axis %s has no values", name);
    return 1;
}

/* An indented line after a key: inih hands it over as more of that key's value (as
 * Python's configparser does). Only an axis's list of values continues so; nothing else
 * may (the line would be lost or misread). */
static int on_continuation(sweep_spec *s, const char *section, const char *name,
                           const char *value)
{
    axis *ax = s->naxes ? &s->axes[s->naxes - 1] : NULL;
    if (strcmp(section, "axes") || !ax || strcmp(ax->key, name))
        spec_fail(s, "the line is indented, so it would continue the value of [%s] %s on the line "
                     "above: only an axis's list of values continues on indented lines; start a "
                     "new key at the beginning of its line", section, name);
    else if (ax->is_range)
        spec_fail(s, "the line is indented, so it would add values to axis %s, a range "
                     "LO:HI:COUNT: start a new key at the beginning of its line", name);
    else if (s->separator)
        spec_fail(s, "the line is indented, so it continues the list of values of axis %s, but it "
                     "holds '=' or ':': start a new key at the beginning of its line", name);
    if (s->err[0])
        return 0;
    /* an inline comment (';' after a space), which inih strips from a key's line only */
    char buf[HDP_INPUT_INI_MAX_LINE + 2];
    snprintf(buf, sizeof buf, "%s", value);
    for (char *c = buf; *c; c++)
        if (*c == ';' && c > buf && (c[-1] == ' ' || c[-1] == '\t')) {
            *c = '\0';
            break;
        }
    return add_values(s, ax, buf);
}

/* Each key once: [sweep]'s, and the model keys of [axes] and [set] together (an axis given
 * twice, or also in [set], would be overridden at every point while results.csv labels the
 * point with its values). */
static int remember_key(sweep_spec *s, const char *section, const char *name)
{
    const char *group = strcmp(section, "sweep") ? "model" : "sweep";
    for (int k = 0; k < s->nkeys; k++) {
        if (strcmp(s->keys[k].key, name) ||
            strcmp(strcmp(s->keys[k].section, "sweep") ? "model" : "sweep", group))
            continue;
        return spec_fail(s, "[%s] %s: the key is given twice (first on line %d, in [%s]): give it "
                            "once (an axis's long list of values may continue on indented lines)",
                            section, name, s->keys[k].line, s->keys[k].section);
    }
    if (s->nkeys == MAX_KEYS) { /* not reached: the sections' own limits come first */
        return spec_fail(s, "too many keys (at most %d)", MAX_KEYS);
    }
    snprintf(s->keys[s->nkeys].section, sizeof s->keys[0].section, "%s", section);
    snprintf(s->keys[s->nkeys].key, sizeof s->keys[0].key, "%s", name);
    s->keys[s->nkeys++].line = s->line;
    return 1;
}

static int on_sweep_key(void *user, const char *section, const char *name, const char *value)
{
    sweep_spec *s = user;
    if (s->err[0])
        return 0;
    if (strcmp(section, "sweep") && strcmp(section, "set") && strcmp(section, "axes"))
        return spec_fail(s, "unknown section [%s]; sections: sweep, axes, set", section);
    /* inih's continuation: an indented line right after a key of the same section */
    if (s->indented && s->nkeys && !strcmp(s->keys[s->nkeys - 1].section, section) &&
        !strcmp(s->keys[s->nkeys - 1].key, name))
        return on_continuation(s, section, name, value);
    if (!remember_key(s, section, name))
        return 0;
    if (!strcmp(section, "sweep"))
        return on_sweep(s, name, value);
    if (!strcmp(section, "set"))
        return on_set(s, name, value);
    return on_axis(s, name, value);
}

/* inih's reader over the text of hdp_input_read, noting the line's number and form */
static char *read_line(char *str, int num, void *stream)
{
    sweep_spec *s = stream;
    char *r = hdp_input_read_line(str, num, &s->lines);
    s->line = s->lines.line;
    s->indented = r && (r[0] == ' ' || r[0] == '\t');
    s->separator = 0; /* '=' or ':' before an inline comment (';' after a space) */
    for (const char *c = r; c && *c && !(*c == ';' && c > r && (c[-1] == ' ' || c[-1] == '\t'));
         c++)
        s->separator |= *c == '=' || *c == ':';
    return r;
}

/* the number of points, refused above MAX_POINTS (the product is checked as it grows) */
static void check_points(sweep_spec *s)
{
    long p = 1;
    for (int a = 0; a < s->naxes; a++) {
        if (s->axes[a].count > MAX_POINTS / p) {
            char sizes[16 * MAX_AXES] = "";
            size_t len = 0;
            for (int b = 0; b < s->naxes; b++)
                len += (size_t)snprintf(sizes + len, sizeof sizes - len, "%s%d", b ? " x " : "",
                                        s->axes[b].count);
            snprintf(s->err, sizeof s->err,
                     "%s: the axes make %s points, more than the %ld a sweep accepts: split it "
                     "into several sweeps",
                     s->path, sizes, MAX_POINTS);
            return;
        }
        p *= s->axes[a].count;
    }
}

/* The sweep file and the base model are regular files (a sweep reads its base model at
 * every point and both again for --resume's digest: a pipe would be empty the second time,
 * a device endless), read whole and checked as model files are (core/input.h). */
int sweep_load_spec(const char *path, sweep_spec *s)
{
    memset(s, 0, sizeof *s);
    if (strlen(path) >= sizeof s->path) {
        fprintf(stderr, "hdpsgd sweep: error: %.60s...: the sweep file's path has %zu "
                        "characters, more than the %zu accepted\n",
                path, strlen(path), sizeof s->path - 1);
        return EXIT_BAD_INPUT;
    }
    snprintf(s->path, sizeof s->path, "%s", path);
    hdp_error e;
    hdp_design_families_parse("all", s->set.schedule_want, &e);
    hdp_rates_families(NULL, s->set.rates_want, &e);
    s->set.knots = 8;
    hdp_input_rules rules = {"sweep file", 0, 1, HDP_INPUT_INI_MAX_LINE,
                             HDP_INPUT_INI_MAX_BYTES};
    char *text;
    hdp_error_clear(&e);
    if (hdp_input_read(path, &rules, &text, &e) != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s%s%s%s\n", strncmp(e.msg, "cannot ", 7) ? "" : path,
                strncmp(e.msg, "cannot ", 7) ? "" : ": ", e.msg,
                strstr(e.msg, "line longer than")
                    ? " (an axis's long list of values may continue on indented lines)"
                    : "");
        return e.status == HDP_ENOMEM ? EXIT_NUMERIC : EXIT_BAD_INPUT;
    }
    s->lines.next = text;
    int rc = ini_parse_stream(read_line, s, on_sweep_key, s);
    free(text);
    /* inih reads on after a line it cannot parse ('[axes' without ']') and returns the first
     * bad line: a key refused after it (read into the section before) is not the cause */
    if (rc > 0 && (!s->err[0] || rc < s->err_line))
        snprintf(s->err, sizeof s->err,
                 "%s:%d: syntax error: expected '[section]', 'key = value' or a comment", path,
                 rc);
    char names[256];
    if (!s->err[0] && s->commands == 0)
        snprintf(s->err, sizeof s->err,
                 "%s: [sweep] commands is missing: name what to run at each point (%s)", path,
                 sweepable_names(names, sizeof names));
    if (!s->err[0] && s->set.refine && !s->set.schedule_want[HDP_FAMILY_PL])
        snprintf(s->err, sizeof s->err,
                 "%s: [sweep] schedule_refine = true refines the pl family, which "
                 "schedule_families leaves out: add pl to it", path);
    if (!s->err[0] && sweep_has(s, "rates") && !s->rates_gammas[0])
        snprintf(s->err, sizeof s->err,
                 "%s: [sweep] rates_gammas = LO:HI:COUNT is missing: the rates command needs its "
                 "gamma grid (for example 0.001:0.1:7)",
                 path);
    for (int a = 0; !s->err[0] && sweep_has(s, "rates") && a < s->naxes; a++)
        if (!strcmp(s->axes[a].key, "data.gamma") || !strcmp(s->axes[a].key, "data.n"))
            snprintf(s->err, sizeof s->err,
                     "%s: axis %s: the rates command sets data.gamma itself (rates_gammas); "
                     "sweep other keys with rates, or run ode/schedule over %s",
                     path, s->axes[a].key, s->axes[a].key);
    if (!s->err[0])
        check_points(s);
    if (s->err[0]) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", s->err);
        sweep_spec_free(s);
        return EXIT_BAD_INPUT;
    }
    if (s->model[0]) {
        hdp_input_rules base = {"model file", 0, 1, HDP_INPUT_INI_MAX_LINE,
                                HDP_INPUT_INI_MAX_BYTES};
        hdp_error_clear(&e);
        if (hdp_input_read(s->model, &base, &text, &e) != HDP_OK) {
            fprintf(stderr, "hdpsgd sweep: error: %s:%d: [sweep] model = %s: %s%s\n", path,
                    s->model_line, s->model, e.msg,
                    strstr(e.msg, "not a regular file")
                        ? " (a sweep reads its base model at every point and again for "
                          "--resume: it must be a regular file)"
                        : "");
            sweep_spec_free(s);
            return e.status == HDP_ENOMEM ? EXIT_NUMERIC : EXIT_BAD_INPUT;
        }
        free(text);
    }
    return 0;
}

long sweep_count_points(const sweep_spec *s)
{
    long p = 1; /* at most MAX_POINTS: check_points */
    for (int a = 0; a < s->naxes; a++) p *= s->axes[a].count;
    return p;
}

/* The axis values of point i (row-major, last axis fastest). */
void sweep_point_values(const sweep_spec *s, long i, int *idx)
{
    for (int a = s->naxes - 1; a >= 0; a--) {
        idx[a] = (int)(i % s->axes[a].count);
        i /= s->axes[a].count;
    }
}

/* " ode sim ..." for the commands of the sweep (progress lines) */
const char *sweep_commands_text(const sweep_spec *s, char *buf, size_t size)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    sweepable(list);
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < s->ncommands && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, " %s", list[s->order[k]]->name);
    return buf;
}

