/* npy: numpy .npy files and .npz archives. See npy.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <fcntl.h>
#include <unistd.h>

#include <zlib.h>

#include "npy.h"
#include "outfile.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Real headers are a few hundred bytes; refuse absurd ones early. */
#define NPY_HEADER_MAX (1 << 20)

static const struct {
	char kind;
	int size;
	int dtype;
} npy_types[] = {
	{ 'b', 1, DT_BOOL },
	{ 'i', 1, DT_INT8 },
	{ 'u', 1, DT_UINT8 },
	{ 'i', 2, DT_INT16 },
	{ 'u', 2, DT_UINT16 },
	{ 'i', 4, DT_INT32 },
	{ 'u', 4, DT_UINT32 },
	{ 'i', 8, DT_INT64 },
	{ 'u', 8, DT_UINT64 },
	{ 'f', 2, DT_FLOAT16 },
	{ 'f', 4, DT_FLOAT },
	{ 'f', 8, DT_DOUBLE },
};

static int
host_is_le(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 1;
}

const char *
npy_descr(int dtype)
{
	switch (dtype) {
	case DT_BOOL:	return "|b1";
	case DT_INT8:	return "|i1";
	case DT_UINT8:	return "|u1";
	case DT_INT16:	return "<i2";
	case DT_UINT16:	return "<u2";
	case DT_INT32:	return "<i4";
	case DT_UINT32:	return "<u4";
	case DT_INT64:	return "<i8";
	case DT_UINT64:	return "<u8";
	case DT_FLOAT16:	return "<f2";
	case DT_FLOAT:	return "<f4";
	case DT_DOUBLE:	return "<f8";
	}
	return NULL;
}

static void
byteswap(void *data, int64_t n, size_t size)
{
	uint8_t *p = data;

	if (size < 2)
		return;
	for (int64_t i = 0; i < n; i++, p += size)
		for (size_t a = 0, b = size - 1; a < b; a++, b--) {
			uint8_t c = p[a];
			p[a] = p[b];
			p[b] = c;
		}
}

/* A cursor over the header's Python dict literal. */
struct hdr {
	const char *p, *end;
};

static void
hdr_ws(struct hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' ||
	    *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

static int
hdr_char(struct hdr *h, char c)
{
	hdr_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return 1;
	}
	return 0;
}

/* A quoted string (no escapes occur in npy headers) into buf. */
static int
hdr_str(struct hdr *h, char *buf, size_t size)
{
	char q;
	size_t n = 0;

	hdr_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return -1;
	q = *h->p++;
	while (h->p < h->end && *h->p != q) {
		/* no escapes, and no control bytes to carry into a message */
		if (n + 1 >= size || *h->p == '\\' ||
		    (unsigned char)*h->p < 0x20 || *h->p == 0x7f)
			return -1;
		buf[n++] = *h->p++;
	}
	if (h->p >= h->end)
		return -1;
	h->p++;
	buf[n] = '\0';
	return 0;
}

static int
hdr_word(struct hdr *h, const char *w)
{
	size_t n = strlen(w);

	hdr_ws(h);
	if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
		h->p += n;
		return 1;
	}
	return 0;
}

static int
hdr_shape(struct hdr *h, int *rank, int64_t *dims, struct err *e)
{
	*rank = 0;
	if (!hdr_char(h, '('))
		return err_set(e, "bad npy header: shape is not a tuple");
	for (;;) {
		int64_t v = 0;
		int digits = 0;

		if (hdr_char(h, ')'))
			return 0;
		hdr_ws(h);
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return err_set(e, "bad npy header: dimension too large");
			v = v * 10 + (*h->p++ - '0');
			digits++;
		}
		/* Python 2 era numpy wrote longs as "3L". */
		if (h->p < h->end && *h->p == 'L')
			h->p++;
		if (!digits)
			return err_set(e, "bad npy header: bad shape");
		if (*rank >= TENSOR_MAX_RANK)
			return err_set(e, "npy shape has more than %d dimensions",
			    TENSOR_MAX_RANK);
		dims[(*rank)++] = v;
		if (!hdr_char(h, ',')) {
			if (hdr_char(h, ')'))
				return 0;
			return err_set(e, "bad npy header: bad shape");
		}
	}
}

