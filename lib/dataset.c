/* dataset: data directories and output comparison. See dataset.h. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dataset.h"
#include "image.h"
#include "infile.h"
#include "model.h"
#include "npy.h"
#include "onnx/onnx.pb-c.h"
#include "util.h"

/* A TensorProto file is the tensor plus a little framing. */
#define PB_MAX_BYTES ((size_t)TENSOR_MAX_BYTES + (1 << 20))

enum sample_kind {
	SAMPLE_PB,		/* test_data_set_N/input_K.pb */
	SAMPLE_NPY,		/* SAMPLE/NAME.npy */
	SAMPLE_NPZ,		/* SAMPLE.npz */
	SAMPLE_IMAGE,		/* DIR/NAME.png, .jpg, .jpeg (dataset_open_images) */
};

struct sample {
	enum sample_kind kind;
	char *path;		/* directory or .npz file */
	const char *base;	/* points into path */
};

struct dataset {
	struct sample *s;
	int n, cap;
	int nshapes;		/* dataset_expect_shapes: inputs with a shape */
	int *ranks;
	int64_t *dims;		/* nshapes * TENSOR_MAX_RANK */
	int images;		/* image directories allowed */
	char *base_buf;		/* scratch for dataset_sample_base */
};

char *
dataset_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p;

	while (a > 1 && dir[a - 1] == '/')
		a--;
	if (!(p = malloc(a + 1 + b + 1)))
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a > b && strcmp(s + a - b, suffix) == 0;
}

/* Natural order: runs of digits compare by value, the rest bytewise. */
static int
natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *sa = a, *sb = b;
			size_t la, lb;

			while (*sa == '0' && sa[1] >= '0' && sa[1] <= '9')
				sa++;
			while (*sb == '0' && sb[1] >= '0' && sb[1] <= '9')
				sb++;
			for (a = sa; *a >= '0' && *a <= '9'; a++)
				;
			for (b = sb; *b >= '0' && *b <= '9'; b++)
				;
			la = (size_t)(a - sa);
			lb = (size_t)(b - sb);
			if (la != lb)
				return la < lb ? -1 : 1;
			if (memcmp(sa, sb, la) != 0)
				return memcmp(sa, sb, la) < 0 ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++, b++;
	}
	if (*a || *b)
		return *a ? 1 : -1;
	return 0;
}

int
dataset_name_cmp(const char *a, const char *b)
{
	int c = natural_cmp(a, b);

	return c ? c : strcmp(a, b);
}

static int
sample_cmp(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;

	return dataset_name_cmp(a->base, b->base);
}

/* What a directory's own files say it is: -1 none, else a sample kind. */
static int
dir_kind(const char *path, struct err *e)
{
	DIR *d;
	struct dirent *de;
	int kind = -1;

	if (!(d = opendir(path)))
		return err_errno(e, "%s", path), -2;
	while ((de = readdir(d))) {
		const char *n = de->d_name;

		if (n[0] == '.')
			continue;
		if ((strncmp(n, "input_", 6) == 0 || strncmp(n, "output_", 7) == 0) &&
		    has_suffix(n, ".pb")) {
			kind = SAMPLE_PB;
			break;
		}
		if (has_suffix(n, ".npy"))
			kind = SAMPLE_NPY;
	}
	closedir(d);
	return kind;
}

static int
add_sample(struct dataset *ds, enum sample_kind kind, char *path,
    struct err *e)
{
	struct sample *s;
	const char *slash;

	if (ds->n == ds->cap) {
		int cap = ds->cap ? ds->cap * 2 : 16;

		if (!(s = realloc(ds->s, (size_t)cap * sizeof *s))) {
			free(path);
			return err_nomem(e);
		}
		ds->s = s;
		ds->cap = cap;
	}
	s = &ds->s[ds->n++];
	s->kind = kind;
	s->path = path;
	slash = strrchr(path, '/');
	s->base = slash && slash[1] ? slash + 1 : path;
	return 0;
}

