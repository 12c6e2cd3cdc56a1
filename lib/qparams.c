/* qparams: see qparams.h. */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "qparams.h"
#include "tensor.h"

static const struct {
	int type;
	const char *name;
	const char *ort;	/* onnxruntime.quantization.QuantType name */
	int64_t lo, hi;		/* whole range */
	int64_t rlo, rhi;	/* reduce_range */
	int64_t slo, shi;	/* symmetric, where ORT narrows it */
} types[] = {
	{ DT_UINT8, "uint8", "QUInt8", 0, 255, 0, 127, 0, 255 },
	{ DT_INT8, "int8", "QInt8", -128, 127, -64, 64, -127, 127 },
	{ DT_UINT16, "uint16", "QUInt16", 0, 65535, 0, 32767, 0, 65535 },
	{ DT_INT16, "int16", "QInt16", -32768, 32767, -16384, 16384,
	    -32767, 32767 },
	{ DT_UINT4, "uint4", "QUInt4", 0, 15, 0, 7, 0, 15 },
	{ DT_INT4, "int4", "QInt4", -8, 7, -4, 3, -8, 7 },
};

#define NTYPES (sizeof types / sizeof types[0])

static int
type_index(int type)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (types[i].type == type)
			return (int)i;
	return -1;
}

const char *
qparams_type_name(int type)
{
	int i = type_index(type);

	return i < 0 ? NULL : types[i].name;
}

int
qparams_type_parse(const char *s)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (strcasecmp(s, types[i].name) == 0 ||
		    strcmp(s, types[i].ort) == 0)
			return types[i].type;
	return DT_UNDEFINED;
}

int
qparams_type_limits(int type, int64_t *lo, int64_t *hi)
{
	int i = type_index(type);

	if (i < 0)
		return -1;
	*lo = types[i].lo;
	*hi = types[i].hi;
	return 0;
}

int
qparams_qrange(int type, int reduce_range, int symmetric, int64_t *qmin,
    int64_t *qmax)
{
	int i = type_index(type);

	if (i < 0)
		return -1;
	if (reduce_range) {
		*qmin = types[i].rlo;
		*qmax = types[i].rhi;
	} else if (symmetric) {
		*qmin = types[i].slo;
		*qmax = types[i].shi;
	} else {
		*qmin = types[i].lo;
		*qmax = types[i].hi;
	}
	return 0;
}

/*
 * Round a scale up to a power of two. With s >= (rmax - rmin)/(qmax - qmin)
 * the zero point of the usual formula keeps every value of [rmin, rmax]
 * within half a step of the grid: round(qmin - rmin/s) >= qmin - rmin/s - 1/2
 * and <= qmax - rmax/s + 1/2. The checks below are exact (s is a power
 * of two) and only guard against double rounding.
 */
static int
pow2_scale(double s0, float rmin, float rmax, int symmetric, int64_t qmin,
    int64_t qmax, float *scale, int32_t *zp, struct err *e)
{
	double s, z;
	int ex;

	if (frexp(s0, &ex) == 0.5)
		s = s0;
	else
		s = ldexp(1.0, ex);
	if (s > FLT_MAX)
		return err_set(e, "range [%g, %g] has no float32 power-of-two scale",
		    (double)rmin, (double)rmax);
	if (!symmetric) {
		z = nearbyint((double)qmin - rmin / s);
		/* The grid's ends move down as z grows. */
		if (s * ((double)qmin - z - 0.5) > rmin)
			z += 1;
		if (s * ((double)qmax - z + 0.5) < rmax)
			z -= 1;
		if (z < (double)qmin)
			z = (double)qmin;
		if (z > (double)qmax)
			z = (double)qmax;
		*zp = (int32_t)z;
	}
	*scale = (float)s;
	return 0;
}

