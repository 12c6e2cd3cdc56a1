/*
 * graph: see graph.h. The index is rebuilt from scratch by graph_reindex();
 * the node order it computes is the smallest topological order by node
 * index, so a graph already sorted keeps its order.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "model.h"
#include "strmap.h"
#include "util.h"

#define GRAPH_MAX_DEPTH 64	/* subgraphs within subgraphs */

struct graph {
	Onnx__GraphProto *g;
	struct graph_value *values;
	int nvalues;
	struct strmap *index;	/* value name -> position in values */
	/* with index's keys: every name in the graph and its subgraphs */
	struct strmap *used;
	int *pool;		/* the consumers lists, back to back */
	int *topo;		/* n_node entries */
};

/* A use of a value by a node: an input slot or a name a subgraph reads. */
struct edge {
	int value;
	int node;
};

struct edges {
	struct edge *v;
	size_t n, cap;
};

/* An ordered set of names (pointers into the proto). */
struct names {
	const char **v;
	size_t n, cap;
	struct strmap *seen;
};

/* "node NAME (Op)", or "node #I (Op)" for an unnamed node. */
static const char *
node_label(const Onnx__GraphProto *g, int i, char *buf, size_t size)
{
	const Onnx__NodeProto *n = g->node[i];
	char name[160], op[64];

	str_clip(n->op_type, op, sizeof op);
	if (n->name != NULL && *n->name != '\0')
		snprintf(buf, size, "node %s (%s)",
		    str_clip(n->name, name, sizeof name), op);
	else
		snprintf(buf, size, "node #%d (%s)", i, op);
	return buf;
}

static int
edges_add(struct edges *es, int value, int node)
{
	if (es->n == es->cap) {
		size_t ncap = es->cap ? es->cap * 2 : 256;
		struct edge *nv = realloc(es->v, ncap * sizeof *nv);

		if (nv == NULL)
			return -1;
		es->v = nv;
		es->cap = ncap;
	}
	es->v[es->n].value = value;
	es->v[es->n].node = node;
	es->n++;
	return 0;
}

static int
names_add(struct names *ns, const char *name)
{
	int r;

	if (ns->seen == NULL && (ns->seen = strmap_new()) == NULL)
		return -1;
	if ((r = strmap_add(ns->seen, name, 0, NULL)) != 0)
		return r < 0 ? -1 : 0;
	if (ns->n == ns->cap) {
		size_t ncap = ns->cap ? ns->cap * 2 : 16;
		const char **nv = realloc(ns->v, ncap * sizeof *nv);

		if (nv == NULL)
			return -1;
		ns->v = nv;
		ns->cap = ncap;
	}
	ns->v[ns->n++] = name;
	return 0;
}

static void
names_release(struct names *ns)
{
	free(ns->v);
	strmap_free(ns->seen);
	memset(ns, 0, sizeof *ns);
}

static int
use_name(struct strmap *used, const char *name)
{
	if (name == NULL || *name == '\0')
		return 0;
	return strmap_add(used, name, 0, NULL) < 0 ? -1 : 0;
}

/*
 * Append to out the names subgraph sg reads but does not define (those
 * come from an enclosing scope), and record every name it mentions in used.
 */
static int free_names(const Onnx__GraphProto *sg, int depth,
    struct names *out, struct strmap *used, struct err *e);

/* The free names of the subgraphs in node n's attributes. */
static int
node_free_names(const Onnx__NodeProto *n, int depth, struct names *out,
    struct strmap *used, struct err *e)
{
	const Onnx__AttributeProto *a;
	size_t i, j;

	for (i = 0; i < n->n_attribute; i++) {
		a = n->attribute[i];
		if (a->g != NULL && free_names(a->g, depth + 1, out, used, e))
			return -1;
		for (j = 0; j < a->n_graphs; j++)
			if (a->graphs[j] != NULL &&
			    free_names(a->graphs[j], depth + 1, out, used, e))
				return -1;
	}
	return 0;
}

