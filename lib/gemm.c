/* gemm: see gemm.h. */
#include <limits.h>
#include <omp.h>
#include <cblas.h>

#include "gemm.h"

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
	call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
	return 0;
}

int
gemm_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
    const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
    float *c, int64_t ldc, int threads, struct err *e)
{
	int by_cols;

	if (lda < 1)
		lda = 1;
	if (ldb < 1)
		ldb = 1;
	if (ldc < 1)
		ldc = 1;
	if (check(ta, tb, m, n, k, lda, ldb, ldc, e) == -1)
		return -1;
	gemm_init_threads();
	if (threads <= 1 || omp_in_parallel() || m * n * (k ? k : 1) <
	    GEMM_PARALLEL_MIN || (m < 32 && n < 32)) {
		call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return 0;
	}
	/*
	 * Cut the longer side of C into one panel per thread, in multiples
	 * of 16 so every panel keeps whole micro-kernel tiles.
	 */
	by_cols = n >= m;
#pragma omp parallel num_threads(threads)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		int64_t len = by_cols ? n : m;
		int64_t step = ((len + nt - 1) / nt + 15) / 16 * 16;
		int64_t lo = step * t, hi = lo + step;

		if (hi > len)
			hi = len;
		if (lo < hi) {
			if (by_cols)
				call(ta, tb, m, hi - lo, k, alpha, a, lda,
				    tb ? b + lo * ldb : b + lo, ldb, beta,
				    c + lo, ldc);
			else
				call(ta, tb, hi - lo, n, k, alpha,
				    ta ? a + lo : a + lo * lda, lda, b, ldb,
				    beta, c + lo * ldc, ldc);
		}
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
