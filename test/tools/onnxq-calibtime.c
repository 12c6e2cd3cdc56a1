/*
 * onnxq-calibtime: the cost of calibration statistics over plain
 * inference, for scripts/bench-calib. Not installed.
 *
 *	onnxq-calibtime [-n RUNS] [-t THREADS] [-b MBITS] MODEL DIR
 *	onnxq-calibtime -p [-n RUNS] [-t THREADS] [-b MBITS] MODEL DIR
 *
 * Loads and prepares MODEL as onnx-calib does, loads the first sample of
 * the data directory DIR (any layout of onnx-verify(1)), warms up, then
 * RUNS times (default 5) runs the sample once through the plain
 * interpreter and once through the calibration engine (histograms of
 * MBITS mantissa bits, default that of onnx-calib; -1: none), both on
 * THREADS threads, then the same two on one thread, interleaved so that
 * all see the same load on a shared machine. Prints the medians of wall
 * and process CPU time, in milliseconds:
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
 *	infer1 WALL_MS CPU_MS
 *	floor1-overhead WALL_PCT CPU_PCT
 *
 * With -p, it only calibrates all the samples of DIR as onnx-calib does
 * (calibpool.h: THREADS workers, one batch per sample, the workers'
 * engines made and their statistics merged; loading the model and
 * writing the stream left out), once to warm up and RUNS times, and
 * prints per sample (medians) and the workers the pool had:
 *
 *	pool WALL_MS CPU_MS WORKERS
 *
 * in a process of its own, as onnx-calib's: the other measures' threads
 * would leave malloc arenas that the workers' runs fault in afresh.
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
 * calib.c does); the other tensors whole, on one thread. infer1 and
 * floor1 are infer and floor on one thread, what each worker of the
 * pool runs.
 * Exit 0 on success, 1 on error, 2 on usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "calibpool.h"
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

/* The measures, each a wall and a CPU time per run. */
enum {
	M_INFER, M_CALIB, M_FLOOR, M_INFER1, M_FLOOR1,
	M_OVER, M_FLOOR_OVER, M_FLOOR1_OVER, NMEAS
};

/*
 * Calibrate every sample of dir on the pool's workers; *workers: how
 * many it had.
 */
static int
pool_run(const struct model *m, const struct calib_opts *co,
    const char *dir, int *nsamples, int *workers, struct err *e)
{
	const char *dirs[1] = { dir };
	struct calibpool_opts po;
	struct calibpool *p = NULL;
	struct calibpool_batch *b = NULL;
	struct calib_data *d;
	int n, rc = -1;

	calibpool_opts_init(&po);
	po.threads = co->threads;
	po.mbits = co->mbits;
	if (!(d = calib_data_open(dirs, 1, e)))
		return -1;
	n = calib_data_count(d);
	if (!(b = calloc((size_t)n + 1, sizeof *b))) {
		err_nomem(e);
		goto out;
	}
	for (int i = 0; i < n; i++)
		b[i].first = i, b[i].n = 1;
	if (!(p = calibpool_new(m, &po, e)) || calibpool_run(p, d, b, n, e) < 0)
		goto out;
	*nsamples = n;
	*workers = calibpool_workers(p);
	rc = 0;
out:
	calibpool_free(p);
	free(b);
	calib_data_free(d);
	return rc;
}

/* -p: the pool's runs alone. */
static int
pool_main(const char *path, const char *dir, const struct calib_opts *co,
    int runs)
{
	struct model *m;
	struct err e;
	double *w, *c;
	int nsamples = 1, workers = 1;

	if (!(m = model_load(path, &e)) || prep_model(m, NULL, &e) < 0) {
		fprintf(stderr, "onnxq-calibtime: %s\n", e.msg);
		return 1;
	}
	if (!(w = calloc(runs, sizeof *w)) || !(c = calloc(runs, sizeof *c))) {
		fputs("onnxq-calibtime: out of memory\n", stderr);
		return 1;
	}
	for (int r = -1; r < runs; r++) {
		double w0, c0, w1, c1;

		stamp(&w0, &c0);
		if (pool_run(m, co, dir, &nsamples, &workers, &e) < 0) {
			fprintf(stderr, "onnxq-calibtime: %s\n", e.msg);
			return 1;
		}
		stamp(&w1, &c1);
		if (r >= 0) {
			w[r] = (w1 - w0) / nsamples;
			c[r] = (c1 - c0) / nsamples;
		}
	}
	printf("pool %.1f %.1f %d\n", median(w, runs), median(c, runs),
	    workers);
	free(w);
	free(c);
	model_free(m);
	return 0;
}

