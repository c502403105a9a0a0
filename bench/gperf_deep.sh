#!/usr/bin/env bash
# Builds a large deep-stack input from a real profile: the TACH file SRC (default
# $BENCH_SHARED/gperf_deep_recursive.tach, BENCH_SHARED defaulting to ../shared/bench beside
# the source tree) decoded to the samples text form, repeated COPIES times (default: enough
# for 1,000,000 samples) with each copy's timestamps shifted past the last one, and encoded
# again (zstd) into OUT.
#
#   bench/gperf_deep.sh OUT [SRC [COPIES]]
#
# BUILD_ROOT: the meson build directory (default ./build). The text is streamed, never kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
shared=${BENCH_SHARED:-$here/../../shared/bench}
out=${1:?usage: gperf_deep.sh OUT [SRC [COPIES]]}
src=${2:-$shared/gperf_deep_recursive.tach}
[ -r "$src" ] || { echo "gperf_deep.sh: $src: not readable" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$build/cmd/tach-decode" -F samples "$src" >"$tmp"
n=$(grep -vc '^@' "$tmp")
copies=${3:-$(((1000000 + n - 1) / n))}
# The span of one copy: its last timestamp plus one interval.
span=$(awk -F'\t' '/^@interval_us/ { split($0, a, " "); iv = a[2] }
	!/^@/ { split($1, f, " "); if (f[3] + 0 > last) last = f[3] + 0 }
	END { print last + (iv ? iv : 1000) }' "$tmp")
{
	grep '^@' "$tmp"
	for k in $(seq 0 $((copies - 1))); do
		awk -F'\t' -v OFS='\t' -v sh=$((k * span)) '!/^@/ {
			split($1, f, " "); printf "%s %s %d %s\t%s\n", f[1], f[2], f[3] + sh, f[4], $2 }' "$tmp"
	done
} | "$build/cmd/tach-encode" -o "$out" -
echo "$out: $((n * copies)) samples ($copies copies of $src)"
