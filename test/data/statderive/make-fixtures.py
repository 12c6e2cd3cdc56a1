#!/usr/bin/python3
"""make-fixtures.py: models whose tensors' statistics the calibration
derives from other tensors' (lib/statderive.c), for
test/unit/statderive_test.c. Run with Debian's /usr/bin/python3 (onnx,
numpy):
    /usr/bin/python3 make-fixtures.py DIR

derive.onnx (opset 13): x (dynamic batch x 4 x 64 x 128, so a batch of
one has 32768 values, enough to be derived) through
  Relu -> r; Clip(0, 6) -> c; Clip(-1.5, 2.75) -> c2; Clip(min 0.5) -> c3;
  Clip(x, ReduceMin(x)) -> cd (a bound computed: not derived);
  Reshape(r) -> s; Unsqueeze(s) -> u; Squeeze(u) -> q (copies of copies);
  Identity(c) -> i; Dropout(x) -> d; Transpose(c2) -> t; Flatten(t) -> f;
  Concat(r, c) -> k; Concat(x, w) on axis 0 -> kw (w a constant: not
  derived);
  Reshape(w) -> sw (a constant's copy: not derived);
  Add(x, 0) -> a0, Add(-0, x) -> an, Sub(x, 0) -> s0, Mul(1, x) -> m1,
  Div(x, 1) -> d1 (copies of x); Sub(0, x) -> sx, Div(1, x) -> dx,
  Add(x, 6) -> a6, Mul(x, w) -> mw (not copies).
clip10.onnx (opset 10): Clip(x, min=-2, max=3 attributes) -> c;
  Relu(c) -> r.
chains.onnx (opset 13): chains the interpreter runs fused (lib/fuse.c),
  whose links the calibration sees block by block: hard-swish as Paddle
  exports it, Add(x, 3) -> Clip(0, 6) -> Mul(x, .) -> Div(., 6) -> h
  (Clip derived from the Add in the chain, unless it held infinities);
  Relu(x) -> Mul(., 0.5) -> HardSigmoid -> Sub(2, .) -> y (Relu derived
  from x, outside the chain); Clip(x, -1.5, 2.75) -> Relu -> Mul(., x)
  -> z (a Relu derived from a Clip derived from x).
in/s0 .. in/s3: samples of x (1x4x64x128) for onnx-calib: uniform
  values, 30% of them -0, the Clip bounds, their neighbours, a
  subnormal, a huge one; from s2 on also NaN and infinities (so s0 and
  s1 leave the Clip outputs derivable, s2 and s3 not).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save_model

out = sys.argv[1] if len(sys.argv) > 1 else '.'
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT
SHAPE = ['N', 4, 64, 128]


def const(name, v, dtype=np.float32):
    return numpy_helper.from_array(np.array(v, dtype), name)


def save(name, nodes, outputs, inits, opset):
    """The graph x -> outputs (of unknown shapes), IR 7."""
    vi = helper.make_tensor_value_info
    m = helper.make_model(
        helper.make_graph(nodes, name, [vi('x', F, SHAPE)],
                          [vi(o, F, None) for o in outputs], inits),
        opset_imports=[helper.make_opsetid('', opset)], ir_version=7)
    save_model(m, os.path.join(out, name))


N = helper.make_node
save('derive.onnx', [
    N('Relu', ['x'], ['r']),
    N('Clip', ['x', 'zero', 'six'], ['c']),
    N('Clip', ['x', 'lo2', 'hi2'], ['c2']),
    N('Clip', ['x', 'half'], ['c3']),
    N('ReduceMin', ['x'], ['mn'], keepdims=0),
    N('Clip', ['x', 'mn'], ['cd']),
    N('Reshape', ['r', 'shape3'], ['s']),
    N('Unsqueeze', ['s', 'axes0'], ['u']),
    N('Squeeze', ['u', 'axes0'], ['q']),
    N('Identity', ['c'], ['i']),
    N('Dropout', ['x'], ['d']),
    N('Transpose', ['c2'], ['t'], perm=[0, 2, 3, 1]),
    N('Flatten', ['t'], ['f']),
    N('Concat', ['r', 'c'], ['k'], axis=1),
    N('Concat', ['x', 'w'], ['kw'], axis=0),
    N('Reshape', ['w', 'shape3'], ['sw']),
    N('Add', ['x', 'zero'], ['a0']),
    N('Add', ['negzero', 'x'], ['an']),
    N('Sub', ['x', 'zero'], ['s0']),
    N('Mul', ['one', 'x'], ['m1']),
    N('Div', ['x', 'one'], ['d1']),
    N('Sub', ['zero', 'x'], ['sx']),
    N('Div', ['one', 'x'], ['dx']),
    N('Add', ['x', 'six'], ['a6']),
    N('Mul', ['x', 'w'], ['mw']),
], ['r', 'c', 'c2', 'c3', 'cd', 'q', 'i', 'd', 'f', 'k', 'kw', 'sw', 'a0',
    'an', 's0', 'm1', 'd1', 'sx', 'dx', 'a6', 'mw'], [
    const('zero', 0), const('negzero', -0.0), const('one', [1]),
    const('six', 6), const('lo2', -1.5),
    const('hi2', 2.75), const('half', 0.5),
    const('shape3', [0, 4, -1], np.int64), const('axes0', [0], np.int64),
    const('w', np.linspace(-3, 3, 4 * 64 * 128).reshape(1, 4, 64, 128)),
], 13)
save('chains.onnx', [
    N('Add', ['x', 'three'], ['ha']),
    N('Clip', ['ha', 'zero', 'six'], ['hb']),
    N('Mul', ['x', 'hb'], ['hm']),
    N('Div', ['hm', 'six'], ['h']),
    N('Relu', ['x'], ['yr']),
    N('Mul', ['yr', 'half'], ['ym']),
    N('HardSigmoid', ['ym'], ['ys'], alpha=0.2, beta=0.5),
    N('Sub', ['two', 'ys'], ['y']),
    N('Clip', ['x', 'lo2', 'hi2'], ['zc']),
    N('Relu', ['zc'], ['zr']),
    N('Mul', ['zr', 'x'], ['z']),
], ['h', 'y', 'z'], [
    const('zero', 0), const('three', 3), const('six', 6),
    const('half', 0.5), const('two', [2]), const('lo2', -1.5),
    const('hi2', 2.75),
], 13)
save('clip10.onnx', [
    N('Clip', ['x'], ['c'], min=-2.0, max=3.0),
    N('Relu', ['c'], ['r']),
], ['c', 'r'], [], 10)

rng = np.random.default_rng(21)
special = np.array([0, -0.0, 6, -1.5, 2.75, 0.5, -2, 3, 1e-40, -1e30,
                    np.nextafter(np.float32(6), np.float32(7)), np.nan,
                    np.inf, -np.inf], np.float32)
for s in range(4):
    x = rng.uniform(-8, 8, (1, 4, 64, 128)).astype(np.float32)
    pick = rng.random(x.shape) < 0.3
    sp = special[:11] if s < 2 else special
    x[pick] = rng.choice(sp, int(pick.sum()))
    os.makedirs(os.path.join(out, 'in', 's%d' % s), exist_ok=True)
    np.save(os.path.join(out, 'in', 's%d' % s, 'x.npy'), x)
