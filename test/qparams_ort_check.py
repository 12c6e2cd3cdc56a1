#!/usr/bin/python3
"""Cross-check lib/qparams.c against a numpy re-implementation of ONNX
Runtime's quantizer arithmetic (quant_utils.compute_scale_zp and
get_qmin_qmax_for_qType, and the QDQ quantizer's
_adjust_weight_scale_for_int32_bias for a per-tensor weight), written
from ORT's Python source with numpy's own float32/float64 semantics.

usage: qparams_ort_check.py QPARAMS_CALC [SEED]

Feeds a few hundred random ranges per type/flag combination to the C
driver (test/tools/qparams-calc) and requires the scale (float32 bits)
and zero point to be equal. Power-of-two scales, which ORT lacks, are
checked for their properties instead: a power of two, at least ORT's
scale and below twice it, and a grid that holds every value of the
range within half a step. Prints one summary
line; exits 1 on any mismatch (the first few are listed on stderr).
"""
import subprocess
import sys

import numpy as np

TYPES = {
    # name: (numpy dtype of qmin/qmax, whole range)
    "uint8": (np.uint8, (0, 255)),
    "int8": (np.int8, (-128, 127)),
    "uint16": (np.uint16, (0, 65535)),
    "int16": (np.int16, (-32768, 32767)),
    "uint4": (np.uint8, (0, 15)),
    "int4": (np.int8, (-8, 7)),
}
SYMMETRIC_RANGE = {"int8": (-127, 127), "int16": (-32767, 32767)}
REDUCED_RANGE = {
    "uint8": (0, 127), "int8": (-64, 64), "uint16": (0, 32767),
    "int16": (-16384, 16384), "uint4": (0, 7), "int4": (-4, 3),
}


def get_qmin_qmax(name, reduce_range, symmetric):
    dt = TYPES[name][0]
    if reduce_range:
        r = REDUCED_RANGE[name]
    elif symmetric and name in SYMMETRIC_RANGE:
        r = SYMMETRIC_RANGE[name]
    else:
        r = TYPES[name][1]
    return np.array(r[0], dtype=dt), np.array(r[1], dtype=dt)


def compute_scale_zp(rmin, rmax, qmin, qmax, symmetric=False,
                     min_real_range=None):
    """ORT's compute_scale_zp, step by step, on float32 0-d arrays."""
    rmin = np.minimum(rmin, np.array(0, dtype=rmin.dtype))
    rmax = np.maximum(rmax, np.array(0, dtype=rmax.dtype))
    if min_real_range is not None:
        rmax = max(rmax, rmin + np.asarray(min_real_range, dtype=rmin.dtype))
    if symmetric:
        absmax = np.maximum(np.abs(rmin), np.abs(rmax))
        rmin = -absmax
        rmax = +absmax
    dr = np.array(rmax - rmin, dtype=np.float64)
    dq = np.array(qmax, dtype=np.float64) - np.array(qmin, dtype=np.float64)
    scale = np.array(dr / dq)
    if scale < np.finfo(rmax.dtype).tiny:
        scale = np.array(1.0, dtype=rmax.dtype)
        zero_point = np.array(0, dtype=qmin.dtype)
    else:
        if symmetric:
            zero_point = np.array(
                np.round((qmin + qmax) / np.array(2.0, dtype=np.float64)),
                dtype=qmin.dtype)
        else:
            zero_point = np.array(np.round(qmin - rmin / scale),
                                  dtype=qmin.dtype)
        scale = scale.astype(rmax.dtype)
    return zero_point, scale, rmin, rmax


def adjust_weight_scale(input_scale, weight_scale, bias_data):
    """ORT's _adjust_weight_scale_for_int32_bias, per-tensor branch."""
    int32_info = np.iinfo(np.int32)
    multiplicative_epsilon = 1.0001
    qrange = (np.array(int32_info.max, dtype=np.float64)
              - np.array(int32_info.min + 1, dtype=np.float64))
    rmin = np.minimum(bias_data.min(), np.array(0, dtype=np.float64))
    rmax = np.maximum(bias_data.max(), np.array(0, dtype=np.float64))
    absmax = np.maximum(np.abs(rmin), np.abs(rmax))
    smallest = multiplicative_epsilon * (2.0 * absmax) / qrange
    in64 = np.array(input_scale.item(), dtype=np.float64)
    w64 = np.array(weight_scale.item(), dtype=np.float64)
    cand = in64 * w64
    if (cand < smallest) and (cand > 0.0):
        ratio = smallest / cand
        weight_scale = (w64 * ratio).astype(weight_scale.dtype)
    return weight_scale


def f32hex(x):
    return float(np.float32(x)).hex()


