#!/usr/bin/env bats
# Linux perf's perf.data read directly (--from perfdata, detection): captures recorded now
# with perf record (frame pointers, a C++ program, -z, pipe mode, two events, DWARF call
# graphs) give with --labels perf the lines that perf script's own text gives through the
# perf script reader, and, counted in samples through TACH, what tests/cli/perf_fold.py
# reads from that text on its own; one TACH sample per perf sample; every writer's output
# reads back; mappings and addresses reach pprof; damaged files are one line with the
# offset, exit 1.

load v8_writers

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/perf
	FOLD="python3 $SOURCE_ROOT/tests/cli/perf_fold.py"
	EXPECT="python3 $SOURCE_ROOT/tests/cli/v8_expect.py"
}

same_lines() { # want got
	LC_ALL=C sort "$1" >"$T/want.s"
	LC_ALL=C sort "$2" >"$T/got.s"
	[ -s "$T/want.s" ]
	diff -u "$T/want.s" "$T/got.s"
}

# can_record: skips only when perf cannot record here, and says why.
can_record() {
	command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
	perf record -q -e cpu-clock -o "$T/probe.data" true >"$T/probe.log" 2>&1 ||
		skip "perf_event_open refused (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)): $(head -1 "$T/probe.log")"
}

# record NAME PROGRAM [perf record options]: $T/NAME.data, and perf script's text of it
# in $T/NAME.perf.
record() {
	local name=$1 prog=$2
	shift 2
	(cd "$T" && perf record -q -F 499 "$@" -o "$name.data" "./$prog" >/dev/null 2>"$name.log")
	perf script -i "$T/$name.data" >"$T/$name.perf" 2>/dev/null
	[ -s "$T/$name.perf" ]
}

c_program() {
	cc -O0 -fno-omit-frame-pointer -pthread "$D/livetest.c" -o "$T/livetest"
}

# check NAME [tach-decode options]: the perf.data reader against perf script's text.
check() {
	local name=$1
	shift
	tach-decode -q --labels perf "$@" "$T/$name.data" >"$T/$name.got"
	tach-decode -q --labels perf "$@" "$T/$name.perf" >"$T/$name.want"
	same_lines "$T/$name.want" "$T/$name.got"
	# counted in samples through TACH, as the independent reading counts them
	perf2tach -q "$@" "$T/$name.data" -o "$T/$name.tach"
	tach-decode --labels perf "$T/$name.tach" >"$T/$name.got"
	$FOLD "$T/$name.perf" "$@" >"$T/$name.want"
	same_lines "$T/$name.want" "$T/$name.got"
}

# samples NAME EVENT: one TACH sample per perf sample of the event.
one_per_sample() {
	local want
	# (a sample without a call chain has its address on the same line as its event)
	want=$(grep -cE " $2:( |\$)" "$T/$1.perf")
	[ "$(tach-decode -F info "$T/$1.tach" | sed -n 's/^samples_decoded: //p')" -eq "$want" ]
	[ "$want" -gt 10 ]
}

@test "live: perf record -g (frame pointers) of a threaded C program" {
	can_record
	c_program
	record fp livetest -e cpu-clock -g
	check fp
	one_per_sample fp cpu-clock
	grep -Eq '^livetest;(.*;)?main;worker;hot_a [0-9]+$' "$T/fp.got"
	grep -Eq '^(livetest|hotb-worker);(.*;)?start_thread;worker;hot_b [0-9]+$' "$T/fp.got"
	# detected by every program; --from names it
	tach2pprof -q "$T/fp.data" -o "$T/fp.pb.gz"
	tach-decode -q --from perfdata --labels perf "$T/fp.data" | LC_ALL=C sort | cmp - "$T/got.s"
	# cpu-clock periods are time: the interval is perf's period (-F 499: 2004 us)
	tach-decode -F info "$T/fp.tach" | grep -qx 'sample_interval_us: 2004'
}

