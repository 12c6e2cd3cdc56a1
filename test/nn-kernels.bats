#!/usr/bin/env bats
# nn-kernels.bats: the kernels of lib/op_nn.c, lib/op_quant.c,
# lib/op_dynq.c and lib/op_nbits.c (MatMulNBits: 2, 4, 8 bits, padding,
# zero points; GatherBlockQuantized) against
# ONNX Runtime on 305 generated single-node models (test/tools/nn-cases.py:
# every convolution path, ConvTranspose, Gemm, MatMul, Einsum, pooling,
# normalisations, Resize and Upsample in every mode, QuantizeLinear and
# DequantizeLinear in both domains, the kernels of dynamic quantization),
# within rtol 1e-3 and atol 1e-4 (the
# products sum hundreds of terms of magnitude 1, so outputs near zero
# need the absolute slack). A case ONNX Runtime refuses fails the test.
# Needs: onnxq-conform (test/tools), /usr/bin/python3 with onnx and numpy,
# node with onnxruntime-node (scripts/fetch-models).

load helpers

PY=/usr/bin/python3

@test "nn kernels: agree with ONNX Runtime" {
	"$PY" "$ONNXQ_ROOT/test/tools/nn-cases.py" write "$T/cases" >/dev/null
	ort_node "$ONNXQ_ROOT/test/tools/nn-cases.js" "$T"/cases/*
	run --separate-stderr "$PY" "$ONNXQ_ROOT/test/tools/nn-cases.py" \
	    finish "$T/cases"
	[ "$status" -eq 0 ] || fail "$stderr"
	run --separate-stderr onnxq-conform -l nn --atol 1e-4 "$T/cases"
	printf '# %s\n' "${lines[-1]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
	[[ ${lines[-1]} == "conformance: nn: 305 passed, 0 failed, "* ]] ||
	    fail "got: $output"
}
