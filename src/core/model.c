/*
 * model.c — schema v1 of the model files: the core's sections ([data] ... [validate]) as
 * tables of keys (core/schema.h), and for every registered section, the core's and the
 * families' alike, parsing (inih), defaults, range checks, metadata output, documentation
 * and "did you mean" suggestions (the generic machinery in schema.c). Then finalize: the
 * core's combinations, the spectrum and schedule files, and each section's own checks.
 * See hdpsgd/model.h.
 */
#include "hdpsgd/model.h"
#include "core/check.h"
#include "core/schema.h"
#include "hdpsgd/privacy.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const spectrum_names[] = {"isotropic", "powerlaw", "twolevel", "file", NULL};
static const char *const noise_names[] = {"gaussian", "student", "rademacher", "none", NULL};
static const char *const ode_solver_names[] = {"auto", "cvode", "dop853", NULL};
static const char *const sched_names[] = {"constant", "output", "linear-noise", "optimal", "table", NULL};

#define OFF(f) offsetof(hdp_model, f)
/* a core section: its keys are fields of hdp_model; no checks of its own at finalize (the
 * core's combinations are in hdp_model_finalize) */
#define CORE_SECTION(name)                                                                  \
    static const hdp_schema_section name##_section = {#name, name##_keys,                    \
                                                      HDP_SCHEMA_NKEYS(name##_keys), 0, NULL}

/* The core's sections. Defaults here (and in the families' sections) are the built-in
 * default model: keep models/default.ini identical (a test checks it). */
static const hdp_schema_key data_keys[] = {
    {"d", HDP_KEY_LONG, OFF(d), "200", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e8, NULL,
     "dimension of data and parameter (integer in [1, 1e8])"},
    {"gamma", HDP_KEY_DOUBLE, OFF(gamma), "0.1", HDP_R_LO_OPEN, 0, 0, NULL,
     "aspect ratio d/n (> 0); n = round(d/gamma); the later of gamma and n wins"},
    {"n", HDP_KEY_LONG, OFF(n), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1e12, NULL,
     "number of samples = steps (integer in [1, 1e12]; 0 = from gamma)"},
    {"spectrum", HDP_KEY_ENUM, OFF(spectrum), "powerlaw", 0, 0, 0, spectrum_names,
     "covariance spectrum: isotropic | powerlaw | twolevel | file"},
    {"spectrum_alpha", HDP_KEY_DOUBLE, OFF(spectrum_alpha), "0.5", HDP_R_LO_CLOSED, 0, 0, NULL,
     "power-law exponent alpha >= 0: lambda_j ~ j^(-alpha)"},
    {"twolevel_fraction", HDP_KEY_DOUBLE, OFF(twolevel_fraction), "0.1",
     HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "two-level: fraction f in (0,1) of eigenvalues that are ratio times the others"},
    {"twolevel_ratio", HDP_KEY_DOUBLE, OFF(twolevel_ratio), "10", HDP_R_LO_OPEN, 0, 0, NULL,
     "two-level: ratio r > 0 of the large to the small eigenvalue"},
    {"spectrum_file", HDP_KEY_PATH, OFF(spectrum_file), "", 0, 0, 0, NULL,
     "file spectrum: one eigenvalue >= 0 per line (# comments); relative to the model file"},
    {"target_radius", HDP_KEY_DOUBLE, OFF(target_radius), "1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "norm of theta* (>= 0); theta* is uniform on the sphere of this radius"},
    {"noise", HDP_KEY_ENUM, OFF(noise), "gaussian", 0, 0, 0, noise_names,
     "label-noise law: gaussian | student | rademacher | none"},
    {"tau2", HDP_KEY_DOUBLE, OFF(tau2), "0.25", HDP_R_LO_CLOSED, 0, 0, NULL,
     "label-noise variance tau^2 >= 0 (ignored for noise = none)"},
    {"noise_df", HDP_KEY_DOUBLE, OFF(noise_df), "5", HDP_R_LO_OPEN, 2, 0, NULL,
     "Student-t degrees of freedom nu > 2"},
};
CORE_SECTION(data);

static const hdp_schema_key clip_keys[] = {
    {"c", HDP_KEY_DOUBLE, OFF(c), "0.3", HDP_R_LO_OPEN | HDP_R_INF | HDP_R_HI_CLOSED, 0, 1e50, NULL,
     "clipping constant c in (0, 1e50] or inf: per-sample gradients are clipped at c*sqrt(d)"},
};
CORE_SECTION(clip);

static const hdp_schema_key privacy_keys[] = {
    {"rho", HDP_KEY_DOUBLE, OFF(rho), "0.5", HDP_R_LO_CLOSED | HDP_R_INF, 1e-50, 0, NULL,
     "privacy parameter rho in [1e-50, inf) or inf: the output is (rho^2/2)-zCDP (smaller rho "
     "makes noise variances 1/rho^2 overflow)"},
    {"rho_zcdp", HDP_KEY_DOUBLE, OFF(rho_zcdp), "0.125", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL,
     "the budget as zCDP, rho_zcdp = rho^2/2 > 0 or inf (instead of rho)"},
    {"epsilon", HDP_KEY_DOUBLE, OFF(epsilon), "inf", HDP_R_LO_OPEN | HDP_R_INF, 0, 0, NULL,
     "the budget as (epsilon, delta)-DP with delta (instead of rho): rho_zcdp is the "
     "largest whose Canonne-Kamath-Steinke epsilon at delta is epsilon (> 0 or inf)"},
    {"delta", HDP_KEY_DOUBLE, OFF(delta), "1e-5", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "delta in (0, 1) of (epsilon, delta)-DP: with epsilon, part of the budget; else the "
     "delta at which summaries report epsilon"},
};
CORE_SECTION(privacy);

static const hdp_schema_key schedule_keys[] = {
    {"kind", HDP_KEY_ENUM, OFF(sched), "optimal", 0, 0, 0, sched_names,
     "learning-rate schedule: constant | output | linear-noise | optimal | table"},
    {"eta0", HDP_KEY_DOUBLE, OFF(eta0), "1", HDP_R_LO_OPEN, 0, 0, NULL,
     "constant/output/linear-noise: initial learning rate eta0 > 0"},
    {"c1", HDP_KEY_DOUBLE, OFF(c1), "1", HDP_R_LO_OPEN, 0, 0, NULL,
     "optimal: eta(t) = c1/(t + a), a = gamma*max(c2, c3/rho); c1 > 0"},
    {"c2", HDP_KEY_DOUBLE, OFF(c2), "1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "optimal: c2 >= 0"},
    {"c3", HDP_KEY_DOUBLE, OFF(c3), "1", HDP_R_LO_CLOSED, 0, 0, NULL,
     "optimal: c3 >= 0"},
    {"file", HDP_KEY_PATH, OFF(sched_file), "", 0, 0, 0, NULL,
     "table: two columns t, eta; t from 0 to 1 increasing, eta non-increasing"},
};
CORE_SECTION(schedule);

static const hdp_schema_key ode_keys[] = {
    {"bins", HDP_KEY_LONG, OFF(bins), "0", HDP_R_LO_CLOSED | HDP_R_AUTO | HDP_R_HI_CLOSED,
     0, 1e7, NULL,
     "eigenvalue bins: 0 = one per distinct eigenvalue; m = m quantile bins; auto = log bins "
     "with Gauss nodes, refined until the final risk moves by < spectrum_tol; at most 1e7"},
    {"spectrum_tol", HDP_KEY_DOUBLE, OFF(spectrum_tol), "1e-5", HDP_R_LO_OPEN | HDP_R_HI_OPEN,
     0, 0.1,
     NULL, "bins = auto: relative tolerance on the final risk"},
    {"rtol", HDP_KEY_DOUBLE, OFF(rtol), "1e-8", HDP_R_LO_OPEN | HDP_R_HI_OPEN, 0, 1, NULL,
     "CVODE relative tolerance in (0, 1)"},
    {"atol", HDP_KEY_DOUBLE, OFF(atol), "1e-12", HDP_R_LO_OPEN, 0, 0, NULL,
     "CVODE absolute tolerance > 0"},
    {"points", HDP_KEY_LONG, OFF(points), "101", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 2, 1e6, NULL,
     "output grid size on [0, 1] (integer in [2, 1e6])"},
    {"max_steps", HDP_KEY_LONG, OFF(max_steps), "100000", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED,
     1, 1e9, NULL,
     "CVODE's maximum number of internal steps between output points (DOP853: steps in all); "
     "at most 1e9"},
    {"solver", HDP_KEY_ENUM, OFF(ode_solver), "auto", 0, 0, 0, ode_solver_names,
     "auto = dop853 (explicit Runge-Kutta) unless the stiffness estimate 2 lambda_max "
     "int eta~ dt is above min(30000, 2000 + 200 bins) (2000 for Student-t noise), cvode "
     "(BDF) then or when dop853 fails; cvode; dop853"},
};
CORE_SECTION(ode);

static const hdp_schema_key sim_keys[] = {
    {"runs", HDP_KEY_LONG, OFF(runs), "100", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 1, 1e7, NULL,
     "Monte Carlo runs (integer in [1, 1e7])"},
    {"seed", HDP_KEY_SEED, OFF(seed), "1", 0, 0, 0, NULL,
     "base seed (unsigned 64-bit integer); run r uses the r-th jump of this stream"},
    {"divergence_factor", HDP_KEY_DOUBLE, OFF(divergence_factor), "1e6", HDP_R_LO_OPEN, 1, 0, NULL,
     "a run diverged when its excess risk exceeds this multiple of max(R(0), private noise) (> 1)"},
};
CORE_SECTION(sim);

static const hdp_schema_key sde_keys[] = {
    {"step", HDP_KEY_DOUBLE, OFF(sde_step), "0", HDP_R_LO_CLOSED | HDP_R_HI_CLOSED, 0, 1, NULL,
     "Euler-Maruyama step h in [0, 1]; 0 = 1/n"},
};
CORE_SECTION(sde);

static const hdp_schema_key validate_keys[] = {
    {"rel_tol", HDP_KEY_DOUBLE, OFF(rel_tol), "0.05", HDP_R_LO_OPEN, 0, 0, NULL,
     "pass when the relative deviation from the ODE is <= rel_tol at every grid point ..."},
    {"z_tol", HDP_KEY_DOUBLE, OFF(z_tol), "4", HDP_R_LO_OPEN, 0, 0, NULL,
     "... or the deviation is within z_tol standard errors"},
};
CORE_SECTION(validate);

/* The core's sections, in the order of the model files (the families' follow them:
 * hdp_family_sections). */
const hdp_schema_section *const hdp_core_sections[] = {
    &data_section, &clip_section, &privacy_section, &schedule_section,
    &ode_section,  &sim_section,  &sde_section,     &validate_section, NULL};

const char *hdp_spectrum_name(hdp_spectrum_kind k) { return spectrum_names[k]; }
const char *hdp_noise_name(hdp_noise_kind k) { return noise_names[k]; }
const char *hdp_sched_name(hdp_sched_kind k) { return sched_names[k]; }

int hdp_model_schema_entry(int i, const char **section, const char **key,
                           const char **default_text, const char **help)
{
    hdp_schema_ref r;
    if (!hdp_schema_key_at(i, &r))
        return 0;
    if (section) *section = r.section->name;
    if (key) *key = r.key->key;
    if (default_text) *default_text = r.key->def;
    if (help) *help = r.key->help;
    return 1;
}

static int section_known(const char *section)
{
    const hdp_schema_section *s;
    for (int i = 0; (s = hdp_schema_section_at(i)); i++)
        if (!strcmp(s->name, section))
            return 1;
    return 0;
}

static void list_keys_of(const char *section, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    hdp_schema_ref r;
    for (int i = 0; hdp_schema_key_at(i, &r) && used < size; i++) {
        if (strcmp(r.section->name, section))
            continue;
        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", r.key->key);
    }
}

/* The registered sections, the core's and the families', as a list for messages:
 * "data, clip, ..." (plain) or "[data], [clip], ... or [last]" (brackets). */
static void list_sections(char *buf, size_t size, int brackets)
{
    size_t used = 0;
    buf[0] = '\0';
    const hdp_schema_section *s;
    for (int i = 0; (s = hdp_schema_section_at(i)) && used < size; i++) {
        const char *sep = i == 0                            ? ""
                          : !brackets || hdp_schema_section_at(i + 1) ? ", "
                                                                      : " or ";
        used += (size_t)snprintf(buf + used, size - used, brackets ? "%s[%s]" : "%s%s", sep,
                                 s->name);
    }
}

static void format_where(char *buf, size_t size, const char *where, int line)
{
    if (line > 0)
        snprintf(buf, size, "%s:%d", where, line);
    else
        snprintf(buf, size, "%s", where);
}

hdp_status hdp_model_set_key(hdp_model *m, const char *section, const char *key,
                             const char *value, const char *where, int line, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, section);
    HDP_REQUIRE(err, key);
    HDP_REQUIRE(err, value);
    char loc[HDP_PATH_MAX + 32];
    format_where(loc, sizeof loc, where, line);
    hdp_schema_ref ref, s;
    if (!hdp_schema_find(section, key, &ref)) {
        int close = hdp_schema_suggest(section, key, &s);
        char hint[160] = "";
        if (close)
            snprintf(hint, sizeof hint, " (did you mean [%s] %s?)", s.section->name, s.key->key);
        const char *sec = section_known(section) ? NULL : hdp_schema_suggest_section(section);
        hdp_schema_ref unused;
        if (sec && hdp_schema_find(sec, key, &unused))
            snprintf(hint, sizeof hint, " (did you mean [%s] %s?)", sec, key);
        else if (sec && !close)
            snprintf(hint, sizeof hint, " (did you mean [%s]?)", sec);
        if (!section_known(section)) {
            char sections[512];
            list_sections(sections, sizeof sections, 0);
            return hdp_fail(err, HDP_EINPUT, "%s: unknown section [%s]%s; sections: %s", loc,
                            section, hint, sections);
        }
        char keys[512];
        list_keys_of(section, keys, sizeof keys);
        return hdp_fail(err, HDP_EINPUT, "%s: unknown key '%s' in [%s]%s; accepted keys: %s", loc,
                        key, section, hint, keys);
    }
    hdp_origin *o = &m->origin[ref.index];
    if (line > 0 && o->line > 0 && !strcmp(o->where, where))
        return hdp_fail(err, HDP_EINPUT, "%s: duplicate key [%s] %s (first set on line %d)", loc,
                        section, key, o->line);
    m->finalized = 0; /* changed: finalize again before solving */
    hdp_status st = hdp_schema_parse_value(m, &ref, value, loc, where, line, err);
    if (st != HDP_OK)
        return st;
    snprintf(o->where, sizeof o->where, "%s", where);
    o->line = line;
    if (!strcmp(section, "data") && !strcmp(key, "n"))
        m->n_given_last = 1;
    if (!strcmp(section, "data") && !strcmp(key, "gamma"))
        m->n_given_last = 0;
    return HDP_OK;
}

void hdp_model_init(hdp_model *m)
{
    if (!m)
        return;
    memset(m, 0, sizeof *m);
    hdp_schema_ref r;
    for (int i = 0; hdp_schema_key_at(i, &r); i++) {
        hdp_error err;
        hdp_error_clear(&err);
        hdp_schema_parse_value(m, &r, r.key->def, "(default)", "(default)", 0, &err);
    }
    for (int i = 0; i < HDP_MODEL_MAX_KEYS; i++)
        m->origin[i].where[0] = '\0';
    m->n_given_last = 0;
    snprintf(m->source, sizeof m->source, "(built-in default)");
}

void hdp_model_free(hdp_model *m)
{
    if (!m)
        return;
    free(m->table_t);
    free(m->table_eta);
    free(m->file_lambda);
    m->table_t = m->table_eta = m->file_lambda = NULL;
    m->table_len = 0;
    m->file_len = 0;
}

/* ---- reading input files: whole, checked, then parsed line by line ---- */

/* Model files: inih reads a line into a 200-byte buffer (INI_MAX_LINE of Debian's
 * libinih), so a longer line would be split in two and its tail read as a line of its
 * own. Lines are checked against this length before inih sees them. */
#define MODEL_MAX_LINE 198
/* Spectrum and schedule tables. */
#define TABLE_MAX_LINE 4000
/* Any input file (a 10^7-eigenvalue spectrum is about 250 MB). */
#define INPUT_MAX_BYTES (1L << 30)

/* Open a file to read that is a regular file, or also a pipe when allow_pipe (a model on
 * standard input: `... | hdpsgd ode /dev/stdin`). A directory reads as empty and a device
 * such as /dev/zero or /dev/urandom as endless: both are refused, with *why saying which,
 * as is a pipe where none is allowed. The file is opened with O_NONBLOCK (so that a FIFO
 * cannot block the open) and checked with fstat on the open descriptor (no race with a
 * rename). *is_pipe says whether it is a pipe: read_text then waits for its data with
 * poll, as cat would, because a named FIFO that no writer has opened yet reads as empty
 * at once (poll only reports a hang-up once a writer has come and gone). */
static int open_input(const char *path, int allow_pipe, const char **why, off_t *size,
                      int *is_pipe)
{
    *why = NULL;
    *is_pipe = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode) && !(allow_pipe && S_ISFIFO(sb.st_mode))) {
        *why = S_ISDIR(sb.st_mode)    ? "is a directory, not a file"
               : S_ISFIFO(sb.st_mode) ? "is a pipe, not a regular file"
                                      : "is a device or socket, not a regular file";
        close(fd);
        return -1;
    }
    *size = S_ISREG(sb.st_mode) ? sb.st_size : 0;
    if (S_ISFIFO(sb.st_mode))
        *is_pipe = 1; /* read with poll (read_text): O_NONBLOCK stays */
    return fd;
}

