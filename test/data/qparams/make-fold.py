#!/usr/bin/python3
"""make-fold.py DIR: a Conv -> Relu -> Conv -> Clip(0, 6) -> Conv model
(DIR/fold.onnx, opset 13) and its samples (DIR/calib: 4, DIR/eval: 2, in
the npy layout of onnx-verify(1)), for test/qparams.bats: onnx-qparams
folds the Relu and the Clip, onnx-qdq-insert removes them."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    r = np.random.RandomState(7)

    def init(name, a):
        return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)

    inits = [
        init("W1", r.randn(4, 3, 3, 3) * 0.5), init("B1", r.randn(4) * 0.1),
        init("W2", r.randn(4, 4, 1, 1) * 0.8), init("B2", r.randn(4) * 0.1),
        init("lo", 0.0), init("hi", 6.0),
        init("W3", r.randn(2, 4, 1, 1) * 0.5), init("B3", r.randn(2) * 0.1),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], name="conv2"),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"], name="clip1"),
        helper.make_node("Conv", ["r2", "W3", "B3"], ["y"], name="conv3"),
    ]
    g = helper.make_graph(
        nodes, "fold",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    os.makedirs(out, exist_ok=True)
    onnx.save(m, os.path.join(out, "fold.onnx"))
    for d, n in (("calib", 4), ("eval", 2)):
        for k in range(n):
            s = os.path.join(out, d, "s%d" % k)
            os.makedirs(s, exist_ok=True)
            np.save(os.path.join(s, "x.npy"),
                    (r.randn(1, 3, 8, 8) * 2).astype(np.float32))


main()
