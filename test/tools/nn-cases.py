#!/usr/bin/python3
"""nn-cases.py: single-node test models for the kernels of lib/op_nn.c and
lib/op_quant.c, in the ONNX backend-test layout, with ONNX Runtime as the
oracle. Used by test/nn-kernels.bats.

usage: nn-cases.py write DIR [qlinear]  models and inputs (DIR/NAME/model.onnx,
                                 test_data_set_0/input_K.pb, in_K.bin,
                                 inputs.json for nn-cases.js)
       nn-cases.py finish DIR [qlinear] ONNX Runtime's outputs (out_K.bin and
                                 outputs.json, from nn-cases.js) into
                                 test_data_set_0/output_K.pb; fails when
                                 ONNX Runtime rejected a case

The cases cover every convolution path (unfolded, pointwise, depthwise
with and without the padded copy, 1-D, 3-D, grouped, dilated, auto_pad),
ConvTranspose (output_padding, output_shape, groups, overlapping and not),
Gemm, MatMul (broadcasting, 1-D, int32), Einsum, the pools, the
normalisations, Resize in every mode and coordinate transformation
(opsets 10, 11, 13, 18, 19), Upsample, and QuantizeLinear /
DequantizeLinear (per tensor, per axis, blocked, 4- and 16-bit, both
domains). The same seed gives the same models everywhere. The qlinear
suite holds the QOperator kernels' cases instead (qlinear_cases.py).
"""
import sys, os, json, shutil, subprocess, itertools
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

if len(sys.argv) not in (3, 4) or sys.argv[1] not in ('write', 'finish'):
    sys.exit('usage: nn-cases.py write|finish DIR [qlinear]')
ACTION, OUT = sys.argv[1], sys.argv[2]
FILT = os.environ.get('NN_CASES', '')	# only cases whose name holds it
SUITE = sys.argv[3] if len(sys.argv) == 4 else 'nn'
rng = np.random.default_rng(7)
cases = []

NP2ONNX = {np.float32: 1, np.uint8: 2, np.int8: 3, np.uint16: 4, np.int16: 5,
           np.int32: 6, np.int64: 7, np.float64: 11}


def case(name, nodes, inputs, outputs, inits=(), opset=13, extra=()):
    """inputs: [(name, array)], outputs: [(name, elem_type)], inits: [TensorProto]"""
    if FILT and FILT not in name:
        return
    gin = [helper.make_tensor_value_info(n, NP2ONNX[a.dtype.type], list(a.shape)) for n, a in inputs]
    gout = [helper.make_tensor_value_info(n, t, None) for n, t in outputs]
    g = helper.make_graph(nodes, name, gin, gout, initializer=list(inits))
    ops = [helper.make_opsetid('', opset)] + [helper.make_opsetid(d, v) for d, v in extra]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8 if opset < 19 else 9
    cases.append((name, m, inputs))


