#!/usr/bin/env bats
# Text reports of call trees that no Debian program writes, read by every program without
# naming the format: macOS sample's call graph, Instruments' deep copies of call trees,
# VTune's CSV call stacks, Visual Studio's CallTreeSummary CSV. The peers' files (../shared/peers, PEERS or
# PEERS_DIR elsewhere) fold to what inferno made of them (expected/formats/), through
# tests/cli/textfmt_fold.py, which computes the collapsers' rules and gives the peers'
# readings, and speedscope's importer's rules for the deep copy (the same script); our
# files written to the producers' documented output (tests/data/macsample, instruments,
# vtune, vsprof)
# fold to what the same rules give; values and times are the format's; damaged input is
# one line with the file and line, exit 1.

setup() {
	T=$BATS_TEST_TMPDIR
	PEER=${PEERS_DIR:-${PEERS:-$SOURCE_ROOT/../shared/peers}}
	FOLD="python3 $SOURCE_ROOT/tests/cli/textfmt_fold.py"
}

# folds KIND FILE: ours (threads as the collapser's Thread_N roots), from the file, from a
# pipe and with --from, equal the collapser's rules'.
folds() {
	local kind=$1 f=$2
	$FOLD "$kind" "$f" >"$T/want"
	[ -s "$T/want" ]
	tach-decode -q "$f" | sed 's/^tid:/Thread_/' | sort >"$T/file"
	tach-decode -q <"$f" | sed 's/^tid:/Thread_/' | sort >"$T/pipe"
	tach-decode -q --from "$kind" "$f" | sed 's/^tid:/Thread_/' | sort >"$T/from"
	diff -u "$T/want" "$T/file"
	diff -u "$T/want" "$T/pipe"
	diff -u "$T/want" "$T/from"
}

@test "the peers' macOS sample report folds as inferno's sample collapser folds it" {
	[ -d "$PEER/formats" ] || skip "../shared/peers is not there"
	f=$PEER/formats/macos-sample.txt
	# the checker gives inferno's lines; the peers' file kept the last of repeated ones
	$FOLD macsample "$f" --last-wins | diff -u <(sort "$PEER/expected/formats/macos-sample.folded") -
	folds macsample "$f"
	run tach-decode -v "$f"
	[[ ${lines[0]} == "tach-decode: $f: macsample input" ]]
	# the main thread waits in __ulock_wait, four stacks end in read: left out, as inferno
	# does, and said
	run --separate-stderr tach-decode "$f"
	[[ $stderr == *"5 stacks of waiting threads (1046 samples in __ulock_wait"* ]]
	[[ $output != *"tid:15758523;"* ]]
}

@test "our macOS sample report: modules, C++ and Rust names, unknown binaries, threads" {
	f=$TESTDATA/macsample/report.txt
	folds macsample "$f"
	tach-decode -q "$f" >"$T/out"
	grep -qx 'tid:901233;dyld`start;demo`main;demo`Engine::step;demo`std::__1::vector<int, std::__1::allocator<int>>::push_back;libc++abi`operator new;libsystem_malloc`malloc 200' "$T/out"
	grep -qx 'tid:901233;dyld`start;demo`main;demo`demo::physics::solve;demo`<demo::Body as demo::Step>::step 80' "$T/out"
	grep -qx 'tid:901233;dyld`start;demo`main;<unknown binary>`???;<unknown binary>`??? 9' "$T/out"
	# a leaf's count, the lines of one function at two offsets one frame
	grep -qx 'tid:901240;libsystem_pthread`thread_start;libsystem_pthread`_pthread_start;demo`worker_main;demo`Engine::step;demo`Engine::integrate 40' "$T/out"
	# the wait in mach_msg_trap, and what follows the graph, are not stacks
	[ "$(wc -l <"$T/out")" -eq 5 ]
	run ! grep -e mach_msg_trap -e 'Binary' "$T/out"
}

