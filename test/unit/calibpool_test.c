/*
 * calibpool_test: workers over batches give the statistics of one engine
 * running the batches in order, byte for byte as written; the error of a
 * run is its first failing batch's; the memory limit leaves one worker.
 * Runs the chains fixture on its samples (make check generates both).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibpool.h"
#include "fixture.h"
#include "prep.h"
#include "unit.h"

/* The samples of the fixture, and how many. */
#define NSAMPLES 4

static struct model *
chains(void)
{
	struct model *m = fixture_generated("statderive/chains.onnx");
	struct err e;

	if (m && prep_model(m, NULL, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		model_free(m);
		return NULL;
	}
	return m;
}

static struct calib_data *
samples(void)
{
	const char *dir = getenv("ONNXQ_FIXTURES");
	char path[4096];
	const char *dirs[1] = { path };
	struct calib_data *d;
	struct err e;

	snprintf(path, sizeof path, "%s/statderive/in", dir ? dir : ".");
	if (!(d = calib_data_open(dirs, 1, &e)))
		fprintf(stderr, "%s\n", e.msg);
	return d;
}

/* The stat and hist records of p's engine; malloc'd. */
static char *
stream_of(struct calibpool *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	struct stream_writer *w = fp ? stream_writer_new(fp, "mem") : NULL;
	struct err e;

	if (w) {
		calib_write(calibpool_engine(p), w, 1, &e);
		stream_writer_free(w);
	}
	if (fp)
		fclose(fp);
	return text;
}

/*
 * Run b[0..nb-1] on threads workers (serial: one); the stream, or the
 * error message when the run failed (*failed set).
 */
static char *
run(struct model *m, struct calib_data *d, const struct calibpool_batch *b,
    int nb, int threads, int serial, int *workers, int *failed)
{
	struct calibpool_opts o;
	struct calibpool *p;
	struct err e;
	char *text;

	calibpool_opts_init(&o);
	o.threads = threads;
	o.serial = serial;
	*failed = 0;
	if (!(p = calibpool_new(m, &o, &e)))
		return strdup(e.msg);
	if (calibpool_run(p, d, b, nb, &e) < 0) {
		*failed = 1;
		text = strdup(e.msg);
	} else
		text = stream_of(p);
	*workers = calibpool_workers(p);
	calibpool_free(p);
	return text;
}

static void
test_same_as_serial(void)
{
	struct model *m = chains();
	struct calib_data *d = samples();
	struct calibpool_batch one[NSAMPLES], two[2] = { { 0, 2 }, { 2, 2 } };
	int w, f;
	char *want, *got;

	REQUIRE(m && d);
	for (int i = 0; i < NSAMPLES; i++)
		one[i].first = i, one[i].n = 1;
	want = run(m, d, one, NSAMPLES, 2, 1, &w, &f);
	REQUIRE(want && !f);
	CHECK_EQ_INT(w, 1);
	CHECK(strstr(want, "stat") != NULL);
	for (int t = 1; t <= 5; t++) {
		got = run(m, d, one, NSAMPLES, t, 0, &w, &f);
		REQUIRE(got);
		CHECK(!f);
		CHECK_EQ_INT(w, t < NSAMPLES ? t : NSAMPLES);
		CHECK(strcmp(got, want) == 0);
		free(got);
	}
	free(want);
	/* batches of two samples */
	want = run(m, d, two, 2, 1, 0, &w, &f);
	REQUIRE(want && !f);
	got = run(m, d, two, 2, 3, 0, &w, &f);
	REQUIRE(got && !f);
	CHECK_EQ_INT(w, 2);
	CHECK(strcmp(got, want) == 0);
	free(got);
	free(want);
	calib_data_free(d);
	model_free(m);
}

static void
test_first_error(void)
{
	struct model *m = chains();
	struct calib_data *d = samples();
	/* batches 2 and 4 cannot load: the error is batch 2's */
	struct calibpool_batch b[6] = {
		{ 0, 1 }, { 1, 1 }, { 7, 1 }, { 2, 1 }, { 9, 1 }, { 3, 1 }
	};
	int w, f;
	char *want, *got;

	REQUIRE(m && d);
	want = run(m, d, b, 6, 1, 1, &w, &f);
	REQUIRE(want);
	CHECK(f);
	CHECK_EQ_STR(want, "no samples 7 to 7");
	for (int t = 2; t <= 4; t++) {
		got = run(m, d, b, 6, t, 0, &w, &f);
		REQUIRE(got);
		CHECK(f);
		CHECK_EQ_STR(got, want);
		free(got);
	}
	free(want);
	calib_data_free(d);
	model_free(m);
}

static void
test_memory_limit(void)
{
	struct model *m = chains();
	struct calib_data *d = samples();
	struct calibpool_batch one[NSAMPLES];
	int w, f;
	char *want, *got;
	struct err e;
	uint64_t base, peak;
	char limit[32];

	REQUIRE(m && d);
	for (int i = 0; i < NSAMPLES; i++)
		one[i].first = i, one[i].n = 1;
	/* the most an engine and a batch take: made and run here */
	base = tensor_mem_live();
	tensor_mem_thread_mark();
	want = run(m, d, one, NSAMPLES, 1, 0, &w, &f);
	peak = tensor_mem_thread_peak();
	REQUIRE(want && !f);
	REQUIRE(peak > 0);
	/* room for one engine and batch, not for twice the batch */
	snprintf(limit, sizeof limit, "%llu",
	    (unsigned long long)(base + peak + peak / 2));
	setenv(TENSOR_MEM_ENV, limit, 1);
	got = run(m, d, one, NSAMPLES, 3, 0, &w, &f);
	REQUIRE(got);
	CHECK(!f);
	CHECK_EQ_INT(w, 1);
	CHECK(strcmp(got, want) == 0);
	free(got);
	free(want);
	unsetenv(TENSOR_MEM_ENV);
	REQUIRE(tensor_mem_limit_init(0, &e) == 0);
	calib_data_free(d);
	model_free(m);
}

UNIT_MAIN(test_same_as_serial, test_first_error, test_memory_limit)
