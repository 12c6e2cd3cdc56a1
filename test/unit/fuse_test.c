/*
 * fuse_test: lib/fuse.c's chains against the same arithmetic one link
 * at a time, bit for bit, on random values with NaN, infinities and
 * signed zeros among them, over lengths that end inside a block and
 * across threads, and in place over x; and the interpreter on the
 * generated fuse/ models (test/data/fuse/make-fixtures.py; reuse.onnx:
 * outputs written over the chain's input when only the chain reads it)
 * fused and not (ONNXQ_NO_FUSE):
 * the same outputs, and with an observer the same tensors observed in
 * the same order with the same bytes; fuse_run_seen shows every link's
 * blocks in order with those values. QuantizeLinear -> DequantizeLinear
 * links against op_quant.c's two kernels one after the other, bit for
 * bit, for each integer type, on values with NaN, infinities, ties and
 * the ends of each range among them, and amid other links; the nodes
 * that cannot be links.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fuse.h"
#include "interp.h"
#include "model.h"
#include "optest.h"
#include "unit.h"

static float
rand_value(uint64_t *st)
{
	uint64_t r = unit_rand64_r(st);

	switch (r % 64) {
	case 0: return NAN;
	case 1: return INFINITY;
	case 2: return -INFINITY;
	case 3: return -0.0f;
	case 4: return 0.0f;
	case 5: return -3.0f;	/* hard-swish's corner */
	case 6: return 3.0f;
	default:
		return ((float)(r >> 40) / (float)(1 << 24) - 0.5f) * 16;
	}
}

/* One link, the obvious way (op_math.c's expressions). */
static void
ref_link(const struct fuse_link *l, float *o, const float *cur,
    const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		float p = l->a == FUSE_CUR ? cur[i] : l->a == FUSE_X ? x[i] :
		    l->k;
		float q = l->b == FUSE_CUR ? cur[i] : l->b == FUSE_X ? x[i] :
		    l->k;
		float v;

		switch (l->kind) {
		case FUSE_BIN:
			o[i] = l->op == '+' ? p + q : l->op == '-' ? p - q :
			    l->op == '*' ? p * q : p / q;
			break;
		case FUSE_CLIP:
			v = cur[i] < l->lo ? l->lo : cur[i];
			o[i] = v > l->hi ? l->hi : v;
			break;
		case FUSE_HSIG:
			v = l->lo * cur[i] + l->hi;
			o[i] = v < 0 ? 0 : v > 1 ? 1 : v;
			break;
		case FUSE_RELU:
			o[i] = cur[i] < 0 ? 0 : cur[i];
			break;
		default:	/* Q/DQ links: test_qlinks */
			abort();
		}
	}
}

static struct fuse_link
bin(char op, enum fuse_arg a, enum fuse_arg b, float k)
{
	struct fuse_link l = { .kind = FUSE_BIN, .op = op, .a = a, .b = b,
	    .k = k };

	return l;
}

static void
test_run(void)
{
	struct fuse_link l[FUSE_MAX] = {
		bin('+', FUSE_CUR, FUSE_K, 3),
		{ .kind = FUSE_CLIP, .lo = 0, .hi = 6 },
		bin('*', FUSE_X, FUSE_CUR, 0),
		bin('/', FUSE_CUR, FUSE_K, 6),
		{ .kind = FUSE_HSIG, .lo = 0.2f, .hi = 0.5f },
		bin('-', FUSE_K, FUSE_CUR, 1.5f),
		{ .kind = FUSE_RELU },
		bin('/', FUSE_K, FUSE_CUR, 7),
	};
	static const int64_t lens[] = { 1, 7, 2048, 2049, 5000, 300001 };
	uint64_t st = 42;

	for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
		int64_t n = lens[t];
		float *x = malloc((size_t)n * sizeof *x);
		float *ref = malloc((size_t)n * FUSE_MAX * sizeof *ref);
		float *got = malloc((size_t)n * FUSE_MAX * sizeof *got);
		float *outs[FUSE_MAX];

		REQUIRE(x && ref && got);
		for (int64_t i = 0; i < n; i++)
			x[i] = rand_value(&st);
		for (int i = 0; i < FUSE_MAX; i++)
			ref_link(&l[i], ref + i * n, i ? ref + (i - 1) * n : x,
			    x, n);
		/* every link written out, then only the last one */
		for (int i = 0; i < FUSE_MAX; i++)
			outs[i] = got + i * n;
		memset(got, 0xff, (size_t)n * FUSE_MAX * sizeof *got);
		fuse_run(l, FUSE_MAX, x, outs, n, 2);
		CHECK(memcmp(got, ref, (size_t)n * FUSE_MAX * sizeof *got) ==
		    0);
		for (int i = 0; i < FUSE_MAX - 1; i++)
			outs[i] = NULL;
		memset(got, 0xff, (size_t)n * FUSE_MAX * sizeof *got);
		fuse_run(l, FUSE_MAX, x, outs, n, 1);
		CHECK(memcmp(got + (FUSE_MAX - 1) * n, ref + (FUSE_MAX - 1) *
		    n, (size_t)n * sizeof *got) == 0);
		/* in place over x: all links, then three (the last reads x) */
		for (int m = FUSE_MAX; m > 0; m -= FUSE_MAX - 3) {
			memcpy(got, x, (size_t)n * sizeof *got);
			outs[m - 1] = got;
			fuse_run(l, m, got, outs, n, 2);
			CHECK(memcmp(got, ref + (m - 1) * n, (size_t)n *
			    sizeof *got) == 0);
			outs[m - 1] = NULL;
		}
		free(x);
		free(ref);
		free(got);
	}
}

