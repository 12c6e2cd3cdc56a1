/*
 * mixskel_test: lib/mixskel.c and qdq.h's qdq_apply() in two steps, on
 * the generated qdqscale/bias.onnx. A front made for one plan, packed
 * and unpacked, finishes any plan with the same constants' records into
 * the model qdq_apply() makes, byte for byte (other activation
 * parameters, a convert whose receiving node the front must find
 * again); a plan with other weight parameters, another opset need or a
 * constant the front lacks does not fit; nor one with other fold records
 * (test/data/qdq/ops.onnx). Through mixskels: the
 * initializers that held lent bytes are packed empty and lent again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "mixskel.h"
#include "prep.h"
#include "qdqwcache.h"
#include "unit.h"

#define HEAD "#onnxq\t1.0\n"
#define W8 "qparam\tW\trole=weight\ttype=int8\tscale=0.02\tzp=0\n"
#define B8 "qparam\tB\trole=bias\ttype=int32\tscale=0.0008\tzp=0\n" \
    "qparam\tB2\trole=bias\ttype=int32\tscale=0.0008\tzp=0\n"

static const char plan_a[] = HEAD W8
    "qparam\tx\trole=act\ttype=uint8\tscale=0.04\tzp=120\n" B8 "end\t4\n";
/* other activations, and a convert received by mulK only */
static const char plan_b[] = HEAD W8
    "qparam\tx\trole=act\ttype=uint8\tscale=0.05\tzp=128\n"
    "qparam\tc\trole=act\ttype=uint8\tscale=0.1\tzp=100\n" B8
    "convert\tc\ttype=uint8\tscale=0.2\tzp=90\trecv=mulK\n"
    "end\t6\n";
/* another weight scale */
static const char plan_c[] = HEAD
    "qparam\tW\trole=weight\ttype=int8\tscale=0.03\tzp=0\n"
    "qparam\tx\trole=act\ttype=uint8\tscale=0.04\tzp=120\n" B8 "end\t4\n";
/* a 16-bit activation: another opset */
static const char plan_d[] = HEAD W8
    "qparam\tx\trole=act\ttype=uint16\tscale=0.0001\tzp=30000\n" B8
    "end\t4\n";
/* a constant more (K) */
static const char plan_e[] = HEAD W8
    "qparam\tK\trole=act\ttype=uint8\tscale=0.01\tzp=0\n"
    "qparam\tx\trole=act\ttype=uint8\tscale=0.04\tzp=120\n" B8 "end\t5\n";

/* ops.onnx: relu1 folded into conv1; W1 per tensor */
#define OPS_W "qparam\tW1\trole=weight\ttype=int8\tscale=0.01\tzp=0\n"
#define OPS_R "qparam\tr1\trole=act\ttype=uint8\tscale=0.02\tzp=0\n"
static const char plan_f1[] = HEAD OPS_W OPS_R
    "qparam\tx\trole=act\ttype=uint8\tscale=0.04\tzp=120\n"
    "fold\trelu1\tinto=conv1\nend\t4\n";
/* another x */
static const char plan_f2[] = HEAD OPS_W OPS_R
    "qparam\tx\trole=act\ttype=uint8\tscale=0.05\tzp=110\n"
    "qparam\tp1\trole=act\ttype=uint8\tscale=0.02\tzp=0\n"
    "fold\trelu1\tinto=conv1\nend\t5\n";
/* the fold dropped */
static const char plan_f3[] = HEAD OPS_W OPS_R
    "qparam\tx\trole=act\ttype=uint8\tscale=0.04\tzp=120\n"
    "end\t3\n";

static struct qdq_plan *
plan_of(const char *text)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	struct stream_reader *r = NULL;
	struct qdq_plan *p = qdq_plan_new();
	struct err e = { 0 };

	if (fp == NULL || p == NULL ||
	    (r = stream_reader_new(fp, "s", &e)) == NULL ||
	    qdq_plan_read(p, r, &e) != 0) {
		fprintf(stderr, "%s\n", e.msg);
		qdq_plan_free(p);
		p = NULL;
	}
	stream_reader_free(r);
	if (fp)
		fclose(fp);
	return p;
}

/* 1: the models are test/data/qdq/ops.onnx (Conv -> Relu, folded) */
static int ops;

static struct model *
prepared(void)
{
	struct model *m = ops ? fixture_model("test/data/qdq/ops.onnx") :
	    fixture_generated("qdqscale/bias.onnx");
	struct err e;

	if (m && prep_model(m, NULL, &e) < 0) {
		model_free(m);
		return NULL;
	}
	return m;
}

