/*
 * op_dynq: the kernels of dynamic quantization. DynamicQuantizeLinear,
 * MatMulInteger and ConvInteger (default domain), and com.microsoft's
 * DynamicQuantizeMatMul and MatMulIntegerToFloat.
 *
 * DynamicQuantizeLinear follows ONNX Runtime bit for bit: the range of x
 * widened to include 0, scale = (max - min) / 255 (1 when max == min),
 * zero point = clamp(-min / scale, 0, 255) rounded half to even, and
 * y = clamp(nearbyint(x / scale) + zero point, 0, 255).
 *
 * The integer products run on the float MatMul and Conv kernels of
 * op_nn, exactly: the operands, zero points taken off, are integers
 * below 2^8 in magnitude, and a float sum of integer products is exact
 * while every partial sum stays below 2^24. When K terms of the largest
 * magnitudes could pass that, an operand is split into two 4-bit digits
 * (v = 16 * hi + lo, lo in 0..15) and the partial products, each exact,
 * are combined in 64-bit integers. The int32 result wraps as ORT's does.
 * Padding of ConvInteger is the input's zero point (0 once subtracted).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

#define EXACT_LIMIT 16777216.0	/* 2^24: floats hold integers exactly */

static int
is_q8(int dt)
{
	return dt == DT_UINT8 || dt == DT_INT8;
}

/* Element i of a uint8 or int8 tensor. */
static inline int32_t
q8_at(const struct tensor *t, int64_t i)
{
	return t->dtype == DT_UINT8 ? ((const uint8_t *)t->data)[i] :
	    ((const int8_t *)t->data)[i];
}

/*
 * out = q - zp as floats, zp one value or one per index of `axis` of q;
 * *amax the largest magnitude. `what` names the inputs for messages.
 */
static int
less_zp(struct op_ctx *c, const struct tensor *q, const struct tensor *zp,
    int axis, const char *what, struct tensor *out, float *amax)
{
	int64_t A = 1, inner = 1;
	float *o, m = 0;

	if (!is_q8(q->dtype))
		return err_set(c->err, "%s: element type %s is not uint8 or "
		    "int8", what, ops_type_name(q->dtype));
	if (zp && zp->dtype != q->dtype)
		return err_set(c->err, "%s: zero point type %s differs from "
		    "the input's %s", what, ops_type_name(zp->dtype),
		    ops_type_name(q->dtype));
	if (zp && zp->nelem != 1) {
		if (axis < 0 || axis >= q->rank || zp->rank > 1 ||
		    zp->nelem != q->dims[axis])
			return err_set(c->err, "%s: zero point has %lld values,"
			    " expected 1%s", what, (long long)zp->nelem,
			    axis >= 0 && axis < q->rank ?
			    " or one per channel" : "");
		A = q->dims[axis];
		for (int i = axis + 1; i < q->rank; i++)
			inner *= q->dims[i];
	}
	if (tensor_alloc_like_uninit(out, DT_FLOAT, q, c->err) == -1)
		return -1;
	o = out->data;
	for (int64_t e = 0; e < q->nelem; e++) {
		int32_t z = zp ? q8_at(zp, zp->nelem == 1 ? 0 :
		    e / inner % A) : 0;
		float v = (float)(q8_at(q, e) - z);

		o[e] = v;
		if (fabsf(v) > m)
			m = fabsf(v);
	}
	*amax = m;
	return 0;
}

/* hi = floor(v / 16) and lo = v - 16 * hi of an integer-valued tensor. */
static int
split_digits(struct op_ctx *c, const struct tensor *v, struct tensor *hi,
    struct tensor *lo)
{
	const float *s = v->data;

	if (tensor_alloc_like_uninit(hi, DT_FLOAT, v, c->err) == -1 ||
	    tensor_alloc_like_uninit(lo, DT_FLOAT, v, c->err) == -1)
		return -1;
	for (int64_t i = 0; i < v->nelem; i++) {
		float h = floorf(s[i] / 16.0f);

		((float *)hi->data)[i] = h;
		((float *)lo->data)[i] = s[i] - 16.0f * h;
	}
	return 0;
}

/*
 * y (int32, allocated here) = the float kernel of (domain "", op_type)
 * on a and b, whose values are integers of magnitude at most amax and
 * bmax, k terms to each output; computed exactly (see the top).
 */
