#!/usr/bin/python3
"""make-corpus.py: the malformed-input corpus of test/malformed.bats (and
seeds for the fuzz targets, scripts/fuzz), one directory per parser:

  model/    ONNX models: broken protobuf, broken graphs, tensors that lie
            about their size, external data that escapes its directory,
            models whose declared shapes disagree with what flows at
            run time (w.bin is the external data file beside them)
  stream/   onnxq text streams
  config/   YAML recipes (checked against ok.stream)
  npy/      .npy and .npz sample files (read for model ok-vec.onnx)
  pb/       TensorProto sample files (read for model ok-vec.onnx)
  image/    PNG and JPEG images (read for model ok-image.onnx)

Files named ok-* are good inputs the cases run on (models ok-relu,
ok-vec and ok-image, samples ok-x.npy and ok-x.pb); config/ok.stream is
the stream the recipes are checked against. A few files are seeds for
the fuzz targets more than cases: NaN and infinities in data
(init-nonfinite, nonfinite.npy) are accepted with a warning.

What cannot be committed (symlinks, hard links, FIFOs, huge files) is
made at test time by test/malformed.bats, beside copies of the models
ext-symlink, ext-symdir, ext-hardlink and ext-fifo.

Needs Debian's python3-onnx and numpy: run as /usr/bin/python3. The
output is the same bytes on every run.
usage: test/data/malformed/make-corpus.py [OUTDIR]
"""
import io
import os
import struct
import sys
import warnings
import zipfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid('', 13)]
FIXED_TIME = (2024, 1, 1, 0, 0, 0)


def vi(name, dtype=TensorProto.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=None, name='g'):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=opset or OPSET,
                          producer_name='onnxq-malformed')
    m.ir_version = 7
    return m


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def ser(m):
    return m.SerializeToString()


# ---- protobuf wire helpers, for what onnx's helpers refuse to write ----

def varint(v):
    out = b''
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


# ---- the good models the cases run on ----

def ok_relu():
    """x: float 1x4 -> Relu -> y."""
    return model([helper.make_node('Relu', ['x'], ['y'], name='relu')],
                 [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])])


def ok_vec():
    """x: float Nx4 -> MatMul W (4x3) -> Add b -> y: the data cases."""
    w = init('W', np.arange(12, dtype=np.float32).reshape(4, 3) / 12)
    b = init('b', np.ones(3, np.float32))
    return model([helper.make_node('MatMul', ['x', 'W'], ['mm'], name='mm'),
                  helper.make_node('Add', ['mm', 'b'], ['y'], name='add')],
                 [vi('x', shape=['N', 4])], [vi('y', shape=['N', 3])],
                 [w, b])


def ok_image():
    """x: float 1x3x8x8 -> Relu -> y: the image cases."""
    return model([helper.make_node('Relu', ['x'], ['y'], name='relu')],
                 [vi('x', shape=[1, 3, 8, 8])],
                 [vi('y', shape=[1, 3, 8, 8])])


def with_init(tp, extra_nodes=()):
    """ok_relu plus an Add of initializer tp (so the tensor is read)."""
    return model([helper.make_node('Add', ['x', tp.name], ['a'], name='add'),
                  helper.make_node('Relu', ['a'], ['y'], name='relu')] +
                 list(extra_nodes),
                 [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])], [tp])


def raw_tensor(name, dtype, dims, raw):
    tp = TensorProto()
    tp.name = name
    tp.data_type = dtype
    tp.dims.extend(dims)
    tp.raw_data = raw
    return tp


def ext_tensor(name, dims, kv):
    tp = TensorProto()
    tp.name = name
    tp.data_type = TensorProto.FLOAT
    tp.dims.extend(dims)
    tp.data_location = TensorProto.EXTERNAL
    for k, v in kv:
        e = tp.external_data.add()
        e.key = k
        e.value = v
    return tp


# ---- model cases ----

