/*
 * onnx-verify: run a model on the samples of data directories and compare
 * its outputs with the expected ones stored there, or run an fp32 model
 * and its quantized version side by side and measure what quantization
 * costs, per output and (--per-tensor) per quantized tensor. See
 * onnx-verify(1). Exit status follows cmp(1): 0 within the gates, 1
 * outside, 2 trouble.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "cli.h"
#include "compare.h"
#include "dataset.h"
#include "graph.h"
#include "interp.h"
#include "model.h"
#include "ops.h"
#include "outfile.h"
#include "prep.h"
#include "progress.h"
#include "stream.h"
#include "strmap.h"
#include "svgplot.h"
#include "tensor.h"

#define PROG "onnx-verify"

enum { EXIT_SAME = 0, EXIT_DIFFERENT = 1, EXIT_TROUBLE = 2 };
enum format { FMT_TABLE, FMT_TSV, FMT_JSON };
enum sortkey { SORT_OWN, SORT_SNR, SORT_GRAPH };
enum role { ROLE_ACT, ROLE_WEIGHT, ROLE_BIAS };

static const char *const role_names[] = { "act", "weight", "bias" };

/* --min-snr DB (name NULL: every output) or NAME=DB. */
struct snr_gate {
	const char *name;
	double db;
};

struct opts {
	const char **dirs;
	int ndirs;
	double rtol, atol;
	int tol_given;		/* --rtol or --atol given */
	struct snr_gate *gates;
	int ngates;
	double min_agreement;	/* NaN: not checked */
	const char *labels;	/* NULL: no labels */
	int format;		/* enum format */
	const char *plot;	/* SVG path, NULL: none */
	int per_tensor;
	int sort;		/* enum sortkey */
	const char *save_dir;	/* NULL: outputs not saved */
	int threads;
	int quiet;
	const char *model;
	const char *qmodel;	/* the two-model form; NULL for one model */
};

/* A loaded model with its interpreter and the names datasets need. */
struct runner {
	struct model *m;
	struct interp *ip;
	struct dataset_spec spec;
	const char **in_names, **out_names;
	int *in_dtypes;
};

/* One class index per row, for each sample. */
struct labels {
	const char *path;
	int n;
	int64_t **v;
	int64_t *count;
	long *line;		/* where sample i's labels are, for messages */
};

/* What is known of one output at the end. */
struct outrow {
	const char *name;
	struct compare cmp;	/* output (x) against reference */
	struct dataset_cmp tol;	/* the one-model form's tolerance check */
	double min_snr;		/* -INFINITY: no gate */
	const char *status;
};

/*
 * Per tensor: one quantized tensor of QMODEL (a DequantizeLinear output)
 * matched to the fp32 tensor it stands for.
 */
struct qt {
	const char *name;	/* fp32 tensor (points into a model) */
	const char *dq;		/* the DequantizeLinear output in QMODEL */
	int role;		/* enum role */
	int qtype;		/* the integer type */
	int order;		/* position along QMODEL's graph */
	int src;		/* index into pertensor.src (activations), -1 */
	/* The pair, to quantize the fp32 tensor alone (activations). */
	const Onnx__NodeProto *qnode, *dqnode;
	const struct op_def *qdef, *dqdef;
	int qopset, dqopset;
	struct tensor qp[2], dqp[2];	/* scale, zero point (may be empty) */
	int has_own;		/* the pair's parameters are constants */
	struct compare carried;	/* QMODEL's DQ output against fp32 */
	struct compare own;	/* the pair alone against fp32 */
	int64_t counted, clipped;	/* elements seen, and clipped */
	int64_t qlo, qhi;	/* integers seen */
	int64_t tlo, thi;	/* the type's range */
};

/* An fp32 activation some quantized tensors stand for. */
struct source {
	const char *name;
	struct tensor held;	/* this sample's value, until QMODEL ran */
	int clamp;		/* only Relu/Clip read it: compare clamped */
	double lo, hi;
	int users, pending;
	int *qts;		/* indices into pertensor.t */
	int nqts;
};

struct pertensor {
	const struct opts *o;
	struct qt *t;
	int n;
	struct source *src;
	int nsrc;
	struct strmap *by_src;	/* fp32 name -> source */
	struct strmap *by_dq;	/* DQ output -> qt (activations) */
	const char **unmatched;	/* DQ outputs not matched */
	int nunmatched;
	const struct model *fm;	/* the fp32 model */
	struct model *prepped;	/* fp32 model as onnx-qdq-insert sees it */
	struct graph *qg, *fg, *pg;
	int64_t sample;
};

static const char usage_text[] =
    "usage: onnx-verify -d DIR [-d DIR ...] [--atol A] [--rtol R] "
    "[--min-snr [NAME=]DB]\n"
    "                   [--min-agreement PCT] [--labels FILE] "
    "[--per-tensor]\n"
    "                   [--sort own|snr|graph] [--format table|tsv|json] "
    "[--plot FILE.svg]\n"
    "                   [--save-outputs OUTDIR] [--threads N] [--quiet] "
    "MODEL [QMODEL]\n";

/*
 * The progress bar, like stderr itself, is the process's: every message
 * erases it first (cli_before_message).
 */
static struct progress bar;

static void
clear_bar(void)
{
	progress_clear(&bar);
}

static const char *
str_or_empty(const char *s)
{
	return s ? s : "";
}

static int
is_op(const Onnx__NodeProto *n, const char *op)
{
	const char *d = str_or_empty(n->domain);

	return strcmp(str_or_empty(n->op_type), op) == 0 && (*d == '\0' ||
	    strcmp(d, "ai.onnx") == 0 || strcmp(d, "com.microsoft") == 0);
}

static void
release_all(struct tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		tensor_release(&t[i]);
}

/* Models. */

static void
runner_free(struct runner *r)
{
	interp_free(r->ip);
	model_free(r->m);
	free(r->in_names);
	free(r->out_names);
	free(r->in_dtypes);
	memset(r, 0, sizeof *r);
}

static int
runner_init(struct runner *r, const char *path, int threads,
    interp_observe_fn observe, void *ctx, struct err *e)
{
	struct interp_opts io = { .threads = threads, .observe = observe,
	    .observe_ctx = ctx };
	int64_t dims[TENSOR_MAX_RANK];
	int rank, ni, no;

	memset(r, 0, sizeof *r);
	if (!(r->m = model_load(path, e)))
		return -1;
	if (!(r->ip = interp_new(r->m, &io, e))) {
		err_prefix(e, "%s", path);
		runner_free(r);
		return -1;
	}
	ni = interp_ninputs(r->ip);
	no = interp_noutputs(r->ip);
	r->in_names = calloc((size_t)ni + 1, sizeof *r->in_names);
	r->in_dtypes = calloc((size_t)ni + 1, sizeof *r->in_dtypes);
	r->out_names = calloc((size_t)no + 1, sizeof *r->out_names);
	if (!r->in_names || !r->in_dtypes || !r->out_names) {
		runner_free(r);
		return err_nomem(e);
	}
	for (int i = 0; i < ni; i++) {
		r->in_names[i] = interp_input_name(r->ip, i);
		r->in_dtypes[i] = interp_input_type(r->ip, i, &rank, dims);
	}
	for (int i = 0; i < no; i++)
		r->out_names[i] = interp_output_name(r->ip, i);
	r->spec.ninputs = ni;
	r->spec.input_names = r->in_names;
	r->spec.input_dtypes = r->in_dtypes;
	r->spec.noutputs = no;
	r->spec.output_names = r->out_names;
	return 0;
}

/* Labels. */

static void
labels_free(struct labels *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->count);
	free(l->line);
	memset(l, 0, sizeof *l);
}

/* Parse one line of class indices into a malloc'd array. */
static int
labels_line(const char *path, long lineno, char *s, int64_t **v,
    int64_t *n, struct err *e)
{
	size_t cap = 0;
	char *tok, *save, *end;

	*v = NULL;
	*n = 0;
	for (tok = strtok_r(s, " \t\r\n,", &save); tok;
	    tok = strtok_r(NULL, " \t\r\n,", &save)) {
		long long x;

		errno = 0;
		x = strtoll(tok, &end, 10);
		if (end == tok || *end || errno || x < 0) {
			free(*v);
			return err_set(e, "%s:%ld: not a class index: %.40s",
			    path, lineno, tok);
		}
		if ((size_t)*n == cap) {
			int64_t *nv = realloc(*v, (cap = cap ? 2 * cap : 4) *
			    sizeof *nv);

			if (!nv) {
				free(*v);
				return err_nomem(e);
			}
			*v = nv;
		}
		(*v)[(*n)++] = x;
	}
	return 0;
}

/*
 * One line per sample, in the order samples are taken: class indices
 * separated by blanks or commas. Empty lines and lines starting with '#'
 * are skipped.
 */
