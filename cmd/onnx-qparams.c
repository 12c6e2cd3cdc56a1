/*
 * onnx-qparams: the quantization-parameter stage (see onnx-qparams(1)).
 * Reads an onnxq stream (onnxq-stream(5)) with the statistics, weights
 * and graph onnx-calib wrote, chooses every activation's range, and
 * writes the stream back with `qparam` records (and `convert` records
 * for the converts a recipe asks for): scales and zero points computed
 * as ONNX Runtime computes them (qparams.h), int32 bias scales whose
 * weight scales are raised so that no bias clips, and `fold` records for
 * the Relu and Clip nodes the quantization clamp makes redundant. No
 * model is needed.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "hist.h"
#include "opinfo.h"
#include "outfile.h"
#include "qparams.h"
#include "rangesel.h"
#include "stats.h"
#include "stream.h"
#include "strmap.h"

#define PROG "onnx-qparams"

/* Everything that decides how a tensor is quantized, globally. */
struct settings {
	int act_type, act_sym, act_rr, act_pow2;
	int method, mavg, per_side, entropy_bins;
	double percentile;
	int w_type, w_sym, w_rr, w_pow2, per_channel;
	int bias_adjust;
	double min_real_range;
};

/*
 * The operator types quantized when no op-type or node list is given:
 * those with weights (and only nodes whose weight is a constant). Quantizing every operator of PaddleOCR v4 rec loses 10 to 33
 * points of recognition accuracy; these lose about 2 (man page, DEFAULTS).
 * Not const: struct selection lists borrowed strings as const char **.
 */
static const char *default_ops[] = {
	"Conv", "ConvTranspose", "Gemm", "MatMul",
};

/* Node and op-type selections (borrowed strings). */
struct selection {
	const char **v[4];	/* nodes include, exclude, ops include, exclude */
	size_t n[4];
};

struct opts {
	const char *config;
	const char *out;
	const char *in;
	struct settings cli;
	unsigned cli_set;	/* 1u << CG_* */
	char *lists[4];		/* comma lists from the command line */
	int argc;
	char **argv;
	int verbose;
	int keep_acts;		/* no fold records */
	int all_ops;		/* no default op-type list */
};

struct node {
	const char *name;
	const char *op;
	char *domain;		/* NULL: the default domain */
	char **in, **out;	/* one block each (stream_rec_names) */
	size_t nin, nout;
	int selected;
};

/* A quantization decision for one tensor (per channel when n > 1). */
struct qp {
	int done;
	int type;
	size_t n;
	int axis;		/* -1: per tensor */
	float *scale;
	int32_t *zp;
	float *rmin, *rmax;	/* the range the scale came from, or NULL */
	const char *method;	/* "minmax", ..., "fixed", "shared" */
	const char *from;	/* shared: whose parameters */
	int fixed;		/* scale given by the recipe: never adjusted */
	int adjusted;		/* scales raised for an int32 bias */
};

struct act {
	const char *name;
	int has_stat;
	struct tstats ts;
	int in_scope;
	float rmin, rmax;	/* selected range, before the recipe's */
	int method;
	struct qp q;
	int has_conv;		/* a recipe convert */
	struct qp conv;
	const struct config_tensor *ov;
	int folded;		/* its Relu/Clip reader is folded away */
};

/* A weight or bias record. */
struct wb {
	const struct stream_rec *rec;
	const char *name;
	int is_bias;
	char *node, *op, *input, *weight;
	int rank;
	int64_t dims[TENSOR_MAX_RANK];
	float min, max;
	int axis;		/* -1: no channel ranges in the stream */
	float *cmin, *cmax;
	size_t nch;
	double beta;
	int in_scope;
	int as_act;		/* a constant its op reads as an activation */
	int empty;		/* no elements: nothing to quantize */
	struct qp q;
	const struct config_tensor *ov;
};

struct run {
	const struct opts *o;
	struct settings s;
	struct config *cfg;
	struct selection sel;
	int sel_default;		/* sel.v[2] is default_ops */
	int method_default;		/* no method asked for */
	struct stream_rec **recs;	/* every record, in order */
	size_t nrecs, caprecs;
	char **headers;
	size_t nheaders, capheaders;
	struct node *nodes;
	size_t nnodes, capnodes;
	struct act *acts;
	size_t nacts, capacts;
	struct wb *wbs;
	size_t nwbs, capwbs;
	struct strmap *node_ix, *act_ix, *wb_ix, *nconsumers;
	struct strmap *param_ix;	/* tensor -> a node reading it as a
					   parameter (opinfo_is_data) */
	struct strmap *prod_ix;		/* tensor -> the node writing it */
	int (*folds)[2];		/* Relu/Clip node, producer node */
	size_t nfolds, capfolds;
	int have_nodes;
};

static const char usage_text[] =
    "usage: onnx-qparams [-v] [-c CONFIG] [-a TYPE] [-w TYPE] [-m METHOD]\n"
    "                    [--percentile P] [--percentile-per-side] "
    "[--entropy-bins N]\n"
    "                    [--moving-average]\n"
    "                    [--activation-symmetric | "
    "--activation-asymmetric]\n"
    "                    [--weight-symmetric | --weight-asymmetric]\n"
    "                    [--per-channel | --per-tensor] [--reduce-range] "
    "[--power-of-two]\n"
    "                    [--min-real-range R] [--no-bias-weight-adjust]\n"
    "                    [--keep-activations] [--all-ops]\n"
    "                    [--include-nodes LIST] [--exclude-nodes LIST]\n"
    "                    [--include-ops LIST] [--exclude-ops LIST] "
    "[-o FILE] [STATS]\n";

/* A note under -v. */
static void
note(const struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->o->verbose)
		return;
	va_start(ap, fmt);
	cli_vwarn(fmt, ap);
	va_end(ap);
}

/* Growth of the arrays of struct run; -1 when out of memory. */
static int
grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *nv;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	if (c > SIZE_MAX / size || (nv = realloc(*v, c * size)) == NULL)
		return -1;
	memset((char *)nv + *cap * size, 0, (c - *cap) * size);
	*v = nv;
	*cap = c;
	return 0;
}

static void
settings_default(struct settings *s)
{
	memset(s, 0, sizeof *s);
	s->act_type = DT_UINT8;
	s->method = RANGESEL_MSE;	/* measured: man page, DEFAULTS */
	s->percentile = RANGESEL_PERCENTILE_DEFAULT;
	s->entropy_bins = RANGESEL_ENTROPY_BINS_DEFAULT;
	s->w_type = DT_INT8;
	s->w_sym = 1;
	s->per_channel = 1;
	s->bias_adjust = 1;
}

/* dst gets every field of src whose bit is in set. */
static void
settings_apply(struct settings *d, const struct settings *s, unsigned set)
{
#define TAKE(bit, f) if (set & (1u << (bit))) d->f = s->f
	TAKE(CG_ACT_TYPE, act_type);
	TAKE(CG_ACT_SYMMETRIC, act_sym);
	TAKE(CG_ACT_REDUCE_RANGE, act_rr);
	TAKE(CG_ACT_POW2, act_pow2);
	TAKE(CG_METHOD, method);
	TAKE(CG_MOVING_AVERAGE, mavg);
	TAKE(CG_PERCENTILE, percentile);
	TAKE(CG_PER_SIDE, per_side);
	TAKE(CG_ENTROPY_BINS, entropy_bins);
	TAKE(CG_W_TYPE, w_type);
	TAKE(CG_W_SYMMETRIC, w_sym);
	TAKE(CG_W_REDUCE_RANGE, w_rr);
	TAKE(CG_W_POW2, w_pow2);
	TAKE(CG_PER_CHANNEL, per_channel);
	TAKE(CG_BIAS_ADJUST, bias_adjust);
	TAKE(CG_MIN_REAL_RANGE, min_real_range);
#undef TAKE
}

