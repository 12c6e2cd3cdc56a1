/*
 * op_quant: QuantizeLinear and DequantizeLinear, in the default domain
 * (opsets 10 to 21) and in com.microsoft (the 16-bit and 4-bit QDQ ops
 * ONNX Runtime uses below opset 21).
 *
 * The scale (and zero point) is one value for the whole tensor, one per
 * index of `axis`, or (opset 21 block_size) one per block of block_size
 * indices along `axis`. Arithmetic follows ONNX Runtime exactly:
 * q = clamp(nearbyint(x / scale) + zero_point) in float, rounding half to
 * even; x = (q - zero_point) * scale with the difference taken in integers.
 * float8 types are rejected with a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "ops.h"
#include "par.h"

#define PAR_MIN 65536		/* elements below which one thread */

static int
is_float8(int dt)
{
	return dt >= DT_FLOAT8E4M3FN && dt <= DT_FLOAT8E5M2FNUZ;
}

/* Quantized integer types either op accepts. */
static int
qtype_ok(int dt, int contrib, int opset)
{
	switch (dt) {
	case DT_UINT8: case DT_INT8:
		return 1;
	case DT_UINT16: case DT_INT16: case DT_UINT4: case DT_INT4:
		return contrib || opset >= 21;
	}
	return 0;
}

static int
scale_type_ok(int dt)
{
	return dt == DT_FLOAT || dt == DT_FLOAT16 || dt == DT_BFLOAT16;
}

/*
 * How scale and zero point map onto x: x is viewed as outer x A x inner
 * with A the size of the quantisation axis; per-tensor parameters have
 * A = 1 semantics through `per_tensor`.
 */
struct qlayout {
	int per_tensor;
	int64_t outer, A, inner;
	int64_t block;			/* 0: one value per index of A */
	int64_t nblocks;		/* ceil(A / block) */
};

static int
qlayout(struct op_ctx *c, const struct tensor *x, const struct tensor *s,
    const struct tensor *zp, int contrib, struct qlayout *l)
{
	int64_t axis_attr = attr_int(c->node, "axis", 1);
	int64_t block = contrib ? 0 : attr_int(c->node, "block_size", 0);
	int axis;

	memset(l, 0, sizeof *l);
	/*
	 * ORT's quantizer writes a scale of shape [1] beside a scalar zero
	 * point; the spec and ORT take one value either way.
	 */
	if (zp && !(zp->nelem == 1 && s->nelem == 1 && zp->rank <= 1 &&
	    s->rank <= 1)) {
		if (zp->rank != s->rank || memcmp(zp->dims, s->dims,
		    sizeof(int64_t) * s->rank) != 0)
			return err_set(c->err, "input 2: zero point shape "
			    "differs from the scale's");
	}
	if (block < 0)
		return err_set(c->err, "block_size %lld is negative",
		    (long long)block);
	if (block == 0 && s->nelem == 1 && (s->rank == 0 ||
	    (s->rank == 1 && s->dims[0] == 1))) {
		l->per_tensor = 1;
		l->outer = 1, l->A = 1, l->inner = x->nelem;
		return 0;
	}
	if (x->rank == 0)
		return err_set(c->err, "input 1: a scalar input needs a scalar "
		    "scale");
	if ((axis = ops_axis(axis_attr, x->rank, c->err)) == -1)
		return -1;
	l->A = x->dims[axis];
	l->outer = 1, l->inner = 1;
	for (int i = 0; i < axis; i++)
		l->outer *= x->dims[i];
	for (int i = axis + 1; i < x->rank; i++)
		l->inner *= x->dims[i];
	if (block == 0) {
		if (s->rank != 1 || s->dims[0] != l->A)
			return err_set(c->err, "input 1: per-axis scale must "
			    "be 1-D with %lld values (axis %d)",
			    (long long)l->A, axis);
		return 0;
	}
	l->block = block;
	l->nblocks = (l->A + block - 1) / block;
	if (s->rank != x->rank)
		return err_set(c->err, "input 1: blocked scale must have rank "
		    "%d", x->rank);
	for (int i = 0; i < x->rank; i++)
		if (s->dims[i] != (i == axis ? l->nblocks : x->dims[i]))
			return err_set(c->err, "input 1: blocked scale has "
			    "%lld values on axis %d, expected %lld",
			    (long long)s->dims[i], i, (long long)(i == axis ?
			    l->nblocks : x->dims[i]));
	return 0;
}