/* Read the regular file path whole into *text (NUL-terminated; free it), with line ends
 * made uniform: CRLF and a lone CR (old Mac files) both end a line, as LF does. Refused
 * with HDP_EINPUT, naming the file and the line: a file that is not regular (the model file
 * may be a pipe, read to its end; an empty pipe is refused), a NUL byte
 * (C strings would end there and the rest of the line be ignored), a line longer than
 * max_line characters (a reader with a fixed buffer would split it), a file over
 * INPUT_MAX_BYTES. what names the file's role in messages ("model file", ...). */
static hdp_status read_text(const char *path, const char *what, long max_line, char **text,
                            hdp_error *err)
{
    *text = NULL;
    const char *why;
    off_t size = 0;
    int model = !strcmp(what, "model file"), is_pipe;
    int fd = open_input(path, model, &why, &size, &is_pipe);
    /* messages without the path for the model file (the caller puts it first) and with
     * it for tables (the caller puts the key that names them first) */
    if (fd < 0 && why)
        return model ? hdp_fail(err, HDP_EINPUT, "cannot read the model file: it %s", why)
                     : hdp_fail(err, HDP_EINPUT, "cannot read '%s': it %s", path, why);
    if (fd < 0)
        return model ? hdp_fail(err, HDP_EINPUT, "cannot open model file: %s", strerror(errno))
                     : hdp_fail(err, HDP_EINPUT, "cannot open '%s': %s", path, strerror(errno));
    if (size > INPUT_MAX_BYTES) {
        close(fd);
        return hdp_fail(err, HDP_EINPUT, "%s: the %s is larger than %ld MiB", path, what,
                        INPUT_MAX_BYTES >> 20);
    }
    size_t cap = (size_t)size + 1, len = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (len == cap) { /* the file grew while we read it */
            if (cap > (size_t)INPUT_MAX_BYTES) {
                free(buf);
                close(fd);
                return hdp_fail(err, HDP_EINPUT, "%s: the %s is larger than %ld MiB", path, what,
                                INPUT_MAX_BYTES >> 20);
            }
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
        if (is_pipe) {
            struct pollfd pfd = {fd, POLLIN, 0};
            if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                break;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return hdp_fail(err, HDP_EINPUT, "%s: cannot read the %s: %s", path, what,
                            strerror(e));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    if (!buf)
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory reading the %s", path, what);
    if (is_pipe && len == 0) {
        free(buf);
        return hdp_fail(err, HDP_EINPUT,
                        "cannot read the %s: it is a pipe that gave nothing (an empty model "
                        "would silently be the built-in default)",
                        what);
    }
    buf[len] = '\0';
    /* NUL bytes, line ends, line lengths: one pass, writing the normalised text in place */
    size_t o = 0;
    long line = 1, col = 0;
    int blank = 1, comment = 0; /* the line so far is blank; it is a comment ('#', ';') */
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\0') {
            free(buf);
            return hdp_fail(err, HDP_EINPUT,
                            "%s:%ld: the %s contains a NUL byte (a binary file, or a text file "
                            "in UTF-16?): expected plain text",
                            path, line, what);
        }
        if (c == '\r') {
            if (i + 1 < len && buf[i + 1] == '\n')
                i++;
            c = '\n';
        }
        if (blank && (c == '#' || c == ';'))
            comment = model; /* a model file's comment may be long: read_line cuts it */
        if (c != ' ' && c != '\t')
            blank = 0;
        if (c == '\n') {
            line++;
            col = 0;
            blank = 1;
            comment = 0;
        } else if (++col > max_line && !comment) {
            free(buf);
            return hdp_fail(err, HDP_EINPUT,
                            "%s:%ld: line longer than %ld characters: the %s accepts lines of at "
                            "most %ld characters",
                            path, line, max_line, what, max_line);
        }
        buf[o++] = c;
    }
    buf[o] = '\0';
    *text = buf;
    return HDP_OK;
}

