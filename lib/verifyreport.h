/*
 * verifyreport: onnx-verify's report, written as an aligned table, as TSV
 * or as JSON, and the SVG plot of its per-tensor SNRs; the columns and
 * keys are those onnx-verify(1) documents. In the table and TSV, names
 * are escaped as the stream format does (stream_escape), undefined
 * figures are "-" and infinities "inf"; in JSON, null and 1e999.
 *
 * Errors (out of memory, the plot's) come back in struct err, and then
 * part of the report may have been written; write errors of fp are the
 * caller's to check.
 */
#ifndef ONNXQ_VERIFYREPORT_H
#define ONNXQ_VERIFYREPORT_H

#include <stdio.h>

#include "dataset.h"
#include "err.h"
#include "qdqerr.h"
#include "verdict.h"

enum verifyreport_format {
	VERIFYREPORT_TABLE, VERIFYREPORT_TSV, VERIFYREPORT_JSON
};

struct verifyreport {
	const char *model, *qmodel;	/* qmodel NULL: the one-model form */
	const struct dataset *ds;	/* names the worst samples */
	int nout;
	const struct verdict_row *rows;	/* judged (verdict_judge) */
	int two;		/* the two-model form */
	int show_top1;		/* one-model table: the top-1 columns */
	const struct qdqerr *pt;	/* NULL without --per-tensor */
	const int *sorted;	/* pair indices in report order */
};

/* worse: verdict_judge's result, for JSON's status. */
int verifyreport_write(FILE *fp, const struct verifyreport *rp, int format,
    int worse, struct err *e);

/* The per-tensor SNRs along the graph (svgplot.h). */
int verifyreport_plot(FILE *fp, const struct qdqerr *pt, struct err *e);

#endif
