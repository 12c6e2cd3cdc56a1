/*
 * fuzz_stream: the onnxq text stream as the filters read it.
 *
 * Pass 1 walks the stream with stream_next() and, for every record, calls
 * every typed getter on every key, copies the record, writes it back and
 * passes its unknown keys through; header lines are split into fields.
 * stat and hist records go through what onnx-calib --merge and
 * onnx-qparams do with them: tstats_read_stat / tstats_read_hist, merged
 * into one running total (tstats_merge), whose range is then selected by
 * every rangesel method and whose records are written out again.
 * Pass 2 reads the same bytes as onnx-qdq-insert does (qdq_plan_read).
 *
 * Inputs whose length is a multiple of 4 are read with a line bound of
 * 80 bytes (stream_reader_set_max_line), so the "line too long" paths
 * are reached with small inputs.
 */
#include "fuzz.h"

#include <math.h>

#include "engine.h"
#include "hist.h"
#include "qdq.h"
#include "rangesel.h"
#include "stats.h"
#include "stream.h"

static FILE *
open_mem(const uint8_t *data, size_t size)
{
	FILE *fp;

	/* fmemopen refuses an empty buffer */
	fp = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	if (!fp)
		abort();
	return fp;
}

static void
getters(const struct stream_rec *rec)
{
	struct err e;
	float f, *fv;
	double d;
	int64_t i, *iv, dims[TENSOR_MAX_RANK];
	uint64_t u;
	char *s, **sv;
	size_t n;
	int rank;
	struct xsum x;

	for (size_t k = 0; k < rec->nkv; k++) {
		const char *key = rec->kv[k].key;

		if (!stream_rec_has(rec, key) || !stream_rec_get(rec, key))
			abort();
		stream_rec_float(rec, key, &f, &e);
		stream_rec_double(rec, key, &d, &e);
		stream_rec_int(rec, key, &i, &e);
		stream_rec_uint(rec, key, &u, &e);
		if (stream_rec_name(rec, key, &s, &e) == 0)
			free(s);
		else
			fuzz_check_err(&e);
		if (stream_rec_floats(rec, key, &fv, &n, &e) == 0)
			free(fv);
		if (stream_rec_ints(rec, key, &iv, &n, &e) == 0)
			free(iv);
		if (stream_rec_names(rec, key, &sv, &n, &e) == 0)
			free(sv);
		else
			fuzz_check_err(&e);
		e.msg[0] = '\0';
		if (stream_rec_shape(rec, key, &rank, dims, &e) < 0)
			fuzz_check_err(&e);
		stream_rec_xsum(rec, key, &x, &e);
	}
	/* a missing key is an error with a message */
	e.msg[0] = '\0';
	if (stream_rec_float(rec, "no such key", &f, &e) == 0)
		abort();
	fuzz_check_err(&e);
}

/* Every range selection method on ts. */
static void
select_ranges(const struct tstats *ts)
{
	struct rangesel_opts ro;
	struct rangesel_stats st;
	struct err e;
	float lo, hi;

	if (engine_range_stats(ts, &st, &e) < 0)
		return;
	for (int m = RANGESEL_MINMAX; m <= RANGESEL_MSE; m++) {
		rangesel_opts_init(&ro);
		ro.method = m;
		ro.entropy_bins = 128;	/* the default 2048 is slow, not different */
		if (m != RANGESEL_MINMAX && m != RANGESEL_DISTRIBUTION &&
		    ts->n > 0 && !st.bins)
			continue;
		e.msg[0] = '\0';
		if (rangesel_select(&st, &ro, &lo, &hi, &e) < 0)
			fuzz_check_err(&e);
	}
	free((void *)st.bins);
}

static void
pass1(const uint8_t *data, size_t size, size_t max_line)
{
	static const char *const known[] = { "dtype", "n", "min", NULL };
	struct stream_reader *r;
	struct stream_writer *w;
	struct tstats total, ts;
	struct stream_rec *dup;
	struct err e = { "" };
	FILE *fp = open_mem(data, size);
	int item, have_total = 0;

	if (!(r = stream_reader_new(fp, "fuzz.stream", &e))) {
		fuzz_check_err(&e);
		fclose(fp);
		return;
	}
	stream_reader_set_max_line(r, max_line);
	if (!(w = stream_writer_new(fuzz_devnull(), "null")))
		abort();
	if (tstats_init(&total, -1, &e) < 0)
		abort();
	while ((item = stream_next(r, &e)) > 0) {
		if (item == STREAM_HEADER) {
			for (size_t i = 0; stream_header_field(r, i); i++)
				;
			stream_put_header(w, stream_header(r));
			continue;
		}
		const struct stream_rec *rec = stream_record(r);

		getters(rec);
		if (!(dup = stream_rec_dup(rec, &e)))
			abort();
		stream_put_rec(w, dup);
		stream_rec_start(w, dup->type, dup->subject);
		stream_put_unknown(w, dup, known);
		stream_rec_done(w);
		stream_rec_free(dup);
		e.msg[0] = '\0';
		if (strcmp(rec->type, "stat") == 0) {
			if (tstats_init(&ts, -1, &e) < 0)
				abort();
			if (tstats_read_stat(&ts, rec, &e) < 0)
				fuzz_check_err(&e);
			else if (!have_total) {
				tstats_release(&total);
				total = ts;
				have_total = 1;
				continue;
			} else if (tstats_merge(&total, &ts, &e) < 0)
				fuzz_check_err(&e);
			tstats_release(&ts);
		} else if (strcmp(rec->type, "hist") == 0) {
			if (tstats_read_hist(&total, rec, &e) < 0)
				fuzz_check_err(&e);
		}
		e.msg[0] = '\0';
	}
	if (item < 0)
		fuzz_check_err(&e);
	select_ranges(&total);
	tstats_write(&total, "total", w, 1, &e);
	stream_write_end(w, &e);
	tstats_release(&total);
	stream_writer_free(w);
	stream_reader_free(r);
	fclose(fp);
}

static void
pass2(const uint8_t *data, size_t size)
{
	struct stream_reader *r;
	struct qdq_plan *p;
	struct err e = { "" };
	FILE *fp = open_mem(data, size);

	if (!(r = stream_reader_new(fp, "fuzz.stream", &e))) {
		fuzz_check_err(&e);
		fclose(fp);
		return;
	}
	if (!(p = qdq_plan_new()))
		abort();
	if (qdq_plan_read(p, r, &e) < 0)
		fuzz_check_err(&e);
	else {
		qdq_plan_model_sha256(p);
		qdq_plan_size(p);
	}
	qdq_plan_free(p);
	stream_reader_free(r);
	fclose(fp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pass1(data, size, size % 4 == 0 ? 80 : 0);
	pass2(data, size);
	return 0;
}
