/*
 * qdqscale: Div and Mul by a constant folded into quantization scales,
 * Add of a constant into a Conv's bias; see qdqscale.h.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "qdqscale.h"
#include "strmap.h"
#include "tensor.h"
#include "util.h"

struct ctx {
	struct model *m;
	Onnx__GraphProto *g;
	struct graph *gr;
	char *drop;		/* per node: remove it */
	struct strmap *gone;	/* names the removed nodes read or wrote */
	int folded;
};

/* Initializers and Constant outputs; no graph input's default. */
static const Onnx__TensorProto *
const_of(const struct ctx *c, const char *name)
{
	return graph_constant(c->gr, name);
}

static int
scalar_const(const struct ctx *c, const char *name, double *v)
{
	return graph_constant_scalar(c->gr, c->m, name, v);
}

/* A scalar constant, or the DequantizeLinear of one: 0 and *v, or -1. */
static int
scalar_of(const struct ctx *c, const char *name, double *v)
{
	const struct graph_value *gv = graph_value(c->gr, name);
	const Onnx__NodeProto *dq;
	double q, s, z = 0;

	if (gv == NULL)
		return -1;
	if (gv->producer < 0 || gv->kind == VALUE_CONSTANT)
		return scalar_const(c, name, v);
	dq = c->g->node[gv->producer];
	if (!graph_is_op(dq, "DequantizeLinear") || dq->n_input < 2 ||
	    scalar_const(c, dq->input[0], &q) != 0 ||
	    scalar_const(c, dq->input[1], &s) != 0 ||
	    (dq->n_input > 2 && *dq->input[2] &&
	    scalar_const(c, dq->input[2], &z) != 0))
		return -1;
	*v = (q - z) * s;
	return 0;
}

/* The per-tensor DequantizeLinear writing name, with a zero point. */
static const Onnx__NodeProto *
dq_writing(const struct ctx *c, const char *name, int *ni)
{
	const struct graph_value *v = graph_value(c->gr, name);
	const Onnx__NodeProto *dq;
	double s;

	if (v == NULL || v->producer < 0 || c->drop[v->producer])
		return NULL;
	dq = c->g->node[v->producer];
	if (!graph_is_op(dq, "DequantizeLinear") || dq->n_input != 3 ||
	    const_of(c, dq->input[0]) != NULL ||
	    scalar_const(c, dq->input[1], &s) != 0 || !const_of(c,
	    dq->input[2]))
		return NULL;
	*ni = v->producer;
	return dq;
}

/*
 * The QuantizeLinear alone reading y, if per tensor with a zero point of
 * dq's type, in dq's domain, its output read only by DequantizeLinear
 * nodes of that domain (with zero points): its index, or -1.
 */
static int
lone_q(const struct ctx *c, const char *y, const Onnx__NodeProto *dq)
{
	const struct graph_value *v = graph_value(c->gr, y), *qv;
	const Onnx__TensorProto *z, *z1 = const_of(c, dq->input[2]);
	const Onnx__NodeProto *q;
	double s;

	if (v == NULL || v->is_output || v->nconsumers != 1 ||
	    c->drop[v->consumers[0]])
		return -1;
	q = c->g->node[v->consumers[0]];
	if (!graph_is_op(q, "QuantizeLinear") || q->n_input != 3 ||
	    q->n_output != 1 || strcmp(q->input[0], y) != 0 ||
	    scalar_const(c, q->input[1], &s) != 0 ||
	    !(z = const_of(c, q->input[2])) || z->data_type !=
	    z1->data_type || strcmp(str_or_empty(q->domain),
	    str_or_empty(dq->domain)) != 0)
		return -1;
	qv = graph_value(c->gr, q->output[0]);
	if (qv == NULL || qv->is_output || qv->nconsumers < 1)
		return -1;
	for (int i = 0; i < qv->nconsumers; i++) {
		const Onnx__NodeProto *r = c->g->node[qv->consumers[i]];

		if (!graph_is_op(r, "DequantizeLinear") || r->n_input != 3 ||
		    strcmp(r->input[0], q->output[0]) != 0 ||
		    strcmp(str_or_empty(r->domain),
		    str_or_empty(dq->domain)) != 0)
			return -1;
	}
	return v->consumers[0];
}

static int
add_gone(struct ctx *c, char *const *names, size_t n, struct err *e)
{
	for (size_t i = 0; i < n; i++)
		if (strmap_put(c->gone, names[i], 1) != 0)
			return err_nomem(e);
	return 0;
}

