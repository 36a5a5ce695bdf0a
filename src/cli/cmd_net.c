/*
 * cmd_net.c — `hdpsgd net`: full-batch DP-GD on a two-layer ReLU network (the privacy-for-free
 * paper, Fig. 1 and the last panel of Fig. 2; docs/theory.md §7.4; the library is hdpsgd/net.h
 * and hdpsgd/netexp.h).
 *
 *   hdpsgd net [MODEL.ini]               one run of the [net] model: the curve of train,
 *                                        validation and test loss and accuracy against the
 *                                        step (DIR/net-curve.csv, .png: test loss against time);
 *   hdpsgd net --vs width|samples        Fig. 1's panel: test accuracy against the width or n,
 *                                        DP-GD, random features and GD, hyperparameters chosen
 *                                        on validation (DIR/net-width.csv, .png, ...).
 * Data: the model's [data] keys (data.source = file: features, labels, test_features,
 * test_labels, classes 0..K-1) or Gaussian inputs (data.source = synthetic; net.d,
 * net.classes, net.test_size). Outputs are written after the computation (atomically): an
 * interrupted run leaves nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "io/output.h"
#include "plot.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/netexp.h"

static const char *vs, *dir, *json_path, *grid_opt;
static int full;
static long n_opt, width_opt;
static cli_mc_args mc;

const cli_opt net_opts[] = {
    {"vs", 0, OPT_STRING, &vs, "width|samples",
     "Fig. 1's panel: test accuracy against the width or the samples n"},
    {"full", 0, OPT_FLAG, &full, NULL, "--vs: the paper's grids and sizes (hours), not the reduced ones"},
    {"grid", 0, OPT_STRING, &grid_opt, "LIST", "--vs: comma-separated widths or samples"},
    {"n", 0, OPT_LONG, &n_opt, "N", "--vs width: the samples n (default 5000; --full 50000)"},
    {"width", 0, OPT_LONG, &width_opt, "W", "--vs samples: the width (default 256; --full 1000)"},
    {"output", 'o', OPT_STRING, &dir, "DIR", "folder of the CSV and the figure (default .; '-' is not a folder: refused)"},
    {"json", 0, OPT_OUTPUT, &json_path, "FILE.json", "JSON summary"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads (default 0 = one per core); results do not depend on it"},
    {"seed", 0, OPT_STRING, &mc.seed, "S", "seed, unsigned 64-bit (overrides sim.seed)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help net` (the command table in main.c points here) */
