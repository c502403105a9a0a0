#!/usr/bin/env bats
# Folded stacks from real producers, read as they mean them: stackcollapse-perf.pl's counts
# (sums of perf periods, in ns) and its --pid/--tid roots, and austin 1.x's three forms (a
# capture made in this run when austin and a Python it can read are installed, and the one
# in tests/data/austin1 made the same way by austin 1.0.1 of Debian bookworm and CPython 3.8).

setup() {
	P=$FIXTURES/perf
	A=$TESTDATA/austin1
	T=$BATS_TEST_TMPDIR
}

info() { # FILE KEY: a value of tach-decode --format info
	tach-decode -F info "$1" | sed -n "s/^$2: //p"
}

# What each perf fixture holds, computed here from its counts: "samples interval_us" for
# counts that are all multiples of one period of at least 1000 (ns), else the counts' sum as
# samples of no known interval (0).
expected_perf() {
	python3 - "$1" <<'EOF'
import math, sys
c = [int(l.rsplit(None, 1)[1]) for l in open(sys.argv[1]) if l.strip()]
g = 0
for x in c:
    g = math.gcd(g, x)
if len(c) >= 2 and g >= 1000:
    print(sum(c) // g, (g + 500) // 1000)
else:
    print(sum(c), 0)
EOF
}

@test "stackcollapse-perf.pl's period sums become the perf samples they were, at the period" {
	local n=0 timed=0
	for f in "$P"/expected/*-collapsed*.txt "$P"/real/*-collapsed*.txt; do
		collapsed2tach -q "$f" -o "$T/x.tach"
		read -r want iv < <(expected_perf "$f")
		[ "$(info "$T/x.tach" samples_selected)" = "$want" ] || {
			echo "$f: $(info "$T/x.tach" samples_selected) samples, want $want"; false; }
		[ "$(info "$T/x.tach" sample_interval_us)" = "$iv" ]
		[ "$iv" = 0 ] || { timed=$((timed + 1)); [ "$want" -lt 1000 ]; }
		n=$((n + 1))
	done
	[ "$n" -eq 53 ]
	# dd (7 files: plain, every option), sort-fp and python-x-perf (plain and --tid); the
	# others count samples (no period printed) or cycles (periods that vary)
	[ "$timed" -eq 11 ]
	# the perf script inputs say how many samples there were, each one period long
	for name in sort-fp python-x-perf; do
		collapsed2tach -q "$P/real/$name-collapsed.txt" -o "$T/x.tach"
		[ "$(info "$T/x.tach" samples_selected)" = "$(grep -c ' cpu-clock:' "$P/real/$name.perf")" ]
	done
	[ "$(info "$T/x.tach" sample_interval_us)" = 3344 ] # -F 299: 3344481 ns
}

@test "perf times come out right in pstats and pprof, with the warning that names the option" {
	f=$P/real/sort-fp-collapsed.txt
	run collapsed2tach "$f" -o "$T/x.tach"
	[ "$status" -eq 0 ]
	# then TACH's one interval cannot keep a line's own time (issue 51.3), said once
	[ "$output" = "collapsed2tach: $f: warning: counts read as nanoseconds: every count is a multiple of 2004008, as stackcollapse-perf.pl's sums of perf periods are (--count-unit samples takes them as samples)
collapsed2tach: $f: warning: the tach format has one interval (2004 us) and no time per sample: samples keep their timestamps, but each stands for one interval (such as one of 10020 us at 0 us)" ]
	# pstats: the innermost frames' own times add up to the counts' sum, 1.348697384 s
	tach2pstats -q "$f" -o "$T/x.pstats"
	python3 - "$T/x.pstats" "$(awk '{ s += $NF } END { print s }' "$f")" <<'EOF'
import marshal, sys
st = marshal.load(open(sys.argv[1], "rb"))
tot = sum(v[2] for k, v in st.items() if isinstance(v, tuple) and len(v) == 5)
want = int(sys.argv[2]) / 1e9
assert abs(tot - want) < want * 1e-5, (tot, want)
EOF
	# (the samples text of the input itself: TACH keeps the interval, not each line's time)
	tach-decode -q -F samples "$f" >"$T/samples"
	python3 "$SOURCE_ROOT/tests/cli/pstats_check.py" "$T/samples" "$T/x.pstats"
	# each line one record of its time, the perf samples it sums at the period: 673 in all
	[ "$(awk -F'\t' '!/^@/ { split($1, h, " "); t += h[5]; n += (6 in h) ? h[6] : 1 } END { print t, n }' "$T/samples")" = "$(awk '{ s += $NF } END { print s }' "$f") 673" ]
	# pprof: 673 samples of 2004 µs, read back
	tach2pprof -q "$f" -o "$T/x.pb.gz"
	[ "$(info "$T/x.pb.gz" sample_interval_us)" = 2004 ]
	# (each pprof Sample one record of its samples and their time, the periods' sum)
	[ "$(tach-decode -q -F samples "$T/x.pb.gz" | awk -F'\t' '!/^@/ { split($1, h, " "); t += h[5]; n += (6 in h) ? h[6] : 1 } END { print t, n }')" = "$(awk '{ s += $NF } END { print s }' "$f") 673" ]
	# speedscope: weights in µs summing to the time, the counts' sum
	tach2speedscope -q "$f" -o "$T/x.json"
	python3 -c 'import json, sys
got = sum(w for p in json.load(open(sys.argv[1]))["profiles"] for w in p["weights"])
want = sum(int(l.rsplit(None, 1)[1]) for l in open(sys.argv[2]) if l.strip()) / 1000
sys.exit(0 if abs(got - want) < 1e-6 * want else "%r us, want %r" % (got, want))' "$T/x.json" "$f"
}

@test "--count-unit: samples, ns, us, ms, each counting as it says" {
	printf 'a;b 3000\nc 1000\n' >"$T/in"
	run collapsed2tach --count-unit samples "$T/in" -o "$T/s.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "collapsed2tach: $T/in: warning: counts taken as samples, but every count is a multiple of 1000, as times in nanoseconds such as perf periods are (--count-unit ns reads them as time)" ]
	[ "$(info "$T/s.tach" samples_selected)" = 4000 ]
	# samples of no known interval: no time, none guessed
	[ "$(info "$T/s.tach" sample_interval_us)" = 0 ]
	tach-decode -q -F samples --count-unit samples "$T/in" >"$T/s.samples"
	grep -qx '@interval_us 0' "$T/s.samples"
	[ "$(grep -v '^@' "$T/s.samples" | cut -f1 | awk 'NF != 4' | wc -l)" -eq 0 ]
	[ "$(info "$T/s.tach" weight_total_us)" = "" ]
	for u in ns us ms; do
		run collapsed2tach --count-unit $u "$T/in" -o "$T/$u.tach"
		[ "$status" -eq 0 ]
		[ -z "$output" ] # the unit was given: nothing to say
		[ "$(tach-decode "$T/$u.tach")" = "$(printf 'tid:0;a;b 3\ntid:0;c 1')" ]
	done
	[ "$(info "$T/ns.tach" sample_interval_us)" = 1 ]
	[ "$(info "$T/us.tach" sample_interval_us)" = 1000 ]
	[ "$(info "$T/ms.tach" sample_interval_us)" = 1000000 ]
	# auto: the same file is read as ns, with the warning
	run collapsed2tach "$T/in" -o "$T/a.tach"
	[ "${output#*warning: }" = "counts read as nanoseconds: every count is a multiple of 1000, as stackcollapse-perf.pl's sums of perf periods are (--count-unit samples takes them as samples)" ]
	[ "$(info "$T/a.tach" samples_selected)" = 4 ]
	# a single line, or small counts, are sample counts
	printf 'a 5000\n' | collapsed2tach -o "$T/one.tach" 2>"$T/err"
	[ "$(info "$T/one.tach" samples_selected)" = 5000 ]
	[ ! -s "$T/err" ]
	# measured times without a common period: each line one record of its time, no
	# interval guessed
	printf 'a 150\nb 250\n' >"$T/m.txt"
	[ "$(info "$T/m.txt" sample_interval_us)" = 0 ]
	[ "$(tach-decode -q -F samples --count-unit us "$T/m.txt" | grep -v '^@')" = "$(printf '0 0 0 4 150000\t~:a:-:-:-:-:-\n0 0 150 4 250000\t~:b:-:-:-:-:-')" ]
	[ "$(tach-decode --count-unit us "$T/m.txt")" = "$(printf 'tid:0;a 1\ntid:0;b 1')" ]
	# a given interval weighs nothing: a line stays one record, nothing rounded; the only
	# warning is TACH's, which cannot keep a line's own time (issue 51.3)
	run collapsed2tach --count-unit us --interval 100 "$T/m.txt" -o "$T/m.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "collapsed2tach: $T/m.txt: warning: the tach format has one interval (100 us) and no time per sample: samples keep their timestamps, but each stands for one interval (such as one of 150 us at 0 us)" ]
	[ "$(info "$T/m.tach" samples_selected)" = 2 ]
	[ "$(info "$T/m.tach" sample_interval_us)" = 100 ]
	run collapsed2tach --count-unit s "$T/in"
	[ "$status" -eq 2 ]
	[[ "$output" == *"count-unit must be auto, samples, ns, us or ms, not s"* ]]
}

@test "every program that reads folded stacks takes --count-unit" {
	printf 'a;b 3000\nc 1000\n' >"$T/in"
	for p in tach-decode tach2pprof tach2gecko tach2pstats tach2speedscope tach2sampler tach2flamegraph; do
		run "$p" --count-unit bogus "$T/in"
		[ "$status" -eq 2 ] || { echo "$p: $status"; false; }
	done
	[ "$(tach-decode -q "$T/in")" = "$(printf 'tid:0;a;b 3\ntid:0;c 1')" ]
	[ "$(tach-decode -q --count-unit samples "$T/in")" = "$(printf 'tid:0;a;b 3000\ntid:0;c 1000')" ]
	# tach2flamegraph draws counts as flamegraph.pl does, unless told they are times
	tach2flamegraph -q "$T/in" >"$T/a.svg"
	grep -q '<title>all (4,000 samples, 100%)</title>' "$T/a.svg"
	tach2flamegraph -q --count-unit ns "$T/in" >"$T/b.svg"
	grep -q '<title>all (4 samples, 100%)</title>' "$T/b.svg"
}

@test "stackcollapse-perf.pl --tid roots are threads, the process name stays the root frame" {
	f=$P/expected/perf-iperf-stacks-pidtid-01-collapsed-tid.txt
	collapsed2tach "$f" -o "$T/x.tach"
	[ "$(info "$T/x.tach" thread_count)" = 10 ]
	# thread id and interpreter id: the root's TID and PID
	tach-decode -F samples "$T/x.tach" | grep -v '^@' | cut -d' ' -f1,2 | sort -u >"$T/ids"
	cut -d';' -f1 "$f" | sed 's/^.*-\([0-9]*\)\/\([0-9]*\)$/\2 \1/' | sort -u >"$T/want"
	[ "$(wc -l <"$T/want")" = 10 ]
	diff "$T/want" "$T/ids"
	tach-decode "$T/x.tach" | head -n 1 | grep -q '^tid:2873[6-9];iperf;\[unknown\]'
	# the stacks are those of the file without --tid, frame for frame
	tach-decode --no-thread-frames "$T/x.tach" | LC_ALL=C sort >"$T/a"
	collapsed2tach "${f%-tid.txt}.txt" | tach-decode --no-thread-frames | LC_ALL=C sort >"$T/b"
	diff "$T/b" "$T/a"
	# "comm-?/TID": no pid, the tid
	tach-decode "$P/real/sort-fp-collapsed-tid.txt" 2>/dev/null | cut -d';' -f1,2 | sort -u >"$T/t"
	printf 'tid:4078;sort\ntid:4101;sort\n' | diff - "$T/t"
	# --keep-thread-frames keeps them as they are
	collapsed2tach --keep-thread-frames "$f" | tach-decode | grep -q '^tid:0;iperf-27409/2874[1-4];'
}

@test "stackcollapse-perf.pl --pid roots: a known pid is the thread, '?' leaves the name" {
	f=$P/expected/perf-iperf-stacks-pidtid-01-collapsed-pid.txt
	tach-decode "$f" | cut -d';' -f1,2 | sort -u >"$T/out"
	printf '%s\n' 'tid:27409;iperf' 'tid:28735;iperf' 'tid:28796;run' 'tid:28797;multilog' \
		'tid:28797;run' | diff - "$T/out"
	tach-decode -F samples "$f" | grep -v '^@' | cut -d' ' -f1,2 | sort -u | grep -qx '27409 27409'
	tach-decode "$P/expected/perf-java-stacks-01-collapsed-pid.txt" | cut -d';' -f1,2 | sort -u >"$T/out"
	printf '%s\n' 'tid:0;ab' 'tid:0;java' 'tid:0;perf' 'tid:0;swapper' | diff - "$T/out"
}

@test "a root like 'foo-12' is a frame unless the file is stackcollapse-perf.pl --pid" {
	# one process name with a number in it: nothing says it is a pid
	printf 'gcc-12;main 1\ngcc-12;parse 2\n' | tach-decode >"$T/out"
	printf 'tid:0;gcc-12;parse 2\ntid:0;gcc-12;main 1\n' | diff - "$T/out"
	# a root without a number in the first lines: the file is not --pid
	printf 'foo-12;a 1\nswapper;b 1\nbar-7;c 1\n' | tach-decode | grep -qx 'tid:0;foo-12;a 1'
	# the same name with two numbers: pids
	printf 'foo-12;a 1\nfoo-13;b 1\n' | tach-decode >"$T/out"
	printf 'tid:12;foo;a 1\ntid:13;foo;b 1\n' | diff - "$T/out"
	# "NAME-N/M" is --tid; a name may hold '-' and '/'
	printf 'jbd2/sda1-8-311/311;kjournald2 4\n' | tach-decode >"$T/out"
	[ "$(cat "$T/out")" = "tid:311;jbd2/sda1-8;kjournald2 4" ]
}

check_austin1() { # FILE FORM: austin 1.x output read as time, frames with their lines
	local f=$1 form=$2
	# the one message: TACH cannot keep the lines' own times (issue 51.3); nothing else
	collapsed2tach "$f" -o "$T/x.tach" 2>"$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err"; false; }
	grep -qx "collapsed2tach: $f: warning: the tach format has one interval (0 us) and no time per sample: samples keep their timestamps, but each stands for one interval (such as one of [0-9]* us at 0 us)" "$T/err" || { cat "$T/err"; false; }
	[ "$(info "$T/x.tach" thread_count)" = 2 ]
	tach-decode --full-paths "$T/x.tach" >"$T/out"
	# no L<n> pseudo-frames, no "Thread" frames: the work is at its lines
	if grep -Eq ';L[0-9]+( |;)|Thread ' "$T/out"; then
		grep -E ';L[0-9]+( |;)|Thread ' "$T/out" | head -3
		false
	fi
	grep -Eq '(^|;)work\.py:crunch:[56]( |$)' "$T/out"
	grep -Eq ';work\.py:main:18;work\.py:crunch:[56] [0-9]+$' "$T/out"
	# the time: the counts' sum (field 1 of -f's three), within 1%
	local col=NF
	[ "$form" != full ] || col='NF-2'
	want=$(awk "{ s += \$($col) } END { print s }" "$f")
	[ "$(info "$f" weight_total_us)" = "$want" ] ||
		{ echo "$f: $(info "$f" weight_total_us) us, want $want"; false; }
	# never a sample per microsecond, nor an interval guessed: one record per line
	# (lines of a zero count are skipped)
	[ "$(info "$f" samples_selected)" = "$(awk "\$($col) > 0" "$f" | wc -l)" ]
	[ "$(info "$f" sample_interval_us)" = 0 ]
}

@test "austin 1.x: default, -f, -a and -C output as austin 1.0.1 wrote it" {
	check_austin1 "$A/austin1.txt" default
	check_austin1 "$A/austin1-full.txt" full
	check_austin1 "$A/austin1-alt.txt" alt
	check_austin1 "$A/austin1-children.txt" children
	# -C: the process is the interpreter id
	pid=$(sed -n '1s/^Process \([0-9]*\);.*/\1/p' "$A/austin1-children.txt")
	tach-decode -F samples "$A/austin1-children.txt" | grep -v '^@' | cut -d' ' -f2 | sort -u |
		grep -qx "$pid"
	# -f's memory: field 2 is KiB allocated, counts not times
	collapsed2tach -q --metric 2 "$A/austin1-full.txt" -o "$T/m.tach"
	[ "$(info "$T/m.tach" samples_selected)" = "$(awk '{ s += $(NF-1) } END { print s }' "$A/austin1-full.txt")" ]
	# --labels austin1 on a line alone
	printf 'Thread 0x1;f (a.py);L3 1000\n' | collapsed2tach --labels austin1 --count-unit samples |
		tach-decode >"$T/out"
	[ "$(cat "$T/out")" = "tid:1;a.py:f:3 1000" ]
}

# A Python austin 1.x can read (it knows CPython up to 3.8), or nothing.
old_python() {
	local p
	# The interpreter itself: austin profiles the process it starts, and a version manager's
	# shim (a shell script that execs python later) gives it nothing or a late start.
	for p in "$HOME"/.pyenv/versions/3.[678].*/bin/python3.[678] python3.8 python3.7 python3.6; do
		p=$(command -v "$p" 2>/dev/null) || continue
		case $p in */shims/*) continue ;; esac
		"$p" -c 'import sys; sys.exit(sys.version_info >= (3, 9))' 2>/dev/null && { echo "$p"; return; }
	done
}

@test "austin 1.x: a capture made now reads the same way" {
	command -v austin >/dev/null || skip "austin is not installed"
	py=$(old_python)
	[ -n "$py" ] || skip "no CPython <= 3.8 for austin 1.x (bookworm's 3.11 is too new for it)"
	cp "$A/work.py" "$T/work.py"
	cd "$T"
	for form in default full alt; do
		opt=
		[ $form = full ] && opt=-f
		[ $form = alt ] && opt=-a
		# shellcheck disable=SC2086
		austin $opt -i 1000 -o "$T/$form.txt" "$py" work.py 2>/dev/null
		[ -s "$T/$form.txt" ]
		check_austin1 "$T/$form.txt" $form
	done
}

# austin_big FILE HEADER: about 3.7 MB of austin-style lines (P<pid>;T<iid>:<tid> roots,
# file:func:line frames), their counts measured µs of no common period; HEADER 1 with
# austin 3's "# austin:" and "# interval:" lines.
austin_big() {
	python3 - "$1" "$2" <<'PY'
import random, sys
rnd = random.Random(51)
with open(sys.argv[1], "w") as f:
    if sys.argv[2] == "1":
        f.write("# austin: 3.6.0\n# interval: 100\n# mode: wall\n\n")
    n = 0
    while f.tell() < 3_700_000:
        depth = rnd.randint(3, 9)
        frames = ";".join("/srv/app/mod%d.py:func%d:%d" % (rnd.randint(0, 40), rnd.randint(0, 400), rnd.randint(1, 900))
                          for _ in range(depth))
        f.write("P4242;T0:%d;%s %d\n" % (rnd.choice((7001, 7002, 7003)), frames, rnd.randint(1, 250000)))
        n += 1
PY
}

@test "a 3.7 MB austin file: its microseconds are the time, one record a line, -F samples about its size" {
	for header in 0 1; do
		f=$T/big$header.austin
		austin_big "$f" $header
		local size lines us
		size=$(stat -c %s "$f")
		[ "$size" -ge 3700000 ]
		lines=$(grep -c '^P' "$f")
		us=$(awk '/^P/ { s += $NF } END { printf "%.0f", s }' "$f")
		tach-decode -q -F samples "$f" >"$T/big.samples"
		# one line per line of the file, each with its time: no sample per guessed interval
		[ "$(grep -vc '^@' "$T/big.samples")" -eq "$lines" ]
		[ "$(stat -c %s "$T/big.samples")" -le $((3 * size)) ]
		tach-decode -F info "$f" >"$T/info"
		grep -qx "weight_total_us: $us" "$T/info"
		grep -qx "samples: $lines" "$T/info"
		grep -qx "sample_interval_us: $((header * 100))" "$T/info"
		# the samples text reads back to itself
		tach-decode -q -F samples "$T/big.samples" | cmp - "$T/big.samples"
		# pprof totals the file's microseconds, as go tool pprof adds them up
		tach2pprof -q --no-gzip "$f" -o "$T/big.pb"
		HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/big.pb" 2>/dev/null >"$T/raw"
		[ "$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
			s && /^ *[0-9]+ +[0-9]+:/ { sub(":", "", $2); t += $2 } END { printf "%.0f", t / 1000 }' "$T/raw")" -eq "$us" ]
	done
}