@test "live: a C++ program with templates and namespaces" {
	can_record
	command -v c++ >/dev/null || skip "no C++ compiler"
	c++ -O2 -fno-omit-frame-pointer "$D/templates.cc" -o "$T/templates"
	record cxx templates -e cpu-clock -g
	check cxx
	one_per_sample cxx cpu-clock
	# (a leaf without a frame of its own hides its caller from a frame-pointer walk)
	grep -Eq '^templates;(.*;)?outer::inner::Box<double>::sum [0-9]+$' "$T/cxx.got"
	grep -Eq '^templates;(.*;)?main;outer::inner::churn<long>(;.*)? [0-9]+$' "$T/cxx.got"
}

@test "live: perf record -z (zstd-compressed records)" {
	can_record
	c_program
	record z livetest -e cpu-clock -g -z
	perf report --header-only -i "$T/z.data" 2>/dev/null | grep -q 'compressed'
	check z
	one_per_sample z cpu-clock
}

@test "live: pipe mode (perf record -o -), from a pipe and from a file" {
	can_record
	c_program
	(cd "$T" && perf record -q -F 499 -e cpu-clock -g -o - ./livetest 2>/dev/null >pipe.data)
	perf script -i "$T/pipe.data" >"$T/pipe.perf" 2>/dev/null
	[ "$(head -c 8 "$T/pipe.data")" = PERFILE2 ]
	check pipe
	one_per_sample pipe cpu-clock
	(cd "$T" && perf record -q -F 499 -e cpu-clock -g -o - ./livetest 2>/dev/null) |
		tach-decode -q --labels perf >"$T/piped.got"
	# another run of the program: the same paths
	grep -Eq '^livetest;(.*;)?main;worker;hot_a [0-9]+$' "$T/piped.got"
	# a pipe is read as it comes, never held whole: a limit on what an input held whole
	# may take, below its size, does not stop it; the file form through a pipe is held
	# whole and meets the limit
	local half=$(($(stat -c %s "$T/pipe.data") / 2))
	tach-decode -q --labels perf "$T/pipe.data" >"$T/pipe.file"
	tach-decode -q --labels perf --max-input "$half" <"$T/pipe.data" >"$T/pipe.stream"
	cat "$T/pipe.data" | tach-decode -q --labels perf --max-input "$half" >"$T/pipe.stream"
	same_lines "$T/pipe.file" "$T/pipe.stream"
	# cut short in a record's header or its body: the same line, mapped or piped
	local size=$(stat -c %s "$T/pipe.data") cut
	for cut in 3 $((size / 2)) $((size - 5)); do
		head -c "$cut" "$T/pipe.data" >"$T/cut.data"
		run tach-decode -q --labels perf "$T/cut.data"
		[ "$status" -le 1 ]
		local mapped=${output//$T\/cut.data/FILE}
		run tach-decode -q --labels perf < <(cat "$T/cut.data")
		[ "${output//<stdin>/FILE}" = "$mapped" ]
	done
	[[ $mapped == *"the file may be cut short"* ]]
	(cd "$T" && perf record -q -F 499 -e cpu-clock -g -o file.data ./livetest >/dev/null 2>&1)
	[ "$(head -c 8 "$T/file.data")" = PERFILE2 ]
	run tach-decode -q --labels perf --max-input "$(($(stat -c %s "$T/file.data") / 2))" < <(cat "$T/file.data")
	[ "$status" -eq 1 ]
	[[ "$output" == *"exceeds the limit"* ]]
	tach-decode -q --labels perf "$T/file.data" >"$T/file.file"
	cat "$T/file.data" | tach-decode -q --labels perf >"$T/file.piped"
	same_lines "$T/file.file" "$T/file.piped"
}

@test "live: two events: the first by default, --event picks the other" {
	can_record
	c_program
	record two livetest -e cpu-clock,task-clock -g
	check two
	one_per_sample two cpu-clock
	run tach-decode --labels perf "$T/two.data"
	[[ "$output" == *"samples of other events (task-clock) skipped; only cpu-clock read"* ]]
	check two --event task-clock
	one_per_sample two task-clock
	run tach-decode --event nope "$T/two.data"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no samples of event nope; the capture has: cpu-clock, task-clock"* ]]
}

# What is comparable without unwinding: the thread and the innermost frame.
leaf_lines() {
	sed -E 's/^([^;]*);(.*;)?([^;]*) ([0-9]+)$/\1;\3 \4/; s/^([^;]*) ([0-9]+)$/\1 \2/' "$1" |
		awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }'
}

