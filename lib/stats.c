/* stats: see stats.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Values per chunk: moments and histogram read the chunk while in L1. */
#define CHUNK 4096
/* Independent accumulators in the moments loop. */
#define LANES 4

const char *const tstats_stat_keys[] = {
	"dtype", "shape", "n", "nan", "inf", "min", "max", "batches", "bmin",
	"bmax", "sum", "sumsq", "mean", "std", "mavg_min", "mavg_max", NULL
};
const char *const tstats_hist_keys[] = { "mbits", "zero", "bins", NULL };

int
tstats_init(struct tstats *ts, int mbits, struct err *e)
{
	memset(ts, 0, sizeof *ts);
	ts->dtype = DT_FLOAT;
	ts->rank = TSTATS_RANK_NONE;
	ts->min = INFINITY;
	ts->max = -INFINITY;
	if (mbits >= 0 && !(ts->hist = hist_new(mbits))) {
		if (mbits > HIST_MBITS_MAX)
			return err_set(e, "histogram mbits %d above %d", mbits,
			    HIST_MBITS_MAX);
		return err_nomem(e);
	}
	return 0;
}

static void
release_sums(struct tstats *ts)
{
	cxsum_release(&ts->bmin);
	cxsum_release(&ts->bmax);
	cxsum_release(&ts->sum);
	cxsum_release(&ts->sumsq);
}

void
tstats_release(struct tstats *ts)
{
	hist_free(ts->hist);
	ts->hist = NULL;
	release_sums(ts);
}

void
tstats_add_shape(struct tstats *ts, int rank, const int64_t *dims)
{
	if (rank == TSTATS_RANK_NONE || ts->rank == TSTATS_RANK_MIXED)
		return;
	if (ts->rank == TSTATS_RANK_NONE || rank == TSTATS_RANK_MIXED) {
		ts->rank = rank;
		if (rank > 0)
			memcpy(ts->dims, dims, rank * sizeof *dims);
		return;
	}
	if (rank != ts->rank) {
		ts->rank = TSTATS_RANK_MIXED;
		return;
	}
	for (int i = 0; i < rank; i++)
		if (ts->dims[i] != dims[i])
			ts->dims[i] = -1;
}

/* -0 compares equal to +0; keep only +0 so results do not depend on order. */
static float
no_negzero(float f)
{
	return f == 0 ? 0.0f : f;
}

/* Moments of one chunk; the caller's accumulators are added to. */
struct moments {
	uint64_t n;		/* finite values */
	float min, max;
	double s[LANES], q[LANES];
};

/*
 * The fast path: no checks, four independent lanes the compiler keeps in
 * registers. NaN is ignored by the comparisons, an infinity is not: the
 * caller redoes a chunk whose sums come out non-finite (no sum of squares
 * of finite floats in double can overflow).
 */
static int
chunk_fast(const float *p, size_t n, struct moments *m)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0;
	float lo0 = m->min, lo1 = m->min, hi0 = m->max, hi1 = m->max;
	size_t i = 0;

	for (; i + LANES <= n; i += LANES) {
		float a = p[i], b = p[i + 1], c = p[i + 2], d = p[i + 3];
		double da = a, db = b, dc = c, dd = d;

		s0 += da;
		s1 += db;
		s2 += dc;
		s3 += dd;
		q0 += da * da;
		q1 += db * db;
		q2 += dc * dc;
		q3 += dd * dd;
		lo0 = a < lo0 ? a : lo0;
		lo1 = b < lo1 ? b : lo1;
		lo0 = c < lo0 ? c : lo0;
		lo1 = d < lo1 ? d : lo1;
		hi0 = a > hi0 ? a : hi0;
		hi1 = b > hi1 ? b : hi1;
		hi0 = c > hi0 ? c : hi0;
		hi1 = d > hi1 ? d : hi1;
	}
	for (; i < n; i++) {
		double d = p[i];

		s0 += d;
		q0 += d * d;
		lo0 = p[i] < lo0 ? p[i] : lo0;
		hi0 = p[i] > hi0 ? p[i] : hi0;
	}
	if (!isfinite(s0 + s1 + s2 + s3) || !isfinite(q0 + q1 + q2 + q3))
		return -1;
	m->s[0] += s0;
	m->s[1] += s1;
	m->s[2] += s2;
	m->s[3] += s3;
	m->q[0] += q0;
	m->q[1] += q1;
	m->q[2] += q2;
	m->q[3] += q3;
	m->min = lo0 < lo1 ? lo0 : lo1;
	m->max = hi0 > hi1 ? hi0 : hi1;
	m->n += n;
	return 0;
}

