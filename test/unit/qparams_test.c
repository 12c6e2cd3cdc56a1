/*
 * qparams_test: scales and zero points against values computed by hand
 * (each case states its computation), quantization rounding and
 * saturation, power-of-two scales, int32 bias scales and the weight-scale
 * adjustment, and the int32-bias PR's Conv example end to end.
 * Needs nothing but libonnxq.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "qparams.h"
#include "tensor.h"
#include "unit.h"

static struct qparams_opts
opts(int type, int sym, int rr)
{
	struct qparams_opts o = { 0 };

	o.type = type;
	o.symmetric = sym;
	o.reduce_range = rr;
	return o;
}

/* Compute and compare: the scale must be the float32 of want_scale. */
#define CASE(o, lo, hi, want_scale, want_zp) do {			\
	struct qparams_opts o_ = (o);					\
	struct err e_ = { "" };						\
	float s_ = -1;							\
	int32_t z_ = -99999;						\
	CHECK_EQ_INT(qparams_compute(&o_, (lo), (hi), &s_, &z_, &e_), 0); \
	CHECK_EQ_STR(e_.msg, "");					\
	CHECK(s_ == (float)(want_scale));				\
	CHECK_NEAR(s_, (float)(want_scale), 0);				\
	CHECK_EQ_INT(z_, (want_zp));					\
} while (0)

static void
test_asymmetric(void)
{
	/* rmin=-1, rmax=3, uint8 0..255: scale=4/255,
	 * zp=round(0-(-1)/(4/255))=round(63.75)=64. */
	CASE(opts(DT_UINT8, 0, 0), -1, 3, 4.0 / 255, 64);
	/* int8 -128..127: scale=4/255, zp=round(-128+63.75)=round(-64.25)=-64. */
	CASE(opts(DT_INT8, 0, 0), -1, 3, 4.0 / 255, -64);
	/* uint16 0..65535: scale=4/65535, zp=round(65535/4)=round(16383.75)=16384. */
	CASE(opts(DT_UINT16, 0, 0), -1, 3, 4.0 / 65535, 16384);
	/* int16: zp=round(-32768+16383.75)=round(-16384.25)=-16384. */
	CASE(opts(DT_INT16, 0, 0), -1, 3, 4.0 / 65535, -16384);
	/* uint4 0..15: scale=4/15, zp=round(15/4)=round(3.75)=4. */
	CASE(opts(DT_UINT4, 0, 0), -1, 3, 4.0 / 15, 4);
	/* int4 -8..7: zp=round(-8+3.75)=round(-4.25)=-4. */
	CASE(opts(DT_INT4, 0, 0), -1, 3, 4.0 / 15, -4);
}

static void
test_zero_included(void)
{
	/* [2,5] -> [0,5]: uint8 scale=5/255, zp=round(0-0)=0. */
	CASE(opts(DT_UINT8, 0, 0), 2, 5, 5.0 / 255, 0);
	/* [-5,-2] -> [-5,0]: scale=5/255, zp=round(5/(5/255))=255. */
	CASE(opts(DT_UINT8, 0, 0), -5, -2, 5.0 / 255, 255);
	/* int8: zp=round(-128+255)=127. */
	CASE(opts(DT_INT8, 0, 0), -5, -2, 5.0 / 255, 127);
	/* [0,0]: scale 0 < FLT_MIN -> scale 1, zp 0. */
	CASE(opts(DT_UINT8, 0, 0), 0, 0, 1, 0);
	CASE(opts(DT_INT8, 1, 0), 0, 0, 1, 0);
	/* rmax=2e-36: scale=2e-36/255=7.8e-39 < FLT_MIN=1.18e-38 -> 1, 0. */
	CASE(opts(DT_UINT8, 0, 0), 0, 2e-36f, 1, 0);
	/* rmax=4e-36: 1.57e-38 >= FLT_MIN: normal, scale=4e-36f/255. */
	CASE(opts(DT_UINT8, 0, 0), 0, 4e-36f, (double)4e-36f / 255, 0);
}

