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
 * Anchors and aliases are refused, so a small file cannot expand.
 */
#ifndef ONNXQ_CONFIG_H
#define ONNXQ_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "err.h"
#include "settings.h"
#include "tensor.h"

/* Larger files are refused before parsing. */
#define CONFIG_MAX_BYTES ((long)16 << 20)
/* Messages kept; further ones are counted in config_msgs.dropped. */
#define CONFIG_MAX_MSGS 1000

struct config_msgs {
	char **v;		/* malloc'd strings */
	size_t n, cap;
	size_t dropped;
};

void config_msgs_release(struct config_msgs *m);

/* Where a key or value was in the file; line 0 when not from a file. */
struct config_pos {
	int line, col;		/* 1-based */
};

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

struct config_list {
	char **v;
	struct config_pos *pos;
	size_t n;
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

/*
 * Reading YAML as config files are read, for the toolchain's other YAML
 * files (onnxq-regions(5)). The caller parses the document and fills
 * name, doc, nnodes, seen (nnodes bytes, zeroed), msgs and arg. Problems
 * become messages "FILE:LINE:COL: CTX: PROBLEM" (control bytes as %HH),
 * counted in nerr; out of memory sets nomem. Every node is taken once,
 * so a node reached twice (an alias) is refused.
 */
struct config_yaml {
	const char *name;		/* the file, for messages */
	yaml_document_t *doc;
	unsigned char *seen;		/* node ids taken */
	size_t nnodes;
	struct config_msgs *msgs;
	size_t nerr;			/* problems reported */
	int nomem;
	void *arg;			/* the caller's */
};

/* Append s (malloc'd, taken; NULL means out of memory). -1: no memory. */
int config_msgs_add(struct config_msgs *m, char *s);
/* A malloc'd copy of s with control bytes as %HH; NULL: no memory. */
char *config_printable(const char *s);

void config_yaml_diag(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx, const char *f, ...) __attribute__((format(printf, 4, 5)));
/* A libyaml parse or load error as a message. */
void config_yaml_parse_error(struct config_yaml *y, yaml_parser_t *p);
/*
 * The node with this id, marked taken; NULL, and a message at blame (or
 * at the node) when it was taken before.
 */
yaml_node_t *config_yaml_take(struct config_yaml *y, int id,
    const char *ctx, const yaml_node_t *blame);
/* "a value", "a list", "a mapping". */
const char *config_yaml_kind(const yaml_node_t *n);
/* A non-empty scalar's text, or NULL and a message. */
const char *config_yaml_scalar(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx);
/* true/false, yes/no, on/off: 0, or -1 and a message. */
int config_yaml_bool(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx, int *v);
/*
 * A name or a list of names into *out (which the caller releases with
 * config_list_release); -1 when some item was bad (the good ones kept).
 */
int config_yaml_strlist(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx, struct config_list *out);
void config_list_release(struct config_list *l);

/*
 * fn for each pair of a mapping whose key is a plain name not seen
 * before in it; other keys are reported. ks is the key's text.
 */
typedef void config_yaml_pair_fn(struct config_yaml *y, void *arg,
    const char *ks, const yaml_node_t *kn, const yaml_node_t *v,
    const char *ctx);
void config_yaml_each_pair(struct config_yaml *y, const yaml_node_t *map,
    const char *ctx, config_yaml_pair_fn *fn, void *arg);

#endif
