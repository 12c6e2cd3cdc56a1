/*
 * op_control: If, Loop and Scan. Their subgraphs are planned by the
 * interpreter with the node (op_ctx.graphs) and run here through
 * interp_graph_run(), once per branch taken or per iteration; they read
 * outer-scope values themselves. Loop-carried values and Scan states move
 * from one iteration's outputs to the next one's inputs without copies;
 * scan outputs are kept per iteration and stacked at the end (every
 * iteration must give them the same shape and type, as the spec says).
 * Scan follows opset 9+ (scan axes and directions) and opset 8 (a batch
 * axis, sequence_lens, per-input directions).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "interp.h"
#include "ops.h"
#include "util.h"

/* The planned subgraph in the node's attribute `name`. */
static struct interp *
subgraph(struct op_ctx *c, const char *name)
{
	for (size_t i = 0; c->graphs && i < c->node->n_attribute; i++)
		if (c->graphs[i] &&
		    strcmp(str_or_empty(c->node->attribute[i]->name), name) == 0)
			return c->graphs[i];
	err_set(c->err, "attribute %s: no graph", name);
	return NULL;
}

/* A one-element tensor's value as a truth value or a count. */
static int
scalar(const struct tensor *t, const char *what, double *v, struct err *e)
{
	if (t->nelem != 1)
		return err_set(e, "%s must have one element, it has %lld", what,
		    (long long)t->nelem);
	*v = t->dtype == DT_INT64 ? (double)*(const int64_t *)t->data :
	    tensor_get(t, 0);
	return 0;
}

static int
check_arity(struct op_ctx *c, struct interp *g, const char *name, int nin,
    int nout)
{
	if (interp_ninputs(g) != nin || interp_noutputs(g) != nout)
		return err_set(c->err, "%s has %d inputs and %d outputs, the "
		    "node needs %d and %d", name, interp_ninputs(g),
		    interp_noutputs(g), nin, nout);
	return 0;
}

static int
if_run(struct op_ctx *c)
{
	const char *name;
	struct interp *g;
	double cond = 0;

	if (!c->in[0])
		return err_set(c->err, "no condition");
	if (scalar(c->in[0], "the condition", &cond, c->err) < 0)
		return -1;
	name = cond != 0 ? "then_branch" : "else_branch";
	if (!(g = subgraph(c, name)) || check_arity(c, g, name, 0, c->nout) < 0)
		return -1;
	if (interp_graph_run(g, NULL, c->out, c->err) < 0)
		return err_prefix(c->err, "%s", name);
	return 0;
}

/* Outputs of every iteration, stacked at the end. */
struct stack {
	struct tensor *v;
	size_t n, cap;
};

static int
stack_push(struct stack *s, struct tensor *t, struct err *e)
{
	if (array_grow(&s->v, &s->cap, s->n, sizeof *s->v) < 0)
		return err_nomem(e);
	/* New slots hold garbage: no tensor_move, which releases dst. */
	s->v[s->n++] = *t;
	memset(t, 0, sizeof *t);
	return 0;
}

