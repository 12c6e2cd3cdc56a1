/*
 * stream: read and write the onnxq text stream (man/man5/onnxq-stream.5,
 * the normative grammar): a "#onnxq<TAB>1.0" line, header lines starting
 * with '#', records "TYPE<TAB>SUBJECT<TAB>key=value...", "end<TAB>N".
 *
 * Reading. stream_reader_new() checks the first line; stream_next() then
 * yields header lines and records one at a time and, at the end, checks
 * the end record's count and that nothing follows it. A line is bounded
 * (STREAM_LINE_MAX by default), so a hostile stream cannot exhaust
 * memory. Every error names the file and line: "FILE:LINE: ...", and the
 * typed getters add the key: "FILE:LINE: key min: bad float 'x'".
 *
 * The current record belongs to the reader and is overwritten by the next
 * stream_next(); stream_rec_dup() makes a copy the caller owns. Unknown
 * record types and keys are kept: stream_put_rec() writes a record back
 * byte for byte, stream_put_unknown() the keys a filter does not know.
 *
 * Writing. A stream_writer formats into a line buffer and writes whole
 * lines to a FILE it does not own. The stream_put_* calls do not fail one
 * by one: an error (out of memory, a bad key, a line too long, a write
 * error) is remembered, later calls do nothing, and stream_write_end()
 * reports it. So a writer's caller checks once, at the end.
 *
 * Numbers: floats are written as the shortest of %.6g..%.9g that reads
 * back to the same bits, doubles the shortest of %.15g..%.17g; "inf",
 * "-inf", "nan". Names, list elements and header values are
 * percent-escaped (bytes 0x00-0x20, 0x7F, '%', ',', '=' as %HH).
 */
#ifndef ONNXQ_STREAM_H
#define ONNXQ_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "tensor.h"
#include "xsum.h"

#define STREAM_MAGIC "#onnxq"
#define STREAM_MAJOR 1
#define STREAM_MINOR 0
#define STREAM_LINE_MAX ((size_t)64 << 20)
/* Room stream_fmt_float / stream_fmt_double need, NUL included. */
#define STREAM_NUM_MAX 32

struct stream_kv {
	const char *key;
	const char *val;	/* raw, as written (escaped) */
};

/* A record. All pointers point into storage the record owns. */
struct stream_rec {
	const char *type;	/* "stat", "hist", ... */
	const char *subject;	/* unescaped */
	struct stream_kv *kv;	/* in line order */
	size_t nkv;
	const char *raw;	/* the whole line, without its LF */
	size_t rawlen;
	const char *file;	/* where it was read, for messages */
	long line;
	/* private */
	char *work_;
	size_t kvcap_;
};

/* Reading. */

struct stream_reader;

enum stream_item {
	STREAM_EOF = 0,		/* end record read and checked */
	STREAM_HEADER = 1,	/* stream_header() */
	STREAM_RECORD = 2,	/* stream_record() */
};

/*
 * Read from fp (not closed by the reader); name is used in messages.
 * Reads and checks the "#onnxq" line. NULL with "NAME:1: ..." on error.
 */
struct stream_reader *stream_reader_new(FILE *fp, const char *name,
    struct err *e);
/* Open path ("-" is stdin, named "<stdin>"); the reader closes it. */
struct stream_reader *stream_open(const char *path, struct err *e);
void stream_reader_free(struct stream_reader *r);
/* Lower the line bound (tests); 0 restores STREAM_LINE_MAX. */
void stream_reader_set_max_line(struct stream_reader *r, size_t max);

/* STREAM_HEADER, STREAM_RECORD, STREAM_EOF, or -1 (and every later call -1). */
int stream_next(struct stream_reader *r, struct err *e);
const char *stream_name(const struct stream_reader *r);
long stream_lineno(const struct stream_reader *r);
int stream_minor(const struct stream_reader *r);	/* the "1.x" read */
/* The current header line, without its LF. */
const char *stream_header(const struct stream_reader *r);
/* Field i (TAB-separated, 0 is "#word") of the current header; NULL past the end. */
const char *stream_header_field(const struct stream_reader *r, size_t i);
/* The current record. */
const struct stream_rec *stream_record(const struct stream_reader *r);

/* Records. */

struct stream_rec *stream_rec_dup(const struct stream_rec *rec, struct err *e);
/*
 * A copy of rec to keep many of at little cost: its line, type and
 * subject, no fields (stream_rec_get() finds none); stream_rec_reparse()
 * gives the whole record back. Freed with stream_rec_free().
 */
struct stream_rec *stream_rec_dup_lean(const struct stream_rec *rec,
    struct err *e);
/*
 * A lean copy of r's current record that holds not even its line when
 * r reads a regular file: where the line is in it, read again (checked
 * against a sum of its bytes) by stream_rec_reparse() and stream_put_rec()
 * (a writer error if it changed). Other input: stream_rec_dup_lean().
 * The copy keeps a descriptor of the file (shared, not thread-safe)
 * open until the reader and all such copies are freed; it may outlive
 * the reader.
 */
struct stream_rec *stream_rec_dup_placed(struct stream_reader *r,
    struct err *e);
/* The whole record of a lean copy, split again (stream_rec_dup()'s). */
struct stream_rec *stream_rec_reparse(const struct stream_rec *lean,
    struct err *e);
