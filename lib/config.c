/* config: see config.h and onnxq-config(5). */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config.h"
#include "infile.h"
#include "qparams.h"
#include "rangesel.h"
#include "strmap.h"
#include "util.h"

static const char *const key_names[CK_N] = {
	[CK_QUANT_TYPE] = "quant_type",
	[CK_SCALE] = "scale",
	[CK_ZERO_POINT] = "zero_point",
	[CK_SYMMETRIC] = "symmetric",
	[CK_REDUCE_RANGE] = "reduce_range",
	[CK_RMIN] = "rmin",
	[CK_RMAX] = "rmax",
	[CK_AXIS] = "axis",
	[CK_METHOD] = "method",
	[CK_PERCENTILE] = "percentile",
	[CK_POW2] = "power_of_two",
	[CK_CONVERT] = "convert",
	[CK_RECV_NODES] = "recv_nodes",
};

/* Per-channel lists longer than this are refused (no weight has more). */
#define MAX_CHANNELS (1 << 24)

/*
 * The toolkit's functions (yamldoc.h, msgs.h) by short names: the recipe
 * code below calls them on nearly every line.
 */
#define diag(...)		config_yaml_diag(__VA_ARGS__)
#define take(y, id, ctx)	config_yaml_take(y, id, ctx, NULL)
#define take_at(...)		config_yaml_take(__VA_ARGS__)
#define kind_name(n)		config_yaml_kind(n)
#define pos_of(n)		config_yaml_pos(n)
#define get_bool(...)		config_yaml_bool(__VA_ARGS__)
#define get_strlist(...)	config_yaml_strlist(__VA_ARGS__)
#define list_release(l)		config_list_release(l)
#define each_pair(...)		config_yaml_each_pair(__VA_ARGS__)
#define scalar(...)		config_yaml_scalar(__VA_ARGS__)
#define msgs_addf(...)		config_msgs_addf(__VA_ARGS__)
#define msgs_sort(...)		config_msgs_sort(__VA_ARGS__)

/* Loading. */

static int
get_double(struct config_yaml *L, const yaml_node_t *n, const char *ctx,
    double *v)
{
	const char *s;
	char *end;

	if ((s = scalar(L, n, ctx)) == NULL)
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end != '\0' || isspace((unsigned char)*s) ||
	    !isfinite(*v) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) {
		diag(L, n, ctx, "'%s' is not a finite number", s);
		return -1;
	}
	return 0;
}

static int
get_float(struct config_yaml *L, const yaml_node_t *n, const char *ctx,
    float *v)
{
	double d;

	if (get_double(L, n, ctx, &d) < 0)
		return -1;
	if (fabs(d) > FLT_MAX) {
		diag(L, n, ctx, "%g does not fit float32", d);
		return -1;
	}
	*v = (float)d;
	return 0;
}

static int
get_int(struct config_yaml *L, const yaml_node_t *n, const char *ctx,
    int64_t *v)
{
	const char *s;
	char *end;
	long long x;

	if ((s = scalar(L, n, ctx)) == NULL)
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || isspace((unsigned char)*s)) {
		diag(L, n, ctx, "'%s' is not an integer", s);
		return -1;
	}
	if (errno == ERANGE) {
		diag(L, n, ctx, "%s is out of range", s);
		return -1;
	}
	*v = x;
	return 0;
}

static int
get_type(struct config_yaml *L, const yaml_node_t *n, const char *ctx, int *v)
{
	const char *s;

	if ((s = scalar(L, n, ctx)) == NULL)
		return -1;
	if ((*v = qparams_type_parse(s)) == DT_UNDEFINED) {
		diag(L, n, ctx, "unknown type '%s' (uint8, int8, uint16, int16, "
		    "uint4, int4)", s);
		return -1;
	}
	return 0;
}

