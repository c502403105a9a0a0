#!/usr/bin/env bats
# tach2gecko as a user runs it: output that JSON parsers and the Firefox Profiler's own
# importer (profiler-cli, from npm) accept, with the call trees tach-decode reads from the
# same input; every option and error path.

load gzip_thread
load checked
load profiler_cli

setup() {
	TMP=$(mktemp -d)
	CASES=$FIXTURES/tach/cases
}

teardown() {
	rm -rf "$TMP"
}

# tests/data/NAME.samples -> $TMP/NAME.tach
encode() {
	tach-encode "$TESTDATA/$1.samples" -o "$TMP/$1.tach"
}

# Plain JSON of a TACH file, through the default gzip path.
json() {
	tach2gecko "$@" | gzip -dc
}

# Loads $1 with profiler-cli (retrying a slow daemon start), prints what it said.
pcli_load() {
	python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$1"
}

# calltree_ok PROFILE SAMPLES_TXT: the importer's call trees are the samples' (checked.bash:
# a pass that made the same bytes before does not start the importer again).
calltree_ok() {
	checked "$1" "$2" -- python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$1" "$2"
}

@test "help lists the options; version names the library" {
	run tach2gecko --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--no-gzip"* ]]
	[[ "$output" == *"--level N"* ]]
	[[ "$output" == *"--processed"*"processed format"* ]]
	[[ "$output" == *"Exit status"* ]]
	run tach2gecko --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"libtachfmt"* ]]
}

@test "usage errors exit 2" {
	run tach2gecko --level 0 "$CASES/single_sample.tach"
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach2gecko: gzip level must be 1-9, not 0"* ]]
	run tach2gecko --level 10 "$CASES/single_sample.tach"
	[ "$status" -eq 2 ]
	run tach2gecko --level x "$CASES/single_sample.tach"
	[ "$status" -eq 2 ]
	run tach2gecko --bogus "$CASES/single_sample.tach"
	[ "$status" -eq 2 ]
	# two inputs are one profile (merged), not a usage error
	run tach2gecko -q "$CASES/single_sample.tach" "$CASES/single_sample.tach" -o "$TMP/two.json.gz"
	[ "$status" -eq 0 ]
	run tach2gecko --status nope "$CASES/single_sample.tach"
	[ "$status" -eq 2 ]
}

@test "bad input exits 1 with file and offset, and leaves no -o file" {
	run tach2gecko "$FIXTURES/tach/errors/err_bad_magic.tach" -o "$TMP/out.json.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2gecko: $FIXTURES/tach/errors/err_bad_magic.tach: offset "[0-9]*": "* ]]
	[ -z "$(ls "$TMP")" ]
	for f in "$FIXTURES"/tach/errors/err_*.tach; do
		case $f in *err_footer_filesize_wrong*) continue ;; esac
		run tach2gecko "$f" -o "$TMP/out.json.gz"
		[ "$status" -eq 1 ] || { echo "$f: $status"; false; }
		[[ "$output" == *"tach2gecko: $f: offset "* ]]
	done
	[ -z "$(ls "$TMP")" ]
	run tach2gecko "$TMP/missing.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"missing.tach: No such file or directory"* ]]
	echo "not a profile" >"$TMP/text.tach"
	run tach2gecko "$TMP/text.tach" -o "$TMP/o"
	[ "$status" -eq 1 ]
	[ ! -e "$TMP/o" ]
}

@test "a write error exits 1" {
	run bash -c 'tach2gecko --no-gzip "$0" >/dev/full' "$CASES/threads_interleaved.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach2gecko: <stdout>: write error: No space left on device"* ]]
	run bash -c 'tach2gecko "$0" >/dev/full' "$CASES/threads_interleaved.tach"
	[ "$status" -eq 1 ]
}

@test "default output is gzip; --no-gzip is the same JSON; both deterministic" {
	tach2gecko "$CASES/threads_interleaved.tach" -o "$TMP/a.json.gz"
	[ "$(head -c 2 "$TMP/a.json.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]
	tach2gecko "$CASES/threads_interleaved.tach" >"$TMP/b.json.gz"
	cmp "$TMP/a.json.gz" "$TMP/b.json.gz"
	# the default level is 1
	tach2gecko --level 1 "$CASES/threads_interleaved.tach" | cmp - "$TMP/a.json.gz"
	! tach2gecko --level 9 "$CASES/threads_interleaved.tach" | cmp -s - "$TMP/a.json.gz" || false
	tach2gecko --no-gzip "$CASES/threads_interleaved.tach" -o "$TMP/a.json"
	gzip -dc "$TMP/a.json.gz" | cmp - "$TMP/a.json"
	tach2gecko --level 1 "$CASES/threads_interleaved.tach" | gzip -dc | cmp - "$TMP/a.json"
	tach2gecko --level 9 - <"$CASES/threads_interleaved.tach" | gzip -dc | cmp - "$TMP/a.json"
	cat "$CASES/threads_interleaved.tach" | tach2gecko --no-gzip | cmp - "$TMP/a.json"
}