/* What fuse_run_seen showed: each link's values, by block the links seen. */
struct shown {
	float *vals;		/* FUSE_MAX x n */
	int64_t n, block;
	int *next;		/* per block: the link it expects next */
	int bad;		/* a block out of place or order, or thread */
	int threads;
};

static void
show(void *ctx, int link, const float *v, int64_t at, int64_t len, int t)
{
	struct shown *sh = ctx;
	int64_t b = at / sh->block;

	if (at % sh->block || len != (sh->n - at < sh->block ? sh->n - at :
	    sh->block) || sh->next[b] != link || t < 0 || t >= sh->threads) {
		sh->bad = 1;
		return;
	}
	sh->next[b]++;
	memcpy(sh->vals + link * sh->n + at, v, (size_t)len * sizeof *v);
}

/*
 * fuse_run_seen shows every link's every block once, in link order,
 * with the values of the links one at a time; the last link is written.
 */
static void
test_run_seen(void)
{
	struct fuse_link l[4] = {
		bin('+', FUSE_CUR, FUSE_K, 3),
		{ .kind = FUSE_CLIP, .lo = 0, .hi = 6 },
		bin('*', FUSE_X, FUSE_CUR, 0),
		bin('/', FUSE_CUR, FUSE_K, 6),
	};
	static const int64_t lens[] = { 1, 8192, 8193, 300001 };
	uint64_t st = 7;

	/* each piece reads the last one's values; only the first reads x */
	for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
		int64_t n = lens[t];
		float *x = malloc((size_t)n * sizeof *x);
		float *ref = malloc((size_t)n * 4 * sizeof *ref);
		float *last = malloc((size_t)n * sizeof *last);
		float *outs[4] = { NULL, NULL, NULL, last };
		struct shown sh = { malloc((size_t)n * 4 * sizeof *ref), n,
		    FUSE_SEEN_MAX, calloc((size_t)n / FUSE_SEEN_MAX + 1,
		    sizeof *sh.next), 0, 2 };

		REQUIRE(x && ref && last && sh.vals && sh.next);
		for (int64_t i = 0; i < n; i++)
			x[i] = rand_value(&st);
		for (int i = 0; i < 4; i++)
			ref_link(&l[i], ref + i * n, i ? ref + (i - 1) * n : x,
			    x, n);
		CHECK(fuse_run_seen(l, 4, x, outs, n, 2, FUSE_SEEN_MAX, show,
		    &sh) == 0);
		CHECK(!sh.bad);
		for (int64_t b = 0; b * FUSE_SEEN_MAX < n; b++)
			CHECK_EQ_INT(sh.next[b], 4);
		CHECK(memcmp(sh.vals, ref, (size_t)n * 4 * sizeof *ref) == 0);
		CHECK(memcmp(last, ref + 3 * n, (size_t)n * sizeof *last) ==
		    0);
		CHECK(fuse_run_seen(l, 4, x, outs, n, 2, FUSE_SEEN_MAX + 1,
		    show, &sh) == -1);
		free(x);
		free(ref);
		free(last);
		free(sh.vals);
		free(sh.next);
	}
}

