/*
 * mixcache_test: lib/mixcache.c and interp_run_skip() on
 * test/data/mixprec/chain.onnx (Conv, Relu, Conv, Reshape, MatMul, Add)
 * and a variant with another B2: the nodes before the second Conv match,
 * the rest do not; the variant run from the cached values is bit for bit
 * its whole run; r1 (read by the second Conv alone) is kept only when
 * asked for, else the first nodes run again; the graph outputs are not
 * kept: the nodes that make them run again, even for the reference
 * model itself, and interp_run_skip() leaves an output whose node is
 * skipped anyway empty; interp_run_keep() hands the values over; past
 * the budget the reference is dropped. On a QDQ model, what is kept
 * and made again; on layered diamonds, the limits of making again, in
 * time. Also the interpreter's fold_constant_nodes: the same outputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "graph.h"
#include "interp.h"
#include "mixcache.h"
#include "model.h"
#include "unit.h"

#define CHAIN "test/data/mixprec/chain.onnx"

static int
record(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	(void)e;
	return mixcache_record(ctx, 0, name, t);
}

static const struct tensor *
cached(void *ctx, const char *name)
{
	return mixcache_get(ctx, 0, name);
}

/* One input x (1x2x6x6), a ramp. */
static void
make_input(struct tensor *x)
{
	int64_t d[4] = { 1, 2, 6, 6 };
	struct err e;

	memset(x, 0, sizeof *x);
	if (tensor_alloc(x, DT_FLOAT, 4, d, &e) < 0)
		return;
	for (int64_t i = 0; i < x->nelem; i++)
		((float *)x->data)[i] = (float)(i % 7) / 3 - 1;
}

/* Add 1 to the first value of initializer name. */
static void
bump(struct model *m, const char *name)
{
	Onnx__GraphProto *g = m->proto->graph;

	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];
		float f;

		if (strcmp(t->name, name) != 0)
			continue;
		if (t->raw_data.len >= sizeof f) {
			memcpy(&f, t->raw_data.data, sizeof f);
			f += 1;
			memcpy(t->raw_data.data, &f, sizeof f);
		} else if (t->n_float_data > 0)
			t->float_data[0] += 1;
	}
}

/* Outputs a and b (n each) the same, bit for bit; both released. */
static void
check_same(struct tensor *a, struct tensor *b, int n)
{
	for (int j = 0; j < n; j++) {
		CHECK(a[j].nelem == b[j].nelem && a[j].dtype == b[j].dtype &&
		    memcmp(a[j].data, b[j].data, (size_t)a[j].nelem *
		    dtype_size(a[j].dtype)) == 0);
		tensor_release(&a[j]);
		tensor_release(&b[j]);
	}
}

/* Variant iv run from c's values (skip): its whole run, bit for bit. */
static void
check_skip_run(struct interp *iv, const struct tensor *x,
    const unsigned char *skip, struct mixcache *c, int n)
{
	struct tensor a[2], b[2];
	struct err e;

	REQUIRE(n <= 2);
	REQUIRE(interp_run_skip(iv, x, skip, cached, c, a, &e) == 0);
	REQUIRE(interp_run(iv, x, b, &e) == 0);
	check_same(a, b, n);
}

/* A test's interpreters, cache, input and models, released. */
static void
free_all(struct interp *ip, struct interp *iv, struct mixcache *c,
    struct tensor *x, struct model *m, struct model *v)
{
	interp_free(iv);
	interp_free(ip);
	mixcache_free(c);
	tensor_release(x);
	model_free(m);
	model_free(v);
}

static void
keep(void *ctx, const char *name, struct tensor *t)
{
	mixcache_keep(ctx, 0, name, t);
}

