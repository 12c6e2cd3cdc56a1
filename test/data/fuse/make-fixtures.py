#!/usr/bin/python3
"""make-fixtures.py: models whose elementwise chains the interpreter runs
fused (lib/fuse.c), for test/unit/fuse_test.c. Run with Debian's
/usr/bin/python3 (onnx, numpy):
    /usr/bin/python3 make-fixtures.py DIR

chains.onnx (opset 13): x (2x3x17x19) through
  hard-swish as Paddle exports it: Add(x, 3) -> Clip(0, 6) -> Mul(x, .)
    -> Div(., 6), a Constant node between the links;
  then HardSigmoid -> Mul(h, .) (x * hardsigmoid(x) on the hard-swish);
  then Sub(2, .) -> Relu -> Mul(., 0.5), whose Relu output is also a
    graph output (the chain must stop before it);
  and a side branch Mul(x, 2) read twice (no chain).
clip10.onnx (opset 10): Add(x, 3) -> Clip(min=0, max=6 attributes)
  -> Mul(x, .) -> Div(., 6).
qdq.onnx (opset 13, com.microsoft 1): Add(x, 3) -> QuantizeLinear (uint8)
  -> DequantizeLinear -> Mul(., 2) -> com.microsoft QuantizeLinear
  (uint16) -> DequantizeLinear -> Relu -> QuantizeLinear read by two
  DequantizeLinear (no link) -> Add = y; and x -> QuantizeLinear read by
  a DequantizeLinear and a Cast (no link) -> Add = z.
reuse.onnx (opset 13, x 2x3x100x100: blocks of lib/fuse.c): chains whose
  input is a node's output, written in place when only the chain reads
  it: t = Mul(x, 2) -> Add(., 3) -> Relu, t read after by a Sigmoid
  (not in place), Add of the two = y; v = Mul(x, 0.5) -> hard-swish,
  v read only by the chain's Add and Mul (in place) = h.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save_model

out = sys.argv[1] if len(sys.argv) > 1 else '.'
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT
SHAPE = [2, 3, 17, 19]


def const(name, v, shape=()):
    return numpy_helper.from_array(np.array(v, np.float32).reshape(shape),
                                   name)


def save(name, nodes, outputs, inits, opset):
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info('x', F, SHAPE)],
        [helper.make_tensor_value_info(o, F, SHAPE) for o in outputs],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 7
    save_model(m, os.path.join(out, name + '.onnx'))


n = helper.make_node
save('chains', [
    n('Add', ['x', 'three'], ['a']),
    n('Constant', [], ['six'], value=numpy_helper.from_array(
        np.array([6], np.float32))),
    n('Clip', ['a', 'zero', 'six'], ['b']),
    n('Mul', ['x', 'b'], ['m']),
    n('Div', ['m', 'six'], ['h']),
    n('HardSigmoid', ['h'], ['s'], alpha=0.25, beta=0.4),
    n('Mul', ['h', 's'], ['hs']),
    n('Sub', ['two', 'hs'], ['d']),
    n('Relu', ['d'], ['r']),
    n('Mul', ['r', 'half'], ['y']),
    n('Mul', ['x', 'two'], ['t']),
    n('Add', ['t', 't'], ['z']),
], ['y', 'r', 'z'], [const('three', 3), const('zero', 0),
                     const('two', 2, [1]), const('half', 0.5, [1, 1])], 13)
save('clip10', [
    n('Add', ['x', 'three'], ['a']),
    n('Clip', ['a'], ['b'], min=0.0, max=6.0),
    n('Mul', ['x', 'b'], ['m']),
    n('Div', ['m', 'six'], ['y']),
], ['y'], [const('three', 3), const('six', 6)], 10)

U8, U16 = np.uint8, np.uint16
g = helper.make_graph([
    n('Add', ['x', 'three'], ['a']),
    n('QuantizeLinear', ['a', 'qs', 'qz'], ['aq']),
    n('DequantizeLinear', ['aq', 'qs', 'qz'], ['ad']),
    n('Mul', ['ad', 'two'], ['m']),
    n('QuantizeLinear', ['m', 'ws', 'wz'], ['mq'], domain='com.microsoft'),
    n('DequantizeLinear', ['mq', 'ws', 'wz'], ['md'],
      domain='com.microsoft'),
    n('Relu', ['md'], ['r']),
    n('QuantizeLinear', ['r', 'qs', 'qz'], ['rq']),
    n('DequantizeLinear', ['rq', 'qs', 'qz'], ['rd1']),
    n('DequantizeLinear', ['rq', 'qs', 'qz'], ['rd2']),
    n('Add', ['rd1', 'rd2'], ['y']),
    n('QuantizeLinear', ['x', 'qs', 'qz'], ['xq']),
    n('DequantizeLinear', ['xq', 'qs', 'qz'], ['xd']),
    n('Cast', ['xq'], ['xc'], to=F),
    n('Add', ['xd', 'xc'], ['z']),
], 'qdq', [helper.make_tensor_value_info('x', F, SHAPE)],
    [helper.make_tensor_value_info(o, F, SHAPE) for o in ['y', 'z']],
    [const('three', 3), const('two', 2),
     numpy_helper.from_array(np.array(0.0625, np.float32), 'qs'),
     numpy_helper.from_array(np.array(128, U8), 'qz'),
     numpy_helper.from_array(np.array([0.001], np.float32), 'ws'),
     numpy_helper.from_array(np.array([1000], U16), 'wz')])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13),
                                        helper.make_opsetid('com.microsoft',
                                                            1)])
m.ir_version = 7
save_model(m, os.path.join(out, 'qdq.onnx'))

RSHAPE = [2, 3, 100, 100]
g = helper.make_graph([
    n('Mul', ['x', 'two'], ['t']),
    n('Add', ['t', 'three'], ['a']),
    n('Relu', ['a'], ['r']),
    n('Sigmoid', ['t'], ['u']),
    n('Add', ['r', 'u'], ['y']),
    n('Mul', ['x', 'half'], ['v']),
    n('Add', ['v', 'three'], ['va']),
    n('Clip', ['va', 'zero', 'six'], ['vb']),
    n('Mul', ['v', 'vb'], ['vm']),
    n('Div', ['vm', 'six'], ['h']),
], 'reuse', [helper.make_tensor_value_info('x', F, RSHAPE)],
    [helper.make_tensor_value_info(o, F, RSHAPE) for o in ['y', 'h']],
    [const('two', 2), const('three', 3), const('half', 0.5),
     const('zero', 0), const('six', 6)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
m.ir_version = 7
save_model(m, os.path.join(out, 'reuse.onnx'))