static int
get_method(struct config_yaml *L, const yaml_node_t *n, const char *ctx, int *v)
{
	const char *s;
	char *low;

	if ((s = scalar(L, n, ctx)) == NULL)
		return -1;
	if ((low = strdup(s)) == NULL) {
		L->nomem = 1;
		return -1;
	}
	for (char *p = low; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	*v = rangesel_method_parse(low);
	free(low);
	if (*v < 0) {
		diag(L, n, ctx, "unknown method '%s' (minmax, entropy, "
		    "percentile, distribution, mse)", s);
		return -1;
	}
	return 0;
}

static int
get_percentile(struct config_yaml *L, const yaml_node_t *n, const char *ctx,
    double *v)
{
	if (get_double(L, n, ctx, v) < 0)
		return -1;
	if (!(*v > 0 && *v <= 100)) {
		diag(L, n, ctx, "%g is not in (0, 100]", *v);
		return -1;
	}
	return 0;
}

/* Per-tensor specs. */

/* Values of one key while a mapping is read: one, or a list. */
struct vals {
	int given, list;
	size_t n;
	double *v;
	struct config_pos pos;
	const yaml_node_t *node;
};

struct specread {
	struct config_spec *s;
	struct config_tensor *t;	/* for convert and recv_nodes */
	int is_convert, allow_lists;
	const yaml_node_t *convert_node;
	struct vals val[CK_N];		/* scale, zero_point, rmin, rmax */
	unsigned bad;			/* 1u << CK_*: given, but refused */
};

static int
is_value_key(int k)
{
	return k == CK_SCALE || k == CK_ZERO_POINT || k == CK_RMIN ||
	    k == CK_RMAX;
}

static void
read_vals(struct config_yaml *L, struct specread *r, int key,
    const yaml_node_t *v, const char *ctx)
{
	struct vals *x = &r->val[key];
	size_t cnt;

	x->given = 1;
	x->node = v;
	x->pos = pos_of(v);
	if (v->type == YAML_SEQUENCE_NODE) {
		if (!r->allow_lists) {
			diag(L, v, ctx, "expected a value, not a list");
			x->given = 0;
			return;
		}
		x->list = 1;
		cnt = (size_t)(v->data.sequence.items.top -
		    v->data.sequence.items.start);
		if (cnt == 0 || cnt > MAX_CHANNELS) {
			diag(L, v, ctx, "a list of %zu values (1..%d)", cnt,
			    MAX_CHANNELS);
			x->given = 0;
			return;
		}
	} else
		cnt = 1;
	if ((x->v = calloc(cnt, sizeof *x->v)) == NULL) {
		L->nomem = 1;
		x->given = 0;
		return;
	}
	x->n = cnt;
	for (size_t i = 0; i < cnt; i++) {
		const yaml_node_t *it = v;
		char *ictx = NULL;
		int rc;

		if (x->list) {
			ictx = str_fmt("%s[%zu]", ctx, i);
			if ((it = take(L, v->data.sequence.items.start[i],
			    ictx ? ictx : ctx)) == NULL) {
				free(ictx);
				x->given = 0;
				continue;
			}
		}
		if (key == CK_ZERO_POINT) {
			int64_t z = 0;

			rc = get_int(L, it, ictx ? ictx : ctx, &z);
			x->v[i] = (double)z;
		} else {
			float f = 0;

			rc = get_float(L, it, ictx ? ictx : ctx, &f);
			x->v[i] = f;
		}
		if (rc < 0)
			x->given = 0;
		free(ictx);
	}
}

static void
spec_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn,
    const yaml_node_t *v, const char *ctx)
{
	struct specread *r = arg;
	struct config_spec *s = r->s;
	char *kctx;
	int key = -1, ok = 0;
	int64_t iv;

	for (int i = 0; i < CK_N; i++)
		if (strcmp(ks, key_names[i]) == 0)
			key = i;
	if (key < 0) {
		char *pk = str_printable(ks);

		diag(L, kn, ctx, "unknown key '%s'", pk ? pk : "?");
		free(pk);
		return;
	}
	kctx = str_fmt("%s%s%s", ctx, *ctx ? ": " : "", ks);
	if (kctx == NULL) {
		L->nomem = 1;
		return;
	}
	if (r->is_convert && (key == CK_REDUCE_RANGE || key == CK_AXIS ||
	    key == CK_CONVERT)) {
		diag(L, kn, kctx, "not allowed in convert%s",
		    key == CK_REDUCE_RANGE ? " (ORT refuses it too)" : "");
		goto out;
	}
	if (!r->is_convert && key == CK_RECV_NODES) {
		diag(L, kn, kctx, "belongs in convert");
		goto out;
	}
	s->pos[key] = pos_of(kn);
	switch (key) {
	case CK_QUANT_TYPE:
		ok = get_type(L, v, kctx, &s->quant_type) == 0;
		break;
	case CK_SYMMETRIC:
		ok = get_bool(L, v, kctx, &s->symmetric) == 0;
		break;
	case CK_REDUCE_RANGE:
		ok = get_bool(L, v, kctx, &s->reduce_range) == 0;
		break;
	case CK_POW2:
		ok = get_bool(L, v, kctx, &s->pow2) == 0;
		break;
	case CK_METHOD:
		ok = get_method(L, v, kctx, &s->method) == 0;
		break;
	case CK_PERCENTILE:
		ok = get_percentile(L, v, kctx, &s->percentile) == 0;
		break;
	case CK_AXIS:
		if (get_int(L, v, kctx, &iv) == 0) {
			if (iv < -TENSOR_MAX_RANK || iv >= TENSOR_MAX_RANK)
				diag(L, v, kctx, "axis %lld is out of range",
				    (long long)iv);
			else {
				s->axis = (int)iv;
				ok = 1;
			}
		}
		break;
	case CK_SCALE:
	case CK_ZERO_POINT:
	case CK_RMIN:
	case CK_RMAX:
		read_vals(L, r, key, v, kctx);
		ok = r->val[key].given;
		break;
	case CK_CONVERT:
		if (v->type != YAML_MAPPING_NODE)
			diag(L, v, kctx, "expected a mapping, not %s",
			    kind_name(v));
		else {
			r->convert_node = v;
			ok = 1;
		}
		break;
	case CK_RECV_NODES: {
		struct config_list l = { 0 };

		if (get_strlist(L, v, kctx, &l) == 0) {
			r->t->recv_nodes = l.v;
			r->t->recv_pos = l.pos;
			r->t->nrecv = l.n;
			ok = 1;
		} else
			list_release(&l);
		break;
	}
	}
	if (ok)
		s->set |= 1u << key;
	else
		r->bad |= 1u << key;
out:
	free(kctx);
}

