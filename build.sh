#!/usr/bin/env bash
# tachfmt quick start:
#   ./build.sh demo   install what is missing, build, convert the bundled example profiles
#   ./build.sh test   install what is missing, build, run every test, then again under ASan+UBSan
#   ./build.sh build  install what is missing and build only
set -euo pipefail
cd "$(dirname "$0")"

# Debian bookworm packages. Build: compiler, meson, the libraries. Test: bats, clang (fuzz
# targets), and the independent tools the tests compare against.
BUILD_PKGS=(gcc meson ninja-build pkg-config libzstd-dev libxxhash-dev zlib1g-dev libdw-dev
	libelf-dev libiberty-dev scdoc)
TEST_PKGS=(bats clang jq python3 zstd file g++ binutils libxml2-utils linux-perf parallel)
# The Python package's test (tests/python/run.sh): a wheel built offline, a venv, pytest.
TEST_PKGS+=(python3-dev python3-mesonpy python3-venv python3-pip python3-pytest)
# The module's type stubs are checked with mypy --strict (tests/python).
TEST_PKGS+=(mypy)
# tach2callgrind.bats and the V8/Chrome writer checks read its output with callgrind_annotate.
TEST_PKGS+=(valgrind)
# collapsed-producers.bats: austin 1.x records a capture in the run (when a CPython <= 3.8,
# which it can read, is on the machine; bookworm's 3.11 is too new for it).
TEST_PKGS+=(austin)
# gperf-native.bats profiles a C program with gperftools' libprofiler in the run.
TEST_PKGS+=(libgoogle-perftools-dev)
# completions.bats checks the generated zsh completions with zsh -n (fish's, with fish -n,
# only where fish is installed).
TEST_PKGS+=(zsh)
# Extra test tools, one line per check that needs them (read by need_extra below).
EXTRA_TEST_PKGS=()
# tach2pprof.bats: go tool pprof reads every output; protoc --decode_raw checks the wire format.
EXTRA_TEST_PKGS+=(golang-go protobuf-compiler)
# v8.bats records V8 CPU profiles with node --cpu-prof (any Node does; Debian's nodejs).
EXTRA_TEST_PKGS+=(nodejs)
# jfr.bats records Java Flight Recorder files with the JDK and compares with jfr print.
EXTRA_TEST_PKGS+=(openjdk-17-jdk-headless)
# stackprof.bats records Ruby stackprof dumps in the run (ruby-stackprof 0.2.21; with ruby,
# about 30 MB installed).
EXTRA_TEST_PKGS+=(ruby ruby-stackprof)
# tach2gecko's check loads its output with the Firefox Profiler's own importer: Node >= 24
# and @firefox-devtools/profiler-cli from npm, installed into build/npm by
# tests/cli/npm-tools.sh. Debian's nodejs and npm are only needed to run npm (a Node that
# already brings npm, e.g. nodesource's, conflicts with Debian's npm package).
NPM_APT_PKGS=(nodejs npm)

log() { printf '== %s\n' "$*"; }

ensure_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing: ${missing[*]}"
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -q
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# The reference fixtures made by the real tools ship in the tree (tests/fixtures);
# TACHFMT_FIXTURES points the build and the tests at another copy.
fixtures_dir() {
	if [ -n "${TACHFMT_FIXTURES:-}" ]; then
		(cd "$TACHFMT_FIXTURES" && pwd)
	else
		echo "$PWD/tests/fixtures"
	fi
}

setup() { # dir, extra meson args...
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@"
	fi
	ninja -C "$dir"
}

build_main() {
	ensure_pkgs "${BUILD_PKGS[@]}"
	setup build -Dfixtures="$(fixtures_dir)"
}