static int
labels_load(struct labels *l, const char *path, int nsamples, struct err *e)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	int ret = -1;

	memset(l, 0, sizeof *l);
	l->path = path;
	if (!(fp = fopen(path, "r")))
		return err_errno(e, "%s", path);
	l->v = calloc((size_t)nsamples + 1, sizeof *l->v);
	l->count = calloc((size_t)nsamples + 1, sizeof *l->count);
	l->line = calloc((size_t)nsamples + 1, sizeof *l->line);
	if (!l->v || !l->count || !l->line) {
		err_nomem(e);
		goto out;
	}
	while (getline(&line, &cap, fp) != -1) {
		char *p = line;

		lineno++;
		p += strspn(p, " \t\r\n");
		if (*p == '\0' || *p == '#')
			continue;
		if (l->n == nsamples) {
			err_set(e, "%s:%ld: more lines than the %d samples",
			    path, lineno, nsamples);
			goto out;
		}
		if (labels_line(path, lineno, p, &l->v[l->n], &l->count[l->n],
		    e) < 0)
			goto out;
		l->line[l->n++] = lineno;
	}
	if (ferror(fp)) {
		err_errno(e, "%s", path);
		goto out;
	}
	if (l->n != nsamples) {
		err_set(e, "%s: %d lines of labels for %d samples", path, l->n,
		    nsamples);
		goto out;
	}
	ret = 0;
out:
	free(line);
	fclose(fp);
	if (ret < 0)
		labels_free(l);
	return ret;
}

/* Per tensor: matching QMODEL's quantized tensors to fp32 tensors. */

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
match_activation(const struct pertensor *pt, const Onnx__NodeProto *qn,
    const char *dq)
{
	const char *name = qn->input[0];

	for (int depth = 0; name && depth < 64; depth++) {
		const struct graph_value *v;
		const Onnx__NodeProto *p, *q;

		if (is_activation(pt->fg, name))
			return name;
		v = graph_value(pt->qg, name);
		if (!v || v->producer < 0)
			break;
		p = node_at(pt->qg, v->producer);
		if (!is_op(p, "DequantizeLinear") || p->n_input < 1 ||
		    !(q = q_producer(pt->qg, p->input[0])) || q->n_input < 1)
			break;
		name = q->input[0];
	}
	if (is_activation(pt->fg, dq))
		return dq;
	return via_consumers(pt->qg, dq, pt->fg, is_activation);
}

/* The fp32 constant a quantized weight or bias stands for. */
static const char *
match_constant(const struct pertensor *pt, const Onnx__NodeProto *qn,
    const char *dq)
{
	const char *name;

	if ((name = via_consumers(pt->qg, dq, pt->pg, is_constant)))
		return name;
	if (is_constant(pt->pg, dq))
		return dq;
	if (qn && qn->n_input > 0 && is_constant(pt->pg, qn->input[0]))
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
	struct op_ctx c;
	void *state = NULL;
	int r;

	memset(&c, 0, sizeof c);
	memset(out, 0, sizeof *out);
	c.node = n;
	c.opset = opset;
	c.nin = 3;
	c.in = in;
	c.nout = 1;
	c.out = out;
	c.threads = threads;
	c.state = &state;
	c.err = e;
	e->msg[0] = '\0';
	r = def->run(&c);
	if (state && def->free_state)
		def->free_state(state);
	if (r != 0) {
		if (!e->msg[0])
			err_set(e, "kernel failed");
		tensor_release(out);
		return -1;
	}
	return 0;
}

static int64_t
int_at(const struct tensor *t, int64_t i)
{
	switch (t->dtype) {
	case DT_UINT8:
	case DT_UINT4:
		return ((const uint8_t *)t->data)[i];
	case DT_INT8:
	case DT_INT4:
		return ((const int8_t *)t->data)[i];
	default:
		return (int64_t)tensor_get(t, i);
	}
}

static double
float_at(const struct tensor *t, int64_t i)
{
	return t->dtype == DT_FLOAT ? ((const float *)t->data)[i] :
	    tensor_get(t, i);
}

/*
 * Elements of x the pair clips: quantized to an end of the type's range
 * and beyond the end of the grid by more than half a step, so that the
 * error exceeds what rounding alone makes. Scales per tensor or per axis;
 * blocked scales are not counted.
 */
static void
count_clipped(struct qt *q, const struct tensor *x, const struct tensor *qv,
    const struct tensor *dq)
{
	const struct tensor *s = &q->dqp[0];
	int64_t inner = 1, A = 1;

	if (q->thi <= q->tlo || !s->data || x->nelem != qv->nelem ||
	    x->nelem != dq->nelem)
		return;
	if (s->nelem != 1) {
		int64_t axis = 1;

		for (size_t i = 0; i < q->dqnode->n_attribute; i++)
			if (strcmp(str_or_empty(q->dqnode->attribute[i]->name),
			    "axis") == 0)
				axis = q->dqnode->attribute[i]->i;
		if (axis < 0)
			axis += x->rank;
		if (s->rank != 1 || axis < 0 || axis >= x->rank ||
		    s->nelem != x->dims[axis])
			return;
		A = s->nelem;
		for (int d = (int)axis + 1; d < x->rank; d++)
			inner *= x->dims[d];
	}
	/* Locals, so the loop keeps them in registers. */
	int64_t counted = 0, clipped = 0, lo = q->qlo, hi = q->qhi;
	int64_t tlo = q->tlo, thi = q->thi;
	const float *xf = x->dtype == DT_FLOAT ? x->data : NULL;
	const uint8_t *u8 = qv->dtype == DT_UINT8 ? qv->data : NULL;

	for (int64_t i = 0; i < x->nelem; i++) {
		double xv = xf ? xf[i] : tensor_get(x, i), dv, half;
		int64_t k = u8 ? u8[i] : int_at(qv, i);

		if (isnan(xv))
			continue;
		counted++;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
		if (k > tlo && k < thi)
			continue;
		dv = float_at(dq, i);
		half = fabs(tensor_get(s, A == 1 ? 0 : i / inner % A)) / 2;
		if ((k <= tlo && xv < dv - half) || (k >= thi && xv > dv + half))
			clipped++;
	}
	q->counted += counted;
	q->clipped += clipped;
	q->qlo = lo;
	q->qhi = hi;
}

/*
 * The integer type of a pair: its zero point's, else Q's output_dtype,
 * else uint8.
 */
static int
pair_type(const struct qt *q, const Onnx__NodeProto *qn)
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
load_params(const struct pertensor *pt, const struct model *qm,
    const Onnx__NodeProto *n, struct tensor *p, struct err *e)
{
	for (size_t i = 1; i < 3 && i < n->n_input; i++) {
		if (!n->input[i] || !*n->input[i])
			continue;
		if (!is_constant(pt->qg, n->input[i]))
			return 1;
		if (decode_const(qm, pt->qg, n->input[i], &p[i - 1], e) < 0)
			return -1;
	}
	return 0;
}

/* Dequantize a weight or bias once and compare it with the fp32 constant. */
static int
weight_error(struct pertensor *pt, struct qt *q, const struct model *qm,
    const char *qin, struct err *e)
{
	struct tensor ref = { 0 }, in = { 0 }, qv = { 0 }, dq = { 0 };
	int r = -1;

	if (decode_const(pt->prepped, pt->pg, q->name, &ref, e) < 0 ||
	    decode_const(qm, pt->qg, qin, &in, e) < 0)
		goto out;
	if (q->qnode) {
		if (run_kernel(q->qdef, q->qnode, q->qopset, &in, q->qp,
		    pt->o->threads, &qv, e) < 0)
			goto out;
	} else
		tensor_move(&qv, &in);
	if (run_kernel(q->dqdef, q->dqnode, q->dqopset, &qv, q->dqp,
	    pt->o->threads, &dq, e) < 0)
		goto out;
	q->qtype = qv.dtype;
	dtype_int_range(qv.dtype, &q->tlo, &q->thi);
	compare_add(&q->own, &dq, &ref, -1);	/* no sample: compared once */
	q->carried = q->own;
	count_clipped(q, &ref, &qv, &dq);
	r = 0;
out:
	tensor_release(&ref);
	tensor_release(&in);
	tensor_release(&qv);
	tensor_release(&dq);
	return r;
}

static void
pertensor_free(struct pertensor *pt)
{
	for (int i = 0; i < pt->n; i++) {
		release_all(pt->t[i].qp, 2);
		release_all(pt->t[i].dqp, 2);
	}
	for (int i = 0; i < pt->nsrc; i++) {
		tensor_release(&pt->src[i].held);
		free(pt->src[i].qts);
	}
	free(pt->t);
	free(pt->src);
	free(pt->unmatched);
	strmap_free(pt->by_src);
	strmap_free(pt->by_dq);
	graph_free(pt->qg);
	graph_free(pt->fg);
	graph_free(pt->pg);
	model_free(pt->prepped);
	memset(pt, 0, sizeof *pt);
}

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
 * An activation already listed with the same fp32 source and parameters
 * (one pair per reader): reported once.
 */
