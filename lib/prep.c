/*
 * prep: see prep.h. Works on the main graph only; subgraphs keep their
 * Constant nodes (the interpreter runs those).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "graph.h"
#include "prep.h"
#include "strmap.h"
#include "util.h"

static int
is_op(const Onnx__NodeProto *n, const char *op)
{
	const char *d = str_or_empty(n->domain);

	return strcmp(str_or_empty(n->op_type), op) == 0 &&
	    (*d == '\0' || strcmp(d, "ai.onnx") == 0);
}

/* Remove the nodes marked in drop, freeing them and keeping the order. */
static void
drop_nodes(Onnx__GraphProto *g, const char *drop)
{
	size_t i, k = 0;

	for (i = 0; i < g->n_node; i++) {
		if (drop[i])
			protobuf_c_message_free_unpacked(&g->node[i]->base, NULL);
		else
			g->node[k++] = g->node[i];
	}
	g->n_node = k;
}

static Onnx__TensorProto *
new_tensor_proto(const char *name, const struct tensor *t, struct err *e)
{
	Onnx__TensorProto *tp;

	if ((tp = malloc(sizeof *tp)) == NULL) {
		err_nomem(e);
		return NULL;
	}
	onnx__tensor_proto__init(tp);
	if ((tp->name = strdup(name)) == NULL) {
		err_nomem(e);
		goto fail;
	}
	if (model_tensor_write(tp, t, e) != 0)
		goto fail;
	return tp;
fail:
	protobuf_c_message_free_unpacked(&tp->base, NULL);
	return NULL;
}

/* ---- Constant nodes ---- */

/*
 * The tensor a Constant node holds, as a TensorProto the caller owns (a
 * `value` tensor is taken out of the node): 1 and *out, 0 when the node
 * stays (sparse or string values), -1 on error.
 */
static int
constant_tensor(Onnx__NodeProto *n, Onnx__TensorProto **out, struct err *e)
{
	Onnx__AttributeProto *a;
	struct tensor t = { 0 };
	const void *v;
	int64_t dim;
	size_t i, n1;
	int dt, rank;

	for (i = 0; i < n->n_attribute; i++) {
		a = n->attribute[i];
		const char *name = str_or_empty(a->name);

		if (strcmp(name, "value") == 0 && a->t != NULL) {
			if (a->t->has_data_type &&
			    a->t->data_type == DT_STRING)
				return 0;
			*out = a->t;
			a->t = NULL;
			return 1;
		}
		/* a scalar (rank 0) or a list (rank 1) of n values at v */
		if (strcmp(name, "value_float") == 0)
			dt = DT_FLOAT, rank = 0, n1 = 1, v = &a->f;
		else if (strcmp(name, "value_int") == 0)
			dt = DT_INT64, rank = 0, n1 = 1, v = &a->i;
		else if (strcmp(name, "value_floats") == 0)
			dt = DT_FLOAT, rank = 1, n1 = a->n_floats, v = a->floats;
		else if (strcmp(name, "value_ints") == 0)
			dt = DT_INT64, rank = 1, n1 = a->n_ints, v = a->ints;
		else
			continue;
		dim = (int64_t)n1;
		if (tensor_alloc(&t, dt, rank, &dim, e) != 0)
			return -1;
		if (n1 > 0)
			memcpy(t.data, v, n1 * dtype_size(dt));
		*out = new_tensor_proto(n->output[0], &t, e);
		tensor_release(&t);
		return *out != NULL ? 1 : -1;
	}
	return 0;
}

static int
constants_to_initializers(Onnx__GraphProto *g, int *count, struct err *e)
{
	Onnx__TensorProto *tp, **inits;
	Onnx__NodeProto *n;
	struct strmap *outputs;
	char *drop, *name;
	size_t i;
	int r, rc = -1;

	*count = 0;
	if ((outputs = strmap_new()) == NULL ||
	    (drop = calloc(g->n_node + 1, 1)) == NULL) {
		strmap_free(outputs);
		return err_nomem(e);
	}
	for (i = 0; i < g->n_output; i++)
		if (strmap_put(outputs, str_or_empty(g->output[i]->name), 0)) {
			err_nomem(e);
			goto done;
		}
	for (i = 0; i < g->n_node; i++) {
		n = g->node[i];
		/* an initializer cannot stand for a graph output everywhere */
		if (!is_op(n, "Constant") || n->n_output != 1 ||
		    *str_or_empty(n->output[0]) == '\0' ||
		    strmap_get(outputs, n->output[0], NULL))
			continue;
		if ((r = constant_tensor(n, &tp, e)) < 0)
			goto done;
		if (r == 0)
			continue;
		if ((name = strdup(n->output[0])) == NULL) {
			protobuf_c_message_free_unpacked(&tp->base, NULL);
			err_nomem(e);
			goto done;
		}
		free(tp->name);
		tp->name = name;
		inits = realloc(g->initializer,
		    (g->n_initializer + 1) * sizeof *inits);
		if (inits == NULL) {
			protobuf_c_message_free_unpacked(&tp->base, NULL);
			err_nomem(e);
			goto done;
		}
		g->initializer = inits;
		g->initializer[g->n_initializer++] = tp;
		drop[i] = 1;
		(*count)++;
	}
	rc = 0;
done:
	drop_nodes(g, drop);
	free(drop);
	strmap_free(outputs);
	return rc;
}

