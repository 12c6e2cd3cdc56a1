/* gemm: see gemm.h. */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <omp.h>
#include <cblas.h>

#include "gemm.h"
#include "par.h"

/* Below this many multiply-adds a product is not worth a second thread. */
#define GEMM_PARALLEL_MIN ((int64_t)1 << 17)

void
gemm_init_threads(void)
{
	if (openblas_get_num_threads() != 1)
		openblas_set_num_threads(1);
}

static int
fits(int64_t v)
{
	return v >= 0 && v <= INT_MAX;
}

static void
scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++)
			c[i * ldc + j] = beta == 0 ? 0 : beta * c[i * ldc + j];
}

static void
call(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
    const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
    float *c, int64_t ldc)
{
	if (m == 0 || n == 0)
		return;
	if (k == 0 || alpha == 0) {
		scale_c(m, n, beta, c, ldc);
		return;
	}
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
	    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha,
	    a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

static int
check(int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t lda,
    int64_t ldb, int64_t ldc, struct err *e)
{
	if (!fits(m) || !fits(n) || !fits(k) || !fits(lda) || !fits(ldb) ||
	    !fits(ldc))
		return err_set(e, "matrix product %lldx%lldx%lld is too large",
		    (long long)m, (long long)k, (long long)n);
	if (lda < (ta ? m : k) || ldb < (tb ? k : n) || ldc < n)
		return err_set(e, "matrix product: bad leading dimension");
	return 0;
}

int
gemm_sgemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
    const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
    float *c, int64_t ldc, struct err *e)
{
	return gemm_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
	    ldc, 1, e);
}

struct sgemm_job {
	int ta, tb;
	int64_t m, n, k;
	float alpha;
	const float *a;
	int64_t lda;
	const float *b;
	int64_t ldb;
	float beta;
	float *c;
	int64_t ldc;
	int by_cols, nt;
};

/* par_for chunk t of nt: its panel of C. */
static void
sgemm_panel(void *ctx, int64_t t, int w)
{
	const struct sgemm_job *j = ctx;
	int64_t len = j->by_cols ? j->n : j->m;
	int64_t step = ((len + j->nt - 1) / j->nt + 15) / 16 * 16;
	int64_t lo = step * t, hi = lo + step;

	(void)w;
	if (hi > len)
		hi = len;
	if (lo >= hi)
		return;
	if (j->by_cols)
		call(j->ta, j->tb, j->m, hi - lo, j->k, j->alpha, j->a, j->lda,
		    j->tb ? j->b + lo * j->ldb : j->b + lo, j->ldb, j->beta,
		    j->c + lo, j->ldc);
	else
		call(j->ta, j->tb, hi - lo, j->n, j->k, j->alpha,
		    j->ta ? j->a + lo : j->a + lo * j->lda, j->lda, j->b,
		    j->ldb, j->beta, j->c + lo * j->ldc, j->ldc);
}

int
gemm_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
    const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
    float *c, int64_t ldc, int threads, struct err *e)
{
	int by_cols;

	/* OpenBLAS wants leading dimensions of at least 1 even when empty. */
	if (lda < 1)
		lda = 1;
	if (ldb < 1)
		ldb = 1;
	if (ldc < 1)
		ldc = 1;
	if (check(ta, tb, m, n, k, lda, ldb, ldc, e) == -1)
		return -1;
	gemm_init_threads();
	if (threads <= 1 || omp_in_parallel() || par_in_job() ||
	    m * n * (k ? k : 1) < GEMM_PARALLEL_MIN || (m < 32 && n < 32)) {
		call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return 0;
	}
	/*
	 * Cut the longer side of C into one panel per thread, in multiples
	 * of 16 so every panel keeps whole micro-kernel tiles.
	 */
	by_cols = n >= m;
	{
		struct sgemm_job j = { ta, tb, m, n, k, alpha, a, lda, b, ldb,
		    beta, c, ldc, by_cols, threads };

		par_for(threads, threads, sgemm_panel, &j);
	}
	return 0;
}

