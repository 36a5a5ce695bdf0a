/*
 * cmd_sweep.c — `hdpsgd sweep SWEEP.ini [--resume] [--dry-run] [-o DIR]`: run commands over
 * the Cartesian product of model-key axes, serially or under Open MPI.
 *
 * SWEEP.ini (inih):
 *   [sweep]  model = base.ini (relative to the sweep file; default: the built-in model)
 *            commands = ode, sim, sde, validate, schedule, rates   (any subset)
 *            schedule_families = all | a list   (schedule; default all)
 *            schedule_knots = K                 (schedule, pl family; default 8)
 *            rates_gammas = LO:HI:COUNT         (rates; required with it)
 *            rates_families = a list            (rates; default output, linear-noise, optimal)
 *            tune_clip = true | false           (schedule and rates; default false)
 *   [axes]   section.key = v1, v2, ...   or   LO:HI:COUNT   or   LO:HI:COUNT:log
 *   [set]    section.key = value   (fixed overrides applied at every point)
 * Points are numbered in row-major order (the last axis varies fastest). Point i
 * writes DIR/points/pNNNNN/{ode,sim,sde}.{csv,json}, validate.json, schedule.{json,tab}
 * and rates.{csv,json} (for the commands run), then its
 * result row DIR/points/pNNNNN/row.csv, atomically and last: a point is done
 * when its row exists. --resume skips the points that are done. At the end,
 * DIR/results.csv is the header plus the rows in point order, so a serial run, a
 * resumed run and an MPI run with the same seeds give the same bytes.
 * Under mpirun (Open MPI; detected from the environment) every rank takes the
 * next point from a shared counter (MPI_Fetch_and_op on rank 0's window:
 * dynamic load balancing); DIR must be on a file system that all ranks see.
 */
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef HDPSGD_HAVE_MPI
#include <mpi.h>
#endif

#include "io/output.h"
#include "cli.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/sweep.h"
#include "hdpsgd/validate.h"

#define MAX_AXES 16
#define MAX_VALUES 1024
#define MAX_FIXED 128

static const char *out_dir;
static int resume, dry_run;
static cli_mc_args mc;

const cli_opt sweep_opts[] = {
    {"output", 'o', OPT_STRING, &out_dir, "DIR", "output folder (default: SWEEP without .ini, plus -out)"},
    {"resume", 0, OPT_FLAG, &resume, NULL, "skip the points already done in DIR"},
    {"dry-run", 0, OPT_FLAG, &dry_run, NULL,
     "check every point's model, list the points and the commands, and stop (writes nothing)"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads per point (default 0 = one per core; per rank under MPI)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* The commands a sweep can run: the command table's entries with a point runner
 * (hdpsgd/sweep.h), in the table's order; bit k of sweep_spec.commands is the k-th. */
#define MAX_SWEEP_COMMANDS 16

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

typedef struct {
    char key[128];           /* section.key */
    int count;
    char *values[MAX_VALUES];
} axis;

typedef struct {
    char path[1024];
    char model[1024];        /* resolved base model path, "" = built-in */
    int commands;
    int naxes;
    axis axes[MAX_AXES];
    int nfixed;
    char *fixed[MAX_FIXED];  /* "section.key=value" */
    /* schedule and rates (THEORY 5): the families, pl knots, clipping, the gamma grid */
    hdp_sweep_settings set;
    char rates_gammas[128];
    int line;                /* current line (inih reader) */
    FILE *f;
    char err[1400];
} sweep_spec;

/* 1 when the sweep runs the command `name` */
static int has(const sweep_spec *s, const char *name)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    int n = sweepable(list);
    for (int k = 0; k < n; k++)
        if (!strcmp(list[k]->name, name))
            return (s->commands >> k) & 1;
    return 0;
}

/* the runners of the sweep's commands, in order */
static int runners_of(const sweep_spec *s, const hdp_sweep_runner **runners)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    int n = sweepable(list), count = 0;
    for (int k = 0; k < n; k++)
        if ((s->commands >> k) & 1)
            runners[count++] = list[k]->sweep;
    return count;
}

