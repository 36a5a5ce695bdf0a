/* common.c — option parsing, model loading and error reporting shared by the commands. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/output.h"
#include "plot.h"
#include "sim/threads.h"
#include "cli.h"
#include "hdpsgd/schedule.h"

/* ---- termination signals: no temporary output file outlives the process ---- */

static const int handled_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
static struct sigaction default_action; /* SIG_DFL, prepared outside the handler */

static void on_termination_signal(int sig)
{
    /* only async-signal-safe calls: unlink (in hdp_out_abort_all_signal), sigaction, raise */
    hdp_out_abort_all_signal();
    sigaction(sig, &default_action, NULL);
    raise(sig); /* delivered when the handler returns (sig is blocked in it): the default
                   action, so that the parent sees death by the signal (status 128 + sig) */
}

/* cli_cancel_on_signal: the first SIGINT/SIGTERM sets the flag; a second one terminates */
static volatile int *cancel_target;
static volatile sig_atomic_t cancel_signal;

static void on_cancel_signal(int sig)
{
    if (cancel_signal) { /* the second: as without the cancel mode */
        on_termination_signal(sig);
        return;
    }
    cancel_signal = sig;
    *cancel_target = 1;
}

#define NHANDLED (sizeof handled_signals / sizeof handled_signals[0])

/* handler on the signals sigs[n], every handled signal blocked while it runs (one handler at a
 * time); a signal ignored by whoever started us (nohup, SIGPIPE ignored) stays ignored */
