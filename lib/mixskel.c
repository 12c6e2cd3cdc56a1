/* mixskel: see mixskel.h. */
#include <stdlib.h>
#include <string.h>

#include "mixskel.h"
#include "util.h"

struct skel {
	struct qdq_front *front;	/* NULL: a free slot */
	int src;
	void *bytes;		/* the front's model packed */
	size_t n;
	size_t *at;		/* initializers packed without bytes */
	ProtobufCBinaryData *data;	/* and those bytes, borrowed */
	size_t nat;
	long used;		/* when last made a model of */
};

struct mixskels {
	struct mixskel_lender l;
	struct skel v[MIXSKEL_MAX];
	long clock, hits;
};

static void
skel_clear(struct skel *k)
{
	qdq_front_free(k->front);
	free(k->bytes);
	free(k->at);
	free(k->data);
	memset(k, 0, sizeof *k);
}

struct mixskels *
mixskels_new(const struct mixskel_lender *l)
{
	struct mixskels *s = calloc(1, sizeof *s);

	if (s)
		s->l = *l;
	return s;
}

void
mixskels_free(struct mixskels *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < MIXSKEL_MAX; i++)
		skel_clear(&s->v[i]);
	free(s);
}

long
mixskels_hits(const struct mixskels *s)
{
	return s->hits;
}

/* Skeleton k unpacked, its initializers lent their bytes again; NULL, e. */
static struct model *
unpack(struct mixskels *s, const struct skel *k, const char *name,
    const char *dir, struct err *e)
{
	struct model *m = model_unpack_own(k->bytes, k->n, name, dir, e);
	Onnx__GraphProto *g;

	if (m == NULL)
		return NULL;
	g = m->proto->graph;
	for (size_t i = 0; i < k->nat; i++) {
		Onnx__TensorProto *t;

		if (g == NULL || k->at[i] >= g->n_initializer) {
			s->l.free_model(s->l.ctx, m);
			err_set(e, "%s: not the skeleton's model", name);
			return NULL;
		}
		t = g->initializer[k->at[i]];
		free(t->raw_data.data);	/* none: it was packed empty */
		t->raw_data = k->data[i];
		if (s->l.lend(s->l.ctx, t) < 0) {
			t->raw_data.data = NULL;
			t->raw_data.len = 0;
			s->l.free_model(s->l.ctx, m);
			err_nomem(e);
			return NULL;
		}
	}
	return m;
}

int
mixskels_make(struct mixskels *s, int src, const struct qdq_plan *plan,
    const struct qdq_opts *o, const char *name, const char *dir,
    struct model **m, struct qdq_report *rep, struct err *e)
{
	*m = NULL;
	for (size_t i = 0; i < MIXSKEL_MAX; i++) {
		struct skel *k = &s->v[i];
		int rc;

		if (k->front == NULL || k->src != src ||
		    !qdq_front_fits(k->front, plan))
			continue;
		if ((*m = unpack(s, k, name, dir, e)) == NULL)
			return -1;
		rc = qdq_front_apply(*m, plan, o, k->front, rep, e);
		if (rc == 0) {
			k->used = ++s->clock;
			s->hits++;
			return 1;
		}
		s->l.free_model(s->l.ctx, *m);
		*m = NULL;
		if (rc < 0)
			return -1;
		/* (another opset: another skeleton may fit) */
	}
	return 0;
}

int
mixskels_keep(struct mixskels *s, int src, struct qdq_front *f,
    const struct model *m, struct err *e)
{
	Onnx__GraphProto *g = m->proto->graph;
	struct skel *k = &s->v[0];
	int rc = -1;

	for (size_t i = 1; i < MIXSKEL_MAX && k->front; i++)
		if (s->v[i].front == NULL || s->v[i].used < k->used)
			k = &s->v[i];
	skel_clear(k);
	k->at = malloc((g->n_initializer + 1) * sizeof *k->at);
	k->data = malloc((g->n_initializer + 1) * sizeof *k->data);
	if (k->at == NULL || k->data == NULL) {
		err_nomem(e);
		goto out;
	}
	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];

		if (!s->l.is_lent(s->l.ctx, t))
			continue;
		k->at[k->nat] = i;
		k->data[k->nat++] = t->raw_data;
		t->raw_data.len = 0;	/* packed empty; put back below */
	}
	rc = model_pack(m, &k->bytes, &k->n, e);
	for (size_t i = 0; i < k->nat; i++)
		g->initializer[k->at[i]]->raw_data.len = k->data[i].len;
out:
	if (rc < 0) {
		skel_clear(k);
		qdq_front_free(f);
		return -1;
	}
	k->front = f;
	k->src = src;
	k->used = ++s->clock;
	return 0;
}
