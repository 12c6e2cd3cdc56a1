/*
 * tensor: a dense n-dimensional array of one ONNX element type.
 *
 * Element types use ONNX's TensorProto.DataType numbers, so a dtype read
 * from a model needs no translation. In memory every element takes whole
 * bytes: int4/uint4 are unpacked to one int8/uint8 per element (packing
 * happens only at the protobuf boundary), float16/bfloat16 stay as their
 * 16-bit patterns. Strings are not supported.
 *
 * A struct tensor owns `data` (malloc'd); tensor_release() frees it and
 * leaves an empty tensor. A zero-initialised struct tensor is empty and may
 * be released. Scalars have rank 0 and nelem 1.
 */
#ifndef ONNXQ_TENSOR_H
#define ONNXQ_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum dtype {
	DT_UNDEFINED = 0,
	DT_FLOAT = 1,
	DT_UINT8 = 2,
	DT_INT8 = 3,
	DT_UINT16 = 4,
	DT_INT16 = 5,
	DT_INT32 = 6,
	DT_INT64 = 7,
	DT_STRING = 8,
	DT_BOOL = 9,
	DT_FLOAT16 = 10,
	DT_DOUBLE = 11,
	DT_UINT32 = 12,
	DT_UINT64 = 13,
	DT_COMPLEX64 = 14,
	DT_COMPLEX128 = 15,
	DT_BFLOAT16 = 16,
	DT_FLOAT8E4M3FN = 17,
	DT_FLOAT8E4M3FNUZ = 18,
	DT_FLOAT8E5M2 = 19,
	DT_FLOAT8E5M2FNUZ = 20,
	DT_UINT4 = 21,
	DT_INT4 = 22,
};

/* Bounds that keep hostile models from exhausting memory. */
#define TENSOR_MAX_RANK 12
#define TENSOR_MAX_BYTES ((int64_t)8 << 30)	/* one tensor, 8 GiB */

struct tensor {
	int dtype;			/* enum dtype */
	int rank;
	int64_t dims[TENSOR_MAX_RANK];
	int64_t nelem;			/* product of dims; 1 for a scalar */
	void *data;			/* nelem * dtype_size(dtype) bytes, owned */
	size_t counted;			/* bytes charged to the memory budget */
};

/*
 * The memory budget: the bytes the process's live tensors may take
 * together. tensor_alloc* count what they allocate and tensor_release
 * gives it back; an allocation that would go over the limit is refused
 * before anything is allocated: "needs N bytes, over the memory limit of
 * M (L in use)" (the interpreter prefixes the node: "node add (Add): ").
 * One limit for the whole process, since tensors move freely between the
 * modules that make them; set by tensor_mem_limit_init().
 */
#define TENSOR_MEM_ENV "ONNXQ_MEM_LIMIT"
/*
 * Set the limit: limit if not 0, else $ONNXQ_MEM_LIMIT (bytes, or with a
 * suffix K, M, G or T for powers of 1024; "0" or "none": no limit), else
 * half the physical memory (sysconf). Fails, leaving the limit as it
 * was, on a bad ONNXQ_MEM_LIMIT. Without a call, the first allocation
 * sets it as for limit 0, a bad variable then meaning the default.
 */
int tensor_mem_limit_init(uint64_t limit, struct err *e);
/* The limit (UINT64_MAX when none) and the bytes live now. */
uint64_t tensor_mem_limit(void);
uint64_t tensor_mem_live(void);
/*
 * The most the calling thread's tensors took at once (what it allocated
 * less what it released) since it called tensor_mem_thread_mark():
 * one run's peak, when a thread runs it alone.
 */
void tensor_mem_thread_mark(void);
uint64_t tensor_mem_thread_peak(void);

/* Bytes one element takes in memory; 0 for unsupported types (string...). */
size_t dtype_size(int dtype);
/* "float", "uint8", ...; "dtype(N)" style names are not returned: NULL if unknown. */
const char *dtype_name(int dtype);
/* Inverse of dtype_name; DT_UNDEFINED if unknown. */
int dtype_from_name(const char *name);
/* Integer range of an integer type (int4: -8..7, bool: 0..1); -1 if not integer. */
int dtype_int_range(int dtype, int64_t *lo, int64_t *hi);
int dtype_is_float(int dtype);		/* float, double, float16, bfloat16 */

/*
 * Allocate t for the given type and shape; data is zero-filled. Fails
 * (without allocating) on negative dims, rank > TENSOR_MAX_RANK, element
 * counts that overflow, or more than TENSOR_MAX_BYTES.
 */
int tensor_alloc(struct tensor *t, int dtype, int rank, const int64_t *dims,
    struct err *e);
/* Same shape as `like`, possibly other type. */
int tensor_alloc_like(struct tensor *t, int dtype, const struct tensor *like,
    struct err *e);
/*
 * The same, data left as it was: for kernels that write every element
 * (zero-filling is an eighth of a convolutional network's inference time).
 * Sanitizer builds fill it with garbage, so a kernel that relies on zeros
 * fails the tests there (the Makefile's ASAN_OPTIONS).
 */
int tensor_alloc_uninit(struct tensor *t, int dtype, int rank,
    const int64_t *dims, struct err *e);
int tensor_alloc_like_uninit(struct tensor *t, int dtype,
    const struct tensor *like, struct err *e);
void tensor_release(struct tensor *t);
/* tensor_release on each of t[0..n); t may be NULL. */
void tensor_release_n(struct tensor *t, size_t n);
/* Deep copy into an empty dst. */
int tensor_copy(struct tensor *dst, const struct tensor *src, struct err *e);
/* Move src into dst (dst released first); src becomes empty. */
void tensor_move(struct tensor *dst, struct tensor *src);
/* Element count of a shape with overflow and limit checks; -1 on error. */
int64_t shape_nelem(int rank, const int64_t *dims, struct err *e);
/* "1x3x224x224" (rank 0: "scalar") into buf; returns buf. */
char *shape_str(int rank, const int64_t *dims, char *buf, size_t size);
/* The same for a model's declared shape: an unknown dimension is "?". */
char *shape_str_declared(int rank, const int64_t *dims, char *buf,
    size_t size);
int shape_equal(const struct tensor *a, const struct tensor *b);

/* Element i as double / from double (integers saturate and round half to even). */
double tensor_get(const struct tensor *t, int64_t i);
void tensor_set(struct tensor *t, int64_t i, double v);
/* Convert every element into dst (nelem floats). */
void tensor_to_float(const struct tensor *t, float *dst);
/* A new tensor of type dtype converted from src (ONNX Cast semantics). */
int tensor_cast(struct tensor *dst, const struct tensor *src, int dtype,
    struct err *e);

/*
 * numpy has no bfloat16, so ONNX 1.12's test data (and npy files) hold
 * bfloat16 tensors as uint16: the same bits. When want is DT_BFLOAT16 and
 * t is DT_UINT16, relabel t as bfloat16 and return 1; else 0.
 */
int tensor_as_bfloat16(struct tensor *t, int want);

/* IEEE half and bfloat16 conversions (round to nearest even). */
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

#endif
