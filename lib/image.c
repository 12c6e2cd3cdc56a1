/*
 * image: PNG and JPEG decoding and vision preprocessing. See image.h.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#include "image.h"

/* Image files larger than this are refused before reading. */
#define IMAGE_FILE_MAX ((size_t)1 << 30)

void
image_prep_init(struct image_prep *p)
{
	memset(p, 0, sizeof *p);
	p->channels = 3;
	p->fit = IMAGE_STRETCH;
	p->scale = 1.0f / 255.0f;
	for (int c = 0; c < 3; c++)
		p->std[c] = 1;
	p->layout = IMAGE_NCHW;
	p->dtype = DT_FLOAT;
}

int
image_name_ok(const char *name)
{
	static const char *const ext[] = { ".png", ".jpg", ".jpeg" };
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t k = strlen(ext[i]);

		if (n > k && strcasecmp(name + n - k, ext[i]) == 0)
			return 1;
	}
	return 0;
}

void
image_release(struct image *img)
{
	free(img->rgb);
	memset(img, 0, sizeof *img);
}

static int
alloc_rgb(struct image *img, size_t w, size_t h, const char *name,
    struct err *e)
{
	if (w == 0 || h == 0)
		return err_set(e, "%s: empty image", name);
	if (w > IMAGE_MAX_PIXELS / h)
		return err_set(e, "%s: image of %zux%zu pixels is too large", name,
		    w, h);
	if (!(img->rgb = malloc(w * h * 3 * sizeof *img->rgb)))
		return err_nomem(e);
	img->width = (int)w;
	img->height = (int)h;
	return 0;
}

/* Reading from memory for libpng. */
struct png_src {
	const unsigned char *p;
	size_t left;
	char msg[256];
};

static void
png_read_mem(png_structp png, png_bytep out, size_t n)
{
	struct png_src *src = png_get_io_ptr(png);

	if (n > src->left)
		png_error(png, "file truncated");
	memcpy(out, src->p, n);
	src->p += n;
	src->left -= n;
}

static void
png_fail(png_structp png, png_const_charp msg)
{
	struct png_src *src = png_get_error_ptr(png);

	snprintf(src->msg, sizeof src->msg, "%s", msg);
	png_longjmp(png, 1);
}

static void
png_quiet(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/*
 * The classic interface rather than png_image: that one treats 16-bit
 * files as linear light and gamma-encodes them on the way to 8 bits;
 * OpenCV and PIL, which models are trained with, just drop the low byte.
 */
static int
load_png(const void *buf, size_t len, const char *name, struct image *img,
    struct err *e)
{
	struct png_src src = { buf, len, "" };
	png_structp png;
	png_infop info = NULL;
	unsigned char *volatile px = NULL;
	png_bytep *volatile rows = NULL;
	png_uint_32 w, h;
	int depth, ctype;
	size_t n;

	if (!(png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src,
	    png_fail, png_quiet)) || !(info = png_create_info_struct(png))) {
		png_destroy_read_struct(&png, NULL, NULL);
		return err_nomem(e);
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_read_struct(&png, &info, NULL);
		free(px);
		free(rows);
		image_release(img);
		return err_set(e, "%s: bad PNG: %s", name, src.msg);
	}
	png_set_read_fn(png, &src, png_read_mem);
	png_set_user_limits(png, 1 << 20, 1 << 20);
	png_read_info(png, info);
	png_get_IHDR(png, info, &w, &h, &depth, &ctype, NULL, NULL, NULL);
	if (w == 0 || h == 0 || w > IMAGE_MAX_PIXELS / h) {
		png_destroy_read_struct(&png, &info, NULL);
		return err_set(e, "%s: image of %ux%u pixels is too large or empty",
		    name, (unsigned)w, (unsigned)h);
	}
	if (depth == 16)
		png_set_strip_16(png);
	if (ctype == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);
	if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8)
		png_set_expand_gray_1_2_4_to_8(png);
	if (ctype == PNG_COLOR_TYPE_GRAY || ctype == PNG_COLOR_TYPE_GRAY_ALPHA)
		png_set_gray_to_rgb(png);
	/* alpha and a transparent colour are dropped, as OpenCV and PIL do */
	if (ctype & PNG_COLOR_MASK_ALPHA)
		png_set_strip_alpha(png);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);
	if (png_get_rowbytes(png, info) != (size_t)w * 3)
		png_error(png, "unexpected row size");
	n = (size_t)w * h;
	if (!(px = malloc(n * 3)) || !(rows = malloc(h * sizeof *rows)))
		png_error(png, "out of memory");
	for (png_uint_32 y = 0; y < h; y++)
		rows[y] = px + (size_t)y * w * 3;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(rows);
	if (alloc_rgb(img, w, h, name, e) < 0) {
		free(px);
		return -1;
	}
	for (size_t i = 0; i < n * 3; i++)
		img->rgb[i] = px[i];
	free(px);
	return 0;
}

