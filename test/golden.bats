#!/usr/bin/env bats
# golden.bats: the pipeline's outputs on the real models stay byte for byte
# what test/data/golden/SHA256SUMS records (test/golden-run says what runs).
# A refactor changes none of them; a bug fix that changes one updates the
# file in its own commit, and the commit says what changed and why.
# Under valgrind the run is too slow (minutes of mixprec search), and
# without AVX-512 float sums round differently, so it is skipped there.

load helpers

setup() {
	onnxq_setup
	need_models
}

@test "golden: streams and models are the recorded ones" {
	[ "${ONNXQ_VALGRIND:-}" = 1 ] && skip "under valgrind"
	# Under the sanitizers rec's --target-snr search alone takes over
	# ten minutes: it is left out there, and the rest compared.
	if [ "${ONNXQ_SANITIZE:-}" = 1 ]; then
		export ONNXQ_GOLDEN_QUICK=1
		grep -v ' rec\.target\.' "$TESTDATA/golden/SHA256SUMS" >want
	else
		cp "$TESTDATA/golden/SHA256SUMS" want
	fi
	run --separate-stderr "$ONNXQ_ROOT/test/golden-run" out
	[ "$status" -eq 0 ] || fail "golden-run: exit $status" "$stderr"
	diff -u want <(printf '%s\n' "$output") >diff.txt ||
	    fail "outputs differ from test/data/golden/SHA256SUMS:" "$(cat diff.txt)"
}

# The comparison must be able to fail: one changed setting changes a sum.
@test "golden: a changed stream is caught" {
	[ "${ONNXQ_VALGRIND:-}" = 1 ] && skip "under valgrind"
	ln -s "$OCR_CLS" cls.onnx
	onnx-calib -q --weights-only cls.onnx >cls.wstats
	onnx-qparams cls.wstats | grep -v '^#prog' | sha256sum >a
	onnx-qparams -w uint8 cls.wstats | grep -v '^#prog' | sha256sum >b
	! cmp -s a b
}