static int
drop_node(struct ctx *c, int ni, struct err *e)
{
	const Onnx__NodeProto *n = c->g->node[ni];

	c->drop[ni] = 1;
	if (add_gone(c, n->input, n->n_input, e) != 0)
		return -1;
	return add_gone(c, n->output, n->n_output, e);
}

/* The new scale v in the type of the old one at `like`: its name. */
static char *
add_scale(struct ctx *c, const char *base, const char *like, double v,
    struct err *e)
{
	struct tensor s = { 0 };
	char *name;

	if (graph_constant_read(c->gr, c->m, like, &s, e) != 0)
		return NULL;
	tensor_set(&s, 0, v);
	name = graph_add_tensor(c->gr, base, "_folded_scale", &s, e);
	tensor_release(&s);
	return name;
}

/*
 * Fold node ni if it is such a group: 1 when folded, 0 when left alone,
 * -1 on error.
 */
static int
try_fold(struct ctx *c, int ni, struct err *e)
{
	const Onnx__NodeProto *n = c->g->node[ni], *dq = NULL;
	const struct graph_value *qv;
	int div = graph_is_op(n, "Div"), dqi = -1, qi = -1, slot;
	double k, s;
	char *sname;

	if ((!div && !graph_is_op(n, "Mul")) || n->n_input != 2 ||
	    n->n_output != 1)
		return 0;
	for (slot = 0; slot < (div ? 1 : 2) && dq == NULL; slot++)
		if ((dq = dq_writing(c, n->input[slot], &dqi)) != NULL &&
		    (scalar_of(c, n->input[!slot], &k) != 0 ||
		    !isfinite(k) || !(k > 0)))
			dq = NULL;
	if (dq == NULL || (qi = lone_q(c, n->output[0], dq)) < 0 ||
	    scalar_const(c, dq->input[1], &s) != 0)
		return 0;
	s = div ? s / k : s * k;
	if (!(s >= FLT_MIN && s <= FLT_MAX))
		return 0;
	if ((sname = add_scale(c, n->output[0], dq->input[1], s, e)) == NULL)
		return -1;
	qv = graph_value(c->gr, c->g->node[qi]->output[0]);
	for (int i = 0; i < qv->nconsumers; i++) {
		int r = qv->consumers[i];

		if (graph_rewire_input(c->gr, r, 0, dq->input[0], e) != 0 ||
		    graph_rewire_input(c->gr, r, 1, sname, e) != 0 ||
		    graph_rewire_input(c->gr, r, 2, dq->input[2], e) != 0) {
			free(sname);
			return -1;
		}
	}
	free(sname);
	c->folded++;
	return drop_node(c, ni, e) != 0 || drop_node(c, qi, e) != 0 ? -1 : 1;
}

/*
 * The Conv node alone writing x (its only reader the QuantizeLinear xqi),
 * with a bias read through a DequantizeLinear of an int32 constant that
 * only it reads, per tensor or one scale per element: the Conv's index
 * and *bdqi, or -1.
 */
static int
lone_conv(const struct ctx *c, const char *x, int *bdqi)
{
	const struct graph_value *v = graph_value(c->gr, x), *bv;
	const Onnx__TensorProto *b, *bs;
	const Onnx__NodeProto *n, *bdq;

	if (v == NULL || v->is_output || v->nconsumers != 1 ||
	    v->producer < 0 || c->drop[v->producer])
		return -1;
	n = c->g->node[v->producer];
	if (!graph_is_op(n, "Conv") || n->n_input != 3 || n->n_output != 1 ||
	    !(bv = graph_value(c->gr, n->input[2])) || bv->nconsumers != 1 ||
	    bv->is_output || bv->producer < 0 || c->drop[bv->producer])
		return -1;
	bdq = c->g->node[bv->producer];
	if (!graph_is_op(bdq, "DequantizeLinear") || bdq->n_input < 2 ||
	    !(b = const_of(c, bdq->input[0])) ||
	    b->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ||
	    !(bs = const_of(c, bdq->input[1])) ||
	    (bdq->n_input > 2 && *bdq->input[2] &&
	    !const_of(c, bdq->input[2])))
		return -1;
	*bdqi = bv->producer;
	return v->producer;
}

/*
 * The int32 bias at bdq's input plus k / its scale (per element), as a
 * new initializer rewired into bdq: 1, 0 when a value leaves int32, -1 on
 * error.
 */
