/*
 * qdqmatch: the quantized model's Q/DQ pairs and the fp32 tensors they
 * stand for. See qdqmatch.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "qdqmatch.h"
#include "util.h"

static const char *const role_names[] = { "act", "weight", "bias" };

const char *
qdqmatch_role_name(int role)
{
	return role >= 0 && role < 3 ? role_names[role] : "?";
}

static int
is_op(const Onnx__NodeProto *n, const char *op)
{
	const char *d = str_or_empty(n->domain);

	return strcmp(str_or_empty(n->op_type), op) == 0 && (*d == '\0' ||
	    strcmp(d, "ai.onnx") == 0 || strcmp(d, "com.microsoft") == 0);
}

static const Onnx__NodeProto *
node_at(const struct graph *g, int i)
{
	return graph_proto(g)->node[i];
}

/* The QuantizeLinear node producing name in g, or NULL. */
static const Onnx__NodeProto *
q_producer(const struct graph *g, const char *name)
{
	const struct graph_value *v = graph_value(g, name);

	if (!v || v->producer < 0 || !is_op(node_at(g, v->producer),
	    "QuantizeLinear"))
		return NULL;
	return node_at(g, v->producer);
}

/* A value the fp32 run computes (and observes): an input or a node output. */
static int
is_activation(const struct graph *g, const char *name)
{
	const struct graph_value *v = graph_value(g, name);

	return v && (v->kind == VALUE_INPUT || v->kind == VALUE_NODE);
}

static int
is_constant(const struct graph *g, const char *name)
{
	const struct graph_value *v = graph_value(g, name);

	return v && v->init;
}

/*
 * The node of g that corresponds to QMODEL's node qn: the producer of one
 * of qn's output names, of the same op type; else the node of the same
 * name and op type.
 */
static const Onnx__NodeProto *
node_like(const struct graph *g, const Onnx__NodeProto *qn)
{
	const Onnx__GraphProto *gp = graph_proto(g);

	for (size_t i = 0; i < qn->n_output; i++) {
		const struct graph_value *v = graph_value(g, qn->output[i]);
		const Onnx__NodeProto *p;

		if (!v || v->producer < 0)
			continue;
		p = node_at(g, v->producer);
		if (strcmp(str_or_empty(p->op_type),
		    str_or_empty(qn->op_type)) == 0)
			return p;
	}
	if (!qn->name || !*qn->name)
		return NULL;
	for (size_t i = 0; i < gp->n_node; i++)
		if (gp->node[i]->name &&
		    strcmp(gp->node[i]->name, qn->name) == 0 &&
		    strcmp(str_or_empty(gp->node[i]->op_type),
		    str_or_empty(qn->op_type)) == 0)
			return gp->node[i];
	return NULL;
}

/*
 * Through QMODEL's consumers of dq: the name the corresponding fp32 node
 * reads at the same input slot, if want() accepts it in g.
 */
static const char *
via_consumers(const struct graph *qg, const char *dq, const struct graph *g,
    int (*want)(const struct graph *, const char *))
{
	const struct graph_value *v = graph_value(qg, dq);

	for (int c = 0; v && c < v->nconsumers; c++) {
		const Onnx__NodeProto *qn = node_at(qg, v->consumers[c]), *fn;

		if (!(fn = node_like(g, qn)))
			continue;
		for (size_t s = 0; s < qn->n_input && s < fn->n_input; s++)
			if (strcmp(str_or_empty(qn->input[s]), dq) == 0 &&
			    fn->input[s] && want(g, fn->input[s]))
				return fn->input[s];
	}
	return NULL;
}

/*
 * The fp32 activation a quantized activation stands for: follow Q's
 * input back through DQ -> Q chains (a tensor converted to a second
 * type) to a name the fp32 model computes; else the DQ output's own name
 * (a graph output keeps its name, its producer being renamed); else the
 * input the fp32 twin of a consumer reads.
 */