static int
duplicate(const struct pertensor *pt, const struct qt *q)
{
	for (int i = 0; i < pt->n; i++) {
		const struct qt *o = &pt->t[i];

		if (o->role == ROLE_ACT && strcmp(o->name, q->name) == 0 &&
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
clip_bound(const struct pertensor *pt, const Onnx__NodeProto *n, int slot,
    const char *attr, double def, double *v, struct err *e)
{
	struct tensor t = { 0 };
	int64_t n1;

	*v = def;
	if (model_opset(pt->fm, "") < 11) {
		if (attr_find(n, attr))
			*v = attr_float(n, attr, 0);
		return 0;
	}
	if ((size_t)slot >= n->n_input || !n->input[slot] || !*n->input[slot])
		return 0;
	if (!is_constant(pt->fg, n->input[slot]))
		return 1;
	if (decode_const(pt->fm, pt->fg, n->input[slot], &t, e) < 0)
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
clamp_of(const struct pertensor *pt, const char *name, double *lo,
    double *hi, struct err *e)
{
	const struct graph_value *v = graph_value(pt->fg, name);

	if (!v || v->is_output || v->nconsumers == 0)
		return 0;
	for (int c = 0; c < v->nconsumers; c++) {
		const Onnx__NodeProto *n = node_at(pt->fg, v->consumers[c]);
		double a, b;
		int r;

		if (is_op(n, "Relu"))
			a = 0, b = INFINITY;
		else if (is_op(n, "Clip") && n->n_input > 0 &&
		    strcmp(str_or_empty(n->input[0]), name) == 0) {
			r = clip_bound(pt, n, 1, "min", -INFINITY, &a, e);
			if (r == 0)
				r = clip_bound(pt, n, 2, "max", INFINITY, &b,
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
add_source(struct pertensor *pt, struct qt *q, int qi, struct err *e)
{
	struct source *s;
	int k, *nq;

	if (!strmap_get(pt->by_src, q->name, &k)) {
		k = pt->nsrc++;
		if (strmap_put(pt->by_src, q->name, k) < 0)
			return err_nomem(e);
		s = &pt->src[k];
		memset(s, 0, sizeof *s);
		s->name = q->name;
		if ((s->clamp = clamp_of(pt, q->name, &s->lo, &s->hi, e)) < 0)
			return -1;
	}
	s = &pt->src[k];
	if (!(nq = realloc(s->qts, (size_t)(s->nqts + 1) * sizeof *nq)))
		return err_nomem(e);
	s->qts = nq;
	s->qts[s->nqts++] = qi;
	s->users++;
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

/*
 * Find every DequantizeLinear of QMODEL, what it stands for in the fp32
 * model, and the parameters to quantize that alone; weights and biases
 * are compared once, here.
 */
static int
pertensor_init(struct pertensor *pt, const struct opts *o,
    struct runner *fr, struct runner *qr, struct err *e)
{
	Onnx__GraphProto *qgp = qr->m->proto->graph;
	const int *topo;
	int *rank = NULL, nn;

	memset(pt, 0, sizeof *pt);
	pt->o = o;
	pt->fm = fr->m;
	if (!qgp || !fr->m->proto->graph)
		return err_set(e, "model without a graph");
	nn = (int)qgp->n_node;
	if (!(pt->qg = graph_new(qgp, e)) ||
	    !(pt->fg = graph_new(fr->m->proto->graph, e)))
		return -1;
	/* Weights as onnx-qdq-insert saw them: BatchNormalization folded. */
	if (!(pt->prepped = model_load(o->model, e)) ||
	    prep_model(pt->prepped, NULL, e) < 0 ||
	    !(pt->pg = graph_new(pt->prepped->proto->graph, e)))
		return -1;
	pt->t = calloc((size_t)nn + 1, sizeof *pt->t);
	pt->src = calloc((size_t)nn + 1, sizeof *pt->src);
	pt->unmatched = calloc((size_t)nn + 1, sizeof *pt->unmatched);
	rank = calloc((size_t)nn + 1, sizeof *rank);
	pt->by_src = strmap_new();
	pt->by_dq = strmap_new();
	if (!pt->t || !pt->src || !pt->unmatched || !rank || !pt->by_src ||
	    !pt->by_dq) {
		free(rank);
		return err_nomem(e);
	}
	topo = graph_topo(pt->qg);
	for (int i = 0; i < nn; i++)
		rank[topo[i]] = i;
	for (int k = 0; k < nn; k++) {
		int ni = topo[k];
		const Onnx__NodeProto *dn = qgp->node[ni], *qn;
		const char *dq, *qin, *dom;
		struct qt *q = &pt->t[pt->n];
		int r;

		if (!is_op(dn, "DequantizeLinear") || dn->n_input < 1 ||
		    dn->n_output < 1 || !dn->output[0] || !*dn->output[0])
			continue;
		dq = dn->output[0];
		qn = q_producer(pt->qg, dn->input[0]);
		if (qn)
			qin = qn->n_input > 0 ? qn->input[0] : NULL;
		else
			qin = dn->input[0];
		/* Neither a Q -> DQ pair nor a stored weight: not ours. */
		if (!qin || (!qn && !is_constant(pt->qg, qin)))
			continue;
		memset(q, 0, sizeof *q);
		compare_init(&q->carried);
		compare_init(&q->own);
		q->qlo = INT64_MAX;
		q->qhi = INT64_MIN;
		q->src = -1;
		q->dq = dq;
		q->dqnode = dn;
		q->qnode = qn;
		q->order = graph_position(pt->qg, rank, ni, dq);
		dom = str_or_empty(dn->domain);
		q->dqopset = model_opset(qr->m, dom);
		if (!(q->dqdef = ops_find(dom, dn->op_type)))
			continue;
		if (qn) {
			dom = str_or_empty(qn->domain);
			q->qopset = model_opset(qr->m, dom);
			if (!(q->qdef = ops_find(dom, qn->op_type)))
				continue;
		}
		r = load_params(pt, qr->m, dn, q->dqp, e);
		if (qn && r == 0)
			r = load_params(pt, qr->m, qn, q->qp, e);
		if (r < 0) {
			release_all(q->qp, 2);
			release_all(q->dqp, 2);
			goto fail;
		}
		q->has_own = r == 0;
		q->qtype = pair_type(q, qn);
		dtype_int_range(q->qtype, &q->tlo, &q->thi);
		if (!is_constant(pt->qg, qin)) {
			q->role = ROLE_ACT;
			if (!(q->name = match_activation(pt, qn, dq))) {
				pt->unmatched[pt->nunmatched++] = dq;
				release_all(q->qp, 2);
				release_all(q->dqp, 2);
				continue;
			}
			if (duplicate(pt, q)) {
				release_all(q->qp, 2);
				release_all(q->dqp, 2);
				continue;
			}
			if (strmap_put(pt->by_dq, dq, pt->n) < 0 ||
			    add_source(pt, q, pt->n, e) < 0) {
				pt->n++;
				goto fail;
			}
			pt->n++;
			continue;
		}
		q->role = q->qtype == DT_INT32 ? ROLE_BIAS : ROLE_WEIGHT;
		if (!(q->name = match_constant(pt, qn, dq)) || !q->has_own) {
			pt->unmatched[pt->nunmatched++] = dq;
			release_all(q->qp, 2);
			release_all(q->dqp, 2);
			continue;
		}
		pt->n++;
		if (weight_error(pt, q, qr->m, qin, e) < 0) {
			err_prefix(e, "tensor %s", q->name);
			goto fail;
		}
	}
	free(rank);
	return 0;
fail:
	free(rank);
	return -1;
}

/* Clamp a float tensor in place to [lo, hi]. */
static void
clamp_tensor(struct tensor *t, double lo, double hi)
{
	for (int64_t i = 0; i < t->nelem; i++) {
		double v = float_at(t, i);

		if (v < lo)
			tensor_set(t, i, lo);
		else if (v > hi)
			tensor_set(t, i, hi);
	}
}

/* t clamped when the source says so: *use is t, or c, a clamped copy. */
static int
clamped(const struct source *s, const struct tensor *t, struct tensor *c,
    const struct tensor **use, struct err *e)
{
	*use = t;
	if (!s->clamp || !dtype_is_float(t->dtype))
		return 0;
	if (tensor_copy(c, t, e) < 0)
		return -1;
	clamp_tensor(c, s->lo, s->hi);
	*use = c;
	return 0;
}

/*
 * fp32 run: hold what QMODEL's run will be compared with, and quantize
 * it with each pair alone.
 */
static int
observe_fp32(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	struct pertensor *pt = ctx;
	struct source *s;
	int k;

	if (!strmap_get(pt->by_src, name, &k))
		return 0;
	s = &pt->src[k];
	tensor_release(&s->held);
	if (tensor_copy(&s->held, t, e) < 0)
		return -1;
	if (s->clamp && dtype_is_float(t->dtype))
		clamp_tensor(&s->held, s->lo, s->hi);
	s->pending = s->users;
	for (int i = 0; i < s->nqts; i++) {
		struct qt *q = &pt->t[s->qts[i]];
		struct tensor qv = { 0 }, dq = { 0 };

		if (!q->has_own)
			continue;
		if (run_kernel(q->qdef, q->qnode, q->qopset, t, q->qp,
		    pt->o->threads, &qv, e) < 0 ||
		    run_kernel(q->dqdef, q->dqnode, q->dqopset, &qv, q->dqp,
		    pt->o->threads, &dq, e) < 0) {
			tensor_release(&qv);
			return err_prefix(e, "tensor %s quantized alone", name);
		}
		if (s->clamp && dtype_is_float(dq.dtype))
			clamp_tensor(&dq, s->lo, s->hi);
		compare_add(&q->own, &dq, &s->held, pt->sample);
		count_clipped(q, &s->held, &qv, &dq);
		q->qtype = qv.dtype;
		tensor_release(&qv);
		tensor_release(&dq);
	}
	return 0;
}

/* QMODEL run: compare each DQ output with the fp32 tensor held. */
static int
observe_q(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	struct pertensor *pt = ctx;
	struct tensor c = { 0 };
	const struct tensor *use;
	struct source *s;
	int k;

	if (!strmap_get(pt->by_dq, name, &k))
		return 0;
	s = &pt->src[pt->t[k].src];
	if (!s->held.data)
		return 0;
	if (clamped(s, t, &c, &use, e) < 0)
		return -1;
	compare_add(&pt->t[k].carried, use, &s->held, pt->sample);
	tensor_release(&c);
	if (--s->pending <= 0)
		tensor_release(&s->held);
	return 0;
}

static void
pertensor_drop_held(struct pertensor *pt)
{
	for (int i = 0; pt && i < pt->nsrc; i++)
		tensor_release(&pt->src[i].held);
}

/* Formatting. */

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		fputs(PROG ": out of memory\n", stderr);
		exit(EXIT_TROUBLE);
	}
	return p;
}

static char *
fmt(const char *f, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	return xstrdup(buf);
}

/* A value for the table and TSV: "-" when undefined, "inf" as such. */
static char *
fmt_num(double v, const char *f)
{
	if (isnan(v))
		return xstrdup("-");
	if (isinf(v))
		return xstrdup(v > 0 ? "inf" : "-inf");
	return fmt(f, v);
}

static char *
fmt_name(const char *name)
{
	char *s = stream_escape(name);

	if (!s) {
		fputs(PROG ": out of memory\n", stderr);
		exit(EXIT_TROUBLE);
	}
	return s;
}

/* An aligned table: columns separated by two spaces, the last not padded. */
struct table {
	int ncols;
	const char *const *head;
	const int *minw;	/* per column, may be NULL */
	const char *left;	/* 'l' for left-aligned columns */
	char **cells;		/* nrows x ncols, malloc'd strings */
	int nrows, cap;
};

static void
table_add(struct table *t, char **row)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * (size_t)t->cap : 16;
		char **nc = realloc(t->cells,
		    cap * (size_t)t->ncols * sizeof *nc);

		if (!nc) {
			fputs(PROG ": out of memory\n", stderr);
			exit(EXIT_TROUBLE);
		}
		t->cells = nc;
		t->cap = (int)cap;
	}
	memcpy(t->cells + (size_t)t->nrows++ * (size_t)t->ncols, row,
	    (size_t)t->ncols * sizeof *row);
}

static void
table_print(struct table *t, FILE *fp, int tsv)
{
	int w[64];

	for (int c = 0; c < t->ncols; c++) {
		w[c] = (int)strlen(t->head[c]);
		if (t->minw && t->minw[c] > w[c])
			w[c] = t->minw[c];
		for (int r = 0; r < t->nrows; r++) {
			int l = (int)strlen(t->cells[r * t->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	}
	for (int r = -1; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			const char *s = r < 0 ? t->head[c] :
			    t->cells[r * t->ncols + c];
			int last = c == t->ncols - 1;

			if (tsv)
				fprintf(fp, "%s%c", s, last ? '\n' : '\t');
			else if (t->left[c] == 'l')
				fprintf(fp, "%-*s%s", last ? 0 : w[c], s,
				    last ? "\n" : "  ");
			else
				fprintf(fp, "%*s%s", w[c], s,
				    last ? "\n" : "  ");
		}
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* JSON. */

static void
json_str(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', fp);
	for (; *p; p++) {
		int n = 0;

		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(fp, "\\u%04x", *p);
		else if (*p < 0x80)
			fputc(*p, fp);
		else {
			/* Valid UTF-8 passes; any other byte becomes U+FFFD. */
			unsigned cp = 0;

			if (*p >= 0xc2 && *p <= 0xdf)
				n = 2, cp = *p & 0x1f;
			else if (*p >= 0xe0 && *p <= 0xef)
				n = 3, cp = *p & 0x0f;
			else if (*p >= 0xf0 && *p <= 0xf4)
				n = 4, cp = *p & 0x07;
			for (int i = 1; i < n; i++) {
				if ((p[i] & 0xc0) != 0x80) {
					n = 0;
					break;
				}
				cp = cp << 6 | (p[i] & 0x3f);
			}
			if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 &&
			    cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 ||
			    cp > 0x10ffff)))
				n = 0;
			if (n == 0)
				fputs("\\ufffd", fp);
			else {
				fwrite(p, 1, (size_t)n, fp);
				p += n - 1;
			}
		}
	}
	fputc('"', fp);
}

/* null when undefined; infinities as 1e999, which parsers read as infinity. */
static void
json_num(FILE *fp, double v)
{
	if (isnan(v))
		fputs("null", fp);
	else if (isinf(v))
		fputs(v > 0 ? "1e999" : "-1e999", fp);
	else
		fprintf(fp, "%.17g", v);
}

static void
json_key(FILE *fp, const char *k, double v, int *first)
{
	fprintf(fp, "%s\"%s\": ", *first ? "" : ", ", k);
	json_num(fp, v);
	*first = 0;
}

static void
json_skey(FILE *fp, const char *k, const char *v, int *first)
{
	fprintf(fp, "%s\"%s\": ", *first ? "" : ", ", k);
	if (v)
		json_str(fp, v);
	else
		fputs("null", fp);
	*first = 0;
}

/* Reports. */

struct report {
	const struct opts *o;
	const struct dataset *ds;
	int nout;
	struct outrow *rows;
	int two;		/* the two-model form */
	int show_top1;		/* top-1 columns in the table */
	struct pertensor *pt;	/* NULL without --per-tensor */
	int *sorted;		/* pt->t indices in report order */
};

static double
own_snr(const struct qt *q)
{
	return q->has_own && q->own.samples ? compare_snr(&q->own) : NAN;
}

static double
clip_pct(const struct qt *q)
{
	if (!q->counted)
		return NAN;
	return 100.0 * (double)q->clipped / (double)q->counted;
}

static double
grid_pct(const struct qt *q)
{
	if (!q->counted || q->thi <= q->tlo || q->role == ROLE_BIAS)
		return NAN;
	return 100.0 * (double)(q->qhi - q->qlo) / (double)(q->thi - q->tlo);
}

static double
carried_snr(const struct qt *q)
{
	return q->carried.samples ? compare_snr(&q->carried) : NAN;
}

struct sortent {
	double key;
	int order, idx;
};

/* By key, NaN last; ties in graph order. */
static int
cmp_sortent(const void *x, const void *y)
{
	const struct sortent *a = x, *b = y;

	if (isnan(a->key) != isnan(b->key))
		return isnan(a->key) - isnan(b->key);
	if (!isnan(a->key) && a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return a->idx - b->idx;
}

/* pt->t indices into out[pt->n], in the order of key. */
static int
sort_qts(const struct pertensor *pt, int key, int *out)
{
	struct sortent *v = calloc((size_t)pt->n + 1, sizeof *v);

	if (!v)
		return -1;
	for (int i = 0; i < pt->n; i++) {
		const struct qt *q = &pt->t[i];

		v[i].key = key == SORT_OWN ? own_snr(q) : key == SORT_SNR ?
		    carried_snr(q) : 0;
		v[i].order = q->order;
		v[i].idx = i;
	}
	qsort(v, (size_t)pt->n, sizeof *v, cmp_sortent);
	for (int i = 0; i < pt->n; i++)
		out[i] = v[i].idx;
	free(v);
	return 0;
}

static const char *
sample_name(const struct report *rp, int64_t i)
{
	return i >= 0 && i < dataset_count(rp->ds) ?
	    dataset_sample_name(rp->ds, (int)i) : NULL;
}

static void
outputs_table(const struct report *rp)
{
	static const char *const head1[] = { "output", "samples", "max_abs_err",
	    "snr_db", "top1_%", "acc_%", "ref_acc_%", "status" };
	static const int minw1[] = { 0, 7, 11, 7, 0, 0, 0, 0 };
	static const char *const head2[] = { "output", "samples", "snr_db",
	    "worst_db", "mse", "max_abs", "cosine", "top1_%", "acc_fp32_%",
	    "acc_q_%", "status" };
	const char *h1[8];
	int m1[8];
	struct table t = { 0 };
	int n1 = 0;

	if (rp->two) {
		t.ncols = 11;
		t.head = head2;
		t.left = "lrrrrrrrrrl";
	} else {
		/* The one-model table; top-1 columns only when asked for. */
		for (int c = 0; c < 8; c++) {
			if (c >= 4 && c <= 6 && !rp->show_top1)
				continue;
			h1[n1] = head1[c];
			m1[n1++] = minw1[c];
		}
		t.ncols = n1;
		t.head = h1;
		t.minw = m1;
		t.left = rp->show_top1 ? "lrrrrrrl" : "lrrrl";
	}
	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];
		const struct compare *c = &r->cmp;
		char *row[11];
		int k = 0;

		row[k++] = fmt_name(r->name);
		if (rp->two) {
			row[k++] = fmt("%lld", (long long)c->samples);
			row[k++] = fmt_num(compare_snr(c), "%.1f");
			row[k++] = fmt_num(compare_worst_snr(c), "%.1f");
			row[k++] = fmt_num(compare_mse(c), "%.3g");
			row[k++] = fmt_num(compare_max_abs(c), "%.3g");
			row[k++] = fmt_num(compare_cosine(c), "%.6f");
			row[k++] = fmt_num(compare_agreement(c), "%.2f");
			row[k++] = fmt_num(compare_accuracy_ref(c), "%.2f");
			row[k++] = fmt_num(compare_accuracy_x(c), "%.2f");
		} else {
			row[k++] = fmt("%lld", (long long)r->tol.samples);
			row[k++] = r->tol.nelem ? fmt("%.3g", r->tol.max_abs) :
			    xstrdup("-");
			row[k++] = fmt_num(dataset_cmp_snr(&r->tol), "%.1f");
			if (rp->show_top1) {
				row[k++] = fmt_num(compare_agreement(c),
				    "%.2f");
				row[k++] = fmt_num(compare_accuracy_x(c),
				    "%.2f");
				row[k++] = fmt_num(compare_accuracy_ref(c),
				    "%.2f");
			}
		}
		row[k++] = xstrdup(r->status);
		table_add(&t, row);
	}
	table_print(&t, stdout, 0);
}

static void
tensors_table(const struct report *rp)
{
	static const char *const head[] = { "tensor", "role", "type", "snr_db",
	    "worst_db", "mse", "max_abs", "cosine", "own_snr_db", "clip_%",
	    "grid_%" };
	struct table t = { 0 };
	const struct pertensor *pt = rp->pt;

	t.ncols = 11;
	t.head = head;
	t.left = "lllrrrrrrrr";
	for (int i = 0; i < pt->n; i++) {
		const struct qt *q = &pt->t[rp->sorted[i]];
		const struct compare *c = &q->carried;
		const char *ty = dtype_name(q->qtype);
		char *row[11];
		int k = 0;

		row[k++] = fmt_name(q->name);
		row[k++] = xstrdup(role_names[q->role]);
		row[k++] = xstrdup(ty ? ty : "?");
		row[k++] = fmt_num(carried_snr(q), "%.1f");
		row[k++] = fmt_num(compare_worst_snr(c), "%.1f");
		row[k++] = fmt_num(compare_mse(c), "%.3g");
		row[k++] = fmt_num(compare_max_abs(c), "%.3g");
		row[k++] = fmt_num(compare_cosine(c), "%.6f");
		row[k++] = fmt_num(own_snr(q), "%.1f");
		row[k++] = fmt_num(clip_pct(q), "%.2f");
		row[k++] = fmt_num(grid_pct(q), "%.1f");
		table_add(&t, row);
	}
	table_print(&t, stdout, 0);
}

/* TSV: outputs and tensors in one table, "-" where a column does not apply. */
enum {
	TV_KIND, TV_NAME, TV_SAMPLES, TV_SNR, TV_WORST, TV_WORST_SAMPLE,
	TV_MSE, TV_MAX_ABS, TV_COSINE, TV_TOP1, TV_ACC, TV_REF_ACC,
	TV_OUTSIDE, TV_STATUS, TV_DQ, TV_ROLE, TV_TYPE, TV_ORDER, TV_OWN_SNR,
	TV_OWN_MSE, TV_OWN_MAX_ABS, TV_CLIP, TV_GRID, TV_N
};

static const char *const tsv_head[TV_N] = { "kind", "name", "samples",
	"snr_db", "worst_snr_db", "worst_sample", "mse", "max_abs", "cosine",
	"top1_pct", "accuracy_pct", "ref_accuracy_pct", "outside_tol",
	"status", "dq", "role", "type", "order", "own_snr_db", "own_mse",
	"own_max_abs", "clip_pct", "grid_pct" };

static void
tsv_compare(char **row, const struct report *rp, const struct compare *c)
{
	const char *ws = sample_name(rp, c->worst_sample);

	row[TV_SAMPLES] = fmt("%lld", (long long)c->samples);
	row[TV_SNR] = fmt_num(compare_snr(c), "%.9g");
	row[TV_WORST] = fmt_num(compare_worst_snr(c), "%.9g");
	row[TV_WORST_SAMPLE] = ws ? fmt_name(ws) : xstrdup("-");
	row[TV_MSE] = fmt_num(compare_mse(c), "%.9g");
	row[TV_MAX_ABS] = fmt_num(compare_max_abs(c), "%.9g");
	row[TV_COSINE] = fmt_num(compare_cosine(c), "%.9g");
}

static void
tsv_report(const struct report *rp)
{
	static const char left[TV_N + 1] = "lllllllllllllllllllllll";
	struct table t = { 0 };

	t.ncols = TV_N;
	t.head = tsv_head;
	t.left = left;
	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];
		char *row[TV_N];

		for (int k = 0; k < TV_N; k++)
			row[k] = NULL;
		row[TV_KIND] = xstrdup("output");
		row[TV_NAME] = fmt_name(r->name);
		tsv_compare(row, rp, &r->cmp);
		row[TV_TOP1] = fmt_num(compare_agreement(&r->cmp), "%.9g");
		row[TV_ACC] = fmt_num(compare_accuracy_x(&r->cmp), "%.9g");
		row[TV_REF_ACC] = fmt_num(compare_accuracy_ref(&r->cmp),
		    "%.9g");
		if (!rp->two)
			row[TV_OUTSIDE] = fmt("%lld", (long long)r->tol.nbad);
		row[TV_STATUS] = xstrdup(r->status);
		for (int k = 0; k < TV_N; k++)
			if (!row[k])
				row[k] = xstrdup("-");
		table_add(&t, row);
	}
	for (int i = 0; rp->pt && i < rp->pt->n; i++) {
		const struct qt *q = &rp->pt->t[rp->sorted[i]];
		const char *ty = dtype_name(q->qtype);
		char *row[TV_N];

		for (int k = 0; k < TV_N; k++)
			row[k] = NULL;
		row[TV_KIND] = xstrdup("tensor");
		row[TV_NAME] = fmt_name(q->name);
		tsv_compare(row, rp, &q->carried);
		row[TV_DQ] = fmt_name(q->dq);
		row[TV_ROLE] = xstrdup(role_names[q->role]);
		row[TV_TYPE] = xstrdup(ty ? ty : "?");
		row[TV_ORDER] = fmt("%d", q->order);
		row[TV_OWN_SNR] = fmt_num(own_snr(q), "%.9g");
		row[TV_OWN_MSE] = fmt_num(q->has_own ?
		    compare_mse(&q->own) : NAN, "%.9g");
		row[TV_OWN_MAX_ABS] = fmt_num(q->has_own ?
		    compare_max_abs(&q->own) : NAN, "%.9g");
		row[TV_CLIP] = fmt_num(clip_pct(q), "%.9g");
		row[TV_GRID] = fmt_num(grid_pct(q), "%.9g");
		for (int k = 0; k < TV_N; k++)
			if (!row[k])
				row[k] = xstrdup("-");
		table_add(&t, row);
	}
	table_print(&t, stdout, 1);
}

static void
json_compare(FILE *fp, const struct report *rp, const struct compare *c,
    int *first)
{
	json_key(fp, "samples", (double)c->samples, first);
	json_key(fp, "snr_db", compare_snr(c), first);
	json_key(fp, "worst_snr_db", compare_worst_snr(c), first);
	json_skey(fp, "worst_sample", sample_name(rp, c->worst_sample), first);
	json_key(fp, "mse", compare_mse(c), first);
	json_key(fp, "max_abs", compare_max_abs(c), first);
	json_key(fp, "cosine", compare_cosine(c), first);
}

static void
json_report(const struct report *rp, int worse)
{
	const struct opts *o = rp->o;
	FILE *fp = stdout;
	int first = 1;

	fputs("{", fp);
	json_skey(fp, "model", o->model, &first);
	json_skey(fp, "qmodel", o->qmodel, &first);
	json_key(fp, "samples", dataset_count(rp->ds), &first);
	json_skey(fp, "status", worse ? "different" : "ok", &first);
	fputs(",\n \"outputs\": [", fp);
	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];
		const struct compare *c = &r->cmp;

		first = 1;
		fprintf(fp, "%s\n  {", i ? "," : "");
		json_skey(fp, "name", r->name, &first);
		json_compare(fp, rp, c, &first);
		json_key(fp, "top1_agreement_pct", compare_agreement(c),
		    &first);
		json_key(fp, "accuracy_pct", compare_accuracy_x(c), &first);
		json_key(fp, "ref_accuracy_pct", compare_accuracy_ref(c),
		    &first);
		if (!rp->two)
			json_key(fp, "outside_tol", (double)r->tol.nbad,
			    &first);
		json_key(fp, "min_snr_db", isinf(r->min_snr) ? NAN : r->min_snr,
		    &first);
		json_skey(fp, "status", r->status, &first);
		fputs("}", fp);
	}
	fputs("\n ]", fp);
	if (rp->pt) {
		const struct pertensor *pt = rp->pt;

		fputs(",\n \"tensors\": [", fp);
		for (int i = 0; i < pt->n; i++) {
			const struct qt *q = &pt->t[rp->sorted[i]];
			const char *ty = dtype_name(q->qtype);

			first = 1;
			fprintf(fp, "%s\n  {", i ? "," : "");
			json_skey(fp, "name", q->name, &first);
			json_skey(fp, "dq", q->dq, &first);
			json_skey(fp, "role", role_names[q->role], &first);
			json_skey(fp, "type", ty, &first);
			json_key(fp, "order", q->order, &first);
			json_compare(fp, rp, &q->carried, &first);
			json_key(fp, "own_snr_db", own_snr(q), &first);
			json_key(fp, "own_worst_snr_db", q->has_own ?
			    compare_worst_snr(&q->own) : NAN, &first);
			json_key(fp, "own_mse", q->has_own ?
			    compare_mse(&q->own) : NAN, &first);
			json_key(fp, "own_max_abs", q->has_own ?
			    compare_max_abs(&q->own) : NAN, &first);
			json_key(fp, "clip_pct", clip_pct(q), &first);
			json_key(fp, "grid_pct", grid_pct(q), &first);
			if (q->src >= 0 && pt->src[q->src].clamp) {
				fputs(", \"clamp\": [", fp);
				json_num(fp, pt->src[q->src].lo);
				fputs(", ", fp);
				json_num(fp, pt->src[q->src].hi);
				fputs("]", fp);
			} else
				fputs(", \"clamp\": null", fp);
			fputs("}", fp);
		}
		fputs("\n ],\n \"unmatched\": [", fp);
		for (int i = 0; i < pt->nunmatched; i++) {
			fputs(i ? ", " : "", fp);
			json_str(fp, pt->unmatched[i]);
		}
		fputs("]", fp);
	}
	fputs("\n}\n", fp);
}

static int
write_plot(const struct report *rp, struct err *e)
{
	const struct pertensor *pt = rp->pt;
	size_t n = (size_t)pt->n;
	double *x = calloc(3 * n + 3, sizeof *x), *y = x ? x + n + 1 : NULL,
	    *y2 = x ? y + n + 1 : NULL;
	double *wx = calloc(2 * n + 2, sizeof *wx);
	double *wy = wx ? wx + n + 1 : NULL;
	double *ax = calloc(n + 1, sizeof *ax);
	char **tips = calloc(2 * n + 2, sizeof *tips), **wtips = tips ? tips +
	    n + 1 : NULL;
	int *order = calloc(n + 1, sizeof *order);
	struct svgplot_series s[3];
	struct svgplot p = { 0 };
	struct outfile *of = NULL;
	size_t na = 0, nw = 0;
	int r = -1;

	if (!x || !wx || !ax || !tips || !order) {
		err_nomem(e);
		goto out;
	}
	if (sort_qts(pt, SORT_GRAPH, order) < 0) {
		err_nomem(e);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct qt *q = &pt->t[order[i]];
		char tip[512];

		const char *ty = dtype_name(q->qtype);

		snprintf(tip, sizeof tip, "%zu %s (%s %s): snr %.1f dB, "
		    "own %.1f dB", i, q->name, role_names[q->role],
		    ty ? ty : "?", carried_snr(q), own_snr(q));
		if (q->role == ROLE_ACT) {
			ax[na] = (double)i;
			y[na] = carried_snr(q);
			y2[na] = own_snr(q);
			tips[na++] = xstrdup(tip);
		} else {
			wx[nw] = (double)i;
			wy[nw] = own_snr(q);
			wtips[nw++] = xstrdup(tip);
		}
	}
	s[0] = (struct svgplot_series){ "activation vs fp32", "#1f77b4",
	    SVGPLOT_LINE, na, ax, y, (const char *const *)tips };
	s[1] = (struct svgplot_series){ "activation quantized alone", "#ff7f0e",
	    SVGPLOT_DOTS, na, ax, y2, (const char *const *)tips };
	s[2] = (struct svgplot_series){ "weight/bias", "#2ca02c",
	    SVGPLOT_SQUARES, nw, wx, wy, (const char *const *)wtips };
	p.title = "SNR of quantized tensors along the graph";
	p.xlabel = "quantized tensor, in graph order";
	p.ylabel = "SNR (dB)";
	p.series = s;
	p.nseries = 3;
	if (!(of = outfile_open(rp->o->plot, e)))
		goto out;
	if (svgplot_write(outfile_fp(of), &p, e) < 0) {
		err_prefix(e, "%s", rp->o->plot);
		outfile_abort(of);
		goto out;
	}
	r = outfile_commit(of, e);
out:
	for (size_t i = 0; tips && i < 2 * n + 2; i++)
		free(tips[i]);
	free(tips);
	free(x);
	free(wx);
	free(ax);
	free(order);
	return r;
}

/* Statuses from the gates; returns 1 when some output is outside them. */
static int
judge(struct report *rp)
{
	const struct opts *o = rp->o;
	int worse = 0;

	for (int i = 0; i < rp->nout; i++) {
		struct outrow *r = &rp->rows[i];
		double snr = rp->two ? compare_snr(&r->cmp) :
		    dataset_cmp_snr(&r->tol);
		double agree = compare_agreement(&r->cmp);

		r->status = "ok";
		if (rp->two ? r->cmp.nmismatch > 0 : r->tol.nmismatch > 0)
			r->status = "mismatch";
		else if (!rp->two && !dataset_cmp_ok(&r->tol))
			r->status = "fail";
		else if (snr < r->min_snr)
			r->status = "low-snr";
		else if (!isnan(o->min_agreement) && !isnan(agree) &&
		    agree < o->min_agreement)
			r->status = "low-agreement";
		if (strcmp(r->status, "ok") != 0)
			worse = 1;
	}
	return worse;
}

/* The problems behind the statuses, on stderr. */
static void
explain(const struct report *rp)
{
	const struct opts *o = rp->o;

	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];

		if (!rp->two && r->tol.nbad && !r->tol.nmismatch)
			cli_warn("output %s: %lld of %lld elements outside "
			    "tolerance (rtol %g, atol %g)", r->name,
			    (long long)r->tol.nbad, (long long)r->tol.nelem,
			    o->rtol, o->atol);
		else if (strcmp(r->status, "low-snr") == 0)
			cli_warn("output %s: snr %.1f db is below %g db", r->name,
			    rp->two ? compare_snr(&r->cmp) :
			    dataset_cmp_snr(&r->tol), r->min_snr);
		else if (strcmp(r->status, "low-agreement") == 0)
			cli_warn("output %s: top-1 agreement %.2f%% is below "
			    "%g%%", r->name, compare_agreement(&r->cmp),
			    o->min_agreement);
		else if (rp->two && strcmp(r->status, "mismatch") == 0)
			cli_warn("output %s: shape or type differs between the "
			    "models in %lld samples", r->name,
			    (long long)r->cmp.nmismatch);
	}
}