const char net_usage[] = "[MODEL.ini]";
const char net_help[] =
    "Full-batch DP-GD on a two-layer ReLU network f(x) = A relu(W x) with K outputs (the\n"
    "privacy-for-free paper, Bombari-Mondelli: Algorithm 1, Fig. 1 and the last panel of Fig. 2;\n"
    "docs/theory.md §7.4; the [net] keys of `hdpsgd keys`). T steps of\n"
    "  theta <- theta - eta (1/n) sum_i clip(grad l_i) + sqrt(eta) (2 C_clip/n) sigma N(0, I),\n"
    "clip(g) = g min(1, C_clip/||g||) over both layers (net.train = both) or the second only\n"
    "(second: random features, W frozen, A from 0); sigma = sqrt(eta T) sqrt(8 ln(1/delta))/eps\n"
    "(the paper's bound; net.calibration = zcdp: the zCDP route), delta auto = 1/n. The\n"
    "per-sample gradient norms factor (||g_i||^2 ||h_i||^2 + ||D_i A^T g_i||^2 ||x_i||^2): no\n"
    "per-sample gradient is formed, the clipped sums are two matrix products.\n"
    "Data: [data] source = file with features, labels, test_features, test_labels (IDX, .npy,\n"
    "CSV; classes 0..K-1): the training rows shuffled by the seed, net.val_fraction of them held\n"
    "out for validation (the paper: 10 000 of 60 000), the first n for training, every split\n"
    "standardised per coordinate by the training rows. source = synthetic: x ~ N(0, I_d),\n"
    "labels argmax_k u_k^T x (net.d, net.classes, net.test_size).\n"
    "Without --vs: one run of the model; DIR/net-curve.csv (step,time,train_loss,\n"
    "train_accuracy,val_loss,val_accuracy,test_loss,test_accuracy,clipped_fraction at\n"
    "net.records + 1 steps) and DIR/net-curve.png (test loss against the time eta t: the last\n"
    "panel of Fig. 2).\n"
    "--vs width|samples: Fig. 1's panels, test accuracy against the width (at n = --n) or\n"
    "against n (at --width) for three variants on the same data: dp (DP-GD, both layers, the\n"
    "model's budget), rf (DP-GD on the second layer: random features) and gd (plain GD). At\n"
    "every point each variant's (eta, C_clip, T) is chosen on the validation split, as the paper\n"
    "does (one run per configuration: sigma depends on T; gd: early stopping on the recorded\n"
    "steps). Reduced grids by default: widths 32 ... 1024 at n = 5000, or n = 500 ... 10 000 at\n"
    "width 256, dp over eta 0.1, C_clip 1, 3, T 30, 100 (rf: eta 2/width, 6/width, C_clip 0.3,\n"
    "1 times sqrt(width), T 100, 300); --full the paper's sizes (n = 50 000, widths 16 ...\n"
    "2000; width 1000, n up to 50 000) and larger grids (hours). Writes DIR/net-width.csv (or\n"
    "net-samples.csv: the grid, then per variant (dp: no prefix; rf_, gd_) test_accuracy,\n"
    "test_loss, val_accuracy, val_loss, train_accuracy, train_loss, lr, clip, steps, sigma,\n"
    "clipped_fraction, configs) and the figure DIR/net-width.png; the JSON has the grid and\n"
    "the same names as arrays over it.\n"
    "Progress with an estimate of the time left on standard error: one line rewritten in place\n"
    "on a terminal, otherwise a line every 10 s.\n"
    "Results do not depend on --threads.";

/* ---- progress: steps of a training, or the work of an experiment's grid ---- */

typedef struct {
    cli_progress line; /* on a terminal in place, elsewhere a line every 10 s */
    const char *what;  /* "training", or the experiment's --vs */
} meter;

static int progress(const char *what, long done, long total, double value, void *user)
{
    (void)value;
    meter *mt = user;
    mt->line.unit = !strcmp(what, "net steps") ? "steps" : NULL; /* else units of work */
    cli_progress_show(&mt->line, (double)done, (double)total, "%s", mt->what);
    return 0;
}

/* ---- data ---- */

static int load_data(const hdp_model *m, long n, const char *nkey, hdp_net_data *dt)
{
    const hdp_net_keys *q = hdp_net_keys_of(m);
    hdp_error err;
    hdp_error_clear(&err);
    hdp_status st;
    if (m->data_source == HDP_SOURCE_FILE) {
        const char *need[] = {"labels", "test_features", "test_labels"};
        const char *have[] = {m->labels, m->test_features, m->test_labels};
        for (int i = 0; i < 3; i++)
            if (!have[i][0]) {
                fprintf(stderr, "hdpsgd net: error: data.source = file needs data.%s (the network "
                                "is trained on classes and tested on the held-out set)\n", need[i]);
                return EXIT_BAD_INPUT;
            }
        st = hdp_net_data_files(m->features, m->labels, m->test_features, m->test_labels, n,
                                q->val_fraction, m->seed, nkey, dt, &err);
    } else {
        long nval = (long)nearbyint(q->val_fraction * (double)n);
        st = hdp_net_data_synthetic(q->d, q->classes, n, nval, q->test_size, m->seed, dt, &err);
    }
    return st == HDP_OK ? 0 : cli_fail("net", &err);
}

/* ---- one run ---- */