static void
test_symmetric(void)
{
	/* [-1,3] symmetric -> [-3,3]. int8 -127..127: scale=6/254, zp=0. */
	CASE(opts(DT_INT8, 1, 0), -1, 3, 6.0 / 254, 0);
	/* int16 -32767..32767: scale=6/65534, zp=0. */
	CASE(opts(DT_INT16, 1, 0), -1, 3, 6.0 / 65534, 0);
	/* uint8 keeps 0..255: scale=6/255, zp=round(255/2)=round(127.5)=128. */
	CASE(opts(DT_UINT8, 1, 0), -1, 3, 6.0 / 255, 128);
	/* uint16 0..65535: zp=round(32767.5)=32768. */
	CASE(opts(DT_UINT16, 1, 0), -1, 3, 6.0 / 65535, 32768);
	/* int4 keeps -8..7: scale=6/15, zp=round(-0.5)=0 (half to even). */
	CASE(opts(DT_INT4, 1, 0), -1, 3, 6.0 / 15, 0);
	/* uint4 0..15: zp=round(7.5)=8. */
	CASE(opts(DT_UINT4, 1, 0), -1, 3, 6.0 / 15, 8);
	/* The midpoint does not depend on the range: [0,1] uint8 -> 128. */
	CASE(opts(DT_UINT8, 1, 0), 0, 1, 2.0 / 255, 128);
}

static void
test_reduce_range(void)
{
	/* int8 reduced -64..64 (whatever symmetric says): [-3,3] scale=6/128,
	 * zp=0; asymmetric [-1,3]: scale=4/128, zp=round(-64+32)=-32. */
	CASE(opts(DT_INT8, 1, 1), -1, 3, 6.0 / 128, 0);
	CASE(opts(DT_INT8, 0, 1), -1, 3, 4.0 / 128, -32);
	/* uint8 reduced 0..127: scale=4/127, zp=round(127/4)=round(31.75)=32. */
	CASE(opts(DT_UINT8, 0, 1), -1, 3, 4.0 / 127, 32);
	/* symmetric: [-3,3], zp=round(127/2)=round(63.5)=64. */
	CASE(opts(DT_UINT8, 1, 1), -1, 3, 6.0 / 127, 64);
	/* int16 reduced -16384..16384: scale=6/32768, zp=0. */
	CASE(opts(DT_INT16, 1, 1), -1, 3, 6.0 / 32768, 0);
	/* uint16 0..32767: scale=4/32767, zp=round(32767/4)=round(8191.75)=8192. */
	CASE(opts(DT_UINT16, 0, 1), -1, 3, 4.0 / 32767, 8192);
	/* int4 -4..3: scale=4/7, zp=round(-4+7/4)=round(-2.25)=-2. */
	CASE(opts(DT_INT4, 0, 1), -1, 3, 4.0 / 7, -2);
	/* uint4 0..7: scale=4/7, zp=round(1.75)=2. */
	CASE(opts(DT_UINT4, 0, 1), -1, 3, 4.0 / 7, 2);
}

static void
test_half_even(void)
{
	/* uint4, [-2.5,12.5]: scale=15/15=1, zp=round(2.5)=2 (even). */
	CASE(opts(DT_UINT4, 0, 0), -2.5f, 12.5f, 1, 2);
	/* [-3.5,11.5]: zp=round(3.5)=4 (even). */
	CASE(opts(DT_UINT4, 0, 0), -3.5f, 11.5f, 1, 4);
	/* int4 [-2.5,12.5]: zp=round(-8+2.5)=round(-5.5)=-6 (even). */
	CASE(opts(DT_INT4, 0, 0), -2.5f, 12.5f, 1, -6);
}

static void
test_min_real_range(void)
{
	struct qparams_opts o = opts(DT_UINT8, 0, 0);

	/* [0,0] with 0.0001: rmax = 0 + 0.0001f, scale=0.0001f/255, zp 0. */
	o.min_real_range = 0.0001f;
	CASE(o, 0, 0, (double)0.0001f / 255, 0);
	/* [-1e-5,0]: rmax = -1e-5f + 1e-4f (float32 sum); scale = that
	 * +1e-5 over 255; zp = round(1e-5 / scale). */
	{
		float rmax = -1e-5f + 0.0001f;
		float dr = rmax - -1e-5f;
		double s = (double)dr / 255;

		CASE(o, -1e-5f, 0, s, (int32_t)nearbyint(1e-5f / s));
	}
	/* A range already wider is untouched: [-1,3] as before. */
	CASE(o, -1, 3, 4.0 / 255, 64);
}

