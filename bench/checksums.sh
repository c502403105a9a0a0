#!/usr/bin/env bash
# Checksums of every writer's output on every fixture and on modest bench shapes, and of the
# programs' output on a few inputs each, for a refactoring that must not change one byte:
# record before, compare after.
#
#   bench/checksums.sh > before.txt      (on the old tree)
#   bench/checksums.sh | diff before.txt -
#
# Fixtures: tests/fixtures (tach, gperf, flamegraph, perf) and the readers' tests/data.
# Each line: sha256 of the output (of stderr, for a failure), the exit status, and what
# was run. Environment: SOURCE_ROOT (the tree with the fixtures; the script's), BUILD_ROOT
# (./build), CHECKSUM_DIR (scratch; default a temp dir, removed), CHECKSUM_SAMPLES (bench
# shape size, 200000).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${SOURCE_ROOT:-$here/..}
build=${BUILD_ROOT:-$src/build}
fix=$src/tests/fixtures
n=${CHECKSUM_SAMPLES:-200000}
if [ -n "${CHECKSUM_DIR:-}" ]; then
	tmp=$CHECKSUM_DIR
	mkdir -p "$tmp"
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
convert=$build/tests/convert
writers=$("$build/tests/list_formats" write)

# label, command...: the output file is $tmp/out; a failure hashes its message instead.
run() {
	local label=$1 rc=0
	shift
	rm -f "$tmp/out"
	"$@" >"$tmp/stdout" 2>"$tmp/err" || rc=$?
	local f=$tmp/out
	[ -e "$f" ] || f=$tmp/stdout
	[ "$rc" -eq 0 ] || f=$tmp/err
	printf '%s %3d %s\n' "$(sha256sum <"$f" | cut -c1-64)" "$rc" "$label"
}

# reader, input, label, reader options...: every writer, and the gzip writers without gzip
every_writer() {
	local rf=$1 in=$2 label=$3 w
	shift 3
	for w in $writers; do
		run "$w <- $label" "$convert" "$rf" "$w" "$in" "$tmp/out" "$@"
	done
	run "gecko:gzip=no <- $label" "$convert" "$rf" gecko "$in" "$tmp/out" "$@" w:gzip=no
	run "pprof:gzip=no <- $label" "$convert" "$rf" pprof "$in" "$tmp/out" "$@" w:gzip=no
}

rel() { echo "${1#"$fix"/}"; }

t0=$fix/tach/cases/threads_interleaved.tach
for f in "$fix"/tach/*/*.tach; do
	every_writer tach "$f" "$(rel "$f")"
done
for f in "$fix"/gperf/*/*.prof; do
	every_writer gperf "$f" "$(rel "$f") nosym" r:symbolize=no
	every_writer gperf "$f" "$(rel "$f") sym" "r:binary-path=$(dirname "$f")"
