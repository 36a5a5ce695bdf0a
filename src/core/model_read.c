/*
 * model_read.c — reading model files and --set: hdp_model_set_key (one key's value, with
 * "did you mean" suggestions for unknown sections and keys, and duplicate keys), input
 * files read whole and checked before anything parses them (regular files, FIFOs for a
 * model on standard input, no directories or devices, NUL bytes, long lines, a size
 * limit: hdp_input_read of core/input.h, which finalize's spectrum and schedule tables and
 * the command line's sweep file use too), and
 * the model file's INI parsing with line numbers (inih), hdp_model_load_file and
 * hdp_model_set.
 */
#include "hdpsgd/model.h"
#include "core/check.h"
#include "core/input.h"
#include "core/model_internal.h"
#include "core/schema.h"

#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

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

hdp_status hdp_model_set_key(hdp_model *m, const char *section, const char *key,
                             const char *value, const char *where, int line, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, section);
    HDP_REQUIRE(err, key);
    HDP_REQUIRE(err, value);
    if (!where)
        where = "";
    if (strlen(where) >= HDP_PATH_MAX)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: the name of where [%s] %s was given is %zu bytes long: at most %zu "
                        "are accepted", where, section, key, strlen(where),
                        (size_t)HDP_PATH_MAX - 1);
    char loc[HDP_PATH_MAX + 32];
    hdp_model_format_where(loc, sizeof loc, where, line);
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
    if (line > 0 && o->line > 0 && !strcmp(hdp_model_origin_where(m, ref.index), where))
        return hdp_fail(err, HDP_EINPUT, "%s: duplicate key [%s] %s (first set on line %d)", loc,
                        section, key, o->line);
    m->finalized = 0; /* changed: finalize again before solving */
    hdp_status st = hdp_schema_parse_value(m, &ref, value, loc, where, line, err);
    if (st != HDP_OK)
        return st;
    if ((st = hdp_model_origin_set(m, ref.index, where, line, err)) != HDP_OK)
        return st;
    if (!strcmp(section, "data") && !strcmp(key, "n"))
        m->n_given_last = 1;
    if (!strcmp(section, "data") && !strcmp(key, "gamma"))
        m->n_given_last = 0;
    return HDP_OK;
}

/* ---- reading input files: whole, checked, then parsed line by line (core/input.h) ---- */

/* Open a file to read that is a regular file, or also a pipe when allow_pipe (a model on
 * standard input: `... | hdpsgd ode /dev/stdin`). A directory reads as empty and a device
 * such as /dev/zero or /dev/urandom as endless: both are refused, with *why saying which,
 * as is a pipe where none is allowed. The file is opened with O_NONBLOCK (so that a FIFO
 * cannot block the open) and checked with fstat on the open descriptor (no race with a
 * rename). *is_pipe says whether it is a pipe: hdp_input_read then waits for its data with
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
        *is_pipe = 1; /* read with poll (hdp_input_read): O_NONBLOCK stays */
    return fd;
}

static hdp_status too_big(const char *path, const hdp_input_rules *r, hdp_error *err)
{
    return hdp_fail(err, HDP_EINPUT, "%s: the %s is larger than %ld MiB, the most accepted",
                    path, r->what, r->max_bytes >> 20);
}

/* Read fd (opened by open_input) to its end, or until a NUL byte (the text is refused
 * then, so a pipe from /dev/zero is not read on) or more than r->max_bytes. Returns the
 * buffer (NULL: *st says why) with *len bytes and a spare byte for the final NUL. */
static char *read_all(int fd, const char *path, const hdp_input_rules *r, off_t size, int is_pipe,
                      size_t *len, hdp_status *st, hdp_error *err)
{
    size_t cap = (size_t)size + 1, max = (size_t)r->max_bytes;
    char *buf = malloc(cap + 1);
    *len = 0;
    if (!buf) {
        *st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory reading the %s", path, r->what);
        return NULL;
    }
    for (;;) {
        if (*len == cap) { /* a pipe, or the file grew while we read it */
            if (*len > max) {
                free(buf);
                *st = too_big(path, r, err);
                return NULL;
            }
            size_t ncap = cap < 65536 ? 65536 : 2 * cap;
            if (ncap > max + 1)
                ncap = max + 1;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                *st = hdp_fail(err, HDP_ENOMEM, "%s: out of memory reading the %s", path,
                               r->what);
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        if (is_pipe) {
            struct pollfd pfd = {fd, POLLIN, 0};
            if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                break;
        }
        ssize_t got = read(fd, buf + *len, cap - *len);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            *st = hdp_fail(err, HDP_EINPUT, "%s: cannot read the %s: %s", path, r->what,
                           strerror(e));
            return NULL;
        }
        if (got == 0)
            break;
        *len += (size_t)got;
        if (memchr(buf + *len - (size_t)got, '\0', (size_t)got))
            break; /* refused by the caller, with the line */
    }
    return buf;
}

