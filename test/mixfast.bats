#!/usr/bin/env bats
# mixfast.bats: onnx-mixprec's search re-runs only the nodes a candidate
# changes (lib/mixcache.c, interp_run_skip): its decisions and figures are
# exactly those of whole runs (ONNXQ_MIXPREC_WHOLE_RUNS=1). Compared: the
# stream written and every verbose note (each candidate's gain, each
# step's SNR), on chain.onnx (16 bits, and float allowed; a target out
# of reach, measured alone too), on chain.onnx ending in a Softmax (whose
# input is the probe: probe runs skip the nodes past it, skip_past_probes
# in lib/mixeval.c; and with two Softmax outputs of the same logits, one
# probe for both) and on PaddleOCR's direction classifier (as
# test/golden-run searches it); hist records left in a regular input
# file are written back as read; an opset-9 model raised ahead once makes
# the models full builds make (ONNXQ_MIXPREC_CHECK_MODELS).
# Needs: the built programs, /usr/bin/python3 with numpy, the real models
# for the second test.

load helpers

PY=/usr/bin/python3
MD=$TESTDATA/mixprec
CHAIN=$MD/chain.onnx

setup() {
	onnxq_setup
}

# both NAME STREAM ARGS...: onnx-mixprec -v ARGS <STREAM twice,
# incremental and whole,
# into NAME.{inc,whole}.{qp,err} (the search's time taken out); the
# outputs must be the same.
both() {
	local name=$1 qp=$2
	shift 2
	onnx-mixprec -v -o "$name.inc.qp" "$@" <"$qp" 2>"$name.inc.err" ||
	    fail "incremental: $(cat "$name.inc.err")"
	ONNXQ_MIXPREC_WHOLE_RUNS=1 onnx-mixprec -v -o "$name.whole.qp" "$@" \
	    <"$qp" 2>"$name.whole.err" || fail "whole: $(cat "$name.whole.err")"
	for k in inc whole; do
		sed -i 's/ runs, [0-9.]* s$/ runs/' "$name.$k.err"
		grep -v '^#prog' "$name.$k.qp" >"$name.$k.cmp"
	done
	diff -u "$name.whole.err" "$name.inc.err" >d.txt ||
	    fail "notes differ:" "$(cat d.txt)"
	diff -u "$name.whole.cmp" "$name.inc.cmp" >d.txt ||
	    fail "streams differ:" "$(cat d.txt)"
	grep -q 'candidate .*: removes ' "$name.inc.err" ||
	    fail "no candidate measured" "$(cat "$name.inc.err")"
}

@test "mixfast: chain.onnx: incremental runs decide as whole runs" {
	onnx-calib --quiet -d "$MD/chain-calib" "$CHAIN" >chain.stats
	onnx-qparams --all-ops -m minmax chain.stats >chain.qp
	both chain chain.qp --target-snr 37 -d "$MD/chain-eval" "$CHAIN"
	both chainf chain.qp --allow-float --target-snr 37 \
	    -d "$MD/chain-eval" "$CHAIN"
}

# softmax_chain OUT [TWO]: chain.onnx with y renamed logits, and a
# Softmax named softmax writing y from it; with TWO, a second one
# (softmax2) writing the graph output y2 from the same logits.
softmax_chain() {
	"$PY" - "$CHAIN" "$1" ${2:+two} <<-'EOF'
	import sys
	import onnx
	from onnx import helper
	m = onnx.load(sys.argv[1])
	g = m.graph
	g.node[-1].output[0] = "logits"
	g.node.append(helper.make_node("Softmax", ["logits"], ["y"],
	                               name="softmax", axis=-1))
	if len(sys.argv) > 3:
	    g.node.append(helper.make_node("Softmax", ["logits"], ["y2"],
	                                   name="softmax2", axis=-1))
	    y2 = onnx.ValueInfoProto()
	    y2.CopyFrom(g.output[0])
	    y2.name = "y2"
	    g.output.append(y2)
	onnx.checker.check_model(m)
	onnx.save(m, sys.argv[2])
	EOF
}

