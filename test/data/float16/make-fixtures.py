#!/usr/bin/python3
"""make-fixtures.py: small conv nets in float16 and bfloat16 for
test/float16.bats, and their inputs. Run with Debian's /usr/bin/python3
(onnx, numpy) from this directory:
    /usr/bin/python3 make-fixtures.py [DIR]

conv16.onnx: x (1x3x12x12, float16) -> Conv 3x3 (8 channels) -> Relu
-> Conv 3x3 (8) -> Relu -> GlobalAveragePool -> Flatten -> Gemm (4
classes) -> y (float16); every weight and bias float16. conv16-data/
holds four samples.

mlpbf16.onnx: ONNX's Conv has no bfloat16, so a bfloat16 net of MatMul,
Add, Relu and Gemm: x (2x24, bfloat16) -> MatMul (24x16) -> Add -> Relu
-> Gemm (4 classes) -> y (bfloat16). numpy has no bfloat16: initializers
are raw bits, and mlpbf16-data/ holds the inputs as uint16 npy files
(the bits; onnxq reads uint16 as bfloat16 where the model wants that),
four samples.
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
rng = np.random.default_rng(16)
C, K = 8, 4


def weights():
    return {
        'W1': rng.standard_normal((C, 3, 3, 3)) * 0.3,
        'B1': rng.standard_normal(C) * 0.1,
        'W2': rng.standard_normal((C, C, 3, 3)) * 0.15,
        'B2': rng.standard_normal(C) * 0.1,
        'G': rng.standard_normal((K, C)) * 0.5,
        'g': rng.standard_normal(K) * 0.1,
    }


def bf16_bits(a):
    """bfloat16 bits of float32 values (round to nearest even)."""
    b = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7fff + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16(name, a):
    """A bfloat16 initializer from float32 values."""
    return helper.make_tensor(name, TensorProto.BFLOAT16, a.shape,
                              bf16_bits(a).tobytes(), raw=True)


def body(x, y):
    return [
        helper.make_node('Conv', [x, 'W1', 'B1'], ['c1'], pads=[1, 1, 1, 1],
                         name='conv1'),
        helper.make_node('Relu', ['c1'], ['r1'], name='relu1'),
        helper.make_node('Conv', ['r1', 'W2', 'B2'], ['c2'],
                         pads=[1, 1, 1, 1], name='conv2'),
        helper.make_node('Relu', ['c2'], ['r2'], name='relu2'),
        helper.make_node('GlobalAveragePool', ['r2'], ['gp'], name='gap'),
        helper.make_node('Flatten', ['gp'], ['fl'], name='flat'),
        helper.make_node('Gemm', ['fl', 'G', 'g'], [y], transB=1,
                         name='head'),
    ]


def save(name, g, opset=17):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='onnxq-fixtures')
    m.ir_version = 8 if opset < 19 else 9
    onnx.checker.check_model(m, full_check=True)
    with open(os.path.join(HERE, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def samples(name, dtype, n=4):
    for i in range(n):
        d = os.path.join(HERE, name + '-data', 's%d' % i)
        os.makedirs(d, exist_ok=True)
        x = rng.standard_normal((1, 3, 12, 12)).astype(dtype)
        np.save(os.path.join(d, 'x.npy'), x)


def conv16():
    w = weights()
    inits = [numpy_helper.from_array(v.astype(np.float16), k)
             for k, v in w.items()]
    g = helper.make_graph(
        body('x', 'y'), 'conv16',
        [vi('x', TensorProto.FLOAT16, [1, 3, 12, 12])],
        [vi('y', TensorProto.FLOAT16, [1, K])], inits)
    save('conv16', g)
    samples('conv16', np.float16)


def mlpbf16():
    a = {'Wm': rng.standard_normal((24, 16)) * 0.3,
         'bm': rng.standard_normal(16) * 0.1,
         'Gm': rng.standard_normal((K, 16)) * 0.4,
         'gm': rng.standard_normal(K) * 0.1}
    nodes = [
        helper.make_node('MatMul', ['x', 'Wm'], ['mm'], name='mm'),
        helper.make_node('Add', ['mm', 'bm'], ['ab'], name='bias'),
        helper.make_node('Relu', ['ab'], ['r'], name='relu'),
        helper.make_node('Gemm', ['r', 'Gm', 'gm'], ['y'], transB=1,
                         name='head'),
    ]
    g = helper.make_graph(
        nodes, 'mlpbf16', [vi('x', TensorProto.BFLOAT16, [2, 24])],
        [vi('y', TensorProto.BFLOAT16, [2, K])],
        [bf16(k, v) for k, v in a.items()])
    save('mlpbf16', g)
    for i in range(4):
        d = os.path.join(HERE, 'mlpbf16-data', 's%d' % i)
        os.makedirs(d, exist_ok=True)
        x = rng.standard_normal((2, 24)).astype(np.float32)
        np.save(os.path.join(d, 'x.npy'), bf16_bits(x))


conv16()
mlpbf16()
