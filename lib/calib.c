/*
 * calib: the calibration engine and its samples. See calib.h.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calib.h"
#include "dataset.h"
#include "graph.h"
#include "strmap.h"

/*
 * The fast path for float tensors (the statistics of every activation
 * cost about as much as the inference otherwise): the tensor is cut into
 * chunks of CHUNK values at fixed offsets, the threads take chunks, and
 * each chunk is reduced in 16 explicit lanes (which the compiler turns
 * into vector code without reordering the sums) to its count, range, and
 * sum and sum of squares in double; these chunk sums are then added
 * exactly (xsum). So the result depends on the tensor only, not on the
 * number of threads or the order they finish in. The histogram is
 * counted in a flat array per thread indexed by the top bits of the
 * float (sign, exponent, mbits of mantissa), the blocks touched are
 * marked, and only those are moved into the tensor's histogram.
 */
#define CHUNK 8192
#define LANES 16
#define FLAT_MBITS_MAX 8	/* above, the flat counts take too much memory */
/*
 * Smaller tensors stay on one thread: the gain is small, and every
 * parallel region waits for the other thread, which a busy machine may
 * not run for a while (on a loaded two-core machine, splitting all
 * tensors of 32K values and up made calibration 30% slower, 1M and up
 * 10%).
 */
#define PAR_MIN ((size_t)1 << 20)
#define NBLOCKS 512		/* sign and exponent */
/*
 * Four sets of counts, element i counting in set i % 4: runs of equal
 * values (the zeros after a Relu) would otherwise wait on one counter.
 */
#define SETS 4

struct worker {
	uint32_t *cnt;		/* SETS sets of 512 << mbits counts */
	unsigned char mark[NBLOCKS];
	float *edge;		/* bins collected for the histogram ... */
	uint64_t *count;	/* ... and their counts, 512 << mbits at most */
	size_t nbins;
	uint64_t zero;		/* zeros and subnormals collected */
	uint64_t n, nan, inf;
	float min, max;
	struct xsum sum, sumsq;
};

struct ctensor {
	char *name;
	int seen;		/* produced as a float tensor at least once */
	struct tstats ts;
};

struct calib {
	const struct model *m;
	struct interp *ip;
	int mbits;
	struct ctensor *t;	/* in the model's order */
	int nt;
	struct strmap *index;	/* name -> position in t */
	float *scratch;		/* float copies of float16/double tensors */
	size_t scratch_cap;
	uint64_t batches;
	struct tensor *outs;	/* graph outputs of a run, released at once */
	struct worker *w;	/* fast path: one per thread; NULL: tstats' path */
	int nw;
	int *seen;		/* positions in t of the tensors seen, in order */
	int nseen;
	int seen_dirty;		/* a tensor was seen for the first time */
	int simd;		/* the vector code this CPU runs */
};

void
calib_opts_init(struct calib_opts *o)
{
	o->threads = 0;
	o->mbits = HIST_MBITS_DEFAULT;
}

static int
add_tensor(struct calib *c, const char *name, struct err *e)
{
	struct ctensor *t;

	if (!name || !name[0] || strmap_get(c->index, name, NULL))
		return 0;
	t = &c->t[c->nt];
	if (!(t->name = strdup(name)))
		return err_nomem(e);
	if (tstats_init(&t->ts, c->mbits, e) < 0) {
		free(t->name);
		return -1;
	}
	if (strmap_put(c->index, name, c->nt) < 0) {
		tstats_release(&t->ts);
		free(t->name);
		return err_nomem(e);
	}
	c->nt++;
	return 0;
}

/* The tensors in the model's order (see calib.h). */
static int
list_tensors(struct calib *c, struct err *e)
{
	Onnx__GraphProto *g = c->m->proto->graph;
	struct graph *gr;
	const int *topo;
	size_t cap = 0;

	for (size_t i = 0; i < g->n_node; i++)
		cap += g->node[i]->n_output;
	cap += (size_t)interp_ninputs(c->ip) + 1;
	if (!(c->t = calloc(cap, sizeof *c->t)) ||
	    !(c->seen = calloc(cap, sizeof *c->seen)) ||
	    !(c->index = strmap_new()))
		return err_nomem(e);
	for (int i = 0; i < interp_ninputs(c->ip); i++)
		if (add_tensor(c, interp_input_name(c->ip, i), e) < 0)
			return -1;
	if (!(gr = graph_new(g, e)))
		return -1;
	topo = graph_topo(gr);
	for (size_t k = 0; k < g->n_node; k++) {
		const Onnx__NodeProto *n = g->node[topo[k]];

		for (size_t j = 0; j < n->n_output; j++)
			if (add_tensor(c, n->output[j], e) < 0) {
				graph_free(gr);
				return -1;
			}
	}
	graph_free(gr);
	return 0;
}

static int observe(void *ctx, const char *name, const struct tensor *t,
    struct err *e);
static int simd_level(void);

