/*
 * dynwrite: see dynwrite.h. Names follow ONNX Runtime's quantize_dynamic:
 * X_quantized, X_scale, X_zero_point, W_quantized, Y_output_quantized;
 * every new name goes through graph_unique_name().
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "dynwrite.h"
#include "graph.h"
#include "opset.h"
#include "qparams.h"
#include "strmap.h"
#include "util.h"
#include "weights.h"

#define DYN_OPSET 11		/* DynamicQuantizeLinear */
#define MS_DOMAIN "com.microsoft"	/* DynamicQuantizeLSTM */

/* The run-time quantization of one activation. */
struct dq {
	char *q, *s, *z;
};

struct ctx {
	struct model *m;
	Onnx__GraphProto *g;
	struct graph *gr;
	const struct qdq_plan *p;
	const struct qdq_opts *o;
	struct qdq_report *rep;
	struct strmap *byname;		/* stream node name -> index */
	struct strmap *acts;		/* activation -> index in dq */
	struct dq *dq;
	size_t ndq, capdq;
	size_t norig;			/* nodes before the rewrite */
	size_t *first, *end;		/* per node: its new nodes; end 0 */
	char **drop;			/* float weights to remove if unread */
	size_t ndrop, capdrop;
};

/* What a dynamic node is, once checked. */
struct dnode {
	const struct dynamic_rec *d;
	Onnx__NodeProto *n;
	int conv, gemm, lstm, attn, trans_b;
	float alpha, beta;
	const char *x, *bias;		/* bias: NULL for none */
	const struct qparam *q, *rq;	/* rq: an LSTM's R */
	struct tensor w, r;		/* the float weights */
};

static void
note(struct ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
note(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (c->o == NULL || c->o->note == NULL)
		return;
	va_start(ap, fmt);
	s = str_vfmt(fmt, ap);
	va_end(ap);
	if (s)
		c->o->note(c->o->note_ctx, s);
	free(s);
}

static int
rec_err(struct ctx *c, const struct dynamic_rec *d, struct err *e,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
rec_err(struct ctx *c, const struct dynamic_rec *d, struct err *e,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, fmt, ap);
	va_end(ap);
	return err_prefix(e, "%s:%ld: node %s", qdq_plan_file(c->p), d->line,
	    d->node);
}

static int
is_graph_input(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_input; i++)
		if (strcmp(str_or_empty(g->input[i]->name), name) == 0)
			return 1;
	return 0;
}

/* A constant of the graph that is not an input: 1, else 0. */
static int
is_constant(struct ctx *c, const char *name)
{
	const struct graph_value *v = graph_value(c->gr, name);

	return v && v->kind == VALUE_INITIALIZER && v->init &&
	    !is_graph_input(c->g, name);
}

/* Whether every channel of q has the same zero point. */
static int
one_zero_point(const struct qparam *q)
{
	for (size_t i = 1; i < q->n; i++)
		if (q->zp[i] != q->zp[0])
			return 0;
	return 1;
}

/*
 * Whether ORT's DynamicQuantizeLSTM takes q's zero points for an LSTM
 * weight of `dirs` directions: one value per direction, or per gate row
 * (axis 1) all 0 for int8 and all equal for uint8.
 */
static int
lstm_zero_points_ok(const struct qparam *q, int64_t dirs)
{
	if (q->axis <= 0 || (int64_t)q->n == dirs)
		return 1;
	return one_zero_point(q) && (q->type == DT_UINT8 || q->zp[0] == 0);
}

/*
 * The LSTM of dn (see check_node): its R constant with a weight record,
 * both float of rank 3, time-major, parameters per tensor, per
 * direction (axis 0) or per gate row (axis 1) with zero points ORT
 * takes.
 */
