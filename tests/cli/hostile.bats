#!/usr/bin/env bats
# Small hostile files must cost seconds and bounded memory, never minutes, gigabytes or a
# wrong answer: claimed weights that expand, gzip bombs, endless pipes, strings longer than
# any name; and detection that says what it could not tell. Each input is made here.

setup() {
	cd "$BATS_TEST_TMPDIR"
	GEN_DIR=$SOURCE_ROOT/tests/cli
}

# A pprof heap profile (alloc_space in bytes, the default type) with one sample of VALUE.
heap_pprof() { # value file
	python3 - "$1" "$2" <<'PY'
import sys
sys.path.insert(0, sys.argv[0] and __import__("os").environ["GEN_DIR"])
import pprof_gen as g
s = g.Strings()
body = (g.vt(s, 1, "alloc_objects", "count") + g.vt(s, 1, "alloc_space", "bytes") +
        g.num(14, s("alloc_space")) + g.fn(s, 1, "main", "m.go") + g.fn(s, 2, "grow", "m.go") +
        g.loc(1, [(1, 1)]) + g.loc(2, [(2, 5)]) + g.sample([2, 1], [1, int(sys.argv[1])]))
open(sys.argv[2], "wb").write(body + s.encode())
PY
}

# Peak resident memory of a command that fails, in KiB.
peak_kib_failing() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

@test "a pprof value of 3e9 stops the outputs that store every sample at once, naming the option" {
	export GEN_DIR
	heap_pprof 3000000000 heap.pb
	local p
	for p in "tach2sampler" "tach2gecko" "tach-decode -F samples"; do
		run $p heap.pb -o out
		echo "$p: $output"
		[ "$status" -eq 1 ]
		[[ $output == *"heap.pb: offset "*": more than 100000000 samples (see --max-samples)" ]]
		[ ! -e out ]
	done
	# the aggregating outputs keep it as one weighted sample
	[ "$(tach-decode --no-thread-frames heap.pb)" = "m.go:main:1;m.go:grow:5 3000000000" ]
	# and the limit can be raised (a small value stays small)
	heap_pprof 1000 small.pb
	[ "$(tach-decode -F samples --max-samples 1000 small.pb | grep -c '^[0-9]')" -eq 1000 ]
	run tach-decode -F samples --max-samples 999 small.pb
	[ "$status" -eq 1 ]
}

@test "a speedscope weight of 3e9 stops at once too" {
	cat >w.json <<'JSON'
{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"}]},
 "profiles":[{"type":"sampled","name":"p","unit":"none","startValue":0,"endValue":3000000000,
 "samples":[[0]],"weights":[3000000000]}]}
JSON
	run tach2gecko w.json -o out
	[ "$status" -eq 1 ]
	[[ $output == *"more than 100000000 samples (see --max-samples)" ]]
	[ ! -e out ]
	# TACH keeps a weight as one record, up to what its header can count
	speedscope2tach w.json -o w.tach
	[ "$(tach-decode --no-thread-frames w.tach)" = "f 3000000000" ]
}

@test "a gzip bomb stops at --max-input, and memory follows the limit" {
	# a 128 MiB string in a 130 KB file
	python3 - <<'PY'
import gzip, os, sys
sys.path.insert(0, os.environ["SOURCE_ROOT"] + "/tests/cli")
import pprof_gen as g
z = gzip.compress(g.msg(6, b"") + g.msg(6, b"a" * (128 << 20)), 6)
open("bomb.pb.gz", "wb").write(z)
PY
	[ "$(stat -c %s bomb.pb.gz)" -lt 1000000 ]
	run tach-decode --max-input 16M bomb.pb.gz
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: bomb.pb.gz: the gzip input holds more than 16777216 bytes (see --max-input)" ]
	small=$(peak_kib_failing tach-decode --max-input 16M bomb.pb.gz)
	big=$(peak_kib_failing tach-decode --max-input 112M bomb.pb.gz)
	echo "16M: $small KiB, 112M: $big KiB"
	[ $((big - small)) -gt 60000 ]
	# past the limit, the string itself is refused: longer than any name
	run tach-decode --max-input 1G bomb.pb.gz
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: bomb.pb.gz: offset 2: a string of 134217728 bytes, longer than any name (the limit is 1048576)"* ]]
}

