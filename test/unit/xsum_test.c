/*
 * xsum_test: the exact sum of doubles. Checks exactness against an
 * independent oracle (Shewchuk's partials, as in Python's math.fsum),
 * order independence, cancellation across the whole double range,
 * rounding ties, special values, and the canonical text form: it reads
 * back exactly, equal sums print equal, and bad text is refused.
 * Needs nothing but libonnxq.
 */
#include <float.h>
#include <stdint.h>

#include "unit.h"
#include "xsum.h"

/* A random double with exponent in [-emax, emax], random sign. */
static double
rand_double(int emax)
{
	double m = (double)(unit_rand64() >> 11) / 9007199254740992.0;
	int ex = (int)(unit_rand64() % (uint64_t)(2 * emax + 1)) - emax;

	return (unit_rand64() & 1 ? -1 : 1) * ldexp(m, ex);
}

/*
 * The correctly rounded sum by Shewchuk's nonoverlapping partials and
 * the half-even correction of Python's math.fsum; finite inputs whose
 * partial sums do not overflow.
 */
static double
fsum(const double *x, size_t n)
{
	double p[2200], hi = 0, lo = 0, yr;
	size_t np = 0;

	for (size_t i = 0; i < n; i++) {
		double v = x[i];
		size_t k = 0;

		for (size_t j = 0; j < np; j++) {
			double y = p[j], t;

			if (fabs(v) < fabs(y)) {
				t = v;
				v = y;
				y = t;
			}
			hi = v + y;
			lo = y - (hi - v);
			if (lo != 0)
				p[k++] = lo;
			v = hi;
		}
		np = k;
		p[np++] = v;
	}
	if (np == 0)
		return 0;
	hi = p[--np];
	while (np > 0) {
		double v = hi, y = p[--np];

		hi = v + y;
		yr = hi - v;
		lo = y - yr;
		if (lo != 0)
			break;
	}
	if (np > 0 && ((lo < 0 && p[np - 1] < 0) || (lo > 0 &&
	    p[np - 1] > 0))) {
		double y = lo * 2, v = hi + y;

		yr = v - hi;
		if (y == yr)
			hi = v;
	}
	return hi;
}

static void
sum_of(struct xsum *x, const double *v, size_t n)
{
	xsum_init(x);
	for (size_t i = 0; i < n; i++)
		xsum_add(x, v[i]);
}

static int
same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static void
test_matches_fsum(void)
{
	static double v[1000];
	struct xsum x;
	int bad = 0;

	for (int trial = 0; trial < 2000; trial++) {
		size_t n = 1 + unit_rand64() % 1000;
		int emax = trial % 3 == 0 ? 30 : trial % 3 == 1 ? 300 : 1000;

		for (size_t i = 0; i < n; i++)
			v[i] = rand_double(emax);
		sum_of(&x, v, n);
		if (!same_bits(xsum_round(&x), fsum(v, n)) && bad++ < 5)
			CHECK(same_bits(xsum_round(&x), fsum(v, n)));
	}
	CHECK_EQ_INT(bad, 0);
}

static void
test_integers_exact(void)
{
	struct xsum x;
	int64_t want = 0;

	xsum_init(&x);
	for (int i = 0; i < 100000; i++) {
		int64_t k = (int64_t)(unit_rand64() % (1ULL << 40)) -
		    (1LL << 39);

		want += k;
		xsum_add(&x, (double)k);
	}
	CHECK(xsum_round(&x) == (double)want);
}

