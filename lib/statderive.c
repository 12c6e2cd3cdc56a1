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

/* The value of initializer name when it is one float32: 0; else -1. */
static int
scalar_init(const struct model *m, const char *name, float *v)
{
	const Onnx__GraphProto *g = m->proto->graph;
	struct tensor t;
	struct err e;

	for (size_t k = 0; k < g->n_initializer; k++) {
		const Onnx__TensorProto *tp = g->initializer[k];
		int ok;

		if (!tp->name || strcmp(tp->name, name) != 0)
			continue;
		if (model_tensor_read(m, tp, &t, &e) < 0)
			return -1;
		ok = t.dtype == DT_FLOAT && t.nelem == 1;
		if (ok)
			*v = (float)tensor_get(&t, 0);
		tensor_release(&t);
		return ok ? 0 : -1;
	}
	return -1;
}

/* A Clip bound: absent (the default stays) or constant: 0; else -1. */
static int
clip_bound(const struct model *m, const Onnx__NodeProto *n, size_t i,
    float *bound)
{
	if (i >= n->n_input || !n->input[i][0])
		return 0;
	return scalar_init(m, n->input[i], bound);
}

/*
 * The input of which an Add or Sub of +-0, or a Mul or Div by 1, is a
 * copy (x + 0 and x * 1 are x, bit for bit, -0 + 0 aside, which is +0:
 * the same statistics), or -1. The constant has one element, so the
 * output has x's values in x's order.
 */
static int
neutral_operand(const struct model *m, const Onnx__NodeProto *n)
{
	int add = is_op(n, "Add"), mul = is_op(n, "Mul");
	float v;

	if (n->n_input != 2 || !(add || mul || is_op(n, "Sub") ||
	    is_op(n, "Div")))
		return -1;
	for (int k = 1; k >= 0; k--) {
		/* Sub and Div: only x - 0 and x / 1 */
		if (k == 0 && !add && !mul)
			break;
		if (scalar_init(m, n->input[k], &v) == 0 &&
		    (add || is_op(n, "Sub") ? v == 0 : v == 1))
			return !k;
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
	size_t nsrc = 1, first = 0;
	int x;

	memset(d, 0, sizeof *d);
	d->lo = -INFINITY;
	d->hi = INFINITY;
	if (out != 0 || n->n_input < 1)
		return;
	for (size_t k = 0; k < sizeof copies / sizeof *copies; k++)
		if (is_op(n, copies[k]))
			d->kind = STATDERIVE_COPY;
	if ((x = neutral_operand(m, n)) >= 0) {
		d->kind = STATDERIVE_COPY;
		first = (size_t)x;
	}
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
	for (size_t k = first; d->kind != STATDERIVE_NONE &&
	    k < first + nsrc; k++)
		if (!n->input[k][0] || !has_stats(ctx, n->input[k]))
			d->kind = STATDERIVE_NONE;
	if (d->kind == STATDERIVE_NONE)
		return;
	d->nsrc = (int)nsrc;
	d->src = (const char *const *)n->input + first;
}
