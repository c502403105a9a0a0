#!/usr/bin/env bash
# perf script text to folded stacks: tach-decode --labels perf on ~BENCH_MB (default 100)
# MB made by repeating the perf fixtures' text (events renamed to one, cpu-clock, so that
# every sample is read), CPU time and peak RSS; beside it, when found, FlameGraph's
# stackcollapse-perf.pl (STACKCOLLAPSE=path, or on PATH) and inferno-collapse-perf on the
# same text, and the outputs compared. Never fails on timing.
#   BENCH_DIR (default /tmp): where the input is made (kept for reuse, never committed).
#   BUILD_ROOT: the meson build directory (default ./build).
#   PERF_INPUT: a real capture's perf script text instead, e.g. of a parallel build:
#     meson setup /tmp/b && perf record -e cpu-clock -F 4000 -g -o /tmp/b.data ninja -C /tmp/b -j2
#     perf script -i /tmp/b.data >/tmp/b.perf; PERF_INPUT=/tmp/b.perf bench/perf.sh
#   Then also pprof output (which keeps every distinct address): its peak RSS over the
#   folded output's, per distinct frame line, is the bytes an address costs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
mb=${BENCH_MB:-100}
dir=${BENCH_DIR:-/tmp}
fix=$here/../tests/fixtures/perf
in=$dir/tachfmt-bench-perf-$mb.txt
out=$(mktemp "$dir/tachfmt-bench.XXXXXX")
trap 'rm -f "$out" "$out".*' EXIT

if [ -n "${PERF_INPUT:-}" ]; then
	in=$PERF_INPUT
elif [ ! -s "$in" ]; then
	echo "making $in"
	for f in "$fix"/inputs/*.txt "$fix"/real/*.perf; do cat "$f"; echo; done |
		sed -E 's/ [A-Za-z-]+(:[A-Za-z]*)?: *$/ cpu-clock: /' >"$out.one"
	one=$(stat -c %s "$out.one")
	for ((i = 0; i < mb * 1000000 / one + 1; i++)); do cat "$out.one"; done >"$in.tmp"
	mv "$in.tmp" "$in"
fi
echo "input: $in, $(stat -c %s "$in") bytes, $(grep -c ': *$' "$in") samples"
cat "$in" >/dev/null # page cache

measure() { # label command...
	local label=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$out.time" "$@" <"$in" >"$out.$label"
	read -r wall user sys kb <"$out.time"
	cp "$out.time" "$out.time.$label"
	printf '%-28s wall %6.2f s  cpu %6.2f s  peak RSS %7d KB  %d lines\n' "$label" "$wall" \
		"$(awk "BEGIN{print $user + $sys}")" "$kb" "$(wc -l <"$out.$label")"
}

measure tach-decode "$build/cmd/tach-decode" -q --labels perf
measure tach-decode-tid "$build/cmd/tach-decode" -q --labels perf --perf-root tid
measure perf2tach "$build/cmd/perf2tach" -q -o /dev/null
if [ -n "${PERF_INPUT:-}" ]; then
	measure tach2pprof "$build/cmd/tach2pprof" -q -f -o /dev/stdout
	echo "distinct frame lines: $(grep -P '^\s+[0-9a-f]+ ' "$in" | sed -E 's/^\s+//' | sort -u | wc -l)," \
		"distinct folded lines: $(sort -u "$out.tach-decode" | wc -l)"
fi
script=${STACKCOLLAPSE:-$(command -v stackcollapse-perf.pl || true)}
if [ -n "$script" ]; then
	measure stackcollapse-perf.pl perl "$script"
	# Versions of the script before it summed periods count samples: then the stacks
	# alone are compared (every count differs by the period).
	if diff "$out.tach-decode" "$out.stackcollapse-perf.pl" >/dev/null; then
		echo "outputs equal"
	elif diff <(sed 's/ [0-9]*$//' "$out.tach-decode") \
		<(sed 's/ [0-9]*$//' "$out.stackcollapse-perf.pl") >/dev/null; then
		echo "stacks equal (counts differ: this script counts samples, not periods)"
	else
		echo "OUTPUTS DIFFER"
	fi
	awk -v a="$out.time.tach-decode" -v b="$out.time.stackcollapse-perf.pl" 'BEGIN {
		getline x <a; split(x, u); getline y <b; split(y, v)
		if (u[2] + u[3] > 0)
			printf "tach-decode: %.1fx less CPU than the script, peak RSS %.2fx its\n",
				(v[2] + v[3]) / (u[2] + u[3]), u[4] / v[4] }'
else
	echo "stackcollapse-perf.pl: not found (not packaged by Debian; STACKCOLLAPSE=path)"
fi
if command -v inferno-collapse-perf >/dev/null; then
	measure inferno-collapse-perf inferno-collapse-perf
else
	echo "inferno-collapse-perf: not found"
fi
# An independent reading in Python (tests/cli/perf_fold.py), for scale: what a plain
# line-by-line script costs on this machine.
measure perf_fold.py sh -c "python3 '$here/../tests/cli/perf_fold.py' /dev/stdin"