static int
check_lstm(struct ctx *c, struct dnode *dn, struct err *e)
{
	const struct dynamic_rec *d = dn->d;
	const char *rname = dn->n->n_input > 2 ? str_or_empty(dn->n->input[2])
	    : "";
	const struct qparam_rec *qr = qdq_plan_qparam(c->p, rname);
	const struct qparam *q[2];
	const struct tensor *t[2];

	if (!*rname || !is_constant(c, rname)) {
		note(c, "%s (LSTM): its R is not a constant: left in float",
		    d->node);
		return 1;
	}
	if (!qr || qr->role != ROLE_WEIGHT)
		return rec_err(c, d, e, "no qparam record of role weight for "
		    "%s (R)", rname);
	dn->rq = &qr->q;
	if (dn->rq->type != DT_INT8 && dn->rq->type != DT_UINT8)
		return rec_err(c, d, e, "weight %s: type %s: dynamic "
		    "quantization takes int8 or uint8", rname,
		    dtype_name(dn->rq->type));
	if (attr_int(dn->n, "layout", 0) != 0) {
		note(c, "%s (LSTM): layout 1 (batch-major): left in float",
		    d->node);
		return 1;
	}
	if (model_tensor_read(c->m, graph_value(c->gr, d->weight)->init,
	    &dn->w, e) != 0 || model_tensor_read(c->m, graph_value(c->gr,
	    rname)->init, &dn->r, e) != 0)
		return err_prefix(e, "%s: node %s", c->m->path, d->node);
	q[0] = dn->q, q[1] = dn->rq;
	t[0] = &dn->w, t[1] = &dn->r;
	for (int i = 0; i < 2; i++) {
		const char *name = i ? rname : d->weight;

		if (t[i]->dtype != DT_FLOAT || t[i]->rank != 3) {
			note(c, "%s (LSTM): weight %s is not float of rank 3: "
			    "left in float", d->node, name);
			return 1;
		}
		if (q[i]->axis > 1 || (q[i]->axis >= 0 && (int64_t)q[i]->n !=
		    t[i]->dims[q[i]->axis]))
			return rec_err(c, d, e, "weight %s: per-channel "
			    "parameters along axis %d, not per direction (0) "
			    "or gate row (1)", name, q[i]->axis);
		if (!lstm_zero_points_ok(q[i], t[i]->dims[0])) {
			note(c, "%s (LSTM): weight %s: zero points per gate "
			    "row that ORT does not take: left in float",
			    d->node, name);
			return 1;
		}
	}
	return 0;
}

/*
 * The com.microsoft Attention of dn (see check_node): a float weight
 * In x 3H, per tensor or per column, and nothing QAttention lacks (its
 * bias is required; no attention_bias, qkv_hidden_sizes, rotary, as
 * ORT's quantizer leaves those) or our kernels lack (past, present).
 */
static int
check_attention(struct ctx *c, struct dnode *dn, struct err *e)
{
	const Onnx__NodeProto *n = dn->n;
	const char *why = NULL;

	dn->alpha = dn->beta = 1;	/* add_weight() scales by alpha */
	for (size_t i = 4; i < n->n_input; i++)
		if (*str_or_empty(n->input[i]))
			why = "past or attention_bias inputs";
	if (n->n_output > 1 && *str_or_empty(n->output[1]))
		why = "a present output";
	if (n->n_input < 3 || !*str_or_empty(n->input[2]))
		why = "no bias";
	if (attr_find(n, "qkv_hidden_sizes") || attr_int(n, "do_rotary", 0))
		why = "qkv_hidden_sizes or rotary embeddings";
	if (why) {
		note(c, "%s (Attention): %s: left in float", dn->d->node, why);
		return 1;
	}
	if (model_tensor_read(c->m, graph_value(c->gr, dn->d->weight)->init,
	    &dn->w, e) != 0)
		return err_prefix(e, "%s: weight %s", c->m->path,
		    dn->d->weight);
	if (dn->w.dtype != DT_FLOAT || dn->w.rank != 2) {
		note(c, "%s (Attention): weight %s is not float of rank 2: "
		    "left in float", dn->d->node, dn->d->weight);
		return 1;
	}
	if (dn->q->axis >= 0 && (dn->q->axis != 1 ||
	    (int64_t)dn->q->n != dn->w.dims[1]))
		return rec_err(c, dn->d, e, "weight %s: per-channel "
		    "parameters along axis %d, not the output column's 1",
		    dn->d->weight, dn->q->axis);
	return 0;
}

/*
 * Check d's node: 0 and dn filled, 1 to leave it in float (with a note),
 * -1 for a stream that does not fit the model.
 */
static int
check_node(struct ctx *c, const struct dynamic_rec *d, struct dnode *dn,
    struct err *e)
{
	const struct qparam_rec *qr = qdq_plan_qparam(c->p, d->weight);
	Onnx__NodeProto *n;
	const char *op;
	int i, axis_out;