static void curve_meta(FILE *f, const hdp_model *m, const hdp_net_data *dt, const hdp_net_config *c,
                       const hdp_net_result *r)
{
    fprintf(f, "# ; hdpsgd %s net: DP-GD on a two-layer ReLU network (the privacy-for-free paper, "
               "Algorithm 1; docs/theory.md §7.4)\n", hdp_version_string());
    fprintf(f, "# ; width %ld, d %ld, classes %ld, n %ld, validation %ld, test %ld (%s); train %s, "
               "loss %s, eta %.6g, T %ld, C_clip %.6g\n",
            c->width, dt->d, dt->K, dt->train.n, dt->val.n, dt->test.n,
            dt->synthetic ? "Gaussian inputs" : "files", hdp_net_train_name(c->train),
            hdp_net_loss_name(c->loss), c->lr, c->steps, c->clip);
    fprintf(f, "# ; privacy: epsilon %.6g, delta %.6g, sigma %.6g (%s), noise per coordinate "
               "%.6g\n", r->epsilon, r->delta, r->sigma,
            isinf(c->epsilon) ? "plain GD" : r->zcdp_route ? "zCDP route" : "the paper's bound",
            r->noise_std);
    hdp_model_write_meta_sections(m, f, cli_model_sections("net"));
}

/* one run's CSV, figure and JSON (all or nothing) and its line on stderr */
static hdp_status write_one(const hdp_model *m, const hdp_net_data *dt, const hdp_net_config *c,
                            const hdp_net_result *r, const char *csvp, const char *figp,
                            hdp_error *err)
{
    hdp_outset out;
    hdp_outset_init(&out, err);
    FILE *f = hdp_outset_add(&out, csvp);
    if (f) {
        curve_meta(f, m, dt, c, r);
        hdp_csv_columns(f, &hdp_net_fields, r);
        char title[400];
        snprintf(title, sizeof title, "net%s: width %ld, n = %ld, ε = %g, δ = %.2g\nC_clip = %.3g, "
                 "η = %g, T = %ld", c->train == HDP_NET_TRAIN_SECOND ? " (random features)" : "",
                 c->width, dt->train.n, c->epsilon, c->delta, c->clip, c->lr, c->steps);
        hdp_plot_vars v;
        hdp_plot_vars_init(&v);
        cli_plot_source(&out, &v, "data_file", csvp);
        hdp_plot_var_str(&v, "title_text", title);
        cli_draw(&out, "net-curve", figp, &v);
    }
    FILE *j = json_path ? hdp_outset_add(&out, json_path) : NULL;
    if (j) {
        hdp_json js;
        hdp_json_begin(&js, j);
        const cli_json_source src[] = { /* the tables of its JSON (main.c): one run's */
            {&hdp_net_fields, r, NULL}, {&hdp_net_config_fields, c, dt}};
        cli_json_write(&js, cli_find_command("net"), src, (int)(sizeof src / sizeof *src), m);
        hdp_json_end(&js);
    }
    hdp_status st = hdp_outset_commit(&out);
    if (st == HDP_OK)
        fprintf(stderr, "hdpsgd net: test accuracy %.4f, test loss %.4f after T = %ld (%.1f s on %d "
                        "thread%s); epsilon %g, delta %.3g, sigma %.4g; wrote %s and %s\n",
                r->test_accuracy[r->points - 1], r->test_loss[r->points - 1], c->steps, r->seconds,
                r->threads, r->threads == 1 ? "" : "s", c->epsilon, c->delta, r->sigma, csvp, figp);
    return st;
}

static int run_one(const hdp_model *m, int threads, const char *csvp, const char *figp)
{
    const hdp_net_keys *q = hdp_net_keys_of(m);
    hdp_net_data dt;
    int rc = load_data(m, q->n, "[net] n", &dt);
    if (rc)
        return rc;
    hdp_net_config c;
    hdp_net_config_from_model(m, q->n, &c);
    hdp_net_result r;
    hdp_error err;
    hdp_error_clear(&err);
    meter mt = {.what = "training"};
    cli_progress_start(&mt.line, "net", NULL, 10);
    hdp_status st = hdp_net_train(&dt, &c, threads, progress, &mt, &r, &err);
    cli_progress_clear(&mt.line);
    if (st == HDP_OK) {
        st = write_one(m, &dt, &c, &r, csvp, figp, &err);
        hdp_net_result_free(&r);
    }
    hdp_net_data_free(&dt);
    return st == HDP_OK ? 0 : cli_fail("net", &err);
}