static void
test_pow2(void)
{
	struct qparams_opts o = opts(DT_UINT8, 0, 0);
	double lo, hi;

	o.pow2 = 1;
	/* [-1,3] uint8: 4/255=0.01569 -> 2^-5=0.03125 (2^-6=0.015625 is
	 * smaller); zp=round(0+1/0.03125)=32. */
	CASE(o, -1, 3, 0.03125, 32);
	qparams_represented(&o, 0.03125f, 32, &lo, &hi);
	CHECK(lo == -1 && hi == 223 * 0.03125);
	/* A scale already a power of two stays: [0,255] -> 1, zp 0. */
	CASE(o, 0, 255, 1, 0);
	/* [-0.5,254.5]: scale 255/255=1, zp=round(0.5)=0 (even): the grid
	 * [0,255] holds 254.5 within half a step and -0.5 too. */
	CASE(o, -0.5f, 254.5f, 1, 0);
	/* [-0.3,1]: 1.3/255=0.0050980 -> 2^-7=0.0078125,
	 * zp=round(0.3/0.0078125)=round(38.4)=38. */
	CASE(o, -0.3f, 1, 0.0078125, 38);
	/* int8 symmetric [-3,3]: 6/254=0.0236 -> 0.03125, zp 0. */
	o = opts(DT_INT8, 1, 0);
	o.pow2 = 1;
	CASE(o, -1, 3, 0.03125, 0);
	/* uint4 symmetric [-7.5,7.5]: 15/15=1 stays, zp=8; the grid
	 * [-8,7] holds 7.5 within half a step. */
	o = opts(DT_UINT4, 1, 0);
	o.pow2 = 1;
	CASE(o, -7.5f, 7.5f, 1, 8);
	/* The FLT_MIN rule comes first: [0,0] -> 1, 0. */
	CASE(o, 0, 0, 1, 0);
}

static void
test_errors(void)
{
	struct qparams_opts o = opts(DT_UINT8, 0, 0);
	struct err e = { "" };
	float s;
	int32_t z;

	CHECK_EQ_INT(qparams_compute(&o, NAN, 1, &s, &z, &e), -1);
	CHECK_EQ_STR(e.msg, "range [nan, 1] is not finite");
	CHECK_EQ_INT(qparams_compute(&o, -INFINITY, 1, &s, &z, &e), -1);
	CHECK_EQ_INT(qparams_compute(&o, -3e38f, 3e38f, &s, &z, &e), -1);
	CHECK_EQ_STR(e.msg, "range [-3e+38, 3e+38] is too wide for float32");
	o.type = DT_FLOAT;
	CHECK_EQ_INT(qparams_compute(&o, 0, 1, &s, &z, &e), -1);
	CHECK_EQ_STR(e.msg, "cannot quantize to type 1");
}

static void
test_channels(void)
{
	struct qparams_opts o = opts(DT_INT8, 1, 0);
	float lo[3] = { -1, 0, -2 }, hi[3] = { 3, 0, 1 }, s[3];
	int32_t z[3];
	struct err e = { "" };

	/* 6/254, then 0 -> (1, 0), then [-2,2] -> 4/254. */
	CHECK_EQ_INT(qparams_compute_n(&o, 3, lo, hi, s, z, &e), 0);
	CHECK(s[0] == (float)(6.0 / 254) && s[1] == 1 &&
	    s[2] == (float)(4.0 / 254));
	CHECK(z[0] == 0 && z[1] == 0 && z[2] == 0);
	lo[1] = NAN;
	CHECK_EQ_INT(qparams_compute_n(&o, 3, lo, hi, s, z, &e), -1);
	CHECK_EQ_STR(e.msg, "channel 1: range [nan, 0] is not finite");
}

