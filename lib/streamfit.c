/*
 * streamfit: see streamfit.h.
 */
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "records.h"
#include "streamfit.h"
#include "strmap.h"
#include "tensor.h"
#include "weights.h"

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

static int
fit_tensor(struct fit *f, const struct stream_rec *rec, struct err *e)
{
	struct wb_rec w;
	const struct graph_value *v;
	const Onnx__TensorProto *t;
	char a[128], b[128];
	int rc = -1, same;

	if (wb_rec_read(&w, rec, e) < 0)
		return -1;
	if ((v = graph_value(f->gr, w.name)) == NULL || !v->init) {
		stream_rec_err(rec, e, "tensor %s: %s in %s", w.name,
		    v ? "not a constant" : "not", f->m->path);
		goto out;
	}
	t = v->init;
	same = w.rank >= 0 && (size_t)w.rank == t->n_dims;
	for (size_t k = 0; same && k < t->n_dims; k++)
		same = w.dims[k] == t->dims[k];
	if (!same) {
		int rank = t->n_dims < TENSOR_MAX_RANK ? (int)t->n_dims :
		    TENSOR_MAX_RANK;

		stream_rec_err(rec, e, "tensor %s: shape %s in the stream, %s "
		    "in %s", w.name, shape_str(w.rank, w.dims, a, sizeof a),
		    shape_str(rank, t->dims, b, sizeof b), f->m->path);
		goto out;
	}
	rc = 0;
out:
	wb_rec_release(&w);
	return rc;
}

int
streamfit_check(const struct model *m, struct stream_rec *const *recs,
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
		const char *type = recs[i]->type;
		int wb = strcmp(type, "weight") == 0 ||
		    strcmp(type, "bias") == 0;

		if (strcmp(type, "node") == 0 && fit_node(&f, recs[i], e) < 0)
			goto out;
		if (wb && fit_tensor(&f, recs[i], e) < 0)
			goto out;
	}
	rc = 0;
out:
	strmap_free(f.by_name);
	free(f.names);
	graph_free(f.gr);
	return rc;
}
