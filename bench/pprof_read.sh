#!/usr/bin/env bash
# The pprof reader against google/pprof's own: one large profile.proto (tach2pprof of a
# gen_tach "widedeep" profile, about 100 MB raw with the default 400,000 samples), read to
# collapsed stacks by tach-decode and printed by `go tool pprof -raw`, raw and gzip.
# Prints wall and CPU seconds, peak RSS and the ratio. Reports only; never fails on timing.
#
#   bench/pprof_read.sh [BUILD_DIR]     BENCH_SAMPLES (default 400000), BENCH_DIR, BENCH_TIMEOUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${BUILD_ROOT:-$here/../build}}
N=${BENCH_SAMPLES:-400000}
TMO=${BENCH_TIMEOUT:-900}
command -v go >/dev/null || { echo "pprof_read.sh: needs go (golang-go)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "pprof_read.sh: needs /usr/bin/time" >&2; exit 1; }
if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
"$build/bench/gen_tach" widedeep "$N" "$dir/p.tach"
"$build/cmd/tach2pprof" -q --no-gzip "$dir/p.tach" -o "$dir/p.pb"
"$build/cmd/tach2pprof" -q "$dir/p.tach" -o "$dir/p.pb.gz"
echo "pprof reader benchmark: $N samples, $(stat -c %s "$dir/p.pb") bytes raw," \
	"$(stat -c %s "$dir/p.pb.gz") gzip ($(nproc) CPUs)"

# run LABEL CMD...: prints wall, CPU and RSS; leaves CPU seconds in $cpu
run() {
	local label=$1
	shift
	timeout "$TMO" /usr/bin/time -o "$dir/t" -f '%e %U %S %M' "$@" >"$dir/out" 2>/dev/null ||
		{ printf '%-40s FAILED\n' "$label"; cpu=0; return 0; }
	read -r wall usr sys kib <"$dir/t"
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
	printf '%-40s %7.2f s wall %7.2f s CPU %8.1f MiB RSS\n' "$label" "$wall" "$cpu" \
		"$(awk -v k="$kib" 'BEGIN { print k / 1024 }')"
}

for f in p.pb p.pb.gz; do
	# one thread for ours: the same conditions as go's single-threaded parse and print
	TACHFMT_THREADS=1 run "tach-decode (collapsed) $f" "$build/cmd/tach-decode" -q "$dir/$f"
	ours=$cpu
	run "go tool pprof -raw $f" go tool pprof -raw "$dir/$f"
	awk -v a="$cpu" -v b="$ours" 'BEGIN { if (b > 0) printf "  go tool pprof -raw / ours (CPU): %.1fx\n", a / b }'
done
