#!/usr/bin/env bats
# tach-diff as a user runs it: against difffolded.pl's own output on the flame-graph fixtures
# (tests/fixtures/flamegraph/inputs/diff.folded), against its rules written again in Python
# (tests/cli/difffolded_rules.py) for -n and -s, against tach-decode's collapsed stacks of
# each input, and every option and error path.

setup() {
	TMP=$(mktemp -d)
	C=$FIXTURES/tach/cases
	FG=$FIXTURES/flamegraph/inputs
	RULES="python3 $SOURCE_ROOT/tests/cli/difffolded_rules.py"
}

teardown() {
	rm -rf "$TMP"
}

# joined OPTS... -- BASE NEW: tach-decode's collapsed stacks of both, joined on the stack
# text by awk, sorted: what tach-diff must print.
joined() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	tach-decode "${opts[@]}" "$2" >"$TMP/b.folded"
	tach-decode "${opts[@]}" "$3" >"$TMP/n.folded"
	awk 'FNR == 1 { side++ } { n = $NF; $NF = ""; sub(/ $/, ""); seen[$0] = 1
		if (side == 1) b[$0] += n; else w[$0] += n }
		END { for (k in seen) printf "%s %d %d\n", k, b[k], w[k] }' \
		"$TMP/b.folded" "$TMP/n.folded" | LC_ALL=C sort
}

@test "help lists the options; version names the library" {
	run tach-diff --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: tach-diff [OPTION]... BASE NEW"* ]]
	[[ "$output" == *"-n, --normalize"* && "$output" == *"-s, --strip-hex"* ]]
	run tach-diff --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"libtachfmt"* ]]
}

@test "the same lines as difffolded.pl on the flame-graph fixtures" {
	tach-diff --from collapsed --no-thread-frames "$FG/perf.folded" "$FG/perf2.folded" >"$TMP/got"
	LC_ALL=C sort "$FG/diff.folded" | diff -u - "$TMP/got"
	# sorted by stack bytes, the same every time
	LC_ALL=C sort -c "$TMP/got"
	tach-diff --from collapsed --no-thread-frames "$FG/perf.folded" "$FG/perf2.folded" | cmp - "$TMP/got"
	# the Python rules agree with difffolded.pl itself here, so they can stand in for it below
	$RULES "$FG/perf.folded" "$FG/perf2.folded" | diff -u "$TMP/got" -
}

@test "-n and -s as difffolded.pl's rules compute them" {
	local o a b
	for o in "-n" "-s" "-n -s" "-ns"; do
		for pair in "$FG/perf.folded $FG/perf2.folded" "$FG/perf2.folded $FG/perf.folded" \
			"$TESTDATA/diff_hex_base.folded $TESTDATA/diff_hex_new.folded"; do
			read -r a b <<<"$pair"
			# shellcheck disable=SC2086
			tach-diff --from collapsed --no-thread-frames $o "$a" "$b" >"$TMP/got"
			# shellcheck disable=SC2086
			$RULES ${o/-ns/-n -s} "$a" "$b" | diff -u - "$TMP/got" || { echo "$o $pair"; false; }
		done
	done
	# the long names, and what the hex case must show
	tach-diff --from collapsed --no-thread-frames --normalize --strip-hex \
		"$TESTDATA/diff_hex_base.folded" "$TESTDATA/diff_hex_new.folded" >"$TMP/got"
	grep -qx 'prog;main;0x...;work 11 11' "$TMP/got"
	grep -qx 'prog;main;handler0x...;0x... 1 0' "$TMP/got"
	# -n scales BASE to NEW's total, each count truncated: short of it by less than a count a line
	tach-diff --from collapsed --no-thread-frames -n "$FG/perf.folded" "$FG/perf2.folded" |
		awk '{ b += $(NF - 1); n += $NF } END { exit !(b <= n && b > n - NR && n == 1619) }'
}

