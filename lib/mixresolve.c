/*
 * mixresolve: what the requests do (mixprec_resolve): produced types,
 * converts, parameters recomputed in another type, biases, folds; and
 * the records that carry parameters. The decisions for another type
 * (range re-selection, scales and zero points, bias scales) are
 * onnx-qparams' own (engine.h), over its default settings and the
 * flags that reproduce the stream's parameters. See mixprec.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hist.h"
#include "mixprec_impl.h"
#include "qparams.h"
#include "rangesel.h"
#include "stats.h"
#include "tensor.h"
#include "util.h"

/* Records. */

/*
 * An act qparam's or a convert's parameters (q, checked by records.h)
 * as struct aq: its method stays in the record rec.
 */
static int
aq_of(struct mixprec *mp, const struct stream_rec *rec,
    const struct qparam *q, struct aq *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	out->from = -1;
	if (q->axis >= 0 || q->n != 1)
		return stream_rec_err(rec, e, "%s %s: an activation quantized "
		    "per channel", rec->type, rec->subject);
	out->type = q->type;
	out->scale = q->scale[0];
	out->zp = q->zp[0];
	out->method = stream_rec_get(rec, "method");
	if (q->from != NULL && (out->from = mx_tensor_at(mp, q->from,
	    e)) < 0)
		return -1;
	if (q->rmin != NULL && q->rmax != NULL) {
		out->rmin = q->rmin[0];
		out->rmax = q->rmax[0];
		out->has_range = isfinite(out->rmin) && isfinite(out->rmax) &&
		    out->rmin <= out->rmax;
	}
	return 0;
}

/* A weight or bias qparam: w takes r's scales and names. */
static int
read_wb(struct mixprec *mp, struct qparam_rec *r, struct err *e)
{
	struct mwb *w;

	if (strmap_get(mp->wb_ix, r->name, NULL))
		return err_set(e, "%s:%ld: qparam %s given twice",
		    mp->recs[mp->nrecs]->file, r->line, r->name);
	if (mp->nwbs >= INT32_MAX || array_grow(&mp->wbs, &mp->capwbs, mp->nwbs,
	    sizeof *mp->wbs) < 0 ||
	    strmap_put(mp->wb_ix, mp->recs[mp->nrecs]->subject,
	    (int)mp->nwbs) < 0)
		return err_nomem(e);
	w = &mp->wbs[mp->nwbs++];
	memset(w, 0, sizeof *w);
	w->rec = (int)mp->nrecs;
	w->name = mp->recs[mp->nrecs]->subject;
	w->is_bias = r->role == ROLE_BIAS;
	w->input = w->weight = w->node = -1;
	w->beta = 1;
	w->scale = r->q.scale;
	w->n = r->q.n;
	r->q.scale = NULL;
	w->adjusted = r->adjusted;
	w->in_name = r->input;
	w->w_name = r->weight;
	r->input = r->weight = NULL;
	return 0;
}

int
mx_read_qparam(struct mixprec *mp, const struct stream_rec *rec,
    struct err *e)
{
	struct qparam_rec r;
	struct mtensor *t;
	int i, rc = -1;

	if (qparam_rec_read(&r, rec, e) < 0)
		return -1;
	if ((i = mx_tensor_at(mp, rec->subject, e)) < 0)
		goto out;
	t = &mp->t[i];
	if (r.role != ROLE_ACT) {
		t->is_wb = 1;
		rc = read_wb(mp, &r, e);
		goto out;
	}
	if (t->qrec >= 0) {
		stream_rec_err(rec, e, "qparam %s given twice", rec->subject);
		goto out;
	}
	if (aq_of(mp, rec, &r.q, &mp->t[i].base, e) < 0)
		goto out;
	mp->t[i].qrec = (int)mp->nrecs;
	rc = 0;
out:
	qparam_rec_release(&r);
	return rc;
}

