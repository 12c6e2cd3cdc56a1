/*
 * qdq: see qdq.h. Names follow ONNX Runtime's quantizer: X_scale,
 * X_zero_point, X_QuantizeLinear(_Output), X_DequantizeLinear(_Output),
 * W_quantized; every new name goes through graph_unique_name().
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "dynwrite.h"
#include "graph.h"
#include "nameuses.h"
#include "opinfo.h"
#include "opset.h"
#include "qdq.h"
#include "qdqresize.h"
#include "qdqscale.h"
#include "qdqwcache.h"
#include "qop.h"
#include "qparams.h"
#include "records.h"
#include "nbitswrite.h"
#include "streamfit.h"
#include "strmap.h"
#include "util.h"
#include "weights.h"

#define MS_DOMAIN "com.microsoft"

struct st {
	char *name;
	int dtype;
	int rank;
};

struct qdq_plan {
	char *file;		/* the stream's name, for messages */
	char *sha256;
	struct qparam_rec *qp;
	size_t nqp, capqp;
	struct convert_rec *cv;
	size_t ncv, capcv;
	struct fold_rec *fd;
	size_t nfd, capfd;
	struct dynamic_rec *dy;
	size_t ndy, capdy;
	struct st *st;
	size_t nst, capst;
	struct blockq_rec *bq;	/* weight-only (nbitswrite.h) */
	size_t nbq, capbq;
	struct strmap *qpidx, *cvidx, *stidx;
	struct streamfit *match;	/* the records' dtypes and shapes */
	/* whose st and match are read instead (qdq_plan_new_like) */
	const struct qdq_plan *info;
};

/* The plan whose stat, weight and bias records p goes by. */
static const struct qdq_plan *
facts(const struct qdq_plan *p)
{
	return p->info ? p->info : p;
}

static int
is_default_domain(const char *d)
{
	return d == NULL || *d == '\0' || strcmp(d, "ai.onnx") == 0;
}

int
qdq_domain_parse(const char *s, enum qdq_domain *d)
{
	if (strcmp(s, "auto") == 0)
		*d = QDQ_DOMAIN_AUTO;
	else if (strcmp(s, "onnx") == 0 || strcmp(s, "ai.onnx") == 0)
		*d = QDQ_DOMAIN_ONNX;
	else if (strcmp(s, MS_DOMAIN) == 0)
		*d = QDQ_DOMAIN_MS;
	else
		return -1;
	return 0;
}

static const char *const format_names[] = {
	[QDQ_FORMAT_AUTO] = "auto",
	[QDQ_FORMAT_QDQ] = "qdq",
	[QDQ_FORMAT_QOPERATOR] = "qoperator",
};

int
qdq_format_parse(const char *s, enum qdq_format *f)
{
	for (size_t i = 0; i < sizeof format_names / sizeof *format_names;
	    i++)
		if (format_names[i] && strcmp(s, format_names[i]) == 0) {
			*f = (enum qdq_format)i;
			return 0;
		}
	return -1;
}

const char *
qdq_format_name(enum qdq_format f)
{
	return (size_t)f < sizeof format_names / sizeof *format_names ?
	    format_names[f] : "?";
}

/* ---- the plan ---- */

static const char *plan_file(const struct qdq_plan *p);

struct qdq_plan *
qdq_plan_new(void)
{
	struct qdq_plan *p = calloc(1, sizeof *p);

	if (p == NULL)
		return NULL;
	p->qpidx = strmap_new();
	p->cvidx = strmap_new();
	p->stidx = strmap_new();
	p->match = streamfit_new();
	if (!p->qpidx || !p->cvidx || !p->stidx || !p->match) {
		qdq_plan_free(p);
		return NULL;
	}
	return p;
}

struct qdq_plan *
qdq_plan_new_like(const struct qdq_plan *info)
{
	struct qdq_plan *p = qdq_plan_new();

	if (p)
		p->info = facts(info);
	return p;
}

void
qdq_plan_free(struct qdq_plan *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nqp; i++)
		qparam_rec_release(&p->qp[i]);
	for (i = 0; i < p->ncv; i++)
		convert_rec_release(&p->cv[i]);
	for (i = 0; i < p->nfd; i++)
		fold_rec_release(&p->fd[i]);
	for (i = 0; i < p->ndy; i++)
		dynamic_rec_release(&p->dy[i]);
	free(p->dy);
	for (i = 0; i < p->nst; i++)
		free(p->st[i].name);
	for (i = 0; i < p->nbq; i++)
		blockq_rec_release(&p->bq[i]);
	free(p->bq);
	free(p->qp);
	free(p->cv);
	free(p->fd);
	free(p->st);
	strmap_free(p->qpidx);
	strmap_free(p->cvidx);
	strmap_free(p->stidx);
	streamfit_free(p->match);
	free(p->file);
	free(p->sha256);
	free(p);
}

const char *
qdq_plan_model_sha256(const struct qdq_plan *p)
{
	return p->sha256;
}

size_t
qdq_plan_size(const struct qdq_plan *p)
{
	return p->nqp + p->ncv + p->nfd + p->ndy + p->nbq;
}

size_t
qdq_plan_ndynamic(const struct qdq_plan *p)
{
	return p->ndy;
}

const struct dynamic_rec *
qdq_plan_dynamic(const struct qdq_plan *p, size_t i)
{
	return i < p->ndy ? &p->dy[i] : NULL;
}

const struct qparam_rec *
qdq_plan_qparam(const struct qdq_plan *p, const char *name)
{
	int i;

	return strmap_get(p->qpidx, name, &i) ? &p->qp[i] : NULL;
}

const char *
qdq_plan_file(const struct qdq_plan *p)
{
	return plan_file(p);
}

static const char *
plan_file(const struct qdq_plan *p)
{
	return p->file ? p->file : "<stream>";
}

/*
 * The typed records (qdq.h): a second qparam or convert record of a
 * tensor is refused here. The plan takes r's contents, success or not.
 */
int
qdq_plan_add_qparam(struct qdq_plan *p, struct qparam_rec *r, struct err *e)
{
	int rc = -1;

	if (strmap_get(p->qpidx, r->name, NULL))
		err_set(e, "%s:%ld: a second qparam record for %s",
		    plan_file(p), r->line, r->name);
	else if (array_grow(&p->qp, &p->capqp, p->nqp, sizeof *p->qp) != 0 ||
	    strmap_put(p->qpidx, r->name, (int)p->nqp) != 0)
		err_nomem(e);
	else {
		p->qp[p->nqp++] = *r;
		memset(r, 0, sizeof *r);
		return 0;
	}
	qparam_rec_release(r);
	return rc;
}

int
qdq_plan_add_convert(struct qdq_plan *p, struct convert_rec *c,
    struct err *e)
{
	int rc = -1;

	if (strmap_get(p->cvidx, c->name, NULL))
		err_set(e, "%s:%ld: a second convert record for %s",
		    plan_file(p), c->line, c->name);
	else if (array_grow(&p->cv, &p->capcv, p->ncv, sizeof *p->cv) != 0 ||
	    strmap_put(p->cvidx, c->name, (int)p->ncv) != 0)
		err_nomem(e);
	else {
		p->cv[p->ncv++] = *c;
		memset(c, 0, sizeof *c);
		return 0;
	}
	convert_rec_release(c);
	return rc;
}

int
qdq_plan_add_fold(struct qdq_plan *p, struct fold_rec *f, struct err *e)
{
	if (array_grow(&p->fd, &p->capfd, p->nfd, sizeof *p->fd) != 0) {
		fold_rec_release(f);
		return err_nomem(e);
	}
	p->fd[p->nfd++] = *f;
	memset(f, 0, sizeof *f);
	return 0;
}

/* dtype and rank of a stat record, when it has them. */
static int
read_stat(struct qdq_plan *p, const struct stream_rec *rec, struct err *e)
{
	const char *dt = stream_rec_get(rec, "dtype");
	int64_t dims[TENSOR_MAX_RANK];
	struct st *s;
	struct err ignore;

	if (strmap_get(p->stidx, rec->subject, NULL))
		return 0;
	if (array_grow(&p->st, &p->capst, p->nst, sizeof *p->st) != 0)
		return err_nomem(e);
	s = &p->st[p->nst];
	s->dtype = dt ? dtype_from_name(dt) : DT_UNDEFINED;
	s->rank = -1;
	if (stream_rec_has(rec, "shape") &&
	    stream_rec_shape(rec, "shape", &s->rank, dims, &ignore) != 0)
		s->rank = -1;	/* "*": the rank varied */
	if ((s->name = strdup(rec->subject)) == NULL ||
	    strmap_put(p->stidx, s->name, (int)p->nst) != 0) {
		free(s->name);
		return err_nomem(e);
	}
	p->nst++;
	return 0;
}

static int
read_model_header(struct qdq_plan *p, struct stream_reader *r,
    struct err *e)
{
	const char *f;
	size_t i;

	for (i = 2; (f = stream_header_field(r, i)) != NULL; i++)
		if (strncmp(f, "sha256=", 7) == 0) {
			free(p->sha256);
			if ((p->sha256 = stream_unescape(f + 7, e)) == NULL)
				return err_prefix(e, "%s:%ld", stream_name(r),
				    stream_lineno(r));
		}
	return 0;
}

