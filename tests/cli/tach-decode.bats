#!/usr/bin/env bats
# tach-decode as a user runs it: inputs, outputs, options, filters and every error path.

setup() {
	cd "$BATS_TEST_TMPDIR"
	C=$FIXTURES/tach/cases
	E=$FIXTURES/tach/errors
	O=$TESTDATA/collapsed-options
	tach-encode --compression none -o paths.tach "$TESTDATA/paths.samples"
}

no_output() {
	! compgen -G "$1*" >/dev/null || false
}

# The sample lines of an expected file kept by a filter, decided independently in Python:
# thread ids, statuses (any of / none of / idle = neither GIL nor CPU) and a time window.
oracle() { # expected-file threads(csv or -) any none idle from to
	python3 - "$@" <<'EOF'
import sys
path, threads, any_, none, idle, lo, hi = sys.argv[1:]
threads = None if threads == '-' else {int(t) for t in threads.split(',')}
any_, none, idle, lo, hi = int(any_), int(none), idle == '1', int(lo), int(hi)
for line in open(path, encoding='utf-8'):
    if line.startswith('#'):
        continue
    tid, iid, ts, st = line.split('\t')[0].split()
    tid, ts, st = int(tid), int(ts), int(st)
    if threads is not None and tid not in threads:
        continue
    if st & none:
        continue
    if (any_ or idle) and not ((st & any_) or (idle and not st & 3)):
        continue
    if not lo <= ts < hi:
        continue
    sys.stdout.write(line)
EOF
}

filtered() { # file options...
	local f=$1
	shift
	tach-decode --format samples "$@" "$f" | grep -v '^@' || true
}

@test "-h and -V" {
	run tach-decode -h
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "Usage: tach-decode [OPTION]... [FILE]..." ]]
	for o in --format --labels --full-paths --no-thread-frames --thread --status --from-us --to-us; do
		[[ $output == *"$o"* ]]
	done
	run tach-decode -V
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^tach-decode\ \(tachfmt\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	[ -c /dev/full ] || skip "/dev/full is not the full device"
	run sh -c 'tach-decode -V >/dev/full'
	echo "status $status: $output"
	[ "$status" -eq 1 ]
}

@test "unknown options and bad values exit 2" {
	for args in "--bogus" "-x" "--format" "--format bogus" "-F json" "--labels" "--labels x" \
		"--format samples --labels pyspy" "--format info --full-paths" "--thread" \
		"--thread 1x" "--status gil,bogus" "--status no-bogus" "--status" "--from-us 1.5" \
		"--to-us abc" "--max-depth 0" "--max-depth x" "--compression none"; do
		# shellcheck disable=SC2086
		run tach-decode $args "$C/single_sample.tach"
		echo "args: $args -> $status $output"
		[ "$status" -eq 2 ]
		[[ ${lines[0]} == "tach-decode: "* ]]
		[[ $output == *"Try 'tach-decode --help'"* ]]
	done
	# several inputs are one profile, but not for the info output, which describes one
	run tach-decode -F info "$C/single_sample.tach" "$C/single_sample.tach"
	[ "$status" -eq 2 ]
}

@test "file, -, standard input and a pipe read the same, raw and zstd" {
	for f in "$C/rle_runs.tach" "$C/rle_runs.zstd.tach" "$FIXTURES/tach/big-endian/transitions.tach"; do
		for fmt in collapsed samples info; do
			tach-decode -F $fmt "$f" >a
			tach-decode -F $fmt - <"$f" >b
			tach-decode -F $fmt <"$f" >c
			cat "$f" | tach-decode -F $fmt >d
			cmp a b
			cmp a c
			# info reports the file size from what was read, the same through a pipe
			cmp a d
		done
	done
}