@test "every fixture gives valid UTF-8 JSON with what the importer insists on" {
	local f p
	mkdir "$TMP/v"
	for f in "$CASES"/*.tach "$FIXTURES"/tach/layout-a/*.tach "$FIXTURES"/tach/big-endian/*.tach; do
		p=${f#"$FIXTURES"/tach/}
		p=$TMP/v/${p//\//-}.json
		tach2gecko -q "$f" -o "$TMP/p.json.gz"
		gzip -dc "$TMP/p.json.gz" >"$p"
		jq -e '
		  .meta.version == 31 and .libs == [] and .processes == [] and
		  .meta.presymbolicated == true and (.meta.markerSchema | length) > 0 and
		  ([.meta.categories[] | select(.color == "grey")] | length) == 1 and
		  ([.meta.categories[] | select(.name == "Idle")] | length) == 1 and
		  (.meta.interval > 0) and (.threads | length) > 0 and
		  all(.threads[];
		    .samples.schema.eventDelay == 2 and
		    (.samples.data | length) as $n |
		    ([.samples.data[][1]] as $t | all(range(1; $n); $t[.] >= $t[. - 1])) and
		    (.stackTable.data as $s | all(range(0; $s | length); $s[.][0] == null or $s[.][0] < .)) and
		    (.stackTable.data | length) as $ns |
		    all(.samples.data[]; .[0] == null or .[0] < $ns) and
		    (.frameTable.data | length) as $nf | all(.stackTable.data[]; .[1] < $nf) and
		    (.stringTable | length) as $nstr | all(.frameTable.data[]; .[0] < $nstr))
		' "$p" >/dev/null || { echo "$f"; false; }
	done
	# UTF-8 and JSON to Python's strict decoders, every file in one interpreter
	python3 - "$TMP"/v/*.json <<-'EOF'
	import json, sys
	bad = []
	for p in sys.argv[1:]:
	    try:
	        json.loads(open(p, "rb").read().decode("utf-8"))
	    except ValueError as e:
	        bad.append("%s: %s" % (p, e))
	sys.exit("\n".join(bad) if bad else 0)
	EOF
}

@test "frame categories: compiled languages' sources and binaries Native, Python's Python" {
	encode gecko_native
	json "$TMP/gecko_native.tach" >"$TMP/n.json"
	run jq -r '.meta.categories as $c | .threads[0] as $t | $t.frameTable.data[] |
	  "\($t.stringTable[.[0]]) \($c[.[6]].name)"' "$TMP/n.json"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -u)" = "$(printf '%s\n' \
		'<module> (<string>:1) Python' '__libc_start_main (in /usr/lib/libc.so.6) Native' \
		'helper (in app.py) Python' 'main (/src/app/main.cpp:12) Native' \
		'push_back (/src/lib/vec.cc:41) Native' 'render (templates/page.html:3) Python' \
		'run (src/x.rs:9) Native' 'work (app.py:7) Python' | sort -u)" ]
}

@test "gperftools input: every frame of the C program Native, symbolized or not; the process named after it" {
	local dir=$FIXTURES/gperf/hotloop
	tach2gecko -q --binary-path "$dir" "$dir/hotloop.prof" | gzip -dc >"$TMP/sym.json"
	tach2gecko -q --no-symbolize "$dir/hotloop.prof" | gzip -dc >"$TMP/nosym.json"
	for f in "$TMP/sym.json" "$TMP/nosym.json"; do
		run jq -r '.meta.categories as $c |
		  [.threads[].frameTable.data[] | $c[.[6]].name] | unique | .[]' "$f"
		[ "$status" -eq 0 ]
		[ "$output" = "Native" ]
	done
	# the symbolized frames keep their source lines
	run jq -r '.threads[0].stringTable[]' "$TMP/sym.json"
	[[ "$output" == *"main ("*"hotloop.c:"* ]]
	# the process and the product are the profiled program, not Python
	run jq -r '.meta.product, (.threads[] | .processName)' "$TMP/sym.json"
	[ "${lines[*]}" = "hotloop hotloop" ]
	# a profile that names no program stays Python's
	encode gecko_native
	run bash -c 'tach2gecko "$0" | gzip -dc | jq -r ".meta.product, (.threads[] | .processName)"' \
		"$TMP/gecko_native.tach"
	[ "${lines[*]}" = "Python 3.15 Python" ]
}

# Native inputs: gperftools (read directly), its pprof conversion, perf script (its program
# named by the comm, or none: java's frames are in libjvm.so, and its process then by the
# comm of the thread), folded.
native_inputs() {
	local dir=$FIXTURES/gperf/hotloop
	echo "hotloop $dir/hotloop.prof"
	echo "pprof $dir/hotloop.pprof.pb.gz"
	echo "func_ab $FIXTURES/perf/inputs/perf-funcab-cmd-01.txt"
	echo "perf $FIXTURES/perf/inputs/perf-java-stacks-01.txt ab"
	echo "collapsed $TESTDATA/collapsed/perf.txt"
}

@test "native input is not Python's: product and process after the program or format, native frames not script frames, no Python version" {
	local name f proc
	while read -r name f proc; do
		tach2gecko -q --no-gzip "$f" -o "$TMP/n.json"
		run jq -r '.meta.product, (.threads[] | .processName)' "$TMP/n.json"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = "$name" ] && [ "${lines[1]}" = "${proc:-$name}" ] ||
			{ echo "$f: product and process: ${lines[*]}"; false; }
		[[ "$output" != *Python* && "$output" != *3.15* ]]
		# No frame Python's (a leaf may be in its sample's state, Other for perf's) or
		# relevant for JS, and no location the importer takes for a script (its C++
		# patterns first, then its JS one).
		jq -r '.meta.categories as $c | .threads[] | .stringTable as $s |
		  .frameTable.data[] | "\(.[1]) \($c[.[6]].name) \($s[.[0]])"' "$TMP/n.json" >"$TMP/rows"
		[ -s "$TMP/rows" ]
		python3 - "$TMP/rows" <<-'EOF'
		import re, sys
		cpp = [r"^(.*) \(in ([^)]*)\) (\+ [0-9]+)$", r"^(.*) \(in ([^)]*)\) (\(.*:.*\))$",
		       r"^(.*) \(in ([^)]*)\)$"]
		js = [r"^(.*) \((.+?):([0-9]+)(?::([0-9]+))?\)(?:\[(\d+)\])?$",
		      r"^()(.+?):([0-9]+)(?::([0-9]+))?(?:\[(\d+)\])?$"]
		bad = []
		for row in open(sys.argv[1], encoding="utf-8"):
		    rel, cat, loc = row.rstrip("\n").split(" ", 2)
		    script = not loc.startswith("0x") and not any(re.match(p, loc) for p in cpp) \
		        and any(re.match(p, loc) for p in js)
		    if rel != "false" or cat == "Python" or script:
		        bad.append(row.strip())
		if bad:
		    sys.exit("\n".join(bad[:10]))
		EOF
		# -F info names no Python version the input did not have
		tach-decode -q -F info "$f" >"$TMP/info"
		[ "$(grep -c python_version "$TMP/info")" -eq 0 ] || { echo "$f: python_version"; false; }
	done < <(native_inputs)
	# A C frame with its source line: the library form naming its mapping's file (the
	# pprof reader keeps the binary's mapping), not a script's.
	tach2gecko -q --no-gzip "$FIXTURES/gperf/hotloop/hotloop.pprof.pb.gz" -o "$TMP/n.json"
	run jq -r '.threads[0].stringTable[]' "$TMP/n.json"
	[[ "$output" == *$'\nmain (in hotloop) (/srv/profiles/gperf-fixtures/hotloop/hotloop.c:54)\n'* ]]
	# V8 is not Python's either, but its JavaScript frames stay script frames.
	tach2gecko -q --no-gzip "$TESTDATA/v8/node_hot.cpuprofile" -o "$TMP/v.json"
	run jq -r '.meta.product, .threads[0].processName, .meta.categories[].name' "$TMP/v.json"
	[ "${lines[0]}" = v8 ] && [ "${lines[1]}" = v8 ] && [[ "$output" != *Python* ]]
	jq -r '.threads[0].stringTable[]' "$TMP/v.json" >"$TMP/v.txt"
	grep -q '^addListener (node:events:[0-9]*)$' "$TMP/v.txt"
}

@test "the samples text of a native input names no Python version and reads back the same; TACH from it says 3.15.0" {
	tach-decode -q -F samples "$TESTDATA/collapsed/perf.txt" >"$TMP/a.txt"
	[ "$(grep -c '^@python_version' "$TMP/a.txt")" -eq 0 ]
	tach-decode -q -F samples "$TMP/a.txt" >"$TMP/b.txt"
	cmp "$TMP/a.txt" "$TMP/b.txt"
	tach-decode -q -F info "$TMP/a.txt" >"$TMP/info"
	[ "$(grep -c python_version "$TMP/info")" -eq 0 ]
	# TACH's header always holds a version: CPython's reader needs one; 3.15.0 when unknown.
	tach-encode "$TMP/a.txt" -o "$TMP/a.tach"
	grep -qx 'python_version: 3.15.0' <(tach-decode -F info "$TMP/a.tach")
	tach-decode -q -F samples "$TMP/a.tach" | grep -qx '@python_version 3.15.0'
	# and a version the input names is kept
	printf '@python_version 3.12.1\n1 0 5 1\tm.py:f:1\n' >"$TMP/v.txt"
	grep -qx '@python_version 3.12.1' <(tach-decode -q -F samples "$TMP/v.txt")
	grep -qx 'python_version: 3.12.1' <(tach-decode -q -F info "$TMP/v.txt")
}

@test "the Firefox Profiler imports the native outputs" {
	profiler_cli
	local name f
	while read -r name f _; do
		tach2gecko -q "$f" -o "$TMP/n.json.gz"
		checked "$TMP/n.json.gz" -- pcli_load "$TMP/n.json.gz" || { echo "$f: not imported"; false; }
	done < <(native_inputs)
}

@test "states: categories, CPU delta, markers, threads and main threads" {
	encode gecko_states
	json "$TMP/gecko_states.tach" >"$TMP/s.json"
	# Thread names and processes: one per (tid, interpreter); main threads are GeckoMain.
	run jq -r '.threads[] | "\(.name)|\(.processName)|\(.pid)|\(.tid)"' "$TMP/s.json"
	[ "${lines[0]}" = "GeckoMain|Python|0|10" ]
	[ "${lines[1]}" = "Thread 2 (tid 11)|Python|0|11" ]
	[ "${lines[2]}" = "GeckoMain|Python interpreter 1|1|10" ]
	# The category and subcategory of each sample's leaf frame, and its CPU delta.
	run jq -r '.threads[0] as $t | .meta.categories as $c | $t.samples.data[] |
	  [$t.stackTable.data[.[0]][1]] as [$f] | $t.frameTable.data[$f] as $fr |
	  "\(.[1]) \($c[$fr[6]].name)/\($c[$fr[6]].subcategories[$fr[7]]) \(.[3])"' "$TMP/s.json"
	[ "${lines[*]}" = "1 Python/Other 1000 2 Python/Other 1000 3 Native/Other 1000 4 Idle/Other 0 5 Idle/Waiting for GIL 0 6 Native/Other 1000" ]
	# An empty stack is a null stack; the state of thread 11's last sample: GIL, not CPU.
	run jq -c '.threads[1].samples.data' "$TMP/s.json"
	[ "$output" = '[[1,1.5,0,1000],[2,2.5,0,1000],[null,3.5,0,0],[4,4.5,0,0]]' ]
	# Markers: runs of each state, closed by the first sample without it, or one interval
	# after the thread's last sample.
	run jq -r '.threads[0] as $t | $t.markers.data[] |
	  "\($t.stringTable[.[0]]) \(.[1])-\(.[2]) \(.[3]) \(.[5].type) \(.[5].samples)"' "$TMP/s.json"
	[ "${lines[0]}" = "Has GIL 1-3 1 PythonThreadState 2" ]
	[ "${lines[1]}" = "On CPU 1-4 1 PythonThreadState 3" ]
	[ "${lines[2]}" = "Has Exception 3-4 1 PythonThreadState 1" ]
	[ "${lines[3]}" = "Waiting for GIL 5-6 1 PythonThreadState 1" ]
	[ "${lines[4]}" = "On CPU 6-7 1 PythonThreadState 1" ]
	[ "${#lines[@]}" -eq 5 ]
	run jq -r '.meta.markerSchema[0].name, .meta.sampleUnits.threadCPUDelta, .meta.startTime, .meta.interval' "$TMP/s.json"
	[ "${lines[*]}" = "PythonThreadState µs 5000 1" ]
	# Locations: one line per function; the sampled line in the frame; native and bare frames.
	run jq -r '.threads[0] as $t | $t.frameTable.data[] | "\($t.stringTable[.[0]]) \(.[4])"' "$TMP/s.json"
	[[ "$output" == *"work (app.py:12) 14"* ]]
	run jq -r '.threads[1].stringTable[4:][]' "$TMP/s.json"
	[ "$output" = "$(printf '%s\n' 'pack (lib.py:7)' 'compress (in <native>)' 'idle (lib.py:30)' '<built-in method sleep>')" ]
}

@test "JFR recordings: every frame in its JFR type's category, idle samples Idle, as the Firefox Profiler's importer counts them" {
	profiler_cli
	local f
	# the fixtures with every type (async-profiler's CPU and wall-clock recordings, whose
	# idle samples stay Idle) and the JDK's own; expectations from tach-decode's samples
	for f in ap-cpu jdk-profile ap-wall; do
		tach-decode -q -F samples "$FIXTURES/jfr/$f.jfr" >"$TMP/$f.samples"
		tach2gecko -q "$FIXTURES/jfr/$f.jfr" -o "$TMP/$f.json.gz"
		checked "$TMP/$f.json.gz" "$TMP/$f.samples" -- python3 \
			"$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/$f.json.gz" \
			"$TMP/$f.samples" --categories || { echo "$f"; false; }
	done
	# appended to the usual list, in async-profiler's flame graph colours (Native red)
	run jq -r '.meta.categories[] | "\(.name):\(.color)"' <(gzip -dc "$TMP/ap-cpu.json.gz")
	[ "${lines[*]}" = "Other:grey Script:yellow Native:red Idle:transparent GIL:green CPU:purple Exception:lightblue Interpreted:green JIT compiled:green C1 compiled:green Inlined:lightblue C++:yellow Kernel:orange" ]
	# a profile without JFR frame types keeps the usual list as it was
	run jq -r '.meta.categories[] | "\(.name):\(.color)"' <(json "$CASES/recursion.tach")
	[ "${lines[*]}" = "Other:grey Python:yellow Native:blue Idle:transparent GIL:green CPU:purple Exception:lightblue" ]
}

@test "samples out of time order are sorted, with a warning" {
	encode gecko_unordered
	run tach2gecko --no-gzip "$TMP/gecko_unordered.tach" -o "$TMP/u.json"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: samples of thread 7 are not in time order: sorted"* ]]
	run jq -c '[.threads[0] as $t | $t.samples.data[] | [.[1], $t.stringTable[$t.frameTable.data[$t.stackTable.data[.[0]][1]][0]]]]' "$TMP/u.json"
	[ "$output" = '[[1,"f (a.py:1)"],[2,"g (a.py:5)"],[3,"g (a.py:5)"],[4,"f (a.py:1)"]]' ]
	run tach2gecko -q --no-gzip "$TMP/gecko_unordered.tach" -o "$TMP/u.json"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "strings are valid UTF-8 JSON: invalid bytes repaired once, specials escaped" {
	encode gecko_strings
	run tach2gecko --no-gzip "$TMP/gecko_strings.tach" -o "$TMP/s.json"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: a string is not valid UTF-8: invalid bytes written as U+FFFD"* ]]
	[ "$(grep -c 'not valid UTF-8' <<<"$output")" -eq 1 ]
	[[ "$output" == *"warning: a frame name contains control characters: written as '?'"* ]]
	python3 - "$TMP/s.json" <<-'EOF'
		import json, sys
		raw = open(sys.argv[1], "rb").read()
		strings = json.loads(raw.decode("utf-8"))["threads"][0]["stringTable"]
		assert "f\ufffd\ufffd (bad\ufffdfile.py:3)" in strings, strings
		assert 'g?t\ufffd\ufffd\ufffd (q"uote\\\\back.py:1)' in strings, strings
	EOF
}

@test "filters: --thread, --status, --from-us" {
	encode gecko_states
	run bash -c 'tach2gecko --thread 11 "$0" | gzip -dc | jq -c "[.threads[] | .tid]"' "$TMP/gecko_states.tach"
	[ "$output" = "[11]" ]
	run bash -c 'tach2gecko --status idle "$0" | gzip -dc | jq -c "[.threads[] | [.tid, (.samples.data | length)]]"' "$TMP/gecko_states.tach"
	[ "$output" = "[[10,2],[11,1]]" ]
	run bash -c 'tach2gecko --from-us 5006000 "$0" | gzip -dc | jq -c "[.threads[] | [.name, .samples.data]]"' "$TMP/gecko_states.tach"
	[ "$output" = '[["GeckoMain",[[1,6,0,1000]]]]' ]
	# Nothing left: one empty thread, so that the profile still loads.
	run bash -c 'tach2gecko -q --thread 99 "$0" | gzip -dc | jq -c "[.threads[] | [.name, (.samples.data | length)]]"' "$TMP/gecko_states.tach"
	[ "$output" = '[["No samples",0]]' ]
}

@test "the Firefox Profiler imports every fixture with tach-decode's call trees" {
	profiler_cli
	local n=0 f
	# The other header layout and byte order hold the same samples: the same output.
	for f in "$FIXTURES"/tach/layout-a/*.tach "$FIXTURES"/tach/big-endian/*.tach; do
		tach2gecko -q "$f" -o "$TMP/a.json.gz"
		tach2gecko -q "$CASES/$(basename "$f")" -o "$TMP/b.json.gz"
		cmp "$TMP/a.json.gz" "$TMP/b.json.gz" || { echo "$f: differs from cases/"; false; }
		n=$((n + 1))
	done
	for f in "$CASES"/*.tach \
		$(for d in gecko_states gecko_unordered gecko_strings gecko_native; do
			encode $d
			echo "$TMP/$d.tach"
		done); do
		tach2gecko -q "$f" -o "$TMP/p.json.gz"
		tach-decode -q --format samples "$f" >"$TMP/p.txt"
		calltree_ok "$TMP/p.json.gz" "$TMP/p.txt" ||
			{ echo "$f: the profiler's call tree differs"; false; }
		n=$((n + 1))
	done
	[ "$n" -ge 50 ]
	# Plain JSON loads too.
	tach2gecko --no-gzip "$CASES/recursion.tach" -o "$TMP/p.json"
	tach-decode --format samples "$CASES/recursion.tach" >"$TMP/p.txt"
	calltree_ok "$TMP/p.json" "$TMP/p.txt"
}

@test "the import check fails on bad outputs" {
	profiler_cli
	tach2gecko --no-gzip "$CASES/recursion.tach" -o "$TMP/ok.json"
	run pcli_load "$TMP/ok.json"
	[ "$status" -eq 0 ]
	# No eventDelay column: the importer refuses.
	jq -c '.threads[].samples.schema |= del(.eventDelay) | .threads[].samples.schema.threadCPUDelta = 2 |
	  .threads[].samples.data[] |= del(.[2])' "$TMP/ok.json" >"$TMP/no-delay.json"
	run pcli_load "$TMP/no-delay.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"eventDelay"* ]]
	# A version newer than the importer knows.
	jq -c '.meta.version = 37' "$TMP/ok.json" >"$TMP/v37.json"
	run pcli_load "$TMP/v37.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"version 37"* ]]
	# A call tree that does not match the samples.
	tach-decode --format samples "$CASES/transitions.tach" >"$TMP/other.txt"
	run python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/ok.json" "$TMP/other.txt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"call tree differs"* || "$output" == *"threads, expected"* ]]
}

@test "the man page documents every option" {
	local o
	for o in $(tach2gecko --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "\*$o\*" "$SOURCE_ROOT/docs/tach2gecko.1.scd" || { echo "missing $o"; false; }
	done
}

# Threads with more sample records than one spool chunk holds in memory (16 KiB of packed
# records, a few bytes each): their records go through the temporary file and come back in
# order.
spilled_profile() {
	awk 'BEGIN { print "@interval_us 100"; ts = 1000000
		for (i = 0; i < 30000; i++) {
			t = i % 3 + 1; d = i % 5 + 1; s = ""
			for (k = 0; k < d; k++)
				s = s sprintf("%sm%d.py:f%d:%d", k ? ";" : "", (i + k) % 4, k, k + 1)
			printf "%d 0 %d %d\t%s\n", t, ts += 100, i % 4, s
		} }' >"$TMP/spill.samples"
	tach-encode -o "$TMP/spill.tach" "$TMP/spill.samples"
}

@test "samples spooled through a temporary file: memory stays flat, the profile is the same" {
	profiler_cli
	spilled_profile
	tach2gecko -q "$TMP/spill.tach" -o "$TMP/p.json.gz"
	tach-decode -q --format samples "$TMP/spill.tach" >"$TMP/p.txt"
	calltree_ok "$TMP/p.json.gz" "$TMP/p.txt"
	# every sample is a row, in time order, per thread
	run bash -c "gzip -dc '$TMP/p.json.gz' | jq -c '[.threads[] | [(.samples.data | length),
	  ([.samples.data[][1]] | . == sort)]]'"
	[ "$output" = "[[10000,true],[10000,true],[10000,true]]" ]
	# no temporary file is left behind, and one that cannot be made is an I/O error
	[ -z "$(ls "$TMP" | grep tachfmt-spool)" ]
	mkdir "$TMP/ro" && chmod 500 "$TMP/ro"
	if [ "$(id -u)" -ne 0 ]; then
		run env TMPDIR="$TMP/ro" tach2gecko "$TMP/spill.tach" -o "$TMP/x.json.gz"
		[ "$status" -eq 1 ]
		[[ $output == *"spooling samples to a temporary file: Permission denied"* ]]
		[ ! -e "$TMP/x.json.gz" ]
	fi
	run env TMPDIR="$TMP/missing" tach2gecko "$TMP/spill.tach" -o "$TMP/x.json.gz"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"spooling samples to a temporary file: No such file or directory"* ]]
	[ ! -e "$TMP/x.json.gz" ]
}

# Four threads over parts of 600 stacks that share their outer frames (a tree of three
# children a level, 3 to 6 deep), in four states: a trie of hundreds of nodes, each thread
# reaching its own scattered subset of them. Thread 4 has a sample in a hundred: too few
# for a pass over the whole trie, so its stacks are found from each leaf up.
shared_profile() {
	awk 'BEGIN { print "@interval_us 100"; ts = 1000000; x = 12345
		for (i = 0; i < 6000; i++) {
			x = (x * 1103515245 + 12345) % 2147483648
			t = i % 100 == 50 ? 4 : i % 3 + 1; st = int(x / 65536) % 600
			if (t == 2) st = st % 90
			if (t == 3) st = 599 - st % 300
			d = 3 + st % 4; s = ""
			for (k = d - 1; k >= 0; k--)
				s = s sprintf("%sm%d.py:f%d:%d", k < d - 1 ? ";" : "", k,
					      int(st * 3 ^ (k + 1) / 600), k + 1)
			printf "%d 0 %d %d\t%s\n", t, ts += 100, int(x / 4096) % 4, s
		} }' >"$TMP/shared.samples"
	tach-encode -o "$TMP/shared.tach" "$TMP/shared.samples"
}

@test "threads that share a trie each get their own stack table" {
	profiler_cli
	shared_profile
	tach2gecko -q "$TMP/shared.tach" -o "$TMP/p.json.gz"
	tach-decode -q --format samples "$TMP/shared.tach" >"$TMP/p.txt"
	calltree_ok "$TMP/p.json.gz" "$TMP/p.txt"
	# each table: a prefix before its row, no row twice, hundreds of rows but not all
	run bash -c "gzip -dc '$TMP/p.json.gz' | jq -c '[.threads[] | .stackTable.data |
	  [length, (to_entries | all(.value[0] == null or .value[0] < .key)),
	   ((map(tostring) | unique | length) == length)]]'"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output =~ ^\[\[([0-9]+),true,true\],\[([0-9]+),true,true\],\[([0-9]+),true,true\],\[([0-9]+),true,true\]\]$ ]]
	local r=("${BASH_REMATCH[@]:1}")
	[ "${r[0]}" -gt 300 ] && [ "${r[1]}" -lt "${r[0]}" ] && [ "${r[2]}" -lt "${r[0]}" ]
	[ "${r[3]}" -gt 20 ] && [ "${r[3]}" -lt "${r[2]}" ]
}

@test "what the viewers show: exact thread ids, names that differ early, no ~ file, an empty range" {
	profiler_cli
	# thread ids past 2^53 are strings (JSON numbers would be rounded), the rest numbers
	json "$CASES/edge_ids_timestamps.tach" >"$TMP/e.json"
	run jq -c '[.threads[] | [.name, .tid]]' "$TMP/e.json"
	[ "$output" = '[["Thread 1 (tid 18446744073709551615, interpreter 4294967295)","18446744073709551615"],["GeckoMain",0]]' ]
	checked "$TMP/e.json" -- pcli_load "$TMP/e.json"
	# frames of CPython's "~" file (line 0) show no file
	json "$CASES/synthetic_frames.tach" >"$TMP/g.json"
	jq -e '.threads[0].stringTable | index("<GC>") != null' "$TMP/g.json"
	! jq -e '.threads[0].stringTable[] | select(startswith("<GC> ("))' "$TMP/g.json" || false
	# an input without samples still has a time range, so the profiler can show it
	json "$CASES/empty.tach" >"$TMP/n.json"
	[ "$(jq -c '[.meta.profilingStartTime, .meta.profilingEndTime]' "$TMP/n.json")" = "[0,1]" ]
	run python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/n.json" --info
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Full: 1ms"* ]]
}

@test "gzip on worker threads: the same bytes for any number, its write error, nothing on failure" {
	gzip_thread_check tach2gecko json.gz "$TMP" "$CASES/many_frames.tach"
}

@test "gzip of many chunks, made on workers: the Firefox Profiler's importer reads the samples" {
	profiler_cli
	gzip_big_profile "$TMP/big.tach"
	TACHFMT_THREADS=2 tach2gecko -q "$TMP/big.tach" -o "$TMP/p.json.gz"
	[ "$(gzip -dc "$TMP/p.json.gz" | wc -c)" -gt $((4 * 131072)) ]
	tach-decode -q --format samples "$TMP/big.tach" >"$TMP/p.txt"
	calltree_ok "$TMP/p.json.gz" "$TMP/p.txt"
}

@test "high-cardinality input (past the lookahead threshold): every thread's samples have the stacks the lines give, as many times as they count" {
	python3 "$TESTDATA/wide_folded.py" "$TMP/wide.folded" "$TMP/want"
	tach2gecko --no-gzip "$TMP/wide.folded" -o "$TMP/wide.json"
	python3 - "$TMP/wide.json" "$TMP/wide.folded" <<'PY'
import json, sys
from collections import Counter
g = json.load(open(sys.argv[1]))
got = Counter()
for t in g["threads"]:
    strings = t["stringTable"]
    func = [strings[r[0]].split(" (")[0] for r in t["frameTable"]["data"]]
    stacks = t["stackTable"]["data"]  # [prefix, frame]
    at = t["samples"]["schema"]["stack"]
    for row in t["samples"]["data"]:
        s, names = row[at], []
        while s is not None:
            names.append(func[stacks[s][1]])
            s = stacks[s][0]
        got[(str(t["tid"]), tuple(reversed(names)))] += 1
want = Counter()
for line in open(sys.argv[2]):
    key, n = line.rsplit(" ", 1)
    parts = key.split(";")
    want[(parts[0][4:], tuple(p.split(":")[1] for p in parts[1:]))] += int(n)
sys.exit(0 if got == want else f"{len(got)} stacks, {sum(got.values())} samples; want {len(want)}, {sum(want.values())}")
PY
}

@test "gperftools input through TACH: a module+offset frame's column (its mapping's file offset) is no column" {
	local dir=$FIXTURES/gperf/hotloop
	gperf2tach -q --no-symbolize "$dir/hotloop.prof" -o "$TMP/h.tach"
	# the TACH frames carry the mappings' file offsets as columns, with no line
	tach-decode -F samples "$TMP/h.tach" | grep -q 'hotloop+0x129f:-:-:4096:4096:-'
	tach2gecko "$TMP/h.tach" | gzip -dc >"$TMP/h.json"
	run jq -c '[.threads[].frameTable.data[] | .[5]] | unique' "$TMP/h.json"
	[ "$status" -eq 0 ]
	[ "$output" = "[null]" ]
}

@test "samples at their own times: a record of N samples with its own time is N samples that time / N apart" {
	profiler_cli
	# 1 ms interval; a record of 3 samples standing for 6 ms, one of 2.5 ms, then one
	# interval each
	printf '@interval_us 1000\n%s\n%s\n%s\n' \
		$'7 0 1000 2 6000000 3\tt.py:f:1;t.py:main:9' \
		$'7 0 7000 2 2500000\tt.py:g:2;t.py:main:9' \
		$'7 0 9500 2\tt.py:main:9' >"$TMP/t.samples"
	tach2gecko --no-gzip --from samples "$TMP/t.samples" -o "$TMP/t.json"
	# the times the importer reads: 1, 3, 5, 7, 9.5 ms
	[ "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%g" % r[1] for r in d["threads"][0]["samples"]["data"]))' "$TMP/t.json")" = "1 3 5 7 9.5" ]
	# and threadCPUDelta each sample's own time, at most the time since the last
	[ "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(r[3]) for r in d["threads"][0]["samples"]["data"]))' "$TMP/t.json")" = "1000 2000 2000 2000 1000" ]
	calltree_ok "$TMP/t.json" "$TMP/t.samples"
}

# traced_ok INPUT: tach2gecko of INPUT loads in the importer with its call trees, and each
# function's time as the profiler shows it (its traced running time: a Gecko profile has no
# sample weights, see gecko_calltree.py) is the time-to-next-sample rule's on the samples
# tach-decode reads, the last sample its own time, to the us.
traced_ok() {
	local name=${1##*/}
	tach-decode -q -F samples "$1" >"$TMP/$name.samples"
	tach2gecko -q --no-gzip "$1" -o "$TMP/$name.json"
	checked "$TMP/$name.json" "$TMP/$name.samples" -- python3 \
		"$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/$name.json" \
		"$TMP/$name.samples" --traced
}

