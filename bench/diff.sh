#!/usr/bin/env bash
# tach-diff against difffolded.pl on two folded inputs of BENCH_MB (default 50) MB each:
# CPU seconds (user + sys), the median and the least of BENCH_RUNS (3), and peak RSS, and
# that the lines are the same. Three shapes: py, gen_folded.py's deep py-spy stacks (few
# long lines); pf, gen_diff_folded.py's perf-like stacks (many short lines, nearly all
# distinct, in no order); fg, a real perf capture's folded lines as stackcollapse-perf.pl
# sorts them (FlameGraph's example, fixtures/flamegraph/inputs perf.folded and perf2.folded)
# repeated BENCH_FG_REPEAT (200) times under distinct roots "runK;", where the fixtures are
# (FG_INPUTS, default ../shared/fixtures/flamegraph/inputs beside the checkout).
# difffolded.pl is found on PATH or through DIFFFOLDED; without it, bench/difffolded_standin.pl
# (the same rules and data structures) stands in, and the report says so.
# Environment: BUILD_ROOT (./build), BASE_ROOT (another build, the code before a change: its
# tach-diff measured beside this one's, alternating), BENCH_DIR (default /tmp/tachfmt-diff),
# BENCH_SHAPES (default "py pf fg"). Reports only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
dir=${BENCH_DIR:-/tmp/tachfmt-diff}
runs=${BENCH_RUNS:-3}
mb=${BENCH_MB:-50}
base=${BASE_ROOT:-}
shapes=${BENCH_SHAPES:-py pf fg}
fg=${FG_INPUTS:-$here/../../shared/fixtures/flamegraph/inputs}
repeat=${BENCH_FG_REPEAT:-200}
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
repeated() { # a folded file's lines, BENCH_FG_REPEAT times, each time under a root of its own
	awk -v n="$repeat" '{ l[NR] = $0 } END { for (r = 1; r <= n; r++) for (i = 1; i <= NR; i++)
		print "run" r ";" l[i] }' "$1"
}
if [ -s "$fg/perf.folded" ] && [ -s "$fg/perf2.folded" ]; then
	[ -s "$dir/fg1.folded" ] || repeated "$fg/perf.folded" >"$dir/fg1.folded"
	[ -s "$dir/fg2.folded" ] || repeated "$fg/perf2.folded" >"$dir/fg2.folded"
else
	shapes=${shapes//fg/}
	echo "fg: no FlameGraph fixtures at $fg (FG_INPUTS)"
fi

once() { # label output command...: one run's CPU and RSS appended to $dir/runs.LABEL
	local what=$1 out=$2 u s m
	shift 2
	timeout 900 /usr/bin/time -o "$dir/time.txt" -f '%U %S %M' "$@" >"$out"
	read -r u s m <"$dir/time.txt"
	awk -v u="$u" -v s="$s" -v m="$m" 'BEGIN { printf "%.2f %d\n", u + s, m }' >>"$dir/runs.$what"
}
report() { # label
	sort -n "$dir/runs.$1" | awk -v l="$1" '{ c[NR] = $1; if ($2 > m) m = $2 }
		END { printf "  %-28s %5.2f s CPU (median; least %.2f) %8.1f MiB RSS\n", l,
			c[int((NR + 1) / 2)], c[1], m / 1024 }'
	sort -n "$dir/runs.$1" | awk '{ c[NR] = $1 } END { print c[int((NR + 1) / 2)] }' >"$dir/cpu.$1"
	rm -f "$dir/runs.$1"
}
ratio() { # what, of whom
	awk -v a="$(cat "$dir/cpu.$2")" -v b="$(cat "$dir/cpu.$1")" -v w="$1" \
		'BEGIN { if (b > 0) printf "  %s: %.1fx less CPU than the script\n", w, a / b }'
}
same() { LC_ALL=C sort "$dir/want" | cmp -s - "$1" && echo "  same lines" || echo "  LINES DIFFER"; }

for shape in $shapes; do
	a=$dir/${shape}1.folded b=$dir/${shape}2.folded
	echo "== $shape: $(du -m "$a" | cut -f1) MB + $(du -m "$b" | cut -f1) MB, $(wc -l <"$a") + $(wc -l <"$b") lines"
	for o in "" -n; do
		for _ in $(seq "$runs"); do
			once "$label $o" "$dir/want" perl "$ref" $o "$a" "$b"
			[ -z "$base" ] || once "tach-diff before $o" "$dir/got.base" "$base/cmd/tach-diff" $o "$a" "$b"
			once "tach-diff $o" "$dir/got" "$build/cmd/tach-diff" $o "$a" "$b"
		done
		report "$label $o"
		if [ -n "$base" ]; then
			report "tach-diff before $o"
			same "$dir/got.base"
			ratio "tach-diff before $o" "$label $o"
		fi
		report "tach-diff $o"
		same "$dir/got"
		ratio "tach-diff $o" "$label $o"
	done
done
rm -f "$dir/want" "$dir/got" "$dir/got.base" "$dir/time.txt" "$dir"/cpu.*
