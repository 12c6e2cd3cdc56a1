/*
 * calibpool: a calibration run (calib.h) over a list of batches of
 * samples, on several workers at once. Calibration is a batch job and
 * its statistics merge exactly (stats.h), so rather than cutting each
 * tensor among threads, T workers each run whole batches on an engine of
 * their own with ONE interpreter thread, taking the next batch as they
 * finish one, and their statistics are merged into worker 0's engine at
 * the end: the same statistics, bit for bit, as one engine running every
 * batch in order, so the stream does not change.
 *
 * Worker 0's engine is made at once (its interpreter tells the caller
 * about the inputs) and runs the first batch alone, while the others
 * make their engines (as many as fit in the memory limit of tensor.h).
 * That batch's peak of tensor memory then decides how many of them may
 * work: each must leave room for twice that peak, and for its engine,
 * beside what is live. When that is one, the batches go on serially on
 * an engine with `threads` interpreter threads (worker 0's statistics
 * merged into it). A worker whose engine cannot be made leaves its
 * batches to the others. With glibc, a run of several workers leaves
 * the process with one malloc arena (mallopt M_ARENA_MAX): a worker's
 * arena of its own would give its memory back after every run.
 *
 * Errors are those of a serial run: when batches fail, the error is the
 * first failing batch's (the ones before it still run; none after it
 * starts), prefixed by its sample, "DIR/s3: ..." or "DIR/s3 (batch of
 * 4): ..." as onnx-calib names them. One worker (serial set, threads
 * 1, or fewer than two batches; or ONNXQ_CALIB_SERIAL set in the
 * environment when the pool is made, for comparisons) is one engine on
 * `threads` interpreter threads, the batches in order, as before.
 */
#ifndef ONNXQ_CALIBPOOL_H
#define ONNXQ_CALIBPOOL_H

#include "calib.h"
#include "err.h"
#include "model.h"

/* Samples first .. first + n - 1, run as one batch. */
struct calibpool_batch {
	int first, n;
};

struct calibpool_opts {
	int threads;	/* workers at most (calib_opts: 0 means 2) */
	int mbits;	/* as calib_opts */
	int serial;	/* 1: one engine on `threads` interpreter threads */
	/* samples done so far, called from any worker, one at a time */
	void (*progress)(void *ctx, long done);
	void *progress_ctx;
};

/* threads 0, mbits HIST_MBITS_DEFAULT, serial 0, no progress. */
void calibpool_opts_init(struct calibpool_opts *o);

struct calibpool;

/*
 * Workers for m (prepared; it must outlive the pool). NULL with e set
 * when worker 0's engine cannot be made.
 */
struct calibpool *calibpool_new(const struct model *m,
    const struct calibpool_opts *o, struct err *e);
void calibpool_free(struct calibpool *p);

/*
 * Worker 0's engine: its interpreter; after a run, all the statistics
 * (a run may replace it: ask again).
 */
struct calib *calibpool_engine(const struct calibpool *p);

/* Run the batches b[0..nb-1] of d. */
int calibpool_run(struct calibpool *p, struct calib_data *d,
    const struct calibpool_batch *b, int nb, struct err *e);

/* The workers the last run had (1 before any). */
int calibpool_workers(const struct calibpool *p);

#endif
