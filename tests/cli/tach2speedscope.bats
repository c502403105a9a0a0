#!/usr/bin/env bats
# tach2speedscope as a user runs it: speedscope's own importer (the bundle of its npm
# package, run in node by tests/cli/speedscope_import.mjs) imports every fixture's output,
# with per-thread stacks, totals and sample counts equal to tach-decode's collapsed output
# (tests/cli/speedscope_check.py); every option and error path.

load checked
load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
	CASES=$FIXTURES/tach/cases
}


# imports TACH [FILTERS...]: converts, imports with speedscope, compares with tach-decode.
imports() {
	local f=$1
	shift
	tach2speedscope -q "$@" "$f" -o "$T/p.json"
	tach-decode -q "$@" "$f" >"$T/col.txt"
	local iv
	iv=$(tach-decode -q --format samples "$f" | sed -n 's/^@interval_us //p')
	checked "$T/p.json" "$T/col.txt" -- import_check "$T/p.json" "$T/col.txt" "${iv:-0}"
}

import_check() { # FILE.json COLLAPSED.txt INTERVAL_US
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$1" >"$T/imp.txt" || return
	python3 "$SOURCE_ROOT/tests/cli/speedscope_check.py" "$1" "$T/imp.txt" "$2" "$3"
}

# All of them at once, one Node and one Python: LIST has lines "NAME INTERVAL_US" for
# NAME.json and its tach-decode output NAME.col in the current directory.
import_check_list() { # LIST
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" $(awk '{ print $1 ".json" }' "$1") ||
		return
	awk '{ print $1 ".json", $1 ".json.imp.txt", $1 ".col", $2 }' "$1" >"$1.check" || return
	python3 "$SOURCE_ROOT/tests/cli/speedscope_check.py" --list "$1.check"
}

