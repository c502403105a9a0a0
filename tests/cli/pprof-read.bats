#!/usr/bin/env bats
# The pprof reader (through tach-decode, which detects it), against google/pprof itself:
# `go tool pprof -traces` lists the same stacks and totals as our collapsed output
# (tests/pprof_traces.py puts both in one form) for profiles made by tach2pprof from every
# TACH fixture, by `go tool pprof -proto` from the gperftools fixtures, by google/pprof
# (the fixtures' .pprof.pb.gz), by a Go program through runtime/pprof, and for profiles
# written by hand (tests/cli/pprof_gen.py): inline chains, unsymbolized addresses,
# drop_frames (RE2 syntax, hostile patterns included). TACH -> pprof -> TACH keeps stacks,
# thread ids and states. Every refusal pprof makes is ours too, with an offset.

setup() {
	T=$BATS_TEST_TMPDIR
	TR="python3 $SOURCE_ROOT/tests/pprof_traces.py"
	GEN="python3 $SOURCE_ROOT/tests/cli/pprof_gen.py"
	G=$FIXTURES/gperf
}

need_go() {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
}

# pprof's -traces (counts: -sample_index=0 when that is the count) against our collapsed
# output with the default sample type.
same_traces() { # profile unit [pprof args...]
	local f=$1 unit=$2
	shift 2
	go tool pprof -traces "$@" "$f" 2>/dev/null | $TR traces "$unit" >"$T/want"
	tach-decode -q --no-thread-frames "$f" | $TR collapsed >"$T/got"
	diff -u "$T/want" "$T/got"
	[ -s "$T/want" ]
}

