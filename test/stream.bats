#!/usr/bin/env bats
# stream.bats: the onnxq text stream as the programs read and write it
# (man/man5/onnxq-stream.5), with onnx-calib --merge as the reader and
# writer: damaged streams of every kind give one error line
# "onnx-calib: FILE:LINE: ..." and exit 1, never a crash (also for a
# sample of truncations and of random byte damage: test/unit/stream_test
# tries them all in-process); unknown headers,
# record types and keys pass through; names are escaped so that every
# field is free of white space; the end record counts the records; the
# section 5 page renders cleanly.
# Needs: the built onnx-calib, onnxq-statgen (test/tools), /usr/bin/python3,
# groff and man.

load helpers

PY=/usr/bin/python3
S=$'#onnxq\t1.0'

# bad NAME MESSAGE: `onnx-calib --merge NAME` fails with exactly MESSAGE.
bad() {
	run --separate-stderr onnx-calib --merge "$1"
	[ "$status" -eq 1 ] || fail "$1: exit $status, want 1 ($stderr)"
	[ -z "$output" ] || fail "$1: wrote to stdout: $output"
	[ "$stderr" = "onnx-calib: $2" ] ||
	    fail "$1: got '$stderr'" "want 'onnx-calib: $2'"
}

@test "stream: damaged streams give one error line naming file and line" {
	: >empty
	bad empty "empty:1: empty input (not an onnxq stream)"
	echo hello >notstream
	bad notstream "notstream:1: not an onnxq stream (no #onnxq line)"
	printf '#onnxq\t2.0\nend\t0\n' >v2
	bad v2 "v2:1: unsupported stream version 2.0 (this reads 1.x)"
	printf '%s\nfoo\tx\tn=1\n' "$S" >trunc
	bad trunc "trunc:3: end of input before the end record (truncated stream?)"
	printf '%s\nfoo\tx\tn=1\nend\t3\n' "$S" >count
	bad count "count:3: end record says 3 records, stream has 1 (truncated or edited)"
	printf '%s\nfoo\tx\tn=1\nend\t1' "$S" >nolf
	bad nolf "nolf:3: no newline at end of input (truncated stream?)"
	printf '%s\nend\t0\nfoo\tx\n' "$S" >after
	bad after "after:3: data after the end record"
	printf '%s\nfoo\tx%%G1\nend\t1\n' "$S" >esc1
	bad esc1 "esc1:2: foo record: subject: bad escape '%G1'"
	printf '%s\nfoo\tx%%\nend\t1\n' "$S" >esc2
	bad esc2 "esc2:2: foo record: subject: bad escape '%' (% needs two hex digits)"
	printf '%s\nstat\tx\tdtype=float\tn=1\tnan=0\tinf=0\tmin=1.5x\tmax=2\tbatches=1\tbmin=1\tbmax=1\tsum=1\tsumsq=1\nend\t1\n' "$S" >num
	bad num "num:2: key min: bad float '1.5x'"
	printf '%s\nstat\tx\tdtype=float\tn=-1\nend\t1\n' "$S" >neg
	bad neg "neg:2: key n: bad count '-1'"
	printf '%s\nfoo\tx\tk=1\tk=2\nend\t1\n' "$S" >dup
	bad dup "dup:2: foo x: duplicate key 'k'"
	printf '%s\nfoo\tx\tk=1\0\nend\t1\n' "$S" >nul
	bad nul "nul:2: NUL byte in line"
	printf '#onnxq\t1.0\r\nend\t0\r\n' >crlf
	bad crlf "crlf:1: carriage return in line (CRLF line ends are not allowed)"
	printf '%s\nfoo\tx y\nend\t1\n' "$S" >space
	bad space "space:2: space in record (fields are separated by one TAB; names escape spaces as %20)"
	printf '%s\nfoo\tx\n#late\nend\t1\n' "$S" >late
	bad late "late:3: header line after the first record"
	printf '%s\nhist\tx\tmbits=7\tzero=0\tbins=1.01:3\nend\t1\n' "$S" >bins
	bad bins "bins:2: key bins: element 1: histogram bin edge 1.00999999 is not a bin edge for mbits 7"
	bad nosuch "nosuch: No such file or directory"
}

@test "stream: a line over 64 MiB is refused" {
	{ printf '%s\nfoo\tx\tk=' "$S"; head -c 67108865 /dev/zero | tr '\0' 7
	    printf '\nend\t1\n'; } >long
	bad long "long:2: line longer than 67108864 bytes"
}

