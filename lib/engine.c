/*
 * engine: see engine.h. Scales and zero points are computed as ONNX
 * Runtime computes them (qparams.h), so results agree with its quantizer
 * bit for bit; where this differs from ORT, a comment says why.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hist.h"
#include "opinfo.h"
#include "rangesel.h"
#include "strmap.h"
#include "util.h"

/*
 * The operator types quantized when no op-type or node list is given:
 * those with weights (and only nodes whose weight is a constant).
 * Quantizing every operator of PaddleOCR v4 rec loses 10 to 33 points of
 * recognition accuracy; these lose about 2 (man page, DEFAULTS).
 */
static const char *default_ops[] = { ENGINE_DEFAULT_OPS };
/* Dynamic quantization: products whose weight pays to store in 8 bits
 * (a Conv's activation quantized per tensor at run time costs accuracy,
 * so it waits for --all-ops). */
static const char *dynamic_ops[] = { ENGINE_DYNAMIC_OPS };
static const char *dynamic_all_ops[] = { ENGINE_DYNAMIC_ALL_OPS };

/* A decision for one tensor. */
struct qp {
	int done;
	int fixed;		/* scale given by the recipe: never adjusted */
	int adjusted;		/* scales raised for an int32 bias */
	struct qparam p;
};

/*
 * What the decisions need of a tensor's statistics, taken from its stat
 * and hist records as they are read (the exact sums, 2 KB a tensor, are
 * not kept: onnx-qparams' memory follows the tensors, not the stream).
 */
struct asum {
	uint64_t n, nan, inf;	/* finite, NaN and infinite values */
	float min, max;		/* inf, -inf when n == 0 */
	float mavg_min, mavg_max;
	double mean, std;
	struct hist *hist;	/* owned; NULL when none */
};

struct act {
	char *name;
	int has_stat;
	struct asum ts;
	int in_scope;
	float rmin, rmax;	/* selected range, before the recipe's */
	int method;
	struct qp q;
	int has_conv;		/* a recipe convert */
	struct qp conv;
	const struct config_tensor *ov;
	int folded;		/* its Relu/Clip reader is folded away */
	int to_output;		/* reaches only outputs (feeds_outputs) */
	double elems;		/* of its shape; 0 when not known */
	int64_t last;		/* its last dimension; 0 when not known */
};

/* A weight or bias record and its decision. */
struct wb {
	struct wb_rec r;
	int in_scope;
	int as_act;		/* a constant its op reads as an activation */
	struct qp q;
	const struct config_tensor *ov;
};

struct engine {
	const struct engine_opts *o;
	const struct settings *s;
	const char **sel_v[ENGINE_NLISTS];	/* borrowed strings */
	size_t sel_n[ENGINE_NLISTS];
	int sel_own[ENGINE_NLISTS];	/* sel_v[k] is malloc'd */
	int sel_default;		/* sel_v[OPS_INCLUDE] is default_ops */
	int method_default;		/* no method asked for */
	char *file;			/* the stream's name */
	FILE *spool;			/* every record kept, in order: */
	uint64_t nrecs;			/* a temporary file, not memory */
	char **headers;
	size_t nheaders, capheaders;
	struct node_index ix;
	int *selected;			/* per node of ix */
	struct act *acts;
	size_t nacts, capacts;
	struct wb *wbs;
	size_t nwbs, capwbs;
	struct strmap *act_ix, *wb_ix;
	struct fold_rec *folds;		/* borrowed names */
	size_t nfolds, capfolds;
	struct dynamic_rec *dyns;	/* borrowed names */
	size_t ndyns, capdyns;
};

