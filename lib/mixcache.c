/* mixcache: see mixcache.h. */
#include <stdlib.h>
#include <string.h>

#include "mixcache.h"
#include "protoeq.h"
#include "strmap.h"
#include "util.h"

/* One sample's tensors of the reference run. */
struct sample {
	int s;
	struct strmap *ix;	/* name -> v */
	struct tensor *v;
	size_t n, cap;
};

struct mixcache {
	uint64_t budget, bytes;
	int valid;		/* a reference is set */
	struct strmap *node_ix;	/* first output -> nodes */
	ProtobufCMessage **nodes;	/* copies of the reference's */
	size_t nnodes;
	struct strmap *init_ix;	/* name -> inits */
	ProtobufCMessage **inits;	/* their raw_data, if lent: */
	ProtobufCBinaryData *raw;	/* where it is, else NULL */
	size_t ninits;
	struct sample *smp;
	size_t nsmp, capsmp;
	struct strmap *want;	/* the values kept (find_wanted) */
};

/*
 * A copy of msg (packed and read back), or NULL. Kept unpacked: a
 * variant's nodes are compared field by field (protoeq.h), not packed.
 */
static ProtobufCMessage *
copy_of(const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	ProtobufCMessage *c;
	uint8_t *p;

	if ((p = malloc(n ? n : 1)) == NULL)
		return NULL;
	n = protobuf_c_message_pack(msg, p);
	c = protobuf_c_message_unpack(msg->descriptor, NULL, n, p);
	free(p);
	return c;
}

static void
free_copies(ProtobufCMessage **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		protobuf_c_message_free_unpacked(v[i], NULL);
	free(v);
}

/* Drop the reference and its samples. */
static void
drop(struct mixcache *c)
{
	free_copies(c->nodes, c->nnodes);
	free_copies(c->inits, c->ninits);
	free(c->raw);
	c->raw = NULL;
	for (size_t i = 0; i < c->nsmp; i++) {
		tensor_release_n(c->smp[i].v, c->smp[i].n);
		free(c->smp[i].v);
		strmap_free(c->smp[i].ix);
	}
	free(c->smp);
	strmap_free(c->node_ix);
	strmap_free(c->init_ix);
	strmap_free(c->want);
	c->nodes = c->inits = NULL;
	c->smp = NULL;
	c->node_ix = c->init_ix = c->want = NULL;
	c->nnodes = c->ninits = c->nsmp = c->capsmp = 0;
	c->bytes = 0;
	c->valid = 0;
}

struct mixcache *
mixcache_new(uint64_t budget)
{
	struct mixcache *c = calloc(1, sizeof *c);

	if (c)
		c->budget = budget;
	return c;
}

void
mixcache_free(struct mixcache *c)
{
	if (c == NULL)
		return;
	drop(c);
	free(c);
}

/*
 * find_wanted()'s view of the reference: for each value a node makes
 * from non-constant ones, the QuantizeLinear nodes it depends on (the
 * places where variants differ), as a set of bits.
 */
struct deps {
	struct strmap *ix;	/* value -> index */
	const char **name;
	uint64_t *bits;		/* nwords per value */
	int *dq_from;		/* a DequantizeLinear's value: its input's */
	int *node;		/* each value's producer */
	size_t nwords, n;
	/* remake_init(): REMAKE_MAX per value, their count or -1, depth */
	int *remake, *remake_n, *remake_h;
};

static int
is_op(const Onnx__NodeProto *n, const char *op)
{
	return strcmp(n->op_type, op) == 0 && (n->domain == NULL ||
	    n->domain[0] == '\0' || strcmp(n->domain, "com.microsoft") == 0);
}

/* Does a change of value w imply one of value v (w's sources in v's)? */
static int
deps_within(const struct deps *d, int w, int v)
{
	const uint64_t *a = d->bits + (size_t)w * d->nwords;
	const uint64_t *b = d->bits + (size_t)v * d->nwords;

	for (size_t k = 0; k < d->nwords; k++)
		if (a[k] & ~b[k])
			return 0;
	return 1;
}