static void spec_free(sweep_spec *s)
{
    for (int a = 0; a < s->naxes; a++)
        for (int i = 0; i < s->axes[a].count; i++) free(s->axes[a].values[i]);
    for (int i = 0; i < s->nfixed; i++) free(s->fixed[i]);
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
    double lo, hi;
    int count;
    char scale[8] = "";
    int got = sscanf(text, "%lf:%lf:%d:%7s", &lo, &hi, &count, scale);
    if (got < 3 || !strchr(text, ':'))
        return 0;
    int is_log = got == 4 && !strcmp(scale, "log");
    if ((got == 4 && !is_log) || count < 1 || count > MAX_VALUES || !isfinite(lo) ||
        !isfinite(hi) || (is_log && (lo <= 0 || hi <= 0))) {
        snprintf(why, size,
                 "'%s': expected LO:HI:COUNT or LO:HI:COUNT:log with 1 <= COUNT <= %d (log: LO, "
                 "HI > 0)",
                 text, MAX_VALUES);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        double u = count == 1 ? 0.0 : (double)i / (count - 1);
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
            snprintf(s->err, sizeof s->err, "%s:%d: [sweep] commands: unknown command '%s'; "
                     "accepted: %s", s->path, s->line, t, sweepable_names(names, sizeof names));
            return 0;
        }
        s->commands |= 1 << k;
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
            snprintf(s->err, sizeof s->err, "%s:%d: [sweep] %s: %.300s", s->path, s->line,
                     name, e.msg);
    } else if (!strcmp(name, "schedule_knots")) {
        char *end;
        set->knots = strtol(value, &end, 10);
        if (end == value || *end || set->knots < 2 || set->knots > HDP_DESIGN_MAX_KNOTS)
            snprintf(s->err, sizeof s->err,
                     "%s:%d: [sweep] schedule_knots = '%s': expected an integer from 2 to %d",
                     s->path, s->line, value, HDP_DESIGN_MAX_KNOTS);
    } else if (!strcmp(name, "tune_clip")) {
        if (!strcmp(value, "true") || !strcmp(value, "false"))
            set->tune_clip = !strcmp(value, "true");
        else
            snprintf(s->err, sizeof s->err,
                     "%s:%d: [sweep] tune_clip = '%s': expected true or false", s->path,
                     s->line, value);
    } else if (!strcmp(name, "rates_gammas")) {
        hdp_error why;
        hdp_error_clear(&why);
        snprintf(s->rates_gammas, sizeof s->rates_gammas, "%s", value);
        if (hdp_rates_grid_parse(value, &set->gamma_lo, &set->gamma_hi, &set->gamma_count, &why))
            snprintf(s->err, sizeof s->err, "%s:%d: [sweep] rates_gammas = %.300s",
                     s->path, s->line, why.msg);
    } else {
        snprintf(s->err, sizeof s->err,
                 "%s:%d: unknown key '%s' in [sweep]; accepted keys: model, commands, "
                 "schedule_families, schedule_knots, rates_gammas, rates_families, tune_clip",
                 s->path, s->line, name);
    }
    return !s->err[0];
}

static int on_sweep(sweep_spec *s, const char *name, const char *value)
{
    if (!strcmp(name, "model")) {
        if (value[0] == '/' || !strchr(s->path, '/'))
            snprintf(s->model, sizeof s->model, "%s", value);
        else
            snprintf(s->model, sizeof s->model, "%.*s/%s",
                     (int)(strrchr(s->path, '/') - s->path), s->path, value);
        return 1;
    }
    if (!strcmp(name, "commands"))
        return parse_commands(s, value);
    return on_setting(s, name, value);
}

static int on_set(sweep_spec *s, const char *name, const char *value)
{
    if (s->nfixed == MAX_FIXED) {
        snprintf(s->err, sizeof s->err, "%s:%d: too many [set] keys (at most %d)", s->path,
                 s->line, MAX_FIXED);
        return 0;
    }
    char buf[1200];
    snprintf(buf, sizeof buf, "%s=%s", name, value);
    s->fixed[s->nfixed++] = strdup(buf);
    return 1;
}