/* Turn the value lists into the spec's arrays, broadcasting scalars. */
static void
spec_arrays(struct config_yaml *L, struct specread *r, const char *ctx)
{
	static const int vk[] = { CK_SCALE, CK_ZERO_POINT, CK_RMIN, CK_RMAX };
	struct config_spec *s = r->s;
	size_t n = 1;
	int listkey = -1;

	for (size_t i = 0; i < 4; i++) {
		struct vals *x = &r->val[vk[i]];

		if (!x->given || !x->list)
			continue;
		if (listkey >= 0 && x->n != n) {
			char *kctx = str_fmt("%s%s%s", ctx, *ctx ? ": " : "",
			    key_names[vk[i]]);

			diag(L, x->node, kctx ? kctx : ctx, "%zu values, but %s "
			    "has %zu", x->n, key_names[listkey], n);
			free(kctx);
			/* Keep the key (no "needs ..." to follow); the
			 * arrays below take n values, repeating the last. */
			if (x->n > n)
				x->n = n;
			continue;
		}
		n = x->n;
		listkey = vk[i];
	}
	s->n = n;
	s->per_channel = listkey >= 0;
	for (size_t i = 0; i < 4; i++) {
		struct vals *x = &r->val[vk[i]];

		if (!(s->set & (1u << vk[i])))
			continue;
		if (vk[i] == CK_ZERO_POINT) {
			if ((s->zero_point = calloc(n, sizeof *s->zero_point))
			    == NULL)
				goto nomem;
			for (size_t j = 0; j < n; j++)
				s->zero_point[j] = (int64_t)x->v[x->list ?
				    (j < x->n ? j : x->n - 1) : 0];
		} else {
			float **dst = vk[i] == CK_SCALE ? &s->scale :
			    vk[i] == CK_RMIN ? &s->rmin : &s->rmax;

			if ((*dst = calloc(n, sizeof **dst)) == NULL)
				goto nomem;
			for (size_t j = 0; j < n; j++)
				(*dst)[j] = (float)x->v[x->list ?
				    (j < x->n ? j : x->n - 1) : 0];
		}
	}
	return;
nomem:
	L->nomem = 1;
}

static void
vals_release(struct specread *r)
{
	for (int i = 0; i < CK_N; i++)
		free(r->val[i].v);
}

static char *
keyctx(const char *ctx, int key)
{
	return str_fmt("%s%s%s", ctx, *ctx ? ": " : "", key_names[key]);
}

static void
diag_key(struct config_yaml *L, const struct config_spec *s, int key,
    const char *ctx, const char *f, ...) __attribute__((format(printf, 5, 6)));

/* A message at a key of a spec. */
static void
diag_key(struct config_yaml *L, const struct config_spec *s, int key,
    const char *ctx, const char *f, ...)
{
	va_list ap;
	char *msg, *kctx;
	struct config_pos p = s->pos[key];

	L->nerr++;
	va_start(ap, f);
	msg = str_vfmt(f, ap);
	va_end(ap);
	kctx = keyctx(ctx, key);
	if (msg == NULL || kctx == NULL ||
	    msgs_addf(L->msgs, L->name, p, kctx, "%s", msg) < 0)
		L->nomem = 1;
	free(msg);
	free(kctx);
}

/* Does zp fit type? Reports at zero_point. zptype 0: not known yet. */
static void
check_zp(struct config_yaml *L, const struct config_spec *s, int zptype,
    const char *ctx)
{
	int64_t lo, hi;

	if (!(s->set & (1u << CK_ZERO_POINT)) || zptype == 0 ||
	    qparams_type_limits(zptype, &lo, &hi) < 0)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->zero_point[i] < lo || s->zero_point[i] > hi) {
			if (s->per_channel)
				diag_key(L, s, CK_ZERO_POINT, ctx, "channel %zu: "
				    "%lld does not fit %s (%lld..%lld)", i,
				    (long long)s->zero_point[i],
				    qparams_type_name(zptype), (long long)lo,
				    (long long)hi);
			else
				diag_key(L, s, CK_ZERO_POINT, ctx, "%lld does not "
				    "fit %s (%lld..%lld)",
				    (long long)s->zero_point[i],
				    qparams_type_name(zptype), (long long)lo,
				    (long long)hi);
			return;
		}
}

/*
 * The rules every spec follows; zptype is the type its zero point is in.
 * Keys in bad were given but refused (reported): one missing for that
 * is not reported again.
 */
static void
check_spec(struct config_yaml *L, const struct config_spec *s,
    unsigned bad, int zptype, int pairing, const char *ctx)
{
	static const int excl[] = { CK_SYMMETRIC, CK_REDUCE_RANGE, CK_RMIN,
	    CK_RMAX, CK_METHOD, CK_PERCENTILE, CK_POW2 };
	unsigned set = s->set, given = set | bad;

	if (pairing && (set & (1u << CK_SCALE)) &&
	    !(given & (1u << CK_ZERO_POINT)))
		diag_key(L, s, CK_SCALE, ctx, "needs zero_point as well");
	if (pairing && (set & (1u << CK_ZERO_POINT)) &&
	    !(given & (1u << CK_SCALE)))
		diag_key(L, s, CK_ZERO_POINT, ctx, "needs scale as well");
	if (set & ((1u << CK_SCALE) | (1u << CK_ZERO_POINT)))
		for (size_t i = 0; i < sizeof excl / sizeof excl[0]; i++)
			if (set & (1u << excl[i]))
				diag_key(L, s, excl[i], ctx, "conflicts with "
				    "scale and zero_point");
	if (set & (1u << CK_SCALE))
		for (size_t i = 0; i < s->n; i++)
			if (!(s->scale[i] >= FLT_MIN)) {
				diag_key(L, s, CK_SCALE, ctx, "%s%g is not a "
				    "positive normal float32",
				    s->per_channel ? "a channel's " : "",
				    (double)s->scale[i]);
				break;
			}
	if ((set & (1u << CK_RMIN)) && (set & (1u << CK_RMAX)))
		for (size_t i = 0; i < s->n; i++)
			if (s->rmin[i] > s->rmax[i]) {
				diag_key(L, s, CK_RMIN, ctx, "%g is above rmax %g",
				    (double)s->rmin[i], (double)s->rmax[i]);
				break;
			}
	if ((set & (1u << CK_PERCENTILE)) && (set & (1u << CK_METHOD)) &&
	    s->method != RANGESEL_PERCENTILE)
		diag_key(L, s, CK_PERCENTILE, ctx, "needs method percentile, "
		    "not %s", rangesel_method_name(s->method));
	check_zp(L, s, zptype, ctx);
}