/* ---- Fig. 1's panels ---- */

static const char *const prefixes[HDP_NETEXP_VARIANTS] = {"", "rf_", "gd_"};

static void vs_csv(FILE *f, const hdp_model *m, const hdp_netexp *x, const hdp_net_data *dt)
{
    const char *xname = x->kind == HDP_NETEXP_WIDTH ? "width" : "samples";
    fprintf(f, "# ; hdpsgd %s net --vs %s%s: test accuracy of DP-GD on a two-layer ReLU network "
               "against the %s (the privacy-for-free paper, Fig. 1; docs/theory.md §7.4)\n",
            hdp_version_string(), xname, x->full ? " --full" : "", xname);
    fprintf(f, "# ; variants: dp = DP-GD on both layers, rf = DP-GD on the second layer (random "
               "features), gd = plain GD; each at the configuration of best validation accuracy\n");
    fprintf(f, "# ; data: d %ld, classes %ld, validation %ld, test %ld (%s); epsilon %g, delta %s\n",
            dt->d, dt->K, dt->val.n, dt->test.n, dt->synthetic ? "Gaussian inputs" : "files",
            x->epsilon, hdp_net_keys_of(m)->delta == HDP_AUTO_DOUBLE ? "1/n" : "net.delta");
    for (int v = 0; v < HDP_NETEXP_VARIANTS; v++) {
        hdp_netexp_grid g;
        hdp_netexp_grid_of(v, x->full, &g);
        fprintf(f, "# ; grid %s: lr", hdp_netexp_variant_name(v));
        for (int i = 0; i < g.nlr; i++)
            fprintf(f, " %g%s", g.lr[i], v == HDP_NETEXP_RF ? "/width" : "");
        fprintf(f, "; C_clip");
        for (int i = 0; i < g.nclip; i++)
            fprintf(f, " %g%s", g.clip[i], v == HDP_NETEXP_RF ? " sqrt(width)" : "");
        fprintf(f, "; T");
        for (int i = 0; i < g.nsteps; i++)
            fprintf(f, " %ld", g.steps[i]);
        fprintf(f, "\n");
    }
    hdp_model_write_meta_sections(m, f, cli_model_sections("net"));
    const hdp_field_table *xt = x->kind == HDP_NETEXP_WIDTH ? &hdp_netexp_width_csv_fields
                                                             : &hdp_netexp_samples_csv_fields;
    hdp_csv_header(f, xt, 1);
    for (int v = 0; v < HDP_NETEXP_VARIANTS; v++)
        hdp_csv_header_in(f, &hdp_netexp_cell_fields, prefixes[v], "", 0);
    fputc('\n', f);
    for (long i = 0; i < x->points; i++) {
        hdp_csv_row(f, xt, x, &i, 1);
        for (int v = 0; v < HDP_NETEXP_VARIANTS; v++)
            hdp_csv_row(f, &hdp_netexp_cell_fields, &x->cell[v][i], NULL, 0);
        fputc('\n', f);
    }
}

/* the panel's JSON (the tables of net's parts in main.c): the grid, each variant's cells over
 * it under its prefix (dp's, rf_, gd_), the budget and work, the model */
static void vs_json(FILE *f, const hdp_model *m, const hdp_netexp *x)
{
    const hdp_netexp_variant dp = {x, 0}, rf = {x, 1}, gd = {x, 2};
    const int width = x->kind == HDP_NETEXP_WIDTH;
    const cli_json_source src[] = {
        {&hdp_netexp_width_fields, width ? x : NULL, NULL},
        {&hdp_netexp_samples_fields, width ? NULL : x, NULL},
        {&hdp_netexp_variant_fields, &dp, NULL}, {&hdp_netexp_variant_fields, &rf, NULL},
        {&hdp_netexp_variant_fields, &gd, NULL}, {&hdp_netexp_fields, x, NULL}};
    cli_json_file(f, "net", src, (int)(sizeof src / sizeof *src), m);
}

