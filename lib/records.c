/*
 * records: see records.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opinfo.h"
#include "qparams.h"
#include "records.h"
#include "strmap.h"
#include "util.h"

static const char *const role_names[] = { "act", "weight", "bias" };

const char *
role_name(enum role r)
{
	return (unsigned)r < 3 ? role_names[r] : "?";
}

/* The parameters. */

int
qparam_alloc(struct qparam *q, size_t n, struct err *e)
{
	memset(q, 0, sizeof *q);
	q->axis = -1;
	q->n = n;
	q->scale = calloc(n ? n : 1, sizeof *q->scale);
	q->zp = calloc(n ? n : 1, sizeof *q->zp);
	q->rmin = calloc(n ? n : 1, sizeof *q->rmin);
	q->rmax = calloc(n ? n : 1, sizeof *q->rmax);
	if (!q->scale || !q->zp || !q->rmin || !q->rmax) {
		qparam_release(q);
		return err_nomem(e);
	}
	return 0;
}

void
qparam_release(struct qparam *q)
{
	free(q->scale);
	free(q->zp);
	free(q->rmin);
	free(q->rmax);
	free(q->method);
	free(q->from);
	memset(q, 0, sizeof *q);
	q->axis = -1;
}

static int
dup_or_null(char **d, const char *s, struct err *e)
{
	free(*d);
	*d = NULL;
	if (s && (*d = strdup(s)) == NULL)
		return err_nomem(e);
	return 0;
}

int
qparam_set_method(struct qparam *q, const char *m, struct err *e)
{
	return dup_or_null(&q->method, m, e);
}

void
qparam_drop_range(struct qparam *q)
{
	free(q->rmin);
	free(q->rmax);
	q->rmin = q->rmax = NULL;
}

int
qparam_copy(struct qparam *d, const struct qparam *s, struct err *e)
{
	qparam_release(d);
	if (qparam_alloc(d, s->n, e) < 0)
		return -1;
	d->type = s->type;
	d->axis = s->axis;
	memcpy(d->scale, s->scale, s->n * sizeof *s->scale);
	memcpy(d->zp, s->zp, s->n * sizeof *s->zp);
	if (s->rmin && s->rmax) {
		memcpy(d->rmin, s->rmin, s->n * sizeof *s->rmin);
		memcpy(d->rmax, s->rmax, s->n * sizeof *s->rmax);
	} else
		qparam_drop_range(d);
	if (dup_or_null(&d->method, s->method, e) < 0 ||
	    dup_or_null(&d->from, s->from, e) < 0) {
		qparam_release(d);
		return -1;
	}
	return 0;
}

/*
 * type=, scale=, zp=, axis= of a qparam or convert record, and the keys
 * a writer adds (method=, from=, rmin=, rmax=).
 */
static int
read_qparam(const struct stream_rec *rec, int allow_int32, struct qparam *q,
    struct err *e)
{
	char *tname = NULL;
	int64_t *zp = NULL, axis, lo, hi;
	const char *m;
	size_t nz, n1, n2, i;

