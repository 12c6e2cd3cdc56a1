/* sha256: see sha256.h. */
#include <stdio.h>
#include <string.h>

#include "sha256.h"

static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) ((x) >> (n) | (x) << (32 - (n)))

static void
block(struct sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
		    (w[i - 15] >> 3)) + w[i - 7] + (ROR(w[i - 2], 17) ^
		    ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
	a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
	e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + k[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
	s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

/*
 * The x86 SHA extensions do the rounds of four blocks in the time the
 * code above does one: hashing a 10 MB model was ~0.05 s of each
 * onnx-mixprec run. Same digest; block() where the CPU lacks them.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

#define SHA_NI __attribute__((target("sha,sse4.1,ssse3")))

/* 4 rounds of group g: its words m plus their constants. */
#define ROUNDS4(m, g) do { \
	__m128i x_ = _mm_add_epi32(m, _mm_loadu_si128( \
	    (const __m128i *)&k[4 * (g)])); \
	cdgh = _mm_sha256rnds2_epu32(cdgh, abef, x_); \
	x_ = _mm_shuffle_epi32(x_, 0x0e); \
	abef = _mm_sha256rnds2_epu32(abef, cdgh, x_); \
} while (0)

SHA_NI static void
blocks_ni(struct sha256 *s, const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL,
	    0x0405060700010203LL);
	__m128i abef, cdgh, t, m[4], abef0, cdgh0;

	/* h as the instructions want it: ABEF and CDGH */
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s->h[0]),
	    0xb1);					/* CDAB */
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s->h[4]),
	    0x1b);					/* EFGH */
	abef = _mm_alignr_epi8(t, cdgh, 8);
	cdgh = _mm_blend_epi16(cdgh, t, 0xf0);
	for (; n > 0; n--, p += 64) {
		abef0 = abef;
		cdgh0 = cdgh;
		for (int g = 0; g < 16; g++) {
			__m128i *w = &m[g & 3];

			if (g < 4)
				*w = _mm_shuffle_epi8(_mm_loadu_si128(
				    (const __m128i *)(p + 16 * g)), bswap);
			else
				/* W[t-16] + s0(W[t-15]) + W[t-7], then s1 */
				*w = _mm_sha256msg2_epu32(_mm_add_epi32(
				    _mm_sha256msg1_epu32(*w, m[(g + 1) & 3]),
				    _mm_alignr_epi8(m[(g + 3) & 3],
				    m[(g + 2) & 3], 4)), m[(g + 3) & 3]);
			ROUNDS4(*w, g);
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	t = _mm_shuffle_epi32(abef, 0x1b);		/* FEBA */
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);		/* DCHG */
	_mm_storeu_si128((__m128i *)&s->h[0], _mm_blend_epi16(t, cdgh, 0xf0));
	_mm_storeu_si128((__m128i *)&s->h[4], _mm_alignr_epi8(cdgh, t, 8));
}

/* Whether the CPU has them; asked once (threads may race to ask). */
static int
have_sha_ni(void)
{
	static int known = -1;
	int have = __atomic_load_n(&known, __ATOMIC_RELAXED);
	unsigned a, b, c, d;

	if (have < 0) {
		have = __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
		    (b >> 29 & 1) && __get_cpuid(1, &a, &b, &c, &d) &&
		    (c >> 19 & 1) && (c >> 9 & 1);	/* SSE4.1, SSSE3 */
		__atomic_store_n(&known, have, __ATOMIC_RELAXED);
	}
	return have;
}
#endif

/* n whole blocks at p. */
static void
blocks(struct sha256 *s, const uint8_t *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (!s->portable && have_sha_ni()) {
		blocks_ni(s, p, n);
		return;
	}
#endif
	for (; n > 0; n--, p += 64)
		block(s, p);
}

void
sha256_init(struct sha256 *s)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, h0, sizeof h0);
	s->len = 0;
	s->nbuf = 0;
	s->portable = 0;
}

void
sha256_init_portable(struct sha256 *s)
{
	sha256_init(s);
	s->portable = 1;
}

void
sha256_update(struct sha256 *s, const void *data, size_t n)
{
	const uint8_t *p = data;

	s->len += n;
	if (s->nbuf) {
		size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;

		memcpy(s->buf + s->nbuf, p, take);
		s->nbuf += take;
		p += take;
		n -= take;
		if (s->nbuf < 64)
			return;
		blocks(s, s->buf, 1);
		s->nbuf = 0;
	}
	blocks(s, p, n / 64);
	p += n / 64 * 64;
	n %= 64;
	memcpy(s->buf, p, n);
	s->nbuf = n;
}

void
sha256_final(struct sha256 *s, uint8_t digest[32])
{
	uint64_t bits = s->len * 8;
	uint8_t pad[72] = { 0x80 };
	size_t padlen = (s->nbuf < 56 ? 56 : 120) - s->nbuf;

	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(s, pad, padlen + 8);
	for (int i = 0; i < 8; i++) {
		digest[4 * i] = (uint8_t)(s->h[i] >> 24);
		digest[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		digest[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		digest[4 * i + 3] = (uint8_t)s->h[i];
	}
}

void
sha256_hex(const void *data, size_t n, char hex[65])
{
	struct sha256 s;
	uint8_t d[32];

	sha256_init(&s);
	sha256_update(&s, data, n);
	sha256_final(&s, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}
