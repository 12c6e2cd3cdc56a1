#!/usr/bin/env bats
# fold-scales.bats: onnx-qdq-insert --fold-scales on PaddleOCR v4 rec
# quantized with --all-ops (its hard-swish divisions by 6 and its
# learnable scales): the model passes onnx.checker, loads and runs in ONNX
# Runtime at its default optimization level, in QDQ and QOperator form,
# our interpreter agrees with ORT on it, and it stays as close to fp32 as
# the model without the folds (one rounding less, not more). The same for
# --fold-biases after them (its learnable affines after a Conv: the Mul
# folded into the scales, then the Add into the Conv's bias).
# Needs: the model cache, onnxruntime-node, /usr/bin/python3 with onnx.

load helpers

# One calibration, --all-ops stream and model for all tests (the slow
# part).
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	rec_calibrated 1
	onnx-qparams --all-ops rec.stats >all.qp
	onnx-qdq-insert -o plain.onnx rec.onnx all.qp
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

# snr A B: onnx-verify's SNR of model B against model A on data/.
snr() {
	onnx-verify --format tsv -d data "$1" "$2" | awk -F '\t' 'NR == 1 {
	    for (i = 1; i <= NF; i++) if ($i == "snr_db") c = i; next }
	    { print $c; exit }'
}

# as_ort MODEL: MODEL runs in ORT, and ours agrees with ORT's outputs
# within what ORT's QLinear kernels' own rounding leaves (the all-ops
# model without folds: 18.7 dB on this input; a wrong scale or bias: near
# 0 dB; elements of probabilities within 1, so only the SNR gates).
as_ort() {
	rm -rf "$1.data"
	cp -r data "$1.data"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" "$1" \
	    "$1.data"
	[ "$status" -eq 0 ] || fail "ONNX Runtime: $stderr"
	run --separate-stderr onnx-verify --min-snr 12 --atol 1 -d "$1.data" \
	    "$1"
	[ "$status" -eq 0 ] || fail "ours against ORT: $output $stderr"
}

# no_worse A B: model B (folded) is as close to fp32 as A, within 0.5 dB.
no_worse() {
	a=$(snr rec.onnx "$1")
	b=$(snr rec.onnx "$2")
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(b + 0.5 >= a) }' ||
	    fail "SNR $b dB with the folds, $a dB without"
}

@test "fold-scales: folds rec's constant Div and Mul, runs in ORT as ours" {
	run --separate-stderr onnx-qdq-insert -v --fold-scales -o f.onnx \
	    rec.onnx all.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	n=$(echo "$stderr" | sed -n 's/.*: \([0-9]*\) Div\/Mul folded.*/\1/p')
	[ "${n:-0}" -gt 0 ] || fail "no folds: $stderr"
	run op_count f.onnx Div
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	divs=$output
	[ "$divs" -lt "$(op_count plain.onnx Div)" ] || fail "$divs Div left"
	as_ort f.onnx
}

@test "fold-scales: as close to fp32 as without the folds" {
	onnx-qdq-insert --fold-scales -o f2.onnx rec.onnx all.qp
	no_worse plain.onnx f2.onnx
}

@test "fold-scales: QOperator form loads and runs in ORT" {
	run --separate-stderr onnx-qdq-insert --fold-scales --format qoperator \
	    -o q.onnx rec.onnx all.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	run op_count q.onnx QLinearMul
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    --out ort q.onnx data
	[ "$status" -eq 0 ] || fail "ONNX Runtime: $stderr"
}

# own SNR per fp32 name from onnx-verify --per-tensor of model $1.
own_snr() {
	onnx-verify --per-tensor --format tsv -d data rec.onnx "$1" |
	    awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	    $1 == "tensor" && $c["role"] == "act" {
		print $c["name"], $c["own_snr_db"] }' | sort
}

@test "fold-scales: --per-tensor measures a folded DQ as the Div/Mul output" {
	onnx-qdq-insert --fold-scales -o f.onnx rec.onnx all.qp
	own_snr plain.onnx >plain.own
	own_snr f.onnx >fold.own
	# A DQ reading x's integers with scale s / c stands for x / c: its
	# own error is that of the same grid on x / c in the unfolded model
	# (before the fix it was compared with x itself: -8 dB, not 33).
	join plain.own fold.own >both
	[ "$(wc -l <both)" -gt 100 ] || fail "few common tensors:" "$(cat both)"
	# (Within 3 dB: the folded grid is x's scaled, not x / c's own.)
	awk '{ d = $2 - $3; if (d < 0) d = -d
	    if (d > 3) { print; bad = 1 } } END { exit bad }' both ||
	    fail "own SNR differs from the unfolded model's"
}

@test "fold-biases: folds rec's affine Adds, runs in ORT as ours" {
	run --separate-stderr onnx-qdq-insert -v --fold-scales --fold-biases \
	    -o b.onnx rec.onnx all.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	n=$(echo "$stderr" | sed -n 's/.*: \([0-9]*\) Add folded.*/\1/p')
	[ "${n:-0}" -gt 0 ] || fail "no folds: $stderr"
	run op_count b.onnx Add
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	onnx-qdq-insert --fold-scales -o scales.onnx rec.onnx all.qp
	[ "$output" -eq $(($(op_count scales.onnx Add) - n)) ] ||
	    fail "$output Add left after $n folds"
	as_ort b.onnx
}

@test "fold-biases: as close to fp32 as without the folds" {
	onnx-qdq-insert --fold-scales --fold-biases -o b2.onnx rec.onnx all.qp
	onnx-qdq-insert --fold-scales -o scales.onnx rec.onnx all.qp
	no_worse scales.onnx b2.onnx
}

@test "fold-biases: QOperator form loads and runs in ORT" {
	run --separate-stderr onnx-qdq-insert --fold-scales --fold-biases \
	    --format qoperator -o q.onnx rec.onnx all.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	run op_count q.onnx QLinearConv
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	[ "$output" -gt 0 ] || fail "no QLinearConv"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    --out ort q.onnx data
	[ "$status" -eq 0 ] || fail "ONNX Runtime: $stderr"
}

@test "fold-biases: off without the option" {
	onnx-qdq-insert -v --fold-scales -o s.onnx rec.onnx all.qp 2>err
	! grep -q "folded into biases" err || fail "$(cat err)"
	run op_count s.onnx Add
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
	[ "$output" -eq "$(op_count plain.onnx Add)" ] || fail "$output Add"
}
