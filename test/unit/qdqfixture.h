/*
 * qdqfixture: a test model rewritten by qdq_apply() from a stream given as
 * text, for the unit tests of the QDQ writer's passes. A failure is
 * reported on stderr and comes back NULL, for REQUIRE(m != NULL).
 */
#ifndef ONNXQ_QDQFIXTURE_H
#define ONNXQ_QDQFIXTURE_H

#include <stdio.h>
#include <string.h>

#include "model.h"
#include "prep.h"
#include "qdq.h"
#include "stream.h"
#include "unit.h"

/* m (taken: freed on failure) prepared and rewritten by text under o. */
UNIT_FN struct model *
qdqfixture_apply(struct model *m, const char *text,
    const struct qdq_opts *o, struct qdq_report *rep)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	struct stream_reader *r = NULL;
	struct qdq_plan *p = qdq_plan_new();
	struct err e = { 0 };
	int ok = 0;

	if (fp && p && m && (r = stream_reader_new(fp, "s", &e)) &&
	    qdq_plan_read(p, r, &e) == 0 && prep_model(m, NULL, &e) == 0 &&
	    qdq_apply(m, p, o, rep, &e) == 0)
		ok = 1;
	else if (m)
		fprintf(stderr, "%s\n", e.msg);
	stream_reader_free(r);
	qdq_plan_free(p);
	if (fp)
		fclose(fp);
	if (!ok) {
		model_free(m);
		return NULL;
	}
	return m;
}

#endif
