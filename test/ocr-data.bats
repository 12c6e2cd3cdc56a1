#!/usr/bin/env bats
# ocr-data.bats: the e2e tooling on its own, without models.
# scripts/make-ocr-data: the npy layout, shapes, value ranges, labels
# drawn from the key file, the same bytes for the same seed, errors.
# test/ocr-eval.js on saved outputs: greedy CTC decoding (blank 0, keys
# from 1, the space class after the keys, repeats collapsed), accuracy
# with spaces ignored, mean normalized edit distance, SNR between two
# output sets, cls and det scoring, and its errors.
# Needs: /usr/bin/python3 with numpy and Pillow (python3-pil), the fonts
# of scripts/make-ocr-data, node.

load helpers

MAKE=$ONNXQ_ROOT/scripts/make-ocr-data
EVAL=$ONNXQ_ROOT/test/ocr-eval.js

# keys: a key file of five characters, plus common Chinese for make-ocr-data.
keys() {
	/usr/bin/python3 - <<'EOF'
chars = "ab1中文"
# GB 2312 level 1 starts at 0xB0A1: enough common characters to draw from.
for hi in range(0xB0, 0xB8):
    for lo in range(0xA1, 0xFF):
        c = bytes([hi, lo]).decode("gb2312", errors="ignore")
        if c and c not in chars:
            chars += c
chars += "".join(chr(c) for c in range(ord("A"), ord("Z") + 1))
chars += "".join(chr(c) for c in range(ord("c"), ord("z") + 1))
chars += "023456789-.:年月日元"
open("keys.txt", "w", encoding="utf-8").write("\n".join(chars))
EOF
}

@test "make-ocr-data: rec lines in the npy layout, labels from the keys" {
	keys
	run --separate-stderr "$MAKE" -n 12 --seed 3 --keys keys.txt rec
	[ "$status" -eq 0 ] || fail "make-ocr-data: $stderr"
	[ "$(ls rec | tr '\n' ' ')" = \
	    "labels.txt s0000 s0001 s0002 s0003 s0004 s0005 s0006 s0007 s0008 s0009 s0010 s0011 " ]
	[ "$(wc -l <rec/labels.txt)" -eq 12 ]
	/usr/bin/python3 - <<'EOF' || fail "bad samples"
import glob, numpy as np
keys = set(open("keys.txt", encoding="utf-8").read().split("\n")) | {" "}
labels = open("rec/labels.txt", encoding="utf-8").read().split("\n")[:-1]
assert all(labels), labels
assert all(c in keys for l in labels for c in l), labels
padded = 0
for f in sorted(glob.glob("rec/s*/x.npy")):
    x = np.load(f)
    assert x.dtype == np.float32 and x.shape == (1, 3, 48, 320), (f, x.shape)
    assert x.min() >= -1 and x.max() <= 1, f
    # Ink and paper both there: a line, not a blank picture.
    assert x.max() - x.min() > 0.5, f
    # Short lines are padded with zeros on the right, as PaddleOCR pads.
    padded += bool((x[..., -8:] == 0).all())
assert padded >= 3, padded
EOF
}

@test "make-ocr-data: the same seed gives the same bytes, another seed others" {
	keys
	"$MAKE" -n 4 --seed 5 --keys keys.txt a
	"$MAKE" -n 4 --seed 5 --keys keys.txt b
	"$MAKE" -n 4 --seed 6 --keys keys.txt c
	diff -r a b || fail "seed 5 twice differs"
	! diff -q a/labels.txt c/labels.txt >/dev/null || fail "seeds 5 and 6 agree"
	# OUTDIR is replaced as a whole: no sample of an earlier run is left.
	"$MAKE" -n 2 --seed 5 --keys keys.txt a
	[ "$(ls a | tr '\n' ' ')" = "labels.txt s0000 s0001 " ]
	[ -z "$(find . -maxdepth 1 -name '.*' ! -name .)" ] ||
	    fail "temporary left: $(ls -A)"
}

@test "make-ocr-data: cls labels are 0 or 1, det pages are normalized pictures" {
	keys
	"$MAKE" --task cls -n 20 --keys keys.txt cls
	"$MAKE" --task det -n 2 --size 128x96 --keys keys.txt det
	[ "$(sort -u cls/labels.txt | tr '\n' ' ')" = "0 1 " ]
	[ ! -e det/labels.txt ]
	/usr/bin/python3 - <<'EOF' || fail "bad samples"
import numpy as np
x = np.load("cls/s0000/x.npy")
assert x.shape == (1, 3, 48, 192), x.shape
d = np.load("det/s0001/x.npy")
assert d.dtype == np.float32 and d.shape == (1, 3, 96, 128), d.shape
# ImageNet normalization: paper near +2, ink below it.
assert 1.0 < d.max() < 2.7 and d.min() < d.max() - 1, (d.min(), d.max())
EOF
}

