/*
 * cxsum: an exact sum of doubles that costs what its value needs.
 *
 * A struct xsum is exact but always about 560 bytes; a model of a million
 * tensors keeps four of them per tensor. Most of those sums are one or
 * two doubles' worth of bits (a tensor seen in one batch: exactly one), so
 * a cxsum keeps its value as a short list of doubles whose exact sum it
 * is (a floating-point expansion: each addition redistributes the value
 * with error-free two-sums, so nothing is ever rounded away) and moves to
 * a heap struct xsum only when that list would grow past CXSUM_INLINE
 * doubles or leave the double range. The value is the same exact number
 * either way: read it back through cxsum_get() and print it with
 * xsum_format(), and the text is what a struct xsum would have given.
 *
 * Zero it (or cxsum_init) and use; cxsum_release frees the heap form.
 * A copy by assignment shares that heap form: release only one of them.
 */
#ifndef ONNXQ_CXSUM_H
#define ONNXQ_CXSUM_H

#include <stdint.h>

#include "xsum.h"

#define CXSUM_INLINE 3

struct cxsum {
	double c[CXSUM_INLINE];	/* exact sum of c[0..n); no zeros */
	uint8_t n;
	uint8_t posinf, neginf, nan;	/* special values added */
	struct xsum *big;	/* non-NULL: the finite value lives here */
};

void cxsum_init(struct cxsum *x);
void cxsum_release(struct cxsum *x);
/* x += v exactly; -1 only when out of memory (x unchanged). */
int cxsum_add(struct cxsum *x, double v);
int cxsum_add_xsum(struct cxsum *x, const struct xsum *v);
int cxsum_add_cxsum(struct cxsum *x, const struct cxsum *v);
/* Replace x's value with v's (x initialised); -1 when out of memory. */
int cxsum_set_xsum(struct cxsum *x, const struct xsum *v);
/* The value as a struct xsum (an exact copy). */
void cxsum_get(const struct cxsum *x, struct xsum *out);
/* As xsum_round() and xsum_cmp() of cxsum_get(). */
double cxsum_round(const struct cxsum *x);
int cxsum_cmp(const struct cxsum *a, const struct cxsum *b);

#endif
