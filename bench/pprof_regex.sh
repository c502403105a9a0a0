#!/usr/bin/env bash
# drop_frames and keep_frames at their most costly (tests/cli/pprof_gen.py worstrx: two
# programs near the 10,000-instruction cap that need a new matcher state at each character
# of 100 distinct 9,000-character names), read by tach-decode. Prints CPU seconds and
# whether the patterns were applied or given up at their budget. Reports only; never fails
# on timing.
#
#   bench/pprof_regex.sh [BUILD_DIR] [NAMES] [SHAPE]     BENCH_TIMEOUT (default 900 s)
# SHAPE: states (default: a new matcher state at each character) or live (every thread
# live at each character: an NFA's worst case).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${BUILD_ROOT:-$here/../build}}
names=${2:-100}
shape=${3:-states}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 -c "import sys; sys.path.insert(0, '$here/../tests/cli'); import pprof_gen; \
sys.stdout.buffer.write(pprof_gen.case_worstrx($names, shape='$shape'))" >"$dir/w.pb"
gzip -9 -c "$dir/w.pb" >"$dir/w.pb.gz"
echo "drop_frames benchmark: $shape, $names names, $(stat -c %s "$dir/w.pb.gz") bytes gzip"
/usr/bin/time -f "%U %S" -o "$dir/t" timeout "${BENCH_TIMEOUT:-900}" \
	"$build/cmd/tach-decode" --no-thread-frames "$dir/w.pb.gz" >"$dir/out" 2>"$dir/err" || true
read -r u s <"$dir/t"
echo "tach-decode: $(echo "$u + $s" | bc) s CPU, $(wc -l <"$dir/out") stacks," \
	"$(grep -c 'no frames dropped' "$dir/err" || true) budget warning"
