#!/usr/bin/env bats
# Native pprof profiles through tachfmt (issue 36): a Go program with inlined functions
# (tests/data/go-inline) is built and profiled with runtime/pprof in the run, then
# `go tool pprof` must show the same of the original and of tach2pprof's output: -top and
# -traces line for line, (inline) marks included, addresses, mappings. Unsymbolized, the
# profile keeps its addresses through TACH (frames named by module and file offset,
# tachfmt(5)), so pprof symbolizes tach2pprof's output from the binary as it does the
# original, and groups what it cannot symbolize by mapping.
#
# Compared after dropping the report header (File, Type, Time, Duration, and the comment
# naming tachfmt, up to "Showing nodes" or the first "-----------" line): the comment is
# ours and the duration is the last sample's end (other engineers' part of issue 36).
# --no-labels: tach2pprof's thread labels would show in -traces.

setup_file() {
	command -v go >/dev/null || return 0
	local d=$BATS_FILE_TMPDIR
	cp "$SOURCE_ROOT/tests/data/go-inline/main.go" "$SOURCE_ROOT/tests/data/go-inline/go.mod" "$d/"
	# The standard library only: no network, caches of the run's own.
	(cd "$d" && GOCACHE=$d/gocache GOPATH=$d/gopath GOFLAGS=-mod=mod GOPROXY=off \
		go build -o inl . && ./inl cpu.pb.gz >/dev/null)
}

setup() {
	T=$BATS_TEST_TMPDIR
	D=$BATS_FILE_TMPDIR
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	[ -s "$D/cpu.pb.gz" ] || { echo "the Go program did not build or run" >&2; return 1; }
	export HOME=$T PPROF_TMPDIR=$T
}

# report ARGS... PROFILE: go tool pprof's report without its header; stderr must be empty.
report() {
	go tool pprof "$@" >"$T/r.out" 2>"$T/r.err" || { cat "$T/r.err" >&2; return 1; }
	[ ! -s "$T/r.err" ] || { cat "$T/r.err" >&2; return 1; }
	sed -e '1,/^Showing nodes\|^-----------/d' "$T/r.out"
}

@test "a Go profile with inlined functions: the same -top and -traces after tach2pprof" {
	tach2pprof --no-labels "$D/cpu.pb.gz" -o "$T/out.pb.gz"
	report -top "$D/inl" "$D/cpu.pb.gz" >"$T/want.top"
	# the profile does show inlined functions, or the comparison would prove little
	grep -q ' (inline)$' "$T/want.top"
	report -top "$D/inl" "$T/out.pb.gz" >"$T/got.top"
	diff -u "$T/want.top" "$T/got.top"
	report -traces "$D/inl" "$D/cpu.pb.gz" >"$T/want.traces"
	report -traces "$D/inl" "$T/out.pb.gz" >"$T/got.traces"
	grep -q ' (inline)$' "$T/want.traces"
	diff -u "$T/want.traces" "$T/got.traces"
	# addresses of symbolized frames are kept: the per-address view is the same too
	report -top -addresses "$D/inl" "$D/cpu.pb.gz" >"$T/want.addr"
	report -top -addresses "$D/inl" "$T/out.pb.gz" >"$T/got.addr"
	diff -u "$T/want.addr" "$T/got.addr"
}

@test "-raw shows the program's mapping range, file offset and file, first" {
	tach2pprof "$D/cpu.pb.gz" -o "$T/out.pb.gz"
	go tool pprof -raw "$D/cpu.pb.gz" | sed -n '/^Mappings/,$p' | sed 's/  \[.*//' >"$T/want"
	go tool pprof -raw "$T/out.pb.gz" | sed -n '/^Mappings/,$p' | sed 's/  \[.*//' >"$T/got"
	grep -q "^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $D/inl\$" "$T/want"
	diff -u "$T/want" "$T/got"
	# every location written with lines: its mapping says functions, files and lines
	go tool pprof -raw "$T/out.pb.gz" | grep -q "^1: .* $D/inl  \[FN\]\[FL\]\[LN\]\[IN\]\$"
	run go tool pprof -top "$D/inl" "$T/out.pb.gz"
	[ "${lines[0]}" = "File: inl" ]
}

@test "unsymbolized: through TACH by module and offset, pprof symbolizes it from the binary" {
	python3 "$SOURCE_ROOT/tests/cli/pprof_strip.py" "$D/cpu.pb.gz" >"$T/strip.pb"
	tach-merge "$T/strip.pb" -o "$T/strip.tach"
	# the TACH file names each frame by the binary's base name and the file offset
	tach-decode -F samples "$T/strip.tach" | grep -v '^@' >"$T/s"
	[ -s "$T/s" ]
	run grep -v "	$D/inl:inl+0x[0-9a-f]*:-:-:-:-:-\(;$D/inl:inl+0x[0-9a-f]*:-:-:-:-:-\)*\$" "$T/s"
	[ "$status" -eq 1 ]
	tach2pprof --no-labels "$T/strip.tach" -o "$T/out.pb.gz"
	report -top "$D/inl" "$T/strip.pb" >"$T/want"
	grep -q ' main\.churn$' "$T/want"
	report -top "$D/inl" "$T/out.pb.gz" >"$T/got"
	diff -u "$T/want" "$T/got"
	report -traces "$D/inl" "$T/strip.pb" >"$T/want"
	report -traces "$D/inl" "$T/out.pb.gz" >"$T/got"
	diff -u "$T/want" "$T/got"
	# a mapping rebuilt for the file, from file offset 0, marked unsymbolized
	go tool pprof -raw -symbolize=none "$T/out.pb.gz" | sed -n '/^Mappings/,$p' >"$T/maps"
	grep -q "^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x0 $D/inl  $" "$T/maps"
	[ "$(wc -l <"$T/maps")" -eq 2 ]
}

@test "unsymbolized pprof input: tach2pprof keeps addresses and mappings, pprof groups them" {
	python3 "$SOURCE_ROOT/tests/cli/pprof_strip.py" "$D/cpu.pb.gz" >"$T/strip.pb"
	tach2pprof --no-labels "$T/strip.pb" -o "$T/out.pb.gz"
	report -top -symbolize=none "$T/strip.pb" >"$T/want"
	report -top -symbolize=none "$T/out.pb.gz" >"$T/got"
	grep -q ' \[inl\]$' "$T/want"
	diff -u "$T/want" "$T/got"
	report -top -addresses -symbolize=none "$T/strip.pb" >"$T/want"
	report -top -addresses -symbolize=none "$T/out.pb.gz" >"$T/got"
	diff -u "$T/want" "$T/got"
	report -top "$D/inl" "$T/strip.pb" >"$T/want"
	report -top "$D/inl" "$T/out.pb.gz" >"$T/got"
	diff -u "$T/want" "$T/got"
}

@test "pprof -> TACH -> pprof: inline marks are lost, functions and totals are not" {
	tach-merge "$D/cpu.pb.gz" -o "$T/p.tach"
	tach2pprof --no-labels "$T/p.tach" -o "$T/out.pb.gz"
	# TACH has no inline field: an inlined function becomes a location of its own
	report -top "$D/inl" "$D/cpu.pb.gz" | sed 's/ (inline)$//' | sort >"$T/want"
	report -top "$D/inl" "$T/out.pb.gz" | sort >"$T/got"
	diff -u "$T/want" "$T/got"
}