	memset(dn, 0, sizeof *dn);
	dn->d = d;
	if (!strmap_get(c->byname, d->node, &i))
		return rec_err(c, d, e, "not in %s", c->m->path);
	if (c->end[i])
		return rec_err(c, d, e, "a second dynamic record");
	n = dn->n = c->g->node[i];
	op = str_or_empty(n->op_type);
	dn->conv = strcmp(op, "Conv") == 0;
	dn->gemm = strcmp(op, "Gemm") == 0;
	dn->lstm = strcmp(op, "LSTM") == 0;
	dn->attn = strcmp(str_or_empty(n->domain), MS_DOMAIN) == 0 &&
	    strcmp(op, "Attention") == 0;
	if ((*str_or_empty(n->domain) && !dn->attn) || (!dn->conv &&
	    !dn->gemm && !dn->lstm && !dn->attn && strcmp(op, "MatMul") != 0))
		return rec_err(c, d, e, "%s has no dynamic form", op);
	if (n->n_input < 2 || n->n_output < 1 ||
	    strcmp(str_or_empty(n->input[1]), d->weight) != 0)
		return rec_err(c, d, e, "its weight is not %s", d->weight);
	if (!qr || qr->role != ROLE_WEIGHT)
		return rec_err(c, d, e, "no qparam record of role weight for "
		    "%s", d->weight);
	dn->q = &qr->q;
	if (dn->q->type != DT_INT8 && dn->q->type != DT_UINT8)
		return rec_err(c, d, e, "weight %s: type %s: dynamic "
		    "quantization takes int8 or uint8", d->weight,
		    dtype_name(dn->q->type));
	if (!is_constant(c, d->weight))
		return rec_err(c, d, e, "weight %s is not a constant of %s",
		    d->weight, c->m->path);
	if (dn->conv && !one_zero_point(dn->q))
		return rec_err(c, d, e, "ConvInteger takes one weight zero "
		    "point, %s has one per channel (use symmetric weights)",
		    d->weight);
	dn->x = str_or_empty(n->input[0]);
	if (dn->lstm)
		return check_lstm(c, dn, e);
	if (dn->attn)
		return check_attention(c, dn, e);
	dn->bias = n->n_input > 2 && *str_or_empty(n->input[2]) ?
	    n->input[2] : NULL;
	dn->trans_b = dn->gemm && attr_int(n, "transB", 0);
	dn->alpha = dn->gemm ? attr_float(n, "alpha", 1) : 1;
	dn->beta = dn->gemm ? attr_float(n, "beta", 1) : 1;
	if (dn->gemm && attr_int(n, "transA", 0)) {
		note(c, "%s (Gemm): transA: left in float", d->node);
		return 1;
	}
	if (dn->bias && (dn->conv || dn->beta != 1) &&
	    !is_constant(c, dn->bias)) {
		note(c, "%s (%s): its bias is not a constant: left in float",
		    d->node, op);
		return 1;
	}
	if (model_tensor_read(c->m, graph_value(c->gr, d->weight)->init,
	    &dn->w, e) != 0)
		return err_prefix(e, "%s: weight %s", c->m->path, d->weight);
	if (dn->w.dtype != DT_FLOAT) {
		note(c, "%s (%s): weight %s is %s: left in float", d->node, op,
		    d->weight, dtype_name(dn->w.dtype));
		tensor_release(&dn->w);
		return 1;
	}
	/* The output channel: Conv's 0, Gemm's N, MatMul's last. */
	axis_out = dn->conv || dn->trans_b ? 0 : dn->w.rank - 1;
	if (dn->q->axis >= 0 && (dn->q->axis != axis_out ||
	    (int64_t)dn->q->n != dn->w.dims[axis_out])) {
		tensor_release(&dn->w);
		return rec_err(c, d, e, "weight %s: per-channel parameters "
		    "along axis %d, not the output channel's %d", d->weight,
		    dn->q->axis, axis_out);
	}
	return 0;
}

/*
 * The quantized weight (transposed for Gemm's transB), its zero point
 * and its scale (times alpha) as initializers.
 */