/*
 * Print the report in the chosen format; 1 when outside the gates, 0
 * within, 2 on trouble.
 */
static int
report(struct report *rp)
{
	const struct opts *o = rp->o;
	int worse = judge(rp), any_top1 = 0;
	struct err e;

	progress_end(&bar);
	for (int i = 0; i < rp->nout; i++)
		any_top1 |= rp->rows[i].cmp.rows > 0;
	if (!isnan(o->min_agreement) && !any_top1) {
		cli_warn("--min-agreement: no classifier-like output to check");
		return EXIT_TROUBLE;
	}
	if (o->labels) {
		int any = 0;

		for (int i = 0; i < rp->nout; i++)
			any |= rp->rows[i].cmp.labeled > 0;
		if (!any) {
			cli_warn("%s: no classifier-like output to check the "
			    "labels against", o->labels);
			return EXIT_TROUBLE;
		}
	}
	if (rp->pt) {
		rp->sorted = calloc((size_t)rp->pt->n + 1, sizeof *rp->sorted);
		if (!rp->sorted || sort_qts(rp->pt, o->sort, rp->sorted) < 0) {
			cli_warn("out of memory");
			return EXIT_TROUBLE;
		}
		if (rp->pt->nunmatched && !o->quiet)
			cli_warn("per-tensor: %d quantized tensors not matched "
			    "to the fp32 model (first: %s)", rp->pt->nunmatched,
			    rp->pt->unmatched[0]);
	}
	if (o->plot && write_plot(rp, &e) < 0) {
		cli_warn("%s", e.msg);
		return EXIT_TROUBLE;
	}
	if (o->quiet)
		return worse;
	if (o->format == FMT_JSON)
		json_report(rp, worse);
	else if (o->format == FMT_TSV)
		tsv_report(rp);
	else {
		outputs_table(rp);
		if (rp->pt) {
			putchar('\n');
			tensors_table(rp);
		}
	}
	explain(rp);
	return worse;
}

