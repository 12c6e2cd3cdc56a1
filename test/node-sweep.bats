#!/usr/bin/env bats
# node-sweep.bats: models nobody tuned for. Every 32nd ONNX backend node
# test (Debian libonnx-testdata: one operator each, opsets 1 to 17) goes
# through the whole pipeline on its own test data, in the writer's forms:
# default QDQ, --all-ops QDQ (with and without --fold-scales), 16-bit
# activations and the QOperator format. Each program either succeeds or
# refuses in one line with status 1 (an operator we do not run, a model
# with nothing to quantize); never a crash or a hang. Every model written
# must load in ONNX Runtime at its default optimization level wherever the
# fp32 model does. The whole sweep (every case) is what found the opset of
# quantized ReduceMin/ReduceMax (ort-load.bats).
# Needs: /usr/share/libonnx-testdata, onnxruntime-node.

load helpers

DATA=/usr/share/libonnx-testdata/data/node

# pipeline CASE MODE: run the pipeline on case directory CASE; on success
# append "NAME FP32 OUT" to pairs. Fails on a crash, a timeout or an error
# that is not a one-line refusal.
pipeline() {
	local t=$1 mode=$2 name qopt=() popt=() w
	name=$(basename "$t").$mode
	w=$T/$name
	case $mode in
	default) ;;
	all) popt=(--all-ops) ;;
	fold) popt=(--all-ops); qopt=(--fold-scales) ;;
	u16) popt=(--all-ops -a uint16) ;;
	qop) popt=(--all-ops); qopt=(--format qoperator) ;;
	esac
	step "$name" calib timeout 60 onnx-calib -d "$t" "$t/model.onnx" \
	    <&- >"$w.s" || return 0
	step "$name" qparams timeout 60 onnx-qparams "${popt[@]}" \
	    <"$w.s" >"$w.qp" || return 0
	step "$name" qdq-insert timeout 60 onnx-qdq-insert "${qopt[@]}" \
	    -o "$w.onnx" "$t/model.onnx" "$w.qp" <&- || return 0
	echo "$name $t/model.onnx $w.onnx" >>pairs
}

# step NAME STAGE CMD...: 0 when CMD succeeds; 1 when it refuses in one
# line with status 1; else the test fails (recorded in bad).
step() {
	local name=$1 stage=$2 rc
	shift 2
	"$@" 2>err
	rc=$?
	[ "$rc" -eq 0 ] && return 0
	if [ "$rc" -ne 1 ] || [ "$(wc -l <err)" -ne 1 ]; then
		echo "$name: $stage: status $rc: $(head -c 300 err)" >>bad
	fi
	return 1
}

@test "node-sweep: every 32nd backend node test through each writer form" {
	[ -d "$DATA" ] || unavailable "libonnx-testdata" "no $DATA"
	local i=0 t mode
	: >pairs
	: >bad
	for t in "$DATA"/*/; do
		i=$((i + 1))
		[ $((i % 32)) -eq 0 ] || continue
		for mode in default all fold u16 qop; do
			pipeline "${t%/}" "$mode"
		done
	done
	[ ! -s bad ] || fail "$(cat bad)"
	[ "$(wc -l <pairs)" -ge 50 ] || fail "only $(wc -l <pairs) models"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-load-many.js" pairs
	[ "$status" -eq 0 ] || fail "ONNX Runtime refused ours:" "$output"
}