static int
parse_header(const char *text, size_t len, char *descr, size_t dsize,
    int *fortran, int *rank, int64_t *dims, struct err *e)
{
	struct hdr h = { text, text + len };
	int have_descr = 0, have_fortran = 0, have_shape = 0;
	char key[32];

	if (!hdr_char(&h, '{'))
		return err_set(e, "bad npy header: not a dict");
	for (;;) {
		if (hdr_char(&h, '}'))
			break;
		if (hdr_str(&h, key, sizeof key) < 0 || !hdr_char(&h, ':'))
			return err_set(e, "bad npy header: bad key");
		if (strcmp(key, "descr") == 0) {
			hdr_ws(&h);
			if (h.p < h.end && *h.p == '[')
				return err_set(e, "structured npy dtypes are not supported");
			if (hdr_str(&h, descr, dsize) < 0)
				return err_set(e, "bad npy header: bad descr");
			have_descr = 1;
		} else if (strcmp(key, "fortran_order") == 0) {
			if (hdr_word(&h, "True"))
				*fortran = 1;
			else if (hdr_word(&h, "False"))
				*fortran = 0;
			else
				return err_set(e, "bad npy header: bad fortran_order");
			have_fortran = 1;
		} else if (strcmp(key, "shape") == 0) {
			if (hdr_shape(&h, rank, dims, e) < 0)
				return -1;
			have_shape = 1;
		} else
			return err_set(e, "bad npy header: unknown key '%s'", key);
		if (!hdr_char(&h, ',')) {
			if (hdr_char(&h, '}'))
				break;
			return err_set(e, "bad npy header: expected ',' or '}'");
		}
	}
	if (!have_descr || !have_fortran || !have_shape)
		return err_set(e, "bad npy header: missing %s", !have_descr ?
		    "descr" : !have_fortran ? "fortran_order" : "shape");
	return 0;
}

/* Map "<f4" and friends to a dtype; *swap when the data needs byte swapping. */
static int
descr_dtype(const char *descr, int *swap)
{
	char order = descr[0], kind;
	char *end;
	long size;

	if (order != '<' && order != '>' && order != '|' && order != '=')
		return DT_UNDEFINED;
	kind = descr[1];
	if (kind == '\0')
		return DT_UNDEFINED;
	errno = 0;
	size = strtol(descr + 2, &end, 10);
	if (end == descr + 2 || *end != '\0' || errno)
		return DT_UNDEFINED;
	for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
		if (npy_types[i].kind == kind && npy_types[i].size == size) {
			int le = order == '<' || (order == '=' && host_is_le());
			*swap = size > 1 && order != '|' && le != host_is_le();
			return npy_types[i].dtype;
		}
	return DT_UNDEFINED;
}

/* Fortran (column-major) element order into C order. */
static int
fortran_to_c(struct tensor *t, struct err *e)
{
	size_t es = dtype_size(t->dtype);
	int64_t stride[TENSOR_MAX_RANK], idx[TENSOR_MAX_RANK] = { 0 };
	uint8_t *dst;
	const uint8_t *src = t->data;

	if (t->rank < 2 || t->nelem == 0)
		return 0;
	if (!(dst = malloc((size_t)t->nelem * es)))
		return err_nomem(e);
	stride[0] = 1;
	for (int k = 1; k < t->rank; k++)
		stride[k] = stride[k - 1] * t->dims[k - 1];
	for (int64_t i = 0; i < t->nelem; i++) {
		int64_t off = 0;

		for (int k = 0; k < t->rank; k++)
			off += idx[k] * stride[k];
		memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
		for (int k = t->rank - 1; k >= 0; k--) {
			if (++idx[k] < t->dims[k])
				break;
			idx[k] = 0;
		}
	}
	free(t->data);
	t->data = dst;
	return 0;
}

/*
 * Where an .npy image comes from: read(ctx, dst, n) gives its next n
 * bytes (0, or -1 with e set); size is its whole length.
 */