static void
settings_from_config(struct settings *d, const struct config_globals *g)
{
	struct settings s;

	settings_default(&s);
	s.act_type = g->act_type;
	s.act_sym = g->act_symmetric;
	s.act_rr = g->act_reduce_range;
	s.act_pow2 = g->act_pow2;
	s.method = g->method;
	s.mavg = g->moving_average;
	s.percentile = g->percentile;
	s.per_side = g->per_side;
	s.entropy_bins = g->entropy_bins;
	s.w_type = g->w_type;
	s.w_sym = g->w_symmetric;
	s.w_rr = g->w_reduce_range;
	s.w_pow2 = g->w_pow2;
	s.per_channel = g->per_channel;
	s.bias_adjust = g->bias_adjust;
	s.min_real_range = g->min_real_range;
	settings_apply(d, &s, g->set);
}

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
 * a copy of the string are one malloc'd block (argv stays intact for the
 * #prog line).
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

/* Reading. */

static int
keep_record(struct run *r, const struct stream_rec *rec,
    struct stream_rec **out, struct err *e)
{
	struct stream_rec *d;

	if (grow((void **)&r->recs, &r->caprecs, r->nrecs, sizeof *r->recs) < 0)
		return err_nomem(e);
	if ((d = stream_rec_dup(rec, e)) == NULL)
		return -1;
	r->recs[r->nrecs++] = d;
	*out = d;
	return 0;
}

static int
read_node(struct run *r, const struct stream_rec *rec, struct err *e)
{
	struct node *n;
	int dummy;

	if (strmap_get(r->node_ix, rec->subject, &dummy))
		return stream_rec_err(rec, e, "node %s: described twice",
		    rec->subject);
	if (grow((void **)&r->nodes, &r->capnodes, r->nnodes,
	    sizeof *r->nodes) < 0)
		return err_nomem(e);
	/* Counted at once, so an error below still frees what it holds. */
	n = &r->nodes[r->nnodes++];
	memset(n, 0, sizeof *n);
	n->name = rec->subject;
	if ((n->op = stream_rec_get(rec, "op")) == NULL)
		return stream_rec_err(rec, e, "key op: missing in node record");
	if (stream_rec_has(rec, "domain") &&
	    stream_rec_name(rec, "domain", &n->domain, e) < 0)
		return -1;
	if (stream_rec_names(rec, "in", &n->in, &n->nin, e) < 0)
		return -1;
	if (stream_rec_names(rec, "out", &n->out, &n->nout, e) < 0)
		return -1;
	if (strmap_put(r->node_ix, n->name, (int)r->nnodes - 1) < 0)
		return err_nomem(e);
	for (size_t i = 0; i < n->nin; i++) {
		int c = 0;

		if (!*n->in[i])
			continue;
		strmap_get(r->nconsumers, n->in[i], &c);
		if (strmap_put(r->nconsumers, n->in[i], c + 1) < 0)
			return err_nomem(e);
		if (i < 32 && !opinfo_is_data(n->domain, n->op, (int)i) &&
		    !strmap_get(r->param_ix, n->in[i], NULL) &&
		    strmap_put(r->param_ix, n->in[i], (int)r->nnodes - 1) < 0)
			return err_nomem(e);
	}
	/* Node records come in topological order (onnxq-stream(5)): an
	 * output read before here means a cycle or a shuffled stream. */
	for (size_t i = 0; i < n->nout; i++) {
		int p;

		if (!*n->out[i])
			continue;
		if (strmap_get(r->prod_ix, n->out[i], &p))
			return stream_rec_err(rec, e, "node %s: output %s is also "
			    "produced by node %s", n->name, n->out[i],
			    r->nodes[p].name);
		if (strmap_get(r->nconsumers, n->out[i], NULL))
			return stream_rec_err(rec, e, "node %s: output %s is read "
			    "before it is produced (node records out of "
			    "topological order, or a cycle)", n->name, n->out[i]);
		if (strmap_put(r->prod_ix, n->out[i], (int)r->nnodes - 1) < 0)
			return err_nomem(e);
	}
	r->have_nodes = 1;
	return 0;
}

static struct act *
act_get(struct run *r, const char *name, int create, struct err *e)
{
	int i;

	if (strmap_get(r->act_ix, name, &i))
		return &r->acts[i];
	if (!create)
		return NULL;
	if (grow((void **)&r->acts, &r->capacts, r->nacts, sizeof *r->acts) < 0 ||
	    strmap_put(r->act_ix, name, (int)r->nacts) < 0) {
		err_nomem(e);
		return NULL;
	}
	memset(&r->acts[r->nacts], 0, sizeof r->acts[0]);
	r->acts[r->nacts].name = name;
	r->acts[r->nacts].ts.rank = TSTATS_RANK_NONE;
	return &r->acts[r->nacts++];
}

static int
read_stat(struct run *r, const struct stream_rec *rec, struct err *e)
{
	struct act *a = act_get(r, rec->subject, 1, e);
	struct hist *h;

	if (a == NULL)
		return -1;
	if (a->has_stat)
		return stream_rec_err(rec, e, "stat %s: given twice",
		    rec->subject);
	a->has_stat = 1;
	h = a->ts.hist;		/* hist records may come first */
	a->ts.hist = NULL;
	if (tstats_init(&a->ts, -1, e) < 0)
		return -1;
	a->ts.hist = h;
	return tstats_read_stat(&a->ts, rec, e);
}

static int
read_hist(struct run *r, const struct stream_rec *rec, struct err *e)
{
	struct act *a = act_get(r, rec->subject, 1, e);

	if (a == NULL)
		return -1;
	return tstats_read_hist(&a->ts, rec, e);
}

