#!/usr/bin/env bats
# tach2callgrind as a user runs it: on real profiles (gperftools with recursion and inline
# frames, one recorded here; CPython's TACH; perf script) callgrind_annotate's self,
# inclusive and total costs equal what tests/cli/callgrind_check.py counts from tach-decode's
# samples text; the file's header, names and positions; every error path.

setup() {
	T=$BATS_TEST_TMPDIR
	CASES=$FIXTURES/tach/cases
	GPERF=$FIXTURES/gperf
	unset TACHFMT_BINARY_PATH
}

need_annotate() {
	command -v callgrind_annotate >/dev/null ||
		skip "callgrind_annotate not installed (Debian package valgrind)"
}

# Profiles tests/data/callgrind/sort.c (recursion, an inlined function) into $T/sort.prof;
# it runs until it has used 0.3 s of CPU time, so there are samples on any machine.
record_sort() {
	command -v gcc >/dev/null || skip "gcc not installed"
	ldconfig -p | grep -q 'libprofiler\.so\.0 ' ||
		skip "gperftools' libprofiler not installed (Debian package libgoogle-perftools-dev)"
	cp "$TESTDATA/callgrind/sort.c" "$T/sort.c"
	gcc -O2 -g -o "$T/sort" "$T/sort.c"
	CPUPROFILE="$T/sort.prof" CPUPROFILE_FREQUENCY=1000 LD_PRELOAD=libprofiler.so.0 \
		"$T/sort" 0.3 >/dev/null 2>"$T/profiler.err"
	[ -s "$T/sort.prof" ]
}

# pair NAME INPUT [OPTIONS...]: $T/NAME.txt (samples) and $T/NAME.cg, appended to PAIRS.
pair() {
	local name=$1 in=$2
	shift 2
	tach-decode -q --format samples "$@" "$in" >"$T/$name.txt"
	tach2callgrind -q "$@" "$in" -o "$T/$name.cg"
	PAIRS+=("$T/$name.txt" "$T/$name.cg")
}

@test "real profiles: callgrind_annotate's self, inclusive and total costs are the samples'" {
	need_annotate
	record_sort
	PAIRS=()
	pair sort "$T/sort.prof"
	# the recorded profile has what the check is about: recursion and an inline frame
	grep -q "sort.c:less:[0-9]*:[0-9]*:[0-9]*:-1:-;$T/sort.c:partition_and_recurse:" "$T/sort.txt"
	grep -Eq "partition_and_recurse:.*partition_and_recurse:.*partition_and_recurse:" "$T/sort.txt"
	local c
	for c in recursive hotloop sharedlib; do
		pair "g-$c" "$GPERF/$c/$c.prof" --binary-path "$GPERF/$c"
	done
	pair g-nosym "$GPERF/recursive/recursive.prof" --no-symbolize
	for c in recursion deep_stack_300 threads_interleaved non_ascii synthetic_frames rle_runs \
		transitions many_frames edge_ids_timestamps; do
		pair "t-$c" "$CASES/$c.tach"
	done
	pair p-sort "$FIXTURES/perf/real/sort-fp.perf"
	pair p-python "$FIXTURES/perf/real/python-x-perf.perf"
	# the check of the check: another profile's samples, and one self cost moved
	PAIRS+=("!$T/t-recursion.txt" "$T/t-rle_runs.cg")
	awk '!done && /^0x[0-9a-f]* [0-9]* [1-9]/ { $3 = $3 + 1; done = 1 } { print }' \
		"$T/g-recursive.cg" >"$T/moved.cg"
	PAIRS+=("!$T/g-recursive.txt" "$T/moved.cg")
	run python3 "$SOURCE_ROOT/tests/cli/callgrind_check.py" "${PAIRS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c ', ok$' <<<"$output")" -eq 16 ]
	[ "$(grep -c 'disagrees as it must$' <<<"$output")" -eq 2 ]
}

@test "recursion: inclusive costs count a function once per sample" {
	need_annotate
	tach2callgrind --binary-path "$GPERF/recursive" "$GPERF/recursive/recursive.prof" -o "$T/r.cg"
	# pprof gives 146 samples; even_step is on the stack of 121, however deep it recurses
	(cd / && callgrind_annotate --show=Samples --inclusive=yes "$T/r.cg") >"$T/incl.txt"
	grep -q '^146 (100.0%)  PROGRAM TOTALS$' "$T/incl.txt"
	grep -q '^121 (82.88%)  .*recursive.c:even_step \[' "$T/incl.txt"
	# the time: 146 samples of 1 ms (the profile's interval)
	(cd / && callgrind_annotate --show=Time_ns --inclusive=yes "$T/r.cg") >"$T/time.txt"
	grep -q '^146,000,000 (100.0%)  PROGRAM TOTALS$' "$T/time.txt"
	grep -q '^121,000,000 (82.88%)  .*recursive.c:even_step \[' "$T/time.txt"
	# calls that re-enter a function already on the stack cost 0, and there are such calls
	grep -A2 '^cfn=(1)$' "$T/r.cg" | grep -q '^0x[0-9a-f]* [0-9]* 0 0$'
}

