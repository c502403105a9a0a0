#!/usr/bin/env bats
# Chrome trace-event JSON (node_trace.1.log, DevTools' saved traces) read by every program
# without naming the format: traces node records now and a committed trimmed one (a bare
# array of events, two threads) give, sample for sample, the stacks and weights that
# tests/cli/chrome_expect.py computes from the events alone; the recorded one's profiles
# are on the threads that thread_name names; every writer's output reads back; bad input
# is one line with file and offset, exit 1.

load v8_writers

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/chrome
	EXPECT="python3 $SOURCE_ROOT/tests/cli/chrome_expect.py"
	BAD_FROM=chrome BAD_FILE=bad.json
}

# record DIR: worker.js run by node with its CPU profiles in the trace, DIR/node_trace.1.log.
record() {
	find_node
	mkdir -p "$1"
	cp "$D/worker.js" "$1/"
	(cd "$1" && "$NODE" --cpu-prof --cpu-prof-interval 500 \
		--trace-event-categories disabled-by-default-v8.cpu_profiler worker.js)
	[ -s "$1/node_trace.1.log" ]
}

# same_samples FILE: the reader's samples are the expected ones.
same_samples() {
	$EXPECT expect "$1" >"$T/want"
	tach-decode -q -F samples "$1" | $EXPECT decode >"$T/got"
	diff -u "$T/want" "$T/got"
	[ "$(grep -c $'\t' "$T/want")" -gt 0 ]
}

@test "node's trace now: every profile's samples in time order, on the threads thread_name names" {
	record "$T/rec"
	local f=$T/rec/node_trace.1.log
	same_samples "$f"
	run tach-decode -v -F info "$f"
	[ "$status" -eq 0 ]
	printf '%s\n' "${lines[@]}" | grep -qx "tach-decode: $f: chrome input"
	# from a pipe alike, and as the bare array of events
	cat "$f" | tach-decode -q -F samples | $EXPECT decode | diff -u "$T/want" -
	sed 's/^{"traceEvents"://; s/}[[:space:]]*$//' "$f" >"$T/bare.json"
	[ "$(head -c 1 "$T/bare.json")" = "[" ]
	tach-decode -q -F samples "$T/bare.json" | $EXPECT decode | diff -u "$T/want" -
	# the main thread and the worker, each by its name, each busy in work()
	tach-decode -F info "$f" | grep -qx 'threads: 2'
	tach-decode "$f" >"$T/c"
	grep -q '^tid:[0-9]*;\[comm\]:JavaScriptMainThread:[0-9]*;.*worker.js:work:[0-9]*;worker.js:spin:' "$T/c"
	grep -q '^tid:[0-9]*;\[comm\]:\[worker 1\]:[0-9]*;.*worker.js:work:[0-9]*;worker.js:spin:' "$T/c"
	# the same as --from chrome, and no wall clock
	tach-decode -q --from chrome -F samples "$f" | $EXPECT decode | diff -u "$T/want" -
	tach-decode -F info "$f" | grep -qx 'start_time_us: 0'
}

@test "the committed trimmed trace: a bare array, two threads, chunks without endTime" {
	same_samples "$D/worker_trimmed.json"
	[ "$(cut -d' ' -f1 "$T/want" | grep -v '^@' | sort -u | wc -l)" -eq 2 ]
}

@test "through every writer: TACH, samples, collapsed, pprof, pstats, Sampler, SVG, speedscope, callgrind, Gecko" {
	writer_tools
	record "$T/rec"
	for f in "$T/rec/node_trace.1.log" "$D/worker_trimmed.json"; do
		echo "# $f"
		through_writers "$f"
	done
}

