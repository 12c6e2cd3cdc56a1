#!/usr/bin/env bats
# qparams.bats: onnx-qparams and the qparams library end to end.
# - lib/qparams.c against a numpy re-implementation of ORT's
#   compute_scale_zp and int32-bias weight-scale adjustment, bit for bit
#   (test/qparams_ort_check.py over test/tools/qparams-calc);
# - ORT PR #22020's Conv (test/data/qparams/pr22020.stream) quantized by
#   onnx-qparams and run as a QDQ model in numpy
#   (test/qparams_pr_example.py): output[0] 4.992 and SNR 55.66 dB with the
#   weight-scale adjustment, 0.075 and 0.137 dB without;
# - graph decisions on test/data/qparams/graph.stream (Relu, Softmax,
#   Reshape sharing, constants), range methods, recipes
#   (test/data/config/), errors, and the filter conventions;
# - test/data/qparams/params.stream: parameter inputs (Resize scales,
#   Clip bounds, Pad's value) and empty constants get no qparam; which
#   Relu/Clip nodes fold;
# - a Conv -> Relu -> Conv -> Clip -> Conv model (make-fold.py) through
#   onnx-calib | onnx-qparams | onnx-qdq-insert: both fold away, and ORT's
#   outputs equal those of the unfolded model bit for bit.
# Needs: the built programs and tools, /usr/bin/python3 with numpy and
# onnx, onnxruntime-node (helpers.bash: ort_node).

load helpers

QD=$TESTDATA/qparams
CD=$TESTDATA/config

# qp NAME: the qparam record of NAME in $output, fields after the name.
qp() {
	awk -F '\t' -v n="$1" '$1 == "qparam" && $2 == n {
	    s = $3; for (i = 4; i <= NF; i++) s = s " " $i; print s }' <<<"$output"
}

# want_qp NAME WANT: the qparam record of NAME in $output reads WANT.
want_qp() {
	local got
	got=$(qp "$1")
	[ "$got" = "$2" ] || fail "$1: $got"
}

@test "qparams: bit-exact with ORT's compute_scale_zp (numpy) on random ranges" {
	run --separate-stderr /usr/bin/python3 "$ONNXQ_ROOT/test/qparams_ort_check.py" \
	    "$ONNXQ_TOOLS/qparams-calc"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[ "$output" = "qparams vs ORT: 14400 ranges bit-exact, 14400 power-of-two, 300 bias adjustments, 0 mismatches" ] ||
	    fail "$output"
}

@test "qparams: PR 22020 Conv: 4.992 / 55.66 dB with the bias adjustment" {
	run bash -c "onnx-qparams --per-tensor --weight-asymmetric '$QD/pr22020.stream' |
	    /usr/bin/python3 '$ONNXQ_ROOT/test/qparams_pr_example.py'"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "output0=4.9922 snr=55.656 ref0=5" ] || fail "$output"
	# Per-channel symmetric weights (the default) give the same.
	run bash -c "onnx-qparams '$QD/pr22020.stream' |
	    /usr/bin/python3 '$ONNXQ_ROOT/test/qparams_pr_example.py'"
	[ "$output" = "output0=4.9922 snr=55.656 ref0=5" ] || fail "$output"
}

@test "qparams: PR 22020 Conv: 0.075 / 0.14 dB with --no-bias-weight-adjust" {
	run bash -c "onnx-qparams --per-tensor --weight-asymmetric \
	    --no-bias-weight-adjust '$QD/pr22020.stream' |
	    /usr/bin/python3 '$ONNXQ_ROOT/test/qparams_pr_example.py'"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "output0=0.0745 snr=0.137 ref0=5" ] || fail "$output"
}

@test "qparams: PR 22020 Conv: the weight scale is raised, the bias fits" {
	run --separate-stderr onnx-qparams --per-tensor --weight-asymmetric "$QD/pr22020.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	# input 0.05; weight 2e-7/255 = 7.843e-10 raised by
	# (1.0001*2*5/(2^32-2)) / (0.05*7.843e-10) = 59.38 to 4.657e-8;
	# bias scale 0.05 * 4.657e-8.
	want_qp input_0 "role=act type=uint8 scale=0.05 zp=0 method=minmax rmin=0 rmax=12.75"
	want_qp weight "role=weight type=int8 scale=4.6570786e-08 zp=-1 method=minmax rmin=-1e-07 rmax=1e-07 adjusted=1"
	want_qp bias "role=bias type=int32 scale=2.3285394e-09 zp=0 input=input_0 weight=weight"
	run --separate-stderr onnx-qparams --per-tensor --weight-asymmetric \
	    --no-bias-weight-adjust "$QD/pr22020.stream"
	want_qp weight "role=weight type=int8 scale=7.843137e-10 zp=-1 method=minmax rmin=-1e-07 rmax=1e-07"
}

