#!/usr/bin/env bats
# tach2pprof as a user runs it: every TACH fixture must give a profile that `go tool pprof`
# reads without a word on stderr and that shows the same stacks and totals as tach-decode.
# Stacks are compared through tests/pprof_stacks.py, which turns `pprof -raw` and
# `tach-decode --format samples` into the same "stack<TAB>count<TAB>ns" lines.

load gzip_thread
load checked

setup() {
	T=$BATS_TEST_TMPDIR
	STACKS="python3 $SOURCE_ROOT/tests/pprof_stacks.py"
	# go tool pprof keeps nothing for local files, but give it a home of its own.
	export HOME=$T PPROF_TMPDIR=$T
}

need_go() {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
}

# pprof_ok PROFILE ARGS...: runs go tool pprof, which must succeed with an empty stderr;
# its stdout is left in $T/pprof.out.
pprof_ok() {
	local f=$1
	shift
	go tool pprof "$@" "$f" >"$T/pprof.out" 2>"$T/pprof.err" || {
		cat "$T/pprof.err" >&2
		return 1
	}
	if [ -s "$T/pprof.err" ]; then
		echo "go tool pprof $* $f wrote to stderr:" >&2
		cat "$T/pprof.err" >&2
		return 1
	fi
}

# same_as_decode TACH PROFILE: pprof's stacks, counts and nanoseconds equal tach-decode's;
# pprof's totals (-top, samples and time) equal their sums.
same_as_decode() {
	local tach=$1 prof=$2
	pprof_ok "$prof" -raw
	$STACKS raw <"$T/pprof.out" >"$T/got.txt"
	tach-decode --format samples "$tach" | $STACKS samples >"$T/want.txt"
	diff -u "$T/want.txt" "$T/got.txt"
	pprof_totals "$prof" "$T/want.txt"
}

# pprof_totals PROFILE WANT [SAMPLES]: go tool pprof -traces and -top read PROFILE silently,
# and -top counts as many samples as WANT (pprof_stacks.py lines) holds, and those of
# SAMPLES (tach-decode's text) with an empty stack, which pprof counts in its total but
# -raw does not print. (Each step returns on failure: the function also runs where errexit
# is off, in a condition.)
pprof_totals() {
	local prof=$1 n e=0
	n=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' "$2")
	[ -z "${3:-}" ] || e=$(empty_stacks "$3")
	n=$((n + e))
	pprof_ok "$prof" -traces || return
	pprof_ok "$prof" -top -sample_index=samples || return
	if [ "$n" -gt 0 ]; then
		grep -q "of $n total\$" "$T/pprof.out" || {
			echo "pprof -top does not show $n samples in total:" >&2
			head -n 8 "$T/pprof.out" >&2
			return 1
		}
	fi
	pprof_ok "$prof" -top
}

# empty_stacks SAMPLES: how many samples of tach-decode's text have no frames (a line's
# weight is its sixth field where it has one).
empty_stacks() {
	awk -F'\t' '!/^[@#]/ && NF > 1 && $2 == "" { split($1, f, " "); s += (6 in f) ? f[6] : 1 }
		END { print s + 0 }' "$1"
}

