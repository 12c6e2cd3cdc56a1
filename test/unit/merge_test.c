/*
 * merge_test: the exact merge of onnxq streams (lib/merge.c). Streams of
 * shards (each over some of the batches) merge, in every order, into
 * exactly the stream of the whole run; records that differ, streams of
 * another model and hist records without a stat record are refused with
 * the file and line. Needs nothing but libonnxq.
 */
#include <stdint.h>

#include "merge.h"
#include "stats.h"
#include "stream.h"
#include "unit.h"

#define NBATCH 6
#define BATCH 300

/* Batch b of tensor t: the same values every time it is asked for. */
static void
batch_values(int t, int b, float *x)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(t * NBATCH + b + 1);

	for (int i = 0; i < BATCH; i++)
		x[i] = (float)((int64_t)(unit_rand64_r(&s) >> 40) - (1 << 23)) /
		    (float)(1 << (t ? 20 : 12));
}

/*
 * The stream of a run over the batches b with mask & 1 << b: a #model
 * line of sha, a weight record (value w), and the statistics of tensors
 * "a" and "b". A malloc'd text.
 */
static char *
run_stream(unsigned mask, const char *sha, const char *w, size_t *len)
{
	char *text = NULL;
	FILE *fp = open_memstream(&text, len);
	struct stream_writer *sw = stream_writer_new(fp, "mem");
	struct err e;
	float x[BATCH];

	stream_put_model(sw, "m.onnx", sha, 13);
	stream_rec_start(sw, "weight", "w");
	stream_put_raw(sw, "v", w);
	stream_rec_done(sw);
	for (int t = 0; t < 2; t++) {
		struct tstats ts;

		if (tstats_init(&ts, 3, &e) < 0)
			abort();
		for (int b = 0; b < NBATCH; b++) {
			if (!(mask & 1u << b))
				continue;
			batch_values(t, b, x);
			tstats_add_batch(&ts, x, BATCH, &e);
		}
		tstats_write(&ts, t ? "b" : "a", sw, 0, &e);
		tstats_release(&ts);
	}
	if (stream_write_end(sw, &e) < 0)
		abort();
	stream_writer_free(sw);
	fclose(fp);
	return text;
}

/* Add the stream text to mg, read under name. */
static int
add_text(struct stream_merge *mg, const char *text, size_t len,
    const char *name, struct err *e)
{
	FILE *fp = fmemopen((void *)text, len, "r");
	struct stream_reader *r;
	int rc;

	if (!fp)
		return err_set(e, "fmemopen failed");
	if (!(r = stream_reader_new(fp, name, e))) {
		fclose(fp);
		return -1;
	}
	rc = stream_merge_add(mg, r, e);
	stream_reader_free(r);
	fclose(fp);
	return rc;
}

/* Merge n streams, in that order, into a malloc'd text; NULL with e. */
static char *
merge_texts(char *const *texts, const size_t *lens, const int *order,
    int n, struct err *e)
{
	struct stream_merge *mg = stream_merge_new();
	struct stream_writer *sw;
	char *out = NULL, name[16];
	size_t outlen;
	FILE *fp;
	int rc = -1;

	if (!mg)
		return NULL;
	for (int i = 0; i < n; i++) {
		int k = order[i];

		snprintf(name, sizeof name, "s%d", k);
		if (add_text(mg, texts[k], lens[k], name, e) < 0) {
			stream_merge_free(mg);
			return NULL;
		}
	}
	if (stream_merge_check(mg, e) < 0) {
		stream_merge_free(mg);
		return NULL;
	}
	fp = open_memstream(&out, &outlen);
	sw = stream_writer_new(fp, "out");
	if (stream_merge_write_headers(mg, sw, e) == 0 &&
	    stream_merge_write_records(mg, sw, 0, e) == 0)
		rc = stream_write_end(sw, e);
	stream_writer_free(sw);
	fclose(fp);
	stream_merge_free(mg);
	if (rc < 0) {
		free(out);
		return NULL;
	}
	return out;
}

static void
test_shards_make_the_whole(void)
{
	static const unsigned masks[] = { 1 | 8, 2 | 16, 4 | 32 };
	static const int orders[][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
		{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	char *whole, *shard[3], *m;
	size_t wlen, len[3];
	struct err e;
	int one = 0;

	whole = run_stream((1u << NBATCH) - 1, "ab12", "1", &wlen);
	for (int i = 0; i < 3; i++)
		shard[i] = run_stream(masks[i], "ab12", "1", &len[i]);
	/* a whole stream merged alone is itself */
	m = merge_texts(&whole, &wlen, &one, 1, &e);
	REQUIRE(m != NULL);
	CHECK_EQ_STR(m, whole);
	free(m);
	for (size_t k = 0; k < sizeof orders / sizeof orders[0]; k++) {
		m = merge_texts(shard, len, orders[k], 3, &e);
		REQUIRE(m != NULL);
		CHECK_EQ_STR(m, whole);
		free(m);
	}
	/* a merge of merges, and a shard given twice counts twice */
	{
		int o01[] = { 0, 1 }, o2[] = { 2 };
		char *ab[2];
		size_t ablen[2];

		ab[0] = merge_texts(shard, len, o01, 2, &e);
		ab[1] = merge_texts(shard, len, o2, 1, &e);
		REQUIRE(ab[0] != NULL && ab[1] != NULL);
		ablen[0] = strlen(ab[0]);
		ablen[1] = strlen(ab[1]);
		m = merge_texts(ab, ablen, (int[]){ 1, 0 }, 2, &e);
		REQUIRE(m != NULL);
		CHECK_EQ_STR(m, whole);
		free(m);
		free(ab[0]);
		free(ab[1]);
	}
	free(whole);
	for (int i = 0; i < 3; i++)
		free(shard[i]);
}

static void
test_mismatches_refused(void)
{
	char *t[2];
	size_t len[2];
	struct err e;
	int order[] = { 0, 1 };

	/* a weight that differs: where, and where its first copy was */
	t[0] = run_stream(1, "ab12", "1", &len[0]);
	t[1] = run_stream(2, "ab12", "2", &len[1]);
	CHECK(merge_texts(t, len, order, 2, &e) == NULL);
	CHECK_EQ_STR(e.msg, "s1:3: weight w differs from s0:3");
	free(t[1]);
	/* another model */
	t[1] = run_stream(2, "cd34", "1", &len[1]);
	CHECK(merge_texts(t, len, order, 2, &e) == NULL);
	CHECK_EQ_STR(e.msg, "s1:2: stream of another model (sha256 cd34..., "
	    "s0:2 has ab12...)");
	free(t[1]);
	free(t[0]);
}

static void
test_hist_without_stat(void)
{
	static const char text[] = "#onnxq\t1.0\n"
	    "hist\tx\tmbits=3\tzero=0\tbins=1:2\n"
	    "end\t1\n";
	struct stream_merge *mg = stream_merge_new();
	struct err e;

	REQUIRE(mg != NULL);
	if (add_text(mg, text, sizeof text - 1, "h", &e) < 0)
		CHECK_EQ_STR(e.msg, "");
	CHECK(stream_merge_check(mg, &e) < 0);
	CHECK_EQ_STR(e.msg, "h:2: hist x without a stat record");
	stream_merge_free(mg);
}

UNIT_MAIN(test_shards_make_the_whole, test_mismatches_refused,
    test_hist_without_stat)
