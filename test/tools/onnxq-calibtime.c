/*
 * onnxq-calibtime: the cost of calibration statistics over plain
 * inference, for scripts/bench-calib. Not installed.
 *
 *	onnxq-calibtime [-n RUNS] [-t THREADS] [-b MBITS] MODEL DIR
 *
 * Loads and prepares MODEL as onnx-calib does, loads the first sample of
 * the data directory DIR (any layout of onnx-verify(1)), warms up, then
 * RUNS times (default 5) runs the sample once through the plain
 * interpreter and once through the calibration engine (histograms of
 * MBITS mantissa bits, default that of onnx-calib; -1: none),
 * interleaved so that both see the same load on a shared machine.
 * Prints the medians of wall and process CPU time, in milliseconds:
 *
 *	infer WALL_MS CPU_MS
 *	calib WALL_MS CPU_MS
 *	overhead WALL_PCT CPU_PCT
 *	values N per run
 *
 *	floor WALL_MS CPU_MS
 *	floor-overhead WALL_PCT CPU_PCT
 *	counted M per run
 *
 * where the overhead is the median of the per-round ratios calib/infer
 * minus one, and N the number of values the statistics take in per run.
 * "floor" is a third run, inference with the least any exact histogram
 * must do: one counter increment per float value whose histogram the
 * calibration counts (M of them: not those of the tensors whose
 * histogram it derives from others', calib.h), as each tensor is made
 * (no range, no moments, no merge): what statistics cost can never go
 * below. It runs as fast as the calibration's inference can: fused
 * chains of elementwise nodes stay fused, their links counted block by
 * block in cache on the chain's threads (interp_chain_observer, as
 * calib.c does); the other tensors whole, on one thread.
 * Exit 0 on success, 1 on error, 2 on usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "calib.h"
#include "common.h"
#include "model.h"
#include "prep.h"
#include "statkern.h"

/*
 * The floor: each float tensor's values counted by their top 16 bits
 * (sign, exponent, 7 mantissa bits: onnx-calib's bins) in four sets of
 * counters, so that equal neighbours do not wait on one counter; one
 * such array per thread a chain is seen on.
 */
#define FLOOR_THREADS_MAX 64
typedef uint32_t floor_counts_t[4][1 << 16];
static floor_counts_t *floor_counts;	/* [threads] */
static double floor_values[FLOOR_THREADS_MAX];	/* counted by each thread */

static void
floor_count(int t, const uint32_t *u, size_t n)
{
	uint32_t (*k)[1 << 16] = floor_counts[t];
	size_t i = 0;

	floor_values[t] += (double)n;
	for (; i + 4 <= n; i += 4) {
		k[0][u[i] >> 16]++;
		k[1][u[i + 1] >> 16]++;
		k[2][u[i + 2] >> 16]++;
		k[3][u[i + 3] >> 16]++;
	}
	for (; i < n; i++)
		k[0][u[i] >> 16]++;
}

/* ctx: the calibration engine, whose last run says which to skip. */
static int
floor_observe(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	(void)e;
	if (t->dtype == DT_FLOAT && !calib_tensor_derived(ctx, name))
		floor_count(0, t->data, (size_t)t->nelem);
	return 0;
}

/* The chain being seen: its links counted as calib counts them. */
static unsigned char floor_link_counted[FUSE_MAX];

static int
floor_chain_begin(void *ctx, const char *const *names, int n,
    const struct tensor *x, struct err *e)
{
	(void)x;
	(void)e;
	for (int i = 0; i < n; i++)
		floor_link_counted[i] = !calib_tensor_derived(ctx, names[i]);
	return 1;
}

static void
floor_chain_see(void *ctx, int link, const float *v, int64_t at,
    int64_t len, int t)
{
	(void)ctx;
	(void)at;
	if (floor_link_counted[link])
		floor_count(t, (const uint32_t *)v, (size_t)len);
}

static int
floor_chain_done(void *ctx, struct err *e)
{
	(void)ctx;
	(void)e;
	return 0;
}

/* Wall and process CPU time now, in milliseconds. */
static void
stamp(double *wall, double *cpu)
{
	*wall = clock_ms(CLOCK_MONOTONIC);
	*cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}

