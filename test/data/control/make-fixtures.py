#!/usr/bin/python3
"""make-fixtures.py: the control-flow models test/control.bats runs against
ONNX Runtime, and their inputs. Run with Debian's /usr/bin/python3 (onnx,
numpy) from this directory:
    /usr/bin/python3 make-fixtures.py [DIR]

vad.onnx: a voice-activity detector in miniature. Features x (1x16x8) and
the sample rate sr (int64 scalar); an If on sr == 16000 picks one of two
branches, each an LSTM (forward in one, bidirectional in the other) over
the features and a Gemm or MatMul on its last state, with every weight
an initializer of the main graph (outer scope). Before the If, a MatMul
and Add in the main graph project the features with a weight Wp that the
16 kHz branch reads as well (a float weight the quantizer must keep for
the subgraph); the If reads the projection only inside its branches.
vad-data/ holds a sample per rate.

loop.onnx: a Loop with a trip count and a condition the body computes,
a carried state updated by a MatMul with an outer-scope weight, a scan
output of every state, and a GRU over the scan outputs after the loop.
A MatMul in the main graph makes the input x0 into x, which only the body
reads, and another multiplies the final state by the body's weight Wl.
loop-data/ holds two samples (one stops on the condition).

scan.onnx: a Scan summing over the time axis (axis 1) of a sequence in
both directions, then a MatMul on the forward outputs and an RNN with
sequence_lens. scan-data/ one sample.

lstm.onnx: no control flow: a MatMul projecting the features, an LSTM
(time-major) and a Gemm on its last state. lstm-data/ two samples.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Written into the directory given, by default this one; make check
# writes them into $(BUILD)/test/fixtures (no binaries in the tree).
HERE = sys.argv[1] if len(sys.argv) > 1 else \
    os.path.dirname(os.path.abspath(__file__))
os.makedirs(HERE, exist_ok=True)
vi = helper.make_tensor_value_info
rng = np.random.default_rng(17)
T, F, H = 16, 8, 12


def init(name, *shape, scale=0.4):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name)


def save(name, g, opset=17):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='onnxq-fixtures')
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    with open(os.path.join(HERE, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def sample(model, sname, **arrays):
    d = os.path.join(HERE, model + '-data', sname)
    os.makedirs(d, exist_ok=True)
    for k, v in arrays.items():
        np.save(os.path.join(d, k + '.npy'), v)


def vad():
    prob = vi('prob', TensorProto.FLOAT, [1, 1])
    # 16 kHz: forward LSTM, last state through Gemm.
    then = helper.make_graph([
        helper.make_node('MatMul', ['xt', 'Wp'], ['xp16'], name='proj16'),
        helper.make_node('LSTM', ['xp16', 'W16', 'R16', 'B16'], ['y16', 'h16'],
                         hidden_size=H, name='lstm16'),
        helper.make_node('Squeeze', ['h16', 'ax0'], ['hs16'], name='sq16'),
        helper.make_node('Gemm', ['hs16', 'G16', 'g16'], ['logit16'],
                         transB=1, name='gemm16'),
        helper.make_node('Sigmoid', ['logit16'], ['prob16'], name='sig16'),
    ], 'rate16k', [], [vi('prob16', TensorProto.FLOAT, [1, 1])])
    # 8 kHz: bidirectional LSTM with peepholes, MatMul on both states.
    other = helper.make_graph([
        helper.make_node('LSTM', ['xt', 'W8', 'R8', 'B8', '', '', '', 'P8'],
                         ['y8', 'h8'], hidden_size=H,
                         direction='bidirectional', name='lstm8'),
        helper.make_node('Transpose', ['h8'], ['ht8'], perm=[1, 0, 2],
                         name='tr8'),
        helper.make_node('Reshape', ['ht8', 'flat'], ['hf8'], name='rs8'),
        helper.make_node('MatMul', ['hf8', 'M8'], ['mm8'], name='mm8'),
        helper.make_node('Add', ['mm8', 'm8'], ['logit8'], name='add8'),
        helper.make_node('Sigmoid', ['logit8'], ['prob8'], name='sig8'),
    ], 'rate8k', [], [vi('prob8', TensorProto.FLOAT, [1, 1])])
    inits = [
        init('W16', 1, 4 * H, F), init('R16', 1, 4 * H, H),
        init('B16', 1, 8 * H, scale=0.1), init('G16', 1, H),
        init('g16', 1, scale=0.1),
        init('W8', 2, 4 * H, F), init('R8', 2, 4 * H, H),
        init('B8', 2, 8 * H, scale=0.1), init('P8', 2, 3 * H, scale=0.2),
        init('M8', 2 * H, 1),
        numpy_helper.from_array(np.array([1.0], np.float32), 'm8'),
        numpy_helper.from_array(np.array([0], np.int64), 'ax0'),
        numpy_helper.from_array(np.array([1, 2 * H], np.int64), 'flat'),
        numpy_helper.from_array(np.array(16000, np.int64), 'rate16k'),
        init('Wp', F, F), init('bp', F, scale=0.1),
    ]
    g = helper.make_graph([
        helper.make_node('MatMul', ['x', 'Wp'], ['xw'], name='proj'),
        helper.make_node('Add', ['xw', 'bp'], ['xb'], name='proj_bias'),
        helper.make_node('Transpose', ['xb'], ['xt'], perm=[1, 0, 2],
                         name='to_time_major'),
        helper.make_node('Equal', ['sr', 'rate16k'], ['is16k'], name='is16k'),
        helper.make_node('If', ['is16k'], ['p'], then_branch=then,
                         else_branch=other, name='by_rate'),
        helper.make_node('Identity', ['p'], ['prob'], name='out'),
    ], 'vad', [vi('x', TensorProto.FLOAT, [1, T, F]),
               vi('sr', TensorProto.INT64, [])], [prob], inits)
    save('vad', g)
    x = rng.standard_normal((1, T, F)).astype(np.float32)
    sample('vad', 'sr16000', x=x, sr=np.array(16000, np.int64))
    sample('vad', 'sr8000', x=x, sr=np.array(8000, np.int64))


def loop():
    D = 6
    body = helper.make_graph([
        helper.make_node('MatMul', ['s_in', 'Wl'], ['mm'], name='mm'),
        helper.make_node('Add', ['mm', 'x'], ['pre'], name='addx'),
        helper.make_node('Tanh', ['pre'], ['s_out'], name='tanh'),
        helper.make_node('Cast', ['i'], ['fi'], to=TensorProto.FLOAT,
                         name='cast_i'),
        helper.make_node('Mul', ['s_out', 'fi'], ['scaled'], name='scale'),
        helper.make_node('Identity', ['scaled'], ['scan'], name='scan_id'),
        helper.make_node('ReduceSum', ['s_out'], ['tot'], keepdims=0,
                         name='tot'),
        helper.make_node('Less', ['tot', 'limit'], ['go'], name='go'),
    ], 'body', [vi('i', TensorProto.INT64, []),
                vi('c_in', TensorProto.BOOL, []),
                vi('s_in', TensorProto.FLOAT, [1, D])],
        [vi('go', TensorProto.BOOL, []),
         vi('s_out', TensorProto.FLOAT, [1, D]),
         vi('scan', TensorProto.FLOAT, [1, D])])
    inits = [init('Wl', D, D, scale=0.6), init('Wx', D, D),
             init('Wg', 1, 3 * 4, D), init('Rg', 1, 3 * 4, 4),
             init('Bg', 1, 6 * 4, scale=0.1),
             numpy_helper.from_array(np.array(True), 'yes'),
             numpy_helper.from_array(np.zeros((1, D), np.float32), 's0')]
    g = helper.make_graph([
        helper.make_node('MatMul', ['x0', 'Wx'], ['x'], name='in_proj'),
        helper.make_node('Loop', ['n', 'yes', 's0'], ['s', 'states'],
                         body=body, name='loop'),
        helper.make_node('GRU', ['states', 'Wg', 'Rg', 'Bg'], ['gy', 'gh'],
                         hidden_size=4, linear_before_reset=1, name='gru'),
        helper.make_node('MatMul', ['s', 'Wl'], ['sw'], name='out_proj'),
    ], 'loop', [vi('x0', TensorProto.FLOAT, [1, D]),
                vi('n', TensorProto.INT64, []),
                vi('limit', TensorProto.FLOAT, [])],
        [vi('s', TensorProto.FLOAT, [1, D]),
         vi('states', TensorProto.FLOAT, ['t', 1, D]),
         vi('gh', TensorProto.FLOAT, [1, 1, 4]),
         vi('sw', TensorProto.FLOAT, [1, D])], inits)
    save('loop', g)
    x = rng.standard_normal((1, D)).astype(np.float32)
    sample('loop', 'all', x0=x, n=np.array(7, np.int64),
           limit=np.array(100, np.float32))
    sample('loop', 'stops', x0=x, n=np.array(7, np.int64),
           limit=np.array(-100, np.float32))


def scan():
    body = helper.make_graph([
        helper.make_node('Add', ['acc_in', 'xs'], ['acc_out'], name='acc'),
        helper.make_node('Mul', ['acc_out', 'k'], ['ys'], name='ys'),
    ], 'body', [vi('acc_in', TensorProto.FLOAT, [2, 5]),
                vi('xs', TensorProto.FLOAT, [2, 5])],
        [vi('acc_out', TensorProto.FLOAT, [2, 5]),
         vi('ys', TensorProto.FLOAT, [2, 5])])
    inits = [init('k', 1), init('Wr', 2, 3, 5), init('Rr', 2, 3, 3),
             init('Br', 2, 6, scale=0.1),
             numpy_helper.from_array(np.zeros((2, 5), np.float32), 'zero'),
             init('Wm', 5, 5)]
    g = helper.make_graph([
        helper.make_node('Scan', ['zero', 'seq'], ['total', 'fw'],
                         body=body, num_scan_inputs=1, scan_input_axes=[1],
                         scan_output_axes=[0], name='fwd'),
        helper.make_node('Scan', ['zero', 'seq'], ['rtotal', 'bw'],
                         body=body, num_scan_inputs=1, scan_input_axes=[1],
                         scan_input_directions=[1], scan_output_axes=[1],
                         scan_output_directions=[1], name='bwd'),
        helper.make_node('MatMul', ['fw', 'Wm'], ['fwm'], name='mix'),
        helper.make_node('RNN', ['fwm', 'Wr', 'Rr', 'Br', 'lens'], ['ry', 'rh'],
                         hidden_size=3, direction='bidirectional',
                         activations=['Tanh', 'Relu'], name='rnn'),
    ], 'scan', [vi('seq', TensorProto.FLOAT, [2, 4, 5]),
                vi('lens', TensorProto.INT32, [2])],
        [vi('total', TensorProto.FLOAT, [2, 5]),
         vi('bw', TensorProto.FLOAT, [2, 4, 5]),
         vi('ry', TensorProto.FLOAT, [4, 2, 2, 3]),
         vi('rh', TensorProto.FLOAT, [2, 2, 3])], inits)
    save('scan', g)
    sample('scan', 'one',
           seq=rng.standard_normal((2, 4, 5)).astype(np.float32),
           lens=np.array([4, 3], np.int32))


def lstm():
    inits = [init('Wi', F, F), init('Wq', 1, 4 * H, F),
             init('Rq', 1, 4 * H, H), init('Bq', 1, 8 * H, scale=0.1),
             init('Gq', 3, H), init('gq', 3, scale=0.1),
             numpy_helper.from_array(np.array([0], np.int64), 'ax1')]
    g = helper.make_graph([
        helper.make_node('MatMul', ['x', 'Wi'], ['xi'], name='in_proj'),
        helper.make_node('LSTM', ['xi', 'Wq', 'Rq', 'Bq'], ['y', 'h'],
                         hidden_size=H, name='lstm'),
        helper.make_node('Squeeze', ['h', 'ax1'], ['hs'], name='sq'),
        helper.make_node('Gemm', ['hs', 'Gq', 'gq'], ['logits'], transB=1,
                         name='head'),
    ], 'lstm', [vi('x', TensorProto.FLOAT, [T, 2, F])],
        [vi('logits', TensorProto.FLOAT, [2, 3])], inits)
    save('lstm', g)
    for i in range(2):
        sample('lstm', 's%d' % i,
               x=rng.standard_normal((T, 2, F)).astype(np.float32))


vad()
loop()
scan()
lstm()