/* --grid: comma-separated positive integers (at most 64) */
static int parse_grid(const char *s, long *grid, long *n)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 10000000 || (*end && *end != ',') || *n >= 64) {
            fprintf(stderr, "hdpsgd net: error: --grid %s: expected up to 64 comma-separated "
                            "integers in [1, 1e7]\n", s);
            return EXIT_BAD_INPUT;
        }
        grid[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    if (*n == 0) {
        fprintf(stderr, "hdpsgd net: error: --grid is empty\n");
        return EXIT_BAD_INPUT;
    }
    return 0;
}

/* a panel's CSV, figure and JSON (all or nothing) and its lines on stderr */
static hdp_status write_vs(const hdp_model *m, const hdp_net_data *dt, const hdp_netexp *x,
                           long fixed, const char *csvp, const char *figp, hdp_error *err)
{
    hdp_netexp_kind kind = x->kind;
    hdp_outset out;
    hdp_outset_init(&out, err);
    FILE *f = hdp_outset_add(&out, csvp);
    if (f) {
        vs_csv(f, m, x, dt);
        char title[400];
        snprintf(title, sizeof title,
                 "net --vs %s: %s %ld, ε = %g, δ = %s\n%s", vs,
                 kind == HDP_NETEXP_WIDTH ? "n =" : "width", fixed, x->epsilon,
                 hdp_net_keys_of(m)->delta == HDP_AUTO_DOUBLE ? "1/n" : "net.delta",
                 dt->synthetic ? "Gaussian inputs; chosen on validation"
                               : "hyperparameters chosen on validation");
        hdp_plot_vars v;
        hdp_plot_vars_init(&v);
        cli_plot_source(&out, &v, "data_file", csvp);
        hdp_plot_var_str(&v, "title_text", title);
        hdp_plot_var_str(&v, "xcol", kind == HDP_NETEXP_WIDTH ? "width" : "samples");
        hdp_plot_var_str(&v, "xlabel_text",
                         kind == HDP_NETEXP_WIDTH ? "hidden-layer width" : "training samples  n");
        cli_draw(&out, "net-vs", figp, &v);
    }
    FILE *j = json_path ? hdp_outset_add(&out, json_path) : NULL;
    if (j)
        vs_json(j, m, x);
    hdp_status st = hdp_outset_commit(&out);
    if (st == HDP_OK) {
        for (long i = 0; i < x->points; i++)
            fprintf(stderr, "hdpsgd net: %s %-6g test accuracy dp %.4f  rf %.4f  gd %.4f\n", vs,
                    x->grid[i], x->cell[HDP_NETEXP_DP][i].test_accuracy,
                    x->cell[HDP_NETEXP_RF][i].test_accuracy, x->cell[HDP_NETEXP_GD][i].test_accuracy);
        fprintf(stderr, "hdpsgd net: %ld runs (%ld diverged, skipped) in %.1f s on %d thread%s; "
                        "wrote %s and %s\n", x->runs, x->diverged, x->seconds, x->threads,
                x->threads == 1 ? "" : "s", csvp, figp);
    }
    return st;
}