def f32(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def init(name, a, dt=None):
    t = numpy_helper.from_array(a, name)
    if dt in (21, 22):
        v = (a.astype(np.int64).flatten() & 15).tolist()
        if len(v) % 2:
            v.append(0)
        t.raw_data = bytes(v[i] | (v[i + 1] << 4) for i in range(0, len(v), 2))
    if dt is not None:
        t.data_type = dt
    return t


F = TensorProto.FLOAT

# ---------------------------------------------------------------- Conv
conv_specs = [
    # (N, C, spatial, M, kernel, strides, pads, dil, group, bias, auto_pad)
    (1, 3, (64, 64), 16, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, True, None),
    (1, 16, (40, 48), 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 16, True, None),
    (1, 32, (33, 31), 32, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 32, True, None),
    (2, 24, (20, 30), 24, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 24, True, None),
    (1, 24, (21, 19), 24, (5, 5), (2, 1), (2, 2, 2, 2), (1, 1), 24, False, None),
    (1, 8, (17, 23), 16, (3, 3), (1, 2), (1, 0, 2, 1), (2, 1), 8, True, None),
    (1, 8, (15, 15), 8, (3, 3), (3, 3), (0, 0, 0, 0), (1, 1), 8, True, None),
    (1, 6, (12, 12), 6, (3, 3), (1, 1), None, (1, 1), 6, True, 'SAME_LOWER'),
    (1, 48, (64, 80), 96, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True, None),
    (2, 40, (50, 50), 24, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, False, None),
    (1, 32, (41, 43), 48, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, True, None),
    (1, 96, (80, 80), 24, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True, None),
    (1, 16, (30, 30), 32, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 2, True, None),
    (1, 12, (29, 31), 18, (5, 3), (2, 3), (1, 2, 3, 0), (1, 2), 3, True, None),
    (1, 480, (3, 80), 60, (1, 3), (1, 1), (0, 1, 0, 1), (1, 1), 1, False, None),
    (1, 240, (6, 80), 240, (5, 5), (2, 1), (2, 2, 2, 2), (1, 1), 240, True, None),
    (1, 8, (16, 16), 16, (3, 3), (1, 1), None, (1, 1), 1, True, 'SAME_UPPER'),
    (1, 8, (17, 16), 16, (4, 4), (2, 2), None, (1, 1), 1, True, 'SAME_UPPER'),
    (1, 8, (17, 16), 16, (4, 4), (2, 2), None, (1, 1), 1, True, 'VALID'),
    (1, 8, (300,), 16, (5,), (2,), (2, 2), (1,), 1, True, None),
    (1, 8, (300,), 8, (3,), (1,), (1, 1), (2,), 8, True, None),
    (1, 4, (9, 10, 11), 6, (3, 3, 3), (1, 2, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 2, True, None),
    (1, 4, (8, 8, 8), 4, (3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 4, True, None),
    (1, 2, (6, 7, 5, 4), 3, (2, 3, 2, 2), (1, 1, 2, 1), (0, 1, 0, 1, 1, 0, 1, 0), (1, 1, 1, 1), 1, True, None),
    (1, 4, (16, 16), 8, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1), 1, True, None),
    (3, 16, (7, 9), 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4, True, None),
]
for i, (n, c, sp, m, k, s, p, d, g, b, ap) in enumerate(conv_specs):
    attrs = dict(kernel_shape=list(k), strides=list(s), dilations=list(d), group=g)
    if ap:
        attrs['auto_pad'] = ap
    else:
        attrs['pads'] = list(p)
    w = f32(m, c // g, *k)
    ins = ['x', 'w'] + (['b'] if b else [])
    inits = [init('w', w)] + ([init('b', f32(m))] if b else [])
    case('conv_%02d' % i, [helper.make_node('Conv', ins, ['y'], **attrs)],
         [('x', f32(n, c, *sp))], [('y', F)], inits, opset=11)

# ---------------------------------------------------------------- ConvTranspose
ct_specs = [
    # (N, C, spatial, Mg, kernel, strides, pads, dil, group, bias, extra)
    (1, 24, (40, 40), 24, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1, True, {}),
    (1, 24, (40, 40), 1, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1, False, {}),
    (1, 8, (13, 11), 6, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, True, {'output_padding': [1, 0]}),
    (2, 8, (9, 7), 3, (3, 5), (2, 3), (0, 1, 2, 0), (2, 1), 2, True, {}),
    (1, 6, (10, 10), 4, (4, 4), (2, 2), None, (1, 1), 1, True, {'auto_pad': 'SAME_UPPER'}),
    (1, 6, (10, 10), 4, (3, 3), (2, 2), None, (1, 1), 1, True, {'auto_pad': 'SAME_LOWER'}),
    (1, 6, (10, 10), 4, (3, 3), (3, 2), None, (1, 1), 1, True, {'output_shape': [30, 21]}),
    (1, 4, (50,), 3, (4,), (2,), (1, 1), (1,), 1, True, {}),
    (1, 4, (5, 6, 7), 2, (3, 3, 3), (2, 1, 2), (1, 0, 1, 0, 1, 1), (1, 1, 1), 2, True, {}),
    (1, 64, (30, 30), 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True, {}),
]
for i, (n, c, sp, mg, k, s, p, d, g, b, ex) in enumerate(ct_specs):
    attrs = dict(kernel_shape=list(k), strides=list(s), dilations=list(d), group=g, **ex)
    if p is not None:
        attrs['pads'] = list(p)
    ins = ['x', 'w'] + (['b'] if b else [])
    inits = [init('w', f32(c, mg, *k))] + ([init('b', f32(mg * g))] if b else [])
    case('convt_%02d' % i, [helper.make_node('ConvTranspose', ins, ['y'], **attrs)],
         [('x', f32(n, c, *sp))], [('y', F)], inits, opset=11)

# ---------------------------------------------------------------- Gemm / MatMul
gemm_specs = [((64, 32), (32, 48), (48,), 0, 0, 1.0, 1.0), ((32, 64), (48, 32), (64, 48), 1, 1, 0.5, 2.0),
              ((5, 7), (7, 3), None, 0, 0, 1.0, 1.0), ((200, 300), (300, 100), (1,), 0, 0, 1.0, 1.0),
              ((7, 200), (1, 200), (7, 1), 0, 1, 1.0, -1.0)]
for i, (a, b, cc, ta, tb, al, be) in enumerate(gemm_specs):
    A = f32(*a); B = f32(*b)
    ins = [('a', A), ('b', B)] + ([('c', f32(*cc))] if cc else [])
    case('gemm_%02d' % i, [helper.make_node('Gemm', [x for x, _ in ins], ['y'], transA=ta, transB=tb, alpha=al, beta=be)],
         ins, [('y', F)], opset=13)
mm_specs = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
            ((2, 1, 3, 4), (5, 4, 6)), ((1, 8, 64, 32), (1, 8, 32, 64)), ((300, 200), (200, 150)),
            ((6, 40, 25), (6, 25, 30)), ((7, 1, 5, 6), (1, 3, 6, 2)), ((1, 80, 480), (480, 120))]
for i, (a, b) in enumerate(mm_specs):
    case('matmul_%02d' % i, [helper.make_node('MatMul', ['a', 'b'], ['y'])],
         [('a', f32(*a)), ('b', f32(*b))], [('y', F)], opset=13)
case('matmul_int32', [helper.make_node('MatMul', ['a', 'b'], ['y'])],
     [('a', rng.integers(-50, 50, (3, 4, 5)).astype(np.int32)), ('b', rng.integers(-50, 50, (5, 2)).astype(np.int32))],
     [('y', TensorProto.INT32)], opset=13)

# ---------------------------------------------------------------- Einsum
ein_specs = [('bij,bjk->bik', [(3, 4, 5), (3, 5, 6)]), ('bhid,bhjd->bhij', [(2, 3, 7, 8), (2, 3, 9, 8)]),
             ('ij->ji', [(5, 6)]), ('ij->', [(5, 6)]), ('ij,jk', [(4, 5), (5, 3)]),
             ('i,i->', [(7,), (7,)]), ('i,j->ij', [(4,), (5,)]), ('...ij,...jk->...ik', [(2, 3, 4, 5), (2, 3, 5, 2)]),
             ('bn,anm,bm->ba', [(2, 3), (4, 3, 5), (2, 5)]), ('ii->i', [(5, 5)]), ('ij,ij->ij', [(3, 4), (3, 4)]),
             ('abc->cab', [(2, 3, 4)]), ('nchw,kc->nkhw', [(1, 8, 5, 6), (4, 8)]), ('bhqk,bhkd->bhqd', [(1, 4, 10, 12), (1, 4, 12, 16)]),
             ('ijk,jil->kl', [(3, 4, 5), (4, 3, 2)]), ('...i,...i->...', [(2, 3, 4), (2, 3, 4)])]
for i, (eq, shapes) in enumerate(ein_specs):
    names = ['x%d' % j for j in range(len(shapes))]
    case('einsum_%02d' % i, [helper.make_node('Einsum', names, ['y'], equation=eq)],
         [(nm, f32(*s)) for nm, s in zip(names, shapes)], [('y', F)], opset=12)

# ---------------------------------------------------------------- Pools
pool_specs = [
    ('MaxPool', (1, 3, 32, 32), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ('MaxPool', (1, 3, 31, 32), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ('MaxPool', (2, 3, 20, 21), dict(kernel_shape=[3, 2], strides=[2, 1], dilations=[2, 2], pads=[1, 0, 2, 1])),
    ('MaxPool', (1, 2, 11, 13), dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad='SAME_UPPER')),
    ('MaxPool', (1, 2, 11, 13), dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad='SAME_LOWER')),
    ('MaxPool', (1, 2, 30), dict(kernel_shape=[4], strides=[3], pads=[1, 2])),
    ('MaxPool', (1, 2, 6, 7, 8), dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2])),
    ('AveragePool', (1, 3, 32, 32), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ('AveragePool', (1, 3, 32, 32), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
    ('AveragePool', (1, 3, 31, 30), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)),
    ('AveragePool', (1, 3, 31, 30), dict(kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)),
    ('AveragePool', (1, 480, 3, 80), dict(kernel_shape=[3, 2], strides=[3, 2])),
    ('AveragePool', (1, 2, 11, 13), dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad='SAME_UPPER')),
    ('AveragePool', (1, 2, 6, 7, 8), dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1])),
    ('LpPool', (1, 3, 12, 12), dict(kernel_shape=[3, 3], strides=[2, 2], p=2)),
    ('LpPool', (1, 3, 12, 12), dict(kernel_shape=[2, 2], strides=[2, 2], p=3, pads=[1, 1, 0, 0])),
]
for i, (op, shp, attrs) in enumerate(pool_specs):
    case('pool_%02d_%s' % (i, op), [helper.make_node(op, ['x'], ['y'], **attrs)],
         [('x', f32(*shp))], [('y', F)], opset=12 if op != 'LpPool' else 11)