@test "every TACH fixture: go tool pprof reads it silently, same stacks and totals as tach-decode" {
	need_go
	local f n=0 p
	mkdir "$T/v"
	cd "$T/v"
	for f in "$FIXTURES"/tach/cases/*.tach "$FIXTURES"/tach/layout-a/*.tach \
		"$FIXTURES"/tach/big-endian/*.tach; do
		p=${f#"$FIXTURES"/tach/}
		p=${p//\//-}
		tach2pprof -q "$f" -o "$p.pb.gz" || {
			echo "tach2pprof failed on $f" >&2
			return 1
		}
		tach-decode --format samples "$f" >"$p.samples"
		echo "$p" >>list
		n=$((n + 1))
	done
	[ "$n" -ge 40 ]
	checked * -- same_as_decode_list list
}

# same_as_decode_list LIST: same_as_decode for each NAME of LIST, NAME.pb.gz against
# NAME.samples in the current directory, their stacks turned into lines by one Python.
same_as_decode_list() {
	local p
	while read -r p; do
		pprof_ok "$p.pb.gz" -raw || { echo "pprof fails on $p" >&2; return 1; }
		cp "$T/pprof.out" "$p.raw"
	done <"$1"
	python3 "$SOURCE_ROOT/tests/pprof_stacks.py" files $(cat "$1")
	while read -r p; do
		{ diff -u "$p.want" "$p.got" && pprof_totals "$p.pb.gz" "$p.want" "$p.samples"; } ||
			{ echo "mismatch for $p" >&2; return 1; }
	done <"$1"
}

@test "the check of every fixture names a profile whose stacks differ" {
	need_go
	cd "$T"
	tach2pprof -q "$FIXTURES/tach/cases/recursion.tach" -o a.pb.gz
	tach-decode --format samples "$FIXTURES/tach/cases/recursion.tach" >a.samples
	tach2pprof -q "$FIXTURES/tach/cases/recursion.tach" -o b.pb.gz
	tach-decode --format samples "$FIXTURES/tach/cases/transitions.tach" >b.samples
	printf 'a\nb\n' >list
	run same_as_decode_list list
	[ "$status" -eq 1 ]
	[[ "$output" == *"mismatch for b"* ]]
	[[ "$output" != *"mismatch for a"* ]]
}

@test "the collapsed view agrees too: pprof totals per stack equal tach-decode's folded counts" {
	need_go
	local f=$FIXTURES/tach/cases/threads_interleaved.tach
	tach2pprof "$f" -o "$T/p.pb.gz"
	pprof_ok "$T/p.pb.gz" -top -sample_index=samples
	local want
	want=$(tach-decode --format collapsed --no-thread-frames "$f" | awk '{ s += $NF } END { print s }')
	[ "$want" -eq 320 ]
	grep -q "of $want total\$" "$T/pprof.out"
}

@test "output is gzip by default; --no-gzip gives the same protobuf uncompressed" {
	tach2pprof "$FIXTURES/tach/cases/recursion.tach" -o "$T/p.pb.gz"
	tach2pprof --no-gzip "$FIXTURES/tach/cases/recursion.tach" -o "$T/p.pb"
	[ "$(head -c 2 "$T/p.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]
	[ "$(head -c 1 "$T/p.pb" | od -An -tx1 | tr -d ' ')" = 0a ]
	gzip -dc "$T/p.pb.gz" | cmp - "$T/p.pb"
}

@test "gzip level 1 by default, as the Go runtime writes; --level picks another, same message" {
	local f="$FIXTURES/tach/cases/many_frames.tach"
	tach2pprof "$f" -o "$T/d.pb.gz"
	tach2pprof --level 1 "$f" | cmp - "$T/d.pb.gz"
	# gzip's XFL byte (offset 8) says how zlib compressed: 4 fastest, 2 best, 0 between
	[ "$(od -An -j8 -N1 -tu1 "$T/d.pb.gz" | tr -d ' ')" = 4 ]
	tach2pprof --level 9 "$f" -o "$T/9.pb.gz"
	[ "$(od -An -j8 -N1 -tu1 "$T/9.pb.gz" | tr -d ' ')" = 2 ]
	tach2pprof --level=6 "$f" -o "$T/6.pb.gz"
	[ "$(od -An -j8 -N1 -tu1 "$T/6.pb.gz" | tr -d ' ')" = 0 ]
	tach2pprof --no-gzip "$f" -o "$T/d.pb"
	for z in d 9 6; do gzip -dc "$T/$z.pb.gz" | cmp - "$T/d.pb"; done
	for bad in 0 10 x ""; do
		run tach2pprof --level "$bad" "$f" -o "$T/bad.pb.gz"
		[ "$status" -eq 2 ]
		[[ "$output" == *"tach2pprof: gzip level must be 1-9, not $bad"* ]]
		[ ! -e "$T/bad.pb.gz" ]
	done
}

@test "--no-gzip output reads in go tool pprof too" {
	need_go
	tach2pprof --no-gzip "$FIXTURES/tach/cases/recursion.tach" -o "$T/p.pb"
	same_as_decode "$FIXTURES/tach/cases/recursion.tach" "$T/p.pb"
}

@test "wire format field by field through protoc --decode_raw" {
	command -v protoc >/dev/null || skip "protoc not installed (Debian package protobuf-compiler)"
	tach-encode "$TESTDATA/pprof_small.samples" -o "$T/small.tach"
	tach2pprof -q --no-gzip "$T/small.tach" -o "$T/small.pb"
	protoc --decode_raw <"$T/small.pb" >"$T/decoded.txt"
	diff -u "$TESTDATA/pprof_small.decode_raw.txt" "$T/decoded.txt"
}

@test "header fields: sample types, period, time, duration, comment, mapping" {
	need_go
	tach-encode "$TESTDATA/pprof_small.samples" -o "$T/small.tach"
	tach2pprof -q "$T/small.tach" -o "$T/p.pb.gz"
	pprof_ok "$T/p.pb.gz" -raw
	grep -qx 'PeriodType: wall nanoseconds' "$T/pprof.out"
	grep -qx 'Period: 250000' "$T/pprof.out"
	grep -qx 'Comment: converted by tachfmt from tach' "$T/pprof.out"
	grep -qx 'samples/count wall/nanoseconds\[dflt\]' "$T/pprof.out"
	grep -qx 'Duration: 1ms' "$T/pprof.out"
	grep -q '^1: 0x0/0x0/0x0 python3.15  \[FN\]\[FL\]\[LN\]$' "$T/pprof.out"
	# Time: 5 s after the epoch (the start time CPython recorded)
	grep -qx 'Time: 1970-01-01 00:00:05 +0000 UTC' "$T/pprof.out"
	# <module> keeps its name (no system_name for pprof to "demangle")
	pprof_ok "$T/p.pb.gz" -traces
	grep -q '<module>$' "$T/pprof.out"
}

@test "labels: thread id, interpreter id and thread state, usable with -tagfocus" {
	need_go
	tach-encode "$TESTDATA/pprof_small.samples" -o "$T/small.tach"
	tach2pprof -q "$T/small.tach" -o "$T/p.pb.gz"
	pprof_ok "$T/p.pb.gz" -tags -sample_index=samples
	grep -qx ' thread state: Total 5.0' "$T/pprof.out"
	grep -qx ' *3.0 (60.00%): gil+cpu' "$T/pprof.out"
	grep -qx ' *1.0 (20.00%): gil-wait' "$T/pprof.out"
	grep -qx ' *1.0 (20.00%): gil' "$T/pprof.out"
	grep -qx ' *4.0 (80.00%): 10' "$T/pprof.out"
	grep -qx ' *1.0 (20.00%): 11' "$T/pprof.out"
	# pprof drops numeric labels that are 0: interpreter 0 is not listed
	grep -qx ' interpreter id: Total 1.0' "$T/pprof.out"
	pprof_ok "$T/p.pb.gz" -top -sample_index=samples -tagfocus='thread state=gil-wait'
	# the empty stack's sample (thread 11, idle) counts in the total, in no function
	grep -q 'accounting for 1, 16.67% of 6 total$' "$T/pprof.out"
	grep -q ' sleep$' "$T/pprof.out"
	# Numeric tags take ranges; pprof notes that on stderr, and says nothing else.
	go tool pprof -top -sample_index=samples -tagfocus='thread id=10' "$T/p.pb.gz" \
		>"$T/pprof.out" 2>"$T/pprof.err"
	grep -q 'accounting for 4, 66.67% of 6 total$' "$T/pprof.out"
	[ "$(cat "$T/pprof.err")" = "tagfocus:Interpreted '10' as range, not regexp" ]
	go tool pprof -top -sample_index=samples -tagfocus='interpreter id=1' "$T/p.pb.gz" \
		>"$T/pprof.out" 2>"$T/pprof.err"
	grep -q 'accounting for 1, 16.67% of 6 total$' "$T/pprof.out"
	[ "$(cat "$T/pprof.err")" = "tagfocus:Interpreted '1' as range, not regexp" ]
}

@test "--no-labels: one sample per stack, no labels, same stacks" {
	need_go
	# rle_runs has one stack in several thread states, edge_ids_timestamps one in two threads
	local f
	for f in "$FIXTURES"/tach/cases/rle_runs.tach "$FIXTURES"/tach/cases/edge_ids_timestamps.tach; do
	tach2pprof -q "$f" -o "$T/l.pb.gz"
	tach2pprof -q --no-labels "$f" -o "$T/n.pb.gz"
	same_as_decode "$f" "$T/n.pb.gz"
	pprof_ok "$T/n.pb.gz" -raw
	! grep -q 'thread id' "$T/pprof.out" || false
	local with without
	with=$(go tool pprof -raw "$T/l.pb.gz" | grep -c '^ *[0-9]* *[0-9]*: [0-9 ]*$')
	without=$(grep -c '^ *[0-9]* *[0-9]*: [0-9 ]*$' "$T/pprof.out")
	[ "$without" -lt "$with" ]
	[ "$(stat -c %s "$T/n.pb.gz")" -lt "$(stat -c %s "$T/l.pb.gz")" ]
	done
}

@test "--cpu names the time values cpu/nanoseconds" {
	need_go
	tach2pprof --cpu "$FIXTURES/tach/cases/recursion.tach" -o "$T/p.pb.gz"
	pprof_ok "$T/p.pb.gz" -raw
	grep -qx 'PeriodType: cpu nanoseconds' "$T/pprof.out"
	grep -qx 'samples/count cpu/nanoseconds\[dflt\]' "$T/pprof.out"
	same_as_decode "$FIXTURES/tach/cases/recursion.tach" "$T/p.pb.gz"
}

@test "common filters apply before aggregation: --thread, --status, --from-us/--to-us" {
	need_go
	local f=$FIXTURES/tach/cases/threads_interleaved.tach tid
	tid=$(tach-decode --format samples "$f" | awk '!/^[@#]/ { print $1; exit }')
	tach2pprof --thread "$tid" "$f" -o "$T/p.pb.gz"
	tach-decode --thread "$tid" --format samples "$f" -o "$T/sel.samples"
	tach-encode "$T/sel.samples" -o "$T/sel.tach"
	same_as_decode "$T/sel.tach" "$T/p.pb.gz"
	tach2pprof --status gil "$f" -o "$T/g.pb.gz"
	tach-decode --status gil --format samples "$f" -o "$T/g.samples"
	tach-encode "$T/g.samples" -o "$T/g.tach"
	same_as_decode "$T/g.tach" "$T/g.pb.gz"
	pprof_ok "$T/g.pb.gz" -tags
	! grep -q ': none$' "$T/pprof.out" || false
	tach2pprof --from-us 1 --to-us 2 "$f" -o "$T/e.pb.gz"
	pprof_ok "$T/e.pb.gz" -raw
	! grep -q '^ *[0-9]* *[0-9]*: [0-9 ]*$' "$T/pprof.out" || false
}

# by_state: "thread state<TAB>stack<TAB>count" lines from tach-decode --format samples on
# stdin, one per distinct (thread, status, stack), sorted.
by_state() {
	awk -F'\t' '!/^[@#]/ { split($1, a, " "); n[a[1] " " a[4] "\t" $2]++ }
		END { for (k in n) print k "\t" n[k] }' | sort
}

@test "threads whose state changes from sample to sample: counts per thread, state and stack" {
	# two threads over three stacks, each thread in eight states in turn (more than a
	# thread's memos of the writer's aggregates hold), read back through the pprof reader
	awk 'BEGIN {
		print "@interval_us 100"
		split("0 1 2 3 4 5 8 9", state, " ")
		for (i = 0; i < 4000; i++)
			printf "%d 0 %d %d\ta.py:main:1:1:-1:-1:-;a.py:f%d:2:2:-1:-1:-\n", i % 2 + 1,
				1000000000 + 100 * i, state[int(i / 2) % 8 + 1], int(i / 16) % 3
	}' >"$T/st.samples"
	tach-encode "$T/st.samples" -o "$T/st.tach"
	tach2pprof -q "$T/st.tach" -o "$T/st.pb.gz"
	tach-decode --format samples "$T/st.tach" | by_state >"$T/want"
	tach-decode --from pprof --format samples "$T/st.pb.gz" | by_state >"$T/got"
	[ "$(wc -l <"$T/want")" -eq 48 ]
	diff -u "$T/want" "$T/got"
}

@test "output is deterministic and the same from stdin as from a file" {
	local f=$FIXTURES/tach/cases/many_frames.zstd.tach
	tach2pprof "$f" -o "$T/a.pb.gz"
	tach2pprof "$f" -o "$T/b.pb.gz"
	cmp "$T/a.pb.gz" "$T/b.pb.gz"
	tach2pprof <"$f" >"$T/c.pb.gz"
	cmp "$T/a.pb.gz" "$T/c.pb.gz"
	cat "$f" | tach2pprof - >"$T/d.pb.gz"
	cmp "$T/a.pb.gz" "$T/d.pb.gz"
}

@test "empty stacks are Samples without locations: pprof's total counts them, no warning" {
	need_go
	local f=$FIXTURES/tach/cases/empty_stack_first.tach
	# two of its three samples have no frames
	[ "$(tach-decode -F samples "$f" | grep -c $'\t$')" -eq 2 ]
	run --separate-stderr tach2pprof "$f" -o "$T/p.pb.gz"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	go tool pprof -top -sample_index=samples "$T/p.pb.gz" >"$T/top" 2>/dev/null
	grep -q 'Showing nodes accounting for 1, 33.33% of 3 total' "$T/top"
	# the Samples as protoc sees them: the empty stacks' (one thread, one state) has no
	# location_id field (1) at all
	command -v protoc >/dev/null || skip "protoc not installed"
	gzip -dc "$T/p.pb.gz" | protoc --decode_raw >"$T/raw"
	[ "$(grep -c '^2 {' "$T/raw")" -eq 2 ]
	[ "$(awk '/^2 {/ { getline; if ($0 !~ /^  1: /) n++ } END { print n + 0 }' "$T/raw")" -eq 1 ]
}

@test "an empty profile is a valid profile with no samples" {
	need_go
	tach2pprof "$FIXTURES/tach/cases/empty.tach" -o "$T/p.pb.gz"
	pprof_ok "$T/p.pb.gz" -raw
	grep -qx 'samples/count wall/nanoseconds\[dflt\]' "$T/pprof.out"
	! grep -q '^ *[0-9]* *[0-9]*: [0-9 ]*$' "$T/pprof.out" || false
}

@test "damaged TACH files: exit 1 with tach-decode's message, no -o file left" {
	local f want
	for f in "$FIXTURES"/tach/errors/err_*.tach; do
		if tach-decode "$f" >/dev/null 2>"$T/want.err"; then
			continue
		fi
		sed 's/^tach-decode:/tach2pprof:/' "$T/want.err" >"$T/want2.err"
		run tach2pprof "$f" -o "$T/out.pb.gz"
		[ "$status" -eq 1 ]
		diff -u "$T/want2.err" <(printf '%s\n' "$output")
		[[ "$output" == *"tach2pprof: $f: offset "* ]]
		[ ! -e "$T/out.pb.gz" ]
		[ -z "$(ls "$T" | grep '^out\.pb\.gz\.')" ]
	done
}

@test "not a TACH file: exit 1" {
	printf 'hello\n' >"$T/x.txt"
	run tach2pprof "$T/x.txt" -o "$T/o.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2pprof: $T/x.txt: "* ]]
	[ ! -e "$T/o.pb.gz" ]
}

@test "I/O errors: missing input, unwritable output, full disk" {
	run tach2pprof "$T/missing.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2pprof: $T/missing.tach: No such file or directory" ]]
	run tach2pprof "$FIXTURES/tach/cases/recursion.tach" -o "$T/no/such/dir/p.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2pprof: $T/no/such/dir/p.pb.gz: "* ]]
	# (-o /dev/full would rename a temporary file over the device: not done here)
	[ -c /dev/full ] || skip "/dev/full is not the full device on this machine"
	run bash -c 'tach2pprof "$1" >/dev/full' _ "$FIXTURES/tach/cases/many_frames.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach2pprof: <stdout>: "*"No space left on device"* ]]
}

@test "usage errors exit 2" {
	run tach2pprof --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach2pprof: invalid option --bogus"* ]]
	# (two inputs are one profile: two missing files are an I/O error, not a usage one)
	run tach2pprof a.tach b.tach
	[ "$status" -eq 1 ]
	run tach2pprof --max-depth 0 "$FIXTURES/tach/cases/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2pprof --status sleepy "$FIXTURES/tach/cases/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2pprof --format pprof "$FIXTURES/tach/cases/recursion.tach"
	[ "$status" -eq 2 ]
}

@test "--max-depth and --strict reach the TACH reader" {
	run tach2pprof --max-depth 10 "$FIXTURES/tach/cases/deep_stack_300.tach" -o "$T/p.pb.gz"
	[ "$status" -eq 1 ]
	[ ! -e "$T/p.pb.gz" ]
	run tach2pprof --strict "$FIXTURES/tach/errors/err_footer_filesize_wrong.tach" -o "$T/p.pb.gz"
	[ "$status" -eq 1 ]
	run tach2pprof -v "$FIXTURES/tach/cases/recursion.tach" -o "$T/p.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" == *"samples read"* ]]
}

@test "--help lists every option, -V the versions" {
	run tach2pprof --help
	[ "$status" -eq 0 ]
	local o
	for o in --no-gzip --level --cpu --no-labels --output --force --quiet --verbose --strict \
		--max-depth --thread --status --from-us --to-us --help --version; do
		[[ "$output" == *"$o"* ]]
	done
	run tach2pprof -V
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "tach2pprof (tachfmt) "* ]]
	[[ "${lines[1]}" == "libtachfmt "* ]]
}

# Other inputs reach pprof through TACH: gperftools profiles (gperf2tach) and folded stacks
# (collapsed2tach). These run once those programs are built.

@test "gperftools fixtures through gperf2tach: same stacks as tach-decode, pprof's totals" {
	need_go
	command -v gperf2tach >/dev/null || skip "gperf2tach not built"
	local c total prof dir
	for c in recursive/recursive:146 hotloop/hotloop:221 sharedlib/sharedlib:108 \
		long/hotloop_long:8771; do
		total=${c#*:}
		prof=$FIXTURES/gperf/${c%:*}.prof
		dir=$(dirname "$prof")
		gperf2tach -q --binary-path "$dir" "$prof" >"$T/g.tach"
		gperf2tach -q --binary-path "$dir" "$prof" | tach2pprof --cpu -o "$T/g.pb.gz"
		same_as_decode "$T/g.tach" "$T/g.pb.gz"
		pprof_ok "$T/g.pb.gz" -top -sample_index=samples
		grep -q "of $total total\$" "$T/pprof.out" || {
			echo "$prof: pprof does not show $total samples" >&2
			return 1
		}
	done
	# The hottest functions as google/pprof itself showed them from the original profile.
	gperf2tach -q --binary-path "$FIXTURES/gperf/recursive" \
		"$FIXTURES/gperf/recursive/recursive.prof" | tach2pprof --cpu -o "$T/r.pb.gz"
	pprof_ok "$T/r.pb.gz" -top
	grep -qx 'Type: cpu' "$T/pprof.out"
	grep -A3 '^ *flat ' "$FIXTURES/gperf/recursive/recursive.pprof.top.txt" | tail -n 3 >"$T/want.txt"
	grep -A3 '^ *flat ' "$T/pprof.out" | tail -n 3 | diff -u "$T/want.txt" -
}

@test "folded stacks through collapsed2tach: same stacks and totals" {
	need_go
	command -v collapsed2tach >/dev/null || skip "collapsed2tach not built"
	collapsed2tach "$TESTDATA/pprof_example.folded" >"$T/f.tach"
	collapsed2tach "$TESTDATA/pprof_example.folded" | tach2pprof -o "$T/f.pb.gz"
	same_as_decode "$T/f.tach" "$T/f.pb.gz"
	local want
	want=$(awk '{ s += $NF } END { print s }' "$TESTDATA/pprof_example.folded")
	pprof_ok "$T/f.pb.gz" -top -sample_index=samples
	grep -q "of $want total\$" "$T/pprof.out"
}

@test "a folded-style profile made with tach-encode: stacks and totals" {
	need_go
	tach-encode "$TESTDATA/pprof_folded.samples" -o "$T/f.tach"
	tach2pprof "$T/f.tach" -o "$T/f.pb.gz"
	same_as_decode "$T/f.tach" "$T/f.pb.gz"
	pprof_ok "$T/f.pb.gz" -top -sample_index=samples
	grep -q 'of 12 total$' "$T/pprof.out"
	grep -q '^ *7 .*  *leaf_b$' "$T/pprof.out"
}

@test "man page documents every option of --help" {
	tach2pprof --help | grep -o -- ' --[a-z][a-z-]*' | sed 's/^ //' | sort -u >"$T/help.txt"
	sed -n 's/^\*\(-[a-zA-Z], \)\{0,1\}\(--[a-z-]*\)\*.*/\2/p' "$SOURCE_ROOT/docs/tach2pprof.1.scd" |
		sort -u | diff -u "$T/help.txt" -
}

