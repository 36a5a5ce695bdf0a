/*
 * cmd_rf_experiment.c — `hdpsgd rf-experiment P1|P2|P3|P4`: the random-features
 * experiments of Bombari-Mondelli's Fig. 2 (docs/theory.md §7), each a CSV and a gnuplot
 * figure (plots/rf-p1.gp ... rf-p4.gp).
 *
 *   P1  test loss against p: DP-GD (best of a small (C, CT) grid at every p) and the
 *       min-norm interpolator (non-private GD's limit), double descent with its peak at p = n.
 *   P2  test loss against T at C = dpgd.C for several p, with a fixed eta; with the OU
 *       closed form and gradient flow at tau = eta T for reference.
 *   P3  the same runs against eta T p / d (= CT): the curves collapse.
 *   P4  test loss over (C, CT) at p = rf.p: a heat map.
 * DP-GD runs in the coordinates of the modes (hdp_rf_dpgd_final: the same algorithm at
 * O(n min(n, p)) per step). The model supplies d, n, test size, activation, target,
 * epsilon, delta and eta; the grids are below (reduced by default, --full for denser ones).
 * Every configuration has its own random stream (the data stream jumped 1 + index times),
 * so the CSV is the same for any --threads.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/output.h"
#include "plot.h"
#include "cli.h"
#include "core/clock.h"
#include "hdpsgd/rfexp.h"
#include "rf_cli.h"

static const char *out_dir, *json_path, *select_opt;
static int full_opt;
static cli_mc_args mc;

const cli_opt rf_experiment_opts[] = {
    {"full", 0, OPT_FLAG, &full_opt, NULL, "the denser grids of Bombari-Mondelli (much longer; see above)"},
    {"output", 'o', OPT_STRING, &out_dir, "DIR",
     "write DIR/rf-pK.csv and DIR/rf-pK.png (a folder, not '-'; default .)"},
    {"runs", 0, OPT_LONG, &mc.runs, "N",
     "DP-GD runs per configuration, averaged (default 1, as in Bombari-Mondelli)"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &mc.seed, "S", "seed (overrides sim.seed)"},
    {"select-on", 0, OPT_STRING, &select_opt, "validation|test",
     "what chooses (C, CT) at each p: the validation set (default, as Bombari-Mondelli) or the test set "
     "(optimistic; for comparison)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json",
     "write the selected configuration at every p (selected_on, its C, CT, validation and test "
     "losses)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help rf-experiment` (the command table in main.c points here) */
const char rf_experiment_usage[] = "P1|P2|P3|P4 [MODEL.ini]";
const char rf_experiment_help[] =
    "Writes DIR/rf-pK.csv and the figure DIR/rf-pK.png (gnuplot). The model (models/rf-pK.ini)\n"
    "gives d, n, test size, activation, target, epsilon, delta, eta (0 = 1/p) and, for P2/P3,\n"
    "C; DP-GD runs in the coordinates of the modes of Phi (exactly Algorithm 1, O(n min(n,p))\n"
    "per step), one run per configuration unless --runs.\n"
    "  P1  test loss against p (reduced: p = 31 ... 20000, 9 values; C in {0.5, 1} x CT in\n"
    "      {2, 5}, the one chosen on the validation set kept; --full: 25 values up to 40000\n"
    "      and Bombari-Mondelli's 3 x 3 grid)\n"
    "      for DP-GD and the min-norm interpolator (double descent, peak at p = n).\n"
    "  P2  test loss against T = CT d/(eta p), C_clip = C sqrt(p), eta fixed, for p = 4000,\n"
    "      8000, 16000 (--full adds 32000) and 9 CT from 10^-0.5 to 10^1.5 (--full 21), with\n"
    "      the OU closed form and gradient flow at tau = eta T; eta = dpgd.eta, or 1/p_max.\n"
    "  P3  the same against eta T p / d: the curves collapse.\n"
    "  P4  heat map over C in 10^[-2, 1.5] and CT in 10^[-1.5, 2] (8 x 8; --full 20 x 20 up\n"
    "      to 10^2.5) at p = rf.p.\n"
    "Selection: Bombari-Mondelli tunes (C, T) on validation data. At every p the configuration of\n"
    "lowest validation loss is selected (rf.val_size fresh samples, default 20 % of\n"
    "rf.test_size, from their own random streams: disjoint from the training and test data,\n"
    "the same at every p) and its test loss is reported (P1's dpgd_test). --select-on test\n"
    "chooses on the test loss instead, for comparison (optimistic: the test set both chooses\n"
    "and scores). Every CSV has dpgd_val (and P1 oracle_test, the lowest test loss of the\n"
    "grid, and val_C.._CT.. per configuration). --json: the selection at each p.\n"
    "Reduced grids take under a minute each on 2 cores at the models' sizes; --full takes\n"
    "minutes to tens of minutes (see models/rf-pK.ini). The CSV is the same for any --threads.";

