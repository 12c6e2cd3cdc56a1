/* qop: the QOperator form of a QDQ model. See qop.h. */
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "graph.h"
#include "opset.h"
#include "qop.h"
#include "util.h"

#define MS_DOMAIN "com.microsoft"
#define BIAS_RTOL 1e-6		/* bias scale vs input x weight scale */

enum kind { K_CONV, K_MATMUL, K_GEMM, K_BINARY, K_UNARY, K_CONCAT, K_MOVE };

struct spec {
	const char *op;		/* the float operator, default domain */
	const char *qop;	/* its quantized form; NULL: K_MOVE */
	const char *domain;
	enum kind kind;
	int min_opset;		/* of the default domain */
};

static const struct spec specs[] = {
	{ "Conv", "QLinearConv", "", K_CONV, 10 },
	{ "MatMul", "QLinearMatMul", "", K_MATMUL, 10 },
	{ "Gemm", "QGemm", MS_DOMAIN, K_GEMM, 1 },
	{ "Add", "QLinearAdd", MS_DOMAIN, K_BINARY, 1 },
	{ "Mul", "QLinearMul", MS_DOMAIN, K_BINARY, 1 },
	{ "Sigmoid", "QLinearSigmoid", MS_DOMAIN, K_UNARY, 1 },
	{ "LeakyRelu", "QLinearLeakyRelu", MS_DOMAIN, K_UNARY, 1 },
	{ "AveragePool", "QLinearAveragePool", MS_DOMAIN, K_UNARY, 1 },
	{ "GlobalAveragePool", "QLinearGlobalAveragePool", MS_DOMAIN,
	    K_UNARY, 1 },
	{ "Softmax", "QLinearSoftmax", MS_DOMAIN, K_UNARY, 1 },
	{ "Concat", "QLinearConcat", MS_DOMAIN, K_CONCAT, 1 },
	{ "Reshape", NULL, "", K_MOVE, 1 },
	{ "Transpose", NULL, "", K_MOVE, 1 },
	{ "Flatten", NULL, "", K_MOVE, 1 },
	{ "Squeeze", NULL, "", K_MOVE, 1 },
	{ "Unsqueeze", NULL, "", K_MOVE, 1 },
	{ "MaxPool", NULL, "", K_MOVE, 12 },	/* 8-bit MaxPool */
	{ "Slice", NULL, "", K_MOVE, 1 },
	{ "Gather", NULL, "", K_MOVE, 1 },
	{ "Identity", NULL, "", K_MOVE, 1 },
};

struct ctx {
	struct model *m;
	Onnx__GraphProto *g;
	struct graph *gr;
	char *drop;		/* per node: to remove */
	int opset;		/* default domain */
	int ms_used;
	char **gone;		/* float outputs rewritten away */
	size_t ngone;
	qdq_note_fn note;
	void *note_ctx;
	struct qop_report *r;
};

/* A tensor read through a DequantizeLinear (or written by a Quantize). */
struct qt {
	int node;		/* the Q/DQ node */
	const char *q, *s, *z;	/* its quantized side, scale, zero point */
	int dtype;		/* quantized type */
	int axis;		/* -1 per tensor */
	int64_t n;		/* scale values */
};

static int
is_default_domain(const char *d)
{
	return d == NULL || *d == '\0' || strcmp(d, "ai.onnx") == 0;
}

static int
is_qdq_node(const Onnx__NodeProto *n, const char *op)
{
	return n->op_type && strcmp(n->op_type, op) == 0 &&
	    (is_default_domain(n->domain) ||
	    strcmp(n->domain, MS_DOMAIN) == 0);
}

static const Onnx__TensorProto *
const_of(const struct ctx *c, const char *name)
{
	const struct graph_value *v = graph_value(c->gr, name);

	return v && (v->kind == VALUE_INITIALIZER ||
	    v->kind == VALUE_CONSTANT) ? v->init : NULL;
}

/* Elements of a constant's declared shape; -1 when it makes no sense. */
static int64_t
nelem_of(const Onnx__TensorProto *t)
{
	int64_t n = 1;

	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0 || (t->dims[i] > 0 &&
		    n > INT64_MAX / t->dims[i]))
			return -1;
		n *= t->dims[i];
	}
	return n;
}

static int
is_8bit(int dt)
{
	return dt == DT_UINT8 || dt == DT_INT8;
}

/*
 * The parameters of Q/DQ node `ni` (its quantized side is input 0 of a
 * DequantizeLinear, output 0 of a QuantizeLinear). 0, or -1 when they are
 * not constants this format can carry.
 */