@test "live: --call-graph dwarf: the kernel's part and the user leaf, as perf script has them" {
	can_record
	c_program
	record dwarf livetest -e cpu-clock --call-graph dwarf
	tach-decode -q --labels perf "$T/dwarf.data" >"$T/dwarf.got"
	tach-decode -q --labels perf "$T/dwarf.perf" >"$T/dwarf.want"
	leaf_lines "$T/dwarf.want" >"$T/dwarf.want.leaf"
	leaf_lines "$T/dwarf.got" >"$T/dwarf.got.leaf"
	mostly_same "$T/dwarf.want.leaf" "$T/dwarf.got.leaf"
	grep -Eq '^livetest;hot_a [0-9]+$' "$T/dwarf.got.leaf"
	perf2tach -q "$T/dwarf.data" -o "$T/dwarf.tach"
	one_per_sample dwarf cpu-clock
}

# mostly_same WANT GOT: at least 99% of the weight (by period) on equal lines. A leaf in a
# PLT entry counts as equal whatever its name: Debian's perf 6.1 names an address in .plt of
# a binary with a .symtab by the symbol before it (_init), where tachfmt names the entry
# (read@plt), as tachfmt(5) says; about one sample in 300 of a program making system calls
# is there.
mostly_same() {
	python3 -c 'import collections, re, sys
def load(p):
    c = collections.Counter()
    for l in open(p):
        k, _, n = l.rstrip("\n").rpartition(" ")
        c[re.sub(r";(_init|[^;]+@plt)$", ";PLT", k)] += int(n)
    return c
w, g = load(sys.argv[1]), load(sys.argv[2])
same = sum(min(n, g[k]) for k, n in w.items())
print("%.1f%% on equal stacks" % (100.0 * same / sum(w.values())))
sys.exit(same < 0.99 * sum(w.values()))' "$1" "$2"
}

@test "live: --call-graph dwarf: whole user stacks, unwound as perf script unwinds them" {
	can_record
	c_program
	record dwarf livetest -e cpu-clock --call-graph dwarf
	tach-decode -q --labels perf "$T/dwarf.data" >"$T/dwarf.got"
	tach-decode -q --labels perf "$T/dwarf.perf" >"$T/dwarf.want"
	# at least 99% of the samples on equal stacks (where the two differ: tachfmt(5),
	# PERF.DATA, --call-graph dwarf), the program's own paths among them
	mostly_same "$T/dwarf.want" "$T/dwarf.got"
	grep -Eq '^hotb-worker;clone3;start_thread;worker;hot_b [0-9]+$' "$T/dwarf.got"
	grep -Eq '^livetest;_start;__libc_start_main_impl;__libc_start_call_main;main;worker;hot_a [0-9]+$' "$T/dwarf.got"
	grep -Eq '^hotb-worker;clone3;start_thread;worker;hot_b [0-9]+$' "$T/dwarf.want"
	perf2tach -q "$T/dwarf.data" -o "$T/dwarf.tach"
	one_per_sample dwarf cpu-clock
	# a C++ program through libstdc++ and glibc
	command -v c++ >/dev/null || skip "no C++ compiler"
	c++ -O2 -fno-omit-frame-pointer "$D/templates.cc" -o "$T/templates"
	record dwcxx templates -e cpu-clock --call-graph dwarf
	tach-decode -q --labels perf "$T/dwcxx.data" >"$T/dwcxx.got"
	tach-decode -q --labels perf "$T/dwcxx.perf" >"$T/dwcxx.want"
	mostly_same "$T/dwcxx.want" "$T/dwcxx.got"
}

