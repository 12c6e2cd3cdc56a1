#!/usr/bin/env bats
# programs.bats: the conventions all five programs keep (see README, Hacking):
# --help prints the usage on stdout and exits 0; --version prints
# "PROG VERSION"; an unknown option exits 2 with the usage on stderr; the
# usage equals the SYNOPSIS of man/man1/PROG.1; the page renders without
# warnings; --help into a full disk exits 1 (onnx-verify, which exits 2 for
# trouble, checks that itself). Also onnx-qdq-insert's and onnx-mixprec's
# usage mistakes and errors. Needs: the built programs, groff and man-db
# (and mandoc if present).

load helpers

VERSION=$(sed -n 's/^VERSION *= *//p' "$ONNXQ_ROOT/config.mk")

# usage_in: the usage lines in stdin (from "usage:" to the last indented
# line after it), "usage:" dropped, white space squeezed into one line.
usage_in() {
	awk '
	    !found && /^usage: / { found = 1; sub(/^usage: */, ""); print; next }
	    found && /^[ \t]+[^ \t]/ { print; next }
	    found { exit }' | tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'
}

# synopsis PAGE: the SYNOPSIS section as rendered, squeezed into one line.
synopsis() {
	groff -mandoc -Tascii -P-cbou -rLL=2000n "$1" |
	    awk '/^SYNOPSIS$/ { on = 1; next } on && /^[^ \t]/ { exit } on' |
	    tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'
}

check_help() {
	run --separate-stderr "$1" --help
	[ "$status" -eq 0 ] || fail "$1 --help: exit $status"
	[ -z "$stderr" ] || fail "$1 --help: wrote to stderr: $stderr"
	[[ ${lines[0]} == "usage: $1 "* ]] ||
	    fail "$1 --help: first line is not 'usage: $1 ...': ${lines[0]}"
}

check_version() {
	run --separate-stderr "$1" --version
	[ "$status" -eq 0 ] || fail "$1 --version: exit $status"
	[ "$output" = "$1 $VERSION" ] ||
	    fail "$1 --version: got '$output', want '$1 $VERSION'"
	[ -z "$stderr" ] || fail "$1 --version: wrote to stderr: $stderr"
}

check_bad_option() {
	local want

	want=$("$1" --help | usage_in)
	run --separate-stderr "$1" --no-such-option
	[ "$status" -eq 2 ] || fail "$1 --no-such-option: exit $status, want 2"
	[ -z "$output" ] || fail "$1 --no-such-option: wrote to stdout: $output"
	[ "${stderr%%$'\n'*}" = "$1: option --no-such-option is unknown" ] ||
	    fail "$1 --no-such-option: first line: ${stderr%%$'\n'*}"
	[ -n "$want" ] && [ "$(usage_in <<<"$stderr")" = "$want" ] ||
	    fail "$1 --no-such-option: no usage on stderr: $stderr"
}

check_synopsis() {
	local page=$ONNXQ_ROOT/man/man1/$1.1 usage syn

	[ -f "$page" ] || fail "no man page $page"
	usage=$("$1" --help | usage_in)
	syn=$(synopsis "$page")
	[ -n "$usage" ] || fail "$1 --help: no usage line"
	[ "$usage" = "$syn" ] ||
	    fail "usage and SYNOPSIS differ:" "usage:    $usage" "SYNOPSIS: $syn"
}

check_man() {
	local page=$ONNXQ_ROOT/man/man1/$1.1 msgs

	[ -f "$page" ] || fail "no man page $page"
	msgs=$(MANWIDTH=80 man --warnings=w -l "$page" 2>&1 >"$T/page.txt") ||
	    fail "man -l $page failed: $msgs"
	[ -z "$msgs" ] || fail "man -l $page: $msgs"
	grep -q "^NAME" "$T/page.txt" || fail "man -l $page: no NAME section"
	if command -v mandoc >/dev/null; then
		msgs=$(mandoc -T lint -W warning "$page" 2>&1) ||
		    fail "mandoc -T lint: $msgs"
	fi
}

@test "onnx-calib: --help" { check_help onnx-calib; }
@test "onnx-calib: --version" { check_version onnx-calib; }
@test "onnx-calib: unknown option" { check_bad_option onnx-calib; }
@test "onnx-calib: usage equals man page SYNOPSIS" { check_synopsis onnx-calib; }
@test "onnx-calib: man page renders cleanly" { check_man onnx-calib; }

@test "onnx-qparams: --help" { check_help onnx-qparams; }
@test "onnx-qparams: --version" { check_version onnx-qparams; }
@test "onnx-qparams: unknown option" { check_bad_option onnx-qparams; }
@test "onnx-qparams: usage equals man page SYNOPSIS" { check_synopsis onnx-qparams; }
@test "onnx-qparams: man page renders cleanly" { check_man onnx-qparams; }

