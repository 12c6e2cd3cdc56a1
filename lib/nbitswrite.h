/*
 * nbitswrite: rewrite the MatMul nodes a stream's blockq records name
 * (records.h) into weight-only blockwise quantized form, computing the
 * per-block scales and zero points from the weights (nbitsq.h):
 *
 *   MatMulNBits (default)  com.microsoft MatMulNBits(A, B, scales[, zero
 *                          points]) in place of the MatMul, with K, N,
 *                          bits and block_size: B [N][k_blocks][blob]
 *                          uint8, scales [N * k_blocks]; zero points
 *                          packed like B (rtn), as floats (hqq's
 *                          fractional zeros), or none (symmetric: the
 *                          default 2^(bits-1)). B keeps the weight's name.
 *   qdq                    DequantizeLinear(W, scales[, zero points],
 *                          axis=0, block_size) -> MatMul input B, W the
 *                          K x N codes of the record's type and scales
 *                          and zero points [k_blocks][N]; needs the model
 *                          at opset 21 or more (raised when opset.h can).
 *
 * A weight whose model side differs from what the stream said (not an
 * initializer read by that MatMul only, not 2-D float, a graph input) is
 * left alone with a note; a NaN or infinity in a weight is an error
 * ("MODEL: initializer W: NaN or infinity at [k][n]"), as is a record
 * naming a node that is not a MatMul reading it ("FILE:LINE: ...").
 * The com.microsoft import, when needed, is the caller's (qdq.c).
 */
#ifndef ONNXQ_NBITSWRITE_H
#define ONNXQ_NBITSWRITE_H

#include <stddef.h>

#include "err.h"
#include "model.h"
#include "records.h"

struct nbitswrite_opts {
	int qdq;			/* DequantizeLinear + MatMul */
	const char *stream;		/* the stream's name, for messages */
	void (*note)(void *ctx, const char *msg);	/* may be NULL */
	void *note_ctx;
};

struct nbitswrite_report {
	int weights;			/* rewritten */
	int skipped;			/* left alone (noted) */
	int dequantize;			/* DequantizeLinear nodes added */
};

int nbitswrite_apply(struct model *m, const struct blockq_rec *v, size_t n,
    const struct nbitswrite_opts *o, struct nbitswrite_report *r,
    struct err *e);

#endif
