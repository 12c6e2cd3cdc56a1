/*
 * mixwrite: mixprec_write() and mixprec_emit(), the last result as a
 * stream or as records (mixprec.h). One walk over the records serves
 * both (struct out); the typed records say what the text would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixprec_impl.h"
#include "qparams.h"

/* Writing. */

/* Where the walk goes: text to w, or records to sink. */
struct out {
	struct stream_writer *w;
	const struct mixprec_sink *sink;
};

/* A record as read. */
static int
out_rec(const struct out *o, const struct stream_rec *rec, struct err *e)
{
	if (o->w == NULL)
		return o->sink->rec(o->sink->ctx, rec, e);
	stream_put_rec(o->w, rec);
	return 0;
}

/* q as put_aq_keys() writes it and records.h reads it back. */
static int
aq_qparam(struct qparam *d, const struct mixprec *mp, const struct aq *q,
    struct err *e)
{
	if (qparam_alloc(d, 1, e) < 0)
		return -1;
	d->type = q->type;
	d->scale[0] = q->scale;
	d->zp[0] = q->zp;
	if (qparam_set_method(d, q->method, e) < 0)
		return -1;
	if (q->from >= 0 && (d->from = strdup(mp->t[q->from].name)) == NULL)
		return err_nomem(e);
	if (q->has_range && !mx_method_is(q, "shared")) {
		d->rmin[0] = q->rmin;
		d->rmax[0] = q->rmax;
	} else
		qparam_drop_range(d);
	return 0;
}

