/*
 * image_test: PNG and JPEG decoding against the fixtures of
 * test/data/images (written by its make-images.py without any imaging
 * library: expected.npy holds the pattern), bilinear resizing against
 * values worked out by hand, every preprocessing step of
 * image_to_tensor, the option parsers, and errors that name the file.
 * Runs from the top of the source tree.
 */
#include <stdio.h>
#include <string.h>

#include "image.h"
#include "npy.h"
#include "unit.h"

#define DIR "test/data/images/"

/* The 6x8x3 reference pattern. */
static int
expected(struct tensor *t)
{
	struct err e;

	return npy_read(DIR "expected.npy", t, &e);
}

static int
same_as_expected(const struct image *img)
{
	struct tensor t;
	int ok;

	if (expected(&t) < 0)
		return 0;
	ok = img->width == 8 && img->height == 6 && t.nelem == 8 * 6 * 3;
	for (int64_t i = 0; ok && i < t.nelem; i++)
		ok = img->rgb[i] == ((unsigned char *)t.data)[i];
	tensor_release(&t);
	return ok;
}

static void
test_png_kinds(void)
{
	static const char *const same[] = { "rgb.png", "interlaced.png",
	    "alpha.png" };
	struct image img;
	struct err e;

	for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
		char path[256];

		snprintf(path, sizeof path, DIR "%s", same[k]);
		REQUIRE(image_load(path, &img, &e) == 0);
		CHECK(same_as_expected(&img));
		image_release(&img);
	}
	/* 16-bit grey: the high byte of R of the pattern, in all channels */
	REQUIRE(image_load(DIR "grey16.png", &img, &e) == 0);
	CHECK_EQ_INT(img.width, 8);
	for (int y = 0; y < 6; y++)
		for (int x = 0; x < 8; x++)
			for (int c = 0; c < 3; c++)
				CHECK_EQ_INT(img.rgb[(y * 8 + x) * 3 + c], x * 32 + 3);
	image_release(&img);
	/* palette index (x + y) % 4 */
	REQUIRE(image_load(DIR "palette.png", &img, &e) == 0);
	{
		static const float pal[4][3] = { { 255, 0, 0 }, { 0, 255, 0 },
		    { 0, 0, 255 }, { 9, 99, 199 } };

		for (int y = 0; y < 6; y++)
			for (int x = 0; x < 8; x++)
				for (int c = 0; c < 3; c++)
					CHECK_EQ_INT(img.rgb[(y * 8 + x) * 3 + c],
					    pal[(x + y) % 4][c]);
	}
	image_release(&img);
}

static void
test_jpeg(void)
{
	static const float quad[4][3] = { { 200, 30, 30 }, { 30, 200, 30 },
	    { 30, 30, 200 }, { 128, 128, 128 } };
	struct image img;
	struct err e;

	REQUIRE(image_load(DIR "flat.jpg", &img, &e) == 0);
	CHECK_EQ_INT(img.width, 16);
	CHECK_EQ_INT(img.height, 16);
	for (int y = 0; y < 16; y++)
		for (int x = 0; x < 16; x++)
			for (int c = 0; c < 3; c++)
				CHECK_NEAR(img.rgb[(y * 16 + x) * 3 + c],
				    quad[(y >= 8) * 2 + (x >= 8)][c], 2);
	image_release(&img);
	REQUIRE(image_load(DIR "grey.jpg", &img, &e) == 0);
	CHECK_EQ_INT(img.width, 16);
	CHECK_EQ_INT(img.height, 8);
	for (int i = 0; i < 16 * 8 * 3; i++)
		CHECK_NEAR(img.rgb[i], 77, 1);
	image_release(&img);
}

