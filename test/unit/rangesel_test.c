/*
 * rangesel_test: every range selection method against values computed by
 * hand (each case states its computation), for the types where the
 * method depends on the type; and the mse search (which skips the grids
 * it can bound) against trying every grid of it, on histograms of
 * several shapes. Needs nothing but libonnxq.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hist.h"
#include "rangesel.h"
#include "tensor.h"
#include "unit.h"

static const int all_types[] = {
	DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_UINT4, DT_INT4,
};

static struct rangesel_stats
stats(double min, double max, const struct hist_bin *b, size_t n)
{
	struct rangesel_stats st = {
		.min = min, .max = max, .mavg_min = NAN, .mavg_max = NAN,
		.mean = NAN, .std = NAN, .bins = b, .nbins = n,
	};

	for (size_t i = 0; i < n; i++)
		st.n += b[i].count;
	return st;
}

static struct rangesel_opts
ropts(int method, int type, int sym)
{
	struct rangesel_opts o;

	rangesel_opts_init(&o);
	o.method = method;
	o.q.type = type;
	o.q.symmetric = sym;
	return o;
}

static void
test_names(void)
{
	CHECK_EQ_INT(rangesel_method_parse("mse"), RANGESEL_MSE);
	CHECK_EQ_INT(rangesel_method_parse("entropy"), RANGESEL_ENTROPY);
	CHECK_EQ_INT(rangesel_method_parse("MinMax"), -1);
	CHECK_EQ_STR(rangesel_method_name(RANGESEL_DISTRIBUTION), "distribution");
	CHECK(rangesel_method_name(99) == NULL);
}

static void
test_minmax(void)
{
	struct rangesel_stats st = stats(-1, 3, NULL, 0);
	struct rangesel_opts o = ropts(RANGESEL_MINMAX, DT_UINT8, 0);
	struct err e = { "" };
	float lo, hi;

	st.n = 10;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == -1 && hi == 3);
	/* Moving average: the means of the per-batch minima and maxima. */
	o.moving_average = 1;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), -1);
	CHECK_EQ_STR(e.msg, "no per-batch minima and maxima");
	st.mavg_min = -0.5;
	st.mavg_max = 2;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == -0.5f && hi == 2);
	/* Nothing seen: [0, 0]. */
	st = stats(INFINITY, -INFINITY, NULL, 0);
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == 0 && hi == 0);
}

static void
test_percentile(void)
{
	/* |x|: [1,2) holds 97+1, [2,4) 1+1; total 100. */
	static const struct hist_bin b[] = {
		{ -4, -2, 1 }, { -2, -1, 1 }, { 1, 2, 97 }, { 2, 4, 1 },
	};
	struct rangesel_stats st = stats(-4, 4, b, 4);
	struct rangesel_opts o = ropts(RANGESEL_PERCENTILE, DT_UINT8, 0);
	struct err e = { "" };
	float lo, hi;

	/* p=99: 99 of |x|; [1,2) ends at 98, so 1 of the 2 in [2,4):
	 * T = 2 + (4-2)*1/2 = 3 -> [-3, 3]. */
	o.percentile = 99;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == -3 && hi == 3);
	/* Clamped to the data: with min=-2.5 -> [-2.5, 3]. */
	st.min = -2.5;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == -2.5f && hi == 3);
	st.min = -4;
	/* p=99.5: 99.5 - 98 = 1.5 of 2: T = 2 + 2*0.75 = 3.5. */
	o.percentile = 99.5;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == -3.5f && hi == 3.5f);
	/* Per side, p=98: cut 1 value from each tail. Low: the 1st value
	 * is the whole of [-4,-2): -4 + 2*1 = -2. High: 99 values lie
	 * below the end of [1,2) (1+1+97): 2. */
	o.percentile = 98;
	o.per_side = 1;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == -2 && hi == 2);
	/* 100: everything, clamped to the data. */
	o.percentile = 100;
	o.per_side = 0;
	st.max = 3.9;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == -4 && hi == 3.9f);
	/* Errors: bad percentile, no histogram, bins out of order. */
	o.percentile = 0;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), -1);
	CHECK_EQ_STR(e.msg, "percentile: percentile 0 is not in (0, 100]");
	o.percentile = 99;
	st.bins = NULL;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), -1);
	CHECK_EQ_STR(e.msg, "percentile: no histogram");
	{
		static const struct hist_bin bad[] = { { 1, 2, 1 }, { -2, -1, 1 } };

		st = stats(-2, 2, bad, 2);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), -1);
		CHECK_EQ_STR(e.msg, "percentile: histogram bins 0 and 1 "
		    "overlap or are out of order");
	}
}

