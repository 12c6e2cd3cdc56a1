/*
 * calib: the calibration engine and its samples. See calib.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calib.h"
#include "dataset.h"
#include "graph.h"
#include "statderive.h"
#include "statkern.h"
#include "strmap.h"

/*
 * Tensors of fewer values are counted even when their statistics could
 * be derived: deriving costs a pass over the blocks of a histogram,
 * about what counting this many values costs.
 */
#define DERIVE_MIN 16384

struct ctensor {
	char *name;
	int seen;		/* produced as a float tensor at least once */
	struct tstats ts;
	struct statderive d;	/* how its statistics derive from others' */
	int *src;		/* d.nsrc positions in t of those others */
	int feeds;		/* another tensor's statistics derive from it */
	struct tstats batch;	/* when feeds: the statistics of a batch */
	const struct tstats *last;	/* its batch of run last_run: &batch, */
	uint64_t last_run;		/* or the one it copies */
	int derived;		/* its last batch's histogram was derived */
};

/*
 * A fused chain whose links the interpreter shows block by block
 * (interp.h): link i's statistics gather in the kernel's slot i + 1 and
 * go to its tensor when the chain is done, as add_batch() would give
 * them had the tensor come whole.
 */
struct chain {
	int n;
	int t[FUSE_MAX];	/* the links' positions in calib.t */
	int hist[FUSE_MAX];	/* its histogram counted, not derived */
	int rank;		/* the shape of every link */
	int64_t dims[TENSOR_MAX_RANK];
};

struct calib {
	const struct model *m;
	struct interp *ip;
	int mbits;
	struct ctensor *t;	/* in the model's order */
	int nt;
	struct strmap *index;	/* name -> position in t */
	float *scratch;		/* float copies of float16/double tensors */
	size_t scratch_cap;
	uint64_t batches;
	struct tensor *outs;	/* graph outputs of a run, released at once */
	struct statkern *k;	/* the fast path; NULL: tstats' path */
	int *seen;		/* positions in t of the tensors seen, in order */
	int nseen;
	int seen_dirty;		/* a tensor was seen for the first time */
	uint64_t run;		/* runs started */
	struct chain ch;	/* the fused chain being seen */
	struct interp_chain_observer cobs;
};

void
calib_opts_init(struct calib_opts *o)
{
	o->threads = 0;
	o->mbits = HIST_MBITS_DEFAULT;
}

static int
add_tensor(struct calib *c, const char *name, struct err *e)
{
	struct ctensor *t;

	if (!name || !name[0] || strmap_get(c->index, name, NULL))
		return 0;
	t = &c->t[c->nt];
	if (!(t->name = strdup(name)))
		return err_nomem(e);
	if (tstats_init(&t->ts, c->mbits, e) < 0) {
		free(t->name);
		return -1;
	}
	if (strmap_put(c->index, name, c->nt) < 0) {
		tstats_release(&t->ts);
		free(t->name);
		return err_nomem(e);
	}
	c->nt++;
	return 0;
}

/* The tensors in the model's order (see calib.h). */
static int
list_tensors(struct calib *c, struct err *e)
{
	Onnx__GraphProto *g = c->m->proto->graph;
	struct graph *gr;
	const int *topo;
	size_t cap = 0;

	for (size_t i = 0; i < g->n_node; i++)
		cap += g->node[i]->n_output;
	cap += (size_t)interp_ninputs(c->ip) + 1;
	if (!(c->t = calloc(cap, sizeof *c->t)) ||
	    !(c->seen = calloc(cap, sizeof *c->seen)) ||
	    !(c->index = strmap_new()))
		return err_nomem(e);
	for (int i = 0; i < interp_ninputs(c->ip); i++)
		if (add_tensor(c, interp_input_name(c->ip, i), e) < 0)
			return -1;
	if (!(gr = graph_new(g, e)))
		return -1;
	topo = graph_topo(gr);
	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *n = g->node[topo[k]];

		for (size_t j = 0; j < n->n_output; j++)
			if (add_tensor(c, n->output[j], e) < 0) {
				graph_free(gr);
				return -1;
			}
	}
	graph_free(gr);
	return 0;
}

static int
has_stats(void *ctx, const char *name)
{
	return strmap_get(((struct calib *)ctx)->index, name, NULL);
}

