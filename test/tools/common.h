/*
 * common: what the timing tools (onnxq-time, onnxq-calibtime,
 * onnxq-opprof) share: their options, clocks, medians and the one sample
 * they run the model on. Header only; each tool is one source file.
 */
#ifndef ONNXQ_TOOLS_COMMON_H
#define ONNXQ_TOOLS_COMMON_H

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "dataset.h"
#include "interp.h"

#define TOOL_FN static __attribute__((unused))

/*
 * [-n RUNS] [-t THREADS] (and [-b MBITS] when mbits is not NULL), then
 * MODEL DIR. The index of MODEL in argv, or -1 on a usage error.
 */
TOOL_FN int
tool_args(int argc, char **argv, int *runs, int *threads, int *mbits)
{
	int c;

	while ((c = getopt(argc, argv, mbits ? "b:n:t:" : "n:t:")) != -1)
		switch (c) {
		case 'b': *mbits = atoi(optarg); break;
		case 'n': *runs = atoi(optarg); break;
		case 't': *threads = atoi(optarg); break;
		default: return -1;
		}
	if (argc - optind != 2 || *runs < 1 || *threads < 1)
		return -1;
	return optind;
}

TOOL_FN double
clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

TOOL_FN double
now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

TOOL_FN int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v). */
TOOL_FN double
median(double *v, int n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The model's inputs for one sample, and room for its outputs. */
struct sample {
	int ni, no;
	const char **names;	/* the interpreter's input names */
	struct tensor *in, *out;
};

/* Load the first sample of ds for ip; -1 with e set. */
TOOL_FN int
sample_load(struct sample *s, struct interp *ip, struct dataset *ds,
    struct err *e)
{
	struct dataset_spec spec = { 0 };

	s->ni = interp_ninputs(ip);
	s->no = interp_noutputs(ip);
	s->names = calloc(s->ni + 1, sizeof *s->names);
	s->in = calloc(s->ni + 1, sizeof *s->in);
	s->out = calloc(s->no + 1, sizeof *s->out);
	if (!s->names || !s->in || !s->out)
		return err_nomem(e);
	for (int i = 0; i < s->ni; i++)
		s->names[i] = interp_input_name(ip, i);
	spec.ninputs = s->ni;
	spec.input_names = s->names;
	return dataset_load(ds, 0, &spec, s->in, NULL, e) < 0 ? -1 : 0;
}

/* Run ip on the sample and drop the outputs; -1 with e set. */
TOOL_FN int
sample_run(struct sample *s, struct interp *ip, struct err *e)
{
	int rc = interp_run(ip, s->in, s->out, e);

	for (int k = 0; k < s->no; k++)
		tensor_release(&s->out[k]);
	return rc < 0 ? -1 : 0;
}

TOOL_FN void
sample_free(struct sample *s)
{
	for (int k = 0; k < s->ni; k++)
		tensor_release(&s->in[k]);
	free(s->in);
	free(s->out);
	free(s->names);
}

#endif
