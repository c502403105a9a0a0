#!/usr/bin/env bats
# DTrace aggregations of stacks and bpftrace maps of stacks, read by every program without
# naming the format: the other projects' own files (../shared/peers, PEERS or PEERS_DIR
# elsewhere) fold to what stackcollapse.pl / inferno and stackcollapse-bpftrace.pl made of
# them (expected/formats/), and our files written to the producers' documented output
# (tests/data/dtrace, tests/data/bpftrace) to what tests/cli/dtrace_fold.py computes from
# the collapsers' rules; a live bpftrace recording where bpftrace runs; every writer's
# output reads back; damaged input is one line with the file and line, exit 1.

setup() {
	T=$BATS_TEST_TMPDIR
	PEER=${PEERS_DIR:-${PEERS:-$SOURCE_ROOT/../shared/peers}}
	FOLD="python3 $SOURCE_ROOT/tests/cli/dtrace_fold.py"
}

# folds KIND FILE: ours, from the file and from a pipe, equal the collapser's rules'.
folds() {
	local kind=$1 f=$2
	$FOLD "$kind" "$f" >"$T/want"
	[ -s "$T/want" ]
	tach-decode -q --no-thread-frames "$f" | sort >"$T/file"
	tach-decode -q --no-thread-frames <"$f" | sort >"$T/pipe"
	tach-decode -q --no-thread-frames --from "$kind" "$f" | sort >"$T/from"
	diff -u "$T/want" "$T/file"
	diff -u "$T/want" "$T/pipe"
	diff -u "$T/want" "$T/from"
}

@test "the peers' DTrace and bpftrace files fold as stackcollapse.pl, inferno and stackcollapse-bpftrace.pl fold them" {
	[ -d "$PEER/formats" ] || skip "../shared/peers is not there"
	for k in dtrace-stack-ustack:dtrace bpftrace-map:bpftrace; do
		f=$PEER/formats/${k%%:*}.txt
		sort "$PEER/expected/formats/${k%%:*}.folded" >"$T/peer"
		# the checker itself gives the peers' readings, so it is right on our files too
		$FOLD "${k##*:}" "$f" | diff -u "$T/peer" -
		folds "${k##*:}" "$f"
		run tach-decode -v "$f"
		[[ ${lines[0]} == "tach-decode: $f: ${k##*:} input" ]]
	done
}

@test "our DTrace and bpftrace files: C++, Rust, Java inlines, addresses, kernel and user stacks, comm" {
	folds dtrace "$TESTDATA/dtrace/ustack-mixed.txt"
	folds bpftrace "$TESTDATA/bpftrace/kstack.txt"
	folds bpftrace "$TESTDATA/bpftrace/ustack-kstack-comm.txt"
	# what the rules make of the names, spelled out once
	tach-decode -q --no-thread-frames "$TESTDATA/dtrace/ustack-mixed.txt" >"$T/out"
	grep -qx 'app`_start;app`main;app`Logger::flush<std::string>;libstdc++.so.6`std::ostream::write;libc.so.1`__write 41' "$T/out"
	grep -q ';app`app::db::Store::commit::_{{closure}};app`<app::db::Store as app::Flush>::flush;' "$T/out"
	grep -qx 'libjvm.so`JavaMain;-;semi:colon`a:b;libjvm.so`Interpreter;libjvm.so`Ljava/util/HashMap:.get;java/util/HashMap:.hash_\[i\] 1200' "$T/out"
	# the stack printed twice: 7 + 5 would be one line if the address frame were not there
	grep -qx 'libc.so.1`_lwp_start;libc.so.1`_thrp_setup;app`worker_loop 5' "$T/out"
	tach-decode -q --no-thread-frames "$TESTDATA/bpftrace/ustack-kstack-comm.txt" >"$T/out"
	grep -qx 'sleep;main+59;0x7f3a2c10;clock_nanosleep+101;do_nanosleep+120;schedule+53 6' "$T/out"
	grep -qx 'swapper/0 90' "$T/out"
	# the named map and "@: 17" are not stacks
	run grep -c -e ' 17$' -e '^1 3$' "$T/out"
	[ "$output" = 0 ]
	[ "$(wc -l <"$T/out")" -eq 3 ]
}