def models():
    good = ser(ok_relu())
    c = {}
    c['empty'] = b''
    c['truncated'] = good[:len(good) // 2]
    c['garbage'] = bytes((i * 131 + 7) & 0xff for i in range(300))
    c['text'] = b'ir_version: 7\ngraph { node { op_type: "Relu" } }\n'
    # a length that runs past the end of the file
    c['bad-length'] = field(7, 2, b'')[:-1] + varint(1 << 40)
    # a group (wire type 3): not in ONNX
    c['wire-group'] = varint(7 << 3 | 3) + b'\x00'
    # GraphProto nested 300 deep through attribute g of a node
    deep = b''
    for _ in range(300):
        attr = field(1, 2, b'g') + field(6, 2, deep)
        node = field(4, 2, b'If') + field(5, 2, attr)
        deep = field(1, 2, node)
    c['deep-wire'] = field(7, 2, deep)
    c['no-graph'] = field(1, 0, varint(7))    # ir_version only
    m = ok_relu()
    m.graph.node[0].ClearField('op_type')
    c['no-op-type'] = ser(m)
    m = ok_relu()
    m.graph.node[0].op_type = 'NoSuchOp'
    c['unknown-op'] = ser(m)
    m = ok_relu()
    m.graph.node[0].domain = 'com.example'
    c['unknown-domain'] = ser(m)
    # a cycle: a = Relu(b), b = Relu(a)
    c['cycle'] = ser(model(
        [helper.make_node('Relu', ['b'], ['a'], name='r1'),
         helper.make_node('Relu', ['a'], ['b'], name='r2'),
         helper.make_node('Add', ['x', 'a'], ['y'], name='add')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])]))
    c['self-loop'] = ser(model(
        [helper.make_node('Add', ['x', 'y'], ['y'], name='loop')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])]))
    c['dup-producer'] = ser(model(
        [helper.make_node('Relu', ['x'], ['y'], name='r1'),
         helper.make_node('Neg', ['x'], ['y'], name='r2')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])]))
    c['dup-initializer'] = ser(model(
        [helper.make_node('Add', ['x', 'w'], ['y'], name='add')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])],
        [init('w', np.ones(4, np.float32)), init('w', np.zeros(4, np.float32))]))
    c['dup-input'] = ser(model(
        [helper.make_node('Relu', ['x'], ['y'], name='relu')],
        [vi('x', shape=[1, 4]), vi('x', shape=[1, 4])],
        [vi('y', shape=[1, 4])]))
    c['undefined-input'] = ser(model(
        [helper.make_node('Add', ['x', 'nowhere'], ['y'], name='add')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])]))
    c['output-not-produced'] = ser(model(
        [helper.make_node('Relu', ['x'], ['y'], name='relu')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4]), vi('ghost')]))
    # tensors that lie about their size
    c['init-huge'] = ser(with_init(raw_tensor(
        'w', TensorProto.FLOAT, [1000000, 1000000], b'\0' * 16)))
    c['init-huge-nodata'] = ser(with_init(raw_tensor(
        'w', TensorProto.FLOAT, [1 << 31, 4], b'')))
    c['init-negative-dim'] = ser(with_init(raw_tensor(
        'w', TensorProto.FLOAT, [-3, 4], b'\0' * 16)))
    c['init-overflow'] = ser(with_init(raw_tensor(
        'w', TensorProto.FLOAT, [1 << 40, 1 << 40], b'')))
    c['init-rank13'] = ser(with_init(raw_tensor(
        'w', TensorProto.FLOAT, [1] * 13, b'\0' * 4)))
    c['init-raw-short'] = ser(with_init(raw_tensor(
        'w', TensorProto.FLOAT, [4], b'\0' * 15)))
    c['init-raw-long'] = ser(with_init(raw_tensor(
        'w', TensorProto.FLOAT, [4], b'\0' * 17)))
    tp = raw_tensor('w', TensorProto.FLOAT, [4], b'')
    tp.ClearField('raw_data')
    tp.float_data.extend([1, 2, 3])
    c['init-float-data-short'] = ser(with_init(tp))
    tp = helper.make_tensor('w', TensorProto.FLOAT, [4], [1, 2, 3, 4])
    tp.data_type = 0
    c['init-no-dtype'] = ser(with_init(tp))
    tp.data_type = 99
    c['init-dtype-99'] = ser(with_init(tp))
    tp = helper.make_tensor('w', TensorProto.STRING, [1], [b'abc'])
    c['init-string'] = ser(with_init(tp))
    tp = helper.make_tensor('w', TensorProto.FLOAT, [4], [1, 2, 3, 4])
    tp.segment.begin = 0
    tp.segment.end = 2
    c['init-segment'] = ser(with_init(tp))
    tp = raw_tensor('w', TensorProto.FLOAT, [4],
                    np.array([1, np.nan, np.inf, -np.inf], '<f4').tobytes())
    c['init-nonfinite'] = ser(with_init(tp))
    # names with control bytes must not break messages in two
    tp = raw_tensor('w\nevil', TensorProto.FLOAT, [4], b'\0' * 3)
    c['name-newline'] = ser(with_init(tp))
    # NaN and infinity (warnings) through names with a newline and an
    # escape sequence
    w = numpy_helper.from_array(np.array([1, np.nan, np.inf, 2], np.float32),
                                'w\x1b[31m')
    c['names-control'] = ser(model(
        [helper.make_node('Add', ['x', 'w\x1b[31m'], ['a\nb'], name='add\nnode'),
         helper.make_node('Relu', ['a\nb'], ['y'], name='relu')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])], [w]))
    m = ok_relu()
    m.graph.node[0].name = 'relu\nnode'
    m.graph.node[0].op_type = 'No\nSuchOp'
    c['op-newline'] = ser(m)
    # external data escaping the model's directory
    for name, kv in [
            ('ext-dotdot', [('location', '../w.bin')]),
            ('ext-dotdot-inner', [('location', 'sub/../../w.bin')]),
            ('ext-absolute', [('location', '/etc/passwd')]),
            ('ext-missing', [('location', 'nonexistent.bin')]),
            ('ext-no-location', [('offset', '0')]),
            ('ext-empty-location', [('location', '')]),
            ('ext-dir', [('location', '.')]),
            ('ext-bad-offset', [('location', 'w.bin'), ('offset', '-4')]),
            ('ext-bad-length', [('location', 'w.bin'), ('length', '1e3')]),
            ('ext-past-end', [('location', 'w.bin'), ('offset', '60')]),
            ('ext-length-mismatch', [('location', 'w.bin'),
                                     ('length', '12')])]:
        c[name] = ser(with_init(ext_tensor('w', [4], kv)))
    # made links at test time: link.bin -> w.bin, ld -> ., hard.bin a
    # second name of w.bin, fifo a FIFO
    for name, loc in [('ext-symlink', 'link.bin'), ('ext-symdir', 'ld/w.bin'),
                      ('ext-hardlink', 'hard.bin'), ('ext-fifo', 'fifo')]:
        c[name] = ser(with_init(ext_tensor('w', [4], [('location', loc)])))
    c['ext-huge'] = ser(with_init(ext_tensor(
        'w', [1 << 20, 1 << 20], [('location', 'w.bin')])))
    # subgraphs nested deeper than the graph index allows (65), within
    # the wire check's 200 levels of messages: outputs without a type
    leaf = helper.make_graph([helper.make_node('Identity', ['c'], ['o'])],
                             'leaf', [], [helper.ValueInfoProto(name='o')])
    g = leaf
    for i in range(65):
        n = helper.make_node('If', ['c'], ['o'], name='if%d' % i,
                             then_branch=g, else_branch=leaf)
        g = helper.make_graph([n], 'g%d' % i, [],
                              [helper.ValueInfoProto(name='o')])
    c['deep-subgraph'] = ser(model(
        list(g.node), [vi('c', TensorProto.BOOL, [])],
        [vi('o', TensorProto.BOOL, [])]))
    m = ok_relu()
    m.opset_import[0].version = 99
    c['opset-99'] = ser(m)
    c['input-string'] = ser(model(
        [helper.make_node('Identity', ['x'], ['y'], name='id')],
        [vi('x', TensorProto.STRING, [1])],
        [vi('y', TensorProto.STRING, [1])]))
    # Constant without a value
    c['constant-empty'] = ser(model(
        [helper.make_node('Constant', [], ['k'], name='k'),
         helper.make_node('Add', ['x', 'k'], ['y'], name='add')],
        [vi('x', shape=[1, 4])], [vi('y', shape=[1, 4])]))
    # run time: what flows disagrees with what the model says
    c['run-matmul-inner'] = ser(model(
        [helper.make_node('MatMul', ['x', 'W'], ['y'], name='mm')],
        [vi('x', shape=['N', 4])], [vi('y', shape=['N', 3])],
        [init('W', np.ones((5, 3), np.float32))]))
    c['run-add-broadcast'] = ser(model(
        [helper.make_node('Add', ['x', 'b'], ['y'], name='add')],
        [vi('x', shape=['N', 4])], [vi('y', shape=['N', 4])],
        [init('b', np.ones(3, np.float32))]))
    c['run-reshape'] = ser(model(
        [helper.make_node('Reshape', ['x', 's'], ['y'], name='reshape')],
        [vi('x', shape=['N', 4])], [vi('y')],
        [init('s', np.array([3, 5], np.int64))]))
    c['run-gather-index'] = ser(model(
        [helper.make_node('Gather', ['x', 'i'], ['y'], name='gather', axis=1)],
        [vi('x', shape=['N', 4])], [vi('y')],
        [init('i', np.array([0, 7], np.int64))]))
    c['run-concat'] = ser(model(
        [helper.make_node('Concat', ['x', 'k'], ['y'], name='concat', axis=0)],
        [vi('x', shape=['N', 4])], [vi('y')],
        [init('k', np.ones((1, 5), np.float32))]))
    c['run-expand-huge'] = ser(model(
        [helper.make_node('Expand', ['x', 's'], ['y'], name='expand')],
        [vi('x', shape=['N', 4])], [vi('y')],
        [init('s', np.array([1 << 20, 1 << 20, 4], np.int64))]))
    c['run-constantofshape-huge'] = ser(model(
        [helper.make_node('ConstantOfShape', ['s'], ['k'], name='cos'),
         helper.make_node('Add', ['x', 'k'], ['y'], name='add')],
        [vi('x', shape=['N', 4])], [vi('y')],
        [init('s', np.array([1000000, 1000000], np.int64))]))
    c['run-conv-channels'] = ser(model(
        [helper.make_node('Conv', ['x', 'wc'], ['y'], name='conv')],
        [vi('x', shape=['N', 4])], [vi('y')],
        [init('wc', np.ones((2, 3, 1), np.float32))]))
    # the output declared as a different shape than computed is fine, but
    # the input's declared static shape is enforced
    c.update(run_ops())
    return c


