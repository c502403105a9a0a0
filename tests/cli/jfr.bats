#!/usr/bin/env bats
# Java Flight Recorder recordings read by every program without naming the format: the
# fixtures (async-profiler's and the JDK's recordings, tests/fixtures/jfr) and recordings
# made now by the JDK (tests/data/jfr/Hot.java under -XX:StartFlightRecording) give, event
# for event, the samples the JDK's own parser reads (`jfr print --json`, compared by
# tests/cli/jfr_compare.py: thread, µs timestamp, state and whole stack); --labels
# async-profiler prints what jfrconv printed for the fixtures; several chunks, a recording
# cut short and damaged files are read or refused as jfr.5 says, with the offset.

load v8_writers
load checked

setup_file() {
	# One recording for the file's tests: CPU, native, allocation and lock events.
	local d=$BATS_FILE_TMPDIR/rec
	mkdir -p "$d"
	command -v java >/dev/null && command -v jfr >/dev/null || {
		echo "no JDK to record with (Debian: apt-get install openjdk-17-jdk-headless)" >&2
		return 1
	}
	(cd "$d" && javac -d . "$TESTDATA/jfr/Hot.java" &&
		java -XX:StartFlightRecording=filename=hot.jfr,settings=profile,jdk.JavaMonitorEnter#threshold=0ms,jdk.ThreadPark#threshold=0ms,jdk.ExecutionSample#period=1ms,jdk.NativeMethodSample#period=1ms \
			Hot 800 >/dev/null 2>&1)
	[ -s "$d/hot.jfr" ]
}

setup() {
	T=$BATS_TEST_TMPDIR
	F=$FIXTURES/jfr
	REC=$BATS_FILE_TMPDIR/rec/hot.jfr
	CMP="python3 $SOURCE_ROOT/tests/cli/jfr_compare.py"
	EXPECT="python3 $SOURCE_ROOT/tests/cli/v8_expect.py"
}

# print FILE OUT [EVENTS]: the JDK's reading of FILE, every frame of every stack.
print() {
	jfr print --json --stack-depth 4096 ${3:+--events "$3"} "$1" >"$2"
}

