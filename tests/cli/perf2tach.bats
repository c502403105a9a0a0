#!/usr/bin/env bats
# The perf script reader (perf2tach, --from perf, detection) and the collapsed writer's
# --labels perf: every capture of tests/fixtures/perf under every stackcollapse-perf.pl
# option gives the script's own output (lines compared sorted); through TACH the same
# stacks come back counted in samples, as tests/cli/perf_fold.py counts them on its own;
# weights, events, errors.

setup() {
	T=$BATS_TEST_TMPDIR
	P=$FIXTURES/perf
	FOLD="python3 $SOURCE_ROOT/tests/cli/perf_fold.py"
}

# The script's options and ours: "SUFFIX|OPTIONS".
OPTS=("|" "-pid|--perf-root pid" "-tid|--perf-root tid" "-kernel|--annotate kernel"
	"-jit|--annotate jit" "-all|--annotate all" "-addrs|--addrs")

same_lines() { # want got
	LC_ALL=C sort "$1" >"$T/want.s"
	LC_ALL=C sort "$2" >"$T/got.s"
	[ -s "$T/want.s" ]
	diff -u "$T/want.s" "$T/got.s"
}

@test "--labels perf prints what stackcollapse-perf.pl prints: every input x option" {
	n=0
	for f in "$P"/inputs/*.txt; do
		b=$(basename "$f" .txt)
		for o in "${OPTS[@]}"; do
			suf=${o%%|*}
			# the script drops a last sample with no blank line after it (we count it, as
			# inferno does): it reads the capture up to its last blank line
			tac "$f" | sed -n '/^$/,$p' | tac >"$T/in.txt"
			# shellcheck disable=SC2086
			tach-decode -q --labels perf ${o#*|} "$T/in.txt" >"$T/got"
			same_lines "$P/expected/$b-collapsed$suf.txt" "$T/got" || { echo "$b $o"; false; }
			n=$((n + 1))
		done
	done
	[ "$n" -eq 49 ]
}

@test "--labels perf on the real captures (C with frame pointers, Python 3.12 -X perf)" {
	for b in sort-fp python-x-perf; do
		tach-decode -q --labels perf "$P/real/$b.perf" >"$T/got"
		same_lines "$P/real/$b-collapsed.txt" "$T/got"
		tach-decode -q --labels perf --perf-root tid "$P/real/$b.perf" >"$T/got"
		same_lines "$P/real/$b-collapsed-tid.txt" "$T/got"
	done
}

@test "through TACH: the same stacks, counted in samples, the comm root once" {
	for b in sort-fp python-x-perf; do
		# the only message: TACH's one interval cannot keep each sample's own period (issue 51.3)
		perf2tach "$P/real/$b.perf" -o "$T/p.tach" 2>"$T/err"
		[ "$(wc -l <"$T/err")" -eq 1 ]
		grep -q "^perf2tach: $P/real/$b.perf: warning: the tach format has one interval ([0-9]* us) and no time per sample: samples keep their timestamps" "$T/err"
		tach-decode --labels perf "$T/p.tach" >"$T/got"
		$FOLD "$P/real/$b.perf" >"$T/want"
		same_lines "$T/want" "$T/got"
		tach-decode --labels perf --perf-root tid "$T/p.tach" >"$T/got"
		$FOLD "$P/real/$b.perf" --tid >"$T/want"
		same_lines "$T/want" "$T/got"
	done
}

@test "Python -X perf frames are Python frames: file, function, no line" {
	perf2tach "$P/real/python-x-perf.perf" -o "$T/p.tach"
	tach-decode --format samples "$T/p.tach" >"$T/s"
	grep -q '/home/dev/prof/perf2/fib.py:fib:-:' "$T/s"
	grep -q '<frozen abc>:ABCMeta.__new__:-:' "$T/s"
	run grep -c 'py::' "$T/s"
	[ "$output" = 0 ]
	# the comm root names the process, its line the pid when the line has one
	grep -q ';\[comm\]:python3:-:' "$T/s"
	perf2tach "$P/inputs/perf-iperf-stacks-pidtid-01.txt" -o "$T/p.tach"
	tach-decode --format samples "$T/p.tach" | grep -q '^28744 .*;\[comm\]:iperf:27409:'
}

@test "cpu-clock periods are time: the interval, weights and timestamps" {
	perf2tach -q "$P/inputs/perf-dd-stacks-01.txt" -o "$T/p.tach"
	tach-decode --format info "$T/p.tach" | grep -qx 'sample_interval_us: 10101'
	tach-decode --format samples "$T/p.tach" | grep -v '^@' | cut -f1 >"$T/s"
	head -1 "$T/s" | grep -qx '29776 0 666709771979 4'
	# 11 samples, the last one without its blank line after it too (its last line has its LF)
	[ "$(wc -l <"$T/s")" -eq 11 ]
	# TACH has one interval and no time per sample: said once, nothing else (issue 51.3)
	run perf2tach "$P/inputs/perf-dd-stacks-01.txt" -o "$T/p.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "perf2tach: $P/inputs/perf-dd-stacks-01.txt: warning: the tach format has one interval (10101 us) and no time per sample: samples keep their timestamps, but each stands for one interval (such as one of 10101 us at 666709771979 us)" ]
	# pprof: cpu time = samples x interval
	tach-decode -q -F samples "$P/inputs/perf-dd-stacks-01.txt" | grep -qx '@interval_us 10101'
}

@test "count events: one sample each, said once; --labels perf sums the periods" {
	run perf2tach "$P/inputs/perf-rust-Yamakaky-dcpu.txt" -o "$T/p.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"event cycles:u: periods are event counts, not time; each sample is read as one"* ]]
	tach-decode "$T/p.tach" | awk '{ n += $NF } END { print n }' >"$T/n"
	want=$(grep -c 'cycles:u:' "$P/inputs/perf-rust-Yamakaky-dcpu.txt")
	[ "$(cat "$T/n")" -eq "$want" ]
}

@test "two events: the first by default with a warning, --event picks the other" {
	f=$P/inputs/perf-cycles-instructions-01.txt
	run tach-decode --no-thread-frames "$f"
	[ "$status" -eq 0 ]
	[[ "$output" == *"111 samples of other events (cycles) skipped; only instructions read"* ]]
	perf2tach -q --event cycles "$f" -o "$T/p.tach"
	tach-decode "$T/p.tach" | awk '{ n += $NF } END { print n }' >"$T/n"
	[ "$(cat "$T/n")" -eq "$(grep -c ' cycles: $' "$f")" ]
	$FOLD "$f" --event cycles | sed 's/^[^;]*;//' | LC_ALL=C sort >"$T/want"
	tach-decode --labels perf "$T/p.tach" | sed 's/^[^;]*;//' | LC_ALL=C sort >"$T/got"
	diff -u "$T/want" "$T/got"
	rm "$T/p.tach"
	run perf2tach --event nosuch "$f" -o "$T/p.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no samples of event nosuch; the capture has: instructions, cycles"* ]]
	[ ! -e "$T/p.tach" ]
}

@test "detection and --from perf read as perf2tach does" {
	for f in "$P"/inputs/*.txt "$P"/real/*.perf; do
		perf2tach -q "$f" -o "$T/p.tach"
		tach-decode -q "$T/p.tach" | sort >"$T/want"
		tach-decode -q "$f" | sort >"$T/file"
		cat "$f" | tach-decode -q --from perf | sort >"$T/pipe"
		diff -u "$T/want" "$T/file"
		diff -u "$T/want" "$T/pipe"
		tach-decode -v -q "$f" 2>&1 >/dev/null | grep -q 'perf'
	done
}

@test "bad input: one line with file and line, exit 1, no output file" {
	printf 'garbage here\nmore\n' >"$T/bad.txt"
	run perf2tach "$T/bad.txt" -o "$T/p.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "perf2tach: $T/bad.txt:1: not perf script output: no event line"* ]]
	[ ! -e "$T/p.tach" ]
	# a chain deeper than the limit
	{ echo 'ab 1 1.000001: cpu-clock:'; for i in $(seq 1 20); do echo "	$i f$i (/bin/x)"; done; echo; } >"$T/deep.txt"
	run perf2tach --max-depth 10 "$T/deep.txt" -o "$T/p.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "perf2tach: $T/deep.txt:12: call chain deeper than 10 frames"* ]]
	[ ! -e "$T/p.tach" ]
	# a line longer than 1 MiB
	{ echo 'ab 1 1.000001: cpu-clock:'; printf '\t1 '; head -c 1100000 /dev/zero | tr '\0' x; echo ' (/bin/x)'; echo; } >"$T/long.txt"
	run perf2tach "$T/long.txt" -o "$T/p.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"long.txt:2: line longer than 1048576 bytes"* ]]
	# --strict: a stray line is an error
	{ echo 'ab 1 1.000001: cpu-clock:'; echo '	nonsense'; echo; } >"$T/stray.txt"
	run perf2tach --strict "$T/stray.txt" -o "$T/p.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stray.txt:2: not a perf script frame line"* ]]
	run perf2tach "$T/stray.txt" -o "$T/p.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"stray.txt:2: warning: 1 line not understood and skipped; the first is here"* ]]
}

@test "usage errors: bad option values exit 2" {
	run tach-decode --labels perf --perf-root nope "$P/real/sort-fp.perf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"perf-root must be comm, pid or tid, not nope"* ]]
	run tach-decode --labels perf --annotate nope "$P/real/sort-fp.perf"
	[ "$status" -eq 2 ]
	run perf2tach --event "" "$P/real/sort-fp.perf" -o "$T/p.tach"
	[ "$status" -eq 2 ]
}

# A live capture needs a kernel that lets perf_event_open through: the test says why not
# when it does not. The program does a fixed amount of work in known call paths.
live_capture() { # callgraph-mode
	command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
	perf record -q -e cpu-clock -o "$T/probe.data" true >"$T/probe.log" 2>&1 ||
		skip "perf_event_open refused (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)): $(head -1 "$T/probe.log")"
	cc -O0 -g -fno-omit-frame-pointer -pthread "$TESTDATA/perf/livetest.c" -o "$T/livetest"
	(cd "$T" && perf record -q -e cpu-clock -F 499 "$@" -o live.data ./livetest >/dev/null)
	perf script -i "$T/live.data" >"$T/live.perf" 2>/dev/null
	[ -s "$T/live.perf" ]
}

check_live() {
	# the paths the program takes, as the perl script would print them
	tach-decode -q --labels perf "$T/live.perf" >"$T/periods"
	grep -Eq '^livetest;(.*;)?main;worker;hot_a [0-9]+$' "$T/periods"
	grep -Eq '^(livetest|hotb-worker);(.*;)?start_thread;worker;hot_b [0-9]+$' "$T/periods"
	# through TACH, counted in samples, as the independent reading counts them
	perf2tach -q "$T/live.perf" -o "$T/live.tach"
	tach-decode --labels perf "$T/live.tach" >"$T/got"
	$FOLD "$T/live.perf" >"$T/want"
	same_lines "$T/want" "$T/got"
	tach-decode --labels perf --perf-root tid "$T/live.tach" >"$T/got"
	$FOLD "$T/live.perf" --tid >"$T/want"
	same_lines "$T/want" "$T/got"
	# two threads, cpu-clock read as time: the interval is perf's period (-F 499: 2004 µs)
	[ "$(tach-decode -F samples "$T/live.tach" | grep -v '^@' | cut -d' ' -f1 | sort -u | wc -l)" -ge 2 ]
	tach-decode -F info "$T/live.tach" | grep -qx 'sample_interval_us: 2004'
}

@test "live: perf record -g (frame pointers) of a threaded C program" {
	live_capture -g
	check_live
}

@test "live: perf record --call-graph dwarf of a threaded C program" {
	live_capture --call-graph dwarf
	check_live
}

@test "the program is the dso the first sample's comm names: Gecko's product, pprof's main mapping; the duration" {
	product() {
		tach2gecko --no-gzip -q "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["meta"]["product"])'
	}
	[ "$(product "$P/real/sort-fp.perf")" = sort ]
	[ "$(product "$P/inputs/perf-cycles-instructions-01.txt")" = noploop ]
	# java's frames are in libjvm.so and JIT code: no dso is the program
	[ "$(product "$P/inputs/perf-java-stacks-01.txt")" = perf ]
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME=$T PPROF_TMPDIR=$T
	tach2pprof -q "$P/real/sort-fp.perf" -o "$T/p.pb.gz"
	go tool pprof -raw "$T/p.pb.gz" 2>/dev/null | grep -q '^ *1: 0x0/0x0/0x0 /home/dev/prof/perf2/sort '
	go tool pprof -top "$T/p.pb.gz" 2>/dev/null >"$T/top"
	grep -qx 'File: sort' "$T/top"
	# perf's clock counts from boot: the duration runs from the first sample (1601.018010 s)
	# to the last one's end (1603.708774 s + 2004 us), not from the clock's zero
	grep -q '^Duration: 2.69s,' "$T/top"
}

@test "older perf script text: frame lines without indent, event lines without a time" {
	f=$P/real/sort-fp.perf
	tach-decode -q --labels perf "$f" >"$T/want"
	sed 's/^[ \t]*//' "$f" >"$T/flat.perf"
	tach-decode -q --labels perf "$T/flat.perf" >"$T/got"
	same_lines "$T/want" "$T/got"
	tach-decode -q --labels perf --from perf "$T/flat.perf" >"$T/got"
	same_lines "$T/want" "$T/got"
	# no time: each sample counts one, as the script counts it without the period's colon
	sed -E 's/ +[0-9]+\.[0-9]+: / /' "$T/flat.perf" >"$T/nots.perf"
	tach-decode -q --labels perf "$T/nots.perf" >"$T/got"
	$FOLD "$f" | sed -E 's/ [0-9]+$//' | LC_ALL=C sort >"$T/w"
	sed -E 's/ [0-9]+$//' "$T/got" | LC_ALL=C sort >"$T/g"
	diff -u "$T/w" "$T/g"
	[ "$(awk '{ n += $NF } END { print n }' "$T/got")" -eq "$(grep -c 'cpu-clock' "$f")" ]
}

