/*
 * gemm: single-precision matrix products for the kernels.
 *
 * Two families. gemm_sgemm() is OpenBLAS: it spreads one product over up
 * to `threads` threads (par.h) by cutting C into column (or row) panels,
 * each computed by a single-threaded cblas_sgemm; OpenBLAS's own thread
 * pool is kept at one thread so the process has a single pool (par.h)
 * and no two pools spin against each other on few cores. Called from
 * inside a parallel region or job it runs on the calling thread only.
 *
 * gemm_packed() is our own AVX-512 micro-kernel (12 rows by 32 columns of
 * C in registers), for CPUs that have AVX-512 (gemm_packed_ok()): Debian's
 * OpenBLAS 0.3.21 does not know newer AMD cores and falls back to its
 * AVX2 kernels there, at about half the speed. The left matrix (weights)
 * is packed once into GEMM_MR-row panels by the caller; the right one is
 * produced into GEMM_NR-column panels by a fill function, so an unfolded
 * convolution input never exists in full, and panels of an unfolding that
 * lie wholly inside the input (stride 1) are read from it directly. It
 * runs on the calling thread; callers split C between threads.
 *
 * Nothing here allocates; scratch comes from the caller.
 */
#ifndef ONNXQ_GEMM_H
#define ONNXQ_GEMM_H

#include <stdint.h>

#include "err.h"

/*
 * C = alpha * op(A) * op(B) + beta * C, op(X) = X or its transpose.
 * op(A) is m x k, op(B) is k x n, C is m x n. beta 0 ignores C's contents
 * (NaN included). Fails only when a size does not fit OpenBLAS's int.
 */
int gemm_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
    float beta, float *c, int64_t ldc, int threads, struct err *e);

/* The same on the calling thread only, for callers splitting work. */
int gemm_sgemm1(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
    float beta, float *c, int64_t ldc, struct err *e);

/* Double C (m x n) = A (m x k) * B (k x n), contiguous, calling thread only. */
int gemm_dgemm1(int64_t m, int64_t n, int64_t k, const double *a,
    const double *b, double *c, struct err *e);

/* Keep OpenBLAS single-threaded (see above); cheap, call before use. */
void gemm_init_threads(void);

#define GEMM_MR 12		/* rows of a packed panel of A */
#define GEMM_NR 32		/* columns of a panel of B */
#define GEMM_KC 256		/* rows of B filled at a time */

/* Whether gemm_packed() can run here (AVX-512). */
int gemm_packed_ok(void);
/* Floats the packed copy of an m x k matrix takes. */
int64_t gemm_pack_a_size(int64_t m, int64_t k);
/* Pack a (m x k, row stride lda) into dst. */
void gemm_pack_a(const float *a, int64_t m, int64_t k, int64_t lda,
    float *dst);
/* Pack the transpose of a (a is k x m, row stride lda) into dst. */
void gemm_pack_a_t(const float *a, int64_t m, int64_t k, int64_t lda,
    float *dst);

/*
 * Fill rows [k0, k1) and columns [j0, j1) of the right-hand matrix into
 * dst as ceil((j1 - j0) / GEMM_NR) panels, each (k1 - k0) rows of
 * GEMM_NR floats, columns past j1 set to zero.
 */
typedef void (*gemm_fill_fn)(void *ctx, int64_t k0, int64_t k1, int64_t j0,
    int64_t j1, float *dst);

/* A fill function for a plain row-major matrix; ctx is a struct gemm_rows. */
struct gemm_rows {
	const float *b;
	int64_t ldb;
};
void gemm_fill_rows(void *ctx, int64_t k0, int64_t k1, int64_t j0,
    int64_t j1, float *dst);
/* The same for the transpose: element (k, j) at b[j * ldb + k]. */
void gemm_fill_rows_t(void *ctx, int64_t k0, int64_t k1, int64_t j0,
    int64_t j1, float *dst);

/*
 * A fill function unfolding (im2col) one image of a 2-D convolution; ctx
 * is a struct gemm_unfold. Rows are (channel, kernel row, kernel column),
 * columns output positions. Panels gemm_packed() reads from the input
 * directly are left unfilled.
 */
struct gemm_unfold {
	const float *x;			/* channels x h x w */
	int64_t h, w, oh, ow;
	int64_t kh, kw, sh, sw, dh, dw, ph, pw;
};
void gemm_fill_unfold(void *ctx, int64_t k0, int64_t k1, int64_t j0,
    int64_t j1, float *dst);

/* Scratch floats gemm_packed() needs per calling thread. */
int64_t gemm_packed_scratch(void);

/*
 * C[i0..i1, j0..j1) = A * B (+ bias per row, or + C when accumulate), A
 * packed by gemm_pack_a (m x k), on the calling thread. i0 must be a
 * multiple of GEMM_MR; only when gemm_packed_ok().
 */
void gemm_packed(const float *pa, int64_t m, int64_t k, int64_t i0,
    int64_t i1, int64_t j0, int64_t j1, gemm_fill_fn fill, void *ctx,
    const float *bias, int accumulate, float *c, int64_t ldc,
    float *scratch);

#endif