/* ---- BatchNormalization folding ---- */

/*
 * From IR version 4 on, an initializer also listed as a graph input is a
 * default the caller may override: not a constant. Before, every
 * initializer had to be listed.
 */
static int
overridable_ir(const struct model *m)
{
	return !m->proto->has_ir_version || m->proto->ir_version >= 4;
}

/* Names of the graph inputs; NULL on failure. */
static struct strmap *
input_names(const Onnx__GraphProto *g)
{
	struct strmap *s;
	size_t i;

	if ((s = strmap_new()) == NULL)
		return NULL;
	for (i = 0; i < g->n_input; i++)
		if (strmap_put(s, str_or_empty(g->input[i]->name), 0) != 0) {
			strmap_free(s);
			return NULL;
		}
	return s;
}

/* The constant float initializer behind name, or NULL. */
static const Onnx__TensorProto *
float_init(struct graph *gr, const char *name, const struct strmap *inputs)
{
	struct graph_value *v = graph_value(gr, name);

	if (v == NULL || v->kind != VALUE_INITIALIZER || v->init == NULL ||
	    !v->init->has_data_type || v->init->data_type != DT_FLOAT ||
	    (inputs != NULL && strmap_get(inputs, name, NULL)))
		return NULL;
	return v->init;
}

struct fold {
	struct tensor w, b, scale, shift, mean, var;
	double *s;
};

static void
fold_release(struct fold *f)
{
	tensor_release(&f->w);
	tensor_release(&f->b);
	tensor_release(&f->scale);
	tensor_release(&f->shift);
	tensor_release(&f->mean);
	tensor_release(&f->var);
	free(f->s);
}

/* Scale W's elements by s of their output channel (shape checked already). */
static void
scale_weight(const Onnx__NodeProto *p, struct tensor *w, const double *s,
    int64_t m)
{
	float *d = w->data;
	int64_t i, c, j, k, per, cin, g, mg;

	if (is_op(p, "Conv")) {
		per = w->nelem / m;
		for (i = 0; i < w->nelem; i++)
			d[i] = (float)(d[i] * s[i / per]);
		return;
	}
	if (is_op(p, "ConvTranspose")) {
		/* W is [Cin, M/group, k...]; output channel g*(M/group)+j */
		cin = w->dims[0];
		mg = w->dims[1];
		g = m / mg;
		per = w->nelem / (cin * mg);
		for (c = 0; c < cin; c++)
			for (j = 0; j < mg; j++)
				for (k = 0; k < per; k++) {
					i = (c * mg + j) * per + k;
					d[i] = (float)(d[i] *
					    s[(c / (cin / g)) * mg + j]);
				}
		return;
	}
	/* Gemm: B is [K, N], or [N, K] with transB */
	if (attr_int(p, "transB", 0))
		for (i = 0; i < w->nelem; i++)
			d[i] = (float)(d[i] * s[i / w->dims[1]]);
	else
		for (i = 0; i < w->nelem; i++)
			d[i] = (float)(d[i] * s[i % w->dims[1]]);
}

/* Output channels of the producer from its weight's shape; -1 if unusable. */
static int64_t
out_channels(const Onnx__NodeProto *p, const struct tensor *w)
{
	int64_t g;

	if (is_op(p, "Conv"))
		return w->rank >= 3 ? w->dims[0] : -1;
	if (is_op(p, "ConvTranspose")) {
		g = attr_int(p, "group", 1);
		if (w->rank < 3 || g <= 0 || w->dims[1] <= 0 ||
		    w->dims[0] % g != 0)
			return -1;
		return g * w->dims[1];
	}
	if (w->rank != 2)
		return -1;
	return attr_int(p, "transB", 0) ? w->dims[0] : w->dims[1];
}

