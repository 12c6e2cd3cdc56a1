/*
 * op_qlinear: the operators of the QOperator format, which read and write
 * quantized tensors: QLinearConv and QLinearMatMul (default domain) and
 * com.microsoft's QGemm, QLinearAdd, QLinearMul, QLinearSigmoid,
 * QLinearLeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool,
 * QLinearConcat and QLinearSoftmax.
 *
 * Each kernel brings its quantized inputs to float, runs the float kernel
 * of the operator (ops.h) on them, and quantizes the result, with the
 * arithmetic of ONNX Runtime's kernels:
 *
 *   Conv, MatMul, Gemm, Mul, GlobalAveragePool: the float kernel runs on
 *       centered integers (q - zero point), as ORT accumulates in int32,
 *       and y = clamp(round(acc * (scale_a * scale_b / scale_y)) + zp_y)
 *       (ORT's requantization: a float multiplier, round half to even).
 *       Products of centered 8-bit values are exact in float; sums past
 *       2^24 may round, which moves a result by one step only when it
 *       lies within about 1e-5 of a rounding boundary.
 *   Add: (a - zp_a) * (scale_a / scale_y) + (b - zp_b) * (scale_b /
 *       scale_y), rounded, + zp_y (MlasQLinearAdd).
 *   Sigmoid, LeakyRelu, AveragePool, Concat: dequantize, compute in
 *       float, quantize as QuantizeLinear does (ORT's lookup tables and
 *       pools do the same; its pools sum in another order, which moves a
 *       result by one step now and then).
 *   Softmax: ORT's own table of exponentials (qsoftmax below).
 *
 * Scales are float scalars; the weights of QLinearConv (axis 0) and the
 * right matrix of QLinearMatMul and QGemm (per column) may have one scale
 * and zero point per channel. Types: uint8 and int8. channels_last is
 * refused.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "ops.h"

#define SOFTMAX_OPSET 13	/* QLinearSoftmax without an opset attribute */

/* A quantized input with its scales and zero points (n of each). */
struct qarg {
	const struct tensor *q;
	int64_t n;
	float *s;
	int32_t *z;
};

static void
qarg_release(struct qarg *a)
{
	free(a->s);
	free(a->z);
	memset(a, 0, sizeof *a);
}

static int
is_8bit(int dt)
{
	return dt == DT_UINT8 || dt == DT_INT8;
}

/*
 * Input i with its scale (i + 1) and zero point (i + 2, optional). The
 * scale holds one value, or `per_axis` values when per_axis > 0.
 */
static int
qarg_get(struct op_ctx *c, int i, int64_t per_axis, struct qarg *a)
{
	const struct tensor *q = ops_input(c, i), *s = ops_input(c, i + 1),
	    *z = ops_input(c, i + 2);

	memset(a, 0, sizeof *a);
	if (!q || !s)
		return err_set(c->err, "input %d is missing", q ? i + 1 : i);
	if (!is_8bit(q->dtype))
		return err_set(c->err, "input %d: element type %s is not "
		    "uint8 or int8", i, ops_type_name(q->dtype));
	if (s->dtype != DT_FLOAT)
		return err_set(c->err, "input %d: scale type %s is not float",
		    i + 1, ops_type_name(s->dtype));
	if (z && z->dtype != q->dtype)
		return err_set(c->err, "input %d: zero point type %s differs "
		    "from input %d's %s", i + 2, ops_type_name(z->dtype), i,
		    ops_type_name(q->dtype));
	if (s->nelem != 1 && !(per_axis > 0 && s->rank == 1 &&
	    s->nelem == per_axis))
		return err_set(c->err, "input %d: scale has %lld values, "
		    "expected 1%s", i + 1, (long long)s->nelem,
		    per_axis > 0 ? " or one per channel" : "");
	if (z && z->nelem != s->nelem)
		return err_set(c->err, "input %d: zero point has %lld values, "
		    "the scale %lld", i + 2, (long long)z->nelem,
		    (long long)s->nelem);
	a->q = q;
	a->n = s->nelem;
	a->s = malloc(sizeof *a->s * (size_t)a->n);
	a->z = calloc((size_t)a->n, sizeof *a->z);
	if (!a->s || !a->z) {
		qarg_release(a);
		return err_nomem(c->err);
	}
	tensor_to_float(s, a->s);
	for (int64_t k = 0; z && k < a->n; k++)
		a->z[k] = (int32_t)tensor_get(z, k);
	for (int64_t k = 0; k < a->n; k++)
		if (!(a->s[k] > 0) || !isfinite(a->s[k])) {
			err_set(c->err, "input %d: scale %g is not positive",
			    i + 1, (double)a->s[k]);
			qarg_release(a);
			return -1;
		}
	return 0;
}

