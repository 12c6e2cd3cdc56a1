/* err: see err.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

/*
 * A message is one line: names from a file (a tensor "a\nb") must not
 * break it, nor send escape sequences to a terminal. Control bytes other
 * than TAB become '?'.
 */
static void
one_line(char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			*s = '?';
}

int
err_vset(struct err *e, const char *fmt, va_list ap)
{
	if (e) {
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		one_line(e->msg);
	}
	return -1;
}

int
err_set(struct err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_prefix(struct err *e, const char *fmt, ...)
{
	char ctx[ERR_MSG_MAX], joined[2 * ERR_MSG_MAX + 2];
	va_list ap;
	size_t n;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof ctx, fmt, ap);
	va_end(ap);
	one_line(ctx);
	/* Two layers that both name the file must not say it twice. */
	n = strlen(ctx);
	if (strncmp(e->msg, ctx, n) == 0 && e->msg[n] == ':' &&
	    e->msg[n + 1] == ' ')
		return -1;
	/* Join in a buffer big enough for both, then truncate to fit. */
	snprintf(joined, sizeof joined, "%s: %s", ctx, e->msg);
	memcpy(e->msg, joined, sizeof e->msg - 1);
	e->msg[sizeof e->msg - 1] = '\0';
	return -1;
}

int
err_errno(struct err *e, const char *fmt, ...)
{
	int saved = errno;
	char ctx[ERR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof ctx, fmt, ap);
	va_end(ap);
	return err_set(e, "%s: %s", ctx, strerror(saved));
}

int
err_nomem(struct err *e)
{
	return err_set(e, "out of memory");
}