/* The careful path, for a chunk with NaN or Inf; returns their count. */
static uint64_t
chunk_checked(const float *p, size_t n, struct moments *m, uint64_t *nan)
{
	double s = 0, q = 0;
	uint64_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		float v = p[i];

		if (!isfinite(v)) {
			bad++;
			*nan += isnan(v) != 0;
			continue;
		}
		s += v;
		q += (double)v * v;
		m->min = v < m->min ? v : m->min;
		m->max = v > m->max ? v : m->max;
	}
	m->s[0] += s;
	m->q[0] += q;
	m->n += n - bad;
	return bad;
}

int
tstats_add_batch(struct tstats *ts, const float *x, size_t n, struct err *e)
{
	struct moments m = { 0, INFINITY, -INFINITY, { 0 }, { 0 } };
	uint64_t nan = 0, bad = 0;
	double sum, sumsq;

	/* chunks stay in L1 for the histogram's pass over the same values */
	for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
		size_t cn = n - c0 < CHUNK ? n - c0 : CHUNK;
		const float *p = x + c0;

		if (chunk_fast(p, cn, &m) < 0)
			bad += chunk_checked(p, cn, &m, &nan);
		if (ts->hist && hist_add(ts->hist, p, cn) < 0)
			return err_nomem(e);
	}
	/* a fixed order of the lanes: the result depends on x only */
	sum = (m.s[0] + m.s[1]) + (m.s[2] + m.s[3]);
	sumsq = (m.q[0] + m.q[1]) + (m.q[2] + m.q[3]);
	ts->nan += nan;
	ts->inf += bad - nan;
	if (m.n == 0)
		return 0;
	m.min = no_negzero(m.min);
	m.max = no_negzero(m.max);
	ts->n += m.n;
	ts->batches++;
	ts->min = m.min < ts->min ? m.min : ts->min;
	ts->max = m.max > ts->max ? m.max : ts->max;
	if (cxsum_add(&ts->bmin, m.min) < 0 ||
	    cxsum_add(&ts->bmax, m.max) < 0 ||
	    cxsum_add(&ts->sum, sum) < 0 || cxsum_add(&ts->sumsq, sumsq) < 0)
		return err_nomem(e);
	return 0;
}

int
tstats_add_sums(struct tstats *ts, float bmin, float bmax,
    const struct xsum *sum, const struct xsum *sumsq, struct err *e)
{
	if (cxsum_add(&ts->bmin, bmin) < 0 ||
	    cxsum_add(&ts->bmax, bmax) < 0 ||
	    cxsum_add_xsum(&ts->sum, sum) < 0 ||
	    cxsum_add_xsum(&ts->sumsq, sumsq) < 0)
		return err_nomem(e);
	return 0;
}

static int
add_u64(uint64_t *dst, uint64_t v, const char *what, struct err *e)
{
	if (*dst > UINT64_MAX - v)
		return err_set(e, "%s count overflows", what);
	*dst += v;
	return 0;
}