def random_ranges(rng, name, n):
    """Ranges of every shape: two-signed, one-signed, tiny, ties."""
    out = []
    lo, hi = TYPES[name][1]
    dq = hi - lo
    for i in range(n):
        kind = i % 8
        if kind == 0:
            a = -10.0 ** rng.uniform(-8, 4) * rng.random()
            b = 10.0 ** rng.uniform(-8, 4) * rng.random()
        elif kind == 1:
            a = 10.0 ** rng.uniform(-6, 3)
            b = a + 10.0 ** rng.uniform(-6, 3)
        elif kind == 2:
            b = -10.0 ** rng.uniform(-6, 3)
            a = b - 10.0 ** rng.uniform(-6, 3)
        elif kind == 3:
            # Near the FLT_MIN cut-off of the scale.
            a = -10.0 ** rng.uniform(-40, -34) * rng.integers(0, 2)
            b = 10.0 ** rng.uniform(-40, -34)
        elif kind == 4:
            # Exact binary scales with the zero point on a .5 tie.
            s = 2.0 ** int(rng.integers(-20, 10))
            m = int(rng.integers(0, dq))
            a = -(m + 0.5) * s
            b = (dq - m - 0.5) * s
        elif kind == 5:
            a = b = 0.0
        elif kind == 6:
            # Random float32 bit patterns of moderate size.
            a = -abs(np.frombuffer(rng.integers(0, 2**31, dtype=np.uint32)
                                   .astype(np.uint32).tobytes(),
                                   dtype=np.float32)[0])
            b = abs(np.frombuffer(rng.integers(0, 2**31, dtype=np.uint32)
                                  .astype(np.uint32).tobytes(),
                                  dtype=np.float32)[0])
            if not (np.isfinite(a) and np.isfinite(b)) or b - a > 1e37:
                a, b = -1.0, 1.0
        else:
            a = float(rng.normal()) * 3
            b = a + abs(float(rng.normal())) * 3
        out.append((np.float32(a), np.float32(b)))
    return out


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    calc = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 20240906
    rng = np.random.default_rng(seed)
    per_combo = 300
    cases = []      # (kind, description, expected...)
    lines = []
    for name in TYPES:
        for sym in (0, 1):
            for rr in (0, 1):
                for mrr in (None, np.float32(1e-4)):
                    for pow2 in (0, 1):
                        for a, b in random_ranges(rng, name, per_combo):
                            cases.append(("range", name, sym, rr, mrr, pow2,
                                          a, b))
                            lines.append("range %s %d %d %d %s %s %s\n" % (
                                name, sym, rr, pow2,
                                f32hex(0 if mrr is None else mrr),
                                f32hex(a), f32hex(b)))
    for i in range(per_combo):
        ins = np.float32(10.0 ** rng.uniform(-4, 1))
        w = np.float32(10.0 ** rng.uniform(-12, -1))
        babs = np.float32(10.0 ** rng.uniform(-3, 3))
        cases.append(("bias", ins, w, babs))
        lines.append("bias %s %s %s 1\n" % (f32hex(ins), f32hex(w),
                                            f32hex(babs)))

    res = subprocess.run([calc], input="".join(lines), capture_output=True,
                         text=True, check=False)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        return 1
    got = res.stdout.splitlines()
    if len(got) != len(cases):
        sys.stderr.write("%d answers for %d cases\n" % (len(got), len(cases)))
        return 1

    bad = []
    n_exact = n_pow2 = n_bias = 0
    with np.errstate(all="ignore"):
        for case, line, ans in zip(cases, lines, got):
            if ans.startswith("error"):
                bad.append((line.strip(), ans, "no error"))
                continue
            if case[0] == "bias":
                _, ins, w, babs = case
                bias = np.array([babs, -babs / 2], dtype=np.float32)
                w2 = adjust_weight_scale(np.array(ins), np.array(w), bias)
                bs = np.array(ins) * w2 * 1.0
                want = "%s %s" % (float(w2).hex(), float(bs).hex())
                g = ans.split()
                if (float.fromhex(g[0]) != float(w2)
                        or float.fromhex(g[1]) != float(bs)):
                    bad.append((line.strip(), ans, want))
                n_bias += 1
                continue
            _, name, sym, rr, mrr, pow2, a, b = case
            qmin, qmax = get_qmin_qmax(name, rr, sym)
            zp, scale, r0, r1 = compute_scale_zp(np.array(a), np.array(b),
                                                 qmin, qmax, bool(sym), mrr)
            gs, gz = ans.split()
            gs = float.fromhex(gs)
            gz = int(gz)
            if not pow2:
                n_exact += 1
                if gs != float(scale) or gz != int(zp):
                    bad.append((line.strip(), ans, "%s %d" % (
                        float(scale).hex(), int(zp))))
                continue
            n_pow2 += 1
            if float(scale) == 1.0 and float(r1 - r0) / float(
                    qmax.astype(np.float64) - qmin) < np.finfo(np.float32).tiny:
                ok = gs == 1.0 and gz == 0
            else:
                m, _ = np.frexp(gs)
                lo_rep = gs * (int(qmin) - gz)
                hi_rep = gs * (int(qmax) - gz)
                # Within half a step of the grid, and no coarser than
                # the next power of two.
                ok = (m == 0.5 and float(scale) <= gs < 2 * float(scale)
                      and int(qmin) <= gz <= int(qmax)
                      and lo_rep - gs / 2 <= float(r0)
                      and hi_rep + gs / 2 >= float(r1))
            if not ok:
                bad.append((line.strip(), ans, "a power of two in [%s, 2x) holding the range"
                            % float(scale).hex()))

    print("qparams vs ORT: %d ranges bit-exact, %d power-of-two, %d bias "
          "adjustments, %d mismatches" % (n_exact, n_pow2, n_bias, len(bad)))
    for line, ans, want in bad[:10]:
        sys.stderr.write("%s: got %s, want %s\n" % (line, ans, want))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