@test "a capture without call chains: one line a sample, the comm right-aligned, one frame each" {
	printf '%s\n' '              lt 11292   249.214003:    2004008 cpu-clock:      556dde1d3182 hot_a+0x19 (/tmp/pt/lt)' \
		'     hotb-worker 11314   249.245144:    2004008 cpu-clock:      556dde1d31cc hot_b+0x2d (/tmp/pt/lt)' \
		'              lt 11292   249.252220:    4008016 cpu-clock:      556dde1d3199 hot_a+0x30 (/tmp/pt/lt)' >"$T/nog.perf"
	run tach-decode --labels perf "$T/nog.perf"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "hotb-worker;hot_b 2004008" ]
	[ "${lines[1]}" = "lt;hot_a 6012024" ]
	[ "${#lines[@]}" -eq 2 ]
	# each perf sample is one sample, standing for its own period (the clock's time): the
	# third 4008016 ns, twice the interval
	[ "$(tach-decode -q -F samples "$T/nog.perf" | grep -v '^@' | cut -f1)" = "$(printf '11292 0 249214003 4 2004008\n11314 0 249245144 4 2004008\n11292 0 249252220 4 4008016')" ]
	tach-decode -q -F info "$T/nog.perf" | grep -qx 'weight_total_us: 8016'
	perf2tach -q "$T/nog.perf" -o "$T/p.tach"
	tach-decode "$T/p.tach" >"$T/got"
	grep -qx 'tid:11292;\[comm\]:lt:0;lt:hot_a:0 2' "$T/got"
}

