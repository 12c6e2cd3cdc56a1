#!/usr/bin/env bats
# overridable.bats: onnx-qdq-insert's --fold-scales, --fold-biases and
# --resize-expand leave alone what reads an initializer also listed as a
# graph input (a default the caller may override, not a constant), and
# keep such an initializer even when nothing reads it any more. On the
# generated scale-inputs.onnx, bias-inputs.onnx and resize-inputs.onnx
# (test/data/qdqscale/make-fixtures.py) quantized with --all-ops: only
# the folds and rewrites without such inputs happen, the models pass
# onnx.checker and run in ONNX Runtime at its default optimization level
# with no more inputs than the plain ones (a default dropped would make
# its input required), and the Resize rewrite gives the plain model's
# outputs. Needs: onnxruntime-node, /usr/bin/python3 with onnx.

load helpers

F=$ONNXQ_FIXTURES/qdqscale

setup() {
	onnxq_setup
}

# quantize NAME SHAPE: $F/NAME.onnx calibrated on two inputs of SHAPE
# (data/), its --all-ops stream (NAME.qp) and plain model (plain.onnx).
quantize() {
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 \
	    --shape "x=$2" "$F/$1.onnx" data >/dev/null
	onnx-calib -q -d data "$F/$1.onnx" >"$1.stats"
	onnx-qparams --all-ops "$1.stats" >"$1.qp"
	onnx-qdq-insert -o plain.onnx "$F/$1.onnx" "$1.qp"
}

# ort_runs MODEL OUT: ONNX Runtime runs MODEL on data/ into OUT/.
ort_runs() {
	rm -rf "$2"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    --out "$2" "$1" data
	[ "$status" -eq 0 ] || fail "ONNX Runtime on $1: $stderr"
}

@test "overridable: --fold-scales folds none of them" {
	quantize scale-inputs 1x4
	run --separate-stderr onnx-qdq-insert -v --fold-scales -o f.onnx \
	    "$F/scale-inputs.onnx" scale-inputs.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	# x / 6 folds; x * K and x / 4 read such inputs
	[[ $stderr == *": 1 Div/Mul folded"* ]] || fail "$stderr"
	run op_count f.onnx Mul
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	[ "$output" -eq 2 ] || fail "$output Mul"
	[ "$(op_count f.onnx Div)" -eq 1 ]
	ort_runs f.onnx f.out
}

@test "overridable: --fold-biases folds no Add of one" {
	quantize bias-inputs 1x2x3x3
	run --separate-stderr onnx-qdq-insert -v --fold-scales --fold-biases \
	    -o b.onnx "$F/bias-inputs.onnx" bias-inputs.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	[[ $stderr == *": 0 Add folded into biases"* ]] || fail "$stderr"
	run op_count b.onnx Add
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	[ "$output" -eq 2 ] || fail "$output Add"
	ort_runs b.onnx b.out
}

@test "overridable: --resize-expand keeps such scales, and such a roi" {
	quantize resize-inputs 1x2x5x7
	run --separate-stderr onnx-qdq-insert -v --resize-expand -o e.onnx \
	    "$F/resize-inputs.onnx" resize-inputs.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	[[ $stderr == *": 1 Resize as Expand"* ]] || fail "$stderr"
	run op_count e.onnx Resize
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	# the S23 one and the half_pixel one
	[ "$output" -eq 2 ] || fail "$output Resize"
	ort_runs plain.onnx p.out
	ort_runs e.onnx e.out
	ls p.out/*/y4.npy >/dev/null || fail "no outputs in p.out"
	for f in p.out/*/*.npy; do
		cmp "$f" "e.out/${f#p.out/}" || fail "$f differs"
	done
}
