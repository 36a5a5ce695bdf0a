/*
 * cmd_plot.c — `hdpsgd plot FILE.csv... -o FIG`: draw any CSV the toolkit writes, recognised
 * by its header (plot_csv.c), with the script its own command uses (plots/NAME.gp): risk curves
 * of ode/sim/sde (several in one figure), rates, schedules, a sweep's results (curves or a
 * heat map over two axes), and the CSVs of rf, rf-experiment, kl, nc and sim-index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot.h"
#include "cli.h"
#include "plot_data.h"

static const char *out_path, *title_opt, *x_opt, *by_opt;
static cli_strings y_opt;
static int bounds_opt, heat_opt;
static char y_words[4096]; /* the --y values split at their commas */

const char plot_usage[] = "FILE.csv... -o FIG";
const char plot_help[] =
    "Draws any CSV the toolkit writes, recognised by its header (the kind is named on stderr),\n"
    "with the script its own command uses: risk CSVs of ode (t,risk,...) and sim/sde\n"
    "(t,mean,...), any number in one figure, the legend in argument order (ODE curves dashed,\n"
    "Monte Carlo means solid with a light 10-90 % band; one colour per family, the files named\n"
    "alike but for a last word ode, sim or sde, as validate's data are; one family: validate's\n"
    "colours; the row t = 1, the output theta_n, as markers side by side about t = 1); rates\n"
    "(rates -o, or its figure data); schedules (schedule --figure data) and table schedules\n"
    "(schedule -o);\n"
    "a sweep's results.csv (--x KEY --y COLUMN[,COLUMN...] [--by KEY]: one colour per value of\n"
    "the other axes, one line per column in it: a column with a standard-error column, the\n"
    "column named COLUMN_stderr or COLUMN with its last word replaced by stderr\n"
    "(sim_final_risk: sim_final_stderr), solid with error bars, the others (the ODE) dashed;\n"
    "axes labelled by the keys' help and the columns' meaning; --heat: a map over two axes);\n"
    "rf, rf-experiment P1-P4, kl bound, kl run (--vs), nc --sweep, sim-index --experiment.\n"
    "The format follows FIG's extension: .png, .pdf, .svg, .eps, .tex (cairolatex, with its\n"
    "graphics file FIG-without-extension-graphic.pdf). The figure options are those of every --figure.";