@test "thread ids past 2^63-1 stay exact (a string label), and a CPU profiler's profile is cpu time" {
	need_go
	tach2pprof --no-gzip "$FIXTURES/tach/cases/edge_ids_timestamps.tach" -o "$T/e.pb"
	run go tool pprof -raw "$T/e.pb"
	[ "$status" -eq 0 ]
	[[ $output == *"thread id:[18446744073709551615]"* ]]
	[[ $output != *"thread id:-"* ]]
	# smaller ids stay numeric labels
	run go tool pprof -tags "$T/e.pb"
	[[ $output == *"thread id"* ]]
	# gperftools profiles are marked as CPU profiles (TACH profiling mode cpu), so the
	# time sample type is cpu without --cpu
	gperf2tach -q --no-symbolize "$FIXTURES/gperf/hotloop/hotloop.prof" -o "$T/h.tach"
	tach-decode -F info "$T/h.tach" | grep -qx 'profiling_config: 2'
	tach2pprof --no-gzip "$T/h.tach" -o "$T/h.pb"
	run go tool pprof -raw "$T/h.pb"
	[[ $output == *"PeriodType: cpu nanoseconds"* ]]
	# and the samples text keeps the profiling mode
	tach-decode -F samples "$T/h.tach" | tach-encode -o "$T/h2.tach"
	tach-decode -F info "$T/h2.tach" | grep -qx 'profiling_config: 2'
}