# same EVENTS FILE [tach-decode options]: our samples of FILE equal the JDK's events.
same() {
	local ev=$1 f=$2
	shift 2
	tach-decode -q -F samples "$@" "$f" >"$T/ours"
	print "$f" "$T/theirs.json" "$ev"
	checked "$T/ours" "$T/theirs.json" -- $CMP "$T/ours" "$T/theirs.json" ${ev//,/ }
}

@test "the fixtures' samples are the JDK's: its readings in the fixtures, and jfr print now (whole stacks)" {
	for f in ap-cpu ap-wall jdk-profile; do
		tach-decode -q -F samples "$F/$f.jfr" >"$T/$f"
		# jfr print's default depth: the five leaf frames
		run $CMP --depth 5 "$T/$f" "$F/$f.print.json.zst"
		[ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
		[[ $output == *"samples equal the JDK's reading"* ]]
	done
	same jdk.ExecutionSample,jdk.NativeMethodSample,profiler.WallClockSample "$F/ap-cpu.jfr"
	same profiler.WallClockSample "$F/ap-wall.jfr" --event wall
	same jdk.ExecutionSample,jdk.NativeMethodSample "$F/jdk-profile.jfr"
	same jdk.ObjectAllocationInNewTLAB "$F/ap-alloc.jfr" --event alloc
	same jdk.ObjectAllocationSample "$F/jdk-profile.jfr" --event jdk.ObjectAllocationSample
	# the sample counts as the JDK's summary has them
	[ "$(tach-decode -q -F info "$F/ap-cpu.jfr" | sed -n 's/^samples: //p')" -eq 1558 ]
	[ "$(tach-decode -q -F info --event wall "$F/ap-wall.jfr" | sed -n 's/^samples: //p')" -eq 596 ]
	[ "$(tach-decode -q -F info --event alloc "$F/ap-alloc.jfr" | sed -n 's/^samples: //p')" -eq 396 ]
}

@test "--labels async-profiler prints what jfrconv -o collapsed printed, with --threads, --lines, --total" {
	# jfrconv prints a tree walk's order; tach-decode sorts: compared sorted
	col() {
		local want=$1
		shift
		tach-decode -q --labels async-profiler "$@" | LC_ALL=C sort >"$T/got"
		LC_ALL=C sort "$F/$want" >"$T/want"
		diff -u "$T/want" "$T/got" || { echo "differs from $want"; return 1; }
	}
	col ap-cpu.collapsed "$F/ap-cpu.jfr"
	col ap-cpu.threads.collapsed --threads "$F/ap-cpu.jfr"
	col ap-cpu.lines.collapsed --lines "$F/ap-cpu.jfr"
	col ap-wall.collapsed --event wall "$F/ap-wall.jfr"
	col ap-alloc.collapsed --event alloc "$F/ap-alloc.jfr"
	col ap-alloc.total.collapsed --event alloc --total "$F/ap-alloc.jfr"
	col jdk-profile.collapsed "$F/jdk-profile.jfr"
	# --dot and --simple change the class names only, as jfrconv's
	tach-decode -q --labels async-profiler --dot "$F/jdk-profile.jfr" >"$T/dot"
	grep -q '^java\.lang\.Thread\.run_\[0\];java\.util\.concurrent\.ThreadPoolExecutor\$Worker\.run_\[0\];' "$T/dot"
	tach-decode -q --labels async-profiler --simple "$F/jdk-profile.jfr" >"$T/simple"
	grep -q '^Thread\.run_\[0\];ThreadPoolExecutor\$Worker\.run_\[0\];' "$T/simple"
	[ "$(wc -l <"$T/simple")" -eq "$(wc -l <"$T/dot")" ]
}

@test "a recording made now by the JDK: CPU, native, allocation and lock events are the JDK's, values too" {
	same jdk.ExecutionSample,jdk.NativeMethodSample "$REC"
	same jdk.ObjectAllocationSample "$REC" --event alloc
	same jdk.JavaMonitorEnter,jdk.ThreadPark "$REC" --event lock
	# (a run may have no native samples: then asking for them is an error that says so)
	if jfr summary "$REC" | awk '$1 == "jdk.NativeMethodSample" && $2 > 0 {f = 1} END {exit !f}'; then
		same jdk.NativeMethodSample "$REC" --event native
	else
		run tach-decode -q --event native "$REC"
		[ "$status" -eq 1 ]
		[[ $output == *": no native events in the recording (--event chooses others); it has: "* ]]
	fi
	# the values: bytes and delays summed per thread and stack as the JDK's events hold them
	tach-decode -q --event alloc --total "$REC" >"$T/alloc.col"
	print "$REC" "$T/all.json"
	checked "$T/alloc.col" "$T/all.json" -- \
		$CMP --folded "$T/alloc.col" "$T/all.json" jdk.ObjectAllocationSample
	tach-decode -q --event lock --total "$REC" >"$T/lock.col"
	checked "$T/lock.col" "$T/all.json" -- \
		$CMP --folded "$T/lock.col" "$T/all.json" jdk.JavaMonitorEnter jdk.ThreadPark
	# the workers are on their threads' stacks, by name
	grep -q '^tid:[0-9]*;\[comm\]:worker-0:[0-9]*;.*Hot\.lambda\$main\$0' "$T/lock.col"
	# a lock's class is the leaf; a park on no object has none
	grep -q ';\[lock class\]:java\.lang\.Object:0 [0-9]*$' "$T/lock.col"
}

# pid_of FILE: the pid of the recording's jdk.JVMInformation event, as jfr print shows it.
pid_of() {
	jfr print --events jdk.JVMInformation "$1" | sed -n 's/^ *pid = \([0-9]*\)$/\1/p' | head -n 1
}

# pid_check PID SAMPLES OTLP-JSON GECKO: every sample's root names its thread with PID
# ("" for none); OTLP's samples carry it as process.pid, the Gecko threads as their pid.
# A sample of a thread the recording does not hold (a thread started as the JVM shuts
# down, which the JDK's reader gives as null; the comparisons with jfr print check those)
# has no root, so no process: counted, and it alone may lack the pid.
pid_check() {
	python3 - "$@" <<'PY'
import gzip, json, sys
pid, samples, otlp, gecko = sys.argv[1:]
n = unnamed = 0
for line in open(samples, encoding="utf-8"):
    if line.startswith("@"):
        continue
    root = line.rstrip("\n").split("\t")[1].split(";")[-1].split(":")
    if root[0] != "[comm]":
        unnamed += 1
        continue
    assert root[2] == (pid or "-"), (root, pid)
    n += 1
assert n > unnamed, (n, unnamed)
d = json.load(open(otlp))
st, at = d["dictionary"]["stringTable"], d["dictionary"]["attributeTable"]
pids = set()
for p in d["resourceProfiles"][0]["scopeProfiles"][0]["profiles"]:
    for s in p["samples"]:
        got = {st[at[i]["keyStrindex"]]: at[i]["value"] for i in s.get("attributeIndices", [])}
        pids.add(got.get("process.pid", {}).get("intValue"))
assert pids == {pid or None} | ({None} if unnamed else set()), (pids, pid, unnamed)
g = json.load(gzip.open(gecko))
tp = {str(t["pid"]) for t in g["threads"]}
if pid:
    assert tp == {pid} | ({"0"} if unnamed else set()), (tp, pid, unnamed)
else:
    assert "0" in tp, tp
print(n, "samples of process", pid or "(none)", "and", unnamed, "of no thread")
PY
}

@test "issue 56: the process is the recording's: jdk.JVMInformation's pid on every thread, OTLP's process.pid, the Gecko threads' pid" {
	local f pid
	for f in "$F/ap-cpu.jfr" "$REC"; do
		pid=$(pid_of "$f")
		[ -n "$pid" ]
		tach-decode -q -F samples "$f" >"$T/s"
		tach2otlp -q --json "$f" -o "$T/o.json"
		tach2gecko -q "$f" -o "$T/g.json"
		pid_check "$pid" "$T/s" "$T/o.json" "$T/g.json"
	done
	# the JDK's fixture was recorded without the event: no pid, none made up
	[ -z "$(pid_of "$F/jdk-profile.jfr")" ]
	tach-decode -q -F samples "$F/jdk-profile.jfr" >"$T/s"
	tach2otlp -q --json "$F/jdk-profile.jfr" -o "$T/o.json"
	tach2gecko -q "$F/jdk-profile.jfr" -o "$T/g.json"
	pid_check "" "$T/s" "$T/o.json" "$T/g.json"
	# two recordings as one file: each chunk's threads are its own process's
	cat "$F/ap-cpu.jfr" "$F/ap-wall.jfr" >"$T/two.jfr"
	[ "$(tach-decode -q -F samples --event samples "$T/two.jfr" | grep -v '^@' |
		awk -F'\t' '{ n = split($2, f, ";"); split(f[n], r, ":"); print r[3] }' | sort -u | tr '\n' ' ')" = \
		"$(printf '%s\n' "$(pid_of "$F/ap-cpu.jfr")" "$(pid_of "$F/ap-wall.jfr")" | sort -u | tr '\n' ' ')" ]
}

@test "several chunks (cat a.jfr b.jfr): each read by its own metadata and pools" {
	# the JDK reads a chunk after one of the same recording (after another recording's
	# it keeps the first's metadata: "Unknown string encoding"), so it checks those
	cat "$REC" "$REC" >"$T/two.jfr"
	same jdk.ExecutionSample,jdk.NativeMethodSample "$T/two.jfr"
	# three recordings one after the other: each chunk's samples as when read alone
	cat "$REC" "$F/jdk-profile.jfr" "$F/ap-cpu.jfr" >"$T/three.jfr"
	tach-decode -q -F samples "$T/three.jfr" | grep -v '^@' >"$T/three.samples"
	for f in "$REC" "$F/jdk-profile.jfr" "$F/ap-cpu.jfr"; do
		tach-decode -q -F samples "$f" | grep -v '^@'
	done >"$T/each.samples"
	diff -u "$T/each.samples" "$T/three.samples"
	a=$(tach-decode -q -F info "$REC" | sed -n 's/^samples: //p')
	b=$(tach-decode -q -F info "$F/jdk-profile.jfr" | sed -n 's/^samples: //p')
	c=$(tach-decode -q -F info "$F/ap-cpu.jfr" | sed -n 's/^samples: //p')
	[ "$(tach-decode -q -F info "$T/three.jfr" | sed -n 's/^samples: //p')" -eq $((a + b + c)) ]
	# read from a pipe too
	[ "$(cat "$T/three.jfr" | tach-decode -q -F samples | md5sum)" = "$(tach-decode -q -F samples "$T/three.jfr" | md5sum)" ]
}

@test "a recording cut short: the whole chunks before it are read, the loss warned with its offset" {
	local size n
	size=$(stat -c %s "$REC")
	cat "$REC" "$F/jdk-profile.jfr" | head -c $((size + 1000)) >"$T/cut.jfr"
	run tach-decode -F samples -o "$T/cut.samples" "$T/cut.jfr"
	[ "$status" -eq 0 ]
	[ "$output" = "tach-decode: $T/cut.jfr: offset $size: warning: the chunk here is cut short: its 1000 bytes are not read (the 1 chunks before it are)" ]
	tach-decode -q -F samples "$REC" >"$T/whole.samples"
	cmp "$T/cut.samples" "$T/whole.samples"
	# --strict makes it an error, and no output is left
	run tach-decode --strict -F samples -o "$T/strict.samples" "$T/cut.jfr"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/cut.jfr: offset $size: the chunk here is cut short: its 1000 bytes are not read (the 1 chunks before it are)" ]
	[ ! -e "$T/strict.samples" ]
	# a first chunk cut short is all there was: an error
	head -c 5000 "$REC" >"$T/first.jfr"
	run tach2pprof -o "$T/out.pb.gz" "$T/first.jfr"
	[ "$status" -eq 1 ]
	[ "$output" = "tach2pprof: $T/first.jfr: offset 0: the recording's first chunk is cut short: nothing to read" ]
	[ ! -e "$T/out.pb.gz" ]
	# a chunk its recorder did not finish (no metadata offset yet)
	{ cat "$F/ap-alloc.jfr"; head -c 24 "$F/ap-alloc.jfr"; printf '\0\0\0\0\0\0\0\0'; tail -c +33 "$F/ap-alloc.jfr"; } >"$T/open.jfr"
	n=$(stat -c %s "$F/ap-alloc.jfr")
	run tach-decode --event alloc -F info "$T/open.jfr"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "tach-decode: $T/open.jfr: offset $n: warning: the chunk here is unfinished (its recorder did not close it): its $n bytes are not read (the 1 chunks before it are)" ]]
}