int
mx_read_convert(struct mixprec *mp, const struct stream_rec *rec,
    struct err *e)
{
	struct convert_rec c;
	struct aq q;
	struct mtensor *t;
	size_t cap = 0;
	int i, nd, rc = -1;

	if (convert_rec_read(&c, rec, e) < 0)
		return -1;
	if (aq_of(mp, rec, &c.q, &q, e) < 0 ||
	    (i = mx_tensor_at(mp, rec->subject, e)) < 0)
		goto out;
	t = &mp->t[i];
	if (t->conv_rec >= 0) {
		stream_rec_err(rec, e, "convert %s given twice", rec->subject);
		goto out;
	}
	t->conv0 = q;
	t->conv_rec = (int)mp->nrecs;
	t->conv0_all = c.recv == NULL;
	for (size_t k = 0; k < c.nrecv; k++) {
		if ((nd = node_index_find(&mp->ix, c.recv[k])) < 0) {
			stream_rec_err(rec, e, "convert %s: recv: no node %s",
			    rec->subject, c.recv[k]);
			goto out;
		}
		if (mx_add_int(&t->recv0, &t->nrecv0, &cap, nd) < 0) {
			err_nomem(e);
			goto out;
		}
	}
	rc = 0;
out:
	convert_rec_release(&c);
	return rc;
}

/* Bias qparam records: their activation, weight and bias record. */
int
mx_link_biases(struct mixprec *mp, struct err *e)
{
	for (size_t i = 0; i < mp->nwbs; i++) {
		struct mwb *w = &mp->wbs[i];
		const struct stream_rec *br;
		struct wb_rec r;
		int k;

		if (!w->is_bias)
			continue;
		if (w->in_name == NULL || w->w_name == NULL)
			return stream_rec_err(mp->recs[w->rec], e,
			    "qparam %s: no input or weight", w->name);
		if ((k = mx_tensor_at(mp, w->in_name, e)) < 0)
			return -1;
		w->input = k;
		if (!strmap_get(mp->wb_ix, w->w_name, &w->weight))
			w->weight = -1;
		if (!strmap_get(mp->bias_ix, w->name, &k))
			continue;	/* cannot be recomputed; see resolve */
		br = mp->recs[mp->bias_recs[k]];
		if (wb_rec_read(&r, br, e) < 0)
			return -1;
		w->node = node_index_find(&mp->ix, r.node);
		w->beta = r.beta;
		w->babs = engine_bias_absmax(&r, &w->nb);
		wb_rec_release(&r);
		if (w->babs == NULL)
			return err_nomem(e);
	}
	return 0;
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
	for (int i = 0; i < t->nhist; i++) {
		struct stream_rec *h = stream_rec_reparse(
		    mp->recs[t->hist_recs[i]], e);
		int rc = h ? tstats_read_hist(&t->ts, h, e) : -1;

		stream_rec_free(h);
		if (rc < 0)
			return -1;
	}
	if (tstats_check_hist(&t->ts, e) < 0)
		return stream_rec_err(mp->recs[t->stat_rec], e, "tensor %s: %s",
		    t->name, e->msg);
	t->stats_ok = 1;
	return 1;
}

/* t's range by method for type x, as onnx-qparams selects it. */
static int
select_range(struct mtensor *t, int method, const struct mixprec_type *x,
    struct rangesel_memo *memo, float *lo, float *hi, struct err *e)
{
	struct settings s;
	int used;

	settings_default(&s);
	s.method = method;
	s.act_type = x->type;
	s.act_symmetric = x->symmetric;
	s.act_reduce_range = x->reduce_range;
	s.act_pow2 = x->pow2;
	return engine_select_range_memo(&s, NULL, &t->ts, 0, memo, lo, hi,
	    &used, e);
}