struct npy_src {
	int (*read)(void *ctx, void *dst, size_t n, struct err *e);
	void *ctx;
	uint64_t size;
};

/* The header into *h, read from src: the bytes before the data. */
static int
read_head(struct npy_src *src, struct npy_head *h, int *swap, int *fortran,
    struct err *e)
{
	uint8_t pre[12];
	char *text;
	size_t hlen, off, npre = src->size < 12 ? (size_t)src->size : 12;
	int r;

	if (src->size < 10 || src->read(src->ctx, pre, npre, e) < 0 ||
	    memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
		return src->size < 10 || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) ?
		    err_set(e, "not an npy file") : -1;
	if (pre[6] == 1) {
		hlen = pre[8] | (size_t)pre[9] << 8;
		off = 10;
	} else if (pre[6] == 2 || pre[6] == 3) {
		if (npre < 12)
			return err_set(e, "truncated npy header");
		hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
		    (size_t)pre[11] << 24;
		off = 12;
	} else
		return err_set(e, "npy format version %d.%d is not supported",
		    pre[6], pre[7]);
	if (hlen > NPY_HEADER_MAX || hlen > src->size - off)
		return err_set(e, "truncated npy header");
	/* the text, of which pre may hold the first bytes already */
	if (!(text = malloc(hlen + 1)))
		return err_nomem(e);
	memcpy(text, pre + off, npre - off < hlen ? npre - off : hlen);
	if (npre - off < hlen && src->read(src->ctx, text + (npre - off),
	    hlen - (npre - off), e) < 0) {
		free(text);
		return -1;
	}
	r = parse_header(text, hlen, h->descr, sizeof h->descr, fortran,
	    &h->rank, h->dims, e);
	free(text);
	if (r < 0)
		return -1;
	h->data_offset = off + hlen;
	if ((h->dtype = descr_dtype(h->descr, swap)) == DT_UNDEFINED)
		return err_set(e, "npy dtype %s is not supported", h->descr);
	/* the data must be there before the tensor is allocated */
	if ((h->nelem = shape_nelem(h->rank, h->dims, e)) < 0)
		return -1;
	return 0;
}

/*
 * Read an .npy image from src into an empty tensor: the header first,
 * then, when check (if any) accepts it and the data has the size it
 * says, the data straight into the tensor.
 */
static int
read_src(struct npy_src *src, npy_check_fn *check, void *ctx,
    struct tensor *t, struct err *e, int *checked)
{
	struct npy_head h;
	int swap = 0, fortran = 0;
	size_t need, es;
	uint64_t left;
	char sbuf[256];

