#!/usr/bin/env bash
# JFR to folded stacks and to pprof: tach-decode --labels async-profiler and tach2pprof
# against the JDK's own parser (bench/JfrRead.java: jdk.jfr.consumer.RecordingFile reading
# every jdk.ExecutionSample and folding its stack), side by side on one recording: CPU time
# (user + system) and peak RSS. Never fails on timing.
#   JFR_INPUT: a recording; else the fixture tests/fixtures/jfr/ap-cpu.jfr (async-profiler,
#     1,558 samples) repeated JFR_REPEAT times (default 400: 623,200 samples), a recording
#     of as many chunks, kept in BENCH_DIR (default /tmp).
#   A second recording of as many samples is measured too: the fixtures ap-cpu.jfr and
#     jdk-profile.jfr one after the other (JFR_REPEAT / 2 times each), where no chunk's
#     pools are its predecessor's, so that every chunk's metadata and pools are read.
#   With a JDK and no JFR_INPUT, first a recording of the issue's shape, made by the JDK
#     (see JFR_STACKS_S below).
#   BUILD_ROOT: the meson build directory (default ./build).
#   BASE_ROOT: another build (of main, say) measured beside it, line for line.
#   Each input is also read from a pipe (cat FILE | tach2pprof), where no file is mapped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp}
repeat=${JFR_REPEAT:-400}
in=${JFR_INPUT:-$dir/tachfmt-bench-ap-cpu-x$repeat.jfr}
out=$(mktemp -d "$dir/tachfmt-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
fx=$here/../tests/fixtures/jfr
if [ ! -s "$in" ]; then
	for _ in $(seq "$repeat"); do cat "$fx/ap-cpu.jfr"; done >"$in"
fi
mix=$dir/tachfmt-bench-ap-jdk-x$repeat.jfr
if [ ! -s "$mix" ]; then
	for _ in $(seq $((repeat / 2))); do cat "$fx/ap-cpu.jfr" "$fx/jdk-profile.jfr"; done >"$mix"
fi

measure() { # label command...
	local label=$1
	shift
	/usr/bin/time -f '%U %S %M' -o "$out/time.$label" "$@" >"$out/out.$label" 2>/dev/null
	read -r u s m <"$out/time.$label"
	printf '%-28s %6.2f s CPU  %7d KB peak RSS\n' "$label" "$(echo "$u + $s" | bc)" "$m"
}
jdk=
if command -v javac >/dev/null && command -v java >/dev/null; then
	javac -d "$out" "$here/JfrRead.java"
	jdk=1
fi
# The issue's shape (~600,000 CPU samples on ~25,000 stacks): bench/JfrStacks.java recorded
# by the JDK for JFR_STACKS_S seconds (default 30) at a 1 ms period, the recording repeated
# JFR_STACKS_REPEAT times (default 14), kept in BENCH_DIR.
stacks=
if [ -n "$jdk" ] && [ -z "${JFR_INPUT:-}" ]; then
	stacks=$dir/tachfmt-bench-jfr-stacks-x${JFR_STACKS_REPEAT:-14}.jfr
	if [ ! -s "$stacks" ]; then
		javac -d "$out" "$here/JfrStacks.java"
		printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' '<configuration version="2.0">' \
			'<event name="jdk.ExecutionSample"><setting name="enabled">true</setting><setting name="period">1 ms</setting></event>' \
			'</configuration>' >"$out/cpu.jfc"
		java -XX:StartFlightRecording=filename="$out/one.jfr",settings="$out/cpu.jfc" \
			-cp "$out" JfrStacks "${JFR_STACKS_S:-30}" >/dev/null 2>&1
		for _ in $(seq "${JFR_STACKS_REPEAT:-14}"); do cat "$out/one.jfr"; done >"$stacks"
	fi
fi
for f in $stacks "$in" "$mix"; do
	cat "$f" >/dev/null # page cache
	echo "input: $f, $(stat -c %s "$f") bytes, $("$build/cmd/tach-decode" -q -F info "$f" | sed -n 's/^samples: //p') samples"
	for b in "$build" ${BASE_ROOT:+"$BASE_ROOT"}; do
		tag=
		[ "$b" = "$build" ] || tag=" (base)"
		measure "tach-decode (folded)$tag" "$b/cmd/tach-decode" -q --labels async-profiler "$f"
		measure "tach2pprof$tag" "$b/cmd/tach2pprof" -q "$f" -o "$out/p.pb.gz"
		# from a pipe, as `cat app.jfr | tach2pprof` (the cat's CPU is counted too)
		measure "tach2pprof, pipe$tag" sh -c 'cat "$1" | "$2" -q -o "$3"' sh "$f" \
			"$b/cmd/tach2pprof" "$out/p.pb.gz"
	done
	if [ -n "${BASE_ROOT:-}" ] && ! cmp -s "$out/out.tach-decode (folded)" "$out/out.tach-decode (folded) (base)"; then
		echo "the folded lines differ from the base build's"
	fi
	if [ -n "$jdk" ]; then
		measure "JDK RecordingFile (folded)" java -cp "$out" JfrRead "$f"
		cat "$out/out.JDK RecordingFile (folded)"
	else
		echo "no JDK: the RecordingFile side is not measured"
	fi
	echo "folded lines: $(wc -l <"$out/out.tach-decode (folded)")"
done
