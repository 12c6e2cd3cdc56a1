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

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
/* statkern adds every block of every batch: its loops in vector code */
#define HIST_SIMD __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define HIST_SIMD
#endif

#define NBLOCKS 512	/* sign << 8 | biased exponent; 0, 255, 256, 511 unused */
/*
 * A histogram starts sparse: up to SPARSE_MAX (bin, count) pairs in an
 * array that grows from SPARSE_FIRST as bins appear, no block; it
 * becomes blocked (the pointer array, then a block per (sign, exponent)
 * seen) at its SPARSE_MAX + 1st bin, or when one
 * hist_add brings more than SPARSE_ADD values (a tensor of that size
 * pays for blocks anyway, and the blocked loop is the fast one). A tiny
 * tensor thus costs about 100 bytes instead of 5 KB or more; the bins
 * and counts are the same either way.
 */
#define SPARSE_FIRST 4
#define SPARSE_MAX 16
#define SPARSE_ADD 64

/* A bin by its key: the float's top 9 + mbits bits (sign, exponent and
 * the mantissa's top mbits bits). */
struct sbin {
	uint32_t key;
	uint64_t count;
};

struct hist {
	int mbits;
	uint64_t zero;
	uint64_t **block;	/* NBLOCKS pointers; NULL while sparse */
	int nsp, spcap;		/* bins in sp[] while sparse, room there */
	struct sbin *sp;
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
	if (h->block)
		for (int i = 0; i < NBLOCKS; i++)
			free(h->block[i]);
	free(h->block);
	free(h->sp);
	free(h);
}

int
hist_mbits(const struct hist *h)
{
	return h->mbits;
}

/* The count of bin key in a blocked h, its block allocated; NULL when
 * out of memory. */
static uint64_t *
dense_slot(struct hist *h, uint32_t key)
{
	uint32_t top = key >> h->mbits;

	if (!h->block[top] && !(h->block[top] =
	    calloc((size_t)1 << h->mbits, sizeof *h->block[top])))
		return NULL;
	return &h->block[top][key & (((uint32_t)1 << h->mbits) - 1)];
}

/* From sparse to blocked: all memory first, so a failure leaves h as it
 * was. -1 when out of memory. */
static int
densify(struct hist *h)
{
	uint64_t **blk;
	int i;

	if (h->block)
		return 0;
	if (!(blk = calloc(NBLOCKS, sizeof *blk)))
		return -1;
	for (i = 0; i < h->nsp; i++) {
		uint32_t top = h->sp[i].key >> h->mbits;

		if (!blk[top] && !(blk[top] = calloc((size_t)1 << h->mbits,
		    sizeof *blk[top])))
			goto nomem;
	}
	h->block = blk;
	for (i = 0; i < h->nsp; i++)
		*dense_slot(h, h->sp[i].key) += h->sp[i].count;
	h->nsp = h->spcap = 0;
	free(h->sp);
	h->sp = NULL;
	return 0;
nomem:
	for (int k = 0; k < NBLOCKS; k++)
		free(blk[k]);
	free(blk);
	return -1;
}

/* The count of bin key, made when new (blocking h when the pairs are
 * full); NULL when out of memory. */
static uint64_t *
slot(struct hist *h, uint32_t key)
{
	if (!h->block) {
		for (int i = 0; i < h->nsp; i++)
			if (h->sp[i].key == key)
				return &h->sp[i].count;
		if (h->nsp < SPARSE_MAX) {
			if (h->nsp == h->spcap) {
				int cap = h->spcap ? 2 * h->spcap : SPARSE_FIRST;
				struct sbin *sp = realloc(h->sp,
				    (size_t)cap * sizeof *sp);

				if (!sp)
					return NULL;
				h->sp = sp;
				h->spcap = cap;
			}
			h->sp[h->nsp].key = key;
			h->sp[h->nsp].count = 0;
			return &h->sp[h->nsp++].count;
		}
		if (densify(h) < 0)
			return NULL;
	}
	return dense_slot(h, key);
}

