#!/usr/bin/env bats
# qdq.bats: onnx-qdq-insert (lib/qdq.c, lib/opset.c) end to end.
# - ORT PR #22020's Conv calibrated, parameterised and rewritten, run in
#   ONNX Runtime: output[0] 4.992 / 55.66 dB with the bias adjustment,
#   0.075 / 0.14 dB without (the seed's figures);
# - the fixtures of test/data/qdq (make-fixtures.py): the op kinds, shared
#   and dedicated pairs, weights stored quantized or float, graph outputs
#   keeping their names, opset raising with node rewrites, the
#   com.microsoft domain, the five mixed-precision conversion cases, folds,
#   subgraphs; every model passes onnx.checker, runs in ONNX Runtime with
#   optimizations off (test/ort-qdq-check.js) and gives the same outputs in
#   our interpreter (onnx-verify against ORT's outputs);
# - errors: unknown tensors, truncated streams, another model's stream,
#   usage; external data;
# - PaddleOCR v4 rec and det, mobile v2 cls: calibrate, qparams, insert,
#   run in ORT against fp32, with their Relu and Clip nodes folded (det's
#   empty Resize roi and its scales left alone by onnx-qparams).
# Needs: the built programs, /usr/bin/python3 with onnx and numpy,
# onnxruntime-node and the real models (helpers.bash: ort_node,
# need_models).

load helpers

QD=$TESTDATA/qdq
PY=/usr/bin/python3
FIX=$QD/make-fixtures.py
ORTCHECK=$ONNXQ_ROOT/test/ort-qdq-check.js

# show MODEL: checker + listing (make-fixtures.py show) into $output.
show() {
	run --separate-stderr "$PY" "$FIX" show "$1"
	[ "$status" -eq 0 ] || fail "show $1: $stderr"
}

# count PATTERN: lines of $output matching the extended regex.
count() {
	grep -cE -- "$1" <<<"$output" || true
}

# samples MODEL DIR N SEED
samples() {
	"$PY" "$FIX" samples "$1" "$2" "$3" "$4" || fail "samples $1"
}

# qstream MODEL CALIB [QPARAMS OPTIONS]: the real pipeline's stream.
qstream() {
	local model=$1 calib=$2

	shift 2
	onnx-calib --quiet -d "$calib" "$model" >stats ||
	    fail "onnx-calib $model failed"
	onnx-qparams --all-ops -m minmax "$@" stats || fail "onnx-qparams $* failed"
}

# Samples and statistics the tests share, in $F: F/NAME/calib (4
# samples), F/NAME/eval (2 others), F/NAME/stats for the ops, ops2 and
# opset9 fixtures; F/pr (the PR 22020 Conv's samples) and F/pr/stats.
setup_file() {
	F=$BATS_FILE_TMPDIR
	export F
	local m

	for m in ops ops2 opset9; do
		"$PY" "$FIX" samples "$QD/$m.onnx" "$F/$m/calib" 4 1 &&
		    "$PY" "$FIX" samples "$QD/$m.onnx" "$F/$m/eval" 2 2 &&
		    onnx-calib --quiet -d "$F/$m/calib" "$QD/$m.onnx" \
		    >"$F/$m/stats" || return 1
	done
	"$PY" "$FIX" pr22020-samples "$F/pr" &&
	    onnx-calib --quiet -d "$F/pr/calib" "$QD/conv.onnx" >"$F/pr/stats"
}

# qp NAME [QPARAMS OPTIONS]: onnx-qparams on the shared statistics of NAME,
# without folds (--keep-activations), so that every activation of the
# fixtures keeps its pair; the folds have their own tests. Every op kind
# (--all-ops) with minmax ranges: the figures below were computed so.
qp() {
	local m=$1

	shift
	onnx-qparams --all-ops -m minmax --keep-activations "$@" "$F/$m/stats" ||
	    fail "onnx-qparams $* failed"
}

# ort_out MODEL DIR OUT [--ref REF]: ORT (optimizations off) outputs of
# MODEL on DIR into OUT; prints the SNR lines with --ref.
ort_out() {
	local model=$1 dir=$2 out=$3

	shift 3
	ort_node "$ORTCHECK" --out "$out" "$@" "$model" "$dir"
}

# same_as_ort MODEL DIR ATOL: our interpreter gives ORT's outputs of MODEL
# on DIR within ATOL (one quantization step of the outputs).
same_as_ort() {
	local model=$1 dir=$2 atol=$3

	# Under valgrind the CPU shows no AVX-512, so our kernels add in
	# their AVX2 order and differ from ORT's by float rounding: that
	# run checks memory, and gets a float's rounding here.
	if [ "${ONNXQ_VALGRIND:-}" = 1 ] && [ "$atol" = 0 ]; then
		atol=1e-3
	fi
	rm -rf ortcmp
	cp -r "$dir" ortcmp
	ort_out "$model" ortcmp ortcmp || fail "ORT cannot run $model"
	run --separate-stderr onnx-verify -d ortcmp --atol "$atol" --rtol 0 "$model"
	[ "$status" -eq 0 ] || fail "interpreter and ORT differ on $model:" \
	    "$output" "$stderr"
}

# stream LINE...: a hand-written stream of the given record lines (fields
# separated by spaces here, TABs in the stream).
stream() {
	printf '#onnxq\t1.0\n'
	printf '%s\n' "$@" | tr ' ' '\t'
	printf 'end\t%d\n' $#
}

