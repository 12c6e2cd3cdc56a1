/* nbitswrite: weight-only blockwise rewriting. See nbitswrite.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "graph.h"
#include "nbitsq.h"
#include "nbitswrite.h"
#include "opset.h"
#include "util.h"
#include "weights.h"

#define MS_DOMAIN "com.microsoft"
#define QDQ_BLOCK_OPSET 21	/* DequantizeLinear's block_size */
#define PANEL 64		/* weight columns gathered at a time */

struct ctx {
	struct model *m;
	Onnx__GraphProto *g;
	struct graph *gr;
	char **names;			/* the stream's node names */
	Onnx__NodeProto **nodes;	/* names[i]'s node (before opset.h) */
	size_t nnodes;
	const struct nbitswrite_opts *o;
	struct nbitswrite_report *rep;
};

/* One weight's quantized form (see the header for the layouts). */
struct wq {
	int64_t K, N, kb, blob, zp_row;
	int bits, half, sgn, type, block;
	struct nbitsq_opts q;
	struct tensor codes, scales, zps;	/* zps empty: none */
};

static void
note(struct ctx *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!c->o->note)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	c->o->note(c->o->note_ctx, buf);
}

static int
find_node(const struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->nnodes; i++)
		if (strcmp(c->names[i], name) == 0)
			return (int)i;
	return -1;
}

static int
find_init(const struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->g->n_initializer; i++)
		if (strcmp(str_or_empty(c->g->initializer[i]->name), name) == 0)
			return (int)i;
	return -1;
}

static int
is_graph_input(const struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->g->n_input; i++)
		if (strcmp(str_or_empty(c->g->input[i]->name), name) == 0)
			return 1;
	return 0;
}

/* Allocate w's three tensors for a K x N weight quantized as b says. */
static int
wq_init(struct wq *w, const struct blockq_rec *b, int qdq, int64_t K,
    int64_t N, struct err *e)
{
	int64_t d[3];

	memset(w, 0, sizeof *w);
	w->type = b->type;
	w->bits = b->type == DT_INT4 || b->type == DT_UINT4 ? 4 : 8;
	w->half = 1 << (w->bits - 1);
	w->sgn = b->type == DT_INT4 || b->type == DT_INT8;
	w->block = b->block;
	w->K = K, w->N = N;
	w->kb = (K + b->block - 1) / b->block;
	w->blob = (int64_t)b->block * w->bits / 8;
	w->zp_row = (w->kb * w->bits + 7) / 8;
	w->q = (struct nbitsq_opts){ w->bits, b->symmetric, b->method, qdq };
	if (qdq) {
		d[0] = K, d[1] = N;
		if (tensor_alloc(&w->codes, b->type, 2, d, e) < 0)
			return -1;
		d[0] = w->kb;
		if (tensor_alloc(&w->scales, DT_FLOAT, 2, d, e) < 0)
			return -1;
		if (b->symmetric && w->sgn)
			return 0;
		return tensor_alloc(&w->zps, b->type, 2, d, e);
	}
	d[0] = N, d[1] = w->kb, d[2] = w->blob;
	if (tensor_alloc(&w->codes, DT_UINT8, 3, d, e) < 0)
		return -1;
	d[0] = N * w->kb;
	if (tensor_alloc(&w->scales, DT_FLOAT, 1, d, e) < 0)
		return -1;
	if (b->symmetric)
		return 0;
	if (b->method == BLOCKQ_HQQ)
		return tensor_alloc(&w->zps, DT_FLOAT, 1, d, e);
	d[0] = N * w->zp_row;
	return tensor_alloc(&w->zps, DT_UINT8, 1, d, e);
}

static void
wq_release(struct wq *w)
{
	tensor_release(&w->codes);
	tensor_release(&w->scales);
	tensor_release(&w->zps);
}

