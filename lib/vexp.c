/*
 * vexp: e^x over arrays, the C library's expf values. See vexp.h.
 *
 * x = (k + r) ln2 / 32 with an integer k and |r| <= 1/2; e^x =
 * 2^(k / 32) 2^(r / 32), the first from a table of 2^(j / 32), j = k mod
 * 32, with k div 32 added to its exponent bits; the second a cubic in r.
 * The constants are glibc's (the polynomial is a minimax fit), and each
 * step is the operation its FMA build performs, so that every result
 * is the same double rounded once to float.
 */
#include <math.h>
#include <string.h>

#include "vexp.h"

#if defined(__GNUC__) && defined(__x86_64__) && defined(__GLIBC__)
#define VEXP_FMA 1
#endif

#ifdef VEXP_FMA
/* 2^(j / 32) as double bits, correctly rounded. */
static const uint64_t pow2_32[32] = {
	0x3ff0000000000000ULL, 0x3ff059b0d3158574ULL, 0x3ff0b5586cf9890fULL,
	0x3ff11301d0125b51ULL, 0x3ff172b83c7d517bULL, 0x3ff1d4873168b9aaULL,
	0x3ff2387a6e756238ULL, 0x3ff29e9df51fdee1ULL, 0x3ff306fe0a31b715ULL,
	0x3ff371a7373aa9cbULL, 0x3ff3dea64c123422ULL, 0x3ff44e086061892dULL,
	0x3ff4bfdad5362a27ULL, 0x3ff5342b569d4f82ULL, 0x3ff5ab07dd485429ULL,
	0x3ff6247eb03a5585ULL, 0x3ff6a09e667f3bcdULL, 0x3ff71f75e8ec5f74ULL,
	0x3ff7a11473eb0187ULL, 0x3ff82589994cce13ULL, 0x3ff8ace5422aa0dbULL,
	0x3ff93737b0cdc5e5ULL, 0x3ff9c49182a3f090ULL, 0x3ffa5503b23e255dULL,
	0x3ffae89f995ad3adULL, 0x3ffb7f76f2fb5e47ULL, 0x3ffc199bdd85529cULL,
	0x3ffcb720dcef9069ULL, 0x3ffd5818dcfba487ULL, 0x3ffdfc97337b9b5fULL,
	0x3ffea4afa2a490daULL, 0x3fff50765b6e4540ULL,
};

#define INVLN2_32 0x1.71547652b82fep+5	/* 32 / ln 2 */
#define SHIFT 0x1.8p+52			/* adding it rounds to an integer */
#define P0 0x1.c6af84b912394p-20	/* the cubic, r scaled by 1/32 */
#define P1 0x1.ebfce50fac4f3p-13
#define P2 0x1.62e42ff0c52d6p-6
#define TOP_SPECIAL 0x42b		/* top 12 bits of 88.0f */

__attribute__((target("avx2,fma"))) static void
row_fma(float *restrict y, const float *restrict x, float sub, int64_t n)
{
#pragma omp simd
	for (int64_t k = 0; k < n; k++) {
		double xd = (double)(x[k] - sub), z, kd, r, s, p, q, r2;
		uint64_t ki, t;

		z = __builtin_fma(INVLN2_32, xd, SHIFT);
		memcpy(&ki, &z, sizeof ki);
		kd = z - SHIFT;
		r = __builtin_fma(INVLN2_32, xd, -kd);
		t = pow2_32[ki % 32] - ((ki % 32) << 47) + (ki << 47);
		memcpy(&s, &t, sizeof s);
		p = __builtin_fma(P0, r, P1);
		r2 = r * r;
		q = __builtin_fma(P2, r, 1.0);
		q = __builtin_fma(p, r2, q);
		y[k] = (float)(q * s);
	}
	/* What glibc computes apart: large magnitudes, Inf, NaN. */
	for (int64_t k = 0; k < n; k++) {
		float v = x[k] - sub;
		uint32_t u;

		memcpy(&u, &v, sizeof u);
		if ((u >> 20 & 0x7ff) >= TOP_SPECIAL)
			y[k] = expf(v);
	}
}
#endif

void
vexp_row(float *y, const float *x, float sub, int64_t n)
{
#ifdef VEXP_FMA
	/* glibc takes its FMA version on CPUs with FMA and AVX2. */
	if (__builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2")) {
		row_fma(y, x, sub, n);
		return;
	}
#endif
	for (int64_t k = 0; k < n; k++)
		y[k] = expf(x[k] - sub);
}
