/* xsum: see xsum.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xsum.h"

#define LIMB_BITS 32
#define LIMB_MASK 0xffffffffLL
/* Each addition moves a limb by less than 2^32; int64 holds 2^31 of them. */
#define PENDING_MAX (1U << 30)

void
xsum_init(struct xsum *x)
{
	memset(x, 0, sizeof *x);
}

/* Carry so that every limb but the top one lies in [0, 2^32). */
static void
normalize(struct xsum *x)
{
	int64_t carry = 0;

	for (int i = 0; i < XSUM_LIMBS - 1; i++) {
		int64_t v = x->limb[i] + carry;
		int64_t low = v & LIMB_MASK;

		/* exact division: v - low is a multiple of 2^32 */
		carry = (v - low) / ((int64_t)1 << LIMB_BITS);
		x->limb[i] = low;
	}
	x->limb[XSUM_LIMBS - 1] += carry;
	x->pending = 0;
}

void
xsum_add(struct xsum *x, double v)
{
	uint64_t bits, m, hi;
	int exp, shift, i, o;
	int64_t w0, w1, w2;

	memcpy(&bits, &v, sizeof bits);
	exp = (int)((bits >> 52) & 0x7ff);
	m = bits & (((uint64_t)1 << 52) - 1);
	if (exp == 0x7ff) {
		if (m)
			x->nan = 1;
		else if (bits >> 63)
			x->neginf = 1;
		else
			x->posinf = 1;
		return;
	}
	if (exp == 0) {
		if (!m)
			return;
		shift = 0;
	} else {
		m |= (uint64_t)1 << 52;
		shift = exp - 1;
	}
	/* v = m * 2^(shift - 1074): spread m << (shift % 32) over 3 limbs */
	i = shift / LIMB_BITS;
	o = shift % LIMB_BITS;
	w0 = (int64_t)((m << o) & LIMB_MASK);
	hi = o ? m >> (LIMB_BITS - o) : m >> LIMB_BITS;
	w1 = (int64_t)(hi & LIMB_MASK);
	w2 = (int64_t)(hi >> LIMB_BITS);
	if (bits >> 63) {
		x->limb[i] -= w0;
		x->limb[i + 1] -= w1;
		x->limb[i + 2] -= w2;
	} else {
		x->limb[i] += w0;
		x->limb[i + 1] += w1;
		x->limb[i + 2] += w2;
	}
	if (++x->pending >= PENDING_MAX)
		normalize(x);
}

void
xsum_add_xsum(struct xsum *dst, const struct xsum *src)
{
	struct xsum s = *src;

	normalize(&s);
	normalize(dst);
	for (int i = 0; i < XSUM_LIMBS; i++)
		dst->limb[i] += s.limb[i];
	dst->pending = 1;
	dst->posinf |= s.posinf;
	dst->neginf |= s.neginf;
	dst->nan |= s.nan;
}

/* NaN, +inf or -inf when special values decide the sum, else 0. */
static double
special(const struct xsum *x)
{
	if (x->nan || (x->posinf && x->neginf))
		return NAN;
	if (x->posinf)
		return INFINITY;
	if (x->neginf)
		return -INFINITY;
	return 0;
}

static int
is_special(const struct xsum *x)
{
	return x->nan || x->posinf || x->neginf;
}

/*
 * Normalize and make the limbs the magnitude of the sum; returns the sign
 * (-1, 0, 1).
 */
static int
magnitude(struct xsum *x)
{
	int sign = 0;

	normalize(x);
	if (x->limb[XSUM_LIMBS - 1] < 0)
		sign = -1;
	else {
		for (int i = XSUM_LIMBS - 1; i >= 0; i--)
			if (x->limb[i]) {
				sign = 1;
				break;
			}
	}
	if (sign < 0) {
		for (int i = 0; i < XSUM_LIMBS; i++)
			x->limb[i] = -x->limb[i];
		normalize(x);
	}
	return sign;
}

static int
bit_at(const struct xsum *x, int pos)
{
	return (int)((x->limb[pos / LIMB_BITS] >> (pos % LIMB_BITS)) & 1);
}