/* libjpeg reports errors through a callback that must not return. */
struct jpeg_err {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX];
};

static void
jpeg_fail(j_common_ptr cinfo)
{
	struct jpeg_err *je = (struct jpeg_err *)cinfo->err;

	(*cinfo->err->format_message)(cinfo, je->msg);
	longjmp(je->jb, 1);
}

static void
jpeg_quiet(j_common_ptr cinfo, int level)
{
	/*
	 * Warnings (corrupt data that decodes anyway) are not errors, but
	 * running out of data is, as in PIL: libjpeg would make up the
	 * missing rows, and a few bytes claiming a huge image would take
	 * seconds.
	 */
	if (level < 0 && (cinfo->err->msg_code == JWRN_JPEG_EOF ||
	    cinfo->err->msg_code == JWRN_HIT_MARKER))
		jpeg_fail(cinfo);
}

static int
load_jpeg(const void *buf, size_t len, const char *name, struct image *img,
    struct err *e)
{
	struct jpeg_decompress_struct ci;
	struct jpeg_err je;
	unsigned char *volatile row = NULL;
	struct image *volatile out = img;

	memset(&ci, 0, sizeof ci);
	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = jpeg_fail;
	je.pub.emit_message = jpeg_quiet;
	if (setjmp(je.jb)) {
		jpeg_destroy_decompress(&ci);
		free(row);
		image_release(out);
		return err_set(e, "%s: bad JPEG: %s", name, je.msg);
	}
	jpeg_create_decompress(&ci);
	jpeg_mem_src(&ci, buf, (unsigned long)len);
	jpeg_read_header(&ci, TRUE);
	if (ci.jpeg_color_space == JCS_CMYK || ci.jpeg_color_space == JCS_YCCK) {
		jpeg_destroy_decompress(&ci);
		return err_set(e, "%s: CMYK JPEG is not supported", name);
	}
	ci.out_color_space = JCS_RGB;
	if (ci.image_width == 0 || ci.image_height == 0 ||
	    ci.image_width > IMAGE_MAX_PIXELS / ci.image_height) {
		jpeg_destroy_decompress(&ci);
		return err_set(e, "%s: image of %ux%u pixels is too large or empty",
		    name, (unsigned)ci.image_width, (unsigned)ci.image_height);
	}
	jpeg_start_decompress(&ci);
	if (ci.output_components != 3) {
		jpeg_destroy_decompress(&ci);
		return err_set(e, "%s: JPEG with %d components", name,
		    ci.output_components);
	}
	if (alloc_rgb(out, ci.output_width, ci.output_height, name, e) < 0) {
		jpeg_destroy_decompress(&ci);
		return -1;
	}
	if (!(row = malloc((size_t)ci.output_width * 3))) {
		jpeg_destroy_decompress(&ci);
		image_release(out);
		return err_nomem(e);
	}
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW rp = row;
		size_t y = ci.output_scanline;
		float *dst = out->rgb + y * ci.output_width * 3;

		jpeg_read_scanlines(&ci, &rp, 1);
		for (size_t i = 0; i < (size_t)ci.output_width * 3; i++)
			dst[i] = row[i];
		/*
		 * Arithmetic-coded data may end early without a warning
		 * (zeros make up the rest), so a few bytes would claim a
		 * huge image. In a single scan, a marker other than a
		 * restart (the end of image, or garbage) met more than a
		 * few rows of MCUs before the last row is that.
		 */
		if (ci.arith_code && ci.unread_marker != 0 &&
		    (ci.unread_marker < JPEG_RST0 ||
		    ci.unread_marker > JPEG_RST0 + 7) &&
		    !jpeg_has_multiple_scans(&ci) &&
		    ci.output_height - ci.output_scanline >
		    3 * (JDIMENSION)ci.max_v_samp_factor * DCTSIZE) {
			jpeg_destroy_decompress(&ci);
			free(row);
			image_release(out);
			return err_set(e, "%s: bad JPEG: Premature end of JPEG "
			    "file", name);
		}
	}
	jpeg_finish_decompress(&ci);
	jpeg_destroy_decompress(&ci);
	free(row);
	return 0;
}

int
image_load_mem(const void *buf, size_t len, const char *name,
    struct image *img, struct err *e)
{
	static const unsigned char png_sig[8] = {
		0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'
	};
	const unsigned char *b = buf;

	memset(img, 0, sizeof *img);
	if (len >= 8 && memcmp(b, png_sig, 8) == 0)
		return load_png(buf, len, name, img, e);
	if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return load_jpeg(buf, len, name, img, e);
	return err_set(e, "%s: not a PNG or JPEG file", name);
}

