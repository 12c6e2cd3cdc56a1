/*
 * mixprec: the stream read whole and linked (nodes, tensors, records),
 * its queries and the requests; see mixprec.h and mixprec_impl.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixprec_impl.h"
#include "qparams.h"
#include "streamfit.h"
#include "tensor.h"
#include "util.h"

/* Small helpers, shared with mixresolve.c and mixwrite.c. */

/* "uint16", ..., "float". */
const char *
mx_type_name(int type)
{
	if (type == DT_FLOAT)
		return "float";
	return qparams_type_name(type) ? qparams_type_name(type) : "?";
}

int
mx_msgs_addf(struct config_msgs *m, const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	s = str_vfmt(f, ap);
	va_end(ap);
	return config_msgs_add(m, s);
}

int
mx_type_eq(const struct mixprec_type *a, const struct mixprec_type *b)
{
	return a->type == b->type && a->symmetric == b->symmetric &&
	    a->reduce_range == b->reduce_range && a->pow2 == b->pow2;
}

/* "uint16", or "uint16 symmetric" and so on, for messages. */
char *
mx_type_str(const struct mixprec_type *t)
{
	return str_fmt("%s%s%s%s", mx_type_name(t->type),
	    t->symmetric == 1 ? " symmetric" : "",
	    t->reduce_range == 1 ? " reduce_range" : "",
	    t->pow2 == 1 ? " power_of_two" : "");
}

/* A list of names for a message: "a, b, c, ..." */
char *
mx_names_str(const struct mixprec *mp, const int *v, int n, int tensors)
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

