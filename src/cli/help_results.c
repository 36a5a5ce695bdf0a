/* help_results.c — the results reference generated from the result tables (hdpsgd/fields.h,
 * issue 30): `hdpsgd help results [TABLE]` lists every table (or one) with its fields, and a
 * command's help and man page list its JSON keys from the parts its command-table entry
 * declares (cli_command.json), so that no list of keys is written by hand; a command whose
 * parts are all always written writes its JSON from that list too (cli_json_write). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hdpsgd/design.h"

#define WIDTH 92 /* the help's lines, as the hand-written paragraphs */

/* A paragraph built word by word: a line is handed to out when the next word does not fit;
 * the first line starts with `first`, the others with `indent` spaces. */
typedef struct {
    char buf[512];
    size_t used, start; /* the line's length, and that of its lead (no word yet: equal) */
    int indent;
    void (*out)(void *user, const char *text);
    void *user;
} para;

static void para_start(para *p, const char *first, int indent,
                       void (*out)(void *, const char *), void *user)
{
    p->used = p->start = (size_t)snprintf(p->buf, sizeof p->buf, "%s", first);
    p->indent = indent;
    p->out = out;
    p->user = user;
}

static void para_flush(para *p)
{
    p->out(p->user, p->buf);
    p->used = p->start = (size_t)snprintf(p->buf, sizeof p->buf, "%*s", p->indent, "");
}

/* a word, after a space unless it starts the line */
static void para_word(para *p, const char *w)
{
    size_t n = strlen(w);
    int fresh = p->used == p->start;
    if (!fresh && p->used + 1 + n > WIDTH)
        para_flush(p), fresh = 1;
    if (p->used + 1 + n < sizeof p->buf)
        p->used += (size_t)snprintf(p->buf + p->used, sizeof p->buf - p->used, "%s%s",
                                    fresh ? "" : " ", w);
}

/* a text of words (the help of a field) */
static void para_text(para *p, const char *text)
{
    char w[256];
    for (const char *s = text; *s;) {
        size_t n = strcspn(s, " ");
        if (n > 0 && n < sizeof w) {
            snprintf(w, sizeof w, "%.*s", (int)n, s);
            para_word(p, w);
        }
        s += n;
        s += strspn(s, " ");
    }
}

static void para_end(para *p)
{
    if (p->used > p->start)
        p->out(p->user, p->buf);
}

static int part_end(const cli_json_part *q) { return !q->table && !q->key; }

/* ---- a command's JSON keys ---- */

/* the keys of one part: "TABLE[ under PREFIX][ (WHEN)]: key, key, ..." (parsed by
 * tests/cli/json_keys.sh) */
static void part_keys(const cli_json_part *q, void (*line)(void *, const char *), void *user)
{
    para p;
    char head[256];
    const char *pre = q->prefix ? q->prefix : "";
    snprintf(head, sizeof head, "  %s%s%s%s%s%s:", q->table ? q->table->name : "not a table",
             *pre ? " under " : "", pre, q->when ? " (" : "", q->when ? q->when : "",
             q->when ? ")" : "");
    para_start(&p, "  ", 6, line, user);
    para_text(&p, head + 2);
    if (!q->table) { /* "not a table (what it holds): key" */
        para_word(&p, q->key);
        para_end(&p);
        return;
    }
    int n = hdp_field_count(q->table);
    for (int k = 0; k < n; k++) {
        const hdp_field *f = hdp_field_at(q->table, k);
        char name[160], word[256];
        if (!hdp_field_name_in(q->table, f, HDP_FIELD_IN_JSON, pre, -1, name, sizeof name))
            continue;
        snprintf(word, sizeof word, "%s%s%s%s%s,", name, q->suffix ? q->suffix : "",
                 f->objects ? " (objects of " : "", f->objects ? f->objects->name : "",
                 f->objects ? ")" : "");
        para_text(&p, word);
    }
    if (p.used > 0 && p.buf[p.used - 1] == ',') /* no comma after the last key */
        p.buf[--p.used] = '\0';
    para_end(&p);
}

void cli_json_keys(const cli_command *cmd, void (*line)(void *user, const char *text), void *user)
{
    if (!cmd->json || part_end(cmd->json))
        return;
    line(user, "JSON keys (--json), by result table; 'hdpsgd help results TABLE' says what each");
    line(user, "key means (<family>, <scheme>, <curve>, <l>, <i>: a family's, a scheme's, a");
    line(user, "curve's, a level's, an index's name; a key that does not apply is left out or null):");
    for (const cli_json_part *q = cmd->json; !part_end(q); q++)
        part_keys(q, line, user);
}

/* ---- a JSON summary from the parts ---- */

void cli_json_file(FILE *f, const char *command, const cli_json_source *src, int count,
                   const hdp_model *m)
{
    hdp_json j;
    hdp_json_begin(&j, f);
    cli_json_write(&j, cli_find_command(command), src, count, m);
    hdp_json_end(&j);
}

static void json_bug(const cli_command *cmd, const cli_json_part *q, const char *what)
{
    fprintf(stderr, "hdpsgd %s: internal error: the JSON part %s %s\n", cmd->name,
            q->table ? q->table->name : q->key, what);
    abort();
}