/* Size of the axes before axis and after it: outer x dims[axis] x inner. */
static void
split_axis(const struct tensor *t, int axis, int64_t *outer, int64_t *inner)
{
	*outer = 1, *inner = 1;
	for (int i = 0; i < axis; i++)
		*outer *= t->dims[i];
	for (int i = axis + 1; i < t->rank; i++)
		*inner *= t->dims[i];
}

/*
 * out = (q - zp[k]) * mul[k] in float (mul NULL: 1), k the index along
 * axis when a has one value per channel; to_float_raw: q * mul + add.
 */
static int
to_float_as(struct op_ctx *c, const struct qarg *a, int axis,
    const float *mul, int centered, float add, struct tensor *out)
{
	const struct tensor *q = a->q;
	int64_t outer = 1, inner = q->nelem, len = 1;
	float *y;

	if (tensor_alloc_like_uninit(out, DT_FLOAT, q, c->err) == -1)
		return -1;
	if (a->n > 1) {
		split_axis(q, axis, &outer, &inner);
		len = q->dims[axis];
	}
	y = out->data;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t k = 0; k < len; k++) {
			int64_t base = (o * len + k) * inner;
			float m = mul ? mul[k] : 1.0f;
			int32_t z = centered ? a->z[k] : 0;

			if (q->dtype == DT_UINT8) {
				const uint8_t *x = (const uint8_t *)q->data +
				    base;
				for (int64_t i = 0; i < inner; i++)
					y[base + i] = (float)(x[i] - z) * m +
					    add;
			} else {
				const int8_t *x = (const int8_t *)q->data +
				    base;
				for (int64_t i = 0; i < inner; i++)
					y[base + i] = (float)(x[i] - z) * m +
					    add;
			}
		}
	return 0;
}

static int
to_float(struct op_ctx *c, const struct qarg *a, int axis, const float *mul,
    struct tensor *out)
{
	return to_float_as(c, a, axis, mul, 1, 0.0f, out);
}

/* The output's zero point (input i, optional) and type. */
static int
out_zp(struct op_ctx *c, int i, int32_t *zp, int *dt)
{
	const struct tensor *z = ops_input(c, i);

	*zp = 0, *dt = DT_UINT8;
	if (!z)
		return 0;
	if (!is_8bit(z->dtype) || z->nelem != 1)
		return err_set(c->err, "input %d: the output zero point must "
		    "be one uint8 or int8 value", i);
	*zp = (int32_t)tensor_get(z, 0);
	*dt = z->dtype;
	return 0;
}

/* The output's scale (input i): one positive float. */
static int
out_scale(struct op_ctx *c, int i, float *s)
{
	const struct tensor *t = ops_input(c, i);

	if (!t || t->dtype != DT_FLOAT || t->nelem != 1)
		return err_set(c->err, "input %d: the output scale must be "
		    "one float", i);
	*s = ((const float *)t->data)[0];
	if (!(*s > 0) || !isfinite(*s))
		return err_set(c->err, "input %d: scale %g is not positive", i,
		    (double)*s);
	return 0;
}

/*
 * How a float result becomes an integer, rounding half to even: the three
 * forms of ORT's kernels.
 */
