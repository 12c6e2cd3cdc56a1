#!/usr/bin/python3
"""make-decoder.py: an LLM-shaped decoder for the weight-only tests and
benchmarks: token embedding (Gather), L layers of RMSNorm, causal
multi-head attention and a SwiGLU MLP with residuals, a final RMSNorm and
an lm_head MatMul to the vocabulary's logits. Weights are random, with a
few outlier input channels (rows of K) per matrix, as real LLM weights
have. Every MatMul weight is a constant 2-D float initializer K x N.

usage: make-decoder.py [--size tiny|small|big|huge] [--layers L]
                       [--seq S] [--seed N] [--data DIR [--samples N]]
                       [--nan] [--opset N] OUT.onnx

tiny: hidden 64, a few hundred kB, for tests; small: hidden 256; big:
hidden 2048, 8 layers, vocabulary 32000, about 2.2 GB of float32; huge:
ten times big (80 layers). Models past 1 GiB keep their weights in
external data (OUT.onnx.data, one file written tensor by tensor, so this
script never holds the whole model in memory). --data writes N samples
of input_ids as DIR/sampleK/input_ids.npy (onnx-verify's npy layout).
--nan puts a NaN in the first MatMul weight (to test that it is refused).
--opset: 17 (default) or 21, the opset blocked DequantizeLinear needs.
"""
import argparse, os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

SIZES = {  # hidden, heads, ffn, vocab, layers
    'tiny': (64, 4, 176, 256, 2),
    'small': (256, 8, 704, 2048, 4),
    'big': (2048, 16, 5632, 32000, 8),
    'huge': (2048, 16, 5632, 32000, 80),
}

ap = argparse.ArgumentParser()
ap.add_argument('--size', default='tiny', choices=SIZES)
ap.add_argument('--layers', type=int)
ap.add_argument('--seq', type=int, default=16)
ap.add_argument('--seed', type=int, default=1)
ap.add_argument('--data')
ap.add_argument('--samples', type=int, default=4)
ap.add_argument('--nan', action='store_true')
ap.add_argument('--opset', type=int, default=17)
ap.add_argument('out')
a = ap.parse_args()
H, NH, F, V, L = SIZES[a.size]
if a.layers:
    L = a.layers
S, HD = a.seq, H // NH
rng = np.random.default_rng(a.seed)
total = 4 * (2 * H * V + L * (4 * H * H + 3 * H * F))
external = total > (1 << 30)
data_name = os.path.basename(a.out) + '.data'
data_f = open(a.out + '.data', 'wb') if external else None
inits, nodes = [], []


def tensor(name, arr):
    """An initializer; into the external data file when the model is big."""
    arr = np.ascontiguousarray(arr)
    if not external or arr.nbytes < 1024:
        inits.append(numpy_helper.from_array(arr, name))
        return name
    t = TensorProto(name=name, data_type=onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype],
                    dims=arr.shape, data_location=TensorProto.EXTERNAL)
    off = data_f.tell()
    pad = (-off) % 4096
    data_f.write(b'\0' * pad)
    off += pad
    data_f.write(arr.tobytes())
    for k, v in (('location', data_name), ('offset', str(off)), ('length', str(arr.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    inits.append(t)
    return name


def weight(name, k, n):
    """K x N, scaled as 1/sqrt(K), with a few outlier input channels."""
    w = rng.standard_normal((k, n), dtype=np.float32) / np.float32(np.sqrt(k))
    rows = rng.choice(k, size=max(1, k // 256), replace=False)
    w[rows] *= np.float32(8)
    if a.nan and name == 'l0_q_w':
        w[0, 0] = np.nan
    return tensor(name, w)


def node(op, ins, outs=None, **kw):
    outs = outs or ['%s_%d' % (op.lower(), len(nodes))]
    nodes.append(helper.make_node(op, ins, outs, name=outs[0] + '_n', **kw))
    return outs[0]


def const(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name


def rmsnorm(x, p):
    g = tensor(p + '_g', (1 + 0.1 * rng.standard_normal(H)).astype(np.float32))
    sq = node('Mul', [x, x])
    if a.opset >= 18:
        ms = node('ReduceMean', [sq, 'axes_last'], keepdims=1)
    else:
        ms = node('ReduceMean', [sq], axes=[-1], keepdims=1)
    r = node('Sqrt', [node('Add', [ms, 'eps'])])
    return node('Mul', [node('Div', [x, r]), g])


const('axes_last', np.array([-1], np.int64))
const('eps', np.array(1e-5, np.float32))
const('shape_heads', np.array([1, S, NH, HD], np.int64))
const('shape_hidden', np.array([1, S, H], np.int64))
const('inv_sqrt_hd', np.array(1 / np.sqrt(HD), np.float32))
mask = np.triu(np.full((S, S), -1e9, np.float32), 1)
const('causal_mask', mask)

emb = tensor('embed', rng.standard_normal((V, H), dtype=np.float32))
x = node('Gather', [emb, 'input_ids'], axis=0)
for i in range(L):
    p = 'l%d_' % i
    h = rmsnorm(x, p + 'attn_norm')
    heads = []
    for m in 'qkv':
        y = node('MatMul', [h, weight(p + m + '_w', H, H)])
        y = node('Reshape', [y, 'shape_heads'])
        heads.append(node('Transpose', [y], perm=[0, 2, 1, 3]))
    q, k, v = heads
    kt = node('Transpose', [k], perm=[0, 1, 3, 2])
    sc = node('Add', [node('Mul', [node('MatMul', [q, kt]), 'inv_sqrt_hd']), 'causal_mask'])
    att = node('MatMul', [node('Softmax', [sc], axis=-1), v])
    att = node('Reshape', [node('Transpose', [att], perm=[0, 2, 1, 3]), 'shape_hidden'])
    x = node('Add', [x, node('MatMul', [att, weight(p + 'o_w', H, H)])])
    h = rmsnorm(x, p + 'mlp_norm')
    gate = node('MatMul', [h, weight(p + 'gate_w', H, F)])
    up = node('MatMul', [h, weight(p + 'up_w', H, F)])
    act = node('Mul', [node('Mul', [gate, node('Sigmoid', [gate])]), up])
    x = node('Add', [x, node('MatMul', [act, weight(p + 'down_w', F, H)])])
h = rmsnorm(x, 'final_norm')
node('MatMul', [h, weight('lm_head_w', H, V)], ['logits'])

g = helper.make_graph(nodes, 'decoder',
                      [helper.make_tensor_value_info('input_ids', TensorProto.INT64, [1, S])],
                      [helper.make_tensor_value_info('logits', TensorProto.FLOAT, [1, S, V])],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', a.opset)], producer_name='make-decoder.py')
m.ir_version = 10 if a.opset >= 21 else 8
if data_f:
    data_f.close()
onnx.save(m, a.out)
if a.data:
    for s in range(a.samples):
        d = os.path.join(a.data, 'sample%d' % s)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, 'input_ids.npy'), rng.integers(0, V, (1, S), dtype=np.int64))
print('%s: %d layers, hidden %d, %.1f MB of float32%s' % (
    a.out, L, H, total / 1e6, ', external data' if external else ''))
