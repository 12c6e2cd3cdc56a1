#!/usr/bin/python3
"""make-fixtures.py: the fixtures of test/mixprec.bats. Needs Debian's
python3-onnx and numpy (run as /usr/bin/python3).

    make-fixtures.py        write the committed fixtures here:

pr19925.onnx   the example graph of ONNX Runtime's pull request 19925
               (mixed-precision overrides), with the operators of its
               test (test_mixed_prec_quant_overrides_fixer.py), nodes
               and tensors named as in the pull request:

    input_0 -> Op1 -> Op3 -> Op5 -> Op6 -> output_0
                              ^
                              |
    input_1 -> Op2 -+-> Op4 --+
                    |
                    +-> Op7 -> output_1
                    |
                    +-> Op8 -> output_2

               Op1 Sigmoid, Op2 Cos, Op3 Sin, Op4 Tanh, Op5 Mul, Op6 Relu,
               Op7 Cos, Op8 Sigmoid; inputs and outputs float 1x4x16.
calib/         4 samples (calib/sN/NAME.npy) of uniform noise in
               [-3, 3] for onnx-calib.
eval/          3 other samples, in [-2.5, 2.5] (so that nothing clips),
               for onnx-verify and --target-snr.
chain.onnx     Conv -> Relu -> Conv -> Reshape -> MatMul -> Add, input
               1x2x6x6: weights, biases, a folded Relu and a shared
               Reshape inside a promoted region; with calib/ and eval/
               samples under chain-calib/ (8, in [-3.5, 3.5]) and
               chain-eval/ (8, in [-2.5, 2.5]); output 1x48.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE = [1, 4, 16]


def save(m, name):
    onnx.checker.check_model(m)
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(m.SerializeToString())


def model(graph, opset):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('',
                          opset)], producer_name='onnxq-fixtures')
    m.ir_version = 8
    return m


def samples(d, names, shapes, n, seed, lo=-3.0, hi=3.0):
    rng = np.random.default_rng(seed)
    for s in range(n):
        sd = os.path.join(HERE, d, 's%d' % s)
        os.makedirs(sd, exist_ok=True)
        for name, shape in zip(names, shapes):
            x = rng.uniform(lo, hi, size=shape).astype(np.float32)
            np.save(os.path.join(sd, name + '.npy'), x)


def pr19925():
    def vi(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, SHAPE)

    node = helper.make_node
    nodes = [
        node('Sigmoid', ['input_0'], ['Op1_out'], name='Op1'),
        node('Cos', ['input_1'], ['Op2_out'], name='Op2'),
        node('Sin', ['Op1_out'], ['Op3_out'], name='Op3'),
        node('Tanh', ['Op2_out'], ['Op4_out'], name='Op4'),
        node('Mul', ['Op3_out', 'Op4_out'], ['Op5_out'], name='Op5'),
        node('Relu', ['Op5_out'], ['output_0'], name='Op6'),
        node('Cos', ['Op2_out'], ['output_1'], name='Op7'),
        node('Sigmoid', ['Op2_out'], ['output_2'], name='Op8'),
    ]
    g = helper.make_graph(nodes, 'pr19925', [vi('input_0'), vi('input_1')],
                          [vi('output_0'), vi('output_1'), vi('output_2')])
    save(model(g, 13), 'pr19925.onnx')
    names = ['input_0', 'input_1']
    samples('calib', names, [SHAPE, SHAPE], 4, 19925)
    samples('eval', names, [SHAPE, SHAPE], 3, 8, -2.5, 2.5)


def chain():
    rng = np.random.default_rng(7)

    def init(name, a):
        return numpy_helper.from_array(np.asarray(a, np.float32), name)

    node = helper.make_node
    inits = [
        init('W1', rng.normal(0, 0.5, (4, 2, 3, 3))),
        init('B1', rng.normal(0, 0.1, (4,))),
        init('W2', rng.normal(0, 0.3, (4, 4, 3, 3))),
        init('B2', rng.normal(0, 0.1, (4,))),
        numpy_helper.from_array(np.array([1, 64], np.int64), 'shape'),
        init('M', rng.normal(0, 0.2, (64, 48))),
        init('C', rng.normal(0, 0.1, (48,))),
    ]
    nodes = [
        node('Conv', ['x', 'W1', 'B1'], ['c1'], name='conv1',
             pads=[1, 1, 1, 1]),
        node('Relu', ['c1'], ['r1'], name='relu1'),
        node('Conv', ['r1', 'W2', 'B2'], ['c2'], name='conv2'),
        node('Reshape', ['c2', 'shape'], ['flat'], name='reshape'),
        node('MatMul', ['flat', 'M'], ['mm'], name='matmul'),
        node('Add', ['mm', 'C'], ['y'], name='add'),
    ]
    g = helper.make_graph(
        nodes, 'chain',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 48])],
        inits)
    save(model(g, 13), 'chain.onnx')
    # Calibration wider than evaluation: no clipping, only rounding.
    samples('chain-calib', ['x'], [[1, 2, 6, 6]], 8, 31, -3.5, 3.5)
    samples('chain-eval', ['x'], [[1, 2, 6, 6]], 8, 32, -2.5, 2.5)


if __name__ == '__main__':
    pr19925()
    chain()
