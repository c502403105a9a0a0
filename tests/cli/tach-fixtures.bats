#!/usr/bin/env bats
# Conformance with the reference TACH files written and read by CPython's own code
# ($FIXTURES/tach): decoding, header values, record statistics, error files, and our writer
# reproducing CPython's bytes.

setup() {
	T=$FIXTURES/tach
	W=$BATS_TEST_TMPDIR
}

# The sample lines of an .expected.txt (everything but # lines).
expected_samples() {
	grep -v '^#' "$1" || true
}

# The decoded sample lines of a .tach (the @ header lines dropped), as CPython's replay
# shows them: the text keeps what a table row has beyond that so that it round-trips (the
# columns of a frame without a line, and FRAME@K for a second row that prints alike).
decoded_samples() {
	tach-decode --format samples "$1" | grep -v '^@' |
		sed -E 's/:-:-:[^:;]*:[^:;]*:/:-:-:-:-:/g; s/@[0-9]+(;|$)/\1/g' || true
}

# key=value pairs of the "# NAME:" line of an expected file, one per line.
expected_fields() { # file name
	grep "^# $2: " "$1" | sed "s/^# $2: //" | tr ' ' '\n'
}

# value of "key: value" in tach-decode --format info output
info_value() { # infofile key
	sed -n "s/^$2: //p" "$1"
}

fail_with() {
	printf '%s\n' "$@" >&2
	return 1
}