enum rq {
	RQ_MUL,		/* round(acc * m) + zp: MLAS requantization */
	RQ_DIV,		/* round(y / m) + zp: QuantizeLinear, lookup tables */
	RQ_DIV_ZP,	/* round(y / m + zp): the pools */
};

/*
 * c->out[0] = clamp(the rq form of acc, m[k] and zp), k the index along
 * axis when nm > 1.
 */
static int
requant(struct op_ctx *c, const struct tensor *acc, const float *m,
    int64_t nm, int axis, enum rq form, int32_t zp, int dt)
{
	struct tensor *y = &c->out[0];
	int64_t outer = 1, inner = acc->nelem, len = 1, lo, hi;
	const float *x = acc->data;

	if (nm > 1 && (axis >= acc->rank || acc->dims[axis] != nm))
		return err_set(c->err, "%lld scales for an output of %lld "
		    "channels", (long long)nm, axis < acc->rank ?
		    (long long)acc->dims[axis] : 0LL);
	if (tensor_alloc_like_uninit(y, dt, acc, c->err) == -1)
		return -1;
	dtype_int_range(dt, &lo, &hi);
	if (nm > 1) {
		split_axis(acc, axis, &outer, &inner);
		len = acc->dims[axis];
	}
	for (int64_t o = 0; o < outer; o++)
		for (int64_t k = 0; k < len; k++) {
			int64_t base = (o * len + k) * inner;
			float mk = m[nm > 1 ? k : 0];

			for (int64_t i = base; i < base + inner; i++) {
				float v = form == RQ_MUL ?
				    nearbyintf(x[i] * mk) + (float)zp :
				    form == RQ_DIV ?
				    nearbyintf(x[i] / mk) + (float)zp :
				    nearbyintf(x[i] / mk + (float)zp);

				/* NaN to the low end, as QuantizeLinear */
				v = !(v >= (float)lo) ? (float)lo :
				    v > (float)hi ? (float)hi : v;
				if (dt == DT_UINT8)
					((uint8_t *)y->data)[i] = (uint8_t)v;
				else
					((int8_t *)y->data)[i] = (int8_t)v;
			}
		}
	return 0;
}

/* The float kernel's state, kept between runs with the node's. */
struct qlin_state {
	const struct op_def *def;
	void *inner;
};

static void
qlin_state_free(void *state)
{
	struct qlin_state *s = state;

	if (s && s->inner && s->def->free_state)
		s->def->free_state(s->inner);
	free(s);
}

/*
 * Run the float kernel `op` on in[0..nin) into *out, with the node's
 * attributes and the given opset.
 */
static int
run_float(struct op_ctx *c, const char *op, int opset, int nin,
    const struct tensor *const *in, struct tensor *out)
{
	const struct op_def *d = ops_find("", op);
	struct qlin_state *s = NULL;
	struct op_ctx f = *c;

	if (!d)
		return err_set(c->err, "no float kernel %s", op);
	if (c->state) {
		if (!*c->state) {
			if (!(s = calloc(1, sizeof *s)))
				return err_nomem(c->err);
			s->def = d;
			*c->state = s;
		}
		s = *c->state;
	}
	memset(out, 0, sizeof *out);
	f.opset = opset;
	f.nin = nin;
	f.in = in;
	f.nout = 1;
	f.out = out;
	f.state = s ? &s->inner : NULL;
	f.graphs = NULL;
	/* The node's constant inputs are not the float kernel's: its inputs
	   are temporaries (a reused address is no proof of the same
	   weights), and none is the fold cache's. */
	f.const_in = 0;
	f.fold_cache = NULL;
	return d->run(&f);
}

static int
no_channels_last(struct op_ctx *c)
{
	if (attr_int(c->node, "channels_last", 0))
		return err_set(c->err, "channels_last is not supported");
	return 0;
}

/* The per-channel multipliers sa * sb[k] / sy, as ORT computes them. */
static float *
multipliers(struct op_ctx *c, float sa, const struct qarg *b, float sy)
{
	float *m = malloc(sizeof *m * (size_t)b->n);

	if (!m) {
		err_nomem(c->err);
		return NULL;
	}
	for (int64_t k = 0; k < b->n; k++)
		m[k] = sa * b->s[k] / sy;
	return m;
}