static const char *
match_activation(const struct qdqmatch *m, const Onnx__NodeProto *qn,
    const char *dq)
{
	const char *name = qn->input[0];

	for (int depth = 0; name && depth < 64; depth++) {
		const struct graph_value *v;
		const Onnx__NodeProto *p, *q;

		if (is_activation(m->fg, name))
			return name;
		v = graph_value(m->qg, name);
		if (!v || v->producer < 0)
			break;
		p = node_at(m->qg, v->producer);
		if (!is_op(p, "DequantizeLinear") || p->n_input < 1 ||
		    !(q = q_producer(m->qg, p->input[0])) || q->n_input < 1)
			break;
		name = q->input[0];
	}
	if (is_activation(m->fg, dq))
		return dq;
	return via_consumers(m->qg, dq, m->fg, is_activation);
}

/* The fp32 constant a quantized weight or bias stands for. */
static const char *
match_constant(const struct qdqmatch *m, const Onnx__NodeProto *qn,
    const char *dq)
{
	const char *name;

	if ((name = via_consumers(m->qg, dq, m->pg, is_constant)))
		return name;
	if (is_constant(m->pg, dq))
		return dq;
	if (qn && qn->n_input > 0 && is_constant(m->pg, qn->input[0]))
		return qn->input[0];
	return NULL;
}

static int
decode_const(const struct model *m, const struct graph *g, const char *name,
    struct tensor *t, struct err *e)
{
	const struct graph_value *v = graph_value(g, name);

	if (!v || !v->init)
		return err_set(e, "%s is not a constant", name);
	return model_tensor_read(m, v->init, t, e);
}

/* Run a QuantizeLinear or DequantizeLinear kernel on x with params p. */
static int
run_kernel(const struct op_def *def, const Onnx__NodeProto *n, int opset,
    const struct tensor *x, const struct tensor *p, int threads,
    struct tensor *out, struct err *e)
{
	const struct tensor *in[3] = { x, p[0].data ? &p[0] : NULL,
	    p[1].data ? &p[1] : NULL };

	memset(out, 0, sizeof *out);
	if (ops_run_once(def, n, opset, in, 3, out, 1, threads, e) < 0) {
		tensor_release(out);
		return -1;
	}
	return 0;
}

/*
 * The integer type of a pair: its zero point's, else Q's output_dtype,
 * else uint8.
 */
static int
pair_type(const struct qdqmatch_pair *q, const Onnx__NodeProto *qn)
{
	if (q->dqp[1].data)
		return q->dqp[1].dtype;
	if (qn) {
		for (size_t i = 0; i < qn->n_attribute; i++)
			if (strcmp(str_or_empty(qn->attribute[i]->name),
			    "output_dtype") == 0 && qn->attribute[i]->i)
				return (int)qn->attribute[i]->i;
	}
	return DT_UINT8;
}

static int
load_params(const struct qdqmatch *m, const Onnx__NodeProto *n,
    struct tensor *p, struct err *e)
{
	for (size_t i = 1; i < 3 && i < n->n_input; i++) {
		if (!n->input[i] || !*n->input[i])
			continue;
		if (!is_constant(m->qg, n->input[i]))
			return 1;
		if (decode_const(m->qm, m->qg, n->input[i], &p[i - 1], e) < 0)
			return -1;
	}
	return 0;
}

/* Dequantize a weight or bias once and compare it with the fp32 constant. */
static int
same_tensor(const struct tensor *a, const struct tensor *b)
{
	if (!a->data || !b->data)
		return !a->data && !b->data;
	return a->dtype == b->dtype && shape_equal(a, b) &&
	    memcmp(a->data, b->data,
	    (size_t)a->nelem * dtype_size(a->dtype)) == 0;
}

/*
 * A DequantizeLinear that reads a QuantizeLinear's integers with another
 * scale (onnx-qdq-insert --fold-scales: a Div or Mul by a constant c
 * folded into it) stands for the Div's or Mul's output, x / c or x * c,
 * not for Q's input x. Quantizing that value with the DQ's own scale and
 * zero point gives the same integers, so the pair is measured as one
 * with the DQ's parameters on both sides: 1 when q is such a pair (its
 * qp replaced by a copy of dqp), 0 when not, -1 with e.
 */
