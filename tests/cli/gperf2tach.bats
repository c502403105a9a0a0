#!/usr/bin/env bats
# gperf2tach against the real gperftools fixtures and google/pprof's outputs for them.
# Stacks are compared through tests/cli/gperf_compare.py: frames of the fixtures' own
# binaries by function name, runs of libc/libm frames as one "[lib]" marker, because their
# names depend on this machine's libc build and whether its debug info is installed.

G="$FIXTURES/gperf"
CMP="$SOURCE_ROOT/tests/cli/gperf_compare.py"

setup() {
	T="$BATS_TEST_TMPDIR"
	unset TACHFMT_BINARY_PATH
}

# decode FILE.prof [gperf2tach options...]: the samples text of the conversion in $T/out.txt
convert() {
	local prof="$1"
	shift
	gperf2tach -q "$@" "$prof" -o "$T/out.tach"
	tach-decode --format samples "$T/out.tach" > "$T/out.txt"
}

compare_case() {
	local c="$1"
	convert "$G/$c/$c.prof" --binary-path "$G/$c"
	run python3 "$CMP" "$G/$c/$c.pprof.traces.txt" "$G/$c/$c.pprof.raw.txt" 1000 "$T/out.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	run python3 "$CMP" --from-raw "$G/$c/$c.pprof.raw.txt" "$G/$c/$c.pprof.raw.txt" 1000 "$T/out.txt"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "recursive (non-PIE): stacks and weights match pprof" {
	compare_case recursive
	[ "$(grep -vc '^@' "$T/out.txt")" -eq 146 ]
}

@test "hotloop (PIE, inlined function, libm): stacks and weights match pprof" {
	compare_case hotloop
	[ "$(grep -vc '^@' "$T/out.txt")" -eq 221 ]
}

@test "sharedlib (PIE + its own shared library): stacks and weights match pprof" {
	compare_case sharedlib
	[ "$(grep -vc '^@' "$T/out.txt")" -eq 108 ]
	grep -q 'libhot.c:' "$T/out.txt"
}

@test "without the binaries the comparison fails and each missing binary is reported" {
	run gperf2tach "$G/hotloop/hotloop.prof" -o "$T/out.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"/srv/profiles/gperf-fixtures/hotloop/hotloop: binary not found"* ]]
	tach-decode --format samples "$T/out.tach" > "$T/out.txt"
	run python3 "$CMP" "$G/hotloop/hotloop.pprof.traces.txt" "$G/hotloop/hotloop.pprof.raw.txt" 1000 "$T/out.txt"
	[ "$status" -eq 1 ]
	# Unsymbolized frames by module and file offset (tachfmt(5)), not absolute addresses.
	grep -q '/srv/profiles/gperf-fixtures/hotloop/hotloop:hotloop+0x' "$T/out.txt"
	! grep -q ':0x' "$T/out.txt" || false
}

@test "inlined calls are frames of their own, innermost first, with DWARF lines and columns" {
	convert "$G/hotloop/hotloop.prof" --binary-path "$G/hotloop"
	# hotloop.dwflsym.txt: 0x...2214 inlined_poly hotloop.c:14:21 <- compute_heavy hotloop.c:22:16
	grep -q $'\t/srv/profiles/gperf-fixtures/hotloop/hotloop.c:inlined_poly:14:14:21:21:-;/srv/profiles/gperf-fixtures/hotloop/hotloop.c:compute_heavy:22:22:16:16:-;/srv/profiles/gperf-fixtures/hotloop/hotloop.c:dispatch:44:44:13:13:-;' "$T/out.txt"
	# Callers are looked up at pc - 1: main's call of dispatch is line 54 column 9.
	grep -q 'hotloop.c:main:54:54:9:9:-' "$T/out.txt"
	# No DWARF for _start: the ELF symbol, with the binary's path as the file.
	grep -q ';/srv/profiles/gperf-fixtures/hotloop/hotloop:_start:-:-:-:-:-$' "$T/out.txt"
}

