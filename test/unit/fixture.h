/*
 * fixture: the test models of test/data, loaded for unit tests that run
 * from the top of the source tree, and those make check generates. A model that does not load is
 * reported on stderr and comes back NULL, for REQUIRE(m != NULL).
 */
#ifndef ONNXQ_FIXTURE_H
#define ONNXQ_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "unit.h"

UNIT_FN struct model *
fixture_model(const char *path)
{
	struct err e;
	struct model *m = model_load(path, &e);

	if (!m)
		fprintf(stderr, "%s\n", e.msg);
	return m;
}

/*
 * A model make check generates from a test/data/DIR/make-fixtures.py
 * into $ONNXQ_FIXTURES (rel: "DIR/NAME.onnx"), or NULL.
 */
UNIT_FN struct model *
fixture_generated(const char *rel)
{
	const char *dir = getenv("ONNXQ_FIXTURES");
	char path[4096];

	if (!dir) {
		fprintf(stderr, "ONNXQ_FIXTURES is not set (run make check)\n");
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	return fixture_model(path);
}

#endif