/* Ranges the same once widened to hold 0 (records give them so). */
static int
same_range(float l1, float h1, float l2, float h2)
{
	qparams_range_with_zero(&l1, &h1);
	qparams_range_with_zero(&l2, &h2);
	return l1 == l2 && h1 == h2;
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
	struct rangesel_memo *memo = NULL;
	struct err ignore;
	int rc = 0;

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
		/* the check and this selection share the data's tables
		 * (without memory for a memo, each makes its own) */
		memo = rangesel_memo_new();
		t->reselect = ok && select_range(t, method, &bt, memo, &l, &h,
		    &ignore) == 0 && same_range(l, h, b->rmin, b->rmax);
		if (ok && !t->reselect)
			mx_note(mp, "tensor %s: its %s range is not what the stream's "
			    "statistics give (options or overrides): kept for %s",
			    t->name, b->method, mx_type_name(x->type));
	}
	if (t->reselect && select_range(t, method, x, memo, lo, hi, e) < 0)
		rc = err_prefix(e, "tensor %s", t->name);
	rangesel_memo_free(memo);
	return rc;
}

/* Scale and zero point for [lo, hi] in type x, as onnx-qparams decides. */
static int
decide(const struct mixprec_type *x, float lo, float hi, struct aq *out,
    struct err *e)
{
	struct settings s;
	struct qparams_opts o;
	struct qparam q;
	int fixed;

	settings_default(&s);
	o = engine_act_opts(&s);
	o.type = x->type;
	o.symmetric = x->symmetric;
	o.reduce_range = x->reduce_range;
	o.pow2 = x->pow2;
	memset(&q, 0, sizeof q);
	if (engine_decide_range(&q, &fixed, NULL, o, lo, hi, NULL, e) < 0) {
		qparam_release(&q);
		return -1;
	}
	out->scale = q.scale[0];
	out->zp = q.zp[0];
	out->rmin = q.rmin[0];	/* widened to hold 0, as onnx-qparams */
	out->rmax = q.rmax[0];
	qparam_release(&q);
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

	if (mx_type_eq(&x, &bt)) {
		*out = t->base;
		return 0;
	}
	for (size_t i = 0; i < t->ncache; i++)
		if (mx_type_eq(&t->cache[i].t, &x)) {
			*out = t->cache[i].q;
			return 0;
		}
	memset(out, 0, sizeof *out);
	out->from = -1;
	if (mx_method_is(&t->base, "shared") && t->base.from >= 0 &&
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
			mx_note(mp, "tensor %s: %s parameters without a range: %s "
			    "ones computed over [%g, %g], what its %s grid "
			    "covers", t->name, t->base.method ? t->base.method :
			    "its", mx_type_name(x.type), (double)lo, (double)hi,
			    mx_type_name(t->base.type));
		}
		out->type = x.type;
		out->method = t->base.method;
		out->has_range = t->base.has_range;
		out->rmin = lo;
		out->rmax = hi;
		if (decide(&x, lo, hi, out, e) < 0)
			return err_prefix(e, "tensor %s: %s", t->name,
			    mx_type_name(x.type));
	}
	out->type = x.type;
	if (array_grow(&t->cache, &t->capcache, t->ncache, sizeof *t->cache) == 0) {
		t->cache[t->ncache].t = x;
		t->cache[t->ncache].q = *out;
		t->ncache++;
	}
	return 0;
}

/* Resolve. */

/*
 * What a reader wants: the produced type, base, an existing convert, or a
 * request.
 */
enum want_kind { W_BASE, W_CONV0, W_REQ };

struct want {
	enum want_kind kind;
	struct mixprec_type t;		/* resolved */
	int node;
};

