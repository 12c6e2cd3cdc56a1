/*
 * streamfit: see streamfit.h.
 */
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "streamfit.h"
#include "strmap.h"
#include "tensor.h"
#include "util.h"
#include "weights.h"

enum kind { K_WEIGHT, K_BIAS, K_STAT };

static const char *const kind_names[] = { "weight", "bias", "stat" };

/* What a weight, bias or stat record says of its tensor. */
struct entry {
	const char *name;	/* owned when kept by streamfit_add */
	enum kind kind;
	int dtype;		/* DT_UNDEFINED: not given */
	int rank;		/* -1: not given or varied ("*") */
	int64_t dims[TENSOR_MAX_RANK];
	long line;
};

struct streamfit {
	char *file;		/* of the first record, for messages */
	struct entry *v;
	size_t n, cap;
	struct strmap *seen;
};

/* 1 and t filled (name borrowed from rec) for the record kinds
 * compared; 0 for the others. */
static int
entry_from_rec(struct entry *t, const struct stream_rec *rec)
{
	const char *dt;
	struct err ignore;

	if (strcmp(rec->type, "weight") == 0)
		t->kind = K_WEIGHT;
	else if (strcmp(rec->type, "bias") == 0)
		t->kind = K_BIAS;
	else if (strcmp(rec->type, "stat") == 0)
		t->kind = K_STAT;
	else
		return 0;
	t->name = rec->subject;
	t->line = rec->line;
	t->dtype = (dt = stream_rec_get(rec, "dtype")) != NULL ?
	    dtype_from_name(dt) : DT_UNDEFINED;
	if (!stream_rec_has(rec, "shape") ||
	    stream_rec_shape(rec, "shape", &t->rank, t->dims, &ignore) != 0)
		t->rank = -1;
	return 1;
}

struct streamfit *
streamfit_new(void)
{
	struct streamfit *sf = calloc(1, sizeof *sf);

	if (sf != NULL && (sf->seen = strmap_new()) == NULL) {
		free(sf);
		return NULL;
	}
	return sf;
}

void
streamfit_free(struct streamfit *sf)
{
	if (sf == NULL)
		return;
	for (size_t i = 0; i < sf->n; i++)
		free((char *)sf->v[i].name);
	free(sf->v);
	free(sf->file);
	strmap_free(sf->seen);
	free(sf);
}

int
streamfit_add(struct streamfit *sf, const struct stream_rec *rec,
    struct err *e)
{
	struct entry t;
	char *name;

	if (!entry_from_rec(&t, rec) || strmap_get(sf->seen, rec->subject,
	    NULL))
		return 0;
	if (sf->file == NULL && rec->file != NULL &&
	    (sf->file = strdup(rec->file)) == NULL)
		return err_nomem(e);
	if (array_grow(&sf->v, &sf->cap, sf->n, sizeof *sf->v) != 0)
		return err_nomem(e);
	if ((name = strdup(rec->subject)) == NULL ||
	    strmap_put(sf->seen, name, (int)sf->n) != 0) {
		free(name);
		return err_nomem(e);
	}
	t.name = name;
	sf->v[sf->n++] = t;
	return 0;
}

/* "FILE:LINE: KIND NAME: " then the message. */
static int
entry_err(const char *file, const struct entry *t, struct err *e,
    const char *what, const char *ours, const char *theirs,
    const char *path)
{
	char *name = str_printable(t->name);
	int rc;

	rc = err_set(e, "%s:%ld: %s %s: %s %s in the stream, %s in %s (a "
	    "stream made from another model?)", file ? file : "<stream>",
	    t->line, kind_names[t->kind], name ? name : "?", what, ours,
	    theirs, path);
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
check_const(const char *file, const struct entry *t,
    const struct graph_value *v, const char *path, struct err *e)
{
	const Onnx__TensorProto *init = v->init;
	int64_t dims[TENSOR_MAX_RANK];
	char have[256], want[256];

	if (init == NULL)
		return entry_err(file, t, e, "a", "constant", "computed", path);
	if (t->dtype != DT_UNDEFINED && t->dtype != init->data_type)
		return entry_err(file, t, e, "type", type_name(t->dtype),
		    type_name(init->data_type), path);
	if (t->rank < 0 || init->n_dims > TENSOR_MAX_RANK)
		return 0;
	for (size_t j = 0; j < init->n_dims; j++)
		dims[j] = init->dims[j];
	if (!shapes_differ(t->rank, t->dims, (int)init->n_dims, dims, 0))
		return 0;
	shape_str(t->rank, t->dims, have, sizeof have);
	shape_str((int)init->n_dims, dims, want, sizeof want);
	return entry_err(file, t, e, "shape", have, want, path);
}

static int
check_stat(const char *file, const struct entry *t,
    const struct graph_value *v, const char *path, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK];
	char have[256], want[256];
	int rank, dt = model_value_type(v->info, &rank, dims);

	if (t->dtype != DT_UNDEFINED && dt != DT_UNDEFINED && t->dtype != dt)
		return entry_err(file, t, e, "type", type_name(t->dtype),
		    type_name(dt), path);
	if (v->kind != VALUE_INPUT || t->rank < 0 || rank < 0 ||
	    !shapes_differ(t->rank, t->dims, rank, dims, 1))
		return 0;
	shape_str_declared(t->rank, t->dims, have, sizeof have);
	shape_str_declared(rank, dims, want, sizeof want);
	return entry_err(file, t, e, "shape", have, want, path);
}

