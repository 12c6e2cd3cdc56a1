#!/usr/bin/env bats
# calib-fused.bats: while it calibrates, the interpreter still runs the
# elementwise chains fused (lib/fuse.c), and the calibration counts each
# link's values block by block as they are made (lib/calib.c, the slots
# of lib/statkern.c); the stream must be byte for byte the one of the
# chains run node by node (ONNXQ_NO_FUSE=1): on the chains fixture and
# its samples (NaN, infinities: a derived Clip whose source held one
# makes the chain run node by node after all), at several histogram
# widths, thread counts, batches of two samples, as shards merged, and
# on the real OCR models (det's large tensors take both threads).
# Needs: the built onnx-calib, the fixtures make check generates,
# /usr/bin/python3 with numpy; the last test scripts/fetch-models.

load helpers

PY=/usr/bin/python3
DATA=$ONNXQ_FIXTURES/statderive

# Both ways, with arguments "$@"; the streams must be the same bytes.
same_both_ways() {
	onnx-calib -q "$@" 2>/dev/null | grep -v '^#prog' >fused
	ONNXQ_NO_FUSE=1 onnx-calib -q "$@" 2>/dev/null | grep -v '^#prog' \
	    >nodes
	cmp fused nodes
	grep -q '^stat' fused
}

@test "calib-fused: chains fixture, streams as node by node, every width" {
	cd "$BATS_TEST_TMPDIR"
	same_both_ways -d "$DATA/in" "$DATA/chains.onnx"
	same_both_ways --threads 1 -d "$DATA/in" "$DATA/chains.onnx"
	same_both_ways --threads 3 --hist-bits 3 \
	    -d "$DATA/in" "$DATA/chains.onnx"
	same_both_ways --hist-bits 0 -d "$DATA/in" "$DATA/chains.onnx"
	same_both_ways --hist-bits 10 -d "$DATA/in" "$DATA/chains.onnx"
	same_both_ways --batch 2 --annotate -d "$DATA/in" "$DATA/chains.onnx"
	# and with nothing derived
	ONNXQ_NO_DERIVE=1 same_both_ways -d "$DATA/in" "$DATA/chains.onnx"
}

@test "calib-fused: shards merged give the run's stream" {
	cd "$BATS_TEST_TMPDIR"
	onnx-calib -q -d "$DATA/in" "$DATA/chains.onnx" 2>/dev/null >whole
	onnx-calib -q --shard 1/2 -d "$DATA/in" "$DATA/chains.onnx" \
	    2>/dev/null >s1
	ONNXQ_NO_FUSE=1 onnx-calib -q --shard 2/2 -d "$DATA/in" \
	    "$DATA/chains.onnx" 2>/dev/null >s2
	onnx-calib --merge s2 s1 >merged
	grep -v '^#' whole >a
	grep -v '^#' merged >b
	cmp a b
}

@test "calib-fused: real models, streams as node by node" {
	need_models
	cd "$BATS_TEST_TMPDIR"
	for m in "$OCR_CLS:1x3x48x192:2" "$OCR_REC:1x3x48x320:2" \
	    "$OCR_DET:1x3x320x320:1"; do
		set -- ${m//:/ }
		rm -rf in
		"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n "$3" \
		    --shape "x=$2" "$1" in >/dev/null
		same_both_ways -d in "$1"
		[ "$1" != "$OCR_REC" ] || same_both_ways --threads 1 -d in "$1"
	done
}