static int
scan_dir(struct dataset *ds, const char *dir, struct err *e)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	int first = ds->n, kind, images = 0;

	if (stat(dir, &st) < 0)
		return err_errno(e, "%s", dir);
	if (!S_ISDIR(st.st_mode))
		return err_set(e, "%s: not a directory", dir);
	if ((kind = dir_kind(dir, e)) == -2)
		return -1;
	if (kind >= 0) {
		char *p = strdup(dir);

		if (!p)
			return err_nomem(e);
		return add_sample(ds, kind, p, e);
	}
	if (!(d = opendir(dir)))
		return err_errno(e, "%s", dir);
	while ((de = readdir(d))) {
		char *p;

		if (de->d_name[0] == '.')
			continue;
		if (!(p = dataset_path_join(dir, de->d_name))) {
			closedir(d);
			return err_nomem(e);
		}
		if (stat(p, &st) < 0) {
			free(p);
			continue;	/* dangling link: not a sample */
		}
		/* a FIFO or device named as data: refused, never opened */
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
		    (has_suffix(de->d_name, ".npz") ||
		    (ds->images && image_name_ok(de->d_name)))) {
			err_set(e, "%s: not a regular file", p);
			free(p);
			goto fail;
		}
		if (S_ISREG(st.st_mode) && has_suffix(de->d_name, ".npz")) {
			if (add_sample(ds, SAMPLE_NPZ, p, e) < 0)
				goto fail;
			continue;
		}
		if (ds->images && S_ISREG(st.st_mode) &&
		    image_name_ok(de->d_name)) {
			if (add_sample(ds, SAMPLE_IMAGE, p, e) < 0)
				goto fail;
			images++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if ((kind = dir_kind(p, e)) == -2) {
				free(p);
				goto fail;
			}
			if (kind >= 0) {
				if (add_sample(ds, kind, p, e) < 0)
					goto fail;
				continue;
			}
		}
		free(p);
	}
	closedir(d);
	if (ds->n == first)
		return err_set(e, "%s: no samples (test_data_set_N/, SAMPLE/NAME.npy"
		    "%s)", dir, ds->images ? ", SAMPLE.npz or .png/.jpg images" :
		    " or SAMPLE.npz");
	/* samples of the layouts above first: then the images are not samples */
	if (images > 0 && images < ds->n - first) {
		int k = first;

		for (int j = first; j < ds->n; j++)
			if (ds->s[j].kind == SAMPLE_IMAGE)
				free(ds->s[j].path);
			else
				ds->s[k++] = ds->s[j];
		ds->n = k;
	}
	qsort(ds->s + first, (size_t)(ds->n - first), sizeof *ds->s, sample_cmp);
	return 0;
fail:
	closedir(d);
	return -1;
}

static struct dataset *
open_dirs(const char *const *dirs, int ndirs, int images, struct err *e)
{
	struct dataset *ds;

	if (!(ds = calloc(1, sizeof *ds))) {
		err_nomem(e);
		return NULL;
	}
	ds->images = images;
	for (int i = 0; i < ndirs; i++)
		if (scan_dir(ds, dirs[i], e) < 0) {
			dataset_free(ds);
			return NULL;
		}
	if (ds->n == 0) {
		err_set(e, "no data directories");
		dataset_free(ds);
		return NULL;
	}
	return ds;
}

struct dataset *
dataset_open(const char *const *dirs, int ndirs, struct err *e)
{
	return open_dirs(dirs, ndirs, 0, e);
}

struct dataset *
dataset_open_images(const char *const *dirs, int ndirs, struct err *e)
{
	return open_dirs(dirs, ndirs, 1, e);
}

int
dataset_sample_is_image(const struct dataset *ds, int i)
{
	return ds->s[i].kind == SAMPLE_IMAGE;
}

int
dataset_has_images(const struct dataset *ds)
{
	for (int i = 0; i < ds->n; i++)
		if (ds->s[i].kind == SAMPLE_IMAGE)
			return 1;
	return 0;
}