static int
qt_of(const struct ctx *c, int ni, int quant, struct qt *t)
{
	const Onnx__NodeProto *n = c->g->node[ni];
	const Onnx__TensorProto *s, *z, *q;

	memset(t, 0, sizeof *t);
	t->node = ni;
	t->axis = -1;
	if (n->n_input < 2 || n->n_output < 1)
		return -1;
	t->q = quant ? n->output[0] : n->input[0];
	t->s = n->input[1];
	t->z = n->n_input > 2 && n->input[2][0] ? n->input[2] : NULL;
	if (!(s = const_of(c, t->s)) || (t->n = nelem_of(s)) < 1)
		return -1;
	if (t->z) {
		if (!(z = const_of(c, t->z)) || nelem_of(z) != t->n)
			return -1;
		t->dtype = z->data_type;
	} else if (!quant && (q = const_of(c, t->q)) &&
	    q->data_type == DT_INT32)
		t->dtype = DT_INT32;
	else
		return -1;
	if (t->n > 1) {
		int64_t axis = attr_int(n, "axis", 1);

		if (quant || !(q = const_of(c, t->q)) || q->n_dims < 1)
			return -1;
		if (axis < 0)
			axis += (int64_t)q->n_dims;
		if (axis < 0 || axis >= (int64_t)q->n_dims ||
		    q->dims[axis] != t->n)
			return -1;
		t->axis = (int)axis;
	}
	return 0;
}

/* The DequantizeLinear that writes `name`: 0 and *t, or -1. */
static int
dq_of(const struct ctx *c, const char *name, struct qt *t)
{
	const struct graph_value *v = graph_value(c->gr, name);

	if (!name || !*name || !v || v->producer < 0 ||
	    !is_qdq_node(c->g->node[v->producer], "DequantizeLinear"))
		return -1;
	return qt_of(c, v->producer, 0, t);
}

/* The QuantizeLinear that alone reads `name`: 0 and *t, or -1. */
static int
q_of(const struct ctx *c, const char *name, struct qt *t)
{
	const struct graph_value *v = graph_value(c->gr, name);
	int ni;

	if (!v || v->is_output || v->nconsumers != 1)
		return -1;
	ni = v->consumers[0];
	if (!is_qdq_node(c->g->node[ni], "QuantizeLinear") ||
	    c->g->node[ni]->n_input < 1 ||
	    strcmp(c->g->node[ni]->input[0], name) != 0 ||
	    qt_of(c, ni, 1, t) != 0 || t->n != 1)
		return -1;
	return 0;
}