@test "qparams: Gemm biases: per channel with beta, and broadcast" {
	run --separate-stderr onnx-qparams "$QD/gemm.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	# a: 2.55/255 = 0.01. B1: symmetric per channel 2/254, 4/254, 1/254.
	# C1 (2x3, beta 2, channel axis 1): scale_i = 0.01 * w_i * 2; channel
	# 2 holds 500000: the least valid scale 1.0001*2*5e5/(2^32-2) =
	# 2.3285e-4 exceeds 0.01 * 0.003937 * 2 = 7.874e-5, so w_2 is raised
	# by their ratio to 0.011642696 and C1's scale_2 is 2.3285393e-4.
	want_qp B1 "role=weight type=int8 axis=0 scale=0.007874016,0.015748031,0.011642696 zp=0,0,0 method=minmax rmin=-1,-0.5,-0.25 rmax=1,2,0.5 adjusted=1"
	want_qp C1 "role=bias type=int32 axis=1 scale=0.00015748032,0.00031496063,0.00023285393 zp=0,0,0 input=a weight=B1"
	# C2 (2x1) is the same for every output channel: one scale,
	# 0.01 * the largest weight scale 0.015748031.
	want_qp C2 "role=bias type=int32 scale=0.00015748032 zp=0 input=a weight=B2"
}

@test "qparams: the defaults: weight-carrying ops, mse (minmax without histograms)" {
	local names

	run --separate-stderr onnx-qparams "$QD/graph.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	# Only the Conv: its input, output, weight and bias; no fold (the
	# Relu is not quantized).
	names=$(awk -F '\t' '$1 == "qparam" || $1 == "fold" { printf "%s ", $2 }' <<<"$output")
	[ "$names" = "x c W B " ] || fail "$names"
	# c has a histogram: mse; x has none: minmax.
	[[ $(qp c) == *" method=mse rmin=-0.040039062 rmax=100.3" ]] || fail "c: $(qp c)"
	[[ $(qp x) == *" method=minmax rmin=-1 rmax=3" ]] || fail "x: $(qp x)"
	# An explicit method applies to all, and fails without histograms.
	run --separate-stderr onnx-qparams -m minmax "$QD/graph.stream"
	[[ $(qp c) == *" method=minmax rmin=-2 rmax=100.3" ]] || fail "c: $(qp c)"
	run --separate-stderr onnx-qparams -m mse "$QD/graph.stream"
	[ "$status" -eq 1 ] || fail "status $status"
	[ "$stderr" = "onnx-qparams: tensor x: method mse needs its hist records" ] ||
	    fail "$stderr"
	# --all-ops: every op, the Relu folded; a node list also replaces
	# the default op types.
	run --separate-stderr onnx-qparams --all-ops "$QD/graph.stream"
	names=$(awk -F '\t' '$1 == "qparam" || $1 == "fold" { printf "%s ", $2 }' <<<"$output")
	[ "$names" = "x r s q m W B k relu " ] || fail "$names"
	run --separate-stderr onnx-qparams --include-nodes mul "$QD/graph.stream"
	names=$(awk -F '\t' '$1 == "qparam" { printf "%s ", $2 }' <<<"$output")
	[ "$names" = "q m k " ] || fail "$names"
	# A MatMul of two activations (attention) is left alone by default,
	# quantized with a constant weight or with --all-ops.
	{
		printf '#onnxq\t1.0\n'
		printf 'node\tmm\top=MatMul\tin=a,b\tout=y\n'
		for t in a b y; do
			printf 'stat\t%s\tdtype=float\tshape=2x2\tn=4\tnan=0\tinf=0\tmin=-1\tmax=1\tbatches=1\tbmin=-1\tbmax=1\tsum=0\tsumsq=4\n' "$t"
		done
		printf 'end\t4\n'
	} >mm.stream
	run --separate-stderr onnx-qparams mm.stream
	[ "$status" -eq 0 ] || fail "$stderr"
	[ "$(grep -c '^qparam' <<<"$output")" = 0 ] || fail "$output"
	run --separate-stderr onnx-qparams --all-ops mm.stream
	[ "$(grep -c '^qparam' <<<"$output")" = 3 ] || fail "$output"
	sed 's/^stat\tb\t.*/weight\tb\tnode=mm\top=MatMul\tdtype=float\tshape=2x2\tmin=-1\tmax=1/' \
	    mm.stream >mw.stream
	run --separate-stderr onnx-qparams mw.stream
	[ "$status" -eq 0 ] || fail "$stderr"
	[ "$(grep -c '^qparam' <<<"$output")" = 3 ] || fail "$output"
}