def op_case(nodes, inits, outs=('y',), opset=13):
    """x: float Nx4 passed through, beside operators on initializers
    whose attributes or inputs are out of range at run time."""
    g = helper.make_graph(
        [helper.make_node('Identity', ['x'], ['xo'], name='id')] + nodes,
        'g', [vi('x', shape=['N', 4])],
        [vi('xo')] + [helper.ValueInfoProto(name=o) for o in outs],
        list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='onnxq-malformed')
    m.ir_version = 7
    return ser(m)


def run_ops():
    """run-op-*: an operator's attributes or inputs out of range."""
    f, i64 = np.float32, np.int64
    img = init('a', np.arange(16, dtype=f).reshape(1, 1, 4, 4))
    w2 = init('w', np.ones((1, 1, 2, 2), f))
    row = init('a', np.ones((1, 4), f))
    N = helper.make_node

    def ints(name, v):
        return init(name, np.array(v, i64))
    c = {}
    c['run-op-conv-stride0'] = op_case(
        [N('Conv', ['a', 'w'], ['y'], name='c', strides=[0, 0])], [img, w2])
    c['run-op-conv-negpad'] = op_case(
        [N('Conv', ['a', 'w'], ['y'], name='c', pads=[-5, -5, -5, -5])],
        [img, w2])
    c['run-op-conv-group'] = op_case(
        [N('Conv', ['a', 'w'], ['y'], name='c', group=3)], [img, w2])
    c['run-op-conv-kernel'] = op_case(
        [N('Conv', ['a', 'w'], ['y'], name='c', kernel_shape=[9, 9])],
        [img, w2])
    c['run-op-conv-bias'] = op_case(
        [N('Conv', ['a', 'w', 'b'], ['y'], name='c')],
        [img, w2, init('b', np.ones(7, f))])
    c['run-op-maxpool-kernel'] = op_case(
        [N('MaxPool', ['a'], ['y'], name='p', kernel_shape=[100, 100])],
        [img])
    c['run-op-avgpool-hugepad'] = op_case(
        [N('AveragePool', ['a'], ['y'], name='p', kernel_shape=[2, 2],
           pads=[1 << 30] * 4)], [img])
    c['run-op-split-sum'] = op_case(
        [N('Split', ['a', 's'], ['y', 'z'], name='s', axis=1)],
        [row, ints('s', [1, 1])], outs=('y', 'z'))
    c['run-op-transpose-perm'] = op_case(
        [N('Transpose', ['a'], ['y'], name='t', perm=[0, 0])], [row])
    c['run-op-slice-step0'] = op_case(
        [N('Slice', ['a', 's', 'e', 'ax', 'st'], ['y'], name='s')],
        [row, ints('s', [0]), ints('e', [4]), ints('ax', [1]),
         ints('st', [0])])
    c['run-op-reshape-two-minus1'] = op_case(
        [N('Reshape', ['a', 's'], ['y'], name='r')], [row, ints('s', [-1, -1])])
    c['run-op-pad-negative'] = op_case(
        [N('Pad', ['a', 'p'], ['y'], name='p')],
        [row, ints('p', [0, -9, 0, -9])])
    c['run-op-pad-empty-edge'] = op_case(
        [N('Pad', ['a', 'p'], ['y'], name='p', mode='edge')],
        [init('a', np.ones((1, 0), f)), ints('p', [0, 2, 0, 2])])
    c['run-op-resize-nan'] = op_case(
        [N('Resize', ['a', '', 's'], ['y'], name='r')],
        [img, init('s', np.array([1, 1, np.nan, 2], f))])
    c['run-op-resize-size'] = op_case(
        [N('Resize', ['a', '', '', 'z'], ['y'], name='r')],
        [img, ints('z', [1, 1, -4, 4])])
    c['run-op-tile-huge'] = op_case(
        [N('Tile', ['a', 'r'], ['y'], name='t')],
        [row, ints('r', [1 << 31, 1 << 31])])
    c['run-op-topk-k'] = op_case(
        [N('TopK', ['a', 'k'], ['y', 'yi'], name='t', axis=1)],
        [row, ints('k', [100])], outs=('y', 'yi'))
    c['run-op-gathernd-index'] = op_case(
        [N('GatherND', ['a', 'i'], ['y'], name='g')],
        [row, ints('i', [[0, 99]])])
    c['run-op-scatternd-index'] = op_case(
        [N('ScatterND', ['a', 'i', 'u'], ['y'], name='s')],
        [row, ints('i', [[0, 99]]), init('u', np.ones(1, f))])
    c['run-op-gemm-inner'] = op_case(
        [N('Gemm', ['a', 'b'], ['y'], name='g', transA=1)],
        [row, init('b', np.ones((4, 3), f))])
    c['run-op-batchnorm-len'] = op_case(
        [N('BatchNormalization', ['a', 's', 'b', 'm', 'v'], ['y'],
           name='bn')],
        [img, init('s', np.ones(3, f)), init('b', np.ones(1, f)),
         init('m', np.ones(1, f)), init('v', np.ones(1, f))])
    c['run-op-unsqueeze-rank'] = op_case(
        [N('Unsqueeze', ['a', 'ax'], ['y'], name='u')],
        [row, ints('ax', list(range(12)))])
    c['run-op-range-huge'] = op_case(
        [N('Range', ['s', 'l', 'd'], ['y'], name='r')],
        [init('s', np.array(0, i64)), init('l', np.array(1 << 62, i64)),
         init('d', np.array(1, i64))])
    c['run-op-onehot-depth'] = op_case(
        [N('OneHot', ['i', 'd', 'v'], ['y'], name='o')],
        [ints('i', [0]), init('d', np.array(1 << 40, i64)),
         init('v', np.array([0, 1], f))])
    c['run-op-where-broadcast'] = op_case(
        [N('Where', ['c', 'a', 'b'], ['y'], name='w')],
        [init('c', np.ones(3, bool)), row, init('b', np.ones((1, 4), f))])
    c['run-op-cast-99'] = op_case(
        [N('Cast', ['a'], ['y'], name='c', to=99)], [row])
    c['run-op-einsum'] = op_case(
        [N('Einsum', ['a'], ['y'], name='e', equation='i,,j->->')], [row],
        opset=12)
    return c


