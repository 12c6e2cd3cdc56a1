#!/usr/bin/env bats
# calib-derive.bats: onnx-calib derives the statistics of copies and the
# histograms of Relu, Clip, Transpose and Concat outputs from their
# inputs' (lib/statderive.c); the stream must be byte for byte the one
# computed from the values (ONNXQ_NO_DERIVE=1): on the statderive
# fixtures with samples holding NaN, infinities, -0 and the Clip bounds,
# at several histogram widths, thread counts, batches of two samples,
# and as shards merged; and
# on the real OCR models.
# Needs: the built onnx-calib, the fixtures make check generates,
# /usr/bin/python3 with numpy; the last test scripts/fetch-models.

load helpers

PY=/usr/bin/python3
DATA=$ONNXQ_FIXTURES/statderive

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$PY" - <<'EOF2'
import os
import numpy as np
rng = np.random.default_rng(21)
special = np.array([0, -0.0, 6, -1.5, 2.75, 0.5, -2, 3, 1e-40, -1e30,
    np.nextafter(np.float32(6), np.float32(7)), np.nan, np.inf, -np.inf],
    np.float32)
for s in range(4):
    x = rng.uniform(-8, 8, (1, 4, 64, 128)).astype(np.float32)
    pick = rng.random(x.shape) < 0.3
    # the first two samples hold no infinity, so Clip derives there
    sp = special[:11] if s < 2 else special
    x[pick] = rng.choice(sp, int(pick.sum()))
    os.makedirs("in/s%d" % s, exist_ok=True)
    np.save("in/s%d/x.npy" % s, x)
EOF2
}

# Both ways, with arguments "$@"; the streams must be the same bytes.
same_both_ways() {
	onnx-calib -q "$@" >derived
	ONNXQ_NO_DERIVE=1 onnx-calib -q "$@" >computed
	cmp derived computed
	grep -q '^stat' derived
}

@test "calib-derive: fixtures, streams as computed, every width and threads" {
	for m in derive clip10; do
		same_both_ways -d "$BATS_FILE_TMPDIR/in" "$DATA/$m.onnx"
		same_both_ways --hist-bits 3 --threads 1 \
		    -d "$BATS_FILE_TMPDIR/in" "$DATA/$m.onnx"
		same_both_ways --hist-bits 10 \
		    -d "$BATS_FILE_TMPDIR/in" "$DATA/$m.onnx"
		same_both_ways --hist-bits 0 --threads 3 \
		    -d "$BATS_FILE_TMPDIR/in" "$DATA/$m.onnx"
		same_both_ways --batch 2 --annotate \
		    -d "$BATS_FILE_TMPDIR/in" "$DATA/$m.onnx"
	done
}

@test "calib-derive: shards merged give the run's stream" {
	cd "$BATS_TEST_TMPDIR"
	onnx-calib -q -d "$BATS_FILE_TMPDIR/in" "$DATA/derive.onnx" >whole
	onnx-calib -q --shard 1/2 -d "$BATS_FILE_TMPDIR/in" \
	    "$DATA/derive.onnx" >s1
	ONNXQ_NO_DERIVE=1 onnx-calib -q --shard 2/2 \
	    -d "$BATS_FILE_TMPDIR/in" "$DATA/derive.onnx" >s2
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