static int
read_wb(struct run *r, const struct stream_rec *rec, struct err *e)
{
	struct wb *w;
	int dummy;

	if (strmap_get(r->wb_ix, rec->subject, &dummy))
		return stream_rec_err(rec, e, "%s %s: described twice",
		    rec->type, rec->subject);
	if (grow((void **)&r->wbs, &r->capwbs, r->nwbs, sizeof *r->wbs) < 0)
		return err_nomem(e);
	/* Counted at once, so an error below still frees what it holds. */
	w = &r->wbs[r->nwbs++];
	memset(w, 0, sizeof *w);
	w->rec = rec;
	w->name = rec->subject;
	w->is_bias = strcmp(rec->type, "bias") == 0;
	w->axis = -1;
	w->beta = 1;
	if (stream_rec_name(rec, "node", &w->node, e) < 0 ||
	    stream_rec_name(rec, "op", &w->op, e) < 0 ||
	    stream_rec_shape(rec, "shape", &w->rank, w->dims, e) < 0 ||
	    stream_rec_float(rec, "min", &w->min, e) < 0 ||
	    stream_rec_float(rec, "max", &w->max, e) < 0)
		return -1;
	if (w->is_bias && (stream_rec_name(rec, "input", &w->input, e) < 0 ||
	    stream_rec_name(rec, "weight", &w->weight, e) < 0))
		return -1;
	if (w->is_bias && stream_rec_has(rec, "beta") &&
	    stream_rec_double(rec, "beta", &w->beta, e) < 0)
		return -1;
	if (stream_rec_has(rec, "axis")) {
		int64_t ax;
		size_t n1, n2;

		if (stream_rec_int(rec, "axis", &ax, e) < 0 ||
		    stream_rec_floats(rec, "cmin", &w->cmin, &n1, e) < 0 ||
		    stream_rec_floats(rec, "cmax", &w->cmax, &n2, e) < 0)
			return -1;
		if (ax < 0 || ax >= w->rank)
			return stream_rec_err(rec, e, "key axis: %lld out of "
			    "range for rank %d", (long long)ax, w->rank);
		if (n1 != n2 || (w->dims[ax] >= 0 && (int64_t)n1 !=
		    w->dims[ax]))
			return stream_rec_err(rec, e, "keys cmin, cmax: %zu and "
			    "%zu values for %lld channels", n1, n2,
			    (long long)w->dims[ax]);
		w->axis = (int)ax;
		w->nch = n1;
	}
	/* A forged range (NaN, min above max) is refused here, as for stat
	 * records; an empty tensor's is min=inf max=-inf. */
	for (size_t c = 0; c <= w->nch; c++) {
		float lo = c ? w->cmin[c - 1] : w->min;
		float hi = c ? w->cmax[c - 1] : w->max;

		if (!(lo <= hi) && !(lo == INFINITY && hi == -INFINITY))
			return stream_rec_err(rec, e, "%s %s: bad range "
			    "min=%g max=%g", rec->type, rec->subject,
			    (double)lo, (double)hi);
	}
	for (int k = 0; k < w->rank; k++)
		if (w->dims[k] == 0)
			w->empty = 1;
	if (strmap_put(r->wb_ix, w->name, (int)r->nwbs - 1) < 0)
		return err_nomem(e);
	return 0;
}

static int
read_stream(struct run *r, struct stream_reader *rd, struct err *e)
{
	int k;

	while ((k = stream_next(rd, e)) > 0) {
		const struct stream_rec *rec;
		struct stream_rec *d = NULL;

		if (k == STREAM_HEADER) {
			if (grow((void **)&r->headers, &r->capheaders,
			    r->nheaders, sizeof *r->headers) < 0 ||
			    (r->headers[r->nheaders] =
			    strdup(stream_header(rd))) == NULL)
				return err_nomem(e);
			r->nheaders++;
			continue;
		}
		rec = stream_record(rd);
		/* Our own records from an earlier run are replaced. */
		if (strcmp(rec->type, "qparam") == 0 ||
		    strcmp(rec->type, "fold") == 0)
			continue;
		if (keep_record(r, rec, &d, e) < 0)
			return -1;
		if (strcmp(d->type, "node") == 0) {
			if (read_node(r, d, e) < 0)
				return -1;
		} else if (strcmp(d->type, "stat") == 0) {
			if (read_stat(r, d, e) < 0)
				return -1;
		} else if (strcmp(d->type, "hist") == 0) {
			if (read_hist(r, d, e) < 0)
				return -1;
		} else if (strcmp(d->type, "weight") == 0 ||
		    strcmp(d->type, "bias") == 0) {
			if (read_wb(r, d, e) < 0)
				return -1;
		}
	}
	if (k < 0)
		return -1;
	for (size_t i = 0; i < r->nacts; i++) {
		if (!r->acts[i].has_stat)
			return err_set(e, "%s: hist records of %s without a stat "
			    "record", stream_name(rd), r->acts[i].name);
		if (tstats_check_hist(&r->acts[i].ts, e) < 0)
			return err_prefix(e, "%s: tensor %s", stream_name(rd),
			    r->acts[i].name);
	}
	return 0;
}

/* The recipe against the stream. */

static void
world_tensor(void *arg, const char *name, struct config_target *t)
{
	struct run *r = arg;
	int i;

	t->kind = CONFIG_UNKNOWN;
	if (strmap_get(r->wb_ix, name, &i)) {
		const struct wb *w = &r->wbs[i];

		t->kind = w->is_bias ? CONFIG_BIAS : CONFIG_WEIGHT;
		t->rank = w->rank;
		memcpy(t->dims, w->dims, sizeof t->dims);
		t->axis = w->axis;
	} else if (strmap_get(r->act_ix, name, &i))
		t->kind = CONFIG_ACTIVATION;
}

static int
world_node(void *arg, const char *name)
{
	struct run *r = arg;

	if (!r->have_nodes)
		return -1;
	return strmap_get(r->node_ix, name, NULL);
}

static int
world_consumes(void *arg, const char *node, const char *tensor)
{
	struct run *r = arg;
	int i;

	if (!strmap_get(r->node_ix, node, &i))
		return -1;
	for (size_t k = 0; k < r->nodes[i].nin; k++)
		if (strcmp(r->nodes[i].in[k], tensor) == 0)
			return 1;
	return 0;
}

static void
print_msgs(const struct config_msgs *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		cli_warn("%s", m->v[i]);
	if (m->dropped)
		cli_warn("%s: %zu more errors not shown", path, m->dropped);
}

/*
 * Tensors that a node reads as a parameter (Resize's scales, Clip's
 * bounds, ...) stay float, wherever else they are read: ORT leaves them
 * alone, and a quantized Resize scale changes the output's shape. Empty
 * constants have nothing to quantize.
 */
static void
keep_params_float(struct run *r)
{
	int ni;

	for (size_t i = 0; i < r->nacts; i++) {
		struct act *a = &r->acts[i];

		if (!a->in_scope || !strmap_get(r->param_ix, a->name, &ni))
			continue;
		a->in_scope = 0;
		note(r, "%s: a parameter of %s (%s), not data: left in float",
		    a->name, r->nodes[ni].name, r->nodes[ni].op);
	}
	for (size_t i = 0; i < r->nwbs; i++) {
		struct wb *w = &r->wbs[i];

		if (!w->in_scope)
			continue;
		if (w->empty) {
			w->in_scope = 0;
			note(r, "%s %s: empty: nothing to quantize",
			    w->is_bias ? "bias" : "weight", w->name);
		} else if (strmap_get(r->param_ix, w->name, &ni)) {
			w->in_scope = 0;
			note(r, "%s: a parameter of %s (%s), not data: left in "
			    "float", w->name, r->nodes[ni].name,
			    r->nodes[ni].op);
		}
	}
}

static struct wb *wb_get(struct run *, const char *);

/* Whether n's weight slot (opinfo) holds a constant of the stream. */
static int
has_const_weight(struct run *r, const struct node *n)
{
	const struct opinfo *oi = opinfo_find(n->domain ? n->domain : "",
	    n->op);

	if (oi == NULL || oi->weight_slot < 0 ||
	    (size_t)oi->weight_slot >= n->nin)
		return 0;
	return wb_get(r, n->in[oi->weight_slot]) != NULL;
}

