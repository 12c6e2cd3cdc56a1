#!/usr/bin/env bats
# e2e.bats: the whole pipeline on PaddleOCR v4 det and rec and the mobile
# v2 direction classifier, with data scripts/make-ocr-data renders:
#
#	onnx-calib -d CALIB MODEL | onnx-qparams | onnx-qdq-insert MODEL > QMODEL
#
# with onnx-qparams' defaults, then ONNX Runtime (onnxruntime-node) runs
# MODEL and QMODEL on evaluation data (test/ocr-eval.js) and the figures
# must reach floors: the output SNR of QMODEL against MODEL, and the
# recognition accuracy (greedy CTC decoding with the model's key file,
# exact match). The target for rec: quantized accuracy within 3 points of
# fp32 on the demo's evaluation set (scripts/demo: 200 lines, seed 2),
# calibrated on the demo's calibration set (64 lines, seed 1: with 32
# lines minmax ranges lost 5 points more). Calibration is kept small for
# the others: 32 cls lines, 8 det pages at 320x320. Our interpreter must run the QDQ rec model as ORT does.
# Figures go to the TAP stream as comments.
# Needs: scripts/fetch-models (models, onnxruntime-node), node,
# /usr/bin/python3 with onnx, numpy and Pillow (python3-pil), the fonts of
# scripts/make-ocr-data, the built programs.

load helpers

# The demo's evaluation set and the floors (measured, less a margin).
REC_EVAL_N=200
REC_EVAL_SEED=2
REC_CALIB_N=64
REC_CALIB_SEED=1
REC_FP32_MIN_ACC=80	# the rendered lines are legible to the fp32 model
# Points of accuracy the defaults may lose: the issue's target. The
# defaults (weight-carrying ops, mse ranges, per-channel s8 weights, u8
# activations) lose 1.5-2.5 on this set (88.5% -> 86-87%, 14 dB) and 1.5 on
# another (seeds 3/4: 94% -> 92.5%); quantizing every op lost 9.5 and 33.
REC_MAX_DROP=3
REC_MIN_SNR=12
CLS_MIN_ACC=95
CLS_MIN_SNR=30		# measured 36.0 dB (all ops, minmax: 31.7)
DET_MIN_SNR=12		# measured 14.7 dB (all ops, minmax: 12.2)
DET_MIN_IOU=90		# text mask (p > 0.3) against fp32's, in percent (95.4)
REC_ORT_SNR=15		# our interpreter against ORT on the QDQ rec model

# Under valgrind (make check-valgrind) the programs run some 50 times
# slower: rec calibrates on 8 lines, and the accuracy floors, which need
# the 64, are shown rather than asserted. The runs are what that build
# checks (memory errors, leaks); plain builds assert the floors.
if [ "${ONNXQ_VALGRIND:-}" = 1 ]; then
	REC_CALIB_N=8
	REC_ORT_SNR=5
fi

# floors: 0 when the accuracy floors are asserted (not under valgrind).
floors() {
	[ "${ONNXQ_VALGRIND:-}" != 1 ] && return 0
	printf '# under valgrind: floors not asserted\n' >&3
	return 1
}

setup() {
	onnxq_setup
	need_models
	F=$BATS_FILE_TMPDIR
}

# data TASK NAME N SEED [SIZE]: render F/NAME once.
data() {
	[ -d "$F/$2" ] && return 0
	run --separate-stderr "$ONNXQ_ROOT/scripts/make-ocr-data" --task "$1" \
	    -n "$3" --seed "$4" ${5:+--size "$5"} "$F/$2"
	[ "$status" -eq 0 ] || fail "make-ocr-data $*: $stderr"
}

