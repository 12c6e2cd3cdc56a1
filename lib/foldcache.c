/* foldcache: see foldcache.h. */
#include <stdlib.h>
#include <string.h>

#include "foldcache.h"
#include "strmap.h"
#include "util.h"

/* A form derived from an entry's value (foldcache_form()). */
struct fform {
	struct fform *next;
	int64_t key[FOLDCACHE_KEY_MAX];
	int nkey;
	void *data;
};

struct fentry {
	uint8_t *node;		/* the NodeProto, serialized */
	size_t nnode;
	int opset;
	int nin;
	struct tensor *in;	/* copies; dtype DT_UNDEFINED: absent */
	const void **src;	/* their bytes where they stay (stable()),
				   or NULL */
	struct tensor val;
	struct fform *forms;	/* made from val, freed with it */
};

struct foldcache {
	struct strmap *ix;	/* first output name -> entry */
	struct fentry *v;
	size_t n, cap;
	long hits, form_hits;
	foldcache_stable_fn stable;
	void *stable_ctx;
};

void
foldcache_set_stable(struct foldcache *c, foldcache_stable_fn stable,
    void *ctx)
{
	c->stable = stable;
	c->stable_ctx = ctx;
}

/* in's bytes, when they stay where they are for c's life; else NULL. */
static const void *
stable_src(const struct foldcache *c, const struct tensor *in)
{
	return c->stable && in && in->data &&
	    c->stable(c->stable_ctx, in->data) ? in->data : NULL;
}

