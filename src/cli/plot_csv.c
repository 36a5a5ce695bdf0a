/* plot_csv.c — reading and recognising the toolkit's CSV files for `hdpsgd plot`; see plot_csv.h. */
#include "plot_csv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

const char plot_csv_accepted[] =
    "t,risk,... (ode), t,mean,... (sim, sde), gamma,risk_<family>,... (rates --figure data), "
    "gamma,n,family,final_risk,... (rates -o), t,eta_<family>,... (schedule --figure data), "
    "two columns t eta under '# hdpsgd ... schedule' (schedule --optimize -o), "
    "point,... (sweep results.csv), step,tau,dpgd_test,... (rf), p,minnorm_test,... p,CT,T,... "
    "C,CT,T,... (rf-experiment P1-P4), axis,depth,width,... (kl bound), epoch,T,... (kl run), "
    "depth|width,<scheme>_kl_early,... (kl run --vs), curve,name,p,... (nc --sweep), "
    "epsilon_target,..., n,risk,..., bin_lo,... (sim-index --experiment), "
    "width|samples,...,rf_test_accuracy,... (net --vs), step,time,...,test_loss,... (net)";

static const char *kind_names[PK_COUNT] = {
    "unknown", "ode", "sim/sde", "rates (figure data)", "rates", "schedules", "schedule table",
    "sweep results",
    "rf", "rf-experiment P1", "rf-experiment P2", "rf-experiment P3", "rf-experiment P4",
    "kl bound", "kl run --vs epochs", "kl run --vs depth|width", "nc --sweep",
    "sim-index --experiment eps", "sim-index --experiment n", "sim-index --experiment align",
    "net --vs", "net"};

const char *plot_kind_name(plot_kind k) { return k < PK_COUNT ? kind_names[k] : "unknown"; }

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

int plot_csv_col(const plot_csv *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->cols[i], name))
            return i;
    return -1;
}

const char *plot_csv_cell(const plot_csv *t, long row, int col)
{
    if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
        return "";
    return t->cells[row * t->ncols + col];
}

double plot_csv_num(const plot_csv *t, long row, int col)
{
    const char *c = plot_csv_cell(t, row, col);
    char *end;
    if (!c[0])
        return NAN;
    double v = strtod(c, &end);
    return *end ? NAN : v;
}

/* The value after "pat" on a line of text (up to the line's end), or NULL. */
static const char *line_value(const char *text, const char *pat, char *buf, size_t size)
{
    size_t pl = strlen(pat);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, pat, pl))
            continue;
        p += pl;
        size_t len = strcspn(p, "\n");
        snprintf(buf, size, "%.*s", (int)len, p);
        return buf;
    }
    return NULL;
}

const char *plot_csv_meta(const plot_csv *t, const char *key, char *buf, size_t size)
{
    if (!t->comments)
        return NULL;
    char pat[160];
    /* the model as '# [section]' / '# key = value' lines */
    const char *dot = strchr(key, '.');
    if (dot) {
        snprintf(pat, sizeof pat, "# [%.*s]\n", (int)(dot - key), key);
        const char *sec = strstr(t->comments, pat);
        if (sec) {
            sec += strlen(pat);
            const char *end = strstr(sec, "\n# [");
            size_t len = end ? (size_t)(end - sec) + 1 : strlen(sec);
            char *part = malloc(len + 1);
            if (part) {
                memcpy(part, sec, len);
                part[len] = '\0';
                snprintf(pat, sizeof pat, "# %s = ", dot + 1);
                const char *v = line_value(part, pat, buf, size);
                free(part);
                if (v)
                    return v;
            }
        }
        if (!strcmp(key, "privacy.rho")) { /* the budget given in another form */
            char line[256];
            if (line_value(t->comments, "# ; the same budget: rho = ", line, sizeof line)) {
                snprintf(buf, size, "%.*s", (int)strcspn(line, ","), line);
                return buf;
            }
        }
    }
    /* CSVs of earlier versions: '# section.key = value' */
    snprintf(pat, sizeof pat, "# %s = ", key);
    return line_value(t->comments, pat, buf, size);
}

