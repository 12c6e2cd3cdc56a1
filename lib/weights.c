/* weights: see weights.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "opinfo.h"
#include "strmap.h"
#include "tensor.h"
#include "weights.h"

char **
weights_node_names(const Onnx__GraphProto *g, struct err *e)
{
	struct strmap *real = strmap_new(), *used = strmap_new();
	char **tmp = calloc(g->n_node ? g->n_node : 1, sizeof *tmp), **out = NULL;
	size_t total = 0;

	if (!real || !used || !tmp || strmap_reserve(real, g->n_node) < 0 ||
	    strmap_reserve(used, g->n_node) < 0)
		goto nomem;
	for (size_t i = 0; i < g->n_node; i++) {
		const char *nm = g->node[i]->name;

		if (nm && *nm && strmap_put(real, nm, 0) < 0)
			goto nomem;
	}
	for (size_t i = 0; i < g->n_node; i++) {
		const char *nm = g->node[i]->name ? g->node[i]->name : "";
		size_t len;
		char *s;

		if (*nm && !strmap_get(used, nm, NULL)) {
			if (!(s = strdup(nm)))
				goto nomem;
		} else {
			/* "NAME@INDEX", '@' added until no node has it */
			len = strlen(nm) + 32;
			if (!(s = malloc(len)))
				goto nomem;
			snprintf(s, len, "%s@%zu", nm, i);
			while (strmap_get(real, s, NULL) ||
			    strmap_get(used, s, NULL)) {
				char *t = realloc(s, strlen(s) + 2);

				if (!t) {
					free(s);
					goto nomem;
				}
				s = t;
				strcat(s, "@");
			}
		}
		tmp[i] = s;
		total += strlen(s) + 1;
		if (strmap_put(used, s, 0) < 0)
			goto nomem;
	}
	if (!(out = malloc(g->n_node * sizeof *out + total + 1)))
		goto nomem;
	{
		char *p = (char *)(out + g->n_node);

		for (size_t i = 0; i < g->n_node; i++) {
			size_t len = strlen(tmp[i]) + 1;

			memcpy(p, tmp[i], len);
			out[i] = p;
			p += len;
		}
	}
	goto done;
nomem:
	err_nomem(e);
	out = NULL;
done:
	if (tmp)
		for (size_t i = 0; i < g->n_node; i++)
			free(tmp[i]);
	free(tmp);
	strmap_free(real);
	strmap_free(used);
	return out;
}

/* Why and where a constant is used: the use its record describes. */
struct use {
	const struct graph_value *v;
	int wnode, wslot, wprio;	/* weight record: prio 2 weight slot, 1 other */
	int bnode, bslot;		/* bias record */
};

/* min/max over the finite and infinite values; NaNs are left out. */
static void
range(const float *x, size_t count, float *mn, float *mx)
{
	*mn = INFINITY;
	*mx = -INFINITY;
	for (size_t i = 0; i < count; i++) {
		float v = x[i];

		if (v < *mn)
			*mn = v;
		if (v > *mx)
			*mx = v;
	}
}

/* range() of each x[c] into cmin[c], cmax[c]: one row of channels. */
static void
channel_ranges(const float *x, int64_t ch, float *cmin, float *cmax)
{
	for (int64_t c = 0; c < ch; c++) {
		float v = x[c];

		if (v < cmin[c])
			cmin[c] = v;
		if (v > cmax[c])
			cmax[c] = v;
	}
}

static int
put_tensor(const struct model *m, const Onnx__NodeProto *n, int slot,
    const char *nodename, const struct graph_value *v, int bias,
    struct stream_writer *w, struct err *e)
{
	struct tensor t = { 0 };
	struct model_map map;
	float *x = NULL, *cmin = NULL, *cmax = NULL, mn, mx;
	int axis, rc = -1;
	const char *dt;

