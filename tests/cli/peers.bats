#!/usr/bin/env bats
# The other tools' own sample and test files (../shared/peers, README there), read as those
# tools read them, and texts that are no profile refused; each test on the peers' files skips
# when they are absent (a release tarball has no ../shared), and has a case of our own beside
# it. PEERS_DIR overrides where they are (a worktree beside the checkout).

bats_require_minimum_version 1.5.0

load bounded

setup() {
	T=$BATS_TEST_TMPDIR
	P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	D=$TESTDATA
}

need_peers() {
	[ -d "$P/corpora" ] || skip "no ../shared/peers beside the source tree"
}

# A text that is no profile: exit 1, one line naming the file, nothing on stdout, and
# (unless a format resembles it and says so) every format tried.
refused() { # file
	run --separate-stderr tach-decode "$1"
	[ "$status" -eq 1 ] || { echo "$1: exit $status: $output"; return 1; }
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$1: $stderr"; return 1; }
	[[ $stderr == "tach-decode: $1: "* ]]
}

@test "point 1: texts that are no profile (ours) convert to nothing; valgrind's callgrind is read" {
	for f in "$D"/non/*; do
		refused "$f"
		[[ $stderr == *"input format not recognized"*"; tried tach, "*", collapsed" ]] || { echo "$stderr"; false; }
	done
	# a callgrind file as valgrind writes it ("version: 1", "fn=", cost lines "16 400") was
	# refused while nothing read it; it is callgrind input now (callgrind.bats)
	command -v valgrind >/dev/null || skip "valgrind not installed"
	valgrind -q --tool=callgrind --callgrind-out-file="$T/callgrind.out" /bin/true
	grep -q '^fn=' "$T/callgrind.out"
	run --separate-stderr tach-decode -v "$T/callgrind.out"
	[ "$status" -eq 0 ] && [[ $stderr == *"callgrind input"* ]]
	cat "$T/callgrind.out" | tach2pprof -q -o "$T/o"
	[ -s "$T/o" ]
}

@test "point 1: the peers' texts of no profile, and formats not read, are refused in one line" {
	need_peers
	for f in "$P"/corpora/non/* "$P"/formats/* "$P"/corpora/pprof/*.string; do
		# the DTrace and bpftrace outputs are read (dtrace.bats compares their folding),
		# and so are callgrind's (callgrind.bats), inferno's "non-profile" one too
		case ${f##*/} in dtrace-*.txt | bpftrace-*.txt | callgrind*.log) continue ;; esac
		# and Ruby stackprof's dumps (stackprof.bats compares them with speedscope's reading)
		case ${f##*/} in stackprof-*.json) continue ;; esac
		# and GHC's profiles (ghc.bats compares them with inferno's and speedscope's readings)
		case ${f##*/} in ghc-*.prof | ghc-*.json) continue ;; esac
		# and trace-event spans (spans.bats compares them with speedscope's reading)
		case ${f##*/} in spans-*.json) continue ;; esac
		# and the Firefox Profiler's files (gecko-read.bats compares them with its importer)
		case ${f##*/} in gecko-*.json | firefox-*.json) continue ;; esac
		# and V8's tick log (v8log.bats compares it with node's preprocessed JSON of it)
		case ${f##*/} in v8-isolate.log) continue ;; esac
		# the DTrace and bpftrace outputs are read (dtrace.bats compares their folding), so is
		# macOS sample's report, Instruments' deep copy, VTune's and Visual Studio's CSV
		# (textfmts.bats)
		case ${f##*/} in
		dtrace-*.txt | bpftrace-*.txt | macos-sample.txt | instruments-deep-copy.txt) continue ;;
		vtune.csv | vsprof-*.csv) continue ;;
		# and Instruments' xctrace export (xctrace.bats compares it with inferno's folding)
		xctrace-*.xml) continue ;;
		esac
		refused "$f"
	done
	for f in "$P"/corpora/non/*; do
		case ${f##*/} in callgrind*.log) continue ;; esac
		refused "$f"
		[[ $stderr == *"not recognized"* ]]
	done
	# pprof's legacy texts (heap, growth, contention, thread) are read (pproftext.bats), never
	# as folded stacks; their Java variants are refused in one line
	for f in "$P"/corpora/pprof/*; do
		case $f in *.string | *.cpu) continue ;; esac
		run tach-decode -v -q -F collapsed "$f"
		case $f in
		*/java.*) [ "$status" -eq 1 ] || { echo "$f: $output"; false; } ;;
		*) [[ $status -eq 0 && $output == *"pproftext input"* ]] || { echo "$f: ${lines[0]}"; false; } ;;
		esac
	done
}

