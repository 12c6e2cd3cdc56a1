/*
 * strmap: a string -> int hash map (open addressing). Keys are copied
 * (into blocks the map frees as a whole).
 */
#ifndef ONNXQ_STRMAP_H
#define ONNXQ_STRMAP_H

#include <stddef.h>

struct strmap;

struct strmap *strmap_new(void);
void strmap_free(struct strmap *m);
/* Room for n keys in all without growing again; -1 when out of memory. */
int strmap_reserve(struct strmap *m, size_t n);
/* Insert or replace; -1 when out of memory. */
int strmap_put(struct strmap *m, const char *key, int val);
/*
 * Insert key with val unless present: 0 when inserted, 1 when present
 * (its value stays, and goes to *old unless old is NULL), -1 when out of
 * memory. One look where strmap_get then strmap_put take two.
 */
int strmap_add(struct strmap *m, const char *key, int val, int *old);
/* 1 and *val when present, 0 otherwise (val may be NULL). */
int strmap_get(const struct strmap *m, const char *key, int *val);
/*
 * For tests of the hash: the keys' count and the sum over them of how far
 * each sits past its home slot (a lookup of it probes that many slots
 * more than one); *cap gets the table's slots.
 */
size_t strmap_displacement(const struct strmap *m, size_t *count,
    size_t *cap);

#endif
