#!/usr/bin/env bats
# dynamic.bats: dynamic quantization. The kernels of lib/op_dynq.c
# (DynamicQuantizeLinear, MatMulInteger, ConvInteger, com.microsoft
# DynamicQuantizeMatMul and MatMulIntegerToFloat) bit for bit against ONNX
# Runtime on the dynq cases of test/tools/nn-cases.py.
# Needs: onnxq-conform (test/tools), /usr/bin/python3 with onnx and numpy,
# node with onnxruntime-node (scripts/fetch-models).

load helpers

PY=/usr/bin/python3

@test "dynamic: kernels agree with ONNX Runtime bit for bit" {
	NN_CASES=dynq "$PY" "$ONNXQ_ROOT/test/tools/nn-cases.py" write \
	    "$T/cases" >/dev/null
	ort_node "$ONNXQ_ROOT/test/tools/nn-cases.js" "$T"/cases/*
	run --separate-stderr env NN_CASES=dynq "$PY" \
	    "$ONNXQ_ROOT/test/tools/nn-cases.py" finish "$T/cases"
	[ "$status" -eq 0 ] || fail "$stderr"
	run --separate-stderr onnxq-conform -l dynq --rtol 0 --atol 0 \
	    "$T/cases"
	printf '# %s\n' "${lines[-1]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
	[[ ${lines[-1]} == "conformance: dynq: 13 passed, 0 failed, "* ]] ||
	    fail "got: $output"
}
