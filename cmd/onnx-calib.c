/*
 * onnx-calib: the statistics stage (see onnx-calib(1)). Runs the prepared
 * fp32 model on calibration data and writes the onnxq stream
 * (onnxq-stream(5)): the model's graph and weights, then the activation
 * statistics of every float tensor (lib/calib.h). Also describes a model
 * without data, and merges streams of calibration shards exactly.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib.h"
#include "cli.h"
#include "graph.h"
#include "image.h"
#include "infile.h"
#include "interp.h"
#include "model.h"
#include "outfile.h"
#include "prep.h"
#include "progress.h"
#include "sha256.h"
#include "stats.h"
#include "strmap.h"
#include "stream.h"
#include "weights.h"

#define PROG "onnx-calib"
/* The metadata_props key of --annotate-model. */
#define CALIB_META_KEY "onnxq.stats"

struct opts {
	const char **dirs;	/* -d, in order */
	int ndirs;
	long limit;		/* samples; 0 = all */
	long batch;		/* samples per run; 0 = one at a time */
	long shard_k, shard_n;	/* --shard K/N; 0/0 = all */
	int threads;		/* 0 = the interpreter's default */
	int mbits;		/* histogram resolution */
	int quiet;
	int annotate;		/* derived keys in stat records */
	const char *annotate_model;	/* copy of the model with the stream */
	struct image_prep prep;	/* for image directories */
	int prep_set;		/* CALIB_PREP_SIZE, CALIB_PREP_LAYOUT */
	int image_opts;		/* some image option was given */
	int weights_only;
	int merge;
	const char *out;
	char **args;		/* MODEL, or the STATS of --merge */
	int nargs;
	int argc;		/* the whole command line, for #prog */
	char **argv;
};

static const char usage_text[] =
    "usage: onnx-calib -d DIR [-d DIR ...] [--limit N] [--batch N] "
    "[--shard K/N]\n"
    "                  [--threads N] [--hist-bits M] [--quiet] [--annotate]\n"
    "                  [--annotate-model FILE] [--size WxH] "
    "[--resize MODE]\n"
    "                  [--short N] [--pad V] [--scale F] [--mean M] "
    "[--std S] [--bgr]\n"
    "                  [--layout nchw|nhwc] [-o FILE] MODEL\n"
    "       onnx-calib --weights-only [-o FILE] MODEL\n"
    "       onnx-calib --merge [--annotate] [-o FILE] STATS ...\n";

/* Open the output and a stream writer with our provenance on it. */
static struct stream_writer *
open_output(const struct opts *o, struct outfile **of, struct err *e)
{
	struct stream_writer *w;

	if (!(*of = outfile_open(o->out, e)))
		return NULL;
	if (!(w = stream_writer_new(outfile_fp(*of),
	    strcmp(o->out, "-") == 0 ? "<stdout>" : o->out))) {
		outfile_abort(*of);
		err_nomem(e);
		return NULL;
	}
	return w;
}

/* Finish the stream and put the file in place; frees w and of. */
static int
close_output(struct stream_writer *w, struct outfile *of, int ok,
    struct err *e)
{
	if (ok && stream_write_end(w, e) < 0)
		ok = 0;
	stream_writer_free(w);
	if (!ok) {
		outfile_abort(of);
		return -1;
	}
	return outfile_commit(of, e);
}

/*
 * Load the model at path ("-": stdin) and prepare it. Sets sha (the
 * SHA-256 of its bytes), *opset, and the graph index of the prepared
 * graph. With keep, the file's bytes are kept there (for a copy of the
 * model), else freed.
 */
static struct model *
load_prepared(const char *path, char sha[65], int *opset, struct graph **gr,
    unsigned char **keep, size_t *keeplen, struct err *e)
{
	void *buf = NULL;
	size_t len = 0;
	char *dir = NULL;
	struct model *m = NULL;

	*gr = NULL;
	if (infile_read(path, INFILE_MODEL_MAX, &buf, &len, e) < 0)
		return NULL;
	sha256_hex(buf, len, sha);
	if (strcmp(path, "-") != 0 && !(dir = infile_dir(path))) {
		err_nomem(e);
		goto fail;
	}
	if (!(m = model_load_mem(buf, len, path, dir, e)))
		goto fail;
	*opset = model_opset(m, "");
	if (prep_model(m, NULL, e) < 0) {
		err_prefix(e, "%s", path);
		goto fail;
	}
	if (!m->proto->graph) {
		err_set(e, "%s: model has no graph", path);
		goto fail;
	}
	if (!(*gr = graph_new(m->proto->graph, e))) {
		err_prefix(e, "%s", path);
		goto fail;
	}
	free(dir);
	if (keep) {
		*keep = buf;
		*keeplen = len;
	} else
		free(buf);
	return m;
fail:
	free(buf);
	free(dir);
	model_free(m);
	return NULL;
}