@test "qparams: graph decisions: Relu, Softmax, Reshape, a Mul constant" {
	run --separate-stderr onnx-qparams --all-ops -m minmax --keep-activations "$QD/graph.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -z "$stderr" ] || fail "stderr: $stderr"
	# x: [-1,3] uint8: 4/255, zp round(63.75) = 64.
	want_qp x "role=act type=uint8 scale=0.015686275 zp=64 method=minmax rmin=-1 rmax=3"
	# c is read by relu alone: it takes r's range [0,6] (ORT).
	want_qp c "role=act type=uint8 scale=0.023529412 zp=0 method=minmax rmin=0 rmax=6"
	# Softmax output: [0,1] whatever was seen.
	want_qp s "role=act type=uint8 scale=0.003921569 zp=0 method=minmax rmin=0 rmax=1"
	# Reshape keeps its input's grid.
	want_qp q "role=act type=uint8 scale=0.003921569 zp=0 method=shared from=s"
	# Per-channel symmetric int8: 0.5/127, 2/127.
	want_qp W "role=weight type=int8 axis=0 scale=0.003937008,0.015748031 zp=0,0 method=minmax rmin=-0.5,-1 rmax=0.25,2"
	# Bias: x's 4/255 times each weight scale.
	want_qp B "role=bias type=int32 axis=0 scale=6.175699e-05,0.00024702796 zp=0,0 input=x weight=W"
	# Mul's constant is quantized like an activation: uint8, per tensor.
	want_qp k "role=weight type=uint8 scale=0.015686275 zp=64 method=minmax rmin=-1 rmax=3"
	# Every input record passes through, in order, before the qparams.
	diff <(grep -v '^#' "$QD/graph.stream" | grep -v '^end') \
	    <(grep -v '^#' <<<"$output" | grep -v -e '^qparam' -e '^end')
	[ "${lines[${#lines[@]}-1]}" = "$(printf 'end\t24')" ] || fail "last line: ${lines[${#lines[@]}-1]}"
	[ -z "$(grep '^fold' <<<"$output")" ] || fail "folds: $output"
	# By default the Relu folds into the Conv: c is gone, r clamps.
	run --separate-stderr onnx-qparams --all-ops -m minmax "$QD/graph.stream"
	[ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$stderr"
	[ -z "$(qp c)" ] || fail "c: $(qp c)"
	want_qp r "role=act type=uint8 scale=0.023529412 zp=0 method=minmax rmin=0 rmax=6"
	[ "$(grep '^fold' <<<"$output")" = "$(printf 'fold\trelu\tinto=conv')" ] || fail "$output"
	[ "${lines[${#lines[@]}-1]}" = "$(printf 'end\t24')" ] || fail "last line: ${lines[${#lines[@]}-1]}"
	# Symmetric activations: no fold (zero is mid-grid, nothing clamps).
	run --separate-stderr onnx-qparams --all-ops -m minmax --activation-symmetric "$QD/graph.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -z "$(grep '^fold' <<<"$output")" ] || fail "$output"
	[ -n "$(qp c)" ] || fail "no c: $output"
}

@test "qparams: parameter inputs and empty constants stay float, noted under -v" {
	run --separate-stderr onnx-qparams --all-ops -m minmax "$QD/params.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -z "$stderr" ] || fail "stderr without -v: $stderr"
	# Resize's scales (a constant, and an activation), Clip's bounds,
	# Pad's value; the empty roi and the empty 3x0 Mul constant.
	local t
	for t in scales sc zero six one cval roi empty; do
		[ -z "$(qp "$t")" ] || fail "$t: $(qp "$t")"
	done
	# The data around them is quantized; Resize keeps its input's grid.
	want_qp u "role=act type=uint8 scale=0.019607844 zp=0 method=shared from=r2"
	want_qp u2 "role=act type=uint8 scale=0.019607844 zp=0 method=shared from=u"
	[ -n "$(qp p)" ] && [ -n "$(qp W2)" ] || fail "$output"
	run --separate-stderr onnx-qparams --all-ops -m minmax -v "$QD/params.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	grep -qx "onnx-qparams: weight roi: empty: nothing to quantize" <<<"$stderr" || fail "$stderr"
	grep -qx "onnx-qparams: weight empty: empty: nothing to quantize" <<<"$stderr" || fail "$stderr"
	grep -qx "onnx-qparams: scales: a parameter of rsz2 (Resize), not data: left in float" <<<"$stderr" ||
	    fail "$stderr"
	grep -qx "onnx-qparams: sc: a parameter of rsz (Resize), not data: left in float" <<<"$stderr" ||
	    fail "$stderr"
	grep -qx "onnx-qparams: cval: a parameter of pad (Pad), not data: left in float" <<<"$stderr" ||
	    fail "$stderr"
	[ "$(grep -c 'a parameter of clip' <<<"$stderr")" = 3 ] || fail "$stderr"
	# Nodes and op types that are not selected leave their tensors alone
	# anyway; an empty constant is no error even when selected alone.
	run --separate-stderr onnx-qparams --include-nodes rsz2,mul "$QD/params.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -z "$(qp roi)" ] && [ -z "$(qp empty)" ] || fail "$output"
}

@test "qparams: fold records: which Relu and Clip nodes fold" {
	run --separate-stderr onnx-qparams --all-ops -m minmax -v "$QD/params.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	# clip6 (0..6) after conv1: the uint8 grid of r1 [0,5] saturates at
	# 0 and below 6: folds, and c1, gone with it, has no record.
	# clip1 (1..6): r2's grid starts at 0, so 0.5 would pass: no fold.
	# relu after MaxPool (data movement), relu2 whose input add also
	# feeds mul: no fold.
	[ "$(grep '^fold' <<<"$output")" = "$(printf 'fold\tclip6\tinto=conv1')" ] || fail "$output"
	[ -z "$(qp c1)" ] || fail "c1: $(qp c1)"
	[ -n "$(qp r1)" ] && [ -n "$(qp c2)" ] && [ -n "$(qp m)" ] && [ -n "$(qp a)" ] ||
	    fail "$output"
	grep -qx "onnx-qparams: clip6: folded into conv1: r1's quantization clamps" <<<"$stderr" ||
	    fail "$stderr"
	# --keep-activations: none; c1 is quantized.
	run --separate-stderr onnx-qparams --all-ops -m minmax --keep-activations "$QD/params.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -z "$(grep '^fold' <<<"$output")" ] || fail "$output"
	want_qp c1 "role=act type=uint8 scale=0.019607844 zp=0 method=minmax rmin=0 rmax=5"
	# Excluding the Clip, or its producer, keeps it.
	for x in clip6 conv1; do
		run --separate-stderr onnx-qparams --all-ops -m minmax --exclude-nodes "$x" "$QD/params.stream"
		[ "$status" -eq 0 ] || fail "$stderr"
		[ -z "$(grep '^fold' <<<"$output")" ] || fail "$x: $output"
	done
	# A run on its own output writes the fold once.
	onnx-qparams --all-ops -m minmax "$QD/params.stream" >once && onnx-qparams --all-ops -m minmax once >twice ||
	    fail "qparams failed"
	diff <(grep -v '^#prog' once) <(grep -v '^#prog' twice)
}

@test "qparams: folds through onnx-qdq-insert: Relu and Clip gone, same outputs in ORT" {
	/usr/bin/python3 "$QD/make-fold.py" . || fail "make-fold.py"
	onnx-calib --quiet -d calib fold.onnx >stats || fail "onnx-calib"
	run --separate-stderr onnx-qparams --all-ops -m minmax stats
	[ "$status" -eq 0 ] || fail "$stderr"
	printf '%s\n' "$output" >qp
	[ "$(grep '^fold' qp)" = "$(printf 'fold\trelu1\tinto=conv1\nfold\tclip1\tinto=conv2')" ] ||
	    fail "$(grep '^fold' qp)"
	# The Clip's bounds stay float; c1 and c2 are gone.
	[ -z "$(qp lo)$(qp hi)$(qp c1)$(qp c2)" ] || fail "$output"
	run --separate-stderr onnx-qdq-insert -v -o q.onnx fold.onnx qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"4 activations, 3 weights, 3 biases quantized; 0 converted, 2 folded"* ]] ||
	    fail "$stderr"
	run /usr/bin/python3 -c "import onnx, sys