/* ---- INI parsing with line numbers: inih's reader hook hands it one line at a time ---- */

typedef struct {
    const char *next; /* the rest of the text */
    int line;
} line_reader;

static char *read_line(char *str, int num, void *stream)
{
    line_reader *r = stream;
    if (!*r->next)
        return NULL;
    const char *end = strchr(r->next, '\n');
    size_t n = end ? (size_t)(end - r->next) + 1 : strlen(r->next);
    size_t take = n;
    if (take > (size_t)num - 2) /* a long comment (read_text checked the other lines): cut */
        take = (size_t)num - 2;
    memcpy(str, r->next, take);
    if (take < n)
        str[take++] = '\n';
    str[take] = '\0';
    r->next += n;
    r->line++;
    return str;
}

typedef struct {
    hdp_model *m;
    const char *path;
    line_reader *reader;
    hdp_error *err;
    int failed;
} parse_ctx;

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *ctx = user;
    if (ctx->failed)
        return 1;
    if (section[0] == '\0') {
        char sections[512];
        list_sections(sections, sizeof sections, 1);
        hdp_fail(ctx->err, HDP_EINPUT, "%s:%d: key '%s' outside a section: put it under %s",
                 ctx->path, ctx->reader->line, name, sections);
        ctx->failed = 1;
        return 0;
    }
    if (hdp_model_set_key(ctx->m, section, name, value, ctx->path, ctx->reader->line, ctx->err) !=
        HDP_OK) {
        ctx->failed = 1;
        return 0;
    }
    return 1;
}