/*
 * Which tensors' statistics derive from which (statderive.h); the
 * tensors they derive from keep each batch's statistics apart.
 */
static int
plan_derived(struct calib *c, struct err *e)
{
	Onnx__GraphProto *g = c->m->proto->graph;

	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *n = g->node[k];

		for (size_t j = 0; j < n->n_output; j++) {
			struct ctensor *ct;
			int i;

			if (!n->output[j][0] ||
			    !strmap_get(c->index, n->output[j], &i))
				continue;
			ct = &c->t[i];
			statderive_plan(c->m, n, j, has_stats, c, &ct->d);
			if (ct->d.kind == STATDERIVE_NONE)
				continue;
			if (!(ct->src = calloc((size_t)ct->d.nsrc,
			    sizeof *ct->src)))
				return err_nomem(e);
			for (int q = 0; q < ct->d.nsrc; q++) {
				struct ctensor *s;

				strmap_get(c->index, ct->d.src[q], &ct->src[q]);
				s = &c->t[ct->src[q]];
				if (!s->feeds && tstats_init(&s->batch, c->mbits,
				    e) < 0)
					return -1;
				s->feeds = 1;
			}
		}
	}
	return 0;
}

static int observe(void *ctx, const char *name, const struct tensor *t,
    struct err *e);
static const struct interp_chain_observer chain_observer;

struct calib *
calib_new(const struct model *m, const struct calib_opts *o, struct err *e)
{
	struct calib_opts def;
	struct interp_opts io = { 0 };
	struct calib *c;

	if (!o) {
		calib_opts_init(&def);
		o = &def;
	}
	if (!(c = calloc(1, sizeof *c))) {
		err_nomem(e);
		return NULL;
	}
	c->m = m;
	c->mbits = o->mbits;
	io.threads = o->threads;
	io.observe = observe;
	io.observe_ctx = c;
	if (c->mbits >= 0 && c->mbits <= STATKERN_MBITS_MAX) {
		c->cobs = chain_observer;
		c->cobs.max_threads = o->threads > 0 ? o->threads : 2;
		io.chain_observer = &c->cobs;
	}
	if (!(c->ip = interp_new(m, &io, e)))
		goto fail;
	if (list_tensors(c, e) < 0 ||
	    (!getenv("ONNXQ_NO_DERIVE") && plan_derived(c, e) < 0))
		goto fail;
	if (!(c->outs = calloc((size_t)interp_noutputs(c->ip) + 1,
	    sizeof *c->outs))) {
		err_nomem(e);
		goto fail;
	}
	/* as many threads as chains are seen on (cobs.max_threads) */
	if (c->mbits >= 0 && c->mbits <= STATKERN_MBITS_MAX &&
	    !(c->k = statkern_new(o->threads > 0 ? o->threads : 2, c->mbits,
	    e)))
		goto fail;
	return c;
fail:
	calib_free(c);
	return NULL;
}

void
calib_free(struct calib *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nt; i++) {
		free(c->t[i].name);
		tstats_release(&c->t[i].ts);
		free(c->t[i].src);
		if (c->t[i].feeds)
			tstats_release(&c->t[i].batch);
	}
	free(c->t);
	free(c->seen);
	strmap_free(c->index);
	free(c->scratch);
	free(c->outs);
	statkern_free(c->k);
	interp_free(c->ip);
	free(c);
}

const struct interp *
calib_interp(const struct calib *c)
{
	return c->ip;
}

uint64_t
calib_batches(const struct calib *c)
{
	return c->batches;
}


static int
add_values(struct calib *c, struct tstats *ts, const float *x, size_t n,
    struct err *e)
{
	return c->k ? statkern_add_batch(c->k, ts, x, n, e) :
	    tstats_add_batch(ts, x, n, e);
}

/* Tensor i's batch of this run, when it kept one; else NULL. */
static const struct tstats *
batch_of(const struct calib *c, int i)
{
	return c->t[i].last_run == c->run ? c->t[i].last : NULL;
}

/* Empty b for a new batch of type dt, keeping its histogram's memory. */
static void
batch_reset(struct tstats *b, int dt)
{
	struct hist *h = b->hist;

	b->hist = NULL;
	tstats_release(b);
	tstats_init(b, -1, NULL);	/* no histogram: cannot fail */
	if ((b->hist = h) != NULL)
		hist_clear(h);
	b->dtype = dt;
}