@test "TACH inputs: each column is tach-decode's collapsed stacks, with its label options" {
	local o pairs=("$C/threads_interleaved.tach $C/threads_interleaved.zstd.tach"
		"$C/recursion.tach $C/deep_stack_300.tach" "$C/non_ascii.tach $C/many_frames.tach"
		"$C/rle_runs.tach $C/empty.tach" "$C/paths.tach $C/opcodes_columns.tach")
	for o in "" "--no-thread-frames" "--labels pyspy" "--full-paths" "--labels cpython --full-paths --no-thread-frames"; do
		for pair in "${pairs[@]}"; do
			read -r a b <<<"$pair"
			[ -e "$a" ] || continue
			# shellcheck disable=SC2086
			joined $o -- "$a" "$b" >"$TMP/want"
			# shellcheck disable=SC2086
			tach-diff --per-run $o "$a" "$b" | diff -u "$TMP/want" - || { echo "$o $pair"; false; }
		done
	done
	# by default without the thread frames, which differ from run to run
	joined --no-thread-frames -- "$C/threads_interleaved.tach" "$C/recursion.tach" >"$TMP/want"
	tach-diff "$C/threads_interleaved.tach" "$C/recursion.tach" | diff -u "$TMP/want" -
	# a profile against itself: both columns equal
	tach-diff "$C/threads_interleaved.tach" "$C/threads_interleaved.zstd.tach" |
		awk '$(NF - 1) != $NF { bad = 1 } END { exit bad }'
}

@test "--from samples, filters, and stdin as one input" {
	tach-diff --per-run --from samples "$TESTDATA/mixed.samples" "$SOURCE_ROOT/examples/batch.samples" >"$TMP/got"
	tach-encode "$TESTDATA/mixed.samples" -o "$TMP/a.tach"
	tach-encode "$SOURCE_ROOT/examples/batch.samples" -o "$TMP/b.tach"
	joined -- "$TMP/a.tach" "$TMP/b.tach" | diff -u - "$TMP/got"
	tach-diff --per-run --thread 7 --status cpu "$TMP/a.tach" - <"$TMP/b.tach" >"$TMP/got"
	joined --thread 7 --status cpu -- "$TMP/a.tach" "$TMP/b.tach" | diff -u - "$TMP/got"
	[ -s "$TMP/got" ]
}

@test "usage errors exit 2" {
	run tach-diff "$C/recursion.tach"
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach-diff: 2 input files needed, not 1"* ]]
	run tach-diff "$C/recursion.tach" "$C/recursion.tach" "$C/recursion.tach"
	[ "$status" -eq 2 ]
	run tach-diff - - </dev/null
	[ "$status" -eq 2 ]
	run tach-diff --labels nope "$C/recursion.tach" "$C/recursion.tach"
	[ "$status" -eq 2 ]
	run tach-diff --from pstats "$C/recursion.tach" "$C/recursion.tach"
	[ "$status" -eq 2 ]
	run tach-diff -x "$C/recursion.tach" "$C/recursion.tach"
	[ "$status" -eq 2 ]
	[ -z "$(ls "$TMP")" ]
}

@test "a missing file, a bad BASE or NEW: exit 1 naming it, no -o file" {
	local bad=$FIXTURES/tach/errors/err_bad_magic.tach
	run tach-diff "$C/recursion.tach" "$TMP/missing.tach" -o "$TMP/d.txt"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-diff: $TMP/missing.tach: No such file or directory" ]
	run tach-diff "$bad" "$C/recursion.tach" -o "$TMP/d.txt"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-diff: $bad: offset "[0-9]*": "* ]]
	run tach-diff "$C/recursion.tach" "$bad" -o "$TMP/d.txt"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-diff: $bad: offset "[0-9]*": "* ]]
	printf '@interval_us 100\n1 0 100 1\tf.py:a:1\n1 0 200 1\tf.py:a:x\n' >"$TMP/bad.samples"
	run tach-diff --from samples "$TESTDATA/mixed.samples" "$TMP/bad.samples" -o "$TMP/d.txt"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-diff: $TMP/bad.samples:3: "* ]]
	[ "$(ls "$TMP")" = bad.samples ]
}