int
qparams_compute(const struct qparams_opts *o, float rmin, float rmax,
    float *scale, int32_t *zp, struct err *e)
{
	int64_t qmin, qmax;
	float absmax, dr;
	double s;

	if (qparams_qrange(o->type, o->reduce_range, o->symmetric, &qmin,
	    &qmax) < 0)
		return err_set(e, "cannot quantize to type %d", o->type);
	if (!isfinite(rmin) || !isfinite(rmax))
		return err_set(e, "range [%g, %g] is not finite", (double)rmin,
		    (double)rmax);

	/* All of this in float32, as numpy does it on float32 arrays. */
	qparams_range_with_zero(&rmin, &rmax);
	if (o->min_real_range > 0) {
		float least = rmin + o->min_real_range;

		if (least > rmax)
			rmax = least;
	}
	if (o->symmetric) {
		absmax = fabsf(rmin) > fabsf(rmax) ? fabsf(rmin) : fabsf(rmax);
		rmin = -absmax;
		rmax = absmax;
	}
	dr = rmax - rmin;
	if (!isfinite(dr))
		return err_set(e, "range [%g, %g] is too wide for float32",
		    (double)rmin, (double)rmax);

	s = (double)dr / ((double)qmax - (double)qmin);
	if (s < FLT_MIN) {
		*scale = 1;
		*zp = 0;
		return 0;
	}
	if (o->symmetric)
		*zp = (int32_t)nearbyint(((double)qmin + (double)qmax) / 2.0);
	else
		*zp = (int32_t)nearbyint((double)qmin - (double)rmin / s);
	/* Rounding cannot leave the grid, but keep it provably inside. */
	if (*zp < qmin)
		*zp = (int32_t)qmin;
	if (*zp > qmax)
		*zp = (int32_t)qmax;
	if (o->pow2)
		return pow2_scale(s, rmin, rmax, o->symmetric, qmin, qmax,
		    scale, zp, e);
	*scale = (float)s;
	if (!isfinite(*scale))
		return err_set(e, "range [%g, %g] is too wide for float32",
		    (double)rmin, (double)rmax);
	return 0;
}

void
qparams_range_with_zero(float *rmin, float *rmax)
{
	*rmin = *rmin < 0 ? *rmin : 0;
	*rmax = *rmax > 0 ? *rmax : 0;
}

int
qparams_compute_n(const struct qparams_opts *o, size_t n, const float *rmin,
    const float *rmax, float *scale, int32_t *zp, struct err *e)
{
	for (size_t i = 0; i < n; i++)
		if (qparams_compute(o, rmin[i], rmax[i], &scale[i], &zp[i],
		    e) < 0)
			return err_prefix(e, "channel %zu", i);
	return 0;
}

void
qparams_represented(const struct qparams_opts *o, float scale, int32_t zp,
    double *lo, double *hi)
{
	int64_t qmin, qmax;

	if (qparams_qrange(o->type, o->reduce_range, o->symmetric, &qmin,
	    &qmax) < 0) {
		*lo = *hi = 0;
		return;
	}
	*lo = (double)scale * (double)(qmin - zp);
	*hi = (double)scale * (double)(qmax - zp);
}

int32_t
qparams_quantize(float x, float scale, int32_t zp, int type)
{
	int64_t lo, hi;
	float q;

	if (qparams_type_limits(type, &lo, &hi) < 0) {
		if (type != DT_INT32)
			return 0;
		lo = INT32_MIN;
		hi = INT32_MAX;
	}
	if (isnan(x))
		return zp;
	/* float32 division and rounding, then the zero point, as ORT does. */
	q = nearbyintf(x / scale);
	if (q != q)
		return zp;
	if ((double)q + zp <= (double)lo)
		return (int32_t)lo;
	if ((double)q + zp >= (double)hi)
		return (int32_t)hi;
	return (int32_t)q + zp;
}

void
qparams_quantize_n(const float *x, size_t n, float scale, int32_t zp,
    int type, int32_t *q)
{
	for (size_t i = 0; i < n; i++)
		q[i] = qparams_quantize(x[i], scale, zp, type);
}