@test "sample's interval is the samples' time; its counts are samples" {
	tach-decode -F info "$TESTDATA/macsample/report.txt" >"$T/info"
	grep -qx 'format: macsample' "$T/info"
	grep -qx 'sample_interval_us: 5000' "$T/info"
	grep -qx 'weight_total: 430' "$T/info"
	grep -qx 'weight_total_us: 2150000' "$T/info"
	grep -qx 'threads: 2' "$T/info"
	tach-decode -q --no-thread-frames --value time "$TESTDATA/macsample/report.txt" >"$T/time"
	grep -q 'libsystem_malloc`malloc 1000000$' "$T/time"
	# no interval in the header: counts, no time
	sed 's/ every 5 milliseconds//' "$TESTDATA/macsample/report.txt" >"$T/noiv.txt"
	tach-decode -F info "$T/noiv.txt" | grep -qx 'sample_interval_us: 0'
	run tach2pprof -o "$T/p.pb.gz" "$T/noiv.txt"
	[ "$status" -eq 0 ]
	[[ $output == *"carry no time"* ]]
}

@test "every writer's output of a sample report reads back to the same stacks" {
	f=$TESTDATA/macsample/report.txt
	tach-decode -q --no-thread-frames "$f" | sort >"$T/want"
	tach-merge -q -o "$T/t.tach" "$f"
	tach2pprof -q -o "$T/t.pb.gz" "$f"
	tach2speedscope -q -o "$T/t.json" "$f"
	for o in t.tach t.pb.gz; do
		tach-decode -q --no-thread-frames "$T/$o" | sort | diff -u "$T/want" -
	done
	# speedscope keeps each stack's time (a run of samples one weighted sample): the times
	tach-decode -q --no-thread-frames --value time "$f" | sort >"$T/want.us"
	tach-decode -q --no-thread-frames --value time "$T/t.json" | sort | diff -u "$T/want.us" -
}