/* A message to fn (the caller's note or warn function), if any. */
static void
tell(void (*fn)(const char *, va_list), const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
tell(void (*fn)(const char *, va_list), const char *fmt, ...)
{
	va_list ap;

	if (fn == NULL)
		return;
	va_start(ap, fmt);
	fn(fmt, ap);
	va_end(ap);
}

/* A note under -v; a warning, whether or not -v. */
#define note(g, ...) tell((g)->o->note, __VA_ARGS__)
#define warn(g, ...) tell((g)->o->warn, __VA_ARGS__)

static int
in_list(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

/*
 * Split a comma list into an array of its non-empty names; the array and
 * a copy of the string are one malloc'd block.
 */
static const char **
split_list(const char *s, size_t *n)
{
	size_t cnt = 1, k = 0, len = strlen(s);
	const char **v;
	char *copy, *save = NULL;

	for (const char *p = s; *p; p++)
		cnt += *p == ',';
	if (cnt > (SIZE_MAX - len - 1) / sizeof *v ||
	    (v = malloc(cnt * sizeof *v + len + 1)) == NULL)
		return NULL;
	copy = (char *)(v + cnt);
	memcpy(copy, s, len + 1);
	for (char *p = strtok_r(copy, ",", &save); p;
	    p = strtok_r(NULL, ",", &save))
		v[k++] = p;
	*n = k;
	return v;
}

/* The selection lists: the command line's replace the recipe's. */
static int
init_lists(struct engine *g, struct err *e)
{
	const struct config *c = g->o->cfg;
	const struct config_list *cl[ENGINE_NLISTS] = { NULL, NULL, NULL,
	    NULL };

	if (c) {
		cl[ENGINE_NODES_INCLUDE] = &c->nodes_include;
		cl[ENGINE_NODES_EXCLUDE] = &c->nodes_exclude;
		cl[ENGINE_OPS_INCLUDE] = &c->ops_include;
		cl[ENGINE_OPS_EXCLUDE] = &c->ops_exclude;
	}
	for (int k = 0; k < ENGINE_NLISTS; k++) {
		if (g->o->lists[k]) {
			g->sel_v[k] = split_list(g->o->lists[k], &g->sel_n[k]);
		} else if (c && cl[k]->n) {
			if ((g->sel_v[k] = calloc(cl[k]->n,
			    sizeof *g->sel_v[k])) != NULL)
				for (size_t i = 0; i < cl[k]->n; i++)
					g->sel_v[k][i] = cl[k]->v[i];
			g->sel_n[k] = cl[k]->n;
		} else
			continue;
		if (g->sel_v[k] == NULL)
			return err_nomem(e);
		g->sel_own[k] = 1;
	}
	/*
	 * Without an op-type or node list of its own, a run quantizes the
	 * operators that carry weights (default_ops): measured on PaddleOCR,
	 * the noise of quantizing everything else costs more than it saves.
	 */
	if (g->s->dynamic && g->sel_n[ENGINE_OPS_INCLUDE] == 0) {
		g->sel_v[ENGINE_OPS_INCLUDE] = g->o->all_ops ?
		    dynamic_all_ops : dynamic_ops;
		g->sel_n[ENGINE_OPS_INCLUDE] = g->o->all_ops ?
		    sizeof dynamic_all_ops / sizeof dynamic_all_ops[0] :
		    sizeof dynamic_ops / sizeof dynamic_ops[0];
		g->sel_default = 1;
	} else if (!g->o->all_ops && g->sel_n[ENGINE_OPS_INCLUDE] == 0 &&
	    g->sel_n[ENGINE_NODES_INCLUDE] == 0) {
		g->sel_v[ENGINE_OPS_INCLUDE] = default_ops;
		g->sel_n[ENGINE_OPS_INCLUDE] = sizeof default_ops /
		    sizeof default_ops[0];
		g->sel_default = 1;
	}
	return 0;
}

struct engine *
engine_new(const struct engine_opts *o, struct err *e)
{
	struct engine *g = calloc(1, sizeof *g);

	if (g == NULL) {
		err_nomem(e);
		return NULL;
	}
	g->o = o;
	g->s = &o->s;
	g->method_default = !(o->s.set & (1u << CG_METHOD));
	if (node_index_init(&g->ix, e) < 0) {
		free(g);
		return NULL;
	}
	if (!(g->act_ix = strmap_new()) || !(g->wb_ix = strmap_new())) {
		err_nomem(e);
		engine_free(g);
		return NULL;
	}
	if (init_lists(g, e) < 0) {
		engine_free(g);
		return NULL;
	}
	return g;
}

void
engine_free(struct engine *g)
{
	if (g == NULL)
		return;
	if (g->spool)
		fclose(g->spool);
	for (size_t i = 0; i < g->nheaders; i++)
		free(g->headers[i]);
	free(g->headers);
	node_index_release(&g->ix);
	free(g->selected);
	for (size_t i = 0; i < g->nacts; i++) {
		free(g->acts[i].name);
		hist_free(g->acts[i].ts.hist);
		qparam_release(&g->acts[i].q.p);
		qparam_release(&g->acts[i].conv.p);
	}
	free(g->acts);
	for (size_t i = 0; i < g->nwbs; i++) {
		wb_rec_release(&g->wbs[i].r);
		qparam_release(&g->wbs[i].q.p);
	}
	free(g->wbs);
	for (int k = 0; k < ENGINE_NLISTS; k++)
		if (g->sel_own[k])
			free(g->sel_v[k]);
	strmap_free(g->act_ix);
	strmap_free(g->wb_ix);
	free(g->folds);
	free(g->dyns);
	free(g->file);
	free(g);
}

/* Reading. */

/* The summary of ts the decisions use; its histogram is ts's, lent. */
static struct asum
asum_of(const struct tstats *ts)
{
	struct asum a;

	a.n = ts->n;
	a.nan = ts->nan;
	a.inf = ts->inf;
	a.min = ts->n ? ts->min : INFINITY;
	a.max = ts->n ? ts->max : -INFINITY;
	a.mavg_min = tstats_mavg_min(ts);
	a.mavg_max = tstats_mavg_max(ts);
	a.mean = tstats_mean(ts);
	a.std = tstats_std(ts);
	a.hist = ts->hist;
	return a;
}

static struct act *
act_get(struct engine *g, const char *name, int create, struct err *e)
{
	int i;

	if (strmap_get(g->act_ix, name, &i))
		return &g->acts[i];
	if (!create)
		return NULL;
	if (g->nacts >= INT32_MAX || array_grow(&g->acts, &g->capacts,
	    g->nacts, sizeof *g->acts) < 0 ||
	    strmap_put(g->act_ix, name, (int)g->nacts) < 0) {
		err_nomem(e);
		return NULL;
	}
	memset(&g->acts[g->nacts], 0, sizeof g->acts[0]);
	if ((g->acts[g->nacts].name = strdup(name)) == NULL) {
		err_nomem(e);
		return NULL;
	}
	return &g->acts[g->nacts++];
}

static struct wb *
wb_get(const struct engine *g, const char *name)
{
	int i;

	return strmap_get(g->wb_ix, name, &i) ? &g->wbs[i] : NULL;
}

static int
read_stat(struct engine *g, const struct stream_rec *rec, struct err *e)
{
	struct act *a = act_get(g, rec->subject, 1, e);
	struct hist *h;
	struct tstats ts;

	if (a == NULL)
		return -1;
	if (a->has_stat)
		return stream_rec_err(rec, e, "stat %s: given twice",
		    rec->subject);
	a->has_stat = 1;
	if (tstats_init(&ts, -1, e) < 0 || tstats_read_stat(&ts, rec, e) < 0)
		return -1;
	h = a->ts.hist;		/* hist records may come first */
	if (ts.rank >= 0) {
		a->elems = 1;
		for (int k = 0; k < ts.rank; k++)
			a->elems *= ts.dims[k] > 0 ? (double)ts.dims[k] : 0;
		a->last = ts.rank > 0 && ts.dims[ts.rank - 1] > 0 ?
		    ts.dims[ts.rank - 1] : 0;
	}
	a->ts = asum_of(&ts);
	a->ts.hist = h;
	tstats_release(&ts);
	return 0;
}

/* A tstats lending h to the tstats_*_hist functions (n as given). */
static struct tstats *
lend_hist(struct tstats *ts, struct hist *h, uint64_t n)
{
	struct err e;

	tstats_init(ts, -1, &e);	/* no histogram: cannot fail */
	ts->hist = h;
	ts->n = n;
	return ts;
}

static int
read_hist(struct engine *g, const struct stream_rec *rec, struct err *e)
{
	struct act *a = act_get(g, rec->subject, 1, e);
	struct tstats ts;
	int rc;

	if (a == NULL)
		return -1;
	rc = tstats_read_hist(lend_hist(&ts, a->ts.hist, 0), rec, e);
	a->ts.hist = ts.hist;
	return rc;
}

static int
read_wb(struct engine *g, const struct stream_rec *rec, struct err *e)
{
	struct wb *w;

	if (strmap_get(g->wb_ix, rec->subject, NULL))
		return stream_rec_err(rec, e, "%s %s: described twice",
		    rec->type, rec->subject);
	if (g->nwbs >= INT32_MAX ||
	    array_grow(&g->wbs, &g->capwbs, g->nwbs, sizeof *g->wbs) < 0)
		return err_nomem(e);
	w = &g->wbs[g->nwbs];
	memset(w, 0, sizeof *w);
	if (wb_rec_read(&w->r, rec, e) < 0)
		return -1;
	g->nwbs++;
	if (strmap_put(g->wb_ix, w->r.name, (int)g->nwbs - 1) < 0)
		return err_nomem(e);
	return 0;
}

static int
keep_header(struct engine *g, const char *h, struct err *e)
{
	if (array_grow(&g->headers, &g->capheaders, g->nheaders,
	    sizeof *g->headers) < 0 ||
	    (g->headers[g->nheaders] = strdup(h)) == NULL)
		return err_nomem(e);
	g->nheaders++;
	return 0;
}

static int
take_record(struct engine *g, const struct stream_rec *rec, struct err *e)
{
	const struct stream_rec *d = rec;

	if (g->spool == NULL && (g->spool = tmpfile()) == NULL)
		return err_errno(e, "a temporary file for the records");
	if (fwrite(rec->raw, 1, rec->rawlen, g->spool) != rec->rawlen ||
	    putc('\n', g->spool) == EOF)
		return err_errno(e, "a temporary file for the records");
	g->nrecs++;
	if (strcmp(d->type, "node") == 0)
		return node_index_add(&g->ix, d, e);
	if (strcmp(d->type, "stat") == 0)
		return read_stat(g, d, e);
	if (strcmp(d->type, "hist") == 0)
		return read_hist(g, d, e);
	if (strcmp(d->type, "weight") == 0 || strcmp(d->type, "bias") == 0)
		return read_wb(g, d, e);
	return 0;
}

int
engine_read(struct engine *g, struct stream_reader *rd, struct err *e)
{
	int k;

	free(g->file);
	if ((g->file = strdup(stream_name(rd))) == NULL)
		return err_nomem(e);
	while ((k = stream_next(rd, e)) > 0) {
		const struct stream_rec *rec;

		if (k == STREAM_HEADER) {
			if (keep_header(g, stream_header(rd), e) < 0)
				return -1;
			continue;
		}
		rec = stream_record(rd);
		/* Our own records from an earlier run are replaced. */
		if (strcmp(rec->type, "qparam") == 0 ||
		    strcmp(rec->type, "fold") == 0 ||
		    strcmp(rec->type, "dynamic") == 0)
			continue;
		if (take_record(g, rec, e) < 0)
			return -1;
	}
	if (k < 0)
		return -1;
	for (size_t i = 0; i < g->nacts; i++) {
		if (!g->acts[i].has_stat)
			return err_set(e, "%s: hist records of %s without a "
			    "stat record", stream_name(rd), g->acts[i].name);
		struct tstats ts;

		if (tstats_check_hist(lend_hist(&ts, g->acts[i].ts.hist,
		    g->acts[i].ts.n), e) < 0)
			return err_prefix(e, "%s: tensor %s", stream_name(rd),
			    g->acts[i].name);
	}
	if (g->ix.n && (g->selected = calloc(g->ix.n,
	    sizeof *g->selected)) == NULL)
		return err_nomem(e);
	return 0;
}

/* The recipe against the stream. */

static void
world_tensor(void *arg, const char *name, struct config_target *t)
{
	struct engine *g = arg;
	const struct wb *w;

	t->kind = CONFIG_UNKNOWN;
	if ((w = wb_get(g, name)) != NULL) {
		t->kind = w->r.is_bias ? CONFIG_BIAS : CONFIG_WEIGHT;
		t->rank = w->r.rank;
		memcpy(t->dims, w->r.dims, sizeof t->dims);
		t->axis = w->r.axis;
	} else if (strmap_get(g->act_ix, name, NULL))
		t->kind = CONFIG_ACTIVATION;
}

static int
world_node(void *arg, const char *name)
{
	struct engine *g = arg;

	if (g->ix.n == 0)
		return -1;
	return node_index_find(&g->ix, name) >= 0;
}

static int
world_consumes(void *arg, const char *node, const char *tensor)
{
	struct engine *g = arg;
	int i = node_index_find(&g->ix, node);

	return i < 0 ? -1 : node_index_reads(&g->ix, i, tensor);
}

size_t
engine_check_recipe(struct engine *g, struct config_msgs *msgs)
{
	struct config_world w = { g, world_tensor, world_node,
	    world_consumes, g->s->act_type, g->s->w_type };

	return g->o->cfg ? config_validate(g->o->cfg, &w, msgs) : 0;
}

/* Selection: which nodes, hence which tensors, are quantized. */

/*
 * Tensors that a node reads as a parameter (Resize's scales, Clip's
 * bounds, ...) stay float, wherever else they are read: ORT leaves them
 * alone, and a quantized Resize scale changes the output's shape. Empty
 * constants have nothing to quantize.
 */
static void
keep_params_float(struct engine *g)
{
	int ni;

	for (size_t i = 0; i < g->nacts; i++) {
		struct act *a = &g->acts[i];

		if (!a->in_scope ||
		    (ni = node_index_param_reader(&g->ix, a->name)) < 0)
			continue;
		a->in_scope = 0;
		note(g, "%s: a parameter of %s (%s), not data: left in float",
		    a->name, g->ix.v[ni].name, g->ix.v[ni].op);
	}
	for (size_t i = 0; i < g->nwbs; i++) {
		struct wb *w = &g->wbs[i];

		if (!w->in_scope)
			continue;
		if (w->r.empty) {
			w->in_scope = 0;
			note(g, "%s %s: empty: nothing to quantize",
			    w->r.is_bias ? "bias" : "weight", w->r.name);
		} else if ((ni = node_index_param_reader(&g->ix,
		    w->r.name)) >= 0) {
			w->in_scope = 0;
			note(g, "%s: a parameter of %s (%s), not data: left "
			    "in float", w->r.name, g->ix.v[ni].name,
			    g->ix.v[ni].op);
		}
	}
}

/* ONNX Runtime's fused self-attention (com.microsoft Attention). */
static int
is_ms_attention(const struct node_rec *n)
{
	return n->domain && strcmp(n->domain, "com.microsoft") == 0 &&
	    strcmp(n->op, "Attention") == 0;
}

/* Whether n's weight slot (opinfo) holds a constant of the stream. */
static int
has_const_weight(const struct engine *g, const struct node_rec *n)
{
	const struct opinfo *oi = opinfo_find(n->domain ? n->domain : "",
	    n->op);

	/* An LSTM's W and R, com.microsoft Attention's weights: only
	 * dynamic quantization selects them. */
	if (oi == NULL && strcmp(n->op, "LSTM") == 0 && !n->domain)
		return n->nin > 2 && wb_get(g, n->in[1]) &&
		    wb_get(g, n->in[2]);
	if (is_ms_attention(n))
		return n->nin > 1 && wb_get(g, n->in[1]) != NULL;
	if (oi == NULL || oi->weight_slot < 0 ||
	    (size_t)oi->weight_slot >= n->nin)
		return 0;
	return wb_get(g, n->in[oi->weight_slot]) != NULL;
}

static int
node_selected(const struct engine *g, const struct node_rec *n)
{
	const char **const *v = g->sel_v;
	const size_t *c = g->sel_n;

	return (c[ENGINE_NODES_INCLUDE] == 0 ||
	    in_list(v[ENGINE_NODES_INCLUDE], c[ENGINE_NODES_INCLUDE],
	    n->name)) &&
	    !in_list(v[ENGINE_NODES_EXCLUDE], c[ENGINE_NODES_EXCLUDE],
	    n->name) &&
	    (c[ENGINE_OPS_INCLUDE] == 0 ||
	    in_list(v[ENGINE_OPS_INCLUDE], c[ENGINE_OPS_INCLUDE], n->op)) &&
	    !in_list(v[ENGINE_OPS_EXCLUDE], c[ENGINE_OPS_EXCLUDE], n->op);
}

/*
 * Mark the tensors that reach only the model's outputs: read by no node
 * (the stream has no graph-output list: an output is what nobody reads),
 * or read only by nodes left in float whose every output reaches only
 * outputs. Node records are in topological order, so backwards every
 * reader of a node's outputs has been seen when the node is.
 */
static int
feeds_outputs(struct engine *g, struct err *e)
{
	struct strmap *inner = strmap_new();	/* read on the way on */
	struct act *a;

	if (inner == NULL)
		return err_nomem(e);
	for (size_t i = g->ix.n; i-- > 0;) {
		const struct node_rec *n = &g->ix.v[i];
		int passes = !g->selected[i];

		for (size_t k = 0; k < n->nout && passes; k++)
			passes = !strmap_get(inner, n->out[k], NULL);
		for (size_t k = 0; k < n->nin && !passes; k++)
			if (*n->in[k] && strmap_put(inner, n->in[k], 1) < 0) {
				strmap_free(inner);
				return err_nomem(e);
			}
	}
	for (size_t i = 0; i < g->nacts; i++) {
		a = &g->acts[i];
		a->to_output = g->ix.n > 0 &&
		    !strmap_get(inner, a->name, NULL);
	}
	strmap_free(inner);
	return 0;
}

/* With float_outputs, what reaches only outputs is left in float. */
static void
keep_outputs_float(struct engine *g)
{
	for (size_t i = 0; i < g->nacts && g->s->float_outputs; i++) {
		struct act *a = &g->acts[i];

		if (!a->in_scope || !a->to_output)
			continue;
		a->in_scope = 0;
		note(g, "%s: reaches only model outputs: left in float",
		    a->name);
	}
}

/*
 * Multiply-accumulates of node n, from the stream's shapes: a Conv's or
 * ConvTranspose's image (output or input) times a filter's size, a
 * MatMul's or Gemm's output times its input's last dimension; 0 for
 * other nodes and unknown shapes.
 */
static double
node_macs(struct engine *g, const struct node_rec *n)
{
	const struct act *x, *y;
	const struct wb *w;
	double f = 1;

	if (n->domain || n->nin < 2 || n->nout < 1 ||
	    (x = act_get(g, n->in[0], 0, NULL)) == NULL ||
	    (y = act_get(g, n->out[0], 0, NULL)) == NULL)
		return 0;
	if (strcmp(n->op, "MatMul") == 0 || strcmp(n->op, "Gemm") == 0)
		return y->elems * (double)x->last;
	if ((strcmp(n->op, "Conv") != 0 &&
	    strcmp(n->op, "ConvTranspose") != 0) ||
	    (w = wb_get(g, n->in[1])) == NULL || w->r.rank < 2)
		return 0;
	for (int k = 1; k < w->r.rank; k++)
		f *= (double)w->r.dims[k];
	return (strcmp(n->op, "Conv") == 0 ? y->elems : x->elems) * f;
}

/*
 * float_head: leave in float the first nodes, in whole blocks (a node
 * that multiplies and accumulates and the nodes after it up to the next
 * such), until they hold that percent of the model's multiply-
 * accumulates. Whole blocks: where the float region ends matters (on
 * PaddleOCR rec, ending it right after a Conv, before its affine and
 * hard-swish, cost 7 points of accuracy). Noise builds from the first
 * layers, which hold little of the compute.
 */
static void
float_head(struct engine *g, const double *mac, double total)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < g->ix.n; i++) {
		if (100 * sum >= g->s->float_head * total && mac[i] > 0)
			break;
		sum += mac[i];
		if (g->selected[i])
			note(g, "node %s: in the float head: left in float",
			    g->ix.v[i].name);
		g->selected[i] = 0;
	}
	note(g, "float head: %zu nodes, %.1f%% of %.4g multiply-accumulates",
	    i, total > 0 ? 100 * sum / total : 0, total);
}