# chunks FILE: "offset size" of each chunk, as the headers say
chunks() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
o = 0
while o + 68 <= len(d):
    n = struct.unpack(">q", d[o + 8:o + 16])[0]
    print(o, n)
    o += n
PY
}

@test "a recording from a pipe or compressed: read a chunk at a time, the same samples, warnings and offsets" {
	local big at total
	cat "$REC" "$F/jdk-profile.jfr" "$F/ap-cpu.jfr" >"$T/three.jfr"
	tach-decode -q -F samples "$T/three.jfr" >"$T/file.samples"
	big=$(chunks "$T/three.jfr" | sort -k2,2n | tail -n 1 | cut -d' ' -f2)
	at=$(chunks "$T/three.jfr" | awk -v n="$big" '$2 == n { print $1; exit }')
	total=$(stat -c %s "$T/three.jfr")
	[ "$big" -lt "$total" ]
	# a chunk held at a time, not the recording: a limit of the largest chunk passes
	cat "$T/three.jfr" | tach-decode -q -F samples --max-input "$big" | cmp - "$T/file.samples"
	# (a file given as stdin is mapped, as a named one is)
	tach-decode -q -F samples --max-input 100 <"$T/three.jfr" | cmp - "$T/file.samples"
	gzip -c "$T/three.jfr" | tach-decode -q -F samples | cmp - "$T/file.samples"
	zstd -q -c "$T/three.jfr" >"$T/three.jfr.zst"
	tach-decode -q -F samples "$T/three.jfr.zst" | cmp - "$T/file.samples"
	# the same recording twice: the second chunk's pools found equal to the copy kept
	cat "$REC" "$REC" | tach-decode -q -F samples | grep -v '^@' >"$T/twice"
	tach-decode -q -F samples "$REC" | grep -v '^@' | cat - <(tach-decode -q -F samples "$REC" | grep -v '^@') | cmp - "$T/twice"
	# a chunk larger than the limit: an error at its offset, no output left
	run tach-decode -F samples --max-input $((big - 1)) -o "$T/out" < <(cat "$T/three.jfr")
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: <stdin>: offset $at: a chunk of $big bytes, more than the limit of $((big - 1)) bytes a stream's chunk is held in (see --max-input)" ]
	[ ! -e "$T/out" ]
	# cut short: the chunks before it read, the loss warned at the same offset
	local size
	size=$(stat -c %s "$REC")
	cat "$REC" "$F/jdk-profile.jfr" | head -c $((size + 1000)) >"$T/cut.jfr"
	run --separate-stderr tach-decode -F samples < <(cat "$T/cut.jfr")
	[ "$status" -eq 0 ]
	[ "$stderr" = "tach-decode: <stdin>: offset $size: warning: the chunk here is cut short: its 1000 bytes are not read (the 1 chunks before it are)" ]
	[ "$output" = "$(tach-decode -q -F samples "$REC")" ]
	# a chunk of size 0 (unfinished) before another: what is lost counted to the end
	{ cat "$F/ap-alloc.jfr"; head -c 8 "$F/ap-alloc.jfr"; printf '\0\0\0\0\0\0\0\0'
	  tail -c +17 "$F/ap-alloc.jfr"; cat "$F/ap-cpu.jfr"; } >"$T/open.jfr"
	run --separate-stderr tach-decode --event alloc -F info "$T/open.jfr"
	local mapped=${stderr//$T\/open.jfr/FILE}
	[[ $mapped == *"is unfinished (its recorder did not close it): its $(($(stat -c %s "$T/open.jfr") - $(stat -c %s "$F/ap-alloc.jfr"))) bytes are not read"* ]]
	run --separate-stderr tach-decode --event alloc -F info < <(cat "$T/open.jfr")
	[ "${stderr//<stdin>/FILE}" = "$mapped" ]
}

@test "the events chosen by --event; a bad name is a usage error" {
	run tach-decode --event nosuch "$F/ap-cpu.jfr"
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "tach-decode: $F/ap-cpu.jfr: event nosuch: not one of cpu, native, wall, cputime, alloc, lock, samples or a JFR event name (tachfmt(5) lists them)" ]]
	run tach-decode --event cpu,alloc "$F/ap-cpu.jfr"
	[ "$status" -eq 2 ]
	[[ $output == *"choose events of one kind"* ]]
	# the default is jfrconv's: execution samples of every kind (here 69 CPU and 1 native)
	[ "$(tach-decode -q -F info "$F/jdk-profile.jfr" | sed -n 's/^samples: //p')" -eq 70 ]
	[ "$(tach-decode -q -F info --event cpu "$F/jdk-profile.jfr" | sed -n 's/^samples: //p')" -eq 69 ]
	[ "$(tach-decode -q -F info --event jdk.NativeMethodSample "$F/jdk-profile.jfr" | sed -n 's/^samples: //p')" -eq 1 ]
	# wall-clock samples stand for their samples and their time span
	run tach-decode -q -F info --event wall "$F/ap-wall.jfr"
	[[ $output == *"samples: 596"* ]]
	[[ $output == *"weight_total: 3467"* ]]
	# -F info lists the events the recording has, each with its count, as jfr summary
	# counts them (its own jdk.Metadata and jdk.CheckPoint aside), over every chunk
	cat "$F/jdk-profile.jfr" "$F/jdk-profile.jfr" >"$T/two.jfr"
	for f in "$F/jdk-profile.jfr" "$F/ap-cpu.jfr" "$T/two.jfr"; do
		jfr summary "$f" | awk 'NR > 7 && $2 > 0 && $1 != "jdk.Metadata" && $1 != "jdk.CheckPoint" {print $1, $2}' |
			LC_ALL=C sort >"$T/summary"
		tach-decode -q -F info "$f" | sed -n 's/^record_kind: //p' | LC_ALL=C sort >"$T/kinds"
		diff -u "$T/summary" "$T/kinds"
		[ "$(wc -l <"$T/kinds")" -gt 5 ]
	done
	# most first
	[ "$(tach-decode -q -F info "$F/ap-cpu.jfr" | sed -n 's/^record_kind: //p' | head -1)" = "jdk.ExecutionSample 1558" ]
	# events the recording does not have: an error that names those it has
	run tach-decode -o "$T/none" --event lock "$F/ap-cpu.jfr"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $F/ap-cpu.jfr: no lock events in the recording (--event chooses others); it has: jdk.ExecutionSample 1558, jdk.ActiveSetting 25, jdk.InitialSystemProperty 16, jdk.NativeLibrary 15, jdk.CPULoad 2, jdk.GCHeapSummary 2, jdk.ActiveRecording 1, jdk.CPUInformation 1, jdk.JVMInformation 1, jdk.OSInformation 1" ]
	[ ! -e "$T/none" ]
	run tach2pprof -o "$T/none.pb.gz" "$F/ap-alloc.jfr"
	[ "$status" -eq 1 ]
	[[ $output == "tach2pprof: $F/ap-alloc.jfr: no jdk.ExecutionSample, jdk.NativeMethodSample, profiler.WallClockSample or jdk.CPUTimeSample events in the recording (--event chooses others); it has: jdk.ObjectAllocationInNewTLAB 396, "* ]]
}

