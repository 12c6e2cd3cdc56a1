/*
 * op_nn: convolution, matrix products, pooling, normalisation and
 * resizing kernels.
 *
 * Convolutions are matrix products. With AVX-512 (gemm.h, gemm_packed):
 * the weights are packed once per node and kept in the node's state
 * (checked against the weights on every run), the input is unfolded
 * (im2col) straight into cache-sized panels, or read in place where a
 * panel lies inside it, and each output tile gets its bias in the
 * product. Without AVX-512 the unfolding goes tile by tile into a
 * per-thread buffer for OpenBLAS. 1x1 convolutions with unit strides and
 * no padding skip the unfolding: the NCHW input already is the right-hand
 * matrix. Depthwise convolutions run on a direct kernel, one output plane
 * per task, 16 outputs accumulating in registers over all taps (small
 * planes are first copied into a zero-bordered buffer so no tap needs a
 * check). ConvTranspose is a product with the transposed weights followed
 * by a fold (col2im) into the output. Tiles of outputs, or planes, are
 * spread over the threads; work too small to pay for waking a thread
 * stays on one.
 *
 * Gemm, MatMul and Einsum (float) use the same products; other numeric
 * types compute in double. Resize takes ONNX Runtime's float coordinate
 * arithmetic so it picks the same neighbours, and its bilinear formula.
 * Average pools sum in float in the order ONNX Runtime's MLAS does: in
 * QDQ models these results often sit exactly on a rounding tie of the
 * next QuantizeLinear, where any other order lands on the other side
 * (test/agreement.bats checks both bit for bit against ONNX Runtime).
 *
 * Hot inner loops are compiled for AVX2 and AVX-512 as well as the base
 * ISA, picked at load time (target_clones).
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "foldcache.h"
#include "gemm.h"
#include "ops.h"
#include "par.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
#define NN_SIMD __attribute__((target_clones("arch=x86-64-v4", \
    "arch=x86-64-v3", "default")))
#else
#define NN_SIMD
#endif

#define MAXSP (TENSOR_MAX_RANK - 2)	/* spatial axes */
#define ATTR_MAX ((int64_t)INT32_MAX)	/* bound for attribute sizes */
#define TILE_FLOATS (96 * 1024)		/* im2col tile per thread */
#define FOLD_FLOATS (1024 * 1024)	/* ConvTranspose column budget */
#define PAR_MIN 32768			/* fewer elements: one thread */
/*
 * Multiply-adds below which a product runs on one thread: waking a
 * sleeping worker costs more than such a product (about 0.1 ms under
 * OMP_WAIT_POLICY=passive on a virtual machine).
 */
#define MAC_PAR_MIN ((int64_t)1 << 20)

/* Input i must be present; float unless any_type. */
static const struct tensor *
need(struct op_ctx *c, int i)
{
	const struct tensor *t = ops_input(c, i);

	if (!t) {
		err_set(c->err, "input %d is missing", i);
		return NULL;
	}
	return t;
}

static const struct tensor *
need_float(struct op_ctx *c, int i)
{
	const struct tensor *t = need(c, i);

	if (t && t->dtype != DT_FLOAT) {
		err_set(c->err, "input %d: element type %s is not supported "
		    "(float only)", i, ops_type_name(t->dtype));
		return NULL;
	}
	return t;
}

/* Optional float input: *t NULL when absent; -1 if present but not float. */
static int
opt_float(struct op_ctx *c, int i, const struct tensor **t)
{
	*t = ops_input(c, i);
	if (*t && (*t)->dtype != DT_FLOAT)
		return err_set(c->err, "input %d: element type %s is not "
		    "supported (float only)", i, ops_type_name((*t)->dtype));
	return 0;
}

static int
threads_for(const struct op_ctx *c, int64_t work)
{
	int t = c->threads > 0 ? c->threads : 1;

	if (work < PAR_MIN)
		return 1;
	return t;
}

