/*
 * progress.h — the program's one progress line on standard error (progress.c): every long
 * call of every command draws its progress through it (the library reports through its one
 * callback type, hdpsgd/progress.h; the commands turn the reports into cli_progress_show).
 *
 * On a terminal: one line rewritten in place, "hdpsgd CMD: [#####     ] 45% 450/1000 runs,
 * about 12 s left; TEXT" (the time left from the pace so far, once a second has passed;
 * TEXT the command's extra: the current risk, the best final risk, the family), redrawn when
 * the percentage changes or a quarter of a second has passed, cleared when the count reaches
 * its total and by cli_progress_clear. Not on a terminal: nothing, unless the command asked
 * for a line every `every` seconds (the Monte Carlo of a job announced as long: 600; net:
 * 10), the same line without the bar, one per line. The line never outgrows the terminal
 * (a shorter line drops the bar, then ends in "..."). The caller's reports never overlap
 * (hdpsgd/progress.h); the user text in TEXT reaches stderr through stderr_visible.c.
 */
#ifndef HDPSGD_CLI_PROGRESS_H
#define HDPSGD_CLI_PROGRESS_H

#include <stddef.h>

typedef struct {
    const char *cmd;  /* the command's name: "hdpsgd CMD: ..." */
    const char *unit; /* what is counted ("runs", "ODE solves"); NULL: the percentage only */
    int tty;          /* stderr is a terminal */
    int rough;        /* the total is an estimate: shown as "~M" */
    double every;     /* not a terminal: a line every `every` seconds (0: none) */
    double t0;        /* the start of the count (a count that goes back starts again) */
    double last;      /* when the last line was drawn */
    double prev;      /* the count of the last report */
    int shown;        /* the percentage drawn last (-1: none) */
    int width;        /* the columns the line covers on the terminal (0: none drawn) */
} cli_progress;

/* Start counting now: stderr's terminal is looked up, nothing is drawn yet. */
void cli_progress_start(cli_progress *p, const char *cmd, const char *unit, double every);
/* The count: done of total (total <= 0: not known, no bar, no time left); fmt (NULL: none)
 * the line's extra text, printf-style. */
void cli_progress_show(cli_progress *p, double done, double total, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Clear the line (a no-op when none is drawn): at the end, and before a message of its own. */
void cli_progress_clear(cli_progress *p);
/* The time left at the pace so far into buf (cli_human_time); "?" and -1 when not known. */
int cli_progress_left(const cli_progress *p, double done, double total, char *buf, size_t size);
/* An hdp_progress_fn for the library's long calls: user a cli_progress, the count drawn
 * with no extra text. */
int cli_progress_fn(const char *what, long done, long total, double value, void *user);

#endif