@test "an endless pipe stops at --max-input for every format read whole" {
	local f
	for f in pprof speedscope tach gperf sampler; do
		run tach-decode --from "$f" --max-input 1M /dev/zero
		echo "$f: $output"
		[ "$status" -eq 1 ]
		[ "$output" = "tach-decode: /dev/zero: input exceeds the limit of 1048576 bytes (see --max-input)" ]
	done
	# sizes take K, M, G, T (and KiB...); anything else is a usage error
	run tach-decode --from pprof --max-input 2KiB /dev/zero
	[ "$output" = "tach-decode: /dev/zero: input exceeds the limit of 2048 bytes (see --max-input)" ]
	for bad in 0 -1 1X 1.5M "" 99999999999999999999 20000000T; do
		run tach-decode --max-input "$bad" /dev/null
		echo "$bad: $output"
		[ "$status" -eq 2 ]
	done
}

@test "a gzip pprof in two members is detected, not only read with --from" {
	python3 - <<'PY'
import gzip, os, sys
sys.path.insert(0, os.environ["SOURCE_ROOT"] + "/tests/cli")
import pprof_gen as g
s = g.Strings()
body = g.base(s) + g.fn(s, 1, "main", "m.c") + g.loc(1, [(1, 1)]) + g.sample([1], [2, 2000000]) + s.encode()
open("two.pb.gz", "wb").write(gzip.compress(body[:5]) + gzip.compress(body[5:]))
PY
	[ "$(tach-decode two.pb.gz)" = "tid:0;m.c:main:1 2" ]
	[ "$(tach-decode --from pprof two.pb.gz)" = "tid:0;m.c:main:1 2" ]
	[ "$(tach-decode < two.pb.gz)" = "tid:0;m.c:main:1 2" ]
}

@test "input no probe takes: the message names the format it looks like and --from" {
	printf '\x0a\x05\x08\x01\x10\x02\xff\xff\xff' >damaged.pb
	run tach-decode damaged.pb
	[ "$status" -eq 1 ]
	[[ $output == 'tach-decode: damaged.pb: offset 0: input format not recognized: it starts "\x0a\x05\x08\x01\x10\x02\xff\xff\xff", as pprof files do, but is not one that detection takes; --from pprof reads it as pprof and says what is wrong (tried tach, '* ]]
	run tach-decode --from pprof damaged.pb
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: damaged.pb: offset "* ]]
	# binary that resembles nothing keeps the plain message
	printf '\x00\x01\x02\x03\x04' >junk
	run tach-decode junk
	[[ $output == *'input format not recognized: it starts "\x00\x01\x02\x03\x04"; tried '* ]]
}

@test "speedscope whose \$schema comes after 4 KiB is detected, from a file and a pipe" {
	python3 - <<'PY'
import json
d = {"profiles": [{"type": "sampled", "name": "x" * 5000, "unit": "none", "startValue": 0,
     "endValue": 1, "samples": [[0]], "weights": [1]}],
     "$schema": "https://www.speedscope.app/file-format-schema.json",
     "shared": {"frames": [{"name": "f"}]}}
open("late.json", "w").write(json.dumps(d))
PY
	[ "$(tach-decode -v late.json 2>err)" = "tid:0;f 1" ]
	grep -qx "tach-decode: late.json: speedscope input" err
	[ "$(tach-decode < late.json)" = "tid:0;f 1" ]
}

@test "--from auto detects; a reader option for another format is warned about, not ignored silently" {
	export GEN_DIR
	heap_pprof 7 h.pb
	[ "$(tach-decode --from auto h.pb)" = "tid:0;m.go:main:1;m.go:grow:5 7" ]
	run tach-decode --sample-index alloc_objects "$FIXTURES/tach/cases/recursion.tach"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "tach-decode: $FIXTURES/tach/cases/recursion.tach: warning: --sample-index does not apply to tach input; ignored" ]]
	run tach-decode -q --sample-index alloc_objects "$FIXTURES/tach/cases/recursion.tach"
	[[ $output != *warning* ]]
	# taken by the pprof input: no warning
	run tach-decode --sample-index alloc_objects h.pb
	[ "$output" = "tid:0;m.go:main:1;m.go:grow:5 1" ]
	# a named format that has no such option is a usage error
	run tach-decode --from tach --sample-index 1 "$FIXTURES/tach/cases/recursion.tach"
	[ "$status" -eq 2 ]
	run tach-decode --from nonsense h.pb
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == *", or auto)" ]]
}

