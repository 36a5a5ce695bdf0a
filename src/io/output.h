/*
 * output.h — output files that are never left half-written (internal).
 *
 * hdp_out_open writes to a temporary file in the destination's directory;
 * hdp_out_commit flushes, checks (fflush/ferror/fsync/fclose) and renames it
 * into place (hdp_out_commit_all: several files, all or nothing); hdp_out_abort
 * removes it. On any error the old file is untouched. A NULL path or "-" means standard output (checked on commit).
 * Also a minimal JSON object writer for the summaries.
 */
#ifndef HDPSGD_OUTPUT_H
#define HDPSGD_OUTPUT_H

#include <stdio.h>
#include <sys/types.h>

#include "hdpsgd/error.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/model.h"

/* Longest output path accepted (the temporary file's name adds HDP_OUT_TMP_EXTRA characters
 * to the last component). */
#define HDP_OUT_PATH_MAX 4000
#define HDP_OUT_TMP_EXTRA 13 /* "." + ".tmp.XXXXXX" */

typedef struct {
    FILE *f;
    char path[HDP_OUT_PATH_MAX + 1];   /* as given (for messages) */
    char target[HDP_OUT_PATH_MAX + 1]; /* where it is written: symbolic links followed */
    char tmp[HDP_OUT_PATH_MAX + 32];
    int is_stdout;
    int direct; /* not a regular file: written in place */
    int open;
    int written; /* closed and checked, waiting to be renamed (hdp_out_commit_all) */
} hdp_outfile;

/* Where an output path leads: symbolic links are followed (each relative link from its
 * own folder; at most 40), so that a link is written through, never replaced. *fd is set
 * to N >= 0 when the chain reaches an open descriptor (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N): the output is then written to that descriptor, as a shell redirection
 * would, else -1. HDP_EINPUT for a loop of links or a path over HDP_OUT_PATH_MAX. */
hdp_status hdp_out_resolve(const char *path, char *target, size_t size, int *fd, hdp_error *err);

/* Open an output: "-" or NULL is standard output; a path leading to an open descriptor,
 * a device or a FIFO is written directly; anything else is written to a temporary file
 * beside the link's final target and renamed onto it on commit, keeping the replaced
 * file's permission bits (a new file gets 0666 & ~umask). */
hdp_status hdp_out_open(hdp_outfile *o, const char *path, hdp_error *err);
hdp_status hdp_out_commit(hdp_outfile *o, hdp_error *err);
void hdp_out_abort(hdp_outfile *o);

/* Commit several outputs of one command all or nothing: every file is written and checked
 * (flush, fsync, close) before any is renamed into place, so that a full disk on the last
 * file leaves none of the new files and every previous one untouched. On error all are
 * aborted. Only a failing rename (rare: the checks are done) can leave some published. */
hdp_status hdp_out_commit_all(hdp_outfile *files, int count, hdp_error *err);

/* A command's set of output files, committed all or nothing:
 *   hdp_outset set;
 *   hdp_outset_init(&set, &err);
 *   FILE *f;
 *   if ((f = hdp_outset_add(&set, csv_path))) write_csv(f, ...);    (NULL path: skipped;
 *   if ((f = hdp_outset_add(&set, json_path))) write_json(f, ...);   "-": standard output)
 *   hdp_status st = hdp_outset_commit(&set);
 * hdp_outset_add returns NULL, and adds nothing, when the path is NULL or an earlier add
 * failed; hdp_outset_commit commits every file (hdp_out_commit_all) or, after any failure,
 * removes them all and returns the first error. */
#define HDP_OUTSET_MAX 8
typedef struct {
    hdp_outfile files[HDP_OUTSET_MAX];
    int count;
    hdp_status status;
    hdp_error *err;
} hdp_outset;

void hdp_outset_init(hdp_outset *set, hdp_error *err);
FILE *hdp_outset_add(hdp_outset *set, const char *path);
hdp_status hdp_outset_commit(hdp_outset *set);
/* Remove every file of the set (nothing was committed). */
void hdp_outset_abort(hdp_outset *set);

/* Where the figure drawn from a file of the set can read it before the set is committed:
 * the file at path (as given to hdp_outset_add) is flushed and *src set to its temporary
 * file. HDP_EIO when it was not added, cannot be flushed, or is written directly (standard
 * output, a device or a pipe: nothing can be read back from it). */
hdp_status hdp_outset_source(hdp_outset *set, const char *path, const char **src);

/* A private temporary folder (the figure's, made by mkdtemp) that a termination signal must
 * not leave behind: hdp_out_abort_all_signal sends SIGTERM to the child process (if any),
 * removes the files named in names (NULL-terminated, static) and data1.csv ... dataN.csv
 * (N = ndata) from it, then the folder. dir NULL: forget it. Register it with the signals
 * blocked (hdp_out_block_signals) between mkdtemp and this call. */
void hdp_out_tmpdir_track(const char *dir, const char *const *names, int ndata);
void hdp_out_tmpdir_child(pid_t pid);
/* Block (on = 1) or restore (on = 0) the termination signals and SIGXFSZ in the calling
 * thread. */
