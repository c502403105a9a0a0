#!/bin/sh
# gperf2tach on a large synthetic legacy profile (bench/gperf_gen.py), with and without
# symbolization: wall and CPU time (wall alone misleads on a loaded machine), throughput
# and peak RSS. Usage: bench/gperf.sh [BUILD_DIR]
# Environment: RECORDS (default 200000), WORK (scratch directory, default a new temp dir).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
prog=$build/cmd/gperf2tach
records=${RECORDS:-200000}
work=${WORK:-$(mktemp -d)}
prof=$work/large_$records.prof
[ -s "$prof" ] || timeout 300 python3 "$here/gperf_gen.py" "$prof" "$records"
size=$(stat -c %s "$prof")
for mode in --no-symbolize --symbolize; do
	opt=$mode
	[ "$mode" = --symbolize ] && opt=
	# shellcheck disable=SC2086
	timeout 600 /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$prog" -q $opt "$prof" -o "$work/out.tach"
	read -r secs user sys kib < "$work/time"
	echo "gperf2tach $mode: $records records, $size bytes: ${secs} s wall" \
		"(${user} s user + ${sys} s sys)," \
		"$(awk -v b="$size" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? b / s / 1e6 : 0) }') MB/s," \
		"peak RSS $((kib / 1024)) MiB, output $(stat -c %s "$work/out.tach") bytes"
done
[ -n "${WORK:-}" ] || rm -rf "$work"