/* Store block kb of column n: codes q[0..len), scale s, zero z. */
static void
wq_store(struct wq *w, int qdq, int64_t n, int64_t kb, const uint8_t *q,
    int len, float s, float z)
{
	int64_t k0 = kb * w->block;
	int off = w->sgn ? w->half : 0;

	if (qdq) {
		uint8_t *c = w->codes.data;

		for (int i = 0; i < len; i++)
			c[(k0 + i) * w->N + n] = (uint8_t)(q[i] - off);
		((float *)w->scales.data)[kb * w->N + n] = s;
		if (w->zps.data)
			((uint8_t *)w->zps.data)[kb * w->N + n] =
			    (uint8_t)((int)z - off);
		return;
	}
	uint8_t *blob = (uint8_t *)w->codes.data + (n * w->kb + kb) * w->blob;

	for (int i = 0; i < len; i++)
		blob[i * w->bits / 8] |= (uint8_t)(q[i] << (i * w->bits % 8));
	((float *)w->scales.data)[n * w->kb + kb] = s;
	if (w->zps.dtype == DT_FLOAT)
		((float *)w->zps.data)[n * w->kb + kb] = z;
	else if (w->zps.data)
		((uint8_t *)w->zps.data)[n * w->zp_row + kb * w->bits / 8] |=
		    (uint8_t)((int)z << (kb * w->bits % 8));
}

/* Columns [n0, n0 + np) of the K x N floats x into w, through col. */
static void
wq_panel(struct wq *w, int qdq, const float *x, int64_t n0, int64_t np,
    float *col)
{
	uint8_t q[256];
	float s, z;

	for (int64_t k = 0; k < w->K; k++)
		for (int64_t j = 0; j < np; j++)
			col[j * w->K + k] = x[k * w->N + n0 + j];
	for (int64_t j = 0; j < np; j++)
		for (int64_t b = 0; b < w->kb; b++) {
			int64_t k0 = b * w->block;
			int len = (int)(w->K - k0 < w->block ? w->K - k0 :
			    w->block);

			nbitsq_block(&w->q, col + j * w->K + k0, len, q, &s,
			    &z);
			wq_store(w, qdq, n0 + j, b, q, len, s, z);
		}
}

/*
 * Quantize the K x N floats x into w, a panel of columns per task: the
 * panels write apart (codes, scales and zeros of their own columns).
 */
static int
wq_fill(struct wq *w, int qdq, const float *x, struct err *e)
{
	int64_t npanels = (w->N + PANEL - 1) / PANEL;
	int nomem = 0;

	#pragma omp parallel
	{
		float *col = malloc((size_t)(PANEL * w->K) * sizeof *col);

		#pragma omp for schedule(dynamic)
		for (int64_t p = 0; p < npanels; p++) {
			int64_t n0 = p * PANEL;

			if (col)
				wq_panel(w, qdq, x, n0, w->N - n0 < PANEL ?
				    w->N - n0 : PANEL, col);
		}
		if (!col) {
			#pragma omp atomic write
			nomem = 1;
		}
		free(col);
	}
	return nomem ? err_nomem(e) : 0;
}

/* Add t as an initializer named after base + suffix; its name or NULL. */
static char *
add_init(struct ctx *c, const char *base, const char *suffix,
    const struct tensor *t, struct err *e)
{
	Onnx__TensorProto *tp = malloc(sizeof *tp);
	char *want = str_cat(base, suffix), *name = NULL;

	if (tp)
		onnx__tensor_proto__init(tp);
	if (!tp || !want || !(name = graph_unique_name(c->gr, want)) ||
	    !(tp->name = strdup(name))) {
		free(tp);
		free(want);
		free(name);
		err_nomem(e);
		return NULL;
	}
	free(want);
	if (model_tensor_write(tp, t, e) < 0) {
		protobuf_c_message_free_unpacked(&tp->base, NULL);
		free(name);
		return NULL;
	}
	if (graph_add_initializer(c->gr, tp, e) < 0) {
		free(name);
		return NULL;
	}
	return name;
}

static int
set_str(char **dst, const char *s, struct err *e)
{
	char *d = strdup(s);

	if (!d)
		return err_nomem(e);
	free(*dst);
	*dst = d;
	return 0;
}

