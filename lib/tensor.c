/* tensor: see tensor.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tensor.h"

static const struct {
	int dtype;
	const char *name;
	size_t size;
} dtypes[] = {
	{ DT_FLOAT, "float", 4 },
	{ DT_UINT8, "uint8", 1 },
	{ DT_INT8, "int8", 1 },
	{ DT_UINT16, "uint16", 2 },
	{ DT_INT16, "int16", 2 },
	{ DT_INT32, "int32", 4 },
	{ DT_INT64, "int64", 8 },
	{ DT_STRING, "string", 0 },
	{ DT_BOOL, "bool", 1 },
	{ DT_FLOAT16, "float16", 2 },
	{ DT_DOUBLE, "double", 8 },
	{ DT_UINT32, "uint32", 4 },
	{ DT_UINT64, "uint64", 8 },
	{ DT_COMPLEX64, "complex64", 0 },
	{ DT_COMPLEX128, "complex128", 0 },
	{ DT_BFLOAT16, "bfloat16", 2 },
	{ DT_FLOAT8E4M3FN, "float8e4m3fn", 0 },
	{ DT_FLOAT8E4M3FNUZ, "float8e4m3fnuz", 0 },
	{ DT_FLOAT8E5M2, "float8e5m2", 0 },
	{ DT_FLOAT8E5M2FNUZ, "float8e5m2fnuz", 0 },
	{ DT_UINT4, "uint4", 1 },
	{ DT_INT4, "int4", 1 },
};

size_t
dtype_size(int dtype)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].dtype == dtype)
			return dtypes[i].size;
	return 0;
}

const char *
dtype_name(int dtype)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].dtype == dtype)
			return dtypes[i].name;
	return NULL;
}

int
dtype_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (strcmp(dtypes[i].name, name) == 0)
			return dtypes[i].dtype;
	return DT_UNDEFINED;
}

int
dtype_int_range(int dtype, int64_t *lo, int64_t *hi)
{
	int64_t l, h;

	switch (dtype) {
	case DT_BOOL:	l = 0; h = 1; break;
	case DT_UINT4:	l = 0; h = 15; break;
	case DT_INT4:	l = -8; h = 7; break;
	case DT_UINT8:	l = 0; h = UINT8_MAX; break;
	case DT_INT8:	l = INT8_MIN; h = INT8_MAX; break;
	case DT_UINT16:	l = 0; h = UINT16_MAX; break;
	case DT_INT16:	l = INT16_MIN; h = INT16_MAX; break;
	case DT_UINT32:	l = 0; h = UINT32_MAX; break;
	case DT_INT32:	l = INT32_MIN; h = INT32_MAX; break;
	case DT_INT64:	l = INT64_MIN; h = INT64_MAX; break;
	case DT_UINT64:	l = 0; h = INT64_MAX; break;	/* as far as int64 reaches */
	default:
		return -1;
	}
	if (lo)
		*lo = l;
	if (hi)
		*hi = h;
	return 0;
}

int
dtype_is_float(int dtype)
{
	return dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_FLOAT16 ||
	    dtype == DT_BFLOAT16;
}

int
tensor_as_bfloat16(struct tensor *t, int want)
{
	if (want != DT_BFLOAT16 || t->dtype != DT_UINT16)
		return 0;
	t->dtype = DT_BFLOAT16;
	return 1;
}

int64_t
shape_nelem(int rank, const int64_t *dims, struct err *e)
{
	int64_t n = 1;
	int zero = 0;

	if (rank < 0 || rank > TENSOR_MAX_RANK)
		return err_set(e, "rank %d is outside 0..%d", rank, TENSOR_MAX_RANK);
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return err_set(e, "negative dimension %lld",
			    (long long)dims[i]);
		if (dims[i] == 0)
			zero = 1;
	}
	if (zero)
		return 0;
	for (int i = 0; i < rank; i++) {
		if (n > INT64_MAX / dims[i])
			return err_set(e, "element count overflows");
		n *= dims[i];
	}
	return n;
}