static void
stack_free(struct stack *s)
{
	for (size_t i = 0; i < s->n; i++)
		tensor_release(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/*
 * Stack the s->n tensors into out along axis (of the result; negative
 * counts from the end), the last pushed first when reverse. With no
 * tensors, out is empty with shape [0] of type dt.
 */
static int
stack_join(struct stack *s, int64_t axis, int reverse, int dt,
    struct tensor *out, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK], outer = 1, inner = 1, n = (int64_t)s->n;
	const struct tensor *f;
	size_t es;
	int a, rank;

	if (!s->n) {
		int64_t zero = 0;

		return tensor_alloc(out, dt ? dt : DT_FLOAT, 1, &zero, e);
	}
	f = &s->v[0];
	if (f->rank + 1 > TENSOR_MAX_RANK)
		return err_set(e, "scan output rank %d is too large", f->rank + 1);
	if ((a = ops_axis(axis, f->rank + 1, e)) < 0)
		return -1;
	for (size_t i = 1; i < s->n; i++)
		if (s->v[i].dtype != f->dtype || !shape_equal(&s->v[i], f))
			return err_set(e, "scan output changes shape or type "
			    "between iterations");
	rank = f->rank + 1;
	for (int k = 0, j = 0; k < rank; k++)
		dims[k] = k == a ? n : f->dims[j++];
	for (int k = 0; k < a; k++)
		outer *= f->dims[k];
	for (int k = a; k < f->rank; k++)
		inner *= f->dims[k];
	if (tensor_alloc_uninit(out, f->dtype, rank, dims, e) < 0)
		return -1;
	es = dtype_size(f->dtype);
	for (int64_t t = 0; t < n; t++) {
		const char *src = s->v[reverse ? n - 1 - t : t].data;
		char *dst = (char *)out->data + (size_t)(t * inner) * es;

		for (int64_t o = 0; o < outer; o++)
			memcpy(dst + (size_t)(o * n * inner) * es,
			    src + (size_t)(o * inner) * es, (size_t)inner * es);
	}
	return 0;
}

/* The declared element type of output i of graph attribute `name`. */
static int
declared_type(const struct op_ctx *c, const char *name, int i)
{
	const Onnx__AttributeProto *a = attr_find(c->node, name);
	const Onnx__ValueInfoProto *vi;

	if (!a || !a->g || i >= (int)a->g->n_output)
		return DT_UNDEFINED;
	vi = a->g->output[i];
	return vi->type && vi->type->value_case ==
	    ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type &&
	    vi->type->tensor_type->has_elem_type ?
	    vi->type->tensor_type->elem_type : DT_UNDEFINED;
}

static int
loop_run(struct op_ctx *c)
{
	int n = c->nin - 2, k = c->nout - n, r = -1;
	struct interp *g;
	const struct tensor **args = NULL;
	struct tensor *carry = NULL, *res = NULL, it = { 0 }, cond = { 0 };
	struct stack *scans = NULL;
	int64_t max = INT64_MAX, i;
	double v = 1;

	if (n < 0 || k < 0)
		return err_set(c->err, "%d loop-carried inputs but %d outputs",
		    n < 0 ? 0 : n, c->nout);
	if (!(g = subgraph(c, "body")) ||
	    check_arity(c, g, "body", n + 2, 1 + n + k) < 0)
		return -1;
	if (c->in[0]) {
		if (scalar(c->in[0], "the trip count", &v, c->err) < 0)
			return -1;
		max = c->in[0]->dtype == DT_INT64 ?
		    *(const int64_t *)c->in[0]->data : (int64_t)v;
	}
	v = 1;
	if (c->nin > 1 && c->in[1] &&
	    scalar(c->in[1], "the condition", &v, c->err) < 0)
		return -1;
	args = calloc((size_t)n + 2, sizeof *args);
	carry = calloc((size_t)n + 1, sizeof *carry);
	res = calloc((size_t)(1 + n + k) + 1, sizeof *res);
	scans = calloc((size_t)k + 1, sizeof *scans);
	if (!args || !carry || !res || !scans ||
	    tensor_alloc(&it, DT_INT64, 0, NULL, c->err) < 0 ||
	    tensor_alloc(&cond, DT_BOOL, 0, NULL, c->err) < 0) {
		if (!c->err->msg[0])
			err_nomem(c->err);
		goto done;
	}
	args[0] = &it;
	args[1] = &cond;
	for (int j = 0; j < n; j++)
		args[2 + j] = c->in[2 + j];
	for (i = 0; i < max && v != 0; i++) {
		*(int64_t *)it.data = i;
		*(uint8_t *)cond.data = 1;
		for (int j = 0; j < n; j++)
			if (!args[2 + j]) {
				err_set(c->err, "loop-carried input %d is absent", j);
				goto done;
			}
		if (interp_graph_run(g, args, res, c->err) < 0) {
			err_prefix(c->err, "body, iteration %lld", (long long)i);
			goto done;
		}
		if (scalar(&res[0], "the body's condition", &v, c->err) < 0)
			goto done;
		tensor_release(&res[0]);
		for (int j = 0; j < n; j++) {
			tensor_move(&carry[j], &res[1 + j]);
			args[2 + j] = &carry[j];
		}
		for (int j = 0; j < k; j++)
			if (stack_push(&scans[j], &res[1 + n + j], c->err) < 0)
				goto done;
	}
	for (int j = 0; j < n; j++) {
		if (carry[j].data)
			tensor_move(&c->out[j], &carry[j]);
		else if (tensor_copy(&c->out[j], c->in[2 + j], c->err) < 0)
			goto done;
	}
	for (int j = 0; j < k; j++)
		if (stack_join(&scans[j], 0, 0, declared_type(c, "body",
		    1 + n + j), &c->out[n + j], c->err) < 0)
			goto done;
	r = 0;
done:
	for (int j = 0; res && j < 1 + n + k; j++)
		tensor_release(&res[j]);
	for (int j = 0; carry && j < n; j++)
		tensor_release(&carry[j]);
	for (int j = 0; scans && j < k; j++)
		stack_free(&scans[j]);
	tensor_release(&it);
	tensor_release(&cond);
	free(args);
	free(carry);
	free(res);
	free(scans);
	return r;
}

/* Element t along axis a of x, into an empty dst of rank one less. */
static int
slice_axis(const struct tensor *x, int a, int64_t t, struct tensor *dst,
    struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK], outer = 1, inner = 1, len = x->dims[a];
	size_t es = dtype_size(x->dtype);

	for (int k = 0, j = 0; k < x->rank; k++)
		if (k != a)
			dims[j++] = x->dims[k];
	for (int k = 0; k < a; k++)
		outer *= x->dims[k];
	for (int k = a + 1; k < x->rank; k++)
		inner *= x->dims[k];
	if (tensor_alloc_uninit(dst, x->dtype, x->rank - 1, dims, e) < 0)
		return -1;
	for (int64_t o = 0; o < outer; o++)
		memcpy((char *)dst->data + (size_t)(o * inner) * es,
		    (const char *)x->data + (size_t)((o * len + t) * inner) * es,
		    (size_t)inner * es);
	return 0;
}

