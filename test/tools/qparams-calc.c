/*
 * qparams-calc: a test driver for lib/qparams.c. Reads lines from stdin
 * and answers each with one line on stdout, so a script can compare
 * thousands of cases with a reference implementation:
 *
 *	range TYPE SYM RR POW2 MRR RMIN RMAX  ->  SCALE ZP
 *	bias INSCALE WSCALE BABSMAX BETA      ->  WSCALE' BSCALE
 *
 * Floats may be written in C99 hex ("0x1.8p-3") for exactness; SCALE and
 * the others come back as %a. An error answers "error: MESSAGE".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qparams.h"

static int
range(char *args)
{
	char type[32];
	struct qparams_opts o = { 0 };
	struct err e = { "" };
	float lo, hi, s;
	int32_t zp;

	if (sscanf(args, "%31s %d %d %d %f %f %f", type, &o.symmetric,
	    &o.reduce_range, &o.pow2, &o.min_real_range, &lo, &hi) != 7)
		return -1;
	o.type = qparams_type_parse(type);
	if (qparams_compute(&o, lo, hi, &s, &zp, &e) < 0)
		printf("error: %s\n", e.msg);
	else
		printf("%a %d\n", (double)s, zp);
	return 0;
}

static int
bias(char *args)
{
	struct err e = { "" };
	float in, w, babs, bs;
	double beta;

	if (sscanf(args, "%f %f %f %lf", &in, &w, &babs, &beta) != 4)
		return -1;
	if (qparams_bias_adjust(in, &w, 1, &babs, 1, beta, &e) < 0 ||
	    qparams_bias_scale(in, &w, 1, 1, beta, &bs, &e) < 0)
		printf("error: %s\n", e.msg);
	else
		printf("%a %a\n", (double)w, (double)bs);
	return 0;
}

int
main(void)
{
	char line[512];
	long n = 0;

	while (fgets(line, sizeof line, stdin)) {
		int rc;

		n++;
		if (strncmp(line, "range ", 6) == 0)
			rc = range(line + 6);
		else if (strncmp(line, "bias ", 5) == 0)
			rc = bias(line + 5);
		else
			rc = -1;
		if (rc < 0) {
			fprintf(stderr, "qparams-calc: line %ld: cannot parse\n",
			    n);
			return 2;
		}
	}
	return fclose(stdout) == 0 ? 0 : 1;
}