const cli_opt plot_opts[] = {
    {"output", 'o', OPT_FIGURE, &out_path, "FIG",
     "the figure (.png, .pdf, .svg, .eps or .tex); required"},
    {"title", 0, OPT_STRING, &title_opt, "TEXT", "title (default: what the CSV holds; none for risk curves, which the legend names)"},
    {"bounds", 0, OPT_FLAG, &bounds_opt, NULL, "risk curves: draw the ODE bounds risk_upper, risk_lower"},
    {"x", 0, OPT_STRING, &x_opt, "KEY", "sweep results: the axis (column) along x (default: the first axis)"},
    {"y", 0, OPT_STRINGS, &y_opt, "COLUMN[,COLUMN...]",
     "sweep results: the columns drawn, repeatable (default: ode_final_risk, else the first "
     "result); error bars from their *_stderr columns"},
    {"by", 0, OPT_STRING, &by_opt, "KEY",
     "sweep results: one curve per value of this axis (default: every other axis)"},
    {"heat", 0, OPT_FLAG, &heat_opt, NULL,
     "sweep results: a heat map of --y over --x and --by (two axes)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---- risk curves: ode, sim, sde ---- */

static const char *default_label(const plot_csv *t)
{
    if (t->kind != PK_MC)
        return "ODE R(t)";
    return !strcmp(t->command, "sde") ? "SDE mean, 10–90 %" : "Monte Carlo mean, 10–90 %";
}

/* a file's family: its name without the folder, ".csv" and a last word ode, sim or sde
 * ("run1.ode.csv", "run1-sim.csv": run1; "ode.csv": the empty family). out holds path's size. */
static void family_of(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s", base_name(path));
    size_t n = strlen(out);
    if (n >= 4 && !strcmp(out + n - 4, ".csv"))
        out[n -= 4] = '\0';
    static const char *const kinds[] = {"ode", "sim", "sde"};
    for (int k = 0; k < 3; k++)
        if (n >= 3 && !strcmp(out + n - 3, kinds[k]) &&
            (n == 3 || out[n - 4] == '.' || out[n - 4] == '-' || out[n - 4] == '_')) {
            out[n == 3 ? 0 : n - 4] = '\0';
            break;
        }
}

/* the curves in argument order: file i (from 1) of kind kind_i ('o', 'm' Monte Carlo, 's'
 * SDE), colour colour_i (a house line type: one family, validate's colours by kind; several,
 * one colour per family in order of appearance), legend label_i */
static int draw_curves(plot_csv *tabs, int n, hdp_plot_vars *v, hdp_error *err)
{
    const char *files[MAX_POSITIONAL];
    char (*fam)[4200] = malloc(sizeof(char[4200]) * (size_t)n), kinds[2 * MAX_POSITIONAL + 1] = "";
    char ode_idx[8 * MAX_POSITIONAL] = "", mc_idx[8 * MAX_POSITIONAL] = "";
    int famno[MAX_POSITIONAL], nfam = 0;
    const hdp_plot_style *st = hdp_plot_get_style();
    if (!fam)
        return plot_bad_input("out of memory%s%s", "", "");
    for (int i = 0; i < n; i++) {
        files[i] = tabs[i].path;
        family_of(tabs[i].path, fam[i], sizeof fam[i]);
        famno[i] = 0;
        for (int j = 0; j < i && !famno[i]; j++)
            if (!strcmp(fam[i], fam[j])) famno[i] = famno[j];
        if (!famno[i]) famno[i] = ++nfam;
    }
    for (int i = 0; i < n; i++) {
        int mc = tabs[i].kind == PK_MC, sde = mc && !strcmp(tabs[i].command, "sde");
        char var[32], *list = mc ? mc_idx : ode_idx;
        size_t len = strlen(kinds), ll = strlen(list);
        snprintf(kinds + len, sizeof kinds - len, "%s%c", i ? " " : "", sde ? 's' : mc ? 'm' : 'o');
        snprintf(list + ll, sizeof ode_idx - ll, "%s%d", ll ? " " : "", i + 1);
        snprintf(var, sizeof var, "colour_%d", i + 1);
        hdp_plot_var_num(v, var, nfam > 1 ? famno[i] : sde ? 3 : mc ? 1 : 2);
        snprintf(var, sizeof var, "label_%d", i + 1);
        if (i < st->nlabels) {
            hdp_plot_var_str(v, var, st->labels[i]);
            continue;
        }
        const char *what = default_label(&tabs[i]);
        int same = 0; /* another input of its family with this label: the file names tell them apart */
        for (int j = 0; j < n; j++)
            same += famno[j] == famno[i] && !strcmp(default_label(&tabs[j]), what);
        char *label = NULL;
        size_t size = 0;
        FILE *lf = open_memstream(&label, &size);
        if (lf) {
            if (same > 1)
                fprintf(lf, "%s (%s)", what, base_name(files[i]));
            else if (nfam > 1)
                fprintf(lf, "%s: %s", fam[i][0] ? fam[i] : base_name(files[i]), what);
            else
                fputs(what, lf);
            fclose(lf);
        }
        if (label)
            hdp_plot_var_str(v, var, label);
        else
            v->failed = 1;
        free(label);
    }
    free(fam);
    hdp_plot_var_files(v, "files", files, n);
    hdp_plot_var_str(v, "kinds", kinds);
    hdp_plot_var_str(v, "ode_idx", ode_idx);
    hdp_plot_var_str(v, "mc_idx", mc_idx);
    hdp_plot_var_num(v, "bounds", bounds_opt);
    return hdp_plot_draw(NULL, "curves", out_path, v, err) == HDP_OK ? 0 : -1;
}

/* the inputs and the options together: 0, or EXIT_BAD_INPUT after the message */
static int check_inputs(const plot_csv *tabs, int n, int curves)
{
    int rc = 0;
    if (!curves && n > 1)
        rc = plot_bad_input("%s is a CSV of %s: it is drawn alone (only ode, sim and sde CSVs "
                            "share a figure)", tabs[0].kind == PK_ODE || tabs[0].kind == PK_MC ? tabs[1].path
                                                                                               : tabs[0].path,
                            plot_kind_name(tabs[0].kind == PK_ODE || tabs[0].kind == PK_MC ? tabs[1].kind
                                                                                          : tabs[0].kind));
    if (!rc && n == 1 && tabs[0].kind != PK_SWEEP && (x_opt || y_opt.n || by_opt || heat_opt))
        rc = plot_bad_input("--x, --y, --by and --heat apply to a sweep's results.csv, not to %s (%s)",
                            tabs[0].path, plot_kind_name(tabs[0].kind));
    if (!rc && bounds_opt && !curves)
        rc = plot_bad_input("--bounds applies to ode CSVs, not to %s (%s)", tabs[0].path,
                            plot_kind_name(tabs[0].kind));
    if (!rc && curves && hdp_plot_get_style()->nlabels > n)
        rc = cli_bad("plot", "%d --label options for %d input files: one label per file, in "
                     "order", hdp_plot_get_style()->nlabels, n);
    return rc;
}

/* the title: --title, else what the files hold (risk curves: none, the legend names them; any other CSV: the
 * command and what it wrote, from its first comment line, without parenthesised references);
 * NULL when out of memory */
static char *make_title(const plot_csv *tabs, int n, int curves)
{
    char *title = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&title, &size);
    if (!f)
        return NULL;
    if (title_opt) {
        fputs(title_opt, f);
    } else if (curves) {
        (void)n; /* none: the legend names the curves */
    } else {
        const char *d = tabs[0].description ? tabs[0].description : "";
        fprintf(f, "%s%s", tabs[0].command, d[0] ? ": " : "");
        int depth = 0;
        char last = ' ';
        for (const char *c = d; *c; c++) {
            if (!depth && *c == ' ' && c[1] == '(') /* " (...)" left out */
                continue;
            if (depth || (*c == '(' && last != ' ' && c > d && c[-1] == ' ')) {
                depth += (*c == '(') - (*c == ')');
                continue;
            }
            fputc(*c, f);
            last = *c;
        }
    }
    if (fclose(f) != 0) {
        free(title);
        return NULL;
    }
    return title;
}

/* the --y values, each a column or a comma-separated list of columns, into o->ys */
static int split_ys(plot_sweep_opts *o)
{
    size_t used = 0;
    o->ny = 0;
    for (int i = 0; i < y_opt.n; i++) {
        const char *c = y_opt.v[i];
        for (;;) {
            size_t len = strcspn(c, ",");
            if (len == 0 || used + len + 1 > sizeof y_words)
                return plot_bad_input("--y %s: %s", y_opt.v[i],
                                      len ? "too long" : "expected COLUMN[,COLUMN...] (an empty name)");
            if (o->ny == PLOT_SWEEP_MAX_Y)
                return plot_bad_input("--y %s: at most 16 columns in one figure%s", y_opt.v[i], "");
            snprintf(y_words + used, sizeof y_words - used, "%.*s", (int)len, c);
            o->ys[o->ny++] = y_words + used;
            used += len + 1;
            if (!c[len])
                break;
            c += len + 1;
        }
    }
    return 0;
}

/* one CSV other than risk curves: its data (the CSV, or data made from it), variables and
 * script; 0, -1 when drawing failed (err), or EXIT_BAD_INPUT */
static int draw_one(const plot_csv *t, hdp_plot_vars *v, hdp_error *err)
{
    const char *script = NULL;
    char fams[1024];
    int rc;
    if (t->kind == PK_RATES) {
        rc = plot_rates_data(t, v, fams, sizeof fams);
        if (!rc) {
            hdp_plot_var_str(v, "families", fams);
            script = "rates";
        }
    } else if (t->kind == PK_SWEEP) {
        plot_sweep_opts so = {.x = x_opt, .by = by_opt, .heat = heat_opt};
        rc = split_ys(&so);
        if (!rc)
            rc = plot_sweep_data(t, &so, v, &script);
        if (!title_opt) /* results.csv has no comment lines */
            hdp_plot_var_str(v, "title_text", "");
    } else {
        rc = plot_family_vars(t, v, &script);
        if (!rc)
            hdp_plot_var_file(v, "data_file", t->path);
    }
    if (rc)
        return rc;
    return hdp_plot_draw(NULL, script, out_path, v, err) == HDP_OK ? 0 : -1;
}

int cmd_plot(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("plot");
    cli_common common;
    out_path = title_opt = x_opt = by_opt = NULL;
    y_opt.n = 0;
    bounds_opt = heat_opt = 0;
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (common.npos == 0 || !out_path)
        return cli_bad("plot", "give one or more CSV files and -o FIG\nUsage: hdpsgd %s",
                       cli_usage_str(cmd));
    if (common.nsets)
        return cli_bad("plot", "--set does not apply to plot");
    plot_csv tabs[MAX_POSITIONAL];
    int n = 0;
    for (int i = 0; i < common.npos; i++, n++)
        if ((rc = plot_csv_read(common.pos[i], &tabs[i])) != 0)
            break;
    int curves = 1;
    for (int i = 0; !rc && i < n; i++)
        curves &= tabs[i].kind == PK_ODE || tabs[i].kind == PK_MC;
    if (!rc)
        rc = check_inputs(tabs, n, curves);
    hdp_plot_vars v;
    hdp_plot_vars_init(&v);
    char *title = rc ? NULL : make_title(tabs, n, curves);
    if (!rc && !title)
        rc = plot_bad_input("out of memory%s%s", "", "");
    hdp_error err;
    hdp_error_clear(&err);
    int drawn = -2;
    if (!rc) {
        hdp_plot_var_str(&v, "title_text", title);
        drawn = curves ? draw_curves(tabs, n, &v, &err) : draw_one(&tabs[0], &v, &err);
        if (drawn == EXIT_BAD_INPUT) /* before drawing */
            rc = drawn;
    }
    free(title);
    hdp_plot_vars_free(&v);
    plot_kind kind0 = n > 0 ? tabs[0].kind : PK_NONE;
    for (int i = 0; i < n && i < common.npos; i++)
        if (tabs[i].ncols) plot_csv_free(&tabs[i]);
    if (rc)
        return rc;
    if (drawn == -1)
        return cli_fail("plot", &err);
    fprintf(stderr, "hdpsgd plot: wrote %s (%s)\n", out_path,
            curves ? "risk curves" : plot_kind_name(kind0));
    return 0;
}
