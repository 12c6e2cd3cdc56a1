/*
 * config_test: the YAML recipe parser. Good files load with every value
 * where it belongs; bad files report every problem (not only the first),
 * each with FILE:LINE:COL and the key; validation against a stream
 * (a fake one here) catches what needs the stream. Reads the fixtures in
 * test/data/config/ (run from the top of the source tree).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "qparams.h"
#include "rangesel.h"
#include "unit.h"

#define DIR "test/data/config/"

/* All messages joined with newlines (malloc'd). */
static char *
joined(const struct config_msgs *m)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < m->n; i++)
		len += strlen(m->v[i]) + 1;
	s = malloc(len);
	*s = '\0';
	for (size_t i = 0; i < m->n; i++) {
		strcat(s, m->v[i]);
		strcat(s, "\n");
	}
	return s;
}

static void
check_fails(const char *path, const char *want, const char *want_err)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };
	struct config *c = config_load(path, &m, &e);
	char *got = joined(&m);

	CHECK(c == NULL);
	CHECK_EQ_STR(got, want);
	CHECK_EQ_STR(e.msg, want_err);
	free(got);
	config_free(c);
	config_msgs_release(&m);
}

static void
test_bad_many(void)
{
	check_fails(DIR "bad-many.yaml",
	    DIR "bad-many.yaml:2:9: activations: type: unknown type 'uint7' "
	    "(uint8, int8, uint16, int16, uint4, int4)\n"
	    DIR "bad-many.yaml:3:11: activations: method: unknown method 'kl' "
	    "(minmax, entropy, percentile, distribution, mse)\n"
	    DIR "bad-many.yaml:4:14: activations: symmetric: 'maybe' is not "
	    "true or false\n"
	    DIR "bad-many.yaml:6:3: weights: unknown setting 'method' (weights "
	    "are quantized over their min and max)\n"
	    DIR "bad-many.yaml:7:1: unknown setting 'colour'\n"
	    DIR "bad-many.yaml:12:5: tensor a: symmetric: conflicts with scale "
	    "and zero_point\n"
	    DIR "bad-many.yaml:16:5: tensor b: zero_point: 200 does not fit "
	    "int8 (-128..127)\n"
	    DIR "bad-many.yaml:18:5: tensor c: scale: needs zero_point as well\n"
	    DIR "bad-many.yaml:20:5: tensor d: rmin: 2 is above rmax 1\n"
	    DIR "bad-many.yaml:22:5: tensor d: duplicate key 'rmin'\n"
	    DIR "bad-many.yaml:25:7: tensor e: convert: needs quant_type\n"
	    DIR "bad-many.yaml:29:7: tensor f: convert: quant_type: uint16 is "
	    "the tensor's own quant_type\n"
	    DIR "bad-many.yaml:30:7: tensor f: convert: reduce_range: not "
	    "allowed in convert (ORT refuses it too)\n"
	    DIR "bad-many.yaml:33:8: tensor g: channel 1: quant_type: differs "
	    "from channel 0 (all channels share it)\n"
	    DIR "bad-many.yaml:34:7: tensor g: channel 2: scale missing "
	    "(channel 0 has it)\n"
	    DIR "bad-many.yaml:36:5: tensor h: unknown key 'zoom'\n"
	    DIR "bad-many.yaml:38:17: tensor h: percentile: 150 is not in "
	    "(0, 100]\n"
	    DIR "bad-many.yaml:41:17: tensor i: zero_point: 3 values, but "
	    "scale has 2\n"
	    DIR "bad-many.yaml:43:5: tensor j: scale: -1 is not a positive "
	    "normal float32\n"
	    DIR "bad-many.yaml:45:3: tensors: k: anchors and aliases are not "
	    "supported\n"
	    DIR "bad-many.yaml:48:5: tensor l: percentile: needs method "
	    "percentile, not minmax\n"
	    DIR "bad-many.yaml:49:6: tensor m: expected a mapping of overrides "
	    "(or ORT's list of them), not a value\n",
	    DIR "bad-many.yaml: 22 errors");
}

