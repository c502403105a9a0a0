#!/usr/bin/env bash
# The other conversions, on the bundled examples and a real gperftools profile from the
# reference fixtures (tests/fixtures). Run by ./build.sh demo with OUT and FIXTURES set.
set -euo pipefail
cd "$(dirname "$0")"
size() { stat -c %s "$1"; }

echo "  folded stacks (py-spy style) -> TACH -> collapsed, CPython labels:"
collapsed2tach worker.folded -o "$OUT/worker.tach"
printf '    %-34s %7s bytes\n' worker.folded "$(size worker.folded)" worker.tach "$(size "$OUT/worker.tach")"
tach-decode "$OUT/worker.tach" | head -n 3 | sed 's/^/    /'

echo "  TACH -> pprof (go tool pprof, pprof.dev, continuous profilers):"
tach2pprof "$OUT/webapp.tach" -o "$OUT/webapp.pb.gz"
printf '    %-34s %7s bytes\n' webapp.pb.gz "$(size "$OUT/webapp.pb.gz")"

if command -v tach2gecko >/dev/null; then
	echo "  TACH -> Gecko JSON (open in https://profiler.firefox.com):"
	tach2gecko "$OUT/webapp.tach" -o "$OUT/webapp.json.gz"
	printf '    %-34s %7s bytes\n' webapp.json.gz "$(size "$OUT/webapp.json.gz")"
fi

echo "  TACH -> Apple Sampler trace -> TACH, stacks compared:"
tach2sampler "$OUT/webapp.tach" -o "$OUT/webapp.sampler"
sampler2tach "$OUT/webapp.sampler" -o "$OUT/webapp.back.tach"
printf '    %-34s %7s bytes\n' webapp.sampler "$(size "$OUT/webapp.sampler")"
if cmp -s <(tach-decode "$OUT/webapp.tach" | sort) <(tach-decode "$OUT/webapp.back.tach" | sort); then
	echo "    same stacks and counts after the round trip"
else
	echo "    stacks DIFFER after the round trip"
fi

d=${FIXTURES:-../tests/fixtures}
echo "  gperftools CPU profile -> TACH, symbolized with elfutils ($d/gperf/hotloop):"
gperf2tach --binary-path "$d/gperf/hotloop" "$d/gperf/hotloop/hotloop.prof" -o "$OUT/hotloop.tach"
tach-decode --no-thread-frames "$OUT/hotloop.tach" | head -n 3 | sed 's/^/    /'
