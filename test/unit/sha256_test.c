/*
 * sha256_test: lib/sha256.c against FIPS 180-4's examples and digests
 * Python's hashlib gives, whole and fed in pieces of every size (the
 * buffered path and the many-blocks path, which the SHA extensions take
 * where the CPU has them); the portable rounds
 * (sha256_init_portable) on the same, and against the default path on
 * random data of random lengths fed in random pieces. Needs nothing but
 * libonnxq.
 */
#include "sha256.h"
#include "unit.h"

static void
hex_of(const uint8_t d[32], char hex[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* The digest of n bytes at p, fed in one update, portable or not. */
static void
digest_hex(const void *p, size_t n, int portable, char hex[65])
{
	struct sha256 s;
	uint8_t d[32];

	if (portable)
		sha256_init_portable(&s);
	else
		sha256_init(&s);
	sha256_update(&s, p, n);
	sha256_final(&s, d);
	hex_of(d, hex);
}

static void
test_known(void)
{
	static const struct {
		const char *msg, *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b"
		    "7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb41"
		    "0ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd4"
		    "19db06c1" },
	};
	char hex[65];

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		sha256_hex(v[i].msg, strlen(v[i].msg), hex);
		CHECK_EQ_STR(hex, v[i].hex);
		digest_hex(v[i].msg, strlen(v[i].msg), 1, hex);
		CHECK_EQ_STR(hex, v[i].hex);
	}
}

/* A million 'a's, at once and in pieces of 1 to 200 bytes. */
static void
test_pieces(void)
{
	size_t n = 1000000;
	char *a = malloc(n), hex[65];
	struct sha256 s;
	uint8_t d[32];

	REQUIRE(a != NULL);
	memset(a, 'a', n);
	sha256_hex(a, n, hex);
	CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e"
	    "046d39ccc7112cd0");
	digest_hex(a, n, 1, hex);
	CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e"
	    "046d39ccc7112cd0");
	for (size_t step = 1; step <= 200; step += 7) {
		if (step % 2)
			sha256_init(&s);
		else
			sha256_init_portable(&s);
		for (size_t at = 0; at < n; at += step)
			sha256_update(&s, a + at, at + step < n ? step : n - at);
		sha256_final(&s, d);
		hex_of(d, hex);
		CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a4"
		    "97200e046d39ccc7112cd0");
	}
	free(a);
}

/* Bytes 0, 1, ..., 255, 0, ...: lengths around the block edges. */
static void
test_lengths(void)
{
	static const size_t len[] = { 1, 55, 56, 63, 64, 65, 127, 128, 1000 };
	uint8_t buf[1000], d[32];
	char hex[65], hex2[65];
	struct sha256 s;

	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof len / sizeof len[0]; i++) {
		/* whole, and one byte then the rest: the same digest */
		sha256_hex(buf, len[i], hex);
		sha256_init(&s);
		sha256_update(&s, buf, 1);
		sha256_update(&s, buf + 1, len[i] - 1);
		sha256_final(&s, d);
		hex_of(d, hex2);
		CHECK_EQ_STR(hex2, hex);
	}
	sha256_hex(buf, 1000, hex);
	CHECK_EQ_STR(hex, "a8af099bf2e878609558dbf69d8f88f4a31040a8cf84b549a0"
	    "cfa912f12ffc3f");
}

/* xorshift64: the same bytes every run. */
static uint64_t
next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random data of random lengths (0 to 4 KB, and a few of 64 KB), fed in
 * random pieces to the default and the portable path: the same digest.
 */
static void
test_paths_agree(void)
{
	size_t cap = 65536;
	uint8_t *buf = malloc(cap), d[2][32];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	char hex[2][65];
	struct sha256 s[2];

	REQUIRE(buf != NULL);
	for (size_t i = 0; i < cap; i++)
		buf[i] = (uint8_t)next(&x);
	for (int round = 0; round < 300; round++) {
		size_t n = round < 295 ? next(&x) % 4097 : cap - round % 5;

		sha256_init(&s[0]);
		sha256_init_portable(&s[1]);
		for (int k = 0; k < 2; k++) {
			for (size_t at = 0, step; at < n; at += step) {
				step = 1 + next(&x) % 300;
				if (step > n - at)
					step = n - at;
				sha256_update(&s[k], buf + at, step);
			}
			sha256_final(&s[k], d[k]);
			hex_of(d[k], hex[k]);
		}
		if (!CHECK_EQ_STR(hex[1], hex[0]))
			CHECK_EQ_INT((int)n, -1);	/* which length */
		digest_hex(buf, n, 1, hex[1]);
		CHECK_EQ_STR(hex[1], hex[0]);
	}
	free(buf);
}

UNIT_MAIN(test_known, test_pieces, test_lengths, test_paths_agree)
