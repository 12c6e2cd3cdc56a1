/* nameuses: see nameuses.h. */
#include <stdlib.h>

#include "nameuses.h"
#include "strmap.h"

struct nameuses {
	struct strmap *ix;	/* name -> its first use's index in list */
	struct name_use *v;	/* grouped by name, each group in order */
	size_t *start;		/* per group: where it starts in v */
	size_t ngroups;
};

struct nameuses *
nameuses_new(const Onnx__GraphProto *g, struct err *e)
{
	struct nameuses *u;
	size_t total = 0, *count = NULL, *fill = NULL;
	int *group = NULL, k, r, ng = 0;

	for (size_t i = 0; i < g->n_node; i++)
		total += g->node[i]->n_input;
	if ((u = calloc(1, sizeof *u)) == NULL ||
	    (u->ix = strmap_new()) == NULL ||
	    strmap_reserve(u->ix, total) < 0 ||
	    (u->v = malloc((total + 1) * sizeof *u->v)) == NULL ||
	    (group = malloc((total + 1) * sizeof *group)) == NULL ||
	    (count = calloc(total + 2, sizeof *count)) == NULL)
		goto nomem;
	/* Each use's group (a name's number, first seen first). */
	total = 0;
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_input; j++) {
			const char *name = g->node[i]->input[j];

			group[total] = -1;
			if (name == NULL || name[0] == '\0') {
				total++;
				continue;
			}
			if ((r = strmap_add(u->ix, name, ng, &k)) < 0)
				goto nomem;
			if (r == 0)
				k = ng++;
			group[total++] = k;
			count[k]++;
		}
	/* Groups laid out one after another, uses in order within each. */
	if ((u->start = malloc(((size_t)ng + 1) * sizeof *u->start)) == NULL ||
	    (fill = calloc((size_t)ng + 1, sizeof *fill)) == NULL)
		goto nomem;
	u->ngroups = (size_t)ng;
	u->start[0] = 0;
	for (int x = 0; x < ng; x++)
		u->start[x + 1] = u->start[x] + count[x];
	total = 0;
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_input; j++, total++) {
			if ((k = group[total]) < 0)
				continue;
			u->v[u->start[k] + fill[k]++] =
			    (struct name_use){ (int)i, (int)j };
		}
	free(group);
	free(count);
	free(fill);
	return u;
nomem:
	free(group);
	free(count);
	free(fill);
	nameuses_free(u);
	err_nomem(e);
	return NULL;
}

void
nameuses_free(struct nameuses *u)
{
	if (u == NULL)
		return;
	strmap_free(u->ix);
	free(u->v);
	free(u->start);
	free(u);
}

const struct name_use *
nameuses_of(const struct nameuses *u, const char *name, size_t *n)
{
	int k;

	*n = 0;
	if (!strmap_get(u->ix, name, &k))
		return NULL;
	*n = u->start[k + 1] - u->start[k];
	return &u->v[u->start[k]];
}