/* Selection: which nodes, hence which tensors, are quantized. */
static void
select_nodes(struct run *r)
{
	const struct selection *s = &r->sel;

	for (size_t i = 0; i < r->nnodes; i++) {
		struct node *n = &r->nodes[i];

		n->selected = (s->n[0] == 0 || in_list(s->v[0], s->n[0],
		    n->name)) && !in_list(s->v[1], s->n[1], n->name) &&
		    (s->n[2] == 0 || in_list(s->v[2], s->n[2], n->op)) &&
		    !in_list(s->v[3], s->n[3], n->op);
		/* By default only with a constant weight: a MatMul of two
		 * activations (attention) adds noise and saves nothing. */
		if (n->selected && r->sel_default &&
		    !has_const_weight(r, n))
			n->selected = 0;
	}
	for (size_t i = 0; i < r->nacts; i++)
		r->acts[i].in_scope = !r->have_nodes;
	for (size_t i = 0; i < r->nnodes; i++) {
		struct node *n = &r->nodes[i];
		struct act *a;

		if (!n->selected)
			continue;
		for (size_t k = 0; k < n->nin; k++)
			if (*n->in[k] && (a = act_get(r, n->in[k], 0, NULL)))
				a->in_scope = 1;
		for (size_t k = 0; k < n->nout; k++)
			if (*n->out[k] && (a = act_get(r, n->out[k], 0, NULL)))
				a->in_scope = 1;
	}
	for (size_t i = 0; i < r->nwbs; i++) {
		struct wb *w = &r->wbs[i];
		const struct node *n;
		int ni;

		w->in_scope = !r->have_nodes ||
		    (strmap_get(r->node_ix, w->node, &ni) &&
		    r->nodes[ni].selected);
		if (w->is_bias || !r->have_nodes ||
		    !strmap_get(r->node_ix, w->node, &ni))
			continue;
		/* Not a weight of its op (Mul's constant...): ORT quantizes
		 * it like an activation, per tensor. */
		n = &r->nodes[ni];
		w->as_act = 1;
		for (size_t k = 0; k < n->nin; k++)
			if (strcmp(n->in[k], w->name) == 0 &&
			    opinfo_role(n->domain, n->op, (int)k) ==
			    OPINFO_WEIGHT)
				w->as_act = 0;
	}
	keep_params_float(r);
}

static int
qp_alloc(struct qp *q, size_t n, struct err *e)
{
	q->n = n;
	q->scale = calloc(n, sizeof *q->scale);
	q->zp = calloc(n, sizeof *q->zp);
	q->rmin = calloc(n, sizeof *q->rmin);
	q->rmax = calloc(n, sizeof *q->rmax);
	if (!q->scale || !q->zp || !q->rmin || !q->rmax)
		return err_nomem(e);
	return 0;
}

static void
qp_release(struct qp *q)
{
	free(q->scale);
	free(q->zp);
	free(q->rmin);
	free(q->rmax);
	memset(q, 0, sizeof *q);
}

static int
qp_copy(struct qp *d, const struct qp *s, struct err *e)
{
	qp_release(d);
	if (qp_alloc(d, s->n, e) < 0)
		return -1;
	d->done = s->done;
	d->type = s->type;
	d->axis = s->axis;
	d->method = s->method;
	memcpy(d->scale, s->scale, s->n * sizeof *s->scale);
	memcpy(d->zp, s->zp, s->n * sizeof *s->zp);
	memcpy(d->rmin, s->rmin, s->n * sizeof *s->rmin);
	memcpy(d->rmax, s->rmax, s->n * sizeof *s->rmax);
	return 0;
}

#define HAS(spec, k) ((spec)->set & (1u << (k)))

/*
 * One per-tensor decision for range [lo, hi] under a recipe spec (may be
 * NULL) over the defaults in o. Fixed scales are taken as given.
 */
static int
decide1(struct qp *q, const struct config_spec *sp, struct qparams_opts o,
    float lo, float hi, const char *method, struct err *e)
{
	if (qp_alloc(q, 1, e) < 0)
		return -1;
	q->axis = -1;
	q->method = method;
	if (sp && HAS(sp, CK_QUANT_TYPE))
		o.type = sp->quant_type;
	q->type = o.type;
	if (sp && HAS(sp, CK_SCALE)) {
		int64_t lo64, hi64;

		qparams_type_limits(o.type, &lo64, &hi64);
		if (sp->zero_point[0] < lo64 || sp->zero_point[0] > hi64)
			return err_set(e, "zero point %lld does not fit %s",
			    (long long)sp->zero_point[0], qparams_type_name(o.type));
		q->scale[0] = sp->scale[0];
		q->zp[0] = (int32_t)sp->zero_point[0];
		q->method = "fixed";
		q->fixed = 1;
		free(q->rmin);
		free(q->rmax);
		q->rmin = q->rmax = NULL;
		q->done = 1;
		return 0;
	}
	if (sp && HAS(sp, CK_SYMMETRIC))
		o.symmetric = sp->symmetric;
	if (sp && HAS(sp, CK_REDUCE_RANGE))
		o.reduce_range = sp->reduce_range;
	if (sp && HAS(sp, CK_POW2))
		o.pow2 = sp->pow2;
	if (sp && HAS(sp, CK_RMIN))
		lo = sp->rmin[0];
	if (sp && HAS(sp, CK_RMAX))
		hi = sp->rmax[0];
	q->rmin[0] = lo;
	q->rmax[0] = hi;
	if (qparams_compute(&o, lo, hi, &q->scale[0], &q->zp[0], e) < 0)
		return -1;
	q->done = 1;
	return 0;
}

static struct qparams_opts
act_opts(const struct settings *s)
{
	struct qparams_opts o = { 0 };

	o.type = s->act_type;
	o.symmetric = s->act_sym;
	o.reduce_range = s->act_rr;
	o.pow2 = s->act_pow2;
	o.min_real_range = (float)s->min_real_range;
	return o;
}

static struct qparams_opts
weight_opts(const struct settings *s)
{
	struct qparams_opts o = { 0 };

	o.type = s->w_type;
	o.symmetric = s->w_sym;
	o.reduce_range = s->w_rr;
	o.pow2 = s->w_pow2;
	o.min_real_range = (float)s->min_real_range;
	return o;
}

/* Range selection for one activation, with the recipe's method. */
static int
select_range(struct run *r, struct act *a, struct err *e)
{
	const struct config_spec *sp = a->ov ? &a->ov->spec : NULL;
	struct rangesel_opts ro;
	struct rangesel_stats st;
	struct hist_bin *bins = NULL;
	size_t nbins = 0;
	int rc;

	rangesel_opts_init(&ro);
	ro.method = sp && HAS(sp, CK_METHOD) ? sp->method : r->s.method;
	ro.moving_average = r->s.mavg;
	ro.per_side = r->s.per_side;
	ro.percentile = sp && HAS(sp, CK_PERCENTILE) ? sp->percentile :
	    r->s.percentile;
	ro.entropy_bins = r->s.entropy_bins;
	ro.q = act_opts(&r->s);
	if (sp && HAS(sp, CK_QUANT_TYPE))
		ro.q.type = sp->quant_type;
	if (sp && HAS(sp, CK_SYMMETRIC))
		ro.q.symmetric = sp->symmetric;
	if (sp && HAS(sp, CK_REDUCE_RANGE))
		ro.q.reduce_range = sp->reduce_range;
	if (sp && HAS(sp, CK_POW2))
		ro.q.pow2 = sp->pow2;
	a->method = ro.method;

	memset(&st, 0, sizeof st);
	st.n = a->ts.n;
	st.min = a->ts.n ? a->ts.min : INFINITY;
	st.max = a->ts.n ? a->ts.max : -INFINITY;
	st.mavg_min = tstats_mavg_min(&a->ts);
	st.mavg_max = tstats_mavg_max(&a->ts);
	st.mean = tstats_mean(&a->ts);
	st.std = tstats_std(&a->ts);
	if (a->ts.hist && hist_bins(a->ts.hist, &bins, &nbins, e) < 0)
		return err_prefix(e, "tensor %s", a->name);
	st.bins = bins;
	st.nbins = nbins;
	/* The default method on a stream without histograms: minmax. */
	if (bins == NULL && r->method_default && !(sp && HAS(sp, CK_METHOD)))
		ro.method = a->method = RANGESEL_MINMAX;
	if (ro.method != RANGESEL_MINMAX && ro.method != RANGESEL_DISTRIBUTION &&
	    a->ts.n > 0 && bins == NULL) {
		free(bins);
		return err_set(e, "tensor %s: method %s needs its hist records",
		    a->name, rangesel_method_name(ro.method));
	}
	rc = rangesel_select(&st, &ro, &a->rmin, &a->rmax, e);
	free(bins);
	if (rc < 0)
		return err_prefix(e, "tensor %s", a->name);
	return 0;
}

