/* model: see model.h. */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infile.h"
#include "model.h"
#include "outfile.h"
#include "sha256.h"
#include "util.h"

#define PROTO_MAX	((size_t)INT32_MAX)	/* protobuf's 2 GiB - 1 limit */
/*
 * protobuf-c unpacks nested messages recursively with a sizeable stack
 * frame per level, so a small hostile file could exhaust the stack. Real
 * models nest a few levels per subgraph; 200 allows about 60 subgraphs.
 */
#define WIRE_MAX_DEPTH	200
/* What protobuf-c may allocate per input byte before we call it hostile. */
#define WIRE_MAX_GROWTH	16
#define WIRE_MIN_BUDGET	((uint64_t)1 << 30)
#define EXT_MIN_DEFAULT	1024
#define EXT_ALIGN_BIG	4096	/* mmap-friendly offsets for big tensors */
#define EXT_ALIGN_SMALL	64

static const char *
shown_path(const char *path)
{
	return strcmp(path, "-") == 0 ? "stdin" : path;
}

static const char *
shown_out(const char *path)
{
	return strcmp(path, "-") == 0 ? "stdout" : path;
}

/* ---- reading files ---- */

static const char *
path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* ---- checking the wire format before protobuf-c sees it ---- */

static int
wire_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	uint64_t r = 0;
	int shift;

	for (shift = 0; *pos < len && shift < 64; shift += 7) {
		uint8_t b = p[(*pos)++];

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* Unpacked bytes per encoded byte of a packed scalar field, at most. */
static size_t
scalar_size(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return 1;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_UINT64:
		return 8;
	default:
		return 4;
	}
}

enum { WIRE_OK, WIRE_BAD, WIRE_DEEP };

/*
 * Walk the encoded message without recursion deeper than WIRE_MAX_DEPTH,
 * adding to *cost roughly what protobuf-c will allocate to unpack it.
 */
static int
wire_check(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *d,
    int depth, uint64_t *cost)
{
	const ProtobufCFieldDescriptor *f;
	uint64_t key, v;
	size_t pos = 0, start;
	int r;

	if (depth > WIRE_MAX_DEPTH)
		return WIRE_DEEP;
	*cost += d->sizeof_message + 48;
	while (pos < len) {
		if (wire_varint(p, len, &pos, &key) != 0 || (key >> 3) == 0 ||
		    (key >> 3) > 0x1fffffff)
			return WIRE_BAD;
		f = protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));
		start = pos;
		switch (key & 7) {
		case 0:
			if (wire_varint(p, len, &pos, &v) != 0)
				return WIRE_BAD;
			break;
		case 1:
			if (len - pos < 8)
				return WIRE_BAD;
			pos += 8;
			break;
		case 5:
			if (len - pos < 4)
				return WIRE_BAD;
			pos += 4;
			break;
		case 2:
			if (wire_varint(p, len, &pos, &v) != 0 || v > len - pos)
				return WIRE_BAD;
			start = pos;
			pos += (size_t)v;
			if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				*cost += 8;
				r = wire_check(p + start, (size_t)v, f->descriptor,
				    depth + 1, cost);
				if (r != WIRE_OK)
					return r;
				continue;
			}
			if (f != NULL && f->type != PROTOBUF_C_TYPE_STRING &&
			    f->type != PROTOBUF_C_TYPE_BYTES) {
				/* packed scalars: varints take at least a byte */
				*cost += v * scalar_size(f->type);
				continue;
			}
			break;
		default:
			return WIRE_BAD;	/* groups: not in ONNX */
		}
		/* strings, bytes, scalars and unknown fields: a copy plus bookkeeping */
		*cost += (pos - start) + 48;
	}
	return WIRE_OK;
}

/* ---- loading ---- */

/* buf unpacked; checked first as untrusted bytes unless own. */
static struct model *
load_mem(const void *buf, size_t len, const char *name, const char *dir,
    int own, struct err *e)
{
	struct model *m;
	uint64_t cost = 0, budget;
	int r = WIRE_OK;

	if (len > INFILE_MODEL_MAX) {
		err_set(e, "%s: larger than 4 GiB", shown_path(name));
		return NULL;
	}
	if (!own)
		r = wire_check(buf, len, &onnx__model_proto__descriptor, 1,
		    &cost);
	if (r == WIRE_DEEP) {
		err_set(e, "%s: not a valid ONNX model (messages nested deeper "
		    "than %d)", shown_path(name), WIRE_MAX_DEPTH);
		return NULL;
	}
	budget = (uint64_t)len * WIRE_MAX_GROWTH;
	if (budget < WIRE_MIN_BUDGET)
		budget = WIRE_MIN_BUDGET;
	if (r == WIRE_OK && cost > budget) {
		err_set(e, "%s: not a valid ONNX model (unpacking would take "
		    "%llu bytes of memory)", shown_path(name),
		    (unsigned long long)cost);
		return NULL;
	}
	if ((m = calloc(1, sizeof *m)) == NULL ||
	    (m->path = strdup(name)) == NULL ||
	    (dir != NULL && (m->dir = strdup(dir)) == NULL)) {
		err_nomem(e);
		model_free(m);
		return NULL;
	}
	if (r != WIRE_OK ||
	    (m->proto = onnx__model_proto__unpack(NULL, len, buf)) == NULL) {
		err_set(e, "%s: not a valid ONNX model (protobuf parse failed)",
		    shown_path(name));
		model_free(m);
		return NULL;
	}
	if (m->proto->graph == NULL) {
		err_set(e, "%s: not a valid ONNX model (no graph)",
		    shown_path(name));
		model_free(m);
		return NULL;
	}
	return m;
}

struct model *
model_load_mem(const void *buf, size_t len, const char *name,
    const char *dir, struct err *e)
{
	return load_mem(buf, len, name, dir, 0, e);
}

struct model *
model_unpack_own(const void *buf, size_t len, const char *name,
    const char *dir, struct err *e)
{
	return load_mem(buf, len, name, dir, 1, e);
}

struct model *
model_load(const char *path, struct err *e)
{
	return model_load_hashed(path, NULL, NULL, NULL, e);
}