/*
 * float_tail: leave in float the last nodes, in whole blocks as above
 * (the last one runs to the end), as many as hold at most that percent
 * of the multiply-accumulates: a budget, never more. Noise that
 * compounded through the model lands on the last layers' outputs; in
 * float they stop adding their own.
 */
static void
float_tail(struct engine *g, const double *mac, double total)
{
	double sum = 0, block = 0;
	size_t i, start = g->ix.n;

	for (i = g->ix.n; i-- > 0;) {
		block += mac[i];
		if (mac[i] <= 0)
			continue;
		if (100 * (sum + block) > g->s->float_tail * total)
			break;
		sum += block;
		block = 0;
		start = i;
	}
	for (i = start; i < g->ix.n; i++) {
		if (g->selected[i])
			note(g, "node %s: in the float tail: left in float",
			    g->ix.v[i].name);
		g->selected[i] = 0;
	}
	note(g, "float tail: %zu nodes, %.1f%% of %.4g multiply-accumulates",
	    g->ix.n - start, total > 0 ? 100 * sum / total : 0, total);
}

/* The float head and tail, from one count of the compute. */
static int
float_ends(struct engine *g, struct err *e)
{
	double *mac, total = 0;

	if ((!(g->s->float_head > 0) && !(g->s->float_tail > 0)) ||
	    g->ix.n == 0)
		return 0;
	if ((mac = calloc(g->ix.n, sizeof *mac)) == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < g->ix.n; i++)
		total += mac[i] = node_macs(g, &g->ix.v[i]);
	if (g->s->float_head > 0)
		float_head(g, mac, total);
	if (g->s->float_tail > 0)
		float_tail(g, mac, total);
	free(mac);
	return 0;
}