@test "mixfast: chain.onnx with a Softmax: probe runs decide as whole runs" {
	softmax_chain sm.onnx || fail "no fixture"
	onnx-calib --quiet -d "$MD/chain-calib" sm.onnx >sm.stats
	onnx-qparams --all-ops -m minmax sm.stats >sm.qp
	grep -q '^qparam	y	' sm.qp || fail "the Softmax not quantized"
	# (at the output 29.5 dB as quantized, 34.3 reachable; at the
	# logits 34.4 and 40.9)
	both sm sm.qp --target-snr 33 -d "$MD/chain-eval" sm.onnx
	both smf sm.qp --allow-float --target-snr 33 -d "$MD/chain-eval" \
	    sm.onnx
	both sml sm.qp --at-logits --target-snr 38 -d "$MD/chain-eval" \
	    sm.onnx
	# the probe is the Softmax's input
	grep -q 'at the probes' sm.inc.err || fail "$(cat sm.inc.err)"
}

@test "mixfast: two Softmax outputs of the same logits: one probe, both" {
	# the fp32 run gives the shared probe once (lib/mixeval.c
	# take_probes): each output's reference needs it
	softmax_chain sm2.onnx two || fail "no fixture"
	onnx-calib --quiet -d "$MD/chain-calib" sm2.onnx >sm2.stats
	onnx-qparams --all-ops -m minmax sm2.stats >sm2.qp
	grep -q '^qparam	y2	' sm2.qp || fail "the Softmax not quantized"
	both sm2l sm2.qp --at-logits --target-snr 38 -d "$MD/chain-eval" \
	    sm2.onnx
	grep -q 'at the probes' sm2l.inc.err || fail "$(cat sm2l.inc.err)"
	both sm2 sm2.qp --target-snr 33 -d "$MD/chain-eval" sm2.onnx
}

# cls_stream N: N inputs of PaddleOCR cls in data/, their stream in cls.qp.
cls_stream() {
	need_models
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n "$1" \
	    --shape x=1x3x48x192 "$OCR_CLS" data >/dev/null
	onnx-calib -q -d data "$OCR_CLS" >cls.stats
	onnx-qparams --all-ops cls.stats >cls.qp
}

@test "mixfast: PaddleOCR cls: incremental runs decide as whole runs" {
	cls_stream 4
	both cls cls.qp --target-snr 25 --allow-float -d data "$OCR_CLS"
	grep -q '^qparam' cls.inc.qp
}

@test "mixfast: chain.onnx: candidates measured alone decide as whole runs" {
	onnx-calib --quiet -d "$MD/chain-calib" "$CHAIN" >chain.stats
	onnx-qparams --all-ops -m minmax chain.stats >chain.qp
	# 45 dB is out of reach: measured from the top, then alone (against
	# the quantized model's reference run), the search fails the same
	for k in inc whole; do
		[ $k = inc ] || export ONNXQ_MIXPREC_WHOLE_RUNS=1
		run onnx-mixprec -v -o out.qp --target-snr 45 \
		    -d "$MD/chain-eval" "$CHAIN" <chain.qp
		[ "$status" -eq 1 ] || fail "$k: status $status" "$output"
		echo "$output" >"$k.err"
	done
	unset ONNXQ_MIXPREC_WHOLE_RUNS
	grep -q 'measuring each candidate alone' inc.err ||
	    fail "not measured alone" "$(cat inc.err)"
	[ "$(grep -c 'candidate .*: removes ' inc.err)" -ge 8 ] ||
	    fail "the candidates not measured twice" "$(cat inc.err)"
	diff -u whole.err inc.err >d.txt || fail "notes differ:" "$(cat d.txt)"
}

