/*
 * hist_test: the float32 histogram with data-independent bins. Checks bin
 * edges and widths, the zero bin (zeros and subnormals), skipped
 * non-finite values, ascending bin order, exact coarsening and merging
 * (shards == whole, at equal and at different mbits), and the errors of
 * hist_add_bin. Needs nothing but libonnxq.
 */
#include <float.h>
#include <stdint.h>

#include "hist.h"
#define UNIT_SEED 0x243f6a8885a308d3ULL
#include "unit.h"

static float
bits2f(uint32_t u)
{
	union { uint32_t u; float f; } v = { .u = u };

	return v.f;
}

/* Random floats of every kind: normals over the whole range, subnormals,
 * zeros, infinities, NaNs. */
static void
fill(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u = (uint32_t)unit_rand64();

		switch (unit_rand64() % 16) {
		case 0:
			x[i] = (u & 1) ? -0.0f : 0.0f;
			break;
		case 1:
			x[i] = bits2f((u & 0x807fffff) | 1);	/* subnormal */
			break;
		case 2:
			x[i] = (u & 1) ? NAN : (u & 2) ? INFINITY : -INFINITY;
			break;
		case 3:
		case 4:
			x[i] = bits2f(u);	/* anything, NaNs included */
			break;
		default:	/* activations-like */
			x[i] = (float)((double)(u >> 8) / 16777216.0 * 20 - 10);
		}
	}
}

/* Two histograms have the same bins. */
static int
same(const struct hist *a, const struct hist *b)
{
	return hist_same(a, b, NULL) == 1;
}

static void
test_edges(void)
{
	struct hist *h = hist_new(7);
	float x[] = { 1.0f, 1.0078125f, 1.0078124f, -1.5f, 3.0f, 0.0f, -0.0f,
	    1e-40f, -1e-42f, NAN, INFINITY, -INFINITY, FLT_MAX };
	struct hist_bin *b;
	size_t n;

	REQUIRE(h != NULL);
	CHECK_EQ_INT(hist_mbits(h), 7);
	REQUIRE(hist_add(h, x, sizeof x / sizeof x[0]) == 0);
	CHECK_EQ_INT(hist_total(h), 10);
	REQUIRE(hist_bins(h, &b, &n, NULL) == 0);
	REQUIRE(n == 6);
	/* -1.5 lies in (-(1.5 + 1/128), -1.5] */
	CHECK(b[0].lo == -1.5078125f && b[0].hi == -1.5f);
	CHECK_EQ_INT(b[0].count, 1);
	/* zeros and subnormals: one zero bin */
	CHECK(b[1].lo == 0 && b[1].hi == 0);
	CHECK_EQ_INT(b[1].count, 4);
	/* [1, 1 + 1/128): 1.0 and 1.0078124 */
	CHECK(b[2].lo == 1.0f && b[2].hi == 1.0078125f);
	CHECK_EQ_INT(b[2].count, 2);
	CHECK(b[3].lo == 1.0078125f && b[3].hi == 1.015625f);
	CHECK(b[4].lo == 3.0f && b[4].hi == 3.015625f);
	/* the top bin ends at FLT_MAX, not at infinity */
	CHECK(b[5].hi == FLT_MAX && b[5].lo < FLT_MAX);
	free(b);
	hist_free(h);
	CHECK(hist_new(HIST_MBITS_MAX + 1) == NULL);
	CHECK(hist_new(-1) == NULL);
	h = hist_new(0);
	REQUIRE(h != NULL);
	hist_add(h, x, 5);
	REQUIRE(hist_bins(h, &b, &n, NULL) == 0);
	/* one bin per binade: -1.5 in (-2, -1], 1.0.. in [1, 2), 3 in [2, 4) */
	CHECK_EQ_INT(n, 3);
	CHECK(n == 3 && b[0].lo == -2 && b[1].lo == 1 && b[1].hi == 2 &&
	    b[1].count == 3 && b[2].lo == 2 && b[2].hi == 4);
	free(b);
	hist_free(h);
}

static void
test_order_and_width(void)
{
	static float x[20000];
	struct hist *h = hist_new(5);
	struct hist_bin *b;
	size_t n;
	uint64_t total = 0;
	int ordered = 1, narrow = 1;

	fill(x, 20000);
	REQUIRE(h != NULL);
	REQUIRE(hist_add(h, x, 20000) == 0);
	REQUIRE(hist_bins(h, &b, &n, NULL) == 0);
	for (size_t i = 0; i < n; i++) {
		total += b[i].count;
		if (i && !(b[i - 1].hi <= b[i].lo || (b[i].lo == 0 &&
		    b[i].hi == 0)))
			ordered = 0;
		if (b[i].lo != 0 && b[i].hi != FLT_MAX && b[i].hi != -FLT_MAX &&
		    (double)b[i].hi - b[i].lo > fabs((double)b[i].lo) / 32 * 1.0000001)
			narrow = 0;
	}
	CHECK(ordered);
	CHECK(narrow);
	CHECK_EQ_INT(total, hist_total(h));
	free(b);
	hist_free(h);
}

