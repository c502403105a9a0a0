#!/usr/bin/env bats
# Firefox Profiler files in: Gecko profiles (DevTools' recording around one, Firefox's,
# tach2gecko's) and the processed format (the web app's saved files, tach2gecko
# --processed), read as the profiler's own importer (profiler-cli, from npm) reads them:
# every call path by the names it shows and its count or time, the thread names, each
# sample's time; tach2gecko's output of many inputs reads back to the same samples; the
# location forms the importer takes apart; weights of each kind; damaged files are one
# line with the offset.

load checked
load profiler_cli
load v8_writers

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/gecko
	PEERS=$SOURCE_ROOT/../shared/peers
}

# read_ok FILE: the importer's call trees and times are what tach-decode reads of FILE.
read_ok() {
	tach-decode -q -F samples "$1" >"$T/read.txt"
	[ "$(grep -c $'\t' "$T/read.txt")" -gt 0 ]
	checked "$1" "$T/read.txt" -- python3 "$SOURCE_ROOT/tests/cli/gecko_read_check.py" \
		"$PCLI" "$1" "$T/read.txt"
}

# round_trip FILE [--processed]: tach2gecko's output of FILE is detected, reads back to
# FILE's samples, and reads as the importer reads it.
round_trip() {
	local f=$1 m=${2:-}
	tach-decode -q -F samples "$f" >"$T/orig.txt"
	tach2gecko -q $m "$f" -o "$T/g.json.gz"
	run tach-decode -v -q -F info "$T/g.json.gz"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *": gecko input" ]]
	tach-decode -q -F samples "$T/g.json.gz" >"$T/back.txt"
	python3 "$SOURCE_ROOT/tests/cli/gecko_roundtrip.py" ${m:+--timed} "$T/orig.txt" "$T/back.txt"
	read_ok "$T/g.json.gz"
}

@test "the peers' Firefox Profiler files (a DevTools recording, an old processed profile) read as the profiler reads them" {
	[ -d "$PEERS/formats" ] || skip "no ../shared/peers"
	profiler_cli
	for f in gecko-simple-firefox.json firefox-processed-1.json; do
		read_ok "$PEERS/formats/$f"
		run tach-decode -v -q -F info "$PEERS/formats/$f"
		[[ ${lines[0]} == *"$f: gecko input" ]]
		# from a pipe too
		tach-decode -q -F samples <"$PEERS/formats/$f" | cmp - "$T/read.txt"
	done
	# the DevTools recording's one thread and its names as the importer shows them
	tach-decode -q -F samples "$PEERS/formats/gecko-simple-firefox.json" >"$T/s.txt"
	# GeckoMain: the main thread
	[ "$(awk '!/^@/ { print $4 }' "$T/s.txt" | sort -u)" = 36 ]
	grep -q ':(root scope) file%3A///Users/jlfwong/code/speedscope/sample/simple.js:' "$T/s.txt"
	# the old processed profile's script function, its location taken out of its name
	tach-decode -q -F samples "$PEERS/formats/firefox-processed-1.json" >"$T/p.txt"
	grep -q 'chrome%3A//blargh:frobnicate:34:' "$T/p.txt"
}

@test "every location form the importer takes apart: addresses in libraries, (in LIB), scripts, labels" {
	profiler_cli
	read_ok "$D/locations.json"
	tach-decode -q -F samples "$D/locations.json" >"$T/s.txt"
	# an address in a library's range: the library, as a mapping; one in none stays a label
	grep -q $'\tapp:0x10f84:-' "$T/s.txt"
	grep -q ';libc.so.6:0x20010:-' "$T/s.txt"
	grep -q $'\t~:0x99999999:-' "$T/s.txt"
	tach2pprof -q "$D/locations.json" -o "$T/l.pb.gz"
	go tool pprof -raw "$T/l.pb.gz" 2>/dev/null | grep -q '/opt/app/bin/app'
	# (in LIB), + N, (FILE:LINE) after, and a thunk's prefix dropped
	grep -q $'\tlibc.so.6:read:-' "$T/s.txt"
	grep -q $'\tapp:parse:-' "$T/s.txt"
	grep -q $'\tlibfoo.so:Foo%3A%3Abar():-' "$T/s.txt"
	# scripts: the shortest URL, a frame's own line and column, [N], the URL after " -> ",
	# an empty name; and what is no form stays whole
	grep -q $'\thttp%3A//localhost%3A8080/app.js:handler:11:11:3:' "$T/s.txt"
	grep -q $'\tapp.js:tick:3:' "$T/s.txt"
	grep -q $'\thttps%3A//cdn/y.js:url -> chain:12:12:9:' "$T/s.txt"
	grep -q $'\tanon.js:(root scope) anon.js:1:' "$T/s.txt"
	grep -q $'\tc.js:a (b:1:' "$T/s.txt"
	grep -q $'\t~:f (in lib(x)) tail:-' "$T/s.txt"
	# GeckoMain is the main thread; another thread's name is its [comm] root, with its pid
	[ "$(awk '$1 == 4242 { print $4 }' "$T/s.txt" | sort -u)" = 36 ]
	grep -q '^4250 .*;\[comm\]:Worker:4242:4242:' "$T/s.txt"
	# the last sample without a stack ends the one before: no sample
	[ "$(grep -c '^4250 ' "$T/s.txt")" -eq 5 ]
}