@test "gcc -flto: inline chains whose abstract origins are in other compile units" {
	# Frames as binutils addr2line -i gives them (tests/data/gperf-lto/README.md); elfutils
	# 0.188's dwarf_getscopes looks for the origins only in main's unit and finds none.
	L="$TESTDATA/gperf-lto"
	convert "$L/lto.prof" --binary-path "$L"
	[ "$(grep -vc '^@' "$T/out.txt")" -eq 8 ]
	[ "$(grep -c $'\t/src/lto/b.c:tri:1:1:41:41:-;/src/lto/b.c:helper:2:2:65:65:-;/src/lto/m.c:main:4:4:47:47:-;/src/lto/m.c:main:4:4:47:47:-$' "$T/out.txt")" -eq 5 ]
	[ "$(grep -c $'\t/src/lto/b.c:tri:1:1:50:50:-;/src/lto/b.c:helper:2:2:65:65:-;/src/lto/a.c:work:4:4:63:63:-;/src/lto/m.c:main:4:4:47:47:-$' "$T/out.txt")" -eq 3 ]
}

@test "samples: weight becomes samples one period apart, interval is the header period" {
	convert "$G/recursive/recursive.prof" --binary-path "$G/recursive"
	grep -qx '@interval_us 1000' "$T/out.txt"
	# Timestamps run 0, 1000, 2000, ... over all 146 samples.
	run awk '!/^@/ { if ($3 != n * 1000) bad = 1; n++ } END { print n, bad + 0 }' "$T/out.txt"
	[ "$output" = "146 0" ]
}

@test "--binary-path is repeatable and TACHFMT_BINARY_PATH adds directories" {
	convert "$G/sharedlib/sharedlib.prof" --binary-path /nonexistent --binary-path "$G/sharedlib"
	cp "$T/out.txt" "$T/a.txt"
	TACHFMT_BINARY_PATH="/nonexistent:$G/sharedlib" convert "$G/sharedlib/sharedlib.prof"
	cmp "$T/a.txt" "$T/out.txt"
	TACHFMT_BINARY_PATH="$G/sharedlib" convert "$G/sharedlib/sharedlib.prof" --binary-path /nonexistent
	cmp "$T/a.txt" "$T/out.txt"
}

@test "--binary-path also finds a binary under DIR by its full recorded path" {
	mkdir -p "$T/root/srv/profiles/gperf-fixtures/recursive"
	ln -s "$G/recursive/recursive" "$T/root/srv/profiles/gperf-fixtures/recursive/recursive"
	convert "$G/recursive/recursive.prof" --binary-path "$T/root"
	run python3 "$CMP" "$G/recursive/recursive.pprof.traces.txt" "$G/recursive/recursive.pprof.raw.txt" 1000 "$T/out.txt"
	[ "$status" -eq 0 ]
}

@test "--no-symbolize names frames by module and file offset, with the mapping's path" {
	convert "$G/recursive/recursive.prof" --no-symbolize --binary-path "$G/recursive"
	[ "$(grep -vc '^@' "$T/out.txt")" -eq 146 ]
	# The first record: leaf 0x40119d (not adjusted), then return address 0x40123e looked
	# up at 0x40123d, as pprof does; the mapping 401000-402000 is file offset 0x1000, which
	# the column keeps (4096; TACH reads the end column back equal to it).
	grep -v "^@" "$T/out.txt" | head -1 | grep -q $'\t/srv/profiles/gperf-fixtures/recursive/recursive:recursive+0x119d:-:-:4096:4096:-;/srv/profiles/gperf-fixtures/recursive/recursive:recursive+0x123d:'
	# libc's 7fb516d69000 at offset 0x26000: return address 0x7fb516d6a24a.
	grep -q '/usr/lib/x86_64-linux-gnu/libc.so.6:libc.so.6+0x27249:-:-:155648:155648:-' "$T/out.txt"
	! grep -q 'recursive.c' "$T/out.txt" || false
	! grep -q ':0x' "$T/out.txt" || false
}

@test "crafted be64, le32, be32, junkmaps, le64_roundtrip parse like the original" {
	for f in be64 le32 be32 junkmaps le64_roundtrip; do
		convert "$G/crafted/$f.prof" --binary-path "$G/recursive"
		run python3 "$CMP" "$G/crafted/$f.pprof.traces.txt" "$G/crafted/$f.pprof.raw.txt" 1000 "$T/out.txt"
		echo "$f: $output"
		[ "$status" -eq 0 ]
	done
	convert "$G/crafted/le32.prof" --binary-path "$G/recursive"
	cp "$T/out.txt" "$T/le32.txt"
	convert "$G/crafted/be32.prof" --binary-path "$G/recursive"
	cmp "$T/le32.txt" "$T/out.txt"
	convert "$G/recursive/recursive.prof" --binary-path "$G/recursive"
	cp "$T/out.txt" "$T/orig.txt"
	for f in be64 junkmaps; do
		convert "$G/crafted/$f.prof" --binary-path "$G/recursive"
		cmp "$T/orig.txt" "$T/out.txt"
	done
}