static char *
shape_text(int rank, const int64_t *dims, int declared, char *buf,
    size_t size)
{
	size_t len = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (rank == 0) {
		snprintf(buf, size, "scalar");
		return buf;
	}
	for (int i = 0; i < rank && len < size; i++) {
		int w = declared && dims[i] < 0 ?
		    snprintf(buf + len, size - len, "%s?", i ? "x" : "") :
		    snprintf(buf + len, size - len, "%s%lld", i ? "x" : "",
		    (long long)dims[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return buf;
}

char *
shape_str(int rank, const int64_t *dims, char *buf, size_t size)
{
	return shape_text(rank, dims, 0, buf, size);
}

char *
shape_str_declared(int rank, const int64_t *dims, char *buf, size_t size)
{
	return shape_text(rank, dims, 1, buf, size);
}

int
shape_equal(const struct tensor *a, const struct tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

/*
 * The budget: process-wide, as the tensors it counts are. 0 for the limit
 * means not yet set. Atomic: kernels may allocate from OpenMP threads.
 */
static uint64_t mem_limit, mem_live;
/*
 * What the calling thread allocated less what it released, and its
 * highest value since tensor_mem_thread_mark(): what one thread's run
 * takes at the most (calibpool.h sizes its workers by it).
 */
static _Thread_local int64_t thread_live, thread_peak, thread_mark;

static void
thread_add(int64_t bytes)
{
	thread_live += bytes;
	if (thread_live > thread_peak)
		thread_peak = thread_live;
}

void
tensor_mem_thread_mark(void)
{
	thread_mark = thread_peak = thread_live;
}

uint64_t
tensor_mem_thread_peak(void)
{
	return thread_peak > thread_mark ?
	    (uint64_t)(thread_peak - thread_mark) : 0;
}

/* "512M" and friends; -1 when s is none of them. */
static int
parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long n;
	int shift = 0;

	if (strcasecmp(s, "none") == 0) {
		*v = UINT64_MAX;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || (shift && n > UINT64_MAX >> shift))
		return -1;
	*v = n == 0 ? UINT64_MAX : (uint64_t)n << shift;
	return 0;
}

static uint64_t
default_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return UINT64_MAX;
	return (uint64_t)pages * (uint64_t)size / 2;
}

int
tensor_mem_limit_init(uint64_t limit, struct err *e)
{
	const char *env = getenv(TENSOR_MEM_ENV);

	if (!limit && env && *env && parse_size(env, &limit) < 0) {
		char shown[64];

		snprintf(shown, sizeof shown, "%s", env);
		return err_set(e, "%s: bad size '%s' (bytes, or with K, M, G "
		    "or T; 0 or none for no limit)", TENSOR_MEM_ENV, shown);
	}
	if (!limit)
		limit = default_limit();
	__atomic_store_n(&mem_limit, limit, __ATOMIC_RELAXED);
	return 0;
}

uint64_t
tensor_mem_limit(void)
{
	uint64_t l = __atomic_load_n(&mem_limit, __ATOMIC_RELAXED);
	struct err e;

	if (l)
		return l;
	if (tensor_mem_limit_init(0, &e) < 0)
		__atomic_store_n(&mem_limit, default_limit(), __ATOMIC_RELAXED);
	return __atomic_load_n(&mem_limit, __ATOMIC_RELAXED);
}

uint64_t
tensor_mem_live(void)
{
	return __atomic_load_n(&mem_live, __ATOMIC_RELAXED);
}

/* Charge bytes to the budget, or refuse them (nothing charged). */
static int
mem_charge(uint64_t bytes, struct err *e)
{
	uint64_t limit = tensor_mem_limit();
	uint64_t live = __atomic_add_fetch(&mem_live, bytes, __ATOMIC_RELAXED);

	if (limit == UINT64_MAX || live <= limit) {
		thread_add((int64_t)bytes);
		return 0;
	}
	__atomic_sub_fetch(&mem_live, bytes, __ATOMIC_RELAXED);
	return err_set(e, "needs %llu bytes, over the memory limit of %llu "
	    "(%llu in use)", (unsigned long long)bytes,
	    (unsigned long long)limit, (unsigned long long)(live - bytes));
}

static int
alloc_as(struct tensor *t, int dtype, int rank, const int64_t *dims,
    int zeroed, struct err *e)
{
	size_t esize = dtype_size(dtype);
	int64_t n;
	char sbuf[256];

	memset(t, 0, sizeof *t);
	if (esize == 0)
		return err_set(e, "element type %s is not supported",
		    dtype_name(dtype) ? dtype_name(dtype) : "unknown");
	if ((n = shape_nelem(rank, dims, e)) < 0)
		return -1;
	if (n > TENSOR_MAX_BYTES / (int64_t)esize)
		return err_set(e, "tensor of shape %s (%s) is larger than %lld bytes",
		    shape_str(rank, dims, sbuf, sizeof sbuf), dtype_name(dtype),
		    (long long)TENSOR_MAX_BYTES);
	if (mem_charge((uint64_t)(n ? n : 1) * esize, e) < 0)
		return -1;
	/* calloc(0) may return NULL; always allocate at least one element. */
	t->data = zeroed ? calloc(n ? (size_t)n : 1, esize) :
	    malloc((n ? (size_t)n : 1) * esize);
	if (!t->data) {
		__atomic_sub_fetch(&mem_live, (uint64_t)(n ? n : 1) * esize,
		    __ATOMIC_RELAXED);
		thread_add(-(int64_t)((n ? n : 1) * esize));
		return err_nomem(e);
	}
	t->counted = (size_t)(n ? n : 1) * esize;
	t->dtype = dtype;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->nelem = n;
	return 0;
}

int
tensor_alloc(struct tensor *t, int dtype, int rank, const int64_t *dims,
    struct err *e)
{
	return alloc_as(t, dtype, rank, dims, 1, e);
}

int
tensor_alloc_uninit(struct tensor *t, int dtype, int rank,
    const int64_t *dims, struct err *e)
{
	return alloc_as(t, dtype, rank, dims, 0, e);
}

int
tensor_alloc_like(struct tensor *t, int dtype, const struct tensor *like,
    struct err *e)
{
	return alloc_as(t, dtype, like->rank, like->dims, 1, e);
}

int
tensor_alloc_like_uninit(struct tensor *t, int dtype,
    const struct tensor *like, struct err *e)
{
	return alloc_as(t, dtype, like->rank, like->dims, 0, e);
}

void
tensor_release(struct tensor *t)
{
	if (t->counted) {
		__atomic_sub_fetch(&mem_live, (uint64_t)t->counted,
		    __ATOMIC_RELAXED);
		thread_add(-(int64_t)t->counted);
	}
	free(t->data);
	memset(t, 0, sizeof *t);
}

void
tensor_release_n(struct tensor *t, size_t n)
{
	for (size_t i = 0; t != NULL && i < n; i++)
		tensor_release(&t[i]);
}

int
tensor_copy(struct tensor *dst, const struct tensor *src, struct err *e)
{
	if (tensor_alloc_uninit(dst, src->dtype, src->rank, src->dims, e) < 0)
		return -1;
	memcpy(dst->data, src->data, (size_t)src->nelem * dtype_size(src->dtype));
	return 0;
}

void
tensor_move(struct tensor *dst, struct tensor *src)
{
	if (dst == src)
		return;
	tensor_release(dst);
	*dst = *src;
	memset(src, 0, sizeof *src);
}

/* IEEE binary16 <-> binary32, round to nearest even, NaN kept quiet. */
float
f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	float f;

	if (exp == 0) {
		/* zero or subnormal: man * 2^-24 is exact in float */
		f = (float)man * 0x1p-24f;
		return sign ? -f : f;
	}
	if (exp == 31)
		bits = sign | 0x7f800000u | (man << 13);
	else
		bits = sign | ((exp + 112) << 23) | (man << 13);
	memcpy(&f, &bits, sizeof f);
	return f;
}

uint16_t
f32_to_f16(float f)
{
	uint32_t x, sign, man;
	int exp;

	memcpy(&x, &f, sizeof x);
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff);
	man = x & 0x7fffff;
	if (exp == 0xff)	/* inf or nan */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	exp -= 127 - 15;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		/* subnormal half (or zero): shift in the implicit bit */
		if (exp < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		int shift = 14 - exp;
		uint32_t half = 1u << (shift - 1);
		uint32_t rest = man & ((1u << shift) - 1);
		uint32_t h = man >> shift;
		if (rest > half || (rest == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = ((uint32_t)exp << 10) | (man >> 13);
	uint32_t rest = man & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
		h++;	/* may carry into the exponent, up to inf: correct */
	return (uint16_t)(sign | h);
}

float
bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, sizeof f);
	return f;
}

uint16_t
f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof x);
	if ((x & 0x7fffffff) > 0x7f800000)	/* nan: keep it quiet */
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

