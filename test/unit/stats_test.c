/*
 * stats_test: per-tensor activation statistics (lib/stats.c). Checks the
 * one-pass batch reduction against a plain loop (counts, NaN/Inf, exact
 * min/max, sums), both of its paths (chunks with and without non-finite
 * values), -0 handling, shapes, exact merging of shards in any order, the
 * derived mean/std/moving averages, the stat/hist stream round trip
 * (split hist records included) and the errors on bad records.
 * Needs nothing but libonnxq.
 */
#include <float.h>
#include <stdint.h>

#include "stats.h"
#define UNIT_SEED 0xb7e151628aed2a6bULL
#include "unit.h"

static double
uniform(void)
{
	return (double)(unit_rand64() >> 11) / 9007199254740992.0;
}

/* n values, with rare NaN/Inf when dirty. */
static void
fill(float *x, size_t n, int dirty)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t r = unit_rand64();

		x[i] = (float)((uniform() - 0.3) * 8);
		if (dirty && r % 1000 == 0)
			x[i] = NAN;
		else if (dirty && r % 1000 == 1)
			x[i] = r & 2048 ? INFINITY : -INFINITY;
	}
}

static int
same_stats(const struct tstats *a, const struct tstats *b)
{
	int eq;

	eq = a->n == b->n && a->nan == b->nan && a->inf == b->inf &&
	    memcmp(&a->min, &b->min, sizeof a->min) == 0 &&
	    memcmp(&a->max, &b->max, sizeof a->max) == 0 &&
	    a->batches == b->batches && a->rank == b->rank &&
	    cxsum_cmp(&a->bmin, &b->bmin) == 0 &&
	    cxsum_cmp(&a->bmax, &b->bmax) == 0 &&
	    cxsum_cmp(&a->sum, &b->sum) == 0 &&
	    cxsum_cmp(&a->sumsq, &b->sumsq) == 0;
	if (a->rank > 0)
		eq = eq && memcmp(a->dims, b->dims, a->rank * sizeof *a->dims) == 0;
	if (!eq || !a->hist != !b->hist)
		return 0;
	if (!a->hist)
		return 1;
	return hist_same(a->hist, b->hist, NULL) == 1;
}

static void
test_batch_matches_plain_loop(void)
{
	static float x[20011];
	struct tstats ts;
	struct err e;

	for (int dirty = 0; dirty <= 1; dirty++) {
		uint64_t n = 0, nan = 0, inf = 0;
		float mn = INFINITY, mx = -INFINITY;
		double s = 0, q = 0;

		fill(x, 20011, dirty);
		for (size_t i = 0; i < 20011; i++) {
			if (isnan(x[i]))
				nan++;
			else if (isinf(x[i]))
				inf++;
			else {
				n++;
				mn = x[i] < mn ? x[i] : mn;
				mx = x[i] > mx ? x[i] : mx;
				s += x[i];
				q += (double)x[i] * x[i];
			}
		}
		REQUIRE(tstats_init(&ts, 7, &e) == 0);
		REQUIRE(tstats_add_batch(&ts, x, 20011, &e) == 0);
		CHECK_EQ_INT(ts.n, n);
		CHECK_EQ_INT(ts.nan, nan);
		CHECK_EQ_INT(ts.inf, inf);
		CHECK(dirty ? nan > 0 && inf > 0 : nan == 0 && inf == 0);
		CHECK(ts.min == mn && ts.max == mx);
		CHECK_EQ_INT(ts.batches, 1);
		CHECK(cxsum_round(&ts.bmin) == mn);
		CHECK(cxsum_round(&ts.bmax) == mx);
		CHECK_NEAR(cxsum_round(&ts.sum), s, fabs(s) * 1e-12);
		CHECK_NEAR(cxsum_round(&ts.sumsq), q, q * 1e-12);
		CHECK_EQ_INT(hist_total(ts.hist), n);
		tstats_release(&ts);
	}
}

