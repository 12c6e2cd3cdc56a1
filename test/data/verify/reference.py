#!/usr/bin/python3
"""reference.py: what onnx-verify must report for clf.onnx against
clf-q.onnx (see make-fixtures.py), computed with numpy alone: both models
are evaluated here by hand from their initializers, QuantizeLinear and
DequantizeLinear emulated (round half to even, saturate), and every
metric summed in float64.

usage: reference.py DATA_DIR [LABELS]

Prints JSON: {"outputs": {name: {...}}, "tensors": {dq_name: {...}}}
with the keys of onnx-verify's JSON report (onnx-verify(1)).
"""
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
H = "re lu/h%"


def inits(path):
    m = onnx.load(os.path.join(HERE, path))
    return {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}


def quant(x, s, z, lo, hi):
    q = np.rint(x.astype(np.float32) / np.float32(s)) + z
    return np.clip(q, lo, hi)


def dequant(q, s, z):
    return ((q - z) * np.float32(s)).astype(np.float32)


def qdq(x, p, name, lo=0, hi=255):
    s, z = p[name + "_scale"], p[name + "_zero_point"].astype(np.int64)
    q = quant(x, s, z, lo, hi)
    return q, dequant(q, s, z)


def fp32(x, w):
    a1 = (x @ w["W1"] + w["b1"]).astype(np.float32)
    h = np.maximum(a1, 0).astype(np.float32)
    logits = (h @ w["W2"] + w["b2"]).astype(np.float32)
    return {"x": x, "a1": a1, H: h, "logits": logits,
            "score": h.sum(axis=1, keepdims=True)}


def quantized(x, p):
    v = {}
    _, xd = qdq(x, p, "x")
    w1 = dequant(p["W1_quantized"].astype(np.int64), p["W1_scale"], 0)
    b1 = (p["b1_quantized"].astype(np.int64) * p["b1_scale"]).astype(np.float32)
    w2 = dequant(p["W2_quantized"].astype(np.int64), p["W2_scale"], 0)
    _, a1 = qdq((xd @ w1 + b1).astype(np.float32), p, "a1")
    h = np.maximum(a1, 0).astype(np.float32)
    _, hd = qdq(h, p, "h")
    _, hd16 = qdq(hd, p, "h16", 0, 65535)
    pre = (hd16 @ w2 + p["b2"]).astype(np.float32)
    _, logits = qdq(pre, p, "logits")
    v["x_DequantizeLinear_Output"] = xd
    v["a1_DequantizeLinear_Output"] = a1
    v["h_DequantizeLinear_Output"] = hd
    v["h_convert_DequantizeLinear_Output"] = hd16
    v["logits"] = logits
    v["score"] = hd.sum(axis=1, keepdims=True)
    v["W1"], v["b1"], v["W2"] = w1, b1, w2
    return v


class Acc:
    def __init__(self):
        self.sig = self.noise = self.xx = self.xr = 0.0
        self.n = 0
        self.max_abs = 0.0
        self.worst = math.inf
        self.worst_sample = None
        self.samples = 0

    def add(self, x, ref, sample):
        x = x.astype(np.float64).ravel()
        r = ref.astype(np.float64).ravel()
        sig, noise = float((r * r).sum()), float(((x - r) ** 2).sum())
        self.sig += sig
        self.noise += noise
        self.xx += float((x * x).sum())
        self.xr += float((x * r).sum())
        self.n += x.size
        self.max_abs = max(self.max_abs, float(np.abs(x - r).max()))
        snr = snr_db(sig, noise)
        if self.worst_sample is None or snr < self.worst:
            self.worst, self.worst_sample = snr, sample
        self.samples += 1

    def report(self):
        return {"samples": self.samples,
                "snr_db": snr_db(self.sig, self.noise),
                "worst_snr_db": self.worst,
                "worst_sample": self.worst_sample,
                "mse": self.noise / self.n, "max_abs": self.max_abs,
                "cosine": self.xr / math.sqrt(self.xx * self.sig)}


def snr_db(sig, noise):
    if noise == 0:
        return math.inf
    return 10 * math.log10(sig / noise)


