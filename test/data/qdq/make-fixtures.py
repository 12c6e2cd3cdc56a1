#!/usr/bin/python3
"""make-fixtures.py: the small models test/qdq.bats quantizes. Needs
Debian's python3-onnx and numpy (run as /usr/bin/python3).

    make-fixtures.py                      write the committed models here
    make-fixtures.py samples MODEL DIR N SEED
                                          N random samples for MODEL's
                                          inputs in DIR/sK/NAME.npy
    make-fixtures.py pr22020-samples DIR  the PR 22020 Conv's calibration
                                          (constant 0, 6.375, 12.75) and
                                          DIR/eval (constant 6.375)
    make-fixtures.py opset21 IN OUT       IN claiming opset 21 (no checker:
                                          onnx 1.12 knows up to 17)
    make-fixtures.py wide OUT             a MatMul with a 64x64 weight
                                          (the others are too small for
                                          external data)
    make-fixtures.py external IN OUT      IN saved with external data
    make-fixtures.py show MODEL           check MODEL with onnx.checker
                                          (full check, opset <= 17) and
                                          list it for grep: "opset D V",
                                          "ir V", "init NAME TYPE SHAPE",
                                          "node OP DOMAIN IN,.. OUT,..
                                          [attr=v ..]", "output NAME"

Models (all float32):
  conv.onnx      ORT PR 22020's Conv: weight 2x2x2x2 of +-1e-7, bias
                 [5, -4.5] (opset 13)
  ops.onnx       Conv, Relu, MaxPool, Mul by a constant, Add, Sigmoid,
                 GlobalAveragePool, Transpose, Reshape, MatMul, Gemm,
                 Concat, Softmax; graph outputs read by other nodes and
                 not read at all (opset 13)
  ops2.onnx      ConvTranspose, Conv + BatchNormalization (folded),
                 HardSigmoid, AveragePool, Resize, Split, Abs, Add, Div,
                 Sub, Pow, Gather, InstanceNormalization,
                 LayerNormalization (opset 17)
  opset9.onnx    Clip, Slice, Squeeze, Unsqueeze, Pad with attributes,
                 Softmax on a middle axis and on the last one, ReduceMean,
                 Conv (opset 9: raising to 13 rewrites them)
  rewrite9.onnx  Split, ReduceSum, TopK, Dropout with attributes,
                 LogSoftmax and Hardmax on a middle axis (opset 9; the
                 other rewrites of raising to 13)
  upsample9.onnx Upsample (deprecated at 10: cannot be raised)
  convert.onnx   the five cases of mixed-precision conversion (opset 13)
  subgraph.onnx  an If whose branches read a tensor of the main graph
  collide.onnx   tensors already named x_DequantizeLinear_Output and
                 x_scale
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def model(nodes, inputs, outputs, inits, opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="onnxq-fixtures")
    m.ir_version = 7 if opset >= 12 else 4
    onnx.checker.check_model(m)
    return m


def conv():
    w = np.full((2, 2, 2, 2), 1e-7, dtype=np.float32)
    w.reshape(-1)[0::2] *= -1
    b = np.array([5.0, -4.5], dtype=np.float32)
    n = helper.make_node("Conv", ["input_0", "weight", "bias"], ["output_0"],
                         name="Conv0")
    return model([n], [vi("input_0", [1, 2, 4, 4])],
                 [vi("output_0", [1, 2, 3, 3])],
                 [init("weight", w), init("bias", b)])


def ops():
    r = np.random.RandomState(1)
    f32 = np.float32
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Mul", ["p1", "K"], ["m1"], name="mul1"),
        helper.make_node("Add", ["p1", "m1"], ["a1"], name="add1"),
        helper.make_node("Sigmoid", ["a1"], ["s1"], name="sig1"),
        helper.make_node("GlobalAveragePool", ["s1"], ["pool"], name="gap"),
        helper.make_node("Transpose", ["a1"], ["t1"], name="tr1",
                         perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["t1", "shape"], ["feat"], name="rs1"),
        helper.make_node("MatMul", ["feat", "Wm"], ["mm"], name="matmul1"),
        helper.make_node("Gemm", ["feat", "Wg", "Cg"], ["ge"], name="gemm1",
                         transB=1),
        helper.make_node("Concat", ["mm", "ge"], ["cc"], name="cat1", axis=1),
        helper.make_node("Softmax", ["cc"], ["prob"], name="softmax1",
                         axis=-1),
    ]
    inits = [
        init("W1", (r.randn(4, 3, 3, 3) * 0.3).astype(f32)),
        init("B1", (r.randn(4) * 0.1).astype(f32)),
        init("K", (r.rand(1, 4, 1, 1) + 0.5).astype(f32)),
        init("shape", np.array([1, 64], dtype=np.int64)),
        init("Wm", (r.randn(64, 10) * 0.2).astype(f32)),
        init("Wg", (r.randn(8, 64) * 0.2).astype(f32)),
        init("Cg", (r.randn(8) * 0.1).astype(f32)),
    ]
    return model(nodes, [vi("x", [1, 3, 8, 8])],
                 [vi("prob", [1, 18]), vi("feat", [1, 64]),
                  vi("pool", [1, 4, 1, 1])], inits)


def ops2():
    r = np.random.RandomState(4)
    f32 = np.float32
    un = helper.make_node
    nodes = [
        un("ConvTranspose", ["x", "Wt", "Bt"], ["ct"], name="convt",
           strides=[2, 2]),
        un("Conv", ["ct", "Wc"], ["cv"], name="conv", pads=[1, 1, 1, 1]),
        un("BatchNormalization", ["cv", "bn_s", "bn_b", "bn_m", "bn_v"],
           ["bn"], name="bn"),
        un("HardSigmoid", ["bn"], ["hs"], name="hsig"),
        un("AveragePool", ["hs"], ["ap"], name="apool", kernel_shape=[2, 2],
           strides=[2, 2]),
        un("Resize", ["ap", "", "scales"], ["rs"], name="resize",
           mode="nearest"),
        un("Split", ["rs", "split"], ["sp1", "sp2"], name="split", axis=1),
        un("Abs", ["sp2"], ["ab"], name="abs"),
        un("Add", ["ab", "one"], ["ad"], name="add"),
        un("Div", ["sp1", "ad"], ["dv"], name="div"),
        un("Sub", ["dv", "sp1"], ["sb"], name="sub"),
        un("Pow", ["sb", "two"], ["pw"], name="pow"),
        un("Gather", ["pw", "idx"], ["g"], name="gather", axis=3),
        un("InstanceNormalization", ["pw", "in_s", "in_b"], ["inorm"],
           name="inorm"),
        un("LayerNormalization", ["inorm", "ln_g", "ln_b"], ["ln"],
           name="lnorm", axis=-1),
    ]
    inits = [
        init("Wt", (r.randn(2, 3, 2, 2) * 0.5).astype(f32)),
        init("Bt", (r.randn(3) * 0.1).astype(f32)),
        init("Wc", (r.randn(4, 3, 3, 3) * 0.3).astype(f32)),
        init("bn_s", (r.rand(4) + 0.5).astype(f32)),
        init("bn_b", (r.randn(4) * 0.1).astype(f32)),
        init("bn_m", (r.randn(4) * 0.1).astype(f32)),
        init("bn_v", (r.rand(4) + 0.5).astype(f32)),
        init("scales", np.array([1, 1, 2, 2], dtype=f32)),
        init("split", np.array([2, 2], dtype=np.int64)),
        init("one", np.array(1.0, dtype=f32)),
        init("two", np.array(2.0, dtype=f32)),
        init("idx", np.array([0, 2], dtype=np.int64)),
        init("in_s", (r.rand(2) + 0.5).astype(f32)),
        init("in_b", (r.randn(2) * 0.1).astype(f32)),
        init("ln_g", (r.rand(12) + 0.5).astype(f32)),
        init("ln_b", (r.randn(12) * 0.1).astype(f32)),
    ]
    return model(nodes, [vi("x", [1, 2, 6, 6])],
                 [vi("g", [1, 2, 12, 2]), vi("ln", [1, 2, 12, 12])], inits,
                 opset=17)


def opset9():
    r = np.random.RandomState(2)
    nodes = [
        helper.make_node("Clip", ["x"], ["cl"], name="clip", min=0.0,
                         max=6.0),
        helper.make_node("Slice", ["cl"], ["sl"], name="slice", starts=[1],
                         ends=[5], axes=[2]),
        helper.make_node("ReduceMean", ["sl"], ["rm"], name="mean",
                         axes=[-1], keepdims=1),
        helper.make_node("Squeeze", ["rm"], ["sq"], name="squeeze",
                         axes=[3]),
        helper.make_node("Softmax", ["sq"], ["sm"], name="softmax_mid",
                         axis=1),
        helper.make_node("Unsqueeze", ["sm"], ["us"], name="unsqueeze",
                         axes=[1]),
        helper.make_node("Conv", ["us", "W", "B"], ["y"], name="conv"),
        helper.make_node("Softmax", ["sl"], ["z"], name="softmax_last",
                         axis=3),
        helper.make_node("Pad", ["cl"], ["pd"], name="pad",
                         pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.5),
        helper.make_node("Relu", ["pd"], ["pr"], name="relu"),
    ]
    inits = [init("W", (r.randn(3, 1, 1, 1)).astype(np.float32)),
             init("B", (r.randn(3) * 0.1).astype(np.float32))]
    return model(nodes, [vi("x", [1, 4, 6, 8])],
                 [vi("y", [1, 3, 4, 4]), vi("z", [1, 4, 4, 8]),
                  vi("pr", [1, 4, 8, 10])], inits, opset=9)


def rewrite9():
    un = helper.make_node
    nodes = [
        un("Split", ["x"], ["s1", "s2"], name="split", axis=1, split=[1, 3]),
        un("ReduceSum", ["s2"], ["rs"], name="rsum", axes=[1], keepdims=1),
        un("Add", ["s1", "rs"], ["a"], name="add"),
        un("TopK", ["a"], ["tv", "ti"], name="topk", axis=3, k=3),
        un("Dropout", ["tv"], ["d"], name="drop", ratio=0.3),
        un("LogSoftmax", ["d"], ["ls"], name="logsoftmax", axis=2),
        un("Hardmax", ["x"], ["hm"], name="hardmax", axis=1),
    ]
    return model(nodes, [vi("x", [1, 4, 6, 8])],
                 [vi("ls", [1, 1, 6, 3]), vi("hm", [1, 4, 6, 8])], [],
                 opset=9)


def upsample9():
    nodes = [helper.make_node("Upsample", ["x", "scales"], ["u"],
                              name="up", mode="nearest"),
             helper.make_node("Relu", ["u"], ["y"], name="relu")]
    return model(nodes, [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 6, 6])],
                 [init("scales", np.array([1, 1, 2, 2], dtype=np.float32))],
                 opset=9)


def convert():
    un = helper.make_node
    nodes = [
        un("Relu", ["x"], ["t1"], name="relu1"),
        un("Sigmoid", ["t1"], ["out1"], name="sig1"),
        un("Neg", ["x"], ["t2"], name="neg2"),
        un("Abs", ["t2"], ["out2a"], name="abs2"),
        un("Sigmoid", ["t2"], ["out2b"], name="sig2"),
        un("Tanh", ["x"], ["t3"], name="tanh3"),
        un("Abs", ["t3"], ["out3"], name="abs3"),
        un("Sin", ["x"], ["t4"], name="sin4"),
        un("Neg", ["t4"], ["out4a"], name="neg4"),
        un("Relu", ["t4"], ["out4b"], name="relu4"),
        un("Sigmoid", ["x"], ["t5"], name="sig5"),
    ]
    outs = ["out1", "out2a", "out2b", "t3", "out3", "t4", "out4a", "out4b",
            "t5"]
    return model(nodes, [vi("x", [1, 8])], [vi(o, [1, 8]) for o in outs], [])


def subgraph():
    un = helper.make_node
    then_g = helper.make_graph([un("Relu", ["a"], ["tr"])], "then", [],
                               [vi("tr", [1, 4])])
    else_g = helper.make_graph([un("Neg", ["a"], ["er"])], "else", [],
                               [vi("er", [1, 4])])
    nodes = [
        un("Sigmoid", ["x"], ["a"], name="sig"),
        un("Abs", ["a"], ["b"], name="abs"),
        un("If", ["cond"], ["c"], name="if", then_branch=then_g,
           else_branch=else_g),
        un("Add", ["b", "c"], ["y"], name="add"),
    ]
    return model(nodes, [vi("x", [1, 4]), vi("cond", [], TensorProto.BOOL)],
                 [vi("y", [1, 4])], [])


def wide():
    r = np.random.RandomState(3)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")]
    return model(nodes, [vi("x", [1, 64])], [vi("y", [1, 64])],
                 [init("W", (r.randn(64, 64) * 0.1).astype(np.float32))])


def collide():
    un = helper.make_node
    nodes = [un("Relu", ["x"], ["x_DequantizeLinear_Output"], name="relu"),
             un("Mul", ["x_DequantizeLinear_Output", "x_scale"], ["m"],
                name="mul"),
             un("Add", ["x", "m"], ["y"], name="add")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])],
                 [init("x_scale", np.full((1, 4), 0.5, dtype=np.float32))])


def save(m, name, out_dir=HERE):
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(m.SerializeToString())


def write_npy(path, a):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, a)


def samples(model_path, out, n, seed):
    m = onnx.load(model_path)
    r = np.random.RandomState(seed)
    inits = {i.name for i in m.graph.initializer}
    for k in range(n):
        for i in m.graph.input:
            if i.name in inits:
                continue
            t = i.type.tensor_type
            shape = [d.dim_value for d in t.shape.dim]
            if t.elem_type == TensorProto.BOOL:
                a = np.array(k % 2 == 0)
            else:
                a = (r.randn(*shape) * 2).astype(np.float32)
            write_npy(os.path.join(out, "s%d" % k, i.name + ".npy"), a)


def pr22020_samples(out):
    for k, v in enumerate([0.0, 6.375, 12.75]):
        write_npy(os.path.join(out, "calib", "s%d" % k, "input_0.npy"),
                  np.full((1, 2, 4, 4), v, dtype=np.float32))
    write_npy(os.path.join(out, "eval", "s0", "input_0.npy"),
              np.full((1, 2, 4, 4), 6.375, dtype=np.float32))


def show(path):
    m = onnx.load(path, load_external_data=False)
    ver = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
              or [0])
    if ver <= onnx.defs.onnx_opset_version():
        onnx.checker.check_model(path, full_check=True)
        print("checker ok")
    for o in m.opset_import:
        print("opset %s %d" % (o.domain or "onnx", o.version))
    print("ir %d" % m.ir_version)
    names = {21: "UINT4", 22: "INT4"}    # not in onnx 1.12
    for i in m.graph.initializer:
        t = names.get(i.data_type) or TensorProto.DataType.Name(i.data_type)
        print("init %s %s %s" % (i.name, t,
                                 "x".join(map(str, i.dims)) or "scalar"))
    for n in m.graph.node:
        attrs = " ".join("%s=%s" % (a.name, helper.get_attribute_value(a))
                         for a in n.attribute if a.type != a.GRAPH)
        print(("node %s %s %s %s %s" % (n.op_type, n.domain or "onnx",
               ",".join(n.input), ",".join(n.output), attrs)).rstrip())
    for o in m.graph.output:
        print("output %s" % o.name)


def main():
    a = sys.argv[1:]
    if not a:
        for name, fn in [("conv", conv), ("ops", ops), ("ops2", ops2),
                         ("opset9", opset9),
                         ("rewrite9", rewrite9), ("upsample9", upsample9),
                         ("convert", convert),
                         ("subgraph", subgraph), ("collide", collide)]:
            save(fn(), name + ".onnx")
    elif a[0] == "samples" and len(a) == 5:
        samples(a[1], a[2], int(a[3]), int(a[4]))
    elif a[0] == "pr22020-samples" and len(a) == 2:
        pr22020_samples(a[1])
    elif a[0] == "opset21" and len(a) == 3:
        m = onnx.load(a[1])
        m.opset_import[0].version = 21
        m.ir_version = 10
        onnx.save(m, a[2])
    elif a[0] == "wide" and len(a) == 2:
        save(wide(), a[1], ".")
    elif a[0] == "show" and len(a) == 2:
        show(a[1])
    elif a[0] == "external" and len(a) == 3:
        m = onnx.load(a[1])
        onnx.save(m, a[2], save_as_external_data=True,
                  all_tensors_to_one_file=True,
                  location=os.path.basename(a[2]) + ".data",
                  size_threshold=64)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
