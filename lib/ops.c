/* ops: the kernel registry and helpers kernels share. See ops.h. */
#include <stdlib.h>
#include <string.h>

#include "ops.h"

static const struct op_def *const tables[] = {
	op_math_defs, op_reduce_defs, op_shape_defs, op_nn_defs, op_quant_defs,
	op_control_defs, op_rnn_defs, op_dynq_defs, op_nbits_defs,
	op_qlinear_defs,
	op_attn_defs,
};

static int
same_domain(const char *a, const char *b)
{
	if (!a || strcmp(a, "ai.onnx") == 0)
		a = "";
	if (!b || strcmp(b, "ai.onnx") == 0)
		b = "";
	return strcmp(a, b) == 0;
}

const struct op_def *
ops_find(const char *domain, const char *op_type)
{
	if (!op_type)	/* a node without op_type has no kernel */
		return NULL;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const struct op_def *d = tables[t]; d->op_type; d++)
			/* the first letter first: interp_new() asks for
			   every node of every model it makes */
			if (d->op_type[0] == op_type[0] &&
			    strcmp(d->op_type, op_type) == 0 &&
			    same_domain(d->domain, domain))
				return d;
	return NULL;
}

const struct op_def *const *
ops_all(void)
{
	/* Built on first use; the registry is immutable after that. */
	static const struct op_def *all[1024];
	size_t n = 0;

	if (all[0])
		return all;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const struct op_def *d = tables[t]; d->op_type; d++)
			if (n + 1 < sizeof all / sizeof all[0])
				all[n++] = d;
	all[n] = NULL;
	return all;
}

int
ops_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db,
    int *rout, int64_t *dout, struct err *e)
{
	int r = ra > rb ? ra : rb;

	if (r > TENSOR_MAX_RANK)
		return err_set(e, "rank %d is too large", r);
	for (int i = 0; i < r; i++) {
		int64_t a = i < r - ra ? 1 : da[i - (r - ra)];
		int64_t b = i < r - rb ? 1 : db[i - (r - rb)];
		if (a == b || b == 1)
			dout[i] = a;
		else if (a == 1)
			dout[i] = b;
		else {
			char sa[256], sb[256];
			return err_set(e, "shapes %s and %s do not broadcast",
			    shape_str(ra, da, sa, sizeof sa),
			    shape_str(rb, db, sb, sizeof sb));
		}
	}
	*rout = r;
	return 0;
}

int
ops_axis(int64_t axis, int rank, struct err *e)
{
	if (axis < -(int64_t)rank || axis >= rank)
		return err_set(e, "axis %lld is out of range for rank %d",
		    (long long)axis, rank);
	return (int)(axis < 0 ? axis + rank : axis);
}

int
ops_read_ints(const struct tensor *t, int64_t **vals, int64_t *count,
    struct err *e)
{
	int64_t *v;

	if (t->dtype != DT_INT64 && t->dtype != DT_INT32)
		return err_set(e, "expected an int64 or int32 tensor, got %s",
		    ops_type_name(t->dtype));
	if (t->rank > 1)
		return err_set(e, "expected a 1-D tensor, got rank %d", t->rank);
	if (!(v = malloc((t->nelem ? (size_t)t->nelem : 1) * sizeof *v)))
		return err_nomem(e);
	for (int64_t i = 0; i < t->nelem; i++)
		v[i] = t->dtype == DT_INT64 ? ((const int64_t *)t->data)[i] :
		    ((const int32_t *)t->data)[i];
	*vals = v;
	*count = t->nelem;
	return 0;
}

int
ops_run_once(const struct op_def *def, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, struct tensor *out, int nout,
    int threads, struct err *e)
{
	struct op_ctx c;
	void *state = NULL;
	int r;

	memset(&c, 0, sizeof c);
	c.node = n;
	c.opset = opset;
	c.nin = nin;
	c.in = in;
	c.nout = nout;
	c.out = out;
	c.threads = threads;
	c.state = &state;
	c.err = e;
	e->msg[0] = '\0';
	r = def->run(&c);
	if (state && def->free_state)
		def->free_state(state);
	if (r != 0 && !e->msg[0])
		err_set(e, "kernel failed");
	return r != 0 ? -1 : 0;
}