int
qparams_quantize_axis(const float *x, int rank, const int64_t *dims, int axis,
    const float *scale, const int32_t *zp, int type, int32_t *q,
    struct err *e)
{
	int64_t outer = 1, inner = 1, nch;

	if (axis < 0 || axis >= rank)
		return err_set(e, "axis %d out of range for rank %d", axis, rank);
	for (int i = 0; i < axis; i++)
		outer *= dims[i];
	for (int i = axis + 1; i < rank; i++)
		inner *= dims[i];
	nch = dims[axis];
	for (int64_t a = 0; a < outer; a++)
		for (int64_t c = 0; c < nch; c++) {
			size_t off = (size_t)((a * nch + c) * inner);

			qparams_quantize_n(x + off, (size_t)inner, scale[c],
			    zp[c], type, q + off);
		}
	return 0;
}

float
qparams_dequantize(int32_t q, float scale, int32_t zp)
{
	return (float)((int64_t)q - zp) * scale;
}

/* Is the (nw, nb) combination one qparams_bias_scale handles? */
static int
bias_shape_ok(size_t nw, size_t nb, struct err *e)
{
	if (nw == 0 || nb == 0)
		return err_set(e, "no weight or bias scale");
	if (nw != 1 && nb != 1 && nb % nw != 0)
		return err_set(e, "%zu weight scales do not fit %zu bias channels",
		    nw, nb);
	return 0;
}

int
qparams_bias_scale(float input_scale, const float *wscale, size_t nw,
    size_t nb, double beta, float *bscale, struct err *e)
{
	float w;

	if (bias_shape_ok(nw, nb, e) < 0)
		return -1;
	if (nw > 1 && nb > 1) {
		/* nb == nw, or a multiple (grouped ConvTranspose). */
		for (size_t j = 0; j < nb; j++)
			bscale[j] = (float)((float)(input_scale *
			    wscale[j % nw]) * fabs(beta));
		return 0;
	}
	w = wscale[0];
	for (size_t i = 1; i < nw; i++)
		if (wscale[i] > w)
			w = wscale[i];
	bscale[0] = (float)((float)(input_scale * w) * fabs(beta));
	return 0;
}

int
qparams_bias_adjust(float input_scale, float *wscale, size_t nw,
    const float *babsmax, size_t nb, double beta, struct err *e)
{
	/* int32 max - (int32 min + 1), as ORT: a symmetric int32 grid. */
	const double qrange = (double)INT32_MAX - (double)(INT32_MIN + 1);
	int raised = 0;

	if (bias_shape_ok(nw, nb, e) < 0)
		return -1;
	for (size_t i = 0; i < nw; i++) {
		double absmax, least, cand;

		/* The bias channels this scale serves: j == i mod nw
		 * (every channel when nw == 1, the only one when nb == 1). */
		absmax = 0;
		for (size_t j = nb == 1 ? 0 : i % nw; j < nb; j += nw)
			if (fabs((double)babsmax[j]) > absmax)
				absmax = fabs((double)babsmax[j]);
		least = QPARAMS_BIAS_MARGIN * (2.0 * absmax) / qrange;
		cand = (double)input_scale * (double)wscale[i] * fabs(beta);
		/* cand > 0 keeps the ratio finite, as in ORT. */
		if (cand < least && cand > 0.0) {
			wscale[i] = (float)((double)wscale[i] * (least / cand));
			raised++;
		}
	}
	return raised;
}

int32_t
qparams_quantize_bias(float x, float scale)
{
	double q;

	if (isnan(x))
		return 0;
	q = nearbyint((double)x / (double)scale);
	if (q != q)
		return 0;
	if (q <= (double)INT32_MIN)
		return INT32_MIN;
	if (q >= (double)INT32_MAX)
		return INT32_MAX;
	return (int32_t)q;
}