/* --weights-only: the model's node, weight and bias records. */
static int
run_weights(const struct opts *o, struct err *e)
{
	const char *path = o->nargs ? o->args[0] : "-";
	char sha[65];
	struct model *m;
	struct graph *gr;
	struct outfile *of;
	struct stream_writer *w;
	int opset, rc = -1;

	if (!(m = load_prepared(path, sha, &opset, &gr, NULL, NULL, e)))
		return -1;
	if (!(w = open_output(o, &of, e)))
		goto out;
	stream_put_prog(w, PROG, ONNXQ_VERSION, o->argc, o->argv);
	stream_put_model(w, path, sha, opset);
	if (weights_emit(m, gr, w, e) < 0) {
		err_prefix(e, "%s", path);
		close_output(w, of, 0, NULL);
		goto out;
	}
	rc = close_output(w, of, 1, e);
out:
	graph_free(gr);
	model_free(m);
	return rc;
}

/* A copy of the model (its original bytes) with the stream in its metadata. */
static int
save_annotated(const char *out, const unsigned char *buf, size_t len,
    const char *model_path, const char *text, size_t textlen, struct err *e)
{
	Onnx__ModelProto *mp;
	Onnx__StringStringEntryProto *kv = NULL, **props;
	struct model *m;
	char *val, *dir = NULL;
	int rc = -1;

	/* external data is found beside the model, and inlined in the copy */
	if (strcmp(model_path, "-") != 0 && !(dir = infile_dir(model_path)))
		return err_nomem(e);
	m = model_load_mem(buf, len, model_path, dir, e);
	free(dir);
	if (!m)
		return -1;
	mp = m->proto;
	if (!(val = malloc(textlen + 1))) {
		err_nomem(e);
		goto out;
	}
	memcpy(val, text, textlen);
	val[textlen] = '\0';
	for (size_t i = 0; i < mp->n_metadata_props; i++)
		if (mp->metadata_props[i]->key &&
		    strcmp(mp->metadata_props[i]->key, CALIB_META_KEY) == 0)
			kv = mp->metadata_props[i];
	if (kv) {
		free(kv->value);
		kv->value = val;
	} else {
		if (!(kv = malloc(sizeof *kv)) || !(props = realloc(
		    mp->metadata_props, (mp->n_metadata_props + 1) *
		    sizeof *props))) {
			free(kv);
			free(val);
			err_nomem(e);
			goto out;
		}
		mp->metadata_props = props;
		onnx__string_string_entry_proto__init(kv);
		kv->value = val;
		if (!(kv->key = strdup(CALIB_META_KEY))) {
			free(kv);
			free(val);
			err_nomem(e);
			goto out;
		}
		props[mp->n_metadata_props++] = kv;
	}
	rc = model_save(m, out, NULL, e);
out:
	model_free(m);
	return rc;
}

/* The batches of this run: shard K/N takes batches K-1, K-1+N, ... */
static int
in_shard(const struct opts *o, long batch)
{
	return o->shard_n == 0 || batch % o->shard_n == o->shard_k - 1;
}

/* Say which tensors had NaN or infinite values (never in their ranges). */
static void
warn_nonfinite(const struct calib *c)
{
	for (int i = 0; i < calib_ntensors(c); i++) {
		const struct tstats *ts = calib_tensor_stats(c, i);

		if (ts->nan || ts->inf)
			cli_warn("warning: tensor %s: %llu NaN and %llu infinite "
			    "values, left out of its statistics",
			    calib_tensor_name(c, i), (unsigned long long)ts->nan,
			    (unsigned long long)ts->inf);
	}
}

/* Run the model on the samples of this run (and shard). */
static int
calibrate(const struct opts *o, struct calib *c, struct calib_data *d,
    struct err *e)
{
	const struct interp *ip = calib_interp(c);
	long total = calib_data_count(d), per = o->batch ? o->batch : 1;
	long nbatch, mine = 0, done = 0;
	struct tensor *in;
	struct progress bar;
	int rc = -1;

	if (o->limit && o->limit < total)
		total = o->limit;
	nbatch = (total + per - 1) / per;
	for (long b = 0; b < nbatch; b++)
		if (in_shard(o, b))
			mine += b == nbatch - 1 ? total - b * per : per;
	if (!(in = calloc((size_t)interp_ninputs(ip) + 1, sizeof *in)))
		return err_nomem(e);
	progress_init(&bar, stderr, progress_wanted(stderr, o->quiet), PROG,
	    "samples", mine);
	progress_update(&bar, 0);
	for (long b = 0; b < nbatch; b++) {
		int first = (int)(b * per);
		int n = (int)(b == nbatch - 1 ? total - b * per : per);

		if (!in_shard(o, b))
			continue;
		if (calib_data_load(d, ip, first, n, in, e) < 0)
			goto out;
		if (calib_run(c, in, e) < 0) {
			if (n > 1)
				err_prefix(e, "%s (batch of %d)",
				    calib_data_name(d, first), n);
			else
				err_prefix(e, "%s", calib_data_name(d, first));
			goto release;
		}
		for (int k = 0; k < interp_ninputs(ip); k++)
			tensor_release(&in[k]);
		done += n;
		progress_update(&bar, done);
	}
	rc = 0;
	goto out;
release:
	for (int k = 0; k < interp_ninputs(ip); k++)
		tensor_release(&in[k]);
out:
	progress_end(&bar);
	free(in);
	if (rc == 0 && mine == 0)
		cli_warn("warning: shard %ld/%ld has none of the %ld batches",
		    o->shard_k, o->shard_n, nbatch);
	return rc;
}

