/*
 * util: see util.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *
str_or_empty(const char *s)
{
	return s ? s : "";
}

int
array_grow(void *vp, size_t *cap, size_t n, size_t size)
{
	void **v = vp;
	size_t c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 16;
	while (c <= n)
		c *= 2;
	if (c > SIZE_MAX / size || (nv = realloc(*v, c * size)) == NULL)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

char *
str_vfmt(const char *fmt, va_list ap)
{
	va_list aq;
	char *s;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *
str_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = str_vfmt(fmt, ap);
	va_end(ap);
	return s;
}

char *
str_cat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);

	if (s != NULL) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb + 1);
	}
	return s;
}

char *
str_printable(const char *s)
{
	size_t n = 0;
	char *p, *out;

	for (const char *q = s; *q; q++)
		n += ((unsigned char)*q < 0x20 || *q == 0x7f) ? 3 : 1;
	if ((out = malloc(n + 1)) == NULL)
		return NULL;
	for (p = out; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			p += sprintf(p, "%%%02X", c);
		else
			*p++ = (char)c;
	}
	*p = '\0';
	return out;
}

const char *
str_clip(const char *s, char *buf, size_t size)
{
	size_t i;

	if (s == NULL)
		s = "";
	for (i = 0; s[i] != '\0' && i + 1 < size; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ?
		    '?' : s[i];
	buf[i] = '\0';
	if (s[i] != '\0' && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}