static void
test_special_batches(void)
{
	float allnan[5] = { NAN, NAN, NAN, NAN, NAN };
	float zeros[9] = { -0.0f, 0, -0.0f, 0, -0.0f, -0.0f, 0, 0, -0.0f };
	float one[1] = { 2.5f };
	struct tstats ts;
	struct err e;

	REQUIRE(tstats_init(&ts, -1, &e) == 0);
	CHECK(ts.hist == NULL);
	CHECK(isnan(tstats_mean(&ts)) && isnan(tstats_std(&ts)));
	CHECK(isnan(tstats_mavg_min(&ts)));
	REQUIRE(tstats_add_batch(&ts, allnan, 5, &e) == 0);
	/* a batch without a finite value counts no batch */
	CHECK_EQ_INT(ts.batches, 0);
	CHECK_EQ_INT(ts.nan, 5);
	CHECK(ts.min == INFINITY && ts.max == -INFINITY);
	REQUIRE(tstats_add_batch(&ts, zeros, 9, &e) == 0);
	/* -0 is kept as +0, whatever order the zeros come in */
	CHECK(ts.min == 0 && !signbit(ts.min) && !signbit(ts.max));
	REQUIRE(tstats_add_batch(&ts, one, 1, &e) == 0);
	REQUIRE(tstats_add_batch(&ts, NULL, 0, &e) == 0);
	CHECK_EQ_INT(ts.batches, 2);
	CHECK_EQ_INT(ts.n, 10);
	CHECK_NEAR(tstats_mean(&ts), 0.25, 0);
	CHECK_NEAR(tstats_std(&ts), sqrt(6.25 / 10 - 0.0625), 1e-15);
	CHECK(tstats_mavg_min(&ts) == 1.25f);
	CHECK(tstats_mavg_max(&ts) == 1.25f);
	tstats_release(&ts);
	CHECK_EQ_INT(tstats_init(&ts, HIST_MBITS_MAX + 1, &e), -1);
}

static void
test_shapes(void)
{
	int64_t a[] = { 1, 3, 8, 8 }, b[] = { 1, 3, 8, 9 }, c[] = { 3 };
	struct tstats ts, u;
	struct err e;

	tstats_init(&ts, -1, &e);
	CHECK_EQ_INT(ts.rank, TSTATS_RANK_NONE);
	tstats_add_shape(&ts, 4, a);
	tstats_add_shape(&ts, 4, b);
	CHECK(ts.rank == 4 && ts.dims[2] == 8 && ts.dims[3] == -1);
	tstats_init(&u, -1, &e);
	tstats_add_shape(&u, 1, c);
	CHECK_EQ_INT(tstats_merge(&u, &ts, &e), 0);
	CHECK_EQ_INT(u.rank, TSTATS_RANK_MIXED);
	CHECK_EQ_INT(tstats_merge(&ts, &u, &e), 0);
	CHECK_EQ_INT(ts.rank, TSTATS_RANK_MIXED);
	u.dtype = DT_FLOAT16;
	CHECK_EQ_INT(tstats_merge(&ts, &u, &e), -1);
	CHECK_EQ_STR(e.msg, "dtype float differs from float16");
}

static void
test_merge_exact(void)
{
	enum { B = 24, N = 3000, K = 5 };
	static float x[B][N];
	struct tstats whole, shard[K], m1, m2;
	struct err e;
	int64_t dims[2] = { 1, N };

	for (int b = 0; b < B; b++) {
		fill(x[b], N, b % 3 == 0);
		for (int i = 0; i < N; i++)	/* very different scales */
			x[b][i] = ldexpf(x[b][i],
			    (int)(unit_rand64() % 60) - 30);
	}
	REQUIRE(tstats_init(&whole, 7, &e) == 0);
	for (int k = 0; k < K; k++)
		REQUIRE(tstats_init(&shard[k], 7, &e) == 0);
	for (int b = 0; b < B; b++) {
		tstats_add_shape(&whole, 2, dims);
		tstats_add_shape(&shard[b % K], 2, dims);
		REQUIRE(tstats_add_batch(&whole, x[b], N, &e) == 0);
		REQUIRE(tstats_add_batch(&shard[b % K], x[b], N, &e) == 0);
	}
	tstats_init(&m1, -1, &e);
	tstats_init(&m2, -1, &e);
	for (int k = 0; k < K; k++)
		REQUIRE(tstats_merge(&m1, &shard[k], &e) == 0);
	for (int k = K - 1; k >= 0; k--)
		REQUIRE(tstats_merge(&m2, &shard[(k * 2) % K], &e) == 0);
	CHECK(same_stats(&m1, &whole));
	CHECK(same_stats(&m2, &whole));
	/* a sum in another order in double would not be exact */
	CHECK(cxsum_round(&whole.sum) != 0);
	tstats_release(&whole);
	tstats_release(&m1);
	tstats_release(&m2);
	for (int k = 0; k < K; k++)
		tstats_release(&shard[k]);
}