@test "-o FILE writes the same as stdout; a failure leaves nothing" {
	tach-decode -F samples -o out.txt "$C/transitions.tach"
	tach-decode -F samples "$C/transitions.tach" | cmp - out.txt
	for fmt in collapsed samples info; do
		run tach-decode -F $fmt -o bad.txt "$E/err_unknown_encoding.tach"
		[ "$status" -eq 1 ]
		no_output bad.txt
	done
	# a failure in the middle of the samples: nothing, although samples were decoded
	run tach-decode -F samples -o late.txt "$E/err_sample_count_plus1.tach"
	[ "$status" -eq 1 ]
	no_output late.txt
	[ "$(ls -A | sort | tr '\n' ' ')" = "out.txt paths.tach " ]
}

@test "a full disk fails loudly with exit 1" {
	# (something else on a shared machine may have replaced the device with a file)
	[ -c /dev/full ] || skip "/dev/full is not the full device"
	for fmt in collapsed samples info; do
		run sh -c "tach-decode -F $fmt '$C/many_frames.tach' >/dev/full"
		echo "$fmt: status $status: $output"
		[ "$status" -eq 1 ]
		[[ $output == "tach-decode: <stdout>: "*"No space left on device"* ]]
	done
}

@test "text output goes to a terminal without -f" {
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	run script -qec "tach-decode '$C/single_sample.tach'" /dev/null
	[ "$status" -eq 0 ]
	[[ $output == *"tid:12345;"* ]]
}

@test "input that is not TACH, missing or unreadable" {
	run tach-decode --from tach "$TESTDATA/paths.samples"
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: $TESTDATA/paths.samples: offset 0: Invalid magic number: 0x"* ]]
	run tach-decode missing.tach
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: missing.tach: No such file or directory" ]]
	run tach-decode --from tach </dev/null
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: <stdin>: offset 0: File too small for header"* ]]
	run tach-decode </dev/null
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: <stdin>: offset 0: empty input: no profile format to detect" ]]
	run tach-decode .
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: .: "* ]]
}

@test "zstd errors name a record; the footer warning obeys -q" {
	# a zstd region cut short: the data ends inside the frame
	local f=$C/transitions.zstd.tach
	local so
	so=$(tach-decode -F info "$f" | sed -n 's/^string_table_offset: //p')
	# drop the last compressed byte, keep the tables: fix the offsets and the footer size
	python3 - "$f" "$so" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
so = int(sys.argv[2])
del b[so - 1]
so2, fo2 = struct.unpack_from('<QQ', b, 40)
struct.pack_into('<QQ', b, 40, so2 - 1, fo2 - 1)
struct.pack_into('<Q', b, len(b) - 24, len(b))
open('cut.tach', 'wb').write(b)
EOF
	run tach-decode cut.tach
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: cut.tach: "@(record|offset)" "[0-9]*": "* ]]
	run tach-decode -q --format samples "$E/err_footer_filesize_wrong.tach"
	[ "$status" -eq 0 ]
	[[ $output != *warning* ]]
}

@test "collapsed: --labels, --full-paths, --no-thread-frames" {
	tach-decode paths.tach | diff "$O/default.txt" -
	tach-decode --labels cpython paths.tach | diff "$O/default.txt" -
	tach-decode --full-paths paths.tach | diff "$O/full-paths.txt" -
	tach-decode --no-thread-frames paths.tach | diff "$O/no-thread-frames.txt" -
	tach-decode --labels pyspy paths.tach | diff "$O/pyspy.txt" -
	tach-decode --labels pyspy --full-paths --no-thread-frames paths.tach |
		diff "$O/pyspy-full-paths-no-thread-frames.txt" -
	tach-decode -F collapsed paths.tach | diff "$O/default.txt" -
}

@test "collapsed: an empty profile or only empty stacks give no lines" {
	run tach-decode "$C/empty.tach"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	tach-decode --thread 1 --from-us 70 paths.tach >out
	[ ! -s out ]
}