@test "perf script --header past 4 KiB is detected; --event then applies" {
	f=$P/real/sort-fp.perf
	{
		printf '# ========\n# captured on    : Sat Nov 28 05:26:20 2026\n'
		for i in $(seq 1 20); do
			printf '# event : name = cpu_core/event=0x%x,umask=0x81,name=mem_inst_retired_all_loads/ppp, , id = { 8, 9 }, type = 4, size = 136, config = 0x81d0, { sample_period, sample_freq } = 4000, sample_type = IP|TID|TIME|CALLCHAIN|PERIOD, read_format = ID, disabled = 1, freq = 1\n' "$i"
		done
		printf '# ========\n#\n'
		cat "$f"
	} >"$T/head.perf"
	[ "$(head -c 4096 "$T/head.perf" | grep -c '^[^#]')" -eq 0 ]
	tach-decode -q --labels perf "$f" >"$T/want"
	tach-decode -q --labels perf "$T/head.perf" >"$T/got"
	same_lines "$T/want" "$T/got"
	tach-decode -v -q "$T/head.perf" 2>&1 >/dev/null | grep -q perf
	run tach-decode -q --event nosuch "$T/head.perf"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no samples of event nosuch; the capture has: cpu-clock:pppH"* ]]
}

@test "an event name past 64 bytes is one event; --event names it; cycles:u read under cycles is said" {
	ev=cpu_core/event=0xd0,umask=0x81,name=mem_inst_retired_all_loads_sampled/ppp
	[ ${#ev} -gt 64 ]
	sed "s|cpu-clock:pppH:|$ev:|" "$P/real/sort-fp.perf" >"$T/long.perf"
	run perf2tach "$T/long.perf" -o "$T/p.tach"
	[ "$status" -eq 0 ]
	[[ "$output" != *"other events"* ]]
	[ "$(tach-decode "$T/p.tach" | awk '{ n += $NF } END { print n }')" -eq "$(grep -c "$ev:" "$T/long.perf")" ]
	perf2tach -q --event "$ev" "$T/long.perf" -o "$T/p2.tach"
	cmp "$T/p.tach" "$T/p2.tach"
	# the option "cycles" reads cycles:u too, and the warning says both were read
	f=$P/inputs/perf-cycles-instructions-01.txt
	sed '0,/ cycles: $/s// cycles:u: /' "$f" >"$T/u.txt"
	run perf2tach --event cycles "$T/u.txt" -o "$T/p.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"skipped; only cycles:u, cycles read"* ]]
}

@test "numbers past 2^64: a period of 2^64-1 is one sample, sums past it and pids past it are said" {
	printf 'lt 1 1.000001: 18446744073709551615 cpu-clock:\n\t11b8 hot_b+0x19 (/x/lt)\n\n' >"$T/p.perf"
	# read directly: one sample standing for 2^64-1 ns (--labels perf sums the periods)
	[ "$(tach-decode --labels perf "$T/p.perf")" = 'lt;hot_b 18446744073709551615' ]
	[ "$(tach-decode -F samples "$T/p.perf" | grep -v '^@')" = "$(printf '1 0 1000001 4 18446744073709551615\t/x/lt:hot_b:-:-:-:-:-;[comm]:lt:-:-:-:-:-')" ]
	# through TACH the interval is 2^64-1 ns in us, more than 64-bit nanoseconds hold: the reader refuses it
	perf2tach -q "$T/p.perf" -o "$T/p.tach"
	run tach-decode "$T/p.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/p.tach: offset 20: a sample interval of 18446744073709552 us, longer than 9223372036854775 (what 64-bit nanoseconds hold)" ]
	cat "$T/p.perf" "$T/p.perf" >"$T/two.perf"
	run tach-decode --labels perf "$T/two.perf"
	[ "$status" -eq 1 ]
	[[ "$output" == *"two.perf:4: the periods add up past 2^64-1"* ]]
	[[ "$output" != *"max-samples"* ]]
	printf 'lt 99999999999999999999999 1.000001: 1000 cpu-clock:\n\t11b8 hot_b+0x19 (/x/lt)\n\n' >"$T/pid.perf"
	run perf2tach "$T/pid.perf" -o "$T/p.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "perf2tach: $T/pid.perf:1: pid or tid past 2^64-1" ]]
}

@test "a capture cut inside its first sample says so; NUL and ESC further on do not stop detection" {
	# cut inside its first frame line: the event line is the sample, the broken line is
	# skipped, and that the input ends inside a line is said
	head -c 120 "$P/real/sort-fp.perf" >"$T/cut.perf"
	run tach-decode --labels perf "$T/cut.perf"
	[ "$status" -eq 0 ]
	[[ "$output" == *"cut.perf:2: warning: the input ends inside this line (no LF after it): the capture may be cut short"* ]]
	[[ "$output" == *"sort 2004008"* ]]
	{ head -n 30 "$P/real/sort-fp.perf"; printf 'a\001\033[1m 77 1.5: 1 cpu-clock:pppH:\n\t1 f\000g (/x)\n\n'; } >"$T/nul.perf"
	run tach-decode -q --labels perf "$T/nul.perf"
	[ "$status" -eq 0 ]
	[[ "$output" == *$'a\001\033[1m;'* ]]
}

@test "a stream without a sample ends at --max-input" {
	run sh -c "yes 'no perf here' | head -c 3000000 | tach-decode --from perf --max-input 1M"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no sample in the first 1048576 bytes (see max-input)"* ]]
}

@test "live: who ran: Gecko and speedscope threads are named by comm, a cpu-clock capture is CPU time" {
	live_capture -g
	tach2gecko --no-gzip -q "$T/live.perf" | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = sorted(t["name"].split(" (tid ")[0] for t in d["threads"])
assert names == ["hotb-worker", "livetest"], names
for t in d["threads"]:
    assert t["name"].endswith(" (tid %s)" % t["tid"]), t["name"]
    if t["name"].startswith("livetest"):
        assert t["processName"] == "livetest", t["processName"]
' >&2
	tach2speedscope -q "$T/live.perf" | python3 -c '
import json, sys
names = sorted(p["name"].split(" (tid ")[0] for p in json.load(sys.stdin)["profiles"])
assert names == ["hotb-worker", "livetest"], names
' >&2
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME=$T PPROF_TMPDIR=$T
	tach2pprof -q "$T/live.perf" -o "$T/p.pb.gz"
	go tool pprof -top "$T/p.pb.gz" 2>/dev/null >"$T/top"
	grep -qx 'Type: cpu' "$T/top"
	grep -qx 'File: livetest' "$T/top"
}

@test "perf's (inlined) marks an inline frame: pprof puts it in its caller's location" {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME=$T PPROF_TMPDIR=$T
	tach2pprof -q "$P/real/python-x-perf.perf" -o "$T/p.pb.gz"
	go tool pprof -raw "$T/p.pb.gz" 2>/dev/null >"$T/raw"
	run grep -c 'inlined' "$T/raw"
	[ "$output" = 0 ]
	# one location, the address of both: get_state inlined into the function that calls it
	grep -A1 -E '^ +[0-9]+: 0x1cfdc8 .*_PyInterpreterState_GET' "$T/raw" | grep -q 'get_state'
}

@test "the program may carry a version its comm lacks: comm python3 runs python3.12" {
	[ "$(tach2gecko --no-gzip -q "$P/real/python-x-perf.perf" | python3 -c 'import json, sys; print(json.load(sys.stdin)["meta"]["product"])')" = python3.12 ]
}

@test "the program is found though its first samples are in the loader: Gecko's product, pprof's File" {
	{
		printf 'prog 7 1.000001: 1000000 cpu-clock:\n\t1f2a _dl_start+0x1a (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n\n'
		printf 'prog 7 1.001001: 1000000 cpu-clock:\n\t1139 main+0x10 (/home/dev/prog)\n\n'
	} >"$T/ld.perf"
	[ "$(tach2gecko --no-gzip -q "$T/ld.perf" | python3 -c 'import json, sys; print(json.load(sys.stdin)["meta"]["product"])')" = prog ]
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME=$T PPROF_TMPDIR=$T
	tach2pprof -q "$T/ld.perf" -o "$T/p.pb.gz"
	go tool pprof -top "$T/p.pb.gz" 2>/dev/null | grep -qx 'File: prog'
}

@test "a NUL or ESC in the first event line: detection says it looks like perf's, --from perf reads it" {
	{ printf 'a\033[1mb\000c 77 1.5: 1 cpu-clock:pppH:\n\t1 f (/x)\n\n'; cat "$P/real/sort-fp.perf"; } >"$T/esc.perf"
	run tach-decode -q "$T/esc.perf"
	[ "$status" -eq 1 ]
	[[ "$output" == *"as perf files do"*"--from perf"* ]]
	run tach-decode -q --labels perf --from perf "$T/esc.perf"
	[ "$status" -eq 0 ]
	[[ "$output" == *$'a\033[1mb'*';f 1'* ]]
}

@test "empty input is an error, as every other reader's; an endless stream with no sample stops at the input limit" {
	: >"$T/empty"
	run perf2tach "$T/empty" -o "$T/out.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "perf2tach: $T/empty: offset 0: empty input: no profile in it" ]
	[ ! -e "$T/out.tach" ]
	run bash -c "yes 'not perf script output' | timeout 300 perf2tach --max-input 64K -o '$T/out.tach'"
	[ "$status" -eq 1 ]
	[[ $output == "perf2tach: <stdin>: offset "*": no sample in the first 65536 bytes (see max-input): not perf input" ]]
	[ ! -e "$T/out.tach" ]
}

@test "event lines of unusual shapes: periods, no period, long times, odd words" {
	i=0
	for h in 'pp 1 1.000001: 7 ev:' 'pp 1 1.5: ev:' 'pp 1 [000] 1.000000000000000000000000001: 9 ev:' \
		'pp 1 00000000000000000001.5: 5 ev:' 'pp 1 1.5: 5 9ev:' 'pp 1 1.5:   11   ev:   ' \
		'pp 1 1.5:7 ev:' 'pp 1 1.1234567890123456789012345: 13 ev:' \
		'pp 1 1.12345678901234567890123456: 17 ev:'; do
		i=$((i + 1))
		printf '%s\n\t1 f%d (/x)\n\n' "$h" $i
	done >"$T/edge.perf"
	run tach-decode -q --labels perf "$T/edge.perf"
	[ "$status" -eq 0 ]
	[ "$(LC_ALL=C sort <<<"$output" | tr '\n' ' ')" = \
		"pp;f1 7 pp;f2 1 pp;f3 9 pp;f4 5 pp;f6 11 pp;f7 7 pp;f8 13 pp;f9 17 " ]
}

@test "a counted event names pprof's sample types: samples, and the event's count by its periods, shown first" {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME=$T PPROF_TMPDIR=$T
	f=$P/inputs/perf-rust-Yamakaky-dcpu.txt
	tach2pprof -q "$f" -o "$T/c.pb.gz"
	go tool pprof -raw "$T/c.pb.gz" 2>/dev/null >"$T/raw"
	grep -qx 'samples/count cycles:u/count\[dflt\]' "$T/raw"
	grep -qx 'PeriodType: cycles:u count' "$T/raw"
	go tool pprof -top "$T/c.pb.gz" 2>/dev/null | grep -qx 'Type: cycles:u'
	# the event's values are the periods perf printed, the samples one each
	want=$(awk '/ cycles:u: *$/ { n++; s += $(NF-1) } END { print n, s }' "$f")
	got=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && /^ *[0-9]+ +[0-9]+:/ { sub(":", "", $2); n += $1; s += $2 } END { print n, s }' "$T/raw")
	[ "$got" = "$want" ]
	# no periods printed: samples only, and the event as the period's type; no time type
	f=$P/inputs/perf-cycles-instructions-01.txt
	tach2pprof -q "$f" -o "$T/i.pb.gz"
	go tool pprof -raw "$T/i.pb.gz" 2>/dev/null >"$T/raw"
	grep -qx 'samples/count\[dflt\]' "$T/raw"
	grep -qx 'PeriodType: instructions count' "$T/raw"
	# a clock is time, as before
	tach2pprof -q "$P/real/sort-fp.perf" -o "$T/s.pb.gz"
	go tool pprof -top "$T/s.pb.gz" 2>/dev/null | grep -qx 'Type: cpu'
}

@test "pprof keeps every address where the line cache forgets lines: 12,001 addresses met again and again" {
	# 30,000 samples over 12,001 distinct frame lines: most lines come back after the
	# reader's line cache has let them go, and are read again into the same frames
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME=$T PPROF_TMPDIR=$T
	awk 'BEGIN { for (i = 0; i < 30000; i++) {
		x1 = (i * 7919) % 6000; x2 = (i * 104729 + 3) % 6000
		printf "prog 100/100 %d.%06d: 1000000 cpu-clock:\n", int(i / 1000000) + 1, i % 1000000
		printf "\t%x f%d+0x4 (/bin/prog)\n", 4194304 + x1 * 16, x1 % 700
		printf "\t%x g%d+0x8 (/bin/prog)\n", 5242880 + x2 * 16, x2 % 300
		printf "\t%x main+0x10 (/bin/prog)\n\n", 6291456 } }' >"$T/gen.perf"
	tach2pprof -q "$T/gen.perf" -o "$T/g.pb.gz"
	go tool pprof -raw "$T/g.pb.gz" 2>/dev/null >"$T/raw"
	# every address once, and the root's location (no address)
	sed -n '/^Locations/,/^Mappings/p' "$T/raw" | awk '$2 ~ /^0x/ { print $2 }' | sort >"$T/got"
	{ echo 0x0; grep -oE '^	[0-9a-f]+ ' "$T/gen.perf" | tr -d ' \t' | sed 's/^/0x/' | sort -u; } |
		sort | diff -u - "$T/got"
	# the stacks, each as the text has it, and every sample
	tach-decode -q --labels perf "$T/g.pb.gz" | sed 's/ [0-9]*$//' >"$T/from_pprof"
	tach-decode -q --labels perf "$T/gen.perf" | sed 's/ [0-9]*$//' | diff -u - "$T/from_pprof"
	[ "$(tach-decode -q --labels perf "$T/g.pb.gz" | awk '{ n += $NF } END { print n }')" -eq 30000 ]
}
