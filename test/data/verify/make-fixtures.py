#!/usr/bin/python3
"""make-fixtures.py: the small models and samples test/verify2.bats
compares, written here. Needs Debian's python3-onnx and numpy (run as
/usr/bin/python3). reference.py computes, with numpy alone, every figure
onnx-verify must report for them.

  clf.onnx     fp32: x [1,16] -> MatMul W1 -> Add b1 -> Relu ("re lu/h%",
               an awkward name) -> MatMul W2 -> Add b2 -> logits [1,5];
               score = ReduceSum(h) [1,1]. opset 13.
  clf-q.onnx   the same quantized in QDQ form with ONNX Runtime's names:
               x uint8 over a range far too wide; W1 int8 per channel
               (axis 1), stored quantized (W1_quantized); b1 int32 per
               channel; a1 (read by Relu only) uint8 over [0, 10],
               Relu's range; h uint8 over a range too narrow (it clips),
               converted to uint16 (com.microsoft QuantizeLinear) for
               MatMul W2 and read by ReduceSum through a dedicated pair
               equal to the first; W2 int8 per tensor; b2 left float;
               logits (a graph output) uint8 behind its renamed producer
               logits_QuantizeLinear_Input.
  data/sN/x.npy  six samples; labels.txt one class per sample.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
H = "re lu/h%"


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def save(nodes, inputs, outputs, inits, path, extra_opsets=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    ops = [helper.make_opsetid("", 13)] + [helper.make_opsetid(d, v)
                                           for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="onnxq-fixtures")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, path))


def weights():
    rng = np.random.default_rng(11)
    w1 = rng.standard_normal((16, 12)).astype(np.float32)
    w1 *= np.linspace(0.05, 1.0, 12, dtype=np.float32)  # uneven channels
    b1 = (rng.standard_normal(12) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((12, 5)) * 0.5).astype(np.float32)
    b2 = (rng.standard_normal(5) * 0.1).astype(np.float32)
    return w1, b1, w2, b2


def qparams(lo, hi, qmin, qmax):
    """ORT's compute_scale_zp for an asymmetric range."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / (qmax - qmin))
    zp = int(np.rint(qmin - lo / scale))
    return scale, zp


