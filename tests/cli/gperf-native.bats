#!/usr/bin/env bats
# gperftools profiles of a C program built and profiled in the run (gcc -O2 -g, Debian's
# libprofiler): inline chains, module+offset frames and, through go tool pprof, mappings.
# The program runs until it has used a given CPU time, so there are samples on any
# machine; nothing here depends on how many.

CHECK="$SOURCE_ROOT/tests/cli/gperf_native_check.py"

setup() {
	T="$BATS_TEST_TMPDIR"
	unset TACHFMT_BINARY_PATH
	command -v gcc >/dev/null || skip "gcc not installed"
	ldconfig -p | grep -q 'libprofiler\.so\.0 ' ||
		skip "gperftools' libprofiler not installed (Debian package libgoogle-perftools-dev)"
}

# Builds $T/prog from tests/data/gperf-native/prog.c and profiles it into $T/prog.prof.
profile() {
	cp "$TESTDATA/gperf-native/prog.c" "$T/prog.c"
	gcc -O2 -g -o "$T/prog" "$T/prog.c" -lm
	CPUPROFILE="$T/prog.prof" CPUPROFILE_FREQUENCY=1000 LD_PRELOAD=libprofiler.so.0 \
		"$T/prog" 0.3 >/dev/null 2>"$T/profiler.err"
	[ -s "$T/prog.prof" ]
}

@test "an inlined function is a frame of its own, innermost first, with DWARF lines" {
	profile
	tach-decode -q --format samples "$T/prog.prof" > "$T/s.txt"
	# poly is always inlined into heavy: one address, two frames.
	grep -q "$T/prog.c:poly:9:9:[0-9]*:-1:-;$T/prog.c:heavy:16:16:" "$T/s.txt"
	grep -q "$T/prog.c:trig:" "$T/s.txt"
	grep -q "$T/prog.c:main:" "$T/s.txt"
}

@test "--no-symbolize: module+offset frames that addr2line resolves to our own names" {
	profile
	tach-decode -q --format samples "$T/prog.prof" > "$T/s.txt"
	gperf2tach -q --no-symbolize "$T/prog.prof" -o "$T/n.tach"
	tach-decode --format samples "$T/n.tach" > "$T/n.txt"
	# the column: the file offset of prog's executable mapping (tachfmt(5))
	seg=$(readelf -lW "$T/prog" | awk '$1 == "LOAD" && / E / { print $2; exit }')
	grep -q $'\t'"$T/prog:prog+0x[0-9a-f]*:-:-:$((seg)):$((seg)):-;" "$T/n.txt"
	grep -q "/libm.so.6:libm.so.6+0x[0-9a-f]*:" "$T/n.txt"
	# No frame is named by its absolute address: every address is in a mapping.
	! grep -q ':0x' "$T/n.txt" || false
	run python3 "$CHECK" "$T/prog" "$T/s.txt" "$T/n.txt"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "a stripped binary: its frames by module and offset, libm's named" {
	profile
	tach-decode -q --format samples "$T/prog.prof" > "$T/s.txt"
	gperf2tach -q --no-symbolize "$T/prog.prof" -o "$T/n.tach"
	tach-decode --format samples "$T/n.tach" > "$T/n.txt"
	mkdir "$T/stripped"
	strip -o "$T/stripped/prog" "$T/prog"
	mv "$T/prog" "$T/prog.orig"
	gperf2tach -q --binary-path "$T/stripped" "$T/prog.prof" -o "$T/x.tach"
	tach-decode --format samples "$T/x.tach" > "$T/x.txt"
	# The program's frames are those of --no-symbolize, sample by sample.
	diff <(grep -o "$T/prog:prog+0x[0-9a-f]*" "$T/x.txt") \
		<(grep -o "$T/prog:prog+0x[0-9a-f]*" "$T/n.txt")
	# libm is at hand and has symbols: sin's frames are named.
	! grep -q 'libm.so.6+0x' "$T/x.txt" || false
	! grep -q "$T/prog.c:" "$T/x.txt" || false
}

need_pprof_writer() {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME="$T/home" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS=-mod=mod
	mkdir -p "$HOME"
	tach2pprof -q "$T/prog.prof" -o "$T/ours.pb.gz"
	go tool pprof -raw "$T/ours.pb.gz" > "$T/ours.raw"
	grep -q "^ *[0-9]*: 0x[1-9a-f][0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $T/prog " "$T/ours.raw" ||
		skip "tach2pprof writes no mappings yet: needs the pprof writer of issue 36 (branch n-pprof: mappings, locations with addresses, module+offset frames)"
}

# The table of go tool pprof -top (headers differ: ours names the converter).
top() {
	go tool pprof -top "$@" 2>/dev/null | sed -n '/flat%/,$p'
}

@test "go tool pprof -raw: the maps' ranges and the build ID" {
	profile
	need_pprof_writer
	id=$(readelf -n "$T/prog" | awk '/Build ID/ { print $3 }')
	[ -n "$id" ]
	range=$(tr -d '\0' < "$T/prog.prof" | grep -a "r-xp.* $T/prog\$" | awk '{ print $1 }')
	start=${range%-*} limit=${range#*-}
	grep -q "0x0*$start/0x0*$limit/0x[0-9a-f]* $T/prog $id" "$T/ours.raw"
	grep -q "/libm.so.6 " "$T/ours.raw"
}

@test "go tool pprof -top: every function pprof names has its values in our symbolized output" {
	profile
	need_pprof_writer
	# Go's pprof names C functions from DWARF without inline frames and leaves shared
	# libraries as [lib]: every function it names has the same flat and cum in ours.
	top "$T/prog" "$T/prog.prof" > "$T/theirs.top"
	top -noinlines "$T/prog" "$T/ours.pb.gz" > "$T/ours.top"
	n=0
	while read -r flat fp sp cum cp name; do
		[[ "$name" == \[* ]] && continue
		grep -q "^ *$flat .* $cum .* $name\$" "$T/ours.top" || {
			echo "$name: $flat $cum in pprof's reading, not in ours:"; cat "$T/ours.top"; false
		}
		n=$((n + 1))
	done < <(tail -n +2 "$T/theirs.top")
	[ "$n" -ge 2 ]
}

@test "go tool pprof -top: unsymbolized through TACH equals pprof's own reading" {
	profile
	need_pprof_writer
	gperf2tach -q --no-symbolize "$T/prog.prof" | tach2pprof -q -o "$T/p.pb.gz"
	# Go's symbolizer (cmd/pprof) takes a mapping's start as the address of the binary's
	# executable segment (file offset 0x1000 in gcc's PIEs): the rebuilt mapping of prog's
	# module+offset frames starts at that segment's offset, and comes first (pprof takes
	# the binary named on its command line for the first mapping).
	go tool pprof -raw "$T/p.pb.gz" > "$T/p.raw"
	seg=$(printf '%x' "$(readelf -lW "$T/prog" | awk '$1 == "LOAD" && / E / { print $2; exit }')")
	grep -q "^ *1: 0x[0-9a-f]*/0x[0-9a-f]*/0x$seg $T/prog " "$T/p.raw" || {
		echo "no mapping of $T/prog at file offset $seg:"; cat "$T/p.raw"; false
	}
	top "$T/prog" "$T/prog.prof" > "$T/theirs.top"
	top "$T/prog" "$T/p.pb.gz" > "$T/nosym.top"
	diff "$T/theirs.top" "$T/nosym.top"
}
