/* output_csv.c — the CSV writers of a result table (hdpsgd/fields.h, see output.h): its columns
 * (hdp_csv_columns), or its header and rows, one row per result (hdp_csv_header, hdp_csv_row). */
#include "io/output.h"

#include <math.h>

void hdp_csv_columns(FILE *f, const hdp_field_table *t, const void *obj)
{
    hdp_csv_columns2(f, t, obj, NULL, NULL);
}

void hdp_csv_columns2(FILE *f, const hdp_field_table *t, const void *obj,
                      const hdp_field_table *t2, const void *obj2)
{
    enum { MAXCOLS = 32 };
    const hdp_field *col[MAXCOLS];
    const double *data[MAXCOLS] = {NULL};
    int nc = 0;
    long points = 0;
    const hdp_field_table *tabs[2] = {t, t2};
    const void *objs[2] = {obj, obj2};
    for (int k = 0; k < 2 && tabs[k] && objs[k]; k++) {
        for (const hdp_field *x = tabs[k]->fields; x->name && nc < MAXCOLS; x++) {
            if (x->kind != HDP_FIELD_COLUMN)
                continue;
            long len;
            data[nc] = hdp_field_column(x, objs[k], &len);
            if (nc == 0 || len < points)
                points = len;
            fprintf(f, "%s%s", nc ? "," : "", x->name);
            col[nc++] = x;
        }
    }
    fputc('\n', f);
    for (long i = 0; i < points; i++)
        for (int c = 0; c < nc; c++) {
            if (c)
                fputc(',', f);
            if (isfinite(data[c][i])) /* a value that is not finite: an empty cell */
                fprintf(f, col[c]->format, data[c][i]);
            if (c == nc - 1)
                fputc('\n', f);
        }
}

void hdp_csv_header(FILE *f, const hdp_field_table *t, int first)
{
    hdp_csv_header_in(f, t, "", "", first);
}

void hdp_csv_header_in(FILE *f, const hdp_field_table *t, const char *prefix, const char *suffix,
                       int first)
{
    for (const hdp_field *x = t->fields; x->name; x++, first = 0)
        fprintf(f, "%s%s%s%s", first ? "" : ",", prefix, x->name, suffix);
}

void hdp_csv_row(FILE *f, const hdp_field_table *t, const void *obj, const void *ctx, int first)
{
    for (const hdp_field *x = t->fields; x->name; x++, first = 0) {
        if (!first)
            fputc(',', f);
        switch (x->kind) {
        case HDP_FIELD_REAL: {
            double v = hdp_field_number(x, obj, ctx);
            if (isfinite(v) || !(x->flags & HDP_FIELD_OPTIONAL)) /* NaN: refused when published */
                fprintf(f, x->format ? x->format : "%.17g", v);
            break;
        }
        case HDP_FIELD_INT: fprintf(f, "%ld", hdp_field_long(x, obj, ctx)); break;
        case HDP_FIELD_BOOL: fprintf(f, "%d", hdp_field_number(x, obj, ctx) != 0); break;
        case HDP_FIELD_TEXT: {
            const char *v = x->text ? x->text(obj, ctx) : hdp_field_text(x, obj);
            fputs(v ? v : "", f);
            break;
        }
        case HDP_FIELD_COLUMN: break; /* a column has no place in a row */
        }
    }
}

void hdp_csv_header_line(FILE *f, const hdp_field_table *t)
{
    hdp_csv_header(f, t, 1);
    fputc('\n', f);
}

void hdp_csv_line(FILE *f, const hdp_field_table *t, const void *obj, const void *ctx)
{
    hdp_csv_row(f, t, obj, ctx, 1);
    fputc('\n', f);
}