/* an axis: v1, v2, ... or LO:HI:COUNT[:log] */
static int on_axis(sweep_spec *s, const char *name, const char *value)
{
    if (s->naxes == MAX_AXES) {
        snprintf(s->err, sizeof s->err, "%s:%d: too many axes (at most %d)", s->path, s->line,
                 MAX_AXES);
        return 0;
    }
    axis *ax = &s->axes[s->naxes];
    memset(ax, 0, sizeof *ax);
    snprintf(ax->key, sizeof ax->key, "%s", name);
    if (!strchr(name, '.')) {
        snprintf(s->err, sizeof s->err,
                 "%s:%d: axis '%s': expected a model key as section.key (e.g. data.gamma)",
                 s->path, s->line, name);
        return 0;
    }
    char why[300];
    int r = expand_range(ax, value, why, sizeof why);
    if (r < 0) {
        snprintf(s->err, sizeof s->err, "%s:%d: axis %s: %s", s->path, s->line, name, why);
        return 0;
    }
    if (r == 0) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", value);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            char *t = trim(tok);
            if (!*t || ax->count == MAX_VALUES) {
                snprintf(s->err, sizeof s->err, "%s:%d: axis %s: empty value or more than %d values",
                         s->path, s->line, name, MAX_VALUES);
                return 0;
            }
            ax->values[ax->count++] = strdup(t);
        }
    }
    if (ax->count == 0) {
        snprintf(s->err, sizeof s->err, "%s:%d: axis %s has no values", s->path, s->line, name);
        return 0;
    }
    s->naxes++;
    return 1;
}

static int on_sweep_key(void *user, const char *section, const char *name, const char *value)
{
    sweep_spec *s = user;
    if (s->err[0])
        return 0;
    if (!strcmp(section, "sweep"))
        return on_sweep(s, name, value);
    if (!strcmp(section, "set"))
        return on_set(s, name, value);
    if (!strcmp(section, "axes"))
        return on_axis(s, name, value);
    snprintf(s->err, sizeof s->err, "%s:%d: unknown section [%s]; sections: sweep, axes, set",
             s->path, s->line, section);
    return 0;
}

static char *read_line(char *str, int num, void *stream)
{
    sweep_spec *s = stream;
    char *r = fgets(str, num, s->f);
    if (r) s->line++;
    return r;
}

static int load_spec(const char *path, sweep_spec *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    hdp_error e;
    hdp_design_families_parse("all", s->set.schedule_want, &e);
    hdp_rates_families(NULL, s->set.rates_want, &e);
    s->set.knots = 8;
    s->f = fopen(path, "r");
    if (!s->f) {
        fprintf(stderr, "hdpsgd sweep: error: %s: cannot open the sweep file: %s\n", path,
                strerror(errno));
        return EXIT_BAD_INPUT;
    }
    int rc = ini_parse_stream(read_line, s, on_sweep_key, s);
    fclose(s->f);
    if (!s->err[0] && rc > 0)
        snprintf(s->err, sizeof s->err, "%s:%d: syntax error", path, rc);
    char names[256];
    if (!s->err[0] && s->commands == 0)
        snprintf(s->err, sizeof s->err,
                 "%s: [sweep] commands is missing: name what to run at each point (%s)", path,
                 sweepable_names(names, sizeof names));
    if (!s->err[0] && has(s, "rates") && !s->rates_gammas[0])
        snprintf(s->err, sizeof s->err,
                 "%s: [sweep] rates_gammas = LO:HI:COUNT is missing: the rates command needs its "
                 "gamma grid (for example 0.001:0.1:7)",
                 path);
    for (int a = 0; !s->err[0] && has(s, "rates") && a < s->naxes; a++)
        if (!strcmp(s->axes[a].key, "data.gamma") || !strcmp(s->axes[a].key, "data.n"))
            snprintf(s->err, sizeof s->err,
                     "%s: axis %s: the rates command sets data.gamma itself (rates_gammas); "
                     "sweep other keys with rates, or run ode/schedule over %s",
                     path, s->axes[a].key, s->axes[a].key);
    if (s->err[0]) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", s->err);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

static long count_points(const sweep_spec *s)
{
    long p = 1;
    for (int a = 0; a < s->naxes; a++) p *= s->axes[a].count;
    return p;
}

/* The axis values of point i (row-major, last axis fastest). */
static void point_values(const sweep_spec *s, long i, int *idx)
{
    for (int a = s->naxes - 1; a >= 0; a--) {
        idx[a] = (int)(i % s->axes[a].count);
        i /= s->axes[a].count;
    }
}

/* " ode sim ..." for the commands of the sweep (progress lines) */
static const char *commands_text(const sweep_spec *s, char *buf, size_t size)
{
    const cli_command *list[MAX_SWEEP_COMMANDS];
    int n = sweepable(list);
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < n && len < size; k++)
        if ((s->commands >> k) & 1)
            len += (size_t)snprintf(buf + len, size - len, " %s", list[k]->name);
    return buf;
}

