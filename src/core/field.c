/*
 * field.c — reading a result's fields through its table (hdpsgd/fields.h): the generic part,
 * which the io layer's writers use; the tables themselves are src/drivers/fields.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hdpsgd/fields.h"

int hdp_field_count(const hdp_field_table *t)
{
    int n = 0;
    while (t && t->fields[n].name)
        n++;
    return n;
}

const hdp_field *hdp_field_at(const hdp_field_table *t, int i)
{
    return i >= 0 && i < hdp_field_count(t) ? &t->fields[i] : NULL;
}

double hdp_field_number(const hdp_field *f, const void *obj, const void *ctx)
{
    if (f->get)
        return f->get(obj, ctx);
    const char *p = (const char *)obj + f->offset;
    if (f->flags & HDP_FIELD_AT) {
        const double *a = *(double *const *)p;
        return a && ctx ? a[*(const long *)ctx] : NAN;
    }
    /* the member's bytes, by memcpy (no cast of the struct's address to the member's type) */
    double r;
    long l;
    int b;
    switch (f->kind) {
    case HDP_FIELD_REAL: memcpy(&r, p, sizeof r); return r;
    case HDP_FIELD_INT: memcpy(&l, p, sizeof l); return (double)l;
    case HDP_FIELD_BOOL: memcpy(&b, p, sizeof b); return b ? 1.0 : 0.0;
    default: return NAN;
    }
}

long hdp_field_long(const hdp_field *f, const void *obj, const void *ctx)
{
    if (f->get)
        return (long)f->get(obj, ctx);
    return f->kind == HDP_FIELD_INT ? *(const long *)((const char *)obj + f->offset) : 0;
}

const char *hdp_field_text(const hdp_field *f, const void *obj)
{
    if (f->kind != HDP_FIELD_TEXT)
        return NULL;
    return f->text ? f->text(obj, NULL) : (const char *)obj + f->offset;
}

const double *hdp_field_column(const hdp_field *f, const void *obj, long *length)
{
    if (f->kind != HDP_FIELD_COLUMN) {
        *length = 0;
        return NULL;
    }
    const double *data = *(double *const *)((const char *)obj + f->offset);
    *length = data ? *(const long *)((const char *)obj + f->length) : 0;
    return data;
}

static const char *named(const hdp_field_table *t, const hdp_field *f, const char *name,
                         const char *prefix, char *buf, size_t size)
{
    if ((!prefix || !*prefix) && (f->flags & HDP_FIELD_OWN_PREFIX) && t->default_prefix)
        prefix = t->default_prefix;
    snprintf(buf, size, "%s%s", prefix ? prefix : "", name);
    return buf;
}

const char *hdp_field_name(const hdp_field_table *t, const hdp_field *f, const char *prefix,
                           char *buf, size_t size)
{
    return named(t, f, f->name, prefix, buf, size);
}

const char *hdp_field_name_in(const hdp_field_table *t, const hdp_field *f, hdp_field_output out,
                              const char *prefix, long index, char *buf, size_t size)
{
    int json = out == HDP_FIELD_IN_JSON;
    if (json ? (f->flags & HDP_FIELD_NO_JSON) ||
                   (f->kind == HDP_FIELD_COLUMN && !(f->flags & HDP_FIELD_JSON_ARRAY))
             : (f->flags & HDP_FIELD_NO_RECORD) != 0)
        return NULL;
    named(t, f, !json && f->record ? f->record : f->name, prefix, buf, size);
    size_t used = strlen(buf);
    if (index >= 0 && used < size)
        snprintf(buf + used, size - used, "_%ld", index);
    return buf;
}

void hdp_field_write(const hdp_field_table *t, hdp_field_output out, const char *prefix,
                     long index, const void *obj, const void *ctx, const hdp_field_sink *sink,
                     void *user)
{
    char name[128];
    if (index >= 0)
        ctx = &index;
    for (const hdp_field *f = t->fields; f->name; f++) {
        if (!hdp_field_name_in(t, f, out, prefix, index, name, sizeof name))
            continue;
        long len;
        const double *data;
        if (f->flags & HDP_FIELD_LIST) {
            sink->list(user, name, f, obj);
            continue;
        }
        if (f->flags & HDP_FIELD_SEED) {
            unsigned long long seed;
            memcpy(&seed, (const char *)obj + f->offset, sizeof seed);
            sink->seed(user, name, seed);
            continue;
        }
        if ((f->flags & HDP_FIELD_OPTIONAL) &&
            (f->kind == HDP_FIELD_TEXT ? !hdp_field_text(f, obj)
                                       : isnan(hdp_field_number(f, obj, ctx))))
            continue;
        switch (f->kind) {
        case HDP_FIELD_COLUMN:
            data = hdp_field_column(f, obj, &len);
            sink->column(user, name, data, len);
            break;
        case HDP_FIELD_INT: sink->integer(user, name, hdp_field_long(f, obj, ctx)); break;
        case HDP_FIELD_BOOL: sink->boolean(user, name, hdp_field_number(f, obj, ctx) != 0); break;
        case HDP_FIELD_TEXT: sink->text(user, name, hdp_field_text(f, obj)); break;
        default: sink->real(user, name, hdp_field_number(f, obj, ctx)); break;
        }
    }
}
