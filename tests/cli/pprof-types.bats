#!/usr/bin/env bats
# Sample types, period, duration and labels through pprof input (issue 36): a Go program
# built in the run (tests/data/gotypes, stdlib only) writes a heap, a CPU and a mutex
# profile; pprof -> tach2pprof gives the same `go tool pprof -top` for every sample index,
# the same Type and Duration lines and the same -tags. TACH output refuses weights that
# are not samples unless --counts-as-samples; dropped labels are warned about once.
# Tests that need no Go use profiles written by hand (tests/cli/pprof_gen.py).

setup_file() {
	export GT=$BATS_FILE_TMPDIR
	command -v go >/dev/null || return 0
	mkdir -p "$GT/prog"
	cp "$TESTDATA/gotypes/main.go" "$GT/prog/"
	(cd "$GT/prog" && printf 'module prog\n\ngo 1.19\n' >go.mod &&
		GOCACHE="$GT/gocache" GOPATH="$GT/gopath" GOFLAGS=-mod=mod GOPROXY=off \
			go build -o prog .) >&2
	local p
	for p in heap cpu mutex; do
		"$GT/prog/prog" $p "$GT/$p.pb.gz"
	done
}

setup() {
	T=$BATS_TEST_TMPDIR
	GEN="python3 $SOURCE_ROOT/tests/cli/pprof_gen.py"
	export HOME=$T PPROF_TMPDIR=$T
}

need_go() {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
}

# pprof's view of a profile: its "File:" line (the mapping) and "(inline)" marks are
# another part of issue 36 (mappings and inline frames), not compared here.
view() { # profile pprof-args...
	local f=$1
	shift
	go tool pprof "$@" "$f" 2>/dev/null | grep -v '^File: ' | sed 's/ (inline)$//'
}

# same_view A B ARGS...: pprof shows A and B alike, and shows something.
same_view() {
	local a=$1 b=$2
	shift 2
	view "$a" "$@" >"$T/want"
	view "$b" "$@" >"$T/got"
	diff -u "$T/want" "$T/got"
	[ "$(wc -l <"$T/want")" -ge 4 ]
}

@test "a Go heap profile through tach2pprof: every sample index shows the same -top" {
	need_go
	local h=$GT/heap.pb.gz idx j
	for idx in "" alloc_space alloc_objects inuse_space inuse_objects; do
		tach2pprof -q ${idx:+--sample-index=$idx} "$h" -o "$T/h.pb.gz"
		for j in alloc_space alloc_objects inuse_space inuse_objects; do
			same_view "$h" "$T/h.pb.gz" -top -sample_index=$j ||
				{ echo "read as ${idx:-default}, shown as $j"; return 1; }
			grep -qx "Type: $j" "$T/got"
		done
		# the default type is the input's, not a time
		view "$T/h.pb.gz" -top | grep -qx 'Type: inuse_space'
	done
	# objects freed before the profile have alloc but no inuse values: read with the
	# default (inuse_space) they are still in the alloc totals above; the heap profile
	# has such samples, so this is not vacuous
	go tool pprof -raw "$h" 2>/dev/null | grep -Eq '^ +[0-9]+ +[0-9]+ +0 +0: '
}

@test "a Go CPU profile: Type, Duration, -top and -tags (pprof.Do labels) as the original" {
	need_go
	local c=$GT/cpu.pb.gz
	tach2pprof -q "$c" -o "$T/c.pb.gz"
	same_view "$c" "$T/c.pb.gz" -top
	same_view "$c" "$T/c.pb.gz" -top -sample_index=samples
	# the duration is the time profiled (the program sleeps 200 ms without samples), not
	# the span of the samples
	grep -q '^Duration: ' "$T/want"
	[ "$(grep -E '^(Type|Duration):' "$T/want")" = "$(grep -E '^(Type|Duration):' "$T/got")" ]
	view "$c" -tags >"$T/want"
	view "$T/c.pb.gz" -tags >"$T/got"
	diff -u "$T/want" "$T/got"
	grep -q ': w3$' "$T/got"
	grep -q ': w1$' "$T/got"
	# samples under different labels stay apart: each label's own -top is the original's
	# (sample records may be fewer: frames at two addresses of one line are one location
	# until mappings and addresses are kept)
	same_view "$c" "$T/c.pb.gz" -top -tagfocus=worker=w1
	same_view "$c" "$T/c.pb.gz" -top -tagfocus=worker=w3
}