# quantize MODEL CALIB QMODEL: the canonical pipeline, each stage's status
# checked, and a look at the model it made.
quantize() {
	local st

	# In a || list, so that bats' errexit lets PIPESTATUS be read.
	{
		onnx-calib --quiet -d "$2" "$1" 2>"$T/calib.err" |
		    onnx-qparams 2>"$T/qparams.err" |
		    onnx-qdq-insert "$1" >"$3" 2>"$T/insert.err"
		st=("${PIPESTATUS[@]}")
	} || true
	[ "${st[*]}" = "0 0 0" ] ||
	    fail "pipeline exit statuses ${st[*]}:" "$(cat "$T"/*.err)"
	run --separate-stderr /usr/bin/python3 - "$1" "$3" <<'EOF'
import collections, os, sys
import onnx
m = onnx.load(sys.argv[2])
onnx.checker.check_model(m)
ops = collections.Counter(n.op_type for n in m.graph.node)
a, b = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])
print("%s: %d bytes -> %d, %d QuantizeLinear, %d DequantizeLinear" %
      (os.path.basename(sys.argv[1]), a, b, ops["QuantizeLinear"],
       ops["DequantizeLinear"]))
sys.exit(0 if ops["QuantizeLinear"] >= 10 and ops["DequantizeLinear"] >= 20
         and b < a * 0.6 else 1)
EOF
	printf '# %s\n' "${lines[@]}" >&3
	[ "$status" -eq 0 ] || fail "$3 is not a QDQ model of $1: $output $stderr"
}

# evaluate ARGS: test/ocr-eval.js ARGS; the table in $output, shown in
# the TAP stream.
evaluate() {
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ocr-eval.js" "$@"
	[ "$status" -eq 0 ] || fail "ocr-eval $*: exit $status: $stderr"
	printf '# %s\n' "${lines[@]}" >&3
}

# col ROW COLUMN: a figure of the table in $output (ROW from 1 after the
# header, COLUMN by name).
col() {
	awk -v row="$1" -v name="$2" '
	    NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
	    NR == row + 1 { print $c }' <<<"$output"
}

# ge A B: A >= B, as decimals.
ge() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0 && a != "") }'
}

@test "e2e: rec: the canonical pipeline keeps accuracy within ${REC_MAX_DROP} points in ORT" {
	data rec rec-calib "$REC_CALIB_N" "$REC_CALIB_SEED"
	data rec rec-eval "$REC_EVAL_N" "$REC_EVAL_SEED"
	quantize "$OCR_REC" "$F/rec-calib" "$F/rec.qdq.onnx"
	evaluate "$F/rec-eval" "$OCR_REC" "$F/rec.qdq.onnx"
	local fa qa snr
	floors || return 0
	fa=$(col 1 accuracy) qa=$(col 2 accuracy) snr=$(col 2 snr_db)
	ge "$fa" "$REC_FP32_MIN_ACC" ||
	    fail "fp32 accuracy $fa% < $REC_FP32_MIN_ACC%: the data is not legible"
	ge "$snr" "$REC_MIN_SNR" || fail "rec SNR $snr dB < $REC_MIN_SNR dB"
	ge "$qa" "$(awk -v a="$fa" -v d="$REC_MAX_DROP" 'BEGIN { print a - d }')" ||
	    fail "quantized accuracy $qa% is more than $REC_MAX_DROP points" \
	    "below fp32's $fa%"
}

