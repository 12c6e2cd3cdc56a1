/* blockq: the decisions of weight-only quantization. See blockq.h. */
#include <stdlib.h>
#include <string.h>

#include "blockq.h"
#include "tensor.h"

int
blockq_opts_from_settings(struct blockq_opts *o, const struct settings *s,
    struct err *e)
{
	memset(o, 0, sizeof *o);
	o->type = s->set & (1u << CG_W_TYPE) ? s->w_type : DT_INT4;
	o->block = s->block_size;
	o->symmetric = s->set & (1u << CG_W_SYMMETRIC) ? s->w_symmetric : 0;
	/* hqq or rtn when asked (--hqq, --rtn), else mse: man page */
	if (!(s->set & (1u << CG_BLOCK_HQQ)))
		o->method = BLOCKQ_MSE;
	else	/* hqq needs a zero point to optimise */
		o->method = s->block_hqq && !o->symmetric ? BLOCKQ_HQQ :
		    BLOCKQ_RTN;
	if (o->type != DT_INT4 && o->type != DT_UINT4 &&
	    o->type != DT_INT8 && o->type != DT_UINT8)
		return err_set(e, "weight-only type %s is not int4, uint4, "
		    "int8 or uint8", dtype_name(o->type));
	if (o->block < 16 || o->block > 256 || (o->block & (o->block - 1)))
		return err_set(e, "block size %d is not a power of two from "
		    "16 to 256", o->block);
	return 0;
}

static void
note(const struct blockq_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->note)
		return;
	va_start(ap, fmt);
	o->note(fmt, ap);
	va_end(ap);
}

int
blockq_decide(const struct node_index *ix, const struct wb_rec *w,
    const struct blockq_opts *o, struct blockq_rec *b, struct err *e)
{
	int i = node_index_find(ix, w->node);
	const struct node_rec *n = i >= 0 ? &ix->v[i] : NULL;

	memset(b, 0, sizeof *b);
	if (w->is_bias || !n || strcmp(n->op, "MatMul") != 0 ||
	    (n->domain && n->domain[0]))
		return 0;	/* not a MatMul weight: nothing to say */
	if (n->nin < 2 || strcmp(n->in[1], w->name) != 0) {
		note(o, "%s: input A of MatMul %s, stays float", w->name,
		    n->name);
		return 0;
	}
	if (w->dtype != DT_FLOAT || w->rank != 2 || w->empty) {
		note(o, "%s: not a non-empty 2-D float weight, stays float",
		    w->name);
		return 0;
	}
	if (node_index_nreaders(ix, w->name) != 1) {
		note(o, "%s: read by other nodes than %s, stays float",
		    w->name, n->name);
		return 0;
	}
	if (!(b->name = strdup(w->name)) || !(b->node = strdup(n->name))) {
		blockq_rec_release(b);
		return err_nomem(e);
	}
	b->type = o->type;
	b->block = o->block;
	b->method = o->method;
	b->symmetric = o->symmetric;
	return 1;
}

/* A weight record: passed through, then its blockq record if any. */
static int
filter_weight(const struct node_index *ix, const struct stream_rec *rec,
    struct stream_writer *w, const struct blockq_opts *o, struct err *e)
{
	struct wb_rec wr;
	struct blockq_rec b;
	int rc;

	stream_put_rec(w, rec);
	if (wb_rec_read(&wr, rec, e) < 0)
		return -1;
	rc = blockq_decide(ix, &wr, o, &b, e);
	if (rc == 1)
		blockq_rec_put(&b, w, NULL);
	blockq_rec_release(&b);
	wb_rec_release(&wr);
	return rc;
}

long
blockq_filter(struct stream_reader *r, struct stream_writer *w,
    const struct blockq_opts *o, struct err *e)
{
	struct node_index ix;
	const struct stream_rec *rec;
	long n = 0;
	int k = 0, prog = 0, rc = 0;

	if (node_index_init(&ix, e) < 0)
		return -1;
	while (rc >= 0 && (k = stream_next(r, e)) > 0) {
		if (k == STREAM_HEADER) {
			stream_put_header(w, stream_header(r));
			continue;
		}
		if (!prog++)
			stream_put_prog(w, o->prog, o->version, o->argc,
			    o->argv);
		rec = stream_record(r);
		if (strcmp(rec->type, "node") == 0) {
			rc = node_index_add(&ix, rec, e);
			stream_put_rec(w, rec);
		} else if (strcmp(rec->type, "weight") == 0) {
			if ((rc = filter_weight(&ix, rec, w, o, e)) > 0)
				n++;
		} else if (strcmp(rec->type, "blockq") == 0) {
			rc = stream_rec_err(rec, e, "a blockq record: the "
			    "stream has been through onnx-qparams "
			    "--weight-only already");
		} else
			stream_put_rec(w, rec);
	}
	if (rc >= 0 && k < 0)
		rc = -1;
	if (rc >= 0 && !prog)
		stream_put_prog(w, o->prog, o->version, o->argc, o->argv);
	node_index_release(&ix);
	return rc < 0 ? -1 : n;
}