cases_of() { # dir
	for f in "$T/$1"/*.tach; do basename "$f" .tach; done
}

check_decode() { # dir name
	local f=$T/$1/$2.tach e=$T/cases/$2.expected.txt
	expected_samples "$e" >"$W/want"
	decoded_samples "$f" >"$W/got" || fail_with "$1/$2: tach-decode failed"
	cmp -s "$W/want" "$W/got" || {
		diff "$W/want" "$W/got" | head -5 >&2
		fail_with "$1/$2: decoded samples differ from cases/$2.expected.txt"
	}
}

@test "every fixture decodes to the samples CPython replayed, in its order" {
	local n=0 bad=0
	for d in cases layout-a big-endian; do
		for name in $(cases_of $d); do
			n=$((n + 1))
			check_decode $d "$name" || bad=$((bad + 1))
		done
	done
	[ "$n" -ge 45 ] || fail_with "only $n fixtures found"
	[ "$bad" -eq 0 ]
}

check_info() { # dir name
	local f=$T/$1/$2.tach e=$T/cases/$2.expected.txt i=$W/info bad=0
	tach-decode --format info "$f" >"$i" || fail_with "$1/$2: --format info failed"
	while IFS='=' read -r k v; do
		local got
		case $k in
		compression_type)
			case $v in 0) v=none ;; 1) v=zstd ;; esac
			got=$(info_value "$i" compression) ;;
		needs_swap)
			# the expected files are those of cases/ (little-endian)
			[ "$1" = big-endian ] && v=big || v=little
			got=$(info_value "$i" byte_order) ;;
		*) got=$(info_value "$i" "$k") ;;
		esac
		[ "$got" = "$v" ] || { echo "$1/$2: header $k: want '$v', got '$got'" >&2; bad=1; }
	done < <(expected_fields "$e" header)
	while IFS='=' read -r k v; do
		local got
		got=$(info_value "$i" "$k")
		[ "$got" = "$v" ] || { echo "$1/$2: footer $k: want '$v', got '$got'" >&2; bad=1; }
	done < <(expected_fields "$e" footer)
	local full suffix pp
	full=$(info_value "$i" full_records)
	suffix=$(info_value "$i" suffix_records)
	pp=$(info_value "$i" pop_push_records)
	while IFS='=' read -r k v; do
		local got
		case $k in
		total_samples) got=$(info_value "$i" samples_decoded) ;;
		stack_reconstructions) got=$((full + suffix + pp)) ;;
		*) got=$(info_value "$i" "$k") ;;
		esac
		[ "$got" = "$v" ] || { echo "$1/$2: stats $k: want '$v', got '$got'" >&2; bad=1; }
	done < <(expected_fields "$e" stats)
	local layout=B
	[ "$1" = layout-a ] && layout=A
	[ "$(info_value "$i" header_layout)" = "$layout" ] ||
		{ echo "$1/$2: header_layout is not $layout" >&2; bad=1; }
	[ "$(info_value "$i" file_size)" = "$(stat -c %s "$f")" ] ||
		{ echo "$1/$2: file_size" >&2; bad=1; }
	return $bad
}

@test "--format info shows CPython's header, footer and record statistics" {
	local bad=0
	for d in cases layout-a big-endian; do
		for name in $(cases_of $d); do
			check_info $d "$name" || bad=$((bad + 1))
		done
	done
	[ "$bad" -eq 0 ]
}

# CPython's message for each damaged file, and the words of ours (which names the file and
# the byte offset). Ours keeps CPython's wording except where noted.
declare -gA ERR_WORDS=(
	[err_bad_magic]='offset 0: Invalid magic number: 0x58585858'
	[err_compression_flag_on_raw]='offset 64: Corrupted zstd frame header'
	[err_sample_count_plus1]='offset 28: Sample count mismatch: header declares 2 samples but replay decoded 1'
	[err_strtab_offset_big]='offset 40: Invalid string table offset: 168 exceeds file size 167'
	[err_thread_count_low]='Invalid thread count: sample data contains more unique threads than declared in header (declared 2, found at least 3)'
	[err_truncated_60]='offset 60: File too small for header'
	# CPython's older reader says "String table overflow"; the current one checks the
	# string count against the bytes left first, as we do.
	[err_truncated_tail]='offset 166: the file is truncated (or has bytes past its end)'
	[err_unknown_encoding]='offset 64: Unknown stack encoding: 7'
	[err_version_0]='offset 4: Unsupported format version 0 (this reader supports version 1)'
	[err_version_2]='offset 4: Binary file was created with Python 3.15.0 (format version 2)'
)

@test "every damaged file fails with exit 1, naming the file and an offset" {
	local n=0 bad=0
	for f in "$T"/errors/err_*.tach; do
		local name
		name=$(basename "$f" .tach)
		[ "$name" = err_footer_filesize_wrong ] && continue
		n=$((n + 1))
		for fmt in samples collapsed info; do
			# the TACH reader's own checks: a bad magic is no TACH file to detection
			run tach-decode --from tach --format $fmt "$f"
			if [ "$status" -ne 1 ]; then
				echo "$name ($fmt): exit $status" >&2
				bad=1
			fi
			case $output in
			*"tach-decode: $f: offset "[0-9]*": "*) ;;
			*) echo "$name: no 'FILE: offset N:' in: $output" >&2; bad=1 ;;
			esac
			[[ $output == *"${ERR_WORDS[$name]:?no words for $name}"* ]] ||
				{ echo "$name: want '${ERR_WORDS[$name]}' in: $output" >&2; bad=1; }
			# CPython's own message, where it printed one at open
			if grep -q '^ERROR(open)' "$T/errors/$name.expected.txt" &&
				[ "$name" != err_truncated_tail ]; then
				local cp
				cp=$(sed -n 's/^ERROR(open): ValueError: //p' "$T/errors/$name.expected.txt")
				cp=${cp%%, but this is*}
				[[ $output == *"$cp"* ]] || { echo "$name: CPython said '$cp'" >&2; bad=1; }
			fi
		done
	done
	[ "$n" -eq 10 ]
	[ "$bad" -eq 0 ]
	run tach-decode "$T/errors/err_bad_magic.tach"
	[ "$status" -eq 1 ]
	[[ $output == *": offset 0: input format not recognized: it starts \"XXXX"* ]]
}

@test "a wrong footer file size: decoded with a warning, refused with --strict" {
	local f=$T/errors/err_footer_filesize_wrong.tach
	run tach-decode --format samples "$f"
	[ "$status" -eq 0 ]
	[[ $output == *"tach-decode: $f: offset 143: warning: footer records file size 12345 but the file has 167 bytes"* ]]
	tach-decode --format samples "$f" 2>/dev/null | grep -v '^@' >"$W/got"
	expected_samples "$T/errors/err_footer_filesize_wrong.expected.txt" >"$W/want"
	cmp "$W/want" "$W/got"
	run tach-decode -q --format samples "$f"
	[ "$status" -eq 0 ]
	[[ $output != *warning* ]]
	run tach-decode --strict "$f"
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: $f: offset 143: footer records file size 12345 but the file has 167 bytes" ]]
}

# The sample region (bytes 64 .. string table) of a .tach, decompressed if zstd.
region() { # file out
	local so comp
	so=$(tach-decode --format info "$1" | sed -n 's/^string_table_offset: //p')
	comp=$(tach-decode --format info "$1" | sed -n 's/^compression: //p')
	if [ "$comp" = zstd ]; then
		tail -c +65 "$1" | head -c $((so - 64)) | zstd -dc -q >"$2"
	else
		tail -c +65 "$1" | head -c $((so - 64)) >"$2"
	fi
}

@test "tach-encode --compression none reproduces CPython's bytes; zstd its sample region" {
	local n=0 bad=0
	for in in "$T"/cases/*.in.txt; do
		local name
		name=$(basename "$in" .in.txt)
		case $name in rle_long_10000*) continue ;; esac
		n=$((n + 1))
		if [[ $name == *.zstd ]]; then
			tach-encode <"$in" >"$W/out.tach" || { bad=1; continue; }
			region "$W/out.tach" "$W/ours"
			region "$T/cases/$name.tach" "$W/theirs"
			cmp -s "$W/ours" "$W/theirs" ||
				{ echo "$name: decompressed sample region differs" >&2; bad=1; }
			decoded_samples "$W/out.tach" >"$W/got"
			expected_samples "$T/cases/$name.expected.txt" >"$W/want"
			cmp -s "$W/got" "$W/want" || { echo "$name: decoded text differs" >&2; bad=1; }
			# and the tables after the region are CPython's too
			local so1 so2
			so1=$(tach-decode -F info "$W/out.tach" | sed -n 's/^string_table_offset: //p')
			so2=$(tach-decode -F info "$T/cases/$name.tach" | sed -n 's/^string_table_offset: //p')
			# (all but the footer's file size and reserved bytes)
			cmp -s <(tail -c +$((so1 + 1)) "$W/out.tach" | head -c -24) \
				<(tail -c +$((so2 + 1)) "$T/cases/$name.tach" | head -c -24) ||
				{ echo "$name: tables or footer counts differ" >&2; bad=1; }
		else
			tach-encode --compression none <"$in" >"$W/out.tach" || { bad=1; continue; }
			cmp "$W/out.tach" "$T/cases/$name.tach" >&2 ||
				{ echo "$name: bytes differ from CPython's" >&2; bad=1; }
		fi
	done
	[ "$n" -ge 20 ]
	[ "$bad" -eq 0 ]
}

@test "rle_long_10000: our writer splits the 9999-sample run at 16 KiB, as CPython now does" {
	for name in rle_long_10000 rle_long_10000.zstd; do
		local comp=none
		[[ $name == *.zstd ]] && comp=zstd
		tach-encode --compression $comp <"$T/cases/$name.in.txt" >"$W/out.tach"
		decoded_samples "$W/out.tach" >"$W/got"
		expected_samples "$T/cases/$name.expected.txt" >"$W/want"
		cmp "$W/got" "$W/want"
		tach-decode -F info "$W/out.tach" >"$W/info"
		# 1000 us deltas are 3-byte entries: 5458 per record, then the other 4541
		[ "$(info_value "$W/info" repeat_records)" = 2 ]
		[ "$(info_value "$W/info" repeat_samples)" = 9999 ]
		[ "$(info_value "$W/info" full_records)" = 1 ]
	done
	region "$W/out.tach" "$W/r"
	# after the 19-byte FULL record and the next record's 13-byte header: count 5458 (d2 2a)
	[ "$(head -c $((19 + 13 + 2)) "$W/r" | tail -c 2 | od -An -tx1 | tr -d ' ')" = d22a ]
}

@test "samples text round trip: decode | encode gives CPython's bytes back" {
	local n=0 bad=0
	for d in cases layout-a big-endian; do
		for name in $(cases_of $d); do
			case $name in *.zstd | rle_long_10000) continue ;; esac
			n=$((n + 1))
			tach-decode --format samples "$T/$d/$name.tach" | tach-encode --compression none >"$W/rt.tach"
			cmp -s "$W/rt.tach" "$T/cases/$name.tach" ||
				{ echo "$d/$name: round trip differs" >&2; bad=1; }
		done
		for name in $(cases_of $d); do
			case $name in rle_long_10000*) continue ;; *.zstd) ;; *) continue ;; esac
			tach-decode --format samples "$T/$d/$name.tach" | tach-encode >"$W/rt.tach"
			region "$W/rt.tach" "$W/a"
			region "$T/cases/$name.tach" "$W/b"
			cmp -s "$W/a" "$W/b" || { echo "$d/$name: zstd round trip differs" >&2; bad=1; }
		done
	done
	[ "$n" -ge 30 ]
	[ "$bad" -eq 0 ]
}

@test "synthetic_frames: the text keeps both of two rows that print alike, and a row's columns" {
	# Its frame table has two identical rows (6 7 7 7 -1 -1 255, from frames that differed
	# only in an end column CPython dropped) and a row with line -1 but columns 3..9, which
	# CPython's own replay does not show. The text marks the second row FRAME@1 and keeps the
	# columns, so the round trip gives CPython's bytes back.
	local f=$T/cases/synthetic_frames.tach
	tach-decode --format samples "$f" >"$W/s.txt"
	grep -q ';gc.py:collect:-:-:3:9:-;' "$W/s.txt"
	grep -q ';m.py:f:7:7:-1:-1:-@1$' "$W/s.txt"
	tach-encode --compression none "$W/s.txt" -o "$W/rt.tach"
	cmp "$W/rt.tach" "$f"
	tach-decode -F info "$W/rt.tach" | grep -qx 'frame_count: 6'
	# a mark the reader cannot take is an error with its line
	printf '1 0 1 0\ta.py:f:1:1:-1:-1:-@0\n' >"$W/bad.txt"
	run tach-encode "$W/bad.txt" -o "$W/x.tach"
	[ "$status" -eq 1 ]
	[[ $output == *"bad.txt:1: bad row mark in frame"* ]]
}

@test "default output is CPython's collapsed form (replay --collapsed)" {
	local n=0
	for want in "$TESTDATA"/collapsed-cpython/*.txt; do
		local name
		name=$(basename "$want" .txt)
		n=$((n + 1))
		tach-decode "$T/cases/$name.tach" >"$W/got"
		diff "$want" "$W/got"
		# every layout and byte order and the zstd twin give the same
		for other in "$T/layout-a/$name.tach" "$T/big-endian/$name.tach" "$T/cases/$name.zstd.tach"; do
			[ -f "$other" ] || continue
			tach-decode "$other" | diff "$want" -
		done
	done
	[ "$n" -ge 8 ]
}

@test "reading on a second thread gives the bytes a single thread gives, errors included" {
	local n=0 bad=0 f fmt
	for f in "$T"/cases/*.tach "$T"/layout-a/*.tach "$T"/big-endian/*.tach "$T"/errors/*.tach; do
		for fmt in samples collapsed; do
			n=$((n + 1))
			local s1=0 s2=0
			TACHFMT_THREADS=1 tach-decode --format $fmt "$f" >"$W/one" 2>"$W/one.err" || s1=$?
			TACHFMT_THREADS=2 tach-decode --format $fmt "$f" >"$W/two" 2>"$W/two.err" || s2=$?
			if [ $s1 != $s2 ] || ! cmp -s "$W/one" "$W/two" || ! cmp -s "$W/one.err" "$W/two.err"; then
				echo "$f ($fmt): exit $s1 vs $s2" >&2
				diff "$W/one" "$W/two" | head -4 >&2
				bad=$((bad + 1))
			fi
		done
	done
	[ "$n" -ge 100 ] || fail_with "only $n runs"
	[ "$bad" -eq 0 ]
}

@test "a TACH file cut short says it is truncated, at its end, then what CPython's checks found" {
	local f=$T/cases/rle_runs.tach size
	size=$(stat -c %s "$f")
	head -c $((size - 10)) "$f" >cut.tach
	run tach-decode cut.tach
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: cut.tach: offset $((size - 10)): the file is truncated (or has bytes past its end): its last 32 bytes are not a footer recording its $((size - 10)) bytes (Invalid string count "*" exceeds maximum possible "*")" ]]
	run tach-decode "$T/errors/err_truncated_tail.tach"
	[[ $output == *"offset 166: the file is truncated"*"(Invalid string count 1026 exceeds maximum possible 82)" ]]
	# a whole file says nothing of the kind
	tach-decode "$f" >/dev/null
}
