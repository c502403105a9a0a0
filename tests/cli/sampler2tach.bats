#!/usr/bin/env bats
# sampler2tach over hand-made Sampler traces (made by sampler_gen.py: they are binary), one
# test per tolerance of the reader, its errors, and its options.

setup() {
	GEN="python3 $SOURCE_ROOT/tests/cli/sampler_gen.py"
	T=$BATS_TEST_TMPDIR
}

mk() { # case -> $T/case.trace
	$GEN "$1" > "$T/$1.trace"
}

conv() { # case [options] -> collapsed on stdout, stderr in $T/err
	local c=$1
	shift
	mk "$c"
	sampler2tach "$@" "$T/$c.trace" 2> "$T/err" > "$T/$c.tach" || return $?
	tach-decode "$T/$c.tach"
}

samples() { # case [options] -> samples text without header lines
	local c=$1
	shift
	mk "$c"
	sampler2tach "$@" "$T/$c.trace" 2> "$T/err" > "$T/$c.tach" || return $?
	tach-decode -F samples "$T/$c.tach" | grep -v '^@'
}

@test "basic: the kpreid grammar, leaf first, lines and files from the symbols" {
	run conv basic
	[ "$status" -eq 0 ]
	[ ! -s "$T/err" ]
	[ "$output" = "tid:8482;app.lisp:main:10;app.lisp:work:20;libc.dylib:leaf:0 2
tid:8482;app.lisp:main:10;app.lisp:work:20 1" ]
}

@test "samples: one per record, timestamps k*interval per thread, status unknown" {
	run samples multi_block
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' \
		'8482 0 0 4	~:f:-:-:-:-:-' \
		'8483 0 0 4	~:g:-:-:-:-:-' \
		'8482 0 1000 4	~:f:-:-:-:-:-' \
		'8482 0 2000 4	~:g:-:-:-:-:-;~:f:-:-:-:-:-')" ]
}

@test "--interval sets timestamps and the header interval" {
	mk multi_block
	sampler2tach --interval 250 "$T/multi_block.trace" > "$T/o.tach"
	run tach-decode -F samples "$T/o.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"@interval_us 250"* ]]
	[[ "$output" == *"8482 0 500 4	"* ]]
	run tach-decode -F info "$T/o.tach"
	[[ "$output" == *"sample_interval_us: 250"* ]]
	sampler2tach --interval 250 --from-us 250 --to-us 500 "$T/multi_block.trace" > "$T/f.tach"
	run tach-decode "$T/f.tach"
	[ "$output" = "tid:8482;f 1" ]
}

@test "--interval rejects 0, non-numbers and values past 32 bits" {
	mk basic
	for v in 0 x -1 4294967296; do
		run sampler2tach --interval "$v" "$T/basic.trace"
		[ "$status" -eq 2 ]
		[[ "$output" == *"interval must be 1..4294967295"* ]]
	done
}

@test "sb-sprof's writer: one block, no first @end, the off-by-one undefined id" {
	run conv sbcl
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8485;0x00002127;b.lisp:other:0;leaf 1
tid:8485;app.lisp:main:0;app.lisp:work:0 1
tid:8485;app.lisp:main:0;app.lisp:work:0;Thread 1
tid:8485;app.lisp:main:0;app.lisp:work:0;leaf 1" ]
	[ "$(grep -c warning "$T/err")" -eq 1 ]
	grep -q 'offset 274: warning: symbol id 0x00002127 used but not defined' "$T/err"
}

@test "sb-sprof without a thread entry writes NIL: thread 0, one warning" {
	run conv sbcl_nil
	[ "$status" -eq 0 ]
	[[ "$output" == *"tid:0;app.lisp:main:0;app.lisp:work:0;leaf 2"* ]]
	grep -q 'warning: thread id NIL read as thread 0' "$T/err"
	run conv nil_thread
	[ "$output" = "tid:0;f 1" ]
}

@test "a thread id that is also a frame" {
	run conv thread_is_frame
	[ "$status" -eq 0 ]
	[ ! -s "$T/err" ]
	[ "$output" = "tid:8482;a.lisp:f:0 1
tid:8482;a.lisp:f:0;Thread 1" ]
}

@test "undefined ids: frames named by their ids, warned once" {
	run conv undefined
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;0x0000beef 1
tid:8482;f;0x0000cafe 1" ]
	[ "$(wc -l < "$T/err")" -eq 1 ]
	grep -q "sampler2tach: $T/undefined.trace: offset 95: warning: symbol id 0x0000cafe used but not defined" "$T/err"
}

@test "missing final @end: complete records kept, warning; --strict fails" {
	run conv no_final_end
	[ "$status" -eq 0 ]
	[[ "$output" == *"libc.dylib:leaf:0 2"* ]]
	grep -q 'offset 318: warning: no final @end' "$T/err"
	run sampler2tach --strict "$T/no_final_end.trace" -o "$T/out.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 318: no final @end"* ]]
	[ ! -e "$T/out.tach" ]
}

