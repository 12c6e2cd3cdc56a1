/*
 * dynwrite: rewrite a prepared fp32 model for dynamic quantization, as a
 * stream's dynamic records say (onnxq-stream(5)); qdq_apply() calls it
 * when the plan has them. The structure of ONNX Runtime's
 * quantize_dynamic, for each node N with weight W (qparam record of role
 * weight):
 *
 *   X -> DynamicQuantizeLinear -> X_quantized, X_scale, X_zero_point
 *        (one per activation, shared by every dynamic reader of X)
 *   MatMul:  MatMulInteger(X_quantized, W_quantized, X_zero_point,
 *            W_zero_point) -> Cast(float) -> Mul(X_scale * W_scale)
 *   Gemm:    the same with W transposed when transB (alpha folded into
 *            W_scale), then Add(beta * C) when C is given; transA is
 *            left in float
 *   Conv:    ConvInteger with Conv's attributes, W_scale shaped [M,1,..]
 *            to multiply along the output channel, then Add(B as [M,1,..])
 *
 * W_zero_point is one value when all channels share it (always for
 * ConvInteger, which takes no other; per-channel zero points that differ
 * are an error there), else one per output column. The float W is
 * removed when nothing else reads it. DynamicQuantizeLinear needs opset
 * 11: a model below is raised (opset.h), or refused when it cannot be.
 * The new nodes take the place of N, so the graph stays in order.
 *
 * Errors name the stream file and line ("FILE:LINE: node N is not in
 * MODEL"); notes say what was left in float and why.
 */
#ifndef ONNXQ_DYNWRITE_H
#define ONNXQ_DYNWRITE_H

#include "err.h"
#include "model.h"
#include "qdq.h"

int dynwrite_apply(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, struct qdq_report *rep, struct err *e);

#endif