/* The values of g and their sources, in order (g is sorted). */
static int
deps_init(struct deps *d, const Onnx__GraphProto *g, struct strmap *konst)
{
	size_t nq = 0, nv = 0, q = 0;

	for (size_t i = 0; i < g->n_node; i++) {
		nq += is_op(g->node[i], "QuantizeLinear");
		nv += g->node[i]->n_output;
	}
	d->nwords = nq / 64 + 1;
	d->ix = strmap_new();
	d->name = calloc(nv + 1, sizeof *d->name);
	d->bits = calloc((nv + 1) * d->nwords, sizeof *d->bits);
	d->dq_from = calloc(nv + 1, sizeof *d->dq_from);
	d->node = calloc(nv + 1, sizeof *d->node);
	if (!d->ix || !d->name || !d->bits || !d->dq_from || !d->node)
		return -1;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		uint64_t *acc = d->bits + d->n * d->nwords;
		size_t nvar = 0, first = d->n;
		int v;

		for (size_t j = 0; j < n->n_input; j++)
			nvar += n->input[j][0] && !strmap_get(konst,
			    n->input[j], NULL);
		if (nvar == 0 && n->n_input > 0 && n->n_attribute == 0) {
			/* Made of constants: a weight's DequantizeLinear. */
			for (size_t j = 0; j < n->n_output; j++)
				if (strmap_put(konst, n->output[j], 1) < 0)
					return -1;
			continue;
		}
		memset(acc, 0, d->nwords * sizeof *acc);
		for (size_t j = 0; j < n->n_input; j++)
			if (strmap_get(d->ix, n->input[j], &v))
				for (size_t k = 0; k < d->nwords; k++)
					acc[k] |= d->bits[(size_t)v *
					    d->nwords + k];
		if (is_op(n, "QuantizeLinear")) {
			acc[q / 64] |= (uint64_t)1 << (q % 64);
			q++;
		}
		for (size_t j = 0; j < n->n_output; j++) {
			if (n->output[j][0] == '\0')
				continue;
			if (d->n != first)
				memcpy(d->bits + d->n * d->nwords, acc,
				    d->nwords * sizeof *acc);
			d->dq_from[d->n] = is_op(n, "DequantizeLinear") &&
			    n->n_input > 0 && strmap_get(d->ix, n->input[0],
			    &v) ? v : -1;
			d->name[d->n] = n->output[j];
			d->node[d->n] = (int)i;
			if (strmap_put(d->ix, n->output[j], (int)d->n++) < 0)
				return -1;
		}
	}
	return 0;
}

static void
deps_release(struct deps *d)
{
	strmap_free(d->ix);
	free(d->name);
	free(d->bits);
	free(d->dq_from);
	free(d->node);
	free(d->remake);
	free(d->remake_n);
	free(d->remake_h);
}

/*
 * Made again rather than kept: a QuantizeLinear's input, when a few
 * nodes (REMAKE_DEPTH, one output each) make it from DequantizeLinear
 * values, constants and graph inputs: those DequantizeLinear nodes'
 * inputs are kept instead, an integer type (PaddleOCR rec: a Conv's
 * float output becomes the 16-bit input it is made from; the reference
 * half the size, for a Conv run again per changed tensor).
 */
#define REMAKE_DEPTH	8
#define REMAKE_MAX	8

/*
 * For each value v, the values it is made again from (v's inputs made
 * so in turn, depth first, a DequantizeLinear's input for each of its
 * values read, repeats and all), at most REMAKE_MAX of them through at
 * most REMAKE_DEPTH nodes; or none (remake_n[v] -1). One pass over the
 * values in order, each node once: walking each path of a diamond anew
 * costs the product of the fan-ins.
 */
static int
remake_init(struct deps *d, const Onnx__GraphProto *g,
    const struct strmap *konst)
{
	d->remake = calloc((d->n + 1) * REMAKE_MAX, sizeof *d->remake);
	d->remake_n = calloc(d->n + 1, sizeof *d->remake_n);
	d->remake_h = calloc(d->n + 1, sizeof *d->remake_h);
	if (!d->remake || !d->remake_n || !d->remake_h)
		return -1;
	for (int v = 0; v < (int)d->n; v++) {
		const Onnx__NodeProto *p = g->node[d->node[v]];
		int *from = d->remake + (size_t)v * REMAKE_MAX;
		int n = 0, h = 1, u;
		int ok = p->n_output == 1 && !is_op(p, "QuantizeLinear");

		for (size_t j = 0; ok && j < p->n_attribute; j++)
			ok = !p->attribute[j]->g && !p->attribute[j]->n_graphs;
		for (size_t j = 0; ok && j < p->n_input; j++) {
			const char *s = p->input[j];

			/* constants and graph inputs are there anyway */
			if (!s[0] || strmap_get(konst, s, NULL) ||
			    !strmap_get(d->ix, s, &u))
				continue;
			if (d->dq_from[u] >= 0) {
				if ((ok = n < REMAKE_MAX))
					from[n++] = d->dq_from[u];
				continue;
			}
			ok = u < v && d->remake_n[u] >= 0 &&
			    n + d->remake_n[u] <= REMAKE_MAX;
			if (!ok)
				break;
			memcpy(from + n, d->remake + (size_t)u * REMAKE_MAX,
			    (size_t)d->remake_n[u] * sizeof *from);
			n += d->remake_n[u];
			if (h < d->remake_h[u] + 1)
				h = d->remake_h[u] + 1;
		}
		d->remake_n[v] = ok && h <= REMAKE_DEPTH ? n : -1;
		d->remake_h[v] = h;
	}
	return 0;
}

