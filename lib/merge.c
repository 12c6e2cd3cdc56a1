/*
 * merge: the exact merge of onnxq streams. See merge.h.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "stats.h"
#include "strmap.h"
#include "util.h"

/*
 * An item: one distinct header line or record. The map key starts with
 * the kind ("#", "s" stat, "t" hist, the record type, "~" unknown) and
 * orders ties; succ lists the items some input has right after this one.
 */
enum item_kind { IT_HEADER, IT_RECORD, IT_STAT, IT_HIST, IT_OTHER };

struct item {
	enum item_kind kind;
	char *key;		/* map key, also the tie-break order */
	char *subject;		/* stat/hist */
	struct stream_rec *rec;	/* IT_RECORD/IT_OTHER: the first copy */
	char *where;		/* "FILE:LINE" first seen, for messages */
	struct tstats ts;	/* IT_STAT, IT_HIST (only the histogram) */
	int has_ts;
	struct stream_kv *extra;	/* unknown keys of stat/hist, by key */
	size_t nextra;
	int *succ;
	size_t nsucc, capsucc;
	int indeg;
	int done;
};

struct stream_merge {
	struct item *items;
	size_t n, cap;
	struct strmap *index;
	char *model_sha;	/* sha256 of the first #model line */
	char *model_where;
	struct tstats_edges *edges;	/* bin edge texts; NULL: none */
};

struct stream_merge *
stream_merge_new(void)
{
	struct stream_merge *mg = calloc(1, sizeof *mg);

	if (mg && !(mg->index = strmap_new())) {
		free(mg);
		return NULL;
	}
	return mg;
}

void
stream_merge_free(struct stream_merge *mg)
{
	if (!mg)
		return;
	tstats_edges_free(mg->edges);
	for (size_t i = 0; i < mg->n; i++) {
		struct item *it = &mg->items[i];

		free(it->key);
		free(it->subject);
		stream_rec_free(it->rec);
		free(it->where);
		if (it->has_ts)
			tstats_release(&it->ts);
		for (size_t k = 0; k < it->nextra; k++) {
			free((char *)it->extra[k].key);
			free((char *)it->extra[k].val);
		}
		free(it->extra);
		free(it->succ);
	}
	free(mg->items);
	strmap_free(mg->index);
	free(mg->model_sha);
	free(mg->model_where);
	free(mg);
}

/* The item for key, created (kind, where) when new. Sets *isnew. */
static int
item_get(struct stream_merge *mg, enum item_kind kind, char *key,
    const char *file, long line, int *isnew, struct err *e)
{
	struct item *it;
	int idx;

	if (!key)
		return err_nomem(e);
	if (strmap_get(mg->index, key, &idx)) {
		free(key);
		*isnew = 0;
		return idx;
	}
	if (mg->n >= INT_MAX ||
	    array_grow(&mg->items, &mg->cap, mg->n, sizeof *mg->items) < 0) {
		free(key);
		return err_nomem(e);
	}
	it = &mg->items[mg->n];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->key = key;
	it->where = str_fmt("%s:%ld", file, line);
	if (!it->where || strmap_put(mg->index, key, (int)mg->n) < 0) {
		free(it->where);
		free(key);
		return err_nomem(e);
	}
	*isnew = 1;
	return (int)mg->n++;
}

static int
add_edge(struct stream_merge *mg, int from, int to, struct err *e)
{
	struct item *it;

	if (from < 0 || from == to)
		return 0;
	it = &mg->items[from];
	if (array_grow(&it->succ, &it->capsucc, it->nsucc,
	    sizeof *it->succ) < 0)
		return err_nomem(e);
	it->succ[it->nsucc++] = to;
	mg->items[to].indeg++;
	return 0;
}

/* The sha256= of a #model header line, or NULL. */
static const char *
model_sha(const struct stream_reader *r)
{
	const char *f;

	for (size_t i = 2; (f = stream_header_field(r, i)); i++)
		if (strncmp(f, "sha256=", 7) == 0)
			return f + 7;
	return NULL;
}

static int
cmp_extra(const void *a, const void *b)
{
	return strcmp(((const struct stream_kv *)a)->key,
	    ((const struct stream_kv *)b)->key);
}

/* Unknown keys of a stat or hist record: all inputs must agree on them. */
static int
merge_extra(struct item *it, const struct stream_rec *rec,
    const char *const *known, struct err *e)
{
	for (size_t i = 0; i < rec->nkv; i++) {
		const struct stream_kv *kv = &rec->kv[i];
		const char *const *k;
		size_t j;
		struct stream_kv *nx;

		for (k = known; *k; k++)
			if (strcmp(*k, kv->key) == 0)
				break;
		if (*k)
			continue;
		for (j = 0; j < it->nextra; j++)
			if (strcmp(it->extra[j].key, kv->key) == 0)
				break;
		if (j < it->nextra) {
			if (strcmp(it->extra[j].val, kv->val) != 0)
				return stream_rec_err(rec, e, "%s %s: key %s "
				    "differs from %s, cannot merge it",
				    rec->type, rec->subject, kv->key,
				    it->where);
			continue;
		}
		if (!(nx = realloc(it->extra, (it->nextra + 1) * sizeof *nx)))
			return err_nomem(e);
		it->extra = nx;
		nx[it->nextra].key = strdup(kv->key);
		nx[it->nextra].val = strdup(kv->val);
		if (!nx[it->nextra].key || !nx[it->nextra].val) {
			free((char *)nx[it->nextra].key);
			free((char *)nx[it->nextra].val);
			return err_nomem(e);
		}
		it->nextra++;
		qsort(it->extra, it->nextra, sizeof *it->extra, cmp_extra);
	}
	return 0;
}