m = onnx.load('q.onnx'); onnx.checker.check_model(m)
print(' '.join(n.op_type for n in m.graph.node if n.op_type not in
    ('QuantizeLinear', 'DequantizeLinear')))"
	[ "$output" = "Conv Conv Conv" ] || fail "$output"
	onnx-qparams --all-ops -m minmax --keep-activations stats >qpk || fail "--keep-activations"
	onnx-qdq-insert -o qk.onnx fold.onnx qpk || fail "qdq-insert qk"
	ort_node "$ONNXQ_ROOT/test/ort-qdq-check.js" --out ref fold.onnx eval >/dev/null 2>&1 ||
	    fail "ORT fp32"
	run ort_node "$ONNXQ_ROOT/test/ort-qdq-check.js" --out qout --ref ref q.onnx eval
	[ "$status" -eq 0 ] || fail "ORT cannot run q.onnx: $output"
	local snr
	snr=$(awk '$1 == "y" { sub(/snr=/, "", $2); print $2 }' <<<"$output")
	awk -v s="$snr" 'BEGIN { exit !(s > 30) }' || fail "SNR $snr: $output"
	ort_node "$ONNXQ_ROOT/test/ort-qdq-check.js" --out qkout qk.onnx eval >/dev/null 2>&1 ||
	    fail "ORT qk.onnx"
	# The clamp of the quantization is the Relu's and the Clip's: the
	# folded model computes exactly what the unfolded one does.
	run /usr/bin/python3 -c "import numpy as np
print(all(np.array_equal(np.load('qout/%s/y.npy' % s), np.load('qkout/%s/y.npy' % s))
    for s in ('s0', 's1')))"
	[ "$output" = True ] || fail "folded and unfolded outputs differ"
}

@test "qparams: a per-tensor method: percentile from the histogram" {
	# c: 990 values in [1, 1+1/128), 10 in [100, 100.5): 99% of |x|
	# ends with the first bin: T = 1.0078125, [-T, T] within [-2, 100.3];
	# uint8 scale 2.015625/255, zp round(127.5) = 128 (half to even).
	# relu is left out, or c would take r's range.
	printf 'tensors:\n  c: {method: percentile, percentile: 99}\n' >p.yaml
	run --separate-stderr onnx-qparams -c p.yaml --exclude-nodes relu "$QD/graph.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	want_qp c "role=act type=uint8 scale=0.007904412 zp=128 method=percentile rmin=-1.0078125 rmax=1.0078125"
	# The others keep the global method.
	want_qp x "role=act type=uint8 scale=0.015686275 zp=64 method=minmax rmin=-1 rmax=3"
}

@test "qparams: a method needing a histogram says which tensor lacks one" {
	run --separate-stderr onnx-qparams -m entropy "$QD/graph.stream"
	[ "$status" -eq 1 ] || fail "status $status"
	[ -z "$output" ] || fail "stdout: $output"
	[ "$stderr" = "onnx-qparams: tensor x: method entropy needs its hist records" ] || fail "$stderr"
}