	/* the message names the model and the initializer; mapped, not
	 * copied: one pass over the bytes (model.h) */
	if (model_tensor_map(m, v->init, &t, &map, e) < 0)
		return -1;
	if (t.dtype == DT_FLOAT)
		x = t.data;
	else if (!(x = malloc((t.nelem ? t.nelem : 1) * sizeof *x))) {
		err_nomem(e);
		goto out;
	} else
		tensor_to_float(&t, x);
	axis = opinfo_axis(n, slot, t.rank);
	dt = dtype_name(t.dtype);
	stream_rec_start(w, bias ? "bias" : "weight", v->name);
	stream_put_name(w, "node", nodename);
	stream_put_name(w, "op", n->op_type ? n->op_type : "");
	if (bias) {
		int as, ws;

		opinfo_bias_pair(n, slot, &as, &ws);
		stream_put_name(w, "input", (size_t)as < n->n_input ?
		    n->input[as] : "");
		stream_put_name(w, "weight", (size_t)ws < n->n_input ?
		    n->input[ws] : "");
		/* Gemm adds beta * C: the int32 scale takes beta too */
		if (strcmp(n->op_type, "Gemm") == 0 &&
		    attr_float(n, "beta", 1) != 1)
			stream_put_double(w, "beta", attr_float(n, "beta", 1));
	}
	stream_put_raw(w, "dtype", dt ? dt : "undefined");
	stream_put_shape(w, "shape", t.rank, t.dims);
	range(x, t.nelem, &mn, &mx);
	stream_put_float(w, "min", mn);
	stream_put_float(w, "max", mx);
	if (axis >= 0) {
		int64_t outer = 1, inner = 1, ch = t.dims[axis];

		for (int i = 0; i < axis; i++)
			outer *= t.dims[i];
		for (int i = axis + 1; i < t.rank; i++)
			inner *= t.dims[i];
		cmin = malloc((ch ? ch : 1) * sizeof *cmin);
		cmax = malloc((ch ? ch : 1) * sizeof *cmax);
		if (!cmin || !cmax) {
			err_nomem(e);
			goto out;
		}
		for (int64_t c = 0; c < ch; c++) {
			cmin[c] = INFINITY;
			cmax[c] = -INFINITY;
		}
		for (int64_t o = 0; o < outer && inner == 1; o++)
			channel_ranges(x + o * ch, ch, cmin, cmax);
		for (int64_t o = 0; o < outer && inner > 1; o++)
			for (int64_t c = 0; c < ch; c++) {
				float a, b;

				range(x + (o * ch + c) * inner, inner, &a, &b);
				cmin[c] = a < cmin[c] ? a : cmin[c];
				cmax[c] = b > cmax[c] ? b : cmax[c];
			}
		stream_put_int(w, "axis", axis);
		stream_put_floats(w, "cmin", cmin, ch);
		stream_put_floats(w, "cmax", cmax, ch);
	}
	stream_rec_done(w);
	rc = 0;
out:
	if (x != t.data)
		free(x);
	free(cmin);
	free(cmax);
	model_map_release(&map, &t);
	return rc;
}

static int
put_nodes(const Onnx__GraphProto *g, const struct graph *gr, char **names,
    struct stream_writer *w)
{
	const int *topo = graph_topo(gr);

	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *n = g->node[topo[k]];

		stream_rec_start(w, "node", names[topo[k]]);
		stream_put_name(w, "op", n->op_type ? n->op_type : "");
		if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
			stream_put_name(w, "domain", n->domain);
		stream_put_names(w, "in", (const char *const *)n->input,
		    n->n_input);
		stream_put_names(w, "out", (const char *const *)n->output,
		    n->n_output);
		stream_rec_done(w);
	}
	return 0;
}

int
weights_emit(const struct model *m, const struct graph *gr,
    struct stream_writer *w, struct err *e)
{
	const Onnx__GraphProto *g = graph_proto(gr);
	const int *topo = graph_topo(gr);
	struct strmap *seen = strmap_new();
	struct use *uses = NULL;
	size_t nuses = 0, cap = 0;
	char **names = NULL;
	int rc = -1;

	if (!seen || !(names = weights_node_names(g, e))) {
		if (!seen)
			err_nomem(e);
		goto out;
	}
	put_nodes(g, gr, names, w);
	for (size_t k = 0; k < g->n_node; k++) {
		int ni = topo[k];
		const Onnx__NodeProto *n = g->node[ni];

		for (size_t s = 0; s < n->n_input; s++) {
			const struct graph_value *v;
			enum opinfo_role role;
			struct use *u;
			int idx;

			if (!n->input[s] || !*n->input[s])
				continue;
			v = graph_value(gr, n->input[s]);
			if (!v || (v->kind != VALUE_INITIALIZER &&
			    v->kind != VALUE_CONSTANT) || !v->init ||
			    !dtype_is_float(v->init->data_type))
				continue;
			if (!strmap_get(seen, v->name, &idx)) {
				if (nuses == cap) {
					size_t c = cap ? cap * 2 : 64;
					struct use *nu = realloc(uses,
					    c * sizeof *nu);

					if (!nu) {
						err_nomem(e);
						goto out;
					}
					uses = nu;
					cap = c;
				}
				idx = (int)nuses++;
				uses[idx] = (struct use){ v, -1, -1, 0, -1, -1 };
				if (strmap_put(seen, v->name, idx) < 0) {
					err_nomem(e);
					goto out;
				}
			}
			u = &uses[idx];
			role = opinfo_role(n->domain, n->op_type, (int)s);
			if (role == OPINFO_BIAS) {
				if (u->bnode < 0) {
					u->bnode = ni;
					u->bslot = (int)s;
				}
			} else if ((role == OPINFO_WEIGHT ? 2 : 1) > u->wprio) {
				u->wprio = role == OPINFO_WEIGHT ? 2 : 1;
				u->wnode = ni;
				u->wslot = (int)s;
			}
		}
	}
	for (size_t i = 0; i < nuses; i++) {
		const struct use *u = &uses[i];

		/* one record per tensor: a bias once read as one */
		if (u->bnode >= 0 ? put_tensor(m, g->node[u->bnode], u->bslot,
		    names[u->bnode], u->v, 1, w, e) < 0 : put_tensor(m,
		    g->node[u->wnode], u->wslot, names[u->wnode], u->v, 0, w,
		    e) < 0)
			goto out;
	}
	rc = stream_writer_error(w, e);
out:
	free(uses);
	free(names);
	strmap_free(seen);
	return rc;
}
