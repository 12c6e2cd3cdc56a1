#!/usr/bin/python3
"""make-dynamic-models.py: the small float models test/dynamic.bats
quantizes dynamically, with evaluation data, written into DIR.

usage: make-dynamic-models.py [--large] DIR

  DIR/tfm.onnx    a transformer block: token embedding (Gather), LayerNorm,
                  single-head attention (Q, K, V projections by MatMul,
                  a MatMul of two activations for the scores, Softmax,
                  MatMul with V), output projection, residual, GELU MLP
                  (Erf form), opset 17
  DIR/gemm.onnx   Gemm layers (transB=1 with bias and alpha, transB=0,
                  beta != 1) with Relu, opset 11
  DIR/conv.onnx   Conv layers (dense, depthwise, pointwise, with and
                  without bias), HardSwish, opset 14
  DIR/atn.onnx    the transformer block as ORT's optimizer fuses it:
                  com.microsoft Attention (one In x 3H weight, 4 heads),
                  the first with a raw padding mask (graph input mask,
                  int32; samples pad 0 to 3 tokens), the second causal
                  (unidirectional), then the GELU MLP; opset 17
  DIR/NAME.data/sK/INPUT.npy   8 samples each (onnx-verify's npy layout)
--large makes the transformer block 256 wide over 128 tokens (for
latency measurements, scripts/bench-dynamic) instead of 32 over 12.
The same seed gives the same models everywhere.
"""
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

LARGE = sys.argv[1:2] == ['--large']
if len(sys.argv) != 2 + LARGE:
    sys.exit('usage: make-dynamic-models.py [--large] DIR')
OUT = sys.argv[-1]
rng = np.random.default_rng(11)
F = TensorProto.FLOAT


def w(name, *shape, s=None):
    s = s if s is not None else 1.0 / np.sqrt(shape[0])
    return numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name)


def save(name, nodes, inputs, outputs, inits, opset, samples):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(OUT, name + '.onnx'))
    for k, x in enumerate(samples):
        d = os.path.join(OUT, name + '.data', 's%d' % k)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, inputs[0].name + '.npy'), x)


os.makedirs(OUT, exist_ok=True)

# ---- transformer block
V, S, D, H = (1000, 128, 256, 1024) if LARGE else (50, 12, 32, 64)
mk = helper.make_node
nodes = [
    mk('Gather', ['emb', 'ids'], ['x0'], axis=0),
    mk('LayerNormalization', ['x0', 'ln1_s', 'ln1_b'], ['x1'], axis=-1, epsilon=1e-5),
    mk('MatMul', ['x1', 'wq'], ['q'], name='q_proj'),
    mk('MatMul', ['x1', 'wk'], ['k'], name='k_proj'),
    mk('MatMul', ['x1', 'wv'], ['v'], name='v_proj'),
    mk('Transpose', ['k'], ['kt'], perm=[0, 2, 1]),
    mk('MatMul', ['q', 'kt'], ['sc0'], name='scores'),
    mk('Mul', ['sc0', 'inv_sqrt_d'], ['sc']),
    mk('Softmax', ['sc'], ['p'], axis=-1),
    mk('MatMul', ['p', 'v'], ['att'], name='attend'),
    mk('MatMul', ['att', 'wo'], ['o'], name='o_proj'),
    mk('Add', ['x0', 'o'], ['r1']),
    mk('LayerNormalization', ['r1', 'ln2_s', 'ln2_b'], ['x2'], axis=-1, epsilon=1e-5),
    mk('MatMul', ['x2', 'w1'], ['h0'], name='fc1'),
    mk('Add', ['h0', 'b1'], ['h1']),
    mk('Div', ['h1', 'sqrt2'], ['h2']),
    mk('Erf', ['h2'], ['h3']),
    mk('Add', ['h3', 'one'], ['h4']),
    mk('Mul', ['h1', 'h4'], ['h5']),
    mk('Mul', ['h5', 'half'], ['h6']),
    mk('MatMul', ['h6', 'w2'], ['m0'], name='fc2'),
    mk('Add', ['m0', 'b2'], ['m1']),
    mk('Add', ['r1', 'm1'], ['y']),
]
inits = [w('emb', V, D, s=1.0), numpy_helper.from_array(np.ones(D, np.float32), 'ln1_s'),
         numpy_helper.from_array(np.zeros(D, np.float32), 'ln1_b'),
         w('wq', D, D), w('wk', D, D), w('wv', D, D), w('wo', D, D),
         numpy_helper.from_array(np.array(1 / np.sqrt(D), np.float32), 'inv_sqrt_d'),
         numpy_helper.from_array((1 + 0.1 * rng.standard_normal(D)).astype(np.float32), 'ln2_s'),
         numpy_helper.from_array((0.1 * rng.standard_normal(D)).astype(np.float32), 'ln2_b'),
         w('w1', D, H), w('b1', H, s=0.1), w('w2', H, D), w('b2', D, s=0.1),
         numpy_helper.from_array(np.array(np.sqrt(2), np.float32), 'sqrt2'),
         numpy_helper.from_array(np.array(1, np.float32), 'one'),
         numpy_helper.from_array(np.array(0.5, np.float32), 'half')]
save('tfm', nodes, [helper.make_tensor_value_info('ids', TensorProto.INT64, [1, S])],
     [helper.make_tensor_value_info('y', F, [1, S, D])], inits, 17,
     [rng.integers(0, V, (1, S)).astype(np.int64) for _ in range(8)])