/* Write ts, read it back through a stream reader. */
static int
round_trip(const struct tstats *ts, const char *name, struct tstats *back,
    int *nhist, struct err *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct stream_writer *w = stream_writer_new(fp, "mem");
	struct stream_reader *r;
	int got, rc = -1;

	tstats_write(ts, name, w, 1, e);
	if (stream_write_end(w, e) < 0)
		return -1;
	stream_writer_free(w);
	fclose(fp);
	fp = fmemopen(buf, len, "r");
	if (!(r = stream_reader_new(fp, "mem", e)))
		goto out;
	tstats_init(back, -1, e);
	*nhist = 0;
	while ((got = stream_next(r, e)) == STREAM_RECORD) {
		const struct stream_rec *rec = stream_record(r);

		if (strcmp(rec->subject, name) != 0)
			break;
		if (strcmp(rec->type, "stat") == 0) {
			if (tstats_read_stat(back, rec, e) < 0)
				break;
			/* the derived keys are there, for people */
			if (!stream_rec_has(rec, "mean") ||
			    !stream_rec_has(rec, "mavg_max"))
				break;
		} else if (tstats_read_hist(back, rec, e) < 0)
			break;
		else
			++*nhist;
	}
	rc = got == STREAM_EOF ? 0 : -1;
out:
	stream_reader_free(r);
	fclose(fp);
	free(buf);
	return rc;
}

static void
test_stream_round_trip(void)
{
	static float x[50000];
	struct tstats ts, back;
	struct err e;
	int64_t dims[3] = { 2, 5, 5000 };
	int nhist;

	fill(x, 50000, 1);
	for (int i = 0; i < 50000; i++)
		x[i] = ldexpf(x[i], (int)(unit_rand64() % 200) - 100);
	x[7] = 1e-42f;	/* subnormal: the zero bin */
	REQUIRE(tstats_init(&ts, 12, &e) == 0);
	tstats_add_shape(&ts, 3, dims);
	dims[2] = 4000;
	tstats_add_shape(&ts, 3, dims);
	REQUIRE(tstats_add_batch(&ts, x, 50000, &e) == 0);
	REQUIRE(tstats_add_batch(&ts, x + 100, 20000, &e) == 0);
	REQUIRE(round_trip(&ts, "a name, with=odd chars%", &back, &nhist, &e) == 0);
	CHECK(same_stats(&ts, &back));
	/* 12 mantissa bits over 200 binades: the hist is split */
	CHECK(nhist > 3);
	tstats_release(&back);
	tstats_release(&ts);

	/* nothing finite at all */
	REQUIRE(tstats_init(&ts, 7, &e) == 0);
	x[0] = NAN;
	REQUIRE(tstats_add_batch(&ts, x, 1, &e) == 0);
	REQUIRE(round_trip(&ts, "t", &back, &nhist, &e) == 0);
	CHECK(same_stats(&ts, &back));
	CHECK_EQ_INT(nhist, 1);
	tstats_release(&back);
	tstats_release(&ts);
}

