/*
 * blockq: onnx-qparams --weight-only, the decisions of weight-only
 * blockwise quantization (onnx-qparams(1), WEIGHT-ONLY). Which weights:
 * input B of a MatMul of the default domain, a constant 2-D float K x N
 * read by that node only; every other weight stays float, with a note
 * saying why. What: one blockq record per such weight (records.h), its
 * type, block size, method and symmetry from the settings. The per-block
 * scales are not computed here but where the weights are read
 * (onnx-qdq-insert, nbitsq.h), so the stream grows with the number of
 * weights, not of blocks.
 *
 * blockq_filter() reads a stream, writes it back unchanged with the
 * program's #prog line after the headers and a blockq record after each
 * weight record it quantizes. Node records must come before the weight
 * records (onnx-calib writes them so). Errors are the stream's.
 */
#ifndef ONNXQ_BLOCKQ_H
#define ONNXQ_BLOCKQ_H

#include <stdarg.h>

#include "err.h"
#include "records.h"
#include "settings.h"
#include "stream.h"

struct blockq_opts {
	int type;			/* DT_INT4, DT_UINT4, DT_INT8, DT_UINT8 */
	int block;			/* power of two, 16..256 */
	enum blockq_method method;
	int symmetric;
	/* The #prog line: stream_put_prog's arguments. */
	const char *prog, *version;
	int argc;
	char **argv;
	void (*note)(const char *fmt, va_list ap);	/* may be NULL */
};

/*
 * The options the settings give: type (default int4 unless set), block
 * size, method (hqq unless --rtn), symmetry (asymmetric unless set; a
 * symmetric type has no zero point to optimise, so hqq becomes rtn).
 * -1 with a message when the block size is not a power of two or the
 * type not a weight-only one.
 */
int blockq_opts_from_settings(struct blockq_opts *o, const struct settings *s,
    struct err *e);

/*
 * Whether w is quantized: 1 and *b filled (b owns copies), 0 (a note
 * written), or -1 out of memory.
 */
int blockq_decide(const struct node_index *ix, const struct wb_rec *w,
    const struct blockq_opts *o, struct blockq_rec *b, struct err *e);

/* The whole filter; the number of blockq records written, or -1. */
long blockq_filter(struct stream_reader *r, struct stream_writer *w,
    const struct blockq_opts *o, struct err *e);

#endif