def main():
    w1, b1, w2, b2 = weights()
    fp = [
        helper.make_node("MatMul", ["x", "W1"], ["mm1"], name="mm1"),
        helper.make_node("Add", ["mm1", "b1"], ["a1"], name="add1"),
        helper.make_node("Relu", ["a1"], [H], name="relu"),
        helper.make_node("MatMul", [H, "W2"], ["mm2"], name="mm2"),
        helper.make_node("Add", ["mm2", "b2"], ["logits"], name="add2"),
        helper.make_node("ReduceSum", [H], ["score"], name="sum",
                         keepdims=1),
    ]
    ins = [vi("x", [1, 16])]
    outs = [vi("logits", [1, 5]), vi("score", [1, 1])]
    save(fp, ins, outs, [init("W1", w1), init("b1", b1), init("W2", w2),
                         init("b2", b2)], "clf.onnx")

    # Quantization parameters.
    sx, zx = qparams(-20.0, 20.0, 0, 255)          # far too wide
    sw1 = (np.abs(w1).max(axis=0) / 127).astype(np.float32)
    w1q = np.clip(np.rint(w1 / sw1), -127, 127).astype(np.int8)
    sb1 = (sx * sw1).astype(np.float32)
    b1q = np.rint(b1 / sb1).astype(np.int32)
    sh, zh = qparams(0.0, 12.0, 0, 255)            # too narrow: clips
    sh16, zh16 = qparams(0.0, 12.0, 0, 65535)
    sw2 = np.float32(np.abs(w2).max() / 127)
    w2q = np.clip(np.rint(w2 / sw2), -127, 127).astype(np.int8)
    sl, zl = qparams(-8.0, 16.0, 0, 255)

    def q(x, s, z, dt=TensorProto.UINT8, dom=""):
        return [init(x + "_scale", np.float32(s)),
                helper.make_tensor(x + "_zero_point", dt, [], [z])]

    inits = [init("W1_quantized", w1q), init("W1_scale", sw1),
             init("W1_zero_point", np.zeros(12, np.int8)),
             init("b1_quantized", b1q), init("b1_scale", sb1),
             init("b1_zero_point", np.zeros(12, np.int32)),
             init("W2_quantized", w2q), init("W2_scale", sw2),
             init("W2_zero_point", np.int8(0)),
             init("b2", b2)]
    inits += q("x", sx, zx) + q("h", sh, zh) + q("logits", sl, zl)
    inits += q("a1", *qparams(0.0, 10.0, 0, 255))
    inits += [init("h16_scale", np.float32(sh16)),
              helper.make_tensor("h16_zero_point", TensorProto.UINT16, [],
                                 [zh16])]

    def Q(x, y, p, dom="", name=None):
        return helper.make_node("QuantizeLinear", [x, p + "_scale",
                                p + "_zero_point"], [y], domain=dom,
                                name=name or y)

    def DQ(x, y, p, dom="", name=None, **kw):
        return helper.make_node("DequantizeLinear", [x, p + "_scale",
                                p + "_zero_point"], [y], domain=dom,
                                name=name or y, **kw)

    qn = [
        Q("x", "x_QuantizeLinear_Output", "x"),
        DQ("x_QuantizeLinear_Output", "x_DequantizeLinear_Output", "x"),
        DQ("W1_quantized", "W1_DequantizeLinear_Output", "W1", axis=1),
        DQ("b1_quantized", "b1_DequantizeLinear_Output", "b1", axis=0),
        helper.make_node("MatMul", ["x_DequantizeLinear_Output",
                                    "W1_DequantizeLinear_Output"], ["mm1"],
                         name="mm1"),
        helper.make_node("Add", ["mm1", "b1_DequantizeLinear_Output"],
                         ["a1"], name="add1"),
        # Only Relu reads a1: quantized over Relu's range, as ORT does.
        Q("a1", "a1_QuantizeLinear_Output", "a1"),
        DQ("a1_QuantizeLinear_Output", "a1_DequantizeLinear_Output", "a1"),
        helper.make_node("Relu", ["a1_DequantizeLinear_Output"], [H],
                         name="relu"),
        Q(H, "h_QuantizeLinear_Output", "h"),
        DQ("h_QuantizeLinear_Output", "h_DequantizeLinear_Output", "h"),
        # Converted to uint16 for mm2.
        Q("h_DequantizeLinear_Output", "h_convert_QuantizeLinear_Output",
          "h16", dom="com.microsoft"),
        DQ("h_convert_QuantizeLinear_Output",
           "h_convert_DequantizeLinear_Output", "h16", dom="com.microsoft"),
        # A dedicated pair equal to the first, for ReduceSum.
        Q(H, "h_QuantizeLinear_Output_1", "h"),
        DQ("h_QuantizeLinear_Output_1", "h_DequantizeLinear_Output_1", "h"),
        DQ("W2_quantized", "W2_DequantizeLinear_Output", "W2"),
        helper.make_node("MatMul", ["h_convert_DequantizeLinear_Output",
                                    "W2_DequantizeLinear_Output"], ["mm2"],
                         name="mm2"),
        helper.make_node("Add", ["mm2", "b2"],
                         ["logits_QuantizeLinear_Input"], name="add2"),
        Q("logits_QuantizeLinear_Input", "logits_QuantizeLinear_Output",
          "logits"),
        DQ("logits_QuantizeLinear_Output", "logits", "logits",
           name="logits_DequantizeLinear"),
        helper.make_node("ReduceSum", ["h_DequantizeLinear_Output_1"],
                         ["score"], name="sum", keepdims=1),
    ]
    save(qn, ins, outs, inits, "clf-q.onnx", [("com.microsoft", 1)])

    rng = np.random.default_rng(5)
    labels = []
    for s in range(6):
        d = os.path.join(HERE, "data", "s%d" % s)
        os.makedirs(d, exist_ok=True)
        x = (rng.standard_normal((1, 16)) * (1 + s / 3)).astype(np.float32)
        np.save(os.path.join(d, "x.npy"), x)
        labels.append(int(rng.integers(0, 5)))
    with open(os.path.join(HERE, "labels.txt"), "w") as f:
        f.write("# one class per sample, s0 to s5\n")
        for v in labels:
            f.write("%d\n" % v)


if __name__ == "__main__":
    main()
