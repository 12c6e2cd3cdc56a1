/*
 * nameuses_test: lib/nameuses.c on a hand-made graph: each name's uses
 * (node, slot) in node then slot order, a name read twice by one node
 * listed twice, empty inputs and unknown names without uses.
 */
#include <string.h>

#include "nameuses.h"
#include "unit.h"

static void
test_uses(void)
{
	char *in0[] = { "x", "w" }, *in1[] = { "a", "", "a", "w" };
	char *in2[] = { "w" };
	Onnx__NodeProto n[3] = { ONNX__NODE_PROTO__INIT,
	    ONNX__NODE_PROTO__INIT, ONNX__NODE_PROTO__INIT };
	Onnx__NodeProto *nodes[3] = { &n[0], &n[1], &n[2] };
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	const struct name_use *u;
	struct nameuses *x;
	struct err e;
	size_t k;

	n[0].input = in0;
	n[0].n_input = 2;
	n[1].input = in1;
	n[1].n_input = 4;
	n[2].input = in2;
	n[2].n_input = 1;
	g.node = nodes;
	g.n_node = 3;
	REQUIRE((x = nameuses_new(&g, &e)) != NULL);
	u = nameuses_of(x, "w", &k);
	REQUIRE(k == 3 && u != NULL);
	CHECK(u[0].node == 0 && u[0].slot == 1);
	CHECK(u[1].node == 1 && u[1].slot == 3);
	CHECK(u[2].node == 2 && u[2].slot == 0);
	u = nameuses_of(x, "a", &k);
	REQUIRE(k == 2 && u != NULL);
	CHECK(u[0].node == 1 && u[0].slot == 0);
	CHECK(u[1].node == 1 && u[1].slot == 2);
	u = nameuses_of(x, "x", &k);
	CHECK(k == 1 && u != NULL && u[0].node == 0 && u[0].slot == 0);
	CHECK(nameuses_of(x, "", &k) == NULL && k == 0);
	CHECK(nameuses_of(x, "y", &k) == NULL && k == 0);
	nameuses_free(x);
}

UNIT_MAIN(test_uses)