@test "qparams: a tensor with no finite calibration value is named (#22)" {
	# x: four NaN and no finite value; y: finite.
	{
		printf '#onnxq\t1.0\n'
		printf 'node\ts\top=Sigmoid\tin=x\tout=y\n'
		printf 'stat\tx\tdtype=float\tshape=1x4\tn=0\tnan=4\tinf=0\tmin=inf\tmax=-inf\tbatches=0\tbmin=0\tbmax=0\tsum=0\tsumsq=0\n'
		printf 'stat\ty\tdtype=float\tshape=1x4\tn=4\tnan=0\tinf=0\tmin=0\tmax=3\tbatches=1\tbmin=0\tbmax=3\tsum=6\tsumsq=14\n'
		printf 'end\t3\n'
	} >nan.stream
	run --separate-stderr onnx-qparams --all-ops nan.stream
	[ "$status" -eq 0 ] || fail "$stderr"
	[ "$stderr" = "onnx-qparams: warning: tensor x: no finite calibration value (4 NaN, 0 infinite): its calibrated range is [0, 0]" ] || fail "$stderr"
	want_qp x "role=act type=uint8 scale=1 zp=0 method=minmax rmin=0 rmax=0"
	# a recipe range in its place: nothing to say
	printf 'tensors:\n  x: {rmin: -1, rmax: 1}\n' >r.yaml
	run --separate-stderr onnx-qparams --all-ops -c r.yaml nan.stream
	[ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$stderr"
}

@test "qparams: memory follows the tensors, not the records passed through (#22)" {
	# 10^5 tensors (node, stat, hist) and 10^6 records of another kind
	awk 'BEGIN { printf "#onnxq\t1.0\n"
	    for (i = 0; i < 100000; i++) {
		printf "node\tn%d\top=Neg\tin=%s\tout=t%d\n", i,
		    i ? "t" (i - 1) : "x", i
		printf "stat\tt%d\tdtype=float\tshape=1x4\tn=4\tnan=0\t" \
		    "inf=0\tmin=1\tmax=4\tbatches=1\tbmin=1\tbmax=4\t" \
		    "sum=10\tsumsq=30\n", i
		printf "hist\tt%d\tmbits=7\tzero=0\tbins=1:1,2:1,3:1,4:1\n", i
	    }
	    for (i = 0; i < 1000000; i++)
		printf "widget\tw%d\tk=v\n", i
	    printf "end\t1300000\n" }' >big.stream
	run --separate-stderr /usr/bin/time -f '%M' onnx-qparams -o out.stream big.stream
	[ "$status" -eq 0 ] || fail "$stderr"
	# every record passed through, in order, and the end count right
	[ "$(sed -n '$p' out.stream)" = "end	1300000" ] || fail "$(tail -n 2 out.stream)"
	cmp <(grep -v '^#prog' out.stream) <(grep -v '^end' big.stream; echo "end	1300000")
	# about 1.3 GB before, every record kept in memory
	[ "${ONNXQ_SANITIZE:-}" = 1 ] && return 0
	[ "${stderr##*$'\n'}" -lt 300000 ] || fail "peak RSS ${stderr##*$'\n'} KB"
}

@test "qparams: every method gives a range within the data" {
	for m in minmax entropy percentile distribution mse; do
		printf 'tensors:\n  c: {method: %s}\n' "$m" >m.yaml
		run --separate-stderr onnx-qparams -c m.yaml --exclude-nodes relu \
		    "$QD/graph.stream"
		[ "$status" -eq 0 ] || fail "$m: $stderr"
		awk -F '\t' -v m="$m" '$1 == "qparam" && $2 == "c" {
		    for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		    found = 1
		    if (v["method"] != m || v["rmin"] < -2 || v["rmax"] > 100.3 ||
		        v["rmin"] > v["rmax"]) { print "bad: " $0; exit 1 } }
		    END { exit !found }' <<<"$output" || fail "$m: $output"
	done
}

@test "qparams: a recipe: fixed scales, types, convert, per-channel weights" {
	# (--keep-activations: c would fold away.)
	run --separate-stderr onnx-qparams --all-ops -m minmax --keep-activations -c "$CD/graph-good.yaml" "$QD/graph.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	want_qp x "role=act type=uint8 scale=0.5 zp=2 method=fixed"
	# Activations int8 from the recipe: [0,6]: 6/255, zp -128.
	want_qp c "role=act type=int8 scale=0.023529412 zp=-128 method=minmax rmin=0 rmax=6"
	# int16 symmetric [-1.8,1.8]: 3.6/65534.
	want_qp m "role=act type=int16 scale=5.4933316e-05 zp=0 method=minmax rmin=-0.5 rmax=1.8"
	want_qp W "role=weight type=int8 axis=0 scale=0.01,0.02 zp=0,0 method=fixed"
	# The bias follows the fixed scales (0.5 * 0.01, 0.5 * 0.02).
	want_qp B "role=bias type=int32 axis=0 scale=0.005,0.01 zp=0,0 input=x weight=W"
	# r: uint16 for sm, int8 for the rest: [0,6] over 0..65535.
	grep -qx "$(printf 'convert\tr\ttype=uint16\tscale=9.155413e-05\tzp=0\tmethod=minmax\trmin=0\trmax=6\trecv=sm')" <<<"$output" ||
	    fail "no convert record: $output"
}