/*
 * Can ct's histogram of this batch (values of type dt) be derived from
 * its sources' batches? Not when an infinity there would become finite.
 */
static int
hist_derivable(const struct calib *c, const struct ctensor *ct, int dt)
{
	int open = ct->d.lo == -INFINITY && ct->d.hi == INFINITY;

	if (ct->d.kind != STATDERIVE_HIST || !ct->ts.hist ||
	    (ct->d.float32_only && dt != DT_FLOAT))
		return 0;
	for (int q = 0; q < ct->d.nsrc; q++) {
		const struct tstats *s = batch_of(c, ct->src[q]);

		if (!s || !s->hist || s->dtype != dt || (!open && s->inf))
			return 0;
	}
	return 1;
}

/*
 * Add one batch of ct's n values x (of type dt): derived from its
 * sources' batches where statderive.h says how, and kept apart as well
 * when other tensors derive from it.
 */
/*
 * Where a batch of ct (of type dt, DERIVE_MIN values or more) goes: its
 * own statistics, or the batch kept apart when others derive from it.
 */
static struct tstats *
batch_begin(struct ctensor *ct, int dt)
{
	if (!ct->feeds)
		return &ct->ts;
	batch_reset(&ct->batch, dt);
	return &ct->batch;
}

/* ct's histogram of this batch, h, derived from its sources' batches. */
static int
hist_derive(const struct calib *c, struct ctensor *ct, struct hist *h,
    struct err *e)
{
	for (int q = 0; q < ct->d.nsrc; q++)
		if (hist_add_clamped(h, batch_of(c, ct->src[q])->hist,
		    ct->d.lo, ct->d.hi, e) < 0)
			return -1;
	ct->derived = 1;
	return 0;
}

/* After batch_begin() and the batch: the batch kept apart is merged. */
static int
batch_end(struct calib *c, struct ctensor *ct, struct err *e)
{
	if (!ct->feeds)
		return 0;
	ct->last = &ct->batch;
	ct->last_run = c->run;
	return tstats_merge(&ct->ts, &ct->batch, e);
}

static int
add_batch(struct calib *c, struct ctensor *ct, int dt, const float *x,
    size_t n, struct err *e)
{
	const struct tstats *src;
	struct tstats *to = &ct->ts;

	ct->derived = 0;
	if (n < DERIVE_MIN)
		return add_values(c, to, x, n, e);
	if (ct->d.kind == STATDERIVE_COPY &&
	    (src = batch_of(c, ct->src[0])) && src->dtype == dt) {
		ct->derived = 1;
		ct->last = src;
		ct->last_run = c->run;
		return tstats_merge(to, src, e);
	}
	to = batch_begin(ct, dt);
	if (hist_derivable(c, ct, dt)) {
		struct hist *h = to->hist;
		int r;

		/* the sums from the values, the histogram from the sources' */
		to->hist = NULL;
		r = add_values(c, to, x, n, e);
		to->hist = h;
		if (r < 0 || hist_derive(c, ct, h, e) < 0)
			return -1;
	} else if (add_values(c, to, x, n, e) < 0)
		return -1;
	return batch_end(c, ct, e);
}

/* ct made again, of type dt: noted, or an error when its type changed. */
static int
note_seen(struct calib *c, struct ctensor *ct, int dt, struct err *e)
{
	if (!ct->seen) {
		ct->seen = 1;
		ct->ts.dtype = dt;
		c->seen_dirty = 1;
	} else if (ct->ts.dtype != dt)
		return err_set(e, "tensor %s: type %s, earlier %s", ct->name,
		    dtype_name(dt), dtype_name(ct->ts.dtype));
	return 0;
}

/* The interpreter shows us each tensor once it is made. */
static int
observe(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	struct calib *c = ctx;
	struct ctensor *ct;
	const float *x;
	int i;

	if (!dtype_is_float(t->dtype) || !strmap_get(c->index, name, &i))
		return 0;
	ct = &c->t[i];
	if (note_seen(c, ct, t->dtype, e) < 0)
		return -1;
	if (t->dtype == DT_FLOAT)
		x = t->data;
	else {
		size_t n = (size_t)t->nelem;

		if (n > c->scratch_cap) {
			float *s = realloc(c->scratch, n * sizeof *s);

			if (!s)
				return err_nomem(e);
			c->scratch = s;
			c->scratch_cap = n;
		}
		tensor_to_float(t, c->scratch);
		x = c->scratch;
	}
	tstats_add_shape(&ct->ts, t->rank, t->dims);
	if (add_batch(c, ct, t->dtype, x, (size_t)t->nelem, e) < 0)
		return err_prefix(e, "tensor %s", name);
	return 0;
}

