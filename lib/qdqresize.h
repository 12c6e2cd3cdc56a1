/*
 * qdqresize: nearest-neighbour upsampling by whole factors in a QDQ model
 * rewritten as data movement that ONNX Runtime runs fast on its quantized
 * NHWC tensors (onnx-qdq-insert --resize-expand).
 *
 * In a model qdq_apply() wrote, each
 *
 *   X_q -> DequantizeLinear(s, z) -> Resize(scales 1, 1, a, b) -> Y
 *       -> QuantizeLinear(s, z)
 *
 * with mode nearest and whole factors a, b >= 1 under which output pixel
 * i reads input pixel floor(i / a) (coordinate_transformation_mode
 * asymmetric with nearest_mode floor, what PaddlePaddle's nearest_interp
 * exports, or round_prefer_floor by 2; half_pixel or pytorch_half_pixel
 * with round_prefer_floor or round_prefer_ceil, by any factor; any of
 * these by 1), and the same scale and zero point on both sides, becomes
 *
 *   Transpose(0, 2, 3, 1) -> Unsqueeze(axes 2, 4) -> Expand(1, 1, a, 1,
 *   b, 1) -> Reshape(Shape of the Transpose's output * (1, a, b, 1))
 *   -> Transpose(0, 3, 1, 2) -> Y
 *
 * each step between a QuantizeLinear and a DequantizeLinear of X's
 * parameters: the same values, for any input size. ONNX Runtime runs the
 * quantized Resize on the NHWC layout it gives quantized Convs, where its
 * nearest kernel maps each output element on its own (on PaddleOCR v4
 * det, about 8 ms a page, one thread); there its first Transpose cancels
 * the layout's, and Expand copies whole pixels. The Reshape's output gets
 * a value_info of rank 4 (float, sizes unknown): ONNX Runtime infers no
 * rank for a computed shape and then keeps the Convs after it out of
 * its NHWC layout.
 *
 * Left alone: Resize nodes of another mode or coordinate rule, with sizes,
 * a non-constant or non-whole scale (an initializer also listed as a
 * graph input is no constant: a default the caller may override; such a
 * roi stays when unread), a rank other than 4, an input not
 * read through a per-tensor DequantizeLinear with a zero point (and no
 * output_dtype), an output read by anything but one QuantizeLinear of
 * the same parameters (or a graph output), and every Resize of a model
 * below opset 13 (its Unsqueeze takes axes as an attribute).
 */
#ifndef ONNXQ_QDQRESIZE_H
#define ONNXQ_QDQRESIZE_H

#include "err.h"
#include "model.h"

/*
 * Rewrite every such Resize of m in place; *rewritten (may be NULL)
 * counts them. The new nodes go at the end of the graph: the caller
 * sorts the nodes (qdq_apply() does). On failure m may be half
 * rewritten: discard it.
 */
int qdqresize_expand(struct model *m, int *rewritten, struct err *e);

#endif