/* ---- progress: the zCDP note, P2's stability warning, one line per p ---- */

static const char *const names[] = {"P1", "P2", "P3", "P4"};

typedef struct {
    const hdp_rfexp *xp;
    cli_progress line; /* the runs of the point being computed, on a terminal */
} report_ctx;

static int progress(const char *what, long done, long total, double value, void *user)
{
    (void)what, (void)total, (void)value;
    report_ctx *x = user;
    const hdp_rfexp *xp = x->xp;
    cli_progress_clear(&x->line);
    int i = (int)(done - 1);
    const hdp_rfexp_point *pt = &xp->points[i];
    const char *name = names[xp->kind];
    if (pt->zcdp)
        cli_rf_sigma_note("rf-experiment", &pt->zcdp_q);
    if (xp->kind == HDP_RFEXP_P1) {
        const hdp_rfexp_config *b = &pt->cfg[pt->best];
        fprintf(stderr, "hdpsgd rf-experiment P1: p = %ld (%d/%d): min-norm %.4g, DP-GD %.4g "
                        "(C = %g, CT = %g, chosen on %s: %.4g; best test of the grid %.4g); "
                        "build %.1f s, DP-GD %.1f s\n",
                pt->p, i + 1, xp->np, pt->minnorm_test, b->test, xp->Cs[pt->best / xp->nCT],
                xp->CTs[pt->best % xp->nCT], hdp_rfexp_select_name(xp->select),
                xp->select == HDP_RFEXP_SELECT_TEST ? b->test : b->val,
                pt->cfg[pt->best_test].test, pt->build_seconds, pt->dpgd_seconds);
    } else if (xp->kind == HDP_RFEXP_P4) {
        fprintf(stderr, "hdpsgd rf-experiment P4: p = %ld, %ld configurations, eta lambda_max = "
                        "%.3g; build %.1f s, DP-GD %.1f s\n",
                pt->p, (long)xp->nC * xp->nCT, pt->eta * pt->lambda_max, pt->build_seconds,
                pt->dpgd_seconds);
    } else {
        if (pt->eta * pt->lambda_max >= 2)
            fprintf(stderr, "hdpsgd rf-experiment %s: warning: p = %ld: eta lambda_max = %g >= 2 "
                            "(unstable)\n", name, pt->p, pt->eta * pt->lambda_max);
        fprintf(stderr, "hdpsgd rf-experiment %s: p = %ld (%d/%d): T from %ld to %ld, eta "
                        "lambda_max = %.3g; build %.1f s, DP-GD %.1f s\n",
                name, pt->p, i + 1, xp->np, pt->cfg[0].q.T, pt->cfg[xp->nCT - 1].q.T,
                pt->eta * pt->lambda_max, pt->build_seconds, pt->dpgd_seconds);
    }
    return 0;
}

static void meta(FILE *f, const char *name, const char *what, const hdp_model *m,
                 const hdp_rfexp *xp)
{
    fprintf(f, "# ; hdpsgd %s rf-experiment %s: %s (Bombari-Mondelli, Fig. 2; docs/theory.md §6, §7)\n",
            hdp_version_string(), name, what);
    hdp_model_write_meta_sections(m, f, cli_model_sections("rf-experiment"));
    fprintf(f, "# ; runs per configuration = %ld\n# ; grid = %s\n", xp->runs,
            xp->full ? "full" : "reduced");
    fprintf(f, "# ; selected_on = %s: at every p the configuration of lowest %s loss (validation: "
               "%ld fresh samples, rf.val_size; dpgd_val is its loss)\n",
            hdp_rfexp_select_name(xp->select), hdp_rfexp_select_name(xp->select), xp->val_size);
}

static const char *delta_text(const hdp_model *m)
{
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    return dk->delta > 0 ? "dpgd.delta" : "1/n";
}

/* ---- P1: test loss against p ---- */

/* P1's grid columns: t of every configuration (C-major), named <name>_C<C>_CT<CT> (pt NULL:
 * the header) or pt's values */
