/*
 * fuzz_npz: the header-first reading of data files (npy.h), as the
 * dataset reads them for a model: every .npz member (and the input as
 * one .npy file) through npz_read_checked / npy_read_checked with a check
 * that wants float32 of at most NELEM_MAX values, as a model input of
 * that size does. A member that reads must have passed the check, with
 * the header's shape; a bomb (a few bytes inflating to gigabytes) must be
 * refused from its header, before its data is inflated, so it never
 * costs more than the input (libFuzzer's -rss_limit_mb and
 * -malloc_limit_mb catch one that does).
 */
#include "fuzz.h"

#include "npy.h"
#include "npzeach.h"
#include "tensor.h"

#define MAX_MEMBERS 64
#define NELEM_MAX 4096

struct seen {
	int calls;
	struct npy_head h;
};

static int
want_small_float(const struct npy_head *h, void *ctx, struct err *e)
{
	struct seen *s = ctx;

	s->calls++;
	s->h = *h;
	if (h->rank < 0 || h->rank > TENSOR_MAX_RANK || h->nelem < 0)
		abort();	/* a header the reader should have refused */
	if (h->dtype != DT_FLOAT)
		return err_set(e, "the model wants float, not %s", h->descr);
	if (h->nelem > NELEM_MAX)
		return err_set(e, "the model wants at most %d values",
		    NELEM_MAX);
	return 0;
}

/* t read with check s: the check ran, and t has the header's shape. */
static void
check_read(const struct tensor *t, const struct seen *s)
{
	if (s->calls != 1 || t->dtype != DT_FLOAT || t->rank != s->h.rank ||
	    t->nelem != s->h.nelem || t->nelem > NELEM_MAX) {
		fprintf(stderr, "read past its check: %d calls\n", s->calls);
		abort();
	}
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] != s->h.dims[i])
			abort();
}

static int
read_member(struct npz *z, int i, struct tensor *t, struct err *e,
    void *ctx)
{
	memset(ctx, 0, sizeof(struct seen));
	return npz_read_checked(z, i, want_small_float, ctx, t, e);
}

static void
use_member(const struct tensor *t, void *ctx)
{
	check_read(t, ctx);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tensor t = { 0 };
	struct err e = { "" };
	struct seen s = { 0 };
	const char *path;
	char buf[64];
	int fd, rc;

	path = fuzz_memfile(data, size, &fd, buf, sizeof buf);
	if ((rc = npy_read_checked(path, want_small_float, &s, &t, &e)) == 0) {
		check_read(&t, &s);
		tensor_release(&t);
	} else if (rc < 0)
		fuzz_check_err(&e);
	npzeach(path, MAX_MEMBERS, read_member, use_member, &s);
	close(fd);
	return 0;
}
