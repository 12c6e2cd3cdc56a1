/*
 * graph_test: lib/graph.c: values, producers, consumers, topological
 * order, subgraph reads, the errors graph_new reports, the editing
 * helpers, the constant and clean-up helpers. Needs
 * test/data/models/{small,subgraph,cycle,dup-output}.onnx
 * (run from the top of the source tree, as make check does).
 */
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "model.h"
#include "strmap.h"
#include "tensor.h"
#include "unit.h"

#define MODELS "test/data/models/"

static struct model *
load(const char *name)
{
	struct model *m;
	struct err e;
	char path[128];

	snprintf(path, sizeof path, MODELS "%s", name);
	if ((m = model_load(path, &e)) == NULL)
		CHECK_EQ_STR(e.msg, "");
	return m;
}

static const char *
node_name(struct graph *gr, int i)
{
	return i < 0 ? "-" : graph_proto(gr)->node[i]->name;
}

static void
check_value(struct graph *gr, const char *name, enum value_kind kind,
    const char *producer, int nconsumers)
{
	struct graph_value *v = graph_value(gr, name);

	if (!CHECK(v != NULL)) {
		CHECK_EQ_STR(name, "a value");
		return;
	}
	CHECK_EQ_STR(v->name, name);
	CHECK_EQ_INT(v->kind, kind);
	CHECK_EQ_STR(node_name(gr, v->producer), producer);
	CHECK_EQ_INT(v->nconsumers, nconsumers);
}

/* Node names in topological order, space separated. */
static char *
topo_str(struct graph *gr)
{
	Onnx__GraphProto *g = graph_proto(gr);
	char *s = calloc(1, 1024);
	size_t i;

	for (i = 0; i < g->n_node; i++) {
		if (i > 0)
			strcat(s, " ");
		strcat(s, g->node[graph_topo(gr)[i]]->name);
	}
	return s;
}

static void
test_small(void)
{
	struct model *m = load("small.onnx");
	struct graph *gr;
	struct graph_value *v;
	struct err e;
	char *topo;

	REQUIRE(m != NULL);
	REQUIRE((gr = graph_new(m->proto->graph, &e)) != NULL);
	CHECK_EQ_INT(graph_nvalues(gr), 10);
	check_value(gr, "x", VALUE_INPUT, "-", 1);
	check_value(gr, "w_in", VALUE_INITIALIZER, "-", 1);
	check_value(gr, "w", VALUE_INITIALIZER, "-", 1);
	check_value(gr, "c", VALUE_CONSTANT, "const", 1);
	check_value(gr, "add", VALUE_NODE, "addb", 2);
	check_value(gr, "y", VALUE_NODE, "relu", 0);
	CHECK(graph_value(gr, "nothing") == NULL);
	v = graph_value(gr, "add");
	REQUIRE(v != NULL && v->nconsumers == 2);
	CHECK_EQ_STR(node_name(gr, v->consumers[0]), "mul");
	CHECK_EQ_STR(node_name(gr, v->consumers[1]), "addz");
	CHECK(v->info == NULL);
	v = graph_value(gr, "y");
	CHECK(v->is_output && v->info != NULL);
	CHECK(!graph_value(gr, "add")->is_output);
	CHECK(graph_value(gr, "c")->init != NULL);
	CHECK(graph_value(gr, "w_in")->init != NULL &&
	    graph_value(gr, "w_in")->info != NULL);
	/* w_in, also a graph input, is a default, not a constant */
	CHECK(graph_value(gr, "w_in")->is_input);
	CHECK(graph_value(gr, "x")->is_input);
	CHECK(!graph_value(gr, "w")->is_input);
	CHECK(graph_constant(gr, "w_in") == NULL);
	CHECK(graph_constant(gr, "x") == NULL);
	CHECK(graph_constant(gr, "add") == NULL);
	CHECK(graph_constant(gr, "w") == graph_value(gr, "w")->init);
	CHECK(graph_constant(gr, "c") == graph_value(gr, "c")->init);
	CHECK(graph_value_at(gr, 0) == graph_value(gr, "x"));
	CHECK(graph_value_at(gr, 10) == NULL);
	CHECK(graph_value_at(gr, -1) == NULL);
	topo = topo_str(gr);
	CHECK_EQ_STR(topo, "const matmul addb mul relu addz");
	free(topo);
	graph_free(gr);
	model_free(m);
}