static void grid_columns(FILE *f, const hdp_rfexp *xp, const hdp_rfexp_point *pt,
                         const hdp_field_table *t)
{
    char suffix[80];
    for (long j = 0; j < (long)xp->nC * xp->nCT; j++) {
        snprintf(suffix, sizeof suffix, "_C%g_CT%g", xp->Cs[j / xp->nCT], xp->CTs[j % xp->nCT]);
        if (pt)
            hdp_csv_row(f, t, &pt->cfg[j], NULL, 0);
        else
            hdp_csv_header_in(f, t, "", suffix, 0);
    }
}

static void p1(const hdp_model *m, const hdp_rfexp *xp, FILE *f, char *title, size_t tsize)
{
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    const int nC = xp->nC, nCT = xp->nCT;
    meta(f, "P1", "test loss against the number of features p", m, xp);
    fprintf(f, "# ; DP-GD: the configuration of lowest %s loss of C in {",
            hdp_rfexp_select_name(xp->select));
    for (int i = 0; i < nC; i++) fprintf(f, "%s%g", i ? ", " : "", xp->Cs[i]);
    fprintf(f, "} x CT in {");
    for (int i = 0; i < nCT; i++) fprintf(f, "%s%g", i ? ", " : "", xp->CTs[i]);
    fprintf(f, "}; C_clip = C sqrt(p), T = CT d/(eta p), eta = %s\n",
            dk->eta > 0 ? "dpgd.eta" : "1/p");
    hdp_csv_header(f, &hdp_rfexp_p1_csv_fields, 1);
    grid_columns(f, xp, NULL, &hdp_rfexp_grid_test_csv_fields);
    hdp_csv_header(f, &hdp_rfexp_p1_val_csv_fields, 0);
    grid_columns(f, xp, NULL, &hdp_rfexp_grid_val_csv_fields);
    fputc('\n', f);
    for (int i = 0; i < xp->np; i++) {
        const hdp_rfexp_point *pt = &xp->points[i];
        const hdp_rfexp_config *b = &pt->cfg[pt->best];
        const hdp_rfexp_row row = {pt, xp->Cs[pt->best / nCT], xp->CTs[pt->best % nCT], 0, 1};
        hdp_csv_row(f, &hdp_rfexp_p1_csv_fields, b, &row, 1);
        grid_columns(f, xp, pt, &hdp_rfexp_grid_test_csv_fields);
        hdp_csv_row(f, &hdp_rfexp_p1_val_csv_fields, b, &row, 0);
        grid_columns(f, xp, pt, &hdp_rfexp_grid_val_csv_fields);
        fputc('\n', f);
    }
    snprintf(title, tsize, "P1 (Bombari-Mondelli, Fig. 2): test loss vs p — d = %ld, n = %ld, %s "
             "target, ε = %g, δ = %s", rk->d, rk->n, hdp_rf_target_name(rk->target),
             dk->epsilon, delta_text(m));
}

/* ---- P2, P3: test loss against T and against eta T p / d ---- */

static void p23(const hdp_model *m, const hdp_rfexp *xp, FILE *f, char *title, size_t tsize,
                char *plist, size_t psize)
{
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    const char *name = names[xp->kind];
    const long d = rk->d;
    const double eta = xp->points[0].eta, C = xp->Cs[0];
    meta(f, name, "test loss against T and against eta T p / d", m, xp);
    fprintf(f, "# ; C_clip = C sqrt(p) with C = %g; eta = %.17g for every p; "
               "T = round(CT d/(eta p))\n", C, eta);
    fprintf(f, "# ; ou_test: expected test loss of the unclipped OU process at tau = eta T (closed "
               "form); gf_test: gradient flow at tau\n");
    hdp_csv_header(f, &hdp_rfexp_p23_csv_fields, 1);
    fputc('\n', f);
    plist[0] = '\0';
    for (int i = 0; i < xp->np; i++) {
        const hdp_rfexp_point *pt = &xp->points[i];
        size_t len = strlen(plist);
        snprintf(plist + len, psize - len, "%s%ld", len ? " " : "", pt->p);
        for (int b = 0; b < xp->nCT; b++) {
            const hdp_rfexp_row row = {pt, C, xp->CTs[b], d, pt->best == b};
            hdp_csv_row(f, &hdp_rfexp_p23_csv_fields, &pt->cfg[b], &row, 1);
            fputc('\n', f);
        }
    }
    snprintf(title, tsize, "%s (Bombari-Mondelli, Fig. 2): C_clip = %g √p, η = %g, d = %ld, n = %ld, "
             "ε = %g, δ = %s", name, C, eta, d, rk->n, dk->epsilon, delta_text(m));
}

/* ---- P4: heat map over (C, CT) ---- */