/* -d: calibration on data. */
static int
run_calib(const struct opts *o, struct err *e)
{
	const char *path = o->nargs ? o->args[0] : "-";
	char sha[65], *text = NULL;
	unsigned char *keep = NULL;
	size_t keeplen = 0, textlen = 0;
	struct model *m;
	struct graph *gr;
	struct calib *c = NULL;
	struct calib_data *d = NULL;
	struct calib_opts co;
	struct outfile *of;
	struct stream_writer *w;
	FILE *mem = NULL;
	int opset, rc = -1;

	if (!(m = load_prepared(path, sha, &opset, &gr,
	    o->annotate_model ? &keep : NULL, &keeplen, e)))
		return -1;
	calib_opts_init(&co);
	co.threads = o->threads;
	co.mbits = o->mbits;
	if (!(c = calib_new(m, &co, e))) {
		err_prefix(e, "%s", path);
		goto out;
	}
	if (!(d = calib_data_open((const char *const *)o->dirs, o->ndirs, e)))
		goto out;
	if (calib_data_has_images(d)) {
		struct image_prep p = o->prep;

		if (calib_image_prep(calib_interp(c), &p, o->prep_set, e) < 0) {
			err_prefix(e, "%s", path);
			goto out;
		}
		calib_data_set_prep(d, &p);
	} else if (o->image_opts) {
		err_set(e, "image options given, but no -d directory holds "
		    "images");
		goto out;
	}
	if (calibrate(o, c, d, e) < 0)
		goto out;
	warn_nonfinite(c);
	/* the stream goes to memory first when the model copy gets it too */
	if (o->annotate_model) {
		if (!(mem = open_memstream(&text, &textlen))) {
			err_nomem(e);
			goto out;
		}
		if (!(w = stream_writer_new(mem, "<memory>"))) {
			err_nomem(e);
			goto out;
		}
		of = NULL;
	} else if (!(w = open_output(o, &of, e)))
		goto out;
	stream_put_prog(w, PROG, ONNXQ_VERSION, o->argc, o->argv);
	stream_put_model(w, path, sha, opset);
	if (weights_emit(m, gr, w, e) < 0) {
		err_prefix(e, "%s", path);
		goto fail_w;
	}
	if (calib_write(c, w, o->annotate, e) < 0)
		goto fail_w;
	if (!o->annotate_model) {
		rc = close_output(w, of, 1, e);
		goto out;
	}
	if (stream_write_end(w, e) < 0) {
		stream_writer_free(w);
		goto out;
	}
	stream_writer_free(w);
	if (fclose(mem) != 0) {
		mem = NULL;
		err_nomem(e);
		goto out;
	}
	mem = NULL;
	if (save_annotated(o->annotate_model, keep, keeplen, path, text,
	    textlen, e) < 0)
		goto out;
	if (!(of = outfile_open(o->out, e)))
		goto out;
	if (fwrite(text, 1, textlen, outfile_fp(of)) != textlen) {
		err_errno(e, "%s", strcmp(o->out, "-") == 0 ? "<stdout>" :
		    o->out);
		outfile_abort(of);
		goto out;
	}
	rc = outfile_commit(of, e);
	goto out;
fail_w:
	if (of)
		close_output(w, of, 0, NULL);
	else
		stream_writer_free(w);
out:
	if (mem)
		fclose(mem);
	free(text);
	free(keep);
	calib_data_free(d);
	calib_free(c);
	graph_free(gr);
	model_free(m);
	return rc;
}

/*
 * --merge. Every distinct header line and record becomes an item; stat
 * and hist items accumulate exactly, others must agree. The output order
 * must not depend on the order of the inputs: each input says "a before
 * b" for its consecutive items, and the items are written in a
 * topological order of those constraints, ties (and any cycle) broken by
 * the item key. When all inputs list the same items in the same order,
 * that order is kept.
 */
enum item_kind { IT_HEADER, IT_RECORD, IT_STAT, IT_HIST, IT_OTHER };

