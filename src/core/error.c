/* error.c — the one error-reporting path (see hdpsgd/error.h). */
#include "hdpsgd/error.h"
#include "core/text.h"

#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- user text made visible (core/text.h) ---- */

size_t hdp_utf8_seq(const unsigned char *s, size_t avail)
{
    if (avail == 0)
        return 0;
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c == 0xe0) { n = 3; lo = 0xa0; }
    else if (c >= 0xe1 && c <= 0xec) n = 3;
    else if (c == 0xed) { n = 3; hi = 0x9f; } /* no UTF-16 surrogates */
    else if (c >= 0xee && c <= 0xef) n = 3;
    else if (c == 0xf0) { n = 4; lo = 0x90; }
    else if (c >= 0xf1 && c <= 0xf3) n = 4;
    else if (c == 0xf4) { n = 4; hi = 0x8f; } /* <= U+10FFFF */
    else return 0;
    if (avail < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

size_t hdp_utf8_incomplete_tail(const char *src, size_t len)
{
    const unsigned char *s = (const unsigned char *)src;
    for (size_t k = 1; k <= 3 && k <= len; k++) {
        const unsigned char *p = s + len - k;
        if (*p < 0xc2 || *p > 0xf4)
            continue;
        size_t need = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
        if (need <= k)
            return 0;
        /* valid so far: as if the missing bytes were the smallest allowed */
        unsigned char probe[4] = {0x80, 0x80, 0x80, 0x80};
        memcpy(probe, p, k);
        if (k == 1 && *p == 0xe0) probe[1] = 0xa0;
        if (k == 1 && *p == 0xf0) probe[1] = 0x90;
        return hdp_utf8_seq(probe, need) == need ? k : 0;
    }
    return 0;
}

size_t hdp_visible(char *dst, size_t size, const char *src, size_t len, unsigned flags)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t out = 0;
#define PUT(ch)                                                                              \
    do {                                                                                     \
        if (out + 1 < size) dst[out] = (char)(ch);                                           \
        out++;                                                                               \
    } while (0)
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        size_t n = hdp_utf8_seq(s + i, len - i);
        int keep = (flags & HDP_VISIBLE_KEEP_LINES) && (c == '\n' || c == '\r' || c == '\t');
        int control = n == 1 ? (c < 0x20 || c == 0x7f) && !keep
                             : n == 2 && c == 0xc2 && s[i + 1] <= 0x9f; /* C1: U+0080..9F */
        if (n == 0 || control) {
            size_t bytes = n ? n : 1;
            for (size_t b = 0; b < bytes; b++) {
                static const char hex[] = "0123456789abcdef";
                PUT('\\');
                PUT('x');
                PUT(hex[s[i + b] >> 4]);
                PUT(hex[s[i + b] & 15]);
            }
            i += bytes;
            continue;
        }
        for (size_t b = 0; b < n; b++)
            PUT(s[i + b]);
        i += n;
    }
#undef PUT
    if (size)
        dst[out < size ? out : size - 1] = '\0';
    return out;
}

static _Thread_local const volatile int *thread_cancel;

const volatile int *hdp_cancel_flag_set(const volatile int *flag)
{
    const volatile int *old = thread_cancel;
    thread_cancel = flag;
    return old;
}

int hdp_cancel_requested(void) { return thread_cancel && *thread_cancel; }

void hdp_error_clear(hdp_error *err)
{
    if (!err)
        return;
    err->status = HDP_OK;
    err->msg[0] = '\0';
}

hdp_status hdp_fail(hdp_error *err, hdp_status status, const char *fmt, ...)
{
    if (!err || err->status != HDP_OK)
        return status;
    err->status = status;
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    /* the whole message, then made visible (user text in it may hold control characters or
     * bytes that are not UTF-8); one that does not fit keeps its start and its end (the
     * reason), the middle left out with a note saying how much: never cut silently */
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *raw = need >= 0 ? malloc((size_t)need + 1) : NULL;
    char *vis = NULL;
    size_t vlen = 0;
    if (raw) {
        vsnprintf(raw, (size_t)need + 1, fmt, ap2);
        vlen = hdp_visible(NULL, 0, raw, (size_t)need, 0);
        vis = malloc(vlen + 1);
        if (vis)
            hdp_visible(vis, vlen + 1, raw, (size_t)need, 0);
    }
    va_end(ap2);
    free(raw);
    if (!vis) { /* out of memory: the message as it fits, control bytes as '?' */
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        return status;
    }
    if (vlen < sizeof err->msg) {
        memcpy(err->msg, vis, vlen + 1);
    } else {
        char note[96];
        size_t keep = sizeof err->msg - sizeof note - 1;
        size_t head = keep / 2, tail = keep - head;
        /* whole UTF-8 sequences only: cut after an ASCII byte or before a lead byte */
        while (head > 0 && ((unsigned char)vis[head] & 0xc0) == 0x80) head--;
        while (tail > 0 && ((unsigned char)vis[vlen - tail] & 0xc0) == 0x80) tail--;
        int nl = snprintf(note, sizeof note, " [... %zu bytes of this message left out ...] ",
                          vlen - head - tail);
        memcpy(err->msg, vis, head);
        memcpy(err->msg + head, note, (size_t)nl);
        memcpy(err->msg + head + (size_t)nl, vis + vlen - tail, tail);
        err->msg[head + (size_t)nl + tail] = '\0';
    }
    free(vis);
    return status;
}

const char *hdp_status_name(hdp_status status)
{
    switch (status) {
    case HDP_OK: return "ok";
    case HDP_EINPUT: return "bad input";
    case HDP_EIO: return "output error";
    case HDP_ENUMERIC: return "numerical failure";
    case HDP_ENOMEM: return "out of memory";
    case HDP_ECANCELLED: return "cancelled";
    }
    return "unknown status";
}

static pthread_once_t gsl_once = PTHREAD_ONCE_INIT;

static void gsl_quiet_once(void) { gsl_set_error_handler_off(); }

void hdp_gsl_quiet(void) { pthread_once(&gsl_once, gsl_quiet_once); }