/* ORT's adjust_tensor_ranges: ranges Relu/Clip/Softmax make known. */
static void
adjust_ranges(struct run *r)
{
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct node *n = &r->nodes[i];
		struct act *in, *out;
		int c = 0;

		if (!n->selected || n->nout < 1)
			continue;
		out = act_get(r, n->out[0], 0, NULL);
		if (strcmp(n->op, "Softmax") == 0 && out) {
			out->rmin = 0;
			out->rmax = 1;
			continue;
		}
		if (strcmp(n->op, "Relu") != 0 && strcmp(n->op, "Clip") != 0)
			continue;
		if (n->nin < 1 || !out ||
		    (in = act_get(r, n->in[0], 0, NULL)) == NULL)
			continue;
		strmap_get(r->nconsumers, n->in[0], &c);
		if (c != 1)
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

static int
decide_acts(struct run *r, struct err *e)
{
	struct qparams_opts o = act_opts(&r->s);

	for (size_t i = 0; i < r->nacts; i++) {
		struct act *a = &r->acts[i];

		a->ov = config_find(r->cfg, a->name);
		if (a->in_scope && select_range(r, a, e) < 0)
			return -1;
	}
	adjust_ranges(r);
	for (size_t i = 0; i < r->nacts; i++) {
		struct act *a = &r->acts[i];
		const struct config_spec *sp = a->ov ? &a->ov->spec : NULL;

		if (!a->in_scope)
			continue;
		if (decide1(&a->q, sp, o, a->rmin, a->rmax,
		    rangesel_method_name(a->method), e) < 0)
			return err_prefix(e, "tensor %s", a->name);
		if (a->ov && a->ov->has_convert) {
			/* The consumer side, as ORT: the calibrated range and
			 * the convert's own keys over the defaults. */
			if (decide1(&a->conv, &a->ov->convert, o, a->rmin,
			    a->rmax, rangesel_method_name(a->method), e) < 0)
				return err_prefix(e, "tensor %s: convert", a->name);
			a->has_conv = 1;
		}
	}
	/* Data movement keeps its input's grid (topological order). */
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct node *n = &r->nodes[i];
		struct act *in, *out;

		if (!n->selected || !shares_params(n->op) || n->nin < 1)
			continue;
		if ((in = act_get(r, n->in[0], 0, NULL)) == NULL || !in->q.done)
			continue;
		for (size_t k = 0; k < n->nout; k++) {
			const struct config_spec *sp;

			if ((out = act_get(r, n->out[k], 0, NULL)) == NULL ||
			    !out->q.done)
				continue;
			sp = out->ov ? &out->ov->spec : NULL;
			if (sp && (sp->set & ((1u << CK_QUANT_TYPE) |
			    (1u << CK_SCALE) | (1u << CK_RMIN) |
			    (1u << CK_RMAX) | (1u << CK_METHOD))))
				continue;	/* the recipe decides */
			if (qp_copy(&out->q, act_for(in, n->name), e) < 0)
				return -1;
			out->q.method = "shared";
			out->q.from = in->name;
		}
	}
	return 0;
}

/* Per-channel weight ranges along the stream's axis, or the recipe's. */
static int
decide_weight(struct run *r, struct wb *w, struct err *e)
{
	const struct config_spec *sp = w->ov ? &w->ov->spec : NULL;
	struct qparams_opts o = weight_opts(&r->s);
	int per_channel = r->s.per_channel && w->axis >= 0;
	int axis = w->axis;
	size_t n;

	if (w->as_act && !(sp && (sp->per_channel || HAS(sp, CK_AXIS))))
		return decide1(&w->q, sp, act_opts(&r->s), w->min, w->max,
		    "minmax", e);
	if (sp && HAS(sp, CK_QUANT_TYPE))
		o.type = sp->quant_type;
	if (sp && HAS(sp, CK_SYMMETRIC))
		o.symmetric = sp->symmetric;
	if (sp && HAS(sp, CK_REDUCE_RANGE))
		o.reduce_range = sp->reduce_range;
	if (sp && HAS(sp, CK_POW2))
		o.pow2 = sp->pow2;
	if (sp && HAS(sp, CK_AXIS)) {
		axis = sp->axis < 0 ? sp->axis + w->rank : sp->axis;
		per_channel = 1;
	}
	if (sp && (HAS(sp, CK_SCALE) || HAS(sp, CK_RMIN) || HAS(sp, CK_RMAX)) &&
	    !sp->per_channel && !HAS(sp, CK_AXIS))
		per_channel = 0;	/* per-tensor values: per tensor */
	if (sp && sp->per_channel)
		per_channel = 1;
	if (!per_channel || w->rank == 0)
		return decide1(&w->q, sp, o, w->min, w->max, "minmax", e);

	if (axis < 0 || axis >= w->rank)
		return err_set(e, "no channel axis (give axis in the recipe)");
	n = sp && sp->per_channel ? sp->n : w->nch;
	if (axis != w->axis && !(sp && sp->per_channel &&
	    (HAS(sp, CK_SCALE) || (HAS(sp, CK_RMIN) && HAS(sp, CK_RMAX)))))
		return err_set(e, "axis %d: the stream has channel ranges along "
		    "axis %d only", axis, w->axis);
	if (w->dims[axis] >= 0 && (int64_t)n != w->dims[axis])
		return err_set(e, "%zu channel values for %lld channels", n,
		    (long long)w->dims[axis]);
	if (qp_alloc(&w->q, n, e) < 0)
		return -1;
	w->q.type = o.type;
	w->q.axis = axis;
	w->q.method = "minmax";
	for (size_t c = 0; c < n; c++) {
		float lo = c < w->nch ? w->cmin[c] : 0;
		float hi = c < w->nch ? w->cmax[c] : 0;

		if (sp && HAS(sp, CK_SCALE)) {
			int64_t lo64, hi64;
			int64_t z = sp->zero_point[sp->per_channel ? c : 0];

			qparams_type_limits(o.type, &lo64, &hi64);
			if (z < lo64 || z > hi64)
				return err_set(e, "zero point %lld does not fit %s",
				    (long long)z, qparams_type_name(o.type));
			w->q.scale[c] = sp->scale[sp->per_channel ? c : 0];
			w->q.zp[c] = (int32_t)z;
			w->q.method = "fixed";
			w->q.fixed = 1;
			continue;
		}
		if (sp && HAS(sp, CK_RMIN))
			lo = sp->rmin[sp->per_channel ? c : 0];
		if (sp && HAS(sp, CK_RMAX))
			hi = sp->rmax[sp->per_channel ? c : 0];
		w->q.rmin[c] = lo;
		w->q.rmax[c] = hi;
		if (qparams_compute(&o, lo, hi, &w->q.scale[c], &w->q.zp[c],
		    e) < 0)
			return err_prefix(e, "channel %zu", c);
	}
	if (w->q.fixed) {
		free(w->q.rmin);
		free(w->q.rmax);
		w->q.rmin = w->q.rmax = NULL;
	}
	w->q.done = 1;
	return 0;
}

