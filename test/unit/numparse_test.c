/*
 * numparse_test: the fast number parsers against the C library, their
 * oracle. Every text numparse_float takes must read to strtof()'s bits
 * (sign of zero included); texts it refuses must be ones it documents
 * (the caller's strtof then reads them). Random floats printed as the
 * stream prints them, random decimal texts of every length and
 * exponent, exact float midpoints (where a double rounding would go
 * wrong), and malformed texts. Needs nothing but libonnxq.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "unit.h"

static long taken, refused;

/* Same bits as strtof, when taken; 0 on a mismatch. */
static int
same_as_strtof(const char *s)
{
	float f = 12345, g;
	char *end;

	if (!numparse_float(s, &f)) {
		refused++;
		return 1;
	}
	taken++;
	g = strtof(s, &end);
	if (*end != '\0' || memcmp(&f, &g, sizeof f) != 0) {
		fprintf(stderr, "# '%s': %a, strtof %a\n", s, (double)f,
		    (double)g);
		return 0;
	}
	return 1;
}

static void
test_printed_floats(void)
{
	char buf[64];
	int bad = 0;

	for (int i = 0; i < 200000; i++) {
		uint32_t u = (uint32_t)unit_rand64();
		float f;

		memcpy(&f, &u, sizeof f);
		if (!isfinite(f))
			continue;
		/* the stream's forms: %.6g .. %.9g */
		snprintf(buf, sizeof buf, "%.*g", 6 + i % 4, (double)f);
		bad += !same_as_strtof(buf);
		/* histogram edges: short binary fractions */
		snprintf(buf, sizeof buf, "%.9g", ldexp((double)(u % 4096),
		    (int)(u >> 24) % 40 - 30));
		bad += !same_as_strtof(buf);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(taken > 300000);	/* the fast path is the usual one */
}

static void
test_random_texts(void)
{
	char buf[96];
	int bad = 0;

	for (int i = 0; i < 300000; i++) {
		uint64_t r = unit_rand64();
		int nd = 1 + (int)(r % 22), dot = (int)((r >> 8) % (nd + 2));
		int n = 0;

		if (r >> 63)
			buf[n++] = '-';
		for (int k = 0; k < nd; k++) {
			if (k == dot)
				buf[n++] = '.';
			buf[n++] = (char)('0' + unit_rand64() % 10);
		}
		if ((r >> 20) % 3 == 0)
			n += snprintf(buf + n, sizeof buf - (size_t)n, "e%d",
			    (int)((r >> 24) % 90) - 45);
		buf[n] = '\0';
		bad += !same_as_strtof(buf);
	}
	CHECK_EQ_INT(bad, 0);
}

/* A double exactly halfway between two floats: refused, or right. */
static void
test_midpoints(void)
{
	char buf[64];
	int bad = 0;

	for (int i = 0; i < 20000; i++) {
		uint32_t u = (uint32_t)unit_rand64() & 0x7effffff;
		float f, g;
		double mid;

		memcpy(&f, &u, sizeof f);
		g = nextafterf(f, INFINITY);
		if (!isfinite(g) || f < FLT_MIN)
			continue;
		mid = ((double)f + (double)g) / 2;
		snprintf(buf, sizeof buf, "%.17g", mid);
		bad += !same_as_strtof(buf);
		/* just beside it, as a decimal text */
		snprintf(buf, sizeof buf, "%.17g", nextafter(mid, 0));
		bad += !same_as_strtof(buf);
	}
	/* 2^24 + 1 lies halfway between two floats: even wins */
	bad += !same_as_strtof("16777217");
	bad += !same_as_strtof("16777219");
	CHECK_EQ_INT(bad, 0);
}

static void
test_forms(void)
{
	static const char *const refuse[] = {
		"", "-", ".", "-.", "e5", "1e", "1e+", "1.5x", " 1", "+1",
		"inf", "nan", "0x1p3", "1e12345", "1e-50", "1e40",
		"12345678901234567890", "1.17549e-39", "3.4028234e38",
		"1.17549435e-38",
	};
	static const char *const take[] = {
		"0", "-0", "0.0", "-0.000", "1", "-2.5", ".5", "5.", "1e5",
		"1E-5", "-3.25e+2", "0.98828125", "-17.125", "3.4e20",
		"1.5e-21",
	};
	float f;
	uint64_t x;

	for (size_t i = 0; i < sizeof refuse / sizeof refuse[0]; i++)
		if (!CHECK(numparse_float(refuse[i], &f) == 0))
			fprintf(stderr, "# took '%s'\n", refuse[i]);
	for (size_t i = 0; i < sizeof take / sizeof take[0]; i++) {
		if (!CHECK(numparse_float(take[i], &f) == 1))
			fprintf(stderr, "# refused '%s'\n", take[i]);
		CHECK(same_as_strtof(take[i]));
	}
	CHECK(numparse_float("-0", &f) == 1 && signbit(f));
	CHECK(numparse_uint("0", &x) == 1 && x == 0);
	CHECK(numparse_uint("9999999999999999999", &x) == 1 &&
	    x == 9999999999999999999ull);
	CHECK(numparse_uint("18446744073709551615", &x) == 0);
	CHECK(numparse_uint("", &x) == 0);
	CHECK(numparse_uint("12a", &x) == 0);
	CHECK(numparse_uint("-1", &x) == 0);
	CHECK(numparse_uint("+1", &x) == 0);
	for (int i = 0; i < 10000; i++) {
		uint64_t v = unit_rand64() >> (unit_rand64() % 64);
		char buf[32];

		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
		if (strlen(buf) <= 19)
			CHECK(numparse_uint(buf, &x) == 1 && x == v);
	}
}

UNIT_MAIN(test_printed_floats, test_random_texts, test_midpoints,
    test_forms)
