#!/usr/bin/env bats
# The other tools' own sample and test files (../shared/peers, README there), read as those
# tools read them, and texts that are no profile refused; each test on the peers' files skips
# when they are absent (a release tarball has no ../shared), and has a case of our own beside
# it. PEERS_DIR overrides where they are (a worktree beside the checkout).

bats_require_minimum_version 1.5.0

setup() {
	T=$BATS_TEST_TMPDIR
	P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	D=$TESTDATA
}

need_peers() {
	[ -d "$P/corpora" ] || skip "no ../shared/peers beside the source tree"
}

# A text that is no profile: exit 1, one line naming the file, nothing on stdout, and
# (unless a format resembles it and says so) every format tried.
refused() { # file
	run --separate-stderr tach-decode "$1"
	[ "$status" -eq 1 ] || { echo "$1: exit $status: $output"; return 1; }
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$1: $stderr"; return 1; }
	[[ $stderr == "tach-decode: $1: "* ]]
}

@test "point 1: texts that are no profile (ours, and valgrind's callgrind) convert to nothing" {
	for f in "$D"/non/*; do
		refused "$f"
		[[ $stderr == *"input format not recognized"*"; tried tach, "*", collapsed" ]] || { echo "$stderr"; false; }
	done
	# a callgrind file as valgrind writes it: "version: 1", "fn=", cost lines "16 400"
	command -v valgrind >/dev/null || skip "valgrind not installed"
	valgrind -q --tool=callgrind --callgrind-out-file="$T/callgrind.out" /bin/true
	grep -q '^fn=' "$T/callgrind.out"
	refused "$T/callgrind.out"
	[[ $stderr == *"not recognized"*"tried "* ]]
	cat "$T/callgrind.out" | { run tach2pprof -o "$T/o" ; [ "$status" -eq 1 ]; }
	[ ! -e "$T/o" ]
}

@test "point 1: the peers' texts of no profile, and formats not read, are refused in one line" {
	need_peers
	for f in "$P"/corpora/non/* "$P"/formats/* "$P"/corpora/pprof/*.string; do
		refused "$f"
	done
	for f in "$P"/corpora/non/*; do
		refused "$f"
		[[ $stderr == *"not recognized"* ]]
	done
}

@test "point 1: folded stacks are still detected: comments, invalid lines among valid, a deep first line" {
	printf 'a;b 3\nnot a line\nc 1\n' | tach-decode -q --no-thread-frames | sort | tr '\n' ' ' |
		grep -qx 'a;b 3 c 1 '
	{ printf '# c\n// c2\n'; printf 'f%d;' $(seq 1 1500); printf 'leaf 4\n'; } >"$T/deep"
	tach-decode -q --no-thread-frames "$T/deep" | grep -q ';leaf 4$'
	printf 'P9;T0:1;a.py:f:1 3000,0,-512\n' >"$T/austin"
	run tach-decode -v -q "$T/austin"
	[[ $output == *"collapsed input"* ]]
	# numbers alone are no stack; a count needs a digit; JSON on one long line is no stack
	printf '16 400\n17 300 2\n' >"$T/nums"
	refused "$T/nums"
	printf -- '--- threadz 1 ---\n' >"$T/dash"
	refused "$T/dash"
	{ printf '[{"name":"x","v":'; printf '%d,' $(seq 1 1500); printf '0}]\n'; } >"$T/j"
	refused "$T/j"
	if [ -d "$P/corpora" ]; then
		for f in "$P"/corpora/ss/simple{,-crlf,-with-invalids}.folded.txt; do
			run tach-decode -v -q "$f"
			[[ $output == *"collapsed input"* ]] || { echo "$f: $output"; false; }
		done
	fi
}
