/*
 * fuzz_npy: numpy data files (npy.h). The input is parsed as an .npy
 * image (npy_read_mem) and opened as an .npz archive (npz_open on a
 * memory file, then every member read, stored or deflated). An array
 * that reads is written back (npy_write_fp) and read again: the round
 * trip must give the same type, shape and bytes.
 */
#include "fuzz.h"

#include "npy.h"
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tensor t = { 0 };
	struct err e = { "" };
	struct npz *z;
	char path[64];
	int fd;

	if (npy_read_mem(data, size, "fuzz.npy", &t, &e) == 0) {
		round_trip(&t);
		tensor_release(&t);
	} else
		fuzz_check_err(&e);

	e.msg[0] = '\0';
	if (!(z = npz_open(fuzz_memfile(data, size, &fd, path, sizeof path),
	    &e))) {
		fuzz_check_err(&e);
		close(fd);
		return 0;
	}
	for (int i = 0; i < npz_count(z) && i < MAX_MEMBERS; i++) {
		const char *name = npz_member(z, i);

		if (!name || npz_find(z, name) < 0)
			abort();
		e.msg[0] = '\0';
		if (npz_read(z, i, &t, &e) == 0) {
			round_trip(&t);
			tensor_release(&t);
		} else
			fuzz_check_err(&e);
	}
	npz_close(z);
	close(fd);
	return 0;
}
