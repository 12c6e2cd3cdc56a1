#!/usr/bin/env bats
# conformance.bats: the interpreter and its kernels against the ONNX
# backend test data (Debian libonnx-testdata, ONNX 1.12): every case whose
# operators all have a kernel must reproduce the expected outputs within
# rtol 1e-3, atol 1e-7 (ONNX's backend runner). Cases with an operator we
# do not register are skipped and counted, as are cases with non-tensor or
# string inputs/outputs. Opsets below 7 run too (the pytorch suites use
# opset 6). Prints one "conformance: SUITE: ..." line per suite.
# MUST_PASS lists cases that must pass rather than skip (If, Loop, Scan,
# LSTM, GRU, RNN, QLinearConv, QLinearMatMul).
# Needs: /usr/share/libonnx-testdata, onnxq-conform (test/tools), and
# /usr/bin/python3 with onnx for the self-checks.

load helpers

DATA=/usr/share/libonnx-testdata/data

# Cases whose reference data is wrong, so no correct runtime passes them.
BAD_DATA=(
	# The reference uses an unrounded output size for align_corners
	# downsampling; ONNX Runtime disagrees with it too.
	-x test_resize_downsample_scales_cubic_align_corners
	-x test_resize_downsample_scales_linear_align_corners
	# The reference truncates to bfloat16 where Cast rounds to nearest even.
	-x test_cast_FLOAT_to_BFLOAT16
	# The model declares input "like" as 3x4, the data gives shape 1
	# (and the reference truncates, as above).
	-x test_castlike_FLOAT_to_BFLOAT16
	-x test_castlike_FLOAT_to_BFLOAT16_expanded
	-x test_castlike_BFLOAT16_to_FLOAT
	-x test_castlike_BFLOAT16_to_FLOAT_expanded
	# Training-mode dropout draws a random mask (numpy's generator).
	-x test_training_dropout
	-x test_training_dropout_default
	-x test_training_dropout_default_mask
	-x test_training_dropout_mask
)

setup() {
	onnxq_setup
	[ -d "$DATA/node" ] || skip "no ONNX backend test data in $DATA"
}

# suite NAME: run every case of $DATA/NAME, report the counts.
suite() {
	run --separate-stderr onnxq-conform -l "$1" "${BAD_DATA[@]}" "$DATA/$1"
	printf '# %s\n' "${lines[@]}" | grep '^# conformance:' >&3 || true
	[ -z "$stderr" ] || fail "onnxq-conform wrote to stderr: $stderr"
	[ "$status" -eq 0 ] || fail "failing cases in $1:" "$output"
	[[ ${lines[-1]} == "conformance: $1: "*" passed, 0 failed, "* ]] ||
	    fail "no summary line: $output"
}

@test "conformance: node" { suite node; }
@test "conformance: pytorch-converted" { suite pytorch-converted; }
@test "conformance: pytorch-operator" { suite pytorch-operator; }
@test "conformance: simple" { suite simple; }

# Cases that must run and pass, not skip: a kernel that goes missing
# would otherwise only move a count from passed to skipped.
MUST_PASS=(
	test_if test_loop11 test_scan_sum test_scan9_sum
	test_range_float_type_positive_delta_expanded
	test_range_int32_type_negative_delta_expanded
	test_lstm_defaults test_lstm_with_initial_bias test_lstm_with_peepholes
	test_lstm_batchwise test_gru_defaults test_gru_with_initial_bias
	test_gru_seq_length test_gru_batchwise test_rnn_seq_length
	test_simple_rnn_defaults test_simple_rnn_with_initial_bias
	test_simple_rnn_batchwise
	test_dynamicquantizelinear test_dynamicquantizelinear_max_adjusted
	test_dynamicquantizelinear_min_adjusted test_matmulinteger
	test_basic_convinteger test_convinteger_with_padding
	test_convinteger_without_padding
	test_qlinearconv test_qlinearmatmul_2D test_qlinearmatmul_3D
)