@test "V8 profiles: each function's time in the profiler is its samples' time to the next, the last one's up to the profile's end" {
	profiler_cli
	local f
	for f in "$TESTDATA"/v8/*.cpuprofile; do
		traced_ok "$f" || { echo "$f"; false; }
	done
	# a profile recorded now, at node's finest interval: samples far from any grid
	local node=${PCLI%% *}
	mkdir "$TMP/rec"
	cp "$TESTDATA/v8/hot.js" "$TMP/rec/"
	(cd "$TMP/rec" && "$node" --cpu-prof --cpu-prof-dir "$TMP/rec" --cpu-prof-name hot.cpuprofile \
		--cpu-prof-interval 250 hot.js)
	traced_ok "$TMP/rec/hot.cpuprofile"
	# the last sample's own time (here 890 us, not the 352 us interval) ends at a
	# stackless sample, which the importer gives no function
	run jq -c '.threads[0].samples.data[-2:] | map(.[0:2])' "$TMP/node_hot.cpuprofile.json"
	[ "$output" = '[[0,554.944],[null,555.834]]' ]
}

@test "a perf capture: each function's time in the profiler is its samples' time to the next" {
	profiler_cli
	NATIVE_MAPPINGS=1 traced_ok "$FIXTURES/perf/real/sort-fp.perf"
}

# processed_ok INPUT: tach2gecko --processed of INPUT loads in the importer, each thread's
# call tree weighs each function by its samples' own times (gecko_calltree.py --processed),
# and names every function as the Gecko output of the same input does.
processed_ok() {
	local name=${1##*/}
	tach-decode -q -F samples "$1" >"$TMP/$name.samples"
	tach2gecko -q --no-gzip --processed "$1" -o "$TMP/$name.p.json"
	tach2gecko -q --no-gzip "$1" -o "$TMP/$name.g.json"
	checked "$TMP/$name.p.json" "$TMP/$name.samples" -- python3 \
		"$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/$name.p.json" \
		"$TMP/$name.samples" --processed
	python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/$name.p.json" \
		--same-names "$TMP/$name.g.json"
}

