#!/usr/bin/env bats
# pprof's and gperftools' legacy text profiles (heap, growth, contention, thread, Go count):
# what go tool pprof -top makes of our pprof output equals its own reading of the text, on
# a heap profile gperftools' HEAPPROFILE writes in the run and on google/pprof's test files
# (../shared/peers, skipped when absent; PEERS_DIR overrides where they are).

bats_require_minimum_version 1.5.0

setup() {
	T=$BATS_TEST_TMPDIR
	P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	unset TACHFMT_BINARY_PATH
}

need_go() {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	export HOME="$T/home" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS=-mod=mod
	mkdir -p "$HOME"
}

# pprof's table by address, unsymbolized, every node; our writer names the mapping of
# frames outside every mapping after the format ("[pproftext]"), pprof "<unknown>".
top() {
	go tool pprof -top -addresses -symbolize=none -nodecount=1000000 "$@" 2>/dev/null |
		sed -n '/flat%/,$p' | sed 's/\[\[pproftext\]\]$/<unknown>/'
}

# Every sample type of file: pprof's -top of file and of our conversion of it agree.
same_top() { # file
	tach2pprof -q --no-symbolize "$1" -o "$T/o.pb.gz"
	local types n=0
	types=$(go tool pprof -raw "$1" 2>/dev/null | sed -n '/^Samples:/{n;p;}')
	[ -n "$types" ]
	for t in $types; do
		top -sample_index="${t%%/*}" "$1" >"$T/theirs"
		top -sample_index="${t%%/*}" "$T/o.pb.gz" >"$T/ours"
		[ "$(wc -l <"$T/theirs")" -ge 2 ]
		diff -u "$T/theirs" "$T/ours" || { echo "$1: ${t%%/*} differs"; return 1; }
		n=$((n + 1))
	done
	# and the types with their units, in pprof's order
	# (a CPU profile's default type, cpu, as ours marks it: the type pprof shows first)
	go tool pprof -raw "$T/o.pb.gz" 2>/dev/null | sed -n '/^Samples:/{n;p;}' |
		sed 's/cpu\/nanoseconds\[dflt\]$/cpu\/nanoseconds/' >"$T/ours.types"
	[ "$(cat "$T/ours.types")" = "$types" ] || { echo "types: $(cat "$T/ours.types") / $types"; return 1; }
}

heap_profile() {
	command -v gcc >/dev/null || skip "gcc not installed"
	ldconfig -p | grep -q 'libtcmalloc\.so\.4 ' ||
		skip "gperftools' libtcmalloc not installed (Debian package libgoogle-perftools-dev)"
	cp "$TESTDATA/pproftext/prog.c" "$T/prog.c"
	gcc -O1 -g -o "$T/prog" "$T/prog.c"
	LD_PRELOAD=libtcmalloc.so.4 HEAPPROFILE="$T/h" "$T/prog" 2>"$T/heap.err"
	H=$(ls "$T"/h.*.heap | tail -n 1)
	head -n 1 "$H" | grep -q '^heap profile: .* @ heapprofile$'
	grep -q '^MAPPED_LIBRARIES:' "$H"
}

@test "gperftools' HEAPPROFILE: detected, its four sample types, go tool pprof -top as pprof reads it" {
	heap_profile
	need_go
	run tach-decode -v -q -F collapsed "$H"
	[ "$status" -eq 0 ]
	[[ $output == *"pproftext input"* ]] || { echo "$output"; false; }
	same_top "$H"
	[ "$(cat "$T/ours.types")" = "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes" ]
	# symbolized by us: the program's functions pprof names (from the binary) have its values
	tach2pprof -q "$H" -o "$T/s.pb.gz"
	for si in alloc_space inuse_space; do
		go tool pprof -top -sample_index=$si "$T/prog" "$H" 2>/dev/null | sed -n '/flat%/,$p' >"$T/theirs"
		go tool pprof -top -sample_index=$si "$T/prog" "$T/s.pb.gz" 2>/dev/null | sed -n '/flat%/,$p' >"$T/ours"
		n=0
		while read -r flat fp sp cum cp name; do
			[[ $name == big || $name == small || $name == main ]] || continue
			grep -q "^ *$flat .* $cum .* $name\$" "$T/ours" || { echo "$si $name"; cat "$T/theirs" "$T/ours"; false; }
			n=$((n + 1))
		done < <(tail -n +2 "$T/theirs")
		[ "$n" -ge 2 ]
	done
}