hdp_status hdp_model_load_file(hdp_model *m, const char *path, hdp_error *err)
{
    if (m)
        m->finalized = 0;
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, path);
    char *text;
    hdp_error e;
    hdp_error_clear(&e);
    hdp_status st = read_text(path, "model file", MODEL_MAX_LINE, &text, &e);
    if (st != HDP_OK)
        return strncmp(e.msg, "cannot ", 7) ? hdp_fail(err, st, "%s", e.msg)
                                            : hdp_fail(err, st, "%s: %s", path, e.msg);
    line_reader reader = {text, 0};
    parse_ctx ctx = {m, path, &reader, err, 0};
    int rc = ini_parse_stream(read_line, &reader, on_key, &ctx);
    free(text);
    if (ctx.failed)
        return HDP_EINPUT;
    if (rc != 0)
        return hdp_fail(err, HDP_EINPUT,
                        "%s:%d: syntax error: expected '[section]', 'key = value' or a comment",
                        path, rc);
    snprintf(m->source, sizeof m->source, "%s", path);
    return HDP_OK;
}

hdp_status hdp_model_set(hdp_model *m, const char *assignment, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, assignment);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", assignment);
    char *eq = strchr(buf, '=');
    char *dot = strchr(buf, '.');
    if (!eq || !dot || dot > eq)
        return hdp_fail(err, HDP_EINPUT,
                        "--set %s: expected section.key=value (for example --set clip.c=0.3)",
                        assignment);
    *eq = '\0';
    *dot = '\0';
    char *section = buf, *key = dot + 1, *value = eq + 1;
    /* trim spaces around names */
    while (*key == ' ') key++;
    for (char *e = key + strlen(key); e > key && e[-1] == ' ';) *--e = '\0';
    while (*section == ' ') section++;
    return hdp_model_set_key(m, section, key, value, "--set", 0, err);
}