@test "qdq-insert: PR 22020 Conv in ORT: 4.992 and 55.66 dB with the bias adjustment" {
	cp -r "$F/pr" pr
	qp pr --per-tensor --weight-asymmetric >qp
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/conv.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -z "$output" ] && [ -z "$stderr" ] || fail "output: $output $stderr"
	show q.onnx
	[ "$(count '^init weight_quantized INT8 2x2x2x2$')" = 1 ] || fail "$output"
	[ "$(count '^init bias_quantized INT32 2$')" = 1 ] || fail "$output"
	[ "$(count '^node Conv onnx input_0_DequantizeLinear_Output,weight_DequantizeLinear_Output,bias_DequantizeLinear_Output output_0_QuantizeLinear_Input$')" = 1 ] ||
	    fail "$output"
	ort_out "$QD/conv.onnx" pr/eval ref
	run ort_out q.onnx pr/eval qout --ref ref
	[ "$output" = "$(printf 'output_0\tsnr=55.66\tmaxabs=0.007843')" ] ||
	    fail "$output"
	run "$PY" -c "import numpy as np; print('%.4f' % np.load('qout/s0/output_0.npy').flat[0])"
	[ "$output" = 4.9922 ] || fail "output[0] $output"
	same_as_ort q.onnx pr/eval 0
	# Per-channel symmetric weights (the default) give the same.
	qp pr >qp2
	onnx-qdq-insert -o q2.onnx "$QD/conv.onnx" qp2
	run ort_out q2.onnx pr/eval qout2 --ref ref
	[ "$output" = "$(printf 'output_0\tsnr=55.66\tmaxabs=0.007843')" ] ||
	    fail "$output"
}

@test "qdq-insert: PR 22020 Conv in ORT: 0.075 and 0.14 dB without the adjustment" {
	cp -r "$F/pr" pr
	qp pr --per-tensor --weight-asymmetric --no-bias-weight-adjust >qp
	onnx-qdq-insert -o q.onnx "$QD/conv.onnx" qp
	ort_out "$QD/conv.onnx" pr/eval ref
	run ort_out q.onnx pr/eval qout --ref ref
	[ "$output" = "$(printf 'output_0\tsnr=0.14\tmaxabs=4.925')" ] ||
	    fail "$output"
	run "$PY" -c "import numpy as np; print('%.4f' % np.load('qout/s0/output_0.npy').flat[0])"
	[ "$output" = 0.0745 ] || fail "output[0] $output"
}

@test "qdq-insert: op kinds: shared pairs, weights, biases, graph outputs keep their names" {
	cp -r "$F/ops/eval" eval
	qp ops >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"ops.onnx: 14 activations, 4 weights, 2 biases quantized; 0 converted, 0 folded, 0 left alone"* ]] ||
	    fail "$stderr"
	[[ $stderr == *"ops.onnx: 14 QuantizeLinear, 20 DequantizeLinear (onnx); opset 13"* ]] ||
	    fail "$stderr"
	[[ $stderr == *"ops.onnx: 5869 bytes -> "*" bytes ("*"%)"* ]] || fail "$stderr"
	show q.onnx
	# One pair per activation, shared: p1 feeds mul1 and add1 alike.
	[ "$(count '^node QuantizeLinear ')" = 14 ] || fail "$output"
	[ "$(count '^node Mul onnx p1_DequantizeLinear_Output,K_DequantizeLinear_Output m1$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Add onnx p1_DequantizeLinear_Output,m1_DequantizeLinear_Output a1$')" = 1 ] ||
	    fail "$output"
	# Weights per channel (int8, axis), the Mul constant per tensor, biases int32.
	[ "$(count '^node DequantizeLinear onnx W1_quantized,W1_scale,W1_zero_point W1_DequantizeLinear_Output axis=0$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node DequantizeLinear onnx Wm_quantized,Wm_scale,Wm_zero_point Wm_DequantizeLinear_Output axis=1$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^init (W1|Wm|Wg)_quantized INT8 ')" = 3 ] || fail "$output"
	[ "$(count '^init K_quantized UINT8 1x4x1x1$')" = 1 ] || fail "$output"
	[ "$(count '^init (B1|Cg)_quantized INT32 ')" = 2 ] || fail "$output"
	[ "$(count '^init (W1|Wm|Wg|K|B1|Cg) ')" = 0 ] || fail "float weights left: $output"
	# Graph outputs keep their names, written by DequantizeLinear; feat
	# is read by two nodes too, through the same DequantizeLinear.
	[ "$(count '^node DequantizeLinear onnx (prob|feat|pool)_QuantizeLinear_Output,[a-z]+_scale,[a-z]+_zero_point (prob|feat|pool)$')" = 3 ] ||
	    fail "$output"
	[ "$(count '^node (MatMul|Gemm) onnx feat,')" = 2 ] || fail "$output"
	[ "$(count '^output ')" = 3 ] || fail "$output"
	# ORT runs it; our interpreter agrees; quantization costs little.
	ort_out "$QD/ops.onnx" eval ref
	run ort_out q.onnx eval qout --ref ref
	local snr
	for o in prob feat pool; do
		snr=$(awk -v o="$o" '$1 == o { sub(/snr=/, "", $2); print $2 }' <<<"$output")
		awk -v s="$snr" 'BEGIN { exit !(s > 35) }' ||
		    fail "$o: SNR $snr dB: $output"
	done
	same_as_ort q.onnx eval 0
}

