/* stream: see stream.h and onnxq-stream(5). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "numparse.h"
#include "stream.h"

#define IBUF_SIZE 65536
/* Records with more keys than this are checked for duplicates by sorting. */
#define KV_LINEAR_MAX 16

/* A growable byte buffer; a failed allocation sticks. */
struct sbuf {
	char *p;
	size_t len, cap;
	int failed;
};

static int
sb_reserve(struct sbuf *b, size_t add)
{
	size_t cap;
	char *p;

	if (b->failed)
		return -1;
	if (b->len + add + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + add + 1) {
		if (cap > SIZE_MAX / 2) {
			b->failed = 1;
			return -1;
		}
		cap *= 2;
	}
	if (!(p = realloc(b->p, cap))) {
		b->failed = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void
sb_addn(struct sbuf *b, const char *s, size_t n)
{
	if (sb_reserve(b, n) < 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_adds(struct sbuf *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

static void
sb_addc(struct sbuf *b, char c)
{
	sb_addn(b, &c, 1);
}

/* Escaping. */

static int
must_escape(unsigned char c)
{
	return c <= 0x20 || c == 0x7f || c == '%' || c == ',' || c == '=';
}

static void
sb_escape(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;
	size_t run;

	while (*p) {
		for (run = 0; p[run] && !must_escape(p[run]); run++)
			;
		sb_addn(b, (const char *)p, run);
		p += run;
		if (*p) {
			char esc[3] = { '%', hex[*p >> 4], hex[*p & 15] };

			sb_addn(b, esc, 3);
			p++;
		}
	}
}

char *
stream_escape(const char *s)
{
	struct sbuf b = { 0 };

	sb_reserve(&b, strlen(s));
	sb_escape(&b, s);
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Decode n bytes of s into out (at most n bytes, NUL added). -1 with a
 * message on a bad or NUL escape.
 */
static int
unescape_n(const char *s, size_t n, char *out, struct err *e)
{
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (n - i < 3)
			return err_set(e, "bad escape '%.*s' (%% needs two hex "
			    "digits)", (int)(n - i), s + i);
		hi = hexval((unsigned char)s[i + 1]);
		lo = hexval((unsigned char)s[i + 2]);
		if (hi < 0 || lo < 0)
			return err_set(e, "bad escape '%.3s'", s + i);
		if (hi == 0 && lo == 0)
			return err_set(e, "escaped NUL byte '%%00' not allowed");
		out[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[o] = '\0';
	return 0;
}

char *
stream_unescape(const char *s, struct err *e)
{
	size_t n = strlen(s);
	char *out = malloc(n + 1);

	if (!out) {
		err_nomem(e);
		return NULL;
	}
	if (unescape_n(s, n, out, e) < 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* Numbers. */

char *
stream_fmt_float(float f, char *buf)
{
	if (isnan(f))
		strcpy(buf, "nan");
	else if (isinf(f))
		strcpy(buf, f > 0 ? "inf" : "-inf");
	else
		for (int prec = 6; prec <= 9; prec++) {
			float back;

			snprintf(buf, STREAM_NUM_MAX, "%.*g", prec, (double)f);
			back = strtof(buf, NULL);
			if (memcmp(&back, &f, sizeof f) == 0)
				break;
		}
	return buf;
}

char *
stream_fmt_double(double d, char *buf)
{
	if (isnan(d))
		strcpy(buf, "nan");
	else if (isinf(d))
		strcpy(buf, d > 0 ? "inf" : "-inf");
	else
		for (int prec = 15; prec <= 17; prec++) {
			double back;

			snprintf(buf, STREAM_NUM_MAX, "%.*g", prec, d);
			back = strtod(buf, NULL);
			if (memcmp(&back, &d, sizeof d) == 0)
				break;
		}
	return buf;
}

/* strto* skip leading white space and accept an empty string as 0: not here. */
static int
num_start_ok(const char *s)
{
	return *s != '\0' && *s != ' ' && *s != '\t' && *s != '\n' &&
	    *s != '\r' && *s != '\f' && *s != '\v';
}

int
stream_parse_float(const char *s, float *v)
{
	char *end;
	float f;

	if (numparse_float(s, v))
		return 0;	/* the usual numbers, faster; the same bits */
	if (!num_start_ok(s))
		return -1;
	errno = 0;
	f = strtof(s, &end);
	if (end == s || *end != '\0')
		return -1;
	if (errno == ERANGE && isinf(f))
		return -1;
	*v = f;
	return 0;
}

int
stream_parse_double(const char *s, double *v)
{
	char *end;
	double d;

	if (!num_start_ok(s))
		return -1;
	errno = 0;
	d = strtod(s, &end);
	if (end == s || *end != '\0')
		return -1;
	if (errno == ERANGE && isinf(d))
		return -1;
	*v = d;
	return 0;
}

int
stream_parse_int(const char *s, int64_t *v)
{
	char *end;
	long long x;

	if (!num_start_ok(s) || *s == '+')
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE)
		return -1;
	*v = x;
	return 0;
}

int
stream_parse_uint(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (numparse_uint(s, v))
		return 0;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE)
		return -1;
	*v = x;
	return 0;
}

/* Names of types and keys: letters, digits, '_'. */
static int
word_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* Reading. */

/* The raw line of placed records (stream_rec_dup_placed()): none. */
static const char placed_raw[1];

/* The reader's regular input file, shared by placed records. */
struct stream_src {
	int fd;			/* a dup of the reader's, for pread() */
	long refs;		/* the reader and each placed record */
};

struct stream_reader {
	FILE *fp;
	int own_fp;
	int64_t pos;		/* fp's offset of ibuf[ipos]; -1: not a
				   regular file (or unknown) */
	int64_t line_at;	/* of the line read last */
	struct stream_src *src;	/* made by the first placed record */
	char *name;
	long lineno;
	size_t max_line;
	char *ibuf;
	size_t ilen, ipos;
	int eof;
	char *line;		/* current line, NUL-terminated */
	size_t linelen, linecap;
	char *hwork;		/* header split copy */
	size_t hworkcap;
	char **hfield;
	size_t nhfield, hfieldcap;
	struct stream_rec rec;
	size_t workcap;
	uint64_t nrec;
	int minor;
	enum { ST_HEADERS, ST_RECORDS, ST_DONE, ST_FAILED } state;
	struct err failure;	/* repeated by every call after a failure */
};

/* "NAME:LINE: msg", remembered so later calls repeat it. */
static int
rfail(struct stream_reader *r, long line, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
rfail(struct stream_reader *r, long line, struct err *e, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	err_set(&r->failure, "%s:%ld: %s", r->name, line, msg);
	r->state = ST_FAILED;
	if (e)
		*e = r->failure;
	return -1;
}

static int
grow_buf(char **p, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 256;
	char *np;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(np = realloc(*p, c)))
		return -1;
	*p = np;
	*cap = c;
	return 0;
}

/*
 * Read one LF-terminated line into r->line (LF dropped): 1, 0 at the end
 * of input, -1 on error.
 */
static int
read_line(struct stream_reader *r, struct err *e)
{
	r->linelen = 0;
	r->line_at = r->pos;
	for (;;) {
		char *start, *nl;
		size_t n;

		if (r->ipos == r->ilen) {
			if (r->eof)
				break;
			r->ipos = 0;
			r->ilen = fread(r->ibuf, 1, IBUF_SIZE, r->fp);
			if (r->ilen == 0) {
				if (ferror(r->fp))
					return rfail(r, r->lineno + 1, e,
					    "read error: %s", strerror(errno));
				r->eof = 1;
				break;
			}
		}
		start = r->ibuf + r->ipos;
		nl = memchr(start, '\n', r->ilen - r->ipos);
		n = nl ? (size_t)(nl - start) : r->ilen - r->ipos;
		if (r->linelen + n > r->max_line)
			return rfail(r, r->lineno + 1, e,
			    "line longer than %zu bytes", r->max_line);
		if (grow_buf(&r->line, &r->linecap, r->linelen + n + 1) < 0)
			return rfail(r, r->lineno + 1, e, "out of memory");
		memcpy(r->line + r->linelen, start, n);
		r->linelen += n;
		r->line[r->linelen] = '\0';
		r->ipos += n + (nl != NULL);
		if (r->pos >= 0)
			r->pos += (int64_t)(n + (nl != NULL));
		if (nl) {
			r->lineno++;
			return 1;
		}
	}
	if (r->linelen == 0)
		return 0;
	r->lineno++;
	return rfail(r, r->lineno, e,
	    "no newline at end of input (truncated stream?)");
}

/*
 * Bytes no line may hold (NUL, CR, other controls but TAB); records also
 * refuse spaces. -1 with the reason.
 */
static int
check_bytes(struct stream_reader *r, int record, struct err *e)
{
	const unsigned char *p = (const unsigned char *)r->line;
	const uint64_t ones = 0x0101010101010101ULL, highs = ones << 7;

	for (size_t i = 0; i < r->linelen; i++) {
		unsigned char c;

		/* eight bytes, none 0x20 or less nor 0x7f (most of a hist
		   line's): skipped at once (SWAR) */
		while (i + 8 <= r->linelen) {
			uint64_t w, x;

			memcpy(&w, p + i, 8);
			x = w ^ 0x7f * ones;	/* a zero byte where 0x7f */
			if ((((w - 0x21 * ones) & ~w) | ((x - ones) & ~x)) &
			    highs)
				break;
			i += 8;
		}
		if (i >= r->linelen)
			break;
		c = p[i];
		if (c > 0x20 && c != 0x7f)
			continue;
		if (c == '\t')
			continue;
		if (c == '\0')
			return rfail(r, r->lineno, e, "NUL byte in line");
		if (c == '\r')
			return rfail(r, r->lineno, e,
			    "carriage return in line (CRLF line ends are not "
			    "allowed)");
		if (c == ' ' && !record)
			continue;
		if (c == ' ')
			return rfail(r, r->lineno, e, "space in record (fields "
			    "are separated by one TAB; names escape spaces as "
			    "%%20)");
		return rfail(r, r->lineno, e, "control character 0x%02X in line",
		    c);
	}
	return 0;
}

static int
parse_header(struct stream_reader *r, struct err *e)
{
	char *p;

	if (check_bytes(r, 0, e) < 0)
		return -1;
	if (grow_buf(&r->hwork, &r->hworkcap, r->linelen + 1) < 0)
		return rfail(r, r->lineno, e, "out of memory");
	memcpy(r->hwork, r->line, r->linelen + 1);
	r->nhfield = 0;
	for (p = r->hwork;;) {
		char *tab = strchr(p, '\t');

		if (r->nhfield == r->hfieldcap) {
			size_t c = r->hfieldcap ? r->hfieldcap * 2 : 8;
			char **nf = realloc(r->hfield, c * sizeof *nf);

			if (!nf)
				return rfail(r, r->lineno, e, "out of memory");
			r->hfield = nf;
			r->hfieldcap = c;
		}
		r->hfield[r->nhfield++] = p;
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	if (strcmp(r->hfield[0], STREAM_MAGIC) == 0)
		return rfail(r, r->lineno, e,
		    "second %s line (concatenated streams?)", STREAM_MAGIC);
	return 0;
}

static int
cmp_kv_key(const void *a, const void *b)
{
	const struct stream_kv *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

/* The repeated key, or NULL. */
static const char *
duplicate_key(struct stream_rec *rec)
{
	const struct stream_kv **v;
	const char *dup = NULL;

	if (rec->nkv <= KV_LINEAR_MAX) {
		for (size_t i = 0; i < rec->nkv; i++)
			for (size_t j = 0; j < i; j++)
				if (strcmp(rec->kv[i].key, rec->kv[j].key) == 0)
					return rec->kv[i].key;
		return NULL;
	}
	if (!(v = malloc(rec->nkv * sizeof *v)))
		return "";	/* caller reports out of memory */
	for (size_t i = 0; i < rec->nkv; i++)
		v[i] = &rec->kv[i];
	qsort(v, rec->nkv, sizeof *v, cmp_kv_key);
	for (size_t i = 1; i < rec->nkv && !dup; i++)
		if (strcmp(v[i]->key, v[i - 1]->key) == 0)
			dup = v[i]->key;
	free(v);
	return dup;
}

/*
 * Split rec->work_ (a copy of the line) in place: rec->type, the subject
 * (unescaped) and the fields (rec->kv, grown as needed); of an end
 * record, its type and its count as the subject. 0, or -1 with e saying
 * what is wrong (no file or line).
 */
static int
split_record(struct stream_rec *rec, struct err *e)
{
	struct err ue;
	char *p = rec->work_, *tab, *subj;

	rec->nkv = 0;
	if (!(tab = strchr(p, '\t')))
		return err_set(e, "record '%.40s' has no subject", p);
	*tab = '\0';
	rec->type = p;
	if (!word_ok(rec->type))
		return err_set(e, "bad record type '%.40s'", rec->type);
	subj = tab + 1;
	tab = strchr(subj, '\t');
	if (tab)
		*tab = '\0';
	rec->subject = subj;
	if (strcmp(rec->type, "end") == 0)
		return tab ? err_set(e, "end record has extra fields") : 0;
	if (!*subj)
		return err_set(e, "%s record: empty subject", rec->type);
	if (unescape_n(subj, strlen(subj), subj, &ue) < 0)
		return err_set(e, "%s record: subject: %s", rec->type, ue.msg);
	while (tab) {
		char *field = tab + 1, *eq;

		tab = strchr(field, '\t');
		if (tab)
			*tab = '\0';
		if (!*field)
			return err_set(e, "%s %s: empty field (two TABs in a "
			    "row?)", rec->type, rec->subject);
		if (!(eq = strchr(field, '=')))
			return err_set(e, "%s %s: field '%.40s' is not "
			    "key=value", rec->type, rec->subject, field);
		*eq = '\0';
		if (!word_ok(field))
			return err_set(e, "%s %s: bad key '%.40s'", rec->type,
			    rec->subject, field);
		if (rec->nkv == rec->kvcap_) {
			size_t c = rec->kvcap_ ? rec->kvcap_ * 2 : 16;
			struct stream_kv *nk = realloc(rec->kv, c * sizeof *nk);

			if (!nk)
				return err_nomem(e);
			rec->kv = nk;
			rec->kvcap_ = c;
		}
		rec->kv[rec->nkv].key = field;
		rec->kv[rec->nkv].val = eq + 1;
		rec->nkv++;
	}
	return 0;
}

/* Split r->line into r->rec. Returns 1 for a record, 0 for the end record. */
static int
parse_record(struct stream_reader *r, struct err *e)
{
	struct stream_rec *rec = &r->rec;
	struct err se;
	const char *dup;
	uint64_t n;

	if (check_bytes(r, 1, e) < 0)
		return -1;
	if (grow_buf(&rec->work_, &r->workcap, r->linelen + 1) < 0)
		return rfail(r, r->lineno, e, "out of memory");
	memcpy(rec->work_, r->line, r->linelen + 1);
	rec->raw = r->line;
	rec->rawlen = r->linelen;
	rec->file = r->name;
	rec->line = r->lineno;
	if (split_record(rec, &se) < 0)
		return rfail(r, r->lineno, e, "%s", se.msg);
	if (strcmp(rec->type, "end") == 0) {
		if (stream_parse_uint(rec->subject, &n) < 0)
			return rfail(r, r->lineno, e,
			    "end record: bad count '%.40s'", rec->subject);
		if (n != r->nrec)
			return rfail(r, r->lineno, e, "end record says %llu "
			    "records, stream has %llu (truncated or edited)",
			    (unsigned long long)n,
			    (unsigned long long)r->nrec);
		return 0;
	}
	if ((dup = duplicate_key(rec)) != NULL) {
		if (!*dup)
			return rfail(r, r->lineno, e, "out of memory");
		return rfail(r, r->lineno, e, "%s %s: duplicate key '%s'",
		    rec->type, rec->subject, dup);
	}
	return 1;
}

static int
parse_magic(struct stream_reader *r, struct err *e)
{
	const char *v;
	char *end;
	unsigned long major, minor;
	size_t n = strlen(STREAM_MAGIC);

	if (check_bytes(r, 0, e) < 0)
		return -1;
	if (strncmp(r->line, STREAM_MAGIC, n) != 0 || r->line[n] != '\t')
		return rfail(r, 1, e, "not an onnxq stream (no %s line)",
		    STREAM_MAGIC);
	v = r->line + n + 1;
	if (*v < '0' || *v > '9')
		return rfail(r, 1, e, "bad stream version '%.20s'", v);
	errno = 0;
	major = strtoul(v, &end, 10);
	if (errno || *end != '.' || end[1] < '0' || end[1] > '9')
		return rfail(r, 1, e, "bad stream version '%.20s'", v);
	minor = strtoul(end + 1, &end, 10);
	if (errno || (*end != '\0' && *end != '\t'))
		return rfail(r, 1, e, "bad stream version '%.20s'", v);
	if (major != STREAM_MAJOR)
		return rfail(r, 1, e,
		    "unsupported stream version %lu.%lu (this reads %d.x)",
		    major, minor, STREAM_MAJOR);
	r->minor = minor > 1000000 ? 1000000 : (int)minor;
	return 0;
}

static void
src_release(struct stream_src *src)
{
	if (src && --src->refs == 0) {
		close(src->fd);
		free(src);
	}
}

struct stream_reader *
stream_reader_new(FILE *fp, const char *name, struct err *e)
{
	struct stream_reader *r = calloc(1, sizeof *r);
	struct stat st;
	int got;

	if (!r || !(r->name = strdup(name)) ||
	    !(r->ibuf = malloc(IBUF_SIZE))) {
		if (r)
			free(r->name);
		free(r);
		err_nomem(e);
		return NULL;
	}
	r->fp = fp;
	r->max_line = STREAM_LINE_MAX;
	r->pos = fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) ?
	    (int64_t)ftello(fp) : -1;
	if ((got = read_line(r, e)) == 0)
		rfail(r, 1, e, "empty input (not an onnxq stream)");
	if (got <= 0 || parse_magic(r, e) < 0) {
		stream_reader_free(r);
		return NULL;
	}
	return r;
}

struct stream_reader *
stream_open(const char *path, struct err *e)
{
	struct stream_reader *r;
	FILE *fp;

	if (strcmp(path, "-") == 0)
		return stream_reader_new(stdin, "<stdin>", e);
	if (!(fp = fopen(path, "r"))) {
		err_errno(e, "%s", path);
		return NULL;
	}
	if (!(r = stream_reader_new(fp, path, e))) {
		fclose(fp);
		return NULL;
	}
	r->own_fp = 1;
	return r;
}

void
stream_reader_free(struct stream_reader *r)
{
	if (!r)
		return;
	if (r->own_fp)
		fclose(r->fp);
	src_release(r->src);
	free(r->name);
	free(r->ibuf);
	free(r->line);
	free(r->hwork);
	free(r->hfield);
	free(r->rec.work_);
	free(r->rec.kv);
	free(r);
}

void
stream_reader_set_max_line(struct stream_reader *r, size_t max)
{
	r->max_line = max ? max : STREAM_LINE_MAX;
}

int
stream_next(struct stream_reader *r, struct err *e)
{
	int got;

	switch (r->state) {
	case ST_FAILED:
		if (e)
			*e = r->failure;
		return -1;
	case ST_DONE:
		return STREAM_EOF;
	default:
		break;
	}
	if ((got = read_line(r, e)) < 0)
		return -1;
	if (got == 0)
		return rfail(r, r->lineno + 1, e,
		    "end of input before the end record (truncated stream?)");
	if (r->linelen == 0)
		return rfail(r, r->lineno, e, "empty line");
	if (r->line[0] == '#') {
		if (r->state == ST_RECORDS)
			return rfail(r, r->lineno, e,
			    "header line after the first record");
		if (parse_header(r, e) < 0)
			return -1;
		return STREAM_HEADER;
	}
	if ((got = parse_record(r, e)) < 0)
		return -1;
	if (got == 1) {
		r->nrec++;
		r->state = ST_RECORDS;
		return STREAM_RECORD;
	}
	/* the end record: nothing may follow */
	if ((got = read_line(r, e)) < 0)
		return -1;
	if (got > 0)
		return rfail(r, r->lineno, e, "data after the end record");
	r->state = ST_DONE;
	return STREAM_EOF;
}

const char *
stream_name(const struct stream_reader *r)
{
	return r->name;
}

long
stream_lineno(const struct stream_reader *r)
{
	return r->lineno;
}

int
stream_minor(const struct stream_reader *r)
{
	return r->minor;
}

const char *
stream_header(const struct stream_reader *r)
{
	return r->line;
}

const char *
stream_header_field(const struct stream_reader *r, size_t i)
{
	return i < r->nhfield ? r->hfield[i] : NULL;
}

const struct stream_rec *
stream_record(const struct stream_reader *r)
{
	return &r->rec;
}

/* Records. */

static int line_of(const struct stream_rec *rec, char *buf, struct err *e);

struct stream_rec *
stream_rec_dup(const struct stream_rec *src, struct err *e)
{
	struct stream_rec *rec;
	size_t flen = strlen(src->file) + 1, n = src->rawlen + 1;
	size_t size = sizeof *rec + src->nkv * sizeof *rec->kv + 2 * n + flen;
	char *raw, *work, *file;

#define REBASE(ptr) (work + ((ptr) - src->work_))
	if (src->raw == placed_raw)	/* its line is in its file */
		return stream_rec_reparse(src, e);
	if (!(rec = malloc(size))) {
		err_nomem(e);
		return NULL;
	}
	rec->kv = (struct stream_kv *)(rec + 1);
	raw = (char *)(rec->kv + src->nkv);
	work = raw + n;
	file = work + n;
	memcpy(raw, src->raw, n - 1);
	raw[n - 1] = '\0';
	memcpy(work, src->work_, n);
	memcpy(file, src->file, flen);
	rec->type = REBASE(src->type);
	rec->subject = REBASE(src->subject);
	for (size_t i = 0; i < src->nkv; i++) {
		rec->kv[i].key = REBASE(src->kv[i].key);
		rec->kv[i].val = REBASE(src->kv[i].val);
	}
#undef REBASE
	rec->nkv = src->nkv;
	rec->raw = raw;
	rec->rawlen = src->rawlen;
	rec->file = file;
	rec->line = src->line;
	rec->work_ = work;
	rec->kvcap_ = src->nkv;
	return rec;
}

struct stream_rec *
stream_rec_dup_lean(const struct stream_rec *src, struct err *e)
{
	struct stream_rec *rec;
	size_t tlen = strlen(src->type) + 1, slen = strlen(src->subject) + 1;
	size_t flen = strlen(src->file) + 1, n = src->rawlen + 1;
	char *p;

	if (!(rec = malloc(sizeof *rec + n + tlen + slen + flen))) {
		err_nomem(e);
		return NULL;
	}
	p = (char *)(rec + 1);
	/* a placed record's raw is not its line: read it back */
	if (line_of(src, p, e) < 0) {
		free(rec);
		return NULL;
	}
	p[n - 1] = '\0';
	rec->raw = p;
	rec->type = memcpy(p += n, src->type, tlen);
	rec->subject = memcpy(p += tlen, src->subject, slen);
	rec->file = memcpy(p += slen, src->file, flen);
	rec->rawlen = src->rawlen;
	rec->line = src->line;
	rec->kv = NULL;
	rec->nkv = rec->kvcap_ = 0;
	rec->work_ = NULL;
	return rec;
}

/*
 * A placed record: its line is left in the input file (src), at byte
 * at; sum is its bytes' line_sum(), to tell it is still there. Its raw
 * is placed_raw (no line), by which it is told from other records.
 */
struct placed {
	struct stream_rec rec;		/* first: the record given out */
	struct stream_src *src;
	int64_t at;
	uint64_t sum;
};

/* A sum of n bytes (four lanes of eight bytes, then the tail). */
static uint64_t
line_sum(const char *p, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h[4] = { n, 1, 2, 3 }, w;
	size_t i = 0;

	for (; i + 32 <= n; i += 32)
		for (int j = 0; j < 4; j++) {
			memcpy(&w, p + i + 8 * j, 8);
			h[j] = ((h[j] ^ w) * k) ^ (h[j] >> 29);
		}
	for (; i < n; i++)
		h[0] = (h[0] ^ (unsigned char)p[i]) * k;
	return (h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7)) * k;
}

struct stream_rec *
stream_rec_dup_placed(struct stream_reader *r, struct err *e)
{
	const struct stream_rec *src = &r->rec;
	struct placed *pl;
	size_t tlen = strlen(src->type) + 1, slen = strlen(src->subject) + 1;
	size_t flen = strlen(src->file) + 1;
	char *p;

	if (r->line_at < 0 || r->state != ST_RECORDS ||
	    src->rawlen != r->linelen)
		return stream_rec_dup_lean(src, e);
	if (r->src == NULL) {
		if ((r->src = calloc(1, sizeof *r->src)) == NULL)
			goto nomem;
		if ((r->src->fd = fcntl(fileno(r->fp), F_DUPFD_CLOEXEC,
		    0)) < 0) {
			free(r->src);
			r->src = NULL;
			r->line_at = -1;
			return stream_rec_dup_lean(src, e);
		}
		r->src->refs = 1;
	}
	if (!(pl = malloc(sizeof *pl + tlen + slen + flen)))
		goto nomem;
	p = (char *)(pl + 1);
	pl->rec = *src;
	pl->rec.raw = placed_raw;
	pl->rec.type = memcpy(p, src->type, tlen);
	pl->rec.subject = memcpy(p += tlen, src->subject, slen);
	pl->rec.file = memcpy(p += slen, src->file, flen);
	pl->rec.kv = NULL;
	pl->rec.nkv = pl->rec.kvcap_ = 0;
	pl->rec.work_ = NULL;
	pl->src = r->src;
	pl->src->refs++;
	pl->at = r->line_at;
	pl->sum = line_sum(src->raw, src->rawlen);
	return &pl->rec;
nomem:
	err_nomem(e);
	return NULL;
}

/*
 * rec's line into buf (rec->rawlen bytes): a placed record's read back
 * from its file, checked; -1 with e.
 */
static int
line_of(const struct stream_rec *rec, char *buf, struct err *e)
{
	const struct placed *pl = (const struct placed *)rec;
	size_t got = 0;
	ssize_t n;

	if (rec->raw != placed_raw) {
		memcpy(buf, rec->raw, rec->rawlen);
		return 0;
	}
	errno = 0;
	while (got < rec->rawlen && (n = pread(pl->src->fd, buf + got,
	    rec->rawlen - got, (off_t)(pl->at + (int64_t)got))) > 0)
		got += (size_t)n;
	if (got < rec->rawlen || line_sum(buf, got) != pl->sum)
		return stream_rec_err(rec, e, "%s record: %s", rec->type,
		    got < rec->rawlen && errno ? strerror(errno) :
		    "the input file changed since it was read");
	return 0;
}

struct stream_rec *
stream_rec_reparse(const struct stream_rec *lean, struct err *e)
{
	struct stream_rec t = *lean, *rec = NULL;
	char *line = NULL;
	struct err se;

	t.work_ = NULL;
	t.kv = NULL;
	if (lean->raw == placed_raw) {
		if (!(line = malloc(lean->rawlen + 1)))
			goto nomem;
		if (line_of(lean, line, e) < 0)
			goto out;
		t.raw = line;
	}
	/* It parsed when read: only the splitting is done again. */
	if (!(t.work_ = malloc(lean->rawlen + 1)))
		goto nomem;
	memcpy(t.work_, t.raw, lean->rawlen);
	t.work_[lean->rawlen] = '\0';
	t.kv = NULL;
	t.kvcap_ = 0;
	if (split_record(&t, &se) == 0)
		rec = stream_rec_dup(&t, e);
	else if (strcmp(se.msg, "out of memory") == 0)
		err_nomem(e);
	else
		stream_rec_err(lean, e, "%s record: not as it was read",
		    lean->type);
	goto out;
nomem:
	err_nomem(e);
out:
	free(line);
	free(t.work_);
	free(t.kv);
	return rec;
}

void
stream_rec_free(struct stream_rec *rec)
{
	if (rec && rec->raw == placed_raw)
		src_release(((struct placed *)rec)->src);
	free(rec);
}

const char *
stream_rec_get(const struct stream_rec *rec, const char *key)
{
	for (size_t i = 0; i < rec->nkv; i++)
		if (strcmp(rec->kv[i].key, key) == 0)
			return rec->kv[i].val;
	return NULL;
}

int
stream_rec_has(const struct stream_rec *rec, const char *key)
{
	return stream_rec_get(rec, key) != NULL;
}

int
stream_rec_err(const struct stream_rec *rec, struct err *e, const char *fmt,
    ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return err_set(e, "%s:%ld: %s", rec->file, rec->line, msg);
}

static int
key_err(const struct stream_rec *rec, const char *key, struct err *e,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
key_err(const struct stream_rec *rec, const char *key, struct err *e,
    const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return err_set(e, "%s:%ld: key %s: %s", rec->file, rec->line, key,
	    msg);
}

static const char *
need(const struct stream_rec *rec, const char *key, struct err *e)
{
	const char *v = stream_rec_get(rec, key);

	if (!v)
		key_err(rec, key, e, "missing in %s record", rec->type);
	return v;
}

int
stream_rec_float(const struct stream_rec *rec, const char *key, float *v,
    struct err *e)
{
	const char *s = need(rec, key, e);

	if (!s)
		return -1;
	if (stream_parse_float(s, v) < 0)
		return key_err(rec, key, e, "bad float '%.40s'", s);
	return 0;
}

int
stream_rec_double(const struct stream_rec *rec, const char *key, double *v,
    struct err *e)
{
	const char *s = need(rec, key, e);

	if (!s)
		return -1;
	if (stream_parse_double(s, v) < 0)
		return key_err(rec, key, e, "bad number '%.40s'", s);
	return 0;
}

int
stream_rec_int(const struct stream_rec *rec, const char *key, int64_t *v,
    struct err *e)
{
	const char *s = need(rec, key, e);

	if (!s)
		return -1;
	if (stream_parse_int(s, v) < 0)
		return key_err(rec, key, e, "bad integer '%.40s'", s);
	return 0;
}

int
stream_rec_uint(const struct stream_rec *rec, const char *key, uint64_t *v,
    struct err *e)
{
	const char *s = need(rec, key, e);

	if (!s)
		return -1;
	if (stream_parse_uint(s, v) < 0)
		return key_err(rec, key, e, "bad count '%.40s'", s);
	return 0;
}

int
stream_rec_name(const struct stream_rec *rec, const char *key, char **v,
    struct err *e)
{
	const char *s = need(rec, key, e);
	struct err ue;

	if (!s)
		return -1;
	if (!(*v = stream_unescape(s, &ue)))
		return key_err(rec, key, e, "%s", ue.msg);
	return 0;
}

/* Elements of a comma list: 0 for an empty value, else commas + 1. */
static size_t
list_count(const char *s)
{
	size_t n = 1;

	if (!*s)
		return 0;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

/*
 * Call parse(elem, out + i * size) for each element of the list; errors
 * name the element.
 */
static int
parse_list(const struct stream_rec *rec, const char *key, void **out,
    size_t *n, size_t size, int (*parse)(const char *, void *),
    const char *what, struct err *e)
{
	const char *s = need(rec, key, e);
	char *copy, *p;
	size_t cnt;

	*out = NULL;
	*n = 0;
	if (!s)
		return -1;
	if ((cnt = list_count(s)) == 0)
		return 0;
	if (!(copy = strdup(s)) || !(*out = calloc(cnt, size))) {
		free(copy);
		return key_err(rec, key, e, "out of memory");
	}
	p = copy;
	for (size_t i = 0; i < cnt; i++) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (parse(p, (char *)*out + i * size) < 0) {
			key_err(rec, key, e, "element %zu: bad %s '%.40s'",
			    i + 1, what, p);
			free(copy);
			free(*out);
			*out = NULL;
			return -1;
		}
		if (comma)
			p = comma + 1;
	}
	free(copy);
	*n = cnt;
	return 0;
}

static int
parse_float_v(const char *s, void *v)
{
	return stream_parse_float(s, v);
}

static int
parse_int_v(const char *s, void *v)
{
	return stream_parse_int(s, v);
}

int
stream_rec_floats(const struct stream_rec *rec, const char *key, float **v,
    size_t *n, struct err *e)
{
	return parse_list(rec, key, (void **)v, n, sizeof **v, parse_float_v,
	    "float", e);
}

int
stream_rec_ints(const struct stream_rec *rec, const char *key, int64_t **v,
    size_t *n, struct err *e)
{
	return parse_list(rec, key, (void **)v, n, sizeof **v, parse_int_v,
	    "integer", e);
}

int
stream_rec_names(const struct stream_rec *rec, const char *key, char ***v,
    size_t *n, struct err *e)
{
	const char *s = need(rec, key, e), *p;
	size_t cnt, len;
	char **names, *out;
	struct err ue;

	*v = NULL;
	*n = 0;
	if (!s)
		return -1;
	cnt = list_count(s);
	len = strlen(s);
	if (!(names = malloc(cnt * sizeof *names + len + 1 + cnt)))
		return key_err(rec, key, e, "out of memory");
	out = (char *)(names + cnt);
	p = s;
	for (size_t i = 0; i < cnt; i++) {
		const char *comma = strchr(p, ',');
		size_t el = comma ? (size_t)(comma - p) : strlen(p);

		names[i] = out;
		if (unescape_n(p, el, out, &ue) < 0) {
			free(names);
			return key_err(rec, key, e, "element %zu: %s", i + 1,
			    ue.msg);
		}
		out += strlen(out) + 1;
		p += el + 1;
	}
	*v = names;
	*n = cnt;
	return 0;
}

int
stream_rec_shape(const struct stream_rec *rec, const char *key, int *rank,
    int64_t dims[TENSOR_MAX_RANK], struct err *e)
{
	const char *s = need(rec, key, e), *p;
	int r = 0;

	if (!s)
		return -1;
	if (strcmp(s, "scalar") == 0) {
		*rank = 0;
		return 0;
	}
	for (p = s;;) {
		const char *x = strchr(p, 'x');
		size_t len = x ? (size_t)(x - p) : strlen(p);
		char dim[24];
		uint64_t d;

		if (r == TENSOR_MAX_RANK)
			return key_err(rec, key, e, "shape '%.60s': rank above "
			    "%d", s, TENSOR_MAX_RANK);
		if (len == 1 && *p == '?')
			dims[r++] = -1;
		else {
			if (len == 0 || len >= sizeof dim)
				return key_err(rec, key, e, "bad shape '%.60s'",
				    s);
			memcpy(dim, p, len);
			dim[len] = '\0';
			if (stream_parse_uint(dim, &d) < 0 || d > INT64_MAX)
				return key_err(rec, key, e, "bad shape '%.60s'",
				    s);
			dims[r++] = (int64_t)d;
		}
		if (!x)
			break;
		p = x + 1;
	}
	*rank = r;
	return 0;
}

int
stream_rec_xsum(const struct stream_rec *rec, const char *key,
    struct xsum *x, struct err *e)
{
	const char *s = need(rec, key, e);
	const char *p;
	struct err xe;

	if (!s)
		return -1;
	if (xsum_parse(x, s, &xe) < 0)
		return key_err(rec, key, e, "%s", xe.msg);
	/* sums of finite values: a NaN or infinity is a forged record */
	for (p = s;;) {
		char *end;

		if (!isfinite(strtod(p, &end)))
			return key_err(rec, key, e,
			    "exact sum '%s' is not finite", s);
		if (*end != ':')
			break;
		p = end + 1;
	}
	return 0;
}

/* Writing. */

struct stream_writer {
	FILE *fp;
	char *name;
	struct sbuf line;
	int started;		/* "#onnxq" written */
	int inrec;
	uint64_t nrec;
	int failed;
	struct err err;
};

static void
wfail(struct stream_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
wfail(struct stream_writer *w, const char *fmt, ...)
{
	va_list ap;

	if (w->failed)
		return;
	w->failed = 1;
	va_start(ap, fmt);
	err_vset(&w->err, fmt, ap);
	va_end(ap);
}

struct stream_writer *
stream_writer_new(FILE *fp, const char *name)
{
	struct stream_writer *w = calloc(1, sizeof *w);

	if (!w)
		return NULL;
	if (!(w->name = strdup(name))) {
		free(w);
		return NULL;
	}
	w->fp = fp;
	return w;
}

void
stream_writer_free(struct stream_writer *w)
{
	if (!w)
		return;
	free(w->name);
	free(w->line.p);
	free(w);
}

static void
emit(struct stream_writer *w, const char *s, size_t n)
{
	if (w->failed)
		return;
	if (fwrite(s, 1, n, w->fp) != n)
		wfail(w, "%s: write error: %s", w->name, strerror(errno));
}

static void
start(struct stream_writer *w)
{
	char magic[32];

	if (w->started)
		return;
	w->started = 1;
	snprintf(magic, sizeof magic, "%s\t%d.%d\n", STREAM_MAGIC,
	    STREAM_MAJOR, STREAM_MINOR);
	emit(w, magic, strlen(magic));
}

/* Write w->line plus LF; check the bound and memory. */
static void
emit_line(struct stream_writer *w)
{
	if (w->line.failed) {
		wfail(w, "%s: out of memory", w->name);
		return;
	}
	if (w->line.len > STREAM_LINE_MAX) {
		wfail(w, "%s: line of %zu bytes is longer than the %zu allowed",
		    w->name, w->line.len, STREAM_LINE_MAX);
		return;
	}
	sb_addc(&w->line, '\n');
	if (w->line.failed) {
		wfail(w, "%s: out of memory", w->name);
		return;
	}
	emit(w, w->line.p, w->line.len);
}

static int
header_ok(struct stream_writer *w)
{
	if (w->failed)
		return 0;
	if (w->nrec || w->inrec) {
		wfail(w, "%s: header line after records", w->name);
		return 0;
	}
	start(w);
	w->line.len = 0;
	return 1;
}

void
stream_put_header(struct stream_writer *w, const char *line)
{
	if (!header_ok(w))
		return;
	if (line[0] != '#' || strchr(line, '\n') || strchr(line, '\r') ||
	    strncmp(line, STREAM_MAGIC, strlen(STREAM_MAGIC)) == 0) {
		wfail(w, "%s: bad header line '%.40s'", w->name, line);
		return;
	}
	sb_adds(&w->line, line);
	emit_line(w);
}

void
stream_put_prog(struct stream_writer *w, const char *name,
    const char *version, int argc, char *const *argv)
{
	struct sbuf cmd = { 0 };

	if (!header_ok(w))
		return;
	for (int i = 0; i < argc; i++) {
		if (i)
			sb_addc(&cmd, ' ');
		sb_adds(&cmd, argv[i]);
	}
	sb_adds(&w->line, "#prog\t");
	sb_escape(&w->line, name);
	sb_addc(&w->line, '\t');
	sb_escape(&w->line, version);
	sb_addc(&w->line, '\t');
	if (cmd.failed)
		w->line.failed = 1;
	else if (cmd.len)
		sb_escape(&w->line, cmd.p);
	else
		sb_adds(&w->line, name);
	free(cmd.p);
	emit_line(w);
}

void
stream_put_model(struct stream_writer *w, const char *path,
    const char *sha256, int opset)
{
	char num[32];

	if (!header_ok(w))
		return;
	sb_adds(&w->line, "#model\t");
	sb_escape(&w->line, *path ? path : "-");
	if (sha256) {
		sb_adds(&w->line, "\tsha256=");
		sb_escape(&w->line, sha256);
	}
	if (opset >= 0) {
		snprintf(num, sizeof num, "\topset=%d", opset);
		sb_adds(&w->line, num);
	}
	emit_line(w);
}

void
stream_rec_start(struct stream_writer *w, const char *type,
    const char *subject)
{
	if (w->failed)
		return;
	start(w);
	w->line.len = 0;
	w->inrec = 1;
	if (!word_ok(type) || strcmp(type, "end") == 0) {
		wfail(w, "%s: bad record type '%.40s'", w->name, type);
		return;
	}
	if (!subject || !*subject) {
		wfail(w, "%s: %s record with an empty subject", w->name, type);
		return;
	}
	sb_adds(&w->line, type);
	sb_addc(&w->line, '\t');
	sb_escape(&w->line, subject);
}

/* Append "\tkey=" when the key is good. */
static int
put_key(struct stream_writer *w, const char *key)
{
	if (w->failed)
		return 0;
	if (!w->inrec) {
		wfail(w, "%s: key %s outside a record", w->name, key);
		return 0;
	}
	if (!word_ok(key)) {
		wfail(w, "%s: bad key '%.40s'", w->name, key);
		return 0;
	}
	sb_addc(&w->line, '\t');
	sb_adds(&w->line, key);
	sb_addc(&w->line, '=');
	return 1;
}

void
stream_put_raw(struct stream_writer *w, const char *key, const char *value)
{
	if (put_key(w, key))
		sb_adds(&w->line, value);
}

void
stream_put_name(struct stream_writer *w, const char *key, const char *name)
{
	if (put_key(w, key))
		sb_escape(&w->line, name);
}

void
stream_put_names(struct stream_writer *w, const char *key,
    const char *const *names, size_t n)
{
	if (!put_key(w, key))
		return;
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_addc(&w->line, ',');
		if (names[i])
			sb_escape(&w->line, names[i]);
	}
}

void
stream_put_float(struct stream_writer *w, const char *key, float v)
{
	char buf[STREAM_NUM_MAX];

	if (put_key(w, key))
		sb_adds(&w->line, stream_fmt_float(v, buf));
}

void
stream_put_floats(struct stream_writer *w, const char *key, const float *v,
    size_t n)
{
	char buf[STREAM_NUM_MAX];

	if (!put_key(w, key))
		return;
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_addc(&w->line, ',');
		sb_adds(&w->line, stream_fmt_float(v[i], buf));
	}
}

void
stream_put_double(struct stream_writer *w, const char *key, double v)
{
	char buf[STREAM_NUM_MAX];

	if (put_key(w, key))
		sb_adds(&w->line, stream_fmt_double(v, buf));
}

void
stream_put_int(struct stream_writer *w, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", (long long)v);
	if (put_key(w, key))
		sb_adds(&w->line, buf);
}

void
stream_put_uint(struct stream_writer *w, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	if (put_key(w, key))
		sb_adds(&w->line, buf);
}

void
stream_put_ints(struct stream_writer *w, const char *key, const int64_t *v,
    size_t n)
{
	char buf[32];

	if (!put_key(w, key))
		return;
	for (size_t i = 0; i < n; i++) {
		snprintf(buf, sizeof buf, "%s%lld", i ? "," : "",
		    (long long)v[i]);
		sb_adds(&w->line, buf);
	}
}

void
stream_put_shape(struct stream_writer *w, const char *key, int rank,
    const int64_t *dims)
{
	char buf[32];

	if (!put_key(w, key))
		return;
	if (rank == 0)
		sb_adds(&w->line, "scalar");
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			snprintf(buf, sizeof buf, "%s?", i ? "x" : "");
		else
			snprintf(buf, sizeof buf, "%s%lld", i ? "x" : "",
			    (long long)dims[i]);
		sb_adds(&w->line, buf);
	}
}

void
stream_put_xsum(struct stream_writer *w, const char *key,
    const struct xsum *x)
{
	char buf[XSUM_TEXT_MAX];

	if (put_key(w, key))
		sb_adds(&w->line, xsum_format(x, buf));
}

void
stream_put_unknown(struct stream_writer *w, const struct stream_rec *rec,
    const char *const *known)
{
	for (size_t i = 0; i < rec->nkv; i++) {
		const char *const *k;

		for (k = known; *k; k++)
			if (strcmp(*k, rec->kv[i].key) == 0)
				break;
		if (!*k)
			stream_put_raw(w, rec->kv[i].key, rec->kv[i].val);
	}
}

void
stream_rec_done(struct stream_writer *w)
{
	if (w->failed)
		return;
	if (!w->inrec) {
		wfail(w, "%s: record done without a start", w->name);
		return;
	}
	w->inrec = 0;
	emit_line(w);
	w->nrec++;
}

size_t
stream_rec_len(const struct stream_writer *w)
{
	return w->line.len;
}

void
stream_put_rec(struct stream_writer *w, const struct stream_rec *rec)
{
	if (w->failed)
		return;
	if (w->inrec) {
		wfail(w, "%s: record inside a record", w->name);
		return;
	}
	start(w);
	w->line.len = 0;
	if (rec->raw != placed_raw)
		sb_addn(&w->line, rec->raw, rec->rawlen);
	else if (sb_reserve(&w->line, rec->rawlen) == 0) {
		struct err e;

		if (line_of(rec, w->line.p, &e) < 0) {
			wfail(w, "%s", e.msg);
			return;
		}
		w->line.len = rec->rawlen;
		w->line.p[w->line.len] = '\0';
	}
	emit_line(w);
	w->nrec++;
}

uint64_t
stream_nrecords(const struct stream_writer *w)
{
	return w->nrec;
}

int
stream_writer_error(const struct stream_writer *w, struct err *e)
{
	if (!w->failed)
		return 0;
	if (e)
		*e = w->err;
	return -1;
}

int
stream_write_end(struct stream_writer *w, struct err *e)
{
	char buf[48];

	if (w->inrec)
		wfail(w, "%s: unfinished record at the end", w->name);
	start(w);
	snprintf(buf, sizeof buf, "end\t%llu\n", (unsigned long long)w->nrec);
	emit(w, buf, strlen(buf));
	if (!w->failed && fflush(w->fp) == EOF)
		wfail(w, "%s: write error: %s", w->name, strerror(errno));
	return stream_writer_error(w, e);
}
