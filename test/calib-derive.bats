#!/usr/bin/env bats
# calib-derive.bats: onnx-calib derives the statistics of copies and the
# histograms of Relu, Clip, Transpose and Concat outputs from their
# inputs' (lib/statderive.c); the stream must be byte for byte the one
# computed from the values (ONNXQ_NO_DERIVE=1): on the statderive
# fixtures and their samples (NaN, infinities, -0, the Clip bounds), at
# several histogram widths, thread counts, batches of two samples, and
# as shards merged; and on the real OCR models.
# Needs: the built onnx-calib, the fixtures make check generates,
# /usr/bin/python3 with numpy; the last test scripts/fetch-models.

load helpers

PY=/usr/bin/python3
DATA=$ONNXQ_FIXTURES/statderive

# Both ways, with arguments "$@"; the streams must be the same bytes.
same_both_ways() {
	onnx-calib -q "$@" >derived
	ONNXQ_NO_DERIVE=1 onnx-calib -q "$@" >computed
	cmp derived computed
	grep -q '^stat' derived
}

@test "calib-derive: fixtures, streams as computed, every width and threads" {
	cd "$BATS_TEST_TMPDIR"
	for m in derive clip10; do
		same_both_ways -d "$DATA/in" "$DATA/$m.onnx"
		same_both_ways --hist-bits 3 --threads 1 \
		    -d "$DATA/in" "$DATA/$m.onnx"
		same_both_ways --hist-bits 10 \
		    -d "$DATA/in" "$DATA/$m.onnx"
		same_both_ways --hist-bits 0 --threads 3 \
		    -d "$DATA/in" "$DATA/$m.onnx"
		same_both_ways --batch 2 --annotate \
		    -d "$DATA/in" "$DATA/$m.onnx"
	done
}

@test "calib-derive: shards merged give the run's stream" {
	cd "$BATS_TEST_TMPDIR"
	onnx-calib -q -d "$DATA/in" "$DATA/derive.onnx" >whole
	onnx-calib -q --shard 1/2 -d "$DATA/in" \
	    "$DATA/derive.onnx" >s1
	ONNXQ_NO_DERIVE=1 onnx-calib -q --shard 2/2 \
	    -d "$DATA/in" "$DATA/derive.onnx" >s2
	onnx-calib --merge s2 s1 >merged
	grep -v '^#' whole >a
	grep -v '^#' merged >b
	cmp a b
}

@test "calib-derive: real models, streams as computed" {
	need_models
	cd "$BATS_TEST_TMPDIR"
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 --shape x=1x3x48x192 \
	    "$OCR_CLS" cls >/dev/null
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 --shape x=1x3x48x320 \
	    "$OCR_REC" rec >/dev/null
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 1 \
	    --shape x=1x3x320x320 "$OCR_DET" det >/dev/null
	same_both_ways -d cls "$OCR_CLS"
	same_both_ways -d rec "$OCR_REC"
	same_both_ways -d det "$OCR_DET"
}