static void
test_types(void)
{
	int64_t lo, hi;

	CHECK_EQ_INT(qparams_type_parse("uint8"), DT_UINT8);
	CHECK_EQ_INT(qparams_type_parse("INT16"), DT_INT16);
	CHECK_EQ_INT(qparams_type_parse("QUInt4"), DT_UINT4);
	CHECK_EQ_INT(qparams_type_parse("QInt8"), DT_INT8);
	CHECK_EQ_INT(qparams_type_parse("float"), DT_UNDEFINED);
	CHECK_EQ_INT(qparams_type_parse("int32"), DT_UNDEFINED);
	CHECK_EQ_STR(qparams_type_name(DT_INT4), "int4");
	CHECK(qparams_type_name(DT_INT32) == NULL);
	CHECK_EQ_INT(qparams_type_limits(DT_INT4, &lo, &hi), 0);
	CHECK(lo == -8 && hi == 7);
	CHECK_EQ_INT(qparams_qrange(DT_UINT16, 0, 1, &lo, &hi), 0);
	CHECK(lo == 0 && hi == 65535);
	CHECK_EQ_INT(qparams_qrange(DT_INT16, 0, 1, &lo, &hi), 0);
	CHECK(lo == -32767 && hi == 32767);
	CHECK_EQ_INT(qparams_qrange(DT_FLOAT, 0, 0, &lo, &hi), -1);
}

static void
test_quantize(void)
{
	float x[4] = { 1, 2, 3, 4 };
	int32_t q[4];

	/* Half to even: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2. */
	CHECK_EQ_INT(qparams_quantize(2.5f, 1, 0, DT_UINT8), 2);
	CHECK_EQ_INT(qparams_quantize(3.5f, 1, 0, DT_UINT8), 4);
	CHECK_EQ_INT(qparams_quantize(-2.5f, 1, 0, DT_INT8), -2);
	/* Then the zero point: 0.5/0.25 = 2, + 128 = 130. */
	CHECK_EQ_INT(qparams_quantize(0.5f, 0.25f, 128, DT_UINT8), 130);
	/* Saturation to the whole type range. */
	CHECK_EQ_INT(qparams_quantize(300, 1, 0, DT_UINT8), 255);
	CHECK_EQ_INT(qparams_quantize(-5, 1, 0, DT_UINT8), 0);
	CHECK_EQ_INT(qparams_quantize(200, 1, 0, DT_INT8), 127);
	CHECK_EQ_INT(qparams_quantize(-200, 1, 0, DT_INT8), -128);
	CHECK_EQ_INT(qparams_quantize(10, 1, 0, DT_INT4), 7);
	CHECK_EQ_INT(qparams_quantize(-10, 1, 0, DT_INT4), -8);
	CHECK_EQ_INT(qparams_quantize(20, 1, 0, DT_UINT4), 15);
	CHECK_EQ_INT(qparams_quantize(1e6f, 1, 0, DT_INT16), 32767);
	CHECK_EQ_INT(qparams_quantize(1e6f, 1, 0, DT_UINT16), 65535);
	CHECK_EQ_INT(qparams_quantize(INFINITY, 1, 3, DT_UINT8), 255);
	CHECK_EQ_INT(qparams_quantize(-INFINITY, 1, 3, DT_UINT8), 0);
	CHECK_EQ_INT(qparams_quantize(NAN, 1, 3, DT_UINT8), 3);
	/* The division is in float32: 1/3 in float32 times... 0.3f/0.1f
	 * is 2.9999998 in float32 (3.0000001 in double): rounds to 3. */
	CHECK_EQ_INT(qparams_quantize(0.3f, 0.1f, 0, DT_UINT8), 3);
	CHECK_NEAR(qparams_dequantize(130, 0.25f, 128), 0.5, 0);
	qparams_quantize_n(x, 4, 2, 0, DT_UINT8, q);
	/* 0.5, 1, 1.5, 2 -> 0, 1, 2, 2. */
	CHECK(q[0] == 0 && q[1] == 1 && q[2] == 2 && q[3] == 2);
}

