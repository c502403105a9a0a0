#!/usr/bin/env bats
# Input detection in the programs that read any profile: each format is recognized from a
# file and from a pipe and read exactly as the program made for that format reads it
# (collapsed2tach, gperf2tach, sampler2tach, tach-encode); every ambiguity rule of
# tachfmt(5) DETECTION; --from; what an input of no format says.

setup() {
	T=$BATS_TEST_TMPDIR
	CASES=$FIXTURES/tach/cases
	G=$FIXTURES/gperf
	unset TACHFMT_BINARY_PATH
}

# The same samples through the format's own program and through detection, from a file
# and from a pipe.
same_as() { # file importer [importer options...]
	local f=$1 imp=$2
	shift 2
	# collapsed, sorted: a TACH file in between keeps stacks and counts, not sample order
	"$imp" -q "$@" "$f" | tach-decode -q | sort >"$T/want"
	tach-decode -q "$@" "$f" | sort >"$T/file"
	cat "$f" | tach-decode -q "$@" | sort >"$T/pipe"
	diff -u "$T/want" "$T/file"
	diff -u "$T/want" "$T/pipe"
	[ -s "$T/want" ]
}

@test "each format is detected from a file and a pipe, read as its own program reads it" {
	tach-decode -F samples "$CASES/deep_stack_300.tach" >"$T/want"
	cat "$CASES/deep_stack_300.tach" | tach-decode -F samples >"$T/pipe"
	diff -u "$T/want" "$T/pipe"
	same_as "$TESTDATA/mixed.samples" tach-encode
	same_as "$TESTDATA/pprof_example.folded" collapsed2tach
	same_as "$FIXTURES/flamegraph/inputs/deep.folded" collapsed2tach
	same_as "$G/hotloop/hotloop.prof" gperf2tach --binary-path "$G/hotloop"
	same_as "$G/sharedlib/sharedlib.prof" gperf2tach --no-symbolize
	tach2sampler "$CASES/deep_stack_300.tach" -o "$T/t.trace"
	same_as "$T/t.trace" sampler2tach
}

@test "-v names the format read; every program that reads a profile detects" {
	run tach-decode -v "$TESTDATA/pprof_example.folded"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "tach-decode: $TESTDATA/pprof_example.folded: collapsed input" ]]
	for p in tach2pprof tach2gecko tach2sampler; do
		run "$p" -v -o "$T/out" "$TESTDATA/mixed.samples"
		[ "$status" -eq 0 ]
		[[ ${lines[0]} == "$p: $TESTDATA/mixed.samples: samples input" ]]
	done
}

@test "tach2pprof reads a gperftools profile, symbolized as gperf2tach does" {
	command -v protoc >/dev/null || skip "protoc not installed (Debian package protobuf-compiler)"
	gperf2tach -q --binary-path "$G/hotloop" "$G/hotloop/hotloop.prof" | tach2pprof -o "$T/want.pb.gz"
	tach2pprof -q --binary-path "$G/hotloop" "$G/hotloop/hotloop.prof" -o "$T/got.pb.gz"
	TACHFMT_BINARY_PATH="$G/hotloop" tach2pprof -q "$G/hotloop/hotloop.prof" -o "$T/env.pb.gz"
	# read directly, the mapping's file is the profiled program (its first executable
	# mapping, as pprof names it); through TACH, which has no place for it, the interpreter
	gzip -dc "$T/want.pb.gz" | protoc --decode_raw | grep -qx '6: "python3.15"'
	gzip -dc "$T/got.pb.gz" | protoc --decode_raw |
		grep -qx '6: "/srv/profiles/gperf-fixtures/hotloop/hotloop"'
	# --binary-path and TACHFMT_BINARY_PATH: the same protobuf
	for f in got env; do
		gzip -dc "$T/$f.pb.gz" | protoc --decode_raw >"$T/$f.txt"
	done
	diff -u "$T/got.txt" "$T/env.txt"
	# Read directly, locations keep their addresses, mappings and inline lines, which TACH
	# drops (so the protobufs differ and pprof aggregates in another order): the same
	# stacks of the same frames.
	for f in want got; do
		tach-decode --format samples "$T/$f.pb.gz" | grep -v '^@' | cut -f2 | sort >"$T/$f.stacks"
	done
	diff -u "$T/want.stacks" "$T/got.stacks"
	[ "$(wc -l <"$T/want.stacks")" -eq 221 ]
	gzip -dc "$T/got.pb.gz" | protoc --decode_raw | grep -q '/srv/profiles/gperf-fixtures/hotloop/hotloop'
	# symbolized: a function name of the program, not an address
	tach-decode -q --binary-path "$G/hotloop" "$G/hotloop/hotloop.prof" | grep -q ':main:'
}