static void
test_merge_shards(void)
{
	static float x[30000];
	struct hist *whole = hist_new(7), *sum = hist_new(7), *part;
	struct err e;

	fill(x, 30000);
	REQUIRE(whole && sum);
	REQUIRE(hist_add(whole, x, 30000) == 0);
	for (int k = 2; k >= 0; k--) {
		part = hist_new(7);
		REQUIRE(part != NULL);
		REQUIRE(hist_add(part, x + k * 10000, 10000) == 0);
		CHECK_EQ_INT(hist_merge(sum, part, &e), 0);
		hist_free(part);
	}
	CHECK(same(sum, whole));
	CHECK_EQ_INT(hist_total(sum), hist_total(whole));
	hist_free(whole);
	hist_free(sum);
}

static void
test_coarsen_exact(void)
{
	static float x[30000];
	struct hist *fine = hist_new(9), *coarse = hist_new(3), *mix;
	struct err e;

	fill(x, 30000);
	REQUIRE(fine && coarse);
	hist_add(fine, x, 30000);
	hist_add(coarse, x, 30000);
	CHECK(!same(fine, coarse));
	CHECK_EQ_INT(hist_coarsen(fine, 3, &e), 0);
	CHECK_EQ_INT(hist_mbits(fine), 3);
	CHECK(same(fine, coarse));
	CHECK_EQ_INT(hist_coarsen(fine, 4, &e), -1);
	CHECK(strstr(e.msg, "cannot coarsen") != NULL);
	hist_free(fine);

	/* merging a finer src into a coarser dst, and the other way round */
	mix = hist_new(3);
	fine = hist_new(8);
	REQUIRE(mix && fine);
	hist_add(mix, x, 12345);
	hist_add(fine, x + 12345, 30000 - 12345);
	CHECK_EQ_INT(hist_merge(mix, fine, &e), 0);
	CHECK(same(mix, coarse));
	hist_free(mix);
	mix = hist_new(8);
	hist_add(mix, x + 12345, 30000 - 12345);
	hist_free(fine);
	fine = hist_new(3);
	hist_add(fine, x, 12345);
	CHECK_EQ_INT(hist_merge(mix, fine, &e), 0);
	CHECK_EQ_INT(hist_mbits(mix), 3);
	CHECK(same(mix, coarse));
	hist_free(mix);
	hist_free(fine);
	hist_free(coarse);
}

static void
test_add_bin(void)
{
	static float x[5000];
	struct hist *h = hist_new(6), *r = hist_new(6);
	struct hist_bin *b;
	size_t n;
	struct err e;

	fill(x, 5000);
	REQUIRE(h && r);
	hist_add(h, x, 5000);
	/* rebuilding from the bins' edges gives the same histogram */
	REQUIRE(hist_bins(h, &b, &n, NULL) == 0);
	for (size_t i = 0; i < n; i++) {
		float edge = b[i].lo > 0 ? b[i].lo : b[i].hi;

		CHECK_EQ_INT(hist_add_bin(r, edge, b[i].count, &e), 0);
	}
	free(b);
	CHECK(same(h, r));
	CHECK_EQ_INT(hist_add_bin(r, 1.01f, 1, &e), -1);
	CHECK(strstr(e.msg, "not a bin edge") != NULL);
	CHECK_EQ_INT(hist_add_bin(r, 1e-40f, 1, &e), -1);
	CHECK(strstr(e.msg, "subnormal") != NULL);
	CHECK_EQ_INT(hist_add_bin(r, INFINITY, 1, &e), -1);
	CHECK(strstr(e.msg, "not finite") != NULL);
	CHECK_EQ_INT(hist_add_bin(r, NAN, 1, &e), -1);
	hist_free(h);
	hist_free(r);
	r = hist_new(6);
	REQUIRE(r != NULL);
	CHECK_EQ_INT(hist_add_bin(r, 2.0f, UINT64_MAX, &e), 0);
	CHECK_EQ_INT(hist_add_bin(r, 2.0f, 1, &e), -1);
	CHECK(strstr(e.msg, "overflow") != NULL);
	CHECK_EQ_INT(hist_add_bin(r, -0.0f, 3, &e), 0);
	CHECK_EQ_INT(hist_add_bin(r, 0.0f, UINT64_MAX - 3, &e), 0);
	CHECK_EQ_INT(hist_add_bin(r, 0.0f, 1, &e), -1);
	hist_free(r);
}