/* Gemm's C must broadcast to one value per output channel. */
static int
gemm_bias_ok(const struct tensor *c, int64_t n)
{
	if (c->nelem == 1)
		return 1;
	if (c->nelem != n)
		return 0;
	return c->rank == 1 || (c->rank == 2 && c->dims[0] == 1);
}

static char *
name_with(const char *base, const char *suffix)
{
	char *s = malloc(strlen(base) + strlen(suffix) + 1);

	if (s != NULL)
		sprintf(s, "%s%s", base, suffix);
	return s;
}

/* Add t as a new initializer named after base; the new name is returned. */
static char *
add_folded(struct graph *gr, const char *base, const struct tensor *t,
    struct err *e)
{
	Onnx__TensorProto *tp;
	char *want, *name;

	if ((want = name_with(base, "_bnfold")) == NULL ||
	    (name = graph_unique_name(gr, want)) == NULL) {
		free(want);
		err_nomem(e);
		return NULL;
	}
	free(want);
	if ((tp = new_tensor_proto(name, t, e)) == NULL ||
	    graph_add_initializer(gr, tp, e) != 0) {
		free(name);
		return NULL;
	}
	return name;
}

/*
 * Fold BN node bi into its producer when everything allows; *done says
 * whether it was. The producer's replaced output name goes to *old_name
 * (freed by the caller once the index no longer points at it).
 */
static int
fold_bn(struct model *m, struct graph *gr, const struct strmap *inputs,
    int bi, int *done, char **old_name, struct err *e)
{
	Onnx__GraphProto *g = graph_proto(gr);
	Onnx__NodeProto *bn = g->node[bi], *p;
	const Onnx__TensorProto *tw, *tb = NULL, *tparam[4];
	struct graph_value *x;
	struct fold f;
	struct tensor *param[4];
	char *wname = NULL, *bname = NULL, *out = NULL, **ins;
	double eps, beta = 1, v;
	int64_t mch, c;
	float *bias;
	size_t i;
	int rc = -1;

	*done = 0;
	memset(&f, 0, sizeof f);
	if (bn->n_input != 5 || bn->n_output < 1 ||
	    attr_int(bn, "training_mode", 0) != 0 ||
	    attr_int(bn, "spatial", 1) != 1)
		return 0;
	for (i = 0; i < 5; i++)
		if (*str_or_empty(bn->input[i]) == '\0' ||
		    (i > 0 && strcmp(bn->input[i], bn->input[0]) == 0))
			return 0;
	for (i = 1; i < bn->n_output; i++)
		if (*str_or_empty(bn->output[i]) != '\0')
			return 0;	/* running statistics are used */
	x = graph_value(gr, bn->input[0]);
	if (x == NULL || x->kind != VALUE_NODE || x->nconsumers != 1 ||
	    x->is_output)
		return 0;
	p = g->node[x->producer];
	if (!is_op(p, "Conv") && !is_op(p, "ConvTranspose") &&
	    !is_op(p, "Gemm"))
		return 0;
	if (p->n_output != 1 || p->n_input < 2 || p->n_input > 3)
		return 0;
	if (is_op(p, "Gemm") && (beta = attr_float(p, "beta", 1)) == 0)
		return 0;
	if ((tw = float_init(gr, p->input[1], inputs)) == NULL)
		return 0;
	if (p->n_input == 3 && *str_or_empty(p->input[2]) != '\0' &&
	    (tb = float_init(gr, p->input[2], inputs)) == NULL)
		return 0;
	for (i = 0; i < 4; i++)
		if ((tparam[i] = float_init(gr, bn->input[i + 1], inputs)) ==
		    NULL)
			return 0;

	param[0] = &f.scale;
	param[1] = &f.shift;
	param[2] = &f.mean;
	param[3] = &f.var;
	if (model_tensor_read(m, tw, &f.w, e) != 0 ||
	    (tb != NULL && model_tensor_read(m, tb, &f.b, e) != 0))
		goto done;
	for (i = 0; i < 4; i++)
		if (model_tensor_read(m, tparam[i], param[i], e) != 0)
			goto done;
	if ((mch = out_channels(p, &f.w)) <= 0 || f.w.nelem % mch != 0)
		goto skip;
	for (i = 0; i < 4; i++)
		if (param[i]->nelem != mch)
			goto skip;
	if (tb != NULL && (is_op(p, "Gemm") ? !gemm_bias_ok(&f.b, mch) :
	    f.b.nelem != mch))
		goto skip;
	eps = attr_float(bn, "epsilon", 1e-5f);
	if ((f.s = malloc((size_t)mch * sizeof *f.s)) == NULL) {
		err_nomem(e);
		goto done;
	}
	for (c = 0; c < mch; c++) {
		v = (double)((float *)f.var.data)[c] + eps;
		if (!(v > 0) || !isfinite(v))
			goto skip;
		f.s[c] = ((float *)f.scale.data)[c] / sqrt(v);
	}
	scale_weight(p, &f.w, f.s, mch);

	/* b' = (b - mean) * s + shift; Gemm: beta*C' must equal that */
	{
		struct tensor nb = { 0 };

		if (tensor_alloc(&nb, DT_FLOAT, 1, &mch, e) != 0)
			goto done;
		bias = nb.data;
		for (c = 0; c < mch; c++) {
			double b0 = tb == NULL ? 0 :
			    ((float *)f.b.data)[f.b.nelem == 1 ? 0 : c];
			double mean = ((float *)f.mean.data)[c];
			double shift = ((float *)f.shift.data)[c];

			if (is_op(p, "Gemm"))
				bias[c] = (float)(f.s[c] * b0 +
				    (shift - f.s[c] * mean) / beta);
			else
				bias[c] = (float)((b0 - mean) * f.s[c] + shift);
		}
		tensor_move(&f.b, &nb);
	}

	if ((wname = add_folded(gr, p->input[1], &f.w, e)) == NULL ||
	    (bname = add_folded(gr, tb != NULL ? p->input[2] : bn->output[0],
	    &f.b, e)) == NULL)
		goto done;
	if (graph_rewire_input(gr, x->producer, 1, wname, e) != 0)
		goto done;
	if (p->n_input == 3) {
		if (graph_rewire_input(gr, x->producer, 2, bname, e) != 0)
			goto done;
	} else {
		if ((ins = realloc(p->input, 3 * sizeof *ins)) == NULL) {
			err_nomem(e);
			goto done;
		}
		p->input = ins;
		p->input[2] = bname;
		p->n_input = 3;
		bname = NULL;
	}
	if ((out = strdup(bn->output[0])) == NULL) {
		err_nomem(e);
		goto done;
	}
	*old_name = p->output[0];
	p->output[0] = out;
	*done = 1;
skip:
	rc = 0;
done:
	free(wname);
	free(bname);
	fold_release(&f);
	return rc;
}