static void
test_match_and_skip(void)
{
	struct model *m = fixture_model(CHAIN), *v = fixture_model(CHAIN);
	struct mixcache *c = mixcache_new(1 << 30);
	struct interp_opts ro = { .threads = 1, .observe = record };
	struct interp *ip = NULL, *iv = NULL;
	struct tensor x, a[1], b[1];
	unsigned char skip[6];
	struct err e;

	REQUIRE(m != NULL && v != NULL && c != NULL);
	make_input(&x);
	REQUIRE(x.data != NULL);
	/* No reference yet: nothing matches, no sample. */
	CHECK_EQ_INT(mixcache_match(c, m, skip, &e), 0);
	CHECK(!mixcache_has(c, 0));
	REQUIRE(mixcache_begin(c, m, &e) == 0);
	REQUIRE(mixcache_want(c, "r1", &e) == 0);
	ro.observe_ctx = c;
	REQUIRE((ip = interp_new(m, &ro, &e)) != NULL);
	REQUIRE(interp_run(ip, &x, a, &e) == 0);
	tensor_release(&a[0]);
	CHECK(mixcache_has(c, 0));
	CHECK(mixcache_get(c, 0, "r1") != NULL);
	CHECK(mixcache_get(c, 0, "c1") == NULL);
	CHECK(mixcache_bytes(c) > 0);
	/* The same model: every node matches, but the output is not kept:
	   the nodes after r1 run again to make it, the same. */
	CHECK(mixcache_get(c, 0, "y") == NULL);
	CHECK_EQ_INT(mixcache_match(c, m, skip, &e), 2);
	CHECK(skip[0] && skip[1] && !skip[2] && !skip[5]);
	REQUIRE((iv = interp_new(m, NULL, &e)) != NULL);
	check_skip_run(iv, &x, skip, c, 1);
	/* its node skipped all the same (not read): the output is empty */
	skip[5] = 1;
	REQUIRE(interp_run_skip(iv, &x, skip, cached, c, a, &e) == 0);
	CHECK(a[0].data == NULL);
	interp_free(iv);
	iv = NULL;

	/* Another B2: Conv, Relu match; the second Conv and after do not. */
	bump(v, "B2");
	CHECK_EQ_INT(mixcache_match(c, v, skip, &e), 2);
	CHECK(skip[0] && skip[1] && !skip[2] && !skip[5]);
	REQUIRE((iv = interp_new(v, NULL, &e)) != NULL);
	check_skip_run(iv, &x, skip, c, 1);

	/* r1 not kept: the Conv and Relu run again, the same output. */
	REQUIRE(mixcache_begin(c, m, &e) == 0);
	REQUIRE(interp_run(ip, &x, a, &e) == 0);
	tensor_release(&a[0]);
	CHECK(mixcache_get(c, 0, "r1") == NULL);
	CHECK_EQ_INT(mixcache_match(c, m, skip, &e), 0);
	CHECK_EQ_INT(mixcache_match(c, v, skip, &e), 0);
	check_skip_run(iv, &x, skip, c, 1);

	/* interp_run_keep(): the values taken, not copied; the same. */
	interp_free(ip);
	REQUIRE((ip = interp_new(m, NULL, &e)) != NULL);
	REQUIRE(mixcache_begin(c, m, &e) == 0);
	REQUIRE(mixcache_want(c, "r1", &e) == 0);
	REQUIRE(interp_run_keep(ip, &x, keep, c, a, &e) == 0);
	REQUIRE(interp_run(ip, &x, b, &e) == 0);
	check_same(a, b, 1);
	CHECK(mixcache_get(c, 0, "r1") != NULL);
	CHECK(mixcache_get(c, 0, "c1") == NULL);
	CHECK_EQ_INT(mixcache_match(c, v, skip, &e), 2);
	check_skip_run(iv, &x, skip, c, 1);

	free_all(ip, iv, c, &x, m, v);
}

/*
 * verify/clf-q.onnx (QDQ): kept are the graph outputs and what a
 * QuantizeLinear reads, a DequantizeLinear's value as its input, and
 * where a few nodes make it from DequantizeLinear values (a1, from x's
 * through MatMul and Add), their inputs instead; with another a1_scale,
 * QuantizeLinear(x) matches, the nodes that make a1 run again from its
 * kept output, the weight's DequantizeLinear that a running MatMul
 * reads runs again, and the run is bit for bit the whole one.
 */