/*
 * A regular file's bytes mapped (and read in at once), or NULL: the
 * unpacked model copies what it keeps, so the file need not be copied
 * into fresh memory first (page faults on it cost a quarter of rec's
 * load on a virtual machine). Anything else goes through infile_read.
 */
static void *
map_file(const char *path, size_t *n)
{
	struct stat st;
	void *p = NULL;
	int fd;

	if (strcmp(path, "-") == 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= INFILE_MODEL_MAX) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ,
		    MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (p == MAP_FAILED)
			p = NULL;
		*n = (size_t)st.st_size;
	}
	close(fd);
	return p;
}

struct model *
model_load_hashed(const char *path, char sha256[65], void **bytes,
    size_t *len, struct err *e)
{
	struct model *m;
	void *buf;
	size_t n;
	char *dir = NULL;
	int mapped = !bytes && (buf = map_file(path, &n)) != NULL;

	if (!mapped && infile_read(path, INFILE_MODEL_MAX, &buf, &n, e) < 0)
		return NULL;
	if (strcmp(path, "-") != 0 && !(dir = infile_dir(path))) {
		m = NULL;
		err_nomem(e);
	} else
		m = model_load_mem(buf, n, path, dir, e);
	free(dir);
	if (m && sha256)
		sha256_hex(buf, n, sha256);
	if (mapped)
		munmap(buf, n);
	else if (m && bytes) {
		*bytes = buf;
		*len = n;
	} else
		free(buf);
	return m;
}

void
model_free(struct model *m)
{
	if (m == NULL)
		return;
	if (m->proto)
		protobuf_c_message_free_unpacked(&m->proto->base, NULL);
	free(m->path);
	free(m->dir);
	free(m);
}

int
model_value_type(const Onnx__ValueInfoProto *vi, int *rank, int64_t *dims)
{
	const Onnx__TypeProto__Tensor *tt;

	*rank = -1;
	if (vi == NULL || !vi->type || vi->type->value_case !=
	    ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !(tt = vi->type->tensor_type))
		return DT_UNDEFINED;
	if (tt->shape && tt->shape->n_dim <= TENSOR_MAX_RANK) {
		*rank = (int)tt->shape->n_dim;
		for (size_t k = 0; k < tt->shape->n_dim; k++) {
			const Onnx__TensorShapeProto__Dimension *d =
			    tt->shape->dim[k];

			dims[k] = d->value_case ==
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
			    d->dim_value >= 0 ? d->dim_value : -1;
		}
	}
	return tt->has_elem_type ? tt->elem_type : DT_UNDEFINED;
}

int
model_opset(const struct model *m, const char *domain)
{
	size_t i;
	const char *d;
	int def = domain == NULL || *domain == '\0' ||
	    strcmp(domain, "ai.onnx") == 0;

	for (i = 0; i < m->proto->n_opset_import; i++) {
		Onnx__OperatorSetIdProto *op = m->proto->opset_import[i];

		d = op->domain ? op->domain : "";
		if (def ? (*d == '\0' || strcmp(d, "ai.onnx") == 0) :
		    strcmp(d, domain) == 0) {
			if (!op->has_version || op->version < 0)
				return 0;
			return op->version > INT_MAX ? INT_MAX : (int)op->version;
		}
	}
	return 0;
}

/* ---- tensors ---- */

static int
is_4bit(int dtype)
{
	return dtype == DT_INT4 || dtype == DT_UINT4;
}

/*
 * Bytes the tensor's elements take in raw_data / external data. Types
 * tensor.h cannot hold in memory still get a size when it is known, so
 * their external data can be checked and moved.
 */
static int
proto_nbytes(int dtype, int64_t nelem, uint64_t *bytes)
{
	size_t es;

	if (is_4bit(dtype)) {
		*bytes = ((uint64_t)nelem + 1) / 2;
		return 0;
	}
	if (dtype == DT_COMPLEX64)
		es = 8;
	else if (dtype == DT_COMPLEX128)
		es = 16;
	else if ((es = dtype_size(dtype)) == 0)
		return -1;
	*bytes = (uint64_t)nelem * es;
	return 0;
}

static int
dtype_error(int dtype, struct err *e)
{
	const char *name = dtype_name(dtype);

	if (dtype == DT_STRING)
		return err_set(e, "string tensors are not supported");
	if (name != NULL)
		return err_set(e, "%s tensors are not supported", name);
	return err_set(e, "unsupported data type %d", dtype);
}

/* "initializer NAME" when tp is one of the main graph's, else "tensor NAME". */
static void
tensor_label(const struct model *m, const Onnx__TensorProto *tp, char *buf,
    size_t size)
{
	char name[256];
	const char *kind = "tensor";
	size_t i;

	if (m != NULL && m->proto != NULL && m->proto->graph != NULL)
		for (i = 0; i < m->proto->graph->n_initializer; i++)
			if (m->proto->graph->initializer[i] == tp) {
				kind = "initializer";
				break;
			}
	str_clip(tp->name, name, sizeof name);
	snprintf(buf, size, "%s %s", kind, *name ? name : "(unnamed)");
}

static int
tensor_shape(const Onnx__TensorProto *tp, int *rank, int64_t *dims,
    int64_t *nelem, struct err *e)
{
	size_t i;

	if (tp->n_dims > TENSOR_MAX_RANK)
		return err_set(e, "rank %zu is more than %d", tp->n_dims,
		    TENSOR_MAX_RANK);
	for (i = 0; i < tp->n_dims; i++)
		dims[i] = tp->dims[i];
	*rank = (int)tp->n_dims;
	if ((*nelem = shape_nelem(*rank, dims, e)) < 0)
		return -1;
	return 0;
}

static int
host_is_le(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 1;
}

/* Reverse each element's bytes (little-endian file, big-endian host). */
static void
swap_elems(void *data, int64_t n, size_t es)
{
	uint8_t *p = data, tmp;
	int64_t i;
	size_t a, b;

	if (es < 2 || host_is_le())
		return;
	for (i = 0; i < n; i++, p += es)
		for (a = 0, b = es - 1; a < b; a++, b--) {
			tmp = p[a];
			p[a] = p[b];
			p[b] = tmp;
		}
}