static int
add_weight(struct ctx *c, const struct dnode *dn, char **wq, char **wz,
    char **ws, struct err *e)
{
	const struct tensor *w = &dn->w;
	const struct qparam *q = dn->q;
	struct tensor t = { 0 }, z = { 0 }, s = { 0 };
	int64_t dims[TENSOR_MAX_RANK], inner = 1, nch = 1, sd[TENSOR_MAX_RANK];
	int one = one_zero_point(q), srank = 0, rc = -1;

	memcpy(dims, w->dims, sizeof dims);
	if (dn->trans_b && w->rank == 2)
		dims[0] = w->dims[1], dims[1] = w->dims[0];
	if (q->axis >= 0) {
		nch = w->dims[q->axis];
		for (int k = q->axis + 1; k < w->rank; k++)
			inner *= w->dims[k];
	}
	if (tensor_alloc(&t, q->type, w->rank, dims, e) != 0)
		return -1;
	for (int64_t i = 0; i < w->nelem; i++) {
		size_t ch = q->axis >= 0 ? (size_t)(i / inner % nch) : 0;
		int64_t at = dn->trans_b ? i % w->dims[1] * w->dims[0] +
		    i / w->dims[1] : i;

		tensor_set(&t, at, qparams_quantize(((const float *)
		    w->data)[i], q->scale[ch], q->zp[ch], q->type));
	}
	if (q->n > 1) {
		/* Along the output: Conv's axis 1 of N x M x ..., else last. */
		sd[0] = (int64_t)q->n;
		srank = dn->conv ? w->rank - 1 : 1;
		for (int k = 1; k < srank; k++)
			sd[k] = 1;
	}
	if (tensor_alloc(&s, DT_FLOAT, srank, sd, e) != 0 ||
	    tensor_alloc(&z, q->type, one ? 0 : 1, sd, e) != 0)
		goto out;
	for (size_t i = 0; i < q->n; i++) {
		tensor_set(&s, (int64_t)i, q->scale[i] * dn->alpha);
		if (!one)
			tensor_set(&z, (int64_t)i, q->zp[i]);
	}
	if (one)
		tensor_set(&z, 0, q->zp[0]);
	if ((*wq = graph_add_tensor(c->gr, dn->d->weight, "_quantized", &t,
	    e)) != NULL &&
	    (*wz = graph_add_tensor(c->gr, dn->d->weight, "_zero_point", &z,
	    e)) != NULL &&
	    (*ws = graph_add_tensor(c->gr, dn->d->weight, "_scale", &s, e))
	    != NULL)
		rc = 0;
out:
	tensor_release(&t);
	tensor_release(&z);
	tensor_release(&s);
	return rc;
}

/* Add a node with one output named base + suffix (or out); its name. */
static char *
add_node(struct ctx *c, const char *op, const char *const *in, int nin,
    const char *base, const char *suffix, const char *out,
    Onnx__NodeProto **np, struct err *e)
{
	char *o = out ? strdup(out) : NULL, *b = str_cat(base, suffix);
	char *nm = b ? graph_unique_name(c->gr, b) : NULL;
	const char *outs[1];
	Onnx__NodeProto *n = NULL;

	if (!out && b)
		o = graph_unique_name(c->gr, b);
	if (o && nm) {
		outs[0] = o;
		n = graph_add_node(c->gr, op, "", nm, in, nin, outs, 1, e);
	} else
		err_nomem(e);
	free(b);
	free(nm);
	if (np)
		*np = n;
	if (n == NULL) {
		free(o);
		return NULL;
	}
	return o;
}

/* The DynamicQuantizeLinear of activation x, added on first use. */
static const struct dq *
act_dq(struct ctx *c, const char *x, struct err *e)
{
	struct dq *d;
	const char *in[1] = { x }, *outs[3];
	char *nm;
	int i;

	if (strmap_get(c->acts, x, &i))
		return &c->dq[i];
	if (array_grow(&c->dq, &c->capdq, c->ndq, sizeof *c->dq) != 0 ||
	    strmap_put(c->acts, x, (int)c->ndq) != 0) {
		err_nomem(e);
		return NULL;
	}
	d = &c->dq[c->ndq++];
	d->q = str_fmt("%s_quantized", x);
	d->s = str_fmt("%s_scale", x);
	d->z = str_fmt("%s_zero_point", x);
	nm = str_fmt("%s_QuantizeLinear", x);
	if (!d->q || !d->s || !d->z || !nm) {
		free(nm);
		err_nomem(e);
		return NULL;
	}
	/* Unique names, as graph_unique_name gives them. */
	for (char **p = &d->q; p <= &d->z; p++) {
		char *u = graph_unique_name(c->gr, *p);

		free(*p);
		if ((*p = u) == NULL) {
			free(nm);
			err_nomem(e);
			return NULL;
		}
	}
	outs[0] = d->q, outs[1] = d->s, outs[2] = d->z;
	{
		char *u = graph_unique_name(c->gr, nm);

		free(nm);
		if (u == NULL || graph_add_node(c->gr, "DynamicQuantizeLinear",
		    "", u, in, 1, outs, 3, e) == NULL) {
			free(u);
			if (u == NULL)
				err_nomem(e);
			return NULL;
		}
		free(u);
	}
	c->rep->acts++;
	c->rep->quantize++;
	return d;
}