static plot_kind recognise(const plot_csv *t)
{
    const char *h0 = t->ncols > 0 ? t->cols[0] : "", *h1 = t->ncols > 1 ? t->cols[1] : "";
    if (!strcmp(h0, "t") && !strcmp(h1, "risk")) return PK_ODE;
    if (!strcmp(h0, "t") && !strcmp(h1, "mean")) return PK_MC;
    if (!strcmp(h0, "t") && starts(h1, "eta_")) return PK_SCHEDULES;
    if (!strcmp(h0, "gamma") && starts(h1, "risk_")) return PK_RATES_FIG;
    if (!strcmp(h0, "gamma") && plot_csv_col(t, "family") >= 0 && plot_csv_col(t, "final_risk") >= 0)
        return PK_RATES;
    if (!strcmp(h0, "point") && plot_csv_col(t, "status") >= 0) return PK_SWEEP;
    if (!strcmp(h0, "step") && !strcmp(h1, "tau")) return PK_RF_RUN;
    if (!strcmp(h0, "p") && !strcmp(h1, "minnorm_test")) return PK_RF_P1;
    if (!strcmp(h0, "p") && !strcmp(h1, "CT") && plot_csv_col(t, "etaTp_over_d") >= 0)
        return strstr(t->command, "P3") ? PK_RF_P3 : PK_RF_P2;
    if (!strcmp(h0, "C") && !strcmp(h1, "CT")) return PK_RF_P4;
    if (!strcmp(h0, "axis") && !strcmp(h1, "depth")) return PK_KL_BOUND;
    if (!strcmp(h0, "epoch") && !strcmp(h1, "T")) return PK_KL_EPOCHS;
    if ((!strcmp(h0, "depth") || !strcmp(h0, "width")) && strstr(h1, "_kl_early")) return PK_KL_SWEEP;
    if (!strcmp(h0, "curve") && !strcmp(h1, "name") && plot_csv_col(t, "p") >= 0) return PK_NC_SWEEP;
    if (!strcmp(h0, "epsilon_target") && plot_csv_col(t, "risk") >= 0) return PK_SI_EPS;
    if (!strcmp(h0, "n") && !strcmp(h1, "risk") && plot_csv_col(t, "alignment_mean") >= 0)
        return PK_SI_N;
    if (!strcmp(h0, "bin_lo") && plot_csv_col(t, "bin_mid") >= 0) return PK_SI_ALIGN;
    if ((!strcmp(h0, "width") || !strcmp(h0, "samples")) && plot_csv_col(t, "rf_test_accuracy") >= 0)
        return PK_NET_VS;
    if (!strcmp(h0, "step") && !strcmp(h1, "time") && plot_csv_col(t, "test_loss") >= 0)
        return PK_NET_CURVE;
    return PK_NONE;
}

/* split a line at commas (a field in double quotes may hold commas) in place */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return n + 1;
        if (*p == '"') {
            char *q = ++p, *w = p;
            while (*q && !(*q == '"' && q[1] != '"')) {
                if (*q == '"') q++;
                *w++ = *q++;
            }
            if (*q) q++;
            *w = '\0';
            fields[n++] = p;
            p = q;
            if (*p == ',') {
                *p++ = '\0';
                continue;
            }
            return n;
        }
        fields[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            return n;
        *c = '\0';
        p = c + 1;
    }
}

void plot_csv_free(plot_csv *t)
{
    for (int i = 0; i < t->ncols; i++) free(t->cols[i]);
    free(t->cols);
    for (long i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    free(t->comments);
    free(t->description);
    memset(t, 0, sizeof *t);
}

#define FAIL(...)                                                                                \
    do {                                                                                         \
        fprintf(stderr, "hdpsgd plot: error: " __VA_ARGS__);                                     \
        goto bad;                                                                                \
    } while (0)

/* path opened for reading if it is a regular file, else NULL after the message */
static FILE *open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        fprintf(stderr, "hdpsgd plot: error: %s: cannot open: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        fprintf(stderr, "hdpsgd plot: error: %s: not a regular file (a %s): give the CSV file "
                        "itself\n", path, S_ISFIFO(sb.st_mode) ? "pipe" : S_ISDIR(sb.st_mode) ?
                        "directory" : "device or socket");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f)
        close(fd);
    return f;
}

/* a '#' line: kept in t->comments; the first "# hdpsgd V (git X) CMD: DESCRIPTION" names the
 * command and what it wrote. 0, or -1 when out of memory */
static int add_comment(plot_csv *t, const char *line, size_t *comments_len)
{
    size_t l = strlen(line);
    char *nc = realloc(t->comments, *comments_len + l + 2);
    if (!nc)
        return -1;
    t->comments = nc;
    memcpy(t->comments + *comments_len, line, l);
    *comments_len += l;
    t->comments[(*comments_len)++] = '\n';
    t->comments[*comments_len] = '\0';
    int semi = starts(line, "# ; hdpsgd "); /* since issue 22; "# hdpsgd " before */
    if (!t->command[0] && (semi || starts(line, "# hdpsgd "))) {
        const char *p = line + (semi ? 11 : 9);
        p += strcspn(p, " ");                   /* the version */
        while (*p == ' ') p++;
        if (*p == '(') p += strcspn(p, ")") + (p[strcspn(p, ")")] ? 1 : 0);
        while (*p == ' ') p++;
        size_t cl = strcspn(p, ":");
        if (cl >= sizeof t->command)
            return 0; /* not a command of the toolkit: no title from it */
        snprintf(t->command, sizeof t->command, "%.*s", (int)cl, p);
        const char *d = p + cl + (p[cl] ? 1 : 0);
        while (*d == ' ') d++;
        free(t->description);
        if (!(t->description = strdup(d)))
            return -1;
    }
    return 0;
}