/* The MatMul becomes MatMulNBits(A, B, scales[, zero points]). */
static int
install_nbits(struct ctx *c, Onnx__NodeProto *nd, const struct wq *w,
    const char *sname, const char *zname, struct err *e)
{
	size_t nin = zname ? 4 : 3;
	char **in = realloc(nd->input, nin * sizeof *in);

	if (!in)
		return err_nomem(e);
	nd->input = in;
	for (size_t i = nd->n_input; i < nin; i++)
		in[i] = NULL;
	nd->n_input = nin;
	if (set_str(&in[2], sname, e) < 0 ||
	    (zname && set_str(&in[3], zname, e) < 0) ||
	    set_str(&nd->op_type, "MatMulNBits", e) < 0 ||
	    set_str(&nd->domain, MS_DOMAIN, e) < 0 ||
	    attr_add_int(nd, "K", w->K, e) < 0 ||
	    attr_add_int(nd, "N", w->N, e) < 0 ||
	    attr_add_int(nd, "bits", w->bits, e) < 0 ||
	    attr_add_int(nd, "block_size", w->block, e) < 0)
		return -1;
	(void)c;
	return 0;
}

/* DequantizeLinear(W, scales[, zero points]) first in the graph -> B. */
static int
install_qdq(struct ctx *c, Onnx__NodeProto *nd, const struct wq *w,
    const char *sname, const char *zname, struct err *e)
{
	const char *ins[3] = { nd->input[1], sname, zname };
	char *base = str_fmt("%s_DequantizeLinear", nd->input[1]), *out = NULL;
	char *nname = NULL;
	const char *outs[1];
	Onnx__NodeProto *dq;
	int rc = -1;

	if (!base || !(out = str_fmt("%s_Output", base)) ||
	    !(nname = graph_unique_name(c->gr, base))) {
		err_nomem(e);
		goto done;
	}
	free(base);
	base = out;
	if (!(out = graph_unique_name(c->gr, base))) {
		err_nomem(e);
		goto done;
	}
	outs[0] = out;
	if (!(dq = graph_add_node(c->gr, "DequantizeLinear", "", nname, ins,
	    zname ? 3 : 2, outs, 1, e)) ||
	    attr_add_int(dq, "axis", 0, e) < 0 ||
	    attr_add_int(dq, "block_size", w->block, e) < 0 ||
	    set_str(&nd->input[1], out, e) < 0)
		goto done;
	/* Constants only in: first, the order stays topological. */
	memmove(c->g->node + 1, c->g->node, (c->g->n_node - 1) *
	    sizeof *c->g->node);
	c->g->node[0] = dq;
	c->rep->dequantize++;
	rc = 0;
done:
	free(base);
	free(out);
	free(nname);
	return rc;
}

/* Whether the model side of b is what it should be; 0 noted. */
static int
check_weight(struct ctx *c, const struct blockq_rec *b,
    Onnx__NodeProto **node, int *init, struct err *e)
{
	int i;

	const struct graph_value *v = graph_value(c->gr, b->name);
	Onnx__NodeProto *nd;

	if ((i = find_node(c, b->node)) < 0)
		return err_set(e, "%s:%ld: node %s is not in %s", c->o->stream,
		    b->line, b->node, c->m->path);
	nd = *node = c->nodes[i];
	if (strcmp(str_or_empty(nd->op_type), "MatMul") != 0 ||
	    str_or_empty(nd->domain)[0] || nd->n_input != 2 ||
	    strcmp(nd->input[1], b->name) != 0)
		return err_set(e, "%s:%ld: node %s is not a MatMul reading %s "
		    "as B", c->o->stream, b->line, b->node, b->name);
	*init = find_init(c, b->name);
	if (!v || *init < 0 || is_graph_input(c, b->name) ||
	    v->nconsumers != 1) {
		note(c, "%s: not an initializer read by %s only: left float",
		    b->name, b->node);
		return 0;
	}
	return 1;
}

