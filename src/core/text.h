/*
 * text.h — user text made safe to show (internal; used by error.c and the program).
 *
 * A file name or a model value may hold a newline, a terminal escape sequence (ESC [ ...),
 * another control character or bytes that are not UTF-8. Shown raw in a message, it can
 * forge a line or drive the terminal. hdp_visible writes it with every such byte as the
 * four characters \xNN: the C0 controls and DEL, the C1 controls (U+0080..U+009F, written
 * as their two UTF-8 bytes), and every byte that is not part of a valid UTF-8 sequence.
 */
#ifndef HDPSGD_TEXT_H
#define HDPSGD_TEXT_H

#include <stddef.h>

/* keep newline, carriage return and tab as they are (the program's own stderr lines) */
#define HDP_VISIBLE_KEEP_LINES 1u

/* src[0..len) made visible into dst (at most size bytes with the NUL; size 0: nothing
 * written); returns the length of the whole result (as snprintf: more than size - 1 when
 * dst was too small). */
size_t hdp_visible(char *dst, size_t size, const char *src, size_t len, unsigned flags);

/* The number of bytes at the end of src[0..len) that begin a UTF-8 sequence that is valid
 * so far but not complete (0..3): a stream holds them until the rest arrives. */
size_t hdp_utf8_incomplete_tail(const char *src, size_t len);

/* The length of the valid UTF-8 sequence at s (s[0..avail)), or 0 when s[0] does not begin
 * one (an invalid or truncated sequence). ASCII bytes are sequences of length 1. */
size_t hdp_utf8_seq(const unsigned char *s, size_t avail);

#endif