/* A scan's shape: n states, m scan inputs, k scan outputs. */
struct scan {
	struct interp *body;
	int n, m, k;
	const int64_t *in_dir, *in_axis, *out_dir, *out_axis;
	size_t nin_dir, nin_axis, nout_dir, nout_axis;
};

static int64_t
attr_at(const int64_t *v, size_t count, int i)
{
	return (size_t)i < count ? v[i] : 0;
}

/*
 * One scan over len steps: states st (n), scan inputs x (m, scanned
 * along their scan axes); final states into out[0..n), scan outputs
 * into out[n..n+k).
 */
static int
scan_once(struct op_ctx *c, const struct scan *sc,
    const struct tensor *const *st, const struct tensor *const *x,
    int64_t len, struct tensor *out)
{
	int n = sc->n, m = sc->m, k = sc->k, r = -1;
	const struct tensor **args = calloc((size_t)(n + m) + 1, sizeof *args);
	struct tensor *carry = calloc((size_t)n + 1, sizeof *carry);
	struct tensor *elem = calloc((size_t)m + 1, sizeof *elem);
	struct tensor *res = calloc((size_t)(n + k) + 1, sizeof *res);
	struct stack *scans = calloc((size_t)k + 1, sizeof *scans);
	int *axis = calloc((size_t)m + 1, sizeof *axis);

	if (!args || !carry || !elem || !res || !scans || !axis) {
		err_nomem(c->err);
		goto done;
	}
	for (int j = 0; j < m; j++) {
		if ((axis[j] = ops_axis(attr_at(sc->in_axis, sc->nin_axis, j),
		    x[j]->rank, c->err)) < 0)
			goto done;
		if (x[j]->dims[axis[j]] < len) {
			err_set(c->err, "scan input %d has %lld steps, %lld are "
			    "scanned", j, (long long)x[j]->dims[axis[j]],
			    (long long)len);
			goto done;
		}
	}
	for (int j = 0; j < n; j++)
		args[j] = st[j];
	for (int64_t t = 0; t < len; t++) {
		for (int j = 0; j < m; j++) {
			int64_t at = attr_at(sc->in_dir, sc->nin_dir, j) ?
			    len - 1 - t : t;

			tensor_release(&elem[j]);
			if (slice_axis(x[j], axis[j], at, &elem[j], c->err) < 0)
				goto done;
			args[n + j] = &elem[j];
		}
		if (interp_graph_run(sc->body, args, res, c->err) < 0) {
			err_prefix(c->err, "body, step %lld", (long long)t);
			goto done;
		}
		for (int j = 0; j < n; j++) {
			tensor_move(&carry[j], &res[j]);
			args[j] = &carry[j];
		}
		for (int j = 0; j < k; j++)
			if (stack_push(&scans[j], &res[n + j], c->err) < 0)
				goto done;
	}
	for (int j = 0; j < n; j++) {
		if (carry[j].data)
			tensor_move(&out[j], &carry[j]);
		else if (tensor_copy(&out[j], st[j], c->err) < 0)
			goto done;
	}
	for (int j = 0; j < k; j++)
		if (stack_join(&scans[j], attr_at(sc->out_axis, sc->nout_axis, j),
		    (int)attr_at(sc->out_dir, sc->nout_dir, j),
		    declared_type(c, "body", n + j), &out[n + j], c->err) < 0)
			goto done;
	r = 0;
done:
	for (int j = 0; res && j < n + k; j++)
		tensor_release(&res[j]);
	for (int j = 0; carry && j < n; j++)
		tensor_release(&carry[j]);
	for (int j = 0; elem && j < m; j++)
		tensor_release(&elem[j]);
	for (int j = 0; scans && j < k; j++)
		stack_free(&scans[j]);
	free(args);
	free(carry);
	free(elem);
	free(res);
	free(scans);
	free(axis);
	return r;
}