/* Remove constant name at the end if nothing reads it then. */
static int
drop_later(struct ctx *c, const char *name, struct err *e)
{
	if (array_grow(&c->drop, &c->capdrop, c->ndrop, sizeof *c->drop) != 0
	    || (c->drop[c->ndrop] = strdup(name)) == NULL)
		return err_nomem(e);
	c->ndrop++;
	return 0;
}

/* The bias to add: Conv's B as [M,1,...], Gemm's beta * C, or C. */
static char *
bias_input(struct ctx *c, const struct dnode *dn, struct err *e)
{
	struct tensor b = { 0 };
	char *name;

	if (!dn->conv && dn->beta == 1)
		return strdup(dn->bias);
	if (model_tensor_read(c->m, graph_value(c->gr, dn->bias)->init, &b,
	    e) != 0)
		return NULL;
	if (b.dtype != DT_FLOAT) {
		tensor_release(&b);
		err_set(e, "bias %s is not float", dn->bias);
		return NULL;
	}
	if (dn->conv) {
		b.rank = dn->w.rank - 1;
		b.dims[0] = b.nelem;
		for (int k = 1; k < b.rank; k++)
			b.dims[k] = 1;
	}
	for (int64_t i = 0; !dn->conv && i < b.nelem; i++)
		((float *)b.data)[i] *= dn->beta;
	name = graph_add_tensor(c->gr, dn->bias, dn->conv ? "_reshaped" :
	    "_scaled", &b, e);
	tensor_release(&b);
	if (name && drop_later(c, dn->bias, e) != 0) {
		free(name);
		return NULL;
	}
	return name;
}

/* The nodes that compute dn's output dynamically, appended. */
static int
rewrite(struct ctx *c, struct dnode *dn, struct err *e)
{
	Onnx__NodeProto *n = dn->n, *in;
	const char *y = n->output[0];
	const struct dq *d;
	char *wq = NULL, *wz = NULL, *ws = NULL, *yi = NULL, *yc = NULL;
	char *sc = NULL, *ym = NULL, *b = NULL;
	int rc = -1;

	if (add_weight(c, dn, &wq, &wz, &ws, e) != 0 ||
	    (d = act_dq(c, dn->x, e)) == NULL)
		goto out;
	{
		const char *a[4] = { d->q, wq, d->z, wz };

		if ((yi = add_node(c, dn->conv ? "ConvInteger" :
		    "MatMulInteger", a, 4, y, "_output_quantized", NULL, &in,
		    e)) == NULL)
			goto out;
	}
	if (dn->conv) {
		/* Conv's attributes are ConvInteger's: moved over. */
		in->attribute = n->attribute;
		in->n_attribute = n->n_attribute;
		n->attribute = NULL;
		n->n_attribute = 0;
	}
	{
		const char *a1[1] = { yi }, *a2[2] = { d->s, ws };

		if ((yc = add_node(c, "Cast", a1, 1, yi, "_cast_output", NULL,
		    &in, e)) == NULL ||
		    attr_add_int(in, "to", DT_FLOAT, e) != 0 ||
		    (sc = add_node(c, "Mul", a2, 2, y, "_scales_mul", NULL,
		    NULL, e)) == NULL)
			goto out;
	}
	{
		const char *a[2] = { yc, sc };

		if ((ym = add_node(c, "Mul", a, 2, y, "_scaled", dn->bias ?
		    NULL : y, NULL, e)) == NULL)
			goto out;
	}
	if (dn->bias) {
		const char *a[2] = { ym, NULL };
		char *sum;

		if ((b = bias_input(c, dn, e)) == NULL)
			goto out;
		a[1] = b;
		if ((sum = add_node(c, "Add", a, 2, y, "_bias_add", y, NULL,
		    e)) == NULL)
			goto out;
		free(sum);
	}
	if (drop_later(c, dn->d->weight, e) != 0)
		goto out;
	c->rep->weights++;
	rc = 0;
out:
	free(wq), free(wz), free(ws), free(yi), free(yc), free(sc), free(ym);
	free(b);
	return rc;
}