# The symbolizer and the perf.data reader (issue 53). Captures and binaries are made here:
# tests/perfdata_gen.py writes perf.data, tests/elf_gen.py assembles binaries.
pd_gen() { python3 -c "import sys; sys.path.insert(0, '$SOURCE_ROOT/tests'); import perfdata_gen as g; $1" "${@:2}"; }

# A --call-graph dwarf capture of one sample at IP in a mapping of BINARY at 0x401000
# (file offset 0x1000, as the generated binaries have their code).
dwarf_capture() { # out binary ip
	pd_gen '
p = g.PerfData(sample_type=g.IP | g.TID | g.TIME | g.PERIOD | g.CALLCHAIN | g.REGS_USER | g.STACK_USER, stack_user=8)
p.comm(5, 5, "hang")
p.mmap2(5, 0x401000, 0x1000, 0x1000, sys.argv[2])
p.sample(5, 5, int(sys.argv[3], 16), chain=[])
open(sys.argv[1], "wb").write(p.bytes())' "$@"
}

# A gperftools CPU profile of one sample at IP, its mapping BINARY at 0x401000.
gperf_capture() { # out binary ip
	python3 -c 'import struct, sys
w = lambda *v: struct.pack("<%dQ" % len(v), *v)
b = w(0, 3, 0, 10000, 0) + w(1, 1, int(sys.argv[3], 16)) + w(0, 1, 0)
b += b"00401000-00402000 r-xp 00001000 08:01 1234 %s\n" % sys.argv[2].encode()
open(sys.argv[1], "wb").write(b)' "$@"
}

@test "DWARF importing one partial unit from many places costs its size, not 2^levels" {
	python3 "$SOURCE_ROOT/tests/elf_gen.py" "$PWD/hang" imports 40
	ip=$(nm hang | awk '$3 == "work" { print $1 }')
	dwarf_capture hang.data "$PWD/hang" "$ip"
	# 2^40 visits before; a linear walk takes milliseconds
	run timeout 20 tach-decode --labels perf hang.data
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "hang;work 1000000" ]
	gperf_capture hang.prof "$PWD/hang" "$ip"
	run timeout 20 gperf2tach -q hang.prof -o hang.tach
	[ "$status" -eq 0 ]
	tach-decode --no-thread-frames hang.tach | grep -q 'work'
}

load bounded

# A pid no process can have (above the largest pid_max, 2^22), for /tmp/perf-PID.map files.
# (one of many: two runs of the suite on one machine do not share a /tmp/perf-PID.map)
JPID=$((4194400 + $$ % 30000))

teardown() {
	rm -f "/tmp/perf-$JPID.map"
}

@test "a mapping or a perf map that is not a regular file is never opened for reading" {
	mkfifo fifo
	pd_gen '
pid = int(sys.argv[3])
p = g.PerfData()
p.comm(pid, pid, "x")
p.mmap2(pid, 0x400000, 0x1000, 0, sys.argv[2])
p.mmap2(pid, 0x7f0000000000, 0x1000, 0, "//anon")
p.sample(pid, pid, 0x400010)
p.sample(pid, pid, 0x7f0000000010)
open(sys.argv[1], "wb").write(p.bytes())' fifo.data "$PWD/fifo" "$JPID"
	# a FIFO as the binary and as the perf map: before, open() waited for a writer
	mkfifo "/tmp/perf-$JPID.map"
	run timeout 20 tach-decode -q --labels perf fifo.data
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"x;[fifo] 1000000"* ]]
	[[ "$output" == *"x;[perf-$JPID.map] 1000000"* ]]
	gperf_capture fifo.prof "$PWD/fifo" 401010
	run timeout 20 gperf2tach -q fifo.prof -o fifo.tach
	[ "$status" -eq 0 ]
	# /dev/zero as the perf map: before, an endless run of empty lines
	rm "/tmp/perf-$JPID.map"
	ln -s /dev/zero "/tmp/perf-$JPID.map"
	run bounded 20 2000 tach-decode -q --labels perf fifo.data
	[ "$status" -eq 0 ]
	[[ "$output" == *"x;[perf-$JPID.map] 1000000"* ]]
}

