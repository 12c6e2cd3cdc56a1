/*
 * unit: a minimal unit-test harness that prints TAP. A test file is
 * test/unit/NAME.c; make builds it into BUILD/test/NAME linked with
 * libonnxq.a, and make check runs it from the top of the source tree.
 *
 *	#include "unit.h"
 *
 *	static void
 *	test_parse_empty(void)
 *	{
 *		REQUIRE(p != NULL);		(stops this test if false)
 *		CHECK(x > 0);
 *		CHECK_EQ_INT(n, 3);
 *		CHECK_EQ_STR(e.msg, "empty input");
 *		CHECK_NEAR(scale, 0.5, 1e-6);
 *	}
 *
 *	UNIT_MAIN(test_parse_empty, test_other)
 *
 * Checks compare what the code got (first) with what is wanted (second),
 * keep going after a failure and evaluate each argument once; each is an
 * expression true when the check passed. CHECK_NEAR takes two NaNs as equal.
 * The program prints the plan "1..N", then per test "ok N - name" or
 * "not ok N - name # file:line: detail" followed by "# file:line: detail"
 * for its further failures, and exits 1 if any test failed. Test names
 * given as arguments run only those tests.
 */
#ifndef ONNXQ_UNIT_H
#define ONNXQ_UNIT_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_FN static __attribute__((unused))