static void p4(const hdp_model *m, const hdp_rfexp *xp, FILE *f, char *title, size_t tsize)
{
    const hdp_dpgd_keys *dk = hdp_dpgd_keys_of(m);
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    const hdp_rfexp_point *pt = &xp->points[0];
    const int nCT = xp->nCT;
    meta(f, "P4", "test loss over (C, CT) at one p", m, xp);
    fprintf(f, "# ; p = %ld, eta = %.17g; C_clip = C sqrt(p), T = round(CT d/(eta p))\n", pt->p,
            pt->eta);
    hdp_csv_header(f, &hdp_rfexp_p4_csv_fields, 1);
    fputc('\n', f);
    for (long j = 0; j < (long)xp->nC * nCT; j++) {
        const hdp_rfexp_row row = {pt, xp->Cs[j / nCT], xp->CTs[j % nCT], 0, pt->best == j};
        hdp_csv_row(f, &hdp_rfexp_p4_csv_fields, &pt->cfg[j], &row, 1);
        fputc('\n', f);
    }
    snprintf(title, tsize, "P4 (Bombari-Mondelli, Fig. 2): test loss over (C_clip, T) — p = %ld, η = %g, "
             "d = %ld, n = %ld, ε = %g, δ = %s", pt->p, pt->eta, rk->d, rk->n,
             dk->epsilon, delta_text(m));
}

/* the selected configuration at every p (--json; rf-experiment's parts in main.c) */
static void write_json(FILE *f, const hdp_model *m, const hdp_rfexp *xp)
{
    const hdp_rfexp_summary sm = {
        .experiment = names[xp->kind], .selected_on = hdp_rfexp_select_name(xp->select),
        .val_size = xp->val_size, .test_size = hdp_rf_keys_of(m)->test_size,
        .n = hdp_rf_keys_of(m)->n, .runs = xp->runs, .grid = xp->full ? "full" : "reduced",
        .count = xp->np, .model = m->source};
    hdp_rfexp_selected sel[HDP_RFEXP_MAX_PS]; /* np <= HDP_RFEXP_MAX_PS: one per ps[] */
    for (int i = 0; i < xp->np; i++) {
        const hdp_rfexp_point *pt = &xp->points[i];
        const hdp_rfexp_config *b = &pt->cfg[pt->best];
        sel[i] = (hdp_rfexp_selected){
            .p = pt->p, .selected_C = xp->Cs[pt->best / xp->nCT],
            .selected_CT = xp->CTs[pt->best % xp->nCT], .selected_T = b->q.T,
            .selected_val = b->val, .selected_test = b->test, .selected_test_se = b->test_se,
            .oracle_test = pt->cfg[pt->best_test].test, .minnorm_test = pt->minnorm_test};
    }
    const cli_json_each points = {xp->np, NULL, sel, NULL, sizeof sel[0]};
    const cli_json_source src[] = {{&hdp_rfexp_fields, &sm, NULL},
                                   {&hdp_rfexp_point_fields, &points, NULL},
                                   {&hdp_rfexp_source_fields, &sm, NULL}};
    cli_json_file(f, "rf-experiment", src, (int)(sizeof src / sizeof *src), m);
}

/* the figure from the CSV's temporary file, into the set */
static void draw_figure(hdp_outset *out, const hdp_model *m, int which, const char *csv_path,
                        const char *fig_path, const char *title, const char *plist)
{
    const hdp_rf_keys *rk = hdp_rf_keys_of(m);
    char script[16];
    snprintf(script, sizeof script, "rf-p%c", names[which][1]);
    hdp_plot_vars v;
    hdp_plot_vars_init(&v);
    cli_plot_source(out, &v, "data_file", csv_path);
    hdp_plot_var_str(&v, "title_text", title);
    hdp_plot_var_str(&v, "p_list", plist);
    hdp_plot_var_str(&v, "select_text",
                     select_opt && !strcmp(select_opt, "test") ? "test" : "validation");
    hdp_plot_var_num(&v, "n_train", (double)rk->n);
    hdp_plot_var_num(&v, "d_input", (double)rk->d);
    hdp_plot_var_num(&v, "p_fixed", (double)rk->p);
    cli_draw(out, script, fig_path, &v);
}