static int
free_names(const Onnx__GraphProto *sg, int depth, struct names *out,
    struct strmap *used, struct err *e)
{
	struct strmap *def;
	struct names inner = { 0 };
	const Onnx__NodeProto *n;
	const char *name;
	size_t i, j;

	if (depth > GRAPH_MAX_DEPTH)
		return err_set(e, "subgraphs nested deeper than %d",
		    GRAPH_MAX_DEPTH);
	if ((def = strmap_new()) == NULL)
		return err_nomem(e);
	for (i = 0; i < sg->n_input; i++) {
		name = str_or_empty(sg->input[i]->name);
		if (strmap_put(def, name, 0) || use_name(used, name))
			goto nomem;
	}
	for (i = 0; i < sg->n_initializer; i++) {
		name = str_or_empty(sg->initializer[i]->name);
		if (strmap_put(def, name, 0) || use_name(used, name))
			goto nomem;
	}
	for (i = 0; i < sg->n_sparse_initializer; i++) {
		if (sg->sparse_initializer[i]->values == NULL)
			continue;
		name = str_or_empty(sg->sparse_initializer[i]->values->name);
		if (strmap_put(def, name, 0) || use_name(used, name))
			goto nomem;
	}
	for (i = 0; i < sg->n_node; i++) {
		n = sg->node[i];
		if (use_name(used, n->name))
			goto nomem;
		for (j = 0; j < n->n_output; j++)
			if (strmap_put(def, str_or_empty(n->output[j]), 0) ||
			    use_name(used, n->output[j]))
				goto nomem;
	}
	for (i = 0; i < sg->n_node; i++) {
		n = sg->node[i];
		for (j = 0; j < n->n_input; j++) {
			name = str_or_empty(n->input[j]);
			if (*name == '\0' || strmap_get(def, name, NULL))
				continue;
			if (names_add(out, name) || use_name(used, name))
				goto nomem;
		}
		if (node_free_names(n, depth, &inner, used, e) != 0)
			goto fail;
		for (j = 0; j < inner.n; j++)
			if (!strmap_get(def, inner.v[j], NULL) &&
			    names_add(out, inner.v[j]))
				goto nomem;
		names_release(&inner);
	}
	/* a subgraph output may be a value of the enclosing scope */
	for (i = 0; i < sg->n_output; i++) {
		name = str_or_empty(sg->output[i]->name);
		if (*name != '\0' && !strmap_get(def, name, NULL) &&
		    (names_add(out, name) || use_name(used, name)))
			goto nomem;
	}
	strmap_free(def);
	return 0;
nomem:
	err_nomem(e);
fail:
	names_release(&inner);
	strmap_free(def);
	return -1;
}

static void
clear_index(struct graph *gr)
{
	free(gr->values);
	free(gr->pool);
	free(gr->topo);
	strmap_free(gr->index);
	strmap_free(gr->used);
	gr->values = NULL;
	gr->pool = NULL;
	gr->topo = NULL;
	gr->index = NULL;
	gr->used = NULL;
	gr->nvalues = 0;
}

static int
lookup(const struct graph *gr, const char *name)
{
	int v;

	return strmap_get(gr->index, name, &v) ? v : -1;
}

/*
 * Value name's position, or -1 for a new one: then the index maps name to
 * the next position, and the caller adds the value there (add_value).
 * -2 when out of memory. One look where lookup() then a put take two.
 */
static int
lookup_or_claim(struct graph *gr, const char *name)
{
	int v, r;

	/* index's keys count as used: a million names are not kept twice */
	if ((r = strmap_add(gr->index, name, gr->nvalues, &v)) < 0)
		return -2;
	return r ? v : -1;
}

/* The value lookup_or_claim() just claimed the position of. */
static struct graph_value *
add_value(struct graph *gr, const char *name, enum value_kind kind,
    int producer)
{
	struct graph_value *gv = &gr->values[gr->nvalues];

	memset(gv, 0, sizeof *gv);
	gv->name = name;
	gv->kind = kind;
	gv->producer = producer;
	gr->nvalues++;
	return gv;
}