int
dataset_expect_shapes(struct dataset *ds, int n, const int *ranks,
    const int64_t *dims, struct err *e)
{
	int *r = n ? malloc((size_t)n * sizeof *r) : NULL;
	int64_t *d = n ? malloc((size_t)n * TENSOR_MAX_RANK * sizeof *d) : NULL;

	if (n && (!r || !d)) {
		free(r);
		free(d);
		return err_nomem(e);
	}
	if (n) {
		memcpy(r, ranks, (size_t)n * sizeof *r);
		memcpy(d, dims, (size_t)n * TENSOR_MAX_RANK * sizeof *d);
	}
	free(ds->ranks);
	free(ds->dims);
	ds->ranks = r;
	ds->dims = d;
	ds->nshapes = n;
	return 0;
}

void
dataset_free(struct dataset *ds)
{
	if (!ds)
		return;
	for (int i = 0; i < ds->n; i++)
		free(ds->s[i].path);
	free(ds->s);
	free(ds->ranks);
	free(ds->dims);
	free(ds->base_buf);
	free(ds);
}

int
dataset_count(const struct dataset *ds)
{
	return ds->n;
}

const char *
dataset_sample_name(const struct dataset *ds, int i)
{
	return ds->s[i].path;
}

const char *
dataset_sample_base(const struct dataset *ds, int i)
{
	struct dataset *mut = (struct dataset *)ds;
	const char *b = ds->s[i].base;
	size_t n = strlen(b);

	if (ds->s[i].kind != SAMPLE_NPZ)
		return b;
	free(mut->base_buf);
	if (!(mut->base_buf = malloc(n + 1)))
		return b;
	memcpy(mut->base_buf, b, n - 4);
	mut->base_buf[n - 4] = '\0';
	return mut->base_buf;
}

char *
dataset_file_name(const char *name)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	char *out, *p;

	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		n += strchr("._-", *s) || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ? 1 : 3;
	if (!(out = malloc(n + 1)))
		return NULL;
	p = out;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		if (strchr("._-", *s) || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))
			*p++ = (char)*s;
		else {
			*p++ = '%';
			*p++ = hex[*s >> 4];
			*p++ = hex[*s & 15];
		}
	*p = '\0';
	return out;
}

/* 0 and a tensor, 1 when the file does not exist, -1 on error. */
static int
read_pb(const char *path, struct tensor *t, struct err *e)
{
	void *buf;
	size_t size;
	Onnx__TensorProto *tp;
	int r;

	if ((r = infile_read_regular(path, PB_MAX_BYTES, &buf, &size, e)) != 0)
		return r;
	tp = onnx__tensor_proto__unpack(NULL, size, buf);
	free(buf);
	if (!tp)
		return err_set(e, "%s: not a serialized TensorProto", path);
	r = model_tensor_read(NULL, tp, t, e);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	if (r < 0)
		return err_prefix(e, "%s", path);
	return 0;
}

/* What an input's .npy header is checked against before its data. */
struct want {
	const char *where;	/* the file, "Z.npz: x.npy" for a member */
	const char *file;	/* the file alone: Z.npz for a member */
	const char *name;	/* the model input */
	int dtype;		/* DT_UNDEFINED: any */
	int rank;		/* -1: any */
	const int64_t *dims;
};

/*
 * The header against the model, in the words onnx-calib uses once the
 * tensor is read. The first dimension is not compared: samples may be
 * batched along it.
 */