@test "gzip on worker threads: the same bytes for any number, its write error, nothing on failure" {
	gzip_thread_check tach2pprof pb.gz "$T" "$FIXTURES/tach/cases/many_frames.tach"
}

@test "gzip of many chunks, made on workers: go tool pprof reads the same stacks and totals" {
	need_go
	gzip_big_profile "$T/big.tach"
	TACHFMT_THREADS=2 tach2pprof "$T/big.tach" -o "$T/p.pb.gz"
	[ "$(gzip -dc "$T/p.pb.gz" | wc -c)" -gt $((4 * 131072)) ]
	same_as_decode "$T/big.tach" "$T/p.pb.gz"
}

@test "high-cardinality input (past the lookahead threshold): read back, the lines its counts add up to" {
	python3 "$TESTDATA/wide_folded.py" "$T/wide.folded" "$T/want"
	tach2pprof "$T/wide.folded" -o "$T/wide.pb.gz"
	tach-decode "$T/wide.pb.gz" >"$T/got"
	cmp "$T/got" "$T/want"
}

@test "stacks that many threads share, each looked up whole: read back, each thread's lines" {
	python3 "$TESTDATA/shared_folded.py" "$T/shared.folded" "$T/want"
	tach2pprof "$T/shared.folded" -o "$T/shared.pb.gz"
	tach-decode "$T/shared.pb.gz" >"$T/got"
	cmp "$T/got" "$T/want"
}