demo() {
	build_main
	local bin=build/cmd out
	out=$(mktemp -d)
	# Expanded now: $out is local and gone by the time the EXIT trap runs.
	trap "rm -rf '$out'" EXIT
	export PATH="$PWD/$bin:$PATH"
	for f in examples/*.samples; do
		[ -e "$f" ] || continue
		local n
		n=$(basename "$f" .samples)
		log "$f: samples text -> TACH -> collapsed"
		tach-encode "$f" -o "$out/$n.tach"
		tach-encode --compression none "$f" -o "$out/$n.raw.tach"
		tach-decode "$out/$n.tach" -o "$out/$n.collapsed"
		printf '  %-40s %8s bytes\n' "$f (samples text)" "$(stat -c %s "$f")" \
			"$n.tach (TACH, zstd)" "$(stat -c %s "$out/$n.tach")" \
			"$n.raw.tach (TACH, none)" "$(stat -c %s "$out/$n.raw.tach")" \
			"$n.collapsed (folded stacks)" "$(stat -c %s "$out/$n.collapsed")"
		tach-decode --format info "$out/$n.tach" |
			awk -F': ' '/^(sample_count|thread_count|frame_count|repeat_records|full_records|suffix_records|pop_push_records):/ {
				printf "%s%s=%s", sep, $1, $2; sep = " " } END { print "" }' | sed 's/^/  /'
		# The same samples back through the text form give the same bytes.
		if tach-decode --format samples "$out/$n.tach" |
			tach-encode --compression none -o "$out/$n.again.tach" &&
			cmp -s "$out/$n.raw.tach" "$out/$n.again.tach"; then
			echo "  round trip TACH -> samples text -> TACH: byte-identical"
		else
			echo "  round trip TACH -> samples text -> TACH: DIFFERS"
		fi
		echo "  samples per thread (tid: samples, of which holding the GIL):"
		local tid
		for tid in $(tach-decode --format samples "$out/$n.tach" | awk '!/^@/ { print $1 }' | sort -u); do
			printf '    %-18s %5s %5s\n' "$tid" \
				"$(tach-decode -F info --thread "$tid" "$out/$n.tach" | sed -n 's/^samples_selected: //p')" \
				"$(tach-decode -F info --thread "$tid" --status gil "$out/$n.tach" | sed -n 's/^samples_selected: //p')"
		done
		echo "  top stacks, threads merged (count, innermost three frames):"
		tach-decode --no-thread-frames "$out/$n.tach" | awk '{ c = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); s = f[k]
			if (k > 1) s = f[k - 1] ";" s
			if (k > 2) s = f[k - 2] ";" s
			if (k > 3) s = "...;" s
			printf "    %5d  %s\n", c, s }' | head -n 6
		tach2flamegraph "$out/$n.tach" -o "$out/$n.svg"
		printf '  flame graph: tach2flamegraph %s.tach > %s.svg: %s bytes, %s frames\n' "$n" "$n" \
			"$(stat -c %s "$out/$n.svg")" "$(grep -c '<title>' "$out/$n.svg")"
	done
	for f in examples/*.demo.sh; do
		[ -e "$f" ] || continue
		log "$f"
		OUT=$out FIXTURES=$(fixtures_dir) bash "$f"
	done
}

run_tests() { # build dir [test names: all when none]
	local dir=$1 rc=0
	shift
	meson test -C "$dir" --print-errorlogs --num-processes 2 "$@" >"$dir/test-output.txt" 2>&1 || rc=$?
	# The summary block (Ok/Fail counts) makes a run that executed nothing visible.
	grep -E '^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout): ' "$dir/test-output.txt" |
		sed "s|^|[$dir] |"
	if [ $rc -ne 0 ]; then
		grep -E ' (FAIL|TIMEOUT|ERROR) ' "$dir/test-output.txt" | head -n 40 || true
		echo "full log: $dir/test-output.txt and $dir/meson-logs/testlog.txt"
		failed_dirs+=("$dir")
	fi
	return $rc
}

# Told again at the very end, where a log cut to its last lines still shows it: which
# tests failed in which pass, and what they printed (bats' "not ok" lines and the lines
# after them).
recap_failures() {
	local dir
	for dir in ${failed_dirs[@]+"${failed_dirs[@]}"}; do
		log "failed in $dir:"
		grep -E ' (FAIL|TIMEOUT|ERROR) ' "$dir/test-output.txt" | head -n 20 || true
		grep -E -A 12 '^not ok ' "$dir/test-output.txt" | head -n 150 || true
		# a test that is not bats: the end of what meson printed of its output
		sed -n '/^Summary of Failures:/q; p' "$dir/test-output.txt" | tail -n 40
	done
}
failed_dirs=()

test_all() {
	ensure_pkgs "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}" ${EXTRA_TEST_PKGS[@]+"${EXTRA_TEST_PKGS[@]}"}
	command -v npm >/dev/null || ensure_pkgs "${NPM_APT_PKGS[@]}"
	# Without them the rest still runs; tach2gecko.bats and tach2speedscope.bats then fail
	# and say why.
	TACHFMT_NPM_DIR=$(bash tests/cli/npm-tools.sh build/npm) ||
		log "npm tools missing: the Gecko and speedscope import checks will fail"
	export TACHFMT_NPM_DIR
	local fx
	fx=$(fixtures_dir)
	setup build -Dfixtures="$fx"
	local rc=0
	# A check by an outside tool (go tool pprof, the Node importers, the Python checkers)
	# that passed in the plain pass is not rerun on the same bytes in the sanitizer and
	# window passes: their programs still run and their outputs are compared by hash with
	# those the tool accepted (tests/cli/checked.bash). Emptied here: one run, one cache.
	export TACHFMT_CHECK_CACHE=$PWD/build/check-cache
	rm -rf "$TACHFMT_CHECK_CACHE"
	log "test suite"
	run_tests build || rc=1
	log "test suite under AddressSanitizer and UndefinedBehaviorSanitizer"
	setup build-asan -Dfixtures="$fx" -Dbuildtype=debug -Db_sanitize=address,undefined \
		-Db_lundef=false
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_tests build-asan || rc=1
	# The TACH reader reads a raw sample region through a window that moves every 4 MiB;
	# a build whose window moves every 64 bytes puts its edges inside every record of
	# every fixture and corpus file. (Every build here deflates with zlib: ISA-L, whose
	# bytes vary from run to run, is a build option left off; README.)
	log "TACH reading with a 64-byte window"
	setup build-window -Dfixtures="$fx" -Dc_args=-DTACH_WINDOW=64
	run_tests build-window tach_read tach-decode tach-fixtures tach-merge fuzz-replay-tach \
		fuzz-replay-auto gzip tach2pprof tach2gecko || rc=1
	recap_failures
	if [ $rc -eq 0 ]; then log "all tests passed"; else log "TESTS FAILED"; fi
	return $rc
}

case "${1:-}" in
demo) demo ;;
test) test_all ;;
build) build_main ;;
*)
	sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
