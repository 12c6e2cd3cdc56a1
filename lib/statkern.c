/*
 * statkern: the fast statistics of float tensors. See statkern.h.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"
#include "statkern.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
#define STATKERN_SIMD __attribute__((target_clones("arch=x86-64-v4", \
    "arch=x86-64-v3", "default")))
#else
#define STATKERN_SIMD
#endif
#ifdef __clang__
#define SIMD_OR(v)
#else
#define SIMD_OR(v) _Pragma(SIMD_STR(omp simd reduction(|:v)))
#define SIMD_STR(x) #x
#endif

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
 * marked, and only those are moved into the tensor's histogram. The
 * AVX2 and AVX-512 code counts in the loop of the lanes, so that a chunk
 * is read once: the counters' scalar work then runs beside the vector
 * work of the moments, which costs next to nothing more.
 */
#define CHUNK STATKERN_CHUNK
#define LANES 16
/*
 * Smaller tensors stay on one thread: splitting them gained nothing
 * measurable on det or rec (the calling thread would do most chunks
 * before the other thread woke).
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
	int *block;		/* blocks collected for the histogram ... */
	uint64_t *count;	/* ... and their counts, 1 << mbits each */
	size_t nblocks;
	uint64_t zero;		/* zeros and subnormals collected */
	uint64_t n, nan, inf;
	int used;		/* a slot's chunk came to this thread */
	float min, max;
	struct xsum sum, sumsq;
};

struct statkern {
	struct worker *w;	/* slot s's thread t: w[s * nw + t] */
	int nw;
	int nslots;		/* slot 0 is statkern_add_batch()'s */
	int mbits;
	int simd;		/* the vector code this CPU runs */
};

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
	float amin;		/* the least magnitude, for the marks ... */
	float anorm;		/* ... and the least normal one (or Inf) */
};

/*
 * Count the 16 values of one step of the lanes at u in the four sets of
 * counts from c (each set `set` counts apart): the counters' scalar work
 * then runs beside the moments' vector work of the same step, so a chunk
 * is read once for both. Inlined with a constant shift.
 */
static inline __attribute__((always_inline)) void
count16(const uint32_t *u, uint32_t *c, int shift, size_t set)
{
	for (int k = 0; k < LANES; k += SETS) {
		c[u[k] >> shift]++;
		c[set + (u[k + 1] >> shift)]++;
		c[2 * set + (u[k + 2] >> shift)]++;
		c[3 * set + (u[k + 3] >> shift)]++;
	}
}