@test "-o, -v, -q, a write error" {
	tach-diff "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/d.txt"
	tach-diff "$C/recursion.tach" "$C/rle_runs.tach" | cmp - "$TMP/d.txt"
	run tach-diff -v "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/d.txt"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'tach-diff: %s: tach input\ntach-diff: %s: tach input\ntach-diff: 2 inputs: 51 samples read, 51 written' "$C/recursion.tach" "$C/rle_runs.tach")" ]
	run tach-diff -q -f "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/d.txt"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	run bash -c 'tach-diff "$0" "$0" >/dev/full' "$C/threads_interleaved.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach-diff: <stdout>: No space left on device"* ]]
}

@test "the man page documents every option" {
	local o
	for o in $(tach-diff --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -qE -- "\*(-[a-zA-Z], )?$o\*" "$SOURCE_ROOT/docs/tach-diff.1.scd" || { echo "missing $o"; false; }
	done
}

@test "two inputs without samples: empty output, exit 0, nothing else left (UBSan checks the sort)" {
	printf '@interval_us 1000\n' | tach-encode -o "$TMP/e.tach"
	run tach-diff "$TMP/e.tach" "$TMP/e.tach" -o "$TMP/d.folded"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -f "$TMP/d.folded" ] && [ ! -s "$TMP/d.folded" ]
	[ "$(ls "$TMP" | sort | xargs)" = "d.folded e.tach" ]
}

@test "folded inputs: frames as written, as difffolded.pl keeps them" {
	printf 'a;f (/a/lib/util.py:5) 3\na;f (/b/lib/util.py:5) 4\nmain;operator new  7\n\n# note\nx 1\r\ny\t2\nz 1.5\nz 2.5\n' >"$TMP/b.folded"
	printf 'main;operator new  2\nmain;operator new 5\n0x1;g 0x2 6\n' >"$TMP/n.folded"
	tach-diff "$TMP/b.folded" - <"$TMP/n.folded" >"$TMP/got"
	printf '%s\n' ' 0 0' '0x1;g 0x2 0 6' 'a;f (/a/lib/util.py:5) 3 0' 'a;f (/b/lib/util.py:5) 4 0' \
		'main;operator new 0 5' 'main;operator new  7 2' 'x 1 0' 'y 2 0' 'z 4 0' | diff -u - "$TMP/got"
	tach-diff -s "$TMP/b.folded" "$TMP/n.folded" | grep -qx '0x...;g 0x... 0 6'
	# the label options leave a folded input alone
	tach-diff --no-thread-frames --labels pyspy --full-paths "$TMP/b.folded" "$TMP/n.folded" |
		cmp - "$TMP/got"
}

@test "a folded input with CRLF line ends joins as its LF text, as tach-decode reads it" {
	printf 'a;b 5\r\na;c 2\r\nd 1.5\r\ne 3' >"$TMP/crlf.folded"
	tr -d '\r' <"$TMP/crlf.folded" >"$TMP/lf.folded"
	printf 'a;b 7\na;c 1\n' >"$TMP/n.folded"
	tach-diff "$TMP/lf.folded" "$TMP/n.folded" >"$TMP/want"
	printf '%s\n' 'a;b 5 7' 'a;c 2 1' 'd 1.5 0' 'e 3 0' | diff -u - "$TMP/want"
	tach-diff "$TMP/crlf.folded" "$TMP/n.folded" | diff -u "$TMP/want" -
	tach-diff "$TMP/n.folded" "$TMP/crlf.folded" >"$TMP/got"
	tach-diff "$TMP/n.folded" "$TMP/lf.folded" | diff -u - "$TMP/got"
	# tach-decode reads the same file the same way
	[ "$(tach-decode "$TMP/crlf.folded" | sort)" = "$(tach-decode "$TMP/lf.folded" | sort)" ]
}

