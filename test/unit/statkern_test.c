/*
 * statkern_test: the fast statistics of float tensors (lib/statkern.c).
 * Checks that a batch gives the counts, NaN/Inf counts, range and
 * histogram of tstats_add_batch() and sums that agree with it, on small
 * and big (several threads) tensors, with and without non-finite values,
 * zeros, subnormals and -0; and that the stream written is the same
 * bytes whatever the thread count and the vector code (ONNXQ_SIMD).
 * Needs nothing but libonnxq.
 */
#include <float.h>
#include <stdint.h>

#include "statkern.h"
#include "stream.h"
#include "unit.h"

static uint64_t rng = 0x243f6a8885a308d3ULL;

/* n values of kind: 0 plain, 1 with NaN, Inf, zeros, -0 and subnormals. */
static float *
values(size_t n, int kind)
{
	float *x = malloc(n * sizeof *x);

	for (size_t i = 0; x && i < n; i++) {
		double u = (double)(unit_rand64_r(&rng) >> 11) /
		    9007199254740992.0;

		x[i] = (float)((u - 0.3) * 40);
		if (kind && i % 97 == 5)
			x[i] = 0;
		if (kind && i % 101 == 7)
			x[i] = -0.0f;
		if (kind && i % 211 == 3)
			x[i] = FLT_MIN / 8 * (float)(i % 5);
		if (kind && i % 5003 == 11)
			x[i] = NAN;
		if (kind && i % 7919 == 13)
			x[i] = i % 2 ? INFINITY : -INFINITY;
	}
	return x;
}

/* The stat and hist records of ts (annotated), malloc'd. */
static char *
stream_of(const struct tstats *ts)
{
	char *text = NULL;
	size_t len;
	FILE *fp = open_memstream(&text, &len);
	struct stream_writer *w = stream_writer_new(fp, "mem");
	struct err e;

	tstats_write(ts, "t", w, 1, &e);
	stream_write_end(w, &e);
	stream_writer_free(w);
	fclose(fp);
	return text;
}

/* Two batches of x (n values each, the second from x + n) into ts. */
static int
add_two(struct statkern *k, struct tstats *ts, const float *x, size_t n,
    struct err *e)
{
	if (k)
		return statkern_add_batch(k, ts, x, n, e) < 0 ||
		    statkern_add_batch(k, ts, x + n, n, e) < 0 ? -1 : 0;
	return tstats_add_batch(ts, x, n, e) < 0 ||
	    tstats_add_batch(ts, x + n, n, e) < 0 ? -1 : 0;
}

static void
compare_with_tstats(size_t n, int kind, int mbits)
{
	float *x = values(2 * n, kind);
	struct statkern *k;
	struct tstats fast, ref;
	struct hist_bin *bf = NULL, *br = NULL;
	size_t nf = 0, nr = 0;
	struct err e;

	REQUIRE(x != NULL);
	REQUIRE((k = statkern_new(2, mbits, &e)) != NULL);
	REQUIRE(tstats_init(&fast, mbits, &e) == 0);
	REQUIRE(tstats_init(&ref, mbits, &e) == 0);
	CHECK(add_two(k, &fast, x, n, &e) == 0);
	CHECK(add_two(NULL, &ref, x, n, &e) == 0);
	CHECK_EQ_INT(fast.n, ref.n);
	CHECK_EQ_INT(fast.nan, ref.nan);
	CHECK_EQ_INT(fast.inf, ref.inf);
	CHECK_EQ_INT(fast.batches, ref.batches);
	CHECK(fast.min == ref.min && fast.max == ref.max);
	CHECK(cxsum_cmp(&fast.bmin, &ref.bmin) == 0);
	CHECK(cxsum_cmp(&fast.bmax, &ref.bmax) == 0);
	CHECK_NEAR(cxsum_round(&fast.sum), cxsum_round(&ref.sum),
	    1e-9 * fabs(cxsum_round(&ref.sumsq)) + 1e-9);
	CHECK_NEAR(cxsum_round(&fast.sumsq), cxsum_round(&ref.sumsq),
	    1e-9 * cxsum_round(&ref.sumsq));
	CHECK(hist_bins(fast.hist, &bf, &nf, &e) == 0);
	CHECK(hist_bins(ref.hist, &br, &nr, &e) == 0);
	CHECK_EQ_INT(nf, nr);
	CHECK(nf == nr && memcmp(bf, br, nf * sizeof *bf) == 0);
	free(bf);
	free(br);
	tstats_release(&fast);
	tstats_release(&ref);
	statkern_free(k);
	free(x);
}

static void
test_matches_tstats(void)
{
	static const size_t sizes[] = { 1, 15, 17, 8192, 8193, 100000,
	    (size_t)1 << 20 | 77 };

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		for (int kind = 0; kind < 2; kind++) {
			compare_with_tstats(sizes[i], kind,
			    HIST_MBITS_DEFAULT);
			compare_with_tstats(sizes[i], kind, 0);
			compare_with_tstats(sizes[i], kind,
			    STATKERN_MBITS_MAX);
		}
}