static void
test_quantize_axis(void)
{
	/* 2x3, axis 0: row 0 scale 1 zp 0, row 1 scale 0.5 zp 10. */
	float x[6] = { 1, 2, 3, 1, 2, 3 }, s[2] = { 1, 0.5f };
	float s3[3] = { 1, 2, 4 };
	int32_t z[2] = { 0, 10 }, z3[3] = { 0, 0, 0 }, q[6];
	int64_t dims[2] = { 2, 3 };
	struct err e = { "" };

	CHECK_EQ_INT(qparams_quantize_axis(x, 2, dims, 0, s, z, DT_UINT8, q,
	    &e), 0);
	CHECK(q[0] == 1 && q[1] == 2 && q[2] == 3);
	CHECK(q[3] == 12 && q[4] == 14 && q[5] == 16);
	/* axis 1: columns scales 1, 2, 4: 1,1,1 (0.75 -> 1) ... */
	CHECK_EQ_INT(qparams_quantize_axis(x, 2, dims, 1, s3, z3, DT_UINT8, q,
	    &e), 0);
	/* 1/1=1, 2/2=1, 3/4=0.75->1; same for row 1. */
	CHECK(q[0] == 1 && q[1] == 1 && q[2] == 1 && q[5] == 1);
	CHECK_EQ_INT(qparams_quantize_axis(x, 2, dims, 2, s, z, DT_UINT8, q,
	    &e), -1);
	CHECK_EQ_STR(e.msg, "axis 2 out of range for rank 2");
}

static void
test_bias_scale(void)
{
	float w[2] = { 0.25f, 0.5f }, b[2];
	struct err e = { "" };

	/* Per channel: 0.5*0.25=0.125, 0.5*0.5=0.25. */
	CHECK_EQ_INT(qparams_bias_scale(0.5f, w, 2, 2, 1.0, b, &e), 0);
	CHECK(b[0] == 0.125f && b[1] == 0.25f);
	/* Gemm beta=2: doubled. */
	CHECK_EQ_INT(qparams_bias_scale(0.5f, w, 2, 2, 2.0, b, &e), 0);
	CHECK(b[0] == 0.25f && b[1] == 0.5f);
	/* Broadcast bias (1 channel) over 2 weight channels: the larger. */
	CHECK_EQ_INT(qparams_bias_scale(0.5f, w, 2, 1, 1.0, b, &e), 0);
	CHECK(b[0] == 0.25f);
	/* Per-tensor weight: one scale. */
	CHECK_EQ_INT(qparams_bias_scale(0.5f, w, 1, 8, 1.0, b, &e), 0);
	CHECK(b[0] == 0.125f);
	CHECK_EQ_INT(qparams_bias_scale(0.5f, w, 2, 3, 1.0, b, &e), -1);
	CHECK_EQ_STR(e.msg, "2 weight scales do not fit 3 bias channels");
	/* Grouped ConvTranspose: 4 bias channels over 2 weight scales,
	 * channel j with scale j mod 2: 0.125 0.25 0.125 0.25. */
	{
		float b4[4];

		CHECK_EQ_INT(qparams_bias_scale(0.5f, w, 2, 4, 1.0, b4, &e), 0);
		CHECK(b4[0] == 0.125f && b4[1] == 0.25f && b4[2] == 0.125f &&
		    b4[3] == 0.25f);
	}
	/* Bias quantization in double, half to even, int32 saturation. */
	CHECK_EQ_INT(qparams_quantize_bias(2.5f, 1), 2);
	CHECK_EQ_INT(qparams_quantize_bias(-3.5f, 1), -4);
	CHECK_EQ_INT(qparams_quantize_bias(5.0f, 3.9215686e-11f), INT32_MAX);
	CHECK_EQ_INT(qparams_quantize_bias(-5.0f, 3.9215686e-11f), INT32_MIN);
}

