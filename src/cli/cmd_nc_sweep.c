/*
 * cmd_nc_sweep.c — `hdpsgd nc --sweep flat|perturb|remedy|frame|projection`: the error against the feature
 * dimension p for a set of curves. The points are the driver's (hdpsgd/ncsweep.h); this
 * file parses --ps, prints the progress lines and writes the CSV, the JSON and the figure
 * (plots/nc-sweep.gp), all or nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot.h"
#include "hdpsgd/privacy.h"
#include "nc_cli.h"


/* --ps: comma-separated integers >= 2, increasing. Returns the count or -1 (message printed). */
static int parse_ps(const char *text, long *ps)
{
    int n = 0;
    const char *c = text;
    while (*c) {
        char *end;
        errno = 0;
        long v = strtol(c, &end, 10);
        if (end == c || errno || (*end && *end != ',') || v < 2 || v > 100000000L ||
            (n > 0 && v <= ps[n - 1]) || n == HDP_NCSWEEP_MAX_PS) {
            fprintf(stderr,
                    "hdpsgd nc: error: --ps '%s': expected up to %d increasing integers >= 2 "
                    "separated by commas (for example 10,100,1000)\n",
                    text, HDP_NCSWEEP_MAX_PS);
            return -1;
        }
        ps[n++] = v;
        c = *end ? end + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "hdpsgd nc: error: --ps is empty\n");
        return -1;
    }
    return n;
}

typedef struct {
    const hdp_ncsweep *sw;
    cli_progress line; /* the points done with the time left, on a terminal */
} sweep_report;

/* a line per point, and on a terminal the progress line under them */
static int sweep_progress(const char *what, long done, long count, double value, void *user)
{
    (void)what, (void)value;
    sweep_report *x = user;
    const hdp_ncsweep *sw = x->sw;
    const hdp_nc_point *pt = &sw->points[done - 1];
    cli_progress_clear(&x->line);
    fprintf(stderr, "hdpsgd nc --sweep %s: [%ld/%ld] %-22s p = %-6ld error %.4f +- %.4f",
            sw->name, done, count, sw->curves[pt->curve].name, pt->spec.p, pt->res.error_mean,
            pt->res.error_stderr);
    if (!isnan(pt->exact))
        fprintf(stderr, " (exact %.4f)", pt->exact);
    fprintf(stderr, "  %.2f s\n", pt->res.seconds);
    cli_progress_show(&x->line, (double)done, (double)count, NULL);
    return 0;
}

/* curve i, under its name (its table's context: the index) */
static int curve_item(const cli_json_each *e, int i, cli_json_item *it)
{
    it->name[0] = ((const hdp_ncsweep *)e->obj)->curves[i].name;
    it->ctx = &it->index;
    return 1;
}

/* JSON: the sweep, per curve the growth from the first to the last p and the flatness
 * statistic, the time, the model (nc's parts in main.c) */
static void sweep_json(FILE *jf, const hdp_model *m, const hdp_ncsweep *sw,
                       const hdp_nc_spec *base)
{
    const cli_json_each curves = {sw->ncurves, curve_item, sw, NULL, 0};
    const cli_json_source src[] = {{&hdp_nc_sweep_fields, sw, base},
                                   {&hdp_nc_sweep_curve_fields, &curves, NULL},
                                   {&hdp_nc_sweep_time_fields, sw, NULL}};
    cli_json_file(jf, "nc", src, (int)(sizeof src / sizeof *src), m);
}

/* the figure (plots/nc-sweep.gp) from the CSV's temporary file data */
static hdp_status sweep_figure(hdp_outset *out, const hdp_ncsweep *sw, const hdp_nc_spec *base,
                               const nc_args *a)
{
    char title[512], buf[64];
    double eps = hdp_zcdp_epsilon_cks(base->rho, base->delta);
    const char *what_sweep =
        !strcmp(sw->name, "flat")         ? "perfect collapse: the error does not depend on p"
        : !strcmp(sw->name, "perturb")    ? "perturbed features: the dimension comes back"
        : !strcmp(sw->name, "frame")      ? "K classes of a larger K0-simplex frame (Theorem 4)"
        : !strcmp(sw->name, "projection") ? "projection on e_1 + Δ against per-sample noise "
                                            "(Theorem 5)"
                                          : "remedies: centring and PCA";
    snprintf(title, sizeof title,
             "NoisyGD on neural-collapse features (the NC paper): %s\n"
             "K = %ld, n = %ld, G = %g, ρ = %g zCDP per step → (ε, δ) = (%.3g, %g) per step; "
             "β = %g; %ld draws per point",
             what_sweep, base->K, base->n, base->G, base->rho, eps, base->delta, base->beta,
             sw->draws);
    hdp_plot_vars v;
    hdp_plot_vars_init(&v);
    cli_plot_source(out, &v, "data_file", a->csv);
    hdp_plot_var_str(&v, "title_text", title);
    for (int c = 0; c < sw->ncurves; c++) {
        snprintf(buf, sizeof buf, "label_%d", c);
        hdp_plot_var_str(&v, buf, sw->curves[c].label);
        snprintf(buf, sizeof buf, "ref_%d", c);
        hdp_plot_var_num(&v, buf, sw->curves[c].reference);
    }
    double top = 0; /* the error axis: up to the highest point, at most 1 */
    for (long k = 0; k < (long)sw->ncurves * sw->nps; k++) {
        const hdp_nc_point *pt = &sw->points[k];
        top = fmax(top, fmax(pt->res.error_mean + pt->res.error_stderr,
                             isnan(pt->exact) ? 0 : pt->exact));
    }
    double ymax = fmin(1.04, fmax(0.1, 1.3 * top + 0.02));
    hdp_plot_var_num(&v, "ncurves", sw->ncurves);
    hdp_plot_var_num(&v, "chance", 1.0 - 1.0 / (double)base->K);
    char ym[32];
    snprintf(ym, sizeof ym, "%.6g", ymax);
    hdp_plot_var_num(&v, "ymax", strtod(ym, NULL));
    cli_draw(out, "nc-sweep", a->figure, &v);
    return out->status;
}