@test "Instruments deep copies: each stack's own time, as speedscope's importer builds it" {
	for f in "$PEER/formats/instruments-deep-copy.txt" "$TESTDATA"/instruments/*.txt; do
		[ -e "$f" ] || continue
		v=time
		[[ $f == *allocations* ]] && v=count
		# the values' decimals kept (speedscope's parseInt drops them), in µs or bytes
		$FOLD instruments "$f" --exact >"$T/want"
		tach-decode -q --no-thread-frames --value $v "$f" | sort | diff -u "$T/want" -
		tach-decode -q --no-thread-frames --value $v <"$f" | sort | diff -u "$T/want" -
		tach-decode -q --no-thread-frames --value $v --from instruments "$f" | sort |
			diff -u "$T/want" -
		run tach-decode -v -q "$f"
		[[ ${lines[0]} == "tach-decode: $f: instruments input" ]]
	done
}

@test "the peers' deep copy: speedscope's times, and Instruments' own Self column" {
	f=$PEER/formats/instruments-deep-copy.txt
	[ -e "$f" ] || skip "../shared/peers is not there"
	# whole ms there: speedscope's reading is ours, counts and times alike
	$FOLD instruments "$f" >"$T/want"
	tach-decode -q --no-thread-frames "$f" | sort | diff -u "$T/want" -
	$FOLD instruments "$f" --self-column | diff -u "$T/want" -
	tach-decode -F info "$f" >"$T/info"
	grep -qx 'weight_total: 4273' "$T/info"
	grep -qx 'weight_total_us: 4273000' "$T/info"
}

@test "our deep copies: seconds with decimals, a node its children outgrow, bytes" {
	f=$TESTDATA/instruments/time-profile.txt
	tach-decode -q --no-thread-frames --value time "$f" >"$T/out"
	# 1.20 s is 1.2 s (speedscope's parseInt makes it 1 s)
	grep -qx 'demo (4242);Main Thread  0x1a2b3c;start;main;Engine::step(double) 1200000' "$T/out"
	# 3.7 ms whose children sum 14 ms: none of its own, and the tree spans 2.522 s, not the
	# root's 2.51
	run ! grep -x 'demo (4242);Main Thread  0x1a2b3c;_dispatch_worker_thread2 [0-9]*' "$T/out"
	tach-decode -q --no-thread-frames "$f" | grep -qx 'demo (4242);Main Thread  0x1a2b3c;<Unknown Address> 8'
	tach-decode -F info "$f" | grep -qx 'weight_total_us: 2522000'
	# Allocations: the weights are bytes, with no time
	f=$TESTDATA/instruments/allocations.txt
	tach-decode -q --no-thread-frames "$f" | grep -qx 'demo;start;main;Image::load(char const\*) 2097152'
	run tach2pprof -o "$T/p.pb.gz" "$f"
	[ "$status" -eq 0 ]
}

@test "VTune CSV call stacks fold as inferno's vtune collapser folds them, times in ms" {
	f=$PEER/formats/vtune.csv
	if [ -e "$f" ]; then
		$FOLD vtune "$f" | diff -u <(sort "$PEER/expected/formats/vtune.folded") -
		tach-decode -q --no-thread-frames "$f" | sort | diff -u <(sort "$PEER/expected/formats/vtune.folded") -
	fi
	for f in "$TESTDATA"/vtune/*.csv; do
		$FOLD vtune "$f" >"$T/want"
		tach-decode -q --no-thread-frames "$f" | sort | diff -u "$T/want" -
		tach-decode -q --no-thread-frames <"$f" | sort | diff -u "$T/want" -
		tach-decode -q --no-thread-frames --from vtune "$f" | sort | diff -u "$T/want" -
		run tach-decode -v -q "$f"
		[[ ${lines[0]} == "tach-decode: $f: vtune input" ]]
	done
	f=$TESTDATA/vtune/top-down.csv
	tach-decode -q --no-thread-frames --value time "$f" >"$T/time"
	# seconds as time, quoted names with commas, an empty module, half a ms rounded up,
	# less than half left out
	grep -qx '\[Unknown\]`Total;app`_start;libc.so.6`__libc_start_main;app`main;app`Solver::run(int, double) 1250000' "$T/time"
	grep -qx '\[Unknown\]`Total;app`_start;libc.so.6`__libc_start_main;app`main;jit_stub 100000' "$T/time"
	tach-decode -q --no-thread-frames "$f" | grep -q ';libc.so.6`printf 3$'
	run ! grep memcpy "$T/time"
	tach-decode -F info "$f" | grep -qx 'weight_total_us: 1442500'
}

@test "Visual Studio CallTreeSummary CSV folds as inferno's vsprof collapser folds it, in calls" {
	f=$PEER/formats/vsprof-CallTreeSummary.csv
	if [ -e "$f" ]; then
		# inferno keeps the last of a stack's repeated counts (a map's insert), the peers'
		# file with it; the sum is the reading (a flame graph sums repeated lines)
		$FOLD vsprof "$f" --last-wins |
			diff -u <(sort "$PEER/expected/formats/vsprof-CallTreeSummary.folded" | tr -d '\r') -
		$FOLD vsprof "$f" >"$T/want"
		tach-decode -q --no-thread-frames "$f" | sort | diff -u "$T/want" -
	fi
	f=$TESTDATA/vsprof/CallTreeSummary.csv
	$FOLD vsprof "$f" >"$T/want"
	tach-decode -q --no-thread-frames "$f" | sort | diff -u "$T/want" -
	tach-decode -q --no-thread-frames <"$f" | sort | diff -u "$T/want" -
	tach-decode -q --no-thread-frames --from vsprof "$f" | sort | diff -u "$T/want" -
	run tach-decode -v -q "$f"
	[[ ${lines[0]} == "tach-decode: $f: vsprof input" ]]
	tach-decode -q --no-thread-frames "$f" >"$T/out"
	# thousands separators; Run's 500 calls less Flush's 300; Flush twice, summed
	grep -qx 'App.Program.Main(string\[\]);App.Worker.Run(int32);App.Worker.Step();System.Math.Sqrt(float64) 1250000' "$T/out"
	grep -qx 'App.Program.Main(string\[\]);App.Worker.Run(int32) 200' "$T/out"
	grep -qx 'App.Program.Main(string\[\]);App.Worker.Run(int32);App.Worker.Flush() 320' "$T/out"
	tach-decode -F info "$f" | grep -qx 'time_span_us: 0'
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

@test "damaged sample reports: one line with the line number, exit 1, no output" {
	H='Analysis of sampling x (pid 1) every 1 millisecond\n\nCall graph:\n    3 Thread_7\n'
	bad macsample "$H"'    + 3 f  (in a) + 1  [0x1]\n    +     2 g  (in a) + 2  [0x2]\n' 6 \
		"a call graph line more than one level deeper"
	bad macsample "$H"'    + 3 f  (in a) + 1  [0x1]\n    + x g  (in a)\n' 6 \
		"a call graph line without its sample count"
	bad macsample "$H"'    + 99999999999999999999 f  (in a) + 1  [0x1]\n' 5 \
		"a call graph line whose count is past 64 bits"
	bad macsample "$H"'  + 3 f  (in a) + 1  [0x1]\n' 5 \
		"a call graph line that does not start with four spaces"
	bad macsample 'Analysis of sampling x (pid 1) every 99999999999999999 milliseconds\n' 1 \
		"a sampling interval past"
	run tach-decode --max-depth 3 "$TESTDATA/macsample/report.txt"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"report.txt:28: stack deeper than the limit of 3 frames"* ]]
	run tach-decode -F samples --max-samples 300 "$TESTDATA/macsample/report.txt"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"report.txt:31: the counts add up to more than 300 samples"* ]]
	bad instruments 'Running Time\tSymbol Name\n1.0ms  100.0%%\ta\n2.0ms  1.0%%\t  b\n' 3 \
		"a call tree node more than one level deeper"
	bad instruments 'Running Time\tSymbol Name\n99999999999999999999.0ms  100.0%%\ta\n' 2 \
		"a node's value past 64 bits"
	run tach-decode --from instruments <<<"Running Time	Self"
	[ "$status" -eq 1 ]
	[[ $output == *":1: an Instruments call tree header without a \"Symbol Name\" column"* ]]
	H='Function Stack,CPU Time:Self,Module\nTotal,0.0,[Unknown]\n'
	bad vtune "$H"'   f,1.0,m\n' 3 "a VTune call stack line more than one level deeper"
	bad vtune "$H"' f,1.0\n' 3 "a VTune call stack line without its function, CPU time and module"
	bad vtune "$H"' f,1e3,m\n' 3 "a VTune call stack line whose CPU time is no number of seconds"
	bad vtune "$H"' f,99999999999.0,m\n' 3 "a VTune call stack line whose CPU time is past 64 bits"
	H='Level,Function Name,Number of Calls,Elapsed Inclusive Time %%,Elapsed Exclusive Time %%,Avg Elapsed Inclusive Time,Avg Elapsed Exclusive Time,Module Name,\n'
	bad vsprof "$H"'0,"a",1,0,0,0,0,"m",\n1,b,2,0\n' 3 "a Visual Studio call tree line without its function name"
	bad vsprof "$H"'0,"a",x,0\n' 2 "a Visual Studio call tree line without its level and number of calls"
	bad vsprof "$H"'0,"a","99,999,999,999,999,999,999",0\n' 2 "a Visual Studio call tree line with a number past 64 bits"
	# a header that never reaches the graph: no call graph, said
	run tach-decode --from macsample <<<"Analysis of sampling x (pid 1) every 1 millisecond"
	[[ $output == *"no call graph"* ]]
}