@test "point 1: folded stacks are still detected: comments, invalid lines among valid, a deep first line" {
	printf 'a;b 3\nnot a line\nc 1\n' | tach-decode -q --no-thread-frames | sort | tr '\n' ' ' |
		grep -qx 'a;b 3 c 1 '
	{ printf '# c\n// c2\n'; printf 'f%d;' $(seq 1 1500); printf 'leaf 4\n'; } >"$T/deep"
	tach-decode -q --no-thread-frames "$T/deep" | grep -q ';leaf 4$'
	printf 'P9;T0:1;a.py:f:1 3000,0,-512\n' >"$T/austin"
	run tach-decode -v -q "$T/austin"
	[[ $output == *"collapsed input"* ]]
	# numbers alone are no stack; a count needs a digit; JSON on one long line is no stack
	printf '16 400\n17 300 2\n' >"$T/nums"
	refused "$T/nums"
	# a threadz header alone: pprof's thread text without a thread, refused as pprof does
	printf -- '--- threadz 1 ---\n' >"$T/dash"
	run --separate-stderr tach-decode "$T/dash"
	[ "$status" -eq 1 ]
	[ "$stderr" = "tach-decode: $T/dash:1: a threadz profile without a thread" ]
	{ printf '[{"name":"x","v":'; printf '%d,' $(seq 1 1500); printf '0}]\n'; } >"$T/j"
	refused "$T/j"
	if [ -d "$P/corpora" ]; then
		for f in "$P"/corpora/ss/simple{,-crlf,-with-invalids}.folded.txt; do
			run tach-decode -v -q "$f"
			[[ $output == *"collapsed input"* ]] || { echo "$f: $output"; false; }
		done
	fi
}

# A live perf script capture of a short busy program (skips where perf_event_open is refused).
perf_capture() { # out-file perf-record-options...
	command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
	perf record -q -e cpu-clock -o "$T/probe.data" true >"$T/probe.log" 2>&1 ||
		skip "perf_event_open refused: $(head -1 "$T/probe.log")"
	local out=$1
	shift
	perf record -q -e cpu-clock "$@" -o "$T/rec.data" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' >/dev/null 2>&1
	perf script -i "$T/rec.data" >"$out" 2>/dev/null
}

@test "point 2: the last perf sample counts, with or without a blank line or a LF after it" {
	perf_capture "$T/full.perf" -F 999 -g
	[ "$(grep -c '^$' "$T/full.perf")" -ge 2 ]
	tach-decode -q --labels perf "$T/full.perf" | LC_ALL=C sort >"$T/want"
	# perf ends every sample with a blank line; without the last one, the same samples
	sed '$d' "$T/full.perf" >"$T/noblank.perf"
	[ -n "$(tail -n 1 "$T/noblank.perf")" ]
	run --separate-stderr tach-decode --labels perf "$T/noblank.perf"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" | LC_ALL=C sort | diff -u "$T/want" -
	# nor its LF (speedscope's files): the same, said once
	head -c -1 "$T/noblank.perf" >"$T/nolf.perf"
	cat "$T/nolf.perf" | { run --separate-stderr tach-decode --labels perf; [ "$status" -eq 0 ]
		[[ $stderr == *"warning: the input ends inside this line (no LF after it)"* ]]
		printf '%s\n' "$output" | LC_ALL=C sort | diff -u "$T/want" -; }
	# a capture of its first sample alone, with no blank line: one sample
	sed '/^$/q' "$T/full.perf" | sed '$d' >"$T/one.perf"
	run --separate-stderr tach-decode -q -F samples "$T/one.perf"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -vc '^@')" -eq 1 ]
}