@test "--thread keeps the listed threads (repeatable), in every interpreter" {
	local f=$C/threads_interleaved.tach e=$C/threads_interleaved.expected.txt
	local t1 t2
	t1=$(grep -v '^#' "$e" | head -1 | cut -d' ' -f1)
	t2=$(grep -v '^#' "$e" | awk '{print $1}' | sort -u | tail -1)
	filtered "$f" --thread "$t1" >got
	oracle "$e" "$t1" 0 0 0 0 99999999999999 >want
	[ -s want ]
	cmp want got
	filtered "$f" --thread "$t1" --thread "$t2" >got
	oracle "$e" "$t1,$t2" 0 0 0 0 99999999999999 >want
	cmp want got
	# the tid used in two interpreters: both are kept
	local twice
	twice=$(grep -v '^#' "$e" | awk '{print $1, $2}' | sort -u | awk '{print $1}' | uniq -d)
	[ -n "$twice" ]
	filtered "$f" --thread "$twice" | awk '{print $2}' | sort -u | tr '\n' ' ' >iids
	[ "$(cat iids)" = "0 1 " ]
	# hexadecimal ids, as strtoull reads them
	filtered "$C/edge_ids_timestamps.tach" --thread 0xffffffffffffffff >got
	oracle "$C/edge_ids_timestamps.expected.txt" 18446744073709551615 0 0 0 0 99999999999999 >want
	[ -s want ]
	cmp want got
	filtered "$f" --thread 424242 >got
	[ ! -s got ]
}

@test "--status names, no-NAME and idle" {
	local -A bit=([gil]=1 [cpu]=2 [unknown]=4 [gil-wait]=8 [exception]=16 [main]=32)
	for f in rle_runs edge_ids_timestamps opcodes_columns; do
		local tach=$C/$f.tach e=$C/$f.expected.txt
		for name in "${!bit[@]}"; do
			filtered "$tach" --status "$name" >got
			oracle "$e" - "${bit[$name]}" 0 0 0 99999999999999 >want
			cmp want got || { echo "$f --status $name" >&2; return 1; }
			filtered "$tach" --status "no-$name" >got
			oracle "$e" - 0 "${bit[$name]}" 0 0 99999999999999 >want
			cmp want got || { echo "$f --status no-$name" >&2; return 1; }
		done
		filtered "$tach" --status idle >got
		oracle "$e" - 0 0 1 0 99999999999999 >want
		cmp want got
		filtered "$tach" --status gil,cpu,no-exception >got
		oracle "$e" - 3 16 0 0 99999999999999 >want
		cmp want got
		filtered "$tach" --status idle,main,no-unknown >got
		oracle "$e" - 32 4 1 0 99999999999999 >want
		cmp want got
	done
	# the statuses used are really there to filter on
	[ "$(filtered "$C/rle_runs.tach" --status idle | wc -l)" -gt 0 ]
	[ "$(filtered "$C/rle_runs.tach" --status no-gil | wc -l)" -gt 0 ]
}

@test "--from-us and --to-us: at or after, and before" {
	local f=$C/rle_runs.tach e=$C/rle_runs.expected.txt
	local ts
	ts=$(grep -v '^#' "$e" | sed -n 5p | cut -f1 | cut -d' ' -f3)
	filtered "$f" --from-us "$ts" >got
	oracle "$e" - 0 0 0 "$ts" 99999999999999 >want
	cmp want got
	grep -q " $ts " got
	filtered "$f" --to-us "$ts" >got
	oracle "$e" - 0 0 0 0 "$ts" >want
	cmp want got
	! grep -q " $ts " got || false
	filtered "$f" --from-us "$ts" --to-us $((ts + 5000)) --thread 1 >got
	oracle "$e" 1 0 0 0 "$ts" $((ts + 5000)) >want
	[ -s want ]
	cmp want got
	# filters apply to collapsed and info too
	tach-decode -F info --from-us "$ts" "$f" | grep -qx "samples_selected: $(oracle "$e" - 0 0 0 "$ts" 99999999999999 | wc -l)"
	[ "$(tach-decode --to-us 0 "$f" | wc -c)" -eq 0 ]
	# the edge file's timestamp before the start time is found too
	filtered "$C/edge_ids_timestamps.tach" --to-us 1000000000 >got
	oracle "$C/edge_ids_timestamps.expected.txt" - 0 0 0 0 1000000000 >want
	[ -s want ]
	cmp want got
}