	memset(q, 0, sizeof *q);
	q->axis = -1;
	if (stream_rec_name(rec, "type", &tname, e) != 0)
		return -1;
	q->type = qparams_type_parse(tname);
	if (q->type == DT_UNDEFINED && allow_int32 &&
	    strcmp(tname, "int32") == 0)
		q->type = DT_INT32;
	if (q->type == DT_UNDEFINED) {
		stream_rec_err(rec, e, "key type: unsupported type '%.40s'",
		    tname);
		free(tname);
		return -1;
	}
	free(tname);
	if (stream_rec_floats(rec, "scale", &q->scale, &q->n, e) != 0 ||
	    stream_rec_ints(rec, "zp", &zp, &nz, e) != 0)
		goto fail;
	if (q->n == 0 || nz != q->n) {
		stream_rec_err(rec, e, "%zu scales and %zu zero points", q->n,
		    nz);
		goto fail;
	}
	if (stream_rec_has(rec, "axis")) {
		if (stream_rec_int(rec, "axis", &axis, e) != 0)
			goto fail;
		if (axis < -TENSOR_MAX_RANK || axis >= TENSOR_MAX_RANK) {
			stream_rec_err(rec, e, "key axis: %lld is out of "
			    "range", (long long)axis);
			goto fail;
		}
		q->axis = (int)axis;
	} else if (q->n != 1) {
		stream_rec_err(rec, e, "%zu scales but no axis", q->n);
		goto fail;
	}
	if (q->type == DT_INT32)
		lo = INT32_MIN, hi = INT32_MAX;
	else
		qparams_type_limits(q->type, &lo, &hi);
	if ((q->zp = malloc(q->n * sizeof *q->zp)) == NULL) {
		err_nomem(e);
		goto fail;
	}
	for (i = 0; i < q->n; i++) {
		if (!(q->scale[i] > 0) || !isfinite(q->scale[i])) {
			stream_rec_err(rec, e, "key scale: %g is not a "
			    "positive finite scale", q->scale[i]);
			goto fail;
		}
		if (zp[i] < lo || zp[i] > hi) {
			stream_rec_err(rec, e, "key zp: %lld is out of the "
			    "range of %s", (long long)zp[i],
			    dtype_name(q->type));
			goto fail;
		}
		q->zp[i] = (int32_t)zp[i];
	}
	free(zp);
	zp = NULL;
	if ((m = stream_rec_get(rec, "method")) != NULL &&
	    (q->method = strdup(m)) == NULL) {
		err_nomem(e);
		goto fail;
	}
	if (stream_rec_has(rec, "from") &&
	    stream_rec_name(rec, "from", &q->from, e) != 0)
		goto fail;
	if (stream_rec_has(rec, "rmin") || stream_rec_has(rec, "rmax")) {
		if (stream_rec_floats(rec, "rmin", &q->rmin, &n1, e) != 0 ||
		    stream_rec_floats(rec, "rmax", &q->rmax, &n2, e) != 0)
			goto fail;
		if (n1 != q->n || n2 != q->n) {
			stream_rec_err(rec, e, "keys rmin, rmax: %zu and %zu "
			    "values for %zu scales", n1, n2, q->n);
			goto fail;
		}
	}
	return 0;
fail:
	free(zp);
	qparam_release(q);
	return -1;
}

/* The keys of q after the caller's role=, as onnxq-stream(5) orders them. */
static void
put_qparam(struct stream_writer *w, const struct qparam *q)
{
	int perch = !(q->n == 1 && q->axis < 0);
	int64_t *zp = NULL;

	stream_put_raw(w, "type", q->type == DT_INT32 ? "int32" :
	    qparams_type_name(q->type));
	if (q->axis >= 0)
		stream_put_int(w, "axis", q->axis);
	if (!perch) {
		stream_put_float(w, "scale", q->scale[0]);
		stream_put_int(w, "zp", q->zp[0]);
	} else {
		/* Out of memory: the zp key is missing, the reader says so. */
		if ((zp = malloc(q->n * sizeof *zp)) != NULL)
			for (size_t i = 0; i < q->n; i++)
				zp[i] = q->zp[i];
		stream_put_floats(w, "scale", q->scale, q->n);
		if (zp)
			stream_put_ints(w, "zp", zp, q->n);
		free(zp);
	}
	if (q->method)
		stream_put_raw(w, "method", q->method);
	if (q->from)
		stream_put_name(w, "from", q->from);
	/* A shared range is its source's, recorded there. */
	if (q->rmin && q->rmax && q->method &&
	    strcmp(q->method, "shared") != 0) {
		if (!perch) {
			stream_put_float(w, "rmin", q->rmin[0]);
			stream_put_float(w, "rmax", q->rmax[0]);
		} else {
			stream_put_floats(w, "rmin", q->rmin, q->n);
			stream_put_floats(w, "rmax", q->rmax, q->n);
		}
	}
}

static void
put_done(struct stream_writer *w, const struct stream_rec *src,
    const char *const *known)
{
	if (src)
		stream_put_unknown(w, src, known);
	stream_rec_done(w);
}

/* node */

const char *const node_rec_keys[] = { "op", "domain", "in", "out", NULL };