int
gemm_dgemm1(int64_t m, int64_t n, int64_t k, const double *a,
    const double *b, double *c, struct err *e)
{
	if (check(0, 0, m, n, k, k > 0 ? k : 1, n > 0 ? n : 1, n > 0 ? n : 1,
	    e) == -1)
		return -1;
	if (m == 0 || n == 0)
		return 0;
	if (k == 0) {
		for (int64_t i = 0; i < m * n; i++)
			c[i] = 0;
		return 0;
	}
	gemm_init_threads();
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n,
	    (int)k, 1, a, (int)k, b, (int)n, 0, c, (int)n);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Packed AVX-512 products */

#define NC_COLS 256		/* columns of B packed at a time */

int
gemm_packed_ok(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
#else
	return 0;
#endif
}

int64_t
gemm_pack_a_size(int64_t m, int64_t k)
{
	return (m + GEMM_MR - 1) / GEMM_MR * GEMM_MR * (k > 0 ? k : 1);
}

void
gemm_pack_a(const float *a, int64_t m, int64_t k, int64_t lda, float *dst)
{
	for (int64_t p = 0; p < m; p += GEMM_MR) {
		int64_t mr = m - p < GEMM_MR ? m - p : GEMM_MR;

		for (int64_t kk = 0; kk < k; kk++) {
			for (int64_t i = 0; i < mr; i++)
				dst[i] = a[(p + i) * lda + kk];
			for (int64_t i = mr; i < GEMM_MR; i++)
				dst[i] = 0;
			dst += GEMM_MR;
		}
	}
}

void
gemm_pack_a_t(const float *a, int64_t m, int64_t k, int64_t lda, float *dst)
{
	for (int64_t p = 0; p < m; p += GEMM_MR) {
		int64_t mr = m - p < GEMM_MR ? m - p : GEMM_MR;

		for (int64_t kk = 0; kk < k; kk++) {
			memcpy(dst, a + kk * lda + p,
			    sizeof(float) * (size_t)mr);
			for (int64_t i = mr; i < GEMM_MR; i++)
				dst[i] = 0;
			dst += GEMM_MR;
		}
	}
}