/* Bits [lo, lo + n) of a normalized non-negative accumulator, n <= 53. */
static uint64_t
bits_at(const struct xsum *x, int lo, int n)
{
	uint64_t r = 0;

	for (int k = n - 1; k >= 0; k--)
		r = (r << 1) | (uint64_t)bit_at(x, lo + k);
	return r;
}

/* Any bit set below pos? */
static int
sticky_below(const struct xsum *x, int pos)
{
	int i = pos / LIMB_BITS, o = pos % LIMB_BITS;

	for (int k = 0; k < i; k++)
		if (x->limb[k])
			return 1;
	return o && (x->limb[i] & (((int64_t)1 << o) - 1)) != 0;
}

double
xsum_round(const struct xsum *src)
{
	struct xsum x;
	int sign, top = -1, shift;
	uint64_t m;
	double r;

	if (is_special(src))
		return special(src);
	x = *src;
	if (!(sign = magnitude(&x)))
		return 0;
	for (int i = XSUM_LIMBS - 1; i >= 0 && top < 0; i--)
		if (x.limb[i])
			for (int b = LIMB_BITS - 1; b >= 0; b--)
				if ((x.limb[i] >> b) & 1) {
					top = i * LIMB_BITS + b;
					break;
				}
	if (top < 53) {
		/* a multiple of 2^-1074 below 2^-1021: exactly representable */
		r = ldexp((double)bits_at(&x, 0, top + 1), -1074);
	} else {
		shift = top - 52;
		m = bits_at(&x, shift, 53);
		if (bit_at(&x, shift - 1) && ((m & 1) || sticky_below(&x, shift - 1)))
			m++;
		r = ldexp((double)m, shift - 1074);
	}
	return sign < 0 ? -r : r;
}

int
xsum_is_zero(const struct xsum *src)
{
	struct xsum x = *src;

	return !is_special(src) && magnitude(&x) == 0;
}

/* Rank of the special state for ordering: -inf < finite < +inf < nan. */
static int
special_rank(const struct xsum *x)
{
	double s = special(x);

	if (isnan(s))
		return 3;
	if (s > 0)
		return 2;
	if (s < 0)
		return 0;
	return 1;
}

int
xsum_cmp(const struct xsum *a, const struct xsum *b)
{
	struct xsum d;
	int ra = special_rank(a), rb = special_rank(b);

	if (ra != rb || ra != 1)
		return ra - rb;
	d = *b;
	normalize(&d);
	for (int i = 0; i < XSUM_LIMBS; i++)
		d.limb[i] = -d.limb[i];
	xsum_add_xsum(&d, a);
	return magnitude(&d);
}

/* Shortest %.15g..%.17g that strtod reads back to v. */
static void
format_double(double v, char *buf, size_t size)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

char *
xsum_format(const struct xsum *src, char *buf)
{
	struct xsum x;
	size_t len = 0;
	double r;

	if (is_special(src)) {
		r = special(src);
		strcpy(buf, isnan(r) ? "nan" : r > 0 ? "inf" : "-inf");
		return buf;
	}
	x = *src;
	strcpy(buf, "0");
	while ((r = xsum_round(&x)) != 0) {
		if (isinf(r)) {
			/* beyond the double range: no finite expansion */
			strcpy(buf, r > 0 ? "inf" : "-inf");
			return buf;
		}
		if (len)
			buf[len++] = ':';
		format_double(r, buf + len, XSUM_TEXT_MAX - len);
		len += strlen(buf + len);
		xsum_add(&x, -r);
	}
	return buf;
}

int
xsum_parse(struct xsum *x, const char *s, struct err *e)
{
	const char *p = s;
	char *end;
	double v;

	xsum_init(x);
	for (;;) {
		if (*p == '\0' || *p == ':' || *p == ' ' || *p == '\t' ||
		    *p == '\n' || *p == '+')
			return err_set(e, "bad exact sum '%s'", s);
		errno = 0;
		v = strtod(p, &end);
		if (end == p || (*end != ':' && *end != '\0'))
			return err_set(e, "bad exact sum '%s'", s);
		if (errno == ERANGE && isinf(v))
			return err_set(e, "exact sum '%s': out of range", s);
		xsum_add(x, v);
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}