@test "make-ocr-data: errors" {
	run --separate-stderr "$MAKE" --keys nonexistent out
	[ "$status" -eq 1 ]
	[[ $stderr == "make-ocr-data: nonexistent: No such file"* ]] || fail "$stderr"
	[ ! -e out ]
	keys
	run --separate-stderr "$MAKE" --task det --size 100x96 --keys keys.txt out
	[ "$status" -eq 2 ]
	[[ $stderr == *"multiples of 32"* ]] || fail "$stderr"
	run --separate-stderr "$MAKE" -n 0 --keys keys.txt out
	[ "$status" -eq 2 ]
	printf 'a\nb\n' >few.txt
	run --separate-stderr "$MAKE" --keys few.txt out
	[ "$status" -eq 1 ]
	[[ $stderr == *"common Chinese characters"* ]] || fail "$stderr"
	[ ! -e out ]
}

# saved DIR ROWS...: DIR/sN/out.npy of shape 1xTx7 for the keys a b 1 中 文
# (classes: 0 blank, 1-5 the keys, 6 space), one sample per ROW, a ROW
# being the best class of each time step, space-separated.
saved() {
	local dir=$1

	shift
	/usr/bin/python3 - "$dir" "$@" <<'EOF'
import os, sys
import numpy as np
d = sys.argv[1]
for i, row in enumerate(sys.argv[2:]):
    best = [int(c) for c in row.split()]
    x = np.full((1, len(best), 7), 0.01, dtype=np.float32)
    for t, c in enumerate(best):
        x[0, t, c] = 0.9
    os.makedirs(os.path.join(d, "s%d" % i), exist_ok=True)
    np.save(os.path.join(d, "s%d" % i, "out.npy"), x)
EOF
}

@test "ocr-eval.js: greedy CTC decoding of saved outputs" {
	printf 'a\nb\n1\n中\n文\n' >k.txt
	mkdir data
	for i in 0 1 2 3 4; do mkdir data/s$i; done
	# "ab", "aa" (a blank between), "a b" (space), "中文1", "b"
	printf 'ab\naa\nab\n中文1\n文\n' >data/labels.txt
	saved out "1 1 2 2 0" "1 0 1 1" "1 6 2" "4 5 0 3" "2 2"
	run --separate-stderr node "$EVAL" --keys k.txt --errors 5 data out
	[ "$status" -eq 0 ] || fail "ocr-eval: $stderr"
	# Four right (the space ignored, as PaddleOCR's metric does); "b"
	# against "文": one edit over one character, so mean_ned 1/5.
	[ "${lines[0]}" = "model  samples  accuracy  mean_ned  snr_db  ms" ] ||
	    fail "header: ${lines[0]}"
	[ "$(echo "${lines[1]}" | tr -s ' ')" = "out 5 80.00 0.2000 - -" ] ||
	    fail "row: ${lines[1]}"
	[ "$stderr" = 'out: s4: "文" -> "b"' ] || fail "errors: $stderr"
}

@test "ocr-eval.js: SNR between output sets, cls and det scoring" {
	printf 'a\nb\n1\n中\n文\n' >k.txt
	mkdir data data/s0 data/s1
	printf 'a\nb\n' >data/labels.txt
	saved ref "1 0" "2 0"
	saved same "1 0" "2 0"
	saved other "1 0" "1 0"
	run --separate-stderr node "$EVAL" --keys k.txt data ref same other
	[ "$status" -eq 0 ] || fail "ocr-eval: $stderr"
	[ "$(echo "${lines[2]}" | awk '{ print $1, $3, $5 }')" = "same 100.00 inf" ]
	# other differs in sample 1 by 0.89 at two places of 14 values.
	[ "$(echo "${lines[3]}" | awk '{ print $1, $3, $5 }')" = "other 50.00 3.11" ] ||
	    fail "${lines[3]}"
	# cls: the best class against integer labels.
	printf '1\n9\n' >data/labels.txt
	run --separate-stderr node "$EVAL" --task cls data ref
	[ "$(echo "${lines[1]}" | awk '{ print $3 }')" = 50.00 ] || fail "$output"
	# det: the IoU of the p > 0.3 masks against the first.
	run --separate-stderr node "$EVAL" --task det data ref other
	[ "$(echo "${lines[2]}" | awk '{ print $3 }')" = 60.00 ] || fail "$output"
}

@test "ocr-eval.js: errors" {
	printf 'a\nb\n' >k.txt
	mkdir data data/s0
	printf 'a\n' >data/labels.txt
	saved out "1 0"
	run --separate-stderr node "$EVAL" --keys k.txt data out
	[ "$status" -eq 1 ]
	[[ $stderr == "ocr-eval: output of shape 1x2x7: want 1xTx4"* ]] || fail "$stderr"
	printf 'a\nb\n' >data/labels.txt
	run --separate-stderr node "$EVAL" --task cls data out
	[ "$status" -eq 1 ]
	[[ $stderr == *"2 labels for 1 samples"* ]] || fail "$stderr"
	run --separate-stderr node "$EVAL" --task bogus data out
	[ "$status" -eq 2 ]
	[[ $stderr == "usage: "* ]] || fail "$stderr"
	run --separate-stderr node "$EVAL" data
	[ "$status" -eq 2 ]
}