int64_t
gemm_packed_scratch(void)
{
	return (int64_t)GEMM_KC * NC_COLS + 16;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Lanes [a, b) of 32 as two masks. */
static inline void
lane_masks(int64_t a, int64_t b, __mmask16 *m0, __mmask16 *m1)
{
	uint32_t m = 0;

	if (a < 0)
		a = 0;
	if (b > 32)
		b = 32;
	if (b > a)
		m = (b - a >= 32 ? 0xffffffffu : ((1u << (b - a)) - 1)) <<
		    a;
	*m0 = (__mmask16)(m & 0xffff);
	*m1 = (__mmask16)(m >> 16);
}

__attribute__((target("avx512f"))) void
gemm_fill_rows(void *ctx, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
    float *dst)
{
	const struct gemm_rows *r = ctx;
	int64_t kc = k1 - k0;

	for (int64_t j = j0; j < j1; j += GEMM_NR) {
		int64_t nr = j1 - j < GEMM_NR ? j1 - j : GEMM_NR;
		__mmask16 m0, m1;

		lane_masks(0, nr, &m0, &m1);
		for (int64_t kk = 0; kk < kc; kk++) {
			const float *src = r->b + (k0 + kk) * r->ldb + j;
			float *d = dst + kk * GEMM_NR;

			_mm512_store_ps(d, _mm512_maskz_loadu_ps(m0, src));
			_mm512_store_ps(d + 16,
			    _mm512_maskz_loadu_ps(m1, src + 16));
		}
		dst += kc * GEMM_NR;
	}
}

void
gemm_fill_rows_t(void *ctx, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
    float *dst)
{
	const struct gemm_rows *r = ctx;
	int64_t kc = k1 - k0;

	for (int64_t j = j0; j < j1; j += GEMM_NR) {
		int64_t nr = j1 - j < GEMM_NR ? j1 - j : GEMM_NR;

		for (int64_t jj = 0; jj < GEMM_NR; jj++) {
			const float *src = r->b + (j + jj) * r->ldb + k0;

			if (jj < nr)
				for (int64_t kk = 0; kk < kc; kk++)
					dst[kk * GEMM_NR + jj] = src[kk];
			else
				for (int64_t kk = 0; kk < kc; kk++)
					dst[kk * GEMM_NR + jj] = 0;
		}
		dst += kc * GEMM_NR;
	}
}

/*
 * The positions of a few panels split into runs within one output row:
 * run i fills lanes [lane, lane + len) of panel pan from output row oh,
 * columns ow... Rows of the unfolded matrix are the outer loop so the
 * reads walk along input rows (and each (channel, kernel row) is read
 * for its kernel columns while still in L1).
 */
#define RUN_PANELS 8

struct run {
	int pan, lane, len;
	int64_t oh, ow;
};

/*
 * Whether the panel of positions [j, j + GEMM_NR) can be read straight
 * from the input, without unfolding: stride 1, one output row, every tap
 * inside. *base is then the input under lane 0 of tap (0, 0, 0).
 */
static int
unfold_direct(const struct gemm_unfold *u, int64_t j, const float **base)
{
	int64_t oh = j / u->ow, ow0 = j % u->ow, ih0, iw0;

	if (u->sw != 1 || ow0 + GEMM_NR > u->ow)
		return 0;
	ih0 = oh * u->sh - u->ph;
	iw0 = ow0 - u->pw;
	if (ih0 < 0 || ih0 + (u->kh - 1) * u->dh >= u->h || iw0 < 0 ||
	    iw0 + GEMM_NR - 1 + (u->kw - 1) * u->dw >= u->w)
		return 0;
	*base = u->x + ih0 * u->w + iw0;
	return 1;
}

/*
 * One row of one panel: the runs rs[0..n) of the panel, reading the input
 * plane xc at kernel row kh and column offset offw.
 */
__attribute__((target("avx512f"))) static inline void
unfold_panel_row(const struct gemm_unfold *u, const struct run *rs, int n,
    const float *xc, int64_t kh, int64_t offw, __m512i sidx, float *d)
{
	__m512 v0 = _mm512_setzero_ps(), v1 = v0;

	for (int r = 0; r < n; r++) {
		int64_t ih = rs[r].oh * u->sh - u->ph + kh * u->dh;
		int64_t iw0 = rs[r].ow * u->sw + offw, a, b;
		__mmask16 m0, m1;
		const float *src;

		if (ih < 0 || ih >= u->h)
			continue;
		/* The lanes whose column lies inside the row. */
		if (u->sw == 1) {
			a = -iw0;
			b = u->w - iw0;
		} else {
			a = iw0 >= 0 ? 0 : (-iw0 + u->sw - 1) / u->sw;
			b = u->w - 1 - iw0 < 0 ? 0 :
			    (u->w - 1 - iw0) / u->sw + 1;
		}
		a = a < 0 ? 0 : a;
		b = b > rs[r].len ? rs[r].len : b;
		if (a >= b)
			continue;
		lane_masks(rs[r].lane + a, rs[r].lane + b, &m0, &m1);
		/* Lane l reads column iw0 + (l - lane) * sw. */
		src = xc + ih * u->w + iw0 - (int64_t)rs[r].lane * u->sw;
		if (u->sw == 1 && m0 == 0xffff && m1 == 0xffff) {
			v0 = _mm512_loadu_ps(src);
			v1 = _mm512_loadu_ps(src + 16);
		} else if (u->sw == 1) {
			v0 = _mm512_mask_loadu_ps(v0, m0, src);
			v1 = _mm512_mask_loadu_ps(v1, m1, src + 16);
		} else {
			v0 = _mm512_mask_i32gather_ps(v0, m0, sidx, src, 4);
			v1 = _mm512_mask_i32gather_ps(v1, m1, sidx,
			    src + 16 * u->sw, 4);
		}
	}
	_mm512_store_ps(d, v0);
	_mm512_store_ps(d + 16, v1);
}

/* Split positions [jb, je) into runs within output rows; returns the count. */
static int
unfold_runs(const struct gemm_unfold *u, int64_t jb, int64_t je,
    struct run *rs)
{
	int n = 0;

	for (int64_t p = jb; p < je; ) {
		int64_t lane = (p - jb) % GEMM_NR, ow = p % u->ow;
		int64_t len = u->ow - ow;

		if (len > GEMM_NR - lane)
			len = GEMM_NR - lane;
		if (len > je - p)
			len = je - p;
		rs[n].pan = (int)((p - jb) / GEMM_NR);
		rs[n].lane = (int)lane, rs[n].len = (int)len;
		rs[n].oh = p / u->ow, rs[n++].ow = ow;
		p += len;
	}
	return n;
}

__attribute__((target("avx512f"))) void
gemm_fill_unfold(void *ctx, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
    float *dst)
{
	const struct gemm_unfold *u = ctx;
	int64_t kc = k1 - k0, hw = u->h * u->w;
	__m512i step = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
	    5, 4, 3, 2, 1, 0);
	__m512i sidx = _mm512_mullo_epi32(step, _mm512_set1_epi32(
	    (int)u->sw));
	struct run rs[RUN_PANELS * GEMM_NR];

	for (int64_t jb = j0; jb < j1; jb += RUN_PANELS * GEMM_NR) {
		int64_t je = j1 - jb < RUN_PANELS * GEMM_NR ? j1 :
		    jb + RUN_PANELS * GEMM_NR;
		int64_t npan = (je - jb + GEMM_NR - 1) / GEMM_NR;
		int64_t ci = k0 / (u->kh * u->kw), kh = k0 / u->kw % u->kh;
		int64_t kw = k0 % u->kw;
		float *base = dst + (jb - j0) / GEMM_NR * kc * GEMM_NR;
		int nrun = unfold_runs(u, jb, je, rs), first[RUN_PANELS + 1];
		int direct[RUN_PANELS];

		/* Runs first[q] .. first[q + 1] belong to panel q. */
		for (int64_t q = 0, r = 0; q <= npan; q++) {
			while (r < nrun && rs[r].pan < q)
				r++;
			first[q] = (int)r;
		}
		for (int64_t q = 0; q < npan; q++) {
			const float *unused;

			direct[q] = unfold_direct(u, jb + q * GEMM_NR, &unused);
		}
		for (int64_t kk = 0; kk < kc; kk++) {
			const float *xc = u->x + ci * hw;
			int64_t offw = kw * u->dw - u->pw;

			for (int64_t q = 0; q < npan; q++) {
				const struct run *r = rs + first[q];
				float *d = base + (q * kc + kk) * GEMM_NR;
				int64_t ih = r->oh * u->sh - u->ph + kh * u->dh;
				int64_t iw0 = r->ow + offw;

				/* gemm_packed reads these from the input. */
				if (direct[q])
					continue;
				/* Fast path: a whole run, stride 1, inside. */
				if (r->len == GEMM_NR && u->sw == 1 &&
				    ih >= 0 && ih < u->h && iw0 >= 0 &&
				    iw0 + GEMM_NR <= u->w) {
					const float *src = xc + ih * u->w + iw0;

					_mm512_store_ps(d,
					    _mm512_loadu_ps(src));
					_mm512_store_ps(d + 16,
					    _mm512_loadu_ps(src + 16));
					continue;
				}
				unfold_panel_row(u, r, first[q + 1] - first[q],
				    xc, kh, offw, sidx, d);
			}
			if (++kw == u->kw) {
				kw = 0;
				if (++kh == u->kh)
					kh = 0, ci++;
			}
		}
	}
}

