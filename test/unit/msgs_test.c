/*
 * msgs_test: the message list. Messages read FILE:LINE:COL: CTX: MSG
 * (without the position or the context when there is none), stay on one
 * line, sort by position, and stop at CONFIG_MAX_MSGS with the rest
 * counted.
 */
#include <stdlib.h>
#include <string.h>

#include "msgs.h"
#include "unit.h"

static void
test_formats(void)
{
	struct config_msgs m = { 0 };
	struct config_pos at = { 3, 7 }, none = { 0, 0 };

	CHECK_EQ_INT(config_msgs_addf(&m, "f.yaml", at, "tensor x",
	    "bad %d", 1), 0);
	CHECK_EQ_INT(config_msgs_addf(&m, "f.yaml", at, "", "bad"), 0);
	CHECK_EQ_INT(config_msgs_addf(&m, "f.yaml", none, NULL, "bad"), 0);
	CHECK_EQ_INT(config_msgs_addf(&m, "f.yaml", none, "k", "a\nb"), 0);
	REQUIRE(m.n == 4);
	CHECK_EQ_STR(m.v[0], "f.yaml:3:7: tensor x: bad 1");
	CHECK_EQ_STR(m.v[1], "f.yaml:3:7: bad");
	CHECK_EQ_STR(m.v[2], "f.yaml: bad");
	CHECK_EQ_STR(m.v[3], "f.yaml: k: a%0Ab");
	config_msgs_release(&m);
	CHECK(m.v == NULL && m.n == 0);
}

static void
test_sort(void)
{
	struct config_msgs m = { 0 };
	static const struct config_pos p[] = { { 9, 1 }, { 2, 5 }, { 0, 0 },
	    { 2, 3 }, { 9, 1 } };
	static const char *const want[] = { "f: a", "f:2:3: b", "f:2:5: b",
	    "f:9:1: a", "f:9:1: c" };

	config_msgs_add(&m, strdup("first, not sorted"));
	for (size_t i = 0; i < 5; i++)
		config_msgs_addf(&m, "f", p[i], "", "%s", i == 4 ? "c" :
		    i == 2 || i == 0 ? "a" : "b");
	config_msgs_sort(&m, 1, "f");
	REQUIRE(m.n == 6);
	CHECK_EQ_STR(m.v[0], "first, not sorted");
	for (size_t i = 0; i < 5; i++)
		CHECK_EQ_STR(m.v[i + 1], want[i]);
	config_msgs_release(&m);
}

static void
test_limit(void)
{
	struct config_msgs m = { 0 };

	for (int i = 0; i < CONFIG_MAX_MSGS + 5; i++)
		CHECK_EQ_INT(config_msgs_add(&m, strdup("x")), 0);
	CHECK_EQ_INT(m.n, CONFIG_MAX_MSGS);
	CHECK_EQ_INT(m.dropped, 5);
	/* NULL is how a failed malloc arrives. */
	CHECK_EQ_INT(config_msgs_add(&m, NULL), -1);
	config_msgs_release(&m);
	CHECK_EQ_INT(m.dropped, 0);
}

static void
test_printable(void)
{
	char *s = config_printable("a\tb\x7f");

	CHECK_EQ_STR(s, "a%09b%7F");
	free(s);
}

UNIT_MAIN(test_formats, test_sort, test_limit, test_printable)
