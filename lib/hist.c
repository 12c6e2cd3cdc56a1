/*
 * hist: see hist.h. Counts live in blocks of 2^mbits bins, one block per
 * (sign, biased exponent), found by the top 9 bits of the float, so adding
 * a value is a shift, a mask and an increment.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#define NBLOCKS 512	/* sign << 8 | biased exponent; 0, 255, 256, 511 unused */

struct hist {
	int mbits;
	uint64_t zero;
	uint64_t *block[NBLOCKS];
};

static uint32_t
f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	return u;
}

static float
u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

struct hist *
hist_new(int mbits)
{
	struct hist *h;

	if (mbits < 0 || mbits > HIST_MBITS_MAX)
		return NULL;
	if (!(h = calloc(1, sizeof *h)))
		return NULL;
	h->mbits = mbits;
	return h;
}

void
hist_free(struct hist *h)
{
	if (!h)
		return;
	for (int i = 0; i < NBLOCKS; i++)
		free(h->block[i]);
	free(h);
}

int
hist_mbits(const struct hist *h)
{
	return h->mbits;
}

int
hist_add(struct hist *h, const float *x, size_t n)
{
	int shift = 23 - h->mbits;
	uint32_t mask = ((uint32_t)1 << h->mbits) - 1;

	for (size_t i = 0; i < n; i++) {
		uint32_t u = f2u(x[i]), top = u >> 23, e = top & 0xff;
		uint64_t *b;

		/* one test for the rare cases: zero/subnormal and Inf/NaN */
		if (e - 1 >= 254) {
			h->zero += e == 0;
			continue;
		}
		if (!(b = h->block[top])) {
			b = calloc((size_t)1 << h->mbits, sizeof *b);
			if (!b)
				return -1;
			h->block[top] = b;
		}
		b[(u >> shift) & mask]++;
	}
	return 0;
}

static int
add_count(uint64_t *dst, uint64_t n, struct err *e)
{
	if (*dst > UINT64_MAX - n)
		return err_set(e, "histogram bin count overflows");
	*dst += n;
	return 0;
}

int
hist_add_bin(struct hist *h, float edge, uint64_t count, struct err *e)
{
	uint32_t u = f2u(edge), top = u >> 23, e8 = top & 0xff;
	uint32_t low = ((uint32_t)1 << (23 - h->mbits)) - 1;

	if (e8 == 0xff)
		return err_set(e, "histogram bin edge %g is not finite",
		    (double)edge);
	if (e8 == 0) {
		if (u & 0x7fffff)
			return err_set(e, "histogram bin edge %g is subnormal "
			    "(subnormals count in zero)", (double)edge);
		return add_count(&h->zero, count, e);
	}
	if (u & low)
		return err_set(e, "histogram bin edge %.9g is not a bin edge "
		    "for mbits %d", (double)edge, h->mbits);
	if (!h->block[top] && !(h->block[top] =
	    calloc((size_t)1 << h->mbits, sizeof *h->block[top])))
		return err_nomem(e);
	return add_count(&h->block[top][(u & 0x7fffff) >> (23 - h->mbits)],
	    count, e);
}

int
hist_add_block(struct hist *h, int block, const uint64_t *counts,
    struct err *e)
{
	size_t nb = (size_t)1 << h->mbits;
	uint64_t *b, any = 0, over = 0;

	if (block < 0 || block >= NBLOCKS || (block & 0xff) == 0 ||
	    (block & 0xff) == 0xff)
		return err_set(e, "histogram block %d is not one of finite "
		    "normal values", block);
	for (size_t j = 0; j < nb; j++)
		any |= counts[j];
	if (!any)
		return 0;
	if (!(b = h->block[block]) &&
	    !(b = h->block[block] = calloc(nb, sizeof *b)))
		return err_nomem(e);
	for (size_t j = 0; j < nb; j++) {
		over |= b[j] > UINT64_MAX - counts[j];
		b[j] += counts[j];
	}
	return over ? err_set(e, "histogram bin count overflows") : 0;
}

int
hist_coarsen(struct hist *h, int mbits, struct err *e)
{
	uint64_t *nb[NBLOCKS] = { 0 };
	int shift = h->mbits - mbits;
	size_t nold = (size_t)1 << h->mbits;

	if (mbits < 0 || mbits > h->mbits)
		return err_set(e, "cannot coarsen a %d-bit histogram to %d bits",
		    h->mbits, mbits);
	if (shift == 0)
		return 0;
	/* all new blocks first, so a failure leaves h as it was */
	for (int i = 0; i < NBLOCKS; i++)
		if (h->block[i] && !(nb[i] = calloc((size_t)1 << mbits,
		    sizeof *nb[i]))) {
			for (int k = 0; k < i; k++)
				free(nb[k]);
			return err_nomem(e);
		}
	for (int i = 0; i < NBLOCKS; i++) {
		if (!h->block[i])
			continue;
		/* sums of finer bins cannot overflow: they were one total */
		for (size_t j = 0; j < nold; j++)
			nb[i][j >> shift] += h->block[i][j];
		free(h->block[i]);
		h->block[i] = nb[i];
	}
	h->mbits = mbits;
	return 0;
}

