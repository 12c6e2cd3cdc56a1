#!/usr/bin/env bats
# harness.bats: the test machinery itself: test/unit/unit.h prints the TAP
# it promises, and scripts/run-tests counts results, crashes, timeouts and
# short runs into its closing "N passed, N failed[, N skipped]" line (the
# line CI reads). Needs: cc, bats.

load helpers

# A clean environment for nested runs, so the outer bats leaks nothing in
# (its PATH starts with its own libexec, whose `bats` is not the command).
clean_env() {
	local path

	path=$(tr : '\n' <<<"$PATH" | grep -v bats-core | paste -sd :)
	env -i PATH="$path" HOME="$HOME" TMPDIR="$T" LC_ALL=C "$@"
}

@test "unit.h: TAP lines, failure details, exit status" {
	cat >t.c <<'EOF'
#include "unit.h"

static void
test_good(void)
{
	CHECK(1 + 1 == 2);
	CHECK_EQ_INT(3u, 3);
	CHECK_EQ_STR("ab", "ab");
	CHECK_EQ_STR(NULL, NULL);
	CHECK_NEAR(0.1 + 0.2, 0.3, 1e-12);
	CHECK_NEAR(NAN, NAN, 0);
	CHECK_NEAR(INFINITY, INFINITY, 0);
}

static void
test_bad(void)
{
	int n = 2;
	const char *s = "a\tb\n";

	CHECK(n == 3);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_STR(s, "ab");
	CHECK_EQ_STR(NULL, "x");
	CHECK_NEAR(0.5, 0.25, 0.125);
	CHECK_NEAR(NAN, 1, 10);
	REQUIRE(n == 4);
	CHECK(!"not reached");
}

static void
test_after(void)
{
	REQUIRE(1);
}

UNIT_MAIN(test_good,
    test_bad,
	test_after)
EOF
	cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
	    -I"$ONNXQ_ROOT/test/unit" -o t t.c -lm
	run --separate-stderr ./t
	[ "$status" -eq 1 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "1..3" ]
	[ "${lines[1]}" = "ok 1 - test_good" ]
	[ "${lines[2]}" = "not ok 2 - test_bad # t.c:21: n == 3 is false" ]
	[ "${lines[3]}" = "# t.c:22: n: got 2, want 3" ]
	[ "${lines[4]}" = '# t.c:23: s: got "a\tb\n", want "ab"' ]
	[ "${lines[5]}" = '# t.c:24: NULL: got NULL, want "x"' ]
	[ "${lines[6]}" = "# t.c:25: 0.5: got 0.5, want 0.25 (tolerance 0.125)" ]
	[ "${lines[7]}" = "# t.c:26: NAN: got nan, want 1 (tolerance 10)" ]
	[ "${lines[8]}" = "# t.c:27: n == 4 is false" ]
	[ "${lines[9]}" = "ok 3 - test_after" ]
	[ "${#lines[@]}" -eq 10 ]

	run --separate-stderr ./t test_after test_good
	[ "$status" -eq 0 ]
	[ "$output" = $'1..2\nok 1 - test_good\nok 2 - test_after' ]

	run --separate-stderr ./t test_nope
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "./t: no test named test_nope" ]
}

@test "run-tests: counts, crashes, short runs and the closing line" {
	mkdir s
	printf '1..2\nok 1 - a\nok 2 - b # SKIP later\n' >s/good.tap
	printf '#!/bin/sh\ncat %s/s/good.tap\n' "$T" >s/good
	printf '#!/bin/sh\nprintf "1..3\\nok 1 - a\\n"\nkill -SEGV $$\n' >s/crash
	printf '#!/bin/sh\necho "1..1"\necho "not ok 1 - x"\nexit 1\n' >s/bad
	printf '#!/bin/sh\necho "ok 1 - a"\n' >s/noplan
	chmod +x s/*
	# (printf: bats would take an @test line here for one of its own)
	printf '@%s "passes" { true; }\n@%s "fails" { false; }\n' test test >s/a.bats
	printf '@%s "skips" { skip "why"; }\n' test >>s/a.bats
	printf '@%s "b" { true; }\n' test >s/b.bats
	run clean_env "$ONNXQ_ROOT/scripts/run-tests" s/good s/crash s/bad \
	    s/noplan -- s/a.bats s/b.bats
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "5 passed, 4 failed, 2 skipped" ] ||
	    fail "closing line: ${lines[-1]}" "$output"
	[[ $output == *"# s/crash: killed by signal 11; planned 3 tests, ran 1"* ]]
	[[ $output == *"# s/noplan: no TAP plan"* ]]
	[[ $output == *"not ok 2 fails"* ]]

	run clean_env "$ONNXQ_ROOT/scripts/run-tests" s/good -- s/b.bats
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "2 passed, 0 failed, 1 skipped" ]

	run clean_env ONNXQ_TEST_JOBS=1 "$ONNXQ_ROOT/scripts/run-tests" -- s/b.bats
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "1 passed, 0 failed" ]
}

@test "run-tests: a test that hangs is stopped and counted" {
	printf '#!/bin/sh\necho 1..1\nexec sleep 60\n' >hang
	chmod +x hang
	SECONDS=0
	run clean_env ONNXQ_TEST_TIMEOUT=1 "$ONNXQ_ROOT/scripts/run-tests" ./hang
	[ "$status" -eq 1 ]
	[ "$SECONDS" -lt 30 ]
	[[ $output == *"# ./hang: timed out after 1s; planned 1 tests, ran 0"* ]]
	[ "${lines[-1]}" = "0 passed, 1 failed" ]
}