@test "qparams: the command line overrides the recipe" {
	run --separate-stderr onnx-qparams --all-ops -m minmax --keep-activations -c "$CD/graph-good.yaml" -a uint8 \
	    "$QD/graph.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	want_qp c "role=act type=uint8 scale=0.023529412 zp=0 method=minmax rmin=0 rmax=6"
	# The tensor's own quant_type still wins over both.
	want_qp m "role=act type=int16 scale=5.4933316e-05 zp=0 method=minmax rmin=-0.5 rmax=1.8"
}

@test "qparams: a bad recipe: every error, FILE:LINE:COL, exit 1" {
	run --separate-stderr onnx-qparams -c "$CD/bad-many.yaml" "$QD/graph.stream"
	[ "$status" -eq 1 ] || fail "status $status"
	[ -z "$output" ] || fail "stdout: $output"
	[ "${#stderr_lines[@]}" -eq 22 ] || fail "${#stderr_lines[@]} lines: $stderr"
	[ "${stderr_lines[0]}" = "onnx-qparams: $CD/bad-many.yaml:2:9: activations: type: unknown type 'uint7' (uint8, int8, uint16, int16, uint4, int4)" ] ||
	    fail "${stderr_lines[0]}"
	[ "${stderr_lines[21]}" = "onnx-qparams: $CD/bad-many.yaml:49:6: tensor m: expected a mapping of overrides (or ORT's list of them), not a value" ] ||
	    fail "${stderr_lines[21]}"
	grep -q "bad-many.yaml:16:5: tensor b: zero_point: 200 does not fit int8 (-128..127)" <<<"$stderr" ||
	    fail "$stderr"
}

@test "qparams: a recipe nested past 64 levels: one line, at once" {
	# 2 MB of '[' would keep libyaml's document loader busy for an hour.
	head -c 2000000 /dev/zero | tr '\0' '[' >deep.yaml
	SECONDS=0
	run --separate-stderr timeout 120 onnx-qparams -c deep.yaml "$QD/graph.stream"
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	[ -z "$output" ] || fail "stdout: $output"
	[ "$stderr" = "onnx-qparams: deep.yaml:1:65: nesting deeper than 64 levels" ] ||
	    fail "$stderr"
	[ "$SECONDS" -lt 10 ] || fail "$SECONDS s"
	# The same in mappings deep in a tensor's convert.
	{ printf 'tensors:\n  r:\n    convert:\n      recv_nodes: '
	  printf '{a: %.0s' $(seq 30000); } >deep-map.yaml
	SECONDS=0
	run --separate-stderr timeout 120 onnx-qparams -c deep-map.yaml "$QD/graph.stream"
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	[ "$stderr" = "onnx-qparams: deep-map.yaml:4:259: nesting deeper than 64 levels" ] ||
	    fail "$stderr"
	[ "$SECONDS" -lt 10 ] || fail "$SECONDS s"
}

@test "qparams: a recipe that does not fit the stream: every error" {
	run --separate-stderr onnx-qparams -c "$CD/graph-bad.yaml" "$QD/graph.stream"
	[ "$status" -eq 1 ] || fail "status $status"
	[ -z "$output" ] || fail "stdout: $output"
	[ "$stderr" = "onnx-qparams: $CD/graph-bad.yaml:3:3: tensor nosuch: not in the stream
onnx-qparams: $CD/graph-bad.yaml:4:7: tensor c: per-channel values need a weight; this is an activation
onnx-qparams: $CD/graph-bad.yaml:5:7: tensor W: 3 channel values for 2 channels along axis 0
onnx-qparams: $CD/graph-bad.yaml:6:7: tensor k: method: weights are quantized over their exact min and max
onnx-qparams: $CD/graph-bad.yaml:8:48: tensor r: convert: recv_nodes: node mul does not read r
onnx-qparams: $CD/graph-bad.yaml:10:19: nodes: include: node ghost is not in the stream" ] ||
	    fail "$stderr"
}

@test "qparams: running on its own output replaces its records" {
	onnx-qparams --exclude-nodes relu,conv "$QD/graph.stream" >once 2>err ||
	    fail "$(cat err)"
	onnx-qparams --exclude-nodes relu,conv once >twice 2>err ||
	    fail "$(cat err)"
	diff <(grep -v '^#prog' once) <(grep -v '^#prog' twice)
	[ "$(grep -c '^#prog' twice)" -eq 2 ] || fail "#prog lines: $(grep '^#prog' twice)"
}

@test "qparams: -o writes the file; a failure leaves none" {
	run --separate-stderr onnx-qparams -o out.stream "$QD/graph.stream"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -z "$output" ] || fail "stdout: $output"
	grep -q '^qparam	x	' out.stream || fail "$(cat out.stream)"
	head -n 5 "$QD/graph.stream" >cut.stream
	run --separate-stderr onnx-qparams -o out2.stream cut.stream
	[ "$status" -eq 1 ] || fail "status $status"
	[ ! -e out2.stream ] || fail "out2.stream left behind"
	[[ $stderr == "onnx-qparams: cut.stream:"* ]] || fail "$stderr"
}

