/*
 * npy_test: lib/npy.c (.npy read/write, .npz read) and the file-name
 * rule and sample order of lib/dataset.c. Needs the numpy-written
 * fixtures in test/data/npy/ (run from the top of the source tree) and a
 * writable $TMPDIR or /tmp.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset.h"
#include "npy.h"
#include "tensor.h"
#include "unit.h"

#define FIX "test/data/npy/"

static char tmpdir[256];

static const char *
tmp_path(const char *name)
{
	static char buf[512];

	if (!tmpdir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(tmpdir, sizeof tmpdir, "%s/npy_test.XXXXXX",
		    t && *t ? t : "/tmp");
		if (!mkdtemp(tmpdir))
			abort();
	}
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static int
slurp(const char *path, uint8_t **buf, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	long n;

	if (!fp)
		return -1;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	*buf = malloc(n + 1);
	*len = fread(*buf, 1, n, fp);
	fclose(fp);
	return 0;
}

/*
 * A fresh name for each damaged file: rewriting one file in place makes
 * ext4 flush it on every close (auto_da_alloc), which takes seconds.
 */
static const char *
fresh_path(void)
{
	static unsigned n;
	char name[32];

	snprintf(name, sizeof name, "bad%u", n++);
	return tmp_path(name);
}

static void
spit(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");

	if (!fp)
		abort();
	fwrite(buf, 1, len, fp);
	fclose(fp);
}

static void
test_roundtrip(void)
{
	static const int types[] = { DT_FLOAT, DT_DOUBLE, DT_INT8, DT_UINT8,
	    DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_INT64, DT_UINT64,
	    DT_BOOL, DT_FLOAT16 };
	static const int64_t shapes[][4] = { { 2, 3, 4, 0 }, { 5 }, { 0 },
	    { 1, 0, 3 } };
	static const int ranks[] = { 3, 1, 0, 3 };
	struct err e;

	for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
		for (size_t si = 0; si < 4; si++) {
			struct tensor t, u;
			char *buf = NULL;
			size_t len = 0;
			FILE *fp = open_memstream(&buf, &len);
			int r;

			REQUIRE(fp != NULL);
			REQUIRE(tensor_alloc(&t, types[ti], ranks[si], shapes[si],
			    &e) == 0);
			for (int64_t i = 0; i < t.nelem; i++)
				tensor_set(&t, i, types[ti] == DT_BOOL ? i % 2 :
				    (double)(i * 3 % 7) - 2);
			/* In memory: fsync'ing 48 files makes a slow test. */
			CHECK(npy_write_fp(fp, &t, &e) == 0);
			fclose(fp);
			r = npy_read_mem(buf, len, "rt.npy", &u, &e);
			free(buf);
			if (!CHECK(r == 0)) {
				fprintf(stderr, "%s\n", e.msg);
				tensor_release(&t);
				continue;
			}
			CHECK_EQ_INT(u.dtype, t.dtype);
			CHECK(shape_equal(&u, &t));
			CHECK(memcmp(u.data, t.data, (size_t)t.nelem *
			    dtype_size(t.dtype)) == 0);
			tensor_release(&t);
			tensor_release(&u);
		}
}