static struct wb *
wb_get(struct run *r, const char *name)
{
	int i;

	return strmap_get(r->wb_ix, name, &i) ? &r->wbs[i] : NULL;
}

/* The bias's |max| per channel (nb of them) or over all of it. */
static float *
bias_absmax(const struct wb *b, size_t *nb)
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

static int
decide_biases(struct run *r, struct err *e)
{
	/* First raise weight scales for every bias, then compute. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < r->nwbs; i++) {
			struct wb *b = &r->wbs[i], *w;
			struct act *a;
			const struct qp *aq;
			float *babs;
			size_t nb, nw;
			int rc;

			if (!b->is_bias || !b->in_scope || b->ov)
				continue;
			if ((a = act_get(r, b->input, 0, NULL)) == NULL ||
			    !a->q.done || (w = wb_get(r, b->weight)) == NULL ||
			    !w->q.done)
				continue;	/* stays float, as in ORT */
			aq = act_for(a, b->node);
			if ((babs = bias_absmax(b, &nb)) == NULL)
				return err_nomem(e);
			nw = w->q.n;
			if (pass == 0) {
				rc = 0;
				if (r->s.bias_adjust && !w->q.fixed)
					rc = qparams_bias_adjust(aq->scale[0],
					    w->q.scale, nw, babs, nb, b->beta, e);
				free(babs);
				if (rc < 0)
					return err_prefix(e, "bias %s", b->name);
				w->q.adjusted += rc;
				continue;
			}
			free(babs);
			if (qp_alloc(&b->q, nw > 1 && nb > 1 ? nb : 1, e) < 0)
				return -1;
			if (qparams_bias_scale(aq->scale[0], w->q.scale, nw, nb,
			    b->beta, b->q.scale, e) < 0)
				return err_prefix(e, "bias %s", b->name);
			b->q.type = DT_INT32;
			b->q.axis = nw > 1 && nb > 1 ? b->axis : -1;
			b->q.method = NULL;
			free(b->q.rmin);
			free(b->q.rmax);
			b->q.rmin = b->q.rmax = NULL;
			b->q.done = 1;
		}
	return 0;
}

static int
decide_wbs(struct run *r, struct err *e)
{
	for (size_t i = 0; i < r->nwbs; i++) {
		struct wb *w = &r->wbs[i];

		w->ov = config_find(r->cfg, w->name);
		/* A bias with a recipe entry is a weight, as in ORT. */
		if (!w->in_scope || (w->is_bias && !w->ov))
			continue;
		if (decide_weight(r, w, e) < 0)
			return err_prefix(e, "%s %s", w->is_bias ? "bias" :
			    "weight", w->name);
	}
	return decide_biases(r, e);
}

/*
 * Bound `slot` of a Clip: an absent input is no bound (v = +-inf), a
 * constant of one element its value; -1 for anything else (a bound
 * computed at run time).
 */
static int
clip_bound(struct run *r, const struct node *n, size_t slot, float *v)
{
	const struct wb *w;
	int64_t count = 1;

	if (slot >= n->nin || !*n->in[slot]) {
		*v = slot == 1 ? -INFINITY : INFINITY;
		return 0;
	}
	if ((w = wb_get(r, n->in[slot])) == NULL || w->is_bias || w->empty)
		return -1;
	for (int k = 0; k < w->rank; k++)
		count *= w->dims[k];
	if (count != 1 || w->min != w->max)
		return -1;
	*v = w->min;
	return 0;
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
decide_folds(struct run *r, struct err *e)
{
	if (r->o->keep_acts || r->s.act_sym || !r->have_nodes)
		return 0;
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct node *n = &r->nodes[i], *p;
		struct act *in, *out;
		int pi, c = 0, is_clip;
		float lo = 0, hi = INFINITY;
		int64_t tlo, thi;

		if (!n->selected || n->domain || n->nin < 1 || n->nout != 1)
			continue;
		is_clip = strcmp(n->op, "Clip") == 0;
		if (strcmp(n->op, "Relu") != 0 && !is_clip)
			continue;
		if (is_clip && (n->nin < 2 || clip_bound(r, n, 1, &lo) < 0 ||
		    clip_bound(r, n, 2, &hi) < 0))
			continue;
		if ((out = act_get(r, n->out[0], 0, NULL)) == NULL ||
		    !out->q.done || out->q.n != 1 ||
		    (in = act_get(r, n->in[0], 0, NULL)) == NULL ||
		    !in->q.done || in->has_conv || in->folded)
			continue;
		strmap_get(r->nconsumers, n->in[0], &c);
		if (c != 1 || !strmap_get(r->prod_ix, n->in[0], &pi))
			continue;
		p = &r->nodes[pi];
		if (!p->selected || shares_params(p->op))
			continue;
		if (qparams_type_limits(out->q.type, &tlo, &thi) < 0 ||
		    qparams_quantize(lo, out->q.scale[0], out->q.zp[0],
		    out->q.type) != tlo ||
		    qparams_quantize(hi, out->q.scale[0], out->q.zp[0],
		    out->q.type) != thi)
			continue;
		if (grow((void **)&r->folds, &r->capfolds, r->nfolds,
		    sizeof *r->folds) < 0)
			return err_nomem(e);
		r->folds[r->nfolds][0] = (int)i;
		r->folds[r->nfolds][1] = pi;
		r->nfolds++;
		in->folded = 1;
		note(r, "%s: folded into %s: %s's quantization clamps",
		    n->name, p->name, out->name);
	}
	return 0;
}

/* Writing. */

static void
put_qp(struct stream_writer *sw, const char *rectype, const char *name,
    const char *role, const struct qp *q)
{
	int64_t *zp = NULL;

	stream_rec_start(sw, rectype, name);
	if (role)
		stream_put_raw(sw, "role", role);
	stream_put_raw(sw, "type", q->type == DT_INT32 ? "int32" :
	    qparams_type_name(q->type));
	if (q->axis >= 0)
		stream_put_int(sw, "axis", q->axis);
	if (q->n == 1 && q->axis < 0) {
		stream_put_float(sw, "scale", q->scale[0]);
		stream_put_int(sw, "zp", q->zp[0]);
	} else {
		if ((zp = malloc(q->n * sizeof *zp)) != NULL)
			for (size_t i = 0; i < q->n; i++)
				zp[i] = q->zp[i];
		stream_put_floats(sw, "scale", q->scale, q->n);
		if (zp)
			stream_put_ints(sw, "zp", zp, q->n);
		free(zp);
	}
	if (q->method)
		stream_put_raw(sw, "method", q->method);
	if (q->from)
		stream_put_name(sw, "from", q->from);
	if (q->rmin && q->rmax && q->method && strcmp(q->method, "shared")) {
		if (q->n == 1 && q->axis < 0) {
			stream_put_float(sw, "rmin", q->rmin[0]);
			stream_put_float(sw, "rmax", q->rmax[0]);
		} else {
			stream_put_floats(sw, "rmin", q->rmin, q->n);
			stream_put_floats(sw, "rmax", q->rmax, q->n);
		}
	}
}