@test "google/pprof's legacy texts: heap (heapz_v2 unsampled), growth, contention, thread, Go threadcreate" {
	[ -d "$P/corpora/pprof" ] || skip "no ../shared/peers beside the source tree"
	need_go
	n=0
	for f in "$P"/corpora/pprof/*; do
		case $f in *.string | *.cpu | */java.*) continue ;; esac
		same_top "$f" || false
		n=$((n + 1))
	done
	[ "$n" -eq 9 ]
	# pprof's own parse (the .string beside it) has the types ours has
	grep -qx 'objects/count space/bytes' "$P/corpora/pprof/cppbench.heap.string"
	tach2pprof -q "$P/corpora/pprof/cppbench.contention" -o "$T/c.pb.gz"
	go tool pprof -raw "$T/c.pb.gz" 2>/dev/null | grep -qx 'contentions/count delay/nanoseconds'
	# the Java variant is refused by name
	run --separate-stderr tach-decode "$P/corpora/pprof/java.contention"
	[ "$status" -eq 1 ]
	[[ $stderr == *"java.contention:2: the Java variant of pprof's contention profile is not read" ]]
}

@test "texts of our own: each kind detected and read, values as pprof computes them" {
	need_go
	printf 'heap profile:    2:    300 [   4:   400] @ heap_v2/524288\n     2:    300 [     4:    400] @ 0x1001 0x2002\n' >"$T/h2"
	same_top "$T/h2"
	printf -- '--- contention:\ncycles/second = 2000000000\nsampling period = 10\n  400 3 @ 0x1001 0x2002\n' >"$T/c"
	same_top "$T/c"
	# delay: 400 cycles * 10 / 2 cycles per ns; contentions: 3 * 10
	go tool pprof -raw "$T/o.pb.gz" 2>/dev/null | grep -q '^ *30 *2000: '
	printf 'goroutine profile: total 3\n2 @ 0x10 0x20\n1 @ 0x30\n' >"$T/g"
	same_top "$T/g"
	printf -- '--- threadz 1 ---\n\n--- Thread 1 (name: a/2) stack: ---\n  PC: 0x10 0x21\n--- Thread 2 (name: b/3) stack: ---\n  same as previous thread\n' >"$T/t"
	run tach-decode -q -F collapsed --no-thread-frames "$T/t"
	[ "$status" -eq 0 ]
	[[ $output == *" 2" ]] || { echo "$output"; false; }
}