/* Index into scale / zero point of element (o, a, i). */
static int64_t
qindex(const struct qlayout *l, int64_t o, int64_t a, int64_t i)
{
	if (l->per_tensor)
		return 0;
	if (!l->block)
		return a;
	return (o * l->nblocks + a / l->block) * l->inner + i;
}

static int
threads_for(const struct op_ctx *c, int64_t n)
{
	return n < PAR_MIN || c->threads < 1 ? 1 : c->threads;
}

/* Scale as floats and zero point as int32 (zeros when absent). */
static int
qparams(struct op_ctx *c, const struct tensor *s, const struct tensor *zp,
    float **sf, int32_t **zi)
{
	int64_t n = s->nelem;

	*sf = malloc(sizeof **sf * (size_t)(n ? n : 1));
	*zi = calloc((size_t)(n ? n : 1), sizeof **zi);
	if (!*sf || !*zi) {
		free(*sf);
		free(*zi);
		return err_nomem(c->err);
	}
	tensor_to_float(s, *sf);
	for (int64_t i = 0; zp && i < n; i++)
		(*zi)[i] = (int32_t)tensor_get(zp, i);
	return 0;
}

/*
 * Runs the statements after it for every element e of layout l, k the
 * index of its scale, on `threads` threads.
 */
#define QFOR_EACH(...) do {						\
	_Pragma("omp parallel for num_threads(threads) schedule(static)") \
	for (int64_t r = 0; r < l.outer * l.A; r++) {			\
		int64_t o = r / l.A, a = r % l.A;			\
		for (int64_t i = 0; i < l.inner; i++) {			\
			int64_t k = qindex(&l, o, a, i);		\
			int64_t e = r * l.inner + i;			\
			__VA_ARGS__					\
		}							\
	}								\
} while (0)

/* LOOP(T) for the C type T of quantized element type dt (int32: DQ only). */
#define QSWITCH(dt, LOOP) do {						\
	switch (dt) {							\
	case DT_UINT8: case DT_UINT4: LOOP(uint8_t); break;		\
	case DT_INT8: case DT_INT4: LOOP(int8_t); break;		\
	case DT_UINT16: LOOP(uint16_t); break;				\
	case DT_INT16: LOOP(int16_t); break;				\
	case DT_INT32: LOOP(int32_t); break;				\
	}								\
} while (0)

/*
 * What both ops do before their loop: check the layout, allocate the
 * output (element type dt) and read the scales and zero points. 1 when
 * there are elements to convert, 0 when none, -1 with c->err set.
 */
static int
qprepare(struct op_ctx *c, const struct tensor *x, const struct tensor *s,
    const struct tensor *zp, int contrib, int dt, struct qlayout *l,
    float **sf, int32_t **zi)
{
	/* Both loops write every element: no zero-filling. */
	if (qlayout(c, x, s, zp, contrib, l) == -1 ||
	    tensor_alloc_like_uninit(&c->out[0], dt, x, c->err) == -1)
		return -1;
	if (x->nelem == 0)
		return 0;
	return qparams(c, s, zp, sf, zi) == -1 ? -1 : 1;
}

/*
 * Per-tensor scale and zero point, the common case (every activation of
 * a QDQ model): the same operations on each element as the loops below,
 * in vector code (compiled for AVX2 and AVX-512 too, picked at load
 * time), on blocks the threads share.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
#define Q_SIMD __attribute__((target_clones("arch=x86-64-v4", \
    "arch=x86-64-v3", "default")))
#else
#define Q_SIMD
#endif
#define QBLOCK ((int64_t)1 << 14)

#define QUANT_FAST(T, name)						\
static Q_SIMD void							\
name(const float *x, int64_t n, float s, float z, float lo, float hi,	\
    T *y)								\
{									\
	_Pragma("omp simd")						\
	for (int64_t i = 0; i < n; i++) {				\
		float v = nearbyintf(x[i] / s) + z;			\
		v = !(v >= lo) ? lo : v > hi ? hi : v;			\
		y[i] = (T)v;						\
	}								\
}
QUANT_FAST(uint8_t, quant_u8)
QUANT_FAST(int8_t, quant_i8)
QUANT_FAST(uint16_t, quant_u16)
QUANT_FAST(int16_t, quant_i16)

/* Exact in int32 for these types, as the loop below is in int64. */
#define DEQUANT_FAST(T, name)						\
static Q_SIMD void							\
name(const T *x, int64_t n, int32_t z, float s, float *y)		\
{									\
	_Pragma("omp simd")						\
	for (int64_t i = 0; i < n; i++)					\
		y[i] = (float)((int32_t)x[i] - z) * s;			\
}
DEQUANT_FAST(uint8_t, dequant_u8)
DEQUANT_FAST(int8_t, dequant_i8)
DEQUANT_FAST(uint16_t, dequant_u16)
DEQUANT_FAST(int16_t, dequant_i16)

