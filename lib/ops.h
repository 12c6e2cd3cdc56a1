/*
 * ops: the operator kernels the interpreter runs, and their registry.
 *
 * A kernel computes a node's outputs from its inputs. It reads attributes
 * with attr.h, allocates each output with tensor_alloc() (outputs arrive
 * empty), and on failure fills c->err with what is wrong without naming
 * the node (the interpreter prefixes "node NAME (Op): ").
 *
 * Kernels live in lib/op_*.c, each file exporting one NULL-terminated
 * table that ops.c lists: op_math.c (elementwise arithmetic, activations,
 * comparisons, logic), op_reduce.c (Reduce*, ArgMax/Min, TopK, CumSum,
 * Softmax family), op_shape.c (shape and data movement, Constant, Cast,
 * Gather, ...), op_nn.c (Conv, ConvTranspose, Gemm, MatMul, Einsum,
 * pooling, normalizations, Resize), op_quant.c (QuantizeLinear,
 * DequantizeLinear, both domains), op_control.c (If, Loop, Scan: they
 * run the node's subgraphs through interp.h), op_rnn.c (RNN, GRU, LSTM),
 * op_dynq.c (DynamicQuantizeLinear, MatMulInteger, ConvInteger and the
 * com.microsoft dynamic products),
 * op_nbits.c (MatMulNBits: weight-only blockwise, com.microsoft).
 * op_qlinear.c (the QOperator format's QLinear* and QGemm),
 * op_attn.c (com.microsoft Attention and QAttention).
 */
#ifndef ONNXQ_OPS_H
#define ONNXQ_OPS_H

#include "err.h"
#include "onnx/onnx.pb-c.h"
#include "tensor.h"

struct interp;
struct foldcache;

/* Scratch memory the nodes of one interpreter share (op_ctx.scratch). */
struct op_scratch {
	void *p;
	size_t n;
};

struct op_ctx {
	const Onnx__NodeProto *node;
	int opset;			/* imported version of the node's domain */
	int nin;			/* node->n_input */
	const struct tensor *const *in;	/* in[i] NULL for an absent optional input */
	int nout;
	struct tensor *out;		/* nout empty tensors, to allocate and fill */
	int threads;			/* worker threads the kernel may use */
	/*
	 * Per-node state a kernel may create on first run and reuse (packed
	 * weights, precomputed indices); freed with op_def.free_state.
	 */
	void **state;
	/*
	 * The node's graph attributes, planned (interp.h), by attribute
	 * index; NULL entries for other attributes. NULL when the node has
	 * none or the kernel runs outside the interpreter.
	 */
	struct interp *const *graphs;
	struct err *err;
	/*
	 * Bit j set: in[j] is a constant of the interpreter (initializer,
	 * folded value), the same tensor with the same values at every run
	 * of this node, so state made from it need not be checked again.
	 * 0 outside the interpreter.
	 */
	unsigned long long const_in;
	/*
	 * Scratch the interpreter's nodes share, one node running at a
	 * time: a kernel's for the length of its run only (its contents
	 * are not kept). NULL outside the interpreter.
	 */
	struct op_scratch *scratch;
	/*
	 * The fold cache the interpreter's folded constants are lent from
	 * (interp_opts.fold_cache): a kernel keeps what it derives from
	 * one there (foldcache_form()), for the interpreters after it.
	 * NULL when none.
	 */
	struct foldcache *fold_cache;
};

typedef int (*op_run_fn)(struct op_ctx *c);

struct op_def {
	const char *domain;		/* "" for the default domain, "com.microsoft" */
	const char *op_type;
	op_run_fn run;
	void (*free_state)(void *state);	/* may be NULL */
};

/* The kernel for (domain, op_type); domain "ai.onnx" is the default. NULL if none. */
const struct op_def *ops_find(const char *domain, const char *op_type);
/* Every registered kernel, NULL-terminated, for listings. */
const struct op_def *const *ops_all(void);
/*
 * Run def's kernel once on node n, outside the interpreter: in[nin] to
 * out[nout] (empty tensors), its per-node state freed after. A failure
 * the kernel did not explain reads "kernel failed".
 */
int ops_run_once(const struct op_def *def, const Onnx__NodeProto *n,
    int opset, const struct tensor *const *in, int nin, struct tensor *out,
    int nout, int threads, struct err *e);

/* The per-file tables ops.c concatenates. */
extern const struct op_def op_math_defs[];
extern const struct op_def op_reduce_defs[];
extern const struct op_def op_shape_defs[];
extern const struct op_def op_nn_defs[];
extern const struct op_def op_quant_defs[];
extern const struct op_def op_control_defs[];
extern const struct op_def op_rnn_defs[];
extern const struct op_def op_dynq_defs[];
extern const struct op_def op_nbits_defs[];
extern const struct op_def op_qlinear_defs[];
extern const struct op_def op_attn_defs[];

/*
 * Helpers kernels share. The small ones are inline: they sit on every
 * kernel's path.
 */

/*
 * ONNX Runtime's quantized product in its recurrent kernels (op_dynq.c):
 * y (m x n floats) = a (m x k floats) quantized per tensor as
 * DynamicQuantizeLinear does, times b (k x n, uint8 or int8, zero point
 * bzp: a scalar, or NULL for 0) exactly, times a's scale and bscale (one
 * value or one per column); added to y when accumulate.
 */
int ops_dynq_gemm(struct op_ctx *c, const float *a, int64_t m, int64_t k,
    const struct tensor *b, const struct tensor *bzp, const float *bscale,
    int64_t nscale, float *y, int accumulate);

/* Input i, or NULL when absent (past the end or an empty name). */
static inline const struct tensor *
ops_input(const struct op_ctx *c, int i)
{
	return i < c->nin ? c->in[i] : NULL;
}

/* Whether output i is wanted (exists and has a name). */
static inline int
ops_want_output(const struct op_ctx *c, int i)
{
	return i < c->nout && i < (int)c->node->n_output &&
	    c->node->output[i] && c->node->output[i][0];
}

/* float16 and bfloat16, which kernels compute in float. */
static inline int
ops_is_half(int dt)
{
	return dt == DT_FLOAT16 || dt == DT_BFLOAT16;
}

/* An element type's name for messages, "unknown" if it has none. */
static inline const char *
ops_type_name(int dt)
{
	const char *s = dtype_name(dt);

	return s ? s : "unknown";
}

/*
 * Defines kernel `name` as fn(c, ...): one op of a family that shares a
 * routine (Softmax and LogSoftmax, MaxPool and AveragePool, ...).
 */
#define OPS_KERNEL(name, fn, ...)					\
static int								\
name(struct op_ctx *c)							\
{									\
	return fn(c, __VA_ARGS__);					\
}

/* In ops.c: */
/* Numpy-style broadcast of two shapes into out; -1 with a message if impossible. */
int ops_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db,
    int *rout, int64_t *dout, struct err *e);
/* Normalise a possibly negative axis against rank; -1 with a message if out of range. */
int ops_axis(int64_t axis, int rank, struct err *e);
/* Read an int64/int32 tensor's values as int64 (1-D or scalar) into a malloc'd array. */
int ops_read_ints(const struct tensor *t, int64_t **vals, int64_t *count,
    struct err *e);

#endif