/*
 * Link i of the chain is derived (hist_derivable) once its links before
 * it are done: a source among them counts as having its batch, whose
 * infinities done() checks.
 */
static int
chain_derivable(const struct calib *c, const struct ctensor *ct, int i)
{
	if (ct->d.kind != STATDERIVE_HIST || !ct->ts.hist)
		return 0;
	for (int q = 0; q < ct->d.nsrc; q++) {
		const struct tstats *s = batch_of(c, ct->src[q]);
		int open = ct->d.lo == -INFINITY && ct->d.hi == INFINITY, j;

		for (j = 0; j < i && c->ch.t[j] != ct->src[q]; j++)
			;
		if (j < i)
			continue;
		if (!s || !s->hist || s->dtype != DT_FLOAT ||
		    (!open && s->inf))
			return 0;
	}
	return 1;
}

/* interp.h: a chain of links named names[0..n-1], like x. */
static int
chain_begin(void *ctx, const char *const *names, int n,
    const struct tensor *x, struct err *e)
{
	struct calib *c = ctx;

	if (x->nelem < DERIVE_MIN || n > FUSE_MAX)
		return 0;
	if (statkern_slots(c->k, n + 1, e) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct ctensor *ct;

		if (!strmap_get(c->index, names[i], &c->ch.t[i]))
			return 0;
		ct = &c->t[c->ch.t[i]];
		/* a change of type is observe()'s to report */
		if ((ct->seen && ct->ts.dtype != DT_FLOAT) ||
		    ct->d.kind == STATDERIVE_COPY)
			return 0;
		c->ch.hist[i] = ct->ts.hist && !chain_derivable(c, ct, i);
	}
	for (int i = 0; i < n; i++)
		statkern_slot_reset(c->k, i + 1);
	c->ch.n = n;
	c->ch.rank = x->rank;
	memcpy(c->ch.dims, x->dims, (size_t)x->rank * sizeof *x->dims);
	return 1;
}

static void
chain_see(void *ctx, int link, const float *v, int64_t at, int64_t len,
    int t)
{
	struct calib *c = ctx;

	(void)at;
	statkern_slot_chunk(c->k, link + 1, t, v, (size_t)len,
	    c->ch.hist[link]);
}

/*
 * Can the links whose histograms were to be derived be? Not when an
 * infinity of a source among the links would become finite.
 */
static int
chain_can_derive(const struct calib *c)
{
	for (int i = 0; i < c->ch.n; i++) {
		const struct ctensor *ct = &c->t[c->ch.t[i]];

		if (c->ch.hist[i] || !ct->ts.hist ||
		    (ct->d.lo == -INFINITY && ct->d.hi == INFINITY))
			continue;
		for (int j = 0; j < i; j++)
			for (int q = 0; q < ct->d.nsrc; q++)
				if (c->ch.t[j] == ct->src[q] &&
				    statkern_slot_inf(c->k, j + 1))
					return 0;
	}
	return 1;
}

static int
chain_done(void *ctx, struct err *e)
{
	struct calib *c = ctx;
	int i;

	if (!chain_can_derive(c)) {
		for (i = 0; i < c->ch.n; i++)
			statkern_slot_discard(c->k, i + 1);
		return 1;
	}
	for (i = 0; i < c->ch.n; i++) {
		struct ctensor *ct = &c->t[c->ch.t[i]];
		struct tstats *to;
		struct hist *h;
		int r;

		if (note_seen(c, ct, DT_FLOAT, e) < 0)
			goto fail;
		tstats_add_shape(&ct->ts, c->ch.rank, c->ch.dims);
		ct->derived = 0;
		to = batch_begin(ct, DT_FLOAT);
		h = to->hist;
		if (!c->ch.hist[i])
			to->hist = NULL;
		r = statkern_slot_commit(c->k, i + 1, to, c->ch.hist[i], e);
		to->hist = h;
		if (r < 0 || (!c->ch.hist[i] && h &&
		    hist_derive(c, ct, h, e) < 0) || batch_end(c, ct, e) < 0) {
			err_prefix(e, "tensor %s", ct->name);
			i++;
			goto fail;
		}
	}
	return 0;
fail:
	for (; i < c->ch.n; i++)
		statkern_slot_discard(c->k, i + 1);
	return -1;
}