struct item {
	enum item_kind kind;
	char *key;		/* map key, also the tie-break order */
	char *subject;		/* stat/hist */
	struct stream_rec *rec;	/* IT_RECORD/IT_OTHER: the first copy */
	char *where;		/* "FILE:LINE" first seen, for messages */
	struct tstats ts;	/* IT_STAT, IT_HIST (only the histogram) */
	int has_ts;
	struct stream_kv *extra;	/* unknown keys of stat/hist, by key */
	size_t nextra;
	int *succ;
	size_t nsucc, capsucc;
	int indeg;
	int done;
};

struct merge {
	struct item *items;
	size_t n, cap;
	struct strmap *index;
	char *model_sha;	/* sha256 of the first #model line */
	char *model_where;
	struct tstats_edges *edges;	/* bin edge texts; NULL: none */
};

static void
merge_release(struct merge *mg)
{
	tstats_edges_free(mg->edges);
	mg->edges = NULL;
	for (size_t i = 0; i < mg->n; i++) {
		struct item *it = &mg->items[i];

		free(it->key);
		free(it->subject);
		stream_rec_free(it->rec);
		free(it->where);
		if (it->has_ts)
			tstats_release(&it->ts);
		for (size_t k = 0; k < it->nextra; k++) {
			free((char *)it->extra[k].key);
			free((char *)it->extra[k].val);
		}
		free(it->extra);
		free(it->succ);
	}
	free(mg->items);
	strmap_free(mg->index);
	free(mg->model_sha);
	free(mg->model_where);
}

static char *
where_str(const char *file, long line)
{
	char *s;
	size_t n = strlen(file) + 24;

	if ((s = malloc(n)))
		snprintf(s, n, "%s:%ld", file, line);
	return s;
}

static char *
join3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);

	if (s) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb);
		memcpy(s + la + lb, c, lc + 1);
	}
	return s;
}

/* The item for key, created (kind, where) when new. Sets *isnew. */
static int
item_get(struct merge *mg, enum item_kind kind, char *key, const char *file,
    long line, int *isnew, struct err *e)
{
	struct item *it;
	int idx;

	if (!key)
		return err_nomem(e);
	if (strmap_get(mg->index, key, &idx)) {
		free(key);
		*isnew = 0;
		return idx;
	}
	if (mg->n == mg->cap) {
		size_t c = mg->cap ? mg->cap * 2 : 256;
		struct item *ni = realloc(mg->items, c * sizeof *ni);

		if (!ni || mg->n >= INT_MAX) {
			free(key);
			return err_nomem(e);
		}
		mg->items = ni;
		mg->cap = c;
	}
	it = &mg->items[mg->n];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->key = key;
	it->where = where_str(file, line);
	if (!it->where || strmap_put(mg->index, key, (int)mg->n) < 0) {
		free(it->where);
		free(key);
		return err_nomem(e);
	}
	*isnew = 1;
	return (int)mg->n++;
}

static int
add_edge(struct merge *mg, int from, int to, struct err *e)
{
	struct item *it;

	if (from < 0 || from == to)
		return 0;
	it = &mg->items[from];
	if (it->nsucc == it->capsucc) {
		size_t c = it->capsucc ? it->capsucc * 2 : 4;
		int *ns = realloc(it->succ, c * sizeof *ns);

		if (!ns)
			return err_nomem(e);
		it->succ = ns;
		it->capsucc = c;
	}
	it->succ[it->nsucc++] = to;
	mg->items[to].indeg++;
	return 0;
}

/* The sha256= of a #model header line, or NULL. */
static const char *
model_sha(const struct stream_reader *r)
{
	const char *f;

	for (size_t i = 2; (f = stream_header_field(r, i)); i++)
		if (strncmp(f, "sha256=", 7) == 0)
			return f + 7;
	return NULL;
}

static int
cmp_extra(const void *a, const void *b)
{
	return strcmp(((const struct stream_kv *)a)->key,
	    ((const struct stream_kv *)b)->key);
}

/* Unknown keys of a stat or hist record: all inputs must agree on them. */
static int
merge_extra(struct item *it, const struct stream_rec *rec,
    const char *const *known, struct err *e)
{
	for (size_t i = 0; i < rec->nkv; i++) {
		const struct stream_kv *kv = &rec->kv[i];
		const char *const *k;
		size_t j;
		struct stream_kv *nx;

		for (k = known; *k; k++)
			if (strcmp(*k, kv->key) == 0)
				break;
		if (*k)
			continue;
		for (j = 0; j < it->nextra; j++)
			if (strcmp(it->extra[j].key, kv->key) == 0)
				break;
		if (j < it->nextra) {
			if (strcmp(it->extra[j].val, kv->val) != 0)
				return stream_rec_err(rec, e, "%s %s: key %s "
				    "differs from %s, cannot merge it",
				    rec->type, rec->subject, kv->key, it->where);
			continue;
		}
		if (!(nx = realloc(it->extra, (it->nextra + 1) * sizeof *nx)))
			return err_nomem(e);
		it->extra = nx;
		nx[it->nextra].key = strdup(kv->key);
		nx[it->nextra].val = strdup(kv->val);
		if (!nx[it->nextra].key || !nx[it->nextra].val) {
			free((char *)nx[it->nextra].key);
			free((char *)nx[it->nextra].val);
			return err_nomem(e);
		}
		it->nextra++;
		qsort(it->extra, it->nextra, sizeof *it->extra, cmp_extra);
	}
	return 0;
}

