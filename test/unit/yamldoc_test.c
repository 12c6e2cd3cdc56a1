/*
 * yamldoc_test: reading YAML the toolchain's way. A document opens,
 * walks and closes; each node is taken once (aliases refused); mappings
 * report duplicate and non-name keys; a second document and malformed
 * YAML are one message each, FILE:LINE:COL. Nesting: 64 levels load, 65
 * are refused before loading, quickly however deep the file goes.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "yamldoc.h"

/* Open text as "t.yaml" into *y, messages into *m. */
static int
open_text(struct config_yaml *y, struct config_msgs *m, const char *text)
{
	memset(y, 0, sizeof *y);
	y->name = "t.yaml";
	y->msgs = m;
	return config_yaml_open(y, text, strlen(text));
}

struct seen {
	char keys[64];
	int flag;
	struct config_list names;
	int names_rc;
};

static void
pair(struct config_yaml *y, void *arg, const char *ks,
    const yaml_node_t *kn, const yaml_node_t *v, const char *ctx)
{
	struct seen *s = arg;

	(void)kn;
	(void)ctx;
	strcat(s->keys, ks);
	if (strcmp(ks, "flag") == 0)
		config_yaml_bool(y, v, ks, &s->flag);
	else if (strcmp(ks, "names") == 0)
		s->names_rc = config_yaml_strlist(y, v, ks, &s->names);
	else
		config_yaml_scalar(y, v, ks);
}

static void
test_walk(void)
{
	struct config_yaml y;
	struct config_msgs m = { 0 };
	struct seen s = { "", -1, { 0 }, 0 };
	yaml_node_t *root;

	REQUIRE(open_text(&y, &m, "a: 1\nflag: Yes\nb: x\n") == 0);
	root = config_yaml_take(&y, 1, "", NULL);
	REQUIRE(root != NULL);
	CHECK_EQ_STR(config_yaml_kind(root), "a mapping");
	config_yaml_each_pair(&y, root, "", pair, &s);
	config_yaml_one_doc(&y);
	config_yaml_close(&y);
	CHECK_EQ_STR(s.keys, "aflagb");
	CHECK_EQ_INT(s.flag, 1);
	CHECK_EQ_INT(y.nerr, 0);
	CHECK_EQ_INT(m.n, 0);
	CHECK(y.doc == NULL && y.seen == NULL && y.parser == NULL);
}

static void
test_problems(void)
{
	struct config_yaml y;
	struct config_msgs m = { 0 };
	struct seen s = { "", -1, { 0 }, 0 };
	struct config_list *l = &s.names;
	yaml_node_t *root;

	REQUIRE(open_text(&y, &m, "a: &A x\nb: *A\na: 2\n[k]: 1\nflag: "
	    "maybe\nc: ''\nd:\nnames: [p, [q], r]\n---\nz: 1\n") == 0);
	root = config_yaml_take(&y, 1, "", NULL);
	REQUIRE(root != NULL);
	config_yaml_each_pair(&y, root, "", pair, &s);
	config_yaml_one_doc(&y);
	config_yaml_close(&y);
	REQUIRE(m.n == 7);
	CHECK_EQ_STR(m.v[0], "t.yaml:2:1: b: anchors and aliases are not "
	    "supported");
	CHECK_EQ_STR(m.v[1], "t.yaml:3:1: duplicate key 'a'");
	CHECK_EQ_STR(m.v[2], "t.yaml:4:1: keys must be names, not a list");
	CHECK_EQ_STR(m.v[3], "t.yaml:5:7: flag: 'maybe' is not true or "
	    "false");
	CHECK_EQ_STR(m.v[4], "t.yaml:7:3: d: needs a value");
	CHECK_EQ_STR(m.v[5], "t.yaml:8:12: names[1]: expected a value, not "
	    "a list");
	CHECK_EQ_STR(m.v[6], "t.yaml:10:1: only one YAML document is "
	    "allowed");
	CHECK_EQ_INT(y.nerr, 7);
	/* The good names kept. */
	CHECK_EQ_INT(s.names_rc, -1);
	REQUIRE(l->n == 2);
	CHECK_EQ_STR(l->v[0], "p");
	CHECK_EQ_STR(l->v[1], "r");
	CHECK_EQ_INT(l->pos[1].line, 8);
	CHECK_EQ_INT(l->pos[1].col, 17);
	config_list_release(l);
	config_msgs_release(&m);
}

