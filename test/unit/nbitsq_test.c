/* nbitsq_test: the arithmetic of one weight-only block. */
#include <math.h>
#include <string.h>

#include "nbitsq.h"
#include "unit.h"

/* The squared error of the block's dequantized codes. */
static double
sse(const float *x, int n, const uint8_t *q, float s, float z)
{
	double e = 0;

	for (int i = 0; i < n; i++) {
		double d = x[i] - (q[i] - z) * s;
		e += d * d;
	}
	return e;
}

static void
test_rtn(void)
{
	struct nbitsq_opts o = { 4, 0, BLOCKQ_RTN, 1 };
	float x[4] = { 1, 2, 3, 1.5f }, s, z;
	uint8_t q[4];

	/* Range widened to [0, 3]: scale 0.2, zero 0, x = 5 q * 0.2. */
	nbitsq_block(&o, x, 4, q, &s, &z);
	CHECK_NEAR(s, 0.2, 1e-7);
	CHECK_EQ_INT((int)z, 0);
	CHECK_EQ_INT(q[0], 5);
	CHECK_EQ_INT(q[2], 15);
	/* Symmetric: the largest magnitude (-4) is code 0 of zero 8. */
	o.symmetric = 1;
	x[1] = -4;
	nbitsq_block(&o, x, 4, q, &s, &z);
	CHECK_NEAR(s, 0.5, 1e-7);
	CHECK_EQ_INT((int)z, 8);
	CHECK_EQ_INT(q[1], 0);
	CHECK_EQ_INT(q[0], 10);
}

static void
test_zero_and_tiny(void)
{
	struct nbitsq_opts o = { 4, 0, BLOCKQ_HQQ, 0 };
	float zero[32], tiny[32], s, z;
	uint8_t q[32];

	memset(zero, 0, sizeof zero);
	for (int i = 0; i < 32; i++)
		tiny[i] = 1e-30f * (float)(i - 16);
	for (int m = 0; m < BLOCKQ_NMETHODS; m++) {
		o.method = (enum blockq_method)m;
		nbitsq_block(&o, zero, 32, q, &s, &z);
		CHECK(isfinite(s) && isfinite(z) && s != 0);
		CHECK(sse(zero, 32, q, s, z) == 0);
		nbitsq_block(&o, tiny, 32, q, &s, &z);
		CHECK(isfinite(s) && isfinite(z));
		CHECK(sse(tiny, 32, q, s, z) < 1e-58);
	}
}

/* hqq is never worse than rtn on a block, and better on skewed ones. */
static void
test_hqq_beats_rtn(void)
{
	struct nbitsq_opts r = { 4, 0, BLOCKQ_RTN, 0 }, h = r;
	uint64_t st = 7;
	int better = 0;

	h.method = BLOCKQ_HQQ;
	for (int t = 0; t < 200; t++) {
		float x[64], s, z;
		uint8_t q[64];
		double er, eh;

		for (int i = 0; i < 64; i++) {
			double u = (double)(unit_rand64_r(&st) >> 11) / 9007199254740992.0;
			x[i] = (float)(u * u * u - 0.2);
		}
		nbitsq_block(&r, x, 64, q, &s, &z);
		er = sse(x, 64, q, s, z);
		nbitsq_block(&h, x, 64, q, &s, &z);
		eh = sse(x, 64, q, s, z);
		CHECK(eh <= er * (1 + 1e-6));
		better += eh < er * 0.99;
	}
	CHECK(better > 100);
}

/* The squared error as the interpreter and ORT dequantize: in float. */
static double
sse_float(const float *x, int n, const uint8_t *q, float s, float z)
{
	double e = 0;

	for (int i = 0; i < n; i++) {
		double d = (double)x[i] - (double)(((float)q[i] - z) * s);
		e += d * d;
	}
	return e;
}

/* A normal deviate (Box-Muller) from the unit generator. */
static double
normal(uint64_t *st)
{
	double u = ((double)(unit_rand64_r(st) >> 11) + 1) / 9007199254740993.0;
	double v = (double)(unit_rand64_r(st) >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/*
 * mse is never worse than rtn on a block, for every width, block size and
 * symmetry, on normal weights with an outlier now and then (as the
 * decoder's), skewed ones and constant ones; and better on most.
 */
static void
test_mse_never_worse(void)
{
	static const int sizes[] = { 16, 32, 40, 128, 256 };
	uint64_t st = 11;
	int better = 0, blocks = 0;

	for (int t = 0; t < 400; t++) {
		struct nbitsq_opts r = { t % 3 ? 4 : 8, t % 4 == 0, BLOCKQ_RTN,
		    1 }, m = r;
		int n = sizes[t % 5];
		float x[256], sr, zr, sm, zm;
		uint8_t qr[256], qm[256];
		double er, em;

		m.method = BLOCKQ_MSE;
		for (int i = 0; i < n; i++) {
			x[i] = (float)(normal(&st) * 0.02);
			if (t % 7 == 1 && x[i] < 0)
				x[i] *= 0.1f;
			if (unit_rand64_r(&st) % 23 == 0)
				x[i] *= 12;
			if (t % 50 == 3)
				x[i] = 0.5f;
		}
		nbitsq_block(&r, x, n, qr, &sr, &zr);
		nbitsq_block(&m, x, n, qm, &sm, &zm);
		CHECK(zm == nearbyintf(zm) && zm >= 0 &&
		    zm <= (float)((1 << r.bits) - 1));
		if (r.symmetric)
			CHECK(zm == zr);
		er = sse_float(x, n, qr, sr, zr);
		em = sse_float(x, n, qm, sm, zm);
		CHECK(em <= er);
		better += em < er * 0.98;
		blocks++;
	}
	CHECK(better > blocks / 2);
}

static void
test_nonfinite(void)
{
	float x[3] = { 1, NAN, INFINITY };

	CHECK_EQ_INT((int)nbitsq_first_nonfinite(x, 3), 1);
	CHECK_EQ_INT((int)nbitsq_first_nonfinite(x, 1), -1);
}

UNIT_MAIN(test_rtn, test_zero_and_tiny, test_hqq_beats_rtn,
    test_mse_never_worse, test_nonfinite)