/* The constants of the Q/DQ link tests, by name. */
struct qconsts {
	struct tensor s, z, s2, z2;
};

static const struct tensor *
qconst(void *ctx, const char *name)
{
	struct qconsts *q = ctx;

	return !strcmp(name, "s") ? &q->s : !strcmp(name, "z") ? &q->z :
	    !strcmp(name, "s2") ? &q->s2 : !strcmp(name, "z2") ? &q->z2 :
	    NULL;
}

static void
scalar_of(struct tensor *t, int dtype, int rank, double v)
{
	struct err e;

	REQUIRE(tensor_alloc(t, dtype, rank, DIMS(1), &e) == 0);
	tensor_set(t, 0, v);
}

/*
 * x: values around the grid of scale s (ties half way between two steps,
 * just beside them), past both ends, NaN, infinities, signed zeros.
 */
static float
qvalue(uint64_t *st, float s, int64_t lo, int64_t hi)
{
	uint64_t r = unit_rand64_r(st);
	float m = (float)((int64_t)(r >> 40) % (hi - lo + 40) + lo - 20);

	switch (r % 16) {
	case 0: return NAN;
	case 1: return r & 256 ? INFINITY : -INFINITY;
	case 2: return r & 256 ? 0.0f : -0.0f;
	case 3: return (m + 0.5f) * s;
	case 4: return nextafterf((m + 0.5f) * s, INFINITY);
	case 5: return nextafterf((m + 0.5f) * s, -INFINITY);
	case 6: return m * s;
	case 7: return (float)(r >> 8 & 1 ? hi : lo) * s * 1e6f;
	default:
		return ((float)(r >> 40) / (float)(1 << 24) - 0.5f) *
		    s * (float)(hi - lo) * 1.5f;
	}
}

/* One type: the two links against the two kernels, on n values. */
static void
check_qlinks(const char *domain, int opset, int dt, float sv, double zv,
    float sv2, double zv2, int64_t n)
{
	struct qconsts q = { 0 };
	struct tnode tq, tdq;
	struct fuse_link l[2];
	struct tensor x, qy = { 0 }, ref = { 0 };
	const struct tensor *in[3];
	char *qin[3] = { "x", "s", "z" }, *dqin[3] = { "y0", "s2", "z2" };
	float *outs[2], *got;
	int64_t lo, hi;
	uint64_t st = (uint64_t)dt * 1000 + (uint64_t)n;
	struct err e;

	dtype_int_range(dt, &lo, &hi);
	scalar_of(&q.s, DT_FLOAT, 0, sv);
	scalar_of(&q.z, dt, 0, zv);
	scalar_of(&q.s2, DT_FLOAT, 1, sv2);
	scalar_of(&q.z2, dt, 1, zv2);
	node_init(&tq, "QuantizeLinear");
	node_init(&tdq, "DequantizeLinear");
	tq.n.domain = tdq.n.domain = (char *)domain;
	tq.n.input = qin, tdq.n.input = dqin;
	tq.n.n_input = tdq.n.n_input = 3;
	REQUIRE(fuse_chain_input(&tq.n, qconst, &q) == 0);
	REQUIRE(fuse_link_parse(&l[0], &tq.n, opset, "x", "x", qconst,
	    &q) == 0);
	REQUIRE(fuse_link_parse(&l[1], &tdq.n, opset, "y0", "x", qconst,
	    &q) == 0);
	CHECK(l[0].kind == FUSE_QUANT && l[1].kind == FUSE_DEQUANT);
	CHECK(l[0].qtype == dt && l[1].qtype == dt);
	CHECK(fuse_chain_input(&tdq.n, qconst, &q) < 0);
	REQUIRE(tensor_alloc(&x, DT_FLOAT, 1, DIMS(n), &e) == 0);
	for (int64_t i = 0; i < n; i++)
		((float *)x.data)[i] = qvalue(&st, sv, lo, hi);
	in[0] = &x, in[1] = &q.s, in[2] = &q.z;
	REQUIRE(op_run_in(domain, &tq, opset, in, 3, &qy, 1, 2, &e) == 0);
	in[0] = &qy, in[1] = &q.s2, in[2] = &q.z2;
	REQUIRE(op_run_in(domain, &tdq, opset, in, 3, &ref, 1, 2, &e) == 0);
	REQUIRE((got = malloc((size_t)n * sizeof *got)) != NULL);
	for (int threads = 1; threads <= 2; threads++) {
		memset(got, 0xff, (size_t)n * sizeof *got);
		outs[0] = NULL, outs[1] = got;
		fuse_run(l, 2, x.data, outs, n, threads);
		CHECK(memcmp(got, ref.data, (size_t)n * sizeof *got) == 0);
	}
	free(got);
	tensor_release(&x), tensor_release(&qy), tensor_release(&ref);
	tensor_release(&q.s), tensor_release(&q.z);
	tensor_release(&q.s2), tensor_release(&q.z2);
}

