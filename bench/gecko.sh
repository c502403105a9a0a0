#!/usr/bin/env bash
# tach2gecko on large synthetic profiles: time, throughput and peak RSS, gzip (the default
# level 1, and 6) and plain JSON, beside tach-decode reading the same file. Prints; never
# fails on timing.
#   bench/gecko.sh [BUILD_DIR] [SAMPLES...]     (default: build, 1000000 4000000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 4000000)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$build/cmd:$PATH"

measure() { # label, output file, command...
	local label=$1 out=$2
	shift 2
	local t0 t1 rss
	t0=$(date +%s.%N)
	rss=$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1)
	t1=$(date +%s.%N)
	awk -v l="$label" -v a="$t0" -v b="$t1" -v r="$rss" -v n="$n" -v o="$(stat -c %s "$out")" \
		'BEGIN { s = b - a; printf "%-28s %7.2f s %9.0f samples/s %8.1f MB out %6.1f MB/s out  peak RSS %7.1f MB\n",
		        l, s, n / s, o / 1e6, o / 1e6 / s, r / 1024 }'
}

for n in "${sizes[@]}"; do
	tach="$work/big-$n.tach"
	timeout 900 python3 "$here/gen_samples.py" "$n" | timeout 900 tach-encode -o "$tach"
	echo "== $n samples, 8 threads: $(stat -c %s "$tach") bytes TACH (zstd); $(tach-decode -F info "$tach" | grep -E '^(frame_count|string_count)' | tr '\n' ' ')"
	measure "tach-decode (collapsed)" /dev/null timeout 900 tach-decode "$tach"
	measure "tach2gecko (gzip level 1)" "$work/o1.json.gz" timeout 900 tach2gecko "$tach" -o "$work/o1.json.gz"
	measure "tach2gecko --level 6" "$work/o6.json.gz" timeout 900 tach2gecko --level 6 "$tach" -o "$work/o6.json.gz"
	measure "tach2gecko --no-gzip" "$work/o.json" timeout 900 tach2gecko --no-gzip "$tach" -o "$work/o.json"
	rm -f "$work"/o*
done