static int
refold(struct qdqmatch_pair *q, struct err *e)
{
	if (!q->qp[0].data || !q->dqp[0].data ||
	    same_tensor(&q->qp[0], &q->dqp[0]))
		return 0;
	tensor_release_n(q->qp, 2);
	for (int i = 0; i < 2; i++)
		if (q->dqp[i].data && tensor_copy(&q->qp[i], &q->dqp[i],
		    e) < 0)
			return -1;
	return 1;
}

/* The fp32 activation a refolded pair (refold()) stands for. */
static const char *
folded_activation(const struct qdqmatch *m, const char *dq)
{
	if (is_activation(m->fg, dq))
		return dq;
	return via_consumers(m->qg, dq, m->fg, is_activation);
}

/*
 * An activation already listed with the same fp32 source and parameters
 * (one pair per reader): reported once.
 */
static int
duplicate(const struct qdqmatch *m, const struct qdqmatch_pair *q)
{
	for (int i = 0; i < m->npairs; i++) {
		const struct qdqmatch_pair *o = &m->pairs[i];

		if (o->role == QDQMATCH_ACT && strcmp(o->name, q->name) == 0 &&
		    same_tensor(&o->dqp[0], &q->dqp[0]) &&
		    same_tensor(&o->dqp[1], &q->dqp[1]) &&
		    same_tensor(&o->qp[0], &q->qp[0]) &&
		    same_tensor(&o->qp[1], &q->qp[1]))
			return 1;
	}
	return 0;
}

/* A Clip bound: an attribute before opset 11, a constant input since. */
static int
clip_bound(const struct qdqmatch *m, const Onnx__NodeProto *n, int slot,
    const char *attr, double def, double *v, struct err *e)
{
	struct tensor t = { 0 };
	int64_t n1;

	*v = def;
	if (model_opset(m->fm, "") < 11) {
		if (attr_find(n, attr))
			*v = attr_float(n, attr, 0);
		return 0;
	}
	if ((size_t)slot >= n->n_input || !n->input[slot] || !*n->input[slot])
		return 0;
	if (!is_constant(m->fg, n->input[slot]))
		return 1;
	if (decode_const(m->fm, m->fg, n->input[slot], &t, e) < 0)
		return -1;
	if ((n1 = t.nelem) == 1)
		*v = tensor_get(&t, 0);
	tensor_release(&t);
	return n1 == 1 ? 0 : 1;
}

/*
 * A tensor that only Relu or Clip nodes of the same bounds read (and that
 * is no graph output) matters downstream only within those bounds; the
 * quantizer may use that (ORT gives such a tensor the clamp's range), so
 * it is compared clamped, both sides. 1 and the bounds when so.
 */
static int
clamp_of(const struct qdqmatch *m, const char *name, double *lo,
    double *hi, struct err *e)
{
	const struct graph_value *v = graph_value(m->fg, name);

	if (!v || v->is_output || v->nconsumers == 0)
		return 0;
	for (int c = 0; c < v->nconsumers; c++) {
		const Onnx__NodeProto *n = node_at(m->fg, v->consumers[c]);
		double a, b;
		int r;

		if (is_op(n, "Relu"))
			a = 0, b = INFINITY;
		else if (is_op(n, "Clip") && n->n_input > 0 &&
		    strcmp(str_or_empty(n->input[0]), name) == 0) {
			r = clip_bound(m, n, 1, "min", -INFINITY, &a, e);
			if (r == 0)
				r = clip_bound(m, n, 2, "max", INFINITY, &b,
				    e);
			if (r != 0)
				return r < 0 ? -1 : 0;
		} else
			return 0;
		if (c > 0 && (a != *lo || b != *hi))
			return 0;
		*lo = a;
		*hi = b;
	}
	return 1;
}