@test "filtered collapsed output counts what the filter kept" {
	tach-decode --thread 1 paths.tach >got
	grep '^tid:1;' "$O/default.txt" | diff - got
	tach-decode --status no-gil --no-thread-frames paths.tach >got
	printf '<frozen runpy>:_run_code:0 1\nmain.py:main:5;<GC> 1\n' | diff - got
}

@test "--max-depth refuses deeper stacks, --strict refuses the wrong footer size" {
	run tach-decode --max-depth 255 "$C/deep_stack_300.tach"
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: $C/deep_stack_300.tach: offset "[0-9]*": Stack depth 256 exceeds the max-depth limit of 255 frames" ]]
	tach-decode --max-depth 256 "$C/deep_stack_300.tach" >/dev/null
	run tach-decode --strict "$E/err_footer_filesize_wrong.tach"
	[ "$status" -eq 1 ]
}

@test "collapsed merges frames by the text of their names, as CPython does" {
	# a table that holds "a.py" and "f" twice: CPython's reader gives equal strings, so
	# its collector counts both samples on one line
	python3 "$TESTDATA/dup_strings.py" >dup.tach
	[ "$(tach-decode -F samples dup.tach | grep -c 'a.py:f:1:1:-1:-1:-')" -eq 2 ]
	run tach-decode dup.tach
	[ "$status" -eq 0 ]
	[ "$output" = "tid:1;a.py:f:1 2" ]
	run tach-decode --labels pyspy --no-thread-frames dup.tach
	[ "$output" = "f (a.py:1) 2" ]
}

# A profile large enough for many batches between the reading thread and the writer: a long
# run of one repeated stack (the reading thread hands the reader back after its first batch
# of repeats), then threads whose stacks change on every sample.
big_profile() {
	awk 'BEGIN {
		print "@interval_us 100"
		ts = 1000000000
		for (i = 0; i < 150000; i++)
			printf "7 0 %d %d\ta.py:main:1:1:-1:-1:-;a.py:loop:2:2:-1:-1:-\n", ts += 100, i % 3
		for (i = 0; i < 60000; i++) {
			t = i % 3 + 1; d = i % 7 + 2; s = ""
			for (k = 0; k < d; k++)
				s = s sprintf("%sm%d.py:f%d:%d:%d:-1:-1:-", k ? ";" : "", (i + k) % 5, k, k + 1, k + 1)
			printf "%d 0 %d %d\t%s\n", t, ts += 100, i % 4, s
		}
		for (i = 0; i < 1000; i++)
			printf "9 1 %d 1\ta.py:main:1:1:-1:-1:-\n", ts += 100
	}' >big.samples
	tach-encode -o big.tach big.samples
}

@test "a second reading thread gives the same bytes, through repeats and churn, filtered or not" {
	big_profile
	local fmt
	for fmt in samples collapsed; do
		TACHFMT_THREADS=1 tach-decode -F $fmt big.tach >one.$fmt
		TACHFMT_THREADS=2 tach-decode -F $fmt big.tach >two.$fmt
		cmp one.$fmt two.$fmt
		TACHFMT_THREADS=1 tach-decode -F $fmt --status no-gil --thread 2 --thread 9 big.tach >one.f.$fmt
		TACHFMT_THREADS=2 tach-decode -F $fmt --status no-gil --thread 2 --thread 9 big.tach >two.f.$fmt
		cmp one.f.$fmt two.f.$fmt
	done
	# every sample came through; the filters kept some and dropped some
	[ "$(grep -vc '^@' two.samples)" -eq 211000 ]
	local kept
	kept=$(grep -vc '^@' two.f.samples)
	[ "$kept" -gt 1000 ] && [ "$kept" -lt 60000 ]
}