void
node_rec_release(struct node_rec *n)
{
	free(n->name);
	free(n->op);
	free(n->domain);
	free(n->in);
	free(n->out);
	memset(n, 0, sizeof *n);
}

int
node_rec_read(struct node_rec *n, const struct stream_rec *rec,
    struct err *e)
{
	const char *op;

	memset(n, 0, sizeof *n);
	n->line = rec->line;
	if ((op = stream_rec_get(rec, "op")) == NULL)
		return stream_rec_err(rec, e, "key op: missing in node "
		    "record");
	if ((n->name = strdup(rec->subject)) == NULL ||
	    (n->op = strdup(op)) == NULL) {
		node_rec_release(n);
		return err_nomem(e);
	}
	if ((stream_rec_has(rec, "domain") &&
	    stream_rec_name(rec, "domain", &n->domain, e) < 0) ||
	    stream_rec_names(rec, "in", &n->in, &n->nin, e) < 0 ||
	    stream_rec_names(rec, "out", &n->out, &n->nout, e) < 0) {
		node_rec_release(n);
		return -1;
	}
	return 0;
}

void
node_rec_put(const struct node_rec *n, struct stream_writer *w,
    const struct stream_rec *src)
{
	stream_rec_start(w, "node", n->name);
	stream_put_name(w, "op", n->op);
	if (n->domain)
		stream_put_name(w, "domain", n->domain);
	stream_put_names(w, "in", (const char *const *)n->in, n->nin);
	stream_put_names(w, "out", (const char *const *)n->out, n->nout);
	put_done(w, src, node_rec_keys);
}

/* weight and bias */

const char *const wb_rec_keys[] = {
	"node", "op", "input", "weight", "beta", "dtype", "shape", "min",
	"max", "axis", "cmin", "cmax", NULL
};

void
wb_rec_release(struct wb_rec *w)
{
	free(w->name);
	free(w->node);
	free(w->op);
	free(w->input);
	free(w->weight);
	free(w->cmin);
	free(w->cmax);
	memset(w, 0, sizeof *w);
}

/* The channel ranges, when the record has them. */
static int
read_channels(struct wb_rec *w, const struct stream_rec *rec,
    struct err *e)
{
	int64_t ax;
	size_t n1, n2;

	if (!stream_rec_has(rec, "axis"))
		return 0;
	if (stream_rec_int(rec, "axis", &ax, e) < 0 ||
	    stream_rec_floats(rec, "cmin", &w->cmin, &n1, e) < 0 ||
	    stream_rec_floats(rec, "cmax", &w->cmax, &n2, e) < 0)
		return -1;
	if (ax < 0 || ax >= w->rank)
		return stream_rec_err(rec, e, "key axis: %lld out of range "
		    "for rank %d", (long long)ax, w->rank);
	if (n1 != n2 || (w->dims[ax] >= 0 && (int64_t)n1 != w->dims[ax]))
		return stream_rec_err(rec, e, "keys cmin, cmax: %zu and %zu "
		    "values for %lld channels", n1, n2,
		    (long long)w->dims[ax]);
	w->axis = (int)ax;
	w->nch = n1;
	return 0;
}