static int
add_source(struct qdqmatch *m, struct qdqmatch_pair *q, int qi, struct err *e)
{
	struct qdqmatch_source *s;
	int k, *nq;

	if (!strmap_get(m->by_src, q->name, &k)) {
		k = m->nsources++;
		if (strmap_put(m->by_src, q->name, k) < 0)
			return err_nomem(e);
		s = &m->sources[k];
		memset(s, 0, sizeof *s);
		s->name = q->name;
		if ((s->clamp = clamp_of(m, q->name, &s->lo, &s->hi, e)) < 0)
			return -1;
	}
	s = &m->sources[k];
	if (!(nq = realloc(s->pairs, (size_t)(s->npairs + 1) * sizeof *nq)))
		return err_nomem(e);
	s->pairs = nq;
	s->pairs[s->npairs++] = qi;
	q->src = k;
	return 0;
}

/* Where a quantized tensor sits: its first reader, else its DQ node. */
static int
graph_position(const struct graph *qg, const int *rank, int dqnode,
    const char *dq)
{
	const struct graph_value *v = graph_value(qg, dq);
	int best = rank[dqnode];

	for (int c = 0; v && c < v->nconsumers; c++)
		if (c == 0 || rank[v->consumers[c]] < best)
			best = rank[v->consumers[c]];
	return best;
}

/* Find every DequantizeLinear of QMODEL and what it stands for. */
static int
match_all(struct qdqmatch *m, struct err *e)
{
	Onnx__GraphProto *qgp = m->qm->proto->graph;
	const int *topo;
	int *rank = NULL, nn;

	if (!qgp || !m->fm->proto->graph || !m->pm->proto->graph)
		return err_set(e, "model without a graph");
	nn = (int)qgp->n_node;
	if (!(m->qg = graph_new(qgp, e)) ||
	    !(m->fg = graph_new(m->fm->proto->graph, e)) ||
	    !(m->pg = graph_new(m->pm->proto->graph, e)))
		return -1;
	m->pairs = calloc((size_t)nn + 1, sizeof *m->pairs);
	m->sources = calloc((size_t)nn + 1, sizeof *m->sources);
	m->unmatched = calloc((size_t)nn + 1, sizeof *m->unmatched);
	rank = calloc((size_t)nn + 1, sizeof *rank);
	m->by_src = strmap_new();
	m->by_dq = strmap_new();
	if (!m->pairs || !m->sources || !m->unmatched || !rank || !m->by_src ||
	    !m->by_dq) {
		free(rank);
		return err_nomem(e);
	}
	topo = graph_topo(m->qg);
	for (int i = 0; i < nn; i++)
		rank[topo[i]] = i;
	for (int k = 0; k < nn; k++) {
		int ni = topo[k];
		const Onnx__NodeProto *dn = qgp->node[ni], *qn;
		const char *dq, *qin, *dom;
		struct qdqmatch_pair *q = &m->pairs[m->npairs];
		int r;

		if (!is_op(dn, "DequantizeLinear") || dn->n_input < 1 ||
		    dn->n_output < 1 || !dn->output[0] || !*dn->output[0])
			continue;
		dq = dn->output[0];
		qn = q_producer(m->qg, dn->input[0]);
		if (qn)
			qin = qn->n_input > 0 ? qn->input[0] : NULL;
		else
			qin = dn->input[0];
		/* Neither a Q -> DQ pair nor a stored weight: not ours. */
		if (!qin || (!qn && !is_constant(m->qg, qin)))
			continue;
		memset(q, 0, sizeof *q);
		q->src = -1;
		q->dq = dq;
		q->qin = qin;
		q->dqnode = dn;
		q->qnode = qn;
		q->order = graph_position(m->qg, rank, ni, dq);
		dom = str_or_empty(dn->domain);
		q->dqopset = model_opset(m->qm, dom);
		if (!(q->dqdef = ops_find(dom, dn->op_type)))
			continue;
		if (qn) {
			dom = str_or_empty(qn->domain);
			q->qopset = model_opset(m->qm, dom);
			if (!(q->qdef = ops_find(dom, qn->op_type)))
				continue;
		}
		r = load_params(m, dn, q->dqp, e);
		if (qn && r == 0)
			r = load_params(m, qn, q->qp, e);
		if (r < 0) {
			tensor_release_n(q->qp, 2);
			tensor_release_n(q->dqp, 2);
			goto fail;
		}
		q->has_own = r == 0;
		q->qtype = pair_type(q, qn);
		if (!is_constant(m->qg, qin)) {
			q->role = QDQMATCH_ACT;
			if (qn && q->has_own && (r = refold(q, e)) < 0) {
				tensor_release_n(q->qp, 2);
				tensor_release_n(q->dqp, 2);
				goto fail;
			}
			if (!(q->name = r > 0 ? folded_activation(m, dq) :
			    match_activation(m, qn, dq))) {
				m->unmatched[m->nunmatched++] = dq;
				tensor_release_n(q->qp, 2);
				tensor_release_n(q->dqp, 2);
				continue;
			}
			if (duplicate(m, q)) {
				tensor_release_n(q->qp, 2);
				tensor_release_n(q->dqp, 2);
				continue;
			}
			if (strmap_put(m->by_dq, dq, m->npairs) < 0 ||
			    add_source(m, q, m->npairs, e) < 0) {
				m->npairs++;
				goto fail;
			}
			m->npairs++;
			continue;
		}
		q->role = q->qtype == DT_INT32 ? QDQMATCH_BIAS :
		    QDQMATCH_WEIGHT;
		if (!(q->name = match_constant(m, qn, dq)) || !q->has_own) {
			m->unmatched[m->nunmatched++] = dq;
			tensor_release_n(q->qp, 2);
			tensor_release_n(q->dqp, 2);
			continue;
		}
		m->npairs++;
	}
	free(rank);
	return 0;
fail:
	free(rank);
	return -1;
}


