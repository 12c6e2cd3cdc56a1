/* numparse: see numparse.h. */
#include <float.h>
#include <string.h>

#include "numparse.h"

static const double pow10s[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

int
numparse_float(const char *s, float *v)
{
	uint64_t m = 0, bits;
	int neg = 0, digits = 0, sig = 0, k = 0, any = 0;
	double q;
	float f;

	if (*s == '-') {
		neg = 1;
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++, any = 1)
		if (sig || *s != '0') {
			if (++sig > 19)
				return 0;
			m = m * 10 + (uint64_t)(*s - '0');
		}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, any = 1) {
			k--;	/* a fraction digit, leading zero or not */
			if (sig || *s != '0') {
				if (++sig > 19)
					return 0;
				m = m * 10 + (uint64_t)(*s - '0');
			}
		}
	if (!any)
		return 0;
	if (*s == 'e' || *s == 'E') {
		int eneg = 0, e = 0;

		s++;
		if (*s == '-' || *s == '+')
			eneg = *s++ == '-';
		for (; *s >= '0' && *s <= '9'; s++) {
			if (++digits > 4)
				return 0;
			e = e * 10 + (*s - '0');
		}
		if (digits == 0)
			return 0;
		k += eneg ? -e : e;
	}
	if (*s != '\0')
		return 0;
	if (m == 0) {
		*v = neg ? -0.0f : 0.0f;
		return 1;
	}
	if (m > (uint64_t)1 << 53 || k < -22 || k > 22)
		return 0;
	q = k < 0 ? (double)m / pow10s[-k] : (double)m * pow10s[k];
	if (!(q >= FLT_MIN && q <= FLT_MAX))
		return 0;
	/* the 29 bits a float drops: exactly half of its last place? */
	memcpy(&bits, &q, sizeof bits);
	if ((bits & 0x1fffffff) == 0x10000000)
		return 0;
	f = (float)q;
	*v = neg ? -f : f;
	return 1;
}

int
numparse_uint(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;

	for (; *s >= '0' && *s <= '9'; s++) {
		if (++n > 19)
			return 0;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	if (n == 0 || *s != '\0')
		return 0;
	*v = x;
	return 1;
}