@test "the formats have no time: counts only, said by the writers that show time" {
	tach-decode -F info "$TESTDATA/dtrace/ustack-mixed.txt" >"$T/info"
	grep -qx 'format: dtrace' "$T/info"
	grep -qx 'weight_total: 1256' "$T/info"
	grep -qx 'time_span_us: 0' "$T/info"
	run tach2pprof -o "$T/p.pb.gz" "$TESTDATA/bpftrace/kstack.txt"
	[ "$status" -eq 0 ]
	[[ $output == *"carry no time"* ]]
}

@test "every writer's output of a DTrace aggregation reads back to the same stacks" {
	f=$TESTDATA/dtrace/ustack-mixed.txt
	$FOLD dtrace "$f" >"$T/want"
	tach-merge -q -o "$T/t.tach" "$f"
	tach2pprof -q -o "$T/t.pb.gz" "$f"
	tach2speedscope -q -o "$T/t.json" "$f"
	tach2sampler -q -o "$T/t.trace" "$f"
	for o in t.tach t.pb.gz t.json t.trace; do
		tach-decode -q --no-thread-frames "$T/$o" | sort | diff -u "$T/want" -
	done
}

@test "a map bpftrace records here folds as stackcollapse-bpftrace.pl's rules fold it" {
	command -v bpftrace >/dev/null || skip "bpftrace not installed (Debian package bpftrace)"
	timeout 60 bpftrace -e 'profile:hz:999 { @[ustack, kstack, comm] = count(); }
		interval:s:1 { exit(); }' >"$T/rec.txt" 2>"$T/err" ||
		skip "bpftrace does not run here: $(head -1 "$T/err")"
	grep -q '^@\[' "$T/rec.txt" || skip "bpftrace recorded no stack"
	folds bpftrace "$T/rec.txt"
}

# bad KIND INPUT LINE MESSAGE: INPUT (printf's format) is refused in one line at LINE.
bad() {
	printf "$2" >"$T/bad.txt"
	run tach-decode -o "$T/out" "$T/bad.txt"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == "tach-decode: $T/bad.txt:$3: $4"* ]]
	[ ! -e "$T/out" ]
	run tach-decode --from "$1" -o "$T/out" <"$T/bad.txt"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == "tach-decode: <stdin>:$3: $4"* ]]
}

@test "damaged DTrace and bpftrace input: one line with the line number, exit 1, no output" {
	bad dtrace 'CPU ID\n\n  a`b+0x1\n  1\n\n  c`d+0x2\n  e`f\n' 6 "the input ends inside the stack"
	bad dtrace 'CPU ID\n\n  a`b+0x1\n  18446744073709551616\n' 4 "an aggregation value past 64 bits"
	bad bpftrace 'Attaching 1 probe...\n@[\n    f+1\n]: 3\n@[\n    g+2\n' 5 "the input ends inside the map entry"
	bad bpftrace '@[\n    f+1\n]: 99999999999999999999\n' 3 "a map value past 64 bits"
	run tach-decode --max-depth 2 "$TESTDATA/dtrace/ustack-mixed.txt"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"ustack-mixed.txt:7: stack deeper than the limit of 2 frames"* ]]
	run tach-decode --max-depth 2 "$TESTDATA/bpftrace/kstack.txt"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"kstack.txt:6: stack deeper than the limit of 2 frames"* ]]
	run tach-decode -F samples --max-samples 50 "$TESTDATA/dtrace/ustack-mixed.txt"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"ustack-mixed.txt:26: the counts add up to more than 50 samples"* ]]
	# a header that never ends: no aggregation, said
	run tach-decode --from dtrace <<<"CPU ID FUNCTION:NAME"
	[[ $output == *"no aggregation"* ]]
}