static int
read_blockq(struct qdq_plan *p, const struct stream_rec *rec, struct err *e)
{
	for (size_t i = 0; i < p->nbq; i++)
		if (strcmp(p->bq[i].name, rec->subject) == 0)
			return stream_rec_err(rec, e, "a second blockq record "
			    "for %s", rec->subject);
	if (array_grow((void **)&p->bq, &p->capbq, p->nbq + 1,
	    sizeof *p->bq) != 0)
		return err_nomem(e);
	if (blockq_rec_read(&p->bq[p->nbq], rec, e) != 0)
		return -1;
	p->nbq++;
	return 0;
}

int
qdq_plan_add_rec(struct qdq_plan *p, const struct stream_rec *rec,
    struct err *e)
{
	if (strcmp(rec->type, "qparam") == 0) {
		struct qparam_rec q;

		return qparam_rec_read(&q, rec, e) != 0 ? -1 :
		    qdq_plan_add_qparam(p, &q, e);
	}
	if (strcmp(rec->type, "convert") == 0) {
		struct convert_rec c;

		/* Refused before its keys are checked, as always. */
		if (strmap_get(p->cvidx, rec->subject, NULL))
			return stream_rec_err(rec, e, "a second convert "
			    "record for %s", rec->subject);
		return convert_rec_read(&c, rec, e) != 0 ? -1 :
		    qdq_plan_add_convert(p, &c, e);
	}
	if (strcmp(rec->type, "fold") == 0) {
		struct fold_rec f;

		return fold_rec_read(&f, rec, e) != 0 ? -1 :
		    qdq_plan_add_fold(p, &f, e);
	}
	if (strcmp(rec->type, "dynamic") == 0) {
		struct dynamic_rec d;

		if (dynamic_rec_read(&d, rec, e) != 0)
			return -1;
		if (array_grow(&p->dy, &p->capdy, p->ndy, sizeof *p->dy)
		    != 0) {
			dynamic_rec_release(&d);
			return err_nomem(e);
		}
		p->dy[p->ndy++] = d;
		return 0;
	}
	if (streamfit_add(p->match, rec, e) != 0)
		return -1;
	if (strcmp(rec->type, "stat") == 0)
		return read_stat(p, rec, e);
	if (strcmp(rec->type, "blockq") == 0)
		return read_blockq(p, rec, e);
	return 0;
}

int
qdq_plan_read(struct qdq_plan *p, struct stream_reader *r, struct err *e)
{
	const struct stream_rec *rec;
	const char *h;
	int item;

	free(p->file);
	if ((p->file = strdup(stream_name(r))) == NULL)
		return err_nomem(e);
	while ((item = stream_next(r, e)) > 0) {
		if (item == STREAM_HEADER) {
			h = stream_header_field(r, 0);
			if (h != NULL && strcmp(h, "#model") == 0 &&
			    read_model_header(p, r, e) != 0)
				return -1;
			continue;
		}
		rec = stream_record(r);
		if (qdq_plan_add_rec(p, rec, e) != 0)
			return -1;
	}
	return item < 0 ? -1 : 0;
}

/* ---- the rewrite ---- */

struct ctx {
	struct model *m;
	Onnx__GraphProto *g;
	struct graph *gr;
	const struct qdq_plan *p;
	const struct qdq_opts *o;
	struct qdq_report *rep;
	const char *domain;	/* of the Q/DQ nodes: "" or MS_DOMAIN */
	char **names;		/* stream names of the prepared nodes */
	Onnx__NodeProto **nodes;	/* those nodes (NULL once folded) */
	size_t nnodes;
	struct strmap *byname;	/* stream node name -> index in nodes */
	struct strmap *gone;	/* tensors folded away */
	char *skip;		/* per qp: left alone */
	char *weight;		/* per qp: a constant */
	/* who reads what, while the graph stays (classify, the weights) */
	struct nameuses *uses;
	/*
	 * The activations' pass: c->gr's consumers, indexed before it, hold
	 * every reader (rewiring only moves readers to new names).
	 */
	int consumers_hold;
};