static void
test_entropy_small(void)
{
	/*
	 * int4 symmetric: L = (7-(-8))/2 + 1 = 8 levels; 16 bins of width 1
	 * over [0,16]: counts h = 4 4 2 6 2 6 2 6 1 0 0 0 0 0 0 1 (34),
	 * candidates i = max(8, 16/16) .. 16.
	 * i=8: P = h[0..7] with h8+h15 = 2 added to bin 7 (sum 34), Q =
	 *   h[0..7] (one bin per level, sum 32): KL = 26/34 ln(32/34) +
	 *   8/34 ln(8*32/(6*34)) = -0.046360 + 0.053443 = 0.00708.
	 * i=9: level(k) = floor(8k/9) merges bins 0,1 only; Q = h[0..8]
	 *   (33), P = same with h15 added to bin 8 (34): KL = 32/34
	 *   ln(33/34) + 2/34 ln(66/34) = -0.028097 + 0.039017 = 0.01092.
	 * i=10..15: bin i-1 is empty while outliers remain: infinite.
	 * i=16: pairs; Q = 4 4 4 4 4 4 4 4 1 0 0 0 0 0 0 1: KL = 3*2/34
	 *   ln(2/4) + 3*6/34 ln(6/4) = -0.122320 + 0.214658 = 0.09234.
	 * Least at i=8: T = 8 -> [max(-8, 0), 8] = [0, 8].
	 */
	static const struct hist_bin b[] = {
		{ 0, 1, 4 }, { 1, 2, 4 }, { 2, 3, 2 }, { 3, 4, 6 }, { 4, 5, 2 },
		{ 5, 6, 6 }, { 6, 7, 2 }, { 7, 8, 6 }, { 8, 9, 1 },
		{ 15, 16, 1 },
	};
	struct rangesel_stats st = stats(0, 16, b, 10);
	struct rangesel_opts o = ropts(RANGESEL_ENTROPY, DT_INT4, 1);
	struct err e = { "" };
	float lo, hi;

	o.entropy_bins = 16;
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK_EQ_STR(e.msg, "");
	CHECK(lo == 0 && hi == 8);
	/* A uniform body with nothing beyond: every candidate has KL 0
	 * (empty bins stay empty in Q), so the last, i=16, wins. */
	{
		static const struct hist_bin u[] = {
			{ 0, 8, 32 }, { 15, 16, 0 },
		};

		/* Linear bins 0..7 hold 4 each: T = 16 = max. */
		st = stats(0, 16, u, 2);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK(lo == 0 && hi == 16);
	}
}

static void
test_entropy_types(void)
{
	/* Uniform data on [0,1): for i < 2048 the outliers pile into bin
	 * i-1 and KL > 0; at i = 2048 no outliers and every level merges
	 * bins of equal count, so Q = P and KL = 0: no clipping, for every
	 * type. (16-bit types have L >= 2048 levels and keep the full
	 * range by rule.) */
	static const struct hist_bin b[] = { { 0, 1, 1 << 20 } };
	struct rangesel_stats st = stats(0, 1, b, 1);
	struct err e = { "" };
	float lo, hi;

	for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++)
		for (int sym = 0; sym < 2; sym++) {
			struct rangesel_opts o = ropts(RANGESEL_ENTROPY,
			    all_types[t], sym);

			CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
			CHECK(lo == 0 && hi == 1);
		}
	/* Laplace-like body (counts halving per unit) with a long thin
	 * tail: clipping must happen for int8 (not asserted by value:
	 * only that T lies well inside (0, max)). */
	{
		struct hist_bin lb[40];
		struct rangesel_opts o = ropts(RANGESEL_ENTROPY, DT_INT8, 1);

		for (int i = 0; i < 40; i++)
			lb[i] = (struct hist_bin){ (float)i, (float)(i + 1),
			    (uint64_t)(1u << 30) >> (i < 30 ? i : 30) };
		st = stats(0, 40, lb, 40);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK(lo == 0 && hi > 5 && hi < 35);
	}
}