/* numpy pads the header so the data starts at a multiple of 64. */
static void
test_write_header(void)
{
	struct tensor t;
	struct err e;
	uint8_t *buf;
	size_t len;
	int64_t d = 5;
	const char *p = tmp_path("h.npy");
	const char want[] = "{'descr': '<f4', 'fortran_order': False, "
	    "'shape': (5,), }";

	REQUIRE(tensor_alloc(&t, DT_FLOAT, 1, &d, &e) == 0);
	REQUIRE(npy_write(p, &t, &e) == 0);
	REQUIRE(slurp(p, &buf, &len) == 0);
	/* As np.save(f, np.zeros(5, np.float32)) writes it. */
	CHECK_EQ_INT(len, 128 + 20);
	CHECK(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
	CHECK_EQ_INT(buf[8] | buf[9] << 8, 128 - 10);
	CHECK(memcmp(buf + 10, want, sizeof want - 1) == 0);
	CHECK_EQ_INT(buf[sizeof want - 1 + 10], ' ');
	CHECK_EQ_INT(buf[127], '\n');
	free(buf);
	tensor_release(&t);
	d = 2;
	REQUIRE(tensor_alloc(&t, DT_BFLOAT16, 1, &d, &e) == 0);
	CHECK(npy_write(p, &t, &e) == -1);
	CHECK(strstr(e.msg, "h.npy: element type bfloat16 has no npy "
	    "equivalent") != NULL);
	tensor_release(&t);
}

static void
test_numpy_files(void)
{
	struct tensor t;
	struct err e;

	REQUIRE(npy_read(FIX "be_f8.npy", &t, &e) == 0);
	CHECK_EQ_INT(t.dtype, DT_DOUBLE);
	CHECK_EQ_INT(t.rank, 2);
	CHECK_NEAR(((double *)t.data)[0], 0.5, 0);
	CHECK_NEAR(((double *)t.data)[3], 3.5, 0);
	tensor_release(&t);

	/* Stored column-major, read back in C order: element [i][j][k] = 12i+4j+k. */
	REQUIRE(npy_read(FIX "fortran_i2.npy", &t, &e) == 0);
	CHECK_EQ_INT(t.dtype, DT_INT16);
	CHECK_EQ_INT(t.nelem, 24);
	for (int i = 0; i < 24; i++)
		CHECK_EQ_INT(((int16_t *)t.data)[i], i);
	tensor_release(&t);

	REQUIRE(npy_read(FIX "scalar_u1.npy", &t, &e) == 0);
	CHECK_EQ_INT(t.rank, 0);
	CHECK_EQ_INT(t.nelem, 1);
	CHECK_EQ_INT(((uint8_t *)t.data)[0], 7);
	tensor_release(&t);

	REQUIRE(npy_read(FIX "bool.npy", &t, &e) == 0);
	CHECK_EQ_INT(t.dtype, DT_BOOL);
	CHECK_EQ_INT(((uint8_t *)t.data)[2], 1);
	tensor_release(&t);

	REQUIRE(npy_read(FIX "f16.npy", &t, &e) == 0);
	CHECK_EQ_INT(t.dtype, DT_FLOAT16);
	CHECK_NEAR(tensor_get(&t, 0), 1.5, 0);
	CHECK_NEAR(tensor_get(&t, 1), -2.0, 0);
	tensor_release(&t);
}

static void
check_npz(const char *path, const char *bname)
{
	struct npz *z;
	struct tensor t;
	struct err e;
	int i;

	z = npz_open(path, &e);
	if (!CHECK(z != NULL)) {
		fprintf(stderr, "%s\n", e.msg);
		return;
	}
	CHECK_EQ_INT(npz_count(z), 2);
	CHECK_EQ_STR(npz_member(z, 0), "a.npy");
	CHECK_EQ_INT(npz_find(z, "nope.npy"), -1);
	REQUIRE(npz_read(z, 0, &t, &e) == 0);
	CHECK_EQ_INT(t.dtype, DT_FLOAT);
	CHECK_NEAR(((float *)t.data)[5], 1.25, 0);
	tensor_release(&t);
	i = npz_find(z, bname);
	CHECK(i == 1);
	if (i == 1 && CHECK(npz_read(z, i, &t, &e) == 0)) {
		CHECK_EQ_INT(t.dtype, DT_INT64);
		CHECK_EQ_INT(((int64_t *)t.data)[3], -4);
		tensor_release(&t);
	}
	npz_close(z);
}

static void
test_npz(void)
{
	check_npz(FIX "stored.npz", "conv/out:0.npy");
	check_npz(FIX "deflate.npz", "conv%2Fout%3A0.npy");
}

/* Every truncation and many corruptions fail cleanly (run under ASan too). */
static void
test_damaged(void)
{
	static const char *files[] = { FIX "be_f8.npy", FIX "fortran_i2.npy",
	    FIX "stored.npz", FIX "deflate.npz" };
	struct err e;

	for (size_t f = 0; f < 4; f++) {
		uint8_t *buf;
		size_t len;
		int npz = strstr(files[f], ".npz") != NULL;
		const char *p;

		REQUIRE(slurp(files[f], &buf, &len) == 0);
		for (size_t cut = 0; cut < len; cut++) {
			struct tensor t;
			struct npz *z;
			int ok = 1;

			p = fresh_path();
			spit(p, buf, cut);
			if (!npz) {
				ok = npy_read(p, &t, &e) == -1;
			} else if ((z = npz_open(p, &e))) {
				for (int i = 0; i < npz_count(z); i++)
					if (npz_read(z, i, &t, &e) == 0)
						tensor_release(&t);
				npz_close(z);
			}
			CHECK(ok);
			unlink(p);
		}
		/* Flip each byte: must not crash; deflated data must fail the crc. */
		for (size_t at = 0; at < len; at++) {
			struct tensor t;
			struct npz *z;

			buf[at] ^= 0x5a;
			p = fresh_path();
			spit(p, buf, len);
			if (!npz) {
				if (npy_read(p, &t, &e) == 0)
					tensor_release(&t);
			} else if ((z = npz_open(p, &e))) {
				for (int i = 0; i < npz_count(z); i++)
					if (npz_read(z, i, &t, &e) == 0)
						tensor_release(&t);
				npz_close(z);
			}
			unlink(p);
			buf[at] ^= 0x5a;
		}
		free(buf);
	}
}

static void
test_bad_headers(void)
{
	static const struct {
		const char *hdr;
		const char *msg;
	} cases[] = {
		{ "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
		    "npy dtype <c8 is not supported" },
		{ "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
		    "structured npy dtypes are not supported" },
		{ "{'descr': '<f4', 'shape': (1,), }",
		    "bad npy header: missing fortran_order" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,2,3,4,5,6,7,8,9,10,11,12,13), }",
		    "npy shape has more than 12 dimensions" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
		    "4 bytes of data where shape 2 of <f4 needs 8" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
		    "bad npy header: dimension too large" },
	};
	struct err e;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t buf[512];
		size_t n = strlen(cases[i].hdr);
		struct tensor t;

		memcpy(buf, "\x93NUMPY\x01\x00", 8);
		buf[8] = (uint8_t)n;
		buf[9] = 0;
		memcpy(buf + 10, cases[i].hdr, n);
		memset(buf + 10 + n, 0, 4);
		CHECK(npy_read_mem(buf, 10 + n + 4, "x.npy", &t, &e) == -1);
		CHECK(strncmp(e.msg, "x.npy: ", 7) == 0);
		CHECK_EQ_STR(e.msg + 7, cases[i].msg);
	}
}