int
image_load(const char *path, struct image *img, struct err *e)
{
	FILE *fp;
	struct stat st;
	unsigned char *buf;
	size_t len;
	int r;

	memset(img, 0, sizeof *img);
	if (!(fp = fopen(path, "rb")))
		return err_errno(e, "%s", path);
	if (fstat(fileno(fp), &st) < 0) {
		fclose(fp);
		return err_errno(e, "%s", path);
	}
	if (!S_ISREG(st.st_mode)) {
		fclose(fp);
		return err_set(e, "%s: not a regular file", path);
	}
	if ((uintmax_t)st.st_size > IMAGE_FILE_MAX) {
		fclose(fp);
		return err_set(e, "%s: file too large", path);
	}
	len = (size_t)st.st_size;
	if (!(buf = malloc(len ? len : 1))) {
		fclose(fp);
		return err_nomem(e);
	}
	if (fread(buf, 1, len, fp) != len) {
		free(buf);
		fclose(fp);
		return err_set(e, "%s: read error", path);
	}
	fclose(fp);
	r = image_load_mem(buf, len, path, img, e);
	free(buf);
	return r;
}

/* Source index and weight of the upper neighbour for each output pixel. */
static int
axis_taps(int sn, int dn, int **idx, float **w, struct err *e)
{
	double s = (double)sn / dn;

	*idx = malloc((size_t)dn * sizeof **idx);
	*w = malloc((size_t)dn * sizeof **w);
	if (!*idx || !*w) {
		free(*idx);
		free(*w);
		return err_nomem(e);
	}
	for (int d = 0; d < dn; d++) {
		double x = (d + 0.5) * s - 0.5;
		int i;

		if (x < 0)
			x = 0;
		i = (int)x;
		if (i >= sn - 1) {
			i = sn - 1;
			x = i;
		}
		(*idx)[d] = i;
		(*w)[d] = (float)(x - i);
	}
	return 0;
}

int
image_resize(const struct image *img, int w, int h, struct image *out,
    struct err *e)
{
	int *xi = NULL, *yi = NULL;
	float *xw = NULL, *yw = NULL;
	int sw = img->width;

	memset(out, 0, sizeof *out);
	if (w <= 0 || h <= 0 || (size_t)w > IMAGE_MAX_PIXELS / (size_t)h)
		return err_set(e, "cannot resize to %dx%d", w, h);
	if (axis_taps(img->width, w, &xi, &xw, e) < 0)
		return -1;
	if (axis_taps(img->height, h, &yi, &yw, e) < 0 ||
	    alloc_rgb(out, (size_t)w, (size_t)h, "resize", e) < 0) {
		free(xi), free(xw), free(yi), free(yw);
		return -1;
	}
	for (int y = 0; y < h; y++) {
		int y0 = yi[y], y1 = y0 + 1 < img->height ? y0 + 1 : y0;
		float fy = yw[y];
		const float *r0 = img->rgb + (size_t)y0 * sw * 3;
		const float *r1 = img->rgb + (size_t)y1 * sw * 3;
		float *dst = out->rgb + (size_t)y * w * 3;

		for (int x = 0; x < w; x++) {
			int x0 = xi[x], x1 = x0 + 1 < sw ? x0 + 1 : x0;
			float fx = xw[x];

			for (int c = 0; c < 3; c++) {
				float top = r0[x0 * 3 + c] +
				    fx * (r0[x1 * 3 + c] - r0[x0 * 3 + c]);
				float bot = r1[x0 * 3 + c] +
				    fx * (r1[x1 * 3 + c] - r1[x0 * 3 + c]);

				dst[x * 3 + c] = top + fy * (bot - top);
			}
		}
	}
	free(xi), free(xw), free(yi), free(yw);
	return 0;
}

static int
round_dim(double v)
{
	long r = lround(v);

	return r < 1 ? 1 : r > (1L << 28) ? 1 << 28 : (int)r;
}

int
image_to_tensor(const struct image *img, const struct image_prep *p,
    struct tensor *t, struct err *e)
{
	int W = p->width, H = p->height, C = p->channels;
	int rw, rh, ox = 0, oy = 0, cx = 0, cy = 0;
	int64_t dims[4];
	struct image r;
	double s;

