/*
 * yamldoc: reading a YAML file the toolchain's way, for every YAML it
 * reads (recipes, onnxq-config(5); regions files, onnxq-regions(5)).
 *
 * config_yaml_open() parses the text in two passes: libyaml's event
 * parser first, refusing collections nested deeper than
 * CONFIG_YAML_MAX_DEPTH (libyaml's document loader takes time quadratic
 * in the depth: a 2 MB file of '[' would take an hour), then the loader.
 * The caller walks the document from its root with the functions below,
 * calls config_yaml_one_doc() to refuse a second document, and
 * config_yaml_close().
 *
 * Every problem becomes one message "FILE:LINE:COL: CTX: PROBLEM" in
 * y->msgs (msgs.h; control bytes as %HH), counted in y->nerr; running
 * out of memory sets y->nomem instead. Every node is taken once, so a
 * node reached twice (an alias) is refused, and a small file cannot
 * expand.
 */
#ifndef ONNXQ_YAMLDOC_H
#define ONNXQ_YAMLDOC_H

#include <stddef.h>

#include <yaml.h>

#include "msgs.h"

/* Collections nested deeper than this are refused before loading. */
#define CONFIG_YAML_MAX_DEPTH 64

/*
 * The caller zeroes it and sets name, msgs and arg; config_yaml_open()
 * sets doc, seen and nnodes (a caller that loads the document itself
 * sets them: seen is nnodes zeroed bytes).
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
	yaml_parser_t *parser;		/* config_yaml_open's */
};

/* Names with where they were; config_list_release() frees them. */
struct config_list {
	char **v;
	struct config_pos *pos;
	size_t n;
};

/*
 * Check the depth of text (len bytes, which must stay until
 * config_yaml_close), then load its first document into y->doc. 0 when
 * loaded (a document without a root node when the text is empty); -1
 * when refused or malformed (a message) or out of memory (y->nomem).
 */
int config_yaml_open(struct config_yaml *y, const char *text, size_t len);
/* After the walk: a second document is refused (a message at it). */
void config_yaml_one_doc(struct config_yaml *y);
/* Free what config_yaml_open() made; y's counts and messages stay. */
void config_yaml_close(struct config_yaml *y);
/*
 * 0 when no collection in text nests deeper than CONFIG_YAML_MAX_DEPTH;
 * -1 and the message "NAME:LINE:COL: nesting deeper than 64 levels" at
 * the first that does (or y->nomem). Malformed YAML is left to the
 * loader to report. Reads no further than the first collection too
 * deep, so it takes time linear in the length. config_yaml_open() calls
 * it; a caller that loads the document itself calls it first.
 */
int config_yaml_check_depth(struct config_yaml *y, const char *text,
    size_t len);

void config_yaml_diag(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx, const char *f, ...) __attribute__((format(printf, 4, 5)));
/* A libyaml parse or load error as a message. */
void config_yaml_parse_error(struct config_yaml *y, yaml_parser_t *p);
/* Where n starts ({ 0, 0 } for NULL). */
struct config_pos config_yaml_pos(const yaml_node_t *n);
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