static int
read_wb(struct wb_rec *w, const struct stream_rec *rec, struct err *e)
{
	const char *dt;

	if ((w->name = strdup(rec->subject)) == NULL)
		return err_nomem(e);
	if (stream_rec_name(rec, "node", &w->node, e) < 0 ||
	    stream_rec_name(rec, "op", &w->op, e) < 0 ||
	    stream_rec_shape(rec, "shape", &w->rank, w->dims, e) < 0 ||
	    stream_rec_float(rec, "min", &w->min, e) < 0 ||
	    stream_rec_float(rec, "max", &w->max, e) < 0)
		return -1;
	if (w->is_bias && (stream_rec_name(rec, "input", &w->input, e) < 0 ||
	    stream_rec_name(rec, "weight", &w->weight, e) < 0))
		return -1;
	if (w->is_bias && stream_rec_has(rec, "beta") &&
	    stream_rec_double(rec, "beta", &w->beta, e) < 0)
		return -1;
	if ((dt = stream_rec_get(rec, "dtype")) != NULL)
		w->dtype = dtype_from_name(dt);
	if (read_channels(w, rec, e) < 0)
		return -1;
	/* A forged range (NaN, min above max) is refused here, as for stat
	 * records; an empty tensor's is min=inf max=-inf. */
	for (size_t c = 0; c <= w->nch; c++) {
		float lo = c ? w->cmin[c - 1] : w->min;
		float hi = c ? w->cmax[c - 1] : w->max;

		if (!(lo <= hi) && !(lo == INFINITY && hi == -INFINITY))
			return stream_rec_err(rec, e, "%s %s: bad range "
			    "min=%g max=%g", rec->type, rec->subject,
			    (double)lo, (double)hi);
	}
	for (int k = 0; k < w->rank; k++)
		if (w->dims[k] == 0)
			w->empty = 1;
	return 0;
}

int
wb_rec_read(struct wb_rec *w, const struct stream_rec *rec, struct err *e)
{
	memset(w, 0, sizeof *w);
	w->is_bias = strcmp(rec->type, "bias") == 0;
	w->axis = -1;
	w->beta = 1;
	w->dtype = DT_UNDEFINED;
	w->line = rec->line;
	if (read_wb(w, rec, e) < 0) {
		wb_rec_release(w);
		return -1;
	}
	return 0;
}

void
wb_rec_put(const struct wb_rec *b, struct stream_writer *w,
    const struct stream_rec *src)
{
	const char *dt = dtype_name(b->dtype);

	stream_rec_start(w, b->is_bias ? "bias" : "weight", b->name);
	stream_put_name(w, "node", b->node);
	stream_put_name(w, "op", b->op);
	if (b->is_bias) {
		stream_put_name(w, "input", str_or_empty(b->input));
		stream_put_name(w, "weight", str_or_empty(b->weight));
		if (b->beta != 1)
			stream_put_double(w, "beta", b->beta);
	}
	stream_put_raw(w, "dtype", dt ? dt : "undefined");
	stream_put_shape(w, "shape", b->rank, b->dims);
	stream_put_float(w, "min", b->min);
	stream_put_float(w, "max", b->max);
	if (b->axis >= 0) {
		stream_put_int(w, "axis", b->axis);
		stream_put_floats(w, "cmin", b->cmin, b->nch);
		stream_put_floats(w, "cmax", b->cmax, b->nch);
	}
	put_done(w, src, wb_rec_keys);
}

/* qparam */

const char *const qparam_rec_keys[] = {
	"role", "type", "axis", "scale", "zp", "method", "from", "rmin",
	"rmax", "adjusted", "input", "weight", NULL
};

void
qparam_rec_release(struct qparam_rec *r)
{
	free(r->name);
	free(r->input);
	free(r->weight);
	qparam_release(&r->q);
	memset(r, 0, sizeof *r);
	r->q.axis = -1;
}

static int
read_role(const struct stream_rec *rec, enum role *r, struct err *e)
{
	const char *role = stream_rec_get(rec, "role");

	if (role == NULL)
		return stream_rec_err(rec, e, "key role is missing");
	for (int i = 0; i < 3; i++)
		if (strcmp(role, role_names[i]) == 0) {
			*r = (enum role)i;
			return 0;
		}
	return stream_rec_err(rec, e, "key role: unknown role '%.40s'", role);
}

static int
read_qparam_rec(struct qparam_rec *r, const struct stream_rec *rec,
    struct err *e)
{
	if (read_role(rec, &r->role, e) < 0 ||
	    read_qparam(rec, r->role == ROLE_BIAS, &r->q, e) < 0)
		return -1;
	if ((r->role == ROLE_BIAS) != (r->q.type == DT_INT32))
		return stream_rec_err(rec, e, "role %s with type %s",
		    role_name(r->role), dtype_name(r->q.type));
	if (r->role == ROLE_ACT && r->q.axis >= 0 && r->q.n > 1)
		return stream_rec_err(rec, e, "an activation quantized per "
		    "axis");
	if (stream_rec_has(rec, "adjusted") &&
	    stream_rec_int(rec, "adjusted", &r->adjusted, e) < 0)
		return -1;
	if ((stream_rec_has(rec, "input") &&
	    stream_rec_name(rec, "input", &r->input, e) < 0) ||
	    (stream_rec_has(rec, "weight") &&
	    stream_rec_name(rec, "weight", &r->weight, e) < 0))
		return -1;
	if ((r->name = strdup(rec->subject)) == NULL)
		return err_nomem(e);
	return 0;
}