static int
exact_product(struct op_ctx *c, const char *op_type, struct tensor *a,
    struct tensor *b, float amax, float bmax, int64_t k, struct tensor *y)
{
	const struct op_def *def = ops_find("", op_type);
	struct tensor parts[4], tmp, *ad[2] = { a, NULL }, *bd[2] = { b, NULL };
	float aw[2] = { 1, 0 }, bw[2] = { 1, 0 };
	int na = 1, nb = 1, rc = -1;
	int64_t *acc = NULL;

	memset(parts, 0, sizeof parts);
	memset(&tmp, 0, sizeof tmp);
	if (!def)
		return err_set(c->err, "no float %s kernel", op_type);
	if ((double)k * amax * bmax >= EXACT_LIMIT) {
		if (split_digits(c, a, &parts[0], &parts[1]) == -1)
			goto out;
		ad[0] = &parts[0], ad[1] = &parts[1];
		aw[0] = 16, aw[1] = 1, na = 2;
		amax = 16;
	}
	if ((double)k * amax * bmax >= EXACT_LIMIT) {
		if (split_digits(c, b, &parts[2], &parts[3]) == -1)
			goto out;
		bd[0] = &parts[2], bd[1] = &parts[3];
		bw[0] = 16, bw[1] = 1, nb = 2;
		bmax = 16;
	}
	if ((double)k * amax * bmax >= EXACT_LIMIT) {
		err_set(c->err, "%lld terms per output are too many",
		    (long long)k);
		goto out;
	}
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++) {
			const struct tensor *in[2] = { ad[i], bd[j] };
			struct op_ctx s = *c;
			const float *t;
			int64_t w = (int64_t)(aw[i] * bw[j]);

			s.nin = 2, s.in = in, s.nout = 1, s.out = &tmp;
			s.state = NULL, s.graphs = NULL;
			if (def->run(&s) == -1)
				goto out;
			if (!acc && !(acc = calloc((size_t)(tmp.nelem ?
			    tmp.nelem : 1), sizeof *acc))) {
				err_nomem(c->err);
				goto out;
			}
			t = tmp.data;
			for (int64_t e = 0; e < tmp.nelem; e++)
				acc[e] += w * (int64_t)lrintf(t[e]);
			if (i + 1 < na || j + 1 < nb)
				tensor_release(&tmp);
		}
	if (tensor_alloc_like_uninit(y, DT_INT32, &tmp, c->err) == -1)
		goto out;
	for (int64_t e = 0; e < tmp.nelem; e++)
		((int32_t *)y->data)[e] = (int32_t)(uint32_t)acc[e];
	rc = 0;
out:
	free(acc);
	tensor_release(&tmp);
	tensor_release_n(parts, 4);
	return rc;
}

/*
 * The integer product of MatMulInteger into y: a and b (uint8 or int8)
 * less their zero points (a's scalar or one per row, b's scalar or one
 * per column).
 */
static int
matmul_int(struct op_ctx *c, const struct tensor *a, const struct tensor *b,
    const struct tensor *azp, const struct tensor *bzp, struct tensor *y)
{
	struct tensor af, bf;
	float amax, bmax;
	int rc = -1;

	memset(&af, 0, sizeof af);
	memset(&bf, 0, sizeof bf);
	if (a->rank < 1 || b->rank < 1)
		return err_set(c->err, "inputs must have rank 1 or more");
	if (less_zp(c, a, azp, a->rank - 2, "input 0", &af, &amax) == 0 &&
	    less_zp(c, b, bzp, b->rank - 1, "input 1", &bf, &bmax) == 0)
		rc = exact_product(c, "MatMul", &af, &bf, amax, bmax,
		    a->dims[a->rank - 1], y);
	tensor_release(&af);
	tensor_release(&bf);
	return rc;
}

static int
matmulinteger_run(struct op_ctx *c)
{
	const struct tensor *a = ops_input(c, 0), *b = ops_input(c, 1);

	if (!a || !b)
		return err_set(c->err, "input %d is missing", a ? 1 : 0);
	return matmul_int(c, a, b, ops_input(c, 2), ops_input(c, 3),
	    &c->out[0]);
}

static int
convinteger_run(struct op_ctx *c)
{
	const struct tensor *x = ops_input(c, 0), *w = ops_input(c, 1);
	const struct tensor *xzp = ops_input(c, 2);
	struct tensor xf, wf;
	float xmax, wmax;
	int64_t k = 1;
	int rc = -1;

	if (!x || !w)
		return err_set(c->err, "input %d is missing", x ? 1 : 0);
	if (xzp && xzp->nelem != 1)
		return err_set(c->err, "input 2: zero point must be one value");
	for (int i = 1; i < w->rank; i++)
		k *= w->dims[i];
	memset(&xf, 0, sizeof xf);
	memset(&wf, 0, sizeof wf);
	if (less_zp(c, x, xzp, -1, "input 0", &xf, &xmax) == 0 &&
	    less_zp(c, w, ops_input(c, 3), 0, "input 1", &wf, &wmax) == 0)
		rc = exact_product(c, "Conv", &xf, &wf, xmax, wmax, k,
		    &c->out[0]);
	tensor_release(&xf);
	tensor_release(&wf);
	return rc;
}

