/*
 * fuse_test: lib/fuse.c's chains against the same arithmetic one link
 * at a time, bit for bit, on random values with NaN, infinities and
 * signed zeros among them, over lengths that end inside a block and
 * across threads; and the interpreter on the generated fuse/ models
 * (test/data/fuse/make-fixtures.py) fused and not (ONNXQ_NO_FUSE):
 * the same outputs, and with an observer the same tensors observed in
 * the same order with the same bytes; fuse_run_seen shows every link's
 * blocks in order with those values.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fuse.h"
#include "interp.h"
#include "model.h"
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
	for (int64_t i = 0; i < t->nelem * 4; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	if (s->n < 32) {
		snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
		s->hash[s->n++] = h;
	}
	return 0;
}

/* Run model rel once, fused or not, observed or not. */
static int
run_model(const char *rel, int fused, struct seen *s, struct tensor *out)
{
	struct interp_opts o = { .threads = 2, .observe = s ? observe : NULL,
	    .observe_ctx = s };
	struct model *m = fixture_generated(rel);
	struct interp *ip;
	struct tensor in;
	struct err e;
	int64_t d[4] = { 2, 3, 17, 19 };
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
check_model(const char *rel, int nout)
{
	struct tensor a[3], b[3];

	for (int obs = 0; obs < 2; obs++) {
		struct seen sa = { .n = 0 }, sb = { .n = 0 };

		if (!CHECK(run_model(rel, 1, obs ? &sa : NULL, a) == 0))
			return;
		if (!CHECK(run_model(rel, 0, obs ? &sb : NULL, b) == 0))
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
	check_model("fuse/chains.onnx", 3);
	check_model("fuse/clip10.onnx", 1);
}

UNIT_MAIN(test_run, test_run_seen, test_models)
