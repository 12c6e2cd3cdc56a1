/*
 * statderive: which tensors of a model have statistics (stats.h) that
 * follow, batch by batch and exactly, from those of the tensors they are
 * made of, so that calibration need not compute them from the values.
 *
 *   - STATDERIVE_COPY: the output holds its input's values in the same
 *     order (Identity, Reshape, Flatten, Squeeze, Unsqueeze, Dropout's
 *     output 0 in inference; Add or Sub of a constant +-0, Mul or Div
 *     by a constant 1, which the affine blocks of untrained models
 *     hold): every statistic is the input's, the shape aside. The sums too, being exact sums of chunk sums at fixed
 *     offsets of the same values.
 *   - STATDERIVE_HIST: the output's histogram is that of the inputs'
 *     values through the clamp [lo, hi] (hist_add_clamped()), summed
 *     over the inputs: Relu (0, +Inf) and Clip with constant bounds
 *     (float32 only: the bounds are float32 there), Transpose (the same
 *     values in another order: -Inf, +Inf) and Concat (the inputs'
 *     values together). The sums depend on the order of the values,
 *     and a finite bound turns an infinity into a finite value the
 *     inputs' histograms do not hold: those are the caller's to compute
 *     (or to give up deriving when an input holds infinities and lo or
 *     hi is finite).
 *
 * Only nodes of the standard domain whose inputs are not constants are
 * planned (a constant has no statistics to derive from): inputs maps
 * the names of the tensors that have statistics.
 */
#ifndef ONNXQ_STATDERIVE_H
#define ONNXQ_STATDERIVE_H

#include "err.h"
#include "model.h"

enum statderive_kind {
	STATDERIVE_NONE,
	STATDERIVE_COPY,
	STATDERIVE_HIST,
};

struct statderive {
	enum statderive_kind kind;
	int nsrc;		/* the node's inputs it derives from, ... */
	const char *const *src;	/* ... names owned by the model */
	float lo, hi;		/* HIST: the clamp */
	int float32_only;	/* HIST: exact for float32 values only */
};

/*
 * The plan for output `out` of node n of model m (its main graph).
 * has_stats(ctx, name) says whether a tensor has statistics. d->kind is
 * STATDERIVE_NONE when nothing derives.
 */
void statderive_plan(const struct model *m, const Onnx__NodeProto *n,
    size_t out, int (*has_stats)(void *ctx, const char *name), void *ctx,
    struct statderive *d);

#endif