static int
is_constant_node(const Onnx__NodeProto *n)
{
	const char *d = str_or_empty(n->domain);

	return strcmp(str_or_empty(n->op_type), "Constant") == 0 &&
	    (*d == '\0' || strcmp(d, "ai.onnx") == 0);
}

static const Onnx__TensorProto *
constant_value(const Onnx__NodeProto *n)
{
	size_t i;

	for (i = 0; i < n->n_attribute; i++)
		if (strcmp(str_or_empty(n->attribute[i]->name), "value") == 0)
			return n->attribute[i]->t;
	return NULL;
}

/* Graph inputs, initializers and node outputs become values. */
static int
index_values(struct graph *gr, struct err *e)
{
	Onnx__GraphProto *g = gr->g;
	struct graph_value *gv;
	char shown[256], label[256], other[256];
	const char *name;
	size_t i, j, cap;
	int v;

	cap = g->n_input + g->n_initializer;
	for (i = 0; i < g->n_node; i++)
		cap += g->node[i]->n_output;
	if (cap > INT_MAX / 2 || g->n_node > INT_MAX / 2)
		return err_set(e, "graph too large");
	if ((gr->values = calloc(cap ? cap : 1, sizeof *gr->values)) == NULL)
		return err_nomem(e);
	for (i = 0; i < g->n_input; i++) {
		name = str_or_empty(g->input[i]->name);
		if (*name == '\0')
			return err_set(e, "graph input #%zu has no name", i);
		if ((v = lookup_or_claim(gr, name)) < -1)
			return err_nomem(e);
		if (v >= 0)
			return err_set(e, "graph input %s is listed twice",
			    str_clip(name, shown, sizeof shown));
		gv = add_value(gr, name, VALUE_INPUT, -1);
		gv->info = g->input[i];
		gv->is_input = 1;
	}
	for (i = 0; i < g->n_sparse_initializer; i++)
		return err_set(e, "sparse initializer %s: sparse initializers "
		    "are not supported", str_clip(g->sparse_initializer[i]->values ?
		    g->sparse_initializer[i]->values->name : "", shown,
		    sizeof shown));
	for (i = 0; i < g->n_initializer; i++) {
		name = str_or_empty(g->initializer[i]->name);
		if (*name == '\0')
			return err_set(e, "initializer #%zu has no name", i);
		if ((v = lookup_or_claim(gr, name)) < -1)
			return err_nomem(e);
		if (v >= 0) {
			gv = &gr->values[v];
			if (gv->kind != VALUE_INPUT)
				return err_set(e, "initializer %s is defined "
				    "twice", str_clip(name, shown, sizeof shown));
		} else
			gv = add_value(gr, name, VALUE_INITIALIZER, -1);
		gv->kind = VALUE_INITIALIZER;
		gv->init = g->initializer[i];
	}
	for (i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];

		if (use_name(gr->used, n->name) != 0)
			return err_nomem(e);
		for (j = 0; j < n->n_output; j++) {
			name = str_or_empty(n->output[j]);
			if (*name == '\0')
				continue;
			if ((v = lookup_or_claim(gr, name)) < -1)
				return err_nomem(e);
			if (v >= 0) {
				gv = &gr->values[v];
				node_label(g, (int)i, label, sizeof label);
				str_clip(name, shown, sizeof shown);
				if (gv->kind == VALUE_INPUT)
					return err_set(e, "%s: output %s shadows "
					    "a graph input", label, shown);
				if (gv->kind == VALUE_INITIALIZER)
					return err_set(e, "%s: output %s shadows "
					    "an initializer", label, shown);
				return err_set(e, "%s: output %s is already "
				    "produced by %s", label, shown,
				    node_label(g, gv->producer, other,
				    sizeof other));
			}
			gv = add_value(gr, name, is_constant_node(n) ?
			    VALUE_CONSTANT : VALUE_NODE, (int)i);
			if (gv->kind == VALUE_CONSTANT)
				gv->init = constant_value(n);
		}
	}
	for (i = 0; i < g->n_output; i++) {
		name = str_or_empty(g->output[i]->name);
		if ((v = lookup(gr, name)) < 0)
			return err_set(e, "graph output %s is not produced by "
			    "any node, input or initializer",
			    str_clip(name, shown, sizeof shown));
		gv = &gr->values[v];
		gv->is_output = 1;
		if (gv->info == NULL)
			gv->info = g->output[i];
	}
	for (i = 0; i < g->n_value_info; i++) {
		v = lookup(gr, str_or_empty(g->value_info[i]->name));
		if (v >= 0 && gr->values[v].info == NULL)
			gr->values[v].info = g->value_info[i];
	}
	return 0;
}

