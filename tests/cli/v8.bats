#!/usr/bin/env bats
# V8 CPU profiles (.cpuprofile) read by every program without naming the format: profiles
# recorded now by `node --cpu-prof` and the committed ones (tests/data/v8: DevTools' key
# order, negative deltas, samples out of time order, "parent" links, one recorded by node)
# give, sample for sample, the stacks tests/cli/v8_expect.py computes from the JSON; the
# known hot functions of tests/data/v8/hot.js are on the stacks that call them; every
# writer's output of them reads back; bad input is one line with file and offset, exit 1.

load v8_writers
load bounded

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/v8
	EXPECT="python3 $SOURCE_ROOT/tests/cli/v8_expect.py"
	BAD_FROM=v8 BAD_FILE=bad.cpuprofile
}

# record DIR: hot.js profiled by node into DIR/hot.cpuprofile.
record() {
	mkdir -p "$1"
	cp "$D/hot.js" "$1/"
	(cd "$1" && "$NODE" --cpu-prof --cpu-prof-dir "$1" --cpu-prof-name hot.cpuprofile \
		--cpu-prof-interval 250 hot.js)
	[ -s "$1/hot.cpuprofile" ]
}

# same_samples FILE [tach-decode options]: the reader's samples are the expected ones.
same_samples() {
	local f=$1
	shift
	$EXPECT expect "$f" >"$T/want"
	tach-decode -q -F samples "$@" "$f" | $EXPECT decode >"$T/got"
	diff -u "$T/want" "$T/got"
	[ "$(grep -c $'\t' "$T/want")" -gt 0 ]
}

@test "node --cpu-prof now: every sample's stack, in time order; hot functions where called" {
	find_node
	record "$T/rec"
	same_samples "$T/rec/hot.cpuprofile"
	run tach-decode -v -F info "$T/rec/hot.cpuprofile"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/rec/hot.cpuprofile: v8 input" ]
	# from a pipe alike
	cat "$T/rec/hot.cpuprofile" | tach-decode -q -F samples | $EXPECT decode | diff -u "$T/want" -
	# the hot functions under the callers hot.js calls them from, and nowhere else
	tach-decode --no-thread-frames "$T/rec/hot.cpuprofile" >"$T/c"
	local m='hot.js:main:[0-9]*'
	grep -q ";$m;hot.js:middle:[0-9]*;hot.js:leafA:[0-9]*[; ]" "$T/c"
	grep -q ";$m;hot.js:middle:[0-9]*;hot.js:leafB:[0-9]*[; ]" "$T/c"
	grep -q ";$m;hot.js:other:[0-9]*;hot.js:leafB:[0-9]*[; ]" "$T/c"
	[ "$(grep -c 'hot.js:leaf' "$T/c")" -eq "$(grep -c "$m;hot.js:\(middle:[0-9]*;hot.js:leaf[AB]\|other:[0-9]*;hot.js:leafB\)" "$T/c")" ]
	# node's meta: no Python version claimed, the interval near the one asked for
	tach-decode -F info "$T/rec/hot.cpuprofile" >"$T/info"
	grep -q '^sample_interval_us: ' "$T/info"
	[ "$(grep -c python_version "$T/info")" -eq 0 ]
}