static void
test_bias_adjust(void)
{
	const double qrange = 4294967294.0;	/* (2^31-1) - (-2^31+1) */
	float w[2], babs[2];
	struct err e = { "" };
	double least, ratio;

	/* Per-tensor: bias [5,-4.5] -> absmax 5; least = 1.0001*10/qrange
	 * = 2.32850...e-9; candidate 0.5*7.843e-10 = 3.92e-11 < least:
	 * w *= least / candidate. */
	w[0] = (float)(2e-7 / 255);
	babs[0] = 5;
	least = 1.0001 * 2 * 5 / qrange;
	ratio = least / (0.5 * (double)w[0]);
	CHECK_EQ_INT(qparams_bias_adjust(0.5f, w, 1, babs, 1, 1.0, &e), 1);
	CHECK(w[0] == (float)((double)(float)(2e-7 / 255) * ratio));
	/* The bias then fits: 5 / (0.5 * w) < 2^31 - 1. */
	{
		float bs;

		CHECK_EQ_INT(qparams_bias_scale(0.5f, w, 1, 1, 1.0, &bs, &e), 0);
		CHECK(fabs(5.0 / bs) < 2147483647.0);
		CHECK(qparams_quantize_bias(5, bs) < INT32_MAX);
		CHECK_NEAR(qparams_quantize_bias(5, bs) * (double)bs, 5, 1e-8);
	}
	/* Per channel, each against its own |bias|: channel 1 (|b|=1e-9)
	 * needs nothing. */
	w[0] = 1e-9f;
	w[1] = 1e-9f;
	babs[0] = 4.5f;
	babs[1] = 1e-9f;
	CHECK_EQ_INT(qparams_bias_adjust(0.5f, w, 2, babs, 2, 1.0, &e), 1);
	CHECK(w[0] == (float)(1e-9f * (1.0001 * 9 / qrange / (0.5 * 1e-9f))));
	CHECK(w[1] == 1e-9f);
	/* Large enough scales are left alone. */
	w[0] = 0.01f;
	babs[0] = 5;
	CHECK_EQ_INT(qparams_bias_adjust(0.5f, w, 1, babs, 1, 1.0, &e), 0);
	CHECK(w[0] == 0.01f);
	/* Gemm beta scales the candidate: 0.5*w*|beta|. */
	w[0] = 1e-9f;
	CHECK_EQ_INT(qparams_bias_adjust(0.5f, w, 1, babs, 1, -4.0, &e), 1);
	CHECK(w[0] == (float)(1e-9f * (1.0001 * 10 / qrange /
	    (0.5 * (double)1e-9f * 4))));
	/* Per-tensor weight, per-channel bias: the largest |bias| counts. */
	w[0] = 1e-9f;
	babs[0] = 1;
	babs[1] = 3;
	CHECK_EQ_INT(qparams_bias_adjust(0.5f, w, 1, babs, 2, 1.0, &e), 1);
	CHECK(w[0] == (float)(1e-9f * (1.0001 * 6 / qrange / (0.5 * 1e-9f))));
	CHECK_EQ_INT(qparams_bias_adjust(0.5f, w, 2, babs, 3, 1.0, &e), -1);
	/* Grouped: scale 0 answers for bias channels 0 and 2 (|b| 1, 3),
	 * scale 1 for 1 and 3 (|b| 2, 0.5): absmax 3 and 2. */
	{
		float b4[4] = { 1, 2, 3, 0.5f };

		w[0] = w[1] = 1e-9f;
		CHECK_EQ_INT(qparams_bias_adjust(0.5f, w, 2, b4, 4, 1.0, &e), 2);
		CHECK(w[0] == (float)(1e-9f * (1.0001 * 6 / qrange /
		    (0.5 * 1e-9f))));
		CHECK(w[1] == (float)(1e-9f * (1.0001 * 4 / qrange /
		    (0.5 * 1e-9f))));
	}
}

/*
 * The PR's example: Conv over a 1x2x4x4 input (calibrated [0, 12.75], so
 * uint8 scale 0.05, zp 0), weight 2x2x2x2 alternating -1e-7, +1e-7
 * (int8 asymmetric: scale 2e-7/255 = 7.843e-10), bias [5, -4.5], output
 * calibrated [-4.5, 5] (uint8 scale 9.5/255, zp 121). The bias scale
 * 0.05 * 7.843e-10 = 3.92e-11 would need 5/3.92e-11 = 1.275e11 > 2^31.
 * (The PR's text says input scale 0.5, but its own product 3.92e-11 and
 * ORT's test of the fix, TestAdjustWeightScaleForInt32Bias, use 0.05.)
 * The QDQ model is simulated: inputs, weights and bias quantized and
 * dequantized, the Conv run in float, its output quantized and
 * dequantized. Returns output[0] and the SNR in dB.
 */
