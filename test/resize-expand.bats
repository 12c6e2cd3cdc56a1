#!/usr/bin/env bats
# resize-expand.bats: onnx-qdq-insert --resize-expand on the generated
# resize.onnx (Conv -> nearest Resize by 2 and 3 -> Conv, any input size;
# test/data/qdqscale/make-fixtures.py) quantized with --all-ops: the model
# passes onnx.checker, loads and runs in ONNX Runtime at its default
# optimization level, on inputs of two sizes, with the same outputs as the
# model without the rewrite (data movement only: the same integers), and
# ours agrees with ORT. (On PaddleOCR v4 det: scripts/bench-ort.)
# Needs: onnxruntime-node, /usr/bin/python3 with onnx.

load helpers

M=$ONNXQ_FIXTURES/qdqscale/resize.onnx

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 \
	    --shape x=1x2x5x7 "$M" data >/dev/null
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 1 \
	    --shape x=1x2x8x3 "$M" other >/dev/null
	onnx-calib -q -d data "$M" >r.stats
	onnx-qparams --all-ops r.stats >r.qp
	onnx-qdq-insert -o plain.onnx "$M" r.qp
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "resize-expand: rewrites the nearest Resize, ORT runs it unchanged" {
	run --separate-stderr onnx-qdq-insert -v --resize-expand -o e.onnx \
	    "$M" r.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	[[ $stderr == *": 1 Resize as Expand"* ]] || fail "$stderr"
	run op_count e.onnx Resize
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	[ "$output" -eq 1 ] || fail "$output Resize left (want the half_pixel)"
	[ "$(op_count e.onnx Expand)" -eq 1 ]
	for d in data other; do
		rm -rf "p.$d" "e.$d"
		run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
		    --out "p.$d" plain.onnx "$d"
		[ "$status" -eq 0 ] || fail "ONNX Runtime, plain: $stderr"
		run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
		    --out "e.$d" e.onnx "$d"
		[ "$status" -eq 0 ] || fail "ONNX Runtime, rewritten: $stderr"
		# the same integers, so the same floats
		ls "p.$d"/*/y.npy >/dev/null || fail "no outputs in p.$d"
		for f in "p.$d"/*/*.npy; do
			cmp "$f" "e.$d/${f#p.$d/}" || fail "$f differs"
		done
		# ours on the rewritten model: ORT's outputs
		rm -rf "o.$d"
		cp -r "$d" "o.$d"
		cp -r "e.$d"/. "o.$d"
		run --separate-stderr onnx-verify --min-snr 30 -d "o.$d" e.onnx
		[ "$status" -eq 0 ] || fail "ours against ORT: $output $stderr"
	done
}

@test "resize-expand: off without the option" {
	onnx-qdq-insert -v -o p2.onnx "$M" r.qp 2>err
	! grep -q "as Expand" err || fail "$(cat err)"
	cmp p2.onnx plain.onnx
}
