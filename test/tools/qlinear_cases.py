"""qlinear_cases.py: single-node cases of the QOperator kernels
(lib/op_qlinear.c) for nn-cases.py's "qlinear" suite: QLinearConv and
QLinearMatMul (per tensor, per channel, bias, uint8/int8), QGemm (C,
alpha, transB, float output), QLinearAdd and QLinearMul (broadcasting),
QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearConcat and QLinearSoftmax."""
import numpy as np
from onnx import helper

MS = [('com.microsoft', 1)]
U8, I8, F = 2, 3, 1


def add(case, init, rng):
    def q(dt, *shape):
        lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
        return rng.integers(lo, hi, size=shape).astype(dt)

    def sc(v):
        return np.array(v, np.float32)

    def zp(dt, v):
        return np.array(v, dt)

    T = {np.uint8: U8, np.int8: I8}
    for dt, wdt, pc, bias, grp in [(np.uint8, np.int8, False, True, 1),
                                   (np.uint8, np.int8, True, True, 1),
                                   (np.int8, np.int8, True, False, 1),
                                   (np.uint8, np.uint8, False, True, 1),
                                   (np.uint8, np.int8, True, True, 8)]:
        M, C = 8, 8
        w = q(wdt, M, C // grp, 3, 3)
        ws = sc(rng.uniform(0.002, 0.01, M)) if pc else sc(0.005)
        wz = np.zeros(M if pc else (), wdt) if wdt == np.int8 else zp(wdt, 120)
        ins = ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'] + (['b'] if bias else [])
        inits = [init('xs', sc(0.02)), init('xz', zp(dt, 7 if dt == np.uint8 else -3)),
                 init('w', w), init('ws', ws), init('wz', wz),
                 init('ys', sc(0.05)), init('yz', zp(dt, 100 if dt == np.uint8 else 5))]
        if bias:
            inits.append(init('b', rng.integers(-2000, 2000, M).astype(np.int32)))
        case('qlconv_%s_%s_pc%d_b%d_g%d' % (dt.__name__, wdt.__name__, pc, bias, grp),
             [helper.make_node('QLinearConv', ins, ['y'], pads=[1, 1, 1, 1], strides=[1, 2], group=grp)],
             [('x', q(dt, 1, C, 9, 11))], [('y', T[dt])], inits, opset=13)
    for dt, pc, shape_a, shape_b in [(np.uint8, False, (5, 16), (16, 7)), (np.uint8, True, (2, 5, 16), (16, 7)),
                                     (np.int8, False, (3, 32), (32, 4))]:
        N = shape_b[-1]
        bs = sc(rng.uniform(0.002, 0.01, N)) if pc else sc(0.004)
        bz = np.zeros(N if pc else (), np.int8)
        case('qlmatmul_%s_pc%d' % (dt.__name__, pc),
             [helper.make_node('QLinearMatMul', ['a', 'as', 'az', 'b', 'bs', 'bz', 'ys', 'yz'], ['y'])],
             [('a', q(dt, *shape_a))], [('y', T[dt])],
             [init('as', sc(0.03)), init('az', zp(dt, 3)), init('b', q(np.int8, *shape_b)), init('bs', bs),
              init('bz', bz), init('ys', sc(0.2)), init('yz', zp(dt, 10))], opset=10 if not pc else 13)
    for tb, alpha, pc, cshape, fout in [(0, 1.0, False, (6,), False), (1, 1.0, True, (1, 6), False),
                                        (0, 0.5, True, (4, 6), False), (1, 1.0, False, (6,), True)]:
        B = q(np.int8, *((6, 16) if tb else (16, 6)))
        ins = ['a', 'as', 'az', 'b', 'bs', 'bz', 'c'] + ([] if fout else ['ys', 'yz'])
        inits = [init('as', sc(0.03)), init('az', zp(np.uint8, 128)), init('b', B),
                 init('bs', sc(rng.uniform(0.002, 0.01, 6)) if pc else sc(0.004)),
                 init('bz', np.zeros(6 if pc else (), np.int8)),
                 init('c', rng.integers(-3000, 3000, cshape).astype(np.int32))]
        if not fout:
            inits += [init('ys', sc(0.1)), init('yz', zp(np.uint8, 120))]
        case('qgemm_tb%d_a%g_pc%d_c%d_f%d' % (tb, alpha, pc, len(cshape), fout),
             [helper.make_node('QGemm', ins, ['y'], domain='com.microsoft', transB=tb, alpha=alpha)],
             [('a', q(np.uint8, 4, 16))], [('y', F if fout else U8)], inits, opset=13, extra=MS)
    for dt in (np.uint8, np.int8):
        for op in ('QLinearAdd', 'QLinearMul'):
            case('%s_%s' % (op, dt.__name__),
                 [helper.make_node(op, ['a', 'as', 'az', 'b', 'bs', 'bz', 'cs', 'cz'], ['y'], domain='com.microsoft')],
                 [('a', q(dt, 2, 3, 8, 8)), ('b', q(dt, 3, 1, 8))], [('y', T[dt])],
                 [init('as', sc(0.02)), init('az', zp(dt, 5)), init('bs', sc(0.03)), init('bz', zp(dt, -4 if dt == np.int8 else 40)),
                  init('cs', sc(0.04 if op == 'QLinearAdd' else 0.3)), init('cz', zp(dt, 9))], opset=13, extra=MS)
        un = [('QLinearSigmoid', {}, 1.0 / 256), ('QLinearLeakyRelu', {'alpha': 0.1}, 0.02),
              ('QLinearAveragePool', {'kernel_shape': [3, 3], 'strides': [2, 2], 'pads': [1, 1, 1, 1]}, 0.03),
              ('QLinearAveragePool', {'kernel_shape': [2, 2], 'count_include_pad': 1, 'pads': [0, 0, 1, 1]}, 0.03),
              ('QLinearGlobalAveragePool', {}, 0.01), ('QLinearSoftmax', {'axis': -1, 'opset': 13}, 1.0 / 256)]
        for k, (op, attrs, ys) in enumerate(un):
            yz = (0 if dt == np.uint8 else -128) if op in ('QLinearSigmoid', 'QLinearSoftmax') else 10
            case('%s_%d_%s' % (op, k, dt.__name__),
                 [helper.make_node(op, ['x', 'xs', 'xz', 'ys', 'yz'], ['y'], domain='com.microsoft', **attrs)],
                 [('x', q(dt, 2, 4, 9, 10))], [('y', T[dt])],
                 [init('xs', sc(0.05)), init('xz', zp(dt, 12)), init('ys', sc(ys)), init('yz', zp(dt, yz))],
                 opset=13, extra=MS)
        case('QLinearConcat_%s' % dt.__name__,
             [helper.make_node('QLinearConcat', ['ys', 'yz', 'a', 'as', 'az', 'b', 'bs', 'bz', 'c', 'ys', 'yz'], ['y'],
                               domain='com.microsoft', axis=1)],
             [('a', q(dt, 2, 3, 5)), ('b', q(dt, 2, 4, 5)), ('c', q(dt, 2, 1, 5))], [('y', T[dt])],
             [init('ys', sc(0.05)), init('yz', zp(dt, 3)), init('as', sc(0.02)), init('az', zp(dt, 5)),
              init('bs', sc(0.11)), init('bz', zp(dt, -7 if dt == np.int8 else 7))], opset=13, extra=MS)