static void
test_entropy_offset(void)
{
	/*
	 * One-signed data away from zero, as a LayerNorm's standard
	 * deviation: uniform on [0.4, 1.7], 1000 values per bin of 0.1,
	 * uint8 asymmetric (L = 256 levels over [0, T]). Linear bins 0..481
	 * of 2048 are empty. A candidate just past the minimum has one or
	 * two occupied bins, where P (the outliers piled into the last) and
	 * Q normalise to the same spike: KL 0, and T collapsed to the
	 * minimum, clipping every value (rec: 0% accuracy). Candidates now
	 * start 256 bins past the first occupied one, and on a uniform body
	 * the last candidate (no outliers, Q = P) wins: the full range.
	 */
	struct hist_bin b[13];
	struct rangesel_opts o = ropts(RANGESEL_ENTROPY, DT_UINT8, 0);
	struct rangesel_stats st;
	struct err e = { "" };
	float lo, hi;

	for (int i = 0; i < 13; i++)
		b[i] = (struct hist_bin){ 0.4f + 0.1f * (float)i,
		    0.4f + 0.1f * (float)(i + 1), 1000 };
	st = stats(0.4, b[12].hi, b, 13);
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo == 0.4f && hi == b[12].hi);
	/* The mirror image: the same for negative data. */
	for (int i = 0; i < 13; i++)
		b[12 - i] = (struct hist_bin){ -(0.4f + 0.1f * (float)(i + 1)),
		    -(0.4f + 0.1f * (float)i), 1000 };
	st = stats(b[0].lo, -0.4, b, 13);
	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK_EQ_STR(e.msg, "");
	CHECK(lo == b[0].lo && hi == -0.4f);
	/* A body with a thin tail still gets clipped, but never below the
	 * data: 1000 values per bin on [0.4, 1.0], 1 on [1.0, 8.0]. */
	{
		struct hist_bin t[7];

		for (int i = 0; i < 6; i++)
			t[i] = (struct hist_bin){ 0.4f + 0.1f * (float)i,
			    0.4f + 0.1f * (float)(i + 1), 1000 };
		t[6] = (struct hist_bin){ 1.0f, 8.0f, 1 };
		st = stats(0.4, 8.0, t, 7);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK(lo == 0.4f && hi > 1.0f && hi < 8.0f);
	}
	/*
	 * Signed data, asymmetric grid: a spike of 10^6 values on the short
	 * side [-0.044, -0.04] (a hardswish's negative part) and a tail
	 * decaying from 10^5 per 0.01 on [0, 0.42]. Folded onto |x|, the
	 * spike's bin took the tail as its outliers at no cost: T = 0.044,
	 * the tail clipped (rec: 0%). Each side on its own: the negative
	 * side keeps its whole spike, the positive one its body.
	 */
	{
		struct hist_bin sb[43];

		sb[0] = (struct hist_bin){ -0.044f, -0.04f, 1000000 };
		for (int i = 0; i < 42; i++)
			sb[i + 1] = (struct hist_bin){ 0.01f * (float)i,
			    0.01f * (float)(i + 1),
			    (uint64_t)(100000 >> (i / 3)) + 1 };
		st = stats(-0.044, sb[42].hi, sb, 43);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK(lo == -0.044f && hi > 0.15f);
	}
}