static int
check_head(const struct npy_head *h, void *ctx, struct err *e)
{
	const struct want *w = ctx;
	char have[256], want[256];
	int bad;

	/* numpy has no bfloat16: its bits come as uint16 (check_dtype) */
	if (w->dtype != DT_UNDEFINED && h->dtype != w->dtype &&
	    !(w->dtype == DT_BFLOAT16 && h->dtype == DT_UINT16))
		return err_set(e, "%s: dtype %s where the model wants %s",
		    w->where, npy_descr(h->dtype) ? npy_descr(h->dtype) : "?",
		    dtype_name(w->dtype) ? dtype_name(w->dtype) : "?");
	if (w->rank < 0)
		return 0;
	bad = w->rank != h->rank;
	for (int j = 1; !bad && j < h->rank; j++)
		bad = w->dims[j] >= 0 && w->dims[j] != h->dims[j];
	if (!bad)
		return 0;
	shape_str_declared(h->rank, h->dims, have, sizeof have);
	shape_str_declared(w->rank, w->dims, want, sizeof want);
	return err_set(e, "%s: input %s: shape %s, the model wants %s", w->file,
	    w->name, have, want);
}

/* What input k of spec is checked against; where and file are the caller's. */
static void
want_init(struct want *w, const struct dataset *ds,
    const struct dataset_spec *spec, int k)
{
	w->name = spec->input_names[k];
	w->dtype = spec->input_dtypes ? spec->input_dtypes[k] : DT_UNDEFINED;
	w->rank = k < ds->nshapes ? ds->ranks[k] : -1;
	w->dims = k < ds->nshapes ? ds->dims + (size_t)k * TENSOR_MAX_RANK :
	    NULL;
}

/*
 * The literal tensor name as a file name, when the file system can hold
 * it and it differs from the encoded one: no '/', not "." or "..", not
 * longer than a name may be.
 */
static int
literal_ok(const char *name, const char *fname)
{
	return strcmp(name, fname) != 0 && !strchr(name, '/') &&
	    strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
	    strlen(name) + 4 <= 255;
}

/*
 * 0 and a tensor, 1 when no file holds it, -1 on error; *pathp the file
 * looked for first (the encoded name). Then the literal name is tried.
 * w (NULL for outputs) checks the header.
 */
static int
read_npy_file(const char *dir, const char *name, struct want *w,
    char **pathp, struct tensor *t, struct err *e)
{
	char *fname, *path, *lit;
	int r;

	*pathp = NULL;
	if (!(fname = dataset_file_name(name)))
		return err_nomem(e);
	path = str_fmt("%s/%s.npy", dir, fname);
	if (!(*pathp = path)) {
		free(fname);
		return err_nomem(e);
	}
	if (w)
		w->where = w->file = path;
	r = npy_read_checked(path, w ? check_head : NULL, w, t, e);
	if (r != 1 || !literal_ok(name, fname)) {
		free(fname);
		return r;
	}
	free(fname);
	if (!(lit = str_fmt("%s/%s.npy", dir, name)))
		return err_nomem(e);
	if (w)
		w->where = w->file = lit;
	r = npy_read_checked(lit, w ? check_head : NULL, w, t, e);
	if (r < 0 && strncmp(e->msg, lit, strlen(lit)) == 0) {
		/* the message names the file read: keep its name for it */
		free(path);
		*pathp = lit;
		return r;
	}
	free(lit);
	return r;
}

/* Is file (a directory entry) the file of one of the spec's outputs? */
static int
is_output_file(const struct dataset_spec *spec, const char *file)
{
	for (int k = 0; k < spec->noutputs; k++) {
		char *f = dataset_file_name(spec->output_names[k]);
		size_t n = f ? strlen(f) : 0;
		size_t m = strlen(spec->output_names[k]);
		int hit = (f && strncmp(file, f, n) == 0 &&
		    strcmp(file + n, ".npy") == 0) ||
		    (strncmp(file, spec->output_names[k], m) == 0 &&
		    strcmp(file + m, ".npy") == 0);

		free(f);
		if (hit)
			return 1;
	}
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return dataset_name_cmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The .npy files of a sample directory that hold no output: their names
 * into *names (natural order, *n of them); the caller frees them.
 */
static int
list_npy(const char *dir, const struct dataset_spec *spec, char ***names,
    size_t *n, struct err *e)
{
	DIR *d;
	struct dirent *de;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!(d = opendir(dir)))
		return err_errno(e, "%s", dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".npy") ||
		    is_output_file(spec, de->d_name))
			continue;
		if (array_grow(names, &cap, *n, sizeof **names) < 0 ||
		    !((*names)[*n] = strdup(de->d_name))) {
			closedir(d);
			return err_nomem(e);
		}
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof **names, name_cmp);
	return 0;
}

