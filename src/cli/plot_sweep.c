/*
 * plot_sweep.c — a sweep's results.csv for `hdpsgd plot`: the column drawn against an axis,
 * one curve per combination of the other axes that vary (script sweep), or a heat map over
 * two axes (script sweep-heat); see plot_data.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot.h"
#include "cli.h"
#include "plot_data.h"

#define GROUP_COLS_MAX 64

/* the columns drawn and the curves: rows with the same cells in cols[] are one group */
typedef struct {
    const plot_csv *t;
    const char *xname, *yname;
    int cx, cy, cby;
    int cols[GROUP_COLS_MAX], ncols;
    long *group; /* each row's group */
    long *rep;   /* a row of each group */
    long ngroups;
} sweep_plan;

static int is_axis(const plot_csv *t, int c)
{
    /* the axes: between 'point' and 'd' */
    int d = plot_csv_col(t, "d");
    return c > 0 && (d < 0 || c < d);
}

static int need_column(const plot_csv *t, const char *opt, const char *name, int numeric)
{
    int c = plot_csv_col(t, name);
    if (c < 0) {
        char cols[4096] = "";
        for (int i = 0; i < t->ncols; i++) {
            size_t len = strlen(cols);
            snprintf(cols + len, sizeof cols - len, "%s%s", i ? ", " : "", t->cols[i]);
        }
        fprintf(stderr, "hdpsgd plot: error: %s %s: %s has no such column; its columns: %s\n", opt,
                name, t->path, cols);
        return -1;
    }
    if (numeric && !plot_column_has_numbers(t, name)) {
        fprintf(stderr, "hdpsgd plot: error: %s %s: the column holds no numbers in %s\n", opt,
                name, t->path);
        return -1;
    }
    return c;
}

/* an axis value as a tic label: numbers to 3 significant digits, words as they are */
static void tic_text(const char *cell, char *out, size_t size)
{
    char *end;
    double v = strtod(cell, &end);
    if (cell[0] && !*end && isfinite(v))
        snprintf(out, size, "%.3g", v);
    else { /* a long word: its first 60 bytes (whole characters) and an ellipsis */
        size_t n = strlen(cell);
        if (n > 60) {
            n = 60;
            while (n > 0 && ((unsigned char)cell[n] & 0xC0) == 0x80) n--;
        }
        snprintf(out, size, "%.*s%s", (int)n, cell, cell[n] ? "…" : "");
    }
}

/* --x, --y and --by as columns, and the columns that tell the curves apart */
static int plan_columns(const plot_csv *t, const plot_sweep_opts *o, sweep_plan *p)
{
    int first_axis = 1, naxes = 0;
    for (int c = 1; c < t->ncols; c++) naxes += is_axis(t, c);
    p->xname = o->x ? o->x : (naxes ? t->cols[first_axis] : "gamma");
    p->yname = o->y;
    if (!p->yname) {
        p->yname = plot_csv_col(t, "ode_final_risk") >= 0 ? "ode_final_risk" : NULL;
        for (int c = plot_csv_col(t, "epsilon_cks") + 1; !p->yname && c > 0 && c < t->ncols; c++)
            if (plot_column_has_numbers(t, t->cols[c])) p->yname = t->cols[c];
        if (!p->yname)
            return plot_bad_input("%s: no result column to draw: give --y COLUMN%s", t->path, "");
    }
    p->cx = need_column(t, "--x", p->xname, 1);
    p->cy = p->cx < 0 ? -1 : need_column(t, "--y", p->yname, 1);
    if (p->cx < 0 || p->cy < 0)
        return EXIT_BAD_INPUT;
    p->cby = -1;
    if (o->by && (p->cby = need_column(t, "--by", o->by, 0)) < 0)
        return EXIT_BAD_INPUT;
    if (p->cby == p->cx)
        return plot_bad_input("--by %s: the same column as --x %s", o->by, p->xname);
    /* the curves: one per combination of the other axes (--by first in the label) */
    p->ncols = 0;
    if (p->cby >= 0) p->cols[p->ncols++] = p->cby;
    for (int c = 1; c < t->ncols && p->ncols < GROUP_COLS_MAX; c++)
        if (is_axis(t, c) && c != p->cx && c != p->cby) {
            int varies = 0;
            for (long r = 1; r < t->nrows; r++)
                varies |= strcmp(plot_csv_cell(t, r, c), plot_csv_cell(t, 0, c)) != 0;
            if (varies) p->cols[p->ncols++] = c;
        }
    if (o->heat && (p->cby < 0 || p->ncols != 1))
        return plot_bad_input("--heat: give --by KEY, the second axis of the map (the sweep must "
                              "have exactly two axes that vary%s%s)", "", "");
    return 0;
}

/* each row's group, in the order the groups first appear */
static int plan_groups(sweep_plan *p)
{
    const plot_csv *t = p->t;
    p->group = calloc((size_t)t->nrows, sizeof *p->group);
    p->rep = calloc((size_t)t->nrows, sizeof *p->rep);
    p->ngroups = 0;
    if (!p->group || !p->rep)
        return plot_bad_input("out of memory%s%s", "", "");
    for (long r = 0; r < t->nrows; r++) {
        long g = -1;
        for (long k = 0; k < p->ngroups && g < 0; k++) {
            int same = 1;
            for (int j = 0; j < p->ncols; j++)
                same &= !strcmp(plot_csv_cell(t, r, p->cols[j]), plot_csv_cell(t, p->rep[k], p->cols[j]));
            if (same) g = k;
        }
        if (g < 0) {
            g = p->ngroups;
            p->rep[p->ngroups++] = r;
        }
        p->group[r] = g;
    }
    return 0;
}

