#!/usr/bin/python3
"""make-fixtures.py: the small models test/unit/interp_test.c runs.
Run with Debian's /usr/bin/python3 (onnx, numpy):
    /usr/bin/python3 make-fixtures.py [DIR]
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


def save(name, nodes, inputs, outputs, inits=(), opset=13, ir=7):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='onnxq-fixtures')
    m.ir_version = ir
    with open(os.path.join(HERE, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


# Graph inputs and an initializer as outputs, an unused node output, an
# initializer also listed as an input (IR 3 style), nodes out of order.
c = numpy_helper.from_array(np.array([1, 2, 3], np.float32), 'c')
save('io', [helper.make_node('Relu', ['a'], ['b'], name='relu1'),
            helper.make_node('Add', ['x', 'c'], ['a'], name='add1'),
            helper.make_node('Neg', ['x'], ['dead'], name='neg1'),
            helper.make_node('Identity', ['k'], ['k2'], name='id1')],
     [vi('x', TensorProto.FLOAT, [2, 3]), vi('c', TensorProto.FLOAT, [3]),
      vi('k', TensorProto.INT64, ['n'])],
     [vi('b', TensorProto.FLOAT, [2, 3]), vi('x', TensorProto.FLOAT, [2, 3]),
      vi('c', TensorProto.FLOAT, [3]), vi('a', TensorProto.FLOAT, [2, 3]),
      vi('k2', TensorProto.INT64, ['n'])],
     [c])

save('missing', [helper.make_node('NoSuchOp', ['x'], ['t'], name='n1'),
                 helper.make_node('Relu', ['t'], ['u'], name='r1'),
                 helper.make_node('Frob', ['u'], ['y'], name='',
                                  domain='com.example')],
     [vi('x', TensorProto.FLOAT, [2])], [vi('y', TensorProto.FLOAT, [2])])

# An absent optional input ("" min) and a kernel error to be prefixed.
save('optional', [helper.make_node('Clip', ['x', '', 'hi'], ['y'], name='clip1'),
                  helper.make_node('Reshape', ['y', 'shape'], ['z'], name='r1')],
     [vi('x', TensorProto.FLOAT, [4]), vi('shape', TensorProto.INT64, [1])],
     [vi('z', TensorProto.FLOAT, None)],
     [numpy_helper.from_array(np.array(0.5, np.float32), 'hi')])

save('opset22', [helper.make_node('Relu', ['x'], ['y'])],
     [vi('x', TensorProto.FLOAT, [2])], [vi('y', TensorProto.FLOAT, [2])],
     opset=22, ir=10)

# A Constant read by a node and listed as an output (kept across runs),
# and a Constant with two values, which fails when the graph runs.
save('constant', [helper.make_node('Constant', [], ['w'], name='w1',
                                   value=numpy_helper.from_array(
                                       np.array([1, 2, 3], np.float32))),
                  helper.make_node('Add', ['x', 'w'], ['y'], name='add1')],
     [vi('x', TensorProto.FLOAT, [3])],
     [vi('y', TensorProto.FLOAT, [3]), vi('w', TensorProto.FLOAT, [3])])
save('badconst', [helper.make_node('Constant', [], ['z'], name='bad',
                                   value_float=1.0, value_int=2)],
     [], [vi('z', TensorProto.FLOAT, None)])