@test "hdrwords4 and period0 fail with a clear message and leave no output" {
	run gperf2tach "$G/crafted/hdrwords4.prof" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "gperf2tach: $G/crafted/hdrwords4.prof: offset 8: 64-bit little-endian header declares 4 header words; gperftools writes 3 and google/pprof accepts no other value" ]
	run gperf2tach "$G/crafted/period0.prof" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "gperf2tach: $G/crafted/period0.prof: offset 24: 64-bit little-endian header has a sampling period of 0 microseconds" ]
	[ -z "$(ls "$T" | grep x.tach)" ]
}

@test "not a profile: short, empty and wrong inputs fail with exit 1" {
	printf 'hello' > "$T/short"
	run gperf2tach "$T/short" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 0: not a gperftools CPU profile: 5 bytes is shorter than its header"* ]]
	run gperf2tach "$T/x.tach" < /dev/null
	[ "$status" -eq 1 ]
	run gperf2tach -o "$T/x.tach" - < /dev/null
	[ "$status" -eq 1 ]
	head -c 4096 /dev/zero > "$T/zeros"
	run gperf2tach "$T/zeros" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not a gperftools CPU profile: the header is not 0, 3, 0, period, 0"* ]]
	[ ! -e "$T/x.tach" ]
}

@test "trunc_*: the whole records are kept and the cut is reported; --strict fails" {
	for f in trunc_half trunc_mid trunc_odd; do
		run gperf2tach --binary-path "$G/recursive" "$G/crafted/$f.prof" -o "$T/$f.tach"
		[ "$status" -eq 0 ]
		[[ "$output" == "gperf2tach: $G/crafted/$f.prof: offset 2704: warning: the file is cut inside a record of 38 PCs"*"keeping the 10 whole records before it" ]]
		tach-decode --format samples "$T/$f.tach" > "$T/$f.txt"
		[ "$(grep -vc '^@' "$T/$f.txt")" -eq 19 ]
		# Never a frame invented from missing PCs.
		! grep -q ':0x0:' "$T/$f.txt" || false
		run gperf2tach --strict "$G/crafted/$f.prof" -o "$T/s.tach"
		[ "$status" -eq 1 ]
		[ ! -e "$T/s.tach" ]
	done
	cmp "$T/trunc_half.txt" "$T/trunc_mid.txt"
	cmp "$T/trunc_half.txt" "$T/trunc_odd.txt"
}

@test "trunc_nomaps and trunc_notrailer: accepted with a warning, addresses kept" {
	run gperf2tach "$G/crafted/trunc_nomaps.prof" -o "$T/a.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offset 21760: warning: no maps section after the trailer"* ]]
	run gperf2tach "$G/crafted/trunc_notrailer.prof" -o "$T/b.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offset 21736: warning: the file ends after 95 records without the trailer"* ]]
	tach-decode --format samples "$T/a.tach" > "$T/a.txt"
	tach-decode --format samples "$T/b.tach" > "$T/b.txt"
	cmp "$T/a.txt" "$T/b.txt"
	[ "$(grep -vc '^@' "$T/a.txt")" -eq 146 ]
	grep -q $'\t\\[unknown\\]:0x401213:' "$T/a.txt"
	run gperf2tach --strict "$G/crafted/trunc_notrailer.prof" -o "$T/c.tach"
	[ "$status" -eq 1 ]
}

