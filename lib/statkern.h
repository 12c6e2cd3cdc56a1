/*
 * statkern: the fast path of tstats_add_batch() (stats.h) for the float
 * tensors of a calibration, where the statistics of every activation
 * would otherwise cost about as much as the inference: one batch's
 * count, NaN/Inf counts, range, exact sums and histogram, on several
 * threads and in vector code (AVX-512, AVX2, SSE2, or the plain C twin
 * they all equal).
 *
 * The result depends on the values only: not on the number of threads,
 * the order they finish in, nor the vector code this machine runs (every
 * version computes the same sums, so every build and machine writes the
 * same stream; ONNXQ_SIMD=plain|sse2|avx2, read by statkern_new(),
 * chooses a lesser one for the tests to compare). The counts, range and
 * histogram are those tstats_add_batch() gives; the sums are exact sums
 * of per-chunk sums in double, so their last bits may differ from
 * tstats_add_batch()'s, which sums the batch in one double.
 *
 * A statkern owns about 14 << mbits KiB of work space per thread, and
 * serves one caller at a time.
 */
#ifndef ONNXQ_STATKERN_H
#define ONNXQ_STATKERN_H

#include <stddef.h>

#include "err.h"
#include "stats.h"

/* Above, the flat per-thread counts take too much memory. */
#define STATKERN_MBITS_MAX 8

struct statkern;

/*
 * For histograms of mbits (0 to STATKERN_MBITS_MAX) on nthreads threads
 * (>= 1). NULL when out of memory.
 */
struct statkern *statkern_new(int nthreads, int mbits, struct err *e);
void statkern_free(struct statkern *k);

/*
 * tstats_add_batch(ts, x, n) for a ts whose histogram, if any, has the
 * kernel's mbits. -1 only when out of memory.
 */
int statkern_add_batch(struct statkern *k, struct tstats *ts,
    const float *x, size_t n, struct err *e);

/*
 * Slots: batches whose values come chunk by chunk, from the caller's
 * threads, several at once (the links of a fused chain, each block of
 * values seen while in cache and never written out). A batch is cut
 * into chunks of STATKERN_CHUNK values at multiples of it from its
 * start, each given to statkern_slot_chunk() once, in any order, from
 * any thread t < statkern_threads(); the statistics committed are those
 * statkern_add_batch() gives for the whole batch, bit for bit. Slot 0
 * is statkern_add_batch()'s own; the others are made by
 * statkern_slots() (-1 only when out of memory).
 */
#define STATKERN_CHUNK 8192

int statkern_slots(struct statkern *k, int nslots, struct err *e);
int statkern_threads(const struct statkern *k);
/* Empty a slot for a new batch. */
void statkern_slot_reset(struct statkern *k, int slot);
/* One chunk of the batch; its histogram counted when hist. */
void statkern_slot_chunk(struct statkern *k, int slot, int t, const float *p,
    size_t n, int hist);
/* The infinities the slot's chunks held so far. */
uint64_t statkern_slot_inf(const struct statkern *k, int slot);
/*
 * Add the slot's batch to ts, as statkern_add_batch() would (hist: as
 * the chunks were given; ts's histogram, if any, of the kernel's mbits);
 * the slot is left empty. -1 only when out of memory.
 */
int statkern_slot_commit(struct statkern *k, int slot, struct tstats *ts,
    int hist, struct err *e);
/* Drop the slot's batch (its counts cleared for the next). */
void statkern_slot_discard(struct statkern *k, int slot);

#endif