/* Drop value_info entries of names that no longer exist. */
static void
drop_value_info(Onnx__GraphProto *g, char **names, int n)
{
	size_t i, k = 0;
	int j, gone;

	for (i = 0; i < g->n_value_info; i++) {
		gone = 0;
		for (j = 0; j < n && !gone; j++)
			gone = strcmp(str_or_empty(g->value_info[i]->name),
			    names[j]) == 0;
		if (gone)
			protobuf_c_message_free_unpacked(
			    &g->value_info[i]->base, NULL);
		else
			g->value_info[k++] = g->value_info[i];
	}
	g->n_value_info = k;
}

static int
fold_batchnorms(struct model *m, struct graph *gr, int *count,
    struct err *e)
{
	Onnx__GraphProto *g = graph_proto(gr);
	struct strmap *inputs = NULL;
	char *drop, **old;
	size_t i, n = g->n_node;
	int done, nold = 0, rc = -1;

	*count = 0;
	drop = calloc(n + 1, 1);
	old = calloc(n + 1, sizeof *old);
	if (drop == NULL || old == NULL ||
	    (overridable_ir(m) && (inputs = input_names(g)) == NULL)) {
		free(drop);
		free(old);
		return err_nomem(e);
	}
	for (i = 0; i < n; i++) {
		if (!is_op(g->node[i], "BatchNormalization"))
			continue;
		if (fold_bn(m, gr, inputs, (int)i, &done, &old[nold], e) != 0)
			goto done;
		if (done) {
			drop[i] = 1;
			nold++;
			(*count)++;
		}
	}
	rc = 0;
done:
	drop_nodes(g, drop);
	drop_value_info(g, old, nold);
	for (i = 0; i < (size_t)nold; i++)
		free(old[i]);
	free(old);
	free(drop);
	strmap_free(inputs);
	return rc;
}

/*
 * Remove initializers nothing reads that are no graph outputs. One that is
 * also a graph input stays from IR version 4 on (a caller may feed it);
 * before, every initializer had to be an input, so both go.
 */
