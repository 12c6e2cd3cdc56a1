/*
 * strmap: see strmap.h. Linear probing, a word-at-a-time hash, grows
 * at 50% load. Each slot keeps its key's hash, so a probe rarely touches
 * another key's text and a resize never rehashes; the keys' copies are
 * packed in large blocks (a map of a million names would otherwise pay
 * malloc's overhead a million times).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

/* Key text is packed in blocks of up to this many bytes. */
#define POOL_BLOCK 65536

struct slot {
	char *key;
	uint32_t hash;
	int val;
};

struct pool {
	struct pool *next;
	size_t used, cap;
	char text[];
};

struct strmap {
	struct slot *slots;
	size_t cap;		/* power of two */
	size_t count;
	struct pool *pool;	/* newest block first */
};

/* 8 bytes of s as one number, whatever the alignment. */
static uint64_t
word(const char *s)
{
	uint64_t w;

	memcpy(&w, s, sizeof w);
	return w;
}

static uint32_t
word32(const char *s)
{
	uint32_t w;

	memcpy(&w, s, sizeof w);
	return w;
}

/*
 * Names are 10-40 bytes: strlen (vectorized in libc) and then 8 bytes a
 * step, the last step overlapping the one before it so no read passes
 * the terminating NUL; a byte-at-a-time hash pays a multiply per byte.
 * Each step multiplies the whole state, so every byte reaches the high
 * bits, and murmur3's finalizer brings them down to the low bits the
 * table's mask keeps (names t1, t2, ... must not cluster).
 */
static uint32_t
hash(const char *s)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	size_t len = strlen(s);
	uint64_t h = len * k;

	if (len >= 8) {
		const char *last = s + len - 8;

		for (; s < last; s += 8)
			h = (h ^ word(s)) * k, h ^= h >> 29;
		h = (h ^ word(last)) * k;
	} else if (len >= 4)
		h = (h ^ (word32(s) | (uint64_t)word32(s + len - 4) << 32)) *
		    k;
	else if (len)
		h = (h ^ ((unsigned char)s[0] |
		    (unsigned char)s[len / 2] << 8 |
		    (uint64_t)(unsigned char)s[len - 1] << 16)) * k;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

static struct slot *
find(const struct strmap *m, const char *key, uint32_t h)
{
	size_t i = h & (m->cap - 1);

	while (m->slots[i].key && (m->slots[i].hash != h ||
	    strcmp(m->slots[i].key, key) != 0))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

/* Move the keys to a table of cap slots, a power of two; -1 if no memory. */
static int
resize(struct strmap *m, size_t cap)
{
	struct slot *old = m->slots;
	size_t oldcap = m->cap;

	if (!(m->slots = calloc(cap, sizeof *m->slots))) {
		m->slots = old;
		return -1;
	}
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key) {
			size_t j = old[i].hash & (cap - 1);

			while (m->slots[j].key)
				j = (j + 1) & (cap - 1);
			m->slots[j] = old[i];
		}
	free(old);
	return 0;
}

/* A copy of key in the map's pool; NULL when out of memory. */
static char *
pool_copy(struct strmap *m, const char *key)
{
	size_t len = strlen(key) + 1;
	struct pool *p = m->pool;
	char *s;

	if (!p || p->cap - p->used < len) {
		/* small maps stay small: blocks double up to POOL_BLOCK */
		size_t cap = p ? 2 * p->cap : 256;

		cap = cap < POOL_BLOCK ? cap : POOL_BLOCK;
		cap = cap > len ? cap : len;

		if (!(p = malloc(sizeof *p + cap)))
			return NULL;
		p->next = m->pool;
		p->used = 0;
		p->cap = cap;
		m->pool = p;
	}
	s = p->text + p->used;
	memcpy(s, key, len);
	p->used += len;
	return s;
}

struct strmap *
strmap_new(void)
{
	struct strmap *m = calloc(1, sizeof *m);

	if (m && resize(m, 64) < 0) {
		free(m);
		return NULL;
	}
	return m;
}

void
strmap_free(struct strmap *m)
{
	if (m) {
		while (m->pool) {
			struct pool *next = m->pool->next;

			free(m->pool);
			m->pool = next;
		}
		free(m->slots);
	}
	free(m);
}

int
strmap_reserve(struct strmap *m, size_t n)
{
	size_t cap = m->cap;

	while (n > cap / 2) {
		if (cap > SIZE_MAX / 4 / sizeof *m->slots)
			return -1;
		cap *= 2;
	}
	return cap == m->cap ? 0 : resize(m, cap);
}

/* key's slot, filled with a copy of key when new; NULL when no memory. */
static struct slot *
find_or_insert(struct strmap *m, const char *key, int *fresh)
{
	uint32_t h = hash(key);
	struct slot *s;

	if ((m->count + 1) * 2 > m->cap && resize(m, 2 * m->cap) < 0)
		return NULL;
	s = find(m, key, h);
	*fresh = !s->key;
	if (!s->key) {
		if (!(s->key = pool_copy(m, key)))
			return NULL;
		s->hash = h;
		m->count++;
	}
	return s;
}

int
strmap_put(struct strmap *m, const char *key, int val)
{
	struct slot *s;
	int fresh;

	if (!(s = find_or_insert(m, key, &fresh)))
		return -1;
	s->val = val;
	return 0;
}

int
strmap_add(struct strmap *m, const char *key, int val, int *old)
{
	struct slot *s;
	int fresh;

	if (!(s = find_or_insert(m, key, &fresh)))
		return -1;
	if (fresh) {
		s->val = val;
		return 0;
	}
	if (old)
		*old = s->val;
	return 1;
}

int
strmap_get(const struct strmap *m, const char *key, int *val)
{
	const struct slot *s = find(m, key, hash(key));

	if (!s->key)
		return 0;
	if (val)
		*val = s->val;
	return 1;
}

size_t
strmap_displacement(const struct strmap *m, size_t *count, size_t *cap)
{
	size_t sum = 0;

	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			sum += (i - m->slots[i].hash) & (m->cap - 1);
	*count = m->count;
	*cap = m->cap;
	return sum;
}
