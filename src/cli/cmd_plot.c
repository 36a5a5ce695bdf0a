/*
 * cmd_plot.c — `hdpsgd plot FILE.csv... -o FIG`: draw any of the toolkit's risk
 * CSVs (from ode, sim, sde, validate --data) with the right axes.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "io/plot.h"
#include "cli.h"

static const char *out_path, *title_opt;
static int logy_opt, bounds_opt;

const cli_opt plot_opts[] = {
    {"output", 'o', OPT_FIGURE, &out_path, "FIG", "the figure (.png, .pdf or .svg); required"},
    {"title", 0, OPT_STRING, &title_opt, "TEXT", "title (default: the file names)"},
    {"logy", 0, OPT_FLAG, &logy_opt, NULL, "logarithmic risk axis"},
    {"bounds", 0, OPT_FLAG, &bounds_opt, NULL, "draw the ODE bounds risk_upper, risk_lower"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* 1: ode CSV, 2: sim/sde CSV; 0 with a message otherwise. The input must be a regular
 * file (a FIFO would block, a device never end), start with a header the plotter knows,
 * and hold rows of as many numbers as the header has columns: bad content is bad input
 * (exit 2, the file and line named), not a gnuplot failure. */
static int csv_kind(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        fprintf(stderr, "hdpsgd plot: error: %s: cannot open: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return 0;
    }
    if (!S_ISREG(sb.st_mode)) {
        fprintf(stderr, "hdpsgd plot: error: %s: not a regular file (a %s): give the CSV file "
                        "itself\n", path, S_ISFIFO(sb.st_mode) ? "pipe" : S_ISDIR(sb.st_mode) ?
                        "directory" : "device or socket");
        close(fd);
        return 0;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return 0;
    }
    char line[8192];
    int kind = 0, columns = 0, bad = 0;
    long lineno = 0, rows = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#')
            continue;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(f)) {
            fprintf(stderr, "hdpsgd plot: error: %s:%ld: line too long for a CSV of the toolkit\n",
                    path, lineno);
            bad = 1;
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (!kind) {
            if (!strncmp(line, "t,risk,", 7)) kind = 1;
            else if (!strncmp(line, "t,mean,", 7)) kind = 2;
            else break;
            columns = 1;
            for (const char *c = line; *c; c++) columns += *c == ',';
            continue;
        }
        if (!line[0])
            continue;
        int fields = 0;
        for (char *p = line, *end;; p = end + 1) {
            double v = strtod(p, &end);
            fields++;
            if (end == p || !isfinite(v) || (*end && *end != ',')) {
                fprintf(stderr, "hdpsgd plot: error: %s:%ld: field %d is not a number\n", path,
                        lineno, fields);
                bad = 1;
                break;
            }
            if (!*end)
                break;
        }
        if (!bad && fields != columns) {
            fprintf(stderr, "hdpsgd plot: error: %s:%ld: %d fields, the header has %d\n", path,
                    lineno, fields, columns);
            bad = 1;
        }
        rows++;
    }
    fclose(f);
    if (bad)
        return 0;
    if (!kind) {
        fprintf(stderr,
                "hdpsgd plot: error: %s: not a CSV of the toolkit: expected a header "
                "'t,risk,...' (ode) or 't,mean,...' (sim, sde)\n",
                path);
        return 0;
    }
    if (rows == 0) {
        fprintf(stderr, "hdpsgd plot: error: %s: no data rows under the header\n", path);
        return 0;
    }
    return kind;
}

int cmd_plot(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("plot");
    cli_common common;
    out_path = title_opt = NULL;
    logy_opt = bounds_opt = 0;
    int rc = cli_parse(cmd, argc, argv, &common);
    if (rc)
        return rc;
    if (common.help) {
        cli_print_help(cmd, stdout);
        return 0;
    }
    if (common.npos == 0 || !out_path) {
        fprintf(stderr, "hdpsgd plot: error: give one or more CSV files and -o FIG\nUsage: hdpsgd %s\n",
                cmd->usage);
        return EXIT_BAD_INPUT;
    }
    if (common.nsets) {
        fprintf(stderr, "hdpsgd plot: error: --set does not apply to plot\n");
        return EXIT_BAD_INPUT;
    }
    char ode_files[8192] = "", mc_files[8192] = "", title[1024] = "";
    for (int i = 0; i < common.npos; i++) {
        const char *p = common.pos[i];
        if (strchr(p, ' ') || strchr(p, '\'')) {
            fprintf(stderr, "hdpsgd plot: error: %s: file names with spaces or quotes are not "
                            "supported by the plot script\n", p);
            return EXIT_BAD_INPUT;
        }
        int kind = csv_kind(p);
        if (!kind)
            return EXIT_BAD_INPUT;
        char *list = kind == 1 ? ode_files : mc_files;
        size_t len = strlen(list);
        snprintf(list + len, 8192 - len, "%s%s", len ? " " : "", p);
        len = strlen(title);
        snprintf(title + len, sizeof title - len, "%s%s", len ? ", " : "", p);
    }
    char assign[20000] = "";
    hdp_plot_assign(assign, sizeof assign, "ode_files", ode_files);
    hdp_plot_assign(assign, sizeof assign, "mc_files", mc_files);
    hdp_plot_assign(assign, sizeof assign, "title_text", title_opt ? title_opt : title);
    size_t len = strlen(assign);
    snprintf(assign + len, sizeof assign - len, "logy=%d\nbounds=%d\n", logy_opt, bounds_opt);
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_plot_draw("curves", out_path, assign, &err) != HDP_OK)
        return cli_fail("plot", &err);
    fprintf(stderr, "hdpsgd plot: wrote %s\n", out_path);
    return 0;
}