case('maxpool_indices', [helper.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
     [('x', f32(2, 3, 10, 11))], [('y', F), ('i', TensorProto.INT64)], opset=12)
case('maxpool_indices_colmajor', [helper.make_node('MaxPool', ['x'], ['y', 'i'], kernel_shape=[2, 2], strides=[2, 2], storage_order=1)],
     [('x', f32(2, 3, 10, 12))], [('y', F), ('i', TensorProto.INT64)], opset=12)
case('maxpool_uint8', [helper.make_node('MaxPool', ['x'], ['y'], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])],
     [('x', rng.integers(0, 255, (1, 2, 9, 9)).astype(np.uint8))], [('y', TensorProto.UINT8)], opset=12)
case('maxpool_int8', [helper.make_node('MaxPool', ['x'], ['y'], kernel_shape=[2, 2], strides=[2, 2])],
     [('x', rng.integers(-128, 127, (1, 2, 9, 9)).astype(np.int8))], [('y', TensorProto.INT8)], opset=12)
for op in ['GlobalAveragePool', 'GlobalMaxPool', 'GlobalLpPool']:
    case('global_%s' % op, [helper.make_node(op, ['x'], ['y'])], [('x', f32(2, 5, 7, 9))], [('y', F)], opset=12)
    case('global3d_%s' % op, [helper.make_node(op, ['x'], ['y'])], [('x', f32(2, 5, 3, 4, 5))], [('y', F)], opset=12)