@test "gperf2tach --no-symbolize | tach2pprof: go tool pprof BINARY names functions from a binary not at its recorded path" {
	need_go
	local h=$FIXTURES/gperf/hotloop recorded=/srv/profiles/gperf-fixtures/hotloop/hotloop
	[ ! -e "$recorded" ] || skip "the profiled binary is at its recorded path here"
	mkdir "$T/elsewhere"
	cp "$h/hotloop" "$T/elsewhere/hotloop"
	# TACH has no mapping table: a module+offset frame carries its mapping's file offset
	# (the r-xp line at 0x1000 in the profile's memory map) in its column
	gperf2tach -q --no-symbolize "$h/hotloop.prof" -o "$T/h.tach"
	tach-decode -F samples "$T/h.tach" | grep -q "$recorded:hotloop+0x129f:-:-:4096:4096:-;"
	tach2pprof -q -o "$T/via.pb.gz" <"$T/h.tach"
	tach2pprof -q --no-symbolize "$h/hotloop.prof" -o "$T/direct.pb.gz"
	go tool pprof -raw "$T/via.pb.gz" 2>/dev/null | grep -q "^ *1: 0x[0-9a-f]*/0x[0-9a-f]*/0x1000 $recorded "
	go tool pprof -top "$T/elsewhere/hotloop" "$T/direct.pb.gz" 2>/dev/null | sed -n '/flat%/,$p' >"$T/direct.top"
	go tool pprof -top "$T/elsewhere/hotloop" "$T/via.pb.gz" 2>/dev/null | sed -n '/flat%/,$p' >"$T/via.top"
	grep -q ' compute_heavy$' "$T/via.top"
	diff -u "$T/direct.top" "$T/via.top"
}

