/* regions: see regions.h and onnxq-regions(5). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "infile.h"
#include "qparams.h"
#include "regions.h"
#include "tensor.h"
#include "util.h"

/* A quantized type, or float. */
static int
parse_type(const char *s)
{
	if (strcasecmp(s, "float") == 0 || strcasecmp(s, "float32") == 0)
		return DT_FLOAT;
	return qparams_type_parse(s);
}

/* A name or a non-empty list of names. */
static void
get_names(struct config_yaml *L, const yaml_node_t *n, const char *ctx,
    struct config_list *out)
{
	if (n->type == YAML_SEQUENCE_NODE &&
	    n->data.sequence.items.top == n->data.sequence.items.start) {
		config_yaml_diag(L, n, ctx, "an empty list");
		return;
	}
	config_yaml_strlist(L, n, ctx, out);
}

struct regread {
	struct mixprec_region *r;
	int has_type;
};

static void
region_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn, const yaml_node_t *v, const char *ctx)
{
	struct regread *rr = arg;
	struct mixprec_region *r = rr->r;
	char *kctx = str_fmt("%s: %s", ctx, ks);
	const char *c = kctx ? kctx : ctx;
	const char *s;

	if (strcmp(ks, "nodes") == 0)
		get_names(L, v, c, &r->nodes);
	else if (strcmp(ks, "tensors") == 0)
		get_names(L, v, c, &r->tensors);
	else if (strcmp(ks, "op_types") == 0)
		get_names(L, v, c, &r->ops);
	else if (strcmp(ks, "type") == 0) {
		rr->has_type = 1;	/* a bad one is reported here */
		if ((s = config_yaml_scalar(L, v, c)) != NULL &&
		    (r->t.type = parse_type(s)) == DT_UNDEFINED)
			config_yaml_diag(L, v, c, "unknown type '%s' (uint8, "
			    "int8, uint16, int16, uint4, int4, float)", s);
	} else if (strcmp(ks, "symmetric") == 0)
		config_yaml_bool(L, v, c, &r->t.symmetric);
	else if (strcmp(ks, "reduce_range") == 0)
		config_yaml_bool(L, v, c, &r->t.reduce_range);
	else if (strcmp(ks, "power_of_two") == 0)
		config_yaml_bool(L, v, c, &r->t.pow2);
	else if (strcmp(ks, "name") == 0)
		config_yaml_scalar(L, v, c);	/* read_region took it */
	else {
		char *pk = str_printable(ks);

		config_yaml_diag(L, kn, ctx, "unknown key '%s' (nodes, "
		    "tensors, op_types, type, symmetric, reduce_range, "
		    "power_of_two, name)", pk ? pk : "?");
		free(pk);
	}
	free(kctx);
}

static void
read_region(struct config_yaml *L, const yaml_node_t *n, size_t i)
{
	struct mixprec_regions *rg = L->arg;
	struct mixprec_region *r = &rg->v[i];
	struct regread rr = { r, 0 };

	memset(r, 0, sizeof *r);
	r->t.symmetric = r->t.reduce_range = r->t.pow2 = -1;
	r->line = (int)n->start_mark.line + 1;
	r->col = (int)n->start_mark.column + 1;
	if ((r->label = str_fmt("region %zu", i + 1)) == NULL) {
		L->nomem = 1;
		return;
	}
	if (n->type != YAML_MAPPING_NODE) {
		config_yaml_diag(L, n, r->label, "expected a mapping (nodes, "
		    "tensors, type, ...), not %s", config_yaml_kind(n));
		return;
	}
	/* The name first, so every message carries it. */
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	    p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(L->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(L->doc, p->value);

		if (k && v && k->type == YAML_SCALAR_NODE &&
		    v->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, "name") == 0) {
			char *ps = str_printable(
			    (const char *)v->data.scalar.value);
			char *label = ps ? str_fmt("%s (%s)", r->label, ps) : NULL;

			free(ps);
			if (label) {
				free(r->label);
				r->label = label;
			}
			break;
		}
	}
	config_yaml_each_pair(L, n, r->label, region_pair, &rr);
	if (!rr.has_type)
		config_yaml_diag(L, n, r->label, "needs a type (uint16, int16, "
		    "..., float)");
	if (r->nodes.n + r->tensors.n + r->ops.n == 0)
		config_yaml_diag(L, n, r->label, "names no nodes, tensors or "
		    "op_types");
	if (r->t.type == DT_FLOAT &&
	    (r->t.symmetric >= 0 || r->t.reduce_range >= 0 || r->t.pow2 >= 0))
		config_yaml_diag(L, n, r->label, "a float region takes no "
		    "symmetric, reduce_range or power_of_two");
}

