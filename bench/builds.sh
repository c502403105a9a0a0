#!/usr/bin/env bash
# CPU seconds of the aggregating outputs on one input for several builds, run interleaved:
# on a shared machine whose speed drifts from minute to minute, each round runs every build
# once, so the drift falls on all of them alike and their ratio holds better than two
# separate bench/stacks.sh runs.
#
#   bench/builds.sh FILE BUILD_DIR...
#
# For tach-decode (collapsed), tach2pprof --no-gzip and tach2gecko --no-gzip: the best of
# BENCH_RUNS (5) runs by CPU seconds (user + system), each build's, then each build's ratio
# to the first. TACHFMT_THREADS is passed through (unset: two threads where there are two
# CPUs). Reports; never fails on timing.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
f=$1
shift
builds=("$@")
runs=${BENCH_RUNS:-5}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for p in "tach-decode" "tach2pprof --no-gzip" "tach2gecko --no-gzip"; do
	best=()
	for i in "${!builds[@]}"; do best[i]=; done
	for _ in $(seq "$runs"); do
		for i in "${!builds[@]}"; do
			# shellcheck disable=SC2086 # the program's options are meant to split
			/usr/bin/time -o "$tmp" -f '%U %S' "${builds[i]}"/cmd/$p "$f" >/dev/null
			c=$(awk '{ printf "%.2f", $1 + $2 }' "$tmp")
			if [ -z "${best[i]}" ] || awk -v a="$c" -v b="${best[i]}" 'BEGIN { exit !(a < b) }'; then
				best[i]=$c
			fi
		done
	done
	line=$(printf '%-22s' "$p")
	for i in "${!builds[@]}"; do
		line+=$(printf '  %6.2f s' "${best[i]}")
		[ "$i" = 0 ] || line+=$(awk -v a="${best[0]}" -v b="${best[i]}" \
			'BEGIN { printf " (%.2fx)", (b > 0 ? a / b : 0) }')
	done
	echo "$line"
done