@test "rule: four numbers and a TAB are the samples form, even when the line is also folded" {
	printf '1 0 5 1\ta;b 3\n' >"$T/x"
	run tach-decode "$T/x"
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: $T/x:1: "* ]]
	run tach-decode -q --from collapsed "$T/x"
	[ "$status" -eq 0 ]
	[[ $output == "tid:0;1 0 5 1"?"a;b 3" ]]
	printf '# c\n\n12 0 7 3\tf.py:g:4\n' | tach-decode -F samples | grep -q $'^12 0 7 3\tf.py:g:4:'
	printf '@interval_us 250\n' | tach-decode -F info | grep -qx 'sample_interval_us: 250'
}

@test "rule: a first line past the peeked 4 KiB, and comments only, are folded stacks" {
	{ printf 'f%d;' $(seq 1 1500); printf 'leaf 4\n'; } >"$T/long"
	[ "$(wc -c <"$T/long")" -gt 4096 ]
	tach-decode --no-thread-frames "$T/long" | grep -q ';leaf 4$'
	printf '# interval: 100\n\n' >"$T/c"
	run tach-decode -v "$T/c"
	[ "$status" -eq 0 ]
	[[ $output == *"collapsed input"* ]]
}

@test "rule: an empty input and an input of no format are errors that say what was seen" {
	run tach-decode </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: <stdin>: offset 0: empty input: no profile format to detect" ]
	printf '\x00\x01abc\xff' >"$T/bin"
	run tach2pprof -o "$T/o" "$T/bin"
	[ "$status" -eq 1 ]
	[[ $output == "tach2pprof: $T/bin: offset 0: input format not recognized: it starts \"\\x00\\x01abc\\xff\"; tried tach, gperf, "*", collapsed" ]]
	[ ! -e "$T/o" ]
	# a control byte makes text binary
	printf 'a;b 3\n\x01\n' >"$T/ctl"
	run tach-decode "$T/ctl"
	[ "$status" -eq 1 ]
	[[ $output == *"not recognized"* ]]
	# a line with no count is not folded
	printf 'hello world\n' | { run tach-decode; [ "$status" -eq 1 ]; }
}

@test "pprof: raw and gzip, from a file and a pipe; a damaged start is not" {
	tach2pprof -q "$CASES/threads_interleaved.tach" -o "$T/p.pb.gz"
	gzip -dc "$T/p.pb.gz" >"$T/p.pb"
	tach-decode "$CASES/threads_interleaved.tach" | sort >"$T/want"
	for f in p.pb p.pb.gz; do
		run tach-decode -v "$T/$f"
		[[ ${lines[0]} == *": pprof input" ]]
		cat "$T/$f" | tach-decode | sort | diff -u "$T/want" -
	done
	# gzip'd text is read as the text inside (tests/cli/peers.bats has every format)
	printf 'a;b 3\n' | gzip -c >"$T/t.gz"
	run tach-decode -q "$T/t.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "tid:0;a;b 3" ]
	# a wire type that no profile.proto field has, within the first bytes
	{ printf '\x0b'; cat "$T/p.pb"; } >"$T/bad.pb"
	run tach-decode "$T/bad.pb"
	[[ $output == *"not recognized"* ]]
	run tach-decode --from pprof "$T/bad.pb"
	[[ $output == *"offset 0: field 1: unknown wire type 3" ]]
}

