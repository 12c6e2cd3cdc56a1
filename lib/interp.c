/*
 * interp: run a model's main graph. See interp.h.
 *
 * Every value of the graph gets a slot (its index in the graph index).
 * During a run, slot s lives in one of three places: the caller's input
 * tensor, the decoded constant, or ip->vals[s] for node outputs; ptr[s]
 * points at whichever it is. Each step knows which slots nobody reads
 * after it, and releases them. Constant nodes are run once, when the
 * graph is planned (models exported from Paddle hold all their weights
 * in them); their steps only show the kept value to the observer.
 *
 * A subgraph is a struct interp of its own, planned with the node that
 * owns it and linked to its parent: its outer-scope names are slots
 * whose ptr is the parent's at each run.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "foldcache.h"
#include "fuse.h"
#include "gemm.h"
#include "graph.h"
#include "interp.h"
#include "ops.h"
#include "strmap.h"
#include "util.h"

#define OPSET_MIN 1	/* opsets below 7 run where kernels know the old forms */
#define OPSET_MAX 21
/* Leave room in the error message for the "... and N more" tail. */
#define MISSING_MSG_MAX (ERR_MSG_MAX - 64)

struct step {
	const Onnx__NodeProto *node;
	int index;			/* in graph.node, for messages */
	const struct op_def *def;
	int opset;
	int nin, nout;
	int *in;			/* slot per input, -1 when absent */
	int *out;			/* slot per output, -1 for "" */
	int *release;			/* slots to free after this step */
	int nrelease, release_cap;
	void *state;			/* kernel's per-node state */
	const struct tensor **args;	/* scratch for op_ctx.in */
	struct tensor *res;		/* scratch for op_ctx.out */
	struct interp **graphs;		/* per attribute: its subgraph, planned */
	int widen;			/* runs in float32: see run_widened */
	int folded;			/* run at plan time: a Constant, or
					   opts.fold_constant_nodes */
	/*
	 * The first step of a chain of elementwise nodes (fuse.h) runs them
	 * all, input chain_xin, when nothing observes; the others then find
	 * their work done (chain_done) and only release.
	 */
	struct fuse_link *chain;
	int *chain_steps;		/* the chain's steps, this one first */
	int nchain, chain_xin, chain_krank;
	int chain_done;
	int chain_seen;			/* its output seen block by block */
};

struct interp {
	const struct model *m;
	struct graph *gr;
	int nvalues;
	struct tensor *consts;		/* initializers, Constant outputs */
	struct tensor *vals;		/* node outputs during a run, by slot */
	const struct tensor **ptr;	/* where each slot lives during a run */
	unsigned char *is_const;
	struct model_map *maps;		/* consts mapped (model.h) */
	struct step *steps;
	int nsteps;
	int ninputs;
	int *input_slot;
	const Onnx__ValueInfoProto **input_info;
	int noutputs;
	int *output_slot;
	int threads;
	interp_observe_fn observe;	/* NULL in subgraphs */
	void *observe_ctx;
	const struct interp_chain_observer *chain_obs;	/* or NULL */
	const struct tensor **in_args;	/* interp_run's inputs, by pointer */
	/* interp_run_skip(), during the run; skip NULL otherwise */
	const unsigned char *skip;
	interp_cached_fn cached;
	void *cached_ctx;
	/* interp_run_keep(), during the run; NULL otherwise */
	interp_keep_fn keep;
	void *keep_ctx;
	struct op_scratch scratch;	/* the kernels' (op_ctx.scratch) */
	struct foldcache *fold_cache;	/* opts.fold_cache (op_ctx's) */
	/*
	 * A subgraph (If branch, Loop or Scan body) is planned like the main
	 * graph. The names it reads from enclosing graphs become extra inputs
	 * of scoped (a shallow copy of its GraphProto), bound at each run to
	 * the parent's tensors: outer_slot[i] here is outer_from[i] there.
	 */
	const struct interp *parent;
	int nouter;
	int *outer_slot;
	int *outer_from;
	Onnx__GraphProto scoped;
	Onnx__ValueInfoProto **scoped_input;
	Onnx__ValueInfoProto *outer_info;
};

/* "node NAME (Op)", or "node #I (Op)" for an unnamed node, as graph.c says it. */
static const char *
node_label(const Onnx__NodeProto *n, int index, char *buf, size_t size)
{
	char name[160], op[64];

	str_clip(n->op_type, op, sizeof op);
	if (n->name && n->name[0])
		snprintf(buf, size, "node %s (%s)", str_clip(n->name, name,
		    sizeof name), op);
	else
		snprintf(buf, size, "node #%d (%s)", index, op);
	return buf;
}

static const char *
domain_of(const Onnx__NodeProto *n)
{
	return n->domain && strcmp(n->domain, "ai.onnx") != 0 ? n->domain : "";
}

/* Describe what a non-tensor value type is, NULL for a tensor. */
static const char *
non_tensor_kind(const Onnx__ValueInfoProto *vi)
{
	if (!vi || !vi->type)
		return NULL;
	switch (vi->type->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
	case ONNX__TYPE_PROTO__VALUE__NOT_SET:
		return NULL;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		return "a sequence";
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
		return "a map";
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		return "an optional";
	case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
		return "a sparse tensor";
	default:
		return "not a tensor";
	}
}

static int
check_kernels(struct interp *ip, Onnx__GraphProto *g, struct err *e)
{
	char *msg = NULL, label[512];
	size_t len = 0;
	int missing = 0, listed = 0;

	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		size_t l;

		if (ops_find(domain_of(n), n->op_type))
			continue;
		missing++;
		node_label(n, (int)i, label, sizeof label);
		if (n->domain && *domain_of(n)) {
			/* Name the domain too: com.microsoft ops are common. */
			char dom[128];
			size_t k = strlen(label) - 1;

			snprintf(label + k, sizeof label - k, " in %s)",
			    str_clip(n->domain, dom, sizeof dom));
		}
		l = strlen(label);
		if (len + l + 2 > MISSING_MSG_MAX)
			continue;
		char *p = realloc(msg, len + l + 3);
		if (!p) {
			free(msg);
			return err_nomem(e);
		}
		msg = p;
		if (len)
			memcpy(msg + len, ", ", 2), len += 2;
		memcpy(msg + len, label, l + 1);
		len += l;
		listed++;
	}
	(void)ip;
	if (!missing)
		return 0;
	if (listed < missing)
		err_set(e, "unsupported operators: %s, and %d more", msg,
		    missing - listed);
	else
		err_set(e, "unsupported operators: %s", msg);
	free(msg);
	return -1;
}