/* Run the experiment and write its CSV, JSON and figure (all or nothing). */
static hdp_status run_and_write(const hdp_model *m, int which, long runs, const char *csv_path,
                                const char *fig_path, hdp_error *err)
{
    char title[512] = "", plist[256] = "";
    size_t tsize = sizeof title, psize = sizeof plist;
    hdp_rfexp xp;
    char what[32];
    snprintf(what, sizeof what, "rf-experiment %s", names[which]);
    report_ctx x = {&xp, {0}};
    cli_progress_start(&x.line, what, "runs", 0);
    hdp_outset out; /* opened first: an unwritable CSV stops before the computation */
    hdp_outset_init(&out, err);
    FILE *f = hdp_outset_add(&out, csv_path);
    if (!f)
        return hdp_outset_commit(&out);
    FILE *fj = NULL;
    if (json_path && !(fj = hdp_outset_add(&out, json_path)))
        return hdp_outset_commit(&out);
    hdp_rfexp_select sel = select_opt && !strcmp(select_opt, "test") ? HDP_RFEXP_SELECT_TEST
                                                                      : HDP_RFEXP_SELECT_VALIDATION;
    hdp_status st = hdp_rfexp_run_select(m, (hdp_rfexp_kind)which, full_opt, runs, sel,
                                         cli_mc_threads(&mc), x.line.tty ? cli_progress_fn : NULL,
                                         &x.line, progress, &x, &xp, err);
    cli_progress_clear(&x.line);
    if (st == HDP_OK) {
        if (which == HDP_RFEXP_P1)
            p1(m, &xp, f, title, tsize);
        else if (which == HDP_RFEXP_P4)
            p4(m, &xp, f, title, tsize);
        else
            p23(m, &xp, f, title, tsize, plist, psize);
        if (fj)
            write_json(fj, m, &xp);
        draw_figure(&out, m, which, csv_path, fig_path, title, plist);
    }
    hdp_rfexp_free(&xp);
    if (st != HDP_OK) {
        hdp_outset_abort(&out);
        return st;
    }
    return hdp_outset_commit(&out);
}

int cmd_rf_experiment(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("rf-experiment");
    cli_common common;
    out_dir = json_path = select_opt = NULL;
    full_opt = 0;
    int rc = cli_start_mc(cmd, argc, argv, &common, &mc);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    int which = cli_subcommand(cmd, &common, names, 4, 1, "name the experiment: P1, P2, P3 or P4",
                               "the first argument must be P1, P2, P3 or P4",
                               "at most one model file after the experiment's name");
    if (which < 0)
        return EXIT_BAD_INPUT;
    if (select_opt && strcmp(select_opt, "validation") && strcmp(select_opt, "test")) {
        fprintf(stderr, "hdpsgd rf-experiment: error: --select-on %s: expected validation or test\n",
                select_opt);
        return EXIT_BAD_INPUT;
    }
    long runs = mc.runs == CLI_NOT_GIVEN ? 1 : mc.runs;
    mc.runs = CLI_NOT_GIVEN;
    if (runs < 1) {
        fprintf(stderr, "hdpsgd rf-experiment: error: --runs %ld: the number of runs must be an "
                        "integer >= 1\n", runs);
        return EXIT_BAD_INPUT;
    }
    if ((rc = cli_mc_args_apply("rf-experiment", &mc, &common)))
        return rc;
    const char *dir = out_dir ? out_dir : ".";
    struct stat sb;
    int bad = stat(dir, &sb) != 0, missing = bad && errno == ENOENT;
    if (bad || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "hdpsgd rf-experiment: error: -o %s: %s (create the folder first, e.g. "
                        "mkdir -p DIR)\n",
                dir, missing ? "no such folder" : "not a directory");
        return EXIT_BAD_INPUT;
    }
    hdp_model m;
    hdp_rf_spec spec;
    hdp_rf_dpgd q0;
    if ((rc = cli_rf_load("rf-experiment", &common, &m, &spec, &q0)))
        return rc;
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st;

    char lower[3] = {'p', names[which][1], '\0'};
    char csv_path[HDP_OUT_PATH_MAX + 64], fig_path[HDP_OUT_PATH_MAX + 64];
    snprintf(csv_path, sizeof csv_path, "%s/rf-%s.csv", dir, lower);
    snprintf(fig_path, sizeof fig_path, "%s/rf-%s.png", dir, lower);
    if ((rc = cli_need_gnuplot("rf-experiment", fig_path))) {
        hdp_model_free(&m);
        return rc;
    }
    double t0 = hdp_seconds_now();
    st = run_and_write(&m, which, runs, csv_path, fig_path, &err);
    hdp_model_free(&m);
    if (st != HDP_OK)
        return cli_fail("rf-experiment", &err);
    fprintf(stderr, "hdpsgd rf-experiment %s: %.1f s -> %s, %s\n", names[which],
            hdp_seconds_now() - t0, csv_path, fig_path);
    return 0;
}