# Int8 noise compounds through rec's ~400 quantized tensors, so a
# rounding difference between two runtimes (a value on a rounding tie, an
# int8 kernel's requantization) grows into a visible one. What must hold:
# our interpreter's QDQ outputs differ from fp32 as much as ORT's do, and
# stay near ORT's outputs with optimizations off (the graph as written),
# and read about as many lines right.
@test "e2e: rec: our interpreter runs the QDQ model as ORT does" {
	local n a b sa sb

	[ -s "$F/rec.qdq.onnx" ] || {
		data rec rec-calib "$REC_CALIB_N" "$REC_CALIB_SEED"
		quantize "$OCR_REC" "$F/rec-calib" "$F/rec.qdq.onnx"
	}
	data rec rec-eval "$REC_EVAL_N" "$REC_EVAL_SEED"
	# 24 lines of the evaluation set, with the outputs of ORT (graph
	# optimizations off) as the expected ones.
	mkdir sub
	for n in $(seq -f 's%04g' 0 23); do
		cp -r "$F/rec-eval/$n" sub/
	done
	head -n 24 "$F/rec-eval/labels.txt" >sub/labels.txt
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-qdq-check.js" \
	    --out ort "$F/rec.qdq.onnx" sub
	[ "$status" -eq 0 ] || fail "ort-qdq-check: $stderr"
	cp -r ort/. sub/
	run --separate-stderr onnx-verify -d sub --atol 1 --min-snr "$REC_ORT_SNR" \
	    --save-outputs ours "$F/rec.qdq.onnx"
	printf '# %s\n' "${lines[@]}" >&3
	[ "$status" -eq 0 ] || fail "onnx-verify: exit $status: $output $stderr"
	# fp32 in ORT, QDQ in ORT (optimized), QDQ in ORT as written, ours.
	evaluate --keys "${OCR_REC%/*}/ppocr_keys_v1.txt" sub "$OCR_REC" \
	    "$F/rec.qdq.onnx" ort ours
	[ "$(col 4 samples)" = 24 ] || fail "ours: not 24 samples"
	floors || return 0
	sa=$(col 3 snr_db) sb=$(col 4 snr_db)
	awk -v a="$sa" -v b="$sb" 'BEGIN { d = a - b; exit !((d < 0 ? -d : d) <= 2) }' ||
	    fail "our QDQ outputs are $sb dB from fp32, ORT's $sa dB:" \
	    "more than 2 dB apart"
	a=$(col 3 accuracy) b=$(col 4 accuracy)
	awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !((d < 0 ? -d : d) <= 17) }' ||
	    fail "our interpreter reads $b%, ORT $a% of the same lines"
}

@test "e2e: cls: the canonical pipeline keeps the direction classifier" {
	data cls cls-calib 32 1
	data cls cls-eval 100 2
	quantize "$OCR_CLS" "$F/cls-calib" cls.qdq.onnx
	evaluate --task cls "$F/cls-eval" "$OCR_CLS" cls.qdq.onnx
	local fa qa snr
	fa=$(col 1 accuracy) qa=$(col 2 accuracy) snr=$(col 2 snr_db)
	ge "$fa" "$CLS_MIN_ACC" || fail "fp32 accuracy $fa% < $CLS_MIN_ACC%"
	ge "$qa" "$CLS_MIN_ACC" || fail "quantized accuracy $qa% < $CLS_MIN_ACC%"
	ge "$snr" "$CLS_MIN_SNR" || fail "cls SNR $snr dB < $CLS_MIN_SNR dB"
}

@test "e2e: det: the canonical pipeline keeps the text map at 320x320" {
	data det det-calib 8 1 320x320
	data det det-eval 4 2 320x320
	quantize "$OCR_DET" "$F/det-calib" det.qdq.onnx
	evaluate --task det "$F/det-eval" "$OCR_DET" det.qdq.onnx
	local iou snr
	iou=$(col 2 accuracy) snr=$(col 2 snr_db)
	ge "$snr" "$DET_MIN_SNR" || fail "det SNR $snr dB < $DET_MIN_SNR dB"
	ge "$iou" "$DET_MIN_IOU" ||
	    fail "text mask IoU $iou% < $DET_MIN_IOU% of fp32's"
}

@test "e2e: the floors can fail: a model with noise added is caught" {
	data cls cls-eval 100 2
	# Every convolution weight of the classifier (Constant nodes, in this
	# model) disturbed by 20% of its spread.
	/usr/bin/python3 - "$OCR_CLS" noisy.onnx <<'EOF' || fail "cannot disturb"
import sys
import numpy as np
import onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
rng = np.random.default_rng(1)
tensors = list(m.graph.initializer) + [a.t for n in m.graph.node
                                       if n.op_type == "Constant"
                                       for a in n.attribute if a.name == "value"]
changed = 0
for t in tensors:
    a = numpy_helper.to_array(t)
    if a.dtype == np.float32 and a.ndim == 4:
        a = a + rng.standard_normal(a.shape).astype(np.float32) * 0.2 * a.std()
        t.CopyFrom(numpy_helper.from_array(a, t.name))
        changed += 1
onnx.save(m, sys.argv[2])
sys.exit(0 if changed >= 20 else "only %d weights" % changed)
EOF
	evaluate --task cls "$F/cls-eval" "$OCR_CLS" noisy.onnx
	! ge "$(col 2 snr_db)" "$CLS_MIN_SNR" ||
	    fail "the disturbed model passes the SNR floor"
}