/* Control bytes of names from the model or stream become '?'. */
static void
printable(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static void
note(struct ctx *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (c->o == NULL || c->o->note == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printable(buf);
	c->o->note(c->o->note_ctx, buf);
}

/* "FILE:LINE: " errors of a record. */
static int
rec_err(struct ctx *c, long line, struct err *e, const char *fmt, ...)
{
	char buf[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printable(buf);
	return err_set(e, "%s:%ld: %s", c->p->file ? c->p->file : "<stream>",
	    line, buf);
}

static int
stat_of(const struct qdq_plan *p, const char *name)
{
	int i;

	return strmap_get(facts(p)->stidx, name, &i) ? i : -1;
}

/* The info callback of opset.h: the stream's stat records. */
static void
plan_info(void *ctx, const char *tensor, int *dtype, int *rank)
{
	const struct qdq_plan *p = ctx;
	int i = stat_of(p, tensor);

	*dtype = i >= 0 ? facts(p)->st[i].dtype : DT_UNDEFINED;
	*rank = i >= 0 ? facts(p)->st[i].rank : -1;
}

/* Element type of a non-constant value: declared, else from its stat record. */
static int
value_dtype(struct ctx *c, const struct graph_value *v)
{
	int i;

	if (v->info != NULL && v->info->type != NULL &&
	    v->info->type->tensor_type != NULL &&
	    v->info->type->tensor_type->has_elem_type &&
	    v->info->type->tensor_type->elem_type != DT_UNDEFINED)
		return v->info->type->tensor_type->elem_type;
	if ((i = stat_of(c->p, v->name)) >= 0)
		return facts(c->p)->st[i].dtype;
	return DT_UNDEFINED;
}

/* float16 and bfloat16 are quantized as float32 is. */
static int
is_half(int dtype)
{
	return dtype == DT_FLOAT16 || dtype == DT_BFLOAT16;
}

/*
 * The float type of tensor name: float16 or bfloat16 in a half model,
 * else float32. Its Q/DQ scales have that type, so DequantizeLinear
 * gives back the model's own type (opset 19).
 */
static int
float_type(struct ctx *c, const char *name)
{
	struct graph_value *v = graph_value(c->gr, name);
	int dt;

	if (v == NULL)
		return DT_FLOAT;
	dt = v->init != NULL ? v->init->data_type : value_dtype(c, v);
	return is_half(dt) ? dt : DT_FLOAT;
}

static int
is_graph_input(const Onnx__GraphProto *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->n_input; i++)
		if (strcmp(str_or_empty(g->input[i]->name), name) == 0)
			return 1;
	return 0;
}

static int
node_reads(const Onnx__NodeProto *n, const char *name)
{
	size_t j;

	for (j = 0; j < n->n_input; j++)
		if (strcmp(str_or_empty(n->input[j]), name) == 0)
			return 1;
	return 0;
}

/* Index of node n in the graph now, or -1. */
static int
node_index(const struct ctx *c, const Onnx__NodeProto *n)
{
	size_t i;

	for (i = 0; i < c->g->n_node; i++)
		if (c->g->node[i] == n)
			return (int)i;
	return -1;
}

/* Nodes of the main graph that read name as an input (each node once). */
static int
readers(struct ctx *c, const char *name, size_t limit, int **out, size_t *n,
    struct err *e)
{
	size_t i, k = 0;
	int *v;

	if ((v = malloc((limit ? limit : 1) * sizeof *v)) == NULL)
		return err_nomem(e);
	if (c->uses) {
		const struct name_use *u = nameuses_of(c->uses, name, &i);

		/* in node order: each node once */
		for (; i > 0; i--, u++)
			if ((size_t)u->node < limit &&
			    (k == 0 || v[k - 1] != u->node))
				v[k++] = u->node;
		*out = v;
		*n = k;
		return 0;
	}
	if (c->consumers_hold) {
		const struct graph_value *gv = graph_value(c->gr, name);

		/* in node order, one entry per slot: each node once */
		for (i = 0; gv && i < (size_t)gv->nconsumers; i++) {
			int r = gv->consumers[i];

			if ((size_t)r < limit && (k == 0 || v[k - 1] != r) &&
			    node_reads(c->g->node[r], name))
				v[k++] = r;
		}
		*out = v;
		*n = k;
		return 0;
	}
	for (i = 0; i < limit && i < c->g->n_node; i++)
		if (node_reads(c->g->node[i], name))
			v[k++] = (int)i;
	*out = v;
	*n = k;
	return 0;
}

/* Does a subgraph of some node read name? */
static int
subgraph_reads(struct ctx *c, const char *name)
{
	struct graph_value *v = graph_value(c->gr, name);
	int i;

	if (v == NULL)
		return 0;
	for (i = 0; i < v->nconsumers; i++)
		if (!node_reads(c->g->node[v->consumers[i]], name))
			return 1;
	return 0;
}

/* Replace every input `from` of node n by `to`. */
static int
rewire(struct ctx *c, int node, const char *from, const char *to,
    struct err *e)
{
	Onnx__NodeProto *n = c->g->node[node];
	size_t j;

	for (j = 0; j < n->n_input; j++)
		if (strcmp(str_or_empty(n->input[j]), from) == 0 &&
		    graph_rewire_input(c->gr, node, (int)j, to, e) != 0)
			return -1;
	return 0;
}

/* A unique name base + suffix (malloc'd), or NULL. */
static char *
new_name(struct ctx *c, const char *base, const char *suffix)
{
	char *b = str_cat(base, suffix), *n;

	if (b == NULL)
		return NULL;
	n = graph_unique_name(c->gr, b);
	free(b);
	return n;
}

/* Add an initializer holding t under a unique name base + suffix. */
static char *
add_tensor(struct ctx *c, const char *base, const char *suffix,
    const struct tensor *t, struct err *e)
{
	return graph_add_tensor(c->gr, base, suffix, t, e);
}

/* Are t's elements, as they lie in memory, its raw_data bytes? */
static int
raw_as_is(const struct tensor *t)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 1 && (t->dtype == DT_INT8 ||
	    t->dtype == DT_UINT8 || t->dtype == DT_INT16 ||
	    t->dtype == DT_UINT16 || t->dtype == DT_INT32);
}

/*
 * The cached weight qt as an initializer named base + suffix, lent to
 * the model where it can be (qdq_opts.lent), else copied.
 */
static char *
add_cached(struct ctx *c, const char *base, const char *suffix,
    const struct tensor *qt, struct err *e)
{
	struct tensor h = *qt;
	Onnx__TensorProto *tp;
	char *name;

	if (c->o == NULL || c->o->lent == NULL || !raw_as_is(qt))
		return add_tensor(c, base, suffix, qt, e);
	h.nelem = 0;		/* its dims, no bytes */
	h.data = NULL;
	if ((name = add_tensor(c, base, suffix, &h, e)) == NULL)
		return NULL;
	tp = c->g->initializer[c->g->n_initializer - 1];
	free(tp->raw_data.data);
	tp->raw_data.data = qt->data;
	tp->raw_data.len = (size_t)qt->nelem * dtype_size(qt->dtype);
	if (c->o->lent(c->o->lent_ctx, tp) < 0) {
		tp->raw_data.data = NULL;	/* the cache's, not freed */
		tp->raw_data.len = 0;
		free(name);
		err_nomem(e);
		return NULL;
	}
	return name;
}

static int store_narrow(struct tensor *, const int32_t *);

/*
 * Scale and zero-point initializers of q, named after base; the scale of
 * type ft (float_type).
 */
static int
add_params(struct ctx *c, const char *base, int ft, const struct qparam *q,
    char **sname, char **zname, struct err *e)
{
	struct tensor s = { 0 }, z = { 0 };
	int64_t dim = (int64_t)q->n;
	int rank = q->axis >= 0 ? 1 : 0;
	size_t i;

	*sname = *zname = NULL;
	if (tensor_alloc(&s, ft, rank, &dim, e) != 0 ||
	    tensor_alloc(&z, q->type, rank, &dim, e) != 0)
		goto fail;
	/* (per channel: hundreds of values for each weight) */
	if (ft == DT_FLOAT)
		memcpy(s.data, q->scale, q->n * sizeof *q->scale);
	else
		for (i = 0; i < q->n; i++)
			tensor_set(&s, (int64_t)i, q->scale[i]);
	if (!store_narrow(&z, q->zp))
		for (i = 0; i < q->n; i++)
			tensor_set(&z, (int64_t)i, q->zp[i]);
	if ((*sname = add_tensor(c, base, "_scale", &s, e)) == NULL ||
	    (*zname = add_tensor(c, base, "_zero_point", &z, e)) == NULL)
		goto fail;
	tensor_release(&s);
	tensor_release(&z);
	return 0;
fail:
	tensor_release(&s);
	tensor_release(&z);
	free(*sname);
	*sname = NULL;
	return -1;
}

/*
 * A QuantizeLinear (quant) or DequantizeLinear node reading in with the
 * given parameters, writing out (a unique name base + suffix when out is
 * NULL). Returns the output name (malloc'd) or NULL.
 */
static char *
add_qdq(struct ctx *c, int quant, const char *base, const char *in,
    const char *sname, const char *zname, int axis, const char *out,
    struct err *e)
{
	const char *op = quant ? "QuantizeLinear" : "DequantizeLinear";
	const char *ins[3], *outs[1];
	char *oname, *nname;
	Onnx__NodeProto *n;

	oname = out ? strdup(out) : new_name(c, base, quant ?
	    "_QuantizeLinear_Output" : "_DequantizeLinear_Output");
	nname = new_name(c, base, quant ? "_QuantizeLinear" :
	    "_DequantizeLinear");
	if (oname == NULL || nname == NULL) {
		free(oname);
		free(nname);
		err_nomem(e);
		return NULL;
	}
	ins[0] = in;
	ins[1] = sname;
	ins[2] = zname;
	outs[0] = oname;
	n = graph_add_node(c->gr, op, c->domain, nname, ins, 3, outs, 1, e);
	free(nname);
	if (n == NULL || (axis >= 0 &&
	    attr_add_int(n, "axis", axis, e) != 0)) {
		free(oname);
		return NULL;
	}
	if (quant)
		c->rep->quantize++;
	else
		c->rep->dequantize++;
	return oname;
}

/* ---- folds ---- */

static void remove_initializer(struct ctx *, const char *);

static void
free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int
check_fold(struct ctx *c, const struct fold_rec *f, int *node, int *into,
    struct err *e)
{
	const Onnx__NodeProto *n, *p;
	struct graph_value *v;
	size_t j;
	int qi;

	if (!strmap_get(c->byname, f->node, node))
		return rec_err(c, f->line, e, "node %s is not in %s", f->node,
		    c->m->path);
	if (!strmap_get(c->byname, f->into, into))
		return rec_err(c, f->line, e, "node %s is not in %s", f->into,
		    c->m->path);
	n = c->nodes[*node];
	p = c->nodes[*into];
	if (n == NULL || p == NULL)
		return rec_err(c, f->line, e, "fold %s: node folded twice",
		    f->node);
	if (!is_default_domain(n->domain) ||
	    (strcmp(str_or_empty(n->op_type), "Relu") != 0 &&
	    strcmp(str_or_empty(n->op_type), "Clip") != 0) ||
	    n->n_input < 1 || n->n_output != 1)
		return rec_err(c, f->line, e, "fold %s: not a Relu or Clip",
		    f->node);
	for (j = 0; j < p->n_output; j++)
		if (strcmp(str_or_empty(p->output[j]), n->input[0]) == 0)
			break;
	if (j == p->n_output)
		return rec_err(c, f->line, e, "fold %s: its input %s does not "
		    "come from %s", f->node, n->input[0], f->into);
	v = graph_value(c->gr, n->input[0]);
	if (v == NULL || v->nconsumers != 1)
		return rec_err(c, f->line, e, "fold %s: %s has other readers",
		    f->node, n->input[0]);
	if (!strmap_get(c->p->qpidx, n->output[0], &qi) ||
	    c->p->qp[qi].role != ROLE_ACT)
		return rec_err(c, f->line, e, "fold %s: its output %s has no "
		    "activation qparam to clamp it", f->node, n->output[0]);
	/*
	 * The stream does not say which tensors are graph outputs: one
	 * that is must keep its unclamped values, so the node stays (its
	 * input then stays float, its output is quantized as recorded).
	 */
	if (v->is_output) {
		note(c, "fold %s: %s is a graph output: %s kept", f->node,
		    n->input[0], f->node);
		return 1;
	}
	return 0;
}

/*
 * After a fold: the constants only the removed node read (a Clip's
 * bounds) would stay in the model unread; remove them. Graph inputs and
 * outputs stay.
 */
static int
drop_orphans(struct ctx *c, char **names, size_t n, struct err *e)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		struct graph_value *v;

		if (names[i] == NULL || *names[i] == '\0' ||
		    (v = graph_value(c->gr, names[i])) == NULL ||
		    v->nconsumers != 0 || v->is_output ||
		    is_graph_input(c->g, names[i]))
			continue;
		if (v->kind == VALUE_INITIALIZER) {
			remove_initializer(c, names[i]);
		} else if (v->kind == VALUE_CONSTANT && v->producer >= 0) {
			Onnx__NodeProto *cn = c->g->node[v->producer];
			size_t at = (size_t)v->producer;

			for (k = 0; k < c->nnodes; k++)
				if (c->nodes[k] == cn)
					c->nodes[k] = NULL;
			protobuf_c_message_free_unpacked(&cn->base, NULL);
			memmove(&c->g->node[at], &c->g->node[at + 1],
			    (c->g->n_node - at - 1) * sizeof *c->g->node);
			c->g->n_node--;
		} else
			continue;
		note(c, "%s: read only by a folded node: removed", names[i]);
		/* v points into the index: rebuild before the next look. */
		if (graph_reindex(c->gr, e) != 0)
			return -1;
	}
	return 0;
}

