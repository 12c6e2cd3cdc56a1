/*
 * fuse: chains of elementwise float32 operators run in one pass. See
 * fuse.h.
 *
 * Each link's loop is the expression of its single kernel in op_math.c
 * (x + y, x < lo ? lo : x then v > hi ? hi : v, alpha * x + beta, ...)
 * with the same operand order, so results are identical bit for bit; the
 * loops are compiled for AVX2 and AVX-512 too, picked at load time, which
 * changes no result (no contraction into fused multiply-adds: -std=c11).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "attr.h"
#include "fuse.h"
#include "par.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
#define FUSE_SIMD __attribute__((target_clones("arch=x86-64-v4", \
    "arch=x86-64-v3", "default")))
#else
#define FUSE_SIMD
#endif

#ifdef __clang__
#define SIMD
#else
#define SIMD _Pragma("omp simd")
#endif

#define BLOCK 2048		/* values per pass: two buffers stay in L1 */
#define PAR_MIN (1 << 18)	/* fewer values: one thread (op_math.c) */

/* A float32 scalar constant (any rank, one element), or NULL. */
static const struct tensor *
scalar(const char *name, fuse_const_fn konst, void *ctx)
{
	const struct tensor *t;

	if (!name || !name[0] || !(t = konst(ctx, name)))
		return NULL;
	return t->dtype == DT_FLOAT && t->nelem == 1 && t->data ? t : NULL;
}

static int
is_op(const Onnx__NodeProto *nd, const char *op)
{
	return (!nd->domain || !nd->domain[0] ||
	    strcmp(nd->domain, "ai.onnx") == 0) && strcmp(nd->op_type, op) == 0;
}

static int
is_binary(const Onnx__NodeProto *nd, char *op)
{
	static const char *const names[] = { "Add", "Sub", "Mul", "Div" };
	static const char ops[] = "+-*/";

	for (int i = 0; i < 4; i++)
		if (is_op(nd, names[i])) {
			*op = ops[i];
			return 1;
		}
	return 0;
}

/* QuantizeLinear or DequantizeLinear (q 0), of ONNX or com.microsoft. */
static int
is_qop(const Onnx__NodeProto *nd, int q, int *contrib)
{
	const char *op = q ? "QuantizeLinear" : "DequantizeLinear";

	*contrib = nd->domain && strcmp(nd->domain, "com.microsoft") == 0;
	return *contrib ? strcmp(nd->op_type, op) == 0 : is_op(nd, op);
}

/*
 * The scale and zero point of QuantizeLinear or DequantizeLinear nd into
 * l: one float32 constant and one integer constant for the whole tensor,
 * of a type the kernel (op_quant.c) takes at this opset; -1 otherwise.
 */
static int
qlink_params(struct fuse_link *l, const Onnx__NodeProto *nd, int opset,
    int contrib, fuse_const_fn konst, void *ctx)
{
	const struct tensor *s, *z;
	int64_t lo, hi;

	if (nd->n_input != 3 || !nd->input[1][0] || !nd->input[2][0] ||
	    !(s = konst(ctx, nd->input[1])) || !(z = konst(ctx,
	    nd->input[2])) || s->dtype != DT_FLOAT || !s->data ||
	    s->nelem != 1 || s->rank > 1 || !z->data || z->nelem != 1 ||
	    z->rank > 1 || (!contrib && (opset < 10 ||
	    attr_int(nd, "block_size", 0) != 0)))
		return -1;
	switch (z->dtype) {
	case DT_UINT8: case DT_INT8:
		break;
	case DT_UINT16: case DT_INT16: case DT_UINT4: case DT_INT4:
		if (contrib || opset >= 21)
			break;
		return -1;
	default:
		return -1;
	}
	dtype_int_range(z->dtype, &lo, &hi);
	l->k = *(const float *)s->data;
	l->zero = (int32_t)tensor_get(z, 0);
	l->lo = (float)lo, l->hi = (float)hi;
	l->qtype = z->dtype;
	return 0;
}

static int
is_unary(const Onnx__NodeProto *nd)
{
	return is_op(nd, "Clip") || is_op(nd, "Relu") ||
	    is_op(nd, "HardSigmoid");
}

