/* nbitsq: one block of weights quantized. See nbitsq.h. */
#include <math.h>

#include "nbitsq.h"

#define HQQ_ITERS 20
#define HQQ_SHRINKS 5
#define HQQ_LP 0.7f
#define HQQ_BETA 10.0f
#define HQQ_KAPPA 1.01f
#define HQQ_MAX_INV_SCALE 2e4f

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

void
nbitsq_block(const struct nbitsq_opts *o, const float *x, int n,
    uint8_t *q, float *scale, float *zero)
{
	float inv, z;

	rtn(o, x, n, &inv, &z);
	if (o->method == BLOCKQ_HQQ && !o->symmetric)
		hqq(o, x, n, &inv, &z);
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