int
tstats_merge(struct tstats *dst, const struct tstats *src, struct err *e)
{
	if (dst->dtype != src->dtype)
		return err_set(e, "dtype %s differs from %s",
		    dtype_name(dst->dtype) ? dtype_name(dst->dtype) : "?",
		    dtype_name(src->dtype) ? dtype_name(src->dtype) : "?");
	if (add_u64(&dst->n, src->n, "value", e) < 0 ||
	    add_u64(&dst->nan, src->nan, "nan", e) < 0 ||
	    add_u64(&dst->inf, src->inf, "inf", e) < 0 ||
	    add_u64(&dst->batches, src->batches, "batch", e) < 0)
		return -1;
	if (src->hist) {
		if (!dst->hist) {
			if (!(dst->hist = hist_new(hist_mbits(src->hist))))
				return err_nomem(e);
		}
		if (hist_merge(dst->hist, src->hist, e) < 0)
			return -1;
	}
	tstats_add_shape(dst, src->rank, src->dims);
	dst->min = src->min < dst->min ? src->min : dst->min;
	dst->max = src->max > dst->max ? src->max : dst->max;
	if (cxsum_add_cxsum(&dst->bmin, &src->bmin) < 0 ||
	    cxsum_add_cxsum(&dst->bmax, &src->bmax) < 0 ||
	    cxsum_add_cxsum(&dst->sum, &src->sum) < 0 ||
	    cxsum_add_cxsum(&dst->sumsq, &src->sumsq) < 0)
		return err_nomem(e);
	return 0;
}

double
tstats_mean(const struct tstats *ts)
{
	return ts->n ? cxsum_round(&ts->sum) / (double)ts->n : NAN;
}

double
tstats_std(const struct tstats *ts)
{
	double mean, var;

	if (!ts->n)
		return NAN;
	mean = tstats_mean(ts);
	var = fma(-mean, mean, cxsum_round(&ts->sumsq) / (double)ts->n);
	return var > 0 ? sqrt(var) : 0;
}

float
tstats_mavg_min(const struct tstats *ts)
{
	return ts->batches ?
	    (float)(cxsum_round(&ts->bmin) / (double)ts->batches) : NAN;
}

float
tstats_mavg_max(const struct tstats *ts)
{
	return ts->batches ?
	    (float)(cxsum_round(&ts->bmax) / (double)ts->batches) : NAN;
}

static void
put_sum(struct stream_writer *w, const char *key, const struct cxsum *x)
{
	struct xsum t;

	cxsum_get(x, &t);
	stream_put_xsum(w, key, &t);
}

void
tstats_put_stat(const struct tstats *ts, struct stream_writer *w,
    int annotate)
{
	const char *dt = dtype_name(ts->dtype);

	stream_put_raw(w, "dtype", dt ? dt : "undefined");
	if (ts->rank == TSTATS_RANK_MIXED)
		stream_put_raw(w, "shape", "*");
	else if (ts->rank >= 0)
		stream_put_shape(w, "shape", ts->rank, ts->dims);
	stream_put_uint(w, "n", ts->n);
	stream_put_uint(w, "nan", ts->nan);
	stream_put_uint(w, "inf", ts->inf);
	stream_put_float(w, "min", ts->min);
	stream_put_float(w, "max", ts->max);
	stream_put_uint(w, "batches", ts->batches);
	put_sum(w, "bmin", &ts->bmin);
	put_sum(w, "bmax", &ts->bmax);
	put_sum(w, "sum", &ts->sum);
	put_sum(w, "sumsq", &ts->sumsq);
	if (annotate) {
		stream_put_double(w, "mean", tstats_mean(ts));
		stream_put_double(w, "std", tstats_std(ts));
		stream_put_float(w, "mavg_min", tstats_mavg_min(ts));
		stream_put_float(w, "mavg_max", tstats_mavg_max(ts));
	}
}

/* Edge texts are cached up to this many mantissa bits (512 << 8 slots). */
#define EDGES_MBITS_MAX 8

struct tstats_edges {
	int mbits;		/* of the texts held; -1 before the first */
	uint32_t *off;		/* per edge: 1 + its offset in pool, 0 if none */
	char *pool;		/* NUL-terminated texts */
	size_t len, cap;
};