static int patterned(const cli_json_part *q)
{
    return q->suffix || (q->prefix && strchr(q->prefix, '<'));
}

/* the source of part q of cmd (NULL: none): a table's n-th part from its n-th entry of src */
static const cli_json_source *source_of(const cli_command *cmd, const cli_json_part *q,
                                        const cli_json_source *src, int count)
{
    int n = 0;
    for (const cli_json_part *p = cmd->json; p < q; p++)
        n += p->table == q->table;
    for (int i = 0; i < count; i++)
        if (src[i].table == q->table && n-- == 0)
            return &src[i];
    return NULL;
}

/* element i of pattern part q: its prefix with each <...> replaced by the item's names */
static void write_item(hdp_json *j, const cli_command *cmd, const cli_json_part *q,
                       const cli_json_each *e, int i)
{
    const void *obj = (const char *)e->obj + e->stride * (size_t)i;
    cli_json_item it = {obj, e->ctx, {"", ""}, {"", ""}, i, i};
    snprintf(it.num[0], sizeof it.num[0], "%d", i);
    it.name[0] = it.num[0];
    if (e->item && !e->item(e, i, &it))
        return;
    char pre[256] = "";
    size_t used = 0;
    int k = 0;
    for (const char *p = q->prefix ? q->prefix : ""; *p; p++) {
        const char *close = *p == '<' ? strchr(p, '>') : NULL;
        int n = close ? snprintf(pre + used, sizeof pre - used, "%s", it.name[k++ & 1])
                      : snprintf(pre + used, sizeof pre - used, "%c", *p);
        if (n < 0 || (size_t)n >= sizeof pre - used)
            json_bug(cmd, q, "has a prefix too long");
        used += (size_t)n;
        p = close ? close : p;
    }
    if (q->suffix)
        hdp_json_fields_at(j, q->table, pre, it.obj, it.at);
    else
        hdp_json_fields(j, q->table, pre, it.obj, it.ctx);
}

/* the parts q to end (a pattern part and those written with it), element by element */
static void write_group(hdp_json *j, const cli_command *cmd, const cli_json_part *q,
                        const cli_json_part *end, const cli_json_source *src, int count)
{
    int n = 0;
    for (const cli_json_part *p = q; p < end; p++) {
        const cli_json_source *s = source_of(cmd, p, src, count);
        if (!s && !p->when)
            json_bug(cmd, p, "has no source");
        n = s && s->obj && ((const cli_json_each *)s->obj)->count > n
                ? ((const cli_json_each *)s->obj)->count : n;
    }
    for (int i = 0; i < n; i++)
        for (const cli_json_part *p = q; p < end; p++) {
            const cli_json_source *s = source_of(cmd, p, src, count);
            if (s && s->obj && i < ((const cli_json_each *)s->obj)->count)
                write_item(j, cmd, p, s->obj, i);
        }
}

int cli_json_family(const cli_json_each *e, int i, cli_json_item *it)
{
    it->obj = ((const void *const *)e->obj)[i];
    it->name[0] = hdp_design_family_key(i);
    return it->obj != NULL;
}

void cli_json_write(hdp_json *j, const cli_command *cmd, const cli_json_source *src, int count,
                    const hdp_model *m)
{
    for (const cli_json_part *q = cmd->json; !part_end(q); q++) {
        const cli_json_source *s = source_of(cmd, q, src, count);
        if (q->table == &hdp_source_fields && !q[1].table && q[1].key) {
            if (!q->when || (s && s->obj))
                cli_json_model(j, m, cmd->name); /* model_file and the model */
            q++;
            continue;
        }
        const cli_json_part *end = q + 1;
        while (patterned(q) && !part_end(end) && end->with_previous)
            end++;
        if (patterned(q)) {
            write_group(j, cmd, q, end, src, count);
            q = end - 1;
        } else if (s && (s->obj || !q->when)) {
            hdp_json_fields(j, q->table, q->prefix ? q->prefix : "", s->obj, s->ctx);
        } else if (!q->when) {
            json_bug(cmd, q, "has no source");
        }
    }
}

/* ---- the results reference ---- */

static const char *kind_name(const hdp_field *f, char *buf, size_t size)
{
    static const char *const kinds[] = {"real", "int", "bool", "text", "column"};
    const char *k = (unsigned)f->kind < 5 ? kinds[f->kind] : "?";
    if (f->flags & HDP_FIELD_SEED)
        snprintf(buf, size, "seed (unsigned 64-bit)");
    else if ((f->flags & HDP_FIELD_LIST) && f->objects)
        snprintf(buf, size, "list of objects (%s)", f->objects->name);
    else if (f->flags & HDP_FIELD_LIST)
        snprintf(buf, size, "list of %s", k);
    else
        snprintf(buf, size, "%s", k);
    return buf;
}