/* The CSV, the JSON and the figure (drawn from the CSV's temporary file), one set: nothing is
 * published unless all three were made. */
static hdp_status sweep_write(const hdp_model *m, const hdp_ncsweep *sw, const hdp_nc_spec *base,
                              const nc_args *a, hdp_error *err)
{
    hdp_outset out;
    hdp_outset_init(&out, err);
    FILE *f;
    if ((f = hdp_outset_add(&out, a->csv))) {
        char what[96];
        snprintf(what, sizeof what, "--sweep %s: misclassification error against p", sw->name);
        nc_meta(f, what, m);
        nc_csv_header(f);
        for (long k = 0; k < (long)sw->ncurves * sw->nps; k++)
            nc_csv_row(f, sw->curves[sw->points[k].curve].name, &sw->points[k]);
    }
    if ((f = hdp_outset_add(&out, a->json)))
        sweep_json(f, m, sw, base);
    if (out.status == HDP_OK)
        sweep_figure(&out, sw, base, a);
    return hdp_outset_commit(&out);
}

int nc_sweep(hdp_model *m, const hdp_nc_spec *base, nc_args *a, int threads)
{
    hdp_error err;
    hdp_error_clear(&err);
    if (!hdp_ncsweep_known(a->sweep)) {
        fprintf(stderr, "hdpsgd nc: error: --sweep '%s': expected flat, perturb, remedy, frame or "
                        "projection\n", a->sweep);
        return EXIT_BAD_INPUT;
    }
    long ps[HDP_NCSWEEP_MAX_PS];
    char frame_ps[128]; /* frame: from 5K (the largest fixed frame) */
    snprintf(frame_ps, sizeof frame_ps, "%ld,%ld,%ld,%ld,%ld", 5 * base->K, 15 * base->K,
             50 * base->K, 150 * base->K, 500 * base->K);
    int np = parse_ps(a->ps ? a->ps : !strcmp(a->sweep, "frame") ? frame_ps
                                                                  : "10,30,100,300,1000,3000,10000",
                      ps);
    if (np < 0)
        return EXIT_BAD_INPUT;
    /* every point's spec, checked before anything runs */
    hdp_ncsweep sw;
    if (hdp_ncsweep_plan(m, a->sweep, ps, np, &sw, &err) != HDP_OK) {
        if (sw.failed_curve >= 0)
            fprintf(stderr, "hdpsgd nc: curve '%s' of --sweep %s:\n",
                    sw.curves[sw.failed_curve].name, a->sweep);
        hdp_ncsweep_free(&sw);
        return cli_fail("nc", &err);
    }
    char default_csv[128], default_fig[128];
    snprintf(default_csv, sizeof default_csv, "nc-%s.csv", a->sweep);
    snprintf(default_fig, sizeof default_fig, "nc-%s.png", a->sweep);
    if (!a->csv) a->csv = default_csv;
    if (!a->figure) a->figure = default_fig;
    int rc0 = cli_need_gnuplot("nc", a->figure);
    if (rc0) {
        hdp_ncsweep_free(&sw);
        return rc0;
    }
    struct stat sb;
    if (!strcmp(a->csv, "-") || (stat(a->csv, &sb) == 0 && !S_ISREG(sb.st_mode))) {
        fprintf(stderr, "hdpsgd nc: error: -o %s: --sweep writes its CSV to a regular file (the "
                        "figure is drawn from it); nothing was run\n", a->csv);
        hdp_ncsweep_free(&sw);
        return EXIT_BAD_INPUT;
    }
    sweep_report x = {&sw, {0}};
    cli_progress_start(&x.line, "nc --sweep", "points", 0);
    hdp_status st = hdp_ncsweep_run(&sw, threads, sweep_progress, &x, &err);
    cli_progress_clear(&x.line);
    if (st == HDP_OK)
        st = sweep_write(m, &sw, base, a, &err);
    double seconds = sw.seconds;
    hdp_ncsweep_free(&sw);
    if (st != HDP_OK)
        return cli_fail("nc", &err);
    fprintf(stderr, "hdpsgd nc --sweep %s: %.1f s of Monte Carlo -> %s, %s%s%s\n",
            a->sweep, seconds, a->csv, a->figure, a->json ? ", " : "",
            a->json ? a->json : "");
    return 0;
}