int
mx_in_list(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

int
mx_add_int(int **v, int *n, size_t *cap, int x)
{
	for (int i = 0; i < *n; i++)
		if ((*v)[i] == x)
			return 0;
	if (array_grow(v, cap, (size_t)*n, sizeof **v) < 0)
		return -1;
	(*v)[(*n)++] = x;
	return 0;
}

int
mx_method_is(const struct aq *q, const char *m)
{
	return q->method && strcmp(q->method, m) == 0;
}

/* The stream. */

void
mx_note(struct mixprec *mp, const char *f, ...)
{
	va_list ap;
	char *s;

	if (mp->note == NULL)
		return;
	va_start(ap, f);
	s = str_vfmt(f, ap);
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

int
mx_tensor_at(struct mixprec *mp, const char *name, struct err *e)
{
	struct mtensor *t;
	int i;

	if (strmap_get(mp->t_ix, name, &i))
		return i;
	if (mp->nt >= INT32_MAX || array_grow(&mp->t, &mp->capt, mp->nt,
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

/* A node record, read and checked by node_index (records.h). */
static int
read_node(struct mixprec *mp, const struct stream_rec *rec, struct err *e)
{
	const struct node_rec *r;
	struct mnode *n;

	if (node_index_add(&mp->ix, rec, e) < 0)
		return -1;
	r = &mp->ix.v[mp->ix.n - 1];
	if (mp->nnodes >= INT32_MAX || array_grow(&mp->nodes, &mp->capnodes,
	    mp->nnodes, sizeof *mp->nodes) < 0)
		return err_nomem(e);
	n = &mp->nodes[mp->nnodes];
	memset(n, 0, sizeof *n);
	n->name = r->name;
	n->op = r->op;
	n->in = r->in;
	n->out = r->out;
	n->nin = r->nin;
	n->nout = r->nout;
	n->fold_into = n->folded_by = n->fold_rec = n->req = -1;
	if ((n->tin = calloc(n->nin + 1, sizeof *n->tin)) == NULL ||
	    (n->tout = calloc(n->nout + 1, sizeof *n->tout)) == NULL) {
		free(n->tin);
		return err_nomem(e);
	}
	mp->nnodes++;
	for (size_t i = 0; i < n->nin; i++) {
		int t;

		n->tin[i] = -1;
		if (n->in[i][0] == '\0')
			continue;
		if ((t = mx_tensor_at(mp, n->in[i], e)) < 0)
			return -1;
		n->tin[i] = t;
		if (mx_add_int(&mp->t[t].cons, &mp->t[t].ncons,
		    &mp->t[t].capcons, (int)mp->nnodes - 1) < 0)
			return err_nomem(e);
	}
	for (size_t i = 0; i < n->nout; i++) {
		int t;

		n->tout[i] = -1;
		if (n->out[i][0] == '\0')
			continue;
		if ((t = mx_tensor_at(mp, n->out[i], e)) < 0)
			return -1;
		mp->t[t].producer = (int)mp->nnodes - 1;
		n->tout[i] = t;
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
	if ((n = node_index_find(&mp->ix, rec->subject)) < 0 ||
	    (p = node_index_find(&mp->ix, into)) < 0) {
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
add_record(struct mixprec *mp, struct stream_reader *r, struct err *e)
{
	const struct stream_rec *rec = stream_record(r);
	struct stream_rec *d;
	const char *type = rec->type;
	int i;

	/* A dynamic stream has no activation parameters to promote (they
	 * are computed per call); a node is left float with onnx-qparams
	 * --exclude-nodes instead. */
	if (strcmp(type, "dynamic") == 0)
		return stream_rec_err(rec, e, "dynamic records: mixed "
		    "precision needs a static stream (leave nodes float with "
		    "onnx-qparams --dynamic --exclude-nodes)");
	if (array_grow(&mp->recs, &mp->caprecs, mp->nrecs, sizeof *mp->recs) < 0)
		return err_nomem(e);
	/* hist records are most of a stream's bytes: kept as lines, split
	   again when read (mixresolve.c's load_stats), or only where they
	   are in the input file, read again then */
	if ((d = strcmp(type, "hist") == 0 ? stream_rec_dup_placed(r, e) :
	    stream_rec_dup(rec, e)) == NULL)
		return -1;
	mp->recs[mp->nrecs] = d;
	if (strcmp(type, "node") == 0) {
		if (read_node(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "qparam") == 0) {
		if (mx_read_qparam(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "convert") == 0) {
		if (mx_read_convert(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "fold") == 0) {
		if (read_fold(mp, d, e) < 0)
			goto fail;
	} else if (strcmp(type, "stat") == 0) {
		if ((i = mx_tensor_at(mp, d->subject, e)) < 0)
			goto fail;
		if (mp->t[i].stat_rec >= 0) {
			stream_rec_err(d, e, "stat %s given twice", d->subject);
			goto fail;
		}
		mp->t[i].stat_rec = (int)mp->nrecs;
	} else if (strcmp(type, "hist") == 0) {
		struct mtensor *t;

		if ((i = mx_tensor_at(mp, d->subject, e)) < 0)
			goto fail;
		t = &mp->t[i];
		if (array_grow(&t->hist_recs, &t->caphist, (size_t)t->nhist,
		    sizeof *t->hist_recs) < 0) {
			err_nomem(e);
			goto fail;
		}
		t->hist_recs[t->nhist++] = (int)mp->nrecs;
	} else if (strcmp(type, "bias") == 0) {
		if (!strmap_get(mp->bias_ix, d->subject, NULL)) {
			if (array_grow(&mp->bias_recs, &mp->capbias, mp->nbias,
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
			    mx_add_int(&n->q, &n->nq, &cap, t) < 0)
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
	return mx_link_biases(mp, e);
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
	    node_index_init(&mp->ix, e) < 0 ||
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

			if (array_grow(&mp->headers, &mp->caphdr, mp->nheaders,
			    sizeof *mp->headers) < 0 ||
			    (h = strdup(stream_header(r))) == NULL) {
				err_nomem(e);
				goto fail;
			}
			mp->headers[mp->nheaders++] = h;
			read_model_header(mp, h);
			continue;
		}
		if (add_record(mp, r, e) < 0)
			goto fail;
	}
	if (item < 0 || mx_kinds(mp, e) < 0)
		goto fail;
	for (size_t i = 0; i < mp->nt; i++)
		nq += mp->t[i].qrec >= 0;
	if (mp->nnodes == 0) {
		err_set(e, "%s: no node records (onnx-calib writes them)",
		    stream_name(r));
		goto fail;
	}
	if (nq == 0 && mp->nwbs > 0) {
		err_set(e, "%s: onnx-qparams quantized no activation, only "
		    "weights (--all-ops or a recipe's op_types would include "
		    "the operators)", stream_name(r));
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
	free(mp->kinds);
	for (size_t i = 0; i < mp->nnodes; i++) {
		struct mnode *n = &mp->nodes[i];

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
		free(t->cache);
		free(t->recv);
	}
	free(mp->t);
	for (size_t i = 0; i < mp->nwbs; i++) {
		free(mp->wbs[i].scale);
		free(mp->wbs[i].in_name);
		free(mp->wbs[i].w_name);
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
	node_index_release(&mp->ix);
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
mixprec_node_op(const struct mixprec *mp, int node)
{
	return mp->nodes[node].op;
}

int
mixprec_node_find(const struct mixprec *mp, const char *name)
{
	return node_index_find(&mp->ix, name);
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

	return m->qrec >= 0 && mx_method_is(&m->base, "shared") ? m->base.from :
	    -1;
}

const char *
mixprec_model_sha256(const struct mixprec *mp)
{
	return mp->model_sha[0] ? mp->model_sha : NULL;
}

int
mixprec_check_model(const struct mixprec *mp, const struct model *m,
    struct err *e)
{
	return streamfit_check_all(m, mp->recs, mp->nrecs, e);
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
new_req(struct mixprec *mp, const char *who)
{
	char *s;

	if (array_grow(&mp->reqs, &mp->capreqs, mp->nreqs, sizeof *mp->reqs) < 0 ||
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
	if (array_grow(&mp->pairs, &mp->cappairs, mp->npairs, sizeof *mp->pairs) < 0)
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

	if (n->req < 0 || mx_type_eq(&n->rt, t)) {
		if (n->req < 0) {
			n->req = req;
			n->rt = *t;
		}
		if (add_pair(mp, req, node, -1) < 0) {
			mx_msgs_addf(msgs, "%s: out of memory", mp->reqs[req]);
			return -2;
		}
		return 0;
	}
	a = mx_type_str(t);
	b = mx_type_str(&n->rt);
	c = mx_names_str(mp, n->q, n->nq, 1);
	rc = mx_msgs_addf(msgs, "%s: %snode %s%s%s%s asked to be %s, and %s by %s",
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
		mx_msgs_addf(msgs, "%s: out of memory", who);
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
		mx_msgs_addf(msgs, "%s: out of memory", who);
		return -1;
	}
	if ((why = str_fmt("tensor %s: ", m->name)) == NULL)
		return -1;
	if (m->producer >= 0) {
		if (set_node(mp, m->producer, t, req, why, msgs) < 0)
			rc = -1;
	} else if (m->req >= 0 && !mx_type_eq(&m->rt, t)) {
		char *a = mx_type_str(t), *b = mx_type_str(&m->rt);

		mx_msgs_addf(msgs, "%s: tensor %s asked to be %s, and %s by %s",
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
		return str_fmt("%s:%d:%d: %s", rg->path, line, col, label);
	return str_fmt("%s: %s", rg->path, label);
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
				char *p = str_printable(r->nodes.v[k]);

				mx_msgs_addf(msgs, "%s:%d:%d: %s: no node %s in "
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
			p = str_printable(r->tensors.v[k]);
			mx_msgs_addf(msgs, "%s:%d:%d: %s: tensor %s %s", rg->path,
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
				char *p = str_printable(r->ops.v[k]);

				mx_msgs_addf(msgs, "%s:%d:%d: %s: no node has op "
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
