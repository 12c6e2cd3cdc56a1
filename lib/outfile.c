/*
 * outfile: see outfile.h. Temporaries are registered in a small table so a
 * signal handler can unlink them: the one piece of global state in the
 * library, because signals leave no other way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

#define MAX_OPEN 16
/* NAME_MAX of the usual file systems (ext4, xfs, btrfs, tmpfs) */
#define TMP_NAME_MAX 255

struct outfile {
	FILE *fp;
	char *path;		/* target; NULL for stdout */
	char *tmp;		/* temporary beside it */
	int slot;
	int direct;		/* writing straight to a non-regular file */
	int unique;		/* outfile_open_unique: tmp is the file itself */
};

static char *volatile open_tmps[MAX_OPEN];

static int
register_tmp(char *tmp)
{
	for (int i = 0; i < MAX_OPEN; i++)
		if (!open_tmps[i]) {
			open_tmps[i] = tmp;
			return i;
		}
	return -1;
}

struct outfile *
outfile_open(const char *path, struct err *e)
{
	struct outfile *o = calloc(1, sizeof *o);
	const char *slash, *base;
	struct stat st;
	size_t dirlen, blen;
	int fd;

	if (!o) {
		err_nomem(e);
		return NULL;
	}
	o->slot = -1;
	if (strcmp(path, "-") == 0) {
		o->fp = stdout;
		return o;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device or FIFO (/dev/null, a named pipe): renaming over it
		 * would replace it, so write to it directly. */
		if (!(o->fp = fopen(path, "w"))) {
			err_errno(e, "%s", path);
			free(o);
			return NULL;
		}
		o->direct = 1;
		return o;
	}
	slash = strrchr(path, '/');
	dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	base = slash ? slash + 1 : path;
	o->path = strdup(path);
	o->tmp = malloc(dirlen + strlen(base) + 16);
	if (!o->path || !o->tmp) {
		err_nomem(e);
		goto fail;
	}
	/* ".NAME.XXXXXX": cut NAME so that a legal long name still has one */
	blen = strlen(base);
	if (blen > TMP_NAME_MAX - 8)
		blen = TMP_NAME_MAX - 8;
	sprintf(o->tmp, "%.*s.%.*s.XXXXXX", (int)dirlen, path, (int)blen, base);
	/*
	 * Known to the signal handler before it exists: a signal that
	 * comes while mkstemp makes it must not leave it behind.
	 */
	o->slot = register_tmp(o->tmp);
	if ((fd = mkstemp(o->tmp)) < 0) {
		err_errno(e, "%s", path);
		if (o->slot >= 0)
			open_tmps[o->slot] = NULL;
		o->slot = -1;
		free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	/* mkstemp makes 0600; give the file the usual umask-governed mode. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	if (!(o->fp = fdopen(fd, "w"))) {
		err_errno(e, "%s", path);
		close(fd);
		goto fail;
	}
	return o;
fail:
	outfile_abort(o);
	return NULL;
}

FILE *
outfile_fp(struct outfile *o)
{
	return o->fp;
}

static void
forget(struct outfile *o)
{
	if (o->slot >= 0)
		open_tmps[o->slot] = NULL;
	free(o->tmp);
	free(o->path);
	free(o);
}

int
outfile_commit(struct outfile *o, struct err *e)
{
	int rc = 0;

	if (!o->path && !o->direct) {
		if (fflush(stdout) != 0 || ferror(stdout))
			rc = err_errno(e, "standard output");
		forget(o);
		return rc;
	}
	if (o->direct) {
		if (fflush(o->fp) != 0 || ferror(o->fp))
			rc = err_errno(e, "output");
		if (fclose(o->fp) != 0 && rc == 0)
			rc = err_errno(e, "output");
		forget(o);
		return rc;
	}
	if (fflush(o->fp) != 0 || ferror(o->fp) || fsync(fileno(o->fp)) < 0) {
		rc = err_errno(e, "%s", o->path);
		fclose(o->fp);
	} else if (fclose(o->fp) != 0) {
		rc = err_errno(e, "%s", o->path);
	} else if (rename(o->tmp, o->path) < 0) {
		rc = err_errno(e, "%s", o->path);
	}
	if (rc < 0)
		unlink(o->tmp);
	forget(o);
	return rc;
}

struct outfile *
outfile_open_unique(const char *path, const char *suffix, struct err *e)
{
	struct outfile *o = calloc(1, sizeof *o);
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	size_t blen = strlen(base), slen = strlen(suffix);
	int fd;

	if (!o || !(o->tmp = malloc(dirlen + blen + slen + 16))) {
		free(o);
		err_nomem(e);
		return NULL;
	}
	o->slot = -1;
	if (blen + 8 + slen > TMP_NAME_MAX)
		blen = TMP_NAME_MAX - 8 - slen;
	sprintf(o->tmp, "%.*s%.*s.XXXXXX%s", (int)dirlen, path, (int)blen,
	    base, suffix);
	o->slot = register_tmp(o->tmp);
	if ((fd = mkstemps(o->tmp, (int)slen)) < 0) {
		err_errno(e, "%s", path);
		forget(o);
		return NULL;
	}
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	if (!(o->fp = fdopen(fd, "w"))) {
		err_errno(e, "%s", o->tmp);
		close(fd);
		unlink(o->tmp);
		forget(o);
		return NULL;
	}
	o->unique = 1;
	return o;
}

const char *
outfile_name(const struct outfile *o)
{
	return o->unique ? o->tmp : o->path;
}

int
outfile_commit_pair(struct outfile *o, struct outfile *data, struct err *e)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	sigset_t hold, old;
	int rc = 0;

	if (fflush(data->fp) != 0 || ferror(data->fp) ||
	    fsync(fileno(data->fp)) < 0)
		rc = err_errno(e, "%s", data->tmp);
	if (fclose(data->fp) != 0 && rc == 0)
		rc = err_errno(e, "%s", data->tmp);
	data->fp = NULL;
	if (rc < 0) {
		outfile_abort(data);
		outfile_abort(o);
		return -1;
	}
	/* the model's rename and the data's release, as one for signals */
	sigemptyset(&hold);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(&hold, sigs[i]);
	sigprocmask(SIG_BLOCK, &hold, &old);
	if ((rc = outfile_commit(o, e)) < 0)
		unlink(data->tmp);
	forget(data);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void
outfile_abort(struct outfile *o)
{
	if (!o)
		return;
	if ((o->path || o->direct || o->unique) && o->fp)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	forget(o);
}

void
outfile_cleanup_all(void)
{
	for (int i = 0; i < MAX_OPEN; i++)
		if (open_tmps[i])
			unlink(open_tmps[i]);
}

static void
on_signal(int sig)
{
	outfile_cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

void
outfile_cleanup_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa, old;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		/*
		 * A signal ignored from the start stays ignored (nohup, a
		 * shell's background job), as it would without us; SIGPIPE
		 * is caught anyway, so a closed pipe downstream always ends
		 * the program quietly instead of as a write error.
		 */
		if (sigs[i] != SIGPIPE && sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}