struct calib *
calib_new(const struct model *m, const struct calib_opts *o, struct err *e)
{
	struct calib_opts def;
	struct interp_opts io = { 0 };
	struct calib *c;

	if (!o) {
		calib_opts_init(&def);
		o = &def;
	}
	if (!(c = calloc(1, sizeof *c))) {
		err_nomem(e);
		return NULL;
	}
	c->m = m;
	c->mbits = o->mbits;
	io.threads = o->threads;
	io.observe = observe;
	io.observe_ctx = c;
	if (!(c->ip = interp_new(m, &io, e)))
		goto fail;
	if (list_tensors(c, e) < 0)
		goto fail;
	if (!(c->outs = calloc((size_t)interp_noutputs(c->ip) + 1,
	    sizeof *c->outs))) {
		err_nomem(e);
		goto fail;
	}
	c->simd = simd_level();
	if (c->mbits >= 0 && c->mbits <= FLAT_MBITS_MAX) {
		c->nw = o->threads > 0 ? o->threads : 2;
		if (!(c->w = calloc((size_t)c->nw, sizeof *c->w))) {
			err_nomem(e);
			goto fail;
		}
		for (int t = 0; t < c->nw; t++)
			if (!(c->w[t].cnt = calloc((size_t)SETS * NBLOCKS <<
			    c->mbits, sizeof *c->w[t].cnt)) ||
			    !(c->w[t].edge = malloc(((size_t)NBLOCKS <<
			    c->mbits) * sizeof *c->w[t].edge)) ||
			    !(c->w[t].count = malloc(((size_t)NBLOCKS <<
			    c->mbits) * sizeof *c->w[t].count))) {
				err_nomem(e);
				goto fail;
			}
	}
	return c;
fail:
	calib_free(c);
	return NULL;
}

void
calib_free(struct calib *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nt; i++) {
		free(c->t[i].name);
		tstats_release(&c->t[i].ts);
	}
	free(c->t);
	free(c->seen);
	strmap_free(c->index);
	free(c->scratch);
	free(c->outs);
	for (int t = 0; c->w && t < c->nw; t++) {
		free(c->w[t].cnt);
		free(c->w[t].edge);
		free(c->w[t].count);
	}
	free(c->w);
	interp_free(c->ip);
	free(c);
}

const struct interp *
calib_interp(const struct calib *c)
{
	return c->ip;
}

uint64_t
calib_batches(const struct calib *c)
{
	return c->batches;
}

/*
 * The lanes of one chunk: lane l adds the values at offsets l, l + 16,
 * l + 32, ... in that order; the AVX-512, AVX2, SSE2 and plain versions
 * compute exactly the same sums (a float's square is exact in double, so
 * a fused multiply-add rounds as the add alone), so every build and
 * machine writes the same stream. Sixteen lanes, not fewer: each lane's
 * additions wait on the one before, and with eight the moments took half
 * as long again as with sixteen.
 */
struct lanes {
	double s[LANES], q[LANES];
	float lo, hi;
	float amin;		/* the least magnitude, for the histogram's marks */
};