# ---- stream cases ----

STREAM_HEAD = '#onnxq\t1.0\n#prog\ttest\t0\ttest\n'
STAT = ('stat\tt\tdtype=float\tshape=1x4\tn=4\tnan=0\tinf=0\tmin=-1\tmax=2'
        '\tbatches=1\tbmin=-1\tbmax=2\tsum=1\tsumsq=6')


def stream(*records, end=None):
    n = len(records) if end is None else end
    return (STREAM_HEAD + ''.join(r + '\n' for r in records) +
            'end\t%d\n' % n).encode()


def streams():
    c = {}
    c['empty'] = b''
    c['no-magic'] = b'stat\tt\tn=1\nend\t1\n'
    c['bad-magic'] = b'#onnx\t1.0\nend\t0\n'
    c['major-2'] = b'#onnxq\t2.0\nend\t0\n'
    c['bad-version'] = b'#onnxq\tone\nend\t0\n'
    c['no-end'] = stream(STAT)[:-len(b'end\t1\n')]
    c['truncated-line'] = stream(STAT)[:len(STREAM_HEAD) + 40]
    c['end-count'] = stream(STAT, end=5)
    c['end-bad'] = stream(STAT).replace(b'end\t1', b'end\tone')
    c['after-end'] = stream(STAT) + b'stat\tu\tn=1\n'
    c['header-after-record'] = stream(STAT, '#late\theader')
    c['no-subject'] = stream('stat')
    c['key-no-equals'] = stream(STAT + '\tnoequals')
    c['empty-key'] = stream(STAT + '\t=1')
    c['dup-key'] = stream(STAT + '\tn=5')
    c['bad-escape'] = stream(STAT.replace('stat\tt', 'stat\tt%G1'))
    c['nul-escape'] = stream(STAT.replace('stat\tt', 'stat\tt%00x'))
    c['nul-byte'] = stream(STAT.replace('stat\tt', 'stat\tt\0x'))
    c['crlf'] = stream(STAT).replace(b'\n', b'\r\n')
    c['stat-no-dtype'] = stream(STAT.replace('dtype=float\t', ''))
    c['stat-bad-dtype'] = stream(STAT.replace('dtype=float', 'dtype=float128'))
    c['stat-bad-n'] = stream(STAT.replace('n=4', 'n=four'))
    c['stat-negative-n'] = stream(STAT.replace('n=4', 'n=-4'))
    c['stat-overflow-n'] = stream(STAT.replace('n=4', 'n=99999999999999999999'))
    c['stat-min-nan'] = stream(STAT.replace('\tmin=-1', '\tmin=nan'))
    c['stat-min-above-max'] = stream(STAT.replace('min=-1', 'min=5'))
    # the statistics are of finite values: NaN and infinities are forged
    c['stat-max-inf'] = stream(STAT.replace('\tmax=2', '\tmax=inf'))
    c['stat-sum-nan'] = stream(STAT.replace('sum=1', 'sum=nan'))
    c['stat-sumsq-inf'] = stream(STAT.replace('sumsq=6', 'sumsq=6:inf'))
    c['stat-bmax-nan'] = stream(STAT.replace('bmax=2', 'bmax=-nan'))
    w = ('weight\tW\tnode=mm\top=MatMul\tdtype=float\tshape=4x3\tmin=0'
         '\tmax=1\taxis=1\tcmin=0,0,0\tcmax=1,1,1')
    c['weight-min-above-max'] = stream(w.replace('\tmin=0', '\tmin=5'))
    c['weight-cmin-nan'] = stream(w.replace('cmin=0,0,0', 'cmin=0,nan,0'))
    c['bias-max-nan'] = stream('bias\tB\tnode=c\top=Conv\tinput=x\tweight=W'
                               '\tdtype=float\tshape=3\tmin=0\tmax=nan')
    c['hist-inf-edge'] = stream(STAT, 'hist\tt\tmbits=7\tzero=0\tbins=-inf:4')
    c['stat-bad-float'] = stream(STAT.replace('max=2', 'max=2.5.1'))
    c['stat-rank13'] = stream(STAT.replace('shape=1x4', 'shape=' + 'x'.join(['1'] * 13)))
    c['stat-bad-shape'] = stream(STAT.replace('shape=1x4', 'shape=1xx4'))
    c['stat-bad-xsum'] = stream(STAT.replace('sum=1', 'sum=1,zz'))
    c['stat-dup'] = stream(STAT, STAT)
    c['hist-no-stat'] = stream('hist\tq\tmbits=7\tzero=0\tbins=1:1')
    c['hist-mbits'] = stream(STAT, 'hist\tt\tmbits=99\tzero=0\tbins=1:4')
    c['hist-bad-bins'] = stream(STAT, 'hist\tt\tmbits=7\tzero=0\tbins=1;4')
    c['hist-nan-edge'] = stream(STAT, 'hist\tt\tmbits=7\tzero=0\tbins=nan:4')
    c['name-newline-escaped'] = stream(STAT.replace('stat\tt', 'stat\tt%0Ax'),
                                       'hist\tt%0Ax\tmbits=99\tzero=0\tbins=1:4')
    c['binary'] = bytes((i * 89 + 3) & 0xff for i in range(400))
    h = 'hist\tt\tmbits=7\tzero=0\tbins='
    c['hist-unsorted'] = stream(STAT, h + '2:1,1:3')
    c['hist-repeated'] = stream(STAT, h + '1:2,1:2')
    c['hist-zero-edge'] = stream(STAT, h + '0:4')
    c['hist-count-short'] = stream(STAT, h + '1:3')
    c['hist-count-overflow'] = stream(
        STAT, h.replace('zero=0', 'zero=18446744073709551615') + '1:4')
    c['node-cycle'] = stream('node\ta\top=Relu\tin=y\tout=x',
                             'node\tb\top=Relu\tin=x\tout=y')
    c['node-self-loop'] = stream('node\ta\top=Add\tin=x,y\tout=y')
    c['node-two-producers'] = stream('node\ta\top=Relu\tin=x\tout=y',
                                     'node\tb\top=Neg\tin=x\tout=y')
    return c