int
fuse_chain_input(const Onnx__NodeProto *nd, fuse_const_fn konst, void *ctx)
{
	char op;
	int contrib;

	if (nd->n_output != 1)
		return -1;
	if (is_unary(nd) || is_qop(nd, 1, &contrib))
		return nd->n_input >= 1 && nd->input[0][0] ? 0 : -1;
	if (!is_binary(nd, &op) || nd->n_input != 2)
		return -1;
	if (scalar(nd->input[1], konst, ctx))
		return 0;
	if (scalar(nd->input[0], konst, ctx))
		return 1;
	return -1;
}

/* Operand name as cur, x or a scalar constant (its value in *k). */
static int
operand(const char *name, const char *cur, const char *x, float *k,
    int *krank, enum fuse_arg *arg, fuse_const_fn konst, void *ctx)
{
	const struct tensor *t;

	if (strcmp(name, cur) == 0)
		*arg = FUSE_CUR;
	else if (strcmp(name, x) == 0)
		*arg = FUSE_X;
	else if ((t = scalar(name, konst, ctx))) {
		*arg = FUSE_K;
		*k = *(const float *)t->data;
		*krank = t->rank > *krank ? t->rank : *krank;
	} else
		return -1;
	return 0;
}

/* A Clip bound of opset 11 on: an optional float32 scalar constant. */
static int
clip_bound(const Onnx__NodeProto *nd, size_t i, float def, float *f,
    int *krank, fuse_const_fn konst, void *ctx)
{
	const struct tensor *t;

	*f = def;
	if (i >= nd->n_input || !nd->input[i][0])
		return 0;
	if (!(t = scalar(nd->input[i], konst, ctx)))
		return -1;
	*f = *(const float *)t->data;
	*krank = t->rank > *krank ? t->rank : *krank;
	return 0;
}

int
fuse_link_parse(struct fuse_link *l, const Onnx__NodeProto *nd, int opset,
    const char *cur, const char *x, fuse_const_fn konst, void *ctx)
{
	int contrib;

	memset(l, 0, sizeof *l);
	if (nd->n_output != 1 || nd->n_input < 1 || !nd->input[0][0] ||
	    (is_unary(nd) && strcmp(nd->input[0], cur) != 0))
		return -1;
	if (is_qop(nd, 1, &contrib) || is_qop(nd, 0, &contrib)) {
		int64_t odt = contrib ? 0 : attr_int(nd, "output_dtype", 0);

		l->kind = is_qop(nd, 1, &contrib) ? FUSE_QUANT : FUSE_DEQUANT;
		if (strcmp(nd->input[0], cur) != 0 || qlink_params(l, nd,
		    opset, contrib, konst, ctx) < 0 ||
		    (l->kind == FUSE_QUANT && odt && odt != l->qtype))
			return -1;
		return 0;
	}
	if (is_binary(nd, &l->op)) {
		l->kind = FUSE_BIN;
		if (nd->n_input != 2 || opset < 7 ||
		    operand(nd->input[0], cur, x, &l->k, &l->krank, &l->a,
		    konst, ctx) < 0 ||
		    operand(nd->input[1], cur, x, &l->k, &l->krank, &l->b,
		    konst, ctx) < 0)
			return -1;
		/* One of them must be cur; a constant at most once. */
		if ((l->a != FUSE_CUR && l->b != FUSE_CUR) ||
		    (l->a == FUSE_K && l->b == FUSE_K))
			return -1;
		return 0;
	}
	if (is_op(nd, "Relu")) {
		l->kind = FUSE_RELU;
		return nd->n_input == 1 ? 0 : -1;
	}
	if (is_op(nd, "HardSigmoid")) {
		l->kind = FUSE_HSIG;
		l->lo = attr_float(nd, "alpha", 0.2f);
		l->hi = attr_float(nd, "beta", 0.5f);
		return nd->n_input == 1 ? 0 : -1;
	}
	if (is_op(nd, "Clip")) {
		l->kind = FUSE_CLIP;
		if (opset < 11) {
			l->lo = attr_float(nd, "min", -FLT_MAX);
			l->hi = attr_float(nd, "max", FLT_MAX);
			return nd->n_input == 1 ? 0 : -1;
		}
		if (nd->n_input > 3 ||
		    clip_bound(nd, 1, -INFINITY, &l->lo, &l->krank, konst,
		    ctx) < 0 ||
		    clip_bound(nd, 2, INFINITY, &l->hi, &l->krank, konst,
		    ctx) < 0)
			return -1;
		return 0;
	}
	return -1;
}