void hdp_out_block_signals(int on);

/* Give a file made by mkstemp the mode of a newly created file (0666 & ~umask). */
void hdp_out_default_mode(int fd);

/* Remove every temporary file still open (for a handler of SIGINT, SIGTERM, SIGHUP or
 * SIGPIPE; async-signal-safe). hdp_out_open creates and records a temporary file with those
 * four signals blocked in the calling thread. */
void hdp_out_abort_all_signal(void);

/* JSON object: {"key": value, ...} on one line per key, with nested objects (one line per
 * key, indented) and arrays (on one line). Inside an array the key of every value function
 * is ignored (pass NULL). Numbers are written in the shortest of %.15g, %.16g, %.17g that
 * reads back to the same double (0.3, not 0.29999999999999999); a non-finite number is
 * null. */
#define HDP_JSON_DEPTH 8
typedef struct {
    FILE *f;
    int count;                     /* values written at the current level */
    int depth;                     /* 0: the top object */
    int saved[HDP_JSON_DEPTH];     /* the count of each enclosing level */
    int array[HDP_JSON_DEPTH + 1]; /* 1 when the level is an array */
} hdp_json;

void hdp_json_begin(hdp_json *j, FILE *f);
void hdp_json_num(hdp_json *j, const char *key, double v); /* non-finite -> null */
void hdp_json_int(hdp_json *j, const char *key, long long v);
void hdp_json_uint(hdp_json *j, const char *key, unsigned long long v); /* e.g. seeds */
void hdp_json_bool(hdp_json *j, const char *key, int v);
void hdp_json_str(hdp_json *j, const char *key, const char *v);
void hdp_json_end(hdp_json *j);
/* A nested object or array under key (NULL inside an array), closed by hdp_json_close. */
void hdp_json_object(hdp_json *j, const char *key);
void hdp_json_array(hdp_json *j, const char *key);
void hdp_json_close(hdp_json *j);
/* A number as JSON writes it (shortest round trip; "null" when not finite). Returns buf. */
const char *hdp_json_format_num(char *buf, size_t size, double v);

/* The resolved model as a nested object under key: {"data": {"d": 200, ...}, ...}, the
 * core's sections and the families' named in families (NULL-terminated; NULL: every
 * section); numbers as numbers (inf as null, bins = auto as "auto"), names and files as
 * strings; every key, data.n and every form of the privacy budget included. */
void hdp_json_model(hdp_json *j, const char *key, const hdp_model *m,
                    const char *const *families);

/* The scalar fields of a result table (hdpsgd/fields.h) of obj (ctx: the context of its
 * computed fields, e.g. the model), in the table's order under prefix ("" or NULL: none),
 * except its columns (but HDP_FIELD_JSON_ARRAY's, as arrays) and its HDP_FIELD_NO_JSON
 * fields: REAL as hdp_json_num, INT as hdp_json_int, BOOL as hdp_json_bool, TEXT as
 * hdp_json_str, a LIST as an array. */
void hdp_json_fields(hdp_json *j, const hdp_field_table *t, const char *prefix, const void *obj,
                     const void *ctx);
/* The same of a table written once per index (its names suffixed _<index>, its context the
 * index), e.g. the design's refine levels. */
void hdp_json_fields_at(hdp_json *j, const hdp_field_table *t, const char *prefix,
                        const void *obj, long index);

/* The CSV of a table's columns: the header line (their names, comma-separated) and one row
 * per point, every field in its column's format. */
void hdp_csv_columns(FILE *f, const hdp_field_table *t, const void *obj);
/* The columns of t (of obj) followed by those of t2 (of obj2; NULL: none), one table. */
void hdp_csv_columns2(FILE *f, const hdp_field_table *t, const void *obj,
                      const hdp_field_table *t2, const void *obj2);
/* A CSV written a row per result from a table (hdpsgd/fields.h): the header, the names of the
 * table's fields, comma-separated (first: no comma before the first); a row, obj's values (ctx:
 * the context of its computed fields): REAL in the field's format (NULL: %.17g), a value that
 * is not finite an empty cell when the field is HDP_FIELD_OPTIONAL (else printed, and the
 * file then refused: hdp_out_commit), INT as %ld, BOOL 0/1, TEXT as it is. Neither ends the
 * line. */
void hdp_csv_header(FILE *f, const hdp_field_table *t, int first);
/* The header with every name between prefix and suffix (a table written once per scheme or
 * configuration: he_kl, ..., test_C1_CT2, ...). */
void hdp_csv_header_in(FILE *f, const hdp_field_table *t, const char *prefix, const char *suffix,
                       int first);
void hdp_csv_row(FILE *f, const hdp_field_table *t, const void *obj, const void *ctx, int first);
/* A whole line: the header (hdp_csv_header, first) or a row (hdp_csv_row, first), then '\n'. */
void hdp_csv_header_line(FILE *f, const hdp_field_table *t);
void hdp_csv_line(FILE *f, const hdp_field_table *t, const void *obj, const void *ctx);

#endif
