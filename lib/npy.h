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

/* Parse an .npy image in memory into an empty tensor; name is for messages. */
int npy_read_mem(const void *buf, size_t len, const char *name,
    struct tensor *t, struct err *e);
/* Read an .npy file into an empty tensor. */
int npy_read(const char *path, struct tensor *t, struct err *e);
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
/* Decompress member i and parse it as .npy into an empty tensor. */
int npz_read(struct npz *z, int i, struct tensor *t, struct err *e);

#endif
