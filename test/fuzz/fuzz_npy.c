/*
 * fuzz_npy: numpy data files (npy.h). The input is parsed as an .npy
 * image (npy_read_mem) and opened as an .npz archive (npz_open on a
 * memory file, then every member read, stored or deflated). An array
 * that reads is written back (npy_write_fp) and read again: the round
 * trip must give the same type, shape and bytes.
 */
#include "fuzz.h"

#include "npy.h"
#include "npzeach.h"
#include "tensor.h"

#define MAX_MEMBERS 64

static void
round_trip(const struct tensor *t)
{
	struct tensor back = { 0 };
	struct err e = { "" };
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	if (!(fp = open_memstream(&buf, &len)))
		abort();
	if (npy_write_fp(fp, t, &e) < 0) {
		fuzz_check_err(&e);
		fclose(fp);
		free(buf);
		return;
	}
	if (fclose(fp) != 0)
		abort();
	if (npy_read_mem(buf, len, "back.npy", &back, &e) < 0) {
		fprintf(stderr, "written array does not read back: %s\n",
		    e.msg);
		abort();
	}
	fuzz_check_same(&back, t, "array");
	tensor_release(&back);
	free(buf);
}

/* A member, its name found again by npz_find. */
static int
read_member(struct npz *z, int i, struct tensor *t, struct err *e,
    void *ctx)
{
	const char *name = npz_member(z, i);

	(void)ctx;
	if (!name || npz_find(z, name) < 0)
		abort();
	return npz_read(z, i, t, e);
}

static void
use_member(const struct tensor *t, void *ctx)
{
	(void)ctx;
	round_trip(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tensor t = { 0 };
	struct err e = { "" };
	char path[64];
	int fd;

	if (npy_read_mem(data, size, "fuzz.npy", &t, &e) == 0) {
		round_trip(&t);
		tensor_release(&t);
	} else
		fuzz_check_err(&e);
	npzeach(fuzz_memfile(data, size, &fd, path, sizeof path),
	    MAX_MEMBERS, read_member, use_member, NULL);
	close(fd);
	return 0;
}