static int
check_entry(const char *file, const struct entry *t,
    const struct graph_value *v, const char *path, struct err *e)
{
	return t->kind == K_STAT ? check_stat(file, t, v, path, e) :
	    check_const(file, t, v, path, e);
}

int
streamfit_check(const struct streamfit *sf, const struct graph *gr,
    const char *path, struct err *e)
{
	for (size_t i = 0; i < sf->n; i++) {
		const struct entry *t = &sf->v[i];
		const struct graph_value *v = graph_value(gr, t->name);

		if (v != NULL && check_entry(sf->file, t, v, path, e) != 0)
			return -1;
	}
	return 0;
}

/* The whole-stream check's state: the model and its nodes by the names
 * onnx-calib gives them. */
struct fit {
	const struct model *m;
	const Onnx__GraphProto *g;
	struct graph *gr;
	char **names;		/* the stream's node names, by node */
	struct strmap *by_name;
};

/* "a,b" lists of one slot kind, element by element. */
static int
same_names(char *const *a, size_t na, char *const *b, size_t nb,
    const char *what, const struct node_rec *n, const struct stream_rec *rec,
    const char *path, struct err *e)
{
	for (size_t i = 0; i < na || i < nb; i++) {
		const char *x = i < na ? a[i] : "(none)";
		const char *y = i < nb ? b[i] : "(none)";

		if (strcmp(x, y) != 0)
			return stream_rec_err(rec, e, "node %s: %s %zu is %s "
			    "in the stream, %s in %s", n->name, what, i,
			    *x ? x : "(absent)", *y ? y : "(absent)", path);
	}
	return 0;
}

static int
fit_node(struct fit *f, const struct stream_rec *rec, struct err *e)
{
	struct node_rec n;
	const Onnx__NodeProto *mn;
	int i, rc = -1;

	if (node_rec_read(&n, rec, e) < 0)
		return -1;
	if (!strmap_get(f->by_name, n.name, &i)) {
		stream_rec_err(rec, e, "node %s: not in %s", n.name,
		    f->m->path);
		goto out;
	}
	mn = f->g->node[i];
	if (strcmp(n.op, mn->op_type ? mn->op_type : "") != 0) {
		stream_rec_err(rec, e, "node %s: op %s in the stream, %s in "
		    "%s", n.name, n.op, mn->op_type ? mn->op_type : "",
		    f->m->path);
		goto out;
	}
	if (same_names(n.in, n.nin, mn->input, mn->n_input, "input", &n, rec,
	    f->m->path, e) < 0 || same_names(n.out, n.nout, mn->output,
	    mn->n_output, "output", &n, rec, f->m->path, e) < 0)
		goto out;
	rc = 0;
out:
	node_rec_release(&n);
	return rc;
}

/* A weight, bias or stat record; a weight or bias the model lacks is
 * refused here (stats of tensors the model lacks are its reader's). */
static int
fit_tensor(struct fit *f, const struct stream_rec *rec, struct err *e)
{
	const struct graph_value *v;
	struct entry t;

	if (!entry_from_rec(&t, rec))
		return 0;
	if ((v = graph_value(f->gr, t.name)) == NULL) {
		if (t.kind == K_STAT)
			return 0;
		return stream_rec_err(rec, e, "%s %s: not in %s",
		    kind_names[t.kind], t.name, f->m->path);
	}
	return check_entry(rec->file, &t, v, f->m->path, e);
}

int
streamfit_check_all(const struct model *m, struct stream_rec *const *recs,
    size_t nrecs, struct err *e)
{
	struct fit f = { m, m->proto->graph, NULL, NULL, NULL };
	int rc = -1;

	if (f.g == NULL)
		return err_set(e, "%s: no graph", m->path);
	if ((f.gr = graph_new(m->proto->graph, e)) == NULL ||
	    (f.names = weights_node_names(f.g, e)) == NULL)
		goto out;
	if ((f.by_name = strmap_new()) == NULL) {
		err_nomem(e);
		goto out;
	}
	for (size_t i = 0; i < f.g->n_node; i++)
		if (strmap_put(f.by_name, f.names[i], (int)i) < 0) {
			err_nomem(e);
			goto out;
		}
	for (size_t i = 0; i < nrecs; i++) {
		int bad = strcmp(recs[i]->type, "node") == 0 ?
		    fit_node(&f, recs[i], e) : fit_tensor(&f, recs[i], e);

		if (bad < 0)
			goto out;
	}
	rc = 0;
out:
	strmap_free(f.by_name);
	free(f.names);
	graph_free(f.gr);
	return rc;
}