static void
unpack_4bit(int dtype, const uint8_t *src, int64_t n, uint8_t *dst)
{
	int64_t i;
	uint8_t nib;

	for (i = 0; i < n; i++) {
		nib = (src[i / 2] >> ((i & 1) * 4)) & 0xf;
		if (dtype == DT_INT4 && (nib & 0x8))
			dst[i] = (uint8_t)(nib | 0xf0);
		else
			dst[i] = nib;
	}
}

static void
pack_4bit(const uint8_t *src, int64_t n, uint8_t *dst)
{
	int64_t i;

	for (i = 0; i < (n + 1) / 2; i++)
		dst[i] = src[2 * i] & 0xf;
	for (i = 1; i < n; i += 2)
		dst[i / 2] |= (uint8_t)((src[i] & 0xf) << 4);
}

/* After copying raw bytes into t->data: byte order and bool values. */
static void
fix_raw(struct tensor *t)
{
	int64_t i;
	uint8_t *b;

	swap_elems(t->data, t->nelem, dtype_size(t->dtype));
	if (t->dtype == DT_BOOL)
		for (i = 0, b = t->data; i < t->nelem; i++)
			b[i] = b[i] != 0;
}

static int
decode_raw(struct tensor *t, const uint8_t *p, size_t len, struct err *e)
{
	uint64_t need = 0;

	proto_nbytes(t->dtype, t->nelem, &need);
	if ((uint64_t)len != need)
		return err_set(e, "raw data has %zu bytes, %lld elements of "
		    "%s need %llu", len, (long long)t->nelem,
		    dtype_name(t->dtype), (unsigned long long)need);
	if (is_4bit(t->dtype)) {
		unpack_4bit(t->dtype, p, t->nelem, t->data);
		return 0;
	}
	if (len > 0)
		memcpy(t->data, p, len);
	fix_raw(t);
	return 0;
}

static int
count_check(size_t have, int64_t want, const char *field, struct err *e)
{
	if ((uint64_t)have != (uint64_t)want)
		return err_set(e, "%s has %zu values, shape needs %lld", field,
		    have, (long long)want);
	return 0;
}

/* Decode the typed repeated field that holds t's type. */
static int
decode_typed(const Onnx__TensorProto *tp, struct tensor *t, struct err *e)
{
	int64_t i, n = t->nelem;
	size_t es = dtype_size(t->dtype);
	uint8_t *packed;

	switch (t->dtype) {
	case DT_FLOAT:
		if (count_check(tp->n_float_data, n, "float_data", e))
			return -1;
		for (i = 0; i < n; i++)
			((float *)t->data)[i] = tp->float_data[i];
		return 0;
	case DT_DOUBLE:
		if (count_check(tp->n_double_data, n, "double_data", e))
			return -1;
		for (i = 0; i < n; i++)
			((double *)t->data)[i] = tp->double_data[i];
		return 0;
	case DT_INT64:
		if (count_check(tp->n_int64_data, n, "int64_data", e))
			return -1;
		for (i = 0; i < n; i++)
			((int64_t *)t->data)[i] = tp->int64_data[i];
		return 0;
	case DT_UINT32:
	case DT_UINT64:
		if (count_check(tp->n_uint64_data, n, "uint64_data", e))
			return -1;
		for (i = 0; i < n; i++)
			if (t->dtype == DT_UINT32)
				((uint32_t *)t->data)[i] =
				    (uint32_t)tp->uint64_data[i];
			else
				((uint64_t *)t->data)[i] = tp->uint64_data[i];
		return 0;
	}
	if (is_4bit(t->dtype)) {
		/* two elements per int32_data entry, low nibble first */
		if (count_check(tp->n_int32_data, (n + 1) / 2, "int32_data", e))
			return -1;
		if ((packed = malloc((size_t)(n + 1) / 2 + 1)) == NULL)
			return err_nomem(e);
		for (i = 0; i < (n + 1) / 2; i++)
			packed[i] = (uint8_t)tp->int32_data[i];
		unpack_4bit(t->dtype, packed, n, t->data);
		free(packed);
		return 0;
	}
	/* everything else narrower than 32 bits lives in int32_data */
	if (count_check(tp->n_int32_data, n, "int32_data", e))
		return -1;
	for (i = 0; i < n; i++) {
		int32_t v = tp->int32_data[i];

		switch (es) {
		case 1:
			((uint8_t *)t->data)[i] = t->dtype == DT_BOOL ?
			    v != 0 : (uint8_t)v;
			break;
		case 2:
			((uint16_t *)t->data)[i] = (uint16_t)v;
			break;
		case 4:
			((int32_t *)t->data)[i] = v;
			break;
		default:
			return dtype_error(t->dtype, e);
		}
	}
	return 0;
}

static int
is_external(const Onnx__TensorProto *tp)
{
	return tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* A non-negative decimal integer with no sign, spaces or overflow. */
static int
parse_u64(const char *s, uint64_t *v)
{
	uint64_t r = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || r > (UINT64_MAX - 9) / 10)
			return -1;
		r = r * 10 + (uint64_t)(*s - '0');
	}
	if (r > INT64_MAX)
		return -1;
	*v = r;
	return 0;
}

/*
 * Open dir/loc without following any symlink along the way, refusing
 * absolute paths and ".." components. Errors say why, without context.
 */
static int
ext_open(const char *dir, const char *loc, struct err *e)
{
	struct stat st;
	char *copy, *comp, *next;
	int dfd, fd, last;

	if (*loc == '\0')
		return err_set(e, "empty location");
	if (*loc == '/')
		return err_set(e, "absolute path not allowed");
	if ((copy = strdup(loc)) == NULL)
		return err_nomem(e);
	for (comp = copy; comp != NULL; comp = next) {
		if ((next = strchr(comp, '/')) != NULL)
			*next++ = '\0';
		if (strcmp(comp, "..") == 0) {
			free(copy);
			return err_set(e, "'..' in path not allowed");
		}
	}
	free(copy);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return err_errno(e, "model directory");
	if ((copy = strdup(loc)) == NULL) {
		close(dfd);
		return err_nomem(e);
	}
	for (comp = copy; ; comp = next) {
		if ((next = strchr(comp, '/')) != NULL)
			*next++ = '\0';
		last = next == NULL || *next == '\0';
		if (*comp == '\0' || strcmp(comp, ".") == 0) {
			if (last) {
				err_set(e, "not a regular file");
				goto fail;
			}
			continue;
		}
		/* O_NONBLOCK: opening a FIFO must not wait for a writer */
		fd = openat(dfd, comp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		    (last ? O_NONBLOCK : O_DIRECTORY));
		if (fd < 0) {
			int saved = errno;

			if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				err_set(e, "symlink not allowed");
			else
				err_set(e, "%s", strerror(saved));
			goto fail;
		}
		close(dfd);
		dfd = fd;
		if (last)
			break;
	}
	free(copy);
	return dfd;
fail:
	free(copy);
	close(dfd);
	return -1;
}