static void
test_subgraph_reads(void)
{
	struct model *m = load("subgraph.onnx");
	struct graph *gr;
	struct err e;
	char *topo;

	REQUIRE(m != NULL);
	REQUIRE((gr = graph_new(m->proto->graph, &e)) != NULL);
	/* nx is read by the then branch only: one use by "if" */
	check_value(gr, "nx", VALUE_NODE, "pre", 1);
	/* x: "pre", and "if" through the nested else branch */
	check_value(gr, "x", VALUE_INPUT, "-", 2);
	/* cond: If's own input and the nested If's */
	check_value(gr, "cond", VALUE_INPUT, "-", 2);
	/* subgraph-local names are not values of the main graph */
	CHECK(graph_value(gr, "then_y") == NULL);
	CHECK(graph_value(gr, "one") == NULL);
	/* "if" must run after "pre", which it reads through a subgraph */
	topo = topo_str(gr);
	CHECK_EQ_STR(topo, "pre if post");
	free(topo);
	graph_free(gr);
	model_free(m);
}

static void
check_fails(const char *name, const char *msg)
{
	struct model *m = load(name);
	struct err e;

	REQUIRE(m != NULL);
	CHECK(graph_new(m->proto->graph, &e) == NULL);
	CHECK_EQ_STR(e.msg, msg);
	model_free(m);
}

static void
test_errors(void)
{
	check_fails("cycle.onnx", "cycle through node node_a (Add)");
	check_fails("dup-output.onnx", "node n2 (Neg): output a is already "
	    "produced by node n1 (Relu)");
	check_fails("shadow-init.onnx", "node n1 (Relu): output w shadows an "
	    "initializer");
	check_fails("shadow-input.onnx", "node n1 (Relu): output x shadows a "
	    "graph input");
	check_fails("undefined-input.onnx", "node n1 (Add): input nope is not "
	    "produced by any node, input or initializer");
}

static void
test_self_loop(void)
{
	struct model *m = load("small.onnx");
	struct graph *gr;
	struct err e;

	REQUIRE(m != NULL);
	REQUIRE((gr = graph_new(m->proto->graph, &e)) != NULL);
	/* relu (node 0) reading its own output */
	CHECK(graph_rewire_input(gr, 0, 0, "y", &e) == 0);
	CHECK(graph_reindex(gr, &e) == -1);
	CHECK_EQ_STR(e.msg, "cycle through node relu (Relu)");
	CHECK_EQ_INT(graph_nvalues(gr), 0);
	CHECK(graph_value(gr, "x") == NULL);
	CHECK(graph_rewire_input(gr, 0, 0, "mul", &e) == 0);
	CHECK(graph_reindex(gr, &e) == 0);
	CHECK_EQ_INT(graph_nvalues(gr), 10);
	graph_free(gr);
	model_free(m);
}