# ---------------------------------------------------------------- Normalisations
case('batchnorm_4d', [helper.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], epsilon=1e-3)],
     [('x', f32(2, 6, 7, 8))], [('y', F)],
     [init('s', f32(6)), init('b', f32(6)), init('m', f32(6)), init('v', f32(6, lo=0.1, hi=2))], opset=9)
case('batchnorm_2d', [helper.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'])],
     [('x', f32(5, 6))], [('y', F)],
     [init('s', f32(6)), init('b', f32(6)), init('m', f32(6)), init('v', f32(6, lo=0.1, hi=2))], opset=15)
case('batchnorm_train', [helper.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y', 'rm', 'rv'], training_mode=1, momentum=0.8)],
     [('x', f32(3, 4, 5, 6))], [('y', F), ('rm', F), ('rv', F)],
     [init('s', f32(4)), init('b', f32(4)), init('m', f32(4)), init('v', f32(4, lo=0.1, hi=2))], opset=15)
case('instnorm', [helper.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'], epsilon=1e-4)],
     [('x', f32(2, 3, 9, 10))], [('y', F)], [init('s', f32(3)), init('b', f32(3))], opset=9)
for ax in [-1, -2, 1, 0]:
    case('layernorm_ax%d' % ax, [helper.make_node('LayerNormalization', ['x', 's', 'b'], ['y', 'mu', 'is'], axis=ax, epsilon=1e-3)],
         [('x', f32(3, 4, 5))], [('y', F), ('mu', F), ('is', F)],
         [init('s', f32(*((3, 4, 5)[ax:] if ax != 0 else (3, 4, 5)))), init('b', f32(*((3, 4, 5)[ax:] if ax != 0 else (3, 4, 5))))], opset=17)
case('layernorm_bcast', [helper.make_node('LayerNormalization', ['x', 's'], ['y'], axis=1)],
     [('x', f32(3, 4, 5))], [('y', F)], [init('s', f32(5))], opset=17)
case('lrn', [helper.make_node('LRN', ['x'], ['y'], size=3, alpha=1e-3, beta=0.7, bias=2.0)],
     [('x', f32(2, 7, 4, 5))], [('y', F)], opset=13)

# ---------------------------------------------------------------- Resize / Upsample
def f32c(a):
    return np.array(a, dtype=np.float32)


ctms = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric', 'tf_half_pixel_for_nn', 'half_pixel_symmetric']
nms = ['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil']
ri = 0
for mode in ['nearest', 'linear', 'cubic']:
    for ctm in ctms:
        if (ctm == 'tf_half_pixel_for_nn' and mode != 'nearest') or (ctm == 'half_pixel_symmetric' and mode == 'nearest'):
            continue
        for scales in [(1, 1, 2.0, 3.0), (1, 1, 0.6, 0.8), (1, 1, 1.7, 0.45), (1, 1, 1, 2)]:
            for nm in (nms if mode == 'nearest' else ['round_prefer_floor']):
                opset = 19 if ctm == 'half_pixel_symmetric' else 13
                attrs = dict(mode=mode, coordinate_transformation_mode=ctm)
                if mode == 'nearest':
                    attrs['nearest_mode'] = nm
                case('resize_%03d_%s_%s_%s' % (ri, mode, ctm, nm), [helper.make_node('Resize', ['x', '', 's'], ['y'], **attrs)],
                     [('x', f32(1, 2, 7, 9))], [('y', F)], [init('s', f32c(scales))], opset=opset)
                ri += 1
for mode in ['nearest', 'linear', 'cubic']:
    for sizes in [(1, 2, 14, 5), (1, 2, 3, 20)] + ([(2, 2, 7, 9)] if mode == 'nearest' else []):
        case('resize_%03d_sizes_%s' % (ri, mode), [helper.make_node('Resize', ['x', '', '', 'sz'], ['y'], mode=mode)],
             [('x', f32(1, 2, 7, 9))], [('y', F)], [init('sz', np.array(sizes, dtype=np.int64))], opset=13)
        ri += 1
for mode in ['nearest', 'linear', 'cubic']:
    case('resize_%03d_crop_%s' % (ri, mode), [helper.make_node('Resize', ['x', 'roi', 's'], ['y'], mode=mode,
         coordinate_transformation_mode='tf_crop_and_resize', extrapolation_value=7.5)],
         [('x', f32(1, 2, 7, 9))], [('y', F)], [init('roi', f32c([0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4])), init('s', f32c([1, 1, 1.5, 0.8]))], opset=13)
    ri += 1
case('resize_cubic_exclude', [helper.make_node('Resize', ['x', '', 's'], ['y'], mode='cubic', exclude_outside=1, cubic_coeff_a=-0.5)],
     [('x', f32(1, 2, 7, 9))], [('y', F)], [init('s', f32c([1, 1, 1.6, 0.7]))], opset=13)
case('resize_nearest_det', [helper.make_node('Resize', ['x', 'roi', 's'], ['y'], mode='nearest', coordinate_transformation_mode='asymmetric', nearest_mode='floor')],
     [('x', f32(1, 24, 20, 20))], [('y', F)], [init('roi', f32c([])), init('s', f32c([1, 1, 2, 2]))], opset=11)
case('resize_nearest_4x', [helper.make_node('Resize', ['x', 'roi', 's'], ['y'], mode='nearest', coordinate_transformation_mode='asymmetric', nearest_mode='floor')],
     [('x', f32(1, 24, 20, 20))], [('y', F)], [init('roi', f32c([])), init('s', f32c([1, 1, 4, 4]))], opset=11)
case('resize_linear_3d', [helper.make_node('Resize', ['x', '', 's'], ['y'], mode='linear')],
     [('x', f32(1, 2, 5, 6, 7))], [('y', F)], [init('s', f32c([1, 1, 1.5, 2, 0.5]))], opset=13)
case('resize_linear_2d', [helper.make_node('Resize', ['x', '', 's'], ['y'], mode='linear')],
     [('x', f32(5, 6))], [('y', F)], [init('s', f32c([1.5, 2.5]))], opset=13)
case('resize_nearest_uint8', [helper.make_node('Resize', ['x', '', 's'], ['y'], mode='nearest')],
     [('x', rng.integers(0, 255, (1, 3, 5, 6)).astype(np.uint8))], [('y', TensorProto.UINT8)], [init('s', f32c([1, 1, 2.5, 0.5]))], opset=13)
case('resize10_nearest', [helper.make_node('Resize', ['x', 's'], ['y'], mode='nearest')],
     [('x', f32(1, 2, 7, 9))], [('y', F)], [init('s', f32c([1, 1, 2.3, 0.6]))], opset=10)
case('resize10_linear', [helper.make_node('Resize', ['x', 's'], ['y'], mode='linear')],
     [('x', f32(1, 2, 7, 9))], [('y', F)], [init('s', f32c([1, 1, 2.3, 0.6]))], opset=10)
case('upsample9_nearest', [helper.make_node('Upsample', ['x', 's'], ['y'], mode='nearest')],
     [('x', f32(1, 2, 7, 9))], [('y', F)], [init('s', f32c([1, 1, 2, 3]))], opset=9)
case('upsample9_linear', [helper.make_node('Upsample', ['x', 's'], ['y'], mode='linear')],
     [('x', f32(1, 2, 7, 9))], [('y', F)], [init('s', f32c([1, 1, 2.5, 1.5]))], opset=9)
case('upsample7_nearest', [helper.make_node('Upsample', ['x'], ['y'], mode='nearest', scales=[1.0, 1.0, 2.0, 2.0])],
     [('x', f32(1, 2, 7, 9))], [('y', F)], opset=7)
for mode in ['linear', 'cubic']:
    for sc in [(1, 1, 0.5, 0.3), (1, 1, 0.7, 1.6), (1, 1, 2, 2)]:
        for ex in [0, 1]:
            case('resize18_aa_%s_%s_%d' % (mode, '_'.join(str(x) for x in sc[2:]), ex),
                 [helper.make_node('Resize', ['x', '', 's'], ['y'], mode=mode, antialias=1, exclude_outside=ex)],
                 [('x', f32(1, 2, 17, 19))], [('y', F)], [init('s', f32c(sc))], opset=18)
case('resize18_axes', [helper.make_node('Resize', ['x', '', 's'], ['y'], mode='linear', axes=[3, 2])],
     [('x', f32(1, 2, 7, 9))], [('y', F)], [init('s', f32c([1.5, 0.5]))], opset=18)
for pol in ['not_larger', 'not_smaller']:
    case('resize18_%s' % pol, [helper.make_node('Resize', ['x', '', '', 'sz'], ['y'], mode='nearest', axes=[2, 3], keep_aspect_ratio_policy=pol)],
         [('x', f32(1, 2, 7, 9))], [('y', F)], [init('sz', np.array([10, 20], dtype=np.int64))], opset=18)

# ---------------------------------------------------------------- Quantize / Dequantize
I8, U8, I16, U16, I32, I4, U4 = 3, 2, 5, 4, 6, 22, 21
# x values include exact halves to check round-half-to-even
xq = (np.arange(-300, 300, dtype=np.float32) * 0.25).reshape(2, 3, 100)
case('q10_u8', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'])], [('x', xq)], [('y', U8)],
     [init('s', np.array(0.5, np.float32)), init('z', np.array(128, np.uint8))], opset=10)
case('q10_i8_nozp', [helper.make_node('QuantizeLinear', ['x', 's'], ['y'])], [('x', xq)], [('y', U8)],
     [init('s', np.array(0.3, np.float32))], opset=10)
case('q10_i8', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'])], [('x', xq)], [('y', I8)],
     [init('s', np.array(0.5, np.float32)), init('z', np.array(-3, np.int8))], opset=10)
case('q13_axis', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'], axis=1)], [('x', xq)], [('y', I8)],
     [init('s', f32c([0.5, 0.25, 1.0])), init('z', np.array([0, 3, -4], np.int8))], opset=13)
case('q13_axis_last', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'], axis=-1)], [('x', xq[:, :, :4])], [('y', U8)],
     [init('s', f32c([0.5, 0.25, 1.0, 0.1])), init('z', np.array([0, 3, 4, 200], np.uint8))], opset=13)
case('dq13_axis', [helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'], axis=1)],
     [('x', rng.integers(-128, 127, (2, 3, 10)).astype(np.int8))], [('y', F)],
     [init('s', f32c([0.5, 0.25, 1.0])), init('z', np.array([0, 3, -4], np.int8))], opset=13)
case('dq10_u8', [helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'])],
     [('x', rng.integers(0, 255, (2, 3, 10)).astype(np.uint8))], [('y', F)],
     [init('s', np.array(0.02, np.float32)), init('z', np.array(100, np.uint8))], opset=10)
case('dq10_i32', [helper.make_node('DequantizeLinear', ['x', 's'], ['y'])],
     [('x', rng.integers(-100000, 100000, (20,)).astype(np.int32))], [('y', F)],
     [init('s', np.array(0.0013, np.float32))], opset=10)
case('q21_i16', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'])], [('x', xq * 100)], [('y', I16)],
     [init('s', np.array(0.5, np.float32)), init('z', np.array(-30, np.int16))], opset=21)
case('q21_u16', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'])], [('x', xq * 100)], [('y', U16)],
     [init('s', np.array(0.5, np.float32)), init('z', np.array(30000, np.uint16))], opset=21)
case('qdq21_block', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['q'], axis=2, block_size=32),
                     helper.make_node('DequantizeLinear', ['q', 's', 'z'], ['y'], axis=2, block_size=32),
                     helper.make_node('Cast', ['q'], ['qi'], to=I32)],
     [('x', xq)], [('y', F), ('qi', I32)],
     [init('s', f32(2, 3, 4, lo=0.05, hi=0.5)), init('z', rng.integers(-10, 10, (2, 3, 4)).astype(np.int8))], opset=21)
case('qdq21_int4', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['q'], axis=1),
                    helper.make_node('DequantizeLinear', ['q', 's', 'z'], ['y'], axis=1),
                    helper.make_node('Cast', ['q'], ['qi'], to=I32)],
     [('x', xq)], [('y', F), ('qi', I32)],
     [init('s', f32c([0.5, 2.0, 4.0])), init('z', np.array([1, -2, 0], np.int8), I4)], opset=21)
case('qdq21_uint4', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['q']),
                     helper.make_node('DequantizeLinear', ['q', 's', 'z'], ['y']),
                     helper.make_node('Cast', ['q'], ['qi'], to=I32)],
     [('x', xq)], [('y', F), ('qi', I32)],
     [init('s', np.array(3.0, np.float32)), init('z', np.array(7, np.uint8), U4)], opset=21)