static int
apply_folds(struct ctx *c, struct err *e)
{
	size_t i, j, k, nparams;
	int ni, pi, at, rc;
	char **params;

	for (i = 0; i < c->p->nfd; i++) {
		const struct fold_rec *f = &c->p->fd[i];
		Onnx__NodeProto *n, *p;
		char *out;

		if ((rc = check_fold(c, f, &ni, &pi, e)) < 0)
			return -1;
		if (rc > 0)
			continue;
		n = c->nodes[ni];
		p = c->nodes[pi];
		for (j = 0; j < p->n_output; j++)
			if (strcmp(str_or_empty(p->output[j]),
			    n->input[0]) == 0)
				break;
		if ((out = strdup(n->output[0])) == NULL)
			return err_nomem(e);
		/* Forget the value_info of the tensor that goes away. */
		for (k = 0; k < c->g->n_value_info; k++)
			if (strcmp(str_or_empty(c->g->value_info[k]->name),
			    p->output[j]) == 0) {
				protobuf_c_message_free_unpacked(
				    &c->g->value_info[k]->base, NULL);
				memmove(&c->g->value_info[k],
				    &c->g->value_info[k + 1],
				    (c->g->n_value_info - k - 1) *
				    sizeof *c->g->value_info);
				c->g->n_value_info--;
				break;
			}
		if (strmap_put(c->gone, p->output[j], 0) != 0) {
			free(out);
			return err_nomem(e);
		}
		free(p->output[j]);
		p->output[j] = out;
		/* The node's other inputs, to look for orphans after. */
		nparams = n->n_input - 1;
		if ((params = calloc(nparams ? nparams : 1,
		    sizeof *params)) == NULL)
			return err_nomem(e);
		for (k = 0; k < nparams; k++)
			if ((params[k] = strdup(str_or_empty(
			    n->input[k + 1]))) == NULL) {
				free_names(params, nparams);
				return err_nomem(e);
			}
		at = node_index(c, n);
		protobuf_c_message_free_unpacked(&n->base, NULL);
		memmove(&c->g->node[at], &c->g->node[at + 1],
		    (c->g->n_node - (size_t)at - 1) * sizeof *c->g->node);
		c->g->n_node--;
		c->nodes[ni] = NULL;
		c->rep->folds++;
		if (graph_reindex(c->gr, e) != 0 ||
		    drop_orphans(c, params, nparams, e) != 0) {
			free_names(params, nparams);
			return -1;
		}
		free_names(params, nparams);
	}
	return 0;
}

/* ---- which records apply, and what opset they need ---- */

/*
 * The first node reading name in a parameter slot (opinfo_is_data), or
 * NULL. Quantizing a parameter changes what the node computes (a Resize
 * scale of 1.99 for 2 changes the output shape), so a constant read there
 * stays float whatever the stream says.
 */
static const Onnx__NodeProto *
read_as_param(const struct ctx *c, const char *name)
{
	if (c->uses) {
		size_t n;
		const struct name_use *u = nameuses_of(c->uses, name, &n);

		for (; n > 0; n--, u++) {
			const Onnx__NodeProto *nd = c->g->node[u->node];

			if (u->slot < 32 && !opinfo_is_data(nd->domain,
			    nd->op_type, u->slot))
				return nd;
		}
		return NULL;
	}
	for (size_t i = 0; i < c->g->n_node; i++) {
		const Onnx__NodeProto *n = c->g->node[i];

		for (size_t j = 0; j < n->n_input && j < 32; j++)
			if (strcmp(str_or_empty(n->input[j]), name) == 0 &&
			    !opinfo_is_data(n->domain, n->op_type, (int)j))
				return n;
	}
	return NULL;
}

/* The opset the default-domain QuantizeLinear/DequantizeLinear need for q. */
static int
need_opset(const struct qparam *q)
{
	if (q->type == DT_UINT16 || q->type == DT_INT16 ||
	    q->type == DT_UINT4 || q->type == DT_INT4)
		return 21;
	if (q->n > 1)
		return 13;	/* per axis; one channel is per tensor */
	return 10;
}

/* A per-axis record must fit its constant: the axis, a value per channel. */
static int
check_channels(struct ctx *c, const struct qparam_rec *qp,
    const Onnx__TensorProto *init, struct err *e)
{
	int rank = (int)init->n_dims, axis = qp->q.axis;

	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis >= rank)
		return rec_err(c, qp->line, e, "%s: axis %d is out of range "
		    "for rank %d", qp->name, qp->q.axis, rank);
	if ((int64_t)qp->q.n != init->dims[axis])
		return rec_err(c, qp->line, e, "%s: %zu channels, the tensor "
		    "has %lld along axis %d", qp->name, qp->q.n,
		    (long long)init->dims[axis], axis);
	return 0;
}

/*
 * ONNX Runtime drops the DequantizeLinear and QuantizeLinear around a
 * ReduceMin or ReduceMax whose input and output share parameters and runs
 * it on the 8-bit data, which those operators take only from opset 12:
 * below that its default session refuses the model it made. So an output
 * of one of them, quantized like its input, needs opset 12.
 */
#define QDQ_REDUCE_INT8_OPSET 12

static int
reduce_needs_opset(const struct ctx *c, const struct graph_value *v)
{
	const Onnx__NodeProto *n;
	int qi;

	if (v->producer < 0)
		return 0;
	n = c->g->node[v->producer];
	if ((n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0) ||
	    (strcmp(n->op_type, "ReduceMin") != 0 &&
	    strcmp(n->op_type, "ReduceMax") != 0) || n->n_input < 1 ||
	    !strmap_get(c->p->qpidx, str_or_empty(n->input[0]), &qi))
		return 0;
	return QDQ_REDUCE_INT8_OPSET;
}

/*
 * What qdq_front_make() keeps of the rewrite up to the activations, for
 * qdq_front_apply() (qdq.h).
 */
struct qdq_front {
	const char *domain;	/* of the Q/DQ nodes */
	size_t limit;		/* the nodes before the weights' */
	int need, wneed;	/* the opset all records, the constants need */
	int from;		/* the model's opset before */
	struct qdq_report rep;	/* the front's counts */
	size_t nnodes;
	struct strmap *byname;
	int *pos;		/* each one's index in the front's graph */
	struct strmap *consts;	/* the initializers before the weights */
	struct qparam_rec *w;	/* the constants' records, in order */
	size_t nw;
	struct fold_rec *fd;	/* the fold records, in order */
	size_t nfd;
	struct strmap *gone;	/* tensors folded away */
};

/*
 * Decide for each qparam record whether it applies (c->skip) and whether
 * it is a constant (c->weight); check names; the opset needed (*need) and
 * what the constants' records need of it (*wneed). With f (a front made
 * for another plan), its constants are taken as applied; 1 when the plan
 * names another constant.
 */
static int
classify(struct ctx *c, const struct qdq_front *f, int *need, int *wneed,
    struct err *e)
{
	const struct qdq_plan *p = c->p;
	size_t i, j;
	const Onnx__NodeProto *pn;
	int qi, ni, dt, r;

	*need = *wneed = 0;
	for (i = 0; i < p->nqp; i++) {
		const struct qparam_rec *qp = &p->qp[i];
		struct graph_value *v;

		if (f && strmap_get(f->consts, qp->name, NULL)) {
			c->weight[i] = c->skip[i] = 1;	/* the front's */
			continue;
		}
		v = graph_value(c->gr, qp->name);
		if (v == NULL) {
			/* A fold's input is gone with its Relu: fine. */
			if (strmap_get(c->gone, qp->name, NULL)) {
				c->skip[i] = 1;
				note(c, "%s: folded into its reader's output",
				    qp->name);
				continue;
			}
			return rec_err(c, qp->line, e, "tensor %s is not in %s",
			    qp->name, c->m->path);
		}
		if (v->kind == VALUE_INITIALIZER) {
			if (f)
				return 1;	/* a constant f lacks */
			c->weight[i] = 1;
			if (is_graph_input(c->g, qp->name)) {
				c->skip[i] = 1;
				note(c, "%s: an initializer that is also a "
				    "graph input (overridable): left in float",
				    qp->name);
				continue;
			}
			if (v->init->data_type != DT_FLOAT &&
			    !is_half(v->init->data_type)) {
				c->skip[i] = 1;
				note(c, "%s: a constant of type %s: left alone",
				    qp->name, str_or_empty(dtype_name(
				    v->init->data_type)));
				continue;
			}
			if (qp->q.n > 1 &&
			    check_channels(c, qp, v->init, e) != 0)
				return -1;
			if ((pn = read_as_param(c, qp->name)) != NULL) {
				c->skip[i] = 1;
				note(c, "%s: a parameter of %s (%s), not data: "
				    "left in float", qp->name,
				    str_or_empty(pn->name),
				    str_or_empty(pn->op_type));
				continue;
			}
		} else {
			if (qp->role != ROLE_ACT) {
				c->skip[i] = 1;
				note(c, "%s: %s parameters for a tensor that "
				    "is not constant: left alone", qp->name,
				    qp->role == ROLE_BIAS ? "bias" : "weight");
				continue;
			}
			dt = value_dtype(c, v);
			if (dt != DT_UNDEFINED && dt != DT_FLOAT &&
			    !is_half(dt)) {
				c->skip[i] = 1;
				note(c, "%s: of type %s, not float: left "
				    "alone", qp->name,
				    str_or_empty(dtype_name(dt)));
				continue;
			}
		}
		r = need_opset(&qp->q);
		if (!c->weight[i] && reduce_needs_opset(c, v) > r)
			r = reduce_needs_opset(c, v);
		/* half scales: DequantizeLinear's output type from 19 */
		if (is_half(float_type(c, qp->name)) && r < 19)
			r = 19;
		if (r > *need)
			*need = r;
		if (c->weight[i] && r > *wneed)
			*wneed = r;
	}
	/* Float activations the stream has statistics for but no parameters. */
	for (i = 0; i < facts(p)->nst; i++) {
		const struct st *st = &facts(p)->st[i];

		if (st->dtype == DT_FLOAT &&
		    !strmap_get(p->qpidx, st->name, NULL) &&
		    graph_value(c->gr, st->name) != NULL)
			note(c, "%s: no parameters: left in float", st->name);
	}
	for (i = 0; i < p->ncv; i++) {
		const struct convert_rec *cv = &p->cv[i];

		if (graph_value(c->gr, cv->name) == NULL)
			return rec_err(c, cv->line, e, "tensor %s is not in %s",
			    cv->name, c->m->path);
		if (!strmap_get(p->qpidx, cv->name, &qi))
			return rec_err(c, cv->line, e, "convert %s: no qparam "
			    "record for it", cv->name);
		if (c->weight[qi])
			return rec_err(c, cv->line, e, "convert %s: a constant",
			    cv->name);
		for (j = 0; j < cv->nrecv; j++) {
			if (!strmap_get(c->byname, cv->recv[j], &ni))
				return rec_err(c, cv->line, e, "convert %s: "
				    "node %s is not in %s", cv->name,
				    cv->recv[j], c->m->path);
			if (c->nodes[ni] == NULL ||
			    !node_reads(c->nodes[ni], cv->name))
				return rec_err(c, cv->line, e, "convert %s: "
				    "node %s does not read it", cv->name,
				    cv->recv[j]);
		}
		if (c->skip[qi])
			continue;
		if (need_opset(&cv->q) > *need)
			*need = need_opset(&cv->q);
	}
	return 0;
}