@test "--processed: the profiler's call tree shows each function's time, the samples' own (issue 51)" {
	profiler_cli
	# a record of 3 samples standing for 6 ms, one of 2.5 ms, then one interval
	printf '@interval_us 1000\n%s\n%s\n%s\n' \
		$'7 0 1000 2 6000000 3\tt.py:f:1;t.py:main:9' \
		$'7 0 7000 2 2500000\tt.py:g:2;t.py:main:9' \
		$'7 0 9500 2\tt.py:main:9' >"$TMP/t.samples"
	tach2gecko --no-gzip --processed --from samples "$TMP/t.samples" -o "$TMP/t.json"
	run jq -c '[.meta.preprocessedProfileVersion, .threads[0].samples.weightType,
		.threads[0].samples.weight, .threads[0].samples.time]' "$TMP/t.json"
	[ "$output" = '[57,"tracing-ms",[2,2,2,2.5,1],[1,3,5,7,9.5]]' ]
	run python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/t.json" \
		"$TMP/t.samples" --processed
	[ "$status" -eq 0 ]
	# the check fails on a weight that is not the sample's time
	sed 's/"weight":\[2,/"weight":[3,/' "$TMP/t.json" >"$TMP/bad.json"
	run python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/bad.json" \
		"$TMP/t.samples" --processed
	[ "$status" -eq 1 ]
	[[ "$output" == *"t.py!main;t.py!f: profiler total 7000 self 7000, input total 6000 self 6000"* ]]
	local f
	for f in "$TESTDATA"/v8/*.cpuprofile "$TESTDATA/chrome/worker_trimmed.json" \
		"$FIXTURES/tach/cases/deep_stack_300.tach" "$FIXTURES/jfr/ap-cpu.jfr"; do
		processed_ok "$f" || { echo "$f"; false; }
	done
	# and the Gecko output's call tree of the JFR recording (C++ thunks named as the
	# importer names them), counts
	calltree_ok "$TMP/ap-cpu.jfr.g.json" "$TMP/ap-cpu.jfr.samples"
	NATIVE_MAPPINGS=1 processed_ok "$FIXTURES/perf/real/sort-fp.perf"
	# a profile recorded now, at node's finest interval: samples far from any grid
	local node=${PCLI%% *}
	mkdir "$TMP/rec"
	cp "$TESTDATA/v8/hot.js" "$TMP/rec/"
	(cd "$TMP/rec" && "$node" --cpu-prof --cpu-prof-dir "$TMP/rec" --cpu-prof-name hot.cpuprofile \
		--cpu-prof-interval 250 hot.js)
	processed_ok "$TMP/rec/hot.cpuprofile"
}

@test "--processed: a JFR recording without times weighs samples one each, as its counts" {
	profiler_cli
	tach2gecko -q --no-gzip --processed "$FIXTURES/jfr/ap-wall.jfr" -o "$TMP/w.json"
	run jq -r '[.threads[].samples.weightType] | unique | join(",")' "$TMP/w.json"
	[ "$output" = samples ]
	tach-decode -q -F samples "$FIXTURES/jfr/ap-wall.jfr" >"$TMP/w.samples"
	checked "$TMP/w.json" "$TMP/w.samples" -- python3 \
		"$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/w.json" "$TMP/w.samples" \
		--processed
}

@test "--processed: native and web names as in the Gecko output (gperftools, a Chrome trace)" {
	profiler_cli
	local f
	for f in "$FIXTURES/gperf/hotloop/hotloop.prof" "$TESTDATA/chrome/worker_trimmed.json"; do
		tach2gecko -q --no-gzip --processed "$f" -o "$TMP/p.json"
		tach2gecko -q --no-gzip "$f" -o "$TMP/g.json"
		python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/p.json" \
			--same-names "$TMP/g.json" || { echo "$f"; false; }
	done
	if [ -f "$SOURCE_ROOT/../shared/peers/time/ffp-test.chrome.json" ]; then
		f=$SOURCE_ROOT/../shared/peers/time/ffp-test.chrome.json
		tach2gecko -q --no-gzip --processed "$f" -o "$TMP/p.json"
		tach2gecko -q --no-gzip "$f" -o "$TMP/g.json"
		python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$TMP/p.json" \
			--same-names "$TMP/g.json"
		# a script on a web host is its origin's, as the importer makes it
		run jq -c '.shared.stringArray | index("http://gregtatum.com") != null' "$TMP/p.json"
		[ "$output" = true ]
	fi
}
