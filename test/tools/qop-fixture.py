#!/usr/bin/python3
"""qop-fixture.py: a small fp32 model with every operator kind that
onnx-qdq-insert --format qoperator writes (test/qoperator.bats): Conv with
a bias and a Relu to fold, Add, Sigmoid, Mul, LeakyRelu, MaxPool,
AveragePool, Concat, Transpose, Reshape, MatMul, Softmax,
GlobalAveragePool, Flatten and Gemm.

usage: qop-fixture.py OUT.onnx
"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)


def w(name, *shape, s=0.3):
    return numpy_helper.from_array(rng.normal(0, s, shape).astype(np.float32), name)


nodes = [
    helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['c1'], ['r1']),
    helper.make_node('Conv', ['r1', 'w2', 'b2'], ['c2'], pads=[1, 1, 1, 1]),
    helper.make_node('Add', ['r1', 'c2'], ['a']),
    helper.make_node('Sigmoid', ['a'], ['s']),
    helper.make_node('Mul', ['a', 's'], ['m']),
    helper.make_node('LeakyRelu', ['m'], ['l'], alpha=0.1),
    helper.make_node('MaxPool', ['l'], ['p'], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node('AveragePool', ['l'], ['ap'], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node('Concat', ['p', 'ap'], ['cat'], axis=1),
    helper.make_node('Transpose', ['cat'], ['t'], perm=[0, 2, 3, 1]),
    helper.make_node('Reshape', ['t', 'shape'], ['rs']),
    helper.make_node('MatMul', ['rs', 'wm'], ['mm']),
    helper.make_node('Softmax', ['mm'], ['prob'], axis=-1),
    helper.make_node('GlobalAveragePool', ['cat'], ['g']),
    helper.make_node('Flatten', ['g'], ['f']),
    helper.make_node('Gemm', ['f', 'wg', 'bg'], ['logits']),
]
inits = [w('w1', 8, 3, 3, 3), w('b1', 8, s=0.1), w('w2', 8, 8, 3, 3, s=0.15),
         w('b2', 8, s=0.1), numpy_helper.from_array(np.array([1, 64, 16], np.int64), 'shape'),
         w('wm', 16, 12), w('wg', 16, 10), w('bg', 10, s=0.1)]
g = helper.make_graph(nodes, 'qop_fixture',
                      [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 16, 16])],
                      [helper.make_tensor_value_info('prob', TensorProto.FLOAT, [1, 64, 12]),
                       helper.make_tensor_value_info('logits', TensorProto.FLOAT, [1, 10])],
                      inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
m.ir_version = 7
onnx.checker.check_model(m, full_check=True)
onnx.save(m, sys.argv[1])