static void spec_free(struct config_spec *s);

/*
 * Read a mapping into s; convert and recv_nodes go into t. Returns the
 * keys given but refused (1u << CK_*).
 */
static unsigned
read_spec(struct config_yaml *L, const yaml_node_t *map, const char *ctx,
    struct config_spec *s, struct config_tensor *t, int is_convert,
    int allow_lists, const yaml_node_t **convert_node)
{
	struct specread r;

	memset(&r, 0, sizeof r);
	r.s = s;
	r.t = t;
	r.is_convert = is_convert;
	r.allow_lists = allow_lists;
	each_pair(L, map, ctx, spec_pair, &r);
	spec_arrays(L, &r, ctx);
	vals_release(&r);
	if (convert_node)
		*convert_node = r.convert_node;
	return r.bad;
}

static void
read_convert(struct config_yaml *L, struct config_tensor *t,
    const yaml_node_t *cnode, const char *ctx)
{
	char *cctx = str_fmt("%s: convert", ctx);
	unsigned bad;

	if (cctx == NULL) {
		L->nomem = 1;
		return;
	}
	bad = read_spec(L, cnode, cctx, &t->convert, t, 1, 0, NULL);
	t->has_convert = 1;
	if (!((t->convert.set | bad) & (1u << CK_QUANT_TYPE)))
		diag(L, cnode, cctx, "needs quant_type");
	else if ((t->spec.set & (1u << CK_QUANT_TYPE)) &&
	    t->spec.quant_type == t->convert.quant_type)
		diag_key(L, &t->convert, CK_QUANT_TYPE, cctx, "%s is the "
		    "tensor's own quant_type", qparams_type_name(
		    t->convert.quant_type));
	check_spec(L, &t->convert, bad, (t->convert.set &
	    (1u << CK_QUANT_TYPE)) ? t->convert.quant_type : 0, 1, cctx);
	free(cctx);
}

/* ORT's form: a list of mappings, one per channel. */
static void
read_channels(struct config_yaml *L, const yaml_node_t *seq, const char *ctx,
    struct config_tensor *t)
{
	static const int same[] = { CK_QUANT_TYPE, CK_AXIS, CK_SYMMETRIC,
	    CK_REDUCE_RANGE };
	static const int vk[] = { CK_SCALE, CK_ZERO_POINT, CK_RMIN, CK_RMAX };
	size_t cnt = (size_t)(seq->data.sequence.items.top -
	    seq->data.sequence.items.start);
	struct config_spec *ch = NULL;
	const yaml_node_t *conv = NULL;
	struct config_spec *s = &t->spec;
	unsigned bad, bad0 = 0;
	int zptype;

	if (cnt == 0 || cnt > MAX_CHANNELS) {
		diag(L, seq, ctx, "a list of %zu overrides (1..%d)", cnt,
		    MAX_CHANNELS);
		return;
	}
	if ((ch = calloc(cnt, sizeof *ch)) == NULL) {
		L->nomem = 1;
		return;
	}
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *it;
		char *ictx = cnt > 1 ? str_fmt("%s: channel %zu", ctx, i) :
		    strdup(ctx);

