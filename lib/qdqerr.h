/*
 * qdqerr: what quantization costs each quantized tensor of a model, as
 * onnx-verify --per-tensor reports it. The pairs are qdqmatch.h's; for
 * each, two comparisons (compare.h) with the fp32 tensor it stands for:
 *
 *   carried  QMODEL's DQ output against the fp32 value, the error that
 *            reaches that point of the quantized graph;
 *   own      the pair alone, applied to the fp32 value, against it: what
 *            that one pair's scale and zero point cost.
 *
 * Weights and biases are compared once, at qdqerr_init (carried = own).
 * Activations are compared sample by sample: the fp32 interpreter's
 * observer (qdqerr_observe_fp32) holds each source value and quantizes
 * it with each pair alone; the quantized interpreter's observer
 * (qdqerr_observe_q) compares each DQ output with the value held, which
 * is then released once every pair has seen it. Run the fp32 model
 * before the quantized one for each sample, and call qdqerr_drop_held
 * after both. Sources with clamp bounds are compared clamped, both sides.
 *
 * Also counted, over the elements of the fp32 value: the integers seen
 * (grid use) and the elements the pair clips (quantized to an end of the
 * type's range and beyond the grid's end by more than half a step; scales
 * per tensor or per axis, blocked scales not counted).
 *
 * struct qdqerr owns its match and stats; qdqerr_free() frees them. The
 * three models must outlive it.
 */
#ifndef ONNXQ_QDQERR_H
#define ONNXQ_QDQERR_H

#include <stdint.h>

#include "compare.h"
#include "qdqmatch.h"

struct qdqerr_stat {
	int qtype;		/* the integer type seen */
	int64_t tlo, thi;	/* its range (of the matched type) */
	struct compare carried, own;
	int64_t counted, clipped;	/* elements seen, and clipped */
	int64_t qlo, qhi;	/* integers seen */
};

struct qdqerr {
	struct qdqmatch match;
	struct qdqerr_stat *stats;	/* one per match.pairs */
	struct tensor *held;		/* one per match.sources */
	int *pending;			/* readers yet to see held */
	int threads;
	int64_t sample;			/* set before each sample */
};

/*
 * Match qm to fm (pm: fm after prep_model()) and compare the weights.
 * On error everything is freed; a weight's error names its tensor.
 */
int qdqerr_init(struct qdqerr *q, const struct model *fm,
    const struct model *pm, const struct model *qm, int threads,
    struct err *e);
void qdqerr_free(struct qdqerr *q);

/* interp_observe_fn for the fp32 and the quantized interpreters. */
int qdqerr_observe_fp32(void *ctx, const char *name, const struct tensor *t,
    struct err *e);
int qdqerr_observe_q(void *ctx, const char *name, const struct tensor *t,
    struct err *e);
/* Release the values held (after a sample, or when stopping). */
void qdqerr_drop_held(struct qdqerr *q);

/* The figures of pair i; NaN where they do not apply. */
double qdqerr_carried_snr(const struct qdqerr *q, int i);
double qdqerr_own_snr(const struct qdqerr *q, int i);
double qdqerr_own_worst_snr(const struct qdqerr *q, int i);
double qdqerr_own_mse(const struct qdqerr *q, int i);
double qdqerr_own_max_abs(const struct qdqerr *q, int i);
double qdqerr_clip_pct(const struct qdqerr *q, int i);	/* % clipped */
double qdqerr_grid_pct(const struct qdqerr *q, int i);	/* % grid used */

enum qdqerr_sort { QDQERR_SORT_OWN, QDQERR_SORT_SNR, QDQERR_SORT_GRAPH };

/*
 * Pair indices into out[match.npairs]: by own SNR, carried SNR (lowest
 * first, NaN last) or neither, ties in graph order. -1 out of memory.
 */
int qdqerr_sort(const struct qdqerr *q, int key, int *out);

#endif
