#!/usr/bin/env bash
# tach-diff against difffolded.pl on two folded inputs of BENCH_MB (default 50) MB each:
# CPU seconds (user + sys) and peak RSS, the best of BENCH_RUNS (3), and that the lines are
# the same. Two shapes: gen_folded.py's deep py-spy stacks (few long lines) and
# gen_diff_folded.py's perf-like stacks (many short lines, nearly all distinct).
# difffolded.pl is found on PATH or through DIFFFOLDED; without it, bench/difffolded_standin.pl
# (the same rules and data structures) stands in, and the report says so.
# Environment: BUILD_ROOT (./build), BENCH_DIR (default /tmp/tachfmt-diff). Reports only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp/tachfmt-diff}
runs=${BENCH_RUNS:-3}
mb=${BENCH_MB:-50}
ref=${DIFFFOLDED:-$(command -v difffolded.pl || true)}
label=difffolded.pl
if [ -z "$ref" ]; then
	ref=$here/difffolded_standin.pl
	label="difffolded stand-in"
fi
mkdir -p "$dir"
lines=$((mb * 600))
[ -s "$dir/py1.folded" ] || python3 "$here/gen_folded.py" "$lines" $((lines * 2 / 3)) 1 >"$dir/py1.folded"
[ -s "$dir/py2.folded" ] || python3 "$here/gen_folded.py" "$lines" $((lines * 2 / 3)) 2 >"$dir/py2.folded"
[ -s "$dir/pf1.folded" ] || python3 "$here/gen_diff_folded.py" "$mb" 1 >"$dir/pf1.folded"
[ -s "$dir/pf2.folded" ] || python3 "$here/gen_diff_folded.py" "$mb" 2 >"$dir/pf2.folded"

measure() { # label, output, command...
	local what=$1 out=$2 best= rss= i u s m c
	shift 2
	for i in $(seq "$runs"); do
		timeout 900 /usr/bin/time -o "$dir/time.txt" -f '%U %S %M' "$@" >"$out"
		read -r u s m <"$dir/time.txt"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$c rss=$m
		fi
	done
	printf '  %-28s %7.2f s CPU %8.1f MiB RSS\n' "$what" "$best" \
		"$(awk -v m="$rss" 'BEGIN { print m / 1024 }')"
}

for shape in py pf; do
	a=$dir/${shape}1.folded b=$dir/${shape}2.folded
	echo "== $shape: $(du -m "$a" | cut -f1) MB + $(du -m "$b" | cut -f1) MB, $(wc -l <"$a") + $(wc -l <"$b") lines"
	for o in "" -n; do
		measure "$label $o" "$dir/want" perl "$ref" $o "$a" "$b"
		measure "tach-diff $o" "$dir/got" "$build/cmd/tach-diff" $o "$a" "$b"
		LC_ALL=C sort "$dir/want" | cmp -s - "$dir/got" && echo "  same lines" || echo "  LINES DIFFER"
	done
done
rm -f "$dir/want" "$dir/got" "$dir/time.txt"
