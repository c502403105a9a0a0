#!/usr/bin/env bash
# Throughput and peak memory of tach-decode and tach-encode on large generated profiles.
#
#   bench/run.sh                      quick run (BENCH_SAMPLES, default 1000000 samples)
#   BENCH_FULL=1 bench/run.sh         the issue's size: 10 million samples per shape
#   BENCH_SAMPLES=N bench/run.sh      any size
#
# Environment: BUILD_ROOT (default ./build), GEN_TACH (default $BUILD_ROOT/bench/gen_tach),
# BENCH_DIR (where the inputs go; default a temporary directory, removed afterwards),
# BENCH_ENCODE_SAMPLES (size of the samples-text input for tach-encode, default 500000 or
# BENCH_SAMPLES if smaller), BENCH_TIMEOUT (seconds per command, default 600), BENCH_RUNS
# (runs per measurement, the fastest reported; default 3).
#
# Shapes (bench/gen_tach.c): "rle" repeats stacks for long runs; "churn" changes the stack on
# every sample (thousands of distinct stacks, 10-60 frames). Memory of the collapsed output
# is bounded by distinct stacks: the peak RSS at N/10 and N samples shows it does not grow
# with the sample count. This script reports; it never fails on timing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BUILD_ROOT=${BUILD_ROOT:-$here/../build}
GEN_TACH=${GEN_TACH:-$BUILD_ROOT/bench/gen_tach}
DECODE=$BUILD_ROOT/cmd/tach-decode
ENCODE=$BUILD_ROOT/cmd/tach-encode
if [ -n "${BENCH_FULL:-}" ]; then
	N=${BENCH_SAMPLES:-10000000}
else
	N=${BENCH_SAMPLES:-1000000}
fi
NENC=${BENCH_ENCODE_SAMPLES:-500000}
[ "$NENC" -le "$N" ] || NENC=$N
TMO=${BENCH_TIMEOUT:-600}
RUNS=${BENCH_RUNS:-3}

for p in "$GEN_TACH" "$DECODE" "$ENCODE"; do
	[ -x "$p" ] || { echo "run.sh: $p not built (ninja -C build)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "run.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi

now_ns() { date +%s%N; }

# measure LABEL SAMPLES BYTES OUT CMD...: runs CMD (stdout to OUT) BENCH_RUNS times under
# /usr/bin/time and prints, for the fastest run, seconds, samples/s (per wall and per CPU
# second), MB/s of input and peak RSS. The best of a few runs, because a shared machine
# slows single runs at random (the programs use a second thread for TACH input).
measure() {
	local label=$1 samples=$2 bytes=$3 out=$4
	shift 4
	local t0 t1 rc=0 run best=
	for run in $(seq "$RUNS"); do
		t0=$(now_ns)
		timeout "$TMO" /usr/bin/time -o "$dir/time.txt" -f '%e %M %U %S' "$@" >"$out" || rc=$?
		t1=$(now_ns)
		if [ $rc -ne 0 ]; then
			printf '%-44s FAILED (exit %d%s)\n' "$label" "$rc" \
				"$([ $rc -eq 124 ] && echo ', timeout')"
			return 0
		fi
		if [ -z "$best" ] || [ $((t1 - t0)) -lt "$best" ]; then
			best=$((t1 - t0))
			cp "$dir/time.txt" "$dir/best.txt"
		fi
	done
	local rss cpu
	rss=$(awk 'END { print $2 }' "$dir/best.txt")
	cpu=$(awk 'END { print $3 + $4 }' "$dir/best.txt")
	# Rates per wall second and per CPU second (user + system): on a busy machine the
	# second is the steadier figure.
	awk -v l="$label" -v n="$samples" -v b="$bytes" -v ns="$best" -v rss="$rss" \
		-v cpu="$cpu" 'BEGIN {
		s = ns / 1e9; if (s <= 0) s = 1e-9
		c = cpu; if (c <= 0) c = 0.005
		printf "%-40s %7.3f s %8.2f M/s (%7.2f M/s CPU) %7.1f MB/s %7.1f MiB RSS",
			l, s, n / s / 1e6, n / c / 1e6, b / s / 1e6, rss / 1024
		# A TACH input is mapped whole and its pages count in the RSS; the rest is
		# the memory of the decoder and the writer.
		if (l ~ /^decode/) {
			own = rss / 1024 - b / 1048576; if (own < 0) own = 0
			printf " (%.1f w/o input)", own
		}
		printf "\n" }'
}