/*
 * ONNX Runtime fuses DequantizeLinear -> Conv/MatMul -> QuantizeLinear into
 * QLinearConv/QLinearMatMul, which exist from opset 10: on an older model
 * its default session refuses the fused graph. The com.microsoft Q/DQ
 * need no opset of their own, so raise an older model to 10 where every
 * node keeps its meaning (else say so: ORT will refuse it).
 */
#define QDQ_FUSION_OPSET 10

static int
raise_for_fusion(struct ctx *c, int from, const struct opset_opts *oo,
    struct err *e)
{
	struct err why;
	int n;

	if (from >= QDQ_FUSION_OPSET)
		return 0;
	if (opset_check(c->m, QDQ_FUSION_OPSET, oo, &why) != 0) {
		note(c, "opset %d cannot be raised to %d (%s): ONNX Runtime "
		    "will refuse the fused Q/DQ nodes", from, QDQ_FUSION_OPSET,
		    why.msg);
		return 0;
	}
	if ((n = opset_raise(c->m, QDQ_FUSION_OPSET, oo, e)) < 0)
		return err_prefix(e, "%s: raising opset %d to %d", c->m->path,
		    from, QDQ_FUSION_OPSET);
	c->rep->rewritten = n;
	c->rep->opset_to = QDQ_FUSION_OPSET;
	note(c, "opset raised from %d to %d (%d nodes rewritten)", from,
	    QDQ_FUSION_OPSET, n);
	return graph_reindex(c->gr, e);
}

/* Choose the Q/DQ domain for opset `need`, raising the opset if allowed. */
static int
choose_domain(struct ctx *c, int need, struct err *e)
{
	enum qdq_domain d = c->o ? c->o->domain : QDQ_DOMAIN_AUTO;
	struct opset_opts oo = { plan_info, (void *)c->p };
	int from = model_opset(c->m, ""), n;
	struct err why;

	c->rep->opset_from = c->rep->opset_to = from;
	c->domain = "";
	if (need == 0)
		return 0;
	if (d == QDQ_DOMAIN_MS)
		goto ms;
	if (from >= need)
		return 0;
	if (opset_check(c->m, need, &oo, &why) != 0) {
		if (d == QDQ_DOMAIN_AUTO) {
			note(c, "opset %d cannot be raised to %d (%s): using "
			    "the com.microsoft QuantizeLinear and "
			    "DequantizeLinear", from, need, why.msg);
			goto ms;
		}
		return err_set(e, "%s: the parameters need opset %d, the model "
		    "has %d and cannot be raised: %s", c->m->path, need, from,
		    why.msg);
	}
	if ((n = opset_raise(c->m, need, &oo, e)) < 0)
		return err_prefix(e, "%s: raising opset %d to %d", c->m->path,
		    from, need);
	c->rep->rewritten = n;
	c->rep->opset_to = need;
	note(c, "opset raised from %d to %d (%d nodes rewritten)", from, need,
	    n);
	return graph_reindex(c->gr, e);
ms:
	c->domain = MS_DOMAIN;
	c->rep->ms_domain = 1;
	if (opset_import_add(c->m->proto, MS_DOMAIN, 1, e) < 0)
		return -1;
	return raise_for_fusion(c, from, &oo, e);
}

int
qdq_raise_ahead(struct model *m, const struct qdq_plan *p, struct err *e)
{
	/* the opsets need_opset() and reduce_needs_opset() may ask */
	static const int beyond[] = { QDQ_REDUCE_INT8_OPSET, 13, 21 };
	struct opset_opts oo = { plan_info, (void *)p };
	struct err why;
	int before[sizeof beyond / sizeof *beyond];
	size_t k;

	if (m->proto->graph == NULL || model_opset(m, "") >=
	    QDQ_FUSION_OPSET || opset_check(m, QDQ_FUSION_OPSET, &oo,
	    &why) != 0)
		return 0;
	for (k = 0; k < sizeof beyond / sizeof *beyond; k++)
		before[k] = opset_check(m, beyond[k], &oo, &why) == 0;
	if (opset_raise(m, QDQ_FUSION_OPSET, &oo, e) < 0)
		return -1;
	for (k = 0; k < sizeof beyond / sizeof *beyond; k++)
		if ((opset_check(m, beyond[k], &oo, &why) == 0) != before[k])
			return 0;
	return 1;
}

int
qdq_plan_max_opset(const struct qdq_plan *p)
{
	int need = 0;

	for (size_t i = 0; i < p->nqp; i++)
		if (need_opset(&p->qp[i].q) > need)
			need = need_opset(&p->qp[i].q);
	for (size_t i = 0; i < p->ncv; i++)
		if (need_opset(&p->cv[i].q) > need)
			need = need_opset(&p->cv[i].q);
	return need;
}

/* ---- weights and biases ---- */

/*
 * v into out's 8- or 16-bit elements, saturated as tensor_set() would
 * (without its conversions through double: a tenth of onnx-mixprec's
 * quantizing); 0 for another type.
 */
static int
store_narrow(struct tensor *out, const int32_t *v)
{
	int64_t lo, hi, i;

	if ((out->dtype != DT_INT8 && out->dtype != DT_UINT8 &&
	    out->dtype != DT_INT16 && out->dtype != DT_UINT16) ||
	    dtype_int_range(out->dtype, &lo, &hi) < 0)
		return 0;
	for (i = 0; i < out->nelem; i++) {
		int32_t x = v[i] < lo ? (int32_t)lo : v[i] > hi ? (int32_t)hi :
		    v[i];

		switch (out->dtype) {
		case DT_INT8:	((int8_t *)out->data)[i] = (int8_t)x; break;
		case DT_UINT8:	((uint8_t *)out->data)[i] = (uint8_t)x; break;
		case DT_INT16:	((int16_t *)out->data)[i] = (int16_t)x; break;
		default:	((uint16_t *)out->data)[i] = (uint16_t)x; break;
		}
	}
	return 1;
}

/* Quantize t (float, float16, bfloat16) into a new tensor of q->type. */
static int
quantize_tensor(const struct tensor *t, const struct qparam *q, int axis,
    int bias, struct tensor *out, struct err *e)
{
	const float *x = t->data;
	int32_t *v;
	int64_t i, inner = 1, nch = 1;
	int k;

	if ((size_t)t->nelem > SIZE_MAX / sizeof *v ||
	    (v = malloc((size_t)(t->nelem ? t->nelem : 1) * sizeof *v)) == NULL)
		return err_nomem(e);
	if (axis >= 0) {
		nch = t->dims[axis];
		for (k = axis + 1; k < t->rank; k++)
			inner *= t->dims[k];
	}
	for (i = 0; i < t->nelem; i++) {
		size_t ch = axis >= 0 ? (size_t)((i / inner) % nch) : 0;
		float xi = t->dtype == DT_FLOAT ? x[i] : (float)tensor_get(t, i);

		v[i] = bias ? qparams_quantize_bias(xi, q->scale[ch]) :
		    qparams_quantize(xi, q->scale[ch], q->zp[ch], q->type);
	}
	if (tensor_alloc(out, q->type, t->rank, t->dims, e) != 0) {
		free(v);
		return -1;
	}
	if (q->type == DT_INT32)	/* biases: v is the tensor already */
		memcpy(out->data, v, (size_t)t->nelem * sizeof *v);
	else if (!store_narrow(out, v))
		for (i = 0; i < t->nelem; i++)
			tensor_set(out, i, v[i]);
	free(v);
	return 0;
}