static int
select_nodes(struct engine *g, struct err *e)
{
	for (size_t i = 0; i < g->ix.n; i++) {
		/* By default only with a constant weight: a MatMul of two
		 * activations (attention) adds noise and saves nothing. */
		g->selected[i] = node_selected(g, &g->ix.v[i]) &&
		    (!g->sel_default || has_const_weight(g, &g->ix.v[i]));
	}
	if (float_ends(g, e) < 0)
		return -1;
	for (size_t i = 0; i < g->nacts; i++)
		g->acts[i].in_scope = g->ix.n == 0;
	for (size_t i = 0; i < g->ix.n; i++) {
		const struct node_rec *n = &g->ix.v[i];
		struct act *a;

		if (!g->selected[i])
			continue;
		for (size_t k = 0; k < n->nin; k++)
			if (*n->in[k] && (a = act_get(g, n->in[k], 0, NULL)))
				a->in_scope = 1;
		for (size_t k = 0; k < n->nout; k++)
			if (*n->out[k] && (a = act_get(g, n->out[k], 0, NULL)))
				a->in_scope = 1;
	}
	for (size_t i = 0; i < g->nwbs; i++) {
		struct wb *w = &g->wbs[i];
		const struct node_rec *n;
		int ni = node_index_find(&g->ix, w->r.node);

		w->in_scope = g->ix.n == 0 || (ni >= 0 && g->selected[ni]);
		if (w->r.is_bias || ni < 0)
			continue;
		/* Not a weight of its op (Mul's constant...): ORT quantizes
		 * it like an activation, per tensor. */
		n = &g->ix.v[ni];
		w->as_act = 1;
		for (size_t k = 0; k < n->nin; k++)
			if (strcmp(n->in[k], w->r.name) == 0 &&
			    opinfo_role(n->domain, n->op, (int)k) ==
			    OPINFO_WEIGHT)
				w->as_act = 0;
	}
	keep_params_float(g);
	return 0;
}

/* One tensor's decision. */

#define HAS(spec, k) ((spec)->set & (1u << (k)))

/* The recipe's flags over o. */
static struct qparams_opts
spec_opts(const struct config_spec *sp, struct qparams_opts o)
{
	if (sp && HAS(sp, CK_QUANT_TYPE))
		o.type = sp->quant_type;
	if (sp && HAS(sp, CK_SYMMETRIC))
		o.symmetric = sp->symmetric;
	if (sp && HAS(sp, CK_REDUCE_RANGE))
		o.reduce_range = sp->reduce_range;
	if (sp && HAS(sp, CK_POW2))
		o.pow2 = sp->pow2;
	return o;
}

/* The recipe's zero point z for type, checked. */
static int
fixed_zp(int64_t z, int type, int32_t *zp, struct err *e)
{
	int64_t lo, hi;

	qparams_type_limits(type, &lo, &hi);
	if (z < lo || z > hi)
		return err_set(e, "zero point %lld does not fit %s",
		    (long long)z, qparams_type_name(type));
	*zp = (int32_t)z;
	return 0;
}

int
engine_decide_range(struct qparam *q, int *fixed,
    const struct config_spec *sp, struct qparams_opts o, float lo, float hi,
    const char *method, struct err *e)
{
	qparam_release(q);
	*fixed = 0;
	if (qparam_alloc(q, 1, e) < 0)
		return -1;
	if (sp && HAS(sp, CK_QUANT_TYPE))
		o.type = sp->quant_type;
	q->type = o.type;
	if (sp && HAS(sp, CK_SCALE)) {
		if (fixed_zp(sp->zero_point[0], o.type, &q->zp[0], e) < 0)
			return -1;
		q->scale[0] = sp->scale[0];
		*fixed = 1;
		qparam_drop_range(q);
		return qparam_set_method(q, "fixed", e);
	}
	o = spec_opts(sp, o);
	if (sp && HAS(sp, CK_RMIN))
		lo = sp->rmin[0];
	if (sp && HAS(sp, CK_RMAX))
		hi = sp->rmax[0];
	if (qparams_compute(&o, lo, hi, &q->scale[0], &q->zp[0], e) < 0)
		return -1;
	/* the range quantized over: [-6.71, -5.83] is [-6.71, 0] */
	qparams_range_with_zero(&lo, &hi);
	q->rmin[0] = lo;
	q->rmax[0] = hi;
	return qparam_set_method(q, method, e);
}

