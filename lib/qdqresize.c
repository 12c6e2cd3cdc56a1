/*
 * qdqresize: nearest upsampling by whole factors as Transpose, Unsqueeze,
 * Expand, Reshape and Transpose; see qdqresize.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "graph.h"
#include "qdqresize.h"
#include "strmap.h"
#include "tensor.h"
#include "util.h"

#define MAX_FACTOR 64

struct ctx {
	struct model *m;
	Onnx__GraphProto *g;
	struct graph *gr;
	const Onnx__NodeProto *dq;	/* the Resize's input's: parameters */
	const char *y;			/* the Resize's output: names' base */
};

/* Whether constants a and b hold one value each, of one type, equal. */
static int
same_scalar(const struct ctx *c, const char *a, const char *b)
{
	const Onnx__TensorProto *ta = graph_constant(c->gr, a);
	const Onnx__TensorProto *tb = graph_constant(c->gr, b);
	double x, y;

	return ta && tb && ta->data_type == tb->data_type &&
	    graph_constant_scalar(c->gr, c->m, a, &x) == 0 &&
	    graph_constant_scalar(c->gr, c->m, b, &y) == 0 && x == y;
}

/* The attribute `name` of n is `want` (def when absent). */
static int
attr_is(const Onnx__NodeProto *n, const char *name, const char *def,
    const char *want)
{
	char buf[32];

	return strcmp(attr_string(n, name, def, buf, sizeof buf), want) == 0;
}

/*
 * Whether output pixel i of a nearest Resize by the whole factor f reads
 * input pixel i / f rounded down, under the ONNX coordinate rule ctm and
 * rounding nm. With i = f q + r (0 <= r < f): asymmetric maps i to
 * q + r / f, which floor takes to q, and round_prefer_floor too when f
 * is 2 (r / f is 0 or one half); half_pixel maps it to
 * q + (2 r + 1 - f) / (2 f), less than one half from q, which both
 * roundings take to q (pytorch_half_pixel too: it differs only for an
 * output of length 1, where both give 0). ONNX Runtime computes this in
 * float: the margin of one half less 1 / (2 f), with f at most
 * MAX_FACTOR, holds for outputs under 2^22 pixels long. A factor of 1
 * maps i to i under all three rules.
 */
static int
whole_pixels(const char *ctm, const char *nm, int64_t f)
{
	int asym = strcmp(ctm, "asymmetric") == 0;
	int half = strcmp(ctm, "half_pixel") == 0 ||
	    strcmp(ctm, "pytorch_half_pixel") == 0;
	int rpf = strcmp(nm, "round_prefer_floor") == 0;

	if (f == 1)
		return asym || half;
	if (asym)
		return strcmp(nm, "floor") == 0 || (rpf && f == 2);
	return half && (rpf || strcmp(nm, "round_prefer_ceil") == 0);
}

/*
 * Resize node ni's input DequantizeLinear and whole factors (H, W) when it
 * is such a Resize: 1, else 0.
 */
static int
match(struct ctx *c, int ni, int64_t f[2])
{
	const Onnx__NodeProto *n = c->g->node[ni], *dq, *q;
	const struct graph_value *xv, *yv;
	struct tensor s = { 0 };
	struct err e;
	char cbuf[32], nbuf[32];
	const char *ctm, *nm;
	int ok;

	if (!graph_is_op(n, "Resize") || n->n_output != 1 || n->n_input < 3 ||
	    (n->n_input > 3 && *n->input[3]) ||
	    !attr_is(n, "mode", "nearest", "nearest") ||
	    attr_find(n, "axes") != NULL)	/* opset 18: scales' order */
		return 0;
	ctm = attr_string(n, "coordinate_transformation_mode", "half_pixel",
	    cbuf, sizeof cbuf);
	nm = attr_string(n, "nearest_mode", "round_prefer_floor", nbuf,
	    sizeof nbuf);
	if (graph_constant_read(c->gr, c->m, n->input[2], &s, &e) != 0)
		return 0;
	ok = s.nelem == 4 && dtype_is_float(s.dtype) &&
	    tensor_get(&s, 0) == 1 && tensor_get(&s, 1) == 1;
	for (int i = 0; ok && i < 2; i++) {
		double v = tensor_get(&s, 2 + i);

		ok = v >= 1 && v <= MAX_FACTOR && v == floor(v);
		f[i] = ok ? (int64_t)v : 0;
		ok = ok && whole_pixels(ctm, nm, f[i]);
	}
	tensor_release(&s);
	if (!ok || (f[0] == 1 && f[1] == 1))
		return 0;
	xv = graph_value(c->gr, n->input[0]);
	yv = graph_value(c->gr, n->output[0]);
	if (xv == NULL || xv->producer < 0 || yv == NULL || yv->is_output ||
	    yv->nconsumers != 1)
		return 0;
	dq = c->g->node[xv->producer];
	q = c->g->node[yv->consumers[0]];
	if (!graph_is_op(dq, "DequantizeLinear") || dq->n_input != 3 ||
	    attr_find(dq, "output_dtype") != NULL ||
	    !graph_is_op(q, "QuantizeLinear") || q->n_input != 3 ||
	    strcmp(q->input[0], n->output[0]) != 0 ||
	    strcmp(str_or_empty(q->domain), str_or_empty(dq->domain)) != 0 ||
	    !same_scalar(c, dq->input[1], q->input[1]) ||
	    !same_scalar(c, dq->input[2], q->input[2]))
		return 0;
	c->dq = dq;
	return 1;
}