static void
test_malformed(void)
{
	struct config_yaml y;
	struct config_msgs m = { 0 };

	CHECK_EQ_INT(open_text(&y, &m, "a: [1, 2\n"), -1);
	config_yaml_close(&y);
	CHECK_EQ_INT(y.nerr, 1);
	REQUIRE(m.n == 1);
	CHECK_EQ_STR(m.v[0], "t.yaml:2:1: while parsing a flow sequence: "
	    "did not find expected ',' or ']'");
	config_msgs_release(&m);
	/* An empty text is a document without a root. */
	REQUIRE(open_text(&y, &m, "") == 0);
	CHECK(yaml_document_get_root_node(y.doc) == NULL);
	config_yaml_close(&y);
	CHECK_EQ_INT(m.n, 0);
}

/* Open text and close it again: what config_yaml_open returned. */
static int
open_close(const char *text, struct config_msgs *m)
{
	struct config_yaml y;
	int rc = open_text(&y, m, text);

	config_yaml_close(&y);
	return rc;
}

/* open_close of n times open, a value, then n times close. */
static int
open_nested(size_t n, const char *open, const char *close,
    struct config_msgs *m)
{
	size_t lo = strlen(open), lc = strlen(close);
	char *s = malloc(n * (lo + lc) + 2), *p = s;
	int rc;

	for (size_t i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	*p++ = '1';
	for (size_t i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	rc = open_close(s, m);
	free(s);
	return rc;
}

static void
test_depth(void)
{
	struct config_msgs m = { 0 };

	/* 64 levels load, 65 do not: lists, mappings, both. */
	CHECK_EQ_INT(open_nested(64, "[", "]", &m), 0);
	CHECK_EQ_INT(open_nested(65, "[", "]", &m), -1);
	CHECK_EQ_INT(open_nested(32, "{a: [", "]}", &m), 0);
	CHECK_EQ_INT(open_nested(33, "{a: [", "]}", &m), -1);
	REQUIRE(m.n == 2);
	CHECK_EQ_STR(m.v[0], "t.yaml:1:65: nesting deeper than 64 levels");
	CHECK_EQ_STR(m.v[1], "t.yaml:1:161: nesting deeper than 64 levels");
	config_msgs_release(&m);
	/* Block style counts the same; so does a second document. */
	CHECK_EQ_INT(open_nested(65, "- ", "", &m), -1);
	CHECK_EQ_INT(open_close("a: 1\n---\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n", &m), -1);
	REQUIRE(m.n == 2);
	CHECK_EQ_STR(m.v[0], "t.yaml:1:129: nesting deeper than 64 levels");
	CHECK_EQ_STR(m.v[1], "t.yaml:3:65: nesting deeper than 64 levels");
	config_msgs_release(&m);
	/* Malformed YAML is the loader's to report, once. */
	CHECK_EQ_INT(open_close("[[[\n", &m), -1);
	REQUIRE(m.n == 1);
	CHECK_EQ_STR(m.v[0], "t.yaml:2:1: while parsing a flow node: did not "
	    "find expected node content");
	config_msgs_release(&m);
}

/* A million '[' (libyaml's loader: about an hour) is refused at once. */
static void
test_depth_fast(void)
{
	struct config_msgs m = { 0 };
	struct timespec t0, t1;
	size_t n = 1000000;
	char *s = malloc(n + 1);

	memset(s, '[', n);
	s[n] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ_INT(open_close(s, &m), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) *
	    1e-9 < 0.5);
	REQUIRE(m.n == 1);
	CHECK_EQ_STR(m.v[0], "t.yaml:1:65: nesting deeper than 64 levels");
	free(s);
	config_msgs_release(&m);
}

UNIT_MAIN(test_walk, test_problems, test_malformed, test_depth,
    test_depth_fast)