		if (ictx == NULL) {
			L->nomem = 1;
			goto out;
		}
		it = take(L, seq->data.sequence.items.start[i], ictx);
		if (it == NULL) {
			free(ictx);
			continue;
		}
		if (it->type != YAML_MAPPING_NODE) {
			diag(L, it, ictx, "expected a mapping, not %s",
			    kind_name(it));
			free(ictx);
			continue;
		}
		bad = read_spec(L, it, ictx, &ch[i], t, 0, 0, i == 0 ? &conv :
		    NULL);
		if (i == 0)
			bad0 = bad;
		if (i > 0) {
			for (size_t k = 0; k < 4; k++) {
				int key = same[k];

				if (!(ch[i].set & (1u << key)))
					continue;
				if (!(ch[0].set & (1u << key)) ||
				    (key == CK_QUANT_TYPE ?
				    ch[i].quant_type != ch[0].quant_type :
				    key == CK_AXIS ? ch[i].axis != ch[0].axis :
				    key == CK_SYMMETRIC ?
				    ch[i].symmetric != ch[0].symmetric :
				    ch[i].reduce_range != ch[0].reduce_range))
					diag_key(L, &ch[i], key, ictx, "differs "
					    "from channel 0 (all channels share "
					    "it)");
			}
			for (int key = 0; key < CK_N; key++) {
				int shared = 0;

				for (size_t k = 0; k < 4; k++)
					shared |= same[k] == key;
				if ((ch[i].set & (1u << key)) && !shared &&
				    !is_value_key(key))
					diag_key(L, &ch[i], key, ictx, "belongs "
					    "in channel 0's entry");
			}
			for (size_t k = 0; k < 4; k++) {
				int key = vk[k];
				int a = !!((ch[0].set | bad0) & (1u << key));
				int b = !!((ch[i].set | bad) & (1u << key));

				if (a && !b)
					diag(L, it, ictx, "%s missing (channel 0 "
					    "has it)", key_names[key]);
				else if (b && !a)
					diag_key(L, &ch[i], key, ictx, "given, "
					    "but channel 0 has none");
			}
		}
		zptype = (ch[0].set & (1u << CK_QUANT_TYPE)) ? ch[0].quant_type :
		    0;
		/* A channel missing scale or zero_point was reported above. */
		check_spec(L, &ch[i], bad, zptype, i == 0 || !(ch[0].set &
		    (1u << CK_SCALE)) || !(ch[0].set & (1u << CK_ZERO_POINT)),
		    ictx);
		free(ictx);
	}

	/* Merge: channel 0's settings, every channel's values. */
	*s = ch[0];
	memset(&ch[0], 0, sizeof ch[0]);
	s->n = cnt;
	s->per_channel = cnt > 1;
	if (cnt > 1) {
		for (size_t k = 0; k < 4; k++) {
			int key = vk[k];

			if (!(s->set & (1u << key)))
				continue;
			if (key == CK_ZERO_POINT) {
				int64_t *z = calloc(cnt, sizeof *z);

				if (z == NULL)
					goto nomem;
				for (size_t i = 0; i < cnt; i++)
					if (i == 0)
						z[i] = s->zero_point[0];
					else if (ch[i].set & (1u << key))
						z[i] = ch[i].zero_point[0];
				free(s->zero_point);
				s->zero_point = z;
			} else {
				float **dst = key == CK_SCALE ? &s->scale :
				    key == CK_RMIN ? &s->rmin : &s->rmax;
				float *f = calloc(cnt, sizeof *f);

				if (f == NULL)
					goto nomem;
				for (size_t i = 0; i < cnt; i++) {
					float *src = i == 0 ? *dst :
					    key == CK_SCALE ? ch[i].scale :
					    key == CK_RMIN ? ch[i].rmin : ch[i].rmax;

					f[i] = (i == 0 || (ch[i].set & (1u << key)))
					    && src ? src[0] : 0;
				}
				free(*dst);
				*dst = f;
			}
		}
	}
	if (conv) {
		if (cnt > 1)
			diag_key(L, s, CK_CONVERT, ctx, "a per-channel tensor "
			    "cannot convert to another type");
		else
			read_convert(L, t, conv, ctx);
	}
	goto out;
nomem:
	L->nomem = 1;
out:
	for (size_t i = 0; i < cnt; i++)
		spec_free(&ch[i]);
	free(ch);
}

static void
tensor_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn, const yaml_node_t *v, const char *ctx)
{
	struct config *c = L->arg;
	struct config_tensor *t;
	const yaml_node_t *conv = NULL;
	char *pk, *tctx;
	unsigned bad;

	(void)arg;
	(void)ctx;
	if ((pk = str_printable(ks)) == NULL ||
	    (tctx = str_fmt("tensor %s", pk)) == NULL) {
		free(pk);
		L->nomem = 1;
		return;
	}
	free(pk);
	if (*ks == '\0') {
		diag(L, kn, "tensors", "a tensor name cannot be empty");
		goto out;
	}
	if (v->type != YAML_MAPPING_NODE && v->type != YAML_SEQUENCE_NODE) {
		diag(L, v, tctx, "expected a mapping of overrides (or ORT's "
		    "list of them), not %s", kind_name(v));
		goto out;
	}
	if (c->nt % 64 == 0) {
		struct config_tensor *nt = realloc(c->t,
		    (c->nt + 64) * sizeof *nt);

		if (nt == NULL) {
			L->nomem = 1;
			goto out;
		}
		c->t = nt;
	}
	t = &c->t[c->nt];
	memset(t, 0, sizeof *t);
	if ((t->name = strdup(ks)) == NULL) {
		L->nomem = 1;
		goto out;
	}
	t->pos = pos_of(kn);
	if (strmap_put(c->index, ks, (int)c->nt) < 0) {
		free(t->name);
		L->nomem = 1;
		goto out;
	}
	c->nt++;
	if (v->type == YAML_SEQUENCE_NODE) {
		read_channels(L, v, tctx, t);
	} else {
		bad = read_spec(L, v, tctx, &t->spec, t, 0, 1, &conv);
		check_spec(L, &t->spec, bad, (t->spec.set &
		    (1u << CK_QUANT_TYPE)) ? t->spec.quant_type : 0, 1, tctx);
		if (conv) {
			if (t->spec.per_channel)
				diag_key(L, &t->spec, CK_CONVERT, tctx, "a "
				    "per-channel tensor cannot convert to "
				    "another type");
			else
				read_convert(L, t, conv, tctx);
		}
	}
	if (t->spec.n == 0)
		t->spec.n = 1;
out:
	free(tctx);
}