__attribute__((unused)) static size_t
lanes_plain(const float *p, size_t n, struct lanes *r)
{
	float lo = INFINITY, hi = -INFINITY, amin = INFINITY;
	size_t i = 0;

	for (; i + LANES <= n; i += LANES)
		for (int l = 0; l < LANES; l++) {
			double d = p[i + l];
			float a = fabsf(p[i + l]);

			r->s[l] += d;
			r->q[l] += d * d;
			lo = p[i + l] < lo ? p[i + l] : lo;
			hi = p[i + l] > hi ? p[i + l] : hi;
			amin = a < amin ? a : amin;
		}
	r->lo = lo;
	r->hi = hi;
	r->amin = amin;
	return i;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

enum simd { SIMD_PLAIN, SIMD_SSE2, SIMD_AVX2, SIMD_AVX512 };

static size_t
lanes_sse2(const float *p, size_t n, struct lanes *r)
{
	__m128d s[LANES / 2], q[LANES / 2];
	__m128 lo = _mm_set1_ps(INFINITY), hi = _mm_set1_ps(-INFINITY);
	__m128 amin = lo, absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
	float f[4];
	size_t i = 0;

	for (int k = 0; k < LANES / 2; k++)
		s[k] = q[k] = _mm_setzero_pd();
	for (; i + LANES <= n; i += LANES)
		for (int k = 0; k < LANES / 4; k++) {
			__m128 a = _mm_loadu_ps(p + i + 4 * k);
			__m128d a0 = _mm_cvtps_pd(a);
			__m128d a1 = _mm_cvtps_pd(_mm_movehl_ps(a, a));

			s[2 * k] = _mm_add_pd(s[2 * k], a0);
			s[2 * k + 1] = _mm_add_pd(s[2 * k + 1], a1);
			q[2 * k] = _mm_add_pd(q[2 * k], _mm_mul_pd(a0, a0));
			q[2 * k + 1] = _mm_add_pd(q[2 * k + 1], _mm_mul_pd(a1, a1));
			lo = _mm_min_ps(a, lo);
			hi = _mm_max_ps(a, hi);
			amin = _mm_min_ps(_mm_and_ps(a, absmask), amin);
		}
	for (int k = 0; k < LANES / 2; k++) {
		_mm_storeu_pd(r->s + 2 * k, s[k]);
		_mm_storeu_pd(r->q + 2 * k, q[k]);
	}
	_mm_storeu_ps(f, lo);
	r->lo = fminf(fminf(f[0], f[1]), fminf(f[2], f[3]));
	_mm_storeu_ps(f, hi);
	r->hi = fmaxf(fmaxf(f[0], f[1]), fmaxf(f[2], f[3]));
	_mm_storeu_ps(f, amin);
	r->amin = fminf(fminf(f[0], f[1]), fminf(f[2], f[3]));
	return i;
}

__attribute__((target("avx2,fma"))) static size_t
lanes_avx2(const float *p, size_t n, struct lanes *r)
{
	__m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
	__m256d q0 = s0, q1 = s0, q2 = s0, q3 = s0;
	__m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY);
	__m256 amin = lo;
	__m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	float f[8];
	size_t i = 0;

	for (; i + LANES <= n; i += LANES) {
		__m256 a = _mm256_loadu_ps(p + i), b = _mm256_loadu_ps(p + i + 8);
		__m256d a0 = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
		__m256d a1 = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
		__m256d b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(b));
		__m256d b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1));

		s0 = _mm256_add_pd(s0, a0);
		s1 = _mm256_add_pd(s1, a1);
		s2 = _mm256_add_pd(s2, b0);
		s3 = _mm256_add_pd(s3, b1);
		q0 = _mm256_fmadd_pd(a0, a0, q0);
		q1 = _mm256_fmadd_pd(a1, a1, q1);
		q2 = _mm256_fmadd_pd(b0, b0, q2);
		q3 = _mm256_fmadd_pd(b1, b1, q3);
		lo = _mm256_min_ps(_mm256_min_ps(a, b), lo);
		hi = _mm256_max_ps(_mm256_max_ps(a, b), hi);
		amin = _mm256_min_ps(_mm256_min_ps(_mm256_and_ps(a, absmask),
		    _mm256_and_ps(b, absmask)), amin);
	}
	_mm256_storeu_pd(r->s, s0);
	_mm256_storeu_pd(r->s + 4, s1);
	_mm256_storeu_pd(r->s + 8, s2);
	_mm256_storeu_pd(r->s + 12, s3);
	_mm256_storeu_pd(r->q, q0);
	_mm256_storeu_pd(r->q + 4, q1);
	_mm256_storeu_pd(r->q + 8, q2);
	_mm256_storeu_pd(r->q + 12, q3);
	_mm256_storeu_ps(f, lo);
	r->lo = f[0];
	for (int l = 1; l < 8; l++)
		r->lo = fminf(r->lo, f[l]);
	_mm256_storeu_ps(f, hi);
	r->hi = f[0];
	for (int l = 1; l < 8; l++)
		r->hi = fmaxf(r->hi, f[l]);
	_mm256_storeu_ps(f, amin);
	r->amin = f[0];
	for (int l = 1; l < 8; l++)
		r->amin = fminf(r->amin, f[l]);
	return i;
}

__attribute__((target("avx512f"))) static size_t
lanes_avx512(const float *p, size_t n, struct lanes *r)
{
	__m512d s0 = _mm512_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
	__m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
	__m512 amin = lo;
	size_t i = 0;

	for (; i + LANES <= n; i += LANES) {
		__m512 a = _mm512_loadu_ps(p + i);
		__m512d a0 = _mm512_cvtps_pd(_mm512_castps512_ps256(a));
		__m512d a1 = _mm512_cvtps_pd(_mm256_castpd_ps(
		    _mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));

		s0 = _mm512_add_pd(s0, a0);
		s1 = _mm512_add_pd(s1, a1);
		q0 = _mm512_fmadd_pd(a0, a0, q0);
		q1 = _mm512_fmadd_pd(a1, a1, q1);
		lo = _mm512_min_ps(a, lo);
		hi = _mm512_max_ps(a, hi);
		amin = _mm512_min_ps(_mm512_abs_ps(a), amin);
	}
	_mm512_storeu_pd(r->s, s0);
	_mm512_storeu_pd(r->s + 8, s1);
	_mm512_storeu_pd(r->q, q0);
	_mm512_storeu_pd(r->q + 8, q1);
	r->lo = _mm512_reduce_min_ps(lo);
	r->hi = _mm512_reduce_max_ps(hi);
	r->amin = _mm512_reduce_min_ps(amin);
	return i;
}

/*
 * The best code this CPU runs, or less when ONNXQ_SIMD says so (plain,
 * sse2, avx2): the tests run every version and compare the streams.
 */
