/*
 * strmap: a string -> int hash map (open addressing). Keys are copied.
 */
#ifndef ONNXQ_STRMAP_H
#define ONNXQ_STRMAP_H

#include <stddef.h>

struct strmap;

struct strmap *strmap_new(void);
void strmap_free(struct strmap *m);
/* Insert or replace; -1 when out of memory. */
int strmap_put(struct strmap *m, const char *key, int val);
/* 1 and *val when present, 0 otherwise (val may be NULL). */
int strmap_get(const struct strmap *m, const char *key, int *val);

#endif