@test "rule: a perf script capture is perf, never folded stacks, from a file and a pipe" {
	for f in "$FIXTURES"/perf/inputs/*.txt "$FIXTURES"/perf/real/*.perf; do
		same_as "$f" perf2tach
		run tach-decode -v -q "$f"
		[[ $output == *"perf input"* ]] || { echo "$f: $output"; false; }
	done
	# no call chains: the event line alone (a time, then "event:") says perf
	printf 'prog 12/13 [000] 5.000001: 1000 cycles: \n\nprog 12/13 [000] 5.000002: 1000 cycles: \n\n' >"$T/nochain"
	run tach-decode -v -q --no-thread-frames "$T/nochain"
	[[ $output == *"perf input"* ]]
	[[ $output == *"[comm]:prog:12 2"* ]]
	# an event line ending in a count, a frame line after it: perf
	printf 'java 25607 10101010\n\t7f01 main (/bin/java)\n\n' >"$T/count"
	run tach-decode -v -q --no-thread-frames "$T/count"
	[[ $output == *"perf input"* ]]
	[[ $output == *"[comm]:java:0;java:main:0 1"* ]]
}

@test "rule: folded stacks are never perf, even when a line looks like comm and pid" {
	# "comm tid" then a count, with no indented frame line after it
	printf 'java 25607 12\nV8 WorkerThread 3 4\n' >"$T/f"
	run tach-decode -v -q --no-thread-frames "$T/f"
	[ "$status" -eq 0 ]
	[[ $output == *"collapsed input"* ]]
	# (two numbers: a differential line, its second count kept)
	[[ $output == *"java 12"* ]]
	# a folded line with trailing blanks and a folded line after it
	printf 'a;b 12 \nc;d 3\n' >"$T/g"
	run tach-decode -v -q --no-thread-frames "$T/g"
	[[ $output == *"collapsed input"* ]]
	# austin 1.x's -f lines: a first line with no module, a second whose frames name their
	# files in parentheses, as a perf frame names its module, but with counts after them
	printf '%s\n' 'Thread 5a;_find (<frozen importlib._bootstrap>);L991;acquire (<frozen importlib._bootstrap>);L84 0 996 0' \
		'Thread 5a;search (/usr/lib/python3.8/encodings/__init__.py);L866;<module> (/usr/lib/python3.8/encodings/utf_8.py);L22 4827 472 0' >"$T/au"
	run tach-decode -v -q "$T/au"
	[ "$status" -eq 0 ]
	[[ $output == *"collapsed input"* ]]
	# the FlameGraph expected outputs (folded stacks of perf captures) are folded
	run tach-decode -v -q "$FIXTURES/perf/expected/perf-java-stacks-01-collapsed.txt"
	[ "$status" -eq 0 ]
	[[ $output == *"collapsed input"* ]]
}

@test "--from forces a format; --from help lists the readable ones" {
	run tach-decode --from help
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'tach\ngperf\notlp\npprof\njfr\nsampler\nspeedscope\nheapprofile\nv8\nv8log\nchrome\nspans\nstackprof\nghcpj\nsafari\nsamples\ngecko\ncallgrind\ndtrace\nbpftrace\nghcprof\nmacsample\ninstruments\nxctrace\nvtune\nvsprof\npmcstat\npapyrus\npproftext\nperfreport\nperfdata\nperf\ncollapsed')" ]
	run tach-decode --from pdf x
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "tach-decode: unknown --from pdf (one of: tach gperf otlp pprof jfr sampler speedscope heapprofile v8 v8log chrome spans stackprof ghcpj safari samples gecko callgrind dtrace bpftrace ghcprof macsample instruments xctrace vtune vsprof pmcstat papyrus pproftext perfreport perfdata perf collapsed, or auto)" ]]
	run tach-decode --from tach "$TESTDATA/mixed.samples"
	[ "$status" -eq 1 ]
	[[ $output == *"Invalid magic number"* ]]
	run tach-decode --from samples --binary-path /x "$TESTDATA/mixed.samples"
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "tach-decode: samples reader has no option binary-path" ]]
}

@test "an input option of another format is ignored with a warning; a bad value is a usage error" {
	[ "$(tach-decode --no-symbolize "$TESTDATA/mixed.samples" 2>"$BATS_TEST_TMPDIR/err")" = "$(tach-decode "$TESTDATA/mixed.samples")" ]
	[ "$(cat "$BATS_TEST_TMPDIR/err")" = "tach-decode: $TESTDATA/mixed.samples: warning: --no-symbolize does not apply to samples input; ignored" ]
	# TACHFMT_BINARY_PATH set for gperftools profiles troubles no other input
	TACHFMT_BINARY_PATH=/nonexistent run tach-decode "$CASES/single_sample.tach"
	[ "$status" -eq 0 ]
	[[ $output != *warning* ]]
	TACHFMT_BINARY_PATH=/nonexistent run tach-decode --from tach "$CASES/single_sample.tach"
	[ "$status" -eq 0 ]
	run tach-decode --names pretty "$TESTDATA/mixed.samples"
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "tach-decode: names must be full, short or mangled, not pretty" ]]
}

@test "speedscope JSON is detected from a file and a pipe, read as speedscope2tach reads it" {
	local f n=0
	for f in "$TESTDATA"/speedscope/*.json; do
		same_as "$f" speedscope2tach
		n=$((n + 1))
	done
	[ "$n" -ge 5 ]
	# merged and drawn without naming the format
	tach-merge -q "$TESTDATA/speedscope/pyspy.json" "$CASES/recursion.tach" -o "$T/m.tach"
	[ "$(tach-decode -F info "$T/m.tach" | sed -n 's/^thread_count: //p')" -gt 1 ]
	tach2flamegraph -q "$TESTDATA/speedscope/pyspy.json" -o "$T/s.svg"
	grep -q '<svg' "$T/s.svg"
}

@test "rule: node's V8 profile, its nodes past the 4 KiB: the first node's callFrame decides" {
	local f=$TESTDATA/v8/node_hot.cpuprofile
	# node writes "nodes" first, longer than the bytes looked at
	[ "$(grep -o '"startTime"' <(head -c 4096 "$f") | wc -l)" -eq 0 ]
	run tach-decode -v -F info "$f"
	[ "${lines[0]}" = "tach-decode: $f: v8 input" ]
	cat "$f" | tach-decode -F samples | diff -u <(tach-decode --from v8 -F samples "$f") -
	# a first node without a callFrame is no V8 profile
	printf '{"nodes":[{"id":1}],"samples":[1],"timeDeltas":[1]}' >"$T/n.json"
	run tach-decode "$T/n.json"
	[ "$status" -eq 1 ]
	[[ $output == *"input format not recognized"* ]]
}

@test "rule: \"samples\" and \"timeDeltas\" before \"nodes\" (DevTools' order) are a V8 profile" {
	local f=$TESTDATA/v8/devtools_order.cpuprofile
	run tach-decode -v -F info "$f"
	[ "${lines[0]}" = "tach-decode: $f: v8 input" ]
	# a first line that folded stacks would take (it ends in a space and a count): still V8
	printf '{"timeDeltas":[5],"samples":[1],"startTime":1000,"endTime": 2000\n,"nodes":[{"id":1,"callFrame":{"functionName":"f","url":"f.js","lineNumber":0}}]}\n' >"$T/l.json"
	[ "$(tach-decode -q --from collapsed "$T/l.json")" = 'tid:0;{"timeDeltas":[5],"samples":[1],"startTime":1000,"endTime": 2000' ]
	[ "$(tach-decode "$T/l.json")" = "tid:0;f.js:f:1 1" ]
}

@test "rule: a V8 profile is not speedscope, speedscope is not V8" {
	local f
	for f in "$TESTDATA"/v8/*.cpuprofile; do
		run tach-decode -v -F info "$f"
		[ "${lines[0]}" = "tach-decode: $f: v8 input" ]
		run tach-decode --from speedscope "$f"
		[ "$status" -eq 1 ]
		[[ $output == *': offset 0: not a speedscope file: no "shared" and "profiles"' ]]
	done
	for f in "$TESTDATA"/speedscope/*.json; do
		run tach-decode -v -F info "$f"
		[ "${lines[0]}" = "tach-decode: $f: speedscope input" ]
		run tach-decode --from v8 "$f"
		[ "$status" -eq 1 ]
		[[ $output == *': offset '[03]': not a V8 CPU profile: no "nodes"' ]]
	done
	# a speedscope file that also carries V8-like keys is still speedscope: it is asked first
	printf '{"samples":[],"timeDeltas":[],"shared":{"frames":[]},"profiles":[]}' >"$T/both.json"
	run tach-decode -v "$T/both.json"
	[ "${lines[0]}" = "tach-decode: $T/both.json: speedscope input" ]
}

@test "text that no format takes names no format; binary or JSON that starts like one does" {
	local t
	for t in 'hello world' 'hello world\n' '{"a": 1}\n' 'just; some words here\n'; do
		printf "$t" >"$T/text"
		run tach-decode "$T/text"
		echo "$output"
		[ "$status" -eq 1 ]
		[[ $output == "tach-decode: $T/text: offset 0: input format not recognized: it starts \""*"; tried tach, "* ]]
		[[ $output != *"files do"* ]]
	done
	printf '\x0a\x04\x08\x01\x10\x02\xff\xff' >"$T/bin"
	run tach-decode "$T/bin"
	[[ $output == *", as pprof files do, but is not one that detection takes; --from pprof reads it"* ]]
	printf '{"shared": {"frames": []}}' >"$T/ss"
	run tach-decode "$T/ss"
	[[ $output == *", as speedscope files do, but"* ]]
}

@test "Chrome trace-event JSON is detected and read, from a file or a pipe, not taken for folded stacks" {
	# the object form, with the Performance panel's long metadata first
	python3 -c 'import json, sys
ev = [{"pid": 1, "tid": 1, "ts": 0, "ph": "M", "cat": "__metadata", "name": "thread_name", "args": {"name": "CrRendererMain"}},
      {"pid": 1, "tid": 1, "ts": 5, "ph": "P", "cat": "disabled-by-default-v8.cpu_profiler", "name": "Profile", "id": "0x1", "args": {"data": {"startTime": 5}}},
      {"pid": 1, "tid": 2, "ts": 9, "ph": "P", "cat": "disabled-by-default-v8.cpu_profiler", "name": "ProfileChunk", "id": "0x1",
       "args": {"data": {"cpuProfile": {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}}, {"id": 2, "parent": 1, "callFrame": {"functionName": "f", "url": "f.js"}}], "samples": [2]}, "timeDeltas": [3]}}}]
json.dump({"metadata": {"source": "DevTools", "hardwareConcurrency": 8, "note": "x" * 6000}, "traceEvents": ev}, open(sys.argv[1], "w"))
json.dump(ev, open(sys.argv[2], "w"))' "$T/trace.json" "$T/events.json"
	for f in "$T/trace.json" "$T/events.json"; do
		run tach-decode -v "$f"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = "tach-decode: $f: chrome input" ]
		[ "${lines[1]}" = "tid:1;[comm]:CrRendererMain:1;f.js:f:0 1" ]
		cat "$f" | tach2pprof -o "$T/out.pb"
		[ -s "$T/out.pb" ]
		rm "$T/out.pb"
	done
	tach-decode --from help | grep -qw chrome
}

@test "text with a control byte names the byte and its offset, and no format it only seems to start like" {
	# an ESC in perf script's first event line; a NUL in plain words ('h' would be a protobuf key)
	printf 'prog 123 [000] 1.000: 1 cpu-clock:\x1b\n\t4011d6 main (/bin/prog)\n\n' >"$T/esc"
	run tach-decode "$T/esc"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"; byte 0x1b at offset 34 is not text, so no text format reads it; tried tach, "* ]]
	[[ $output != *"files do"* ]]
	printf 'hello\x00world\n' >"$T/nul"
	run tach-decode "$T/nul"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"; byte 0x00 at offset 5 is not text, so no text format reads it; tried tach, "* ]]
	[[ $output != *"files do"* ]]
	# the byte named is the first one, wherever it is in the window
	{ printf 'a;b 1\n%.0s' $(seq 300); printf 'c;d\x07 1\n'; } >"$T/late"
	run tach-decode "$T/late"
	[ "$status" -eq 1 ]
	[[ $output == *"; byte 0x07 at offset 1803 is not text"* ]]
}

@test "messages that point right: --event in every program that reads perf, a filter that keeps nothing, a .jfr" {
	f=$FIXTURES/perf/inputs/perf-cycles-instructions-01.txt
	# the warning names an option the program has, and the option works there
	run tach2pprof -o "$T/p.pb.gz" "$f"
	[ "$status" -eq 0 ]
	[[ "$output" == *"skipped; only instructions read (the event option picks another)"* ]]
	tach2pprof --help | grep -q -- '--event NAME'
	tach2flamegraph --help | grep -q -- '--event NAME'
	tach-decode -q --event cycles "$f" | awk '{ n += $NF } END { print n }' >"$T/n"
	tach2pprof -q --event cycles "$f" | tach-decode -q | awk '{ n += $NF } END { print n }' >"$T/m"
	[ "$(cat "$T/n")" -eq "$(grep -c ' cycles: $' "$f")" ]
	cmp "$T/n" "$T/m"
	# --thread of another run: exit 0, an empty profile, and a word on it
	run tach2pprof --thread 99999 -o "$T/e.pb.gz" "$f"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tach2pprof: warning: none of the "*" samples read passes the sample filters (--thread, --status, --from-us, --to-us): the output has no samples"* ]]
	run tach2pprof -q --thread 99999 -o "$T/e.pb.gz" "$f"
	[ -z "$output" ]
	# a JDK Flight Recorder file is read by the JFR reader: one cut in its first chunk's
	# header says so at its offset
	printf 'FLR\000\000\002\000\001\000\000\000\000\000\000\000\100' >"$T/x.jfr"
	run tach-decode "$T/x.jfr"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/x.jfr: offset 0: the recording's first chunk is cut short within its header: nothing to read" ]
}

@test "rule: callgrind text (ours, xdebug's header, name compression) is callgrind from a file and a pipe, folded stacks never" {
	tach2callgrind -q "$CASES/deep_stack_300.tach" -o "$T/ours.cg"
	printf 'version: 1\ncreator: xdebug 3.0.2\npositions: line\n\nevents: Time_(10ns) Memory_(bytes)\n\nfl=(1) a.php\nfn=(1) main\n1 2 3\n' >"$T/x.cg"
	printf '# callgrind format\nevents: Ir\n\nfn=main\n16 20\n' >"$T/bare.cg"
	for f in "$T/ours.cg" "$T/x.cg" "$T/bare.cg"; do
		run tach-decode -v -q "$f"
		[[ $status -eq 0 && $output == *"callgrind input"* ]] || { echo "$f: $output"; false; }
		cat "$f" | tach-decode -v -q -F collapsed >"$T/pipe" 2>&1
		grep -q "callgrind input" "$T/pipe"
	done
	# a stack whose first frame is named "events: x" stays folded
	printf 'events: Ir;fn=main 3\n' >"$T/folded"
	run tach-decode -v -q "$T/folded"
	[[ $status -eq 0 && $output == *"collapsed input"* ]]
}

# The files whose text (after gzip) starts as a JSON object, listed for the JSON formats'
# probes (the others' first bytes are no '{'; each probe asks that first).
json_like() { # DIR...
	python3 -c '
import gzip, os, sys
for d in sys.argv[1:]:
    for root, _, names in os.walk(d):
        for n in sorted(names):
            p = os.path.join(root, n)
            try:
                with open(p, "rb") as f:
                    b = f.read(4096)
                if b[:2] == b"\x1f\x8b":
                    b = gzip.open(p).read(4096)
            except (OSError, EOFError):
                continue
            if b.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
                print(p)' "$@"
}

@test "Ruby stackprof dumps are detected from a file and a pipe; no other file is taken for one" {
	local f
	for f in "$TESTDATA"/stackprof/*.json; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == "tach-decode: $f: stackprof input" ]]
		diff -u <(tach-decode -q --from stackprof "$f") <(tach-decode -q <"$f")
	done
	# stackprof writes "frames" before "raw": a dump whose frames fill the bytes looked at
	{
		printf '{"version":1.2,"mode":"cpu","interval":1000,"frames":{'
		for i in $(seq 1 300); do printf '"%d":{"name":"Object#f%d","file":"a.rb","line":%d},' $i $i $i; done
		printf '"0":{"name":"<main>","file":"a.rb"}},"raw":[2,0,7,3],"raw_timestamp_deltas":[1,1,1]}'
	} >"$T/big.json"
	tach-decode -q --no-thread-frames <"$T/big.json" | grep -qx 'a.rb:<main>:0;a.rb:Object#f7:7 3'
	# every other JSON object among the fixtures, our data and the peers' files
	local dirs=("$FIXTURES" "$TESTDATA")
	[ -d "${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}" ] && dirs+=("${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}")
	json_like "${dirs[@]}" | grep -v -e '/stackprof/' -e '/stackprof-[^/]*$' >"$T/list"
	[ "$(wc -l <"$T/list")" -gt 20 ]
	while read -r f; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} != *": stackprof input" ]] || { echo "$f taken for stackprof"; false; }
	done <"$T/list"
}

@test "GHC's .prof reports and -pj profiles are detected from a file and a pipe; no other file is taken for one" {
	local f
	for f in "$TESTDATA/ghc/percent.prof:ghcprof" "$TESTDATA/ghc/fib.json:ghcpj"; do
		run tach-decode -v -q -F info "${f%:*}"
		[[ ${lines[0]} == "tach-decode: ${f%:*}: ${f##*:} input" ]]
		diff -u <(tach-decode -q --from "${f##*:}" "${f%:*}") <(tach-decode -q <"${f%:*}")
	done
	# the report's title is its first line: no other file has it
	local dirs=("$FIXTURES" "$TESTDATA")
	[ -d "${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}" ] && dirs+=("${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}")
	run grep -rl -e 'Time and Allocation Profiling Report' "${dirs[@]}"
	[ -z "$(printf '%s\n' "${lines[@]}" | grep -v -e '/ghc/[^/]*\.prof$' -e '/ghc-[^/]*\.prof$')" ]
	# every JSON object among the fixtures, our data and the peers' files but GHC's
	json_like "${dirs[@]}" | grep -v -e '/ghc/' -e '/ghc-[^/]*$' >"$T/list"
	[ "$(wc -l <"$T/list")" -gt 20 ]
	while read -r f; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} != *": ghcpj input" ]] || { echo "$f taken for ghcpj"; false; }
	done <"$T/list"
}

# The formats read only from their first lines' words (the text call-graph reports) take
# no file of another format: every fixture, every file of ours, and the peers' files.
@test "rule: no fixture nor file of another format is taken for a macOS sample report, an Instruments deep copy, VTune or Visual Studio CSV, a pmcstat call graph, a Papyrus profile, a perf report" {
	local f k P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	while IFS= read -r f; do
		case $f in
		"$TESTDATA"/macsample/* | */formats/macos-sample.txt) ;;
		"$TESTDATA"/instruments/* | */formats/instruments-deep-copy.txt) ;;
		"$TESTDATA"/vtune/* | */formats/vtune.csv) ;;
		"$TESTDATA"/vsprof/* | */formats/vsprof-*.csv) ;;
		"$TESTDATA"/pmcstat/* | "$TESTDATA"/papyrus/*) ;;
		"$TESTDATA"/perfreport/*.txt) ;;
		*)
			k=$(tach-decode -v -q --max-samples 1 -F samples "$f" 2>&1 >/dev/null | head -1)
			case $k in *": macsample input" | *": instruments input" | *": vtune input" | *": vsprof input" | *": pmcstat input" | *": papyrus input" | *": perfreport input") echo "$f: $k"; false ;; esac
		esac
	done < <(find "$FIXTURES" "$TESTDATA" $([ -d "$P" ] && echo "$P") -type f)
}

@test "xctrace exports are detected from a file and a pipe; no other file or XML document is taken for one" {
	local f k P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	for f in "$TESTDATA"/xctrace/*.xml; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == "tach-decode: $f: xctrace input" ]]
		diff -u <(tach-decode -q --from xctrace "$f") <(tach-decode -q <"$f")
	done
	# the root element is what is looked at: other XML (our own flame graph SVG, another
	# root, a root whose name only starts alike) is not an export
	tach2flamegraph -o "$T/fg.svg" "$TESTDATA/xctrace/threads.xml"
	head -c 5 "$T/fg.svg" | grep -q '^<?xml'
	printf '<?xml version="1.0"?>\n<trace-toc><run number="1"/></trace-toc>\n' >"$T/toc.xml"
	printf '<?xml version="1.0"?>\n<trace-query-results>\n</trace-query-results>\n' >"$T/alike.xml"
	for f in "$T/fg.svg" "$T/toc.xml" "$T/alike.xml"; do
		run tach-decode -v -q -F info "$f"
		[[ $output != *": xctrace input"* ]] || { echo "$f taken for xctrace"; false; }
	done
	# every fixture, every file of ours and the peers' files but the exports
	while IFS= read -r f; do
		case $f in
		"$TESTDATA"/xctrace/* | */formats/xctrace-*.xml) ;;
		*)
			k=$(tach-decode -v -q --max-samples 1 -F samples "$f" 2>&1 >/dev/null | head -1)
			case $k in *": xctrace input") echo "$f: $k"; false ;; esac
		esac
	done < <(find "$FIXTURES" "$TESTDATA" $([ -d "$P" ] && echo "$P") -type f)
}

