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
    const char *xname, *yname;               /* yname: the first column drawn */
    const char *ynames[PLOT_SWEEP_MAX_Y];
    int cx, cy, cby;
    int cys[PLOT_SWEEP_MAX_Y], ces[PLOT_SWEEP_MAX_Y], ny; /* ces: the stderr column, or -1 */
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

/* The error bars of column y: the column y_stderr, else y with its last word replaced by
 * "stderr" (sim_final_risk: sim_final_stderr), when it holds numbers; -1 when none. */
static int stderr_column(const plot_csv *t, const char *y)
{
    char name[512];
    if (strlen(y) > 400 || (strlen(y) >= 7 && !strcmp(y + strlen(y) - 7, "_stderr")))
        return -1;
    snprintf(name, sizeof name, "%s_stderr", y);
    int c = plot_csv_col(t, name);
    const char *last = strrchr(y, '_');
    if (c < 0 && last) {
        snprintf(name, sizeof name, "%.*s_stderr", (int)(last - y), y);
        c = plot_csv_col(t, name);
    }
    return c >= 0 && plot_column_has_numbers(t, t->cols[c]) ? c : -1;
}

/* --x, --y and --by as columns, and the columns that tell the curves apart */
static int plan_columns(const plot_csv *t, const plot_sweep_opts *o, sweep_plan *p)
{
    int first_axis = 1, naxes = 0;
    for (int c = 1; c < t->ncols; c++) naxes += is_axis(t, c);
    p->xname = o->x ? o->x : (naxes ? t->cols[first_axis] : "gamma");
    p->ny = o->ny;
    for (int j = 0; j < o->ny; j++) p->ynames[j] = o->ys[j];
    if (!p->ny) {
        const char *y = plot_csv_col(t, "ode_final_risk") >= 0 ? "ode_final_risk" : NULL;
        for (int c = plot_csv_col(t, "delta") + 1; !y && c > 0 && c < t->ncols; c++)
            if (plot_column_has_numbers(t, t->cols[c])) y = t->cols[c];
        if (!y)
            return plot_bad_input("%s: no result column to draw: give --y COLUMN%s", t->path, "");
        p->ynames[p->ny++] = y;
    }
    if (o->heat && p->ny > 1)
        return plot_bad_input("--heat draws one column: give one --y, not %s and %s",
                              p->ynames[0], p->ynames[1]);
    p->yname = p->ynames[0];
    p->cx = need_column(t, "--x", p->xname, 1);
    if (p->cx < 0)
        return EXIT_BAD_INPUT;
    for (int j = 0; j < p->ny; j++) {
        for (int k = 0; k < j; k++)
            if (!strcmp(p->ynames[k], p->ynames[j]))
                return plot_bad_input("--y %s: given twice%s", p->ynames[j], "");
        if ((p->cys[j] = need_column(t, "--y", p->ynames[j], 1)) < 0)
            return EXIT_BAD_INPUT;
        p->ces[j] = stderr_column(t, p->ynames[j]);
    }
    p->cy = p->cys[0];
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

/* a number cell of the figure's data: empty when not finite or absent (c < 0) */
static void put_num(FILE *f, const plot_csv *t, long r, int c)
{
    double y = c >= 0 ? plot_csv_num(t, r, c) : NAN;
    fprintf(f, isfinite(y) ? ",%.17g" : ",", y);
}

/* one series per column drawn: its legend text (where it comes from, or what it measures
 * when the columns measure different things), its line (a column with error bars: solid,
 * the others dashed, dotted...), and the y axis's label */
static void column_vars(const sweep_plan *p, hdp_plot_vars *v, int legend_by_column)
{
    enum { W = 4400 }; /* a column's name is at most 4095 bytes: its words are never cut */
    const hdp_plot_style *st = hdp_plot_get_style();
    char (*what)[W] = malloc(sizeof(char[W]) * (size_t)p->ny * 2), (*source)[W] = what + p->ny;
    char var[32], *text = NULL;
    size_t tlen = 0;
    FILE *tf = what ? open_memstream(&text, &tlen) : NULL;
    if (!tf) {
        free(what);
        v->failed = 1; /* out of memory: hdp_plot_draw reports it */
        return;
    }
    int same = 1, dash = 2;
    for (int j = 0; j < p->ny; j++) {
        plot_column_words(p->ynames[j], what[j], W, source[j], W);
        same &= !strcmp(what[j], what[0]);
    }
    for (int j = 0; j < (same ? 1 : p->ny); j++) fprintf(tf, "%s%s", j ? " / " : "", what[j]);
    fflush(tf);
    hdp_plot_var_str(v, "zname", text ? text : "");
    char err_cols[128] = "", line_cols[128] = "";
    for (int j = 0; j < p->ny; j++) {
        int bars = p->ces[j] >= 0;
        char *list = bars ? err_cols : line_cols;
        size_t len = strlen(list);
        snprintf(list + len, sizeof err_cols - len, "%s%d", len ? " " : "", j + 1);
        snprintf(var, sizeof var, "dash_%d", j + 1);
        hdp_plot_var_num(v, var, bars || p->ny == 1 ? 1 : dash++);
        snprintf(var, sizeof var, "ptype_%d", j + 1);
        hdp_plot_var_num(v, var, bars ? 7 : j % 2 ? 9 : 5);
        rewind(tf);
        if (legend_by_column && j < st->nlabels)
            fputs(st->labels[j], tf);
        else if (same && source[j][0])
            fprintf(tf, "%s%s", source[j], bars ? " ± stderr" : "");
        else
            fprintf(tf, "%s%s%s%s", what[j], source[j][0] ? ", " : "", source[j],
                    bars ? " ± stderr" : "");
        fputc('\0', tf);
        fflush(tf);
        snprintf(var, sizeof var, "ylab_%d", j + 1);
        hdp_plot_var_str(v, var, text ? text : "");
    }
    if (fclose(tf) != 0)
        v->failed = 1;
    free(text);
    free(what);
    hdp_plot_var_str(v, "err_cols", err_cols);
    hdp_plot_var_str(v, "line_cols", line_cols);
    hdp_plot_var_num(v, "ny", p->ny);
}

/* group,x,y1,e1,y2,e2,... rows (e: the stderr, empty without one), each group sorted by x;
 * a label per curve */
static void write_curves(const sweep_plan *p, FILE *f, hdp_plot_vars *v)
{
    const plot_csv *t = p->t;
    const hdp_plot_style *st = hdp_plot_get_style();
    fprintf(f, "group,x");
    for (int j = 1; j <= p->ny; j++) fprintf(f, ",y%d,e%d", j, j);
    fprintf(f, "\n");
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
        if (!idx && cnt)
            v->failed = 1; /* out of memory: hdp_plot_draw reports it */
        for (long q = 0; idx && q < m; q++) {
            fprintf(f, "%ld,%.17g", k, plot_csv_num(t, idx[q], p->cx));
            for (int j = 0; j < p->ny; j++) {
                put_num(f, t, idx[q], p->cys[j]);
                put_num(f, t, idx[q], p->ces[j]);
            }
            fputc('\n', f);
        }
        free(idx);
        /* the label: the user's, else "axis = value, ..." of the curve, else the column */
        char var[32], *label = NULL;
        size_t llen = 0;
        FILE *lf = open_memstream(&label, &llen);
        int users = p->ngroups > 1 && k < st->nlabels;
        if (lf) {
            if (users)
                fputs(st->labels[k], lf);
            for (int j = 0; !users && j < p->ncols; j++)
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
    /* the legend: none for one series; the columns for one curve; the curves for one
     * column; else the curves' colours and the columns' lines apart */
    int mode = p->ngroups == 1 ? (p->ny == 1 ? 0 : 1) : (p->ny == 1 ? 2 : 3);
    hdp_plot_var_num(v, "legend_mode", mode);
    column_vars(p, v, mode == 1);
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
    char ylab[4400];
    plot_axis_label(t->cols[p->cby], ylab, sizeof ylab);
    hdp_plot_var_str(v, "yname", ylab);
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
        char xlab[4400];
        plot_axis_label(p.xname, xlab, sizeof xlab);
        hdp_plot_var_str(v, "xname", xlab);
        if (o->heat) {
            char zlab[4400];
            plot_axis_label(p.yname, zlab, sizeof zlab);
            hdp_plot_var_str(v, "zname", zlab);
        }
        rc = plot_data_end(&db, v, "data_file");
    }
    free(p.group);
    free(p.rep);
    return rc;
}