@test "tach2gecko's output of TACH, V8, Chrome, perf and pprof input reads back to the same samples, in both formats" {
	profiler_cli
	for f in "$FIXTURES/tach/cases/threads_interleaved.tach" "$FIXTURES/tach/cases/transitions.tach" \
		"$TESTDATA/v8/devtools_order.cpuprofile" "$TESTDATA/chrome/worker_trimmed.json" \
		"$FIXTURES/perf/real/sort-fp.perf" "$FIXTURES/gperf/hotloop/hotloop.pprof.pb.gz"; do
		round_trip "$f"
		round_trip "$f" --processed
	done
	# the check fails on a sample that does not come back
	tach-decode -q -F samples "$TESTDATA/v8/devtools_order.cpuprofile" >"$T/orig.txt"
	tach2gecko -q --processed "$TESTDATA/v8/devtools_order.cpuprofile" | tach-decode -q -F samples |
		awk -F'\t' 'NR == 4 { sub(/ [0-9]+$/, " 1", $1) } { print }' OFS='\t' >"$T/bad.txt"
	run python3 "$SOURCE_ROOT/tests/cli/gecko_roundtrip.py" --timed "$T/orig.txt" "$T/bad.txt"
	[ "$status" -eq 1 ]
}

@test "a node profile recorded now goes through both Gecko formats and back, times to the us" {
	find_node
	profiler_cli
	mkdir -p "$T/app"
	printf 'function spin(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i);return s}\nfor(let k=0;k<40;k++)spin(2e5)\n' >"$T/app/a.js"
	(cd "$T/app" && "$NODE" --cpu-prof --cpu-prof-interval 250 --cpu-prof-name p.cpuprofile a.js)
	round_trip "$T/app/p.cpuprofile"
	round_trip "$T/app/p.cpuprofile" --processed
}

@test "the importer's check fails on a wrong name or a wrong time" {
	profiler_cli
	tach-decode -q -F samples "$D/locations.json" >"$T/s.txt"
	sed '3s/:0x10f84:/:0x10f85:/' "$T/s.txt" >"$T/name.txt"
	run python3 "$SOURCE_ROOT/tests/cli/gecko_read_check.py" "$PCLI" "$D/locations.json" "$T/name.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"0x10f84: profiler 1, read 0"* ]]
	sed '3s/ 1700000000001000 / 1700000000001001 /' "$T/s.txt" >"$T/time.txt"
	run cmp -s "$T/s.txt" "$T/time.txt"
	[ "$status" -eq 1 ]
	run python3 "$SOURCE_ROOT/tests/cli/gecko_read_check.py" "$PCLI" "$D/locations.json" "$T/time.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"sample times differ"* ]]
}

# processed FILE KIND: tach2gecko --processed's output of FILE with its samples weighed in
# KIND (samples or bytes), each sample's weight its ordinal, to $T/w.json
reweigh() {
	tach2gecko -q --processed --no-gzip "$1" -o "$T/p.json"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for t in d["threads"]:
    s = t["samples"]; s["weightType"] = sys.argv[2]
    s["weight"] = [i + 1 for i in range(s["length"])]
json.dump(d, open(sys.argv[3], "w"))' "$T/p.json" "$2" "$T/w.json"
}