/* n values from nb bins (1, 2, 3, ... and their negatives). */
static void
few_bins(float *x, size_t n, int nb)
{
	for (size_t i = 0; i < n; i++) {
		int k = (int)(unit_rand64() % (uint64_t)nb);

		x[i] = (float)(k / 2 + 1) * (k % 2 ? -1.0f : 1.0f);
		if (unit_rand64() % 8 == 0)
			x[i] = 0;
	}
}

/*
 * #22: a histogram of a few bins is a few pairs, not 5 KB of blocks; the
 * same bins and counts whichever form holds them, however the values
 * come (one at a time, at once, by merges, by edges, coarsened).
 */
static void
test_small_forms(void)
{
	static float x[200];
	struct err e;

	for (int nb = 1; nb <= 40; nb++) {
		struct hist *whole = hist_new(7), *one = hist_new(7);
		struct hist *a = hist_new(7), *b = hist_new(5);
		struct hist *edges = hist_new(7), *c5 = hist_new(5);
		struct hist_bin *bins;
		size_t n;

		REQUIRE(whole && one && a && b && edges && c5);
		few_bins(x, 200, nb);
		/* 200 at once: blocked from the start */
		REQUIRE(hist_add(whole, x, 200) == 0);
		REQUIRE(hist_add(c5, x, 200) == 0);
		for (size_t i = 0; i < 200; i++)
			REQUIRE(hist_add(one, x + i, 1) == 0);
		CHECK(same(one, whole));
		CHECK_EQ_INT(hist_total(one), 200);
		if (nb <= 8)	/* at most 16 bins: pairs only */
			CHECK(hist_bytes(one) < 512);
		/* shards in both forms, merged both ways, at 7 and 5 bits */
		for (size_t i = 0; i < 100; i += 4)
			REQUIRE(hist_add(a, x + i, 4) == 0);
		REQUIRE(hist_add(b, x + 100, 100) == 0);
		CHECK_EQ_INT(hist_merge(a, b, &e), 0);
		CHECK(same(a, c5));
		/* pairs into blocks */
		hist_free(a);
		hist_free(b);
		REQUIRE((a = hist_new(7)) && (b = hist_new(7)));
		for (size_t i = 0; i < 100; i += 4)
			REQUIRE(hist_add(a, x + i, 4) == 0);
		REQUIRE(hist_add(b, x + 100, 100) == 0);
		CHECK_EQ_INT(hist_merge(b, a, &e), 0);
		CHECK(same(b, whole));
		/* the same bins through their edges, as a stream reads them */
		REQUIRE(hist_bins(whole, &bins, &n, &e) == 0);
		for (size_t i = 0; i < n; i++)
			CHECK_EQ_INT(hist_add_bin(edges, bins[i].lo > 0 ?
			    bins[i].lo : bins[i].hi, bins[i].count, &e), 0);
		free(bins);
		CHECK(same(edges, whole));
		CHECK_EQ_INT(hist_coarsen(edges, 5, &e), 0);
		CHECK(same(edges, c5));
		hist_free(whole);
		hist_free(one);
		hist_free(a);
		hist_free(b);
		hist_free(edges);
		hist_free(c5);
	}
}

/* hist_add_block() adds what hist_add_bin() adds bin by bin. */
static void
test_add_block(void)
{
	static float x[5000];
	struct hist *h = hist_new(5), *r = hist_new(5), *s = hist_new(5);
	struct hist_bin *b;
	uint64_t counts[32] = { 0 };
	size_t n;
	struct err e;

	fill(x, 5000);
	REQUIRE(h && r && s);
	hist_add(h, x, 5000);
	REQUIRE(hist_bins(h, &b, &n, NULL) == 0);
	for (size_t i = 0; i < n; i++) {
		float edge = b[i].lo > 0 ? b[i].lo : b[i].hi;
		uint32_t u;

		memcpy(&u, &edge, sizeof u);
		if (edge == 0) {
			CHECK_EQ_INT(hist_add_bin(r, 0, b[i].count, &e), 0);
			continue;
		}
		counts[(u >> 18) & 31] = b[i].count;
		CHECK_EQ_INT(hist_add_block(r, (int)(u >> 23), counts, &e), 0);
		counts[(u >> 18) & 31] = 0;
	}
	free(b);
	CHECK(same(h, r));
	/* all zero: nothing added, no block made */
	CHECK_EQ_INT(hist_add_block(s, 127, counts, &e), 0);
	CHECK_EQ_INT(hist_bins(s, &b, &n, NULL), 0);
	CHECK_EQ_INT((int)n, 0);
	free(b);
	CHECK_EQ_INT(hist_add_block(s, 0, counts, &e), -1);
	CHECK_EQ_INT(hist_add_block(s, 255, counts, &e), -1);
	counts[3] = UINT64_MAX;
	CHECK_EQ_INT(hist_add_block(s, 300, counts, &e), 0);
	counts[3] = 1;
	CHECK_EQ_INT(hist_add_block(s, 300, counts, &e), -1);
	CHECK(strstr(e.msg, "overflow") != NULL);
	hist_free(h);
	hist_free(r);
	hist_free(s);
}