/* ---- finalize: derived values, combinations, files ---- */

static hdp_status range_fail(const hdp_model *m, const char *section, const char *key,
                             hdp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static hdp_status range_fail(const hdp_model *m, const char *section, const char *key,
                             hdp_error *err, const char *fmt, ...)
{
    hdp_schema_ref ref;
    char loc[HDP_PATH_MAX + 32];
    const hdp_origin *o = hdp_schema_find(section, key, &ref) ? &m->origin[ref.index] : NULL;
    if (o && o->where[0])
        format_where(loc, sizeof loc, o->where, o->line);
    else
        snprintf(loc, sizeof loc, "%s (default value)", m->source);
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: %s", loc, section, key, what);
}

static int key_given(const hdp_model *m, const char *section, const char *key)
{
    hdp_schema_ref ref;
    return hdp_schema_find(section, key, &ref) && m->origin[ref.index].where[0] != '\0';
}

int hdp_model_key_given(const hdp_model *m, const char *section, const char *key)
{
    if (!m || !section || !key)
        return 0;
    return key_given(m, section, key);
}

hdp_status hdp_model_fail_key(const hdp_model *m, const char *section, const char *key,
                              hdp_error *err, const char *fmt, ...)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, section);
    HDP_REQUIRE(err, key);
    HDP_REQUIRE(err, fmt);
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return range_fail(m, section, key, err, "%s", what);
}

/* Read a whitespace-separated numeric table with 'cols' columns (decimal numbers, see
 * parse_decimal; '#' and ';' start comments). */