/* A new name: the Resize output's, then suffix (malloc'd), or NULL. */
static char *
fresh(struct ctx *c, const char *suffix, struct err *e)
{
	char *base = str_cat(c->y, suffix), *name;

	name = base ? graph_unique_name(c->gr, base) : NULL;
	free(base);
	if (name == NULL)
		err_nomem(e);
	return name;
}

/* An int64 initializer of v (n values): its name, or NULL. */
static char *
add_ints(struct ctx *c, const char *suffix, const int64_t *v, int n,
    struct err *e)
{
	struct tensor t = { 0 };
	int64_t dim = n;
	char *name = NULL;

	if (tensor_alloc(&t, DT_INT64, 1, &dim, e) == 0) {
		memcpy(t.data, v, (size_t)n * sizeof *v);
		name = graph_add_tensor(c->gr, c->y, suffix, &t, e);
	}
	tensor_release(&t);
	return name;
}

/*
 * Node op reading in (nin names) and writing a new tensor: the new
 * tensor's name (malloc'd), the node in *node (may be NULL), or NULL.
 */
static char *
add_op(struct ctx *c, const char *op, const char *const *in, int nin,
    const char *suffix, Onnx__NodeProto **node, struct err *e)
{
	char *out = fresh(c, suffix, e);
	const char *outs[1] = { out };
	Onnx__NodeProto *n;

	if (out == NULL || (n = graph_add_node(c->gr, op, NULL, out, in, nin,
	    outs, 1, e)) == NULL) {
		free(out);
		return NULL;
	}
	if (node)
		*node = n;
	return out;
}

/*
 * x quantized and dequantized again with the Resize input's parameters:
 * the DequantizeLinear's output (malloc'd; *xq, when not NULL, the
 * QuantizeLinear's), or NULL. Frees x.
 */
static char *
requant(struct ctx *c, char *x, char **xq, struct err *e)
{
	const char *dom = c->dq->domain;
	const char *qin[3] = { x, c->dq->input[1], c->dq->input[2] };
	char *q = NULL, *d = NULL, *qn = NULL, *dn = NULL;
	const char *outs[1];

	if (x == NULL)
		return NULL;	/* e says why */
	if ((q = str_fmt("%s_QuantizeLinear_Output", x)) == NULL ||
	    (qn = graph_unique_name(c->gr, q)) == NULL ||
	    (d = str_fmt("%s_DequantizeLinear_Output", x)) == NULL ||
	    (dn = graph_unique_name(c->gr, d)) == NULL)
		goto nomem;
	outs[0] = qn;
	if (graph_add_node(c->gr, "QuantizeLinear", dom, qn, qin, 3, outs, 1,
	    e) == NULL)
		goto fail;
	qin[0] = qn;
	outs[0] = dn;
	if (graph_add_node(c->gr, "DequantizeLinear", dom, dn, qin, 3, outs,
	    1, e) == NULL)
		goto fail;
	free(q);
	free(d);
	free(x);
	if (xq)
		*xq = qn;
	else
		free(qn);
	return dn;
nomem:
	err_nomem(e);
fail:
	free(q);
	free(d);
	free(qn);
	free(dn);
	free(x);
	return NULL;
}

/*
 * A value_info of x: of the DequantizeLinear's output type (its scale's:
 * float, float16 or bfloat16), rank 4, sizes unknown. ONNX Runtime infers
 * no rank for a Reshape to a computed shape, and without one leaves the
 * Convs after it out of its NHWC layout, with Transposes around them.
 */
static int
declare_rank4(struct ctx *c, const char *x, struct err *e)
{
	static const int64_t unknown[4] = { -1, -1, -1, -1 };
	const struct graph_value *sv = graph_value(c->gr, c->dq->input[1]);
	Onnx__GraphProto *g = c->g;
	Onnx__ValueInfoProto *vi, **vs;

	if (sv == NULL || sv->init == NULL)
		return err_set(e, "%s: its scale is not a constant",
		    str_or_empty(c->dq->name));
	if ((vi = model_value_info_new(x, sv->init->data_type, 4,
	    unknown)) == NULL)
		return err_nomem(e);
	if ((vs = realloc(g->value_info, (g->n_value_info + 1) *
	    sizeof *vs)) == NULL) {
		protobuf_c_message_free_unpacked(&vi->base, NULL);
		return err_nomem(e);
	}
	g->value_info = vs;
	g->value_info[g->n_value_info++] = vi;
	return 0;
}