static int
merge_record(struct merge *mg, const struct stream_rec *rec, int *prev,
    struct err *e)
{
	enum item_kind kind;
	struct item *it;
	char *key;
	int idx, isnew;

	if (strcmp(rec->type, "stat") == 0) {
		kind = IT_STAT;
		key = join3("s\t", rec->subject, "");
	} else if (strcmp(rec->type, "hist") == 0) {
		kind = IT_HIST;
		key = join3("t\t", rec->subject, "");
	} else if (strcmp(rec->type, "node") == 0 ||
	    strcmp(rec->type, "weight") == 0 ||
	    strcmp(rec->type, "bias") == 0 ||
	    strcmp(rec->type, "qparam") == 0 ||
	    strcmp(rec->type, "convert") == 0) {
		/* known records about one subject: must agree */
		kind = IT_RECORD;
		key = join3(rec->type, "\t", rec->subject);
	} else {
		/* unknown type: kept once per distinct line */
		kind = IT_OTHER;
		key = malloc(rec->rawlen + 3);
		if (key) {
			memcpy(key, "~\t", 2);
			memcpy(key + 2, rec->raw, rec->rawlen + 1);
		}
	}
	if ((idx = item_get(mg, kind, key, rec->file, rec->line, &isnew,
	    e)) < 0)
		return -1;
	it = &mg->items[idx];
	switch (kind) {
	case IT_RECORD:
	case IT_OTHER:
		if (isnew) {
			if (!(it->rec = stream_rec_dup(rec, e)))
				return -1;
		} else if (it->rec->rawlen != rec->rawlen ||
		    memcmp(it->rec->raw, rec->raw, rec->rawlen) != 0)
			return stream_rec_err(rec, e, "%s %s differs from %s",
			    rec->type, rec->subject, it->where);
		break;
	case IT_STAT: {
		struct tstats ts;

		if (tstats_init(&ts, -1, e) < 0)
			return -1;
		if (tstats_read_stat(&ts, rec, e) < 0)
			return -1;
		if (isnew) {
			it->ts = ts;
			it->has_ts = 1;
			if (!(it->subject = strdup(rec->subject)))
				return err_nomem(e);
		} else if (tstats_merge(&it->ts, &ts, e) < 0) {
			tstats_release(&ts);
			return err_prefix(e, "%s:%ld: stat %s", rec->file,
			    rec->line, rec->subject);
		} else
			tstats_release(&ts);
		if (merge_extra(it, rec, tstats_stat_keys, e) < 0)
			return -1;
		break;
	}
	case IT_HIST:
		if (isnew) {
			if (tstats_init(&it->ts, -1, e) < 0)
				return -1;
			it->has_ts = 1;
			if (!(it->subject = strdup(rec->subject)))
				return err_nomem(e);
		}
		if (tstats_read_hist(&it->ts, rec, e) < 0 ||
		    merge_extra(it, rec, tstats_hist_keys, e) < 0)
			return -1;
		break;
	default:
		break;
	}
	if (add_edge(mg, *prev, idx, e) < 0)
		return -1;
	*prev = idx;
	return 0;
}

static int
merge_header(struct merge *mg, const struct stream_reader *r, int *prev,
    struct err *e)
{
	const char *line = stream_header(r), *sha;
	int idx, isnew;

	if (strcmp(stream_header_field(r, 0), "#model") == 0 &&
	    (sha = model_sha(r))) {
		if (!mg->model_sha) {
			mg->model_sha = strdup(sha);
			mg->model_where = where_str(stream_name(r),
			    stream_lineno(r));
			if (!mg->model_sha || !mg->model_where)
				return err_nomem(e);
		} else if (strcmp(mg->model_sha, sha) != 0)
			return err_set(e, "%s:%ld: stream of another model "
			    "(sha256 %.12s..., %s has %.12s...)", stream_name(r),
			    stream_lineno(r), sha, mg->model_where,
			    mg->model_sha);
	}
	if ((idx = item_get(mg, IT_HEADER, join3("#\t", line, ""),
	    stream_name(r), stream_lineno(r), &isnew, e)) < 0)
		return -1;
	if (add_edge(mg, *prev, idx, e) < 0)
		return -1;
	*prev = idx;
	return 0;
}

static int
merge_input(struct merge *mg, const char *path, struct err *e)
{
	struct stream_reader *r = stream_open(path, e);
	int got, prev_h = -1, prev_r = -1;

	if (!r)
		return -1;
	while ((got = stream_next(r, e)) > 0) {
		if (got == STREAM_HEADER)
			got = merge_header(mg, r, &prev_h, e);
		else
			got = merge_record(mg, stream_record(r), &prev_r, e);
		if (got < 0)
			break;
	}
	stream_reader_free(r);
	return got < 0 ? -1 : 0;
}