static hdp_status read_table(const char *path, int cols, const char *section, const char *key,
                             const hdp_model *m, double **out, long *rows, hdp_error *err)
{
    char *text;
    hdp_error e;
    hdp_error_clear(&e);
    hdp_status st = read_text(path, cols > 1 ? "schedule table" : "spectrum file",
                              TABLE_MAX_LINE, &text, &e);
    if (st != HDP_OK)
        return range_fail(m, section, key, err, "%s", e.msg);
    long cap = 256, len = 0;
    double *v = malloc(sizeof(double) * (size_t)(cap * cols));
    int lineno = 0;
    for (char *line = text, *next; v && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '#' || *p == ';' || *p == '\0')
            continue;
        if (len == cap) {
            cap *= 2;
            double *nv = realloc(v, sizeof(double) * (size_t)(cap * cols));
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        for (int c = 0; c < cols; c++) {
            char *end;
            double x;
            int ok = hdp_schema_parse_decimal_prefix(p, &end, &x);
            if (ok == 0) {
                st = hdp_fail(err, HDP_EINPUT,
                              "%s:%d: expected %d number%s per line (%s of [%s] %s; decimal "
                              "notation), got '%.40s'",
                              path, lineno, cols, cols > 1 ? "s" : "",
                              cols > 1 ? "t and eta" : "one eigenvalue", section, key, line);
                goto done;
            }
            if (ok < 0) {
                st = hdp_fail(err, HDP_EINPUT,
                              "%s:%d: '%.*s' is out of range ([%s] %s): numbers must be finite "
                              "(below 1.8e308 in size) and either 0 or at least 2.2e-308 in size "
                              "(no subnormal numbers)",
                              path, lineno, (int)(end - p > 40 ? 40 : end - p), p, section, key);
                goto done;
            }
            v[len * cols + c] = x;
            p = end;
            while (isspace((unsigned char)*p) || *p == ',') p++;
        }
        if (*p && *p != '#' && *p != ';') {
            st = hdp_fail(err, HDP_EINPUT, "%s:%d: expected %d number%s per line, got '%.40s'",
                          path, lineno, cols, cols > 1 ? "s" : "", line);
            goto done;
        }
        len++;
    }
    if (!v) {
        st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (len == 0)
        st = hdp_fail(err, HDP_EINPUT, "%s: [%s] %s: the file has no numbers", path, section, key);
done:
    free(text);
    if (st != HDP_OK) {
        free(v);
        return st;
    }
    *out = v;
    *rows = len;
    return HDP_OK;
}

static hdp_status load_spectrum_file(hdp_model *m, hdp_error *err)
{
    if (!m->spectrum_file[0])
        return range_fail(m, "data", "spectrum_file", err,
                          "spectrum = file needs data.spectrum_file (one eigenvalue per line)");
    double *v = NULL;
    long len = 0;
    hdp_status st = read_table(m->spectrum_file, 1, "data", "spectrum_file", m, &v, &len, err);
    if (st != HDP_OK)
        return st;
    double sum = 0;
    for (long i = 0; i < len; i++) {
        if (v[i] < 0) {
            double bad = v[i]; /* read before the free */
            free(v);
            return hdp_fail(err, HDP_EINPUT,
                            "%s: eigenvalue %ld is negative (%g): a covariance spectrum needs "
                            "eigenvalues >= 0",
                            m->spectrum_file, i + 1, bad);
        }
        sum += v[i];
    }
    if (!(sum > 0)) {
        free(v);
        return hdp_fail(err, HDP_EINPUT, "%s: all eigenvalues are zero", m->spectrum_file);
    }
    if (key_given(m, "data", "d") && m->d != len) {
        free(v);
        return range_fail(m, "data", "d", err,
                          "d = %ld but %s has %ld eigenvalues (leave d out to take it from the "
                          "file)",
                          m->d, m->spectrum_file, len);
    }
    m->d = len;
    free(m->file_lambda);
    m->file_lambda = v;
    m->file_len = len;
    return HDP_OK;
}

static hdp_status load_schedule_table(hdp_model *m, hdp_error *err)
{
    if (!m->sched_file[0])
        return range_fail(m, "schedule", "file", err,
                          "kind = table needs schedule.file (two columns: t, eta)");
    double *v = NULL;
    long len = 0;
    hdp_status st = read_table(m->sched_file, 2, "schedule", "file", m, &v, &len, err);
    if (st != HDP_OK)
        return st;
    const char *why = NULL;
    long bad = -1;
    for (long i = 0; i < len && !why; i++) {
        double t = v[2 * i], e = v[2 * i + 1];
        if (t < 0 || t > 1) why = "t must lie in [0, 1]";
        else if (e < 0) why = "eta must be >= 0";
        else if (i > 0 && !(t > v[2 * (i - 1)])) why = "t must be strictly increasing";
        else if (i > 0 && e > v[2 * (i - 1) + 1])
            why = "eta must be non-increasing (an increasing learning rate would need negative "
                  "noise variance, docs/theory.md §1)";
        if (why) bad = i;
    }
    if (!why && len < 2) { why = "at least two knots are needed (t = 0 and t = 1)"; bad = 0; }
    if (!why && v[0] != 0) { why = "the first knot must be at t = 0"; bad = 0; }
    if (!why && v[2 * (len - 1)] != 1) { why = "the last knot must be at t = 1"; bad = len - 1; }
    if (!why && !(v[1] > 0)) { why = "eta(0) must be > 0"; bad = 0; }
    if (why) {
        free(v);
        return hdp_fail(err, HDP_EINPUT, "%s: knot %ld: %s ([schedule] file)", m->sched_file,
                        bad + 1, why);
    }
    free(m->table_t);
    free(m->table_eta);
    m->table_t = malloc(sizeof(double) * (size_t)len);
    m->table_eta = malloc(sizeof(double) * (size_t)len);
    if (!m->table_t || !m->table_eta) {
        free(v);
        return hdp_fail(err, HDP_ENOMEM, "out of memory reading %s", m->sched_file);
    }
    for (long i = 0; i < len; i++) {
        m->table_t[i] = v[2 * i];
        m->table_eta[i] = v[2 * i + 1];
    }
    m->table_len = (int)len;
    free(v);
    return HDP_OK;
}

/* 1 when section.key was last set by an override (hdp_model_set: --set, a sweep's point) */
static int key_overridden(const hdp_model *m, const char *section, const char *key)
{
    hdp_schema_ref ref;
    return hdp_schema_find(section, key, &ref) && strcmp(m->origin[ref.index].where, "--set") == 0;
}

/* The privacy budget: exactly one of rho, rho_zcdp, epsilon (with delta) given (none: the
 * default rho); the others are derived from it. A form given by an override replaces the
 * forms a model file gave (--set privacy.epsilon=1 on a file that sets rho): those are
 * returned to their defaults, so that the model written back holds only the form in force.
 * Two forms from the same level (one file, or the overrides) are refused. */
static hdp_status finalize_privacy(hdp_model *m, hdp_error *err)
{
    static const char *const forms[] = {"rho", "rho_zcdp", "epsilon"};
    int given[3], over[3], count = 0, first = -1, overrides = 0;
    for (int i = 0; i < 3; i++) {
        given[i] = key_given(m, "privacy", forms[i]);
        over[i] = given[i] && key_overridden(m, "privacy", forms[i]);
        overrides += over[i];
    }
    for (int i = 0; i < 3; i++) {
        hdp_schema_ref ref;
        if (overrides && given[i] && !over[i] && hdp_schema_find("privacy", forms[i], &ref)) {
            m->origin[ref.index].where[0] = '\0'; /* replaced by the override */
            m->origin[ref.index].line = 0;
            given[i] = 0;
        }
        count += given[i];
        if (given[i] && first < 0)
            first = i;
    }
    if (count > 1) {
        int second = first + 1;
        while (!given[second])
            second++;
        hdp_schema_ref ref;
        char loc[HDP_PATH_MAX + 32] = "";
        if (hdp_schema_find("privacy", forms[first], &ref))
            format_where(loc, sizeof loc, m->origin[ref.index].where,
                         m->origin[ref.index].line);
        return range_fail(m, "privacy", forms[second], err,
                          "the privacy budget is given twice, as [privacy] %s (%s) and as "
                          "[privacy] %s: give exactly one of rho, rho_zcdp, or epsilon with "
                          "delta",
                          forms[first], loc, forms[second]);
    }
    if (given[2] && !key_given(m, "privacy", "delta"))
        return range_fail(m, "privacy", "epsilon", err,
                          "epsilon needs privacy.delta (the delta of (epsilon, delta)-DP)");
    if (given[1]) {
        m->rho = sqrt(2.0 * m->rho_zcdp);
        if (!(m->rho >= 1e-50))
            return range_fail(m, "privacy", "rho_zcdp", err,
                              "rho_zcdp = %g gives rho = sqrt(2 rho_zcdp) below 1e-50",
                              m->rho_zcdp);
    } else if (given[2]) {
        if (isinf(m->epsilon)) {
            m->rho = INFINITY;
        } else {
            double rz;
            hdp_error e;
            hdp_error_clear(&e);
            if (hdp_zcdp_from_epsilon(m->epsilon, m->delta, &rz, &e) != HDP_OK)
                return range_fail(m, "privacy", "epsilon", err, "%s", e.msg);
            m->rho = sqrt(2.0 * rz);
        }
    }
    m->rho_zcdp = isinf(m->rho) ? INFINITY : 0.5 * m->rho * m->rho;
    if (!given[2])
        m->epsilon = hdp_zcdp_epsilon_cks(m->rho_zcdp, m->delta);
    return HDP_OK;
}

static hdp_status check_sizes(const hdp_model *m, hdp_error *err)
{
    double cells;
    if ((cells = 2.0 * (double)m->runs * (double)m->points) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "sim", "runs", (double)m->runs, "ode.points",
                                 (double)m->points, cells,
                                 "the runs' curves (kept for the quantiles)", err);
    return HDP_OK;
}

hdp_status hdp_model_finalize(hdp_model *m, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    hdp_status st;
    if (m->spectrum == HDP_SPECTRUM_FILE && (st = load_spectrum_file(m, err)) != HDP_OK)
        return st;
    /* n and gamma: the later of the two wins; n = round(d / gamma) */
    if (m->n_given_last && m->n >= 1) {
        m->gamma = (double)m->d / (double)m->n;
    } else {
        if (m->n_given_last && m->n < 1)
            return range_fail(m, "data", "n", err, "n must be >= 1");
        double n = nearbyint((double)m->d / m->gamma);
        if (n < 1)
            return range_fail(m, "data", "gamma", err,
                              "gamma = %g gives n = round(d/gamma) = 0 samples for d = %ld: "
                              "need gamma <= 2d",
                              m->gamma, m->d);
        if (n > 1.0e12)
            return range_fail(m, "data", "gamma", err,
                              "gamma = %g gives n = round(d/gamma) = %g steps: at most 1e12 (the "
                              "bound of data.n)",
                              m->gamma, n);
        m->n = (long)n;
        m->gamma = (double)m->d / (double)m->n;
    }
    if (m->noise == HDP_NOISE_NONE)
        m->tau2 = 0;
    if ((st = finalize_privacy(m, err)) != HDP_OK)
        return st;
    if (isinf(m->c) && !isinf(m->rho))
        return range_fail(m, "clip", "c", err,
                          "c = inf (no clipping) needs privacy.rho = inf: the private noise "
                          "2*c*sqrt(d)*sigma_k would be infinite");
    if (m->sched == HDP_SCHED_CONSTANT && !isinf(m->rho))
        return range_fail(m, "schedule", "kind", err,
                          "constant is the non-private baseline and needs privacy.rho = inf; "
                          "use kind = output for a private constant learning rate");
    if (m->sched == HDP_SCHED_OPTIMAL) {
        double a = m->gamma * fmax(m->c2, isinf(m->rho) ? 0 : m->c3 / m->rho);
        if (!(a > 0))
            return range_fail(m, "schedule", "c2", err,
                              "the optimal schedule needs a = gamma*max(c2, c3/rho) > 0 "
                              "(with rho = inf, c2 > 0)");
    }
    if (m->sched == HDP_SCHED_TABLE && (st = load_schedule_table(m, err)) != HDP_OK)
        return st;
    if (m->spectrum == HDP_SPECTRUM_TWOLEVEL) {
        long k = (long)nearbyint(m->twolevel_fraction * (double)m->d);
        if (m->d >= 2 && (k < 1 || k >= m->d))
            return range_fail(m, "data", "twolevel_fraction", err,
                              "fraction %g of d = %ld gives %ld large eigenvalues: need between 1 "
                              "and d-1",
                              m->twolevel_fraction, m->d, k);
    }
    if (m->bins > m->d)
        m->bins = 0; /* more bins than eigenvalues: one per eigenvalue */
    if ((st = check_sizes(m, err)) != HDP_OK)
        return st;
    /* each section's own combinations and sizes (the families'), in the table's order */
    const hdp_schema_section *s;
    for (int i = 0; (s = hdp_schema_section_at(i)); i++)
        if (s->finalize && (st = s->finalize(m, err)) != HDP_OK)
            return st;
    m->finalized = 1;
    return HDP_OK;
}

hdp_status hdp_model_check(const hdp_model *m, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    const char *why = NULL;
    if (!m->finalized)
        why = "it was not finalized after its last change: call hdp_model_finalize";
    else if (m->d < 1 || m->d > 100000000L || m->n < 1 || m->n > 1000000000000L)
        why = "d or n is out of range (d in [1, 1e8], n in [1, 1e12])";
    else if (!(isfinite(m->gamma) && m->gamma > 0) ||
             fabs(m->gamma - (double)m->d / (double)m->n) > 1e-12 * m->gamma)
        why = "gamma is not d/n";
    else if (m->points < 2 || m->points > 1000000L)
        why = "ode.points is out of range [2, 1e6]";
    else if (!(m->rtol > 0 && m->rtol < 1) || !(m->atol > 0 && isfinite(m->atol)) ||
             m->max_steps < 1 || m->bins < HDP_BINS_AUTO)
        why = "an [ode] setting is out of range (0 < rtol < 1, atol > 0, max_steps >= 1, bins >= 0 or auto)";
    else if (m->runs < 1)
        why = "sim.runs is below 1";
    else if (!(m->c > 0) || !(m->rho > 0) || isnan(m->c) || isnan(m->rho))
        why = "clip.c and privacy.rho must be > 0";
    else if (m->spectrum == HDP_SPECTRUM_FILE && (!m->file_lambda || m->file_len != m->d))
        why = "its spectrum file is not loaded (finalize loads it)";
    else if (m->sched == HDP_SCHED_TABLE && (!m->table_t || !m->table_eta || m->table_len < 2))
        why = "its schedule table is not loaded (finalize loads it)";
    if (why)
        return hdp_fail(err, HDP_EINPUT, "model %s: %s", m->source[0] ? m->source : "(zeroed)",
                        why);
    return HDP_OK;
}

/* Whether a section is written: every section (families NULL), or the core's and the
 * families named. */
static int section_wanted(const hdp_schema_section *s, const char *const *families)
{
    if (!families || !s->size)
        return 1;
    for (const char *const *f = families; *f; f++)
        if (!strcmp(*f, s->name))
            return 1;
    return 0;
}

/* Whether the key is written: data.n is carried by gamma, an empty file name is the
 * default, a key flagged HDP_K_IF_GIVEN only when given, and of the forms of the privacy budget only the one given (rho when none is). */
static int key_written(const hdp_model *m, const hdp_schema_ref *r, const char *value)
{
    const char *sec = r->section->name, *k = r->key->key;
    if (!strcmp(sec, "data") && !strcmp(k, "n"))
        return 0;
    if (r->key->type == HDP_KEY_PATH && !value[0])
        return 0;
    if ((r->key->flags & HDP_K_IF_GIVEN) && !key_given(m, sec, k))
        return 0;
    if (!strcmp(sec, "privacy")) {
        int z = key_given(m, sec, "rho_zcdp"), e = key_given(m, sec, "epsilon");
        if (!strcmp(k, "rho"))
            return !z && !e;
        if (!strcmp(k, "rho_zcdp"))
            return z;
        if (!strcmp(k, "epsilon"))
            return e;
        if (!strcmp(k, "delta"))
            return e || key_given(m, sec, "delta");
    }
    return 1;
}

static void format_budget(char *buf, size_t size, double v)
{
    if (isinf(v))
        snprintf(buf, size, "inf");
    else {
        snprintf(buf, size, "%.15g", v);
        if (strtod(buf, NULL) != v)
            snprintf(buf, size, "%.17g", v);
    }
}

/* The model as INI lines, each after prefix ("" for a model file, "# " for a CSV header). */
/* After the [privacy] keys of a CSV header: every form of the finalized model's budget. */
static void write_budget(const hdp_model *m, FILE *out, const char *prefix)
{
    char a[64], b[64], c[64], d[64];
    format_budget(a, sizeof a, m->rho);
    format_budget(b, sizeof b, m->rho_zcdp);
    format_budget(c, sizeof c, m->epsilon);
    format_budget(d, sizeof d, m->delta);
    fprintf(out, "%s; the same budget: rho = %s, rho_zcdp = %s, epsilon = %s at delta = %s (CKS)\n",
            prefix, a, b, c, d);
}

static void write_model(const hdp_model *m, FILE *out, const char *prefix,
                        const char *const *families, int derived)
{
    const hdp_schema_section *section = NULL;
    char buf[HDP_PATH_MAX], cwd[HDP_PATH_MAX];
    hdp_schema_ref r;
    int budget = derived && m->finalized;
    for (int i = 0; hdp_schema_key_at(i, &r); i++) {
        const hdp_schema_key *k = r.key;
        if (!section_wanted(r.section, families))
            continue;
        if (section != r.section) {
            if (budget && section && !strcmp(section->name, "privacy"))
                write_budget(m, out, prefix);
            if (section && !prefix[0])
                fputc('\n', out); /* a blank line between sections (model files only) */
            section = r.section;
            fprintf(out, "%s[%s]\n", prefix, section->name);
        }
        hdp_schema_format_value(m, &r, buf, sizeof buf);
        if (!key_written(m, &r, buf))
            continue;
        if (k->type == HDP_KEY_PATH && buf[0] != '/' && getcwd(cwd, sizeof cwd)) {
            /* a relative name is relative to the working directory (set_path resolved it
             * against the model file's folder): written absolute, the file names the same
             * data wherever it is read from (a --set name once moved with the INI file) */
            fprintf(out, "%s%s = %s/%s\n", prefix, k->key, cwd, buf);
            continue;
        }
        fprintf(out, "%s%s = %s\n", prefix, k->key, buf);
    }
    if (budget && section && !strcmp(section->name, "privacy"))
        write_budget(m, out, prefix); /* [privacy] was the last section */
}

void hdp_model_write_meta_sections(const hdp_model *m, FILE *out, const char *const *families)
{
    if (!m || !out)
        return;
    fprintf(out, "# ; model: %s\n", m->source);
    write_model(m, out, "# ", families, 1);
}

void hdp_model_write_meta(const hdp_model *m, FILE *out)
{
    hdp_model_write_meta_sections(m, out, NULL);
}

void hdp_model_write_ini_sections(const hdp_model *m, FILE *out, const char *const *families)
{
    if (m && out)
        write_model(m, out, "", families, 0);
}

void hdp_model_write_ini(const hdp_model *m, FILE *out)
{
    hdp_model_write_ini_sections(m, out, NULL);
}

int hdp_model_value_text(const hdp_model *m, const char *section, const char *key, char *buf,
                         size_t size)
{
    hdp_schema_ref r;
    if (!m || !section || !key || !buf || !size || !hdp_schema_find(section, key, &r))
        return 0;
    hdp_schema_format_value(m, &r, buf, size);
    return 1;
}