int
qdqmatch_init(struct qdqmatch *m, const struct model *fm,
    const struct model *pm, const struct model *qm, struct err *e)
{
	memset(m, 0, sizeof *m);
	m->fm = fm;
	m->pm = pm;
	m->qm = qm;
	if (match_all(m, e) < 0) {
		qdqmatch_free(m);
		return -1;
	}
	return 0;
}

void
qdqmatch_free(struct qdqmatch *m)
{
	for (int i = 0; i < m->npairs; i++) {
		tensor_release_n(m->pairs[i].qp, 2);
		tensor_release_n(m->pairs[i].dqp, 2);
	}
	for (int i = 0; i < m->nsources; i++)
		free(m->sources[i].pairs);
	free(m->pairs);
	free(m->sources);
	free(m->unmatched);
	strmap_free(m->by_src);
	strmap_free(m->by_dq);
	graph_free(m->qg);
	graph_free(m->fg);
	graph_free(m->pg);
	memset(m, 0, sizeof *m);
}

int
qdqmatch_source(const struct qdqmatch *m, const char *name)
{
	int k;

	return m->by_src && strmap_get(m->by_src, name, &k) ? k : -1;
}

int
qdqmatch_pair_of(const struct qdqmatch *m, const char *dq)
{
	int k;

	return m->by_dq && strmap_get(m->by_dq, dq, &k) ? k : -1;
}

int
qdqmatch_run(const struct qdqmatch_pair *p, const struct tensor *x,
    int threads, struct tensor *qv, struct tensor *dq, struct err *e)
{
	memset(dq, 0, sizeof *dq);
	if (p->qnode) {
		if (run_kernel(p->qdef, p->qnode, p->qopset, x, p->qp, threads,
		    qv, e) < 0)
			return -1;
	} else if (tensor_copy(qv, x, e) < 0)
		return -1;
	if (run_kernel(p->dqdef, p->dqnode, p->dqopset, qv, p->dqp, threads,
	    dq, e) < 0) {
		tensor_release(qv);
		return -1;
	}
	return 0;
}

int
qdqmatch_weights(const struct qdqmatch *m, const struct qdqmatch_pair *p,
    struct tensor *ref, struct tensor *stored, struct err *e)
{
	memset(stored, 0, sizeof *stored);
	if (decode_const(m->pm, m->pg, p->name, ref, e) < 0)
		return -1;
	if (decode_const(m->qm, m->qg, p->qin, stored, e) < 0) {
		tensor_release(ref);
		return -1;
	}
	return 0;
}