/* The changed qparam of an activation, as a record. */
static int
emit_act(const struct mixprec_sink *s, const struct mixprec *mp,
    const struct mtensor *t, struct err *e)
{
	struct qparam_rec r;

	memset(&r, 0, sizeof r);
	r.role = ROLE_ACT;
	r.line = t->synth ? 0 : mp->recs[t->qrec]->line;
	if ((r.name = strdup(t->name)) == NULL) {
		err_nomem(e);
		goto fail;
	}
	if (aq_qparam(&r.q, mp, &t->prod, e) < 0)
		goto fail;
	return s->qparam(s->ctx, &r, e);
fail:
	qparam_rec_release(&r);
	return -1;
}

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
	if (q->has_range && !mx_method_is(q, "shared")) {
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
	int shared = mx_method_is(&t->prod, "shared");
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

/*
 * The names of t's receiving nodes in node order, so that output does
 * not depend on discovery; NULL when out of memory.
 */
static const char **
recv_names(const struct mixprec *mp, const struct mtensor *t, size_t *n)
{
	const char **names = calloc((size_t)t->nrecv + 1, sizeof *names);

	*n = 0;
	if (names != NULL)
		for (size_t i = 0; i < mp->nnodes; i++)
			if (mx_in_list(t->recv, t->nrecv, (int)i))
				names[(*n)++] = mp->nodes[i].name;
	return names;
}

/* The same as one block of pointers and strings (records.h). */
static char **
recv_block(const struct mixprec *mp, const struct mtensor *t, size_t *n)
{
	const char **names = recv_names(mp, t, n);
	size_t len = 0;
	char **v = NULL, *p;

	if (names == NULL)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		len += strlen(names[i]) + 1;
	if ((v = malloc((*n + 1) * sizeof *v + len)) != NULL) {
		p = (char *)(v + *n + 1);
		for (size_t i = 0; i < *n; i++) {
			v[i] = strcpy(p, names[i]);
			p += strlen(p) + 1;
		}
		v[*n] = NULL;
	}
	free(names);
	return v;
}

static int
put_convert(const struct out *o, const struct mixprec *mp,
    const struct mtensor *t, struct err *e)
{
	const char **names;
	struct convert_rec c;
	size_t n;

	if (!t->conv_changed)
		return out_rec(o, mp->recs[t->conv_rec], e);
	if (o->w != NULL) {
		stream_rec_start(o->w, "convert", t->name);
		put_aq_keys(o->w, mp, &t->conv);
		if ((names = recv_names(mp, t, &n)) != NULL) {
			stream_put_names(o->w, "recv", names, n);
			free(names);
		}
		stream_rec_done(o->w);
		return 0;
	}
	memset(&c, 0, sizeof c);
	c.line = t->conv_rec >= 0 ? mp->recs[t->conv_rec]->line : 0;
	if ((c.name = strdup(t->name)) == NULL ||
	    (c.recv = recv_block(mp, t, &c.nrecv)) == NULL) {
		err_nomem(e);
		goto fail;
	}
	if (aq_qparam(&c.q, mp, &t->conv, e) < 0)
		goto fail;
	return o->sink->convert(o->sink->ctx, &c, e);
fail:
	convert_rec_release(&c);
	return -1;
}

/* A weight or bias qparam with new scales (adjusted: 0 unchanged). */
static int
emit_scales(const struct mixprec_sink *s, const struct stream_rec *rec,
    const float *scale, size_t n, int64_t adjusted, struct err *e)
{
	struct qparam_rec r;

	if ((s->read_qparam ? s->read_qparam(s->ctx, rec, &r, e) :
	    qparam_rec_read(&r, rec, e)) < 0)
		return -1;
	if (r.q.n != n) {
		qparam_rec_release(&r);
		return stream_rec_err(rec, e, "%zu scales, not %zu", n,
		    r.q.n);
	}
	memcpy(r.q.scale, scale, n * sizeof *scale);
	if (adjusted > 0)
		r.adjusted = adjusted;
	return s->qparam(s->ctx, &r, e);
}

static int
put_scales(const struct out *o, const struct stream_rec *rec,
    const float *scale, size_t n, int64_t adjusted, struct err *e)
{
	char *buf, *p, num[STREAM_NUM_MAX], adj[32];
	struct edit ed[2];
	struct stream_writer *w = o->w;

	if (w == NULL)
		return emit_scales(o->sink, rec, scale, n, adjusted, e);

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
put_tensor(const struct out *o, const struct mixprec *mp,
    const struct mtensor *t, struct err *e)
{
	int rc;

	if (t->floated)
		return 0;
	if (!t->prod_changed && !t->synth)
		rc = out_rec(o, mp->recs[t->qrec], e);
	else if (o->w != NULL)
		rc = put_act(o->w, mp, t, e);
	else
		rc = emit_act(o->sink, mp, t, e);
	if (rc < 0)
		return -1;
	if (t->has_conv)
		return put_convert(o, mp, t, e);
	return 0;
}

int
mx_kinds(struct mixprec *mp, struct err *e)
{
	static const struct {
		const char *type;
		enum mx_kind kind;
	} k[] = { { "convert", MX_CONVERT }, { "fold", MX_FOLD },
	    { "hist", MX_HIST }, { "stat", MX_FIXED }, { "weight", MX_FIXED },
	    { "bias", MX_FIXED }, { "node", MX_FIXED } };

	free(mp->kinds);
	if ((mp->kinds = malloc(mp->nrecs + 1)) == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < mp->nrecs; i++) {
		mp->kinds[i] = MX_OTHER;
		for (size_t j = 0; j < sizeof k / sizeof k[0]; j++)
			if (strcmp(mp->recs[i]->type, k[j].type) == 0)
				mp->kinds[i] = (unsigned char)k[j].kind;
	}
	return 0;
}

/* The records, to o (skip_hist: leave hist records out). */
static int
walk(const struct mixprec *mp, const struct out *o, int skip_hist,
    struct err *e)
{
	int *wb_at = NULL, *t_at = NULL, *synth = NULL;
	int rc = -1;

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
		int kind = mp->kinds[i];

		if (t_at[i] >= 0) {
			const struct mtensor *t = &mp->t[t_at[i]];

			if (!mp->resolved) {
				if (out_rec(o, rec, e) < 0 ||
				    (t->conv_rec >= 0 &&
				    out_rec(o, mp->recs[t->conv_rec], e) < 0))
					goto out;
			} else if (put_tensor(o, mp, t, e) < 0)
				goto out;
			if (mp->resolved && synth[t_at[i]] >= 0 &&
			    put_tensor(o, mp, &mp->t[synth[t_at[i]]], e) < 0)
				goto out;
			continue;
		}
		if (kind == MX_CONVERT)
			continue;	/* written after its qparam */
		if (wb_at[i] >= 0 && mp->resolved) {
			const struct mwb *b = &mp->wbs[wb_at[i]];

			if (b->dropped)
				continue;
			if (b->changed && b->is_bias) {
				if (put_scales(o, rec, b->nscale, b->n, 0,
				    e) < 0)
					goto out;
				continue;
			}
			if (b->changed) {
				if (put_scales(o, rec, b->nscale, b->n,
				    b->adjusted + b->raised, e) < 0)
					goto out;
				continue;
			}
		}
		if (kind == MX_FOLD && mp->resolved) {
			int nd = mixprec_node_find(mp, rec->subject);

			if (nd >= 0 && mp->nodes[nd].fold_dropped)
				continue;
		}
		if ((kind == MX_HIST && skip_hist) || (kind == MX_FIXED &&
		    o->sink && o->sink->fixed_once))
			continue;
		if (out_rec(o, rec, e) < 0)
			goto out;
	}
	rc = 0;
out:
	free(wb_at);
	free(t_at);
	free(synth);
	return rc;
}

int
mixprec_write(const struct mixprec *mp, struct stream_writer *w,
    const struct mixprec_write_opts *o, struct err *e)
{
	struct out to = { w, NULL };

	for (size_t i = 0; i < mp->nheaders; i++)
		stream_put_header(w, mp->headers[i]);
	if (o && o->prog)
		stream_put_prog(w, o->prog, o->version, o->argc, o->argv);
	if (walk(mp, &to, o && o->skip_hist, e) < 0)
		return -1;
	return stream_writer_error(w, e);
}

int
mixprec_emit(const struct mixprec *mp, const struct mixprec_sink *s,
    struct err *e)
{
	struct out to = { NULL, s };

	return walk(mp, &to, 1, e);
}