# Every cut and much more damage are tried in-process by stream_test; here
# a sample goes through the program.
@test "stream: truncated streams are detected" {
	onnxq-statgen -t 4 -b 2 -n 8 -m 0 s
	onnx-calib --merge s.whole >/dev/null
	size=$(wc -c <s.whole)
	for ((n = 0; n < size; n += size / 40 + 1)); do
		head -c "$n" s.whole >t
		onnx-calib --merge t >out 2>err && fail "cut at $n bytes: accepted"
		st=$?
		[ "$st" -eq 1 ] || fail "cut at $n bytes: exit $st"
		[ -s out ] && fail "cut at $n bytes: output"
		[[ $(<err) == "onnx-calib: t:"[0-9]*": "* ]] ||
		    fail "cut at $n bytes: $(<err)"
	done
}

@test "stream: random damage never crashes the reader" {
	onnxq-statgen -t 4 -b 3 -n 64 s
	"$PY" - s.whole <<'EOF'
import random, sys
data = open(sys.argv[1], "rb").read()
rnd = random.Random(42)
for i in range(40):
    b = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        p = rnd.randrange(len(b))
        b[p] = rnd.choice(b"\t\n\r\0 %,=:x0123456789.-e" + bytes([rnd.randrange(256)]))
    open("d%03d" % i, "wb").write(b)
EOF
	for f in d[0-9]*; do
		st=0
		onnx-calib --merge "$f" >out 2>err || st=$?
		[ "$st" -le 1 ] || fail "$f: exit $st: $(<err)"
		if [ "$st" -eq 1 ]; then
			[[ $(<err) == "onnx-calib: $f:"[0-9]*": "* ]] ||
			    fail "$f: $(<err)"
			[ "$(wc -l <err)" -eq 1 ] || fail "$f: $(<err)"
		fi
	done
}

@test "stream: unknown headers, record types and keys pass through" {
	printf '%s\n#future\tx=1\n# a comment\nnewtype\tn%%2C1\tq=1,2\tr=\nstat\tt\tdtype=float\tn=2\tnan=0\tinf=0\tmin=1\tmax=3\tbatches=1\tbmin=1\tbmax=3\tsum=4\tsumsq=10\tzz=9\taa=%%20\nnewtype\tn2\tq=3\nend\t3\n' "$S" >u
	onnx-calib --merge u >out
	grep -qx '#future	x=1' out
	grep -qx '# a comment' out
	grep -qx 'newtype	n%2C1	q=1,2	r=' out
	grep -qx 'newtype	n2	q=3' out
	# unknown keys after the known ones (sorted by key in a merge)
	grep -qx 'stat	t	dtype=float	n=2	nan=0	inf=0	min=1	max=3	batches=1	bmin=1	bmax=3	sum=4	sumsq=10	aa=%20	zz=9' out
	# in their order, around the known records
	[ "$(grep -v '^#' out | cut -f1,2 | tr '\t\n' ': ')" = "newtype:n%2C1 stat:t newtype:n2 end:3 " ]
	tail -1 out | grep -qx 'end	3'
	# a later minor version is read; the output says what it writes
	sed '1s/1\.0/1.9/' u >u19
	onnx-calib --merge u19 >out19
	head -1 out19 | grep -qx "$S"
	# unknown keys that disagree cannot be merged
	sed 's/zz=9/zz=8/' u >u2
	run --separate-stderr onnx-calib --merge u u2
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: u2:5: stat t: key zz differs from u:5, cannot merge it" ]
}

@test "stream: names are escaped, fields are free of white space" {
	onnxq-statgen -k 1 s
	grep -q '^stat	layer%200/out%2C%3D%25	' s.whole
	# awk's default field splitting sees the same fields as TAB splitting
	awk -F'\t' '/^# / { next } { n = split($0, a, /[ \t\n]+/); if (n != NF) exit 1 }' s.whole
	! grep -q ' ' <(grep -v '^# ' s.whole)
	# the end record counts the record lines
	[ "$(tail -1 s.whole)" = "end	$(grep -vc '^#' <(sed '$d' s.whole))" ]
}

@test "stream: the section 5 page renders cleanly" {
	page=$ONNXQ_ROOT/man/man5/onnxq-stream.5
	msgs=$(MANWIDTH=80 man --warnings=w -l "$page" 2>&1 >page.txt) ||
	    fail "man -l $page: $msgs"
	[ -z "$msgs" ] || fail "man -l $page: $msgs"
	grep -q '^GRAMMAR' page.txt
	grep -q '^MERGING' page.txt
	if command -v mandoc >/dev/null; then
		msgs=$(mandoc -T lint -W warning "$page" 2>&1) ||
		    fail "mandoc -T lint: $msgs"
	fi
}
