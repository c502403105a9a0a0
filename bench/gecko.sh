#!/usr/bin/env bash
# tach2gecko on large generated profiles: wall and CPU time, throughput and peak RSS, for
# gzip (the default level 1, and 6) and plain JSON, beside tach-decode reading the same file.
#
#   bench/gecko.sh [BUILD_DIR] [SAMPLES]     default: build, 1000000 (BENCH_FULL=1: 10000000)
#
# Shapes: "rle" and "churn" from bench/gen_tach (the other benchmarks' profiles: long runs of
# one stack; a new stack every sample), and "walk" from bench/gen_samples.py through
# tach-encode (8 threads whose stacks drift a frame at a time and whose GIL/CPU states change,
# so markers and categories vary; at most 4000000 samples, as its text form is large).
# Memory is the stack trie and a 16 KiB chunk of sample records per thread (the rest is
# spooled to a temporary file), so peak RSS without the input stays flat as samples grow.
# Prints; never fails on timing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
n=${2:-}
[ -n "$n" ] || { [ -n "${BENCH_FULL:-}" ] && n=10000000 || n=1000000; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$build/cmd:$PATH"
gen=${GEN_TACH:-$build/bench/gen_tach}
[ -x /usr/bin/time ] || { echo "gecko.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

measure() { # label, samples, output file, command...
	local label=$1 samples=$2 out=$3
	shift 3
	# wall seconds, user CPU seconds, peak RSS in KB; CPU time is the steadier number on a
	# shared machine.
	local r
	r=$(/usr/bin/time -f '%e %U %M' timeout 1800 "$@" 2>&1 >/dev/null | tail -n 1)
	awk -v l="$label" -v r="$r" -v n="$samples" -v o="$(stat -c %s "$out")" \
		'BEGIN { split(r, v, " "); cpu = v[2] > 0 ? v[2] : 0.01;
		        printf "%-27s %6.2f s wall %6.2f s CPU %9.0f samples/CPU-s %7.1f MB out  peak RSS %7.1f MB\n",
		        l, v[1], v[2], n / cpu, o / 1e6, v[3] / 1024 }'
}

run() { # shape, samples, tach file
	local shape=$1 samples=$2 tach=$3
	echo "== $shape, $samples samples: $(stat -c %s "$tach") bytes TACH;" \
		"$(tach-decode -F info "$tach" | grep -E '^(thread_count|frame_count)' | tr '\n' ' ')"
	measure "tach-decode (collapsed)" "$samples" /dev/null tach-decode "$tach"
	measure "tach2gecko (gzip level 1)" "$samples" "$work/o1.json.gz" tach2gecko "$tach" -o "$work/o1.json.gz"
	measure "tach2gecko --level 6" "$samples" "$work/o6.json.gz" tach2gecko --level 6 "$tach" -o "$work/o6.json.gz"
	measure "tach2gecko --no-gzip" "$samples" "$work/o.json" tach2gecko --no-gzip "$tach" -o "$work/o.json"
	rm -f "$work"/o* "$tach"
}

if [ -x "$gen" ]; then
	for shape in rle churn; do
		timeout 1800 "$gen" "$shape" "$n" "$work/$shape.tach" zstd
		run "$shape" "$n" "$work/$shape.tach"
	done
else
	echo "gecko.sh: $gen not built; rle and churn skipped" >&2
fi
w=$n
[ "$w" -le 4000000 ] || w=4000000
timeout 1800 python3 "$here/gen_samples.py" "$w" | timeout 1800 tach-encode -o "$work/walk.tach"
run walk "$w" "$work/walk.tach"