/* Runs. */

/*
 * Two data directories holding samples of the same name would overwrite
 * each other's outputs.
 */
static int
check_unique_samples(const struct dataset *ds, struct err *e)
{
	int n = dataset_count(ds);
	char **seen = calloc((size_t)n + 1, sizeof *seen);

	if (!seen)
		return err_nomem(e);
	for (int i = 0; i < n; i++) {
		if (!(seen[i] = strdup(dataset_sample_base(ds, i)))) {
			err_nomem(e);
			n = i;
			goto fail;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(seen[i], seen[j]) == 0) {
				err_set(e, "%s and %s: same sample name, "
				    "outputs would collide",
				    dataset_sample_name(ds, j),
				    dataset_sample_name(ds, i));
				n = i + 1;
				goto fail;
			}
	}
	for (int i = 0; i < n; i++)
		free(seen[i]);
	free(seen);
	return 0;
fail:
	for (int i = 0; i < n; i++)
		free(seen[i]);
	free(seen);
	return -1;
}

/* Set each output's SNR gate; an unknown NAME is trouble. */
static int
set_gates(const struct opts *o, struct outrow *rows, int n, struct err *e)
{
	for (int i = 0; i < n; i++)
		rows[i].min_snr = -INFINITY;
	for (int g = 0; g < o->ngates; g++) {
		int found = 0;

		for (int i = 0; i < n; i++)
			if (!o->gates[g].name ||
			    strcmp(o->gates[g].name, rows[i].name) == 0) {
				rows[i].min_snr = o->gates[g].db;
				found = 1;
			}
		if (!found)
			return err_set(e, "--min-snr: no output %s",
			    o->gates[g].name);
	}
	return 0;
}

