/* yamldoc: see yamldoc.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "strmap.h"
#include "util.h"
#include "yamldoc.h"

/* Opening and closing. */

int
config_yaml_check_depth(struct config_yaml *y, const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = 0;

	if (!yaml_parser_initialize(&p)) {
		y->nomem = 1;
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		yaml_event_type_t t;
		struct config_pos pos;

		/* A parse error is the loader's to report, as it would. */
		if (!yaml_parser_parse(&p, &ev))
			break;
		t = ev.type;
		pos.line = (int)ev.start_mark.line + 1;
		pos.col = (int)ev.start_mark.column + 1;
		yaml_event_delete(&ev);
		if (t == YAML_STREAM_END_EVENT)
			break;
		if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
			depth--;
		else if ((t == YAML_SEQUENCE_START_EVENT ||
		    t == YAML_MAPPING_START_EVENT) &&
		    ++depth > CONFIG_YAML_MAX_DEPTH) {
			y->nerr++;
			if (config_msgs_addf(y->msgs, y->name, pos, "",
			    "nesting deeper than %d levels",
			    CONFIG_YAML_MAX_DEPTH) < 0)
				y->nomem = 1;
			rc = -1;
			break;
		}
	}
	if (p.error == YAML_MEMORY_ERROR) {
		y->nomem = 1;
		rc = -1;
	}
	yaml_parser_delete(&p);
	return rc;
}

int
config_yaml_open(struct config_yaml *y, const char *text, size_t len)
{
	if (config_yaml_check_depth(y, text, len) < 0)
		return -1;
	if ((y->parser = malloc(sizeof *y->parser)) == NULL)
		goto nomem;
	if (!yaml_parser_initialize(y->parser)) {
		free(y->parser);
		y->parser = NULL;
		goto nomem;
	}
	yaml_parser_set_input_string(y->parser, (const unsigned char *)text,
	    len);
	if ((y->doc = malloc(sizeof *y->doc)) == NULL)
		goto nomem;
	if (!yaml_parser_load(y->parser, y->doc)) {
		free(y->doc);
		y->doc = NULL;
		config_yaml_parse_error(y, y->parser);
		return -1;
	}
	y->nnodes = (size_t)(y->doc->nodes.top - y->doc->nodes.start);
	if ((y->seen = calloc(y->nnodes ? y->nnodes : 1, 1)) == NULL)
		goto nomem;
	return 0;
nomem:
	y->nomem = 1;
	return -1;
}

void
config_yaml_one_doc(struct config_yaml *y)
{
	yaml_document_t doc2;
	yaml_node_t *root;

	if (!yaml_parser_load(y->parser, &doc2)) {
		config_yaml_parse_error(y, y->parser);
		return;
	}
	/* A second document is a mistake, not a continuation. */
	if ((root = yaml_document_get_root_node(&doc2)) != NULL)
		config_yaml_diag(y, root, "", "only one YAML document is "
		    "allowed");
	yaml_document_delete(&doc2);
}

void
config_yaml_close(struct config_yaml *y)
{
	if (y->parser == NULL)
		return;
	if (y->doc) {
		yaml_document_delete(y->doc);
		free(y->doc);
		y->doc = NULL;
	}
	free(y->seen);
	y->seen = NULL;
	y->nnodes = 0;
	yaml_parser_delete(y->parser);
	free(y->parser);
	y->parser = NULL;
}

/* Messages. */

struct config_pos
config_yaml_pos(const yaml_node_t *n)
{
	struct config_pos p = { 0, 0 };

	if (n) {
		p.line = (int)(n->start_mark.line + 1);
		p.col = (int)(n->start_mark.column + 1);
	}
	return p;
}

void
config_yaml_diag(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx, const char *f, ...)
{
	va_list ap;
	char *msg;

	y->nerr++;
	va_start(ap, f);
	msg = str_vfmt(f, ap);
	va_end(ap);
	if (msg == NULL || config_msgs_addf(y->msgs, y->name,
	    config_yaml_pos(n), ctx, "%s", msg) < 0)
		y->nomem = 1;
	free(msg);
}

void
config_yaml_parse_error(struct config_yaml *y, yaml_parser_t *p)
{
	struct config_pos pos = { (int)p->problem_mark.line + 1,
	    (int)p->problem_mark.column + 1 };

	y->nerr++;
	if (p->error == YAML_MEMORY_ERROR)
		y->nomem = 1;
	else if (config_msgs_addf(y->msgs, y->name, pos, "", "%s%s%s",
	    p->context ? p->context : "", p->context ? ": " : "",
	    p->problem ? p->problem : "malformed YAML") < 0)
		y->nomem = 1;
}

/* Walking. */

yaml_node_t *
config_yaml_take(struct config_yaml *y, int id, const char *ctx,
    const yaml_node_t *blame)
{
	yaml_node_t *n = yaml_document_get_node(y->doc, id);

	if (n == NULL)
		return NULL;
	if (id < 1 || (size_t)id > y->nnodes)
		return NULL;
	/* Taken before: this is an alias (blame is the key before it). */
	if (y->seen[id - 1]) {
		config_yaml_diag(y, blame ? blame : n, ctx, "anchors and "
		    "aliases are not supported");
		return NULL;
	}
	y->seen[id - 1] = 1;
	return n;
}