/* ---------------------------------------------------------------- */
/* DynamicQuantizeLinear */

/* ORT's scale and zero point for x (n floats); NaNs are left out. */
static void
dynamic_qparams(const float *x, int64_t n, float *scale, uint8_t *zp)
{
	float lo = 0, hi = 0, z;

	for (int64_t i = 0; i < n; i++) {
		if (x[i] < lo)
			lo = x[i];
		if (x[i] > hi)
			hi = x[i];
	}
	*scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
	z = 0.0f - lo / *scale;
	z = z < 0 ? 0 : z > 255 ? 255 : z;
	*zp = (uint8_t)nearbyintf(z);
}

/* y = x quantized by scale and zp, as ORT's MlasQuantizeLinear. */
static void
dynamic_quantize(const float *x, int64_t n, float scale, uint8_t zp,
    uint8_t *y)
{
	for (int64_t i = 0; i < n; i++) {
		float v = nearbyintf(x[i] / scale) + (float)zp;

		y[i] = (uint8_t)(!(v >= 0) ? 0 : v > 255 ? 255 : v);
	}
}

/* x quantized into q, with its scale and zero point as scalars. */
static int
dql(struct op_ctx *c, const struct tensor *x, struct tensor *q,
    struct tensor *s, struct tensor *zp)
{
	float scale;
	uint8_t z;

	if (x->dtype != DT_FLOAT)
		return err_set(c->err, "input 0: element type %s is not "
		    "float", ops_type_name(x->dtype));
	if (tensor_alloc_like_uninit(q, DT_UINT8, x, c->err) == -1 ||
	    tensor_alloc(s, DT_FLOAT, 0, NULL, c->err) == -1 ||
	    tensor_alloc(zp, DT_UINT8, 0, NULL, c->err) == -1)
		return -1;
	dynamic_qparams(x->data, x->nelem, &scale, &z);
	dynamic_quantize(x->data, x->nelem, scale, z, q->data);
	*(float *)s->data = scale;
	*(uint8_t *)zp->data = z;
	return 0;
}

static int
dynquant_run(struct op_ctx *c)
{
	const struct tensor *x = ops_input(c, 0);

	if (!x)
		return err_set(c->err, "input 0 is missing");
	if (c->nout < 3)
		return err_set(c->err, "expected 3 outputs, got %d", c->nout);
	return dql(c, x, &c->out[0], &c->out[1], &c->out[2]);
}

/* ---------------------------------------------------------------- */
/* com.microsoft: the products scaled back to float */

/*
 * out[0] = float(acc) * (ascale * bscale[n]) + bias[n], bscale one value
 * or one per column n (the last axis of acc).
 */
static int
scale_back(struct op_ctx *c, const struct tensor *acc, float ascale,
    const struct tensor *bscale, const struct tensor *bias)
{
	int64_t N = acc->rank ? acc->dims[acc->rank - 1] : 1;
	float *sb, *y;
	int rc = -1;

	if (bscale->dtype != DT_FLOAT || (bscale->nelem != 1 &&
	    bscale->nelem != N))
		return err_set(c->err, "b_scale must be float, 1 or %lld "
		    "values", (long long)N);
	if (bias && (bias->dtype != DT_FLOAT || bias->nelem != N))
		return err_set(c->err, "bias must be float, %lld values",
		    (long long)N);
	if (!(sb = malloc(sizeof *sb * (size_t)(N ? N : 1))))
		return err_nomem(c->err);
	for (int64_t n = 0; n < N; n++)
		sb[n] = ascale * ((const float *)bscale->data)[
		    bscale->nelem == 1 ? 0 : n];
	if (tensor_alloc_like_uninit(&c->out[0], DT_FLOAT, acc, c->err) == 0) {
		const int32_t *a = acc->data;

		y = c->out[0].data;
		for (int64_t e = 0; e < acc->nelem; e++) {
			y[e] = (float)a[e] * sb[e % N];
			if (bias)
				y[e] += ((const float *)bias->data)[e % N];
		}
		rc = 0;
	}
	free(sb);
	return rc;
}