int
qparam_rec_read(struct qparam_rec *r, const struct stream_rec *rec,
    struct err *e)
{
	memset(r, 0, sizeof *r);
	r->q.axis = -1;
	r->line = rec->line;
	if (read_qparam_rec(r, rec, e) < 0) {
		qparam_rec_release(r);
		return -1;
	}
	return 0;
}

void
qparam_rec_put(const struct qparam_rec *r, struct stream_writer *w,
    const struct stream_rec *src)
{
	stream_rec_start(w, "qparam", r->name);
	stream_put_raw(w, "role", role_name(r->role));
	put_qparam(w, &r->q);
	if (r->adjusted)
		stream_put_int(w, "adjusted", r->adjusted);
	if (r->input)
		stream_put_name(w, "input", r->input);
	if (r->weight)
		stream_put_name(w, "weight", r->weight);
	put_done(w, src, qparam_rec_keys);
}

/* convert */

const char *const convert_rec_keys[] = {
	"type", "axis", "scale", "zp", "method", "from", "rmin", "rmax",
	"recv", NULL
};

void
convert_rec_release(struct convert_rec *c)
{
	free(c->name);
	free(c->recv);
	qparam_release(&c->q);
	memset(c, 0, sizeof *c);
	c->q.axis = -1;
}

int
convert_rec_read(struct convert_rec *c, const struct stream_rec *rec,
    struct err *e)
{
	memset(c, 0, sizeof *c);
	c->line = rec->line;
	if (read_qparam(rec, 0, &c->q, e) != 0)
		return -1;
	if (c->q.n != 1) {
		convert_rec_release(c);
		return stream_rec_err(rec, e, "a conversion per axis");
	}
	if (stream_rec_has(rec, "recv") && stream_rec_names(rec, "recv",
	    &c->recv, &c->nrecv, e) != 0) {
		convert_rec_release(c);
		return -1;
	}
	if ((c->name = strdup(rec->subject)) == NULL) {
		convert_rec_release(c);
		return err_nomem(e);
	}
	return 0;
}

void
convert_rec_put(const struct convert_rec *c, struct stream_writer *w,
    const struct stream_rec *src)
{
	stream_rec_start(w, "convert", c->name);
	put_qparam(w, &c->q);
	if (c->recv)
		stream_put_names(w, "recv", (const char *const *)c->recv,
		    c->nrecv);
	put_done(w, src, convert_rec_keys);
}

/* fold */

const char *const fold_rec_keys[] = { "into", NULL };

void
fold_rec_release(struct fold_rec *f)
{
	free(f->node);
	free(f->into);
	memset(f, 0, sizeof *f);
}

/* A record of one node and one name key (fold, dynamic). */
static int
node_name_rec_read(char **node, char **val, const char *key,
    const struct stream_rec *rec, struct err *e)
{
	*node = *val = NULL;
	if (stream_rec_name(rec, key, val, e) != 0)
		return -1;
	if ((*node = strdup(rec->subject)) == NULL) {
		free(*val);
		*val = NULL;
		return err_nomem(e);
	}
	return 0;
}

int
fold_rec_read(struct fold_rec *f, const struct stream_rec *rec,
    struct err *e)
{
	memset(f, 0, sizeof *f);
	f->line = rec->line;
	return node_name_rec_read(&f->node, &f->into, "into", rec, e);
}

void
fold_rec_put(const struct fold_rec *f, struct stream_writer *w,
    const struct stream_rec *src)
{
	stream_rec_start(w, "fold", f->node);
	stream_put_name(w, "into", f->into);
	put_done(w, src, fold_rec_keys);
}