static int
check_opsets(const struct model *m, Onnx__GraphProto *g, struct err *e)
{
	int v = model_opset(m, "");

	for (size_t i = 0; i < g->n_node; i++)
		if (!*domain_of(g->node[i]) && v == 0)
			return err_set(e, "the model imports no opset for the "
			    "default domain");
	if (v && (v < OPSET_MIN || v > OPSET_MAX))
		return err_set(e, "opset %d of the default domain is not supported "
		    "(%d to %d are)", v, OPSET_MIN, OPSET_MAX);
	return 0;
}

static int
slot_of(const struct strmap *map, const char *name)
{
	int s;

	if (!name || !name[0] || !strmap_get(map, name, &s))
		return -1;
	return s;
}

static struct interp *plan_graph(const struct model *m, Onnx__GraphProto *g,
    const struct interp *parent, const struct strmap *pmap, int threads,
    struct err *e);

/* Plan the graph attributes of st's node once, with the node. */
static int
plan_subgraphs(struct interp *ip, struct step *st, const struct strmap *map,
    struct err *e)
{
	const Onnx__NodeProto *nd = st->node;
	char label[512], name[160];

	for (size_t i = 0; i < nd->n_attribute; i++) {
		const Onnx__AttributeProto *a = nd->attribute[i];

		if (!a->g)
			continue;
		if (!st->graphs && !(st->graphs = calloc(nd->n_attribute,
		    sizeof *st->graphs)))
			return err_nomem(e);
		if (!(st->graphs[i] = plan_graph(ip->m, a->g, ip, map,
		    ip->threads, e)))
			return err_prefix(e, "%s: %s", node_label(nd, st->index,
			    label, sizeof label), str_clip(a->name, name,
			    sizeof name));
	}
	return 0;
}

static int
plan(struct interp *ip, Onnx__GraphProto *g, const struct strmap *map,
    struct err *e)
{
	const int *topo = graph_topo(ip->gr);
	int *pos, *last, n = (int)g->n_node, s;
	char label[512];

	if (!(ip->steps = calloc(n ? (size_t)n : 1, sizeof *ip->steps)) ||
	    !(pos = malloc((n ? (size_t)n : 1) * sizeof *pos)))
		return err_nomem(e);
	ip->nsteps = n;
	for (int k = 0; k < n; k++)
		pos[topo[k]] = k;
	if (!(last = malloc((size_t)ip->nvalues * sizeof *last + 1))) {
		free(pos);
		return err_nomem(e);
	}
	/* The last step reading each value; -1 when nothing reads it. */
	for (int v = 0; v < ip->nvalues; v++) {
		struct graph_value *gv = graph_value_at(ip->gr, v);

		last[v] = -1;
		for (int c = 0; c < gv->nconsumers; c++)
			if (pos[gv->consumers[c]] > last[v])
				last[v] = pos[gv->consumers[c]];
	}
	for (int k = 0; k < n; k++) {
		struct step *st = &ip->steps[k];
		const Onnx__NodeProto *nd = g->node[topo[k]];

		st->node = nd;
		st->index = topo[k];
		st->def = ops_find(domain_of(nd), nd->op_type);
		st->opset = model_opset(ip->m, domain_of(nd));
		st->nin = (int)nd->n_input;
		st->nout = (int)nd->n_output;
		st->folded = st->nout == 1 && (s = slot_of(map,
		    nd->output[0])) >= 0 && ip->is_const[s] &&
		    graph_value_at(ip->gr, s)->kind == VALUE_CONSTANT;
		st->in = malloc((st->nin + 1) * sizeof *st->in);
		st->out = malloc((st->nout + 1) * sizeof *st->out);
		st->args = malloc((st->nin + 1) * sizeof *st->args);
		st->res = calloc(st->nout + 1, sizeof *st->res);
		if (!st->in || !st->out || !st->args || !st->res)
			goto nomem;
		for (int j = 0; j < st->nin; j++) {
			st->in[j] = slot_of(map, nd->input[j]);
			if (nd->input[j][0] && st->in[j] < 0) {
				err_set(e, "%s: input %d (%s) is not defined",
				    node_label(nd, st->index, label, sizeof label), j,
				    nd->input[j]);
				goto fail;
			}
		}
		for (int j = 0; j < st->nout; j++)
			st->out[j] = slot_of(map, nd->output[j]);
		if (plan_subgraphs(ip, st, map, e) < 0)
			goto fail;
		/* Values read only by its subgraphs may be released here too. */
		st->release_cap = st->nin + st->nout;
		for (size_t i = 0; st->graphs && i < nd->n_attribute; i++)
			if (st->graphs[i])
				st->release_cap += st->graphs[i]->nouter;
		st->release = malloc((st->release_cap + 1) * sizeof *st->release);
		if (!st->release)
			goto nomem;
	}
	/*
	 * Release node outputs after their last reader; those nobody reads
	 * right after they are made. Graph outputs stay until the end;
	 * graph inputs and constants are not ours to release.
	 */
	for (int v = 0; v < ip->nvalues; v++) {
		struct graph_value *gv = graph_value_at(ip->gr, v);
		struct step *st;
		int at;

		if (gv->producer < 0 || gv->is_output || ip->is_const[v])
			continue;
		at = last[v] >= 0 ? last[v] : pos[gv->producer];
		if (at < pos[gv->producer]) {
			err_set(e, "value %s is read before it is produced", gv->name);
			goto fail;
		}
		st = &ip->steps[at];
		/* A value listed twice as one node's input is released once. */
		int dup = 0;
		for (int r = 0; r < st->nrelease; r++)
			dup |= st->release[r] == v;
		if (!dup && st->nrelease < st->release_cap)
			st->release[st->nrelease++] = v;
	}
	free(pos);
	free(last);
	return 0;
nomem:
	err_nomem(e);
fail:
	free(pos);
	free(last);
	return -1;
}