/* group,x,y rows, each group sorted by x; a label per curve */
static void write_curves(const sweep_plan *p, FILE *f, hdp_plot_vars *v)
{
    const plot_csv *t = p->t;
    const hdp_plot_style *st = hdp_plot_get_style();
    fprintf(f, "group,x,y\n");
    for (long k = 0; k < p->ngroups; k++) {
        long cnt = 0;
        for (long r = 0; r < t->nrows; r++) cnt += p->group[r] == k;
        /* simple and stable: write the group's rows sorted by x with an insertion sort */
        long *idx = malloc((size_t)cnt * sizeof *idx), m = 0;
        for (long r = 0; idx && r < t->nrows; r++)
            if (p->group[r] == k) {
                long q = m++;
                while (q > 0 && plot_csv_num(t, idx[q - 1], p->cx) > plot_csv_num(t, r, p->cx)) {
                    idx[q] = idx[q - 1];
                    q--;
                }
                idx[q] = r;
            }
        for (long q = 0; idx && q < m; q++) {
            double y = plot_csv_num(t, idx[q], p->cy);
            fprintf(f, "%ld,%.17g,", k, plot_csv_num(t, idx[q], p->cx));
            fprintf(f, isfinite(y) ? "%.17g\n" : "\n", y);
        }
        free(idx);
        /* the label: the user's, else "axis = value, ..." of the curve, else the column */
        char var[32], *label = NULL;
        size_t llen = 0;
        FILE *lf = open_memstream(&label, &llen);
        if (lf) {
            if (k < st->nlabels)
                fputs(st->labels[k], lf);
            for (int j = 0; k >= st->nlabels && j < p->ncols; j++)
                fprintf(lf, "%s%s = %s", j ? ", " : "", t->cols[p->cols[j]],
                        plot_csv_cell(t, p->rep[k], p->cols[j]));
            fclose(lf);
        }
        snprintf(var, sizeof var, "label_%ld", k);
        if (label)
            hdp_plot_var_str(v, var, label[0] ? label : p->yname);
        else
            v->failed = 1; /* out of memory: hdp_plot_draw reports it */
        free(label);
    }
    hdp_plot_var_num(v, "ncurves", (double)p->ngroups);
}

/* ix,iy,z rows: the map on the index grid of the two axes, tics labelled with their values */
static void write_heat(const sweep_plan *p, FILE *f, hdp_plot_vars *v)
{
    const plot_csv *t = p->t;
    fprintf(f, "ix,iy,z\n");
    double zlo = INFINITY, zhi = -INFINITY;
    for (long r = 0; r < t->nrows; r++) {
        double z = plot_csv_num(t, r, p->cy);
        if (isfinite(z)) {
            zlo = fmin(zlo, z);
            zhi = fmax(zhi, z);
        }
    }
    hdp_plot_var_num(v, "zmid", isfinite(zlo) ? (zlo + zhi) / 2 : 0);
    long *xrep = calloc((size_t)t->nrows, sizeof *xrep), nx = 0; /* a row of each x */
    for (long r = 0; xrep && r < t->nrows; r++) {
        long found = -1;
        for (long k = 0; k < nx && found < 0; k++)
            if (!strcmp(plot_csv_cell(t, r, p->cx), plot_csv_cell(t, xrep[k], p->cx))) found = k;
        if (found < 0) {
            found = nx;
            xrep[nx++] = r;
        }
        double z = plot_csv_num(t, r, p->cy);
        fprintf(f, "%ld,%ld,", found, p->group[r]);
        fprintf(f, isfinite(z) ? "%.17g\n" : "\n", z);
    }
    /* the tic labels as strings (xtic_K, ytic_K from 0), never as gnuplot code */
    for (long k = 0; xrep && k < nx; k++) {
        char var[32], val[80];
        tic_text(plot_csv_cell(t, xrep[k], p->cx), val, sizeof val);
        snprintf(var, sizeof var, "xtic_%ld", k);
        hdp_plot_var_str(v, var, val);
    }
    for (long k = 0; k < p->ngroups; k++) {
        char var[32], val[80];
        tic_text(plot_csv_cell(t, p->rep[k], p->cby), val, sizeof val);
        snprintf(var, sizeof var, "ytic_%ld", k);
        hdp_plot_var_str(v, var, val);
    }
    hdp_plot_var_num(v, "nx", (double)nx);
    hdp_plot_var_num(v, "ny", (double)p->ngroups);
    hdp_plot_var_str(v, "yname", t->cols[p->cby]);
    free(xrep);
}

int plot_sweep_data(const plot_csv *t, const plot_sweep_opts *o, hdp_plot_vars *v,
                    const char **script)
{
    sweep_plan p = {.t = t};
    int rc = plan_columns(t, o, &p);
    if (!rc)
        rc = plan_groups(&p);
    plot_data_buf db = {NULL, NULL, 0};
    if (!rc)
        rc = plot_data_begin(&db);
    if (!rc) {
        FILE *f = db.f;
        if (!o->heat)
            write_curves(&p, f, v);
        else
            write_heat(&p, f, v);
        *script = o->heat ? "sweep-heat" : "sweep";
        hdp_plot_var_str(v, "xname", p.xname);
        hdp_plot_var_str(v, "zname", p.yname);
        rc = plot_data_end(&db, v, "data_file");
    }
    free(p.group);
    free(p.rep);
    return rc;
}