static void
note(struct ctx *c, const Onnx__NodeProto *n, const char *fmt, ...)
{
	char msg[512], *full;
	va_list ap;

	c->r->left++;
	if (!c->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	full = n->name && *n->name ? str_fmt("node %s (%s): %s; left in QDQ "
	    "form", n->name, str_or_empty(n->op_type), msg) :
	    str_fmt("the %s writing %s: %s; left in QDQ form",
	    str_or_empty(n->op_type), n->output[0], msg);
	c->note(c->note_ctx, full ? full : msg);
	free(full);
}

/* Float values of a constant, or NULL (with *n) on failure. */
static float *
floats_of(const struct ctx *c, const char *name, int64_t *n)
{
	const Onnx__TensorProto *tp = const_of(c, name);
	struct tensor t = { 0 };
	struct err e = { 0 };
	float *v;

	if (!tp || model_tensor_read(c->m, tp, &t, &e) != 0)
		return NULL;
	if ((v = malloc(sizeof *v * (size_t)(t.nelem ? t.nelem : 1))))
		tensor_to_float(&t, v);
	*n = t.nelem;
	tensor_release(&t);
	return v;
}

/* Whether two constants hold the same type, shape and values. */
static int
same_const(const struct ctx *c, const char *a, const char *b)
{
	const Onnx__TensorProto *ta = const_of(c, a), *tb = const_of(c, b);
	struct tensor x = { 0 }, y = { 0 };
	struct err e = { 0 };
	int same;

	if (!ta || !tb)
		return 0;
	if (ta == tb)
		return 1;
	if (model_tensor_read(c->m, ta, &x, &e) != 0)
		return 0;
	if (model_tensor_read(c->m, tb, &y, &e) != 0) {
		tensor_release(&x);
		return 0;
	}
	same = x.dtype == y.dtype && shape_equal(&x, &y) &&
	    memcmp(x.data, y.data, dtype_size(x.dtype) * (size_t)x.nelem) == 0;
	tensor_release(&x);
	tensor_release(&y);
	return same;
}

/* Whether bias b's scales are x's scale times w's, as QLinear ops need. */
static int
bias_scale_ok(const struct ctx *c, const struct qt *x, const struct qt *w,
    const struct qt *b)
{
	int64_t nx, nw, nb;
	float *xs = floats_of(c, x->s, &nx), *ws = floats_of(c, w->s, &nw),
	    *bs = floats_of(c, b->s, &nb);
	int ok = xs && ws && bs && nx == 1 && (nb == nw || nw == 1);

	for (int64_t k = 0; ok && k < nb; k++) {
		double want = (double)(xs[0] * ws[nw == 1 ? 0 : k]);

		ok = fabs(bs[k] - want) <= BIAS_RTOL * want;
	}
	free(xs);
	free(ws);
	free(bs);
	return ok;
}

/* Replace n's inputs with v[0..nv) (copied: v may point into n). */
static int
set_inputs(Onnx__NodeProto *n, const char *const *v, size_t nv,
    struct err *e)
{
	char **in = calloc(nv ? nv : 1, sizeof *in);

	if (!in)
		return err_nomem(e);
	for (size_t i = 0; i < nv; i++)
		if (!(in[i] = strdup(v[i] ? v[i] : ""))) {
			while (i--)
				free(in[i]);
			free(in);
			return err_nomem(e);
		}
	for (size_t i = 0; i < n->n_input; i++)
		free(n->input[i]);
	free(n->input);
	n->input = in;
	n->n_input = nv;
	return 0;
}

/* n writes the Q's output in place of its float one (kept in c->gone). */
static int
take_output(struct ctx *c, Onnx__NodeProto *n, const struct qt *y,
    struct err *e)
{
	char *o = strdup(y->q), **g;

	if (!o || !(g = realloc(c->gone, (c->ngone + 1) * sizeof *g))) {
		free(o);
		return err_nomem(e);
	}
	c->gone = g;
	c->gone[c->ngone++] = n->output[0];
	n->output[0] = o;
	c->drop[y->node] = 1;
	return 0;
}

static int
set_str(char **dst, const char *s, struct err *e)
{
	char *v = strdup(s);

	if (!v)
		return err_nomem(e);
	free(*dst);
	*dst = v;
	return 0;
}

static void
remove_attr(Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (strcmp(str_or_empty(n->attribute[i]->name), name) == 0) {
			protobuf_c_message_free_unpacked(
			    &n->attribute[i]->base, NULL);
			memmove(&n->attribute[i], &n->attribute[i + 1],
			    (n->n_attribute - i - 1) * sizeof *n->attribute);
			n->n_attribute--;
			return;
		}
}

/*
 * Why operand t cannot be read quantized by the QLinear op: NULL if it
 * can. per_axis: the axis per-channel parameters may have, -1 none.
 */
static const char *
operand_problem(const struct qt *t, int per_axis, int want_dt, char *buf,
    size_t size)
{
	if (!is_8bit(t->dtype)) {
		snprintf(buf, size, "%s tensor %s: QLinear operators "
		    "take 8-bit types only", dtype_name(t->dtype) ?
		    dtype_name(t->dtype) : "?", t->q);
		return buf;
	}
	if (want_dt && t->dtype != want_dt)
		return "its inputs and output differ in type";
	if (t->axis >= 0 && t->axis != per_axis)
		return "per-channel parameters the operator cannot take";
	return NULL;
}

/* The quantized operator of node ni, whose output y goes to a Q. */
static int
write_qlinear(struct ctx *c, int ni, const struct spec *sp,
    const struct qt *y, struct err *e)
{
	Onnx__NodeProto *n = c->g->node[ni];
	struct qt in[3], *t;
	const char *why = NULL, **v = NULL;
	char buf[256];
	size_t nv = 0, nin = n->n_input, i;
	int64_t wrank = 0;
	int rc = 0;

	if ((why = operand_problem(y, -1, 0, buf, sizeof buf)))
		goto left;
	if (c->opset < sp->min_opset) {
		why = "the model's opset is below 10";
		goto left;
	}
	if (sp->kind == K_CONCAT) {
		if (!(v = calloc(2 + 3 * nin, sizeof *v)))
			return err_nomem(e);
		v[nv++] = y->s, v[nv++] = y->z;
		for (i = 0; i < nin; i++) {
			struct qt x;

			if (dq_of(c, n->input[i], &x) != 0)
				goto out;	/* a float op, not a group */
			if ((why = operand_problem(&x, -1, y->dtype, buf,
			    sizeof buf)))
				goto left;
			v[nv++] = x.q, v[nv++] = x.s, v[nv++] = x.z;
		}
		goto rewrite;
	}
	if (!(v = calloc(10, sizeof *v)))
		return err_nomem(e);
	/* Operands: the data inputs, all quantized; the bias as int32. */
	for (i = 0; i < (sp->kind == K_UNARY ? 1u : 2u); i++) {
		t = &in[i];
		if (i >= nin || dq_of(c, n->input[i], t) != 0)
			goto out;	/* a float op, not a group */
		if (i == 1 && t->axis >= 0) {
			const Onnx__TensorProto *w = const_of(c, t->q);

			wrank = w ? (int64_t)w->n_dims : 0;
		}
		if ((why = operand_problem(t, i == 0 ? -1 :
		    sp->kind == K_CONV ? 0 : sp->kind == K_MATMUL ?
		    (int)wrank - 1 : sp->kind == K_GEMM ?
		    (attr_int(n, "transB", 0) ? 0 : 1) : -1,
		    sp->kind == K_BINARY || sp->kind == K_UNARY ?
		    y->dtype : 0, buf, sizeof buf)))
			goto left;
		v[nv++] = t->q, v[nv++] = t->s, v[nv++] = t->z;
	}
	if ((sp->kind == K_CONV || sp->kind == K_GEMM) && nin > 2 &&
	    n->input[2][0]) {
		if (dq_of(c, n->input[2], &in[2]) != 0 ||
		    in[2].dtype != DT_INT32) {
			why = "its bias is not quantized to int32";
			goto left;
		}
		if (!bias_scale_ok(c, &in[0], &in[1], &in[2])) {
			why = "its bias scale is not input scale x weight "
			    "scale";
			goto left;
		}
		if (sp->kind == K_GEMM && (attr_float(n, "alpha", 1) != 1 ||
		    attr_float(n, "beta", 1) != 1)) {
			why = "Gemm with a bias and alpha or beta other "
			    "than 1";
			goto left;
		}
	}
	if (sp->kind == K_GEMM)
		v[nv++] = nin > 2 && n->input[2][0] ? in[2].q : "";
	v[nv++] = y->s, v[nv++] = y->z;
	if (sp->kind == K_CONV && nin > 2 && n->input[2][0])
		v[nv++] = in[2].q;
rewrite:
	rc = -1;
	if (set_inputs(n, v, nv, e) != 0 || take_output(c, n, y, e) != 0 ||
	    set_str(&n->op_type, sp->qop, e) != 0 ||
	    set_str(&n->domain, sp->domain, e) != 0)
		goto out;
	if (sp->kind == K_GEMM)
		remove_attr(n, "beta");
	if (strcmp(sp->op, "Softmax") == 0 &&
	    attr_add_int(n, "opset", c->opset, e) != 0)
		goto out;
	rc = 0;
	if (strcmp(sp->domain, MS_DOMAIN) == 0)
		c->ms_used = 1;
	c->r->qlinear++;
	goto out;
left:
	note(c, n, "%s", why);
out:
	free(v);
	return rc;
}

/* A data-movement node reads and writes the quantized tensor. */
static int
write_move(struct ctx *c, int ni, const struct qt *y, struct err *e)
{
	Onnx__NodeProto *n = c->g->node[ni];
	struct qt x;

	if (n->n_input < 1 || dq_of(c, n->input[0], &x) != 0 ||
	    !is_8bit(x.dtype) || x.n != 1 || x.dtype != y->dtype ||
	    !same_const(c, x.s, y->s) || !same_const(c, x.z, y->z))
		return 0;
	if (n->n_output > 1 && n->output[1][0])
		return 0;	/* MaxPool's indices */
	if (set_str(&n->input[0], x.q, e) != 0 ||
	    take_output(c, n, y, e) != 0)
		return -1;
	c->r->moved++;
	return 0;
}

static const struct spec *
spec_of(const Onnx__NodeProto *n)
{
	if (!is_default_domain(n->domain) || !n->op_type)
		return NULL;
	for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
		if (strcmp(specs[i].op, n->op_type) == 0)
			return &specs[i];
	return NULL;
}

/* Free the dropped nodes and close the gaps. */
static void
compact(struct ctx *c)
{
	size_t j = 0;

	for (size_t i = 0; i < c->g->n_node; i++) {
		if (c->drop[i]) {
			protobuf_c_message_free_unpacked(&c->g->node[i]->base,
			    NULL);
			c->r->removed++;
			continue;
		}
		c->g->node[j++] = c->g->node[i];
	}
	c->g->n_node = j;
	memset(c->drop, 0, j ? j : 1);
}

static int
is_gone(const struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->ngone; i++)
		if (strcmp(c->gone[i], name) == 0)
			return 1;
	return 0;
}

