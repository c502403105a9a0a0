#!/usr/bin/env bash
# tach2pstats and tach2speedscope on a large generated profile: wall and CPU time,
# throughput and peak RSS, beside tach-decode reading the same file.
#
#   bench/py.sh [BUILD_DIR] [SAMPLES] [SHAPE]     default: build, 10000000, churn
#
# Shape "churn" from bench/gen_tach: eight threads whose stack changes on every sample (4000
# distinct stacks), the worst case for tach2speedscope, which writes one weighted sample per
# run of one stack. tach2pstats keeps counts per distinct stack and walks each once at the
# end; tach2speedscope spools 24 bytes a run per thread to a temporary file: peak RSS should
# not grow with samples. tach2gecko --no-gzip follows, as the yardstick. Prints; never fails
# on timing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
n=${2:-10000000}
shape=${3:-churn}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$build/cmd:$PATH"
gen=${GEN_TACH:-$build/bench/gen_tach}
[ -x /usr/bin/time ] || { echo "py.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
[ -x "$gen" ] || { echo "py.sh: $gen not built" >&2; exit 1; }

measure() { # label, samples, output file, command...
	local label=$1 samples=$2 out=$3
	shift 3
	local r
	r=$(/usr/bin/time -f '%e %U %S %M' timeout 1800 "$@" 2>&1 >/dev/null | tail -n 1)
	awk -v l="$label" -v r="$r" -v n="$samples" -v o="$(stat -c %s "$out")" \
		'BEGIN { split(r, v, " "); cpu = v[2] + v[3] > 0 ? v[2] + v[3] : 0.01;
		        printf "%-22s %6.2f s wall %6.2f s CPU (user+sys) %10.0f samples/CPU-s %8.1f MB out  peak RSS %7.1f MB\n",
		        l, v[1], v[2] + v[3], n / cpu, o / 1e6, v[4] / 1024 }'
}

timeout 1800 "$gen" "$shape" "$n" "$work/p.tach" zstd
echo "== $shape, $n samples: $(stat -c %s "$work/p.tach") bytes TACH;" \
	"$(tach-decode -F info "$work/p.tach" | grep -E '^(thread_count|frame_count)' | tr '\n' ' ')"
measure "tach-decode (collapsed)" "$n" /dev/null tach-decode "$work/p.tach"
measure "tach2pstats" "$n" "$work/p.pstats" tach2pstats "$work/p.tach" -o "$work/p.pstats"
measure "tach2speedscope" "$n" "$work/p.json" tach2speedscope "$work/p.tach" -o "$work/p.json"
# The yardstick issue 42 holds tach2speedscope to (within 1.5x of its CPU): tach2gecko's plain
# JSON of the same samples. Both also to /dev/null, as the kernel's cost of writing the file
# (speedscope's is 3x bigger: a stack per run, where Gecko writes an index) varies widely with
# the machine's dirty-page writeback.
measure "tach2gecko --no-gzip" "$n" "$work/p.gecko.json" tach2gecko --no-gzip "$work/p.tach" -o "$work/p.gecko.json"
measure "tach2speedscope >null" "$n" /dev/null tach2speedscope "$work/p.tach"
measure "tach2gecko --no-gzip >null" "$n" /dev/null tach2gecko -f --no-gzip "$work/p.tach"
