/*
 * infile: read a whole input file into memory, with a size limit. Path
 * "-" is stdin, named "<stdin>" in messages. The limit is checked before
 * reading a regular file and again as bytes arrive, so a pipe or a
 * growing file is bounded too. A named path that is neither a regular
 * file nor a pipe (a device such as /dev/zero, a socket) is refused before
 * anything is read; stdin is read whatever it is, with the limit applied
 * as it is read. Errors name the file: "PATH: is a directory", "PATH: not
 * a regular file", "PATH: larger than 4 GiB", or the system's reason.
 */
#ifndef ONNXQ_INFILE_H
#define ONNXQ_INFILE_H

#include <stddef.h>

#include "err.h"

/* Models: protobuf itself stops at 2 GiB; external data is read apart. */
#define INFILE_MODEL_MAX ((size_t)4 << 30)

/*
 * The contents of path into *buf (malloc'd, with a NUL after the last
 * byte so text can be parsed in place) and their length into *len.
 */
int infile_read(const char *path, size_t max, void **buf, size_t *len,
    struct err *e);
/*
 * The same for a data file: only a regular file is read. path is opened
 * without blocking, so a FIFO is refused ("PATH: not a regular file")
 * instead of waiting for a writer. Returns 1, e untouched, when path does
 * not exist.
 */
int infile_read_regular(const char *path, size_t max, void **buf,
    size_t *len, struct err *e);
/* How messages name path: "<stdin>" for "-". */
const char *infile_shown(const char *path);
/* The directory holding path ("." when it names none), malloc'd; NULL
 * when out of memory. */
char *infile_dir(const char *path);

#endif