/* The graph's own inputs (the first nformal), then its outer names. */
static int
setup_io(struct interp *ip, Onnx__GraphProto *g, size_t nformal,
    const struct strmap *map, const struct strmap *pmap, struct err *e)
{
	const char *kind;

	ip->input_slot = malloc((g->n_input + 1) * sizeof *ip->input_slot);
	ip->input_info = malloc((g->n_input + 1) * sizeof *ip->input_info);
	ip->output_slot = malloc((g->n_output + 1) * sizeof *ip->output_slot);
	ip->in_args = malloc((g->n_input + 1) * sizeof *ip->in_args);
	ip->outer_slot = malloc((g->n_input + 1) * sizeof *ip->outer_slot);
	ip->outer_from = malloc((g->n_input + 1) * sizeof *ip->outer_from);
	if (!ip->input_slot || !ip->input_info || !ip->output_slot ||
	    !ip->in_args || !ip->outer_slot || !ip->outer_from)
		return err_nomem(e);
	for (size_t i = 0; i < g->n_input; i++) {
		int s = slot_of(map, g->input[i]->name);

		if (s < 0 || graph_value_at(ip->gr, s)->kind != VALUE_INPUT)
			continue;
		if (i >= nformal) {
			ip->outer_slot[ip->nouter] = s;
			ip->outer_from[ip->nouter++] = slot_of(pmap,
			    g->input[i]->name);
			continue;
		}
		if ((kind = non_tensor_kind(g->input[i])))
			return err_set(e, "input %s: type is %s, only tensors are "
			    "supported", g->input[i]->name, kind);
		ip->input_slot[ip->ninputs] = s;
		ip->input_info[ip->ninputs++] = g->input[i];
	}
	for (size_t i = 0; i < g->n_output; i++) {
		int s = slot_of(map, g->output[i]->name);

		if (s < 0)
			return err_set(e, "output %s is not produced by the graph",
			    g->output[i]->name);
		if ((kind = non_tensor_kind(g->output[i])))
			return err_set(e, "output %s: type is %s, only tensors are "
			    "supported", g->output[i]->name, kind);
		ip->output_slot[ip->noutputs++] = s;
	}
	return 0;
}

static int
decode_constants(struct interp *ip, struct err *e)
{
	for (int v = 0; v < ip->nvalues; v++) {
		struct graph_value *gv = graph_value_at(ip->gr, v);

		if (gv->kind != VALUE_INITIALIZER)
			continue;
		ip->is_const[v] = 1;
		/* Unused initializers are not decoded: saves memory and time. */
		if (gv->nconsumers == 0 && !gv->is_output)
			continue;
		/* the message names the model and the initializer */
		if (model_tensor_map(ip->m, gv->init, &ip->consts[v],
		    &ip->maps[v], e) < 0)
			return -1;
	}
	return 0;
}

/*
 * A Constant whose one attribute is a tensor "value" in raw_data (the
 * weights of models exported from Paddle): its value is lent from the
 * model as an initializer's is (model.h), not copied. 0 when done.
 */