static void
test_qlinks(void)
{
	static const int64_t lens[] = { 1, 2049, 300001 };

	for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
		int64_t n = lens[t];

		check_qlinks("", 13, DT_UINT8, 0.05f, 128, 0.05f, 128, n);
		check_qlinks("", 13, DT_INT8, 1.0f / 3, -3, 1.0f / 3, -3, n);
		/* DequantizeLinear's parameters need not be Quantize's */
		check_qlinks("", 10, DT_UINT8, 0.0078125f, 0, 0.1f, 7, n);
		check_qlinks("", 21, DT_UINT16, 0.001f, 32768, 0.001f, 32768,
		    n);
		check_qlinks("", 21, DT_INT16, 3e-4f, -5, 3e-4f, -5, n);
		check_qlinks("", 21, DT_UINT4, 0.5f, 8, 0.5f, 8, n);
		check_qlinks("", 21, DT_INT4, 0.25f, 0, 0.25f, 0, n);
		check_qlinks("com.microsoft", 13, DT_UINT16, 0.002f, 100,
		    0.002f, 100, n);
		check_qlinks("com.microsoft", 13, DT_INT16, 0.7f, 0, 0.7f, 0,
		    n);
		/* q - z of DequantizeLinear from -65535 to 65535 */
		check_qlinks("", 21, DT_UINT16, 0.01f, 0, 2.5f, 65535, n);
		check_qlinks("", 21, DT_UINT16, 0.01f, 65535, 1e-6f, 0, n);
		check_qlinks("", 21, DT_INT16, 0.02f, -32768, 0.5f, 32767,
		    n);
		check_qlinks("", 21, DT_INT16, 0.02f, 32767, 3.0f, -32768,
		    n);
		check_qlinks("", 13, DT_UINT8, 1e-3f, 255, 0.3f, 0, n);
		check_qlinks("", 13, DT_INT8, 1e-3f, -128, 0.3f, 127, n);
	}
}

/*
 * Q/DQ pairs amid other links, in one chain: the values of the pieces
 * run one after the other (each checked above), whatever the lengths.
 */
static void
test_qchain(void)
{
	const struct fuse_link qk = { .kind = FUSE_QUANT, .k = 0.05f,
	    .lo = 0, .hi = 255, .qtype = DT_UINT8, .zero = 100 };
	const struct fuse_link dqk = { .kind = FUSE_DEQUANT, .k = 0.05f,
	    .qtype = DT_UINT8, .zero = 100 };
	const struct fuse_link l[FUSE_MAX] = {
		bin('*', FUSE_X, FUSE_K, 1), qk, dqk,
		{ .kind = FUSE_RELU }, qk, dqk, qk, dqk };
	static const int64_t lens[] = { 1, 2049, 300001 };
	static const int cut[] = { 0, 1, 3, 4, 6, 8 };	/* the pieces */
	uint64_t st = 7;

	/* each piece reads the last one's values; only the first reads x */
	for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
		int64_t n = lens[t];
		float *x = malloc((size_t)n * sizeof *x);
		float *a = malloc((size_t)n * sizeof *a);
		float *b = malloc((size_t)n * sizeof *b);
		float *got = malloc((size_t)n * sizeof *got);
		float *outs[FUSE_MAX] = { 0 };

		REQUIRE(x && a && b && got);
		for (int64_t i = 0; i < n; i++)
			x[i] = qvalue(&st, 0.05f, 0, 255);
		memcpy(a, x, (size_t)n * sizeof *a);
		for (size_t c = 0; c + 1 < sizeof cut / sizeof cut[0]; c++) {
			int m = cut[c + 1] - cut[c];

			outs[m - 1] = b;
			fuse_run(l + cut[c], m, a, outs, n, 1);
			outs[m - 1] = NULL;
			memcpy(a, b, (size_t)n * sizeof *a);
		}
		for (int threads = 1; threads <= 2; threads++) {
			memset(outs, 0, sizeof outs);
			outs[FUSE_MAX - 1] = got;
			memset(got, 0xff, (size_t)n * sizeof *got);
			fuse_run(l, FUSE_MAX, x, outs, n, threads);
			CHECK(memcmp(got, b, (size_t)n * sizeof *got) == 0);
		}
		free(x), free(a), free(b), free(got);
	}
}