/* Is path, once resolved, inside dir (also resolved)? */
static int
ext_inside(const char *dir, const char *loc)
{
	char *rdir, *full, *rfull;
	size_t n;
	int ok = 0;

	if ((full = malloc(strlen(dir) + strlen(loc) + 2)) == NULL)
		return 0;
	sprintf(full, "%s/%s", dir, loc);
	rdir = realpath(dir, NULL);
	rfull = realpath(full, NULL);
	if (rdir != NULL && rfull != NULL) {
		n = strlen(rdir);
		if (strcmp(rdir, "/") == 0)
			ok = 1;
		else
			ok = strncmp(rfull, rdir, n) == 0 && rfull[n] == '/';
	}
	free(full);
	free(rdir);
	free(rfull);
	return ok;
}

static int
pread_all(int fd, void *buf, size_t len, uint64_t off, struct err *e)
{
	uint8_t *p = buf;
	size_t chunk;
	ssize_t n;

	while (len > 0) {
		chunk = len > ((size_t)1 << 30) ? (size_t)1 << 30 : len;
		n = pread(fd, p, chunk, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_errno(e, "read");
		}
		if (n == 0)
			return err_set(e, "file shrank while reading");
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Map len bytes of fd at off, copy on write; the data's address. */
static void *
ext_map(int fd, uint64_t off, size_t len, struct model_map *map)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t start = pg > 0 ? off - off % (uint64_t)pg : off;
	void *p;

	map->len = (size_t)(off - start) + len;
	p = mmap(NULL, map->len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
	    (off_t)start);
	if (p == MAP_FAILED) {
		map->base = NULL;
		map->len = 0;
		return NULL;
	}
	map->base = p;
	return (char *)p + (off - start);
}

/*
 * Validate tp's external data and read `need` bytes of it into buf (or a
 * malloc'd buffer when *buf is NULL). need is the tensor's byte size; the
 * length key, when present, must match it. Errors are "external data
 * LOCATION: REASON". With map (and *buf NULL), the bytes at an offset
 * that is a multiple of align are mapped instead when they can be
 * (map->base not NULL then).
 */
static int
ext_read_map(const struct model *m, const Onnx__TensorProto *tp,
    uint64_t need, void **buf, struct model_map *map, uint64_t align,
    struct err *e)
{
	const char *loc = NULL;
	char shown[256];
	uint64_t offset = 0, length = need;
	int has_length = 0, fd = -1;
	struct stat st;
	void *p = NULL;
	size_t i;

	for (i = 0; i < tp->n_external_data; i++)
		if (tp->external_data[i]->key != NULL &&
		    strcmp(tp->external_data[i]->key, "location") == 0)
			loc = str_or_empty(tp->external_data[i]->value);
	if (loc == NULL)
		return err_set(e, "external data has no location");
	str_clip(loc, shown, sizeof shown);
	for (i = 0; i < tp->n_external_data; i++) {
		const char *k = tp->external_data[i]->key;
		const char *v = tp->external_data[i]->value;
		char bad[64];

		if (k != NULL && strcmp(k, "offset") == 0 &&
		    parse_u64(v, &offset) != 0)
			return err_set(e, "external data %s: bad offset '%s'",
			    shown, str_clip(v, bad, sizeof bad));
		if (k != NULL && strcmp(k, "length") == 0) {
			if (parse_u64(v, &length) != 0)
				return err_set(e, "external data %s: bad length "
				    "'%s'", shown, str_clip(v, bad, sizeof bad));
			has_length = 1;
		}
	}
	if (m == NULL || m->dir == NULL) {
		return err_set(e, "external data %s: not allowed for a model "
		    "read from %s", shown,
		    m == NULL ? "memory" : "stdin");
	}
	if ((fd = ext_open(m->dir, loc, e)) < 0)
		goto fail;
	if (fstat(fd, &st) != 0) {
		err_errno(e, "fstat");
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err_set(e, "not a regular file");
		goto fail;
	}
	if (st.st_nlink > 1) {
		/* a hard link could point anywhere on the file system */
		err_set(e, "file has %llu hard links",
		    (unsigned long long)st.st_nlink);
		goto fail;
	}
	if (!ext_inside(m->dir, loc)) {
		err_set(e, "resolves outside the model directory");
		goto fail;
	}
	if (has_length && length != need) {
		err_set(e, "length %llu does not match tensor size %llu bytes",
		    (unsigned long long)length, (unsigned long long)need);
		goto fail;
	}
	if (offset > (uint64_t)st.st_size ||
	    need > (uint64_t)st.st_size - offset) {
		err_set(e, "offset %llu + length %llu past end of file "
		    "(%lld bytes)", (unsigned long long)offset,
		    (unsigned long long)need, (long long)st.st_size);
		goto fail;
	}
	if (need > (uint64_t)TENSOR_MAX_BYTES) {
		err_set(e, "tensor of %llu bytes is too large",
		    (unsigned long long)need);
		goto fail;
	}
	if (map && *buf == NULL && need >= MODEL_MAP_MIN_BYTES && align &&
	    offset % align == 0 &&
	    (*buf = ext_map(fd, offset, (size_t)need, map)) != NULL) {
		close(fd);
		return 0;
	}
	if (*buf == NULL) {
		if ((p = malloc(need ? (size_t)need : 1)) == NULL) {
			err_nomem(e);
			goto fail;
		}
		*buf = p;
	}
	if (pread_all(fd, *buf, (size_t)need, offset, e) != 0)
		goto fail;
	close(fd);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (p != NULL) {
		free(p);
		*buf = NULL;
	}
	return err_prefix(e, "external data %s", shown);
}

static int
ext_read(const struct model *m, const Onnx__TensorProto *tp, uint64_t need,
    void **buf, struct err *e)
{
	return ext_read_map(m, tp, need, buf, NULL, 0, e);
}

/*
 * Whether the data at hand fills nelem elements, checked before the
 * tensor is allocated: a few bytes that claim a huge shape must fail
 * without allocating it. The messages are decode_raw's and decode_typed's;
 * ext_read checks external data.
 */
static int
data_fits(const Onnx__TensorProto *tp, int dtype, int64_t nelem,
    struct err *e)
{
	uint64_t need = 0;

	if (tp->has_raw_data) {
		proto_nbytes(dtype, nelem, &need);
		if ((uint64_t)tp->raw_data.len != need)
			return err_set(e, "raw data has %zu bytes, %lld elements "
			    "of %s need %llu", tp->raw_data.len,
			    (long long)nelem, dtype_name(dtype),
			    (unsigned long long)need);
		return 0;
	}
	switch (dtype) {
	case DT_FLOAT:
		return count_check(tp->n_float_data, nelem, "float_data", e);
	case DT_DOUBLE:
		return count_check(tp->n_double_data, nelem, "double_data", e);
	case DT_INT64:
		return count_check(tp->n_int64_data, nelem, "int64_data", e);
	case DT_UINT32:
	case DT_UINT64:
		return count_check(tp->n_uint64_data, nelem, "uint64_data", e);
	}
	if (is_4bit(dtype))
		return count_check(tp->n_int32_data, nelem / 2 + nelem % 2,
		    "int32_data", e);
	return count_check(tp->n_int32_data, nelem, "int32_data", e);
}

/* map: see model_tensor_map; NULL to read. */
static int
tensor_read(const struct model *m, const Onnx__TensorProto *tp,
    struct tensor *t, struct model_map *map, struct err *e)
{
	int64_t dims[TENSOR_MAX_RANK], nelem;
	int rank, dtype;
	uint64_t need = 0;
	void *buf;

	dtype = tp->has_data_type ? tp->data_type : DT_UNDEFINED;
	if (dtype == DT_UNDEFINED)
		return err_set(e, "no data type");
	if (dtype_size(dtype) == 0)
		return dtype_error(dtype, e);
	if (tp->segment != NULL)
		return err_set(e, "segmented tensors are not supported");
	if (tensor_shape(tp, &rank, dims, &nelem, e) != 0)
		return -1;
	if (is_external(tp)) {
		/* read (checked) into a buffer of its own, then the tensor */
		proto_nbytes(dtype, nelem, &need);
		buf = NULL;
		if (ext_read_map(m, tp, need, &buf, is_4bit(dtype) ||
		    dtype == DT_BOOL || !host_is_le() ? NULL : map,
		    (uint64_t)dtype_size(dtype), e) != 0)
			return -1;
		if (is_4bit(dtype)) {
			if (tensor_alloc(t, dtype, rank, dims, e) != 0) {
				free(buf);
				return -1;
			}
			unpack_4bit(dtype, buf, nelem, t->data);
			free(buf);
			return 0;
		}
		/* need is nelem whole elements: buf becomes the data */
		memset(t, 0, sizeof *t);
		t->dtype = dtype;
		t->rank = rank;
		memcpy(t->dims, dims, sizeof dims);
		t->nelem = nelem;
		t->data = buf;
		fix_raw(t);
		return 0;
	}
	if (data_fits(tp, dtype, nelem, e) != 0)
		return -1;
	if (map && tp->has_raw_data && !is_4bit(dtype) && dtype != DT_BOOL &&
	    host_is_le() && tp->raw_data.len >= MODEL_MAP_MIN_BYTES &&
	    (uintptr_t)tp->raw_data.data % dtype_size(dtype) == 0) {
		/* its bytes are its elements: lent, not copied */
		memset(t, 0, sizeof *t);
		t->dtype = dtype;
		t->rank = rank;
		memcpy(t->dims, dims, sizeof dims);
		t->nelem = nelem;
		t->data = tp->raw_data.data;
		map->lent = 1;
		return 0;
	}
	/* raw data fills every element: no need to zero them first */
	if ((tp->has_raw_data ? tensor_alloc_uninit : tensor_alloc)(t, dtype,
	    rank, dims, e) != 0)
		return -1;
	if (tp->has_raw_data) {
		if (decode_raw(t, tp->raw_data.data, tp->raw_data.len, e) != 0)
			goto fail;
		return 0;
	}
	if (decode_typed(tp, t, e) != 0)
		goto fail;
	return 0;
fail:
	tensor_release(t);
	return -1;
}

/* tensor_read with its errors naming the model and the tensor. */
static int
tensor_read_named(const struct model *m, const Onnx__TensorProto *tp,
    struct tensor *t, struct model_map *map, struct err *e)
{
	char label[300];

	if (tensor_read(m, tp, t, map, e) == 0)
		return 0;
	tensor_label(m, tp, label, sizeof label);
	if (m != NULL)
		return err_prefix(e, "%s: %s", shown_path(m->path), label);
	return err_prefix(e, "%s", label);
}

int
model_tensor_read(const struct model *m, const Onnx__TensorProto *tp,
    struct tensor *t, struct err *e)
{
	return tensor_read_named(m, tp, t, NULL, e);
}

int
model_tensor_map(const struct model *m, const Onnx__TensorProto *tp,
    struct tensor *t, struct model_map *map, struct err *e)
{
	memset(map, 0, sizeof *map);
	return tensor_read_named(m, tp, t, map, e);
}

void
model_map_release(struct model_map *map, struct tensor *t)
{
	if (map->base)
		munmap(map->base, map->len);
	if (map->base || map->lent)
		memset(t, 0, sizeof *t);
	else
		tensor_release(t);
	memset(map, 0, sizeof *map);
}

void
model_map_drop_pages(const struct model_map *map)
{
	if (map->base)
		(void)madvise(map->base, map->len, MADV_DONTNEED);
}

/* t's elements as raw_data bytes (malloc'd). */
static int
encode_raw(const struct tensor *t, uint8_t **out, size_t *len, struct err *e)
{
	uint64_t n;
	uint8_t *p;

	if (proto_nbytes(t->dtype, t->nelem, &n) != 0 || dtype_size(t->dtype) == 0)
		return dtype_error(t->dtype, e);
	if ((p = malloc(n ? (size_t)n : 1)) == NULL)
		return err_nomem(e);
	if (is_4bit(t->dtype))
		pack_4bit(t->data, t->nelem, p);
	else if (n > 0) {
		memcpy(p, t->data, (size_t)n);
		swap_elems(p, t->nelem, dtype_size(t->dtype));
	}
	*out = p;
	*len = (size_t)n;
	return 0;
}

static void
free_external_data(Onnx__TensorProto *tp)
{
	size_t i;

	for (i = 0; i < tp->n_external_data; i++)
		protobuf_c_message_free_unpacked(&tp->external_data[i]->base,
		    NULL);
	free(tp->external_data);
	tp->external_data = NULL;
	tp->n_external_data = 0;
}

int
model_tensor_write(Onnx__TensorProto *tp, const struct tensor *t,
    struct err *e)
{
	uint8_t *raw;
	size_t len, i;
	int64_t *dims = NULL;

	if (t->rank < 0 || t->rank > TENSOR_MAX_RANK)
		return err_set(e, "bad rank %d", t->rank);
	if (encode_raw(t, &raw, &len, e) != 0)
		return -1;
	if (t->rank > 0 &&
	    (dims = malloc((size_t)t->rank * sizeof *dims)) == NULL) {
		free(raw);
		return err_nomem(e);
	}
	for (i = 0; i < (size_t)t->rank; i++)
		dims[i] = t->dims[i];
	free(tp->dims);
	tp->dims = dims;
	tp->n_dims = (size_t)t->rank;
	tp->has_data_type = 1;
	tp->data_type = t->dtype;
	if (tp->segment != NULL) {
		protobuf_c_message_free_unpacked(&tp->segment->base, NULL);
		tp->segment = NULL;
	}
	free(tp->float_data);
	tp->float_data = NULL;
	tp->n_float_data = 0;
	free(tp->int32_data);
	tp->int32_data = NULL;
	tp->n_int32_data = 0;
	for (i = 0; i < tp->n_string_data; i++)
		free(tp->string_data[i].data);
	free(tp->string_data);
	tp->string_data = NULL;
	tp->n_string_data = 0;
	free(tp->int64_data);
	tp->int64_data = NULL;
	tp->n_int64_data = 0;
	free(tp->double_data);
	tp->double_data = NULL;
	tp->n_double_data = 0;
	free(tp->uint64_data);
	tp->uint64_data = NULL;
	tp->n_uint64_data = 0;
	free_external_data(tp);
	tp->has_data_location = 0;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
	free(tp->raw_data.data);
	tp->has_raw_data = 1;
	tp->raw_data.data = raw;
	tp->raw_data.len = len;
	return 0;
}

/* ---- saving ---- */

struct tplist {
	Onnx__TensorProto **v;
	size_t n, cap;
};

/* Every TensorProto anywhere in msg, found through the descriptors. */
static int
collect_tensors(ProtobufCMessage *msg, struct tplist *l, int depth,
    struct err *e)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	ProtobufCMessage **arr, *sub;
	char *base = (char *)msg;
	unsigned i;
	size_t j, n;

	if (d == &onnx__tensor_proto__descriptor) {
		if (l->n == l->cap) {
			size_t ncap = l->cap ? l->cap * 2 : 64;
			Onnx__TensorProto **nv = realloc(l->v, ncap * sizeof *nv);

			if (nv == NULL)
				return err_nomem(e);
			l->v = nv;
			l->cap = ncap;
		}
		l->v[l->n++] = (Onnx__TensorProto *)msg;
		return 0;
	}
	if (depth > WIRE_MAX_DEPTH)
		return err_set(e, "messages nested deeper than %d",
		    WIRE_MAX_DEPTH);
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(size_t *)(base + f->quantifier_offset);
			arr = *(ProtobufCMessage ***)(base + f->offset);
			for (j = 0; j < n; j++)
				if (arr[j] != NULL &&
				    collect_tensors(arr[j], l, depth + 1, e) != 0)
					return -1;
			continue;
		}
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		sub = *(ProtobufCMessage **)(base + f->offset);
		if (sub != NULL && collect_tensors(sub, l, depth + 1, e) != 0)
			return -1;
	}
	return 0;
}

