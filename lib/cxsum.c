/* cxsum: see cxsum.h. */
#include <math.h>
#include <stdlib.h>

#include "cxsum.h"

void
cxsum_init(struct cxsum *x)
{
	x->n = 0;
	x->posinf = x->neginf = x->nan = 0;
	x->big = NULL;
}

void
cxsum_release(struct cxsum *x)
{
	free(x->big);
	cxsum_init(x);
}

/* Keep the special values apart, as struct xsum does. */
static int
add_special(struct cxsum *x, double v)
{
	if (isfinite(v))
		return 0;
	if (isnan(v))
		x->nan = 1;
	else if (v > 0)
		x->posinf = 1;
	else
		x->neginf = 1;
	return 1;
}

/* Move the value to the heap form, then add v there. */
static int
spill(struct cxsum *x, double v)
{
	struct xsum *b = malloc(sizeof *b);

	if (!b)
		return -1;
	xsum_init(b);
	for (int i = 0; i < x->n; i++)
		xsum_add(b, x->c[i]);
	xsum_add(b, v);
	x->big = b;
	x->n = 0;
	return 0;
}

int
cxsum_add(struct cxsum *x, double v)
{
	double out[CXSUM_INLINE + 1], q = v;
	int m = 0;

	if (add_special(x, v))
		return 0;
	if (x->big) {
		xsum_add(x->big, v);
		return 0;
	}
	if (v == 0)
		return 0;
	/*
	 * Shewchuk's grow-expansion: each two-sum splits q + c[i] into its
	 * rounded sum and the exact error, so the list's sum never changes.
	 */
	for (int i = 0; i < x->n; i++) {
		double a = q, b = x->c[i], s = a + b, bv = s - a;
		double err = (a - (s - bv)) + (b - bv);

		if (!isfinite(s))
			return spill(x, v);	/* two-sum is exact below overflow */
		if (err != 0)
			out[m++] = err;
		q = s;
	}
	if (q != 0)
		out[m++] = q;
	if (m > CXSUM_INLINE)
		return spill(x, v);
	for (int i = 0; i < m; i++)
		x->c[i] = out[i];
	x->n = (uint8_t)m;
	return 0;
}

int
cxsum_add_xsum(struct cxsum *x, const struct xsum *v)
{
	struct xsum rest;
	struct cxsum t = *x;
	double r;
	int k;

	x->posinf |= v->posinf;
	x->neginf |= v->neginf;
	x->nan |= v->nan;
	if (x->big) {
		xsum_add_xsum(x->big, v);
		return 0;
	}
	/* v's greedy expansion, a double at a time, while it stays short */
	rest = *v;
	rest.posinf = rest.neginf = rest.nan = 0;
	for (k = 0; k <= CXSUM_INLINE && (r = xsum_round(&rest)) != 0; k++) {
		if (isinf(r) || cxsum_add(&t, r) < 0 || t.big)
			break;
		xsum_add(&rest, -r);
	}
	if (xsum_is_zero(&rest)) {
		x->n = t.n;
		for (int i = 0; i < t.n; i++)
			x->c[i] = t.c[i];
		return 0;
	}
	free(t.big);
	if (!(x->big = malloc(sizeof *x->big)))
		return -1;
	xsum_init(x->big);
	for (int i = 0; i < x->n; i++)
		xsum_add(x->big, x->c[i]);
	x->n = 0;
	rest = *v;
	rest.posinf = rest.neginf = rest.nan = 0;
	xsum_add_xsum(x->big, &rest);
	return 0;
}

int
cxsum_add_cxsum(struct cxsum *x, const struct cxsum *v)
{
	x->posinf |= v->posinf;
	x->neginf |= v->neginf;
	x->nan |= v->nan;
	if (v->big)
		return cxsum_add_xsum(x, v->big);
	for (int i = 0; i < v->n; i++)
		if (cxsum_add(x, v->c[i]) < 0)
			return -1;
	return 0;
}

int
cxsum_set_xsum(struct cxsum *x, const struct xsum *v)
{
	cxsum_release(x);
	return cxsum_add_xsum(x, v);
}

void
cxsum_get(const struct cxsum *x, struct xsum *out)
{
	if (x->big)
		*out = *x->big;
	else {
		xsum_init(out);
		for (int i = 0; i < x->n; i++)
			xsum_add(out, x->c[i]);
	}
	out->posinf |= x->posinf;
	out->neginf |= x->neginf;
	out->nan |= x->nan;
}

double
cxsum_round(const struct cxsum *x)
{
	struct xsum t;

	/* one double (or none) is its own rounding */
	if (!x->big && x->n <= 1 && !x->posinf && !x->neginf && !x->nan)
		return x->n ? x->c[0] : 0;
	cxsum_get(x, &t);
	return xsum_round(&t);
}

int
cxsum_cmp(const struct cxsum *a, const struct cxsum *b)
{
	struct xsum ta, tb;

	cxsum_get(a, &ta);
	cxsum_get(b, &tb);
	return xsum_cmp(&ta, &tb);
}