/* m packed (malloc'd) */
static void *
packed(const struct model *m, size_t *n)
{
	void *b = NULL;
	struct err e;

	if (model_pack(m, &b, n, &e) < 0)
		return NULL;
	return b;
}

/* The bytes of the model qdq_apply() makes of plan text. */
static void *
whole(const char *text, const struct qdq_opts *o, struct qdq_report *rep,
    size_t *n)
{
	struct qdq_plan *p = plan_of(text);
	struct model *m = prepared();
	void *b = NULL;
	struct err e;

	if (p && m && qdq_apply(m, p, o, rep, &e) == 0)
		b = packed(m, n);
	qdq_plan_free(p);
	model_free(m);
	return b;
}

/* Does the front's model (bytes sk) finish plan text as qdq_apply()? */
static int
same_as_whole(const void *sk, size_t nsk, const struct qdq_front *f,
    const char *text)
{
	struct qdq_opts o = { 0 };
	struct qdq_report r1, r2;
	struct qdq_plan *p = plan_of(text);
	struct model *m;
	void *a, *b = NULL;
	size_t na = 0, nb = 0;
	struct err e;
	int ok;

	a = whole(text, &o, &r1, &na);
	m = model_load_mem(sk, nsk, "sk", NULL, &e);
	if (p && m && qdq_front_apply(m, p, &o, f, &r2, &e) == 0)
		b = packed(m, &nb);
	ok = a && b && na == nb && memcmp(a, b, na) == 0 &&
	    memcmp(&r1, &r2, sizeof r1) == 0;
	free(a);
	free(b);
	model_free(m);
	qdq_plan_free(p);
	return ok;
}

/* qdq_front_apply() of text on the front's model: 1 when it does not fit. */
static int
apply_rc(const void *sk, size_t nsk, const struct qdq_front *f,
    const char *text)
{
	struct qdq_plan *p = plan_of(text);
	struct model *m;
	struct qdq_report r;
	struct err e;
	int rc = -1;

	m = model_load_mem(sk, nsk, "sk", NULL, &e);
	if (p && m)
		rc = qdq_front_apply(m, p, NULL, f, &r, &e);
	model_free(m);
	qdq_plan_free(p);
	return rc;
}

static void
test_two_steps(void)
{
	struct qdq_plan *a = plan_of(plan_a), *c = plan_of(plan_c);
	struct qdq_plan *e5 = plan_of(plan_e), *fold;
	struct model *m = prepared();
	struct qdq_front *f = NULL;
	void *sk = NULL;
	size_t nsk = 0;
	struct err e;

	REQUIRE(a && c && e5 && m);
	REQUIRE(qdq_front_make(m, a, NULL, &f, &e) == 0 && f != NULL);
	CHECK_EQ_INT(qdq_front_report(f)->weights, 1);
	CHECK_EQ_INT(qdq_front_report(f)->biases, 2);
	REQUIRE((sk = packed(m, &nsk)) != NULL);
	CHECK(qdq_front_fits(f, a));
	CHECK(!qdq_front_fits(f, c));
	CHECK(!qdq_front_fits(f, e5));
	CHECK(same_as_whole(sk, nsk, f, plan_a));
	CHECK(same_as_whole(sk, nsk, f, plan_b));
	CHECK_EQ_INT(apply_rc(sk, nsk, f, plan_c), 1);
	CHECK_EQ_INT(apply_rc(sk, nsk, f, plan_d), 1);
	CHECK_EQ_INT(apply_rc(sk, nsk, f, plan_e), 1);
	/* the model the front was made on finishes as well */
	{
		struct qdq_report r;

		CHECK(qdq_front_apply(m, a, NULL, f, &r, &e) == 0);
		CHECK_EQ_INT(r.acts, 1);
	}
	fold = plan_of(plan_f1);
	CHECK(fold && !qdq_front_fits(f, fold));
	qdq_plan_free(fold);
	free(sk);
	model_free(m);
	qdq_front_free(f);
	qdq_front_free(NULL);
	qdq_plan_free(a);
	qdq_plan_free(c);
	qdq_plan_free(e5);
}

