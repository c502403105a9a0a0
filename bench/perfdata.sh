#!/usr/bin/env bash
# perf.data to folded stacks, read directly: tach-decode --labels perf X.data against
# `perf script -i X.data | stackcollapse-perf.pl` (FlameGraph's script, STACKCOLLAPSE=path or
# on PATH; not shipped here) and against `perf script` alone, CPU time (user + system, the
# pipeline's two processes summed) and peak RSS; the output compared with what the perf
# script reader makes of perf script's text; and the same capture in pipe mode (perf inject -o -) read from a
# pipe, by tach-decode and by perf script. Never fails on timing.
#   PERFDATA_INPUT: a capture; else one is recorded into BENCH_DIR (default /tmp, kept for
#     reuse): perf record -e cpu-clock -F 4000 -g of a build of this tree (~100k samples
#     on two cores).
#   BUILD_ROOT: the meson build directory (default ./build).
#   BASE_ROOT: another build (the code before a change), whose tach-decode is measured
#     beside this one's, alternating, its output compared.
#   BENCH_RUNS: runs of each command (default 3); CPU is their median, RSS the largest.
#     The machine may be shared: compare CPU (user + sys), never wall time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp}
in=${PERFDATA_INPUT:-$dir/tachfmt-bench-build.data}
base=${BASE_ROOT:-}
runs=${BENCH_RUNS:-3}
out=$(mktemp "$dir/tachfmt-bench.XXXXXX")
trap 'rm -rf "$out" "$out".*' EXIT
command -v perf >/dev/null || { echo "perf not installed: nothing to compare"; exit 0; }

if [ ! -s "$in" ]; then
	echo "recording $in (a build of this tree)"
	meson setup "$out.build" "$here/.." >/dev/null
	perf record -q -e cpu-clock -F 4000 -g -o "$in" ninja -C "$out.build" >/dev/null 2>&1
fi
cat "$in" >/dev/null # page cache
samples=$(perf script -i "$in" -F event 2>/dev/null | grep -c .)
echo "input: $in, $(stat -c %s "$in") bytes, $samples samples"

once() { # label command: one run, its CPU and RSS appended to $out.runs.LABEL
	/usr/bin/time -f '%U %S %M' -o "$out.time" sh -c "$2" >"$out.$1" 2>/dev/null
	awk '{ print $1 + $2, $3 }' "$out.time" >>"$out.runs.$1"
}
report() { # label: the median CPU and the largest RSS of its runs; the median kept
	sort -n "$out.runs.$1" | awk -v l="$1" '{ c[NR] = $1; if ($2 > m) m = $2 }
		END { printf "%-28s cpu %6.2f s (median of %d: %s .. %s)  peak RSS %7d KB\n", l,
			c[int((NR + 1) / 2)], NR, c[1], c[NR], m }'
	sort -n "$out.runs.$1" | awk '{ c[NR] = $1 } END { print c[int((NR + 1) / 2)] }' >"$out.cpu.$1"
}
measure() { # label command [label command...]: BENCH_RUNS rounds, the commands alternating
	local k
	for _ in $(seq "$runs"); do
		for ((k = 1; k < $#; k += 2)); do
			local c=$((k + 1))
			once "${!k}" "${!c}"
		done
	done
	for ((k = 1; k < $#; k += 2)); do report "${!k}"; done
}
cpu() { cat "$out.cpu.$1"; }

if [ -n "$base" ]; then
	measure "tach-decode before" "'$base/cmd/tach-decode' -q --labels perf '$in'" \
		tach-decode "'$build/cmd/tach-decode' -q --labels perf '$in'"
	cmp -s "$out.tach-decode before" "$out.tach-decode" && echo "before and after: the same lines" ||
		echo "BEFORE AND AFTER DIFFER"
	awk -v a="$(cpu "tach-decode before")" -v b="$(cpu tach-decode)" \
		'BEGIN { if (b > 0) printf "after: %.2fx less CPU than before\n", a / b }'
else
	measure tach-decode "'$build/cmd/tach-decode' -q --labels perf '$in'"
fi
measure tach2pprof "'$build/cmd/tach2pprof' -q -f -o /dev/stdout '$in'"
measure "perf script" "perf script -i '$in'"
"$build/cmd/tach-decode" -q --labels perf "$out.perf script" >"$out.text"
if diff <(LC_ALL=C sort "$out.text") <(LC_ALL=C sort "$out.tach-decode") >/dev/null; then
	echo "tach-decode's lines are the perf script reader's on perf script's text ($(wc -l <"$out.text") lines)"
else
	echo "OUTPUTS DIFFER from the perf script reader's"
fi
ratio() { awk -v a="$(cpu "$1")" -v b="$(cpu tach-decode)" -v l="$1" \
	'BEGIN { if (b > 0) printf "tach-decode: %.1fx less CPU than %s\n", a / b, l }'; }
ratio "perf script"
script=${STACKCOLLAPSE:-$(command -v stackcollapse-perf.pl || true)}
if [ -n "$script" ]; then
	# the pipeline's CPU: perf script's plus the script's, each measured on its own
	measure stackcollapse-perf.pl "perl '$script' '$out.perf script'"
	awk -v a="$(cpu "perf script")" -v s="$(cpu stackcollapse-perf.pl)" -v b="$(cpu tach-decode)" \
		'BEGIN { printf "perf script | stackcollapse-perf.pl: cpu %.2f s; tach-decode: %.1fx less\n", a + s, (a + s) / b }'
else
	echo "stackcollapse-perf.pl: not found (not packaged by Debian; STACKCOLLAPSE=path)"
fi

# pipe mode: the records come in a stream (perf record -o -), here read from a pipe
if perf inject -i "$in" -o - >"$out.pipe" 2>/dev/null && [ -s "$out.pipe" ]; then
	echo "pipe mode: $(stat -c %s "$out.pipe") bytes (perf inject -o -)"
	pipes=("tach-decode, pipe" "cat '$out.pipe' | '$build/cmd/tach-decode' -q --labels perf -")
	[ -z "$base" ] || pipes=("tach-decode before, pipe" \
		"cat '$out.pipe' | '$base/cmd/tach-decode' -q --labels perf -" "${pipes[@]}")
	measure "${pipes[@]}" "perf script, pipe" "cat '$out.pipe' | perf script -i -"
fi