@test "a merge of many threads' profiles: a word on --no-labels, which writes one Sample per stack" {
	awk 'BEGIN { print "@interval_us 1000"
		for (t = 1; t <= 600; t++) printf "%d 0 %d 2\tw.py:hot:3;w.py:main:1\n", t, t * 1000 }' >"$T/many.samples"
	tach-encode "$T/many.samples" -o "$T/many.tach"
	run tach2pprof "$T/many.tach" -o "$T/many.pb.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "tach2pprof: $T/many.tach: warning: 600 threads and states, each its own label set: a stack is a Sample per thread (600 Samples), which go tool pprof is slow to open; labels=no (tach2pprof --no-labels) writes one per stack" ]
	run tach2pprof --no-labels "$T/many.tach" -o "$T/one.pb.gz"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	[ "$(tach-decode -q "$T/one.pb.gz")" = "tid:0;w.py:main:1;w.py:hot:3 600" ]
	# below the threshold: no word
	head -n 300 "$T/many.samples" | tach-encode -o "$T/few.tach"
	run tach2pprof "$T/few.tach" -o "$T/few.pb.gz"
	[ -z "$output" ]
}

@test "times are the samples' own: each stack's nanoseconds the sum of its samples' times" {
	need_go
	# 1 ms interval; samples of their own times (V8's time to the next, perf periods):
	# 2.5 ms, 0.3 ms, a record of 3 samples standing for 4 ms, and one interval
	printf '@interval_us 1000\n%s\n%s\n%s\n%s\n' \
		$'1 0 1000 2 2500000\tt.py:f:1;t.py:main:9' \
		$'1 0 3500 2 300000\tt.py:g:2;t.py:main:9' \
		$'1 0 3800 2 4000000 3\tt.py:f:1;t.py:main:9' \
		$'1 0 9000 2\tt.py:main:9' >"$T/t.samples"
	tach2pprof --no-gzip --from samples "$T/t.samples" -o "$T/t.pb"
	pprof_ok "$T/t.pb" -raw
	python3 "$SOURCE_ROOT/tests/pprof_stacks.py" raw <"$T/pprof.out" >"$T/got"
	python3 "$SOURCE_ROOT/tests/pprof_stacks.py" samples <"$T/t.samples" >"$T/want"
	diff -u "$T/want" "$T/got"
	# f: 4 samples, 6.5 ms; g: 1 sample, 0.3 ms; main alone: 1 ms
	grep -qx $'main t.py:9;f t.py:1\t4\t6500000' "$T/got"
	grep -qx $'main t.py:9;g t.py:2\t1\t300000' "$T/got"
	pprof_ok "$T/t.pb" -top -nodecount=10
	grep -q 'Showing nodes accounting for 7800us, 100% of 7800us total' "$T/pprof.out"
	# samples that carry no time: counts alone, said once
	printf '@interval_us 0\n1 0 10 0\ta.py:f:1\n' >"$T/n.samples"
	run tach2pprof --no-gzip --from samples "$T/n.samples" -o "$T/n.pb"
	[ "$status" -eq 0 ]
	[ "$output" = "tach2pprof: $T/n.samples: warning: the samples carry no time (no interval, no time of their own): only their counts are written (samples/count)" ]
	pprof_ok "$T/n.pb" -raw
	grep -qx 'samples/count\[dflt\]' "$T/pprof.out"
}
