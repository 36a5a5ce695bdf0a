/*
 * cmd_schedule.c — `hdpsgd schedule --optimize`: find the learning-rate schedules of
 * the families of docs/theory.md §5 that minimise the ODE's final-iterate excess
 * risk (docs/theory.md §3) at the model's fixed rho (docs/theory.md §6), compare them, write the
 * best as a `table` schedule file, and draw them. The numerics are in the library
 * (hdpsgd/design.h); this file parses, prints and writes.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/schema.h"
#include "io/output.h"
#include "plot.h"
#include "cli.h"
#include "hdpsgd/design.h"
#include "hdpsgd/privacy.h"
#include "schedule_print.h"

static const char *out_path, *json_path, *figure_path, *family_opt, *method_opt;
static long knots_opt;
static int optimize, tune_clip, refine, tune_batch;
/* --tune-batch: the batches designed and the best one's terms (for the JSON) */
static const hdp_design_batch *batch_run;
static hdp_design_batch_terms_t batch_terms;
static double refine_tol;
/* --refine: the privacy each closed-form family needs to match the optimum (for the JSON) */
static int have_equiv;
static hdp_design_equivalent equiv[HDP_FAMILY_COUNT];

const cli_opt schedule_opts[] = {
    {"optimize", 0, OPT_FLAG, &optimize, NULL, "optimise the schedule families on the risk ODE"},
    {"family", 0, OPT_STRING, &family_opt, "F",
     "all (default) | output | linear-noise | inverse-time (alias optimal) | pl, or a comma-separated list"},
    {"knots", 0, OPT_LONG, &knots_opt, "K", "pl family: knots t_i = i/(K-1), 2 <= K <= 512 (default 8)"},
    {"method", 0, OPT_STRING, &method_opt, "M",
     "bfgs (default: quasi-Newton on the exact gradient) | simplex (Nelder-Mead, the former method)"},
    {"refine", 0, OPT_FLAG, &refine, NULL,
     "pl only: optimise at K knots, then at 2K-1 (segments halved, started from the coarser "
     "optimum), ... until the final risk moves by less than --refine-tol; also optimises the "
     "closed-form families and reports the privacy each would need to match"},
    {"refine-tol", 0, OPT_DOUBLE, &refine_tol, "TOL", "relative change that ends --refine (default 1e-5)"},
    {"tune-clip", 0, OPT_FLAG, &tune_clip, NULL, "also optimise the clipping constant c"},
    {"tune-batch", 0, OPT_FLAG, &tune_batch, NULL,
     "also choose the batch size B of batched one pass: the design at B = 1, 2, 4, ... up to n/32"},
    {"output", 'o', OPT_OUTPUT, &out_path, "FILE",
     "write the best schedule here as a table (two columns t, eta)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "write the JSON summary here"},
    {"figure", 'f', OPT_FIGURE, &figure_path, "FIG",
     "draw eta~(t) and R(t) of every family (.png, .pdf, .svg, .eps or .tex); data in FIG-base.schedules.csv"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help schedule` (the command table in main.c points here) */
const char schedule_usage[] = "[MODEL.ini] --optimize";
const char schedule_help[] =
    "Minimises the ODE's final-iterate excess risk (docs/theory.md §3, final-step noise included)\n"
    "at the model's rho over the schedule families of docs/theory.md §5: output (eta0),\n"
    "linear-noise (eta0), inverse-time (c1/(t + a), formerly `optimal`, still accepted; not the\n"
    "optimum at finite gamma; reported also as c2 = a/gamma, c3 = a rho/gamma), and pl, a\n"
    "non-increasing piecewise-linear eta~ through K knots t_i = i/(K-1), 2 <= K <= 512; with\n"
    "--tune-clip jointly over the clipping constant c. sup eta~ < 2/gamma is built into the\n"
    "parametrisation. Method bfgs (default): GSL's BFGS on the exact gradient of the final\n"
    "risk (reverse mode through a Runge-Kutta discretisation of the ODE, privacy noise and\n"
    "final-step noise included) from the three best points of a coarse scan; simplex:\n"
    "Nelder-Mead (GSL nmsimplex2) with restarts on the ODE solver (2 output points, rtol 1e-7). The\n"
    "winners are re-solved at the model's [ode] settings. --refine (--family pl only):\n"
    "optimise at K knots, then at 2K-1 (the segments halved, from the coarser optimum) until\n"
    "the final risk moves by less than --refine-tol (default 1e-5, relative), printing the\n"
    "risk at each K; it also optimises the closed-form families and prints how far each is\n"
    "from the converged optimum, in risk and as the rho and epsilon it would need to match it.\n"
    "Prints a table (parameters, final risk, epsilon at delta = privacy.delta by CKS, ODE\n"
    "solves), writes the best schedule as a table file (-o: two columns t, eta, '#' header;\n"
    "201 knots, geometric near t = 0 for inverse-time, the K knots for pl) for\n"
    "--set schedule.kind=table --set schedule.file=FILE, and reports the ODE risk of that\n"
    "table. --figure draws eta~(t) and R(t) of every family; its data go to\n"
    "FIG-without-extension.schedules.csv (t,eta_<family>,risk_<family>,...). The JSON's\n"
    "family keys use linear_noise for linear-noise, inverse_time for inverse-time (these were\n"
    "optimal_... and \"optimal\" before).\n"
    "--tune-batch (batched one pass, docs/theory.md §1.6, §3.11) designs at sgd.batch = 1, 2,\n"
    "4, ... up to n/32 (at least 32 steps) and keeps the batch of lowest final risk; it prints\n"
    "and writes the best configuration\n"
    "also in the accountants' terms: sample_rate q = B/n, steps = ceil(n/B), the per-step\n"
    "noise multipliers of the design (noise on the batch's sum over C: noise_multiplier_min,\n"
    "_median, _max), rho_accounted, and standard Poisson DP-SGD at the same q, steps and\n"
    "(epsilon, delta): poisson_noise_multiplier (calibrated by sgd.accountant) with its\n"
    "epsilon_pld, epsilon_rdp, epsilon_rdp_classic.\n"
    "Progress on stderr: ODE solves done of a rough estimate and the time left. Stopping: the\n"
    "first SIGINT (Ctrl-C) or SIGTERM stops the search and writes the best schedule found so\n"
    "far, marked unconverged ('# ; UNCONVERGED' in the table, \"converged\": false in the\n"
    "JSON; families not yet reached are missing), exit status 128 + signal (130 for SIGINT,\n"
    "143 for SIGTERM); a second signal ends at once with no output. --refine -o writes each\n"
    "finished level's table to the file as the level ends.";

/* points of the figure's curves */
#define FIG_POINTS 401

typedef struct {
    cli_progress line;         /* the ODE solves of the search (an estimate of their total) */
    const int *want;           /* the families searched */
    int family;                /* the family of the last report (-1: none yet) */
    long family_solves;        /* its solves so far */
    long done_solves;          /* the solves of the families before it */
    int rounds;                /* the family's scan has ended: its solves are rounds' */
    const cli_common *common;  /* --refine: each finished level's table to -o */
    const hdp_model *m;
    const hdp_design_result *level; /* the designer's opt->level: the level just finished */
} progress_state;

/* A rough number of ODE solves for a family (as on the default model): the one-parameter
 * families about 100, inverse-time 250, pl 350 + 10 K, with --refine 250 + 10 K per level
 * and four levels (K, 2K-1, ...). Only for the progress line's estimate. */
static long expected_solves(int f)
{
    switch (f) {
    case HDP_FAMILY_OUTPUT:
    case HDP_FAMILY_LINEAR_NOISE: return 100;
    case HDP_FAMILY_OPTIMAL: return 250;
    default:
        if (!refine)
            return 350 + 10 * knots_opt;
        long sum = 0;
        for (long l = 0, k = knots_opt; l < 4 && k <= HDP_DESIGN_MAX_KNOTS; l++, k = 2 * k - 1)
            sum += 250 + 10 * k;
        return sum;
    }
}

/* the solves done so far (returned) and the estimate of the whole design's (*total: the
 * families still to come at expected_solves, the current one at least 10% past where it is) */
static long progress_done(progress_state *ps, hdp_design_family family, long solves, long *total)
{
    if ((int)family != ps->family) {
        if (ps->family >= 0)
            ps->done_solves += ps->family_solves;
        ps->family = family;
        ps->rounds = 0;
    }
    ps->family_solves = solves;
    long cur = expected_solves(family), floor = solves + solves / 10 + 1;
    *total = ps->done_solves + (cur > floor ? cur : floor);
    for (int f = family + 1; f < HDP_FAMILY_COUNT; f++)
        if (ps->want[f]) *total += expected_solves(f);
    return ps->done_solves + solves;
}

/* --refine: a finished level's table to -o at once (replaced by the next level and by the
 * result), so that a killed refine keeps it */
static void write_level(const progress_state *ps, const hdp_design_result *level)
{
    if (!out_path)
        return;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_outset out;
    hdp_outset_init(&out, &err);
    FILE *f = hdp_outset_add(&out, out_path);
    if (f)
        hdp_design_write_table(f, ps->m, level, NULL);
    if (hdp_outset_commit(&out) != HDP_OK)
        fprintf(stderr, "hdpsgd schedule: warning: the level's table: %s\n", err.msg);
}

/* the designer's reports (hdpsgd/design.h): what names the family and the event */
static int progress(const char *what, long solves, long total, double best, void *user)
{
    (void)total;
    progress_state *ps = user;
    hdp_design_family family = HDP_FAMILY_PL;
    int event = hdp_design_progress_event(what, &family);
    if (event < 0)
        return 0;
    long total_est, done_solves = progress_done(ps, family, solves, &total_est);
    const char *name = hdp_design_family_name(family);
    if (event == HDP_DESIGN_SOLVES) {
        cli_progress_show(&ps->line, (double)done_solves, (double)total_est,
                          "%s %s, best final risk %.8g", name, ps->rounds ? "round" : "scan", best);
        return 0;
    }
    char left[32], done[96]; /* "N of ~M ODE solves, ~T left" */
    cli_progress_left(&ps->line, (double)done_solves, (double)total_est, left, sizeof left);
    snprintf(done, sizeof done, "%5ld of ~%ld ODE solves, ~%s left", done_solves, total_est, left);
    cli_progress_clear(&ps->line);
    if (event == HDP_DESIGN_LEVEL) {
        write_level(ps, ps->level);
        fprintf(stderr, "hdpsgd schedule: %-12s level K = %d finished, search risk %.10g%s%s; %s\n",
                name, ps->level->knots, best, out_path ? "; its table written to " : "",
                out_path ? out_path : "", done);
        cli_test_stop("schedule-level");
        return 0;
    }
    fprintf(stderr, "hdpsgd schedule: %-12s %s %s, best final risk %.8g\n", name,
            event == HDP_DESIGN_ROUND ? "round" : "scan ", done, best);
    ps->rounds = 1;
    if (event == HDP_DESIGN_SCAN)
        cli_test_stop("schedule-scan");
    return 0;
}

/* w as one word of a shell command line: as it is when plain, else single-quoted, or as
 * $'...' with \xNN for control characters (the line stays one line and pastes back) */
static void shell_word(FILE *f, const char *w)
{
    const char *plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+@%-";
    int ctl = 0;
    for (const unsigned char *c = (const unsigned char *)w; *c; c++)
        ctl |= *c < 0x20 || *c == 0x7f;
    if (*w && strspn(w, plain) == strlen(w)) {
        fputs(w, f);
    } else if (!ctl) {
        fputc('\'', f);
        for (const char *c = w; *c; c++)
            *c == '\'' ? fputs("'\\''", f) : fputc(*c, f);
        fputc('\'', f);
    } else {
        fputs("$'", f);
        for (const unsigned char *c = (const unsigned char *)w; *c; c++)
            if (*c < 0x20 || *c == 0x7f || *c == '\'' || *c == '\\')
                fprintf(f, "\\x%02x", *c);
            else
                fputc(*c, f);
        fputc('\'', f);
    }
}

/* the command line that runs the simulation on the written table (NULL: out of memory);
 * each path and --set value one shell word, whole (it was cut at 4096 bytes, unquoted) */
static char *rerun_command(const cli_common *common, const char *sub, const hdp_design_result *b)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    fprintf(f, "hdpsgd %s", sub);
    if (common->model_path) {
        fputc(' ', f);
        shell_word(f, common->model_path);
    }
    for (int i = 0; i < common->nsets; i++) {
        fputs(" --set ", f);
        shell_word(f, common->sets[i]);
    }
    fputs(" --set schedule.kind=table --set schedule.file=", f); /* the shell joins the word */
    shell_word(f, out_path);
    char cb[40];
    if (tune_clip)
        fprintf(f, " --set clip.c=%s", hdp_format_exact(b->c, cb, sizeof cb));
    if (batch_run && batch_run->best >= 0)
        fprintf(f, " --set sgd.batch=%ld", batch_run->batch[batch_run->best]);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* the JSON summary (schedule's parts in main.c: each optimised family's tables under
 * <family>_, --refine's levels and equivalents, --tune-batch's choice, the set, the model) */
void cli_write_schedule_json(FILE *f, const hdp_model *m, const hdp_design_set *d,
                             const char *table_file)
{
    const hdp_design_result *pl = &d->res[HDP_FAMILY_PL];
    const void *all[HDP_FAMILY_COUNT], *eta0[HDP_FAMILY_COUNT] = {0}, *inv[HDP_FAMILY_COUNT] = {0},
               *plp[HDP_FAMILY_COUNT] = {0}, *eq[HDP_FAMILY_COUNT];
    for (int fam = 0; fam < HDP_FAMILY_COUNT; fam++) {
        all[fam] = d->done[fam] ? &d->res[fam] : NULL;
        eq[fam] = have_equiv && d->done[HDP_FAMILY_PL] && fam != HDP_FAMILY_PL && d->done[fam]
                      ? &equiv[fam] : NULL; /* --refine: the privacy each needs to match pl */
    }
    eta0[HDP_FAMILY_OUTPUT] = all[HDP_FAMILY_OUTPUT];
    eta0[HDP_FAMILY_LINEAR_NOISE] = all[HDP_FAMILY_LINEAR_NOISE];
    inv[HDP_FAMILY_OPTIMAL] = all[HDP_FAMILY_OPTIMAL];
    plp[HDP_FAMILY_PL] = all[HDP_FAMILY_PL];
    int refined = d->done[HDP_FAMILY_PL] && pl->levels > 0, batch = batch_run && batch_run->best >= 0;
#define FAMILIES(list) &(const cli_json_each){HDP_FAMILY_COUNT, cli_json_family, list, NULL, 0}
    const cli_json_source src[] = {
        {&hdp_design_fields, FAMILIES(all), NULL},
        {&hdp_design_eta0_fields, FAMILIES(eta0), NULL},
        {&hdp_design_inverse_time_fields, FAMILIES(inv), NULL},
        {&hdp_design_pl_fields, FAMILIES(plp), NULL},
        {&hdp_design_cost_fields, FAMILIES(all), NULL},
        {&hdp_design_refine_fields, refined ? pl : NULL, NULL},
        {&hdp_design_level_fields, &(const cli_json_each){refined ? (int)pl->levels : 0, NULL, pl,
                                                          NULL, 0}, NULL}, /* _<l> */
        {&hdp_design_equivalent_fields, FAMILIES(eq), NULL},
        {&hdp_design_set_fields, d, m},
        {&hdp_design_batch_fields, batch ? batch_run : NULL, NULL},
        {&hdp_design_batch_terms_fields, batch ? &batch_terms : NULL, NULL},
        {&hdp_design_summary_fields, d, m},
        {&hdp_design_file_fields, table_file, NULL}};
#undef FAMILIES
    cli_json_file(f, "schedule", src, (int)(sizeof src / sizeof *src), m);
}

/* The curves of the figure: eta~(t) and R(t) of every optimised family on one grid. */
static hdp_status figure_curves(const hdp_model *m, const hdp_design_result *res, const int *done,
                                hdp_ode_result *curves, hdp_error *err)
{
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        if (!done[f])
            continue;
        hdp_model dm, mm;
        hdp_status st = hdp_design_model(m, &res[f], 0, &dm, err);
        if (st != HDP_OK)
            return st;
        char points[32];
        snprintf(points, sizeof points, "%d", FIG_POINTS);
        st = hdp_model_with(&dm, "ode.points", points, &mm, err);
        hdp_model_free(&dm);
        if (st == HDP_OK)
            st = hdp_ode_solve(&mm, &curves[f], err);
        hdp_model_free(&mm);
        if (st != HDP_OK)
            return st;
    }
    return HDP_OK;
}

static void write_curves(FILE *f, const hdp_model *m, const int *done, const hdp_ode_result *c)
{
    fprintf(f, "# ; hdpsgd %s schedule --optimize --figure: eta~(t) and the ODE's R(t) of each "
               "optimised family (docs/theory.md §3, §5); the row t = 1 includes the final-step noise\n",
            hdp_version_string());
    hdp_model_write_meta_sections(m, f, cli_model_sections("schedule"));
    fprintf(f, "t");
    for (int k = 0; k < HDP_FAMILY_COUNT; k++)
        if (done[k])
            fprintf(f, ",eta_%s,risk_%s", hdp_design_family_column(k), hdp_design_family_column(k));
    fprintf(f, "\n");
    for (long i = 0; i < FIG_POINTS; i++) {
        fprintf(f, "%.10g", (double)i / (FIG_POINTS - 1));
        for (int k = 0; k < HDP_FAMILY_COUNT; k++)
            if (done[k])
                fprintf(f, ",%.12g,%.12g", c[k].eta[i], c[k].risk[i]);
        fprintf(f, "\n");
    }
}

/* eta~(t) and R(t) of every optimised family, from the data written to data_csv */
static void draw_figure(hdp_outset *out, const hdp_model *m, const hdp_design_set *d,
                        double eps, const char *data_csv)
{
    const hdp_design_result *res = d->res;
    const int *done = d->done;
    char title[512], fams[256] = "", finals[256] = "";
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        if (done[f]) {
            char v[40];
            strncat(fams, fams[0] ? " " : "", sizeof fams - strlen(fams) - 1);
            strncat(fams, hdp_design_family_column(f), sizeof fams - strlen(fams) - 1);
            snprintf(v, sizeof v, "%s%.4g", finals[0] ? " " : "", res[f].final_risk);
            strncat(finals, v, sizeof finals - strlen(finals) - 1);
        }
    snprintf(title, sizeof title,
             "optimised schedules at fixed privacy: d=%ld, n=%ld (γ=%.3g), ρ=%g (ε=%.3g at "
             "δ=%.3g), c=%g%s",
             m->d, m->n, m->gamma, m->rho, eps, m->delta, m->c, tune_clip ? " (c tuned per family)" : "");
    hdp_plot_vars v;
    hdp_plot_vars_init(&v);
    cli_plot_source(out, &v, "data_file", data_csv);
    hdp_plot_var_str(&v, "families", fams);
    hdp_plot_var_str(&v, "final_risks", finals);
    hdp_plot_var_str(&v, "title_text", title);
    cli_draw(out, "schedule", figure_path, &v);
}

/* cmd_schedule's first step: the options and their checks; want[] the families to optimise
 * (--refine: all, pl refined and the others compared with it), *method the search.
 * Returns 0, an exit status, or -1 when the help was asked for and printed. */
static int parse_request(int argc, char **argv, cli_common *common, int want[HDP_FAMILY_COUNT],
                         int *method)
{
    const cli_command *cmd = cli_find_command("schedule");
    out_path = json_path = figure_path = family_opt = NULL;
    knots_opt = 8;
    method_opt = NULL;
    refine_tol = 1e-5;
    have_equiv = 0;
    optimize = tune_clip = refine = tune_batch = 0;
    batch_run = NULL;
    int rc = cli_start(cmd, argc, argv, common);
    if (rc)
        return rc;
    if (!optimize)
        return cli_bad("schedule", "nothing to do: add --optimize (hdpsgd help schedule)");
    hdp_error err; /* --family: "all" (the default) or a comma-separated list */
    hdp_error_clear(&err);
    if (hdp_design_families_parse(family_opt ? family_opt : "all", want, &err) != HDP_OK)
        return cli_bad("schedule", "--family: %s", err.msg);
    if (knots_opt < 2 || knots_opt > HDP_DESIGN_MAX_KNOTS)
        return cli_bad("schedule", "--knots %ld: the pl family needs 2 to %d knots", knots_opt,
                       HDP_DESIGN_MAX_KNOTS);
    *method = hdp_design_method_parse(method_opt ? method_opt : "bfgs");
    if (*method < 0)
        return cli_bad("schedule", "--method '%s': expected bfgs or simplex", method_opt);
    if (!(refine_tol > 0) || !isfinite(refine_tol))
        return cli_bad("schedule", "--refine-tol %g: expected a positive number", refine_tol);
    if (refine && tune_batch)
        return cli_bad("schedule", "--tune-batch with --refine: give one of them");
    if (refine) {
        int only_pl = want[HDP_FAMILY_PL];
        for (int f = 0; f < HDP_FAMILY_COUNT; f++)
            if (f != HDP_FAMILY_PL && want[f]) only_pl = 0;
        if (!only_pl)
            return cli_bad("schedule", "--refine: refines the pl family only (add --family pl; "
                           "the closed-form families are then compared with it)");
        if (*method != HDP_DESIGN_BFGS)
            return cli_bad("schedule", "--refine needs --method bfgs");
        /* the closed-form families, for the comparison */
        for (int f = 0; f < HDP_FAMILY_COUNT; f++) want[f] = 1;
    }
    return 0;
}

/* The search options of the command line (progress through ps). */
static void design_options(int method, progress_state *ps, hdp_design_options *opt)
{
    hdp_design_options_init(opt);
    opt->knots = (int)knots_opt;
    opt->tune_clip = tune_clip;
    opt->method = (hdp_design_method)method;
    opt->refine = refine;
    opt->refine_tol = refine_tol;
    opt->progress = progress;
    opt->progress_user = ps;
    opt->level = &ps->level;
}

/* The files, all or nothing: the table (-o), the figure's data and the JSON; then the line
 * that simulates the table and the figure. */
static hdp_status write_outputs(const cli_common *common, const hdp_model *m, const hdp_design_set *d,
                                const hdp_ode_result *curves, double eps, hdp_error *err)
{
    const hdp_design_result *b = &d->res[d->best];
    char data_csv[HDP_OUT_PATH_MAX + 32] = "";
    if (figure_path)
        hdp_plot_stem(figure_path, ".schedules.csv", data_csv, sizeof data_csv);
    char *line = out_path ? rerun_command(common, "sim", b) : NULL; /* simulates the table */
    if (out_path && !line)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the command line of the table");
    hdp_outset out; /* all or nothing */
    hdp_outset_init(&out, err);
    FILE *f;
    if ((f = hdp_outset_add(&out, out_path)))
        hdp_design_write_table(f, m, b, line);
    if ((f = hdp_outset_add(&out, figure_path ? data_csv : NULL)))
        write_curves(f, m, d->done, curves);
    if ((f = hdp_outset_add(&out, json_path)))
        cli_write_schedule_json(f, m, d, out_path);
    if (figure_path)
        draw_figure(&out, m, d, eps, data_csv);
    hdp_status st = hdp_outset_commit(&out);
    if (st == HDP_OK && out_path)
        printf("table: %s\nsimulate it with:\n  %s\n(or `hdpsgd validate` with the same --set "
               "options)\n",
               out_path, line);
    free(line);
    if (st == HDP_OK && figure_path)
        cli_drawn(figure_path, data_csv);
    return st;
}

/* --tune-batch: the best design's model (its schedule as the written table) in the
 * accountants' terms, into batch_terms */
static hdp_status batch_report(const hdp_model *m, const hdp_design_set *d, hdp_error *err)
{
    hdp_model dm;
    hdp_status st = hdp_design_model(m, &d->res[d->best], 1, &dm, err);
    if (st == HDP_OK)
        st = hdp_design_batch_terms(&dm, &batch_terms, err);
    hdp_model_free(&dm);
    return st;
}

static void print_batch(const hdp_design_batch *br, const hdp_design_batch_terms_t *t)
{
    printf("\nbatch size (batched one pass, docs/theory.md §3.11): best B = %ld of",
           br->batch[br->best]);
    for (int i = 0; i < br->count; i++)
        printf("%s %ld (%.6g)", i ? "," : "", br->batch[i], br->risk[i]);
    printf("\n  in the accountants' terms: sample rate q = %.6g, %ld steps, noise multiplier per "
           "step %.4g to %.4g (median %.4g; noise on the batch's sum over C), rho_accounted = "
           "%.6g\n",
           t->sample_rate, t->steps, t->noise_min, t->noise_max, t->noise_median,
           t->rho_accounted);
    if (isfinite(t->poisson_sigma))
        printf("  standard Poisson DP-SGD at the same q, steps and (epsilon = %.4g, delta = %g): "
               "noise multiplier %.4g; its epsilon by PLD %.4g, RDP %.4g, RDP classic %.4g "
               "(add/remove neighbours; the one-pass guarantee above is replace-one, by "
               "amplification by iteration)\n",
               t->epsilon_zcdp, t->delta, t->poisson_sigma, t->epsilon_pld, t->epsilon_rdp,
               t->epsilon_rdp_classic);
}

/* parse and check, run (the designs and the figure's curves), print, write */
int cmd_schedule(int argc, char **argv)
{
    cli_common common;
    int want[HDP_FAMILY_COUNT], method = HDP_DESIGN_BFGS;
    int rc = parse_request(argc, argv, &common, want, &method);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    cli_warn_stability("schedule", &m);
    cli_warn_delta("schedule", &m);

    progress_state ps = {{0}, want, -1, 0, 0, 0, &common, &m, NULL};
    cli_progress_start(&ps.line, "schedule", "ODE solves", 0);
    ps.line.rough = 1;
    hdp_design_options opt;
    design_options(method, &ps, &opt);
    static volatile int cancel; /* SIGINT/SIGTERM: stop, write the best so far (issue 31) */
    cancel = 0;
    opt.cancel = &cancel;
    opt.keep_best = 1;
    cli_cancel_on_signal(&cancel);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_design_set d;
    hdp_ode_result curves[HDP_FAMILY_COUNT];
    memset(curves, 0, sizeof curves);
    hdp_design_batch db; /* --tune-batch: the design at each batch, d the best one's */
    const hdp_model *mo = &m;
    hdp_status st;
    if (tune_batch) {
        st = hdp_design_batch_run(&m, want, &opt, &db, &err);
        memset(&d, 0, sizeof d);
        d.best = -1;
        if (db.best >= 0) {
            d = db.set; /* owned by db */
            mo = &db.model;
            batch_run = &db;
        }
    } else {
        st = hdp_design_set_run(&m, want, &opt, &d, &err);
    }
    cli_install_signal_handlers(); /* the search is over: a signal now ends without output */
    cli_progress_clear(&ps.line);
    int stopped = st == HDP_ECANCELLED && d.unconverged && d.best >= 0;
    if (stopped) {
        fprintf(stderr, "hdpsgd schedule: stopped by SIG%s: writing the best schedule found so "
                        "far, marked unconverged (a second signal ends at once)\n",
                cli_cancel_signal() == SIGTERM ? "TERM" : "INT");
        hdp_error_clear(&err);
        st = HDP_OK;
    }
    if (st == HDP_OK && figure_path)
        st = figure_curves(mo, d.res, d.done, curves, &err);
    if (st == HDP_OK && batch_run)
        st = batch_report(mo, &d, &err);

    if (st == HDP_OK) {
        double eps = hdp_zcdp_epsilon_cks(0.5 * m.rho * m.rho, m.delta);
        schedule_print_comparison(mo, &d, &opt, eps, tune_clip);
        if (batch_run)
            print_batch(batch_run, &batch_terms);
        /* the privacy equivalents need the converged optimum and more searches: not when stopped */
        if (refine && d.done[HDP_FAMILY_PL] && !stopped) {
            schedule_print_refine(&m, &d, &opt, refine_tol, eps, equiv);
            for (int f = 0; f < HDP_FAMILY_COUNT; f++)
                if (f != HDP_FAMILY_PL && d.done[f])
                    have_equiv = 1;
        }
        if (stopped)
            printf("UNCONVERGED: stopped by a signal; the families above are the best found so far "
                   "(a family missing was not searched)\n");
        st = write_outputs(&common, mo, &d, curves, eps, &err);
    }
    if (tune_batch)
        hdp_design_batch_free(&db); /* d is its design */
    else
        hdp_design_set_free(&d);
    batch_run = NULL;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        hdp_ode_result_free(&curves[f]);
    hdp_model_free(&m);
    if (st == HDP_OK && stopped)
        return 128 + cli_cancel_signal(); /* as a shell reports a command ended by the signal */
    return st == HDP_OK ? 0 : cli_fail("schedule", &err);
}

/* ---- in a sweep (hdpsgd/sweep.h): schedule.json and schedule.tab in the point's folder ---- */

static void sweep_json(FILE *f, const hdp_sweep_point *p)
{
    cli_write_schedule_json(f, p->m, &p->designs, "schedule.tab");
}
static void sweep_table(FILE *f, const hdp_sweep_point *p)
{
    hdp_design_write_table(f, p->m, &p->designs.res[p->designs.best], NULL);
}

hdp_status schedule_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err)
{
    return cli_sweep_files(pdir, p, "schedule.json", sweep_json, "schedule.tab", sweep_table, err);
}