/* One tensor's way through model_save. */
struct save_item {
	Onnx__TensorProto *tp;
	Onnx__TensorProto saved;	/* restored after packing */
	uint8_t *payload;		/* owned: external input or converted */
	size_t len;
	int was_external, to_external, swapped;
	uint64_t offset;
	char offs[24], lens[24];
	Onnx__StringStringEntryProto ent[3];
	Onnx__StringStringEntryProto *entp[3];
};

struct file_buffer {
	ProtobufCBuffer base;
	FILE *fp;
	int failed;
};

static void
file_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct file_buffer *fb = (struct file_buffer *)b;

	if (!fb->failed && len > 0 && fwrite(data, 1, len, fb->fp) != len)
		fb->failed = 1;
}

/*
 * The bytes a tensor would have as raw data, or NULL when it stays inline
 * (strings, unknown types, malformed typed fields: left as they are).
 */
static const uint8_t *
item_bytes(const struct model *m, struct save_item *it, size_t *len)
{
	struct tensor t = { 0 };
	struct err e;
	Onnx__TensorProto *tp = it->tp;

	if (it->was_external || it->payload != NULL) {
		*len = it->len;
		return it->payload;
	}
	if (tp->has_raw_data) {
		*len = tp->raw_data.len;
		return tp->raw_data.data;
	}
	/* typed fields: convert when we can, else leave the tensor inline */
	if (!tp->has_data_type || dtype_size(tp->data_type) == 0 ||
	    tp->segment != NULL)
		return NULL;
	if (tensor_read(m, tp, &t, NULL, &e) != 0)
		return NULL;
	if (encode_raw(&t, &it->payload, &it->len, &e) != 0) {
		tensor_release(&t);
		return NULL;
	}
	tensor_release(&t);
	*len = it->len;
	return it->payload;
}

