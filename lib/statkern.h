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

#endif