static void
test_editing(void)
{
	struct model *m = load("small.onnx");
	struct graph *gr;
	struct err e;
	Onnx__NodeProto *n;
	Onnx__TensorProto *tp;
	const char *in[] = { "y", "scale" };
	char *s1, *s2, *out, *topo;

	REQUIRE(m != NULL);
	REQUIRE((gr = graph_new(m->proto->graph, &e)) != NULL);
	s1 = graph_unique_name(gr, "y");
	s2 = graph_unique_name(gr, "y");
	CHECK_EQ_STR(s1, "y_1");
	CHECK_EQ_STR(s2, "y_2");
	free(s2);
	out = graph_unique_name(gr, "fresh");
	CHECK_EQ_STR(out, "fresh");
	/* node names count as used too */
	s2 = graph_unique_name(gr, "relu");
	CHECK_EQ_STR(s2, "relu_1");
	free(s2);

	REQUIRE((tp = malloc(sizeof *tp)) != NULL);
	onnx__tensor_proto__init(tp);
	tp->name = strdup("scale");
	CHECK(graph_add_initializer(gr, tp, &e) == 0);
	REQUIRE((tp = malloc(sizeof *tp)) != NULL);
	onnx__tensor_proto__init(tp);
	tp->name = strdup("w");
	CHECK(graph_add_initializer(gr, tp, &e) == -1);	/* frees tp */
	CHECK_EQ_STR(e.msg, "initializer w: name already in use");

	n = graph_add_node(gr, "Mul", "", "scale_y", in, 2,
	    (const char *const *)&out, 1, &e);
	REQUIRE(n != NULL);
	CHECK_EQ_STR(n->op_type, "Mul");
	CHECK(n->domain == NULL);
	CHECK_EQ_INT(n->n_input, 2);
	CHECK_EQ_STR(n->input[1], "scale");
	CHECK(n->input[0] != in[0]);	/* copied */
	CHECK_EQ_INT(m->proto->graph->n_node, 7);
	/* z now reads the new output */
	CHECK(graph_rewire_input(gr, 5, 1, out, &e) == 0);
	CHECK(graph_rewire_input(gr, 5, 2, out, &e) == -1);
	CHECK_EQ_STR(e.msg, "node #5 has no input 2");
	CHECK(graph_rewire_input(gr, 7, 0, out, &e) == -1);
	REQUIRE(graph_reindex(gr, &e) == 0);
	check_value(gr, "fresh", VALUE_NODE, "scale_y", 1);
	check_value(gr, "scale", VALUE_INITIALIZER, "-", 1);
	check_value(gr, "y", VALUE_NODE, "relu", 1);
	check_value(gr, "w_in", VALUE_INITIALIZER, "-", 0);
	topo = topo_str(gr);
	CHECK_EQ_STR(topo, "const matmul addb mul relu scale_y addz");
	free(topo);
	free(s1);
	free(out);
	graph_free(gr);
	model_free(m);
}

/* graph_constant_read/_scalar, graph_is_op, graph_drop_unread */
static void
test_constants(void)
{
	struct model *m = load("small.onnx");
	Onnx__GraphProto *g;
	struct graph *gr;
	struct strmap *names;
	struct tensor t = { 0 };
	struct err e;
	Onnx__NodeProto *n;
	double v;

	REQUIRE(m != NULL);
	g = m->proto->graph;
	REQUIRE((gr = graph_new(g, &e)) != NULL);
	CHECK(graph_constant_read(gr, m, "c", &t, &e) == 0 && t.nelem == 4 &&
	    tensor_get(&t, 3) == 4);
	tensor_release(&t);
	CHECK(graph_constant_read(gr, m, "w_in", &t, &e) == -1);
	CHECK_EQ_STR(e.msg, "w_in is not a constant");
	CHECK_EQ_INT(graph_constant_scalar(gr, m, "b", &v), -1); /* 4 */
	n = g->node[0];		/* relu */
	CHECK(graph_is_op(n, "Relu") && !graph_is_op(n, "Mul"));
	free(n->domain);
	n->domain = strdup("com.microsoft");
	CHECK(!graph_is_op(n, "Relu"));
	free(n->op_type);
	n->op_type = strdup("QuantizeLinear");
	CHECK(graph_is_op(n, "QuantizeLinear"));
	free(n->domain);
	n->domain = strdup("ai.onnx");
	CHECK(graph_is_op(n, "QuantizeLinear"));
	/* mm now reads b in w's place: w unread goes, w_in (an input) stays */
	REQUIRE(graph_rewire_input(gr, 3, 1, "b", &e) == 0);
	REQUIRE(graph_rewire_input(gr, 5, 1, "b", &e) == 0);
	REQUIRE(graph_reindex(gr, &e) == 0);
	REQUIRE((names = strmap_new()) != NULL);
	REQUIRE(strmap_put(names, "w", 1) == 0 &&
	    strmap_put(names, "w_in", 1) == 0 &&
	    strmap_put(names, "b", 1) == 0);
	graph_drop_unread(gr, names);
	CHECK_EQ_INT(g->n_initializer, 2);
	CHECK_EQ_STR(g->initializer[0]->name, "b");
	CHECK_EQ_STR(g->initializer[1]->name, "w_in");
	CHECK_EQ_INT(g->n_input, 2);
	strmap_free(names);
	graph_free(gr);
	model_free(m);
}

UNIT_MAIN(test_small, test_subgraph_reads, test_errors, test_self_loop,
    test_editing, test_constants)