case('q21_outdtype', [helper.make_node('QuantizeLinear', ['x', 's'], ['y'], output_dtype=I16)], [('x', xq)], [('y', I16)],
     [init('s', np.array(0.01, np.float32))], opset=21)
for dt, npt, zpv in [(U16, np.uint16, 1000), (I16, np.int16, -7), (U8, np.uint8, 3), (I8, np.int8, -3)]:
    case('ms_qdq_%d' % dt, [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['q'], domain='com.microsoft'),
                            helper.make_node('DequantizeLinear', ['q', 's', 'z'], ['y'], domain='com.microsoft')],
         [('x', xq * 7)], [('y', F), ('q', dt)],
         [init('s', np.array(0.25, np.float32)), init('z', np.array(zpv, npt))], opset=13, extra=[('com.microsoft', 1)])
case('ms_qdq_axis', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['q'], domain='com.microsoft', axis=1),
                     helper.make_node('DequantizeLinear', ['q', 's', 'z'], ['y'], domain='com.microsoft', axis=1)],
     [('x', xq * 7)], [('y', F), ('q', I16)],
     [init('s', f32c([0.25, 0.5, 2])), init('z', np.array([0, 10, -10], np.int16))], opset=13, extra=[('com.microsoft', 1)])

# ---------------------------------------------------------------- Dynamic quantization
# dynq_int_*: integer results, compared bit for bit (test/dynamic.bats).
def q8(npt, *shape):
    lo, hi = (0, 256) if npt == np.uint8 else (-128, 128)
    return rng.integers(lo, hi, size=shape).astype(npt)


