#!/usr/bin/python3
"""structure.py: what every node of a QDQ model reads, for test/mixprec.bats.

    structure.py QMODEL

For each node that is not a QuantizeLinear or DequantizeLinear, in graph
order, and each of its inputs that comes out of a DequantizeLinear, one
line: "NODE TENSOR TYPES", where TENSOR is the float tensor first
quantized (the input of the first QuantizeLinear of the chain, with
onnx-qdq-insert's _QuantizeLinear_Input suffix of graph outputs taken
off) and TYPES the quantized types the value went through, in order,
joined by ">" ("uint8>uint16" for a convert). Inputs read in float are
"NODE TENSOR float". Needs Debian's python3-onnx (run as
/usr/bin/python3).
"""
import sys

import onnx
from onnx import TensorProto

QDQ = ('QuantizeLinear', 'DequantizeLinear')


def main():
    m = onnx.load(sys.argv[1])
    g = m.graph
    producer = {o: n for n in g.node for o in n.output}
    inits = {t.name: t for t in g.initializer}

    def zp_type(node):
        if len(node.input) < 3 or node.input[2] not in inits:
            return 'uint8'
        return TensorProto.DataType.Name(
            inits[node.input[2]].data_type).lower()

    def trace(name):
        types = []
        while name in producer and producer[name].op_type in QDQ:
            n = producer[name]
            if n.op_type == 'DequantizeLinear':
                types.append(zp_type(n))
            name = n.input[0]
        if name.endswith('_QuantizeLinear_Input'):
            name = name[:-len('_QuantizeLinear_Input')]
        return name, list(reversed(types))

    for n in g.node:
        if n.op_type in QDQ:
            continue
        for x in n.input:
            if not x or x in inits:
                continue
            name, types = trace(x)
            print(n.name, name, '>'.join(types) if types else 'float')


if __name__ == '__main__':
    main()
