#!/usr/bin/env bats
# real-models.bats: the interpreter on real models against ONNX Runtime.
# For PaddleOCR v4 det (1x3x640x640), rec (1x3x48x320), the v2 direction
# classifier (1x3x48x192) and openWakeWord's hello_deepa (1x25x96),
# scripts/make-inputs.py makes deterministic inputs (a document-like
# image for the OCR models, smooth noise for the wake-word features),
# test/ort-run.js stores ONNX Runtime's outputs beside them, and
# onnx-verify must find every output at 80 dB SNR or better.
# Needs: scripts/fetch-models (models and onnxruntime-node), node,
# /usr/bin/python3 with onnx and numpy, onnx-verify.

load helpers

setup() {
	onnxq_setup
	need_models
}

# check MODEL SHAPE [SAMPLES]: inputs, ORT outputs, then onnx-verify.
# SHAPE fixes the input "x" (empty for a model with static shapes).
check() {
	local model=$1 shape=$2 n=${3:-1} args=()

	[ -n "$shape" ] && args=(--shape "x=$shape")
	run --separate-stderr /usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" \
	    -n "$n" "${args[@]}" "$model" data
	[ "$status" -eq 0 ] || fail "make-inputs: $stderr"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" "$model" data
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
	# The SNR is what counts; the tolerances only catch gross errors.
	run --separate-stderr onnx-verify --rtol 1e-2 --atol 1e-3 --min-snr 80 \
	    -d data "$model"
	for l in "${lines[@]:1}"; do
		printf '# %s: %s\n' "${model##*/}" "$l"
	done >&3
	[ "$status" -eq 0 ] || fail "onnx-verify: exit $status:" "$output" "$stderr"
	[ "${#lines[@]}" -ge 2 ] || fail "no report: $output"
}

@test "real models: PaddleOCR v4 det matches ONNX Runtime at >= 80 dB" {
	check "$OCR_DET" 1x3x640x640
}

@test "real models: PaddleOCR v4 rec matches ONNX Runtime at >= 80 dB" {
	check "$OCR_REC" 1x3x48x320
}

@test "real models: PaddleOCR cls matches ONNX Runtime at >= 80 dB" {
	check "$OCR_CLS" 1x3x48x192 2
}

@test "real models: openWakeWord hello_deepa matches ONNX Runtime at >= 80 dB" {
	check "$OWW_HELLO" "" 3
}

# The check above must be able to fail: a perturbed reference drops the
# SNR under 80 dB and onnx-verify says so.
@test "real models: a 1e-3 relative disturbance of the reference is caught" {
	check "$OCR_CLS" 1x3x48x192
	/usr/bin/python3 -c '
import numpy as np
p = "data/s0/softmax_0.tmp_0.npy"; a = np.load(p)
a *= np.float32(1 + 1e-3); np.save(p, a)'
	run --separate-stderr onnx-verify --rtol 1e-2 --atol 1e-3 --min-snr 80 -d data "$OCR_CLS"
	[ "$status" -eq 1 ]
	[[ ${lines[1]} == *" low-snr" ]] || fail "got: $output"
}