static void
test_distribution(void)
{
	/*
	 * mean 1, std 2; n grid points: std(grid) = sqrt((n^2-1)/12),
	 * w = 2/std(grid) * (qmax-qmin), range = 1 -+ w/2, clamped to
	 * [-10, 10]. uint8 (n=256): std(grid) = sqrt(65535/12) = 73.9003,
	 * w = 2*255/73.9003 = 6.90119, range [-2.45060, 4.45060].
	 * int8 symmetric (n=255, -127..127): sqrt(65024/12) = 73.6116,
	 * w = 2*254/73.6116 = 6.90108. int4 (n=16): sqrt(255/12) = 4.60977,
	 * w = 2*15/4.60977 = 6.50791. uint16: 2*65535/sqrt((65536^2-1)/12)
	 * = 6.92816 (2*sqrt(12) = 6.92820 in the limit).
	 */
	static const struct {
		int type, sym;
		double w;
	} c[] = {
		{ DT_UINT8, 0, 6.90119 }, { DT_INT8, 1, 6.90108 },
		{ DT_INT8, 0, 6.90119 }, { DT_INT4, 0, 6.50791 },
		{ DT_UINT4, 0, 6.50791 }, { DT_UINT16, 0, 6.92816 },
		{ DT_INT16, 1, 6.92816 },
	};
	struct rangesel_stats st = stats(-10, 10, NULL, 0);
	struct err e = { "" };
	float lo, hi;

	st.mean = 1;
	st.std = 2;
	st.n = 100;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct rangesel_opts o = ropts(RANGESEL_DISTRIBUTION, c[i].type,
		    c[i].sym);

		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK_NEAR(lo, 1 - c[i].w / 2, 1e-4);
		CHECK_NEAR(hi, 1 + c[i].w / 2, 1e-4);
	}
	/* Clamped: min -1 -> [-1, 4.4506]. */
	st.min = -1;
	{
		struct rangesel_opts o = ropts(RANGESEL_DISTRIBUTION, DT_UINT8, 0);

		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK(lo == -1);
		CHECK_NEAR(hi, 4.45060, 1e-4);
		st.std = NAN;
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), -1);
		CHECK_EQ_STR(e.msg,
		    "distribution: no mean and standard deviation");
	}
}

static void
test_mse_error(void)
{
	/* 100 values uniform on [0,1). */
	static const struct hist_bin b[] = { { 0, 1, 100 } };
	struct rangesel_stats st = stats(0, 1, b, 1);
	struct rangesel_opts o = ropts(RANGESEL_MSE, DT_UINT8, 0);
	struct err e = { "" };
	double m, s;

	/* [0,1]: s = 1/255, nothing clipped; values in [0, s/2) round to
	 * zero with mean error (s/2)^2/3 = s^2/12, the rest s^2/12:
	 * mse = s^2/12 = 1/(12*255^2) = 1.28154e-6. */
	CHECK_EQ_INT(rangesel_mse_error(&st, &o, 0, 1, &m, &e), 0);
	s = (double)(float)(1.0 / 255);
	CHECK_NEAR(m, s * s / 12, 1e-12);
	/* [0,0.5]: s = float(0.5/255), the grid ends at U = 255s (0.5 up
	 * to float rounding); (U,1) clips: mean (x-U)^2 over [0,1) is
	 * (1-U)^3/3 = 0.0416667; the part inside adds U*s^2/12. */
	CHECK_EQ_INT(rangesel_mse_error(&st, &o, 0, 0.5f, &m, &e), 0);
	s = (double)(float)(0.5 / 255);
	{
		double u = 255 * s;

		CHECK_NEAR(m, pow(1 - u, 3) / 3 + u * s * s / 12, 1e-12);
		CHECK_NEAR(m, 0.125 / 3, 1e-6);
	}
	/* A spike of exact zeros adds nothing (zero is on the grid) but
	 * counts as values: 100 more zeros halve the mean. */
	{
		static const struct hist_bin z[] = { { 0, 0, 100 },
		    { 0, 1, 100 } };
		struct rangesel_stats sz = stats(0, 1, z, 2);

		double u = 255 * s;

		CHECK_EQ_INT(rangesel_mse_error(&sz, &o, 0, 0.5f, &m, &e), 0);
		CHECK_NEAR(m, (pow(1 - u, 3) / 3 + u * s * s / 12) / 2, 1e-12);
	}
}

