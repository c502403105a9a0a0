#!/usr/bin/env bats
# tach-merge as a user runs it: merges checked against the inputs sample by sample
# (tests/cli/merge_check.py, with Python's heapq.merge as the reference k-way merge), totals
# against the sum of the inputs' and against `go tool pprof` merging the same inputs,
# associativity, every option and every error path.

setup() {
	TMP=$(mktemp -d)
	C=$FIXTURES/tach/cases
	FG=$FIXTURES/flamegraph/inputs
	CHECK="python3 $SOURCE_ROOT/tests/cli/merge_check.py"
	TOTALS="python3 $SOURCE_ROOT/tests/cli/pprof_totals.py"
	GEN="python3 $SOURCE_ROOT/tests/cli/pprof_gen.py"
	STACKS="python3 $SOURCE_ROOT/tests/pprof_stacks.py"
	export HOME=$TMP PPROF_TMPDIR=$TMP
}

teardown() {
	rm -rf "$TMP"
}

samples() { # TACH -> samples text in $TMP/NAME.s
	tach-decode --format samples "$1" >"$TMP/$(basename "$1").s"
}

# merged_like INPUTS...: tach-merge's output ($TMP/m.tach) is the k-way merge of INPUTS.
merged_like() {
	local f args=()
	samples "$TMP/m.tach"
	for f in "$@"; do
		samples "$f"
		args+=("$TMP/$(basename "$f").s")
	done
	$CHECK $MODE "$TMP/m.tach.s" "${args[@]}"
}

# Collapsed stacks summed per stack, sorted: the independent total of several inputs.
summed() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n } END { for (k in s) print k, s[k] }' |
		LC_ALL=C sort
}

@test "help lists the options; version names the library" {
	run tach-merge --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: tach-merge [OPTION]... FILE..."* ]]
	[[ "$output" == *"--concat"* && "$output" == *"--tag-inputs"* && "$output" == *"--from FORMAT"* ]]
	run tach-merge --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"libtachfmt"* ]]
}

@test "--from offers and takes every format the library reads" {
	local f want got
	want=$("$BUILD_ROOT/tests/list_formats" read | tr ' ' '\n' | sort | xargs)
	got=$(tach-merge --help | sed -n 's/.*--from FORMAT .*(\(.*\))$/\1/p' | tr ' ' '\n' | sort | xargs)
	[ -n "$want" ] && [ "$want" = "$got" ]
	for f in $want; do
		run tach-merge --from "$f" -o "$TMP/o" /dev/null
		[ "$status" -ne 2 ] || { echo "--from $f: $output"; false; }
	done
}