static int
apply_one(struct ctx *c, const struct blockq_rec *b, struct err *e)
{
	struct tensor t = { 0 };
	struct model_map map = { NULL, 0, 0 };
	struct wq w;
	Onnx__TensorProto *tp;
	char *sname = NULL, *zname = NULL;
	Onnx__NodeProto *node = NULL;
	int init = -1, rc;
	int64_t bad;

	memset(&w, 0, sizeof w);
	if ((rc = check_weight(c, b, &node, &init, e)) <= 0)
		return rc < 0 ? -1 : (c->rep->skipped++, 0);
	tp = c->g->initializer[init];
	/* mapped, not copied, when it is in external data (model.h) */
	if (model_tensor_map(c->m, tp, &t, &map, e) < 0)
		return err_prefix(e, "%s: initializer %s", c->m->path,
		    b->name);
	if (t.dtype != DT_FLOAT || t.rank != 2 || t.nelem == 0) {
		note(c, "%s: not a non-empty 2-D float tensor: left float",
		    b->name);
		model_map_release(&map, &t);
		c->rep->skipped++;
		return 0;
	}
	if ((bad = nbitsq_first_nonfinite(t.data, t.nelem)) >= 0) {
		rc = err_set(e, "%s: initializer %s: NaN or infinity at "
		    "[%lld][%lld]", c->m->path, b->name,
		    (long long)(bad / t.dims[1]), (long long)(bad % t.dims[1]));
		model_map_release(&map, &t);
		return rc;
	}
	rc = -1;
	if (wq_init(&w, b, c->o->qdq, t.dims[0], t.dims[1], e) < 0 ||
	    wq_fill(&w, c->o->qdq, t.data, e) < 0)
		goto done;
	model_map_release(&map, &t);
	if (model_tensor_write(tp, &w.codes, e) < 0 ||
	    !(sname = add_init(c, b->name, "_scales", &w.scales, e)) ||
	    (w.zps.data && !(zname = add_init(c, b->name, "_zero_points",
	    &w.zps, e))))
		goto done;
	if ((c->o->qdq ? install_qdq : install_nbits)(c, node, &w, sname,
	    zname, e) < 0)
		goto done;
	c->rep->weights++;
	rc = 0;
done:
	model_map_release(&map, &t);
	wq_release(&w);
	free(sname);
	free(zname);
	return rc;
}

/* The qdq form's opset: 21, raised to when the model is below. */
static int
need_opset(struct ctx *c, struct err *e)
{
	int from = model_opset(c->m, "");

	if (from >= QDQ_BLOCK_OPSET)
		return 0;
	if (opset_raise(c->m, QDQ_BLOCK_OPSET, NULL, e) < 0)
		return err_prefix(e, "%s: blocked DequantizeLinear needs "
		    "opset %d, the model has %d and cannot be raised",
		    c->m->path, QDQ_BLOCK_OPSET, from);
	note(c, "opset raised from %d to %d", from, QDQ_BLOCK_OPSET);
	return graph_reindex(c->gr, e);
}

int
nbitswrite_apply(struct model *m, const struct blockq_rec *v, size_t n,
    const struct nbitswrite_opts *o, struct nbitswrite_report *r,
    struct err *e)
{
	struct nbitswrite_report dummy;
	struct ctx c = { m, m->proto->graph, NULL, NULL, NULL, 0, o,
	    r ? r : &dummy };
	int rc = -1;

	memset(c.rep, 0, sizeof *c.rep);
	if (!c.g)
		return err_set(e, "%s: no graph", m->path);
	if (!(c.gr = graph_new(c.g, e)))
		return err_prefix(e, "%s", m->path);
	c.nnodes = c.g->n_node;
	if (!(c.names = weights_node_names(c.g, e)) ||
	    !(c.nodes = malloc((c.nnodes ? c.nnodes : 1) * sizeof *c.nodes))) {
		err_nomem(e);
		goto done;
	}
	memcpy(c.nodes, c.g->node, c.nnodes * sizeof *c.nodes);
	if (o->qdq && need_opset(&c, e) < 0)
		goto done;
	for (size_t i = 0; i < n; i++)
		if (apply_one(&c, &v[i], e) < 0)
			goto done;
	rc = graph_reindex(c.gr, e);
done:
	graph_free(c.gr);
	free(c.names);
	free(c.nodes);
	return rc;
}