@test "a record cut by the end of the file is dropped with a warning" {
	run conv truncated
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;app.lisp:main:10;app.lisp:work:20 1
tid:8482;app.lisp:main:10;app.lisp:work:20;libc.dylib:leaf:0 1" ]
	grep -q 'offset 288: warning: the file ends inside a record' "$T/err"
	run sampler2tach --strict "$T/truncated.trace"
	[ "$status" -eq 1 ]
}

@test "a file ending inside the symbol table or after the magic lines" {
	run conv only_magic
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	grep -q 'warning: no final @end' "$T/err"
	$GEN basic | head -c 60 > "$T/cut.trace"
	run sampler2tach "$T/cut.trace"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offset 35: warning: the file ends inside a symbol line"* ]]
}

@test "CR before LF on text lines only; a 0x0D id byte before a record's LF is data" {
	run conv crlf_text
	[ "$status" -eq 0 ]
	[ ! -s "$T/err" ]
	[ "$output" = "tid:8482;a.c:f:3 1
tid:8482;a.c:f:3;a.c:g:4 1" ]
}

@test "a CRLF-converted file gets a clear error" {
	mk crlf_converted
	run sampler2tach "$T/crlf_converted.trace" -o "$T/out.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "sampler2tach: $T/crlf_converted.trace: offset "*": every LF in the file follows a CR: it was converted to CRLF line ends"* ]]
	[ ! -e "$T/out.tach" ]
}

@test "several blocks for one thread are merged" {
	run conv multi_block
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;f 2
tid:8482;f;g 1
tid:8483;g 1" ]
}

@test "ids holding TAB and LF bytes, in the table, records and thread header" {
	run conv tab_ids
	[ "$status" -eq 0 ]
	[ ! -s "$T/err" ]
	[ "$output" = "tid:8713;x.c:f0:2569;x.c:f1:2570 1
tid:8713;x.c:f4:2573 1
tid:8713;x.c:f4:2573;x.c:f3:2572;x.c:f2:2571;x.c:f1:2570;x.c:f0:2569 1" ]
}

@test "byte order and id width detected: little-endian, 8-byte ids, 8-byte header words" {
	want="tid:8482;a.c:main:7 1
tid:8482;a.c:main:7;a.c:leaf:9 1"
	for c in basic little_endian ids64 ids64_hdr64; do
		run conv $c
		[ "$status" -eq 0 ]
		[ ! -s "$T/err" ]
		[ "$c" = basic ] || [ "$output" = "$want" ]
	done
}

@test "V1.1 header, V1.0 symbol table" {
	run conv versions
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;f 1" ]
}

@test "unknown sections are skipped with a warning" {
	run conv unknown_section
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;f 2" ]
	grep -q 'offset 56: warning: unknown section "@notesV2.0" skipped' "$T/err"
	grep -q 'warning: unknown section "@fooV1.0" skipped' "$T/err"
	run sampler2tach --strict "$T/unknown_section.trace"
	[ "$status" -eq 1 ]
}

@test "a duplicate id: the last definition wins, one warning" {
	run conv duplicate
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;second;y 1" ]
	[ "$(wc -l < "$T/err")" -eq 1 ]
	grep -q 'warning: symbol id defined twice' "$T/err"
}

@test "header words other than 1 0 1: warned once, still one sample each" {
	run conv header_words
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;f 2" ]
	[ "$(wc -l < "$T/err")" -eq 1 ]
	run sampler2tach --strict "$T/header_words.trace"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 78: record header words are not 1 0 1"* ]]
}

@test "symbol text: TAB in names, missing paths, NIL, (null), empty, line words" {
	run samples fields
	[ "$status" -eq 0 ]
	[ "$output" = "8482 0 0 4	/src/s.c:a%09b:12:12:-1:-1:-;~:nameonly:-:-:-:-:-;/lib/one.so:onepath:5:5:-1:-1:-;/lib/l.so:nullsrc:-:-:-:-:-;/lib/e.so:emptysrc:-:-:-:-:-;::1:1:-1:-1:-" ]
}

@test "bytes after the final @end are ignored; @end between blocks is not the end" {
	run conv after_end
	[ "$status" -eq 0 ]
	[ ! -s "$T/err" ]
	[[ "$output" == *"libc.dylib:leaf:0 2"* ]]
	run conv end_between
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;f 1
tid:8483;g 1" ]
}

@test "blank lines, an empty record, a trace without threads" {
	run conv blank_lines
	[ "$status" -eq 0 ]
	[ "$output" = "tid:8482;f 2" ]
	run samples empty_record
	[ "$status" -eq 0 ]
	[ "$output" = "8482 0 0 4	
8482 0 1000 4	~:f:-:-:-:-:-" ]
	run conv no_threads
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ ! -s "$T/err" ]
}

@test "errors: messages with offsets, exit 1" {
	check() { # case offset message
		mk "$1"
		run sampler2tach "$T/$1.trace"
		[ "$status" -eq 1 ]
		[ "$output" = "sampler2tach: $T/$1.trace: offset $2: $3" ]
	}
	check bad_magic 0 "not a Sampler trace: expected @supersamplerV1.0 or V1.1"
	check no_symtab 18 "expected @symboltableV1.0 or V1.1"
	check bad_thread_id 61 '@threadV1.0: expected a hexadecimal thread id, not "zz12"'
	check record_outside 61 "record outside a @threadV1.0 block"
	check bad_record 100 "record of 3 frames: expected LF at offset 129"
	check garbage_line 78 "expected a record (TAB), a @ tag or the end of the file"
	check bad_symbol_line 35 "symbol line: no TAB after a 4- or 8-byte id and its word"
	check huge_count 100 "record of 4294967280 frames exceeds the depth limit of 4096"
	printf '' > "$T/empty.trace"
	run sampler2tach "$T/empty.trace"
	[ "$status" -eq 1 ]
	[ "$output" = "sampler2tach: $T/empty.trace: offset 0: expected @supersamplerV1.0 or V1.1, found the end" ]
	run sampler2tach "$FIXTURES/tach/cases/single_sample.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 0: not a Sampler trace"* ]]
}