/* Top-1 (and labels) of one output of one sample; -1 on a labels problem. */
static int
add_top1(struct outrow *r, const struct tensor *x, const struct tensor *ref,
    const struct labels *lb, int s, struct err *e)
{
	const int64_t *l = NULL;
	int64_t nl = 0, rows;

	if (!compare_is_classifier(ref))
		return 0;
	rows = compare_rows(ref);
	if (lb && lb->path) {
		l = lb->v[s];
		nl = lb->count[s];
		/* Labels of another count are another output's. */
		if (nl != rows)
			l = NULL;
		for (int64_t i = 0; l && i < nl; i++)
			if (l[i] >= ref->dims[ref->rank - 1])
				return err_set(e, "%s:%ld: class %lld out of "
				    "range for output %s (%lld classes)",
				    lb->path, lb->line[s], (long long)l[i],
				    r->name,
				    (long long)ref->dims[ref->rank - 1]);
	}
	compare_add_top1(&r->cmp, x, ref, l, l ? nl : 0);
	return 0;
}

static void
warn_mismatch(const char *sample, const char *name, const struct tensor *x,
    const struct tensor *want)
{
	char a[128], b[128];

	if (x->dtype != want->dtype)
		cli_warn("%s: output %s: type %s where %s was expected", sample,
		    name, dtype_name(x->dtype), dtype_name(want->dtype));
	else
		cli_warn("%s: output %s: shape %s where %s was expected", sample,
		    name, shape_str(x->rank, x->dims, a, sizeof a),
		    shape_str(want->rank, want->dims, b, sizeof b));
}