static void
test_mse_select(void)
{
	/*
	 * Uniform on [0,1), range [0,b] on a grid of dq steps (zp at qmin,
	 * so the grid ends at b): mse(b) = (1-b)^3/3 + b*(b/dq)^2/12;
	 * d/db = -(1-b)^2 + b^2/(4 dq^2) = 0 -> 1-b = b/(2dq) ->
	 * b = 2dq/(2dq+1): uint8/int8 510/511 = 0.998043, 16-bit
	 * 131070/131071 = 0.9999924, 4-bit 30/31 = 0.967742.
	 */
	static const struct hist_bin b[] = { { 0, 1, 1000 } };
	static const struct hist_bin bz[] = { { 0, 0, 1000000 },
	    { 0, 1, 1000 } };
	struct rangesel_stats st = stats(0, 1, b, 1);
	struct err e = { "" };
	float lo, hi;

	for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
		struct rangesel_opts o = ropts(RANGESEL_MSE, all_types[t], 0);
		int64_t qmin, qmax;
		double dq, want;

		REQUIRE(qparams_qrange(all_types[t], 0, 0, &qmin, &qmax) == 0);
		dq = (double)(qmax - qmin);
		want = 2 * dq / (2 * dq + 1);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK(lo == 0);
		CHECK_NEAR(hi, want, 1e-4);
	}
	/* Exact zeros do not move the optimum (uint8). */
	st = stats(0, 1, bz, 2);
	{
		struct rangesel_opts o = ropts(RANGESEL_MSE, DT_UINT8, 0);

		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK_NEAR(hi, 510.0 / 511, 1e-4);
	}
	/*
	 * Symmetric int8 over uniform [-1,1): mse(T) = (1-T)^3/3 +
	 * T*(T/127)^2/12 (s = 2T/254); d/dT = 0 -> 1-T = T/254 ->
	 * T = 254/255 = 0.996078.
	 */
	{
		static const struct hist_bin s2[] = { { -1, 0, 500 },
		    { 0, 1, 500 } };
		struct rangesel_opts o = ropts(RANGESEL_MSE, DT_INT8, 1);

		st = stats(-1, 1, s2, 2);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK_NEAR(hi, 254.0 / 255, 1e-4);
		CHECK_NEAR(lo, -254.0 / 255, 1e-4);
	}
	/* int4 symmetric keeps -8..7 and zp 0: the grid reaches
	 * 7s = 7*2T/15 on the right. Only the optimum's neighbourhood is
	 * checked: mse at the chosen T is no worse than at T +- 0.01. */
	{
		static const struct hist_bin s2[] = { { -1, 0, 500 },
		    { 0, 1, 500 } };
		struct rangesel_opts o = ropts(RANGESEL_MSE, DT_INT4, 1);
		double m0, m1, m2;

		st = stats(-1, 1, s2, 2);
		CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
		CHECK_EQ_INT(rangesel_mse_error(&st, &o, lo, hi, &m0, &e), 0);
		CHECK_EQ_INT(rangesel_mse_error(&st, &o, lo - 0.01f,
		    hi + 0.01f, &m1, &e), 0);
		CHECK_EQ_INT(rangesel_mse_error(&st, &o, lo + 0.01f,
		    hi - 0.01f, &m2, &e), 0);
		CHECK(m0 <= m1 && m0 <= m2);
		CHECK(hi > 0.5 && hi < 1);
	}
}

static void
test_mse_asymmetric(void)
{
	/*
	 * uint8 over [-1,0) x100 and [0,3) x300 (density 100 per unit):
	 * an unclipped grid [-1,3] has s = 4/255; any clipping costs
	 * (cut)^3/3 per unit of density, far more than the step it saves
	 * (the two-sided analogue of the uniform case): the optimum stays
	 * within 1% of each end.
	 */
	static const struct hist_bin b[] = { { -1, 0, 100 }, { 0, 3, 300 } };
	struct rangesel_stats st = stats(-1, 3, b, 2);
	struct rangesel_opts o = ropts(RANGESEL_MSE, DT_UINT8, 0);
	struct err e = { "" };
	float lo, hi;

	CHECK_EQ_INT(rangesel_select(&st, &o, &lo, &hi, &e), 0);
	CHECK(lo <= -0.99f && lo >= -1);
	CHECK(hi >= 2.97f && hi <= 3);
}

/*
 * The mse search as rangesel.h states it, trying every grid: 512 then
 * 64 refinements each side (symmetric), else 128 x 128 (1024 for data
 * on one side) then 16 x 16 each side, the first least error winning.
 */
static double brute_best;
static float brute_a, brute_b;

static void
brute_try(const struct rangesel_stats *st, const struct rangesel_opts *o,
    double a, double b)
{
	struct err e;
	double m;

	if (rangesel_mse_error(st, o, (float)a, (float)b, &m, &e) == 0 &&
	    m < brute_best) {
		brute_best = m;
		brute_a = (float)a;
		brute_b = (float)b;
	}
}