/* engine_decide_range into a decision. */
static int
decide1(struct qp *q, const struct config_spec *sp, struct qparams_opts o,
    float lo, float hi, const char *method, struct err *e)
{
	if (engine_decide_range(&q->p, &q->fixed, sp, o, lo, hi, method,
	    e) < 0)
		return -1;
	q->done = 1;
	return 0;
}

static struct qparams_opts
opts_of(int type, int symmetric, int reduce_range, int pow2, double mrr)
{
	struct qparams_opts o = { type, symmetric, reduce_range, pow2,
	    (float)mrr };

	return o;
}

struct qparams_opts
engine_act_opts(const struct settings *s)
{
	return opts_of(s->act_type, s->act_symmetric, s->act_reduce_range,
	    s->act_pow2, s->min_real_range);
}

struct qparams_opts
engine_weight_opts(const struct settings *s)
{
	return opts_of(s->w_type, s->w_symmetric, s->w_reduce_range,
	    s->w_pow2, s->min_real_range);
}

/* The range selection's view of a; st->bins malloc'd, NULL without a
 * histogram. */
static int
range_stats(const struct asum *a, struct rangesel_stats *st, struct err *e)
{
	struct hist_bin *bins = NULL;
	size_t nbins = 0;

	memset(st, 0, sizeof *st);
	st->n = a->n;
	st->min = a->min;
	st->max = a->max;
	st->mavg_min = a->mavg_min;
	st->mavg_max = a->mavg_max;
	st->mean = a->mean;
	st->std = a->std;
	if (a->hist && hist_bins(a->hist, &bins, &nbins, e) < 0)
		return -1;
	st->bins = bins;
	st->nbins = nbins;
	return 0;
}

int
engine_range_stats(const struct tstats *ts, struct rangesel_stats *st,
    struct err *e)
{
	struct asum a = asum_of(ts);

	return range_stats(&a, st, e);
}

static int
select_range(const struct settings *s, const struct config_spec *sp,
    const struct asum *ts, int method_default, float *lo, float *hi,
    int *method, struct rangesel_memo *memo, struct err *e)
{
	struct rangesel_opts ro;
	struct rangesel_stats st;
	int rc;

	rangesel_opts_init(&ro);
	ro.memo = memo;
	ro.method = sp && HAS(sp, CK_METHOD) ? sp->method : s->method;
	ro.moving_average = s->moving_average;
	ro.per_side = s->per_side;
	ro.percentile = sp && HAS(sp, CK_PERCENTILE) ? sp->percentile :
	    s->percentile;
	ro.entropy_bins = s->entropy_bins;
	ro.q = spec_opts(sp, engine_act_opts(s));

	if (range_stats(ts, &st, e) < 0)
		return -1;
	/* The default method on a stream without histograms: minmax. */
	if (st.bins == NULL && method_default && !(sp && HAS(sp, CK_METHOD)))
		ro.method = RANGESEL_MINMAX;
	*method = ro.method;
	if (ro.method != RANGESEL_MINMAX &&
	    ro.method != RANGESEL_DISTRIBUTION && ts->n > 0 &&
	    st.bins == NULL)
		rc = err_set(e, "method %s needs its hist records",
		    rangesel_method_name(ro.method));
	else
		rc = rangesel_select(&st, &ro, lo, hi, e);
	free((void *)st.bins);
	return rc;
}

int
engine_select_range(const struct settings *s, const struct config_spec *sp,
    const struct tstats *ts, int method_default, float *lo, float *hi,
    int *method, struct err *e)
{
	struct asum a = asum_of(ts);

	return select_range(s, sp, &a, method_default, lo, hi, method, NULL,
	    e);
}

int
engine_select_range_memo(const struct settings *s,
    const struct config_spec *sp, const struct tstats *ts,
    int method_default, struct rangesel_memo *memo, float *lo, float *hi,
    int *method, struct err *e)
{
	struct asum a = asum_of(ts);

	return select_range(s, sp, &a, method_default, lo, hi, method, memo,
	    e);
}

/* Activations. */

/* ORT's adjust_tensor_ranges: ranges Relu/Clip/Softmax make known. */
static void
adjust_ranges(struct engine *g)
{
	for (size_t i = 0; i < g->ix.n; i++) {
		const struct node_rec *n = &g->ix.v[i];
		struct act *in, *out;

		if (!g->selected[i] || n->nout < 1)
			continue;
		out = act_get(g, n->out[0], 0, NULL);
		if (strcmp(n->op, "Softmax") == 0 && out) {
			out->rmin = 0;
			out->rmax = 1;
			continue;
		}
		if (strcmp(n->op, "Relu") != 0 && strcmp(n->op, "Clip") != 0)
			continue;
		if (n->nin < 1 || !out || !out->in_scope ||
		    (in = act_get(g, n->in[0], 0, NULL)) == NULL)
			continue;
		if (node_index_nreaders(&g->ix, n->in[0]) != 1)
			continue;
		in->rmin = out->rmin;
		in->rmax = out->rmax;
	}
}

/* The parameters node `node` sees for activation a (a convert's, if any). */
static const struct qp *
act_for(const struct act *a, const char *node)
{
	if (a->has_conv) {
		if (a->ov->recv_nodes == NULL)
			return &a->conv;
		if (node && in_list((const char *const *)a->ov->recv_nodes,
		    a->ov->nrecv, node))
			return &a->conv;
	}
	return &a->q;
}

/* Ops whose output ORT quantizes with its input's parameters. */
static int
shares_params(const char *op)
{
	static const char *const ops[] = {
		"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten",
		"Resize", "MaxPool", "AveragePool", "Slice", "Gather",
		"GatherElements", "Split", "TopK", "CumSum", "DepthToSpace",
		"SpaceToDepth",
	};

	return in_list(ops, sizeof ops / sizeof ops[0], op);
}

/* Data movement keeps its input's grid (topological order). */
static int
share_params(struct engine *g, struct err *e)
{
	const unsigned own = (1u << CK_QUANT_TYPE) | (1u << CK_SCALE) |
	    (1u << CK_RMIN) | (1u << CK_RMAX) | (1u << CK_METHOD);

	for (size_t i = 0; i < g->ix.n; i++) {
		const struct node_rec *n = &g->ix.v[i];
		struct act *in, *out;

		if (!g->selected[i] || !shares_params(n->op) || n->nin < 1)
			continue;
		if ((in = act_get(g, n->in[0], 0, NULL)) == NULL ||
		    !in->q.done)
			continue;
		for (size_t k = 0; k < n->nout; k++) {
			if ((out = act_get(g, n->out[k], 0, NULL)) == NULL ||
			    !out->q.done)
				continue;
			if (out->ov && (out->ov->spec.set & own))
				continue;	/* the recipe decides */
			out->q.fixed = 0;
			if (qparam_copy(&out->q.p, &act_for(in, n->name)->p,
			    e) < 0 ||
			    qparam_set_method(&out->q.p, "shared", e) < 0)
				return -1;
			free(out->q.p.from);
			if ((out->q.p.from = strdup(in->name)) == NULL)
				return err_nomem(e);
		}
	}
	return 0;
}

/* Seen, but never finite, and no recipe range in place of the data's:
 * its range [0, 0] says nothing of the data. */
