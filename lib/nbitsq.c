/* nbitsq: one block of weights quantized. See nbitsq.h. */
#include <math.h>
#include <string.h>

#include "nbitsq.h"

#define HQQ_ITERS 20
#define HQQ_SHRINKS 5
#define HQQ_LP 0.7f
#define HQQ_BETA 10.0f
#define HQQ_KAPPA 1.01f
#define HQQ_MAX_INV_SCALE 2e4f
#define MSE_GRID 5		/* narrowings per end */
#define MSE_STEP 0.06f		/* of the range per narrowing */
#define MSE_REFITS 10

static float
clampf(float v, float lo, float hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Codes of x for inverse scale inv and zero z; the squared error. */
static double
codes(const float *x, int n, float inv, float z, float qmax, uint8_t *q)
{
	double sse = 0;

	for (int i = 0; i < n; i++) {
		float c = clampf(nearbyintf(x[i] * inv + z), 0, qmax);
		double d = x[i] - (c - z) / inv;

		if (q)
			q[i] = (uint8_t)c;
		sse += d * d;
	}
	return sse;
}

static void
minmax(const float *x, int n, float *mn, float *mx)
{
	*mn = *mx = x[0];
	for (int i = 1; i < n; i++) {
		if (x[i] < *mn)
			*mn = x[i];
		if (x[i] > *mx)
			*mx = x[i];
	}
}

/* rtn: inverse scale and zero. */
static void
rtn(const struct nbitsq_opts *o, const float *x, int n, float *inv,
    float *z)
{
	float qmax = (float)((1 << o->bits) - 1), half = (float)(1 <<
	    (o->bits - 1)), mn, mx, s;

	minmax(x, n, &mn, &mx);
	if (o->symmetric) {
		float m = fabsf(mx) > fabsf(mn) ? mx : mn;

		s = m / -half;
		*z = half;
	} else {
		mn = mn < 0 ? mn : 0;
		mx = mx > 0 ? mx : 0;
		s = (mx - mn) / qmax;
		*z = s != 0 ? clampf(nearbyintf(-mn / s), 0, qmax) : half;
	}
	*inv = s != 0 && isfinite(1 / s) ? 1 / s : 1;
}

static float
shrink(float d, float beta)
{
	float a = fabsf(d), t = a - powf(a + 1e-8f, HQQ_LP - 1) / beta;

	return t > 0 ? copysignf(t, d) : 0;
}

/* hqq: improves on (inv, z), rtn's, when it can. */
static void
hqq(const struct nbitsq_opts *o, const float *x, int n, float *inv,
    float *z)
{
	float qmax = (float)((1 << o->bits) - 1), mn, mx, s, zz, beta;
	double best = codes(x, n, *inv, *z, qmax, NULL), err, prev = INFINITY;

	minmax(x, n, &mn, &mx);
	for (int f = 0; f < HQQ_SHRINKS; f++) {
	s = mx > mn ? qmax / ((mx - mn) * (1 - 0.05f * f)) : 1;
	s = s < HQQ_MAX_INV_SCALE ? s : HQQ_MAX_INV_SCALE;
	zz = nearbyintf(-mn * s);
	beta = HQQ_BETA;
	prev = INFINITY;
	for (int it = 0; it < HQQ_ITERS; it++) {
		double acc = 0;

		if (o->int_zero)
			zz = clampf(nearbyintf(zz), 0, qmax);
		err = 0;
		for (int i = 0; i < n; i++) {
			float c = clampf(nearbyintf(x[i] * s + zz), 0, qmax);
			float d = x[i] - (c - zz) / s;

			err += (double)d * d;
			acc += c - (x[i] - shrink(d, beta)) * s;
		}
		if (err < best) {
			best = err;
			*inv = s;
			*z = zz;
		}
		if (err >= prev)	/* as HQQ: stop when no better */
			break;
		prev = err;
		zz = (float)(acc / n);
		beta *= HQQ_KAPPA;
	}
	}
}

/* mse's search over one block: x[0..n), the best (inv, z) so far. */
struct search {
	const float *x;
	int n;
	float amax, qmax;		/* of |x|; the largest code */
	double best;			/* squared error of (inv, z) */
	float inv, z;
};

/*
 * round(v) clamped to [0, qm], rounded half to even as nearbyintf is in
 * the default rounding mode, for |v| < 2^22: the float magic number
 * 1.5 * 2^23 leaves the whole number in the low bits, and whole-number
 * clamps and plain arithmetic vectorize where nearbyintf is a call.
 */
static inline float
round_clamp(float v, int32_t qm)
{
	float t = v + 12582912.0f;
	int32_t c;

	memcpy(&c, &t, sizeof c);
	c -= 0x4b400000;
	c = c < 0 ? 0 : c;
	c = c > qm ? qm : c;
	return (float)c;
}

/* Keeps (1 / s, zz) when the squared error of x under them is less. */
static void
try_scale(struct search *sr, float s, float zz)
{
	const float *x = sr->x;
	float iv = 1 / s, err = 0;
	int32_t qm = (int32_t)sr->qmax;

	if (!(s > 0) || !isfinite(iv) || !isfinite(s))
		return;
	if (sr->amax * iv + sr->qmax >= 4e6f) {	/* past the magic */
		for (int i = 0; i < sr->n; i++) {
			float d = x[i] - (clampf(nearbyintf(x[i] * iv + zz), 0,
			    sr->qmax) - zz) * s;

			err += d * d;
		}
	} else {
		#pragma omp simd reduction(+:err)
		for (int i = 0; i < sr->n; i++) {
			float d = x[i] - (round_clamp(x[i] * iv + zz, qm) -
			    zz) * s;

			err += d * d;
		}
	}
	if (err < sr->best) {
		sr->best = err;
		sr->inv = iv;
		sr->z = zz;
	}
}

/*
 * mse's refits: the codes of (inv, z) fitted by least squares, x = s q + b
 * (z = -b / s rounded), then s alone for that whole z; kept while the
 * error falls.
 */
static void
mse_refit(const struct nbitsq_opts *o, struct search *sr)
{
	const float *x = sr->x;
	int n = sr->n;
	uint8_t q[256];

	for (int r = 0; r < MSE_REFITS && n <= 256; r++) {
		double sq = 0, sx = 0, sqq = 0, sqx = 0, den;
		double before = sr->best;
		float zz = sr->z, s, b;

		codes(x, n, sr->inv, zz, sr->qmax, q);
		for (int i = 0; i < n; i++) {
			sq += q[i];
			sx += x[i];
			sqq += (double)q[i] * q[i];
			sqx += (double)q[i] * x[i];
		}
		den = n * sqq - sq * sq;
		if (den > 0 && !o->symmetric) {
			s = (float)((n * sqx - sq * sx) / den);
			b = (float)((sx - s * sq) / n);
			if (s > 0)
				zz = clampf(nearbyintf(-b / s), 0, sr->qmax);
		}
		den = sqq - 2 * zz * sq + (double)n * zz * zz;
		if (den <= 0)
			break;
		try_scale(sr, (float)((sqx - zz * sx) / den), zz);
		if (sr->best >= before)
			break;
	}
}

/* mse: see nbitsq.h; (inv, z) start as rtn's, which is in the grid. */
static void
mse(const struct nbitsq_opts *o, const float *x, int n, float *inv,
    float *z)
{
	float half = (float)(1 << (o->bits - 1)), mn, mx;
	struct search sr = { x, n, 0, (float)((1 << o->bits) - 1), INFINITY,
	    *inv, *z };

	minmax(x, n, &mn, &mx);
	sr.amax = fabsf(mn) > fabsf(mx) ? fabsf(mn) : fabsf(mx);
	try_scale(&sr, 1 / *inv, *z);
	if (o->symmetric) {
		float m = fabsf(mx) > fabsf(mn) ? mx : mn;

		for (int i = 1; i < MSE_GRID * MSE_GRID; i++)
			try_scale(&sr, m * (1 - MSE_STEP * i / MSE_GRID) /
			    -half, half);
	} else {
		mn = mn < 0 ? mn : 0;
		mx = mx > 0 ? mx : 0;
		for (int i = 0; i < MSE_GRID; i++)
			for (int j = 0; j < MSE_GRID; j++) {
				float lo = mn * (1 - MSE_STEP * i);
				float s = (mx * (1 - MSE_STEP * j) - lo) /
				    sr.qmax;

				if (s > 0)
					try_scale(&sr, s, clampf(nearbyintf(
					    -lo / s), 0, sr.qmax));
			}
	}
	mse_refit(o, &sr);
	*inv = sr.inv;
	*z = sr.z;
}

/* The squared error of x's codes under (inv, z), dequantized in float. */
static double
dequant_sse(const float *x, int n, float inv, float z, int bits)
{
	float qmax = (float)((1 << bits) - 1), s = 1 / inv;
	double sse = 0;

	for (int i = 0; i < n; i++) {
		float c = clampf(nearbyintf(x[i] * inv + z), 0, qmax);
		double d = (double)x[i] - (double)((c - z) * s);

		sse += d * d;
	}
	return sse;
}

void
nbitsq_block(const struct nbitsq_opts *o, const float *x, int n,
    uint8_t *q, float *scale, float *zero)
{
	float inv, z;

	rtn(o, x, n, &inv, &z);
	if (o->method == BLOCKQ_HQQ && !o->symmetric)
		hqq(o, x, n, &inv, &z);
	else if (o->method == BLOCKQ_MSE) {
		float inv2 = inv, z2 = z;

		mse(o, x, n, &inv2, &z2);
		/* judged as they will be dequantized: never worse than rtn */
		if (dequant_sse(x, n, inv2, z2, o->bits) <
		    dequant_sse(x, n, inv, z, o->bits))
			inv = inv2, z = z2;
	}
	codes(x, n, inv, z, (float)((1 << o->bits) - 1), q);
	*scale = 1 / inv;
	*zero = z;
}

int64_t
nbitsq_first_nonfinite(const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return i;
	return -1;
}