	memset(t, 0, sizeof *t);
	if (W <= 0 || H <= 0)
		return err_set(e, "no output size");
	if (C != 1 && C != 3)
		return err_set(e, "%d channels: only 1 (grey) and 3 are supported",
		    C);
	if (p->dtype != DT_FLOAT && p->dtype != DT_UINT8)
		return err_set(e, "type %s: images become float or uint8 tensors",
		    dtype_name(p->dtype) ? dtype_name(p->dtype) : "?");
	switch (p->fit) {
	case IMAGE_STRETCH:
		rw = W, rh = H;
		break;
	case IMAGE_FIT:
	case IMAGE_FIT_TOPLEFT:
		s = fmin((double)W / img->width, (double)H / img->height);
		rw = round_dim(img->width * s);
		rh = round_dim(img->height * s);
		rw = rw > W ? W : rw;
		rh = rh > H ? H : rh;
		if (p->fit == IMAGE_FIT) {
			ox = (W - rw) / 2;
			oy = (H - rh) / 2;
		}
		break;
	default:
		if (p->short_side > 0)
			s = (double)p->short_side / (img->width < img->height ?
			    img->width : img->height);
		else
			s = fmax((double)W / img->width, (double)H / img->height);
		rw = round_dim(img->width * s);
		rh = round_dim(img->height * s);
		if (rw < W || rh < H)
			return err_set(e, "short side %d gives %dx%d, smaller than "
			    "the %dx%d crop", p->short_side, rw, rh, W, H);
		cx = (rw - W) / 2;
		cy = (rh - H) / 2;
		break;
	}
	if (image_resize(img, rw, rh, &r, e) < 0)
		return -1;
	if (p->layout == IMAGE_NCHW)
		dims[0] = 1, dims[1] = C, dims[2] = H, dims[3] = W;
	else
		dims[0] = 1, dims[1] = H, dims[2] = W, dims[3] = C;
	if (tensor_alloc(t, p->dtype, 4, dims, e) < 0) {
		image_release(&r);
		return -1;
	}
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int sx = x - ox + cx, sy = y - oy + cy;
			int in = sx >= 0 && sx < rw && sy >= 0 && sy < rh;
			const float *px = in ? r.rgb + ((size_t)sy * rw + sx) * 3 :
			    NULL;
			float rgb[3];

			for (int c = 0; c < 3; c++)
				rgb[c] = px ? px[c] : p->pad;
			for (int c = 0; c < C; c++) {
				float v;
				size_t at;

				if (C == 1)
					v = 0.299f * rgb[0] + 0.587f * rgb[1] +
					    0.114f * rgb[2];
				else
					v = rgb[p->bgr ? 2 - c : c];
				at = p->layout == IMAGE_NCHW ?
				    ((size_t)c * H + y) * W + x :
				    ((size_t)y * W + x) * C + c;
				if (p->dtype == DT_UINT8) {
					v = v < 0 ? 0 : v > 255 ? 255 : v;
					((unsigned char *)t->data)[at] =
					    (unsigned char)lrintf(v);
				} else
					((float *)t->data)[at] =
					    (v * p->scale - p->mean[c]) / p->std[c];
			}
		}
	image_release(&r);
	return 0;
}

int
image_parse_scale(const char *s, float *v, struct err *e)
{
	char *end;
	double a, b = 1;

	errno = 0;
	a = strtod(s, &end);
	if (end != s && *end == '/') {
		const char *q = end + 1;

		b = strtod(q, &end);
		if (end == q)
			end = (char *)s;
	}
	if (errno || end == s || *end || !isfinite(a / b) || b == 0)
		return err_set(e, "'%s' is not a number or fraction like 1/255",
		    s);
	*v = (float)(a / b);
	return 0;
}

int
image_parse_triple(const char *s, float v[3], struct err *e)
{
	const char *p = s;
	int n = 0;

	for (;;) {
		char *end;
		double d;

		errno = 0;
		d = strtod(p, &end);
		if (errno || end == p || !isfinite(d) || n == 3 ||
		    (*end && *end != ','))
			return err_set(e, "'%s' is not one number or three, "
			    "comma-separated", s);
		v[n++] = (float)d;
		if (!*end)
			break;
		p = end + 1;
	}
	if (n == 2)
		return err_set(e, "'%s' is not one number or three, "
		    "comma-separated", s);
	if (n == 1)
		v[1] = v[2] = v[0];
	return 0;
}

int
image_parse_size(const char *s, int *w, int *h, struct err *e)
{
	const char *q;
	char *end;
	long a, b;

	errno = 0;
	a = strtol(s, &end, 10);
	if (errno || end == s || (*end != 'x' && *end != 'X'))
		goto bad;
	q = end + 1;
	b = strtol(q, &end, 10);
	if (errno || end == q || *end || a <= 0 || b <= 0 || a > 65536 ||
	    b > 65536)
		goto bad;
	*w = (int)a;
	*h = (int)b;
	return 0;
bad:
	return err_set(e, "'%s' is not a size WxH", s);
}

int
image_fit_from_name(const char *s)
{
	if (strcmp(s, "stretch") == 0)
		return IMAGE_STRETCH;
	if (strcmp(s, "fit") == 0)
		return IMAGE_FIT;
	if (strcmp(s, "fit-topleft") == 0)
		return IMAGE_FIT_TOPLEFT;
	if (strcmp(s, "crop") == 0)
		return IMAGE_CROP;
	return -1;
}