@test "qparams: selections need node records" {
	grep -v '^node' "$QD/pr22020.stream" | sed 's/^end\t5/end\t4/' >nonodes.stream
	run --separate-stderr onnx-qparams --exclude-ops Conv nonodes.stream
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[ "$stderr" = "onnx-qparams: nonodes.stream: node and op-type selections need node records" ] ||
	    fail "$stderr"
	# Without selections every tensor is quantized.
	run --separate-stderr onnx-qparams nonodes.stream
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -n "$(qp bias)" ] || fail "no bias qparam: $output"
}

@test "qparams: usage errors exit 2" {
	run --separate-stderr onnx-qparams -a float "$QD/graph.stream"
	[ "$status" -eq 2 ] || fail "status $status"
	[[ ${stderr_lines[0]} == "onnx-qparams: unknown type 'float'" ]] || fail "$stderr"
	run --separate-stderr onnx-qparams --percentile 0 "$QD/graph.stream"
	[ "$status" -eq 2 ] || fail "status $status"
	run --separate-stderr onnx-qparams a b
	[ "$status" -eq 2 ] || fail "status $status"
}

@test "qparams: a one-sided logit at a model output warns; --float-outputs leaves it float" {
	# openWakeWord's hello_deepa (Gemm -> Sigmoid) calibrated on features
	# shifted by +1, where its logit is always negative (#17), evaluated
	# on unshifted ones, whose logits have both signs.
	need_models
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 8 --seed 1 "$OWW_HELLO" raw >/dev/null &&
	    /usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 8 --seed 2 "$OWW_HELLO" eval >/dev/null ||
	    fail "make-inputs"
	/usr/bin/python3 -c '
import glob, os, numpy as np
for f in glob.glob("raw/*/*.npy"):
    d = "calib/" + os.path.basename(os.path.dirname(f))
    os.makedirs(d, exist_ok=True)
    np.save(d + "/" + os.path.basename(f), (np.load(f) * 0.5 + 1).astype(np.float32))'
	onnx-calib -q -d calib -o s "$OWW_HELLO" || fail "onnx-calib"
	logit=/last_layer/Gemm_output_0
	run --separate-stderr onnx-qparams -o q0 s
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr =~ ^onnx-qparams:\ warning:\ tensor\ $logit:\ reaches\ a\ model\ output,\ quantized\ over\ \[-[0-9.]+,\ 0\]\ where\ calibration\ saw\ no\ positive\ value:\ positive\ ones\ will\ read\ 0\;\ calibrate\ with\ samples\ of\ both\ signs,\ or\ leave\ it\ in\ float\ \(--float-outputs\)$ ]] ||
	    fail "$stderr"
	# The record gives the range quantized over: up to 0, not the max.
	grep -q "^qparam	$logit	.*	zp=255	.*	rmax=0$" q0 || fail "$(grep "$logit" q0)"
	run --separate-stderr onnx-qparams --float-outputs -o q1 s
	[ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$stderr"
	! grep -q "^qparam	$logit	" q1 || fail "logit quantized"
	[ "$(grep -c '^qparam' q1)" -eq "$(($(grep -c '^qparam' q0) - 1))" ] ||
	    fail "not just the logit left in float"
	onnx-qdq-insert -o m0.onnx "$OWW_HELLO" q0 && onnx-qdq-insert -o m1.onnx "$OWW_HELLO" q1 ||
	    fail "onnx-qdq-insert"
	snr() {
		onnx-verify -q --format tsv -d eval "$OWW_HELLO" "$1" >/dev/null
		onnx-verify --format tsv -d eval "$OWW_HELLO" "$1" 2>/dev/null |
		    awk -F'\t' '$1 == "output" { print $4 }'
	}
	a=$(snr m0.onnx) b=$(snr m1.onnx)
	printf '# one-sided logit: %s dB quantized, %s dB in float\n' "$a" "$b" >&3
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(b >= a + 2) }' ||
	    fail "float outputs: $b dB, quantized $a dB"
	# ONNX Runtime loads and runs the model with the float logit.
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" --out ort m1.onnx eval
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
}

# macs_oracle STREAM: each node of STREAM and its multiply-accumulates
# (tab-separated, in the stream's order), by the rule onnx-qparams(1)
# states, computed apart from the shapes of the stream's records.
macs_oracle() {
	awk -F'\t' '
	function prod(s, from,   a, n, i, p) {
		n = split(s, a, "x")
		p = 1
		for (i = from; i <= n; i++)
			p *= a[i]
		return p
	}
	function field(k,   i) {
		for (i = 3; i <= NF; i++)
			if (index($i, k "=") == 1)
				return substr($i, length(k) + 2)
		return ""
	}
	$1 == "node" {
		nn++; name[nn] = $2; op[nn] = field("op")
		in_[nn] = field("in"); out[nn] = field("out")
	}
	$1 == "stat" || $1 == "weight" { shape[$2] = field("shape") }
	END {
		for (i = 1; i <= nn; i++) {
			split(in_[i], a, ","); split(out[i], o, ",")
			x = shape[a[1]]; w = shape[a[2]]; y = shape[o[1]]
			m = 0
			if (op[i] == "Conv" && w != "" && y != "")
				m = prod(y, 1) * prod(w, 2)
			else if ((op[i] == "MatMul" || op[i] == "Gemm") &&
			    x != "" && y != "") {
				k = split(x, d, "x")
				m = prod(y, 1) * d[k]
			}
			printf "%s\t%.17g\n", name[i], m
		}
	}' "$1"
}