@test "--max-depth" {
	mk deep
	run sampler2tach --max-depth 4 "$T/deep.trace"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 78: record of 5 frames exceeds the depth limit of 4"* ]]
	sampler2tach --max-depth 5 "$T/deep.trace" > "$T/d.tach"
	[ "$(tach-decode "$T/d.tach")" = "tid:8482;f;f;f;f;f 1" ]
}

@test "--compression and --level reach the TACH writer" {
	mk basic
	sampler2tach --compression none "$T/basic.trace" > "$T/n.tach"
	tach-decode -F info "$T/n.tach" | grep -qx 'compression: none'
	sampler2tach --compression zstd --level 19 "$T/basic.trace" > "$T/z.tach"
	tach-decode -F info "$T/z.tach" | grep -qx 'compression: zstd'
	[ "$(tach-decode "$T/n.tach")" = "$(tach-decode "$T/z.tach")" ]
	run sampler2tach --compression lz4 "$T/basic.trace"
	[ "$status" -eq 2 ]
	run sampler2tach --level 0 "$T/basic.trace"
	[ "$status" -eq 2 ]
}

@test "stdin, -o, --thread, -v, -q" {
	mk multi_block
	sampler2tach < "$T/multi_block.trace" > "$T/a.tach"
	sampler2tach -o "$T/b.tach" - < "$T/multi_block.trace"
	cmp "$T/a.tach" "$T/b.tach"
	sampler2tach --thread 8483 "$T/multi_block.trace" > "$T/t.tach"
	[ "$(tach-decode "$T/t.tach")" = "tid:8483;g 1" ]
	run sampler2tach -v "$T/multi_block.trace" -o "$T/v.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"4 samples read, 4 written"* ]]
	mk undefined
	run sampler2tach -q "$T/undefined.trace" -o "$T/q.tach"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "I/O errors and usage errors" {
	mk basic
	# Never -o /dev/full: as root the temporary file beside it would be renamed over it.
	run sh -c "sampler2tach '$T/basic.trace' > /dev/full"
	[ "$status" -eq 1 ]
	run sampler2tach "$T/nonexistent.trace"
	[ "$status" -eq 1 ]
	[[ "$output" == *"No such file or directory"* ]]
	# two inputs are one profile (merged), not a usage error
	run sampler2tach "$T/basic.trace" "$T/basic.trace" -o "$T/two.tach"
	[ "$status" -eq 0 ]
	run sampler2tach --nope "$T/basic.trace"
	[ "$status" -eq 2 ]
	run sampler2tach -o "$T/nodir/x.tach" "$T/basic.trace"
	[ "$status" -eq 1 ]
}

@test "the man page documents every option" {
	for o in $(sampler2tach --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$o\*" "$SOURCE_ROOT/docs/sampler2tach.1.scd" || { echo "missing $o"; false; }
	done
}
