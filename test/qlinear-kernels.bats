#!/usr/bin/env bats
# qlinear-kernels.bats: the QOperator kernels of lib/op_qlinear.c
# (QLinearConv, QLinearMatMul, QGemm, QLinearAdd, QLinearMul,
# QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool,
# QLinearGlobalAveragePool, QLinearConcat, QLinearSoftmax) against ONNX
# Runtime on the single-node cases of test/tools/qlinear_cases.py: every
# output within one quantization step, and most of them bit for bit.
# Needs: onnxq-conform (test/tools), /usr/bin/python3 with onnx and numpy,
# node with onnxruntime-node (scripts/fetch-models).

load helpers

PY=/usr/bin/python3
NCASES=30

@test "qlinear kernels: within one step of ONNX Runtime, most exact" {
	"$PY" "$ONNXQ_ROOT/test/tools/nn-cases.py" write "$T/cases" qlinear \
	    >/dev/null
	ort_node "$ONNXQ_ROOT/test/tools/nn-cases.js" "$T"/cases/*
	run --separate-stderr "$PY" "$ONNXQ_ROOT/test/tools/nn-cases.py" \
	    finish "$T/cases" qlinear
	[ "$status" -eq 0 ] || fail "$stderr"
	[ "$output" = "$NCASES cases" ] || fail "got: $output"
	run --separate-stderr onnxq-conform -l qlinear --atol 1 "$T/cases"
	printf '# %s\n' "${lines[-1]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
	[[ ${lines[-1]} == "conformance: qlinear: $NCASES passed, 0 failed, "* ]] ||
	    fail "got: $output"
	# Bit for bit: all but the pools, whose float sums ORT orders its way.
	run --separate-stderr onnxq-conform -l exact --atol 0 "$T/cases"
	printf '# %s\n' "${lines[-1]}" >&3
	[[ ${lines[-1]} == "conformance: exact: "*" passed, "[0-2]" failed, "* ]] ||
	    fail "more than two cases off by one step: $output"
}