static const struct interp_chain_observer chain_observer = {
	chain_begin, chain_see, chain_done, STATKERN_CHUNK, 1
};

int
calib_run(struct calib *c, const struct tensor *inputs, struct err *e)
{
	int r;

	c->run++;	/* the batches kept apart so far are stale */
	r = interp_run(c->ip, inputs, c->outs, e);

	for (int i = 0; r == 0 && i < interp_noutputs(c->ip); i++)
		tensor_release(&c->outs[i]);
	if (r == 0)
		c->batches++;
	return r;
}

int
calib_merge(struct calib *dst, const struct calib *src, struct err *e)
{
	if (dst->m != src->m || dst->nt != src->nt || dst->mbits != src->mbits)
		return err_set(e, "engines of different models merged");
	for (int i = 0; i < src->nt; i++) {
		const struct ctensor *s = &src->t[i];
		struct ctensor *d = &dst->t[i];

		if (!s->seen)
			continue;
		if (note_seen(dst, d, s->ts.dtype, e) < 0)
			return -1;
		if (tstats_merge(&d->ts, &s->ts, e) < 0)
			return err_prefix(e, "tensor %s", d->name);
	}
	dst->batches += src->batches;
	return 0;
}

/* The list of tensors seen, brought up to date after new ones appeared. */
static void
update_seen(const struct calib *cc)
{
	struct calib *c = (struct calib *)cc;	/* a cache, not a change */

	if (!c->seen_dirty)
		return;
	c->nseen = 0;
	for (int i = 0; i < c->nt; i++)
		if (c->t[i].seen)
			c->seen[c->nseen++] = i;
	c->seen_dirty = 0;
}

int
calib_tensor_derived(const struct calib *c, const char *name)
{
	int i;

	return strmap_get(c->index, name, &i) && c->t[i].derived;
}

int
calib_ntensors(const struct calib *c)
{
	update_seen(c);
	return c->nseen;
}

const char *
calib_tensor_name(const struct calib *c, int i)
{
	update_seen(c);
	return i >= 0 && i < c->nseen ? c->t[c->seen[i]].name : NULL;
}

const struct tstats *
calib_tensor_stats(const struct calib *c, int i)
{
	update_seen(c);
	return i >= 0 && i < c->nseen ? &c->t[c->seen[i]].ts : NULL;
}

int
calib_write(const struct calib *c, struct stream_writer *w, int annotate,
    struct err *e)
{
	/* without it (out of memory) every edge is formatted anew */
	struct tstats_edges *ed = tstats_edges_new();

	for (int i = 0; i < c->nt; i++)
		if (c->t[i].seen && tstats_write_ed(&c->t[i].ts, c->t[i].name,
		    w, annotate, ed, e) < 0) {
			tstats_edges_free(ed);
			return -1;
		}
	tstats_edges_free(ed);
	return stream_writer_error(w, e);
}

int
calib_annotate_model(struct model *m, const char *text, size_t len,
    struct err *e)
{
	Onnx__ModelProto *mp = m->proto;
	Onnx__StringStringEntryProto *kv = NULL, **props;
	char *val;

	if (!(val = malloc(len + 1)))
		return err_nomem(e);
	memcpy(val, text, len);
	val[len] = '\0';
	for (size_t i = 0; i < mp->n_metadata_props; i++)
		if (mp->metadata_props[i]->key &&
		    strcmp(mp->metadata_props[i]->key, CALIB_META_KEY) == 0)
			kv = mp->metadata_props[i];
	if (kv) {
		free(kv->value);
		kv->value = val;
		return 0;
	}
	if (!(kv = malloc(sizeof *kv)) || !(props = realloc(mp->metadata_props,
	    (mp->n_metadata_props + 1) * sizeof *props))) {
		free(kv);
		free(val);
		return err_nomem(e);
	}
	mp->metadata_props = props;
	onnx__string_string_entry_proto__init(kv);
	kv->value = val;
	if (!(kv->key = strdup(CALIB_META_KEY))) {
		free(kv);
		free(val);
		return err_nomem(e);
	}
	props[mp->n_metadata_props++] = kv;
	return 0;
}