/* The rules: at core/input.h. A file that is not regular is refused (a pipe, when allowed,
 * is read to its end; an empty pipe, and an empty INI file, are refused: an empty model
 * would silently be the built-in default), and so are a NUL byte (C strings would end there
 * and the rest of the line be ignored), a line longer than max_line characters (a reader
 * with a fixed buffer would split it) and a file over max_bytes. */
hdp_status hdp_input_read(const char *path, const hdp_input_rules *r, char **text,
                          hdp_error *err)
{
    *text = NULL;
    const char *why;
    off_t size = 0;
    int is_pipe;
    int fd = open_input(path, r->allow_pipe, &why, &size, &is_pipe);
    /* messages without the path for INI files (the caller puts it first) and with it for
     * tables (the caller puts the key that names them first) */
    if (fd < 0 && why)
        return r->ini ? hdp_fail(err, HDP_EINPUT, "cannot read the %s: it %s", r->what, why)
                      : hdp_fail(err, HDP_EINPUT, "cannot read '%s': it %s", path, why);
    if (fd < 0)
        return r->ini ? hdp_fail(err, HDP_EINPUT, "cannot open %s: %s", r->what,
                                 strerror(errno))
                      : hdp_fail(err, HDP_EINPUT, "cannot open '%s': %s", path, strerror(errno));
    if (size > r->max_bytes) {
        close(fd);
        return too_big(path, r, err);
    }
    size_t len;
    hdp_status st = HDP_OK;
    char *buf = read_all(fd, path, r, size, is_pipe, &len, &st, err);
    close(fd);
    if (!buf)
        return st;
    if (len == 0 && (is_pipe || r->ini)) {
        free(buf);
        return hdp_fail(err, HDP_EINPUT,
                        "cannot read the %s: it is %s (an empty model would silently be the "
                        "built-in default; give no file for the defaults)",
                        r->what, is_pipe ? "a pipe that gave nothing" : "empty (0 bytes)");
    }
    buf[len] = '\0';
    /* NUL bytes, line ends, line lengths: one pass, writing the normalised text in place; a
     * UTF-8 byte order mark first (editors on Windows write one) is not part of the text */
    size_t o = 0;
    long line = 1, col = 0, max_line = r->max_line;
    int blank = 1, comment = 0; /* the line so far is blank; it is a comment ('#', ';') */
    for (size_t i = len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0; i < len; i++) {
        char c = buf[i];
        if (c == '\0') {
            free(buf);
            return hdp_fail(err, HDP_EINPUT,
                            "%s:%ld: the %s contains a NUL byte (a binary file, or a text file "
                            "in UTF-16?): expected plain text",
                            path, line, r->what);
        }
        if (c == '\r') {
            if (i + 1 < len && buf[i + 1] == '\n')
                i++;
            c = '\n';
        }
        if (blank && (c == '#' || c == ';'))
            comment = 1; /* a comment may be long: hdp_input_read_line cuts an INI file's, a
                          * table's reader skips it (schedule writes its command line there) */
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
                            path, line, max_line, r->what, max_line);
        }
        buf[o++] = c;
    }
    buf[o] = '\0';
    *text = buf;
    return HDP_OK;
}

/* Model files, spectrum files and schedule tables (model_internal.h): only a model file
 * may be a pipe; tables may be large. */
hdp_status hdp_model_read_text(const char *path, const char *what, long max_line, char **text,
                               hdp_error *err)
{
    int model = !strcmp(what, "model file");
    hdp_input_rules r = {what, model, model, max_line,
                         model ? HDP_INPUT_INI_MAX_BYTES : HDP_INPUT_TABLE_MAX_BYTES};
    return hdp_input_read(path, &r, text, err);
}

