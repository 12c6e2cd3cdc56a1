/*
 * regions_test: REGIONS.yaml files (onnxq-regions(5)) read from memory:
 * what a good one gives, and every problem of a bad one reported with
 * its position. Needs nothing but libonnxq.
 */
#include <string.h>

#include "regions.h"
#include "tensor.h"
#include "unit.h"

static struct mixprec_regions *
load(const char *text, struct config_msgs *m, struct err *e)
{
	memset(m, 0, sizeof *m);
	return mixprec_regions_load_mem("r.yaml", text, strlen(text), m, e);
}

static void
test_good(void)
{
	struct config_msgs m;
	struct mixprec_regions *rg;
	struct err e;

	rg = load("version: 1\nregions:\n"
	    "  - name: head\n    nodes: [a, b]\n    type: uint16\n"
	    "    symmetric: true\n"
	    "  - tensors: t\n    op_types: [Softmax]\n    type: float\n",
	    &m, &e);
	REQUIRE(rg != NULL);
	CHECK_EQ_INT(m.n, 0);
	CHECK_EQ_STR(rg->path, "r.yaml");
	REQUIRE(rg->n == 2);
	CHECK_EQ_STR(rg->v[0].label, "region 1 (head)");
	CHECK_EQ_INT(rg->v[0].line, 3);
	CHECK_EQ_INT(rg->v[0].col, 5);
	CHECK_EQ_INT(rg->v[0].t.type, DT_UINT16);
	CHECK_EQ_INT(rg->v[0].t.symmetric, 1);
	CHECK_EQ_INT(rg->v[0].t.reduce_range, -1);
	CHECK_EQ_INT(rg->v[0].t.pow2, -1);
	REQUIRE(rg->v[0].nodes.n == 2);
	CHECK_EQ_STR(rg->v[0].nodes.v[1], "b");
	CHECK_EQ_STR(rg->v[1].label, "region 2");
	CHECK_EQ_INT(rg->v[1].t.type, DT_FLOAT);
	REQUIRE(rg->v[1].tensors.n == 1);
	CHECK_EQ_STR(rg->v[1].tensors.v[0], "t");
	REQUIRE(rg->v[1].ops.n == 1);
	CHECK_EQ_STR(rg->v[1].ops.v[0], "Softmax");
	mixprec_regions_free(rg);
	config_msgs_release(&m);
}

static void
test_bad(void)
{
	struct config_msgs m;
	struct err e;

	CHECK(load("regions:\n  - nodes: [a]\n    type: uint9\n"
	    "  - foo: 1\n    type: float\n    symmetric: true\n",
	    &m, &e) == NULL);
	REQUIRE(m.n == 4);
	CHECK_EQ_STR(m.v[0], "r.yaml:3:11: region 1: type: unknown type "
	    "'uint9' (uint8, int8, uint16, int16, uint4, int4, float)");
	CHECK(strncmp(m.v[1], "r.yaml:4:5: region 2: unknown key 'foo'",
	    39) == 0);
	CHECK_EQ_STR(m.v[2], "r.yaml:4:5: region 2: names no nodes, tensors "
	    "or op_types");
	CHECK_EQ_STR(m.v[3], "r.yaml:4:5: region 2: a float region takes no "
	    "symmetric, reduce_range or power_of_two");
	CHECK_EQ_STR(e.msg, "r.yaml: 4 errors");
	config_msgs_release(&m);

	CHECK(load("", &m, &e) == NULL);
	CHECK(strstr(e.msg, "no regions (the file is empty)") != NULL);
	config_msgs_release(&m);
}

UNIT_MAIN(test_good, test_bad)