/* One model against the expected outputs in the data directories. */
static int
run_single(const struct opts *o)
{
	struct runner r;
	struct dataset *ds = NULL;
	struct outrow *rows = NULL;
	struct tensor *in = NULL, *out = NULL, *exp = NULL;
	struct labels lb = { 0 };
	struct report rp = { 0 };
	struct err e;
	int ret = EXIT_TROUBLE, ni, no;

	if (runner_init(&r, o->model, o->threads, NULL, NULL, &e) < 0) {
		cli_warn("%s", e.msg);
		return EXIT_TROUBLE;
	}
	ni = r.spec.ninputs;
	no = r.spec.noutputs;
	if (!(ds = dataset_open(o->dirs, o->ndirs, &e)) ||
	    (o->save_dir && check_unique_samples(ds, &e) < 0) ||
	    (o->labels &&
	    labels_load(&lb, o->labels, dataset_count(ds), &e) < 0)) {
		cli_warn("%s", e.msg);
		goto out;
	}
	in = calloc((size_t)ni + 1, sizeof *in);
	out = calloc((size_t)no + 1, sizeof *out);
	exp = calloc((size_t)no + 1, sizeof *exp);
	rows = calloc((size_t)no + 1, sizeof *rows);
	if (!in || !out || !exp || !rows) {
		cli_warn("out of memory");
		goto out;
	}
	for (int k = 0; k < no; k++) {
		rows[k].name = r.out_names[k];
		compare_init(&rows[k].cmp);
		dataset_cmp_init(&rows[k].tol, o->rtol, o->atol);
	}
	if (set_gates(o, rows, no, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	progress_init(&bar, stderr, progress_wanted(stderr, o->quiet), PROG,
	    "samples", dataset_count(ds));
	progress_update(&bar, 0);
	for (int s = 0; s < dataset_count(ds); s++) {
		const char *sname = dataset_sample_name(ds, s);

		if (dataset_load(ds, s, &r.spec, in, exp, &e) < 0) {
			cli_warn("%s", e.msg);
			goto out;
		}
		for (int k = 0; k < no; k++)
			if (!exp[k].data) {
				cli_warn("%s: no expected value for output %s",
				    sname, r.out_names[k]);
				goto out;
			}
		if (interp_run(r.ip, in, out, &e) < 0) {
			cli_warn("%s: %s", sname, e.msg);
			goto out;
		}
		for (int k = 0; k < no; k++) {
			int64_t before = rows[k].tol.nmismatch;

			dataset_cmp_add(&rows[k].tol, &out[k], &exp[k]);
			compare_add(&rows[k].cmp, &out[k], &exp[k], s);
			if (add_top1(&rows[k], &out[k], &exp[k], &lb, s,
			    &e) < 0) {
				cli_warn("%s", e.msg);
				goto out;
			}
			if (rows[k].tol.nmismatch > before && !o->quiet)
				warn_mismatch(sname, r.out_names[k], &out[k],
				    &exp[k]);
		}
		if (o->save_dir && dataset_save(o->save_dir,
		    dataset_sample_base(ds, s), no, r.out_names, out, &e) < 0) {
			cli_warn("%s", e.msg);
			goto out;
		}
		release_all(in, ni);
		release_all(out, no);
		release_all(exp, no);
		progress_update(&bar, s + 1);
	}
	rp.o = o;
	rp.ds = ds;
	rp.nout = no;
	rp.rows = rows;
	rp.show_top1 = o->labels || !isnan(o->min_agreement);
	ret = report(&rp);
out:
	progress_end(&bar);
	if (in)
		release_all(in, ni);
	if (out)
		release_all(out, no);
	if (exp)
		release_all(exp, no);
	free(in);
	free(out);
	free(exp);
	free(rows);
	free(rp.sorted);
	labels_free(&lb);
	dataset_free(ds);
	runner_free(&r);
	return ret;
}

/* Where each of a's names is in b's list; -1 with a message when missing. */
static int
match_names(const char *what, const char *bpath, const char *const *a, int na,
    const char *const *b, int nb, int *pos, struct err *e)
{
	for (int i = 0; i < na; i++) {
		pos[i] = -1;
		for (int j = 0; j < nb; j++)
			if (strcmp(a[i], b[j]) == 0) {
				pos[i] = j;
				break;
			}
		if (pos[i] < 0)
			return err_set(e, "%s: no %s %s, as the fp32 model has",
			    bpath, what, a[i]);
	}
	return 0;
}

/* MODEL and QMODEL side by side on the same samples. */
static int
run_pair(const struct opts *o)
{
	struct runner f = { 0 }, q = { 0 };
	struct pertensor pt = { 0 }, *ptp = NULL;
	struct dataset *ds = NULL;
	struct outrow *rows = NULL;
	struct tensor *in = NULL, *qin = NULL, *fout = NULL, *qout = NULL;
	struct labels lb = { 0 };
	struct report rp = { 0 };
	struct err e;
	int *inpos = NULL, *outpos = NULL;
	int ret = EXIT_TROUBLE, ni = 0, no = 0, nqo = 0;

	if (runner_init(&f, o->model, o->threads, o->per_tensor ?
	    observe_fp32 : NULL, &pt, &e) < 0 ||
	    runner_init(&q, o->qmodel, o->threads, o->per_tensor ?
	    observe_q : NULL, &pt, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	ni = f.spec.ninputs;
	no = f.spec.noutputs;
	nqo = q.spec.noutputs;
	inpos = calloc((size_t)q.spec.ninputs + 1, sizeof *inpos);
	outpos = calloc((size_t)no + 1, sizeof *outpos);
	in = calloc((size_t)ni + 1, sizeof *in);
	qin = calloc((size_t)q.spec.ninputs + 1, sizeof *qin);
	fout = calloc((size_t)no + 1, sizeof *fout);
	qout = calloc((size_t)nqo + 1, sizeof *qout);
	rows = calloc((size_t)no + 1, sizeof *rows);
	if (!inpos || !outpos || !in || !qin || !fout || !qout || !rows) {
		cli_warn("out of memory");
		goto out;
	}
	/* QMODEL's inputs, in its order, are the fp32 model's by name. */
	if (q.spec.ninputs != ni) {
		cli_warn("%s: %d inputs where the fp32 model has %d", o->qmodel,
		    q.spec.ninputs, ni);
		goto out;
	}
	if (match_names("input", o->qmodel, q.in_names, ni, f.in_names, ni,
	    inpos, &e) < 0 ||
	    match_names("output", o->qmodel, f.out_names, no, q.out_names, nqo,
	    outpos, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	for (int k = 0; k < no; k++) {
		rows[k].name = f.out_names[k];
		compare_init(&rows[k].cmp);
	}
	if (!(ds = dataset_open(o->dirs, o->ndirs, &e)) ||
	    (o->labels &&
	    labels_load(&lb, o->labels, dataset_count(ds), &e) < 0) ||
	    set_gates(o, rows, no, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	if (o->per_tensor) {
		if (pertensor_init(&pt, o, &f, &q, &e) < 0) {
			cli_warn("per-tensor: %s", e.msg);
			goto out;
		}
		ptp = &pt;
	}
	progress_init(&bar, stderr, progress_wanted(stderr, o->quiet), PROG,
	    "samples", dataset_count(ds));
	progress_update(&bar, 0);
	for (int s = 0; s < dataset_count(ds); s++) {
		const char *sname = dataset_sample_name(ds, s);

		if (dataset_load(ds, s, &f.spec, in, NULL, &e) < 0) {
			cli_warn("%s", e.msg);
			goto out;
		}
		/* Shallow copies: released through in. */
		for (int j = 0; j < q.spec.ninputs; j++)
			qin[j] = in[inpos[j]];
		pt.sample = s;
		if (interp_run(f.ip, in, fout, &e) < 0) {
			cli_warn("%s: %s: %s", sname, o->model, e.msg);
			goto out;
		}
		if (interp_run(q.ip, qin, qout, &e) < 0) {
			cli_warn("%s: %s: %s", sname, o->qmodel, e.msg);
			goto out;
		}
		pertensor_drop_held(ptp);
		for (int k = 0; k < no; k++) {
			const struct tensor *x = &qout[outpos[k]];

			compare_add(&rows[k].cmp, x, &fout[k], s);
			if (add_top1(&rows[k], x, &fout[k], &lb, s, &e) < 0) {
				cli_warn("%s", e.msg);
				goto out;
			}
		}
		release_all(in, ni);
		release_all(fout, no);
		release_all(qout, nqo);
		progress_update(&bar, s + 1);
	}
	rp.o = o;
	rp.ds = ds;
	rp.nout = no;
	rp.rows = rows;
	rp.two = 1;
	rp.pt = ptp;
	ret = report(&rp);
out:
	progress_end(&bar);
	pertensor_drop_held(ptp);
	if (in)
		release_all(in, ni);
	if (fout)
		release_all(fout, no);
	if (qout)
		release_all(qout, nqo);
	free(in);
	free(qin);
	free(fout);
	free(qout);
	free(inpos);
	free(outpos);
	free(rows);
	free(rp.sorted);
	labels_free(&lb);
	pertensor_free(&pt);
	dataset_free(ds);
	runner_free(&q);
	runner_free(&f);
	return ret;
}

static int
run(const struct opts *o)
{
	return o->qmodel ? run_pair(o) : run_single(o);
}

/* Options. */

static int
parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && !isnan(*v);
}

/* "DB" or "NAME=DB" (the last '=' splits, so names may hold '='). */
static int
parse_gate(char *arg, struct snr_gate *g)
{
	char *eq = strrchr(arg, '=');

	g->name = NULL;
	if (parse_double(arg, &g->db))
		return 1;
	if (!eq || eq == arg || !parse_double(eq + 1, &g->db))
		return 0;
	*eq = '\0';
	g->name = arg;
	return 1;
}

/* 0 to go on, or an exit status + 1 (so 1 means exit 0). */
static int
parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_RTOL = 256, OPT_ATOL, OPT_MIN_SNR, OPT_SAVE, OPT_THREADS,
	    OPT_MIN_AGREE, OPT_LABELS, OPT_FORMAT, OPT_PLOT, OPT_PER_TENSOR,
	    OPT_SORT };
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "rtol", required_argument, NULL, OPT_RTOL },
		{ "atol", required_argument, NULL, OPT_ATOL },
		{ "min-snr", required_argument, NULL, OPT_MIN_SNR },
		{ "min-agreement", required_argument, NULL, OPT_MIN_AGREE },
		{ "labels", required_argument, NULL, OPT_LABELS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "per-tensor", no_argument, NULL, OPT_PER_TENSOR },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "save-outputs", required_argument, NULL, OPT_SAVE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	o->rtol = 1e-3;
	o->atol = 1e-7;
	o->min_agreement = NAN;
	o->threads = 2;
	o->dirs = calloc((size_t)argc + 1, sizeof *o->dirs);
	o->gates = calloc((size_t)argc + 1, sizeof *o->gates);
	if (!o->dirs || !o->gates) {
		cli_warn("out of memory");
		return EXIT_TROUBLE + 1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dirs[o->ndirs++] = optarg;
			break;
		case OPT_RTOL:
		case OPT_ATOL:
			if (!parse_double(optarg, &v) || v < 0 || isinf(v)) {
				cli_warn("--%s: not a non-negative number: %s",
				    c == OPT_RTOL ? "rtol" : "atol", optarg);
				return EXIT_TROUBLE + 1;
			}
			*(c == OPT_RTOL ? &o->rtol : &o->atol) = v;
			o->tol_given = 1;
			break;
		case OPT_MIN_SNR:
			if (!parse_gate(optarg, &o->gates[o->ngates])) {
				cli_warn("--min-snr: not a number or "
				    "NAME=number: %s", optarg);
				return EXIT_TROUBLE + 1;
			}
			o->ngates++;
			break;
		case OPT_MIN_AGREE:
			if (!parse_double(optarg, &v) || v < 0 || v > 100) {
				cli_warn("--min-agreement: not a percentage "
				    "from 0 to 100: %s", optarg);
				return EXIT_TROUBLE + 1;
			}
			o->min_agreement = v;
			break;
		case OPT_LABELS:
			o->labels = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "table") == 0)
				o->format = FMT_TABLE;
			else if (strcmp(optarg, "tsv") == 0)
				o->format = FMT_TSV;
			else if (strcmp(optarg, "json") == 0)
				o->format = FMT_JSON;
			else {
				cli_warn("--format: table, tsv or json, not %s",
				    optarg);
				return EXIT_TROUBLE + 1;
			}
			break;
		case OPT_PLOT:
			o->plot = optarg;
			break;
		case OPT_PER_TENSOR:
			o->per_tensor = 1;
			break;
		case OPT_SORT:
			if (strcmp(optarg, "own") == 0)
				o->sort = SORT_OWN;
			else if (strcmp(optarg, "snr") == 0)
				o->sort = SORT_SNR;
			else if (strcmp(optarg, "graph") == 0)
				o->sort = SORT_GRAPH;
			else {
				cli_warn("--sort: own, snr or graph, not %s",
				    optarg);
				return EXIT_TROUBLE + 1;
			}
			break;
		case OPT_SAVE:
			o->save_dir = optarg;
			break;
		case OPT_THREADS:
			if (!parse_double(optarg, &v) || v < 1 || v > 256 ||
			    v != (int)v) {
				cli_warn("--threads: not a count from 1 to "
				    "256: %s", optarg);
				return EXIT_TROUBLE + 1;
			}
			o->threads = (int)v;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			cli_usage(stdout);
			return EXIT_SUCCESS + 1;
		case 'V':
			printf(PROG " " ONNXQ_VERSION "\n");
			return EXIT_SUCCESS + 1;
		default:
			cli_bad_option(c, argv, longopts);
			return EXIT_TROUBLE + 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2 || o->ndirs == 0) {
		if (argc < 1)
			cli_warn("no model given");
		else if (argc > 2)
			cli_warn("too many arguments");
		else
			cli_warn("no data directory given (-d DIR)");
		cli_usage(stderr);
		return EXIT_TROUBLE + 1;
	}
	o->model = argv[0];
	o->qmodel = argc == 2 ? argv[1] : NULL;
	if (o->qmodel && (o->tol_given || o->save_dir)) {
		cli_warn("%s: only with one model", o->save_dir ?
		    "--save-outputs" : "--rtol and --atol");
		cli_usage(stderr);
		return EXIT_TROUBLE + 1;
	}
	if (!o->qmodel && (o->per_tensor || o->plot)) {
		cli_warn("%s: needs MODEL and QMODEL", o->plot ? "--plot" :
		    "--per-tensor");
		cli_usage(stderr);
		return EXIT_TROUBLE + 1;
	}
	if (o->plot)
		o->per_tensor = 1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = { 0 };
	int r;

	interp_reexec_bounded_spin(argv);
	cli_init(PROG, usage_text);
	cli_before_message(clear_bar);
	if ((r = parse_args(argc, argv, &o)) != 0) {
		free(o.dirs);
		free(o.gates);
		return r - 1;
	}
	outfile_cleanup_on_signals();
	r = run(&o);
	free(o.dirs);
	free(o.gates);
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout) || fclose(stdout) == EOF) {
		/* say why, as the programs writing through outfile do */
		int why = errno;

		cli_warn("<stdout>: write error%s%s", why ? ": " : "",
		    why ? strerror(why) : "");
		return EXIT_TROUBLE;
	}
	return r;
}