/* A min-heap of item indices ordered by key. */
struct heap {
	int *v;
	size_t n;
	const struct item *items;
};

static int
heap_less(const struct heap *h, int a, int b)
{
	return strcmp(h->items[a].key, h->items[b].key) < 0;
}

static void
heap_push(struct heap *h, int x)
{
	size_t i = h->n++;

	h->v[i] = x;
	while (i > 0 && heap_less(h, h->v[i], h->v[(i - 1) / 2])) {
		int t = h->v[i];

		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static int
heap_pop(struct heap *h)
{
	int top = h->v[0];
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && heap_less(h, h->v[l], h->v[m]))
			m = l;
		if (r < h->n && heap_less(h, h->v[r], h->v[m]))
			m = r;
		if (m == i)
			break;
		{
			int t = h->v[i];

			h->v[i] = h->v[m];
			h->v[m] = t;
		}
		i = m;
	}
	return top;
}

static int
write_item(const struct opts *o, struct merge *mg, struct item *it,
    struct stream_writer *w, struct err *e)
{
	switch (it->kind) {
	case IT_HEADER:
		stream_put_header(w, it->key + 2);
		break;
	case IT_RECORD:
	case IT_OTHER:
		stream_put_rec(w, it->rec);
		break;
	case IT_STAT:
		stream_rec_start(w, "stat", it->subject);
		tstats_put_stat(&it->ts, w, o->annotate);
		for (size_t k = 0; k < it->nextra; k++)
			stream_put_raw(w, it->extra[k].key, it->extra[k].val);
		stream_rec_done(w);
		break;
	case IT_HIST:
		/* the same edges recur in every tensor: format each once */
		if (!mg->edges)
			mg->edges = tstats_edges_new();
		if (tstats_put_hist_ed(&it->ts, it->subject, w, it->extra,
		    it->nextra, mg->edges, e) < 0)
			return -1;
		break;
	}
	return 0;
}

/*
 * Write the items of one group (headers, or records) in topological
 * order of the input orders, ties broken by key.
 */
static int
write_group(const struct opts *o, struct merge *mg, int headers,
    struct stream_writer *w, struct err *e)
{
	struct heap h = { NULL, 0, mg->items };
	size_t left = 0;
	int rc = -1;

	if (!(h.v = malloc((mg->n ? mg->n : 1) * sizeof *h.v)))
		return err_nomem(e);
	for (size_t i = 0; i < mg->n; i++)
		if ((mg->items[i].kind == IT_HEADER) == headers) {
			left++;
			if (mg->items[i].indeg == 0)
				heap_push(&h, (int)i);
		}
	while (left > 0) {
		struct item *it;
		int x;

		if (h.n == 0) {
			/* inputs disagree on the order (a cycle): take the least key */
			int best = -1;

			for (size_t i = 0; i < mg->n; i++)
				if ((mg->items[i].kind == IT_HEADER) == headers &&
				    !mg->items[i].done && (best < 0 ||
				    heap_less(&h, (int)i, best)))
					best = (int)i;
			mg->items[best].indeg = 0;
			heap_push(&h, best);
		}
		x = heap_pop(&h);
		it = &mg->items[x];
		if (it->done)
			continue;
		it->done = 1;
		left--;
		if (write_item(o, mg, it, w, e) < 0)
			goto out;
		for (size_t k = 0; k < it->nsucc; k++) {
			struct item *s = &mg->items[it->succ[k]];

			if (!s->done && --s->indeg == 0)
				heap_push(&h, it->succ[k]);
		}
	}
	rc = 0;
out:
	free(h.v);
	return rc;
}

/* Each merged histogram counts exactly its tensor's finite values. */
static int
check_hists(struct merge *mg, struct err *e)
{
	for (size_t i = 0; i < mg->n; i++) {
		struct item *h = &mg->items[i];
		struct tstats ts;
		char *key;
		int s, found;

		if (h->kind != IT_HIST)
			continue;
		if (!(key = join3("s\t", h->subject, "")))
			return err_nomem(e);
		found = strmap_get(mg->index, key, &s);
		free(key);
		if (!found)
			return err_set(e, "%s: hist %s without a stat record",
			    h->where, h->subject);
		ts = mg->items[s].ts;
		ts.hist = h->ts.hist;
		if (tstats_check_hist(&ts, e) < 0)
			return err_prefix(e, "%s: hist %s", h->where,
			    h->subject);
	}
	return 0;
}