@test "zerocount: count 0 skipped, an empty stack kept, pc 0 a frame of its own" {
	run gperf2tach --binary-path "$G/recursive" "$G/crafted/zerocount.prof" -o "$T/z.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offset 21736: warning: record with a sample count of 0 skipped"* ]]
	[[ "$output" == *"offset 21792: warning: record without PCs (count 3) kept as an empty stack"* ]]
	tach-decode --format samples "$T/z.tach" > "$T/out.txt"
	# pprof counts the empty stack's 3 samples in its total but prints no trace for it.
	run python3 "$CMP" --pprof-empty 3 "$G/crafted/zerocount.pprof.traces.txt" "$G/crafted/zerocount.pprof.raw.txt" 1000 "$T/out.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c $'\t$' "$T/out.txt")" -eq 3 ]
	grep -q $'\t\\[unknown\\]:0x0:-:-:-:-:-$' "$T/out.txt"
	run gperf2tach --strict "$G/crafted/zerocount.prof" -o "$T/z.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 21736: record with a sample count of 0 skipped" ]]
}

@test "leafzero_first: a leaf PC of 0 is kept (pprof does; the perl pprof stops there)" {
	convert "$G/crafted/leafzero_first.prof" --binary-path "$G/recursive"
	run python3 "$CMP" "$G/crafted/leafzero_first.pprof.traces.txt" "$G/crafted/leafzero_first.pprof.raw.txt" 1000 "$T/out.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c $'\t\\[unknown\\]:0x0:' "$T/out.txt")" -eq 5 ]
}

@test "single_record: all 8 frames kept; pprof's heuristic drops 2 of them" {
	convert "$G/crafted/single_record.prof" --binary-path "$G/recursive"
	[ "$(grep -v "^@" "$T/out.txt" | head -1 | tr ';' '\n' | wc -l)" -eq 8 ]
	run python3 "$CMP" --drop-second 2 "$G/crafted/single_record.pprof.traces.txt" "$G/recursive/recursive.pprof.raw.txt" 1000 "$T/out.txt"
	[ "$status" -eq 0 ]
	run python3 "$CMP" "$G/crafted/single_record.pprof.traces.txt" "$G/recursive/recursive.pprof.raw.txt" 1000 "$T/out.txt"
	[ "$status" -eq 1 ]
}