@test "mixfast: ONNXQ_MIXPREC_PROFILE accounts for all the CPU" {
	onnx-calib --quiet -d "$MD/chain-calib" "$CHAIN" >chain.stats
	onnx-qparams --all-ops -m minmax chain.stats >chain.qp
	ONNXQ_MIXPREC_PROFILE=1 onnx-mixprec -q -o out.qp --target-snr 37 \
	    -d "$MD/chain-eval" "$CHAIN" <chain.qp 2>err.txt ||
	    fail "$(cat err.txt)"
	line=$(sed -n 's/^onnx-mixprec: profile: //p' err.txt)
	[ -n "$line" ] || fail "no profile line" "$(cat err.txt)"
	# the parts (fp32 runs, model runs, model making, reading, choosing
	# parameters, writing, freeing) add up to "in all", to rounding
	echo "$line" | awk '{
		n = split($0, w, " "); sum = 0; parts = 0
		for (i = 2; i <= n; i++)
			if (w[i] ~ /^s[,;]?$/ && w[i - 1] ~ /^-?[0-9.]+$/ &&
			    w[i - 2] != "all") {
				sum += w[i - 1]; parts++
				if (w[i - 1] < -0.01) exit 1
			}
		if (parts != 7 || !match($0, /in all [0-9.]+ s/)) exit 1
		all = substr($0, RSTART + 7) + 0
		exit (sum - all > 0.06 || all - sum > 0.06)
	}' || fail "parts do not add up" "$line"
}

@test "mixfast: hist records left in the input file are written as read" {
	onnx-calib --quiet -d "$MD/chain-calib" "$CHAIN" >chain.stats
	onnx-qparams --all-ops -m minmax chain.stats >chain.qp
	grep -q '^hist' chain.qp || fail "no hist records"
	# from a file, the hist lines are read again where they are; from
	# a pipe, kept: the same stream, hist lines byte for byte
	onnx-mixprec -q -o file.qp --target-snr 37 -d "$MD/chain-eval" \
	    "$CHAIN" <chain.qp 2>err.txt || fail "$(cat err.txt)"
	cat chain.qp | onnx-mixprec -q -o pipe.qp --target-snr 37 \
	    -d "$MD/chain-eval" "$CHAIN" 2>err.txt || fail "$(cat err.txt)"
	grep -v '^#prog' file.qp >file.cmp
	grep -v '^#prog' pipe.qp >pipe.cmp
	cmp file.cmp pipe.cmp || fail "file and pipe differ"
	grep '^hist' chain.qp >in.hist
	grep '^hist' file.qp >out.hist
	cmp in.hist out.hist || fail "hist lines changed"
}

@test "mixfast: PaddleOCR cls (opset 9): models of the model raised ahead are those of full builds" {
	cls_stream 2
	# each model made of the model raised to opset 10 once, or of a
	# skeleton (mixskel.h), packs to the bytes of the one qdq_apply()
	# makes of the opset-9 model
	ONNXQ_MIXPREC_CHECK_MODELS=1 ONNXQ_MIXPREC_PROFILE=1 onnx-mixprec \
	    -q -o chk.qp --target-snr 25 -d data "$OCR_CLS" <cls.qp \
	    2>chk.err || fail "$(cat chk.err)"
	n=$(sed -n 's/.*evaluations (\([0-9]*\) of the model raised.*/\1/p' \
	    chk.err)
	[ "${n:-0}" -gt 0 ] || fail "none raised ahead" "$(cat chk.err)"
	n=$(sed -n 's/.*raised ahead, \([0-9]*\) of a skeleton.*/\1/p' \
	    chk.err)
	[ "${n:-0}" -gt 0 ] || fail "none of a skeleton" "$(cat chk.err)"
	onnx-mixprec -q -o plain.qp --target-snr 25 -d data "$OCR_CLS" \
	    <cls.qp 2>plain.err || fail "$(cat plain.err)"
	grep -v '^#prog' chk.qp >chk.cmp
	grep -v '^#prog' plain.qp >plain.cmp
	cmp chk.cmp plain.cmp || fail "the streams differ"
}
