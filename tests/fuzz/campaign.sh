#!/usr/bin/env bash
# A libFuzzer campaign over every target, one after another:
#   CC=clang meson setup build-fuzz -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false
#   ninja -C build-fuzz
#   tests/fuzz/campaign.sh build-fuzz [RUNS] [SECONDS] [TARGET...]
# Each target starts from its committed corpus (tests/fuzz/corpus/NAME) in a scratch copy,
# runs RUNS executions (default 1000000) or SECONDS (default 900), whichever ends first, then
# merges back only the inputs that add coverage. FUZZ_TIMEOUT (seconds, default 20) is a
# unit's limit: raise it on a loaded machine, where a unit that reads /proc/kallsyms (0.4 s
# of CPU) can take that long. Crash inputs land in WORK/crashes: fix the
# bug, then copy the input into the corpus so the replay keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: campaign.sh BUILD_DIR [RUNS] [SECONDS] [TARGET...]}
runs=${2:-1000000}
secs=${3:-900}
shift $(($# < 3 ? $# : 3))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tach samples collapsed gperf sampler speedscope v8 perf perfdata perfdata_sym convert)
# The conversion target runs every reader into every writer per input: smaller inputs.
max_len() { [ "$1" = convert ] && echo 4096 || echo 16384; }
work=${FUZZ_WORK:-$build/fuzz-work}
# Undefined behaviour is a finding like a crash, not a line in the log.
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
# A leak inside elfutils on damaged DWARF is not ours (tests/lsan.supp says which).
export LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp
mkdir -p "$work/crashes"
for t in "${targets[@]}"; do
	bin=$build/tests/fuzz_$t
	corpus=tests/fuzz/corpus/$t
	scratch=$work/$t
	mkdir -p "$scratch"
	cp -n "$corpus"/* "$scratch"/ 2>/dev/null || true
	echo "== $t: $runs runs or $secs s"
	# -max_len keeps inputs small enough to replay quickly; text formats get longer lines.
	"$bin" -runs="$runs" -max_total_time="$secs" -max_len=$(max_len "$t") -timeout="${FUZZ_TIMEOUT:-20}" -rss_limit_mb=4096 \
		-artifact_prefix="$work/crashes/$t-" -print_final_stats=1 "$scratch" 2>"$work/$t.log" || {
		echo "$t: stopped with a finding, see $work/$t.log and $work/crashes/"
		tail -n 40 "$work/$t.log"
	}
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$work/$t.log" | tail -n 2 || true
	"$bin" -merge=1 "$corpus" "$scratch" 2>>"$work/$t.merge.log" >/dev/null
	echo "$t: corpus now $(ls "$corpus" | wc -l) files"
done
