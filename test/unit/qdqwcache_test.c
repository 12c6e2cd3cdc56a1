/*
 * qdqwcache_test: lib/qdqwcache.c: a tensor is found again only under
 * the very parameters (and float dims) that made it; new parameters
 * add an entry, the earlier ones are still found, where they were. Through qdq_apply() with qdq_opts.lent, on the
 * generated qdqscale/bias.onnx: the cached weight and biases are lent
 * (their raw_data the cache's bytes) and the model packs byte for byte
 * as the one written with copies.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "qdqfixture.h"
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
	const void *data;
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
	/* New parameters add an entry; the earlier one stays, unmoved. */
	data = got->data;
	((int8_t *)qt.data)[4] = 9;
	REQUIRE(qdq_wcache_put(wc, "w", &src, &q2, 0, &qt, &e) == 0);
	got = qdq_wcache_get(wc, "w", &src, &q2, 0);
	CHECK(got != NULL && ((int8_t *)got->data)[4] == 9);
	got = qdq_wcache_get(wc, "w", &src, &q, 0);
	CHECK(got != NULL && got->data == data &&
	    ((int8_t *)got->data)[4] == 7);
	CHECK(qdq_wcache_get(wc, "w", &src, &q, 1) == NULL);
	CHECK_EQ_INT(qdq_wcache_hits(wc), 3);
	qparam_release(&q);
	qparam_release(&q2);
	tensor_release(&src);
	tensor_release(&other);
	tensor_release(&qt);
	qdq_wcache_free(wc);
	qdq_wcache_free(NULL);
}

/* W per tensor, x's scale 0.04 times W's 0.02 the biases' */
static const char bias_text[] = "#onnxq\t1.0\n"
    "qparam\tB2\trole=bias\ttype=int32\tscale=0.0008\tzp=0\n"
    "qparam\tW\trole=weight\ttype=int8\tscale=0.02\tzp=0\n"
    "qparam\tx\trole=act\ttype=uint8\tscale=0.04\tzp=120\n"
    "qparam\tB\trole=bias\ttype=int32\tscale=0.0008\tzp=0\n"
    "end\t4\n";

/* qdq_opts.lent: the initializers lent, up to 8. */
struct lent {
	Onnx__TensorProto *tp[8];
	int n;
};

static int
take_lent(void *ctx, Onnx__TensorProto *tp)
{
	struct lent *l = ctx;

	if (l->n == 8)
		return -1;
	l->tp[l->n++] = tp;
	return 0;
}

static struct model *
apply_bias(struct qdq_wcache *wc, struct lent *l)
{
	struct qdq_opts o = { 0 };

	o.wcache = wc;
	if (l) {
		o.lent = take_lent;
		o.lent_ctx = l;
	}
	return qdqfixture_apply(fixture_generated("qdqscale/bias.onnx"),
	    bias_text, &o, NULL);
}

static void
test_lent(void)
{
	struct qdq_wcache *wc = qdq_wcache_new();
	struct model *a, *b = NULL, *c = NULL;
	void *pa = NULL, *pb = NULL;
	size_t na = 0, nb = 0;
	struct lent l = { { NULL }, 0 };
	struct err e;

	REQUIRE(wc != NULL);
	a = apply_bias(NULL, NULL);	/* copies, no cache */
	c = apply_bias(wc, &l);		/* fills the cache: copies */
	CHECK_EQ_INT(l.n, 0);
	b = apply_bias(wc, &l);		/* found: lent */
	REQUIRE(a != NULL && b != NULL && c != NULL);
	CHECK_EQ_INT(l.n, 3);		/* W, B and B2 */
	for (int i = 0; i < l.n; i++)
		CHECK(l.tp[i]->raw_data.len > 0);
	CHECK(model_pack(a, &pa, &na, &e) == 0);
	CHECK(model_pack(b, &pb, &nb, &e) == 0);
	CHECK(na == nb && pa && pb && memcmp(pa, pb, na) == 0);
	for (int i = 0; i < l.n; i++) {	/* given back */
		l.tp[i]->raw_data.data = NULL;
		l.tp[i]->raw_data.len = 0;
	}
	free(pa);
	free(pb);
	model_free(a);
	model_free(b);
	model_free(c);
	qdq_wcache_free(wc);
}

UNIT_MAIN(test_get_put, test_lent)
