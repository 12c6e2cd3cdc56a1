/*
 * npzeach.h: the members of an .npz, each read and used, for the fuzz
 * targets that open archives (fuzz_npy, fuzz_npz). Test-only; include
 * after fuzz.h and npy.h.
 */
#ifndef ONNXQ_FUZZ_NPZEACH_H
#define ONNXQ_FUZZ_NPZEACH_H

/* Read member i into t: 0, or -1 with e set. */
typedef int npzeach_read_fn(struct npz *z, int i, struct tensor *t,
    struct err *e, void *ctx);

/* Up to max members of the .npz at path through read, each that reads
 * through use; every failure must say why, in one line. */
static inline void
npzeach(const char *path, int max, npzeach_read_fn *read,
    void (*use)(const struct tensor *t, void *ctx), void *ctx)
{
	struct tensor t = { 0 };
	struct err e = { "" };
	struct npz *z;

	if (!(z = npz_open(path, &e))) {
		fuzz_check_err(&e);
		return;
	}
	for (int i = 0; i < npz_count(z) && i < max; i++) {
		e.msg[0] = '\0';
		if (read(z, i, &t, &e, ctx) == 0) {
			use(&t, ctx);
			tensor_release(&t);
		} else
			fuzz_check_err(&e);
	}
	npz_close(z);
}

#endif
