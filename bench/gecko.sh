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
	# wall seconds, user CPU seconds, peak RSS in KB; CPU time is the steadier number on a
	# shared machine.
	local r
	r=$(/usr/bin/time -f '%e %U %M' "$@" 2>&1 >/dev/null | tail -n 1)
	awk -v l="$label" -v r="$r" -v n="$n" -v o="$(stat -c %s "$out")" \
		'BEGIN { split(r, v, " "); cpu = v[2] > 0 ? v[2] : 0.01;
		        printf "%-27s %6.2f s wall %6.2f s CPU %9.0f samples/CPU-s %7.1f MB out  peak RSS %7.1f MB\n",
		        l, v[1], v[2], n / cpu, o / 1e6, v[3] / 1024 }'
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
