#!/usr/bin/env bats
# control.bats: control flow and recurrent layers in the interpreter
# against ONNX Runtime, on the small models test/data/control/make-fixtures.py makes
# (make-fixtures.py there says what each holds): an If on the sample rate
# choosing between two LSTM branches that read outer-scope weights (a
# voice-activity detector in miniature), a Loop with a computed condition
# and scan outputs feeding a GRU, and Scans both ways feeding an RNN with
# sequence_lens. test/ort-run.js stores ONNX Runtime's outputs beside the
# inputs and onnx-verify must find every output at 80 dB SNR or better.
# Needs: scripts/fetch-models (onnxruntime-node), node, onnx-verify.

load helpers

DATA=$ONNXQ_FIXTURES/control

# check NAME: ORT outputs for NAME-data, then onnx-verify on NAME.onnx.
check() {
	cp -r "$DATA/$1-data" data
	chmod -R u+w data
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    "$DATA/$1.onnx" data
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
	run --separate-stderr onnx-verify --rtol 1e-3 --atol 1e-5 --min-snr 80 \
	    -d data "$DATA/$1.onnx"
	for l in "${lines[@]:1}"; do
		printf '# %s: %s\n' "$1" "$l"
	done >&3
	[ "$status" -eq 0 ] || fail "onnx-verify: exit $status:" "$output" "$stderr"
	[ "${#lines[@]}" -ge 2 ] || fail "no report: $output"
}

@test "control: If between LSTM branches (vad) matches ONNX Runtime" {
	check vad
}

@test "control: Loop with scan outputs and a GRU matches ONNX Runtime" {
	check loop
}

@test "control: Scan both ways and an RNN matches ONNX Runtime" {
	check scan
}

# The branch taken must matter: the two rates give different outputs,
# so a wrong branch cannot pass the check above.
@test "control: the If takes the branch the sample rate selects" {
	check vad
	run /usr/bin/python3 -c '
import numpy as np
a = np.load("data/sr16000/prob.npy"); b = np.load("data/sr8000/prob.npy")
assert abs(float(a.ravel()[0]) - float(b.ravel()[0])) > 1e-3, (a, b)'
	[ "$status" -eq 0 ] || fail "branches agree: $output"
}

# A kernel error inside a subgraph names the Loop node, the body and the
# inner node.
@test "control: an error in a Loop body names the node path" {
	check loop
	/usr/bin/python3 - "$DATA/loop.onnx" bad.onnx <<-'EOF'
	import sys, onnx
	from onnx import numpy_helper
	import numpy as np
	m = onnx.load(sys.argv[1])
	for t in m.graph.initializer:
	    if t.name == 'Wl':
	        a = np.zeros((5, 5), np.float32)
	        t.CopyFrom(numpy_helper.from_array(a, 'Wl'))
	onnx.save(m, sys.argv[2])
	EOF
	run --separate-stderr onnx-verify -d data bad.onnx
	[ "$status" -ne 0 ]
	want="node loop (Loop): body, iteration 0: node mm (MatMul): "
	[[ $stderr == *"$want"* ]] ||
	    fail "got: $stderr"
}

# What users hit first: onnx-calib stopped at "unsupported operators:
# node ... (If)". It now calibrates the main graph of such a model.
@test "control: onnx-calib calibrates a model with an If" {
	cp -r "$DATA/vad-data" data
	run --separate-stderr onnx-calib -q -d data -o vad.stream "$DATA/vad.onnx"
	[ "$status" -eq 0 ] || fail "onnx-calib: exit $status: $stderr"
	[ -s vad.stream ]
}
