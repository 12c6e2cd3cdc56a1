/*
 * sha256: the SHA-256 digest (FIPS 180-4), to name the exact model a
 * stream was computed from. Plain data, nothing to free.
 */
#ifndef ONNXQ_SHA256_H
#define ONNXQ_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
	int portable;		/* the C rounds, whatever the CPU has */
};

void sha256_init(struct sha256 *s);
/*
 * As sha256_init, but the digest is computed by the portable C rounds
 * even on a CPU with SHA instructions (which sha256_init takes where
 * they are): the same digest, for tests to compare both.
 */
void sha256_init_portable(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, uint8_t digest[32]);
/* The digest of data as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t n, char hex[65]);

#endif
