#!/usr/bin/env bats
# tach-encode as a user runs it: inputs, outputs, options and every error path.

setup() {
	cd "$BATS_TEST_TMPDIR"
	IN=$TESTDATA/mixed.samples
	REF=$FIXTURES/tach/cases/transitions
}

# no file named like $1 or a temporary beside it
no_output() {
	! compgen -G "$1*" >/dev/null || false
}

@test "bad header lines before the samples name their line" {
	local cases=(
		'@interval_us abc|bad @interval_us value'
		'@start_time_us -1|bad @start_time_us value'
		'@python_version 3.x|bad @python_version value'
		'@bogus 1|unknown header line "@bogus"'
		'@interval_us|header line needs a value'
		'@sample_time 2|@sample_time must be 0 or 1'
	)
	for c in "${cases[@]}"; do
		local line=${c%%|*} msg=${c#*|}
		printf '# a comment\n\n%b\n1 0 1 1\tok.py:f:1\n' "$line" >bad.txt
		run tach-encode -o out.tach bad.txt
		echo "input: $line -> $output"
		[ "$status" -eq 1 ]
		[[ $output == "tach-encode: bad.txt:3: $msg"* ]]
		no_output out.tach
	done
}

@test "a bad line: 'tach-encode: FILE:LINE: ...', exit 1, no output file" {
	local cases=(
		'1 0 5 1|expected TID IID TIMESTAMP_US STATUS, a TAB, then frames'
		'1 0 5 1\tf:g|frame "f:g" needs 3 or 7 fields'
		'1 0 5 1\tf:g:1:2:3|frame "f:g:1:2:3" needs 3 or 7 fields'
		'1 0 5 1\tf:g:x|bad line number "x"'
		'1 0 5 1\tf:g:2147483648|bad line number "2147483648"'
		'x 0 5 1\tf:g:1|bad number "x"'
		'1 0 5 256\tf:g:1|status 256 exceeds 255'
		'1 4294967296 5 1\tf:g:1|interpreter id 4294967296 exceeds 32 bits'
		'1 0 18446744073709551616 1\tf:g:1|bad number "18446744073709551616"'
		'1 0 5\tf:g:1|expected TID IID TIMESTAMP_US STATUS before the TAB'
		'1 0 5 1 100 0\tf:g:1|a weight of 0 samples'
		'1 0 5 1 100 2 3\tf:g:1|more than TID IID TIMESTAMP_US STATUS TIME_NS WEIGHT before the TAB'
		'1 0 5 1 -1\tf:g:1|bad number "-1"'
		'1 0 5 1 18446744073709551616\tf:g:1|bad number "18446744073709551616"'
		'1 0 5 1\t;|frame "" needs 3 or 7 fields'
		'@interval_us 5|header line after the first sample'
	)
	for c in "${cases[@]}"; do
		local line=${c%%|*} msg=${c#*|}
		printf '# a comment\n\n1 0 1 1\tok.py:f:1\n%b\n2 0 2 1\tok.py:g:2\n' "$line" >bad.txt
		run tach-encode -o out.tach bad.txt
		echo "input: $line -> $output"
		[ "$status" -eq 1 ]
		[[ $output == "tach-encode: bad.txt:4: $msg"* ]]
		no_output out.tach
		# the same from standard input
		run tach-encode --compression none <bad.txt
		[ "$status" -eq 1 ]
		[[ $output == "tach-encode: <stdin>:4: $msg"* ]]
	done
}

@test "unknown options and bad values exit 2 with a usage hint" {
	for args in "--bogus" "-Z" "--compression lz4" "--compression" "--level 0" "--level 23" \
		"--level x" "--max-depth 0" "--max-depth -1" "--thread abc" "--status nope" \
		"--status no-bogus" "--from-us x" "--to-us -5" "--format tach"; do
		# shellcheck disable=SC2086
		run tach-encode $args "$IN"
		echo "args: $args -> $status $output"
		[ "$status" -eq 2 ]
		[[ ${lines[0]} == "tach-encode: "* ]]
		[[ $output == *"Try 'tach-encode --help'"* ]]
	done
}

@test "-h and -V" {
	run tach-encode -h
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "Usage: tach-encode [OPTION]... [FILE]..." ]]
	[[ $output == *"--compression KIND"* ]]
	[[ $output == *"Exit status: 0 success, 1 invalid input or I/O error, 2 usage error."* ]]
	run tach-encode --help
	[ "$status" -eq 0 ]
	run tach-encode -V
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^tach-encode\ \(tachfmt\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	[[ ${lines[1]} =~ ^libtachfmt\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	run tach-encode --version
	[ "$status" -eq 0 ]
	# help on a full stdout is an error
	[ -c /dev/full ] || skip "/dev/full is not the full device"
	run sh -c 'tach-encode --help >/dev/full'
	[ "$status" -eq 1 ]
}

@test "file argument, -, and standard input give the same bytes" {
	tach-encode --compression none -o a.tach "$IN"
	tach-encode --compression none -o b.tach - <"$IN"
	tach-encode --compression none <"$IN" >c.tach
	cat "$IN" | tach-encode --compression none >d.tach
	cmp a.tach b.tach
	cmp a.tach c.tach
	cmp a.tach d.tach
	tach-decode -F samples a.tach | grep -v '^@' >got
	# the input's samples, in the 7-field form
	[ "$(wc -l <got)" -eq 10 ]
}

@test "a pipe out gives the same bytes as -o FILE, raw and zstd" {
	for comp in none zstd; do
		tach-encode --compression $comp -o f.tach "$REF.in.txt"
		tach-encode --compression $comp "$REF.in.txt" | cat >p.tach
		cmp f.tach p.tach
	done
	cmp <(tach-encode --compression none "$REF.in.txt" | cat) "$REF.tach"
}

@test "the default is zstd at level 5; --level and --compression none" {
	tach-encode -o z.tach "$IN"
	tach-decode -F info z.tach | grep -qx 'compression: zstd'
	tach-encode --level 19 -o z19.tach "$IN"
	tach-decode -F info z19.tach | grep -qx 'compression: zstd'
	cmp <(tach-decode -F samples z.tach) <(tach-decode -F samples z19.tach)
	tach-encode --compression none -o n.tach "$IN"
	tach-decode -F info n.tach | grep -qx 'compression: none'
	cmp <(tach-decode -F samples z.tach) <(tach-decode -F samples n.tach)
}

@test "-o FILE: no partial file and no temporary file left on failure" {
	printf '1 0 1 1\tok.py:f:1\nbroken\n' >bad.txt
	run tach-encode -o out.tach bad.txt
	[ "$status" -eq 1 ]
	no_output out.tach
	[ -z "$(ls -A . | grep -v -e '^bad.txt$')" ]
	# an existing file is left alone when the new one fails
	echo keep >out.tach
	run tach-encode -o out.tach bad.txt
	[ "$status" -eq 1 ]
	[ "$(cat out.tach)" = keep ]
	[ "$(ls -A | sort | tr '\n' ' ')" = "bad.txt out.tach " ]
	# a missing input file
	run tach-encode -o new.tach missing.txt
	[ "$status" -eq 1 ]
	[[ $output == "tach-encode: missing.txt: No such file or directory" ]]
	no_output new.tach
	# an output directory that does not exist
	run tach-encode -o nodir/x.tach "$IN"
	[ "$status" -eq 1 ]
	[[ $output == "tach-encode: nodir/x.tach: "* ]]
}

@test "-o FILE replaces the file whole and keeps the usual mode" {
	echo old >out.tach
	chmod 644 out.tach
	tach-encode --compression none -o out.tach "$REF.in.txt"
	cmp out.tach "$REF.tach"
	umask 022
	tach-encode -o fresh.tach "$IN"
	[ "$(stat -c %a fresh.tach)" = 644 ]
}

@test "a full disk fails loudly with exit 1" {
	# (something else on a shared machine may have replaced the device with a file)
	[ -c /dev/full ] || skip "/dev/full is not the full device"
	run sh -c "tach-encode --compression none '$IN' >/dev/full"
	[ "$status" -eq 1 ]
	[[ $output == "tach-encode: <stdout>: "*"No space left on device"* ]]
	run sh -c "tach-encode '$IN' >/dev/full"
	[ "$status" -eq 1 ]
	[[ $output == *"No space left on device"* ]]
}

@test "binary output to a terminal is refused without -f" {
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	run script -qec "tach-encode '$IN'" /dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"tach-encode: refusing to write binary output to a terminal"* ]]
	run script -qec "tach-encode -f '$IN' >/dev/null; tach-encode --force '$IN' | wc -c" /dev/null
	[ "$status" -eq 0 ]
	# -o FILE on a terminal is fine
	run script -qec "tach-encode -o t.tach '$IN'" /dev/null
	[ "$status" -eq 0 ]
	[ -s t.tach ]
}

@test "filters apply before writing" {
	tach-encode --compression none --thread 8 -o t8.tach "$IN"
	[ "$(tach-decode -F samples t8.tach | grep -vc '^@')" -eq 2 ]
	tach-decode -F info t8.tach | grep -qx 'thread_count: 1'
	tach-encode --from-us 5300 --to-us 5600 -o tw.tach "$IN"
	tach-decode -F samples tw.tach | grep -v '^@' | cut -f1 | awk '{print $3}' | tr '\n' ' ' >got
	[ "$(cat got)" = "5300 5400 5500 " ]
}

@test "-v reports counts" {
	run tach-encode -v --compression none -o v.tach "$IN"
	[ "$status" -eq 0 ]
	[[ $output == "tach-encode: $IN: 10 samples read, 10 written" ]]
	run tach-encode -v --thread 8 -o v.tach "$IN"
	[[ $output == "tach-encode: $IN: 10 samples read, 2 written" ]]
	run tach-encode -q -o q.tach "$IN"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "--max-depth refuses deeper stacks" {
	printf '1 0 1 1\ta:a:1;b:b:2;c:c:3\n' >deep.txt
	run tach-encode --max-depth 2 -o d.tach deep.txt
	[ "$status" -eq 1 ]
	[[ $output == "tach-encode: deep.txt:1: "* ]]
	no_output d.tach
	tach-encode --max-depth 3 -o d.tach deep.txt
}

@test "a header without samples writes an empty profile" {
	printf '@interval_us 1000\n' | tach-encode --compression none >e.tach
	[ "$(stat -c %s e.tach)" -eq 96 ]
	tach-decode -F info e.tach | grep -qx 'sample_count: 0'
	printf '@start_time_us 1000000000\n@interval_us 1000\n' |
		tach-encode --compression none | cmp - "$FIXTURES/tach/cases/empty.tach"
}

# Sampling-order text of the shapes whose records a reader meets in another order or whose
# table rows print alike: threads that start with empty stacks (held back as repeats),
# repeat runs past 16 KiB while other threads' records go by (split lazily), frames that
# differ only in end values CPython drops, and a frame with columns but no line.
roundtrip_input() { # seed
	python3 - "$1" <<'PY'
import random, sys
rnd = random.Random(int(sys.argv[1]))
print("@start_time_us 1000\n@interval_us 1000")
frames = ["m.py:f:1", "m.py:g:2", "m.py:h:3:4:5:9:7", "m.py:f:7:7:-1:-1:-",
          "m.py:f:7:7:-1:4:-", "gc.py:collect:-1:5:3:9:-", "gc.py:collect:-1:-1:3:9:-",
          "~:<GC>:-", "<native>:run:-:-:-:-:12"]
ts = 1000
threads = [1, 2, 3]
stacks = {t: "" for t in threads}
for i in range(rnd.choice([40, 7000, 15000])):
    t = rnd.choice(threads)
    r = rnd.random()
    if r < 0.15:
        stacks[t] = ";".join(rnd.choice(frames) for _ in range(rnd.randint(0, 4)))
    elif r < 0.2 and t == 1:
        stacks[t] = ""
    ts += rnd.choice([0, 1000, 1000, 1000, 1500])
    print("%d 0 %d %d\t%s" % (t, ts, rnd.randint(0, 3), stacks[t]))
PY
}

@test "decode | encode gives back the bytes of every file tach-encode writes" {
	printf '@start_time_us 1000\n@interval_us 1000\n1 0 2000 0\t\n2 0 3000 0\tm.py:f:1\n1 0 4000 0\tm.py:g:2\n2 0 5000 0\tm.py:f:1\n1 0 6000 0\tm.py:g:2\n' >min.txt
	tach-encode --compression none min.txt -o min.tach
	tach-decode -F samples min.tach >min2.txt
	grep -qx '@order records' min2.txt
	tach-encode --compression none min2.txt -o b.tach
	cmp min.tach b.tach
	# without the @order line the text is read as sampling order, as CPython's writer takes
	# it, and the held run of thread 1 lands elsewhere
	grep -v '^@order' min2.txt | tach-encode --compression none -o c.tach
	! cmp -s min.tach c.tach || false
	local seed
	for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
		roundtrip_input $seed >in.txt
		tach-encode --compression none in.txt -o a.tach
		tach-decode -F samples a.tach | tach-encode --compression none -o b.tach
		cmp a.tach b.tach || { echo "seed $seed: the round trip differs"; false; }
		# zstd: the same samples region once decompressed, and the same text
		tach-encode in.txt -o z.tach
		tach-decode -F samples z.tach | tach-encode -o z2.tach
		cmp <(tach-decode -F samples z.tach) <(tach-decode -F samples z2.tach)
	done
	# a run of thread 1 passes 16 KiB while thread 2's records go by: CPython's writer
	# splits it when the next repeat comes, so the first part lands among thread 2's records
	awk 'BEGIN { print "@start_time_us 1000\n@interval_us 1000"; ts = 1000
		for (i = 0; i < 12000; i++) {
			printf "1 0 %d 1\tm.py:loop:3;m.py:main:1\n", ts += 1000
			if (i % 50 == 0)
				printf "2 0 %d 0\tw.py:step%d:%d\n", ts, i % 7, i % 3
		} }' >long.txt
	tach-encode --compression none long.txt -o a.tach
	tach-decode -F info a.tach >info.txt
	grep -qx 'repeat_records: 3' info.txt
	grep -qx 'repeat_samples: 11999' info.txt
	tach-decode -F samples a.tach | tach-encode --compression none -o b.tach
	cmp a.tach b.tach
}

@test "empty input is an error; a samples text stream with no sample stops at the input limit" {
	: >empty
	run tach-encode empty -o out.tach
	[ "$status" -eq 1 ]
	[ "$output" = "tach-encode: empty: offset 0: empty input: no profile in it" ]
	no_output out.tach
	run bash -c "yes '# a comment' | timeout 300 tach-encode --max-input 64K -o out.tach"
	[ "$status" -eq 1 ]
	[[ $output == "tach-encode: <stdin>: offset "*": no sample in the first 65536 bytes (see max-input): not samples input" ]]
	no_output out.tach
	# a header alone is an empty profile, as tach-decode writes one
	tach-decode -F samples "$FIXTURES/tach/cases/empty.tach" >header.samples
	tach-encode header.samples -o out.tach
	[ "$(tach-decode -F info out.tach | sed -n 's/^samples_decoded: //p')" = 0 ]
}