@test "every writer takes a recording: pprof, Gecko, speedscope, pstats, callgrind, flame graph, TACH" {
	writer_tools
	through_writers "$F/jdk-profile.jfr"
	# wall-clock events of several samples each
	through_writers "$F/ap-wall.jfr"
	# go tool pprof -top: the functions and counts of the folded lines
	tach2pprof -q "$F/ap-cpu.jfr" -o "$T/cpu.pb.gz"
	HOME=$T PPROF_TMPDIR=$T go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$T/cpu.pb.gz" 2>/dev/null >"$T/top"
	grep -q 'java/util/HashMap.merge' "$T/top"
	# the flat counts are each leaf function's samples in the folded lines
	tach-decode -q --no-thread-frames "$F/ap-cpu.jfr" |
		awk '{c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); leaf = f[n]
		      sub(/^[^:]*:/, "", leaf); sub(/:[0-9]+$/, "", leaf); s[leaf] += c}
		     END {for (k in s) print k "\t" s[k]}' | LC_ALL=C sort >"$T/flat.want"
	# (pprof marks a function inlined where it was sampled "(inline)", "(partial-inline)")
	awk '/^ +flat +flat%/ {on = 1; next} on && $1 + 0 > 0 {c = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); sub(/ \((partial-)?inline\)$/, ""); s[$0] += c}
	     END {for (k in s) print k "\t" s[k]}' "$T/top" | LC_ALL=C sort >"$T/flat.got"
	diff -u "$T/flat.want" "$T/flat.got"
	grep -q 'of 1558 total' "$T/top"
	# an inlined frame is a Line of its caller's Location, not a Location of its own
	HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/cpu.pb.gz" 2>/dev/null >"$T/raw"
	python3 -c 'import re, sys
