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
 * histogram it derives from others', calib.h), on one thread, as each
 * tensor is made (no range, no moments, no merge): what statistics
 * cost can never go below.
 * Exit 0 on success, 1 on error, 2 on usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "calib.h"
#include "common.h"
#include "model.h"
#include "prep.h"

/*
 * The floor: each float tensor's values counted by their top 16 bits
 * (sign, exponent, 7 mantissa bits: onnx-calib's bins) in four sets of
 * counters, so that equal neighbours do not wait on one counter.
 */
static uint32_t floor_counts[4][1 << 16];
static double floor_values;	/* counted in all runs */

/* ctx: the calibration engine, whose last run says which to skip. */
static int
floor_observe(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	const uint32_t *u = t->data;
	size_t n = (size_t)t->nelem, i = 0;

	(void)e;
	if (t->dtype != DT_FLOAT || calib_tensor_derived(ctx, name))
		return 0;
	floor_values += (double)n;
	for (; i + 4 <= n; i += 4) {
		floor_counts[0][u[i] >> 16]++;
		floor_counts[1][u[i + 1] >> 16]++;
		floor_counts[2][u[i + 2] >> 16]++;
		floor_counts[3][u[i + 3] >> 16]++;
	}
	for (; i < n; i++)
		floor_counts[0][u[i] >> 16]++;
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
	struct calib_opts co;
	struct err e;
	struct model *m;
	struct interp *ip, *fip;
	struct calib *cal;
	struct dataset *ds;
	struct sample smp;
	double *iw, *ic, *cw, *cc, *rw, *rc, *fw, *fc, *gw, *gc;
	double nelem = 0;
	int runs = 5, arg;

	calib_opts_init(&co);
	if ((arg = tool_args(argc, argv, &runs, &io.threads, &co.mbits)) < 0)
		goto usage;
	co.threads = io.threads;
	fo = io;
	fo.observe = floor_observe;
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
	printf("counted %.0f per run\n", floor_values / (runs + 1));
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
