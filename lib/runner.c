/* runner: a model ready to run on dataset samples. See runner.h. */
#include <stdlib.h>
#include <string.h>

#include "qop.h"
#include "runner.h"

void
runner_free(struct runner *r)
{
	interp_free(r->ip);
	model_free(r->m);
	free(r->in_names);
	free(r->out_names);
	free(r->in_dtypes);
	memset(r, 0, sizeof *r);
}

static int
init(struct runner *r, const char *path, int threads,
    interp_observe_fn observe, void *ctx, int fused, struct err *e)
{
	struct interp_opts io = { .threads = threads, .observe = observe,
	    .observe_ctx = ctx };
	int64_t dims[TENSOR_MAX_RANK];
	int rank, ni, no;

	memset(r, 0, sizeof *r);
	if (!(r->m = model_load(path, e)))
		return -1;
	if (fused && qop_rewrite(r->m, NULL, NULL, NULL, e) != 0) {
		runner_free(r);
		return -1;
	}
	if (!(r->ip = interp_new(r->m, &io, e))) {
		err_prefix(e, "%s", path);
		runner_free(r);
		return -1;
	}
	ni = interp_ninputs(r->ip);
	no = interp_noutputs(r->ip);
	r->in_names = calloc((size_t)ni + 1, sizeof *r->in_names);
	r->in_dtypes = calloc((size_t)ni + 1, sizeof *r->in_dtypes);
	r->out_names = calloc((size_t)no + 1, sizeof *r->out_names);
	if (!r->in_names || !r->in_dtypes || !r->out_names) {
		runner_free(r);
		return err_nomem(e);
	}
	for (int i = 0; i < ni; i++) {
		r->in_names[i] = interp_input_name(r->ip, i);
		r->in_dtypes[i] = interp_input_type(r->ip, i, &rank, dims);
	}
	for (int i = 0; i < no; i++)
		r->out_names[i] = interp_output_name(r->ip, i);
	r->spec.ninputs = ni;
	r->spec.input_names = r->in_names;
	r->spec.input_dtypes = r->in_dtypes;
	r->spec.noutputs = no;
	r->spec.output_names = r->out_names;
	return 0;
}

int
runner_init(struct runner *r, const char *path, int threads,
    interp_observe_fn observe, void *ctx, struct err *e)
{
	return init(r, path, threads, observe, ctx, 0, e);
}

int
runner_init_fused(struct runner *r, const char *path, int threads,
    interp_observe_fn observe, void *ctx, struct err *e)
{
	return init(r, path, threads, observe, ctx, 1, e);
}

int
runner_match_names(const char *what, const char *bpath,
    const char *const *a, int na, const char *const *b, int nb, int *pos,
    struct err *e)
{
	for (int i = 0; i < na; i++) {
		pos[i] = -1;
		for (int j = 0; j < nb; j++)
			if (strcmp(a[i], b[j]) == 0) {
				pos[i] = j;
				break;
			}
		if (pos[i] < 0)
			return err_set(e, "%s: no %s %s, as the fp32 model has",
			    bpath, what, a[i]);
	}
	return 0;
}