/*
 * The products: QLinearConv (axis 0 of the weights, channel axis 1 of the
 * output), QLinearMatMul and QGemm (columns of B): centered integers
 * through the float kernel, then requantized.
 */
enum qprod { QP_CONV, QP_MATMUL, QP_GEMM };

/* QGemm's C (int32, broadcast to M x N) added to y, scaled by alpha. */
static int
add_gemm_c(struct op_ctx *c, const struct tensor *ct, float alpha,
    struct tensor *y)
{
	int64_t M = y->dims[0], N = y->dims[1], rs, cs;
	const int32_t *cv = ct->data;
	float *yv = y->data;

	if (ct->dtype != DT_INT32)
		return err_set(c->err, "input 6: C must be int32, not %s",
		    ops_type_name(ct->dtype));
	if (ct->rank > 2)
		return err_set(c->err, "input 6: C has rank %d", ct->rank);
	{
		int64_t cm = ct->rank == 2 ? ct->dims[0] : 1;
		int64_t cn = ct->rank >= 1 ? ct->dims[ct->rank - 1] : 1;

		if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
			return err_set(c->err, "input 6: C does not broadcast "
			    "to %lld x %lld", (long long)M, (long long)N);
		rs = cm == 1 ? 0 : cn;
		cs = cn == 1 ? 0 : 1;
	}
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++)
			yv[i * N + j] += alpha * (float)cv[i * rs + j * cs];
	return 0;
}

static int
qproduct(struct op_ctx *c, enum qprod kind)
{
	const struct tensor *w = ops_input(c, 3), *in[3] = { 0 };
	const struct tensor *bias = kind == QP_CONV ? ops_input(c, 8) :
	    kind == QP_GEMM ? ops_input(c, 6) : NULL;
	int ys_at = kind == QP_GEMM ? 7 : 6, trans_b, waxis, yaxis, dt;
	int quant_out = kind != QP_GEMM || ops_input(c, 7);
	float alpha = kind == QP_GEMM ? attr_float(c->node, "alpha", 1.0f) :
	    1.0f, sy = 1.0f, *m = NULL;
	struct tensor xf = { 0 }, wf = { 0 }, bf = { 0 }, acc = { 0 };
	struct qarg a, b;
	int32_t zp;
	int rc = -1;

	if (!w || w->rank < 1)
		return err_set(c->err, "input 3 is missing or a scalar");
	trans_b = kind == QP_GEMM && attr_int(c->node, "transB", 0);
	waxis = kind == QP_CONV ? 0 : kind == QP_GEMM ? (trans_b ? 0 : 1) :
	    w->rank - 1;
	if (kind == QP_GEMM && w->rank != 2)
		return err_set(c->err, "input 3: B must have rank 2");
	if (kind == QP_CONV && no_channels_last(c) == -1)
		return -1;
	if (qarg_get(c, 0, 0, &a) == -1)
		return -1;
	if (qarg_get(c, 3, w->dims[waxis], &b) == -1) {
		qarg_release(&a);
		return -1;
	}
	if ((quant_out && (out_scale(c, ys_at, &sy) == -1 ||
	    out_zp(c, ys_at + 1, &zp, &dt) == -1)) ||
	    !(m = multipliers(c, a.s[0], &b, sy)) || to_float(c, &a, 0, NULL, &xf) == -1 ||
	    to_float(c, &b, waxis, NULL, &wf) == -1)
		goto out;
	in[0] = &xf, in[1] = &wf;
	if (kind == QP_CONV && bias) {
		if (bias->dtype != DT_INT32) {
			err_set(c->err, "input 8: bias must be int32, not %s",
			    ops_type_name(bias->dtype));
			goto out;
		}
		if (tensor_cast(&bf, bias, DT_FLOAT, c->err) == -1)
			goto out;
		in[2] = &bf;
	}
	if (run_float(c, kind == QP_CONV ? "Conv" : kind == QP_GEMM ?
	    "Gemm" : "MatMul", 13, kind == QP_CONV && bias ? 3 : 2, in,
	    &acc) == -1)
		goto out;
	if (kind == QP_GEMM && bias && add_gemm_c(c, bias, alpha, &acc) == -1)
		goto out;
	yaxis = kind == QP_CONV ? 1 : acc.rank - 1;
	if (!quant_out) {
		/* QGemm without y_scale: float, the float Gemm's alpha in */
		float *y = acc.data;
		int64_t N = acc.dims[1];

		for (int64_t i = 0; i < acc.nelem; i++)
			y[i] *= m[b.n > 1 ? i % N : 0];
		tensor_move(&c->out[0], &acc);
		rc = 0;
		goto out;
	}
	if (acc.rank < 2) {
		err_set(c->err, "the product has rank %d", acc.rank);
		goto out;
	}
	rc = requant(c, &acc, m, b.n, yaxis, RQ_MUL, zp, dt);
out:
	free(m);
	qarg_release(&a);
	qarg_release(&b);
	tensor_release(&xf);
	tensor_release(&wf);
	tensor_release(&bf);
	tensor_release(&acc);
	return rc;
}