/* schedule --optimize -o: a first data line of two numbers under the schedule's comment
 * makes a table schedule, columns t eta; its lines are whitespace-separated, rewritten in
 * place with commas. 1 for a line of a table schedule, 0 for any other, -1 out of memory */
static int table_schedule_line(plot_csv *t, char *line)
{
    if (!t->ncols && starts(t->command, "schedule")) {
        double a, b;
        char tail;
        if (sscanf(line, "%lf %lf %c", &a, &b, &tail) == 2) {
            t->cols = calloc(2, sizeof *t->cols);
            if (!t->cols)
                return -1;
            t->cols[0] = strdup("t");
            t->cols[1] = strdup("eta");
            t->ncols = 2;
            t->kind = PK_SCHED_TABLE;
        }
    }
    if (t->kind != PK_SCHED_TABLE)
        return 0;
    char *w = line;
    for (char *r = line; *r;) {
        if (*r == ' ' || *r == '\t') {
            while (*r == ' ' || *r == '\t') r++;
            if (w != line && *r) *w++ = ',';
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return 1;
}

/* a data row of n fields (numbers where the kind needs them) appended to the table: 0, or
 * EXIT_BAD_INPUT after the message */
static int add_row(plot_csv *t, char **fields, int n, int numbers, long *cap, long lineno)
{
    if (n != t->ncols) {
        fprintf(stderr, "hdpsgd plot: error: %s:%ld: %d fields, the header has %d\n", t->path,
                lineno, n, t->ncols);
        return EXIT_BAD_INPUT;
    }
    for (int i = 0; numbers && i < n; i++) {
        char *end;
        double v = strtod(fields[i], &end);
        if (end == fields[i] || *end || !isfinite(v)) {
            fprintf(stderr, "hdpsgd plot: error: %s:%ld: field %d is not a number\n", t->path,
                    lineno, i + 1);
            return EXIT_BAD_INPUT;
        }
    }
    if (t->nrows == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        char **nc = realloc(t->cells, (size_t)*cap * (size_t)t->ncols * sizeof *nc);
        if (!nc) {
            fprintf(stderr, "hdpsgd plot: error: %s: out of memory\n", t->path);
            return EXIT_BAD_INPUT;
        }
        t->cells = nc;
    }
    for (int i = 0; i < n; i++) t->cells[t->nrows * t->ncols + i] = strdup(fields[i]);
    t->nrows++;
    return 0;
}

int plot_csv_read(const char *path, plot_csv *t)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    char line[16384];
    char *fields[4096];
    char header[128] = "";
    size_t comments_len = 0;
    long lineno = 0, cap = 0;
    FILE *f = open_regular(path);
    if (!f)
        return EXIT_BAD_INPUT;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(f))
            FAIL("%s:%ld: line too long for a CSV of the toolkit\n", path, lineno);
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#') {
            if (add_comment(t, line, &comments_len) != 0) FAIL("%s: out of memory\n", path);
            continue;
        }
        int table = table_schedule_line(t, line);
        if (table < 0) FAIL("%s: out of memory\n", path);
        if (!t->ncols) {
            snprintf(header, sizeof header, "%s", line);
            int n = split(line, fields, 4096);
            if (n > 4096 || n < 2 || !line[0])
                break; /* not a header of the toolkit */
            t->cols = calloc((size_t)n, sizeof *t->cols);
            if (!t->cols) FAIL("%s: out of memory\n", path);
            for (int i = 0; i < n; i++) t->cols[i] = strdup(fields[i]);
            t->ncols = n;
            t->kind = recognise(t);
            if (t->kind == PK_NONE)
                break;
            continue;
        }
        if (!line[0])
            continue;
        int n = split(line, fields, t->ncols);
        if (add_row(t, fields, n, t->kind == PK_ODE || t->kind == PK_MC || table, &cap, lineno))
            goto bad;
    }
    fclose(f);
    f = NULL;
    if (t->kind == PK_NONE) {
        fprintf(stderr, "hdpsgd plot: error: %s: not a CSV of the toolkit: its header '%.80s' is "
                        "none of the accepted ones: %s\n",
                path, header[0] ? header : "(none)", plot_csv_accepted);
        goto bad;
    }
    if (t->nrows == 0) {
        fprintf(stderr, "hdpsgd plot: error: %s: no data rows under the header\n", path);
        goto bad;
    }
    return 0;
bad:
    if (f) fclose(f);
    plot_csv_free(t);
    return EXIT_BAD_INPUT;
}