/* DynamicQuantizeMatMul: A, B, b_scale, b_zero_point, bias. */
static int
dqmatmul_run(struct op_ctx *c)
{
	const struct tensor *a = ops_input(c, 0), *b = ops_input(c, 1),
	    *bs = ops_input(c, 2);
	struct tensor q, s, z, acc;
	int rc = -1;

	if (!a || !b || !bs)
		return err_set(c->err, "input %d is missing", !a ? 0 : !b ?
		    1 : 2);
	memset(&q, 0, sizeof q);
	memset(&s, 0, sizeof s);
	memset(&z, 0, sizeof z);
	memset(&acc, 0, sizeof acc);
	if (dql(c, a, &q, &s, &z) == 0 &&
	    matmul_int(c, &q, b, &z, ops_input(c, 3), &acc) == 0)
		rc = scale_back(c, &acc, *(float *)s.data, bs,
		    ops_input(c, 4));
	tensor_release(&q);
	tensor_release(&s);
	tensor_release(&z);
	tensor_release(&acc);
	return rc;
}

/*
 * MatMulIntegerToFloat: A, B, a_scale, b_scale, a_zero_point,
 * b_zero_point, bias; a_scale one value.
 */
static int
mmitf_run(struct op_ctx *c)
{
	const struct tensor *a = ops_input(c, 0), *b = ops_input(c, 1),
	    *as = ops_input(c, 2), *bs = ops_input(c, 3);
	struct tensor acc;
	int rc = -1;

	if (!a || !b || !as || !bs)
		return err_set(c->err, "input %d is missing", !a ? 0 : !b ?
		    1 : !as ? 2 : 3);
	if (as->dtype != DT_FLOAT || as->nelem != 1)
		return err_set(c->err, "input 2: a_scale must be one float");
	memset(&acc, 0, sizeof acc);
	if (matmul_int(c, a, b, ops_input(c, 4), ops_input(c, 5), &acc) == 0)
		rc = scale_back(c, &acc, *(const float *)as->data, bs,
		    ops_input(c, 6));
	tensor_release(&acc);
	return rc;
}

/* ---------------------------------------------------------------- */
/* The quantized product of the recurrent kernels (ops.h) */

int
ops_dynq_gemm(struct op_ctx *c, const float *a, int64_t m, int64_t k,
    const struct tensor *b, const struct tensor *bzp, const float *bscale,
    int64_t nscale, float *y, int accumulate)
{
	int64_t n = b->rank == 2 ? b->dims[1] : 0, dims[2] = { m, k };
	struct tensor af, q, s, z, acc;
	int rc = -1;

	if (b->rank != 2 || b->dims[0] != k || (nscale != 1 && nscale != n))
		return err_set(c->err, "quantized weight %lldx%lld does not "
		    "fit %lld inputs and %lld scales", (long long)b->dims[0],
		    (long long)n, (long long)k, (long long)nscale);
	memset(&af, 0, sizeof af);
	memset(&q, 0, sizeof q);
	memset(&s, 0, sizeof s);
	memset(&z, 0, sizeof z);
	memset(&acc, 0, sizeof acc);
	if (tensor_alloc_uninit(&af, DT_FLOAT, 2, dims, c->err) == -1)
		return -1;
	memcpy(af.data, a, (size_t)(m * k) * sizeof *a);
	if (dql(c, &af, &q, &s, &z) == 0 &&
	    matmul_int(c, &q, b, &z, bzp, &acc) == 0) {
		const int32_t *v = acc.data;
		float as = *(const float *)s.data;

		for (int64_t i = 0; i < m * n; i++) {
			float t = (float)v[i] * (as * bscale[nscale == 1 ? 0 :
			    i % n]);

			y[i] = accumulate ? y[i] + t : t;
		}
		rc = 0;
	}
	tensor_release(&af);
	tensor_release(&q);
	tensor_release(&s);
	tensor_release(&z);
	tensor_release(&acc);
	return rc;
}

const struct op_def op_dynq_defs[] = {
	{ "", "DynamicQuantizeLinear", dynquant_run, NULL },
	{ "", "MatMulInteger", matmulinteger_run, NULL },
	{ "", "ConvInteger", convinteger_run, NULL },
	{ "com.microsoft", "DynamicQuantizeMatMul", dqmatmul_run, NULL },
	{ "com.microsoft", "MatMulIntegerToFloat", mmitf_run, NULL },
	{ NULL, NULL, NULL, NULL },
};