static int
write_padding(FILE *fp, uint64_t n)
{
	static const uint8_t zero[EXT_ALIGN_BIG];

	return fwrite(zero, 1, (size_t)n, fp) == n ? 0 : -1;
}

/*
 * Write the big tensors into a data file of a name of its own beside
 * path (outfile_open_unique: "m.onnx.k3J9aZ.data") and mark them
 * external; *ofp is left open for write_model to commit with the model.
 * A name of its own: the model, renamed into place last, is the one
 * thing that switches from the old pair to the new.
 */
static int
save_external(const struct model *m, struct save_item *items, size_t n,
    const char *path, size_t min, struct outfile **ofp, struct err *e)
{
	struct outfile *of;
	const uint8_t *bytes;
	uint64_t off = 0, pad, align;
	size_t i, len;
	FILE *fp;

	if ((of = outfile_open_unique(path, ".data", e)) == NULL)
		return -1;
	fp = outfile_fp(of);
	for (i = 0; i < n; i++) {
		struct save_item *it = &items[i];

		if ((bytes = item_bytes(m, it, &len)) == NULL || len < min)
			continue;
		align = len >= EXT_ALIGN_BIG ? EXT_ALIGN_BIG : EXT_ALIGN_SMALL;
		pad = (align - off % align) % align;
		if (write_padding(fp, pad) != 0 ||
		    (len > 0 && fwrite(bytes, 1, len, fp) != len)) {
			err_errno(e, "%s", outfile_name(of));
			outfile_abort(of);
			return -1;
		}
		it->to_external = 1;
		it->offset = off + pad;
		off += pad + len;
		it->len = len;
	}
	*ofp = of;
	return 0;
}