struct tstats_edges *
tstats_edges_new(void)
{
	struct tstats_edges *ed = calloc(1, sizeof *ed);

	if (ed)
		ed->mbits = -1;
	return ed;
}

void
tstats_edges_free(struct tstats_edges *ed)
{
	if (!ed)
		return;
	free(ed->off);
	free(ed->pool);
	free(ed);
}

/*
 * The text of a bin edge of an mbits histogram, as stream_fmt_float
 * writes it: from ed when it has it, else formatted into num (and kept
 * in ed when there is room). Valid until the next call.
 */
static const char *
edge_text(struct tstats_edges *ed, float edge, int mbits,
    char num[STREAM_NUM_MAX])
{
	uint32_t u, key;
	size_t n;

	if (!ed || mbits > EDGES_MBITS_MAX)
		return stream_fmt_float(edge, num);
	if (ed->mbits != mbits) {
		free(ed->off);
		ed->len = 0;
		ed->mbits = -1;
		if (!(ed->off = calloc((size_t)512 << mbits, sizeof *ed->off)))
			return stream_fmt_float(edge, num);
		ed->mbits = mbits;
	}
	memcpy(&u, &edge, sizeof u);
	key = u >> (23 - mbits);
	if (ed->off[key])
		return ed->pool + ed->off[key] - 1;
	stream_fmt_float(edge, num);
	n = strlen(num) + 1;
	if (ed->len + n > ed->cap) {
		size_t cap = ed->cap ? ed->cap * 2 : 65536;
		char *p = realloc(ed->pool, cap);

		if (!p)
			return num;
		ed->pool = p;
		ed->cap = cap;
	}
	memcpy(ed->pool + ed->len, num, n);
	ed->off[key] = (uint32_t)ed->len + 1;
	ed->len += n;
	return num;
}

/* Decimal digits of v into buf (21 bytes at least); returns the length. */
static size_t
fmt_u64(uint64_t v, char *buf)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t k = 0; k < n; k++)
		buf[k] = tmp[n - 1 - k];
	buf[n] = '\0';
	return n;
}

int
tstats_put_hist(const struct tstats *ts, const char *name,
    struct stream_writer *w, const struct stream_kv *extra, size_t nextra,
    struct err *e)
{
	return tstats_put_hist_ed(ts, name, w, extra, nextra, NULL, e);
}

int
tstats_put_hist_ed(const struct tstats *ts, const char *name,
    struct stream_writer *w, const struct stream_kv *extra, size_t nextra,
    struct tstats_edges *ed, struct err *e)
{
	struct hist_bin *bins;
	size_t nbins, i = 0, blen, cap;
	char *buf, num[STREAM_NUM_MAX], cnt[24];
	uint64_t zero = 0;
	int first = 1, mbits;

	if (!ts->hist)
		return 0;
	if (hist_bins(ts->hist, &bins, &nbins, e) < 0)
		return -1;
	/* the zero bin has its own key */
	for (size_t k = 0; k < nbins; k++)
		if (bins[k].lo == 0 && bins[k].hi == 0)
			zero = bins[k].count;
	mbits = hist_mbits(ts->hist);
	cap = TSTATS_HIST_LINE + STREAM_NUM_MAX + sizeof cnt + 2;
	if (!(buf = malloc(cap))) {
		free(bins);
		return err_nomem(e);
	}
	do {
		size_t room;

		stream_rec_start(w, "hist", name);
		stream_put_int(w, "mbits", hist_mbits(ts->hist));
		stream_put_uint(w, "zero", first ? zero : 0);
		for (size_t k = 0; first && k < nextra; k++)
			stream_put_raw(w, extra[k].key, extra[k].val);
		/* "\tbins=" and the LF; a long name still gets one bin */
		room = stream_rec_len(w) + 7 < TSTATS_HIST_LINE ?
		    TSTATS_HIST_LINE - stream_rec_len(w) - 7 : 0;
		blen = 0;
		buf[0] = '\0';
		for (; i < nbins; i++) {
			const char *et;
			size_t elen, clen, len;

			if (bins[i].lo == 0 && bins[i].hi == 0)
				continue;
			/* "EDGE:COUNT", the edge being the bin's end nearer zero */
			et = edge_text(ed, bins[i].lo > 0 ? bins[i].lo :
			    bins[i].hi, mbits, num);
			elen = strlen(et);
			clen = fmt_u64(bins[i].count, cnt);
			len = elen + 1 + clen + (blen > 0);
			if (blen && blen + len > room)
				break;
			if (blen)
				buf[blen++] = ',';
			memcpy(buf + blen, et, elen);
			blen += elen;
			buf[blen++] = ':';
			memcpy(buf + blen, cnt, clen + 1);
			blen += clen;
		}
		stream_put_raw(w, "bins", buf);
		stream_rec_done(w);
		first = 0;
	} while (i < nbins);
	free(buf);
	free(bins);
	return 0;
}