# ---- config cases (checked against ok.stream) ----

OK_STREAM = STREAM_HEAD + (
    'node\tmm\top=MatMul\tin=x,W\tout=y\n'
    'weight\tW\tnode=mm\top=MatMul\tdtype=float\tshape=4x3\tmin=0\t'
    'max=1\taxis=1\tcmin=0,0,0\tcmax=1,1,1\n'
    'stat\tx\tdtype=float\tshape=1x4\tn=4\tnan=0\tinf=0\tmin=-1\tmax=2\t'
    'batches=1\tbmin=-1\tbmax=2\tsum=1\tsumsq=6\n'
    'stat\ty\tdtype=float\tshape=1x3\tn=3\tnan=0\tinf=0\tmin=0\tmax=3\t'
    'batches=1\tbmin=0\tbmax=3\tsum=3\tsumsq=5\n'
    'end\t4\n')


def configs():
    c = {}
    c['syntax'] = b'tensors:\n  x: [\n'
    c['tab-indent'] = b'tensors:\n\tx:\n\t\tquant_type: uint8\n'
    c['two-docs'] = b'version: 1\n---\nversion: 1\n'
    c['anchor'] = b'tensors:\n  x: &A {quant_type: uint8}\n  y: *A\n'
    c['not-a-map'] = b'- 1\n- 2\n'
    c['version'] = b'version: 2\n'
    c['unknown-setting'] = b'no_such_setting: 1\n'
    c['unknown-key'] = b'tensors:\n  x:\n    colour: red\n'
    c['bad-type'] = b'activations:\n  type: uint9\n'
    c['tensors-list'] = b'tensors: [x, y]\n'
    c['scale-nan'] = b'tensors:\n  x:\n    scale: .nan\n'
    c['scale-inf'] = b'tensors:\n  x:\n    rmax: .inf\n'
    c['scale-negative'] = (b'tensors:\n  x:\n    scale: -0.5\n'
                           b'    zero_point: 0\n')
    c['scale-no-zp'] = b'tensors:\n  x:\n    scale: 0.5\n'
    c['zp-range'] = (b'tensors:\n  x:\n    quant_type: uint8\n'
                     b'    scale: 0.5\n    zero_point: 300\n')
    c['zp-not-int'] = (b'tensors:\n  x:\n    scale: 0.5\n'
                       b'    zero_point: 1.5\n')
    c['zp-too-big'] = (b'tensors:\n  x:\n    scale: 0.5\n'
                       b'    zero_point: 99999999999999999999\n')
    c['dup-tensor'] = (b'tensors:\n  x:\n    quant_type: uint8\n'
                       b'  x:\n    quant_type: int8\n')
    c['dup-key'] = b'version: 1\nversion: 1\n'
    c['percentile'] = b'activations:\n  percentile: 101\n'
    c['min-real-range'] = b'min_real_range: 3e38\n'
    c['entropy-bins'] = b'activations:\n  entropy_bins: 0\n'
    c['rmin-rmax'] = b'tensors:\n  x:\n    rmin: 2\n    rmax: 1\n'
    c['unknown-tensor'] = b'tensors:\n  nosuch:\n    quant_type: uint8\n'
    c['axis-range'] = b'tensors:\n  W:\n    axis: 5\n'
    c['channels'] = (b'tensors:\n  W:\n    axis: 1\n    scale: [1, 2]\n'
                     b'    zero_point: 0\n')
    c['name-newline'] = b'tensors:\n  "x\\ny":\n    quant_type: uint8\n'
    c['value-newline'] = b'tensors:\n  x:\n    quant_type: "uint\\n8"\n'
    c['deep'] = b'tensors: ' + b'[' * 5000 + b']' * 5000 + b'\n'
    c['deep-map'] = b'tensors: ' + b'{a: ' * 3000 + b'1' + b'}' * 3000 + b'\n'
    # 65 levels, one past the limit, the last in a convert's recv_nodes
    c['deep-65'] = (b'tensors:\n  x:\n    convert:\n      recv_nodes: ' +
                    b'[' * 61 + b'a' + b']' * 61 + b'\n')
    c['binary'] = bytes((i * 67 + 1) & 0xff for i in range(200))
    c['bad-utf8'] = b'version: \xff\xfe\n'
    c['recv-unknown'] = (b'tensors:\n  x:\n    quant_type: uint8\n    '
                         b'convert: {quant_type: uint16, recv_nodes: [nosuch]}\n')
    return c