static void
test_qdq_keep(void)
{
	struct model *m = fixture_model("test/data/verify/clf-q.onnx");
	struct model *v = fixture_model("test/data/verify/clf-q.onnx");
	struct mixcache *c = mixcache_new(1 << 30);
	struct interp *ip = NULL, *iv = NULL;
	struct tensor x, a[2];
	unsigned char skip[32];
	int64_t d[2] = { 1, 16 };
	struct err e;

	REQUIRE(m != NULL && v != NULL && c != NULL);
	REQUIRE(m->proto->graph->n_node <= sizeof skip);
	REQUIRE(tensor_alloc(&x, DT_FLOAT, 2, d, &e) == 0);
	for (int64_t i = 0; i < x.nelem; i++)
		((float *)x.data)[i] = (float)(i % 5) / 2 - 1;
	REQUIRE((ip = interp_new(m, NULL, &e)) != NULL);
	REQUIRE(mixcache_begin(c, m, &e) == 0);
	REQUIRE(interp_run_keep(ip, &x, keep, c, a, &e) == 0);
	for (int j = 0; j < 2; j++) {
		mixcache_record(c, 0, interp_output_name(ip, j), &a[j]);
		tensor_release(&a[j]);
	}
	CHECK(mixcache_get(c, 0, "a1") == NULL);
	CHECK(mixcache_get(c, 0, "x_QuantizeLinear_Output") != NULL);
	CHECK(mixcache_get(c, 0, "re lu/h%") == NULL);
	CHECK(mixcache_get(c, 0, "a1_QuantizeLinear_Output") != NULL);
	CHECK(mixcache_get(c, 0, "h_QuantizeLinear_Output") != NULL);
	CHECK(mixcache_get(c, 0, "h_DequantizeLinear_Output") == NULL);
	CHECK(mixcache_get(c, 0, "mm1") == NULL);
	CHECK(mixcache_get(c, 0, "x_DequantizeLinear_Output") == NULL);
	CHECK(mixcache_get(c, 0, "logits") == NULL);
	CHECK(mixcache_get(c, 0, "score") == NULL);
	/* the model itself: the outputs made again from kept values */
	REQUIRE(mixcache_match(c, m, skip, &e) > 0);
	REQUIRE((iv = interp_new(m, NULL, &e)) != NULL);
	check_skip_run(iv, &x, skip, c, 2);
	interp_free(iv);
	iv = NULL;

	bump(v, "a1_scale");
	REQUIRE(mixcache_match(c, v, skip, &e) > 0);
	for (size_t i = 0; i < v->proto->graph->n_node; i++) {
		const Onnx__NodeProto *n = v->proto->graph->node[i];

		if (strcmp(n->output[0], "x_QuantizeLinear_Output") == 0)
			CHECK(skip[i]);
		if (strcmp(n->output[0], "x_DequantizeLinear_Output") == 0 ||
		    strcmp(n->output[0], "mm1") == 0 ||
		    strcmp(n->output[0], "a1") == 0 ||
		    strcmp(n->output[0], "a1_QuantizeLinear_Output") == 0 ||
		    strcmp(n->output[0], "W2_DequantizeLinear_Output") == 0 ||
		    strcmp(n->output[0], "score") == 0)
			CHECK(!skip[i]);
	}
	REQUIRE((iv = interp_new(v, NULL, &e)) != NULL);
	check_skip_run(iv, &x, skip, c, 2);
	free_all(ip, iv, c, &x, m, v);
}

