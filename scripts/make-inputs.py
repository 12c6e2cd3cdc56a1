#!/usr/bin/python3
"""make-inputs.py: write deterministic inputs for a model in the npy layout
(OUTDIR/SAMPLE/NAME.npy, see onnx-verify(1)), for onnx-verify, onnx-calib
and test/ort-run.js.

usage: scripts/make-inputs.py [-n SAMPLES] [--seed N] [--kind KIND]
           [--shape NAME=DxDx...] MODEL OUTDIR

Every graph input that is not an initializer gets a file in each sample
directory s0, s1, ...; NAME is percent-encoded (bytes outside
[A-Za-z0-9._-] become %HH). Dynamic dimensions must be fixed with --shape
(or are taken as 1 for a leading batch dimension). KIND:
  doc     a document-like image: light paper with a soft gradient and lines
          of dark glyph-like strokes, blurred, normalised as PaddleOCR does
          ((x/255 - 0.5) / 0.5, so in [-1, 1]); for NCHW inputs with 3
          channels (the default for those)
  smooth  smooth random values in [-1, 1]: a few octaves of upsampled
          noise over the last two dimensions (the default otherwise)
Integer inputs get small random integers. The same seed gives the same
bytes on every machine (numpy's PCG64 generator).
Run with Debian's /usr/bin/python3, which has onnx and numpy.
"""
import argparse
import os
import sys

import numpy as np
import onnx

NP_TYPES = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.FLOAT16: np.float16, onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32, onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.BOOL: np.bool_,
}


def file_name(name):
    safe = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
    return "".join(chr(b) if b in safe else "%%%02X" % b
                   for b in name.encode("utf-8"))


def upsample(a, h, w):
    """Bilinear resize of a 2-D array to h x w."""
    ys = np.linspace(0, a.shape[0] - 1, h)
    xs = np.linspace(0, a.shape[1] - 1, w)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1 = np.minimum(y0 + 1, a.shape[0] - 1)
    x1 = np.minimum(x0 + 1, a.shape[1] - 1)
    fy = (ys - y0)[:, None]
    fx = (xs - x0)[None, :]
    top = a[y0][:, x0] * (1 - fx) + a[y0][:, x1] * fx
    bot = a[y1][:, x0] * (1 - fx) + a[y1][:, x1] * fx
    return top * (1 - fy) + bot * fy


def smooth_plane(rng, h, w):
    out = np.zeros((h, w))
    for octave, amp in ((4, 1.0), (8, 0.5), (16, 0.25), (32, 0.125)):
        g = rng.standard_normal((min(octave, h) + 1, min(octave, w) + 1))
        out += amp * upsample(g, h, w)
    out -= out.min()
    return out / max(out.max(), 1e-12) * 2 - 1


def box_blur(a, r):
    k = 2 * r + 1
    p = np.pad(a, r, mode="edge")
    c = np.cumsum(np.cumsum(p, 0), 1)
    c = np.pad(c, ((1, 0), (1, 0)))
    return (c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]) / (k * k)


def doc_image(rng, h, w):
    """Grey levels 0..255 (h x w x 3) that look a little like printed text."""
    paper = 225 + 20 * (smooth_plane(rng, h, w) + 1) / 2
    ink = np.zeros((h, w))
    line_h = max(8, min(h // 2, int(rng.integers(16, 40))))
    y = int(rng.integers(2, max(3, line_h // 2)))
    while y + line_h <= h:
        x = int(rng.integers(2, max(3, w // 8)))
        stop = w - int(rng.integers(2, max(3, w // 6)))
        gh = int(line_h * 0.7)
        while x < stop:
            gw = int(rng.integers(max(3, gh // 2), gh + 1))
            gw = min(gw, stop - x)
            if gw < 2:
                break
            # A glyph: a few horizontal, vertical and diagonal strokes.
            for _ in range(int(rng.integers(2, 5))):
                t = max(1, gh // 8)
                kind = rng.integers(0, 3)
                if kind == 0:
                    yy = y + int(rng.integers(0, gh - t + 1))
                    ink[yy:yy + t, x:x + gw] = 1
                elif kind == 1:
                    xx = x + int(rng.integers(0, max(1, gw - t + 1)))
                    ink[y:y + gh, xx:xx + t] = 1
                else:
                    for i in range(gh):
                        xx = x + int(i * (gw - 1) / max(1, gh - 1))
                        ink[y + i, xx:xx + t] = 1
            x += gw + int(rng.integers(1, max(2, gh // 3)))
            if rng.random() < 0.15:
                x += gh  # a space between words
        y += line_h + int(rng.integers(line_h // 4, line_h))
    ink = box_blur(ink, 1)
    grey = paper * (1 - 0.85 * ink)
    tint = np.array([1.0, 0.97, 0.93])
    return np.clip(grey[:, :, None] * tint, 0, 255)


def make(rng, kind, shape, dtype):
    if dtype not in (np.float32, np.float64, np.float16):
        return rng.integers(0, 4, size=shape).astype(dtype)
    if kind == "doc":
        if len(shape) != 4 or shape[1] != 3:
            sys.exit("make-inputs: --kind doc needs an NCHW input with 3 "
                     "channels, not %s" % "x".join(map(str, shape)))
        n, _, h, w = shape
        imgs = [doc_image(rng, h, w).transpose(2, 0, 1) for _ in range(n)]
        return ((np.stack(imgs) / 255.0 - 0.5) / 0.5).astype(dtype)
    lead = shape[:-2] if len(shape) >= 2 else ()
    h = shape[-2] if len(shape) >= 2 else 1
    w = shape[-1] if len(shape) >= 1 else 1
    planes = [smooth_plane(rng, h, w) for _ in range(int(np.prod(lead)))]
    return np.stack(planes).reshape(shape).astype(dtype)


def main():
    ap = argparse.ArgumentParser(prog="make-inputs.py")
    ap.add_argument("-n", "--samples", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kind", choices=("doc", "smooth"))
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("model")
    ap.add_argument("outdir")
    a = ap.parse_args()
    shapes = {}
    for s in a.shape:
        name, _, dims = s.rpartition("=")
        shapes[name] = [int(d) for d in dims.split("x")]
    m = onnx.load(a.model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    rng = np.random.default_rng(a.seed)
    for s in range(a.samples):
        d = os.path.join(a.outdir, "s%d" % s)
        os.makedirs(d, exist_ok=True)
        for vi in inputs:
            tt = vi.type.tensor_type
            if vi.name in shapes:
                shape = shapes[vi.name]
            else:
                shape = []
                for k, dim in enumerate(tt.shape.dim):
                    if dim.HasField("dim_value"):
                        shape.append(dim.dim_value)
                    elif k == 0:
                        shape.append(1)
                    else:
                        sys.exit("make-inputs: input %s: dimension %d is "
                                 "dynamic; give --shape %s=..." %
                                 (vi.name, k, vi.name))
            dtype = NP_TYPES.get(tt.elem_type)
            if dtype is None:
                sys.exit("make-inputs: input %s: element type %d is not "
                         "supported" % (vi.name, tt.elem_type))
            kind = a.kind or ("doc" if len(shape) == 4 and shape[1] == 3
                              else "smooth")
            arr = make(rng, kind, tuple(shape), dtype)
            np.save(os.path.join(d, file_name(vi.name) + ".npy"), arr)


if __name__ == "__main__":
    main()