def scalar(v, npt):
    return np.array(v, npt)


MS = [('com.microsoft', 1)]
case('dynq_int_dql', [helper.make_node('DynamicQuantizeLinear', ['x'], ['y', 's', 'z'])],
     [('x', f32(3, 50, lo=-2, hi=3))], [('y', U8), ('s', F), ('z', U8)], opset=11)
case('dynq_int_dql_pos', [helper.make_node('DynamicQuantizeLinear', ['x'], ['y', 's', 'z'])],
     [('x', f32(4, 7, lo=0.5, hi=3))], [('y', U8), ('s', F), ('z', U8)], opset=11)
case('dynq_int_dql_zero', [helper.make_node('DynamicQuantizeLinear', ['x'], ['y', 's', 'z'])],
     [('x', np.zeros((2, 3), np.float32))], [('y', U8), ('s', F), ('z', U8)], opset=11)
for nm, a, b, za, zb in [
        ('u8', q8(np.uint8, 2, 3, 40), q8(np.uint8, 40, 7), scalar(3, np.uint8), scalar(200, np.uint8)),
        ('s8col', q8(np.uint8, 5, 33), q8(np.int8, 33, 6), scalar(120, np.uint8),
         np.array([0, 1, -1, 5, 0, -7], np.int8)),
        ('bigk', q8(np.uint8, 3, 600), q8(np.int8, 600, 4), scalar(0, np.uint8), scalar(0, np.int8)),
        ('batch', q8(np.uint8, 2, 4, 30), q8(np.int8, 2, 30, 5), scalar(9, np.uint8), scalar(-3, np.int8))]:
    case('dynq_int_mmi_' + nm, [helper.make_node('MatMulInteger', ['a', 'b', 'za', 'zb'], ['y'])],
         [('a', a), ('b', b)], [('y', I32)], [init('za', za), init('zb', zb)], opset=10)