/* The values v is made again from into from[*n]; 0, or -1 (not so). */
static int
remake_from(const struct deps *d, int v, int *from, int *n)
{
	if (d->remake_n[v] < 0)
		return -1;
	*n = d->remake_n[v];
	memcpy(from, d->remake + (size_t)v * REMAKE_MAX,
	    (size_t)*n * sizeof *from);
	return 0;
}

/*
 * The values of m worth keeping: those a node of a variant may read
 * while their producer is skipped, that is when the node changed (a
 * QuantizeLinear's parameters: what variants change) or another of its
 * inputs did, one that can change alone (depends on a QuantizeLinear
 * this value does not). A DequantizeLinear's value is kept as its
 * input, four times smaller: it is quick to make again; so is what a
 * QuantizeLinear reads when remake_from() finds it so made. Not the
 * graph outputs: a variant's change reaches them. Anything else a
 * variant needs is made again from these (mixcache_match()).
 */
static int
find_wanted(struct mixcache *c, const Onnx__GraphProto *g)
{
	struct strmap *konst = strmap_new();
	struct deps d;
	int rc = -1, v, w;

	memset(&d, 0, sizeof d);
	if ((c->want = strmap_new()) == NULL || konst == NULL)
		goto out;
	for (size_t i = 0; i < g->n_initializer; i++)
		if (strmap_put(konst, str_or_empty(g->initializer[i]->name),
		    1) < 0)
			goto out;
	if (deps_init(&d, g, konst) < 0 || remake_init(&d, g, konst) < 0)
		goto out;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		int changes = is_op(n, "QuantizeLinear");

		for (size_t j = 0; j < n->n_input; j++) {
			int need = changes, from[REMAKE_MAX], nfrom = 0;

			if (!strmap_get(d.ix, n->input[j], &v))
				continue;
			if (changes && j == 0 && d.dq_from[v] < 0 &&
			    remake_from(&d, v, from, &nfrom) == 0) {
				for (int k = 0; k < nfrom; k++)
					if (strmap_put(c->want, d.name[from[k]],
					    1) < 0)
						goto out;
				continue;
			}
			for (size_t k = 0; !need && k < n->n_input; k++)
				need = k != j && strmap_get(d.ix, n->input[k],
				    &w) && !deps_within(&d, w, v);
			if (need && d.dq_from[v] >= 0)
				v = d.dq_from[v];
			if (need && strmap_put(c->want, d.name[v], 1) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	deps_release(&d);
	strmap_free(konst);
	return rc;
}

int
mixcache_want(struct mixcache *c, const char *name, struct err *e)
{
	if (c->valid && strmap_put(c->want, name, 1) < 0) {
		drop(c);
		return err_nomem(e);
	}
	return 0;
}

int
mixcache_begin(struct mixcache *c, const struct model *m, struct err *e)
{
	return mixcache_begin_lent(c, m, NULL, NULL, e);
}

/*
 * A copy of initializer t, without its bytes when stable() says they
 * stay (raw: where they are; else NULL).
 */
static ProtobufCMessage *
init_copy(const Onnx__TensorProto *t, ProtobufCBinaryData *raw,
    int (*stable)(void *, const Onnx__TensorProto *), void *ctx)
{
	Onnx__TensorProto bare;

	memset(raw, 0, sizeof *raw);
	if (stable == NULL || t->raw_data.len == 0 || !stable(ctx, t))
		return copy_of(&t->base);
	bare = *t;
	bare.raw_data.len = 0;
	*raw = t->raw_data;
	return copy_of(&bare.base);
}

int
mixcache_begin_lent(struct mixcache *c, const struct model *m,
    int (*stable)(void *ctx, const Onnx__TensorProto *t), void *ctx,
    struct err *e)
{
	const Onnx__GraphProto *g = m->proto->graph;

	drop(c);
	c->node_ix = strmap_new();
	c->init_ix = strmap_new();
	c->nodes = calloc(g->n_node + 1, sizeof *c->nodes);
	c->inits = calloc(g->n_initializer + 1, sizeof *c->inits);
	c->raw = calloc(g->n_initializer + 1, sizeof *c->raw);
	if (!c->node_ix || !c->init_ix || !c->nodes || !c->inits || !c->raw)
		goto nomem;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];

		if (n->n_output < 1 || n->output[0][0] == '\0')
			continue;
		if ((c->nodes[c->nnodes] = copy_of(&n->base)) == NULL)
			goto nomem;
		if (strmap_put(c->node_ix, n->output[0], (int)c->nnodes++) < 0)
			goto nomem;
	}
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *t = g->initializer[i];

		if ((c->inits[c->ninits] = init_copy(t, &c->raw[c->ninits],
		    stable, ctx)) == NULL)
			goto nomem;
		if (strmap_put(c->init_ix, str_or_empty(t->name),
		    (int)c->ninits++) < 0)
			goto nomem;
	}
	if (find_wanted(c, g) < 0)
		goto nomem;
	c->valid = 1;
	return 0;