@test "a frame naming a missing string is the input's fault, whatever the output" {
	local spec off x p fmt
	# transitions.tach with one byte of a frame's file or function index changed
	for spec in 406:202:10:286 413:150:11:306 430:252:10:286; do
		IFS=: read -r off x frame at <<<"$spec"
		python3 -c "import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[$off] ^= $x
open('bad.tach', 'wb').write(d)" "$C/transitions.tach"
		for fmt in collapsed samples info; do
			run tach-decode -F $fmt bad.tach -o out
			echo "$fmt: $status: $output"
			[ "$status" -eq 1 ]
			[[ $output == "tach-decode: bad.tach: offset $at: Invalid string index in frame $frame "* ]]
			no_output out
		done
		for p in tach2sampler tach2pprof tach2gecko; do
			run $p bad.tach -o out
			echo "$p: $status: $output"
			[ "$status" -eq 1 ]
			[[ $output == "$p: bad.tach: offset $at: Invalid string index in frame $frame "* ]]
			no_output out
		done
	done
}

@test "an input file cut short while it is read is an I/O error, not a signal" {
	awk 'BEGIN { print "@interval_us 100"; ts = 1000000
		for (i = 0; i < 200000; i++)
			printf "%d 0 %d 1\tm.py:f%d:%d;m.py:g:%d\n", i % 3 + 1, ts += 100, i % 50, i % 7, i % 11 }' >big.samples
	local threads
	for threads in 1 2; do
		tach-encode --compression none -o big.tach big.samples
		mkfifo out.fifo
		TACHFMT_THREADS=$threads tach-decode -F samples big.tach >out.fifo 2>err &
		local pid=$!
		exec 7<out.fifo
		# a line out means the file is mapped and being read; the writer then blocks on
		# the full pipe until the file has been cut
		read -r _ <&7
		truncate -s 4096 big.tach
		cat <&7 >/dev/null
		exec 7<&-
		local status=0
		wait $pid || status=$?
		cat err
		[ "$status" -eq 1 ]
		[ "$(cat err)" = "tach-decode: big.tach: read error: the file became shorter while it was read" ]
		rm -f out.fifo
	done
}

# Peak resident memory of a command, in KiB (what a user sees in top).
peak_kib() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

@test "a big input file is given back as it is read: memory does not grow with its size" {
	gen=$BUILD_ROOT/bench/gen_tach
	[ -x "$gen" ] || skip "no bench/gen_tach in this build"
	# an uncompressed region read through several windows, and the zstd twin of its samples
	# (a zstd input is given back the same way, but this one is too small to tell)
	"$gen" churn 1000000 big.tach none >/dev/null
	"$gen" churn 1000000 bigz.tach zstd >/dev/null
	"$gen" churn 20000 small.tach none >/dev/null
	[ "$(stat -c %s big.tach)" -gt $((30 << 20)) ]
	cmp <(tach-decode big.tach) <(tach-decode bigz.tach)
	cmp <(tach-decode -F samples big.tach | tail -n 3) <(tach-decode -F samples bigz.tach | tail -n 3)
	# every input byte is read: 37 MB kept resident, or a few windows' worth
	small=$(TACHFMT_THREADS=1 peak_kib tach-decode -F info small.tach)
	big=$(TACHFMT_THREADS=1 peak_kib tach-decode -F info big.tach)
	echo "peak KiB: small $small, big $big"
	[ $((big - small)) -lt $((12 << 10)) ]
}

@test "a raw REPEAT count is checked against the whole rest of the region, not the window" {
	# One stack sampled 2.2 million times: REPEAT records of 8k entries (runs split at
	# 16 KiB, as CPython splits them), one of which starts just before the end of the first
	# window, so its entries run on past it.
	python3 - >long.samples <<'PY'
import sys
out = ["@python_version 3.15.0\n@start_time_us 1000000000\n@interval_us 100\n"]
ts = 1000000000
for i in range(2200000):
    ts += 100
    out.append("1 0 %d 1\ta.py:f:1:1:-1:-1:-\n" % ts)
sys.stdout.write("".join(out))
PY
	tach-encode --compression none -o long.tach long.samples
	tach-encode -o longz.tach long.samples
	[ "$(stat -c %s long.tach)" -gt $((4 << 20)) ]
	run tach-decode -F info long.tach
	[ "$status" -eq 0 ]
	[[ "$output" == *"sample_count: 2200000"* ]]
	cmp <(tach-decode long.tach) <(tach-decode longz.tach)
}

