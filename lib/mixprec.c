/* mixprec: see mixprec.h, onnx-mixprec(1) and onnxq-regions(5). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "hist.h"
#include "infile.h"
#include "mixprec.h"
#include "qparams.h"
#include "rangesel.h"
#include "stats.h"
#include "strmap.h"
#include "tensor.h"

/* Names of tensors listed in one message before "...". */
#define LIST_MAX 8

/* Small helpers. */

struct aq;
struct mixprec;
static int method_is(const struct aq *q, const char *m);
static char *names_str(struct mixprec *mp, const int *v, int n, int tensors);

static char *
vfmt(const char *f, va_list ap)
{
	va_list aq;
	char *s;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, f, aq);
	va_end(aq);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	vsnprintf(s, (size_t)n + 1, f, ap);
	return s;
}

static char *
fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *
fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	s = vfmt(f, ap);
	va_end(ap);
	return s;
}

/* Grow *v (of *cap elements of size) to hold n + 1; -1 when out of memory. */
static int
grow(void *vp, size_t *cap, size_t n, size_t size)
{
	void **v = vp;
	size_t c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 16;
	if (c > SIZE_MAX / size || (nv = realloc(*v, c * size)) == NULL)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

/* "uint16", ..., "float". */
static const char *
type_name(int type)
{
	if (type == DT_FLOAT)
		return "float";
	return qparams_type_name(type) ? qparams_type_name(type) : "?";
}

/* Messages. */

static int
msgs_addf(struct config_msgs *m, const char *f, ...)
    __attribute__((format(printf, 2, 3)));

static int
msgs_addf(struct config_msgs *m, const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	s = vfmt(f, ap);
	va_end(ap);
	return config_msgs_add(m, s);
}

/* Regions files, read with config's YAML walking (config.h). */

/* A quantized type, or float. */
static int
parse_type(const char *s)
{
	if (strcasecmp(s, "float") == 0 || strcasecmp(s, "float32") == 0)
		return DT_FLOAT;
	return qparams_type_parse(s);
}

/* A name or a non-empty list of names. */
static void
get_names(struct config_yaml *L, const yaml_node_t *n, const char *ctx,
    struct config_list *out)
{
	if (n->type == YAML_SEQUENCE_NODE &&
	    n->data.sequence.items.top == n->data.sequence.items.start) {
		config_yaml_diag(L, n, ctx, "an empty list");
		return;
	}
	config_yaml_strlist(L, n, ctx, out);
}

struct regread {
	struct mixprec_region *r;
	int has_type;
};

static void
region_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn, const yaml_node_t *v, const char *ctx)
{
	struct regread *rr = arg;
	struct mixprec_region *r = rr->r;
	char *kctx = fmt("%s: %s", ctx, ks);
	const char *c = kctx ? kctx : ctx;
	const char *s;

	if (strcmp(ks, "nodes") == 0)
		get_names(L, v, c, &r->nodes);
	else if (strcmp(ks, "tensors") == 0)
		get_names(L, v, c, &r->tensors);
	else if (strcmp(ks, "op_types") == 0)
		get_names(L, v, c, &r->ops);
	else if (strcmp(ks, "type") == 0) {
		rr->has_type = 1;	/* a bad one is reported here */
		if ((s = config_yaml_scalar(L, v, c)) != NULL &&
		    (r->t.type = parse_type(s)) == DT_UNDEFINED)
			config_yaml_diag(L, v, c, "unknown type '%s' (uint8, "
			    "int8, uint16, int16, uint4, int4, float)", s);
	} else if (strcmp(ks, "symmetric") == 0)
		config_yaml_bool(L, v, c, &r->t.symmetric);
	else if (strcmp(ks, "reduce_range") == 0)
		config_yaml_bool(L, v, c, &r->t.reduce_range);
	else if (strcmp(ks, "power_of_two") == 0)
		config_yaml_bool(L, v, c, &r->t.pow2);
	else if (strcmp(ks, "name") == 0)
		config_yaml_scalar(L, v, c);	/* read_region took it */
	else {
		char *pk = config_printable(ks);

		config_yaml_diag(L, kn, ctx, "unknown key '%s' (nodes, "
		    "tensors, op_types, type, symmetric, reduce_range, "
		    "power_of_two, name)", pk ? pk : "?");
		free(pk);
	}
	free(kctx);
}

static void
read_region(struct config_yaml *L, const yaml_node_t *n, size_t i)
{
	struct mixprec_regions *rg = L->arg;
	struct mixprec_region *r = &rg->v[i];
	struct regread rr = { r, 0 };

	memset(r, 0, sizeof *r);
	r->t.symmetric = r->t.reduce_range = r->t.pow2 = -1;
	r->line = (int)n->start_mark.line + 1;
	r->col = (int)n->start_mark.column + 1;
	if ((r->label = fmt("region %zu", i + 1)) == NULL) {
		L->nomem = 1;
		return;
	}
	if (n->type != YAML_MAPPING_NODE) {
		config_yaml_diag(L, n, r->label, "expected a mapping (nodes, "
		    "tensors, type, ...), not %s", config_yaml_kind(n));
		return;
	}
	/* The name first, so every message carries it. */
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	    p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(L->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(L->doc, p->value);

		if (k && v && k->type == YAML_SCALAR_NODE &&
		    v->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, "name") == 0) {
			char *ps = config_printable(
			    (const char *)v->data.scalar.value);
			char *label = ps ? fmt("%s (%s)", r->label, ps) : NULL;

			free(ps);
			if (label) {
				free(r->label);
				r->label = label;
			}
			break;
		}
	}
	config_yaml_each_pair(L, n, r->label, region_pair, &rr);
	if (!rr.has_type)
		config_yaml_diag(L, n, r->label, "needs a type (uint16, int16, "
		    "..., float)");
	if (r->nodes.n + r->tensors.n + r->ops.n == 0)
		config_yaml_diag(L, n, r->label, "names no nodes, tensors or "
		    "op_types");
	if (r->t.type == DT_FLOAT &&
	    (r->t.symmetric >= 0 || r->t.reduce_range >= 0 || r->t.pow2 >= 0))
		config_yaml_diag(L, n, r->label, "a float region takes no "
		    "symmetric, reduce_range or power_of_two");
}

static void
top_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn, const yaml_node_t *v, const char *ctx)
{
	struct mixprec_regions *rg = L->arg;

	(void)arg;
	if (strcmp(ks, "version") == 0) {
		const char *s = config_yaml_scalar(L, v, "version");

		if (s && strcmp(s, "1") != 0)
			config_yaml_diag(L, v, "version", "'%s': only version "
			    "1 exists", s);
	} else if (strcmp(ks, "regions") == 0) {
		size_t n;

		if (v->type != YAML_SEQUENCE_NODE) {
			config_yaml_diag(L, v, "regions", "expected a list of "
			    "regions, not %s", config_yaml_kind(v));
			return;
		}
		n = (size_t)(v->data.sequence.items.top -
		    v->data.sequence.items.start);
		if ((rg->v = calloc(n ? n : 1, sizeof *rg->v)) == NULL) {
			L->nomem = 1;
			return;
		}
		for (size_t i = 0; i < n && !L->nomem; i++) {
			yaml_node_t *it = config_yaml_take(L,
			    v->data.sequence.items.start[i], "regions", NULL);

			rg->n = i + 1;
			if (it == NULL) {
				memset(&rg->v[i], 0, sizeof rg->v[i]);
				continue;
			}
			read_region(L, it, i);
		}
		if (n == 0)
			config_yaml_diag(L, v, "regions", "an empty list");
	} else {
		char *pk = config_printable(ks);

		config_yaml_diag(L, kn, ctx, "unknown key '%s' (version, "
		    "regions)", pk ? pk : "?");
		free(pk);
	}
}

void
mixprec_regions_free(struct mixprec_regions *rg)
{
	if (rg == NULL)
		return;
	for (size_t i = 0; i < rg->n; i++) {
		struct mixprec_region *r = &rg->v[i];

		free(r->label);
		config_list_release(&r->nodes);
		config_list_release(&r->tensors);
		config_list_release(&r->ops);
	}
	free(rg->v);
	free(rg->path);
	free(rg);
}

struct mixprec_regions *
mixprec_regions_load_mem(const char *name, const char *text, size_t len,
    struct config_msgs *msgs, struct err *e)
{
	yaml_parser_t p;
	yaml_document_t doc, doc2;
	struct config_yaml L;
	struct mixprec_regions *rg;
	yaml_node_t *root;
	int have_doc = 0;

	if (len > (size_t)MIXPREC_REGIONS_MAX_BYTES) {
		err_set(e, "%s: larger than %ld bytes", name,
		    MIXPREC_REGIONS_MAX_BYTES);
		return NULL;
	}
	memset(&L, 0, sizeof L);
	L.name = name;
	L.msgs = msgs;
	if ((rg = calloc(1, sizeof *rg)) == NULL ||
	    (rg->path = strdup(name)) == NULL) {
		mixprec_regions_free(rg);
		err_nomem(e);
		return NULL;
	}
	L.arg = rg;
	if (!yaml_parser_initialize(&p)) {
		mixprec_regions_free(rg);
		err_nomem(e);
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		config_yaml_parse_error(&L, &p);
		goto done;
	}
	have_doc = 1;
	L.doc = &doc;
	L.nnodes = (size_t)(doc.nodes.top - doc.nodes.start);
	if ((L.seen = calloc(L.nnodes ? L.nnodes : 1, 1)) == NULL) {
		L.nomem = 1;
		goto done;
	}
	root = yaml_document_get_root_node(&doc);
	if (root == NULL || (root->type == YAML_SCALAR_NODE &&
	    root->data.scalar.length == 0)) {
		config_yaml_diag(&L, NULL, "", "no regions (the file is "
		    "empty)");
		goto done;
	}
	root = config_yaml_take(&L, 1, "", NULL);
	if (root && root->type != YAML_MAPPING_NODE)
		config_yaml_diag(&L, root, "", "expected a mapping with "
		    "'regions', not %s", config_yaml_kind(root));
	else if (root) {
		config_yaml_each_pair(&L, root, "", top_pair, NULL);
		if (rg->v == NULL && L.nerr == 0)
			config_yaml_diag(&L, root, "", "no 'regions' list");
	}
	if (!yaml_parser_load(&p, &doc2))
		config_yaml_parse_error(&L, &p);
	else {
		if (yaml_document_get_root_node(&doc2))
			config_yaml_diag(&L,
			    yaml_document_get_root_node(&doc2), "",
			    "only one YAML document is allowed");
		yaml_document_delete(&doc2);
	}
done:
	free(L.seen);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	if (L.nomem) {
		mixprec_regions_free(rg);
		err_nomem(e);
		return NULL;
	}
	if (L.nerr > 0) {
		mixprec_regions_free(rg);
		if (L.nerr == 1 && msgs->n > 0)
			err_set(e, "%s", msgs->v[msgs->n - 1]);
		else
			err_set(e, "%s: %zu errors", name, L.nerr);
		return NULL;
	}
	return rg;
}