@test "only executable anonymous memory is JIT code named by the perf map, as perf names it" {
	pd_gen '
pid = int(sys.argv[2])
p = g.PerfData()
p.comm(pid, pid, "x")
p.mmap2(pid, 0x7f0000000000, 0x1000, 0, "[stack]", prot=g.PROT_READ)
p.mmap2(pid, 0x7f0000010000, 0x1000, 0, "//anon")
p.mmap(pid, 0x7f0000020000, 0x1000, 0, "//anon", data=True)
for a in (0x7f0000000010, 0x7f0000010010, 0x7f0000020010):
    p.sample(pid, pid, a)
open(sys.argv[1], "wb").write(p.bytes())' anon.data "$JPID"
	printf '7f0000000000 1000 stackfn\n7f0000010000 1000 jitfn\n7f0000020000 1000 datafn\n' >"/tmp/perf-$JPID.map"
	if command -v perf >/dev/null; then
		perf script -i anon.data >anon.perf 2>/dev/null
		grep -q '7f0000000010 \[unknown\] (\[stack\])' anon.perf
		grep -q "7f0000010010 jitfn+0x10 (/tmp/perf-$JPID.map)" anon.perf
		grep -q '7f0000020010 \[unknown\] (//anon)' anon.perf
	fi
	run tach-decode -q --labels perf anon.data
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | sort)" = "$(printf 'x;[[stack]] 1000000\nx;[anon] 1000000\nx;jitfn 1000000')" ]
}

@test "a perf map with many entries at one address costs one lookup per address" {
	# 500,000 entries at one start, 60,000 distinct addresses: before, each address
	# walked every entry (3e10 steps)
	python3 -c 'import sys
with open(sys.argv[1], "w") as f:
    for i in range(500000):
        f.write("7f0000000000 100000 jit_%d\n" % (i % 10))' "/tmp/perf-$JPID.map"
	pd_gen '
pid = int(sys.argv[2])
p = g.PerfData()
p.comm(pid, pid, "x")
p.mmap2(pid, 0x7f0000000000, 0x100000, 0, "//anon")
for i in range(60000):
    p.sample(pid, pid, 0x7f0000000000 + 8 * i, chain=[g.CTX_USER, 0x7f0000000000 + 8 * i])
open(sys.argv[1], "wb").write(p.bytes())' many.data "$JPID"
	run timeout 20 tach-decode -q --labels perf many.data
	[ "$status" -eq 0 ]
	# of equal starts perf keeps the longest name, the first of those
	[ "$output" = "x;jit_0 60000000000" ]
}

@test "perf map lines longer than 8 KiB are one symbol, whole" {
	python3 -c 'import sys
open(sys.argv[1], "w").write("7f0000000000 100 " + "j" * 20000 + "\n7f0000001000 100 short\n")' "/tmp/perf-$JPID.map"
	pd_gen '
pid = int(sys.argv[2])
p = g.PerfData()
p.comm(pid, pid, "x")
p.mmap2(pid, 0x7f0000000000, 0x2000, 0, "//anon")
p.sample(pid, pid, 0x7f0000000010)
p.sample(pid, pid, 0x7f0000001010)
open(sys.argv[1], "wb").write(p.bytes())' long.data "$JPID"
	run tach-decode -q --labels perf long.data
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(echo "$output" | grep -c "^x;j\{20000\} 1000000$")" -eq 1 ]
	[[ "$output" == *"x;short 1000000"* ]]
}

@test "ELF symbol names are kept whole: two long names that differ at the end stay two frames" {
	python3 "$SOURCE_ROOT/tests/elf_gen.py" "$PWD/long" long-names 6000
	nm long | awk '$3 ~ /^nx/ { print $1, $3 }' >syms
	[ "$(wc -l <syms)" -eq 2 ]
	pd_gen '
p = g.PerfData()
p.comm(5, 5, "x")
p.mmap2(5, 0x401000, 0x1000, 0x1000, sys.argv[2])
for line in open(sys.argv[3]):
    p.sample(5, 5, int(line.split()[0], 16))
open(sys.argv[1], "wb").write(p.bytes())' long.data "$PWD/long" syms
	run tach-decode -q --labels perf long.data
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(echo "$output" | sort)" = "$(awk '{ print "x;" $2 " 1000000" }' syms | sort)" ]
}