/* Is v a data file name this program gives the model base? */
static int
ours(const char *v, const char *base, size_t blen)
{
	/* as outfile_open_unique cuts BASE in BASE.XXXXXX.data */
	size_t cut = blen > 255 - 13 ? 255 - 13 : blen, vl;

	if (!v)
		return 0;
	vl = strlen(v);
	if (vl == blen + 5 && strncmp(v, base, blen) == 0 &&
	    strcmp(v + blen, ".data") == 0)
		return 1;
	return vl == cut + 12 && strncmp(v, base, cut) == 0 &&
	    v[cut] == '.' && strcmp(v + cut + 7, ".data") == 0 &&
	    !strchr(v, '/');
}

/*
 * The external data files the model now at path uses that this program
 * writes ("BASE.data", "BASE.XXXXXX.data" beside it): removed once a new
 * model has replaced it. Best effort: nothing when it cannot be read.
 */
static void
old_data_files(const char *path, char ***files, size_t *nfiles)
{
	struct tplist l = { 0 };
	Onnx__ModelProto *mp;
	struct err e;
	void *buf;
	size_t len, cap = 0, blen = strlen(path_base(path));
	char *dir;

	*files = NULL;
	*nfiles = 0;
	if (strcmp(path, "-") == 0 || access(path, F_OK) != 0 ||
	    infile_read_regular(path, INFILE_MODEL_MAX, &buf, &len, &e) != 0)
		return;
	mp = onnx__model_proto__unpack(NULL, len, buf);
	free(buf);
	if (mp == NULL || (dir = infile_dir(path)) == NULL) {
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return;
	}
	if (collect_tensors(&mp->base, &l, 0, &e) == 0)
		for (size_t i = 0; i < l.n; i++)
			for (size_t k = 0; k < l.v[i]->n_external_data; k++) {
				const Onnx__StringStringEntryProto *kv =
				    l.v[i]->external_data[k];
				const char *v = kv->value;
				char *f;

				if (!kv->key || strcmp(kv->key, "location") ||
				    !ours(v, path_base(path), blen))
					continue;
				if (*nfiles == cap) {
					char **nf = realloc(*files, (cap * 2 + 4) *
					    sizeof **files);

					if (!nf)
						goto done;
					*files = nf;
					cap = cap * 2 + 4;
				}
				if ((f = malloc(strlen(dir) + strlen(v) + 2))) {
					sprintf(f, "%s/%s", dir, v);
					(*files)[(*nfiles)++] = f;
				}
			}
done:
	free(l.v);
	free(dir);
	onnx__model_proto__free_unpacked(mp, NULL);
}

/* Put the tensor in the form it is saved in; undone by restore. */
static void
item_swap(struct save_item *it, char *location)
{
	Onnx__TensorProto *tp = it->tp;
	int k;

	it->saved = *tp;
	it->swapped = 1;
	if (it->to_external) {
		snprintf(it->offs, sizeof it->offs, "%llu",
		    (unsigned long long)it->offset);
		snprintf(it->lens, sizeof it->lens, "%llu",
		    (unsigned long long)it->len);
		for (k = 0; k < 3; k++) {
			Onnx__StringStringEntryProto init =
			    ONNX__STRING_STRING_ENTRY_PROTO__INIT;

			it->ent[k] = init;
			it->entp[k] = &it->ent[k];
		}
		it->ent[0].key = "location";
		it->ent[0].value = location;
		it->ent[1].key = "offset";
		it->ent[1].value = it->offs;
		it->ent[2].key = "length";
		it->ent[2].value = it->lens;
		tp->n_external_data = 3;
		tp->external_data = it->entp;
		tp->has_data_location = 1;
		tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
		tp->has_raw_data = 0;
		tp->raw_data.len = 0;
		tp->raw_data.data = NULL;
		tp->n_float_data = tp->n_int32_data = tp->n_int64_data = 0;
		tp->n_double_data = tp->n_uint64_data = 0;
		return;
	}
	/* was external, now inline; the same form onnx.load gives */
	tp->n_external_data = 0;
	tp->external_data = NULL;
	tp->has_data_location = 1;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
	tp->has_raw_data = 1;
	tp->raw_data.len = it->len;
	tp->raw_data.data = it->payload;
}

static int
write_model(struct model *m, const char *path, struct outfile *data,
    struct err *e)
{
	struct file_buffer fb;
	struct outfile *of;
	size_t size, nold = 0;
	char **old, *kept = NULL;
	int rc;