static void
test_bad_syntax(void)
{
	check_fails(DIR "bad-syntax.yaml",
	    DIR "bad-syntax.yaml:3:10: mapping values are not allowed in this "
	    "context\n",
	    DIR "bad-syntax.yaml:3:10: mapping values are not allowed in this "
	    "context");
	check_fails(DIR "bad-two-docs.yaml",
	    DIR "bad-two-docs.yaml:3:1: only one YAML document is allowed\n",
	    DIR "bad-two-docs.yaml:3:1: only one YAML document is allowed");
}

static void
test_missing_file(void)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };

	CHECK(config_load(DIR "no-such.yaml", &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, DIR "no-such.yaml: No such file or directory");
	CHECK_EQ_INT(m.n, 0);
	CHECK(config_load(DIR, &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, DIR ": is a directory");
}

static void
test_good_recipe(void)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };
	struct config *c = config_load(DIR "good-recipe.yaml", &m, &e);
	const struct config_tensor *t;
	const struct settings *g;

	CHECK_EQ_STR(e.msg, "");
	CHECK_EQ_INT(m.n, 0);
	REQUIRE(c != NULL);
	g = &c->g;
	CHECK_EQ_INT(g->act_type, DT_UINT8);
	CHECK_EQ_INT(g->method, RANGESEL_ENTROPY);
	CHECK_EQ_INT(g->entropy_bins, 4096);
	CHECK_NEAR(g->percentile, 99.99, 0);
	CHECK_EQ_INT(g->w_type, DT_INT8);
	CHECK(g->w_symmetric == 1 && g->per_channel == 1 && g->w_pow2 == 1);
	CHECK(g->bias_adjust == 0 && (g->set & (1u << CG_BIAS_ADJUST)));
	CHECK_NEAR(g->min_real_range, 0.0001, 0);
	CHECK(g->set & (1u << CG_MOVING_AVERAGE));
	CHECK(!(g->set & (1u << CG_ACT_REDUCE_RANGE)));
	CHECK_EQ_INT(g->pos[CG_METHOD].line, 6);
	CHECK_EQ_INT(c->nodes_include.n, 2);
	CHECK_EQ_STR(c->nodes_include.v[1], "conv2");
	CHECK_EQ_INT(c->nodes_exclude.n, 1);
	CHECK_EQ_STR(c->nodes_exclude.v[0], "head");
	CHECK_EQ_INT(c->ops_include.n, 2);
	CHECK_EQ_STR(c->ops_include.v[1], "MatMul");
	CHECK_EQ_STR(c->ops_exclude.v[0], "Softmax");
	CHECK_EQ_INT(c->nt, 6);

	REQUIRE((t = config_find(c, "relu1_out")) != NULL);
	CHECK_EQ_INT(t->spec.quant_type, DT_UINT16);
	CHECK(t->spec.rmin[0] == 0 && t->spec.rmax[0] == 6);
	CHECK(!t->spec.per_channel && t->spec.n == 1);
	CHECK_EQ_INT(t->pos.line, 31);

	REQUIRE((t = config_find(c, "sig_out")) != NULL);
	CHECK(t->spec.scale[0] == 0.0000152587890625f);
	CHECK(t->spec.zero_point[0] == 0);

	REQUIRE((t = config_find(c, "logits")) != NULL);
	CHECK_EQ_INT(t->spec.method, RANGESEL_PERCENTILE);
	CHECK_NEAR(t->spec.percentile, 99.9, 0);

	REQUIRE((t = config_find(c, "conv1.weight")) != NULL);
	CHECK(t->spec.per_channel && t->spec.n == 3 && t->spec.axis == 0);
	CHECK(t->spec.scale[0] == 0.01f && t->spec.scale[2] == 0.03f);
	CHECK(t->spec.zero_point[0] == 0 && t->spec.zero_point[2] == 0);

	REQUIRE((t = config_find(c, "conv2.weight")) != NULL);
	CHECK(t->spec.per_channel && t->spec.n == 2);
	CHECK_EQ_INT(t->spec.quant_type, DT_INT8);
	CHECK(t->spec.scale[0] == 0.5f && t->spec.scale[1] == 0.25f);
	CHECK(t->spec.zero_point[0] == -1 && t->spec.zero_point[1] == 2);

	REQUIRE((t = config_find(c, "add0_out")) != NULL);
	CHECK(t->has_convert);
	CHECK_EQ_INT(t->convert.quant_type, DT_UINT16);
	CHECK_EQ_INT(t->nrecv, 1);
	CHECK_EQ_STR(t->recv_nodes[0], "add1");
	CHECK(config_find(c, "nope") == NULL);
	config_free(c);
}