@test "long: 8771 samples from 2.5k records, identical stacks summed" {
	convert "$G/long/hotloop_long.prof" --binary-path "$G/long"
	[ "$(grep -vc '^@' "$T/out.txt")" -eq 8771 ]
	# -traces rounds values of a second or more to 10 ms; -raw has the exact counts.
	run python3 "$CMP" --from-raw "$G/long/hotloop_long.pprof.raw.txt" "$G/long/hotloop_long.pprof.raw.txt" 1000 "$T/out.txt"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "stdin input, --compression none and --level give the same samples" {
	convert "$G/recursive/recursive.prof" --binary-path "$G/recursive"
	cp "$T/out.txt" "$T/a.txt"
	gperf2tach -q --binary-path "$G/recursive" --compression none < "$G/recursive/recursive.prof" > "$T/b.tach"
	tach-decode --format samples "$T/b.tach" | cmp - "$T/a.txt"
	gperf2tach -q --binary-path "$G/recursive" --level 19 - < "$G/recursive/recursive.prof" > "$T/c.tach"
	tach-decode --format samples "$T/c.tach" | cmp - "$T/a.txt"
}

@test "usage errors exit 2" {
	run gperf2tach --compression lz4 "$G/recursive/recursive.prof" -o "$T/x.tach"
	[ "$status" -eq 2 ]
	run gperf2tach --level 99 "$G/recursive/recursive.prof" -o "$T/x.tach"
	[ "$status" -eq 2 ]
	run gperf2tach --binary-path
	[ "$status" -eq 2 ]
	run gperf2tach --no-such-option
	[ "$status" -eq 2 ]
	run gperf2tach --max-depth
	[ "$status" -eq 2 ]
	[ ! -e "$T/x.tach" ]
}

@test "limits: --max-depth and a missing input file" {
	run gperf2tach --max-depth 10 "$G/recursive/recursive.prof" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 40: stack of 29 PCs is deeper than the limit of 10 frames" ]]
	# Inlined frames count too: 7 PCs, 8 frames with inlined_poly.
	run gperf2tach --max-depth 7 --binary-path "$G/hotloop" "$G/hotloop/hotloop.prof" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stack with its inlined frames is deeper than the limit of 7 frames" ]]
	run gperf2tach "$T/nonexistent.prof"
	[ "$status" -eq 1 ]
	[ ! -e "$T/x.tach" ]
}

@test "write errors fail loudly" {
	run sh -c "gperf2tach -q --force '$G/recursive/recursive.prof' > /dev/full"
	[ "$status" -eq 1 ]
}

@test "--help lists every option and -V prints the versions" {
	run gperf2tach --help
	[ "$status" -eq 0 ]
	for o in binary-path no-symbolize compression level output strict max-depth; do
		[[ "$output" == *"--$o"* ]]
	done
	run gperf2tach -V
	[ "$status" -eq 0 ]
	[[ "$output" == *libtachfmt* ]]
}

# Hostile headers and records (base64 of whole files).
CNT_MAX=AAAAAAAAAAADAAAAAAAAAAAAAAAAAAAA6AMAAAAAAAAAAAAAAAAAAP////8AAAAAAQAAAAAAAAAAEEAAAAAAAAAAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAA==
PERIOD_MAX=AAAAAAAAAAADAAAAAAAAAAAAAAAAAAAA//////////8AAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAAAEEAAAAAAAAEAAAAAAAAAAQAAAAAAAAAQEEAAAAAAAAEAAAAAAAAAAQAAAAAAAAAgEEAAAAAAAAAAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAA==
DEPTH_BIG=AAAAAAAAAAADAAAAAAAAAAAAAAAAAAAA6AMAAAAAAAAAAAAAAAAAAAEAAAAAAAAAoIYBAAAAAAAAEEAAAAAAAAAAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAA==

# A gperftools profile (64-bit little-endian, period 1000 us) of one record: count, depth
# given, then the PCs that fit in the file.
gprof() { # file count depth [pcs...]
	python3 - "$@" <<'PY'
import struct, sys
path, count, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pcs = [int(x, 0) for x in sys.argv[4:]]
body = struct.pack('<5Q', 0, 3, 0, 1000, 0) + struct.pack('<2Q', count, depth)
body += b''.join(struct.pack('<Q', p) for p in pcs) + struct.pack('<3Q', 0, 1, 0)
open(path, 'wb').write(body)
PY
}

@test "a record of count 2^32-1 is one weighted sample: fast to convert, decode and aggregate" {
	base64 -d <<<"$CNT_MAX" >"$T/cnt.prof"
	gperf2tach -q --no-symbolize "$T/cnt.prof" -o "$T/cnt.tach"
	[ "$(tach-decode --no-thread-frames "$T/cnt.tach")" = "[unknown]:0x401000:0 4294967295" ]
	tach-decode -F info "$T/cnt.tach" | grep -qx 'samples_selected: 4294967295'
	tach2pprof --no-gzip "$T/cnt.tach" -o "$T/cnt.pb"
	# a lower limit stops the outputs that store every sample, with the offset
	run gperf2tach -q --no-symbolize --max-samples 1000 "$T/cnt.prof" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "gperf2tach: $T/cnt.prof: offset 40: more than 1000 samples (see --max-samples)" ]
	[ ! -e "$T/x.tach" ]
	run tach-decode -F samples --max-samples 1000 "$T/cnt.tach"
	[ "$status" -eq 1 ]
	[[ $output == *"more than 1000 samples (see --max-samples)"* ]]
	# aggregating outputs have no limit: --max-samples is not theirs
	run tach-decode -F collapsed --max-samples 1000 "$T/cnt.tach"
	[ "$status" -eq 2 ]
}

@test "a sampling period that cannot be real is refused, so timestamps never wrap" {
	base64 -d <<<"$PERIOD_MAX" >"$T/period.prof"
	run gperf2tach --no-symbolize "$T/period.prof" -o "$T/x.tach"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == "gperf2tach: $T/period.prof: offset 24: sampling period of 18446744073709551615 us is not real"* ]]
	[ ! -e "$T/x.tach" ]
	# counts whose total times the period passes 2^64 us: an error, not a wrap
	python3 -c "import struct; open('$T/wrap.prof','wb').write(struct.pack('<5Q',0,3,0,60000000,0) + struct.pack('<3Q',2**62,1,0x401000) + struct.pack('<3Q',0,1,0))"
	run gperf2tach --no-symbolize --max-samples 18446744073709551615 "$T/wrap.prof" -o "$T/x.tach"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"offset 40: the counts up to record 1 add up to more than 2^64 microseconds"* ]]
	# the longest real period, 1 s, converts
	python3 -c "import struct; open('$T/slow.prof','wb').write(struct.pack('<5Q',0,3,0,1000000,0) + struct.pack('<3Q',3,1,0x401000) + struct.pack('<3Q',0,1,0))"
	gperf2tach -q --no-symbolize "$T/slow.prof" -o "$T/slow.tach"
	[ "$(tach-decode -F samples "$T/slow.tach" | grep -vc '^@')" -eq 3 ]
}

