/*
 * npy: numpy's .npy array files, and reading the members of .npz archives.
 *
 * Reading accepts format versions 1.0, 2.0 and 3.0, little- or big-endian
 * data, C or Fortran order, and the dtypes that map onto ONNX element
 * types: b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 (f2 is float16; npy has no
 * bfloat16, int4 or float8). Writing produces version 1.0, C order,
 * little-endian, the header padded to 64 bytes as numpy does; bfloat16,
 * int4 and uint4 tensors are refused, since numpy would not read them
 * back as what they are.
 *
 * An .npz file is a zip archive of .npy members, stored or deflated;
 * zip64 records are understood, as numpy writes them.
 *
 * Every function fills `struct err` with a message naming the file (and
 * member) on failure. Tensors returned are owned by the caller.
 */
#ifndef ONNXQ_NPY_H
#define ONNXQ_NPY_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"
#include "tensor.h"

/*
 * A header as read, before any data: for a caller to refuse a tensor it
 * cannot use before the data is read or inflated (an .npz member of a
 * few MB may inflate to GBs). A check returns 0 to go on, or -1 with e
 * set to a message of its own, passed on as it is (not prefixed).
 */
struct npy_head {
	char descr[32];			/* as written: "<f4" */
	int dtype;
	int rank;
	int64_t dims[TENSOR_MAX_RANK];
	int64_t nelem;
	size_t data_offset;		/* bytes before the data */
};
typedef int npy_check_fn(const struct npy_head *h, void *ctx,
    struct err *e);

/* Parse an .npy image in memory into an empty tensor; name is for messages. */
int npy_read_mem(const void *buf, size_t len, const char *name,
    struct tensor *t, struct err *e);
/*
 * Read an .npy file into an empty tensor, its header first. Only a
 * regular file is read: a FIFO is refused without waiting for a writer.
 */
int npy_read(const char *path, struct tensor *t, struct err *e);
/* The same with a check (NULL: none); 1 when path does not exist. */
int npy_read_checked(const char *path, npy_check_fn *check, void *ctx,
    struct tensor *t, struct err *e);
/* Write t as .npy to fp (no flush or close). */
int npy_write_fp(FILE *fp, const struct tensor *t, struct err *e);
/* Write t to path atomically (temporary file renamed into place). */
int npy_write(const char *path, const struct tensor *t, struct err *e);
/* The npy type string for an ONNX dtype ("<f4"), NULL when npy has none. */
const char *npy_descr(int dtype);

struct npz;

/* Open an .npz and read its directory; NULL on error. */
struct npz *npz_open(const char *path, struct err *e);
void npz_close(struct npz *z);
int npz_count(const struct npz *z);
/* Member name as stored ("x.npy"). */
const char *npz_member(const struct npz *z, int i);
/* Index of the member with exactly this name, -1 if none. */
int npz_find(const struct npz *z, const char *member);
/*
 * Decompress member i and parse it as .npy into an empty tensor. The
 * header is inflated first; the data is inflated straight into the
 * tensor, never more than the header says, and its CRC checked last.
 */
int npz_read(struct npz *z, int i, struct tensor *t, struct err *e);
/* The same with a check of the header (NULL: none). */
int npz_read_checked(struct npz *z, int i, npy_check_fn *check, void *ctx,
    struct tensor *t, struct err *e);

#endif