static void
top_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn, const yaml_node_t *v, const char *ctx)
{
	struct mixprec_regions *rg = L->arg;

	(void)arg;
	if (strcmp(ks, "version") == 0) {
		const char *s = config_yaml_scalar(L, v, "version");

		if (s && strcmp(s, "1") != 0)
			config_yaml_diag(L, v, "version", "'%s': only version "
			    "1 exists", s);
	} else if (strcmp(ks, "regions") == 0) {
		size_t n;

		if (v->type != YAML_SEQUENCE_NODE) {
			config_yaml_diag(L, v, "regions", "expected a list of "
			    "regions, not %s", config_yaml_kind(v));
			return;
		}
		n = (size_t)(v->data.sequence.items.top -
		    v->data.sequence.items.start);
		if ((rg->v = calloc(n ? n : 1, sizeof *rg->v)) == NULL) {
			L->nomem = 1;
			return;
		}
		for (size_t i = 0; i < n && !L->nomem; i++) {
			yaml_node_t *it = config_yaml_take(L,
			    v->data.sequence.items.start[i], "regions", NULL);

			rg->n = i + 1;
			if (it == NULL) {
				memset(&rg->v[i], 0, sizeof rg->v[i]);
				continue;
			}
			read_region(L, it, i);
		}
		if (n == 0)
			config_yaml_diag(L, v, "regions", "an empty list");
	} else {
		char *pk = str_printable(ks);

		config_yaml_diag(L, kn, ctx, "unknown key '%s' (version, "
		    "regions)", pk ? pk : "?");
		free(pk);
	}
}

void
mixprec_regions_free(struct mixprec_regions *rg)
{
	if (rg == NULL)
		return;
	for (size_t i = 0; i < rg->n; i++) {
		struct mixprec_region *r = &rg->v[i];

		free(r->label);
		config_list_release(&r->nodes);
		config_list_release(&r->tensors);
		config_list_release(&r->ops);
	}
	free(rg->v);
	free(rg->path);
	free(rg);
}

struct mixprec_regions *
mixprec_regions_load_mem(const char *name, const char *text, size_t len,
    struct config_msgs *msgs, struct err *e)
{
	struct config_yaml L;
	struct mixprec_regions *rg;
	yaml_node_t *root;

	if (len > (size_t)MIXPREC_REGIONS_MAX_BYTES) {
		err_set(e, "%s: larger than %ld bytes", name,
		    MIXPREC_REGIONS_MAX_BYTES);
		return NULL;
	}
	if ((rg = calloc(1, sizeof *rg)) == NULL ||
	    (rg->path = strdup(name)) == NULL) {
		mixprec_regions_free(rg);
		err_nomem(e);
		return NULL;
	}
	memset(&L, 0, sizeof L);
	L.name = name;
	L.msgs = msgs;
	L.arg = rg;
	/* The toolkit refuses deep nesting before libyaml loads it. */
	if (config_yaml_open(&L, text, len) == 0) {
		root = yaml_document_get_root_node(L.doc);
		if (root == NULL || (root->type == YAML_SCALAR_NODE &&
		    root->data.scalar.length == 0))
			config_yaml_diag(&L, NULL, "", "no regions (the file "
			    "is empty)");
		else if ((root = config_yaml_take(&L, 1, "", NULL)) &&
		    root->type != YAML_MAPPING_NODE)
			config_yaml_diag(&L, root, "", "expected a mapping with "
			    "'regions', not %s", config_yaml_kind(root));
		else if (root) {
			config_yaml_each_pair(&L, root, "", top_pair, NULL);
			if (rg->v == NULL && L.nerr == 0)
				config_yaml_diag(&L, root, "", "no 'regions' "
				    "list");
		}
		config_yaml_one_doc(&L);
	}
	config_yaml_close(&L);
	if (L.nomem) {
		mixprec_regions_free(rg);
		err_nomem(e);
		return NULL;
	}
	if (L.nerr > 0) {
		mixprec_regions_free(rg);
		if (L.nerr == 1 && msgs->n > 0)
			err_set(e, "%s", msgs->v[msgs->n - 1]);
		else
			err_set(e, "%s: %zu errors", name, L.nerr);
		return NULL;
	}
	return rg;
}

struct mixprec_regions *
mixprec_regions_load(const char *path, struct config_msgs *msgs,
    struct err *e)
{
	struct mixprec_regions *rg;
	void *buf;
	size_t n;

	if (infile_read(path, (size_t)MIXPREC_REGIONS_MAX_BYTES, &buf, &n,
	    e) < 0)
		return NULL;
	rg = mixprec_regions_load_mem(path, buf, n, msgs, e);
	free(buf);
	return rg;
}