nomem:
	drop(c);
	return err_nomem(e);
}

static struct sample *
sample_of(const struct mixcache *c, int s)
{
	for (size_t i = 0; i < c->nsmp; i++)
		if (c->smp[i].s == s)
			return &c->smp[i];
	return NULL;
}

/* Keep sample s's tensor t: taken when own (t itself), else copied. */
static int
put(struct mixcache *c, int s, const char *name, const struct tensor *t,
    struct tensor *own)
{
	struct sample *x;
	struct err scratch;
	uint64_t size = (uint64_t)t->nelem * dtype_size(t->dtype);

	if (!c->valid || !strmap_get(c->want, name, NULL))
		return 0;
	if (c->bytes + size > c->budget)
		goto over;
	if ((x = sample_of(c, s)) == NULL) {
		if (array_grow(&c->smp, &c->capsmp, c->nsmp,
		    sizeof *c->smp) < 0)
			goto over;
		x = &c->smp[c->nsmp];
		memset(x, 0, sizeof *x);
		x->s = s;
		if ((x->ix = strmap_new()) == NULL)
			goto over;
		c->nsmp++;
	}
	if (strmap_get(x->ix, name, NULL))
		return 0;
	if (array_grow(&x->v, &x->cap, x->n, sizeof *x->v) < 0)
		goto over;
	if (own) {
		memset(&x->v[x->n], 0, sizeof x->v[x->n]);
		tensor_move(&x->v[x->n], own);
	} else if (tensor_copy(&x->v[x->n], t, &scratch) < 0)
		goto over;
	if (strmap_put(x->ix, name, (int)x->n) < 0) {
		tensor_release(&x->v[x->n]);
		goto over;
	}
	x->n++;
	c->bytes += size;
	return 0;
over:
	/* Past the budget, or out of memory: no reference. */
	drop(c);
	return 0;
}

int
mixcache_record(struct mixcache *c, int s, const char *name,
    const struct tensor *t)
{
	return put(c, s, name, t, NULL);
}

int
mixcache_keep(struct mixcache *c, int s, const char *name, struct tensor *t)
{
	return put(c, s, name, t, t);
}

int
mixcache_has(const struct mixcache *c, int s)
{
	return c->valid && sample_of(c, s) != NULL;
}

const struct tensor *
mixcache_get(const struct mixcache *c, int s, const char *name)
{
	const struct sample *x = c->valid ? sample_of(c, s) : NULL;
	int i;

	if (x == NULL || !strmap_get(x->ix, name, &i))
		return NULL;
	return &x->v[i];
}

uint64_t
mixcache_bytes(const struct mixcache *c)
{
	return c->bytes;
}

/* mixcache_match()'s view of the variant: its names, and memos. */
struct variant {
	const Onnx__GraphProto *g;
	/*
	 * One look per name: a node output -> its node (>= 0), a graph
	 * input -> -1, initializer i -> -2 - i.
	 */
	struct strmap *names;
	signed char *same;	/* per initializer: -1 not compared yet */
};

/* Is the input name of a node what it was in the reference run? */
/* Is t the reference's initializer k? */
static int
init_same(const struct mixcache *c, int k, const Onnx__TensorProto *t)
{
	Onnx__TensorProto ref;

	if (c->raw[k].data == NULL)
		return protoeq(&t->base, c->inits[k]);
	ref = *(const Onnx__TensorProto *)c->inits[k];
	ref.raw_data = c->raw[k];	/* where it still is */
	return protoeq(&t->base, &ref.base);
}