locs, cur = [], None
on = False
for l in open(sys.argv[1]):
    if l.startswith("Locations"): on = True; continue
    if l.startswith("Mappings"): break
    m = re.match(r"^\s*\d+: 0x\S+(?: M=\d+)? (.*) s=0", l)
    if on and m: cur = [m.group(1)]; locs.append(cur)
    elif on and l.strip(): cur.append(l.strip())
inl = [x for x in locs if "[Inlined]" in x[0]]
bad = [x for x in inl if len(x) < 2 or any("[Inlined]" not in f for f in x[:-1]) or "[Inlined]" in x[-1]]
sys.exit("inlined locations: %d, wrong: %s" % (len(inl), bad[:3]) if not inl or bad else 0)' "$T/raw"
	# Gecko: every thread by its name (and its id), the 12 that jfrconv --threads shows
	tach2gecko -q --no-gzip "$F/ap-cpu.jfr" -o "$T/g.json"
	python3 -c 'import json, sys
names = sorted(t["name"] for t in json.load(open(sys.argv[1]))["threads"])
want = sorted(l.split(";")[0][1:-1].replace("tid=", "(tid ") + ")" if not l.startswith("[tid=")
              else l.split(";")[0] + " (tid " + l.split(";")[0][5:-1] + ")"
              for l in open(sys.argv[2]))