@test "point 2: speedscope's and inferno's single-sample perf files read as they read them" {
	need_peers
	tach-decode -q --labels perf "$P/corpora/ss/one-sample.linux-perf.txt" | diff -u "$P/expected/ss/one-sample.folded" -
	tach-decode -q --labels perf "$P/corpora/inferno/single-event.txt" | diff -u "$P/expected/inferno/single-event.folded" -
	for b in go-stacks java-inline; do
		tach-decode -q --labels perf "$P/corpora/inferno/$b.txt" | LC_ALL=C sort |
			diff -u <(LC_ALL=C sort "$P/expected/inferno/$b.folded") -
	done
}

@test "point 2: an empty perf input is an empty profile with --from perf only" {
	perf_capture "$T/empty.perf" -c 100000000000
	[ ! -s "$T/empty.perf" ]
	run tach-decode --from perf "$T/empty.perf"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	tach-decode --from perf -F info <"$T/empty.perf" | grep -qx 'format: perf'
	tach2pprof -q --from perf -o "$T/e.pb.gz" "$T/empty.perf"
	[ -s "$T/e.pb.gz" ]
	run tach-decode "$T/empty.perf"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/empty.perf: offset 0: empty input: no profile format to detect" ]
	run perf2tach -o "$T/o.tach" "$T/empty.perf"
	[ "$status" -eq 1 ]
	[ ! -e "$T/o.tach" ]
	if [ -d "$P/corpora" ]; then
		tach-decode --from perf -F info "$P/corpora/inferno/no-events.txt" | grep -qx 'format: perf'
	fi
}

# The same samples from the plain file, its gzip and zstd copies, each from a file and a pipe.
same_packed() { # file [tach-decode options...]
	local f=$1
	shift
	tach-decode -q -F samples "$@" "$f" >"$T/plain"
	[ -s "$T/plain" ]
	gzip -9 -c "$f" >"$T/p.gz"
	zstd -q -c "$f" >"$T/p.zst"
	for c in p.gz p.zst; do
		tach-decode -q -F samples "$@" "$T/$c" | diff -u "$T/plain" - || { echo "$f $c"; return 1; }
		cat "$T/$c" | tach-decode -q -F samples "$@" | diff -u "$T/plain" - || { echo "$f $c pipe"; return 1; }
	done
}

@test "point 3: every format reads the same through gzip and zstd, from a file and a pipe" {
	command -v zstd >/dev/null || skip "zstd not installed"
	C=$FIXTURES/tach/cases
	same_packed "$C/deep_stack_300.tach"
	same_packed "$FIXTURES/gperf/hotloop/hotloop.prof" --no-symbolize
	tach2pprof -q -o "$T/x.pb.gz" "$C/threads_interleaved.tach"
	gzip -dc "$T/x.pb.gz" >"$T/x.pb"
	same_packed "$T/x.pb"
	tach2sampler -q -o "$T/x.trace" "$C/threads_interleaved.tach"
	same_packed "$T/x.trace"
	same_packed "$TESTDATA/speedscope/pyspy.json"
	same_packed "$TESTDATA/chrome/worker_trimmed.json"
	same_packed "$TESTDATA/mixed.samples"
	same_packed "$FIXTURES/perf/real/sort-fp.perf"
	same_packed "$TESTDATA/pprof_example.folded"
	# --from perf of a gzip file reads the text inside, not the compressed bytes
	gzip -c "$FIXTURES/perf/real/sort-fp.perf" >"$T/s.perf.gz"
	tach-decode -q --from perf "$T/s.perf.gz" | diff -u <(tach-decode -q "$FIXTURES/perf/real/sort-fp.perf") -
	# node's own .cpuprofile, gzip'd as .cpuprofile.gz
	if command -v node >/dev/null; then
		(cd "$T" && node --cpu-prof --cpu-prof-dir "$T" --cpu-prof-name hot.cpuprofile \
			-e 'let s = 0; for (let i = 0; i < 3e7; i++) s += i % 7; console.log(s)' >/dev/null)
		same_packed "$T/hot.cpuprofile"
	fi
	# perf.data as perf record writes it
	if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1; then
		perf record -q -e cpu-clock -F 999 -g -o "$T/x.data" -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' >/dev/null 2>&1
		same_packed "$T/x.data" --no-symbolize
	fi
}