static int
drop_unused_initializers(struct model *m, struct graph *gr, struct err *e)
{
	Onnx__GraphProto *g = graph_proto(gr);
	struct graph_value *v;
	struct strmap *inputs, *gone;
	size_t i, k = 0;
	int rc = -1;

	inputs = input_names(g);
	gone = strmap_new();
	if (inputs == NULL || gone == NULL) {
		err_nomem(e);
		goto done;
	}
	for (i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *tp = g->initializer[i];

		v = graph_value(gr, str_or_empty(tp->name));
		if (v == NULL || v->nconsumers > 0 || v->is_output ||
		    (overridable_ir(m) && strmap_get(inputs, v->name, NULL))) {
			g->initializer[k++] = tp;
			continue;
		}
		if (strmap_put(gone, v->name, 0) != 0) {
			g->initializer[k++] = tp;	/* keeping it is harmless */
			continue;
		}
		protobuf_c_message_free_unpacked(&tp->base, NULL);
	}
	g->n_initializer = k;
	for (i = 0, k = 0; i < g->n_input; i++)
		if (strmap_get(gone, str_or_empty(g->input[i]->name), NULL))
			protobuf_c_message_free_unpacked(&g->input[i]->base,
			    NULL);
		else
			g->input[k++] = g->input[i];
	g->n_input = k;
	rc = 0;
done:
	strmap_free(inputs);
	strmap_free(gone);
	return rc;
}

/* A graph input declaring tp's type and shape. */
static Onnx__ValueInfoProto *
input_for(const Onnx__TensorProto *tp)
{
	return model_value_info_new(str_or_empty(tp->name), tp->data_type,
	    (int)tp->n_dims, tp->dims);
}

/* IR version 3 and before: every initializer must be a graph input too. */
static int
list_initializers_as_inputs(Onnx__GraphProto *g, struct err *e)
{
	Onnx__ValueInfoProto **inputs, *vi;
	struct strmap *have;
	size_t i;
	int rc = -1;

	if ((have = input_names(g)) == NULL)
		return err_nomem(e);
	for (i = 0; i < g->n_initializer; i++) {
		if (strmap_get(have, str_or_empty(g->initializer[i]->name),
		    NULL))
			continue;
		inputs = realloc(g->input, (g->n_input + 1) * sizeof *inputs);
		if (inputs == NULL) {
			err_nomem(e);
			goto done;
		}
		g->input = inputs;
		if ((vi = input_for(g->initializer[i])) == NULL) {
			err_nomem(e);
			goto done;
		}
		g->input[g->n_input++] = vi;
	}
	rc = 0;
done:
	strmap_free(have);
	return rc;
}

int
prep_model(struct model *m, struct prep_report *report, struct err *e)
{
	Onnx__GraphProto *g = m->proto->graph;
	struct graph *gr;
	int constants = 0, folded = 0, rc = -1;

	/* check the graph before changing anything */
	if ((gr = graph_new(g, e)) == NULL)
		return err_prefix(e, "%s", m->path);
	if (constants_to_initializers(g, &constants, e) != 0)
		goto done;
	/* an unchanged graph keeps its index (a big model's takes seconds) */
	if (constants && graph_reindex(gr, e) != 0) {
		err_prefix(e, "%s", m->path);
		goto done;
	}
	/* tensor errors name the model themselves */
	if (fold_batchnorms(m, gr, &folded, e) != 0)
		goto done;
	if (folded && graph_reindex(gr, e) != 0) {
		err_prefix(e, "%s", m->path);
		goto done;
	}
	if (drop_unused_initializers(m, gr, e) != 0)
		goto done;
	if (!overridable_ir(m) && list_initializers_as_inputs(g, e) != 0)
		goto done;
	rc = 0;
done:
	graph_free(gr);
	if (rc != 0)
		return -1;
	if (report != NULL) {
		report->constants = constants;
		report->folded_bn = folded;
	}
	return 0;
}

struct model *
prep_load(const char *path, char sha256[65], void **bytes, size_t *len,
    struct err *e)
{
	struct model *m;

	if (!(m = model_load_hashed(path, sha256, bytes, len, e)))
		return NULL;
	if (prep_model(m, NULL, e) < 0) {
		err_prefix(e, "%s", path);
		model_free(m);
		if (bytes) {
			free(*bytes);
			*bytes = NULL;
		}
		return NULL;
	}
	return m;
}
