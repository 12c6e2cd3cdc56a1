/*
 * fuzz_image: PNG and JPEG decoding (image.h: libpng and libjpeg through
 * image_load_mem) and what onnx-calib does with a decoded image: the four
 * fits, grey and colour, NCHW and NHWC, float and uint8, into a small
 * tensor. Decoders that give up must say why, in one line.
 */
#include "fuzz.h"

#include "image.h"
#include "tensor.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image img;
	struct image_prep p;
	struct tensor t;
	struct err e = { "" };

	if (image_load_mem(data, size, "fuzz.img", &img, &e) < 0) {
		fuzz_check_err(&e);
		return 0;
	}
	if (img.width <= 0 || img.height <= 0 || !img.rgb)
		abort();
	for (int fit = IMAGE_STRETCH; fit <= IMAGE_CROP; fit++) {
		image_prep_init(&p);
		p.fit = fit;
		p.width = 7 + fit;
		p.height = 5;
		p.channels = fit % 2 ? 1 : 3;
		p.layout = fit / 2 ? IMAGE_NHWC : IMAGE_NCHW;
		p.dtype = fit == IMAGE_FIT ? DT_UINT8 : DT_FLOAT;
		p.bgr = fit == IMAGE_CROP;
		p.short_side = fit == IMAGE_CROP ? 9 : 0;
		e.msg[0] = '\0';
		if (image_to_tensor(&img, &p, &t, &e) == 0)
			tensor_release(&t);
		else
			fuzz_check_err(&e);
	}
	image_release(&img);
	return 0;
}
