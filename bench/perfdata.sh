#!/usr/bin/env bash
# perf.data to folded stacks, read directly: tach-decode --labels perf X.data against
# `perf script -i X.data | stackcollapse-perf.pl` (FlameGraph's script, STACKCOLLAPSE=path or
# on PATH; not shipped here) and against `perf script` alone, CPU time (user + system, the
# pipeline's two processes summed) and peak RSS; the output compared with what the perf
# script reader makes of perf script's text. Never fails on timing.
#   PERFDATA_INPUT: a capture; else one is recorded into BENCH_DIR (default /tmp, kept for
#     reuse): perf record -e cpu-clock -F 4000 -g of a build of this tree (~100k samples
#     on two cores).
#   BUILD_ROOT: the meson build directory (default ./build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp}
in=${PERFDATA_INPUT:-$dir/tachfmt-bench-build.data}
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

measure() { # label command (a shell line)
	/usr/bin/time -f '%e %U %S %M' -o "$out.time.$1" sh -c "$2" >"$out.$1" 2>/dev/null
	read -r wall user sys kb <"$out.time.$1"
	printf '%-32s wall %6.2f s  cpu %6.2f s  peak RSS %7d KB\n' "$1" "$wall" \
		"$(awk "BEGIN{print $user + $sys}")" "$kb"
}
cpu() { awk '{ print $2 + $3 }' "$out.time.$1"; }

measure tach-decode "'$build/cmd/tach-decode' -q --labels perf '$in'"
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