double
tensor_get(const struct tensor *t, int64_t i)
{
	const void *p = t->data;

	switch (t->dtype) {
	case DT_FLOAT:	return ((const float *)p)[i];
	case DT_DOUBLE:	return ((const double *)p)[i];
	case DT_FLOAT16:	return f16_to_f32(((const uint16_t *)p)[i]);
	case DT_BFLOAT16:	return bf16_to_f32(((const uint16_t *)p)[i]);
	case DT_INT4:
	case DT_INT8:	return ((const int8_t *)p)[i];
	case DT_UINT4:
	case DT_BOOL:
	case DT_UINT8:	return ((const uint8_t *)p)[i];
	case DT_INT16:	return ((const int16_t *)p)[i];
	case DT_UINT16:	return ((const uint16_t *)p)[i];
	case DT_INT32:	return ((const int32_t *)p)[i];
	case DT_UINT32:	return ((const uint32_t *)p)[i];
	case DT_INT64:	return (double)((const int64_t *)p)[i];
	case DT_UINT64:	return (double)((const uint64_t *)p)[i];
	}
	return NAN;
}

/* Round half to even and clamp to [lo, hi]; NaN becomes 0. */
static int64_t
to_int(double v, int64_t lo, int64_t hi)
{
	if (isnan(v))
		return 0;
	v = nearbyint(v);
	if (v <= (double)lo)
		return lo;
	if (v >= (double)hi)	/* for int64, (double)hi is 2^63: still saturates */
		return hi;
	return (int64_t)v;
}

