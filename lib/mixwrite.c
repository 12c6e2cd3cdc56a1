/* mixwrite: mixprec_write(), the stream with the last result (mixprec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixprec_impl.h"
#include "qparams.h"

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
			if (mx_in_list(t->recv, t->nrecv, (int)i))
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
