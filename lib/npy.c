/* npy: numpy .npy files and .npz archives. See npy.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

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

static int
read_mem(const uint8_t *b, size_t len, struct tensor *t, struct err *e)
{
	size_t hlen, off, need;
	int64_t nelem;
	char descr[32];
	int fortran = 0, rank = 0, swap = 0, dtype;
	int64_t dims[TENSOR_MAX_RANK];
	char sbuf[256];

	if (len < 10 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
		return err_set(e, "not an npy file");
	if (b[6] == 1) {
		hlen = b[8] | (size_t)b[9] << 8;
		off = 10;
	} else if (b[6] == 2 || b[6] == 3) {
		if (len < 12)
			return err_set(e, "truncated npy header");
		hlen = b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
		    (size_t)b[11] << 24;
		off = 12;
	} else
		return err_set(e, "npy format version %d.%d is not supported",
		    b[6], b[7]);
	if (hlen > NPY_HEADER_MAX || hlen > len - off)
		return err_set(e, "truncated npy header");
	if (parse_header((const char *)b + off, hlen, descr, sizeof descr,
	    &fortran, &rank, dims, e) < 0)
		return -1;
	off += hlen;
	if ((dtype = descr_dtype(descr, &swap)) == DT_UNDEFINED)
		return err_set(e, "npy dtype %s is not supported", descr);
	/* the data must be there before the tensor is allocated */
	if ((nelem = shape_nelem(rank, dims, e)) < 0)
		return -1;
	if ((uint64_t)nelem <= (uint64_t)TENSOR_MAX_BYTES / dtype_size(dtype) &&
	    len - off != (need = (size_t)nelem * dtype_size(dtype)))
		return err_set(e, "%zu bytes of data where shape %s of %s needs %zu",
		    len - off, shape_str(rank, dims, sbuf, sizeof sbuf), descr, need);
	if (tensor_alloc(t, dtype, rank, dims, e) < 0)
		return -1;
	need = (size_t)t->nelem * dtype_size(dtype);
	memcpy(t->data, b + off, need);
	if (swap)
		byteswap(t->data, t->nelem, dtype_size(dtype));
	if (dtype == DT_BOOL)
		for (int64_t i = 0; i < t->nelem; i++)
			((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
	if (fortran && fortran_to_c(t, e) < 0) {
		tensor_release(t);
		return -1;
	}
	return 0;
}

int
npy_read_mem(const void *buf, size_t len, const char *name, struct tensor *t,
    struct err *e)
{
	memset(t, 0, sizeof *t);
	if (read_mem(buf, len, t, e) < 0)
		return err_prefix(e, "%s", name);
	return 0;
}

/* Read a whole regular file, refusing more than max bytes. */
static int
slurp(const char *path, size_t max, uint8_t **buf, size_t *len,
    struct err *e)
{
	FILE *fp;
	off_t size;
	uint8_t *b;

	if (!(fp = fopen(path, "rb")))
		return err_errno(e, "%s", path);
	if (fseeko(fp, 0, SEEK_END) < 0 || (size = ftello(fp)) < 0 ||
	    fseeko(fp, 0, SEEK_SET) < 0) {
		err_errno(e, "%s", path);
		fclose(fp);
		return -1;
	}
	if ((uint64_t)size > max) {
		fclose(fp);
		return err_set(e, "%s: file too large (%lld bytes)", path,
		    (long long)size);
	}
	if (!(b = malloc(size ? (size_t)size : 1))) {
		fclose(fp);
		return err_nomem(e);
	}
	if (fread(b, 1, (size_t)size, fp) != (size_t)size) {
		if (ferror(fp))
			err_errno(e, "%s", path);
		else
			err_set(e, "%s: file shrank while reading", path);
		free(b);
		fclose(fp);
		return -1;
	}
	fclose(fp);
	*buf = b;
	*len = (size_t)size;
	return 0;
}

int
npy_read(const char *path, struct tensor *t, struct err *e)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	memset(t, 0, sizeof *t);
	if (slurp(path, (size_t)TENSOR_MAX_BYTES + NPY_HEADER_MAX + 16, &buf,
	    &len, e) < 0)
		return -1;
	r = npy_read_mem(buf, len, path, t, e);
	free(buf);
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
	if (!(z->fp = fopen(path, "rb"))) {
		err_errno(e, "%s", path);
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

static int
inflate_raw(const uint8_t *src, size_t slen, uint8_t *dst, size_t dlen)
{
	z_stream s;
	int r;

	memset(&s, 0, sizeof s);
	if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
		return -1;
	s.next_in = (Bytef *)src;
	s.next_out = dst;
	/* zlib counts in uInt; feed and drain in chunks it can express. */
	do {
		if (s.avail_in == 0) {
			size_t left = slen - (size_t)((const uint8_t *)s.next_in - src);
			s.avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
		}
		if (s.avail_out == 0) {
			size_t left = dlen - (size_t)(s.next_out - dst);
			s.avail_out = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
		}
		r = inflate(&s, Z_NO_FLUSH);
	} while (r == Z_OK);
	inflateEnd(&s);
	if (r != Z_STREAM_END || (size_t)(s.next_out - dst) != dlen)
		return -1;
	return 0;
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

int
npz_read(struct npz *z, int i, struct tensor *t, struct err *e)
{
	struct npz_member *m;
	uint8_t lh[30], *cbuf = NULL, *ubuf = NULL;
	uint64_t data;
	char shown[128];
	int r = -1;

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
	data = m->offset + 30 + rd16(lh + 26) + rd16(lh + 28);
	if (data > z->size || m->csize > z->size - data)
		return err_set(e, "%s: %s: truncated zip file", z->path, shown);
	if (m->method == 0 && m->csize != m->usize)
		return err_set(e, "%s: %s: bad sizes for a stored member", z->path,
		    shown);
	/* deflate expands at most 1032 times: refuse before allocating */
	if (m->method == 8 && m->usize / 1032 > m->csize + 64)
		return err_set(e, "%s: %s: bad sizes for a deflated member",
		    z->path, shown);
	if (!(cbuf = malloc(m->csize ? (size_t)m->csize : 1)))
		return err_nomem(e);
	if (read_at(z, data, cbuf, (size_t)m->csize, e) < 0)
		goto out;
	if (m->method == 8) {
		if (!(ubuf = malloc(m->usize ? (size_t)m->usize : 1))) {
			err_nomem(e);
			goto out;
		}
		if (inflate_raw(cbuf, (size_t)m->csize, ubuf, (size_t)m->usize) < 0) {
			err_set(e, "%s: %s: corrupt deflate data", z->path, shown);
			goto out;
		}
	} else {
		ubuf = cbuf;
		cbuf = NULL;
	}
	{
		/* crc32() takes uInt lengths; go in chunks. */
		uLong crc = crc32(0L, Z_NULL, 0);
		size_t done = 0;

		while (done < m->usize) {
			size_t n = m->usize - done > (1u << 30) ? (1u << 30) :
			    (size_t)(m->usize - done);
			crc = crc32(crc, ubuf + done, (uInt)n);
			done += n;
		}
		if (crc != m->crc) {
			err_set(e, "%s: %s: crc mismatch", z->path, shown);
			goto out;
		}
	}
	if (read_mem(ubuf, (size_t)m->usize, t, e) < 0) {
		err_prefix(e, "%s: %s", z->path, shown);
		goto out;
	}
	r = 0;
out:
	free(cbuf);
	free(ubuf);
	return r;
}