/*
 * The micro-kernel: an mr x 32 block of C from kc steps, each one column
 * of A (broadcast, GEMM_MR apart) times one row of B (two vectors).
 * init: 0 store the product, 1 add C to it, 2 add the bias of each row.
 */
__attribute__((target("avx512f"), always_inline)) static inline void
kern(const int mr, int64_t kc, const float *a, const float *b,
    const int64_t *off, float *c, int64_t ldc, __mmask16 m0, __mmask16 m1,
    int init, const float *bias)
{
	__m512 c0[GEMM_MR], c1[GEMM_MR];

#pragma GCC unroll 12
	for (int i = 0; i < mr; i++)
		c0[i] = c1[i] = _mm512_setzero_ps();
	for (int64_t k = 0; k < kc; k++) {
		__m512 b0, b1;

		/* off: B row k is at b + off[k] (unaligned), else packed. */
		if (off) {
			b0 = _mm512_loadu_ps(b + off[k]);
			b1 = _mm512_loadu_ps(b + off[k] + 16);
		} else {
			b0 = _mm512_load_ps(b);
			b1 = _mm512_load_ps(b + 16);
			b += GEMM_NR;
		}

#pragma GCC unroll 12
		for (int i = 0; i < mr; i++) {
			__m512 av = _mm512_set1_ps(a[i]);

			c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
			c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
		}
		a += GEMM_MR;
	}
	/*
	 * The sum starts from zero and C (or the bias) is added last, as
	 * ONNX Runtime's MLAS does: the same products then round the same
	 * way, which matters where a QuantizeLinear follows.
	 */
#pragma GCC unroll 12
	for (int i = 0; i < mr; i++) {
		if (init == 2) {
			c0[i] = _mm512_add_ps(c0[i], _mm512_set1_ps(bias[i]));
			c1[i] = _mm512_add_ps(c1[i], _mm512_set1_ps(bias[i]));
		} else if (init == 1) {
			c0[i] = _mm512_add_ps(c0[i],
			    _mm512_maskz_loadu_ps(m0, c + i * ldc));
			c1[i] = _mm512_add_ps(c1[i],
			    _mm512_maskz_loadu_ps(m1, c + i * ldc + 16));
		}
		_mm512_mask_storeu_ps(c + i * ldc, m0, c0[i]);
		_mm512_mask_storeu_ps(c + i * ldc + 16, m1, c1[i]);
	}
}

