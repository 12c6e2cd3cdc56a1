/*
 * regions: the REGIONS.yaml files onnx-mixprec reads (onnxq-regions(5)),
 * parsed and checked with config's YAML walking (config.h), names left
 * unresolved (mixprec_request_regions() resolves them against a stream).
 *
 * Ownership: struct mixprec_regions owns its strings. Messages are
 * malloc'd strings in struct config_msgs, released with
 * config_msgs_release() (config.h).
 */
#ifndef ONNXQ_REGIONS_H
#define ONNXQ_REGIONS_H

#include <stddef.h>

#include "config.h"
#include "err.h"

/* Larger regions files are refused before parsing. */
#define MIXPREC_REGIONS_MAX_BYTES ((long)16 << 20)

/*
 * What a region asks for: a type (DT_UINT16, ... or DT_FLOAT) and,
 * optionally, the grid's flags (-1: each tensor keeps its own).
 */
struct mixprec_type {
	int type;
	int symmetric, reduce_range, pow2;
};

/* Regions as a REGIONS.yaml file gives them (onnxq-regions(5)). */
struct mixprec_region {
	char *label;			/* "region 2" or "region 2 (NAME)" */
	int line, col;			/* of the region in the file; 0: none */
	struct mixprec_type t;
	struct config_list nodes, tensors, ops;	/* names, positions */
};

struct mixprec_regions {
	char *path;
	struct mixprec_region *v;
	size_t n;
};

/*
 * Load and check a regions file. On any problem: NULL, every problem in
 * msgs ("FILE:LINE:COL: region 2: type: unknown type 'uint9'") and a
 * summary in e; I/O errors and out of memory only in e.
 */
struct mixprec_regions *mixprec_regions_load(const char *path,
    struct config_msgs *msgs, struct err *e);
/* The same from memory; name stands for the file in messages. */
struct mixprec_regions *mixprec_regions_load_mem(const char *name,
    const char *text, size_t len, struct config_msgs *msgs, struct err *e);
void mixprec_regions_free(struct mixprec_regions *rg);

#endif