const char *
config_yaml_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a value";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

const char *
config_yaml_scalar(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx)
{
	if (n->type != YAML_SCALAR_NODE) {
		config_yaml_diag(y, n, ctx, "expected a value, not %s",
		    config_yaml_kind(n));
		return NULL;
	}
	if (n->data.scalar.length == 0 && n->data.scalar.style ==
	    YAML_PLAIN_SCALAR_STYLE) {
		config_yaml_diag(y, n, ctx, "needs a value");
		return NULL;
	}
	if (strlen((const char *)n->data.scalar.value) !=
	    n->data.scalar.length) {
		config_yaml_diag(y, n, ctx, "value contains a NUL byte");
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

int
config_yaml_bool(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx, int *v)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	const char *s;

	if ((s = config_yaml_scalar(y, n, ctx)) == NULL)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*v = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*v = 0;
			return 0;
		}
	}
	config_yaml_diag(y, n, ctx, "'%s' is not true or false", s);
	return -1;
}

int
config_yaml_strlist(struct config_yaml *y, const yaml_node_t *n,
    const char *ctx, struct config_list *out)
{
	size_t cnt, k = 0;
	int rc = 0;

	if (n->type == YAML_SCALAR_NODE)
		cnt = 1;
	else if (n->type == YAML_SEQUENCE_NODE)
		cnt = (size_t)(n->data.sequence.items.top -
		    n->data.sequence.items.start);
	else {
		config_yaml_diag(y, n, ctx, "expected a name or a list of "
		    "names, not %s", config_yaml_kind(n));
		return -1;
	}
	out->v = calloc(cnt ? cnt : 1, sizeof *out->v);
	out->pos = calloc(cnt ? cnt : 1, sizeof *out->pos);
	if (!out->v || !out->pos) {
		y->nomem = 1;
		return -1;
	}
	for (size_t i = 0; i < cnt; i++) {
		const yaml_node_t *it = n;
		const char *s;
		char *ictx = NULL;

		if (n->type == YAML_SEQUENCE_NODE) {
			ictx = str_fmt("%s[%zu]", ctx, i);
			it = config_yaml_take(y,
			    n->data.sequence.items.start[i], ictx ? ictx : ctx,
			    NULL);
			if (it == NULL) {
				free(ictx);
				rc = -1;
				continue;
			}
		}
		s = config_yaml_scalar(y, it, ictx ? ictx : ctx);
		free(ictx);
		if (s == NULL) {
			rc = -1;
			continue;
		}
		if ((out->v[k] = strdup(s)) == NULL) {
			y->nomem = 1;
			return -1;
		}
		out->pos[k++] = config_yaml_pos(it);
	}
	out->n = k;
	return rc;
}

void
config_list_release(struct config_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->pos);
	memset(l, 0, sizeof *l);
}

void
config_yaml_each_pair(struct config_yaml *y, const yaml_node_t *map,
    const char *ctx, config_yaml_pair_fn *fn, void *arg)
{
	yaml_node_pair_t *p, *q;
	struct strmap *keys = NULL;

	/* Large mappings (tensors) find duplicates by hash. */
	if (map->data.mapping.pairs.top - map->data.mapping.pairs.start > 32 &&
	    (keys = strmap_new()) == NULL) {
		y->nomem = 1;
		return;
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *k = config_yaml_take(y, p->key, ctx, NULL), *v;
		const char *ks;
		char *pk, *vctx;
		int dup = 0;

		if (k == NULL)
			continue;
		if (k->type != YAML_SCALAR_NODE) {
			config_yaml_diag(y, k, ctx, "keys must be names, "
			    "not %s", config_yaml_kind(k));
			config_yaml_take(y, p->value, ctx, NULL);
			continue;
		}
		ks = (const char *)k->data.scalar.value;
		if (keys) {
			dup = strmap_get(keys, ks, NULL);
			if (!dup && strmap_put(keys, ks, 1) < 0)
				y->nomem = 1;
		} else
			for (q = map->data.mapping.pairs.start; q < p && !dup;
			    q++) {
				yaml_node_t *qk = yaml_document_get_node(y->doc,
				    q->key);

				if (qk && qk->type == YAML_SCALAR_NODE &&
				    strcmp((const char *)qk->data.scalar.value,
				    ks) == 0)
					dup = 1;
			}
		pk = str_printable(ks);
		if (dup) {
			config_yaml_diag(y, k, ctx, "duplicate key '%s'",
			    pk ? pk : "?");
			free(pk);
			config_yaml_take(y, p->value, ctx, NULL);
			continue;
		}
		vctx = pk ? str_fmt("%s%s%s", ctx, *ctx ? ": " : "", pk) : NULL;
		v = config_yaml_take(y, p->value, vctx ? vctx : ctx, k);
		free(pk);
		free(vctx);
		if (v == NULL)
			continue;
		fn(y, arg, ks, k, v, ctx);
	}
	strmap_free(keys);
}