/*
 * hist_add_clamped(): the histogram of Clip's output derived from its
 * input's equals the one counted, for bounds inside bins, on edges, in
 * the zero bin, crossed, NaN and infinite; the values include NaN, -0,
 * subnormals, infinities and the bounds themselves. Both forms of src
 * (few bins, blocks) and of dst.
 */
static float
clampf(float v, float lo, float hi)
{
	v = v < lo ? lo : v;
	return v > hi ? hi : v;
}

static void
test_add_clamped(void)
{
	static const float bounds[][2] = {
		{ 0, INFINITY }, { 0, 6 }, { -1.5f, 2.75f }, { -0.0f, 6 },
		{ 1.1f, 1.13f }, { -7.3f, -7.29f }, { 1e-40f, 3e-39f },
		{ -1e-40f, 1e-40f }, { 3, 3 }, { 5, 2 }, { NAN, 6 },
		{ -6, NAN }, { NAN, NAN }, { -INFINITY, INFINITY },
		{ INFINITY, INFINITY }, { -INFINITY, -INFINITY },
		{ -FLT_MAX, FLT_MAX }, { 4, 1e30f }, { -1e30f, -2 },
	};
	static const size_t sizes[] = { 7, 5000 };
	static float x[5000], y[5000];
	struct err e;

	for (size_t bi = 0; bi < sizeof bounds / sizeof *bounds; bi++)
		for (size_t si = 0; si < 2; si++) {
			float lo = bounds[bi][0], hi = bounds[bi][1];
			size_t n = sizes[si];
			struct hist *in = hist_new(7), *want = hist_new(7);
			struct hist *got = hist_new(7);

			REQUIRE(in && want && got);
			fill(x, n);
			/* the bounds, their neighbours, huge values */
			for (size_t i = 0; i < n; i += 3) {
				float b = i % 2 ? lo : hi;

				x[i] = i % 5 == 0 ? nextafterf(b, 0) : i % 7 == 0 ?
				    nextafterf(b, INFINITY) : b;
			}
			/* infinities are counted apart (see hist.h) */
			for (size_t i = 0; i < n; i++)
				if (isinf(x[i]))
					x[i] = copysignf(1.25f, x[i]);
			for (size_t i = 0; i < n; i++)
				y[i] = clampf(x[i], lo, hi);
			hist_add(in, x, n);
			hist_add(want, y, n);
			if (si == 1)	/* onto a dst that holds counts */
				hist_add(got, x, 3), hist_add(want, x, 3);
			CHECK_EQ_INT(hist_add_clamped(got, in, lo, hi, &e), 0);
			CHECK(same(got, want));
			hist_free(in);
			hist_free(want);
			hist_free(got);
		}
	{
		struct hist *a = hist_new(7), *b = hist_new(6);

		REQUIRE(a && b);
		CHECK_EQ_INT(hist_add_clamped(a, b, 0, 6, &e), -1);
		hist_free(a);
		hist_free(b);
	}
}

/* hist_clear(): no counts left, and the histogram counts on as new. */
static void
test_clear(void)
{
	static float x[3000];
	struct hist *h = hist_new(7), *f = hist_new(7);
	struct hist_bin *b;
	size_t n;

	REQUIRE(h && f);
	fill(x, 3000);
	hist_add(h, x, 3000);
	hist_clear(h);
	CHECK(hist_total(h) == 0);
	CHECK_EQ_INT(hist_bins(h, &b, &n, NULL), 0);
	CHECK_EQ_INT((int)n, 0);
	free(b);
	hist_add(h, x, 10);
	hist_add(f, x, 10);
	CHECK(same(h, f));
	hist_free(h);
	hist_free(f);
}

UNIT_MAIN(test_edges, test_order_and_width, test_merge_shards,
    test_coarsen_exact, test_add_bin, test_small_forms,
    test_add_block, test_add_clamped, test_clear)