# dwarf_pair NAME: the perf.data reader and the perf script route of $T/NAME.data, folded.
dwarf_pair() {
	tach-decode -q --labels perf "$T/$1.data" >"$T/$1.got"
	tach-decode -q --labels perf "$T/$1.perf" >"$T/$1.want"
}

@test "live: --call-graph dwarf: glibc's system call wrappers by the names perf script picks" {
	can_record
	cc -O2 -g -fno-omit-frame-pointer "$D/syscalls.c" -o "$T/syscalls"
	record dwsys syscalls -e cpu-clock --call-graph dwarf
	dwarf_pair dwsys
	mostly_same "$T/dwsys.want" "$T/dwsys.got"
	# read(2)'s wrapper by its hidden alias, as perf script names it, and into the kernel
	grep -Eq '^syscalls;(.*;)?main;__GI___libc_read;entry_SYSCALL_64[^;]*;(.*;)?ksys_read(;.*)? [0-9]+$' "$T/dwsys.got"
	grep -Eq ';main;__GI___libc_read(;.*)? [0-9]+$' "$T/dwsys.want"
	run grep -Eq ';main;__libc_read(;.*)? [0-9]+$' "$T/dwsys.got"
	[ "$status" -eq 1 ]
}

@test "live: --call-graph dwarf: inline chains of a C++ program named with namespaces and classes" {
	can_record
	command -v c++ >/dev/null || skip "no C++ compiler"
	# with DWARF for the program: perf script gives the chains of inlined templates
	c++ -O2 -g -fno-omit-frame-pointer "$D/templates.cc" -o "$T/templates"
	record dwinl templates -e cpu-clock --call-graph dwarf
	grep -q ' (inlined)$' "$T/dwinl.perf"
	dwarf_pair dwinl
	mostly_same "$T/dwinl.want" "$T/dwinl.got"
	# the outer function of a chain keeps its namespaces (issue 53, 3), an inlined member
	# its class with the template arguments (not a bare operator[])
	map='std::map<long, long, std::less<long>, std::allocator<std::pair<long const, long> > >'
	grep -Fq ";main;outer::inner::churn<long>;$map::operator[]" "$T/dwinl.got"
	run grep -Eq ';(churn<long int>|operator\[\])(;| )' "$T/dwinl.got"
	[ "$status" -eq 1 ]
}

@test "pprof: no label that tells nothing (a thread state perf did not record, one interpreter)" {
	can_record
	c_program
	record fp livetest -e cpu-clock -g
	tach2pprof -q "$T/fp.data" -o "$T/fp.pb.gz"
	[ "$(python3 "$SOURCE_ROOT/tests/cli/pprof_labels.py" "$T/fp.pb.gz" | grep '^label ')" = "label thread id" ]
	# where states and interpreters differ, they are labels still
	tach2pprof -q "$FIXTURES/tach/cases/threads_interleaved.tach" -o "$T/ti.pb.gz"
	[ "$(python3 "$SOURCE_ROOT/tests/cli/pprof_labels.py" "$T/ti.pb.gz" | grep '^label ' | tr '\n' ,)" = \
		"label interpreter id,label thread id,label thread state," ]
}