sys.exit(0 if names == sorted(set(want)) else "names: %s, want %s" % (names, sorted(set(want))))' \
		"$T/g.json" "$F/ap-cpu.threads.collapsed"
}

@test "damaged recordings: one line with the offset, exit 1" {
	bad() { # mapped, and from a pipe (read a chunk at a time): the same line
		run tach-decode -o "$T/out" "$T/bad.jfr"
		[ "$status" -eq 1 ] || { echo "status $status: $output"; return 1; }
		[ "$output" = "tach-decode: $T/bad.jfr: $1" ] || { echo "got: $output"; return 1; }
		[ ! -e "$T/out" ]
		run tach-decode -o "$T/out" < <(cat "$T/bad.jfr")
		[ "$status" -eq 1 ] || { echo "pipe: status $status: $output"; return 1; }
		[ "$output" = "tach-decode: <stdin>: $1" ] || { echo "pipe: got: $output"; return 1; }
		[ ! -e "$T/out" ]
	}
	# format 1.0 (JDK 8 and 9) refused by name
	{ printf 'FLR\0\0\1\0\0'; tail -c +9 "$F/ap-alloc.jfr"; } >"$T/bad.jfr"
	bad "offset 0: JFR format 1.0 is not read (only 2.0, JDK 11 and async-profiler, and 2.1, JDK 14 and later): JDK 8 and 9 write 1.x; convert it with a newer JDK's \`jfr\` tool first"
	# a second chunk that is no chunk
	n=$(stat -c %s "$F/ap-alloc.jfr")
	{ cat "$F/ap-alloc.jfr"; head -c 100 /dev/zero; } >"$T/bad.jfr"
	bad "offset $n: no chunk starts here (no \"FLR\\0\" magic)"
	# a chunk size past the file: cut short, and nothing before it
	{ head -c 8 "$F/ap-alloc.jfr"; printf '\0\0\0\0\1\0\0\0'; tail -c +17 "$F/ap-alloc.jfr"; } >"$T/bad.jfr"
	bad "offset 0: the recording's first chunk is cut short: nothing to read"
	# a metadata offset outside the chunk
	{ head -c 24 "$F/ap-alloc.jfr"; printf '\0\0\0\0\1\0\0\0'; tail -c +33 "$F/ap-alloc.jfr"; } >"$T/bad.jfr"
	bad "offset 0: the chunk's constant pool or metadata offset is outside the chunk"
	# an event whose size runs past its chunk (the first event after the header)
	{ head -c 68 "$F/ap-alloc.jfr"; printf '\xff\xff\xff\x7f'; tail -c +73 "$F/ap-alloc.jfr"; } >"$T/bad.jfr"
	bad "offset 68: event size 268435455 runs past the end of its chunk"
}