for nm, x, w, zx, zw, attrs in [
        ('pad', q8(np.uint8, 1, 3, 8, 8), q8(np.uint8, 4, 3, 3, 3), 7, 131, dict(pads=[1, 1, 1, 1])),
        ('s8', q8(np.uint8, 2, 4, 7, 9), q8(np.int8, 6, 2, 3, 1), 100, 0, dict(group=2, strides=[2, 1])),
        ('dw', q8(np.uint8, 1, 8, 9, 9), q8(np.uint8, 8, 1, 3, 3), 128, 128,
         dict(group=8, pads=[1, 1, 1, 1], strides=[2, 2])),
        ('bigk', q8(np.uint8, 1, 64, 6, 6), q8(np.uint8, 8, 64, 3, 3), 0, 0, {})]:
    case('dynq_int_conv_' + nm, [helper.make_node('ConvInteger', ['x', 'w', 'zx', 'zw'], ['y'], **attrs)],
         [('x', x), ('w', w)], [('y', I32)],
         [init('zx', scalar(zx, np.uint8)), init('zw', scalar(zw, w.dtype.type))], opset=10)
case('dynq_dqmatmul', [helper.make_node('DynamicQuantizeMatMul', ['a', 'b', 'bs', 'bz', 'bias'], ['y'],
                                        domain='com.microsoft')],
     [('a', f32(2, 5, 16, lo=-3, hi=2))], [('y', F)],
     [init('b', q8(np.int8, 16, 6)), init('bs', f32(6, lo=0.01, hi=0.05)),
      init('bz', np.zeros(6, np.int8)), init('bias', f32(6))], opset=13, extra=MS)
case('dynq_mmitf', [helper.make_node('MatMulIntegerToFloat', ['a', 'b', 'as', 'bs', 'az', 'bz', 'bias'], ['y'],
                                     domain='com.microsoft')],
     [('a', q8(np.uint8, 3, 20))], [('y', F)],
     [init('b', q8(np.uint8, 20, 4)), init('as', scalar(0.02, np.float32)), init('bs', scalar(0.03, np.float32)),
      init('az', scalar(100, np.uint8)), init('bz', scalar(128, np.uint8)), init('bias', f32(4))],
     opset=13, extra=MS)

# ---------------------------------------------------------------- MatMulNBits
def nbits_pack(vals, bits):
    """Values (last axis) packed `bits` to a byte, low bits first."""
    per = 8 // bits
    pad = (-vals.shape[-1]) % per
    v = np.concatenate([vals, np.zeros(vals.shape[:-1] + (pad,), vals.dtype)], -1).astype(np.uint8)
    v = v.reshape(vals.shape[:-1] + (-1, per))
    return sum((v[..., j] << (bits * j)) for j in range(per)).astype(np.uint8)


