/*
 * onnxq-time: time the interpreter on a model, for test/real-models.bats
 * and benches. Not installed.
 *
 *	onnxq-time [-n RUNS] [-t THREADS] MODEL DIR
 *
 * Loads the first sample of the data directory DIR (any layout of
 * onnx-verify(1)), runs the model once to warm up, then RUNS times
 * (default 5), and prints "onnxq: median MS ms per inference" (wall
 * clock). Exit 0 on success, 1 on error, 2 on usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataset.h"
#include "interp.h"
#include "model.h"

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct interp_opts io = { .threads = 2 };
	struct err e;
	struct model *m;
	struct interp *ip;
	struct dataset *ds;
	struct dataset_spec spec = { 0 };
	struct tensor *in, *out;
	const char **names;
	double *ms;
	int runs = 5, c, ni, no;

	interp_reexec_bounded_spin(argv);
	while ((c = getopt(argc, argv, "n:t:")) != -1)
		switch (c) {
		case 'n': runs = atoi(optarg); break;
		case 't': io.threads = atoi(optarg); break;
		default: goto usage;
		}
	if (argc - optind != 2 || runs < 1 || io.threads < 1)
		goto usage;
	if (!(m = model_load(argv[optind], &e)) ||
	    !(ip = interp_new(m, &io, &e)) ||
	    !(ds = dataset_open((const char **)&argv[optind + 1], 1, &e))) {
		fprintf(stderr, "onnxq-time: %s\n", e.msg);
		return 1;
	}
	ni = interp_ninputs(ip);
	no = interp_noutputs(ip);
	names = calloc(ni + 1, sizeof *names);
	in = calloc(ni + 1, sizeof *in);
	out = calloc(no + 1, sizeof *out);
	ms = calloc(runs, sizeof *ms);
	for (int i = 0; i < ni; i++)
		names[i] = interp_input_name(ip, i);
	spec.ninputs = ni;
	spec.input_names = names;
	if (dataset_load(ds, 0, &spec, in, NULL, &e) < 0) {
		fprintf(stderr, "onnxq-time: %s\n", e.msg);
		return 1;
	}
	for (int r = -1; r < runs; r++) {
		double t0 = now_ms();

		if (interp_run(ip, in, out, &e) < 0) {
			fprintf(stderr, "onnxq-time: %s\n", e.msg);
			return 1;
		}
		if (r >= 0)
			ms[r] = now_ms() - t0;
		for (int k = 0; k < no; k++)
			tensor_release(&out[k]);
	}
	qsort(ms, runs, sizeof *ms, cmp_double);
	printf("onnxq: median %.1f ms per inference\n", ms[runs / 2]);
	for (int k = 0; k < ni; k++)
		tensor_release(&in[k]);
	free(in);
	free(out);
	free(ms);
	free(names);
	dataset_free(ds);
	interp_free(ip);
	model_free(m);
	return 0;
usage:
	fputs("usage: onnxq-time [-n RUNS] [-t THREADS] MODEL DIR\n", stderr);
	return 2;
}
