/* statderive: see statderive.h. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "attr.h"
#include "statderive.h"
#include "tensor.h"

static int
is_op(const Onnx__NodeProto *n, const char *op)
{
	return strcmp(n->op_type, op) == 0 && (!n->domain || !n->domain[0] ||
	    strcmp(n->domain, "ai.onnx") == 0);
}

/*
 * A Clip bound: absent (the default stays), or a float32 scalar
 * initializer: 0. -1 when it is anything else (computed at run time).
 */
static int
clip_bound(const struct model *m, const Onnx__NodeProto *n, size_t i,
    float *bound)
{
	const Onnx__GraphProto *g = m->proto->graph;
	struct tensor t;
	struct err e;

	if (i >= n->n_input || !n->input[i][0])
		return 0;
	for (size_t k = 0; k < g->n_initializer; k++) {
		const Onnx__TensorProto *tp = g->initializer[k];
		int ok;

		if (!tp->name || strcmp(tp->name, n->input[i]) != 0)
			continue;
		if (model_tensor_read(m, tp, &t, &e) < 0)
			return -1;
		ok = t.dtype == DT_FLOAT && t.nelem == 1;
		if (ok)
			*bound = (float)tensor_get(&t, 0);
		tensor_release(&t);
		return ok ? 0 : -1;
	}
	return -1;
}

void
statderive_plan(const struct model *m, const Onnx__NodeProto *n,
    size_t out, int (*has_stats)(void *ctx, const char *name), void *ctx,
    struct statderive *d)
{
	static const char *const copies[] = { "Identity", "Reshape",
		"Flatten", "Squeeze", "Unsqueeze", "Dropout" };
	size_t nsrc = 1;

	memset(d, 0, sizeof *d);
	d->lo = -INFINITY;
	d->hi = INFINITY;
	if (out != 0 || n->n_input < 1)
		return;
	for (size_t k = 0; k < sizeof copies / sizeof *copies; k++)
		if (is_op(n, copies[k]))
			d->kind = STATDERIVE_COPY;
	if (is_op(n, "Transpose"))
		d->kind = STATDERIVE_HIST;
	else if (is_op(n, "Concat")) {
		d->kind = STATDERIVE_HIST;
		nsrc = n->n_input;
	} else if (is_op(n, "Relu")) {
		d->kind = STATDERIVE_HIST;
		d->lo = 0;
		d->float32_only = 1;
	} else if (is_op(n, "Clip")) {
		d->kind = STATDERIVE_HIST;
		d->float32_only = 1;
		if (model_opset(m, "") < 11) {
			d->lo = attr_float(n, "min", -FLT_MAX);
			d->hi = attr_float(n, "max", FLT_MAX);
		} else if (clip_bound(m, n, 1, &d->lo) < 0 ||
		    clip_bound(m, n, 2, &d->hi) < 0)
			d->kind = STATDERIVE_NONE;
	}
	for (size_t k = 0; d->kind != STATDERIVE_NONE && k < nsrc; k++)
		if (!n->input[k][0] || !has_stats(ctx, n->input[k]))
			d->kind = STATDERIVE_NONE;
	if (d->kind == STATDERIVE_NONE)
		return;
	d->nsrc = (int)nsrc;
	d->src = (const char *const *)n->input;
}