/* Drop initializers nothing reads and value_info of rewritten outputs. */
static void
drop_unused(struct ctx *c)
{
	Onnx__GraphProto *g = c->g;
	size_t j = 0;

	for (size_t i = 0; i < g->n_initializer; i++) {
		const struct graph_value *v = graph_value(c->gr,
		    g->initializer[i]->name);

		if (v && v->nconsumers == 0 && !v->is_output &&
		    v->kind == VALUE_INITIALIZER && is_gone(c, v->name)) {
			protobuf_c_message_free_unpacked(
			    &g->initializer[i]->base, NULL);
			continue;
		}
		g->initializer[j++] = g->initializer[i];
	}
	g->n_initializer = j;
	for (size_t i = j = 0; i < g->n_value_info; i++) {
		if (is_gone(c, str_or_empty(g->value_info[i]->name))) {
			protobuf_c_message_free_unpacked(
			    &g->value_info[i]->base, NULL);
			continue;
		}
		g->value_info[j++] = g->value_info[i];
	}
	g->n_value_info = j;
}

/*
 * DequantizeLinear nodes nothing reads any more, removed; their inputs
 * are candidates for drop_unused().
 */
static int
drop_orphan_dq(struct ctx *c, struct err *e)
{
	for (size_t i = 0; i < c->g->n_node; i++) {
		Onnx__NodeProto *n = c->g->node[i];
		const struct graph_value *v;
		char **g;

		if (!is_qdq_node(n, "DequantizeLinear") || n->n_output < 1 ||
		    !(v = graph_value(c->gr, n->output[0])) ||
		    v->nconsumers > 0 || v->is_output)
			continue;
		c->drop[i] = 1;
		if (!(g = realloc(c->gone, (c->ngone + n->n_input) *
		    sizeof *g)))
			return err_nomem(e);
		c->gone = g;
		for (size_t k = 0; k < n->n_input; k++)
			if (!(c->gone[c->ngone++] = strdup(n->input[k])))
				return err_nomem(e);
	}
	return 0;
}