static int
simd_level(void)
{
	const char *want = getenv("ONNXQ_SIMD");
	int best = SIMD_SSE2;

	if (__builtin_cpu_supports("avx512f"))
		best = SIMD_AVX512;
	else if (__builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma"))
		best = SIMD_AVX2;
	if (!want)
		return best;
	if (strcmp(want, "plain") == 0)
		return SIMD_PLAIN;
	if (strcmp(want, "sse2") == 0)
		return SIMD_SSE2;
	if (strcmp(want, "avx2") == 0 && best >= SIMD_AVX2)
		return SIMD_AVX2;
	return best;
}

static size_t
lanes_run(const float *p, size_t n, struct lanes *r, int simd)
{
	switch (simd) {
	case SIMD_AVX512:
		return lanes_avx512(p, n, r);
	case SIMD_AVX2:
		return lanes_avx2(p, n, r);
	case SIMD_SSE2:
		return lanes_sse2(p, n, r);
	default:
		return lanes_plain(p, n, r);
	}
}
#else
static int
simd_level(void)
{
	return 0;
}

static size_t
lanes_run(const float *p, size_t n, struct lanes *r, int simd)
{
	(void)simd;
	return lanes_plain(p, n, r);
}
#endif

/* A finite chunk's least and greatest value, and least magnitude. */
struct crange {
	float lo, hi, amin;
};

/* One chunk's moments, when all its values are finite: 0 and *cr; else -1. */
static int
chunk_moments(const float *p, size_t n, struct worker *w, int simd,
    struct crange *cr)
{
	struct lanes r = { { 0 }, { 0 }, 0, 0, 0 };
	double ss, qq;
	size_t i = lanes_run(p, n, &r, simd);

	for (int l = 0; i < n; i++, l++) {
		double d = p[i];

		r.s[l] += d;
		r.q[l] += d * d;
		r.lo = p[i] < r.lo ? p[i] : r.lo;
		r.hi = p[i] > r.hi ? p[i] : r.hi;
		r.amin = fabsf(p[i]) < r.amin ? fabsf(p[i]) : r.amin;
	}
	ss = r.s[0];
	qq = r.q[0];
	for (int l = 1; l < LANES; l++) {
		ss += r.s[l];
		qq += r.q[l];
	}
	/* a NaN or an infinity shows in the sums (finite squares cannot overflow) */
	if (!isfinite(ss) || !isfinite(qq))
		return -1;
	w->n += n;
	w->min = r.lo < w->min ? r.lo : w->min;
	w->max = r.hi > w->max ? r.hi : w->max;
	xsum_add(&w->sum, ss);
	xsum_add(&w->sumsq, qq);
	cr->lo = r.lo;
	cr->hi = r.hi;
	cr->amin = r.amin;
	return 0;
}

/* The same for a chunk with NaN or infinite values, which are counted apart. */
static void
chunk_checked(const float *p, size_t n, struct worker *w)
{
	double s = 0, q = 0;

	for (size_t i = 0; i < n; i++) {
		float v = p[i];

		if (!isfinite(v)) {
			if (isnan(v))
				w->nan++;
			else
				w->inf++;
			continue;
		}
		w->n++;
		s += v;
		q += (double)v * v;
		w->min = v < w->min ? v : w->min;
		w->max = v > w->max ? v : w->max;
	}
	xsum_add(&w->sum, s);
	xsum_add(&w->sumsq, q);
}

/*
 * Count a chunk's values in w's four sets; with marks, also mark each
 * value's block. Inlined with a constant mbits and marks, so that the
 * shift is a constant and the loop without marks has no stores but the
 * counts (it runs at about the speed of a bare increment per value).
 */
static inline __attribute__((always_inline)) void
hist_count(const float *p, size_t n, int mbits, struct worker *w, int marks)
{
	const uint32_t *u = (const uint32_t *)(const void *)p;
	int shift = 23 - mbits;
	size_t set = (size_t)NBLOCKS << mbits, i = 0;
	uint32_t *c0 = w->cnt, *c1 = c0 + set, *c2 = c1 + set, *c3 = c2 + set;
	unsigned char *mark = w->mark;

	for (; i + SETS <= n; i += SETS) {
		uint32_t a = u[i], b = u[i + 1], c = u[i + 2], d = u[i + 3];

		c0[a >> shift]++;
		c1[b >> shift]++;
		c2[c >> shift]++;
		c3[d >> shift]++;
		if (marks) {
			mark[a >> 23] = 1;
			mark[b >> 23] = 1;
			mark[c >> 23] = 1;
			mark[d >> 23] = 1;
		}
	}
	for (; i < n; i++) {
		c0[u[i] >> shift]++;
		if (marks)
			mark[u[i] >> 23] = 1;
	}
}

static uint32_t
exponent_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	return u >> 23 & 0xff;
}

/*
 * A finite chunk's histogram: counted without marks, then the blocks its
 * values can fall in marked at once, from its range and least magnitude
 * (a value's exponent lies between theirs; zeros and subnormals have
 * exponent 0, on either sign). A few blocks may be marked for nothing.
 */
static void
chunk_hist(const float *p, size_t n, int mbits, struct worker *w,
    const struct crange *cr)
{
	uint32_t e0 = exponent_of(cr->amin), e1;

	if (mbits == HIST_MBITS_DEFAULT)
		hist_count(p, n, HIST_MBITS_DEFAULT, w, 0);
	else
		hist_count(p, n, mbits, w, 0);
	if (e0 == 0) {
		w->mark[0] = w->mark[256] = 1;
		e0 = 1;
	}
	if (cr->hi > 0 && (e1 = exponent_of(cr->hi)) >= e0)
		memset(w->mark + e0, 1, e1 - e0 + 1);
	if (cr->lo < 0 && (e1 = exponent_of(cr->lo)) >= e0)
		memset(w->mark + 256 + e0, 1, e1 - e0 + 1);
}