/*
 * An LSTM weight w ([dirs, 4*hidden, k]) quantized by q as
 * DynamicQuantizeLSTM takes it, transposed to [dirs, k, 4*hidden], with
 * its scale and zero point per direction ([dirs]) or per direction and
 * gate row ([dirs, 4*hidden]), as initializers named after `name`.
 */
static int
add_lstm_weight(struct ctx *c, const char *name, const struct tensor *w,
    const struct qparam *q, char **wq, char **ws, char **wz, struct err *e)
{
	int64_t D = w->dims[0], G = w->dims[1], K = w->dims[2];
	int64_t dims[3] = { D, K, G }, sd[2] = { D, G };
	int rows = q->axis == 1, rc = -1;
	struct tensor t = { 0 }, s = { 0 }, z = { 0 };

	if (tensor_alloc(&t, q->type, 3, dims, e) != 0 ||
	    tensor_alloc(&s, DT_FLOAT, rows ? 2 : 1, sd, e) != 0 ||
	    tensor_alloc(&z, q->type, rows ? 2 : 1, sd, e) != 0)
		goto out;
	for (int64_t i = 0; i < w->nelem; i++) {
		int64_t d = i / (G * K), g = i / K % G, k = i % K;
		size_t ch = q->axis == 1 ? (size_t)g : q->axis == 0 ?
		    (size_t)d : 0;

		tensor_set(&t, (d * K + k) * G + g, qparams_quantize(((const
		    float *)w->data)[i], q->scale[ch], q->zp[ch], q->type));
	}
	for (int64_t i = 0; i < s.nelem; i++) {
		size_t ch = q->axis == 1 ? (size_t)(i % G) : q->axis == 0 ?
		    (size_t)i : 0;

		tensor_set(&s, i, q->scale[ch]);
		tensor_set(&z, i, q->zp[ch]);
	}
	if ((*wq = graph_add_tensor(c->gr, name, "_quantized", &t, e)) &&
	    (*ws = graph_add_tensor(c->gr, name, "_scale", &s, e)) &&
	    (*wz = graph_add_tensor(c->gr, name, "_zero_point", &z, e)))
		rc = 0;
out:
	tensor_release(&t);
	tensor_release(&s);
	tensor_release(&z);
	return rc;
}

/*
 * dn's LSTM as com.microsoft DynamicQuantizeLSTM: the same inputs with
 * W and R quantized, their scales and zero points after P, the same
 * outputs and attributes (but layout, which it does not have).
 */
static int
rewrite_lstm(struct ctx *c, struct dnode *dn, struct err *e)
{
	Onnx__NodeProto *n = dn->n, *ln;
	const char *in[12];
	char *q[2][3] = { { NULL } }, *nm = NULL;
	int rc = -1;

	if (add_lstm_weight(c, dn->d->weight, &dn->w, dn->q, &q[0][0],
	    &q[0][1], &q[0][2], e) != 0 ||
	    add_lstm_weight(c, n->input[2], &dn->r, dn->rq, &q[1][0],
	    &q[1][1], &q[1][2], e) != 0)
		goto out;
	for (int i = 0; i < 8; i++)
		in[i] = i < (int)n->n_input ? str_or_empty(n->input[i]) : "";
	in[1] = q[0][0], in[2] = q[1][0];
	in[8] = q[0][1], in[9] = q[0][2], in[10] = q[1][1], in[11] = q[1][2];
	if ((nm = graph_unique_name(c->gr, *str_or_empty(n->name) ?
	    n->name : "lstm")) == NULL) {
		err_nomem(e);
		goto out;
	}
	if ((ln = graph_add_node(c->gr, "DynamicQuantizeLSTM", MS_DOMAIN, nm,
	    in, 12, (const char *const *)n->output, (int)n->n_output, e)) ==
	    NULL || opset_import_add(c->m->proto, MS_DOMAIN, 1, e) != 0)
		goto out;
	/* The attributes move over, layout (0 here) left behind. */
	ln->attribute = n->attribute;
	ln->n_attribute = n->n_attribute;
	n->attribute = NULL;
	n->n_attribute = 0;
	for (size_t i = 0; i < ln->n_attribute; i++)
		if (strcmp(str_or_empty(ln->attribute[i]->name), "layout") ==
		    0) {
			protobuf_c_message_free_unpacked(
			    &ln->attribute[i]->base, NULL);
			ln->attribute[i--] = ln->attribute[--ln->n_attribute];
		}
	if (drop_later(c, dn->d->weight, e) != 0 ||
	    drop_later(c, n->input[2], e) != 0)
		goto out;
	c->rep->weights += 2;
	rc = 0;
out:
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 3; k++)
			free(q[i][k]);
	free(nm);
	return rc;
}