static void
test_good_small(void)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };
	struct config *c = config_load(DIR "good-empty.yaml", &m, &e);
	const struct config_tensor *t;

	REQUIRE(c != NULL);
	CHECK(c->nt == 0 && c->g.set == 0 && c->g.bias_adjust == 1);
	config_free(c);
	/* ORT's mixed-precision example: the list form, ORT type names. */
	c = config_load(DIR "good-ort-mixed.yaml", &m, &e);
	CHECK_EQ_STR(e.msg, "");
	REQUIRE(c != NULL);
	CHECK_EQ_INT(c->nt, 4);
	REQUIRE((t = config_find(c, "Op5_out")) != NULL);
	CHECK_EQ_INT(t->spec.quant_type, DT_UINT16);
	CHECK(t->has_convert && t->convert.quant_type == DT_UINT8);
	CHECK(t->nrecv == 1 && strcmp(t->recv_nodes[0], "Op6") == 0);
	REQUIRE((t = config_find(c, "Op4_out")) != NULL);
	CHECK(!t->has_convert && !t->spec.per_channel);
	config_free(c);
	config_msgs_release(&m);
}

static struct config *
load_str(const char *text, struct config_msgs *m, struct err *e)
{
	return config_load_mem("mem", text, strlen(text), m, e);
}

