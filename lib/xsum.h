/*
 * xsum: the exact sum of doubles (a superaccumulator), so statistics
 * summed over shards in any order give bit-identical results.
 *
 * Every finite double is a multiple of 2^-1074 below 2^1024, so the sum of
 * any number of them is an integer multiple of 2^-1074 that fits in a
 * fixed array of 32-bit limbs (kept in int64 so carries can wait). The
 * sum is exact; only xsum_round() and the text form round, and the text
 * form is lossless: the greedy expansion x0:x1:... where x0 is the exact
 * sum rounded to nearest double, x1 the rest rounded, and so on until the
 * rest is zero. That expansion is canonical (one text per exact value),
 * so equal sums print equal.
 *
 * Infinities and NaNs added are tracked apart, IEEE style: any NaN, or
 * both infinities, make the sum NaN; one infinity makes it that infinity.
 * A finite exact sum too large for a double rounds to an infinity in
 * xsum_round() and prints as such (and so loses exactness; sums of float32
 * values and their squares never come near).
 *
 * A struct xsum is plain data: zero it (or xsum_init) and use; nothing to
 * free. It may be copied with assignment.
 */
#ifndef ONNXQ_XSUM_H
#define ONNXQ_XSUM_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Bit 0 of limb 0 is 2^-1074; 69 limbs of 32 bits reach 2^1134. */
#define XSUM_LIMBS 69
/* Longest text xsum_format() writes, NUL included (at most 41 components). */
#define XSUM_TEXT_MAX 1200

struct xsum {
	int64_t limb[XSUM_LIMBS];	/* value = sum limb[i] * 2^(32i - 1074) */
	uint32_t pending;		/* additions since the last carry pass */
	uint8_t posinf, neginf, nan;	/* special values seen */
};

void xsum_init(struct xsum *x);
void xsum_add(struct xsum *x, double v);
/* dst += src, exactly. */
void xsum_add_xsum(struct xsum *dst, const struct xsum *src);
/* The exact sum rounded to nearest (ties to even) double. */
double xsum_round(const struct xsum *x);
int xsum_is_zero(const struct xsum *x);
/* 0 when equal as exact values (or both NaN / same infinity), else <0 / >0. */
int xsum_cmp(const struct xsum *a, const struct xsum *b);

/*
 * Canonical text: "0", "inf", "-inf", "nan", or the greedy expansion
 * "x0:x1:..." with each component the shortest %.15g..%.17g that reads
 * back exactly. buf must hold XSUM_TEXT_MAX bytes; returns buf.
 */
char *xsum_format(const struct xsum *x, char *buf);
/*
 * Parse any colon-separated list of doubles (not only canonical ones) and
 * set x to their exact sum. -1 with a message (no context) when s is not
 * such a list.
 */
int xsum_parse(struct xsum *x, const char *s, struct err *e);

#endif
