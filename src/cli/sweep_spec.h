/*
 * sweep_spec.h — the pieces of `hdpsgd sweep` beside cmd_sweep.c (private to the command
 * line): the sweep file and its points (sweep_file.c), the points' folders and the digests
 * that --resume checks (sweep_resume.c).
 */
#ifndef HDPSGD_CLI_SWEEP_SPEC_H
#define HDPSGD_CLI_SWEEP_SPEC_H

#include "cli.h"
#include "core/input.h"

#define MAX_AXES 16
#define MAX_VALUES 1024
#define MAX_FIXED 128
/* the most points a sweep may have (the product of its axes' lengths): each is a folder,
 * and every point's model is checked before the first runs */
#define MAX_POINTS 1000000L
/* the keys of a sweep file, each given once: [sweep]'s, the axes and [set] */
#define MAX_KEYS (MAX_AXES + MAX_FIXED + 16)
/* the commands a sweep can run: the command table's entries with a point runner */
#define MAX_SWEEP_COMMANDS 16

typedef struct {
    char key[HDP_INPUT_INI_MAX_LINE + 2]; /* section.key (from one line: never cut) */
    int line;                /* where it is given */
    int is_range;            /* LO:HI:COUNT[:log], not a list */
    int count;
    char *values[MAX_VALUES];
} axis;

typedef struct {
    char path[1024];
    char model[1024];        /* resolved base model path, "" = built-in */
    int commands;            /* bit k: the k-th command a sweep can run (sweep_file.c) */
    int ncommands;           /* the commands in the order given: each runs on the model the */
    int order[MAX_SWEEP_COMMANDS]; /* commands before it hand on (schedule: its design) */
    int naxes;
    axis axes[MAX_AXES];
    int nfixed;
    char *fixed[MAX_FIXED];  /* "section.key=value" */
    /* schedule and rates (docs/theory.md §5): the families, pl knots, clipping, the gamma grid */
    hdp_sweep_settings set;
    char rates_gammas[128];
    int line;                /* current line (inih reader) */
    int indented;            /* it starts with a space or tab: inih continues the last key */
    int separator;           /* it holds '=' or ':' */
    int model_line;          /* where [sweep] model is given */
    hdp_input_lines lines;   /* the reader over the file's text */
    int nkeys;               /* the keys given so far: [sweep]'s, the axes and [set]'s */
    struct {
        char section[8];
        char key[200];
        int line;
    } keys[MAX_KEYS];
    char err[1400];
    int err_line;            /* the line of err while reading (spec_fail), else 0 */
} sweep_spec;

/* Read the sweep file (prints the error and returns the exit status, or 0). */
int sweep_load_spec(const char *path, sweep_spec *s);
void sweep_spec_free(sweep_spec *s);
/* 1 when the sweep runs the command `name` */
int sweep_has(const sweep_spec *s, const char *name);
/* the runners of the sweep's commands, in the order the sweep file gives them; returns their
 * count */
int sweep_runners_of(const sweep_spec *s, const hdp_sweep_runner **runners);
/* the number of points (at most MAX_POINTS: sweep_load_spec refuses more) */
long sweep_count_points(const sweep_spec *s);
/* The axis values of point i (row-major, last axis fastest). */
void sweep_point_values(const sweep_spec *s, long i, int *idx);
/* " ode sim ..." for the commands of the sweep (progress lines) */
const char *sweep_commands_text(const sweep_spec *s, char *buf, size_t size);

/* ---- sweep_resume.c ---- */
int sweep_mkdir_p(const char *path);
int sweep_file_exists(const char *path);

/* what defines the points, for --resume: FNV-1a 64 digests in DIR/sweep.digest */
#define SWEEP_FNV_START 14695981039346656037ULL
typedef struct {
    unsigned long long sweep, base, points;  /* the sweep file, the base model, the models */
    long nfiles, cap;                        /* data files the models name, all of them */
    char **file;
    unsigned long long *file_digest;
    int nomem;                               /* a file could not be added: out of memory */
} sweep_digest;

/* digest of a file's bytes (0 when it cannot be read) */
unsigned long long sweep_digest_file(const char *path);
/* add point i's resolved model (as a model file, every key) and the files it names;
 * returns 0, or -1 when out of memory */
int sweep_digest_point(sweep_digest *d, const hdp_model *m);
void sweep_digest_free(sweep_digest *d);
int sweep_write_digest(const char *dir, const sweep_spec *s, const sweep_digest *d);
/* 0 when DIR/sweep.digest matches d (or is missing: a warning), else exit 2 saying what
 * changed */
int sweep_check_digest(const char *dir, const sweep_spec *s, const sweep_digest *d);

#endif