void
tensor_set(struct tensor *t, int64_t i, double v)
{
	void *p = t->data;
	int64_t lo = 0, hi = 0;

	switch (t->dtype) {
	case DT_FLOAT:	((float *)p)[i] = (float)v; return;
	case DT_DOUBLE:	((double *)p)[i] = v; return;
	case DT_FLOAT16:	((uint16_t *)p)[i] = f32_to_f16((float)v); return;
	case DT_BFLOAT16:	((uint16_t *)p)[i] = f32_to_bf16((float)v); return;
	case DT_BOOL:	((uint8_t *)p)[i] = v != 0; return;
	}
	if (dtype_int_range(t->dtype, &lo, &hi) < 0)
		return;
	int64_t q = to_int(v, lo, hi);
	switch (t->dtype) {
	case DT_INT4:
	case DT_INT8:	((int8_t *)p)[i] = (int8_t)q; break;
	case DT_UINT4:
	case DT_UINT8:	((uint8_t *)p)[i] = (uint8_t)q; break;
	case DT_INT16:	((int16_t *)p)[i] = (int16_t)q; break;
	case DT_UINT16:	((uint16_t *)p)[i] = (uint16_t)q; break;
	case DT_INT32:	((int32_t *)p)[i] = (int32_t)q; break;
	case DT_UINT32:	((uint32_t *)p)[i] = (uint32_t)q; break;
	case DT_INT64:	((int64_t *)p)[i] = q; break;
	case DT_UINT64:	((uint64_t *)p)[i] = (uint64_t)q; break;
	}
}

void
tensor_to_float(const struct tensor *t, float *dst)
{
	if (t->dtype == DT_FLOAT) {
		memcpy(dst, t->data, (size_t)t->nelem * sizeof *dst);
		return;
	}
	for (int64_t i = 0; i < t->nelem; i++)
		dst[i] = (float)tensor_get(t, i);
}

/* (double)INT64_MAX rounds up to 2^63, so compare before converting. */
static int64_t
saturate_int64(double v)
{
	if (v >= 0x1p63)
		return INT64_MAX;
	if (v < -0x1p63)
		return INT64_MIN;
	return (int64_t)v;
}

/*
 * ONNX Cast: float -> integer truncates toward zero (C conversion; out of
 * range is undefined in the spec, we saturate), integer -> integer wraps
 * like a C cast of the two's complement value, anything -> bool is != 0.
 */
int
tensor_cast(struct tensor *dst, const struct tensor *src, int dtype,
    struct err *e)
{
	int64_t lo, hi;

	if (tensor_alloc_like_uninit(dst, dtype, src, e) < 0)
		return -1;
	if (src->dtype == dtype) {
		memcpy(dst->data, src->data, (size_t)src->nelem * dtype_size(dtype));
		return 0;
	}
	int src_int = dtype_int_range(src->dtype, NULL, NULL) == 0 &&
	    src->dtype != DT_BOOL;
	int dst_int = dtype_int_range(dtype, &lo, &hi) == 0 && dtype != DT_BOOL;
	for (int64_t i = 0; i < src->nelem; i++) {
		if (dst_int && src_int && src->dtype == DT_INT64) {
			/* int64 -> narrower integer: keep the low bits */
			int64_t v = ((const int64_t *)src->data)[i];
			switch (dtype) {
			case DT_INT8: ((int8_t *)dst->data)[i] = (int8_t)v; continue;
			case DT_UINT8: ((uint8_t *)dst->data)[i] = (uint8_t)v; continue;
			case DT_INT16: ((int16_t *)dst->data)[i] = (int16_t)v; continue;
			case DT_UINT16: ((uint16_t *)dst->data)[i] = (uint16_t)v; continue;
			case DT_INT32: ((int32_t *)dst->data)[i] = (int32_t)v; continue;
			case DT_UINT32: ((uint32_t *)dst->data)[i] = (uint32_t)v; continue;
			case DT_UINT64: ((uint64_t *)dst->data)[i] = (uint64_t)v; continue;
			}
		}
		double v = tensor_get(src, i);
		if (dst_int) {
			if (isnan(v))
				v = 0;
			v = trunc(v);
			if (v < (double)lo)
				v = (double)lo;
			if (v > (double)hi)
				v = (double)hi;
		}
		if (dtype == DT_INT64 && src->dtype == DT_UINT64)
			((int64_t *)dst->data)[i] =
			    (int64_t)((const uint64_t *)src->data)[i];
		else if (dtype == DT_INT64)
			((int64_t *)dst->data)[i] = saturate_int64(v);
		else
			tensor_set(dst, i, v);
	}
	return 0;
}
