#!/usr/bin/env bash
# JFR to folded stacks and to pprof: tach-decode --labels async-profiler and tach2pprof
# against the JDK's own parser (bench/JfrRead.java: jdk.jfr.consumer.RecordingFile reading
# every jdk.ExecutionSample and folding its stack), side by side on one recording: CPU time
# (user + system) and peak RSS. Never fails on timing.
#   JFR_INPUT: a recording; else the fixture tests/fixtures/jfr/ap-cpu.jfr (async-profiler,
#     1,558 samples) repeated JFR_REPEAT times (default 400: 623,200 samples), a recording
#     of as many chunks, kept in BENCH_DIR (default /tmp).
#   BUILD_ROOT: the meson build directory (default ./build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp}
repeat=${JFR_REPEAT:-400}
in=${JFR_INPUT:-$dir/tachfmt-bench-ap-cpu-x$repeat.jfr}
out=$(mktemp -d "$dir/tachfmt-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
if [ ! -s "$in" ]; then
	for _ in $(seq "$repeat"); do cat "$here/../tests/fixtures/jfr/ap-cpu.jfr"; done >"$in"
fi
cat "$in" >/dev/null # page cache
echo "input: $in, $(stat -c %s "$in") bytes, $("$build/cmd/tach-decode" -q -F info "$in" | sed -n 's/^samples: //p') samples"

measure() { # label command...
	local label=$1
	shift
	/usr/bin/time -f '%U %S %M' -o "$out/time.$label" "$@" >"$out/out.$label" 2>/dev/null
	read -r u s m <"$out/time.$label"
	printf '%-28s %6.2f s CPU  %7d KB peak RSS\n' "$label" "$(echo "$u + $s" | bc)" "$m"
}
measure "tach-decode (folded)" "$build/cmd/tach-decode" -q --labels async-profiler "$in"
measure "tach2pprof" "$build/cmd/tach2pprof" -q "$in" -o "$out/p.pb.gz"
if command -v javac >/dev/null && command -v java >/dev/null; then
	javac -d "$out" "$here/JfrRead.java"
	measure "JDK RecordingFile (folded)" java -cp "$out" JfrRead "$in"
	cat "$out/out.JDK RecordingFile (folded)"
else
	echo "no JDK: the RecordingFile side is not measured"
fi
echo "folded lines: $(wc -l <"$out/out.tach-decode (folded)")"