@test "more than 32 newer mappings inside a large older one leave it where they do not reach" {
	pd_gen '
p = g.PerfData()
p.comm(5, 5, "x")
p.mmap2(5, 0x400000, 0x400000, 0, "/opt/big")
for i in range(40):
    p.mmap2(5, 0x500000 + i * 0x1000, 0x1000, 0, "/opt/small%d" % i)
p.sample(5, 5, 0x700010)
p.sample(5, 5, 0x500010)
p.sample(5, 5, 0x527010)
open(sys.argv[1], "wb").write(p.bytes())' inside.data
	if command -v perf >/dev/null; then
		perf script -i inside.data >inside.perf 2>/dev/null
		grep -q ' 300010 \[unknown\] (/opt/big)' inside.perf
		grep -q ' 10 \[unknown\] (/opt/small39)' inside.perf
	fi
	run tach-decode -q --labels perf inside.data
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | sort)" = "$(printf 'x;[big] 1000000\nx;[small0] 1000000\nx;[small39] 1000000')" ]
}

@test "a FORK storm costs memory that follows processes and mappings, not their product" {
	# 30,000 processes, each forked from the one before and mapping one file more: copied
	# mappings were 4.5e8 ranges (14 GB); shared, a few MB
	python3 "$SOURCE_ROOT/tests/perfdata_gen.py" storm.data fork-storm 30000
	run bounded 60 1000 tach-decode -q --labels perf storm.data
	echo "$output" | head -5
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | sort)" = "$(printf 'init;[child0] 1000000\ninit;[child47] 1000000\ninit;[lib0.so] 1000000')" ]
}

# fds N COMMAND...: COMMAND with at most N file descriptors; 99 when it could not start.
fds() {
	local rc=0
	prlimit --nofile="$1" "${@:2}" || rc=$?
	[ "$rc" -ne 127 ] || rc=99
	return "$rc"
}

@test "tach-merge of 80 captures of one binary loads its symbols and DWARF once, not once an input" {
	# a binary of 8,000 functions with DWARF: a few MB of symbols and lines once loaded
	python3 -c 'import sys
with open(sys.argv[1], "w") as f:
    for i in range(8000):
        f.write("int function_with_a_longish_name_%d(int x) { return x * %d + %d; }\n" % (i, i, i))
    f.write("int main(void) { return function_with_a_longish_name_7(1) == 0; }\n")' big.c
	cc -O0 -g -o big big.c
	local ip i
	ip=$(nm big | awk '$3 == "function_with_a_longish_name_4000" { print $1 }')
	for i in $(seq 80); do
		pd_gen '
p = g.PerfData()
p.comm(5, 5, "x")
p.mmap2(5, 0x400000 + 0x1000, 0x2a000, 0x1000, sys.argv[2])
p.sample(5, 5, 0x400000 + int(sys.argv[3], 16))
open(sys.argv[1], "wb").write(p.bytes())' "c$i.data" "$PWD/big" "$ip"
	done
	# one input's copy is about 3 MiB: 80 of them would pass the bound several times over
	run bounded 120 120 tach-merge c*.data -o m.tach
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(tach-decode --labels perf m.tach)" = "x;function_with_a_longish_name_4000 80" ]
	# and each input's frames are the ones it has read alone
	tach-decode -q c1.data | sed 's/ 1$/ 80/' | cmp - <(tach-decode -q c*.data)
}

