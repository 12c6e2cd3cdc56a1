#!/usr/bin/python3
"""make-fixtures.py: the small ONNX models test/model.bats and the unit
tests use. Needs Debian's python3-onnx and numpy (run as /usr/bin/python3).

    make-fixtures.py                 write the committed fixtures here
    make-fixtures.py external DIR    external-data cases (symlinks, hard
                                     links, ...) into DIR, made at test time
    make-fixtures.py probe-bn IN OUT IN with every BatchNormalization output
                                     also a graph output
    make-fixtures.py expect-prep IN  what prep_model should report for IN:
                                     "constants N folded_bn M"
    make-fixtures.py deep N OUT      Ifs nested N deep (graph depth limit)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid('', 13)]


def vi(name, dtype=TensorProto.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(graph, opset=None):
    m = helper.make_model(graph, opset_imports=opset or OPSET,
                          producer_name='onnxq-fixtures')
    m.ir_version = 7
    return m


def save(m, name, out_dir=HERE):
    path = os.path.join(out_dir, name)
    with open(path, 'wb') as f:
        f.write(m.SerializeToString())
    return path


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def small():
    """Values, producers and consumers test/model.bats checks; the nodes
    are deliberately out of order."""
    w = init('w', np.arange(16, dtype=np.float32).reshape(4, 4) / 16)
    b = init('b', np.ones(4, np.float32))
    w_in = init('w_in', np.full(4, 0.5, np.float32))
    c = helper.make_tensor('c', TensorProto.FLOAT, [4], [1, 2, 3, 4])
    nodes = [
        helper.make_node('Relu', ['mul'], ['y'], name='relu'),
        helper.make_node('Mul', ['add', 'c'], ['mul'], name='mul'),
        helper.make_node('Constant', [], ['c'], name='const', value=c),
        helper.make_node('MatMul', ['x', 'w'], ['mm'], name='matmul'),
        helper.make_node('Add', ['mm', 'b'], ['add'], name='addb'),
        helper.make_node('Add', ['add', 'w_in'], ['z'], name='addz'),
    ]
    g = helper.make_graph(nodes, 'small', [vi('x', shape=[1, 4]),
                          vi('w_in', shape=[4])],
                          [vi('y', shape=[1, 4]), vi('z', shape=[1, 4])],
                          [w, b, w_in])
    return model(g)


def subgraph():
    """An If whose branches read outer values, one of them two levels down."""
    one = init('one', np.ones(2, np.float32))
    then_g = helper.make_graph(
        [helper.make_node('Add', ['nx', 'one'], ['then_y'], name='then_add')],
        'then', [], [vi('then_y', shape=[2])], [one])
    inner_then = helper.make_graph(
        [helper.make_node('Neg', ['nx'], ['in_y'], name='inner_neg')],
        'inner_then', [], [vi('in_y', shape=[2])])
    inner_else = helper.make_graph(
        [helper.make_node('Identity', ['x'], ['in_z'], name='inner_id')],
        'inner_else', [], [vi('in_z', shape=[2])])
    else_g = helper.make_graph(
        [helper.make_node('If', ['cond'], ['else_y'], name='inner_if',
                          then_branch=inner_then, else_branch=inner_else)],
        'else', [], [vi('else_y', shape=[2])])
    nodes = [
        helper.make_node('If', ['cond'], ['ifout'], name='if',
                         then_branch=then_g, else_branch=else_g),
        helper.make_node('Neg', ['x'], ['nx'], name='pre'),
        helper.make_node('Relu', ['ifout'], ['y'], name='post'),
    ]
    g = helper.make_graph(nodes, 'subgraph',
                          [vi('cond', TensorProto.BOOL, []),
                           vi('x', shape=[2])], [vi('y', shape=[2])])
    return model(g)


def deep(n):
    """Ifs nested n deep, each reading x from the top graph."""
    def leaf(name):
        return helper.make_graph(
            [helper.make_node('Identity', ['x'], [name])], name, [],
            [vi(name)])
    body = leaf('d0')
    for i in range(1, n):
        body = helper.make_graph(
            [helper.make_node('If', ['cond'], ['d%d' % i], then_branch=body,
                              else_branch=leaf('e%d' % i))],
            'd%d' % i, [], [vi('d%d' % i)])
    g = helper.make_graph(
        [helper.make_node('If', ['cond'], ['y'], name='top', then_branch=body,
                          else_branch=leaf('e'))], 'deep',
        [vi('cond', TensorProto.BOOL, []), vi('x', shape=[1])],
        [vi('y', shape=[1])])
    return model(g)


def broken_graphs():
    x = vi('x', shape=[2])
    cycle = helper.make_graph([
        helper.make_node('Relu', ['x'], ['r'], name='first'),
        helper.make_node('Add', ['r', 'd'], ['a'], name='node_a'),
        helper.make_node('Relu', ['a'], ['b'], name='node_b'),
        helper.make_node('Neg', ['b'], ['d'], name='node_c'),
        helper.make_node('Relu', ['b'], ['y'], name='last'),
    ], 'cycle', [x], [vi('y', shape=[2])])
    dup = helper.make_graph([
        helper.make_node('Relu', ['x'], ['a'], name='n1'),
        helper.make_node('Neg', ['x'], ['a'], name='n2'),
    ], 'dup', [x], [vi('a', shape=[2])])
    shadow_init = helper.make_graph([
        helper.make_node('Relu', ['x'], ['w'], name='n1'),
    ], 'shadow_init', [x], [vi('w', shape=[2])],
        [init('w', np.zeros(2, np.float32))])
    shadow_input = helper.make_graph([
        helper.make_node('Relu', ['x'], ['x'], name='n1'),
    ], 'shadow_input', [x], [vi('x', shape=[2])])
    undefined = helper.make_graph([
        helper.make_node('Add', ['x', 'nope'], ['y'], name='n1'),
    ], 'undefined', [x], [vi('y', shape=[2])])
    return {
        'cycle.onnx': model(cycle),
        'dup-output.onnx': model(dup),
        'shadow-init.onnx': model(shadow_init),
        'shadow-input.onnx': model(shadow_input),
        'undefined-input.onnx': model(undefined),
    }


def unknown_fields():
    """small.onnx plus unknown fields in the ModelProto and in a node."""
    m = small()
    node = onnx.NodeProto()
    # field 777 (varint 5) and field 778 (bytes "hi") inside the first node
    node.ParseFromString(m.graph.node[0].SerializeToString() +
                         bytes([0xc8, 0x30, 0x05, 0xd2, 0x30, 0x02]) + b'hi')
    m.graph.node[0].CopyFrom(node)
    # field 999, varint 1, at the end of the model
    return m.SerializeToString() + bytes([0xb8, 0x3e, 0x01])


def raw_tensor(name, dtype, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def dtypes():
    """One initializer per type and encoding; model_test.c knows the values."""
    inits = []
    cases = [
        ('float', TensorProto.FLOAT, np.float32, [1.5, -2.0, 3.25]),
        ('double', TensorProto.DOUBLE, np.float64, [1.5, -2.0, 1e300]),
        ('int8', TensorProto.INT8, np.int8, [-128, 0, 127]),
        ('uint8', TensorProto.UINT8, np.uint8, [0, 200, 255]),
        ('int16', TensorProto.INT16, np.int16, [-32768, 1, 32767]),
        ('uint16', TensorProto.UINT16, np.uint16, [0, 40000, 65535]),
        ('int32', TensorProto.INT32, np.int32, [-2147483648, 5, 2147483647]),
        ('int64', TensorProto.INT64, np.int64, [-(1 << 62), 6, (1 << 62)]),
        ('uint32', TensorProto.UINT32, np.uint32, [0, 7, 4294967295]),
        ('uint64', TensorProto.UINT64, np.uint64, [0, 8, (1 << 64) - 1]),
        ('bool', TensorProto.BOOL, np.bool_, [True, False, True]),
        ('float16', TensorProto.FLOAT16, np.float16, [1.0, -2.5, 65504.0]),
    ]
    for name, dt, npt, vals in cases:
        arr = np.array(vals, dtype=npt)
        inits.append(helper.make_tensor(name + '_typed', dt, [3],
                                        arr.tolist() if dt != TensorProto.FLOAT16
                                        else arr))
        inits.append(raw_tensor(name + '_raw', dt, [3],
                                arr.astype(arr.dtype.newbyteorder('<')).tobytes()))
    # bfloat16: typed values go through onnx's own float32_to_bfloat16
    inits.append(helper.make_tensor('bfloat16_typed', TensorProto.BFLOAT16,
                                    [3], [1.0, -2.5, 3.140625]))
    bf = (np.array([1.0, -2.5, 3.140625], np.float32).view(np.uint32) >> 16)
    inits.append(raw_tensor('bfloat16_raw', TensorProto.BFLOAT16, [3],
                            bf.astype('<u2').tobytes()))
    # int4 [-8, -1, 0, 7, 3] and uint4 [15, 0, 1, 8, 9], low nibble first
    # (onnx 1.12 predates them: built by hand)
    for name, dt, packed in (('int4', 22, [0xf8, 0x70, 0x03]),
                             ('uint4', 21, [0x0f, 0x81, 0x09])):
        inits.append(raw_tensor(name + '_raw', dt, [5], bytes(packed)))
        t = TensorProto()
        t.name = name + '_typed'
        t.data_type = dt
        t.dims.append(5)
        t.int32_data.extend(packed)
        inits.append(t)
    inits.append(helper.make_tensor('scalar', TensorProto.FLOAT, [], [42.0]))
    inits.append(helper.make_tensor('empty', TensorProto.FLOAT, [2, 0], []))
    inits.append(helper.make_tensor('string', TensorProto.STRING, [1], [b'a']))
    g = helper.make_graph([], 'dtypes', [], [], inits)
    return model(g)


def prep_small():
    """Every BatchNormalization folding case and every Constant kind."""
    rs = np.random.RandomState(7)

    def rnd(*shape):
        return rs.uniform(-1, 1, shape).astype(np.float32)

    def bn_params(prefix, c):
        return [init(prefix + '_scale', rnd(c) + 1.5),
                init(prefix + '_shift', rnd(c)),
                init(prefix + '_mean', rnd(c)),
                init(prefix + '_var', np.abs(rnd(c)) + 0.1)]

    def bn(prefix, x, y, **kw):
        return helper.make_node('BatchNormalization',
                                [x] + [prefix + s for s in
                                       ('_scale', '_shift', '_mean', '_var')],
                                [y], name=prefix, **kw)

    inits = [init('W1', rnd(4, 4, 3, 3)), init('B1', rnd(4)),
             init('W2', rnd(4, 2, 3, 3)), init('WT', rnd(4, 3, 2, 2)),
             init('W3', rnd(2, 6, 1, 1)), init('G1', rnd(8, 200)),
             init('C1', rnd(8)), init('G2', rnd(8, 5)), init('G3', rnd(5, 3)),
             init('C3', rnd(1, 3)), init('raw_scale', rnd(3))]
    for p, c in (('bn1', 4), ('bn2', 4), ('bn3', 6), ('bn4', 2), ('bn5', 8),
                 ('bn6', 5), ('bn7', 3), ('bn8', 3)):
        inits += bn_params(p, c)
    inits = [t for t in inits if t.name != 'bn8_scale']
    sparse = helper.make_sparse_tensor(
        helper.make_tensor('sv', TensorProto.FLOAT, [1], [2.0]),
        helper.make_tensor('si', TensorProto.INT64, [1], [1]), [3])
    nodes = [
        helper.make_node('Constant', [], ['cf'], value_float=0.5),
        helper.make_node('Constant', [], ['cfs'], value_floats=[0.1, 0.2, 0.3]),
        helper.make_node('Constant', [], ['ci'], value_int=3),
        helper.make_node('Constant', [], ['cis'], value_ints=[1, 200]),
        helper.make_node('Constant', [], ['ct'], value=helper.make_tensor(
            'ignored_name', TensorProto.FLOAT, [3], [1.0, -1.0, 2.0])),
        helper.make_node('Constant', [], ['cstr'], value_strings=['a', 'b']),
        helper.make_node('Constant', [], ['csparse'], sparse_value=sparse),
        helper.make_node('Conv', ['x', 'W1', 'B1'], ['c1'], name='conv1',
                         pads=[1, 1, 1, 1]),
        bn('bn1', 'c1', 'b1'),
        helper.make_node('Conv', ['b1', 'W2'], ['c2'], name='conv2', group=2,
                         pads=[1, 1, 1, 1]),
        bn('bn2', 'c2', 'b2', epsilon=1e-3),
        helper.make_node('ConvTranspose', ['b2', 'WT'], ['c3'], name='convt',
                         group=2, strides=[2, 2]),
        bn('bn3', 'c3', 'b3'),
        helper.make_node('Conv', ['b3', 'W3'], ['c4'], name='conv4'),
        bn('bn4', 'c4', 'b4'),
        helper.make_node('Relu', ['c4'], ['r4'], name='relu4'),
        helper.make_node('Add', ['b4', 'r4'], ['s4'], name='add4'),
        helper.make_node('Reshape', ['s4', 'cis'], ['flat'], name='flat'),
        helper.make_node('Gemm', ['flat', 'G1', 'C1'], ['g1'], name='gemm1',
                         transB=1),
        bn('bn5', 'g1', 'b5'),
        helper.make_node('Gemm', ['b5', 'G2'], ['g2'], name='gemm2',
                         alpha=0.5),
        bn('bn6', 'g2', 'b6'),
        helper.make_node('Gemm', ['b6', 'G3', 'C3'], ['g3'], name='gemm3',
                         beta=2.0),
        bn('bn7', 'g3', 'b7'),
        helper.make_node('Abs', ['raw_scale'], ['bn8_scale'], name='abs8'),
        helper.make_node('Relu', ['b7'], ['r7'], name='relu7'),
        bn('bn8', 'r7', 'b8'),
        helper.make_node('Mul', ['b8', 'cf'], ['m8'], name='mul8'),
        helper.make_node('Add', ['m8', 'cfs'], ['a8'], name='add8'),
        helper.make_node('Mul', ['a8', 'ct'], ['y'], name='out'),
    ]
    g = helper.make_graph(nodes, 'prep_small', [vi('x', shape=[1, 4, 5, 5])],
                          [vi('y', shape=[1, 3])], inits)
    return model(g)


def external(out):
    """External-data cases; symlinks and hard links cannot be committed."""
    w1 = np.arange(6, dtype=np.float32) * 0.5
    w2 = np.arange(1, 7, dtype=np.float32)
    blob = w1.tobytes() + bytes(40) + w2.tobytes()   # w2 at offset 64

    def ext_model(path, loc1, extra1=(), loc2=None):
        def ext(name, arr, loc, kv):
            t = numpy_helper.from_array(arr, name)
            t.ClearField('raw_data')
            t.data_location = TensorProto.EXTERNAL
            for k, v in [('location', loc)] + list(kv):
                e = t.external_data.add()
                e.key, e.value = k, v
            return t
        kv1 = dict([('length', '24')] + list(extra1))
        inits = [ext('w1', w1.reshape(2, 3), loc1, kv1.items()),
                 ext('w2', w2.reshape(2, 3), loc2 or loc1,
                     [('offset', '64'), ('length', '24')]),
                 init('w3', np.full((2, 3), 2, np.float32))]
        g = helper.make_graph(
            [helper.make_node('Mul', ['x', 'w1'], ['m'], name='mul'),
             helper.make_node('Add', ['m', 'w2'], ['a'], name='add'),
             helper.make_node('Add', ['a', 'w3'], ['y'], name='add3')],
            'ext', [vi('x', shape=[2, 3])], [vi('y', shape=[2, 3])], inits)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.write(model(g).SerializeToString())

    def blob_at(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.write(blob)

    j = os.path.join
    blob_at(j(out, 'ok', 'weights.bin'))
    ext_model(j(out, 'ok', 'model.onnx'), 'weights.bin')
    blob_at(j(out, 'okdir', 'sub', 'w.bin'))
    ext_model(j(out, 'okdir', 'model.onnx'), './sub//w.bin',
              [('length', '24'), ('checksum', 'ignored')])
    ext_model(j(out, 'abs', 'model.onnx'),
              os.path.abspath(j(out, 'ok', 'weights.bin')))
    ext_model(j(out, 'dotdot', 'model.onnx'), '../ok/weights.bin')
    ext_model(j(out, 'symlink', 'model.onnx'), 'link.bin')
    os.symlink('../ok/weights.bin', j(out, 'symlink', 'link.bin'))
    ext_model(j(out, 'symdir', 'model.onnx'), 'dir/weights.bin')
    os.symlink('../ok', j(out, 'symdir', 'dir'))
    blob_at(j(out, 'elsewhere.bin'))
    ext_model(j(out, 'hardlink', 'model.onnx'), 'w.bin')
    os.link(j(out, 'elsewhere.bin'), j(out, 'hardlink', 'w.bin'))
    blob_at(j(out, 'pastend', 'weights.bin'))
    # w2 (offset 64, 24 bytes) fits; w1 starts past the end
    ext_model(j(out, 'pastend', 'model.onnx'), 'weights.bin',
              [('offset', '100')])
    blob_at(j(out, 'badlength', 'weights.bin'))
    ext_model(j(out, 'badlength', 'model.onnx'), 'weights.bin',
              [('length', '20')])
    ext_model(j(out, 'missing', 'model.onnx'), 'nothere.bin')
    os.makedirs(j(out, 'fifo'))
    os.mkfifo(j(out, 'fifo', 'weights.bin'))
    ext_model(j(out, 'fifo', 'model.onnx'), 'weights.bin')
    os.makedirs(j(out, 'isdir', 'weights.bin'))
    ext_model(j(out, 'isdir', 'model.onnx'), 'weights.bin')
    blob_at(j(out, 'badoffset', 'weights.bin'))
    ext_model(j(out, 'badoffset', 'model.onnx'), 'weights.bin',
              [('offset', '-4')])


def probe_bn(src, dst):
    m = onnx.load(src)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        if n.op_type == 'BatchNormalization' and n.output[0] not in have:
            m.graph.output.append(vi(n.output[0]))
    onnx.save(m, dst)


def expect_prep(path):
    """prep_model's counts, worked out independently of lib/prep.c."""
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    outputs = {o.name for o in g.output}
    consts = set()
    for n in g.node:
        if n.op_type != 'Constant' or n.output[0] in outputs:
            continue
        a = n.attribute[0]
        if a.name in ('value_float', 'value_floats', 'value_int',
                      'value_ints') or (a.name == 'value' and
                                        a.t.data_type != TensorProto.STRING):
            consts.add(n.output[0])
    const = consts | {t.name for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    uses = {}
    for n in g.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    folded = 0
    for n in g.node:
        if n.op_type != 'BatchNormalization':
            continue
        p = producer.get(n.input[0])
        if (p is None or p.op_type not in ('Conv', 'ConvTranspose', 'Gemm')
                or uses[n.input[0]] != 1 or n.input[0] in outputs):
            continue
        if not all(i in const for i in list(n.input[1:]) + list(p.input[1:])
                   if i):
            continue
        if any(a.name == 'training_mode' and a.i for a in n.attribute):
            continue
        folded += 1
    print('constants %d folded_bn %d' % (len(consts), folded))


def main():
    args = sys.argv[1:]
    if args and args[0] == 'external':
        external(args[1])
    elif args and args[0] == 'probe-bn':
        probe_bn(args[1], args[2])
    elif args and args[0] == 'expect-prep':
        expect_prep(args[1])
    elif args and args[0] == 'deep':
        save(deep(int(args[1])), os.path.basename(args[2]),
             os.path.dirname(os.path.abspath(args[2])))
    elif not args:
        save(small(), 'small.onnx')
        save(subgraph(), 'subgraph.onnx')
        for name, m in broken_graphs().items():
            save(m, name)
        with open(os.path.join(HERE, 'unknown-field.onnx'), 'wb') as f:
            f.write(unknown_fields())
        save(dtypes(), 'dtypes.onnx')
        save(prep_small(), 'prep-small.onnx')
    else:
        sys.exit(__doc__)


main()
