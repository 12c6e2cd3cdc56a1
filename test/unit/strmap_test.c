/*
 * strmap_test: the string -> int map: put, get, add, replace, growth, keys
 * of every length up to 40 (each in a buffer of exactly its size, so
 * ASan sees a hash that reads past the NUL), and the spread of the
 * hash on names as graphs spell them (t1, t2, ..., p2o.Add.7_quantized_dq):
 * the mean distance of a key from its home slot stays near linear
 * probing's ideal at 50% load. Needs nothing but libonnxq.
 */
#include "strmap.h"
#include "unit.h"

static void
test_put_get(void)
{
	struct strmap *m = strmap_new();
	int v = -1;

	REQUIRE(m != NULL);
	CHECK_EQ_INT(strmap_get(m, "a", &v), 0);
	CHECK_EQ_INT(strmap_get(m, "", NULL), 0);
	REQUIRE(strmap_put(m, "a", 1) == 0);
	REQUIRE(strmap_put(m, "", 2) == 0);
	REQUIRE(strmap_put(m, "ab", 3) == 0);
	CHECK(strmap_get(m, "a", &v) && v == 1);
	CHECK(strmap_get(m, "", &v) && v == 2);
	CHECK(strmap_get(m, "ab", &v) && v == 3);
	CHECK_EQ_INT(strmap_get(m, "b", NULL), 0);
	REQUIRE(strmap_put(m, "a", 7) == 0);
	CHECK(strmap_get(m, "a", &v) && v == 7);
	/* add keeps a present key's value and tells it */
	v = -1;
	CHECK_EQ_INT(strmap_add(m, "a", 9, &v), 1);
	CHECK_EQ_INT(v, 7);
	CHECK(strmap_get(m, "a", &v) && v == 7);
	CHECK_EQ_INT(strmap_add(m, "abc", 4, NULL), 0);
	CHECK(strmap_get(m, "abc", &v) && v == 4);
	CHECK_EQ_INT(strmap_add(m, "abc", 5, NULL), 1);
	CHECK(strmap_get(m, "abc", &v) && v == 4);
	strmap_free(m);
	strmap_free(NULL);
}

/* Keys of lengths 0-40 that differ in one byte, each malloc'd to size. */
static void
test_lengths(void)
{
	struct strmap *m = strmap_new();
	char *keys[41 * 41];
	int n = 0, v, ok = 1;

	REQUIRE(m != NULL);
	for (int len = 0; len <= 40; len++)
		for (int at = -1; at < len; at++) {
			char *k = malloc((size_t)len + 1);

			REQUIRE(k != NULL);
			memset(k, 'x', (size_t)len);
			k[len] = '\0';
			if (at >= 0)
				k[at] = 'y';
			keys[n] = k;
			REQUIRE(strmap_put(m, k, n) == 0);
			n++;
		}
	for (int i = 0; i < n; i++) {
		ok &= strmap_get(m, keys[i], &v) && v == i;
		free(keys[i]);
	}
	CHECK(ok);
	strmap_free(m);
}

/*
 * Mean displacement of n names printed with fmt from i = 0..n-1 (after
 * reserving room for them, or growing as they come); checks every one
 * is found with its value.
 */
static double
mean_displacement(const char *fmt, int n, int reserve)
{
	struct strmap *m = strmap_new();
	size_t count, cap, sum;
	char name[64];
	int v, ok = 1;

	if (!m || (reserve && strmap_reserve(m, (size_t)n) < 0))
		abort();
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, fmt, i);
		if (strmap_put(m, name, i) < 0)
			abort();
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, fmt, i);
		ok &= strmap_get(m, name, &v) && v == i;
	}
	CHECK(ok);
	sum = strmap_displacement(m, &count, &cap);
	CHECK_EQ_INT((int)count, n);
	CHECK(count * 2 <= cap);
	strmap_free(m);
	return (double)sum / n;
}

/*
 * Linear probing at load a has a mean displacement of about
 * (1 / (1 - a) - 1) / 2: 0.5 at a = 0.5, the most the map allows. A hash
 * whose low bits ignore part of the key makes runs of hundreds.
 */
static void
test_spread(void)
{
	static const char *fmts[] = {
		"t%d", "%d", "p2o.Add.%d_quantized_dq",
		"conv%d.weight_quantized", "layer.%06d.bias",
		"p2o.Conv.%d_output_0_DequantizeLinear_Output",
	};
	static const int sizes[] = { 100, 1000, 50000 };

	for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++)
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			for (int r = 0; r < 2; r++) {
				double d = mean_displacement(fmts[f],
				    sizes[s], r);

				if (d > 0.8)
					printf("# %s x %d%s: mean "
					    "displacement %.2f\n", fmts[f],
					    sizes[s], r ? " reserved" : "", d);
				CHECK(d <= 0.8);
			}
}

UNIT_MAIN(test_put_get, test_lengths, test_spread)