/* dynamic */

const char *const dynamic_rec_keys[] = { "weight", NULL };

void
dynamic_rec_release(struct dynamic_rec *d)
{
	free(d->node);
	free(d->weight);
	memset(d, 0, sizeof *d);
}

int
dynamic_rec_read(struct dynamic_rec *d, const struct stream_rec *rec,
    struct err *e)
{
	memset(d, 0, sizeof *d);
	d->line = rec->line;
	return node_name_rec_read(&d->node, &d->weight, "weight", rec, e);
}

void
dynamic_rec_put(const struct dynamic_rec *d, struct stream_writer *w,
    const struct stream_rec *src)
{
	stream_rec_start(w, "dynamic", d->node);
	stream_put_name(w, "weight", d->weight);
	put_done(w, src, dynamic_rec_keys);
}

/* blockq */

const char *const blockq_rec_keys[] = {
	"node", "type", "block", "method", "symmetric", NULL
};

static const char *const blockq_method_names[] = {
	"rtn", "hqq", "mse"
};

const char *
blockq_method_name(enum blockq_method m)
{
	return (unsigned)m < BLOCKQ_NMETHODS ? blockq_method_names[m] : "?";
}

int
blockq_method_parse(const char *s, enum blockq_method *m)
{
	for (int i = 0; i < BLOCKQ_NMETHODS; i++)
		if (strcmp(s, blockq_method_names[i]) == 0) {
			*m = (enum blockq_method)i;
			return 0;
		}
	return -1;
}

void
blockq_rec_release(struct blockq_rec *b)
{
	free(b->name);
	free(b->node);
	memset(b, 0, sizeof *b);
}

static int
read_blockq_rec(struct blockq_rec *b, const struct stream_rec *rec,
    struct err *e)
{
	const char *t = stream_rec_get(rec, "type");
	const char *m = stream_rec_get(rec, "method");
	int64_t block, sym;

	if (stream_rec_name(rec, "node", &b->node, e) < 0)
		return -1;
	if (!t)
		return stream_rec_err(rec, e, "key type is missing");
	b->type = dtype_from_name(t);
	if (b->type != DT_INT4 && b->type != DT_UINT4 &&
	    b->type != DT_INT8 && b->type != DT_UINT8)
		return stream_rec_err(rec, e, "key type: '%.40s' is not "
		    "int4, uint4, int8 or uint8", t);
	if (stream_rec_int(rec, "block", &block, e) < 0)
		return -1;
	if (block < 16 || block > 256 || (block & (block - 1)))
		return stream_rec_err(rec, e, "key block: %lld is not a "
		    "power of two from 16 to 256", (long long)block);
	b->block = (int)block;
	if (!m)
		return stream_rec_err(rec, e, "key method is missing");
	if (blockq_method_parse(m, &b->method) < 0)
		return stream_rec_err(rec, e, "key method: unknown method "
		    "'%.40s'", m);
	if (stream_rec_int(rec, "symmetric", &sym, e) < 0)
		return -1;
	if (sym != 0 && sym != 1)
		return stream_rec_err(rec, e, "key symmetric: not 0 or 1");
	b->symmetric = (int)sym;
	if ((b->name = strdup(rec->subject)) == NULL)
		return err_nomem(e);
	return 0;
}

int
blockq_rec_read(struct blockq_rec *b, const struct stream_rec *rec,
    struct err *e)
{
	memset(b, 0, sizeof *b);
	b->line = rec->line;
	if (read_blockq_rec(b, rec, e) < 0) {
		blockq_rec_release(b);
		return -1;
	}
	return 0;
}

void
blockq_rec_put(const struct blockq_rec *b, struct stream_writer *w,
    const struct stream_rec *src)
{
	stream_rec_start(w, "blockq", b->name);
	stream_put_name(w, "node", b->node);
	stream_put_raw(w, "type", dtype_name(b->type));
	stream_put_int(w, "block", b->block);
	stream_put_raw(w, "method", blockq_method_name(b->method));
	stream_put_int(w, "symmetric", b->symmetric);
	put_done(w, src, blockq_rec_keys);
}