	*checked = 0;
	if (read_head(src, &h, &swap, &fortran, e) < 0)
		return -1;
	es = dtype_size(h.dtype);
	left = src->size - h.data_offset;
	if (check && check(&h, ctx, e) < 0) {
		*checked = 1;
		return -1;
	}
	if ((uint64_t)h.nelem <= (uint64_t)TENSOR_MAX_BYTES / es &&
	    left != (need = (size_t)h.nelem * es))
		return err_set(e, "%llu bytes of data where shape %s of %s needs "
		    "%zu", (unsigned long long)left,
		    shape_str(h.rank, h.dims, sbuf, sizeof sbuf), h.descr, need);
	if (tensor_alloc_uninit(t, h.dtype, h.rank, h.dims, e) < 0)
		return -1;
	need = (size_t)t->nelem * es;
	if (need && src->read(src->ctx, t->data, need, e) < 0) {
		tensor_release(t);
		return -1;
	}
	if (swap)
		byteswap(t->data, t->nelem, es);
	if (h.dtype == DT_BOOL)
		for (int64_t i = 0; i < t->nelem; i++)
			((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
	if (fortran && fortran_to_c(t, e) < 0) {
		tensor_release(t);
		return -1;
	}
	return 0;
}

/* An image in memory as a source. */
struct mem_src {
	const uint8_t *b;
	size_t len, pos;
};

static int
mem_read(void *ctx, void *dst, size_t n, struct err *e)
{
	struct mem_src *m = ctx;

	if (n > m->len - m->pos)
		return err_set(e, "truncated npy file");
	memcpy(dst, m->b + m->pos, n);
	m->pos += n;
	return 0;
}

int
npy_read_mem(const void *buf, size_t len, const char *name, struct tensor *t,
    struct err *e)
{
	struct mem_src m = { buf, len, 0 };
	struct npy_src src = { mem_read, &m, len };
	int checked;

	memset(t, 0, sizeof *t);
	if (read_src(&src, NULL, NULL, t, e, &checked) < 0)
		return err_prefix(e, "%s", name);
	return 0;
}

/* A file as a source. */
struct fd_src {
	int fd;
};

static int
fd_read(void *ctx, void *dst, size_t n, struct err *e)
{
	struct fd_src *f = ctx;
	uint8_t *p = dst;

	while (n > 0) {
		ssize_t r = read(f->fd, p, n < (size_t)1 << 30 ? n : (size_t)1 << 30);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_errno(e, "read");
		if (r == 0)
			return err_set(e, "file shrank while reading");
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int
npy_read_checked(const char *path, npy_check_fn *check, void *ctx,
    struct tensor *t, struct err *e)
{
	struct fd_src f;
	struct npy_src src = { fd_read, &f, 0 };
	struct stat st;
	int r, checked = 0;

	memset(t, 0, sizeof *t);
	/* O_NONBLOCK: a FIFO is refused, not waited on */
	if ((f.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		if (errno == ENOENT)
			return 1;
		return err_errno(e, "%s", path);
	}
	if (fstat(f.fd, &st) < 0)
		r = err_errno(e, "%s", path);
	else if (!S_ISREG(st.st_mode))
		r = err_set(e, "%s: %s", path, S_ISDIR(st.st_mode) ?
		    "is a directory" : "not a regular file");
	else if ((uint64_t)st.st_size > (uint64_t)TENSOR_MAX_BYTES +
	    NPY_HEADER_MAX + 16)
		r = err_set(e, "%s: file too large (%lld bytes)", path,
		    (long long)st.st_size);
	else {
		src.size = (uint64_t)st.st_size;
		if ((r = read_src(&src, check, ctx, t, e, &checked)) < 0 &&
		    !checked)
			err_prefix(e, "%s", path);
	}
	close(f.fd);
	return r < 0 ? -1 : 0;
}

int
npy_read(const char *path, struct tensor *t, struct err *e)
{
	int r = npy_read_checked(path, NULL, NULL, t, e);

	if (r == 1) {
		errno = ENOENT;
		return err_errno(e, "%s", path);
	}
	return r;
}

int
npy_write_fp(FILE *fp, const struct tensor *t, struct err *e)
{
	const char *descr = npy_descr(t->dtype);
	char hdr[64 + 24 * TENSOR_MAX_RANK + 64];
	int n;
	size_t total, es;

	if (!descr)
		return err_set(e, "element type %s has no npy equivalent",
		    dtype_name(t->dtype) ? dtype_name(t->dtype) : "unknown");
	n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, "
	    "'shape': (", descr);
	for (int i = 0; i < t->rank; i++)
		n += snprintf(hdr + n, sizeof hdr - n, "%s%lld", i ? ", " : "",
		    (long long)t->dims[i]);
	n += snprintf(hdr + n, sizeof hdr - n, "%s), }", t->rank == 1 ? "," : "");
	/* Pad with spaces so magic + length + header is a multiple of 64. */
	total = (10 + (size_t)n + 1 + 63) / 64 * 64;
	while ((size_t)n < total - 10 - 1)
		hdr[n++] = ' ';
	hdr[n++] = '\n';
	if (fwrite(NPY_MAGIC "\x01\x00", 1, 8, fp) != 8 ||
	    putc(n & 0xff, fp) == EOF || putc(n >> 8, fp) == EOF ||
	    fwrite(hdr, 1, n, fp) != (size_t)n)
		return err_errno(e, "write");
	es = dtype_size(t->dtype);
	if (es > 1 && !host_is_le()) {
		uint8_t tmp[8];

		for (int64_t i = 0; i < t->nelem; i++) {
			memcpy(tmp, (const uint8_t *)t->data + i * es, es);
			byteswap(tmp, 1, es);
			if (fwrite(tmp, 1, es, fp) != es)
				return err_errno(e, "write");
		}
	} else if (t->nelem && fwrite(t->data, es, (size_t)t->nelem, fp) !=
	    (size_t)t->nelem)
		return err_errno(e, "write");
	return 0;
}

int
npy_write(const char *path, const struct tensor *t, struct err *e)
{
	struct outfile *o;

	if (!(o = outfile_open(path, e)))
		return -1;
	if (npy_write_fp(outfile_fp(o), t, e) < 0) {
		outfile_abort(o);
		return err_prefix(e, "%s", path);
	}
	return outfile_commit(o, e);
}

/* ---- .npz: a zip archive of .npy members ---- */

struct npz_member {
	char *name;
	int method;		/* 0 stored, 8 deflated */
	int flags;
	uint32_t crc;
	uint64_t csize, usize, offset;
};

struct npz {
	char *path;
	FILE *fp;
	uint64_t size;
	struct npz_member *m;
	int n;
};

static uint32_t
rd16(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8;
}

static uint32_t
rd32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static int
read_at(struct npz *z, uint64_t off, void *buf, size_t len, struct err *e)
{
	if (off > z->size || len > z->size - off)
		return err_set(e, "%s: truncated zip file", z->path);
	if (fseeko(z->fp, (off_t)off, SEEK_SET) < 0)
		return err_errno(e, "%s", z->path);
	if (fread(buf, 1, len, z->fp) != len) {
		if (ferror(z->fp))
			return err_errno(e, "%s", z->path);
		return err_set(e, "%s: truncated zip file", z->path);
	}
	return 0;
}

/* Apply a central directory entry's zip64 extra field. */
static int
zip64_extra(const uint8_t *x, size_t len, struct npz_member *m)
{
	while (len >= 4) {
		uint32_t id = rd16(x), sz = rd16(x + 2);
		const uint8_t *p = x + 4;
		size_t left;

		if (sz > len - 4)
			return -1;
		left = sz;
		if (id == 1) {
			if (m->usize == 0xffffffff) {
				if (left < 8)
					return -1;
				m->usize = rd64(p), p += 8, left -= 8;
			}
			if (m->csize == 0xffffffff) {
				if (left < 8)
					return -1;
				m->csize = rd64(p), p += 8, left -= 8;
			}
			if (m->offset == 0xffffffff) {
				if (left < 8)
					return -1;
				m->offset = rd64(p);
			}
			return 0;
		}
		x += 4 + sz;
		len -= 4 + sz;
	}
	return 0;
}

static void member_label(const char *name, char *buf, size_t size);

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Two members of one name: which one is the sample's is anybody's guess. */
static int
check_duplicates(struct npz *z, struct err *e)
{
	char **names, shown[64];
	int rc = 0;

	if (z->n < 2)
		return 0;
	if (!(names = malloc((size_t)z->n * sizeof *names)))
		return err_nomem(e);
	for (int i = 0; i < z->n; i++)
		names[i] = z->m[i].name;
	qsort(names, (size_t)z->n, sizeof *names, cmp_names);
	for (int i = 1; i < z->n; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			member_label(names[i], shown, sizeof shown);
			rc = err_set(e, "%s: %s: in the archive twice", z->path,
			    shown);
			break;
		}
	free(names);
	return rc;
}

static int
read_directory(struct npz *z, struct err *e)
{
	uint8_t tail[22 + 65535], *cd = NULL;
	size_t tlen = z->size < sizeof tail ? (size_t)z->size : sizeof tail;
	uint64_t tstart = z->size - tlen, eocd = 0, nent, cdsize, cdoff;
	int found = 0;

	if (tlen < 22)
		return err_set(e, "%s: not a zip file", z->path);
	if (read_at(z, tstart, tail, tlen, e) < 0)
		return -1;
	for (size_t i = tlen - 22 + 1; i-- > 0;)
		if (rd32(tail + i) == 0x06054b50 &&
		    i + 22 + rd16(tail + i + 20) == tlen) {
			eocd = tstart + i;
			found = 1;
			break;
		}
	if (!found)
		return err_set(e, "%s: not a zip file (no end of central "
		    "directory)", z->path);
	{
		const uint8_t *p = tail + (eocd - tstart);

		nent = rd16(p + 10);
		cdsize = rd32(p + 12);
		cdoff = rd32(p + 16);
	}
	if (nent == 0xffff || cdsize == 0xffffffff || cdoff == 0xffffffff) {
		uint8_t loc[20], rec[56];

		if (eocd < 20 || read_at(z, eocd - 20, loc, 20, e) < 0 ||
		    rd32(loc) != 0x07064b50 ||
		    read_at(z, rd64(loc + 8), rec, 56, e) < 0 ||
		    rd32(rec) != 0x06064b50)
			return err_set(e, "%s: bad zip64 end of central directory",
			    z->path);
		nent = rd64(rec + 32);
		cdsize = rd64(rec + 40);
		cdoff = rd64(rec + 48);
	}
	if (cdoff > z->size || cdsize > z->size - cdoff ||
	    nent > cdsize / 46)
		return err_set(e, "%s: bad zip central directory", z->path);
	if (!(cd = malloc(cdsize ? (size_t)cdsize : 1)) ||
	    !(z->m = calloc(nent ? (size_t)nent : 1, sizeof *z->m))) {
		free(cd);
		return err_nomem(e);
	}
	if (read_at(z, cdoff, cd, (size_t)cdsize, e) < 0) {
		free(cd);
		return -1;
	}
	for (uint64_t i = 0, pos = 0; i < nent; i++) {
		const uint8_t *p = cd + pos;
		struct npz_member *m = &z->m[z->n];
		size_t nlen, xlen, clen;

		if (cdsize - pos < 46 || rd32(p) != 0x02014b50)
			goto bad;
		nlen = rd16(p + 28);
		xlen = rd16(p + 30);
		clen = rd16(p + 32);
		if (cdsize - pos - 46 < nlen + xlen + clen)
			goto bad;
		m->flags = rd16(p + 8);
		m->method = rd16(p + 10);
		m->crc = rd32(p + 16);
		m->csize = rd32(p + 20);
		m->usize = rd32(p + 24);
		m->offset = rd32(p + 42);
		if (zip64_extra(p + 46 + nlen, xlen, m) < 0)
			goto bad;
		if (!(m->name = malloc(nlen + 1))) {
			free(cd);
			return err_nomem(e);
		}
		memcpy(m->name, p + 46, nlen);
		m->name[nlen] = '\0';
		z->n++;
		pos += 46 + nlen + xlen + clen;
	}
	free(cd);
	return check_duplicates(z, e);
bad:
	free(cd);
	return err_set(e, "%s: bad zip central directory", z->path);
}

/* fopen, refusing what is not a regular file without blocking on it. */
static FILE *
open_regular(const char *path, struct err *e)
{
	struct stat st;
	FILE *fp;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		err_errno(e, "%s", path);
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		err_set(e, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (!(fp = fdopen(fd, "rb"))) {
		err_errno(e, "%s", path);
		close(fd);
	}
	return fp;
}

struct npz *
npz_open(const char *path, struct err *e)
{
	struct npz *z;
	off_t size;

	if (!(z = calloc(1, sizeof *z)) || !(z->path = strdup(path))) {
		free(z);
		err_nomem(e);
		return NULL;
	}
	if (!(z->fp = open_regular(path, e))) {
		npz_close(z);
		return NULL;
	}
	if (fseeko(z->fp, 0, SEEK_END) < 0 || (size = ftello(z->fp)) < 0) {
		err_errno(e, "%s", path);
		npz_close(z);
		return NULL;
	}
	z->size = (uint64_t)size;
	if (read_directory(z, e) < 0) {
		npz_close(z);
		return NULL;
	}
	return z;
}

void
npz_close(struct npz *z)
{
	if (!z)
		return;
	for (int i = 0; i < z->n; i++)
		free(z->m[i].name);
	free(z->m);
	if (z->fp)
		fclose(z->fp);
	free(z->path);
	free(z);
}

int
npz_count(const struct npz *z)
{
	return z->n;
}

const char *
npz_member(const struct npz *z, int i)
{
	return i >= 0 && i < z->n ? z->m[i].name : NULL;
}

int
npz_find(const struct npz *z, const char *member)
{
	for (int i = 0; i < z->n; i++)
		if (strcmp(z->m[i].name, member) == 0)
			return i;
	return -1;
}

/* A member name for messages: control bytes as '?', long names cut. */
static void
member_label(const char *name, char *buf, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++)
		buf[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ?
		    '?' : name[i];
	buf[i] = '\0';
	if (name[i] && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/*
 * A member as a source: its bytes inflated (or copied) in order, a chunk
 * of the compressed data at a time, their CRC kept as they go.
 */
struct member_src {
	struct npz *z;
	const struct npz_member *m;
	const char *shown;
	uint64_t data;		/* file offset of the member's data */
	uint64_t in_pos;	/* compressed bytes read */
	uint64_t out_pos;	/* bytes given */
	z_stream zs;
	int zinit, ended;
	uLong crc;
	uint8_t in[1 << 16];
};

static int
member_corrupt(struct member_src *s, struct err *e)
{
	return err_set(e, "%s: %s: corrupt deflate data", s->z->path, s->shown);
}

/* Inflate into dst[n] (n may be 0: then just to the end of the stream). */
static int
member_inflate(struct member_src *s, uint8_t *dst, size_t n, struct err *e)
{
	uint8_t spare;
	int r;

	s->zs.next_out = n ? dst : &spare;
	s->zs.avail_out = 0;
	for (;;) {
		size_t left = n - (size_t)(s->zs.next_out - (n ? dst : &spare));

		if (n && left == 0)
			return 0;
		if (s->zs.avail_out == 0)
			s->zs.avail_out = !n ? 1 : left > UINT32_MAX ? UINT32_MAX :
			    (uInt)left;
		if (s->zs.avail_in == 0 && s->in_pos < s->m->csize) {
			uint64_t c = s->m->csize - s->in_pos;
			size_t k = c < sizeof s->in ? (size_t)c : sizeof s->in;

			if (read_at(s->z, s->data + s->in_pos, s->in, k, e) < 0)
				return -1;
			s->in_pos += k;
			s->zs.next_in = s->in;
			s->zs.avail_in = (uInt)k;
		}
		if (s->ended)
			return n ? member_corrupt(s, e) : 0;
		r = inflate(&s->zs, Z_NO_FLUSH);
		if (!n && s->zs.next_out != &spare)
			return member_corrupt(s, e);	/* more than usize */
		if (r == Z_STREAM_END) {
			/* the end may come with the last bytes asked for */
			s->ended = 1;
			if (!n || s->zs.next_out == dst + n)
				return 0;
			return member_corrupt(s, e);
		}
		if (r != Z_OK)
			return member_corrupt(s, e);
	}
}

static int
member_read(void *ctx, void *dst, size_t n, struct err *e)
{
	struct member_src *s = ctx;
	size_t done = 0;

	if (n > s->m->usize - s->out_pos)
		return err_set(e, "truncated npy file");
	if (s->m->method == 0) {
		if (read_at(s->z, s->data + s->out_pos, dst, n, e) < 0)
			return -1;
	} else if (member_inflate(s, dst, n, e) < 0)
		return -1;
	s->out_pos += n;
	/* crc32() takes uInt lengths; go in chunks. */
	while (done < n) {
		size_t k = n - done > (1u << 30) ? (1u << 30) : n - done;

		s->crc = crc32(s->crc, (const uint8_t *)dst + done, (uInt)k);
		done += k;
	}
	return 0;
}

/*
 * After a parse error: the rest of the member, a chunk at a time, and
 * when its deflate data or CRC is bad, that is the error (as the whole
 * member was checked before it was parsed, once).
 */
static void
member_drain(struct member_src *s, struct err *e)
{
	uint8_t buf[1 << 16];
	struct err e2;

	while (s->out_pos < s->m->usize) {
		uint64_t left = s->m->usize - s->out_pos;
		size_t k = left < sizeof buf ? (size_t)left : sizeof buf;

		if (member_read(s, buf, k, &e2) < 0)
			goto bad;
	}
	if (s->m->method == 8 && member_inflate(s, NULL, 0, &e2) < 0)
		goto bad;
	if (s->crc != s->m->crc)
		err_set(e, "%s: %s: crc mismatch", s->z->path, s->shown);
	return;
bad:
	*e = e2;
}

int
npz_read_checked(struct npz *z, int i, npy_check_fn *check, void *ctx,
    struct tensor *t, struct err *e)
{
	struct npz_member *m;
	struct member_src *s;
	uint8_t lh[30];
	char shown[128];
	int r = -1, checked = 0;

	memset(t, 0, sizeof *t);
	if (i < 0 || i >= z->n)
		return err_set(e, "%s: no member %d", z->path, i);
	m = &z->m[i];
	member_label(m->name, shown, sizeof shown);
	if (m->flags & 1)
		return err_set(e, "%s: %s: encrypted members are not supported",
		    z->path, shown);
	if (m->method != 0 && m->method != 8)
		return err_set(e, "%s: %s: compression method %d is not supported",
		    z->path, shown, m->method);
	if (m->usize > (uint64_t)TENSOR_MAX_BYTES + NPY_HEADER_MAX + 16)
		return err_set(e, "%s: %s: member too large", z->path, shown);
	if (read_at(z, m->offset, lh, sizeof lh, e) < 0)
		return -1;
	if (rd32(lh) != 0x04034b50)
		return err_set(e, "%s: %s: bad local header", z->path, shown);
	if (!(s = calloc(1, sizeof *s)))
		return err_nomem(e);
	s->z = z;
	s->m = m;
	s->shown = shown;
	s->data = m->offset + 30 + rd16(lh + 26) + rd16(lh + 28);
	s->crc = crc32(0L, Z_NULL, 0);
	if (s->data > z->size || m->csize > z->size - s->data) {
		err_set(e, "%s: %s: truncated zip file", z->path, shown);
		goto out;
	}
	if (m->method == 0 && m->csize != m->usize) {
		err_set(e, "%s: %s: bad sizes for a stored member", z->path,
		    shown);
		goto out;
	}
	/* deflate expands at most 1032 times: refuse before inflating */
	if (m->method == 8 && m->usize / 1032 > m->csize + 64) {
		err_set(e, "%s: %s: bad sizes for a deflated member", z->path,
		    shown);
		goto out;
	}
	if (m->method == 8) {
		if (inflateInit2(&s->zs, -MAX_WBITS) != Z_OK) {
			err_nomem(e);
			goto out;
		}
		s->zinit = 1;
	}
	{
		struct npy_src src = { member_read, s, m->usize };

		if (read_src(&src, check, ctx, t, e, &checked) < 0) {
			/* zip errors name the archive already */
			if (!checked &&
			    strncmp(e->msg, z->path, strlen(z->path)) != 0)
				err_prefix(e, "%s: %s", z->path, shown);
			/* bad bytes from bad deflate data: say that instead */
			if (!checked)
				member_drain(s, e);
			goto out;
		}
	}
	/* all of it, and nothing after it: then the CRC covers the member */
	if (s->out_pos != m->usize ||
	    (m->method == 8 && member_inflate(s, NULL, 0, e) < 0)) {
		if (s->out_pos != m->usize)
			member_corrupt(s, e);
		tensor_release(t);
		goto out;
	}
	if (s->crc != m->crc) {
		err_set(e, "%s: %s: crc mismatch", z->path, shown);
		tensor_release(t);
		goto out;
	}
	r = 0;
out:
	if (s->zinit)
		inflateEnd(&s->zs);
	free(s);
	return r;
}

int
npz_read(struct npz *z, int i, struct tensor *t, struct err *e)
{
	return npz_read_checked(z, i, NULL, NULL, t, e);
}