static int
scan_setup(struct op_ctx *c, struct scan *sc, int ninputs)
{
	memset(sc, 0, sizeof *sc);
	sc->m = (int)attr_int(c->node, "num_scan_inputs", -1);
	sc->n = ninputs - sc->m;
	sc->k = c->nout - sc->n;
	if (sc->m < 1 || sc->n < 0 || sc->k < 0)
		return err_set(c->err, "num_scan_inputs %d does not fit %d "
		    "inputs and %d outputs", sc->m, ninputs, c->nout);
	if (!(sc->body = subgraph(c, "body")) || check_arity(c, sc->body,
	    "body", sc->n + sc->m, sc->n + sc->k) < 0)
		return -1;
	sc->in_dir = attr_ints(c->node, c->opset < 9 ? "directions" :
	    "scan_input_directions", &sc->nin_dir);
	sc->in_axis = attr_ints(c->node, "scan_input_axes", &sc->nin_axis);
	sc->out_dir = attr_ints(c->node, "scan_output_directions",
	    &sc->nout_dir);
	sc->out_axis = attr_ints(c->node, "scan_output_axes", &sc->nout_axis);
	return 0;
}

static int
scan9_run(struct op_ctx *c)
{
	struct scan sc;
	int64_t len = -1;

	if (scan_setup(c, &sc, c->nin) < 0)
		return -1;
	for (int j = 0; j < c->nin; j++)
		if (!c->in[j])
			return err_set(c->err, "input %d is absent", j);
	for (int j = 0; j < sc.m; j++) {
		const struct tensor *x = c->in[sc.n + j];
		int a = ops_axis(attr_at(sc.in_axis, sc.nin_axis, j), x->rank,
		    c->err);

		if (a < 0)
			return -1;
		if (j == 0)
			len = x->dims[a];
		if (x->dims[a] != len)
			return err_set(c->err, "scan inputs have %lld and %lld "
			    "steps", (long long)len, (long long)x->dims[a]);
	}
	return scan_once(c, &sc, c->in, c->in + sc.n, len, c->out);
}

/*
 * Opset 8: every input and output has a batch axis first; scan inputs
 * are scanned along axis 1, each batch entry for its sequence_lens steps
 * (scan outputs zero past them).
 */
