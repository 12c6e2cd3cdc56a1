#!/usr/bin/python3
"""The Conv of ORT PR #22020 run as a QDQ model in numpy, with the
quantization parameters onnx-qparams wrote for test/data/qparams/
pr22020.stream (read from stdin).

usage: onnx-qparams [options] pr22020.stream | qparams_pr_example.py

Input 1x2x4x4 constant 6.375 (the middle calibration batch), weight
2x2x2x2 alternating -1e-7, +1e-7, bias [5, -4.5]: the float output is 5
and -4.5 everywhere. The QDQ model quantizes and dequantizes the input,
the weight and the int32 bias (ORT: round(bias / scale) in float64,
clipped to int32), runs the Conv in float32, and quantizes and
dequantizes the output. Prints "output0=X snr=Y" (Y in dB).
"""
import sys

import numpy as np

TYPES = {"uint8": (0, 255), "int8": (-128, 127), "uint16": (0, 65535),
         "int16": (-32768, 32767), "int32": (-2**31, 2**31 - 1)}


def read_qparams(lines):
    q = {}
    for line in lines:
        f = line.rstrip("\n").split("\t")
        if f[0] != "qparam":
            continue
        kv = dict(x.split("=", 1) for x in f[2:])
        scale = np.array([np.float32(s) for s in kv["scale"].split(",")],
                         dtype=np.float32)
        zp = np.array([int(z) for z in kv["zp"].split(",")])
        q[f[1]] = (kv["type"], scale, zp, int(kv.get("axis", -1)))
    return q


def qdq(x, qp, axis_len=None):
    """QuantizeLinear then DequantizeLinear, per tensor or along axis 0."""
    typ, scale, zp, axis = qp
    lo, hi = TYPES[typ]
    if axis >= 0:
        shape = [1] * x.ndim
        shape[axis] = -1
        scale = scale.reshape(shape)
        zp = zp.reshape(shape)
    else:
        scale = scale[0]
        zp = zp[0]
    if typ == "int32":
        # ORT's bias quantization: float64 division, round, clip.
        q = np.clip(np.round(x.astype(np.float64) / scale.astype(np.float64)),
                    lo, hi)
        return (q * scale).astype(np.float32)
    q = np.clip(np.round(x / np.float32(scale)) + zp, lo, hi)
    return ((q - zp) * scale).astype(np.float32)


def conv(x, w, b):
    out = np.zeros((2, 3, 3), dtype=np.float32)
    for o in range(2):
        for h in range(3):
            for v in range(3):
                out[o, h, v] = np.float32(
                    np.sum(x[:, h:h + 2, v:v + 2] * w[o], dtype=np.float32)
                    + b[o])
    return out


def main():
    q = read_qparams(sys.stdin)
    w = np.full((2, 2, 2, 2), 1e-7, dtype=np.float32)
    w.reshape(-1)[0::2] *= -1
    b = np.array([5.0, -4.5], dtype=np.float32)
    x = np.full((2, 4, 4), 6.375, dtype=np.float32)

    ref = conv(x, w, b)
    got = conv(qdq(x, q["input_0"]), qdq(w, q["weight"]), qdq(b, q["bias"]))
    got = qdq(got, q["output_0"])
    snr = 10 * np.log10(np.sum(ref.astype(np.float64) ** 2)
                        / np.sum((ref.astype(np.float64) - got) ** 2))
    print("output0=%.4f snr=%.3f ref0=%g" % (got[0, 0, 0], snr, ref[0, 0, 0]))


if __name__ == "__main__":
    main()