static int
conv0_for(const struct mtensor *t, int node)
{
	return t->conv_rec >= 0 && (t->conv0_all ||
	    mx_in_list(t->recv0, t->nrecv0, node));
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

		if (mx_type_eq(&c0, &pt)) {
			mx_msgs_addf(msgs, "%s: tensor %s: the stream converts it to "
			    "%s for some readers, the type it would now have",
			    t->producer >= 0 ? mp->reqs[mp->nodes[t->producer].req]
			    : mp->reqs[t->req], t->name, mx_type_name(pt.type));
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

				if (!mx_type_eq(&c0, &w.t)) {
					char *a = mx_type_str(&w.t);

					mx_msgs_addf(msgs, "%s: tensor %s: node %s "
					    "reads it as %s (a convert in the "
					    "stream), not %s", mp->reqs[c->req],
					    t->name, c->name,
					    mx_type_name(t->conv0.type), a ? a : "?");
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
		if (mx_type_eq(&w.t, &pt))
			continue;
		if (!have_cw) {
			cw = w;
			have_cw = 1;
		} else if (mx_type_eq(&w.t, &cw.t)) {
			if (w.kind == W_CONV0)
				cw.kind = W_CONV0;	/* keep its parameters */
		} else {
			if (nodd == 0)
				ot = w.t;
			if (mx_add_int(&odd, &nodd, &capodd, w.node) < 0) {
				free(odd);
				return err_nomem(e);
			}
			continue;
		}
		if (mx_add_int(&t->recv, &t->nrecv, &t->caprecv, w.node) < 0) {
			free(odd);
			return err_nomem(e);
		}
	}
	if (nodd > 0) {
		char *a = mx_type_str(&cw.t), *b = mx_type_str(&pt);
		char *r1 = mx_names_str(mp, t->recv, t->nrecv, 0);
		char *r2 = mx_names_str(mp, odd, nodd, 0);
		char *c = mx_type_str(&ot);

		mx_msgs_addf(msgs, "tensor %s: produced as %s, its readers want "
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
				same = mx_in_list(t->recv0, t->nrecv0, t->recv[i]);
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
	if (t->has_conv && mx_in_list(t->recv, t->nrecv, node))
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

/* Bias b's scales (b->n of them) now, by the engine's decision. */
static int
bias_scales(struct mwb *b, const struct mwb *w, float act_scale,
    struct err *e)
{
	struct qparam wq, bq;

	memset(&wq, 0, sizeof wq);
	memset(&bq, 0, sizeof bq);
	wq.n = w->n;
	wq.scale = w->nscale ? w->nscale : w->scale;
	if (engine_bias_scales(&bq, act_scale, &wq, b->nb, b->beta, -1,
	    e) < 0) {
		qparam_release(&bq);
		return -1;
	}
	memcpy(b->nscale, bq.scale, b->n * sizeof *b->nscale);
	qparam_release(&bq);
	return 0;
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
					mx_msgs_addf(msgs, "bias %s: its activation "
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
			if (bias_scales(b, w, now->scale, e) < 0)
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

				type = mx_type_name(n->rt.type);
				for (int k = 0; k < n->nq; k++)
					if (mp->t[n->q[k]].qrec >= 0 &&
					    mx_add_int(&list, &nlist, &cap,
					    n->q[k]) < 0)
						goto out;
			} else {
				type = mx_type_name(mp->t[p->tensor].rt.type);
				if (mx_add_int(&list, &nlist, &cap, p->tensor) < 0)
					goto out;
			}
		}
		names = mx_names_str(mp, list, nlist, 1);
		if (nlist == 0)
			mx_msgs_addf(msgs, "%s: changes nothing: its nodes have no "
			    "quantized tensors (onnx-qparams quantized none of "
			    "them: --all-ops or a recipe's op_types would "
			    "include them)", mp->reqs[r]);
		else
			mx_msgs_addf(msgs, "%s: changes nothing: its tensors "
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
		    p->req >= 0 && mx_type_eq(&n->rt, &p->rt));
		/* A fold clamps with its output's parameters: float has none. */
		if (same && !(n->req >= 0 && n->rt.type == DT_FLOAT))
			continue;
		n->fold_dropped = 1;
		mx_note(mp, "fold %s into %s dropped: %s", n->name, p->name,
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