int
tstats_write(const struct tstats *ts, const char *name,
    struct stream_writer *w, int annotate, struct err *e)
{
	return tstats_write_ed(ts, name, w, annotate, NULL, e);
}

int
tstats_write_ed(const struct tstats *ts, const char *name,
    struct stream_writer *w, int annotate, struct tstats_edges *ed,
    struct err *e)
{
	stream_rec_start(w, "stat", name);
	tstats_put_stat(ts, w, annotate);
	stream_rec_done(w);
	if (tstats_put_hist_ed(ts, name, w, NULL, 0, ed, e) < 0)
		return -1;
	return stream_writer_error(w, e);
}

static int
read_sum(const struct stream_rec *rec, const char *key, struct cxsum *x,
    struct err *e)
{
	struct xsum t;

	if (stream_rec_xsum(rec, key, &t, e) < 0)
		return -1;
	if (cxsum_set_xsum(x, &t) < 0)
		return err_nomem(e);
	return 0;
}

static int
read_stat(struct tstats *ts, const struct stream_rec *rec, struct err *e)
{
	const char *dt, *shape;

	if (!(dt = stream_rec_get(rec, "dtype")))
		return stream_rec_err(rec, e, "key dtype: missing in %s record",
		    rec->type);
	if ((ts->dtype = dtype_from_name(dt)) == DT_UNDEFINED)
		return stream_rec_err(rec, e, "key dtype: unknown type '%.40s'",
		    dt);
	ts->rank = TSTATS_RANK_NONE;
	if ((shape = stream_rec_get(rec, "shape")) != NULL) {
		if (strcmp(shape, "*") == 0)
			ts->rank = TSTATS_RANK_MIXED;
		else if (stream_rec_shape(rec, "shape", &ts->rank, ts->dims,
		    e) < 0)
			return -1;
	}
	if (stream_rec_uint(rec, "n", &ts->n, e) < 0 ||
	    stream_rec_uint(rec, "nan", &ts->nan, e) < 0 ||
	    stream_rec_uint(rec, "inf", &ts->inf, e) < 0 ||
	    stream_rec_float(rec, "min", &ts->min, e) < 0 ||
	    stream_rec_float(rec, "max", &ts->max, e) < 0 ||
	    stream_rec_uint(rec, "batches", &ts->batches, e) < 0 ||
	    read_sum(rec, "bmin", &ts->bmin, e) < 0 ||
	    read_sum(rec, "bmax", &ts->bmax, e) < 0 ||
	    read_sum(rec, "sum", &ts->sum, e) < 0 ||
	    read_sum(rec, "sumsq", &ts->sumsq, e) < 0)
		return -1;
	ts->min = no_negzero(ts->min);
	ts->max = no_negzero(ts->max);
	if (ts->n == 0) {
		if (ts->batches != 0 || ts->min != INFINITY ||
		    ts->max != -INFINITY)
			return stream_rec_err(rec, e, "stat %s: n=0 needs "
			    "batches=0 min=inf max=-inf", rec->subject);
	} else if (!isfinite(ts->min) || !isfinite(ts->max) ||
	    ts->min > ts->max)
		return stream_rec_err(rec, e, "stat %s: bad range min=%g max=%g",
		    rec->subject, (double)ts->min, (double)ts->max);
	else if (ts->batches == 0 || ts->batches > ts->n)
		return stream_rec_err(rec, e, "stat %s: batches=%llu with n=%llu",
		    rec->subject, (unsigned long long)ts->batches,
		    (unsigned long long)ts->n);
	return 0;
}

