/*
 * qop: the QOperator form of a QDQ model, from the same decisions.
 *
 * qdq_apply() with format QDQ_FORMAT_QOPERATOR first writes the QDQ model
 * (every record of the stream applied as for --format qdq), then calls
 * qop_rewrite(), which turns each group
 *
 *   DequantizeLinear -> OP -> QuantizeLinear
 *
 * whose operator has a quantized form into that operator, reading and
 * writing the quantized tensors themselves, with the group's scales and
 * zero points:
 *
 *   Conv -> QLinearConv, MatMul -> QLinearMatMul (default domain, opset
 *   10); Gemm -> QGemm, Add -> QLinearAdd, Mul -> QLinearMul, Sigmoid ->
 *   QLinearSigmoid, LeakyRelu -> QLinearLeakyRelu, AveragePool ->
 *   QLinearAveragePool, GlobalAveragePool -> QLinearGlobalAveragePool,
 *   Concat -> QLinearConcat, Softmax -> QLinearSoftmax (com.microsoft,
 *   imported at version 1).
 *
 * Operators that only move data (Reshape, Transpose, Flatten, Squeeze,
 * Unsqueeze, MaxPool from opset 12, Slice, Gather, Identity,
 * DepthToSpace, SpaceToDepth) read the quantized tensor directly when the
 * QuantizeLinear after them has the DequantizeLinear's parameters. Then
 * the DequantizeLinear nodes nothing reads any more are removed, and the
 * initializers only they read. Chains of quantized operators so pass
 * quantized tensors with no DequantizeLinear/QuantizeLinear between them;
 * other operators stay float between DequantizeLinear and QuantizeLinear,
 * as in ORT's QOperator mode.
 *
 * A group stays in QDQ form, with a note, when the format cannot express
 * it: a 16-bit tensor (the QLinear operators take uint8 and int8 only),
 * per-channel parameters where the operator takes one scale, a float or
 * int32 bias whose scale is not input scale x weight scale, Gemm with
 * alpha or beta other than 1 and a bias, a default-domain opset below 10
 * (QLinearConv, QLinearMatMul), an output read by more than the one
 * QuantizeLinear.
 */
#ifndef ONNXQ_QOP_H
#define ONNXQ_QOP_H

#include "err.h"
#include "model.h"
#include "qdq.h"

struct qop_report {
	int qlinear;		/* operators written in their QLinear form */
	int moved;		/* data movement on quantized tensors */
	int left;		/* groups left in QDQ form (see the notes) */
	int removed;		/* QuantizeLinear/DequantizeLinear removed */
};

/*
 * Rewrite m, a model qdq_apply() wrote in QDQ form, as above. note (may
 * be NULL) hears of each group left in QDQ form. On failure m may be half
 * rewritten: discard it.
 */
int qop_rewrite(struct model *m, qdq_note_fn note, void *note_ctx,
    struct qop_report *r, struct err *e);

#endif