__attribute__((target("avx512f"))) static void
kern_any(int mr, int64_t kc, const float *a, const float *b, float *c,
    int64_t ldc, __mmask16 m0, __mmask16 m1, int init, const float *bias)
{
	switch (mr) {
#define K(n) case n: kern(n, kc, a, b, NULL, c, ldc, m0, m1, init, bias); \
	break;
	K(1) K(2) K(3) K(4) K(5) K(6) K(7) K(8) K(9) K(10) K(11) K(12)
#undef K
	}
}

__attribute__((target("avx512f"))) static void
kern_direct(int mr, int64_t kc, const float *a, const float *b,
    const int64_t *off, float *c, int64_t ldc, int init, const float *bias)
{
	switch (mr) {
#define K(n) case n: kern(n, kc, a, b, off, c, ldc, 0xffff, 0xffff, init, \
	bias); break;
	K(1) K(2) K(3) K(4) K(5) K(6) K(7) K(8) K(9) K(10) K(11) K(12)
#undef K
	}
}

/*
 * Row r of an unfolding's kc rows from pc sits at off[r] from the input
 * under lane 0 of a panel (for the panels read straight from the input).
 */
static void
unfold_offsets(const struct gemm_unfold *u, int64_t pc, int64_t kc,
    int64_t *off)
{
	int64_t hw = u->h * u->w;

	for (int64_t r = 0; r < kc; r++) {
		int64_t kk = pc + r, ci = kk / (u->kh * u->kw);
		int64_t kh = kk / u->kw % u->kh;

		off[r] = ci * hw + kh * u->dh * u->w + kk % u->kw * u->dw;
	}
}

/*
 * The blocks of C rows [i0, i1) at one column panel (nr columns at c): B
 * packed at bq, or read from the input at base + off[] when base is set.
 */