/*
 * dn's Attention as com.microsoft QAttention, as ORT's quantize_dynamic
 * writes it: its input quantized by DynamicQuantizeLinear, the weight
 * stored quantized; inputs input, weight, bias, input_scale,
 * weight_scale, mask_index, input_zero_point, weight_zero_point; the
 * same outputs and attributes.
 */
static int
rewrite_attention(struct ctx *c, struct dnode *dn, struct err *e)
{
	Onnx__NodeProto *n = dn->n, *qn;
	const struct dq *d;
	const char *in[8];
	char *wq = NULL, *wz = NULL, *ws = NULL, *nm = NULL;
	int rc = -1;

	if (add_weight(c, dn, &wq, &wz, &ws, e) != 0 ||
	    (d = act_dq(c, dn->x, e)) == NULL)
		goto out;
	in[0] = d->q, in[1] = wq, in[2] = n->input[2], in[3] = d->s;
	in[4] = ws, in[5] = n->n_input > 3 ? str_or_empty(n->input[3]) : "";
	in[6] = d->z, in[7] = wz;
	if ((nm = graph_unique_name(c->gr, *str_or_empty(n->name) ?
	    n->name : "attention")) == NULL) {
		err_nomem(e);
		goto out;
	}
	if ((qn = graph_add_node(c->gr, "QAttention", MS_DOMAIN, nm, in, 8,
	    (const char *const *)n->output, 1, e)) == NULL)
		goto out;
	qn->attribute = n->attribute;
	qn->n_attribute = n->n_attribute;
	n->attribute = NULL;
	n->n_attribute = 0;
	if (drop_later(c, dn->d->weight, e) != 0)
		goto out;
	c->rep->weights++;
	rc = 0;
out:
	free(wq), free(wz), free(ws), free(nm);
	return rc;
}

/* Put each rewritten node's new nodes in its place; free the old. */
static int
reorder(struct ctx *c, struct err *e)
{
	Onnx__GraphProto *g = c->g;
	Onnx__NodeProto **v;
	size_t k = 0;

	if ((v = malloc((g->n_node ? g->n_node : 1) * sizeof *v)) == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < c->norig; i++) {
		if (!c->end[i]) {
			v[k++] = g->node[i];
			continue;
		}
		for (size_t j = c->first[i]; j < c->end[i]; j++)
			v[k++] = g->node[j];
		protobuf_c_message_free_unpacked(&g->node[i]->base, NULL);
	}
	memcpy(g->node, v, k * sizeof *v);
	g->n_node = k;
	free(v);
	return graph_reindex(c->gr, e);
}

/* Remove the float weights nothing reads any more. */
static int
drop_weights(struct ctx *c, struct err *e)
{
	Onnx__GraphProto *g = c->g;

	for (size_t d = 0; d < c->ndrop; d++) {
		const struct graph_value *v = graph_value(c->gr, c->drop[d]);

		if (!v || v->nconsumers || v->is_output)
			continue;
		for (size_t i = 0; i < g->n_initializer; i++)
			if (strcmp(str_or_empty(g->initializer[i]->name),
			    c->drop[d]) == 0) {
				protobuf_c_message_free_unpacked(
				    &g->initializer[i]->base, NULL);
				memmove(&g->initializer[i],
				    &g->initializer[i + 1],
				    (g->n_initializer - i - 1) *
				    sizeof *g->initializer);
				g->n_initializer--;
				break;
			}
		if (graph_reindex(c->gr, e) != 0)
			return -1;
	}
	return 0;
}

