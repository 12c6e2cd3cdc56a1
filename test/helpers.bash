# helpers.bash: what every onnxq bats file loads first, with `load helpers`.
#
#   PATH          the programs under test ($ONNXQ_BIN) and the test tools
#                 ($ONNXQ_TOOLS) come first. make check sets both; a bats
#                 run by hand gets build/bin and build/test/tools.
#   ONNXQ_ROOT    the top of the source tree; TESTDATA is its test/data.
#   ONNXQ_FIXTURES  models make check generates from test/data/*/
#                 make-fixtures.py (build/test/fixtures by default).
#   setup         runs each test in a fresh empty directory of its own,
#                 which is also $T. A file with its own setup() calls
#                 onnxq_setup first.
#   models_dir    prints the model cache (scripts/fetch-models fetches
#                 what is missing).
#   need_models   sets MODELS (the cache) and OCR_DET, OCR_REC, OCR_CLS,
#                 OWW_HELLO (model paths); fails the test when the models
#                 cannot be had (skips it instead if ONNXQ_MODELS_OPTIONAL=1).
#   ort_node ARGS runs node ARGS with onnxruntime-node on NODE_PATH, so a
#                 script can require('onnxruntime-node'); fails like
#                 need_models when it cannot be had.
#   fail MSG...   fails the test, saying each MSG on a line of its own.
# Tests use `run --separate-stderr` to check stdout and stderr apart.

bats_require_minimum_version 1.5.0

ONNXQ_ROOT=${ONNXQ_ROOT:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
ONNXQ_BIN=${ONNXQ_BIN:-$ONNXQ_ROOT/build/bin}
ONNXQ_TOOLS=${ONNXQ_TOOLS:-$ONNXQ_ROOT/build/test/tools}
ONNXQ_FIXTURES=${ONNXQ_FIXTURES:-$ONNXQ_ROOT/build/test/fixtures}
TESTDATA=$ONNXQ_ROOT/test/data
PATH=$ONNXQ_BIN:$ONNXQ_TOOLS:$PATH
export ONNXQ_ROOT ONNXQ_BIN ONNXQ_TOOLS ONNXQ_FIXTURES TESTDATA PATH

if ! declare -F fail >/dev/null; then
	fail() {
		printf '%s\n' "$@" >&2
		return 1
	}
fi

onnxq_setup() {
	T=$BATS_TEST_TMPDIR
	cd "$T" || return 1
}

setup() {
	onnxq_setup
}

models_dir() {
	"$ONNXQ_ROOT/scripts/fetch-models"
}

# unavailable WHAT ERRORS: the end of need_models and ort_node when the
# cache cannot be filled.
unavailable() {
	if [ "${ONNXQ_MODELS_OPTIONAL:-}" = 1 ]; then
		skip "$1 unavailable (ONNXQ_MODELS_OPTIONAL=1)"
	fi
	fail "$1 unavailable: scripts/fetch-models failed" \
	    "(set ONNXQ_MODELS_OPTIONAL=1 to skip such tests):" "$2"
}

need_models() {
	local err

	if ! MODELS=$(models_dir 2>"$BATS_TEST_TMPDIR/fetch-models.err"); then
		err=$(cat "$BATS_TEST_TMPDIR/fetch-models.err")
		unavailable "real models" "$err"
		return
	fi
	OCR_DET=$MODELS/ocr/package/assets/ch_PP-OCRv4_det_infer.onnx
	OCR_REC=$MODELS/ocr/package/assets/ch_PP-OCRv4_rec_infer.onnx
	OCR_CLS=$MODELS/ocr/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
	OWW_HELLO=$MODELS/oww/package/models/hello_deepa.onnx
	export MODELS OCR_DET OCR_REC OCR_CLS OWW_HELLO
}

# rec_calibrated N: PaddleOCR v4 rec as rec.onnx here, calibrated on N
# deterministic inputs (data/) into rec.stats. Needs the model cache.
rec_calibrated() {
	need_models
	ln -s "$OCR_REC" rec.onnx
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n "$1" \
	    --shape x=1x3x48x320 rec.onnx data >/dev/null
	onnx-calib -q -d data rec.onnx >rec.stats
}

ort_node() {
	local dir err

	if ! dir=$(models_dir 2>"$BATS_TEST_TMPDIR/fetch-models.err"); then
		err=$(cat "$BATS_TEST_TMPDIR/fetch-models.err")
		unavailable "onnxruntime-node" "$err"
		return
	fi
	NODE_PATH=$dir/ortnode/node_modules${NODE_PATH:+:$NODE_PATH} node "$@"
}

# op_count MODEL OP: how many OP nodes MODEL has, after onnx.checker
# (fails when the checker does).
op_count() {
	/usr/bin/python3 -c 'import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
print(sum(n.op_type == sys.argv[2] for n in m.graph.node))' "$1" "$2"
}
