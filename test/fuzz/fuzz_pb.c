/*
 * fuzz_pb: serialized TensorProto files, the input_K.pb / output_K.pb of
 * the ONNX backend-test data layout, read as dataset.c reads them
 * (onnx__tensor_proto__unpack, then model_tensor_read without a model:
 * typed fields, raw_data, 4-bit packing; external data refused). A tensor
 * that reads is stored again (model_tensor_write), packed, unpacked and
 * read: the round trip must give the same type, shape and bytes.
 */
#include "fuzz.h"

#include "model.h"
#include "onnx/onnx.pb-c.h"
#include "tensor.h"

/* dataset.c reads files up to TENSOR_MAX_BYTES; keep the fuzzer's small. */
#define PB_MAX_INPUT (1 << 20)

static void
round_trip(const struct tensor *t)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT, *back_tp;
	struct tensor back = { 0 };
	struct err e = { "" };
	uint8_t *buf;
	size_t len;

	if (model_tensor_write(&tp, t, &e) < 0) {
		fuzz_check_err(&e);
		return;
	}
	len = onnx__tensor_proto__get_packed_size(&tp);
	if (!(buf = malloc(len ? len : 1)))
		abort();
	onnx__tensor_proto__pack(&tp, buf);
	/* tp's fields were malloc'd by model_tensor_write */
	free(tp.raw_data.data);
	free(tp.dims);
	if (!(back_tp = onnx__tensor_proto__unpack(NULL, len, buf)))
		abort();
	if (model_tensor_read(NULL, back_tp, &back, &e) < 0) {
		fprintf(stderr, "written tensor does not read back: %s\n",
		    e.msg);
		abort();
	}
	fuzz_check_same(&back, t, "tensor");
	tensor_release(&back);
	onnx__tensor_proto__free_unpacked(back_tp, NULL);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Onnx__TensorProto *tp;
	struct tensor t = { 0 };
	struct err e = { "" };

	if (size > PB_MAX_INPUT)
		return 0;
	if (!(tp = onnx__tensor_proto__unpack(NULL, size, data)))
		return 0;
	if (model_tensor_read(NULL, tp, &t, &e) == 0) {
		round_trip(&t);
		tensor_release(&t);
	} else
		fuzz_check_err(&e);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return 0;
}
