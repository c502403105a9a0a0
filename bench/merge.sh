#!/usr/bin/env bash
# tach-merge and tach-diff on many samples: CPU time and peak RSS as inputs are added, to
# show that memory follows distinct stacks and the number of inputs, not samples.
#
#   bench/merge.sh                  BENCH_SAMPLES (default 2000000) samples per input
#
# Inputs: gen_tach "churn" (4000 distinct stacks; every sample a new record) and "rle" of
# BENCH_SAMPLES samples each, copied to make 1, 2, 4 and 8 inputs (copies tie on every
# timestamp: the heap's worst case). For each: tach-merge of N churn inputs, tach-merge of
# N alternating churn/rle inputs, then tach-diff churn rle and tach-decode of one churn
# input (for scale). The best of BENCH_RUNS (3) runs by CPU seconds, and its peak RSS.
# Peak RSS includes each input's mapped file pages (the TACH reader maps its input, as for
# tach-decode), so it grows with the inputs' sizes; the anonymous memory of the merge stays
# flat (RssAnon in /proc/PID/status: 18 MiB for 4 inputs of 1 M churn samples and of 3 M).
# Environment: BUILD_ROOT (./build), BENCH_DIR (default /tmp/tachfmt-merge). Reports only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp/tachfmt-merge}
runs=${BENCH_RUNS:-3}
n=${BENCH_SAMPLES:-2000000}
mkdir -p "$dir"

for shape in churn rle; do
	[ -s "$dir/$shape.tach" ] || "$build/bench/gen_tach" "$shape" "$n" "$dir/$shape.tach"
done

measure() { # label, command...
	local label=$1 best= rss= i u s m c
	shift
	for i in $(seq "$runs"); do
		timeout 900 /usr/bin/time -o "$dir/time.txt" -f '%U %S %M' "$@" >/dev/null
		read -r u s m <"$dir/time.txt"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$c rss=$m
		fi
	done
	printf '  %-36s %7.2f s CPU %8.1f MiB RSS\n' "$label" "$best" \
		"$(awk -v m="$rss" 'BEGIN { print m / 1024 }')"
}

echo "== $n samples per input"
measure "tach-decode -F info churn (1 input)" "$build/cmd/tach-decode" -F info "$dir/churn.tach"
for k in 1 2 4 8; do
	churn=() mixed=()
	for i in $(seq "$k"); do
		churn+=("$dir/churn.tach")
		if [ $((i % 2)) -eq 1 ]; then mixed+=("$dir/churn.tach"); else mixed+=("$dir/rle.tach"); fi
	done
	measure "tach-merge churn x$k" "$build/cmd/tach-merge" -o "$dir/out.tach" "${churn[@]}"
	measure "tach-merge churn/rle x$k" "$build/cmd/tach-merge" -o "$dir/out.tach" "${mixed[@]}"
done
measure "tach-diff churn rle" "$build/cmd/tach-diff" -o "$dir/out.txt" "$dir/churn.tach" "$dir/rle.tach"
measure "tach-decode churn (collapsed)" "$build/cmd/tach-decode" -o "$dir/out.txt" "$dir/churn.tach"
rm -f "$dir/out.tach" "$dir/out.txt"