OPS_KERNEL(qlinearconv_run, qproduct, QP_CONV)
OPS_KERNEL(qlinearmatmul_run, qproduct, QP_MATMUL)
OPS_KERNEL(qgemm_run, qproduct, QP_GEMM)

/*
 * The elementwise binaries: A (0), B (3), C's scale and zero point (6, 7).
 * Add is MLAS's SSE2 form: round((F + a * rA) + b * rB), rA and rB the
 * ratios of A's and B's scales to C's, F = zp_c - (rA * zp_a + rB * zp_b)
 * added on the side of a scalar operand. Mul multiplies centered integers
 * and scales by scale_a * scale_b / scale_c.
 */
static int
qbinary(struct op_ctx *c, int mul)
{
	const struct tensor *in[2];
	struct tensor af = { 0 }, bf = { 0 }, acc = { 0 };
	struct qarg a, b;
	float sy, ra, rb, fixed, one = 1.0f;
	int32_t zp;
	int dt, rc = -1, fixed_on_b;

	if (qarg_get(c, 0, 0, &a) == -1)
		return -1;
	if (qarg_get(c, 3, 0, &b) == -1) {
		qarg_release(&a);
		return -1;
	}
	if (out_scale(c, 6, &sy) == -1 || out_zp(c, 7, &zp, &dt) == -1)
		goto out;
	if (a.q->dtype != dt || b.q->dtype != dt) {
		err_set(c->err, "the inputs and the output differ in type");
		goto out;
	}
	if (mul) {
		if (to_float(c, &a, 0, NULL, &af) == -1 ||
		    to_float(c, &b, 0, NULL, &bf) == -1)
			goto out;
		one = a.s[0] * b.s[0] / sy;
	} else {
		ra = a.s[0] / sy, rb = b.s[0] / sy;
		fixed = (float)zp - (ra * (float)a.z[0] + rb * (float)b.z[0]);
		fixed_on_b = b.q->nelem == 1 && a.q->nelem != 1;
		if (to_float_as(c, &a, 0, &ra, 0, fixed_on_b ? 0.0f : fixed,
		    &af) == -1 || to_float_as(c, &b, 0, &rb, 0, fixed_on_b ?
		    fixed : 0.0f, &bf) == -1)
			goto out;
		zp = 0;
	}
	in[0] = &af, in[1] = &bf;
	if (run_float(c, mul ? "Mul" : "Add", 14, 2, in, &acc) == -1)
		goto out;
	rc = requant(c, &acc, &one, 1, 0, RQ_MUL, zp, dt);
out:
	qarg_release(&a);
	qarg_release(&b);
	tensor_release(&af);
	tensor_release(&bf);
	tensor_release(&acc);
	return rc;
}

OPS_KERNEL(qlinearadd_run, qbinary, 0)
OPS_KERNEL(qlinearmul_run, qbinary, 1)