done
for f in "$fix"/flamegraph/inputs/*; do
	every_writer collapsed "$f" "$(rel "$f")"
done

# The readers main gained since: perf script text (every stackcollapse-perf.pl label option
# too), V8 CPU profiles, speedscope JSON, folded stacks of every producer, samples text.
data=$src/tests/data
for f in "$fix"/perf/inputs/*.txt "$fix"/perf/real/*.perf; do
	every_writer auto "$f" "$(rel "$f")"
	for o in w:perf-root=comm w:perf-root=pid w:perf-root=tid w:annotate=kernel \
		w:annotate=jit w:annotate=all w:addrs=yes; do
		run "collapsed labels=perf $o <- $(rel "$f")" "$convert" auto collapsed "$f" \
			"$tmp/out" r:weight=period w:labels=perf "$o"
	done
done
for f in "$data"/v8/*.cpuprofile "$data"/speedscope/*.json "$data"/collapsed/*.txt \
	"$data"/austin1/*.txt "$data"/collapsed-cpython/*.txt "$data"/collapsed-options/*.txt \
	"$data"/*.samples "$data"/*.folded; do
	every_writer auto "$f" "${f#"$data"/}"
done
for u in samples ns us ms; do
	every_writer collapsed "$data/collapsed/perf.txt" "collapsed/perf.txt count-unit=$u" \
		r:count-unit=$u
done
# Read back what the pprof, sampler and speedscope writers wrote (the readers of formats
# with no fixture made by a real tool here).
for w in pprof sampler speedscope; do
	"$convert" tach "$w" "$t0" "$tmp/back.$w" >/dev/null
	every_writer "$w" "$tmp/back.$w" "$w <- $(rel "$t0")"
done

# Bench shapes, made once per run.
for shape in churn deep wide widedeep rle; do
	"$build/bench/gen_tach" "$shape" "$n" "$tmp/$shape.tach" >/dev/null
	every_writer tach "$tmp/$shape.tach" "gen_tach $shape $n"
done

# The programs, through the runner: options, detection, several inputs, filters, -o.
c=$build/cmd
t=$fix/tach/cases
for f in "$t"/threads_interleaved.tach "$t"/transitions.zstd.tach "$tmp/churn.tach"; do
	l=$(basename "$f")
	run "tach-decode $l" "$c/tach-decode" "$f"
	run "tach-decode -F samples $l" "$c/tach-decode" -F samples "$f"
	run "tach-decode -F info $l" "$c/tach-decode" -F info "$f"
	run "tach-decode --labels pyspy --no-thread-frames $l" "$c/tach-decode" --labels pyspy \
		--no-thread-frames "$f"
	run "tach-decode --status gil,cpu $l" "$c/tach-decode" --status gil,cpu "$f"
	run "tach-decode --from-us 1000 --to-us 9000000 $l" "$c/tach-decode" --from-us 1000 \
		--to-us 9000000 "$f"
	run "tach2gecko -o $l" "$c/tach2gecko" -o "$tmp/out" "$f"
	run "tach2pprof -o $l" "$c/tach2pprof" -o "$tmp/out" "$f"
	run "tach2flamegraph $l" "$c/tach2flamegraph" "$f"
	run "tach2pstats -o $l" "$c/tach2pstats" -o "$tmp/out" "$f"
	run "tach2speedscope $l" "$c/tach2speedscope" "$f"
	run "tach2sampler -o $l" "$c/tach2sampler" -o "$tmp/out" "$f"
done
run "tach-merge" "$c/tach-merge" -o "$tmp/out" "$t"/threads_interleaved.tach "$t"/recursion.tach
run "tach-merge --concat" "$c/tach-merge" --concat -o "$tmp/out" "$t"/rle_runs.tach \
	"$fix"/gperf/hotloop/hotloop.prof --no-symbolize
run "tach-diff" "$c/tach-diff" "$t"/threads_interleaved.tach "$t"/transitions.tach
run "tach-encode" "$c/tach-encode" -o "$tmp/out" "$t"/transitions.in.txt
for d in hotloop recursive sharedlib; do
	run "gperf2tach $d" "$c/gperf2tach" -o "$tmp/out" --binary-path "$fix/gperf/$d" \
		"$fix/gperf/$d/$d.prof"
done
# flamegraph.pl's fixtures: NAME.input names the folded file in inputs/, NAME.args its options.
for f in "$fix"/flamegraph/*.input; do
	l=$(basename "$f" .input)
	in=$fix/flamegraph/inputs/$(cat "$f")
	mapfile -t args <"${f%.input}.args"
	run "tach2flamegraph ${args[*]} $l" "$c/tach2flamegraph" --from collapsed "${args[@]}" "$in"
	run "collapsed2tach $l" "$c/collapsed2tach" -o "$tmp/out" "$in"
done
for f in "$fix"/perf/inputs/perf-js-stacks-01.txt "$data"/collapsed/perf.txt; do
	l=$(rel "$f")
	run "tach-decode --labels perf --annotate all $l" "$c/tach-decode" --labels perf \
		--annotate all "$f"
	run "perf2tach -o $l" "$c/perf2tach" -o "$tmp/out" "$f"
	run "collapsed2tach --count-unit us -o $l" "$c/collapsed2tach" --count-unit us \
		-o "$tmp/out" "$f"
	run "tach2flamegraph --progress $l" "$c/tach2flamegraph" --progress "$f"
done
run "v8 tach-decode" "$c/tach-decode" "$data"/v8/node_hot.cpuprofile
run "speedscope2tach" "$c/speedscope2tach" -o "$tmp/out" "$data"/speedscope/pyspy.json
# Input through a pipe (detection without a file) and a bad usage.
run "tach-decode - <pipe" sh -c 'cat "$1" | "$2" -' sh "$t"/recursion.tach "$c/tach-decode"
run "tach-decode --bogus" "$c/tach-decode" --bogus
