#!/bin/sh
# speedscope2tach on generated py-spy-shaped files (bench/gen_speedscope.py) of N/10 and N
# samples: wall and CPU time, samples/s and MB/s per CPU second (the machine may be
# shared) and peak RSS, so that memory can be seen to follow the file's size (it is
# mapped). Reports only; never fails on timing.
#   Usage: bench/speedscope.sh [BUILD_DIR]      Environment: SAMPLES (default 1000000), WORK.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
n=${SAMPLES:-1000000}
work=${WORK:-$(mktemp -d)}
[ -x /usr/bin/time ] || { echo "speedscope.sh: needs /usr/bin/time" >&2; exit 1; }

for size in $((n / 10)) "$n"; do
	in=$work/pyspy-$size.json
	[ -s "$in" ] || python3 "$here/gen_speedscope.py" "$size" "$in"
	timeout 600 /usr/bin/time -f '%e %U %S %M' -o "$work/time" \
		"$build/cmd/speedscope2tach" "$in" -o "$work/out.tach"
	read -r secs user sys kib < "$work/time"
	awk -v n="$size" -v b="$(stat -c %s "$in")" -v s="$secs" -v u="$user" -v y="$sys" \
		-v k="$kib" -v o="$(stat -c %s "$work/out.tach")" 'BEGIN { c = u + y; if (c <= 0) c = 0.01
		printf "speedscope2tach %8d samples, %6.1f MB in: %6.2f s wall, %.2f s CPU: %5.2f M samples/s, %6.1f MB/s per CPU second, peak RSS %6.1f MiB, TACH %d bytes\n",
			n, b / 1e6, s, c, n / c / 1e6, b / c / 1e6, k / 1024, o }'
done
[ -n "${WORK:-}" ] || rm -rf "$work"