/* The base model and overrides of point i ([set], then the axes; bufs hold the text). */
static void point_common(const sweep_spec *s, long i, cli_common *c, char bufs[][1200])
{
    memset(c, 0, sizeof *c);
    c->model_path = s->model[0] ? s->model : NULL;
    for (int k = 0; k < s->nfixed; k++) c->sets[c->nsets++] = s->fixed[k];
    int idx[MAX_AXES];
    point_values(s, i, idx);
    for (int a = 0; a < s->naxes; a++) {
        snprintf(bufs[a], 1200, "%s=%s", s->axes[a].key, s->axes[a].values[idx[a]]);
        c->sets[c->nsets++] = bufs[a];
    }
}

/* Build the model of point i (with rates: also the model at every gamma of its grid, when
 * check_rates); prints the error (naming the point) on failure. */
static int point_model(const sweep_spec *s, long i, hdp_model *m, char bufs[][1200],
                       int check_rates)
{
    cli_common c;
    point_common(s, i, &c, bufs);
    int rc = cli_load_model(&c, m);
    if (!rc && check_rates && has(s, "rates")) {
        cli_rates r;
        rc = cli_rates_load("sweep", &c, s->set.gamma_lo, s->set.gamma_hi, s->set.gamma_count, &r);
        if (rc) hdp_model_free(m);
        else cli_rates_free(&r);
    }
    if (rc) {
        fprintf(stderr, "hdpsgd sweep: error: at point %ld (", i);
        for (int a = 0; a < s->naxes; a++)
            fprintf(stderr, "%s%s", a ? ", " : "", bufs[a]);
        fprintf(stderr, ") of %s\n", s->path);
    }
    return rc;
}

static int mkdir_p(const char *path)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(buf, 0777) != 0 && errno != EEXIST) ? -1 : 0;
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- what defines the points, for --resume: FNV-1a 64 digests in DIR/sweep.digest ---- */

#define DIGEST_FILES 64
typedef struct {
    unsigned long long sweep, base, points;  /* the sweep file, the base model, the models */
    int nfiles;                              /* data files the models name */
    char file[DIGEST_FILES][1024];
    unsigned long long file_digest[DIGEST_FILES];
} sweep_digest;

static unsigned long long fnv1a(unsigned long long h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}
#define FNV_START 14695981039346656037ULL

/* digest of a file's bytes (0 when it cannot be read) */
static unsigned long long digest_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned long long h = FNV_START;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = fnv1a(h, buf, n);
    fclose(f);
    return h;
}

