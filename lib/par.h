/*
 * par: the kernels' parallel loops, on a small pool of worker threads
 * where the calling thread takes part and never waits for a worker to
 * wake up.
 *
 * par_for(n, threads, fn, ctx) runs fn(ctx, i, w) once for each chunk
 * i in 0..n-1 and returns when all have run. The calling thread (w 0)
 * and up to threads - 1 workers (w 1 .. threads - 1) take chunks one at
 * a time from a shared counter, so a chunk's result must depend on i
 * only, never on which thread runs it: w is for per-thread scratch.
 * A worker that is asleep or waiting for a CPU when the job starts
 * simply finds no chunk left, and the caller does them all; the caller
 * waits only for chunks a worker has begun. With OpenMP, every parallel
 * region, even a one-thread or if(0) one, costs a system call, and the
 * caller waits at the closing barrier for every thread of the team: on a
 * busy two-core machine a region could take a scheduler time slice.
 *
 * threads <= 1, n <= 1, or a call from inside a chunk (or while another
 * thread's job runs) run all chunks on the calling thread, in order,
 * without touching the pool. Workers spin for a short while after a
 * job, then sleep. The pool lives until the process exits.
 */
#ifndef ONNXQ_PAR_H
#define ONNXQ_PAR_H

#include <stdint.h>

#define PAR_MAX_THREADS 256

typedef void (*par_fn)(void *ctx, int64_t i, int w);

void par_for(int64_t n, int threads, par_fn fn, void *ctx);

/*
 * Items 0..n-1 in contiguous ranges: fn(ctx, lo, hi, w) for ranges that
 * cover them once (a few per thread, for balance); for loops whose items
 * are independent. threads <= 1: one call for all.
 */
typedef void (*par_range_fn)(void *ctx, int64_t lo, int64_t hi, int w);

void par_range(int64_t n, int threads, par_range_fn fn, void *ctx);

/* Whether the calling thread is running a chunk of a par_for job. */
int par_in_job(void);

#endif