static int
uncalibrated(const struct act *a)
{
	const struct config_spec *sp = a->ov ? &a->ov->spec : NULL;

	if (a->ts.n != 0 || a->ts.nan + a->ts.inf == 0)
		return 0;
	return !(sp && (HAS(sp, CK_SCALE) ||
	    (HAS(sp, CK_RMIN) && HAS(sp, CK_RMAX))));
}

/* Ops whose output keeps one sign whatever the input. */
static int
keeps_sign(const char *op)
{
	static const char *const ops[] = {
		"Relu", "Sigmoid", "Softmax", "LogSoftmax", "Exp", "Abs",
		"Sqrt", "Softplus", "HardSigmoid",
	};

	return in_list(ops, sizeof ops / sizeof ops[0], op);
}

/*
 * A tensor reaching only outputs, quantized over a range calibration saw
 * on one side of 0: the other side reads 0 (a logit calibrated over
 * [-6.71, -5.83] turns every positive score into Sigmoid's 0.5).
 */
static void
warn_one_sided(const struct engine *g, const struct act *a)
{
	int p = node_index_producer(&g->ix, a->name);

	if (!a->to_output || !a->q.done || a->q.fixed ||
	    !(a->rmax < 0 || a->rmin > 0) ||
	    (p >= 0 && keeps_sign(g->ix.v[p].op)))
		return;
	warn(g, "warning: tensor %s: reaches a model output, quantized "
	    "over [%g, %g] "
	    "where calibration saw no %s value: %s ones will read 0; "
	    "calibrate with samples of both signs, or leave it in float "
	    "(--float-outputs)", a->name, (double)a->q.p.rmin[0],
	    (double)a->q.p.rmax[0], a->rmax < 0 ? "positive" : "negative",
	    a->rmax < 0 ? "positive" : "negative");
}

static int
decide_acts(struct engine *g, struct err *e)
{
	struct qparams_opts o = engine_act_opts(g->s);

	for (size_t i = 0; i < g->nacts; i++) {
		struct act *a = &g->acts[i];

		a->ov = config_find(g->o->cfg, a->name);
		if (a->in_scope && select_range(g->s, a->ov ?
		    &a->ov->spec : NULL, &a->ts, g->method_default, &a->rmin,
		    &a->rmax, &a->method, NULL, e) < 0)
			return err_prefix(e, "tensor %s", a->name);
		if (a->in_scope && uncalibrated(a))
			warn(g, "warning: tensor %s: no finite calibration "
			    "value (%" PRIu64 " NaN, %" PRIu64 " infinite): "
			    "its calibrated range is [0, 0]", a->name,
			    a->ts.nan, a->ts.inf);
	}
	adjust_ranges(g);
	for (size_t i = 0; i < g->nacts; i++) {
		struct act *a = &g->acts[i];
		const struct config_spec *sp = a->ov ? &a->ov->spec : NULL;
		const char *m = rangesel_method_name(a->method);

		if (!a->in_scope)
			continue;
		if (decide1(&a->q, sp, o, a->rmin, a->rmax, m, e) < 0)
			return err_prefix(e, "tensor %s", a->name);
		warn_one_sided(g, a);
		if (a->ov && a->ov->has_convert) {
			/* The consumer side, as ORT: the calibrated range and
			 * the convert's own keys over the defaults. */
			if (decide1(&a->conv, &a->ov->convert, o, a->rmin,
			    a->rmax, m, e) < 0)
				return err_prefix(e, "tensor %s: convert",
				    a->name);
			a->has_conv = 1;
		}
	}
	return share_params(g, e);
}

/* Weights. */

/* Channel c of a per-channel weight decision. */
static int
weight_channel(struct wb *w, const struct config_spec *sp,
    const struct qparams_opts *o, size_t c, struct err *e)
{
	struct qparam *q = &w->q.p;
	size_t sc = sp && sp->per_channel ? c : 0;
	float lo = c < w->r.nch ? w->r.cmin[c] : 0;
	float hi = c < w->r.nch ? w->r.cmax[c] : 0;

	if (sp && HAS(sp, CK_SCALE)) {
		if (fixed_zp(sp->zero_point[sc], o->type, &q->zp[c], e) < 0)
			return -1;
		q->scale[c] = sp->scale[sc];
		w->q.fixed = 1;
		return 0;
	}
	if (sp && HAS(sp, CK_RMIN))
		lo = sp->rmin[sc];
	if (sp && HAS(sp, CK_RMAX))
		hi = sp->rmax[sc];
	if (qparams_compute(o, lo, hi, &q->scale[c], &q->zp[c], e) < 0)
		return err_prefix(e, "channel %zu", c);
	qparams_range_with_zero(&lo, &hi);
	q->rmin[c] = lo;
	q->rmax[c] = hi;
	return 0;
}

/* Per-channel weight ranges along the stream's axis, or the recipe's. */
static int
decide_weight(struct engine *g, struct wb *w, struct err *e)
{
	const struct config_spec *sp = w->ov ? &w->ov->spec : NULL;
	struct qparams_opts o;
	int per_channel = g->s->per_channel && w->r.axis >= 0;
	int axis = w->r.axis;
	size_t n;

	if (w->as_act && !(sp && (sp->per_channel || HAS(sp, CK_AXIS))))
		return decide1(&w->q, sp, engine_act_opts(g->s), w->r.min,
		    w->r.max, "minmax", e);
	o = spec_opts(sp, engine_weight_opts(g->s));
	if (sp && HAS(sp, CK_AXIS)) {
		axis = sp->axis < 0 ? sp->axis + w->r.rank : sp->axis;
		per_channel = 1;
	}
	if (sp && (HAS(sp, CK_SCALE) || HAS(sp, CK_RMIN) ||
	    HAS(sp, CK_RMAX)) && !sp->per_channel && !HAS(sp, CK_AXIS))
		per_channel = 0;	/* per-tensor values: per tensor */
	if (sp && sp->per_channel)
		per_channel = 1;
	if (!per_channel || w->r.rank == 0)
		return decide1(&w->q, sp, o, w->r.min, w->r.max, "minmax", e);

	if (axis < 0 || axis >= w->r.rank)
		return err_set(e, "no channel axis (give axis in the recipe)");
	n = sp && sp->per_channel ? sp->n : w->r.nch;
	if (axis != w->r.axis && !(sp && sp->per_channel &&
	    (HAS(sp, CK_SCALE) || (HAS(sp, CK_RMIN) && HAS(sp, CK_RMAX)))))
		return err_set(e, "axis %d: the stream has channel ranges "
		    "along axis %d only", axis, w->r.axis);
	if (w->r.dims[axis] >= 0 && (int64_t)n != w->r.dims[axis])
		return err_set(e, "%zu channel values for %lld channels", n,
		    (long long)w->r.dims[axis]);
	qparam_release(&w->q.p);
	if (qparam_alloc(&w->q.p, n, e) < 0)
		return -1;
	w->q.p.type = o.type;
	w->q.p.axis = axis;
	for (size_t c = 0; c < n; c++)
		if (weight_channel(w, sp, &o, c, e) < 0)
			return -1;
	if (w->q.fixed)
		qparam_drop_range(&w->q.p);
	w->q.done = 1;
	return qparam_set_method(&w->q.p, w->q.fixed ? "fixed" : "minmax", e);
}

float *
engine_bias_absmax(const struct wb_rec *b, size_t *nb)
{
	size_t n = b->axis >= 0 ? b->nch : 1;
	float *v = calloc(n ? n : 1, sizeof *v);

	if (v == NULL)
		return NULL;
	if (b->axis >= 0)
		for (size_t c = 0; c < n; c++)
			v[c] = fmaxf(fabsf(b->cmin[c]), fabsf(b->cmax[c]));
	else
		v[0] = fmaxf(fabsf(b->min), fabsf(b->max));
	*nb = n;
	return v;
}