static void
test_bad_files(void)
{
	static const unsigned char png_head[] = { 0x89, 'P', 'N', 'G', '\r',
	    '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
	static const unsigned char jpg_head[] = { 0xff, 0xd8, 0xff, 0xe0, 0,
	    16, 'J', 'F', 'I', 'F' };
	struct image img;
	struct err e;

	CHECK(image_load(DIR "make-images.py", &img, &e) == -1);
	CHECK_EQ_STR(e.msg, DIR "make-images.py: not a PNG or JPEG file");
	CHECK(image_load(DIR "no-such.png", &img, &e) == -1);
	CHECK_EQ_STR(e.msg, DIR "no-such.png: No such file or directory");
	CHECK(image_load(DIR, &img, &e) == -1);
	CHECK(strstr(e.msg, "not a regular file") != NULL);
	CHECK(image_load_mem(png_head, sizeof png_head, "t.png", &img, &e) == -1);
	CHECK(strncmp(e.msg, "t.png: bad PNG: ", 16) == 0);
	CHECK(img.rgb == NULL);
	CHECK(image_load_mem(jpg_head, sizeof jpg_head, "t.jpg", &img, &e) == -1);
	CHECK(strncmp(e.msg, "t.jpg: bad JPEG: ", 17) == 0);
	CHECK(img.rgb == NULL);
	CHECK(image_load_mem("", 0, "empty", &img, &e) == -1);
	CHECK_EQ_STR(e.msg, "empty: not a PNG or JPEG file");
	/* every truncation of a good file fails cleanly or decodes */
	{
		FILE *fp = fopen(DIR "flat.jpg", "rb");
		unsigned char buf[4096];
		size_t n;

		REQUIRE(fp != NULL);
		n = fread(buf, 1, sizeof buf, fp);
		fclose(fp);
		for (size_t k = 0; k < n; k++)
			if (image_load_mem(buf, k, "cut", &img, &e) == 0)
				image_release(&img);
		fp = fopen(DIR "rgb.png", "rb");
		REQUIRE(fp != NULL);
		n = fread(buf, 1, sizeof buf, fp);
		fclose(fp);
		for (size_t k = 0; k < n; k++) {
			CHECK(image_load_mem(buf, k, "cut", &img, &e) == -1);
			CHECK(img.rgb == NULL);
		}
	}
}

/* A w x h image whose channel c at (x, y) is f(x, y) + c. */
static void
make(struct image *img, int w, int h, const float *v)
{
	img->width = w;
	img->height = h;
	img->rgb = malloc((size_t)w * h * 3 * sizeof *img->rgb);
	for (int i = 0; i < w * h; i++)
		for (int c = 0; c < 3; c++)
			img->rgb[i * 3 + c] = v[i] + c;
}

static void
test_resize(void)
{
	static const float two[] = { 0, 100 };
	static const float four[] = { 0, 10, 20, 30 };
	struct image a, r;
	struct err e;

	make(&a, 2, 1, two);
	/* centres aligned: x = (d + 0.5) / 2 - 0.5, clamped */
	REQUIRE(image_resize(&a, 4, 1, &r, &e) == 0);
	CHECK_NEAR(r.rgb[0 * 3], 0, 1e-5);
	CHECK_NEAR(r.rgb[1 * 3], 25, 1e-5);
	CHECK_NEAR(r.rgb[2 * 3], 75, 1e-5);
	CHECK_NEAR(r.rgb[3 * 3], 100, 1e-5);
	CHECK_NEAR(r.rgb[2 * 3 + 2], 77, 1e-5);
	image_release(&r);
	/* same size: unchanged; 1 row to 2: rows repeat */
	REQUIRE(image_resize(&a, 2, 2, &r, &e) == 0);
	CHECK_NEAR(r.rgb[0], 0, 0);
	CHECK_NEAR(r.rgb[3], 100, 0);
	CHECK_NEAR(r.rgb[6], 0, 0);
	CHECK_NEAR(r.rgb[9], 100, 0);
	image_release(&r);
	image_release(&a);
	make(&a, 4, 1, four);
	/* halving averages pairs: x = 2d + 0.5 */
	REQUIRE(image_resize(&a, 2, 1, &r, &e) == 0);
	CHECK_NEAR(r.rgb[0], 5, 1e-5);
	CHECK_NEAR(r.rgb[3], 25, 1e-5);
	image_release(&r);
	CHECK(image_resize(&a, 0, 1, &r, &e) == -1);
	image_release(&a);
}

static float
at(const struct tensor *t, int64_t i)
{
	return ((float *)t->data)[i];
}

static void
test_to_tensor(void)
{
	static const float v4[] = { 0, 51, 102, 153, 204, 255, 0, 51 };
	struct image img;
	struct image_prep p;
	struct tensor t;
	struct err e;

	make(&img, 4, 2, v4);
	image_prep_init(&p);
	p.width = 4, p.height = 2;
	REQUIRE(image_to_tensor(&img, &p, &t, &e) == 0);
	CHECK_EQ_INT(t.rank, 4);
	CHECK_EQ_INT(t.dims[0], 1);
	CHECK_EQ_INT(t.dims[1], 3);
	CHECK_EQ_INT(t.dims[2], 2);
	CHECK_EQ_INT(t.dims[3], 4);
	CHECK_EQ_INT(t.dtype, DT_FLOAT);
	CHECK_NEAR(at(&t, 1), 51 / 255.0, 1e-6);		/* R, y0 x1 */
	CHECK_NEAR(at(&t, 8 + 1), 52 / 255.0, 1e-6);	/* G */
	CHECK_NEAR(at(&t, 16 + 1), 53 / 255.0, 1e-6);	/* B */
	CHECK_NEAR(at(&t, 16 + 5), 257 / 255.0, 1e-6);	/* B, y1 x1 */
	tensor_release(&t);
	/* mean/std per output channel, BGR, NHWC */
	p.bgr = 1;
	p.layout = IMAGE_NHWC;
	p.scale = 1;
	p.mean[0] = 10, p.mean[1] = 20, p.mean[2] = 30;
	p.std[0] = 2, p.std[1] = 4, p.std[2] = 5;
	REQUIRE(image_to_tensor(&img, &p, &t, &e) == 0);
	CHECK_EQ_INT(t.dims[1], 2);
	CHECK_EQ_INT(t.dims[3], 3);
	/* pixel (x1, y0): R 51 G 52 B 53; channel 0 is B */
	CHECK_NEAR(at(&t, 3 + 0), (53 - 10) / 2.0, 1e-5);
	CHECK_NEAR(at(&t, 3 + 1), (52 - 20) / 4.0, 1e-5);
	CHECK_NEAR(at(&t, 3 + 2), (51 - 30) / 5.0, 1e-5);
	tensor_release(&t);
	/* grey, uint8 */
	image_prep_init(&p);
	p.width = 4, p.height = 2;
	p.channels = 1;
	p.dtype = DT_UINT8;
	REQUIRE(image_to_tensor(&img, &p, &t, &e) == 0);
	CHECK_EQ_INT(t.dims[1], 1);
	CHECK_EQ_INT(t.dtype, DT_UINT8);
	/* 0.299 * 51 + 0.587 * 52 + 0.114 * 53 = 51.815 */
	CHECK_EQ_INT(((unsigned char *)t.data)[1], 52);
	CHECK_EQ_INT(((unsigned char *)t.data)[5], 255);
	tensor_release(&t);
	image_release(&img);
}

static void
test_fit_and_crop(void)
{
	float v[8 * 2];
	struct image img;
	struct image_prep p;
	struct tensor t;
	struct err e;

	for (int i = 0; i < 16; i++)
		v[i] = 100;
	make(&img, 8, 2, v);
	image_prep_init(&p);
	p.scale = 1;
	p.pad = 7;
	p.width = 4, p.height = 4;
	/* 8x2 fits 4x4 as 4x1: centred at row 1, padding elsewhere */
	p.fit = IMAGE_FIT;
	REQUIRE(image_to_tensor(&img, &p, &t, &e) == 0);
	for (int y = 0; y < 4; y++)
		for (int x = 0; x < 4; x++)
			CHECK_NEAR(at(&t, y * 4 + x), y == 1 ? 100 : 7, 1e-5);
	tensor_release(&t);
	p.fit = IMAGE_FIT_TOPLEFT;
	REQUIRE(image_to_tensor(&img, &p, &t, &e) == 0);
	for (int y = 0; y < 4; y++)
		CHECK_NEAR(at(&t, y * 4), y == 0 ? 100 : 7, 1e-5);
	tensor_release(&t);
	image_release(&img);
	/* crop: a 6x4 ramp, short side to 2 gives 3x2, centre 2x2 crop */
	{
		float r[24];

		for (int y = 0; y < 4; y++)
			for (int x = 0; x < 6; x++)
				r[y * 6 + x] = (float)(x * 10);
		make(&img, 6, 4, r);
	}
	p.fit = IMAGE_CROP;
	p.width = 2, p.height = 2;
	p.short_side = 2;
	REQUIRE(image_to_tensor(&img, &p, &t, &e) == 0);
	/* 6 -> 3: x = 2d + 0.5 -> 5, 25, 45; crop starts at column 0 */
	CHECK_NEAR(at(&t, 0), 5, 1e-4);
	CHECK_NEAR(at(&t, 1), 25, 1e-4);
	tensor_release(&t);
	p.short_side = 1;
	CHECK(image_to_tensor(&img, &p, &t, &e) == -1);
	CHECK(strstr(e.msg, "smaller than the 2x2 crop") != NULL);
	image_release(&img);
}

static void
test_parse(void)
{
	float f, v[3];
	int w, h;
	struct err e;

	CHECK(image_parse_scale("1/255", &f, &e) == 0);
	CHECK(f == 1.0f / 255.0f);
	CHECK(image_parse_scale("0.5", &f, &e) == 0);
	CHECK(f == 0.5f);
	CHECK(image_parse_scale("1/0", &f, &e) == -1);
	CHECK(image_parse_scale("x", &f, &e) == -1);
	CHECK(image_parse_scale("1/", &f, &e) == -1);
	CHECK(image_parse_triple("0.485,0.456,0.406", v, &e) == 0);
	CHECK(v[2] == 0.406f);
	CHECK(image_parse_triple("127.5", v, &e) == 0);
	CHECK(v[0] == 127.5f && v[1] == 127.5f && v[2] == 127.5f);
	CHECK(image_parse_triple("1,2", v, &e) == -1);
	CHECK(image_parse_triple("1,2,3,4", v, &e) == -1);
	CHECK(image_parse_triple("1,,3", v, &e) == -1);
	CHECK(image_parse_size("640x480", &w, &h, &e) == 0);
	CHECK(w == 640 && h == 480);
	CHECK(image_parse_size("640", &w, &h, &e) == -1);
	CHECK_EQ_STR(e.msg, "'640' is not a size WxH");
	CHECK(image_parse_size("0x4", &w, &h, &e) == -1);
	CHECK_EQ_INT(image_fit_from_name("fit-topleft"), IMAGE_FIT_TOPLEFT);
	CHECK_EQ_INT(image_fit_from_name("zoom"), -1);
	CHECK(image_name_ok("a.JPG"));
	CHECK(image_name_ok("b.jpeg"));
	CHECK(!image_name_ok("c.png.txt"));
	CHECK(!image_name_ok(".png"));
}

UNIT_MAIN(test_png_kinds, test_jpeg, test_bad_files, test_resize,
    test_to_tensor, test_fit_and_crop, test_parse)
