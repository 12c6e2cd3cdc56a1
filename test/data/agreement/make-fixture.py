#!/usr/bin/python3
"""make-fixture.py: write the fp32 model test/agreement.bats quantizes and
checks node by node against ONNX Runtime.

usage: test/data/agreement/make-fixture.py OUT.onnx

One opset-17 graph (input x, 1x4x12x12) with every op kind onnx-qdq-insert
quantizes: Conv, ConvTranspose, Gemm, MatMul, Relu, Clip, HardSwish,
Sigmoid, HardSigmoid, Add, Mul, Sub, Div, Pow, Sqrt, ReduceMean, Softmax,
AveragePool (the shapes that take each of ONNX Runtime's summation orders,
with and without padding), MaxPool, GlobalAveragePool, Resize (nearest and
linear), Pad, Concat, Reshape, Transpose, Flatten, Squeeze, Unsqueeze,
Slice, Gather, Split, BatchNormalization, InstanceNormalization and
LayerNormalization. Weights come from a fixed seed. Run with Debian's
/usr/bin/python3 (python3-onnx, numpy).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
rng = np.random.default_rng(6)
inits = []


def w(name, *shape, scale=0.3):
    inits.append(numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def c(name, a, dtype=np.float32):
    inits.append(numpy_helper.from_array(np.array(a, dtype=dtype), name))
    return name


def n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0] + "_node", **attrs)


def build():
    nodes = [
        n("Conv", ["x", w("w1", 8, 4, 3, 3), w("b1", 8)], ["c1"],
          pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("HardSwish", ["c1"], ["hs"]),
        n("Add", ["r1", "hs"], ["a"]),
        # MLAS vector kernel (stride 2 in width), as in PaddleOCR rec.
        n("AveragePool", ["a"], ["ap1"], kernel_shape=[3, 2],
          strides=[3, 2]),
        n("AveragePool", ["a"], ["ap2"], kernel_shape=[3, 3],
          pads=[1, 1, 1, 1], count_include_pad=0),
        n("AveragePool", ["a"], ["ap3"], kernel_shape=[2, 2], strides=[2, 2],
          pads=[1, 1, 1, 1], count_include_pad=1),
        # MLAS generic kernel (stride 3 in width).
        n("AveragePool", ["a"], ["ap4"], kernel_shape=[2, 3],
          strides=[2, 3]),
        # Whole-plane window: MLAS global kernel.
        n("AveragePool", ["a"], ["ap5"], kernel_shape=[12, 12]),
        n("MaxPool", ["ap2"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Resize", ["mp", "", c("sc2", [1, 1, 2, 2])], ["up"],
          mode="nearest"),
        n("Resize", ["ap1", "", c("sc3", [1, 1, 2, 2])], ["lin"],
          mode="linear"),
        n("Mul", ["up", "ap2"], ["m"]),
        n("Sigmoid", ["m"], ["sg"]),
        n("HardSigmoid", ["m"], ["hsg"]),
        n("Add", ["hsg", c("one", 1.0)], ["hsg1"]),
        n("Div", ["sg", "hsg1"], ["d"]),
        n("Pad", ["lin", c("pads", [0, 0, 2, 0, 0, 0, 2, 0], np.int64)],
          ["lp"]),
        n("Sub", ["d", "lp"], ["sb"]),
        n("Clip", ["sb", c("lo", 0.0), c("hi", 6.0)], ["cl"]),
        n("BatchNormalization", ["cl", w("bns", 8), w("bnb", 8),
          w("bnm", 8, scale=0.1), c("bnv", np.full(8, 0.5))], ["bn"]),
        n("InstanceNormalization", ["bn", w("ins", 8), w("inb", 8)],
          ["inn"]),
        n("ConvTranspose", ["inn", w("wt", 8, 4, 2, 2), w("bt", 4)], ["ct"],
          strides=[2, 2]),
        n("GlobalAveragePool", ["ct"], ["gp"]),
        n("Flatten", ["gp"], ["fl"]),
        n("Gemm", ["fl", w("wg", 4, 6), w("bg", 6)], ["gm"]),
        n("Transpose", ["ap3"], ["t"], perm=[0, 2, 3, 1]),
        n("LayerNormalization", ["t", w("lns", 8), w("lnb", 8)], ["ln"],
          axis=-1),
        n("MatMul", ["ln", w("wm", 8, 5)], ["mm"]),
        n("Softmax", ["mm"], ["sm"], axis=-1),
        n("Reshape", ["sm", c("shp", [1, 49, 5], np.int64)], ["rs"]),
        n("ReduceMean", ["rs"], ["rm"], axes=[1], keepdims=1),
        n("Squeeze", ["rm", c("ax1", [1], np.int64)], ["sq"]),
        n("Pow", ["sq", c("two", 2.0)], ["pw"]),
        n("Add", ["pw", c("eps", 1e-3)], ["pe"]),
        n("Sqrt", ["pe"], ["sr"]),
        n("Slice", ["gm", c("st", [0], np.int64), c("en", [5], np.int64),
          c("axs", [1], np.int64)], ["sl"]),
        n("Gather", ["sr", c("idx", [0, 2, 4], np.int64)], ["g"], axis=1),
        n("Split", ["sl", c("spl", [2, 3], np.int64)], ["sp1", "sp2"],
          axis=1),
        n("Concat", ["g", "sp2"], ["cat"], axis=1),
        n("Unsqueeze", ["cat", c("ax0", [0], np.int64)], ["y1"]),
        n("Mul", ["sp1", "ap5"], ["y2"]),
        n("Add", ["ap4", c("half", 0.5)], ["y3"]),
    ]
    g = helper.make_graph(
        nodes, "agreement", [helper.make_tensor_value_info(
            "x", F, [1, 4, 12, 12])],
        [helper.make_tensor_value_info("y1", F, None),
         helper.make_tensor_value_info("y2", F, None),
         helper.make_tensor_value_info("y3", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="onnxq-agreement-fixture")
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m)
    return m


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-fixture.py OUT.onnx")
    onnx.save(build(), sys.argv[1])


if __name__ == "__main__":
    main()