/* add point i's resolved model (as a model file, every key) and the files it names */
static void digest_point(sweep_digest *d, const hdp_model *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        hdp_model_write_ini(m, mem);
        fclose(mem);
        d->points = fnv1a(d->points, text, len);
        free(text);
    }
    const char *named[2] = {m->spectrum == HDP_SPECTRUM_FILE ? m->spectrum_file : NULL,
                            m->sched == HDP_SCHED_TABLE ? m->sched_file : NULL};
    for (int k = 0; k < 2; k++) {
        if (!named[k] || !named[k][0])
            continue;
        int seen = 0;
        for (int j = 0; j < d->nfiles && !seen; j++)
            seen = !strcmp(d->file[j], named[k]);
        if (!seen && d->nfiles < DIGEST_FILES) {
            snprintf(d->file[d->nfiles], sizeof d->file[0], "%s", named[k]);
            d->file_digest[d->nfiles++] = digest_file(named[k]);
        }
    }
}

static int write_digest(const char *dir, const sweep_spec *s, const sweep_digest *d)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/sweep.digest", dir);
    hdp_outfile o;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_out_open(&o, path, &err) != HDP_OK)
        return cli_fail("sweep", &err);
    fprintf(o.f, "# hdpsgd sweep: FNV-1a 64 digests of what defines the points; --resume "
                 "refuses to continue when one differs\n");
    fprintf(o.f, "sweep_file %016llx %s\n", d->sweep, s->path);
    fprintf(o.f, "base_model %016llx %s\n", d->base, s->model[0] ? s->model : "(built-in)");
    fprintf(o.f, "points %016llx\n", d->points);
    for (int j = 0; j < d->nfiles; j++)
        fprintf(o.f, "file %016llx %s\n", d->file_digest[j], d->file[j]);
    return hdp_out_commit(&o, &err) == HDP_OK ? 0 : cli_fail("sweep", &err);
}

/* 0 when DIR/sweep.digest matches d (or is missing: a warning), else exit 2 saying what
 * changed */
static int check_digest(const char *dir, const sweep_spec *s, const sweep_digest *d)
{
    char path[1300], line[1400];
    snprintf(path, sizeof path, "%s/sweep.digest", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hdpsgd sweep: warning: %s has no sweep.digest (an older hdpsgd made "
                        "it): cannot check that the sweep is unchanged\n", dir);
        return 0;
    }
    char now[1400 * (DIGEST_FILES + 4)] = "";
    size_t used = 0;
    used += (size_t)snprintf(now + used, sizeof now - used, "sweep_file %016llx %s\n", d->sweep,
                             s->path);
    used += (size_t)snprintf(now + used, sizeof now - used, "base_model %016llx %s\n", d->base,
                             s->model[0] ? s->model : "(built-in)");
    used += (size_t)snprintf(now + used, sizeof now - used, "points %016llx\n", d->points);
    for (int j = 0; j < d->nfiles; j++)
        used += (size_t)snprintf(now + used, sizeof now - used, "file %016llx %s\n",
                                 d->file_digest[j], d->file[j]);
    /* the most specific change first: a named file, the sweep file, the base model, the
     * models (which every other change also changes) */
    static const char *const order[] = {"file", "sweep_file", "base_model", "points"};
    char changed[4][1300] = {"", "", "", ""};
    int any[4] = {0, 0, 0, 0};
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strstr(now, line))
            continue;
        char what[32] = "", name[1300] = "";
        sscanf(line, "%31s %*s %1299[^\n]", what, name);
        for (int k = 0; k < 4; k++)
            if (!strcmp(what, order[k]) && !any[k]) {
                any[k] = 1;
                snprintf(changed[k], sizeof changed[k], "%s", name);
            }
    }
    int rc = 0;
    static const char *const which[] = {"a file the models name", "the sweep file",
                                        "the base model",
                                        "the points' models (an axis, a [set] key or a default)"};
    for (int k = 0; k < 4 && !rc; k++)
        if (any[k]) {
            fprintf(stderr,
                    "hdpsgd sweep: error: --resume: %s changed since %s was started%s%s: its "
                    "results would mix old and new settings; rerun into a new -o DIR\n",
                    which[k], dir, changed[k][0] ? " — " : "", changed[k]);
            rc = EXIT_BAD_INPUT;
        }
    fclose(f);
    if (!rc) { /* a file named now but not then, or points that differ in number */
        int lines = 0;
        f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            lines += line[0] != '#';
        if (f) fclose(f);
        if (lines != 3 + d->nfiles) {
            fprintf(stderr, "hdpsgd sweep: error: --resume: the files the models name changed "
                            "since %s was started; rerun into a new -o DIR\n", dir);
            rc = EXIT_BAD_INPUT;
        }
    }
    return rc;
}