@test "onnx-qdq-insert: --help" { check_help onnx-qdq-insert; }
@test "onnx-qdq-insert: --version" { check_version onnx-qdq-insert; }
@test "onnx-qdq-insert: unknown option" { check_bad_option onnx-qdq-insert; }
@test "onnx-qdq-insert: usage equals man page SYNOPSIS" { check_synopsis onnx-qdq-insert; }
@test "onnx-qdq-insert: man page renders cleanly" { check_man onnx-qdq-insert; }

@test "onnx-mixprec: --help" { check_help onnx-mixprec; }
@test "onnx-mixprec: --version" { check_version onnx-mixprec; }
@test "onnx-mixprec: unknown option" { check_bad_option onnx-mixprec; }
@test "onnx-mixprec: usage equals man page SYNOPSIS" { check_synopsis onnx-mixprec; }
@test "onnx-mixprec: man page renders cleanly" { check_man onnx-mixprec; }

@test "onnx-verify: --help" { check_help onnx-verify; }
@test "onnx-verify: --version" { check_version onnx-verify; }
@test "onnx-verify: unknown option" { check_bad_option onnx-verify; }
@test "onnx-verify: usage equals man page SYNOPSIS" { check_synopsis onnx-verify; }
@test "onnx-verify: man page renders cleanly" { check_man onnx-verify; }

# getopt_long's complaints, said the same way by every program.
@test "option mistakes: one line each, in every program's words" {
	local p want
	for p in onnx-calib onnx-qparams onnx-mixprec onnx-qdq-insert onnx-verify; do
		for a in "-Z:option -Z is unknown" \
		    "--help=1:option --help takes no argument"; do
			want="$p: ${a#*:}"
			run --separate-stderr "$p" ${a%%:*} </dev/null
			[ "$status" -eq 2 ] || fail "$p ${a%%:*}: exit $status"
			[ "${stderr%%$'\n'*}" = "$want" ] ||
			    fail "$p ${a%%:*}: ${stderr%%$'\n'*}"
		done
	done
	run --separate-stderr onnx-verify --min 1 a b
	[ "${stderr%%$'\n'*}" = "onnx-verify: option --min is ambiguous" ]
	run --separate-stderr onnx-verify --min-snr
	[ "${stderr%%$'\n'*}" = "onnx-verify: option --min-snr needs an argument" ]
	run --separate-stderr onnx-calib -d
	[ "${stderr%%$'\n'*}" = "onnx-calib: option -d needs an argument" ]
	# a bundled short option after a long one is still the short one
	run --separate-stderr onnx-qparams --method=minmax -vZ </dev/null
	[ "${stderr%%$'\n'*}" = "onnx-qparams: option -Z is unknown" ]
}

# Usage mistakes come before any work; an error is one line on stderr,
# exit 1, and no output file.
@test "onnx-qdq-insert: usage mistakes, and errors leave no output" {
	run --separate-stderr onnx-qdq-insert
	[ "$status" -eq 2 ]
	[[ $stderr == usage:* ]]
	run --separate-stderr onnx-qdq-insert -o
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-qdq-insert: option -o needs an argument"* ]]
	run --separate-stderr onnx-qdq-insert a b c
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-qdq-insert -v --dedicated-pairs \
	    --external-data -o out.onnx no-model.onnx no-qparams
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "onnx-qdq-insert: "* ]]
	[ ! -e out.onnx ]
}

@test "onnx-mixprec: usage mistakes, and errors leave no output" {
	run --separate-stderr onnx-mixprec model.onnx
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-mixprec -c r.yaml --target-snr 30 -d e m
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-mixprec --target-snr 30 model.onnx
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-mixprec --target-snr 3x -d e model.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-mixprec: "*3x* ]]
	run --separate-stderr onnx-mixprec -o out -c no-regions.yaml no-model.onnx
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == "onnx-mixprec: "* ]]
	[ ! -e out ]
	run --separate-stderr onnx-mixprec -v -o out --target-snr 30.5 -d e m
	[ "$status" -eq 1 ]
	[ ! -e out ]
}

@test "a late write error on stdout is an error" {
	[ -w /dev/full ] || skip "no /dev/full"
	for p in onnx-calib onnx-qparams onnx-qdq-insert onnx-mixprec; do
		run "$p" --help
		[ "$status" -eq 0 ]
		run sh -c "$p --help >/dev/full"
		[ "$status" -eq 1 ] || fail "$p --help >/dev/full: exit $status"
	done
}

# One convention in all five (#17): -h is --help, -V is --version.
@test "programs: -h and -V are --help and --version in every program" {
	local p
	for p in onnx-calib onnx-qparams onnx-qdq-insert onnx-mixprec onnx-verify; do
		[ "$("$p" -h)" = "$("$p" --help)" ] || fail "$p -h differs from --help"
		[ "$("$p" -V)" = "$("$p" --version)" ] ||
		    fail "$p -V differs from --version"
	done
}
