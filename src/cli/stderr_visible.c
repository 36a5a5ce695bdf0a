/*
 * stderr_visible.c — every message the program writes to its standard error shows user text
 * with control characters made visible (core/text.h's hdp_visible, the helper the library's
 * messages go through in hdp_fail): a file name or a model value holding a terminal escape
 * sequence (ESC [ ...), another control character or bytes that are not UTF-8 is written
 * as \xNN, whichever message echoes it. Newline, carriage return (progress lines) and tab,
 * which the program's own messages use, are kept. Standard output gets the same filter when
 * it is a terminal (the names of the files written, tables, a CSV shown there); written to a
 * file or a pipe it is left byte for byte.
 */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "core/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char held[4]; /* the start of a UTF-8 sequence split between two writes */
    size_t nheld;
    int fd;
} visible_state;

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int emit(visible_state *st, const char *buf, size_t size, int last)
{
    size_t n = st->nheld + size;
    char *all = malloc(n ? n : 1);
    if (!all)
        return -1;
    memcpy(all, st->held, st->nheld);
    memcpy(all + st->nheld, buf, size);
    size_t tail = last ? 0 : hdp_utf8_incomplete_tail(all, n);
    size_t vlen = hdp_visible(NULL, 0, all, n - tail, HDP_VISIBLE_KEEP_LINES);
    char *vis = malloc(vlen + 1);
    int rc = -1;
    if (vis) {
        hdp_visible(vis, vlen + 1, all, n - tail, HDP_VISIBLE_KEEP_LINES);
        rc = write_all(st->fd, vis, vlen);
        free(vis);
    }
    memcpy(st->held, all + n - tail, tail);
    st->nheld = tail;
    free(all);
    return rc;
}

static ssize_t visible_write(void *cookie, const char *buf, size_t size)
{
    return emit(cookie, buf, size, 0) == 0 ? (ssize_t)size : -1;
}

static int visible_close(void *cookie)
{
    visible_state *st = cookie;
    return st->nheld ? emit(st, "", 0, 1) : 0;
}

void cli_stderr_visible(void)
{
    static visible_state state = {.fd = STDERR_FILENO};
    cookie_io_functions_t io = {NULL, visible_write, NULL, visible_close};
    FILE *f = fopencookie(&state, "w", io);
    if (!f)
        return; /* the plain stream (only the library's messages are then made visible) */
    setvbuf(f, NULL, _IONBF, 0);
    stderr = f;
    static visible_state out_state = {.fd = STDOUT_FILENO};
    if (!isatty(STDOUT_FILENO) || !(f = fopencookie(&out_state, "w", io)))
        return; /* a file or pipe: the bytes as they are */
    setvbuf(f, NULL, _IOLBF, 0);
    stdout = f;
}
