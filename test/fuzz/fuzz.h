/*
 * fuzz.h: what the fuzz targets in test/fuzz share. Test-only code, one
 * header included by each target (its functions are static inline).
 *
 * A target defines LLVMFuzzerTestOneInput (and maybe
 * LLVMFuzzerInitialize). It is linked either with libFuzzer (clang
 * -fsanitize=fuzzer: scripts/fuzz, make fuzz) or with standalone.c,
 * which runs it once on each file named (make check, on any compiler).
 */
#ifndef ONNXQ_FUZZ_H
#define ONNXQ_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "err.h"
#include "tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* /dev/null for writers whose output nobody reads; opened once. */
static inline FILE *
fuzz_devnull(void)
{
	static FILE *fp;

	if (!fp && !(fp = fopen("/dev/null", "w")))
		abort();
	return fp;
}

/*
 * The input as a file for the readers that want a path: a memory file,
 * named through /proc/self/fd. Close *fd when done.
 */
static inline const char *
fuzz_memfile(const uint8_t *data, size_t size, int *fd, char *path,
    size_t pathsize)
{
	size_t off = 0;
	ssize_t n;

	if ((*fd = memfd_create("fuzz", 0)) < 0)
		abort();
	while (off < size) {
		if ((n = write(*fd, data + off, size - off)) <= 0)
			abort();
		off += (size_t)n;
	}
	snprintf(path, pathsize, "/proc/self/fd/%d", *fd);
	return path;
}

/*
 * A failed call has said why, in one line of text: an empty message or
 * one with a line break (a name from the input copied raw) is a bug.
 * Clear e before the call.
 */
static inline void
fuzz_check_err(const struct err *e)
{
	if (e->msg[0] == '\0') {
		fprintf(stderr, "failed without a message\n");
		abort();
	}
	if (strpbrk(e->msg, "\n\r")) {
		fprintf(stderr, "error message spans lines: %s\n", e->msg);
		abort();
	}
}

/* A round trip gave back t: same type, shape and bytes (what: "array"). */
static inline void
fuzz_check_same(const struct tensor *back, const struct tensor *t,
    const char *what)
{
	if (back->dtype != t->dtype || !shape_equal(back, t) ||
	    memcmp(back->data, t->data, (size_t)t->nelem *
	    dtype_size(t->dtype)) != 0) {
		fprintf(stderr, "round trip changed the %s\n", what);
		abort();
	}
}

#endif