/* One per-tensor conversion: QuantizeLinear's or DequantizeLinear's. */
struct qfast {
	int quant;		/* float x to dt y, else dt x to float y */
	int dt;			/* the quantized type */
	const void *x;
	void *y;
	float s, z, lo, hi;	/* scale, zero point; y's range (quant) */
};

static void
qfast_block(const struct qfast *q, int64_t o, int64_t m)
{
	const float *xf = (const float *)q->x + o;
	float *yf = (float *)q->y + o;
	int32_t z = (int32_t)q->z;

	switch (q->dt + (q->quant ? 0 : 100)) {
	case DT_UINT8: case DT_UINT4:
		quant_u8(xf, m, q->s, q->z, q->lo, q->hi, (uint8_t *)q->y + o);
		break;
	case DT_INT8: case DT_INT4:
		quant_i8(xf, m, q->s, q->z, q->lo, q->hi, (int8_t *)q->y + o);
		break;
	case DT_UINT16:
		quant_u16(xf, m, q->s, q->z, q->lo, q->hi,
		    (uint16_t *)q->y + o);
		break;
	case DT_INT16:
		quant_i16(xf, m, q->s, q->z, q->lo, q->hi,
		    (int16_t *)q->y + o);
		break;
	case 100 + DT_UINT8: case 100 + DT_UINT4:
		dequant_u8((const uint8_t *)q->x + o, m, z, q->s, yf);
		break;
	case 100 + DT_INT8: case 100 + DT_INT4:
		dequant_i8((const int8_t *)q->x + o, m, z, q->s, yf);
		break;
	case 100 + DT_UINT16:
		dequant_u16((const uint16_t *)q->x + o, m, z, q->s, yf);
		break;
	default:
		dequant_i16((const int16_t *)q->x + o, m, z, q->s, yf);
		break;
	}
}

struct qfast_job {
	const struct qfast *q;
	int64_t n;
};

/* par_for chunk b: block b of QBLOCK elements. */
static void
qfast_chunk(void *ctx, int64_t b, int w)
{
	const struct qfast_job *j = ctx;
	int64_t n = j->n;

	(void)w;
	qfast_block(j->q, b * QBLOCK, n - b * QBLOCK < QBLOCK ?
	    n - b * QBLOCK : QBLOCK);
}

/* Run q on n elements: 0 when done, 1 when dt has no fast loop. */
static int
qfast_run(const struct qfast *q, int64_t n, int threads)
{
	int64_t nb = (n + QBLOCK - 1) / QBLOCK;

	if (q->dt != DT_UINT8 && q->dt != DT_UINT4 && q->dt != DT_INT8 &&
	    q->dt != DT_INT4 && q->dt != DT_UINT16 && q->dt != DT_INT16)
		return 1;
	{
		struct qfast_job j = { q, n };

		par_for(nb, threads, qfast_chunk, &j);
	}
	return 0;
}

#define QUANT_LOOP(T) do {						\
	T *y = c->out[0].data;						\
	QFOR_EACH(							\
		float v = nearbyintf(xs[e] / sf[k]) + (float)zi[k];	\
		/* NaN goes to the low end, as in ORT */		\
		v = !(v >= flo) ? flo : v > fhi ? fhi : v;		\
		y[e] = (T)v;						\
	);								\
} while (0)