static int
shift_bias(struct ctx *c, int bdqi, double k, struct err *e)
{
	const Onnx__NodeProto *bdq = c->g->node[bdqi];
	struct tensor b = { 0 }, s = { 0 };
	char *name = NULL;
	int rc = -1;

	if (graph_constant_read(c->gr, c->m, bdq->input[0], &b, e) != 0 ||
	    graph_constant_read(c->gr, c->m, bdq->input[1], &s, e) != 0)
		goto done;
	rc = 0;
	if (s.nelem != 1 && s.nelem != b.nelem)
		goto done;
	for (int64_t i = 0; i < b.nelem; i++) {
		double q = tensor_get(&b, i) +
		    nearbyint(k / tensor_get(&s, s.nelem == 1 ? 0 : i));

		if (!(q >= INT32_MIN && q <= INT32_MAX))
			goto done;
		tensor_set(&b, i, q);
	}
	rc = -1;
	if (add_gone(c, bdq->input, 1, e) != 0 ||
	    (name = graph_add_tensor(c->gr, bdq->input[0], "_folded_bias", &b,
	    e)) == NULL || graph_rewire_input(c->gr, bdqi, 0, name, e) != 0)
		goto done;
	rc = 1;
done:
	free(name);
	tensor_release(&b);
	tensor_release(&s);
	return rc;
}

/*
 * Fold the Add node ni into the bias of the Conv before it if it is such
 * a group (see qdqscale.h): 1 when folded, 0 when left alone, -1 on
 * error.
 */
static int
try_fold_bias(struct ctx *c, int ni, struct err *e)
{
	const Onnx__NodeProto *n = c->g->node[ni], *dq = NULL, *xq, *yq;
	const struct graph_value *dv, *xv, *yv;
	int dqi = -1, qi, ci, bdqi = -1, slot, r;
	double k, sd, sx, sy, zx, zd;
	char *sname;

	if (!graph_is_op(n, "Add") || n->n_input != 2 || n->n_output != 1)
		return 0;
	for (slot = 0; slot < 2 && dq == NULL; slot++)
		if ((dq = dq_writing(c, n->input[slot], &dqi)) != NULL &&
		    (scalar_of(c, n->input[!slot], &k) != 0 || !isfinite(k)))
			dq = NULL;
	if (dq == NULL || !(dv = graph_value(c->gr, dq->output[0])) ||
	    dv->nconsumers != 1 || dv->is_output ||
	    (qi = lone_q(c, n->output[0], dq)) < 0)
		return 0;
	/* X_q: the QuantizeLinear of the Conv's output, read by dq alone */
	xv = graph_value(c->gr, dq->input[0]);
	if (xv == NULL || xv->is_output || xv->nconsumers != 1 ||
	    xv->producer < 0 || c->drop[xv->producer])
		return 0;
	xq = c->g->node[xv->producer];
	yq = c->g->node[qi];
	if (!graph_is_op(xq, "QuantizeLinear") || xq->n_input != 3 ||
	    strcmp(str_or_empty(xq->domain), str_or_empty(dq->domain)) != 0 ||
	    !const_of(c, xq->input[2]) || const_of(c, xq->input[2])->data_type
	    != const_of(c, dq->input[2])->data_type ||
	    scalar_const(c, xq->input[1], &sx) != 0 ||
	    scalar_const(c, dq->input[1], &sd) != 0 ||
	    scalar_const(c, yq->input[1], &sy) != 0 ||
	    scalar_const(c, xq->input[2], &zx) != 0 ||
	    scalar_const(c, dq->input[2], &zd) != 0 || zx != zd ||
	    (ci = lone_conv(c, xq->input[0], &bdqi)) < 0)
		return 0;
	/* dq reads X_q as r * x; the Conv now writes x + k / r */
	if (!(sx > 0) || !(sd > 0) || !(sy / (sd / sx) >= FLT_MIN &&
	    sy / (sd / sx) <= FLT_MAX))
		return 0;
	if ((r = shift_bias(c, bdqi, k / (sd / sx), e)) <= 0)
		return r;
	if (add_gone(c, xq->input + 1, 2, e) != 0 || (sname = add_scale(c,
	    xq->input[0], xq->input[1], sy / (sd / sx), e)) == NULL)
		return -1;
	r = graph_rewire_input(c->gr, xv->producer, 1, sname, e) != 0 ||
	    graph_rewire_input(c->gr, xv->producer, 2, yq->input[2], e) != 0;
	free(sname);
	yv = graph_value(c->gr, yq->output[0]);
	for (int i = 0; !r && i < yv->nconsumers; i++)
		r = graph_rewire_input(c->gr, yv->consumers[i], 0,
		    dq->input[0], e) != 0;
	if (r)
		return -1;
	c->folded++;
	return drop_node(c, ni, e) != 0 || drop_node(c, qi, e) != 0 ||
	    drop_node(c, dqi, e) != 0 ? -1 : 1;
}