/* Nodes that are not links: per-axis parameters, types the opset lacks. */
static void
test_qlinks_refused(void)
{
	struct qconsts q = { 0 };
	struct tnode tq;
	struct fuse_link l;
	char *qin[3] = { "x", "s", "z" };
	struct err e;

	node_init(&tq, "QuantizeLinear");
	tq.n.input = qin;
	tq.n.n_input = 3;
	scalar_of(&q.z, DT_UINT16, 0, 0);
	scalar_of(&q.s, DT_FLOAT, 0, 0.1);
	CHECK(fuse_link_parse(&l, &tq.n, 13, "x", "x", qconst, &q) < 0);
	CHECK(fuse_link_parse(&l, &tq.n, 21, "x", "x", qconst, &q) == 0);
	CHECK(fuse_link_parse(&l, &tq.n, 21, "y", "x", qconst, &q) < 0);
	tensor_release(&q.s);
	REQUIRE(tensor_alloc(&q.s, DT_FLOAT, 1, DIMS(2), &e) == 0);
	CHECK(fuse_link_parse(&l, &tq.n, 21, "x", "x", qconst, &q) < 0);
	tensor_release(&q.s);
	scalar_of(&q.s, DT_FLOAT16, 0, 0);
	CHECK(fuse_link_parse(&l, &tq.n, 21, "x", "x", qconst, &q) < 0);
	tensor_release(&q.s);
	scalar_of(&q.s, DT_FLOAT, 0, 0.1);
	node_int(&tq, "output_dtype", DT_INT16);
	CHECK(fuse_link_parse(&l, &tq.n, 21, "x", "x", qconst, &q) < 0);
	tq.n.n_input = 2;
	CHECK(fuse_link_parse(&l, &tq.n, 21, "x", "x", qconst, &q) < 0);
	tensor_release(&q.s), tensor_release(&q.z);
}

/* What an observer saw: names and an FNV-1a hash of each tensor. */
struct seen {
	char names[32][16];
	uint64_t hash[32];
	int n;
};

