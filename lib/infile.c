/*
 * infile: see infile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"

const char *
infile_shown(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* "4 GiB", "16 MiB", or bytes. */
static void
size_text(size_t n, char *buf, size_t len)
{
	if (n >= (size_t)1 << 30 && n % ((size_t)1 << 30) == 0)
		snprintf(buf, len, "%zu GiB", n >> 30);
	else if (n >= (size_t)1 << 20 && n % ((size_t)1 << 20) == 0)
		snprintf(buf, len, "%zu MiB", n >> 20);
	else
		snprintf(buf, len, "%zu bytes", n);
}

static int
too_large(const char *shown, size_t max, struct err *e)
{
	char t[32];

	size_text(max, t, sizeof t);
	return err_set(e, "%s: larger than %s", shown, t);
}

static int
read_all(int fd, const char *shown, size_t max, size_t hint, char **bufp,
    size_t *lenp, struct err *e)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (len == cap) {
			/* one byte past max, so that "more" can be seen */
			size_t c = cap ? 2 * cap : hint > 65536 ? hint + 1 : 65536;

			if (c > max + 1)
				c = max + 1;
			if (len == c) {
				free(buf);
				return too_large(shown, max, e);
			}
			/* and one more for the NUL */
			if (!(nb = realloc(buf, c + 1))) {
				free(buf);
				return err_set(e, "%s: out of memory", shown);
			}
			buf = nb;
			cap = c;
		}
		n = read(fd, buf + len, cap - len < (size_t)1 << 30 ?
		    cap - len : (size_t)1 << 30);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return err_errno(e, "%s", shown);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		free(buf);
		return too_large(shown, max, e);
	}
	if (!buf && !(buf = malloc(1)))
		return err_set(e, "%s: out of memory", shown);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* What read_fd accepts besides regular files. */
enum accept { ACCEPT_ANY, ACCEPT_PIPE, ACCEPT_REGULAR };

/* Read fd into *buf, refusing from its stat what it does not accept. */
static int
read_fd(int fd, const char *shown, enum accept acc, size_t max,
    void **buf, size_t *len, struct err *e)
{
	struct stat sb, *st = fstat(fd, &sb) == 0 ? &sb : NULL;
	size_t hint = 0;
	char *b = NULL;

	if (!st && acc != ACCEPT_ANY)
		return err_errno(e, "%s", shown);
	if (st) {
		if (S_ISDIR(st->st_mode))
			return err_set(e, "%s: is a directory", shown);
		if (!S_ISREG(st->st_mode) && (acc == ACCEPT_REGULAR ||
		    (acc == ACCEPT_PIPE && !S_ISFIFO(st->st_mode))))
			return err_set(e, "%s: not a regular file", shown);
		if (S_ISREG(st->st_mode) && st->st_size > 0) {
			if ((unsigned long long)st->st_size > max)
				return too_large(shown, max, e);
			hint = (size_t)st->st_size;
		}
	}
	if (read_all(fd, shown, max, hint, &b, len, e) < 0)
		return -1;
	*buf = b;
	return 0;
}

int
infile_read(const char *path, size_t max, void **buf, size_t *len,
    struct err *e)
{
	int fd, r;

	/* stdin is what the caller was given: /dev/null, a tty too */
	if (strcmp(path, "-") == 0)
		return read_fd(STDIN_FILENO, infile_shown(path), ACCEPT_ANY, max,
		    buf, len, e);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return err_errno(e, "%s", path);
	r = read_fd(fd, path, ACCEPT_PIPE, max, buf, len, e);
	close(fd);
	return r;
}

int
infile_read_regular(const char *path, size_t max, void **buf, size_t *len,
    struct err *e)
{
	int fd, r;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		if (errno == ENOENT)
			return 1;
		return err_errno(e, "%s", path);
	}
	r = read_fd(fd, path, ACCEPT_REGULAR, max, buf, len, e);
	close(fd);
	return r;
}

char *
infile_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	if (!(d = malloc((size_t)(slash - path) + 1)))
		return NULL;
	memcpy(d, path, (size_t)(slash - path));
	d[slash - path] = '\0';
	return d;
}