int
main(int argc, char **argv)
{
	struct interp_opts io = { .threads = 2 }, fo, io1, fo1;
	struct interp_chain_observer fcobs = {
		floor_chain_begin, floor_chain_see, floor_chain_done,
		STATKERN_CHUNK, 2
	};
	struct calib_opts co;
	struct err e;
	struct model *m;
	struct interp *ip, *fip, *ip1, *fip1;
	struct calib *cal;
	struct dataset *ds;
	struct sample smp;
	double *w[NMEAS], *c[NMEAS];
	double nelem = 0, counted = 0;
	int runs = 5, arg;

	calib_opts_init(&co);
	if (argc > 1 && strcmp(argv[1], "-p") == 0) {
		argv[1] = argv[0];
		if ((arg = tool_args(argc - 1, argv + 1, &runs, &io.threads,
		    &co.mbits)) < 0)
			goto usage;
		co.threads = io.threads;
		return pool_main(argv[arg + 1], argv[arg + 2], &co, runs);
	}
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
	io1 = io;
	io1.threads = 1;
	fo1 = fo;
	fo1.threads = 1;
	if (!(m = model_load(argv[arg], &e)) ||
	    prep_model(m, NULL, &e) < 0 ||
	    !(ip = interp_new(m, &io, &e)) ||
	    !(ip1 = interp_new(m, &io1, &e)) ||
	    !(cal = calib_new(m, &co, &e)) ||
	    !(fo.observe_ctx = cal) || !(fo1.observe_ctx = cal) ||
	    !(fip = interp_new(m, &fo, &e)) ||
	    !(fip1 = interp_new(m, &fo1, &e)) ||
	    !(ds = dataset_open((const char **)&argv[arg + 1], 1, &e)) ||
	    sample_load(&smp, ip, ds, &e) < 0) {
		fprintf(stderr, "onnxq-calibtime: %s\n", e.msg);
		return 1;
	}
	for (int k = 0; k < NMEAS; k++)
		if (!(w[k] = calloc(runs, sizeof *w[k])) ||
		    !(c[k] = calloc(runs, sizeof *c[k]))) {
			fputs("onnxq-calibtime: out of memory\n", stderr);
			return 1;
		}
	for (int r = -1; r < runs; r++) {
		double tw[M_FLOOR1 + 2], tc[M_FLOOR1 + 2];

		stamp(&tw[0], &tc[0]);
		if (sample_run(&smp, ip, &e) < 0)
			goto fail;
		stamp(&tw[1], &tc[1]);
		if (calib_run(cal, smp.in, &e) < 0)
			goto fail;
		stamp(&tw[2], &tc[2]);
		if (sample_run(&smp, fip, &e) < 0)
			goto fail;
		stamp(&tw[3], &tc[3]);
		if (sample_run(&smp, ip1, &e) < 0)
			goto fail;
		stamp(&tw[4], &tc[4]);
		if (sample_run(&smp, fip1, &e) < 0)
			goto fail;
		stamp(&tw[5], &tc[5]);
		if (r < 0)
			continue;
		for (int k = 0; k <= M_FLOOR1; k++) {
			w[k][r] = tw[k + 1] - tw[k];
			c[k][r] = tc[k + 1] - tc[k];
		}
		w[M_OVER][r] = w[M_CALIB][r] / w[M_INFER][r];
		c[M_OVER][r] = c[M_INFER][r] > 0 ?
		    c[M_CALIB][r] / c[M_INFER][r] : 0;
		w[M_FLOOR_OVER][r] = w[M_FLOOR][r] / w[M_INFER][r];
		c[M_FLOOR_OVER][r] = c[M_INFER][r] > 0 ?
		    c[M_FLOOR][r] / c[M_INFER][r] : 0;
		w[M_FLOOR1_OVER][r] = w[M_FLOOR1][r] / w[M_INFER1][r];
		c[M_FLOOR1_OVER][r] = c[M_INFER1][r] > 0 ?
		    c[M_FLOOR1][r] / c[M_INFER1][r] : 0;
	}
	printf("infer %.1f %.1f\n", median(w[M_INFER], runs),
	    median(c[M_INFER], runs));
	printf("calib %.1f %.1f\n", median(w[M_CALIB], runs),
	    median(c[M_CALIB], runs));
	printf("overhead %.0f %.0f\n", 100 * (median(w[M_OVER], runs) - 1),
	    100 * (median(c[M_OVER], runs) - 1));
	printf("floor %.1f %.1f\n", median(w[M_FLOOR], runs),
	    median(c[M_FLOOR], runs));
	printf("floor-overhead %.0f %.0f\n",
	    100 * (median(w[M_FLOOR_OVER], runs) - 1),
	    100 * (median(c[M_FLOOR_OVER], runs) - 1));
	for (int i = 0; i < calib_ntensors(cal); i++) {
		const struct tstats *ts = calib_tensor_stats(cal, i);

		nelem += (double)(ts->n + ts->nan + ts->inf);
	}
	printf("values %.0f per run\n", nelem / (runs + 1));
	/* the floor ran twice a round */
	for (int t = 0; t < FLOOR_THREADS_MAX; t++)
		counted += floor_values[t];
	printf("counted %.0f per run\n", counted / (2 * (runs + 1)));
	printf("infer1 %.1f %.1f\n", median(w[M_INFER1], runs),
	    median(c[M_INFER1], runs));
	printf("floor1-overhead %.0f %.0f\n",
	    100 * (median(w[M_FLOOR1_OVER], runs) - 1),
	    100 * (median(c[M_FLOOR1_OVER], runs) - 1));
	sample_free(&smp);
	for (int k = 0; k < NMEAS; k++) {
		free(w[k]);
		free(c[k]);
	}
	free(floor_counts);
	dataset_free(ds);
	calib_free(cal);
	interp_free(fip1);
	interp_free(fip);
	interp_free(ip1);
	interp_free(ip);
	model_free(m);
	return 0;
fail:
	fprintf(stderr, "onnxq-calibtime: %s\n", e.msg);
	return 1;
usage:
	fputs("usage: onnxq-calibtime [-p] [-n RUNS] [-t THREADS] "
	    "[-b MBITS] MODEL DIR\n", stderr);
	return 2;
}