static void
test_read_errors(void)
{
	static const struct {
		const char *line;
		const char *msg;
	} cases[] = {
		{ "stat\tx\tn=1\tnan=0\tinf=0\tmin=1\tmax=1\tbatches=1\tbmin=1"
		    "\tbmax=1\tsum=1\tsumsq=1",
		    "s:2: key dtype: missing in stat record" },
		{ "stat\tx\tdtype=flot\tn=1\tnan=0\tinf=0\tmin=1\tmax=1\tbatches=1"
		    "\tbmin=1\tbmax=1\tsum=1\tsumsq=1",
		    "s:2: key dtype: unknown type 'flot'" },
		{ "stat\tx\tdtype=float\tn=1\tnan=0\tinf=0\tmin=2\tmax=1"
		    "\tbatches=1\tbmin=1\tbmax=1\tsum=1\tsumsq=1",
		    "s:2: stat x: bad range min=2 max=1" },
		{ "stat\tx\tdtype=float\tn=0\tnan=0\tinf=0\tmin=2\tmax=1"
		    "\tbatches=0\tbmin=0\tbmax=0\tsum=0\tsumsq=0",
		    "s:2: stat x: n=0 needs batches=0 min=inf max=-inf" },
		{ "stat\tx\tdtype=float\tn=3\tnan=0\tinf=0\tmin=1\tmax=1"
		    "\tbatches=4\tbmin=1\tbmax=1\tsum=1\tsumsq=1",
		    "s:2: stat x: batches=4 with n=3" },
		{ "stat\tx\tdtype=float\tn=3\tnan=0\tinf=0\tmin=1\tmax=1"
		    "\tbatches=1\tbmin=1\tbmax=1\tsum=1:\tsumsq=1",
		    "s:2: key sum: bad exact sum '1:'" },
		{ "hist\tx\tmbits=13\tzero=0\tbins=",
		    "s:2: key mbits: 13 not in 0..12" },
		{ "hist\tx\tmbits=7\tzero=0\tbins=1.01:3",
		    "s:2: key bins: element 1: histogram bin edge 1.00999999 is "
		    "not a bin edge for mbits 7" },
		{ "hist\tx\tmbits=7\tzero=0\tbins=1:3,",
		    "s:2: key bins: element 2: empty" },
		{ "hist\tx\tmbits=7\tzero=0\tbins=1:3,,2:1",
		    "s:2: key bins: element 2: '' is not EDGE:COUNT" },
		{ "hist\tx\tmbits=7\tzero=0\tbins=1:-3",
		    "s:2: key bins: element 1: bad bin '1:-3'" },
		{ "hist\tx\tmbits=7\tzero=0\tbins=1e-40:3",
		    "s:2: key bins: element 1: histogram bin edge 9.99995e-41 is "
		    "subnormal (subnormals count in zero)" },
		{ "hist\tx\tmbits=7\tzero=0", "s:2: key bins: missing in hist "
		    "record" },
	};
	struct err e;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[1024];
		FILE *fp;
		struct stream_reader *r;
		struct tstats ts;

		snprintf(buf, sizeof buf, "#onnxq\t1.0\n%s\nend\t1\n",
		    cases[i].line);
		fp = fmemopen(buf, strlen(buf), "r");
		REQUIRE((r = stream_reader_new(fp, "s", &e)) != NULL);
		REQUIRE(stream_next(r, &e) == STREAM_RECORD);
		tstats_init(&ts, -1, &e);
		e.msg[0] = '\0';
		if (cases[i].line[0] == 's')
			CHECK_EQ_INT(tstats_read_stat(&ts, stream_record(r), &e),
			    -1);
		else
			CHECK_EQ_INT(tstats_read_hist(&ts, stream_record(r), &e),
			    -1);
		CHECK_EQ_STR(e.msg, cases[i].msg);
		tstats_release(&ts);
		stream_reader_free(r);
		fclose(fp);
	}
}

UNIT_MAIN(test_batch_matches_plain_loop, test_special_batches, test_shapes,
    test_merge_exact, test_stream_round_trip, test_read_errors)