@test "every folded fixture: the same lines as difffolded.pl's rules, with and without -n" {
	local f prev o i=0
	prev=$FIXTURES/perf/real/sort-fp-collapsed-tid.txt
	for f in "$FG"/*.folded "$FIXTURES"/perf/expected/*collapsed*.txt "$FIXTURES"/perf/real/*collapsed*.txt; do
		for o in "" -n -s "-n -s"; do
			i=$((i + 1))
			# shellcheck disable=SC2086
			tach-diff $o "$prev" "$f" >"$TMP/got.$i" 2>"$TMP/err"
			[ ! -s "$TMP/err" ] || { cat "$TMP/err"; false; }
			printf '%s\t%s\t%s\t%s\n' "$o" "$prev" "$f" "$TMP/got.$i" >>"$TMP/list"
		done
		prev=$f
	done
	[ "$i" -ge 200 ]
	$RULES --check "$TMP/list"
}

@test "live: two perf record -g captures folded, as difffolded.pl's rules join them" {
	command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
	perf record -q -e cpu-clock -o "$TMP/probe.data" true >"$TMP/probe.log" 2>&1 ||
		skip "perf_event_open refused: $(head -1 "$TMP/probe.log")"
	cc -O0 -g -fno-omit-frame-pointer -pthread "$TESTDATA/perf/livetest.c" -o "$TMP/livetest"
	local k
	for k in 1 2; do
		(cd "$TMP" && perf record -q -e cpu-clock -F 499 -g -o live$k.data ./livetest >/dev/null)
		perf script -i "$TMP/live$k.data" >"$TMP/live$k.perf" 2>/dev/null
		# stackcollapse-perf.pl's folded form: counts are perf's periods
		tach-decode -q --labels perf "$TMP/live$k.perf" >"$TMP/live$k.folded"
	done
	tach-diff "$TMP/live1.folded" "$TMP/live2.folded" >"$TMP/got"
	tach-diff -n "$TMP/live1.folded" "$TMP/live2.folded" >"$TMP/got.n"
	grep -Eq '^livetest;(.*;)?main;worker;hot_a [0-9]+ [0-9]+$' "$TMP/got"
	printf '\t%s\t%s\t%s\n-n\t%s\t%s\t%s\n' "$TMP/live1.folded" "$TMP/live2.folded" "$TMP/got" \
		"$TMP/live1.folded" "$TMP/live2.folded" "$TMP/got.n" >"$TMP/list"
	$RULES --check "$TMP/list"
}

@test "a folded input from a pipe is read whole, as from a file" {
	tach-diff "$FG/perf.folded" "$FG/perf2.folded" >"$TMP/want"
	cat "$FG/perf2.folded" | tach-diff "$FG/perf.folded" - | diff -u "$TMP/want" -
	cat "$FG/perf.folded" | tach-diff - "$FG/perf2.folded" | diff -u "$TMP/want" -
	[ -s "$TMP/want" ]
	[ "$(ls "$TMP")" = want ]
}

@test "--help names the operands it reads and no code identifier; the converters say they read any format" {
	run tach-diff --help
	[[ $output == *"Reads BASE and NEW; - is standard input (once at most)."* ]]
	[[ $output != *"Reads every FILE"* ]]
	for p in tach-decode tach-diff tach-merge tach2pprof tach2gecko tach2sampler tach2speedscope \
		tach2pstats tach2flamegraph perf2tach collapsed2tach gperf2tach sampler2tach \
		speedscope2tach tach-encode; do
		run "$p" --help
		[ "$status" -eq 0 ]
		if grep -E '\b(tc|tachi)_[a-z_]+' <<<"$output"; then
			echo "$p --help shows a code identifier" >&2
			return 1
		fi
	done
	for p in tach-decode tach2pprof tach2gecko tach2sampler; do
		run "$p" --help
		[[ ${lines[1]} != *"TACH profile to"* ]]
		grep -q "^$p - [a-z]* a profile to" "$SOURCE_ROOT/docs/$p.1.scd"
	done
	tach-decode --help | grep -q "('auto' detects it; 'help' lists the formats)"
}

@test "many stacks: 20,000 frames short and long, long shared prefixes, stacks inside stacks, in the rules' order" {
	# frame ids past two varint bytes, names of 0 to 40 bytes, stacks that share their
	# first twenty frames (the order is decided deep), "a;b" beside "a;b;c", "ab" beside
	# "abc", repeats within and across the files (found again by their text)
	awk -v dir="$TMP" 'BEGIN {
		srand(7)
		split("main;run;loop;step;work;a;ab;abc;ab;", fixed, ";")
		for (k = 1; k <= 2; k++)
			for (i = 0; i < 12000; i++) {
				d = 1 + int(rand() * 30); s = ""
				for (x = 0; x < d; x++) {
					r = rand()
					if (x < 20 && r < 0.7) f = fixed[1 + (x % 9)] (x % 3 ? "" : "_" int(rand() * 3))
					else if (r < 0.85) f = "f" int(rand() * 20000)
					else if (r < 0.95) f = "a_function_name_longer_than_sixteen_" int(rand() * 50)
					else f = ""
					s = s (x ? ";" : "") f
				}
				print s, 1 + int(rand() * 9) > (dir "/g" k)
				if (rand() < 0.2) print s, 2 > (dir "/g" (3 - k))
			}
	}'
	[ "$(sort -u "$TMP/g1" | wc -l)" -gt 10000 ]
	for o in "" -n; do
		# shellcheck disable=SC2086
		tach-diff $o --from collapsed "$TMP/g1" "$TMP/g2" >"$TMP/got"
		# shellcheck disable=SC2086
		$RULES $o "$TMP/g1" "$TMP/g2" | diff -u - "$TMP/got"
	done
	[ "$(wc -l <"$TMP/got")" -gt 20000 ]
}

@test "a folded file is read through its mapping: the lines a pipe gives, a few reads whatever its size" {
	awk -v dir="$TMP" 'BEGIN { for (k = 1; k <= 2; k++) for (i = 0; i < 90000; i++)
		printf "main;worker_%d;step_%d;leaf_function_%d %d\n", i % 97, i % 1013, i % 7919, 1 + i % 5 \
			> (dir "/m" k) }'
	[ "$(stat -c %s "$TMP/m1")" -gt 4000000 ]
	tach-diff "$TMP/m1" "$TMP/m2" >"$TMP/file"
	cat "$TMP/m2" | tach-diff "$TMP/m1" - >"$TMP/pipe"
	[ -s "$TMP/file" ]
	cmp "$TMP/file" "$TMP/pipe"
	$RULES "$TMP/m1" "$TMP/m2" | diff -u - "$TMP/file"
	# read(2) on each file: the detection's peeks only, where a MiB buffer would take five
	# (LeakSanitizer cannot run under ptrace)
	ASAN_OPTIONS=detect_leaks=0 strace -e trace=openat,read,close -o "$TMP/trace" \
		tach-diff "$TMP/m1" "$TMP/m2" >/dev/null
	for k in 1 2; do
		fd=$(sed -n "s|.*openat(.*$TMP/m$k\".*= \([0-9]*\)\$|\1|p" "$TMP/trace")
		[ -n "$fd" ]
		# from its open to its close
		reads=$(sed -n "\|$TMP/m$k\"|,\$p" "$TMP/trace" | sed "/^close($fd)/q" |
			grep -c "^read($fd, ")
		[ "$reads" -le 3 ] || { echo "m$k: $reads reads"; false; }
	done
}

@test "options a folded input is not read with are each named in a warning, not dropped unsaid; -q silences them" {
	printf 'a;b 3\na;c 2\n' >"$TMP/b.folded"
	printf 'a;b 1\na;d 2\n' >"$TMP/n.folded"
	tach-diff "$TMP/b.folded" "$TMP/n.folded" >"$TMP/want"
	run tach-diff --thread 5 --count-unit samples --labels pyspy "$TMP/b.folded" "$TMP/n.folded"
	[ "$status" -eq 0 ]
	local why='folded input, joined as difffolded.pl joins it; ignored'
	[ "${#lines[@]}" -eq 9 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c "^tach-diff: $TMP/[bn].folded: warning: --labels does not apply to $why\$")" -eq 2 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c "^tach-diff: $TMP/[bn].folded: warning: --count-unit does not apply to $why\$")" -eq 2 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c "^tach-diff: $TMP/[bn].folded: warning: the sample filters (--thread, --status, --from-us, --to-us) do not apply to $why\$")" -eq 2 ]
	# the lines are those without the options
	tach-diff -q --thread 5 --count-unit samples --labels pyspy "$TMP/b.folded" "$TMP/n.folded" 2>"$TMP/err" | diff "$TMP/want" -
	[ ! -s "$TMP/err" ]
}

# shared BASE NEW: the share of NEW's count on stacks BASE has too, in percent (tach-diff's
# "STACK BASE NEW" lines on stdin).
# shared: of tach-diff's lines (STACK BASE NEW), the percentage the two profiles have in
# common, as shares of their own totals (two runs of one program take a different number of
# samples, more so on a loaded machine).
shared() {
	awk '{ a[NR] = $(NF - 1); b[NR] = $NF; A += $(NF - 1); B += $NF }
		END { for (i = 1; i <= NR; i++) { x = A ? a[i] / A : 0; y = B ? b[i] / B : 0; s += x < y ? x : y }
			printf "%d\n", 100 * s }'
}

@test "two runs of one program share their stacks by default; --per-run keeps thread ids, pids and addresses" {
	# two TACH profiles of one program whose thread ids differ, as in two runs
	printf '@interval_us 1000\n5 0 0 2\tw.py:hot:3;w.py:main:1\n5 0 1000 2\tw.py:cold:7;w.py:main:1\n' >"$TMP/r1.samples"
	sed 's/^5 /9 /' "$TMP/r1.samples" >"$TMP/r2.samples"
	tach-encode "$TMP/r1.samples" -o "$TMP/r1.tach"
	tach-encode "$TMP/r2.samples" -o "$TMP/r2.tach"
	[ "$(tach-diff "$TMP/r1.tach" "$TMP/r2.tach" | shared)" -eq 100 ]
	[ "$(tach-diff --per-run "$TMP/r1.tach" "$TMP/r2.tach" | shared)" -eq 0 ]
	# two perf.data captures: another process id each, and for frames without a symbol
	# (--no-symbolize: module and file offset) nothing that moves
	command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
	perf record -q -e cpu-clock -o "$TMP/probe.data" true >"$TMP/probe.log" 2>&1 ||
		skip "perf_event_open refused: $(head -1 "$TMP/probe.log")"
	cc -O0 -fno-omit-frame-pointer -pthread "$TESTDATA/perf/livetest.c" -o "$TMP/livetest"
	local k
	for k in 1 2; do
		(cd "$TMP" && perf record -q -e cpu-clock -F 499 -g -o run$k.data ./livetest >/dev/null 2>&1)
	done
	tach-diff "$TMP/run1.data" "$TMP/run2.data" >"$TMP/got"
	grep -Eq '^\[comm\]:livetest:0;(.*;)?livetest:main:0;livetest:worker:0;livetest:hot_a:0 [1-9][0-9]* [1-9][0-9]*$' "$TMP/got"
	[ "$(shared <"$TMP/got")" -ge 80 ]
	tach-diff --per-run "$TMP/run1.data" "$TMP/run2.data" >"$TMP/got.p"
	[ "$(shared <"$TMP/got.p")" -eq 0 ]
	# unsymbolized frames named by address in each run: one frame "0x..." in both
	tach-diff --no-symbolize "$TMP/run1.data" "$TMP/run2.data" >"$TMP/got.ns"
	grep -q 'livetest:livetest+0x[0-9a-f]*:0;' "$TMP/got.ns"
	! grep -Eq '(^|;)[^;]*:0x[0-9a-f]+:0( |;)' "$TMP/got.ns" || false
	# (the leaf's instruction varies from sample to sample: less in common than above)
	[ "$(shared <"$TMP/got.ns")" -ge 60 ]
}
