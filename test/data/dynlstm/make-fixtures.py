#!/usr/bin/python3
"""make-fixtures.py: the LSTM model test/dynamic-lstm.bats quantizes
dynamically, with evaluation data. Run with Debian's /usr/bin/python3
(onnx, numpy):
    /usr/bin/python3 make-fixtures.py [--large] DIR

DIR/kws.onnx: a keyword spotter in miniature, time-major (layout 0):
features x (T x 1 x 20) projected by MatMul + Add + Relu to 32, a
bidirectional LSTM (hidden 32, bias, every output used), its Y made
T x 1 x 64 (Transpose, Reshape), a forward LSTM (hidden 32, no bias,
only Y_h read), and a Gemm head (transB=1, bias) giving 8 logits.
opset 14. DIR/kws.data/sK/x.npy: 8 samples (smooth random features).
--large makes the features 40 wide over 100 steps and the LSTMs 128
wide (for latency measurements, scripts/bench-dynamic).
The same seed gives the same model everywhere.
"""
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

LARGE = sys.argv[1:2] == ['--large']
if len(sys.argv) > 2 + LARGE:
    sys.exit('usage: make-fixtures.py [--large] [DIR]')
OUT = sys.argv[-1] if len(sys.argv) > 1 + LARGE else '.'
rng = np.random.default_rng(18)
F = TensorProto.FLOAT
T, FEAT, P, H, NCLS = (100, 40, 128, 128, 8) if LARGE else (24, 20, 32, 32, 8)


def t(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def w(name, *shape, s):
    return t(name, rng.standard_normal(shape) * s)


def lstm_weights(prefix, ndir, nin, bias):
    inits = [w(prefix + '_W', ndir, 4 * H, nin, s=1.0 / np.sqrt(nin)),
             w(prefix + '_R', ndir, 4 * H, H, s=1.0 / np.sqrt(H))]
    if bias:
        b = rng.standard_normal((ndir, 8 * H)) * 0.1
        b[:, H:2 * H] += 0.5           # output gate a little open
        b[:, 2 * H:3 * H] += 1.0       # forget gate bias, as trained
        inits.append(t(prefix + '_B', b))
    return inits


nodes = [
    helper.make_node('MatMul', ['x', 'proj_w'], ['proj_mm'], 'proj'),
    helper.make_node('Add', ['proj_mm', 'proj_b'], ['proj_add'], 'proj_bias'),
    helper.make_node('Relu', ['proj_add'], ['proj_out'], 'proj_relu'),
    helper.make_node('LSTM', ['proj_out', 'l1_W', 'l1_R', 'l1_B'],
                     ['l1_Y', 'l1_Yh', 'l1_Yc'], 'lstm1',
                     hidden_size=H, direction='bidirectional'),
    helper.make_node('Transpose', ['l1_Y'], ['l1_T'], 'l1_t',
                     perm=[0, 2, 1, 3]),
    helper.make_node('Reshape', ['l1_T', 'shape_l2'], ['l2_in'], 'l1_r'),
    helper.make_node('LSTM', ['l2_in', 'l2_W', 'l2_R'], ['', 'l2_Yh'],
                     'lstm2', hidden_size=H),
    helper.make_node('Reshape', ['l2_Yh', 'shape_head'], ['head_in'],
                     'l2_r'),
    helper.make_node('Gemm', ['head_in', 'head_w', 'head_b'], ['logits'],
                     'head', transB=1),
]
inits = [w('proj_w', FEAT, P, s=1.0 / np.sqrt(FEAT)),
         t('proj_b', rng.standard_normal(P) * 0.1)]
inits += lstm_weights('l1', 2, P, True)
inits += lstm_weights('l2', 1, 2 * H, False)
inits += [numpy_helper.from_array(np.array([T, 1, 2 * H], np.int64),
                                  'shape_l2'),
          numpy_helper.from_array(np.array([1, H], np.int64), 'shape_head'),
          w('head_w', NCLS, H, s=1.0 / np.sqrt(H)),
          t('head_b', rng.standard_normal(NCLS) * 0.1)]
g = helper.make_graph(
    nodes, 'kws', [helper.make_tensor_value_info('x', F, [T, 1, FEAT])],
    [helper.make_tensor_value_info('logits', F, [1, NCLS])],
    initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 14)])
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
os.makedirs(OUT, exist_ok=True)
onnx.save(m, os.path.join(OUT, 'kws.onnx'))
for k in range(8):
    # Features that change slowly over time, as filterbank energies do.
    x = rng.standard_normal((T + 4, 1, FEAT))
    x = (x[:-4] + x[1:-3] + x[2:-2] + x[3:-1] + x[4:]) / 2.0
    d = os.path.join(OUT, 'kws.data', 's%d' % k)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, 'x.npy'), x.astype(np.float32))
