/*
 * streammatch: see streammatch.h.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "streammatch.h"
#include "strmap.h"
#include "tensor.h"
#include "util.h"

enum kind { K_WEIGHT, K_BIAS, K_STAT };

static const char *const kind_names[] = { "weight", "bias", "stat" };

struct entry {
	char *name;
	enum kind kind;
	int dtype;		/* DT_UNDEFINED: not given */
	int rank;		/* -1: not given or varied ("*") */
	int64_t dims[TENSOR_MAX_RANK];
	long line;
};

struct streammatch {
	char *file;		/* of the first record, for messages */
	struct entry *v;
	size_t n, cap;
	struct strmap *seen;
};

struct streammatch *
streammatch_new(void)
{
	struct streammatch *sm = calloc(1, sizeof *sm);

	if (sm != NULL && (sm->seen = strmap_new()) == NULL) {
		free(sm);
		return NULL;
	}
	return sm;
}

void
streammatch_free(struct streammatch *sm)
{
	if (sm == NULL)
		return;
	for (size_t i = 0; i < sm->n; i++)
		free(sm->v[i].name);
	free(sm->v);
	free(sm->file);
	strmap_free(sm->seen);
	free(sm);
}

int
streammatch_add(struct streammatch *sm, const struct stream_rec *rec,
    struct err *e)
{
	struct entry *t;
	const char *dt;
	struct err ignore;
	enum kind k;

	if (strcmp(rec->type, "weight") == 0)
		k = K_WEIGHT;
	else if (strcmp(rec->type, "bias") == 0)
		k = K_BIAS;
	else if (strcmp(rec->type, "stat") == 0)
		k = K_STAT;
	else
		return 0;
	if (strmap_get(sm->seen, rec->subject, NULL))
		return 0;
	if (sm->file == NULL && rec->file != NULL &&
	    (sm->file = strdup(rec->file)) == NULL)
		return err_nomem(e);
	if (array_grow(&sm->v, &sm->cap, sm->n, sizeof *sm->v) != 0)
		return err_nomem(e);
	t = &sm->v[sm->n];
	t->kind = k;
	t->line = rec->line;
	t->dtype = (dt = stream_rec_get(rec, "dtype")) != NULL ?
	    dtype_from_name(dt) : DT_UNDEFINED;
	if (!stream_rec_has(rec, "shape") ||
	    stream_rec_shape(rec, "shape", &t->rank, t->dims, &ignore) != 0)
		t->rank = -1;
	if ((t->name = strdup(rec->subject)) == NULL ||
	    strmap_put(sm->seen, t->name, (int)sm->n) != 0) {
		free(t->name);
		return err_nomem(e);
	}
	sm->n++;
	return 0;
}

/* "FILE:LINE: KIND NAME: " then the message. */
static int
entry_err(const struct streammatch *sm, const struct entry *t,
    struct err *e, const char *what, const char *ours, const char *theirs,
    const char *path)
{
	char *name = str_printable(t->name);
	int rc;

	rc = err_set(e, "%s:%ld: %s %s: %s %s in the stream, %s in %s (a "
	    "stream made from another model?)", sm->file ? sm->file :
	    "<stream>", t->line, kind_names[t->kind], name ? name : "?", what,
	    ours, theirs, path);
	free(name);
	return rc;
}

static const char *
type_name(int dtype)
{
	const char *s = dtype_name(dtype);

	return s != NULL ? s : "?";
}

/* The shapes differ: from dimension `from` on, where both are known. */
static int
shapes_differ(int rank, const int64_t *dims, int mrank, const int64_t *mdims,
    int from)
{
	if (rank != mrank)
		return 1;
	for (int j = from; j < rank; j++)
		if (dims[j] >= 0 && mdims[j] >= 0 && dims[j] != mdims[j])
			return 1;
	return 0;
}

static int
check_const(const struct streammatch *sm, const struct entry *t,
    const struct graph_value *v, const char *path, struct err *e)
{
	const Onnx__TensorProto *init = v->init;
	int64_t dims[TENSOR_MAX_RANK];
	char have[256], want[256];

	if (init == NULL)
		return entry_err(sm, t, e, "a", "constant", "computed", path);
	if (t->dtype != DT_UNDEFINED && t->dtype != init->data_type)
		return entry_err(sm, t, e, "type", type_name(t->dtype),
		    type_name(init->data_type), path);
	if (t->rank < 0 || init->n_dims > TENSOR_MAX_RANK)
		return 0;
	for (size_t j = 0; j < init->n_dims; j++)
		dims[j] = init->dims[j];
	if (!shapes_differ(t->rank, t->dims, (int)init->n_dims, dims, 0))
		return 0;
	shape_str(t->rank, t->dims, have, sizeof have);
	shape_str((int)init->n_dims, dims, want, sizeof want);
	return entry_err(sm, t, e, "shape", have, want, path);
}

static int
check_stat(const struct streammatch *sm, const struct entry *t,
    const struct graph_value *v, const char *path, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK];
	char have[256], want[256];
	int rank, dt = model_value_type(v->info, &rank, dims);

	if (t->dtype != DT_UNDEFINED && dt != DT_UNDEFINED && t->dtype != dt)
		return entry_err(sm, t, e, "type", type_name(t->dtype),
		    type_name(dt), path);
	if (v->kind != VALUE_INPUT || t->rank < 0 || rank < 0 ||
	    !shapes_differ(t->rank, t->dims, rank, dims, 1))
		return 0;
	shape_str_declared(t->rank, t->dims, have, sizeof have);
	shape_str_declared(rank, dims, want, sizeof want);
	return entry_err(sm, t, e, "shape", have, want, path);
}

int
streammatch_check(const struct streammatch *sm, const struct graph *gr,
    const char *path, struct err *e)
{
	for (size_t i = 0; i < sm->n; i++) {
		const struct entry *t = &sm->v[i];
		const struct graph_value *v = graph_value(gr, t->name);
		int rc;

		if (v == NULL)
			continue;
		rc = t->kind == K_STAT ? check_stat(sm, t, v, path, e) :
		    check_const(sm, t, v, path, e);
		if (rc != 0)
			return -1;
	}
	return 0;
}