	size = protobuf_c_message_get_packed_size(&m->proto->base);
	if (size > PROTO_MAX) {
		outfile_abort(data);
		return err_set(e, "%s: model is %zu bytes, more than protobuf's "
		    "2 GiB limit", shown_out(path), size);
	}
	if ((of = outfile_open(path, e)) == NULL) {
		outfile_abort(data);
		return -1;
	}
	fb.base.append = file_append;
	fb.fp = outfile_fp(of);
	fb.failed = 0;
	protobuf_c_message_pack_to_buffer(&m->proto->base, &fb.base);
	if (fb.failed || ferror(fb.fp)) {
		err_errno(e, "%s", shown_out(path));
		outfile_abort(of);
		outfile_abort(data);
		return -1;
	}
	/* what the model it replaces used, read before it is replaced */
	old_data_files(path, &old, &nold);
	/* the commit releases data: keep its name for the comparison */
	if (data && (kept = strdup(outfile_name(data))) == NULL) {
		for (size_t i = 0; i < nold; i++)
			free(old[i]);
		free(old);
		outfile_abort(of);
		outfile_abort(data);
		return err_nomem(e);
	}
	rc = data ? outfile_commit_pair(of, data, e) : outfile_commit(of, e);
	for (size_t i = 0; i < nold; i++) {
		/* the new pair is in place: the old data has no model */
		if (rc == 0 && (!kept || strcmp(old[i], kept)))
			unlink(old[i]);
		free(old[i]);
	}
	free(old);
	free(kept);
	return rc;
}

int
model_save(struct model *m, const char *path,
    const struct model_save_opts *opts, struct err *e)
{
	struct tplist l = { 0 };
	struct save_item *items = NULL;
	struct outfile *data = NULL;
	char *location = NULL, label[300];
	uint64_t need = 0, extra = 0;
	size_t i, min, inline_max;
	int want_ext, too_big, rc = -1;

	if (collect_tensors(&m->proto->base, &l, 0, e) != 0)
		goto done;
	if (l.n > 0 && (items = calloc(l.n, sizeof *items)) == NULL) {
		err_nomem(e);
		goto done;
	}
	/* read what was external first: the output may replace its file */
	for (i = 0; i < l.n; i++) {
		Onnx__TensorProto *tp = l.v[i];
		int64_t dims[TENSOR_MAX_RANK], nelem;
		int rank, dt = tp->has_data_type ? tp->data_type : DT_UNDEFINED;
		void *buf = NULL;

		items[i].tp = tp;
		if (!is_external(tp))
			continue;
		items[i].was_external = 1;
		if (tensor_shape(tp, &rank, dims, &nelem, e) != 0 ||
		    (dt == DT_STRING || proto_nbytes(dt, nelem, &need) != 0 ?
		    dtype_error(dt, e) : ext_read(m, tp, need, &buf, e)) != 0) {
			tensor_label(m, tp, label, sizeof label);
			err_prefix(e, "%s: %s", shown_path(m->path), label);
			goto done;
		}
		items[i].payload = buf;
		items[i].len = (size_t)need;
		extra += need + 32;
	}
	want_ext = opts != NULL && opts->external_data;
	inline_max = opts != NULL && opts->inline_max_bytes ?
	    opts->inline_max_bytes : PROTO_MAX;
	too_big = protobuf_c_message_get_packed_size(&m->proto->base) +
	    extra > inline_max;
	min = opts != NULL && opts->external_min_bytes ?
	    opts->external_min_bytes : EXT_MIN_DEFAULT;
	if (want_ext || too_big) {
		/* too big: say why external data is needed, and the way out */
		if (strcmp(path, "-") == 0 && too_big) {
			err_set(e, "stdout: the model passes protobuf's 2 GiB "
			    "limit, so its tensors go to an external data "
			    "file, which standard output cannot carry: write "
			    "the model to a file instead (-o FILE)");
			goto done;
		}
		if (strcmp(path, "-") == 0) {
			err_set(e, "stdout: cannot write external data when "
			    "writing to standard output");
			goto done;
		}
		if (save_external(m, items, l.n, path, min, &data, e) != 0)
			goto done;
		location = (char *)path_base(outfile_name(data));
	}
	for (i = 0; i < l.n; i++)
		if (items[i].to_external || items[i].was_external)
			item_swap(&items[i], location);
	rc = write_model(m, path, data, e);
	data = NULL;
done:
	for (i = 0; items != NULL && i < l.n; i++) {
		if (items[i].swapped)
			*items[i].tp = items[i].saved;
		free(items[i].payload);
	}
	free(items);
	free(l.v);
	outfile_abort(data);
	return rc;
}

int
model_pack(const struct model *m, void **buf, size_t *len, struct err *e)
{
	size_t size;
	uint8_t *p;

	size = protobuf_c_message_get_packed_size(&m->proto->base);
	if (size > PROTO_MAX)
		return err_set(e, "%s: model is %zu bytes, more than protobuf's "
		    "2 GiB limit", shown_path(m->path), size);
	if ((p = malloc(size ? size : 1)) == NULL)
		return err_nomem(e);
	protobuf_c_message_pack(&m->proto->base, p);
	*buf = p;
	*len = size;
	return 0;
}

Onnx__ValueInfoProto *
model_value_info_new(const char *name, int elem_type, int rank,
    const int64_t *dims)
{
	Onnx__ValueInfoProto *vi = malloc(sizeof *vi);
	Onnx__TypeProto *type = malloc(sizeof *type);
	Onnx__TypeProto__Tensor *tt = malloc(sizeof *tt);
	Onnx__TensorShapeProto *shape = malloc(sizeof *shape);

	if (vi == NULL || type == NULL || tt == NULL || shape == NULL) {
		free(vi);
		free(type);
		free(tt);
		free(shape);
		return NULL;
	}
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(type);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(shape);
	vi->type = type;
	type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	type->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = elem_type;
	tt->shape = shape;
	shape->dim = calloc((size_t)(rank > 0 ? rank : 0) + 1,
	    sizeof *shape->dim);
	if ((vi->name = strdup(name)) == NULL || shape->dim == NULL)
		goto fail;
	for (int i = 0; i < rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = malloc(sizeof *d);

		if (d == NULL)
			goto fail;
		onnx__tensor_shape_proto__dimension__init(d);
		if (dims[i] >= 0) {
			d->value_case =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		}
		shape->dim[shape->n_dim++] = d;
	}
	return vi;
fail:
	protobuf_c_message_free_unpacked(&vi->base, NULL);
	return NULL;
}
