#!/usr/bin/env bats
# install.bats: make install puts the programs, man pages and shared data
# under DESTDIR/PREFIX with the right modes, and make uninstall takes them
# all away again, leaving only directories. Needs: make, and a build that
# is up to date (make check builds it first and passes its make arguments
# in ONNXQ_MAKE_ARGS, so nothing is rebuilt here).

load helpers

PROGS='onnx-calib onnx-qparams onnx-qdq-insert onnx-mixprec onnx-verify'

# mk ARGS: make in the source tree with the build's own arguments, not
# those (nor the job server) of the make check this may run under.
mk() {
	local args=()

	eval "args=(${ONNXQ_MAKE_ARGS:-})"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	    make -C "$ONNXQ_ROOT" --no-print-directory "${args[@]}" "$@"
}

setup() {
	onnxq_setup
	# A stale build would be rebuilt by make install, under the feet of
	# the suites running beside this one: refuse instead.
	mk -q all ||
	    fail "build not up to date (run this through make check);" \
	    "make would run:" "$(mk -n all 2>&1 | head -n 5)"
}

@test "make install and uninstall with DESTDIR and PREFIX" {
	local d=$T/dest p=/opt/onnxq-test f m

	run mk install DESTDIR="$d" PREFIX="$p"
	[ "$status" -eq 0 ] || fail "make install: $output"

	for f in $PROGS; do
		[ -x "$d$p/bin/$f" ] || fail "not installed: bin/$f"
		[ "$(stat -c %a "$d$p/bin/$f")" = 755 ]
		# the build's own (under make check-valgrind, ONNXQ_BIN holds wrappers)
		cmp -s "$ONNXQ_BUILD/bin/$f" "$d$p/bin/$f" ||
		    fail "bin/$f is not the one built"
	done
	for m in "$ONNXQ_ROOT"/man/man1/*.1 "$ONNXQ_ROOT"/man/man5/*.5; do
		[ -e "$m" ] || continue
		f=$d$p/share/man/${m#"$ONNXQ_ROOT"/man/}
		cmp -s "$m" "$f" || fail "man page not installed: $f"
		[ "$(stat -c %a "$f")" = 644 ]
	done
	if [ -d "$ONNXQ_ROOT/share/onnxq" ]; then
		diff -r "$ONNXQ_ROOT/share/onnxq" "$d$p/share/onnxq" ||
		    fail "share/onnxq not installed as is"
	fi
	# Nothing lands outside DESTDIR/PREFIX.
	[ "$(ls -A "$d")" = opt ]
	[ "$(ls -A "$d/opt")" = onnxq-test ]

	run mk uninstall DESTDIR="$d" PREFIX="$p"
	[ "$status" -eq 0 ] || fail "make uninstall: $output"
	run find "$d" ! -type d
	[ -z "$output" ] || fail "left after uninstall: $output"
}

@test "make install honours BINDIR and MANPREFIX" {
	local d=$T/dest

	run mk install DESTDIR="$d" PREFIX=/usr BINDIR=/usr/games \
	    MANPREFIX=/usr/man
	[ "$status" -eq 0 ] || fail "make install: $output"
	[ -x "$d/usr/games/onnx-qparams" ]
	[ -e "$d/usr/man/man1/onnx-qdq-insert.1" ]
	[ ! -e "$d/usr/bin" ]
	run mk uninstall DESTDIR="$d" PREFIX=/usr BINDIR=/usr/games \
	    MANPREFIX=/usr/man
	[ "$status" -eq 0 ]
	run find "$d" ! -type d
	[ -z "$output" ] || fail "left after uninstall: $output"
}