/* Samples. */

struct calib_data {
	struct dataset *ds;	/* the samples, images included */
	int has_images;
	int shapes_set;		/* dataset_expect_shapes() called */
	struct image_prep prep;
};

/*
 * Tell the dataset the model's input shapes once, so a file too big for
 * its input is refused from its header, before it is read or inflated.
 */
static int
expect_shapes(struct calib_data *d, const struct interp *ip, int n,
    struct err *e)
{
	int *ranks = calloc((size_t)n + 1, sizeof *ranks);
	int64_t *dims = calloc((size_t)n * TENSOR_MAX_RANK + 1, sizeof *dims);
	int r;

	if (!ranks || !dims) {
		free(ranks);
		free(dims);
		return err_nomem(e);
	}
	for (int k = 0; k < n; k++)
		interp_input_type(ip, k, &ranks[k], &dims[k * TENSOR_MAX_RANK]);
	r = dataset_expect_shapes(d->ds, n, ranks, dims, e);
	free(ranks);
	free(dims);
	d->shapes_set = r == 0;
	return r;
}

struct calib_data *
calib_data_open(const char *const *dirs, int ndirs, struct err *e)
{
	struct calib_data *d;

	if (!(d = calloc(1, sizeof *d))) {
		err_nomem(e);
		return NULL;
	}
	image_prep_init(&d->prep);
	if (!(d->ds = dataset_open_images(dirs, ndirs, e))) {
		free(d);
		return NULL;
	}
	d->has_images = dataset_has_images(d->ds);
	return d;
}

void
calib_data_set_prep(struct calib_data *d, const struct image_prep *p)
{
	d->prep = *p;
}

void
calib_data_free(struct calib_data *d)
{
	if (!d)
		return;
	dataset_free(d->ds);
	free(d);
}

int
calib_data_count(const struct calib_data *d)
{
	return dataset_count(d->ds);
}

const char *
calib_data_name(const struct calib_data *d, int i)
{
	return dataset_sample_name(d->ds, i);
}

int
calib_data_has_images(const struct calib_data *d)
{
	return d->has_images;
}

/*
 * The file that holds input k of sample i, for messages: the .pb or
 * .npy file when there is one, else the sample (an .npz, an image).
 * malloc'd; NULL when out of memory.
 */
static char *
input_file(const struct calib_data *d, int i, int k, const char *input)
{
	const char *name = calib_data_name(d, i);
	char buf[64], *fname, *p;
	struct stat st;
	size_t len = strlen(name);

	if (dataset_sample_is_image(d->ds, i) ||
	    (len > 4 && strcmp(name + len - 4, ".npz") == 0))
		return strdup(name);
	snprintf(buf, sizeof buf, "input_%d.pb", k);
	if ((p = dataset_path_join(name, buf)) && stat(p, &st) == 0)
		return p;
	free(p);
	if (!(fname = dataset_file_name(input)))
		return NULL;
	if ((p = malloc(len + strlen(fname) + 6)))
		sprintf(p, "%s/%s.npy", name, fname);
	free(fname);
	return p;
}

/*
 * Does t fit input k? batched: only the first dimension may differ from a
 * static one (it is checked on the whole batch).
 */
static int
check_fit(const struct calib_data *d, const struct interp *ip, int i, int k,
    const struct tensor *t, int batched, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK];
	char have[256], want[256], *file;
	int rank, dt, bad;

	dt = interp_input_type(ip, k, &rank, dims);
	bad = dt != DT_UNDEFINED && t->dtype != dt;
	if (!bad && rank >= 0) {
		bad = rank != t->rank;
		for (int j = batched ? 1 : 0; !bad && j < rank; j++)
			bad = dims[j] >= 0 && dims[j] != t->dims[j];
	}
	if (!bad)
		return 0;
	if (!(file = input_file(d, i, k, interp_input_name(ip, k))))
		return err_nomem(e);
	if (dt != DT_UNDEFINED && t->dtype != dt)
		err_set(e, "%s: input %s: type %s, the model wants %s", file,
		    interp_input_name(ip, k), dtype_name(t->dtype) ?
		    dtype_name(t->dtype) : "?", dtype_name(dt));
	else {
		shape_str_declared(t->rank, t->dims, have, sizeof have);
		shape_str_declared(rank, dims, want, sizeof want);
		err_set(e, "%s: input %s: shape %s, the model wants %s", file,
		    interp_input_name(ip, k), have, want);
	}
	free(file);
	return -1;
}