# head_oracle STREAM PCT: the nodes --float-head PCT leaves in float:
# whole blocks from the start until they hold PCT of the compute.
head_oracle() {
	macs_oracle "$1" | awk -F'\t' -v pct="$2" '
	{ name[NR] = $1; mac[NR] = $2; total += $2 }
	END {
		for (i = 1; i <= NR && !(100 * sum >= pct * total &&
		    mac[i] > 0); i++) {
			sum += mac[i]
			print name[i]
		}
	}'
}

# tail_oracle STREAM PCT: the nodes --float-tail PCT leaves in float:
# the last whole blocks (a node with compute and those after it) that
# hold at most PCT of the compute.
tail_oracle() {
	macs_oracle "$1" | awk -F'\t' -v pct="$2" '
	{ name[NR] = $1; mac[NR] = $2; total += $2 }
	END {
		start = NR + 1
		for (i = NR; i >= 1; i--) {
			block += mac[i]
			if (mac[i] <= 0)
				continue
			if (100 * (sum + block) > pct * total)
				break
			sum += block; block = 0; start = i
		}
		for (i = start; i <= NR; i++)
			print name[i]
	}'
}

# check_float_end END PCT: onnx-qparams -v --all-ops --float-END PCT on
# rec.stats leaves in float the nodes the file want lists (its notes say
# which), the same as naming them, as the recipe's float_END says, and 0
# is none; END.qp gets its records.
check_float_end() {
	run --separate-stderr onnx-qparams -v --all-ops "--float-$1" "$2" \
	    rec.stats
	[ "$status" -eq 0 ] || fail "$stderr"
	grep -v '^#' <<<"$output" >"$1.qp"
	sed -n "s/^onnx-qparams: node \(.*\): in the float $1.*/\1/p" \
	    <<<"$stderr" >got
	cmp want got || fail "float $1 differs: $(diff want got)"
	onnx-qparams --all-ops --exclude-nodes "$(paste -sd, want)" \
	    rec.stats | grep -v '^#' >named.qp
	cmp "$1.qp" named.qp
	printf 'float_%s: %s\n' "$1" "$2" >"$1.yaml"
	onnx-qparams --all-ops -c "$1.yaml" rec.stats | grep -v '^#' >recipe.qp
	cmp "$1.qp" recipe.qp
	onnx-qparams --all-ops rec.stats | grep -v '^#' >all.qp
	onnx-qparams --all-ops "--float-$1" 0 rec.stats | grep -v '^#' >zero.qp
	cmp all.qp zero.qp
	if cmp -s all.qp "$1.qp"; then
		fail "--float-$1 $2 changed nothing"
	fi
}

@test "qparams: --float-head leaves whole blocks up to PCT of the compute float" {
	rec_calibrated 1
	head_oracle rec.stats 2.5 >want
	[ "$(wc -l <want)" -ge 10 ] || fail "oracle: $(cat want)"
	check_float_end head 2.5
}

@test "qparams: --float-tail leaves the last blocks within PCT float" {
	rec_calibrated 1
	tail_oracle rec.stats 25 >want
	[ "$(wc -l <want)" -ge 10 ] || fail "oracle: $(cat want)"
	# a budget: the next block back would go over it
	tail_oracle rec.stats 24 >less
	[ "$(wc -l <less)" -lt "$(wc -l <want)" ] || fail "24% as 25%"
	check_float_end tail 25
	# no logit nor probability quantized: the model ends in float
	last=$(tail -n 1 want)
	out=$(awk -F'\t' -v n="$last" '$1 == "node" && $2 == n {
		for (i = 3; i <= NF; i++) if (sub(/^out=/, "", $i)) print $i }' \
	    rec.stats)
	[ -n "$out" ] && ! grep -q "^qparam	$out	" tail.qp || fail "$out"
	# with the head: both ends float, the middle quantized
	onnx-qparams --all-ops --float-head 2.5 --float-tail 25 -o ends.qp \
	    rec.stats
	grep -v '^#' ends.qp >ends-records.qp
	onnx-qparams --all-ops --exclude-nodes \
	    "$(head_oracle rec.stats 2.5 | cat - want | paste -sd, -)" \
	    rec.stats | grep -v '^#' >ends-named.qp
	cmp ends-records.qp ends-named.qp
	# The model it gives passes the checker and runs in ONNX Runtime.
	onnx-qdq-insert --fold-scales -o ends.onnx rec.onnx ends.qp
	/usr/bin/python3 -c 'import onnx, sys
onnx.checker.check_model(onnx.load(sys.argv[1]))' ends.onnx ||
	    fail "onnx.checker"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    --out ort ends.onnx data
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
}