@test "a Go mutex profile (delay without a time period): -top of both types as the original" {
	need_go
	local m=$GT/mutex.pb.gz
	tach2pprof -q "$m" -o "$T/m.pb.gz"
	same_view "$m" "$T/m.pb.gz" -top
	grep -qx 'Type: delay' "$T/got"
	same_view "$m" "$T/m.pb.gz" -top -sample_index=contentions
	# the weights are nanoseconds: speedscope says so
	tach2speedscope -q "$m" | grep -q '"unit":"nanoseconds"'
}

@test "TACH output refuses weights that are not samples, unless --counts-as-samples" {
	# alloc_space (bytes) is the profile's default type
	$GEN types >"$T/t.pb"
	run tach-merge "$T/t.pb" -o "$T/t.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-merge: $T/t.tach: the weights are alloc_space in bytes, not samples: the tach format stores samples, and each unit would become one; choose a time type (--sample-index) or write them so anyway (--counts-as-samples)" ]
	[ ! -e "$T/t.tach" ]
	run tach-merge --sample-index alloc_objects "$T/t.pb" -o "$T/t.tach"
	[ "$status" -eq 1 ]
	[[ $output == *"the weights are alloc_objects in count, not samples"* ]]
	tach-merge --counts-as-samples "$T/t.pb" -o "$T/t.tach"
	[ "$(tach-decode "$T/t.tach")" = "$(tach-decode "$T/t.pb")" ]
	[ "$(tach-decode "$T/t.tach")" = "$(printf 'tid:0;m.go:main:1;m.go:grow:5 4096\ntid:0;m.go:main:1 512')" ]
	# a time divided by a time period counts samples (at least one a sample): no option
	$GEN inexact >"$T/x.pb"
	tach-merge -q "$T/x.pb" -o "$T/x.tach"
	[ "$(tach-decode "$T/x.tach")" = "tid:0;m.c:main:1 4" ]
	# and so does a count of samples
	$GEN noperiod >"$T/np.pb"
	tach-merge -q --sample-index samples "$T/np.pb" -o "$T/np.tach"
	# a time with no time period, its samples counted: the weights are those samples
	tach-merge -q "$T/np.pb" -o "$T/np.tach"
	[ "$(tach-decode "$T/np.tach")" = "tid:0;m.c:main:1 2" ]
	tach-merge --help | grep -q -- '--counts-as-samples'
}