/* Global settings: read as settings_table (settings.h) describes them. */

/* Where setting id was given. */
static void
mark(struct settings *g, int id, const yaml_node_t *kn)
{
	struct config_pos p = pos_of(kn);

	g->pos[id].line = p.line;
	g->pos[id].col = p.col;
}

/*
 * Setting id's value v into c->g; ctx names it in messages. Numbers
 * outside the table's bounds are refused with the bounds.
 */
static void
read_setting(struct config_yaml *L, int id, const yaml_node_t *kn,
    const yaml_node_t *v, const char *ctx)
{
	struct settings *g = &((struct config *)L->arg)->g;
	const struct setting_info *si = &settings_table[id];
	int iv, ok = 0;
	int64_t i64;
	double d;

	switch (si->kind) {
	case SETTING_BOOL:
		ok = get_bool(L, v, ctx, &iv) == 0;
		break;
	case SETTING_TYPE:
		ok = get_type(L, v, ctx, &iv) == 0;
		break;
	case SETTING_METHOD:
		ok = get_method(L, v, ctx, &iv) == 0;
		break;
	case SETTING_INT:
		if (get_int(L, v, ctx, &i64) < 0)
			break;
		if (!settings_in_bounds(id, (double)i64))
			diag(L, v, ctx, "%lld is not in %.0f..%.0f",
			    (long long)i64, si->lo, si->hi);
		else {
			iv = (int)i64;
			ok = 1;
		}
		break;
	case SETTING_REAL:
		if (get_double(L, v, ctx, &d) < 0)
			break;
		if (settings_in_bounds(id, d)) {
			settings_set_real(g, id, d);
			mark(g, id, kn);
		} else if (si->lo_open)
			diag(L, v, ctx, "%g is not in (%g, %g]", d, si->lo,
			    si->hi);
		else
			diag(L, v, ctx, "%g is not in %g..%g", d, si->lo,
			    si->hi);
		return;
	}
	if (ok) {
		settings_set_int(g, id, iv);
		mark(g, id, kn);
	}
}

/* The settings of a section: activations, weights, bias. */
static void
section_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn,
    const yaml_node_t *v, const char *ctx)
{
	const char *section = arg;
	int id = settings_find(section, ks);
	char *kctx, *pk;

	if (id >= 0) {
		if ((kctx = str_fmt("%s: %s", ctx, ks)) == NULL) {
			L->nomem = 1;
			return;
		}
		read_setting(L, id, kn, v, kctx);
		free(kctx);
		return;
	}
	pk = str_printable(ks);
	if (strcmp(section, "bias") == 0)
		diag(L, kn, ctx, "unknown key '%s' (weight_adjust)", pk ? pk :
		    "?");
	else
		diag(L, kn, ctx, "unknown setting '%s'%s", pk ? pk : "?",
		    strcmp(section, "weights") == 0 &&
		    (strcmp(ks, "method") == 0 ||
		    strcmp(ks, "percentile") == 0) ? " (weights are "
		    "quantized over their min and max)" : "");
	free(pk);
}

static void
sel_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn,
    const yaml_node_t *v, const char *ctx)
{
	struct config_list *lists = arg;	/* [0] include, [1] exclude */
	char *kctx = str_fmt("%s: %s", ctx, ks);
	int which = strcmp(ks, "include") == 0 ? 0 :
	    strcmp(ks, "exclude") == 0 ? 1 : -1;

	if (kctx == NULL) {
		L->nomem = 1;
		return;
	}
	if (which < 0) {
		char *pk = str_printable(ks);

		diag(L, kn, ctx, "unknown key '%s' (include, exclude)",
		    pk ? pk : "?");
		free(pk);
	} else if (get_strlist(L, v, kctx, &lists[which]) < 0)
		list_release(&lists[which]);
	free(kctx);
}

static int
want_map(struct config_yaml *L, const yaml_node_t *v, const char *ctx)
{
	if (v->type == YAML_MAPPING_NODE)
		return 1;
	diag(L, v, ctx, "expected a mapping, not %s", kind_name(v));
	return 0;
}

static void
top_pair(struct config_yaml *L, void *arg, const char *ks,
    const yaml_node_t *kn,
    const yaml_node_t *v, const char *ctx)
{
	struct config *c = L->arg;
	int id;

	(void)arg;
	(void)ctx;
	if (strcmp(ks, "version") == 0) {
		int64_t ver;

		if (get_int(L, v, "version", &ver) == 0 && ver != 1)
			diag(L, v, "version", "version %lld is not supported "
			    "(this reads 1)", (long long)ver);
	} else if (strcmp(ks, "activations") == 0 ||
	    strcmp(ks, "weights") == 0 || strcmp(ks, "bias") == 0) {
		if (want_map(L, v, ks))
			each_pair(L, v, ks, section_pair, (void *)ks);
	} else if ((id = settings_find(NULL, ks)) >= 0) {
		read_setting(L, id, kn, v, ks);
	} else if (strcmp(ks, "nodes") == 0 || strcmp(ks, "op_types") == 0) {
		struct config_list lists[2] = { { 0 }, { 0 } };
		struct config_list *in = ks[0] == 'n' ? &c->nodes_include :
		    &c->ops_include;
		struct config_list *ex = ks[0] == 'n' ? &c->nodes_exclude :
		    &c->ops_exclude;

		if (want_map(L, v, ks)) {
			each_pair(L, v, ks, sel_pair, lists);
			*in = lists[0];
			*ex = lists[1];
		}
	} else if (strcmp(ks, "tensors") == 0) {
		if (want_map(L, v, ks))
			each_pair(L, v, "tensors", tensor_pair, NULL);
	} else {
		char *pk = str_printable(ks);

		diag(L, kn, "", "unknown setting '%s'", pk ? pk : "?");
		free(pk);
	}
}

