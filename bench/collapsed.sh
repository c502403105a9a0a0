#!/usr/bin/env bash
# collapsed2tach throughput and peak RSS on a large generated folded file.
#   BENCH_LINES (default 1000000), BENCH_DISTINCT (200000), BENCH_RUNS (3),
#   BENCH_DIR (default /tmp): where the folded file is generated (kept for reuse, never
#   committed). BUILD_ROOT: the meson build directory (default ./build).
# Prints, per configuration, the best wall time of BENCH_RUNS runs as MB/s of folded input,
# the CPU time of that run and the peak RSS. Never fails on timing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
lines=${BENCH_LINES:-1000000}
distinct=${BENCH_DISTINCT:-200000}
runs=${BENCH_RUNS:-3}
dir=${BENCH_DIR:-/tmp}
prog=$build/cmd/collapsed2tach
in=$dir/tachfmt-bench-$lines-$distinct.folded
out=$(mktemp "$dir/tachfmt-bench.XXXXXX")
trap 'rm -f "$out" "$out.time"' EXIT

if [ ! -s "$in" ]; then
	echo "generating $in ($lines lines, $distinct distinct stacks)"
	timeout 600 python3 "$here/gen_folded.py" "$lines" "$distinct" 1 >"$in.tmp"
	mv "$in.tmp" "$in"
fi
bytes=$(stat -c %s "$in")
echo "input: $in, $bytes bytes, $lines lines"
cat "$in" >/dev/null # page cache

run() { # label, options...
	local label=$1 best= cpu= rss= i
	shift
	for ((i = 0; i < runs; i++)); do
		timeout 900 /usr/bin/time -f '%e %U %S %M' -o "$out.time" "$prog" "$@" "$in" -o "$out"
		read -r wall user sys kb <"$out.time"
		if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
			best=$wall
			cpu=$(awk "BEGIN{print $user + $sys}")
			rss=$kb
		fi
	done
	awk -v l="$label" -v b="$bytes" -v w="$best" -v c="$cpu" -v r="$rss" -v o="$(stat -c %s "$out")" \
		'BEGIN{printf "%-28s %7.2f s wall %7.1f MB/s  %6.2f s cpu %7.1f MB/s/cpu  peak RSS %6.1f MB  output %d bytes\n",
		 l, w, b / w / 1e6, c, b / c / 1e6, r / 1024, o}'
}

run "collapsed2tach (zstd -5)"
run "collapsed2tach --level 1" --level 1
run "collapsed2tach --compression none" --compression none