/* Raise the model to DynamicQuantizeLinear's opset, or fail. */
static int
raise_opset(struct ctx *c, struct err *e)
{
	int from = model_opset(c->m, ""), n;
	struct err why;

	c->rep->opset_from = c->rep->opset_to = from;
	if (from >= DYN_OPSET)
		return 0;
	if (opset_check(c->m, DYN_OPSET, NULL, &why) != 0)
		return err_set(e, "%s: DynamicQuantizeLinear needs opset %d, "
		    "the model has %d and cannot be raised: %s", c->m->path,
		    DYN_OPSET, from, why.msg);
	if ((n = opset_raise(c->m, DYN_OPSET, NULL, e)) < 0)
		return err_prefix(e, "%s: raising opset %d to %d", c->m->path,
		    from, DYN_OPSET);
	c->rep->rewritten = n;
	c->rep->opset_to = DYN_OPSET;
	note(c, "opset raised from %d to %d (%d nodes rewritten)", from,
	    DYN_OPSET, n);
	return 0;
}

/*
 * Index the nodes by the stream's names, which are those of the model
 * before the opset was raised: names[i] is node was[i], which the raise
 * may have moved (it inserts nodes, in order, and keeps the others).
 */
static int
index_names(struct ctx *c, char **names, Onnx__NodeProto **was,
    size_t nwas, struct err *e)
{
	size_t j = 0;

	for (size_t i = 0; i < nwas; i++) {
		while (j < c->norig && c->g->node[j] != was[i])
			j++;
		if (j == c->norig)
			return err_set(e, "%s: node %s went with the opset",
			    c->m->path, names[i]);
		if (strmap_put(c->byname, names[i], (int)j) != 0)
			return err_nomem(e);
	}
	return 0;
}

static int
apply(struct ctx *c, struct err *e)
{
	int rc;

	for (size_t k = 0; k < qdq_plan_ndynamic(c->p); k++) {
		const struct dynamic_rec *d = qdq_plan_dynamic(c->p, k);
		struct dnode dn;
		size_t start = c->g->n_node;
		int i;

		if ((rc = check_node(c, d, &dn, e)) != 0) {
			tensor_release(&dn.w);
			tensor_release(&dn.r);
			if (rc < 0)
				return -1;
			c->rep->skipped++;
			continue;
		}
		strmap_get(c->byname, d->node, &i);
		rc = dn.lstm ? rewrite_lstm(c, &dn, e) : dn.attn ?
		    rewrite_attention(c, &dn, e) : rewrite(c, &dn, e);
		tensor_release(&dn.w);
		tensor_release(&dn.r);
		if (rc != 0)
			return err_prefix(e, "%s: node %s", c->m->path,
			    d->node);
		c->first[i] = start;
		c->end[i] = c->g->n_node;
	}
	return reorder(c, e) != 0 || drop_weights(c, e) != 0 ? -1 : 0;
}

int
dynwrite_apply(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, struct qdq_report *rep, struct err *e)
{
	struct ctx c = { 0 };
	Onnx__NodeProto **was;
	size_t nwas;
	char **names;
	int rc = -1;

	c.m = m;
	c.g = m->proto->graph;
	c.p = p;
	c.o = o;
	c.rep = rep;
	if (c.g == NULL)
		return err_set(e, "%s: no graph", m->path);
	nwas = c.g->n_node;
	if ((names = weights_node_names(c.g, e)) == NULL)
		return -1;
	if ((was = malloc((nwas ? nwas : 1) * sizeof *was)) == NULL) {
		free(names);
		return err_nomem(e);
	}
	memcpy(was, c.g->node, nwas * sizeof *was);
	if (raise_opset(&c, e) != 0)
		goto out;
	c.norig = c.g->n_node;
	c.first = calloc(c.norig ? c.norig : 1, sizeof *c.first);
	c.end = calloc(c.norig ? c.norig : 1, sizeof *c.end);
	c.byname = strmap_new();
	c.acts = strmap_new();
	if (!c.first || !c.end || !c.byname || !c.acts)
		err_nomem(e);
	else if ((c.gr = graph_new(c.g, e)) == NULL)
		err_prefix(e, "%s", m->path);
	else if (index_names(&c, names, was, nwas, e) == 0)
		rc = apply(&c, e);
out:
	free(names);
	free(was);
	graph_free(c.gr);
	for (size_t i = 0; i < c.ndq; i++)
		free(c.dq[i].q), free(c.dq[i].s), free(c.dq[i].z);
	free(c.dq);
	for (size_t i = 0; i < c.ndrop; i++)
		free(c.drop[i]);
	free(c.drop);
	free(c.first);
	free(c.end);
	strmap_free(c.byname);
	strmap_free(c.acts);
	return rc;
}