def main():
    data = sys.argv[1]
    labels = None
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            labels = [int(l) for l in f if l.strip() and l[0] != "#"]
    w, p = inits("clf.onnx"), inits("clf-q.onnx")
    samples = sorted(os.listdir(data), key=lambda s: int(s[1:]))
    outs = {k: Acc() for k in ("logits", "score")}
    carried = {k: Acc() for k in ("x_DequantizeLinear_Output",
                                  "a1_DequantizeLinear_Output",
                                  "h_DequantizeLinear_Output",
                                  "h_convert_DequantizeLinear_Output",
                                  "logits")}
    src = {"x_DequantizeLinear_Output": "x", "a1_DequantizeLinear_Output": "a1",
           "h_DequantizeLinear_Output": H,
           "h_convert_DequantizeLinear_Output": H, "logits": "logits"}
    pair = {"x_DequantizeLinear_Output": ("x", 255),
            "a1_DequantizeLinear_Output": ("a1", 255),
            "h_DequantizeLinear_Output": ("h", 255),
            "h_convert_DequantizeLinear_Output": ("h16", 65535),
            "logits": ("logits", 255)}
    own = {k: Acc() for k in carried}
    clamp = {"a1_DequantizeLinear_Output"}
    clip = {k: [0, 0, math.inf, -math.inf] for k in carried}
    agree = rows = right_fp = right_q = 0
    for i, s in enumerate(samples):
        name = os.path.join(data, s)
        x = np.load(os.path.join(name, "x.npy"))
        f, q = fp32(x, w), quantized(x, p)
        for k, a in outs.items():
            a.add(q[k], f[k], name)
        for k, a in carried.items():
            ref, got = f[src[k]], q[k]
            pn, hi = pair[k]
            qv, dq = qdq(ref, p, pn, 0, hi)
            if k in clamp:
                # Only Relu reads a1: compared as Relu sees it.
                ref, got, dq = (np.maximum(v, 0) for v in (ref, got, dq))
            a.add(got, ref, name)
            own[k].add(dq, ref, name)
            half = float(p[pn + "_scale"]) / 2
            c = clip[k]
            c[0] += ref.size
            c[1] += int(((qv <= 0) & (ref < dq - half)).sum() +
                        ((qv >= hi) & (ref > dq + half)).sum())
            c[2], c[3] = min(c[2], qv.min()), max(c[3], qv.max())
        a, b = int(q["logits"].argmax()), int(f["logits"].argmax())
        rows += 1
        agree += a == b
        if labels:
            right_q += a == labels[i]
            right_fp += b == labels[i]
    res = {"outputs": {}, "tensors": {}}
    for k, a in outs.items():
        res["outputs"][k] = a.report()
    res["outputs"]["logits"]["top1_agreement_pct"] = 100.0 * agree / rows
    if labels:
        res["outputs"]["logits"]["accuracy_pct"] = 100.0 * right_q / rows
        res["outputs"]["logits"]["ref_accuracy_pct"] = 100.0 * right_fp / rows
    for k in carried:
        r = carried[k].report()
        o = own[k].report()
        pn, hi = pair[k]
        c = clip[k]
        r.update({"own_snr_db": o["snr_db"], "own_mse": o["mse"],
                  "own_max_abs": o["max_abs"],
                  "own_worst_snr_db": o["worst_snr_db"],
                  "clip_pct": 100.0 * c[1] / c[0],
                  "grid_pct": 100.0 * (c[3] - c[2]) / hi})
        r["clamp"] = [0.0, math.inf] if k in clamp else None
        res["tensors"][k] = r
    for k, wq in (("W1", "W1"), ("b1", "b1"), ("W2", "W2")):
        a = Acc()
        a.add(q[wq], w[k], None)
        r = a.report()
        r["worst_sample"] = None
        r["own_snr_db"] = r["snr_db"]
        res["tensors"][k + "_DequantizeLinear_Output"] = r
    json.dump(res, sys.stdout, indent=1, default=float)


if __name__ == "__main__":
    main()
