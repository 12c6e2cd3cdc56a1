#!/usr/bin/env bats
# resize-expand.bats: onnx-qdq-insert --resize-expand on the generated
# resize.onnx (Conv -> nearest Resize by 2 and 3 -> Conv, any input size;
# test/data/qdqscale/make-fixtures.py) quantized with --all-ops: the model
# passes onnx.checker, loads and runs in ONNX Runtime at its default
# optimization level, on inputs of two sizes, with the same outputs as the
# model without the rewrite (data movement only: the same integers), and
# ours agrees with ORT. The same on resize-modes.onnx, whose nearest
# Resize nodes of other coordinate rules and roundings are rewritten
# where output pixel i reads input pixel i / f rounded down (half_pixel
# rounding to nearest, asymmetric rounding half down by 2), and only
# there. (On PaddleOCR v4 det: scripts/bench-ort.)
# Needs: onnxruntime-node, /usr/bin/python3 with onnx.

load helpers

M=$ONNXQ_FIXTURES/qdqscale/resize.onnx
MODES=$ONNXQ_FIXTURES/qdqscale/resize-modes.onnx

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 \
	    --shape x=1x2x5x7 "$M" data >/dev/null
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 1 \
	    --shape x=1x2x8x3 "$M" other >/dev/null
	onnx-calib -q -d data "$M" >r.stats
	onnx-qparams --all-ops r.stats >r.qp
	onnx-qdq-insert -o plain.onnx "$M" r.qp
	onnx-calib -q -d data "$MODES" >modes.stats
	onnx-qparams --all-ops modes.stats >modes.qp
	onnx-qdq-insert -o modes-plain.onnx "$MODES" modes.qp
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
	same_as_plain plain.onnx e.onnx y
}

# same_as_plain PLAIN REWRITTEN OUT: ORT gives the same bytes for both
# models on data/ and other/ (OUT one of the outputs), and ours agrees
# with ORT on REWRITTEN.
same_as_plain() {
	for d in data other; do
		rm -rf "p.$d" "e.$d"
		run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
		    --out "p.$d" "$1" "$d"
		[ "$status" -eq 0 ] || fail "ONNX Runtime, plain: $stderr"
		run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
		    --out "e.$d" "$2" "$d"
		[ "$status" -eq 0 ] || fail "ONNX Runtime, rewritten: $stderr"
		# the same integers, so the same floats
		ls "p.$d"/*/"$3.npy" >/dev/null || fail "no outputs in p.$d"
		for f in "p.$d"/*/*.npy; do
			cmp "$f" "e.$d/${f#p.$d/}" || fail "$f differs"
		done
		# ours on the rewritten model: ORT's outputs
		rm -rf "o.$d"
		cp -r "$d" "o.$d"
		cp -r "e.$d"/. "o.$d"
		run --separate-stderr onnx-verify --min-snr 30 -d "o.$d" "$2"
		[ "$status" -eq 0 ] || fail "ours against ORT: $output $stderr"
	done
}

@test "resize-expand: other rules where pixels repeat whole, only there" {
	run --separate-stderr onnx-qdq-insert -v --resize-expand \
	    -o modes.onnx "$MODES" modes.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	[[ $stderr == *": 4 Resize as Expand"* ]] || fail "$stderr"
	# left: asymmetric rounding by 3, half_pixel floor and ceil,
	# asymmetric ceil
	run /usr/bin/python3 -c 'import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
print(" ".join(sorted(n.name for n in m.graph.node if n.op_type == "Resize")))
' modes.onnx
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	[ "$output" = "as_ceil as_rpf3 hp_ceil hp_floor" ] || fail "$output"
	same_as_plain modes-plain.onnx modes.onnx y_hp_rpf
}

@test "resize-expand: off without the option" {
	onnx-qdq-insert -v -o p2.onnx "$M" r.qp 2>err
	! grep -q "as Expand" err || fail "$(cat err)"
	cmp p2.onnx plain.onnx
}
