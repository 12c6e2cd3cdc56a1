/*
 * runner: a model loaded with its interpreter, and the names and types
 * a dataset (dataset.h) reads its samples by, in the model's order: what
 * onnx-verify runs, once per model.
 *
 * runner_init() fills a struct runner (zeroed on failure, errors naming
 * the path); runner_free() frees it and may be called on a zeroed one.
 * The names point into the interpreter.
 */
#ifndef ONNXQ_RUNNER_H
#define ONNXQ_RUNNER_H

#include "dataset.h"
#include "interp.h"
#include "model.h"

struct runner {
	struct model *m;
	struct interp *ip;
	struct dataset_spec spec;	/* points into the arrays below */
	const char **in_names, **out_names;
	int *in_dtypes;
};

/* observe, ctx: the interpreter's observer (interp.h), may be NULL. */
int runner_init(struct runner *r, const char *path, int threads,
    interp_observe_fn observe, void *ctx, struct err *e);
/*
 * The same, the model first rewritten as ONNX Runtime's default session
 * fuses it: each DequantizeLinear -> op -> QuantizeLinear group that has
 * a QLinear operator becomes it (qop.h), so the interpreter computes the
 * group with ORT's integer kernels rather than the literal QDQ graph.
 */
int runner_init_fused(struct runner *r, const char *path, int threads,
    interp_observe_fn observe, void *ctx, struct err *e);
void runner_free(struct runner *r);

/*
 * Where each of the na names a is in the list b (pos[i]); a name that is
 * not there is the error "BPATH: no WHAT NAME, as the fp32 model has".
 */
int runner_match_names(const char *what, const char *bpath,
    const char *const *a, int na, const char *const *b, int nb, int *pos,
    struct err *e);

#endif