int
qop_rewrite(struct model *m, qdq_note_fn notefn, void *note_ctx,
    struct qop_report *r, struct err *e)
{
	struct ctx c = { 0 };
	struct qop_report dummy;
	int rc = -1;

	if (!r)
		r = &dummy;
	memset(r, 0, sizeof *r);
	c.m = m;
	c.g = m->proto->graph;
	c.r = r;
	c.note = notefn;
	c.note_ctx = note_ctx;
	c.opset = model_opset(m, "");
	if (!c.g)
		return err_set(e, "%s: no graph", m->path);
	if (!(c.gr = graph_new(c.g, e)))
		return err_prefix(e, "%s", m->path);
	if (!(c.drop = calloc(c.g->n_node ? c.g->n_node : 1, 1))) {
		err_nomem(e);
		goto out;
	}
	/*
	 * In place, node by node: a rewritten node takes its inputs' and
	 * its output's places, so the order stays topological, and the
	 * index stays true of every DequantizeLinear and QuantizeLinear.
	 */
	for (size_t i = 0; i < c.g->n_node; i++) {
		Onnx__NodeProto *n = c.g->node[i];
		const struct spec *sp = spec_of(n);
		struct qt y, x;

		if (!sp || n->n_output < 1 || q_of(&c, n->output[0], &y) != 0)
			continue;
		if (sp->kind == K_MOVE) {
			if (c.opset >= sp->min_opset &&
			    write_move(&c, (int)i, &y, e) != 0)
				goto fail;
			continue;
		}
		/* A group: its first input from a DequantizeLinear. */
		if (n->n_input < 1 || dq_of(&c, n->input[0], &x) != 0)
			continue;
		if (write_qlinear(&c, (int)i, sp, &y, e) != 0)
			goto fail;
	}
	compact(&c);
	if (graph_reindex(c.gr, e) != 0 || drop_orphan_dq(&c, e) != 0)
		goto fail;
	compact(&c);
	if (graph_reindex(c.gr, e) != 0)
		goto fail;
	drop_unused(&c);
	if (c.ms_used && opset_import_add(m->proto, MS_DOMAIN, 1, e) != 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	err_prefix(e, "%s", m->path);
out:
	for (size_t i = 0; i < c.ngone; i++)
		free(c.gone[i]);
	free(c.gone);
	free(c.drop);
	graph_free(c.gr);
	return rc;
}
