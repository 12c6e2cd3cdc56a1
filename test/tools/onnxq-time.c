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

#include "common.h"
#include "model.h"

int
main(int argc, char **argv)
{
	struct interp_opts io = { .threads = 2 };
	struct err e;
	struct model *m;
	struct interp *ip;
	struct dataset *ds;
	struct sample smp;
	double *ms;
	int runs = 5, arg;

	if ((arg = tool_args(argc, argv, &runs, &io.threads, NULL)) < 0)
		goto usage;
	if (!(m = model_load(argv[arg], &e)) ||
	    !(ip = interp_new(m, &io, &e)) ||
	    !(ds = dataset_open((const char **)&argv[arg + 1], 1, &e)) ||
	    sample_load(&smp, ip, ds, &e) < 0) {
		fprintf(stderr, "onnxq-time: %s\n", e.msg);
		return 1;
	}
	ms = calloc(runs, sizeof *ms);
	for (int r = -1; r < runs; r++) {
		double t0 = now_ms();

		if (sample_run(&smp, ip, &e) < 0) {
			fprintf(stderr, "onnxq-time: %s\n", e.msg);
			return 1;
		}
		if (r >= 0)
			ms[r] = now_ms() - t0;
	}
	qsort(ms, runs, sizeof *ms, cmp_double);
	printf("onnxq: median %.2f ms per inference\n", ms[runs / 2]);
	free(ms);
	sample_free(&smp);
	dataset_free(ds);
	interp_free(ip);
	model_free(m);
	return 0;
usage:
	fputs("usage: onnxq-time [-n RUNS] [-t THREADS] MODEL DIR\n", stderr);
	return 2;
}