/* Fronts with folds: the same folds fit, others do not. */
static void
test_folds(void)
{
	struct qdq_plan *f1 = plan_of(plan_f1), *f3 = plan_of(plan_f3);
	struct model *m;
	struct qdq_front *f = NULL;
	void *sk = NULL;
	size_t nsk = 0;
	struct err e;

	ops = 1;
	m = prepared();
	REQUIRE(f1 && f3 && m);
	REQUIRE(qdq_front_make(m, f1, NULL, &f, &e) == 0 && f != NULL);
	CHECK_EQ_INT(qdq_front_report(f)->folds, 1);
	REQUIRE((sk = packed(m, &nsk)) != NULL);
	CHECK(!qdq_front_fits(f, f3));
	CHECK(same_as_whole(sk, nsk, f, plan_f1));
	CHECK(same_as_whole(sk, nsk, f, plan_f2));
	CHECK_EQ_INT(apply_rc(sk, nsk, f, plan_f3), 1);
	ops = 0;
	free(sk);
	model_free(m);
	qdq_front_free(f);
	qdq_plan_free(f1);
	qdq_plan_free(f3);
}

/* A lender as mixeval.c's: the lent initializers, given back on free. */
struct lender {
	Onnx__TensorProto *tp[16];
	int n;
	long freed;
};

static int
is_lent(void *ctx, const Onnx__TensorProto *t)
{
	struct lender *l = ctx;

	for (int i = 0; i < l->n; i++)
		if (l->tp[i] == t)
			return 1;
	return 0;
}

static int
lend(void *ctx, Onnx__TensorProto *t)
{
	struct lender *l = ctx;

	if (l->n == 16)
		return -1;
	l->tp[l->n++] = t;
	return 0;
}

static void
give_back(struct lender *l)
{
	for (int i = 0; i < l->n; i++) {
		l->tp[i]->raw_data.data = NULL;
		l->tp[i]->raw_data.len = 0;
	}
	l->n = 0;
}

static void
free_lent(void *ctx, struct model *m)
{
	struct lender *l = ctx;

	give_back(l);
	model_free(m);
	l->freed++;
}

static void
test_skels(void)
{
	struct lender l = { { NULL }, 0, 0 };
	struct mixskel_lender ml = { is_lent, lend, free_lent, &l };
	struct mixskels *s = mixskels_new(&ml);
	struct qdq_wcache *wc = qdq_wcache_new();
	struct qdq_opts o = { 0 };
	struct qdq_plan *a = plan_of(plan_a), *b = plan_of(plan_b);
	struct qdq_plan *c = plan_of(plan_c);
	struct qdq_front *f = NULL;
	struct qdq_report r;
	struct model *m = NULL, *full;
	void *x, *y = NULL;
	size_t nx = 0, ny = 0;
	struct err e;

	REQUIRE(s && wc && a && b && c);
	o.wcache = wc;
	o.lent = lend;
	o.lent_ctx = &l;
	CHECK_EQ_INT(mixskels_make(s, 0, a, &o, "sk", NULL, &m, &r, &e), 0);
	/* the first build quantizes (copies), the second lends */
	for (int k = 0; k < 2; k++) {
		REQUIRE((full = prepared()) != NULL);
		REQUIRE(qdq_front_make(full, a, &o, &f, &e) == 0);
		if (k == 0) {
			CHECK_EQ_INT(l.n, 0);
			qdq_front_free(f);
			give_back(&l);
			model_free(full);
		}
	}
	CHECK_EQ_INT(l.n, 3);	/* W, B, B2 */
	REQUIRE(mixskels_keep(s, 1, f, full, &e) == 0);
	give_back(&l);
	model_free(full);
	/* another source: none; a plan that does not fit: none */
	CHECK_EQ_INT(mixskels_make(s, 0, b, &o, "sk", NULL, &m, &r, &e), 0);
	CHECK_EQ_INT(mixskels_make(s, 1, c, &o, "sk", NULL, &m, &r, &e), 0);
	REQUIRE(mixskels_make(s, 1, b, &o, "sk", NULL, &m, &r, &e) == 1);
	CHECK_EQ_INT(mixskels_hits(s), 1);
	CHECK_EQ_INT(l.n, 3);	/* lent again */
	for (int i = 0; i < l.n; i++)
		CHECK(l.tp[i]->raw_data.len > 0);
	x = whole(plan_b, NULL, NULL, &nx);
	y = packed(m, &ny);
	CHECK(x && y && nx == ny && memcmp(x, y, nx) == 0);
	free_lent(&l, m);
	free(x);
	free(y);
	qdq_plan_free(a);
	qdq_plan_free(b);
	qdq_plan_free(c);
	mixskels_free(s);
	mixskels_free(NULL);
	qdq_wcache_free(wc);
}

UNIT_MAIN(test_two_steps, test_folds, test_skels)
