/*
 * progress.c — the program's one progress line on standard error (progress.h).
 */
#include "cli/progress.h"
#include "cli/cli.h"
#include "core/clock.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BAR_WIDTH 20
#define REDRAW 0.25 /* seconds: a terminal line is redrawn at least this often when it changes */
#define LINE_MAX_BYTES 512

void cli_human_time(double s, char *buf, size_t size)
{
    if (s < 120)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, size, "%.0f min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, size, "%.1f h", s / 3600);
    else if (s < 2 * 365.25 * 86400)
        snprintf(buf, size, "%.0f days", s / 86400);
    else
        snprintf(buf, size, "%.3g years", s / (365.25 * 86400));
}

void cli_progress_start(cli_progress *p, const char *cmd, const char *unit, double every)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->unit = unit;
    p->tty = isatty(STDERR_FILENO);
    p->every = every;
    p->t0 = p->last = hdp_seconds_now();
    p->shown = -1;
}

int cli_progress_left(const cli_progress *p, double done, double total, char *buf, size_t size)
{
    double spent = hdp_seconds_now() - p->t0;
    if (!(done > 0 && total >= done && spent > 0)) {
        snprintf(buf, size, "?");
        return -1;
    }
    cli_human_time(spent * (total - done) / done, buf, size);
    return 0;
}

/* the line into buf (with the bar or not); its length */
static size_t compose(const cli_progress *p, int bar, double done, double total, int pct,
                      const char *text, char *buf, size_t size)
{
    char bars[BAR_WIDTH + 8] = "", count[96], t[32], left[48] = "";
    int fill = total > 0 ? (int)(BAR_WIDTH * fmin(done / total, 1.0)) : 0;
    if (bar && total > 0)
        snprintf(bars, sizeof bars, "[%.*s%*s] ", fill, "####################", BAR_WIDTH - fill,
                 "");
    if (total <= 0)
        snprintf(count, sizeof count, "%.0f %s", done, p->unit ? p->unit : "");
    else if (p->unit)
        snprintf(count, sizeof count, "%3d%% %.0f/%s%.0f %s", pct, done, p->rough ? "~" : "",
                 total, p->unit);
    else
        snprintf(count, sizeof count, "%3d%%", pct);
    if (total > 0 && hdp_seconds_now() - p->t0 >= 1.0 &&
        cli_progress_left(p, done, total, t, sizeof t) == 0)
        snprintf(left, sizeof left, ", about %s left", t);
    int n = snprintf(buf, size, "hdpsgd %s: %s%s%s%s%s", p->cmd, bars, count, left,
                     *text ? "; " : "", text);
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* the terminal's width (0: not known) */
static int columns(void)
{
    struct winsize ws;
    return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}

/* the line on the terminal, in place: no wider than the terminal (the bar dropped first, then
 * the end shown as "..."), padded over what the last line covered */
static void draw(cli_progress *p, double done, double total, int pct, const char *text)
{
    char line[LINE_MAX_BYTES];
    size_t n = compose(p, 1, done, total, pct, text, line, sizeof line);
    int cols = columns();
    if (cols > 8 && n > (size_t)cols - 1)
        n = compose(p, 0, done, total, pct, text, line, sizeof line);
    if (cols > 8 && n > (size_t)cols - 1) {
        n = (size_t)cols - 4;
        while (n > 0 && ((unsigned char)line[n] & 0xC0) == 0x80)
            n--; /* not within a UTF-8 character */
        memcpy(line + n, "...", 4);
        n += 3;
    }
    fprintf(stderr, "\r%s%*s", line, p->width > (int)n ? p->width - (int)n : 0, "");
    p->width = (int)n > p->width ? (int)n : p->width;
}

void cli_progress_show(cli_progress *p, double done, double total, const char *fmt, ...)
{
    double now = hdp_seconds_now();
    if (done < p->prev) { /* a new count (the next side, the next point): its own pace */
        p->t0 = now;
        p->shown = -1;
    }
    p->prev = done;
    if (!p->tty && (p->every <= 0 || now - p->last < p->every))
        return;
    if (p->tty && total > 0 && done >= total) { /* the count is complete: the line goes */
        cli_progress_clear(p);
        return;
    }
    int pct = total > 0 ? (int)(100.0 * done / total) : -1;
    if (p->tty && pct == p->shown && now - p->last < REDRAW)
        return;
    char text[LINE_MAX_BYTES] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
    }
    p->shown = pct;
    p->last = now;
    char line[LINE_MAX_BYTES];
    if (p->tty)
        draw(p, done, total, pct, text);
    else if (compose(p, 0, done, total, pct, text, line, sizeof line))
        fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void cli_progress_clear(cli_progress *p)
{
    if (!p->tty || p->width == 0)
        return;
    fprintf(stderr, "\r%*s\r", p->width, "");
    fflush(stderr);
    p->width = 0;
    p->shown = -1;
}

int cli_progress_fn(const char *what, long done, long total, double value, void *user)
{
    (void)what, (void)value;
    cli_progress_show(user, (double)done, (double)total, NULL);
    return 0;
}