static const struct tensor *
nothing(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

static void
test_missing_and_budget(void)
{
	struct model *m = fixture_model(CHAIN);
	struct mixcache *c = mixcache_new(16);
	struct interp_opts ro = { .threads = 1, .observe = record,
	    .observe_ctx = c };
	struct interp *ip;
	struct tensor x, a[1];
	unsigned char skip[6] = { 1, 0, 0, 0, 0, 0 };
	struct err e;

	REQUIRE(m != NULL && c != NULL);
	make_input(&x);
	REQUIRE(x.data != NULL);
	REQUIRE((ip = interp_new(m, &ro, &e)) != NULL);
	CHECK(interp_run_skip(ip, &x, skip, nothing, NULL, a, &e) == -1);
	CHECK(strstr(e.msg, "no cached value of c1") != NULL);
	/* Past 16 bytes: the reference is dropped, nothing matches. */
	REQUIRE(mixcache_begin(c, m, &e) == 0);
	REQUIRE(mixcache_want(c, "r1", &e) == 0);
	REQUIRE(interp_run(ip, &x, a, &e) == 0);
	tensor_release(&a[0]);
	CHECK(!mixcache_has(c, 0));
	CHECK_EQ_INT(mixcache_bytes(c), 0);
	CHECK_EQ_INT(mixcache_match(c, m, skip, &e), 0);
	interp_free(ip);
	mixcache_free(c);
	tensor_release(&x);
	model_free(m);
}

/*
 * Nodes of constants (the DequantizeLinear of each weight of
 * verify/clf-q.onnx) run once when planned: the same outputs, run after
 * run, and the observer still sees them.
 */
static int
count(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	(void)name;
	(void)t;
	(void)e;
	++*(int *)ctx;
	return 0;
}

static void
test_fold(void)
{
	struct model *m = fixture_model("test/data/verify/clf-q.onnx");
	int n1 = 0, n2 = 0;
	struct interp_opts o = { .threads = 1, .observe = count,
	    .observe_ctx = &n1 };
	struct interp_opts fo = { .threads = 1, .observe = count,
	    .observe_ctx = &n2, .fold_constant_nodes = 1 };
	struct interp *ip, *ifold;
	struct tensor x, a[2], b[2];
	int64_t d[2] = { 1, 16 };
	struct err e;

	REQUIRE(m != NULL);
	REQUIRE(tensor_alloc(&x, DT_FLOAT, 2, d, &e) == 0);
	for (int64_t i = 0; i < x.nelem; i++)
		((float *)x.data)[i] = (float)(i % 5) / 2 - 1;
	REQUIRE((ip = interp_new(m, &o, &e)) != NULL);
	REQUIRE((ifold = interp_new(m, &fo, &e)) != NULL);
	for (int k = 0; k < 2; k++) {
		REQUIRE(interp_run(ip, &x, a, &e) == 0);
		REQUIRE(interp_run(ifold, &x, b, &e) == 0);
		for (int j = 0; j < 2; j++) {
			CHECK(a[j].nelem == b[j].nelem && a[j].dtype ==
			    b[j].dtype && memcmp(a[j].data, b[j].data,
			    (size_t)a[j].nelem * dtype_size(a[j].dtype)) == 0);
			tensor_release(&a[j]);
			tensor_release(&b[j]);
		}
	}
	CHECK(n1 > 0);
	CHECK_EQ_INT(n2, n1);
	interp_free(ip);
	interp_free(ifold);
	tensor_release(&x);
	model_free(m);
}

/*
 * A graph of layers, each a Sum reading the layer before `fan` times,
 * over x's QuantizeLinear and DequantizeLinear (dq) or its Relu: x ->
 * QuantizeLinear -> "xq" -> DequantizeLinear -> a0 -> Sum -> a1 ... ->
 * a`depth` -> QuantizeLinear -> y. Each layer multiplies the paths back
 * to a0 by fan.
 */
static struct model *
diamond(int depth, int fan, int dq, struct graph **gr)
{
	struct model *m = calloc(1, sizeof *m);
	const char *in[64], *out[1];
	char prev[16], name[16];
	struct err e;

	REQUIRE(m != NULL && fan <= 64);
	REQUIRE((m->proto = malloc(sizeof *m->proto)) != NULL);
	onnx__model_proto__init(m->proto);
	REQUIRE((m->proto->graph = malloc(sizeof *m->proto->graph)) != NULL);
	onnx__graph_proto__init(m->proto->graph);
	REQUIRE((*gr = graph_new(m->proto->graph, &e)) != NULL);
	in[0] = "x";
	in[1] = "s";
	out[0] = "xq";
	REQUIRE(graph_add_node(*gr, "QuantizeLinear", NULL, "q0", in, 2, out,
	    1, &e) != NULL);
	in[0] = dq ? "xq" : "x";
	out[0] = "a0";
	REQUIRE(graph_add_node(*gr, dq ? "DequantizeLinear" : "Relu", NULL,
	    "a0", in, dq ? 2 : 1, out, 1, &e) != NULL);
	strcpy(prev, "a0");
	for (int i = 1; i <= depth; i++) {
		snprintf(name, sizeof name, "a%d", i);
		for (int k = 0; k < fan; k++)
			in[k] = prev;
		out[0] = name;
		REQUIRE(graph_add_node(*gr, "Sum", NULL, name, in, fan, out,
		    1, &e) != NULL);
		strcpy(prev, name);
	}
	in[0] = prev;
	in[1] = "s";
	out[0] = "y";
	REQUIRE(graph_add_node(*gr, "QuantizeLinear", NULL, "q", in, 2, out,
	    1, &e) != NULL);
	return m;
}

/* Whether the reference of m keeps `name` (a scalar recorded). */
static int
kept(struct model *m, const char *name)
{
	struct mixcache *c = mixcache_new(1 << 20);
	struct tensor t = { 0 };
	struct err e;
	int got;

	REQUIRE(c != NULL);
	REQUIRE(mixcache_begin(c, m, &e) == 0);
	REQUIRE(tensor_alloc(&t, DT_FLOAT, 0, NULL, &e) == 0);
	mixcache_record(c, 0, name, &t);
	got = mixcache_get(c, 0, name) != NULL;
	tensor_release(&t);
	mixcache_free(c);
	return got;
}

static void
free_diamond(struct model *m, struct graph *gr)
{
	graph_free(gr);
	model_free(m);
}

/*
 * A QuantizeLinear's input is made again from DequantizeLinear inputs
 * through up to 8 nodes, from up to 8 of them (repeats counted). Each
 * node is looked at once, not once per path: the 40 ^ 7 paths from a7
 * back to x's Relu, all good, would not end (the alarm fails the test
 * instead).
 */
static void
test_remake_diamond(void)
{
	struct graph *gr;
	struct model *m;

	alarm(20);
	/* a2 made again from xq read 4 times: xq kept, a2 not */
	m = diamond(2, 2, 1, &gr);
	CHECK(kept(m, "xq") && !kept(m, "a2"));
	free_diamond(m, gr);
	/* 8 times: still */
	m = diamond(3, 2, 1, &gr);
	CHECK(kept(m, "xq") && !kept(m, "a3"));
	free_diamond(m, gr);
	/* 16 times, too many: a4 kept */
	m = diamond(4, 2, 1, &gr);
	CHECK(!kept(m, "xq") && kept(m, "a4"));
	free_diamond(m, gr);
	/* 8 Sum nodes deep: made again; 9: kept */
	m = diamond(8, 1, 1, &gr);
	CHECK(kept(m, "xq") && !kept(m, "a8"));
	free_diamond(m, gr);
	m = diamond(9, 1, 1, &gr);
	CHECK(!kept(m, "xq") && kept(m, "a9"));
	free_diamond(m, gr);
	/* from x alone (a graph input): nothing kept, 40 ^ 7 paths */
	m = diamond(7, 40, 0, &gr);
	CHECK(!kept(m, "a7") && !kept(m, "a0"));
	free_diamond(m, gr);
	alarm(0);
}

static int
all_stable(void *ctx, const Onnx__TensorProto *t)
{
	(void)ctx;
	(void)t;
	return 1;
}

/*
 * mixcache_begin_lent(): the reference's lent initializers are read
 * where they are, not copied: a variant with the same bytes elsewhere
 * matches, one with another B2 does not; B2 changed in place (which the
 * contract forbids) shows the reference reads the model's bytes.
 */
static void
test_lent(void)
{
	struct model *m = fixture_model(CHAIN), *v = fixture_model(CHAIN);
	struct mixcache *c = mixcache_new(1 << 30);
	unsigned char skip[6];
	struct err e;

	REQUIRE(m != NULL && v != NULL && c != NULL);
	REQUIRE(mixcache_begin_lent(c, m, all_stable, NULL, &e) == 0);
	REQUIRE(mixcache_want(c, "r1", &e) == 0);
	/* mm too: the graph output is not kept, its Add runs again */
	REQUIRE(mixcache_want(c, "mm", &e) == 0);
	CHECK_EQ_INT(mixcache_match(c, m, skip, &e), 5);
	CHECK_EQ_INT(mixcache_match(c, v, skip, &e), 5);
	bump(v, "B2");
	CHECK_EQ_INT(mixcache_match(c, v, skip, &e), 2);
	bump(m, "B2");			/* now v's bytes */
	CHECK_EQ_INT(mixcache_match(c, v, skip, &e), 5);
	/* copied by mixcache_begin(): m's later change is not seen */
	REQUIRE(mixcache_begin(c, m, &e) == 0);
	REQUIRE(mixcache_want(c, "r1", &e) == 0);
	REQUIRE(mixcache_want(c, "mm", &e) == 0);
	bump(m, "B2");
	CHECK_EQ_INT(mixcache_match(c, v, skip, &e), 5);
	mixcache_free(c);
	model_free(m);
	model_free(v);
}

UNIT_MAIN(test_match_and_skip, test_qdq_keep,
    test_missing_and_budget, test_fold, test_remake_diamond, test_lent)