@test "qdq-insert: more op kinds: ConvTranspose, folded BatchNormalization, Resize, norms" {
	cp -r "$F/ops2/eval" eval
	qp ops2 >qp0
	# onnx-qparams leaves Resize's scales alone; a stream that quantizes
	# them anyway (an older onnx-qparams) is overruled.
	[ "$(grep -c $'^qparam\tscales\t' qp0)" = 0 ] || fail "$(grep '^qparam' qp0)"
	awk -F '\t' -v OFS='\t' '$1 == "end" { print "qparam", "scales",
	    "role=weight", "type=uint8", "scale=0.007843138", "zp=0";
	    print "end", $2 + 1; next } { print }' qp0 >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/ops2.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"ops2.onnx: scales: a parameter of resize (Resize), not data: left in float"* ]] ||
	    fail "$stderr"
	[[ $stderr == *"16 activations, 8 weights, 2 biases quantized; 0 converted, 0 folded, 1 left alone"* ]] ||
	    fail "$stderr"
	show q.onnx
	# ConvTranspose weights per output channel: axis 1.
	[ "$(count '^node DequantizeLinear onnx Wt_quantized,Wt_scale,Wt_zero_point Wt_DequantizeLinear_Output axis=1$')" = 1 ] ||
	    fail "$output"
	# The BatchNormalization folded into the Conv before quantization.
	[ "$(count '^node BatchNormalization ')" = 0 ] || fail "$output"
	[ "$(count '^node Conv onnx ct_DequantizeLinear_Output,Wc_bnfold_DequantizeLinear_Output,bn_bnfold_DequantizeLinear_Output bn ')" = 1 ] ||
	    fail "$output"
	[ "$(count '^init bn_bnfold_quantized INT32 4$')" = 1 ] || fail "$output"
	# Resize reads its float scales; the norms' scales per channel.
	[ "$(count '^node Resize onnx ap_DequantizeLinear_Output,,scales rs ')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node (Instance|Layer)Normalization onnx [a-z]+_DequantizeLinear_Output,(in_s|ln_g)_DequantizeLinear_Output,(in_b|ln_b)_DequantizeLinear_Output ')" = 2 ] ||
	    fail "$output"
	[ "$(count '^node Split onnx rs_DequantizeLinear_Output,split sp1,sp2 ')" = 1 ] ||
	    fail "$output"
	ort_out "$QD/ops2.onnx" eval ref
	run ort_out q.onnx eval qout --ref ref
	for o in g ln; do
		snr=$(awk -v o="$o" '$1 == o { sub(/snr=/, "", $2); print $2 }' <<<"$output")
		awk -v s="$snr" 'BEGIN { exit !(s > 25) }' ||
		    fail "$o: SNR $snr dB: $output"
	done
	# Our AveragePool sums in double, ORT's in float: averages of
	# quantized values that fall on a rounding tie may round the other
	# way, and the step grows downstream. So not bit for bit here.
	for s in eval/*/; do
		cp qout/"$(basename "$s")"/*.npy "$s"
	done
	run --separate-stderr onnx-verify -d eval --atol 1 --rtol 0 --min-snr 35 q.onnx
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
}

@test "qdq-insert: --dedicated-pairs gives each reader its own pair" {
	cp -r "$F/ops/eval" eval
	qp ops >qp
	onnx-qdq-insert --dedicated-pairs -o q.onnx "$QD/ops.onnx" qp
	show q.onnx
	# p1 (mul1, add1), a1 (sig1, tr1), feat (matmul1, gemm1 and the output).
	[ "$(count '^node QuantizeLinear onnx p1,')" = 2 ] || fail "$output"
	[ "$(count '^node QuantizeLinear onnx a1,')" = 2 ] || fail "$output"
	[ "$(count '^node QuantizeLinear onnx feat_QuantizeLinear_Input,')" = 3 ] ||
	    fail "$output"
	[ "$(count '^node QuantizeLinear ')" = 18 ] || fail "$output"
	[ "$(count '^node Add onnx p1_DequantizeLinear_Output_1,m1_DequantizeLinear_Output a1$')" = 1 ] ||
	    fail "$output"
	same_as_ort q.onnx eval 0
}

@test "qdq-insert: --weights-float keeps float weights behind QuantizeLinear" {
	cp -r "$F/ops/eval" eval
	qp ops >qp
	onnx-qdq-insert -o q.onnx "$QD/ops.onnx" qp
	onnx-qdq-insert --weights-float -o qf.onnx "$QD/ops.onnx" qp
	show qf.onnx
	[ "$(count '^init (W1|Wm|Wg|K) FLOAT ')" = 4 ] || fail "$output"
	[ "$(count '^init (W1|Wm|Wg|K)_quantized ')" = 0 ] || fail "$output"
	[ "$(count '^init (B1|Cg)_quantized INT32 ')" = 2 ] || fail "$output"
	[ "$(count '^node QuantizeLinear onnx W1,W1_scale,W1_zero_point W1_QuantizeLinear_Output axis=0$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node QuantizeLinear ')" = 18 ] || fail "$output"
	[ "$(stat -c %s qf.onnx)" -gt "$(stat -c %s q.onnx)" ] ||
	    fail "float weights should take more room"
	# The same values either way.
	ort_out q.onnx eval a
	run ort_out qf.onnx eval b --ref a
	[ "$output" = "$(printf 'prob\tsnr=inf\tmaxabs=0\nfeat\tsnr=inf\tmaxabs=0\npool\tsnr=inf\tmaxabs=0')" ] ||
	    fail "$output"
}

@test "qdq-insert: opset 9 raised to 13 for per-channel weights, nodes rewritten" {
	cp -r "$F/opset9/eval" eval
	qp opset9 >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/opset9.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"opset9.onnx: opset raised from 9 to 13 (7 nodes rewritten)"* ]] ||
	    fail "$stderr"
	show q.onnx
	[ "$(count '^opset onnx 13$')" = 1 ] || fail "$output"
	[ "$(count '^ir 7$')" = 1 ] || fail "$output"
	[ "$(count '^node Clip onnx x_DequantizeLinear_Output,clip_min,clip_max cl$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Slice onnx cl_DequantizeLinear_Output,slice_starts,slice_ends,slice_axes sl$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Squeeze onnx rm_DequantizeLinear_Output,squeeze_axes sq$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Unsqueeze onnx sm_DequantizeLinear_Output,unsqueeze_axes us$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Pad onnx cl_DequantizeLinear_Output,pad_pads,pad_value pd$')" = 1 ] ||
	    fail "$output"
	# Softmax on a middle axis: Flatten -> Softmax -> Reshape(Shape);
	# on the last axis (rank from the stat record) it stays.
	[ "$(count '^node Flatten onnx sq_DequantizeLinear_Output softmax_mid_flat axis=1$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Reshape onnx softmax_mid_2d,softmax_mid_shape sm$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Softmax onnx sl_DequantizeLinear_Output z_QuantizeLinear_Input axis=3$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node DequantizeLinear onnx W_quantized,W_scale,W_zero_point W_DequantizeLinear_Output axis=0$')" = 1 ] ||
	    fail "$output"
	ort_out "$QD/opset9.onnx" eval ref
	run ort_out q.onnx eval qout --ref ref
	for o in y z pr; do
		snr=$(awk -v o="$o" '$1 == o { sub(/snr=/, "", $2); print $2 }' <<<"$output")
		awk -v s="$snr" 'BEGIN { exit !(s > 35) }' ||
		    fail "$o: SNR $snr dB: $output"
	done
	same_as_ort q.onnx eval 0
	# Per tensor needs only opset 10: Slice is rewritten, Clip not.
	qp opset9 --per-tensor >qp10
	run --separate-stderr onnx-qdq-insert -v -o q10.onnx "$QD/opset9.onnx" qp10
	[[ $stderr == *"opset raised from 9 to 10 (1 nodes rewritten)"* ]] ||
	    fail "$stderr"
	same_as_ort q10.onnx eval 0
}

@test "qdq-insert: --qdq-domain com.microsoft raises opset 9 to 10 only" {
	cp -r "$F/opset9/eval" eval
	qp opset9 >qp
	onnx-qdq-insert --qdq-domain com.microsoft -o q.onnx "$QD/opset9.onnx" qp
	show q.onnx
	# 10, for ORT's fusion into QLinearConv; the Q/DQ need nothing (#17)
	[ "$(count '^opset onnx 10$')" = 1 ] || fail "$output"
	[ "$(count '^opset com.microsoft 1$')" = 1 ] || fail "$output"
	[ "$(count '^node (Quantize|Dequantize)Linear com.microsoft ')" = 24 ] ||
	    fail "$output"
	[ "$(count '^node (Quantize|Dequantize)Linear onnx ')" = 0 ] || fail "$output"
	[ "$(count '^node Clip onnx x_DequantizeLinear_Output cl max=6.0 min=0.0$')" = 1 ] ||
	    fail "$output"
	same_as_ort q.onnx eval 0
}

@test "qdq-insert: 16-bit activations below opset 21 use com.microsoft; onnx says why not" {
	cp -r "$F/ops/eval" eval
	qp ops -a uint16 >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"ops.onnx: opset 13 cannot be raised to 21 (opset 21 is beyond the opset table (17)): using the com.microsoft QuantizeLinear and DequantizeLinear"* ]] ||
	    fail "$stderr"
	show q.onnx
	[ "$(count '^init x_zero_point UINT16 scalar$')" = 1 ] || fail "$output"
	[ "$(count '^node QuantizeLinear com.microsoft ')" = 14 ] || fail "$output"
	same_as_ort q.onnx eval 0
	run --separate-stderr onnx-qdq-insert --qdq-domain onnx -o q2.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 1 ] || fail "status $status"
	[ -z "$output" ] || fail "stdout: $output"
	[ "$stderr" = "onnx-qdq-insert: $QD/ops.onnx: the parameters need opset 21, the model has 13 and cannot be raised: opset 21 is beyond the opset table (17)" ] ||
	    fail "$stderr"
	[ ! -e q2.onnx ] || fail "q2.onnx written"
}

@test "qdq-insert: 4-bit weights: com.microsoft at opset 13, the default domain at 21" {
	cp -r "$F/ops/eval" eval
	qp ops -w int4 >qp
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	show q.onnx
	[ "$(count '^init (W1|Wm|Wg)_quantized INT4 ')" = 3 ] || fail "$output"
	[ "$(count '^node DequantizeLinear com.microsoft W1_quantized,')" = 1 ] ||
	    fail "$output"
	same_as_ort q.onnx eval 0
	# At opset 21, 16-bit activations and 4-bit weights in the default domain.
	"$PY" "$FIX" opset21 "$QD/ops.onnx" ops21.onnx
	qp ops -a uint16 -w int4 >qp21
	run --separate-stderr onnx-qdq-insert -o q21.onnx ops21.onnx qp21
	[ "$status" -eq 0 ] || fail "$stderr"
	show q21.onnx
	[ "$(count '^opset onnx 21$')" = 1 ] && [ "$(count '^opset com.microsoft')" = 0 ] ||
	    fail "$output"
	[ "$(count '^node QuantizeLinear onnx x,x_scale,x_zero_point ')" = 1 ] ||
	    fail "$output"
	[ "$(count '^init x_zero_point UINT16 scalar$')" = 1 ] || fail "$output"
	same_as_ort q21.onnx eval 0
}

@test "qdq-insert: names that are taken get a suffix" {
	stream "qparam x role=act type=uint8 scale=0.01 zp=128" \
	    "qparam x_DequantizeLinear_Output role=act type=uint8 scale=0.01 zp=0" >qp
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/collide.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	show q.onnx
	[ "$(count '^node QuantizeLinear onnx x,x_scale_1,x_zero_point x_QuantizeLinear_Output$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node DequantizeLinear onnx x_QuantizeLinear_Output,x_scale_1,x_zero_point x_DequantizeLinear_Output_1$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Relu onnx x_DequantizeLinear_Output_1 x_DequantizeLinear_Output$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Mul onnx x_DequantizeLinear_Output_DequantizeLinear_Output,x_scale m$')" = 1 ] ||
	    fail "$output"
	"$PY" "$FIX" samples "$QD/collide.onnx" eval 2 1
	same_as_ort q.onnx eval 0
}

@test "qdq-insert: a deprecated op (Upsample) blocks raising: com.microsoft, or an error" {
	stream "qparam x role=act type=uint8 scale=0.1 zp=0" \
	    "qparam u role=act type=uint8 scale=0.1 zp=0" >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/upsample9.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"upsample9.onnx: opset 9 cannot be raised to 10 (node up (Upsample): Upsample is deprecated at opset 10): using the com.microsoft"* ]] ||
	    fail "$stderr"
	show q.onnx
	[ "$(count '^node QuantizeLinear com.microsoft ')" = 2 ] || fail "$output"
	run --separate-stderr onnx-qdq-insert --qdq-domain onnx "$QD/upsample9.onnx" qp
	[ "$status" -eq 1 ] || fail "status $status"
	[ -z "$output" ] || fail "stdout not empty"
	[ "$stderr" = "onnx-qdq-insert: $QD/upsample9.onnx: the parameters need opset 10, the model has 9 and cannot be raised: node up (Upsample): Upsample is deprecated at opset 10" ] ||
	    fail "$stderr"
}

@test "qdq-insert: convert records: the five cases of ORT's mixed precision" {
	local recs=() t
	for t in x t1 out1 t2 out2a out2b t3 out3 t4 out4a out4b t5; do
		recs+=("qparam $t role=act type=uint8 scale=0.02 zp=128")
	done
	stream "${recs[@]}" \
	    "convert t1 type=uint16 scale=0.0001 zp=32768 recv=sig1" \
	    "convert t2 type=uint16 scale=0.0001 zp=32768 recv=sig2" \
	    "convert t3 type=uint16 scale=0.0001 zp=32768 recv=abs3" \
	    "convert t4 type=uint16 scale=0.0001 zp=32768 recv=neg4" \
	    "convert t5 type=uint16 scale=0.0001 zp=32768" >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/convert.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"12 activations, 0 weights, 0 biases quantized; 5 converted"* ]] ||
	    fail "$stderr"
	show q.onnx
	# 1: all readers converted: Q1 -> DQ1 -> Q2 -> DQ2 -> sig1.
	[ "$(count '^node DequantizeLinear com.microsoft t1_QuantizeLinear_Output,')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node QuantizeLinear com.microsoft t1_DequantizeLinear_Output,t1_convert_scale,t1_convert_zero_point ')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node Sigmoid onnx t1_convert_DequantizeLinear_Output ')" = 1 ] ||
	    fail "$output"
	# 2: some: DQ1 for abs2, a DQ1 clone feeding the conversion for sig2.
	[ "$(count '^node DequantizeLinear com.microsoft t2_QuantizeLinear_Output,')" = 2 ] ||
	    fail "$output"
	[ "$(count '^node Abs onnx t2_DequantizeLinear_Output ')" = 1 ] || fail "$output"
	[ "$(count '^node Sigmoid onnx t2_convert_DequantizeLinear_Output ')" = 1 ] ||
	    fail "$output"
	# 3: a graph output, all readers converted: DQ1 writes t3, Q2 reads it.
	[ "$(count '^node DequantizeLinear com.microsoft t3_QuantizeLinear_Output,[^ ]* t3$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^node QuantizeLinear com.microsoft t3,t3_convert_scale,')" = 1 ] ||
	    fail "$output"
	# 4: a graph output, some readers: DQ1 writes t4 (relu4 reads it),
	# the clone feeds neg4's conversion.
	[ "$(count '^node DequantizeLinear com.microsoft t4_QuantizeLinear_Output,')" = 2 ] ||
	    fail "$output"
	[ "$(count '^node Relu onnx t4 ')" = 1 ] || fail "$output"
	[ "$(count '^node Neg onnx t4_convert_DequantizeLinear_Output ')" = 1 ] ||
	    fail "$output"
	# 5: a graph output nothing reads: converted itself, DQ2 writes t5.
	[ "$(count '^node DequantizeLinear com.microsoft t5_convert_QuantizeLinear_Output,[^ ]* t5$')" = 1 ] ||
	    fail "$output"
	[ "$(count '^output ')" = 9 ] || fail "$output"
	samples "$QD/convert.onnx" eval 2 3
	same_as_ort q.onnx eval 0
}

@test "qdq-insert: convert errors: a reader that does not read it, no qparam" {
	stream "qparam t1 role=act type=uint8 scale=0.02 zp=128" \
	    "convert t1 type=uint16 scale=0.0001 zp=32768 recv=abs2" >qp
	run --separate-stderr onnx-qdq-insert "$QD/convert.onnx" qp
	[ "$status" -eq 1 ] && [ -z "$output" ] || fail "status $status"
	[ "$stderr" = "onnx-qdq-insert: qp:3: convert t1: node abs2 does not read it" ] ||
	    fail "$stderr"
	stream "convert t1 type=uint16 scale=0.0001 zp=32768" >qp
	run --separate-stderr onnx-qdq-insert "$QD/convert.onnx" qp
	[ "$stderr" = "onnx-qdq-insert: qp:2: convert t1: no qparam record for it" ] ||
	    fail "$stderr"
}

@test "qdq-insert: fold records remove the Relu, its producer writes the output" {
	cp -r "$F/ops/eval" eval
	qp ops >qp0
	# Add "fold relu1 into=conv1", as onnx-qparams may.
	awk -F '\t' -v OFS='\t' '$1 == "end" { print "fold", "relu1", "into=conv1";
	    print "end", $2 + 1; next } { print }' qp0 >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"ops.onnx: c1: folded into its reader's output"* ]] || fail "$stderr"
	[[ $stderr == *"13 activations, 4 weights, 2 biases quantized; 0 converted, 1 folded"* ]] ||
	    fail "$stderr"
	show q.onnx
	[ "$(count '^node Relu ')" = 0 ] || fail "$output"
	[ "$(count '^node Conv onnx x_DequantizeLinear_Output,W1_DequantizeLinear_Output,B1_DequantizeLinear_Output r1 pads=')" = 1 ] ||
	    fail "$output"
	ort_node "$ORTCHECK" --out o q.onnx eval || fail "ORT cannot run it"
	# The fold of a Relu whose output has no qparam is refused.
	grep -v $'^qparam\tr1\t' qp0 | awk -F '\t' -v OFS='\t' '$1 == "end" {
	    print "fold", "relu1", "into=conv1"; print "end", $2; next } { print }' >qp2
	run --separate-stderr onnx-qdq-insert -o q2.onnx "$QD/ops.onnx" qp2
	[ "$status" -eq 1 ] || fail "status $status"
	[[ $stderr == "onnx-qdq-insert: qp2:"*": fold relu1: its output r1 has no activation qparam to clamp it" ]] ||
	    fail "$stderr"
}

@test "qdq-insert: a fold removes the constants only it read; a graph output keeps its Relu" {
	# conv1 -> c -> Clip(c, lo (a Constant node), hi (an initializer
	# also read by add1)) -> y; conv2 -> d, a graph output, -> Relu -> r.
	"$PY" - <<'EOF' || fail "cannot build fold.onnx"
import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper as nh, save
W = nh.from_array(np.full((2, 2, 1, 1), 0.5, np.float32), "W")
hi = nh.from_array(np.array(6, np.float32), "hi")
nodes = [
    h.make_node("Conv", ["x", "W"], ["c"], "conv1"),
    h.make_node("Constant", [], ["lo"], "lo_const",
                value=nh.from_array(np.array(0, np.float32))),
    h.make_node("Clip", ["c", "lo", "hi"], ["y"], "clip1"),
    h.make_node("Add", ["x", "hi"], ["y2"], "add1"),
    h.make_node("Conv", ["x", "W"], ["d"], "conv2"),
    h.make_node("Relu", ["d"], ["r"], "relu1"),
]
vi = lambda n: h.make_tensor_value_info(n, T.FLOAT, [1, 2, 4, 4])
g = h.make_graph(nodes, "fold", [vi("x")],
                 [vi(n) for n in ("y", "y2", "d", "r")], [W, hi])
save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "fold.onnx")
EOF
	stream "qparam x role=act type=uint8 scale=0.04 zp=128" \
	    "qparam y role=act type=uint8 scale=0.023529412 zp=0" \
	    "qparam r role=act type=uint8 scale=0.02 zp=0" \
	    "fold clip1 into=conv1" "fold relu1 into=conv2" >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx fold.onnx qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"fold.onnx: lo: read only by a folded node: removed"* ]] ||
	    fail "$stderr"
	[[ $stderr != *"hi: read only"* ]] || fail "$stderr"
	[[ $stderr == *"fold.onnx: fold relu1: d is a graph output: relu1 kept"* ]] ||
	    fail "$stderr"
	[[ $stderr == *" 1 folded"* ]] || fail "$stderr"
	show q.onnx
	[ "$(count '^node Clip ')" = 0 ] || fail "$output"
	[ "$(count '^node Constant ')" = 0 ] || fail "$output"
	[ "$(count '^node Relu onnx d ')" = 1 ] || fail "$output"
	"$PY" - q.onnx <<'EOF' || fail "unused or missing constants"
import sys, onnx
g = onnx.load(sys.argv[1]).graph
used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
names = {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
unused = [t.name for t in g.initializer if t.name not in used]
sys.exit("unused %s, names %s" % (unused, sorted(names))
         if unused or "hi" not in names or "lo" in names else 0)
EOF
	samples fold.onnx eval 2 1
	ort_out q.onnx eval qout || fail "ORT cannot run q.onnx"
}

@test "qdq-insert: tensors read by subgraphs, non-float tensors: notes under -v" {
	stream "qparam x role=act type=uint8 scale=0.01 zp=0" \
	    "qparam a role=act type=uint8 scale=0.004 zp=0" \
	    "qparam cond role=act type=uint8 scale=1 zp=0" \
	    "qparam y role=act type=uint8 scale=0.01 zp=128" >qp
	run --separate-stderr onnx-qdq-insert -v -o q.onnx "$QD/subgraph.onnx" qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"subgraph.onnx: cond: of type bool, not float: left alone"* ]] || fail "$stderr"
	[[ $stderr == *"subgraph.onnx: a: a subgraph reads it: it reads the float value"* ]] ||
	    fail "$stderr"
	[[ $stderr == *"3 activations, 0 weights, 0 biases quantized; 0 converted, 0 folded, 1 left alone"* ]] ||
	    fail "$stderr"
	show q.onnx
	[ "$(count '^node Abs onnx a_DequantizeLinear_Output b$')" = 1 ] || fail "$output"
	[ "$(count '^node If onnx cond c$')" = 1 ] || fail "$output"
	# Our interpreter has no If: ORT alone runs it.
	samples "$QD/subgraph.onnx" eval 2 1
	ort_out q.onnx eval qout || fail "ORT cannot run q.onnx"
	# Without -v: nothing on stderr.
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/subgraph.onnx" qp
	[ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$stderr"
	# A float tensor with statistics but no parameters; an int64 constant.
	qp ops | grep -v $'^qparam\tmm\t' | awk -F '\t' -v OFS='\t' '
	    $1 == "end" { print "qparam", "shape", "role=weight", "type=uint8",
	    "scale=1", "zp=0"; print "end", $2; next } { print }' >qp2
	run --separate-stderr onnx-qdq-insert -v -o q2.onnx "$QD/ops.onnx" qp2
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == *"ops.onnx: mm: no parameters: left in float"* ]] || fail "$stderr"
	[[ $stderr == *"ops.onnx: shape: a constant of type int64: left alone"* ]] || fail "$stderr"
}

@test "qdq-insert: a qparam for a tensor the model lacks: FILE:LINE, nothing written" {
	stream "qparam x role=act type=uint8 scale=0.01 zp=0" \
	    "qparam nosuch role=act type=uint8 scale=0.01 zp=0" >qp
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 1 ] || fail "status $status"
	[ -z "$output" ] || fail "stdout: $output"
	[ "$stderr" = "onnx-qdq-insert: qp:3: tensor nosuch is not in $QD/ops.onnx" ] ||
	    fail "$stderr"
	[ ! -e q.onnx ] || fail "q.onnx written"
	# From standard input, the stream is <stdin>.
	run --separate-stderr onnx-qdq-insert "$QD/ops.onnx" <qp
	[ "$status" -eq 1 ] && [ -z "$output" ] || fail "status $status"
	[ "$stderr" = "onnx-qdq-insert: <stdin>:3: tensor nosuch is not in $QD/ops.onnx" ] ||
	    fail "$stderr"
}

@test "qdq-insert: a truncated stream is an error and writes nothing" {
	stream "qparam x role=act type=uint8 scale=0.01 zp=0" \
	    "qparam c1 role=act type=uint8 scale=0.01 zp=0" | head -n 2 >qp
	echo old >q.onnx
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 1 ] || fail "status $status"
	[[ $stderr == "onnx-qdq-insert: qp:"*"end"* ]] || fail "$stderr"
	[ "$(cat q.onnx)" = old ] || fail "q.onnx replaced"
	run --separate-stderr onnx-qdq-insert "$QD/ops.onnx" <qp
	[ "$status" -eq 1 ] && [ -z "$output" ] || fail "wrote to stdout"
	# Bad values name the line and key.
	stream "qparam x role=act type=uint8 scale=-1 zp=0" >qp
	run --separate-stderr onnx-qdq-insert "$QD/ops.onnx" qp
	[ "$stderr" = "onnx-qdq-insert: qp:2: key scale: -1 is not a positive finite scale" ] ||
	    fail "$stderr"
	stream "qparam x role=act type=uint8 scale=1 zp=300" >qp
	run --separate-stderr onnx-qdq-insert "$QD/ops.onnx" qp
	[ "$stderr" = "onnx-qdq-insert: qp:2: key zp: 300 is out of the range of uint8" ] ||
	    fail "$stderr"
	stream "qparam x role=act type=uint8 scale=1 zp=0" \
	    "qparam x role=act type=uint8 scale=1 zp=0" >qp
	run --separate-stderr onnx-qdq-insert "$QD/ops.onnx" qp
	[ "$stderr" = "onnx-qdq-insert: qp:3: a second qparam record for x" ] ||
	    fail "$stderr"
}

@test "qdq-insert: a stream made from another model: a warning" {
	qp ops >qp
	"$PY" -c "
import onnx
m = onnx.load('$QD/ops.onnx')
m.producer_version = 'other'
onnx.save(m, 'other.onnx')"
	run --separate-stderr onnx-qdq-insert -o q.onnx other.onnx qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $stderr == "onnx-qdq-insert: warning: qp was made from another model (sha256 "*"..., other.onnx has "*"...)" ]] ||
	    fail "$stderr"
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/ops.onnx" qp
	[ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$stderr"
}

# edited_refused SED MESSAGE: qp edited by SED is refused for ops.onnx,
# naming the edited line: "qe:LINE: MESSAGE ops.onnx (a stream ...)".
edited_refused() {
	local line

	sed "$1" qp >qe
	line=$(cmp qp qe | sed 's/.* line //')
	[ -n "$line" ] || fail "sed $1 changed nothing"
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/ops.onnx" qe
	[ "$status" -eq 1 ] || fail "status $status"
	[ "$stderr" = "onnx-qdq-insert: qe:$line: $2 $QD/ops.onnx (a stream made from another model?)" ] ||
	    fail "$stderr"
}

@test "qdq-insert: a record whose shape or type is not the model's: an error" {
	# Wm widened to 64x12: the same names, a per-tensor scale computed
	# for another tensor; only the hash told before.
	qp ops --per-tensor >qp
	"$PY" -c "
import onnx, numpy as np
from onnx import numpy_helper
m = onnx.load('$QD/ops.onnx')
for t in m.graph.initializer:
    if t.name == 'Wm':
        a = numpy_helper.to_array(t)
        t.CopyFrom(numpy_helper.from_array(np.concatenate([a, a[:, :2]], 1), 'Wm'))
onnx.save(m, 'wide.onnx')"
	line=$(grep -n "^weight	Wm	" qp | cut -d: -f1)
	run --separate-stderr onnx-qdq-insert -o q.onnx wide.onnx qp
	[ "$status" -eq 1 ] && [ ! -e q.onnx ] || fail "status $status"
	[[ $stderr == *"
onnx-qdq-insert: qp:$line: weight Wm: shape 64x10 in the stream, 64x12 in wide.onnx (a stream made from another model?)" ]] ||
	    fail "$stderr"
	# A type, and a graph input's static shape (the batch is not compared).
	edited_refused 's/^\(weight	K	.*\)dtype=float	/\1dtype=double	/' \
	    "weight K: type double in the stream, float in"
	edited_refused 's/^\(stat	x	.*\)shape=1x3x8x8	/\1shape=1x3x9x9	/' \
	    "stat x: shape 1x3x9x9 in the stream, 1x3x8x8 in"
	sed 's/^\(stat	x	.*\)shape=1x3x8x8	/\1shape=5x3x8x8	/' qp >qb
	run --separate-stderr onnx-qdq-insert -o q.onnx "$QD/ops.onnx" qb
	[ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$stderr"
}

@test "qdq-insert: models with external data, and --external-data" {
	"$PY" "$FIX" wide wide.onnx
	samples wide.onnx calib 2 1
	samples wide.onnx eval 2 2
	"$PY" "$FIX" external wide.onnx ext.onnx
	[ -s ext.onnx.data ] || fail "no external data written"
	qstream ext.onnx calib >qp
	run --separate-stderr onnx-qdq-insert -o q.onnx ext.onnx qp
	[ "$status" -eq 0 ] || fail "$stderr"
	run --separate-stderr onnx-qdq-insert --external-data -o qx.onnx ext.onnx qp
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -s qx.onnx.*.data ] || fail "no qx.onnx.XXXXXX.data"
	[ "$(stat -c %s qx.onnx)" -lt "$(stat -c %s q.onnx)" ] || fail "not external"
	ort_out q.onnx eval a
	run ort_out qx.onnx eval b --ref a
	[ "$output" = "$(printf 'y\tsnr=inf\tmaxabs=0')" ] || fail "$output"
}

@test "qdq-insert: usage mistakes exit 2" {
	run --separate-stderr onnx-qdq-insert - -
	[ "$status" -eq 2 ] || fail "status $status"
	[[ $stderr == *"MODEL and QPARAMS cannot both be the standard input"* ]] ||
	    fail "$stderr"
	run --separate-stderr onnx-qdq-insert --qdq-domain nope m.onnx
	[ "$status" -eq 2 ] || fail "status $status"
	[[ $stderr == "onnx-qdq-insert: --qdq-domain: 'nope' is not auto, onnx or com.microsoft"* ]] ||
	    fail "$stderr"
	run --separate-stderr onnx-qdq-insert
	[ "$status" -eq 2 ] && [[ $stderr == usage:* ]] || fail "status $status"
}

@test "qdq-insert: the opset table is what scripts/gen-opset-table.py makes" {
	run --separate-stderr "$PY" "$ONNXQ_ROOT/scripts/gen-opset-table.py" --check \
	    "$ONNXQ_ROOT/lib/opset.c"
	[ "$status" -eq 0 ] || fail "$stderr"
	# And --check notices a stale table.
	sed 's/{ "Clip",                  11, OPSET_REWRITE }/{ "Clip", 11, OPSET_SAME }/' \
	    "$ONNXQ_ROOT/lib/opset.c" >opset.c
	run --separate-stderr "$PY" "$ONNXQ_ROOT/scripts/gen-opset-table.py" --check opset.c
	[ "$status" -eq 1 ] || fail "status $status"
	[ "$stderr" = "gen-opset-table: opset.c: the table is out of date" ] || fail "$stderr"
}

# ocr_data MODEL SHAPE: 2 document-like calibration samples and their
# statistics, 1 other sample and the fp32 model's outputs on it (ORT).
ocr_data() {
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 --seed 1 --kind doc \
	    --shape "x=$2" "$1" calib >/dev/null || fail "make-inputs"
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 1 --seed 2 --kind doc \
	    --shape "x=$2" "$1" eval >/dev/null || fail "make-inputs"
	onnx-calib --quiet -d calib "$1" >stats || fail "onnx-calib failed"
	ort_out "$1" eval ref >/dev/null || fail "ORT fp32"
}

# ocr_q MODEL QPARAMS-OPTIONS...: quantize into q.onnx, check it (listing
# in show.txt), run it in ORT; prints ORT's SNR line against fp32.
ocr_q() {
	local model=$1

	shift
	onnx-qparams --all-ops -m minmax "$@" stats >qp || fail "onnx-qparams failed"
	onnx-qdq-insert -o q.onnx "$model" qp || fail "onnx-qdq-insert failed"
	"$PY" "$FIX" show q.onnx >show.txt || fail "checker: q.onnx"
	rm -rf qout
	# (ORT's warnings, as on the bounds of folded Clips, not in $output.)
	ort_out q.onnx eval qout --ref ref 2>ort.err ||
	    fail "ORT cannot run q.onnx: $(cat ort.err)"
}

# snr_above LINE DB
snr_above() {
	local s

	s=$(awk '{ sub(/snr=/, "", $2); print $2 }' <<<"$1")
	awk -v s="$s" -v m="$2" 'BEGIN { exit !(s > m) }' ||
	    fail "SNR $s dB, want more than $2: $1"
}

@test "qdq-insert: PaddleOCR v4 rec: per channel raised to 13; 16-bit in com.microsoft" {
	need_models
	ocr_data "$OCR_REC" 1x3x48x320
	run ocr_q "$OCR_REC"
	[ "$status" -eq 0 ] || fail "$output"
	grep -q '^opset onnx 13$' show.txt || fail "not raised"
	# 398 pairs less the two Relu inputs folded away.
	[ "$(grep -c '^node QuantizeLinear onnx' show.txt)" = 396 ] ||
	    fail "$(grep -c '^node QuantizeLinear' show.txt) QuantizeLinear"
	snr_above "$output" 3
	[ "$(stat -c %s q.onnx)" -lt $(( $(stat -c %s "$OCR_REC") * 32 / 100 )) ] ||
	    fail "q.onnx is $(stat -c %s q.onnx) bytes"
	run ocr_q "$OCR_REC" -a uint16
	[ "$status" -eq 0 ] || fail "$output"
	grep -q '^opset com.microsoft 1$' show.txt || fail "no com.microsoft"
	# raised to 10 only, where ORT's fused QLinearConv exists (#17)
	grep -q '^opset onnx 10$' show.txt || fail "opset not 10"
	snr_above "$output" 12
	# Our interpreter agrees with ORT on it. (In 8 bits, the rare
	# rounding ties that float summation order decides grow along the
	# network: about 22 dB apart.)
	for s in eval/*/; do
		cp qout/"$(basename "$s")"/*.npy "$s"
	done
	run --separate-stderr onnx-verify -d eval --atol 1 --rtol 0 --min-snr 50 q.onnx
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
}

@test "qdq-insert: PaddleOCR v4 det per channel, mobile v2 cls per tensor" {
	need_models
	ocr_data "$OCR_DET" 1x3x320x320
	run ocr_q "$OCR_DET"
	[ "$status" -eq 0 ] || fail "$output"
	grep -q '^opset onnx 13$' show.txt || fail "det not raised"
	# All 36 Relu and Clip nodes fold into their producers.
	[ "$(grep -cE '^node (Relu|Clip) ' show.txt)" = 0 ] ||
	    fail "$(grep -cE '^node (Relu|Clip) ' show.txt) left"
	snr_above "$output" 3
	rm -rf calib eval ref
	ocr_data "$OCR_CLS" 1x3x48x192
	run ocr_q "$OCR_CLS" --per-tensor
	[ "$status" -eq 0 ] || fail "$output"
	grep -q '^opset onnx 10$' show.txt || fail "cls not raised to 10"
	snr_above "$output" 3
}
