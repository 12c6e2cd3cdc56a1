#!/usr/bin/env bats
# verify2.bats: onnx-verify MODEL QMODEL, the two-model form. Every figure
# (per output: SNR pooled and worst sample, MSE, max abs, cosine, top-1
# agreement, accuracy against labels; per tensor: the error carried and
# the error of the Q/DQ pair alone, clipping, grid use) is checked against
# test/data/verify/reference.py, which computes them with numpy alone; the
# table, TSV and JSON forms; sorting; --plot; the gates and exit statuses
# 0/1/2; the progress bar on a terminal; and, on PaddleOCR rec quantized
# by the real pipeline, that the per-tensor report puts the weights that
# per-tensor weight quantization breaks first.
# Needs: onnx-verify, /usr/bin/python3 with onnx and numpy, script(1) for
# the terminal test; the last test also onnx-calib, onnx-qparams,
# onnx-qdq-insert, the real models and onnxruntime-node
# (scripts/fetch-models), and node.

load helpers

V=$TESTDATA/verify

# Run onnx-verify on the fixture pair with the given options.
pair() {
	onnx-verify -d "$V/data" "$@" "$V/clf.onnx" "$V/clf-q.onnx"
}

@test "verify2: every figure matches numpy's (JSON)" {
	run --separate-stderr /usr/bin/python3 "$V/reference.py" "$V/data" "$V/labels.txt"
	[ "$status" -eq 0 ] || fail "reference.py: $stderr"
	printf '%s\n' "$output" >ref.json
	run --separate-stderr pair --per-tensor --labels "$V/labels.txt" --format json
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[ -z "$stderr" ]
	printf '%s\n' "$output" >got.json
	run /usr/bin/python3 - <<-'EOF'
	import json, math, sys
	ref, got = json.load(open("ref.json")), json.load(open("got.json"))
	assert got["samples"] == 6 and got["status"] == "ok", got
	assert got["model"].endswith("clf.onnx") and got["qmodel"].endswith("clf-q.onnx")
	outs = {o["name"]: o for o in got["outputs"]}
	tens = {t["dq"]: t for t in got["tensors"]}
	assert len(tens) == len(ref["tensors"]) == 8, sorted(tens)
	assert got["unmatched"] == [], got["unmatched"]
	bad = []

	def close(a, b):
	    if isinstance(a, list) or isinstance(b, list):
	        return (isinstance(a, list) and isinstance(b, list) and
	                len(a) == len(b) and all(map(close, a, b)))
	    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
	        return a == b
	    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-9)

	for kind, r, g in (("output", ref["outputs"], outs),
	                   ("tensor", ref["tensors"], tens)):
	    for name, want in r.items():
	        for k, v in want.items():
	            if not close(v, g[name].get(k, "missing")):
	                bad.append("%s %s %s: want %r got %r" %
	                           (kind, name, k, v, g[name].get(k, "missing")))
	# What matched what, and as which kind of tensor.
	names = {t["dq"]: (t["name"], t["role"], t["type"]) for t in got["tensors"]}
	assert names["h_convert_DequantizeLinear_Output"] == ("re lu/h%", "act", "uint16")
	assert names["logits"] == ("logits", "act", "uint8")
	assert names["W1_DequantizeLinear_Output"] == ("W1", "weight", "int8")
	assert names["b1_DequantizeLinear_Output"] == ("b1", "bias", "int32")
	assert "h_DequantizeLinear_Output_1" not in names   # same pair twice
	print("\n".join(bad))
	sys.exit(1 if bad else 0)
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "verify2: the table: outputs, then tensors worst first" {
	run --separate-stderr pair --per-tensor --labels "$V/labels.txt"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[ "${lines[0]}" = "output  samples  snr_db  worst_db   mse  max_abs    cosine  top1_%  acc_fp32_%  acc_q_%  status" ]
	[[ ${lines[1]} =~ ^logits\ +6\ +10\.5\ +9\.3\ .*\ 83\.33\ +33\.33\ +16\.67\ +ok$ ]] || fail "${lines[1]}"
	[[ ${lines[2]} =~ ^score\ +6\ .*\ -\ +-\ +-\ +ok$ ]] || fail "${lines[2]}"
	[ "${lines[3]}" = "tensor        role    type    snr_db  worst_db       mse  max_abs    cosine  own_snr_db  clip_%  grid_%" ]
	# Own SNR ascending: a1 (10.1 dB) first, the bias (56 dB) last; the
	# awkward name percent-escaped; a bias has no grid share.
	first=$(awk 'NR == 6 { print $1, $2, $3, $9 }' <<<"$output")
	[ "$first" = "a1 act uint8 10.1" ] || fail "$first"
	[[ ${lines[5]} == "re%20lu/h%25  act     uint8 "* ]] || fail "${lines[5]}"
	[[ ${lines[11]} =~ ^b1\ +bias\ +int32\ .*\ 56\.3\ +0\.00\ +-$ ]] || fail "${lines[11]}"
	[ "${#lines[@]}" -eq 12 ]
	own=$(awk 'NR > 5 { print $9 }' <<<"$output" | tr '\n' ' ')
	[ "$own" = "$(awk 'NR > 5 { print $9 }' <<<"$output" | sort -n | tr '\n' ' ')" ]
	# --sort graph: along the graph; --sort snr: by the error carried.
	run pair --per-tensor --sort graph --format tsv
	order=$(awk -F'\t' '$1 == "tensor" { print $18 }' <<<"$output" | tr '\n' ' ')
	[ "$order" = "$(awk -F'\t' '$1 == "tensor" { print $18 }' <<<"$output" | sort -n | tr '\n' ' ')" ]
	[ "$(awk -F'\t' '$1 == "tensor" { print $2 }' <<<"$output" | head -1)" = x ]
	[ "$(awk -F'\t' '$1 == "tensor" { print $2 }' <<<"$output" | tail -1)" = logits ]
	run pair --per-tensor --sort snr --format tsv
	snr=$(awk -F'\t' '$1 == "tensor" { print $4 }' <<<"$output")
	[ "$snr" = "$(sort -g <<<"$snr")" ]
}