static int
run_merge(const struct opts *o, struct err *e)
{
	struct merge mg = { 0 };
	struct outfile *of;
	struct stream_writer *w;
	char *stdin_arg[] = { "-" };
	char **inputs = o->nargs ? o->args : stdin_arg;
	int ninputs = o->nargs ? o->nargs : 1, rc = -1;

	if (!(mg.index = strmap_new())) {
		err_nomem(e);
		goto out;
	}
	for (int i = 0; i < ninputs; i++)
		if (merge_input(&mg, inputs[i], e) < 0)
			goto out;
	if (check_hists(&mg, e) < 0)
		goto out;
	if (!(w = open_output(o, &of, e)))
		goto out;
	if (write_group(o, &mg, 1, w, e) < 0) {
		close_output(w, of, 0, NULL);
		goto out;
	}
	stream_put_prog(w, PROG, ONNXQ_VERSION, o->argc, o->argv);
	if (write_group(o, &mg, 0, w, e) < 0) {
		close_output(w, of, 0, NULL);
		goto out;
	}
	rc = close_output(w, of, 1, e);
out:
	merge_release(&mg);
	return rc;
}

static int
run(const struct opts *o, struct err *e)
{
	if (o->merge)
		return run_merge(o, e);
	if (o->weights_only)
		return run_weights(o, e);
	return run_calib(o, e);
}

/* A positive count for an option, or -1. */
static long
count_arg(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return -1;
	return v;
}

/* "K/N" with 1 <= K <= N. */
static int
shard_arg(const char *s, long *k, long *n)
{
	char *end;

	errno = 0;
	*k = strtol(s, &end, 10);
	if (errno || end == s || *end != '/')
		return -1;
	s = end + 1;
	*n = strtol(s, &end, 10);
	if (errno || end == s || *end || *n < 1 || *k < 1 || *k > *n)
		return -1;
	return 0;
}

enum {
	OPT_LIMIT = 256, OPT_BATCH, OPT_ANNOTATE, OPT_WEIGHTS_ONLY, OPT_MERGE,
	OPT_SHARD, OPT_THREADS, OPT_HIST_BITS, OPT_ANNOTATE_MODEL, OPT_SIZE,
	OPT_RESIZE, OPT_SHORT, OPT_PAD, OPT_SCALE, OPT_MEAN, OPT_STD, OPT_BGR,
	OPT_LAYOUT,
};

/* The image options: parsed into o->prep. -1 to go on, else the exit status. */
static int
image_opt(struct opts *o, int c, const char *arg)
{
	struct err e;
	long v;
	int f;

	o->image_opts = 1;
	switch (c) {
	case OPT_SIZE:
		if (image_parse_size(arg, &o->prep.width, &o->prep.height, &e) < 0)
			return cli_usage_error("--size: %s", e.msg);
		o->prep_set |= CALIB_PREP_SIZE;
		break;
	case OPT_RESIZE:
		if ((f = image_fit_from_name(arg)) < 0)
			return cli_usage_error("--resize: '%s' is not stretch, fit, "
			    "fit-topleft or crop", arg);
		o->prep.fit = f;
		break;
	case OPT_SHORT:
		if ((v = count_arg(arg)) < 0 || v > 65536)
			return cli_usage_error("--short: '%s' is not a positive "
			    "count", arg);
		o->prep.short_side = (int)v;
		break;
	case OPT_PAD:
		if (image_parse_scale(arg, &o->prep.pad, &e) < 0)
			return cli_usage_error("--pad: %s", e.msg);
		break;
	case OPT_SCALE:
		if (image_parse_scale(arg, &o->prep.scale, &e) < 0)
			return cli_usage_error("--scale: %s", e.msg);
		break;
	case OPT_MEAN:
		if (image_parse_triple(arg, o->prep.mean, &e) < 0)
			return cli_usage_error("--mean: %s", e.msg);
		break;
	case OPT_STD:
		if (image_parse_triple(arg, o->prep.std, &e) < 0)
			return cli_usage_error("--std: %s", e.msg);
		for (int k = 0; k < 3; k++)
			if (o->prep.std[k] == 0)
				return cli_usage_error("--std: '%s' has a zero", arg);
		break;
	case OPT_BGR:
		o->prep.bgr = 1;
		break;
	case OPT_LAYOUT:
		if (strcmp(arg, "nchw") == 0 || strcmp(arg, "NCHW") == 0)
			o->prep.layout = IMAGE_NCHW;
		else if (strcmp(arg, "nhwc") == 0 || strcmp(arg, "NHWC") == 0)
			o->prep.layout = IMAGE_NHWC;
		else
			return cli_usage_error("--layout: '%s' is not nchw or nhwc",
			    arg);
		o->prep_set |= CALIB_PREP_LAYOUT;
		break;
	}
	return -1;
}