int
main(int argc, char **argv)
{
	struct interp_opts io = { .threads = 2 }, fo;
	struct interp_chain_observer fcobs = {
		floor_chain_begin, floor_chain_see, floor_chain_done,
		STATKERN_CHUNK, 2
	};
	struct calib_opts co;
	struct err e;
	struct model *m;
	struct interp *ip, *fip;
	struct calib *cal;
	struct dataset *ds;
	struct sample smp;
	double *iw, *ic, *cw, *cc, *rw, *rc, *fw, *fc, *gw, *gc;
	double nelem = 0, counted = 0;
	int runs = 5, arg;

	calib_opts_init(&co);
	if ((arg = tool_args(argc, argv, &runs, &io.threads, &co.mbits)) < 0)
		goto usage;
	co.threads = io.threads;
	fcobs.max_threads = io.threads > 0 ? io.threads : 2;
	if (fcobs.max_threads > FLOOR_THREADS_MAX ||
	    !(floor_counts = calloc((size_t)fcobs.max_threads,
	    sizeof *floor_counts))) {
		fputs("onnxq-calibtime: too many threads\n", stderr);
		return 1;
	}
	fo = io;
	fo.observe = floor_observe;
	fo.chain_observer = &fcobs;
	if (!(m = model_load(argv[arg], &e)) ||
	    prep_model(m, NULL, &e) < 0 ||
	    !(ip = interp_new(m, &io, &e)) ||
	    !(cal = calib_new(m, &co, &e)) ||
	    !(fo.observe_ctx = cal) ||
	    !(fip = interp_new(m, &fo, &e)) ||
	    !(ds = dataset_open((const char **)&argv[arg + 1], 1, &e)) ||
	    sample_load(&smp, ip, ds, &e) < 0) {
		fprintf(stderr, "onnxq-calibtime: %s\n", e.msg);
		return 1;
	}
	iw = calloc(runs, sizeof *iw);
	ic = calloc(runs, sizeof *ic);
	cw = calloc(runs, sizeof *cw);
	cc = calloc(runs, sizeof *cc);
	rw = calloc(runs, sizeof *rw);
	rc = calloc(runs, sizeof *rc);
	fw = calloc(runs, sizeof *fw);
	fc = calloc(runs, sizeof *fc);
	gw = calloc(runs, sizeof *gw);
	gc = calloc(runs, sizeof *gc);
	if (!iw || !ic || !cw || !cc || !rw || !rc || !fw || !fc || !gw ||
	    !gc) {
		fputs("onnxq-calibtime: out of memory\n", stderr);
		return 1;
	}
	for (int r = -1; r < runs; r++) {
		double w0, c0, w1, c1, w2, c2, w3, c3;

		stamp(&w0, &c0);
		if (sample_run(&smp, ip, &e) < 0)
			goto fail;
		stamp(&w1, &c1);
		if (calib_run(cal, smp.in, &e) < 0)
			goto fail;
		stamp(&w2, &c2);
		if (sample_run(&smp, fip, &e) < 0)
			goto fail;
		stamp(&w3, &c3);
		if (r < 0)
			continue;
		iw[r] = w1 - w0;
		fw[r] = w3 - w2;
		fc[r] = c3 - c2;
		ic[r] = c1 - c0;
		cw[r] = w2 - w1;
		cc[r] = c2 - c1;
		rw[r] = cw[r] / iw[r];
		rc[r] = ic[r] > 0 ? cc[r] / ic[r] : 0;
		gw[r] = fw[r] / iw[r];
		gc[r] = ic[r] > 0 ? fc[r] / ic[r] : 0;
	}
	printf("infer %.1f %.1f\n", median(iw, runs), median(ic, runs));
	printf("calib %.1f %.1f\n", median(cw, runs), median(cc, runs));
	printf("overhead %.0f %.0f\n", 100 * (median(rw, runs) - 1),
	    100 * (median(rc, runs) - 1));
	printf("floor %.1f %.1f\n", median(fw, runs), median(fc, runs));
	printf("floor-overhead %.0f %.0f\n", 100 * (median(gw, runs) - 1),
	    100 * (median(gc, runs) - 1));
	for (int i = 0; i < calib_ntensors(cal); i++) {
		const struct tstats *ts = calib_tensor_stats(cal, i);

		nelem += (double)(ts->n + ts->nan + ts->inf);
	}
	printf("values %.0f per run\n", nelem / (runs + 1));
	for (int t = 0; t < FLOOR_THREADS_MAX; t++)
		counted += floor_values[t];
	printf("counted %.0f per run\n", counted / (runs + 1));
	sample_free(&smp);
	free(iw);
	free(ic);
	free(cw);
	free(cc);
	free(rw);
	free(rc);
	free(fw);
	free(fc);
	free(gw);
	free(gc);
	free(floor_counts);
	dataset_free(ds);
	calib_free(cal);
	interp_free(fip);
	interp_free(ip);
	model_free(m);
	return 0;
fail:
	fprintf(stderr, "onnxq-calibtime: %s\n", e.msg);
	return 1;
usage:
	fputs("usage: onnxq-calibtime [-n RUNS] [-t THREADS] [-b MBITS] "
	    "MODEL DIR\n", stderr);
	return 2;
}