static int
lend_constant(struct interp *ip, const Onnx__NodeProto *n, int v)
{
	const Onnx__AttributeProto *a = n->n_attribute == 1 ?
	    n->attribute[0] : NULL;
	struct err scratch;

	if (!a || !a->name || strcmp(a->name, "value") != 0 || !a->t ||
	    !a->t->has_raw_data || a->t->n_external_data > 0 ||
	    (a->t->has_data_location && a->t->data_location ==
	    ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
		return -1;
	if (model_tensor_map(ip->m, a->t, &ip->consts[v], &ip->maps[v],
	    &scratch) < 0 || !ip->maps[v].lent) {
		model_map_release(&ip->maps[v], &ip->consts[v]);
		return -1;
	}
	ip->is_const[v] = 1;
	return 0;
}

/*
 * Run each Constant node now and keep its value with the initializers:
 * it is the same at every run. One whose kernel fails is left to run
 * (and fail) at run time, with the message it has always had.
 */
static void
fold_constants(struct interp *ip, Onnx__GraphProto *g)
{
	const struct op_def *def = ops_find("", "Constant");
	int opset = model_opset(ip->m, "");
	struct err scratch;

	for (int v = 0; def && v < ip->nvalues; v++) {
		struct graph_value *gv = graph_value_at(ip->gr, v);
		const Onnx__NodeProto *n;

		if (gv->kind != VALUE_CONSTANT || gv->producer < 0)
			continue;
		n = g->node[gv->producer];
		if (n->n_output != 1)
			continue;
		if (lend_constant(ip, n, v) == 0)
			continue;
		if (ops_run_once(def, n, opset, NULL, 0, &ip->consts[v], 1,
		    ip->threads, &scratch) == 0 && ip->consts[v].data)
			ip->is_const[v] = 1;
		else
			tensor_release(&ip->consts[v]);
	}
}

struct chain_ctx {
	struct interp *ip;
	const struct strmap *map;
};

static const struct tensor *
chain_const(void *ctx, const char *name)
{
	struct chain_ctx *cc = ctx;
	int s = slot_of(cc->map, name);

	return s >= 0 && cc->ip->is_const[s] && cc->ip->consts[s].data ?
	    &cc->ip->consts[s] : NULL;
}

/*
 * How many of the n links may form a chain: up to a QUANT link not
 * followed by its DEQUANT, or a DEQUANT not after its QUANT (fuse.h),
 * so that no chain ends in integers or reads them.
 */
static int
paired_links(const struct fuse_link *l, int n)
{
	for (int i = 0; i < n; i++) {
		if (l[i].kind == FUSE_QUANT && (i + 1 == n ||
		    l[i + 1].kind != FUSE_DEQUANT ||
		    l[i + 1].qtype != l[i].qtype))
			return i;
		if (l[i].kind == FUSE_DEQUANT && (i == 0 ||
		    l[i - 1].kind != FUSE_QUANT))
			return i;
	}
	return n;
}

/*
 * Find chains of elementwise nodes (fuse.h) from step k on: each link's
 * value read by the next link alone, never a graph output. The steps
 * between the links run as before. Graphs with subgraphs are left alone
 * (a subgraph may read any value by name).
 */
static int
chain_from(struct interp *ip, int k, const int *pos, unsigned char *member,
    struct chain_ctx *cc, struct err *e)
{
	struct step *st = &ip->steps[k];
	struct fuse_link links[FUSE_MAX];
	int at[FUSE_MAX], n = 1, xin;
	const char *x;

	if (st->folded || member[k] ||
	    (xin = fuse_chain_input(st->node, chain_const, cc)) < 0)
		return 0;
	x = st->node->input[xin];
	if (fuse_link_parse(&links[0], st->node, st->opset, x, x,
	    chain_const, cc) < 0)
		return 0;
	at[0] = k;
	while (n < FUSE_MAX) {
		int s = ip->steps[at[n - 1]].out[0], c;
		struct graph_value *gv;

		if (s < 0)
			break;
		gv = graph_value_at(ip->gr, s);
		if (gv->nconsumers != 1 || gv->is_output || ip->is_const[s])
			break;
		c = pos[gv->consumers[0]];
		if (c <= at[n - 1] || ip->steps[c].folded || member[c] ||
		    fuse_link_parse(&links[n], ip->steps[c].node,
		    ip->steps[c].opset, gv->name, x, chain_const, cc) < 0)
			break;
		at[n++] = c;
	}
	if ((n = paired_links(links, n)) < 2)
		return 0;
	if (!(st->chain = malloc((size_t)n * sizeof *st->chain)) ||
	    !(st->chain_steps = malloc((size_t)n * sizeof *st->chain_steps)))
		return err_nomem(e);
	memcpy(st->chain, links, (size_t)n * sizeof *links);
	memcpy(st->chain_steps, at, (size_t)n * sizeof *at);
	st->nchain = n;
	st->chain_xin = xin;
	for (int i = 0; i < n; i++) {
		member[at[i]] = 1;
		if (links[i].krank > st->chain_krank)
			st->chain_krank = links[i].krank;
	}
	return 0;
}

static int
plan_chains(struct interp *ip, const struct strmap *map, struct err *e)
{
	struct chain_ctx cc = { ip, map };
	unsigned char *member;
	int *pos, r = 0;

	for (int k = 0; k < ip->nsteps; k++)
		if (ip->steps[k].graphs)
			return 0;
	pos = malloc(((size_t)ip->nsteps + 1) * sizeof *pos);
	member = calloc((size_t)ip->nsteps + 1, 1);
	if (!pos || !member)
		r = err_nomem(e);
	for (int k = 0; r == 0 && k < ip->nsteps; k++)
		pos[ip->steps[k].index] = k;
	for (int k = 0; r == 0 && k < ip->nsteps; k++)
		r = chain_from(ip, k, pos, member, &cc, e);
	free(pos);
	free(member);
	return r;
}

/* Add name to the outer names of a subgraph when an enclosing graph has it. */
static int
add_outer(const char *name, struct strmap *def, const struct strmap *pmap,
    struct strmap *seen, const char ***v, size_t *n, size_t *cap)
{
	if (!name || !name[0] || strmap_get(def, name, NULL) ||
	    strmap_get(seen, name, NULL) || !strmap_get(pmap, name, NULL))
		return 0;
	if (strmap_put(seen, name, 0) < 0 || array_grow(v, cap, *n,
	    sizeof **v) < 0)
		return -1;
	(*v)[(*n)++] = name;
	return 0;
}

/* The names g and the graphs nested in it read from enclosing graphs. */
static int
collect_outer(const Onnx__GraphProto *g, struct strmap *def,
    const struct strmap *pmap, struct strmap *seen, const char ***v, size_t *n,
    size_t *cap)
{
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *nd = g->node[i];

		for (size_t j = 0; j < nd->n_input; j++)
			if (add_outer(nd->input[j], def, pmap, seen, v, n, cap) < 0)
				return -1;
		for (size_t j = 0; j < nd->n_attribute; j++)
			if (nd->attribute[j]->g && collect_outer(nd->attribute[j]->g,
			    def, pmap, seen, v, n, cap) < 0)
				return -1;
	}
	for (size_t i = 0; i < g->n_output; i++)
		if (add_outer(g->output[i]->name, def, pmap, seen, v, n, cap) < 0)
			return -1;
	return 0;
}

/*
 * ip->scoped: subgraph g with the names it reads from enclosing graphs
 * (those pmap knows and g does not define) appended to its inputs, so
 * the graph index sees them defined.
 */
static int
scope_subgraph(struct interp *ip, Onnx__GraphProto *g,
    const struct strmap *pmap, struct err *e)
{
	struct strmap *def = strmap_new(), *seen = strmap_new();
	const char **v = NULL;
	size_t n = 0, cap = 0;
	int r = -1;

	if (!def || !seen)
		goto nomem;
	for (size_t i = 0; i < g->n_input; i++)
		if (strmap_put(def, str_or_empty(g->input[i]->name), 0) < 0)
			goto nomem;
	for (size_t i = 0; i < g->n_initializer; i++)
		if (strmap_put(def, str_or_empty(g->initializer[i]->name), 0) < 0)
			goto nomem;
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_output; j++)
			if (strmap_put(def, str_or_empty(g->node[i]->output[j]),
			    0) < 0)
				goto nomem;
	if (collect_outer(g, def, pmap, seen, &v, &n, &cap) < 0)
		goto nomem;
	ip->scoped = *g;
	ip->scoped_input = malloc((g->n_input + n + 1) *
	    sizeof *ip->scoped_input);
	ip->outer_info = calloc(n + 1, sizeof *ip->outer_info);
	if (!ip->scoped_input || !ip->outer_info)
		goto nomem;
	if (g->n_input)
		memcpy(ip->scoped_input, g->input, g->n_input *
		    sizeof *g->input);
	for (size_t i = 0; i < n; i++) {
		onnx__value_info_proto__init(&ip->outer_info[i]);
		ip->outer_info[i].name = (char *)v[i];
		ip->scoped_input[g->n_input + i] = &ip->outer_info[i];
	}
	ip->scoped.input = ip->scoped_input;
	ip->scoped.n_input = g->n_input + n;
	r = 0;
	goto done;
nomem:
	err_nomem(e);
done:
	free(v);
	strmap_free(def);
	strmap_free(seen);
	return r;
}

/*
 * Plan graph g: the main graph (parent NULL) or a subgraph of a node of
 * parent, whose names pmap maps to parent's slots.
 */
static struct interp *
plan_graph(const struct model *m, Onnx__GraphProto *g,
    const struct interp *parent, const struct strmap *pmap, int threads,
    struct err *e)
{
	struct interp *ip;
	const struct strmap *map;
	size_t nformal = g->n_input;

	if (!(ip = calloc(1, sizeof *ip))) {
		err_nomem(e);
		return NULL;
	}
	ip->m = m;
	ip->threads = threads;
	ip->parent = parent;
	if (parent) {
		if (scope_subgraph(ip, g, pmap, e) < 0)
			goto fail;
		g = &ip->scoped;
	}
	if (check_kernels(ip, g, e) < 0)
		goto fail;
	if (!(ip->gr = graph_new(g, e)))
		goto fail;
	ip->nvalues = graph_nvalues(ip->gr);
	ip->consts = calloc((size_t)ip->nvalues + 1, sizeof *ip->consts);
	ip->vals = calloc((size_t)ip->nvalues + 1, sizeof *ip->vals);
	ip->ptr = calloc((size_t)ip->nvalues + 1, sizeof *ip->ptr);
	ip->is_const = calloc((size_t)ip->nvalues + 1, 1);
	ip->maps = calloc((size_t)ip->nvalues + 1, sizeof *ip->maps);
	if (!ip->consts || !ip->vals || !ip->ptr || !ip->is_const ||
	    !ip->maps) {
		err_nomem(e);
		goto fail;
	}
	/* the slots are the graph's value positions: its index maps names */
	map = graph_names(ip->gr);
	if (setup_io(ip, g, nformal, map, pmap, e) < 0)
		goto fail;
	fold_constants(ip, g);
	if (plan(ip, g, map, e) < 0 || decode_constants(ip, e) < 0 ||
	    (!getenv("ONNXQ_NO_FUSE") && plan_chains(ip, map, e) < 0))
		goto fail;
	return ip;
fail:
	interp_free(ip);
	return NULL;
}