/* Node inputs and subgraph reads: the edges of the graph. */
static int
index_uses(struct graph *gr, struct edges *es, struct err *e)
{
	Onnx__GraphProto *g = gr->g;
	struct names outer = { 0 };
	char shown[256], label[256];
	const char *name;
	size_t i, j;
	int v;

	for (i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];

		for (j = 0; j < n->n_input; j++) {
			name = str_or_empty(n->input[j]);
			if (*name == '\0')
				continue;	/* optional input left out */
			if ((v = lookup(gr, name)) < 0)
				return err_set(e, "%s: input %s is not produced "
				    "by any node, input or initializer",
				    node_label(g, (int)i, label, sizeof label),
				    str_clip(name, shown, sizeof shown));
			if (edges_add(es, v, (int)i) != 0)
				return err_nomem(e);
		}
		if (node_free_names(n, 0, &outer, gr->used, e) != 0) {
			names_release(&outer);
			return err_prefix(e, "%s",
			    node_label(g, (int)i, label, sizeof label));
		}
		for (j = 0; j < outer.n; j++) {
			if ((v = lookup(gr, outer.v[j])) < 0) {
				err_set(e, "%s: subgraph reads %s, which is not "
				    "defined", node_label(g, (int)i, label,
				    sizeof label), str_clip(outer.v[j], shown,
				    sizeof shown));
				names_release(&outer);
				return -1;
			}
			if (edges_add(es, v, (int)i) != 0) {
				names_release(&outer);
				return err_nomem(e);
			}
		}
		names_release(&outer);
	}
	return 0;
}

static int
index_consumers(struct graph *gr, const struct edges *es, struct err *e)
{
	size_t i;
	int v, pos;

	if ((gr->pool = malloc((es->n ? es->n : 1) * sizeof *gr->pool)) == NULL)
		return err_nomem(e);
	for (i = 0; i < es->n; i++)
		gr->values[es->v[i].value].nconsumers++;
	for (v = 0, pos = 0; v < gr->nvalues; v++) {
		gr->values[v].consumers = gr->pool + pos;
		pos += gr->values[v].nconsumers;
		gr->values[v].nconsumers = 0;
	}
	for (i = 0; i < es->n; i++) {
		struct graph_value *gv = &gr->values[es->v[i].value];

		gv->consumers[gv->nconsumers++] = es->v[i].node;
	}
	return 0;
}