@test "processed weights: samples count, bytes are bytes, tracing-ms each sample's time" {
	profiler_cli
	# weights 1..10 over 10 samples: 55 samples, the profiler's total too
	reweigh "$TESTDATA/v8/devtools_order.cpuprofile" samples
	read_ok "$T/w.json"
	[ "$(tach-decode -q -F samples "$T/w.json" | grep -c $'\t')" -eq 55 ]
	tach2pprof -q "$T/w.json" -o "$T/w.pb.gz"
	go tool pprof -raw "$T/w.pb.gz" 2>/dev/null | grep -q '^samples/count'
	reweigh "$TESTDATA/v8/devtools_order.cpuprofile" bytes
	read_ok "$T/w.json"
	tach2pprof -q "$T/w.json" -o "$T/b.pb.gz"
	go tool pprof -raw "$T/b.pb.gz" 2>/dev/null | grep -q '^bytes/bytes'
	[[ $(go tool pprof -top "$T/b.pb.gz" 2>/dev/null) == *"of 55B total"* ]]
	# tracing-ms: each sample's own time, which pprof sums
	tach2gecko -q --processed "$TESTDATA/v8/devtools_order.cpuprofile" -o "$T/t.json.gz"
	tach2pprof -q "$T/t.json.gz" -o "$T/t.pb.gz"
	tach2pprof -q "$TESTDATA/v8/devtools_order.cpuprofile" -o "$T/v.pb.gz"
	go tool pprof -top "$T/t.pb.gz" 2>/dev/null | grep -q 'of 1900us total'
	go tool pprof -top "$T/v.pb.gz" 2>/dev/null | grep -q 'of 1900us total'
}

@test "damaged and hostile files: one line with the offset, exit 1, no partial output" {
	cp "$D/locations.json" "$T/x.json"
	head -c 2000 "$D/locations.json" >"$T/cut.json"
	run tach-decode -F samples "$T/cut.json"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == "tach-decode: $T/cut.json: offset "*": JSON: "* ]]
	mut() {
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(d, open(sys.argv[3], "w"))' \
			"$D/locations.json" "$1" "$T/m.json"
		run tach2pprof "$T/m.json" -o "$T/out.pb.gz"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ ${lines[0]} == "tach2pprof: $T/m.json: offset "*": $2"* ]] || { echo "${lines[0]}"; false; }
		[ ! -e "$T/out.pb.gz" ]
	}
	# a stack whose prefix is itself or later: a loop, refused
	mut 'd["threads"][0]["stackTable"]["data"][3][0] = 3' "a stack's prefix is not an earlier row"
	mut 'd["threads"][0]["stackTable"]["data"][3][0] = 7' "a stack's prefix is not an earlier row"
	mut 'd["threads"][0]["samples"]["data"][0][0] = 999' "a stack index is past the stack table"
	mut 'd["threads"][0]["stackTable"]["data"][2][1] = 999' "a stack's frame is not in the frame table"
	mut 'd["threads"][0]["frameTable"]["data"][1][0] = 999' "a string index is past the string table"
	mut 'd["threads"][0]["frameTable"]["data"][1][0] = "x"' "a table cell must be a number"
	mut 'd["threads"][0]["samples"]["schema"]["stack"] = 100000' "a schema's column index must be an integer 0..4096"
	mut 'd["threads"][0]["samples"]["data"][0][1] = None' "a sample without its time"
	mut 'd["meta"]["startTime"] = -5' "meta.startTime is before 1970"
	mut 'del d["threads"][0]["stackTable"]' "a thread without its"
	mut 'd["threads"] = 5' '"threads" must be an array'
	mut 'd["processes"] = [d.copy()]; p = d["processes"][0]
for i in range(20): p["processes"] = [dict(p)]; p = p["processes"][0]' "processes nested too deep"
	# a deep stack past --max-depth
	run tach-decode -q --max-depth 3 -F samples "$D/locations.json"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"a stack deeper than the limit of 3 frames"* ]]
	# JSON that is no Firefox profile is not taken for one
	echo '{"meta": {"interval": 1}, "nodes": []}' >"$T/n.json"
	run tach-decode -q -F samples "$T/n.json"
	[ "$status" -eq 1 ]
	run tach-decode -q --from gecko -F samples "$T/n.json"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"not a Firefox Profiler profile"* ]]
}