# A generator's folded input (NAME.folded) read directly and through TACH with one and two
# threads: each time, the collapsed text the generator says its lines add up to.
sums_directly_and_through_tach() { # generator, name
	python3 "$TESTDATA/$1" "$2.folded" want
	tach-decode --from collapsed "$2.folded" >got
	cmp got want
	collapsed2tach "$2.folded" -o "$2.tach"
	TACHFMT_THREADS=1 tach-decode "$2.tach" >got1
	cmp got1 want
	TACHFMT_THREADS=2 tach-decode "$2.tach" >got2
	cmp got2 want
}

@test "high-cardinality input (past the aggregating writers' lookahead threshold): the lines its counts add up to, directly and through TACH with one and two threads" {
	sums_directly_and_through_tach wide_folded.py wide
}

@test "stacks that many threads share, each looked up whole: each thread's lines, with one and two threads" {
	sums_directly_and_through_tach shared_folded.py shared
	python3 "$TESTDATA/shared_folded.py" shared3.folded want3 3
	tach-decode --from collapsed shared3.folded >got3
	cmp got3 want3
}

@test "a run stopped by the file-size limit is an I/O error: exit 1, nothing left behind" {
	local in=$FIXTURES/tach/cases/rle_long_10000.tach
	# 650 KB of samples text against a limit of 64 KiB
	[ "$(tach-decode -F samples "$in" | wc -c)" -gt 65536 ]
	run bash -c "ulimit -f 64; tach-decode -F samples '$in' -o out.txt"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: out.txt: write error: File too large" ]
	[ -z "$(ls | grep '^out\.txt')" ]
	run bash -c "ulimit -f 64; tach-decode -F samples '$in' > out.txt"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: <stdout>: write error: File too large" ]
}

@test "--status no-idle drops the samples neither holding the GIL nor on CPU, as --help says every state has a no- form" {
	local e=$C/rle_runs.expected.txt
	filtered "$C/rle_runs.tach" --status no-idle >got
	grep -v '^#' "$e" | awk -F'\t' '{ split($1, f, " "); if (f[4] % 4) print }' >want
	cmp want got
	[ "$(filtered "$C/rle_runs.tach" --status idle | wc -l)" -gt 0 ]
	[ -s want ]
	# with a positive name too: on CPU and not idle is on CPU
	filtered "$C/rle_runs.tach" --status cpu,no-idle >got
	filtered "$C/rle_runs.tach" --status cpu >want
	cmp want got
	tach-decode --help | grep -q 'no-NAME drops samples in that state'
}

