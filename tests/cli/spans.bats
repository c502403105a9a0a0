#!/usr/bin/env bats
# Chrome trace-event spans (B/E and X events) read as speedscope reads them: the peers'
# files (../shared/peers, PEERS_DIR elsewhere), our own file of the importer's corner cases
# (tests/data/spans) and a trace node records here, each compared, stack by stack, with what
# speedscope's own Trace Event Format importer (its npm bundle, tests/cli/speedscope_read.mjs)
# makes of the file, through our tach2speedscope output read back by speedscope's importer
# (tests/cli/spans_check.py); a trace that also holds a CPU profile is read for its samples
# as before; damaged input is one line with the offset, exit 1.

load checked
load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
	PEER=${PEERS_DIR:-${PEERS:-$SOURCE_ROOT/../shared/peers}}
	DATA=$SOURCE_ROOT/tests/data/spans
}


span_check() { # TRACE OURS.json
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_read.mjs" "$BUNDLE" trace "$1" >"$T/peer.txt" &&
		"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_read.mjs" "$BUNDLE" speedscope "$2" >"$T/ours.txt" &&
		python3 "$SOURCE_ROOT/tests/cli/spans_check.py" "$1" "$T/peer.txt" "$T/ours.txt"
}

# same_as_speedscope TRACE: detected (as chrome) and named (--from spans) alike, from a
# file and a pipe, and speedscope reads our conversion as it reads the trace.
same_as_speedscope() {
	local f=$1
	tach2speedscope -q "$f" -o "$T/ours.json"
	tach2speedscope -q --from spans "$f" -o "$T/from.json"
	tach2speedscope -q <"$f" -o "$T/pipe.json"
	cmp "$T/ours.json" "$T/from.json"
	cmp "$T/ours.json" "$T/pipe.json"
	checked "$f" "$T/ours.json" -- span_check "$f" "$T/ours.json"
}

@test "the peers' span files read as speedscope's importer reads them" {
	[ -d "$PEER/formats" ] || skip "../shared/peers is not there"
	speedscope_bundle
	for f in "$PEER"/formats/spans-*.json; do
		same_as_speedscope "$f"
		run tach-decode -v "$f"
		[ "${lines[0]}" = "tach-decode: $f: chrome input" ]
	done
	# each stretch of time one sample: its own time, its length as time
	[ "$(tach-decode -q -F samples "$PEER/formats/spans-simple.json" | grep -v '^@' | cut -f1)" = "$(printf '%s\n' '0 0 0 2 1000' '0 0 1 2 1000' '0 0 2 2 5000' '0 0 7 2 4000' '0 0 11 2 2000' '0 0 13 2 1000')" ]
	# the bare array cut short (no "]") reads as the whole one
	[ "$(tach-decode -q "$PEER/formats/spans-partial.json")" = "$(tach-decode -q "$PEER/formats/spans-simple.json")" ]
}

@test "the importer's corner cases: equal times, unmatched ends, args, spans left open, threads" {
	speedscope_bundle
	same_as_speedscope "$DATA/edges.json"
	run tach-decode --value time "$DATA/edges.json"
	[ "$status" -eq 0 ]
	# each kind of fault warned about once, with its offset
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ': warning: ')" -eq 4 ]
	printf '%s\n' "${lines[@]}" | grep -qx "tach-decode: $DATA/edges.json: offset 691: warning: an end of a span other than the innermost open one is dropped (as speedscope reads it)"
	# a named thread's name is its outermost frame; args are part of the frame
	printf '%s\n' "${lines[@]}" | grep -qxF 'tid:1;[comm]:main:7;run;long {"n":1,"s":"a\"b\tc","l":[true,null,2.5]};short 5'
	printf '%s\n' "${lines[@]}" | grep -qxF 'tid:8;(unnamed) 10'
}

@test "a trace node records: spans as speedscope reads them; with a CPU profile, its samples as before" {
	speedscope_bundle
	command -v node >/dev/null || skip "node is not installed"
	mkdir "$T/rec"
	cd "$T/rec"
	local js='const {performance} = require("perf_hooks"); performance.mark("a"); let s = 0; for (let i = 0; i < 3e6; i++) s += Math.sqrt(i); performance.mark("b"); performance.measure("m", "a", "b"); const x = []; for (let i = 0; i < 2e5; i++) x.push({i});'
	node --trace-events-enabled --trace-event-categories node.perf,v8 -e "$js"
	[ -s node_trace.1.log ]
	same_as_speedscope "$T/rec/node_trace.1.log"
	[ "$(tach-decode -q -F info node_trace.1.log | sed -n 's/^format: //p')" = chrome ]
	# spans and the profiler's events in one trace: detection reads the CPU profile
	rm node_trace.1.log
	node --cpu-prof --trace-events-enabled --trace-event-categories v8,disabled-by-default-v8.cpu_profiler -e "$js"
	grep -q '"ProfileChunk"' node_trace.1.log
	grep -q '"ph":"X"' node_trace.1.log
	tach-decode -q -F samples node_trace.1.log >auto.txt
	tach-decode -q -F samples --from chrome node_trace.1.log >chrome.txt
	tach-decode -q -F samples --from spans node_trace.1.log >spans.txt
	cmp auto.txt chrome.txt
	run cmp -s auto.txt spans.txt
	[ "$status" -ne 0 ]
	# the profile's frames are JavaScript's, with files; the spans' are bare names
	grep -q 'eval_string:' chrome.txt
	run grep -c 'eval_string:' spans.txt
	[ "$output" = 0 ]
	grep -q '~:V8\.' spans.txt
}

bad() { # JSON OFFSET MESSAGE [OPTION...]
	local json=$1 off=$2 msg=$3
	shift 3
	printf '%s' "$json" >"$T/bad.json"
	run tach-decode "$@" -o "$T/out" "$T/bad.json"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ] || [ "$off" = warn ]
	[ "${lines[-1]}" = "tach-decode: $T/bad.json: offset $off: $msg" ] || [[ $off = warn && ${lines[-1]} = *": $msg" ]] || { echo "got: $output"; return 1; }
	[ ! -e "$T/out" ]
}

@test "damaged spans are one line with the offset, exit 1" {
	bad '[{"ph":"B","pid":1,"tid":1,"name":"a"}]' 1 'a span event ("ph" B, E or X) without "ts"'
	bad '[{"ph":"B","pid":1,"tid":1,"ts":"x"}]' 32 'ts must be a number'
	bad '[{"ph":"X","pid":"p","tid":1,"ts":1}]' 17 'pid must be an integer 0..9223372036854775807'
	bad '[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":"5"}]' 40 'dur must be a number'
	bad '[{"ph":"X","pid":1,"tid":1,"ts":1e300,"dur":1}]' 32 'ts 1e300 is out of range'
	bad '[{"ph":"X","ts":4e15,"dur":1}]' 1 "a span's time out of range"
	bad '{"traceEvents":[{"ph":"B","ts":1,"name":"a"},{"ph":"E","ts":' 60 'JSON: unexpected end of input'
	bad '[{"ph":"i","ts":1}]' 0 'no CPU profile and no spans in this trace: no Profile, ProfileChunk, B, E or X event (record with the disabled-by-default-v8.cpu_profiler category)'
	bad '[{"ph":"i","ts":1}]' 0 'no spans in this trace: no "B", "E" or "X" event' --from spans
	bad '[{"ph":"B","ts":1,"name":"a"},{"ph":"B","ts":2,"name":"b"},{"ph":"B","ts":3,"name":"c"},{"ph":"E","ts":4}]' warn 'stack deeper than the depth limit of 2 frames' --max-depth 2
}