/* where field f of t is written: json (under its default prefix), record, sweep, csv */
static const char *where(const hdp_field_table *t, const hdp_field *f, char *buf, size_t size)
{
    char json[160], rec[160];
    const char *j = hdp_field_name_in(t, f, HDP_FIELD_IN_JSON, "", -1, json, sizeof json);
    const char *r = hdp_field_name_in(t, f, HDP_FIELD_IN_RECORD, "", -1, rec, sizeof rec);
    size_t used = 0;
#define ADD(...)                                                                                 \
    do {                                                                                         \
        if (used < size) used += (size_t)snprintf(buf + used, size - used, __VA_ARGS__);        \
    } while (0)
    if (j)
        ADD("json%s%s", strcmp(j, f->name) ? " as " : "", strcmp(j, f->name) ? j : "");
    if (r)
        ADD("%srecord%s%s", used ? ", " : "", strcmp(r, f->name) ? " as " : "",
            strcmp(r, f->name) ? r : "");
    if (f->sweep)
        ADD("%ssweep column <command>_%s", used ? ", " : "", f->sweep);
    if (f->kind == HDP_FIELD_COLUMN || (!j && !r))
        ADD("%s%s", used ? ", " : "", j || r ? "csv column" : "csv only");
#undef ADD
    return buf;
}

/* the field of table q whose objects are of table t (privacy_deltas' at_delta), or NULL */
static const hdp_field *holding(const hdp_field_table *q, const hdp_field_table *t)
{
    for (int k = 0; k < hdp_field_count(q); k++)
        if (hdp_field_at(q, k)->objects == t)
            return hdp_field_at(q, k);
    return NULL;
}

/* the commands whose JSON holds t: "validate, validate under sde_, privacy in at_delta"
 * (each entry handed to the paragraph with its comma once the next one is found) */
static void written_by(const hdp_field_table *t, para *p)
{
    char last[256] = ""; /* a command's name and our own tables' prefixes and names */
    for (const cli_command *c = hdp_commands; c->name; c++)
        for (const cli_json_part *q = c->json; q && !part_end(q); q++) {
            const char *pre = q->prefix ? q->prefix : "";
            const hdp_field *in = q->table && q->table != t ? holding(q->table, t) : NULL;
            if (q->table != t && !in)
                continue;
            if (*last) {
                strcat(last, ",");
                para_text(p, last);
            }
            snprintf(last, sizeof last - 1, "%s%s%s%s%s%s%s", c->name, *pre ? " under " : "",
                     pre, q->suffix ? " suffixed " : "", q->suffix ? q->suffix : "",
                     in ? " in the objects of " : "", in ? in->name : "");
        }
    para_text(p, *last ? last : "no command's JSON");
}

static void put_line(void *user, const char *text) { fprintf(user, "%s\n", text); }

static void print_table(FILE *f, const hdp_field_table *t)
{
    para p;
    char head[160];
    snprintf(head, sizeof head, "%s: ", t->name);
    para_start(&p, head, 4, put_line, f);
    para_text(&p, t->help && *t->help ? t->help : "(no help)");
    para_end(&p);
    para_start(&p, "    in the JSON of: ", 6, put_line, f);
    written_by(t, &p);
    para_end(&p);
    if (t->default_prefix) {
        fprintf(f, "    its fields marked \"as\" are written under %s when given no prefix\n",
                t->default_prefix);
    }
    for (int k = 0; k < hdp_field_count(t); k++) {
        const hdp_field *fl = hdp_field_at(t, k);
        char kind[96], wh[400];
        fprintf(f, "  %-26s %s; %s\n", fl->name, kind_name(fl, kind, sizeof kind),
                where(t, fl, wh, sizeof wh));
        para_start(&p, "      ", 6, put_line, f);
        para_text(&p, fl->help ? fl->help : "");
        para_end(&p);
    }
}

int cli_print_results(FILE *f, const char *name)
{
    if (name) {
        const hdp_field_table *t = hdp_field_table_find(name);
        if (!t) {
            fprintf(stderr, "hdpsgd help: error: no result table '%s'; the tables are:\n", name);
            para p;
            para_start(&p, "  ", 2, put_line, stderr);
            for (int i = 0; hdp_field_table_at(i); i++) {
                char w[160];
                snprintf(w, sizeof w, "%s%s", hdp_field_table_at(i)->name,
                         hdp_field_table_at(i + 1) ? "," : "");
                para_word(&p, w);
            }
            para_end(&p);
            return EXIT_BAD_INPUT;
        }
        print_table(f, t);
        return 0;
    }
    fprintf(f,
            "Result tables (hdpsgd/fields.h): each result's fields, from which the JSON summaries,\n"
            "the CSV files, a sweep's results.csv columns, the handle's records (hdpsgd/handle.h)\n"
            "and the Python package's result classes are written. Per field: its name, its kind\n"
            "and where it is written (json: the JSON summary, under the prefix its command gives;\n"
            "record: the handle's record; sweep column: results.csv, after the command's name;\n"
            "csv: a column of a CSV file), then what it means. 'hdpsgd help results TABLE' prints\n"
            "one table, 'hdpsgd help COMMAND' the tables of the command's JSON.\n");
    for (int i = 0; hdp_field_table_at(i); i++) {
        fputc('\n', f);
        print_table(f, hdp_field_table_at(i));
    }
    return 0;
}