/* Write pdir/row.csv (the point's row), atomically. */
static hdp_status write_row(const char *pdir, const char *row, hdp_error *err)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/row.csv", pdir);
    hdp_outset out;
    hdp_outset_init(&out, err);
    FILE *f = hdp_outset_add(&out, path);
    if (f)
        fputs(row, f);
    return hdp_outset_commit(&out);
}

static void header(const sweep_spec *s, FILE *f)
{
    fputs("point", f);
    for (int a = 0; a < s->naxes; a++) fprintf(f, ",%s", s->axes[a].key);
    const hdp_sweep_runner *runners[MAX_SWEEP_COMMANDS];
    int n = runners_of(s, runners);
    char buf[8192];
    hdp_sweep_header(runners, n, &s->set, buf, sizeof buf);
    fputs(buf, f);
}

/* the files of runner r at point p, by its command's sweep_write (user: the point's folder) */
static hdp_status write_point_files(const hdp_sweep_runner *r, const hdp_sweep_point *p,
                                    void *user, hdp_error *err)
{
    for (const cli_command *c = hdp_commands; c->name; c++)
        if (c->sweep == r && c->sweep_write)
            return c->sweep_write(user, p, err);
    return HDP_OK;
}

/* Run point i and write its files; the row last. Returns 0, -1 when the point
 * was done before (--resume), 4 when a computation failed (the row then says
 * so), or 3 on an output error. */
static int run_point(const sweep_spec *s, long i, const char *dir, int threads)
{
    char pdir[1200], path[1300];
    snprintf(pdir, sizeof pdir, "%s/points/p%05ld", dir, i);
    snprintf(path, sizeof path, "%s/row.csv", pdir);
    if (resume && file_exists(path)) return -1; /* done in an earlier run */
    if (mkdir_p(pdir) != 0) {
        fprintf(stderr, "hdpsgd sweep: error: %s: cannot create: %s\n", pdir, strerror(errno));
        return EXIT_IO;
    }
    char bufs[MAX_AXES][1200];
    hdp_model m;
    if (point_model(s, i, &m, bufs, 0)) return EXIT_BAD_INPUT;
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.threads = threads;
    cli_rates gm; /* rates: the model at every gamma */
    memset(&gm, 0, sizeof gm);
    if (has(s, "rates")) {
        cli_common pc;
        point_common(s, i, &pc, bufs);
        if (cli_rates_load("sweep", &pc, s->set.gamma_lo, s->set.gamma_hi, s->set.gamma_count,
                           &gm)) {
            hdp_model_free(&m);
            return EXIT_BAD_INPUT; /* checked before the sweep started: not reached */
        }
    }
    char prefix[4096];
    int idx[MAX_AXES];
    point_values(s, i, idx);
    size_t len = (size_t)snprintf(prefix, sizeof prefix, "%ld", i);
    for (int a = 0; a < s->naxes && len < sizeof prefix; a++)
        len += (size_t)snprintf(prefix + len, sizeof prefix - len, ",%s", s->axes[a].values[idx[a]]);
    hdp_sweep_point pt;
    memset(&pt, 0, sizeof pt);
    pt.m = &m;
    pt.opt = &opt;
    pt.set = &s->set;
    pt.gamma_models = gm.models;
    pt.gamma_count = gm.count;
    const hdp_sweep_runner *runners[MAX_SWEEP_COMMANDS];
    int n = runners_of(s, runners);
    static hdp_sweep_outcome out; /* large; one point at a time */
    hdp_error err;
    hdp_error_clear(&err);
    hdp_sweep_point_run(runners, n, &pt, prefix, write_point_files, pdir, &out, &err);
    cli_rates_free(&gm);
    hdp_model_free(&m);
    if (out.io != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", out.io_err.msg);
        return EXIT_IO;
    }
    if (write_row(pdir, out.row, &err) != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", err.msg);
        return EXIT_IO;
    }
    if (out.st != HDP_OK)
        fprintf(stderr, "hdpsgd sweep: point %ld failed: %s\n", i, out.err.msg);
    return out.st == HDP_OK ? 0 : EXIT_NUMERIC;
}

