/*
 * vexp_test: lib/vexp.c against the C library's expf, bit for bit: every
 * 61st float bit pattern (all signs, exponents, NaN, Inf, subnormals),
 * the range softmax feeds it ([-104, 0], every 7th pattern), and the
 * subtraction done in float first; rows of every length up to a few
 * vectors, so the vector loop's tail is covered.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "vexp.h"

#define ROW 4096

/* Patterns lo, lo + step, ... below hi through vexp_row, minus sub. */
static int64_t
sweep(uint64_t lo, uint64_t hi, uint64_t step, float sub)
{
	float x[ROW], y[ROW];
	int64_t bad = 0;
	uint64_t u = lo;

	while (u < hi) {
		int n = 0;

		for (; n < ROW && u < hi; n++, u += step) {
			uint32_t b = (uint32_t)u;

			memcpy(&x[n], &b, sizeof b);
		}
		vexp_row(y, x, sub, n);
		for (int i = 0; i < n; i++) {
			float want = expf(x[i] - sub);

			if (memcmp(&want, &y[i], sizeof want) != 0 &&
			    !(isnan(want) && isnan(y[i])) && bad++ < 5)
				fprintf(stderr, "expf(%a - %a): %a, want %a\n",
				    x[i], sub, y[i], want);
		}
	}
	return bad;
}

static void
test_all_patterns(void)
{
	CHECK_EQ_INT(sweep(0, 1ULL << 32, 61, 0), 0);
}

static void
test_softmax_range(void)
{
	float lo = -104.0f, m = 3.25f;
	uint32_t ulo;

	memcpy(&ulo, &lo, sizeof ulo);
	/* negative floats: bits from -0 (0x80000000) up to -104 */
	CHECK_EQ_INT(sweep(0x80000000u, ulo, 7, 0), 0);
	CHECK_EQ_INT(sweep(0x80000000u, ulo, 997, m), 0);
}

static void
test_lengths(void)
{
	float x[70], y[70];

	for (int n = 0; n <= 70; n++) {
		for (int i = 0; i < n; i++)
			x[i] = (float)i * -0.37f + (i % 3 ? 90.0f : 0);
		vexp_row(y, x, 1.5f, n);
		for (int i = 0; i < n; i++) {
			float want = expf(x[i] - 1.5f);

			CHECK(memcmp(&want, &y[i], sizeof want) == 0);
		}
	}
}

UNIT_MAIN(test_all_patterns, test_softmax_range, test_lengths)
