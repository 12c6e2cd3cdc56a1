/*
 * gemm: single-precision matrix products for the kernels, on OpenBLAS.
 *
 * All matrices are row-major. gemm_sgemm() spreads one product over up to
 * `threads` OpenMP threads by cutting C into column (or row) panels, each
 * computed by a single-threaded cblas_sgemm; OpenBLAS's own thread pool is
 * kept at one thread so the process has a single pool (ours) and no two
 * pools spin against each other on few cores. Called from inside a
 * parallel region it runs on the calling thread only.
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

/* The same on the calling thread only, for callers that split work themselves. */
int gemm_sgemm1(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
    float beta, float *c, int64_t ldc, struct err *e);

/* Double C (m x n) = A (m x k) * B (k x n), contiguous, calling thread only. */
int gemm_dgemm1(int64_t m, int64_t n, int64_t k, const double *a,
    const double *b, double *c, struct err *e);

/* Keep OpenBLAS single-threaded (see above); cheap, call before any BLAS use. */
void gemm_init_threads(void);

#endif