/* A chunk with NaN or infinite values: each value marks its block. */
static void
chunk_hist_marked(const float *p, size_t n, int mbits, struct worker *w)
{
	hist_count(p, n, mbits, w, 1);
}

/*
 * Collect the counts of workers w[0..nw-1] in the blocks b with
 * b % nw == part into w[part]'s bin list, and clear them: per block any
 * of them touched, the sets of all workers are summed (a loop the
 * compiler vectorises). Each block belongs to one part, so the threads
 * can do this at once.
 */
static void
collect_bins(struct worker *w, int nw, int part, int mbits)
{
	size_t nb = (size_t)1 << mbits, set = (size_t)NBLOCKS << mbits;
	uint64_t sum[(size_t)1 << FLAT_MBITS_MAX];
	struct worker *me = &w[part];

	me->nbins = 0;
	me->zero = 0;
	for (int b = part; b < NBLOCKS; b += nw) {
		int ex = b & 0xff, any = 0;

		for (int t = 0; t < nw; t++) {
			any |= w[t].mark[b];
			w[t].mark[b] = 0;
		}
		if (!any)
			continue;
		memset(sum, 0, nb * sizeof *sum);
		for (int t = 0; t < nw; t++)
			for (int k = 0; k < SETS; k++) {
				uint32_t *blk = w[t].cnt + k * set + ((size_t)b << mbits);

				for (size_t j = 0; j < nb; j++)
					sum[j] += blk[j];
				memset(blk, 0, nb * sizeof *blk);
			}
		if (ex == 0xff)
			continue;		/* NaN, Inf are not binned */
		for (size_t j = 0; j < nb; j++) {
			uint32_t edge;

			if (!sum[j])
				continue;
			if (ex == 0) {
				me->zero += sum[j];	/* zeros, subnormals */
				continue;
			}
			edge = (uint32_t)b << 23 | (uint32_t)j << (23 - mbits);
			memcpy(&me->edge[me->nbins], &edge, sizeof edge);
			me->count[me->nbins++] = sum[j];
		}
	}
}

/* tstats_add_batch for a float tensor, on all threads. */
static int
add_batch_fast(struct calib *c, struct tstats *ts, const float *x, size_t n,
    struct err *e)
{
	size_t nchunks = (n + CHUNK - 1) / CHUNK;
	int nt = n >= PAR_MIN ? c->nw : 1;
	uint64_t tn = 0, tnan = 0, tinf = 0;
	float mn = INFINITY, mx = -INFINITY;
	struct xsum sum, sumsq;

	for (int t = 0; t < nt; t++) {
		struct worker *w = &c->w[t];

		w->n = w->nan = w->inf = 0;
		w->min = INFINITY;
		w->max = -INFINITY;
		xsum_init(&w->sum);
		xsum_init(&w->sumsq);
	}
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		struct worker *w = &c->w[t];

#pragma omp for schedule(static)
		for (size_t k = 0; k < nchunks; k++) {
			const float *p = x + k * CHUNK;
			size_t cn = n - k * CHUNK < CHUNK ? n - k * CHUNK : CHUNK;

			struct crange cr;

			if (chunk_moments(p, cn, w, c->simd, &cr) < 0) {
				chunk_checked(p, cn, w);
				if (ts->hist)
					chunk_hist_marked(p, cn, c->mbits, w);
			} else if (ts->hist)
				chunk_hist(p, cn, c->mbits, w, &cr);
		}
		/* the loop's barrier makes every worker's counts visible */
		if (ts->hist)
			collect_bins(c->w, omp_get_num_threads(), t, c->mbits);
	}
	xsum_init(&sum);
	xsum_init(&sumsq);
	for (int t = 0; t < nt; t++) {
		struct worker *w = &c->w[t];

		tn += w->n;
		tnan += w->nan;
		tinf += w->inf;
		mn = w->min < mn ? w->min : mn;
		mx = w->max > mx ? w->max : mx;
		xsum_add_xsum(&sum, &w->sum);
		xsum_add_xsum(&sumsq, &w->sumsq);
		for (size_t i = 0; ts->hist && i < w->nbins; i++)
			if (hist_add_bin(ts->hist, w->edge[i], w->count[i], e) < 0)
				return -1;
		if (ts->hist && w->zero && hist_add_bin(ts->hist, 0, w->zero,
		    e) < 0)
			return -1;
	}
	ts->nan += tnan;
	ts->inf += tinf;
	if (tn == 0)
		return 0;
	/* -0 and +0 compare equal: keep +0 so the result is order-free */
	mn = mn == 0 ? 0.0f : mn;
	mx = mx == 0 ? 0.0f : mx;
	ts->n += tn;
	ts->batches++;
	ts->min = mn < ts->min ? mn : ts->min;
	ts->max = mx > ts->max ? mx : ts->max;
	xsum_add(&ts->bmin, mn);
	xsum_add(&ts->bmax, mx);
	xsum_add_xsum(&ts->sum, &sum);
	xsum_add_xsum(&ts->sumsq, &sumsq);
	return 0;
}

