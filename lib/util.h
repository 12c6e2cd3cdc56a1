/*
 * util: the few small helpers every module wants, in one place instead of
 * a copy in each: growing arrays, malloc'd printf, names made printable
 * on one line.
 */
#ifndef ONNXQ_UTIL_H
#define ONNXQ_UTIL_H

#include <stdarg.h>
#include <stddef.h>

/* s, or "" for NULL (protobuf-c leaves absent strings NULL). */
const char *str_or_empty(const char *s);

/*
 * Make room in *vp, an array of *cap elements of size bytes, for element
 * n (so n + 1 in all), doubling from 16. 0, or -1 when out of memory
 * (*vp is left as it was).
 */
int array_grow(void *vp, size_t *cap, size_t n, size_t size);

/* A malloc'd printf; NULL when out of memory. */
char *str_vfmt(const char *fmt, va_list ap);
char *str_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A malloc'd a followed by b (names made per node: no printf); NULL when
   out of memory. */
char *str_cat(const char *a, const char *b);

/*
 * A malloc'd copy of s with control bytes (0x00-0x1F, 0x7F) as %HH, so a
 * name from a model or stream stays on one line of a message; NULL when
 * out of memory.
 */
char *str_printable(const char *s);

/*
 * s (NULL as "") copied into buf of size bytes for a one-line message:
 * control bytes become '?', and a name too long for buf ends in "...".
 * Returns buf.
 */
const char *str_clip(const char *s, char *buf, size_t size);

#endif