static void
test_order_independent(void)
{
	static double v[5000];
	char a[XSUM_TEXT_MAX], b[XSUM_TEXT_MAX];
	struct xsum x, y;

	for (size_t i = 0; i < 5000; i++)
		v[i] = rand_double(1000);
	sum_of(&x, v, 5000);
	xsum_format(&x, a);
	for (size_t i = 4999; i > 0; i--) {
		size_t j = unit_rand64() % (i + 1);
		double t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	sum_of(&y, v, 5000);
	CHECK_EQ_STR(xsum_format(&y, b), a);
	CHECK_EQ_INT(xsum_cmp(&x, &y), 0);
	/* and split in shards, merged in another order */
	{
		struct xsum s[4], m;

		for (int k = 0; k < 4; k++)
			sum_of(&s[k], v + k * 1250, 1250);
		xsum_init(&m);
		for (int k = 3; k >= 0; k--)
			xsum_add_xsum(&m, &s[k]);
		CHECK_EQ_STR(xsum_format(&m, b), a);
	}
}

static void
test_cancellation(void)
{
	struct xsum x;
	char buf[XSUM_TEXT_MAX];

	xsum_init(&x);
	xsum_add(&x, 1e300);
	xsum_add(&x, 1e-300);
	xsum_add(&x, -1e300);
	CHECK(xsum_round(&x) == 1e-300);
	CHECK_EQ_STR(xsum_format(&x, buf), "1e-300");

	xsum_init(&x);
	xsum_add(&x, 1);
	xsum_add(&x, 0x1p-1074);
	xsum_add(&x, -1);
	CHECK(xsum_round(&x) == 0x1p-1074);

	xsum_init(&x);
	xsum_add(&x, DBL_MAX);
	xsum_add(&x, DBL_MAX);
	CHECK(isinf(xsum_round(&x)));
	CHECK_EQ_STR(xsum_format(&x, buf), "inf");
	xsum_add(&x, -DBL_MAX);
	xsum_add(&x, -DBL_MAX);
	CHECK(xsum_is_zero(&x));
	CHECK_EQ_STR(xsum_format(&x, buf), "0");

	/* x + x + ... (2^60 times DBL_MAX) still cancels exactly */
	{
		struct xsum a, b;

		xsum_init(&a);
		xsum_init(&b);
		xsum_add(&a, DBL_MAX);
		xsum_add(&b, -DBL_MAX);
		for (int i = 0; i < 60; i++) {
			struct xsum t = a;

			xsum_add_xsum(&a, &t);
			t = b;
			xsum_add_xsum(&b, &t);
		}
		CHECK(xsum_round(&a) == INFINITY);
		CHECK(xsum_round(&b) == -INFINITY);
		xsum_add(&a, 3);
		xsum_add_xsum(&a, &b);
		CHECK(xsum_round(&a) == 3);
	}
}

static void
test_rounding_ties(void)
{
	struct xsum x;

	/* 1 + 2^-53 is halfway: ties to even gives 1 */
	xsum_init(&x);
	xsum_add(&x, 1);
	xsum_add(&x, 0x1p-53);
	CHECK(xsum_round(&x) == 1);
	/* a bit more than halfway rounds up */
	xsum_add(&x, 0x1p-1074);
	CHECK(xsum_round(&x) == 1 + 0x1p-52);
	/* (1 + 2^-52) + 2^-53 is halfway to an even: rounds up */
	xsum_init(&x);
	xsum_add(&x, 1 + 0x1p-52);
	xsum_add(&x, 0x1p-53);
	CHECK(xsum_round(&x) == 1 + 0x1p-51);
	/* negative mirror */
	xsum_init(&x);
	xsum_add(&x, -1);
	xsum_add(&x, -0x1p-53);
	CHECK(xsum_round(&x) == -1);
	/* subnormal results */
	xsum_init(&x);
	xsum_add(&x, 0x1p-1074);
	xsum_add(&x, 0x1p-1074);
	xsum_add(&x, 0x1p-1060);
	CHECK(xsum_round(&x) == 0x1p-1060 + 0x1p-1073);
	/* rounding up into the next binade */
	xsum_init(&x);
	xsum_add(&x, 2 - 0x1p-52);
	xsum_add(&x, 0x1p-53);
	xsum_add(&x, 0x1p-100);
	CHECK(xsum_round(&x) == 2);
}

static void
test_specials(void)
{
	struct xsum x;
	char buf[XSUM_TEXT_MAX];

	xsum_init(&x);
	CHECK_EQ_STR(xsum_format(&x, buf), "0");
	CHECK(xsum_is_zero(&x));
	xsum_add(&x, -0.0);
	CHECK_EQ_STR(xsum_format(&x, buf), "0");
	xsum_add(&x, INFINITY);
	CHECK_EQ_STR(xsum_format(&x, buf), "inf");
	CHECK(xsum_round(&x) == INFINITY);
	xsum_add(&x, 5);
	CHECK_EQ_STR(xsum_format(&x, buf), "inf");
	xsum_add(&x, -INFINITY);
	CHECK_EQ_STR(xsum_format(&x, buf), "nan");
	xsum_init(&x);
	xsum_add(&x, -INFINITY);
	CHECK_EQ_STR(xsum_format(&x, buf), "-inf");
	xsum_init(&x);
	xsum_add(&x, NAN);
	CHECK(isnan(xsum_round(&x)));
	CHECK_EQ_STR(xsum_format(&x, buf), "nan");
	CHECK_EQ_INT(xsum_parse(&x, "-inf", NULL), 0);
	CHECK(xsum_round(&x) == -INFINITY);
	CHECK_EQ_INT(xsum_parse(&x, "nan", NULL), 0);
	CHECK(isnan(xsum_round(&x)));
}

static void
test_text_round_trip(void)
{
	static double v[200];
	char a[XSUM_TEXT_MAX], b[XSUM_TEXT_MAX];
	struct xsum x, y;
	struct err e;
	int maxparts = 0;

	for (int trial = 0; trial < 3000; trial++) {
		size_t n = 1 + unit_rand64() % 200;
		int parts = 1;

		for (size_t i = 0; i < n; i++)
			v[i] = rand_double(trial % 2 ? 1000 : 60);
		sum_of(&x, v, n);
		xsum_format(&x, a);
		for (const char *p = a; *p; p++)
			parts += *p == ':';
		maxparts = parts > maxparts ? parts : maxparts;
		if (!CHECK_EQ_INT(xsum_parse(&y, a, &e), 0))
			break;
		if (!CHECK_EQ_INT(xsum_cmp(&x, &y), 0))
			break;
		if (!CHECK_EQ_STR(xsum_format(&y, b), a))
			break;
	}
	/* wide exponent ranges need many components */
	CHECK(maxparts > 3);
	/* the longest expansion: every 53rd bit set over the whole range */
	xsum_init(&x);
	for (int ex = 1023; ex >= -1074; ex -= 54)
		xsum_add(&x, ldexp(1, ex));
	xsum_format(&x, a);
	CHECK(strlen(a) < XSUM_TEXT_MAX);
	CHECK_EQ_INT(xsum_parse(&y, a, &e), 0);
	CHECK_EQ_INT(xsum_cmp(&x, &y), 0);
}

static void
test_canonical(void)
{
	struct xsum x, y;
	char a[XSUM_TEXT_MAX], b[XSUM_TEXT_MAX];

	/* different expansions of one value print the same */
	REQUIRE(xsum_parse(&x, "1:1e-20", NULL) == 0);
	REQUIRE(xsum_parse(&y, "0.5:1e-20:0.25:0.25", NULL) == 0);
	CHECK_EQ_STR(xsum_format(&x, a), xsum_format(&y, b));
	CHECK_EQ_STR(a, "1:1e-20");
	REQUIRE(xsum_parse(&x, "0.1:0.2", NULL) == 0);
	/* 0.1 + 0.2 rounds to 0.30000000000000004, and the rest is exact */
	xsum_format(&x, a);
	CHECK(strncmp(a, "0.30000000000000004:", 20) == 0);
	REQUIRE(xsum_parse(&y, a, NULL) == 0);
	CHECK_EQ_INT(xsum_cmp(&x, &y), 0);
	REQUIRE(xsum_parse(&x, "3:-3", NULL) == 0);
	CHECK_EQ_STR(xsum_format(&x, a), "0");
	CHECK(xsum_cmp(&x, &y) < 0);
	CHECK(xsum_cmp(&y, &x) > 0);
}

static void
test_parse_errors(void)
{
	static const char *bad[] = {
		"", ":", "1:", ":1", "1::2", "abc", "1e999", "-1e999", " 1",
		"1 ", "+1", "1,2", "1:x", "0x", "1e", "--1",
	};
	struct xsum x;
	struct err e;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		e.msg[0] = '\0';
		if (!CHECK_EQ_INT(xsum_parse(&x, bad[i], &e), -1))
			fprintf(stderr, "accepted '%s'\n", bad[i]);
		CHECK(strstr(e.msg, "exact sum") != NULL);
	}
	CHECK_EQ_INT(xsum_parse(&x, "1e-400", &e), 0);	/* underflows to 0 */
	CHECK_EQ_INT(xsum_parse(&x, "0x1p-1074:-0", &e), 0);
	CHECK(xsum_round(&x) == 0x1p-1074);
}

UNIT_MAIN(test_matches_fsum, test_integers_exact, test_order_independent,
    test_cancellation, test_rounding_ties, test_specials,
    test_text_round_trip, test_canonical, test_parse_errors)