__attribute__((target("avx512f"))) static void
panel_blocks(const float *pa, int64_t k, int64_t pc, int64_t kc, int64_t i0,
    int64_t i1, const float *bq, const float *base, const int64_t *off,
    int64_t nr, float *c, int64_t ldc, int init, const float *bias)
{
	__mmask16 m0, m1;

	lane_masks(0, nr, &m0, &m1);
	for (int64_t i = i0; i < i1; i += GEMM_MR) {
		int mr = (int)(i1 - i < GEMM_MR ? i1 - i : GEMM_MR);
		const float *a = pa + i * k + pc * GEMM_MR;
		const float *bi = bias ? bias + i : NULL;

		if (base)
			kern_direct(mr, kc, a, base, off, c + i * ldc, ldc,
			    init, bi);
		else
			kern_any(mr, kc, a, bq, c + i * ldc, ldc, m0, m1, init,
			    bi);
	}
}

__attribute__((target("avx512f"))) void
gemm_packed(const float *pa, int64_t m, int64_t k, int64_t i0, int64_t i1,
    int64_t j0, int64_t j1, gemm_fill_fn fill, void *ctx,
    const float *bias, int accumulate, float *c, int64_t ldc,
    float *scratch)
{
	/* Panels of B want 64-byte alignment for the vector loads. */
	float *bp = (float *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);

	if (i1 > m)
		i1 = m;
	if (k == 0) {
		for (int64_t i = i0; i < i1; i++)
			for (int64_t j = j0; j < j1; j++)
				c[i * ldc + j] = bias ? bias[i] :
				    accumulate ? c[i * ldc + j] : 0;
		return;
	}
	for (int64_t jc = j0; jc < j1; jc += NC_COLS) {
		int64_t nc = j1 - jc < NC_COLS ? j1 - jc : NC_COLS;

		for (int64_t pc = 0; pc < k; pc += GEMM_KC) {
			int64_t kc = k - pc < GEMM_KC ? k - pc : GEMM_KC;
			int init = pc > 0 || accumulate ? 1 : bias ? 2 : 0;
			int64_t off[GEMM_KC];

			fill(ctx, pc, pc + kc, jc, jc + nc, bp);
			if (fill == gemm_fill_unfold)
				unfold_offsets(ctx, pc, kc, off);
			for (int64_t q = 0; q < nc; q += GEMM_NR) {
				const float *base = NULL;

				if (fill != gemm_fill_unfold ||
				    !unfold_direct(ctx, jc + q, &base))
					base = NULL;
				panel_blocks(pa, k, pc, kc, i0, i1,
				    bp + q / GEMM_NR * kc * GEMM_NR, base, off,
				    nc - q < GEMM_NR ? nc - q : GEMM_NR,
				    c + jc + q, ldc, init, bias);
			}
		}
	}
}

#else
void
gemm_fill_rows(void *ctx, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
    float *dst)
{
	(void)ctx, (void)k0, (void)k1, (void)j0, (void)j1, (void)dst;
}

void
gemm_fill_unfold(void *ctx, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
    float *dst)
{
	(void)ctx, (void)k0, (void)k1, (void)j0, (void)j1, (void)dst;
}

void
gemm_fill_rows_t(void *ctx, int64_t k0, int64_t k1, int64_t j0,
    int64_t j1, float *dst)
{
	(void)ctx, (void)k0, (void)k1, (void)j0, (void)j1, (void)dst;
}

void
gemm_packed(const float *pa, int64_t m, int64_t k, int64_t i0, int64_t i1,
    int64_t j0, int64_t j1, gemm_fill_fn fill, void *ctx,
    const float *bias, int accumulate, float *c, int64_t ldc,
    float *scratch)
{
	/* Never called: gemm_packed_ok() is 0 here. */
	(void)pa, (void)m, (void)k, (void)i0, (void)i1, (void)j0, (void)j1;
	(void)fill, (void)ctx, (void)bias, (void)accumulate, (void)c;
	(void)ldc, (void)scratch;
}
#endif
