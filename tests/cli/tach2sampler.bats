#!/usr/bin/env bats
# tach2sampler: the layout it writes, the round trip through sampler2tach for every TACH
# fixture, what it documents as lost, and its errors.

setup() {
	CHECK="python3 $SOURCE_ROOT/tests/cli/sampler_check.py"
	T=$BATS_TEST_TMPDIR
	CASES=$FIXTURES/tach/cases
}

all_fixtures() {
	ls "$FIXTURES"/tach/cases/*.tach "$FIXTURES"/tach/big-endian/*.tach "$FIXTURES"/tach/layout-a/*.tach
}

@test "round trip keeps every stack and count: collapsed output equal for every fixture" {
	n=0
	for f in $(all_fixtures); do
		tach-decode -q "$f" | sort > "$T/want"
		tach2sampler -q "$f" | sampler2tach -q | tach-decode -q | sort > "$T/got"
		diff -u "$T/want" "$T/got" || { echo "differs: $f"; false; }
		n=$((n + 1))
	done
	[ "$n" -ge 40 ]
}

@test "round trip keeps thread and interpreter ids, stacks and counts of every sample" {
	args=()
	i=0
	for f in $(all_fixtures); do
		tach-decode -q -F samples "$f" > "$T/$i.want"
		tach2sampler -q "$f" | sampler2tach -q | tach-decode -q -F samples > "$T/$i.got"
		args+=("$T/$i.want" "$T/$i.got")
		i=$((i + 1))
	done
	$CHECK pairs "${args[@]}"
	# Not vacuous: the same tid in two interpreters, and the largest ids.
	tach2sampler "$CASES/threads_interleaved.tach" | sampler2tach | tach-decode -F samples |
		$CHECK samples | grep -Eq $'^[0-9]+ 139637976731648 1\t'
	tach2sampler "$CASES/edge_ids_timestamps.tach" | sampler2tach | tach-decode -F samples |
		$CHECK samples | grep -q $'^1 18446744073709551615 4294967295\tt.py:g:2$'
}

@test "the layout Sampler accepted, for every fixture" {
	files=()
	i=0
	for f in $(all_fixtures); do
		tach2sampler -q "$f" -o "$T/$i.trace"
		files+=("$T/$i.trace")
		i=$((i + 1))
	done
	$CHECK layout "${files[@]}" > /dev/null
	# many_frames has enough symbols to reach ids with TAB, LF and CR bytes (0x2209...).
	tach2sampler "$CASES/many_frames.tach" -o "$T/m.trace"
	run $CHECK layout "$T/m.trace"
	[ "$status" -eq 0 ]
	[ "$output" = "symbols 302 blocks 1 records 300 last_id 0x2252" ]
}

@test "the exact bytes of a small trace" {
	tach2sampler "$CASES/single_sample.tach" -o "$T/s.trace"
	python3 - "$T/s.trace" <<-'EOF'
	import sys
	d = open(sys.argv[1], "rb").read()
	want = (b"@supersamplerV1.0\n@symboltableV1.1\n"
	        b"\t\x00\x00\x21\x22\t\x00\x00\x00\x00\tThread_2122\tThread_2122\ttachfmt:tid=12345:iid=0\n"
	        b"\t\x00\x00\x21\x23\t\x00\x00\x00\x2a\thandler\tapp.py\tapp.py\n"
	        b"\t\x00\x00\x21\x24\t\x00\x00\x00\x64\tmain\tapp.py\tapp.py\n"
	        b"\t\x00\x00\x21\x25\t\x00\x00\x00\x01\t<module>\tapp.py\tapp.py\n"
	        b"@end\n@threadV1.0\t2122\n"
	        b"\t\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x03"
	        b"\x00\x00\x21\x23\x00\x00\x21\x24\x00\x00\x21\x25\n"
	        b"@end\n")
	sys.exit(0 if d == want else "got %r" % d)
	EOF
}

@test "one block per thread, each stack written as often as it was sampled" {
	tach2sampler "$CASES/threads_interleaved.tach" -o "$T/t.trace"
	threads=$(tach-decode -F samples "$CASES/threads_interleaved.tach" | grep -v '^[@#]' | cut -d' ' -f1,2 | sort -u | wc -l)
	samples=$(tach-decode -F info "$CASES/threads_interleaved.tach" | sed -n 's/^samples_selected: //p')
	run $CHECK layout "$T/t.trace"
	[[ "$output" == *"blocks $threads records $samples "* ]]
	[ "$threads" -gt 1 ]
	tach2sampler "$CASES/rle_long_10000.tach" -o "$T/r.trace"
	run $CHECK layout "$T/r.trace"
	[[ "$output" == *" records 10000 "* ]]
}

@test "deterministic output, stdin or file" {
	tach2sampler "$CASES/transitions.tach" > "$T/a"
	tach2sampler < "$CASES/transitions.tach" > "$T/b"
	tach2sampler -o "$T/c" "$CASES/transitions.tach"
	cmp "$T/a" "$T/b"
	cmp "$T/a" "$T/c"
}

@test "losses: TAB in names as '?', columns and opcodes merged, one warning each kind" {
	run tach2sampler "$CASES/non_ascii.tach" -o "$T/n.trace"
	[ "$status" -eq 0 ]
	[ "$output" = "tach2sampler: $CASES/non_ascii.tach: warning: a name contains TAB, LF or CR, which Sampler cannot hold: written as '?'" ]
	sampler2tach "$T/n.trace" | tach-decode -F samples | grep -q ';tab?here::5:5:'
	# opcodes_columns: seven frames of op.py:f:10 with different columns become one symbol.
	tach2sampler "$CASES/opcodes_columns.tach" -o "$T/o.trace"
	run $CHECK layout "$T/o.trace"
	[[ "$output" == "symbols 3 "* ]]
}

@test "empty stacks are not written, with a warning giving their number" {
	run tach2sampler "$CASES/empty_stack_first.tach" -o "$T/e.trace"
	[ "$status" -eq 0 ]
	empty=$(tach-decode -F samples "$CASES/empty_stack_first.tach" | grep -c $'\t$')
	[ "$empty" -gt 0 ]
	[ "$output" = "tach2sampler: $CASES/empty_stack_first.tach: warning: $empty samples with an empty stack not written: Sampler records hold frames" ]
	run tach2sampler -q "$CASES/empty_stack_first.tach" -o "$T/e.trace"
	[ -z "$output" ]
}

@test "an empty profile gives a trace without threads" {
	tach2sampler "$CASES/empty.tach" -o "$T/e.trace"
	[ "$(cat "$T/e.trace")" = "@supersamplerV1.0
@symboltableV1.1
@end
@end" ]
}

@test "the last thread id that fits 16 bits, and one thread more" {
	# 56388 ids from 0x2122 to 0xFFFF have no TAB, LF or CR byte.
	python3 -c '
import sys
for t in range(int(sys.argv[1])):
    print("%d 0 %d 1\tm.py:f:1" % (t, t))' 56388 > "$T/many.txt"
	tach-encode --compression none "$T/many.txt" -o "$T/many.tach"
	tach2sampler "$T/many.tach" -o "$T/many.trace"
	grep -aq $'^@threadV1.0\tFFFF$' "$T/many.trace"
	echo $'56388 0 1 1\tm.py:f:1' >> "$T/many.txt"
	tach-encode --compression none "$T/many.txt" -o "$T/more.tach"
	run tach2sampler "$T/more.tach" -o "$T/more.trace"
	[ "$status" -eq 1 ]
	[ "$output" = "tach2sampler: $T/more.trace: more threads than Sampler's 16-bit thread ids hold (56389)" ]
	[ ! -e "$T/more.trace" ]
}

@test "filters apply before writing" {
	tach2sampler --thread 139637976731648 "$CASES/threads_interleaved.tach" | sampler2tach | tach-decode > "$T/got"
	tach-decode --thread 139637976731648 "$CASES/threads_interleaved.tach" > "$T/want"
	diff "$T/want" "$T/got"
	[ -s "$T/got" ]
}

@test "errors: bad TACH input, I/O, usage" {
	run tach2sampler "$FIXTURES/tach/errors/err_bad_magic.tach" -o "$T/x.trace"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2sampler: $FIXTURES/tach/errors/err_bad_magic.tach: "* ]]
	[ ! -e "$T/x.trace" ]
	run sh -c "tach2sampler '$CASES/single_sample.tach' > /dev/full"
	[ "$status" -eq 1 ]
	[[ "$output" == *"No space left on device"* ]]
	run tach2sampler --interval 5 "$CASES/single_sample.tach"
	[ "$status" -eq 2 ]
	# two inputs are one profile (merged), not a usage error
	run tach2sampler -q "$CASES/single_sample.tach" "$CASES/single_sample.tach" -o "$T/two.trace"
	[ "$status" -eq 0 ]
	run tach2sampler --max-depth 2 "$CASES/deep_stack_300.tach"
	[ "$status" -eq 1 ]
}

@test "the man page documents every option" {
	for o in $(tach2sampler --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$o\*" "$SOURCE_ROOT/docs/tach2sampler.1.scd" || { echo "missing $o"; false; }
	done
}

@test "--max-samples stops a run that would be too many records, saying where" {
	cd "$T"
	printf '@interval_us 1000\n1 0 1000 1\ta.py:f:1\n' >one.txt
	for i in $(seq 2 50); do printf '1 0 %d 1\ta.py:f:1\n' $((i * 1000)); done >>one.txt
	tach-encode one.txt -o one.tach
	run tach2sampler --max-samples 10 one.tach -o out.trace
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == "tach2sampler: one.tach: "*"more than 10 samples (see --max-samples)"* ]]
	[ ! -e out.trace ]
	tach2sampler --max-samples 50 one.tach -o out.trace
}

@test "high-cardinality input (past the lookahead threshold): read back, the lines its counts add up to" {
	python3 "$TESTDATA/wide_folded.py" "$T/wide.folded" "$T/want"
	tach2sampler "$T/wide.folded" -o "$T/wide.sampler"
	tach-decode "$T/wide.sampler" >"$T/got"
	cmp "$T/got" "$T/want"
}

@test "stacks that many threads share, each looked up whole: read back, each thread's lines" {
	python3 "$TESTDATA/shared_folded.py" "$T/shared.folded" "$T/want"
	tach2sampler "$T/shared.folded" -o "$T/shared.sampler"
	tach-decode "$T/shared.sampler" >"$T/got"
	cmp "$T/got" "$T/want"
}

@test "samples of different times: each counts as one, said once; one interval each: nothing said" {
	run tach2sampler "$TESTDATA/v8/node_hot.cpuprofile" -o "$BATS_TEST_TMPDIR/v.trace"
	[ "$status" -eq 0 ]
	[[ "$output" == "tach2sampler: $TESTDATA/v8/node_hot.cpuprofile: warning: the sampler format has no time per sample: each counts as one, though their times differ ("*" us at "*" us)" ]]
	[ "${#lines[@]}" -eq 1 ]
	run tach2sampler "$FIXTURES/tach/cases/rle_runs.tach" -o "$BATS_TEST_TMPDIR/r.trace"
	[ "$status" -eq 0 ] && [ -z "$output" ]
}
