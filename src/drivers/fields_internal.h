/*
 * fields_internal.h — the initialisers of hdp_field rows (hdpsgd/fields.h) shared by the
 * files of result tables: fields.c, fields_data.c, fields_design.c, fields_summary.c.
 */
#ifndef HDPSGD_DRIVERS_FIELDS_INTERNAL_H
#define HDPSGD_DRIVERS_FIELDS_INTERNAL_H

#include <stddef.h>

#include "hdpsgd/fields.h"

#define REAL(s, m, h) {.name = #m, .kind = HDP_FIELD_REAL, .offset = offsetof(s, m), .help = h}
#define REAL_AS(s, nm, m, h) {.name = nm, .kind = HDP_FIELD_REAL, .offset = offsetof(s, m), .help = h}
#define INT(s, m, h) {.name = #m, .kind = HDP_FIELD_INT, .offset = offsetof(s, m), .help = h}
#define INT_AS(s, nm, m, fl, h) \
    {.name = nm, .kind = HDP_FIELD_INT, .offset = offsetof(s, m), .flags = fl, .help = h}
#define BOOL_AS(s, nm, m, fl, h) \
    {.name = nm, .kind = HDP_FIELD_BOOL, .offset = offsetof(s, m), .flags = fl, .help = h}
#define TEXT(s, m, h) {.name = #m, .kind = HDP_FIELD_TEXT, .offset = offsetof(s, m), .help = h}
#define COL(s, nm, m, fmt, h)                                                                   \
    {.name = nm, .kind = HDP_FIELD_COLUMN, .offset = offsetof(s, m), .length = offsetof(s, points), \
     .format = fmt, .help = h}
#define GET(nm, k, fn, h) {.name = nm, .kind = k, .get = fn, .help = h}
#define GET_TEXT(nm, fn, h) {.name = nm, .kind = HDP_FIELD_TEXT, .text = fn, .help = h}
#define END {.name = NULL}
/* a computed field's function (hdp_field.get, .text): the value expr of the object obj and the
 * context ctx */
#define GETTER(fn, expr)                                \
    static double fn(const void *obj, const void *ctx) \
    {                                                   \
        (void)obj;                                      \
        (void)ctx;                                      \
        return (expr);                                  \
    }
#define TEXT_GETTER(fn, expr)                                \
    static const char *fn(const void *obj, const void *ctx) \
    {                                                        \
        (void)obj;                                           \
        (void)ctx;                                           \
        return (expr);                                       \
    }
/* the fields of a CSV written a row per result (hdp_csv_row), the CSV's only: a REAL member of
 * s, or a computed value, in the format fmt (flags: more, e.g. HDP_FIELD_OPTIONAL) */
#define CSV_ONLY (HDP_FIELD_NO_JSON | HDP_FIELD_NO_RECORD)
#define CSV_REAL(s, nm, m, fmt, fl, h)                                                           \
    {.name = nm, .kind = HDP_FIELD_REAL, .offset = offsetof(s, m), .format = fmt,               \
     .flags = CSV_ONLY | (fl), .help = h}
#define CSV_GET(nm, k, fn, fmt, fl, h) \
    {.name = nm, .kind = k, .get = fn, .format = fmt, .flags = CSV_ONLY | (fl), .help = h}
/* a result table var (name, default prefix, help) and its rows, the END row added */
#define TABLE(var, nm, prefix, help_, ...)                                                    \
    static const hdp_field var##_rows[] = {__VA_ARGS__, END};                                 \
    const hdp_field_table var = {nm, help_, var##_rows, prefix}

#endif