@test "committed profiles: DevTools key order, negative deltas, out of order, parent links" {
	for f in "$D"/*.cpuprofile; do
		same_samples "$f"
	done
	# by hand: startTime 1000, endTime 3000; samples 3 and 7 go back in time and are put
	# in order, the tie stays in file order: at 1100 1250 1350 1650 1850 1900 2150 2450
	# 2700 2700, each at its own time, standing for the time to the next: 150 100 300 200
	# 50 250 300 250 0 and 300 (up to endTime) us. The median gap, 200, is the interval,
	# which weighs nothing: the one sample of 200 us needs no time of its own in the text.
	# Times are from startTime, the start unknown (0).
	tach-decode -F samples "$D/devtools_order.cpuprofile" >"$T/s"
	[ "$(sed -n 1,2p "$T/s")" = "$(printf '@start_time_us 0\n@interval_us 200')" ]
	[ "$(grep -v '^@' "$T/s" | cut -f1 | cut -d' ' -f3,5 | tr '\n' ',')" = "100 150000,250 100000,350 300000,650,850 50000,900 250000,1150 300000,1450 250000,1700 0,1700 300000," ]
	grep -q $'^0 0 250 2 100000\tfile%3A///app/lib.js:viaParent:3:3:1:-1:-;file%3A///app/main.js:main:10:10:5:-1:-;file%3A///app/main.js:(anonymous):1:1:1:-1:-$' "$T/s"
	[ "$(grep -c $'^0 0 [0-9]* 2 [0-9]*\t~:cold "quoted" \xc3\xa9:-:-:-:-:-;' "$T/s")" -eq 1 ]
	# (idle) is a sample off CPU, (program) and (garbage collector) on it; one sample of
	# 250 us
	[ "$(tach-decode --status idle "$D/devtools_order.cpuprofile")" = "tid:0;(idle) 1" ]
	grep -q $'^0 0 900 0 250000\t~:(idle):' "$T/s"
	[ "$(tach-decode --status cpu "$D/devtools_order.cpuprofile" | grep -c '(program)\|(garbage collector)')" -eq 2 ]
	# self time per function by the time-to-next rule, from the JSON on its own: to the us
	diff -u <($EXPECT self "$D/devtools_order.cpuprofile") <($EXPECT self-decode <"$T/s")
	[ "$($EXPECT self "$D/devtools_order.cpuprofile" | grep '^hot|')" = $'hot|file:///app/main.js\t700' ]
	# the samples text reads back to itself: times, and the lines without one
	tach-decode -F samples "$T/s" | cmp - "$T/s"
	# --from v8 reads it as detection does; the collapsed output sums the same stacks
	diff -u <(tach-decode "$D/devtools_order.cpuprofile") <(tach-decode --from v8 "$D/devtools_order.cpuprofile")
	[ "$(tach-decode --no-thread-frames "$D/devtools_order.cpuprofile" | grep 'hot:20 ')" = "main.js:(anonymous):1;main.js:main:10;main.js:hot:20 3" ]
}

@test "through every writer: TACH, samples, collapsed, pprof, pstats, Sampler, SVG, speedscope, callgrind, Gecko" {
	writer_tools
	for f in "$D"/*.cpuprofile; do
		echo "# $f"
		through_writers "$f"
	done
}

@test "bad input: truncated, wrong types, unknown ids, cycles, limits: file and offset, exit 1" {
	local r='{"id":1,"callFrame":{"functionName":"(root)","url":""}'
	local a='{"id":2,"callFrame":{"functionName":"a","url":"a.js"}'
	local t='"startTime":0'
	bad "{\"nodes\":[$r,\"children\":[2]},$a}],\"samples\":[2],\"timeDeltas\":[1],$t" 181 'JSON: unexpected end of input'
	head -c 120 "$D/node_hot.cpuprofile" >"$T/cut.cpuprofile"
	run tach-decode -o "$T/out" "$T/cut.cpuprofile"
	[ "$status" -eq 1 ]
	# the string cut by the end starts at offset 114
	[ "$output" = "tach-decode: $T/cut.cpuprofile: offset 114: JSON: unterminated string" ]
	[ ! -e "$T/out" ]
	bad '[]' 0 'not a V8 CPU profile: expected a JSON object'
	bad "{\"nodes\":[],\"samples\":[],$t}" 0 'not a V8 CPU profile: no "timeDeltas"'
	bad "{\"nodes\":{},\"samples\":[],\"timeDeltas\":[],$t}" 9 '"nodes" must be an array'
	bad "{\"nodes\":[{\"id\":\"1\",\"callFrame\":{\"functionName\":\"f\"}}],\"samples\":[],\"timeDeltas\":[],$t}" 16 '"id" must be an integer node id'
	bad "{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":7}}],\"samples\":[],\"timeDeltas\":[],$t}" 46 'functionName must be a string'
	bad "{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"f\",\"lineNumber\":-2}}],\"samples\":[],\"timeDeltas\":[],$t}" 63 'lineNumber must be an integer -1..2147483646'
	bad "{\"nodes\":[{\"id\":1}],\"samples\":[],\"timeDeltas\":[],$t}" 10 'node without a "callFrame"'
	bad "{\"nodes\":[$r,\"children\":[2,7]},$a}],\"samples\":[2],\"timeDeltas\":[1],$t}" 79 'child 7 names no node'
	bad "{\"nodes\":[$r,\"children\":[2]},$a}],\"samples\":[9],\"timeDeltas\":[1],$t}" 148 'sample 9 names no node'
	bad "{\"nodes\":[$r,\"children\":[2]},$a,\"children\":[1]}],\"samples\":[2],\"timeDeltas\":[1],$t}" 147 'node 1 is its own ancestor: the parent links form a cycle'
	bad "{\"nodes\":[$r,\"children\":[2]},$a,\"children\":[2]}],\"samples\":[2],\"timeDeltas\":[1],$t}" 147 'node 2 has two parents'
	bad "{\"nodes\":[$r},$r}],\"samples\":[1],\"timeDeltas\":[1],$t}" 66 'node id 1 given twice'
	bad "{\"nodes\":[$r,\"children\":[2]},$a}],\"samples\":[2,2],\"timeDeltas\":[1],$t}" 168 '"samples" and "timeDeltas" differ in length'
	bad "{\"nodes\":[$r,\"children\":[2]},$a}],\"samples\":[2],\"timeDeltas\":[-1],$t}" 165 'a sample time before 0'
	bad "{\"nodes\":[$r,\"children\":[2]},$a}],\"samples\":[2],\"timeDeltas\":[1e30],$t}" 165 'time delta 1e30 is out of range'
	bad "{\"nodes\":[$r,\"children\":[2]},$a}],\"samples\":[2],\"timeDeltas\":[\"1\"],$t}" 165 'time delta must be a number'
	# the depth limit counts frames, (root) not among them
	printf '%s' "{\"nodes\":[$r,\"children\":[2]},$a,\"children\":[3]},{\"id\":3,\"callFrame\":{\"functionName\":\"b\"}}],\"samples\":[3],\"timeDeltas\":[1],$t}" >"$T/deep.cpuprofile"
	tach-decode -q --max-depth 2 "$T/deep.cpuprofile" | grep -qx 'tid:0;a.js:a:0;b 1'
	run tach-decode --max-depth 1 "$T/deep.cpuprofile"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/deep.cpuprofile: offset 205: stack deeper than the depth limit of 1 frames" ]
}

# within A B: A is within 3% of B.
within() {
	python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 0.03 * b)' "$1" "$2" ||
		{ echo "$1 is not within 3% of $2" >&2; return 1; }
}

@test "samples are time: each stands for the time to the next, in the samples text, pprof and speedscope; no wall clock" {
	find_node
	mkdir -p "$T/g"
	cp "$D/gaps.js" "$T/g/"
	(cd "$T/g" && "$NODE" --cpu-prof --cpu-prof-dir "$T/g" --cpu-prof-name gaps.cpuprofile gaps.js)
	local f=$T/g/gaps.cpuprofile span spread n
	# a loaded machine can tick evenly through gaps.js's sleeps: one pause ten times the
	# longest gap, added to the middle positive delta (endTime moves with it), makes the
	# gaps vary whatever the load did, and keeps every other tick as node recorded it
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
td = d["timeDeltas"]
pos = [i for i, x in enumerate(td) if x > 0]
add = 10 * max(td)
td[pos[len(pos) // 2]] += add
d["endTime"] += add
json.dump(d, open(sys.argv[1], "w"))' "$f"
	# the time the samples stand for: from the first sample to endTime (integer us)
	read -r span spread n < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t, ts = d["startTime"], []
for x in d["timeDeltas"]:
    t += x
    ts.append(t)
ts.sort()
gaps = [b - a for a, b in zip(ts, ts[1:]) if b > a]
print(d["endTime"] - ts[0], max(gaps) / min(gaps), len(ts))' "$f")
	echo "samples $n over $span us, longest gap / shortest $spread"
	# the gaps really vary: a weight of one median gap each would miss the span by far
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) < 5)' "$spread"
	# the samples text: one line per sample, their times adding up to the span exactly
	tach-decode -q -F samples "$f" >"$T/g.samples"
	[ "$(grep -c $'\t' "$T/g.samples")" -eq "$n" ]
	[ "$($EXPECT decode <"$T/g.samples" | awk -F'\t' '{ split($1, h, " "); t += h[3] } END { printf "%d", t / 1000 }')" -eq "$span" ]
	tach-decode -F info "$f" >"$T/info"
	grep -qx "weight_total_us: $span" "$T/info"
	grep -qx "samples: $n" "$T/info"
	# self time per function, to the us, as the time-to-next rule gives it from the JSON
	diff -u <($EXPECT self "$f") <($EXPECT self-decode <"$T/g.samples")
	# pprof, as go tool pprof adds it up: the time value, to the ns; one sample each
	tach2pprof -q --no-gzip "$f" -o "$T/g.pb"
	HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/g.pb" >"$T/raw" 2>/dev/null
	[ "$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *[0-9]+ +[0-9]+:/ { sub(":", "", $2); t += $2; c += $1 } END { printf "%d %d", t / 1000, c }' "$T/raw")" = "$span $n" ]
	# ... with no wall-clock time: V8's clock is not one (no time_nanos, no "Time:")
	[ "$(protoc --decode_raw <"$T/g.pb" | grep -c '^9:')" -eq 0 ]
	[ "$(HOME=$T PPROF_TMPDIR=$T go tool pprof -top "$T/g.pb" 2>/dev/null | grep -c '^Time:')" -eq 0 ]
	HOME=$T PPROF_TMPDIR=$T go tool pprof -top "$T/g.pb" 2>/dev/null | grep -q '^Duration: '
	# speedscope: weights in microseconds, the samples' times
	tach2speedscope -q "$f" -o "$T/g.json"
	[ "$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["profiles"]
assert all(x["unit"] == "microseconds" for x in p)
print(round(sum(sum(x["weights"]) for x in p)))' "$T/g.json")" -eq "$span" ]
	# folded stacks count the samples
	[ "$(tach-decode "$f" | awk '{ c += $NF } END { print c }')" -eq "$n" ]
	grep -qx 'format: v8' "$T/info"
	grep -qx 'start_time_us: 0' "$T/info"
	grep -q "^duration_ns: " "$T/info"
	# and sample for sample, the reader's rules as v8_expect.py computes them
	same_samples "$f"
}

@test "a lone surrogate escape, as JSON.stringify writes it, is U+FFFD with a warning; endTime before startTime is warned about" {
	local r='{"id":1,"callFrame":{"functionName":"(root)","url":""},"children":[2,3]}'
	local a='{"id":2,"callFrame":{"functionName":"half\ud800 pair","url":"a.js"}}'
	local b='{"id":3,"callFrame":{"functionName":"\udc00low","url":"b\ud83d\ude00.js"}}'
	printf '%s' "{\"nodes\":[$r,$a,$b],\"startTime\":0,\"endTime\":300,\"samples\":[2,3],\"timeDeltas\":[100,100]}" >"$T/lone.cpuprofile"
	run tach-decode --no-thread-frames "$T/lone.cpuprofile"
	echo "$output"
	[ "$status" -eq 0 ]
	# the first lone escape is at offset 124
	[ "${lines[0]}" = "tach-decode: $T/lone.cpuprofile: offset 124: warning: a \\u escape of a lone surrogate (JSON.stringify writes one for a name with half a UTF-16 pair): read as U+FFFD" ]
	[ "${#lines[@]}" -eq 3 ]
	tach-decode -q --no-thread-frames "$T/lone.cpuprofile" >"$T/c"
	grep -qx $'a.js:half\xef\xbf\xbd pair:0 1' "$T/c"
	grep -qx $'b\xf0\x9f\x98\x80.js:\xef\xbf\xbdlow:0 1' "$T/c"
	# the other JSON readers keep RFC 8259's strings
	run tach-decode --from speedscope <<<'{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"\ud800"}]},"profiles":[]}'
	[ "$status" -eq 1 ]
	[[ $output == *'\u escape of a high surrogate without its low half' ]]
	# endTime before startTime: said, and the last sample stands for no time
	printf '%s' "{\"nodes\":[$r,$a,$b],\"startTime\":500,\"endTime\":300,\"samples\":[2,3],\"timeDeltas\":[100,100]}" >"$T/back.cpuprofile"
	run tach-decode -F samples "$T/back.cpuprofile"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "tach-decode: $T/back.cpuprofile: offset "*": warning: endTime is before startTime: ignored (the last sample stands for no time)" ]]
	[ "$(tach-decode -q -F samples "$T/back.cpuprofile" | tail -n 1)" = $'0 0 200 2 0\tb\xf0\x9f\x98\x80.js:\xef\xbf\xbdlow:-:-:-:-:-' ]
}

@test "node's profiles of a program with a worker thread: several files, one flame graph through tach-merge" {
	find_node
	mkdir -p "$T/wk"
	cat >"$T/wk/wk.js" <<'JS'
const { Worker, isMainThread } = require('worker_threads');
function spinMain(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
function spinWorker(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 5; return s; }
if (isMainThread) { new Worker(__filename); spinMain(2e7); } else { spinWorker(2e7); }
JS
	(cd "$T/wk" && "$NODE" --cpu-prof --cpu-prof-dir "$T/wk/prof" wk.js)
	[ "$(ls "$T"/wk/prof/*.cpuprofile | wc -l)" -eq 2 ]
	# every program takes them as one profile, merged as tach-merge merges them
	tach2flamegraph -q "$T"/wk/prof/*.cpuprofile -o "$T/wk.svg"
	xmllint --noout --nonet "$T/wk.svg"
	grep -q '<title>wk.js:spinMain:2 ' "$T/wk.svg"
	grep -q '<title>wk.js:spinWorker:3 ' "$T/wk.svg"
	tach-merge -q -F samples "$T"/wk/prof/*.cpuprofile >"$T/wk.merged"
	tach-decode -q -F samples "$T"/wk/prof/*.cpuprofile | cmp - "$T/wk.merged"
	tach-decode -q --value time "$T"/wk/prof/*.cpuprofile >"$T/wk.time"
	tach-merge -q -F samples "$T"/wk/prof/*.cpuprofile | tach-decode -q --value time | cmp - "$T/wk.time"
	# an output that describes one input says how to give it several
	run tach-decode -F info "$T"/wk/prof/*.cpuprofile
	[ "$status" -eq 2 ]
	[[ "$output" == "tach-decode: --format info describes one input file; several are one profile through tach-merge: tach-merge FILE... | tach-decode -F info"* ]]
}

@test "issue 57.4: the legacy .cpuprofile (node 10 and older): the head tree, absolute timestamps, one more the end" {
	# as node 10 writes it: head first, the call frame's keys in each node, startTime and
	# endTime in whole seconds, timestamps in us with one past the last sample
	local leaf='{"functionName":"f","url":"/s/a.js","lineNumber":4,"callUID":3,"bailoutReason":"","id":3,"scriptId":9,"hitCount":2,"children":[]}'
	local mid='{"functionName":"","url":"/s/a.js","lineNumber":0,"callUID":2,"bailoutReason":"","id":2,"scriptId":9,"hitCount":1,"children":['"$leaf"']}'
	local gc='{"functionName":"(garbage collector)","url":"","lineNumber":0,"callUID":4,"bailoutReason":"","id":4,"scriptId":0,"hitCount":1,"children":[]}'
	printf '%s' '{"head":{"functionName":"(root)","url":"","lineNumber":-1,"callUID":1,"bailoutReason":"","id":1,"scriptId":0,"hitCount":0,"children":['"$mid,$gc"']},"startTime":5,"endTime":5,"samples":[2,3,3,4],"timestamps":[5000100,5000300,5000400,5000700,5001000]}' >"$T/legacy.cpuprofile"
	run --separate-stderr tach-decode -F samples "$T/legacy.cpuprofile"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# times from the first timestamp; the last sample stands for the time to the extra one
	[ "$(printf '%s\n' "$output" | grep -v '^@')" = "$(printf '%s\n' \
		$'0 0 0 2\t/s/a.js:(anonymous):1:1:-1:-1:-' \
		$'0 0 200 2 100000\t/s/a.js:f:5:5:-1:-1:-;/s/a.js:(anonymous):1:1:-1:-1:-' \
		$'0 0 300 2 300000\t/s/a.js:f:5:5:-1:-1:-;/s/a.js:(anonymous):1:1:-1:-1:-' \
		$'0 0 600 2 300000\t~:(garbage collector):1:1:-1:-1:-')" ] ||
		{ printf '%s\n' "$output"; return 1; }
	tach-decode -F info "$T/legacy.cpuprofile" | grep -qx 'format: v8'
	tach-decode -F info "$T/legacy.cpuprofile" | grep -qx 'duration_ns: 900000'
	# without the extra timestamp: an endTime (s) after the last sample ends it, else none
	sed 's/,5001000\]/]/; s/"endTime":5,/"endTime":5.002,/' "$T/legacy.cpuprofile" >"$T/end.cpuprofile"
	tach-decode -q -F samples "$T/end.cpuprofile" | tail -n 1 | grep -q $'^0 0 600 2 1300000\t'
	sed 's/,5001000\]/]/' "$T/legacy.cpuprofile" >"$T/noend.cpuprofile"
	tach-decode -q -F samples "$T/noend.cpuprofile" | tail -n 1 | grep -q $'^0 0 600 2 0\t'
	# bad: lengths, a node without an id
	bad '{"head":{"functionName":"(root)","id":1,"children":[]},"startTime":0,"samples":[1],"timestamps":[1,2,3]}' 101 '"timestamps" longer than "samples" by more than one'
	bad '{"head":{"functionName":"(root)","id":1,"children":[]},"startTime":0,"samples":[1,1],"timestamps":[1]}' 100 '"samples" and "timestamps" differ in length'
	bad '{"head":{"functionName":"(root)","id":1,"children":[{"functionName":"a"}]},"startTime":0,"samples":[1],"timestamps":[1]}' 52 'node without an "id"'
	# node 10's own example, as speedscope reads it
	peer node10-example.cpuprofile
	as_speedscope "$PEER"
}

@test "issue 57.4: a legacy head tree nested 100,000 deep: one line, bounded, no recursion" {
	python3 -c 'import sys
n = 100000
sys.stdout.write("{\"head\":" + "".join("{\"functionName\":\"f\",\"id\":%d,\"children\":[" % i for i in range(n)))
sys.stdout.write("]}" * n + ",\"startTime\":0,\"samples\":[1],\"timestamps\":[1]}")' >"$T/deep.cpuprofile"
	run --separate-stderr bounded 20 512 tach-decode "$T/deep.cpuprofile"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "tach-decode: $T/deep.cpuprofile: offset "*": JSON: nested deeper than 512 levels" ]] || { echo "$stderr"; return 1; }
	# as deep as the parser goes (250 frames) is read, every frame on the stack
	python3 -c 'import sys
n = 250
sys.stdout.write("{\"head\":" + "".join("{\"functionName\":\"f%d\",\"id\":%d,\"children\":[" % (i, i) for i in range(1, n + 1)))
sys.stdout.write("]}" * n + ",\"startTime\":0,\"samples\":[250],\"timestamps\":[1]}")' >"$T/d250.cpuprofile"
	[ "$(tach-decode -q --no-thread-frames "$T/d250.cpuprofile" | tr ';' '\n' | wc -l)" -eq 250 ]
	# 100,000 leaves under a 250-deep chain: each node read once (time follows the size,
	# not the size times the depth)
	python3 -c 'import sys
n = 250
sys.stdout.write("{\"head\":" + "".join("{\"functionName\":\"f%d\",\"id\":%d,\"children\":[" % (i, i) for i in range(1, n + 1)))
sys.stdout.write(",".join("{\"functionName\":\"x\",\"id\":%d,\"children\":[]}" % (1000 + k) for k in range(100000)))
sys.stdout.write("]}" * n + ",\"startTime\":0,\"samples\":[250,1001],\"timestamps\":[1,2]}")' >"$T/wide.cpuprofile"
	run --separate-stderr bounded 20 1024 tach-decode -q --no-thread-frames "$T/wide.cpuprofile"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
}
