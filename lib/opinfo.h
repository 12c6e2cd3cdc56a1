/*
 * opinfo: what the quantizer knows about operators, shared by onnx-calib
 * (weight and bias records), onnx-qparams (from node records, without the
 * model) and onnx-qdq-insert: which input slots hold weights and biases,
 * along which axis a weight is quantized per channel, and which
 * activation and weight a bias's int32 scale is the product of.
 *
 *	op                  weights (axis)              bias (pairs with)
 *	Conv                1 W (0)                     2 B (X=0, W=1)
 *	ConvTranspose       1 W (1)                     2 B (X=0, W=1)
 *	Gemm                1 B (0 if transB else 1)    2 C (A=0, B=1)
 *	MatMul              1 B (rank - 1 if rank >= 2)  -
 *	LayerNormalization  1 Scale, 2 B (0 when 1-D)   -
 *	InstanceNormalization 1 scale, 2 B (0 when 1-D) -
 *	BatchNormalization  1..4 (0 when 1-D)           -
 *
 * Gemm's C and the biases keep their own channel axis: the last one (the
 * output channel) when their rank is at least 1.
 *
 * Which inputs are data at all: most inputs are, but some are parameters
 * that say what the op does (Resize's roi, scales and sizes, Upsample's
 * scales, Clip's bounds, Pad's pads and constant value, Slice's starts,
 * Reshape's shape, reduction axes, Dropout's ratio, ...). Quantizing
 * those changes the result (a scale of 1.99 for 2 changes Resize's output
 * shape) and ONNX Runtime leaves them float; opinfo_is_data() says which
 * slots are data, from one table.
 *
 * Nothing here allocates; the tables are static.
 */
#ifndef ONNXQ_OPINFO_H
#define ONNXQ_OPINFO_H

#include "onnx/onnx.pb-c.h"

enum opinfo_role {
	OPINFO_OTHER = 0,	/* an activation or anything else */
	OPINFO_WEIGHT,		/* quantized per channel when constant */
	OPINFO_BIAS,		/* quantized to int32 with scale in * weight */
};

struct opinfo {
	const char *op_type;	/* default domain */
	int weight_slot;	/* the main weight (W, B of MatMul/Gemm); -1 none */
	int bias_slot;		/* -1 none */
	int act_slot;		/* the activation the bias pairs with; -1 none */
	int weight_axis;	/* -1: decided by opinfo_weight_axis() */
	unsigned weight_mask;	/* every slot that is a weight (bit per slot) */
};

/* The entry for an op of the default domain ("" or "ai.onnx"); NULL if none. */
const struct opinfo *opinfo_find(const char *domain, const char *op_type);

/* Role of input slot `slot` of an op. */
enum opinfo_role opinfo_role(const char *domain, const char *op_type,
    int slot);

/*
 * 1 when input `slot` of an op carries data the quantizer may quantize,
 * 0 when it is a parameter of the op (see above). Ops the table does not
 * list, and ops of other domains, have data in every slot.
 */
int opinfo_is_data(const char *domain, const char *op_type, int slot);

/*
 * The per-channel axis of the constant in input `slot` of node n, of rank
 * `rank`, or -1 when it is quantized per tensor (no channel axis, or a
 * shape the op does not allow). Reads n's attributes (Gemm transB).
 */
int opinfo_axis(const Onnx__NodeProto *n, int slot, int rank);

/*
 * For a bias slot of n: the activation and weight input slots it pairs
 * with. 0, or -1 when slot is not a bias of n.
 */
int opinfo_bias_pair(const Onnx__NodeProto *n, int slot, int *act_slot,
    int *weight_slot);

#endif