/*
 * Fill o from the command line: -1 to go on, else the exit status (help,
 * version, usage mistakes).
 */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "hist-bits", required_argument, NULL, OPT_HIST_BITS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "annotate-model", required_argument, NULL,
		    OPT_ANNOTATE_MODEL },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "resize", required_argument, NULL, OPT_RESIZE },
		{ "short", required_argument, NULL, OPT_SHORT },
		{ "pad", required_argument, NULL, OPT_PAD },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "mean", required_argument, NULL, OPT_MEAN },
		{ "std", required_argument, NULL, OPT_STD },
		{ "bgr", no_argument, NULL, OPT_BGR },
		{ "layout", required_argument, NULL, OPT_LAYOUT },
		{ "weights-only", no_argument, NULL, OPT_WEIGHTS_ONLY },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, calib_opt = 0, r;
	long v;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dirs[o->ndirs++] = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_LIMIT:
			if ((o->limit = count_arg(optarg)) < 0)
				return cli_usage_error("--limit: '%s' is not a "
				    "positive count", optarg);
			break;
		case OPT_BATCH:
			if ((o->batch = count_arg(optarg)) < 0 ||
			    o->batch > INT_MAX)
				return cli_usage_error("--batch: '%s' is not a "
				    "positive count", optarg);
			break;
		case OPT_SHARD:
			if (shard_arg(optarg, &o->shard_k, &o->shard_n) < 0)
				return cli_usage_error("--shard: '%s' is not K/N "
				    "with 1 <= K <= N", optarg);
			calib_opt = 1;
			break;
		case OPT_THREADS:
			if ((v = count_arg(optarg)) < 0 || v > 1024)
				return cli_usage_error("--threads: '%s' is not a "
				    "positive count", optarg);
			o->threads = (int)v;
			calib_opt = 1;
			break;
		case OPT_HIST_BITS:
			if ((v = strcmp(optarg, "0") == 0 ? 0 :
			    count_arg(optarg)) < 0 || v > HIST_MBITS_MAX)
				return cli_usage_error("--hist-bits: '%s' is not 0 "
				    "to %d", optarg, HIST_MBITS_MAX);
			o->mbits = (int)v;
			calib_opt = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_ANNOTATE:
			o->annotate = 1;
			break;
		case OPT_ANNOTATE_MODEL:
			o->annotate_model = optarg;
			calib_opt = 1;
			break;
		case OPT_SIZE: case OPT_RESIZE: case OPT_SHORT: case OPT_PAD:
		case OPT_SCALE: case OPT_MEAN: case OPT_STD: case OPT_BGR:
		case OPT_LAYOUT:
			if ((r = image_opt(o, c, optarg)) >= 0)
				return r;
			calib_opt = 1;
			break;
		case OPT_WEIGHTS_ONLY:
			o->weights_only = 1;
			break;
		case OPT_MERGE:
			o->merge = 1;
			break;
		case 'h':
			cli_usage(stdout);
			return fflush(stdout) == 0 ? 0 : 1;
		case 'V':
			printf("%s %s\n", PROG, ONNXQ_VERSION);
			return fflush(stdout) == 0 ? 0 : 1;
		default:
			return cli_bad_option(c, argv, longopts);
		}
	}
	o->args = argv + optind;
	o->nargs = argc - optind;
	if (o->weights_only && o->merge)
		return cli_usage_error("--weights-only and --merge exclude each "
		    "other");
	if ((o->weights_only || o->merge) && o->ndirs)
		return cli_usage_error("-d is not used with %s",
		    o->merge ? "--merge" : "--weights-only");
	if ((o->weights_only || o->merge) && (o->limit || o->batch))
		return cli_usage_error("--limit and --batch need -d");
	if ((o->weights_only || o->merge) && calib_opt)
		return cli_usage_error("the calibration options need -d");
	if (!o->weights_only && !o->merge && !o->ndirs)
		return cli_usage_error("no calibration data: give -d DIR (or "
		    "--weights-only, or --merge)");
	if (!o->merge && o->nargs > 1)
		return cli_usage_error("one model expected, got %d arguments",
		    o->nargs);
	if (o->annotate_model && strcmp(o->annotate_model, "-") == 0 &&
	    strcmp(o->out, "-") == 0)
		return cli_usage_error("--annotate-model -: the stream goes to "
		    "stdout already");
	return -1;
}

int
main(int argc, char **argv)
{
	struct opts o = { .out = "-", .argc = argc, .argv = argv,
	    .mbits = HIST_MBITS_DEFAULT };
	struct err e;
	int rc;

	/* before anything else: it may run the program again */
	interp_reexec_bounded_spin(argv);
	cli_init(PROG, usage_text);
	image_prep_init(&o.prep);
	if (!(o.dirs = calloc((size_t)argc + 1, sizeof *o.dirs))) {
		cli_warn("out of memory");
		return 1;
	}
	if ((rc = parse_opts(argc, argv, &o)) < 0) {
		outfile_cleanup_on_signals();
		rc = 0;
		if (run(&o, &e) < 0) {
			cli_warn("%s", e.msg);
			rc = 1;
		}
	}
	free(o.dirs);
	return rc;
}