static void release_run(struct interp *ip);
static int run_step(struct interp *ip, struct step *st, struct err *e);

/* Ops whose output differs from run to run: never folded. */
static int
is_random(const char *op)
{
	return strncmp(op, "Random", 6) == 0 ||
	    strcmp(op, "Multinomial") == 0 || strcmp(op, "Bernoulli") == 0;
}

/*
 * A step the fold cache may hold (not in a chain of fused nodes, whose
 * first step computes the others'): 1 with st->args its inputs.
 */
static int
fold_args(struct interp *ip, struct step *st, struct foldcache *cache)
{
	if (cache == NULL || st->nchain || st->chain_done)
		return 0;
	for (int j = 0; j < st->nin; j++)
		st->args[j] = st->in[j] >= 0 ? ip->ptr[st->in[j]] : NULL;
	return 1;
}

/*
 * interp_opts.fold_constant_nodes: run each node whose inputs are all
 * constant now, in plan order (so chains fold too), and keep its output
 * with the constants. One whose kernel fails is left to run (and fail)
 * at run time, with the message it has always had.
 */
static void
fold_constant_nodes(struct interp *ip, struct foldcache *cache)
{
	interp_observe_fn observe = ip->observe;
	struct err scratch;
	int cacheable, hit;

	ip->observe = NULL;	/* observed at each run, as before */
	for (int v = 0; v < ip->nvalues; v++)
		ip->ptr[v] = ip->is_const[v] ? &ip->consts[v] : &ip->vals[v];
	for (int k = 0; k < ip->nsteps; k++) {
		struct step *st = &ip->steps[k];
		int s = st->nout == 1 ? st->out[0] : -1, ok = st->nin > 0;

		if (st->folded || st->graphs || s < 0 ||
		    is_random(st->node->op_type))
			continue;
		for (int j = 0; ok && j < st->nin; j++)
			ok = st->in[j] < 0 || ip->is_const[st->in[j]];
		if (!ok)
			continue;
		cacheable = fold_args(ip, st, cache);
		hit = cacheable && foldcache_get(cache, st->node, st->opset,
		    st->args, st->nin, &ip->vals[s]);
		if (hit || (run_step(ip, st, &scratch) == 0 &&
		    ip->vals[s].data)) {
			/* run_step() set st->args as fold_args() does; the
			   cache takes the value and lends it back */
			if (cacheable && !hit)
				hit = foldcache_keep(cache, st->node,
				    st->opset, st->args, st->nin,
				    &ip->vals[s], &scratch) == 1;
			tensor_move(&ip->consts[s], &ip->vals[s]);
			/* the cache's: not freed with the interpreter */
			ip->maps[s].lent = hit;
			ip->is_const[s] = 1;
			ip->ptr[s] = &ip->consts[s];
			st->folded = 1;
		}
		/* a chain's first step writes the others' values too */
		if (st->nchain)
			release_run(ip);
		else
			tensor_release(&ip->vals[s]);
	}
	ip->observe = observe;
}

/*
 * Every run allocates and frees the same big tensors. By default glibc
 * maps each one afresh and unmaps it on free, so every run pays page
 * faults on all its memory (a quarter of the time of a detection
 * model); keep freed memory in the heap for reuse instead.
 */