static void
test_file_name(void)
{
	char *s;

	CHECK_EQ_STR(s = dataset_file_name("conv/out:0"), "conv%2Fout%3A0");
	free(s);
	CHECK_EQ_STR(s = dataset_file_name("Ab-9._"), "Ab-9._");
	free(s);
	CHECK_EQ_STR(s = dataset_file_name("a b%\xc3\xa9"), "a%20b%25%C3%A9");
	free(s);
}

/* Samples come in natural order whatever their layout. */
static void
test_sample_order(void)
{
	static const char *names[] = { "s10", "s2", "s1" };
	char dir[600], sub[700];
	struct dataset *ds;
	struct err e;
	const char *dirs[1];

	snprintf(dir, sizeof dir, "%s", tmp_path("data"));
	mkdir(dir, 0777);
	for (int i = 0; i < 3; i++) {
		snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
		mkdir(sub, 0777);
		snprintf(sub, sizeof sub, "%s/%s/x.npy", dir, names[i]);
		spit(sub, "", 0);
	}
	snprintf(sub, sizeof sub, "%s/s3.npz", dir);
	spit(sub, "", 0);
	snprintf(sub, sizeof sub, "%s/notes", dir);
	mkdir(sub, 0777);
	dirs[0] = dir;
	ds = dataset_open(dirs, 1, &e);
	REQUIRE(ds != NULL);
	CHECK_EQ_INT(dataset_count(ds), 4);
	if (dataset_count(ds) == 4) {
		CHECK_EQ_STR(dataset_sample_base(ds, 0), "s1");
		CHECK_EQ_STR(dataset_sample_base(ds, 1), "s2");
		CHECK_EQ_STR(dataset_sample_base(ds, 2), "s3");
		CHECK_EQ_STR(dataset_sample_base(ds, 3), "s10");
	}
	dataset_free(ds);
	snprintf(sub, sizeof sub, "%s/notes", dir);
	dirs[0] = sub;
	CHECK(dataset_open(dirs, 1, &e) == NULL);
	CHECK(strstr(e.msg, "/notes: no samples") != NULL);
}

static void
test_compare(void)
{
	struct tensor a, b;
	struct dataset_cmp c;
	struct err e;
	int64_t d = 4;

	REQUIRE(tensor_alloc(&a, DT_FLOAT, 1, &d, &e) == 0);
	REQUIRE(tensor_alloc(&b, DT_FLOAT, 1, &d, &e) == 0);
	float *x = a.data, *y = b.data;
	x[0] = 1, y[0] = 1;
	x[1] = NAN, y[1] = NAN;
	x[2] = INFINITY, y[2] = INFINITY;
	x[3] = 2.001f, y[3] = 2;
	dataset_cmp_init(&c, 1e-3, 1e-7);
	dataset_cmp_add(&c, &a, &b);
	CHECK(dataset_cmp_ok(&c));
	CHECK_NEAR(c.max_abs, 0.001, 1e-6);
	/* signal 1 + 4, noise 0.001^2 */
	CHECK_NEAR(dataset_cmp_snr(&c), 10 * log10(5 / (c.noise)), 1e-9);
	x[3] = 2.01f;
	dataset_cmp_add(&c, &a, &b);
	CHECK(!dataset_cmp_ok(&c));
	CHECK_EQ_INT(c.nbad, 1);
	CHECK_EQ_INT(c.samples, 2);
	x[3] = 2;
	x[1] = 0;
	dataset_cmp_init(&c, 1e-3, 1e-7);
	dataset_cmp_add(&c, &a, &b);
	CHECK(!dataset_cmp_ok(&c));
	CHECK(isinf(c.max_abs));
	CHECK(dataset_cmp_snr(&c) == -INFINITY);
	x[1] = NAN;
	dataset_cmp_init(&c, 1e-3, 1e-7);
	dataset_cmp_add(&c, &a, &b);
	CHECK(dataset_cmp_snr(&c) == INFINITY);
	b.dims[0] = 2, b.nelem = 2;
	dataset_cmp_add(&c, &a, &b);
	CHECK(!dataset_cmp_ok(&c));
	CHECK_EQ_STR(c.first_problem, "shape 4 where 2 was expected");
	tensor_release(&a);
	tensor_release(&b);
}

static void
cleanup(void)
{
	char cmd[600];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
}

static void
test_cleanup(void)
{
	cleanup();
	CHECK(access(tmpdir, F_OK) != 0);
}

UNIT_MAIN(test_roundtrip, test_write_header, test_numpy_files, test_npz,
    test_damaged, test_bad_headers, test_file_name, test_sample_order,
    test_compare, test_cleanup)
