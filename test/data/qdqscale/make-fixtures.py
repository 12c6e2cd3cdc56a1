#!/usr/bin/python3
"""make-fixtures.py: the model of test/unit/qdqscale_test.c. Run with
Debian's /usr/bin/python3 (onnx, numpy):
    /usr/bin/python3 make-fixtures.py [DIR]

scale.onnx: x (1x4) -> Div by 6 -> d -> Mul by 0.5 (K) -> k -> Add x -> y;
x -> Div by 4 -> z (a graph output); x -> Mul by -2 (N) -> n -> Add x ->
w (a negative constant: left alone).

bias.onnx: x (1x2x3x3) -> Conv (W 3x2x1x1, B) -> c -> Mul by 0.5 (K) -> m
-> Add 0.25 (A) -> y: the Add folds into B; x -> Conv (W, B2) -> c2 -> Add
0.1 (A2) -> y2 and c2 -> Relu -> r: c2 read twice, left alone.

resize.onnx (qdqresize_test.c, resize-expand.bats): x (1x2xHxW, H and W
free) -> Conv -> c -> Resize nearest (asymmetric, floor) by 2 and 3 -> u
-> Conv -> y; c -> Resize by 2 and 2 with half_pixel -> v (left alone).

resize-modes.onnx (qdqresize_test.c, resize-expand.bats): x (1x2xHxW)
-> Conv -> c -> eight nearest Resize nodes, each -> Conv -> its output
(MODES below: name, coordinate rule, rounding, factors, and whether
output pixel i reads input pixel i // factor, so that the rewrite holds).

scale-inputs.onnx, bias-inputs.onnx, resize-inputs.onnx (overridable.bats,
the unit tests): some initializers also listed as graph inputs, defaults a
caller may override, so no constants to fold: K and four in scale.onnx, A
in bias.onnx; in resize-inputs.onnx, resize.onnx's scales S23, and c ->
Resize (roi R4, scales S22, asymmetric, floor) -> u4 -> Conv -> y4 added,
its roi R4 such an input (unread once rewritten: it stays).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# make check writes into $(BUILD)/test/fixtures (no binaries in the tree).
HERE = sys.argv[1] if len(sys.argv) > 1 else \
    os.path.dirname(os.path.abspath(__file__))
os.makedirs(HERE, exist_ok=True)


def finish(g):
    """Graph g as a checked opset-13 model."""
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="onnxq-fixtures")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def scale():
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    c = {n: numpy_helper.from_array(np.array(v, np.float32), n)
         for n, v in [("six", 6.0), ("K", [0.5]), ("four", 4.0),
                      ("N", -2.0)]}
    nodes = [
        helper.make_node("Div", ["x", "six"], ["d"], name="div6"),
        helper.make_node("Mul", ["K", "d"], ["k"], name="mulK"),
        helper.make_node("Add", ["k", "x"], ["y"], name="add"),
        helper.make_node("Div", ["x", "four"], ["z"], name="div4"),
        helper.make_node("Mul", ["x", "N"], ["n"], name="mulN"),
        helper.make_node("Add", ["n", "x"], ["w"], name="addN"),
    ]
    g = helper.make_graph(nodes, "scale", [vi("x", f, [1, 4])],
                          [vi("y", f, [1, 4]), vi("z", f, [1, 4]),
                           vi("w", f, [1, 4])], list(c.values()))
    return finish(g)


def bias():
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    w = np.array([1, -2, 3, 0.5, -1, 2], np.float32).reshape(3, 2, 1, 1)
    c = {n: numpy_helper.from_array(np.array(v, np.float32), n)
         for n, v in [("K", [0.5]), ("A", [0.25]), ("A2", 0.1),
                      ("B", [0.1, -0.2, 0.3]), ("B2", [0.0, 0.1, 0.2])]}
    c["W"] = numpy_helper.from_array(w * 0.3, "W")
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv"),
        helper.make_node("Mul", ["c", "K"], ["m"], name="mulK"),
        helper.make_node("Add", ["m", "A"], ["y"], name="addA"),
        helper.make_node("Conv", ["x", "W", "B2"], ["c2"], name="conv2"),
        helper.make_node("Add", ["A2", "c2"], ["y2"], name="addA2"),
        helper.make_node("Relu", ["c2"], ["r"], name="relu"),
    ]
    out = [vi(n, f, [1, 3, 3, 3]) for n in ("y", "y2", "r")]
    g = helper.make_graph(nodes, "bias", [vi("x", f, [1, 2, 3, 3])], out,
                          list(c.values()))
    return finish(g)


def with_inputs(m, names):
    """Model m with its initializers `names` also listed as inputs."""
    g = m.graph
    for t in g.initializer:
        if t.name in names:
            g.input.append(helper.make_tensor_value_info(
                t.name, t.data_type, list(t.dims)))
    onnx.checker.check_model(m)
    return m


def resize_inputs():
    """resize() with a second rewritable Resize; some inputs overridable."""
    f = TensorProto.FLOAT
    m = resize()
    g = m.graph
    # a roi of rank 4's length: ORT's NHWC layout gathers it (asymmetric
    # ignores it)
    g.initializer.append(numpy_helper.from_array(
        np.array([0] * 4 + [1] * 4, np.float32), "R4"))
    g.node.extend([
        helper.make_node("Resize", ["c", "R4", "S22"], ["u4"], name="up4",
                         mode="nearest", nearest_mode="floor",
                         coordinate_transformation_mode="asymmetric"),
        helper.make_node("Conv", ["u4", "W2", "B2"], ["y4"], name="conv4"),
    ])
    g.output.append(helper.make_tensor_value_info("y4", f,
                                                  [1, 3, None, None]))
    return with_inputs(m, {"S23", "R4"})


# name, coordinate_transformation_mode, nearest_mode (None: the
# defaults), H and W factors, rewritten
MODES = [
    ("hp_rpf", None, None, 2, 3, True),
    ("hp_rpc", "half_pixel", "round_prefer_ceil", 3, 2, True),
    ("pt_rpf", "pytorch_half_pixel", "round_prefer_floor", 2, 4, True),
    ("as_rpf2", "asymmetric", "round_prefer_floor", 2, 1, True),
    ("as_rpf3", "asymmetric", "round_prefer_floor", 3, 3, False),
    ("hp_floor", "half_pixel", "floor", 2, 2, False),
    ("hp_ceil", "half_pixel", "ceil", 1, 2, False),
    ("as_ceil", "asymmetric", "ceil", 2, 2, False),
]


def resize_modes():
    """c resized by each of MODES, each read by a Conv."""
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    rng = np.random.default_rng(11)
    c = {n: numpy_helper.from_array(np.array(v, np.float32), n)
         for n, v in [("roi", []), ("W1", rng.normal(0, 0.5, (4, 2, 3, 3))),
                      ("W2", rng.normal(0, 0.5, (3, 4, 1, 1))),
                      ("B1", [0.1, -0.2, 0.3, 0.0]), ("B2", [0, 0.1, 0.2])]}
    nodes = [helper.make_node("Conv", ["x", "W1", "B1"], ["c"],
                              pads=[1] * 4, name="conv1")]
    outs = []
    for name, ctm, nm, fh, fw, _ in MODES:
        sc = numpy_helper.from_array(np.array([1, 1, fh, fw], np.float32),
                                     "S_" + name)
        c[sc.name] = sc
        at = {"mode": "nearest"}
        if ctm:
            at.update(coordinate_transformation_mode=ctm, nearest_mode=nm)
        nodes += [
            helper.make_node("Resize", ["c", "roi", sc.name], ["u_" + name],
                             name=name, **at),
            helper.make_node("Conv", ["u_" + name, "W2", "B2"],
                             ["y_" + name], name="conv_" + name),
        ]
        outs.append(vi("y_" + name, f, [1, 3, None, None]))
    g = helper.make_graph(nodes, "resize_modes",
                          [vi("x", f, [1, 2, "h", "w"])], outs,
                          list(c.values()))
    return finish(g)


def resize():
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    rng = np.random.default_rng(7)
    c = {n: numpy_helper.from_array(np.array(v, np.float32), n)
         for n, v in [("roi", []), ("S23", [1, 1, 2, 3]),
                      ("S22", [1, 1, 2, 2]),
                      ("W1", rng.normal(0, 0.5, (4, 2, 3, 3))),
                      ("W2", rng.normal(0, 0.5, (3, 4, 1, 1))),
                      ("B1", [0.1, -0.2, 0.3, 0.0]), ("B2", [0, 0.1, 0.2])]}
    near = dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor")
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c"], pads=[1] * 4,
                         name="conv1"),
        helper.make_node("Resize", ["c", "roi", "S23"], ["u"], name="up",
                         **near),
        helper.make_node("Conv", ["u", "W2", "B2"], ["y"], name="conv2"),
        helper.make_node("Resize", ["c", "roi", "S22"], ["v"], name="half",
                         mode="nearest", nearest_mode="floor"),
    ]
    g = helper.make_graph(nodes, "resize",
                          [vi("x", f, [1, 2, "h", "w"])],
                          [vi("y", f, [1, 3, None, None]),
                           vi("v", f, [1, 4, None, None])],
                          list(c.values()))
    return finish(g)


onnx.save(scale(), os.path.join(HERE, "scale.onnx"))
onnx.save(resize(), os.path.join(HERE, "resize.onnx"))
onnx.save(bias(), os.path.join(HERE, "bias.onnx"))
onnx.save(with_inputs(scale(), {"K", "four"}),
          os.path.join(HERE, "scale-inputs.onnx"))
onnx.save(with_inputs(bias(), {"A"}), os.path.join(HERE, "bias-inputs.onnx"))
onnx.save(resize_inputs(), os.path.join(HERE, "resize-inputs.onnx"))
onnx.save(resize_modes(), os.path.join(HERE, "resize-modes.onnx"))