@test "usage errors exit 2" {
	run tach-merge
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach-merge: 1 or more input files needed, not 0"* ]]
	run tach-merge - - </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach-merge: standard input (-) given more than once"* ]]
	run tach-merge --from pdf "$C/recursion.tach"
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach-merge: unknown --from pdf (one of: tach gperf otlp pprof"* ]]
	run tach-merge --bogus "$C/recursion.tach"
	[ "$status" -eq 2 ]
	run tach-merge --compression lz4 "$C/recursion.tach" "$C/rle_runs.tach"
	[ "$status" -eq 2 ]
	run tach-merge --max-depth 0 "$C/recursion.tach" "$C/rle_runs.tach"
	[ "$status" -eq 2 ]
	run tach-merge -F pprof --compression none "$C/recursion.tach" -o "$TMP/m"
	[ "$status" -eq 2 ]
	[[ "$output" == "tach-merge: --compression applies to --format tach only"* ]]
	run tach-merge -F gecko "$C/recursion.tach" -o "$TMP/m"
	[ "$status" -eq 2 ]
	[[ "$output" == "tach-merge: unknown --format gecko"* ]]
	[ -z "$(ls "$TMP")" ]
}

@test "samples interleave by timestamp, ties in input order, each thread in order" {
	tach-merge "$C/threads_interleaved.tach" "$C/recursion.tach" "$C/rle_runs.tach" \
		"$C/transitions.tach" "$C/edge_ids_timestamps.tach" -o "$TMP/m.tach"
	merged_like "$C/threads_interleaved.tach" "$C/recursion.tach" "$C/rle_runs.tach" \
		"$C/transitions.tach" "$C/edge_ids_timestamps.tach"
	# one input twice: every sample ties with its copy
	tach-merge "$C/transitions.tach" "$C/transitions.zstd.tach" -o "$TMP/m.tach"
	merged_like "$C/transitions.tach" "$C/transitions.zstd.tach"
	# the checker can fail: the order reversed is another merge
	tach-merge "$C/rle_runs.tach" "$C/recursion.tach" -o "$TMP/m.tach"
	run merged_like "$C/threads_interleaved.tach" "$C/recursion.tach"
	[ "$status" -ne 0 ]
}

@test "--concat writes input after input" {
	# the same threads in two inputs: their samples come input after input
	tach-merge --concat "$C/transitions.tach" "$C/recursion.tach" "$C/transitions.zstd.tach" \
		-o "$TMP/m.tach"
	MODE=--concat merged_like "$C/transitions.tach" "$C/recursion.tach" "$C/transitions.zstd.tach"
	run merged_like "$C/transitions.tach" "$C/recursion.tach" "$C/transitions.zstd.tach"
	[ "$status" -ne 0 ]
}

@test "collapsed totals of a merge are the sum of the inputs'" {
	local f ins=("$C/threads_interleaved.tach" "$C/recursion.tach" "$C/deep_stack_300.tach"
		"$C/non_ascii.tach" "$C/rle_long_10000.zstd.tach" "$C/many_frames.tach")
	tach-merge "${ins[@]}" -o "$TMP/m.tach"
	for f in "${ins[@]}"; do tach-decode "$f"; done | summed >"$TMP/want"
	tach-decode "$TMP/m.tach" | summed >"$TMP/got"
	diff -u "$TMP/want" "$TMP/got"
	[ "$(wc -l <"$TMP/got")" -gt 20 ]
	# the same through --no-thread-frames and the pyspy labels
	for f in "${ins[@]}"; do tach-decode --no-thread-frames --labels pyspy "$f"; done | summed >"$TMP/want"
	tach-decode --no-thread-frames --labels pyspy "$TMP/m.tach" | summed >"$TMP/got"
	diff -u "$TMP/want" "$TMP/got"
}

@test "associative: merging merges equals merging the originals" {
	local a=$C/threads_interleaved.tach b=$C/recursion.tach c=$C/transitions.tach d=$C/rle_runs.tach
	tach-merge "$a" "$b" "$c" "$d" -o "$TMP/flat.tach"
	tach-merge "$a" "$b" -o "$TMP/ab.tach"
	tach-merge "$c" "$d" -o "$TMP/cd.tach"
	tach-merge "$TMP/ab.tach" "$TMP/cd.tach" -o "$TMP/tree.tach"
	tach-merge "$b" "$c" -o "$TMP/bc.tach"
	tach-merge "$a" "$TMP/bc.tach" "$d" -o "$TMP/mid.tach"
	tach-merge "$TMP/ab.tach" "$c" "$d" -o "$TMP/left.tach"
	tach-decode --format samples "$TMP/flat.tach" >"$TMP/flat.s"
	[ "$(grep -vc '^@' "$TMP/flat.s")" -gt 300 ]
	for t in tree mid left; do
		tach-decode --format samples "$TMP/$t.tach" | diff -u "$TMP/flat.s" - || { echo "$t"; false; }
	done
}

@test "a fleet reduced in a tree with xargs -P, as the README shows it, run twice" {
	mkdir "$TMP/fleet" && cd "$TMP/fleet"
	local f n=0
	for f in threads_interleaved recursion transitions rle_runs many_frames non_ascii \
		deep_stack_300 opcodes_columns; do
		cp "$C/$f.tach" "host$((n++)).tach"
	done
	tach-merge host*.tach -o flat.tach
	# twice, as a user reruns it: the second run merges no part of the first
	local run
	for run in 1 2; do
		rm -rf parts && mkdir parts
		ls host*.tach | xargs -n 3 -P 2 sh -c 'tach-merge -o "parts/$$.tach" "$@"' sh
		[ "$(ls parts/*.tach | wc -l)" -eq 3 ]
		tach-merge parts/*.tach -o fleet.tach
		diff <(tach-decode flat.tach | summed) <(tach-decode fleet.tach | summed)
		[ "$(tach-decode --format info fleet.tach | grep samples_decoded)" = \
		  "$(tach-decode --format info flat.tach | grep samples_decoded)" ]
	done
}

@test "go tool pprof merging the inputs' pprof profiles shows the merge's stacks and totals" {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	local ins=("$C/threads_interleaved.tach" "$C/recursion.tach" "$C/non_ascii.tach" "$C/deep_stack_300.tach")
	local f k=0 profs=()
	for f in "${ins[@]}"; do
		tach2pprof "$f" -o "$TMP/in$k.pb.gz"
		profs+=("$TMP/in$k.pb.gz")
		k=$((k + 1))
	done
	go tool pprof -proto "${profs[@]}" >"$TMP/go.pb.gz" 2>"$TMP/err" || { cat "$TMP/err"; false; }
	go tool pprof -raw "$TMP/go.pb.gz" 2>/dev/null | $STACKS raw >"$TMP/want"
	tach-merge "${ins[@]}" | tach2pprof -o "$TMP/m.pb.gz"
	go tool pprof -raw "$TMP/m.pb.gz" 2>/dev/null | $STACKS raw >"$TMP/got"
	diff -u "$TMP/want" "$TMP/got"
	[ "$(wc -l <"$TMP/got")" -gt 10 ]
	# and -traces, the totals line by line
	go tool pprof -top -sample_index=samples "$TMP/go.pb.gz" 2>/dev/null | grep ' total$' >"$TMP/want"
	go tool pprof -top -sample_index=samples "$TMP/m.pb.gz" 2>/dev/null | grep ' total$' >"$TMP/got"
	diff "$TMP/want" "$TMP/got"
	go tool pprof -traces "$TMP/m.pb.gz" >/dev/null 2>&1
}

@test "--from samples and --from collapsed: any readable inputs, weights kept" {
	tach-merge --from samples "$TESTDATA/mixed.samples" "$SOURCE_ROOT/examples/batch.samples" \
		-o "$TMP/m.tach" 2>"$TMP/err"
	for f in "$TESTDATA/mixed.samples" "$SOURCE_ROOT/examples/batch.samples"; do
		tach-encode "$f" | tach-decode
	done | summed >"$TMP/want"
	tach-decode "$TMP/m.tach" | summed | diff -u "$TMP/want" -
	# collapsed: a weight N stays one weighted sample, so totals add up at once
	tach-merge --from collapsed "$FG/perf.folded" "$FG/perf2.folded" -o "$TMP/c.tach"
	cat "$FG/perf.folded" "$FG/perf2.folded" | summed >"$TMP/want"
	tach-decode --no-thread-frames "$TMP/c.tach" | summed | diff -u "$TMP/want" -
	# a format that is not the input's is an error naming the input
	run tach-merge --from collapsed "$C/recursion.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-merge: $C/recursion.tach:"* ]]
}

@test "the header: earliest start, the common interval, else the smallest with a warning" {
	printf '@start_time_us 5000\n@interval_us 100\n1 0 5000 1\tf.py:a:1\n' >"$TMP/a.samples"
	printf '@start_time_us 3000\n@interval_us 100\n2 0 3000 1\tf.py:b:1\n' >"$TMP/b.samples"
	printf '@start_time_us 9000\n@interval_us 50\n3 0 9000 1\tf.py:c:1\n' >"$TMP/c.samples"
	run tach-merge --from samples "$TMP/a.samples" "$TMP/b.samples" -o "$TMP/m.tach"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	tach-decode --format info "$TMP/m.tach" >"$TMP/info"
	grep -qx 'start_time_us: 3000' "$TMP/info"
	grep -qx 'sample_interval_us: 100' "$TMP/info"
	run tach-merge --from samples "$TMP/a.samples" "$TMP/c.samples" "$TMP/b.samples" -o "$TMP/m.tach"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-merge: warning: the inputs' sample intervals differ: the output's is the smallest, 50 us (each sample keeps the time it stands for where the output has a place for it)" ]
	# and what that loses, said once: TACH has one interval, a 100 us sample becomes 50
	[ "${lines[1]}" = "tach-merge: 3 inputs: warning: the tach format has one interval (50 us) and no time per sample: samples keep their timestamps, but each stands for one interval (such as one of 100 us at 3000 us)" ]
	[ "${#lines[@]}" -eq 2 ]
	grep -qx 'sample_interval_us: 50' <(tach-decode --format info "$TMP/m.tach")
	run tach-merge -q --from samples "$TMP/a.samples" "$TMP/c.samples" -o "$TMP/m.tach"
	[ "$status" -eq 0 ] && [ -z "$output" ]
}

@test "--tag-inputs: each input's samples under a frame named after it" {
	tach-merge --tag-inputs "$C/threads_interleaved.tach" "$C/threads_interleaved.zstd.tach" \
		-o "$TMP/m.tach"
	tach-decode "$C/threads_interleaved.tach" | summed >"$TMP/one"
	# the thread ids collide; the tag frame keeps the inputs apart
	for f in "$C/threads_interleaved.tach" "$C/threads_interleaved.zstd.tach"; do
		tach-decode "$TMP/m.tach" | grep -F ";$f;" | sed "s|;$f;|;|" | summed | diff -u "$TMP/one" -
	done
	[ "$(tach-decode "$TMP/m.tach" | grep -vcF -e ";$C/threads_interleaved.tach;" \
		-e ";$C/threads_interleaved.zstd.tach;")" -eq 0 ]
	tach-merge --tag-inputs - <"$C/recursion.tach" | tach-decode | grep -q '^tid:[0-9]*;<stdin>;'
	# without it, one thread of both
	tach-merge "$C/threads_interleaved.tach" "$C/threads_interleaved.zstd.tach" | tach-decode |
		awk '{ s += $NF } END { print s }' | grep -qx 640
}

@test "filters and --max-samples apply to every input" {
	tach-merge --thread 7 "$C/recursion.tach" "$C/rle_runs.tach" | tach-decode --format samples |
		grep -v '^@' | awk '{ print $1 }' | sort -u >"$TMP/t"
	[ "$(cat "$TMP/t")" = 7 ]
	tach-merge --from-us 1000001000 --to-us 1000001010 "$C/threads_interleaved.tach" "$C/recursion.tach" |
		tach-decode --format samples | grep -v '^@' |
		awk '$3 < 1000001000 || $3 >= 1000001010 { bad = 1 } END { exit bad }'
	run tach-merge --max-samples 20 "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/m.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-merge: $C/rle_runs.tach: "* ]]
	[ ! -e "$TMP/m.tach" ]
}

@test "a missing file, a bad input in the middle: exit 1 naming it, no -o file" {
	run tach-merge "$C/recursion.tach" "$TMP/missing.tach" -o "$TMP/m.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-merge: $TMP/missing.tach: No such file or directory" ]
	[ ! -e "$TMP/m.tach" ]
	local bad=$FIXTURES/tach/errors/err_bad_magic.tach
	run tach-merge "$C/recursion.tach" "$bad" "$C/rle_runs.tach" -o "$TMP/m.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-merge: $bad: offset "[0-9]*": "* ]]
	[ -z "$(ls "$TMP")" ]
	# a failure in the samples, after output has begun
	printf '@interval_us 100\n1 0 100 1\tf.py:a:1\n1 0 200 1\tf.py:a:x\n' >"$TMP/bad.samples"
	run tach-merge --from samples "$TESTDATA/mixed.samples" "$TMP/bad.samples" -o "$TMP/m.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-merge: $TMP/bad.samples:3: "* ]]
	[ ! -e "$TMP/m.tach" ]
	# an existing -o file stays as it was
	echo keep >"$TMP/m.tach"
	run tach-merge "$C/recursion.tach" "$bad" -o "$TMP/m.tach"
	[ "$status" -eq 1 ]
	[ "$(cat "$TMP/m.tach")" = keep ]
	[ "$(ls "$TMP" | wc -l)" -eq 2 ]
}

@test "stdin once, -o, -v, -f, a write error" {
	tach-merge "$C/recursion.tach" - <"$C/rle_runs.tach" >"$TMP/a.tach"
	tach-merge "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/b.tach"
	cmp "$TMP/a.tach" "$TMP/b.tach"
	run tach-merge -v "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/b.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'tach-merge: %s: tach input\ntach-merge: %s: tach input\ntach-merge: 2 inputs: 51 samples read, 51 written' "$C/recursion.tach" "$C/rle_runs.tach")" ]
	run script -qec "tach-merge '$C/recursion.tach'" /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach-merge: refusing to write binary output to a terminal"* ]]
	run script -qec "tach-merge -f --compression none '$C/single_sample.tach' | head -c 4" /dev/null
	[ "$status" -eq 0 ]
	run bash -c 'tach-merge "$0" >/dev/full' "$C/threads_interleaved.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach-merge: <stdout>: write error: No space left on device"* ]]
	# --compression none and --level change the bytes, not the samples
	tach-merge --compression none "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/c.tach"
	tach-merge --level 19 "$C/recursion.tach" "$C/rle_runs.tach" -o "$TMP/d.tach"
	grep -qx 'compression: none' <(tach-decode --format info "$TMP/c.tach")
	for f in c d; do
		diff <(tach-decode --format samples "$TMP/b.tach") <(tach-decode --format samples "$TMP/$f.tach")
	done
	# the same bytes every time
	tach-merge "$C/recursion.tach" "$C/rle_runs.tach" | cmp - "$TMP/b.tach"
}

@test "the man page documents every option" {
	local o
	for o in $(tach-merge --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -qE -- "\*(-[a-zA-Z], )?$o\*" "$SOURCE_ROOT/docs/tach-merge.1.scd" || { echo "missing $o"; false; }
	done
}

@test "an input cut short while it is read is named in the error, and no -o file is left" {
	gen=$BUILD_ROOT/bench/gen_tach
	[ -x "$gen" ] || skip "no bench/gen_tach in this build"
	"$gen" churn 2000000 "$TMP/a.tach" none >/dev/null
	"$gen" churn 2000000 "$TMP/b.tach" none >/dev/null
	TACHFMT_THREADS=1 tach-merge "$TMP/a.tach" "$TMP/b.tach" -o "$TMP/m.tach" 2>"$TMP/err" &
	local pid=$! status=0
	# Stop it once both inputs are mapped (let it run in short steps until then), cut the
	# second, and let it go on: its next page of b.tach is gone.
	kill -STOP $pid
	until grep -q "$TMP/b.tach" /proc/$pid/maps 2>/dev/null && grep -q "$TMP/a.tach" /proc/$pid/maps; do
		kill -0 $pid 2>/dev/null || break
		kill -CONT $pid
		sleep 0.01
		kill -STOP $pid 2>/dev/null || break
	done
	grep -q "$TMP/b.tach" /proc/$pid/maps || skip "tach-merge finished before both inputs were mapped"
	truncate -s 4096 "$TMP/b.tach"
	kill -CONT $pid
	wait $pid || status=$?
	cat "$TMP/err"
	[ "$status" -eq 1 ]
	[ "$(cat "$TMP/err")" = "tach-merge: $TMP/b.tach: read error: the file became shorter while it was read" ]
	[ ! -e "$TMP/m.tach" ]
	[ -z "$(ls "$TMP" | grep '^m\.tach\.')" ]
}

@test "a fleet: 64 profiles merged 8 at a time with GNU parallel, then once more, equal one merge of all" {
	command -v parallel >/dev/null || skip "GNU parallel is not installed"
	mkdir "$TMP/hosts" "$TMP/parts"
	local i
	for i in $(seq -w 1 64); do
		awk -v i="$i" 'BEGIN { print "@interval_us 100"
			for (k = 0; k < 50; k++)
				printf "%d 0 %d 1\tm.py:f%d:%d;m.py:main:1\n", i % 5 + 1, 1000000 + (k * 64 + i) * 100, (i + k) % 7, k % 3 }' \
			>"$TMP/in$i.samples"
		tach-encode "$TMP/in$i.samples" -o "$TMP/hosts/p$i.tach"
	done
	# the README's recipe: groups of 8 on 4 jobs, then the parts
	ls "$TMP"/hosts/*.tach | parallel -j 4 -N 8 --halt now,fail=1 tach-merge {} -o "$TMP/parts/part{#}.tach"
	[ "$(ls "$TMP"/parts/*.tach | wc -l)" -eq 8 ]
	tach-merge "$TMP"/parts/*.tach -o "$TMP/fleet.tach"
	tach-merge "$TMP"/hosts/*.tach -o "$TMP/all.tach"
	tach-decode -F samples "$TMP/fleet.tach" >"$TMP/fleet.txt"
	tach-decode -F samples "$TMP/all.tach" >"$TMP/all.txt"
	cmp "$TMP/fleet.txt" "$TMP/all.txt"
	# every sample of every input, once
	[ "$(grep -c $'\t' "$TMP/all.txt")" -eq 3200 ]
	[ "$(cat "$TMP"/in*.samples | grep $'\t' | cut -f1 | sort | md5sum)" = "$(grep $'\t' "$TMP/all.txt" | cut -f1 | sort | md5sum)" ]
}

@test "inputs whose weights count different things are not merged; like ones are" {
	GEN="python3 $SOURCE_ROOT/tests/cli/pprof_gen.py"
	$GEN types >"$TMP/heap.pb"   # weights: alloc_space in bytes
	$GEN labels >"$TMP/cpu.pb"   # weights: samples
	run tach-merge --counts-as-samples "$TMP/cpu.pb" "$TMP/heap.pb" -o "$TMP/m.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach-merge: $TMP/heap.pb: its weights are alloc_space in bytes, but $TMP/cpu.pb's are samples: profiles of different kinds cannot be merged"* ]]
	[ ! -e "$TMP/m.tach" ]
	run tach-merge --counts-as-samples "$TMP/heap.pb" "$TMP/cpu.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach-merge: $TMP/cpu.pb: its weights are samples, but $TMP/heap.pb's are alloc_space in bytes"* ]]
	# the same kind from both: merged, each byte one sample as asked
	tach-merge --counts-as-samples "$TMP/heap.pb" "$TMP/heap.pb" -o "$TMP/m.tach"
	tach-decode "$TMP/m.tach" >"$TMP/m.txt"
	tach-merge --counts-as-samples "$TMP/heap.pb" | tach-decode >"$TMP/one.txt"
	awk '{ $NF = 2 * $NF } 1' "$TMP/one.txt" | diff - "$TMP/m.txt"
}

# rate FILE INTERVAL_US: 480 samples of one thread, INTERVAL_US apart, as tach-encode takes
# them (a and b alternating under main): a run profiled at that rate.
rate() {
	awk -v iv="$2" 'BEGIN { print "@start_time_us 1000000"; print "@interval_us " iv
		for (k = 0; k < 480; k++)
			printf "1 0 %d 3\tm.py:%s:%d;m.py:main:1\n", 1000000 + k * iv, k % 3 ? "a" : "b", k % 3 ? 2 : 3 }' |
		tach-encode -o "$1"
}

@test "a 10 ms and a 1 ms profile of one run merge to the sum of their times, each sample kept" {
	rate "$TMP/10ms.tach" 10000
	rate "$TMP/1ms.tach" 1000
	tach2pprof "$TMP/10ms.tach" -o "$TMP/10.pb.gz"
	tach2pprof "$TMP/1ms.tach" -o "$TMP/1.pb.gz"
	[ "$($TOTALS "$TMP/10.pb.gz")" = "$(printf 'samples/count\t480\nwall/nanoseconds\t4800000000')" ]
	[ "$($TOTALS "$TMP/1.pb.gz")" = "$(printf 'samples/count\t480\nwall/nanoseconds\t480000000')" ]
	# 4.8 s + 0.48 s, not 960 samples re-timed at 1 ms (0.96 s)
	run tach-merge -F pprof "$TMP/10ms.tach" "$TMP/1ms.tach" -o "$TMP/m.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" == *"the inputs' sample intervals differ: the output's is the smallest, 1000 us"* ]]
	[ "$($TOTALS "$TMP/m.pb.gz")" = "$(printf 'samples/count\t960\nwall/nanoseconds\t5280000000')" ]
	# per function too: b is every third sample of both
	if command -v go >/dev/null; then
		go tool pprof -top "$TMP/m.pb.gz" 2>/dev/null >"$TMP/top"
		grep -q 'of 5.28s total' "$TMP/top" || { cat "$TMP/top"; false; }
		grep -qE '^ +1\.76s +33\.33% .* b$' "$TMP/top" || { cat "$TMP/top"; false; }
	fi
	# the merge as samples text keeps each sample's time: tach2pprof of it shows the sum
	tach-merge -q -F samples "$TMP/10ms.tach" "$TMP/1ms.tach" -o "$TMP/m.samples"
	[ "$(grep -c $'\t' "$TMP/m.samples")" -eq 960 ]
	tach2pprof "$TMP/m.samples" -o "$TMP/s.pb.gz"
	[ "$($TOTALS "$TMP/s.pb.gz")" = "$($TOTALS "$TMP/m.pb.gz")" ]
	# the other order, and --concat: the same totals
	tach-merge -q -F pprof "$TMP/1ms.tach" "$TMP/10ms.tach" -o "$TMP/r.pb.gz"
	[ "$($TOTALS "$TMP/r.pb.gz")" = "$($TOTALS "$TMP/m.pb.gz")" ]
	tach-merge -q -F pprof --concat "$TMP/1ms.tach" "$TMP/10ms.tach" -o "$TMP/c.pb.gz"
	[ "$($TOTALS "$TMP/c.pb.gz")" = "$($TOTALS "$TMP/m.pb.gz")" ]
	# the TACH output keeps every sample at its own timestamp
	tach-merge -q "$TMP/10ms.tach" "$TMP/1ms.tach" | tach-decode -F samples | grep $'\t' |
		cut -d' ' -f3 | sort -n >"$TMP/got"
	for f in 10ms 1ms; do tach-decode -F samples "$TMP/$f.tach"; done | grep $'\t' |
		cut -d' ' -f3 | sort -n | diff - "$TMP/got"
	# --to-us keeps the part of a sample's time it keeps: the first 2 s of the 10 ms run
	tach-merge -q -F pprof --to-us 3000000 "$TMP/10ms.tach" "$TMP/1ms.tach" -o "$TMP/t.pb.gz"
	[ "$($TOTALS "$TMP/t.pb.gz")" = "$(printf 'samples/count\t680\nwall/nanoseconds\t2480000000')" ]
}

@test "two node --cpu-prof profiles of different rates merge to the sum of their times" {
	command -v node >/dev/null || skip "node not installed"
	local f k=0 want_n=0 want_t=0
	for iv in 250 1000; do
		mkdir -p "$TMP/n$iv"
		cp "$TESTDATA/v8/hot.js" "$TMP/n$iv/"
		(cd "$TMP/n$iv" && node --cpu-prof --cpu-prof-dir . --cpu-prof-name p.cpuprofile \
			--cpu-prof-interval $iv hot.js >/dev/null)
		tach2pprof "$TMP/n$iv/p.cpuprofile" -o "$TMP/n$iv.pb.gz"
		want_n=$((want_n + $($TOTALS "$TMP/n$iv.pb.gz" | awk -F'\t' 'NR == 1 { print $2 }')))
		want_t=$((want_t + $($TOTALS "$TMP/n$iv.pb.gz" | awk -F'\t' 'NR == 2 { print $2 }')))
	done
	[ "$want_t" -gt 0 ]
	run tach-merge -F pprof "$TMP/n250/p.cpuprofile" "$TMP/n1000/p.cpuprofile" -o "$TMP/m.pb.gz"
	[ "$status" -eq 0 ]
	# the rates differ, so one interval for both would be wrong for one of them
	[[ "$output" == *"the inputs' sample intervals differ"* ]]
	$TOTALS "$TMP/m.pb.gz" >"$TMP/got"
	printf 'samples/count\t%d\nwall/nanoseconds\t%d\n' $want_n $want_t | diff - "$TMP/got"
	# and that is the profiles' own: each sample the time to the next one of its profile,
	# the last up to the profile's end, as DevTools counts it, and every sample once
	python3 -c '
import json, sys
n = t = 0
for f in sys.argv[1:]:
    p = json.load(open(f))
    ts, at = [], p["startTime"]
    for d in p["timeDeltas"]:
        at += d
        ts.append(at)
    ts.sort()
    n += len(ts)
    t += sum(b - a for a, b in zip(ts, ts[1:])) + max(0, p["endTime"] - ts[-1])
print("samples/count\t%d\nwall/nanoseconds\t%d" % (n, t * 1000))' \
		"$TMP/n250/p.cpuprofile" "$TMP/n1000/p.cpuprofile" | diff - "$TMP/got"
	# the samples text of the merge too
	tach-merge -q -F samples "$TMP/n250/p.cpuprofile" "$TMP/n1000/p.cpuprofile" | tach2pprof |
		$TOTALS /dev/stdin | diff - "$TMP/got"
	if command -v go >/dev/null; then
		go tool pprof -top -sample_index=samples "$TMP/m.pb.gz" 2>/dev/null | grep -q " of $want_n total"
	fi
}

@test "values: each sample's own kept through -F pprof; types must agree, by name" {
	$GEN timed >"$TMP/timed.pb"   # 3 samples of 3.75 ms, not 3 ms
	tach-merge -q -F pprof "$TMP/timed.pb" "$TMP/timed.pb" -o "$TMP/m.pb.gz"
	[ "$($TOTALS "$TMP/m.pb.gz")" = "$(printf 'samples/count\t6\ncpu/nanoseconds\t7500000')" ]
	$GEN cpubytes >"$TMP/cb.pb"   # samples, cpu and mem in bytes
	tach-merge -F pprof "$TMP/cb.pb" "$TMP/cb.pb" -o "$TMP/m.pb.gz"
	[ "$($TOTALS "$TMP/m.pb.gz")" = "$(printf 'samples/count\t4\ncpu/nanoseconds\t4000000\nmem/bytes\t8192')" ]
	# an input without sample types gives its counts and times as those types' values
	$GEN labels >"$TMP/cpu.pb"    # 5 samples, 5 ms of cpu
	tach-merge -F pprof "$TMP/cpu.pb" "$C/recursion.tach" -o "$TMP/m.pb.gz" # 9 samples of 1 ms
	[ "$($TOTALS "$TMP/m.pb.gz")" = "$(printf 'samples/count\t14\ncpu/nanoseconds\t14000000')" ]
	# ... but has none of another kind
	run tach-merge -F pprof "$TMP/cb.pb" "$C/recursion.tach" -o "$TMP/m.pb.gz"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-merge: $C/recursion.tach: it has no mem values (in bytes), which the other inputs' samples carry: values of different types cannot be merged" ]
	# types that differ in name or unit are refused, naming both lists
	tach2pprof "$C/recursion.tach" -o "$TMP/wall.pb.gz"
	run tach-merge "$TMP/wall.pb.gz" "$TMP/cpu.pb" -o "$TMP/x.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-merge: $TMP/cpu.pb: its sample types are samples/count, cpu/nanoseconds, but $TMP/wall.pb.gz's are samples/count, wall/nanoseconds: values of different types or units cannot be merged (choose one type with --sample-index and the tach output)" ]
	run tach-merge -F pprof "$TMP/cpu.pb" "$TMP/cb.pb" -o "$TMP/x.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach-merge: $TMP/cb.pb: its sample types are samples/count, cpu/nanoseconds, mem/bytes, but $TMP/cpu.pb's are samples/count, cpu/nanoseconds:"* ]]
	[ ! -e "$TMP/x.tach" ]
	# labels: kept by pprof, said dropped once by TACH
	run tach-merge "$TMP/cpu.pb" "$TMP/cpu.pb" -o "$TMP/x.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *'warning: the tach output has no place for sample labels: they are dropped (such as "worker")' ]]
	[ "$(grep -c 'no place for sample labels' <<<"$output")" -eq 1 ]
	run tach-merge -F pprof "$TMP/cpu.pb" "$TMP/cpu.pb" -o "$TMP/m.pb.gz"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	zcat "$TMP/m.pb.gz" | grep -q worker
}

@test "samples of no known interval beside a timed profile: one output interval a sample, said" {
	printf '1 0 5 1\tm.py:a:1\n1 0 6 1\tm.py:a:1\n' >"$TMP/n.samples" # no @interval_us
	run tach-merge -F pprof "$C/recursion.tach" "$TMP/n.samples" -o "$TMP/m.pb.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "tach-merge: warning: $TMP/n.samples: its samples carry no time (counts of an unknown interval): each counts as one sample of the output's interval, 1000 us" ]
	[ "$($TOTALS "$TMP/m.pb.gz")" = "$(printf 'samples/count\t11\nwall/nanoseconds\t11000000')" ]
	# alone, or with others of none, they are counts
	run tach-merge -F pprof "$TMP/n.samples" "$TMP/n.samples" -o "$TMP/m.pb.gz"
	[ "$status" -eq 0 ]
	[[ "$output" != *"each counts as one sample"* ]]
	[ "$($TOTALS "$TMP/m.pb.gz" | head -1)" = "$(printf 'samples/count\t4')" ]
}

@test "TACH output says once what it cannot keep: a sample's own time, other values" {
	# V8 samples: each its time to the next, TACH one interval for all
	run tach-merge "$TESTDATA/v8/node_hot.cpuprofile" -o "$TMP/v.tach"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "tach-merge: $TESTDATA/v8/node_hot.cpuprofile: warning: the tach format has one interval ("*" us) and no time per sample: samples keep their timestamps, but each stands for one interval (such as one of "*" us at "*" us)" ]]
	[ "${#lines[@]}" -eq 1 ]
	# the timestamps are the input's, each sample's own
	diff <(tach-decode -F samples "$TESTDATA/v8/node_hot.cpuprofile" | grep -v '^@' | cut -d' ' -f1-4 | cut -f1) \
		<(tach-decode -F samples "$TMP/v.tach" | grep -v '^@' | cut -f1)
	# values of other types (counts-as-samples keeps alloc_space's bytes as samples)
	python3 "$SOURCE_ROOT/tests/cli/pprof_gen.py" types >"$TMP/t.pb"
	run tach-merge --counts-as-samples "$TMP/t.pb" -o "$TMP/t.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "tach-merge: $TMP/t.pb: warning: the tach format keeps samples only: the input's other values are dropped (such as alloc_objects in count)" ]
	# TACH to TACH: nothing to say, the same bytes
	run tach-merge "$FIXTURES/tach/cases/rle_runs.tach" -o "$TMP/r.tach"
	[ "$status" -eq 0 ] && [ -z "$output" ]
}