@test "dropped labels: one warning, none with -q; pprof output keeps them" {
	$GEN labels >"$T/l.pb"
	run tach-decode "$T/l.pb"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/l.pb: warning: the collapsed output has no place for sample labels: they are dropped (such as \"worker\")" ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c warning)" -eq 1 ]
	# the two samples of one stack (labels w1 and w3) are one line here
	[ "${lines[1]}" = "tid:0;m.c:main:1 5" ]
	[ "${#lines[@]}" -eq 2 ]
	run tach-decode -q "$T/l.pb"
	[ "$output" = "tid:0;m.c:main:1 5" ]
	for p in tach2speedscope tach2flamegraph tach2gecko "tach-decode -F samples"; do
		$p -o /dev/null "$T/l.pb" 2>"$T/err"
		[ "$(grep -c 'no place for sample labels' "$T/err")" -eq 1 ] || { echo "$p"; cat "$T/err"; return 1; }
	done
	# tach-merge writes TACH from its own loop: the same one warning
	tach-merge "$T/l.pb" "$T/l.pb" -o "$T/l.tach" 2>"$T/err"
	[ "$(cat "$T/err")" = "tach-merge: warning: the tach output has no place for sample labels: they are dropped (such as \"worker\")" ]
	tach-merge -q "$T/l.pb" -o "$T/l.tach" 2>"$T/err"
	[ ! -s "$T/err" ]
	# tach's own labels (thread id, ...) are in the samples' fields: nothing is dropped
	tach2pprof -q "$FIXTURES/tach/cases/single_sample.tach" -o "$T/s.pb.gz"
	run tach-decode "$T/s.pb.gz"
	[[ $output != *warning* ]]
	tach2pprof "$T/l.pb" -o "$T/l2.pb.gz" 2>"$T/err"
	[ ! -s "$T/err" ]
	if command -v go >/dev/null; then
		view "$T/l.pb" -tags >"$T/want"
		view "$T/l2.pb.gz" -tags >"$T/got"
		diff -u "$T/want" "$T/got"
		grep -q 'w3' "$T/got"
		grep -q ': 7kB$' "$T/got" # the numeric label in its unit, bytes
		[ "$(view "$T/l2.pb.gz" -raw | grep -c 'worker:\[')" -eq 2 ]
	fi
}

@test "non-time weights in speedscope and flame graph output: their unit" {
	$GEN types >"$T/t.pb"
	tach2speedscope "$T/t.pb" | grep -q '"unit":"bytes"'
	tach2speedscope --sample-index alloc_objects "$T/t.pb" | grep -q '"unit":"none"'
	# a profile per type, the weights' first (tach2speedscope.bats checks them all)
	[ "$(tach2speedscope "$T/t.pb" | grep -o '"endValue":[0-9]*' | head -n 1)" = '"endValue":4608' ]
	[ "$(tach2speedscope --sample-index alloc_objects "$T/t.pb" | grep -o '"endValue":[0-9]*' | head -n 1)" = '"endValue":4' ]
	tach2flamegraph "$T/t.pb" | grep -q '<title>all (4,608 bytes, 100%)'
	tach2flamegraph --sample-index alloc_objects "$T/t.pb" | grep -q '<title>all (4 count, 100%)'
	# a time profile keeps its time units
	$GEN inexact >"$T/x.pb"
	tach2speedscope -q "$T/x.pb" | grep -q '"unit":"microseconds"'
	tach2flamegraph -q "$T/x.pb" | grep -q '<title>all (4 samples, 100%)'
}

@test "a Sample larger than the writer's buffer, of four types: written piece by piece, as it came" {
	# 7,000 labels and values of 28 bytes: the Sample goes out in pieces past the 64 KiB
	# buffer of the gzip stream, and in one piece in the larger buffer of a raw proto
	$GEN bigsample >"$T/big.pb"
	tach2pprof -q "$T/big.pb" -o "$T/out.pb.gz"
	tach2pprof -q --no-gzip "$T/big.pb" -o "$T/out.pb"
	gunzip -c "$T/out.pb.gz" | cmp - "$T/out.pb"
	local i
	for i in a b c d; do
		tach-decode -F info --sample-index $i "$T/big.pb" >"$T/want"
		tach-decode -F info --sample-index $i "$T/out.pb" >"$T/got"
		diff -u "$T/want" "$T/got"
	done
	grep -q '^weight_total: 4611686018427387906$' "$T/got"
	if command -v go >/dev/null; then
		# pprof's own reading: the values and every label
		view "$T/big.pb" -raw | sed -n '/^Samples:/,/^Locations/p' >"$T/want"
		view "$T/out.pb.gz" -raw | sed -n '/^Samples:/,/^Locations/p' >"$T/got"
		diff -u "$T/want" "$T/got"
		[ "$(grep -o '10995116[0-9]*' "$T/got" | wc -l)" -eq 7000 ]
	fi
}
