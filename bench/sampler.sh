#!/bin/sh
# tach2sampler and sampler2tach on large generated profiles (bench/gen_tach.c shapes "rle"
# and "churn"): wall time, samples/s, MB/s and peak RSS, at N/10 and N samples so that the
# writer's memory can be seen not to grow with the sample count (it keeps distinct
# stacks). Reports only; never fails on timing.
#   Usage: bench/sampler.sh [BUILD_DIR]      Environment: SAMPLES (default 1000000), WORK.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
gen=$build/bench/gen_tach
n=${SAMPLES:-1000000}
work=${WORK:-$(mktemp -d)}
[ -x /usr/bin/time ] || { echo "sampler.sh: needs /usr/bin/time" >&2; exit 1; }

run() { # label samples input output cmd...
	label=$1 samples=$2 in=$3 out=$4
	shift 4
	timeout 600 /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$out"
	read -r secs kib < "$work/time"
	awk -v l="$label" -v n="$samples" -v b="$(stat -c %s "$in")" -v s="$secs" -v k="$kib" \
		-v o="$(stat -c %s "$out")" 'BEGIN { if (s <= 0) s = 0.01
		printf "%-34s %6.2f s %6.2f M samples/s %7.1f MB/s in, peak RSS %6.1f MiB, output %d bytes\n",
			l, s, n / s / 1e6, b / s / 1e6, k / 1024, o }'
}

for shape in rle churn; do
	for size in $((n / 10)) "$n"; do
		timeout 600 "$gen" "$shape" "$size" "$work/$shape.tach"
		run "tach2sampler $shape $size" "$size" "$work/$shape.tach" "$work/$shape.trace" \
			"$build/cmd/tach2sampler" -q "$work/$shape.tach"
		run "sampler2tach $shape $size" "$size" "$work/$shape.trace" "$work/back.tach" \
			"$build/cmd/sampler2tach" -q "$work/$shape.trace"
	done
done
[ -n "${WORK:-}" ] || rm -rf "$work"