@test "a record depth no real stack has is corruption (exit 1 with the offset), not truncation" {
	base64 -d <<<"$DEPTH_BIG" >"$T/depth.prof"
	run gperf2tach --no-symbolize "$T/depth.prof" -o "$T/x.tach"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "gperf2tach: $T/depth.prof: offset 48: record 1 claims 100000 PCs, more than the file holds and than any real stack (limit 4096, --max-depth): the file is corrupt" ]
	local d
	for d in 268435456 4294967296 18446744073709551615; do
		gprof "$T/d.prof" 1 "$d" 0x401000
		run gperf2tach --no-symbolize "$T/d.prof" -o "$T/x.tach"
		[ "$status" -eq 1 ]
		[[ $output == *"offset 48: record 1 claims $d PCs"*"the file is corrupt" ]]
	done
	# a depth that fits but passes the limit is the limit's error
	gprof "$T/d.prof" 1 5000 $(printf '0x401000 %.0s' $(seq 5000))
	run gperf2tach --no-symbolize "$T/d.prof" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[[ $output == *"offset 40: stack of 5000 PCs is deeper than the limit of 4096 frames" ]]
	# a record without PCs is an empty stack (as pprof reads it); the words after it are
	# the next record, and a PC read as a depth is corruption
	gprof "$T/d.prof" 1 0 0x7f2a00001234 0x7f2a00001234 0x401000
	run gperf2tach --no-symbolize "$T/d.prof" -o "$T/x.tach"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"offset 40: warning: record without PCs (count 1) kept as an empty stack"* ]]
	[[ $output == *"offset 64: record 2 claims 139818365358644 PCs"* ]]
	[ ! -e "$T/x.tach" ]
}

# A gperftools profile of one record per PC (depth 1) for the non-PIE binary $1, its
# executable segment mapped where it was linked.
pc_profile() { # binary out pc...
	python3 - "$@" <<'PY'
import struct, subprocess, sys
binary, out, pcs = sys.argv[1], sys.argv[2], [int(p, 16) for p in sys.argv[3:]]
seg = None
for line in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == "LOAD" and "E" in f[-2]:
        seg = (int(f[1], 16), int(f[2], 16), int(f[5], 16))  # offset, vaddr, memsz
off, vaddr, size = seg
body = struct.pack("<5Q", 0, 3, 0, 1000, 0)
for pc in pcs:
    body += struct.pack("<3Q", 1, 1, pc)
body += struct.pack("<3Q", 0, 1, 0)
body += ("%x-%x r-xp %08x 00:00 0 %s\n" % (vaddr, vaddr + size, off, binary)).encode()
open(out, "wb").write(body)
PY
}