static int
write_stream(struct run *r, FILE *fp, const char *name, struct err *e)
{
	struct stream_writer *sw = stream_writer_new(fp, name);

	if (sw == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < r->nheaders; i++)
		stream_put_header(sw, r->headers[i]);
	stream_put_prog(sw, PROG, ONNXQ_VERSION, r->o->argc, r->o->argv);
	for (size_t i = 0; i < r->nrecs; i++)
		stream_put_rec(sw, r->recs[i]);
	for (size_t i = 0; i < r->nacts; i++) {
		const struct act *a = &r->acts[i];

		/* A folded Relu's input is gone from the model. */
		if (!a->q.done || a->folded)
			continue;
		put_qp(sw, "qparam", a->name, "act", &a->q);
		stream_rec_done(sw);
		if (a->has_conv) {
			put_qp(sw, "convert", a->name, NULL, &a->conv);
			if (a->ov->recv_nodes)
				stream_put_names(sw, "recv",
				    (const char *const *)a->ov->recv_nodes,
				    a->ov->nrecv);
			stream_rec_done(sw);
		}
	}
	for (size_t i = 0; i < r->nwbs; i++) {
		const struct wb *w = &r->wbs[i];

		if (!w->q.done)
			continue;
		put_qp(sw, "qparam", w->name, w->is_bias && !w->ov ? "bias" :
		    "weight", &w->q);
		if (w->q.adjusted)
			stream_put_int(sw, "adjusted", w->q.adjusted);
		if (w->is_bias && !w->ov) {
			stream_put_name(sw, "input", w->input);
			stream_put_name(sw, "weight", w->weight);
		}
		stream_rec_done(sw);
	}
	for (size_t i = 0; i < r->nfolds; i++) {
		stream_rec_start(sw, "fold", r->nodes[r->folds[i][0]].name);
		stream_put_name(sw, "into", r->nodes[r->folds[i][1]].name);
		stream_rec_done(sw);
	}
	if (stream_write_end(sw, e) < 0) {
		stream_writer_free(sw);
		return -1;
	}
	stream_writer_free(sw);
	return 0;
}

static void
run_release(struct run *r)
{
	for (size_t i = 0; i < r->nrecs; i++)
		stream_rec_free(r->recs[i]);
	free(r->recs);
	for (size_t i = 0; i < r->nheaders; i++)
		free(r->headers[i]);
	free(r->headers);
	for (size_t i = 0; i < r->nnodes; i++) {
		free(r->nodes[i].domain);
		free(r->nodes[i].in);
		free(r->nodes[i].out);
	}
	free(r->nodes);
	for (size_t i = 0; i < r->nacts; i++) {
		tstats_release(&r->acts[i].ts);
		qp_release(&r->acts[i].q);
		qp_release(&r->acts[i].conv);
	}
	free(r->acts);
	for (size_t i = 0; i < r->nwbs; i++) {
		struct wb *w = &r->wbs[i];

		free(w->node);
		free(w->op);
		free(w->input);
		free(w->weight);
		free(w->cmin);
		free(w->cmax);
		qp_release(&w->q);
	}
	free(r->wbs);
	for (int k = 0; k < 4; k++)
		if (r->sel.v[k] != default_ops)
			free(r->sel.v[k]);
	strmap_free(r->node_ix);
	strmap_free(r->act_ix);
	strmap_free(r->wb_ix);
	strmap_free(r->nconsumers);
	strmap_free(r->param_ix);
	strmap_free(r->prod_ix);
	free(r->folds);
	config_free(r->cfg);
}

static int
run(struct opts *o)
{
	struct run r;
	struct config_msgs msgs = { 0 };
	struct stream_reader *rd = NULL;
	struct outfile *of = NULL;
	struct err e = { "" };
	const struct config_list *cl[4] = { NULL, NULL, NULL, NULL };
	int rc = 1;

	memset(&r, 0, sizeof r);
	r.o = o;
	if (!(r.node_ix = strmap_new()) || !(r.act_ix = strmap_new()) ||
	    !(r.wb_ix = strmap_new()) || !(r.nconsumers = strmap_new()) ||
	    !(r.param_ix = strmap_new()) || !(r.prod_ix = strmap_new())) {
		err_nomem(&e);
		goto fail;
	}
	settings_default(&r.s);
	if (o->config) {
		if ((r.cfg = config_load(o->config, &msgs, &e)) == NULL) {
			if (msgs.n)
				print_msgs(&msgs, o->config);
			else
				cli_warn("%s", e.msg);
			config_msgs_release(&msgs);
			goto out;
		}
		settings_from_config(&r.s, &r.cfg->g);
	}
	settings_apply(&r.s, &o->cli, o->cli_set);
	r.method_default = !(o->cli_set & (1u << CG_METHOD)) &&
	    !(r.cfg && (r.cfg->g.set & (1u << CG_METHOD)));

	/* Selections: the command line's lists replace the recipe's. */
	if (r.cfg) {
		cl[0] = &r.cfg->nodes_include;
		cl[1] = &r.cfg->nodes_exclude;
		cl[2] = &r.cfg->ops_include;
		cl[3] = &r.cfg->ops_exclude;
	}
	for (int k = 0; k < 4; k++) {
		if (o->lists[k]) {
			r.sel.v[k] = split_list(o->lists[k], &r.sel.n[k]);
		} else if (r.cfg && cl[k]->n) {
			if ((r.sel.v[k] = calloc(cl[k]->n, sizeof *r.sel.v[k])))
				for (size_t i = 0; i < cl[k]->n; i++)
					r.sel.v[k][i] = cl[k]->v[i];
			r.sel.n[k] = cl[k]->n;
		}
		if ((o->lists[k] || (r.cfg && cl[k]->n)) && !r.sel.v[k]) {
			err_nomem(&e);
			goto fail;
		}
	}

	/*
	 * Without an op-type or node list of its own, a run quantizes the
	 * operators that carry weights (default_ops): measured on PaddleOCR,
	 * the noise of quantizing everything else costs more than it saves.
	 */
	if (!o->all_ops && r.sel.n[2] == 0 && r.sel.n[0] == 0) {
		r.sel.v[2] = default_ops;
		r.sel.n[2] = sizeof default_ops / sizeof default_ops[0];
		r.sel_default = 1;
	}

	if ((rd = stream_open(o->in ? o->in : "-", &e)) == NULL)
		goto fail;
	if (read_stream(&r, rd, &e) < 0)
		goto fail;
	if (r.cfg) {
		struct config_world w = { &r, world_tensor, world_node,
		    world_consumes, r.s.act_type, r.s.w_type };

		if (config_validate(r.cfg, &w, &msgs) > 0) {
			print_msgs(&msgs, o->config);
			config_msgs_release(&msgs);
			goto out;
		}
	}
	/* A stream without node records cannot be selected by op type:
	 * without a list asked for, everything is quantized, as before. */
	if (r.sel_default && !r.have_nodes) {
		r.sel.v[2] = NULL;
		r.sel.n[2] = 0;
		r.sel_default = 0;
	}
	if ((r.sel.n[0] || r.sel.n[1] || r.sel.n[2] || r.sel.n[3]) &&
	    !r.have_nodes) {
		err_set(&e, "%s: node and op-type selections need node records",
		    stream_name(rd));
		goto fail;
	}
	select_nodes(&r);
	if (decide_acts(&r, &e) < 0 || decide_wbs(&r, &e) < 0 ||
	    decide_folds(&r, &e) < 0)
		goto fail;

	if ((of = outfile_open(o->out ? o->out : "-", &e)) == NULL)
		goto fail;
	if (write_stream(&r, outfile_fp(of), o->out ? o->out : "<stdout>",
	    &e) < 0)
		goto fail;
	if (outfile_commit(of, &e) < 0) {
		of = NULL;
		goto fail;
	}
	of = NULL;
	rc = 0;
	goto out;
fail:
	cli_warn("%s", e.msg);
out:
	outfile_abort(of);
	stream_reader_free(rd);
	run_release(&r);
	return rc;
}