int
hist_add(struct hist *h, const float *x, size_t n)
{
	int shift = 23 - h->mbits;
	uint32_t mask = ((uint32_t)1 << h->mbits) - 1;

	if (!h->block && n > SPARSE_ADD && densify(h) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint32_t u = f2u(x[i]), top = u >> 23, e = top & 0xff;
		uint64_t *b;

		/* one test for the rare cases: zero/subnormal and Inf/NaN */
		if (e - 1 >= 254) {
			h->zero += e == 0;
			continue;
		}
		if (!h->block) {
			if (!(b = slot(h, u >> shift)))
				return -1;
			++*b;
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
	uint64_t *c;

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
	if (count == 0)
		return 0;	/* an empty bin is no bin */
	if (!(c = slot(h, u >> (23 - h->mbits))))
		return err_nomem(e);
	return add_count(c, count, e);
}

HIST_SIMD int
hist_add_block(struct hist *h, int block, const uint64_t *counts,
    struct err *e)
{
	size_t nb = (size_t)1 << h->mbits;
	uint64_t *b, any = 0, over = 0;

	if (block < 0 || block >= NBLOCKS || (block & 0xff) == 0 ||
	    (block & 0xff) == 0xff)
		return err_set(e, "histogram block %d is not one of finite "
		    "normal values", block);
	/* vector loops: statkern adds every block of every batch here */
#pragma omp simd reduction(|:any)
	for (size_t j = 0; j < nb; j++)
		any |= counts[j];
	if (!any)
		return 0;
	if (!h->block) {
		/* a sparse histogram stays so while its bins fit */
		for (size_t j = 0; j < nb; j++) {
			uint64_t *c;

			if (!counts[j])
				continue;
			if (!(c = slot(h, (uint32_t)block << h->mbits |
			    (uint32_t)j)))
				return err_nomem(e);
			if (add_count(c, counts[j], e) != 0)
				return -1;
		}
		return 0;
	}
	if (!(b = h->block[block]) &&
	    !(b = h->block[block] = calloc(nb, sizeof *b)))
		return err_nomem(e);
	/* the sum wraps where it overflows (vector code) */
#pragma omp simd reduction(|:over)
	for (size_t j = 0; j < nb; j++) {
		uint64_t sum = b[j] + counts[j];

		over |= sum < b[j];
		b[j] = sum;
	}
	return over ? err_set(e, "histogram bin count overflows") : 0;
}

/* Clip's map, as its kernel computes it (NaN bounds change nothing). */
static float
clamp(float v, float lo, float hi)
{
	v = v < lo ? lo : v;
	return v > hi ? hi : v;
}

/* Add count to the bin of y; a non-finite y is not counted. */
static int
add_at(struct hist *h, float y, uint64_t count, struct err *e)
{
	uint32_t u = f2u(y), e8 = u >> 23 & 0xff;
	uint64_t *c;

	if (e8 == 0xff || count == 0)
		return 0;
	if (e8 == 0)
		return add_count(&h->zero, count, e);
	if (!(c = slot(h, u >> (23 - h->mbits))))
		return err_nomem(e);
	return add_count(c, count, e);
}

/*
 * One block of src (sign << 8 | exponent, normal values): whole when
 * clamp leaves its least and greatest values as they are (so all in
 * between), into one bin when it maps both ends to the same value (so
 * all in between), else bin by bin, each bin's edge standing for all
 * its values (see hist.h).
 */
static int
add_block_clamped(struct hist *dst, int block, const uint64_t *counts,
    float lo, float hi, struct err *e)
{
	int shift = 23 - dst->mbits;
	size_t nb = (size_t)1 << dst->mbits;
	float first = u2f((uint32_t)block << 23);
	float last = u2f((uint32_t)block << 23 | 0x7fffff);
	float cf = clamp(first, lo, hi), cl = clamp(last, lo, hi);

	if (f2u(cf) == f2u(first) && f2u(cl) == f2u(last))
		return hist_add_block(dst, block, counts, e);
	if (f2u(cf) == f2u(cl)) {
		uint64_t total = 0;

		for (size_t j = 0; j < nb; j++)
			if (add_count(&total, counts[j], e) < 0)
				return -1;
		return add_at(dst, cf, total, e);
	}
	for (size_t j = 0; j < nb; j++) {
		float edge = u2f((uint32_t)block << 23 | (uint32_t)j << shift);

		if (counts[j] && add_at(dst, clamp(edge, lo, hi), counts[j],
		    e) < 0)
			return -1;
	}
	return 0;
}

int
hist_add_clamped(struct hist *dst, const struct hist *src, float lo,
    float hi, struct err *e)
{
	int shift = 23 - src->mbits;

	if (dst->mbits != src->mbits)
		return err_set(e, "histograms of mbits %d and %d", dst->mbits,
		    src->mbits);
	/* zeros and subnormals: 0 stands for them all */
	if (add_at(dst, clamp(0.0f, lo, hi), src->zero, e) < 0)
		return -1;
	for (int i = 0; i < src->nsp; i++)
		if (add_at(dst, clamp(u2f(src->sp[i].key << shift), lo, hi),
		    src->sp[i].count, e) < 0)
			return -1;
	for (int b = 0; src->block && b < NBLOCKS; b++)
		if (src->block[b] && add_block_clamped(dst, b, src->block[b],
		    lo, hi, e) < 0)
			return -1;
	return 0;
}

void
hist_clear(struct hist *h)
{
	size_t nb = (size_t)1 << h->mbits;

	h->zero = 0;
	h->nsp = 0;
	for (int b = 0; h->block && b < NBLOCKS; b++)
		if (h->block[b])
			memset(h->block[b], 0, nb * sizeof *h->block[b]);
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
	if (!h->block) {
		/* coarser keys, equal ones summed (no overflow: one total) */
		int n = 0;

		for (int i = 0; i < h->nsp; i++) {
			uint32_t key = h->sp[i].key >> shift;
			int k = 0;

			while (k < n && h->sp[k].key != key)
				k++;
			if (k == n) {
				h->sp[n].key = key;
				h->sp[n++].count = h->sp[i].count;
			} else
				h->sp[k].count += h->sp[i].count;
		}
		h->nsp = n;
		h->mbits = mbits;
		return 0;
	}
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
	if (!src->block) {
		for (int i = 0; i < src->nsp; i++) {
			uint64_t *c = slot(dst, src->sp[i].key >> shift);

			if (!c)
				return err_nomem(e);
			if (add_count(c, src->sp[i].count, e) < 0)
				return -1;
		}
		return 0;
	}
	if (densify(dst) < 0)
		return err_nomem(e);
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

size_t
hist_bytes(const struct hist *h)
{
	size_t n = sizeof *h;

	if (!h->block)
		return n;
	n += NBLOCKS * sizeof *h->block;
	for (int i = 0; i < NBLOCKS; i++)
		if (h->block[i])
			n += ((size_t)1 << h->mbits) * sizeof *h->block[i];
	return n;
}

uint64_t
hist_total(const struct hist *h)
{
	uint64_t t = h->zero;
	size_t nb = (size_t)1 << h->mbits;

	for (int i = 0; i < h->nsp; i++) {
		if (h->sp[i].count > UINT64_MAX - t)
			return UINT64_MAX;
		t += h->sp[i].count;
	}
	for (int i = 0; h->block && i < NBLOCKS; i++)
		if (h->block[i])
			for (size_t j = 0; j < nb; j++) {
				if (h->block[i][j] > UINT64_MAX - t)
					return UINT64_MAX;
				t += h->block[i][j];
			}
	return t;
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

/* Bin key as the range selection methods see it. */
static struct hist_bin
bin_of(const struct hist *h, uint32_t key, uint64_t count)
{
	uint32_t u = key << (23 - h->mbits);
	struct hist_bin b = { u2f(u), next_edge(h, u), count };

	if (u >> 31) {
		b.hi = b.lo;
		b.lo = next_edge(h, u);
	}
	return b;
}

static int
by_lo(const void *a, const void *b)
{
	float x = ((const struct hist_bin *)a)->lo;
	float y = ((const struct hist_bin *)b)->lo;

	return (x > y) - (x < y);
}

int
hist_bins(const struct hist *h, struct hist_bin **bins, size_t *n,
    struct err *e)
{
	size_t nb = (size_t)1 << h->mbits, cnt = h->zero != 0, k = 0;
	struct hist_bin *b;

	cnt += (size_t)h->nsp;
	for (int i = 0; h->block && i < NBLOCKS; i++)
		if (h->block[i])
			for (size_t j = 0; j < nb; j++)
				cnt += h->block[i][j] != 0;
	*bins = NULL;
	*n = 0;
	if (cnt == 0)
		return 0;
	if (!(b = malloc(cnt * sizeof *b)))
		return err_nomem(e);
	if (!h->block) {
		for (int i = 0; i < h->nsp; i++)
			b[k++] = bin_of(h, h->sp[i].key, h->sp[i].count);
		if (h->zero) {
			b[k].lo = b[k].hi = 0;
			b[k++].count = h->zero;
		}
		qsort(b, k, sizeof *b, by_lo);
		*bins = b;
		*n = k;
		return 0;
	}
	/* negative bins: largest magnitude (lowest value) first */
	for (uint32_t ex = 254; ex >= 1; ex--) {
		const uint64_t *blk = h->block[256 + ex];

		for (size_t j = nb; blk && j-- > 0;)
			if (blk[j])
				b[k++] = bin_of(h, (256 + ex) << h->mbits |
				    (uint32_t)j, blk[j]);
	}
	if (h->zero) {
		b[k].lo = b[k].hi = 0;
		b[k++].count = h->zero;
	}
	for (uint32_t ex = 1; ex <= 254; ex++) {
		const uint64_t *blk = h->block[ex];

		for (size_t j = 0; blk && j < nb; j++)
			if (blk[j])
				b[k++] = bin_of(h, ex << h->mbits |
				    (uint32_t)j, blk[j]);
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
