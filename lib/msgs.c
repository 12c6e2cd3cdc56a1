/* msgs: see msgs.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "msgs.h"
#include "util.h"

void
config_msgs_release(struct config_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
	m->dropped = 0;
}

int
config_msgs_add(struct config_msgs *m, char *s)
{
	if (s == NULL)
		return -1;
	if (m->n >= CONFIG_MAX_MSGS) {
		m->dropped++;
		free(s);
		return 0;
	}
	if (array_grow(&m->v, &m->cap, m->n, sizeof *m->v) < 0) {
		free(s);
		return -1;
	}
	m->v[m->n++] = s;
	return 0;
}

int
config_msgs_addf(struct config_msgs *m, const char *file,
    struct config_pos pos, const char *ctx, const char *f, ...)
{
	va_list ap;
	char *msg, *s;

	va_start(ap, f);
	msg = str_vfmt(f, ap);
	va_end(ap);
	if (msg == NULL)
		return -1;
	if (pos.line > 0)
		s = str_fmt("%s:%d:%d: %s%s%s", file, pos.line, pos.col,
		    ctx ? ctx : "", ctx && *ctx ? ": " : "", msg);
	else
		s = str_fmt("%s: %s%s%s", file, ctx ? ctx : "",
		    ctx && *ctx ? ": " : "", msg);
	free(msg);
	/* a value quoted in the message may hold line breaks (YAML folds) */
	if (s != NULL) {
		msg = s;
		s = str_printable(msg);
		free(msg);
	}
	return config_msgs_add(m, s);
}

/* The line and column of a message "NAME:LINE:COL: ..." (0 if none). */
static long
msg_key(const char *m, size_t namelen)
{
	char *end;
	long line, col;

	if (strlen(m) <= namelen || m[namelen] != ':')
		return 0;
	line = strtol(m + namelen + 1, &end, 10);
	if (*end != ':')
		return 0;
	col = strtol(end + 1, &end, 10);
	if (*end != ':')
		return 0;
	return line * 100000 + (col < 100000 ? col : 99999);
}

void
config_msgs_sort(struct config_msgs *m, size_t from, const char *file)
{
	size_t namelen = strlen(file);

	for (size_t i = from + 1; i < m->n; i++) {
		char *x = m->v[i];
		long kx = msg_key(x, namelen);
		size_t j = i;

		while (j > from && msg_key(m->v[j - 1], namelen) > kx) {
			m->v[j] = m->v[j - 1];
			j--;
		}
		m->v[j] = x;
	}
}

char *
config_printable(const char *s)
{
	return str_printable(s);
}