@test "point 3: the Firefox Profiler's gzip'd perf and Chrome files read as their plain text" {
	need_peers
	for f in "$P"/corpora/ff/*.gz; do
		gzip -dc "$f" >"$T/plain"
		tach-decode -q -F samples "$T/plain" >"$T/want"
		[ -s "$T/want" ]
		tach-decode -q -F samples "$f" | diff -u "$T/want" - || { echo "$f"; false; }
	done
	# the perf captures, against the folded lines the README's tools make of them
	for b in simple-perf.txt gzip.perf test.perf graphviz.perf; do
		tach-decode -q --labels perf "$P/corpora/ff/$b.gz" | LC_ALL=C sort >"$T/got"
		LC_ALL=C sort "$P/expected/ff/$b.folded" | diff -u - "$T/got" || { echo "$b"; false; }
	done
}

@test "point 3: hostile compressed input: cut short, trailing bytes, a bomb past --max-input; one line each" {
	printf 'a;b 3\n' | gzip -c >"$T/t.gz"
	head -c 15 "$T/t.gz" >"$T/cut.gz"
	run tach-decode "$T/cut.gz"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/cut.gz: offset 15: gzip data: cut short (the compressed input ends inside a member)" ]
	{ cat "$T/t.gz"; printf 'junk'; } >"$T/tail.gz"
	run tach-decode "$T/tail.gz"
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: $T/tail.gz: offset "*": bytes after the gzip data that are not another gzip member" ]]
	# a damaged deflate stream
	{ head -c 10 "$T/t.gz"; printf '\xff\xff\xff\xff\xff\xff'; } >"$T/bad.gz"
	run tach-decode "$T/bad.gz"
	[ "$status" -eq 1 ]
	[[ $output == *": offset "*": gzip data: "* ]]
	[ "${#lines[@]}" -eq 1 ]
	if command -v zstd >/dev/null; then
		printf 'a;b 3\n' | zstd -q -c | head -c 12 >"$T/cut.zst"
		run tach-decode "$T/cut.zst"
		[ "$status" -eq 1 ]
		[[ $output == *": offset "*": zstd data: "* ]]
		[ "${#lines[@]}" -eq 1 ]
	fi
	# 200 MiB of folded lines pack in 1 MiB: a streaming reader stops at --max-input, soon
	yes 'a;b 1' | head -c 200M | gzip -1 -c >"$T/bomb.gz"
	[ "$(wc -c <"$T/bomb.gz")" -lt 2000000 ]
	run bounded 60 954 tach-decode --max-input 8M "$T/bomb.gz"
	[ "$status" -eq 1 ]
	[[ $output == *"holds more than 8388608 bytes (see --max-input)" ]]
	[ "${#lines[@]}" -eq 1 ]
	# the same bomb as a whole-input format (JSON) and through a pipe
	{ printf '{"traceEvents":['; head -c 200M /dev/zero | tr '\0' ' '; } | gzip -1 -c >"$T/bomb.json.gz"
	run bounded 60 954 tach-decode --max-input 8M "$T/bomb.json.gz"
	[ "$status" -eq 1 ]
	[[ $output == *"holds more than 8388608 bytes (see --max-input)" ]]
	run bash -c "source '$BATS_TEST_DIRNAME/bounded.bash'; cat '$T/bomb.json.gz' | bounded 60 954 tach-decode --max-input 8M"
	[ "$status" -eq 1 ]
	[[ $output == *"holds more than 8388608 bytes (see --max-input)" ]]
}

@test "point 5: folded stacks in UTF-16 LE and BE with a BOM, UTF-8 with one, # and // comments" {
	printf '# made by hand\n// a comment\n//\ta tab one\nmain;f\xc3\xa9 3\nmain;g 1\n' >"$T/u8"
	tach-decode -q "$T/u8" >"$T/want"
	[ "$(wc -l <"$T/want")" -eq 2 ]
	grep -qx 'tid:0;main;fé 3' "$T/want"
	run --separate-stderr tach-decode "$T/u8"
	[ -z "$stderr" ]
	{ printf '\xef\xbb\xbf'; cat "$T/u8"; } >"$T/bom8"
	for enc in UTF-16LE UTF-16BE; do
		# iconv writes no BOM for an explicit byte order: the BOM first, as Windows tools do
		{ printf '\xef\xbb\xbf' | iconv -f UTF-8 -t $enc; iconv -f UTF-8 -t $enc "$T/u8"; } >"$T/$enc"
	done
	for f in bom8 UTF-16LE UTF-16BE; do
		tach-decode -q "$T/$f" | diff -u "$T/want" - || { echo "$f"; false; }
		cat "$T/$f" | tach-decode -q --from collapsed | diff -u "$T/want" - || { echo "$f pipe"; false; }
		collapsed2tach -q "$T/$f" | tach-decode -q | diff -u "$T/want" -
		# inside gzip or zstd too (a Windows tool's file, compressed)
		gzip -c "$T/$f" | tach-decode -q | diff -u "$T/want" -
		zstd -q -c "$T/$f" >"$T/$f.zst"
		tach-decode -q "$T/$f.zst" | diff -u "$T/want" -
	done
	# a frame that starts with // (a path) is a stack, not a comment
	printf '//srv/a.js;f 2\n' | tach-decode -q | grep -qx 'tid:0;//srv/a.js;f 2'
	# the peers' own (speedscope's test files)
	if [ -d "$P/corpora" ]; then
		tach-decode -q "$P/corpora/ss/simple.folded.txt" >"$T/ss"
		for f in simple-utf16-le simple-utf16-be simple-crlf; do
			tach-decode -q "$P/corpora/ss/$f.folded.txt" | diff -u "$T/ss" - || { echo "$f"; false; }
		done
		run --separate-stderr tach-decode "$P/corpora/ss/simple-with-invalids.folded.txt"
		[ "$stderr" = "tach-decode: $P/corpora/ss/simple-with-invalids.folded.txt:8: warning: 1 line with invalid format ignored; the first is here: the count is not a number" ]
	fi
}

@test "point 5: hostile UTF-16: lone surrogates, an odd byte at the end; one line each" {
	printf '\xff\xfea\x00\x00\xd8b\x00 \x001\x00\n\x00' >"$T/hi"
	run tach-decode "$T/hi"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/hi: offset 4: UTF-16LE text: a high surrogate (0xd800) with no low one after it" ]
	printf '\xfe\xff\x00a\xdc\x00' >"$T/lo"
	run tach-decode --from collapsed "$T/lo"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/lo: offset 4: UTF-16BE text: a low surrogate (0xdc00) with no high one before it" ]
	printf '\xff\xfea\x00 \x001\x00\n' >"$T/odd"
	run tach-decode "$T/odd"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/odd: offset 8: UTF-16LE text: cut short (the input ends inside a character)" ]
	# a surrogate pair is a character: U+1F600
	printf '\xff\xfe=\xd8\x00\xde \x001\x00\n\x00' | tach-decode -q | grep -qx $'tid:0;\xf0\x9f\x98\x80 1'
	# a long stream of lone surrogates past the first: the first stops it
	{ printf '\xff\xfea\x00 \x001\x00\n\x00'; head -c 4000000 /dev/zero | tr '\0' '\334'; } >"$T/many"
	run timeout 20 tach-decode "$T/many"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"offset 10: UTF-16LE text: a low surrogate"* ]]
}

@test "point 6: inferno's perf rules: cycles and cycles:u one event (not cycles:ppp and cycles:uppp), versioned vmlinux and .ko _[k], jitted-*.so _[j]" {
	printf '%s\n' 'prog 9 1.000001:  1 cycles:u:' '	 401000 main (/bin/prog)' '' \
		'prog 9 1.000002:  1 cycles:' '	 401000 main (/bin/prog)' '' \
		'prog 9 1.000003:  1 cycles:' '	ffffffffc0001000 ext4_write+0x10 (/lib/modules/6.1.0/ext4.ko)' \
		'	ffffffff81000000 do_syscall_64+0x5 (/usr/lib/debug/boot/vmlinux-6.1.0-13-amd64)' \
		'	 401000 main (/bin/prog)' '' \
		'prog 9 1.000004:  1 cycles:u:' '	7f00001000 fib.smx::fib+0x3c (/tmp/jitted-9-123.so)' \
		'	 401000 main (/bin/prog)' '' \
		'prog 9 1.000005:  1 instructions:u:' '	 401000 main (/bin/prog)' '' \
		'prog 9 1.000006:  1 cycles:ppp:' '	 401000 main (/bin/prog)' '' >"$T/ev.perf"
	run --separate-stderr tach-decode --labels perf --annotate all "$T/ev.perf"
	[ "$status" -eq 0 ]
	printf '%s\n' 'prog;main 2' 'prog;main;do_syscall_64_[k];ext4_write_[k] 1' 'prog;main;fib.smx::fib_[j] 1' >"$T/want"
	printf '%s\n' "$output" | diff -u "$T/want" -
	[[ $stderr == *"2 samples of other events (instructions:u, ...) skipped"* ]]
	# without --annotate: the names alone
	tach-decode -q --labels perf "$T/ev.perf" | grep -qx 'prog;main;do_syscall_64;ext4_write 1'
	# a BPF program's module is no Python file
	printf '%s\n' 'prog 9 1.000001:  1 cpu-clock:' '	ffffffffc09ace93 bpf_prog_2b_l4lb+0xb80 (bpf_prog_2b_l4lb)' '' |
		tach-decode -q --labels perf | grep -qx 'prog;bpf_prog_2b_l4lb 1'
}

@test "point 6: inferno's own perf corpora fold as inferno's expected files" {
	need_peers
	check_inferno() { # name [options]
		local b=$1
		shift
		tach-decode -q --labels perf "$@" "$P/corpora/inferno/$b.txt" | LC_ALL=C sort >"$T/got"
		LC_ALL=C sort "$P/expected/inferno/$b.folded" | diff -u - "$T/got" || { echo "$b $*"; return 1; }
	}
	check_inferno single-event
	check_inferno single-line-stacks
	check_inferno go-stacks
	check_inferno java-inline
	check_inferno versioned-vmlinux --annotate kernel
	check_inferno sourcepawn-jitdump --annotate jit
	# and speedscope's perf files as its expected folded lines
	for b in forks simple-with-header simple-with-pid system-wide; do
		[ -e "$P/expected/ss/$b.folded" ] || continue
		tach-decode -q --labels perf "$P/corpora/ss/$b.linux-perf.txt" | LC_ALL=C sort >"$T/got"
		LC_ALL=C sort "$P/expected/ss/$b.folded" | diff -u - "$T/got" || { echo "$b"; false; }
	done
}

@test "point 4: a bare Chrome event array without its closing ] (the trace-event format allows it) reads whole" {
	W=$TESTDATA/chrome/worker_trimmed.json
	tach-decode -q -F samples "$W" >"$T/want"
	[ -s "$T/want" ]
	head -c -1 "$W" >"$T/open.json"
	tach-decode -q -F samples "$T/open.json" | diff -u "$T/want" -
	{ head -c -1 "$W"; printf ',\n'; } >"$T/comma.json"
	cat "$T/comma.json" | tach-decode -q -F samples | diff -u "$T/want" -
	# cut inside an event is still an error, at its end
	head -c -20 "$W" >"$T/cut.json"
	run tach-decode "$T/cut.json"
	[ "$status" -eq 1 ]
	[[ $output == *": JSON: "* ]]
	[ "${#lines[@]}" -eq 1 ]
	# an object's traceEvents array must be closed
	{ printf '{"traceEvents":'; head -c -1 "$W"; } >"$T/obj.json"
	run tach-decode "$T/obj.json"
	[ "$status" -eq 1 ]
	if [ -d "$P/corpora" ]; then
		tach-decode -q -F samples "$P/corpora/ss/chrome69-simple.json" >"$T/ss"
		tach-decode -q -F samples "$P/corpora/ss/chrome69-nobracket.json" | diff -u "$T/ss" -
	fi
}