static int
merge_record(struct stream_merge *mg, const struct stream_rec *rec, int *prev,
    struct err *e)
{
	enum item_kind kind;
	struct item *it;
	char *key;
	int idx, isnew;

	if (strcmp(rec->type, "stat") == 0) {
		kind = IT_STAT;
		key = str_fmt("s\t%s", rec->subject);
	} else if (strcmp(rec->type, "hist") == 0) {
		kind = IT_HIST;
		key = str_fmt("t\t%s", rec->subject);
	} else if (strcmp(rec->type, "node") == 0 ||
	    strcmp(rec->type, "weight") == 0 ||
	    strcmp(rec->type, "bias") == 0 ||
	    strcmp(rec->type, "qparam") == 0 ||
	    strcmp(rec->type, "convert") == 0) {
		/* known records about one subject: must agree */
		kind = IT_RECORD;
		key = str_fmt("%s\t%s", rec->type, rec->subject);
	} else {
		/* unknown type: kept once per distinct line */
		kind = IT_OTHER;
		key = str_fmt("~\t%s", rec->raw);
	}
	if ((idx = item_get(mg, kind, key, rec->file, rec->line, &isnew,
	    e)) < 0)
		return -1;
	it = &mg->items[idx];
	switch (kind) {
	case IT_RECORD:
	case IT_OTHER:
		if (isnew) {
			if (!(it->rec = stream_rec_dup(rec, e)))
				return -1;
		} else if (it->rec->rawlen != rec->rawlen ||
		    memcmp(it->rec->raw, rec->raw, rec->rawlen) != 0)
			return stream_rec_err(rec, e, "%s %s differs from %s",
			    rec->type, rec->subject, it->where);
		break;
	case IT_STAT: {
		struct tstats ts;

		if (tstats_init(&ts, -1, e) < 0)
			return -1;
		if (tstats_read_stat(&ts, rec, e) < 0)
			return -1;
		if (isnew) {
			it->ts = ts;
			it->has_ts = 1;
			if (!(it->subject = strdup(rec->subject)))
				return err_nomem(e);
		} else if (tstats_merge(&it->ts, &ts, e) < 0) {
			tstats_release(&ts);
			return err_prefix(e, "%s:%ld: stat %s", rec->file,
			    rec->line, rec->subject);
		} else
			tstats_release(&ts);
		if (merge_extra(it, rec, tstats_stat_keys, e) < 0)
			return -1;
		break;
	}
	case IT_HIST:
		if (isnew) {
			if (tstats_init(&it->ts, -1, e) < 0)
				return -1;
			it->has_ts = 1;
			if (!(it->subject = strdup(rec->subject)))
				return err_nomem(e);
		}
		if (tstats_read_hist(&it->ts, rec, e) < 0 ||
		    merge_extra(it, rec, tstats_hist_keys, e) < 0)
			return -1;
		break;
	default:
		break;
	}
	if (add_edge(mg, *prev, idx, e) < 0)
		return -1;
	*prev = idx;
	return 0;
}

static int
merge_header(struct stream_merge *mg, const struct stream_reader *r, int *prev,
    struct err *e)
{
	const char *line = stream_header(r), *sha;
	int idx, isnew;

	if (strcmp(stream_header_field(r, 0), "#model") == 0 &&
	    (sha = model_sha(r))) {
		if (!mg->model_sha) {
			mg->model_sha = strdup(sha);
			mg->model_where = str_fmt("%s:%ld", stream_name(r),
			    stream_lineno(r));
			if (!mg->model_sha || !mg->model_where)
				return err_nomem(e);
		} else if (strcmp(mg->model_sha, sha) != 0)
			return err_set(e, "%s:%ld: stream of another model "
			    "(sha256 %.12s..., %s has %.12s...)",
			    stream_name(r), stream_lineno(r), sha,
			    mg->model_where, mg->model_sha);
	}
	if ((idx = item_get(mg, IT_HEADER, str_fmt("#\t%s", line),
	    stream_name(r), stream_lineno(r), &isnew, e)) < 0)
		return -1;
	if (add_edge(mg, *prev, idx, e) < 0)
		return -1;
	*prev = idx;
	return 0;
}

int
stream_merge_add(struct stream_merge *mg, struct stream_reader *r,
    struct err *e)
{
	int got, prev_h = -1, prev_r = -1;

