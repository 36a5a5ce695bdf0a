/*
 * input.h — input files read whole and checked before anything parses them (model_read.c):
 * the model file, the spectrum and schedule tables, and the command line's INI files (the
 * sweep file), so that every reader refuses the same things with the same messages:
 * devices and directories, pipes where none is allowed, NUL bytes, lines longer than the
 * parser takes, files over a size limit (also read from a pipe: reading stops there).
 * CR, CRLF and LF all end a line (the text handed back has LF only).
 */
#ifndef HDPSGD_CORE_INPUT_H
#define HDPSGD_CORE_INPUT_H

#include <stddef.h>

#include "hdpsgd/error.h"

/* Lines of an INI file: inih reads a line into a 200-byte buffer (INI_MAX_LINE of
 * Debian's libinih), so a longer line would be split and its tail read as a line of its
 * own. */
#define HDP_INPUT_INI_MAX_LINE 198
/* The largest INI file (model file, sweep file) and the largest table (a 10^7-eigenvalue
 * spectrum file is about 250 MB), pipes included. */
#define HDP_INPUT_INI_MAX_BYTES (16L << 20)
#define HDP_INPUT_TABLE_MAX_BYTES (1L << 30)

typedef struct {
    const char *what; /* the file's role in messages: "model file", "sweep file", ... */
    int allow_pipe;   /* a pipe (a model on standard input) is read to its end */
    int ini;          /* an INI file: messages leave the path to the caller ("cannot read
                       * the model file: ..."), else they name it ("cannot read 'PATH': ...");
                       * comment lines ('#', ';' first) may be longer than max_line in any file */
    long max_line;    /* longest line accepted, in characters */
    long max_bytes;   /* largest file accepted */
} hdp_input_rules;

/* Read path whole into *text (NUL-terminated, LF line ends; free it), or fail with
 * HDP_EINPUT naming the file (and the line for a NUL byte or a long line), HDP_ENOMEM. */
hdp_status hdp_input_read(const char *path, const hdp_input_rules *rules, char **text,
                          hdp_error *err);

/* An inih reader (ini_parse_stream) over a text of hdp_input_read: the line number of the
 * line it handed out last in .line; a comment line longer than the buffer is cut (the
 * other lines were checked by hdp_input_read). */
typedef struct {
    const char *next; /* the rest of the text */
    int line;
} hdp_input_lines;
char *hdp_input_read_line(char *str, int num, void *stream);

#endif
