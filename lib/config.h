/*
 * config: a quantization recipe in YAML (man/man5/onnxq-config.5 is the
 * normative description): global settings (types, symmetry, methods,
 * per-channel, node and op-type selections) and per-tensor overrides that
 * can say everything ONNX Runtime's TensorQuantOverrides can (quant_type,
 * scale + zero_point, symmetric, reduce_range, rmin, rmax, axis,
 * per-channel lists, convert {quant_type, recv_nodes, ...}) and a little
 * more (method, percentile, power_of_two).
 *
 * Loading checks every entry, not just the first: each problem becomes
 * one message "FILE:LINE:COL: CONTEXT: PROBLEM" in a struct config_msgs,
 * and config_load() fails if there was any. What needs the stream
 * (tensor names, which tensors are weights, channel counts, node names)
 * is checked by config_validate() once the stream has been read, with
 * the same kind of messages.
 *
 * A struct config owns everything it points to; config_free() frees it.
 * The file is read with yamldoc.h: anchors and aliases are refused, so a
 * small file cannot expand, and so is nesting deeper than
 * CONFIG_YAML_MAX_DEPTH, which libyaml would take hours to load.
 * config.h includes msgs.h and yamldoc.h, whose config_msgs_* and
 * config_yaml_* the toolchain's other YAML readers share.
 */
#ifndef ONNXQ_CONFIG_H
#define ONNXQ_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "msgs.h"
#include "settings.h"
#include "tensor.h"
#include "yamldoc.h"

/* Larger files are refused before parsing. */
#define CONFIG_MAX_BYTES ((long)16 << 20)

/* Keys of a tensor override (and of its convert mapping). */
enum config_key {
	CK_QUANT_TYPE,
	CK_SCALE,
	CK_ZERO_POINT,
	CK_SYMMETRIC,
	CK_REDUCE_RANGE,
	CK_RMIN,
	CK_RMAX,
	CK_AXIS,
	CK_METHOD,
	CK_PERCENTILE,
	CK_POW2,
	CK_CONVERT,
	CK_RECV_NODES,
	CK_N
};

struct config_spec {
	unsigned set;			/* 1u << CK_* for every key given */
	struct config_pos pos[CK_N];
	int quant_type;			/* DT_UINT8 ... DT_INT4 */
	int symmetric, reduce_range, pow2;
	int method;			/* enum rangesel_method */
	double percentile;
	int axis;			/* as written; may be negative */
	int per_channel;		/* values given per channel */
	size_t n;			/* entries of the arrays below (>= 1) */
	float *scale;			/* when CK_SCALE is set */
	int64_t *zero_point;		/* when CK_ZERO_POINT is set */
	float *rmin, *rmax;		/* when CK_RMIN / CK_RMAX are set */
};

struct config_tensor {
	char *name;
	struct config_pos pos;		/* of the name */
	struct config_spec spec;
	int has_convert;
	struct config_spec convert;	/* CK_RECV_NODES in convert.set */
	char **recv_nodes;		/* NULL: every consumer */
	size_t nrecv;
	struct config_pos *recv_pos;
};


struct config {
	char *path;
	struct settings g;		/* the file's global settings
					   (settings.h): set, positions */
	struct config_list nodes_include, nodes_exclude;
	struct config_list ops_include, ops_exclude;
	struct config_tensor *t;	/* in file order */
	size_t nt;
	struct strmap *index;		/* name -> index into t */
};

/*
 * Load and check path. On any problem returns NULL, every problem in msgs
 * (appended; the caller releases them) and a summary in e ("FILE: N
 * errors"); I/O errors and out of memory only in e.
 */
struct config *config_load(const char *path, struct config_msgs *msgs,
    struct err *e);
/* The same from memory; name is used in messages. */
struct config *config_load_mem(const char *name, const char *text,
    size_t len, struct config_msgs *msgs, struct err *e);
void config_free(struct config *c);
/* The override of a tensor, or NULL. */
const struct config_tensor *config_find(const struct config *c,
    const char *name);

/* What the stream says about a tensor. */
enum config_kind {
	CONFIG_UNKNOWN,			/* not in the stream */
	CONFIG_ACTIVATION,
	CONFIG_WEIGHT,
	CONFIG_BIAS,
};

struct config_target {
	int kind;			/* enum config_kind */
	int rank;			/* weights and biases; -1 if not known */
	int64_t dims[TENSOR_MAX_RANK];
	int axis;			/* the consumer's channel axis, -1 none */
};

/* The stream's answers for config_validate(). */
struct config_world {
	void *arg;
	/* Fill *t (kind CONFIG_UNKNOWN when absent). */
	void (*tensor)(void *arg, const char *name, struct config_target *t);
	/* 1 a known node, 0 unknown, -1 no node records to tell. */
	int (*node)(void *arg, const char *name);
	/* 1 when node reads tensor, 0 not, -1 cannot tell. */
	int (*consumes)(void *arg, const char *node, const char *tensor);
	int act_type, weight_type;	/* the defaults in effect */
};

/*
 * Check the overrides against the stream: unknown tensors and nodes,
 * per-channel overrides or methods on activations/weights where they do
 * not apply, channel counts and axes, zero points the effective type
 * cannot hold, convert types equal to the original. Every problem is
 * appended to msgs; returns the number of problems (0: all good).
 */
size_t config_validate(const struct config *c, const struct config_world *w,
    struct config_msgs *msgs);

#endif