@test "the file: header, compressed names, Python lines, native objects and addresses" {
	tach2callgrind "$CASES/recursion.tach" -o "$T/p.cg"
	run sed -n '1,7p' "$T/p.cg"
	[ "${lines[0]}" = "# callgrind format" ]
	[ "${lines[1]}" = "version: 1" ]
	[ "${lines[2]}" = "creator: tachfmt $(tach2callgrind -V | sed -n 's/^libtachfmt //p')" ]
	[ "${lines[3]}" = "positions: line" ]
	[[ "${lines[4]}" == "event: Samples : Samples, one per "*" us" ]]
	[ "${lines[5]}" = "event: Time_ns : Time (nanoseconds)" ]
	[ "${lines[6]}" = "events: Samples Time_ns" ]
	local n iv
	n=$(tach-decode --format samples "$CASES/recursion.tach" | grep -vc '^@')
	iv=$(tach-decode --format samples "$CASES/recursion.tach" | sed -n 's/^@interval_us //p')
	[ "$(tail -n 1 "$T/p.cg")" = "totals: $n $((n * iv * 1000))" ]
	# Python frames: no objects, their files and lines
	! grep -q '^c\{0,1\}ob=' "$T/p.cg" || false
	local file
	file=$(tach-decode --format samples "$CASES/recursion.tach" | awk -F'\t' '!/^@/ { print $2; exit }' |
		cut -d: -f1)
	grep -q "^fl=([0-9]*) $file\$" "$T/p.cg"
	# each name is given once per kind, with its number, and referenced by number after
	tach2callgrind --binary-path "$GPERF/recursive" "$GPERF/recursive/recursive.prof" -o "$T/n.cg"
	local kind f
	for kind in 'fl|fi|fe|cfi|cfl' 'fn|cfn' 'ob|cob'; do
		for f in "$T/p.cg" "$T/n.cg"; do
			[ -z "$(grep -E "^($kind)=\([0-9]+\) " "$f" | sed 's/^[a-z]*=//; s/ .*//' |
				sort | uniq -d)" ]
		done
	done
	[ "$(grep -c '^fn=([0-9]*)$' "$T/n.cg")" -gt 0 ]
	# native frames: their object and address
	grep -q '^positions: instr line$' "$T/n.cg"
	grep -q "^ob=([0-9]*) /srv/profiles/gperf-fixtures/recursive/recursive$" "$T/n.cg"
	grep -q '^0x40119d 19 [0-9]* [0-9]*$' "$T/n.cg"
	grep -q '^cmd: /srv/profiles/gperf-fixtures/recursive/recursive$' "$T/n.cg"
}

@test "events: samples and their time; a pprof profile's own types, the chosen one first" {
	tach2callgrind "$GPERF/recursive/recursive.pprof.pb.gz" -o "$T/c.cg"
	grep -q '^events: cpu samples$' "$T/c.cg"
	grep -q '^event: cpu : cpu (nanoseconds)$' "$T/c.cg"
	grep -q '^event: samples : samples (count)$' "$T/c.cg"
	# 146 samples of 1 ms
	[ "$(tail -n 1 "$T/c.cg")" = "totals: 146000000 146" ]
	tach2callgrind --sample-index samples "$GPERF/recursive/recursive.pprof.pb.gz" -o "$T/s.cg"
	grep -q '^events: samples cpu$' "$T/s.cg"
	[ "$(tail -n 1 "$T/s.cg")" = "totals: 146 146000000" ]
	# samples that carry no time: Samples alone
	printf '@interval_us 0\n1 0 10 0\ta.py:f:1\n' | tach2callgrind -o "$T/n.cg"
	grep -q '^events: Samples$' "$T/n.cg"
	[ "$(tail -n 1 "$T/n.cg")" = "totals: 1" ]
}