static int
quantize(struct op_ctx *c, int contrib)
{
	const struct tensor *x = ops_input(c, 0), *s = ops_input(c, 1),
	    *zp = ops_input(c, 2);
	int64_t odt = contrib ? 0 : attr_int(c->node, "output_dtype", 0);
	int64_t lo, hi;
	struct qlayout l;
	float *xf = NULL, *sf, flo, fhi;
	int32_t *zi;
	int dt, threads, rc;

	if (!x || !s)
		return err_set(c->err, "input %d is missing", x ? 1 : 0);
	if (x->dtype != DT_FLOAT && x->dtype != DT_FLOAT16 &&
	    x->dtype != DT_BFLOAT16 && x->dtype != DT_INT32)
		return err_set(c->err, "input 0: element type %s is not "
		    "supported", ops_type_name(x->dtype));
	if (!scale_type_ok(s->dtype))
		return err_set(c->err, "input 1: scale type %s is not "
		    "supported", ops_type_name(s->dtype));
	dt = zp ? zp->dtype : odt ? (int)odt : DT_UINT8;
	if (zp && odt && odt != zp->dtype)
		return err_set(c->err, "output_dtype %s differs from the zero "
		    "point's %s", ops_type_name((int)odt),
		    ops_type_name(zp->dtype));
	if (is_float8(dt))
		return err_set(c->err, "float8 quantization is not supported");
	if (!qtype_ok(dt, contrib, c->opset))
		return err_set(c->err, "quantized type %s is not supported",
		    ops_type_name(dt));
	if ((rc = qprepare(c, x, s, zp, contrib, dt, &l, &sf, &zi)) <= 0)
		return rc;
	if (x->dtype != DT_FLOAT) {
		if (!(xf = malloc(sizeof *xf * (size_t)x->nelem))) {
			free(sf), free(zi);
			return err_nomem(c->err);
		}
		tensor_to_float(x, xf);
	}
	{
		const float *xs = xf ? xf : x->data;

		dtype_int_range(dt, &lo, &hi);
		flo = (float)lo, fhi = (float)hi;
		threads = threads_for(c, x->nelem);
		struct qfast q = { 1, dt, xs, c->out[0].data, sf[0],
		    (float)zi[0], flo, fhi };

		if (!l.per_tensor || qfast_run(&q, x->nelem, threads))
			QSWITCH(dt, QUANT_LOOP);
	}
	free(xf);
	free(sf);
	free(zi);
	return 0;
}

#define DEQUANT_LOOP(T) do {						\
	const T *xd = x->data;						\
	QFOR_EACH(yf[e] = (float)((int64_t)xd[e] - zi[k]) * sf[k];);	\
} while (0)

static int
dequantize(struct op_ctx *c, int contrib)
{
	const struct tensor *x = ops_input(c, 0), *s = ops_input(c, 1),
	    *zp = ops_input(c, 2);
	struct qlayout l;
	struct qfast q;
	float *sf, *yf;
	int32_t *zi;
	int odt, threads, rc;

	if (!x || !s)
		return err_set(c->err, "input %d is missing", x ? 1 : 0);
	if (is_float8(x->dtype))
		return err_set(c->err, "float8 dequantization is not "
		    "supported");
	if (x->dtype != DT_INT32 && !qtype_ok(x->dtype, contrib, c->opset))
		return err_set(c->err, "input 0: element type %s is not "
		    "supported", ops_type_name(x->dtype));
	if (!scale_type_ok(s->dtype))
		return err_set(c->err, "input 1: scale type %s is not "
		    "supported", ops_type_name(s->dtype));
	if (zp && zp->dtype != x->dtype)
		return err_set(c->err, "input 2: zero point type %s differs "
		    "from input 0's %s", ops_type_name(zp->dtype),
		    ops_type_name(x->dtype));
	/* Before opset 19 the result is float whatever the scale. */
	odt = contrib || c->opset >= 19 ? s->dtype : DT_FLOAT;
	if ((rc = qprepare(c, x, s, zp, contrib, odt, &l, &sf, &zi)) <= 0)
		return rc;
	if (odt == DT_FLOAT)
		yf = c->out[0].data;
	else if (!(yf = malloc(sizeof *yf * (size_t)x->nelem))) {
		free(sf), free(zi);
		return err_nomem(c->err);
	}
	threads = threads_for(c, x->nelem);
	q = (struct qfast){ 0, x->dtype, x->data, yf, sf[0], (float)zi[0],
	    0, 0 };
	if (!l.per_tensor || qfast_run(&q, x->nelem, threads))
		QSWITCH(x->dtype, DEQUANT_LOOP);
	if (odt != DT_FLOAT) {
		uint16_t *h = c->out[0].data;

		for (int64_t i = 0; i < x->nelem; i++)
			h[i] = odt == DT_FLOAT16 ? f32_to_f16(yf[i]) :
			    f32_to_bf16(yf[i]);
		free(yf);
	}
	free(sf);
	free(zi);
	return 0;
}

OPS_KERNEL(quantize_run, quantize, 0)
OPS_KERNEL(dequantize_run, dequantize, 0)
OPS_KERNEL(ms_quantize_run, quantize, 1)
OPS_KERNEL(ms_dequantize_run, dequantize, 1)

const struct op_def op_quant_defs[] = {
	{ "", "QuantizeLinear", quantize_run, NULL },
	{ "", "DequantizeLinear", dequantize_run, NULL },
	{ "com.microsoft", "QuantizeLinear", ms_quantize_run, NULL },
	{ "com.microsoft", "DequantizeLinear", ms_dequantize_run, NULL },
	{ NULL, NULL, NULL, NULL },
};
