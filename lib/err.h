/*
 * err: the error context the library fills instead of printing or exiting.
 *
 * Every library call that can fail takes a `struct err *` and, on failure,
 * returns -1 (or NULL) after writing one lowercase line into it, most
 * specific context first added last: err_set() writes the message and
 * err_prefix() prepends the caller's context, so a message reads
 * "model.onnx: node conv3: input 2: shape 1x3 does not broadcast".
 * Only cmd/ prints (`prog: message`) and chooses the exit status.
 * Messages stay on one line: control bytes in them (from names in the
 * input) are written as '?'.
 */
#ifndef ONNXQ_ERR_H
#define ONNXQ_ERR_H

#include <stdarg.h>

#define ERR_MSG_MAX 1024

struct err {
	char msg[ERR_MSG_MAX];	/* NUL-terminated; truncated if longer */
};

/* Replace the message; always returns -1 so callers can `return err_set(...)`. */
int err_set(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int err_vset(struct err *e, const char *fmt, va_list ap);
/*
 * Prepend "context: " to the message, unless it starts with that already
 * (two layers naming the same file); returns -1.
 */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* err_set with ": strerror(errno)" appended. */
int err_errno(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Out of memory is common enough to have its own helper. */
int err_nomem(struct err *e);

#endif