size() { stat -c %s "$1"; }

echo "tachfmt benchmark: $N samples per shape ($(nproc) CPUs; results in $dir)"
echo "tach-decode: $("$DECODE" --version | head -n 1)"
for shape in rle churn; do
	echo
	echo "== $shape"
	small=$((N / 10))
	[ "$small" -ge 1 ] || small=1
	timeout "$TMO" "$GEN_TACH" "$shape" "$N" "$dir/$shape.tach"
	timeout "$TMO" "$GEN_TACH" "$shape" "$N" "$dir/$shape.raw.tach" none
	timeout "$TMO" "$GEN_TACH" "$shape" "$small" "$dir/$shape.small.tach"
	printf '%-44s %12d bytes (%.2f bytes/sample)\n' \
		"$shape.tach (zstd)" "$(size "$dir/$shape.tach")" \
		"$(awk -v b="$(size "$dir/$shape.tach")" -v n="$N" 'BEGIN { print b / n }')" \
		"$shape.raw.tach (none)" "$(size "$dir/$shape.raw.tach")" \
		"$(awk -v b="$(size "$dir/$shape.raw.tach")" -v n="$N" 'BEGIN { print b / n }')"
	"$DECODE" -F info "$dir/$shape.tach" |
		awk -F': ' '/^(frame_count|thread_count|repeat_records|full_records|suffix_records|pop_push_records):/ { printf "%s=%s ", $1, $2 } END { print "" }'
	"$DECODE" "$dir/$shape.tach" >"$dir/$shape.collapsed"
	echo "distinct (thread, stack) lines: $(wc -l <"$dir/$shape.collapsed")"

	measure "decode -> collapsed (zstd)" "$N" "$(size "$dir/$shape.tach")" /dev/null \
		"$DECODE" "$dir/$shape.tach"
	measure "decode -> collapsed (zstd, one thread)" "$N" "$(size "$dir/$shape.tach")" \
		/dev/null env TACHFMT_THREADS=1 "$DECODE" "$dir/$shape.tach"
	measure "decode -> collapsed (none)" "$N" "$(size "$dir/$shape.raw.tach")" /dev/null \
		"$DECODE" "$dir/$shape.raw.tach"
	measure "decode -> collapsed (zstd, N/10 samples)" "$small" "$(size "$dir/$shape.small.tach")" \
		/dev/null "$DECODE" "$dir/$shape.small.tach"
	measure "decode -> info (zstd; decode only)" "$N" "$(size "$dir/$shape.tach")" /dev/null \
		"$DECODE" -F info "$dir/$shape.tach"

	# tach-encode alone, on a samples text file made beforehand.
	timeout "$TMO" "$GEN_TACH" "$shape" "$NENC" "$dir/$shape.enc.tach"
	"$DECODE" -F samples "$dir/$shape.enc.tach" >"$dir/$shape.samples"
	txt_bytes=$(size "$dir/$shape.samples")
	measure "encode samples -> TACH (none, $NENC)" "$NENC" "$txt_bytes" "$dir/out.tach" \
		"$ENCODE" --compression none "$dir/$shape.samples"
	measure "encode samples -> TACH (zstd, $NENC)" "$NENC" "$txt_bytes" "$dir/out.tach" \
		"$ENCODE" "$dir/$shape.samples"
	rm -f "$dir/$shape.samples" "$dir/$shape.enc.tach" "$dir/out.tach"
done