/*
 * The unaries X (0), Y's scale and zero point (3, 4): dequantize, run the
 * float op, quantize. GlobalAveragePool averages centered integers and
 * scales by x_scale / y_scale, as ORT's integer sum does.
 */
static int
qunary(struct op_ctx *c, const char *op, int centered, enum rq form)
{
	const struct tensor *in[1];
	struct tensor xf = { 0 }, acc = { 0 };
	struct qarg a;
	float sy, m;
	int32_t zp;
	int dt, rc = -1;

	if (no_channels_last(c) == -1 || qarg_get(c, 0, 0, &a) == -1)
		return -1;
	if (out_scale(c, 3, &sy) == -1 || out_zp(c, 4, &zp, &dt) == -1 ||
	    to_float(c, &a, 0, centered ? NULL : a.s, &xf) == -1)
		goto out;
	in[0] = &xf;
	if (run_float(c, op, 13, 1, in, &acc) == -1)
		goto out;
	m = centered ? a.s[0] / sy : sy;
	rc = requant(c, &acc, &m, 1, 0, form, zp, dt);
out:
	qarg_release(&a);
	tensor_release(&xf);
	tensor_release(&acc);
	return rc;
}

OPS_KERNEL(qlinearsigmoid_run, qunary, "Sigmoid", 0, RQ_DIV)
OPS_KERNEL(qlinearleakyrelu_run, qunary, "LeakyRelu", 0, RQ_DIV)
OPS_KERNEL(qlinearavgpool_run, qunary, "AveragePool", 0, RQ_DIV_ZP)
OPS_KERNEL(qlineargavgpool_run, qunary, "GlobalAveragePool", 1, RQ_MUL)

/*
 * QLinearSoftmax as ORT computes it: a table of 256 exponentials (float,
 * from double) shifted so the row's largest input reads the top entry, a
 * float sum in order, and y = round(e * floor(1 / y_scale) / sum) + zp,
 * saturated (ORT's source clamps uint8 above only). The softmax runs along `axis` (opset
 * 13 on) or over the flattened axes from `axis` on (before).
 */
static void
softmax_table(float *table, float xs, int64_t len, int is_signed)
{
	double shift = log(FLT_MAX / (float)len);	/* float, as ORT */

	shift = (shift - 5 > 0 ? shift - 5 : 0) / xs;
	for (int i = 0; i < 256; i++)
		table[(uint8_t)(is_signed ? i - 128 : i)] = (float)exp(
		    ((double)i - 255 + shift) * (double)xs);
}

static int
qsoftmax(struct op_ctx *c)
{
	int opset = (int)attr_int(c->node, "opset", SOFTMAX_OPSET);
	int64_t outer = 1, len = 1, inner = 1;
	float table[256], sy, ys;
	struct qarg a;
	int32_t zp;
	int dt, axis, sgn;

	if (qarg_get(c, 0, 0, &a) == -1)
		return -1;
	if (out_scale(c, 3, &sy) == -1 || out_zp(c, 4, &zp, &dt) == -1 ||
	    (axis = ops_axis(attr_int(c->node, "axis", opset < 13 ? 1 : -1),
	    a.q->rank ? a.q->rank : 1, c->err)) == -1 ||
	    tensor_alloc_like_uninit(&c->out[0], dt, a.q, c->err) == -1) {
		qarg_release(&a);
		return -1;
	}
	if (a.q->dtype != dt) {
		qarg_release(&a);
		return err_set(c->err, "input and output differ in type");
	}
	for (int i = 0; i < a.q->rank; i++)
		*(i < axis ? &outer : opset < 13 || i == axis ? &len :
		    &inner) *= a.q->dims[i];
	sgn = dt == DT_INT8;
	softmax_table(table, a.s[0], len, sgn);
	ys = floorf(1.0f / sy);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t in = 0; in < inner; in++) {
			const uint8_t *x = (const uint8_t *)a.q->data +
			    o * len * inner + in;
			uint8_t *y = (uint8_t *)c->out[0].data +
			    o * len * inner + in;
			int xmax = sgn ? -128 : 0, off;
			float sum = 0;

			for (int64_t k = 0; k < len; k++) {
				int v = sgn ? (int8_t)x[k * inner] :
				    x[k * inner];
				xmax = v > xmax ? v : xmax;
			}
			off = (sgn ? 127 : 255) - xmax;
			for (int64_t k = 0; k < len; k++)
				sum += table[(uint8_t)((sgn ? (int8_t)x[k *
				    inner] : x[k * inner]) + off)];
			for (int64_t k = 0; k < len; k++) {
				float e = table[(uint8_t)((sgn ?
				    (int8_t)x[k * inner] : x[k * inner]) +
				    off)];
				int32_t q = (int32_t)nearbyintf(e * ys / sum) +
				    zp;

				if (sgn)	/* saturated, as ORT's build does */
					q = q > 127 ? 127 : q < -128 ? -128 : q;
				else
					q = q > 255 ? 255 : q;
				y[k * inner] = (uint8_t)q;
			}
		}
	qarg_release(&a);
	return 0;
}

