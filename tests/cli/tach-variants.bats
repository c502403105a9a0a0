#!/usr/bin/env bats
# CPython 3.15's TACH as its writer makes it now, from files tach_variants.py builds field
# by field: the TACHSTAT block in both forms and byte orders, the profiling mode in the
# header word at offset 60, and a format version other than 1; read, shown, kept on the way
# through TACH, merged, and written by every writer.

setup_file() {
	export V=$BATS_FILE_TMPDIR/v
	mkdir -p "$V"
	python3 "$BATS_TEST_DIRNAME/tach_variants.py" "$V"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# The files every writer must take: all but the refused versions.
readable() {
	for f in "$V"/*.tach; do
		case $f in */version*) ;; *) echo "$f" ;; esac
	done
}

info() {
	tach-decode -F info "$1" | grep -E '^(stats_|profiling_)'
}

@test "the 56-byte TACHSTAT block: every value, with both flags set, in either byte order" {
	for f in stats56 stats56-be; do
		run info "$V/$f.tach"
		[ "$status" -eq 0 ]
		[ "$output" = "profiling_config: 0
stats_block: 56 bytes, version 1
stats_duration_s: 1.25
stats_sample_rate: 4
stats_error_rate: 2.5
stats_missed_samples: 1.5" ]
	done
}

@test "with its present flags clear, the error and missed slots are not shown as values (gh-154089)" {
	run info "$V/stats56-unknown.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "profiling_config: 0
stats_block: 56 bytes, version 1
stats_duration_s: 1.25
stats_sample_rate: 4" ]
	# only the error rate's flag: the missed slot (7) stays unshown
	run info "$V/stats56-error.tach"
	[ "${lines[4]}" = "stats_error_rate: 2.5" ]
	[ "${#lines[@]}" -eq 5 ]
}

@test "the original 32-byte block is read by its size: duration and rate, nothing from the frame table" {
	for f in stats32 stats32-be; do
		run info "$V/$f.tach"
		[ "$status" -eq 0 ]
		[ "$output" = "profiling_config: 0
stats_block: 32 bytes, version 1
stats_duration_s: 1.25
stats_sample_rate: 4" ]
	done
}

@test "a TACHSTAT block of a size not known is skipped with a warning, the file still read" {
	run tach-decode -F info "$V/stats-size40.tach"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"offset 205: warning: a TACHSTAT block of 40 bytes"*ignored ]]
	[[ "$output" != *stats_* ]]
	[[ "$output" == *"samples_decoded: 4"* ]]
}

@test "the profiling mode is named, feature bits above it shown raw, an unknown mode said so" {
	for m in wall cpu gil all exception; do
		run tach-decode -F info "$V/mode-$m.tach"
		[ "$status" -eq 0 ]
		[[ "$output" == *"profiling_mode: $m"* ]]
		[[ "$output" != *profiling_feature_bits* ]]
	done
	run info "$V/mode-cpu-bits.tach"
	[ "$output" = "profiling_config: 6914
profiling_mode: cpu
profiling_feature_bits: 0x00001b" ]
	run info "$V/mode-unknown.tach"
	[ "$output" = "profiling_config: 9
profiling_mode: unknown (9)" ]
	run info "$V/plain.tach"
	[ "$output" = "profiling_config: 0" ]
}

@test "a format version other than 1 is refused, naming the version found and the one read" {
	run tach-decode -F info "$V/version2.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $V/version2.tach: offset 4: Binary file was created with Python 3.15.0 (format version 2), but this reader supports format version 1" ]
	run tach2pprof -o x.pb.gz "$V/version0.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach2pprof: $V/version0.tach: offset 4: Unsupported format version 0 (this reader supports version 1)" ]
	[ ! -e x.pb.gz ]
}

@test "TACH to samples text to TACH gives every little-endian variant back byte for byte" {
	n=0
	for f in $(readable); do
		case $f in *-be.tach|*size40*) continue ;; esac
		tach-decode -F samples "$f" > s.txt
		tach-encode --compression none -o back.tach s.txt
		cmp "$f" back.tach
		n=$((n + 1))
	done
	[ "$n" -eq 13 ]
	tach-decode -F samples "$V/stats56.tach" > s.txt
	grep -qx '@tachstat 56 1 3 0 1.25 4 2.5 1.5' s.txt
	tach-decode -F samples "$V/stats32.tach" > s.txt
	grep -qx '@tachstat 32 1 0 0 1.25 4 0 0' s.txt
}

@test "a big-endian file's block comes back in host order with the same values and flags" {
	for f in stats56-be stats32-be mode-cpu-stats-be; do
		tach-decode -F samples "$V/$f.tach" | tach-encode --compression none -o back.tach
		[ "$(tach-decode -F samples back.tach)" = "$(tach-decode -F samples "$V/$f.tach")" ]
		[ "$(info back.tach)" = "$(info "$V/$f.tach")" ]
	done
	# the block's bytes as the little-endian generator makes them
	tach-decode -F samples "$V/stats56-be.tach" | tach-encode --compression none -o back.tach
	cmp back.tach "$V/stats56.tach"
}