def nbits_case(name, K, N, bits, block, zp='packed', bias=False, ashape=(3,)):
    w = f32(K, N)
    w[rng.integers(0, K)] *= 8
    kb = (K + block - 1) // block
    wp = np.zeros((kb * block, N), np.float32)
    wp[:K] = w
    blocks = wp.T.reshape(N, kb, block)
    hi = (1 << bits) - 1
    mn = np.minimum(blocks.min(-1), 0)
    mx = np.maximum(blocks.max(-1), 0)
    sc = ((mx - mn) / hi).astype(np.float32)
    sc[sc == 0] = 1
    z = np.clip(np.round(-mn / sc), 0, hi) if zp else np.full_like(sc, 1 << (bits - 1))
    q = np.clip(np.round(blocks / sc[..., None] + z[..., None]), 0, hi)
    inits = [init('B', nbits_pack(q, bits)), init('s', sc.reshape(-1))]
    ins = ['a', 'B', 's']
    if zp == 'packed':
        inits.append(init('z', nbits_pack(z, bits)))
        ins.append('z')
    elif zp == 'float':
        inits.append(init('z', (z + f32(*z.shape) * 0.3).astype(np.float32)))
        ins.append('z')
    if bias:
        ins += [''] * (5 - len(ins)) + ['b']
        inits.append(init('b', f32(N)))
    case(name, [helper.make_node('MatMulNBits', ins, ['y'], domain='com.microsoft', K=K, N=N, bits=bits,
                                 block_size=block)],
         [('a', f32(*ashape, K))], [('y', F)], inits, extra=[('com.microsoft', 1)])


nbits_case('nbits4_zp', 64, 24, 4, 32)
nbits_case('nbits4_sym', 64, 24, 4, 16, zp=None)
nbits_case('nbits4_pad', 100, 17, 4, 32, ashape=(2, 5))
nbits_case('nbits4_pad_odd_blocks', 200, 9, 4, 64, bias=True)
nbits_case('nbits4_b128', 300, 33, 4, 128, ashape=(1, 1))
nbits_case('nbits4_fzp', 96, 8, 4, 32, zp='float')
nbits_case('nbits8_zp', 80, 12, 8, 32, bias=True)
nbits_case('nbits8_sym', 64, 300, 8, 16, zp=None, ashape=(4,))
nbits_case('nbits2_zp', 70, 10, 2, 16)


def gbq_case(name, V, H, dt, block, zp=True, bits=4):
    lo, hi = {21: (0, 15), 22: (-8, 7), 2: (0, 255)}[dt]
    npt = np.int8 if dt == 22 else np.uint8
    nb = (H + block - 1) // block
    inits = [init('d', rng.integers(lo, hi + 1, (V, H)).astype(npt), dt if dt != 2 else None),
             init('s', f32(V, nb, lo=0.01, hi=0.1))]
    ins = ['d', 'i', 's']
    if zp:
        inits.append(init('z', rng.integers(lo, hi + 1, (V, nb)).astype(npt), dt if dt != 2 else None))
        ins.append('z')
    case(name, [helper.make_node('GatherBlockQuantized', ins, ['y'], domain='com.microsoft', bits=bits,
                                 block_size=block, gather_axis=0, quantize_axis=1)],
         [('i', rng.integers(-V, V, (2, 3)).astype(np.int64))], [('y', F)], inits,
         extra=[('com.microsoft', 1)])


gbq_case('gbq_int4', 40, 64, 22, 32)
gbq_case('gbq_uint4_nozp', 40, 48, 21, 16, zp=False)
gbq_case('gbq_uint8', 30, 64, 2, 32, bits=8)
if SUITE == 'qlinear':
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import qlinear_cases
    cases.clear()
    qlinear_cases.add(case, init, np.random.default_rng(19))

# ---------------------------------------------------------------- write / finish
JS2NP = {'float32': np.float32, 'uint8': np.uint8, 'int8': np.int8, 'int16': np.int16, 'uint16': np.uint16,
         'int32': np.int32, 'int64': np.int64, 'float64': np.float64}
if ACTION == 'write':
    os.makedirs(OUT, exist_ok=True)
    for name, m, inputs in cases:
        d = os.path.join(OUT, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d + '/test_data_set_0')
        onnx.save(m, d + '/model.onnx')
        meta = []
        for k, (n, a) in enumerate(inputs):
            t = numpy_helper.from_array(a, n)
            open(d + '/test_data_set_0/input_%d.pb' % k, 'wb').write(t.SerializeToString())
            a.tofile(d + '/in_%d.bin' % k)
            meta.append({'name': n, 'dtype': str(a.dtype), 'dims': list(a.shape), 'file': 'in_%d.bin' % k})
        json.dump(meta, open(d + '/inputs.json', 'w'))
    print('%d cases' % len(cases))
    sys.exit(0)
bad = []
for name, m, inputs in cases:
    d = os.path.join(OUT, name)
    if os.path.exists(d + '/ort-error.txt') or not os.path.exists(d + '/outputs.json'):
        bad.append(name)
        continue
    for k, o in enumerate(json.load(open(d + '/outputs.json'))):
        a = np.fromfile(d + '/out_%d.bin' % k, dtype=JS2NP[o['dtype']]).reshape(o['dims'])
        open(d + '/test_data_set_0/output_%d.pb' % k, 'wb').write(numpy_helper.from_array(a, o['name']).SerializeToString())
    for f in os.listdir(d):
        if f.endswith('.bin') or f.endswith('.json'):
            os.remove(os.path.join(d, f))
if bad:
    sys.exit('ONNX Runtime rejected: ' + ' '.join(bad))
print('%d cases' % len(cases))