struct mixprec_regions *
mixprec_regions_load(const char *path, struct config_msgs *msgs,
    struct err *e)
{
	struct mixprec_regions *rg;
	void *buf;
	size_t n;

	if (infile_read(path, (size_t)MIXPREC_REGIONS_MAX_BYTES, &buf, &n,
	    e) < 0)
		return NULL;
	rg = mixprec_regions_load_mem(path, buf, n, msgs, e);
	free(buf);
	return rg;
}

/* The stream. */

/* An activation's parameters (activations are quantized per tensor). */
struct aq {
	int type;
	float scale;
	int32_t zp;
	const char *method;	/* static or in a record; NULL: none */
	int from;		/* "shared": the source tensor, -1 none */
	int has_range;
	float rmin, rmax;
};

/* Parameters computed for a type, kept for the next resolve. */
struct cached {
	struct mixprec_type t;	/* flags resolved */
	struct aq q;
};

struct mnode {
	const char *name, *op;	/* in the node record */
	char **in, **out;	/* stream_rec_names blocks */
	size_t nin, nout;
	int *tin, *tout;	/* tensor index per slot, -1 when absent */
	int *q;			/* distinct quantized tensors read or written */
	int nq;
	int fold_into;		/* fold record: this node is folded into */
	int folded_by;		/* the node folded into this one */
	int fold_rec;
	/* request */
	int req;		/* index into mp->reqs, -1 none */
	struct mixprec_type rt;
	/* result */
	int fold_dropped;
};

struct mtensor {
	char *name;
	int producer;		/* node, -1 none */
	int *cons;		/* distinct reading nodes */
	int ncons;
	size_t capcons;
	int qrec;		/* qparam role=act record, -1 */
	struct aq base;
	int flags_done, sym, rr, pow2;	/* flags that reproduce base */
	int conv_rec;		/* convert record in the stream, -1 */
	struct aq conv0;
	int conv0_all;		/* recv not given: every reader */
	int *recv0;
	int nrecv0;
	int c0flags_done, c0sym, c0rr, c0pow2;
	int stat_rec;
	int *hist_recs;
	int nhist;
	size_t caphist;
	int is_wb;		/* a weight or bias qparam subject */
	int stats_done, stats_ok, reselect;	/* range re-selection */
	struct tstats ts;
	struct hist_bin *bins;
	size_t nbins;
	struct cached *cache;
	size_t ncache, capcache;
	/* request (a graph input named by a region) */
	int req;
	struct mixprec_type rt;
	/* result */
	int floated;
	int prod_changed;
	struct aq prod;
	struct mixprec_type ptype;	/* flags resolved */
	int has_conv, conv_changed;
	struct aq conv;
	int *recv;
	int nrecv;
	size_t caprecv;
	int fold_mid;		/* 1 + a fold's output whose qparam this
				   takes when the fold is dropped; 0 none */
	int synth;		/* so it does now: written after synth_after's */
	int synth_after;
};

/* A weight or bias qparam record. */
struct mwb {
	int rec;
	const char *name;
	int is_bias;
	float *scale;		/* as read */
	size_t n;
	int64_t adjusted;
	/* biases */
	int input;		/* tensor */
	int weight;		/* index into mp->wbs, -1 */
	int node;		/* the consumer, from the bias record; -1 */
	double beta;
	float *babs;		/* |max| per bias channel, or over all */
	size_t nb;
	/* result */
	float *nscale;
	int changed, dropped, raised;
};

/* Request req asked for node (or, when node < 0, graph input tensor). */
struct reqpair {
	int req, node, tensor;
};

struct mixprec {
	char **headers;
	size_t nheaders, caphdr;
	struct stream_rec **recs;
	size_t nrecs, caprecs;
	struct mnode *nodes;
	size_t nnodes, capnodes;
	struct mtensor *t;
	size_t nt, capt;
	struct mwb *wbs;
	size_t nwbs, capwbs;
	struct strmap *node_ix, *t_ix, *wb_ix, *bias_ix;
	int *bias_recs;		/* `bias` records, by mp->bias_ix */
	size_t nbias, capbias;
	char **reqs;		/* who asked, per request */
	size_t nreqs, capreqs;
	struct reqpair *pairs;	/* what each request asked for */
	size_t npairs, cappairs;
	int resolved;
	char model_sha[65];	/* of the #model header; "" none */
	mixprec_note_fn note;
	void *note_ctx;
};

static void
note(struct mixprec *mp, const char *f, ...) __attribute__((format(printf, 2,
    3)));

static void
note(struct mixprec *mp, const char *f, ...)
{
	va_list ap;
	char *s;

	if (mp->note == NULL)
		return;
	va_start(ap, f);
	s = vfmt(f, ap);
	va_end(ap);
	if (s)
		mp->note(mp->note_ctx, s);
	free(s);
}

void
mixprec_set_note(struct mixprec *mp, mixprec_note_fn fn, void *ctx)
{
	mp->note = fn;
	mp->note_ctx = ctx;
}

static int
tensor_at(struct mixprec *mp, const char *name, struct err *e)
{
	struct mtensor *t;
	int i;

	if (strmap_get(mp->t_ix, name, &i))
		return i;
	if (mp->nt >= INT32_MAX || grow(&mp->t, &mp->capt, mp->nt,
	    sizeof *mp->t) < 0)
		return err_nomem(e);
	t = &mp->t[mp->nt];
	memset(t, 0, sizeof *t);
	t->producer = -1;
	t->qrec = t->conv_rec = t->stat_rec = -1;
	t->req = -1;
	t->base.from = t->conv0.from = -1;
	if ((t->name = strdup(name)) == NULL ||
	    strmap_put(mp->t_ix, name, (int)mp->nt) < 0) {
		free(t->name);
		return err_nomem(e);
	}
	return (int)mp->nt++;
}

static int
add_int(int **v, int *n, size_t *cap, int x)
{
	for (int i = 0; i < *n; i++)
		if ((*v)[i] == x)
			return 0;
	if (grow(v, cap, (size_t)*n, sizeof **v) < 0)
		return -1;
	(*v)[(*n)++] = x;
	return 0;
}

static int
read_node(struct mixprec *mp, const struct stream_rec *rec, struct err *e)
{
	struct mnode *n;
	const char *op;

	if (strmap_get(mp->node_ix, rec->subject, NULL))
		return stream_rec_err(rec, e, "node %s given twice",
		    rec->subject);
	if ((op = stream_rec_get(rec, "op")) == NULL)
		return stream_rec_err(rec, e, "node %s: no op", rec->subject);
	if (mp->nnodes >= INT32_MAX || grow(&mp->nodes, &mp->capnodes,
	    mp->nnodes, sizeof *mp->nodes) < 0)
		return err_nomem(e);
	n = &mp->nodes[mp->nnodes];
	memset(n, 0, sizeof *n);
	n->name = rec->subject;
	n->op = op;
	n->fold_into = n->folded_by = n->fold_rec = n->req = -1;
	if (stream_rec_names(rec, "in", &n->in, &n->nin, e) < 0 ||
	    stream_rec_names(rec, "out", &n->out, &n->nout, e) < 0) {
		free(n->in);
		return -1;
	}
	if ((n->tin = calloc(n->nin + 1, sizeof *n->tin)) == NULL ||
	    (n->tout = calloc(n->nout + 1, sizeof *n->tout)) == NULL) {
		free(n->tin);
		free(n->in);
		free(n->out);
		return err_nomem(e);
	}
	if (strmap_put(mp->node_ix, rec->subject, (int)mp->nnodes) < 0)
		return err_nomem(e);
	mp->nnodes++;
	for (size_t i = 0; i < n->nin; i++) {
		int t;

		n->tin[i] = -1;
		if (n->in[i][0] == '\0')
			continue;
		if ((t = tensor_at(mp, n->in[i], e)) < 0)
			return -1;
		n->tin[i] = t;
		if (add_int(&mp->t[t].cons, &mp->t[t].ncons,
		    &mp->t[t].capcons, (int)mp->nnodes - 1) < 0)
			return err_nomem(e);
	}
	for (size_t i = 0; i < n->nout; i++) {
		int t;

		n->tout[i] = -1;
		if (n->out[i][0] == '\0')
			continue;
		if ((t = tensor_at(mp, n->out[i], e)) < 0)
			return -1;
		if (mp->t[t].producer >= 0)
			return stream_rec_err(rec, e, "tensor %s has two "
			    "producers, %s and %s", n->out[i],
			    mp->nodes[mp->t[t].producer].name, n->name);
		/* node records come in topological order (onnxq-stream(5)) */
		if (mp->t[t].ncons > 0)
			return stream_rec_err(rec, e, "node %s: output %s is read "
			    "before it is produced (node records out of "
			    "topological order, or a cycle)", n->name, n->out[i]);
		mp->t[t].producer = (int)mp->nnodes - 1;
		n->tout[i] = t;
	}
	return 0;
}

static int
type_of(const struct stream_rec *rec, int *type, struct err *e)
{
	const char *s = stream_rec_get(rec, "type");

	if (s == NULL)
		return stream_rec_err(rec, e, "no type");
	if ((*type = qparams_type_parse(s)) == DT_UNDEFINED)
		return stream_rec_err(rec, e, "type %s: not a quantized type",
		    s);
	return 0;
}

/* The per-tensor parameters of an act qparam or a convert record. */
static int
read_aq(struct mixprec *mp, const struct stream_rec *rec, struct aq *q,
    struct err *e)
{
	int64_t zp, lo, hi;