static int run_vs(const hdp_model *m, int threads, const char *csvp, const char *figp)
{
    hdp_netexp_kind kind = !strcmp(vs, "width") ? HDP_NETEXP_WIDTH : HDP_NETEXP_SAMPLES;
    long grid[64], np;
    int rc;
    if (grid_opt) {
        if ((rc = parse_grid(grid_opt, grid, &np)))
            return rc;
    } else
        np = hdp_netexp_default_grid(kind, full, grid);
    long fixed = hdp_netexp_default_fixed(kind, full);
    if (kind == HDP_NETEXP_WIDTH && n_opt != CLI_NOT_GIVEN)
        fixed = n_opt;
    if (kind == HDP_NETEXP_SAMPLES && width_opt != CLI_NOT_GIVEN)
        fixed = width_opt;
    long nmax = kind == HDP_NETEXP_WIDTH ? fixed : 0;
    for (long i = 0; kind == HDP_NETEXP_SAMPLES && i < np; i++)
        nmax = grid[i] > nmax ? grid[i] : nmax;
    if (nmax < 10 || fixed < 1) {
        fprintf(stderr, "hdpsgd net: error: n must be at least 10 and the width at least 1\n");
        return EXIT_BAD_INPUT;
    }
    hdp_net_data dt;
    if ((rc = load_data(m, nmax, kind == HDP_NETEXP_WIDTH ? (n_opt != CLI_NOT_GIVEN ? "--n" : "--vs width (its n)") : "--grid (its largest n)", &dt)))
        return rc;
    hdp_netexp x;
    hdp_error err;
    hdp_error_clear(&err);
    meter mt = {.what = vs};
    cli_progress_start(&mt.line, "net", NULL, 10);
    hdp_status st = hdp_netexp_run(m, &dt, kind, full, grid, np, fixed, threads, progress, &mt, &x, &err);
    cli_progress_clear(&mt.line);
    if (st == HDP_OK) {
        st = write_vs(m, &dt, &x, fixed, csvp, figp, &err);
        hdp_netexp_free(&x);
    }
    hdp_net_data_free(&dt);
    return st == HDP_OK ? 0 : cli_fail("net", &err);
}

/* DIR exists and is a writable folder */
static int check_dir(const char *d)
{
    struct stat sb;
    int bad = stat(d, &sb) != 0, missing = bad && errno == ENOENT;
    if (bad || !S_ISDIR(sb.st_mode) || access(d, W_OK | X_OK) != 0) {
        fprintf(stderr, "hdpsgd net: error: -o %s: %s (create the folder first, e.g. mkdir -p "
                        "DIR)\n", d, missing ? "no such folder" : "not a writable folder");
        return EXIT_BAD_INPUT;
    }
    return 0;
}

int cmd_net(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("net");
    cli_common common;
    vs = dir = json_path = grid_opt = NULL;
    full = 0;
    n_opt = width_opt = CLI_NOT_GIVEN;
    cli_mc_args_reset(&mc);
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if (vs && strcmp(vs, "width") && strcmp(vs, "samples")) {
        fprintf(stderr, "hdpsgd net: error: --vs %s: expected width or samples\n", vs);
        return EXIT_BAD_INPUT;
    }
    if (!vs && (full || grid_opt || n_opt != CLI_NOT_GIVEN || width_opt != CLI_NOT_GIVEN)) {
        fprintf(stderr, "hdpsgd net: error: --full, --grid, --n and --width need --vs (a single "
                        "run takes net.n and net.width)\n");
        return EXIT_BAD_INPUT;
    }
    if (!dir)
        dir = ".";
    if ((rc = check_dir(dir)))
        return rc;
    if ((rc = cli_mc_args_apply("net", &mc, &common)))
        return rc;
    char csvp[4200], figp[4200];
    const char *stem = vs ? (!strcmp(vs, "width") ? "net-width" : "net-samples") : "net-curve";
    if (snprintf(csvp, sizeof csvp, "%s/%s.csv", dir, stem) >= (int)sizeof csvp ||
        snprintf(figp, sizeof figp, "%s/%s.png", dir, stem) >= (int)sizeof figp) {
        fprintf(stderr, "hdpsgd net: error: -o: the folder's name is too long\n");
        return EXIT_BAD_INPUT;
    }
    if ((rc = cli_need_gnuplot("net", figp)))
        return rc;
    hdp_model m;
    if ((rc = cli_load_model(&common, &m)))
        return rc;
    int threads = cli_mc_threads(&mc);
    rc = vs ? run_vs(&m, threads, csvp, figp) : run_one(&m, threads, csvp, figp);
    hdp_model_free(&m);
    return rc;
}