@test "TACH fixtures through tach2pprof: our stacks and totals are pprof's" {
	need_go
	local n=0 f p names=()
	cd "$T"
	for f in "$FIXTURES"/tach/cases/*.tach; do
		# names with ';' and empty names print differently in -traces; the round trip
		# test below covers them exactly
		case $f in *non_ascii*|*empty*) continue ;; esac
		p=$(basename "$f" .tach)
		tach2pprof -q "$f" -o "$p.pb.gz"
		tach-decode -q --no-thread-frames "$p.pb.gz" >"$p.collapsed"
		[ -s "$p.collapsed" ] || continue
		# same_traces, the lines of every profile made by one Python
		go tool pprof -traces -sample_index=samples "$p.pb.gz" 2>/dev/null >"$p.traces"
		names+=("$p")
		n=$((n + 1))
	done
	[ "$n" -ge 15 ]
	$TR files 1 "${names[@]}"
	for p in "${names[@]}"; do
		diff -u "$p.want" "$p.got" || { echo "differs: $p"; return 1; }
		[ -s "$p.want" ]
	done
}

@test "TACH -> pprof -> TACH keeps stacks, thread ids, interpreter ids and states" {
	local n=0 f
	# per sample (empty stacks too): thread, interpreter, status and FILE:FUNC:LINE frames;
	# times are made up, and pprof has one value for line 0 and no line
	norm() { awk -F'\t' '/^[0-9]/ { split($1, h, " "); n = split($2, fr, ";"); s = "";
		for (i = 1; i <= n; i++) { split(fr[i], p, ":"); l = p[3] == "0" ? "-" : p[3];
			s = s ";" p[1] ":" p[2] ":" l }
		print h[1], h[2], h[4], s }' | sort; }
	for f in "$FIXTURES"/tach/cases/*.tach "$FIXTURES"/tach/big-endian/*.tach \
		"$FIXTURES"/tach/layout-a/*.tach; do
		tach-decode -q -F samples "$f" | norm >"$T/want"
		tach2pprof -q "$f" | tach-decode -q -F samples | norm >"$T/got"
		diff -u "$T/want" "$T/got" || { echo "differs: $f"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -ge 50 ]
	# and into TACH again: the collapsed stacks of the original
	tach2pprof "$FIXTURES/tach/cases/threads_interleaved.tach" | tach-decode -F samples |
		tach-encode -o "$T/b.tach"
	diff <(tach-decode "$FIXTURES/tach/cases/threads_interleaved.tach" | sort) \
		<(tach-decode "$T/b.tach" | sort)
}

@test "gperftools fixtures through go tool pprof -proto, and google/pprof's own files" {
	need_go
	local c
	for c in hotloop recursive sharedlib; do
		go tool pprof -proto "$G/$c/$c.prof" >"$T/$c.pb.gz" 2>/dev/null
		same_traces "$T/$c.pb.gz" 1 -sample_index=samples || { echo "differs: $c"; return 1; }
		# symbolized by google/pprof: inline chains (" (inline)" in -traces)
		same_traces "$G/$c/$c.pprof.pb.gz" 1 -sample_index=samples ||
			{ echo "differs: $c.pprof.pb.gz"; return 1; }
	done
	grep -q '(inline)' <(go tool pprof -traces "$G/hotloop/hotloop.pprof.pb.gz" 2>/dev/null)
	# the default type is cpu time: samples through the period (1 ms), the same totals
	go tool pprof -traces -sample_index=samples "$G/hotloop/hotloop.pprof.pb.gz" 2>/dev/null |
		$TR traces 1 >"$T/want"
	tach-decode -q --no-thread-frames "$G/hotloop/hotloop.pprof.pb.gz" | $TR collapsed >"$T/got"
	diff -u "$T/want" "$T/got"
}

@test "a Go program's CPU profile (runtime/pprof)" {
	need_go
	mkdir -p "$T/prog"
	cat >"$T/prog/main.go" <<-'EOF'
	package main

	import (
		"os"
		"runtime/pprof"
		"time"
	)

	//go:noinline
	func spinA(n int) int {
		s := 0
		for i := 0; i < n; i++ {
			s += i * i % 7
		}
		return s
	}

	//go:noinline
	func spinB(n int) int { return spinA(n) + spinA(n/2) }

	func main() {
		f, _ := os.Create(os.Args[1])
		pprof.StartCPUProfile(f)
		end, s := time.Now().Add(400*time.Millisecond), 0
		for time.Now().Before(end) {
			s += spinA(100000) + spinB(100000)
		}
		pprof.StopCPUProfile()
		f.Close()
		if s == 42 {
			println(s)
		}
	}
	EOF
	(cd "$T/prog" && printf 'module prog\n\ngo 1.19\n' >go.mod &&
		GOCACHE="$T/gocache" GOFLAGS=-mod=mod GOPROXY=off go build -o prog .)
	"$T/prog/prog" "$T/go.pb.gz"
	run tach-decode -v -q --no-thread-frames "$T/go.pb.gz"
	[ "$status" -eq 0 ]
	[[ $output == *"pprof input"* ]]
	[[ $output == *"main.spinA"* ]]
	same_traces "$T/go.pb.gz" 1 -sample_index=samples
	# cpu nanoseconds (the default, the last type) are whole periods: the same counts
	go tool pprof -traces -sample_index=samples "$T/go.pb.gz" 2>/dev/null | $TR traces 1 >"$T/want"
	tach-decode -q --no-thread-frames --sample-index cpu "$T/go.pb.gz" | $TR collapsed >"$T/got"
	diff -u "$T/want" "$T/got"
	tach-decode -q -F samples "$T/go.pb.gz" | grep -q '^0 0 [0-9]* 2	'
}

@test "written by hand: inline chains, addresses, labels of other tools, as pprof reads them" {
	need_go
	$GEN inline >"$T/i.pb"
	same_traces "$T/i.pb" 1 -sample_index=0
	# innermost first: the inlined function, then the function it is inlined into
	tach-decode -q -F samples "$T/i.pb" >"$T/s"
	grep -q $'^42 0 [0-9]* 3\t/src/step.h:inlined_step:40:40:-1:-1:-;/src/app.c:work:12' "$T/s"
	# an address in its binary, on a thread without a state label (cpu time: on CPU)
	grep -q $'^43 0 [0-9]* 2\t/usr/bin/app:0x4011d6:-' "$T/s"
	# gzip or not, from a pipe or a file: the same
	gzip -c "$T/i.pb" >"$T/i.pb.gz"
	diff <(tach-decode "$T/i.pb") <(cat "$T/i.pb.gz" | tach-decode)
}

@test "drop_frames and keep_frames prune as pprof prunes" {
	need_go
	$GEN drop >"$T/d.pb"
	same_traces "$T/d.pb" 1 -sample_index=0
	run tach-decode --no-thread-frames "$T/d.pb"
	# malloc_impl <- malloc <- work <- main and keep_me <- malloc <- work <- main lose the
	# frames from malloc down (keep_me with them: it is below the drop); a location whose
	# inner line matches keeps its outer line; a stack that is all drop stays
	[ "$output" = "$(printf 'app.c:main:3;app.c:work:12 7\napp.c:work:12 4\napp.c:main:3;app.c:work:13 1')" ]
}

@test "drop_frames in RE2 syntax, on names simplified as pprof simplifies them" {
	# C++ and PPC names (argument lists, "(anonymous namespace)", "operator()", a leading
	# dot), \w \d \s [[:lower:]] (?i) \Q\E; keep_frames; a name cut to nothing
	$GEN rx >"$T/rx.pb"
	run tach-decode --no-thread-frames "$T/rx.pb"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'm.c:main:1 11\nm.c:main:1;n.cc:ALLOC_x:7;m.c:leaf:2 1\nm.c:main:1;n.cc:keep9:8;m.c:leaf:2 1')" ]
	# a keep_frames Go refuses: pprof then prunes nothing, and says nothing; we warn
	$GEN rxkeep >"$T/rk.pb"
	run tach-decode --no-thread-frames "$T/rk.pb"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/rk.pb: offset 97: warning: keep_frames \"(?=x)\", byte 0: lookahead (?=: RE2 has none; pprof refuses it too: no frames dropped" ]
	[ "${lines[1]}" = "m.c:main:1;m.c:alloc:2;m.c:leaf:3 1" ]
	# a Unicode class: pprof would drop the frame, we cannot, and say so
	$GEN rxunicode >"$T/ru.pb"
	run tach-decode --no-thread-frames "$T/ru.pb"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/ru.pb: offset 76: warning: drop_frames \"\\p{Greek}.*\", byte 0: Unicode class \\p: not supported here (ASCII classes are: [[:alpha:]], \\d, \\w, \\s); pprof would take it, this reader does not: no frames dropped" ]
	[ "${lines[1]}" = "m.c:main:1;m.c:Ωmega:2 1" ]
	# "^(" + pattern + ")$" is one string to pprof: a pattern may close the group
	$GEN rxinject >"$T/ri.pb"
	run tach-decode --no-thread-frames "$T/ri.pb"
	[ "$output" = "m.c:main:1 1" ]
}

@test "drop_frames in RE2 syntax: our stacks are pprof's" {
	need_go
	local c
	for c in rx rxkeep rxinject rxctl backref nested slowmatch; do
		$GEN $c >"$T/$c.pb"
		same_traces "$T/$c.pb" 1 -sample_index=0 || { echo "differs: $c"; return 1; }
	done
}

@test "hostile drop_frames: refused as RE2 refuses them, or matched in linear time" {
	local name
	name=$(printf 'a%.0s' $(seq 3000))
	# a backreference (minutes in a backtracking matcher) and nested counted repeats
	# (gigabytes to compile): RE2 has neither; pprof ignores the pattern, and so do we
	$GEN backref >"$T/b.pb"
	run tach-decode --no-thread-frames "$T/b.pb"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/b.pb: offset 76: warning: drop_frames \"(a|aa)*\\2\\2\\2\\2b\", byte 7: backreference \\2: RE2 has none; pprof refuses it too: no frames dropped" ]
	[ "${lines[1]}" = "m.c:main:1;m.c:$name:2 1" ]
	$GEN nested >"$T/n.pb"
	run tach-decode --no-thread-frames "$T/n.pb"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/n.pb: offset 76: warning: drop_frames \"((a{1,255}){1,255}){1,255}\", byte 11: invalid repeat count {1,255}: nested repeats over 1000 copies; pprof refuses it too: no frames dropped" ]
	[ "${lines[1]}" = "m.c:main:1;m.c:$name:2 1" ]
	# valid RE2 that backtracking takes exponential time over: no match, nothing dropped
	$GEN slowmatch >"$T/s.pb"
	run tach-decode --no-thread-frames "$T/s.pb"
	[ "$status" -eq 0 ]
	[ "$output" = "m.c:main:1;m.c:$name:2 1" ]
	# control characters in a pattern do not reach the terminal
	$GEN rxctl >"$T/c.pb"
	run tach-decode --no-thread-frames "$T/c.pb"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "tach-decode: $T/c.pb: offset 76: warning: drop_frames \"x??[31m(?=\", byte 3: missing closing ]; pprof refuses it too: no frames dropped" ]
	# compressed, the offset is in the uncompressed protobuf, and says so
	gzip -c "$T/b.pb" >"$T/b.pb.gz"
	run tach-decode --no-thread-frames "$T/b.pb.gz"
	[[ ${lines[0]} == "tach-decode: $T/b.pb.gz: offset 76: warning: drop_frames "*"no frames dropped (offset in the uncompressed protobuf)" ]]
}

@test "--sample-index: by name, inuse_ prefix, number; default_sample_type; bad values" {
	$GEN types >"$T/t.pb"
	# default_sample_type names alloc_space (bytes): values as weights
	run tach-decode "$T/t.pb"
	[ "$output" = "$(printf 'tid:0;m.go:main:1;m.go:grow:5 4096\ntid:0;m.go:main:1 512')" ]
	run tach-decode --sample-index space "$T/t.pb"
	[ "$status" -eq 1 ]
	run tach-decode --sample-index inuse_space "$T/t.pb"
	[ "$output" = "tid:0;m.go:main:1;m.go:grow:5 1024" ]
	run tach-decode --sample-index 0 "$T/t.pb"
	[ "$output" = "$(printf 'tid:0;m.go:main:1;m.go:grow:5 3\ntid:0;m.go:main:1 1')" ]
	run tach-decode --sample-index 3 "$T/t.pb"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/t.pb: sample-index 3: the profile has no such sample type (it has 3)" ]
	# a TACH input has no sample types: the option is for pprof input only, and says so
	run tach-decode --sample-index 0 "$FIXTURES/tach/cases/single_sample.tach"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $FIXTURES/tach/cases/single_sample.tach: warning: --sample-index does not apply to tach input; ignored" ]
	run tach-decode --from pprof --sample-index '' "$T/t.pb"
	[ "$status" -eq 2 ]
}

@test "time values are each sample's exact time; their samples the count, else whole periods" {
	$GEN inexact >"$T/x.pb"
	run tach-decode "$T/x.pb"
	[ "$status" -eq 0 ]
	# 10 ns is 3 periods of 3 ns, 1 ns at least one sample; their times stay exact, 10 and
	# 1 ns, nothing said
	[ "$output" = "tid:0;m.c:main:1 4" ]
	[ "$(tach-decode -F samples "$T/x.pb" | grep -v '^@' | cut -f1)" = "$(printf '0 0 0 4 10 3\n0 0 3000 4 1')" ]
	# a time with no period to divide it by (a Go mutex profile's delay) and a count of
	# samples: the count is the weight, the time the time, whichever type is chosen
	$GEN noperiod >"$T/np.pb"
	for opt in "" "--sample-index samples" "--sample-index wall"; do
		# shellcheck disable=SC2086
		[ "$(tach-decode $opt "$T/np.pb")" = "tid:0;m.c:main:1 2" ]
		# shellcheck disable=SC2086
		[ "$(tach-decode $opt -F samples "$T/np.pb" | grep -v '^@' | cut -f1)" = "0 0 0 4 20 2" ]
	done
	tach-decode -F info "$T/np.pb" | grep -qx 'value_type: wall/nanoseconds (the weights)'
	tach-decode -F info "$T/np.pb" | grep -qx 'weight_total: 2'
}

@test "what pprof refuses we refuse, with an offset" {
	local c want
	while IFS='|' read -r c want; do
		$GEN "$c" >"$T/h.pb"
		run tach-decode --from pprof "$T/h.pb"
		[ "$status" -eq 1 ] || { echo "$c: exit $status"; return 1; }
		[[ $output == "tach-decode: $T/h.pb: offset "[0-9]*": $want"* ]] ||
			{ echo "$c: $output"; return 1; }
		if command -v go >/dev/null; then
			! go tool pprof -raw "$T/h.pb" >/dev/null 2>&1 || { echo "pprof took $c"; return 1; }
		fi
	done <<-'EOF'
	badvarint|bad varint in field 2
	badlen|field 2: length 65535 runs past its message
	dupid|several locations with id 1
	noloc|a sample's location 9 does not exist
	noid|a location with the reserved id 0
	strindex|period type, drop_frames
	values|a sample has 1 values for 2 sample types
	wiretype|field 2: wire type 0 where 2 belongs
	concat|a second time_nanos: concatenated profiles
	EOF
	$GEN firststring >"$T/h.pb"
	run tach-decode --from pprof "$T/h.pb"
	[ "$status" -eq 1 ]
	[[ $output == *"offset 0: string_table[0] must be ''" ]]
	# a gzip stream cut short
	gzip -c "$T/h.pb" | head -c 30 >"$T/cut.gz"
	run tach-decode --from pprof "$T/cut.gz"
	[ "$status" -eq 1 ]
	[[ $output == *"gzip data: cut short"* ]]
}

@test "drop_frames matching root frames: pprof keeps every frame above the first kept one" {
	# main|ab on main -> ab and main -> cd: both stay whole; a root location whose
	# inner line matches loses that line; below a kept frame, a match still cuts
	$GEN droproot >"$T/r.pb"
	run tach-decode --no-thread-frames "$T/r.pb"
	[ "$output" = "$(printf 'm.c:main:1;m.c:cd:3 6\nm.c:main:1;m.c:ab:2;m.c:ab:2 5\nm.c:root2:5;m.c:cd:3 3\nm.c:main:1;m.c:ab:2 1')" ]
	need_go
	same_traces "$T/r.pb" 1 -sample_index=0
}

@test "drop_frames at its most costly: the matcher's budget is spent in seconds, then nothing is dropped" {
	# two programs near the instruction cap, a new matcher state at each character of
	# 100 distinct 9,000-character names: about 10^10 steps unbounded; 120 s is far above
	# the second or so the budget takes, so that no loaded machine fails this
	$GEN worstrx >"$T/w.pb"
	run timeout 120 tach-decode --no-thread-frames "$T/w.pb"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/w.pb: offset 3046: warning: drop_frames \".*a.{1000}.{1000}.{1000}.{1000}.{1000}.{1000}.{1000}.{1000}....\", matching drop_frames and keep_frames over this profile's names takes over 100000000 steps each; pprof would prune, this reader does not: no frames dropped" ]
	[ "${#lines[@]}" -eq 101 ]
}