struct config *
config_load_mem(const char *name, const char *text, size_t len,
    struct config_msgs *msgs, struct err *e)
{
	struct config_yaml L;
	struct config *c;
	yaml_node_t *root;
	size_t from = msgs->n;

	if (len > (size_t)CONFIG_MAX_BYTES) {
		err_set(e, "%s: larger than %ld bytes", name, CONFIG_MAX_BYTES);
		return NULL;
	}
	memset(&L, 0, sizeof L);
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->path = strdup(name)) == NULL ||
	    (c->index = strmap_new()) == NULL) {
		config_free(c);
		err_nomem(e);
		return NULL;
	}
	settings_default(&c->g);
	L.name = name;
	L.msgs = msgs;
	L.arg = c;
	if (config_yaml_open(&L, text, len) == 0 &&
	    (root = yaml_document_get_root_node(L.doc)) != NULL) {
		root = take(&L, 1, "");
		if (root && root->type != YAML_MAPPING_NODE &&
		    !(root->type == YAML_SCALAR_NODE &&
		    root->data.scalar.length == 0))
			diag(&L, root, "", "a recipe is a mapping of settings, "
			    "not %s", kind_name(root));
		else if (root && root->type == YAML_MAPPING_NODE)
			each_pair(&L, root, "", top_pair, NULL);
		config_yaml_one_doc(&L);
	}
	config_yaml_close(&L);
	if (L.nomem) {
		config_free(c);
		err_nomem(e);
		return NULL;
	}
	if (L.nerr > 0) {
		msgs_sort(msgs, from, name);
		config_free(c);
		if (L.nerr == 1 && msgs->n > 0)
			err_set(e, "%s", msgs->v[msgs->n - 1]);
		else
			err_set(e, "%s: %zu errors", name, L.nerr);
		return NULL;
	}
	return c;
}

struct config *
config_load(const char *path, struct config_msgs *msgs, struct err *e)
{
	struct config *c;
	void *buf;
	size_t n;

	if (infile_read(path, (size_t)CONFIG_MAX_BYTES, &buf, &n, e) < 0)
		return NULL;
	c = config_load_mem(path, buf, n, msgs, e);
	free(buf);
	return c;
}

static void
spec_free(struct config_spec *s)
{
	free(s->scale);
	free(s->zero_point);
	free(s->rmin);
	free(s->rmax);
	memset(s, 0, sizeof *s);
}

void
config_free(struct config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nt; i++) {
		struct config_tensor *t = &c->t[i];

		free(t->name);
		spec_free(&t->spec);
		spec_free(&t->convert);
		for (size_t j = 0; j < t->nrecv; j++)
			free(t->recv_nodes[j]);
		free(t->recv_nodes);
		free(t->recv_pos);
	}
	free(c->t);
	list_release(&c->nodes_include);
	list_release(&c->nodes_exclude);
	list_release(&c->ops_include);
	list_release(&c->ops_exclude);
	strmap_free(c->index);
	free(c->path);
	free(c);
}

const struct config_tensor *
config_find(const struct config *c, const char *name)
{
	int i;

	if (c == NULL || !strmap_get(c->index, name, &i))
		return NULL;
	return &c->t[i];
}

/* Validation against the stream. */

struct vstate {
	const struct config *c;
	struct config_msgs *m;
	size_t n;
};

static void
vmsg(struct vstate *v, struct config_pos pos, const char *ctx,
    const char *f, ...) __attribute__((format(printf, 4, 5)));

static void
vmsg(struct vstate *v, struct config_pos pos, const char *ctx,
    const char *f, ...)
{
	va_list ap;
	char *msg;

	v->n++;
	va_start(ap, f);
	msg = str_vfmt(f, ap);
	va_end(ap);
	if (msg)
		msgs_addf(v->m, v->c->path, pos, ctx, "%s", msg);
	free(msg);
}

static const char *
kind_word(int kind)
{
	return kind == CONFIG_ACTIVATION ? "an activation" :
	    kind == CONFIG_WEIGHT ? "a weight" : "a bias";
}

/* Zero points against the effective type, when the file did not say. */
static void
vcheck_zp(struct vstate *v, const struct config_spec *s, int type,
    const char *ctx)
{
	int64_t lo, hi;

	if (!(s->set & (1u << CK_ZERO_POINT)) ||
	    (s->set & (1u << CK_QUANT_TYPE)) ||
	    qparams_type_limits(type, &lo, &hi) < 0)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->zero_point[i] < lo || s->zero_point[i] > hi) {
			vmsg(v, s->pos[CK_ZERO_POINT], ctx, "zero_point: %lld "
			    "does not fit %s (%lld..%lld), the default type",
			    (long long)s->zero_point[i], qparams_type_name(type),
			    (long long)lo, (long long)hi);
			return;
		}
}