/* One sample's inputs. */
static int
load_one(struct calib_data *d, const struct interp *ip, int i,
    struct tensor *in, struct err *e)
{
	const char *path = dataset_sample_name(d->ds, i);
	int n = interp_ninputs(ip);

	if (!d->shapes_set && expect_shapes(d, ip, n, e) < 0)
		return -1;
	if (!dataset_sample_is_image(d->ds, i)) {
		const char **names = calloc((size_t)n + 1, sizeof *names);
		int *dtypes = calloc((size_t)n + 1, sizeof *dtypes);
		struct dataset_spec spec = { 0 };
		int64_t dims[TENSOR_MAX_RANK];
		int rank, r;

		if (!names || !dtypes) {
			free(names);
			free(dtypes);
			return err_nomem(e);
		}
		for (int k = 0; k < n; k++) {
			names[k] = interp_input_name(ip, k);
			dtypes[k] = interp_input_type(ip, k, &rank, dims);
		}
		spec.ninputs = n;
		spec.input_names = names;
		spec.input_dtypes = dtypes;
		r = dataset_load(d->ds, i, &spec, in, NULL, e);
		free(names);
		free(dtypes);
		return r;
	} else {
		struct image img;
		int r;

		if (n != 1)
			return err_set(e, "%s: images feed models with one input, "
			    "this one has %d", path, n);
		if (image_load(path, &img, e) < 0)
			return -1;
		r = image_to_tensor(&img, &d->prep, &in[0], e);
		image_release(&img);
		if (r < 0)
			return err_prefix(e, "%s", path);
		return 0;
	}
}

static void
release_n(struct tensor *t, int n)
{
	for (int k = 0; k < n; k++)
		tensor_release(&t[k]);
}

/* dst (empty) = the concatenation of parts[0..n-1] along axis 0. */
static int
concat0(struct tensor *dst, struct tensor *const *parts, int n, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK], total = 0;
	const struct tensor *a = parts[0];
	size_t es = dtype_size(a->dtype);
	char *p;

	for (int j = 0; j < n; j++)
		total += parts[j]->dims[0];
	memcpy(dims, a->dims, sizeof dims);
	dims[0] = total;
	if (tensor_alloc(dst, a->dtype, a->rank, dims, e) < 0)
		return -1;
	p = dst->data;
	for (int j = 0; j < n; j++) {
		size_t b = (size_t)parts[j]->nelem * es;

		memcpy(p, parts[j]->data, b);
		p += b;
	}
	return 0;
}