# ---- Gemm layers
nodes = [
    mk('Gemm', ['x', 'g1w', 'g1b'], ['a1'], name='g1', transB=1, alpha=0.5),
    mk('Relu', ['a1'], ['r1']),
    mk('Gemm', ['r1', 'g2w', 'g2b'], ['a2'], name='g2', beta=2.0),
    mk('Relu', ['a2'], ['r2']),
    mk('Gemm', ['r2', 'g3w'], ['y'], name='g3', transB=1),
]
inits = [w('g1w', 48, 40), w('g1b', 48, s=0.1), w('g2w', 48, 32), w('g2b', 32, s=0.1), w('g3w', 10, 32)]
save('gemm', nodes, [helper.make_tensor_value_info('x', F, [4, 40])],
     [helper.make_tensor_value_info('y', F, [4, 10])], inits, 11,
     [rng.standard_normal((4, 40)).astype(np.float32) for _ in range(8)])

# ---- Conv layers
nodes = [
    mk('Conv', ['x', 'c1w', 'c1b'], ['a1'], name='c1', pads=[1, 1, 1, 1], strides=[2, 2]),
    mk('HardSwish', ['a1'], ['h1']),
    mk('Conv', ['h1', 'dww', 'dwb'], ['a2'], name='dw', pads=[1, 1, 1, 1], group=16),
    mk('HardSwish', ['a2'], ['h2']),
    mk('Conv', ['h2', 'pww'], ['y'], name='pw'),
]
inits = [w('c1w', 16, 3, 3, 3, s=0.3), w('c1b', 16, s=0.1), w('dww', 16, 1, 3, 3, s=0.3),
         w('dwb', 16, s=0.1), w('pww', 8, 16, 1, 1, s=0.25)]
save('conv', nodes, [helper.make_tensor_value_info('x', F, [1, 3, 16, 16])],
     [helper.make_tensor_value_info('y', F, [1, 8, 8, 8])], inits, 14,
     [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(8)])

# ---- transformer block as ORT's optimizer leaves it: com.microsoft
# Attention (Q, K, V in one weight), the first with a raw padding mask
# (graph input), the second causal (unidirectional) without one
V, S, D, H, NH = (1000, 128, 256, 1024, 4) if LARGE else (50, 12, 32, 64, 4)
nodes = [
    mk('Gather', ['emb', 'ids'], ['x0'], axis=0),
    mk('LayerNormalization', ['x0', 'ln1_s', 'ln1_b'], ['x1'], axis=-1, epsilon=1e-5),
    mk('Attention', ['x1', 'qkv1_w', 'qkv1_b', 'mask'], ['a1'], name='attn1',
       domain='com.microsoft', num_heads=NH),
    mk('MatMul', ['a1', 'wo'], ['o'], name='o_proj'),
    mk('Add', ['x0', 'o'], ['r1']),
    mk('LayerNormalization', ['r1', 'ln2_s', 'ln2_b'], ['x2'], axis=-1, epsilon=1e-5),
    mk('Attention', ['x2', 'qkv2_w', 'qkv2_b'], ['a2'], name='attn2',
       domain='com.microsoft', num_heads=NH, unidirectional=1),
    mk('Add', ['r1', 'a2'], ['r2']),
    mk('MatMul', ['r2', 'w1'], ['h0'], name='fc1'),
    mk('Add', ['h0', 'b1'], ['h1']),
    mk('Div', ['h1', 'sqrt2'], ['h2']),
    mk('Erf', ['h2'], ['h3']),
    mk('Add', ['h3', 'one'], ['h4']),
    mk('Mul', ['h1', 'h4'], ['h5']),
    mk('Mul', ['h5', 'half'], ['h6']),
    mk('MatMul', ['h6', 'w2'], ['m0'], name='fc2'),
    mk('Add', ['m0', 'b2'], ['m1']),
    mk('Add', ['r2', 'm1'], ['y']),
]
inits = [w('emb', V, D, s=1.0), numpy_helper.from_array(np.ones(D, np.float32), 'ln1_s'),
         numpy_helper.from_array(np.zeros(D, np.float32), 'ln1_b'),
         w('qkv1_w', D, 3 * D), w('qkv1_b', 3 * D, s=0.1), w('wo', D, D),
         numpy_helper.from_array((1 + 0.1 * rng.standard_normal(D)).astype(np.float32), 'ln2_s'),
         numpy_helper.from_array((0.1 * rng.standard_normal(D)).astype(np.float32), 'ln2_b'),
         w('qkv2_w', D, 3 * D), w('qkv2_b', 3 * D, s=0.1),
         w('w1', D, H), w('b1', H, s=0.1), w('w2', H, D), w('b2', D, s=0.1),
         numpy_helper.from_array(np.array(np.sqrt(2), np.float32), 'sqrt2'),
         numpy_helper.from_array(np.array(1, np.float32), 'one'),
         numpy_helper.from_array(np.array(0.5, np.float32), 'half')]
ins = [helper.make_tensor_value_info('ids', TensorProto.INT64, [1, S]),
       helper.make_tensor_value_info('mask', TensorProto.INT32, [1, S])]
g = helper.make_graph(nodes, 'atn', ins,
                      [helper.make_tensor_value_info('y', F, [1, S, D])],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17),
                                        helper.make_opsetid('com.microsoft', 1)])
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
onnx.save(m, os.path.join(OUT, 'atn.onnx'))
for k in range(8):
    d = os.path.join(OUT, 'atn.data', 's%d' % k)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, 'ids.npy'), rng.integers(0, V, (1, S)).astype(np.int64))
    mask = np.ones((1, S), np.int32)
    mask[0, S - k // 2:] = 0            # padding at the end, 0 to 3 tokens
    np.save(os.path.join(d, 'mask.npy'), mask)