static void
free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * Input k has no file of its name: for a model of one input the one
 * .npy file of the sample is it, whatever its name (as ONNX Runtime's
 * tools take it); otherwise say what was looked for and what is there.
 */
static int
read_npy_other(const struct sample *s, const struct dataset_spec *spec,
    int k, const char *path, struct want *w, struct tensor *t,
    struct err *e)
{
	char **names, *fname, *lit = NULL, found[256];
	size_t n, len = 0;
	int r;

	if (list_npy(s->path, spec, &names, &n, e) < 0)
		return -1;
	if (spec->ninputs == 1 && n == 1) {
		char *p = dataset_path_join(s->path, names[0]);

		free_names(names, n);
		if (!p)
			return err_nomem(e);
		w->where = w->file = p;
		r = npy_read_checked(p, check_head, w, t, e);
		if (r == 1)
			r = err_set(e, "%s: vanished while reading", p);
		free(p);
		return r;
	}
	found[0] = '\0';
	for (size_t i = 0; i < n && len + 1 < sizeof found; i++)
		len += (size_t)snprintf(found + len, sizeof found - len, "%s%s",
		    i ? ", " : "", names[i]);
	if (len >= sizeof found)
		memcpy(found + sizeof found - 5, "...", 4);
	if (!(fname = dataset_file_name(spec->input_names[k]))) {
		free_names(names, n);
		return err_nomem(e);
	}
	if (literal_ok(spec->input_names[k], fname) &&
	    !(lit = str_fmt(", nor %s.npy", spec->input_names[k]))) {
		free(fname);
		free_names(names, n);
		return err_nomem(e);
	}
	err_set(e, "%s: missing (model input %s%s); %s%s", path,
	    spec->input_names[k], lit ? lit : "", n ? "found " :
	    "found no .npy file", found);
	free(lit);
	free(fname);
	free_names(names, n);
	return -1;
}

/* 0 and a tensor, 1 when no member holds it, -1 on error. */
static int
read_npz_member(struct npz *z, const char *zpath, const char *name,
    struct want *w, char **member, struct tensor *t, struct err *e)
{
	char *fname, *m;
	int i;

	*member = NULL;
	if (!(fname = dataset_file_name(name)))
		return err_nomem(e);
	m = str_fmt("%s.npy", fname);
	if (m && (i = npz_find(z, m)) < 0) {
		free(m);
		if ((m = str_fmt("%s.npy", name)))
			i = npz_find(z, m);
	}
	if (!m) {
		free(fname);
		return err_nomem(e);
	}
	if (i < 0) {
		*member = str_fmt("%s: %s.npy", zpath, fname);
		free(fname);
		free(m);
		return 1;
	}
	free(fname);
	*member = str_fmt("%s: %s", zpath, m);
	free(m);
	if (w) {
		w->where = *member ? *member : zpath;
		w->file = zpath;
	}
	return npz_read_checked(z, i, w ? check_head : NULL, w, t, e);
}

static int
check_dtype(const char *where, struct tensor *t, int want, int npy,
    struct err *e)
{
	const char *have;

	if (want == DT_UNDEFINED || t->dtype == want ||
	    tensor_as_bfloat16(t, want))
		return 0;
	have = npy ? npy_descr(t->dtype) : dtype_name(t->dtype);
	return err_set(e, "%s: dtype %s where the model wants %s", where,
	    have ? have : "?", dtype_name(want) ? dtype_name(want) : "?");
}

static int
load_pb(const struct sample *s, const struct dataset_spec *spec,
    struct tensor *in, struct tensor *exp, struct err *e)
{
	char name[64], *path;
	int r;