	while ((got = stream_next(r, e)) > 0) {
		if (got == STREAM_HEADER)
			got = merge_header(mg, r, &prev_h, e);
		else
			got = merge_record(mg, stream_record(r), &prev_r, e);
		if (got < 0)
			break;
	}
	return got < 0 ? -1 : 0;
}

/* A min-heap of item indices ordered by key. */
struct heap {
	int *v;
	size_t n;
	const struct item *items;
};

static int
heap_less(const struct heap *h, int a, int b)
{
	return strcmp(h->items[a].key, h->items[b].key) < 0;
}

static void
heap_push(struct heap *h, int x)
{
	size_t i = h->n++;

	h->v[i] = x;
	while (i > 0 && heap_less(h, h->v[i], h->v[(i - 1) / 2])) {
		int t = h->v[i];

		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static int
heap_pop(struct heap *h)
{
	int top = h->v[0];
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && heap_less(h, h->v[l], h->v[m]))
			m = l;
		if (r < h->n && heap_less(h, h->v[r], h->v[m]))
			m = r;
		if (m == i)
			break;
		{
			int t = h->v[i];

			h->v[i] = h->v[m];
			h->v[m] = t;
		}
		i = m;
	}
	return top;
}

static int
write_item(struct stream_merge *mg, int annotate, struct item *it,
    struct stream_writer *w, struct err *e)
{
	switch (it->kind) {
	case IT_HEADER:
		stream_put_header(w, it->key + 2);
		break;
	case IT_RECORD:
	case IT_OTHER:
		stream_put_rec(w, it->rec);
		break;
	case IT_STAT:
		stream_rec_start(w, "stat", it->subject);
		tstats_put_stat(&it->ts, w, annotate);
		for (size_t k = 0; k < it->nextra; k++)
			stream_put_raw(w, it->extra[k].key, it->extra[k].val);
		stream_rec_done(w);
		break;
	case IT_HIST:
		/* the same edges recur in every tensor: format each once */
		if (!mg->edges)
			mg->edges = tstats_edges_new();
		if (tstats_put_hist_ed(&it->ts, it->subject, w, it->extra,
		    it->nextra, mg->edges, e) < 0)
			return -1;
		break;
	}
	return 0;
}

/*
 * Write the items of one group (headers, or records) in topological
 * order of the input orders, ties broken by key.
 */
static int
write_group(struct stream_merge *mg, int headers, int annotate,
    struct stream_writer *w, struct err *e)
{
	struct heap h = { NULL, 0, mg->items };
	size_t left = 0;
	int rc = -1;

	if (!(h.v = malloc((mg->n ? mg->n : 1) * sizeof *h.v)))
		return err_nomem(e);
	for (size_t i = 0; i < mg->n; i++)
		if ((mg->items[i].kind == IT_HEADER) == headers) {
			left++;
			if (mg->items[i].indeg == 0)
				heap_push(&h, (int)i);
		}
	while (left > 0) {
		struct item *it;
		int x;

		if (h.n == 0) {
			/* the inputs disagree on the order (a cycle): take
			 * the least key */
			int best = -1;

			for (size_t i = 0; i < mg->n; i++) {
				const struct item *c = &mg->items[i];

				if ((c->kind == IT_HEADER) == headers &&
				    !c->done && (best < 0 ||
				    heap_less(&h, (int)i, best)))
					best = (int)i;
			}
			mg->items[best].indeg = 0;
			heap_push(&h, best);
		}
		x = heap_pop(&h);
		it = &mg->items[x];
		if (it->done)
			continue;
		it->done = 1;
		left--;
		if (write_item(mg, annotate, it, w, e) < 0)
			goto out;
		for (size_t k = 0; k < it->nsucc; k++) {
			struct item *s = &mg->items[it->succ[k]];

			if (!s->done && --s->indeg == 0)
				heap_push(&h, it->succ[k]);
		}
	}
	rc = 0;
out:
	free(h.v);
	return rc;
}

/* Each merged histogram counts exactly its tensor's finite values. */
int
stream_merge_check(struct stream_merge *mg, struct err *e)
{
	for (size_t i = 0; i < mg->n; i++) {
		struct item *h = &mg->items[i];
		struct tstats ts;
		char *key;
		int s, found;

		if (h->kind != IT_HIST)
			continue;
		if (!(key = str_fmt("s\t%s", h->subject)))
			return err_nomem(e);
		found = strmap_get(mg->index, key, &s);
		free(key);
		if (!found)
			return err_set(e, "%s: hist %s without a stat record",
			    h->where, h->subject);
		ts = mg->items[s].ts;
		ts.hist = h->ts.hist;
		if (tstats_check_hist(&ts, e) < 0)
			return err_prefix(e, "%s: hist %s", h->where,
			    h->subject);
	}
	return 0;
}

int
stream_merge_write_headers(struct stream_merge *mg, struct stream_writer *w,
    struct err *e)
{
	return write_group(mg, 1, 0, w, e);
}

int
stream_merge_write_records(struct stream_merge *mg, struct stream_writer *w,
    int annotate, struct err *e)
{
	return write_group(mg, 0, annotate, w, e);
}