@test "fields in any order, every string encoding, unknown events, integers plain or compressed" {
	# (tests/cli/jfr_gen.py: a chunk of its own, read by the JDK too)
	python3 "$SOURCE_ROOT/tests/cli/jfr_gen.py" "$T/gen.jfr"
	same jdk.ExecutionSample "$T/gen.jfr"
	tach-decode -q -F samples "$T/gen.jfr" >"$T/gen.samples"
	# UTF-16 with a surrogate pair, Latin-1, a String pool reference, an empty name; the
	# bytecode index as the column where there is a line
	grep -q $'^4242 0 1700000000123458 2\t\\[JIT compiled\\]:pkg/Cls.run:42:42:3:3:-;\\[Interpreted\\]:pkg/Cls.main:7:7:0:0:-;\\[Interpreted\\]:pkg/Cls:-:-:-:-:-;\\[comm\\]:w\xc3\xb6rker-\xc3\xbc\xf0\x9f\x98\x80:-:-:-:-:-$' "$T/gen.samples"
	grep -q $'^4343 0 1700000000123459 0\t.*;\\[comm\\]::-:-:-:-:-$' "$T/gen.samples"
	# integers uncompressed (the flag clear; the JDK's parser reads only compressed ones):
	# the same samples
	python3 "$SOURCE_ROOT/tests/cli/jfr_gen.py" "$T/plain.jfr" plain
	[ "$(cmp -l "$T/gen.jfr" "$T/plain.jfr" | wc -l)" -gt 0 ]
	tach-decode -q -F samples "$T/plain.jfr" | cmp - "$T/gen.samples"
	# a sample of a thread the pool does not hold: the JDK's null thread, so no root frame
	# (its key for the thread id)
	python3 "$SOURCE_ROOT/tests/cli/jfr_gen.py" "$T/nt.jfr" nothread
	same jdk.ExecutionSample "$T/nt.jfr"
	grep -q $'^99 0 1700000000123460 2\t\\[JIT compiled\\]:pkg/Cls.run:42:42:3:3:-;\\[Interpreted\\]:pkg/Cls.main:7:7:0:0:-;\\[Interpreted\\]:pkg/Cls:-:-:-:-:-$' "$T/ours"
}