static void handle(void (*handler)(int), const int *sigs, size_t n)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NHANDLED; i++)
        sigaddset(&sa.sa_mask, handled_signals[i]);
    for (size_t i = 0; i < n; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

void cli_cancel_on_signal(volatile int *flag)
{
    cancel_target = flag;
    cancel_signal = 0;
    static const int cancelling[] = {SIGINT, SIGTERM};
    handle(on_cancel_signal, cancelling, 2);
}

int cli_cancel_signal(void) { return (int)cancel_signal; }

void cli_test_stop(const char *point)
{
    const char *at = getenv("HDPSGD_TEST_STOP");
    if (at && strcmp(at, point) == 0)
        raise(SIGSTOP);
}

void cli_install_signal_handlers(void)
{
    /* SIGXFSZ (a file-size limit, ulimit -f): ignored, so that the write fails with EFBIG,
     * which the output layer reports (exit 3) after removing its temporary files; by
     * default the signal would kill the process and leave them behind */
    signal(SIGXFSZ, SIG_IGN);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    handle(on_termination_signal, handled_signals, NHANDLED);
}

static int usage_error(const cli_command *cmd, const char *fmt, const char *arg)
{
    char usage[2048];
    cli_usage(cmd, usage, sizeof usage);
    fprintf(stderr, "hdpsgd %s: ", cmd->name);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nUsage: hdpsgd %s   (hdpsgd help %s for more)\n", usage, cmd->name);
    return EXIT_BAD_INPUT;
}

static int set_option(const cli_command *cmd, const cli_opt *o, const char *value)
{
    char *end;
    switch (o->kind) {
    case OPT_FLAG: *(int *)o->dst = 1; return 0;
    case OPT_STRING:
    case OPT_OUTPUT:
    case OPT_FIGURE:
    case OPT_OUTPUT_PREFIX: *(const char **)o->dst = value; return 0;
    case OPT_STRINGS: {
        cli_strings *l = o->dst;
        if (l->n == CLI_MAX_STRINGS)
            return usage_error(cmd, "too many --%s options (at most 64)", o->name);
        l->v[l->n++] = value;
        return 0;
    }
    case OPT_LONG: { /* as a model key's integer: 1000 or 1e3, decimal, whole, up to 9e15 */
        errno = 0;
        double v = strtod(value, &end);
        if (*value == '\0' || *end || errno || strpbrk(value, "xXiInN") || v != floor(v) ||
            fabs(v) > 9.0e15)
            return usage_error(cmd, "--%s expects an integer (such as 1000 or 1e3)", o->name);
        *(long *)o->dst = (long)v;
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

/* the option of the table that the argument a names (--name, --name=VALUE with *inline_val
 * set to VALUE, or -x), or NULL */
static const cli_opt *find_option(const cli_opt *table, const char *a, const char **inline_val)
{
    for (const cli_opt *o = table; o && o->name; o++) {
        size_t len = strlen(o->name);
        if (a[1] == '-' && !strncmp(a + 2, o->name, len) &&
            (a[2 + len] == '\0' || a[2 + len] == '=')) {
            if (a[2 + len] == '=') *inline_val = a + 3 + len;
            return o;
        }
        if (a[1] != '-' && o->short_name && a[1] == o->short_name && a[2] == '\0')
            return o;
    }
    return NULL;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_common *common)
{
    memset(common, 0, sizeof *common);
    cli_figure_opts_reset();
    const cli_opt *figure_opts = cli_figure_opts_for(cmd);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            common->help = 1;
            continue;
        }
        if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
            if (!cmd->sets)
                return usage_error(cmd, strcmp(cmd->name, "sweep")
                                            ? "--set does not apply to %s"
                                            : "--set does not apply to %s: put overrides in "
                                              "the sweep file's [set] section",
                                   cmd->name);
            const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                return usage_error(cmd, "%s needs SECTION.KEY=VALUE", "--set");
            if (common->nsets == MAX_SETS)
                return usage_error(cmd, "too many --set options (at most %s)", "256");
            common->sets[common->nsets++] = v;
            continue;
        }
        if (a[0] == '-' && a[1] != '\0') {
            const char *inline_val = NULL;
            const cli_opt *found = find_option(cmd->opts, a, &inline_val);
            if (!found)
                found = find_option(figure_opts, a, &inline_val);
            if (!found) {
                const char *near = cli_nearest_option(cmd, a);
                if (near) {
                    char msg[160];
                    snprintf(msg, sizeof msg, "unknown option '%%s' (did you mean --%s?)", near);
                    return usage_error(cmd, msg, a);
                }
                return usage_error(cmd, "unknown option '%s'", a);
            }
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
        if (!cmd->args || !cmd->args[0].name)
            return usage_error(cmd, "takes no arguments ('%s')", a);
        if (common->npos > 0 && !cmd->many_files)
            return usage_error(cmd, "more than one model file given ('%s')", a);
        if (common->npos == MAX_POSITIONAL)
            return usage_error(cmd, "too many files (at most 64): '%s'", a);
        common->pos[common->npos++] = a;
        common->model_path = common->pos[0];
    }
    if (!common->help && figure_opts) {
        int rc = cli_figure_opts_apply(cmd->name);
        if (rc)
            return rc;
        const char *given = cli_figure_opts_given();
        for (const cli_opt *o = cmd->opts; given && o && o->name; o++)
            if (o->kind == OPT_FIGURE && !*(const char **)o->dst)
                return cli_bad(cmd->name, "--%s styles the figure, and no --%s was given: add "
                               "--%s FIG, or leave --%s out (nothing was run)",
                               given, o->name, o->name, given);
    }
    for (const cli_opt *o = cmd->opts; o && o->name && !common->help; o++) {
        if (!CLI_IS_OUTPUT(o->kind))
            continue;
        int rc = cli_check_output(cmd, o, *(const char **)o->dst);
        if (rc)
            return rc;
        if (o->kind == OPT_FIGURE && *(const char **)o->dst && !hdp_plot_gnuplot()) {
            /* the figure is one of the outputs: none is written without it (exit 3) */
            return cli_error(EXIT_IO, cmd->name, "--%s %s: gnuplot not found (install it: apt-get "
                             "install gnuplot-nox, or set HDPSGD_GNUPLOT; without --%s the other "
                             "outputs are written alone); nothing was run", o->name,
                             *(const char **)o->dst, o->name);
        }
    }
    return common->help ? 0 : cli_check_distinct(cmd, common);
}

int cli_start(const cli_command *cmd, int argc, char **argv, cli_common *common)
{
    int rc = cli_parse(cmd, argc, argv, common);
    if (rc)
        return rc;
    if (common->help) {
        cli_print_help(cmd, stdout);
        return -1;
    }
    return 0;
}

int cli_start_mc(const cli_command *cmd, int argc, char **argv, cli_common *common,
                 cli_mc_args *mc)
{
    cli_mc_args_reset(mc);
    return cli_start(cmd, argc, argv, common);
}

int cli_fail(const char *cmd, const hdp_error *err)
{
    fprintf(stderr, "hdpsgd %s: error: %s\n", cmd, err->msg);
    switch (err->status) {
    case HDP_OK: return 0;
    case HDP_EINPUT: return EXIT_BAD_INPUT;
    case HDP_EIO: return EXIT_IO;
    case HDP_ENUMERIC:
    case HDP_ENOMEM:
    case HDP_ECANCELLED: return EXIT_NUMERIC;
    }
    return EXIT_NUMERIC;
}

int cli_error(int status, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hdpsgd %s: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
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
    const cli_with *w = NULL;
    for (int i = 0; st == HDP_OK && i < common->nwiths; i++) {
        hdp_model next;
        w = &common->withs[i];
        st = hdp_model_with(m, w->key, w->text ? w->text : w->num, &next, &err);
        hdp_model_free(m);
        *m = next; /* moved (empty on failure) */
    }
    if (st != HDP_OK) {
        /* an option's key: "--runs 0: [sim] runs = 0 is out of range ..." */
        const char *msg = err.msg;
        if (w && !strncmp(msg, "--set: ", 7))
            msg += 7;
        if (w)
            fprintf(stderr, "hdpsgd: error: %s %s: %s\n", w->opt, w->text ? w->text : w->shown,
                    msg);
        else
            fprintf(stderr, "hdpsgd: error: %s\n", msg);
        hdp_model_free(m);
        return st == HDP_EINPUT ? EXIT_BAD_INPUT : EXIT_NUMERIC;
    }
    if (cli_check_model_inputs(m)) {
        hdp_model_free(m);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

int cli_warn_delta(const char *cmd, const hdp_model *m)
{
    if (isinf(m->rho) || m->delta * (double)m->n < 1)
        return 0;
    fprintf(stderr, "hdpsgd %s: warning: privacy.delta = %.3g is not below 1/n = %.3g: a guarantee "
                    "at such a delta allows publishing a row outright; use delta << 1/n\n",
            cmd, m->delta, 1.0 / (double)m->n);
    return 1;
}

int cli_warn_stability(const char *cmd, const hdp_model *m)
{
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    double sup = hdp_sched_eta_sup(&s);
    long K = hdp_sched_batch_count(m->n, m->batch);
    int coarse = m->sampling == HDP_SAMPLING_ONE_PASS && m->batch > 1 && K < 32 &&
                 strcmp(cmd, "sim") && strcmp(cmd, "sde"); /* the ODE's commands (issue 33) */
    if (coarse)
        fprintf(stderr,
                "hdpsgd %s: warning: sgd.batch = %ld makes %ld steps of the n = %ld rows: the "
                "batched ODE is an expansion in B/n, validated down to 32 steps "
                "(docs/theory.md §3.11); expect it to be off\n",
                cmd, m->batch, K, m->n);
    if (sup < 2.0 / m->gamma)
        return coarse;
    fprintf(stderr,
            "hdpsgd %s: warning: sup eta~ = %g >= 2/gamma = %g: past the stability limit of "
            "docs/theory.md §3; the risk may blow up\n",
            cmd, sup, 2.0 / m->gamma);
    return 1;
}

void cli_mc_args_reset(cli_mc_args *a)
{
    a->runs = a->threads = CLI_NOT_GIVEN;
    a->seed = NULL;
    a->step = NAN;
}

/* The next free cli_with of common, its option and key set; NULL after the message. */
static cli_with *add_with(const char *cmd, cli_common *common, const char *opt, const char *key)
{
    if (common->nwiths == MAX_WITHS) {
        fprintf(stderr, "hdpsgd %s: error: %s: too many options that set model keys\n", cmd, opt);
        return NULL;
    }
    cli_with *w = &common->withs[common->nwiths++];
    memset(w, 0, sizeof *w);
    w->opt = opt;
    w->key = key;
    return w;
}

int cli_add_with_text(const char *cmd, cli_common *common, const char *opt, const char *key,
                      const char *text)
{
    cli_with *w = add_with(cmd, common, opt, key);
    if (!w)
        return EXIT_BAD_INPUT;
    w->text = text;
    return 0;
}

/* a number: its value's text (num) and the text its message shows (shown) */
static int add_with_number(const char *cmd, cli_common *common, const char *opt, const char *key,
                           const char *num, const char *shown)
{
    cli_with *w = add_with(cmd, common, opt, key);
    if (!w)
        return EXIT_BAD_INPUT;
    snprintf(w->num, sizeof w->num, "%s", num);
    snprintf(w->shown, sizeof w->shown, "%s", shown);
    return 0;
}

int cli_add_with_long(const char *cmd, cli_common *common, const char *opt, const char *key,
                      long v)
{
    char num[40];
    snprintf(num, sizeof num, "%ld", v);
    return add_with_number(cmd, common, opt, key, num, num);
}

int cli_add_with_double(const char *cmd, cli_common *common, const char *opt, const char *key,
                        double v)
{
    char num[40], shown[40];
    snprintf(num, sizeof num, "%.17g", v); /* at most 24 characters */
    snprintf(shown, sizeof shown, "%g", v);
    return add_with_number(cmd, common, opt, key, num, shown);
}

int cli_mc_args_apply(const char *cmd, cli_mc_args *a, cli_common *common)
{
    int rc = cli_threads_check(cmd, a->threads);
    if (rc)
        return rc;
    if (a->runs != CLI_NOT_GIVEN)
        rc = cli_add_with_long(cmd, common, "--runs", "sim.runs", a->runs);
    if (!rc && a->seed)
        rc = cli_add_with_text(cmd, common, "--seed", "sim.seed", a->seed);
    if (!rc && !isnan(a->step))
        rc = cli_add_with_double(cmd, common, "--step", "sde.step", a->step);
    return rc;
}

void cli_ode_args_reset(cli_ode_args *a)
{
    a->max_steps = CLI_NOT_GIVEN;
    a->rtol = a->atol = NAN;
}

int cli_ode_args_apply(const char *cmd, cli_ode_args *a, cli_common *common)
{
    int rc = 0;
    if (a->max_steps != CLI_NOT_GIVEN)
        rc = cli_add_with_long(cmd, common, "--max-steps", "ode.max_steps", a->max_steps);
    if (!rc && !isnan(a->rtol))
        rc = cli_add_with_double(cmd, common, "--rtol", "ode.rtol", a->rtol);
    if (!rc && !isnan(a->atol))
        rc = cli_add_with_double(cmd, common, "--atol", "ode.atol", a->atol);
    return rc;
}

int cli_threads_check(const char *cmd, long threads)
{
    if (threads != CLI_NOT_GIVEN && (threads < 0 || threads > HDP_THREADS_MAX))
        return cli_bad(cmd, "--threads %ld: expected an integer from 0 (one per core) to %d",
                       threads, HDP_THREADS_MAX);
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_threads_check(threads == CLI_NOT_GIVEN ? 0 : (int)threads, "threads", &err) != HDP_OK)
        return cli_bad(cmd, "%s (set OMP_NUM_THREADS lower or give --threads)", err.msg);
    return 0;
}

int cli_mc_threads(const cli_mc_args *a)
{
    return a->threads != CLI_NOT_GIVEN ? (int)a->threads : 0;
}

/* ---- issue 29: the work of a long Monte Carlo, announced, and its progress ----
 * About 5 ns per coordinate update per thread and 0.1 us per step (sim and sde, measured on a
 * 2-core VM; bench/RESULTS.md's machine is faster): a rough figure, said to be one. */
#define NS_PER_UPDATE 5.0
#define NS_PER_STEP 100.0
#define ANNOUNCE_TTY 10.0     /* seconds: on a terminal, announce jobs longer than this */
#define ANNOUNCE_ALWAYS 3600.0 /* seconds: announce anywhere, with a line every 10 minutes */

static struct {
    cli_progress line;
    int long_job;  /* announced: the steps within the runs counted too */
    char side[8];  /* "sim" or "sde": the side being counted */
    int steps;     /* the side's steps are being reported (they, not its runs, are drawn) */
    char unit[16]; /* "sim runs", "sde steps", ... */
} mc;

/* the Monte Carlo's one progress callback: its runs ("sim", "sde") and, in a long job, the
 * steps within them ("sim steps", "sde steps": from within runs over a second) */
static int mc_report(const char *what, long done, long total, double value, void *user)
{
    (void)value, (void)user;
    size_t len = strcspn(what, " ");
    int steps = what[len] != '\0';
    if (steps && !mc.long_job)
        return 0;
    if (len >= sizeof mc.side || strncmp(mc.side, what, len) || mc.side[len]) {
        snprintf(mc.side, sizeof mc.side, "%.*s", (int)len, what); /* the next side */
        mc.steps = 0;
    }
    if (mc.steps && !steps)
        return 0;
    mc.steps = steps;
    snprintf(mc.unit, sizeof mc.unit, "%s %s", mc.side, steps ? "steps" : "runs");
    mc.line.unit = mc.unit;
    cli_progress_show(&mc.line, (double)done, (double)total, NULL);
    return 0;
}

void cli_mc_estimate(const char *cmd, const hdp_model *m, hdp_mc_options *opt, int sides)
{
    long steps = m->n;
    if (m->sampling != HDP_SAMPLING_ONE_PASS && m->train_size > 0)
        steps = m->epochs * m->train_size; /* the rows' gradients of E epochs (finite set) */
    if (!strcmp(cmd, "sde") && opt->sde_step > 0)
        steps = lround(1.0 / opt->sde_step);
    double runs = (double)opt->runs, work = runs * (double)steps * (double)m->d * sides;
    int threads = hdp_threads_request(opt->runs, opt->threads);
    double secs = (work * NS_PER_UPDATE + runs * (double)steps * sides * NS_PER_STEP) * 1e-9 /
                  threads;
    memset(&mc, 0, sizeof mc);
    cli_progress_start(&mc.line, cmd, "runs", 0);
    mc.long_job = secs >= (mc.line.tty ? ANNOUNCE_TTY : ANNOUNCE_ALWAYS);
    if (mc.long_job) {
        char t[32];
        cli_human_time(secs, t, sizeof t);
        fprintf(stderr,
                "hdpsgd %s: %.3g coordinate updates (%ld runs x %ld steps x d = %ld%s): roughly "
                "%s on %d thread%s (about %.0f ns per update per thread); progress %s; Ctrl-C "
                "stops it\n",
                cmd, work, opt->runs, steps, m->d, sides > 1 ? ", sim and sde" : "", t, threads,
                threads > 1 ? "s" : "", NS_PER_UPDATE,
                mc.line.tty ? "below" : "every 10 minutes");
        mc.line.every = 600;
    }
    if (mc.line.tty || mc.long_job) {
        opt->progress = mc_report;
        opt->progress_user = NULL;
    }
}

void cli_mc_progress_end(void)
{
    cli_progress_clear(&mc.line);
}

hdp_status cli_sweep_files(const char *pdir, const hdp_sweep_point *p, const char *name1,
                           void (*w1)(FILE *, const hdp_sweep_point *), const char *name2,
                           void (*w2)(FILE *, const hdp_sweep_point *), hdp_error *err)
{
    char path1[HDP_OUT_PATH_MAX], path2[HDP_OUT_PATH_MAX];
    snprintf(path1, sizeof path1, "%s/%s", pdir, name1);
    snprintf(path2, sizeof path2, "%s/%s", pdir, name2 ? name2 : "");
    hdp_outset out;
    hdp_outset_init(&out, err);
    FILE *f;
    if ((f = hdp_outset_add(&out, path1)))
        w1(f, p);
    if ((f = hdp_outset_add(&out, name2 ? path2 : NULL)))
        w2(f, p);
    return hdp_outset_commit(&out);
}

void cli_plot_source(hdp_outset *set, hdp_plot_vars *v, const char *var, const char *path)
{
    const char *src;
    if (hdp_outset_source(set, path, &src) == HDP_OK)
        hdp_plot_var_file(v, var, src);
}

void cli_draw(hdp_outset *set, const char *script, const char *fig, hdp_plot_vars *v)
{
    if (set->status == HDP_OK)
        hdp_plot_draw(set, script, fig, v, set->err);
    hdp_plot_vars_free(v);
}

int cli_need_gnuplot(const char *cmd, const char *fig)
{
    if (hdp_plot_gnuplot())
        return 0;
    return cli_error(EXIT_IO, cmd, "the figure %s needs gnuplot, which was not found (install it: "
                     "apt-get install gnuplot-nox, or set HDPSGD_GNUPLOT); nothing was run", fig);
}

void cli_drawn(const char *fig, const char *data) { printf("figure: %s (data: %s)\n", fig, data); }

/* ---- the models of a gamma grid (rates, and the rates points of sweep) ---- */

void cli_rates_free(cli_rates *r)
{
    hdp_rates_result_free(&r->res);
    for (long i = 0; i < r->loaded; i++)
        hdp_model_free(&r->models[i]);
    free(r->models);
    memset(r, 0, sizeof *r);
}

int cli_rates_load(const char *cmd, const cli_common *common, double lo, double hi, long count,
                   cli_rates *r)
{
    memset(r, 0, sizeof *r);
    /* the model of the file and --set, then the library makes one per gamma (data.gamma) */
    hdp_model base;
    int rc = cli_load_model(common, &base);
    if (rc)
        return rc;
    r->count = count;
    r->models = calloc((size_t)count, sizeof *r->models);
    if (!r->models) {
        hdp_model_free(&base);
        cli_rates_free(r);
        return cli_error(EXIT_NUMERIC, cmd, "out of memory");
    }
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st = hdp_rates_models(&base, lo, hi, count, r->models, &err);
    hdp_model_free(&base);
    if (st != HDP_OK) {
        fprintf(stderr, "hdpsgd: error: %s\n", err.msg);
        cli_rates_free(r);
        return st == HDP_EINPUT ? EXIT_BAD_INPUT : EXIT_NUMERIC;
    }
    r->loaded = count;
    return 0;
}

const char *const *cli_model_sections(const char *command)
{
    static const char *const none[] = {NULL};
    static const struct {
        const char *command, *const sections[3]; /* NULL-terminated */
    } own[] = {{"rf", {"rf", "dpgd", NULL}}, {"rf-experiment", {"rf", "dpgd", NULL}},
               {"kl", {"kl", NULL}},         {"nc", {"nc", NULL}},
               {"sim-index", {"si", NULL}},  {"net", {"net", NULL}}};
    for (size_t i = 0; command && i < sizeof own / sizeof own[0]; i++)
        if (!strcmp(command, own[i].command))
            return own[i].sections;
    return none;
}

void cli_json_model(hdp_json *j, const hdp_model *m, const char *command)
{
    hdp_json_fields(j, &hdp_source_fields, "", m, NULL);
    hdp_json_model(j, "model", m, cli_model_sections(command));
}