int
calib_data_load(struct calib_data *d, const struct interp *ip, int first,
    int n, struct tensor *inputs, struct err *e)
{
	int nin = interp_ninputs(ip), r = -1;
	struct tensor *all = NULL, **parts = NULL;

	for (int k = 0; k < nin; k++)
		memset(&inputs[k], 0, sizeof inputs[k]);
	if (first < 0 || n < 1 || first > dataset_count(d->ds) - n)
		return err_set(e, "no samples %d to %d", first, first + n - 1);
	if (n == 1) {
		if (load_one(d, ip, first, inputs, e) < 0)
			return -1;
		for (int k = 0; k < nin; k++)
			if (check_fit(d, ip, first, k, &inputs[k], 0, e) < 0) {
				release_n(inputs, nin);
				return -1;
			}
		return 0;
	}
	for (int k = 0; k < nin; k++) {
		int64_t dims[TENSOR_MAX_RANK];
		char want[256];
		int rank;

		interp_input_type(ip, k, &rank, dims);
		if (rank > 0 && dims[0] >= 0) {
			shape_str_declared(rank, dims, want, sizeof want);
			return err_set(e, "input %s: the model's first dimension "
			    "is fixed (%s), so samples cannot be batched: leave "
			    "out --batch", interp_input_name(ip, k), want);
		}
	}
	all = calloc((size_t)n * nin + 1, sizeof *all);
	parts = calloc((size_t)n + 1, sizeof *parts);
	if (!all || !parts) {
		err_nomem(e);
		goto out;
	}
	for (int j = 0; j < n; j++) {
		struct tensor *in = all + (size_t)j * nin;

		if (load_one(d, ip, first + j, in, e) < 0)
			goto out;
		for (int k = 0; k < nin; k++) {
			const struct tensor *a = &all[k];
			int same = in[k].dtype == a->dtype &&
			    in[k].rank == a->rank && in[k].rank > 0;

			if (check_fit(d, ip, first + j, k, &in[k], 1, e) < 0)
				goto out;
			for (int q = 1; same && q < a->rank; q++)
				same = in[k].dims[q] == a->dims[q];
			if (!same) {
				char have[256], want[256], *file;

				shape_str_declared(in[k].rank, in[k].dims,
				    have, sizeof have);
				shape_str_declared(a->rank, a->dims, want,
				    sizeof want);
				if (!(file = input_file(d, first + j, k,
				    interp_input_name(ip, k)))) {
					err_nomem(e);
					goto out;
				}
				err_set(e, "%s: input %s: shape %s cannot join "
				    "the batch of %s (%s)", file,
				    interp_input_name(ip, k), have,
				    calib_data_name(d, first), want);
				free(file);
				goto out;
			}
		}
	}
	for (int k = 0; k < nin; k++) {
		for (int j = 0; j < n; j++)
			parts[j] = &all[(size_t)j * nin + k];
		if (concat0(&inputs[k], parts, n, e) < 0)
			goto fail_in;
	}
	r = 0;
	goto out;
fail_in:
	release_n(inputs, nin);
out:
	if (all)
		release_n(all, n * nin);
	free(all);
	free(parts);
	return r;
}

int
calib_image_prep(const struct interp *ip, struct image_prep *p, int set,
    struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK];
	int rank, dt, hd, wd, cd;
	const char *name;
	char want[256];

	if (interp_ninputs(ip) != 1)
		return err_set(e, "images feed models with one input, this one "
		    "has %d", interp_ninputs(ip));
	name = interp_input_name(ip, 0);
	dt = interp_input_type(ip, 0, &rank, dims);
	if (dt != DT_UNDEFINED && dt != DT_FLOAT && dt != DT_UINT8)
		return err_set(e, "input %s: type %s: images become float or "
		    "uint8 tensors", name, dtype_name(dt) ? dtype_name(dt) : "?");
	p->dtype = dt == DT_UINT8 ? DT_UINT8 : DT_FLOAT;
	if (rank < 0) {
		if (!(set & CALIB_PREP_SIZE))
			return err_set(e, "input %s: shape unknown: give --size "
			    "WxH", name);
		return 0;
	}
	shape_str_declared(rank, dims, want, sizeof want);
	if (rank != 4)
		return err_set(e, "input %s: shape %s is not an image batch "
		    "(NCHW or NHWC)", name, want);
	if (!(set & CALIB_PREP_LAYOUT)) {
		if (dims[1] == 1 || dims[1] == 3)
			p->layout = IMAGE_NCHW;
		else if (dims[3] == 1 || dims[3] == 3)
			p->layout = IMAGE_NHWC;
		else
			p->layout = IMAGE_NCHW;
	}
	if (p->layout == IMAGE_NCHW)
		cd = 1, hd = 2, wd = 3;
	else
		hd = 1, wd = 2, cd = 3;
	if (dims[cd] >= 0 && dims[cd] != 1 && dims[cd] != 3)
		return err_set(e, "input %s: shape %s has %lld channels "
		    "(images give 1 or 3)", name, want, (long long)dims[cd]);
	p->channels = dims[cd] == 1 ? 1 : 3;
	if (!(set & CALIB_PREP_SIZE)) {
		if (dims[hd] < 0 || dims[wd] < 0)
			return err_set(e, "input %s: shape %s: the image size is "
			    "not fixed: give --size WxH", name, want);
		if (dims[hd] > 65536 || dims[wd] > 65536)
			return err_set(e, "input %s: shape %s: image too large",
			    name, want);
		p->height = (int)dims[hd];
		p->width = (int)dims[wd];
	}
	return 0;
}