static char *slot_stream(const float *x, size_t n, int nthreads, int slot,
    int hist);

/* The stream of two batches of x through a kernel of nthreads. */
static char *
fast_stream(const float *x, size_t n, int nthreads)
{
	return slot_stream(x, n, nthreads, -1, 1);
}

static void
test_same_bytes_everywhere(void)
{
	static const char *const simd[] = { "plain", "sse2", "avx2" };
	size_t n = (size_t)3 << 19 | 5;
	float *x = values(2 * n, 1);
	char *want, *got;

	REQUIRE(x != NULL);
	unsetenv("ONNXQ_SIMD");
	want = fast_stream(x, n, 1);
	REQUIRE(want != NULL);
	got = fast_stream(x, n, 3);
	CHECK_EQ_STR(got, want);
	free(got);
	for (size_t i = 0; i < sizeof simd / sizeof simd[0]; i++) {
		setenv("ONNXQ_SIMD", simd[i], 1);
		got = fast_stream(x, n, 2);
		CHECK_EQ_STR(got, want);
		free(got);
	}
	unsetenv("ONNXQ_SIMD");
	free(want);
	free(x);
}

/*
 * The stream of two batches of x (n values each, the second from x + n)
 * through a kernel of nthreads: by statkern_add_batch() when slot < 0,
 * else given to that slot chunk by chunk, backwards, from the threads in
 * turn (hist: counted, else no histogram kept).
 */
static char *
slot_stream(const float *x, size_t n, int nthreads, int slot, int hist)
{
	struct statkern *k;
	struct tstats ts;
	struct err e;
	char *s;

	if (!(k = statkern_new(nthreads, HIST_MBITS_DEFAULT, &e)) ||
	    statkern_slots(k, slot + 1, &e) < 0 ||
	    tstats_init(&ts, hist ? HIST_MBITS_DEFAULT : -1, &e) < 0)
		abort();
	CHECK_EQ_INT(statkern_threads(k), nthreads);
	if (slot < 0 && add_two(k, &ts, x, n, &e) < 0)
		abort();
	for (int b = 0; slot >= 0 && b < 2; b++) {
		size_t nch = (n + STATKERN_CHUNK - 1) / STATKERN_CHUNK;

		statkern_slot_reset(k, slot);
		for (size_t c = nch; c-- > 0;) {
			size_t at = c * STATKERN_CHUNK;

			statkern_slot_chunk(k, slot, (int)(c % nthreads),
			    x + b * n + at, n - at < STATKERN_CHUNK ? n - at :
			    STATKERN_CHUNK, hist);
		}
		if (statkern_slot_commit(k, slot, &ts, hist, &e) < 0)
			abort();
	}
	s = stream_of(&ts);
	tstats_release(&ts);
	statkern_free(k);
	return s;
}

/* A batch given chunk by chunk to a slot is the batch given whole. */
static void
test_slots_as_batches(void)
{
	static const size_t sizes[] = { 17, 8192, 40000, (size_t)1 << 19 | 9 };

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		for (int kind = 0; kind < 2; kind++) {
			size_t n = sizes[i];
			float *x = values(2 * n, kind);
			struct statkern *k;
			struct err e;
			char *want, *got;
			size_t m, ninf;

			REQUIRE(x != NULL);
			want = fast_stream(x, n, 1);
			got = slot_stream(x, n, 2, 3, 1);
			CHECK_EQ_STR(got, want);
			free(got);
			got = slot_stream(x, n, 1, 0, 1);
			CHECK_EQ_STR(got, want);
			free(got);
			free(want);
			/* no histogram; a slot whose batch is dropped */
			want = slot_stream(x, n, 1, -1, 0);
			REQUIRE((k = statkern_new(1, HIST_MBITS_DEFAULT,
			    &e)) != NULL);
			REQUIRE(statkern_slots(k, 2, &e) == 0);
			statkern_slot_reset(k, 1);
			m = n < STATKERN_CHUNK ? n : STATKERN_CHUNK;
			statkern_slot_chunk(k, 1, 0, x, m, 1);
			for (size_t j = ninf = 0; j < m; j++)
				ninf += isinf(x[j]) != 0;
			CHECK_EQ_INT(statkern_slot_inf(k, 1), ninf);
			statkern_slot_discard(k, 1);
			statkern_free(k);
			got = slot_stream(x, n, 2, 1, 0);
			CHECK_EQ_STR(got, want);
			free(got);
			free(want);
			free(x);
		}
}

UNIT_MAIN(test_matches_tstats, test_same_bytes_everywhere,
    test_slots_as_batches)
