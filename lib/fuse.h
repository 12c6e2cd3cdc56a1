/*
 * fuse: chains of elementwise float32 operators run in one pass.
 *
 * Exported models spell activations as chains of small nodes (hard-swish
 * as Add(x, 3) -> Clip(0, 6) -> Mul(x, .) -> Div(., 6)); run node by node
 * each link is a pass over memory. A chain here is a list of links, each
 * combining the value so far (cur) with the chain's input x or a scalar
 * constant, or mapping cur alone (Clip, Relu, HardSigmoid). fuse_run
 * computes the whole chain block by block while the block is in cache,
 * with exactly the arithmetic of the single kernels (op_math.c), so every
 * value is bit for bit what the nodes one by one give. The intermediate
 * values are written out only where the caller asks (an observer wants
 * to see them); else they live in a block-sized buffer.
 *
 * A QuantizeLinear read only by a DequantizeLinear (the fake
 * quantization on every activation of a QDQ model), both with one
 * constant scale and zero point for the whole tensor, makes two links:
 * the QUANT link's values are the integers (as floats) the node would
 * write, the DEQUANT link's the floats DequantizeLinear makes of them,
 * with op_quant.c's arithmetic; the integer tensor between them is never
 * made, and fuse_run computes the pair in one step, the same bits. A
 * QUANT link is always followed by its DEQUANT link (the interpreter
 * cuts chains to make it so) and never writes an output.
 *
 * Recognising which nodes form a chain (single readers, plan order) is
 * the interpreter's job; fuse_link_parse says whether one node can be a
 * link and how.
 */
#ifndef ONNXQ_FUSE_H
#define ONNXQ_FUSE_H

#include <stdint.h>

#include "onnx/onnx.pb-c.h"
#include "tensor.h"

#define FUSE_MAX 8		/* links in one chain */

enum fuse_kind { FUSE_BIN, FUSE_CLIP, FUSE_HSIG, FUSE_RELU, FUSE_QUANT,
	FUSE_DEQUANT };
enum fuse_arg { FUSE_CUR, FUSE_X, FUSE_K };

struct fuse_link {
	enum fuse_kind kind;
	char op;		/* FUSE_BIN: '+', '-', '*' or '/' */
	enum fuse_arg a, b;	/* FUSE_BIN: the operands, in the node's order */
	float k;		/* the scalar constant operand; QUANT,
				   DEQUANT: the scale */
	float lo, hi;		/* Clip's bounds; HardSigmoid's alpha, beta;
				   QUANT: the integer type's range */
	int krank;		/* rank of the constants (<= x's for a chain) */
	int qtype;		/* QUANT, DEQUANT: the integer type */
	int32_t zero;		/* QUANT, DEQUANT: the zero point */
};

/* The constant tensor named name (initializer, folded Constant), or NULL. */
typedef const struct tensor *(*fuse_const_fn)(void *ctx, const char *name);

/*
 * Which input of nd would be the input x of a chain starting at nd:
 * its index, or -1 when nd cannot start one.
 */
int fuse_chain_input(const Onnx__NodeProto *nd, fuse_const_fn konst,
    void *ctx);

/*
 * Fill l when nd (of opset opset) can be the next link of a chain whose
 * value so far is named cur and whose input is named x: 0 if it can, -1
 * if not (another op, a non-scalar or non-float constant, an input that
 * is neither cur, x nor a constant, more than one output).
 */
int fuse_link_parse(struct fuse_link *l, const Onnx__NodeProto *nd,
    int opset, const char *cur, const char *x, fuse_const_fn konst,
    void *ctx);

/*
 * Run the n links on the len values of x. outs[i] receives link i's
 * values; it may be NULL (not wanted) for every link but the last, and
 * is for a QUANT link. The last may be x itself (in place). threads > 1
 * spreads long runs over par's threads (par.h).
 */
void fuse_run(const struct fuse_link *l, int n, const float *x,
    float *const *outs, int64_t len, int threads);

/*
 * fuse_run, each link's values shown to see() as they are made, block by
 * block while in cache (an observer's statistics, so that the values
 * between the links need never be written out): blocks of `block`
 * values at multiples of it, link by link in order within a block, the
 * blocks in any order, from par thread t < threads; block at most
 * FUSE_SEEN_MAX (-1, nothing run, when not).
 */
#define FUSE_SEEN_MAX 8192
typedef void (*fuse_see_fn)(void *ctx, int link, const float *v, int64_t at,
    int64_t len, int t);
int fuse_run_seen(const struct fuse_link *l, int n, const float *x,
    float *const *outs, int64_t len, int threads, int64_t block,
    fuse_see_fn see, void *ctx);

#endif
