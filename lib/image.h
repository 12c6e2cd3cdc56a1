/*
 * image: decode PNG and JPEG files (libpng, libjpeg) and turn them into
 * the input tensor of a vision model, with the usual preprocessing:
 *
 *	decode -> RGB, 0..255 -> resize (and crop or pad) to W x H
 *	-> value * scale, then (value - mean[c]) / std[c] per channel
 *	-> RGB or BGR (or one grey channel) -> NCHW or NHWC, batch of 1
 *
 * Resizing is bilinear with the pixel centres aligned (as OpenCV's
 * INTER_LINEAR and PIL's BILINEAR without antialiasing), in one of four
 * ways (enum image_fit). Padding has a pixel value (0..255), applied
 * before scale, mean and std as the model's own preprocessing pads.
 *
 * Files are recognised by their first bytes, not their names. Every error
 * names the file: "imgs/a.png: not a PNG or JPEG file".
 *
 * struct image owns its pixels: image_load() fills it, image_release()
 * frees them. image_to_tensor() allocates the tensor, the caller
 * releases it.
 */
#ifndef ONNXQ_IMAGE_H
#define ONNXQ_IMAGE_H

#include <stddef.h>

#include "err.h"
#include "tensor.h"

/* Images larger than this many pixels are refused (hostile headers). */
#define IMAGE_MAX_PIXELS ((size_t)1 << 26)	/* 8192 x 8192 */

struct image {
	int width, height;
	float *rgb;		/* height * width * 3, row-major, 0..255 */
};

enum image_fit {
	IMAGE_STRETCH,		/* to W x H, aspect ratio not kept */
	IMAGE_FIT,		/* keep aspect, fit inside, pad around (centred) */
	IMAGE_FIT_TOPLEFT,	/* keep aspect, fit inside, pad right and bottom */
	IMAGE_CROP,		/* keep aspect, cover W x H, crop the centre */
};

enum image_layout {
	IMAGE_NCHW,
	IMAGE_NHWC,
};

struct image_prep {
	int width, height;	/* output size, both > 0 */
	int channels;		/* 3 (colour) or 1 (grey, ITU-R BT.601 luma) */
	enum image_fit fit;
	/*
	 * IMAGE_CROP: first scale the shorter side to this many pixels
	 * (ImageNet's 256 before a 224 crop); 0: just enough to cover.
	 */
	int short_side;
	float pad;		/* pixel value of padding, 0..255 */
	float scale;		/* applied to 0..255 pixel values */
	/* per channel of the output, in its order (BGR with bgr set) */
	float mean[3], std[3];
	int bgr;		/* channel order of the output */
	enum image_layout layout;
	int dtype;		/* DT_FLOAT, or DT_UINT8 (no scale, mean, std) */
};

/* Defaults: stretch, 3 channels RGB NCHW float, scale 1/255, mean 0, std 1. */
void image_prep_init(struct image_prep *p);

/* 1 when the name ends in .png, .jpg or .jpeg (any case). */
int image_name_ok(const char *name);

/* Decode a PNG or JPEG file (any bit depth, grey, palette, alpha dropped). */
int image_load(const char *path, struct image *img, struct err *e);
/* Decode from memory; name is used in messages. */
int image_load_mem(const void *buf, size_t len, const char *name,
    struct image *img, struct err *e);
void image_release(struct image *img);

/*
 * Resize img to w x h (bilinear, centres aligned) into out, which the
 * caller releases.
 */
int image_resize(const struct image *img, int w, int h, struct image *out,
    struct err *e);

/*
 * Preprocess img into a new tensor of shape 1xCxHxW (NCHW) or 1xHxWxC
 * (NHWC) of type p->dtype.
 */
int image_to_tensor(const struct image *img, const struct image_prep *p,
    struct tensor *t, struct err *e);

/*
 * Parse option values: "1/255" or "0.0039" for a scale; "a,b,c" or one
 * value for all channels for mean and std; "WxH" for a size. 0 or -1
 * (with a message naming the value).
 */
int image_parse_scale(const char *s, float *v, struct err *e);
int image_parse_triple(const char *s, float v[3], struct err *e);
int image_parse_size(const char *s, int *w, int *h, struct err *e);
/* "stretch", "fit", "fit-topleft", "crop"; -1 if none. */
int image_fit_from_name(const char *s);

#endif
