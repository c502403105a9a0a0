#!/usr/bin/env bash
# CPU time and peak RSS of the aggregating outputs on stack-heavy inputs: deep distinct
# stacks (gen_tach "deep"; "real", the real gperftools profile gperf_deep_recursive.tach as
# it is, whose 21k stacks of up to 254 frames share little; "gdeep", that profile repeated
# to a million samples by bench/gperf_deep.sh), high cardinality (gen_tach "wide" and
# "widedeep") and churn.
#
#   bench/stacks.sh [SHAPE...]        default: deep real gdeep wide widedeep churn rle
#
# For each shape, bench/one_probe (decoding plus one hash probe of the whole (thread, stack)
# per changed stack, no output: the yardstick the aggregating writers are measured against), and
# each of tach-decode (collapsed, --format samples, --format info),
# tach2pprof and tach2gecko (--no-gzip, and as users run them, gzip), with two threads and
# with TACHFMT_THREADS=1:
# the best of BENCH_RUNS (3) runs by CPU seconds (user + system), and that run's wall time,
# samples per wall second, peak RSS and RSS per distinct line, and its CPU time as a multiple
# of one_probe's and of `--format info`'s with as many threads. CPU seconds are the figure to
# compare when the machine is shared; the rate needs it idle, and the two multiples hold
# better than either when its speed drifts. Reports; never fails on timing.
# Environment: BUILD_ROOT (./build), BENCH_DIR (inputs, kept for reuse; default
# /tmp/tachfmt-stacks), BENCH_SHARED (where gperf_deep_recursive.tach is; default
# ../shared/bench beside the source tree), BENCH_SAMPLES (churn/rle size, 10000000).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp/tachfmt-stacks}
runs=${BENCH_RUNS:-3}
big=${BENCH_SAMPLES:-10000000}
mkdir -p "$dir"
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(deep real gdeep wide widedeep churn rle)
shared=${BENCH_SHARED:-$here/../../shared/bench}

input() { # shape -> path, made once
	if [ "$1" = real ]; then
		echo "$shared/gperf_deep_recursive.tach"
		return
	fi
	local f=$dir/$1.tach
	if [ ! -s "$f" ]; then
		case $1 in
		deep) "$build/bench/gen_tach" deep 1000000 "$f" ;;
		wide) "$build/bench/gen_tach" wide 3000000 "$f" ;;
		widedeep) "$build/bench/gen_tach" widedeep 2000000 "$f" ;;
		churn | rle) "$build/bench/gen_tach" "$1" "$big" "$f" ;;
		gdeep) BUILD_ROOT=$build "$here/gperf_deep.sh" "$f" >/dev/null ;;
		*) echo "stacks.sh: unknown shape $1" >&2; exit 2 ;;
		esac
	fi
	echo "$f"
}

times_of() { # CPU seconds, yardstick's, its name: "N.NNx name", blank without a yardstick
	awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (b > 0) printf "%6.2fx %s", a / b, n }'
}

measure() { # label, command...: the best run by CPU seconds, its wall time and rate
	local label=$1 best= rss= wall= i u s m el
	shift
	for i in $(seq "$runs"); do
		timeout 900 /usr/bin/time -o "$dir/time.txt" -f '%U %S %M %e' "$@" >/dev/null
		read -r u s m el <"$dir/time.txt"
		local c
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$c rss=$m wall=$el
		fi
	done
	# RSS per distinct line: what memory per distinct stack comes to (the mapped input
	# file included, as it is in the RSS)
	printf '  %-24s %7.2f s CPU %7.2f s wall %7.1f M samples/s %8.1f MiB RSS %7.0f B/line %s %s\n' \
		"$label" "$best" "$wall" \
		"$(awk -v n="$n" -v w="$wall" 'BEGIN { print (w > 0 ? n / w / 1e6 : 0) }')" \
		"$(awk -v m="$rss" 'BEGIN { print m / 1024 }')" \
		"$(awk -v m="$rss" -v d="$d" 'BEGIN { print (d > 0 ? m * 1024 / d : 0) }')" \
		"$(times_of "$best" "$probe" probe)" "$(times_of "$best" "$info" info)"
	last=$best
}

for shape in "${shapes[@]}"; do
	f=$(input "$shape")
	n=$("$build/cmd/tach-decode" -F info "$f" | awk -F': ' '$1 == "sample_count" { print $2 }')
	d=$("$build/cmd/tach-decode" "$f" | wc -l)
	echo "== $shape: $n samples, $d distinct (thread, stack) lines, $(stat -c %s "$f") bytes"
	# the yardstick: decoding and one whole-stack probe per changed stack, one thread, no output
	probe='' info=''
	measure "one probe (1 thr)" "$build/bench/one_probe" "$f"
	probe=$last
	for th in 2 1; do
		e=(env TACHFMT_THREADS=$th)
		[ "$th" = 2 ] && e=(env)
		info=''
		measure "info ($th thr)" "${e[@]}" "$build/cmd/tach-decode" -F info "$f"
		info=$last
		measure "collapsed ($th thr)" "${e[@]}" "$build/cmd/tach-decode" "$f"
		measure "samples ($th thr)" "${e[@]}" "$build/cmd/tach-decode" -F samples "$f"
		measure "tach2pprof ($th thr)" "${e[@]}" "$build/cmd/tach2pprof" --no-gzip "$f"
		measure "tach2gecko ($th thr)" "${e[@]}" "$build/cmd/tach2gecko" --no-gzip "$f"
		measure "tach2pprof gzip ($th thr)" "${e[@]}" "$build/cmd/tach2pprof" "$f"
		measure "tach2gecko gzip ($th thr)" "${e[@]}" "$build/cmd/tach2gecko" "$f"
	done
done