# ---- npy and npz cases (sample x of ok_vec: float Nx4) ----

def npy_bytes(arr=None, header=None, version=(1, 0), magic=b'\x93NUMPY',
              data=None):
    if arr is None:
        arr = np.zeros((1, 4), '<f4')
    if header is None:
        header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
            arr.dtype.str, repr(arr.shape))
    h = header.encode('latin1')
    pad = (64 - (len(magic) + 2 + (2 if version[0] == 1 else 4) + len(h) + 1)
           % 64) % 64
    h = h + b' ' * pad + b'\n'
    if version[0] == 1:
        hl = struct.pack('<H', len(h))
    else:
        hl = struct.pack('<I', len(h))
    return magic + bytes(version) + hl + h + (arr.tobytes() if data is None
                                              else data)


def npz_bytes(members, method=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w', method) as z:
        for name, data in members:
            zi = zipfile.ZipInfo(name, FIXED_TIME)
            zi.compress_type = method
            z.writestr(zi, data)
    return buf.getvalue()


def npys():
    c = {}
    good = npy_bytes()
    c['empty.npy'] = b''
    c['bad-magic.npy'] = b'\x93NUMPX' + good[6:]
    c['version-9.npy'] = npy_bytes(version=(9, 0))
    c['header-past-end.npy'] = good[:8] + struct.pack('<H', 60000) + good[10:]
    c['truncated-data.npy'] = good[:-3]
    c['trailing-data.npy'] = good + b'\0' * 4
    c['not-a-dict.npy'] = npy_bytes(header="['descr', '<f4']")
    c['unknown-key.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), "
        "'colour': 'red', }")
    c['missing-shape.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': False, }")
    c['complex.npy'] = npy_bytes(np.zeros((1, 4), '<c8'))
    c['object.npy'] = npy_bytes(
        header="{'descr': '|O', 'fortran_order': False, 'shape': (1, 4), }",
        data=b'\0' * 32)
    c['structured.npy'] = npy_bytes(
        header="{'descr': [('a', '<f4')], 'fortran_order': False, "
        "'shape': (1, 4), }")
    c['negative-dim.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }")
    c['huge-shape.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': False, "
        "'shape': (1000000, 1000000), }", data=b'')
    c['rank13.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" %
        ', '.join(['1'] * 13), data=b'\0' * 4)
    c['dim-overflow.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': False, "
        "'shape': (99999999999999999999, 4), }", data=b'')
    c['bad-fortran.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1, 4), }")
    c['newline-key.npy'] = npy_bytes(
        header="{'descr': '<f4', 'fortran_order': False, 'sha\npe': (1, 4), }")
    c['wrong-dtype.npy'] = npy_bytes(np.zeros((1, 4), '<f8'))
    c['wrong-shape.npy'] = npy_bytes(np.zeros((1, 5), '<f4'))
    c['wrong-rank.npy'] = npy_bytes(np.zeros((4,), '<f4'))
    c['nonfinite.npy'] = npy_bytes(np.array([[1, np.nan, np.inf, -np.inf]],
                                            '<f4'))
    x = npy_bytes()
    c['not-zip.npz'] = b'PK\x03\x04' + b'\0' * 40
    c['truncated.npz'] = npz_bytes([('x.npy', x)])[:-30]
    z = bytearray(npz_bytes([('x.npy', x)], zipfile.ZIP_DEFLATED))
    # flip bytes inside the deflated data (after the 30 + 5 byte header)
    for i in range(40, 48):
        z[i] ^= 0x55
    c['corrupt-deflate.npz'] = bytes(z)
    z = bytearray(npz_bytes([('x.npy', x)]))
    z[30 + 5 + 100] ^= 1  # a data byte: the crc no longer matches
    c['crc.npz'] = bytes(z)
    z = bytearray(npz_bytes([('x.npy', x)]))
    cd = z.rfind(b'PK\x01\x02')
    z[6] |= 1             # encrypted, local header
    z[cd + 8] |= 1        # and central directory
    c['encrypted.npz'] = bytes(z)
    z = bytearray(npz_bytes([('x.npy', x)]))
    cd = z.rfind(b'PK\x01\x02')
    z[8] = z[cd + 10] = 12  # bzip2
    c['bzip2.npz'] = bytes(z)
    z = bytearray(npz_bytes([('x.npy', x)], zipfile.ZIP_DEFLATED))
    cd = z.rfind(b'PK\x01\x02')
    z[cd + 24:cd + 28] = struct.pack('<I', 0xfffffff0)  # usize 4 GiB
    c['bomb.npz'] = bytes(z)
    c['no-member.npz'] = npz_bytes([('other.npy', x)])
    c['bad-member.npz'] = npz_bytes([('x.npy', b'\x93NUMPY garbage')])
    c['member-newline.npz'] = npz_bytes([('x\n.npy', b'junk')])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')     # zipfile: duplicate name
        c['dup-member.npz'] = npz_bytes([('x.npy', x), ('x.npy', x)])
    c['member-dotdot.npz'] = npz_bytes([('../x.npy', x)])
    z = bytearray(npz_bytes([('x.npy', x)]))
    z[-14:-10] = struct.pack('<HH', 9999, 9999)   # entries in the directory
    c['eocd-count.npz'] = bytes(z)
    return c


# ---- TensorProto .pb cases (input_0 of ok_vec: float Nx4) ----

def pbs():
    c = {}
    good = numpy_helper.from_array(np.zeros((1, 4), np.float32), 'x')
    c['empty'] = b''
    c['garbage'] = bytes((i * 53 + 9) & 0xff for i in range(100))
    c['truncated'] = good.SerializeToString()[:-5]
    c['raw-short'] = raw_tensor('x', TensorProto.FLOAT, [1, 4],
                                b'\0' * 15).SerializeToString()
    c['huge-dims'] = raw_tensor('x', TensorProto.FLOAT, [1000000, 1000000],
                                b'').SerializeToString()
    c['negative-dim'] = raw_tensor('x', TensorProto.FLOAT, [-1, 4],
                                   b'\0' * 16).SerializeToString()
    c['external'] = ext_tensor('x', [1, 4], [('location', 'x.bin')]) \
        .SerializeToString()
    c['string'] = helper.make_tensor('x', TensorProto.STRING, [1, 1],
                                     [b'a']).SerializeToString()
    c['wrong-dtype'] = numpy_helper.from_array(
        np.zeros((1, 4), np.float64), 'x').SerializeToString()
    c['wrong-shape'] = numpy_helper.from_array(
        np.zeros((2, 5), np.float32), 'x').SerializeToString()
    tp = raw_tensor('x', TensorProto.FLOAT, [1, 4], b'')
    tp.ClearField('raw_data')
    tp.float_data.extend([1, 2])
    c['float-data-short'] = tp.SerializeToString()
    return c


# ---- image cases (ok_image: 1x3x8x8) ----

def png_chunk(kind, data):
    c = struct.pack('>I', len(data)) + kind + data
    return c + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)


def png(width, height, rows=None, ihdr=None):
    if ihdr is None:
        ihdr = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
    if rows is None:
        rows = [bytes(3 * width)] * height
    raw = b''.join(b'\0' + r for r in rows)
    return (b'\x89PNG\r\n\x1a\n' + png_chunk(b'IHDR', ihdr) +
            png_chunk(b'IDAT', zlib.compress(raw, 9)) + png_chunk(b'IEND', b''))


def images():
    c = {}
    good = png(8, 8)
    c['empty.png'] = b''
    c['text.png'] = b'this is not an image\n'
    c['truncated.png'] = good[:len(good) - 20]
    bad = bytearray(good)
    bad[29] ^= 0xff        # the IHDR crc
    c['bad-crc.png'] = bytes(bad)
    c['zero-width.png'] = png(0, 8, rows=[b''] * 8)
    c['huge.png'] = png(1 << 20, 1 << 20, rows=[])[:-12]
    c['bad-depth.png'] = png(8, 8, ihdr=struct.pack('>IIBBBBB', 8, 8, 7, 2,
                                                    0, 0, 0))
    flat = open(os.path.join(HERE, '..', 'images', 'flat.jpg'), 'rb').read()
    c['empty.jpg'] = b''
    c['truncated.jpg'] = flat[:len(flat) // 2]
    c['soi-only.jpg'] = b'\xff\xd8\xff'
    sof = flat.find(b'\xff\xc0')
    huge = bytearray(flat)
    huge[sof + 5:sof + 9] = struct.pack('>HH', 60000, 60000)
    c['huge.jpg'] = bytes(huge[:sof + 200])
    zero = bytearray(flat)
    zero[sof + 5:sof + 9] = struct.pack('>HH', 0, 16)
    c['zero-height.jpg'] = bytes(zero)
    # arithmetic-coded JPEGs: a good 16x16 one (libjpeg, arith_code), and
    # 123 bytes that fuzz_image found claiming 4134x4096 pixels, whose
    # data ends at once (zeros make up the rest without a warning)
    c['arith-ok.jpg'] = bytes.fromhex(
        'ffd8ffe000104a46494600010100000100010000ffdb004300080606070605'
        '080707070909080a0c140d0c0b0b0c1912130f141d1a1f1e1d1a1c1c20242e'
        '2720222c231c1c2837292c30313434341f27393d38323c2e333432ffdb0043'
        '010909090c0b0c180d0d1832211c2132323232323232323232323232323232'
        '32323232323232323232323232323232323232323232323232323232323232'
        '323232ffc90011080010001003012200021101031101ffcc000a0010100501'
        '101105ffda000c03010002110311003f00ff00cb39c406ca6dfdce061a7345'
        '3e350a88466f43978745da80ffd9')
    c['arith-cut.jpg'] = bytes.fromhex(
        'ffd8ffdb0043000101010101010101010101ffffffff7b00000000000000ff'
        'ffffffefffffffffffffffffffffffffffffffff01010101010101010101ff'
        'fe0101010104000141ffc90011081000261003011100021100031100757677'
        '3f79e3e4e7f7f8f9faffda000c030100020003003f00fc86affaf6faffd9')
    return c


def write(out, sub, cases, ext):
    d = os.path.join(out, sub)
    os.makedirs(d, exist_ok=True)
    for name, data in sorted(cases.items()):
        fn = name if '.' in name else name + ext
        with open(os.path.join(d, fn), 'wb') as f:
            f.write(data)


def main(argv):
    if len(argv) > 2:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1] if len(argv) == 2 else HERE
    ms = models()
    ms['ok-relu'] = ser(ok_relu())
    ms['ok-vec'] = ser(ok_vec())
    ms['ok-image'] = ser(ok_image())
    write(out, 'model', ms, '.onnx')
    # the data file the ext-* cases point at, beside them: 16 bytes
    with open(os.path.join(out, 'model', 'w.bin'), 'wb') as f:
        f.write(np.arange(4, dtype='<f4').tobytes())
    write(out, 'stream', streams(), '.stream')
    cf = configs()
    write(out, 'config', cf, '.yaml')
    with open(os.path.join(out, 'config', 'ok.stream'), 'wb') as f:
        f.write(OK_STREAM.encode())
    ns = npys()
    ns['ok-x.npy'] = npy_bytes(np.array([[1, 2, 3, 4]], '<f4'))
    write(out, 'npy', ns, '')
    ps = pbs()
    ps['ok-x'] = numpy_helper.from_array(
        np.array([[1, 2, 3, 4]], np.float32), 'x').SerializeToString()
    write(out, 'pb', ps, '.pb')
    write(out, 'image', images(), '')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