@test "speedscope imports every fixture: tach-decode's stacks, totals and counts per thread" {
	speedscope_bundle
	local f n=0 p iv
	mkdir "$T/v"
	cd "$T/v"
	for f in "$CASES"/*.tach "$FIXTURES"/tach/layout-a/*.tach "$FIXTURES"/tach/big-endian/*.tach; do
		p=${f#"$FIXTURES"/tach/}
		p=${p//\//-}
		tach2speedscope -q "$f" -o "$p.json"
		tach-decode -q "$f" >"$p.col"
		iv=$(tach-decode -q --format samples "$f" | sed -n 's/^@interval_us //p')
		echo "$p ${iv:-0}" >>list
		n=$((n + 1))
	done
	[ "$n" -ge 40 ]
	# speedscope_check.py reads each file as strict UTF-8
	checked * -- import_check_list list
}

@test "the import check fails on bad outputs" {
	speedscope_bundle
	local f=$CASES/threads_interleaved.tach
	imports "$f"
	# a weight changed: totals and stacks no longer agree
	jq -c '.profiles[0].weights[0] += 1000' "$T/p.json" >"$T/w.json"
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$T/w.json" >"$T/imp.txt"
	run python3 "$SOURCE_ROOT/tests/cli/speedscope_check.py" "$T/w.json" "$T/imp.txt" "$T/col.txt" 1000
	[ "$status" -eq 1 ]
	# all at once, as for every fixture: the file that disagrees is named, the rest pass
	mkdir "$T/l"
	cp "$T/w.json" "$T/l/bad.json"
	cp "$T/p.json" "$T/l/good.json"
	cp "$T/col.txt" "$T/l/bad.col"
	cp "$T/col.txt" "$T/l/good.col"
	printf 'bad 1000\ngood 1000\n' >"$T/l/list"
	cd "$T/l"
	run import_check_list list
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.json: the check above failed"* ]]
	[[ "$output" == *"1 of 2 files agree"* ]]
	# samples and weights of different lengths: speedscope's importer refuses
	jq -c '.profiles[0].weights += [1]' "$T/p.json" >"$T/l.json"
	run "$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$T/l.json"
	[ "$status" -ne 0 ]
	[[ "$output" == *"samples.length"* ]]
	# another profile's stacks
	tach-decode "$CASES/transitions.tach" >"$T/other.txt"
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$T/p.json" >"$T/imp.txt"
	run python3 "$SOURCE_ROOT/tests/cli/speedscope_check.py" "$T/p.json" "$T/imp.txt" "$T/other.txt" 1000
	[ "$status" -eq 1 ]
}

@test "the document: schema, exporter, units, thread names, frames with lines and columns" {
	tach2speedscope "$CASES/threads_interleaved.tach" -o "$T/t.json"
	run jq -r '."$schema", .exporter, (.profiles[] | "\(.name)|\(.type)|\(.unit)|\(.startValue)")' "$T/t.json"
	[ "${lines[0]}" = "https://www.speedscope.app/file-format-schema.json" ]
	[ "${lines[1]}" = "tachfmt@$(tach2speedscope -V | sed -n 's/^libtachfmt //p')" ]
	[[ "${lines[2]}" == "Thread 1 (tid "*")|sampled|microseconds|0" ]]
	[[ "${lines[3]}" == "Thread 2 (tid "*")|sampled|microseconds|0" ]]
	# endValue is the sum of the weights, every weight a multiple of the interval
	jq -e 'all(.profiles[]; .endValue == (.weights | add) and all(.weights[]; . % 1000 == 0))' "$T/t.json"
	# thread ids past 2^53, interpreters
	tach2speedscope "$CASES/edge_ids_timestamps.tach" -o "$T/e.json"
	run jq -r '.profiles[].name' "$T/e.json"
	[ "${lines[0]}" = "Thread 1 (tid 18446744073709551615, interpreter 4294967295)" ]
	# columns 1-based; a frame without a location has neither line nor column
	tach2speedscope "$CASES/opcodes_columns.tach" -o "$T/o.json"
	tach-decode --format samples "$CASES/opcodes_columns.tach" | awk -F'\t' '!/^@/ { print $2; exit }' |
		cut -d';' -f1 >"$T/first.txt"
	local col
	col=$(cut -d: -f5 "$T/first.txt")
	jq -e --argjson c "$((col + 1))" '[.shared.frames[] | select(.col == $c)] | length > 0' "$T/o.json"
	tach2speedscope "$CASES/synthetic_frames.tach" -o "$T/s.json"
	jq -e '[.shared.frames[] | select(has("line") | not) | select(has("col"))] | length == 0' "$T/s.json"
	# an input without samples: one empty profile
	tach2speedscope "$CASES/empty.tach" -o "$T/n.json"
	[ "$(jq -c '[.profiles[] | [.name, .samples, .weights, .endValue]]' "$T/n.json")" = '[["No samples",[],[],0]]' ]
}

@test "consecutive identical stacks are one weighted sample; runs of repeats too" {
	tach2speedscope "$CASES/rle_long_10000.tach" -o "$T/r.json"
	local n
	n=$(tach-decode --format samples "$CASES/rle_long_10000.tach" | grep -vc '^@')
	jq -e --argjson n "$n" '([.profiles[].weights[]] | add) == $n * 1000' "$T/r.json"
	jq -e 'all(.profiles[]; .samples as $s | all(range(1; $s | length); $s[.] != $s[. - 1]))' "$T/r.json"
	[ "$(jq '[.profiles[].samples[]] | length' "$T/r.json")" -lt 20 ]
}

@test "samples out of time order are sorted, with a warning; -q silences it" {
	tach-encode "$TESTDATA/gecko_unordered.samples" -o "$T/u.tach"
	run tach2speedscope "$T/u.tach" -o "$T/u.json"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: samples of thread 7 are not in time order: sorted"* ]]
	run jq -c '. as $d | [.profiles[0].samples[] | [.[] | $d.shared.frames[.].name]]' "$T/u.json"
	[ "$output" = '[["f"],["g"],["g"],["f"]]' ]
	[ "$(jq -c '. as $d | [.profiles[0].samples[] | [.[] | $d.shared.frames[.].line]]' "$T/u.json")" = '[[1],[5],[6],[2]]' ]
	[ "$(jq -c '.profiles[0].weights' "$T/u.json")" = '[1000,1000,1000,1000]' ]
	run tach2speedscope -q "$T/u.tach" -o "$T/u.json"
	[ -z "$output" ]
}

@test "no interval: unit none, weights are sample counts" {
	printf 'a;b 3\na;c 2\na;b 1\n' >"$T/x.folded"
	collapsed2tach "$T/x.folded" -o "$T/x.tach"
	# collapsed2tach gives an interval; a samples text without one has none
	printf '1 0 10 0\tx.py:f:1;x.py:main:9\n1 0 20 0\tx.py:f:1;x.py:main:9\n1 0 30 0\tx.py:g:2\n' >"$T/n.samples"
	tach-encode "$T/n.samples" -o "$T/n.tach"
	tach2speedscope "$T/n.tach" -o "$T/n.json"
	[ "$(jq -c '[.profiles[] | .unit, .weights, .endValue]' "$T/n.json")" = '["none",[2,1],3]' ]
	speedscope_bundle
	imports "$T/n.tach"
}

@test "strings are valid UTF-8 JSON: invalid bytes repaired once, specials escaped" {
	tach-encode "$TESTDATA/gecko_strings.samples" -o "$T/s.tach"
	run tach2speedscope "$T/s.tach" -o "$T/s.json"
	[ "$status" -eq 0 ]
	[ "$output" = "tach2speedscope: $T/s.tach: warning: a string is not valid UTF-8: invalid bytes written as U+FFFD" ]
	python3 - "$T/s.json" <<-'EOF'
		import json, sys
		frames = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["shared"]["frames"]
		assert {"name": "f\ufffd\ufffd", "file": "bad\ufffdfile.py", "line": 3} in frames, frames
		assert {"name": "g\nt\ufffd\ufffd\ufffd", "file": r'q"uote\\back.py', "line": 1} in frames, frames
	EOF
}

@test "filters: --thread, --status, --from-us/--to-us, as tach-decode applies them" {
	speedscope_bundle
	local f=$CASES/threads_interleaved.tach tid
	tid=$(tach-decode --format samples "$f" | awk '!/^[@#]/ { print $1; exit }')
	imports "$f" --thread "$tid"
	jq -e --arg t "(tid $tid" 'all(.profiles[]; .name | contains($t))' "$T/p.json"
	imports "$CASES/transitions.tach" --status gil
	imports "$CASES/transitions.tach" --status no-gil,no-cpu
	imports "$CASES/transitions.tach" --from-us 1000002000 --to-us 1000004000
	tach2speedscope --thread 1 "$CASES/transitions.tach" -o "$T/e.json"
	[ "$(jq -c '[.profiles[].name]' "$T/e.json")" = '["No samples"]' ]
}

@test "runs spooled through a temporary file: the same profile; spool errors are I/O errors" {
	speedscope_bundle
	# 30000 samples in three threads, stacks changing every sample: 10000 runs a thread,
	# more than a 64 KiB chunk holds
	awk 'BEGIN { print "@interval_us 100"; ts = 1000000
		for (i = 0; i < 30000; i++) {
			t = i % 3 + 1; d = i % 5 + 1; s = ""
			for (k = 0; k < d; k++)
				s = s sprintf("%sm%d.py:f%d:%d", k ? ";" : "", (i + k) % 4, k, k + 1)
			printf "%d 0 %d %d\t%s\n", t, ts += 100, i % 4, s
		} }' >"$T/spill.samples"
	tach-encode -o "$T/spill.tach" "$T/spill.samples"
	imports "$T/spill.tach"
	[ "$(jq -c '[.profiles[] | (.samples | length)]' "$T/p.json")" = "[10000,10000,10000]" ]
	[ -z "$(ls "$T" | grep tachfmt-spool)" ]
	run env TMPDIR="$T/missing" tach2speedscope "$T/spill.tach" -o "$T/x.json"
	[ "$status" -eq 1 ]
	[[ $output == *"spooling samples to a temporary file: No such file or directory"* ]]
	[ ! -e "$T/x.json" ]
}

@test "output is deterministic and the same from stdin as from a file" {
	local f=$CASES/many_frames.zstd.tach
	tach2speedscope "$f" -o "$T/a.json"
	tach2speedscope "$f" -o "$T/b.json"
	cmp "$T/a.json" "$T/b.json"
	tach2speedscope <"$f" | cmp - "$T/a.json"
	cat "$f" | tach2speedscope - | cmp - "$T/a.json"
	TACHFMT_THREADS=1 tach2speedscope "$f" | cmp - "$T/a.json"
	LC_ALL=de_DE.UTF-8 tach2speedscope "$f" | cmp - "$T/a.json"
}

@test "text output goes to a terminal" {
	command -v script >/dev/null || skip "script (util-linux) not installed"
	run script -qec "tach2speedscope '$CASES/recursion.tach'" /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *'"exporter":"tachfmt@'* ]]
}

@test "damaged TACH files: exit 1 with tach-decode's message, no -o file left" {
	local f
	for f in "$FIXTURES"/tach/errors/err_*.tach; do
		if tach-decode "$f" >/dev/null 2>"$T/want.err"; then
			continue
		fi
		sed 's/^tach-decode:/tach2speedscope:/' "$T/want.err" >"$T/want2.err"
		run tach2speedscope "$f" -o "$T/out.json"
		[ "$status" -eq 1 ]
		diff -u "$T/want2.err" <(printf '%s\n' "$output")
		[[ "$output" == *"tach2speedscope: $f: offset "* ]]
		[ ! -e "$T/out.json" ]
		[ -z "$(ls "$T" | grep '^out\.json\.')" ]
	done
	printf 'hello\n' >"$T/x.txt"
	run tach2speedscope "$T/x.txt" -o "$T/o.json"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2speedscope: $T/x.txt: "* ]]
	[ ! -e "$T/o.json" ]
}

@test "I/O errors: missing input, unwritable output, full disk" {
	run tach2speedscope "$T/missing.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach2speedscope: $T/missing.tach: No such file or directory" ]
	run tach2speedscope "$CASES/recursion.tach" -o "$T/no/such/dir/p.json"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2speedscope: $T/no/such/dir/p.json: "* ]]
	[ -c /dev/full ] || skip "/dev/full is not the full device on this machine"
	run bash -c 'tach2speedscope "$1" >/dev/full' _ "$CASES/many_frames.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach2speedscope: <stdout>: "*"No space left on device"* ]]
}

@test "usage errors exit 2" {
	run tach2speedscope --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach2speedscope: invalid option --bogus"* ]]
	run tach2speedscope --max-depth 0 "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2speedscope --status sleepy "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2speedscope --format speedscope "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
}

@test "--max-depth, --strict and -v reach the TACH reader" {
	run tach2speedscope --max-depth 10 "$CASES/deep_stack_300.tach" -o "$T/p.json"
	[ "$status" -eq 1 ]
	[ ! -e "$T/p.json" ]
	run tach2speedscope --strict "$FIXTURES/tach/errors/err_footer_filesize_wrong.tach" -o "$T/p.json"
	[ "$status" -eq 1 ]
	run tach2speedscope -v "$CASES/recursion.tach" -o "$T/p.json"
	[ "$status" -eq 0 ]
	[[ "$output" == *"samples read"* ]]
}

@test "--help lists every option, -V the versions" {
	run tach2speedscope --help
	[ "$status" -eq 0 ]
	local o
	for o in --output --force --quiet --verbose --strict \
		--max-depth --thread --status --from-us --to-us --help --version; do
		[[ "$output" == *"$o"* ]]
	done
	run tach2speedscope -V
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "tach2speedscope (tachfmt) "* ]]
	[[ "${lines[1]}" == "libtachfmt "* ]]
}

@test "frames are interned by text: a TACH table holding one string twice gives one frame" {
	python3 "$TESTDATA/dup_strings.py" >"$T/dup.tach"
	tach2speedscope "$T/dup.tach" -o "$T/d.json"
	[ "$(jq -c '[.shared.frames, .profiles[0].samples, .profiles[0].weights]' "$T/d.json")" = '[[{"name":"f","file":"a.py","line":1}],[[0]],[2000]]' ]
}

@test "high-cardinality input (past the lookahead threshold): read back, the stacks its counts add up to" {
	python3 "$TESTDATA/wide_folded.py" "$T/wide.folded" "$T/want"
	tach2speedscope "$T/wide.folded" -o "$T/wide.json"
	# speedscope keeps no thread ids: the stacks of all threads, summed
	tach-decode --no-thread-frames "$T/wide.json" >"$T/got"
	tach-decode --no-thread-frames --from collapsed "$T/want" >"$T/want.merged"
	cmp "$T/got" "$T/want.merged"
}

@test "a profile whose TACH header names its mode is a named document that speedscope imports" {
	speedscope_bundle
	printf '@profiling_config 2\n@python_version 3.15.0\n7 0 1000 2\tm.py:f:1;m.py:main:9\n' >"$T/c.txt"
	tach-encode --compression none -o "$T/c.tach" "$T/c.txt"
	imports "$T/c.tach" >/dev/null
	[ "$(jq -r .name "$T/p.json")" = "Python 3.15 (cpu mode)" ]
}

@test "weights are the samples' own times in µs, to the ns; samples without time weigh counts" {
	speedscope_bundle
	# samples of their own times: 2.5005 ms, 0.3 ms, and a record of 3 standing for 4 ms
	printf '@interval_us 1000\n%s\n%s\n%s\n' \
		$'1 0 1000 2 2500500\tt.py:f:1;t.py:main:9' \
		$'1 0 3500 2 300000\tt.py:g:2;t.py:main:9' \
		$'1 0 3800 2 4000000 3\tt.py:g:2;t.py:main:9' >"$T/t.samples"
	tach2speedscope --from samples "$T/t.samples" -o "$T/t.json"
	[ "$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["profiles"][0]
print(p["unit"], p["endValue"], p["weights"])' "$T/t.json")" = "microseconds 6800.5 [2500.5, 4300]" ]
	# speedscope's own importer: each stack's self weight
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$T/t.json" >"$T/imp.txt"
	grep -q $'\tt.py:main:9;t.py:f:1 2500.5$' "$T/imp.txt"
	grep -q $'\tt.py:main:9;t.py:g:2 4300$' "$T/imp.txt"
	# no time at all: counts, said once
	printf '@interval_us 0\n1 0 10 0\ta.py:f:1\n1 0 20 0\ta.py:f:1\n' >"$T/n.samples"
	run tach2speedscope --from samples "$T/n.samples" -o "$T/n.json"
	[ "$status" -eq 0 ]
	[ "$output" = "tach2speedscope: $T/n.samples: warning: the samples carry no time (no interval, no time of their own): the weights are sample counts" ]
	grep -q '"unit":"none","startValue":0,"endValue":2' "$T/n.json"
}

@test "a profile per value type: a pprof heap profile's every type, the default first" {
	speedscope_bundle
	python3 "$SOURCE_ROOT/tests/cli/pprof_gen.py" types >"$T/t.pb"
	tach2speedscope -q "$T/t.pb" -o "$T/t.json"
	# alloc_space (the default) first; the sample without inuse_space is in the others
	[ "$(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    print(p["name"], p["unit"], p["endValue"], p["weights"])' "$T/t.json")" = "$(printf '%s\n' \
		'Thread 1 (tid 0) alloc_space bytes 4608 [4096, 512]' \
		'Thread 1 (tid 0) alloc_objects none 4 [3, 1]' \
		'Thread 1 (tid 0) inuse_space bytes 1024 [1024]')" ]
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$T/t.json" >"$T/imp.txt"
	grep -qx $'#\tThread 1 (tid 0) alloc_objects\tnone\t4\t2' "$T/imp.txt"
	grep -qx $'Thread 1 (tid 0) alloc_objects\tm.go:main:1;m.go:grow:5 3' "$T/imp.txt"
	# a Go heap profile: each type's total is pprof's own
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	local heap=${PEERS:-$SOURCE_ROOT/../shared/peers}/corpora/pprof/gobench.heap
	[ -f "$heap" ] || skip "../shared/peers is not there"
	HOME=$T PPROF_TMPDIR=$T go tool pprof -proto "$heap" >"$T/h.pb.gz" 2>/dev/null
	tach2speedscope -q "$T/h.pb.gz" -o "$T/h.json"
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$T/h.json" >"$T/himp.txt"
	HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/h.pb.gz" 2>/dev/null | awk '
		/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && /^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { for (i = 1; i <= 4; i++) t[i] += $i }
		END { print "inuse_space", t[4]; print "alloc_objects", t[1]; print "alloc_space", t[2]; print "inuse_objects", t[3] }' >"$T/want"
	awk -F'\t' '/^#/ { sub(/.* /, "", $2); print $2, $4 }' "$T/himp.txt" | diff "$T/want" -
}