	memset(q, 0, sizeof *q);
	q->from = -1;
	if (type_of(rec, &q->type, e) < 0)
		return -1;
	if (stream_rec_has(rec, "axis"))
		return stream_rec_err(rec, e, "%s %s: an activation quantized "
		    "per channel", rec->type, rec->subject);
	if (stream_rec_float(rec, "scale", &q->scale, e) < 0 ||
	    stream_rec_int(rec, "zp", &zp, e) < 0)
		return -1;
	qparams_type_limits(q->type, &lo, &hi);
	if (zp < lo || zp > hi)
		return stream_rec_err(rec, e, "zp %lld does not fit %s",
		    (long long)zp, type_name(q->type));
	if (!(q->scale > 0) || !isfinite(q->scale))
		return stream_rec_err(rec, e, "scale %g is not positive",
		    (double)q->scale);
	q->zp = (int32_t)zp;
	q->method = stream_rec_get(rec, "method");
	if (stream_rec_has(rec, "from")) {
		char *from;
		int t;

		if (stream_rec_name(rec, "from", &from, e) < 0)
			return -1;
		t = tensor_at(mp, from, e);
		free(from);
		if (t < 0)
			return -1;
		q->from = t;
	}
	if (stream_rec_has(rec, "rmin") && stream_rec_has(rec, "rmax")) {
		if (stream_rec_float(rec, "rmin", &q->rmin, e) < 0 ||
		    stream_rec_float(rec, "rmax", &q->rmax, e) < 0)
			return -1;
		q->has_range = isfinite(q->rmin) && isfinite(q->rmax) &&
		    q->rmin <= q->rmax;
	}
	return 0;
}

static int
read_wb(struct mixprec *mp, const struct stream_rec *rec, int is_bias,
    struct err *e)
{
	struct mwb *w;
	size_t n;

	if (strmap_get(mp->wb_ix, rec->subject, NULL))
		return stream_rec_err(rec, e, "qparam %s given twice",
		    rec->subject);
	if (mp->nwbs >= INT32_MAX || grow(&mp->wbs, &mp->capwbs, mp->nwbs,
	    sizeof *mp->wbs) < 0)
		return err_nomem(e);
	w = &mp->wbs[mp->nwbs];
	memset(w, 0, sizeof *w);
	w->rec = (int)mp->nrecs;
	w->name = rec->subject;
	w->is_bias = is_bias;
	w->input = w->weight = w->node = -1;
	w->beta = 1;
	if (stream_rec_floats(rec, "scale", &w->scale, &n, e) < 0)
		return -1;
	w->n = n;
	if (n == 0) {
		free(w->scale);
		return stream_rec_err(rec, e, "scale: an empty list");
	}
	if (stream_rec_has(rec, "adjusted") &&
	    stream_rec_int(rec, "adjusted", &w->adjusted, e) < 0) {
		free(w->scale);
		return -1;
	}
	if (strmap_put(mp->wb_ix, rec->subject, (int)mp->nwbs) < 0) {
		free(w->scale);
		return err_nomem(e);
	}
	mp->nwbs++;
	return 0;
}

static int
read_qparam(struct mixprec *mp, const struct stream_rec *rec, struct err *e)
{
	const char *role = stream_rec_get(rec, "role");
	struct mtensor *t;
	int i;

	if (role == NULL)
		return stream_rec_err(rec, e, "qparam %s: no role",
		    rec->subject);
	if (strcmp(role, "weight") == 0 || strcmp(role, "bias") == 0) {
		if ((i = tensor_at(mp, rec->subject, e)) < 0)
			return -1;
		mp->t[i].is_wb = 1;
		return read_wb(mp, rec, strcmp(role, "bias") == 0, e);
	}
	if (strcmp(role, "act") != 0)
		return stream_rec_err(rec, e, "qparam %s: unknown role %s",
		    rec->subject, role);
	if ((i = tensor_at(mp, rec->subject, e)) < 0)
		return -1;
	t = &mp->t[i];
	if (t->qrec >= 0)
		return stream_rec_err(rec, e, "qparam %s given twice",
		    rec->subject);
	if (read_aq(mp, rec, &mp->t[i].base, e) < 0)
		return -1;
	mp->t[i].qrec = (int)mp->nrecs;
	return 0;
}

static int
read_convert(struct mixprec *mp, const struct stream_rec *rec, struct err *e)
{
	struct aq q;
	char **recv = NULL;
	size_t nrecv = 0;
	int i;

	if (read_aq(mp, rec, &q, e) < 0 ||
	    (i = tensor_at(mp, rec->subject, e)) < 0)
		return -1;
	if (mp->t[i].conv_rec >= 0)
		return stream_rec_err(rec, e, "convert %s given twice",
		    rec->subject);
	mp->t[i].conv0 = q;
	mp->t[i].conv_rec = (int)mp->nrecs;
	mp->t[i].conv0_all = !stream_rec_has(rec, "recv");
	if (!mp->t[i].conv0_all) {
		size_t cap = 0;

		if (stream_rec_names(rec, "recv", &recv, &nrecv, e) < 0)
			return -1;
		for (size_t k = 0; k < nrecv; k++) {
			int nd;

			if (!strmap_get(mp->node_ix, recv[k], &nd)) {
				stream_rec_err(rec, e, "convert %s: recv: no "
				    "node %s", rec->subject, recv[k]);
				free(recv);
				return -1;
			}
			if (add_int(&mp->t[i].recv0, &mp->t[i].nrecv0, &cap,
			    nd) < 0) {
				free(recv);
				return err_nomem(e);
			}
		}
		free(recv);
	}
	return 0;
}

static int
read_fold(struct mixprec *mp, const struct stream_rec *rec, struct err *e)
{
	char *into;
	int n, p;

	if (stream_rec_name(rec, "into", &into, e) < 0)
		return -1;
	if (!strmap_get(mp->node_ix, rec->subject, &n) ||
	    !strmap_get(mp->node_ix, into, &p)) {
		stream_rec_err(rec, e, "fold %s into %s: no such node",
		    rec->subject, into);
		free(into);
		return -1;
	}
	free(into);
	if (mp->nodes[n].fold_into >= 0 || mp->nodes[p].folded_by >= 0)
		return stream_rec_err(rec, e, "fold %s: given twice",
		    rec->subject);
	mp->nodes[n].fold_into = p;
	mp->nodes[n].fold_rec = (int)mp->nrecs;
	mp->nodes[p].folded_by = n;
	return 0;
}