@test "bad input: truncated, cycles, lengths, huge ids, no Profile: file and offset, exit 1" {
	local W="what the trace's profile events cannot place is left out, as DevTools and speedscope leave it out; "
	local p='{"ph":"P","name":"Profile","pid":1,"tid":1,"id":"0x1","args":{"data":{"startTime":10}}}'
	local c='{"ph":"P","name":"ProfileChunk","pid":1,"tid":2,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":'
	local r='{"id":1,"callFrame":{"functionName":"(root)"}}'
	local a='{"id":2,"parent":1,"callFrame":{"functionName":"a","url":"a.js"}}'
	# fine: one sample of a, 5 us after startTime
	printf '%s' "[$p,$c[$r,$a],\"samples\":[2]},\"timeDeltas\":[5]}}}]" >"$T/ok.json"
	tach-decode "$T/ok.json" | grep -qx 'tid:1;a.js:a:0 1'
	# truncated: the unterminated string at the cut
	head -c 100 "$T/ok.json" >"$T/cut.json"
	run tach-decode -o "$T/out" "$T/cut.json"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/cut.json: offset 99: JSON: unterminated string" ] || { echo "got: $output"; return 1; }
	[ ! -e "$T/out" ]
	bad '{"events":[]}' 0 'not a Chrome trace: no "traceEvents"'
	# a trace without the profiler's events or spans: no samples to give, said so
	local meta='{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}}'
	bad "{\"traceEvents\":[$meta]}" 0 'no CPU profile and no spans in this trace: no Profile, ProfileChunk, B, E or X event (record with the disabled-by-default-v8.cpu_profiler category)'
	bad '[1]' 1 'an event must be an object'
	# an orphan chunk (its Profile event not in the trace) is skipped, said: no thread of
	# its own, no part of another's
	local orphan="[$p,$c[$r,$a],\"samples\":[2]},\"timeDeltas\":[5]}}},${c/0x1/0x2}[$r,$a],\"samples\":[2,2]},\"timeDeltas\":[5,5]}}}]"
	run tach-decode -F samples <<<"$orphan"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ": warning: $W""1 ProfileChunk event (2 samples) of profiles whose Profile event is not in the trace (it began after them): skipped$")" -eq 1 ]
	[ "$(tach-decode -q -F samples <<<"$orphan" | grep -v '^@')" = $'1 1 5 2 0\ta.js:a:-:-:-:-:-' ]
	# only orphans: no CPU profile left, an error after the warning
	printf '%s' "[$c[$r,$a],\"samples\":[2]},\"timeDeltas\":[5]}}}]" >"$T/orphan.json"
	run tach2pprof -o "$T/out.pb.gz" "$T/orphan.json"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "tach2pprof: $T/orphan.json: offset 1: warning: $W""1 ProfileChunk event (1 sample) of profiles whose Profile event is not in the trace (it began after them): skipped" ]
	[ "${lines[1]}" = "tach2pprof: $T/orphan.json: offset 0: no CPU profile in this trace: no Profile or ProfileChunk event (record with the disabled-by-default-v8.cpu_profiler category)" ]
	[ ! -e "$T/out.pb.gz" ]
	bad "[$p,$p]" 89 'a second Profile event for one profile id'
	# a cycle in the parents: 2's parent 3, 3's parent 2
	local x='{"id":3,"parent":2,"callFrame":{"functionName":"b"}}'
	local y='{"id":2,"parent":3,"callFrame":{"functionName":"a"}}'
	bad "[$p,$c[$r,$y,$x],\"samples\":[2]},\"timeDeltas\":[5]}}}]" 251 'node 2 is its own ancestor: the parent links form a cycle'
	bad "[$p,$c[$r,$a],\"samples\":[2,2]},\"timeDeltas\":[5]}}}]" 333 '"samples" and "timeDeltas" differ in length'
	bad "[$p,$c[$r,$a],\"samples\":[2]}}}}]" 89 'a profile event with samples but no timeDeltas'
	bad "[$p,$c[$r,{\"id\":99999999999999999999,\"callFrame\":{\"functionName\":\"a\"}}]}}}}]" 240 '"id" must be an integer node id'
	bad "[$p,$c[$r,$a],\"samples\":[1e300]},\"timeDeltas\":[5]}}}]" 312 'sample must be an integer node id'
	bad "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":1,\"tid\":1,\"id\":\"0x1\",\"args\":{}}]" 1 'a Profile event without args.data.startTime'
	bad "[{\"ph\":\"P\",\"name\":\"Profile\",\"pid\":\"x\",\"id\":1}]" 34 'pid must be an integer 0..9223372036854775807'
	# a second chunk's node with an id the first gave: given twice in one profile
	bad "[$p,$c[$r]}}}},$c[$r]}}}}]" 337 'node id 1 given twice'
}