@test "jdk.CPUTimeSample (JDK 25's CPU-time sampler): each sample's CPU time, from its samplingPeriod" {
	# a recording laid out as JDK 25 declares the event, read by the JDK here too
	python3 "$SOURCE_ROOT/tests/cli/jfr_gen.py" "$T/ct.jfr" cputime
	same jdk.CPUTimeSample "$T/ct.jfr" --event cputime
	tach-decode -q -F samples --event cputime "$T/ct.jfr" >"$T/ct.samples"
	grep -q $'^4242 0 1700000000123460 4 10000000\t\\[JIT compiled\\]:pkg/Cls.run:42:42:3:3:-;' "$T/ct.samples"
	grep -q $'^4343 0 1700000000123461 4 20000000\t\\[comm\\]::-:-:-:-:-$' "$T/ct.samples"
	run tach-decode -q -F info --event cputime "$T/ct.jfr"
	[[ $output == *"value_type: cpu/nanoseconds"* ]]
	[[ $output == *"weight_total_us: 30000"* ]]
	# the default takes them with the execution samples
	[ "$(tach-decode -q -F info "$T/ct.jfr" | sed -n 's/^samples: //p')" -eq 4 ]
	# recorded by a JDK 25, where there is one (Debian bookworm has none: JDK25_HOME, or
	# /usr/lib/jvm/*-25*)
	local j=${JDK25_HOME:-}
	[ -n "$j" ] || for d in /usr/lib/jvm/*-25*; do [ -x "$d/bin/java" ] && j=$d; done
	if [ -z "$j" ]; then
		echo "# no JDK 25: jdk.CPUTimeSample checked on the generated recording only" >&3
		return 0
	fi
	(cd "$T" && "$j/bin/javac" -d . "$TESTDATA/jfr/Hot.java" &&
		"$j/bin/java" -XX:StartFlightRecording=filename=live.jfr,jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=1ms Hot 1500 >/dev/null 2>&1)
	tach-decode -q -F samples --event cputime "$T/live.jfr" >"$T/live.samples"
	"$j/bin/jfr" print --json --stack-depth 4096 --events jdk.CPUTimeSample "$T/live.jfr" >"$T/live.json"
	checked "$T/live.samples" "$T/live.json" -- $CMP "$T/live.samples" "$T/live.json" jdk.CPUTimeSample
	[ "$(grep -c $'\t' "$T/live.samples")" -gt 10 ]
}
