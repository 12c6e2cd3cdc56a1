/*
 * fixture: the test models of test/data, loaded for unit tests that run
 * from the top of the source tree. A model that does not load is
 * reported on stderr and comes back NULL, for REQUIRE(m != NULL).
 */
#ifndef ONNXQ_FIXTURE_H
#define ONNXQ_FIXTURE_H

#include <stdio.h>

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

#endif
