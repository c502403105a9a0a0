#!/usr/bin/env bash
# tach2pprof on large generated TACH profiles: wall time, samples per second and peak RSS,
# gzip and raw, with and without labels; N/10 samples beside N show that memory follows the
# distinct stacks, not the sample count. Optionally a large gperftools profile through
# gperf2tach, and how long `go tool pprof -top` takes to read the result.
#
#   bench/pprof.sh [BUILD_DIR]        N = BENCH_SAMPLES (default 1000000; BENCH_FULL=1: 10M)
#
# Environment: BENCH_DIR (scratch directory, default a temporary one, removed afterwards),
# BENCH_TIMEOUT (seconds per command, default 600), GPERF_RECORDS (default 200000; 0 skips
# the gperftools run). Reports only; never fails on timing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${BUILD_ROOT:-$here/../build}}
GEN=$build/bench/gen_tach
T2P=$build/cmd/tach2pprof
G2T=$build/cmd/gperf2tach
if [ -n "${BENCH_FULL:-}" ]; then N=${BENCH_SAMPLES:-10000000}; else N=${BENCH_SAMPLES:-1000000}; fi
TMO=${BENCH_TIMEOUT:-600}
GREC=${GPERF_RECORDS:-200000}
for p in "$GEN" "$T2P"; do
	[ -x "$p" ] || { echo "pprof.sh: $p not built (ninja -C build)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "pprof.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi

# measure LABEL SAMPLES INPUT_BYTES CMD...: output to $dir/out, then one result line.
measure() {
	local label=$1 n=$2 bytes=$3 rc=0
	shift 3
	timeout "$TMO" /usr/bin/time -o "$dir/time.txt" -f '%e %M %U %S' "$@" >"$dir/out" || rc=$?
	if [ $rc -ne 0 ]; then
		printf '%-46s FAILED (exit %d)\n' "$label" "$rc"
		return 0
	fi
	read -r secs kib usr sys <"$dir/time.txt"
	awk -v l="$label" -v n="$n" -v b="$bytes" -v s="$secs" -v u="$usr" -v y="$sys" \
		-v kib="$kib" -v o="$(stat -c %s "$dir/out")" 'BEGIN {
		if (s <= 0) s = 0.005; c = u + y; if (c <= 0) c = 0.005
		printf "%-46s %7.2f s %7.2f M samples/s (%6.2f per CPU s) %7.1f MiB RSS (%.1f w/o input) out %d bytes\n",
			l, s, n / s / 1e6, n / c / 1e6, kib / 1024, kib / 1024 - b / 1048576, o }'
}

echo "tach2pprof benchmark: $N samples per shape ($(nproc) CPUs)"
for shape in rle churn; do
	echo
	echo "== $shape"
	small=$((N / 10))
	timeout "$TMO" "$GEN" "$shape" "$N" "$dir/$shape.tach"
	timeout "$TMO" "$GEN" "$shape" "$small" "$dir/$shape.small.tach"
	big=$(stat -c %s "$dir/$shape.tach")
	little=$(stat -c %s "$dir/$shape.small.tach")
	echo "input: $big bytes (zstd TACH)"
	measure "tach2pprof (gzip)" "$N" "$big" "$T2P" "$dir/$shape.tach"
	measure "tach2pprof (gzip, N/10 samples)" "$small" "$little" "$T2P" "$dir/$shape.small.tach"
	measure "tach2pprof --no-gzip" "$N" "$big" "$T2P" --no-gzip "$dir/$shape.tach"
	measure "tach2pprof --no-labels" "$N" "$big" "$T2P" --no-labels "$dir/$shape.tach"
	if command -v go >/dev/null; then
		"$T2P" "$dir/$shape.tach" -o "$dir/$shape.pb.gz"
		measure "go tool pprof -top (reading the output)" "$N" 0 \
			go tool pprof -top "$dir/$shape.pb.gz"
	fi
	rm -f "$dir/$shape.tach" "$dir/$shape.small.tach" "$dir/$shape.pb.gz"
done

if [ "$GREC" -gt 0 ] && [ -x "$G2T" ] && [ -f "$here/gperf_gen.py" ]; then
	echo
	echo "== gperftools, $GREC records (bench/gperf_gen.py), no symbolization"
	timeout "$TMO" python3 "$here/gperf_gen.py" "$dir/large.prof" "$GREC"
	timeout "$TMO" "$G2T" -q --no-symbolize "$dir/large.prof" -o "$dir/large.tach"
	n=$("$build/cmd/tach-decode" -F info "$dir/large.tach" | awk -F': ' '/^samples_selected/ { print $2 }')
	measure "tach2pprof (gzip), $n samples" "$n" "$(stat -c %s "$dir/large.tach")" \
		"$T2P" "$dir/large.tach"
fi