static void
heap_push(int *h, int *n, int x)
{
	int i = (*n)++, p;

	while (i > 0 && h[p = (i - 1) / 2] > x) {
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

static int
heap_pop(int *h, int *n)
{
	int top = h[0], x = h[--(*n)], i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n > 0)
		h[i] = x;
	return top;
}

/*
 * Kahn's algorithm over producer -> consumer edges, taking the lowest
 * ready node index first. Left-over nodes lie on or after a cycle; walking
 * back through left-over producers from any of them must meet a cycle.
 */
static int
index_topo(struct graph *gr, const struct edges *es, struct err *e)
{
	int n = (int)gr->g->n_node, *indeg = NULL, *sstart = NULL, *succ = NULL;
	int *pstart = NULL, *pred = NULL, *heap = NULL, *mark = NULL;
	int i, p, u, nh = 0, done = 0, rc = -1;
	size_t k;
	char label[256];

	gr->topo = malloc((n ? n : 1) * sizeof *gr->topo);
	indeg = calloc(n + 1, sizeof *indeg);
	sstart = calloc(n + 2, sizeof *sstart);
	pstart = calloc(n + 2, sizeof *pstart);
	succ = malloc((es->n ? es->n : 1) * sizeof *succ);
	pred = malloc((es->n ? es->n : 1) * sizeof *pred);
	heap = malloc((n ? n : 1) * sizeof *heap);
	if (!gr->topo || !indeg || !sstart || !pstart || !succ || !pred ||
	    !heap) {
		err_nomem(e);
		goto done;
	}
	for (k = 0; k < es->n; k++)
		if ((p = gr->values[es->v[k].value].producer) >= 0) {
			sstart[p + 2]++;
			pstart[es->v[k].node + 2]++;
		}
	for (i = 0; i < n; i++) {
		sstart[i + 2] += sstart[i + 1];
		pstart[i + 2] += pstart[i + 1];
	}
	for (k = 0; k < es->n; k++)
		if ((p = gr->values[es->v[k].value].producer) >= 0) {
			u = es->v[k].node;
			succ[sstart[p + 1]++] = u;
			pred[pstart[u + 1]++] = p;
			indeg[u]++;
		}
	for (i = 0; i < n; i++)
		if (indeg[i] == 0)
			heap_push(heap, &nh, i);
	while (nh > 0) {
		u = heap_pop(heap, &nh);
		gr->topo[done++] = u;
		for (i = sstart[u]; i < sstart[u + 1]; i++)
			if (--indeg[succ[i]] == 0)
				heap_push(heap, &nh, succ[i]);
	}
	if (done == n) {
		rc = 0;
		goto done;
	}
	if ((mark = calloc(n, sizeof *mark)) == NULL) {
		err_nomem(e);
		goto done;
	}
	for (u = 0; indeg[u] == 0; u++)
		;
	while (!mark[u]) {
		mark[u] = 1;
		for (i = pstart[u]; i < pstart[u + 1]; i++)
			if (indeg[pred[i]] > 0)
				break;
		u = pred[i];	/* a left-over node has a left-over producer */
	}
	err_set(e, "cycle through %s", node_label(gr->g, u, label,
	    sizeof label));
done:
	free(indeg);
	free(sstart);
	free(pstart);
	free(succ);
	free(pred);
	free(heap);
	free(mark);
	return rc;
}

/* Size the name maps once for the main graph's names (no regrowth). */
static int
reserve_names(struct graph *gr)
{
	const Onnx__GraphProto *g = gr->g;
	size_t n = g->n_input + g->n_initializer;

	for (size_t i = 0; i < g->n_node; i++)
		n += g->node[i]->n_output;
	return strmap_reserve(gr->index, n) < 0 ||
	    strmap_reserve(gr->used, g->n_node) < 0 ? -1 : 0;
}

int
graph_reindex(struct graph *gr, struct err *e)
{
	struct edges es = { 0 };

	clear_index(gr);
	if ((gr->index = strmap_new()) == NULL ||
	    (gr->used = strmap_new()) == NULL ||
	    reserve_names(gr) < 0) {
		err_nomem(e);
		goto fail;
	}
	if (index_values(gr, e) != 0 || index_uses(gr, &es, e) != 0 ||
	    index_consumers(gr, &es, e) != 0 || index_topo(gr, &es, e) != 0)
		goto fail;
	free(es.v);
	return 0;
fail:
	free(es.v);
	clear_index(gr);
	return -1;
}

struct graph *
graph_new(Onnx__GraphProto *g, struct err *e)
{
	struct graph *gr;

	if ((gr = calloc(1, sizeof *gr)) == NULL) {
		err_nomem(e);
		return NULL;
	}
	gr->g = g;
	if (graph_reindex(gr, e) != 0) {
		free(gr);
		return NULL;
	}
	return gr;
}

void
graph_free(struct graph *gr)
{
	if (gr == NULL)
		return;
	clear_index(gr);
	free(gr);
}

const struct strmap *
graph_names(const struct graph *gr)
{
	return gr->index;
}

Onnx__GraphProto *
graph_proto(const struct graph *gr)
{
	return gr->g;
}

int
graph_nvalues(const struct graph *gr)
{
	return gr->nvalues;
}

struct graph_value *
graph_value_at(const struct graph *gr, int i)
{
	if (i < 0 || i >= gr->nvalues)
		return NULL;
	return &gr->values[i];
}

struct graph_value *
graph_value(const struct graph *gr, const char *name)
{
	int v;

	if (gr->index == NULL || name == NULL || (v = lookup(gr, name)) < 0)
		return NULL;
	return &gr->values[v];
}

const Onnx__TensorProto *
graph_constant(const struct graph *gr, const char *name)
{
	const struct graph_value *v = graph_value(gr, name);

	return v == NULL || v->is_input ? NULL : v->init;
}

int
graph_constant_read(const struct graph *gr, const struct model *m,
    const char *name, struct tensor *t, struct err *e)
{
	const Onnx__TensorProto *tp = graph_constant(gr, name);

	if (tp == NULL)
		return err_set(e, "%s is not a constant", name);
	return model_tensor_read(m, tp, t, e);
}

int
graph_constant_scalar(const struct graph *gr, const struct model *m,
    const char *name, double *v)
{
	struct tensor t = { 0 };
	struct err e;
	int ok;

	if (graph_constant_read(gr, m, name, &t, &e) != 0)
		return -1;
	ok = t.nelem == 1;
	if (ok)
		*v = tensor_get(&t, 0);
	tensor_release(&t);
	return ok ? 0 : -1;
}

int
graph_is_op(const Onnx__NodeProto *n, const char *op)
{
	const char *d = str_or_empty(n->domain);
	int qdq = strcmp(op, "QuantizeLinear") == 0 ||
	    strcmp(op, "DequantizeLinear") == 0;

	if (n->op_type == NULL || strcmp(n->op_type, op) != 0)
		return 0;
	return *d == '\0' || strcmp(d, "ai.onnx") == 0 ||
	    (qdq && strcmp(d, "com.microsoft") == 0);
}

const int *
graph_topo(const struct graph *gr)
{
	return gr->topo;
}

char *
graph_unique_name(struct graph *gr, const char *base)
{
	char *name;
	size_t len, blen;
	unsigned long k;

	if (base == NULL || *base == '\0')
		base = "t";
	blen = strlen(base);
	len = blen + 24;
	if ((name = malloc(len)) == NULL)
		return NULL;
	memcpy(name, base, blen + 1);	/* no printf: models make many */
	for (k = 1; gr->used != NULL && (strmap_get(gr->used, name, NULL) ||
	    lookup(gr, name) >= 0); k++)
		snprintf(name, len, "%s_%lu", base, k);
	/* reserve it, so the next call does not hand it out again */
	if (gr->used != NULL && strmap_put(gr->used, name, 0) != 0) {
		free(name);
		return NULL;
	}
	return name;
}

static char **
copy_names(const char *const *names, int n)
{
	char **v;
	int i;

	if ((v = calloc(n > 0 ? (size_t)n : 1, sizeof *v)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if ((v[i] = strdup(names[i] ? names[i] : "")) == NULL) {
			while (i-- > 0)
				free(v[i]);
			free(v);
			return NULL;
		}
	return v;
}

Onnx__NodeProto *
graph_add_node(struct graph *gr, const char *op_type, const char *domain,
    const char *name, const char *const *inputs, int nin,
    const char *const *outputs, int nout, struct err *e)
{
	Onnx__GraphProto *g = gr->g;
	Onnx__NodeProto *n, **nodes;
	int i;

	if (nin < 0 || nout < 0 || op_type == NULL) {
		err_set(e, "graph_add_node: bad arguments");
		return NULL;
	}
	if ((n = malloc(sizeof *n)) == NULL)
		goto nomem;
	onnx__node_proto__init(n);
	if ((n->op_type = strdup(op_type)) == NULL ||
	    (domain != NULL && *domain != '\0' &&
	    (n->domain = strdup(domain)) == NULL) ||
	    (name != NULL && (n->name = strdup(name)) == NULL) ||
	    (n->input = copy_names(inputs, nin)) == NULL)
		goto nomem;
	n->n_input = (size_t)nin;
	if ((n->output = copy_names(outputs, nout)) == NULL)
		goto nomem;
	n->n_output = (size_t)nout;
	if ((nodes = realloc(g->node, (g->n_node + 1) * sizeof *nodes)) == NULL)
		goto nomem;
	g->node = nodes;
	g->node[g->n_node++] = n;
	if (gr->used != NULL) {
		use_name(gr->used, n->name);
		for (i = 0; i < nout; i++)
			use_name(gr->used, n->output[i]);
	}
	return n;
nomem:
	if (n != NULL)
		protobuf_c_message_free_unpacked(&n->base, NULL);
	err_nomem(e);
	return NULL;
}

int
graph_add_initializer(struct graph *gr, Onnx__TensorProto *tp,
    struct err *e)
{
	Onnx__GraphProto *g = gr->g;
	Onnx__TensorProto **inits;
	char shown[256];

	if (tp->name == NULL || *tp->name == '\0') {
		protobuf_c_message_free_unpacked(&tp->base, NULL);
		return err_set(e, "initializer has no name");
	}
	if (gr->index != NULL && lookup(gr, tp->name) >= 0) {
		err_set(e, "initializer %s: name already in use",
		    str_clip(tp->name, shown, sizeof shown));
		protobuf_c_message_free_unpacked(&tp->base, NULL);
		return -1;
	}
	inits = realloc(g->initializer, (g->n_initializer + 1) * sizeof *inits);
	if (inits == NULL) {
		protobuf_c_message_free_unpacked(&tp->base, NULL);
		return err_nomem(e);
	}
	g->initializer = inits;
	g->initializer[g->n_initializer++] = tp;
	if (gr->used != NULL)
		use_name(gr->used, tp->name);
	return 0;
}

int
graph_rewire_input(struct graph *gr, int node, int slot, const char *name,
    struct err *e)
{
	Onnx__GraphProto *g = gr->g;
	Onnx__NodeProto *n;
	char *copy;

	if (node < 0 || (size_t)node >= g->n_node)
		return err_set(e, "no node #%d", node);
	n = g->node[node];
	if (slot < 0 || (size_t)slot >= n->n_input)
		return err_set(e, "node #%d has no input %d", node, slot);
	if ((copy = strdup(name ? name : "")) == NULL)
		return err_nomem(e);
	free(n->input[slot]);
	n->input[slot] = copy;
	if (gr->used != NULL)
		use_name(gr->used, copy);
	return 0;
}

char *
graph_add_tensor(struct graph *gr, const char *base, const char *suffix,
    const struct tensor *t, struct err *e)
{
	Onnx__TensorProto *tp;
	char *b = str_cat(base, suffix), *name;

	name = b ? graph_unique_name(gr, b) : NULL;
	free(b);
	if (name == NULL)
		goto nomem;
	if ((tp = malloc(sizeof *tp)) == NULL)
		goto nomem;
	onnx__tensor_proto__init(tp);
	if ((tp->name = strdup(name)) == NULL) {
		free(tp);
		goto nomem;
	}
	if (model_tensor_write(tp, t, e) != 0) {
		protobuf_c_message_free_unpacked(&tp->base, NULL);
		free(name);
		return NULL;
	}
	if (graph_add_initializer(gr, tp, e) != 0) {
		free(name);
		return NULL;
	}
	return name;
nomem:
	free(name);
	err_nomem(e);
	return NULL;
}

void
graph_drop_unread(struct graph *gr, const struct strmap *names)
{
	Onnx__GraphProto *g = gr->g;
	size_t j = 0;

	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];
		const char *name = str_or_empty(t->name);
		const struct graph_value *v = graph_value(gr, name);

		if (strmap_get(names, name, NULL) && v != NULL &&
		    v->nconsumers == 0 && !v->is_output && !v->is_input)
			protobuf_c_message_free_unpacked(&t->base, NULL);
		else
			g->initializer[j++] = t;
	}
	g->n_initializer = j;
}