__attribute__((unused)) static size_t
lanes_plain(const float *p, size_t n, struct lanes *r)
{
	float lo = INFINITY, hi = -INFINITY, amin = INFINITY;
	float anorm = INFINITY;
	size_t i = 0;

	for (; i + LANES <= n; i += LANES)
		for (int l = 0; l < LANES; l++) {
			double d = p[i + l];
			float a = fabsf(p[i + l]), an = a >= FLT_MIN ? a :
			    INFINITY;

			r->s[l] += d;
			r->q[l] += d * d;
			lo = p[i + l] < lo ? p[i + l] : lo;
			hi = p[i + l] > hi ? p[i + l] : hi;
			amin = a < amin ? a : amin;
			anorm = an < anorm ? an : anorm;
		}
	r->lo = lo;
	r->hi = hi;
	r->amin = amin;
	r->anorm = anorm;
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
	__m128 amin = lo, anorm = lo, inf = lo;
	__m128 absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
	__m128 tiny = _mm_set1_ps(FLT_MIN);
	float f[4];
	size_t i = 0;

	for (int k = 0; k < LANES / 2; k++)
		s[k] = q[k] = _mm_setzero_pd();
	for (; i + LANES <= n; i += LANES)
		for (int k = 0; k < LANES / 4; k++) {
			__m128 a = _mm_loadu_ps(p + i + 4 * k);
			__m128d a0 = _mm_cvtps_pd(a);
			__m128d a1 = _mm_cvtps_pd(_mm_movehl_ps(a, a));
			__m128 m = _mm_and_ps(a, absmask);
			__m128 big = _mm_cmpge_ps(m, tiny);

			s[2 * k] = _mm_add_pd(s[2 * k], a0);
			s[2 * k + 1] = _mm_add_pd(s[2 * k + 1], a1);
			q[2 * k] = _mm_add_pd(q[2 * k], _mm_mul_pd(a0, a0));
			q[2 * k + 1] = _mm_add_pd(q[2 * k + 1],
			    _mm_mul_pd(a1, a1));
			lo = _mm_min_ps(a, lo);
			hi = _mm_max_ps(a, hi);
			amin = _mm_min_ps(m, amin);
			anorm = _mm_min_ps(_mm_or_ps(_mm_and_ps(big, m),
			    _mm_andnot_ps(big, inf)), anorm);
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
	_mm_storeu_ps(f, anorm);
	r->anorm = fminf(fminf(f[0], f[1]), fminf(f[2], f[3]));
	return i;
}

/* cnt: the sets to count the values in too (NULL: none), by mbits. */
static inline __attribute__((always_inline, target("avx2,fma"))) size_t
lanes_avx2_body(const float *p, size_t n, struct lanes *r, uint32_t *cnt,
    int mbits)
{
	const uint32_t *u = (const uint32_t *)(const void *)p;
	size_t set = (size_t)NBLOCKS << mbits;
	__m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
	__m256d q0 = s0, q1 = s0, q2 = s0, q3 = s0;
	__m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY);
	__m256 amin = lo, anorm = lo, inf = lo;
	__m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	__m256 tiny = _mm256_set1_ps(FLT_MIN);
	float f[8];
	size_t i = 0;

	for (; i + LANES <= n; i += LANES) {
		__m256 a = _mm256_loadu_ps(p + i);
		__m256 b = _mm256_loadu_ps(p + i + 8);
		__m256d a0 = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
		__m256d a1 = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
		__m256d b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(b));
		__m256d b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1));
		__m256 ma = _mm256_and_ps(a, absmask);
		__m256 mb = _mm256_and_ps(b, absmask);
		__m256 na = _mm256_blendv_ps(inf, ma,
		    _mm256_cmp_ps(ma, tiny, _CMP_GE_OQ));
		__m256 nb = _mm256_blendv_ps(inf, mb,
		    _mm256_cmp_ps(mb, tiny, _CMP_GE_OQ));

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
		amin = _mm256_min_ps(_mm256_min_ps(ma, mb), amin);
		anorm = _mm256_min_ps(_mm256_min_ps(na, nb), anorm);
		if (cnt)
			count16(u + i, cnt, 23 - mbits, set);
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
	_mm256_storeu_ps(f, anorm);
	r->anorm = f[0];
	for (int l = 1; l < 8; l++)
		r->anorm = fminf(r->anorm, f[l]);
	return i;
}

static inline __attribute__((always_inline, target("avx512f"))) size_t
lanes_avx512_body(const float *p, size_t n, struct lanes *r, uint32_t *cnt,
    int mbits)
{
	const uint32_t *u = (const uint32_t *)(const void *)p;
	size_t set = (size_t)NBLOCKS << mbits;
	__m512d s0 = _mm512_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
	__m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
	__m512 amin = lo, anorm = lo, tiny = _mm512_set1_ps(FLT_MIN);
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
		__m512 m = _mm512_abs_ps(a);

		amin = _mm512_min_ps(m, amin);
		anorm = _mm512_mask_min_ps(anorm, _mm512_cmp_ps_mask(m, tiny,
		    _CMP_GE_OQ), m, anorm);
		if (cnt)
			count16(u + i, cnt, 23 - mbits, set);
	}
	_mm512_storeu_pd(r->s, s0);
	_mm512_storeu_pd(r->s + 8, s1);
	_mm512_storeu_pd(r->q, q0);
	_mm512_storeu_pd(r->q + 8, q1);
	r->lo = _mm512_reduce_min_ps(lo);
	r->hi = _mm512_reduce_max_ps(hi);
	r->amin = _mm512_reduce_min_ps(amin);
	r->anorm = _mm512_reduce_min_ps(anorm);
	return i;
}

/*
 * The bodies for no counts, the default mbits and any other, each with
 * its shift a constant.
 */