static int
observe(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	struct seen *s = ctx;
	const unsigned char *p = t->data;
	uint64_t h = 14695981039346656037ULL;

	(void)e;
	for (int64_t i = 0; i < t->nelem * (int64_t)dtype_size(t->dtype);
	    i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	if (s->n < 32) {
		snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
		s->hash[s->n++] = h;
	}
	return 0;
}

/* Run model rel once, fused or not, observed or not. */
static int
run_model(const char *rel, const int64_t *d, int fused, struct seen *s,
    struct tensor *out)
{
	struct interp_opts o = { .threads = 2, .observe = s ? observe : NULL,
	    .observe_ctx = s };
	struct model *m = fixture_generated(rel);
	struct interp *ip;
	struct tensor in;
	struct err e;
	uint64_t st = 7;
	int r;

	if (!m)
		return -1;
	if (fused)
		unsetenv("ONNXQ_NO_FUSE");
	else
		setenv("ONNXQ_NO_FUSE", "1", 1);
	ip = interp_new(m, &o, &e);
	unsetenv("ONNXQ_NO_FUSE");
	if (!ip || tensor_alloc(&in, DT_FLOAT, 4, d, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return -1;
	}
	for (int64_t i = 0; i < in.nelem; i++)
		((float *)in.data)[i] = rand_value(&st);
	r = interp_run(ip, &in, out, &e);
	if (r < 0)
		fprintf(stderr, "%s\n", e.msg);
	tensor_release(&in);
	interp_free(ip);
	model_free(m);
	return r;
}

static void
check_model(const char *rel, const int64_t *d, int nout)
{
	struct tensor a[3], b[3];

	for (int obs = 0; obs < 2; obs++) {
		struct seen sa = { .n = 0 }, sb = { .n = 0 };

		if (!CHECK(run_model(rel, d, 1, obs ? &sa : NULL, a) == 0))
			return;
		if (!CHECK(run_model(rel, d, 0, obs ? &sb : NULL, b) == 0))
			return;
		for (int i = 0; i < nout; i++) {
			CHECK(shape_equal(&a[i], &b[i]));
			CHECK(a[i].nelem == b[i].nelem && memcmp(a[i].data,
			    b[i].data, (size_t)a[i].nelem * 4) == 0);
			tensor_release(&a[i]);
			tensor_release(&b[i]);
		}
		CHECK_EQ_INT(sa.n, sb.n);
		for (int i = 0; i < sa.n && i < sb.n; i++) {
			CHECK_EQ_STR(sa.names[i], sb.names[i]);
			CHECK(sa.hash[i] == sb.hash[i]);
		}
		if (obs)
			CHECK(sa.n >= nout + 1);
	}
}

static void
test_models(void)
{
	const int64_t *d = DIMS(2, 3, 17, 19);

	check_model("fuse/chains.onnx", d, 3);
	check_model("fuse/clip10.onnx", d, 1);
	check_model("fuse/qdq.onnx", d, 2);
	/* chains written in place over their input, or not */
	check_model("fuse/reuse.onnx", DIMS(2, 3, 100, 100), 2);
}

/* Every value of a run, kept by name for interp_run_skip(). */
struct kept {
	char names[32][16];
	struct tensor t[32];
	int n;
};

static int
keep_all(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	struct kept *k = ctx;

	if (k->n >= 32)
		return 0;
	snprintf(k->names[k->n], sizeof k->names[0], "%s", name);
	return tensor_copy(&k->t[k->n++], t, e);
}

static const struct tensor *
kept_value(void *ctx, const char *name)
{
	struct kept *k = ctx;

	for (int i = 0; i < k->n; i++)
		if (strcmp(k->names[i], name) == 0)
			return &k->t[i];
	return NULL;
}

/*
 * interp_run_skip() on the qdq model, the values of skipped nodes taken
 * from a whole run: the first link and its Q taken (the rest runs one by
 * one), or a DequantizeLinear inside a chain taken: the same outputs.
 */
static void
test_skip(void)
{
	struct model *m = fixture_generated("fuse/qdq.onnx");
	struct kept k = { .n = 0 };
	struct interp_opts o = { .threads = 1, .observe = keep_all,
	    .observe_ctx = &k };
	struct interp *ip, *fused;
	struct tensor in, whole[2], part[2];
	unsigned char skip[16];
	int64_t d[4] = { 2, 3, 17, 19 };
	uint64_t st = 9;
	struct err e;

	if (!CHECK(m != NULL))
		return;
	REQUIRE((ip = interp_new(m, &o, &e)) != NULL);
	REQUIRE((fused = interp_new(m, NULL, &e)) != NULL);
	REQUIRE(tensor_alloc(&in, DT_FLOAT, 4, d, &e) == 0);
	for (int64_t i = 0; i < in.nelem; i++)
		((float *)in.data)[i] = rand_value(&st);
	REQUIRE(interp_run(ip, &in, whole, &e) == 0);
	for (int c = 0; c < 2; c++) {
		memset(skip, 0, sizeof skip);
		if (c == 0)
			skip[0] = skip[1] = 1;	/* Add, QuantizeLinear */
		else
			skip[2] = 1;		/* the DequantizeLinear */
		REQUIRE(interp_run_skip(fused, &in, skip, kept_value, &k,
		    part, &e) == 0);
		for (int i = 0; i < 2; i++) {
			CHECK(shape_equal(&part[i], &whole[i]) &&
			    memcmp(part[i].data, whole[i].data,
			    (size_t)whole[i].nelem * 4) == 0);
			tensor_release(&part[i]);
		}
	}
	tensor_release_n(whole, 2);
	tensor_release_n(k.t, (size_t)k.n);
	tensor_release(&in);
	interp_free(ip);
	interp_free(fused);
	model_free(m);
}

UNIT_MAIN(test_run, test_run_seen, test_qlinks, test_qchain,
    test_qlinks_refused, test_models, test_skip)
