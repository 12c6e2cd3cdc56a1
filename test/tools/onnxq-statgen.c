/*
 * onnxq-statgen: write stat/hist streams of made-up activations, for the
 * tests of exact merging (test/calib.bats, test/stream.bats). Not
 * installed.
 *
 *	onnxq-statgen [-s SEED] [-t TENSORS] [-b BATCHES] [-n VALUES]
 *	    [-k SHARDS] [-m MBITS] [-a] PREFIX
 *
 * Runs lib/stats.c over deterministic pseudo-random float batches (with
 * zeros, subnormals, NaNs, infinities, a tensor that is all NaN, dynamic
 * dims, values over a wide range) and writes PREFIX.whole, the stream of
 * all batches, and PREFIX.0 .. PREFIX.(K-1), the streams of the batches
 * b with b % K == shard. Every stream also has the same node and weight
 * records and an unknown record type, which a merge must keep once.
 * -a writes the derived keys. Exit 0, 1 on error, 2 on usage.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "stats.h"
#include "stream.h"

static const char usage[] =
    "usage: onnxq-statgen [-s SEED] [-t TENSORS] [-b BATCHES] [-n VALUES]\n"
    "           [-k SHARDS] [-m MBITS] [-a] PREFIX\n";

static uint64_t
mix(uint64_t x)
{
	/* splitmix64 */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Batch b of tensor t: its shape (1 x C x H x W, W varying) and values. */
static size_t
batch(uint64_t seed, int t, int b, size_t nbase, float *x, int64_t *dims)
{
	uint64_t s = mix(seed ^ mix((uint64_t)t << 32 | (uint64_t)b));
	size_t n;
	double scale = ldexp(1, (int)(mix(seed + t) % 40) - 20);

	dims[0] = 1;
	dims[1] = 4;
	dims[2] = 2;
	dims[3] = (int64_t)(nbase / 8 + (size_t)(b % 3));
	n = (size_t)(dims[1] * dims[2] * dims[3]);
	for (size_t i = 0; i < n; i++) {
		uint64_t r = s = mix(s);
		double u = (double)(r >> 11) / 9007199254740992.0;
		uint32_t bits = (uint32_t)(r >> 7);

		if (t == 3) {	/* a tensor that is all NaN */
			x[i] = NAN;
			continue;
		}
		switch (r % 64) {
		case 0:
			x[i] = 0.0f;
			break;
		case 1:
			x[i] = -0.0f;
			break;
		case 2:	/* subnormal */
			bits = (bits & 0x807fffff) | 1;
			memcpy(&x[i], &bits, sizeof bits);
			break;
		case 3:
			x[i] = t == 1 ? NAN : (float)(u * scale);
			break;
		case 4:
			x[i] = t == 2 ? -INFINITY : (float)(u * scale);
			break;
		case 5:	/* far outliers */
			x[i] = (float)((u - 0.5) * scale * 1e6);
			break;
		default:
			x[i] = (float)(tan((u - 0.5) * 3.1) * scale);
		}
	}
	return n;
}

static int
put_common(struct stream_writer *w, int argc, char **argv)
{
	static const char *in[] = { "x", "w" };
	static const char *out[] = { "t0" };
	float cmin[] = { -1, -2 }, cmax[] = { 1, 2 };
	int64_t dims[] = { 2, 3 };

	stream_put_prog(w, "onnxq-statgen", "test", argc, argv);
	stream_put_header(w, "# made-up activations");
	stream_rec_start(w, "node", "n0");
	stream_put_raw(w, "op", "MatMul");
	stream_put_names(w, "in", in, 2);
	stream_put_names(w, "out", out, 1);
	stream_rec_done(w);
	stream_rec_start(w, "weight", "w");
	stream_put_raw(w, "node", "n0");
	stream_put_raw(w, "op", "MatMul");
	stream_put_raw(w, "dtype", "float");
	stream_put_shape(w, "shape", 2, dims);
	stream_put_float(w, "min", -2);
	stream_put_float(w, "max", 2);
	stream_put_int(w, "axis", 0);
	stream_put_floats(w, "cmin", cmin, 2);
	stream_put_floats(w, "cmax", cmax, 2);
	stream_rec_done(w);
	stream_rec_start(w, "futurerecord", "z");
	stream_put_raw(w, "k", "1");
	stream_rec_done(w);
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t seed = 1;
	int ntensors = 6, nbatches = 12, nshards = 3, mbits = HIST_MBITS_DEFAULT;
	int annotate = 0, c, rc = 1;
	size_t nvalues = 4000;
	struct tstats *shard = NULL;
	float *x = NULL;
	struct err e;
	const char *prefix;

	while ((c = getopt(argc, argv, "s:t:b:n:k:m:a")) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 't': ntensors = atoi(optarg); break;
		case 'b': nbatches = atoi(optarg); break;
		case 'n': nvalues = strtoul(optarg, NULL, 10); break;
		case 'k': nshards = atoi(optarg); break;
		case 'm': mbits = atoi(optarg); break;
		case 'a': annotate = 1; break;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind + 1 != argc || ntensors < 4 || nbatches < 1 ||
	    nshards < 1 || nvalues < 8) {
		fputs(usage, stderr);
		return 2;
	}
	prefix = argv[optind];
	shard = calloc(ntensors, sizeof *shard);
	x = malloc((nvalues + 16) * sizeof *x);
	if (!shard || !x)
		goto nomem;
	for (int k = -1; k < nshards; k++) {
		char path[4096], name[64];
		struct outfile *of;
		struct stream_writer *w;

		if (k < 0)
			snprintf(path, sizeof path, "%s.whole", prefix);
		else
			snprintf(path, sizeof path, "%s.%d", prefix, k);
		for (int t = 0; t < ntensors; t++)
			if (tstats_init(&shard[t], mbits, &e) < 0)
				goto fail;
		for (int b = 0; b < nbatches; b++) {
			if (k >= 0 && b % nshards != k)
				continue;
			for (int t = 0; t < ntensors; t++) {
				int64_t dims[4];
				size_t n = batch(seed, t, b, nvalues, x, dims);

				tstats_add_shape(&shard[t], 4, dims);
				if (tstats_add_batch(&shard[t], x, n, &e) < 0)
					goto fail;
			}
		}
		if (!(of = outfile_open(path, &e)))
			goto fail;
		w = stream_writer_new(outfile_fp(of), path);
		put_common(w, argc, argv);
		for (int t = 0; t < ntensors; t++) {
			/* names that need escaping */
			snprintf(name, sizeof name, "layer %d/out,=%%", t);
			stream_rec_start(w, "stat", name);
			tstats_put_stat(&shard[t], w, annotate);
			stream_rec_done(w);
			if (tstats_put_hist(&shard[t], name, w, NULL, 0, &e) < 0)
				goto fail;
		}
		if (stream_write_end(w, &e) < 0 || outfile_commit(of, &e) < 0) {
			stream_writer_free(w);
			goto fail;
		}
		stream_writer_free(w);
		for (int t = 0; t < ntensors; t++)
			tstats_release(&shard[t]);
	}
	rc = 0;
	goto out;
nomem:
	err_nomem(&e);
fail:
	fprintf(stderr, "onnxq-statgen: %s\n", e.msg);
out:
	free(shard);
	free(x);
	return rc;
}