@test "tach-merge: a binary that cannot be opened for want of file descriptors is an error, not unnamed frames" {
	python3 "$SOURCE_ROOT/tests/elf_gen.py" "$PWD/lp" long-names 10
	ip=$(nm lp | awk '$3 == "work" { print $1 }')
	for i in 1 2 3; do
		pd_gen '
p = g.PerfData()
p.comm(5, 5, "x")
p.mmap2(5, 0x401000, 0x1000, 0x1000, sys.argv[2])
p.sample(5, 5, int(sys.argv[3], 16))
open(sys.argv[1], "wb").write(p.bytes())' "c$i.data" "$PWD/lp" "$ip"
	done
	# the fewest descriptors that open the inputs, then a few more, until it works
	local n seen=0
	for n in $(seq 4 40); do
		rm -f m.tach
		run fds "$n" tach-merge c1.data c2.data c3.data -o m.tach
		# too few to load the program, or to open the inputs and the output
		[ "$status" -ne 99 ] || continue
		[[ "$output" != *"Too many open files"* || "$output" == *": offset "* ]] || continue
		[ "$status" -eq 0 ] && break
		echo "$n: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "tach-merge: c"[123]".data: offset "[0-9]*": $PWD/lp: cannot be opened: Too many open files" ]]
		[ ! -e m.tach ]
		seen=1
	done
	[ "$seen" -eq 1 ]
	tach-decode --labels perf m.tach | grep -q "^x;work [0-9]*$"
}

@test "an interval too long for 64-bit nanoseconds is refused where it is read, naming the input's line or offset" {
	printf '@start_time_us 5000\n@interval_us 18446744073709551\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n' >big.samples
	run tach2pprof big.samples -o big.pb
	[ "$status" -eq 1 ]
	[ "$output" = "tach2pprof: big.samples:2: @interval_us 18446744073709551 is longer than 9223372036854775 (what 64-bit nanoseconds hold)" ]
	[ ! -e big.pb ]
	printf '@interval_us 1000\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n' >ok.samples
	tach-encode ok.samples -o ok.tach
	python3 -c 'import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
assert struct.unpack_from("<Q", b, 20)[0] == 1000
struct.pack_into("<Q", b, 20, 1 << 63)
open(sys.argv[2], "wb").write(b)' ok.tach big.tach
	run tach2pprof big.tach
	[ "$status" -eq 1 ]
	[ "$output" = "tach2pprof: big.tach: offset 20: a sample interval of 9223372036854775808 us, longer than 9223372036854775 (what 64-bit nanoseconds hold)" ]
	# the longest one taken still converts
	printf '@interval_us 9223372036854775\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n' >max.samples
	tach2pprof max.samples -o max.pb
}

@test "tach-merge: statistics that add up past a double are dropped with a word, not written as inf and nan" {
	printf '@interval_us 1000\n@tachstat 56 1 0 0 1e308 1000 0 0\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n' >s1.samples
	run tach-merge s1.samples s1.samples -o m.tach
	[ "$status" -eq 0 ]
	[ "$output" = "tach-merge: warning: the inputs' statistics blocks (TACHSTAT) add up to no finite duration or sample count: the output has none" ]
	! tach-decode -F info m.tach | grep -qi 'stats\|inf\|nan' || false
	# finite ones still add up
	printf '@interval_us 1000\n@tachstat 56 1 0 0 1.5 1000 0 0\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n' >s2.samples
	tach-merge -q s2.samples s2.samples -o m.tach
	tach-decode -F info m.tach | grep -qx 'stats_duration_s: 3'
}

@test "@tachstat 32 with flags or rates the 32-byte block cannot hold is refused at its line" {
	printf '@interval_us 1000\n@tachstat 32 1 3 0 1.5 1000 2 0\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n' >s32.samples
	run tach-encode s32.samples -o x.tach
	[ "$status" -eq 1 ]
	[ "$output" = "tach-encode: s32.samples:2: @tachstat 32 (the 32-byte block) has no flags, reserved word, error or missed rate: they must be 0" ]
	[ ! -e x.tach ]
	printf '@interval_us 1000\n@tachstat 32 1 0 0 1.5 1000 0 0\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n' >ok.samples
	tach-encode ok.samples -o ok.tach
	tach-decode -F samples ok.tach | grep -qx '@tachstat 32 1 0 0 1.5 1000 0 0'
}

@test "speedscope output brings thread and interpreter ids back through our own reader" {
	printf '@interval_us 1000\n7 0 5100 1\tw.py:work:3:3:-1:-1:-\n123456 2 5200 1\tw.py:main:1:1:-1:-1:-\n' >th.samples
	tach2speedscope th.samples -o th.json
	grep -q '"name":"Thread 2 (tid 123456, interpreter 2)"' th.json
	tach-decode -F samples th.json | grep -v '^@' | cut -f1 | cut -d' ' -f1,2 >got
	printf '7 0\n123456 2\n' | diff -u - got
}