static void
brute_mse(const struct rangesel_stats *st, const struct rangesel_opts *o,
    float *rmin, float *rmax)
{
	double amin = fmin(st->min, 0), amax = fmax(st->max, 0);

	brute_best = INFINITY;
	brute_a = (float)st->min;
	brute_b = (float)st->max;
	if (o->q.symmetric) {
		double A = fmax(-amin, amax), c;

		for (int k = 1; k <= 512; k++)
			brute_try(st, o, -A * k / 512, A * k / 512);
		c = brute_b;
		for (int k = -64; k <= 64; k++) {
			double t = c + A / 512 * k / 64;

			if (t > 0 && t <= A)
				brute_try(st, o, -t, t);
		}
	} else {
		int G = (amin == 0 || amax == 0) ? 1024 : 128, R = 16;
		int na = amin < 0 ? G : 0, nb = amax > 0 ? G : 0;
		double sa = -amin / G, sb = amax / G, ca, cb;

		for (int ia = 0; ia <= na; ia++)
			for (int ib = 0; ib <= nb; ib++)
				if (ia || ib)
					brute_try(st, o, amin * ia / G,
					    amax * ib / G);
		ca = brute_a;
		cb = brute_b;
		for (int ia = na ? -R : 0; ia <= (na ? R : 0); ia++)
			for (int ib = nb ? -R : 0; ib <= (nb ? R : 0); ib++) {
				double a = ca + sa * ia / R;
				double b = cb + sb * ib / R;

				if (a > 0 || a < amin || b < 0 || b > amax ||
				    (a == 0 && b == 0))
					continue;
				brute_try(st, o, a, b);
			}
	}
	*rmin = brute_a < st->min ? (float)st->min : brute_a > st->max ?
	    (float)st->max : brute_a;
	*rmax = brute_b < st->min ? (float)st->min : brute_b > st->max ?
	    (float)st->max : brute_b;
}

