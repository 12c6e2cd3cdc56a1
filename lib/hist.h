/*
 * hist: a histogram of float32 values with data-independent bins, so that
 * histograms of shards add up to exactly the histogram of the whole run.
 *
 * A finite, nonzero, normal value x falls in the bin whose edge is x with
 * its float32 mantissa truncated to the top `mbits` bits (sign and
 * exponent kept): the bin covers [edge, next edge) in magnitude, a
 * relative width of at most 2^-mbits. Zeros and subnormals count in one
 * zero bin; NaN and infinities are not counted (the caller counts them).
 * Storage follows the data: a histogram of a few bins (at most 16) is a
 * list of (bin, count) pairs inside the struct; past that, counts are
 * kept in blocks allocated per (sign, exponent) seen, so memory follows
 * the range actually seen, not the whole float range. Which form holds
 * the counts changes nothing a caller sees: the same bins, the same
 * counts, the same merges.
 */
#ifndef ONNXQ_HIST_H
#define ONNXQ_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define HIST_MBITS_DEFAULT 7
#define HIST_MBITS_MAX 12

struct hist;

/* A bin as the range selection methods see it: [lo, hi) on the real line
 * (for negative bins lo = -(next edge), hi = edge); the zero bin has
 * lo == hi == 0. */
struct hist_bin {
	float lo, hi;
	uint64_t count;
};

struct hist *hist_new(int mbits);	/* NULL when out of memory or bad mbits */
void hist_free(struct hist *h);
int hist_mbits(const struct hist *h);
/* Add n values; non-finite ones are skipped. -1 only when out of memory. */
int hist_add(struct hist *h, const float *x, size_t n);
/* Add one bin's count by its edge (as read from a stream); edge 0 is the zero bin. */
int hist_add_bin(struct hist *h, float edge, uint64_t count, struct err *e);
/*
 * Add the counts of one block of bins at once: the 1 << mbits bins of
 * sign << 8 | biased exponent `block` (1 to 254 or 257 to 510), in
 * order of their edges' magnitude; as hist_add_bin() for each nonzero
 * count. Nothing is added when all are zero.
 */
int hist_add_block(struct hist *h, int block, const uint64_t *counts,
    struct err *e);
/* dst += src; coarsens dst to the smaller mbits first when they differ. */
int hist_merge(struct hist *dst, const struct hist *src, struct err *e);
/*
 * dst += the histogram of clamp(v) over src's values v, where clamp is
 * Clip's elementwise map (v < lo ? lo : v, then > hi ? hi : v; Relu is
 * lo 0, hi +Inf; -Inf and +Inf leave the values as they are). Exact,
 * because clamp is monotonic and can change a value's bin only by
 * moving it to lo's or hi's bin: a bin that lo or hi falls in keeps all
 * its values, any other bin goes whole to one bin. The caller keeps
 * the infinities apart (src does not count them, and a finite bound
 * would make them finite); values that clamp makes infinite (a bound of
 * +-Inf) are not counted, as hist_add() would not. Same mbits in both;
 * -1 when they differ or out of memory.
 */
int hist_add_clamped(struct hist *dst, const struct hist *src, float lo,
    float hi, struct err *e);
/* Set every count to zero (the memory is kept for the next counts). */
void hist_clear(struct hist *h);
/* Reduce to fewer mantissa bits (exact: bins are unions of finer bins). */
int hist_coarsen(struct hist *h, int mbits, struct err *e);
/* Bytes of memory h holds (the struct and its blocks). */
size_t hist_bytes(const struct hist *h);
/* All counts, zero bin included; UINT64_MAX when they overflow. */
uint64_t hist_total(const struct hist *h);
/* Non-empty bins in ascending order of lo, zero bin included when
 * non-empty; *bins is malloc'd, the caller frees it. */
int hist_bins(const struct hist *h, struct hist_bin **bins, size_t *n,
    struct err *e);
/* 1 when a and b have the same bins (edges and counts), 0 when not; -1
 * with e set when out of memory. */
int hist_same(const struct hist *a, const struct hist *b, struct err *e);

#endif