@test "Safari timeline recordings are detected from a file and a pipe; no other file is taken for one" {
	local f
	for f in "$TESTDATA"/safari/*-recording.json; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == "tach-decode: $f: safari input" ]]
		diff -u <(tach-decode -q --from safari "$f") <(tach-decode -q <"$f")
	done
	# every other JSON object among the fixtures, our data and the peers' files
	local dirs=("$FIXTURES" "$TESTDATA")
	[ -d "${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}" ] && dirs+=("${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}")
	json_like "${dirs[@]}" | grep -v -e '/safari/' >"$T/list"
	[ "$(wc -l <"$T/list")" -gt 20 ]
	while read -r f; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} != *": safari input" ]] || { echo "$f taken for safari"; false; }
	done <"$T/list"
}

@test "V8 heap profiles are detected from a file and a pipe; no other file is taken for one" {
	local f=$TESTDATA/heapprofile/small.heapprofile
	run tach-decode -v -q -F info "$f"
	[[ ${lines[0]} == "tach-decode: $f: heapprofile input" ]]
	diff -u <(tach-decode -q --from heapprofile "$f") <(tach-decode -q <"$f")
	# every other JSON object among the fixtures, our data and the peers' files (the
	# .cpuprofiles of both forms among them)
	local dirs=("$FIXTURES" "$TESTDATA")
	[ -d "${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}" ] && dirs+=("${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}")
	json_like "${dirs[@]}" | grep -v -e '/heapprofile/' >"$T/list"
	[ "$(wc -l <"$T/list")" -gt 20 ]
	grep -q '\.cpuprofile$' "$T/list"
	while read -r f; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} != *": heapprofile input" ]] || { echo "$f taken for heapprofile"; false; }
	done <"$T/list"
}

@test "V8 tick logs, raw and preprocessed, are detected from a file and a pipe; no other file is taken for one" {
	local f
	for f in "$TESTDATA/v8log/small.log" "$TESTDATA/v8log/small.v8log.json"; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == "tach-decode: $f: v8log input" ]]
		diff -u <(tach-decode -q --from v8log -F samples "$f") <(tach-decode -q -F samples <"$f")
	done
	# every fixture, every file of ours and the peers' files but the tick logs
	local P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers} k n=0
	while IFS= read -r f; do
		case $f in "$TESTDATA"/v8log/* | */formats/v8-isolate.log) continue ;; esac
		n=$((n + 1))
		k=$(tach-decode -v -q --max-samples 1 -F samples "$f" 2>&1 >/dev/null | head -1)
		case $k in *": v8log input") echo "$f: $k"; false ;; esac
	done < <(find "$FIXTURES" "$TESTDATA" $([ -d "$P" ] && echo "$P") -type f)
	[ "$n" -gt 100 ]
}