@test "verify2: TSV: one header, one row per output and tensor, escaped names" {
	run --separate-stderr pair --per-tensor --labels "$V/labels.txt" --format tsv
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[ "${lines[0]}" = "$(printf '%s\t' kind name samples snr_db worst_snr_db worst_sample mse max_abs cosine top1_pct accuracy_pct ref_accuracy_pct outside_tol status dq role type order own_snr_db own_mse own_max_abs clip_pct grid_pct | sed 's/\t$//')" ]
	[ "${#lines[@]}" -eq 11 ]
	[ "$(awk -F'\t' '{ print NF }' <<<"$output" | sort -u)" = 23 ]
	[ "$(awk -F'\t' 'NR > 1 { print $1 }' <<<"$output" | uniq -c | awk '{ print $1 $2 }' | tr '\n' ' ')" = "2output 8tensor " ]
	[ "$(awk -F'\t' '$15 == "h_convert_DequantizeLinear_Output" { print $2, $17, $16 }' <<<"$output")" = "re%20lu/h%25 uint16 act" ]
	# Same figures as the JSON, to 9 digits.
	pair --per-tensor --labels "$V/labels.txt" --format json >got.json
	printf '%s\n' "$output" >got.tsv
	run /usr/bin/python3 - <<-'EOF'
	import json, math
	j = json.load(open("got.json"))
	rows = [l.rstrip("\n").split("\t") for l in open("got.tsv")]
	head = rows[0]
	for r in rows[1:]:
	    d = dict(zip(head, r))
	    if d["kind"] == "output":
	        o = next(o for o in j["outputs"] if o["name"] == d["name"])
	        pairs = [("snr_db", "snr_db"), ("cosine", "cosine"),
	                 ("top1_pct", "top1_agreement_pct")]
	    else:
	        o = next(t for t in j["tensors"] if t["dq"] == d["dq"])
	        pairs = [("snr_db", "snr_db"), ("own_snr_db", "own_snr_db"),
	                 ("clip_pct", "clip_pct"), ("mse", "mse")]
	    for a, b in pairs:
	        if d[a] == "-":
	            assert o[b] is None, (d["name"], a)
	        else:
	            assert math.isclose(float(d[a]), o[b], rel_tol=1e-8), (d["name"], a, d[a], o[b])
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "verify2: --plot draws per-tensor SNR along the graph as SVG" {
	run --separate-stderr pair --plot snr.svg -q
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[ -z "$output" ]
	[ -s snr.svg ]
	# Written to a temporary and renamed: nothing else is left.
	[ "$(ls -A | grep -c snr)" -eq 1 ]
	run /usr/bin/python3 - <<-'EOF'
	import xml.etree.ElementTree as ET
	ns = "{http://www.w3.org/2000/svg}"
	root = ET.parse("snr.svg").getroot()
	assert root.tag == ns + "svg", root.tag
	tips = [t.text for t in root.iter(ns + "title")]
	# Activations twice (carried and alone), weights and biases once.
	assert len(tips) == 5 * 2 + 3, tips
	assert any(t.startswith("0 x (act uint8)") for t in tips), tips
	assert any("re lu/h% (act uint16)" in t for t in tips), tips
	assert len(list(root.iter(ns + "polyline"))) == 1
	EOF
	[ "$status" -eq 0 ] || fail "$output"
	run --separate-stderr pair --plot nodir/snr.svg
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: nodir/snr.svg"* ]] || fail "$stderr"
}

@test "verify2: --min-snr gates every output, or one by NAME=DB" {
	run pair --min-snr 10
	[ "$status" -eq 0 ]
	run --separate-stderr pair --min-snr 12
	[ "$status" -eq 1 ]
	[[ ${lines[1]} == logits*" low-snr" ]] || fail "${lines[1]}"
	[[ ${lines[2]} == score*" ok" ]] || fail "${lines[2]}"
	[[ $stderr == "onnx-verify: output logits: snr 10.5 db is below 12 db" ]] || fail "$stderr"
	run pair --min-snr 12 --min-snr logits=10
	[ "$status" -eq 0 ]
	run pair --min-snr score=20
	[ "$status" -eq 1 ]
	run --separate-stderr pair --min-snr nosuch=3
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: --min-snr: no output nosuch" ]
	run pair -q --min-snr 99
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

@test "verify2: --min-agreement gates classifier-like outputs" {
	run pair --min-agreement 80
	[ "$status" -eq 0 ]
	run --separate-stderr pair --min-agreement 90
	[ "$status" -eq 1 ]
	[[ ${lines[1]} == logits*" low-agreement" ]] || fail "${lines[1]}"
	[ "$stderr" = "onnx-verify: output logits: top-1 agreement 83.33% is below 90%" ]
	run --separate-stderr pair --min-agreement 101
	[ "$status" -eq 2 ]
	# Nothing to check is trouble, not a pass.
	/usr/bin/python3 - "$V" <<-'EOF'
	import sys, onnx
	for n in ("clf", "clf-q"):
	    m = onnx.load("%s/%s.onnx" % (sys.argv[1], n))
	    del m.graph.output[0]
	    onnx.save(m, "%s.onnx" % n)
	EOF
	run --separate-stderr onnx-verify -d "$V/data" --min-agreement 50 clf.onnx clf-q.onnx
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: --min-agreement: no classifier-like output to check" ]
}

@test "verify2: labels files: counts and classes are checked" {
	printf '1\n2\n' >short.txt
	run --separate-stderr pair --labels short.txt
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: short.txt: 2 lines of labels for 6 samples" ]
	printf '1\n2\n3\n4\n0\n1\n1\n' >long.txt
	run --separate-stderr pair --labels long.txt
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: long.txt:7: more lines than the 6 samples" ]
	printf '1\n2\ncat\n4\n0\n1\n' >word.txt
	run --separate-stderr pair --labels word.txt
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: word.txt:3: not a class index: cat" ]
	printf '1\n2\n3\n4\n5\n1\n' >range.txt
	run --separate-stderr pair --labels range.txt
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: range.txt:5: class 5 out of range for output logits (5 classes)" ]
	run --separate-stderr pair --labels nosuch.txt
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: nosuch.txt: "* ]]
}

@test "verify2: models that do not fit together are trouble; differing shapes a mismatch" {
	/usr/bin/python3 - "$V" <<-'EOF'
	import sys, onnx
	from onnx import helper, TensorProto
	V = sys.argv[1]
	m = onnx.load(V + "/clf-q.onnx")
	m.graph.output[1].name = "other"
	for n in m.graph.node:
	    if n.output[0] == "score":
	        n.output[0] = "other"
	onnx.save(m, "renamed.onnx")
	m = onnx.load(V + "/clf-q.onnx")
	m.graph.input[0].name = "y"
	for n in m.graph.node:
	    n.input[:] = ["y" if i == "x" else i for i in n.input]
	onnx.save(m, "input.onnx")
	# score of shape [1] instead of [1, 1]
	m = onnx.load(V + "/clf-q.onnx")
	for n in m.graph.node:
	    if n.op_type == "ReduceSum":
	        n.ClearField("attribute")
	        n.attribute.append(helper.make_attribute("keepdims", 0))
	m.graph.output[1].type.tensor_type.shape.ClearField("dim")
	m.graph.output[1].type.tensor_type.shape.dim.add().dim_value = 1
	onnx.save(m, "shape.onnx")
	EOF
	run --separate-stderr onnx-verify -d "$V/data" "$V/clf.onnx" renamed.onnx
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: renamed.onnx: no output score, as the fp32 model has" ]
	run --separate-stderr onnx-verify -d "$V/data" "$V/clf.onnx" input.onnx
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: input.onnx: no input y, as the fp32 model has" ]
	run --separate-stderr onnx-verify -d "$V/data" "$V/clf.onnx" shape.onnx
	[ "$status" -eq 1 ]
	[[ ${lines[2]} =~ ^score\ +6\ +-\ +-\ +-\ +-\ +-\ .*\ mismatch$ ]] || fail "${lines[2]}"
	[ "$stderr" = "onnx-verify: output score: shape or type differs between the models in 6 samples" ]
	run --separate-stderr onnx-verify -d "$V/data" "$V/clf.onnx" nosuch.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: nosuch.onnx: "* ]]
}

@test "verify2: a tensor only Clip or Relu reads is compared within its bounds" {
	# x + 3 quantized over [0, 6] for the Clip(0, 6) that alone reads it,
	# as ONNX Runtime does: clipping there is no error. Clip's bounds are
	# constant inputs since opset 11 and attributes before.
	/usr/bin/python3 - <<-'EOF'
	import os
	import numpy as np
	import onnx
	from onnx import TensorProto, helper, numpy_helper
	vi = helper.make_tensor_value_info
	def const(name, v):
	    return helper.make_node("Constant", [], [name],
	        value=numpy_helper.from_array(np.array(v, np.float32), name))
	def save(path, nodes, inits, opset):
	    g = helper.make_graph(nodes, "g", [vi("x", TensorProto.FLOAT, [1, 8])],
	                          [vi("y", TensorProto.FLOAT, [1, 8])], inits)
	    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
	    m.ir_version = 6 if opset >= 11 else 4
	    onnx.save(m, path)
	inits = [numpy_helper.from_array(np.array(3, np.float32), "three")]
	qinits = inits + [numpy_helper.from_array(np.float32(6 / 255), "s"),
	                  numpy_helper.from_array(np.uint8(0), "z")]
	pair = [helper.make_node("QuantizeLinear", ["a", "s", "z"], ["aq"]),
	        helper.make_node("DequantizeLinear", ["aq", "s", "z"], ["ad"])]
	add = helper.make_node("Add", ["x", "three"], ["a"])
	for opset in (11, 9):
	    if opset == 11:
	        clip = lambda i: [const("lo", 0.0), const("hi", 6.0),
	                          helper.make_node("Clip", [i, "lo", "hi"], ["y"])]
	    else:
	        clip = lambda i: [helper.make_node("Clip", [i], ["y"], min=0.0, max=6.0)]
	    save("f%d.onnx" % opset, [add] + clip("a"), inits, opset)
	    save("q%d.onnx" % opset, [add] + pair + clip("ad"), qinits, opset if opset >= 10 else 10)
	os.makedirs("d/s0")
	np.save("d/s0/x.npy", np.linspace(-8, 8, 8, dtype=np.float32).reshape(1, 8))
	EOF
	for v in 11 9; do
		run --separate-stderr onnx-verify -d d --per-tensor --format json f$v.onnx q$v.onnx
		[ "$status" -eq 0 ] || fail "exit $status: $stderr"
		printf '%s\n' "$output" >r.json
		run /usr/bin/python3 - <<-'EOF'
		import json
		t, = json.load(open("r.json"))["tensors"]
		assert t["name"] == "a" and t["clamp"] == [0, 6], t
		assert t["clip_pct"] == 0 and t["own_snr_db"] > 35, t
		assert t["snr_db"] > 35, t
		EOF
		[ "$status" -eq 0 ] || fail "opset $v: $output"
	done
}

@test "verify2: options that need one model or two" {
	run --separate-stderr pair --rtol 1
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --rtol and --atol: only with one model" ]
	run --separate-stderr pair --save-outputs out
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --save-outputs: only with one model" ]
	run --separate-stderr onnx-verify -d "$V/data" --per-tensor "$V/clf.onnx"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --per-tensor: needs MODEL and QMODEL" ]
	run --separate-stderr onnx-verify -d "$V/data" --plot p.svg "$V/clf.onnx"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --plot: needs MODEL and QMODEL" ]
	run --separate-stderr pair --format xml
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --format: table, tsv or json, not xml" ]
	run --separate-stderr pair --sort size
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --sort: own, snr or graph, not size" ]
	run --separate-stderr pair --min-snr x=y
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --min-snr: 'y' is not a number from -inf to inf" ]
	[[ ${stderr_lines[1]} == "usage: onnx-verify "* ]]
}

@test "verify2: a progress bar on a terminal only" {
	command -v script >/dev/null || skip "no script(1)"
	# script gives the program a terminal; stdout and stderr both land in out.
	run script -qec "onnx-verify -d '$V/data' '$V/clf.onnx' '$V/clf-q.onnx' 2>err.txt >table.txt; \
	    onnx-verify -d '$V/data' '$V/clf.onnx' '$V/clf-q.onnx' >/dev/null" out.txt
	[ "$status" -eq 0 ] || fail "$output"
	[[ $(cat out.txt) == *$'\r'"onnx-verify: [####################] 6/6 samples"* ]] || fail "$(cat -v out.txt)"
	# Not on a file, not with --quiet.
	[ ! -s err.txt ]
	[ "$(head -c 6 table.txt)" = output ]
	run script -qec "onnx-verify -q -d '$V/data' '$V/clf.onnx' '$V/clf-q.onnx'" out2.txt
	[ "$status" -eq 0 ]
	! grep -q "onnx-verify: " out2.txt || fail "$(cat -v out2.txt)"
}

# The issue's acceptance test: quantize PaddleOCR rec with per-tensor and
# with per-channel weights, and see the per-tensor report name the
# weights that per-tensor quantization breaks.
@test "verify2: PaddleOCR rec: the report points at per-tensor weights" {
	need_models
	python3=/usr/bin/python3
	$python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 4 --shape x=1x3x48x320 "$OCR_REC" calib
	$python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 --seed 7 --shape x=1x3x48x320 "$OCR_REC" eval
	onnx-calib -q -d calib "$OCR_REC" >rec.stats
	# every op, minmax: the figures below were measured so
	onnx-qparams --all-ops -m minmax --per-tensor <rec.stats | onnx-qdq-insert "$OCR_REC" >pt.onnx
	onnx-qparams --all-ops -m minmax --per-channel <rec.stats | onnx-qdq-insert "$OCR_REC" >pc.onnx
	run --separate-stderr onnx-verify -d eval --per-tensor --format json "$OCR_REC" pt.onnx
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	printf '%s\n' "$output" >pt.json
	run --separate-stderr onnx-verify -d eval --per-tensor --format json "$OCR_REC" pc.onnx
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	printf '%s\n' "$output" >pc.json
	run $python3 - <<-'EOF'
	import json
	pt, pc = json.load(open("pt.json")), json.load(open("pc.json"))
	assert pt["unmatched"] == [] and pc["unmatched"] == [], (pt["unmatched"], pc["unmatched"])
	assert len(pt["tensors"]) > 300, len(pt["tensors"])
	own = {t["name"]: t["own_snr_db"] for t in pc["tensors"]}
	# Worst first: the two worst are conv weights, below 15 dB per
	# tensor, above 25 dB per channel.
	for t in pt["tensors"][:2]:
	    print("# %s %s: %.1f dB per tensor, %.1f per channel" %
	          (t["role"], t["name"], t["own_snr_db"], own[t["name"]]))
	    assert t["role"] == "weight" and t["own_snr_db"] < 15, t
	    assert own[t["name"]] > 25, (t["name"], own[t["name"]])
	po, co = pt["outputs"][0]["snr_db"], pc["outputs"][0]["snr_db"]
	print("# output snr: %.1f dB per tensor, %.1f per channel" % (po, co))
	assert co > po
	EOF
	printf '%s\n' "$output" >&3
	[ "$status" -eq 0 ] || fail "$output"
	# ONNX Runtime, running both models with its own kernels, measures
	# about the same output SNR and top-1 agreement.
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" --out o32 "$OCR_REC" eval
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" --out oq pc.onnx eval
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
	run $python3 - <<-'EOF'
	import json, math, os
	import numpy as np
	o = json.load(open("pc.json"))["outputs"][0]
	sig = noise = agree = rows = 0
	for s in ("s0", "s1"):
	    f = "%s/" + s + "/" + o["name"] + ".npy"
	    a, b = (np.load(f % d).astype(np.float64) for d in ("o32", "oq"))
	    sig += (a * a).sum()
	    noise += ((a - b) ** 2).sum()
	    agree += (a.argmax(-1) == b.argmax(-1)).sum()
	    rows += a.shape[1]
	snr, top1 = 10 * math.log10(sig / noise), 100.0 * agree / rows
	print("# ort: %.2f dB, top-1 %.2f%%; onnx-verify: %.2f dB, %.2f%%" %
	      (snr, top1, o["snr_db"], o["top1_agreement_pct"]))
	assert abs(snr - o["snr_db"]) < 1 and abs(top1 - o["top1_agreement_pct"]) < 3
	EOF
	printf '%s\n' "$output" >&3
	[ "$status" -eq 0 ] || fail "$output"
}

@test "verify2: the page says it measures the literal QDQ graph, not ORT's fused kernels" {
	# Users compare its SNR with ONNX Runtime's and find them apart: the
	# page must say why and what to do.
	run --separate-stderr sh -c "groff -mandoc -Tascii -P-cbou -rLL=2000n \
	    '$ONNXQ_ROOT/man/man1/onnx-verify.1' | sed -n '/^CAVEATS/,/^BUGS/p'"
	[ "$status" -eq 0 ] || fail "$stderr"
	[[ $output == *"measures the literal QDQ arithmetic"* ]] || fail "$output"
	[[ $output == *"default session (graph optimizations on) fuses"* ]] || fail "$output"
	[[ $output == *"74.8 dB"*"48.2 dB"* ]] || fail "$output"
	[[ $output == *"--fused computes those groups"* ]] || fail "$output"
	[[ $output == *"test/ort-run.js"* ]] || fail "$output"
}

@test "verify2: below 10 dB, the report points to onnx-mixprec" {
	# y = x against y = DQ(Q(x)) on a grid of 4: about 2 dB.
	/usr/bin/python3 - <<-'EOF2'
	import os
	import numpy as np
	import onnx
	from onnx import TensorProto, helper, numpy_helper
	vi = helper.make_tensor_value_info
	def save(name, nodes, inits):
	    g = helper.make_graph(nodes, name, [vi('x', TensorProto.FLOAT, [8])],
	                          [vi('y', TensorProto.FLOAT, [8])], inits)
	    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
	    m.ir_version = 7
	    onnx.save(m, name + '.onnx')
	save('f', [helper.make_node('Identity', ['x'], ['y'])], [])
	save('q', [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['xq']),
	           helper.make_node('DequantizeLinear', ['xq', 's', 'z'], ['y'])],
	     [numpy_helper.from_array(np.array(4, np.float32), 's'),
	      numpy_helper.from_array(np.array(128, np.uint8), 'z')])
	rng = np.random.default_rng(3)
	for s in ('s1', 's2'):
	    os.makedirs('d/' + s)
	    np.save('d/%s/x.npy' % s, (2 * rng.standard_normal(8)).astype(np.float32))
	EOF2
	hint="onnx-mixprec --target-snr 20 --allow-float puts the regions that need it in 16 bits or float"
	run --separate-stderr onnx-verify -d d f.onnx q.onnx
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[[ $stderr =~ ^onnx-verify:\ output\ y:\ snr\ [0-9.]+\ db:\ 8\ bits\ lose\ this\ model\'s\ signal\;\ "$hint"$ ]] ||
	    fail "$stderr"
	run --separate-stderr onnx-verify -d d --min-snr 20 f.onnx q.onnx
	[ "$status" -eq 1 ] || fail "exit $status: $stderr"
	[[ ${stderr_lines[1]} == *"; $hint" ]] || fail "$stderr"
	# Not under 10 dB: not a word.
	run --separate-stderr onnx-verify -d d f.onnx f.onnx
	[ "$status" -eq 0 ] && [ -z "$stderr" ] || fail "$stderr"
}