int
engine_bias_scales(struct qparam *q, float act_scale,
    const struct qparam *w, size_t nb, double beta, int axis,
    struct err *e)
{
	size_t n = w->n > 1 && nb > 1 ? nb : 1;

	qparam_release(q);
	if (qparam_alloc(q, n, e) < 0)
		return -1;
	if (qparams_bias_scale(act_scale, w->scale, w->n, nb, beta, q->scale,
	    e) < 0)
		return -1;
	q->type = DT_INT32;
	q->axis = n > 1 ? axis : -1;
	qparam_drop_range(q);
	return 0;
}

/* Bias b's int32 scales from its input's and weight's. */
static int
bias_scales(struct wb *b, const struct qp *aq, const struct wb *w,
    size_t nb, struct err *e)
{
	if (engine_bias_scales(&b->q.p, aq->p.scale[0], &w->q.p, nb,
	    b->r.beta, b->r.axis, e) < 0)
		return err_prefix(e, "bias %s", b->r.name);
	b->q.done = 1;
	return 0;
}

static int
decide_biases(struct engine *g, struct err *e)
{
	/* First raise weight scales for every bias, then compute. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < g->nwbs; i++) {
			struct wb *b = &g->wbs[i], *w;
			struct act *a;
			const struct qp *aq;
			float *babs;
			size_t nb;
			int rc = 0;

			if (!b->r.is_bias || !b->in_scope || b->ov)
				continue;
			if ((a = act_get(g, b->r.input, 0, NULL)) == NULL ||
			    !a->q.done ||
			    (w = wb_get(g, b->r.weight)) == NULL || !w->q.done)
				continue;	/* stays float, as in ORT */
			aq = act_for(a, b->r.node);
			if ((babs = engine_bias_absmax(&b->r, &nb)) == NULL)
				return err_nomem(e);
			if (pass == 0 && g->s->bias_adjust && !w->q.fixed)
				rc = qparams_bias_adjust(aq->p.scale[0],
				    w->q.p.scale, w->q.p.n, babs, nb,
				    b->r.beta, e);
			free(babs);
			if (rc < 0)
				return err_prefix(e, "bias %s", b->r.name);
			if (pass == 0)
				w->q.adjusted += rc;
			else if (bias_scales(b, aq, w, nb, e) < 0)
				return -1;
		}
	return 0;
}

static int
decide_wbs(struct engine *g, struct err *e)
{
	for (size_t i = 0; i < g->nwbs; i++) {
		struct wb *w = &g->wbs[i];

		w->ov = config_find(g->o->cfg, w->r.name);
		/* A bias with a recipe entry is a weight, as in ORT. */
		if (!w->in_scope || (w->r.is_bias && !w->ov))
			continue;
		if (decide_weight(g, w, e) < 0)
			return err_prefix(e, "%s %s", w->r.is_bias ? "bias" :
			    "weight", w->r.name);
	}
	return decide_biases(g, e);
}

/* Folds. */

/*
 * Bound `slot` of a Clip as the stream's weight records give it (not
 * qdqmatch's, read from a model): an absent input is no bound (v =
 * +-inf), a constant of one element its value; -1 for anything else (a
 * bound computed at run time).
 */
static int
const_clip_bound(const struct engine *g, const struct node_rec *n,
    size_t slot, float *v)
{
	const struct wb *w;
	int64_t count = 1;

	if (slot >= n->nin || !*n->in[slot]) {
		*v = slot == 1 ? -INFINITY : INFINITY;
		return 0;
	}
	if ((w = wb_get(g, n->in[slot])) == NULL || w->r.is_bias ||
	    w->r.empty)
		return -1;
	for (int k = 0; k < w->r.rank; k++)
		count *= w->r.dims[k];
	if (count != 1 || w->r.min != w->r.max)
		return -1;
	*v = w->r.min;
	return 0;
}

/* Whether quantization q clamps exactly at lo and hi. */
static int
clamps_at(const struct qparam *q, float lo, float hi)
{
	int64_t tlo, thi;

	return qparams_type_limits(q->type, &tlo, &thi) == 0 &&
	    qparams_quantize(lo, q->scale[0], q->zp[0], q->type) == tlo &&
	    qparams_quantize(hi, q->scale[0], q->zp[0], q->type) == thi;
}

/* The producer node i folds into, or -1. */
static int
fold_target(struct engine *g, size_t i)
{
	const struct node_rec *n = &g->ix.v[i];
	struct act *in, *out;
	int pi, is_clip;
	float lo = 0, hi = INFINITY;

	if (!g->selected[i] || n->domain || n->nin < 1 || n->nout != 1)
		return -1;
	is_clip = strcmp(n->op, "Clip") == 0;
	if (strcmp(n->op, "Relu") != 0 && !is_clip)
		return -1;
	if (is_clip && (n->nin < 2 || const_clip_bound(g, n, 1, &lo) < 0 ||
	    const_clip_bound(g, n, 2, &hi) < 0))
		return -1;
	if ((out = act_get(g, n->out[0], 0, NULL)) == NULL ||
	    !out->q.done || out->q.p.n != 1 ||
	    (in = act_get(g, n->in[0], 0, NULL)) == NULL ||
	    !in->q.done || in->has_conv || in->folded)
		return -1;
	if (node_index_nreaders(&g->ix, n->in[0]) != 1 ||
	    (pi = node_index_producer(&g->ix, n->in[0])) < 0)
		return -1;
	if (!g->selected[pi] || shares_params(g->ix.v[pi].op))
		return -1;
	return clamps_at(&out->q.p, lo, hi) ? pi : -1;
}

/*
 * Fold a Relu or Clip into the node producing its input when the
 * quantization of its output clamps exactly as it does: QuantizeLinear
 * saturates at the type's ends, so with q the output's quantization,
 * q(clip(x)) == q(x) for every x exactly when q(lo) is the type's lowest
 * value and q(hi) its highest (q is monotone). The input must be the
 * producer's output read by the Relu/Clip alone; the producer must have
 * its output quantized and not be data movement (whose output keeps its
 * input's grid). A Clip needs its bounds as inputs (opset 11), constant;
 * before opset 11 they are attributes the stream does not carry.
 */
static int
decide_folds(struct engine *g, struct err *e)
{
	if (g->o->keep_acts || g->s->act_symmetric || g->ix.n == 0)
		return 0;
	for (size_t i = 0; i < g->ix.n; i++) {
		const struct node_rec *n = &g->ix.v[i];
		int pi = fold_target(g, i);

		if (pi < 0)
			continue;
		if (array_grow(&g->folds, &g->capfolds, g->nfolds,
		    sizeof *g->folds) < 0)
			return err_nomem(e);
		g->folds[g->nfolds].node = n->name;
		g->folds[g->nfolds].into = g->ix.v[pi].name;
		g->nfolds++;
		act_get(g, n->in[0], 0, NULL)->folded = 1;
		note(g, "%s: folded into %s: %s's quantization clamps",
		    n->name, g->ix.v[pi].name, n->out[0]);
	}
	return 0;
}

/* Dynamic quantization. */

static int
has_dynamic_form(const char *op)
{
	return in_list(dynamic_all_ops, sizeof dynamic_all_ops /
	    sizeof dynamic_all_ops[0], op);
}