/* The interpreter shows us each tensor once it is made. */
static int
observe(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	struct calib *c = ctx;
	struct ctensor *ct;
	const float *x;
	int i;

	if (!dtype_is_float(t->dtype) || !strmap_get(c->index, name, &i))
		return 0;
	ct = &c->t[i];
	if (!ct->seen) {
		ct->seen = 1;
		ct->ts.dtype = t->dtype;
		c->seen_dirty = 1;
	} else if (ct->ts.dtype != t->dtype)
		return err_set(e, "tensor %s: type %s, earlier %s", name,
		    dtype_name(t->dtype), dtype_name(ct->ts.dtype));
	if (t->dtype == DT_FLOAT)
		x = t->data;
	else {
		size_t n = (size_t)t->nelem;

		if (n > c->scratch_cap) {
			float *s = realloc(c->scratch, n * sizeof *s);

			if (!s)
				return err_nomem(e);
			c->scratch = s;
			c->scratch_cap = n;
		}
		tensor_to_float(t, c->scratch);
		x = c->scratch;
	}
	tstats_add_shape(&ct->ts, t->rank, t->dims);
	if (c->w ? add_batch_fast(c, &ct->ts, x, (size_t)t->nelem, e) < 0 :
	    tstats_add_batch(&ct->ts, x, (size_t)t->nelem, e) < 0)
		return err_prefix(e, "tensor %s", name);
	return 0;
}

int
calib_run(struct calib *c, const struct tensor *inputs, struct err *e)
{
	int r = interp_run(c->ip, inputs, c->outs, e);

	for (int i = 0; r == 0 && i < interp_noutputs(c->ip); i++)
		tensor_release(&c->outs[i]);
	if (r == 0)
		c->batches++;
	return r;
}

/* The list of tensors seen, brought up to date after new ones appeared. */
static void
update_seen(const struct calib *cc)
{
	struct calib *c = (struct calib *)cc;	/* a cache, not a change */

	if (!c->seen_dirty)
		return;
	c->nseen = 0;
	for (int i = 0; i < c->nt; i++)
		if (c->t[i].seen)
			c->seen[c->nseen++] = i;
	c->seen_dirty = 0;
}

int
calib_ntensors(const struct calib *c)
{
	update_seen(c);
	return c->nseen;
}

const char *
calib_tensor_name(const struct calib *c, int i)
{
	update_seen(c);
	return i >= 0 && i < c->nseen ? c->t[c->seen[i]].name : NULL;
}

const struct tstats *
calib_tensor_stats(const struct calib *c, int i)
{
	update_seen(c);
	return i >= 0 && i < c->nseen ? &c->t[c->seen[i]].ts : NULL;
}

int
calib_write(const struct calib *c, struct stream_writer *w, int annotate,
    struct err *e)
{
	/* without it (out of memory) every edge is formatted anew */
	struct tstats_edges *ed = tstats_edges_new();

	for (int i = 0; i < c->nt; i++)
		if (c->t[i].seen && tstats_write_ed(&c->t[i].ts, c->t[i].name,
		    w, annotate, ed, e) < 0) {
			tstats_edges_free(ed);
			return -1;
		}
	tstats_edges_free(ed);
	return stream_writer_error(w, e);
}

/* Samples. */

struct calib_data {
	struct dataset *ds;	/* the samples, images included */
	int has_images;
	struct image_prep prep;
};

struct calib_data *
calib_data_open(const char *const *dirs, int ndirs, struct err *e)
{
	struct calib_data *d;

	if (!(d = calloc(1, sizeof *d))) {
		err_nomem(e);
		return NULL;
	}
	image_prep_init(&d->prep);
	if (!(d->ds = dataset_open_images(dirs, ndirs, e))) {
		free(d);
		return NULL;
	}
	d->has_images = dataset_has_images(d->ds);
	return d;
}

void
calib_data_set_prep(struct calib_data *d, const struct image_prep *p)
{
	d->prep = *p;
}

void
calib_data_free(struct calib_data *d)
{
	if (!d)
		return;
	dataset_free(d->ds);
	free(d);
}

int
calib_data_count(const struct calib_data *d)
{
	return dataset_count(d->ds);
}

const char *
calib_data_name(const struct calib_data *d, int i)
{
	return dataset_sample_name(d->ds, i);
}

int
calib_data_has_images(const struct calib_data *d)
{
	return d->has_images;
}

/*
 * The file that holds input k of sample i, for messages: the .pb or
 * .npy file when there is one, else the sample (an .npz, an image).
 * malloc'd; NULL when out of memory.
 */