	for (int k = 0; k <= spec->ninputs; k++) {
		snprintf(name, sizeof name, "input_%d.pb", k);
		if (!(path = dataset_path_join(s->path, name)))
			return err_nomem(e);
		if (k == spec->ninputs) {
			/* More files than inputs: wrong model or wrong data. */
			struct stat st;

			r = stat(path, &st) == 0;
			free(path);
			if (r)
				return err_set(e, "%s: more input files than the "
				    "model's %d inputs", s->path, spec->ninputs);
			break;
		}
		r = read_pb(path, &in[k], e);
		if (r == 1)
			err_set(e, "%s: missing (model input %s)", path,
			    spec->input_names[k]);
		else if (r == 0 && spec->input_dtypes &&
		    check_dtype(path, &in[k], spec->input_dtypes[k], 0, e) < 0)
			r = -1;
		free(path);
		if (r)
			return -1;
	}
	for (int k = 0; exp && k < spec->noutputs; k++) {
		snprintf(name, sizeof name, "output_%d.pb", k);
		if (!(path = dataset_path_join(s->path, name)))
			return err_nomem(e);
		r = read_pb(path, &exp[k], e);
		free(path);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int
load_npy(const struct dataset *ds, const struct sample *s,
    const struct dataset_spec *spec, struct tensor *in, struct tensor *exp,
    struct err *e)
{
	char *path;
	int r;

	for (int k = 0; k < spec->ninputs; k++) {
		struct want w;

		want_init(&w, ds, spec, k);
		r = read_npy_file(s->path, spec->input_names[k], &w, &path,
		    &in[k], e);
		if (r == 1)
			r = read_npy_other(s, spec, k, path, &w, &in[k], e);
		free(path);
		if (r)
			return -1;
	}
	for (int k = 0; exp && k < spec->noutputs; k++) {
		r = read_npy_file(s->path, spec->output_names[k], NULL, &path,
		    &exp[k], e);
		free(path);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int
load_npz(const struct dataset *ds, const struct sample *s,
    const struct dataset_spec *spec, struct tensor *in, struct tensor *exp,
    struct err *e)
{
	struct npz *z;
	char *where;
	int r = 0;

	if (!(z = npz_open(s->path, e)))
		return -1;
	for (int k = 0; r == 0 && k < spec->ninputs; k++) {
		struct want w;

		want_init(&w, ds, spec, k);
		r = read_npz_member(z, s->path, spec->input_names[k], &w, &where,
		    &in[k], e);
		if (r == 1)
			err_set(e, "%s: missing (model input %s)",
			    where ? where : s->path, spec->input_names[k]);
		free(where);
	}
	for (int k = 0; r == 0 && exp && k < spec->noutputs; k++) {
		r = read_npz_member(z, s->path, spec->output_names[k], NULL,
		    &where, &exp[k], e);
		free(where);
		if (r == 1)
			r = 0;
	}
	npz_close(z);
	return r ? -1 : 0;
}

int
dataset_load(struct dataset *ds, int i, const struct dataset_spec *spec,
    struct tensor *inputs, struct tensor *expected, struct err *e)
{
	const struct sample *s;
	int r;

	if (i < 0 || i >= ds->n)
		return err_set(e, "no sample %d", i);
	s = &ds->s[i];
	for (int k = 0; k < spec->ninputs; k++)
		memset(&inputs[k], 0, sizeof inputs[k]);
	for (int k = 0; expected && k < spec->noutputs; k++)
		memset(&expected[k], 0, sizeof expected[k]);
	switch (s->kind) {
	case SAMPLE_PB:
		r = load_pb(s, spec, inputs, expected, e);
		break;
	case SAMPLE_NPY:
		r = load_npy(ds, s, spec, inputs, expected, e);
		break;
	case SAMPLE_IMAGE:
		/* preprocessing is the caller's (image.h) */
		r = err_set(e, "%s: an image, not a tensor file", s->path);
		break;
	default:
		r = load_npz(ds, s, spec, inputs, expected, e);
		break;
	}
	if (r < 0) {
		tensor_release_n(inputs, (size_t)spec->ninputs);
		tensor_release_n(expected, (size_t)spec->noutputs);
		return r;
	}
	/* numpy has no bfloat16: its bits come as uint16 */
	for (int k = 0; spec->input_dtypes && k < spec->ninputs; k++)
		tensor_as_bfloat16(&inputs[k], spec->input_dtypes[k]);
	return r;
}

static int
make_dir(const char *path, struct err *e)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return err_errno(e, "%s", path);
	return 0;
}

int
dataset_save(const char *dir, const char *sample, int n,
    const char *const *names, const struct tensor *t, struct err *e)
{
	char *sdir, *fname, *path;
	int r = 0;

	if (make_dir(dir, e) < 0)
		return -1;
	if (!(sdir = dataset_path_join(dir, sample)))
		return err_nomem(e);
	if (make_dir(sdir, e) < 0) {
		free(sdir);
		return -1;
	}
	for (int k = 0; r == 0 && k < n; k++) {
		if (!(fname = dataset_file_name(names[k]))) {
			r = err_nomem(e);
			break;
		}
		path = malloc(strlen(sdir) + strlen(fname) + 6);
		if (!path) {
			free(fname);
			r = err_nomem(e);
			break;
		}
		sprintf(path, "%s/%s.npy", sdir, fname);
		free(fname);
		r = npy_write(path, &t[k], e);
		free(path);
	}
	free(sdir);
	return r;
}

void
dataset_cmp_init(struct dataset_cmp *c, double rtol, double atol)
{
	memset(c, 0, sizeof *c);
	c->rtol = rtol;
	c->atol = atol;
}

static void
cmp_problem(struct dataset_cmp *c, const char *fmt, const char *a,
    const char *b)
{
	c->nmismatch++;
	if (!c->first_problem[0])
		snprintf(c->first_problem, sizeof c->first_problem, fmt, a, b);
}

void
dataset_cmp_add(struct dataset_cmp *c, const struct tensor *out,
    const struct tensor *ref)
{
	char sa[128], sb[128];

	c->samples++;
	if (out->dtype != ref->dtype) {
		cmp_problem(c, "type %s where %s was expected",
		    dtype_name(out->dtype) ? dtype_name(out->dtype) : "?",
		    dtype_name(ref->dtype) ? dtype_name(ref->dtype) : "?");
		return;
	}
	if (!shape_equal(out, ref)) {
		cmp_problem(c, "shape %s where %s was expected",
		    shape_str(out->rank, out->dims, sa, sizeof sa),
		    shape_str(ref->rank, ref->dims, sb, sizeof sb));
		return;
	}
	c->nelem += out->nelem;
	for (int64_t i = 0; i < out->nelem; i++) {
		double o, r, d;

		if (out->dtype == DT_FLOAT) {
			o = ((const float *)out->data)[i];
			r = ((const float *)ref->data)[i];
		} else {
			o = tensor_get(out, i);
			r = tensor_get(ref, i);
		}
		if (isfinite(o) && isfinite(r)) {
			d = fabs(o - r);
			c->signal += r * r;
			c->noise += d * d;
			if (d > c->max_abs)
				c->max_abs = d;
			if (!(d <= c->atol + c->rtol * fabs(r)))
				c->nbad++;
			continue;
		}
		/* NaN matches NaN, an infinity the same infinity. */
		if ((isnan(o) && isnan(r)) || (!isnan(o) && o == r))
			continue;
		/* A non-finite mismatch is as bad as it gets: no SNR. */
		c->nbad++;
		c->max_abs = INFINITY;
		c->noise = INFINITY;
	}
}

double
dataset_cmp_snr(const struct dataset_cmp *c)
{
	if (c->noise == 0)
		return INFINITY;
	if (c->signal == 0)
		return -INFINITY;
	return 10 * log10(c->signal / c->noise);
}

int
dataset_cmp_ok(const struct dataset_cmp *c)
{
	return c->nmismatch == 0 && c->nbad == 0;
}