#define CHECK(cond) \
	unit_check_((cond) != 0, __FILE__, __LINE__, "%s is false", #cond)
#define REQUIRE(cond) \
	do { if (!CHECK(cond)) return; } while (0)
#define CHECK_EQ_INT(got, want) \
	unit_eq_int_((long long)(got), (long long)(want), #got, __FILE__, __LINE__)
#define CHECK_EQ_STR(got, want) \
	unit_eq_str_((got), (want), #got, __FILE__, __LINE__)
#define CHECK_NEAR(got, want, tol) \
	unit_near_((got), (want), (tol), #got, __FILE__, __LINE__)

#define UNIT_MAIN(...)							\
	int								\
	main(int argc, char **argv)					\
	{								\
		static void (*const unit_fns[])(void) = { __VA_ARGS__ };\
									\
		return unit_main_(unit_fns,				\
		    sizeof unit_fns / sizeof unit_fns[0],		\
		    #__VA_ARGS__, argc, argv);				\
	}

/* xorshift64*: the next of a reproducible sequence of test values. */
UNIT_FN uint64_t
unit_rand64_r(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

/* The one test running: its failures, one "file:line: detail" per line. */
static struct {
	char	*log;
	size_t	 loglen;
	FILE	*logfp;
	int	 failed;
} unit_cur_;

/* Count a failure and start its log line; the caller ends it with '\n'. */
UNIT_FN FILE *
unit_fail_(const char *file, int line)
{
	unit_cur_.failed++;
	fprintf(unit_cur_.logfp, "%s:%d: ", file, line);
	return unit_cur_.logfp;
}

UNIT_FN int
unit_check_(int ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return 1;
	unit_fail_(file, line);
	va_start(ap, fmt);
	vfprintf(unit_cur_.logfp, fmt, ap);
	va_end(ap);
	fputc('\n', unit_cur_.logfp);
	return 0;
}

UNIT_FN int
unit_eq_int_(long long got, long long want, const char *expr,
    const char *file, int line)
{
	return unit_check_(got == want, file, line, "%s: got %lld, want %lld",
	    expr, got, want);
}

/* Write s as a C string literal so a detail stays on one TAP line. */
UNIT_FN void
unit_put_quoted_(FILE *fp, const char *s)
{
	if (s == NULL) {
		fputs("NULL", fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\x%02x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

UNIT_FN int
unit_eq_str_(const char *got, const char *want, const char *expr,
    const char *file, int line)
{
	FILE *fp;

	if (got == want || (got && want && strcmp(got, want) == 0))
		return 1;
	fp = unit_fail_(file, line);
	fprintf(fp, "%s: got ", expr);
	unit_put_quoted_(fp, got);
	fputs(", want ", fp);
	unit_put_quoted_(fp, want);
	fputc('\n', fp);
	return 0;
}

/* d as an integer if it is one, else the shortest %g that reads back. */
UNIT_FN const char *
unit_fmt_double_(char *buf, size_t size, double d)
{
	int prec;

	if (d == floor(d) && fabs(d) < 1e15) {
		snprintf(buf, size, "%.0f", d);
		return buf;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return buf;
	}
	snprintf(buf, size, "%.17g", d);
	return buf;
}

UNIT_FN int
unit_near_(double got, double want, double tol, const char *expr,
    const char *file, int line)
{
	char g[32], w[32], t[32];

	if (got == want || fabs(got - want) <= tol ||
	    (isnan(got) && isnan(want)))
		return 1;
	return unit_check_(0, file, line, "%s: got %s, want %s (tolerance %s)",
	    expr, unit_fmt_double_(g, sizeof g, got),
	    unit_fmt_double_(w, sizeof w, want),
	    unit_fmt_double_(t, sizeof t, tol));
}

/* Name i of the stringified list "test_a, test_b,\n test_c" into buf. */
UNIT_FN const char *
unit_name_(const char *list, size_t i, char *buf, size_t size)
{
	const char *p = list, *end;
	size_t n;

	for (; i > 0; i--)
		p = strchr(p, ',') + 1;
	p += strspn(p, " \t\n");
	end = p + strcspn(p, ", \t\n");
	n = (size_t)(end - p) < size - 1 ? (size_t)(end - p) : size - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

UNIT_FN int
unit_selected_(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

UNIT_FN int
unit_main_(void (*const *fns)(void), size_t nfns, const char *names,
    int argc, char **argv)
{
	char name[256];
	size_t i, nrun = 0, nfail = 0;
	int a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (a = 1; a < argc; a++) {
		for (i = 0; i < nfns; i++)
			if (strcmp(unit_name_(names, i, name, sizeof name),
			    argv[a]) == 0)
				break;
		if (i == nfns) {
			fprintf(stderr, "%s: no test named %s\n", argv[0],
			    argv[a]);
			return 2;
		}
	}
	for (i = 0; i < nfns; i++)
		nrun += unit_selected_(unit_name_(names, i, name, sizeof name),
		    argc, argv);
	printf("1..%zu\n", nrun);

	nrun = 0;
	for (i = 0; i < nfns; i++) {
		char *p, *nl;

		if (!unit_selected_(unit_name_(names, i, name, sizeof name),
		    argc, argv))
			continue;
		nrun++;
		unit_cur_.failed = 0;
		unit_cur_.logfp = open_memstream(&unit_cur_.log,
		    &unit_cur_.loglen);
		if (unit_cur_.logfp == NULL) {
			perror("open_memstream");
			abort();
		}
		fns[i]();
		fclose(unit_cur_.logfp);
		if (unit_cur_.failed == 0) {
			printf("ok %zu - %s\n", nrun, name);
		} else {
			nfail++;
			nl = strchr(unit_cur_.log, '\n');
			*nl = '\0';
			printf("not ok %zu - %s # %s\n", nrun, name,
			    unit_cur_.log);
			for (p = nl + 1; *p; p = nl + 1) {
				nl = strchr(p, '\n');
				*nl = '\0';
				printf("# %s\n", p);
			}
		}
		free(unit_cur_.log);
		unit_cur_.log = NULL;
	}
	fflush(stdout);
	return nfail > 0;
}

/*
 * unit_rand64: xorshift64*, deterministic so that a failure reproduces.
 * A test that wants its own sequence defines UNIT_SEED before including
 * this header.
 */
#ifndef UNIT_SEED
#define UNIT_SEED 0x9e3779b97f4a7c15ULL
#endif
static uint64_t unit_rng_ = UNIT_SEED;

UNIT_FN uint64_t
unit_rand64(void)
{
	return unit_rand64_r(&unit_rng_);
}

#endif