void stream_rec_free(struct stream_rec *rec);
/* The raw value of key, or NULL. */
const char *stream_rec_get(const struct stream_rec *rec, const char *key);
int stream_rec_has(const struct stream_rec *rec, const char *key);
/*
 * Typed getters: 0 and *v set, or -1 with "FILE:LINE: key K: ..." when
 * the key is missing or its value malformed. Use stream_rec_has() first
 * for optional keys. Lists (comma-separated; an empty value is the empty
 * list) are malloc'd; stream_rec_names() returns one block holding the
 * pointers and the unescaped strings (absent list elements are ""): free(*v).
 */
int stream_rec_float(const struct stream_rec *rec, const char *key, float *v,
    struct err *e);
int stream_rec_double(const struct stream_rec *rec, const char *key,
    double *v, struct err *e);
int stream_rec_int(const struct stream_rec *rec, const char *key, int64_t *v,
    struct err *e);
int stream_rec_uint(const struct stream_rec *rec, const char *key,
    uint64_t *v, struct err *e);
int stream_rec_name(const struct stream_rec *rec, const char *key, char **v,
    struct err *e);
int stream_rec_floats(const struct stream_rec *rec, const char *key,
    float **v, size_t *n, struct err *e);
int stream_rec_ints(const struct stream_rec *rec, const char *key,
    int64_t **v, size_t *n, struct err *e);
int stream_rec_names(const struct stream_rec *rec, const char *key,
    char ***v, size_t *n, struct err *e);
/* "1x3x?x4" (dims -1 where "?"), "scalar" for rank 0. */
int stream_rec_shape(const struct stream_rec *rec, const char *key,
    int *rank, int64_t dims[TENSOR_MAX_RANK], struct err *e);
int stream_rec_xsum(const struct stream_rec *rec, const char *key,
    struct xsum *x, struct err *e);
/* Set "FILE:LINE: msg" for a record-level problem; returns -1. */
int stream_rec_err(const struct stream_rec *rec, struct err *e,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Values, without context (the caller adds it). 0 or -1. */
int stream_parse_float(const char *s, float *v);
int stream_parse_double(const char *s, double *v);
int stream_parse_int(const char *s, int64_t *v);
int stream_parse_uint(const char *s, uint64_t *v);
/* Unescape into a malloc'd string; NULL with a message on a bad escape. */
char *stream_unescape(const char *s, struct err *e);
/* Escape into a malloc'd string; NULL when out of memory. */
char *stream_escape(const char *s);
/* buf holds STREAM_NUM_MAX bytes; returns buf. */
char *stream_fmt_float(float f, char *buf);
char *stream_fmt_double(double d, char *buf);

/* Writing. */

struct stream_writer;

/* fp is not closed; name is used in messages (the output path). */
struct stream_writer *stream_writer_new(FILE *fp, const char *name);
void stream_writer_free(struct stream_writer *w);

/*
 * Header lines; the "#onnxq" line is written before the first line of any
 * kind. stream_put_header() writes a header line as read elsewhere
 * (without LF, starting with '#'). stream_put_prog() writes this
 * program's provenance: "#prog NAME VERSION CMDLINE" with argv joined by
 * spaces. stream_put_model(): "#model PATH sha256=HEX opset=N" (sha256
 * NULL and opset < 0 are left out).
 */
void stream_put_header(struct stream_writer *w, const char *line);
void stream_put_prog(struct stream_writer *w, const char *name,
    const char *version, int argc, char *const *argv);
void stream_put_model(struct stream_writer *w, const char *path,
    const char *sha256, int opset);

/* A record: stream_rec_start, stream_put_* for each key, stream_rec_done. */
void stream_rec_start(struct stream_writer *w, const char *type,
    const char *subject);
/* value written as is: must already be free of TAB, space, LF. */
void stream_put_raw(struct stream_writer *w, const char *key,
    const char *value);
void stream_put_name(struct stream_writer *w, const char *key,
    const char *name);
/* names[i] NULL or "" is an absent element. */
void stream_put_names(struct stream_writer *w, const char *key,
    const char *const *names, size_t n);
void stream_put_float(struct stream_writer *w, const char *key, float v);
void stream_put_floats(struct stream_writer *w, const char *key,
    const float *v, size_t n);
void stream_put_double(struct stream_writer *w, const char *key, double v);
void stream_put_int(struct stream_writer *w, const char *key, int64_t v);
void stream_put_uint(struct stream_writer *w, const char *key, uint64_t v);
void stream_put_ints(struct stream_writer *w, const char *key,
    const int64_t *v, size_t n);
/* dims[i] < 0 is written "?". */
void stream_put_shape(struct stream_writer *w, const char *key, int rank,
    const int64_t *dims);
void stream_put_xsum(struct stream_writer *w, const char *key,
    const struct xsum *x);
/* Every key of rec not in known (NULL-terminated), in rec's order. */
void stream_put_unknown(struct stream_writer *w, const struct stream_rec *rec,
    const char *const *known);
void stream_rec_done(struct stream_writer *w);
/* Length of the record line being built so far (for splitting long records). */
size_t stream_rec_len(const struct stream_writer *w);
/* A record read elsewhere, byte for byte. */
void stream_put_rec(struct stream_writer *w, const struct stream_rec *rec);

/* Records written so far. */
uint64_t stream_nrecords(const struct stream_writer *w);
/* The error remembered so far, if any: -1 and e filled, else 0. */
int stream_writer_error(const struct stream_writer *w, struct err *e);
/* Write "end N" and flush; -1 with the first error of the whole writing. */
int stream_write_end(struct stream_writer *w, struct err *e);

#endif