struct foldcache *
foldcache_new(void)
{
	struct foldcache *c;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return NULL;
	if ((c->ix = strmap_new()) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

static void
fentry_release(struct fentry *f)
{
	free(f->node);
	for (int i = 0; i < f->nin; i++)
		tensor_release(&f->in[i]);
	free(f->in);
	free(f->src);
	tensor_release(&f->val);
	while (f->forms) {
		struct fform *next = f->forms->next;

		free(f->forms->data);
		free(f->forms);
		f->forms = next;
	}
	memset(f, 0, sizeof *f);
}

void
foldcache_free(struct foldcache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++)
		fentry_release(&c->v[i]);
	free(c->v);
	strmap_free(c->ix);
	free(c);
}

long
foldcache_hits(const struct foldcache *c)
{
	return c->hits;
}

static const char *
key_of(const Onnx__NodeProto *n)
{
	return n->n_output > 0 && n->output[0] ? n->output[0] : NULL;
}

/*
 * The same element type, shape and bytes (a == NULL: b absent); bytes
 * at src, the address b was copied from, that stay there are the same.
 */
static int
same_tensor(const struct foldcache *c, const struct tensor *a,
    const struct tensor *b, const void *src)
{
	if (a == NULL || a->data == NULL)
		return b->dtype == DT_UNDEFINED;
	if (a->dtype != b->dtype || !shape_equal(a, b))
		return 0;
	if (src != NULL && a->data == src && stable_src(c, a) == src)
		return 1;
	return memcmp(a->data, b->data, (size_t)a->nelem *
	    dtype_size(a->dtype)) == 0;
}

static int
same_node(const struct fentry *f, const Onnx__NodeProto *n, int opset)
{
	uint8_t *p;
	int same;

	if (f->opset != opset ||
	    protobuf_c_message_get_packed_size(&n->base) != f->nnode ||
	    (p = malloc(f->nnode ? f->nnode : 1)) == NULL)
		return 0;
	protobuf_c_message_pack(&n->base, p);
	same = memcmp(p, f->node, f->nnode) == 0;
	free(p);
	return same;
}

int
foldcache_get(struct foldcache *c, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, struct tensor *out)
{
	const char *key = key_of(n);
	struct fentry *f;
	int i;

	if (key == NULL || !strmap_get(c->ix, key, &i))
		return 0;
	f = &c->v[i];
	if (f->nin != nin || !same_node(f, n, opset))
		return 0;
	for (int j = 0; j < nin; j++)
		if (!same_tensor(c, in[j], &f->in[j], f->src[j]))
			return 0;
	*out = f->val;
	out->counted = 0;
	c->hits++;
	return 1;
}

/*
 * Keep val as made by node n from in[0..nin): a copy, or, given own
 * (val itself), val's data, lent back to own as foldcache_get() lends.
 */
static int
store(struct foldcache *c, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, const struct tensor *val,
    struct tensor *own, struct err *e)
{
	const char *key = key_of(n);
	struct fentry f = { 0 }, *at;
	int i;

	if (key == NULL)
		return 0;
	f.opset = opset;
	f.nnode = protobuf_c_message_get_packed_size(&n->base);
	if ((f.node = malloc(f.nnode ? f.nnode : 1)) == NULL ||
	    (f.in = calloc((size_t)nin + 1, sizeof *f.in)) == NULL ||
	    (f.src = calloc((size_t)nin + 1, sizeof *f.src)) == NULL) {
		free(f.node);
		free(f.in);
		return err_nomem(e);
	}
	protobuf_c_message_pack(&n->base, f.node);
	for (; f.nin < nin; f.nin++) {
		f.in[f.nin].dtype = DT_UNDEFINED;
		f.src[f.nin] = stable_src(c, in[f.nin]);
		if (in[f.nin] && in[f.nin]->data &&
		    tensor_copy(&f.in[f.nin], in[f.nin], e) < 0)
			goto fail;
	}
	if (!own && tensor_copy(&f.val, val, e) < 0)
		goto fail;
	if (strmap_get(c->ix, key, &i)) {
		fentry_release(&c->v[i]);
		at = &c->v[i];
	} else if (array_grow(&c->v, &c->cap, c->n, sizeof *c->v) < 0 ||
	    strmap_put(c->ix, key, (int)c->n) < 0) {
		err_nomem(e);
		goto fail;
	} else
		at = &c->v[c->n++];
	*at = f;
	if (own) {
		tensor_move(&at->val, own);
		*own = at->val;
		own->counted = 0;
	}
	return 0;
fail:
	f.nin = nin;	/* the copies not made are zero: released as such */
	fentry_release(&f);
	return -1;
}

int
foldcache_put(struct foldcache *c, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, const struct tensor *val,
    struct err *e)
{
	return store(c, n, opset, in, nin, val, NULL, e);
}

int
foldcache_keep(struct foldcache *c, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, struct tensor *val,
    struct err *e)
{
	return store(c, n, opset, in, nin, val, val, e) < 0 ? -1 :
	    key_of(n) != NULL;
}

long
foldcache_form_hits(const struct foldcache *c)
{
	return c->form_hits;
}

/* The entry whose value's bytes are data, nbytes long, or NULL. */
static struct fentry *
entry_of(struct foldcache *c, const void *data, size_t nbytes)
{
	/* a few hundred entries at most, asked once per node and
	   interpreter: a scan is cheap enough */
	for (size_t i = 0; data && i < c->n; i++)
		if (c->v[i].val.data == data && (size_t)c->v[i].val.nelem *
		    dtype_size(c->v[i].val.dtype) == nbytes)
			return &c->v[i];
	return NULL;
}

static struct fform *
form_of(const struct fentry *f, const int64_t *key, int nkey)
{
	struct fform *p;

	for (p = f->forms; p; p = p->next)
		if (p->nkey == nkey && memcmp(p->key, key, (size_t)nkey *
		    sizeof *key) == 0)
			return p;
	return NULL;
}

const void *
foldcache_form(struct foldcache *c, const void *data, size_t nbytes,
    const int64_t *key, int nkey)
{
	struct fentry *f = entry_of(c, data, nbytes);
	struct fform *p;

	if (!f || nkey < 0 || nkey > FOLDCACHE_KEY_MAX ||
	    !(p = form_of(f, key, nkey)))
		return NULL;
	c->form_hits++;
	return p->data;
}

int
foldcache_form_keep(struct foldcache *c, const void *data, size_t nbytes,
    const int64_t *key, int nkey, void *form, struct err *e)
{
	struct fentry *f = entry_of(c, data, nbytes);
	struct fform *p;

	if (nkey < 0 || nkey > FOLDCACHE_KEY_MAX)
		return err_set(e, "a form key of %d numbers is too long",
		    nkey);
	if (!f || form_of(f, key, nkey))
		return 0;
	if (!(p = calloc(1, sizeof *p)))
		return err_nomem(e);
	memcpy(p->key, key, (size_t)nkey * sizeof *key);
	p->nkey = nkey;
	p->data = form;
	p->next = f->forms;
	f->forms = p;
	return 1;
}