int
tstats_read_stat(struct tstats *ts, const struct stream_rec *rec,
    struct err *e)
{
	/* a stat record refused keeps no heap sums */
	if (read_stat(ts, rec, e) < 0) {
		release_sums(ts);
		return -1;
	}
	return 0;
}

int
tstats_read_hist(struct tstats *ts, const struct stream_rec *rec,
    struct err *e)
{
	int64_t mbits;
	uint64_t zero;
	const char *bins, *p;
	struct hist *h;
	struct err he;
	size_t el = 0;
	float prev = 0;

	if (stream_rec_int(rec, "mbits", &mbits, e) < 0 ||
	    stream_rec_uint(rec, "zero", &zero, e) < 0)
		return -1;
	if (mbits < 0 || mbits > HIST_MBITS_MAX)
		return stream_rec_err(rec, e, "key mbits: %lld not in 0..%d",
		    (long long)mbits, HIST_MBITS_MAX);
	if (!(bins = stream_rec_get(rec, "bins")))
		return stream_rec_err(rec, e, "key bins: missing in hist record");
	if (!(h = hist_new((int)mbits)))
		return err_nomem(e);
	if (hist_add_bin(h, 0, zero, &he) < 0)
		goto bad;
	for (p = bins; *p;) {
		char num[STREAM_NUM_MAX + 24], *colon;
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		float edge;
		uint64_t count;

		el++;
		if (len >= sizeof num) {
			err_set(&he, "element %zu: too long", el);
			goto bad;
		}
		memcpy(num, p, len);
		num[len] = '\0';
		if (!(colon = strchr(num, ':'))) {
			err_set(&he, "element %zu: '%s' is not EDGE:COUNT", el,
			    num);
			goto bad;
		}
		*colon = '\0';
		if (stream_parse_float(num, &edge) < 0 ||
		    stream_parse_uint(colon + 1, &count) < 0) {
			*colon = ':';
			err_set(&he, "element %zu: bad bin '%s'", el, num);
			goto bad;
		}
		/* increasing, each bin once: a repeated or unsorted edge is
		 * a forged or broken record, not a way to add counts */
		if (edge == 0) {
			err_set(&he, "element %zu: edge 0 (the zero bin is key "
			    "zero)", el);
			goto bad;
		}
		if (el > 1 && !(edge > prev)) {
			err_set(&he, "element %zu: edge %.9g after %.9g (bins go "
			    "in increasing order, each once)", el, (double)edge,
			    (double)prev);
			goto bad;
		}
		prev = edge;
		if (hist_add_bin(h, edge, count, &he) < 0) {
			err_prefix(&he, "element %zu", el);
			goto bad;
		}
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				err_set(&he, "element %zu: empty", el + 1);
				goto bad;
			}
		}
	}
	if (!ts->hist) {
		ts->hist = h;
		return 0;
	}
	if (hist_merge(ts->hist, h, &he) < 0)
		goto bad;
	hist_free(h);
	return 0;
bad:
	hist_free(h);
	return stream_rec_err(rec, e, "key bins: %s", he.msg);
}

int
tstats_check_hist(const struct tstats *ts, struct err *e)
{
	uint64_t total;

	if (!ts->hist)
		return 0;
	total = hist_total(ts->hist);
	if (total == UINT64_MAX)
		return err_set(e, "histogram counts overflow");
	if (total != ts->n)
		return err_set(e, "histogram counts %llu values, stat n=%llu",
		    (unsigned long long)total, (unsigned long long)ts->n);
	return 0;
}