/* Uniform in (0, 1). */
static double
uniform(uint64_t *r)
{
	return ((double)(unit_rand64_r(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* n values of shape k (0 normal, 1 heavy tails, 2 one-sided, 3 shifted). */
static void
make_values(float *x, int n, int k, uint64_t *r)
{
	for (int i = 0; i < n; i++) {
		double u = uniform(r), v = uniform(r);
		double g = sqrt(-2 * log(u)) * cos(6.283185307179586 * v);

		if (k == 0)
			x[i] = (float)g;
		else if (k == 1)
			x[i] = (float)(g * g * g);
		else if (k == 2)
			x[i] = (float)(g > 0 ? g : 0);
		else
			x[i] = (float)(3 + g * 0.5 - (u < 0.01 ? 8 : 0));
	}
}

/* *st of x[0..n) with a histogram of mbits (*b: free it); 0 or -1. */
static int
stats_of(const float *x, int n, int mbits, struct rangesel_stats *st,
    struct hist_bin **b)
{
	struct hist *h = hist_new(mbits);
	double lo = INFINITY, hi = -INFINITY;
	size_t nb = 0;
	struct err e;
	int rc;

	*b = NULL;
	if (h == NULL)
		return -1;
	for (int i = 0; i < n; i++) {
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
	}
	rc = hist_add(h, x, (size_t)n) < 0 || hist_bins(h, b, &nb, &e) < 0 ?
	    -1 : 0;
	hist_free(h);
	*st = stats(lo, hi, *b, nb);
	return rc;
}

static void
test_mse_search_exact(void)
{
	static const int types[][2] = {
		{ DT_UINT8, 0 }, { DT_INT8, 1 }, { DT_UINT16, 0 },
		{ DT_UINT4, 0 },
	};
	enum { N = 20000 };
	static float x[N];
	uint64_t r = 42;

	for (int k = 0; k < 4; k++) {
		struct hist_bin *b;
		struct rangesel_stats st;
		struct err e;

		make_values(x, N, k, &r);
		REQUIRE(stats_of(x, N, 5, &st, &b) == 0);
		for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
			struct rangesel_opts o = ropts(RANGESEL_MSE,
			    types[t][0], types[t][1]);
			float a = 0, c = 0, ba = 1, bc = -1;

			CHECK_EQ_INT(rangesel_select(&st, &o, &a, &c, &e), 0);
			brute_mse(&st, &o, &ba, &bc);
			if (!CHECK(a == ba && c == bc))
				fprintf(stderr, "# shape %d type %d: [%.9g, "
				    "%.9g], every grid: [%.9g, %.9g]\n", k,
				    types[t][0], a, c, ba, bc);
		}
		free(b);
	}
}

/*
 * The search skips spans of grids by one bound (uint8 and wider,
 * asymmetric): against trying every grid, on random histograms (a mix
 * of normal parts: a spike at zero, tails, one side, tiny ranges) at
 * random resolutions, two types each (every type in turn), sometimes
 * with reduce_range, over tiny to large data ranges.
 */
static void
test_mse_search_random(void)
{
	static const int types[] = {
		DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_UINT4, DT_INT4,
	};
	enum { N = 4000, CASES = 12 };
	static float x[N];
	uint64_t r = 7;

	for (int c = 0; c < CASES; c++) {
		int mbits = 2 + (int)(unit_rand64_r(&r) % 5);
		struct hist_bin *b;
		struct rangesel_stats st;
		double scale = pow(10, (double)(c % 4) * 3 - 4);
		double m1 = uniform(&r) * 4 - 2, m2 = uniform(&r) * 6 - 3;
		double side = c % 3 == 1 ? 1 : c % 3 == 2 ? -1 : 0;
		struct err e;

		for (int i = 0; i < N; i++) {
			double u = uniform(&r), v = uniform(&r);
			double w = uniform(&r), y;
			double g = sqrt(-2 * log(u)) *
			    cos(6.283185307179586 * v);

			y = w < 0.1 ? 0 : w < 0.6 ? m1 + g :
			    w < 0.95 ? m2 + g * 0.3 : g * g * g * 4;
			if (side > 0)
				y = fabs(y);
			else if (side < 0)
				y = -fabs(y);
			x[i] = (float)(y * scale);
		}
		REQUIRE(stats_of(x, N, mbits, &st, &b) == 0);
		for (int k = 0; k < 2; k++) {
			int t = (2 * c + k) % 6;
			struct rangesel_opts o = ropts(RANGESEL_MSE, types[t],
			    0);
			float a = 0, d = 0, ba = 1, bd = -1;

			o.q.reduce_range = c % 4 == 3;
			CHECK_EQ_INT(rangesel_select(&st, &o, &a, &d, &e), 0);
			brute_mse(&st, &o, &ba, &bd);
			if (!CHECK(a == ba && d == bd))
				fprintf(stderr, "# case %d type %d: [%.9g, "
				    "%.9g], every grid: [%.9g, %.9g]\n", c,
				    types[t], a, d, ba, bd);
		}
		free(b);
	}
}

/*
 * A memo carries one tensor's tables from selection to selection: the
 * results in every type are those without it, and a memo given other
 * statistics (another range) makes its tables again.
 */
static void
test_mse_memo(void)
{
	static const int types[] = {
		DT_UINT8, DT_UINT16, DT_INT8, DT_UINT4, DT_INT16,
	};
	enum { N = 5000 };
	static float x[N];
	uint64_t r = 99;

	for (int k = 0; k < 4; k++) {
		struct rangesel_memo *memo = rangesel_memo_new();
		struct hist_bin *b;
		struct rangesel_stats all, st;
		struct err e;

		REQUIRE(memo != NULL);
		make_values(x, N, k, &r);
		REQUIRE(stats_of(x, N, 6, &all, &b) == 0);
		for (size_t t = 0; t < 2 * sizeof types / sizeof types[0];
		    t++) {
			struct rangesel_opts o = ropts(RANGESEL_MSE,
			    types[t % 5], t >= 5);
			float a, c, a0, c0;

			/* the last round: a narrower range, same bins */
			st = all;
			if (t == 9)
				st.max /= 2;
			CHECK_EQ_INT(rangesel_select(&st, &o, &a0, &c0, &e), 0);
			o.memo = memo;
			CHECK_EQ_INT(rangesel_select(&st, &o, &a, &c, &e), 0);
			CHECK(a == a0 && c == c0);
		}
		free(b);
		rangesel_memo_free(memo);
	}
	rangesel_memo_free(NULL);
}

UNIT_MAIN(test_names, test_minmax, test_percentile, test_entropy_small,
    test_entropy_types, test_entropy_offset, test_distribution, test_mse_error, test_mse_select,
    test_mse_asymmetric, test_mse_search_exact, test_mse_search_random,
    test_mse_memo)