static int
is_gone(const struct ctx *c, const char *name)
{
	return strmap_get(c->gone, name, NULL);
}

/* Remove the dropped nodes; 1 when there were any. */
static int
compact(struct ctx *c, struct err *e)
{
	size_t j = 0, n = c->g->n_node;

	for (size_t i = 0; i < n; i++) {
		if (c->drop[i])
			protobuf_c_message_free_unpacked(&c->g->node[i]->base,
			    NULL);
		else
			c->g->node[j++] = c->g->node[i];
	}
	c->g->n_node = j;
	memset(c->drop, 0, n ? n : 1);
	return j == n ? 0 : graph_reindex(c->gr, e) != 0 ? -1 : 1;
}

/*
 * The DequantizeLinear and Constant nodes that only removed nodes read,
 * removed in turn until none is left.
 */
static int
drop_orphans(struct ctx *c, struct err *e)
{
	int rc;

	do {
		for (size_t i = 0; i < c->g->n_node; i++) {
			const Onnx__NodeProto *n = c->g->node[i];
			const struct graph_value *v;

			if ((!graph_is_op(n, "DequantizeLinear") &&
			    !graph_is_op(n, "Constant")) || n->n_output != 1 ||
			    !is_gone(c, n->output[0]) ||
			    !(v = graph_value(c->gr, n->output[0])) ||
			    v->nconsumers > 0 || v->is_output)
				continue;
			if (drop_node(c, (int)i, e) != 0)
				return -1;
		}
	} while ((rc = compact(c, e)) == 1);
	return rc;
}

/* A value_info of a removed node's output no node writes any more. */
static int
dead_info(const struct ctx *c, const char *name)
{
	const struct graph_value *v = graph_value(c->gr, name);

	return is_gone(c, name) &&
	    (v == NULL || (v->producer < 0 && v->kind == VALUE_NODE));
}

/* The initializers and value_info only removed nodes used. */
static void
drop_unused(struct ctx *c)
{
	Onnx__GraphProto *g = c->g;
	size_t j = 0;

	graph_drop_unread(c->gr, c->gone);
	for (size_t i = 0; i < g->n_value_info; i++) {
		Onnx__ValueInfoProto *vi = g->value_info[i];

		if (dead_info(c, str_or_empty(vi->name)))
			protobuf_c_message_free_unpacked(&vi->base, NULL);
		else
			g->value_info[j++] = vi;
	}
	g->n_value_info = j;
}

typedef int (*try_fn)(struct ctx *, int, struct err *);

static int
fold_all(struct model *m, try_fn try, int *folded, struct err *e)
{
	struct ctx c = { 0 };
	int rc = -1, got;

	c.m = m;
	c.g = m->proto->graph;
	if (c.g == NULL)
		return err_set(e, "%s: no graph", m->path);
	if ((c.gr = graph_new(c.g, e)) == NULL)
		return err_prefix(e, "%s", m->path);
	c.drop = calloc(c.g->n_node ? c.g->n_node : 1, 1);
	if (c.drop == NULL || (c.gone = strmap_new()) == NULL) {
		err_nomem(e);
		goto fail;
	}
	/*
	 * A pass sees the index of the graph before it: a group whose
	 * DequantizeLinear a fold of this pass rewired waits for the next.
	 */
	do {
		got = 0;
		for (size_t i = 0; i < c.g->n_node; i++) {
			int r = c.drop[i] ? 0 : try(&c, (int)i, e);

			if (r < 0)
				goto fail;
			got |= r;
		}
		if (compact(&c, e) < 0 || drop_orphans(&c, e) != 0)
			goto fail;
	} while (got);
	drop_unused(&c);
	if (folded)
		*folded = c.folded;
	rc = 0;
fail:
	if (rc != 0)
		err_prefix(e, "%s", m->path);
	strmap_free(c.gone);
	free(c.drop);
	graph_free(c.gr);
	return rc;
}

int
qdqscale_fold(struct model *m, int *folded, struct err *e)
{
	return fold_all(m, try_fold, folded, e);
}

int
qdqscale_fold_biases(struct model *m, int *folded, struct err *e)
{
	return fold_all(m, try_fold_bias, folded, e);
}