@test "a Go heap profile: an event per sample type, each one's total pprof's own" {
	need_annotate
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	# other projects' files, beside the source tree (PEERS: elsewhere, e.g. for a worktree)
	local heap=${PEERS:-$SOURCE_ROOT/../shared/peers}/corpora/pprof/gobench.heap
	[ -f "$heap" ] || skip "../shared/peers is not there"
	export HOME=$T PPROF_TMPDIR=$T
	go tool pprof -proto "$heap" >"$T/h.pb.gz" 2>/dev/null
	tach2callgrind "$T/h.pb.gz" -o "$T/h.cg"
	# the default type (inuse_space) first, then the others in the profile's order
	grep -qx 'events: inuse_space alloc_objects alloc_space inuse_objects' "$T/h.cg"
	grep -qx 'event: alloc_space : alloc_space (bytes)' "$T/h.cg"
	# pprof's own sums of each type, samples with no inuse value (freed objects) included
	local sums
	sums=$(go tool pprof -raw "$T/h.pb.gz" 2>/dev/null | awk '
		/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && /^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { for (i = 1; i <= 4; i++) t[i] += $i }
		END { print t[4], t[1], t[2], t[3] }')
	[ "$(tail -n 1 "$T/h.cg")" = "totals: $sums" ]
	(cd / && callgrind_annotate --show=alloc_objects "$T/h.cg") >"$T/h.txt"
	local n
	n=$(python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$(cut -d' ' -f2 <<<"$sums")")
	grep -q "^$n (100.0%)  PROGRAM TOTALS$" "$T/h.txt"
}

@test "an empty profile, control characters, the same bytes twice" {
	tach2callgrind "$CASES/empty.tach" -o "$T/e.cg"
	[ "$(grep -v '^#' "$T/e.cg" | grep -c '^[cf][a-z]*=')" -eq 0 ]
	[ "$(tail -n 1 "$T/e.cg")" = "totals: 0 0" ]
	printf '1 0 10 0\ta%%0Ab.py:f%%09g:3;%%0D:main:-\n' >"$T/c.samples"
	tach-encode "$T/c.samples" -o "$T/c.tach"
	run tach2callgrind "$T/c.tach" -o "$T/c.cg"
	[ "$status" -eq 0 ]
	[ "$output" = "tach2callgrind: $T/c.tach: warning: a name contains control characters: written as '?'" ]
	grep -q '^fl=([0-9]*) a?b.py$' "$T/c.cg"
	grep -q '^fn=([0-9]*) f?g$' "$T/c.cg"
	grep -q '^fl=([0-9]*) ?$' "$T/c.cg"
	tach2callgrind -q "$T/c.tach" -o "$T/c2.cg"
	cmp "$T/c.cg" "$T/c2.cg"
	tach2callgrind "$CASES/threads_interleaved.tach" >"$T/t1.cg"
	tach2callgrind "$CASES/threads_interleaved.tach" >"$T/t2.cg"
	cmp "$T/t1.cg" "$T/t2.cg"
}

@test "I/O errors: missing input, bad input, unwritable output, full disk" {
	run tach2callgrind "$T/missing.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach2callgrind: $T/missing.tach: No such file or directory" ]
	run tach2callgrind "$FIXTURES/tach/errors/err_bad_magic.tach" -o "$T/b.cg"
	[ "$status" -eq 1 ]
	[ ! -e "$T/b.cg" ]
	run tach2callgrind "$CASES/recursion.tach" -o "$T/no/such/dir/p.cg"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2callgrind: $T/no/such/dir/p.cg: "* ]]
	[ -c /dev/full ] || skip "/dev/full is not the full device on this machine"
	run bash -c 'tach2callgrind "$1" >/dev/full' _ "$CASES/many_frames.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach2callgrind: <stdout>: "*"No space left on device"* ]]
}

@test "usage errors exit 2; --max-depth reaches the reader" {
	run tach2callgrind --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach2callgrind: invalid option --bogus"* ]]
	# (two inputs are one profile: two missing files are an I/O error, not a usage one)
	run tach2callgrind a.tach b.tach
	[ "$status" -eq 1 ]
	run tach2callgrind --format callgrind "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2callgrind --max-depth 10 "$CASES/deep_stack_300.tach" -o "$T/p.cg"
	[ "$status" -eq 1 ]
	[ ! -e "$T/p.cg" ]
	run tach2callgrind --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"callgrind_annotate"* ]]
}

@test "callgrind_annotate run where the sources are: calls within a file keep its short name" {
	need_annotate
	record_sort
	tach2callgrind -q "$T/sort.prof" -o "$T/s.cg"
	# no cfi= for a call within one file: callgrind_annotate would not shorten it
	local id full short
	id=$(sed -n 's/^c\{0,1\}fn=(\([0-9]*\)) partition_and_recurse$/\1/p' "$T/s.cg" | head -n 1)
	[ -n "$id" ]
	grep -q "^cfn=($id)" "$T/s.cg"
	! grep -B1 "^cfn=($id)" "$T/s.cg" | grep -q '^cfi=' || false
	full=$(cd / && callgrind_annotate --inclusive=yes "$T/s.cg" |
		sed -n "s|^ *\([0-9,]*\) .*  $T/sort.c:partition_and_recurse \[.*|\1|p")
	short=$(cd "$T" && callgrind_annotate --inclusive=yes "$T/s.cg" |
		sed -n "s|^ *\([0-9,]*\) .*  sort.c:partition_and_recurse \[.*|\1|p")
	[ -n "$full" ]
	[ "$short" = "$full" ]
}

@test "empty stacks are counted, as the cost of \"(no stack)\": the totals are the profile's" {
	need_annotate
	local f=$FIXTURES/tach/cases/empty_stack_first.tach
	run tach2callgrind "$f" -o "$T/e.cg"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# 3 samples of 1 ms, 2 of them with an empty stack
	[ "$(grep '^totals:' "$T/e.cg")" = "totals: 3 3000000" ]
	(cd / && callgrind_annotate --show=Samples "$T/e.cg") >"$T/e.txt"
	grep -q '^3 (100.0%)  PROGRAM TOTALS$' "$T/e.txt"
	grep -q '^2 (66.67%)  ???:(no stack)$' "$T/e.txt"
	tach-decode -F samples "$f" >"$T/e.samples"
	python3 "$SOURCE_ROOT/tests/cli/callgrind_check.py" "$T/e.samples" "$T/e.cg"
}