static int
first_value_key(const struct config_spec *s)
{
	static const int vk[] = { CK_SCALE, CK_ZERO_POINT, CK_RMIN, CK_RMAX };

	for (size_t i = 0; i < 4; i++)
		if (s->set & (1u << vk[i]))
			return vk[i];
	return CK_AXIS;
}

static void
validate_tensor(struct vstate *v, const struct config_tensor *t,
    const struct config_world *w)
{
	const struct config_spec *s = &t->spec;
	struct config_target tg;
	char *pn = str_printable(t->name);
	char *ctx = pn ? str_fmt("tensor %s", pn) : NULL;
	int type;

	free(pn);
	if (ctx == NULL)
		return;
	memset(&tg, 0, sizeof tg);
	tg.rank = -1;
	tg.axis = -1;
	w->tensor(w->arg, t->name, &tg);
	if (tg.kind == CONFIG_UNKNOWN) {
		vmsg(v, t->pos, ctx, "not in the stream");
		goto out;
	}
	type = (s->set & (1u << CK_QUANT_TYPE)) ? s->quant_type :
	    tg.kind == CONFIG_ACTIVATION ? w->act_type : w->weight_type;
	vcheck_zp(v, s, type, ctx);
	if (tg.kind == CONFIG_ACTIVATION) {
		if (s->per_channel)
			vmsg(v, s->pos[first_value_key(s)], ctx, "per-channel "
			    "values need a weight; this is an activation");
		if (s->set & (1u << CK_AXIS))
			vmsg(v, s->pos[CK_AXIS], ctx, "axis: applies to weights "
			    "only; this is an activation");
	} else {
		int axis = (s->set & (1u << CK_AXIS)) ? s->axis : tg.axis;

		if (t->has_convert)
			vmsg(v, s->pos[CK_CONVERT], ctx, "convert: applies to "
			    "activations only; this is %s", kind_word(tg.kind));
		if (s->set & (1u << CK_METHOD))
			vmsg(v, s->pos[CK_METHOD], ctx, "method: weights are "
			    "quantized over their exact min and max");
		if (s->set & (1u << CK_PERCENTILE))
			vmsg(v, s->pos[CK_PERCENTILE], ctx, "percentile: weights "
			    "are quantized over their exact min and max");
		if (tg.rank >= 0 && (s->set & (1u << CK_AXIS)) &&
		    (axis < -tg.rank || axis >= tg.rank))
			vmsg(v, s->pos[CK_AXIS], ctx, "axis: %d is out of range "
			    "for rank %d", axis, tg.rank);
		else if (s->per_channel) {
			if (axis < 0 && tg.rank >= 0 && (s->set & (1u << CK_AXIS)))
				axis += tg.rank;
			if (axis < 0)
				vmsg(v, s->pos[first_value_key(s)], ctx,
				    "per-channel values, but no channel axis is "
				    "known: give axis");
			else if (tg.rank > axis && tg.dims[axis] >= 0 &&
			    (int64_t)s->n != tg.dims[axis])
				vmsg(v, s->pos[first_value_key(s)], ctx,
				    "%zu channel values for %lld channels along "
				    "axis %d", s->n, (long long)tg.dims[axis],
				    axis);
		}
	}
	if (t->has_convert && tg.kind == CONFIG_ACTIVATION) {
		char *cctx = str_fmt("%s: convert", ctx);

		if (t->convert.quant_type == type &&
		    !(s->set & (1u << CK_QUANT_TYPE)))
			vmsg(v, t->convert.pos[CK_QUANT_TYPE], cctx ? cctx : ctx,
			    "quant_type: %s is the tensor's own type",
			    qparams_type_name(type));
		for (size_t i = 0; i < t->nrecv; i++) {
			int known = w->node ? w->node(w->arg, t->recv_nodes[i]) :
			    -1;
			char *pr = str_printable(t->recv_nodes[i]);

			if (known == 0)
				vmsg(v, t->recv_pos[i], cctx ? cctx : ctx,
				    "recv_nodes: node %s is not in the stream",
				    pr ? pr : "?");
			else if (known == 1 && w->consumes &&
			    w->consumes(w->arg, t->recv_nodes[i], t->name) == 0)
				vmsg(v, t->recv_pos[i], cctx ? cctx : ctx,
				    "recv_nodes: node %s does not read %s",
				    pr ? pr : "?", t->name);
			free(pr);
		}
		free(cctx);
	}
out:
	free(ctx);
}

static void
validate_nodes(struct vstate *v, const struct config_list *l,
    const char *ctx, const struct config_world *w)
{
	if (w->node == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (w->node(w->arg, l->v[i]) == 0) {
			char *p = str_printable(l->v[i]);

			vmsg(v, l->pos[i], ctx, "node %s is not in the stream",
			    p ? p : "?");
			free(p);
		}
}

size_t
config_validate(const struct config *c, const struct config_world *w,
    struct config_msgs *msgs)
{
	struct vstate v = { c, msgs, 0 };
	size_t from = msgs->n;

	for (size_t i = 0; i < c->nt; i++)
		validate_tensor(&v, &c->t[i], w);
	validate_nodes(&v, &c->nodes_include, "nodes: include", w);
	validate_nodes(&v, &c->nodes_exclude, "nodes: exclude", w);
	msgs_sort(msgs, from, c->path);
	return v.n;
}