@test "detection: a trace is read without --from; --from help lists chrome" {
	tach-decode --from help | grep -qw chrome
	printf '%s' '{"traceEvents":[]}' >"$T/empty.json"
	run tach-decode -v -F info "$T/empty.json"
	# detected as a trace (the message is the trace reader's), whose want of a CPU
	# profile is then the error
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "tach-decode: $T/empty.json: offset 0: no CPU profile and no spans in this trace: no Profile, ProfileChunk, B, E or X event (record with the disabled-by-default-v8.cpu_profiler category)" ]
}

@test "a thread's name is a frame that the depth limit counts; weights add up to the profile's span" {
	local p='{"ph":"P","name":"Profile","pid":1,"tid":1,"id":"0x1","args":{"data":{"startTime":10}}}'
	local m='{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}}'
	local c='{"ph":"P","name":"ProfileChunk","pid":1,"tid":2,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":'
	local n='[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":"a","url":"a.js","lineNumber":3}}]'
	printf '%s' "[$p,$m,$c$n,\"samples\":[2,2]},\"timeDeltas\":[5,7],\"endTime\":30}}}]" >"$T/named.json"
	# two samples at 15 and 22 us (5 and 12 from startTime), standing for 7 us and 8 (up
	# to endTime 30); the interval is the one gap, 7 us, and weighs nothing
	[ "$(tach-decode --max-depth 2 "$T/named.json")" = 'tid:1;[comm]:main:1;a.js:a:4 2' ]
	tach-decode -F info "$T/named.json" | grep -qx 'sample_interval_us: 7'
	[ "$(tach-decode -F samples "$T/named.json" | grep -v '^@' | cut -f1)" = "$(printf '1 1 5 2\n1 1 12 2 8000')" ]
	run tach-decode --max-depth 1 "$T/named.json"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/named.json: offset 398: stack deeper than the depth limit of 1 frames" ]
}

@test "two profiles of one thread (node --cpu-prof with the trace category) are one recording: the longer (more samples) kept, said once" {
	record "$T/rec"
	f=$T/rec/node_trace.1.log
	# the recording holds two profiles of the main thread (and two of the worker's)
	python3 -c 'import collections, json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
c = collections.Counter((e["pid"], e["tid"]) for e in ev if e.get("name") == "Profile")
sys.exit(0 if max(c.values()) > 1 else "one profile per thread: %r" % c)' "$f"
	run tach-decode -F samples "$f"
	[ "$status" -eq 0 ]
	# said once, on the first line, naming what was dropped
	[ "$(printf '%s\n' "${lines[@]}" | grep -c 'warning: a thread in two profiles')" -eq 1 ]
	[[ ${lines[0]} == "tach-decode: $f: warning: a thread in two profiles (node --cpu-prof with the cpu_profiler trace category records it twice) is one recording, counted once: "*" dropped, the longer (more samples) kept; thread "*" of process "*": "*" samples over "*" us dropped, "*" samples over "*" us kept" ]]
	# each thread's samples are exactly those of the profile kept, as many as its
	# samples array has, each at its own time (chrome_expect.py), in one thread per tid
	same_samples "$f"
	tach-decode -q -F samples "$f" | grep -v '^@' | cut -d' ' -f1,2 | sort -u >"$T/ids"
	[ "$(wc -l <"$T/ids")" -eq 2 ]
	[ "$(cut -d' ' -f1 "$T/ids" | sort -u | wc -l)" -eq 2 ]
	# per thread, the time its samples stand for is at most the trace's span: no thread
	# is counted twice
	local span
	span=$(tach-decode -F info "$f" 2>/dev/null | sed -n 's/^duration_ns: //p')
	tach-decode -q -F samples "$f" | python3 -c 'import collections, sys
span = int(sys.argv[1])
iv, per = 0, collections.Counter()
for line in sys.stdin:
    if line.startswith("@interval_us"):
        iv = int(line.split()[1])
    if line[0] in "@#":
        continue
    f = line.split("\t")[0].split(" ")
    per[f[0]] += int(f[4]) if len(f) > 4 else iv * 1000
print(dict(per))
sys.exit(0 if per and max(per.values()) <= span else "over the span %d" % span)' "$span"
}