/*
 * QLinearConcat: Y's scale and zero point (0, 1), then (X, scale, zero
 * point) triples. Every input is dequantized and quantized again (ORT
 * copies one already in Y's parameters: the round trip gives it back).
 */
static int
qconcat(struct op_ctx *c)
{
	int n = (c->nin - 2) / 3, dt, rc = -1, i;
	const struct tensor **in;
	struct tensor *xf, acc = { 0 };
	float sy;
	int32_t zp;

	if (c->nin < 5 || (c->nin - 2) % 3 != 0)
		return err_set(c->err, "%d inputs, expected 2 + 3 per tensor",
		    c->nin);
	if (out_scale(c, 0, &sy) == -1 || out_zp(c, 1, &zp, &dt) == -1)
		return -1;
	in = calloc((size_t)n, sizeof *in);
	xf = calloc((size_t)n, sizeof *xf);
	if (!in || !xf) {
		err_nomem(c->err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct qarg a;
		int r;

		if (qarg_get(c, 2 + 3 * i, 0, &a) == -1)
			goto out;
		if (a.q->dtype != dt) {
			err_set(c->err, "input %d: type %s differs from the "
			    "output's %s", 2 + 3 * i,
			    ops_type_name(a.q->dtype), ops_type_name(dt));
			qarg_release(&a);
			goto out;
		}
		r = to_float(c, &a, 0, a.s, &xf[i]);
		qarg_release(&a);
		if (r == -1)
			goto out;
		in[i] = &xf[i];
	}
	if (run_float(c, "Concat", 13, n, in, &acc) == -1)
		goto out;
	rc = requant(c, &acc, &sy, 1, 0, RQ_DIV, zp, dt);
out:
	tensor_release_n(xf, xf ? (size_t)n : 0);
	free(xf);
	free(in);
	tensor_release(&acc);
	return rc;
}

#define MS "com.microsoft"

const struct op_def op_qlinear_defs[] = {
	{ "", "QLinearConv", qlinearconv_run, qlin_state_free },
	{ "", "QLinearMatMul", qlinearmatmul_run, qlin_state_free },
	{ MS, "QGemm", qgemm_run, qlin_state_free },
	{ MS, "QLinearAdd", qlinearadd_run, qlin_state_free },
	{ MS, "QLinearMul", qlinearmul_run, qlin_state_free },
	{ MS, "QLinearSigmoid", qlinearsigmoid_run, qlin_state_free },
	{ MS, "QLinearLeakyRelu", qlinearleakyrelu_run, qlin_state_free },
	{ MS, "QLinearAveragePool", qlinearavgpool_run, qlin_state_free },
	{ MS, "QLinearGlobalAveragePool", qlineargavgpool_run,
	    qlin_state_free },
	{ MS, "QLinearConcat", qconcat, qlin_state_free },
	{ MS, "QLinearSoftmax", qsoftmax, NULL },
	{ NULL, NULL, NULL, NULL },
};