/* o = p OP q over arrays or a constant, the forms of op_math's BIN_FN. */
#define BIN_LOOPS(OP)							\
	do {								\
		if (pk) {						\
			SIMD						\
			for (int64_t i = 0; i < n; i++)			\
				o[i] = k OP q[i];			\
		} else if (qk) {					\
			SIMD						\
			for (int64_t i = 0; i < n; i++)			\
				o[i] = p[i] OP k;			\
		} else {						\
			SIMD						\
			for (int64_t i = 0; i < n; i++)			\
				o[i] = p[i] OP q[i];			\
		}							\
	} while (0)

FUSE_SIMD static void
run_link(const struct fuse_link *l, float *o, const float *cur,
    const float *x, int64_t n)
{
	const float *p = l->a == FUSE_CUR ? cur : x;
	const float *q = l->b == FUSE_CUR ? cur : x;
	const int pk = l->a == FUSE_K, qk = l->b == FUSE_K;
	const float k = l->k, lo = l->lo, hi = l->hi, zf = (float)l->zero;
	const int32_t zi = l->zero;

	switch (l->kind) {
	case FUSE_BIN:
		switch (l->op) {
		case '+': BIN_LOOPS(+); break;
		case '-': BIN_LOOPS(-); break;
		case '*': BIN_LOOPS(*); break;
		default: BIN_LOOPS(/); break;
		}
		break;
	case FUSE_CLIP:
		SIMD
		for (int64_t i = 0; i < n; i++) {
			float v = cur[i] < lo ? lo : cur[i];

			o[i] = v > hi ? hi : v;
		}
		break;
	case FUSE_HSIG:
		SIMD
		for (int64_t i = 0; i < n; i++) {
			float v = lo * cur[i] + hi;

			o[i] = v < 0 ? 0 : v > 1 ? 1 : v;
		}
		break;
	case FUSE_RELU:
		SIMD
		for (int64_t i = 0; i < n; i++)
			o[i] = cur[i] < 0 ? 0 : cur[i];
		break;
	case FUSE_QUANT:	/* op_quant.c's QUANT_FAST, NaN to lo */
		SIMD
		for (int64_t i = 0; i < n; i++) {
			float v = nearbyintf(cur[i] / k) + zf;

			o[i] = !(v >= lo) ? lo : v > hi ? hi : v;
		}
		break;
	case FUSE_DEQUANT:	/* DEQUANT_FAST, on QUANT's integers */
		SIMD
		for (int64_t i = 0; i < n; i++)
			o[i] = (float)((int32_t)cur[i] - zi) * k;
		break;
	}
}

/*
 * A QUANT link q and the DEQUANT link d after it in one loop, the
 * integers between them never stored: o = (v - zd) * kd for QUANT's
 * v = clamp(rint(x / kq) + zq, lo, hi), NaN to lo, as
 * o = clamp(rint(x / kq) + (zq - zd), lo - zd, hi - zd) * kd. The same
 * bits as the two links: every integer here (zero points, bounds, the
 * values in range) is below 2^17 in magnitude, so each sum and
 * difference is exact; a sum outside [lo, hi] rounds to a float no
 * nearer the range (rounding is monotone), so both forms clamp it to
 * the same end; a NaN goes to the low end in both; and adding
 * zq - zd (+0 when equal) turns rint's -0 into +0 as adding zq did, so
 * the zero's sign is DEQUANT's integer 0's too.
 */