/* skip: the nodes before found matching (their outputs are the same). */
static int
input_same(const struct mixcache *c, struct variant *v,
    const unsigned char *skip, const char *name)
{
	int x, i, k;

	if (name[0] == '\0')
		return 1;
	if (!strmap_get(v->names, name, &x))
		return 0;
	if (x >= -1)
		return x == -1 || skip[x];
	i = -2 - x;
	if (v->same[i] < 0)
		v->same[i] = strmap_get(c->init_ix, name, &k) &&
		    init_same(c, k, v->g->initializer[i]);
	return v->same[i];
}

/* Names of v->g in v's map; -1 when out of memory. */
static int
variant_init(struct variant *v, const Onnx__GraphProto *g)
{
	size_t n = g->n_initializer + g->n_input;

	memset(v, 0, sizeof *v);
	v->g = g;
	for (size_t i = 0; i < g->n_node; i++)
		n += g->node[i]->n_output;
	v->names = strmap_new();
	v->same = malloc(g->n_initializer + 1);
	if (!v->names || !v->same || strmap_reserve(v->names, n) < 0)
		return -1;
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_output; j++)
			if (g->node[i]->output[j][0] && strmap_put(v->names,
			    g->node[i]->output[j], (int)i) < 0)
				return -1;
	memset(v->same, -1, g->n_initializer + 1);
	/* Initializers first: one that is also an input is a constant. */
	for (size_t i = 0; i < g->n_initializer; i++)
		if (strmap_put(v->names, str_or_empty(g->initializer[i]->name),
		    -2 - (int)i) < 0)
			return -1;
	for (size_t i = 0; i < g->n_input; i++)
		if (strmap_add(v->names, str_or_empty(g->input[i]->name), -1,
		    NULL) < 0)
			return -1;
	return 0;
}

/* The node that makes name, when it is one that matched; else -1. */
static int
skipped_producer(const struct variant *v, const unsigned char *skip,
    const char *name)
{
	int k;

	return strmap_get(v->names, name, &k) && k >= 0 && skip[k] ? k : -1;
}

static void
variant_release(struct variant *v)
{
	strmap_free(v->names);
	free(v->same);
}

int
mixcache_match(const struct mixcache *c, const struct model *m,
    unsigned char *skip, struct err *e)
{
	const Onnx__GraphProto *g = m->proto->graph;
	struct variant v;
	int nmatch = 0, k;

	memset(skip, 0, g->n_node);
	if (!c->valid)
		return 0;
	if (variant_init(&v, g) < 0)
		goto nomem;
	/* In order: the QDQ models are sorted, so inputs come first. */
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		int ok = n->n_output >= 1 && n->output[0][0] != '\0' &&
		    strmap_get(c->node_ix, n->output[0], &k) &&
		    protoeq(&n->base, c->nodes[k]);

		for (size_t j = 0; ok && j < n->n_attribute; j++)
			ok = n->attribute[j]->g == NULL &&
			    n->attribute[j]->n_graphs == 0;
		for (size_t j = 0; ok && j < n->n_input; j++)
			ok = input_same(c, &v, skip, n->input[j]);
		if (!ok)
			continue;
		skip[i] = 1;
		nmatch++;
	}
	/*
	 * A node that runs reads what skipped nodes made: kept values, or
	 * made again by their producers (backwards, so that theirs are too).
	 * The graph outputs are read so too.
	 */
	for (size_t j = 0; j < g->n_output; j++) {
		const char *name = str_or_empty(g->output[j]->name);

		if (!strmap_get(c->want, name, NULL) &&
		    (k = skipped_producer(&v, skip, name)) >= 0) {
			skip[k] = 0;
			nmatch--;
		}
	}
	for (size_t i = g->n_node; i-- > 0; ) {
		const Onnx__NodeProto *n = g->node[i];

		if (skip[i])
			continue;
		for (size_t j = 0; j < n->n_input; j++) {
			const char *name = n->input[j];

			if (name[0] && !strmap_get(c->want, name, NULL) &&
			    (k = skipped_producer(&v, skip, name)) >= 0) {
				skip[k] = 0;
				nmatch--;
			}
		}
	}
	variant_release(&v);
	return nmatch;
nomem:
	variant_release(&v);
	return err_nomem(e);
}