# A hostile text: exit 1, one line naming the file and its line, no output file.
bad() { # expected-message text
	printf '%b' "$2" >"$T/bad"
	run --separate-stderr tach2pprof -o "$T/out" "$T/bad"
	[ "$status" -eq 1 ] || { echo "exit $status: $stderr"; return 1; }
	[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$stderr"; return 1; }
	[[ $stderr == "tach2pprof: $T/bad:$1" ]] || { echo "$stderr"; return 1; }
	[ ! -e "$T/out" ]
}

@test "hostile texts: huge counts, bad hex, cut lines, one-line errors with the line" {
	H='heap profile: 1: 2 [ 1: 2] @ heapprofile\n'
	bad '2: a count does not fit in 64 bits' "$H"'99999999999999999999: 2 [1: 2] @ 0x1\n'
	bad '2: address 0x11111111111111111 does not fit in 64 bits' "$H"'1: 2 [1: 2] @ 0x11111111111111111\n'
	bad "2: malformed address list: unexpected 'z' at column 6" "$H"'1: 2 [1: 2] @ 0x12z\n'
	bad '2: malformed heap sample: expected "N: B [N: B] @ 0x..."' "$H"'1: 2 [1\n'
	bad '2: malformed heap sample: no " @" before the stack' "$H"'1: 2 [1: 2]\n'
	bad '2: inuse count was 0 but inuse bytes was 5' "$H"'0: 5 [0: 5] @ 0x1\n'
	# unsampling past 64 bits: a tiny sampling rate on a huge size
	bad '2: inuse values too large once unsampled' 'heap profile: 1: 2 [ 1: 2] @ heap_v2/2\n9223372036854775807: 9223372036854775807 [0: 0] @ 0x1\n'
	C='--- contentionz 1 ---\ncycles/second = 1\nsampling period = 9223372036854775807\n'
	bad '4: a contention count too large once unsampled' "$C"'0 2 @ 0x1\n'
	bad '4: a delay too large once unsampled' "$C"'9223372036854775807 0 @ 0x1\n'
	bad '2: unknown contention profile attribute "colour"' '--- contentionz 1 ---\ncolour = red\n'
	bad '2: malformed contention sample: expected "CYCLES COUNT @ 0x..."' '--- contention:\n12 @\n'
	bad '2: malformed count sample: expected "N @ 0x..."' 'goroutine profile: total 1\n1 @\n'
	bad '2: malformed count (a leading 0 makes it octal)' 'goroutine profile: total 1\n09 @ 0x1\n'
	bad '1: a threadz profile without a thread' '--- threadz 1 ---\n'
	bad '3: expected a "--- Thread ... stack: ---" line' '--- Thread 1 (name: a/2) stack: ---\n 0x1\n--- nonsense\n'
	# a deep stack is bounded by --max-depth
	{ printf "$H"'1: 2 [1: 2] @'; printf ' 0x%x' $(seq 1 300); printf '\n'; } >"$T/deep"
	run --separate-stderr tach2pprof --max-depth 100 -o "$T/out" "$T/deep"
	[ "$status" -eq 1 ]
	[[ $stderr == *"deep:2: stack deeper than the limit of 100 frames" ]] || { echo "$stderr"; false; }
}

# A Java agent's CPU profile (gperftools' binary form, header version 1): 32-bit words,
# then " 0xID NAME (FILE:LINE)" lines naming the ids the stacks hold.
java_cpu() { # out
	python3 -c 'import struct, sys
w = [0, 3, 1, 10000, 0]
w += [0, 1, 3]                   # GC, as the agent writes it: a count of 0
w += [3, 1, 5]                   # VM
w += [2, 3, 6, 7, 8]             # main <- run <- leaf
w += [1, 2, 9, 8]                # a frame the text does not name
w += [0, 1, 0]
text = (" 0x00000003 GC\n 0x00000005 VM\n 0x0000006 com.example.Leaf.work (Leaf.java:12)\n"
        " 0x0000007 com.example.Run.run (Run.java:0)\n 0x0000008 com.example.Main.main (Main.java:040)\n"
        "not a name line\n 0x0000009 lib.call (/usr/lib/libjvm.so)\n 0x000000a unused (U.java:1)\n")
open(sys.argv[1], "wb").write(struct.pack("<%dI" % len(w), *w) + text.encode())' "$1"
}

@test "the Java variant of gperftools' CPU profile: the agent's names, pprof's reading" {
	java_cpu "$T/j.prof"
	run tach-decode -v --no-thread-frames "$T/j.prof"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"gperf input"* ]]
	[ "$(tach-decode -q --no-thread-frames "$T/j.prof" | sort)" = ":VM:0 3
Main.java:com.example.Main.main:40;Run.java:com.example.Run.run:0;Leaf.java:com.example.Leaf.work:12 2
Main.java:com.example.Main.main:40;libjvm.so:lib.call:0 1" ]
	need_go
	same_top "$T/j.prof"
	# google/pprof's own Java test profile
	[ -f "$P/corpora/pprof/java.cpu" ] || skip "no ../shared/peers beside the source tree"
	same_top "$P/corpora/pprof/java.cpu"
}