@test "the program, not the loader or the kernel: pprof's File: and the Gecko product" {
	can_record
	c_program
	# every page fault (-c 1, which -F of record excludes): the first in the kernel's
	# exec, then in the loader
	(cd "$T" && perf record -q -e page-faults -c 1 -g -o pf.data ./livetest >/dev/null 2>pf.log)
	perf script -i "$T/pf.data" 2>/dev/null | head -3 | grep -q 'kallsyms'
	tach2pprof -q "$T/pf.data" -o "$T/pf.pb.gz"
	[ "$(python3 "$SOURCE_ROOT/tests/cli/pprof_labels.py" "$T/pf.pb.gz" | sed -n 's/^file //p')" = "$T/livetest" ]
	tach2gecko -q --no-gzip "$T/pf.data" -o "$T/pf.json"
	grep -q '"product":"livetest"' "$T/pf.json"
}

@test "live: source files and lines from DWARF (frame pointers), as perf report --sort srcline has them, into pprof, callgrind and Gecko" {
	can_record
	cc -O0 -g -fno-omit-frame-pointer -pthread "$D/livetest.c" -o "$T/livetest"
	record src livetest -e cpu-clock -g
	check src
	# the innermost frame's file and line, sample for sample, as perf report counts them
	perf report -i "$T/src.data" --stdio --no-children -g none --sort srcline -F sample,srcline 2>/dev/null |
		awk '$2 ~ /^livetest\.c:[0-9]+$/ { print $1, $2 }' | sort >"$T/src.want"
	tach-decode -q -F samples "$T/src.data" | awk -F'\t' '/^[0-9]/ { split($2, f, ";"); split(f[1], p, ":")
		n = split(p[1], q, "/"); if (q[n] == "livetest.c") c[q[n] ":" p[3]]++ }
		END { for (k in c) print c[k], k }' | sort >"$T/src.got"
	[ "$(wc -l <"$T/src.want")" -ge 2 ]
	diff -u "$T/src.want" "$T/src.got"
	# the source file, never the binary: callgrind_annotate annotates livetest.c, without
	# a perl warning
	tach2callgrind -q "$T/src.data" -o "$T/src.cg"
	callgrind_annotate "$T/src.cg" >"$T/src.ann" 2>&1
	grep -q "^-- Auto-annotated source: $D/livetest.c" "$T/src.ann"
	grep -q 'sink += i' "$T/src.ann"
	! grep -q 'Use of uninitialized\|Auto-annotated source: .*livetest$' "$T/src.ann" || false
	tach2gecko -q --no-gzip "$T/src.data" -o "$T/src.json"
	grep -q "\"hot_a (in livetest) ($D/livetest.c:8)\"" "$T/src.json"
	if command -v go >/dev/null; then
		tach2pprof -q "$T/src.data" -o "$T/src.pb.gz"
		HOME=$T PPROF_TMPDIR=$T go tool pprof -list '^hot_a$' "$T/src.pb.gz" >"$T/src.list" 2>&1
		grep -q "ROUTINE =* hot_a in $D/livetest.c" "$T/src.list"
		grep -Eq '^ +[0-9.]+m?s +[0-9.]+m?s +8:.*sink \+= i' "$T/src.list"
	fi
	# without DWARF: the binary is the object, no source file
	c_program
	record nosrc livetest -e cpu-clock -g
	tach2callgrind -q "$T/nosrc.data" -o "$T/nosrc.cg"
	callgrind_annotate "$T/nosrc.cg" >"$T/nosrc.ann" 2>&1
	grep -q '???:hot_a \['"$T"'/livetest\]' "$T/nosrc.ann"
	! grep -q 'Use of uninitialized\|Auto-annotated source' "$T/nosrc.ann" || false
}

@test "every writer opens it" {
	can_record
	c_program
	record fp livetest -e cpu-clock -g
	writer_tools
	# (gecko_calltree.py: native frames, the Gecko writer names their libraries)
	NATIVE_MAPPINGS=1 through_writers "$T/fp.data"
}