@test "the README's node trace recipe: one profile's time, at most 100% of the run" {
	find_node
	mkdir -p "$T/app"
	cp "$SOURCE_ROOT/tests/data/v8/hot.js" "$T/app/app.js"
	# the recipe as the README gives it
	(cd "$T/app" && "$NODE" --cpu-prof --trace-event-categories disabled-by-default-v8.cpu_profiler app.js)
	local f=$T/app/node_trace.1.log prof
	prof=$(ls "$T/app"/*.cpuprofile)
	[ -s "$f" ]
	# the main thread's samples: those of one of its two profiles, never both; their time
	# is that profile's, to the ns, and within the run
	tach-decode -q -F samples "$f" | python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
profs = {}
for e in ev:
    if e.get("name") == "ProfileChunk":
        p = profs.setdefault(e["id"], [0, None])
        p[0] += len(e["args"]["data"].get("cpuProfile", {}).get("samples", []))
n, iv, t = 0, 0, 0
for line in sys.stdin:
    if line.startswith("@interval_us"):
        iv = int(line.split()[1])
    if line[0] in "@#":
        continue
    f = line.split("\t")[0].split(" ")
    n += 1
    t += int(f[4]) if len(f) > 4 else iv * 1000
counts = sorted(p[0] for p in profs.values())
assert len(counts) == 2, counts
assert n in counts and n < sum(counts), (n, counts)
print(n, t)' "$f" >"$T/nt"
	read -r n t <"$T/nt"
	local dur
	dur=$(tach-decode -F info "$f" 2>/dev/null | sed -n 's/^duration_ns: //p')
	echo "samples $n, time $t ns, run $dur ns"
	[ "$t" -le "$dur" ]
	[ "$t" -gt $((dur / 2)) ]
}

@test "issue 57.4: a parent or sample naming a node only a dropped chunk had: placed as speedscope places it, counted in one warning" {
	local W="what the trace's profile events cannot place is left out, as DevTools and speedscope leave it out; "
	local p='{"ph":"P","name":"Profile","pid":1,"tid":1,"id":"0x1","args":{"data":{"startTime":10}}}'
	local c='{"ph":"P","name":"ProfileChunk","pid":1,"tid":2,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":'
	local r='{"id":1,"callFrame":{"functionName":"(root)"}}'
	# node 3's parent 9 was in a chunk not in the trace; sample 7 names no node at all
	local b='{"id":3,"parent":9,"callFrame":{"functionName":"b","url":"b.js"}}'
	printf '%s' "[$p,$c[$r,$b],\"samples\":[3,7,3]},\"timeDeltas\":[5,10,20]}}}]" >"$T/drop.json"
	run --separate-stderr tach-decode -F samples "$T/drop.json"
	[ "$status" -eq 0 ]
	[ "$stderr" = "tach-decode: $T/drop.json: warning: $W""1 sample naming a node no chunk has: skipped, their time the sample's before; 1 node whose parent no chunk has: its stacks start there" ]
	# the stack starts at b; the first sample stands for the skipped one's time too (30 us:
	# the interval, so not written)
	[ "$(printf '%s\n' "$output" | grep -v '^@')" = $'1 1 5 2\tb.js:b:-:-:-:-:-\n1 1 35 2 0\tb.js:b:-:-:-:-:-' ]
	# a chunk with no args.data (Chrome 141 writes the last one so): nothing in it
	printf '%s' "[$p,$c[$r,$b],\"samples\":[3]},\"timeDeltas\":[5]}}},{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"id\":\"0x1\",\"args\":{}}]" >"$T/empty.json"
	[ "$(tach-decode -q --no-thread-frames "$T/empty.json" 2>&1)" = 'b.js:b:0 1' ]
	# Chrome 141's own trace, as speedscope reads it
	peer chrome141-no-arg-data.json
	run --separate-stderr tach-decode -F info "$PEER"
	[ "$status" -eq 0 ]
	[ "$stderr" = "tach-decode: $PEER: warning: $W""5 samples naming a node no chunk has: skipped, their time the sample's before; 2 nodes whose parent no chunk has: their stacks start there" ]
	as_speedscope "$PEER"
}

@test "issue 57.4: chunks of a profile whose Profile event is not in the trace: skipped as DevTools and speedscope skip them, counted" {
	peer chrome85-parcel.json
	run --separate-stderr tach-decode -F info "$PEER"
	[ "$status" -eq 0 ]
	[[ $stderr == *": offset 601210: warning: what the trace's profile events cannot place is left out, as DevTools and speedscope leave it out; 3 ProfileChunk events (110 samples) of profiles whose Profile event is not in the trace (it began after them): skipped" ]]
	as_speedscope "$PEER"
	# and the traces of Chrome 69, 70 and 116 as speedscope reads them (69's without its "]")
	for f in chrome69-simple.json chrome69-nobracket.json chrome70-worker.json chrome116-trace.json; do
		peer "$f"
		as_speedscope "$PEER" || { echo "$f"; return 1; }
	done
}

@test "issue 57.4: Chrome 65-69's CpuProfile event, the whole profile in one event, on its thread" {
	local e='{"ph":"I","name":"CpuProfile","cat":"disabled-by-default-devtools.timeline","pid":7,"tid":8,"ts":1,"args":{"data":{"cpuProfile":'
	local n='"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":"a","url":"a.js","lineNumber":3}}]'
	local name='{"ph":"M","name":"thread_name","pid":7,"tid":8,"args":{"name":"CrRendererMain"}}'
	printf '%s' "[$name,$e{$n,\"startTime\":100,\"endTime\":160,\"samples\":[2,2],\"timeDeltas\":[10,20]}}}}]" >"$T/cpu.json"
	run --separate-stderr tach-decode -F samples "$T/cpu.json"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | grep -v '^@')" = $'8 7 10 2\ta.js:a:4:4:-1:-1:-;[comm]:CrRendererMain:7:7:-1:-1:-\n8 7 30 2 30000\ta.js:a:4:4:-1:-1:-;[comm]:CrRendererMain:7:7:-1:-1:-' ]
	# one without its cpuProfile has nothing to give; one without a startTime is refused
	printf '%s' "[{\"ph\":\"I\",\"name\":\"CpuProfile\",\"pid\":7,\"tid\":8,\"args\":{}},$e{$n,\"startTime\":100,\"samples\":[2],\"timeDeltas\":[10]}}}}]" >"$T/cpu2.json"
	[ "$(tach-decode -q --no-thread-frames "$T/cpu2.json")" = 'a.js:a:4 1' ]
	BAD_FROM=chrome bad "[$e{$n}}}}]" 1 'a CpuProfile event without args.data.cpuProfile.startTime'
	for f in chrome65-simple-timeline.json chrome66-worker.json; do
		peer "$f"
		as_speedscope "$PEER" || { echo "$f"; return 1; }
	done
	# Chrome 66's worker and main thread, each by its name
	tach-decode -F info "$PEER" | grep -qx 'threads: 2'
}