@test "--format info names the format; another format's own figures, TACH's header fields only for TACH" {
	printf '@interval_us 250\n7 0 1000 2\tm.py:f:1\n7 0 1250 2\tm.py:g:2\n9 0 1100 2\tm.py:f:1\n' >s.txt
	tach-decode -F info s.txt >info
	cat info
	[ "$(sed -n 1p info)" = "format: samples" ]
	grep -qx 'samples: 3' info
	grep -qx 'weight_total: 3' info
	grep -qx 'weight_total_us: 750' info
	grep -qx 'threads: 2' info
	grep -qx 'first_timestamp_us: 1000' info
	grep -qx 'end_timestamp_us: 1500' info
	grep -qx 'time_span_us: 500' info
	[ "$(grep -c 'format_version\|sample_count\|thread_count\|header_layout\|string_count\|_records' info)" -eq 0 ]
	# filters count what they keep
	tach-decode -F info --thread 9 s.txt | grep -qx 'threads: 1'
	# pprof: its types and period
	tach-decode -F info "$FIXTURES/gperf/hotloop/hotloop.pprof.pb.gz" >info
	[ "$(sed -n 1p info)" = "format: pprof" ]
	# the type chosen, cpu, each sample's time; its samples counted by samples/count
	grep -qx 'value_type: cpu/nanoseconds (the weights)' info
	grep -qx 'value_type: samples/count' info
	grep -qx 'weight_total: 221' info
	grep -qx 'weight_total_us: 221000' info
	grep -qx 'period: 1000000 cpu/nanoseconds' info
	[ "$(grep -c 'format_version' info)" -eq 0 ]
	# folded stacks with counts
	printf 'a;b 3\nc 2\n' | tach-decode -F info >info
	[ "$(sed -n 1p info)" = "format: collapsed" ]
	grep -qx 'samples: 2' info
	grep -qx 'weight_total: 5' info
	# TACH keeps its header, footer and record statistics, after its name
	tach-decode -F info "$C/rle_runs.tach" >info
	[ "$(sed -n 1p info)" = "format: tach" ]
	grep -qx 'format_version: 1' info
	grep -qx 'sample_count: 42' info
	grep -qx 'thread_count: 2' info
	grep -qx 'samples_selected: 42' info
}

@test "empty input is an error with its reason for every format, named or detected, and every program" {
	local f
	for f in $(tach-decode --from help); do
		run bash -c ": | tach-decode --from $f"
		echo "$f: $output"
		# perf script prints nothing for a capture without samples: an empty profile
		if [ "$f" = perf ]; then
			[ "$status" -eq 0 ] && [ -z "$output" ]
			continue
		fi
		[ "$status" -eq 1 ]
		[[ $output == "tach-decode: <stdin>: offset 0: "* ]]
	done
	: >empty
	for p in tach-decode tach2pprof tach2gecko tach2speedscope tach2pstats tach2sampler tach2flamegraph \
		tach-merge collapsed2tach perf2tach tach-encode gperf2tach sampler2tach speedscope2tach; do
		run "$p" -f -o out empty
		echo "$p: $output"
		[ "$status" -eq 1 ]
		[[ $output == "$p: empty: offset 0: "* ]]
		no_output out
	done
}

# folded_sum FILE: the sum of a folded output's counts.
folded_sum() {
	awk '{ s += $NF } END { print s + 0 }' "$1"
}

@test "--value time: each line the samples' time in µs; count is the default" {
	local f=$C/rle_runs.tach iv
	iv=$(tach-decode -F samples "$f" | sed -n 's/^@interval_us //p')
	[ "$iv" -gt 0 ]
	tach-decode "$f" >count.folded
	tach-decode --value count "$f" | cmp - count.folded
	tach-decode --value time "$f" >time.folded
	# TACH: every sample stands for one interval, so each line is its count's intervals
	awk -v iv="$iv" '{ $NF = $NF * iv; print }' count.folded | diff - time.folded
	[ "$(folded_sum time.folded)" -eq "$(($(folded_sum count.folded) * iv))" ]
	# samples that carry no time: the counts, said once
	printf '@interval_us 0\n1 0 10 0\ta.py:f:1\n' >n.samples
	run tach-decode --value time n.samples
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: n.samples: warning: value time: the samples carry no time (no interval, no time of their own): the counts are shown" ]
	[ "${lines[1]}" = "tid:1;a.py:f:1 1" ]
}

@test "--value TYPE: a pprof input's sample type, samples without the default's value included" {
	python3 "$SOURCE_ROOT/tests/cli/pprof_gen.py" types >t.pb
	# alloc_space is the default; the second sample has no inuse_space
	[ "$(tach-decode --value alloc_objects t.pb)" = "$(printf 'tid:0;m.go:main:1;m.go:grow:5 3\ntid:0;m.go:main:1 1')" ]
	[ "$(tach-decode --value inuse_space t.pb)" = "tid:0;m.go:main:1;m.go:grow:5 1024" ]
	[ "$(tach-decode --value alloc_space t.pb)" = "$(tach-decode t.pb)" ]
	run tach-decode --value nosuch t.pb
	[ "$status" -ne 0 ]
	[[ "$output" == *"value nosuch: the input has no such sample type (it has alloc_objects, ...)"* ]]
	run tach-decode --value alloc_space "$C/recursion.tach"
	[ "$status" -ne 0 ]
	[[ "$output" == *"value alloc_space: the input has no sample types (only count and time)"* ]]
}