FUSE_SIMD static void
run_qdq(const struct fuse_link *q, const struct fuse_link *d,
    float *o, const float *cur, int64_t n)
{
	const float zd = (float)d->zero, kq = q->k, kd = d->k;
	const float shift = (float)q->zero - zd, lo = q->lo - zd,
	    hi = q->hi - zd;

	SIMD
	for (int64_t i = 0; i < n; i++) {
		float v = nearbyintf(cur[i] / kq) + shift;

		o[i] = (!(v >= lo) ? lo : v > hi ? hi : v) * kd;
	}
}

/*
 * Values [at, at + len) through all links, the values between them in
 * buf's two halves by turns. The last link may write over x (in place):
 * each loop reads value i before it writes value i, and the pointers
 * are not restrict, so that is defined (omp simd still vectorizes).
 */
static void
run_block(const struct fuse_link *l, int n, const float *x,
    float *const *outs, int64_t at, int64_t len, float *buf)
{
	const float *cur = x + at;

	for (int i = 0, half = 0; i < n; i++, half ^= 1) {
		int pair = l[i].kind == FUSE_QUANT && i + 1 < n &&
		    l[i + 1].kind == FUSE_DEQUANT && !outs[i];
		float *o = outs[i + pair] ? outs[i + pair] + at : buf +
		    half * BLOCK;

		if (pair) {
			run_qdq(&l[i], &l[i + 1], o, cur, len);
			i++;
		} else
			run_link(&l[i], o, cur, x + at, len);
		cur = o;
	}
}

struct fuse_job {
	const struct fuse_link *l;
	int n;
	const float *x;
	float *const *outs;
	int64_t len;
};

/* par_for chunk: BLOCKS_PER_CHUNK blocks, through a buffer on the stack. */
#define BLOCKS_PER_CHUNK 8
static void
fuse_chunk(void *ctx, int64_t it, int w)
{
	const struct fuse_job *j = ctx;
	float buf[2 * BLOCK];

	(void)w;
	for (int64_t at = it * BLOCKS_PER_CHUNK * BLOCK, k = 0;
	    k < BLOCKS_PER_CHUNK && at < j->len; k++, at += BLOCK)
		run_block(j->l, j->n, j->x, j->outs, at, j->len - at <
		    BLOCK ? j->len - at : BLOCK, buf);
}

void
fuse_run(const struct fuse_link *l, int n, const float *x,
    float *const *outs, int64_t len, int threads)
{
	int64_t per = BLOCKS_PER_CHUNK * BLOCK;
	struct fuse_job j = { l, n, x, outs, len };

	threads = len < PAR_MIN ? 1 : threads;
	par_for((len + per - 1) / per, threads, fuse_chunk, &j);
}

/* One fuse_run_seen() call, as its par_for chunks see it. */
struct seen_job {
	const struct fuse_link *l;
	int n;
	const float *x;
	float *const *outs;
	int64_t len, block;
	fuse_see_fn see;
	void *ctx;
};

/*
 * Block it through all links, each link's values shown once made; the
 * values between links in a buffer on the stack (no allocation per run:
 * a buffer this size would be mapped and unmapped each time).
 */
static void
seen_block(void *ctx, int64_t it, int t)
{
	const struct seen_job *j = ctx;
	int64_t at = it * j->block;
	int64_t len = j->len - at < j->block ? j->len - at : j->block;
	float buf[2 * FUSE_SEEN_MAX];
	const float *cur = j->x + at;

	for (int i = 0; i < j->n; i++) {
		float *o = j->outs[i] ? j->outs[i] + at : buf + (i % 2) *
		    j->block;

		run_link(&j->l[i], o, cur, j->x + at, len);
		j->see(j->ctx, i, o, at, len, t);
		cur = o;
	}
}

int
fuse_run_seen(const struct fuse_link *l, int n, const float *x,
    float *const *outs, int64_t len, int threads, int64_t block,
    fuse_see_fn see, void *ctx)
{
	struct seen_job j = { l, n, x, outs, len, block, see, ctx };

	if (block < 1 || block > FUSE_SEEN_MAX)
		return -1;
	threads = len < PAR_MIN || threads < 1 ? 1 : threads;
	par_for((len + block - 1) / block, threads, seen_block, &j);
	return 0;
}