static char *
input_file(const struct calib_data *d, int i, int k, const char *input)
{
	const char *name = calib_data_name(d, i);
	char buf[64], *fname, *p;
	struct stat st;
	size_t len = strlen(name);

	if (dataset_sample_is_image(d->ds, i) ||
	    (len > 4 && strcmp(name + len - 4, ".npz") == 0))
		return strdup(name);
	snprintf(buf, sizeof buf, "input_%d.pb", k);
	if ((p = dataset_path_join(name, buf)) && stat(p, &st) == 0)
		return p;
	free(p);
	if (!(fname = dataset_file_name(input)))
		return NULL;
	if ((p = malloc(len + strlen(fname) + 6)))
		sprintf(p, "%s/%s.npy", name, fname);
	free(fname);
	return p;
}

static void
dims_str(int rank, const int64_t *dims, char *buf, size_t size)
{
	size_t n = 0;

	if (rank == 0) {
		snprintf(buf, size, "scalar");
		return;
	}
	buf[0] = '\0';
	for (int k = 0; k < rank && n < size; k++)
		n += (size_t)snprintf(buf + n, size - n, dims[k] < 0 ? "%s?" :
		    "%s%lld", k ? "x" : "", (long long)dims[k]);
}

/*
 * Does t fit input k? batched: only the first dimension may differ from a
 * static one (it is checked on the whole batch).
 */
static int
check_fit(const struct calib_data *d, const struct interp *ip, int i, int k,
    const struct tensor *t, int batched, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK];
	char have[256], want[256], *file;
	int rank, dt, bad;

	dt = interp_input_type(ip, k, &rank, dims);
	bad = dt != DT_UNDEFINED && t->dtype != dt;
	if (!bad && rank >= 0) {
		bad = rank != t->rank;
		for (int j = batched ? 1 : 0; !bad && j < rank; j++)
			bad = dims[j] >= 0 && dims[j] != t->dims[j];
	}
	if (!bad)
		return 0;
	if (!(file = input_file(d, i, k, interp_input_name(ip, k))))
		return err_nomem(e);
	if (dt != DT_UNDEFINED && t->dtype != dt)
		err_set(e, "%s: input %s: type %s, the model wants %s", file,
		    interp_input_name(ip, k), dtype_name(t->dtype) ?
		    dtype_name(t->dtype) : "?", dtype_name(dt));
	else {
		dims_str(t->rank, t->dims, have, sizeof have);
		dims_str(rank, dims, want, sizeof want);
		err_set(e, "%s: input %s: shape %s, the model wants %s", file,
		    interp_input_name(ip, k), have, want);
	}
	free(file);
	return -1;
}

/* One sample's inputs. */
static int
load_one(struct calib_data *d, const struct interp *ip, int i,
    struct tensor *in, struct err *e)
{
	const char *path = dataset_sample_name(d->ds, i);
	int n = interp_ninputs(ip);

	if (!dataset_sample_is_image(d->ds, i)) {
		const char **names = calloc((size_t)n + 1, sizeof *names);
		int *dtypes = calloc((size_t)n + 1, sizeof *dtypes);
		struct dataset_spec spec = { 0 };
		int64_t dims[TENSOR_MAX_RANK];
		int rank, r;

		if (!names || !dtypes) {
			free(names);
			free(dtypes);
			return err_nomem(e);
		}
		for (int k = 0; k < n; k++) {
			names[k] = interp_input_name(ip, k);
			dtypes[k] = interp_input_type(ip, k, &rank, dims);
		}
		spec.ninputs = n;
		spec.input_names = names;
		spec.input_dtypes = dtypes;
		r = dataset_load(d->ds, i, &spec, in, NULL, e);
		free(names);
		free(dtypes);
		return r;
	} else {
		struct image img;
		int r;

		if (n != 1)
			return err_set(e, "%s: images feed models with one input, "
			    "this one has %d", path, n);
		if (image_load(path, &img, e) < 0)
			return -1;
		r = image_to_tensor(&img, &d->prep, &in[0], e);
		image_release(&img);
		if (r < 0)
			return err_prefix(e, "%s", path);
		return 0;
	}
}

static void
release_n(struct tensor *t, int n)
{
	for (int k = 0; k < n; k++)
		tensor_release(&t[k]);
}

/* dst (empty) = the concatenation of parts[0..n-1] along axis 0. */
static int
concat0(struct tensor *dst, struct tensor *const *parts, int n, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK], total = 0;
	const struct tensor *a = parts[0];
	size_t es = dtype_size(a->dtype);
	char *p;

	for (int j = 0; j < n; j++)
		total += parts[j]->dims[0];
	memcpy(dims, a->dims, sizeof dims);
	dims[0] = total;
	if (tensor_alloc(dst, a->dtype, a->rank, dims, e) < 0)
		return -1;
	p = dst->data;
	for (int j = 0; j < n; j++) {
		size_t b = (size_t)parts[j]->nelem * es;

		memcpy(p, parts[j]->data, b);
		p += b;
	}
	return 0;
}