static void
pr_conv(int adjust, float *out0, double *snr)
{
	float x[2][4][4], w[2][2][2][2], b[2] = { 5.0f, -4.5f };
	float wq[2][2][2][2], bq[2], xs, ws, bs, os;
	int32_t xz, wz, oz;
	struct qparams_opts act = opts(DT_UINT8, 0, 0);
	struct qparams_opts wt = opts(DT_INT8, 0, 0);
	struct err e = { "" };
	double sig = 0, noise = 0;
	float babs = 5;
	int i = 0;

	for (int o = 0; o < 2; o++)
		for (int c = 0; c < 2; c++)
			for (int h = 0; h < 2; h++)
				for (int v = 0; v < 2; v++, i++)
					w[o][c][h][v] = i % 2 == 0 ? -1e-7f : 1e-7f;
	/* The calibration batch in the middle of the range. */
	for (int c = 0; c < 2; c++)
		for (int h = 0; h < 4; h++)
			for (int v = 0; v < 4; v++)
				x[c][h][v] = 12.75f / 2;
	REQUIRE(qparams_compute(&act, 0, 12.75f, &xs, &xz, &e) == 0);
	REQUIRE(qparams_compute(&wt, -1e-7f, 1e-7f, &ws, &wz, &e) == 0);
	REQUIRE(qparams_compute(&act, -4.5f, 5.0f, &os, &oz, &e) == 0);
	CHECK(xs == (float)(12.75f / 255.0) && xz == 0);
	CHECK_NEAR(xs, 0.05, 1e-9);
	/* zp = round(-128 - (-1e-7f)/scale) = round(-0.50000000000001421)
	 * = -1 (numpy agrees: the float32 bounds are not exactly +-1e-7). */
	CHECK_NEAR(ws, 7.843e-10, 1e-13);
	CHECK_EQ_INT(wz, -1);
	CHECK_EQ_INT(oz, 121);
	if (adjust)
		CHECK_EQ_INT(qparams_bias_adjust(xs, &ws, 1, &babs, 1, 1.0, &e),
		    1);
	REQUIRE(qparams_bias_scale(xs, &ws, 1, 1, 1.0, &bs, &e) == 0);
	for (int o = 0; o < 2; o++) {
		bq[o] = (float)qparams_quantize_bias(b[o], bs) * bs;
		for (int c = 0; c < 2; c++)
			for (int h = 0; h < 2; h++)
				for (int v = 0; v < 2; v++)
					wq[o][c][h][v] = qparams_dequantize(
					    qparams_quantize(w[o][c][h][v], ws,
					    wz, DT_INT8), ws, wz);
	}
	for (int o = 0; o < 2; o++)
		for (int h = 0; h < 3; h++)
			for (int v = 0; v < 3; v++) {
				float ref = b[o], got = bq[o];

				for (int c = 0; c < 2; c++)
					for (int kh = 0; kh < 2; kh++)
						for (int kv = 0; kv < 2; kv++) {
							float xv = x[c][h + kh][v + kv];
							float xq = qparams_dequantize(
							    qparams_quantize(xv, xs, xz,
							    DT_UINT8), xs, xz);

							ref += w[o][c][kh][kv] * xv;
							got += wq[o][c][kh][kv] * xq;
						}
				got = qparams_dequantize(qparams_quantize(got, os,
				    oz, DT_UINT8), os, oz);
				if (o == 0 && h == 0 && v == 0)
					*out0 = got;
				if (o == 0 && h == 0 && v == 0)
					CHECK(ref == 5.0f);
				sig += (double)ref * ref;
				noise += ((double)ref - got) * ((double)ref - got);
			}
	*snr = 10 * log10(sig / noise);
}

static void
test_pr_example(void)
{
	float out0 = 0;
	double snr = 0;

	/* With the adjustment: output[0] 4.992, SNR 55.656 dB in the PR. */
	pr_conv(1, &out0, &snr);
	CHECK_NEAR(out0, 4.992, 0.0005);
	CHECK_NEAR(snr, 55.656, 0.05);
	/* Without: 0.075 and 0.1369 dB. */
	pr_conv(0, &out0, &snr);
	CHECK_NEAR(out0, 0.075, 0.001);
	CHECK_NEAR(snr, 0.1369, 0.005);
}

UNIT_MAIN(test_asymmetric, test_zero_included, test_symmetric,
    test_reduce_range, test_half_even, test_min_real_range, test_pow2,
    test_errors, test_channels, test_types, test_quantize, test_quantize_axis,
    test_bias_scale, test_bias_adjust, test_pr_example)
