/*
 * qdqscale: fold scalings by a constant into the quantization scales of a
 * QDQ model (onnx-qdq-insert --fold-scales), and additions of a constant
 * into the bias of the Conv before them (--fold-biases).
 *
 * In a model qdq_apply() wrote, each group
 *
 *   X_q -> DequantizeLinear(s, z) -> Div(c) or Mul(c) -> Y
 *       -> QuantizeLinear -> Y_q -> DequantizeLinear ...
 *
 * whose c is a positive finite scalar constant (or the DequantizeLinear of
 * one) computes x / c (x * c) and rounds it again: X_q read with scale
 * s / c (s * c) and the same zero point is the same value, with one
 * rounding less. The DequantizeLinear nodes reading Y_q then read X_q with
 * that scale, and the Div or Mul and Y's QuantizeLinear are removed, with
 * X's DequantizeLinear when nothing else reads it, and the constants only
 * they read. ONNX Runtime has no quantized Div: each such Div (the "/ 6"
 * of PaddleOCR's hard-swish) costs a float pass and two conversions; a
 * Mul by a constant (a learnable scale) costs a QLinearMul.
 *
 * Left alone: Y a graph output or read by anything but that one
 * QuantizeLinear, Y_q read by anything but DequantizeLinear nodes or a
 * graph output, X or Y per-channel or without an explicit zero point,
 * X_q and Y_q of different types or their nodes of different domains, a
 * new scale that is not a positive normal float. Here and below, an
 * initializer also listed as a graph input is no constant (a default the
 * caller may override), and stays in the model even when unread.
 */
#ifndef ONNXQ_QDQSCALE_H
#define ONNXQ_QDQSCALE_H

#include "err.h"
#include "model.h"

/*
 * Fold every such group of m, in place; *folded (may be NULL) counts the
 * Div and Mul nodes removed. On failure m may be half rewritten: discard
 * it.
 */
int qdqscale_fold(struct model *m, int *folded, struct err *e);

/*
 * In a model qdq_apply() wrote (and qdqscale_fold() may have folded), each
 * group
 *
 *   Conv(..., DequantizeLinear(B, sb)) -> X -> QuantizeLinear(sx, zx)
 *       -> X_q -> DequantizeLinear(sd, zx) -> Add(k) -> Y
 *       -> QuantizeLinear(sy, zy) -> Y_q -> DequantizeLinear ...
 *
 * whose k is a finite scalar constant (or the DequantizeLinear of one)
 * reads X_q as r * x (r = sd / sx) and adds k: the Conv's int32 bias B
 * plus round(k / (r * sb)) (per channel) writes x + k / r, which X's
 * QuantizeLinear, given scale sy / r and zero point zy, rounds to Y_q
 * directly. The DequantizeLinear nodes reading Y_q read X_q, and the Add,
 * Y's QuantizeLinear and X_q's DequantizeLinear are removed. The value is
 * the same up to the bias' rounding, rounded once instead of twice,
 * except where x went past X's range: it was clamped there before the
 * Add, and is now clamped at Y's range only; a
 * learnable affine's shift after a Conv (PP-LCNetV3, PaddleOCR v4 det
 * and rec) costs a QLinearAdd pass in ONNX Runtime otherwise.
 *
 * Left alone: a Conv without a bias, a bias not int32, or read by another
 * node; X, X_q, the Add's input or Y read by another node (or a graph
 * output); Y_q read by anything but DequantizeLinear nodes; per-channel
 * activation parameters; X_q and Y_q of different types; X's two zero
 * points different; a bias leaving
 * int32 or a scale that is not a positive normal float. *folded (may be
 * NULL) counts the Add nodes removed. On failure m may be half
 * rewritten: discard it.
 */
int qdqscale_fold_biases(struct model *m, int *folded, struct err *e);

#endif