@test "the samples text's @tachstat line: exact doubles, a NaN's bits, and its errors" {
	printf '@tachstat 56 1 2 7 0.10000000000000001 -inf nan:7ff8000000000123 1e-300\n' > a.txt
	printf '1 0 5 1\tm.py:f:1\n' >> a.txt
	tach-encode --compression none -o a.tach a.txt
	[ "$(tach-decode -F samples a.tach | grep '^@tachstat')" = '@tachstat 56 1 2 7 0.10000000000000001 -inf nan:7ff8000000000123 1e-300' ]
	for bad in '@tachstat 40 1 0 0 1 1 0 0' '@tachstat 56 1 0 0 1 1 0' '@tachstat 56 1 0 0 1 1 0 x' \
		   '@tachstat 56 1 0 0 1 1 0 0 9'; do
		printf '%s\n' "$bad" > b.txt
		run tach-encode -o b.tach b.txt
		[ "$status" -eq 1 ]
		[[ "$output" == "tach-encode: b.txt:1: "*tachstat* ]]
	done
}

@test "every writer takes every variant and gives the same stacks" {
	tach-decode "$V/plain.tach" > want.txt
	for f in $(readable); do
		[ "$(tach-decode "$f")" = "$(cat want.txt)" ]
		tach2pprof -o p.pb.gz "$f"
		[ "$(tach-decode p.pb.gz)" = "$(cat want.txt)" ]
		tach2gecko -o g.json.gz "$f"
		tach2speedscope -o s.json "$f"
		# speedscope numbers its threads: the stacks without the thread; it keeps each
		# stack's time (a run of samples one weighted sample): the times
		[ "$(tach-decode --value time s.json | cut -d';' -f2-)" = \
			"$(tach-decode --value time "$f" | cut -d';' -f2-)" ]
		tach2flamegraph -o f.svg "$f"
		tach2pstats -o p.pstats "$f"
		tach2sampler -o t.txt "$f"
		tach2callgrind -o c.out "$f"
		tach-merge -o m.tach "$f"
		[ "$(tach-decode m.tach)" = "$(cat want.txt)" ]
		[ -s g.json.gz ] && [ -s f.svg ] && [ -s p.pstats ] && [ -s t.txt ] && [ -s c.out ]
	done
}

@test "the mode reaches the writers: pprof's sample type, Gecko's product, speedscope's name" {
	for m in cpu all; do
		tach2pprof -o p.pb.gz "$V/mode-$m.tach"
		[ "$(tach-decode -F info p.pb.gz | grep '(the weights)')" = "value_type: cpu/nanoseconds (the weights) (default)" ]
	done
	for m in wall gil exception; do
		tach2pprof -o p.pb.gz "$V/mode-$m.tach"
		[ "$(tach-decode -F info p.pb.gz | grep '(the weights)')" = "value_type: wall/nanoseconds (the weights) (default)" ]
	done
	[ "$(tach2gecko --no-gzip "$V/mode-gil.tach" | jq -r .meta.product)" = "Python 3.15 (gil mode)" ]
	[ "$(tach2gecko --no-gzip "$V/plain.tach" | jq -r .meta.product)" = "Python 3.15" ]
	[ "$(tach2speedscope "$V/mode-cpu.tach" | jq -r .name)" = "Python 3.15 (cpu mode)" ]
	[ "$(tach2speedscope "$V/plain.tach" | jq -r .name)" = "null" ]
	# the word itself, feature bits and all, is kept through TACH
	tach-decode -F samples "$V/mode-cpu-bits.tach" | tach-encode --compression none -o back.tach
	[ "$(info back.tach)" = "$(info "$V/mode-cpu-bits.tach")" ]
}

@test "tach-merge keeps one input's block, sums durations of several and drops their error rates" {
	tach-merge -o one.tach "$V/stats56-error.tach"
	[ "$(info one.tach)" = "$(info "$V/stats56-error.tach")" ]
	run tach-merge -o two.tach "$V/stats56.tach" "$V/stats-second.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "tach-merge: warning: the inputs' error and missed-sample rates cannot be merged: the output's statistics block has duration and sample rate only" ]
	[ "$(info two.tach)" = "profiling_config: 0
stats_block: 56 bytes, version 1
stats_duration_s: 4.25
stats_sample_rate: 2.5882352941176472" ]
	# the 32-byte form has no rates to drop: no warning
	run tach-merge -o three.tach "$V/stats32.tach" "$V/stats32-be.tach"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(info three.tach | grep duration)" = "stats_duration_s: 2.5" ]
	run tach-merge -o four.tach "$V/stats56.tach" "$V/plain.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"not every input has a statistics block"* ]]
	[ "$(info four.tach)" = "profiling_config: 0" ]
}