int
hist_merge(struct hist *dst, const struct hist *src, struct err *e)
{
	int shift;
	size_t nsrc = (size_t)1 << src->mbits;

	if (src->mbits < dst->mbits && hist_coarsen(dst, src->mbits, e) < 0)
		return -1;
	shift = src->mbits - dst->mbits;
	if (add_count(&dst->zero, src->zero, e) < 0)
		return -1;
	for (int i = 0; i < NBLOCKS; i++) {
		if (!src->block[i])
			continue;
		if (!dst->block[i] && !(dst->block[i] =
		    calloc((size_t)1 << dst->mbits, sizeof *dst->block[i])))
			return err_nomem(e);
		for (size_t j = 0; j < nsrc; j++)
			if (src->block[i][j] && add_count(
			    &dst->block[i][j >> shift], src->block[i][j], e) < 0)
				return -1;
	}
	return 0;
}

uint64_t
hist_total(const struct hist *h)
{
	uint64_t t = h->zero;
	size_t nb = (size_t)1 << h->mbits;

	for (int i = 0; i < NBLOCKS; i++)
		if (h->block[i])
			for (size_t j = 0; j < nb; j++) {
				if (h->block[i][j] > UINT64_MAX - t)
					return UINT64_MAX;
				t += h->block[i][j];
			}
	return t;
}

/* Edge bits of bin j in block i (sign and exponent in i). */
static uint32_t
edge_bits(const struct hist *h, int i, size_t j)
{
	return (uint32_t)i << 23 | (uint32_t)j << (23 - h->mbits);
}

/* The next edge in magnitude; FLT_MAX in place of infinity. */
static float
next_edge(const struct hist *h, uint32_t u)
{
	float f = u2f(u + ((uint32_t)1 << (23 - h->mbits)));

	if (isinf(f))
		return f > 0 ? FLT_MAX : -FLT_MAX;
	return f;
}

int
hist_bins(const struct hist *h, struct hist_bin **bins, size_t *n,
    struct err *e)
{
	size_t nb = (size_t)1 << h->mbits, cnt = h->zero != 0, k = 0;
	struct hist_bin *b;

	for (int i = 0; i < NBLOCKS; i++)
		if (h->block[i])
			for (size_t j = 0; j < nb; j++)
				cnt += h->block[i][j] != 0;
	*bins = NULL;
	*n = 0;
	if (cnt == 0)
		return 0;
	if (!(b = malloc(cnt * sizeof *b)))
		return err_nomem(e);
	/* negative bins: largest magnitude (lowest value) first */
	for (int ex = 254; ex >= 1; ex--) {
		const uint64_t *blk = h->block[256 + ex];

		if (!blk)
			continue;
		for (size_t j = nb; j-- > 0;)
			if (blk[j]) {
				uint32_t u = edge_bits(h, 256 + ex, j);

				b[k].lo = next_edge(h, u);
				b[k].hi = u2f(u);
				b[k++].count = blk[j];
			}
	}
	if (h->zero) {
		b[k].lo = b[k].hi = 0;
		b[k++].count = h->zero;
	}
	for (int ex = 1; ex <= 254; ex++) {
		const uint64_t *blk = h->block[ex];

		if (!blk)
			continue;
		for (size_t j = 0; j < nb; j++)
			if (blk[j]) {
				uint32_t u = edge_bits(h, ex, j);

				b[k].lo = u2f(u);
				b[k].hi = next_edge(h, u);
				b[k++].count = blk[j];
			}
	}
	*bins = b;
	*n = k;
	return 0;
}

int
hist_same(const struct hist *a, const struct hist *b, struct err *e)
{
	struct hist_bin *ba, *bb;
	size_t na, nb;
	int eq;

	if (hist_bins(a, &ba, &na, e) < 0)
		return -1;
	if (hist_bins(b, &bb, &nb, e) < 0) {
		free(ba);
		return -1;
	}
	eq = na == nb && (na == 0 || memcmp(ba, bb, na * sizeof *ba) == 0);
	free(ba);
	free(bb);
	return eq;
}
