/* strmap: see strmap.h. Linear probing, FNV-1a, grows at 50% load. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

struct slot {
	char *key;
	int val;
};

struct strmap {
	struct slot *slots;
	size_t cap;		/* power of two */
	size_t count;
};

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct slot *
find(const struct strmap *m, const char *key)
{
	size_t i = hash(key) & (m->cap - 1);

	while (m->slots[i].key && strcmp(m->slots[i].key, key) != 0)
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
		if (old[i].key)
			*find(m, old[i].key) = old[i];
	free(old);
	return 0;
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
		for (size_t i = 0; i < m->cap; i++)
			free(m->slots[i].key);
		free(m->slots);
	}
	free(m);
}

int
strmap_put(struct strmap *m, const char *key, int val)
{
	struct slot *s;

	if ((m->count + 1) * 2 > m->cap && resize(m, 2 * m->cap) < 0)
		return -1;
	s = find(m, key);
	if (!s->key) {
		if (!(s->key = strdup(key)))
			return -1;
		m->count++;
	}
	s->val = val;
	return 0;
}

int
strmap_get(const struct strmap *m, const char *key, int *val)
{
	const struct slot *s = find(m, key);

	if (!s->key)
		return 0;
	if (val)
		*val = s->val;
	return 1;
}