static int
add_record(struct mixprec *mp, const struct stream_rec *rec, struct err *e)
{
	struct stream_rec *d;
	const char *type = rec->type;
	int i;

	if (grow(&mp->recs, &mp->caprecs, mp->nrecs, sizeof *mp->recs) < 0)
		return err_nomem(e);
	if ((d = stream_rec_dup(rec, e)) == NULL)
		return -1;
	mp->recs[mp->nrecs] = d;
	if (strcmp(type, "node") == 0) {
		if (read_node(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "qparam") == 0) {
		if (read_qparam(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "convert") == 0) {
		if (read_convert(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "fold") == 0) {
		if (read_fold(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "stat") == 0) {
		if ((i = tensor_at(mp, d->subject, e)) < 0)
			goto fail;
		if (mp->t[i].stat_rec >= 0) {
			stream_rec_err(d, e, "stat %s given twice", d->subject);
			goto fail;
		}
		mp->t[i].stat_rec = (int)mp->nrecs;
	} else if (strcmp(type, "hist") == 0) {
		struct mtensor *t;

		if ((i = tensor_at(mp, d->subject, e)) < 0)
			goto fail;
		t = &mp->t[i];
		if (grow(&t->hist_recs, &t->caphist, (size_t)t->nhist,
		    sizeof *t->hist_recs) < 0) {
			err_nomem(e);
			goto fail;
		}
		t->hist_recs[t->nhist++] = (int)mp->nrecs;
	} else if (strcmp(type, "bias") == 0) {
		if (!strmap_get(mp->bias_ix, d->subject, NULL)) {
			if (grow(&mp->bias_recs, &mp->capbias, mp->nbias,
			    sizeof *mp->bias_recs) < 0 ||
			    strmap_put(mp->bias_ix, d->subject,
			    (int)mp->nbias) < 0) {
				err_nomem(e);
				goto fail;
			}
			mp->bias_recs[mp->nbias++] = (int)mp->nrecs;
		}
	}
	mp->nrecs++;
	return 0;
fail:
	stream_rec_free(d);
	return -1;
}

/* After reading: the tensors nodes touch, fold checks, bias links. */
static int
link_all(struct mixprec *mp, struct err *e)
{
	for (size_t i = 0; i < mp->nnodes; i++) {
		struct mnode *n = &mp->nodes[i];
		int mid, out;

		/* A folded Relu's input may get a qparam if the fold goes. */
		if (n->fold_into < 0 || n->nin < 1 || n->nout < 1 ||
		    (mid = n->tin[0]) < 0 || (out = n->tout[0]) < 0 ||
		    mp->t[mid].qrec >= 0 || mp->t[out].qrec < 0)
			continue;
		mp->t[mid].fold_mid = out + 1;
	}
	for (size_t i = 0; i < mp->nnodes; i++) {
		struct mnode *n = &mp->nodes[i];
		size_t cap = 0;

		for (size_t k = 0; k < n->nin + n->nout; k++) {
			int t = k < n->nin ? n->tin[k] : n->tout[k - n->nin];

			if (t >= 0 && (mp->t[t].qrec >= 0 || mp->t[t].fold_mid) &&
			    add_int(&n->q, &n->nq, &cap, t) < 0)
				return err_nomem(e);
		}
	}
	for (size_t i = 0; i < mp->nt; i++) {
		struct mtensor *t = &mp->t[i];

		if (t->conv_rec >= 0 && t->qrec < 0)
			return stream_rec_err(mp->recs[t->conv_rec], e,
			    "convert %s: the tensor has no qparam record",
			    t->name);
		if (t->base.from >= 0 && mp->t[t->base.from].qrec < 0)
			t->base.from = -1;	/* nothing to share with */
	}
	for (size_t i = 0; i < mp->nwbs; i++) {
		struct mwb *w = &mp->wbs[i];
		const struct stream_rec *rec = mp->recs[w->rec], *br;
		char *s;
		int k;

		if (!w->is_bias)
			continue;
		if (stream_rec_name(rec, "input", &s, e) < 0)
			return -1;
		k = tensor_at(mp, s, e);
		free(s);
		if (k < 0)
			return -1;
		w->input = k;
		if (stream_rec_name(rec, "weight", &s, e) < 0)
			return -1;
		if (!strmap_get(mp->wb_ix, s, &w->weight))
			w->weight = -1;
		free(s);
		if (!strmap_get(mp->bias_ix, w->name, &k))
			continue;	/* cannot be recomputed; see resolve */
		br = mp->recs[mp->bias_recs[k]];
		if (stream_rec_name(br, "node", &s, e) < 0)
			return -1;
		if (!strmap_get(mp->node_ix, s, &w->node))
			w->node = -1;
		free(s);
		if (stream_rec_has(br, "beta") &&
		    stream_rec_double(br, "beta", &w->beta, e) < 0)
			return -1;
		if (stream_rec_has(br, "axis")) {
			float *cmin, *cmax;
			size_t n1, n2;

			if (stream_rec_floats(br, "cmin", &cmin, &n1, e) < 0)
				return -1;
			if (stream_rec_floats(br, "cmax", &cmax, &n2, e) < 0) {
				free(cmin);
				return -1;
			}
			if (n1 != n2 || n1 == 0) {
				free(cmin);
				free(cmax);
				return stream_rec_err(br, e, "cmin and cmax "
				    "differ in length");
			}
			for (size_t c = 0; c < n1; c++)
				cmin[c] = fmaxf(fabsf(cmin[c]), fabsf(cmax[c]));
			free(cmax);
			w->babs = cmin;
			w->nb = n1;
		} else {
			float lo, hi;

			if (stream_rec_float(br, "min", &lo, e) < 0 ||
			    stream_rec_float(br, "max", &hi, e) < 0)
				return -1;
			if ((w->babs = malloc(sizeof *w->babs)) == NULL)
				return err_nomem(e);
			w->babs[0] = fmaxf(fabsf(lo), fabsf(hi));
			w->nb = 1;
		}
	}
	return 0;
}

/* "#model PATH sha256=HEX ...": keep HEX. */
static void
read_model_header(struct mixprec *mp, const char *h)
{
	const char *p;

	if (strncmp(h, "#model\t", 7) != 0)
		return;
	for (p = strchr(h + 7, '\t'); p; p = strchr(p + 1, '\t'))
		if (strncmp(p + 1, "sha256=", 7) == 0 &&
		    strcspn(p + 8, "\t") == 64) {
			memcpy(mp->model_sha, p + 8, 64);
			mp->model_sha[64] = '\0';
		}
}

struct mixprec *
mixprec_read(struct stream_reader *r, struct err *e)
{
	struct mixprec *mp;
	int item, nq = 0;

	if ((mp = calloc(1, sizeof *mp)) == NULL ||
	    (mp->node_ix = strmap_new()) == NULL ||
	    (mp->t_ix = strmap_new()) == NULL ||
	    (mp->wb_ix = strmap_new()) == NULL ||
	    (mp->bias_ix = strmap_new()) == NULL) {
		mixprec_free(mp);
		err_nomem(e);
		return NULL;
	}
	while ((item = stream_next(r, e)) > 0) {
		if (item == STREAM_HEADER) {
			char *h;

			if (grow(&mp->headers, &mp->caphdr, mp->nheaders,
			    sizeof *mp->headers) < 0 ||
			    (h = strdup(stream_header(r))) == NULL) {
				err_nomem(e);
				goto fail;
			}
			mp->headers[mp->nheaders++] = h;
			read_model_header(mp, h);
			continue;
		}
		if (add_record(mp, stream_record(r), e) < 0)
			goto fail;
	}
	if (item < 0)
		goto fail;
	for (size_t i = 0; i < mp->nt; i++)
		nq += mp->t[i].qrec >= 0;
	if (mp->nnodes == 0) {
		err_set(e, "%s: no node records (onnx-calib writes them)",
		    stream_name(r));
		goto fail;
	}
	if (nq == 0) {
		err_set(e, "%s: no qparam records for activations (run "
		    "onnx-qparams first)", stream_name(r));
		goto fail;
	}
	if (link_all(mp, e) < 0)
		goto fail;
	mixprec_clear(mp);
	return mp;
fail:
	mixprec_free(mp);
	return NULL;
}

void
mixprec_free(struct mixprec *mp)
{
	if (mp == NULL)
		return;
	for (size_t i = 0; i < mp->nheaders; i++)
		free(mp->headers[i]);
	free(mp->headers);
	for (size_t i = 0; i < mp->nnodes; i++) {
		struct mnode *n = &mp->nodes[i];

		free(n->in);
		free(n->out);
		free(n->tin);
		free(n->tout);
		free(n->q);
	}
	free(mp->nodes);
	for (size_t i = 0; i < mp->nt; i++) {
		struct mtensor *t = &mp->t[i];

		free(t->name);
		free(t->cons);
		free(t->recv0);
		free(t->hist_recs);
		if (t->stats_done)
			tstats_release(&t->ts);
		free(t->bins);
		free(t->cache);
		free(t->recv);
	}
	free(mp->t);
	for (size_t i = 0; i < mp->nwbs; i++) {
		free(mp->wbs[i].scale);
		free(mp->wbs[i].babs);
		free(mp->wbs[i].nscale);
	}
	free(mp->wbs);
	for (size_t i = 0; i < mp->nrecs; i++)
		stream_rec_free(mp->recs[i]);
	free(mp->recs);
	for (size_t i = 0; i < mp->nreqs; i++)
		free(mp->reqs[i]);
	free(mp->reqs);
	free(mp->pairs);
	free(mp->bias_recs);
	strmap_free(mp->node_ix);
	strmap_free(mp->t_ix);
	strmap_free(mp->wb_ix);
	strmap_free(mp->bias_ix);
	free(mp);
}

/* Queries. */

int
mixprec_nnodes(const struct mixprec *mp)
{
	return (int)mp->nnodes;
}

const char *
mixprec_node_name(const struct mixprec *mp, int node)
{
	return mp->nodes[node].name;
}

const char *
mixprec_node_op(const struct mixprec *mp, int node)
{
	return mp->nodes[node].op;
}

int
mixprec_node_find(const struct mixprec *mp, const char *name)
{
	int i;

	return strmap_get(mp->node_ix, name, &i) ? i : -1;
}

int
mixprec_node_fold_partner(const struct mixprec *mp, int node)
{
	const struct mnode *n = &mp->nodes[node];

	return n->fold_into >= 0 ? n->fold_into : n->folded_by;
}

int
mixprec_node_tensors(const struct mixprec *mp, int node, const int **v)
{
	*v = mp->nodes[node].q;
	return mp->nodes[node].nq;
}

int
mixprec_node_inputs(const struct mixprec *mp, int node, const int **v)
{
	*v = mp->nodes[node].tin;
	return (int)mp->nodes[node].nin;
}

int
mixprec_ntensors(const struct mixprec *mp)
{
	return (int)mp->nt;
}

const char *
mixprec_tensor_name(const struct mixprec *mp, int t)
{
	return mp->t[t].name;
}

int
mixprec_tensor_find(const struct mixprec *mp, const char *name)
{
	int i;

	return strmap_get(mp->t_ix, name, &i) ? i : -1;
}

int
mixprec_tensor_quantized(const struct mixprec *mp, int t)
{
	return mp->t[t].qrec >= 0;
}

int
mixprec_tensor_type(const struct mixprec *mp, int t)
{
	return mp->t[t].qrec >= 0 ? mp->t[t].base.type : DT_UNDEFINED;
}

int
mixprec_tensor_producer(const struct mixprec *mp, int t)
{
	return mp->t[t].producer;
}

int
mixprec_tensor_constant(const struct mixprec *mp, int t)
{
	const struct mtensor *m = &mp->t[t];

	return m->is_wb || (m->producer < 0 && m->qrec < 0 && m->stat_rec < 0);
}

int
mixprec_tensor_shared_from(const struct mixprec *mp, int t)
{
	const struct mtensor *m = &mp->t[t];

	return m->qrec >= 0 && method_is(&m->base, "shared") ? m->base.from :
	    -1;
}

const char *
mixprec_model_sha256(const struct mixprec *mp)
{
	return mp->model_sha[0] ? mp->model_sha : NULL;
}

double
mixprec_tensor_elems(const struct mixprec *mp, int t)
{
	const struct mtensor *m = &mp->t[t];
	const struct stream_rec *rec;
	int64_t dims[TENSOR_MAX_RANK];
	uint64_t n, b;
	struct err e;
	double x = 1;
	int rank;

	if (m->stat_rec < 0)
		return 0;
	rec = mp->recs[m->stat_rec];
	if (stream_rec_has(rec, "shape") &&
	    stream_rec_shape(rec, "shape", &rank, dims, &e) == 0) {
		int known = 1;

		for (int i = 0; i < rank; i++) {
			if (dims[i] < 0)
				known = 0;
			else
				x *= (double)dims[i];
		}
		if (known)
			return x;
	}
	/* A shape that varied: the mean number of values per batch. */
	if (stream_rec_uint(rec, "n", &n, &e) < 0 ||
	    stream_rec_uint(rec, "batches", &b, &e) < 0 || b == 0)
		return 0;
	return (double)n / (double)b;
}

/* Requests. */

void
mixprec_clear(struct mixprec *mp)
{
	for (size_t i = 0; i < mp->nnodes; i++) {
		mp->nodes[i].req = -1;
		mp->nodes[i].fold_dropped = 0;
	}
	for (size_t i = 0; i < mp->nt; i++) {
		struct mtensor *t = &mp->t[i];

		t->req = -1;
		t->floated = t->prod_changed = t->has_conv = 0;
		t->conv_changed = t->synth = 0;
		t->nrecv = 0;
	}
	for (size_t i = 0; i < mp->nwbs; i++)
		mp->wbs[i].changed = mp->wbs[i].dropped = mp->wbs[i].raised = 0;
	for (size_t i = 0; i < mp->nreqs; i++)
		free(mp->reqs[i]);
	mp->nreqs = 0;
	mp->npairs = 0;
	mp->resolved = 0;
}

static int
type_eq(const struct mixprec_type *a, const struct mixprec_type *b)
{
	return a->type == b->type && a->symmetric == b->symmetric &&
	    a->reduce_range == b->reduce_range && a->pow2 == b->pow2;
}

/* "uint16", or "uint16 symmetric" and so on, for messages. */
static char *
type_str(const struct mixprec_type *t)
{
	return fmt("%s%s%s%s", type_name(t->type),
	    t->symmetric == 1 ? " symmetric" : "",
	    t->reduce_range == 1 ? " reduce_range" : "",
	    t->pow2 == 1 ? " power_of_two" : "");
}

static int
new_req(struct mixprec *mp, const char *who)
{
	char *s;

	if (grow(&mp->reqs, &mp->capreqs, mp->nreqs, sizeof *mp->reqs) < 0 ||
	    (s = strdup(who)) == NULL)
		return -1;
	mp->reqs[mp->nreqs] = s;
	return (int)mp->nreqs++;
}

/* The request id for `who` (the last one if it is the same). */
static int
req_id(struct mixprec *mp, const char *who)
{
	if (mp->nreqs > 0 && strcmp(mp->reqs[mp->nreqs - 1], who) == 0)
		return (int)mp->nreqs - 1;
	return new_req(mp, who);
}

static int
add_pair(struct mixprec *mp, int req, int node, int tensor)
{
	if (grow(&mp->pairs, &mp->cappairs, mp->npairs, sizeof *mp->pairs) < 0)
		return -1;
	mp->pairs[mp->npairs++] = (struct reqpair){ req, node, tensor };
	return 0;
}

static int
set_node(struct mixprec *mp, int node, const struct mixprec_type *t,
    int req, const char *why, struct config_msgs *msgs)
{
	struct mnode *n = &mp->nodes[node];
	char *a, *b, *c;
	int rc;

	if (n->req < 0 || type_eq(&n->rt, t)) {
		if (n->req < 0) {
			n->req = req;
			n->rt = *t;
		}
		if (add_pair(mp, req, node, -1) < 0) {
			msgs_addf(msgs, "%s: out of memory", mp->reqs[req]);
			return -2;
		}
		return 0;
	}
	a = type_str(t);
	b = type_str(&n->rt);
	c = names_str(mp, n->q, n->nq, 1);
	rc = msgs_addf(msgs, "%s: %snode %s%s%s%s asked to be %s, and %s by %s",
	    mp->reqs[req], why ? why : "", n->name, n->nq ? " (tensors " : "",
	    n->nq && c ? c : "", n->nq ? ")" : "", a ? a : "?", b ? b : "?",
	    mp->reqs[n->req]);
	free(a);
	free(b);
	free(c);
	return rc < 0 ? -2 : -1;
}

int
mixprec_request_node(struct mixprec *mp, int node,
    const struct mixprec_type *t, const char *who, struct config_msgs *msgs)
{
	int req = req_id(mp, who);

	mp->resolved = 0;
	if (req < 0) {
		msgs_addf(msgs, "%s: out of memory", who);
		return -1;
	}
	return set_node(mp, node, t, req, NULL, msgs) < 0 ? -1 : 0;
}

int
mixprec_request_tensor(struct mixprec *mp, int tensor,
    const struct mixprec_type *t, const char *who, struct config_msgs *msgs)
{
	struct mtensor *m = &mp->t[tensor];
	int req = req_id(mp, who), rc = 0;
	char *why;

	mp->resolved = 0;
	if (req < 0) {
		msgs_addf(msgs, "%s: out of memory", who);
		return -1;
	}
	if ((why = fmt("tensor %s: ", m->name)) == NULL)
		return -1;
	if (m->producer >= 0) {
		if (set_node(mp, m->producer, t, req, why, msgs) < 0)
			rc = -1;
	} else if (m->req >= 0 && !type_eq(&m->rt, t)) {
		char *a = type_str(t), *b = type_str(&m->rt);

		msgs_addf(msgs, "%s: tensor %s asked to be %s, and %s by %s",
		    who, m->name, a ? a : "?", b ? b : "?", mp->reqs[m->req]);
		free(a);
		free(b);
		rc = -1;
	} else {
		m->req = req;
		m->rt = *t;
		if (add_pair(mp, req, -1, tensor) < 0)
			rc = -1;
	}
	for (int i = 0; i < m->ncons; i++)
		if (set_node(mp, m->cons[i], t, req, why, msgs) < 0)
			rc = -1;
	free(why);
	return rc;
}

static char *
name_at(const struct mixprec_regions *rg, int line, int col,
    const char *label)
{
	if (line > 0)
		return fmt("%s:%d:%d: %s", rg->path, line, col, label);
	return fmt("%s: %s", rg->path, label);
}

size_t
mixprec_request_regions(struct mixprec *mp, const struct mixprec_regions *rg,
    struct config_msgs *msgs)
{
	size_t problems = 0;

	for (size_t i = 0; i < rg->n; i++) {
		const struct mixprec_region *r = &rg->v[i];
		char *who = name_at(rg, r->line, r->col, r->label);
		int matched;

		if (who == NULL)
			return problems + 1;
		for (size_t k = 0; k < r->nodes.n; k++) {
			int nd = mixprec_node_find(mp, r->nodes.v[k]);

			if (nd < 0) {
				char *p = config_printable(r->nodes.v[k]);

				msgs_addf(msgs, "%s:%d:%d: %s: no node %s in "
				    "the stream", rg->path,
				    r->nodes.pos[k].line, r->nodes.pos[k].col,
				    r->label, p ? p : "?");
				free(p);
				problems++;
				continue;
			}
			if (mixprec_request_node(mp, nd, &r->t, who, msgs) < 0)
				problems++;
		}
		for (size_t k = 0; k < r->tensors.n; k++) {
			int t = mixprec_tensor_find(mp, r->tensors.v[k]);
			const char *why = NULL;
			char *p;

			if (t < 0)
				why = "is not in the stream";
			else if (mp->t[t].is_wb)
				why = "is a weight (weights keep their type)";
			else if (mp->t[t].qrec < 0)
				why = "is not quantized (no qparam record)";
			if (why == NULL) {
				if (mixprec_request_tensor(mp, t, &r->t, who,
				    msgs) < 0)
					problems++;
				continue;
			}
			p = config_printable(r->tensors.v[k]);
			msgs_addf(msgs, "%s:%d:%d: %s: tensor %s %s", rg->path,
			    r->tensors.pos[k].line, r->tensors.pos[k].col,
			    r->label, p ? p : "?", why);
			free(p);
			problems++;
		}
		for (size_t k = 0; k < r->ops.n; k++) {
			matched = 0;
			for (size_t nd = 0; nd < mp->nnodes; nd++) {
				if (strcmp(mp->nodes[nd].op, r->ops.v[k]) != 0)
					continue;
				matched = 1;
				if (mixprec_request_node(mp, (int)nd, &r->t,
				    who, msgs) < 0)
					problems++;
			}
			if (!matched) {
				char *p = config_printable(r->ops.v[k]);

				msgs_addf(msgs, "%s:%d:%d: %s: no node has op "
				    "type %s", rg->path, r->ops.pos[k].line,
				    r->ops.pos[k].col, r->label, p ? p : "?");
				free(p);
				problems++;
			}
		}
		free(who);
	}
	return problems;
}

/* Parameters in another type. */

static void
opts_of(struct qparams_opts *o, int type, int sym, int rr, int pow2)
{
	memset(o, 0, sizeof *o);
	o->type = type;
	o->symmetric = sym;
	o->reduce_range = rr;
	o->pow2 = pow2;
}

/*
 * The flags that reproduce q from its recorded range, else a guess:
 * symmetric when the zero point is the grid's middle.
 */
static void
infer_flags(const struct aq *q, int *sym, int *rr, int *pow2)
{
	struct qparams_opts o;
	struct err e;
	int64_t lo, hi;

	if (q->has_range)
		for (int k = 0; k < 8; k++) {
			float s;
			int32_t z;

			opts_of(&o, q->type, k & 1, (k >> 1) & 1, (k >> 2) & 1);
			if (qparams_compute(&o, q->rmin, q->rmax, &s, &z, &e) == 0 &&
			    s == q->scale && z == q->zp) {
				*sym = o.symmetric;
				*rr = o.reduce_range;
				*pow2 = o.pow2;
				return;
			}
		}
	*rr = *pow2 = 0;
	*sym = 0;
	if (qparams_qrange(q->type, 0, 1, &lo, &hi) == 0 &&
	    q->zp == (int32_t)((lo + hi + 1) / 2) && (lo + hi) % 2 != 0)
		*sym = 1;
	else if (qparams_qrange(q->type, 0, 1, &lo, &hi) == 0 && lo + hi == 0 &&
	    q->zp == 0 && !(q->has_range && q->rmin == 0))
		*sym = 1;
}

static void
base_flags(struct mtensor *t)
{
	if (!t->flags_done) {
		infer_flags(&t->base, &t->sym, &t->rr, &t->pow2);
		t->flags_done = 1;
	}
}

/* A request with its unset flags taken from the tensor's own. */
static struct mixprec_type
resolve_type(struct mtensor *t, const struct mixprec_type *r)
{
	struct mixprec_type x = *r;

	base_flags(t);
	if (x.symmetric < 0)
		x.symmetric = t->sym;
	if (x.reduce_range < 0)
		x.reduce_range = t->rr;
	if (x.pow2 < 0)
		x.pow2 = t->pow2;
	if (x.type == DT_FLOAT)
		x.symmetric = x.reduce_range = x.pow2 = 0;
	return x;
}

static struct mixprec_type
base_type(struct mtensor *t)
{
	struct mixprec_type x = { t->base.type, -1, -1, -1 };

	return resolve_type(t, &x);
}

static int
method_is(const struct aq *q, const char *m)
{
	return q->method && strcmp(q->method, m) == 0;
}

/* Statistics for re-selecting the range; 0 when there are none. */
static int
load_stats(struct mixprec *mp, struct mtensor *t, struct err *e)
{
	if (t->stats_done)
		return t->stats_ok;
	t->stats_done = 1;
	if (tstats_init(&t->ts, -1, e) < 0)
		return -1;
	if (t->stat_rec < 0)
		return 0;
	if (tstats_read_stat(&t->ts, mp->recs[t->stat_rec], e) < 0)
		return -1;
	for (int i = 0; i < t->nhist; i++)
		if (tstats_read_hist(&t->ts, mp->recs[t->hist_recs[i]], e) < 0)
			return -1;
	if (tstats_check_hist(&t->ts, e) < 0)
		return stream_rec_err(mp->recs[t->stat_rec], e, "tensor %s: %s",
		    t->name, e->msg);
	if (t->ts.hist && hist_bins(t->ts.hist, &t->bins, &t->nbins, e) < 0)
		return -1;
	t->stats_ok = 1;
	return 1;
}

static int
select_range(struct mtensor *t, int method, const struct mixprec_type *x,
    float *lo, float *hi, struct err *e)
{
	struct rangesel_stats st;
	struct rangesel_opts ro;

	memset(&st, 0, sizeof st);
	st.n = t->ts.n;
	st.min = t->ts.n ? t->ts.min : INFINITY;
	st.max = t->ts.n ? t->ts.max : -INFINITY;
	st.mavg_min = tstats_mavg_min(&t->ts);
	st.mavg_max = tstats_mavg_max(&t->ts);
	st.mean = tstats_mean(&t->ts);
	st.std = tstats_std(&t->ts);
	st.bins = t->bins;
	st.nbins = t->nbins;
	rangesel_opts_init(&ro);
	ro.method = method;
	opts_of(&ro.q, x->type, x->symmetric, x->reduce_range, x->pow2);
	return rangesel_select(&st, &ro, lo, hi, e);
}

/*
 * The range of t for type x: the recorded one, or selected again when
 * the method depends on the grid and selecting reproduces the record.
 */
static int
range_for(struct mixprec *mp, struct mtensor *t, const struct mixprec_type *x,
    float *lo, float *hi, struct err *e)
{
	const struct aq *b = &t->base;
	int method = b->method ? rangesel_method_parse(b->method) : -1;
	struct err ignore;

	*lo = b->rmin;
	*hi = b->rmax;
	if (method != RANGESEL_ENTROPY && method != RANGESEL_MSE &&
	    method != RANGESEL_DISTRIBUTION)
		return 0;
	if (!t->stats_done) {
		struct mixprec_type bt = base_type(t);
		float l, h;
		int ok = load_stats(mp, t, e);

		if (ok < 0)
			return -1;
		t->reselect = ok && select_range(t, method, &bt, &l, &h,
		    &ignore) == 0 && l == b->rmin && h == b->rmax;
		if (ok && !t->reselect)
			note(mp, "tensor %s: its %s range is not what the stream's "
			    "statistics give (options or overrides): kept for %s",
			    t->name, b->method, type_name(x->type));
	}
	if (!t->reselect)
		return 0;
	if (select_range(t, method, x, lo, hi, e) < 0)
		return err_prefix(e, "tensor %s", t->name);
	return 0;
}

/* t's parameters in type x (flags resolved). */
static int
params_at(struct mixprec *mp, int ti, const struct mixprec_type *req,
    struct aq *out, int depth, struct err *e)
{
	struct mtensor *t = &mp->t[ti];
	struct mixprec_type x = resolve_type(t, req), bt = base_type(t);
	struct qparams_opts o;
	float lo, hi;

	if (type_eq(&x, &bt)) {
		*out = t->base;
		return 0;
	}
	for (size_t i = 0; i < t->ncache; i++)
		if (type_eq(&t->cache[i].t, &x)) {
			*out = t->cache[i].q;
			return 0;
		}
	memset(out, 0, sizeof *out);
	out->from = -1;
	if (method_is(&t->base, "shared") && t->base.from >= 0 &&
	    depth < (int)mp->nt) {
		if (params_at(mp, t->base.from, req, out, depth + 1, e) < 0)
			return -1;
		out->method = "shared";
		out->from = t->base.from;
		out->has_range = 0;
	} else {
		if (t->base.has_range) {
			if (range_for(mp, t, &x, &lo, &hi, e) < 0)
				return -1;
		} else {
			double dlo, dhi;

			/* Fixed parameters: the interval their grid covers. */
			opts_of(&o, t->base.type, 0, 0, 0);
			qparams_represented(&o, t->base.scale, t->base.zp, &dlo,
			    &dhi);
			lo = (float)dlo;
			hi = (float)dhi;
			note(mp, "tensor %s: %s parameters without a range: %s "
			    "ones computed over [%g, %g], what its %s grid "
			    "covers", t->name, t->base.method ? t->base.method :
			    "its", type_name(x.type), (double)lo, (double)hi,
			    type_name(t->base.type));
		}
		opts_of(&o, x.type, x.symmetric, x.reduce_range, x.pow2);
		out->type = x.type;
		out->method = t->base.method;
		out->has_range = t->base.has_range;
		out->rmin = lo;
		out->rmax = hi;
		if (qparams_compute(&o, lo, hi, &out->scale, &out->zp, e) < 0)
			return err_prefix(e, "tensor %s: %s", t->name,
			    type_name(x.type));
	}
	out->type = x.type;
	if (grow(&t->cache, &t->capcache, t->ncache, sizeof *t->cache) == 0) {
		t->cache[t->ncache].t = x;
		t->cache[t->ncache].q = *out;
		t->ncache++;
	}
	return 0;
}

/* Resolve. */

/* What a reader wants: the produced type, base, an existing convert, or a request. */
enum want_kind { W_BASE, W_CONV0, W_REQ };

struct want {
	enum want_kind kind;
	struct mixprec_type t;		/* resolved */
	int node;
};

static int
in_list(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static int
conv0_for(const struct mtensor *t, int node)
{
	return t->conv_rec >= 0 && (t->conv0_all ||
	    in_list(t->recv0, t->nrecv0, node));
}

static struct mixprec_type
conv0_type(struct mtensor *t)
{
	struct mixprec_type x = { t->conv0.type, 0, 0, 0 };

	if (!t->c0flags_done) {
		infer_flags(&t->conv0, &t->c0sym, &t->c0rr, &t->c0pow2);
		t->c0flags_done = 1;
	}
	x.symmetric = t->c0sym;
	x.reduce_range = t->c0rr;
	x.pow2 = t->c0pow2;
	return x;
}

static int
aq_eq(const struct aq *a, const struct aq *b)
{
	return a->type == b->type && a->scale == b->scale && a->zp == b->zp;
}

/* A list of names for a message: "a, b, c, ..." */
static char *
names_str(struct mixprec *mp, const int *v, int n, int tensors)
{
	size_t len = 1;
	char *s, *p;
	int k = n < LIST_MAX ? n : LIST_MAX;

	for (int i = 0; i < k; i++)
		len += strlen(tensors ? mp->t[v[i]].name :
		    mp->nodes[v[i]].name) + 2;
	if ((s = p = malloc(len + 5)) == NULL)
		return NULL;
	*p = '\0';
	for (int i = 0; i < k; i++)
		p += sprintf(p, "%s%s", i ? ", " : "", tensors ?
		    mp->t[v[i]].name : mp->nodes[v[i]].name);
	if (n > k)
		strcpy(p, ", ...");
	return s;
}

static int
resolve_tensor(struct mixprec *mp, int ti, struct config_msgs *msgs,
    long *problems, struct err *e)
{
	struct mtensor *t = &mp->t[ti];
	struct mixprec_type pt, bt = base_type(t);
	const struct mixprec_type *preq = NULL;
	struct want cw;
	struct mixprec_type ot = { 0, 0, 0, 0 };
	int have_cw = 0, bad = 0;
	int *odd = NULL, nodd = 0;
	size_t capodd = 0;

	if (t->producer >= 0 && mp->nodes[t->producer].req >= 0)
		preq = &mp->nodes[t->producer].rt;
	else if (t->producer < 0 && t->req >= 0)
		preq = &t->rt;
	if (preq && preq->type == DT_FLOAT) {
		t->floated = 1;
		return 0;
	}
	pt = preq ? resolve_type(t, preq) : bt;
	t->ptype = pt;
	if (preq && t->conv_rec >= 0) {
		struct mixprec_type c0 = conv0_type(t);

		if (type_eq(&c0, &pt)) {
			msgs_addf(msgs, "%s: tensor %s: the stream converts it to "
			    "%s for some readers, the type it would now have",
			    t->producer >= 0 ? mp->reqs[mp->nodes[t->producer].req]
			    : mp->reqs[t->req], t->name, type_name(pt.type));
			(*problems)++;
			return 0;
		}
	}
	if (params_at(mp, ti, &pt, &t->prod, 0, e) < 0)
		return -1;
	t->prod_changed = !aq_eq(&t->prod, &t->base);
	memset(&cw, 0, sizeof cw);
	for (int i = 0; i < t->ncons; i++) {
		const struct mnode *c = &mp->nodes[t->cons[i]];
		struct want w;

		w.node = t->cons[i];
		if (c->req >= 0) {
			if (c->rt.type == DT_FLOAT)
				continue;	/* reads what is produced */
			w.kind = W_REQ;
			w.t = resolve_type(t, &c->rt);
			if (conv0_for(t, w.node)) {
				struct mixprec_type c0 = conv0_type(t);

				if (!type_eq(&c0, &w.t)) {
					char *a = type_str(&w.t);

					msgs_addf(msgs, "%s: tensor %s: node %s "
					    "reads it as %s (a convert in the "
					    "stream), not %s", mp->reqs[c->req],
					    t->name, c->name,
					    type_name(t->conv0.type), a ? a : "?");
					free(a);
					(*problems)++;
					bad = 1;
					continue;
				}
				w.kind = W_CONV0;
			}
		} else if (conv0_for(t, w.node)) {
			w.kind = W_CONV0;
			w.t = conv0_type(t);
		} else {
			w.kind = W_BASE;
			w.t = bt;
		}
		if (type_eq(&w.t, &pt))
			continue;
		if (!have_cw) {
			cw = w;
			have_cw = 1;
		} else if (type_eq(&w.t, &cw.t)) {
			if (w.kind == W_CONV0)
				cw.kind = W_CONV0;	/* keep its parameters */
		} else {
			if (nodd == 0)
				ot = w.t;
			if (add_int(&odd, &nodd, &capodd, w.node) < 0) {
				free(odd);
				return err_nomem(e);
			}
			continue;
		}
		if (add_int(&t->recv, &t->nrecv, &t->caprecv, w.node) < 0) {
			free(odd);
			return err_nomem(e);
		}
	}
	if (nodd > 0) {
		char *a = type_str(&cw.t), *b = type_str(&pt);
		char *r1 = names_str(mp, t->recv, t->nrecv, 0);
		char *r2 = names_str(mp, odd, nodd, 0);
		char *c = type_str(&ot);

		msgs_addf(msgs, "tensor %s: produced as %s, its readers want "
		    "two other types: %s (%s) and %s (%s); one convert per "
		    "tensor", t->name, b ? b : "?", a ? a : "?", r1 ? r1 : "?",
		    c ? c : "?", r2 ? r2 : "?");
		free(a);
		free(b);
		free(c);
		free(r1);
		free(r2);
		(*problems)++;
		bad = 1;
	}
	free(odd);
	if (bad || !have_cw) {
		t->nrecv = 0;
		t->conv_changed = t->conv_rec >= 0;
		return 0;
	}
	t->has_conv = 1;
	if (cw.kind == W_CONV0)
		t->conv = t->conv0;
	else if (params_at(mp, ti, &cw.t, &t->conv, 0, e) < 0)
		return -1;
	/* Unchanged when the stream's convert says the same. */
	t->conv_changed = 1;
	if (t->conv_rec >= 0 && aq_eq(&t->conv, &t->conv0)) {
		int same = 1;

		if (t->conv0_all) {
			same = t->nrecv == t->ncons;
		} else {
			same = t->nrecv == t->nrecv0;
			for (int i = 0; i < t->nrecv && same; i++)
				same = in_list(t->recv0, t->nrecv0, t->recv[i]);
		}
		t->conv_changed = !same;
	}
	return 0;
}

/* The parameters node `node` reads tensor ti with, or NULL when float. */
static const struct aq *
seen_by(const struct mtensor *t, int node)
{
	if (t->qrec < 0 || t->floated)
		return NULL;
	if (t->has_conv && in_list(t->recv, t->nrecv, node))
		return &t->conv;
	return &t->prod;
}

/* What it read in the stream as given. */
static const struct aq *
seen_before(const struct mtensor *t, int node)
{
	if (t->qrec < 0)
		return NULL;
	if (conv0_for(t, node))
		return &t->conv0;
	return &t->base;
}

static int
resolve_biases(struct mixprec *mp, struct config_msgs *msgs, long *problems,
    struct err *e)
{
	/* Raise weight scales first (as onnx-qparams), then the biases. */
	for (size_t i = 0; i < mp->nwbs; i++) {
		struct mwb *w = &mp->wbs[i];

		free(w->nscale);
		w->nscale = NULL;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < mp->nwbs; i++) {
			struct mwb *b = &mp->wbs[i], *w;
			const struct aq *now, *was;
			struct mtensor *x;
			int rc;

			if (!b->is_bias || b->input < 0)
				continue;
			x = &mp->t[b->input];
			if (x->qrec < 0)
				continue;
			if (b->node < 0 || b->weight < 0) {
				if (pass == 0 && (x->floated || x->prod_changed ||
				    x->has_conv)) {
					msgs_addf(msgs, "bias %s: its activation "
					    "%s changes type, but the stream has "
					    "no bias record for it, or no weight "
					    "qparam", b->name, x->name);
					(*problems)++;
				}
				continue;
			}
			now = seen_by(x, b->node);
			was = seen_before(x, b->node);
			if (now == NULL) {
				b->dropped = 1;	/* stays float, as in ORT */
				continue;
			}
			w = &mp->wbs[b->weight];
			if (pass == 0) {
				if (now->scale == was->scale)
					continue;
				b->changed = 1;
				if (w->nscale == NULL) {
					if ((w->nscale = malloc(w->n *
					    sizeof *w->nscale)) == NULL)
						return err_nomem(e);
					memcpy(w->nscale, w->scale, w->n *
					    sizeof *w->nscale);
				}
				rc = qparams_bias_adjust(now->scale, w->nscale,
				    w->n, b->babs, b->nb, b->beta, e);
				if (rc < 0)
					return err_prefix(e, "bias %s", b->name);
				if (rc > 0) {
					w->raised += rc;
					w->changed = 1;
				}
				continue;
			}
			if (!b->changed && !w->changed)
				continue;
			free(b->nscale);
			if ((b->nscale = malloc(b->n * sizeof *b->nscale)) == NULL)
				return err_nomem(e);
			if (b->n != (w->n > 1 && b->nb > 1 ? b->nb : 1))
				return err_set(e, "bias %s: %zu scales where its "
				    "weight %s has %zu and it %zu channels",
				    b->name, b->n, w->name, w->n, b->nb);
			if (qparams_bias_scale(now->scale, w->nscale ? w->nscale :
			    w->scale, w->n, b->nb, b->beta, b->nscale, e) < 0)
				return err_prefix(e, "bias %s", b->name);
			b->changed = memcmp(b->nscale, b->scale,
			    b->n * sizeof *b->nscale) != 0;
		}
	return 0;
}

/* Did node i's quantized tensors change (as written or as read)? */
static int
node_changed(const struct mixprec *mp, int i)
{
	const struct mnode *n = &mp->nodes[i];

	for (int k = 0; k < n->nq; k++) {
		const struct mtensor *t = &mp->t[n->q[k]];
		const struct aq *a;

		if (t->qrec < 0)
			continue;
		if (t->producer == i && (t->floated || t->prod_changed))
			return 1;
		if (t->producer != i && (a = seen_by(t, i)) != NULL &&
		    !aq_eq(a, seen_before(t, i)))
			return 1;
	}
	return 0;
}

/* Per request: did it change anything? */
static void
check_requests(struct mixprec *mp, struct config_msgs *msgs, long *problems)
{
	unsigned char *changed;
	int *list = NULL, nlist = 0;
	size_t cap = 0;

	if (mp->nreqs == 0 || (changed = calloc(mp->nreqs, 1)) == NULL)
		return;
	for (size_t i = 0; i < mp->npairs; i++) {
		const struct reqpair *p = &mp->pairs[i];

		if (changed[p->req])
			continue;
		if (p->node >= 0)
			changed[p->req] = node_changed(mp, p->node);
		else
			changed[p->req] = mp->t[p->tensor].prod_changed ||
			    mp->t[p->tensor].floated;
	}
	for (size_t r = 0; r < mp->nreqs; r++) {
		const char *type = "?";
		char *names;

		if (changed[r])
			continue;
		nlist = 0;
		for (size_t i = 0; i < mp->npairs; i++) {
			const struct reqpair *p = &mp->pairs[i];

			if (p->req != (int)r)
				continue;
			if (p->node >= 0) {
				const struct mnode *n = &mp->nodes[p->node];

				type = type_name(n->rt.type);
				for (int k = 0; k < n->nq; k++)
					if (mp->t[n->q[k]].qrec >= 0 &&
					    add_int(&list, &nlist, &cap,
					    n->q[k]) < 0)
						goto out;
			} else {
				type = type_name(mp->t[p->tensor].rt.type);
				if (add_int(&list, &nlist, &cap, p->tensor) < 0)
					goto out;
			}
		}
		names = names_str(mp, list, nlist, 1);
		if (nlist == 0)
			msgs_addf(msgs, "%s: changes nothing: its nodes have no "
			    "quantized tensors", mp->reqs[r]);
		else
			msgs_addf(msgs, "%s: changes nothing: its tensors "
			    "already have type %s: %s", mp->reqs[r], type,
			    names ? names : "?");
		free(names);
		(*problems)++;
	}
out:
	free(list);
	free(changed);
}

/* Fold records whose nodes end up in different types are dropped. */
static int
resolve_folds(struct mixprec *mp)
{
	for (size_t i = 0; i < mp->nnodes; i++) {
		struct mnode *n = &mp->nodes[i], *p;
		struct mtensor *mid, *out;
		int same;

		if (n->fold_into < 0)
			continue;
		p = &mp->nodes[n->fold_into];
		same = (n->req < 0 && p->req < 0) || (n->req >= 0 &&
		    p->req >= 0 && type_eq(&n->rt, &p->rt));
		/* A fold clamps with its output's parameters: float has none. */
		if (same && !(n->req >= 0 && n->rt.type == DT_FLOAT))
			continue;
		n->fold_dropped = 1;
		note(mp, "fold %s into %s dropped: %s", n->name, p->name,
		    same ? "they stay in float" :
		    "the two nodes are in different types");
		if (n->nin < 1 || n->tin[0] < 0 || n->nout < 1 ||
		    n->tout[0] < 0)
			continue;
		mid = &mp->t[n->tin[0]];
		out = &mp->t[n->tout[0]];
		if (mid->fold_mid != n->tout[0] + 1)
			continue;
		/*
		 * The edge needs parameters: those of the output, which
		 * onnx-qparams gives a Relu/Clip's input anyway.
		 */
		mid->qrec = out->qrec;
		mid->base = out->base;
		mid->synth = 1;
		mid->synth_after = n->tout[0];
	}
	return 0;
}

long
mixprec_resolve(struct mixprec *mp, struct config_msgs *msgs,
    struct err *e)
{
	long problems = 0;

	for (size_t i = 0; i < mp->nt; i++) {
		struct mtensor *t = &mp->t[i];

		t->floated = t->prod_changed = t->has_conv = 0;
		t->conv_changed = 0;
		t->nrecv = 0;
		if (t->synth) {
			t->qrec = -1;
			t->synth = 0;
		}
	}
	for (size_t i = 0; i < mp->nnodes; i++)
		mp->nodes[i].fold_dropped = 0;
	for (size_t i = 0; i < mp->nwbs; i++)
		mp->wbs[i].changed = mp->wbs[i].dropped = mp->wbs[i].raised = 0;
	resolve_folds(mp);
	for (size_t i = 0; i < mp->nt; i++) {
		if (mp->t[i].qrec < 0)
			continue;
		if (resolve_tensor(mp, (int)i, msgs, &problems, e) < 0)
			return -1;
	}
	if (resolve_biases(mp, msgs, &problems, e) < 0)
		return -1;
	check_requests(mp, msgs, &problems);
	mp->resolved = problems == 0;
	return problems;
}

int
mixprec_tensor_result_type(const struct mixprec *mp, int t)
{
	const struct mtensor *m = &mp->t[t];

	if (m->qrec < 0)
		return DT_UNDEFINED;
	if (m->floated)
		return DT_FLOAT;
	return mp->resolved ? m->prod.type : m->base.type;
}

static int
type_bits(int type)
{
	switch (type) {
	case DT_UINT4: case DT_INT4:
		return 4;
	case DT_UINT8: case DT_INT8:
		return 8;
	case DT_UINT16: case DT_INT16:
		return 16;
	}
	return 32;
}

void
mixprec_summarize(const struct mixprec *mp, struct mixprec_summary *s)
{
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < mp->nt; i++) {
		const struct mtensor *t = &mp->t[i];
		double n;
		int wider = 0, bits = type_bits(t->base.type);

		if (t->qrec < 0)
			continue;
		n = mixprec_tensor_elems(mp, (int)i);
		s->tensors++;
		s->elems += n;
		if (t->floated) {
			s->floated++;
			s->elems_promoted += n;
			s->cost += n * (32 - bits) / 8.0;
			continue;
		}
		if (t->prod_changed && type_bits(t->prod.type) > bits) {
			wider = 1;
			s->cost += n * (type_bits(t->prod.type) - bits) / 8.0;
		}
		if (t->has_conv) {
			s->converts++;
			if (type_bits(t->conv.type) > bits &&
			    type_bits(t->conv.type) > type_bits(t->prod.type)) {
				wider = 1;
				s->cost += n * (type_bits(t->conv.type) -
				    bits) / 8.0;
			}
		}
		if (wider) {
			s->promoted++;
			s->elems_promoted += n;
		}
	}
	for (size_t i = 0; i < mp->nwbs; i++) {
		s->biases += mp->wbs[i].is_bias && mp->wbs[i].changed;
		s->weights += !mp->wbs[i].is_bias && mp->wbs[i].changed;
	}
}

/* Writing. */

/* One key to replace (val NULL: remove), add when absent. */
struct edit {
	const char *key;
	const char *val;
	int used;
};

/* rec with edits: its keys in order, replaced or removed, new ones after. */
static void
put_edited(struct stream_writer *w, const struct stream_rec *rec,
    struct edit *ed, size_t ned)
{
	stream_rec_start(w, rec->type, rec->subject);
	for (size_t i = 0; i < ned; i++)
		ed[i].used = 0;
	for (size_t i = 0; i < rec->nkv; i++) {
		size_t k;

		for (k = 0; k < ned; k++)
			if (strcmp(ed[k].key, rec->kv[i].key) == 0)
				break;
		if (k == ned) {
			stream_put_raw(w, rec->kv[i].key, rec->kv[i].val);
			continue;
		}
		ed[k].used = 1;
		if (ed[k].val)
			stream_put_raw(w, ed[k].key, ed[k].val);
	}
	for (size_t k = 0; k < ned; k++)
		if (!ed[k].used && ed[k].val)
			stream_put_raw(w, ed[k].key, ed[k].val);
	stream_rec_done(w);
}

static void
put_aq_keys(struct stream_writer *w, const struct mixprec *mp,
    const struct aq *q)
{
	stream_put_raw(w, "type", qparams_type_name(q->type));
	stream_put_float(w, "scale", q->scale);
	stream_put_int(w, "zp", q->zp);
	if (q->method)
		stream_put_raw(w, "method", q->method);
	if (q->from >= 0)
		stream_put_name(w, "from", mp->t[q->from].name);
	if (q->has_range && !method_is(q, "shared")) {
		stream_put_float(w, "rmin", q->rmin);
		stream_put_float(w, "rmax", q->rmax);
	}
}

/* The qparam of an activation whose produced parameters changed. */
static int
put_act(struct stream_writer *w, const struct mixprec *mp,
    const struct mtensor *t, struct err *e)
{
	const struct stream_rec *rec = mp->recs[t->qrec];
	char sc[STREAM_NUM_MAX], zp[32], lo[STREAM_NUM_MAX], hi[STREAM_NUM_MAX];
	char *from = NULL;
	int shared = method_is(&t->prod, "shared");
	struct edit ed[7];

	if (t->synth) {
		stream_rec_start(w, "qparam", t->name);
		stream_put_raw(w, "role", "act");
		put_aq_keys(w, mp, &t->prod);
		stream_rec_done(w);
		return 0;
	}
	if (t->prod.from >= 0 && (from = stream_escape(
	    mp->t[t->prod.from].name)) == NULL)
		return err_nomem(e);
	snprintf(zp, sizeof zp, "%ld", (long)t->prod.zp);
	ed[0] = (struct edit){ "type", qparams_type_name(t->prod.type), 0 };
	ed[1] = (struct edit){ "scale", stream_fmt_float(t->prod.scale, sc), 0 };
	ed[2] = (struct edit){ "zp", zp, 0 };
	ed[3] = (struct edit){ "method", t->prod.method, 0 };
	ed[4] = (struct edit){ "from", from, 0 };
	ed[5] = (struct edit){ "rmin", NULL, 0 };
	ed[6] = (struct edit){ "rmax", NULL, 0 };
	if (t->prod.has_range && !shared) {
		ed[5].val = stream_fmt_float(t->prod.rmin, lo);
		ed[6].val = stream_fmt_float(t->prod.rmax, hi);
	}
	put_edited(w, rec, ed, 7);
	free(from);
	return 0;
}

static void
put_convert(struct stream_writer *w, const struct mixprec *mp,
    const struct mtensor *t)
{
	const char **names;

	if (!t->conv_changed) {
		stream_put_rec(w, mp->recs[t->conv_rec]);
		return;
	}
	stream_rec_start(w, "convert", t->name);
	put_aq_keys(w, mp, &t->conv);
	if ((names = calloc((size_t)t->nrecv + 1, sizeof *names)) != NULL) {
		/* In node order, so output does not depend on discovery. */
		int k = 0;

		for (size_t i = 0; i < mp->nnodes; i++)
			if (in_list(t->recv, t->nrecv, (int)i))
				names[k++] = mp->nodes[i].name;
		stream_put_names(w, "recv", names, (size_t)k);
		free(names);
	}
	stream_rec_done(w);
}

static int
put_scales(struct stream_writer *w, const struct stream_rec *rec,
    const float *scale, size_t n, int64_t adjusted, struct err *e)
{
	char *buf, *p, num[STREAM_NUM_MAX], adj[32];
	struct edit ed[2];

	if (n > SIZE_MAX / (STREAM_NUM_MAX + 1) ||
	    (buf = malloc(n * (STREAM_NUM_MAX + 1) + 1)) == NULL)
		return err_nomem(e);
	p = buf;
	*p = '\0';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? "," : "",
		    stream_fmt_float(scale[i], num));
	snprintf(adj, sizeof adj, "%lld", (long long)adjusted);
	ed[0] = (struct edit){ "scale", buf, 0 };
	ed[1] = (struct edit){ "adjusted", adjusted > 0 ? adj : NULL, 0 };
	put_edited(w, rec, ed, adjusted > 0 ? 2 : 1);
	free(buf);
	return 0;
}

/* The qparam (and convert) of tensor t, as resolved. */
static int
put_tensor(struct stream_writer *w, const struct mixprec *mp,
    const struct mtensor *t, struct err *e)
{
	if (t->floated)
		return 0;
	if (!t->prod_changed && !t->synth)
		stream_put_rec(w, mp->recs[t->qrec]);
	else if (put_act(w, mp, t, e) < 0)
		return -1;
	if (t->has_conv)
		put_convert(w, mp, t);
	return 0;
}

int
mixprec_write(const struct mixprec *mp, struct stream_writer *w,
    const struct mixprec_write_opts *o, struct err *e)
{
	int *wb_at = NULL, *t_at = NULL, *synth = NULL;
	int rc = -1;

	for (size_t i = 0; i < mp->nheaders; i++)
		stream_put_header(w, mp->headers[i]);
	if (o && o->prog)
		stream_put_prog(w, o->prog, o->version, o->argc, o->argv);
	/* Which record is whose. */
	if ((wb_at = malloc((mp->nrecs + 1) * sizeof *wb_at)) == NULL ||
	    (t_at = malloc((mp->nrecs + 1) * sizeof *t_at)) == NULL ||
	    (synth = malloc((mp->nt + 1) * sizeof *synth)) == NULL) {
		err_nomem(e);
		goto out;
	}
	for (size_t i = 0; i < mp->nrecs; i++)
		wb_at[i] = t_at[i] = -1;
	for (size_t i = 0; i < mp->nwbs; i++)
		wb_at[mp->wbs[i].rec] = (int)i;
	for (size_t i = 0; i < mp->nt; i++) {
		synth[i] = -1;
		if (mp->t[i].qrec >= 0 && !mp->t[i].synth)
			t_at[mp->t[i].qrec] = (int)i;
	}
	for (size_t i = 0; i < mp->nt; i++)
		if (mp->t[i].synth)
			synth[mp->t[i].synth_after] = (int)i;
	for (size_t i = 0; i < mp->nrecs; i++) {
		const struct stream_rec *rec = mp->recs[i];
		const char *type = rec->type;

		if (t_at[i] >= 0) {
			const struct mtensor *t = &mp->t[t_at[i]];

			if (!mp->resolved) {
				stream_put_rec(w, rec);
				if (t->conv_rec >= 0)
					stream_put_rec(w, mp->recs[t->conv_rec]);
			} else if (put_tensor(w, mp, t, e) < 0)
				goto out;
			if (mp->resolved && synth[t_at[i]] >= 0 &&
			    put_tensor(w, mp, &mp->t[synth[t_at[i]]], e) < 0)
				goto out;
			continue;
		}
		if (strcmp(type, "convert") == 0)
			continue;	/* written after its qparam */
		if (wb_at[i] >= 0 && mp->resolved) {
			const struct mwb *b = &mp->wbs[wb_at[i]];

			if (b->dropped)
				continue;
			if (b->changed && b->is_bias) {
				if (put_scales(w, rec, b->nscale, b->n, 0, e) < 0)
					goto out;
				continue;
			}
			if (b->changed) {
				if (put_scales(w, rec, b->nscale, b->n,
				    b->adjusted + b->raised, e) < 0)
					goto out;
				continue;
			}
		}
		if (strcmp(type, "fold") == 0 && mp->resolved) {
			int nd = mixprec_node_find(mp, rec->subject);

			if (nd >= 0 && mp->nodes[nd].fold_dropped)
				continue;
		}
		if (strcmp(type, "hist") == 0 && o && o->skip_hist)
			continue;
		stream_put_rec(w, rec);
	}
	rc = stream_writer_error(w, e);
out:
	free(wb_at);
	free(t_at);
	free(synth);
	return rc;
}