/* A dynamic record for node n, whose weight is w. */
static int
add_dynamic(struct engine *g, const struct node_rec *n, struct wb *w,
    struct err *e)
{
	if (array_grow(&g->dyns, &g->capdyns, g->ndyns, sizeof *g->dyns) < 0)
		return err_nomem(e);
	g->dyns[g->ndyns].node = n->name;
	g->dyns[g->ndyns].weight = w->r.name;
	g->ndyns++;
	return 0;
}

/*
 * The constant weight of node n in input slot `slot` for dynamic
 * quantization, or NULL. An LSTM (no opinfo entry: never quantized
 * statically) has two, W and R (slots 1 and 2).
 */
static struct wb *
dynamic_weight(struct engine *g, const struct node_rec *n, int slot)
{
	struct wb *w;

	if (slot < 0 || (size_t)slot >= n->nin ||
	    !(w = wb_get(g, n->in[slot])) || w->r.is_bias || w->r.empty)
		return NULL;
	return w;
}

/*
 * The selected nodes with a dynamic form and a constant weight get a
 * dynamic record, their weights a decision; nothing else is quantized.
 */
static int
decide_dynamic(struct engine *g, struct err *e)
{
	const char **ops = g->sel_v[ENGINE_OPS_INCLUDE];

	for (size_t k = 0; !g->sel_default && k < g->sel_n[ENGINE_OPS_INCLUDE];
	    k++)
		if (!has_dynamic_form(ops[k]))
			return err_set(e, "op type %s has no dynamic form "
			    "(MatMul, Gemm, LSTM, Attention, Conv)", ops[k]);
	if (select_nodes(g, e) < 0)
		return -1;
	for (size_t i = 0; i < g->nacts; i++)
		g->acts[i].in_scope = 0;
	for (size_t i = 0; i < g->nwbs; i++)
		g->wbs[i].in_scope = 0;
	for (size_t i = 0; i < g->ix.n; i++) {
		const struct node_rec *n = &g->ix.v[i];
		const struct opinfo *oi;
		int lstm = strcmp(n->op, "LSTM") == 0;
		int attn = is_ms_attention(n);
		struct wb *w, *r = NULL;

		if (!g->selected[i])
			continue;
		oi = opinfo_find("", n->op);
		if ((n->domain && !attn) || !has_dynamic_form(n->op) ||
		    (!oi && !lstm && !attn)) {
			note(g, "%s (%s): no dynamic form: left in float",
			    n->name, n->op);
			continue;
		}
		if (!(w = dynamic_weight(g, n, lstm || attn ? 1 :
		    oi->weight_slot)) ||
		    (lstm && !(r = dynamic_weight(g, n, 2)))) {
			note(g, "%s (%s): no constant weight: left in float",
			    n->name, n->op);
			continue;
		}
		/* ORT's ConvInteger has no depthwise kernel, and a depthwise
		 * layer's input after HardSwish quantizes coarsely per call:
		 * on PaddleOCR rec, leaving them float keeps accuracy, gains
		 * 2.7 dB and runs 1.5 times faster for 6% more bytes. */
		if (g->sel_default && strcmp(n->op, "Conv") == 0 &&
		    w->r.rank >= 3 && w->r.dims[1] == 1 && w->r.dims[0] > 1) {
			note(g, "%s (Conv): one input channel per group "
			    "(depthwise): left in float", n->name);
			continue;
		}
		w->in_scope = 1;
		if (lstm || attn)	/* weights, not activations */
			w->as_act = 0;
		if (r)
			r->in_scope = 1, r->as_act = 0;
		if (add_dynamic(g, n, w, e) < 0)
			return -1;
	}
	if (g->ndyns == 0)
		return err_set(e, "%s: no MatMul, Gemm, LSTM, Attention%s "
		    "node with a constant weight to quantize dynamically",
		    str_or_empty(g->file), g->o->all_ops ? " or Conv" : "");
	return decide_wbs(g, e);
}

int
engine_decide(struct engine *g, struct err *e)
{
	/* A stream without node records cannot be selected by op type:
	 * without a list asked for, everything is quantized, as before. */
	if (g->sel_default && g->ix.n == 0) {
		g->sel_v[ENGINE_OPS_INCLUDE] = NULL;
		g->sel_n[ENGINE_OPS_INCLUDE] = 0;
		g->sel_default = 0;
	}
	for (int k = 0; k < ENGINE_NLISTS; k++)
		if (g->sel_n[k] && g->ix.n == 0)
			return err_set(e, "%s: node and op-type selections "
			    "need node records", str_or_empty(g->file));
	if (g->s->dynamic)
		return decide_dynamic(g, e);
	if (select_nodes(g, e) < 0 || feeds_outputs(g, e) < 0)
		return -1;
	keep_outputs_float(g);
	if (decide_acts(g, e) < 0 || decide_wbs(g, e) < 0 ||
	    decide_folds(g, e) < 0)
		return -1;
	return 0;
}

/* Writing. */

void
engine_put_headers(const struct engine *g, struct stream_writer *w)
{
	for (size_t i = 0; i < g->nheaders; i++)
		stream_put_header(w, g->headers[i]);
}

static void
put_act(const struct act *a, struct stream_writer *w)
{
	struct qparam_rec r = { .name = (char *)a->name, .role = ROLE_ACT,
	    .q = a->q.p };
	struct convert_rec c = { .name = (char *)a->name, .q = a->conv.p };

	qparam_rec_put(&r, w, NULL);
	if (!a->has_conv)
		return;
	c.recv = a->ov->recv_nodes;
	c.nrecv = a->ov->nrecv;
	convert_rec_put(&c, w, NULL);
}

static void
put_wb(const struct wb *b, struct stream_writer *w)
{
	int bias = b->r.is_bias && !b->ov;
	struct qparam_rec r = { .name = b->r.name, .role = bias ? ROLE_BIAS :
	    ROLE_WEIGHT, .q = b->q.p, .adjusted = b->q.adjusted };

	if (bias) {
		r.input = b->r.input;
		r.weight = b->r.weight;
	}
	qparam_rec_put(&r, w, NULL);
}

/* The records kept, from the spool, as they were read. */
static int
put_kept(const struct engine *g, struct stream_writer *w, struct err *e)
{
	struct stream_rec r;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t n = 0;

	if (g->spool == NULL)
		return 0;
	if (fflush(g->spool) != 0 || fseek(g->spool, 0, SEEK_SET) != 0)
		return err_errno(e, "the temporary file of the records");
	memset(&r, 0, sizeof r);
	/* stream_put_rec writes a record's raw line alone */
	while (n < g->nrecs && (len = getline(&line, &cap, g->spool)) > 0) {
		r.raw = line;
		r.rawlen = (size_t)len - 1;
		stream_put_rec(w, &r);
		n++;
	}
	free(line);
	if (n != g->nrecs)
		return err_set(e, "the temporary file of the records: "
		    "%llu of %llu records read back", (unsigned long long)n,
		    (unsigned long long)g->nrecs);
	return 0;
}

int
engine_put_records(const struct engine *g, struct stream_writer *w,
    struct err *e)
{
	if (put_kept(g, w, e) < 0)
		return -1;
	/* A folded Relu's input is gone from the model. */
	for (size_t i = 0; i < g->nacts; i++)
		if (g->acts[i].q.done && !g->acts[i].folded)
			put_act(&g->acts[i], w);
	for (size_t i = 0; i < g->nwbs; i++)
		if (g->wbs[i].q.done)
			put_wb(&g->wbs[i], w);
	for (size_t i = 0; i < g->nfolds; i++)
		fold_rec_put(&g->folds[i], w, NULL);
	for (size_t i = 0; i < g->ndyns; i++)
		dynamic_rec_put(&g->dyns[i], w, NULL);
	return 0;
}
