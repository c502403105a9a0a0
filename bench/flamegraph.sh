#!/usr/bin/env bash
# tach2flamegraph speed and memory (reported, never a test).
#   BENCH_DISTINCT (default 1048576): distinct folded lines of the speed input;
#   BENCH_REPEAT (default 4000000): lines of the repeated-stacks inputs (x1 and x4);
#   BENCH_DIR (default /tmp), BUILD_ROOT (default ./build).
# 1. ~1M distinct folded lines (a 16-way tree five levels under a ten-frame trunk, 15 to
#    16 frames a line) drawn as a flame graph: through TACH (collapsed2tach |
#    tach2flamegraph) and directly (tests/convert: the collapsed reader into the flamegraph
#    writer), and by flamegraph.pl when it is on PATH (Debian does not ship it).
# 2. Memory with the input growing by repeated stacks: 1000 stacks repeated over N and 4N
#    lines, piped; peak RSS of the flame graph step should not grow.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_ROOT:-$here/../build}
distinct=${BENCH_DISTINCT:-1048576}
repeat=${BENCH_REPEAT:-4000000}
dir=${BENCH_DIR:-/tmp}
c2t=$build/cmd/collapsed2tach
t2f=$build/cmd/tach2flamegraph
conv=$build/tests/convert
in=$dir/tachfmt-flame-$distinct.folded
work=$(mktemp -d "$dir/tachfmt-flame.XXXXXX")
trap 'rm -rf "$work"' EXIT

gen_distinct() { # N: N distinct stacks, sorted by nothing in particular
	awk -v n="$1" 'BEGIN {
		trunk = "main.py:<module>:1"
		for (k = 1; k < 10; k++) trunk = trunk sprintf(";core%d.py:run_%d:%d", k, k, 10 * k)
		for (i = 0; i < n; i++) {
			s = trunk; v = (i * 2654435761) % n; x = v
			for (l = 0; l < 5; l++) {
				d = x % 16; x = int(x / 16)
				s = s sprintf(";lvl%d/m%d.py:f%d_%d:%d", l, d, l, d, d + 1)
			}
			if (v % 3 == 0) s = s ";leaf.py:hot:7"
			printf "%s %d\n", s, 1 + v % 13
		} }'
}

gen_repeat() { # LINES: 1000 stacks over LINES lines
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			k = i % 1000
			printf "main.py:<module>:1;w%d.py:work:%d;lib.py:step_%d:3 %d\n", k % 10, k % 7, k, 1 + i % 5
		} }'
}

timed() { # LABEL CMD...: wall, CPU, peak RSS of CMD
	local label=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@"
	read -r wall user sys kb <"$work/t"
	awk -v l="$label" -v w="$wall" -v c="$(awk "BEGIN{print $user + $sys}")" -v r="$kb" \
		'BEGIN{printf "%-44s %7.2f s wall %7.2f s cpu  peak RSS %7.1f MB\n", l, w, c, r / 1024}'
}

if [ ! -s "$in" ]; then
	echo "generating $in ($distinct distinct lines)"
	gen_distinct "$distinct" >"$in.tmp"
	mv "$in.tmp" "$in"
fi
echo "input: $in, $(stat -c %s "$in") bytes, $(wc -l <"$in") lines"
cat "$in" >/dev/null

timed "collapsed2tach --labels raw" "$c2t" -q --labels raw --keep-thread-frames "$in" -o "$work/in.tach"
timed "tach2flamegraph (from the TACH file)" "$t2f" --no-thread-frames "$work/in.tach" -o "$work/a.svg"
timed "collapsed -> flamegraph directly (convert)" "$conv" collapsed flamegraph "$in" "$work/b.svg" \
	r:labels=raw r:keep-thread-frames=yes w:thread-frames=no
echo "SVG: $(stat -c %s "$work/a.svg") bytes, $(grep -c '<title>' "$work/a.svg") frames"
if command -v flamegraph.pl >/dev/null; then
	timed "flamegraph.pl" sh -c 'flamegraph.pl "$0" > "$1"' "$in" "$work/p.svg"
else
	echo "flamegraph.pl: not on PATH (Debian ships no package of it): not timed"
fi

for n in "$repeat" $((4 * repeat)); do
	gen_repeat "$n" | timed "repeated stacks, $n lines: direct" \
		"$conv" collapsed flamegraph /dev/stdin "$work/r.svg" r:labels=raw \
		r:keep-thread-frames=yes w:thread-frames=no
	gen_repeat "$n" | "$c2t" -q --labels raw --keep-thread-frames | timed \
		"repeated stacks, $n lines: tach2flamegraph" "$t2f" --no-thread-frames -o "$work/s.svg"
	cmp -s "$work/r.svg" "$work/s.svg" || echo "  (the two SVGs differ!)"
done