static void
test_mem_cases(void)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };
	struct config *c;

	/* A top level that is not a mapping. */
	CHECK(load_str("- a\n- b\n", &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:1:1: a recipe is a mapping of settings, "
	    "not a list");
	config_msgs_release(&m);
	/* Version. */
	CHECK(load_str("version: 2\n", &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:1:10: version: version 2 is not supported "
	    "(this reads 1)");
	config_msgs_release(&m);
	/* Empty values and non-numbers. */
	CHECK(load_str("min_real_range:\nactivations: {entropy_bins: 8}\n"
	    "tensors: {x: {rmin: 1e999, axis: 1.5}}\n", &m, &e) == NULL);
	REQUIRE(m.n == 4);
	CHECK_EQ_STR(m.v[0], "mem:1:16: min_real_range: needs a value");
	CHECK_EQ_STR(m.v[1], "mem:2:29: activations: entropy_bins: 8 is not "
	    "in 16..65536");
	CHECK_EQ_STR(m.v[2], "mem:3:21: tensor x: rmin: '1e999' is not a "
	    "finite number");
	CHECK_EQ_STR(m.v[3], "mem:3:34: tensor x: axis: '1.5' is not an "
	    "integer");
	config_msgs_release(&m);
	/* A name with a newline stays on one line. */
	CHECK(load_str("tensors: {\"a\\nb\": {zoom: 1}}\n", &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:1:20: tensor a%0Ab: unknown key 'zoom'");
	config_msgs_release(&m);
	/* recv_nodes outside convert, reduce_range allowed on tensors. */
	c = load_str("tensors: {x: {reduce_range: true, symmetric: yes}}\n",
	    &m, &e);
	REQUIRE(c != NULL);
	CHECK(config_find(c, "x")->spec.reduce_range == 1);
	config_free(c);
	CHECK(load_str("tensors: {x: {recv_nodes: [a]}}\n", &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:1:15: tensor x: recv_nodes: belongs in "
	    "convert");
	config_msgs_release(&m);
	/* A min_real_range whose symmetric range overflows float32. */
	CHECK(load_str("min_real_range: 3e38\n", &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:1:17: min_real_range: 3e+38 is not in "
	    "0..1.70141e+38");
	config_msgs_release(&m);
	c = load_str("min_real_range: 1.7e38\n", &m, &e);
	REQUIRE(c != NULL);
	CHECK_NEAR(c->g.min_real_range, 1.7e38, 1e30);
	config_free(c);
	/* A refused value is the one problem: its partner is not short of
	 * it, nor convert of its quant_type, nor a channel of a key. */
	CHECK(load_str("tensors:\n  x: {scale: 0.5, zero_point: "
	    "99999999999999999999}\n  y: {scale: -, zero_point: 3}\n"
	    "  z: {convert: {quant_type: uint9}}\n"
	    "  w: [{scale: 1, zero_point: 0}, {scale: 1, zero_point: a}]\n"
	    "  v: [{scale: 1, zero_point: b}, {scale: 1, zero_point: 0}]\n",
	    &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem: 5 errors");
	REQUIRE(m.n == 5);
	CHECK_EQ_STR(m.v[0], "mem:2:31: tensor x: zero_point: "
	    "99999999999999999999 is out of range");
	CHECK_EQ_STR(m.v[1], "mem:3:14: tensor y: scale: '-' is not a finite "
	    "number");
	CHECK_EQ_STR(m.v[2], "mem:4:29: tensor z: convert: quant_type: "
	    "unknown type 'uint9' (uint8, int8, uint16, int16, uint4, int4)");
	CHECK_EQ_STR(m.v[3], "mem:5:57: tensor w: channel 1: zero_point: 'a' "
	    "is not an integer");
	CHECK_EQ_STR(m.v[4], "mem:6:30: tensor v: channel 0: zero_point: 'b' "
	    "is not an integer");
	config_msgs_release(&m);
	/* A per-channel tensor cannot convert. */
	CHECK(load_str("tensors:\n  w:\n    scale: [1, 2]\n    zero_point: 0\n"
	    "    convert: {quant_type: uint16}\n", &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:5:5: tensor w: convert: a per-channel tensor "
	    "cannot convert to another type");
	config_msgs_release(&m);
}

static void
test_many_messages(void)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };
	size_t cap = 1300 * 40, len = 0;
	char *text = malloc(cap);

	len += (size_t)sprintf(text + len, "tensors:\n");
	for (int i = 0; i < 1200; i++)
		len += (size_t)sprintf(text + len, "  t%d: {zoom: 1}\n", i);
	CHECK(config_load_mem("big", text, len, &m, &e) == NULL);
	CHECK_EQ_INT(m.n, CONFIG_MAX_MSGS);
	CHECK_EQ_INT(m.dropped, 200);
	CHECK_EQ_STR(e.msg, "big: 1200 errors");
	CHECK_EQ_STR(m.v[999], "big:1001:10: tensor t999: unknown key 'zoom'");
	config_msgs_release(&m);
	/* Nested aliases cannot blow up: each reuse is refused. */
	len = (size_t)sprintf(text, "a: &a [x, x]\nb: &b [*a, *a]\n"
	    "c: &c [*b, *b]\ntensors: {t: {scale: *c}}\n");
	CHECK(config_load_mem("bomb", text, len, &m, &e) == NULL);
	CHECK(m.n >= 1);
	free(text);
	config_msgs_release(&m);
}

/* A fake stream for config_validate. */
static void
world_tensor(void *arg, const char *name, struct config_target *t)
{
	(void)arg;
	t->kind = CONFIG_UNKNOWN;
	if (strncmp(name, "act", 3) == 0)
		t->kind = CONFIG_ACTIVATION;
	if (strcmp(name, "w4") == 0) {
		t->kind = CONFIG_WEIGHT;
		t->rank = 4;
		t->dims[0] = 8;
		t->dims[1] = t->dims[2] = t->dims[3] = 3;
		t->axis = 0;
	}
	if (strcmp(name, "w8") == 0 || strcmp(name, "w9") == 0) {
		t->kind = CONFIG_WEIGHT;
		t->rank = 2;
		t->dims[0] = 4;
		t->dims[1] = 5;
		t->axis = 1;
	}
}

static int
world_node(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "other") == 0;
}

static int
world_consumes(void *arg, const char *node, const char *tensor)
{
	(void)arg;
	(void)node;
	(void)tensor;
	return 0;
}

/* A recipe whose recv_nodes are n lists deep (malloc'd; length in *len). */
static char *
deep_recv(int n, size_t *len)
{
	char *text = malloc(200 + 2 * (size_t)n);
	size_t k = (size_t)sprintf(text, "tensors:\n  x:\n    convert:\n"
	    "      quant_type: uint16\n      recv_nodes: ");

	for (int i = 0; i < n; i++)
		text[k++] = '[';
	text[k++] = 'a';
	for (int i = 0; i < n; i++)
		text[k++] = ']';
	text[k++] = '\n';
	*len = k;
	return text;
}

/* Nesting past 64 levels: one message, before anything is loaded. */
static void
test_deep(void)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };
	size_t len;
	char *text;

	/* 64 levels: read, and refused for what they say. */
	text = deep_recv(60, &len);
	CHECK(config_load_mem("mem", text, len, &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:5:20: tensor x: convert: recv_nodes[0]: "
	    "expected a value, not a list");
	config_msgs_release(&m);
	free(text);
	text = deep_recv(61, &len);
	CHECK(config_load_mem("mem", text, len, &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:5:79: nesting deeper than 64 levels");
	CHECK_EQ_INT(m.n, 1);
	config_msgs_release(&m);
	free(text);
	/* Mappings, 20000 deep, as quickly. */
	text = malloc(4 * 20000 + 1);
	len = 0;
	for (int i = 0; i < 20000; i++)
		len += (size_t)sprintf(text + len, "{a: ");
	CHECK(config_load_mem("mem", text, len, &m, &e) == NULL);
	CHECK_EQ_STR(e.msg, "mem:1:257: nesting deeper than 64 levels");
	config_msgs_release(&m);
	free(text);
}

static void
test_validate(void)
{
	struct config_msgs m = { 0 };
	struct err e = { "" };
	struct config *c = config_load(DIR "validate.yaml", &m, &e);
	struct config_world w = { NULL, world_tensor, world_node,
	    world_consumes, DT_UINT8, DT_INT8 };
	char *got;

	CHECK_EQ_STR(e.msg, "");
	REQUIRE(c != NULL);
	CHECK_EQ_INT(config_validate(c, &w, &m), 11);
	got = joined(&m);
	CHECK_EQ_STR(got,
	    DIR "validate.yaml:3:3: tensor nosuch: not in the stream\n"
	    DIR "validate.yaml:6:5: tensor act: per-channel values need a "
	    "weight; this is an activation\n"
	    DIR "validate.yaml:10:5: tensor act2: zero_point: 300 does not fit "
	    "uint8 (0..255), the default type\n"
	    DIR "validate.yaml:12:5: tensor w4: 3 channel values for 8 channels "
	    "along axis 0\n"
	    DIR "validate.yaml:15:5: tensor w8: method: weights are quantized "
	    "over their exact min and max\n"
	    DIR "validate.yaml:16:5: tensor w8: convert: applies to activations "
	    "only; this is a weight\n"
	    DIR "validate.yaml:18:5: tensor w9: axis: 4 is out of range for "
	    "rank 2\n"
	    DIR "validate.yaml:21:7: tensor act3: convert: quant_type: uint8 is "
	    "the tensor's own type\n"
	    DIR "validate.yaml:22:20: tensor act3: convert: recv_nodes: node "
	    "nowhere is not in the stream\n"
	    DIR "validate.yaml:22:29: tensor act3: convert: recv_nodes: node "
	    "other does not read act3\n"
	    DIR "validate.yaml:24:13: nodes: exclude: node ghost is not in the "
	    "stream\n");
	free(got);
	config_free(c);
	config_msgs_release(&m);
}

UNIT_MAIN(test_bad_many, test_bad_syntax, test_missing_file, test_good_recipe,
    test_good_small, test_mem_cases, test_many_messages, test_deep, test_validate)