static void
remove_initializer(struct ctx *c, const char *name)
{
	Onnx__GraphProto *g = c->g;
	size_t i;

	for (i = 0; i < g->n_initializer; i++)
		if (strcmp(str_or_empty(g->initializer[i]->name), name) == 0) {
			if (c->o && c->o->removed)
				c->o->removed(c->o->removed_ctx,
				    g->initializer[i]);
			else
				protobuf_c_message_free_unpacked(
				    &g->initializer[i]->base, NULL);
			memmove(&g->initializer[i], &g->initializer[i + 1],
			    (g->n_initializer - i - 1) *
			    sizeof *g->initializer);
			g->n_initializer--;
			return;
		}
}

static int
apply_weight(struct ctx *c, const struct qparam_rec *qp, size_t limit, struct err *e)
{
	struct graph_value *v = graph_value(c->gr, qp->name);
	struct tensor t = { 0 }, q = { 0 };
	struct model_map map = { 0 };
	char *sname = NULL, *zname = NULL, *qname = NULL, *dq = NULL;
	char *name = NULL;
	int bias = qp->role == ROLE_BIAS, axis = -1, rc = -1;
	int keep, *rd = NULL;
	size_t nrd = 0, i;
	struct qparam qa;

	if ((name = strdup(qp->name)) == NULL)
		return err_nomem(e);
	if (readers(c, name, limit, &rd, &nrd, e) != 0)
		goto done;
	if (nrd == 0) {
		note(c, "%s: no node of the main graph reads it: left alone",
		    name);
		c->rep->skipped++;
		rc = 0;
		goto done;
	}
	/* read only: lent from the model when it can be, not copied */
	if (model_tensor_map(c->m, v->init, &t, &map, e) != 0)
		goto done;
	/*
	 * Per axis when there are several channels (classify() checked them
	 * against the initializer's dims); one channel is per tensor.
	 */
	if (qp->q.n > 1) {
		axis = qp->q.axis < 0 ? qp->q.axis + t.rank : qp->q.axis;
		if (axis < 0 || axis >= t.rank ||
		    (int64_t)qp->q.n != t.dims[axis]) {
			err_set(e, "%s: channels do not fit the tensor", name);
			goto done;
		}
	}
	qa = qp->q;
	qa.axis = axis;
	if (add_params(c, name, float_type(c, name), &qa, &sname, &zname,
	    e) != 0)
		goto done;
	keep = subgraph_reads(c, name) || v->is_output;
	if (c->o && c->o->weights_float && !bias) {
		/* Q reads the float weight; consumers read DQ. */
		if ((qname = add_qdq(c, 1, name, name, sname, zname, axis,
		    NULL, e)) == NULL)
			goto done;
		keep = 1;
	} else {
		struct qdq_wcache *wc = c->o ? c->o->wcache : NULL;
		const struct tensor *qt = wc ? qdq_wcache_get(wc, name, &t,
		    &qa, bias) : NULL;

		if (qt == NULL && (quantize_tensor(&t, &qa, axis, bias, &q,
		    e) != 0 || (wc && qdq_wcache_put(wc, name, &t, &qa, bias,
		    &q, e) != 0)))
			goto done;
		if ((qname = qt ? add_cached(c, name, "_quantized", qt, e) :
		    add_tensor(c, name, "_quantized", &q, e)) == NULL)
			goto done;
	}
	if ((dq = add_qdq(c, 0, name, qname, sname, zname, axis, NULL,
	    e)) == NULL)
		goto done;
	for (i = 0; i < nrd; i++)
		if (rewire(c, rd[i], name, dq, e) != 0)
			goto done;
	if (!keep)
		remove_initializer(c, name);
	else if (!(c->o && c->o->weights_float && !bias))
		note(c, "%s: also read by a subgraph or a graph output: the "
		    "float copy is kept", name);
	if (bias)
		c->rep->biases++;
	else
		c->rep->weights++;
	rc = 0;
done:
	model_map_release(&map, &t);
	tensor_release(&q);
	free(rd);
	free(sname);
	free(zname);
	free(qname);
	free(dq);
	free(name);
	return rc;
}

/* ---- activations ---- */

/*
 * Rename the producer's output X to X_QuantizeLinear_Input, so that X
 * itself can become a DequantizeLinear's output (graph outputs keep their
 * names). The new name in *src.
 */
static int
rename_output(struct ctx *c, const char *x, char **src, struct err *e)
{
	struct graph_value *v = graph_value(c->gr, x);
	Onnx__NodeProto *p;
	size_t j;

	if (v == NULL || v->producer < 0)
		return err_set(e, "%s: no producer", x);
	p = c->g->node[v->producer];
	for (j = 0; j < p->n_output; j++)
		if (strcmp(str_or_empty(p->output[j]), x) == 0)
			break;
	if (j == p->n_output)
		return err_set(e, "%s: not found among its producer's outputs",
		    x);
	if ((*src = new_name(c, x, "_QuantizeLinear_Input")) == NULL)
		return err_nomem(e);
	free(p->output[j]);
	if ((p->output[j] = strdup(*src)) == NULL)
		return err_nomem(e);
	return 0;
}