enum {
	OPT_PERCENTILE = 256, OPT_PER_SIDE, OPT_ENTROPY_BINS, OPT_MAVG,
	OPT_ASYM, OPT_ASYM_A, OPT_SYM_W, OPT_ASYM_W, OPT_PER_CHANNEL,
	OPT_PER_TENSOR, OPT_REDUCE, OPT_POW2, OPT_MRR, OPT_NO_ADJUST,
	OPT_INC_NODES, OPT_EXC_NODES, OPT_INC_OPS, OPT_EXC_OPS, OPT_HELP,
	OPT_VERSION, OPT_KEEP_ACTS, OPT_ALL_OPS,
};

static const struct option longopts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "activation-type", required_argument, NULL, 'a' },
	{ "weight-type", required_argument, NULL, 'w' },
	{ "method", required_argument, NULL, 'm' },
	{ "output", required_argument, NULL, 'o' },
	{ "percentile", required_argument, NULL, OPT_PERCENTILE },
	{ "percentile-per-side", no_argument, NULL, OPT_PER_SIDE },
	{ "entropy-bins", required_argument, NULL, OPT_ENTROPY_BINS },
	{ "moving-average", no_argument, NULL, OPT_MAVG },
	{ "activation-symmetric", no_argument, NULL, OPT_ASYM },
	{ "activation-asymmetric", no_argument, NULL, OPT_ASYM_A },
	{ "weight-symmetric", no_argument, NULL, OPT_SYM_W },
	{ "weight-asymmetric", no_argument, NULL, OPT_ASYM_W },
	{ "per-channel", no_argument, NULL, OPT_PER_CHANNEL },
	{ "per-tensor", no_argument, NULL, OPT_PER_TENSOR },
	{ "reduce-range", no_argument, NULL, OPT_REDUCE },
	{ "power-of-two", no_argument, NULL, OPT_POW2 },
	{ "min-real-range", required_argument, NULL, OPT_MRR },
	{ "no-bias-weight-adjust", no_argument, NULL, OPT_NO_ADJUST },
	{ "include-nodes", required_argument, NULL, OPT_INC_NODES },
	{ "exclude-nodes", required_argument, NULL, OPT_EXC_NODES },
	{ "include-ops", required_argument, NULL, OPT_INC_OPS },
	{ "exclude-ops", required_argument, NULL, OPT_EXC_OPS },
	{ "keep-activations", no_argument, NULL, OPT_KEEP_ACTS },
	{ "all-ops", no_argument, NULL, OPT_ALL_OPS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int
parse_number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && isfinite(*v) ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct settings *c = &o.cli;
	double d;
	int ch;

	cli_init(PROG, usage_text);
	memset(&o, 0, sizeof o);
	settings_default(c);
	o.argc = argc;
	o.argv = argv;
#define SET(bit) (o.cli_set |= 1u << (bit))
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":a:c:m:o:vw:", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'c':
			o.config = optarg;
			break;
		case 'a':
			if ((c->act_type = qparams_type_parse(optarg)) ==
			    DT_UNDEFINED)
				return cli_usage_error("unknown type '%s'", optarg);
			SET(CG_ACT_TYPE);
			break;
		case 'w':
			if ((c->w_type = qparams_type_parse(optarg)) ==
			    DT_UNDEFINED)
				return cli_usage_error("unknown type '%s'", optarg);
			SET(CG_W_TYPE);
			break;
		case 'm':
			if ((c->method = rangesel_method_parse(optarg)) < 0)
				return cli_usage_error("unknown method '%s'", optarg);
			SET(CG_METHOD);
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case OPT_ALL_OPS:
			o.all_ops = 1;
			break;
		case OPT_KEEP_ACTS:
			o.keep_acts = 1;
			break;
		case OPT_PERCENTILE:
			if (parse_number(optarg, &d) < 0 || !(d > 0 && d <= 100))
				return cli_usage_error("percentile '%s' is not in "
				    "(0, 100]", optarg);
			c->percentile = d;
			SET(CG_PERCENTILE);
			break;
		case OPT_PER_SIDE:
			c->per_side = 1;
			SET(CG_PER_SIDE);
			break;
		case OPT_ENTROPY_BINS:
			if (parse_number(optarg, &d) < 0 || d != floor(d) ||
			    d < 16 || d > RANGESEL_ENTROPY_BINS_MAX)
				return cli_usage_error("entropy bins '%s' is not in "
				    "16..%d", optarg, RANGESEL_ENTROPY_BINS_MAX);
			c->entropy_bins = (int)d;
			SET(CG_ENTROPY_BINS);
			break;
		case OPT_MAVG:
			c->mavg = 1;
			SET(CG_MOVING_AVERAGE);
			break;
		case OPT_ASYM:
		case OPT_ASYM_A:
			c->act_sym = ch == OPT_ASYM;
			SET(CG_ACT_SYMMETRIC);
			break;
		case OPT_SYM_W:
		case OPT_ASYM_W:
			c->w_sym = ch == OPT_SYM_W;
			SET(CG_W_SYMMETRIC);
			break;
		case OPT_PER_CHANNEL:
		case OPT_PER_TENSOR:
			c->per_channel = ch == OPT_PER_CHANNEL;
			SET(CG_PER_CHANNEL);
			break;
		case OPT_REDUCE:
			c->w_rr = 1;
			SET(CG_W_REDUCE_RANGE);
			break;
		case OPT_POW2:
			c->act_pow2 = c->w_pow2 = 1;
			SET(CG_ACT_POW2);
			SET(CG_W_POW2);
			break;
		case OPT_MRR:
			if (parse_number(optarg, &d) < 0 || d < 0 ||
			    d > 3.4e38)
				return cli_usage_error("minimum real range '%s' is "
				    "not a number >= 0", optarg);
			c->min_real_range = d;
			SET(CG_MIN_REAL_RANGE);
			break;
		case OPT_NO_ADJUST:
			c->bias_adjust = 0;
			SET(CG_BIAS_ADJUST);
			break;
		case OPT_INC_NODES:
		case OPT_EXC_NODES:
		case OPT_INC_OPS:
		case OPT_EXC_OPS:
			o.lists[ch - OPT_INC_NODES] = optarg;
			break;
		case OPT_HELP:
			cli_usage(stdout);
			return fclose(stdout) == 0 ? 0 : 1;
		case OPT_VERSION:
			printf("%s %s\n", PROG, ONNXQ_VERSION);
			return fclose(stdout) == 0 ? 0 : 1;
		default:
			return cli_bad_option(ch, argv, longopts);
		}
	}
#undef SET
	if (argc - optind > 1)
		return cli_usage_error("too many arguments");
	if (argc - optind == 1)
		o.in = argv[optind];
	outfile_cleanup_on_signals();
	return run(&o);
}