static void
keep_freed_memory(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

struct interp *
interp_new(const struct model *m, const struct interp_opts *opts,
    struct err *e)
{
	struct interp *ip;

	if (!m->proto || !m->proto->graph) {
		err_set(e, "%s: the model has no graph", m->path);
		return NULL;
	}
	if (tensor_mem_limit_init(opts ? opts->mem_limit : 0, e) < 0 ||
	    check_opsets(m, m->proto->graph, e) < 0 ||
	    !(ip = plan_graph(m, m->proto->graph, NULL, NULL, opts &&
	    opts->threads > 0 ? opts->threads : 2, e)))
		return NULL;
	/* Only the main graph is observed; see interp.h. */
	ip->observe = opts ? opts->observe : NULL;
	ip->observe_ctx = opts ? opts->observe_ctx : NULL;
	ip->chain_obs = opts ? opts->chain_observer : NULL;
	/*
	 * The kernels run their own OpenMP threads and keep OpenBLAS on one
	 * (gemm.h), so two thread pools never spin against each other.
	 */
	gemm_init_threads();
	omp_set_num_threads(ip->threads);
	keep_freed_memory();
	if (opts && opts->fold_constant_nodes) {
		fold_constant_nodes(ip, opts->fold_cache);
		ip->fold_cache = opts->fold_cache;
	}
	return ip;
}

void
interp_free(struct interp *ip)
{
	if (!ip)
		return;
	for (int k = 0; k < ip->nsteps; k++) {
		struct step *st = &ip->steps[k];

		if (st->state && st->def && st->def->free_state)
			st->def->free_state(st->state);
		free(st->in);
		free(st->out);
		free(st->release);
		free(st->args);
		free(st->res);
		free(st->chain);
		free(st->chain_steps);
		for (size_t i = 0; st->graphs && i < st->node->n_attribute; i++)
			interp_free(st->graphs[i]);
		free(st->graphs);
	}
	free(ip->steps);
	free(ip->scratch.p);
	for (int v = 0; ip->consts && v < ip->nvalues; v++)
		if (ip->maps)
			model_map_release(&ip->maps[v], &ip->consts[v]);
		else
			tensor_release(&ip->consts[v]);
	free(ip->maps);
	for (int v = 0; ip->vals && v < ip->nvalues; v++)
		tensor_release(&ip->vals[v]);
	free(ip->consts);
	free(ip->vals);
	free(ip->ptr);
	free(ip->is_const);
	free(ip->input_slot);
	free(ip->input_info);
	free(ip->output_slot);
	free(ip->in_args);
	free(ip->outer_slot);
	free(ip->outer_from);
	free(ip->scoped_input);
	free(ip->outer_info);
	graph_free(ip->gr);
	free(ip);
}

int
interp_ninputs(const struct interp *ip)
{
	return ip->ninputs;
}

const char *
interp_input_name(const struct interp *ip, int i)
{
	return ip->input_info[i]->name;
}

int
interp_input_type(const struct interp *ip, int i, int *rank, int64_t *dims)
{
	return model_value_type(ip->input_info[i], rank, dims);
}

int
interp_noutputs(const struct interp *ip)
{
	return ip->noutputs;
}

const char *
interp_output_name(const struct interp *ip, int i)
{
	return graph_value_at(ip->gr, ip->output_slot[i])->name;
}

static char *
declared_shape_str(int rank, const int64_t *dims, char *buf, size_t size)
{
	size_t n = 0;

	if (rank == 0)
		return snprintf(buf, size, "scalar"), buf;
	buf[0] = '\0';
	for (int k = 0; k < rank && n < size; k++) {
		if (dims[k] < 0)
			n += snprintf(buf + n, size - n, "%s?", k ? "x" : "");
		else
			n += snprintf(buf + n, size - n, "%s%lld", k ? "x" : "",
			    (long long)dims[k]);
	}
	return buf;
}

static int
check_inputs(const struct interp *ip, const struct tensor *in, struct err *e)
{
	char have[256], want[256];
	int64_t dims[TENSOR_MAX_RANK];
	int rank, dt;

	for (int i = 0; i < ip->ninputs; i++) {
		const char *name = interp_input_name(ip, i);
		int bad = 0;

		if (!in[i].data)
			return err_set(e, "input %s: no tensor given", name);
		dt = interp_input_type(ip, i, &rank, dims);
		if (dt != DT_UNDEFINED && in[i].dtype != dt)
			return err_set(e, "input %s: type %s does not match the "
			    "model's %s", name, dtype_name(in[i].dtype) ?
			    dtype_name(in[i].dtype) : "?", dtype_name(dt) ?
			    dtype_name(dt) : "?");
		if (rank < 0)
			continue;
		bad = rank != in[i].rank;
		for (int k = 0; !bad && k < rank; k++)
			bad = dims[k] >= 0 && dims[k] != in[i].dims[k];
		if (bad)
			return err_set(e, "input %s: shape %s does not match the "
			    "model's %s", name, shape_str(in[i].rank, in[i].dims,
			    have, sizeof have), declared_shape_str(rank, dims, want,
			    sizeof want));
	}
	return 0;
}

static void
release_run(struct interp *ip)
{
	for (int v = 0; v < ip->nvalues; v++)
		tensor_release(&ip->vals[v]);
}

/* The float16 or bfloat16 type of some input of c, or DT_UNDEFINED. */
static int
half_type(const struct op_ctx *c)
{
	for (int j = 0; j < c->nin; j++)
		if (c->in[j] && (c->in[j]->dtype == DT_FLOAT16 ||
		    c->in[j]->dtype == DT_BFLOAT16))
			return c->in[j]->dtype;
	return DT_UNDEFINED;
}

/*
 * Most kernels compute in float32 only. A node with float16 or bfloat16
 * inputs that its kernel refuses runs on float32 copies of them, and its
 * float32 outputs go back to the half type (float32 accumulation, as
 * ONNX Runtime's half kernels do). The step remembers it, so later runs
 * go straight here.
 */
static int
run_widened(struct step *st, struct op_ctx *c, int half)
{
	const struct tensor *const *orig = c->in;
	const struct tensor **in;
	struct tensor *wide, t;
	int r = -1;

	in = calloc((size_t)c->nin + 1, sizeof *in);
	wide = calloc((size_t)c->nin + 1, sizeof *wide);
	if (!in || !wide) {
		r = err_nomem(c->err);
		goto out;
	}
	for (int j = 0; j < c->nin; j++) {
		in[j] = orig[j];
		if (orig[j] && orig[j]->dtype == half) {
			if (tensor_cast(&wide[j], orig[j], DT_FLOAT, c->err) != 0)
				goto out;
			in[j] = &wide[j];
			if (j < 64)	/* a copy made for this run */
				c->const_in &= ~(1ULL << j);
		}
	}
	c->in = in;
	c->err->msg[0] = '\0';
	if ((r = st->def->run(c)) != 0)
		goto out;
	for (int j = 0; r == 0 && j < c->nout; j++) {
		if (!c->out[j].data || c->out[j].dtype != DT_FLOAT)
			continue;
		if ((r = tensor_cast(&t, &c->out[j], half, c->err)) == 0) {
			tensor_release(&c->out[j]);
			tensor_move(&c->out[j], &t);
		}
	}
	st->widen = r == 0;
out:
	c->in = orig;
	for (int j = 0; wide && j < c->nin; j++)
		tensor_release(&wide[j]);
	free(wide);
	free(in);
	return r;
}

/* Run st's kernel, in float32 for half inputs it refuses. */
static int
run_kernel(struct step *st, struct op_ctx *c, struct err *e)
{
	struct err first;
	int half = half_type(c), r;

	if (st->widen && half != DT_UNDEFINED)
		return run_widened(st, c, half);
	if ((r = st->def->run(c)) == 0 || half == DT_UNDEFINED)
		return r;
	first = *e;
	for (int j = 0; j <= c->nout; j++)
		tensor_release(&c->out[j]);
	if (run_widened(st, c, half) == 0)
		return 0;
	*e = first;
	return -1;
}

/*
 * Show st's outputs, in place, to the observer (NULL in subgraphs: their
 * tensors are not observed); release what nobody reads after st.
 */
static int
show_made(struct interp *ip, struct step *st, struct err *e)
{
	for (int j = 0; j < st->nout; j++) {
		int s = st->out[j];

		if (s >= 0 && ip->observe && ip->vals[s].data &&
		    !st->chain_seen && ip->observe(ip->observe_ctx,
		    graph_value_at(ip->gr, s)->name, &ip->vals[s], e) != 0)
			return -1;
	}
	st->chain_seen = 0;
	for (int r = 0; r < st->nrelease; r++) {
		int v = st->release[r];

		if (ip->keep && ip->vals[v].data)
			ip->keep(ip->keep_ctx, graph_value_at(ip->gr, v)->name,
			    &ip->vals[v]);
		tensor_release(&ip->vals[v]);
	}
	return 0;
}

/*
 * run_chain with an observer that takes the chain block by block
 * (interp.h): 0 when done and seen, 1 when it wants the steps one by
 * one, -1 on error.
 */
static int
run_chain_seen(struct interp *ip, struct step *st, const struct tensor *x,
    struct err *e)
{
	const struct interp_chain_observer *co = ip->chain_obs;
	const char *names[FUSE_MAX];
	float *outs[FUSE_MAX];
	struct step *last = &ip->steps[st->chain_steps[st->nchain - 1]];
	struct tensor *y = &ip->vals[last->out[0]];
	int threads = ip->threads < co->max_threads ? ip->threads :
	    co->max_threads, r;
	char label[512];

	for (int i = 0; i < st->nchain; i++) {
		names[i] = graph_value_at(ip->gr,
		    ip->steps[st->chain_steps[i]].out[0])->name;
		outs[i] = NULL;
	}
	if ((r = co->begin(ip->observe_ctx, names, st->nchain, x, e)) <= 0)
		return r < 0 ? -1 : 1;
	if (tensor_alloc_like_uninit(y, DT_FLOAT, x, e) < 0)
		return err_prefix(e, "%s", node_label(last->node, last->index,
		    label, sizeof label));
	outs[st->nchain - 1] = y->data;
	if (fuse_run_seen(st->chain, st->nchain, x->data, outs, x->nelem,
	    threads, co->block, co->see, ip->observe_ctx) < 0)
		r = err_set(e, "chain observer: blocks of %lld values, more "
		    "than %d", (long long)co->block, FUSE_SEEN_MAX);
	else
		r = co->done(ip->observe_ctx, e);
	if (r != 0) {
		tensor_release(y);
		return r;
	}
	for (int i = 1; i < st->nchain; i++)
		ip->steps[st->chain_steps[i]].chain_done = 1;
	last->chain_seen = 1;
	return 0;
}

/* Whether node (an index in graph.node) is a link of the chain at st. */
static int
chain_has(const struct interp *ip, const struct step *st, int node)
{
	for (int i = 0; i < st->nchain; i++)
		if (ip->steps[st->chain_steps[i]].index == node)
			return 1;
	return 0;
}

/*
 * The chain's input x when its buffer can become the output's: x is the
 * run's own node output (not a graph output, a constant, an input or a
 * value taken from an earlier run) and no node outside the chain reads
 * it. fuse_run then writes it in place, where each block was just read,
 * instead of into fresh memory (its pages first touched, then cached).
 */
static struct tensor *
chain_input_to_reuse(struct interp *ip, const struct step *st)
{
	int s = st->in[st->chain_xin];
	const struct graph_value *gv = graph_value_at(ip->gr, s);

	if (ip->ptr[s] != &ip->vals[s] || !ip->vals[s].data ||
	    gv->is_output || ip->is_const[s])
		return NULL;
	for (int c = 0; c < gv->nconsumers; c++)
		if (!chain_has(ip, st, gv->consumers[c]))
			return NULL;
	return &ip->vals[s];
}

/*
 * Run the chain starting at st in one pass: 0 when done, 1 when the
 * steps are to run one by one: its input is not float32, or an observer
 * wants every value (the values between the links would all be live at
 * once and seen cold; one by one, each is observed while in cache).
 * -1 on error.
 */
static int
run_chain(struct interp *ip, struct step *st, struct err *e)
{
	const struct tensor *x = ip->ptr[st->in[st->chain_xin]];
	float *outs[FUSE_MAX];
	char label[512];
	struct step *last = &ip->steps[st->chain_steps[st->nchain - 1]];
	struct tensor *y = &ip->vals[last->out[0]], *own;

	if ((ip->observe && !ip->chain_obs) || ip->keep || !x || !x->data ||
	    x->dtype != DT_FLOAT || x->rank < st->chain_krank)
		return 1;
	/* interp_run_skip(): a link taken from the earlier run, one by one */
	for (int i = 1; ip->skip && i < st->nchain; i++)
		if (ip->skip[ip->steps[st->chain_steps[i]].index])
			return 1;
	if (ip->observe) {
		/* a QuantizeLinear link's value is an integer tensor,
		   which fuse_run_seen cannot show: one by one */
		for (int i = 0; i < st->nchain; i++)
			if (st->chain[i].kind == FUSE_QUANT)
				return 1;
		return run_chain_seen(ip, st, x, e);
	}
	for (int i = 0; i < st->nchain - 1; i++)
		outs[i] = NULL;
	if ((own = chain_input_to_reuse(ip, st)) != NULL)
		tensor_move(y, own);	/* x is y now: x->data is NULL */
	else if (tensor_alloc_like_uninit(y, DT_FLOAT, x, e) < 0)
		return err_prefix(e, "%s", node_label(last->node, last->index,
		    label, sizeof label));
	outs[st->nchain - 1] = y->data;
	fuse_run(st->chain, st->nchain, own ? y->data : x->data, outs,
	    y->nelem, ip->threads);
	for (int i = 1; i < st->nchain; i++)
		ip->steps[st->chain_steps[i]].chain_done = 1;
	return 0;
}

static int
run_step(struct interp *ip, struct step *st, struct err *e)
{
	struct op_ctx c;
	char label[512];
	int r;

	if (st->chain_done) {
		st->chain_done = 0;
		return show_made(ip, st, e);
	}
	if (st->nchain && (r = run_chain(ip, st, e)) <= 0)
		return r < 0 ? -1 : show_made(ip, st, e);

	if (st->folded)
		return ip->observe && ip->observe(ip->observe_ctx,
		    graph_value_at(ip->gr, st->out[0])->name,
		    &ip->consts[st->out[0]], e) != 0 ? -1 : 0;
	for (int j = 0; j < st->nin; j++)
		st->args[j] = st->in[j] >= 0 ? ip->ptr[st->in[j]] : NULL;
	for (int j = 0; j < st->nin; j++)
		if (st->args[j] && !st->args[j]->data)
			st->args[j] = NULL;
	memset(st->res, 0, (size_t)st->nout * sizeof *st->res);
	c.node = st->node;
	c.opset = st->opset;
	c.nin = st->nin;
	c.in = st->args;
	c.nout = st->nout;
	c.out = st->res;
	c.threads = ip->threads;
	c.state = &st->state;
	c.graphs = st->graphs;
	c.err = e;
	c.const_in = 0;
	c.scratch = &ip->scratch;
	c.fold_cache = ip->fold_cache;
	for (int j = 0; j < st->nin && j < 64; j++)
		if (st->args[j] && ip->is_const[st->in[j]])
			c.const_in |= 1ULL << j;
	e->msg[0] = '\0';
	r = run_kernel(st, &c, e);
	/* A node that lists no outputs still gets its first one computed
	 * (into the spare slot, res[nout]): nobody can read it. */
	tensor_release(&st->res[st->nout]);
	for (int j = 0; r == 0 && j < st->nout; j++) {
		int s = st->out[j];
		struct graph_value *gv;

		if (st->res[j].data || s < 0)
			continue;
		gv = graph_value_at(ip->gr, s);
		if (j == 0 || gv->nconsumers > 0 || gv->is_output)
			r = err_set(e, "output %d (%s) was not computed", j, gv->name);
	}
	if (r != 0) {
		if (!e->msg[0])
			err_set(e, "kernel failed");
		for (int j = 0; j < st->nout; j++)
			tensor_release(&st->res[j]);
		return err_prefix(e, "%s", node_label(st->node, st->index, label,
		    sizeof label));
	}
	for (int j = 0; j < st->nout; j++) {
		int s = st->out[j];

		if (s < 0) {
			tensor_release(&st->res[j]);
			continue;
		}
		tensor_move(&ip->vals[s], &st->res[j]);
	}
	if (show_made(ip, st, e) != 0)
		return -1;
	/* mapped weights leave the resident set once read (model.h) */
	for (int j = 0; j < st->nin; j++)
		if (st->in[j] >= 0 && ip->is_const[st->in[j]])
			model_map_drop_pages(&ip->maps[st->in[j]]);
	return 0;
}

/*
 * interp_run_skip(): st's outputs from the earlier run, those it has
 * (check_cached() stops a node that reads one it has not).
 */
static void
take_cached(struct interp *ip, struct step *st)
{
	for (int j = 0; j < st->nout; j++) {
		int s = st->out[j];
		const struct tensor *t;

		if (s >= 0 && (t = ip->cached(ip->cached_ctx,
		    graph_value_at(ip->gr, s)->name)) != NULL)
			ip->ptr[s] = t;
	}
}

/* interp_run_skip(): the values st reads from skipped nodes are there. */
static int
check_cached(struct interp *ip, struct step *st, struct err *e)
{
	char label[512];

	for (int j = 0; j < st->nin; j++) {
		int s = st->in[j];
		struct graph_value *gv;

		if (s < 0 || ip->ptr[s]->data)
			continue;
		gv = graph_value_at(ip->gr, s);
		if (gv->producer >= 0 && ip->skip[gv->producer])
			return err_set(e, "%s: no cached value of %s",
			    node_label(st->node, st->index, label,
			    sizeof label), gv->name);
	}
	return 0;
}

/* Run graph ip (main or subgraph) on inputs in[i]; see interp_run. */
static int
run_graph(struct interp *ip, const struct tensor *const *in,
    struct tensor *outputs, struct err *e)
{
	for (int v = 0; v < ip->nvalues; v++)
		ip->ptr[v] = ip->is_const[v] ? &ip->consts[v] : &ip->vals[v];
	for (int i = 0; i < ip->ninputs; i++)
		ip->ptr[ip->input_slot[i]] = in[i];
	for (int i = 0; i < ip->nouter; i++)
		ip->ptr[ip->outer_slot[i]] = ip->parent->ptr[ip->outer_from[i]];
	for (int k = 0; k < ip->nsteps; k++)
		ip->steps[k].chain_done = 0;	/* after a failed run */
	for (int i = 0; ip->observe && i < ip->ninputs; i++)
		if (ip->observe(ip->observe_ctx, interp_input_name(ip, i),
		    in[i], e) != 0)
			return -1;
	for (int k = 0; k < ip->nsteps; k++) {
		struct step *st = &ip->steps[k];

		if (ip->skip && ip->skip[st->index] && !st->folded) {
			take_cached(ip, st);
			continue;
		}
		if ((ip->skip && check_cached(ip, st, e) < 0) ||
		    run_step(ip, st, e) < 0) {
			release_run(ip);
			return -1;
		}
	}
	for (int i = 0; i < ip->noutputs; i++) {
		int s = ip->output_slot[i];
		const struct tensor *src = ip->ptr[s];

		memset(&outputs[i], 0, sizeof outputs[i]);
		if (!src->data && ip->skip &&
		    graph_value_at(ip->gr, s)->producer >= 0 &&
		    ip->skip[graph_value_at(ip->gr, s)->producer])
			continue;	/* skipped, not cached: not wanted */
		if (!src->data) {
			err_set(e, "output %s was not computed",
			    interp_output_name(ip, i));
			goto fail;
		}
		/* Moved when it is ours; copied for inputs, constants, repeats. */
		if (src == &ip->vals[s]) {
			int again = 0;

			for (int j = i + 1; j < ip->noutputs; j++)
				again |= ip->output_slot[j] == s;
			if (!again) {
				tensor_move(&outputs[i], &ip->vals[s]);
				continue;
			}
		}
		if (tensor_copy(&outputs[i], src, e) < 0)
			goto fail;
	}
	release_run(ip);
	return 0;
fail:
	for (int i = 0; i < ip->noutputs; i++)
		tensor_release(&outputs[i]);
	release_run(ip);
	return -1;
}

int
interp_run(struct interp *ip, const struct tensor *inputs,
    struct tensor *outputs, struct err *e)
{
	struct err scratch;

	if (!e)
		e = &scratch;
	if (check_inputs(ip, inputs, e) < 0)
		return -1;
	for (int i = 0; i < ip->ninputs; i++)
		ip->in_args[i] = &inputs[i];
	return run_graph(ip, ip->in_args, outputs, e);
}

int
interp_run_skip(struct interp *ip, const struct tensor *inputs,
    const unsigned char *skip, interp_cached_fn cached, void *ctx,
    struct tensor *outputs, struct err *e)
{
	int r;

	ip->skip = skip;
	ip->cached = cached;
	ip->cached_ctx = ctx;
	r = interp_run(ip, inputs, outputs, e);
	ip->skip = NULL;
	return r;
}

int
interp_run_keep(struct interp *ip, const struct tensor *inputs,
    interp_keep_fn keep, void *ctx, struct tensor *outputs, struct err *e)
{
	int r;

	ip->keep = keep;
	ip->keep_ctx = ctx;
	r = interp_run(ip, inputs, outputs, e);
	ip->keep = NULL;
	return r;
}

int
interp_graph_run(struct interp *sub, const struct tensor *const *inputs,
    struct tensor *outputs, struct err *e)
{
	return run_graph(sub, inputs, outputs, e);
}

void
interp_reexec_bounded_spin(char *const *argv)
{
	int again = 0;

	/* A short spin (about the gap between two kernels) keeps wake-ups
	 * cheap on a quiet machine without starving a busy one. */
	if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT") &&
	    setenv("GOMP_SPINCOUNT", "10000", 1) == 0)
		again = 1;
	/* OpenBLAS only ever runs on one of our threads (gemm_init_threads),
	 * but a pthread build starts a thread per core when it is loaded,
	 * and those spin on sched_yield for the whole run. */
	if (!getenv("OPENBLAS_NUM_THREADS") &&
	    setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
		again = 1;
#ifdef __GLIBC__
	/* glibc reads it at start-up only; older ones ignore it */
	if (!getenv("GLIBC_TUNABLES") &&
	    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1) == 0)
		again = 1;
#endif
	if (again)
		execv("/proc/self/exe", argv);
	/* No /proc: run on; spinning threads and small pages are only
	 * slower. */
	/* From the start: the models read before the first interpreter
	 * then leave their memory to the heap, not to the system. */
	keep_freed_memory();
}
