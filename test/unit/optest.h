/*
 * optest: what the kernel unit tests (op_*_test.c) share: a node built
 * in place, with a few attributes, and a runner that calls its kernel
 * through the registry (lib/ops.h) the way the interpreter does.
 *
 *	struct tnode t;
 *
 *	node_init(&t, "Conv");
 *	node_ints(&t, "strides", DIMS(2, 2), 2);
 *	rc = op_run_in("", &t, 13, in, 2, &y, 1, 1, &e);
 *
 * Everything a tnode points to lives inside it or is static, so a test
 * needs no cleanup beyond releasing the output tensors.
 */
#ifndef ONNXQ_OPTEST_H
#define ONNXQ_OPTEST_H

#include <stdint.h>
#include <string.h>

#include "ops.h"
#include "tensor.h"
#include "unit.h"

#define TNODE_ATTRS 10		/* attributes a node may carry */
#define TNODE_INTS 16		/* values an ints attribute may carry */
#define TNODE_OUTS 4

#define DIMS(...) (const int64_t[]){ __VA_ARGS__ }
#define VALS(...) (const double[]){ __VA_ARGS__ }

struct tnode {
	Onnx__NodeProto n;
	Onnx__AttributeProto a[TNODE_ATTRS];
	Onnx__AttributeProto *ap[TNODE_ATTRS];
	int64_t ints[TNODE_ATTRS][TNODE_INTS];
	char *outs[TNODE_OUTS];
};

/* A node of type op, no attributes, outputs named y0..y3 (one given). */
UNIT_FN void
node_init(struct tnode *t, const char *op)
{
	static char *names[TNODE_OUTS] = { "y0", "y1", "y2", "y3" };

	memset(t, 0, sizeof *t);
	onnx__node_proto__init(&t->n);
	t->n.op_type = (char *)op;
	for (int i = 0; i < TNODE_OUTS; i++)
		t->outs[i] = names[i];
	t->n.output = t->outs;
	t->n.n_output = 1;
	t->n.attribute = t->ap;
}

#define TNODE_TYPE(t) ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__##t

/* A new attribute of t, of the given type (its has_ flag set). */
UNIT_FN Onnx__AttributeProto *
node_attr(struct tnode *t, const char *name,
    Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *a = &t->a[t->n.n_attribute];

	if (t->n.n_attribute >= TNODE_ATTRS)
		abort();
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->type = type;
	a->has_i = type == TNODE_TYPE(INT);
	a->has_f = type == TNODE_TYPE(FLOAT);
	a->has_s = type == TNODE_TYPE(STRING);
	t->ap[t->n.n_attribute++] = a;
	return a;
}

UNIT_FN void
node_int(struct tnode *t, const char *name, int64_t v)
{
	node_attr(t, name, TNODE_TYPE(INT))->i = v;
}

UNIT_FN void
node_float(struct tnode *t, const char *name, float v)
{
	node_attr(t, name, TNODE_TYPE(FLOAT))->f = v;
}

UNIT_FN void
node_ints(struct tnode *t, const char *name, const int64_t *v, size_t n)
{
	int64_t *store = t->ints[t->n.n_attribute];
	Onnx__AttributeProto *a = node_attr(t, name, TNODE_TYPE(INTS));

	if (n > TNODE_INTS)
		abort();
	memcpy(store, v, n * sizeof *v);
	a->ints = store;
	a->n_ints = n;
}

UNIT_FN void
node_str(struct tnode *t, const char *name, const char *s)
{
	Onnx__AttributeProto *a = node_attr(t, name, TNODE_TYPE(STRING));

	a->s.data = (uint8_t *)s;
	a->s.len = strlen(s);
}

/*
 * Run t's kernel in domain ("" the default) on nin inputs into nout
 * empty outputs, with a fresh state; -1 with e set if it fails or there
 * is no kernel. A kernel that keeps state is run a second time, which
 * must reuse it and give the same first output.
 */
UNIT_FN int
op_run_in(const char *domain, struct tnode *t, int opset,
    const struct tensor **in, int nin, struct tensor *out, int nout,
    int threads, struct err *e)
{
	const struct op_def *d = ops_find(domain, t->n.op_type);
	void *state = NULL;
	struct op_ctx c;
	int rc;

	if (!d)
		return err_set(e, "no kernel for %s", t->n.op_type);
	t->n.n_output = (size_t)nout;
	memset(&c, 0, sizeof c);
	c.node = &t->n;
	c.opset = opset;
	c.nin = nin;
	c.in = in;
	c.nout = nout;
	c.out = out;
	c.threads = threads;
	c.state = &state;
	c.err = e;
	e->msg[0] = '\0';
	rc = d->run(&c);
	if (rc == 0 && state) {
		struct tensor again = { 0 };

		c.out = &again;
		c.nout = 1;
		if (d->run(&c) == 0) {
			if (!shape_equal(&again, &out[0]) || memcmp(again.data,
			    out[0].data, (size_t)out[0].nelem *
			    dtype_size(out[0].dtype)) != 0)
				rc = err_set(e, "second run differs");
		} else
			rc = -1;
		tensor_release(&again);
	}
	if (d->free_state)
		d->free_state(state);
	return rc;
}

/* xorshift64, the same sequence in every run: a failure reproduces. */
static uint64_t optest_rng_ = 88172645463325252ULL;

UNIT_FN uint64_t
optest_rand(void)
{
	optest_rng_ ^= optest_rng_ << 13;
	optest_rng_ ^= optest_rng_ >> 7;
	optest_rng_ ^= optest_rng_ << 17;
	return optest_rng_;
}

#endif