/* Concatenate the rows into DIR/results.csv; returns the number of failed points or -1. */
static int assemble(const sweep_spec *s, const char *dir, long npoints)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    hdp_outfile o;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_out_open(&o, path, &err) != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", err.msg);
        return -1;
    }
    header(s, o.f);
    int failed = 0;
    for (long i = 0; i < npoints; i++) {
        char rp[1300], line[8192];
        snprintf(rp, sizeof rp, "%s/points/p%05ld/row.csv", dir, i);
        FILE *f = fopen(rp, "r");
        if (!f || !fgets(line, sizeof line, f)) {
            fprintf(stderr, "hdpsgd sweep: error: %s is missing: point %ld did not finish\n", rp, i);
            if (f) fclose(f);
            hdp_out_abort(&o);
            return -1;
        }
        fclose(f);
        if (strstr(line, ",failed: ")) failed++;
        fputs(line, o.f);
    }
    if (hdp_out_commit(&o, &err) != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", err.msg);
        hdp_out_abort(&o);
        return -1;
    }
    return failed;
}

static int under_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

int cmd_sweep(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("sweep");
    cli_common common;
    out_dir = NULL;
    resume = 0;
    cli_mc_args_reset(&mc);
    int rc = cli_parse(cmd, argc, argv, &common);
    if (rc) return rc;
    if (common.help) {
        cli_print_help(cmd, stdout);
        return 0;
    }
    if (common.npos != 1 || common.nsets) {
        fprintf(stderr, "hdpsgd sweep: error: give exactly one SWEEP.ini (put overrides in its [set] "
                        "section)\nUsage: hdpsgd %s\n", cmd->usage);
        return EXIT_BAD_INPUT;
    }
    if ((rc = cli_mc_args_apply("sweep", &mc, &common))) return rc;
    int threads = cli_mc_threads(&mc);
    static sweep_spec spec;
    if ((rc = load_spec(common.pos[0], &spec))) return rc;
    char dir[1024];
    if (out_dir) {
        snprintf(dir, sizeof dir, "%s", out_dir);
    } else {
        snprintf(dir, sizeof dir, "%s", common.pos[0]);
        char *dot = strrchr(dir, '.'), *slash = strrchr(dir, '/');
        if (dot && (!slash || dot > slash)) *dot = '\0';
        strncat(dir, "-out", sizeof dir - strlen(dir) - 1);
    }
    long npoints = count_points(&spec);

    int rank = 0, size = 1, mpi = 0;
#ifdef HDPSGD_HAVE_MPI
    if (under_mpi()) {
        MPI_Init(NULL, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        mpi = 1;
    }
#else
    if (under_mpi())
        fprintf(stderr, "hdpsgd sweep: warning: started under mpirun, but this build has no MPI "
                        "support (install libopenmpi-dev and rebuild): every rank runs the whole "
                        "sweep\n");
#endif
    /* check every point before computing anything (bad input: exit 2, no files) */
    rc = 0;
    char points_dir[1100];
    snprintf(points_dir, sizeof points_dir, "%s/points", dir);
    char cmds[96];
    sweep_digest digest;
    memset(&digest, 0, sizeof digest);
    digest.points = FNV_START;
    if (rank == 0) {
        digest.sweep = digest_file(spec.path);
        digest.base = spec.model[0] ? digest_file(spec.model) : 0;
        for (long i = 0; i < npoints && !rc; i++) {
            char bufs[MAX_AXES][1200];
            hdp_model m;
            rc = point_model(&spec, i, &m, bufs, 1);
            if (!rc) {
                digest_point(&digest, &m);
                hdp_model_free(&m);
            }
        }
        if (!rc && dry_run) {
            /* the grid as it would run: one line per point, then stop (exit 0, no files) */
            for (long i = 0; i < npoints; i++) {
                int idx[MAX_AXES];
                point_values(&spec, i, idx);
                printf("%ld", i);
                for (int a = 0; a < spec.naxes; a++)
                    printf(" %s=%s", spec.axes[a].key, spec.axes[a].values[idx[a]]);
                putchar('\n');
            }
            fprintf(stderr, "hdpsgd sweep: dry run: %ld points x {%s} checked; nothing written "
                            "(would write %s)\n", npoints, commands_text(&spec, cmds, sizeof cmds),
                    dir);
            rc = -1;
        }
        if (!rc && !resume && file_exists(points_dir)) {
            fprintf(stderr, "hdpsgd sweep: error: %s already holds a sweep: use --resume to "
                            "continue it, or another -o DIR\n", dir);
            rc = EXIT_BAD_INPUT;
        }
        int fresh = !file_exists(points_dir);
        if (!rc && resume && !fresh)
            rc = check_digest(dir, &spec, &digest);
        if (!rc && mkdir_p(points_dir) != 0) {
            fprintf(stderr, "hdpsgd sweep: error: %s: cannot create: %s\n", points_dir,
                    strerror(errno));
            rc = EXIT_BAD_INPUT;
        }
        if (!rc && fresh)
            rc = write_digest(dir, &spec, &digest);
        if (!rc)
            fprintf(stderr, "hdpsgd sweep: %ld points x {%s} -> %s%s\n", npoints,
                    commands_text(&spec, cmds, sizeof cmds), dir, mpi ? " (MPI)" : "");
    }
#ifdef HDPSGD_HAVE_MPI
    if (mpi) MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    if (rc) {
#ifdef HDPSGD_HAVE_MPI
        if (mpi) MPI_Finalize();
#endif
        spec_free(&spec);
        return rc < 0 ? 0 : rc; /* -1: the dry run ended */
    }
    int worst = 0;
    long done = 0;
#ifdef HDPSGD_HAVE_MPI
    MPI_Win win = MPI_WIN_NULL;
    long *counter = NULL;
    if (mpi) {
        MPI_Win_allocate(rank == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &counter, &win);
        if (rank == 0) *counter = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
    }
#endif
    for (;;) {
        long i;
#ifdef HDPSGD_HAVE_MPI
        if (mpi) {
            long one = 1;
            MPI_Fetch_and_op(&one, &i, MPI_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
        } else
#endif
            i = done;
        if (i >= npoints) break;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int prc = run_point(&spec, i, dir, threads);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        done++;
        if (prc < 0)
            continue;
        if (prc == EXIT_IO || prc == EXIT_BAD_INPUT) {
            worst = prc;
            break;
        }
        if (prc > worst) worst = prc;
        fprintf(stderr, "hdpsgd sweep: [rank %d] point %ld of %ld done (%.2f s)\n", rank, i + 1,
                npoints,
                (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    }
#ifdef HDPSGD_HAVE_MPI
    if (mpi) {
        MPI_Win_unlock_all(win);
        MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Win_free(&win);
    }
#endif
    int failed = 0;
    if (rank == 0 && worst != EXIT_IO && worst != EXIT_BAD_INPUT) {
        failed = assemble(&spec, dir, npoints);
        if (failed < 0) worst = EXIT_IO;
        else fprintf(stderr, "hdpsgd sweep: %ld points, %d failed -> %s/results.csv\n", npoints,
                     failed, dir);
    }
#ifdef HDPSGD_HAVE_MPI
    if (mpi) MPI_Finalize();
#endif
    spec_free(&spec);
    return worst;
}