static int
scan8_run(struct op_ctx *c)
{
	struct scan sc;
	const struct tensor *lens = c->in[0];
	const struct tensor **args = NULL;
	struct tensor *ent = NULL, *res = NULL;
	int64_t batch, seq, *lv = NULL, nl = 0;
	int nio, r = -1;

	if (scan_setup(c, &sc, c->nin - 1) < 0)
		return -1;
	nio = sc.n + sc.m;
	for (int j = 1; j < c->nin; j++)
		if (!c->in[j] || c->in[j]->rank < (j > sc.n ? 2 : 1))
			return err_set(c->err, "input %d is absent or has no "
			    "batch axis", j);
	batch = c->in[1]->dims[0];
	seq = c->in[1 + sc.n]->dims[1];
	if (lens && ops_read_ints(lens, &lv, &nl, c->err) < 0)
		return -1;
	if (lens && nl != batch) {
		free(lv);
		return err_set(c->err, "sequence_lens has %lld entries for a "
		    "batch of %lld", (long long)nl, (long long)batch);
	}
	args = calloc((size_t)nio + 1, sizeof *args);
	ent = calloc((size_t)nio + 1, sizeof *ent);
	res = calloc((size_t)c->nout + 1, sizeof *res);
	if (!args || !ent || !res) {
		err_nomem(c->err);
		goto done;
	}
	sc.in_axis = NULL;
	sc.nin_axis = 0;
	for (int64_t b = 0; b < batch; b++) {
		int64_t len = lens ? lv[b] : seq;

		if (len < 0 || len > seq) {
			err_set(c->err, "sequence length %lld is outside 0..%lld",
			    (long long)len, (long long)seq);
			goto done;
		}
		for (int j = 0; j < nio; j++) {
			if (c->in[1 + j]->dims[0] != batch) {
				err_set(c->err, "input %d has batch %lld, not %lld",
				    1 + j, (long long)c->in[1 + j]->dims[0],
				    (long long)batch);
				goto done;
			}
			tensor_release(&ent[j]);
			/* scan_once() scans the first len steps. */
			if (slice_axis(c->in[1 + j], 0, b, &ent[j], c->err) < 0)
				goto done;
			args[j] = &ent[j];
		}
		if (scan_once(c, &sc, args, args + sc.n, len, res) < 0)
			goto done;
		for (int j = 0; j < c->nout; j++) {
			struct tensor *o = &c->out[j];
			int64_t dims[TENSOR_MAX_RANK];
			size_t sz;

			if (!o->data) {
				if (res[j].rank + 1 > TENSOR_MAX_RANK ||
				    (j >= sc.n && res[j].rank < 1)) {
					err_set(c->err, "output rank too large");
					goto done;
				}
				dims[0] = batch;
				memcpy(dims + 1, res[j].dims, (size_t)res[j].rank *
				    sizeof *dims);
				if (j >= sc.n)
					dims[1] = seq;
				if (tensor_alloc(o, res[j].dtype, res[j].rank + 1,
				    dims, c->err) < 0)
					goto done;
			}
			sz = (size_t)res[j].nelem * dtype_size(res[j].dtype);
			if (res[j].dtype != o->dtype || sz * (size_t)batch >
			    (size_t)o->nelem * dtype_size(o->dtype)) {
				err_set(c->err, "output %d changes shape between "
				    "batch entries", j);
				goto done;
			}
			memcpy((char *)o->data + (size_t)b * ((size_t)o->nelem /
			    (size_t)batch) * dtype_size(o->dtype), res[j].data, sz);
			tensor_release(&res[j]);
		}
	}
	r = 0;
done:
	for (int j = 0; ent && j < nio; j++)
		tensor_release(&ent[j]);
	for (int j = 0; res && j < c->nout; j++)
		tensor_release(&res[j]);
	free(lv);
	free(args);
	free(ent);
	free(res);
	return r;
}

static int
scan_run(struct op_ctx *c)
{
	return c->opset < 9 ? scan8_run(c) : scan9_run(c);
}

const struct op_def op_control_defs[] = {
	{ "", "If", if_run, NULL },
	{ "", "Loop", loop_run, NULL },
	{ "", "Scan", scan_run, NULL },
	{ NULL, NULL, NULL, NULL },
};