/* The node index. */

int
node_index_init(struct node_index *ix, struct err *e)
{
	memset(ix, 0, sizeof *ix);
	if (!(ix->by_name_ = strmap_new()) ||
	    !(ix->producer_ = strmap_new()) ||
	    !(ix->readers_ = strmap_new()) || !(ix->param_ = strmap_new())) {
		node_index_release(ix);
		return err_nomem(e);
	}
	return 0;
}

void
node_index_release(struct node_index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		node_rec_release(&ix->v[i]);
	free(ix->v);
	strmap_free(ix->by_name_);
	strmap_free(ix->producer_);
	strmap_free(ix->readers_);
	strmap_free(ix->param_);
	memset(ix, 0, sizeof *ix);
}

/* Index node i's inputs and outputs; the checks of topological order. */
static int
index_node(struct node_index *ix, int i, const struct stream_rec *rec,
    struct err *e)
{
	const struct node_rec *n = &ix->v[i];

	if (strmap_put(ix->by_name_, n->name, i) < 0)
		return err_nomem(e);
	for (size_t k = 0; k < n->nin; k++) {
		int c = 0;

		if (!*n->in[k])
			continue;
		strmap_get(ix->readers_, n->in[k], &c);
		if (strmap_put(ix->readers_, n->in[k], c + 1) < 0)
			return err_nomem(e);
		if (k < 32 && !opinfo_is_data(n->domain, n->op, (int)k) &&
		    !strmap_get(ix->param_, n->in[k], NULL) &&
		    strmap_put(ix->param_, n->in[k], i) < 0)
			return err_nomem(e);
	}
	/* Node records come in topological order (onnxq-stream(5)): an
	 * output read before here means a cycle or a shuffled stream. */
	for (size_t k = 0; k < n->nout; k++) {
		int p;

		if (!*n->out[k])
			continue;
		if (strmap_get(ix->producer_, n->out[k], &p))
			return stream_rec_err(rec, e, "node %s: output %s is "
			    "also produced by node %s", n->name, n->out[k],
			    ix->v[p].name);
		if (strmap_get(ix->readers_, n->out[k], NULL))
			return stream_rec_err(rec, e, "node %s: output %s is "
			    "read before it is produced (node records out of "
			    "topological order, or a cycle)", n->name,
			    n->out[k]);
		if (strmap_put(ix->producer_, n->out[k], i) < 0)
			return err_nomem(e);
	}
	return 0;
}

int
node_index_add(struct node_index *ix, const struct stream_rec *rec,
    struct err *e)
{
	if (strmap_get(ix->by_name_, rec->subject, NULL))
		return stream_rec_err(rec, e, "node %s: described twice",
		    rec->subject);
	if (ix->n >= INT32_MAX ||
	    array_grow(&ix->v, &ix->cap, ix->n, sizeof *ix->v) < 0)
		return err_nomem(e);
	if (node_rec_read(&ix->v[ix->n], rec, e) < 0)
		return -1;
	/* Counted at once, so that a failure below still frees it. */
	ix->n++;
	return index_node(ix, (int)ix->n - 1, rec, e);
}

static int
lookup(const struct strmap *m, const char *key)
{
	int i;

	return strmap_get(m, key, &i) ? i : -1;
}

int
node_index_find(const struct node_index *ix, const char *name)
{
	return lookup(ix->by_name_, name);
}

int
node_index_producer(const struct node_index *ix, const char *tensor)
{
	return lookup(ix->producer_, tensor);
}

int
node_index_nreaders(const struct node_index *ix, const char *tensor)
{
	int c = 0;

	strmap_get(ix->readers_, tensor, &c);
	return c;
}

int
node_index_param_reader(const struct node_index *ix, const char *tensor)
{
	return lookup(ix->param_, tensor);
}

int
node_index_reads(const struct node_index *ix, int i, const char *tensor)
{
	const struct node_rec *n = &ix->v[i];

	for (size_t k = 0; k < n->nin; k++)
		if (strcmp(n->in[k], tensor) == 0)
			return 1;
	return 0;
}