@test "--value TYPE on a Go heap profile: each type's total is pprof's own" {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	local heap=${PEERS:-$SOURCE_ROOT/../shared/peers}/corpora/pprof/gobench.heap
	[ -f "$heap" ] || skip "../shared/peers is not there"
	export HOME=$BATS_TEST_TMPDIR PPROF_TMPDIR=$BATS_TEST_TMPDIR
	go tool pprof -proto "$heap" >h.pb.gz 2>/dev/null
	go tool pprof -raw h.pb.gz 2>/dev/null | awk '
		/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && /^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { for (i = 1; i <= 4; i++) t[i] += $i }
		END { print t[1], t[2], t[3], t[4] }' >want
	local v
	for v in alloc_objects alloc_space inuse_objects inuse_space; do
		tach-decode -q --value $v h.pb.gz >"$v.folded"
		printf '%s ' "$(folded_sum "$v.folded")"
	done | sed 's/ $//' >got
	echo "want $(cat want), got $(cat got)"
	[ "$(cat got)" = "$(cat want)" ]
}

@test "the samples text carries a sample's own time and weight where they are not its intervals, and reads back as it was" {
	printf '%s\n' '@start_time_us 0' '@interval_us 1000' \
		$'1 0 0 2\ta.js:f:1:1:-1:-1:-' \
		$'1 0 1000 2 250000\ta.js:f:1:1:-1:-1:-' \
		$'2 0 1250 2 7000000 3\ta.js:g:2:2:-1:-1:-' >"$T/t.txt"
	# samples -> samples: the same text, byte for byte
	tach-decode -F samples "$T/t.txt" | cmp - "$T/t.txt"
	# 1 + 0.25 + 7 ms, and 1 + 1 + 3 samples
	tach-decode -F info "$T/t.txt" >"$T/info"
	grep -qx 'weight_total_us: 8250' "$T/info"
	grep -qx 'weight_total: 5' "$T/info"
	[ "$(tach-decode "$T/t.txt")" = "$(printf 'tid:2;a.js:g:2 3\ntid:1;a.js:f:1 2')" ]
	# --from-us cuts a weight-3 line by its own time: 7 ms over 3 samples, at 1250, 3583, 5916
	[ "$(tach-decode -F samples --from-us 3000 "$T/t.txt" | grep -v '^@')" = $'2 0 3583 2 4666666 2\ta.js:g:2:2:-1:-1:-' ]
	# samples with a time but no interval say so, and read back so
	printf '%s\n' '@interval_us 0' $'1 0 0 2 5\tf:g:1' $'1 0 0 2\tf:g:1' >"$T/z.txt"
	tach-decode -F samples "$T/z.txt" >"$T/z.out"
	grep -qx '@sample_time 1' "$T/z.out"
	tach-decode -F samples "$T/z.out" | cmp - "$T/z.out"
	# no time, no interval: nothing said, no time
	printf '%s\n' '@interval_us 0' $'1 0 0 2\tf:g:1' >"$T/n.txt"
	[ "$(tach-decode -F samples "$T/n.txt" | grep -c '^@sample_time')" -eq 0 ]
	[ "$(tach-decode -F info "$T/n.txt" | grep -c weight_total_us)" -eq 0 ]
	# TACH keeps one interval: its samples are whole intervals again, TACH -> samples -> TACH
	# byte for byte as ever
	tach-encode --compression none -o "$T/t.tach" "$T/t.txt" 2>/dev/null
	tach-decode -F samples "$T/t.tach" | tach-encode --compression none -o "$T/u.tach"
	cmp "$T/t.tach" "$T/u.tach"
}