@test "C++ names: demangled with scope, templates and parameters, as c++filt; --names short and mangled" {
	command -v g++ >/dev/null || skip "no C++ compiler (Debian package g++)"
	g++ -g -O1 -fno-pie -no-pie -o "$T/names" "$SOURCE_ROOT/tests/data/cxx/names.cc"
	local syms="_ZN5outer5inner3hotEi _ZN5outer5inner3hotEd _ZN5outer5inner5AccumIdE3addEd _ZN5outer5inner5AccumIlE3addEl _ZN5outer5inner6callerEi"
	local pcs=() s want=()
	for s in $syms; do
		pcs+=("$(nm "$T/names" | awk -v s="$s" '$3 == s { print $1 }')")
		want+=("$(echo "$s" | c++filt)")
	done
	# the lambda's call operator and the inlined function: their linkage names from DWARF
	local lam inl
	lam=$(nm "$T/names" | awk '$3 ~ /_M_invoke/ { print $1 }' | head -1)
	inl=$(readelf -wi "$T/names" | grep -o '_ZN5outer5inner15hot_inline_userEi' | head -1)
	[ -n "$inl" ]
	local pub
	pub=$(nm "$T/names" | awk '$3 == "pub_fn" { print $1 }')
	pc_profile "$T/names" "$T/names.prof" "${pcs[@]}" "$lam" "$pub"
	gperf2tach -q "$T/names.prof" -o "$T/n.tach"
	tach-decode --no-thread-frames "$T/n.tach" | sed 's/ [0-9]*$//' >"$T/got"
	cat "$T/got"
	local i
	for i in "${!want[@]}"; do
		grep -qF ":${want[$i]}:" "$T/got" || { echo "missing ${want[$i]}"; false; }
	done
	# distinct functions stay distinct: two overloads, two instantiations
	[ "$(cut -d: -f2- "$T/got" | sort -u | wc -l)" -eq 7 ]
	# the exported alias, not the static function DWARF names, as nm and pprof show it
	grep -qx 'names.cc:pub_fn:[0-9]*' "$T/got"
	# functions without a linkage name keep their scope: a lambda's operator() is its
	# function's unnamed class's, by the line of the class
	grep -qF 'std::_Function_handler<int(int), main(int, char**)::<lambda(int)> >::_M_invoke' "$T/got"
	grep -qE ':main::\{unnamed:[0-9]+\}::operator\(\):' "$T/got"
	# the caller's PC sits in the inlined call: both frames named, the inlined one from DWARF
	local want_inl
	want_inl=$(echo "$inl" | c++filt)
	grep -F ":$want_inl:" "$T/got" | grep -qF ':outer::inner::caller(int):'
	# --names short: DWARF's short names, as before; --names mangled: linkage names
	gperf2tach -q --names short "$T/names.prof" -o "$T/s.tach"
	tach-decode --no-thread-frames "$T/s.tach" | grep -q ':add:'
	tach-decode --no-thread-frames "$T/s.tach" | grep -q ':impl_fn:'
	gperf2tach -q --names mangled "$T/names.prof" -o "$T/m.tach"
	tach-decode --no-thread-frames "$T/m.tach" | grep -q ':_ZN5outer5inner5AccumIdE3addEd:'
	run gperf2tach --names pretty "$T/names.prof"
	[ "$status" -eq 2 ]
	# without DWARF, the symbol table's names are demangled the same way
	objcopy --strip-debug "$T/names" "$T/stripped"
	pc_profile "$T/stripped" "$T/st.prof" "${pcs[@]}"
	gperf2tach -q "$T/st.prof" -o "$T/st.tach"
	tach-decode --no-thread-frames "$T/st.tach" >"$T/st.got"
	for i in "${!want[@]}"; do
		grep -qF ":${want[$i]}:" "$T/st.got" || { echo "stripped: missing ${want[$i]}"; false; }
	done
}

@test "symbol-table names: Rust legacy and v0 demangled, aliases named by their exported name" {
	gcc -O1 -fno-pie -no-pie -o "$T/syms" "$SOURCE_ROOT/tests/data/cxx/symnames.c"
	local s pcs=()
	for s in _ZN4core3fmt5write17h0123456789abcdefE _RNvNtCs1234_7mycrate3foo3bar start_main; do
		pcs+=("$(nm "$T/syms" | awk -v s="$s" '$3 == s { print $1 }')")
	done
	pc_profile "$T/syms" "$T/syms.prof" "${pcs[@]}"
	gperf2tach -q "$T/syms.prof" -o "$T/s.tach"
	tach-decode --no-thread-frames "$T/s.tach" >"$T/got"
	cat "$T/got"
	# as rustfilt and pprof show them: without the legacy hash or v0's crate disambiguator
	grep -qF ':core::fmt::write:' "$T/got"
	grep -qF ':mycrate::foo::bar:' "$T/got"
	# start_main over the local start_main_impl and the hidden __GI_start_main
	grep -qF ':start_main:' "$T/got"
	gperf2tach -q --names mangled "$T/syms.prof" -o "$T/m.tach"
	tach-decode --no-thread-frames "$T/m.tach" >"$T/m.got"
	grep -qF ':_ZN4core3fmt5write17h0123456789abcdefE:' "$T/m.got"
	grep -qF ':_RNvNtCs1234_7mycrate3foo3bar:' "$T/m.got"
}