int
calib_data_load(struct calib_data *d, const struct interp *ip, int first,
    int n, struct tensor *inputs, struct err *e)
{
	int nin = interp_ninputs(ip), r = -1;
	struct tensor *all = NULL, **parts = NULL;

	for (int k = 0; k < nin; k++)
		memset(&inputs[k], 0, sizeof inputs[k]);
	if (first < 0 || n < 1 || first > dataset_count(d->ds) - n)
		return err_set(e, "no samples %d to %d", first, first + n - 1);
	if (n == 1) {
		if (load_one(d, ip, first, inputs, e) < 0)
			return -1;
		for (int k = 0; k < nin; k++)
			if (check_fit(d, ip, first, k, &inputs[k], 0, e) < 0) {
				release_n(inputs, nin);
				return -1;
			}
		return 0;
	}
	for (int k = 0; k < nin; k++) {
		int64_t dims[TENSOR_MAX_RANK];
		char want[256];
		int rank;

		interp_input_type(ip, k, &rank, dims);
		if (rank > 0 && dims[0] >= 0) {
			dims_str(rank, dims, want, sizeof want);
			return err_set(e, "input %s: the model's first dimension "
			    "is fixed (%s), so samples cannot be batched: leave "
			    "out --batch", interp_input_name(ip, k), want);
		}
	}
	all = calloc((size_t)n * nin + 1, sizeof *all);
	parts = calloc((size_t)n + 1, sizeof *parts);
	if (!all || !parts) {
		err_nomem(e);
		goto out;
	}
	for (int j = 0; j < n; j++) {
		struct tensor *in = all + (size_t)j * nin;

		if (load_one(d, ip, first + j, in, e) < 0)
			goto out;
		for (int k = 0; k < nin; k++) {
			const struct tensor *a = &all[k];
			int same = in[k].dtype == a->dtype &&
			    in[k].rank == a->rank && in[k].rank > 0;

			if (check_fit(d, ip, first + j, k, &in[k], 1, e) < 0)
				goto out;
			for (int q = 1; same && q < a->rank; q++)
				same = in[k].dims[q] == a->dims[q];
			if (!same) {
				char have[256], want[256], *file;

				dims_str(in[k].rank, in[k].dims, have, sizeof have);
				dims_str(a->rank, a->dims, want, sizeof want);
				if (!(file = input_file(d, first + j, k,
				    interp_input_name(ip, k)))) {
					err_nomem(e);
					goto out;
				}
				err_set(e, "%s: input %s: shape %s cannot join "
				    "the batch of %s (%s)", file,
				    interp_input_name(ip, k), have,
				    calib_data_name(d, first), want);
				free(file);
				goto out;
			}
		}
	}
	for (int k = 0; k < nin; k++) {
		for (int j = 0; j < n; j++)
			parts[j] = &all[(size_t)j * nin + k];
		if (concat0(&inputs[k], parts, n, e) < 0)
			goto fail_in;
	}
	r = 0;
	goto out;
fail_in:
	release_n(inputs, nin);
out:
	if (all)
		release_n(all, n * nin);
	free(all);
	free(parts);
	return r;
}

int
calib_image_prep(const struct interp *ip, struct image_prep *p, int set,
    struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK];
	int rank, dt, hd, wd, cd;
	const char *name;
	char want[256];

	if (interp_ninputs(ip) != 1)
		return err_set(e, "images feed models with one input, this one "
		    "has %d", interp_ninputs(ip));
	name = interp_input_name(ip, 0);
	dt = interp_input_type(ip, 0, &rank, dims);
	if (dt != DT_UNDEFINED && dt != DT_FLOAT && dt != DT_UINT8)
		return err_set(e, "input %s: type %s: images become float or "
		    "uint8 tensors", name, dtype_name(dt) ? dtype_name(dt) : "?");
	p->dtype = dt == DT_UINT8 ? DT_UINT8 : DT_FLOAT;
	if (rank < 0) {
		if (!(set & CALIB_PREP_SIZE))
			return err_set(e, "input %s: shape unknown: give --size "
			    "WxH", name);
		return 0;
	}
	dims_str(rank, dims, want, sizeof want);
	if (rank != 4)
		return err_set(e, "input %s: shape %s is not an image batch "
		    "(NCHW or NHWC)", name, want);
	if (!(set & CALIB_PREP_LAYOUT)) {
		if (dims[1] == 1 || dims[1] == 3)
			p->layout = IMAGE_NCHW;
		else if (dims[3] == 1 || dims[3] == 3)
			p->layout = IMAGE_NHWC;
		else
			p->layout = IMAGE_NCHW;
	}
	if (p->layout == IMAGE_NCHW)
		cd = 1, hd = 2, wd = 3;
	else
		hd = 1, wd = 2, cd = 3;
	if (dims[cd] >= 0 && dims[cd] != 1 && dims[cd] != 3)
		return err_set(e, "input %s: shape %s has %lld channels "
		    "(images give 1 or 3)", name, want, (long long)dims[cd]);
	p->channels = dims[cd] == 1 ? 1 : 3;
	if (!(set & CALIB_PREP_SIZE)) {
		if (dims[hd] < 0 || dims[wd] < 0)
			return err_set(e, "input %s: shape %s: the image size is "
			    "not fixed: give --size WxH", name, want);
		if (dims[hd] > 65536 || dims[wd] > 65536)
			return err_set(e, "input %s: shape %s: image too large",
			    name, want);
		p->height = (int)dims[hd];
		p->width = (int)dims[wd];
	}
	return 0;
}
