/*
 * util_test: str_clip, the one-line copy of a name for messages, and
 * str_cat. Needs nothing but libonnxq.
 */
#include "unit.h"
#include "util.h"

static void
test_str_clip(void)
{
	char buf[8];

	CHECK_EQ_STR(str_clip(NULL, buf, sizeof buf), "");
	CHECK_EQ_STR(str_clip("conv", buf, sizeof buf), "conv");
	CHECK_EQ_STR(str_clip("a\nb\x7f", buf, sizeof buf), "a?b?");
	/* 7 fit; one more and the end becomes "..." */
	CHECK_EQ_STR(str_clip("1234567", buf, sizeof buf), "1234567");
	CHECK_EQ_STR(str_clip("12345678", buf, sizeof buf), "1234...");
	CHECK_EQ_STR(str_clip("abc", buf, 4), "abc");
	CHECK_EQ_STR(str_clip("abcd", buf, 4), "abc");
}

static void
test_str_cat(void)
{
	char *s;

	CHECK_EQ_STR((s = str_cat("conv", "_quantized")), "conv_quantized");
	free(s);
	CHECK_EQ_STR((s = str_cat("", "")), "");
	free(s);
	CHECK_EQ_STR((s = str_cat("x", "")), "x");
	free(s);
}

UNIT_MAIN(test_str_clip, test_str_cat)