@test "pprof keeps mappings with ranges, offsets and build IDs, and addresses; --no-symbolize names module+offset" {
	can_record
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	c_program
	record fp livetest -e cpu-clock -g
	tach2pprof -q --no-gzip "$T/fp.data" -o "$T/fp.pb"
	HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/fp.pb" 2>/dev/null >"$T/raw"
	bid=$(perf buildid-list -i "$T/fp.data" 2>/dev/null | awk '$2 ~ /livetest$/ { print $1 }')
	[ -n "$bid" ]
	# "start/limit/offset file build-id" of the program's mapping
	grep -Eq "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $T/livetest $bid " "$T/raw"
	grep -Eq '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ hot_a ' "$T/raw"
	tach-decode -q --no-symbolize "$T/fp.data" | grep -Eq ';livetest:livetest\+0x[0-9a-f]+:'
	! tach-decode -q --no-symbolize "$T/fp.data" | grep -q 'hot_a' || false
}

@test "damaged files: cut short or bytes flipped, one line with the offset, exit 1" {
	can_record
	c_program
	record fp livetest -e cpu-clock -g
	size=$(stat -c %s "$T/fp.data")
	for cut in 8 60 200 $((size / 2)) $((size - 9)); do
		head -c "$cut" "$T/fp.data" >"$T/cut.data"
		run tach-decode -o "$T/cut.out" "$T/cut.data"
		echo "cut $cut: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "tach-decode: $T/cut.data: offset "[0-9]*": "* ]]
		[ ! -e "$T/cut.out" ]
	done
	# a record size past the data section's end: the last record's size made 65535 (the
	# first's might still fit, in a capture that ran longer)
	cp "$T/fp.data" "$T/flip.data"
	data=$(python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
off, size = struct.unpack_from("<QQ", b, 40)
at, last = off, off
while at + 8 <= off + size:
    last = at
    at += struct.unpack_from("<H", b, at + 6)[0] or 8
print(last)' "$T/fp.data")
	printf '\377\377' | dd of="$T/flip.data" bs=1 seek=$((data + 6)) conv=notrunc 2>/dev/null
	run tach-decode "$T/flip.data"
	echo "flipped record size: $output"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-decode: $T/flip.data: offset $data: a record (type "*"past the end of the data"* ]]
	# every byte of the header flipped in turn: an error or a reading, never a crash
	for i in $(seq 0 103); do
		cp "$T/fp.data" "$T/flip.data"
		printf '\377' | dd of="$T/flip.data" bs=1 seek="$i" conv=notrunc 2>/dev/null
		run tach-decode -q "$T/flip.data"
		[ "$status" -le 1 ] || { echo "byte $i: status $status: $output"; false; }
	done
}

@test "live: JIT code named by /tmp/perf-PID.map, py:: entries as Python frames" {
	can_record
	cc -O1 -fno-omit-frame-pointer "$D/jit.c" -o "$T/jit"
	record jit jit -e cpu-clock -g
	map=/tmp/perf-$(perf script -i "$T/jit.data" -F pid 2>/dev/null | head -1 | tr -d ' ').map
	[ -s "$map" ]
	tach-decode --labels perf "$T/jit.data" 2>"$T/jit.err" >/dev/null
	check jit
	grep -Eq '^jit;(.*;)?py::spin:/srv/app/jit.py [0-9]+$' "$T/jit.got"
	grep -Eq '^jit;(.*;)?jitted_spin [0-9]+$' "$T/jit.got"
	# the Python frame is Python's: file and function
	tach-decode -q --full-paths "$T/jit.tach" | grep -q ';/srv/app/jit.py:spin:'
	! grep -q 'JIT code' "$T/jit.err" || false
	rm -f "$map"
	# without the map: one warning that says how a runtime writes it
	run tach-decode --labels perf "$T/jit.data"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'warning: JIT code of process' <<<"$output")" -eq 1 ]
	[[ "$output" == *"$map is missing or empty"*"-XX:+DumpPerfMapAtExit"*"--perf-basic-prof"* ]]
}

@test "live: kernel frames named from the build-id cache's copy of the recorded kernel's kallsyms" {
	can_record
	c_program
	mkdir -p "$T/home"
	# every page fault (-c 1): the first ones in the kernel's exec
	(cd "$T" && HOME=$T/home perf record -q -e page-faults -c 1 -g -o kc.data ./livetest >/dev/null 2>kc.log)
	HOME=$T/home perf script -i "$T/kc.data" >"$T/kc.perf" 2>/dev/null
	grep -q 'kallsyms' "$T/kc.perf"
	bid=$(perf buildid-list -i "$T/kc.data" 2>/dev/null | sed -n 's/ \[kernel.kallsyms\]$//p')
	[ -n "$bid" ] || skip "the capture names no kernel build ID"
	cache="$T/home/.debug/[kernel.kallsyms]/$bid"
	# perf record makes the copy; where it did not, ours stands for it
	[ -s "$cache/kallsyms" ] || { mkdir -p "$cache" && cat /proc/kallsyms >"$cache/kallsyms"; }
	HOME=$T/home tach-decode -q --labels perf "$T/kc.perf" >"$T/kc.want"
	# the copy's text symbols renamed: kernel frames come from it, not /proc/kallsyms
	sed -Ei '/ _text$/! s/^([0-9a-f]+ [tTwW] )/\1cached_/' "$cache/kallsyms"
	HOME=$T/home tach-decode -q --labels perf "$T/kc.data" >"$T/kc.got"
	grep -q ';cached_' "$T/kc.got"
	sed 's/;cached_/;/g' "$T/kc.got" >"$T/kc.back"
	same_lines "$T/kc.want" "$T/kc.back"
	# no copy: /proc/kallsyms, as perf script named them
	rm -rf "$T/home/.debug/[kernel.kallsyms]"
	HOME=$T/home tach-decode -q --labels perf "$T/kc.data" >"$T/kc.proc"
	same_lines "$T/kc.want" "$T/kc.proc"
}

@test "binaries found through the build-id cache, the recorded path or --binary-path" {
	can_record
	mkdir -p "$T/home"
	# perf record keeps a copy of each binary in $HOME/.debug (its build-id cache)
	cc -O0 -fno-omit-frame-pointer -pthread "$D/livetest.c" -o "$T/livetest"
	(cd "$T" && HOME=$T/home perf record -q -F 499 -e cpu-clock -g -o bid.data ./livetest >/dev/null 2>&1)
	mkdir -p "$T/bin"
	mv "$T/livetest" "$T/bin/livetest"
	HOME=$T/home tach-decode -q --labels perf "$T/bid.data" | grep -Eq ';main;worker;hot_a [0-9]+$'
	# without the cache and the recorded path: unnamed, unless --binary-path finds it
	rm -rf "$T/home/.debug"
	HOME=$T/home tach-decode -q --labels perf "$T/bid.data" >"$T/none"
	grep -Eq ';\[livetest\] [0-9]+$' "$T/none"
	! grep -q 'hot_a' "$T/none" || false
	HOME=$T/home tach-decode -q --labels perf --binary-path "$T/bin" "$T/bid.data" |
		grep -Eq ';main;worker;hot_a [0-9]+$'
	HOME=$T/home TACHFMT_BINARY_PATH=$T/bin perf2tach -q "$T/bid.data" -o "$T/bid.tach"
	tach-decode -q --labels perf "$T/bid.tach" | grep -Eq ';main;worker;hot_a [0-9]+$'
}

@test "live: a counted event (page-faults): pprof's sample types are samples and the event's count" {
	can_record
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	c_program
	record pf livetest -e page-faults -g
	check pf
	run tach2pprof --no-gzip "$T/pf.data" -o "$T/pf.pb"
	[ "$status" -eq 0 ]
	[[ "$output" == *"event page-faults: periods are event counts, not time"* ]]
	HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/pf.pb" 2>/dev/null >"$T/raw"
	grep -qx 'PeriodType: page-faults count' "$T/raw"
	grep -qx 'samples/count page-faults/count\[dflt\]' "$T/raw"
}
