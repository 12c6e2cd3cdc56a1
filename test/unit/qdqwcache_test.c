/*
 * qdqwcache_test: lib/qdqwcache.c: a tensor is found again only under
 * the very parameters (and float dims) that made it; new parameters
 * replace the entry.
 */
#include <stdlib.h>
#include <string.h>

#include "qdqwcache.h"
#include "unit.h"

static void
make_q(struct qparam *q, float scale, struct err *e)
{
	if (qparam_alloc(q, 2, e) < 0)
		return;
	q->type = DT_INT8;
	q->axis = 0;
	q->scale[0] = scale;
	q->scale[1] = 2 * scale;
}

static void
test_get_put(void)
{
	struct qdq_wcache *wc = qdq_wcache_new();
	struct tensor src, qt, other;
	struct qparam q, q2;
	int64_t d[2] = { 2, 3 }, d2[2] = { 3, 2 };
	const struct tensor *got;
	struct err e;

	REQUIRE(wc != NULL);
	REQUIRE(tensor_alloc(&src, DT_FLOAT, 2, d, &e) == 0);
	REQUIRE(tensor_alloc(&other, DT_FLOAT, 2, d2, &e) == 0);
	REQUIRE(tensor_alloc(&qt, DT_INT8, 2, d, &e) == 0);
	((int8_t *)qt.data)[4] = 7;
	make_q(&q, 0.5f, &e);
	make_q(&q2, 0.25f, &e);
	REQUIRE(q.scale != NULL && q2.scale != NULL);

	CHECK(qdq_wcache_get(wc, "w", &src, &q, 0) == NULL);
	REQUIRE(qdq_wcache_put(wc, "w", &src, &q, 0, &qt, &e) == 0);
	got = qdq_wcache_get(wc, "w", &src, &q, 0);
	REQUIRE(got != NULL);
	CHECK(got != &qt && got->dtype == DT_INT8 &&
	    ((int8_t *)got->data)[4] == 7);
	CHECK_EQ_INT(qdq_wcache_hits(wc), 1);
	/* Any other scale, zero point, type, bias flag, dims or name: no. */
	CHECK(qdq_wcache_get(wc, "w", &src, &q2, 0) == NULL);
	CHECK(qdq_wcache_get(wc, "w", &src, &q, 1) == NULL);
	CHECK(qdq_wcache_get(wc, "w", &other, &q, 0) == NULL);
	CHECK(qdq_wcache_get(wc, "v", &src, &q, 0) == NULL);
	q.zp[1] = 1;
	CHECK(qdq_wcache_get(wc, "w", &src, &q, 0) == NULL);
	q.zp[1] = 0;
	q.type = DT_UINT8;
	CHECK(qdq_wcache_get(wc, "w", &src, &q, 0) == NULL);
	q.type = DT_INT8;
	/* New parameters replace the entry. */
	((int8_t *)qt.data)[4] = 9;
	REQUIRE(qdq_wcache_put(wc, "w", &src, &q2, 0, &qt, &e) == 0);
	CHECK(qdq_wcache_get(wc, "w", &src, &q, 0) == NULL);
	got = qdq_wcache_get(wc, "w", &src, &q2, 0);
	CHECK(got != NULL && ((int8_t *)got->data)[4] == 9);
	CHECK_EQ_INT(qdq_wcache_hits(wc), 2);
	qparam_release(&q);
	qparam_release(&q2);
	tensor_release(&src);
	tensor_release(&other);
	tensor_release(&qt);
	qdq_wcache_free(wc);
	qdq_wcache_free(NULL);
}

UNIT_MAIN(test_get_put)