static int64_t
prod(const int64_t *d, int n)
{
	int64_t p = 1;

	for (int i = 0; i < n; i++)
		p *= d[i];
	return p;
}

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a. */
static int64_t
floordiv(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t
ceildiv(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/*
 * Per-node state: scratch memory, and for convolutions the weights as
 * last packed (with the copy they were packed from, compared on every
 * run, since weights need not be constants; for constant weights, their
 * address). Kept between runs when the interpreter offers a state
 * pointer; else scratch is allocated for the call (and freed by the
 * caller through *tmp) and nothing is cached. Scratch the interpreter
 * shares among its nodes (op_ctx.scratch) is taken before either.
 */
struct nn_state {
	float *p;			/* scratch */
	size_t n;
	float *wcopy;			/* weights packed from, or NULL */
	const float *wconst;		/* constant weights packed from */
	float *packed;
	int packed_lent;		/* packed is the fold cache's */
	int64_t nw, npacked;
};

/* Forget s's packed weights (freed when they are s's own). */
static void
drop_packed(struct nn_state *s)
{
	free(s->wcopy);
	if (!s->packed_lent)
		free(s->packed);
	s->wcopy = NULL, s->packed = NULL, s->wconst = NULL;
	s->packed_lent = 0;
}

static void
nn_state_free(void *state)
{
	struct nn_state *s = state;

	if (s) {
		free(s->p);
		drop_packed(s);
		free(s);
	}
}

static struct nn_state *
nn_state(struct op_ctx *c)
{
	struct nn_state *s;

	if (!c->state)
		return NULL;
	if (!(s = *c->state)) {
		if (!(s = calloc(1, sizeof *s))) {
			err_nomem(c->err);
			return NULL;
		}
		*c->state = s;
	}
	return s;
}

static float *
scratch_get(struct op_ctx *c, int64_t nfloats, float **tmp)
{
	struct nn_state *s;
	float *p;

	*tmp = NULL;
	if (nfloats < 1)
		nfloats = 1;
	if (nfloats > TENSOR_MAX_BYTES / (int64_t)sizeof(float)) {
		err_set(c->err, "scratch of %lld floats is too large",
		    (long long)nfloats);
		return NULL;
	}
	if (c->scratch) {
		/* one buffer for all the interpreter's nodes: the largest
		   is what they take together, not the sum */
		struct op_scratch *sh = c->scratch;

		if (sh->n < (size_t)nfloats * sizeof(float)) {
			if (!(p = malloc((size_t)nfloats * sizeof(float)))) {
				err_nomem(c->err);
				return NULL;
			}
			free(sh->p);
			sh->p = p;
			sh->n = (size_t)nfloats * sizeof(float);
		}
		return sh->p;
	}
	if (!c->state) {
		if (!(*tmp = malloc((size_t)nfloats * sizeof(float))))
			err_nomem(c->err);
		return *tmp;
	}
	if (!(s = nn_state(c)))
		return NULL;
	if (s->n < (size_t)nfloats) {
		if (!(p = malloc((size_t)nfloats * sizeof(float)))) {
			err_nomem(c->err);
			return NULL;
		}
		free(s->p);
		s->p = p;
		s->n = (size_t)nfloats;
	}
	return s->p;
}

/* The key of weights packed so, kept in a fold cache (foldcache.h). */
static int
packed_key(int64_t *key, int64_t group, int64_t mg, int64_t K, int trans)
{
	key[0] = 'P';		/* packed for gemm_packed */
	key[1] = trans;
	key[2] = group, key[3] = mg, key[4] = K;
	key[5] = gemm_pack_a_size(mg, K);
	return 6;
}

/*
 * The weights of a convolution packed per group for gemm_packed: taken
 * from the state when they were packed from the same values (the same
 * constant), or from the fold cache the constant is lent from when an
 * interpreter before packed it so, else packed (into the state, then
 * handed to that cache; or into *tmp to be freed by the caller).
 */
static const float *
packed_weights(struct op_ctx *c, const float *w, int64_t group, int64_t mg,
    int64_t K, int trans, float **tmp)
{
	int64_t asz = gemm_pack_a_size(mg, K), nw = group * mg * K;
	int64_t key[FOLDCACHE_KEY_MAX];
	struct nn_state *s = NULL;
	float *pk, *wc = NULL;
	/* input 1, the weights, a constant: packed once for good */
	int konst = (c->const_in & 2) != 0, nkey = 0;
	/* a constant the fold cache may hold a packing of */
	struct foldcache *fc = konst ? c->fold_cache : NULL;
	size_t wbytes = sizeof(float) * (size_t)nw;

	*tmp = NULL;
	if (c->state && !(s = nn_state(c)))
		return NULL;
	if (s && s->packed && s->nw == nw && s->npacked == asz * group &&
	    (s->wcopy ? memcmp(s->wcopy, w, wbytes) == 0 :
	    konst && s->wconst == w))
		return s->packed;
	if (s && fc) {
		nkey = packed_key(key, group, mg, K, trans);
		if ((pk = (float *)foldcache_form(fc, w, wbytes, key, nkey))) {
			drop_packed(s);
			s->packed = pk, s->packed_lent = 1, s->wconst = w;
			s->nw = nw, s->npacked = asz * group;
			return pk;
		}
	}
	if (s) {
		if ((!konst && !(wc = malloc(wbytes ? wbytes : 1))) ||
		    !(pk = malloc(sizeof(float) * (size_t)(asz * group)))) {
			free(wc);
			err_nomem(c->err);
			return NULL;
		}
		if (wc)
			memcpy(wc, w, wbytes);
		drop_packed(s);
		s->wcopy = wc, s->packed = pk;
		s->wconst = konst ? w : NULL;
		s->nw = nw, s->npacked = asz * group;
	} else if (!(pk = *tmp = malloc(sizeof(float) * (size_t)(asz *
	    group)))) {
		err_nomem(c->err);
		return NULL;
	}
	/* trans: each group's weights are K x mg, packed transposed. */
	for (int64_t gi = 0; gi < group; gi++)
		if (trans)
			gemm_pack_a_t(w + gi * mg * K, mg, K, mg,
			    pk + gi * asz);
		else
			gemm_pack_a(w + gi * mg * K, mg, K, K, pk + gi * asz);
	/* w is the cache's: so is its packing now, lent back */
	if (s && fc) {
		int kept = foldcache_form_keep(fc, w, wbytes, key, nkey, pk,
		    c->err);

		if (kept < 0)
			return NULL;
		s->packed_lent = kept;
	}
	return pk;
}

/*
 * Strides of t's elements when t is broadcast (numpy rules, aligned to the
 * right) to the rank-r shape dims: 0 along broadcast axes. The caller has
 * checked that t broadcasts.
 */
static void
bcast_strides(const struct tensor *t, int r, const int64_t *dims, int64_t *st)
{
	int64_t s = 1;

	for (int i = r - 1; i >= 0; i--) {
		int j = i - (r - t->rank);

		if (j < 0 || t->dims[j] == 1 || dims[i] == 1) {
			st[i] = 0;
			if (j >= 0)
				s *= t->dims[j];
		} else {
			st[i] = s;
			s *= t->dims[j];
		}
	}
}

/* Whether t broadcasts to dims (unidirectionally: t's axes are 1 or equal). */
static int
bcasts_to(const struct tensor *t, int r, const int64_t *dims)
{
	if (t->rank > r)
		return 0;
	for (int i = 0; i < t->rank; i++) {
		int64_t d = t->dims[i], want = dims[r - t->rank + i];

		if (d != 1 && d != want)
			return 0;
	}
	return 1;
}

/* Expand t (float) broadcast to dims into dst (prod(dims) floats). */
static void
bcast_fill(const struct tensor *t, int r, const int64_t *dims, float *dst)
{
	int64_t st[TENSOR_MAX_RANK], idx[TENSOR_MAX_RANK] = { 0 };
	int64_t n = prod(dims, r), off = 0;
	const float *src = t->data;

	if (n == 0)
		return;
	bcast_strides(t, r, dims, st);
	for (int64_t i = 0; i < n; i++) {
		dst[i] = src[off];
		for (int a = r - 1; a >= 0; a--) {
			off += st[a];
			if (++idx[a] < dims[a])
				break;
			off -= st[a] * dims[a];
			idx[a] = 0;
		}
	}
}

/*
 * Sliding-window geometry shared by convolutions and pooling: nd spatial
 * axes of input size in[], kernel k[], and the resulting out[].
 */
enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

struct win {
	int nd;
	int64_t in[MAXSP], out[MAXSP], k[MAXSP];
	int64_t stride[MAXSP], dil[MAXSP], pb[MAXSP], pe[MAXSP];
};

static int
auto_pad(struct op_ctx *c, int *mode)
{
	char buf[32];
	const char *s = attr_string(c->node, "auto_pad", "NOTSET", buf,
	    sizeof buf);

	if (strcmp(s, "NOTSET") == 0 || strcmp(s, "") == 0)
		*mode = PAD_NOTSET;
	else if (strcmp(s, "SAME_UPPER") == 0)
		*mode = PAD_SAME_UPPER;
	else if (strcmp(s, "SAME_LOWER") == 0)
		*mode = PAD_SAME_LOWER;
	else if (strcmp(s, "VALID") == 0)
		*mode = PAD_VALID;
	else
		return err_set(c->err, "unknown auto_pad \"%s\"", s);
	return 0;
}

/* An ints attribute of exactly n values in [lo, ATTR_MAX], or defaults. */
static int
ints_attr(struct op_ctx *c, const char *name, size_t n, int64_t lo,
    int64_t def, int64_t *v)
{
	size_t cnt;
	const int64_t *a = attr_ints(c->node, name, &cnt);

	if (!a || cnt == 0) {
		for (size_t i = 0; i < n; i++)
			v[i] = def;
		return 0;
	}
	if (cnt != n)
		return err_set(c->err, "attribute %s has %zu values, expected "
		    "%zu", name, cnt, n);
	for (size_t i = 0; i < n; i++) {
		if (a[i] < lo || a[i] > ATTR_MAX)
			return err_set(c->err, "attribute %s: value %lld is "
			    "out of range", name, (long long)a[i]);
		v[i] = a[i];
	}
	return 0;
}

/* strides, dilations and pads for w->nd axes. */
static int
win_attrs(struct op_ctx *c, struct win *w, int with_dil)
{
	int64_t pads[2 * MAXSP];

	if (ints_attr(c, "strides", w->nd, 1, 1, w->stride) == -1)
		return -1;
	if (with_dil) {
		if (ints_attr(c, "dilations", w->nd, 1, 1, w->dil) == -1)
			return -1;
	} else
		for (int i = 0; i < w->nd; i++)
			w->dil[i] = 1;
	if (ints_attr(c, "pads", 2 * w->nd, 0, 0, pads) == -1)
		return -1;
	for (int i = 0; i < w->nd; i++) {
		w->pb[i] = pads[i];
		w->pe[i] = pads[w->nd + i];
	}
	return 0;
}

/* kernel_shape, when given, must match the weights (or sets w->k for pools). */
static int
kernel_attr(struct op_ctx *c, struct win *w, int required)
{
	size_t n;
	const int64_t *k = attr_ints(c->node, "kernel_shape", &n);

	if (!k) {
		if (required)
			return err_set(c->err, "attribute kernel_shape is "
			    "missing");
		return 0;
	}
	if (n != (size_t)w->nd)
		return err_set(c->err, "kernel_shape has %zu values for %d "
		    "spatial axes", n, w->nd);
	for (int i = 0; i < w->nd; i++) {
		if (k[i] < 1 || k[i] > ATTR_MAX)
			return err_set(c->err, "kernel_shape: value %lld is "
			    "out of range", (long long)k[i]);
		if (!required && k[i] != w->k[i])
			return err_set(c->err, "kernel_shape %lld on spatial "
			    "axis %d differs from the weights' %lld",
			    (long long)k[i], i, (long long)w->k[i]);
		w->k[i] = k[i];
	}
	return 0;
}

/* Output sizes (and pads for auto_pad) of a convolution or pooling window. */
static int
win_out(struct op_ctx *c, struct win *w, int mode, int ceil_mode)
{
	for (int i = 0; i < w->nd; i++) {
		int64_t in = w->in[i], s = w->stride[i];
		int64_t eff = (w->k[i] - 1) * w->dil[i] + 1, span, total;

		switch (mode) {
		case PAD_SAME_UPPER:
		case PAD_SAME_LOWER:
			w->out[i] = ceildiv(in, s);
			total = (w->out[i] - 1) * s + eff - in;
			if (total < 0)
				total = 0;
			if (mode == PAD_SAME_UPPER) {
				w->pb[i] = total / 2;
				w->pe[i] = total - w->pb[i];
			} else {
				w->pe[i] = total / 2;
				w->pb[i] = total - w->pe[i];
			}
			if (in == 0)
				w->out[i] = 0;
			continue;
		case PAD_VALID:
			w->pb[i] = w->pe[i] = 0;
			break;
		}
		span = in + w->pb[i] + w->pe[i] - eff;
		if (span < 0)
			return err_set(c->err, "kernel extent %lld is larger "
			    "than the padded input %lld on spatial axis %d",
			    (long long)eff, (long long)(in + w->pb[i] +
			    w->pe[i]), i);
		if (ceil_mode) {
			w->out[i] = ceildiv(span, s) + 1;
			/* A last window starting in the end padding goes. */
			if ((w->out[i] - 1) * s >= in + w->pb[i])
				w->out[i]--;
		} else
			w->out[i] = span / s + 1;
	}
	return 0;
}

/*
 * Output positions [lo, hi) of one row whose input index
 * pos*stride + off lies in [0, n).
 */
static void
valid_range(int64_t npos, int64_t stride, int64_t off, int64_t n,
    int64_t *lo, int64_t *hi)
{
	*lo = ceildiv(-off, stride);
	*hi = floordiv(n - 1 - off, stride) + 1;
	if (*lo < 0)
		*lo = 0;
	if (*hi > npos)
		*hi = npos;
	if (*hi < *lo)
		*hi = *lo;
}

/* ---------------------------------------------------------------- */
/* Conv */

/* dst[i] = src[i * stride + off] for i in [a, b), zero outside [lo, hi). */
NN_SIMD static void
gather_row(float *dst, const float *src, int64_t a, int64_t b, int64_t lo,
    int64_t hi, int64_t stride, int64_t off)
{
	int64_t i;

	if (lo < a)
		lo = a;
	if (hi > b)
		hi = b;
	if (hi < lo)
		hi = lo;
	for (i = a; i < lo; i++)
		dst[i - a] = 0;
	if (stride == 1) {
		if (hi > lo)
			memcpy(dst + (lo - a), src + lo + off,
			    (size_t)(hi - lo) * sizeof *dst);
	} else {
#pragma omp simd
		for (i = lo; i < hi; i++)
			dst[i - a] = src[i * stride + off];
	}
	for (i = hi; i < b; i++)
		dst[i - a] = 0;
}

/*
 * Unfold the output positions [p0, p1) of a 2-D convolution: rows
 * (ci, kh, kw), one column per output position, (p1 - p0) floats a row.
 */
static void
im2col_2d(const float *x, int64_t cin, const struct win *g, int64_t p0,
    int64_t p1, float *col)
{
	int64_t H = g->in[0], W = g->in[1], OW = g->out[1], tw = p1 - p0;

	for (int64_t ci = 0; ci < cin; ci++)
		for (int64_t kh = 0; kh < g->k[0]; kh++)
			for (int64_t kw = 0; kw < g->k[1]; kw++) {
				const float *xc = x + ci * H * W;
				int64_t off = kw * g->dil[1] - g->pb[1];
				int64_t lo, hi, p = p0;

				valid_range(OW, g->stride[1], off, W, &lo,
				    &hi);
				while (p < p1) {
					int64_t oh = p / OW, ow0 = p % OW;
					int64_t ow1 = OW < ow0 + (p1 - p) ?
					    OW : ow0 + (p1 - p);
					int64_t ih = oh * g->stride[0] -
					    g->pb[0] + kh * g->dil[0];

					if (ih < 0 || ih >= H)
						memset(col, 0, (size_t)(ow1 -
						    ow0) * sizeof *col);
					else
						gather_row(col, xc + ih * W,
						    ow0, ow1, lo, hi,
						    g->stride[1], off);
					col += ow1 - ow0;
					p += ow1 - ow0;
				}
			}
	(void)tw;
}

/* The same for any number of spatial axes, one element at a time. */
static void
im2col_nd(const float *x, int64_t cin, const struct win *g, int64_t p0,
    int64_t p1, float *col)
{
	int nd = g->nd;
	int64_t S = prod(g->in, nd), K = prod(g->k, nd);

	for (int64_t ci = 0; ci < cin; ci++)
		for (int64_t kr = 0; kr < K; kr++) {
			int64_t kidx[MAXSP], o[MAXSP], rem = kr, p = p0;

			for (int a = nd - 1; a >= 0; a--) {
				kidx[a] = rem % g->k[a];
				rem /= g->k[a];
			}
			rem = p0;
			for (int a = nd - 1; a >= 0; a--) {
				o[a] = rem % g->out[a];
				rem /= g->out[a];
			}
			for (; p < p1; p++) {
				int64_t off = 0, ok = 1;

				for (int a = 0; a < nd; a++) {
					int64_t i = o[a] * g->stride[a] -
					    g->pb[a] + kidx[a] * g->dil[a];

					if (i < 0 || i >= g->in[a]) {
						ok = 0;
						break;
					}
					off = off * g->in[a] + i;
				}
				*col++ = ok ? x[ci * S + off] : 0;
				for (int a = nd - 1; a >= 0; a--) {
					if (++o[a] < g->out[a])
						break;
					o[a] = 0;
				}
			}
		}
}

static void
im2col(const float *x, int64_t cin, const struct win *g, int64_t p0,
    int64_t p1, float *col)
{
	if (g->nd == 2)
		im2col_2d(x, cin, g, p0, p1, col);
	else
		im2col_nd(x, cin, g, p0, p1, col);
}

/* Rows of y (m rows of ld floats), columns [p0, p1), set to the bias. */
static void
fill_bias(float *y, int64_t m, int64_t ld, int64_t p0, int64_t p1,
    const float *bias)
{
	for (int64_t i = 0; i < m; i++) {
		float *r = y + i * ld, b = bias[i];

#pragma omp simd
		for (int64_t p = p0; p < p1; p++)
			r[p] = b;
	}
}

/*
 * Grouped convolution as matrix products: per image and group,
 * Y (mg x P) = W (mg x K) * cols (K x P), with P output positions and
 * K = cin_per_group * kernel size.
 */
struct gemm_conv_job {
	const float *xg, *wg;
	float *yg;
	const float *bg;
	const struct win *g;
	int64_t cg, mg, K, P, tw;
	float *buf;			/* K x tw floats per thread */
	int pointwise;
};

/* par_for chunk t: output positions [t * tw, ...) of conv_gemm. */
static void
gemm_conv_tile(void *ctx, int64_t t, int w)
{
	const struct gemm_conv_job *j = ctx;
	int64_t p0 = t * j->tw, P = j->P, K = j->K;
	int64_t p1 = p0 + j->tw < P ? p0 + j->tw : P;
	float *col = NULL;
	struct err e;

	if (!j->pointwise) {
		col = j->buf + K * j->tw * w;
		im2col(j->xg, j->cg, j->g, p0, p1, col);
	}
	if (j->bg)
		fill_bias(j->yg, j->mg, P, p0, p1, j->bg);
	/* Sizes were checked by the caller: cannot fail. */
	(void)gemm_sgemm1(0, 0, j->mg, p1 - p0, K, 1, j->wg, K,
	    j->pointwise ? j->xg + p0 : col, j->pointwise ? P : p1 - p0,
	    j->bg ? 1 : 0, j->yg + p0, P, &e);
}

static int
conv_gemm(struct op_ctx *c, const float *x, const float *w,
    const float *bias, float *y, int64_t n, int64_t cin, int64_t m,
    int64_t group, const struct win *g)
{
	int nd = g->nd, threads = c->threads > 0 ? c->threads : 1;
	int64_t cg = cin / group, mg = m / group, S = prod(g->in, nd);
	int64_t P = prod(g->out, nd), K = cg * prod(g->k, nd);
	int64_t tw, ntiles;
	int pointwise = 1;
	float *buf = NULL, *tmp = NULL;
	int rc = 0;

	for (int i = 0; i < nd; i++)
		if (g->k[i] != 1 || g->stride[i] != 1 || g->pb[i] != 0 ||
		    g->pe[i] != 0)
			pointwise = 0;
	if (K > INT32_MAX || P > INT32_MAX || mg > INT32_MAX)
		return err_set(c->err, "convolution is too large");
	/* Tiles of output positions, a multiple of 16 wide. */
	tw = TILE_FLOATS / (K ? K : 1);
	tw = tw < 16 ? 16 : (tw + 15) / 16 * 16;
	if (tw > P)
		tw = P;
	ntiles = tw ? (P + tw - 1) / tw : 0;
	if (mg * P * K < MAC_PAR_MIN)
		threads = 1;
	if (ntiles < 2 * threads) {
		/* Few positions: unfold all at once, split the rows instead. */
		if (!pointwise && !(buf = scratch_get(c, K * P, &tmp)))
			return -1;
		for (int64_t ni = 0; ni < n; ni++)
			for (int64_t gi = 0; gi < group; gi++) {
				const float *xg = x + (ni * cin + gi * cg) * S;
				float *yg = y + (ni * m + gi * mg) * P;

				if (!pointwise)
					im2col(xg, cg, g, 0, P, buf);
				if (bias)
					fill_bias(yg, mg, P, 0, P,
					    bias + gi * mg);
				if (gemm_sgemm(0, 0, mg, P, K, 1,
				    w + gi * mg * K, K, pointwise ? xg : buf,
				    P, bias ? 1 : 0, yg, P, threads,
				    c->err) == -1) {
					rc = -1;
					goto out;
				}
			}
		goto out;
	}
	if (!pointwise && !(buf = scratch_get(c, K * tw * threads, &tmp)))
		return -1;
	gemm_init_threads();
	for (int64_t ni = 0; ni < n; ni++)
		for (int64_t gi = 0; gi < group; gi++) {
			const float *xg = x + (ni * cin + gi * cg) * S;
			const float *wg = w + gi * mg * K;
			float *yg = y + (ni * m + gi * mg) * P;
			const float *bg = bias ? bias + gi * mg : NULL;

			struct gemm_conv_job j = { xg, wg, yg, bg, g, cg,
			    mg, K, P, tw, buf, pointwise };

			par_for(ntiles, threads, gemm_conv_tile, &j);
		}
out:
	free(tmp);
	return rc;
}

static void
unfold_init(struct gemm_unfold *u, const float *x, const struct win *g)
{
	u->x = x;
	u->h = g->in[0], u->w = g->in[1], u->oh = g->out[0], u->ow = g->out[1];
	u->kh = g->k[0], u->kw = g->k[1];
	u->sh = g->stride[0], u->sw = g->stride[1];
	u->dh = g->dil[0], u->dw = g->dil[1];
	u->ph = g->pb[0], u->pw = g->pb[1];
}

/* What every block of a packed convolution needs. */
struct conv_job {
	const float *pa;		/* weights packed per group */
	const float *x, *bias;
	float *y;
	const struct win *g;
	int64_t cin, m, group, K;
	int pointwise;
	/* how conv_packed splits the work */
	float *buf;			/* bsz floats per thread */
	int64_t bsz, tw, ntiles, P, panels, ni, gi;
	int threads;
};

/* Output channels [i0, i1) and positions [j0, j1) of image ni, group gi. */
static void
conv_block(const struct conv_job *cb, int64_t ni, int64_t gi, int64_t i0,
    int64_t i1, int64_t j0, int64_t j1, float *scratch)
{
	const struct win *g = cb->g;
	int64_t cg = cb->cin / cb->group, mg = cb->m / cb->group;
	int64_t S = g->in[0] * g->in[1], P = g->out[0] * g->out[1];
	const float *xg = cb->x + (ni * cb->cin + gi * cg) * S;
	struct gemm_rows rows = { xg, P };
	struct gemm_unfold u;

	unfold_init(&u, xg, g);
	gemm_packed(cb->pa + gi * gemm_pack_a_size(mg, cb->K), mg, cb->K, i0,
	    i1, j0, j1, cb->pointwise ? gemm_fill_rows : gemm_fill_unfold,
	    cb->pointwise ? (void *)&rows : (void *)&u,
	    cb->bias ? cb->bias + gi * mg : NULL, 0,
	    cb->y + (ni * cb->m + gi * mg) * P, P, scratch);
}

/* par_for chunk it: a tile of tw positions of one image and group. */
static void
conv_tile(void *ctx, int64_t it, int w)
{
	const struct conv_job *cb = ctx;
	int64_t ni = it / (cb->group * cb->ntiles);
	int64_t gi = it / cb->ntiles % cb->group, t = it % cb->ntiles;
	int64_t j1 = (t + 1) * cb->tw < cb->P ? (t + 1) * cb->tw : cb->P;

	conv_block(cb, ni, gi, 0, cb->m / cb->group, t * cb->tw, j1,
	    cb->buf + cb->bsz * w);
}

/* Share t of nt of `panels` row panels: rows [*i0, *i1); 0 if empty. */
static int
panel_share(int64_t panels, int64_t t, int nt, int64_t *i0, int64_t *i1)
{
	*i0 = panels * t / nt * GEMM_MR;
	*i1 = panels * (t + 1) / nt * GEMM_MR;
	return *i0 < *i1;
}

/* par_for chunk t of threads: its range of output channels, all positions. */
static void
conv_rows(void *ctx, int64_t t, int w)
{
	const struct conv_job *cb = ctx;
	int64_t i0, i1;

	if (panel_share(cb->panels, t, cb->threads, &i0, &i1))
		conv_block(cb, cb->ni, cb->gi, i0, i1, 0, cb->P,
		    cb->buf + cb->bsz * w);
}

/*
 * Convolution on gemm_packed: weights packed per group into the node's
 * scratch, then tiles of output positions (or, when there are too few,
 * ranges of output channels) spread over the threads.
 */
static int
conv_packed(struct op_ctx *c, const float *x, const float *w,
    const float *bias, float *y, int64_t n, int64_t cin, int64_t m,
    int64_t group, const struct win *g, int pointwise)
{
	int threads = c->threads > 0 ? c->threads : 1;
	int64_t cg = cin / group, mg = m / group;
	int64_t P = g->out[0] * g->out[1], K = cg * g->k[0] * g->k[1];
	int64_t bsz = gemm_packed_scratch(), tw, ntiles, items;
	struct conv_job cb;
	const float *pa;
	float *buf, *tmp, *ptmp;

	if (mg * P * K < MAC_PAR_MIN)
		threads = 1;
	if (!(pa = packed_weights(c, w, group, mg, K, 0, &ptmp)))
		return -1;
	if (!(buf = scratch_get(c, bsz * threads, &tmp))) {
		free(ptmp);
		return -1;
	}
	cb.pa = pa, cb.x = x, cb.bias = bias, cb.y = y, cb.g = g;
	cb.cin = cin, cb.m = m, cb.group = group, cb.K = K;
	cb.pointwise = pointwise;
	tw = (P + 4 * threads - 1) / (4 * threads);
	tw = (tw + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
	tw = tw < 2 * GEMM_NR ? 2 * GEMM_NR : tw > 4096 ? 4096 : tw;
	ntiles = (P + tw - 1) / tw;
	items = n * group * ntiles;
	cb.buf = buf, cb.bsz = bsz, cb.tw = tw, cb.ntiles = ntiles;
	cb.P = P, cb.threads = threads;
	if (items >= threads || mg <= GEMM_MR) {
		par_for(items, threads, conv_tile, &cb);
	} else {
		/* Few positions: each thread takes a range of channels. */
		cb.panels = (mg + GEMM_MR - 1) / GEMM_MR;
		for (cb.ni = 0; cb.ni < n; cb.ni++)
			for (cb.gi = 0; cb.gi < group; cb.gi++)
				par_for(threads, threads, conv_rows, &cb);
	}
	free(tmp);
	free(ptmp);
	return 0;
}

/*
 * Depthwise 2-D convolution of one plane: each output channel sees one
 * input channel. Inside the plane (where every tap is in bounds) blocks
 * of 16 outputs accumulate in registers over all taps; the borders take
 * the taps one row at a time, checking bounds.
 */
#define DW_BLOCK 16

typedef float v16f __attribute__((vector_size(DW_BLOCK * sizeof(float))));
typedef int v16i __attribute__((vector_size(DW_BLOCK * sizeof(int))));

/* The vectors stay in registers; they are passed by address only to
 * keep clear of the vector-return ABI of the base ISA. */
static inline __attribute__((always_inline)) void
v16_splat(v16f *v, float f)
{
	for (int i = 0; i < DW_BLOCK; i++)
		(*v)[i] = f;
}

/* Add w * (p[0], p[s], ..., p[15 s]) to *acc. */
static inline __attribute__((always_inline)) void
v16_madd(v16f *acc, float w, const float *p, int64_t s)
{
	/* For s 2: p[0..15] and p[15..30], never past p[15 s]. */
#ifndef __clang__
	const v16i even = { 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25,
	    27, 29, 31 };
#endif
	v16f a, b, wv;

	v16_splat(&wv, w);
	if (s == 1)
		memcpy(&a, p, sizeof a);
	else if (s == 2) {
		memcpy(&a, p, sizeof a);
		memcpy(&b, p + DW_BLOCK - 1, sizeof b);
#ifdef __clang__
		/* clang has no __builtin_shuffle; the same indices */
		a = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14,
		    17, 19, 21, 23, 25, 27, 29, 31);
#else
		a = __builtin_shuffle(a, b, even);
#endif
	} else {
		float t[DW_BLOCK];

		for (int i = 0; i < DW_BLOCK; i++)
			t[i] = p[i * s];
		memcpy(&a, t, sizeof a);
	}
	*acc += wv * a;
}

/*
 * Depthwise 2-D convolution of one plane: each output channel sees one
 * input channel. The plane is first copied into a zero-bordered buffer
 * (unless it needs no padding) so that every output is computed the same
 * way without bounds checks: blocks of 16 outputs accumulate in
 * registers over all taps, the last block of a row moved back to end at
 * the row's end (recomputing a few outputs).
 */
struct dwpad {
	int64_t top, left, rows, cols;	/* the padded plane */
};

static void
dw_pad_geom(const struct win *g, struct dwpad *p)
{
	int64_t need_w = (g->out[1] - 1) * g->stride[1] +
	    (g->k[1] - 1) * g->dil[1] + 1;
	int64_t need_h = (g->out[0] - 1) * g->stride[0] +
	    (g->k[0] - 1) * g->dil[0] + 1;

	p->top = g->pb[0], p->left = g->pb[1];
	/* Wide enough for a whole block even on narrow rows. */
	if (need_w < (DW_BLOCK - 1) * g->stride[1] + (g->k[1] - 1) *
	    g->dil[1] + 1)
		need_w = (DW_BLOCK - 1) * g->stride[1] + (g->k[1] - 1) *
		    g->dil[1] + 1;
	p->cols = need_w > g->in[1] + p->left ? need_w : g->in[1] + p->left;
	p->rows = need_h > g->in[0] + p->top ? need_h : g->in[0] + p->top;
}

/* Floats of padded plane one thread needs (with a block of slack). */
static int64_t
dw_pad_size(const struct win *g)
{
	struct dwpad p;

	dw_pad_geom(g, &p);
	return p.rows * p.cols + 2 * DW_BLOCK;
}

/* One depthwise output, every tap checked against the input. */
static inline __attribute__((always_inline)) float
dw_point(const float *x, const float *wk, float bias, const struct win *g,
    int64_t oh, int64_t ow)
{
	float s = bias;

	for (int64_t kh = 0; kh < g->k[0]; kh++) {
		int64_t ih = oh * g->stride[0] - g->pb[0] + kh * g->dil[0];

		if (ih < 0 || ih >= g->in[0])
			continue;
		for (int64_t kw = 0; kw < g->k[1]; kw++) {
			int64_t iw = ow * g->stride[1] - g->pb[1] +
			    kw * g->dil[1];

			if (iw >= 0 && iw < g->in[1])
				s += wk[kh * g->k[1] + kw] * x[ih * g->in[1] +
				    iw];
		}
	}
	return s;
}

/*
 * Rows of at least 4 blocks: the outputs whose taps all lie inside the
 * row in blocks, the few others each with its taps checked.
 */
static inline __attribute__((always_inline)) void
dw_plane_wide(const float *x, const float *wk, float bias, float *y,
    const struct win *g, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
    int64_t dh, int64_t dw)
{
	int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
	int64_t olo = ceildiv(g->pb[1], sw);
	int64_t ohi = floordiv(W - 1 + g->pb[1] - (KW - 1) * dw, sw) + 1;

	olo = olo > OW ? OW : olo;
	ohi = ohi > OW ? OW : ohi < olo ? olo : ohi;
	for (int64_t oh = 0; oh < OH; oh++) {
		float *yr = y + oh * OW;
		int64_t ow;

		for (ow = 0; ow < olo; ow++)
			yr[ow] = dw_point(x, wk, bias, g, oh, ow);
		for (ow = ohi; ow < OW; ow++)
			yr[ow] = dw_point(x, wk, bias, g, oh, ow);
		for (ow = olo; ohi - olo >= DW_BLOCK && ow < ohi; ) {
			int64_t o = ow + DW_BLOCK <= ohi ? ow : ohi - DW_BLOCK;
			v16f acc;

			v16_splat(&acc, bias);
			for (int64_t kh = 0; kh < KH; kh++) {
				int64_t ih = oh * sh - g->pb[0] + kh * dh;
				const float *xs = x + ih * W + o * sw -
				    g->pb[1];
				const float *wr = wk + kh * KW;

				if (ih < 0 || ih >= H)
					continue;
				for (int64_t kw = 0; kw < KW; kw++)
					v16_madd(&acc, wr[kw], xs + kw * dw,
					    sw);
			}
			memcpy(yr + o, &acc, sizeof acc);
			ow = o + DW_BLOCK;
		}
		for (; ow < ohi; ow++)
			yr[ow] = dw_point(x, wk, bias, g, oh, ow);
	}
}

static inline __attribute__((always_inline)) void dw_rows(const float *xp,
    int64_t ld, const float *wk, float bias, float *y, int64_t OH,
    int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t dh,
    int64_t dw);

/*
 * Call f with the arguments args and then the kernel's geometry (KH, KW,
 * sh, sw, dh, dw): as constants for 3x3 and 5x5 kernels of width stride
 * 1 or 2 without dilation (MobileNet's; text recognisers stride 2 in
 * height only), so the compiler unrolls their taps; the summation order,
 * and so every output, stays the same.
 */
#define DW_GEOM_ARGS(k, s) , k, k, sh, s, 1, 1
#define DW_SPECIALISE(f, args)						\
	do {								\
		int sq_ = KH == KW && dh == 1 && dw == 1;		\
									\
		if (sq_ && KH == 3 && sw == 1)				\
			f(DW_UNPAREN args DW_GEOM_ARGS(3, 1));		\
		else if (sq_ && KH == 3 && sw == 2)			\
			f(DW_UNPAREN args DW_GEOM_ARGS(3, 2));		\
		else if (sq_ && KH == 5 && sw == 1)			\
			f(DW_UNPAREN args DW_GEOM_ARGS(5, 1));		\
		else if (sq_ && KH == 5 && sw == 2)			\
			f(DW_UNPAREN args DW_GEOM_ARGS(5, 2));		\
		else							\
			f(DW_UNPAREN args, KH, KW, sh, sw, dh, dw);	\
	} while (0)
#define DW_UNPAREN(...) __VA_ARGS__

NN_SIMD static void
dw_plane(const float *x, const float *wk, float bias, float *y,
    const struct win *g, float *buf)
{
	int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
	int64_t KH = g->k[0], KW = g->k[1], sh = g->stride[0],
	    sw = g->stride[1], dh = g->dil[0], dw = g->dil[1];
	struct dwpad p;
	const float *xp;
	int64_t ld;

	dw_pad_geom(g, &p);
	if (OW >= 4 * DW_BLOCK && H * W > 16384) {
		/* Big planes: the borders checked, no copy. */
		DW_SPECIALISE(dw_plane_wide, (x, wk, bias, y, g));
		return;
	}
	if (p.top == 0 && p.left == 0 && p.cols == W && p.rows == H &&
	    OW >= DW_BLOCK) {
		xp = x;
		ld = W;
	} else {
		float *d = buf;

		memset(d, 0, sizeof(float) * (size_t)(p.top * p.cols));
		d += p.top * p.cols;
		for (int64_t i = 0; i < H; i++, d += p.cols) {
			memset(d, 0, sizeof(float) * (size_t)p.left);
			memcpy(d + p.left, x + i * W,
			    sizeof(float) * (size_t)W);
			memset(d + p.left + W, 0, sizeof(float) *
			    (size_t)(p.cols - p.left - W));
		}
		memset(d, 0, sizeof(float) * (size_t)((p.rows - p.top - H) *
		    p.cols + 2 * DW_BLOCK));
		xp = buf;
		ld = p.cols;
	}
	DW_SPECIALISE(dw_rows, (xp, ld, wk, bias, y, OH, OW));
}

/*
 * Depthwise outputs from a plane (xp, row stride ld) where every tap is
 * in bounds; the geometry as arguments, constants where dw_plane calls
 * it for the common kernels, so that the taps unroll.
 */
static inline __attribute__((always_inline)) void
dw_rows(const float *xp, int64_t ld, const float *wk, float bias, float *y,
    int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
    int64_t dh, int64_t dw)
{
	for (int64_t oh = 0; oh < OH; oh++) {
		float *yr = y + oh * OW;
		const float *xr = xp + oh * sh * ld;

		for (int64_t ow = 0; ow < OW; ) {
			int64_t o = ow + DW_BLOCK <= OW || OW < DW_BLOCK ? ow :
			    OW - DW_BLOCK;
			v16f acc;

			v16_splat(&acc, bias);
			for (int64_t kh = 0; kh < KH; kh++) {
				const float *xs = xr + kh * dh * ld + o * sw;
				const float *wr = wk + kh * KW;

				for (int64_t kw = 0; kw < KW; kw++)
					v16_madd(&acc, wr[kw], xs + kw * dw,
					    sw);
			}
			if (OW < DW_BLOCK) {
				float t[DW_BLOCK];

				memcpy(t, &acc, sizeof acc);
				memcpy(yr, t, sizeof(float) * (size_t)OW);
				break;
			}
			memcpy(yr + o, &acc, sizeof acc);
			ow = o + DW_BLOCK;
		}
	}
}

struct dw_job {
	const float *x, *w, *bias;
	float *y;
	const struct win *g;
	int64_t cin, m, mult, S, P, KK, psz;
	float *buf;			/* psz floats per thread */
};

/* par_for chunk i: output plane i (image i / m, channel i % m). */
static void
dw_chunk(void *ctx, int64_t i, int w)
{
	const struct dw_job *j = ctx;
	int64_t ni = i / j->m, oc = i % j->m;

	dw_plane(j->x + (ni * j->cin + oc / j->mult) * j->S, j->w + oc * j->KK,
	    j->bias ? j->bias[oc] : 0, j->y + i * j->P, j->g,
	    j->buf + j->psz * w);
}

static int
conv_depthwise(struct op_ctx *c, const float *x, const float *w,
    const float *bias, float *y, int64_t n, int64_t cin, int64_t m,
    const struct win *g)
{
	int64_t mult = m / cin, S = g->in[0] * g->in[1];
	int64_t P = g->out[0] * g->out[1], KK = g->k[0] * g->k[1];
	int64_t psz = dw_pad_size(g);
	int threads = n * m * P * KK < MAC_PAR_MIN / 4 ? 1 :
	    c->threads > 0 ? c->threads : 1;
	float *buf, *tmp;

	struct dw_job j = { x, w, bias, y, g, cin, m, mult, S, P, KK, psz,
	    NULL };

	if (!(j.buf = buf = scratch_get(c, psz * threads, &tmp)))
		return -1;
	par_for(n * m, threads, dw_chunk, &j);
	free(tmp);
	return 0;
}

/* 1-D windows become 2-D ones with a height of one. */
static void
win_to_2d(struct win *g)
{
	if (g->nd != 1)
		return;
	g->in[1] = g->in[0], g->out[1] = g->out[0], g->k[1] = g->k[0];
	g->stride[1] = g->stride[0], g->dil[1] = g->dil[0];
	g->pb[1] = g->pb[0], g->pe[1] = g->pe[0];
	g->in[0] = g->out[0] = g->k[0] = g->stride[0] = g->dil[0] = 1;
	g->pb[0] = g->pe[0] = 0;
	g->nd = 2;
}

static int
conv_run(struct op_ctx *c)
{
	const struct tensor *x, *w, *b;
	int64_t group, n, cin, m, ydims[TENSOR_MAX_RANK];
	struct win g;
	int mode;

	if (!(x = need_float(c, 0)) || !(w = need_float(c, 1)) ||
	    opt_float(c, 2, &b) == -1)
		return -1;
	if (x->rank < 3)
		return err_set(c->err, "input 0: expected rank 3 or more "
		    "(N x C x spatial), got %d", x->rank);
	if (w->rank != x->rank)
		return err_set(c->err, "input 1: weight rank %d differs from "
		    "input rank %d", w->rank, x->rank);
	group = attr_int(c->node, "group", 1);
	n = x->dims[0], cin = x->dims[1], m = w->dims[0];
	if (group < 1 || group > ATTR_MAX)
		return err_set(c->err, "group %lld is out of range",
		    (long long)group);
	if (cin != w->dims[1] * group)
		return err_set(c->err, "input 1: weight has %lld input "
		    "channels per group, input 0 has %lld channels in %lld "
		    "groups", (long long)w->dims[1], (long long)cin,
		    (long long)group);
	if (m % group != 0)
		return err_set(c->err, "input 1: %lld output channels do not "
		    "divide into %lld groups", (long long)m, (long long)group);
	if (b && (b->rank != 1 || b->nelem != m))
		return err_set(c->err, "input 2: bias must be 1-D with %lld "
		    "values", (long long)m);
	g.nd = x->rank - 2;
	for (int i = 0; i < g.nd; i++) {
		g.in[i] = x->dims[2 + i];
		g.k[i] = w->dims[2 + i];
		if (g.k[i] < 1)
			return err_set(c->err, "input 1: empty kernel");
	}
	if (kernel_attr(c, &g, 0) == -1 || auto_pad(c, &mode) == -1 ||
	    win_attrs(c, &g, 1) == -1 || win_out(c, &g, mode, 0) == -1)
		return -1;
	ydims[0] = n, ydims[1] = m;
	for (int i = 0; i < g.nd; i++)
		ydims[2 + i] = g.out[i];
	if (tensor_alloc_uninit(&c->out[0], DT_FLOAT, x->rank, ydims,
	    c->err) == -1)
		return -1;
	if (c->out[0].nelem == 0)
		return 0;
	win_to_2d(&g);
	if (g.nd == 2 && group == cin && w->dims[1] == 1 && group > 1) {
		return conv_depthwise(c, x->data, w->data, b ? b->data : NULL,
		    c->out[0].data, n, cin, m, &g);
	}
	if (g.nd == 2 && gemm_packed_ok()) {
		int pointwise = g.k[0] == 1 && g.k[1] == 1 &&
		    g.stride[0] == 1 && g.stride[1] == 1 && g.pb[0] == 0 &&
		    g.pb[1] == 0 && g.pe[0] == 0 && g.pe[1] == 0;

		return conv_packed(c, x->data, w->data, b ? b->data : NULL,
		    c->out[0].data, n, cin, m, group, &g, pointwise);
	}
	return conv_gemm(c, x->data, w->data, b ? b->data : NULL,
	    c->out[0].data, n, cin, m, group, &g);
}

/* ---------------------------------------------------------------- */
/* ConvTranspose */

/*
 * Add cs[iw] into yr[iw * stride + off] for iw in [iw0, iw1) whose
 * output column lies in [0, ow).
 */
static void
fold_row(float *yr, const float *cs, int64_t iw0, int64_t iw1,
    int64_t stride, int64_t off, int64_t ow)
{
	int64_t lo, hi;

	valid_range(iw1, stride, off, ow, &lo, &hi);
	if (lo < iw0)
		lo = iw0;
	if (stride == 1) {
#pragma omp simd
		for (int64_t iw = lo; iw < hi; iw++)
			yr[iw + off] += cs[iw];
	} else
		for (int64_t iw = lo; iw < hi; iw++)
			yr[iw * stride + off] += cs[iw];
}

/*
 * Fold the columns of input positions [p0, p1) into the output: rows
 * (mo, k...), each adding into output channel mo.
 */
static void
col2im(const float *col, int64_t mo, const struct win *g, int64_t p0,
    int64_t p1, float *y)
{
	int nd = g->nd;
	int64_t K = prod(g->k, nd), tw = p1 - p0;

	if (nd == 2) {
		int64_t W = g->in[1], OH = g->out[0], OW = g->out[1];

		for (int64_t kr = 0; kr < K; kr++) {
			int64_t kh = kr / g->k[1], kw = kr % g->k[1];
			const float *cr = col + (mo * K + kr) * tw;
			int64_t off = kw * g->dil[1] - g->pb[1], p = p0;

			while (p < p1) {
				int64_t ih = p / W, iw0 = p % W;
				int64_t iw1 = W < iw0 + (p1 - p) ? W :
				    iw0 + (p1 - p);
				int64_t oh = ih * g->stride[0] - g->pb[0] +
				    kh * g->dil[0];

				if (oh >= 0 && oh < OH)
					fold_row(y + oh * OW, cr + p - p0 - iw0,
					    iw0, iw1, g->stride[1], off, OW);
				p += iw1 - iw0;
			}
		}
		return;
	}
	for (int64_t kr = 0; kr < K; kr++) {
		int64_t kidx[MAXSP], ii[MAXSP], rem = kr;
		const float *cr = col + (mo * K + kr) * tw;

		for (int a = nd - 1; a >= 0; a--) {
			kidx[a] = rem % g->k[a];
			rem /= g->k[a];
		}
		rem = p0;
		for (int a = nd - 1; a >= 0; a--) {
			ii[a] = rem % g->in[a];
			rem /= g->in[a];
		}
		for (int64_t p = p0; p < p1; p++) {
			int64_t off = 0, ok = 1;

			for (int a = 0; a < nd; a++) {
				int64_t o = ii[a] * g->stride[a] - g->pb[a] +
				    kidx[a] * g->dil[a];

				if (o < 0 || o >= g->out[a]) {
					ok = 0;
					break;
				}
				off = off * g->out[a] + o;
			}
			if (ok)
				y[off] += cr[p - p0];
			for (int a = nd - 1; a >= 0; a--) {
				if (++ii[a] < g->in[a])
					break;
				ii[a] = 0;
			}
		}
	}
}

struct fold_job {
	const float *pa;
	int64_t K, cg;
	const struct win *g;
	struct gemm_rows *r;
	int64_t p0, p1, np;
	int threads;
	float *col, *scratch;		/* K x tile columns; per thread */
	int64_t bsz;
	float *yg;
	int64_t P;
};

/* par_for chunk t of threads: its columns of the tile's product. */
static void
fold_product(void *ctx, int64_t t, int w)
{
	const struct fold_job *j = ctx;
	int64_t j0 = j->np * t / j->threads * GEMM_NR;
	int64_t j1 = j->np * (t + 1) / j->threads * GEMM_NR;

	if (j1 > j->p1 - j->p0)
		j1 = j->p1 - j->p0;
	if (j0 < j1)
		gemm_packed(j->pa, j->K, j->cg, 0, j->K, j0, j1,
		    gemm_fill_rows, j->r, NULL, 0, j->col, j->p1 - j->p0,
		    j->scratch + j->bsz * w);
}

/* par_range: output channels [m0, m1) folded from the columns. */
static void
fold_channels(void *ctx, int64_t m0, int64_t m1, int w)
{
	const struct fold_job *j = ctx;

	(void)w;
	for (int64_t mo = m0; mo < m1; mo++)
		col2im(j->col, mo, j->g, j->p0, j->p1, j->yg + mo * j->P);
}

/*
 * One tile of input positions [p0, p1) of an overlapping ConvTranspose,
 * all threads on it: the product split by columns, then the fold by
 * output channel. buf holds K x tw columns, then per-thread scratch.
 */
static void
convt_tile_shared(const float *pa, int64_t K, int64_t cg, int64_t mg,
    const struct win *g, const float *xt, int64_t p0, int64_t p1,
    float *yg, float *buf, int64_t tw, int threads)
{
	int64_t S = g->in[0] * g->in[1], P = g->out[0] * g->out[1];
	int64_t np = (p1 - p0 + GEMM_NR - 1) / GEMM_NR;
	int64_t bsz = gemm_packed_scratch();
	struct gemm_rows r = { xt, S };

	struct fold_job j = { pa, K, cg, g, &r, p0, p1, np, threads, buf,
	    buf + K * tw, bsz, yg, P };

	par_for(threads, threads, fold_product, &j);
	par_range(mg, threads, fold_channels, &j);
}

struct convt_job {
	const float *pa;
	const float *x;
	float *y;
	const struct win *g;
	int64_t cin, cg, mg, group, K, S, P, asz, tw, ntiles, per;
	float *buf;			/* per floats per thread */
};

/* par_for chunk it: a tile of input positions, product and fold. */
static void
convt_tile(void *ctx, int64_t it, int w)
{
	const struct convt_job *j = ctx;
	int64_t group = j->group, ntiles = j->ntiles, S = j->S;
	int64_t ni = it / (group * ntiles);
	int64_t gi = it / ntiles % group, t = it % ntiles;
	int64_t p0 = t * j->tw, p1 = p0 + j->tw < S ? p0 + j->tw : S;
	float *col = j->buf + j->per * w;
	const float *xt = j->x + (ni * j->cin + gi * j->cg) * S + p0;
	struct gemm_rows r = { xt, S };

	gemm_packed(j->pa + gi * j->asz, j->K, j->cg, 0, j->K, 0, p1 - p0,
	    gemm_fill_rows, &r, NULL, 0, col, p1 - p0, col + j->K * j->tw);
	for (int64_t mo = 0; mo < j->mg; mo++)
		col2im(col, mo, j->g, p0, p1,
		    j->y + (ni * j->mg * group + gi * j->mg + mo) * j->P);
}

/*
 * ConvTranspose on gemm_packed, 2-D: per tile of input positions,
 * columns (K x tile) = Wg^T Xg into per-thread scratch, then folded into
 * the output (already holding the bias). When windows of different input
 * positions never overlap, tiles run in parallel; else one tile at a
 * time, its product and its fold each split over the threads.
 */
static int
convt_packed(struct op_ctx *c, const float *x, const float *w,
    const float *bias, float *y, int64_t n, int64_t cin, int64_t mg,
    int64_t group, const struct win *g)
{
	int threads = c->threads > 0 ? c->threads : 1;
	int64_t cg = cin / group, m = mg * group, S = g->in[0] * g->in[1];
	int64_t P = g->out[0] * g->out[1], K = mg * g->k[0] * g->k[1];
	int64_t asz = gemm_pack_a_size(K, cg), bsz = gemm_packed_scratch();
	int64_t tw, ntiles, per;
	int overlap = (g->k[0] - 1) * g->dil[0] + 1 > g->stride[0] ||
	    (g->k[1] - 1) * g->dil[1] + 1 > g->stride[1];
	const float *pa;
	float *buf, *tmp, *ptmp;

	if (mg * P * cg < MAC_PAR_MIN)
		threads = 1;
	tw = 65536 / (K ? K : 1);
	tw = tw < GEMM_NR ? GEMM_NR : (tw + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
	if (tw > S)
		tw = S;
	ntiles = (S + tw - 1) / tw;
	per = K * tw + bsz;
	if (!(pa = packed_weights(c, w, group, K, cg, 1, &ptmp)))
		return -1;
	if (!(buf = scratch_get(c, per * threads, &tmp))) {
		free(ptmp);
		return -1;
	}
	if (bias)
		for (int64_t i = 0; i < n * m; i++)
			fill_bias(y + i * P, 1, 0, 0, P, bias + i % m);
	if (!overlap) {
		struct convt_job j = { pa, x, y, g, cin, cg, mg, group, K, S,
		    P, asz, tw, ntiles, per, buf };

		par_for(n * group * ntiles, threads, convt_tile, &j);
	} else
		for (int64_t it = 0; it < n * group * ntiles; it++) {
			int64_t ni = it / (group * ntiles);
			int64_t gi = it / ntiles % group, t = it % ntiles;
			int64_t p0 = t * tw, p1 = p0 + tw < S ? p0 + tw : S;
			const float *xt = x + (ni * cin + gi * cg) * S + p0;

			convt_tile_shared(pa + gi * asz, K, cg, mg, g, xt, p0,
			    p1, y + (ni * m + gi * mg) * P, buf, tw, threads);
		}
	free(tmp);
	free(ptmp);
	return 0;
}

static int
convt_run(struct op_ctx *c)
{
	const struct tensor *x, *w, *b;
	int64_t group, n, cin, cg, mg, m, K, S, P, tw;
	int64_t outpad[MAXSP], oshape[MAXSP], ydims[TENSOR_MAX_RANK];
	const int64_t *os;
	size_t nos;
	struct win g;
	int mode, threads = c->threads > 0 ? c->threads : 1;
	float *col, *tmp;
	int rc = 0;
	struct fold_job fj;

	if (!(x = need_float(c, 0)) || !(w = need_float(c, 1)) ||
	    opt_float(c, 2, &b) == -1)
		return -1;
	if (x->rank < 3)
		return err_set(c->err, "input 0: expected rank 3 or more "
		    "(N x C x spatial), got %d", x->rank);
	if (w->rank != x->rank)
		return err_set(c->err, "input 1: weight rank %d differs from "
		    "input rank %d", w->rank, x->rank);
	group = attr_int(c->node, "group", 1);
	n = x->dims[0], cin = x->dims[1];
	if (group < 1 || group > ATTR_MAX)
		return err_set(c->err, "group %lld is out of range",
		    (long long)group);
	if (w->dims[0] != cin || cin % group != 0)
		return err_set(c->err, "input 1: weight has %lld input "
		    "channels, input 0 has %lld in %lld groups",
		    (long long)w->dims[0], (long long)cin, (long long)group);
	cg = cin / group, mg = w->dims[1], m = mg * group;
	if (b && (b->rank != 1 || b->nelem != m))
		return err_set(c->err, "input 2: bias must be 1-D with %lld "
		    "values", (long long)m);
	g.nd = x->rank - 2;
	for (int i = 0; i < g.nd; i++) {
		g.in[i] = x->dims[2 + i];
		g.k[i] = w->dims[2 + i];
		if (g.k[i] < 1)
			return err_set(c->err, "input 1: empty kernel");
	}
	if (kernel_attr(c, &g, 0) == -1 || auto_pad(c, &mode) == -1 ||
	    win_attrs(c, &g, 1) == -1 ||
	    ints_attr(c, "output_padding", g.nd, 0, 0, outpad) == -1)
		return -1;
	os = attr_ints(c->node, "output_shape", &nos);
	if (os && nos != (size_t)g.nd && nos != (size_t)g.nd + 2)
		return err_set(c->err, "output_shape has %zu values for %d "
		    "spatial axes", nos, g.nd);
	for (int i = 0; os && i < g.nd; i++) {
		oshape[i] = os[nos - g.nd + i];
		if (oshape[i] < 0 || oshape[i] > ATTR_MAX)
			return err_set(c->err, "output_shape: value %lld is "
			    "out of range", (long long)oshape[i]);
	}
	for (int i = 0; i < g.nd; i++) {
		int64_t eff = (g.k[i] - 1) * g.dil[i] + 1;
		int64_t full = g.stride[i] * (g.in[i] - 1) + outpad[i] + eff;
		int64_t total;

		if (os || mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
			g.out[i] = os ? oshape[i] : g.in[i] * g.stride[i];
			/* Floor halves: a negative total pads the end. */
			total = full - g.out[i];
			if (mode == PAD_SAME_UPPER) {
				g.pb[i] = floordiv(total, 2);
				g.pe[i] = total - g.pb[i];
			} else {
				g.pe[i] = floordiv(total, 2);
				g.pb[i] = total - g.pe[i];
			}
		} else {
			if (mode == PAD_VALID)
				g.pb[i] = g.pe[i] = 0;
			g.out[i] = full - g.pb[i] - g.pe[i];
		}
		if (g.in[i] == 0)
			g.out[i] = 0;
		if (g.out[i] < 0)
			return err_set(c->err, "output size %lld on spatial "
			    "axis %d is negative", (long long)g.out[i], i);
	}
	ydims[0] = n, ydims[1] = m;
	for (int i = 0; i < g.nd; i++)
		ydims[2 + i] = g.out[i];
	if (tensor_alloc(&c->out[0], DT_FLOAT, x->rank, ydims, c->err) == -1)
		return -1;
	if (c->out[0].nelem == 0)
		return 0;
	if (x->nelem == 0) {
		if (b)
			for (int64_t i = 0; i < n * m; i++)
				fill_bias((float *)c->out[0].data + i *
				    prod(g.out, g.nd), 1, 0, 0,
				    prod(g.out, g.nd), (const float *)b->data +
				    i % m);
		return 0;
	}
	win_to_2d(&g);
	if (g.nd == 2 && gemm_packed_ok())
		return convt_packed(c, x->data, w->data, b ? b->data : NULL,
		    c->out[0].data, n, cin, mg, group, &g);
	K = mg * prod(g.k, g.nd), S = prod(g.in, g.nd), P = prod(g.out, g.nd);
	tw = FOLD_FLOATS / K;
	tw = tw < 16 ? 16 : tw;
	if (tw > S)
		tw = S;
	if (!(col = scratch_get(c, K * tw, &tmp)))
		return -1;
	for (int64_t ni = 0; ni < n; ni++)
		for (int64_t gi = 0; gi < group; gi++) {
			const float *xg = (const float *)x->data +
			    (ni * cin + gi * cg) * S;
			const float *wg = (const float *)w->data + gi * cg * K;
			float *yg = (float *)c->out[0].data +
			    (ni * m + gi * mg) * P;
			int th = threads_for(c, mg * P);

			if (b)
				fill_bias(yg, mg, P, 0, P,
				    (const float *)b->data + gi * mg);
			for (int64_t p0 = 0; p0 < S; p0 += tw) {
				int64_t p1 = p0 + tw < S ? p0 + tw : S;

				/* cols (K x tile) = Wg^T Xg (cg x tile) */
				if (gemm_sgemm(1, 0, K, p1 - p0, cg, 1, wg, K,
				    xg + p0, S, 0, col, p1 - p0, threads,
				    c->err) == -1) {
					rc = -1;
					goto out;
				}
				fj.col = col, fj.g = &g, fj.p0 = p0;
				fj.p1 = p1, fj.yg = yg, fj.P = P;
				par_range(mg, th, fold_channels, &fj);
			}
		}
out:
	free(tmp);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Gemm and MatMul */

/* Types the non-float fallback of Gemm and MatMul computes in double. */
static int
generic_type(int dt)
{
	switch (dt) {
	case DT_DOUBLE: case DT_FLOAT16: case DT_BFLOAT16:
	case DT_INT32: case DT_INT64: case DT_UINT32: case DT_UINT64:
		return 1;
	}
	return 0;
}

struct product_job {
	const float *pa;
	int64_t M, N, K;
	gemm_fill_fn fill;
	struct gemm_rows *r;
	int accumulate;
	float *y, *scratch;
	int64_t bsz, tw, panels;
	int threads;
};

/* par_for chunk t: columns [t * tw, (t + 1) * tw). */
static void
product_cols(void *ctx, int64_t t, int w)
{
	const struct product_job *j = ctx;
	int64_t j1 = (t + 1) * j->tw < j->N ? (t + 1) * j->tw : j->N;

	gemm_packed(j->pa, j->M, j->K, 0, j->M, t * j->tw, j1, j->fill, j->r,
	    NULL, j->accumulate, j->y, j->N, j->scratch + j->bsz * w);
}

/* par_for chunk t of threads: its range of rows. */
static void
product_rows(void *ctx, int64_t t, int w)
{
	const struct product_job *j = ctx;
	int64_t i0, i1;

	if (panel_share(j->panels, t, j->threads, &i0, &i1))
		gemm_packed(j->pa, j->M, j->K, i0, i1, 0, j->N, j->fill, j->r,
		    NULL, j->accumulate, j->y, j->N, j->scratch + j->bsz * w);
}

/*
 * One product, A packed at pa, on all threads: tiles of columns, or when
 * there are too few, ranges of rows. scratch: per-thread gemm scratch.
 */
static void
product_shared(const float *pa, int64_t M, int64_t N, int64_t K,
    gemm_fill_fn fill, struct gemm_rows *r, int accumulate, float *y,
    float *scratch, int threads)
{
	int64_t bsz = gemm_packed_scratch(), panels = (M + GEMM_MR - 1) /
	    GEMM_MR;
	int64_t tw = (N + 4 * threads - 1) / (4 * threads), ntiles;

	tw = (tw + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
	tw = tw < 2 * GEMM_NR ? 2 * GEMM_NR : tw;
	ntiles = (N + tw - 1) / tw;
	struct product_job j = { pa, M, N, K, fill, r, accumulate, y,
	    scratch, bsz, tw, panels, threads };

	if (ntiles >= threads || M <= GEMM_MR) {
		par_for(ntiles, threads, product_cols, &j);
		return;
	}
	par_for(threads, threads, product_rows, &j);
}

/*
 * Batched products on gemm_packed: C[i] = alpha A[i] op(B[i]) (+ C[i]
 * when accumulate), each A packed into per-thread scratch. Many small
 * products go one per thread; else each product's columns (or, when there
 * are few, its rows) are spread over the threads.
 */
struct batch_job {
	const int64_t *aoff, *boff;
	int64_t M, N, K;
	float alpha;
	const float *a;
	int64_t lda;
	const float *b;
	int64_t ldb;
	int accumulate;
	float *y;
	gemm_fill_fn fill;
	float *buf;			/* asz + gemm scratch per thread */
	int64_t asz;
};

/* par_for chunk i: product i of a batch, A packed in w's scratch. */
static void
batch_one(void *ctx, int64_t i, int w)
{
	const struct batch_job *j = ctx;
	int64_t asz = j->asz;
	float *pa = j->buf + (asz + gemm_packed_scratch()) * w;
	struct gemm_rows r = { j->b + j->boff[i], j->ldb };

	gemm_pack_a(j->a + j->aoff[i], j->M, j->K, j->lda, pa);
	if (j->alpha != 1)
		for (int64_t q = 0; q < asz; q++)
			pa[q] *= j->alpha;
	gemm_packed(pa, j->M, j->K, 0, j->M, 0, j->N, j->fill, &r, NULL,
	    j->accumulate, j->y + i * j->M * j->N, j->N, pa + asz);
}

static int
batched_packed(struct op_ctx *c, int64_t batch, const int64_t *aoff,
    const int64_t *boff, int tb, int64_t M, int64_t N, int64_t K,
    float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
    int accumulate, float *y)
{
	int threads = c->threads > 0 ? c->threads : 1;
	int64_t asz = gemm_pack_a_size(M, K), bsz = gemm_packed_scratch();
	gemm_fill_fn fill = tb ? gemm_fill_rows_t : gemm_fill_rows;
	float *buf, *tmp;

	if (batch * M * N * K < MAC_PAR_MIN)
		threads = 1;
	if (!(buf = scratch_get(c, (asz + bsz) * threads, &tmp)))
		return -1;
	if (batch >= threads) {
		struct batch_job j = { aoff, boff, M, N, K, alpha, a, lda, b,
		    ldb, accumulate, y, fill, buf, asz };

		par_for(batch, threads, batch_one, &j);
		free(tmp);
		return 0;
	}
	for (int64_t i = 0; i < batch; i++) {
		struct gemm_rows r = { b + boff[i], ldb };

		gemm_pack_a(a + aoff[i], M, K, lda, buf);
		if (alpha != 1)
			for (int64_t q = 0; q < asz; q++)
				buf[q] *= alpha;
		product_shared(buf, M, N, K, fill, &r, accumulate,
		    y + i * M * N, buf + asz, threads);
	}
	free(tmp);
	return 0;
}

struct sgemm_batch {
	const int64_t *aoff, *boff;
	int ta, tb;
	int64_t M, N, K;
	const float *a;
	int64_t lda;
	const float *b;
	int64_t ldb;
	float *y;
	_Atomic int bad;		/* a product was too large */
};

/* par_for chunk i: product i of batched_sgemm, on one thread. */
static void
sgemm_one(void *ctx, int64_t i, int w)
{
	struct sgemm_batch *j = ctx;
	struct err e;

	(void)w;
	if (gemm_sgemm1(j->ta, j->tb, j->M, j->N, j->K, 1, j->a + j->aoff[i],
	    j->lda, j->b + j->boff[i], j->ldb, 0, j->y + i * j->M * j->N,
	    j->N, &e) == -1)
		atomic_store(&j->bad, 1);
}

/*
 * Batched products C[i] = A[i] * B[i] over `batch` matrices whose offsets
 * (in floats) are in aoff/boff; C is contiguous. Many small products run
 * one per thread, few large ones use all threads each.
 */
static int
batched_sgemm(struct op_ctx *c, int64_t batch, const int64_t *aoff,
    const int64_t *boff, int ta, int tb, int64_t M, int64_t N, int64_t K,
    const float *a, int64_t lda, const float *b, int64_t ldb, float *y)
{
	int threads = c->threads > 0 ? c->threads : 1;

	if (!ta && gemm_packed_ok() && M * N * K > 0)
		return batched_packed(c, batch, aoff, boff, tb, M, N, K, 1, a,
		    lda, b, ldb, 0, y);

	if (batch >= threads && M * N * K < ((int64_t)1 << 20) &&
	    threads > 1 && batch * M * N * K >= PAR_MIN) {
		struct sgemm_batch j = { aoff, boff, ta, tb, M, N, K, a, lda,
		    b, ldb, y, 0 };

		gemm_init_threads();
		par_for(batch, threads, sgemm_one, &j);
		if (atomic_load(&j.bad))
			return err_set(c->err, "matrix product %lldx%lldx%lld "
			    "is too large", (long long)M, (long long)K,
			    (long long)N);
		return 0;
	}
	for (int64_t i = 0; i < batch; i++)
		if (gemm_sgemm(ta, tb, M, N, K, 1, a + aoff[i], lda,
		    b + boff[i], ldb, 0, y + i * M * N, N, threads,
		    c->err) == -1)
			return -1;
	return 0;
}

static int
gemm_run(struct op_ctx *c)
{
	const struct tensor *a, *b, *cc;
	int ta = attr_int(c->node, "transA", 0) != 0;
	int tb = attr_int(c->node, "transB", 0) != 0;
	float alpha = attr_float(c->node, "alpha", 1);
	float beta = attr_float(c->node, "beta", 1);
	int64_t M, N, K, dims[2];
	struct tensor *y = &c->out[0];

	if (!(a = need(c, 0)) || !(b = need(c, 1)))
		return -1;
	cc = ops_input(c, 2);
	if (a->dtype != b->dtype || (cc && cc->dtype != a->dtype))
		return err_set(c->err, "inputs have different element types");
	if (a->dtype != DT_FLOAT && !generic_type(a->dtype))
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(a->dtype));
	if (a->rank != 2 || b->rank != 2)
		return err_set(c->err, "inputs 0 and 1 must be 2-D, got ranks "
		    "%d and %d", a->rank, b->rank);
	M = ta ? a->dims[1] : a->dims[0];
	K = ta ? a->dims[0] : a->dims[1];
	N = tb ? b->dims[0] : b->dims[1];
	if ((tb ? b->dims[1] : b->dims[0]) != K)
		return err_set(c->err, "inner dimensions differ: %lld and "
		    "%lld", (long long)K, (long long)(tb ? b->dims[1] :
		    b->dims[0]));
	dims[0] = M, dims[1] = N;
	if (cc && !bcasts_to(cc, 2, dims)) {
		char s[128];

		return err_set(c->err, "input 2: shape %s does not broadcast "
		    "to %lldx%lld", shape_str(cc->rank, cc->dims, s, sizeof s),
		    (long long)M, (long long)N);
	}
	if (tensor_alloc(y, a->dtype, 2, dims, c->err) == -1)
		return -1;
	if (a->dtype != DT_FLOAT) {
		int64_t st[2] = { 0, 0 };

		if (cc)
			bcast_strides(cc, 2, dims, st);
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double s = 0;

				for (int64_t k = 0; k < K; k++)
					s += tensor_get(a, ta ? k * M + i :
					    i * K + k) * tensor_get(b, tb ?
					    j * K + k : k * N + j);
				s *= alpha;
				if (cc)
					s += beta * tensor_get(cc, i * st[0] +
					    j * st[1]);
				tensor_set(y, i * N + j, s);
			}
		return 0;
	}
	if (cc && beta != 0) {
		float *yd = y->data;

		bcast_fill(cc, 2, dims, yd);
		if (beta != 1)
			for (int64_t i = 0; i < M * N; i++)
				yd[i] *= beta;
	}
	if (!ta && gemm_packed_ok() && M * N * K > 0) {
		int64_t zero = 0;

		return batched_packed(c, 1, &zero, &zero, tb, M, N, K, alpha,
		    a->data, K, b->data, tb ? K : N, cc && beta != 0, y->data);
	}
	return gemm_sgemm(ta, tb, M, N, K, alpha, a->data, ta ? M : K,
	    b->data, tb ? K : N, cc && beta != 0 ? 1 : 0, y->data, N,
	    c->threads, c->err);
}

static int
matmul_run(struct op_ctx *c)
{
	const struct tensor *a, *b;
	int64_t ad[TENSOR_MAX_RANK], bd[TENSOR_MAX_RANK];
	int64_t bat[TENSOR_MAX_RANK], ydims[TENSOR_MAX_RANK];
	int64_t ast[TENSOR_MAX_RANK], bst[TENSOR_MAX_RANK];
	int64_t M, N, K, batch, *aoff = NULL, *boff = NULL;
	int ra, rb, rbat, ry = 0, rc;

	if (!(a = need(c, 0)) || !(b = need(c, 1)))
		return -1;
	if (a->dtype != b->dtype)
		return err_set(c->err, "inputs have different element types");
	if (a->dtype != DT_FLOAT && !generic_type(a->dtype))
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(a->dtype));
	if (a->rank < 1 || b->rank < 1)
		return err_set(c->err, "inputs must have rank 1 or more");
	/* 1-D operands get a unit axis that is dropped from the result. */
	ra = a->rank, rb = b->rank;
	memcpy(ad, a->dims, sizeof(int64_t) * ra);
	memcpy(bd, b->dims, sizeof(int64_t) * rb);
	if (ra == 1) {
		ad[1] = ad[0], ad[0] = 1, ra = 2;
	}
	if (rb == 1) {
		bd[1] = 1, rb = 2;
	}
	M = ad[ra - 2], K = ad[ra - 1], N = bd[rb - 1];
	if (bd[rb - 2] != K) {
		char sa[128], sb[128];

		return err_set(c->err, "shapes %s and %s: inner dimensions "
		    "differ", shape_str(a->rank, a->dims, sa, sizeof sa),
		    shape_str(b->rank, b->dims, sb, sizeof sb));
	}
	if (ops_broadcast_shape(ra - 2, ad, rb - 2, bd, &rbat, bat,
	    c->err) == -1)
		return -1;
	memcpy(ydims, bat, sizeof(int64_t) * rbat);
	ry = rbat;
	if (a->rank > 1)
		ydims[ry++] = M;
	if (b->rank > 1)
		ydims[ry++] = N;
	if (ry > TENSOR_MAX_RANK)
		return err_set(c->err, "result rank is too large");
	if (tensor_alloc_uninit(&c->out[0], a->dtype, ry, ydims, c->err)
	    == -1)
		return -1;
	batch = prod(bat, rbat);
	if (c->out[0].nelem == 0)
		return 0;
	/* Batch offsets of each operand, 0 along broadcast axes. */
	if (!(aoff = malloc(sizeof *aoff * batch)) ||
	    !(boff = malloc(sizeof *boff * batch))) {
		free(aoff);
		return err_nomem(c->err);
	}
	{
		struct tensor ta = { 0 }, tb = { 0 };
		int64_t idx[TENSOR_MAX_RANK] = { 0 }, oa = 0, ob = 0;

		ta.rank = ra - 2, tb.rank = rb - 2;
		memcpy(ta.dims, ad, sizeof(int64_t) * ta.rank);
		memcpy(tb.dims, bd, sizeof(int64_t) * tb.rank);
		bcast_strides(&ta, rbat, bat, ast);
		bcast_strides(&tb, rbat, bat, bst);
		for (int64_t i = 0; i < batch; i++) {
			aoff[i] = oa * M * K;
			boff[i] = ob * K * N;
			for (int d = rbat - 1; d >= 0; d--) {
				oa += ast[d], ob += bst[d];
				if (++idx[d] < bat[d])
					break;
				oa -= ast[d] * bat[d], ob -= bst[d] * bat[d];
				idx[d] = 0;
			}
		}
	}
	if (a->dtype != DT_FLOAT) {
		for (int64_t i = 0; i < batch; i++)
			for (int64_t r = 0; r < M; r++)
				for (int64_t j = 0; j < N; j++) {
					double s = 0;

					for (int64_t k = 0; k < K; k++)
						s += tensor_get(a, aoff[i] +
						    r * K + k) * tensor_get(b,
						    boff[i] + k * N + j);
					tensor_set(&c->out[0], (i * M + r) * N +
					    j, s);
				}
		rc = 0;
	} else if (batch > 1 && boff[batch - 1] == 0 && aoff[batch - 1] ==
	    (batch - 1) * M * K) {
		/* One right-hand matrix for a contiguous stack: one product. */
		int64_t zero = 0;

		rc = batched_sgemm(c, 1, &zero, &zero, 0, 0, batch * M, N, K,
		    a->data, K, b->data, N, c->out[0].data);
	} else
		rc = batched_sgemm(c, batch, aoff, boff, 0, 0, M, N, K,
		    a->data, K, b->data, N, c->out[0].data);
	free(aoff);
	free(boff);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Einsum */

/*
 * Einsum works on strided views: a repeated letter within one operand
 * (a diagonal) folds into one axis whose stride is the sum of the
 * strides; letters that only one operand has and the result does not
 * are summed out when the view is copied. Two operands are then
 * contracted as one batched product: the shared kept letters form the
 * batch, A's own letters the rows, the summed shared letters the inner
 * dimension, B's own letters the columns. More than two operands are
 * contracted left to right. Float tensors are computed in float, every
 * other type in double.
 */
#define EIN_LETTERS 128		/* codes of letters and ellipsis axes */

struct eview {
	int rank;
	int lab[TENSOR_MAX_RANK];	/* letter code of each axis */
	int64_t dims[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK];
	int dbl;			/* data is double, else float */
	const void *data;
	void *own;			/* data this view owns, or NULL */
};

struct eterm {
	int n;
	int lab[TENSOR_MAX_RANK * 2];
	int ell;			/* position of "..." or -1 */
};

static int
ein_letter(int ch)
{
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a';
	if (ch >= 'A' && ch <= 'Z')
		return 26 + ch - 'A';
	return -1;
}

/* Parse one term from s (up to a ',' or '-' or end); returns chars used. */
static int
ein_term(struct op_ctx *c, const char *s, size_t len, size_t *pos,
    struct eterm *t)
{
	t->n = 0, t->ell = -1;
	while (*pos < len && s[*pos] != ',' && s[*pos] != '-') {
		int ch = s[*pos], l;

		if (ch == ' ') {
			(*pos)++;
			continue;
		}
		if (ch == '.') {
			if (*pos + 2 >= len || s[*pos + 1] != '.' ||
			    s[*pos + 2] != '.' || t->ell >= 0)
				return err_set(c->err, "equation: bad "
				    "ellipsis");
			t->ell = t->n;
			*pos += 3;
			continue;
		}
		if ((l = ein_letter(ch)) < 0)
			return err_set(c->err, "equation: unexpected '%c'",
			    ch);
		if (t->n >= TENSOR_MAX_RANK * 2)
			return err_set(c->err, "equation: term too long");
		t->lab[t->n++] = l;
		(*pos)++;
	}
	return 0;
}

static void
ein_free(struct eview *v)
{
	free(v->own);
	v->own = NULL;
}

/*
 * Copy view v into a new contiguous view with the axes labelled out[]
 * (dims odims, in that order); letters of v missing from out[] are summed.
 * An out[] letter that v lacks is a broadcast axis (stride 0).
 */
static int
ein_copy(struct op_ctx *c, const struct eview *v, int nout, const int *out,
    const int64_t *odims, struct eview *r)
{
	int64_t ost[TENSOR_MAX_RANK], sst[TENSOR_MAX_RANK];
	int64_t sdims[TENSOR_MAX_RANK], n, ns = 1;
	int nsum = 0;
	size_t es = v->dbl ? sizeof(double) : sizeof(float);
	void *d;

	for (int i = 0; i < nout; i++) {
		ost[i] = 0;
		for (int j = 0; j < v->rank; j++)
			if (v->lab[j] == out[i])
				ost[i] = v->dims[j] == 1 ? 0 : v->st[j];
	}
	for (int j = 0; j < v->rank; j++) {
		int kept = 0;

		for (int i = 0; i < nout; i++)
			kept |= v->lab[j] == out[i];
		if (!kept) {
			sdims[nsum] = v->dims[j];
			sst[nsum++] = v->st[j];
			ns *= v->dims[j];
		}
	}
	n = prod(odims, nout);
	if (n > TENSOR_MAX_BYTES / (int64_t)es)
		return err_set(c->err, "einsum intermediate is too large");
	if (!(d = malloc((size_t)(n ? n : 1) * es)))
		return err_nomem(c->err);
	{
		int64_t idx[TENSOR_MAX_RANK] = { 0 }, off = 0;

		for (int64_t i = 0; i < n; i++) {
			double s = 0;
			int64_t sidx[TENSOR_MAX_RANK] = { 0 }, so = 0;

			for (int64_t k = 0; k < ns; k++) {
				s += v->dbl ?
				    ((const double *)v->data)[off + so] :
				    ((const float *)v->data)[off + so];
				for (int a = nsum - 1; a >= 0; a--) {
					so += sst[a];
					if (++sidx[a] < sdims[a])
						break;
					so -= sst[a] * sdims[a];
					sidx[a] = 0;
				}
			}
			if (v->dbl)
				((double *)d)[i] = s;
			else
				((float *)d)[i] = (float)s;
			for (int a = nout - 1; a >= 0; a--) {
				off += ost[a];
				if (++idx[a] < odims[a])
					break;
				off -= ost[a] * odims[a];
				idx[a] = 0;
			}
		}
	}
	r->rank = nout;
	r->dbl = v->dbl;
	memcpy(r->lab, out, sizeof(int) * nout);
	memcpy(r->dims, odims, sizeof(int64_t) * nout);
	{
		int64_t s = 1;

		for (int i = nout - 1; i >= 0; i--) {
			r->st[i] = s;
			s *= odims[i];
		}
	}
	r->data = d;
	r->own = d;
	return 0;
}

/* Size of letter l (the largest of its axes, broadcasting 1s) in v. */
static int64_t
ein_dim(const struct eview *v, int l, int64_t cur)
{
	for (int j = 0; j < v->rank; j++)
		if (v->lab[j] == l && v->dims[j] > cur)
			cur = v->dims[j];
	return cur;
}

static int
ein_has(const struct eview *v, int l)
{
	for (int j = 0; j < v->rank; j++)
		if (v->lab[j] == l)
			return 1;
	return 0;
}

static int
in_list(const int *l, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (l[i] == x)
			return 1;
	return 0;
}

/*
 * Contract a and b into r, keeping the letters in keep[] (the result's
 * letters plus those later operands still need).
 */
static int
ein_pair(struct op_ctx *c, struct eview *a, struct eview *b, const int *keep,
    int nkeep, struct eview *r)
{
	int bl[TENSOR_MAX_RANK], ml[TENSOR_MAX_RANK], kl[TENSOR_MAX_RANK],
	    nl[TENSOR_MAX_RANK];
	int nb = 0, nm = 0, nk = 0, nn = 0, lab[TENSOR_MAX_RANK * 3];
	int64_t dim[EIN_LETTERS], dims[TENSOR_MAX_RANK * 3];
	int64_t B, M, N, K, *aoff = NULL, *boff = NULL;
	struct eview ac = { 0 }, bc = { 0 };
	size_t es = a->dbl ? sizeof(double) : sizeof(float);
	void *y;
	int rc = -1;

	for (int l = 0; l < EIN_LETTERS; l++)
		dim[l] = 0;
	for (int j = 0; j < a->rank; j++)
		dim[a->lab[j]] = ein_dim(a, a->lab[j], 0);
	for (int j = 0; j < b->rank; j++) {
		int l = b->lab[j];
		int64_t d = ein_dim(b, l, 0);

		if (dim[l] && d != dim[l] && d != 1 && dim[l] != 1)
			return err_set(c->err, "einsum: letter sizes %lld and "
			    "%lld differ", (long long)dim[l], (long long)d);
		if (d > dim[l])
			dim[l] = d;
	}
	/* Classify letters, in first-seen order. */
	for (int j = 0; j < a->rank; j++) {
		int l = a->lab[j];

		if (in_list(bl, nb, l) || in_list(ml, nm, l) ||
		    in_list(kl, nk, l))
			continue;
		if (ein_has(b, l)) {
			if (in_list(keep, nkeep, l))
				bl[nb++] = l;
			else
				kl[nk++] = l;
		} else if (in_list(keep, nkeep, l))
			ml[nm++] = l;
	}
	for (int j = 0; j < b->rank; j++) {
		int l = b->lab[j];

		if (!ein_has(a, l) && in_list(keep, nkeep, l) &&
		    !in_list(nl, nn, l))
			nl[nn++] = l;
	}
	/* A as [batch, rows, inner], B as [batch, inner, cols]. */
	{
		int la[TENSOR_MAX_RANK * 3], lb[TENSOR_MAX_RANK * 3], na = 0,
		    nbb = 0;
		int64_t da[TENSOR_MAX_RANK * 3], db[TENSOR_MAX_RANK * 3];

		for (int i = 0; i < nb; i++)
			la[na] = bl[i], da[na++] = dim[bl[i]];
		for (int i = 0; i < nm; i++)
			la[na] = ml[i], da[na++] = dim[ml[i]];
		for (int i = 0; i < nk; i++)
			la[na] = kl[i], da[na++] = dim[kl[i]];
		for (int i = 0; i < nb; i++)
			lb[nbb] = bl[i], db[nbb++] = dim[bl[i]];
		for (int i = 0; i < nk; i++)
			lb[nbb] = kl[i], db[nbb++] = dim[kl[i]];
		for (int i = 0; i < nn; i++)
			lb[nbb] = nl[i], db[nbb++] = dim[nl[i]];
		if (na > TENSOR_MAX_RANK || nbb > TENSOR_MAX_RANK ||
		    nb + nm + nn > TENSOR_MAX_RANK)
			return err_set(c->err, "einsum: too many axes");
		if (ein_copy(c, a, na, la, da, &ac) == -1)
			return -1;
		if (ein_copy(c, b, nbb, lb, db, &bc) == -1)
			goto out;
	}
	B = 1, M = 1, N = 1, K = 1;
	for (int i = 0; i < nb; i++)
		B *= dim[bl[i]];
	for (int i = 0; i < nm; i++)
		M *= dim[ml[i]];
	for (int i = 0; i < nk; i++)
		K *= dim[kl[i]];
	for (int i = 0; i < nn; i++)
		N *= dim[nl[i]];
	if (B * M * N > TENSOR_MAX_BYTES / (int64_t)es) {
		err_set(c->err, "einsum intermediate is too large");
		goto out;
	}
	if (!(y = calloc((size_t)(B * M * N > 0 ? B * M * N : 1), es)) ||
	    !(aoff = malloc(sizeof *aoff * (B ? B : 1))) ||
	    !(boff = malloc(sizeof *boff * (B ? B : 1)))) {
		if (y)
			free(y);
		err_nomem(c->err);
		goto out;
	}
	for (int64_t i = 0; i < B; i++)
		aoff[i] = i * M * K, boff[i] = i * K * N;
	if (a->dbl) {
		for (int64_t i = 0; i < B && M * N > 0; i++)
			if (gemm_dgemm1(M, N, K, (const double *)ac.data +
			    aoff[i], (const double *)bc.data + boff[i],
			    (double *)y + i * M * N, c->err) == -1) {
				free(y);
				goto out;
			}
	} else if (B * M * N > 0 && batched_sgemm(c, B, aoff, boff, 0, 0, M,
	    N, K, ac.data, K, bc.data, N, y) == -1) {
		free(y);
		goto out;
	}
	r->rank = 0;
	for (int i = 0; i < nb; i++)
		lab[r->rank] = bl[i], dims[r->rank++] = dim[bl[i]];
	for (int i = 0; i < nm; i++)
		lab[r->rank] = ml[i], dims[r->rank++] = dim[ml[i]];
	for (int i = 0; i < nn; i++)
		lab[r->rank] = nl[i], dims[r->rank++] = dim[nl[i]];
	memcpy(r->lab, lab, sizeof(int) * r->rank);
	memcpy(r->dims, dims, sizeof(int64_t) * r->rank);
	{
		int64_t s = 1;

		for (int i = r->rank - 1; i >= 0; i--) {
			r->st[i] = s;
			s *= r->dims[i];
		}
	}
	r->dbl = a->dbl;
	r->data = y;
	r->own = y;
	rc = 0;
out:
	free(aoff);
	free(boff);
	ein_free(&ac);
	ein_free(&bc);
	return rc;
}

static int
einsum_run(struct op_ctx *c)
{
	char eq[512];
	const Onnx__AttributeProto *at = attr_find(c->node, "equation");
	struct eterm terms[64], outt;
	struct eview v[64], cur = { 0 }, next, res;
	double *conv[64] = { NULL };
	int nterm = 0, have_out = 0, ellrank = 0, count[EIN_LETTERS] = { 0 };
	int dt, dbl;
	int olab[TENSOR_MAX_RANK], nol = 0, rc = -1;
	int64_t odims[TENSOR_MAX_RANK], dim[EIN_LETTERS];
	size_t len, pos = 0;

	if (!at || !at->has_s)
		return err_set(c->err, "attribute equation is missing");
	if (at->s.len >= sizeof eq)
		return err_set(c->err, "equation is too long");
	len = at->s.len;
	memcpy(eq, at->s.data, len);
	eq[len] = '\0';
	for (;;) {
		if (nterm >= 64)
			return err_set(c->err, "equation: too many operands");
		if (ein_term(c, eq, len, &pos, &terms[nterm]) == -1)
			return -1;
		nterm++;
		if (pos < len && eq[pos] == ',') {
			pos++;
			continue;
		}
		break;
	}
	if (pos < len) {
		if (eq[pos] != '-' || pos + 1 >= len || eq[pos + 1] != '>')
			return err_set(c->err, "equation: expected \"->\"");
		pos += 2;
		if (ein_term(c, eq, len, &pos, &outt) == -1)
			return -1;
		if (pos < len)
			return err_set(c->err, "equation: unexpected '%c'",
			    eq[pos]);
		have_out = 1;
	}
	if (nterm != c->nin)
		return err_set(c->err, "equation has %d operands, node has %d "
		    "inputs", nterm, c->nin);
	for (int i = 0; i < nterm; i++) {
		const struct tensor *t = need(c, i);
		int nl = terms[i].n, er;

		if (!t)
			return -1;
		if (t->dtype != c->in[0]->dtype)
			return err_set(c->err, "inputs have different element "
			    "types");
		if (t->dtype != DT_FLOAT && !generic_type(t->dtype) &&
		    t->dtype != DT_INT8 && t->dtype != DT_UINT8 &&
		    t->dtype != DT_INT16 && t->dtype != DT_UINT16)
			return err_set(c->err, "input %d: element type %s is "
			    "not supported", i, ops_type_name(t->dtype));
		er = t->rank - nl;
		if (terms[i].ell < 0 ? er != 0 : er < 0)
			return err_set(c->err, "input %d: rank %d does not "
			    "match its term", i, t->rank);
		if (er > ellrank)
			ellrank = er;
	}
	dt = c->in[0]->dtype;
	dbl = dt != DT_FLOAT;
	/* Ellipsis axes get codes 52.. counted from the right. */
	for (int i = 0; i < nterm; i++) {
		const struct tensor *t = c->in[i];
		struct eterm *tm = &terms[i];
		struct eview *w = &v[i];
		int er = t->rank - tm->n, ax = 0;
		int64_t s = 1, st[TENSOR_MAX_RANK];

		for (int a = t->rank - 1; a >= 0; a--) {
			st[a] = s;
			s *= t->dims[a];
		}
		w->rank = 0, w->data = t->data, w->own = NULL, w->dbl = dbl;
		for (int j = 0; j <= tm->n; j++) {
			if (j == tm->ell)
				for (int e = 0; e < er; e++, ax++) {
					int l = 52 + (ellrank - er + e);
					w->lab[w->rank] = l;
					w->dims[w->rank] = t->dims[ax];
					w->st[w->rank++] = st[ax];
				}
			if (j == tm->n)
				break;
			/* A repeated letter: fold into the diagonal. */
			{
				int l = tm->lab[j], found = -1;

				for (int q = 0; q < w->rank; q++)
					if (w->lab[q] == l)
						found = q;
				if (found >= 0) {
					if (w->dims[found] != t->dims[ax])
						return err_set(c->err, "input "
						    "%d: diagonal axes differ "
						    "in size", i);
					w->st[found] += st[ax];
				} else {
					w->lab[w->rank] = l;
					w->dims[w->rank] = t->dims[ax];
					w->st[w->rank++] = st[ax];
				}
				ax++;
			}
		}
		for (int q = 0; q < w->rank; q++)
			count[w->lab[q]]++;
	}
	for (int l = 0; l < EIN_LETTERS; l++)
		dim[l] = 0;
	for (int i = 0; i < nterm; i++)
		for (int q = 0; q < v[i].rank; q++) {
			int l = v[i].lab[q];
			int64_t d = v[i].dims[q];

			if (dim[l] && d != dim[l] && d != 1 && dim[l] != 1)
				return err_set(c->err, "einsum: letter sizes "
				    "%lld and %lld differ", (long long)dim[l],
				    (long long)d);
			if (d > dim[l])
				dim[l] = d;
		}
	/* The result's letters. */
	if (have_out) {
		int er = ellrank;

		for (int j = 0; j <= outt.n; j++) {
			if (j == outt.ell)
				for (int e = 0; e < er; e++)
					olab[nol++] = 52 + e;
			if (j == outt.n)
				break;
			if (!count[outt.lab[j]])
				return err_set(c->err, "equation: output "
				    "letter not in any input");
			if (in_list(olab, nol, outt.lab[j]))
				return err_set(c->err, "equation: output "
				    "letter repeated");
			olab[nol++] = outt.lab[j];
		}
	} else {
		for (int e = 0; e < ellrank; e++)
			olab[nol++] = 52 + e;
		for (int l = 0; l < 52; l++) {
			int n = 0;

			for (int i = 0; i < nterm; i++)
				for (int j = 0; j < terms[i].n; j++)
					n += terms[i].lab[j] == l;
			if (n == 1)
				olab[nol++] = l;
		}
	}
	if (nol > TENSOR_MAX_RANK)
		return err_set(c->err, "einsum: result rank is too large");
	for (int i = 0; i < nol; i++)
		odims[i] = dim[olab[i]];
	for (int i = 0; dbl && i < nterm; i++) {
		const struct tensor *t = c->in[i];

		if (!(conv[i] = malloc(sizeof(double) *
		    (size_t)(t->nelem ? t->nelem : 1)))) {
			err_nomem(c->err);
			goto out;
		}
		for (int64_t k = 0; k < t->nelem; k++)
			conv[i][k] = tensor_get(t, k);
		v[i].data = conv[i];
	}
	/* Contract left to right. */
	cur = v[0];
	for (int i = 1; i < nterm; i++) {
		int keep[EIN_LETTERS], nk = 0;

		for (int l = 0; l < EIN_LETTERS; l++) {
			int later = in_list(olab, nol, l);

			for (int q = i + 1; q < nterm; q++)
				later |= ein_has(&v[q], l);
			if (later)
				keep[nk++] = l;
		}
		if (ein_pair(c, &cur, &v[i], keep, nk, &next) == -1)
			goto out;
		ein_free(&cur);
		cur = next;
	}
	if (ein_copy(c, &cur, nol, olab, odims, &res) == -1)
		goto out;
	if (tensor_alloc(&c->out[0], dt, nol, odims, c->err) == -1) {
		ein_free(&res);
		goto out;
	}
	if (dbl)
		for (int64_t k = 0; k < c->out[0].nelem; k++)
			tensor_set(&c->out[0], k,
			    ((const double *)res.data)[k]);
	else
		memcpy(c->out[0].data, res.data, sizeof(float) *
		    c->out[0].nelem);
	ein_free(&res);
	rc = 0;
out:
	ein_free(&cur);
	for (int i = 0; i < nterm; i++)
		free(conv[i]);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Pooling */

enum { POOL_MAX, POOL_AVG, POOL_LP };

/*
 * How ONNX Runtime (MLAS) orders the float sums of an average pool; we
 * follow it because in QDQ models the average of a few codes often lands
 * exactly on a rounding tie of the next QuantizeLinear, and a sum taken in
 * another order (or in double) falls on the other side of it.
 */
enum avg_order {
	AVG_DOUBLE,		/* dilated windows: ORT does not use MLAS */
	AVG_ROWS,		/* MLAS generic kernels: row-major float sum */
	AVG_COLUMNS,		/* MLAS vector kernels: sum down each column,
				   then the column sums left to right */
	AVG_GLOBAL,		/* MLAS global kernel: four interleaved lanes */
};

struct pool {
	int kind;
	struct win g;
	int count_pad;			/* count_include_pad */
	int col_major;			/* MaxPool storage_order 1 */
	float p;			/* LpPool exponent */
	int order;			/* enum avg_order */
};

/*
 * The float sum MLAS's global pooling kernel computes: lane j adds
 * x[j], x[j+4], ..., the lanes combine as (l0 + l2) + (l1 + l3), and the
 * elements after the last whole vector follow one by one.
 */
static float
mlas_global_sum(const float *x, int64_t n)
{
	float l[4] = { 0, 0, 0, 0 }, s;
	int64_t i;

	for (i = 0; i + 4 <= n; i += 4)
		for (int j = 0; j < 4; j++)
			l[j] += x[i + j];
	s = (l[0] + l[2]) + (l[1] + l[3]);
	for (; i < n; i++)
		s += x[i];
	return s;
}

/* Which summation order ORT uses for this average pool (before win_to_2d). */
static int
avg_order(const struct win *g)
{
	int global = 1, small = 1;

	for (int i = 0; i < g->nd; i++) {
		if (g->dil[i] != 1)
			return AVG_DOUBLE;
		if (g->k[i] != g->in[i] || g->stride[i] != 1 ||
		    g->pb[i] != 0 || g->pe[i] != 0)
			global = 0;
		if (g->k[i] > 32)
			small = 0;
	}
	if (global)
		return AVG_GLOBAL;
	/* MLAS_POOL_REDUCTION_BUFFER_STACK 2048 less 3 floats of padding. */
	if (g->nd == 2 && g->stride[1] <= 2 && small &&
	    g->pb[1] + g->pe[1] + g->in[1] <= 2045)
		return AVG_COLUMNS;
	/* 1-D: the generic kernel's serial sum, = columns of one row. */
	return AVG_ROWS;
}

/* One plane: S input elements at x, P outputs at y (and idx). */
static void
pool_plane(const struct pool *pl, const float *x, float *y, int64_t *idx,
    int64_t plane)
{
	const struct win *g = &pl->g;
	int nd = g->nd;
	int64_t S = prod(g->in, nd), P = prod(g->out, nd), K = prod(g->k, nd);
	int64_t o[MAXSP] = { 0 };

	for (int64_t p = 0; p < P; p++) {
		int64_t kk[MAXSP] = { 0 }, best_at = -1, n = 0, npad = 0;
		double acc = pl->kind == POOL_MAX ? -DBL_MAX : 0;
		float best = -FLT_MAX;

		for (int64_t t = 0; t < K; t++) {
			int64_t off = 0, inpad = 1, ok = 1;

			for (int a = 0; a < nd; a++) {
				int64_t i = o[a] * g->stride[a] - g->pb[a] +
				    kk[a] * g->dil[a];

				if (i < 0 || i >= g->in[a]) {
					ok = 0;
					if (i < -g->pb[a] || i >= g->in[a] +
					    g->pe[a])
						inpad = 0;
				}
				off = off * g->in[a] + i;
			}
			if (ok) {
				float v = x[off];

				n++;
				switch (pl->kind) {
				case POOL_MAX:
					if (v > best || best_at < 0) {
						best = v;
						best_at = off;
					}
					break;
				case POOL_AVG:
					acc += v;
					break;
				default:
					acc += pow(fabs(v), pl->p);
				}
			} else if (inpad)
				npad++;
			for (int a = nd - 1; a >= 0; a--) {
				if (++kk[a] < g->k[a])
					break;
				kk[a] = 0;
			}
		}
		switch (pl->kind) {
		case POOL_MAX:
			y[p] = best;
			if (idx) {
				int64_t flat = 0, rem = best_at < 0 ? 0 :
				    best_at, m = 1;

				if (pl->col_major) {
					int64_t coord[MAXSP];

					for (int a = nd - 1; a >= 0; a--) {
						coord[a] = rem % g->in[a];
						rem /= g->in[a];
					}
					for (int a = 0; a < nd; a++) {
						flat += coord[a] * m;
						m *= g->in[a];
					}
				} else
					flat = rem;
				idx[p] = plane * S + flat;
			}
			break;
		case POOL_AVG:
			if (pl->count_pad)
				n += npad;
			y[p] = n ? (float)(acc / n) : 0;
			break;
		default:
			y[p] = (float)pow(acc, 1.0 / pl->p);
		}
		for (int a = nd - 1; a >= 0; a--) {
			if (++o[a] < g->out[a])
				break;
			o[a] = 0;
		}
	}
}

/* Taps k in [*k0, *k1) of a window starting at s land inside [0, n). */
static void
tap_range(int64_t s, int64_t d, int64_t k, int64_t n, int64_t *k0,
    int64_t *k1)
{
	*k0 = s < 0 ? ceildiv(-s, d) : 0;
	*k1 = floordiv(n - 1 - s, d) + 1;
	if (*k1 > k)
		*k1 = k;
	if (*k1 < *k0)
		*k1 = *k0;
}

/*
 * Float sum of the taps [kh0, kh1) x [kw0, kw1) of an undilated window
 * whose top left tap is x[base], in ORT's order (enum avg_order).
 */
static float
avg_window(int order, const float *x, int64_t W, int64_t base, int64_t kh0,
    int64_t kh1, int64_t kw0, int64_t kw1)
{
	float s = 0;

	if (order == AVG_GLOBAL)
		return mlas_global_sum(x + base, (kh1 - kh0) * W);
	if (order == AVG_ROWS) {
		for (int64_t kh = kh0; kh < kh1; kh++)
			for (int64_t kw = kw0; kw < kw1; kw++)
				s += x[base + kh * W + kw];
		return s;
	}
	for (int64_t kw = kw0; kw < kw1; kw++) {
		float col = x[base + kh0 * W + kw];

		for (int64_t kh = kh0 + 1; kh < kh1; kh++)
			col += x[base + kh * W + kw];
		s = kw == kw0 ? col : s + col;
	}
	return s;
}

/*
 * pool_plane_2d's MaxPool without indices: the same taps in the same
 * order (the first, then each greater one), and the window bounds only
 * worked out at the edges.
 */
static void
max_plane_2d(const struct win *g, const float *x, float *y)
{
	int64_t H = g->in[0], W = g->in[1], OW = g->out[1];
	int64_t dh = g->dil[0], dw = g->dil[1], KW = g->k[1];

	for (int64_t oh = 0; oh < g->out[0]; oh++) {
		int64_t hs = oh * g->stride[0] - g->pb[0], kh0, kh1;

		tap_range(hs, dh, g->k[0], H, &kh0, &kh1);
		for (int64_t ow = 0; ow < OW; ow++) {
			int64_t ws = ow * g->stride[1] - g->pb[1], kw0, kw1;
			float best = -FLT_MAX;
			int first = 1;

			if (ws >= 0 && ws + (KW - 1) * dw < W)
				kw0 = 0, kw1 = KW;
			else
				tap_range(ws, dw, KW, W, &kw0, &kw1);
			for (int64_t kh = kh0; kh < kh1; kh++) {
				const float *r = x + (hs + kh * dh) * W + ws;

				for (int64_t kw = kw0; kw < kw1; kw++) {
					float v = r[kw * dw];

					if (v > best || first)
						best = v, first = 0;
				}
			}
			y[oh * OW + ow] = best;
		}
	}
}

/* The 2-D case of pool_plane, with the window bounds worked out once. */
static void
pool_plane_2d(const struct pool *pl, const float *x, float *y, int64_t *idx,
    int64_t plane)
{
	const struct win *g = &pl->g;
	int64_t H = g->in[0], W = g->in[1], OW = g->out[1];
	int64_t dh = g->dil[0], dw = g->dil[1];

	if (pl->kind == POOL_MAX && !idx) {
		max_plane_2d(g, x, y);
		return;
	}
	for (int64_t oh = 0; oh < g->out[0]; oh++) {
		int64_t hs = oh * g->stride[0] - g->pb[0], kh0, kh1, ph0, ph1;

		tap_range(hs, dh, g->k[0], H, &kh0, &kh1);
		/* Taps inside the padded input, for count_include_pad. */
		tap_range(hs + g->pb[0], dh, g->k[0], H + g->pb[0] + g->pe[0],
		    &ph0, &ph1);
		for (int64_t ow = 0; ow < OW; ow++) {
			int64_t ws = ow * g->stride[1] - g->pb[1], kw0, kw1;
			int64_t pw0, pw1, n, best_at = -1;
			float best = -FLT_MAX;
			double acc = 0;

			tap_range(ws, dw, g->k[1], W, &kw0, &kw1);
			tap_range(ws + g->pb[1], dw, g->k[1], W + g->pb[1] +
			    g->pe[1], &pw0, &pw1);
			n = (kh1 - kh0) * (kw1 - kw0);
			if (pl->kind == POOL_AVG && pl->order != AVG_DOUBLE) {
				if (pl->count_pad)
					n = (ph1 - ph0) * (pw1 - pw0);
				y[oh * OW + ow] = n ? avg_window(pl->order, x,
				    W, hs * W + ws, kh0, kh1, kw0, kw1) /
				    (float)n : 0;
				continue;
			}
			for (int64_t kh = kh0; kh < kh1; kh++) {
				int64_t row = (hs + kh * dh) * W + ws;

				for (int64_t kw = kw0; kw < kw1; kw++) {
					float v = x[row + kw * dw];

					if (pl->kind == POOL_MAX) {
						if (v > best || best_at < 0) {
							best = v;
							best_at = row + kw * dw;
						}
					} else if (pl->kind == POOL_AVG)
						acc += v;
					else
						acc += pow(fabs(v), pl->p);
				}
			}
			if (pl->kind == POOL_MAX) {
				y[oh * OW + ow] = best;
				if (idx) {
					int64_t f = best_at < 0 ? 0 : best_at;

					if (pl->col_major)
						f = f / W + f % W * H;
					idx[oh * OW + ow] = plane * H * W + f;
				}
			} else if (pl->kind == POOL_AVG) {
				if (pl->count_pad)
					n = (ph1 - ph0) * (pw1 - pw0);
				y[oh * OW + ow] = n ? (float)(acc / n) : 0;
			} else
				y[oh * OW + ow] = (float)pow(acc, 1.0 / pl->p);
		}
	}
}

struct pool_job {
	const struct pool *pl;
	const float *x;
	float *y;
	int64_t *idx;
	int64_t S, P;
};

/* par_for chunk i: plane i of a pool. */
static void
pool_chunk(void *ctx, int64_t i, int w)
{
	const struct pool_job *j = ctx;

	(void)w;
	if (j->pl->g.nd == 2)
		pool_plane_2d(j->pl, j->x + i * j->S, j->y + i * j->P,
		    j->idx ? j->idx + i * j->P : NULL, i);
	else
		pool_plane(j->pl, j->x + i * j->S, j->y + i * j->P,
		    j->idx ? j->idx + i * j->P : NULL, i);
}

static int
pool_run(struct op_ctx *c, int kind)
{
	const struct tensor *x;
	struct pool pl;
	int64_t ydims[TENSOR_MAX_RANK], planes, S, P;
	int mode, ceil_mode, threads;
	float *xf = NULL, *yf;
	int64_t *idx = NULL;
	struct pool_job pj;

	memset(&pl, 0, sizeof pl);
	pl.kind = kind;
	if (!(x = need(c, 0)))
		return -1;
	if (x->dtype != DT_FLOAT && !(kind == POOL_MAX &&
	    (x->dtype == DT_UINT8 || x->dtype == DT_INT8 ||
	    x->dtype == DT_FLOAT16)))
		return err_set(c->err, "input 0: element type %s is not "
		    "supported", ops_type_name(x->dtype));
	if (x->rank < 3)
		return err_set(c->err, "input 0: expected rank 3 or more "
		    "(N x C x spatial), got %d", x->rank);
	pl.g.nd = x->rank - 2;
	for (int i = 0; i < pl.g.nd; i++)
		pl.g.in[i] = x->dims[2 + i];
	ceil_mode = attr_int(c->node, "ceil_mode", 0) != 0;
	pl.count_pad = attr_int(c->node, "count_include_pad", 0) != 0;
	pl.col_major = attr_int(c->node, "storage_order", 0) == 1;
	pl.p = (float)attr_int(c->node, "p", 2);
	if (kind == POOL_LP && (pl.p <= 0 || pl.p > 1000))
		return err_set(c->err, "p %g is out of range", pl.p);
	if (kernel_attr(c, &pl.g, 1) == -1 || auto_pad(c, &mode) == -1 ||
	    win_attrs(c, &pl.g, 1) == -1 ||
	    win_out(c, &pl.g, mode, ceil_mode) == -1)
		return -1;
	ydims[0] = x->dims[0], ydims[1] = x->dims[1];
	for (int i = 0; i < pl.g.nd; i++)
		ydims[2 + i] = pl.g.out[i];
	pl.order = pl.g.nd <= 2 ? avg_order(&pl.g) : AVG_DOUBLE;
	if (tensor_alloc(&c->out[0], x->dtype, x->rank, ydims, c->err) == -1)
		return -1;
	if (kind == POOL_MAX && ops_want_output(c, 1)) {
		if (tensor_alloc(&c->out[1], DT_INT64, x->rank, ydims,
		    c->err) == -1)
			return -1;
		idx = c->out[1].data;
	}
	planes = x->dims[0] * x->dims[1];
	S = prod(pl.g.in, pl.g.nd), P = prod(pl.g.out, pl.g.nd);
	if (c->out[0].nelem == 0)
		return 0;
	yf = c->out[0].data;
	if (x->dtype != DT_FLOAT) {
		/* Small integer and half types convert exactly. */
		if (!(xf = malloc(sizeof *xf * (size_t)x->nelem)) ||
		    !(yf = malloc(sizeof *yf * (size_t)c->out[0].nelem))) {
			free(xf);
			return err_nomem(c->err);
		}
		tensor_to_float(x, xf);
	}
	threads = threads_for(c, planes * P * prod(pl.g.k, pl.g.nd));
	win_to_2d(&pl.g);
	pj.pl = &pl, pj.x = xf ? xf : (const float *)x->data, pj.y = yf;
	pj.idx = idx, pj.S = S, pj.P = P;
	par_for(planes, threads, pool_chunk, &pj);
	if (xf) {
		for (int64_t i = 0; i < c->out[0].nelem; i++)
			tensor_set(&c->out[0], i, yf[i]);
		free(xf);
		free(yf);
	}
	return 0;
}

OPS_KERNEL(maxpool_run, pool_run, POOL_MAX)
OPS_KERNEL(avgpool_run, pool_run, POOL_AVG)
OPS_KERNEL(lppool_run, pool_run, POOL_LP)

struct global_job {
	int kind;
	const float *x;
	float *y;
	int64_t S;
	float p;
};

static void global_chunk(void *ctx, int64_t i, int w);

static int
global_pool(struct op_ctx *c, int kind)
{
	const struct tensor *x;
	int64_t ydims[TENSOR_MAX_RANK], planes, S;
	float p = (float)attr_int(c->node, "p", 2);
	int threads;
	struct global_job gj;

	if (!(x = need_float(c, 0)))
		return -1;
	if (x->rank < 3)
		return err_set(c->err, "input 0: expected rank 3 or more "
		    "(N x C x spatial), got %d", x->rank);
	if (kind == POOL_LP && (p <= 0 || p > 1000))
		return err_set(c->err, "p %g is out of range", p);
	ydims[0] = x->dims[0], ydims[1] = x->dims[1];
	for (int i = 2; i < x->rank; i++)
		ydims[i] = 1;
	if (tensor_alloc_uninit(&c->out[0], DT_FLOAT, x->rank, ydims,
	    c->err) == -1)
		return -1;
	planes = x->dims[0] * x->dims[1];
	S = prod(x->dims + 2, x->rank - 2);
	threads = threads_for(c, planes * S);
	gj.kind = kind, gj.x = x->data, gj.y = c->out[0].data;
	gj.S = S, gj.p = p;
	par_for(planes, threads, global_chunk, &gj);
	return 0;
}

/* par_for chunk i: plane i of a global pool. */
static void
global_chunk(void *ctx, int64_t i, int w)
{
	const struct global_job *j = ctx;
	int kind = j->kind;
	int64_t S = j->S;
	float p = j->p;

	(void)w;
	{
		const float *xp = j->x + i * S;
		float *y = j->y + i;

		if (kind == POOL_MAX) {
			float m = S ? xp[0] : -FLT_MAX;

			for (int64_t j = 1; j < S; j++)
				if (xp[j] > m)
					m = xp[j];
			*y = m;
		} else if (kind == POOL_AVG) {
			/* As ORT: MLAS's global kernel, in float. */
			*y = S ? mlas_global_sum(xp, S) / (float)S : 0;
		} else {
			double s = 0;

			for (int64_t j = 0; j < S; j++)
				s += pow(fabs(xp[j]), p);
			*y = (float)pow(s, 1.0 / p);
		}
	}
}

OPS_KERNEL(gavgpool_run, global_pool, POOL_AVG)
OPS_KERNEL(gmaxpool_run, global_pool, POOL_MAX)
OPS_KERNEL(glppool_run, global_pool, POOL_LP)

/* ---------------------------------------------------------------- */
/* Normalisations */

/* Input i: float with exactly n elements. */
static const struct tensor *
need_vec(struct op_ctx *c, int i, int64_t n)
{
	const struct tensor *t = need_float(c, i);

	if (t && t->nelem != n) {
		err_set(c->err, "input %d: expected %lld values, got %lld", i,
		    (long long)n, (long long)t->nelem);
		return NULL;
	}
	return t;
}

/* y[j] = x[j] * a + b, j < n, vectorised (no fused multiply-add). */
NN_SIMD static void
affine_row(const float *restrict x, float *restrict y, float a, float b,
    int64_t n)
{
#pragma omp simd
	for (int64_t j = 0; j < n; j++)
		y[j] = x[j] * a + b;
}

struct bn_job {
	const float *x;
	float *y;
	const float *a, *b;		/* per channel, or per value */
	int64_t C, S;
	int spatial;
};

/* par_for chunk i: plane i (channel i % C) of a BatchNormalization. */
static void
bn_chunk(void *ctx, int64_t i, int w)
{
	const struct bn_job *j = ctx;
	const float *xp = j->x + i * j->S;
	float *yp = j->y + i * j->S;
	int64_t ch = i % j->C, S = j->S;

	(void)w;
	if (j->spatial)
		affine_row(xp, yp, j->a[ch], j->b[ch], S);
	else
		for (int64_t k = 0; k < S; k++)
			yp[k] = xp[k] * j->a[ch * S + k] + j->b[ch * S + k];
}

static int
batchnorm_run(struct op_ctx *c)
{
	const struct tensor *x, *sc, *bi, *mu, *va;
	float eps = attr_float(c->node, "epsilon", 1e-5f);
	float mom = attr_float(c->node, "momentum", 0.9f);
	int spatial = c->opset < 9 ? attr_int(c->node, "spatial", 1) != 0 : 1;
	int training;
	int64_t N, C, S, np;
	float *a, *bb;
	double *bm = NULL, *bv = NULL;
	int threads;
	struct bn_job bj;

	if (!(x = need_float(c, 0)))
		return -1;
	if (x->rank < 2)
		return err_set(c->err, "input 0: expected rank 2 or more "
		    "(N x C ...), got %d", x->rank);
	N = x->dims[0], C = x->dims[1], S = prod(x->dims + 2, x->rank - 2);
	np = spatial ? C : C * S;
	if (!(sc = need_vec(c, 1, np)) || !(bi = need_vec(c, 2, np)) ||
	    !(mu = need_vec(c, 3, np)) || !(va = need_vec(c, 4, np)))
		return -1;
	training = c->opset >= 14 ? attr_int(c->node, "training_mode", 0) != 0
	    : ops_want_output(c, 1);
	if (training && !spatial)
		return err_set(c->err, "training mode needs spatial=1");
	if (tensor_alloc_like_uninit(&c->out[0], DT_FLOAT, x, c->err) == -1)
		return -1;
	if (!(a = malloc(sizeof *a * (size_t)(np ? np : 1))) ||
	    !(bb = malloc(sizeof *bb * (size_t)(np ? np : 1)))) {
		free(a);
		return err_nomem(c->err);
	}
	if (training) {
		const float *xd = x->data;

		if (!(bm = calloc((size_t)(C ? C : 1), sizeof *bm)) ||
		    !(bv = calloc((size_t)(C ? C : 1), sizeof *bv))) {
			free(bm), free(a), free(bb);
			return err_nomem(c->err);
		}
		for (int64_t ch = 0; ch < C; ch++) {
			double s = 0, q = 0, cnt = (double)N * S;

			for (int64_t n = 0; n < N; n++)
				for (int64_t j = 0; j < S; j++)
					s += xd[(n * C + ch) * S + j];
			s = cnt ? s / cnt : 0;
			for (int64_t n = 0; n < N; n++)
				for (int64_t j = 0; j < S; j++) {
					double d = xd[(n * C + ch) * S + j] - s;
					q += d * d;
				}
			bm[ch] = s;
			bv[ch] = cnt ? q / cnt : 0;
		}
	}
	for (int64_t i = 0; i < np; i++) {
		double m = bm ? bm[i] : ((const float *)mu->data)[i];
		double v = bv ? bv[i] : ((const float *)va->data)[i];
		double s = ((const float *)sc->data)[i] / sqrt(v + eps);

		a[i] = (float)s;
		bb[i] = (float)(((const float *)bi->data)[i] - m * s);
	}
	threads = threads_for(c, x->nelem);
	bj.x = x->data, bj.y = c->out[0].data, bj.a = a, bj.b = bb;
	bj.C = C, bj.S = S, bj.spatial = spatial;
	par_for(N * C, threads, bn_chunk, &bj);
	free(a);
	free(bb);
	if (training) {
		/* Outputs 1, 2 running statistics, 3, 4 (opset < 14) saved. */
		for (int o = 1; o < c->nout && o <= 4; o++) {
			int64_t d[1] = { C };
			float *p;

			if (!ops_want_output(c, o))
				continue;
			if (tensor_alloc(&c->out[o], DT_FLOAT, 1, d,
			    c->err) == -1) {
				free(bm), free(bv);
				return -1;
			}
			p = c->out[o].data;
			for (int64_t ch = 0; ch < C; ch++) {
				const float *in = o == 1 ? mu->data : va->data;
				double cur = o == 1 || o == 3 ? bm[ch] : bv[ch];

				p[ch] = o <= 2 ? (float)(in[ch] * mom +
				    cur * (1 - mom)) : (float)cur;
			}
		}
		free(bm);
		free(bv);
	}
	return 0;
}

struct in_job {
	const float *x;
	float *y;
	const float *scale, *bias;
	int64_t C, S;
	float eps;
};

/* Mean and (biased) variance of x[0..n-1], in double, in order. */
static void
mean_var(const float *x, int64_t n, double *mean, double *var)
{
	double m = 0, v = 0;

	for (int64_t k = 0; k < n; k++)
		m += x[k];
	m = n ? m / n : 0;
	for (int64_t k = 0; k < n; k++)
		v += (x[k] - m) * (x[k] - m);
	*mean = m;
	*var = n ? v / n : 0;
}

/* par_range: planes [i0, i1) of an InstanceNormalization. */
static void
in_planes(void *ctx, int64_t i0, int64_t i1, int w)
{
	const struct in_job *j = ctx;
	int64_t S = j->S;

	(void)w;
	for (int64_t i = i0; i < i1; i++) {
		const float *xp = j->x + i * S;
		float *yp = j->y + i * S;
		double m, v, s;
		float a, b;

		mean_var(xp, S, &m, &v);
		s = j->scale[i % j->C] / sqrt(v + j->eps);
		a = (float)s;
		b = (float)(j->bias[i % j->C] - m * s);
		for (int64_t k = 0; k < S; k++)
			yp[k] = xp[k] * a + b;
	}
}

static int
instnorm_run(struct op_ctx *c)
{
	const struct tensor *x, *sc, *bi;
	float eps = attr_float(c->node, "epsilon", 1e-5f);
	int64_t N, C, S;
	int threads;

	if (!(x = need_float(c, 0)))
		return -1;
	if (x->rank < 3)
		return err_set(c->err, "input 0: expected rank 3 or more "
		    "(N x C x spatial), got %d", x->rank);
	N = x->dims[0], C = x->dims[1], S = prod(x->dims + 2, x->rank - 2);
	if (!(sc = need_vec(c, 1, C)) || !(bi = need_vec(c, 2, C)))
		return -1;
	if (tensor_alloc_like(&c->out[0], DT_FLOAT, x, c->err) == -1)
		return -1;
	threads = threads_for(c, x->nelem);
	{
		struct in_job j = { x->data, c->out[0].data, sc->data,
		    bi->data, C, S, eps };

		par_range(N * C, threads, in_planes, &j);
	}
	return 0;
}

struct ln_job {
	const float *x;
	float *y;
	const float *scale, *bias;
	float *mean, *inv;		/* NULL when not wanted */
	int64_t D;
	float eps;
};

/* par_for chunk r: row r of a LayerNormalization. */
static void
ln_row(void *ctx, int64_t r, int w)
{
	const struct ln_job *lj = ctx;
	int64_t D = lj->D;
	const float *xp = lj->x + r * D, *scale = lj->scale;
	const float *bias = lj->bias;
	float *yp = lj->y + r * D;
	double m, v;
	float is, mf;

	(void)w;
	mean_var(xp, D, &m, &v);
	is = (float)(1 / sqrt(v + lj->eps));
	mf = (float)m;
	for (int64_t j = 0; j < D; j++)
		yp[j] = (xp[j] - mf) * is * scale[j] + bias[j];
	if (lj->mean)
		lj->mean[r] = mf;
	if (lj->inv)
		lj->inv[r] = is;
}

static int
layernorm_run(struct op_ctx *c)
{
	const struct tensor *x, *sc, *bi;
	float eps = attr_float(c->node, "epsilon", 1e-5f);
	int64_t R, D, sdims[TENSOR_MAX_RANK];
	float *scale = NULL, *bias = NULL, *mean = NULL, *inv = NULL;
	int axis, threads;
	struct ln_job lj;

	if (!(x = need_float(c, 0)) || !(sc = need_float(c, 1)) ||
	    opt_float(c, 2, &bi) == -1)
		return -1;
	if (x->rank < 1)
		return err_set(c->err, "input 0: a scalar cannot be "
		    "normalised");
	if ((axis = ops_axis(attr_int(c->node, "axis", -1), x->rank,
	    c->err)) == -1)
		return -1;
	if (attr_int(c->node, "stash_type", 1) != 1)
		return err_set(c->err, "stash_type %lld is not supported",
		    (long long)attr_int(c->node, "stash_type", 1));
	R = prod(x->dims, axis), D = prod(x->dims + axis, x->rank - axis);
	if (!bcasts_to(sc, x->rank - axis, x->dims + axis) ||
	    (bi && !bcasts_to(bi, x->rank - axis, x->dims + axis)))
		return err_set(c->err, "scale or bias does not broadcast to "
		    "the normalised shape");
	if (tensor_alloc_like(&c->out[0], DT_FLOAT, x, c->err) == -1)
		return -1;
	memcpy(sdims, x->dims, sizeof(int64_t) * x->rank);
	for (int i = axis; i < x->rank; i++)
		sdims[i] = 1;
	for (int o = 1; o <= 2; o++)
		if (ops_want_output(c, o) && tensor_alloc(&c->out[o], DT_FLOAT,
		    x->rank, sdims, c->err) == -1)
			return -1;
	mean = ops_want_output(c, 1) ? c->out[1].data : NULL;
	inv = ops_want_output(c, 2) ? c->out[2].data : NULL;
	if (!(scale = malloc(sizeof *scale * (size_t)(D ? D : 1))) ||
	    !(bias = calloc((size_t)(D ? D : 1), sizeof *bias))) {
		free(scale);
		return err_nomem(c->err);
	}
	bcast_fill(sc, x->rank - axis, x->dims + axis, scale);
	if (bi)
		bcast_fill(bi, x->rank - axis, x->dims + axis, bias);
	threads = threads_for(c, x->nelem);
	lj.x = x->data, lj.y = c->out[0].data, lj.scale = scale;
	lj.bias = bias, lj.mean = mean, lj.inv = inv, lj.D = D, lj.eps = eps;
	par_for(R, threads, ln_row, &lj);
	free(scale);
	free(bias);
	return 0;
}

struct lrn_job {
	const float *x;
	float *y;
	int64_t C, S, lo, hi, size;
	float alpha, beta, bias;
};

/* par_range: planes [i0, i1) of an LRN. */
static void
lrn_planes(void *ctx, int64_t i0, int64_t i1, int w)
{
	const struct lrn_job *lj = ctx;
	int64_t C = lj->C, S = lj->S, size = lj->size;
	float alpha = lj->alpha, beta = lj->beta, bias = lj->bias;

	(void)w;
	for (int64_t i = i0; i < i1; i++) {
		int64_t n = i / C, ch = i % C;
		int64_t c0 = ch - lj->lo < 0 ? 0 : ch - lj->lo;
		int64_t c1 = ch + lj->hi >= C ? C - 1 : ch + lj->hi;
		const float *xd = lj->x + n * C * S;
		float *yp = lj->y + i * S;

		for (int64_t j = 0; j < S; j++) {
			double sq = 0;

			for (int64_t k = c0; k <= c1; k++)
				sq += (double)xd[k * S + j] * xd[k * S + j];
			yp[j] = (float)(xd[ch * S + j] /
			    pow(bias + alpha / size * sq, beta));
		}
	}
}

static int
lrn_run(struct op_ctx *c)
{
	const struct tensor *x;
	float alpha = attr_float(c->node, "alpha", 1e-4f);
	float beta = attr_float(c->node, "beta", 0.75f);
	float bias = attr_float(c->node, "bias", 1);
	int64_t size = attr_int(c->node, "size", 0), N, C, S, lo, hi;
	int threads;

	if (!(x = need_float(c, 0)))
		return -1;
	if (x->rank < 2)
		return err_set(c->err, "input 0: expected rank 2 or more "
		    "(N x C ...), got %d", x->rank);
	if (size < 1 || size > ATTR_MAX)
		return err_set(c->err, "attribute size must be positive");
	N = x->dims[0], C = x->dims[1], S = prod(x->dims + 2, x->rank - 2);
	lo = (size - 1) / 2, hi = size - 1 - lo;
	if (tensor_alloc_like(&c->out[0], DT_FLOAT, x, c->err) == -1)
		return -1;
	threads = threads_for(c, x->nelem * size);
	{
		struct lrn_job j = { x->data, c->out[0].data, C, S, lo, hi,
		    size, alpha, beta, bias };

		par_range(N * C, threads, lrn_planes, &j);
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Resize and Upsample */

/*
 * Resizing is separable: each axis gets a table of taps (input index and
 * weight per output position, plus an extrapolate flag for
 * tf_crop_and_resize), computed with ONNX Runtime's float arithmetic so
 * the chosen neighbours agree with it. Nearest mode gathers all axes at
 * once (any element type); linear and cubic interpolate one axis per
 * pass, skipping axes whose taps are the identity.
 */
enum { RZ_NEAREST, RZ_LINEAR, RZ_CUBIC };
enum {
	CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH, CT_ALIGN_CORNERS,
	CT_ASYMMETRIC, CT_TF_HALF_PIXEL_NN, CT_TF_CROP
};
enum { NM_PREFER_FLOOR, NM_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };

struct rz {
	int mode, ctm, nm, exclude, antialias, rank;
	float cubic_a, extrap;
	float scale[TENSOR_MAX_RANK], roi0[TENSOR_MAX_RANK],
	    roi1[TENSOR_MAX_RANK];
	int64_t in[TENSOR_MAX_RANK], out[TENSOR_MAX_RANK];
};

struct taps {
	int n;				/* taps per output position */
	int identity;
	int64_t *idx;			/* out x n, within [0, in) */
	float *w;			/* out x n */
	unsigned char *ext;		/* out: extrapolation value */
};

static int
rz_lookup(struct op_ctx *c, const char *name, const char *def,
    const char *const *names, int n, int *v)
{
	char buf[64];
	const char *s = attr_string(c->node, name, def, buf, sizeof buf);

	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0) {
			*v = i;
			return 0;
		}
	return err_set(c->err, "unsupported %s \"%s\"", name, s);
}

static float
rz_coord(const struct rz *r, int a, int64_t xo)
{
	float x = (float)xo, s = r->scale[a];
	float lin = (float)r->in[a], lout = (float)r->out[a];

	switch (r->ctm) {
	case CT_ASYMMETRIC:
		return x / s;
	case CT_PYTORCH:
		return lout > 1 ? (x + 0.5f) / s - 0.5f : 0.0f;
	case CT_TF_HALF_PIXEL_NN:
		return (x + 0.5f) / s;
	case CT_ALIGN_CORNERS:
		return lout == 1 ? 0 : x * (lin - 1) / (lout - 1);
	case CT_TF_CROP:
		return lout > 1 ? (float)(r->roi0[a] * (lin - 1) +
		    (x * (r->roi1[a] - r->roi0[a]) * (lin - 1)) / (lout - 1)) :
		    (float)(0.5 * (r->roi0[a] + r->roi1[a]) * (lin - 1));
	case CT_HALF_PIXEL_SYM: {
		float ow = s * lin, adj = lout / ow, center = lin / 2;
		float off = center * (1 - adj);

		return (float)(off + (x + 0.5) / s - 0.5);
	}
	default:
		return (x + 0.5f) / s - 0.5f;
	}
}

static int64_t
rz_nearest(int nm, float x, int down)
{
	switch (nm) {
	case NM_SIMPLE:
		return down ? (int64_t)ceilf(x) : (int64_t)x;
	case NM_PREFER_CEIL:
		return (int64_t)roundf(x);
	case NM_FLOOR:
		return (int64_t)floorf(x);
	case NM_CEIL:
		return (int64_t)ceilf(x);
	default:
		if (x == (float)(int64_t)x + 0.5f)
			return (int64_t)floorf(x);
		return (int64_t)roundf(x);
	}
}

static int64_t
clampi(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static float
cubic_w(float a, float x)
{
	x = fabsf(x);
	if (x < 1)
		return ((a + 2) * x - (a + 3)) * x * x + 1;
	if (x < 2)
		return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
	return 0;
}

static void
taps_free(struct taps *t)
{
	free(t->idx);
	free(t->w);
	free(t->ext);
	memset(t, 0, sizeof *t);
}

/* Taps of axis a (in[a] > 0 and out[a] > 0). */
static int
taps_make(struct op_ctx *c, const struct rz *r, int a, struct taps *t)
{
	int64_t in = r->in[a], out = r->out[a];
	float support = 0, inv = 1;
	int n;

	memset(t, 0, sizeof *t);
	if (r->mode == RZ_NEAREST)
		n = 1;
	else if (!r->antialias)
		n = r->mode == RZ_LINEAR ? 2 : 4;
	else {
		/* Filters widened by 1/scale when shrinking (Pillow style). */
		float s = r->scale[a];

		support = r->mode == RZ_LINEAR ? 1.0f : 2.0f;
		if (s < 1) {
			support /= s;
			inv = s;
		}
		if (support > 1 << 20)
			return err_set(c->err, "scale %g is too small", s);
		n = (int)ceilf(support) * 2 + 1;
	}
	if (out > TENSOR_MAX_BYTES / n)
		return err_set(c->err, "resize is too large");
	t->n = n;
	if (!(t->idx = calloc((size_t)(out * n), sizeof *t->idx)) ||
	    !(t->w = calloc((size_t)(out * n), sizeof *t->w)) ||
	    !(t->ext = calloc((size_t)out, 1))) {
		taps_free(t);
		return err_nomem(c->err);
	}
	t->identity = in == out;
	/*
	 * ONNX Runtime maps an axis of scale 1 straight through, whatever
	 * the coordinate transformation (only crops of the innermost two
	 * axes still move in linear and cubic modes).
	 */
	if (r->scale[a] == 1.0f && in == out && (r->mode == RZ_NEAREST ||
	    r->ctm != CT_TF_CROP || a < r->rank - 2)) {
		for (int64_t o = 0; o < out; o++) {
			t->idx[o * n] = o;
			t->w[o * n] = 1;
		}
		return 0;
	}
	for (int64_t o = 0; o < out; o++) {
		float x = rz_coord(r, a, o);
		int64_t *ix = t->idx + o * n;
		float *w = t->w + o * n;

		if (r->ctm == CT_TF_CROP && (x < 0 || x > (float)(in - 1)))
			t->ext[o] = 1;
		if (r->mode == RZ_NEAREST) {
			ix[0] = clampi(rz_nearest(r->nm, x, r->scale[a] < 1),
			    0, in - 1);
			w[0] = 1;
		} else if (r->antialias) {
			float center = x + 0.5f, total = 0;
			int64_t lo = (int64_t)floorf(center - support + 0.5f);
			int64_t hi = (int64_t)floorf(center + support + 0.5f);

			if (hi - lo > n)
				hi = lo + n;
			for (int64_t i = lo, k = 0; i < hi; i++, k++) {
				float wv = (i - center + 0.5f) * inv;

				wv = r->mode == RZ_LINEAR ?
				    (fabsf(wv) < 1 ? 1 - fabsf(wv) : 0) :
				    cubic_w(r->cubic_a, wv);
				if (r->exclude && (i < 0 || i >= in))
					wv = 0;
				ix[k] = clampi(i, 0, in - 1);
				w[k] = wv;
				total += wv;
			}
			for (int k = 0; k < n; k++)
				w[k] = total != 0 ? w[k] / total : w[k];
		} else if (r->mode == RZ_LINEAR) {
			float xc = x < 0 ? 0 : x > (float)(in - 1) ?
			    (float)(in - 1) : x;
			int64_t x1 = clampi((int64_t)xc, 0, in - 1);
			int64_t x2 = x1 + 1 < in ? x1 + 1 : in - 1;
			float d1 = fabsf(xc - (float)x1),
			    d2 = fabsf(xc - (float)x2);

			if (x1 == x2)
				d1 = d2 = 0.5f;
			ix[0] = x1, w[0] = d2;
			ix[1] = x2, w[1] = d1;
		} else {
			float fl = floorf(x), s = x - fl, total = 0;
			float ca = r->cubic_a;
			int64_t x0 = (int64_t)fl;

			w[0] = ((ca * (s + 1) - 5 * ca) * (s + 1) + 8 * ca) *
			    (s + 1) - 4 * ca;
			w[1] = ((ca + 2) * s - (ca + 3)) * s * s + 1;
			w[2] = ((ca + 2) * (1 - s) - (ca + 3)) * (1 - s) *
			    (1 - s) + 1;
			w[3] = ((ca * (2 - s) - 5 * ca) * (2 - s) + 8 * ca) *
			    (2 - s) - 4 * ca;
			for (int k = 0; k < 4; k++) {
				int64_t i = x0 - 1 + k;

				if (r->exclude && (i < 0 || i >= in))
					w[k] = 0;
				total += w[k];
				ix[k] = clampi(i, 0, in - 1);
			}
			if (r->exclude && total != 0)
				for (int k = 0; k < 4; k++)
					w[k] /= total;
		}
		if (t->identity) {
			float on = 0;
			int ok = !t->ext[o];

			for (int k = 0; k < n; k++)
				if (ix[k] == o)
					on += w[k];
				else if (w[k] != 0)
					ok = 0;
			t->identity = ok && on == 1;
		}
	}
	return 0;
}

struct gather_job {
	const struct rz *r;
	const struct taps *t;
	const unsigned char *x;
	unsigned char *y;
	size_t es;
	const void *extrap;
	const int64_t *ist;		/* input strides */
};

/* par_range: output rows [r0, r1) of rz_gather. */
static void
gather_rows(void *ctx, int64_t r0, int64_t r1, int w)
{
	const struct gather_job *j = ctx;
	const struct rz *r = j->r;
	const struct taps *t = j->t;
	int last = r->rank - 1;
	int64_t W = r->out[last], prev = -1;
	size_t es = j->es;

	(void)w;
	for (int64_t row = r0; row < r1; row++) {
		int64_t rem = row, base = 0, ext = 0;
		unsigned char *yr = j->y + (size_t)(row * W) * es;

		for (int a = last - 1; a >= 0; a--) {
			int64_t o = rem % r->out[a];

			rem /= r->out[a];
			base += t[a].idx[o] * j->ist[a];
			ext |= t[a].ext[o];
		}
		if (ext) {
			for (int64_t o = 0; o < W; o++)
				memcpy(yr + o * es, j->extrap, es);
			prev = -1;
			continue;
		}
		if (base == prev && row > r0) {
			memcpy(yr, yr - W * es, (size_t)W * es);
			continue;
		}
		prev = base;
		if (es == 4) {
			const uint32_t *xs = (const uint32_t *)j->x + base;
			uint32_t *yd = (uint32_t *)yr;

			for (int64_t o = 0; o < W; o++)
				yd[o] = xs[t[last].idx[o]];
		} else
			for (int64_t o = 0; o < W; o++)
				memcpy(yr + o * es, j->x + (size_t)(base +
				    t[last].idx[o]) * es, es);
		for (int64_t o = 0; o < W; o++)
			if (t[last].ext[o])
				memcpy(yr + o * es, j->extrap, es);
	}
}

/* Nearest: gather every axis at once; es bytes an element. */
static void
rz_gather(struct op_ctx *c, const struct rz *r, struct taps *t,
    const unsigned char *x, unsigned char *y, size_t es, const void *extrap)
{
	int rank = r->rank, last = rank - 1;
	int64_t ist[TENSOR_MAX_RANK], rows = prod(r->out, last);
	int64_t W = r->out[last];
	int threads = threads_for(c, rows * W);
	struct gather_job j = { r, t, x, y, es, extrap, ist };

	for (int64_t a = rank - 1, s = 1; a >= 0; a--) {
		ist[a] = s;
		s *= r->in[a];
	}
	par_range(rows, threads, gather_rows, &j);
}

struct pass_job {
	const struct taps *t;
	int64_t in, out, inner;
	const float *x;
	float *y;
	float extrap;
	int crop;
};

/* par_range: output rows [i0, i1) of rz_pass. */
static void
pass_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
	const struct pass_job *pj = ctx;
	const struct taps *t = pj->t;
	int64_t in = pj->in, out = pj->out, inner = pj->inner;
	const float *x = pj->x;
	float *y = pj->y, extrap = pj->extrap;

	(void)tid;
	for (int64_t i = i0; i < i1; i++) {
		int64_t ob = i / out, o = i % out;
		const float *xs = x + ob * in * inner;
		float *yr = y + i * inner;
		const int64_t *ix = t->idx + o * t->n;
		const float *w = t->w + o * t->n;

		if (pj->crop && t->ext[o]) {
			for (int64_t j = 0; j < inner; j++)
				yr[j] = extrap;
			continue;
		}
		if (inner == 1) {
			float s = 0;

			for (int k = 0; k < t->n; k++)
				s += w[k] * xs[ix[k]];
			yr[0] = s;
			continue;
		}
		for (int64_t j = 0; j < inner; j++)
			yr[j] = 0;
		for (int k = 0; k < t->n; k++) {
			const float *xr = xs + ix[k] * inner;
			float wk = w[k];

			if (wk == 0)
				continue;
			for (int64_t j = 0; j < inner; j++)
				yr[j] += wk * xr[j];
		}
	}
}

/* One interpolation pass along axis a of x (dims d) into y. */
static void
rz_pass(struct op_ctx *c, const struct taps *t, int64_t outer, int64_t in,
    int64_t out, int64_t inner, const float *x, float *y, float extrap,
    int crop)
{
	struct pass_job pj = { t, in, out, inner, x, y, extrap, crop };

	par_range(outer * out, threads_for(c, outer * out * inner * t->n),
	    pass_rows, &pj);
}

/*
 * Linear resizing of the last two axes of an N x C x H x W (or H x W)
 * tensor is how ONNX Runtime runs it (UpsampleBilinear): one sum of four
 * weighted neighbours, dx2*dy2*X11 + dx1*dy2*X21 + dx2*dy1*X12 +
 * dx1*dy1*X22, in float, left to right. Interpolating one axis after the
 * other rounds differently, and in a QDQ model the result often sits
 * exactly on a rounding tie of the next QuantizeLinear (the neighbours
 * share its grid and the weights are multiples of 1/4).
 */
static int
rz_is_bilinear(const struct rz *r)
{
	if (r->mode != RZ_LINEAR || r->antialias)
		return 0;
	if (r->rank == 2)
		return 1;
	return r->rank == 4 && r->scale[0] == 1.0f && r->scale[1] == 1.0f &&
	    r->in[0] == r->out[0] && r->in[1] == r->out[1];
}

/*
 * The two taps of output o on axis a as ORT has them: an axis of scale 1
 * maps o onto (o, o + 1) with weights (1, 0), except the last index,
 * which gets (o, o) with weights (0.5, 0.5).
 */
static void
rz_tap2(const struct rz *r, const struct taps *t, int a, int64_t o,
    int64_t *i1, int64_t *i2, float *w1, float *w2)
{
	*i1 = t->idx[o * 2], *i2 = t->idx[o * 2 + 1];
	*w1 = t->w[o * 2], *w2 = t->w[o * 2 + 1];
	if (r->scale[a] == 1.0f && r->in[a] == r->out[a]) {
		if (o == r->in[a] - 1)
			*i2 = o, *w1 = *w2 = 0.5f;
		else
			*i2 = o + 1;
	}
}

struct bilinear_job {
	const struct rz *r;
	const struct taps *t;
	const float *x;
	float *y;
};

static void bilinear_rows(void *ctx, int64_t i0, int64_t i1, int w);

static void
rz_bilinear(struct op_ctx *c, const struct rz *r, const struct taps *t,
    const float *x, float *y)
{
	int a = r->rank - 2;
	int64_t OH = r->out[a], OW = r->out[a + 1];
	int64_t planes = prod(r->out, a);
	struct bilinear_job j = { r, t, x, y };

	par_range(planes * OH, threads_for(c, planes * OH * OW * 4),
	    bilinear_rows, &j);
}

/* par_range: output rows [i0, i1) of rz_bilinear. */
static void
bilinear_rows(void *ctx, int64_t i0, int64_t i1, int w)
{
	const struct bilinear_job *j = ctx;
	const struct rz *r = j->r;
	const float *x = j->x;
	float *y = j->y;
	int a = r->rank - 2;
	int64_t H = r->in[a], W = r->in[a + 1];
	int64_t OH = r->out[a], OW = r->out[a + 1];
	const struct taps *ty = &j->t[a], *tx = &j->t[a + 1];

	(void)w;
	for (int64_t i = i0; i < i1; i++) {
		int64_t p = i / OH, oy = i % OH;
		const float *xp = x + p * H * W, *r1, *r2;
		float *yr = y + i * OW, dy1, dy2;
		int64_t y1, y2;

		rz_tap2(r, ty, a, oy, &y1, &y2, &dy2, &dy1);
		r1 = xp + y1 * W, r2 = xp + y2 * W;
		for (int64_t ox = 0; ox < OW; ox++) {
			int64_t x1, x2;
			float dx1, dx2;

			rz_tap2(r, tx, a + 1, ox, &x1, &x2, &dx2, &dx1);
			if (ty->ext[oy] || tx->ext[ox]) {
				yr[ox] = r->extrap;
				continue;
			}
			yr[ox] = dx2 * dy2 * r1[x1] + dx1 * dy2 * r1[x2] +
			    dx2 * dy1 * r2[x1] + dx1 * dy1 * r2[x2];
		}
	}
}

static int
rz_interp(struct op_ctx *c, const struct rz *r, struct taps *t,
    const float *x, float *y)
{
	int order[TENSOR_MAX_RANK], np = 0, rank = r->rank;
	int64_t d[TENSOR_MAX_RANK];
	float *buf[2] = { NULL, NULL };
	const float *src = x;
	int rc = 0;

	for (int a = 0; a < rank; a++)
		if (!t[a].identity)
			order[np++] = a;
	/* Shrinking axes first keeps the intermediate small. */
	for (int i = 1; i < np; i++)
		for (int j = i; j > 0; j--) {
			int p = order[j - 1], q = order[j];

			if ((double)r->out[q] / r->in[q] <
			    (double)r->out[p] / r->in[p]) {
				order[j - 1] = q;
				order[j] = p;
			}
		}
	memcpy(d, r->in, sizeof(int64_t) * rank);
	if (rz_is_bilinear(r)) {
		rz_bilinear(c, r, t, x, y);
		return 0;
	}
	if (np == 0) {
		memcpy(y, x, sizeof(float) * (size_t)prod(r->in, rank));
		return 0;
	}
	for (int i = 0; i < np; i++) {
		int a = order[i];
		int64_t outer = prod(d, a);
		int64_t inner = prod(d + a + 1, rank - a - 1);
		float *dst;

		if (i == np - 1)
			dst = y;
		else {
			int64_t n = outer * r->out[a] * inner;

			free(buf[i & 1]);
			if (!(buf[i & 1] = malloc(sizeof(float) *
			    (size_t)(n ? n : 1)))) {
				rc = err_nomem(c->err);
				break;
			}
			dst = buf[i & 1];
		}
		rz_pass(c, &t[a], outer, d[a], r->out[a], inner, src, dst,
		    r->extrap, r->ctm == CT_TF_CROP);
		d[a] = r->out[a];
		src = dst;
	}
	free(buf[0]);
	free(buf[1]);
	return rc;
}

/* Scales or sizes given per axis in axes[] (n of them) onto all rank axes. */
static int
rz_float_list(struct op_ctx *c, const struct tensor *t, int which,
    double *v, int64_t *n)
{
	if (t->dtype != DT_FLOAT && t->dtype != DT_DOUBLE &&
	    t->dtype != DT_FLOAT16)
		return err_set(c->err, "input %d: expected float values, got "
		    "%s", which, ops_type_name(t->dtype));
	if (t->nelem > 2 * TENSOR_MAX_RANK)
		return err_set(c->err, "input %d: too many values", which);
	for (int64_t i = 0; i < t->nelem; i++)
		v[i] = tensor_get(t, i);
	*n = t->nelem;
	return 0;
}

static int
resize_common(struct op_ctx *c, int upsample)
{
	static const char *const modes[] = { "nearest", "linear", "cubic" };
	static const char *const ctms[] = { "half_pixel",
	    "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
	    "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize" };
	static const char *const nms[] = { "round_prefer_floor",
	    "round_prefer_ceil", "floor", "ceil" };
	static const char *const kars[] = { "stretch", "not_larger",
	    "not_smaller" };
	const struct tensor *x, *roi = NULL, *sct = NULL, *szt = NULL;
	struct rz r;
	struct taps t[TENSOR_MAX_RANK];
	int axes[TENSOR_MAX_RANK], naxes = 0, kar = 0, rc = -1;
	int64_t in_axes[TENSOR_MAX_RANK] = { 0 };
	double vals[2 * TENSOR_MAX_RANK];
	int64_t nv;
	char buf[32];

	memset(&r, 0, sizeof r);
	memset(t, 0, sizeof t);
	if (!(x = need(c, 0)))
		return -1;
	if (dtype_size(x->dtype) == 0)
		return err_set(c->err, "input 0: element type %s is not "
		    "supported", ops_type_name(x->dtype));
	r.rank = x->rank;
	memcpy(r.in, x->dims, sizeof(int64_t) * x->rank);
	if (upsample) {
		const char *m = attr_string(c->node, "mode", "nearest", buf,
		    sizeof buf);

		if (strcmp(m, "nearest") == 0)
			r.mode = RZ_NEAREST;
		else if (strcmp(m, "linear") == 0 || strcmp(m, "bilinear") == 0)
			r.mode = RZ_LINEAR;
		else
			return err_set(c->err, "unsupported mode \"%s\"", m);
		r.ctm = CT_ASYMMETRIC, r.nm = NM_SIMPLE;
	} else {
		if (rz_lookup(c, "mode", "nearest", modes, 3, &r.mode) == -1)
			return -1;
		if (c->opset >= 11) {
			if (rz_lookup(c, "coordinate_transformation_mode",
			    "half_pixel", ctms, 7, &r.ctm) == -1 ||
			    rz_lookup(c, "nearest_mode", "round_prefer_floor",
			    nms, 4, &r.nm) == -1)
				return -1;
		} else
			r.ctm = CT_ASYMMETRIC, r.nm = NM_SIMPLE;
		r.cubic_a = attr_float(c->node, "cubic_coeff_a", -0.75f);
		r.exclude = attr_int(c->node, "exclude_outside", 0) != 0;
		r.extrap = attr_float(c->node, "extrapolation_value", 0);
		if (c->opset >= 18) {
			size_t na;
			const int64_t *ax = attr_ints(c->node, "axes", &na);

			r.antialias = attr_int(c->node, "antialias", 0) != 0;
			if (rz_lookup(c, "keep_aspect_ratio_policy",
			    "stretch", kars, 3, &kar) == -1)
				return -1;
			if (na > (size_t)x->rank)
				return err_set(c->err, "axes has too many "
				    "values");
			for (size_t i = 0; i < na; i++) {
				int a = ops_axis(ax[i], x->rank, c->err);

				if (a == -1)
					return -1;
				if (in_axes[a])
					return err_set(c->err, "axis %d is "
					    "repeated", a);
				in_axes[a] = 1;
				axes[naxes++] = a;
			}
		}
		if (r.antialias && r.mode == RZ_NEAREST)
			r.antialias = 0;
	}
	if (naxes == 0)
		for (int a = 0; a < x->rank; a++)
			axes[naxes++] = a;
	/* Inputs by opset. */
	if (upsample) {
		if (c->opset >= 9) {
			if (!(sct = need(c, 1)))
				return -1;
		}
	} else if (c->opset < 11) {
		if (!(sct = need(c, 1)))
			return -1;
	} else {
		roi = ops_input(c, 1);
		sct = ops_input(c, 2);
		szt = ops_input(c, 3);
		if (sct && sct->nelem == 0)
			sct = NULL;
		if (szt && szt->nelem == 0)
			szt = NULL;
		if (sct && szt)
			return err_set(c->err, "only one of scales and sizes "
			    "may be given");
		if (!sct && !szt)
			return err_set(c->err, "scales or sizes is needed");
	}
	for (int a = 0; a < x->rank; a++)
		r.scale[a] = 1, r.out[a] = r.in[a], r.roi0[a] = 0,
		    r.roi1[a] = 1;
	if (upsample && c->opset < 9) {
		size_t n;
		const float *s = attr_floats(c->node, "scales", &n);

		if (!s || n != (size_t)x->rank)
			return err_set(c->err, "attribute scales must have %d "
			    "values", x->rank);
		for (int a = 0; a < x->rank; a++)
			vals[a] = s[a];
		nv = x->rank;
		goto scales;
	}
	if (sct) {
		if (rz_float_list(c, sct, upsample || c->opset < 11 ? 1 : 2,
		    vals, &nv) == -1)
			return -1;
scales:
		if (nv != naxes)
			return err_set(c->err, "scales has %lld values for %d "
			    "axes", (long long)nv, naxes);
		for (int i = 0; i < naxes; i++) {
			int a = axes[i];
			float s = (float)vals[i];

			if (!(s > 0) || (upsample && s < 1) || s > 1e6f)
				return err_set(c->err, "scale %g is out of "
				    "range", s);
			r.scale[a] = s;
			r.out[a] = (int64_t)(s * (float)r.in[a]);
		}
	} else {
		int64_t *sz;
		float pol = kar == 1 ? FLT_MAX : 0;

		if (ops_read_ints(szt, &sz, &nv, c->err) == -1)
			return -1;
		if (nv != naxes) {
			free(sz);
			return err_set(c->err, "sizes has %lld values for %d "
			    "axes", (long long)nv, naxes);
		}
		for (int i = 0; i < naxes; i++) {
			int a = axes[i];

			if (sz[i] < 0 || sz[i] > ATTR_MAX) {
				err_set(c->err, "size %lld is out of range",
				    (long long)sz[i]);
				free(sz);
				return -1;
			}
			if (r.in[a] == 0 && sz[i] != 0) {
				err_set(c->err, "cannot resize an empty axis "
				    "to %lld", (long long)sz[i]);
				free(sz);
				return -1;
			}
			r.out[a] = sz[i];
			r.scale[a] = r.in[a] ? (float)sz[i] / (float)r.in[a] :
			    1;
			if (kar == 1 && r.scale[a] < pol)
				pol = r.scale[a];
			if (kar == 2 && r.scale[a] > pol)
				pol = r.scale[a];
		}
		free(sz);
		if (kar != 0)
			for (int i = 0; i < naxes; i++) {
				int a = axes[i];

				r.scale[a] = pol;
				r.out[a] = (int64_t)roundf(pol *
				    (float)r.in[a]);
			}
	}
	/* An absent or empty roi crops nothing (as ONNX Runtime). */
	if (r.ctm == CT_TF_CROP && roi && roi->nelem > 0) {
		if (rz_float_list(c, roi, 1, vals, &nv) == -1)
			return -1;
		if (nv != 2 * naxes)
			return err_set(c->err, "roi has %lld values for %d "
			    "axes", (long long)nv, naxes);
		for (int i = 0; i < naxes; i++) {
			r.roi0[axes[i]] = (float)vals[i];
			r.roi1[axes[i]] = (float)vals[naxes + i];
		}
	}
	for (int a = 0; a < r.rank; a++)
		if (r.out[a] < 0 || r.out[a] > ATTR_MAX)
			return err_set(c->err, "output size %lld is out of "
			    "range", (long long)r.out[a]);
	if (tensor_alloc_uninit(&c->out[0], x->dtype, x->rank, r.out,
	    c->err) == -1)
		return -1;
	if (c->out[0].nelem == 0)
		return 0;
	if (x->nelem == 0)
		return err_set(c->err, "cannot resize an empty tensor");
	if (x->rank == 0) {
		memcpy(c->out[0].data, x->data, dtype_size(x->dtype));
		return 0;
	}
	for (int a = 0; a < r.rank; a++)
		if (taps_make(c, &r, a, &t[a]) == -1)
			goto out;
	if (r.mode == RZ_NEAREST) {
		struct tensor e = { 0 };
		int64_t one = 1;

		if (tensor_alloc(&e, x->dtype, 1, &one, c->err) == -1)
			goto out;
		tensor_set(&e, 0, r.extrap);
		rz_gather(c, &r, t, x->data, c->out[0].data,
		    dtype_size(x->dtype), e.data);
		tensor_release(&e);
		rc = 0;
	} else if (x->dtype == DT_FLOAT)
		rc = rz_interp(c, &r, t, x->data, c->out[0].data);
	else {
		float *xf, *yf;

		if (!(xf = malloc(sizeof *xf * (size_t)x->nelem)) ||
		    !(yf = malloc(sizeof *yf * (size_t)c->out[0].nelem))) {
			free(xf);
			err_nomem(c->err);
			goto out;
		}
		tensor_to_float(x, xf);
		rc = rz_interp(c, &r, t, xf, yf);
		for (int64_t i = 0; rc == 0 && i < c->out[0].nelem; i++)
			tensor_set(&c->out[0], i, yf[i]);
		free(xf);
		free(yf);
	}
out:
	for (int a = 0; a < r.rank; a++)
		taps_free(&t[a]);
	return rc;
}

OPS_KERNEL(resize_run, resize_common, 0)
OPS_KERNEL(upsample_run, resize_common, 1)

const struct op_def op_nn_defs[] = {
	{ "", "Conv", conv_run, nn_state_free },
	{ "", "ConvTranspose", convt_run, nn_state_free },
	{ "", "Gemm", gemm_run, nn_state_free },
	{ "", "MatMul", matmul_run, nn_state_free },
	{ "", "Einsum", einsum_run, nn_state_free },
	{ "", "MaxPool", maxpool_run, NULL },
	{ "", "AveragePool", avgpool_run, NULL },
	{ "", "LpPool", lppool_run, NULL },
	{ "", "GlobalAveragePool", gavgpool_run, NULL },
	{ "", "GlobalMaxPool", gmaxpool_run, NULL },
	{ "", "GlobalLpPool", glppool_run, NULL },
	{ "", "BatchNormalization", batchnorm_run, NULL },
	{ "", "InstanceNormalization", instnorm_run, NULL },
	{ "", "LayerNormalization", layernorm_run, NULL },
	{ "", "LRN", lrn_run, NULL },
	{ "", "Resize", resize_run, NULL },
	{ "", "Upsample", upsample_run, NULL },
	{ NULL, NULL, NULL, NULL },
};