@test "conformance: control flow, recurrent and QLinear layers pass" {
	local dirs=()

	for c in "${MUST_PASS[@]}"; do
		dirs+=("$DATA/node/$c")
	done
	run --separate-stderr onnxq-conform -v -l must "${dirs[@]}"
	[ "$status" -eq 0 ] || fail "$output"
	[[ ${lines[-1]} == "conformance: must: ${#MUST_PASS[@]} passed, 0 failed, 0 skipped (unsupported ops), "* ]] ||
	    fail "got: $output"
}

# copy_case NAME: a writable copy of a node test case in $T/NAME.
copy_case() {
	cp -r "$DATA/node/$1" "$T/$1"
	chmod -R u+w "$T/$1"
}

@test "conformance: a wrong expected value fails the case, naming it" {
	copy_case test_add
	/usr/bin/python3 - "$T/test_add/test_data_set_0/output_0.pb" <<-'EOF'
	import sys, onnx
	from onnx import numpy_helper
	t = onnx.TensorProto()
	t.ParseFromString(open(sys.argv[1], 'rb').read())
	a = numpy_helper.to_array(t).copy()
	a.flat[7] += 0.01 * abs(a.flat[7]) + 1e-3
	open(sys.argv[1], 'wb').write(numpy_helper.from_array(a, t.name).SerializeToString())
	EOF
	run --separate-stderr onnxq-conform -l mine "$T/test_add"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == "FAIL test_add: test_data_set_0: output sum: 1 of 60 elements outside tolerance"* ]] ||
	    fail "got: $output"
	[ "${lines[1]}" = "conformance: mine: 0 passed, 1 failed, 0 skipped (unsupported ops), 0 skipped (non-tensor or string data), 0 skipped (bad test data)" ]
}

@test "conformance: unknown operators skip, an -x case is not run" {
	copy_case test_relu
	copy_case test_abs
	/usr/bin/python3 - "$T/test_relu/model.onnx" <<-'EOF'
	import sys, onnx
	m = onnx.load(sys.argv[1])
	m.graph.node[0].op_type = 'NoSuchOp'
	onnx.save(m, sys.argv[1])
	EOF
	run --separate-stderr onnxq-conform -v -m -l x -x test_abs "$T"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "skip test_abs: bad test data (-x)" ]
	[ "${lines[1]}" = "skip test_relu: unsupported ops: NoSuchOp" ]
	[ "${lines[2]}" = "missing NoSuchOp: 1 case" ]
	[ "${lines[3]}" = "conformance: x: 0 passed, 0 failed, 1 skipped (unsupported ops), 0 skipped (non-tensor or string data), 1 skipped (bad test data)" ]
}

# ONNX 1.12's test data holds bfloat16 tensors as uint16 (numpy has no
# bfloat16); onnx-verify took them for a type mismatch. The reference of
# FLOAT_to_BFLOAT16 truncates where Cast rounds (BAD_DATA), hence --atol.
@test "conformance: onnx-verify reads bfloat16 test data" {
	local c=test_cast_BFLOAT16_to_FLOAT
	[ -d "$DATA/node/$c" ] || skip "no $c in the test data"
	run --separate-stderr onnx-verify -d "$DATA/node/$c" "$DATA/node/$c/model.onnx"
	[ "$status" -eq 0 ] || fail "$c: exit $status:" "$output" "$stderr"
	[[ ${lines[1]} == "output "*" ok" ]] || fail "$c: $output"
	c=test_cast_FLOAT_to_BFLOAT16
	run --separate-stderr onnx-verify --atol 0.01 -d "$DATA/node/$c" \
	    "$DATA/node/$c/model.onnx"
	[ "$status" -eq 0 ] || fail "$c: exit $status:" "$output" "$stderr"
	[[ ${lines[1]} == "output "*" ok" ]] || fail "$c: $output"
}