/* Resize node ni made the Transpose back to NCHW, reading x. */
static int
to_transpose(struct ctx *c, int ni, const char *x, struct err *e)
{
	static const int64_t nchw[4] = { 0, 3, 1, 2 };
	Onnx__NodeProto *n = c->g->node[ni];
	char *op;

	if (graph_rewire_input(c->gr, ni, 0, x, e) != 0)
		return -1;
	if ((op = strdup("Transpose")) == NULL)
		return err_nomem(e);
	free(n->op_type);
	n->op_type = op;
	for (size_t i = 1; i < n->n_input; i++)
		free(n->input[i]);
	n->n_input = 1;
	for (size_t i = 0; i < n->n_attribute; i++)
		protobuf_c_message_free_unpacked(&n->attribute[i]->base, NULL);
	free(n->attribute);
	n->attribute = NULL;
	n->n_attribute = 0;
	return attr_add_ints(n, "perm", nchw, 4, e);
}

/* Rewrite Resize node ni, its factors f: 0, or -1 with e. */
static int
rewrite(struct ctx *c, int ni, const int64_t f[2], struct err *e)
{
	static const int64_t nhwc[4] = { 0, 2, 3, 1 }, axes[2] = { 2, 4 };
	const int64_t grow[6] = { 1, 1, f[0], 1, f[1], 1 };
	const int64_t size[4] = { 1, f[0], f[1], 1 };
	char *t = NULL, *tq = NULL, *u = NULL, *x = NULL, *k = NULL,
	    *sh = NULL, *sz = NULL, *r = NULL;
	const char *in[2];
	Onnx__NodeProto *tn = NULL;
	int rc = -1;

	in[0] = c->g->node[ni]->input[0];
	if ((t = requant(c, add_op(c, "Transpose", in, 1, "_nhwc", &tn, e),
	    &tq, e)) == NULL || attr_add_ints(tn, "perm", nhwc, 4, e) != 0 ||
	    (k = add_ints(c, "_axes", axes, 2, e)) == NULL)
		goto done;
	in[0] = t;
	in[1] = k;
	if ((u = requant(c, add_op(c, "Unsqueeze", in, 2, "_unsqueezed", NULL,
	    e), NULL, e)) == NULL)
		goto done;
	free(k);
	if ((k = add_ints(c, "_grow", grow, 6, e)) == NULL)
		goto done;
	in[0] = u;
	in[1] = k;
	if ((x = requant(c, add_op(c, "Expand", in, 2, "_expanded", NULL, e),
	    NULL, e)) == NULL)
		goto done;
	in[0] = tq;
	if ((sh = add_op(c, "Shape", in, 1, "_nhwc_shape", NULL, e)) == NULL)
		goto done;
	free(k);
	if ((k = add_ints(c, "_factors", size, 4, e)) == NULL)
		goto done;
	in[0] = sh;
	in[1] = k;
	if ((sz = add_op(c, "Mul", in, 2, "_shape", NULL, e)) == NULL)
		goto done;
	in[0] = x;
	in[1] = sz;
	if ((r = add_op(c, "Reshape", in, 2, "_nhwc_out", NULL, e)) == NULL ||
	    declare_rank4(c, r, e) != 0 || (r = requant(c, r, NULL, e)) == NULL)
		goto done;
	rc = to_transpose(c, ni, r, e);
done:
	free(t);
	free(tq);
	free(u);
	free(x);
	free(k);
	free(sh);
	free(sz);
	free(r);
	return rc;
}

int
qdqresize_expand(struct model *m, int *rewritten, struct err *e)
{
	struct ctx c = { 0 };
	struct strmap *old = NULL;	/* roi and scales of those rewritten */
	int done = 0, rc = -1;
	size_t n;
	int64_t f[2];

	c.m = m;
	c.g = m->proto->graph;
	if (rewritten)
		*rewritten = 0;
	if (c.g == NULL)
		return err_set(e, "%s: no graph", m->path);
	if (model_opset(m, "") < 13)
		return 0;
	if ((c.gr = graph_new(c.g, e)) == NULL)
		return err_prefix(e, "%s", m->path);
	n = c.g->n_node;
	if ((old = strmap_new()) == NULL) {
		err_nomem(e);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		Onnx__NodeProto *r = c.g->node[i];

		if (!match(&c, (int)i, f))
			continue;
		c.y = r->output[0];
		/* roi and scales: dropped once nothing reads them */
		for (size_t k = 1; k < 3; k++)
			if (*r->input[k] && strmap_put(old, r->input[k], 1) !=
			    0) {
				err_nomem(e);
				goto fail;
			}
		if (rewrite(&c, (int)i, f, e) != 0)
			goto fail;
		done++;
	}
	if (done && graph_reindex(c.gr, e) != 0)
		goto fail;
	graph_drop_unread(c.gr, old);
	if (rewritten)
		*rewritten = done;
	rc = 0;
fail:
	if (rc != 0)
		err_prefix(e, "%s", m->path);
	strmap_free(old);
	graph_free(c.gr);
	return rc;
}