/* ---- INI parsing with line numbers: inih's reader hook hands it one line at a time ---- */

typedef hdp_input_lines line_reader;

char *hdp_input_read_line(char *str, int num, void *stream)
{
    line_reader *r = stream;
    if (!*r->next)
        return NULL;
    const char *end = strchr(r->next, '\n');
    size_t n = end ? (size_t)(end - r->next) + 1 : strlen(r->next);
    size_t take = n;
    if (take > (size_t)num - 2) /* a long comment (hdp_input_read checked the other lines): cut */
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
    int failed; /* the line of the first key refused, else 0 */
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
        ctx->failed = ctx->reader->line;
        return 0;
    }
    if (hdp_model_set_key(ctx->m, section, name, value, ctx->path, ctx->reader->line, ctx->err) !=
        HDP_OK) {
        ctx->failed = ctx->reader->line;
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
    if (strlen(path) >= HDP_PATH_MAX) /* named in messages and in CSV headers: whole */
        return hdp_fail(err, HDP_EINPUT,
                        "%s: the model file's name is %zu bytes long: at most %zu are accepted "
                        "(use a shorter path, e.g. relative to the working directory)",
                        path, strlen(path), (size_t)HDP_PATH_MAX - 1);
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        if (*c < 0x20 || *c == 0x7f) /* the name is written in CSV headers' comment lines */
            return hdp_fail(err, HDP_EINPUT,
                            "%s: the model file's name has a control character (byte 0x%02x at "
                            "position %zu), which would split the CSV headers that name it: "
                            "rename the file", path, *c, (size_t)(c - (const unsigned char *)path));
    char *text;
    hdp_error e;
    hdp_error_clear(&e);
    hdp_status st = hdp_model_read_text(path, "model file", HDP_INPUT_INI_MAX_LINE, &text, &e);
    if (st != HDP_OK)
        return strncmp(e.msg, "cannot ", 7) ? hdp_fail(err, st, "%s", e.msg)
                                            : hdp_fail(err, st, "%s: %s", path, e.msg);
    line_reader reader = {text, 0};
    hdp_error key_err; /* the first key refused (err keeps the first message it is given) */
    hdp_error_clear(&key_err);
    parse_ctx ctx = {m, path, &reader, &key_err, 0};
    int rc = ini_parse_stream(hdp_input_read_line, &reader, on_key, &ctx);
    free(text);
    /* inih reads on after a line it cannot parse ('[data' without ']') and returns the first
     * bad line: a key refused after it (read into the section before) is not the cause */
    if (ctx.failed && !(rc > 0 && rc < ctx.failed))
        return hdp_fail(err, key_err.status, "%s", key_err.msg);
    if (rc != 0)
        return hdp_fail(err, HDP_EINPUT,
                        "%s:%d: syntax error: expected '[section]', 'key = value' or a comment",
                        path, rc);
    if (hdp_model_set_text(&m->source, path, err) != HDP_OK)
        return hdp_fail(err, HDP_ENOMEM, "%s: out of memory for the model file's name", path);
    return HDP_OK;
}

hdp_status hdp_model_set(hdp_model *m, const char *assignment, hdp_error *err)
{
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, assignment);
    /* a copy of any length (a long file name is checked by its key, never cut here) */
    char *buf = strdup(assignment);
    if (!buf)
        return hdp_fail(err, HDP_ENOMEM, "--set: out of memory for a copy of %zu bytes",
                        strlen(assignment) + 1);
    char *eq = strchr(buf, '=');
    char *dot = strchr(buf, '.');
    if (!eq || !dot || dot > eq) {
        free(buf);
        return hdp_fail(err, HDP_EINPUT,
                        "--set %s: expected section.key=value (for example --set clip.c=0.3)",
                        assignment);
    }
    *eq = '\0';
    *dot = '\0';
    char *section = buf, *key = dot + 1, *value = eq + 1;
    /* trim spaces around names */
    while (*key == ' ') key++;
    for (char *e = key + strlen(key); e > key && e[-1] == ' ';) *--e = '\0';
    while (*section == ' ') section++;
    hdp_status st = hdp_model_set_key(m, section, key, value, "--set", 0, err);
    free(buf);
    return st;
}