__attribute__((target("avx2,fma"))) static size_t
lanes_avx2(const float *p, size_t n, struct lanes *r, uint32_t *cnt,
    int mbits)
{
	if (!cnt)
		return lanes_avx2_body(p, n, r, NULL, 0);
	if (mbits == HIST_MBITS_DEFAULT)
		return lanes_avx2_body(p, n, r, cnt, HIST_MBITS_DEFAULT);
	return lanes_avx2_body(p, n, r, cnt, mbits);
}

__attribute__((target("avx512f"))) static size_t
lanes_avx512(const float *p, size_t n, struct lanes *r, uint32_t *cnt,
    int mbits)
{
	if (!cnt)
		return lanes_avx512_body(p, n, r, NULL, 0);
	if (mbits == HIST_MBITS_DEFAULT)
		return lanes_avx512_body(p, n, r, cnt, HIST_MBITS_DEFAULT);
	return lanes_avx512_body(p, n, r, cnt, mbits);
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

/*
 * The lanes of p[0..n-1] up to a multiple of LANES: how far they went.
 * With cnt, the vector code that can also counts those values in the
 * sets from cnt (histograms of mbits): *counted says whether it did.
 */
static size_t
lanes_run(const float *p, size_t n, struct lanes *r, int simd,
    uint32_t *cnt, int mbits, int *counted)
{
	*counted = cnt && simd >= SIMD_AVX2;
	switch (simd) {
	case SIMD_AVX512:
		return lanes_avx512(p, n, r, cnt, mbits);
	case SIMD_AVX2:
		return lanes_avx2(p, n, r, cnt, mbits);
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
lanes_run(const float *p, size_t n, struct lanes *r, int simd,
    uint32_t *cnt, int mbits, int *counted)
{
	(void)simd;
	(void)cnt;
	(void)mbits;
	*counted = 0;
	return lanes_plain(p, n, r);
}
#endif

/*
 * Count a chunk's values in w's four sets (no marks). Inlined with a
 * constant mbits, so that the shift is a constant and the loop has no
 * stores but the counts (it runs at about the speed of a bare increment
 * per value).
 */
static inline __attribute__((always_inline)) void
hist_count(const float *p, size_t n, int mbits, struct worker *w)
{
	const uint32_t *u = (const uint32_t *)(const void *)p;
	int shift = 23 - mbits;
	size_t set = (size_t)NBLOCKS << mbits, i = 0;
	uint32_t *c0 = w->cnt, *c1 = c0 + set, *c2 = c1 + set, *c3 = c2 + set;

	for (; i + SETS <= n; i += SETS) {
		uint32_t a = u[i], b = u[i + 1], c = u[i + 2], d = u[i + 3];

		c0[a >> shift]++;
		c1[b >> shift]++;
		c2[c >> shift]++;
		c3[d >> shift]++;
	}
	for (; i < n; i++)
		c0[u[i] >> shift]++;
}

/* A finite chunk's least and greatest value, least magnitude, and least
 * normal magnitude (Inf when none). */
struct crange {
	float lo, hi, amin, anorm;
};

/*
 * Count a chunk's values, without marks, with a constant shift for the
 * default mbits.
 */
static void
hist_count_any(const float *p, size_t n, int mbits, struct worker *w)
{
	if (mbits == HIST_MBITS_DEFAULT)
		hist_count(p, n, HIST_MBITS_DEFAULT, w);
	else
		hist_count(p, n, mbits, w);
}

/*
 * One chunk's moments, when all its values are finite: 0 and *cr; else
 * -1. With mbits >= 0 its values are counted in w's sets too, whether
 * finite or not (without marks).
 */
static int
chunk_moments(const float *p, size_t n, struct worker *w, int simd,
    int mbits, struct crange *cr)
{
	struct lanes r = { { 0 }, { 0 }, 0, 0, 0, 0 };
	double ss, qq;
	int counted;
	size_t i = lanes_run(p, n, &r, simd, mbits >= 0 ? w->cnt : NULL,
	    mbits, &counted);

	if (mbits >= 0)
		hist_count_any(p + (counted ? i : 0), counted ? n - i : n,
		    mbits, w);

	for (int l = 0; i < n; i++, l++) {
		double d = p[i];

		r.s[l] += d;
		r.q[l] += d * d;
		r.lo = p[i] < r.lo ? p[i] : r.lo;
		r.hi = p[i] > r.hi ? p[i] : r.hi;
		r.amin = fabsf(p[i]) < r.amin ? fabsf(p[i]) : r.amin;
		if (fabsf(p[i]) >= FLT_MIN && fabsf(p[i]) < r.anorm)
			r.anorm = fabsf(p[i]);
	}
	ss = r.s[0];
	qq = r.q[0];
	for (int l = 1; l < LANES; l++) {
		ss += r.s[l];
		qq += r.q[l];
	}
	/* a NaN or an infinity shows in the sums (finite squares cannot
	 * overflow) */
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
	cr->anorm = r.anorm;
	return 0;
}

/* The same for a chunk with NaN or infinite values (counted apart). */
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

static uint32_t
exponent_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	return u >> 23 & 0xff;
}

/*
 * The marks of a finite chunk's histogram (counted without marks): the
 * blocks its values can fall in marked at once, from its range and least
 * normal magnitude (a normal value's exponent lies between theirs; zeros
 * and subnormals have exponent 0, on either sign, and show in the least
 * magnitude). A few blocks may be marked for nothing; taking the least
 * magnitude of all values instead would mark every exponent from 1 up in
 * a chunk with a zero, the usual case after a Relu or Clip.
 */
static void
chunk_marks(struct worker *w, const struct crange *cr)
{
	uint32_t e0 = exponent_of(cr->anorm), e1;

	if (exponent_of(cr->amin) == 0)
		w->mark[0] = w->mark[256] = 1;
	if (cr->hi > 0 && (e1 = exponent_of(cr->hi)) >= e0)
		memset(w->mark + e0, 1, e1 - e0 + 1);
	if (cr->lo < 0 && (e1 = exponent_of(cr->lo)) >= e0)
		memset(w->mark + 256 + e0, 1, e1 - e0 + 1);
}

/*
 * A chunk with NaN or infinite values (counted without marks): each
 * value marks its block.
 */
static void
chunk_marks_each(const float *p, size_t n, struct worker *w)
{
	const uint32_t *u = (const uint32_t *)(const void *)p;

	for (size_t i = 0; i < n; i++)
		w->mark[u[i] >> 23] = 1;
}

/*
 * Block b's counts in the sets of workers w[0..nw-1], summed into sum
 * and cleared: 1, or 0 when they are all zero (a block marked for
 * nothing, about one in five: then nothing needs clearing). One pass
 * over the sets, in vector code.
 */
STATKERN_SIMD static int
block_take(struct worker *w, int nw, int b, int mbits, uint64_t *sum)
{
	size_t nb = (size_t)1 << mbits, set = (size_t)NBLOCKS << mbits;
	uint32_t any = 0;

	for (int t = 0; t < nw; t++)
		for (int k = 0; k < SETS; k++) {
			const uint32_t *blk = w[t].cnt + k * set +
			    ((size_t)b << mbits);

			if (t == 0 && k == 0) {
				SIMD_OR(any)
				for (size_t j = 0; j < nb; j++) {
					sum[j] = blk[j];
					any |= blk[j];
				}
				continue;
			}
			SIMD_OR(any)
			for (size_t j = 0; j < nb; j++) {
				sum[j] += blk[j];
				any |= blk[j];
			}
		}
	if (!any)
		return 0;
	for (int t = 0; t < nw; t++)
		for (int k = 0; k < SETS; k++)
			memset(w[t].cnt + k * set + ((size_t)b << mbits), 0,
			    nb * sizeof *w[t].cnt);
	return 1;
}

/*
 * Collect the counts of workers w[0..nw-1] in the blocks b with
 * b % nw == part into w[part]'s block list, and clear them: per block any
 * of them touched, the sets of all workers are summed. Each block
 * belongs to one part, so the threads can do this at once.
 */
static void
collect_bins(struct worker *w, int nw, int part, int mbits)
{
	size_t nb = (size_t)1 << mbits;
	struct worker *me = &w[part];

	me->nblocks = 0;
	me->zero = 0;
	for (int b = part; b < NBLOCKS; b += nw) {
		int ex = b & 0xff, any = 0;
		uint64_t *sum = me->count + me->nblocks * nb;

		for (int t = 0; t < nw; t++) {
			any |= w[t].mark[b];
			w[t].mark[b] = 0;
		}
		if (!any || !block_take(w, nw, b, mbits, sum))
			continue;		/* marked for nothing */
		if (ex == 0xff)
			continue;		/* NaN, Inf are not binned */
		if (ex == 0) {
			for (size_t j = 0; j < nb; j++)
				me->zero += sum[j];	/* zeros, subnormals */
			continue;
		}
		me->block[me->nblocks++] = b;
	}
}

/* One chunk's values p[0..n-1] into worker w; histogram of mbits or none. */
static void
chunk_into(const float *p, size_t n, struct worker *w, int simd, int mbits)
{
	struct crange cr;

	if (chunk_moments(p, n, w, simd, mbits, &cr) < 0) {
		chunk_checked(p, n, w);
		if (mbits >= 0)
			chunk_marks_each(p, n, w);
	} else if (mbits >= 0)
		chunk_marks(w, &cr);
}

/* Empty the sums of workers w[0..nt-1] for a new batch. */
static void
workers_reset(struct worker *w, int nt)
{
	for (int t = 0; t < nt; t++) {
		w[t].n = w[t].nan = w[t].inf = 0;
		w[t].used = 0;
		w[t].min = INFINITY;
		w[t].max = -INFINITY;
		xsum_init(&w[t].sum);
		xsum_init(&w[t].sumsq);
	}
}

/* One statkern_add_batch() call, or a slot's commit, as its par_for jobs
 * see it. */
struct batch_job {
	struct statkern *k;
	struct worker *w;	/* the slot's workers */
	struct tstats *ts;
	const float *x;
	size_t n;
	int nt;
};

/* Chunk ch of the batch, into worker t's sums and counts. */
static void
batch_chunk(void *ctx, int64_t ch, int t)
{
	const struct batch_job *j = ctx;
	size_t cn = j->n - (size_t)ch * CHUNK < CHUNK ?
	    j->n - (size_t)ch * CHUNK : CHUNK;

	chunk_into(j->x + (size_t)ch * CHUNK, cn, &j->w[t], j->k->simd,
	    j->ts->hist ? j->k->mbits : -1);
}

/* Part `part` of the blocks, summed over every worker. */
static void
batch_collect(void *ctx, int64_t part, int t)
{
	const struct batch_job *j = ctx;

	(void)t;
	collect_bins(j->w, j->nt, (int)part, j->k->mbits);
}

/*
 * The batch counted in workers w[0..nt-1] into ts: its histogram when
 * hist (the blocks collected and cleared), its counts, range and sums.
 */
static int
batch_done(struct statkern *k, struct worker *w, int nt, struct tstats *ts,
    int hist, struct err *e)
{
	struct batch_job job = { k, w, ts, NULL, 0, nt };
	uint64_t tn = 0, tnan = 0, tinf = 0;
	float mn = INFINITY, mx = -INFINITY;
	struct xsum sum, sumsq;

	if (hist)
		par_for(nt, nt, batch_collect, &job);
	xsum_init(&sum);
	xsum_init(&sumsq);
	for (int t = 0; t < nt; t++, w++) {
		tn += w->n;
		tnan += w->nan;
		tinf += w->inf;
		mn = w->min < mn ? w->min : mn;
		mx = w->max > mx ? w->max : mx;
		xsum_add_xsum(&sum, &w->sum);
		xsum_add_xsum(&sumsq, &w->sumsq);
		for (size_t i = 0; hist && ts->hist && i < w->nblocks; i++)
			if (hist_add_block(ts->hist, w->block[i], w->count +
			    (i << k->mbits), e) < 0)
				return -1;
		if (hist && ts->hist && w->zero && hist_add_bin(ts->hist, 0,
		    w->zero, e) < 0)
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
	return tstats_add_sums(ts, mn, mx, &sum, &sumsq, e);
}

int
statkern_add_batch(struct statkern *k, struct tstats *ts, const float *x,
    size_t n, struct err *e)
{
	int nt = n >= PAR_MIN ? k->nw : 1;
	struct batch_job job = { k, k->w, ts, x, n, nt };

	workers_reset(k->w, nt);
	par_for((int64_t)((n + CHUNK - 1) / CHUNK), nt, batch_chunk, &job);
	/* par_for returns when every chunk is done: all counts seen */
	return batch_done(k, k->w, nt, ts, ts->hist != NULL, e);
}

/* Allocate worker w's work space: -1 when out of memory. */
static int
worker_alloc(struct worker *w, int mbits)
{
	w->cnt = calloc((size_t)SETS * NBLOCKS << mbits, sizeof *w->cnt);
	w->block = malloc(NBLOCKS * sizeof *w->block);
	w->count = malloc(((size_t)NBLOCKS << mbits) * sizeof *w->count);
	return w->cnt && w->block && w->count ? 0 : -1;
}

static void
worker_free(struct worker *w)
{
	free(w->cnt);
	free(w->block);
	free(w->count);
}

int
statkern_slots(struct statkern *k, int nslots, struct err *e)
{
	struct worker *w;

	if (nslots <= k->nslots)
		return 0;
	if (!(w = realloc(k->w, (size_t)nslots * k->nw * sizeof *w)))
		return err_nomem(e);
	k->w = w;
	memset(w + (size_t)k->nslots * k->nw, 0, (size_t)(nslots - k->nslots) *
	    k->nw * sizeof *w);
	for (; k->nslots < nslots; k->nslots++)
		for (int t = 0; t < k->nw; t++)
			if (worker_alloc(&w[k->nslots * k->nw + t], k->mbits) <
			    0) {
				/* freed with the slot's others */
				k->nslots++;
				return err_nomem(e);
			}
	return 0;
}

int
statkern_threads(const struct statkern *k)
{
	return k->nw;
}

void
statkern_slot_reset(struct statkern *k, int slot)
{
	workers_reset(&k->w[slot * k->nw], k->nw);
}

void
statkern_slot_chunk(struct statkern *k, int slot, int t, const float *p,
    size_t n, int hist)
{
	k->w[slot * k->nw + t].used = 1;
	chunk_into(p, n, &k->w[slot * k->nw + t], k->simd,
	    hist ? k->mbits : -1);
}

uint64_t
statkern_slot_inf(const struct statkern *k, int slot)
{
	uint64_t inf = 0;

	for (int t = 0; t < k->nw; t++)
		inf += k->w[slot * k->nw + t].inf;
	return inf;
}

int
statkern_slot_commit(struct statkern *k, int slot, struct tstats *ts,
    int hist, struct err *e)
{
	struct worker *w = &k->w[slot * k->nw];
	int nt = k->nw;

	/* the threads that took none have nothing to collect */
	while (nt > 1 && !w[nt - 1].used)
		nt--;
	return batch_done(k, w, nt, ts, hist, e);
}

void
statkern_slot_discard(struct statkern *k, int slot)
{
	struct batch_job job = { k, &k->w[slot * k->nw], NULL, NULL, 0,
	    k->nw };

	for (int part = 0; part < k->nw; part++)
		batch_collect(&job, part, 0);
}

struct statkern *
statkern_new(int nthreads, int mbits, struct err *e)
{
	struct statkern *k = calloc(1, sizeof *k);

	if (!k || !(k->w = calloc((size_t)nthreads, sizeof *k->w))) {
		free(k);
		err_nomem(e);
		return NULL;
	}
	k->nw = nthreads;
	k->nslots = 1;
	k->mbits = mbits;
	k->simd = simd_level();
	for (int t = 0; t < k->nw; t++)
		if (worker_alloc(&k->w[t], mbits) < 0) {
			statkern_free(k);
			err_nomem(e);
			return NULL;
		}
	return k;
}

void
statkern_free(struct statkern *k)
{
	if (!k)
		return;
	for (int t = 0; t < k->nslots * k->nw; t++)
		worker_free(&k->w[t]);
	free(k->w);
	free(k);
}
