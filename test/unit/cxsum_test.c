/*
 * cxsum_test: the small exact sum against struct xsum, its oracle. Every
 * mix of additions (doubles, xsums, other cxsums) must give exactly the
 * xsum's value and text, whether the value stayed inline or moved to the
 * heap form; special values and values past the double range included.
 * Needs nothing but libonnxq.
 */
#include <float.h>
#include <stdint.h>

#include "cxsum.h"
#include "unit.h"

static double
rand_double(int emax)
{
	double m = (double)(unit_rand64() >> 11) / 9007199254740992.0;
	int ex = (int)(unit_rand64() % (uint64_t)(2 * emax + 1)) - emax;

	return (unit_rand64() & 1 ? -1 : 1) * ldexp(m, ex);
}

/* Same exact value and same canonical text. */
static int
same(const struct cxsum *c, const struct xsum *x)
{
	char a[XSUM_TEXT_MAX], b[XSUM_TEXT_MAX];
	struct xsum t;

	cxsum_get(c, &t);
	return xsum_cmp(&t, x) == 0 &&
	    strcmp(xsum_format(&t, a), xsum_format(x, b)) == 0 &&
	    (cxsum_round(c) == xsum_round(x) ||
	    (isnan(cxsum_round(c)) && isnan(xsum_round(x))));
}

static void
test_one_double_stays_inline(void)
{
	struct cxsum c;
	struct xsum x;

	cxsum_init(&c);
	xsum_init(&x);
	REQUIRE(cxsum_add(&c, 0.1) == 0);
	xsum_add(&x, 0.1);
	CHECK(c.big == NULL && c.n == 1);
	CHECK(same(&c, &x));
	REQUIRE(cxsum_add(&c, -0.1) == 0);
	CHECK(c.big == NULL && c.n == 0);
	CHECK(cxsum_round(&c) == 0);
	cxsum_release(&c);
}

static void
test_matches_xsum(void)
{
	for (int round = 0; round < 400; round++) {
		int emax = round % 4 == 0 ? 1000 : round % 4 == 1 ? 60 : 8;
		int n = 1 + (int)(unit_rand64() % 40);
		struct cxsum c, d;
		struct xsum x, part;

		cxsum_init(&c);
		cxsum_init(&d);
		xsum_init(&x);
		for (int i = 0; i < n; i++) {
			double v = rand_double(emax);

			xsum_add(&x, v);
			switch (unit_rand64() % 3) {
			case 0:
				REQUIRE(cxsum_add(&c, v) == 0);
				break;
			case 1:
				xsum_init(&part);
				xsum_add(&part, v);
				xsum_add(&part, v / 3);
				xsum_add(&x, v / 3);
				REQUIRE(cxsum_add_xsum(&c, &part) == 0);
				break;
			default:
				REQUIRE(cxsum_add(&d, v) == 0);
				break;
			}
		}
		REQUIRE(cxsum_add_cxsum(&c, &d) == 0);
		if (!CHECK(same(&c, &x)))
			fprintf(stderr, "round %d (emax %d, n %d)\n", round,
			    emax, n);
		cxsum_release(&c);
		cxsum_release(&d);
	}
}

static void
test_set_and_specials(void)
{
	struct cxsum c;
	struct xsum x;

	cxsum_init(&c);
	REQUIRE(xsum_parse(&x, "1e300:1e200:1e100:1:1e-100:1e-200", NULL) ==
	    0);
	REQUIRE(cxsum_set_xsum(&c, &x) == 0);
	CHECK(c.big != NULL);	/* six components do not fit inline */
	CHECK(same(&c, &x));
	REQUIRE(xsum_parse(&x, "2.5:1e-30", NULL) == 0);
	REQUIRE(cxsum_set_xsum(&c, &x) == 0);
	CHECK(c.big == NULL && same(&c, &x));
	/* past the double range, exactly, then back */
	cxsum_release(&c);
	xsum_init(&x);
	for (int i = 0; i < 3; i++) {
		REQUIRE(cxsum_add(&c, DBL_MAX) == 0);
		xsum_add(&x, DBL_MAX);
	}
	CHECK(same(&c, &x) && isinf(cxsum_round(&c)));
	for (int i = 0; i < 3; i++) {
		REQUIRE(cxsum_add(&c, -DBL_MAX) == 0);
		xsum_add(&x, -DBL_MAX);
	}
	CHECK(same(&c, &x) && cxsum_round(&c) == 0);
	REQUIRE(cxsum_add(&c, INFINITY) == 0);
	xsum_add(&x, INFINITY);
	CHECK(same(&c, &x) && cxsum_round(&c) == INFINITY);
	REQUIRE(cxsum_add(&c, -INFINITY) == 0);
	xsum_add(&x, -INFINITY);
	CHECK(same(&c, &x) && isnan(cxsum_round(&c)));
	cxsum_release(&c);
}

UNIT_MAIN(test_one_double_stays_inline, test_matches_xsum,
    test_set_and_specials)