static int
in_list(const int *v, size_t n, int x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* Q -> DQ on src; the DequantizeLinear writes out (or a new name). */
static char *
add_pair(struct ctx *c, const char *base, const char *src, const char *sname,
    const char *zname, const char *out, struct err *e)
{
	char *qo, *dq;

	if ((qo = add_qdq(c, 1, base, src, sname, zname, -1, NULL, e)) == NULL)
		return NULL;
	dq = add_qdq(c, 0, base, qo, sname, zname, -1, out, e);
	free(qo);
	return dq;
}

/*
 * The five cases of ORT's converted activations (see qdq.h): Q1 on src,
 * DQ1 for the readers that keep type 1 (and the graph output), a DQ1
 * clone, Q2 and DQ2 for the receiving nodes.
 */
static int
apply_convert(struct ctx *c, const struct qparam_rec *qp, const struct convert_rec *cv,
    const char *src, int is_out, const int *rd, size_t nrd,
    const char *sname, const char *zname, struct err *e)
{
	const char *x = qp->name;
	char *s2 = NULL, *z2 = NULL, *q1 = NULL, *dq1 = NULL, *feed = NULL;
	char *q2 = NULL, *dq2 = NULL, *base2 = NULL;
	int *recv = NULL, ni, rc = -1;
	size_t nrecv = 0, nother = 0, i, j;

	if ((recv = malloc((nrd ? nrd : 1) * sizeof *recv)) == NULL)
		return err_nomem(e);
	for (i = 0; i < nrd; i++) {
		int r = cv->recv == NULL;

		for (j = 0; !r && j < cv->nrecv; j++)
			r = strmap_get(c->byname, cv->recv[j], &ni) &&
			    c->nodes[ni] == c->g->node[rd[i]];
		if (r)
			recv[nrecv++] = rd[i];
		else
			nother++;
	}
	if ((base2 = str_cat(x, "_convert")) == NULL) {
		err_nomem(e);
		goto done;
	}
	if (add_params(c, base2, float_type(c, cv->name), &cv->q, &s2, &z2,
	    e) != 0 ||
	    (q1 = add_qdq(c, 1, x, src, sname, zname, -1, NULL, e)) == NULL)
		goto done;
	if (is_out && nrd == 0) {
		/* 5: a graph output nothing else reads is itself converted. */
		if ((feed = add_qdq(c, 0, x, q1, sname, zname, -1, NULL,
		    e)) == NULL ||
		    (q2 = add_qdq(c, 1, base2, feed, s2, z2, -1, NULL,
		    e)) == NULL ||
		    (dq2 = add_qdq(c, 0, base2, q2, s2, z2, -1, x, e)) == NULL)
			goto done;
		rc = 0;
		goto done;
	}
	if (is_out || nother > 0) {
		/* DQ1: the readers that keep type 1, and the graph output. */
		if ((dq1 = add_qdq(c, 0, x, q1, sname, zname, -1,
		    is_out ? x : NULL, e)) == NULL)
			goto done;
		for (i = 0; !is_out && i < nrd; i++)
			if (!in_list(recv, nrecv, rd[i]) &&
			    rewire(c, rd[i], x, dq1, e) != 0)
				goto done;
	}
	if (nrecv == 0) {
		note(c, "%s: convert: no reader receives it", x);
		rc = 0;
		goto done;
	}
	if (is_out && nother == 0)
		feed = strdup(x);	/* 3: Q2 reads DQ1, the graph output */
	else	/* 1: one chain; 2, 4: a DQ1 clone feeds the conversion */
		feed = add_qdq(c, 0, x, q1, sname, zname, -1, NULL, e);
	if (feed == NULL) {
		err_nomem(e);
		goto done;
	}
	if ((q2 = add_qdq(c, 1, base2, feed, s2, z2, -1, NULL, e)) == NULL ||
	    (dq2 = add_qdq(c, 0, base2, q2, s2, z2, -1, NULL, e)) == NULL)
		goto done;
	for (i = 0; i < nrecv; i++)
		if (rewire(c, recv[i], x, dq2, e) != 0)
			goto done;
	rc = 0;
done:
	free(recv);
	free(base2);
	free(s2);
	free(z2);
	free(q1);
	free(dq1);
	free(feed);
	free(q2);
	free(dq2);
	return rc;
}

static int
apply_act(struct ctx *c, const struct qparam_rec *qp, size_t limit, struct err *e)
{
	const char *x = qp->name;
	struct graph_value *v = graph_value(c->gr, x);
	char *sname = NULL, *zname = NULL, *src = NULL, *dq = NULL;
	int *rd = NULL, is_out, sub, ci, rc = -1;
	size_t nrd = 0, i;

	if (readers(c, x, limit, &rd, &nrd, e) != 0)
		return -1;
	is_out = v->is_output && v->kind != VALUE_INPUT;
	sub = subgraph_reads(c, x);
	if (nrd == 0 && !is_out && !sub) {
		note(c, "%s: no node reads it: left alone", x);
		c->rep->skipped++;
		free(rd);
		return 0;
	}
	/*
	 * Read only by subgraphs: the pair goes between the producer and
	 * them, as for a graph output, so the subgraphs keep their names.
	 * Left float, ONNX Runtime's QDQ propagation would move a
	 * DequantizeLinear across a Transpose or Reshape producing it and
	 * fail on the subgraph's implicit input (an assertion, at every
	 * optimization level but "disabled").
	 */
	if (nrd == 0 && !is_out) {
		note(c, "%s: read only by subgraphs: they read the quantized "
		    "value", x);
		is_out = 1;
	}
	if (add_params(c, x, float_type(c, x), &qp->q, &sname, &zname,
	    e) != 0)
		goto done;
	if (is_out) {
		if (rename_output(c, x, &src, e) != 0)
			goto done;
	} else if ((src = strdup(x)) == NULL) {
		err_nomem(e);
		goto done;
	}
	if (sub && !is_out)
		note(c, "%s: a subgraph reads it: it reads the float value", x);
	if (strmap_get(c->p->cvidx, x, &ci)) {
		if (apply_convert(c, qp, &c->p->cv[ci], src, is_out, rd, nrd,
		    sname, zname, e) != 0)
			goto done;
		c->rep->converts++;
	} else if (c->o && c->o->dedicated_pairs && nrd + is_out > 1) {
		for (i = 0; i < nrd; i++) {
			free(dq);
			if ((dq = add_pair(c, x, src, sname, zname, NULL,
			    e)) == NULL || rewire(c, rd[i], x, dq, e) != 0)
				goto done;
		}
		if (is_out) {
			free(dq);
			if ((dq = add_pair(c, x, src, sname, zname, x,
			    e)) == NULL)
				goto done;
		}
	} else {
		if ((dq = add_pair(c, x, src, sname, zname, is_out ? x : NULL,
		    e)) == NULL)
			goto done;
		for (i = 0; !is_out && i < nrd; i++)
			if (rewire(c, rd[i], x, dq, e) != 0)
				goto done;
	}
	c->rep->acts++;
	rc = 0;
done:
	free(rd);
	free(sname);
	free(zname);
	free(src);
	free(dq);
	return rc;
}

/* Put the nodes in topological order (the checker wants it). */
static int
sort_nodes(struct ctx *c, struct err *e)
{
	Onnx__NodeProto **v;
	const int *topo;
	size_t i, n = c->g->n_node;

	if (graph_reindex(c->gr, e) != 0)
		return -1;
	if ((v = malloc((n ? n : 1) * sizeof *v)) == NULL)
		return err_nomem(e);
	topo = graph_topo(c->gr);
	for (i = 0; i < n; i++)
		v[i] = c->g->node[topo[i]];
	memcpy(c->g->node, v, n * sizeof *v);
	free(v);
	/* the last use of c->gr: no reindex after (its node indices are
	   stale now) */
	return 0;
}

/* A weight-only stream: its blockq records, nbitswrite.h. */
static int
apply_blockq(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, struct qdq_report *rep, struct err *e)
{
	struct nbitswrite_opts wo = { o && o->format == QDQ_FORMAT_QDQ,
	    p->file ? p->file : "<stream>", o ? o->note : NULL,
	    o ? o->note_ctx : NULL };
	struct nbitswrite_report wr;

	if (p->nqp || p->ncv || p->nfd)
		return err_set(e, "%s: blockq records (onnx-qparams "
		    "--weight-only) and qparam, convert or fold records in "
		    "one stream", wo.stream);
	rep->opset_from = model_opset(m, "");
	if (!wo.qdq && opset_import_add(m->proto, MS_DOMAIN, 1, e) < 0)
		return -1;
	if (nbitswrite_apply(m, p->bq, p->nbq, &wo, &wr, e) < 0)
		return -1;
	rep->weights = wr.weights;
	rep->skipped = wr.skipped;
	rep->dequantize = wr.dequantize;
	rep->ms_domain = !wo.qdq;
	rep->opset_to = model_opset(m, "");
	return 0;
}

/* The QOperator form of the QDQ model just written (qop.h). */
static int
write_qoperator(struct model *m, const struct qdq_opts *o,
    struct qdq_report *report, struct err *e)
{
	struct qop_report r;

	if (qop_rewrite(m, o->note, o->note_ctx, &r, e) != 0)
		return -1;
	report->qlinear = r.qlinear;
	report->moved = r.moved;
	report->left_qdq = r.left;
	report->qdq_removed = r.removed;
	return 0;
}

/* c's rewrite of m by p begun: its graph indexed and checked, nodes named. */
static int
ctx_open(struct ctx *c, struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, struct qdq_report *report, int check,
    struct err *e)
{
	size_t i;

	c->m = m;
	c->g = m->proto->graph;
	c->p = p;
	c->o = o;
	c->rep = report;
	c->domain = "";
	if ((c->gr = graph_new(c->g, e)) == NULL)
		return err_prefix(e, "%s", m->path);
	/* a stream of another model would apply scales to other tensors */
	if (check && streamfit_check(facts(p)->match, c->gr, m->path, e) != 0)
		return -1;
	c->skip = calloc(p->nqp ? p->nqp : 1, 1);
	c->weight = calloc(p->nqp ? p->nqp : 1, 1);
	if (!c->skip || !c->weight)
		return err_nomem(e);
	if (!check)
		return 0;	/* (a front's nodes and folds) */
	if ((c->gone = strmap_new()) == NULL)
		return err_nomem(e);
	if ((c->names = weights_node_names(c->g, e)) == NULL)
		return -1;
	c->nnodes = c->g->n_node;
	c->nodes = malloc((c->nnodes ? c->nnodes : 1) * sizeof *c->nodes);
	c->byname = strmap_new();
	if (!c->nodes || !c->byname ||
	    strmap_reserve(c->byname, c->nnodes) < 0)
		return err_nomem(e);
	for (i = 0; i < c->nnodes; i++) {
		c->nodes[i] = c->g->node[i];
		if (strmap_put(c->byname, c->names[i], (int)i) != 0)
			return err_nomem(e);
	}
	return 0;
}

static void
ctx_close(struct ctx *c)
{
	nameuses_free(c->uses);
	graph_free(c->gr);
	free(c->names);
	free(c->nodes);
	strmap_free(c->byname);
	strmap_free(c->gone);
	free(c->skip);
	free(c->weight);
}

/*
 * The rewrite up to the activations: folds, the opset or domain, the
 * constants (need and wneed as classify() gives them; *limit: the nodes
 * before the weights'). With consts, the names of the constants then.
 */
static int
apply_front(struct ctx *c, int *need, int *wneed, size_t *limit,
    struct strmap *consts, struct err *e)
{
	const struct qdq_plan *p = c->p;
	struct qdq_report *report = c->rep;
	size_t i;

	if (apply_folds(c, e) != 0 ||
	    (c->uses = nameuses_new(c->g, e)) == NULL ||
	    classify(c, NULL, need, wneed, e) != 0 ||
	    choose_domain(c, *need, e) != 0)
		return -1;
	/* a raised opset rewrote nodes: their uses are to be read again */
	if (report->opset_to != report->opset_from) {
		nameuses_free(c->uses);
		if ((c->uses = nameuses_new(c->g, e)) == NULL)
			return -1;
	}
	*limit = c->g->n_node;
	for (i = 0; consts && i < c->g->n_initializer; i++) {
		const char *name = str_or_empty(c->g->initializer[i]->name);
		const struct graph_value *v = graph_value(c->gr, name);

		if (v && v->kind == VALUE_INITIALIZER &&
		    strmap_put(consts, name, 0) != 0)
			return err_nomem(e);
	}
	for (i = 0; i < p->nqp; i++) {
		if (c->skip[i]) {
			report->skipped++;
			continue;
		}
		if (c->weight[i] && apply_weight(c, &p->qp[i], *limit, e) != 0)
			return err_prefix(e, "%s", c->m->path);
	}
	/* what apply_act() asks is of the graph as the weights left it */
	nameuses_free(c->uses);
	c->uses = NULL;
	return 0;
}

/* The rest: the activations (c->gr indexed unless reindex), then order. */
static int
apply_back(struct ctx *c, size_t limit, int reindex, struct err *e)
{
	const struct qdq_plan *p = c->p;
	const struct qdq_opts *o = c->o;
	struct model *m = c->m;
	struct qdq_report *report = c->rep;
	size_t i;

	if (reindex && graph_reindex(c->gr, e) != 0)
		return -1;
	c->consumers_hold = 1;
	for (i = 0; i < p->nqp; i++)
		if (!c->skip[i] && !c->weight[i] &&
		    apply_act(c, &p->qp[i], limit, e) != 0)
			return err_prefix(e, "%s", m->path);
	if (o && o->resize_expand &&
	    qdqresize_expand(m, &report->resize_rewrites, e) != 0)
		return -1;
	if (sort_nodes(c, e) != 0)
		return err_prefix(e, "%s", m->path);
	if (o && o->fold_scales &&
	    qdqscale_fold(m, &report->scale_folds, e) != 0)
		return -1;
	if (o && o->fold_biases &&
	    qdqscale_fold_biases(m, &report->bias_folds, e) != 0)
		return -1;
	if (o && o->format == QDQ_FORMAT_QOPERATOR)
		return write_qoperator(m, o, report, e);
	return 0;
}

int
qdq_apply(struct model *m, const struct qdq_plan *p, const struct qdq_opts *o,
    struct qdq_report *report, struct err *e)
{
	struct ctx c = { 0 };
	struct qdq_report dummy;
	size_t limit;
	int need, wneed, rc = -1;

	if (report == NULL)
		report = &dummy;
	memset(report, 0, sizeof *report);
	if (p->ndy > 0) {
		if (o && o->format == QDQ_FORMAT_QDQ)
			return err_set(e, "%s: dynamic records: --format qdq "
			    "cannot write dynamic quantization (--format auto "
			    "does)", plan_file(p));
		return dynwrite_apply(m, p, o, report, e);
	}
	if (m->proto->graph == NULL)
		return err_set(e, "%s: no graph", m->path);
	if (p->nbq)
		return apply_blockq(m, p, o, report, e);
	if (ctx_open(&c, m, p, o, report, 1, e) == 0 &&
	    apply_front(&c, &need, &wneed, &limit, NULL, e) == 0 &&
	    apply_back(&c, limit, 1, e) == 0)
		rc = 0;
	ctx_close(&c);
	return rc;
}

/* ---- in two steps (qdq_front_make, qdq_front_apply) ---- */

void
qdq_front_free(struct qdq_front *f)
{
	if (f == NULL)
		return;
	strmap_free(f->byname);
	free(f->pos);
	strmap_free(f->consts);
	for (size_t i = 0; i < f->nw; i++)
		qparam_rec_release(&f->w[i]);
	free(f->w);
	for (size_t i = 0; i < f->nfd; i++)
		fold_rec_release(&f->fd[i]);
	free(f->fd);
	strmap_free(f->gone);
	free(f);
}

const struct qdq_report *
qdq_front_report(const struct qdq_front *f)
{
	return &f->rep;
}

/* Where each of c's named nodes is in its graph now, -1 gone. */
static int
node_positions(const struct ctx *c, int **pos, struct err *e)
{
	size_t n = c->g->n_node, at = 0;

	*pos = malloc((c->nnodes ? c->nnodes : 1) * sizeof **pos);
	if (*pos == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < c->nnodes; i++) {
		(*pos)[i] = -1;
		/* (in the order they were: from where the last one was) */
		for (size_t k = 0; c->nodes[i] && k < n; k++)
			if (c->g->node[(at + k) % n] == c->nodes[i]) {
				(*pos)[i] = (int)((at + k) % n);
				at = (at + k + 1) % n;
				break;
			}
	}
	return 0;
}

/* f keeps copies of the records of c's constants. */
static int
keep_constants(struct qdq_front *f, const struct ctx *c, struct err *e)
{
	const struct qdq_plan *p = c->p;

	if ((f->w = calloc(p->nqp + 1, sizeof *f->w)) == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < p->nqp; i++) {
		struct qparam_rec *w = &f->w[f->nw];

		if (!c->weight[i])
			continue;
		w->q.axis = -1;
		w->role = p->qp[i].role;
		f->nw++;
		if ((w->name = strdup(p->qp[i].name)) == NULL)
			return err_nomem(e);
		if (qparam_copy(&w->q, &p->qp[i].q, e) < 0)
			return -1;
	}
	if ((f->fd = calloc(p->nfd + 1, sizeof *f->fd)) == NULL)
		return err_nomem(e);
	for (; f->nfd < p->nfd; f->nfd++) {
		struct fold_rec *d = &f->fd[f->nfd];

		if ((d->node = strdup(p->fd[f->nfd].node)) == NULL ||
		    (d->into = strdup(p->fd[f->nfd].into)) == NULL) {
			f->nfd++;
			return err_nomem(e);
		}
	}
	return 0;
}

int
qdq_front_make(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, struct qdq_front **front, struct err *e)
{
	struct ctx c = { 0 };
	struct qdq_front *f;
	int rc = -1;

	*front = NULL;
	if (p->ndy || p->nbq || m->proto->graph == NULL)
		return 1;
	if ((f = calloc(1, sizeof *f)) == NULL ||
	    (f->consts = strmap_new()) == NULL) {
		qdq_front_free(f);
		return err_nomem(e);
	}
	f->from = model_opset(m, "");
	if (ctx_open(&c, m, p, o, &f->rep, 1, e) < 0 ||
	    apply_front(&c, &f->need, &f->wneed, &f->limit, f->consts,
	    e) < 0 ||
	    node_positions(&c, &f->pos, e) < 0 ||
	    keep_constants(f, &c, e) < 0)
		goto out;
	/* the activations' skips are counted by qdq_front_apply() */
	for (size_t i = 0; i < p->nqp; i++)
		f->rep.skipped -= c.skip[i] && !c.weight[i];
	f->domain = c.domain;
	f->byname = c.byname;
	f->gone = c.gone;
	f->nnodes = c.nnodes;
	c.byname = NULL;
	c.gone = NULL;
	*front = f;
	f = NULL;
	rc = 0;
out:
	ctx_close(&c);
	qdq_front_free(f);
	return rc;
}

/* Are records a and b the same parameters of the same constant? */
static int
same_constant(const struct qparam_rec *a, const struct qparam_rec *b)
{
	return strcmp(a->name, b->name) == 0 && a->role == b->role &&
	    a->q.type == b->q.type && a->q.axis == b->q.axis &&
	    a->q.n == b->q.n && memcmp(a->q.scale, b->q.scale,
	    a->q.n * sizeof *a->q.scale) == 0 && memcmp(a->q.zp, b->q.zp,
	    a->q.n * sizeof *a->q.zp) == 0;
}

int
qdq_front_fits(const struct qdq_front *f, const struct qdq_plan *p)
{
	size_t k = 0;

	if (p->ndy || p->nbq || p->nfd != f->nfd)
		return 0;
	for (size_t i = 0; i < p->nfd; i++)
		if (strcmp(p->fd[i].node, f->fd[i].node) != 0 ||
		    strcmp(p->fd[i].into, f->fd[i].into) != 0)
			return 0;
	for (size_t i = 0; i < p->nqp; i++)
		if (strmap_get(f->consts, p->qp[i].name, NULL) &&
		    (k >= f->nw || !same_constant(&p->qp[i], &f->w[k++])))
			return 0;
	return k == f->nw;
}

/* Does opset need ask what f's need asked (the same domain, opset)? */
static int
same_opset(const struct qdq_front *f, const struct qdq_opts *o, int need)
{
	if (need == f->need)
		return 1;
	if (o && o->domain == QDQ_DOMAIN_MS)
		return need > 0 && f->need > 0;
	return need <= f->from && f->need <= f->from;
}

int
qdq_front_apply(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, const struct qdq_front *f,
    struct qdq_report *report, struct err *e)
{
	struct ctx c = { 0 };
	struct qdq_report dummy;
	int need, wneed, rc = -1;

	if (report == NULL)
		report = &dummy;
	*report = f->rep;
	if (!qdq_front_fits(f, p) || m->proto->graph == NULL)
		return 1;
	if (ctx_open(&c, m, p, o, report, 0, e) < 0)
		goto out;
	c.domain = f->domain;
	c.names = NULL;
	c.byname = f->byname;	/* lent: not freed by ctx_close() */
	c.gone = f->gone;
	c.nnodes = f->nnodes;
	if ((c.nodes = malloc((c.nnodes ? c.nnodes : 1) *
	    sizeof *c.nodes)) == NULL) {
		err_nomem(e);
		goto out;
	}
	for (size_t i = 0; i < c.nnodes; i++) {
		if (f->pos[i] >= (int)c.g->n_node) {
			err_set(e, "%s: not the model of the front", m->path);
			goto out;
		}
		c.nodes[i] = f->pos[i] >= 0 ? c.g->node[f->pos[i]] : NULL;
	}
	if ((rc = classify(&c, f, &need, &wneed, e)) != 0)
		goto out;
	rc = 1;
	if (!same_opset(f, o, need > f->wneed ? need : f->wneed))
		goto out;
	for (size_t i = 0; i < p->nqp; i++)
		report->skipped += c.skip[i] && !c.weight[i];
	rc = apply_back(&c, f->limit, 0, e) == 0 ? 0 : -1;
out:
	c.byname = NULL;
	c.gone = NULL;
	ctx_close(&c);
	return rc;
}
