/*
 * fuzz_config: the YAML quantization recipe (config.h): config_load_mem,
 * then config_validate against a made-up stream in which a tensor's kind,
 * shape and channel axis follow from its name, so every validation path
 * is reachable. Every message must be one line.
 */
#include "fuzz.h"

#include "config.h"

static unsigned
hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void
tensor(void *arg, const char *name, struct config_target *t)
{
	unsigned h = hash(name);

	(void)arg;
	memset(t, 0, sizeof *t);
	t->kind = (int)(h % 4);		/* unknown, activation, weight, bias */
	t->rank = (int)(h / 4 % 5) - 1;
	for (int i = 0; i < t->rank; i++)
		t->dims[i] = (int64_t)(h >> (i * 3) & 7) + 1;
	t->axis = t->rank > 0 ? (int)(h / 32 % (unsigned)t->rank) : -1;
}

static int
node(void *arg, const char *name)
{
	(void)arg;
	return (int)(hash(name) % 3) - 1;
}

static int
consumes(void *arg, const char *n, const char *t)
{
	(void)arg;
	return (int)((hash(n) ^ hash(t)) % 3) - 1;
}

static void
check_msgs(const struct config_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (!m->v[i] || strpbrk(m->v[i], "\n\r")) {
			fprintf(stderr, "bad message: %s\n", m->v[i]);
			abort();
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_world w = { NULL, tensor, node, consumes, DT_UINT8,
	    DT_INT8 };
	struct config_msgs msgs = { 0 };
	struct config *c;
	struct err e = { "" };

	c = config_load_mem("fuzz.yaml", (const char *)data, size, &msgs, &e);
	check_msgs(&msgs);
	if (!c) {
		fuzz_check_err(&e);
		config_msgs_release(&msgs);
		return 0;
	}
	for (size_t i = 0; i < c->nt; i++)
		if (config_find(c, c->t[i].name) == NULL)
			abort();
	config_validate(c, &w, &msgs);
	check_msgs(&msgs);
	w.act_type = DT_INT16;
	w.weight_type = DT_UINT4;
	config_validate(c, &w, &msgs);
	check_msgs(&msgs);
	config_msgs_release(&msgs);
	config_free(c);
	return 0;
}
